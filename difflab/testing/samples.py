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
adding its entry to :func:`primitive_cases`; a test asserts that every
registered primitive has one.

:func:`function_cases` does the same for public ``difflab.<name>`` functions
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

from difflab.testing.samples_complex import complex_table, fourier_function_table
from difflab.testing.samples_nn import nn_breadth_table, same_function_cases, torch_names_table

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
                if k == 2 and values.size:  # other signs and orders, and a tie
                    flat = values.reshape(-1)[::-1] * (-1.0 if kind[0] < 0 else 1.0)
                    flat[-1] = flat[0]
                    values = flat.reshape(shape)
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
STATE, GATES3, GATES4 = ((3, 2), (-2, 2)), ((3, 6), (-2, 2)), ((3, 8), (-2, 2))  # (recurrent)


def _structural_cases() -> dict[str, Case]:
    dl = _dl()
    F = dl.nn.functional  # noqa: N806
    table = {
        "sum": (lambda x: x.sum(dim=1), [F34]),
        "prod": (lambda x: x.prod(dim=1), [F34]),
        "cumsum": (lambda x: x.cumsum(dim=1), [F34]),
        "max": (lambda x: x.max(dim=0)[0], [F34]),
        "min": (lambda x: x.amin(dim=1) * x.min(dim=0).values.sum(), [F34]),
        "logsumexp": (lambda x: dl.logsumexp(x * x, dim=1), [F34]),
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
        "clamp": (lambda x, low: x.clamp(-0.5, 0.7) * x + x.clamp(low, low + 1.2) * low,
                  [F34, ((4,), (-1, 0))]),  # (number bounds; a tensor bound, broadcast)
        "to_dtype": (lambda x: x.to(dl.float32).to(dl.float64) * x, [F34]),
        "to_device": (lambda x: x.to_device("cpu") * x, [F34]),
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
        # one recurrent step: (N, 3H) or (N, 4H) projections beside an (N, H) state, H = 2
        "gru_cell": (_apply("gru_cell"), [GATES3, GATES3, STATE]),
        "gru_cell_backward": (_apply("gru_cell_backward"), [STATE, GATES3, GATES3, STATE]),
        "lstm_cell_state_backward": (_apply("lstm_cell_state_backward"), [STATE, GATES4, STATE]),
        "lstm_hidden_state_backward": (_apply("lstm_hidden_state_backward"),
                                       [STATE, GATES4, STATE]),
        "lstm_cell_state": (_apply("lstm_cell_state"), [GATES4, STATE]),
        "lstm_hidden_state": (_apply("lstm_hidden_state"), [GATES4, STATE]),
        "mean": (lambda x: x.mean(dim=1), [F34]),
        "mse_loss": (lambda x, y: F.mse_loss(x * x, y), [F34, F34]),
        "cumprod": (lambda x: dl.cumprod(x, dim=1), [((3, 4), (0.5, 2))]),
        "einsum": (lambda a, b: dl.einsum("ij,jk->ik", a, b), [F34, ((4, 2), (-2, 2))]),
        "polygamma": (lambda x: dl.polygamma(1, x) * x, [((3, 4), (0.3, 4))]),
        "zeta": (lambda x: dl.zeta(2.5, x) * x, [((3, 4), (0.3, 4))]),
        "gammainc": (lambda x: dl.gammainc(1.5, x) * x, [((3, 4), (0.3, 4))]),
        "gammaincc": (lambda x: dl.gammaincc(2.0, x * x), [((3, 4), (0.3, 4))]),
    }
    return {name: Case(name, call, tuple(specs)) for name, (call, specs) in table.items()}


def _no_derivative_cases() -> dict[str, Case]:
    dl = _dl()
    unary = ("bitwise_not", "logical_not", "isnan", "isinf", "isfinite", "sign", "round",
             "floor", "ceil", "frexp_exponent", "signbit")
    binary = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
              "isclose", "heaviside", "floor_divide", "trunc_divide")
    cases = {n: Case(n, _apply(n), (F34,)) for n in unary if n != "bitwise_not"}
    cases["bitwise_not"] = Case("bitwise_not", _apply("bitwise_not"), (((3, 4), BOOL),))
    cases.update({n: Case(n, _apply(n), (F34, ((4,), (-2, 2)))) for n in binary})
    for n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        cases[n] = Case(n, _apply(n), (((3, 4), BOOL), ((4,), BOOL)))
    for n in ("gcd", "lcm"):
        cases[n] = Case(n, _apply(n), (((3, 4), (INT, 12)), ((4,), (INT, 12))))
    cases["detach"] = Case("detach", _apply("detach"), (F34,))  # (the stop-gradient)
    table = {
        "any": (lambda x: (x > 0.5).any(dim=1), [F34]),
        "all": (lambda x: (x > -1.5).all(), [F34]),
        "argmax": (lambda x: x.argmax(dim=1), [F34]),
        "argmin": (lambda x: x.argmin(), [F34]),
        "argsort": (lambda x: x.argsort(dim=0, descending=True), [F34]),
        "count_nonzero": (lambda x: dl.count_nonzero(x.round(), dim=0), [F34]),
        "histc": (lambda x: dl.histc(x, bins=5, min=-2, max=2), [F34]),
        "one_hot": (lambda i: dl.nn.functional.one_hot(i, 6), [((5,), (INT, 6))]),
        # (its faces are the functions that read an index: gather, index_put, embedding ...)
        "check_index": (lambda x, i: dl.gather(x, 0, i), [((6,), (-2, 2)), ((4,), (INT, 6))]),
        "histogram": (lambda x: dl.histogram(x, bins=4, range=(-2.0, 2.0)), [F34]),
        "dropout_mask": (lambda x: dl.nn.functional.dropout(x, 0.3), [F34]),
        # (random draws: the tests seed the generator alike before eager and the replay)
        "uniform": (lambda x: x * dl.rand_like(x), [F34]),
        "normal": (lambda x: x + dl.randn_like(x), [F34]),
        "integers": (lambda x: x * dl.randint_like(x, 5), [F34]),
        "bernoulli": (lambda x: dl.bernoulli(dl.sigmoid(x)), [F34]),
        "draw": (lambda x: _apply("draw", distribution="standard_gamma", shape=(3, 4))(
            dl.exp(x)) + x, [F34]),
        "randperm": (lambda x: x[:, dl.randperm(4)], [F34]),
        "multinomial": (lambda x: dl.multinomial(dl.softmax(x, dim=1), 2), [F34]),
    }
    cases.update({name: Case(name, call, tuple(specs)) for name, (call, specs) in table.items()})
    return cases


def _square(a: Any) -> Any:
    """A stack of matrices from values in [-2, 2], its diagonal shifted far from singular."""
    return a + 6.0 * np.eye(a.shape[-1])


def _spd(a: Any) -> Any:
    """A Aᵀ + I: symmetric positive-definite."""
    return a @ a.mT + np.eye(a.shape[-1])


def _linalg_cases() -> dict[str, Case]:
    """The linear-algebra primitives on stacks of matrices (finite values only: LAPACK
    refuses inf and NaN, and a replay refuses them alike)."""
    dl = _dl()
    la = dl.linalg
    S, R, W = ((2, 3, 3), (-2, 2)), ((2, 4, 3), (-2, 2)), ((2, 3, 5), (-2, 2))  # noqa: N806
    table = {
        "linalg_solve": (lambda a, b: la.solve(_square(a), b), [S, ((2, 3, 2), (-2, 2))]),
        "linalg_inv": (lambda a: la.inv(_square(a)), [S]),
        "linalg_det": (lambda a: la.det(a), [S]),
        "linalg_slogdet": (lambda a: la.slogdet(_square(a)).logabsdet, [S]),
        "linalg_det_sign": (lambda a: la.slogdet(a).sign, [S]),
        "linalg_cholesky": (lambda a: la.cholesky(_spd(a), upper=True), [S]),
        "linalg_qr": (lambda a: la.qr(a).Q * la.qr(a).R[..., :1, :], [R]),
        "linalg_eigh": (lambda a: la.eigh(_spd(a)).eigenvalues[..., None]
                        * la.eigh(_spd(a)).eigenvectors ** 2, [S]),
        "linalg_eigvalsh": (lambda a: la.eigvalsh(a + a.mT), [S]),
        "linalg_svd": (lambda a: la.svd(a, full_matrices=False).U ** 2
                       * la.svd(a, full_matrices=False).S[..., None, :], [W]),
        "linalg_svdvals": (lambda a: la.svdvals(a), [R]),
        "linalg_svd_complement": (lambda a: la.svd(a).U[..., 3:] ** 2
                                  + la.svd(a.mT).Vh[..., 3:, :].mT ** 2, [R]),
        "linalg_pinv": (lambda a: la.pinv(a), [R]),
        "linalg_matrix_exp": (lambda a: la.matrix_exp(a * 0.5), [S]),
    }
    return {name: Case(name, call, tuple(specs), edges=False)
            for name, (call, specs) in table.items()}


def primitive_cases() -> dict[str, Case]:
    """Every built-in primitive of the registry, by name: one entry each."""
    return {**_elementwise_cases(), **_structural_cases(), **_no_derivative_cases(),
            **_linalg_cases(), **_complex_cases()}


def _complex_cases() -> dict[str, Case]:
    """The complex-number primitives and the Fourier transforms' (:mod:`.samples_complex`)."""
    return {name: Case(name, call, tuple(specs))
            for name, (call, specs) in complex_table(_dl(), F34).items()}


def _linalg_function_cases() -> dict[str, Case]:
    """difflab.linalg's functions (and PyTorch's older names, dl.det, x.inverse(), ...)
    that the primitives' entries do not reach, on well-posed stacks of matrices."""
    dl = _dl()
    la = dl.linalg
    S, R = ((2, 3, 3), (-2, 2)), ((2, 4, 3), (-2, 2))  # noqa: N806
    V3, M66 = ((2, 3), (-2, 2)), ((6, 6), (-2, 2))  # noqa: N806
    table = {
        "dl.linalg.solve": (lambda a, b: la.solve(_square(a), b), [S, V3]),
        "dl.linalg.inv": (lambda a: la.inv(_square(a)), [S]),
        "dl.linalg.det": (lambda a: la.det(a), [S]),
        "dl.linalg.slogdet": (lambda a: la.slogdet(_square(a)), [S]),
        "dl.linalg.cholesky": (lambda a: la.cholesky(_spd(a)), [S]),
        "dl.linalg.qr": (lambda a: la.qr(a), [R]),
        "dl.linalg.eigh": (lambda a: la.eigh(_spd(a)).eigenvalues, [S]),
        "dl.linalg.eigvalsh": (lambda a: la.eigvalsh(_spd(a), UPLO="U"), [S]),
        "dl.linalg.svd": (lambda a: la.svd(a).S, [R]),
        "dl.linalg.svdvals": (lambda a: la.svdvals(a), [R]),
        "dl.linalg.pinv": (lambda a: la.pinv(a, atol=1e-3), [R]),
        "dl.linalg.matrix_exp": (lambda a: la.matrix_exp(a * 0.5), [S]),
        "dl.linalg.solve_ex": (lambda a, b: la.solve_ex(_square(a), b).result,
                               [S, ((2, 3), (-2, 2))]),
        "dl.linalg.inv_ex": (lambda a: la.inv_ex(_square(a)).inverse, [S]),
        "dl.linalg.cholesky_ex": (lambda a: la.cholesky_ex(_spd(a)).L, [S]),
        "dl.linalg.lstsq": (lambda a, b: la.lstsq(a, b).solution, [R, ((2, 4, 2), (-2, 2))]),
        "dl.linalg.solve_triangular": (lambda a, b: la.solve_triangular(
            _square(a), b, upper=True), [S, ((2, 3, 2), (-2, 2))]),
        "dl.linalg.tensorinv": (lambda a: la.tensorinv(_square(a * 0.3).reshape(6, 2, 3),
                                                       ind=1), [M66]),
        "dl.linalg.tensorsolve": (lambda a, b: la.tensorsolve(
            _square(a * 0.3).reshape(2, 3, 2, 3), b), [M66, ((2, 3), (-2, 2))]),
        "dl.linalg.matrix_power": (lambda a: la.matrix_power(a, 3) + la.matrix_power(
            _square(a), -2), [S]),
        "dl.linalg.norm": (lambda a: la.norm(a, dim=(-2, -1)) + la.norm(a, ord=2, dim=-1)
                           .sum(-1), [S]),
        "dl.linalg.vector_norm": (lambda x: la.vector_norm(x, 3.0, dim=-1)
                                  + la.vector_norm(x, float("inf"), dim=-1), [V3]),
        "dl.linalg.matrix_norm": (lambda a: la.matrix_norm(a, "nuc") + la.matrix_norm(a, 1)
                                  + la.matrix_norm(a, -2), [S]),
        "dl.linalg.cond": (lambda a: la.cond(_square(a)) + la.cond(_square(a), "fro"), [S]),
        "dl.linalg.matrix_rank": (lambda a: la.matrix_rank(a), [S]),
        "dl.linalg.multi_dot": (lambda a, b: la.multi_dot([a[0], b[0].mT, a[1]]), [S, S]),
        "dl.linalg.cross": (lambda x, y: la.cross(x, y), [V3, V3]),
        "dl.linalg.vecdot": (lambda x, y: la.vecdot(x, y), [V3, V3]),
        "dl.linalg.vander": (lambda x: la.vander(x, N=4), [V3]),
        "dl.linalg.householder_product": (lambda a, t: la.householder_product(a, t),
                                          [R, V3]),
        "dl.linalg.diagonal": (lambda a: la.diagonal(a, offset=1), [S]),
        "dl.linalg.matmul": (lambda a, b: la.matmul(a, b), [S, S]),
        "dl.linalg.lu_factor": (lambda a: la.lu_factor(a), [S]),
        "dl.linalg.lu_factor_ex": (lambda a: la.lu_factor_ex(a).LU, [R]),
        "dl.linalg.lu": (lambda a: la.lu(a), [R]),
        "dl.linalg.lu_solve": (lambda a, b: la.lu_solve(*la.lu_factor(_square(a)), b),
                               [S, ((2, 3, 2), (-2, 2))]),
        "dl.linalg.ldl_factor": (lambda a: la.ldl_factor(_spd(a)).LD, [S]),
        "dl.linalg.ldl_factor_ex": (lambda a: la.ldl_factor_ex(_spd(a)).LD, [S]),
        "dl.linalg.ldl_solve": (lambda a, b: la.ldl_solve(*la.ldl_factor(_spd(a)), b),
                                [S, ((2, 3, 2), (-2, 2))]),
        "dl.lu": (lambda a: dl.lu(a)[0], [S]),
        "Tensor.lu": (lambda a: a.lu()[0], [R]),
        "dl.inverse": (lambda a: dl.inverse(_square(a)), [S]),
        "Tensor.inverse": (lambda a: _square(a).inverse(), [S]),
        "dl.det": (lambda a: dl.det(a), [S]),
        "Tensor.det": (lambda a: a.det(), [S]),
        "dl.logdet": (lambda a: dl.logdet(_square(a)), [S]),
        "Tensor.logdet": (lambda a: a.logdet(), [S]),
        "dl.slogdet": (lambda a: dl.slogdet(a).logabsdet, [S]),
        "Tensor.slogdet": (lambda a: a.slogdet().logabsdet, [S]),
        "dl.cholesky": (lambda a: dl.cholesky(_spd(a)), [S]),
        "Tensor.cholesky": (lambda a: _spd(a).cholesky(upper=True), [S]),
        "dl.qr": (lambda a: dl.qr(a).R, [R]),
        "Tensor.qr": (lambda a: a.qr().Q ** 2, [R]),
        "dl.svd": (lambda a: dl.svd(a).S + (dl.svd(a).V ** 2).sum(-1), [R]),
        "Tensor.svd": (lambda a: a.svd().U ** 2, [R]),
        "dl.pinverse": (lambda a: dl.pinverse(a), [R]),
        "Tensor.pinverse": (lambda a: a.pinverse(), [R]),
        "dl.matrix_power": (lambda a: dl.matrix_power(a, 2), [S]),
        "Tensor.matrix_power": (lambda a: a.matrix_power(0) + a.matrix_power(1), [S]),
        "dl.matrix_exp": (lambda a: dl.matrix_exp(a * 0.5), [S]),
        "Tensor.matrix_exp": (lambda a: (a * 0.5).matrix_exp(), [S]),
    }
    return {name: Case(name, call, tuple(specs), edges=False)
            for name, (call, specs) in table.items()}


def function_cases() -> dict[str, Case]:
    """Public functions and methods that need more than one float tensor, by their name
    (``dl.gather``, ``Tensor.topk``): the issue's cases among them."""
    dl = _dl()
    F = dl.nn.functional  # noqa: N806
    V, IMG = ((6,), (-2, 2)), ((1, 2, 4, 4), (-2, 2))  # noqa: N806
    M23, M32 = ((2, 3), (-2, 2)), ((3, 2), (-2, 2))  # noqa: N806
    I5, V5 = ((5,), (INT, 6)), ((5,), (-2, 2))  # noqa: N806
    B22, B23, B32 = ((2, 2, 2), (-2, 2)), ((2, 2, 3), (-2, 2)), ((2, 3, 2), (-2, 2))  # noqa: N806
    table = {
        "dl.where": (lambda x: dl.where(dl.isinf(x), dl.zeros_like(x), x), [V]),
        # the joining functions take a list (one tensor is refused, as in PyTorch)
        **{f"dl.{name}": (lambda a, b, _n=name: getattr(dl, _n)([a, b]), [M23, M23])
           for name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack",
                        "row_stack", "dstack", "column_stack")},
        "Tensor.sort": (lambda x: x.sort().values, [V]),
        "Tensor.argsort": (lambda x: x[x.argsort()], [V]),
        "Tensor.topk": (lambda x: x.topk(2), [V]),
        "dl.logical_and": (lambda x: dl.logical_and(x > 0, dl.logical_not(x > 1)), [V]),
        "dl.isclose": (lambda x: dl.isclose(x, x.round()), [V]),
        "dl.round": (lambda x: dl.round(x * 100, decimals=-1), [V]),
        "Tensor.round": (lambda x: x.round(decimals=2), [V]),
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
        # (matrix products and shapes: the arguments a float tensor alone cannot give)
        "dl.baddbmm": (lambda c, a, b: dl.baddbmm(c, a, b, beta=0.5, alpha=2.0), [B22, B23, B32]),
        "Tensor.baddbmm": (lambda c, a, b: c.baddbmm(a, b), [B22, B23, B32]),
        "dl.bmm": (lambda a, b: dl.bmm(a, b), [B23, B32]),
        "Tensor.bmm": (lambda a, b: a.bmm(b), [B23, B32]),
        "dl.dot": (lambda a, b: dl.dot(a, b), [V, V]),
        "Tensor.dot": (lambda a, b: a.dot(b), [V, V]),
        "dl.einsum": (lambda a, b: dl.einsum("ij,jk->ik", a, b), [M23, M32]),
        "dl.outer": (lambda a, b: dl.outer(a, b), [V, V]),
        "dl.ger": (lambda a, b: dl.ger(a, b), [V, V]),
        "Tensor.outer": (lambda a, b: a.outer(b), [V, V]),
        "Tensor.ger": (lambda a, b: a.ger(b), [V, V]),
        "dl.matmul": (lambda a, b: dl.matmul(a, b), [M23, M32]),
        "Tensor.matmul": (lambda a, b: a.matmul(b), [M23, M32]),
        "dl.mm": (lambda a, b: dl.mm(a, b), [M23, M32]),
        "Tensor.mm": (lambda a, b: a.mm(b), [M23, M32]),
        "dl.mv": (lambda a, v: dl.mv(a, v), [M23, ((3,), (-2, 2))]),
        "Tensor.mv": (lambda a, v: a.mv(v), [M23, ((3,), (-2, 2))]),
        "dl.masked_fill": (lambda x: dl.masked_fill(x, x < 0, -1.0), [V]),
        "dl.permute": (lambda x: dl.permute(x, (1, 0)), [M23]),
        "Tensor.permute": (lambda x: x.permute(1, 0), [M23]),
        "dl.reshape": (lambda x: dl.reshape(x, (3, 2)), [M23]),
        "Tensor.reshape": (lambda x: x.reshape(3, 2), [M23]),
        "Tensor.view": (lambda x: x.view(3, 2), [M23]),
        "dl.swapaxes": (lambda x: dl.swapaxes(x, 0, 1), [M23]),
        "Tensor.swapaxes": (lambda x: x.swapaxes(0, 1), [M23]),
        "Tensor.transpose": (lambda x: x.transpose(0, 1), [M23]),
        "Tensor.broadcast_to": (lambda x: x.broadcast_to((2, 6)), [V]),
        "Tensor.astype": (lambda x: x.astype(dl.float32), [V]),
        "dl.astype": (lambda x: dl.astype(x, dl.float32) * x, [V]),
        "dl.to_device": (lambda x: dl.to_device(x, "cpu") * x, [V]),
        "Tensor.to_device": (lambda x: x.to_device("cpu") * x, [V]),
        "Tensor.expand": (lambda x: x.expand(2, 6), [V]),
        "Tensor.repeat": (lambda x: x.repeat(2, 1), [M23]),
        "dl.scatter_add": (lambda x, i: dl.scatter_add(x, 0, i, x * 2), [V, ((6,), (INT, 6))]),
        "Tensor.scatter_add": (lambda x, i: x.scatter_add(0, i, x), [V, ((6,), (INT, 6))]),
        "Tensor.scatter": (lambda x, i: x.scatter(0, i, x * 3), [V, ((6,), (INT, 6))]),
        "Tensor.gather": (lambda x, i: x.gather(0, i), [V, ((4,), (INT, 6))]),
        "Tensor.index_select": (lambda x, i: x.index_select(0, i), [V, ((4,), (INT, 6))]),
        # (neural-network functions: weights, labels, windows)
        "F.adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [IMG]),
        "F.avg_pool2d": (lambda x: F.avg_pool2d(x, 2), [IMG]),
        "F.max_pool2d": (lambda x: F.max_pool2d(x, 2), [IMG]),
        "F.conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [IMG, ((3, 2, 3, 3), (-2, 2))]),
        "F.batch_norm": (lambda x: F.batch_norm(x, None, None, training=True), [IMG]),
        "F.layer_norm": (lambda x: F.layer_norm(x, (4,)), [IMG]),
        "F.binary_cross_entropy": (lambda p, y: F.binary_cross_entropy(p, y),
                                   [((6,), (0.01, 0.99)), ((6,), (0, 1))]),
        "F.embedding": (lambda i, w: F.embedding(i, w), [((5,), (INT, 6)), ((6, 3), (-2, 2))]),
        "F.nll_loss": (lambda z, t: F.nll_loss(z, t), [((5, 4), (-2, 2)), ((5,), (INT, 4))]),
        "F.one_hot": (lambda i: F.one_hot(i, 6), [((5,), (INT, 6))]),
        "F.pad": (lambda x: F.pad(x, (1, 2)), [IMG]),
        "F.scaled_dot_product_attention": (lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v), [((2, 3, 4), (-2, 2)), ((2, 5, 4), (-2, 2)), ((2, 5, 4), (-2, 2))]),
        # (the layers of PyTorch's breadth: composites of the primitives above)
        "F.adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (2, 3)), [IMG]),
        "F.adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (None, 3, 2)),
                                  [((1, 2, 2, 4, 5), (-2, 2))]),
        "F.adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, (1, None, 3)),
                                  [((1, 2, 2, 4, 5), (-2, 2))]),
        "F.affine_grid": (lambda t: F.affine_grid(t, (1, 1, 4, 4), align_corners=False),
                          [((1, 2, 3), (-1, 1))]),
        "F.bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c),
                       [((3, 2), (-2, 2)), ((3, 4), (-2, 2)), ((5, 2, 4), (-1, 1)),
                        ((5,), (-1, 1))]),
        "F.conv1d": (lambda x, w: F.conv1d(x, w, padding=1),
                     [((1, 2, 8), (-2, 2)), ((3, 2, 3), (-1, 1))]),
        "F.conv3d": (lambda x, w: F.conv3d(x, w),
                     [((1, 1, 3, 4, 4), (-2, 2)), ((2, 1, 2, 2, 2), (-1, 1))]),
        "F.conv_transpose1d": (lambda x, w: F.conv_transpose1d(x, w, stride=2),
                               [((1, 2, 5), (-2, 2)), ((2, 3, 3), (-1, 1))]),
        "F.conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2),
                               [IMG, ((2, 3, 3, 3), (-1, 1))]),
        "F.cosine_embedding_loss": (lambda a, b, y: F.cosine_embedding_loss(a, b, y * 2 - 1),
                                    [((4, 3), (-2, 2)), ((4, 3), (-2, 2)), ((4,), (INT, 2))]),
        "F.ctc_loss": (lambda z, t: F.ctc_loss(z.log_softmax(2), t + 1, [6], [2]),
                       [((6, 1, 4), (-2, 2)), ((1, 2), (INT, 3))]),
        "F.dropout2d": (lambda x: F.dropout2d(x, 0.3), [IMG]),
        "F.embedding_bag": (lambda i, w: F.embedding_bag(i, w, dl.tensor([0, 2])),
                            [((6,), (INT, 5)), ((5, 3), (-2, 2))]),
        "F.fold": (lambda x: F.fold(x, (3, 3), 2), [((1, 8, 4), (-2, 2))]),
        "F.gaussian_nll_loss": (lambda x, t, v: F.gaussian_nll_loss(x, t, v),
                                [((4,), (-2, 2)), ((4,), (-2, 2)), ((4,), (0.5, 2))]),
        "F.glu": (lambda x: F.glu(x, dim=-1), [((2, 4), (-2, 2))]),
        "F.grid_sample": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                          [IMG, ((1, 3, 3, 2), (-1, 1))]),
        "F.instance_norm": (lambda x: F.instance_norm(x), [IMG]),
        "F.interpolate": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear",
                                                  align_corners=False), [IMG]),
        "F.local_response_norm": (lambda x: F.local_response_norm(x, 2), [IMG]),
        "F.margin_ranking_loss": (lambda a, b, y: F.margin_ranking_loss(a, b, y * 2 - 1),
                                  [((4,), (-2, 2)), ((4,), (-2, 2)), ((4,), (INT, 2))]),
        "F.pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), [((1, 4, 2, 2), (-2, 2))]),
        "F.pixel_unshuffle": (lambda x: F.pixel_unshuffle(x, 2), [((1, 1, 4, 4), (-2, 2))]),
        "F.prelu": (lambda x, w: F.prelu(x, w), [IMG, ((2,), (0, 1))]),
        "F.rms_norm": (lambda x: F.rms_norm(x, (4,)), [IMG]),
        "F.threshold": (lambda x: F.threshold(x, 0.5, -1.0), [V]),
        "F.triplet_margin_loss": (lambda a, p, n: F.triplet_margin_loss(a, p, n),
                                  [((4, 3), (-2, 2)), ((4, 3), (-2, 2)), ((4, 3), (-2, 2))]),
        "F.unfold": (lambda x: F.unfold(x, 2), [IMG]),
        # (joining, picking and products composed of primitives: functions_joining/_picking)
        "dl.addbmm": (lambda c, a, b: dl.addbmm(c, a, b, beta=0.5, alpha=2.0),
                      [((2, 2), (-2, 2)), B23, B32]),
        "dl.addmm": (lambda c, a, b: dl.addmm(c, a, b, beta=0.5, alpha=2.0),
                     [((2, 2), (-2, 2)), M23, M32]),
        "dl.addmv": (lambda c, a, v: dl.addmv(c, a, v, alpha=-1.0),
                     [((2,), (-2, 2)), M23, ((3,), (-2, 2))]),
        "dl.addr": (lambda c, a, b: dl.addr(c, a, b, beta=0.0), [M23, ((2,), (-2, 2)),
                                                                 ((3,), (-2, 2))]),
        "dl.broadcast_shapes": (lambda x: dl.zeros(dl.broadcast_shapes(x.shape, (2, 1, 1))) + x,
                                [M23]),
        "dl.broadcast_to": (lambda x: dl.broadcast_to(x, (2, 6)), [V]),
        "dl.dsplit": (lambda x: dl.dsplit(x, 2), [B22]),
        "dl.moveaxis": (lambda x: dl.moveaxis(x, 0, 2), [B23]),
        "dl.movedim": (lambda x: dl.movedim(x, (0, 1), (2, 0)), [B23]),
        "dl.narrow": (lambda x: dl.narrow(x, 1, 1, 2), [M23]),
        "dl.select": (lambda x: dl.select(x, 1, -1), [M23]),
        "dl.swapdims": (lambda x: dl.swapdims(x, 0, 2), [B23]),
        "dl.tile": (lambda x: dl.tile(x, (2,)), [M23]),
        "dl.tril_indices": (lambda x: x[tuple(dl.tril_indices(2, 3, 1))], [M23]),
        "dl.triu_indices": (lambda x: x[tuple(dl.triu_indices(2, 3, -1))], [M23]),
        "dl.vander": (lambda x: dl.vander(x, 3), [V]),
        "dl.vdot": (lambda a, b: dl.vdot(a, b), [V, V]),
        # complex values: built from real inputs, read back as real ones
        "dl.imag": (lambda a, b: dl.imag(dl.complex(a, b) * dl.complex(b, a)), [V, V]),
        "dl.view_as_real": (lambda a, b: dl.view_as_real(dl.complex(a, b) ** 2), [V, V]),
        "dl.view_as_complex": (lambda a: dl.view_as_complex(a * a).abs(), [M32]),
        "dl.take": (lambda x, i: dl.take(x, i), [M23, ((4,), (INT, 6))]),
        "dl.take_along_dim": (lambda x: dl.take_along_dim(x, x.argsort(dim=1), dim=1), [M23]),
        "dl.tensordot": (lambda a, b: dl.tensordot(a, b, dims=([0], [1])), [M32, M23]),
        "dl.kron": (lambda a, b: dl.kron(a, b), [M23, ((2,), (-2, 2))]),
        "dl.diag_embed": (lambda x: dl.diag_embed(x, offset=-1), [M23]),
        "dl.diagonal": (lambda x: dl.diagonal(x, 1, 2, 0), [B23]),
        "dl.block_diag": (lambda a, b: dl.block_diag(a, b), [M23, V]),
        "dl.meshgrid": (lambda a, b: dl.meshgrid(a, b, indexing="xy"), [V, ((3,), (-2, 2))]),
        "dl.tensor_split": (lambda x: dl.tensor_split(x, [1, 4]), [V]),
        # (pointwise formulas and order statistics composed of primitives: functions_math)
        "dl.addcdiv": (lambda x, a, b: dl.addcdiv(x, a, b, value=0.5), [V, V, ((6,), (0.5, 2))]),
        "dl.addcmul": (lambda x, a, b: dl.addcmul(x, a, b, value=-2.0), [V, V, V]),
        "dl.lerp": (lambda a, b, w: dl.lerp(a, b, w), [V, V, ((6,), (0, 1))]),
        "dl.kthvalue": (lambda x: dl.kthvalue(x.reshape(2, 3), 2, dim=1), [V]),
        "dl.median": (lambda x: dl.median(x.reshape(3, 2), dim=0), [V]),
        "dl.nanmedian": (lambda x: dl.nanmedian(x), [V]),
        "dl.isin": (lambda x: dl.isin(x.round(), dl.tensor([0.0, 1.0])), [V]),
        "dl.cov": (lambda x, w: dl.cov(x, aweights=w), [M23, ((3,), (0.5, 2))]),
        "dl.cdist": (lambda a, b: dl.cdist(a, b, p=1.5), [M23, ((4, 3), (-2, 2))]),
        "dl.bucketize": (lambda x: dl.bucketize(x, dl.tensor([-1.0, 0.0, 1.5])), [V]),
        "dl.bitwise_not": (lambda i: dl.bitwise_not(i), [((5,), (INT, 6))]),
        "dl.polygamma": (lambda x: dl.polygamma(2, x), [((6,), (0.3, 4))]),
        "Tensor.polygamma": (lambda x: x.polygamma(1), [((6,), (0.3, 4))]),
        "dl.zeta": (lambda s, q: dl.zeta(s, q), [((6,), (1.5, 4)), ((6,), (0.3, 4))]),
        "dl.gammainc": (lambda a, x: dl.gammainc(a, x), [((6,), (0.3, 4)), ((6,), (0.3, 4))]),
        "dl.gammaincc": (lambda a, x: dl.gammaincc(a, x), [((6,), (0.3, 4)), ((6,), (0.3, 4))]),
        "Tensor.bitwise_not": (lambda x: (x > 0).bitwise_not(), [V]),
        "dl.repeat_interleave": (lambda x: dl.repeat_interleave(x.reshape(2, 3), 2, dim=1), [V]),
        "Tensor.repeat_interleave": (lambda x: x.repeat_interleave(3), [V]),
        "dl.quantile": (lambda x: dl.quantile(x, 0.3), [V]),
        "Tensor.quantile": (lambda x: x.reshape(2, 3).quantile(0.75, dim=1), [V]),
        "dl.nanquantile": (lambda x: dl.nanquantile(x, 0.5), [V]),
        "dl.renorm": (lambda x: dl.renorm(x.reshape(2, 3), 2, 0, 1.0), [V]),
        "Tensor.renorm": (lambda x: x.reshape(3, 2).renorm(1, 1, 2.0), [V]),
        "dl.combinations": (lambda x: dl.combinations(x, 2), [V]),
        "dl.unravel_index": (lambda i: dl.unravel_index(i, (2, 3)), [((4,), (INT, 6))]),
        "dl.searchsorted": (lambda s, v: dl.searchsorted(s.sort().values, v, right=True),
                            [V, ((4,), (-2, 2))]),
        "dl.cummax": (lambda x: dl.cummax(x.reshape(2, 3), 1), [V]),
        "dl.heaviside": (lambda x, v: dl.heaviside(x.round(), v), [V, V]),
        "dl.trapezoid": (lambda y, x: dl.trapezoid(y, x), [V, V]),
        "Tensor.addcdiv": (lambda x, a, b: x.addcdiv(a, b), [V, V, ((6,), (0.5, 2))]),
        "Tensor.addcmul": (lambda x, a, b: x.addcmul(a, b, value=3), [V, V, V]),
        "Tensor.lerp": (lambda a, b: a.lerp(b, 0.25), [V, V]),
        "Tensor.addmm": (lambda c, a, b: c.addmm(a, b), [((2, 2), (-2, 2)), M23, M32]),
        "Tensor.addmv": (lambda c, a, v: c.addmv(a, v), [((2,), (-2, 2)), M23, ((3,), (-2, 2))]),
        "Tensor.addr": (lambda c, a, b: c.addr(a, b), [M23, ((2,), (-2, 2)), ((3,), (-2, 2))]),
        "Tensor.addbmm": (lambda c, a, b: c.addbmm(a, b), [((2, 2), (-2, 2)), B23, B32]),
        "Tensor.dsplit": (lambda x: x.dsplit([1]), [B23]),
        "Tensor.movedim": (lambda x: x.movedim(0, -1), [B23]),
        "Tensor.moveaxis": (lambda x: x.moveaxis((0, 1), (1, 0)), [B23]),
        "Tensor.swapdims": (lambda x: x.swapdims(2, 1), [B23]),
        "Tensor.narrow": (lambda x: x.narrow(0, 2, 3), [V]),
        "Tensor.select": (lambda x: x.select(0, 1), [M23]),
        "dl.unflatten": (lambda x: dl.unflatten(x, 0, (2, -1)), [V]),
        "Tensor.unflatten": (lambda x: x.unflatten(1, (3, 1)), [M23]),
        # (selecting by masks and writing by index lists: functions_selecting)
        "dl.masked_select": (lambda x: dl.masked_select(x, x > 0), [V]),
        "Tensor.masked_select": (lambda x: x.masked_select(x.reshape(2, 3) < 0), [M23]),
        "Tensor.masked_scatter": (lambda x, s: x.masked_scatter(x > 0, s), [V, V]),
        "dl.masked_scatter": (lambda x, s: dl.masked_scatter(x, x < 0, s), [V, V]),
        "dl.index_add": (lambda x, s, i: dl.index_add(x, 0, i, s, alpha=2.0),
                         [V, ((4,), (-2, 2)), ((4,), (INT, 6))]),
        "Tensor.index_add": (lambda x, s, i: x.index_add(1, i, s),
                             [M23, ((2, 4), (-2, 2)), ((4,), (INT, 3))]),
        "dl.index_fill": (lambda x, i: dl.index_fill(x, 0, i, -1.0), [V, ((2,), (INT, 6))]),
        "Tensor.index_fill": (lambda x, i: x.index_fill(1, i, 0.5), [M23, ((2,), (INT, 3))]),
        # (distinct values, counts, integers: functions_counting)
        "dl.unique": (lambda x: dl.unique(x.round(), return_inverse=True, return_counts=True),
                      [V]),
        "Tensor.unique": (lambda x: x.reshape(3, 2).round().unique(dim=0), [V]),
        "dl.unique_consecutive": (lambda x: dl.unique_consecutive(x.round(), return_counts=True),
                                  [V]),
        "dl.mode": (lambda x: dl.mode(x.round().reshape(2, 3), 1), [V]),
        "dl.bincount": (lambda i, w: dl.bincount(i, w, minlength=7), [I5, V5]),
        "Tensor.bincount": (lambda i: i.bincount(), [I5]),
        "dl.cross": (lambda a, b: dl.cross(a, b, dim=1), [M23, M23]),
        **{f"{owner}.{name}": ((lambda a, b, name=name: getattr(dl, name)(a, b))
                               if owner == "dl" else
                               (lambda a, b, name=name: getattr(a, name)(b)), [I5, I5])
           for owner in ("dl", "Tensor")
           for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm")},
        # (writing into copies: functions_scattering)
        "dl.scatter_reduce": (lambda x, s, i: dl.scatter_reduce(x, 0, i, s, "amax"),
                              [V, ((4,), (-2, 2)), ((4,), (INT, 6))]),
        "Tensor.scatter_reduce": (lambda x, s, i: x.scatter_reduce(
            1, i, s, "prod", include_self=False), [M23, ((2, 4), (-2, 2)), ((2, 4), (INT, 3))]),
        "dl.index_copy": (lambda x, s, i: dl.index_copy(x, 1, i, s),
                          [M23, ((2, 2), (-2, 2)), ((2,), (INT, 3))]),
        "Tensor.index_copy": (lambda x, s, i: x.index_copy(0, i, s),
                              [V, ((3,), (-2, 2)), ((3,), (INT, 6))]),
        "dl.index_reduce": (lambda x, s, i: dl.index_reduce(x, 1, i, s, "mean"),
                            [M23, ((2, 4), (-2, 2)), ((4,), (INT, 3))]),
        "Tensor.index_reduce": (lambda x, s, i: x.index_reduce(0, i, s, "amin",
                                                                include_self=False),
                                [V, ((4,), (-2, 2)), ((4,), (INT, 6))]),
        "dl.select_scatter": (lambda x, s: dl.select_scatter(x, s, 1, -1), [M23, ((2,), (-2, 2))]),
        "Tensor.select_scatter": (lambda x, s: x.select_scatter(s, 0, 0), [M23, ((3,), (-2, 2))]),
        "dl.slice_scatter": (lambda x, s: dl.slice_scatter(x, s, 1, 0, 3, 2),
                             [M23, ((2, 2), (-2, 2))]),
        "Tensor.slice_scatter": (lambda x, s: x.slice_scatter(s, start=2), [V, ((4,), (-2, 2))]),
        "dl.diagonal_scatter": (lambda x, s: dl.diagonal_scatter(x, s, 1), [M23, ((2,), (-2, 2))]),
        "Tensor.diagonal_scatter": (lambda x, s: x.diagonal_scatter(s, 1, 1, 2),
                                    [B23, ((2, 2), (-2, 2))]),
        "dl.index_put": (lambda x, v, i: dl.index_put(x, (i,), v, accumulate=True),
                         [V, ((4,), (-2, 2)), ((4,), (INT, 6))]),
        "Tensor.index_put": (lambda x, v, i: x.index_put((i,), v),
                             [V, ((1,), (-2, 2)), ((4,), (INT, 6))]),
    }
    table.update({**nn_breadth_table(dl, INT), **torch_names_table(dl, INT),
                  **fourier_function_table(dl)})
    cases = {name: Case(name, call, tuple(specs)) for name, (call, specs) in table.items()}
    return {**cases, **_linalg_function_cases(), **same_function_cases(dl, cases)}


# ------------------------------------------------------------- probing the API

_CREATION = ("arange linspace logspace zeros ones full empty eye tensor as_tensor from_numpy "
             "rand randn randint randperm rand_like randn_like randint_like bernoulli "
             "multinomial normal poisson zeros_like ones_like full_like empty_like range "
             "new_tensor new_zeros new_ones new_full new_empty new scalar_tensor empty_strided "
             "frombuffer from_dlpack hann_window hamming_window blackman_window "
             "bartlett_window kaiser_window fftfreq rfftfreq")
_NOT_VALUES = ("manual_seed seed initial_seed get_rng_state set_rng_state no_grad enable_grad "
               "set_grad_enabled is_grad_enabled inference_mode is_tensor is_floating_point "
               "is_complex numel get_default_dtype set_default_dtype set_printoptions device "
               "get_default_device set_default_device register_primitive register_type "
               "record_primitive save load compile use_deterministic_algorithms "
               "set_flush_denormal can_cast promote_types result_type dim ndimension size "
               "nelement type backward retain_grad requires_grad_ detach_ "
               "register_post_accumulate_grad_hook register_hook cuda cpu to element_size stride "
               "is_contiguous data_ptr storage_offset is_inference_mode_enabled is_storage "
               "is_pinned is_inference "
               "are_deterministic_algorithms_enabled "
               "is_deterministic_algorithms_warn_only_enabled set_float32_matmul_precision "
               "get_float32_matmul_precision get_num_threads set_num_threads "
               "get_num_interop_threads set_num_interop_threads set_warn_always "
               "is_warn_always_enabled typename to_dlpack get_device is_conj is_neg "
               "is_same_size is_shared is_signed")
_TRANSFORMS = "derivative grad hessian jacobian jvp vjp vmap"
_VALUE_READS = "item tolist numpy equal allclose is_nonzero"

#: Public names that compute no tensor from tensor values, each with why.
NOT_COMPUTATIONS: dict[str, str] = {
    **{n: "makes a tensor from numbers, a shape or a seed" for n in _CREATION.split()},
    **{n: "a setting, a type, metadata or autograd control" for n in _NOT_VALUES.split()},
    **{n: "a derivative transform (it calls the function)" for n in _TRANSFORMS.split()},
    **{n: "reads a value into Python (tracing warns)" for n in _VALUE_READS.split()},
}


def exempt(name: str) -> str | None:
    """Why the public ``name`` needs no case (``None``: it computes, so it needs one)."""
    if name in NOT_COMPUTATIONS:
        return NOT_COMPUTATIONS[name]
    if name.endswith("_"):
        return "in place (tracing refuses a traced tensor changed in place)"
    return None


def public_callables() -> Iterator[tuple[str, Any, Any]]:
    """(``dl.<name>``, ``Tensor.<name>``, ``F.<name>``, ``dl.linalg.<name>`` or
    ``dl.fft.<name>``, owner, name) for each public function or method (``F`` is
    ``difflab.nn.functional``)."""
    dl = _dl()
    for owner, prefix in ((dl, "dl."), (dl.Tensor, "Tensor."), (dl.nn.functional, "F."),
                          (dl.linalg, "dl.linalg."), (dl.fft, "dl.fft.")):
        for name in sorted(dir(owner)):
            value = getattr(owner, name)
            if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value) \
                    or not callable(value):
                continue
            yield prefix + name, owner, name


X, Y = ((2, 3), (-2, 2)), ((2, 3), (-2, 2))

#: The ways a probe calls a function: on one tensor, on two of one shape, or with dim 1.
PROBES = ((X,), (X, Y), (X, "dim"))


def _probe_call(owner: Any, name: str, probe: tuple) -> Callable:
    """``dl.name(x)``, ``dl.name(x, y)``, ``dl.name(x, 1)``, or the method forms."""
    with_dim = probe[-1] == "dim"
    if isinstance(owner, type):  # a Tensor method: the first tensor is self
        if with_dim:
            return lambda t: getattr(t, name)(1)
        return lambda t, *rest: getattr(t, name)(*rest)
    if with_dim:
        return lambda t: getattr(owner, name)(t, 1)
    return lambda *ts: getattr(owner, name)(*ts)


def probe_cases() -> Iterator[Case]:
    """Each public ``difflab.<name>`` and ``Tensor.<name>`` that computes tensors from one
    float tensor, two of one shape, or one and dim 1 (``dl.exp(x)``, ``x.argsort()``,
    ``dl.add(x, y)``, ``x.cumsum(1)``) becomes a case; the rest need an entry of
    :func:`function_cases`."""
    dl = _dl()
    x = dl.tensor(np.linspace(-0.9, 0.8, 6).reshape(2, 3))
    y = dl.tensor(np.linspace(1.1, -0.7, 6).reshape(2, 3))
    explicit = set(function_cases())  # (entries of their own: the probe leaves them alone)
    for label, owner, name in public_callables():
        if exempt(name) or label in explicit:
            continue
        for probe in PROBES:
            specs = tuple(p for p in probe if p != "dim")
            call = _probe_call(owner, name, probe)
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    result = call(*(x, y)[:len(specs)])
            except Exception:  # noqa: BLE001  (another form, or an entry of its own)
                continue
            if isinstance(result, dl.Tensor) or (isinstance(result, tuple) and result and all(
                    isinstance(r, dl.Tensor) for r in result)):
                yield Case(label, call, specs)
                break
