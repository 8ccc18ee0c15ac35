r"""Elementwise fusion: a run of elementwise lines becomes one generated kernel.

``y = tanh(sin(x) * 2 + 1)`` replayed line by line makes four passes over
memory and three temporary arrays, and pays Python's dispatch four times.
The *fused* version computes all of it in one loop, element by element:

.. code-block:: python

    for i in range(n):
        t0 = math.sin(in0[i])
        t1 = t0 * 2.0
        t2 = t1 + 1
        out0[i] = math.tanh(t2)

Nothing here writes that code by hand.  Each elementwise primitive already
is a rule, ``forward(xp, x)`` written with NumPy's names (see
:mod:`difflab.ops.elementwise`).  Called with ``xp`` a namespace that builds
*source text* instead of numbers (as the symbolic method calls the same rule
with SymPy), the rule writes its own line of the kernel: ``xp.sin(x)``
becomes ``math.sin(a)`` for the scalar loop, or ``xp.sin(a)`` on arrays.

Three kernels come from the same generated code:

* with **numba** installed (the ``jit`` extra), the scalar loop is compiled to
  machine code: one pass, no temporaries.  The machine code is cached on
  disk (``DIFFLAB_CACHE_DIR``, default ``~/.cache/difflab``), so a new
  process does not compile the same kernel again;
* on the GPU, for float64 CuPy arrays, the same lines in C become one CuPy
  ``ElementwiseKernel`` (:func:`c_source`);
* without numba (or for a dtype other than float64) the array version runs in
  NumPy, *tiled*: on blocks of 16384 elements, so the temporaries stay in
  the CPU cache.  It computes what the unfused lines compute.

The pass (:func:`fuse`, ``"fuse"`` in :func:`difflab.jit.optimize`) first
orders the lines so that elementwise lines of one shape and dtype stand
together (:func:`schedule`), then makes each such run one kernel; values a
later line or an output reads leave the kernel as its outputs (the first one
the node's result, the others ``v9.s0``, ...).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab.jit.graph import Graph, Node, Ref, substitute
from difflab.ops.structural import BinaryOp, UnaryOp

TILE = 16384  # elements per block of the NumPy kernel: 128 KiB of float64, cache-sized


def _numba_importable() -> bool:
    if os.environ.get("DIFFLAB_JIT_NUMBA", "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


#: Whether fused kernels are compiled with numba: it is installed (the ``jit`` extra) and
#: not switched off with DIFFLAB_JIT_NUMBA=0.  Set it to False to use the NumPy kernels.
USE_NUMBA: bool = _numba_importable()


def kernel_backend() -> str:
    """Which kernels fusion makes here, in words (the fused listing prints it)."""
    if USE_NUMBA:
        return "numba (float64 groups; other dtypes run the NumPy kernel)"
    if os.environ.get("DIFFLAB_JIT_NUMBA", "1").strip().lower() in ("0", "off", "false", "no"):
        return "NumPy, tiled (numba switched off by DIFFLAB_JIT_NUMBA=0)"
    return ("NumPy, tiled (numba is not installed: pip install 'difflab[jit]' compiles "
            "fused kernels to machine code; the results are the same)")


# --------------------------------------------------------- writing source text


class Expr:
    """A piece of source code that arithmetic operators combine into bigger pieces."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _op(self, symbol: str, other: Any, reverse: bool = False) -> Expr:
        left, right = (_text(other), self.text) if reverse else (self.text, _text(other))
        return Expr(f"({left} {symbol} {right})")

    def __add__(self, o: Any) -> Expr: return self._op("+", o)
    def __radd__(self, o: Any) -> Expr: return self._op("+", o, True)
    def __sub__(self, o: Any) -> Expr: return self._op("-", o)
    def __rsub__(self, o: Any) -> Expr: return self._op("-", o, True)
    def __mul__(self, o: Any) -> Expr: return self._op("*", o)
    def __rmul__(self, o: Any) -> Expr: return self._op("*", o, True)
    def __truediv__(self, o: Any) -> Expr: return self._op("/", o)
    def __rtruediv__(self, o: Any) -> Expr: return self._op("/", o, True)
    def __pow__(self, o: Any) -> Expr: return self._op("**", o)
    def __rpow__(self, o: Any) -> Expr: return self._op("**", o, True)
    def __neg__(self) -> Expr: return Expr(f"(-{self.text})")


def _text(value: Any) -> str:
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, float) and not math.isfinite(value):
        # (repr gives inf and nan, which are no Python names)
        return "math.nan" if math.isnan(value) else ("math.inf" if value > 0 else "(-math.inf)")
    return repr(value)


class ArraySource:
    """``xp`` for a rule writing array code: ``xp.sin(a)`` stays ``xp.sin(a)``."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args: Expr(f"xp.{name}({', '.join(_text(a) for a in args)})")


class NotScalar(Exception):
    """A rule used an array function with no scalar equivalent here."""


class ScalarSource:
    """``xp`` for a rule writing scalar code (one element): ``xp.sin(a)`` -> ``math.sin(a)``."""

    MATH = {"exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "sqrt": "sqrt",
            "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
            "arctan": "atan", "arctan2": "atan2", "sinh": "sinh", "cosh": "cosh",
            "tanh": "tanh", "erf": "erf", "log10": "log10", "log2": "log2"}

    def __getattr__(self, name: str) -> Any:
        if name in self.MATH:
            return lambda *args: Expr(f"math.{self.MATH[name]}"
                                      f"({', '.join(_text(a) for a in args)})")
        if name == "abs":
            return lambda a: Expr(f"abs({_text(a)})")
        if name in ("maximum", "minimum"):
            # NumPy's rule: a NaN on either side gives NaN (a + b is NaN then).
            wins = ">=" if name == "maximum" else "<="
            loses = ">" if name == "maximum" else "<"
            return lambda a, b: Expr(
                f"({_text(a)} if {_text(a)} {wins} {_text(b)} else ({_text(b)} if "
                f"{_text(b)} {loses} {_text(a)} else {_text(a)} + {_text(b)}))")
        raise NotScalar(name)


class CExpr(Expr):
    """Source text in C (the CUDA kernel): ``a ** b`` is ``pow(a, b)``, numbers are doubles."""

    def _op(self, symbol: str, other: Any, reverse: bool = False) -> CExpr:
        left, right = (_c(other), self.text) if reverse else (self.text, _c(other))
        if symbol == "**":
            return CExpr(f"pow({left}, {right})")
        return CExpr(f"({left} {symbol} {right})")

    def __neg__(self) -> CExpr:
        return CExpr(f"(-{self.text})")


def _c(value: Any) -> str:
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NotScalar(repr(value))
    number = float(value)  # (always a double literal: in C, 1 / 2 would be 0)
    if math.isnan(number):
        return "NAN"
    if math.isinf(number):
        return "INFINITY" if number > 0 else "(-INFINITY)"
    return repr(number)


class CSource:
    """``xp`` for a rule writing one element's C code: ``xp.arcsin(a)`` -> ``asin(a)``."""

    MATH = {**ScalarSource.MATH, "abs": "fabs"}

    def __getattr__(self, name: str) -> Any:
        if name in self.MATH:
            return lambda *args: CExpr(f"{self.MATH[name]}({', '.join(_c(a) for a in args)})")
        if name in ("maximum", "minimum"):
            wins = ">=" if name == "maximum" else "<="
            loses = ">" if name == "maximum" else "<"
            return lambda a, b: CExpr(
                f"({_c(a)} {wins} {_c(b)} ? {_c(a)} : ({_c(b)} {loses} {_c(a)} ? {_c(b)} : "
                f"{_c(a)} + {_c(b)}))")
        raise NotScalar(name)


def _lines(body: Sequence[tuple], xp: Any, read: Any, expr: type = Expr,
           text: Any = _text) -> list[str]:
    """One assignment per line of the group, written by the primitives' own rules."""
    from difflab.ops.registry import get

    lines = []
    for j, (op_name, args) in enumerate(body):
        rule = get(op_name).rule
        values = [expr(read(a)) if isinstance(a, str) else a for a in args]
        lines.append(f"t{j} = {text(rule.forward(xp, *values))}")
    return lines


def array_source(body: Sequence[tuple], outputs: Sequence[int], n_inputs: int) -> str:
    """The NumPy (or CuPy) kernel: the group's lines on whole arrays (or on one block)."""
    lines = _lines(body, ArraySource(), lambda name: name)
    inputs = ", ".join(f"in{k}" for k in range(n_inputs))
    return (f"def kernel(xp, {inputs}):\n"
            + "".join(f"    {line}\n" for line in lines)
            + f"    return [{', '.join(f't{j}' for j in outputs)}]\n")


def scalar_source(body: Sequence[tuple], outputs: Sequence[int], n_inputs: int) -> str:
    """The numba kernel: one loop over the elements, the group's lines inside."""
    lines = _lines(body, ScalarSource(), lambda name: "a" + name[2:] if name[:2] == "in" else name)
    params = ", ".join([f"in{k}" for k in range(n_inputs)] +
                       [f"out{k}" for k in range(len(outputs))])
    return (f"def kernel(n, {params}):\n"
            f"    for i in range(n):\n"
            + "".join(f"        a{k} = in{k}[i]\n" for k in range(n_inputs))
            + "".join(f"        {line}\n" for line in lines)
            + "".join(f"        out{k}[i] = t{j}\n" for k, j in enumerate(outputs)))


def c_source(body: Sequence[tuple], outputs: Sequence[int], n_inputs: int
             ) -> tuple[str, str, str]:
    """The CUDA kernel of a float64 group, as CuPy's ElementwiseKernel takes it.

    ``(in_params, out_params, operation)``: CuPy runs ``operation`` once per
    element, with ``in0``... the inputs' elements (broadcast) and ``out0``...
    the outputs.  The lines are the same rules as the numba loop's, in C.
    """
    lines = _lines(body, CSource(), lambda name: name, CExpr, _c)
    operation = "".join(f"double {line};\n" for line in lines)
    operation += "".join(f"out{k} = t{j};\n" for k, j in enumerate(outputs))
    return (", ".join(f"float64 in{k}" for k in range(n_inputs)),
            ", ".join(f"float64 out{k}" for k in range(len(outputs))), operation)


def run_tiled(kernel: Any, xp: Any, inputs: Sequence[Any], shape: tuple) -> list:
    """Run an array kernel block by block (TILE elements), so temporaries stay in cache.

    Elementwise lines give each element the same value whatever the blocks
    are; only where the numbers live changes.
    """
    n = math.prod(shape)
    if n <= TILE:
        return kernel(xp, *inputs)
    flat = [a.reshape(-1) if a.ndim else a for a in inputs]
    outs = None
    for start in range(0, n, TILE):
        stop = min(start + TILE, n)
        parts = kernel(xp, *[a[start:stop] if a.ndim else a for a in flat])
        if outs is None:
            outs = [xp.empty(n, dtype=p.dtype) for p in parts]
        for out, part in zip(outs, parts):
            out[start:stop] = part
    return [o.reshape(shape) for o in outs]


# ------------------------------------------------------------------ the kernel


class FusedElementwise:
    """The operation of a fused line: ``forward`` runs the group's generated kernel.

    Its settings (``body``: the group's lines as ``(primitive, arguments)``,
    local names ``in0``/``t3`` or numbers; ``outputs``: which lines leave
    the kernel) say everything, so a saved graph stores them as JSON and the
    kernel is generated again after loading.
    """

    name = "fused"
    math = "several elementwise rules, one loop"
    double_backward = False

    def __init__(self) -> None:
        # (id(body), numba?) -> (body, outputs, kind, kernel); body kept, so the id stays its own
        self._kernels: dict[tuple, tuple] = {}

    def describe(self, node: Node, arguments: str) -> str:
        ops = " · ".join(op for op, _ in node.params["body"])
        return f"{node.name} = fused[{ops}]({arguments})"

    def kernel(self, body: tuple, outputs: tuple, use_numba: bool) -> tuple[str, Any]:
        """The compiled kernel for these settings, generated on first use and kept."""
        key = (id(body), use_numba)
        cached = self._kernels.get(key)
        if cached is not None and cached[0] is body and cached[1] is outputs:
            return cached[2], cached[3]
        kind, compiled = compile_kernel(body, outputs, use_numba)
        self._kernels[key] = (body, outputs, kind, compiled)
        return kind, compiled

    def cuda_kernel(self, body: tuple, outputs: tuple) -> Any:
        """CuPy's ElementwiseKernel for these settings (None if a rule has no C form)."""
        key = (id(body), "cuda")
        cached = self._kernels.get(key)
        if cached is not None and cached[0] is body and cached[1] is outputs:
            return cached[3]
        n_inputs = check_body(body, outputs)
        try:
            in_params, out_params, operation = c_source(body, outputs, n_inputs)
        except NotScalar:
            kernel = None
        else:
            import cupy

            kernel = cupy.ElementwiseKernel(in_params, out_params, operation,
                                            "difflab_fused")
        self._kernels[key] = (body, outputs, "cuda", kernel)
        return kernel

    def forward(self, ctx: Any, xp: Any, *inputs: Any, body: tuple, outputs: tuple) -> Any:
        # The pass lets in inputs of the line's own shape or 0-d ones: the largest is it.
        shape = max((a.shape for a in inputs), key=len, default=())
        use_numba = USE_NUMBA and all(type(a) is np.ndarray and a.dtype == np.float64
                                      for a in inputs)
        if _cupy_kernels_for(inputs):
            kernel = self.cuda_kernel(body, outputs)
            if kernel is not None:
                out = kernel(*inputs)
                results = list(out) if isinstance(out, tuple) else [out]
                ctx.save(*results[1:])
                return results[0]
        kind, kernel = self.kernel(body, outputs, use_numba)
        if kind == "numba":
            n = math.prod(shape)
            flat = [np.ascontiguousarray(a).reshape(-1) if a.size == n
                    else np.broadcast_to(a.reshape(-1), (n,)) for a in inputs]
            outs = [np.empty(n) for _ in outputs]
            kernel(n, *flat, *outs)
            results = [o.reshape(shape) for o in outs]
        else:
            results = run_tiled(kernel, xp, inputs, shape)
        ctx.save(*results[1:])
        return results[0]

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise RuntimeError("a fused kernel has no VJP: differentiate the graph before fusing")


FUSED = FusedElementwise()


def _cupy_kernels_for(inputs: Sequence[Any]) -> bool:
    """Whether these are float64 CuPy arrays and CuPy can build elementwise kernels."""
    if not inputs or not all(type(a).__module__.startswith("cupy") for a in inputs):
        return False
    if not all(a.dtype == np.float64 for a in inputs):
        return False
    try:
        import cupy
    except ImportError:
        return False
    return hasattr(cupy, "ElementwiseKernel")


_LOCAL = re.compile(r"^(in|t)(\d{1,6})$")


def check_body(body: Any, outputs: Any) -> int:
    """Refuse settings that are not a fused group; the number of kernel inputs if they are.

    The settings come from a graph file too, and they become source code:
    so every name must be an elementwise primitive, every argument a local
    name (``in3``, or ``t2`` of an earlier line) or a number, every output a
    line.  Nothing else ever reaches the generated text.
    """
    from difflab.jit.graph import GraphError
    from difflab.ops import registry

    def bad(why: str) -> GraphError:
        return GraphError(f"a fused kernel's settings are not valid: {why}")

    if not isinstance(body, (tuple, list)) or not body:
        raise bad("body must be a non-empty list of (primitive, arguments)")
    n_inputs = 0
    for j, line in enumerate(body):
        if not (isinstance(line, (tuple, list)) and len(line) == 2
                and isinstance(line[0], str) and isinstance(line[1], (tuple, list))):
            raise bad(f"line {j} is not (primitive, arguments)")
        op = registry.PRIMITIVES.get(line[0])
        if not isinstance(op, (UnaryOp, BinaryOp)):
            raise bad(f"line {j}: {line[0]!r} is not an elementwise primitive")
        if len(line[1]) != (1 if isinstance(op, UnaryOp) else 2):
            raise bad(f"line {j}: {line[0]} takes {1 if isinstance(op, UnaryOp) else 2} "
                      f"arguments, got {len(line[1])}")
        for a in line[1]:
            if isinstance(a, str):
                match = _LOCAL.match(a)
                if match is None or (match.group(1) == "t" and int(match.group(2)) >= j):
                    raise bad(f"line {j}: argument {a!r} is neither an input (in0, in1, ...) "
                              f"nor an earlier line (t0 ... t{j - 1})")
                if match.group(1) == "in":
                    n_inputs = max(n_inputs, int(match.group(2)) + 1)
            elif isinstance(a, bool) or not isinstance(a, (int, float)):
                raise bad(f"line {j}: argument {a!r} is not a name or a number")
    if not isinstance(outputs, (tuple, list)) or not outputs or not all(
            isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(body)
            for k in outputs):
        raise bad(f"outputs must be line numbers 0 ... {len(body) - 1}, got {outputs!r}")
    return n_inputs


def compile_kernel(body: Sequence[tuple], outputs: Sequence[int], use_numba: bool
                   ) -> tuple[str, Any]:
    """("numba", compiled loop) or ("numpy", the array function), from the generated source."""
    n_inputs = check_body(body, outputs)
    if use_numba:
        try:
            source = scalar_source(body, outputs, n_inputs)
        except NotScalar:
            pass  # (an array function with no scalar twin: the NumPy kernel does it)
        else:
            import numba

            filename = _source_file(source)
            # (__name__: numba's disk cache finds the kernel's globals through it)
            namespace: dict = {"math": math, "__name__": __name__}
            exec(compile(source, filename or "<difflab fused kernel>", "exec"),  # noqa: S102
                 namespace)
            # error_model="numpy": 1/0 gives inf, as in NumPy, instead of raising.
            # cache=True needs the source in a file: then numba keeps the machine code
            # beside it and a new process loads it instead of compiling again.
            return "numba", numba.njit(error_model="numpy", cache=filename is not None)(
                namespace["kernel"])
    namespace = {"math": math}
    exec(compile(array_source(body, outputs, n_inputs), "<difflab fused kernel>", "exec"),
         namespace)  # noqa: S102
    return "numpy", namespace["kernel"]


def cache_directory() -> str:
    """Where compiled kernels are kept: ``$DIFFLAB_CACHE_DIR`` or ``~/.cache/difflab``."""
    root = os.environ.get("DIFFLAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "difflab")
    return os.path.join(root, "kernels")


def _private_directory(path: str) -> bool:
    """Create ``path`` (mode 700) if needed; True if it is ours alone.

    numba's cache index is a pickle: whoever can write to the folder could
    make the next process run their code.  So a folder another user owns, or
    that others may write to, is not used (the kernel is compiled in memory).
    """
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _source_file(source: str) -> str | None:
    """The kernel's source in the cache folder (named by its hash), or None if no cache.

    The code that runs is always ``source`` itself (compiled from this
    string); the file is only what numba's disk cache is keyed to.
    """
    directory = cache_directory()
    if not _private_directory(directory):
        warnings.warn(f"fused kernels are not cached on disk: {directory} is not a folder "
                      f"only you can write to (set DIFFLAB_CACHE_DIR to one)", stacklevel=3)
        return None
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    path = os.path.join(directory, f"kernel_{digest}.py")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == source:
                return path
    except OSError:
        pass
    try:  # (written whole, then renamed: a process reading it never sees half a file)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(temporary, path)
    except OSError:
        return None
    return path


# -------------------------------------------------------------------- the pass


def _elementwise(node: Node, meta: dict) -> bool:
    """A line that may join a kernel: an elementwise rule, inputs of its shape or scalars."""
    if not isinstance(node.op, (UnaryOp, BinaryOp)) or node.params:
        return False
    if np.dtype(node.dtype).kind != "f":
        return False
    for a in node.args:
        if isinstance(a, Ref):
            shape, dtype = meta[a.name]
            if shape not in (tuple(node.shape), ()) or np.dtype(dtype) != np.dtype(node.dtype):
                return False
        elif not isinstance(a, (int, float)) or isinstance(a, bool):
            return False
    return True


def _fusible(node: Node, meta: dict) -> bool:
    return _elementwise(node, meta) and not any(m is not None for m in node.saved)


def schedule(graph: Graph) -> list[Node]:
    """The nodes reordered so that elementwise lines of one shape stand together.

    Any order in which each line comes after the lines it reads computes the
    same values (every primitive is a pure function).  So, among the lines
    ready to run, keep taking elementwise ones of the current group's shape
    and dtype; when none is left, run the other ready lines (a ``sum``, a
    ``matmul``), then start the next group.  A backward graph's first VJP
    lines do not wait for the loss's ``sum``: forward and backward fuse into
    one kernel.  Ties go to the original order.
    """
    import heapq

    meta = graph.meta()
    nodes = graph.nodes
    index = {}
    for k, node in enumerate(nodes):
        for name in node.outputs():
            index[name] = k
    waiting = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for k, node in enumerate(nodes):
        for dep in {index[r.name] for r in node.refs() if r.name in index}:
            waiting[k] += 1
            users[dep].append(k)
    fusible = [_fusible(n, meta) for n in nodes]
    group = [(tuple(n.shape), np.dtype(n.dtype).str) for n in nodes]
    ready_fusible: dict[tuple, list[int]] = {}
    ready_other: list[int] = []

    def make_ready(k: int) -> None:
        if fusible[k]:
            heapq.heappush(ready_fusible.setdefault(group[k], []), k)
        else:
            heapq.heappush(ready_other, k)

    for k in range(len(nodes)):
        if waiting[k] == 0:
            make_ready(k)
    order: list[int] = []
    current = None
    while len(order) < len(nodes):
        if current is not None and ready_fusible.get(current):
            k = heapq.heappop(ready_fusible[current])
        elif ready_other:
            k = heapq.heappop(ready_other)
            current = None
        else:
            current = min((h[0], key) for key, h in ready_fusible.items() if h)[1]
            k = heapq.heappop(ready_fusible[current])
        order.append(k)
        for user in users[k]:
            waiting[user] -= 1
            if waiting[user] == 0:
                make_ready(user)
    return [nodes[k] for k in order]


def fuse(graph: Graph, show: bool = False, min_size: int = 2) -> Graph:
    """Replace each group of elementwise lines (same shape, dtype) by one kernel.

    The lines are first put in an order that keeps each group together
    (:func:`schedule`); then each run of consecutive elementwise lines
    becomes one ``fused`` line.
    """
    from difflab.jit.passes import _copy, _show

    original = graph
    graph = _copy(graph, schedule(graph), graph.outputs)
    meta = graph.meta()
    readers: dict[str, set] = {}
    for k, node in enumerate(graph.nodes):
        for r in node.refs():
            readers.setdefault(r.name, set()).add(k)
    outputs_read = {o.name for o in graph.outputs if isinstance(o, Ref)}

    runs: list[list[int]] = []
    for k, node in enumerate(graph.nodes):
        if not _fusible(node, meta):
            continue
        last = runs[-1] if runs else None
        if last and last[-1] == k - 1 and graph.nodes[last[-1]].shape == node.shape \
                and graph.nodes[last[-1]].dtype == node.dtype:
            last.append(k)
        else:
            runs.append([k])
    runs = [r for r in runs if len(r) >= min_size]

    renamed: dict[str, Ref] = {}
    replaced: dict[int, Node | None] = {}
    for run in runs:
        members = {graph.nodes[k].name: j for j, k in enumerate(run)}
        inputs: list[str] = []
        body = []
        for k in run:
            node = graph.nodes[k]
            args = []
            for a in node.args:
                if isinstance(a, Ref) and a.name in members:
                    args.append(f"t{members[a.name]}")
                elif isinstance(a, Ref):
                    if a.name not in inputs:
                        inputs.append(a.name)
                    args.append(f"in{inputs.index(a.name)}")
                else:
                    args.append(a)
            body.append((node.op_name, tuple(args)))
        # Lines read after the run (or returned) leave the kernel; the last one always.
        leaving = [j for j, k in enumerate(run)
                   if graph.nodes[k].name in outputs_read
                   or any(r > run[-1] for r in readers.get(graph.nodes[k].name, ()))]
        if not leaving or leaving[-1] != len(run) - 1:
            leaving = [j for j in leaving if j != len(run) - 1] + [len(run) - 1]
        main = graph.nodes[run[leaving[-1]]]
        order = [leaving[-1]] + leaving[:-1]  # the result first, then the saved
        fused = Node(main.name, FUSED, tuple(Ref(n) for n in inputs),
                     {"body": tuple(body), "outputs": tuple(order)}, main.shape, main.dtype,
                     (False,) * len(inputs),
                     tuple((tuple(main.shape), np.dtype(main.dtype)) for _ in order[1:]))
        for s, j in enumerate(order[1:]):
            renamed[graph.nodes[run[j]].name] = Ref(f"{main.name}.s{s}")
        for k in run:
            replaced[k] = None
        replaced[run[-1]] = fused
    nodes = []
    for k, node in enumerate(graph.nodes):
        if k in replaced:
            fused = replaced[k]
            if fused is not None:  # (its inputs may be an earlier kernel's extra outputs)
                fused.args = substitute(fused.args, renamed)
                nodes.append(fused)
            continue
        nodes.append(Node(node.name, node.op, substitute(node.args, renamed),
                          {p: substitute(v, renamed) for p, v in node.params.items()},
                          node.shape, node.dtype, node.needs_input_grad, node.saved))
    outputs = [substitute(o, renamed) for o in graph.outputs]
    result = _copy(graph, nodes, outputs)
    if show:
        print(f"(fused kernels: {kernel_backend()})")
    _show("elementwise fusion", original, result, show)
    return result
