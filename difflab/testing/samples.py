r"""One table of sample inputs: every primitive (and the public functions) with the edges a
stranger brings.

PyTorch keeps one database of operator entries that generic tests loop over
(``OpInfo``); this is difflab's.  An entry says how to call an operation on
tensors and which inputs it takes, by shape and kind of values:

* ``(shape, (low, high))``: floats drawn in [low, high];
* ``(shape, (INT, n))``: integers in [0, n) (class labels, indices);
* ``(shape, BOOL)``: truth values.

:func:`variants` turns those into several concrete inputs: the *example*
(what a test traces on), *others* with other values, signs and orders, and
the *edges* (``inf``, ``-inf``, ``nan``, ``-0.0``, ``0.0``, ties) where
floats go.  Generic tests then run every entry through every interpreter:
trace on the example and replay on the others against eager
(``tests/jit/test_jit_replay.py``), the graph backward against the tape
(``tests/jit/test_jit_grad.py``).  A new primitive is tested everywhere by
adding its entry to :data:`PRIMITIVE_CASES`; a test asserts that every
registered primitive has one.

:data:`FUNCTION_CASES` does the same for public ``difflab.<name>`` functions
and ``Tensor.<name>`` methods that need more than one float tensor;
:func:`probe_cases` finds the ones a single float tensor is enough for.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

INT = "int"  # an input of integers in [0, n): (shape, (INT, n))
BOOL = "bool"  # an input of truth values: (shape, BOOL)
EDGES = (np.inf, -0.0, np.nan, -np.inf, 0.0, 1.5, 1.5, -2.5)  # (1.5, 1.5: a tie)


@dataclass(frozen=True)
class Case:
    """One entry: ``call(*tensors)`` on inputs described by ``specs``.

    ``edges``: whether the float inputs may take the edge values (a rule
    that raises on nan, such as a histogram over the data's range, says no
    by leaving them out; eager and the replay must then agree on the rest).
    """

    name: str
    call: Callable
    specs: tuple
    edges: bool = True


def variants(case: Case, seed: int = 0) -> list[list[np.ndarray]]:
    """Concrete inputs for ``case``: the example first, then others, then the edges."""
    out = []
    for k in range(3 + case.edges):
        rng = np.random.default_rng(seed * 7 + k)
        arrays = []
        for shape, kind in case.specs:
            if kind == BOOL:
                arrays.append(rng.random(shape) < 0.5)
            elif kind[0] == INT:
                arrays.append(rng.integers(0, kind[1], size=shape).astype(np.int64))
            elif k == 3:  # the edges, cycled over the elements
                n = int(np.prod(shape))
                arrays.append(np.resize(np.array(EDGES), n).reshape(shape))
            else:
                values = rng.uniform(kind[0], kind[1], size=shape)
                if k == 2 and values.size:  # other signs and orders, ties
                    values = -values[::-1].reshape(shape) if kind[0] < 0 else values[::-1]
                    values.reshape(-1)[-1] = values.reshape(-1)[0]
                arrays.append(np.ascontiguousarray(values))
        out.append(arrays)
    return out


def _get(name: str) -> Any:
    from difflab.ops.registry import get

    return get(name)


def _apply(name: str, **params: Any) -> Callable:
    from difflab.autograd.engine import apply

    return lambda *xs: apply(_get(name), *xs, **params)


def _elementwise_cases() -> dict[str, Case]:
    from difflab.ops import registry

    cases = {}
    for p in registry.elementwise_ops():
        low, high = p.rule.domain
        specs = (((3, 4), (low, high)),) if isinstance(p, registry.UnaryOp) else (
            ((3, 4), (low, high)), ((4,), (low, high)))
        cases[p.name] = Case(p.name, _apply(p.name), specs)
    return cases


def _dl() -> Any:
    import difflab

    return difflab


F34 = ((3, 4), (-2, 2))


def _structural_cases() -> dict[str, Case]:
    dl = _dl()
    F = dl.nn.functional  # noqa: N806
    table = {
        "sum": (lambda x: x.sum(dim=1), [F34]),
        "prod": (lambda x: x.prod(dim=1), [F34]),
        "cumsum": (lambda x: x.cumsum(dim=1), [F34]),
        "max": (lambda x: x.max(dim=0)[0], [F34]),
        "matmul": (lambda a, b: a @ b, [F34, ((4, 2), (-2, 2))]),
        "reshape": (lambda x: x.reshape(2, 6) * dl.arange(6.0), [F34]),
        "permute": (lambda x: x.permute(1, 0) @ x, [F34]),
        "expand": (lambda x: x.expand(3, 4) * x.T.sum(), [((1, 4), (-2, 2))]),
        "index": (lambda x: x[1:, ::2] * x[0, 1], [F34]),
        "scatter_add": (lambda v: _apply("scatter_add", index=np.array([0, 2, 0]),
                                         shape=(4,))(v * v), [((3,), (-2, 2))]),
        "flip": (lambda x: x.flip(1) * x, [F34]),
        "index_put": (lambda x, v: _apply("index_put", index=(1, slice(None)))(x * x, v),
                      [F34, ((4,), (-2, 2))]),
        "cat": (lambda a, b: dl.cat([a, b * b], dim=0), [F34, ((2, 4), (-2, 2))]),
        "where": (lambda x, y: dl.where(x > 0, x * y, y), [F34, F34]),
        "clamp": (lambda x: x.clamp(-0.5, 0.7) * x, [F34]),
        "to_dtype": (lambda x: x.to(dl.float32).to(dl.float64) * x, [F34]),
        "to_device": (lambda x: _apply("to_device", device=dl.device("cpu"))(x) * x, [F34]),
        "clone": (lambda x: x.clone() * x, [F34]),
        "linear": (lambda x, w, b: F.linear(x, w, b), [F34, ((5, 4), (-2, 2)), ((5,), (-2, 2))]),
        "im2col": (lambda x: _apply("im2col", kernel=(2, 2), stride=(1, 1), padding=(1, 0),
                                    dilation=(1, 1))(x * x), [((1, 2, 3, 3), (-2, 2))]),
        "col2im": (lambda w: _apply("col2im", x_shape=(1, 1, 3, 3), kernel=(2, 2), stride=(1, 1),
                                    padding=(0, 0), dilation=(1, 1))(w * w),
                   [((1, 1, 2, 2, 2, 2), (-2, 2))]),
        "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1),
                   [((2, 2, 4, 4), (-2, 2)), ((3, 2, 3, 3), (-2, 2)), ((3,), (-2, 2))]),
        "max_pool2d": (lambda x: F.max_pool2d(x, 2), [((1, 2, 4, 4), (-2, 2))]),
        "avg_pool2d": (lambda x: F.avg_pool2d(x * x, 2), [((1, 2, 4, 4), (-2, 2))]),
        "log_softmax": (lambda x: F.log_softmax(x, dim=1), [F34]),
        "softmax": (lambda x: F.softmax(x, dim=0), [F34]),
        "nll_loss": (lambda z, t: F.nll_loss(z * z, t), [((5, 4), (-2, 2)), ((5,), (INT, 4))]),
        "bce_with_logits": (lambda x, y: F.binary_cross_entropy_with_logits(x, y),
                            [F34, ((3, 4), (0, 1))]),
        "normalize": (lambda x: F.layer_norm(x, (4,)), [F34]),
        "gelu": (lambda x: F.gelu(x), [F34]),
        "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), [F34]),
        "embedding": (lambda i, w: F.embedding(i, w * w), [((5,), (INT, 6)), ((6, 3), (-2, 2))]),
        "mean": (lambda x: x.mean(dim=1), [F34]),
        "mse_loss": (lambda x, y: F.mse_loss(x * x, y), [F34, F34]),
        "cumprod": (lambda x: dl.cumprod(x, dim=1), [((3, 4), (0.5, 2))]),
        "einsum": (lambda a, b: dl.einsum("ij,jk->ik", a, b), [F34, ((4, 2), (-2, 2))]),
    }
    return {name: Case(name, call, tuple(specs)) for name, (call, specs) in table.items()}


def _no_derivative_cases() -> dict[str, Case]:
    dl = _dl()
    unary = ("bitwise_not", "logical_not", "isnan", "isinf", "isfinite", "sign", "round",
             "floor", "ceil")
    binary = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
              "isclose", "heaviside", "floor_divide", "remainder")
    cases = {n: Case(n, _apply(n), (F34,)) for n in unary if n != "bitwise_not"}
    cases["bitwise_not"] = Case("bitwise_not", _apply("bitwise_not"), (((3, 4), BOOL),))
    cases.update({n: Case(n, _apply(n), (F34, ((4,), (-2, 2)))) for n in binary})
    for n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        cases[n] = Case(n, _apply(n), (((3, 4), BOOL), ((4,), BOOL)))
    table = {
        "any": (lambda x: (x > 0.5).any(dim=1), [F34]),
        "all": (lambda x: (x > -1.5).all(), [F34]),
        "argmax": (lambda x: x.argmax(dim=1), [F34]),
        "argmin": (lambda x: x.argmin(), [F34]),
        "argsort": (lambda x: x.argsort(dim=0, descending=True), [F34]),
        "count_nonzero": (lambda x: dl.count_nonzero(x.round(), dim=0), [F34]),
        "histc": (lambda x: dl.histc(x, bins=5, min=-2, max=2), [F34]),
        "one_hot": (lambda i: dl.nn.functional.one_hot(i, 6), [((5,), (INT, 6))]),
        "histogram": (lambda x: dl.histogram(x, bins=4, range=(-2.0, 2.0)), [F34]),
    }
    cases.update({name: Case(name, call, tuple(specs)) for name, (call, specs) in table.items()})
    return cases


def primitive_cases() -> dict[str, Case]:
    """Every built-in primitive of the registry, by name: one entry each."""
    return {**_elementwise_cases(), **_structural_cases(), **_no_derivative_cases()}


def function_cases() -> dict[str, Case]:
    """Public functions and methods that need more than one float tensor, by their name
    (``dl.gather``, ``Tensor.topk``): the issue's cases among them."""
    dl = _dl()
    V = ((6,), (-2, 2))  # noqa: N806
    table = {
        "dl.where": (lambda x: dl.where(dl.isinf(x), dl.zeros_like(x), x), [V]),
        "Tensor.sort": (lambda x: x.sort().values, [V]),
        "Tensor.argsort": (lambda x: x[x.argsort()], [V]),
        "Tensor.topk": (lambda x: x.topk(2), [V]),
        "dl.logical_and": (lambda x: dl.logical_and(x > 0, dl.logical_not(x > 1)), [V]),
        "dl.isclose": (lambda x: dl.isclose(x, x.round()), [V]),
        "dl.count_nonzero": (lambda x: dl.count_nonzero(x.round()), [V]),
        "dl.histc": (lambda x: dl.histc(x, bins=4, min=-2, max=2), [V]),
        "dl.nn.functional.one_hot": (lambda x: dl.nn.functional.one_hot(x.argmax(), 6), [V]),
        "dl.gather": (lambda x: dl.gather(x, 0, x.argsort()), [V]),
        "Tensor.max": (lambda x: x.reshape(2, 3).max(dim=1), [V]),
        "Tensor.min": (lambda x: x.reshape(2, 3).min(dim=0), [V]),
        "dl.maximum": (lambda a, b: dl.maximum(a, b), [V, V]),
        "dl.functions.heaviside": (lambda x: dl.functions.heaviside(x, 0.5), [V]),
        "dl.scatter": (lambda x, i: dl.scatter(x, 0, i, x * 2), [V, ((6,), (INT, 6))]),
        "dl.index_select": (lambda x, i: dl.index_select(x, 0, i), [V, ((4,), (INT, 6))]),
        "Tensor.masked_fill": (lambda x: x.masked_fill(x > 0, 0.0), [V]),
        "dl.clamp": (lambda x: dl.clamp(x, -1, 1), [V]),
        "Tensor.__floordiv__": (lambda a, b: a // b, [V, V]),
        "Tensor.__mod__": (lambda a, b: a % b, [V, V]),
        "Tensor.__eq__": (lambda a, b: a == b.round(), [V, V]),
        "Tensor.__invert__": (lambda x: ~(x > 0), [V]),
        "dl.logical_xor": (lambda a, b: dl.logical_xor(a > 0, b), [V, V]),
        "dl.roll": (lambda x: dl.roll(x, 2), [V]),
        "Tensor.any": (lambda x: (x > 1).any(), [V]),
        "dl.softmax": (lambda x: dl.softmax(x.reshape(2, 3), dim=1), [V]),
        "dl.logsumexp": (lambda x: dl.logsumexp(x, dim=0), [V]),
        "dl.norm": (lambda x: dl.norm(x), [V]),
    }
    return {name: Case(name, call, tuple(specs)) for name, (call, specs) in table.items()}


# ------------------------------------------------------------- probing the API


#: Public names that compute nothing on tensor values: creation, types, modes, modules.
NOT_COMPUTATIONS = frozenset({
    "arange", "linspace", "logspace", "zeros", "ones", "full", "empty", "eye", "tensor",
    "as_tensor", "from_numpy", "rand", "randn", "randint", "randperm", "rand_like",
    "randn_like", "randint_like", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "inference_mode", "is_tensor", "is_floating_point", "numel", "get_default_dtype",
    "set_default_dtype", "set_printoptions", "device", "register_primitive", "register_type",
    "record_primitive", "save", "load", "compile", "use_deterministic_algorithms",
    "set_flush_denormal", "is_nonzero", "equal", "allclose", "bernoulli", "multinomial",
    "normal", "poisson", "zeros_like", "ones_like", "full_like", "empty_like",
})


def probe_cases() -> Iterator[Case]:
    """Each public ``difflab.<name>`` and ``Tensor.<name>`` that computes a tensor from
    one float tensor alone (``dl.exp(x)``, ``x.argsort()``) becomes a case; the rest
    need an entry of :func:`function_cases`."""
    dl = _dl()
    x = dl.tensor(np.linspace(-0.9, 0.8, 6).reshape(2, 3))
    for owner, prefix in ((dl, "dl."), (dl.Tensor, "Tensor.")):
        for name in sorted(dir(owner)):
            if name.startswith("_") or name in NOT_COMPUTATIONS or name.endswith("_"):
                continue
            value = getattr(owner, name)
            if inspect.isclass(value) or inspect.ismodule(value) or not callable(value):
                continue
            call = ((lambda t, n=name: getattr(dl, n)(t)) if owner is dl
                    else (lambda t, n=name: getattr(t, n)()))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = call(x)
            except Exception:  # noqa: BLE001  (it needs more arguments: an entry of its own)
                continue
            if isinstance(result, dl.Tensor) or (isinstance(result, tuple) and result and all(
                    isinstance(r, dl.Tensor) for r in result)):
                yield Case(prefix + name, call, (((2, 3), (-2, 2)),))
