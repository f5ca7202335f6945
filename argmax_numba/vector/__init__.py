"""The vector building blocks of the kernels: numba intrinsics that emit LLVM IR.

A task in ``argmax_numba.kernels`` loops over its part of the input; the work on each
vector of elements is one of these intrinsics, so that it compiles to the same
instructions on every dtype and CPU.

``keys``
    The order-preserving integer key of a float's bits (NaN largest, ``-0.0 == +0.0``).
``ir``
    Shared LLVM IR helpers and the vector width.
``lanes``
    The search of a stretch of a row, and the fold of rows into running maxima.
``row_groups``, ``short_rows``
    Rows searched many at a time: up to two vectors each, or a few elements each.
``col_blocks``, ``side_blocks``
    Blocks of columns folded over their rows; narrow blocks read side by side or
    gathered.
``candidates``
    Taking a candidate, and merging the candidates of tasks that searched pieces.
"""
