"""Type inference over whole models: main graph, subgraphs and model-local functions.

How types are obtained:

1. onnx's own (C++, non-strict) shape inference types every operator it knows.
2. Every node with a rule in this package's registry (ArgMax, ArgMin, and any rule a
   user registers) is then typed by that rule from its inputs' types; the result is
   merged with the type the model declares for the output, checked, and written into
   the graph. Problems are collected, not raised one by one.
3. If a registered rule typed a value onnx could not type (typically the output of a
   custom-domain operator), onnx's pass runs again so that the new types flow to the
   operators downstream; steps 2-3 repeat until nothing new is learnt.
4. Model-local functions are inferred once per distinct call signature by running the
   same procedure on the function body with the call's input types and attributes; the
   types of registered-rule outputs are generalized over all calls and written into the
   function's ``value_info``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field
from typing import NamedTuple

import onnx
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TypeProto

from ._argmax_rule import ARG_REDUCE_OPS  # importing it registers the ArgMax/ArgMin rules
from ._registry import _RULES, InferenceRule, get_rule, normalize_domain
from ._types import adds_information, format_type, generalize_types, merge_types
from .errors import Problem, RuleError, ShapeInferenceError

__all__ = [
    "ArgMaxTyping",
    "infer",
    "infer_argmax_argmin_types",
    "infer_argmax_types",
    "infer_shapes",
]

_GRAPH = AttributeProto.GRAPH
_GRAPHS = AttributeProto.GRAPHS
_MODEL = "<model>"
# Operators of the standard domains that have GRAPH or GRAPHS attributes.
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap", "FlexAttention"})
_STANDARD_DOMAINS = frozenset(
    {"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training"}
)

FunctionKey = tuple[str, str, str]  # (domain, name, overload)
# A path from a graph root to a subgraph: (node index, attribute name, index in GRAPHS or -1)
Locator = tuple[tuple[int, str, int], ...]


class ArgMaxTyping(NamedTuple):
    """The types inferred for one ArgMax or ArgMin node.

    ``str()`` gives ``<path> (<op_type>): <input type> -> <output type>``, e.g.
    ``argmax_label (ArgMax): float[batch,3] -> int64[batch]``.

    Attributes:
        path: the node's path (see :class:`shape_inference.Problem`).
        input_type: type of its input (None if unknown).
        output_type: type of its output.
        op_type: ``"ArgMax"`` or ``"ArgMin"``, which operator the node is. Last, and
            ``"ArgMax"`` by default, so that records built from the first three fields
            alone still describe ArgMax nodes.
    """

    path: str
    input_type: TypeProto | None
    output_type: TypeProto | None
    op_type: str = "ArgMax"

    def __str__(self) -> str:
        types = f"{format_type(self.input_type)} -> {format_type(self.output_type)}"
        return f"{self.path} ({self.op_type}): {types}"


def _join(prefix: str, part: str) -> str:
    return f"{prefix}/{part}" if prefix else part


def _label(node: NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}#{index}"


def _function_label(key: FunctionKey) -> str:
    domain, name, overload = key
    label = f"{domain}.{name}" if domain else name
    return f"{label}:{overload}" if overload else label


def _cpp_infer_shapes(data: bytes) -> bytes:
    """onnx's C++ shape inference, bytes to bytes (what onnx's own Python wrapper calls)."""
    try:
        from onnx.onnx_cpp2py_export.shape_inference import infer_shapes
    except ImportError:  # an onnx without that binding: same result, one more copy
        return onnx.shape_inference.infer_shapes(data).SerializeToString()
    return infer_shapes(data, False, False, False)


def _onnx_pass(model: ModelProto) -> ModelProto:
    """onnx's shape inference (C++, non-strict); returns a new model."""
    try:
        data = _cpp_infer_shapes(model.SerializeToString())
    except Exception as exc:  # onnx raises several unrelated exception types
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise ShapeInferenceError(
            [Problem(_MODEL, "", "onnx shape inference", message, "a model onnx's pass accepts")]
        ) from exc
    return ModelProto.FromString(data)


def _initializer_type(tensor: onnx.TensorProto) -> TypeProto:
    out = TypeProto()
    out.tensor_type.elem_type = tensor.data_type
    shape = out.tensor_type.shape
    for d in tensor.dims:
        shape.dim.add().dim_value = d
    return out


def _copy(type_proto: TypeProto | None) -> TypeProto | None:
    if type_proto is None:
        return None
    out = TypeProto()
    out.CopyFrom(type_proto)
    return out


def _known(vi: onnx.ValueInfoProto) -> TypeProto | None:
    if vi.HasField("type") and vi.type.WhichOneof("value") is not None:
        return vi.type
    return None


def _declared_types(graph: GraphProto) -> dict[str, TypeProto]:
    """Types the model itself declares for values of ``graph`` (value_info, outputs)."""
    declared: dict[str, TypeProto] = {}
    for vi in (*graph.value_info, *graph.output):
        known = _known(vi)
        if known is not None:
            declared.setdefault(vi.name, known)
    return declared


class _Scope:
    """Names and types visible in one graph (and, through ``outer``, enclosing graphs)."""

    __slots__ = ("_initializers", "_produced", "graph", "inputs", "outer", "outputs", "value_info")

    def __init__(self, graph: GraphProto, outer: _Scope | None) -> None:
        self.graph = graph
        self.outer = outer
        self.value_info = {vi.name: vi for vi in graph.value_info}
        self.outputs = {vi.name: vi for vi in graph.output}
        self.inputs = {vi.name: vi for vi in graph.input}
        self._initializers: dict[str, TypeProto] | None = None
        self._produced: set[str] | None = None

    def initializers(self) -> dict[str, TypeProto]:
        if self._initializers is None:
            types = {t.name: _initializer_type(t) for t in self.graph.initializer}
            for s in self.graph.sparse_initializer:
                t = _initializer_type(s.values)
                del t.tensor_type.shape.dim[:]
                for d in s.dims:
                    t.tensor_type.shape.dim.add().dim_value = d
                types[s.values.name] = t
            self._initializers = types
        return self._initializers

    def type_of(self, name: str) -> TypeProto | None:
        vi = self.value_info.get(name)
        if vi is not None and vi.HasField("type"):
            known = vi.type  # the usual case: onnx's pass typed it
            if known.WhichOneof("value") is not None:
                return known
        if vi is None:
            vi = self.outputs.get(name)
            if vi is None:
                vi = self.inputs.get(name)
        if vi is not None:
            known = _known(vi)
            if known is not None:
                return known
        known = self.initializers().get(name)
        if known is not None:
            return known
        if vi is None and self.outer is not None:
            return self.outer.type_of(name)
        return None

    def defined(self, name: str) -> bool:
        if self._produced is None:
            self._produced = {o for n in self.graph.node for o in n.output if o}
        if name in self.inputs or name in self._produced or name in self.initializers():
            return True
        return self.outer is not None and self.outer.defined(name)


@dataclass
class _FunctionRun:
    """What inferring one function body for one call signature produced."""

    outputs: list[TypeProto | None]
    problems: list[Problem]
    typings: list[ArgMaxTyping]
    calls: list[tuple[FunctionKey, str, _FunctionRun]]
    assignments: dict[tuple[Locator, str], TypeProto] = field(default_factory=dict)


class _Walk:
    """One walk over the graphs of a model after onnx's pass."""

    def __init__(self, engine: _Engine, opsets: dict[str, int], record: bool) -> None:
        self.engine = engine
        self.opsets = opsets
        self.record = record
        self.want_typings = engine.want_typings
        self.problems: list[Problem] = []
        self.typings: list[ArgMaxTyping] = []
        self.calls: list[tuple[FunctionKey, str, _FunctionRun]] = []
        self.assignments: dict[tuple[Locator, str], TypeProto] = {}
        self.gained = False
        self.rule_nodes = 0
        self._rules: dict[tuple[str, str], tuple[int, InferenceRule] | str | None] = {}

    def problem(self, path: str, op_type: str, subject: str, found: str, expected: str) -> None:
        self.problems.append(Problem(path, op_type, subject, found, expected))

    def graph(
        self,
        original: GraphProto,
        result: GraphProto,
        outer: _Scope | None,
        path: str,
        locator: Locator,
    ) -> None:
        """Walk ``result`` (onnx's output for the graph ``original``) and its subgraphs."""
        scope = _Scope(result, outer)
        declared: dict[str, TypeProto] | None = None
        engine = self.engine
        functions = engine.functions
        watched = engine.watched_ops
        any_custom = engine.any_custom_domain
        nodes = result.node
        for index in range(len(nodes)):
            node = nodes[index]
            op_type = node.op_type
            if op_type not in watched:
                # Typed by onnx. Only a custom-domain node may still hold a subgraph.
                if any_custom and node.domain not in _STANDARD_DOMAINS:
                    self._subgraphs(original.node[index], node, index, scope, path, locator)
                continue
            domain = node.domain
            if op_type in _SUBGRAPH_OPS or domain not in _STANDARD_DOMAINS:
                self._subgraphs(original.node[index], node, index, scope, path, locator)
            if domain == "ai.onnx":
                domain = ""
            if (domain, op_type) in _RULES:
                if declared is None:
                    declared = _declared_types(original)
                self._rule_node(node, index, domain, scope, path, locator, declared)
            elif functions:
                key = (domain, op_type, node.overload)
                if key in functions:
                    self._call_node(node, index, key, scope, path, locator)

    def _subgraphs(
        self,
        original: NodeProto,
        node: NodeProto,
        index: int,
        scope: _Scope,
        path: str,
        locator: Locator,
    ) -> None:
        node_path = _join(path, _label(node, index))
        original_attrs = {a.name: a for a in original.attribute}
        for attr in node.attribute:
            source = original_attrs.get(attr.name)
            if source is None:
                continue
            if attr.type == _GRAPH:
                self.graph(
                    source.g,
                    attr.g,
                    scope,
                    _join(node_path, attr.name),
                    (*locator, (index, attr.name, -1)),
                )
            elif attr.type == _GRAPHS:
                for k, (src, sub) in enumerate(zip(source.graphs, attr.graphs, strict=False)):
                    self.graph(
                        src,
                        sub,
                        scope,
                        _join(node_path, f"{attr.name}[{k}]"),
                        (*locator, (index, attr.name, k)),
                    )

    def _input_types(
        self, node: NodeProto, scope: _Scope, path: str, check: bool
    ) -> list[TypeProto | None]:
        types: list[TypeProto | None] = []
        inputs = node.input
        for k in range(len(inputs)):
            name = inputs[k]
            if not name:
                types.append(None)
                continue
            known = scope.type_of(name)
            if check and not scope.defined(name):
                self.problem(
                    path,
                    node.op_type,
                    f"input {k} '{name}'",
                    "not produced by any node, graph input or initializer in scope",
                    "the name of a value defined before this node",
                )
            types.append(known)
        return types

    def _find_rule(self, op_type: str, domain: str) -> tuple[int, InferenceRule] | str | None:
        """The rule and opset for a node, None if no rule applies, "" if not imported."""
        key = (domain, op_type)
        if key in self._rules:
            return self._rules[key]
        opset = self.opsets.get(domain)
        if opset is None:
            found: tuple[int, InferenceRule] | str | None = ""
        else:
            rule = get_rule(op_type, domain, opset)
            found = None if rule is None else (opset, rule[1])
        self._rules[key] = found
        return found

    def _rule_node(
        self,
        node: NodeProto,
        index: int,
        domain: str,
        scope: _Scope,
        path: str,
        locator: Locator,
        declared: dict[str, TypeProto],
    ) -> None:
        self.rule_nodes += 1
        op_type = node.op_type
        found = self._find_rule(op_type, domain)
        if found is None:
            return
        node_path = _join(path, node.name or f"{op_type}#{index}")
        if found == "":
            self.problem(
                node_path,
                op_type,
                "opset",
                f"domain '{domain or 'ai.onnx'}' is not in the model's opset_import",
                "an opset_import entry for the node's domain",
            )
            return
        opset, rule = found  # type: ignore[misc]
        in_types = self._input_types(node, scope, node_path, check=True)
        outputs: Sequence[TypeProto | None] | None
        try:
            outputs = rule(node, in_types, opset)
        except RuleError as exc:
            for issue in exc.issues:
                self.problem(node_path, op_type, issue.subject, issue.found, issue.expected)
            outputs = None
        names = node.output
        n_out = len(names)
        if outputs is not None and len(outputs) != n_out:
            self.problem(
                node_path,
                op_type,
                "inference rule",
                f"returned {len(outputs)} type(s) for {n_out} output(s)",
                "one type (or None) per output",
            )
            outputs = None
        result_type = None
        if outputs is not None:
            for k in range(n_out):
                name = names[k]
                inferred = outputs[k]
                if not name or inferred is None:
                    continue
                merged = self._assign(scope, locator, name, inferred, declared.get(name), True)
                if merged is None:
                    self.problem(
                        node_path,
                        op_type,
                        f"output '{name}' type",
                        f"declared as {format_type(declared.get(name))}",
                        f"a type compatible with the inferred {format_type(inferred)}",
                    )
                elif k == 0:
                    result_type = merged
        if self.want_typings and op_type in ARG_REDUCE_OPS and domain == "":
            in_type = in_types[0] if in_types else None
            self.typings.append(
                ArgMaxTyping(node_path, _copy(in_type), _copy(result_type), op_type)
            )

    def _call_node(
        self,
        node: NodeProto,
        index: int,
        key: FunctionKey,
        scope: _Scope,
        path: str,
        locator: Locator,
    ) -> None:
        self.rule_nodes += 1
        node_path = _join(path, _label(node, index))
        in_types = self._input_types(node, scope, node_path, check=False)
        run = self.engine.run_function(key, in_types, node.attribute)
        self.calls.append((key, node_path, run))
        for name, inferred in zip(node.output, run.outputs, strict=False):
            if name and inferred is not None:
                self._assign(scope, locator, name, inferred, None, always=False)

    def _assign(
        self,
        scope: _Scope,
        locator: Locator,
        name: str,
        inferred: TypeProto,
        declared: TypeProto | None,
        always: bool,
    ) -> TypeProto | None:
        """Write the type of ``name``; returns the merged type, or None on a conflict."""
        if declared is None:
            merged = inferred
        else:
            merged, conflict = merge_types(inferred, declared)
            if conflict is not None:
                return None
        target = scope.outputs.get(name)
        if target is None:
            target = scope.value_info.get(name)
        if target is None:
            old = None
        else:
            old = target.type if target.HasField("type") else None
            if old is not None and old == merged:
                if self.record:
                    self.assignments[(locator, name)] = merged
                return merged
        if adds_information(merged, old):
            self.gained = True
        elif not always:
            return merged
        if target is None:
            target = scope.graph.value_info.add()
            target.name = name
            scope.value_info[name] = target
        target.type.CopyFrom(merged)
        if self.record:
            self.assignments[(locator, name)] = merged
        return merged


def _resolve_refs(node: NodeProto, env: dict[str, AttributeProto]) -> None:
    """Replace, in place, attributes referring to function attributes by their values."""
    changed = False
    for attr in node.attribute:
        if attr.ref_attr_name:
            changed = True
        elif attr.type == _GRAPH:
            for inner in attr.g.node:
                _resolve_refs(inner, env)
        elif attr.type == _GRAPHS:
            for g in attr.graphs:
                for inner in g.node:
                    _resolve_refs(inner, env)
    if not changed:
        return
    resolved = []
    for attr in node.attribute:
        copy = AttributeProto()
        if attr.ref_attr_name:
            value = env.get(attr.ref_attr_name)
            if value is None:
                continue  # not given by the call and no default: the attribute is absent
            copy.CopyFrom(value)
            copy.name = attr.name
        else:
            copy.CopyFrom(attr)
        resolved.append(copy)
    del node.attribute[:]
    node.attribute.extend(resolved)


class _Engine:
    """State shared by the inference of a model and of its functions' bodies."""

    def __init__(self, model: ModelProto, typings: bool) -> None:
        self.model = model
        self.want_typings = typings
        self.model_opsets: dict[str, int] = {}
        for entry in model.opset_import:
            self.model_opsets.setdefault(normalize_domain(entry.domain), entry.version)
        self.functions: dict[FunctionKey, onnx.FunctionProto] = {
            (normalize_domain(f.domain), f.name, f.overload): f for f in model.functions
        }
        self.watched_ops = frozenset(
            {op for _, op in _RULES} | {name for _, name, _ in self.functions} | _SUBGRAPH_OPS
        )
        # Whether nodes of a non-standard domain may occur (they may hold subgraphs).
        self.any_custom_domain = bool(self.functions) or any(
            e.domain not in _STANDARD_DOMAINS for e in model.opset_import
        )
        self._cache: dict[tuple, _FunctionRun] = {}
        self._active: set[FunctionKey] = set()

    def run(
        self,
        model: ModelProto,
        opsets: dict[str, int],
        prefix: str,
        record: bool,
    ) -> tuple[_Walk, ModelProto]:
        """onnx's pass, then registered rules; repeated while the rules teach onnx more."""
        result = _onnx_pass(model)
        iteration = 0
        while True:
            walk = _Walk(self, opsets, record)
            walk.graph(model.graph, result.graph, None, prefix, ())
            iteration += 1
            if not walk.gained or iteration > walk.rule_nodes:
                return walk, result
            result = _onnx_pass(result)

    def run_function(
        self,
        key: FunctionKey,
        in_types: Sequence[TypeProto | None],
        call_attributes: Sequence[AttributeProto],
    ) -> _FunctionRun:
        """Infer the body of function ``key`` for one call (cached per call signature)."""
        function = self.functions[key]
        env = {a.name: a for a in function.attribute_proto}
        env.update((a.name, a) for a in call_attributes)
        names = sorted(set(function.attribute) | {a.name for a in function.attribute_proto})
        cache_key = (
            key,
            tuple(b"" if t is None else t.SerializeToString(deterministic=True) for t in in_types),
            tuple(env[n].SerializeToString() if n in env else b"" for n in names),
        )
        cached = self._cache.get(cache_key)
        if cached is not None:
            return cached
        label = _function_label(key)
        n_out = len(function.output)
        if key in self._active:
            problem = Problem(
                label, "", "function", "calls itself (directly or indirectly)", "no recursion"
            )
            return _FunctionRun([None] * n_out, [problem], [], [])
        self._active.add(key)
        try:
            body, opsets = self._function_model(function, in_types, env)
            try:
                walk, result = self.run(body, opsets, label, record=True)
            except ShapeInferenceError as exc:
                problems = [
                    p if p.node != _MODEL else Problem(label, *astuple(p)[1:]) for p in exc.problems
                ]
                run = _FunctionRun([None] * n_out, problems, [], [])
            else:
                outputs = [_known(o) for o in result.graph.output]
                run = _FunctionRun(
                    outputs, walk.problems, walk.typings, walk.calls, walk.assignments
                )
        finally:
            self._active.discard(key)
        self._cache[cache_key] = run
        return run

    def _function_model(
        self,
        function: onnx.FunctionProto,
        in_types: Sequence[TypeProto | None],
        env: dict[str, AttributeProto],
    ) -> tuple[ModelProto, dict[str, int]]:
        opsets = dict(self.model_opsets)
        for entry in function.opset_import:
            opsets[normalize_domain(entry.domain)] = entry.version
        graph = GraphProto(name=f"{function.name}_body")
        graph.node.extend(function.node)
        for node in graph.node:
            _resolve_refs(node, env)
        for k, name in enumerate(function.input):
            vi = graph.input.add()
            vi.name = name
            if k < len(in_types) and in_types[k] is not None:
                vi.type.CopyFrom(in_types[k])
        for name in function.output:
            graph.output.add().name = name
        graph.value_info.extend(function.value_info)
        model = ModelProto(
            ir_version=max(self.model.ir_version, onnx.IR_VERSION_2021_7_30),
            graph=graph,
            opset_import=[onnx.helper.make_opsetid(d, v) for d, v in opsets.items()],
        )
        model.functions.extend(self.model.functions)
        return model, opsets

    def finish_functions(
        self, result: ModelProto, calls: list[tuple[FunctionKey, str, _FunctionRun]]
    ) -> tuple[list[Problem], list[ArgMaxTyping]]:
        """Gather every call of every function, generalize, write value_info, report."""
        runs: dict[FunctionKey, list[tuple[str | None, _FunctionRun]]] = defaultdict(list)
        pending: deque[tuple[FunctionKey, str | None, _FunctionRun]] = deque(calls)
        seen: set[tuple[FunctionKey, str | None, int]] = set()
        while True:
            while pending:
                key, call_path, run = pending.popleft()
                marker = (key, call_path, id(run))
                if marker in seen:
                    continue
                seen.add(marker)
                runs[key].append((call_path, run))
                pending.extend(run.calls)
            uncalled = [k for k in self.functions if k not in runs]
            if not uncalled:
                break
            function = self.functions[uncalled[0]]
            run = self.run_function(uncalled[0], [None] * len(function.input), [])
            pending.append((uncalled[0], None, run))

        problems: list[Problem] = []
        typings: list[ArgMaxTyping] = []
        result_functions = {
            (normalize_domain(f.domain), f.name, f.overload): f for f in result.functions
        }
        for key in self.functions:
            entries = runs[key]
            problems.extend(_merge_problems(entries))
            typings.extend(_merge_typings(entries))
            _write_function_types(result_functions[key], entries)
        return problems, typings


def _merge_problems(entries: list[tuple[str | None, _FunctionRun]]) -> list[Problem]:
    where: dict[Problem, list[str]] = {}
    for call_path, run in entries:
        for problem in run.problems:
            paths = where.setdefault(problem, [])
            if call_path is not None and call_path not in paths:
                paths.append(call_path)
    n_calls = len({call_path for call_path, _ in entries})
    merged = []
    for problem, paths in where.items():
        if paths and len(paths) < n_calls:
            found = f"{problem.found} (when called from {', '.join(paths)})"
            problem = Problem(
                problem.node, problem.op_type, problem.subject, found, problem.expected
            )
        merged.append(problem)
    return merged


def _merge_typings(entries: list[tuple[str | None, _FunctionRun]]) -> list[ArgMaxTyping]:
    by_path: dict[str, list[ArgMaxTyping]] = {}
    for _, run in entries:
        for typing in run.typings:
            by_path.setdefault(typing.path, []).append(typing)
    return [
        ArgMaxTyping(
            path,
            generalize_types([t.input_type for t in found]),
            generalize_types([t.output_type for t in found]),
            found[0].op_type,
        )
        for path, found in by_path.items()
    ]


def _find_graph(function: onnx.FunctionProto, locator: Locator) -> GraphProto | None:
    container: onnx.FunctionProto | GraphProto = function
    for node_index, attr_name, k in locator:
        if node_index >= len(container.node):
            return None
        attrs = [a for a in container.node[node_index].attribute if a.name == attr_name]
        if not attrs:
            return None
        attr = attrs[0]
        if k < 0:
            if attr.type != _GRAPH:
                return None
            container = attr.g
        else:
            if attr.type != _GRAPHS or k >= len(attr.graphs):
                return None
            container = attr.graphs[k]
    return container  # type: ignore[return-value]


def _write_function_types(
    function: onnx.FunctionProto, entries: list[tuple[str | None, _FunctionRun]]
) -> None:
    """Write the generalized types of registered-rule outputs into the function proto."""
    n_runs = len(entries)
    grouped: dict[tuple[Locator, str], list[TypeProto]] = {}
    for _, run in entries:
        for where, type_proto in run.assignments.items():
            grouped.setdefault(where, []).append(type_proto)
    for (locator, name), types in grouped.items():
        general = generalize_types(types) if len(types) == n_runs else None
        if general is None:
            continue
        container = _find_graph(function, locator) if locator else function
        if container is None:
            continue
        targets = [vi for vi in container.value_info if vi.name == name]
        if locator:
            targets = [vi for vi in container.output if vi.name == name] + targets
        target = targets[0] if targets else container.value_info.add()
        target.name = name
        target.type.CopyFrom(general)


def _check_model(model: ModelProto) -> None:
    if not isinstance(model, ModelProto):
        raise TypeError(f"expected an onnx.ModelProto, got {type(model).__name__}")
    if not model.HasField("graph"):
        raise ShapeInferenceError(
            [Problem(_MODEL, "", "graph", "missing", "a ModelProto with a graph")]
        )


def infer(model: ModelProto, typings: bool = True) -> tuple[ModelProto, list[ArgMaxTyping]]:
    """Infer types; return the annotated copy of ``model`` and the types of every ArgMax
    and ArgMin node (main graph, subgraphs, then model-local functions).

    With ``typings=False`` the list is empty.
    """
    _check_model(model)
    engine = _Engine(model, typings)
    walk, result = engine.run(model, engine.model_opsets, "", record=False)
    problems = list(walk.problems)
    typings_found = list(walk.typings)
    if engine.functions:
        more_problems, more_typings = engine.finish_functions(result, walk.calls)
        problems.extend(more_problems)
        typings_found.extend(more_typings)
    if problems:
        raise ShapeInferenceError(problems)
    return result, typings_found


def infer_shapes(model: ModelProto) -> ModelProto:
    """Return a copy of ``model`` in which every value has the type inferred for it.

    ArgMax and ArgMin outputs (and outputs of any operator with a registered rule) are
    typed by this package's rules, everywhere: main graph, ``If``/``Loop``/``Scan``
    bodies at any depth, and model-local functions. Other operators are typed by onnx's
    own shape inference. Types go into ``value_info``, or onto the graph's ``output``
    entry for graph outputs, as onnx does; inside a function, into the function's
    ``value_info``. ``model`` itself is never modified.

    Raises:
        ShapeInferenceError: listing every offending node (bad attribute, input type not
            allowed by the model's opset, axis out of range, missing input, conflict with
            a declared type...). No partial result is returned.
        TypeError: ``model`` is not an ``onnx.ModelProto``.
    """
    return infer(model, typings=False)[0]


def infer_argmax_argmin_types(model: ModelProto) -> list[ArgMaxTyping]:
    """Infer types like :func:`infer_shapes` and return the types of each ArgMax node and
    each ArgMin node of the default ONNX domain, one record per node.

    Nodes of the main graph and of its subgraphs come first, in model order, then those
    of model-local functions; each record's ``op_type`` says which operator it is. Nodes
    inside functions called with different input types get the generalized types
    (dimensions that differ between calls are unknown).

    Raises:
        ShapeInferenceError, TypeError: as :func:`infer_shapes`.
    """
    return infer(model)[1]


def infer_argmax_types(model: ModelProto) -> list[ArgMaxTyping]:
    """Infer types like :func:`infer_shapes` and return each ArgMax node's types.

    Only ArgMax nodes are listed (ArgMin nodes are typed and checked all the same, and
    listed by :func:`infer_argmax_argmin_types`), in the order of that function. Nodes
    inside functions called with different input types get the generalized types
    (dimensions that differ between calls are unknown).

    Raises:
        ShapeInferenceError, TypeError: as :func:`infer_shapes`.
    """
    return [t for t in infer(model)[1] if t.op_type == "ArgMax"]
