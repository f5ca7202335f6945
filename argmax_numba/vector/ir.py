"""Building blocks of the vector searches, in LLVM IR (for numba intrinsics)."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils

from ..runtime.target import compile_target
from .keys import key_ir

__all__ = [
    "HALVED_REGISTER",
    "SPLIT_VECTOR",
    "VECTOR_BYTES",
    "equal_to",
    "key_ir",
    "lane_of",
    "loaded",
    "masked_load",
    "masked_store",
    "opaque_pointer",
    "prefetch",
    "reduce",
    "resize",
    "splat",
    "vector_at",
]

# Bytes per vector: one 512-bit register, or two 256-bit ones (docs/performance.md,
# VECTOR_BYTES).
VECTOR_BYTES = 64


def reduce(builder: ir.IRBuilder, op: str, vector: ir.Value) -> ir.Value:
    """The lanes of ``vector`` reduced by ``op`` ("smax", "umin", ...) to one value."""
    vty = vector.type
    name = f"llvm.vector.reduce.{op}.v{vty.count}i{vty.element.width}"
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty.element, [vty]), name)
    return builder.call(fn, [vector])


def masked_load(builder: ir.IRBuilder, pointer: ir.Value, inside: ir.Value) -> ir.Value:
    """The vector at ``pointer`` (a pointer to a vector type) in the lanes where the i1
    vector ``inside`` is true, zero elsewhere; the other lanes' memory is not read, so
    they may lie past the end of an array. One instruction where the CPU has masked
    loads (AVX-512), lane by lane elsewhere."""
    vty = pointer.type.pointee
    fnty = ir.FunctionType(vty, [pointer.type, ir.IntType(32), inside.type, vty])
    name = f"llvm.masked.load.v{vty.count}i{vty.element.width}.p0"
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    align = ir.Constant(ir.IntType(32), vty.element.width // 8)
    return builder.call(fn, [pointer, align, inside, ir.Constant(vty, 0)])


def masked_store(builder: ir.IRBuilder, value: ir.Value, pointer: ir.Value, inside) -> None:
    """Store the vector ``value`` at ``pointer`` in the lanes where the i1 vector
    ``inside`` is true; the other lanes' memory is not touched (``masked_load``)."""
    vty = value.type
    fnty = ir.FunctionType(ir.VoidType(), [vty, pointer.type, ir.IntType(32), inside.type])
    name = f"llvm.masked.store.v{vty.count}i{vty.element.width}.p0"
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    align = ir.Constant(ir.IntType(32), vty.element.width // 8)
    builder.call(fn, [value, pointer, align, inside])


def prefetch(builder: ir.IRBuilder, pointer: ir.Value, into_l1: bool = True) -> None:
    """Fetch the cache line at ``pointer`` ahead of its use: into every cache level, or
    with ``into_l1=False`` into L2 and the levels beyond it only (``prefetcht1`` on x86)."""
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    # a read, kept in all cache levels (locality 3) or all but L1 (2), of data
    args = [
        builder.bitcast(pointer, i8p),
        ir.Constant(i32, 0),
        ir.Constant(i32, 3 if into_l1 else 2),
        ir.Constant(i32, 1),
    ]
    builder.call(fn, args)


def splat(builder: ir.IRBuilder, value: ir.Value, count: int) -> ir.Value:
    """A vector of ``count`` lanes that all hold ``value``."""
    i32 = ir.IntType(32)
    undefined = ir.Constant(ir.VectorType(value.type, count), ir.Undefined)
    one = builder.insert_element(undefined, value, ir.Constant(i32, 0))
    return builder.shuffle_vector(one, undefined, ir.Constant(ir.VectorType(i32, count), 0))


def resize(builder: ir.IRBuilder, value: ir.Value, to: ir.Type) -> ir.Value:
    """An unsigned integer (or vector) ``value`` at another width."""
    have = (value.type.element if isinstance(value.type, ir.VectorType) else value.type).width
    want = (to.element if isinstance(to, ir.VectorType) else to).width
    if have < want:
        return builder.zext(value, to)
    return builder.trunc(value, to) if have > want else value


def _count_zeros(builder: ir.IRBuilder, mask: ir.Value, leading: bool) -> ir.Value:
    """Leading (or trailing) zero bits of the integer ``mask``, as an i64."""
    name = f"llvm.{'ctlz' if leading else 'cttz'}.i{mask.type.width}"
    fnty = ir.FunctionType(mask.type, [mask.type, ir.IntType(1)])
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    zeros = builder.call(fn, [mask, ir.Constant(ir.IntType(1), 0)])
    return resize(builder, zeros, ir.IntType(64))


def lane_of(builder: ir.IRBuilder, mask: ir.Value, last) -> ir.Value:
    """The first lane set in ``mask`` (an integer with a bit per lane), or with ``last``
    the last one, as an i64. ``last`` is a bool known when compiling, or an i1 chosen at
    run time."""
    if isinstance(last, ir.Value):
        return builder.select(last, lane_of(builder, mask, True), lane_of(builder, mask, False))
    if not last:
        return _count_zeros(builder, mask, leading=False)
    top = ir.Constant(ir.IntType(64), mask.type.width - 1)
    return builder.sub(top, _count_zeros(builder, mask, leading=True))


_CPU, _FEATURES = compile_target()
# Whether a vector of VECTOR_BYTES is one register (x86-64 with AVX-512): LLVM splits it
# into smaller ones elsewhere.
_ONE_REGISTER = "+avx512f" in _FEATURES
# Whether a vector of VECTOR_BYTES goes through the vector units in more than one piece:
# two registers, or one whose instructions run as two 256-bit halves (AMD Zen 4, which
# also loads and stores 256 bits at a time).
SPLIT_VECTOR = not _ONE_REGISTER or _CPU == "znver4"
# Whether one register holds a vector whose instructions run as two 256-bit halves (AMD
# Zen 4 with AVX-512).
HALVED_REGISTER = _ONE_REGISTER and _CPU == "znver4"
# Whether ``loaded`` needs its barrier: on AMD Zen processors with AVX-512. Elsewhere
# the barrier is left out, as its register constraint would not allow a split vector.
_BARRIER = _ONE_REGISTER and _CPU.startswith("znver")


def loaded(builder, value: ir.Value) -> ir.Value:
    """``value``, a vector of ``VECTOR_BYTES`` just loaded, kept in a register: an empty
    inline assembly block stops LLVM from merging the load into a masked instruction (a
    blend or compare that reads memory under a mask), which is slower there, as on rows
    of 16 int32 (docs/performance.md, "A load barrier on AMD Zen with AVX-512"). Only on
    AMD Zen processors with AVX-512."""
    if not _BARRIER or value.type.count * value.type.element.width != 8 * VECTOR_BYTES:
        return value
    fnty = ir.FunctionType(value.type, [value.type])
    return builder.asm(fnty, "", "=v,0", [value], False)


def opaque_pointer(builder, pointer: ir.Value) -> ir.Value:
    """``pointer``, passed through an empty inline assembly block that may touch memory,
    so that LLVM can neither see what it points to nor forward stores to its loads: a
    value stored there and read back a lane at a time stays a store and loads (memory
    broadcasts, which take no shuffle), not a shuffle per lane."""
    i8p = ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(i8p, [i8p])
    hidden = builder.asm(fnty, "", "=r,0,~{memory}", [builder.bitcast(pointer, i8p)], True)
    return builder.bitcast(hidden, pointer.type)


def vector_at(builder, data: ir.Value, vty: ir.VectorType):
    """A loader of the vector at a flat element index of an array's ``data`` (read as
    registers of ``VECTOR_BYTES``, put together)."""
    part = ir.VectorType(vty.element, min(vty.count, VECTOR_BYTES * 8 // vty.element.width))

    def load(index):
        parts = []
        for k in range(vty.count // part.count):
            at = builder.add(index, ir.Constant(index.type, k * part.count))
            pointer = builder.bitcast(builder.gep(data, [at]), part.as_pointer())
            parts.append(loaded(builder, builder.load(pointer, align=vty.element.width // 8)))
        while len(parts) > 1:
            count = 2 * parts[0].type.count
            joined = ir.Constant(ir.VectorType(ir.IntType(32), count), list(range(count)))
            pairs = zip(parts[::2], parts[1::2], strict=True)
            parts = [builder.shuffle_vector(a, b, joined) for a, b in pairs]
        return parts[0]

    return load


def equal_to(builder, target: ir.Value, lanes: int):
    """A test of which lanes of a vector equal ``target``."""
    return lambda v: builder.icmp_unsigned("==", v, splat(builder, target, lanes))
