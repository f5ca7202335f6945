"""Exceptions raised by shape inference.

Two levels:

* :class:`RuleError` is raised by a single inference rule for a single node. It carries
  one or more :class:`Issue` entries (what is wrong with that node) but does not know
  where the node lives in the model.
* :class:`ShapeInferenceError` is what the public functions raise. It collects every
  offending node of a model as :class:`Problem` entries, each with the node's path
  (``if_0/then_branch/argmax_3``), so that one exception reports all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Issue", "Problem", "RuleError", "ShapeInferenceError"]


@dataclass(frozen=True)
class Issue:
    """One thing wrong with one node, as reported by an inference rule.

    Attributes:
        subject: the attribute, input or output at fault, e.g. ``"attribute 'axis'"``.
        found: what the node has, e.g. ``"5, outside [-3, 2] for an input of rank 3"``.
        expected: what would have been valid, e.g. ``"an integer in [-3, 2]"``.
    """

    subject: str
    found: str
    expected: str


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one node of a model.

    Attributes:
        node: path of the node: its name (or ``<op_type>#<index>`` when it has none),
            prefixed by the enclosing nodes and graph attributes for nodes inside
            subgraphs (``if_0/then_branch/argmax_3``) and by ``<domain>.<name>`` for
            nodes inside model-local functions (``custom.MyFunction/argmax_0``).
            ``<model>`` for problems that concern the whole model.
        op_type: operator type of the node (empty for ``<model>`` problems).
        subject: the attribute, input, output or type at fault.
        found: what the model has.
        expected: what would have been valid.
    """

    node: str
    op_type: str
    subject: str
    found: str
    expected: str

    def __str__(self) -> str:
        where = f"{self.node} ({self.op_type})" if self.op_type else self.node
        return f"{where}: {self.subject}: {self.found}; expected {self.expected}"


class RuleError(ValueError):
    """Raised by an inference rule when a node is invalid.

    Args:
        *issues: one or more :class:`Issue` entries describing what is wrong.
    """

    def __init__(self, *issues: Issue) -> None:
        if not issues:
            raise TypeError("RuleError needs at least one Issue")
        self.issues: tuple[Issue, ...] = tuple(issues)
        super().__init__("; ".join(f"{i.subject}: {i.found}" for i in self.issues))


class ShapeInferenceError(ValueError):
    """Raised when a model (or a node) cannot be given valid types.

    Attributes:
        problems: every problem found, in model order, as :class:`Problem` entries.
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        nodes = {p.node for p in self.problems}
        head = f"shape inference failed: {len(self.problems)} problem(s) in {len(nodes)} node(s)"
        super().__init__("\n  - ".join([head, *map(str, self.problems)]))
