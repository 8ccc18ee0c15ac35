"""ONNX export: a traced graph written as an ONNX model another runtime can run.

    >>> import difflab.onnx
    >>> difflab.onnx.export(model, (x,), "model.onnx", opset_version=17)

ONNX is the graph exchange format of the deep-learning world: a file lists
*nodes* (``Conv``, ``Relu``, ``Gemm``, ...) reading and writing named
tensors, with the weights as *initializers*.  A static graph already is such
a list (:mod:`difflab.jit`), so exporting is one translation per line:
``v3 = relu(v2)`` becomes ``Relu(v2) -> v3``.  The model is traced once
(:func:`difflab.export.export`), its parameters become initializers, and
each primitive has a small translation below; a primitive with none is
refused by name.

Needs the ``onnx`` package (``pip install 'difflab[jit]'``); onnxruntime
runs the file (the tests compare its outputs with difflab's).  Two things to
know: onnxruntime accepts files up to some IR version only, so the file gets
the IR version of its opset rather than the newest onnx knows; and
onnxruntime has no float64 ``Conv`` on the CPU (export float32 models).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.export import export as export_program
from difflab.jit.graph import Graph, GraphError, Node, Ref

#: The IR version that goes with each opset (onnx.helper.VERSION_TABLE), so that a
#: runtime supporting the opset also reads the file.
_IR_FOR_OPSET = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}

MIN_OPSET = 13  # ReduceSum takes its axes as an input from 13 on; Softmax works on one axis


class ONNXExportError(GraphError):
    """A graph that cannot be written as ONNX (an operation with no ONNX equivalent)."""


def _require_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise ImportError("difflab.onnx needs the onnx package: pip install onnx "
                          "(or pip install 'difflab[jit]')") from None
    return onnx


class _Writer:
    """Collects ONNX nodes and initializers while the graph's lines are translated."""

    def __init__(self, onnx: Any, graph: Graph, opset: int) -> None:
        self.onnx, self.helper = onnx, onnx.helper
        self.graph, self.opset = graph, opset
        self.nodes: list = []
        self.initializers: list = []
        self.meta = graph.meta()
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"_{hint}{self.count}"

    def constant(self, value: Any, dtype: Any = None, hint: str = "const") -> str:
        """An initializer holding ``value`` (a number is made a 0-d array of ``dtype``)."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def add(self, op: str, inputs: Sequence[str], outputs: Sequence[str] | None = None,
            **attributes: Any) -> str:
        outputs = list(outputs) if outputs is not None else [self.fresh(op.lower())]
        self.nodes.append(self.helper.make_node(op, list(inputs), outputs, **attributes))
        return outputs[0]

    def operand(self, value: Any, dtype: np.dtype) -> str:
        """The ONNX name of an argument: a value of the graph, or a number as a constant."""
        if isinstance(value, Ref):
            return value.name
        if isinstance(value, (bool, int, float)):
            return self.constant(value, dtype)
        raise ONNXExportError(f"an argument {value!r} has no ONNX form")


def _pads(padding: Sequence[int]) -> list[int]:
    return [int(p) for p in padding] * 2  # ONNX: begins of each axis, then ends


def _translate(w: _Writer, node: Node) -> None:
    """Write the ONNX nodes computing ``node``; ONNXExportError if there is no translation."""
    name, op, p = node.name, node.op_name, node.params
    dtype = np.dtype(node.dtype)
    args = [w.operand(a, dtype) if a is not None else "" for a in node.args]
    simple = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
              "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs",
              "tanh": "Tanh", "sigmoid": "Sigmoid", "relu": "Relu", "sin": "Sin",
              "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
              "sinh": "Sinh", "cosh": "Cosh", "erf": "Erf", "matmul": "MatMul",
              "maximum": "Max", "minimum": "Min", "clone": "Identity"}
    if op in simple:
        w.add(simple[op], args, [name])
    elif op == "linear":
        x, weight = node.args[0], node.args[1]
        if len(w.meta[x.name][0]) == 2:  # y = x Wᵀ + b: ONNX's Gemm with transB
            w.add("Gemm", [a for a in args if a], [name], transB=1)
        else:
            t = w.add("Transpose", [weight.name], perm=[1, 0])
            y = w.add("MatMul", [args[0], t], [name] if len(args) < 3 or not args[2] else None)
            if len(args) > 2 and args[2]:
                w.add("Add", [y, args[2]], [name])
    elif op == "conv2d":
        w.add("Conv", [a for a in args if a], [name], strides=list(p["stride"]),
              pads=_pads(p["padding"]), dilations=list(p["dilation"]), group=int(p["groups"]))
    elif op == "max_pool2d":
        w.add("MaxPool", args[:1], [name], kernel_shape=list(p["kernel"]),
              strides=list(p["stride"]), pads=_pads(p["padding"]),
              dilations=list(p["dilation"]))
    elif op == "avg_pool2d":
        w.add("AveragePool", args[:1], [name], kernel_shape=list(p["kernel"]),
              strides=list(p["stride"]), pads=_pads(p["padding"]), count_include_pad=1)
    elif op == "reshape":
        shape = w.constant(np.array(node.shape, dtype=np.int64), hint="shape")
        w.add("Reshape", [args[0], shape], [name])
    elif op == "permute":
        w.add("Transpose", args[:1], [name], perm=[int(a) for a in p["axes"]])
    elif op in ("softmax", "log_softmax"):
        w.add("Softmax" if op == "softmax" else "LogSoftmax", args[:1], [name],
              axis=int(p["dim"]))
    elif op == "gelu":
        if p.get("approximate", "none") != "none":
            raise ONNXExportError(f"{name} = gelu(approximate={p['approximate']!r}): only "
                                  f"the exact GELU is exported")
        if w.opset >= 20:
            w.add("Gelu", args[:1], [name])
        else:  # GELU(x) = x Φ(x) = x (1 + erf(x / √2)) / 2, with the opset's Erf
            scaled = w.add("Div", [args[0], w.constant(np.sqrt(2.0), dtype)])
            one_plus = w.add("Add", [w.add("Erf", [scaled]), w.constant(1.0, dtype)])
            half = w.add("Mul", [args[0], w.constant(0.5, dtype)])
            w.add("Mul", [half, one_plus], [name])
    elif op == "sum":
        axis, keep = p.get("axis"), int(bool(p.get("keepdims", False)))
        rank = len(w.meta[node.args[0].name][0])
        axes = (list(range(rank)) if axis is None else
                [int(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))])
        w.add("ReduceSum", [args[0], w.constant(np.array(axes, dtype=np.int64), hint="axes")],
              [name], keepdims=keep)
    elif op == "to_dtype":
        w.add("Cast", args[:1], [name], to=int(w.helper.np_dtype_to_tensor_dtype(dtype)))
    elif op == "expand":
        shape = w.constant(np.array(node.shape, dtype=np.int64), hint="shape")
        w.add("Expand", [args[0], shape], [name])
    else:
        raise ONNXExportError(
            f"cannot export {name} = {op}(...) to ONNX: the primitive {op!r} has no ONNX "
            f"translation here. Exportable: {', '.join(sorted(EXPORTABLE))}."
        )


#: The primitives :func:`export` translates.
EXPORTABLE = frozenset({
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "tanh", "sigmoid",
    "relu", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf", "matmul",
    "maximum", "minimum", "clone", "linear", "conv2d", "max_pool2d", "avg_pool2d", "reshape",
    "permute", "softmax", "log_softmax", "gelu", "sum", "to_dtype", "expand",
})


def graph_to_onnx(graph: Graph, state: dict, opset_version: int = 17) -> Any:
    """The ``onnx.ModelProto`` of a forward graph; parameters and constants as initializers."""
    onnx = _require_onnx()
    if not MIN_OPSET <= opset_version <= max(_IR_FOR_OPSET):
        raise ValueError(f"opset_version must be between {MIN_OPSET} and "
                         f"{max(_IR_FOR_OPSET)}, got {opset_version}")
    unknown = sorted({n.op_name for n in graph.nodes} - EXPORTABLE)
    if unknown:  # (named before anything is written: every line that cannot go)
        lines = [f"{n.name} = {n.op_name}(...)" for n in graph.nodes if n.op_name in unknown]
        raise ONNXExportError(
            f"cannot export graph {graph.name} to ONNX: no ONNX translation for "
            f"{', '.join(repr(u) for u in unknown)} (at {'; '.join(lines[:5])}). "
            f"Exportable primitives: {', '.join(sorted(EXPORTABLE))}.")
    w = _Writer(onnx, graph, opset_version)
    helper = onnx.helper

    def info(name: str, shape: Sequence[int], dtype: Any) -> Any:
        return helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape))

    inputs = []
    for i in graph.inputs:
        if i.kind == "input":
            inputs.append(info(i.name, i.shape, i.dtype))
        else:  # parameters (the model's weights now) and constants: initializers
            value = graph.constants[i.name] if i.kind == "constant" else state[i.name]
            w.initializers.append(onnx.numpy_helper.from_array(
                np.ascontiguousarray(backend.to_numpy(value)), i.name))
    for node in graph.nodes:
        _translate(w, node)
    outputs = []
    for k, o in enumerate(graph.outputs):
        if not isinstance(o, Ref):
            raise ONNXExportError(f"output {k} of graph {graph.name} is the Python value "
                                  f"{o!r}, not a tensor: ONNX outputs are tensors")
        shape, dtype = w.meta[o.name]
        outputs.append(info(o.name, shape, dtype))
    model = helper.make_model(
        helper.make_graph(w.nodes, graph.name or "difflab", inputs, outputs, w.initializers),
        opset_imports=[helper.make_opsetid("", opset_version)], producer_name="difflab")
    model.ir_version = _IR_FOR_OPSET[opset_version]
    onnx.checker.check_model(model)
    return model


def export(model: Callable, args: Any, path: str | os.PathLike, opset_version: int = 17,
           passes: Sequence[str] = ("fold", "cse", "dce")) -> Any:
    """Trace ``model(*args)`` and write it to ``path`` as an ONNX file; returns the ModelProto.

    ``model`` is a module (its parameters become the file's initializers, at
    their values now) or a function of tensors; ``args`` the example inputs
    (one tensor or a tuple), whose shapes and dtypes the file keeps.  Put a
    module in ``eval()`` mode first (dropout off, batch norm with its running
    statistics), as for any export.  ``passes`` are applied to the graph
    first (constant folding leaves fewer lines to translate).
    """
    onnx = _require_onnx()
    program = export_program(model, args, passes=passes)
    proto = graph_to_onnx(program.graph, program.state_dict, opset_version)
    onnx.save(proto, os.fspath(path))
    return proto
