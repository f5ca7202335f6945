"""Agreement with onnx on a generated corpus, one for ArgMax and one for ArgMin.

Hundreds of models per operator (deterministic seed): opsets 1, 11, 12 and 13 (and a
few others), concrete, symbolic and unknown dims, unknown rank, the operator chained
through other operators, in If branches and in model-local functions, declared output
types. On every model where ``onnx.shape_inference.infer_shapes(strict_mode=True,
check_type=True)`` succeeds, the output types of the ArgMax (ArgMin) nodes must equal
onnx's, except that a dim onnx names ``unk__N`` may be left unknown; every other value
keeps onnx's type.
"""

from __future__ import annotations

import random

import onnx
import pytest
from onnx import TensorProto, helper

import shape_inference as si

SEED = 20_240_601
# One corpus per operator, each from its own seed.
SEEDS = {"ArgMax": SEED, "ArgMin": SEED + 1}
N_MODELS = 480
OPSETS = (1, 1, 11, 11, 12, 12, 13, 13, 13, 9, 18)
SYMBOLS = ("N", "B", "S", "T")


def allowed_types(opset: int, op_type: str) -> list[int]:
    (constraint,) = onnx.defs.get_schema(op_type, opset).type_constraints
    names = (s.removeprefix("tensor(").removesuffix(")") for s in constraint.allowed_type_strs)
    return sorted(TensorProto.DataType.Value(n.upper()) for n in names)


class Builder:
    """Builds one random chain of nodes from a value of known (or unknown) rank; its
    reducing nodes are all of ``op_type`` (ArgMax or ArgMin)."""

    def __init__(self, rng: random.Random, opset: int, prefix: str, op_type: str) -> None:
        self.rng = rng
        self.opset = opset
        self.prefix = prefix
        self.op_type = op_type
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.argmax_outputs: list[str] = []
        self.count = 0

    def name(self, what: str) -> str:
        self.count += 1
        return f"{self.prefix}{what}_{self.count}"

    def argmax(self, value: str, rank: int | None) -> tuple[str, int | None]:
        rng = self.rng
        attrs = {}
        if rank is None:
            if rng.random() < 0.5:
                attrs["axis"] = rng.choice([0, -1])
        elif rng.random() < 0.8:
            attrs["axis"] = rng.randrange(-rank, rank)
        keep = rng.choice([None, 0, 1, 1])
        if keep == 0 and rank is not None and rank < 2:
            keep = 1
        if keep is not None:
            attrs["keepdims"] = keep
        if self.opset >= 12 and rng.random() < 0.3:
            attrs["select_last_index"] = rng.choice([0, 1])
        out = self.name("am")
        self.nodes.append(helper.make_node(self.op_type, [value], [out], name=out, **attrs))
        self.argmax_outputs.append(out)
        new_rank = None if rank is None else (rank if keep != 0 else rank - 1)
        return out, new_rank

    def other(self, value: str, rank: int | None, elem: int) -> tuple[str, int | None, int]:
        """One operator other than ArgMax/ArgMin valid for the opset, rank and element type."""
        rng = self.rng
        out = self.name("op")
        choices = ["Identity"] + (["Cast", "Abs"] if self.opset >= 9 else [])
        if rank is not None:
            choices.append("Transpose")
            if self.opset >= 11:  # negative axes for these from opset 11
                choices += ["Unsqueeze", "Flatten", "Concat", "Reshape"]
        op = rng.choice(choices)
        if op == "Cast":
            elem = rng.choice(
                [TensorProto.FLOAT, TensorProto.INT32, TensorProto.FLOAT16, TensorProto.UINT8]
            )
            node = helper.make_node("Cast", [value], [out], to=elem)
        elif op == "Transpose":
            perm = list(range(rank))
            rng.shuffle(perm)
            node = helper.make_node("Transpose", [value], [out], perm=perm)
        elif op == "Unsqueeze":
            axis = rng.randrange(-(rank + 1), rank + 1)
            if self.opset >= 13:
                axes = self.name("axes")
                self.initializers.append(helper.make_tensor(axes, TensorProto.INT64, [1], [axis]))
                node = helper.make_node("Unsqueeze", [value, axes], [out])
            else:
                node = helper.make_node("Unsqueeze", [value], [out], axes=[axis])
            rank += 1
        elif op == "Flatten":
            node = helper.make_node("Flatten", [value], [out], axis=rng.randrange(0, rank + 1))
            rank = 2
        elif op == "Concat":
            node = helper.make_node("Concat", [value, value], [out], axis=rng.randrange(rank))
        elif op == "Reshape":
            shape = self.name("shape")
            self.initializers.append(helper.make_tensor(shape, TensorProto.INT64, [2], [0, -1]))
            node = helper.make_node("Reshape", [value, shape], [out])
            rank = 2
        else:
            node = helper.make_node(op, [value], [out])
        node.name = out
        self.nodes.append(node)
        return out, rank, elem

    def chain(self, value: str, rank: int | None, elem: int) -> str:
        """ArgMax (ArgMin) first, then random steps, always ending with one."""
        value, rank = self.argmax(value, rank)
        elem = TensorProto.INT64
        for _ in range(self.rng.randrange(0, 4)):
            if self.rng.random() < 0.6:
                value, rank, elem = self.other(value, rank, elem)
            value, rank = self.argmax(value, rank)
            elem = TensorProto.INT64
        return value


def random_dims(rng: random.Random) -> list | None:
    if rng.random() < 0.12:
        return None
    dims = []
    for _ in range(rng.randrange(1, 5)):
        r = rng.random()
        dims.append(rng.randrange(1, 7) if r < 0.5 else rng.choice(SYMBOLS) if r < 0.8 else None)
    return dims


def random_model(rng: random.Random, op_type: str) -> tuple[onnx.ModelProto, str]:
    opset = rng.choice(OPSETS)
    elem = rng.choice(allowed_types(opset, op_type))
    dims = random_dims(rng)
    rank = None if dims is None else len(dims)
    inputs = [helper.make_tensor_value_info("x", elem, dims)]
    kind = rng.choices(["plain", "if", "function"], weights=[0.7, 0.15, 0.15])[0]
    functions = []
    builder = Builder(rng, opset, "", op_type)
    if kind == "plain":
        final = builder.chain("x", rank, elem)
        nodes = builder.nodes
    elif kind == "if":
        branches = []
        for branch in ("then", "else"):
            sub = Builder(rng, opset, f"{branch}_", op_type)
            out = sub.chain("x", rank, elem)
            branches.append(
                helper.make_graph(
                    sub.nodes,
                    branch,
                    [],
                    [helper.make_tensor_value_info(out, TensorProto.INT64, None)],
                    initializer=sub.initializers,
                )
            )
            builder.argmax_outputs += sub.argmax_outputs
        inputs.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
        final = "y"
        nodes = [
            helper.make_node(
                "If", ["c"], [final], name="if_0", then_branch=branches[0], else_branch=branches[1]
            )
        ]
    else:
        sub = Builder(rng, opset, "f_", op_type)
        out = sub.chain("a", rank, elem)
        if sub.initializers:  # functions have no initializers: use Constant nodes
            constants = [
                helper.make_node("Constant", [], [t.name], value=t) for t in sub.initializers
            ]
            sub.nodes[:0] = constants
        functions.append(
            helper.make_function(
                "local", "Chain", ["a"], [out], sub.nodes, [helper.make_opsetid("", opset)]
            )
        )
        final = "y"
        nodes = [helper.make_node("Chain", ["x"], [final], domain="local", name="call_0")]
    graph = helper.make_graph(
        nodes,
        f"corpus_{kind}",
        inputs,
        [helper.make_tensor_value_info(final, TensorProto.INT64, None)],
        initializer=builder.initializers,
    )
    opsets = [helper.make_opsetid("", opset)] + (
        [helper.make_opsetid("local", 1)] if functions else []
    )
    model = helper.make_model(graph, opset_imports=opsets, functions=functions)
    model.ir_version = 8
    return model, kind


def declare_output(rng: random.Random, model: onnx.ModelProto, inferred: onnx.TypeProto) -> None:
    """Declare the graph output with a type compatible with onnx's inferred one."""
    declared = model.graph.output[0].type
    declared.CopyFrom(inferred)
    if rng.random() < 0.3:
        declared.tensor_type.ClearField("shape")
        return
    for dim in declared.tensor_type.shape.dim:
        r = rng.random()
        if r < 0.3:
            dim.Clear()
        elif r < 0.5:
            dim.dim_param = rng.choice(["D", "E"])


def all_types(graph: onnx.GraphProto, prefix: str = "") -> dict[str, onnx.TypeProto]:
    """name -> type for the graph and its subgraphs (names are unique in the corpus)."""
    types = {v.name: v.type for v in (*graph.value_info, *graph.output)}
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                types.update(all_types(attr.g))
    return types


def same_type(ours: onnx.TypeProto, theirs: onnx.TypeProto) -> bool:
    a, b = ours.tensor_type, theirs.tensor_type
    if a.elem_type != b.elem_type or a.HasField("shape") != b.HasField("shape"):
        return False
    if len(a.shape.dim) != len(b.shape.dim):
        return False
    for x, y in zip(a.shape.dim, b.shape.dim, strict=True):
        if y.dim_param.startswith("unk__") and not x.HasField("dim_value") and not x.dim_param:
            continue
        if x != y:
            return False
    return True


def corpus(op_type: str) -> list[tuple[onnx.ModelProto, str]]:
    rng = random.Random(SEEDS[op_type])
    models = []
    for _ in range(N_MODELS):
        model, kind = random_model(rng, op_type)
        if kind == "plain" and rng.random() < 0.35:
            try:
                inferred = onnx.shape_inference.infer_shapes(model, True, True).graph.output[0]
            except onnx.shape_inference.InferenceError:
                pass
            else:
                declare_output(rng, model, inferred.type)
        models.append((model, kind))
    return models


@pytest.fixture(scope="module", params=sorted(SEEDS))
def op_type(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def checked_corpus(op_type):
    results = []
    for model, kind in corpus(op_type):
        try:
            theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
            continue
        results.append((model, kind, theirs))
    return results


def test_corpus_is_mostly_valid_and_varied(checked_corpus, op_type):
    assert len(checked_corpus) >= 0.9 * N_MODELS
    other = "ArgMin" if op_type == "ArgMax" else "ArgMax"
    for model, _, _ in checked_corpus:
        ops = {n.op_type for g in (model.graph, *model.functions) for n in _nodes(g)}
        assert op_type in ops and other not in ops
    kinds = [kind for _, kind, _ in checked_corpus]
    assert kinds.count("if") >= 40 and kinds.count("function") >= 40
    opsets = {m.opset_import[0].version for m, _, _ in checked_corpus}
    assert {1, 11, 12, 13} <= opsets
    ranks_unknown = sum(
        not m.graph.input[0].type.tensor_type.HasField("shape") for m, _, _ in checked_corpus
    )
    assert ranks_unknown >= 20


def test_types_agree_with_onnx(checked_corpus, op_type):
    compared = 0
    for model, kind, theirs_model in checked_corpus:
        ours_model = si.infer_shapes(model)
        ours, theirs = all_types(ours_model.graph), all_types(theirs_model.graph)
        reduced = {o for n in _nodes(model.graph) if n.op_type == op_type for o in n.output}
        for name, their_type in theirs.items():
            if name in reduced:
                assert same_type(ours[name], their_type), (kind, name, model)
                compared += 1
            else:
                assert ours[name] == their_type, (kind, name)
        if kind == "function":
            (function,) = ours_model.functions
            (out,) = function.output
            body_types = {v.name: v.type for v in function.value_info}
            assert same_type(body_types[out], theirs[model.graph.output[0].name]), model
            compared += 1
    assert compared >= 1000


def test_typings_agree_with_onnx(checked_corpus, op_type):
    """``infer_argmax_argmin_types`` lists every ArgMax (ArgMin) node once, with its
    operator and onnx's input and output types (for nodes in functions, where onnx writes
    no body types: the one whose output is the function's)."""
    compared = 0
    for model, kind, theirs_model in checked_corpus:
        theirs = all_types(theirs_model.graph)
        theirs.update((v.name, v.type) for v in theirs_model.graph.input)
        if kind == "function":
            (function,) = model.functions
            nodes = {f"local.Chain/{n.name}": n for n in function.node if n.op_type == op_type}
            theirs[function.input[0]] = theirs[model.graph.node[0].input[0]]
            theirs[function.output[0]] = theirs[model.graph.output[0].name]
        else:
            nodes = {}
            for path, node in _paths(model.graph):
                if node.op_type == op_type:
                    nodes[path] = node
        typings = si.infer_argmax_argmin_types(model)
        assert sorted(t.path for t in typings) == sorted(nodes), model
        for typing in typings:
            assert typing.op_type == op_type
            node = nodes[typing.path]
            (output,) = node.output
            if output not in theirs:
                continue  # inside a function body
            assert same_type(typing.output_type, theirs[output]), (typing, model)
            (data,) = node.input
            if data in theirs:
                assert same_type(typing.input_type, theirs[data]), (typing, model)
            compared += 1
    assert compared >= 1000


def _paths(graph: onnx.GraphProto, prefix: str = ""):
    """(path, node) of the nodes of ``graph`` and its subgraphs, paths as the package
    names them (node name, else ``<op_type>#<index>``; ``/attribute`` for subgraphs)."""
    for index, node in enumerate(graph.node):
        path = f"{prefix}{node.name or f'{node.op_type}#{index}'}"
        yield path, node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _paths(attr.g, f"{path}/{attr.name}/")


def _nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(attr.g)
