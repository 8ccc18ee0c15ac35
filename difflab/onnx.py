"""ONNX export: a traced graph written as an ONNX model another runtime can run.

.. code-block:: python

    import difflab.onnx
    difflab.onnx.export(model, (x,), "model.onnx", opset_version=17)

ONNX is the graph exchange format of the deep-learning world: a file lists
*nodes* (``Conv``, ``Relu``, ``Gemm``, ...) reading and writing named
tensors, with the weights as *initializers*.  A static graph already is such
a list (:mod:`difflab.jit`), so exporting is one translation per line:
``v3 = relu(v2)`` becomes ``Relu(v2) -> v3``.  The model is traced once
(:func:`difflab.export.export`), its parameters become initializers, and
each primitive has a small translation below; a primitive with none is
refused by name.

Needs the ``onnx`` package (``pip install 'difflab[jit]'``); onnxruntime
runs the file (the tests compare its outputs with difflab's; the rounded
divisions, ``fmod``, ``%``, ``//`` and ``div``'s rounding modes, bit for bit on
signed zeros, inf and nan).  Two things to
know: onnxruntime accepts files up to some IR version only, so the file gets
the IR version of its opset rather than the newest onnx knows; and
onnxruntime has no float64 ``Conv`` on the CPU (export float32 models).
"""

from __future__ import annotations

import enum
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
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
    """A graph that cannot be written as ONNX (an operation with no ONNX equivalent).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.onnx
    >>> from difflab.export import export
    >>> ep = export(lambda x: dl.cumsum(x, 0), (dl.ones(3),))
    >>> try:
    ...     dl.onnx.graph_to_onnx(ep.graph, ep.state_dict)
    ... except dl.onnx.ONNXExportError as error:
    ...     print(str(error)[:70])
    cannot export graph <lambda> to ONNX: no ONNX translation for 'cumsum'
    """


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


# ------------------------------------------------------------ the translations
#
# One function per primitive, ``(writer, node, args)``: ``args`` are the ONNX
# names of the node's arguments ("" for a None); it writes the nodes that
# compute ``node.name``.  TRANSLATIONS maps each primitive's name to its
# function (as autodidax's ``xla_translations``); what is exportable is its keys.


def _one_to_one(onnx_op: str) -> Callable[[_Writer, Node, list], None]:
    """The translation of a primitive that is one ONNX operator on the same arguments."""
    def translate(w: _Writer, node: Node, args: list) -> None:
        w.add(onnx_op, args, [node.name])

    translate.__doc__ = f"``{onnx_op}`` of the same arguments."
    return translate


def _linear(w: _Writer, node: Node, args: list) -> None:
    """y = x Wᵀ + b: ONNX's Gemm with transB for a matrix x, else Transpose, MatMul, Add."""
    x, weight = node.args[0], node.args[1]
    if len(w.meta[x.name][0]) == 2:
        w.add("Gemm", [a for a in args if a], [node.name], transB=1)
        return
    t = w.add("Transpose", [weight.name], perm=[1, 0])
    bias = args[2] if len(args) > 2 else ""
    y = w.add("MatMul", [args[0], t], None if bias else [node.name])
    if bias:
        w.add("Add", [y, bias], [node.name])


def _conv2d(w: _Writer, node: Node, args: list) -> None:
    """``Conv``; a setting the node does not hold takes the primitive's default."""
    p = node.params
    w.add("Conv", [a for a in args if a], [node.name], strides=list(p.get("stride", (1, 1))),
          pads=_pads(p.get("padding", (0, 0))), dilations=list(p.get("dilation", (1, 1))),
          group=int(p.get("groups", 1)))


def _max_pool2d(w: _Writer, node: Node, args: list) -> None:
    p = node.params
    w.add("MaxPool", args[:1], [node.name], kernel_shape=list(p["kernel"]),
          strides=list(p["stride"]), pads=_pads(p["padding"]), dilations=list(p["dilation"]))


def _avg_pool2d(w: _Writer, node: Node, args: list) -> None:
    p = node.params
    w.add("AveragePool", args[:1], [node.name], kernel_shape=list(p["kernel"]),
          strides=list(p["stride"]), pads=_pads(p["padding"]), count_include_pad=1)


def _to_shape(onnx_op: str) -> Callable[[_Writer, Node, list], None]:
    """``Reshape``/``Expand``: the node's own shape as the operator's second input."""
    def translate(w: _Writer, node: Node, args: list) -> None:
        shape = w.constant(np.array(node.shape, dtype=np.int64), hint="shape")
        w.add(onnx_op, [args[0], shape], [node.name])

    translate.__doc__ = f"``{onnx_op}`` to the node's shape."
    return translate


def _permute(w: _Writer, node: Node, args: list) -> None:
    w.add("Transpose", args[:1], [node.name], perm=[int(a) for a in node.params["axes"]])


def _softmax(onnx_op: str) -> Callable[[_Writer, Node, list], None]:
    def translate(w: _Writer, node: Node, args: list) -> None:
        w.add(onnx_op, args[:1], [node.name], axis=int(node.params["dim"]))

    translate.__doc__ = f"``{onnx_op}`` along ``dim``."
    return translate


def _gelu(w: _Writer, node: Node, args: list) -> None:
    """``Gelu`` from opset 20 on; before, GELU(x) = x Φ(x) = x (1 + erf(x / √2)) / 2."""
    approximate = node.params.get("approximate", "none")
    if approximate != "none":
        raise ONNXExportError(f"{node.name} = gelu(approximate={approximate!r}): only "
                              f"the exact GELU is exported")
    if w.opset >= 20:
        w.add("Gelu", args[:1], [node.name])
        return
    dtype = np.dtype(node.dtype)
    scaled = w.add("Div", [args[0], w.constant(np.sqrt(2.0), dtype)])
    one_plus = w.add("Add", [w.add("Erf", [scaled]), w.constant(1.0, dtype)])
    half = w.add("Mul", [args[0], w.constant(0.5, dtype)])
    w.add("Mul", [half, one_plus], [node.name])


def _columns(w: _Writer, x: str, lo: int, hi: int) -> str:
    """``x[..., lo:hi]``: ONNX's ``Slice`` on the last axis."""
    bounds = [w.constant(np.array([v], dtype=np.int64), hint="slice") for v in (lo, hi, -1)]
    return w.add("Slice", [x, *bounds])


def _gru_cell(w: _Writer, node: Node, args: list) -> None:
    """The GRU step's equations: r, z = σ(gᵢ + gₕ) on the first two thirds,
    n = tanh(gᵢₙ + r gₕₙ), h' = n + z (h - n)."""
    gi, gh, h = args[:3]
    hidden = w.meta[node.args[2].name][0][-1]
    rz = w.add("Sigmoid", [w.add("Add", [_columns(w, gi, 0, 2 * hidden),
                                         _columns(w, gh, 0, 2 * hidden)])])
    r, z = _columns(w, rz, 0, hidden), _columns(w, rz, hidden, 2 * hidden)
    gated = w.add("Mul", [r, _columns(w, gh, 2 * hidden, 3 * hidden)])
    n = w.add("Tanh", [w.add("Add", [_columns(w, gi, 2 * hidden, 3 * hidden), gated])])
    w.add("Add", [n, w.add("Mul", [z, w.add("Sub", [h, n])])], [node.name])


def _lstm_cell_state(w: _Writer, node: Node, args: list) -> None:
    """c' = σ(f) c + σ(i) tanh(g), the gates the quarters (i, f, g, o) of ``gates``."""
    gates, c = args[:2]
    hidden = w.meta[node.args[1].name][0][-1]
    i, f = (w.add("Sigmoid", [_columns(w, gates, k * hidden, (k + 1) * hidden)]) for k in (0, 1))
    g = w.add("Tanh", [_columns(w, gates, 2 * hidden, 3 * hidden)])
    w.add("Add", [w.add("Mul", [f, c]), w.add("Mul", [i, g])], [node.name])


def _lstm_hidden_state(w: _Writer, node: Node, args: list) -> None:
    """h' = σ(o) tanh(c'), ``o`` the last quarter of ``gates``."""
    gates, c = args[:2]
    hidden = w.meta[node.args[1].name][0][-1]
    o = w.add("Sigmoid", [_columns(w, gates, 3 * hidden, 4 * hidden)])
    w.add("Mul", [o, w.add("Tanh", [c])], [node.name])


def _sum(w: _Writer, node: Node, args: list) -> None:
    """``ReduceSum``, its axes an input (opset 13 on); every axis for ``axis=None``."""
    axis, keep = node.params.get("axis"), int(bool(node.params.get("keepdims", False)))
    rank = len(w.meta[node.args[0].name][0])
    axes = (list(range(rank)) if axis is None else
            [int(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))])
    w.add("ReduceSum", [args[0], w.constant(np.array(axes, dtype=np.int64), hint="axes")],
          [node.name], keepdims=keep)


def _to_dtype(w: _Writer, node: Node, args: list) -> None:
    to = int(w.helper.np_dtype_to_tensor_dtype(np.dtype(node.dtype)))
    w.add("Cast", args[:1], [node.name], to=to)


# The rounded divisions, as NumPy computes them (difflab's values, bit for bit: the signs
# of zeros, inf and nan included).  ONNX's ``Mod`` with ``fmod=1`` is C's fmod (the sign
# of the dividend, exact); with ``fmod=0``, integers only, Python's ``%``.  Floats are built
# from fmod as NumPy's ``npy_divmod`` does (``floor(a / b)`` would round 1 // 0.1 up to
# 10).  Each float result is a magnitude times a sign of ±1 decided from the operands:
# onnxruntime's ``Where`` does not keep a -0.0 it selects, ``Mul`` does.


def _is_integer(node: Node) -> bool:
    return np.dtype(node.dtype).kind in "iub"


def _zero(w: _Writer, node: Node) -> str:
    return w.constant(0, np.dtype(node.dtype), hint="zero")


def _negative(w: _Writer, node: Node, x: str) -> str:
    """Whether ``x``'s sign bit is set (-0.0 too: 1 / -0.0 is -inf)."""
    zero = _zero(w, node)
    reciprocal = w.add("Div", [w.constant(1, np.dtype(node.dtype), hint="one"), x])
    at_zero = w.add("And", [w.add("Equal", [x, zero]), w.add("Less", [reciprocal, zero])])
    return w.add("Or", [w.add("Less", [x, zero]), at_zero])


def _signed(w: _Writer, node: Node, magnitude: str, negative: str, out: str) -> None:
    """``out = magnitude · (-1 where negative, else 1)``: a zero keeps the sign."""
    dtype = np.dtype(node.dtype)
    sign = w.add("Where", [negative, w.constant(-1, dtype, hint="minus"),
                           w.constant(1, dtype, hint="plus")])
    w.add("Mul", [w.add("Abs", [magnitude]), sign], [out])


def _moves(w: _Writer, node: Node, b: str, mod: str) -> str:
    """Where fmod's result moves to Python's: ``mod != 0`` (nan too) and its sign is not
    the divisor's."""
    zero = _zero(w, node)
    nonzero = w.add("Not", [w.add("Equal", [mod, zero])])
    signs_differ = w.add("Xor", [w.add("Less", [b, zero]), w.add("Less", [mod, zero])])
    return w.add("And", [nonzero, signs_differ])


def _fmod(w: _Writer, node: Node, args: list) -> None:
    """``Mod`` with ``fmod=1``: C's remainder, the sign of the dividend (ints and floats)."""
    w.add("Mod", args, [node.name], fmod=1)


def _remainder(w: _Writer, node: Node, args: list) -> None:
    """Python's ``a % b``: ``Mod`` (``fmod=0``) for integers; for floats NumPy's
    ``remainder``: ``r = fmod(a, b)``, plus ``b`` where ``r`` is non-zero with the other
    sign; the result (a zero too) has the divisor's sign."""
    if _is_integer(node):
        w.add("Mod", args, [node.name], fmod=0)
        return
    a, b = args
    mod = w.add("Mod", [a, b], fmod=1)
    moved = w.add("Where", [_moves(w, node, b, mod), w.add("Add", [mod, b]), mod])
    _signed(w, node, moved, _negative(w, node, b), node.name)


def _quotient_negative(w: _Writer, node: Node, a: str, b: str) -> str:
    """The sign of ``a / b``, zeros and infinities included: the operands' signs differ."""
    return w.add("Xor", [_negative(w, node, a), _negative(w, node, b)])


def _floor_divide(w: _Writer, node: Node, args: list) -> None:
    """``a // b``.  Integers: ``Div`` (rounded towards 0), one less where the remainder
    moves (see ``_moves``).  Floats, NumPy's: ``q = (a - fmod(a, b)) / b``, one less
    where the remainder moves, snapped to the nearest integer, with the sign of ``a / b``;
    ``b = 0`` gives ``a / b``."""
    a, b = args
    if _is_integer(node):
        fix = w.add("Cast", [_moves(w, node, b, w.add("Mod", [a, b], fmod=1))],
                    to=int(w.helper.np_dtype_to_tensor_dtype(np.dtype(node.dtype))))
        w.add("Sub", [w.add("Div", [a, b]), fix], [node.name])
        return
    dtype = np.dtype(node.dtype)
    one = w.constant(1, dtype, hint="one")
    mod = w.add("Mod", [a, b], fmod=1)
    div = w.add("Div", [w.add("Sub", [a, mod]), b])
    div = w.add("Where", [_moves(w, node, b, mod), w.add("Sub", [div, one]), div])
    floor = w.add("Floor", [div])
    up = w.add("Greater", [w.add("Sub", [div, floor]), w.constant(0.5, dtype, hint="half")])
    snapped = w.add("Where", [up, w.add("Add", [floor, one]), floor])
    by_zero = w.add("Equal", [b, _zero(w, node)])
    magnitude = w.add("Where", [by_zero, w.add("Div", [a, b]), snapped])
    _signed(w, node, magnitude, _quotient_negative(w, node, a, b), node.name)


def _trunc_divide(w: _Writer, node: Node, args: list) -> None:
    """``div(a, b, rounding_mode="trunc")``: ``Div`` for integers (C's, towards 0); for
    floats ``trunc(a / b)``: ``floor(|a / b|)`` with the sign of ``a / b``."""
    if _is_integer(node):
        w.add("Div", args, [node.name])
        return
    a, b = args
    magnitude = w.add("Floor", [w.add("Abs", [w.add("Div", [a, b])])])
    _signed(w, node, magnitude, _quotient_negative(w, node, a, b), node.name)


def _no_grad_write(w: _Writer, node: Node, args: list) -> None:
    """``no_grad_write(old, new)`` (a write under ``no_grad``): ``Identity`` of the written
    values, ``new`` (the in-place result, of the tensor's shape); ``old`` only gave the
    derivative, which ONNX does not hold."""
    w.add("Identity", args[1:2], [node.name])


#: Primitive name -> its translation into ONNX nodes.  :data:`EXPORTABLE` is its keys.
TRANSLATIONS: dict[str, Callable[[_Writer, Node, list], None]] = {
    **{name: _one_to_one(onnx_op) for name, onnx_op in {
        "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "neg": "Neg",
        "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "tanh": "Tanh",
        "sigmoid": "Sigmoid", "relu": "Relu", "sin": "Sin", "cos": "Cos", "tan": "Tan",
        "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
        "erf": "Erf", "matmul": "MatMul", "maximum": "Max", "minimum": "Min",
        "clone": "Identity", "detach": "Identity"}.items()},
    "linear": _linear,
    "conv2d": _conv2d,
    "max_pool2d": _max_pool2d,
    "avg_pool2d": _avg_pool2d,
    "reshape": _to_shape("Reshape"),
    "expand": _to_shape("Expand"),
    "permute": _permute,
    "softmax": _softmax("Softmax"),
    "log_softmax": _softmax("LogSoftmax"),
    "gelu": _gelu,
    "gru_cell": _gru_cell,
    "lstm_cell_state": _lstm_cell_state,
    "lstm_hidden_state": _lstm_hidden_state,
    "sum": _sum,
    "to_dtype": _to_dtype,
    "fmod": _fmod,
    "remainder": _remainder,
    "floor_divide": _floor_divide,
    "trunc_divide": _trunc_divide,
    "no_grad_write": _no_grad_write,
}

#: The primitives :func:`export` translates: the keys of :data:`TRANSLATIONS`.
EXPORTABLE = frozenset(TRANSLATIONS)


def _translate(w: _Writer, node: Node) -> None:
    """Write the ONNX nodes computing ``node``; ONNXExportError if there is no translation."""
    translate = TRANSLATIONS.get(node.op_name)
    if translate is None:
        raise ONNXExportError(
            f"cannot export {node.name} = {node.op_name}(...) to ONNX: the primitive "
            f"{node.op_name!r} has no ONNX translation here. Exportable: "
            f"{', '.join(sorted(EXPORTABLE))}.")
    dtype = np.dtype(node.dtype)
    translate(w, node, [w.operand(a, dtype) if a is not None else "" for a in node.args])


def graph_to_onnx(graph: Graph, state: dict, opset_version: int = 17) -> Any:
    """The ``onnx.ModelProto`` of a forward graph; parameters and constants as initializers.

    Parameters
    ----------
    graph : Graph
        A forward graph (``difflab.export.export(...).graph``).
    state : dict of str to array
        The parameters' values.
    opset_version : int, default 17
        The ONNX operator set.

    Returns
    -------
    onnx.ModelProto

    Raises
    ------
    ONNXExportError
        For a primitive with no ONNX translation (the message lists those there are).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.onnx
    >>> from difflab.export import export
    >>> ep = export(dl.nn.Linear(2, 1), (dl.ones(3, 2),))
    >>> [node.op_type for node in dl.onnx.graph_to_onnx(ep.graph, ep.state_dict).graph.node]
    ['Gemm']
    """
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


class TrainingMode(enum.Enum):
    """The mode a module is exported in (PyTorch's ``torch.onnx.TrainingMode``).

    ``EVAL`` (the default of :func:`export`) puts the module and its submodules in
    ``eval()`` mode while it is traced (dropout off, batch norm with its running
    statistics) and puts each back as it was afterwards; ``TRAINING`` puts them in
    ``train()`` mode likewise; ``PRESERVE`` traces them as they are.

    Parameters
    ----------
    value : int
        0 (``EVAL``), 1 (``PRESERVE``) or 2 (``TRAINING``): ``TrainingMode(value)``
        looks a mode up by its number.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.onnx.TrainingMode.EVAL
    <TrainingMode.EVAL: 0>
    """

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def export(model: Callable, args: Any = (), f: str | os.PathLike | Any | None = None, *,
           kwargs: Mapping[str, Any] | None = None, verbose: bool | None = None,
           input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None,
           opset_version: int | None = None, dynamic_axes: Mapping[str, Any] | None = None,
           dynamic_shapes: Any = None, export_params: bool = True,
           keep_initializers_as_inputs: bool = False,
           training: TrainingMode = TrainingMode.EVAL, do_constant_folding: bool = True,
           dynamo: bool = True, passes: Sequence[str] | None = None) -> Any:
    """Trace ``model(*args)`` and write it to ``f`` as an ONNX file; returns the ModelProto.

    PyTorch's ``torch.onnx.export``, so that a program calling it runs unchanged.
    ``model`` is a module (its parameters become the file's initializers, at
    their values now) or a function of tensors; ``args`` the example inputs
    (one tensor or a tuple), whose shapes and dtypes the file keeps.  As in
    PyTorch, a module is traced in ``eval()`` mode (``training``), and put back
    as it was.  Constant folding and the other graph passes run first (fewer
    lines to translate); each line then has a small translation to ONNX
    operators.

    Parameters
    ----------
    model : Module or callable
        What to export.
    args : Tensor or tuple, default ()
        Example inputs.
    f : str, path-like or binary file object, optional
        Where to write the ``.onnx`` file; None writes nothing (the ModelProto is
        returned either way).
    kwargs : mapping, optional
        Keyword arguments for ``model`` that are not tensors (a flag, a size):
        they are fixed in the file.  Pass tensors in ``args``.
    verbose : bool, optional
        Print the ONNX graph, one node a line.
    input_names, output_names : sequence of str, optional
        Names for the file's inputs (the tensors of ``args``, in order) and outputs;
        fewer names than there are leaves the rest with their own names.
    opset_version : int, optional
        The ONNX operator set, from ``MIN_OPSET`` (13) to 21 (default 17).  An older
        one (PyTorch's tutorials ask for 9 to 12) is raised to 13, with a warning:
        runtimes read older and newer opsets alike, and PyTorch's own exporter now
        writes a newer one too.
    dynamic_axes, dynamic_shapes : optional
        Accepted so that programs run, with a warning: difflab writes the example's
        sizes into the file (its reshapes keep concrete sizes), so the file runs on
        inputs of those shapes only; export once per shape needed.
    export_params : bool, default True
        Only True: the weights are written into the file as initializers.
    keep_initializers_as_inputs : bool, default False
        Only False: the initializers are not listed among the inputs.
    training : TrainingMode, default TrainingMode.EVAL
        The mode the module is traced in.
    do_constant_folding : bool, default True
        Fold the lines that depend on constants alone before writing.
    dynamo : bool, default True
        Accepted and ignored: difflab has one exporter (its tracer).
    passes : sequence of str, optional
        The graph passes to run first (difflab's own choice; overrides
        ``do_constant_folding``): default ``("fold", "cse", "dce")``.

    Returns
    -------
    onnx.ModelProto
        The model written (``onnx.checker`` accepts it; onnxruntime runs it).

    Raises
    ------
    ImportError
        Without the ``onnx`` package (``pip install 'difflab[jit]'``).
    ONNXExportError
        For an operation with no ONNX equivalent (the message names it).
    ValueError
        For names that collide or are too many, and the options difflab does not have.

    See Also
    --------
    difflab.export.export : the graph in difflab's own format.

    Examples
    --------
    >>> import io
    >>> import difflab as dl
    >>> buffer = io.BytesIO()
    >>> proto = dl.onnx.export(dl.nn.Linear(2, 1), dl.ones(3, 2), buffer,
    ...                        input_names=["features"], output_names=["score"])
    >>> [node.op_type for node in proto.graph.node], proto.graph.input[0].name
    (['Gemm', 'Identity'], 'features')
    >>> buffer.getvalue()[:2] != b""
    True
    """
    onnx = _require_onnx()
    if not export_params:
        raise ValueError("export_params=False: difflab always writes the weights into the "
                         "file as initializers; leave export_params at True")
    if keep_initializers_as_inputs:
        raise ValueError("keep_initializers_as_inputs=True: difflab does not list the "
                         "weights among the inputs; leave it at False")
    if not isinstance(training, TrainingMode):
        raise TypeError(f"training must be a difflab.onnx.TrainingMode (EVAL, PRESERVE or "
                        f"TRAINING), got {training!r}")
    if dynamic_axes or dynamic_shapes:
        warnings.warn("dynamic_axes / dynamic_shapes: difflab writes the example inputs' sizes "
                      "into the ONNX file, which then runs on inputs of those shapes only; "
                      "export once per shape you need", UserWarning, stacklevel=2)
    if opset_version is not None and opset_version < MIN_OPSET:
        warnings.warn(f"opset_version={opset_version} is below {MIN_OPSET}, the lowest opset "
                      f"difflab writes: the file uses opset {MIN_OPSET}", UserWarning,
                      stacklevel=2)
        opset_version = MIN_OPSET
    if passes is None:
        passes = ("fold", "cse", "dce") if do_constant_folding else ("cse", "dce")
    fn = _with_keywords(model, kwargs)
    with _mode(model, training):
        program = export_program(fn, args if isinstance(args, tuple) else (args,),
                                 passes=passes)
    proto = graph_to_onnx(program.graph, program.state_dict,
                          17 if opset_version is None else opset_version)
    if input_names or output_names:
        _name_inputs_and_outputs(onnx, proto, program.graph, input_names or (),
                                 output_names or ())
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    if f is not None:
        onnx.save(proto, f if hasattr(f, "write") else os.fspath(f))
    return proto


def _with_keywords(model: Callable, kwargs: Mapping[str, Any] | None) -> Callable:
    """``model`` with its non-tensor keyword arguments fixed (tensors must come in args)."""
    if not kwargs:
        return model
    tensors = [k for k, v in kwargs.items() if hasattr(v, "shape")]
    if tensors:
        raise ValueError(f"kwargs {tensors}: pass tensors in args (positionally), so that "
                         f"they become the file's inputs")
    return lambda *args: model(*args, **kwargs)


class _mode:  # noqa: N801  (a context manager used like a function)
    """Put a module and its submodules in the mode of ``training`` while it is traced,
    and each back as it was afterwards (a function is left alone)."""

    def __init__(self, model: Any, training: TrainingMode) -> None:
        self.modules = list(model.modules()) if hasattr(model, "modules") else []
        self.was = [m.training for m in self.modules]
        self.training = training

    def __enter__(self) -> None:
        if self.training is not TrainingMode.PRESERVE and self.modules:
            self.modules[0].train(self.training is TrainingMode.TRAINING)

    def __exit__(self, *exc: Any) -> None:
        for module, was in zip(self.modules, self.was):
            module.training = was


def _name_inputs_and_outputs(onnx: Any, proto: Any, graph: Graph, input_names: Sequence[str],
                             output_names: Sequence[str]) -> None:
    """Rename the file's inputs and outputs as asked (PyTorch's input/output names)."""
    g = proto.graph
    inputs = [i.name for i in g.input]
    outputs = [o.name for o in g.output]
    for what, names, have in (("input_names", input_names, inputs),
                              ("output_names", output_names, outputs)):
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"{what} must be a list of non-empty strings, got {names!r}")
        if len(names) > len(have):
            raise ValueError(f"{what}: {len(names)} names for {len(have)} "
                             f"{what.split('_')[0]}s of the exported graph ({have})")
    wanted = list(input_names) + list(output_names)
    taken = ({n for node in g.node for n in (*node.input, *node.output)}
             | {t.name for t in g.initializer} | set(inputs) | set(outputs))
    renamed = set(inputs[:len(input_names)]) | set(outputs[:len(output_names)])
    clash = [n for n in wanted if wanted.count(n) > 1 or (n in taken and n not in renamed)]
    if clash:
        raise ValueError(f"input/output names must be distinct and new to the graph: "
                         f"{sorted(set(clash))} are used twice or already name a tensor")
    for old, new in zip(inputs, input_names):  # an input is renamed wherever it is read
        for node in g.node:
            node.input[:] = [new if n == old else n for n in node.input]
        for value in (*g.input, *g.output):
            if value.name == old:
                value.name = new
    for value, new in zip(g.output, output_names):  # an output is copied to its new name
        g.node.append(onnx.helper.make_node("Identity", [value.name], [new]))
        value.name = new
    onnx.checker.check_model(proto)
