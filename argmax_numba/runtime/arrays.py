"""Arrays the kernels make: scratch vectors and views of C-contiguous buffers.

Made with a few LLVM instructions each, not numba's ``np.empty`` and ``reshape``:
those compile helper functions per call site and signature, each adding to a first call
(docs/performance.md, "Helpers as intrinsics"). The kernels only ever need uninitialised
1-D scratch and reinterpreted C-contiguous buffers whose bounds they have computed
themselves.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

__all__ = ["as_dtype", "c_view", "empty", "to_fixed_tuple", "vector_codegen"]


def populate_array(array, **fields) -> None:
    """numba's ``populate_array``, imported when code is generated: a process that only
    loads compiled code need not spend the time its module takes to import
    (docs/performance.md, "Helpers as intrinsics")."""
    from numba.np.arrayobj import populate_array as populate

    populate(array, **fields)


def new_vector(context, builder, dtype, size: ir.Value) -> ir.Value:
    """LLVM IR for a new uninitialised 1-D C array of ``size`` (an intp) items of
    ``dtype`` (a numba scalar type); ValueError for a negative or too large size,
    MemoryError where it cannot be allocated."""
    array_type = types.Array(dtype, 1, "C")
    itemsize = context.get_abi_sizeof(context.get_data_type(dtype))
    product = builder.smul_with_overflow(size, ir.Constant(size.type, itemsize))
    nbytes, overflow = builder.extract_value(product, 0), builder.extract_value(product, 1)
    with builder.if_then(builder.or_(overflow, cgutils.is_neg_int(builder, size)), likely=False):
        context.call_conv.return_user_exc(builder, ValueError, ("argmax: no such array size",))
    align = context.get_preferred_array_alignment(dtype)
    meminfo = context.nrt.meminfo_alloc_aligned(builder, nbytes, align)
    with builder.if_then(cgutils.is_null(builder, meminfo), likely=False):
        context.call_conv.return_user_exc(builder, MemoryError, ("argmax: out of memory",))
    data = context.nrt.meminfo_data(builder, meminfo)
    array = context.make_array(array_type)(context, builder)
    populate_array(
        array,
        data=builder.bitcast(data, context.get_data_type(dtype).as_pointer()),
        shape=[size],
        strides=[ir.Constant(size.type, itemsize)],
        itemsize=ir.Constant(size.type, itemsize),
        meminfo=meminfo,
    )
    return array._getvalue()


def vector_codegen(dtype):
    """The codegen of an intrinsic whose first argument is a size and which returns
    ``new_vector`` of that many items of ``dtype``."""

    def codegen(context, builder, sig, args):
        size = context.cast(builder, args[0], sig.args[0], types.intp)
        return new_vector(context, builder, dtype, size)

    return codegen


@intrinsic
def empty(typingctx, size, dtype):
    """A new uninitialised 1-D array of ``size`` items of ``dtype`` (such as
    ``np.int64``)."""
    if not isinstance(size, types.Integer) or not isinstance(dtype, types.NumberClass):
        raise errors.TypingError("empty(): takes an integer size and a number type")
    item = dtype.instance_type
    return types.Array(item, 1, "C")(size, dtype), vector_codegen(item)


@intrinsic
def c_view(typingctx, x, start, shape):
    """The elements of the C-contiguous ``x`` from flat index ``start`` on, as a
    C-contiguous array of ``shape`` (an integer or a tuple of them). The caller
    guarantees that they lie inside ``x``."""
    if not (isinstance(x, types.Array) and x.layout == "C"):
        raise errors.TypingError("c_view(): x must be a C-contiguous array")
    if not isinstance(start, types.Integer):
        raise errors.TypingError("c_view(): start must be an integer")
    if isinstance(shape, types.Integer):
        extent_types = (shape,)
    elif isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        extent_types = tuple(shape)
    else:
        raise errors.TypingError("c_view(): shape must be an integer or a tuple of integers")
    view = x.copy(ndim=len(extent_types), layout="C")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        if isinstance(shape, types.Integer):
            values = [args[2]]
        else:
            values = [builder.extract_value(args[2], i) for i in range(len(extent_types))]
        extents = [
            context.cast(builder, v, t, types.intp)
            for v, t in zip(values, extent_types, strict=True)
        ]
        strides, step = [], src.itemsize
        for extent in reversed(extents):
            strides.insert(0, step)
            step = builder.mul(step, extent)
        first = context.cast(builder, args[1], sig.args[1], types.intp)
        out = context.make_array(view)(context, builder)
        populate_array(
            out,
            data=builder.gep(src.data, [first]),
            shape=extents,
            strides=strides,
            itemsize=src.itemsize,
            meminfo=src.meminfo,
        )
        return impl_ret_borrowed(context, builder, view, out._getvalue())

    return view(x, start, shape), codegen
