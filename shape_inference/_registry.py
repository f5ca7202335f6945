"""Registry of type-inference rules, keyed by (domain, op_type, since_version).

A rule is a callable ``rule(node, input_types, opset) -> output_types``:

* ``node``: the ``onnx.NodeProto`` (read it, do not modify it);
* ``input_types``: one ``onnx.TypeProto`` or None (unknown) per entry of ``node.input``
  (do not modify them either);
* ``opset``: the version the model imports for the node's domain;
* returns one ``onnx.TypeProto`` or None (unknown) per entry of ``node.output``.

A rule reports an invalid node by raising :class:`shape_inference.RuleError` (any
other exception propagates unchanged: it is taken for a bug in the rule). The types a
rule returns are copied into the model, so a rule may return shared objects, or one of
its input types.

For a node, the rule used is the one with the highest ``since_version`` that is not
above the opset the model imports for the node's domain, like onnx's operator
versioning.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import TypeVar

import onnx

__all__ = ["InferenceRule", "get_rule", "register", "registered", "unregister"]

InferenceRule = Callable[
    [onnx.NodeProto, Sequence["onnx.TypeProto | None"], int],
    Sequence["onnx.TypeProto | None"],
]
_R = TypeVar("_R", bound=InferenceRule)

# (domain, op_type) -> sorted list of (since_version, rule)
_RULES: dict[tuple[str, str], list[tuple[int, InferenceRule]]] = {}


def normalize_domain(domain: str) -> str:
    """Map the two spellings of the default ONNX domain to ``""``."""
    return "" if domain == "ai.onnx" else domain


def _check_key(op_type: str, domain: str, since_version: int) -> tuple[str, str]:
    if not isinstance(op_type, str) or not op_type:
        raise ValueError("op_type must be a non-empty string")
    if not isinstance(domain, str):
        raise TypeError("domain must be a string")
    if isinstance(since_version, bool) or not isinstance(since_version, int):
        raise TypeError("since_version must be an integer")
    if since_version < 1:
        raise ValueError(f"since_version must be >= 1, got {since_version}")
    return normalize_domain(domain), op_type


def register(
    op_type: str, domain: str = "", since_version: int = 1, *, replace: bool = False
) -> Callable[[_R], _R]:
    """Decorator registering an inference rule for ``domain::op_type`` from ``since_version``.

    Example::

        @register("MyOp", domain="com.example", since_version=1)
        def my_op(node, input_types, opset):
            return [input_types[0]]

    Args:
        op_type: the operator's type, e.g. ``"ArgMax"``.
        domain: the operator's domain; ``""`` (or ``"ai.onnx"``) for standard ONNX.
        since_version: first opset of that domain the rule applies to.
        replace: allow replacing a rule already registered for the same key.

    Raises:
        ValueError: a rule is already registered for that key and ``replace`` is false.
    """
    key = _check_key(op_type, domain, since_version)

    def decorator(rule: _R) -> _R:
        if not callable(rule):
            raise TypeError("an inference rule must be callable")
        versions = _RULES.setdefault(key, [])
        for i, (version, _) in enumerate(versions):
            if version == since_version:
                if not replace:
                    raise ValueError(
                        f"a rule for {key[0] or 'ai.onnx'}::{op_type} since version "
                        f"{since_version} is already registered (pass replace=True)"
                    )
                versions[i] = (since_version, rule)
                return rule
        bisect.insort(versions, (since_version, rule), key=lambda item: item[0])
        return rule

    return decorator


def unregister(op_type: str, domain: str = "", since_version: int = 1) -> InferenceRule:
    """Remove and return the rule registered for exactly this key.

    Raises:
        KeyError: no rule is registered for that key.
    """
    key = _check_key(op_type, domain, since_version)
    versions = _RULES.get(key, [])
    for i, (version, rule) in enumerate(versions):
        if version == since_version:
            del versions[i]
            if not versions:
                del _RULES[key]
            return rule
    raise KeyError(f"no rule registered for {domain or 'ai.onnx'}::{op_type}-{since_version}")


def get_rule(op_type: str, domain: str, opset: int) -> tuple[int, InferenceRule] | None:
    """Return ``(since_version, rule)`` applying to ``domain::op_type`` at ``opset``, or None."""
    versions = _RULES.get((normalize_domain(domain), op_type))
    if not versions:
        return None
    i = bisect.bisect_right(versions, opset, key=lambda item: item[0])
    return versions[i - 1] if i else None


def registered() -> list[tuple[str, str, int]]:
    """All registered keys as ``(domain, op_type, since_version)``, sorted."""
    return sorted((d, op, v) for (d, op), versions in _RULES.items() for v, _ in versions)
