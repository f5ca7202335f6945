"""The IR helpers' calls of LLVM intrinsics, read back from the IR they emit."""

import re

import pytest
from llvmlite import ir

from argmax_numba.vector.ir import prefetch


@pytest.mark.parametrize(("into_l1", "locality"), [(True, 3), (False, 2)])
def test_prefetch_asks_for_the_cache_levels(into_l1, locality):
    # llvm.prefetch(address, rw, locality, cache type): a read (0) of data (1); locality 3
    # keeps the line in every level, 2 in all but the nearest (LLVM LangRef).
    module = ir.Module()
    i8p = ir.IntType(8).as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i8p]), "f")
    builder = ir.IRBuilder(fn.append_basic_block())
    prefetch(builder, fn.args[0], into_l1=into_l1)
    builder.ret_void()
    calls = re.findall(r"call void @\"?llvm\.prefetch\.p0\"?\((.*)\)", str(module))
    assert len(calls) == 1
    args = [a.strip().split()[-1] for a in calls[0].split(",")]
    assert args[1:] == ["0", str(locality), "1"]
