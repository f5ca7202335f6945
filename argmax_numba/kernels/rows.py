"""Task bodies of the row kernels: the last axis of a C-contiguous ``x[outer, n]``.

``rows_task`` searches whole rows one at a time, each read as vectors a run at a time
(``vector.lanes``); ``chunk_rows_task`` and ``group_rows_task`` search a group of rows at
a time (``vector.row_groups``); ``short_rows_task`` rows of a few elements, a vector of
rows at a time (``vector.short_rows``), one task per length (``short_any_task``: every
length in one task, for compiled callers); ``row_piece_task`` a piece of a long row,
whose candidates the driver merges.
"""

from __future__ import annotations

from ..runtime.arrays import c_view
from ..vector.candidates import take_first, take_last
from ..vector.ir import VECTOR_BYTES
from ..vector.keys import key, top_key
from ..vector.lanes import lane_argmax, lane_count, lane_span
from ..vector.row_groups import chunk_group_argmax, group_argmax, group_size
from ..vector.short_rows import BYTE_ROW, SHORT_ROW, short_group_argmax, short_group_rows
from .compiling import TaskSpec

__all__ = ["row_tasks"]

# Each task is a closure over the key kind ``kind`` and ``last`` (constants of its code),
# compiled for one pair of them (``registry.tasks_of``, ``compiling.TaskSet``). The
# helpers a task calls (``search``, ``by_element``, ``short``) and its constants
# (``ROW_LENGTH``) reach it as globals bound when the task is compiled; the names below
# only stand for them. (No
# local variable of the factories may share a global's name: the tasks would hold it as a
# closure cell, which numba's cache key pickles, and they would never be found in the
# cache.)
search = by_element = short = ROW_LENGTH = None


def row_tasks(kind: int, last: int) -> dict[str, TaskSpec]:
    """The row tasks of key kind ``kind`` for ``last``, by name (not yet compiled)."""

    def row_search(x, o, start, stop):
        # The maximum key of ``x[o, start:stop]`` and its position, searched with
        # vectors a run at a time. Inlined into the tasks: for rows of a few hundred
        # bytes, a call per row is a large part of the row's time (docs/performance.md,
        # "The row search inlined into the tasks"). The search for the first occurrence
        # stops after a run that finds the greatest key there is (the type's largest
        # integer, or a NaN): nothing after it can win (docs/performance.md, "Rows
        # searched up to the greatest key"). A loop whose test comes after each run (a
        # row has at least one): other shapes of it made rows searched on two threads
        # slower (docs/performance.md, "Rows of one run searched without the loop").
        step = lane_span(x)
        flat = o * x.shape[1]
        best = key(x[o, start], kind)
        at = start
        s = start
        while True:
            k, p = lane_argmax(x, flat + s, min(step, stop - s), kind, last, best)
            if p >= 0:
                best = k
                at = s + p
            s += step
            if s >= stop or (not last and best == top_key(x, kind)):
                break
        return best, at

    def element_rows(x, out, lo, hi, n):
        # Rows lo..hi of ``n`` elements, one element at a time (the last rows of
        # ``group_rows_task``, where a group's vector loads would leave the array, and inputs
        # of fewer rows than a group). Views that start at row lo, so that indices are
        # known not to be negative (numba would otherwise wrap them, per element).
        flat = c_view(x, lo * n, (hi - lo) * n)
        dst = out[lo:hi]
        if last:
            for o in range(hi - lo):
                best, at = key(flat[o * n], kind), 0
                for j in range(1, n):
                    best, at = take_last(best, at, key(flat[o * n + j], kind), j)
                dst[o] = at
        else:
            for o in range(hi - lo):
                best, at = key(flat[o * n], kind), 0
                for j in range(1, n):
                    best, at = take_first(best, at, key(flat[o * n + j], kind), j)
                dst[o] = at

    def short_rows(x, out, lo, hi, n):
        # Rows lo..hi of a constant length ``n``, a vector of rows at a time, from the
        # first row whose output starts a 64-byte line (the rows before it first): a
        # store across two lines costs two (docs/performance.md, "Groups of short rows
        # start at an output line").
        group = short_group_rows(x, n)
        head = min(hi - lo, (-(out.ctypes.data >> 3) - lo) & 7)
        if head > 0:
            short_group_argmax(x, lo, head, out, kind, last, n)
        for o in range(lo + head, hi, group):
            short_group_argmax(x, o, min(group, hi - o), out, kind, last, n)

    def rows_task(x, out, t, per):
        # Rows longer than ``chunk_row_bytes``, and shorter ones too few for groups, one at a
        # time.
        n = x.shape[1]
        for o in range(t * per, min((t + 1) * per, x.shape[0])):
            out[o] = search(x, o, 0, n)[1]

    def chunk_rows_task(x, out, t, per):
        # Rows longer than GROUP_ROW_BYTES, up to ``chunk_row_bytes``, a group at a time, their
        # vectors folded first (the task's last group may have fewer rows). A task of its
        # own, like ``group_rows_task`` (docs/performance.md, "Row tasks of their own").
        lo, hi = t * per, min((t + 1) * per, x.shape[0])
        group = lane_count(x)
        for o in range(lo, hi, group):
            chunk_group_argmax(x, o, min(group, hi - o), out, kind, last)

    def group_rows_task(x, out, t, per):
        # Rows of up to GROUP_ROW_BYTES, a group at a time, each as one vector (of two
        # registers for rows longer than one), where every row's last vector load stays in
        # the array: up to ``stop``, a row or two before the array's end. The rows left
        # over in a task that holds a group make a group that ends at ``stop`` (some rows
        # are searched twice); the rows after it, and those of a task that holds no
        # group, are searched one element at a time, rather than all the last task's rows
        # after its last whole group (docs/performance.md, "The array's last rows in one
        # more group"). A task of its own, without the vector search of long rows: in one
        # task with it, the first call would compile both (docs/performance.md, "Row
        # tasks of their own").
        outer, n = x.shape
        lo, hi = t * per, min((t + 1) * per, outer)
        wide = n * x.itemsize > VECTOR_BYTES
        reach = lane_count(x) * (2 if wide else 1)  # elements of a row's vector
        group = group_size(x, kind, 2) if wide else group_size(x, kind, 1)
        stop = min(hi, outer - (reach + n - 1) // n)  # groups that end here read inside x
        groups = max(0, stop - lo) // group
        tail = groups > 0 and (stop - lo) % group > 0
        for g in range(groups + tail):
            start = min(lo + g * group, stop - group)
            if wide:
                group_argmax(x, start, out, kind, last, 2)
            else:
                group_argmax(x, start, out, kind, last, 1)
        by_element(x, out, stop if groups > 0 else lo, hi, n)

    def short_rows_task(x, out, t, per):
        # Rows of ROW_LENGTH elements, a constant per task, so that a first call compiles
        # only its length.
        lo, hi = t * per, min((t + 1) * per, x.shape[0])
        short(x, out, lo, hi, ROW_LENGTH)

    def short_any_task(x, out, t, per):
        # Every short length in one task, for compiled callers: a compiled caller must
        # have every length ready before it runs (``runtime.table``), and one task with a
        # branch per length compiles faster than eleven, and than a ``literal_unroll``
        # over the lengths (docs/performance.md, "One task for every short length, for
        # compiled callers"). (``lane_count`` is a constant: LLVM drops
        # the branches for the rows of 8- and 16-bit elements from other dtypes' code;
        # 16-bit rows longer than SHORT_ROW are only of an even length.)
        lo, hi = t * per, min((t + 1) * per, x.shape[0])
        n = x.shape[1]
        if n == 2:
            short(x, out, lo, hi, 2)
        elif n == 3:
            short(x, out, lo, hi, 3)
        elif n == 4:
            short(x, out, lo, hi, 4)
        elif n == 5:
            short(x, out, lo, hi, 5)
        elif n == 6:
            short(x, out, lo, hi, 6)
        elif n == 7:
            short(x, out, lo, hi, 7)
        elif n == 8 or lane_count(x) < VECTOR_BYTES // 2:
            short(x, out, lo, hi, SHORT_ROW)
        elif n == 10:
            short(x, out, lo, hi, 10)
        elif n == 12 or lane_count(x) < VECTOR_BYTES:
            short(x, out, lo, hi, BYTE_ROW)
        elif n == 9:
            short(x, out, lo, hi, 9)
        else:
            short(x, out, lo, hi, 11)

    def row_piece_task(x, part_key, part_at, t, nchunks, chunk):
        o = t // nchunks
        start = (t - o * nchunks) * chunk
        part_key[t], part_at[t] = search(x, o, start, min(start + chunk, x.shape[1]))

    by_row = {"search": row_search, "by_element": element_rows, "short": short_rows}
    specs = {
        fn.__name__: TaskSpec(fn, fn.__name__, by_row, {})
        for fn in (rows_task, chunk_rows_task, group_rows_task, short_any_task, row_piece_task)
    }
    for m in range(2, BYTE_ROW + 1):
        name = f"short_rows_task{m}"
        specs[name] = TaskSpec(
            short_rows_task, f"short_rows{m}_task", {"short": short_rows}, {"ROW_LENGTH": m}
        )
    return specs
