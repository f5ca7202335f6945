"""Helpers on ``onnx.TypeProto``: formatting, merging with a declared type, generalizing."""

from __future__ import annotations

from collections.abc import Sequence

from onnx import TensorProto, TypeProto

__all__ = ["adds_information", "format_type", "generalize_types", "merge_types"]

_TENSOR_KINDS = ("tensor_type", "sparse_tensor_type")


def _elem_name(elem_type: int) -> str:
    if elem_type == TensorProto.UNDEFINED:
        return "?"
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"<{elem_type}>"


def _format_tensor(tensor: TypeProto.Tensor | TypeProto.SparseTensor) -> str:
    elem = _elem_name(tensor.elem_type)
    if not tensor.HasField("shape"):
        return f"{elem}[...]"
    dims = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(str(dim.dim_value))
        elif dim.HasField("dim_param") and dim.dim_param:
            dims.append(dim.dim_param)
        else:
            dims.append("?")
    return f"{elem}[{','.join(dims)}]"


def format_type(type_proto: TypeProto | None) -> str:
    """Short text form of a type: ``int64[N,1,4]``, ``float[...]`` (unknown rank), ``?`` dims.

    ``?`` alone means the type is unknown.
    """
    if type_proto is None:
        return "?"
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return _format_tensor(type_proto.tensor_type)
    if kind == "sparse_tensor_type":
        return "sparse " + _format_tensor(type_proto.sparse_tensor_type)
    if kind == "sequence_type":
        return f"seq({format_type(type_proto.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({format_type(type_proto.optional_type.elem_type)})"
    if kind == "map_type":
        key = _elem_name(type_proto.map_type.key_type)
        return f"map({key}, {format_type(type_proto.map_type.value_type)})"
    if kind == "opaque_type":
        return f"opaque({type_proto.opaque_type.domain}.{type_proto.opaque_type.name})"
    return "?"


def _merge_into(inferred: TypeProto, target: TypeProto) -> str | None:
    """Merge ``inferred`` into ``target`` (a copy of the declared type) like onnx does.

    Returns a description of the conflict, or None.
    """
    kind = inferred.WhichOneof("value")
    target_kind = target.WhichOneof("value")
    if target_kind is None:
        target.CopyFrom(inferred)
        return None
    if kind != target_kind:
        return "a different kind of type"
    if kind in ("sequence_type", "optional_type"):
        src = getattr(inferred, kind)
        dst = getattr(target, kind)
        if not src.HasField("elem_type"):
            return None
        return _merge_into(src.elem_type, dst.elem_type)
    if kind not in _TENSOR_KINDS:
        return None
    src = getattr(inferred, kind)
    dst = getattr(target, kind)
    if src.elem_type != TensorProto.UNDEFINED:
        if dst.elem_type == TensorProto.UNDEFINED:
            dst.elem_type = src.elem_type
        elif dst.elem_type != src.elem_type:
            return "a different element type"
    if not src.HasField("shape"):
        return None
    if not dst.HasField("shape"):
        dst.shape.CopyFrom(src.shape)
        return None
    if len(src.shape.dim) != len(dst.shape.dim):
        return "a different rank"
    for i, (s, d) in enumerate(zip(src.shape.dim, dst.shape.dim, strict=True)):
        if s.HasField("dim_value"):
            if d.HasField("dim_value"):
                if d.dim_value != s.dim_value:
                    return f"a different size in dimension {i}"
            else:
                d.dim_value = s.dim_value
        elif d.HasField("dim_value") or (d.HasField("dim_param") and d.dim_param):
            continue
        elif s.HasField("dim_param") and s.dim_param:
            d.dim_param = s.dim_param
    return None


def merge_types(inferred: TypeProto, declared: TypeProto | None) -> tuple[TypeProto, str | None]:
    """Combine an inferred type with the type the model declares for the same value.

    Follows onnx's rule: element types must match; with both shapes present the ranks
    must match and two concrete sizes must be equal. The declared type is the base; a
    concrete inferred size replaces a symbolic or unknown declared one, a declared
    symbol is kept over an inferred one, an inferred symbol fills an unknown declared
    dimension.

    Returns:
        ``(merged, None)``, or ``(inferred, reason)`` when the two conflict.
    """
    if declared is None or declared.WhichOneof("value") is None:
        return inferred, None
    merged = TypeProto()
    merged.CopyFrom(declared)
    reason = _merge_into(inferred, merged)
    if reason is not None:
        return inferred, reason
    return merged, None


def adds_information(new: TypeProto | None, old: TypeProto | None) -> bool:
    """Whether ``new`` tells more than ``old``: a type, an element type, a rank or a size."""
    if new is None or new.WhichOneof("value") is None:
        return False
    if old is None or old.WhichOneof("value") is None:
        return True
    kind = new.WhichOneof("value")
    if kind != old.WhichOneof("value"):
        return False
    if kind in ("sequence_type", "optional_type"):
        src, dst = getattr(new, kind), getattr(old, kind)
        if not src.HasField("elem_type"):
            return False
        if not dst.HasField("elem_type"):
            return True
        return adds_information(src.elem_type, dst.elem_type)
    if kind not in _TENSOR_KINDS:
        return False
    n, o = getattr(new, kind), getattr(old, kind)
    if o.elem_type == TensorProto.UNDEFINED and n.elem_type != TensorProto.UNDEFINED:
        return True
    if not n.HasField("shape"):
        return False
    if not o.HasField("shape"):
        return True
    if len(n.shape.dim) != len(o.shape.dim):
        return False
    return any(
        nd.HasField("dim_value") and not od.HasField("dim_value")
        for nd, od in zip(n.shape.dim, o.shape.dim, strict=True)
    )


def generalize_types(types: Sequence[TypeProto | None]) -> TypeProto | None:
    """The most precise type that all of ``types`` satisfy (None if nothing is common).

    Used for values inside a function called with different input types: dimensions
    that differ between calls become unknown, a rank that differs drops the shape.
    """
    if not types or any(t is None for t in types):
        return None
    first = types[0]
    if all(t == first for t in types[1:]):
        return first
    kinds = {t.WhichOneof("value") for t in types}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind not in _TENSOR_KINDS:
        return None
    tensors = [getattr(t, kind) for t in types]
    out = TypeProto()
    out_tensor = getattr(out, kind)
    elems = {t.elem_type for t in tensors}
    out_tensor.elem_type = elems.pop() if len(elems) == 1 else TensorProto.UNDEFINED
    if all(t.HasField("shape") for t in tensors):
        ranks = {len(t.shape.dim) for t in tensors}
        if len(ranks) == 1:
            out_tensor.shape.CopyFrom(tensors[0].shape)
            for i, dim in enumerate(out_tensor.shape.dim):
                if any(t.shape.dim[i] != dim for t in tensors[1:]):
                    dim.Clear()
    return out
