r"""Matrix primitives (``difflab.linalg``): forward next to JVP and VJP, the math cited.

Every primitive here maps a stack of matrices to a stack of results, batched
over the leading dimensions as NumPy's and PyTorch's ``linalg`` are.  The
rules are the standard matrix-derivative results, written once with the
array namespace ``xp``:

* Giles 2008, *An extended collection of matrix derivative results for
  forward and reverse mode automatic differentiation*: inverse, solve,
  determinant, log-determinant, matrix exponential (the block-matrix form of
  Najfeld & Havel 1995 and Mathias 1996);
* Murray 2016, *Differentiation of the Cholesky decomposition*;
* Walter & Lehmann 2018 and Seeger et al. 2017 (*Auto-differentiating linear
  algebra*): QR;
* Townsend 2016, *Differentiating the singular value decomposition*, and
  Seeger et al. 2017: the symmetric eigendecomposition and the SVD;
* Golub & Pereyra 1973: the pseudo-inverse at constant rank.

A rule that needs a solve, an inverse or a matrix exponential in its
derivative calls the primitive itself (``_call``): on arrays that is its
forward, and in a recorded backward (``create_graph=True``, ``xp`` is
``difflab.functions``) or on nested dual numbers it goes through the engine,
so second derivatives need no second copy of any rule.  For the same reason
a rule reads only its inputs and its output (never a by-product saved
beside them: that would be a constant in a recorded backward).

Decompositions with several results (``qr``, ``eigh``, ``svd``) return them
*packed* in one array, which ``difflab.linalg`` slices: eigh's (w; V) is an
``(n+1) × n`` stack with the eigenvalues in row 0.  Slicing is a primitive
with its own rule, so a result that is not used gets a zero adjoint.

This module holds the shared steps, the solves, inverses and determinants,
Cholesky, the pseudo-inverse and the matrix exponential;
:mod:`difflab.ops.linalg_spectral` the orthogonal decompositions (QR, the
symmetric eigenproblem, the SVD).

Symmetric inputs (``cholesky``, ``eigh``, ``eigvalsh``): the value reads the
lower triangle, as LAPACK (and PyTorch) do; the derivatives are those of
A ↦ f(½(A + Aᵀ)), PyTorch's convention: a symmetric gradient, and a JVP
that reads the symmetric part of the tangent.  On a symmetric input both
conventions agree in every symmetric direction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend
from difflab.ops.complex_numbers import refuse_complex
from difflab.ops.primitive import NoDerivative, Primitive
from difflab.ops.shapes import sum_to_shape


class LinAlgError(RuntimeError):
    """A matrix without the property an operation needs.

    Raised when a matrix is singular, not positive-definite, or a decomposition did not
    converge (PyTorch's ``torch.linalg.LinAlgError``).  A subclass of RuntimeError, so
    code that catches PyTorch's error class catches it too.

    Parameters
    ----------
    message : str
        What was wrong, and with which matrix.

    Examples
    --------
    >>> import difflab as dl
    >>> try:
    ...     dl.linalg.cholesky(dl.tensor([[1.0, 2.0], [2.0, 1.0]]))
    ... except dl.linalg.LinAlgError as error:
    ...     print(type(error).__name__, isinstance(error, RuntimeError))
    LinAlgError True
    """


# ------------------------------------------------------------------ shared steps


class _Scratch:
    """The ``ctx`` of a primitive applied on arrays inside another's rule (nothing kept)."""

    needs_input_grad: tuple = ()

    def save(self, *arrays: Any) -> None:
        pass


def _call(xp: Any, op: Any, *inputs: Any, **params: Any) -> Any:
    """Primitive ``op`` applied inside a rule: its forward on plain arrays; through the
    dispatch (``BIND``: recorded on tensors, pushed on dual numbers) otherwise."""
    if _routed(xp, *inputs):
        return BIND(op, *inputs, **params)
    return op.forward(_Scratch(), xp, *inputs, **params)


#: How a primitive is applied to values that are not plain arrays (tensors, dual numbers):
#: ``difflab.functions.bind``, which registers itself (it sits above this module).
BIND: Any = None


def register_bind(bind: Any) -> None:
    """Make ``bind(op, *inputs, **params)`` the dispatch of ``_call`` (``difflab.functions``
    calls this)."""
    global BIND
    BIND = bind


def _lift(tangent: Any, ndim: int) -> Any:
    """A tangent (k, *shape) with unit axes after k, up to ``ndim`` axes after it."""
    missing = ndim + 1 - tangent.ndim
    if missing <= 0:
        return tangent
    return tangent.reshape(tangent.shape[:1] + (1,) * missing + tuple(tangent.shape[1:]))


def _mT(xp: Any, x: Any) -> Any:
    return xp.swapaxes(x, -1, -2)


def _sym(xp: Any, x: Any) -> Any:
    return (x + _mT(xp, x)) * 0.5


def _constant(like: Any, kind: str, n: int, m: int | None = None) -> Any:
    """A constant matrix in ``like``'s dtype and on its device: ``"eye"``, ``"tril"`` (ones
    on and below the diagonal), ``"stril"`` (strictly below), ``"off"`` (off the diagonal)."""
    array = getattr(like, "array", like)
    while hasattr(array, "primal"):  # (a dual number: its innermost value)
        array = array.primal
        array = getattr(array, "array", array)
    xp = backend.array_module(array)
    dtype = array.dtype if getattr(array, "dtype", None) is not None else np.float64
    eye = xp.eye(n, m, dtype=dtype)
    if kind == "eye":
        return eye
    tril = xp.tril(xp.ones((n, n if m is None else m), dtype=dtype))
    return {"tril": tril, "stril": tril - eye, "off": 1 - eye}[kind]


def _diagonal(x: Any) -> Any:
    """The diagonal of every matrix of a stack (a product with I, then a row sum)."""
    return (x * _constant(x, "eye", x.shape[-2], x.shape[-1])).sum(axis=-1)


def _diag(v: Any) -> Any:
    """Matrices with ``v`` on their diagonals."""
    n = v.shape[-1]
    return v[..., None, :] * _constant(v, "eye", n)


def _square(what: str, a: Any) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{what}: A must be batches of square matrices, but they are "
                         f"{' by '.join(map(str, a.shape[-2:]))} matrices"
                         if a.ndim >= 2 else
                         f"{what}: The input tensor A must have at least 2 dimensions "
                         f"(a matrix or a stack of them), got shape {tuple(a.shape)}")


def check_matrix(what: str, a: Any) -> None:
    """The ValueError for an ``a`` that is no matrix or stack of them (fewer than 2
    dimensions), naming ``what``: every linear-algebra function's one check of it, run
    before any reads ``a.shape[-2]`` (which would fail with "tuple index out of range")."""
    if a.ndim < 2:
        raise ValueError(f"{what}: The input tensor A must have at least 2 dimensions "
                         f"(a matrix or a stack of them), got shape {tuple(a.shape)}")


def _lapack(what: str, problem: str, call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call(*args)`` with NumPy's ``LinAlgError`` as ours, saying what to do about it."""
    try:
        return call(*args, **kwargs)
    except np.linalg.LinAlgError as exc:
        raise LinAlgError(f"{what}: {problem} (LAPACK: {exc})") from None


def _finite_or_raise(what: str, problem: str, xp: Any, out: Any) -> Any:
    """CuPy reports a singular or indefinite matrix as NaN or inf, not as an error:
    raise as NumPy does (a copy of one flag to the host, as PyTorch's check syncs)."""
    if xp is not np and out.size and not bool(xp.isfinite(out).all()):
        raise LinAlgError(f"{what}: {problem} (or it holds inf or NaN)")
    return out


SINGULAR = ("The solver failed because the input matrix is singular (it has no inverse). "
            "For a least-squares answer use difflab.linalg.lstsq or pinv")
NOT_PD = ("The factorization could not be completed because the input is not "
          "positive-definite (a symmetric matrix with positive eigenvalues). Check it with "
          "difflab.linalg.eigvalsh, or add a multiple of the identity")


def _divide(xp: Any, x: Any, gaps: Any) -> Any:
    """x / gaps, with 0 where x is 0: the terms 0/0 of a rule dropped (a derivative
    that does not ask for them stays finite), the others kept, inf included."""
    return x / xp.where(x == 0, xp.ones_like(gaps), gaps)


def _routed(xp: Any, *inputs: Any) -> bool:
    """Whether a rule runs on values other than plain arrays: difflab's functions as ``xp``
    (a recorded backward), or inputs that are dual numbers (forward over forward, or a
    tensor whose values are dual numbers: forward over reverse).  A forward then applies
    its primitive to those values through the dispatch, which unwraps them one level."""
    if callable(getattr(xp, "apply", None)):
        return True
    return any(x is not None and not isinstance(x, np.ndarray) and not backend.is_gpu_array(x)
               for x in inputs)


# ----------------------------------------------------------------- solve, inverse


def _same_batch(xp: Any, a: Any, b: Any) -> tuple:
    """``a`` and ``b`` (a matrix of right-hand sides) broadcast to one batch shape: NumPy's
    solve broadcasts them itself, CuPy's does not."""
    if a.shape[:-2] == b.shape[:-2]:
        return a, b
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (xp.broadcast_to(a, batch + tuple(a.shape[-2:])),
            xp.broadcast_to(b, batch + tuple(b.shape[-2:])))


class Solve(Primitive):
    r"""X = A⁻¹B for square A and a stack of right-hand sides B (..., n, k).

    JVP (from AX = B): Ȧ X + A Ẋ = Ḃ, so Ẋ = A⁻¹(Ḃ − Ȧ X).
    VJP (its transpose, Giles 2008 §3.1): B̄ = A⁻ᵀ X̄, Ā = −B̄ Xᵀ,
    summed over the batch dimensions that were broadcast.
    """

    name = "linalg_solve"
    math = "Ẋ = A⁻¹(Ḃ − ȦX);  B̄ = A⁻ᵀX̄,  Ā = −B̄Xᵀ"
    description = "solution X of A X = B"

    @staticmethod
    def forward(ctx, xp, a, b):
        _square("linalg.solve", a)
        if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
            raise ValueError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                             f"AX = B ({tuple(a.shape)} and {tuple(b.shape)})")
        ctx.shapes = (tuple(a.shape), tuple(b.shape))
        if _routed(xp, a, b):  # dual numbers as values: the primitive on them (dispatched)
            x = BIND(Solve, a, b)
        else:
            x = _finite_or_raise("linalg.solve", SINGULAR, xp, _lapack(
                "linalg.solve", SINGULAR, xp.linalg.solve, *_same_batch(xp, a, b)))
        ctx.save(a, x)
        return x

    @staticmethod
    def vjp(ctx, xp, g, a, x):
        need_a, need_b = ctx.needs_input_grad
        gb = _call(xp, Solve, _mT(xp, a), g)
        ga = sum_to_shape(-xp.matmul(gb, _mT(xp, x)), ctx.shapes[0]) if need_a else None
        return ga, (sum_to_shape(gb, ctx.shapes[1]) if need_b else None)

    @staticmethod
    def jvp(ctx, xp, da, db, a, x):
        # (a tangent has one more axis in front than its value; where A or B was broadcast
        # against X's batch, unit axes after it line the tangent up with X)
        rhs = None if db is None else _lift(db, x.ndim)
        if da is not None:
            term = xp.matmul(_lift(da, x.ndim), x)
            rhs = -term if rhs is None else rhs - term
        return _call(xp, Solve, a, rhs)

    @staticmethod
    def symbolic(sp, a, b):
        return _per_matrix(lambda m, r: m.LUsolve(r), a, b)


class Inv(Primitive):
    r"""Y = A⁻¹.

    JVP (from AY = I): Ẏ = −Y Ȧ Y.  VJP (Giles 2008 §3.1): Ā = −Yᵀ Ȳ Yᵀ.
    """

    name = "linalg_inv"
    math = "Ẏ = −YȦY;  Ā = −YᵀȲYᵀ"
    description = "matrix inverse"
    numpy_function = np.linalg.inv  # np.linalg.inv(tensor or dual) reaches the rule

    @staticmethod
    def numpy_arguments(a):
        return (a,), {}

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.inv", a)
        y = BIND(Inv, a) if _routed(xp, a) else _finite_or_raise(
            "linalg.inv", SINGULAR, xp, _lapack("linalg.inv", SINGULAR, xp.linalg.inv, a))
        ctx.save(y)
        return y

    @staticmethod
    def vjp(ctx, xp, g, y):
        yt = _mT(xp, y)
        return (-xp.matmul(xp.matmul(yt, g), yt),)

    @staticmethod
    def jvp(ctx, xp, da, y):
        return -xp.matmul(xp.matmul(y, da), y)

    @staticmethod
    def symbolic(sp, a):
        return _per_matrix(lambda m: m.inv(), a)


# ------------------------------------------------------------------- determinants


def _cofactors(xp: Any, a: Any) -> Any:
    """C = det(A)·A⁻ᵀ, the cofactor matrix, also where A is singular (on arrays).

    From the SVD A = U S Vᵀ: C = det(U) det(V) U diag(Π_{j≠i} s_j) Vᵀ, the
    products of the other singular values taken without division (the
    cumulative products from both ends), so a zero singular value is exact.
    """
    u, s, vh = xp.linalg.svd(a)
    n = s.shape[-1]
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s, -1)[..., :-1]], axis=-1),
                               axis=-1), -1)
    others = before * after
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    c = xp.matmul(u * others[..., None, :], vh)
    return c * sign[..., None, None] if n else c


class Det(Primitive):
    r"""d = det A.

    JVP (Jacobi's formula, Giles 2008 §3.1): ḋ = d · tr(A⁻¹Ȧ) = Σᵢⱼ Cᵢⱼ Ȧᵢⱼ, with
    C = d A⁻ᵀ the cofactor matrix.  VJP: Ā = d̄ · C.  At a singular A the
    cofactors come from the SVD (still exact: the gradient of det at a
    singular matrix is its adjugate, not 0), as in PyTorch; a recorded
    backward (second order) there is refused with an error.
    """

    name = "linalg_det"
    math = "ḋ = tr(adj(A) Ȧ) = d·tr(A⁻¹Ȧ);  Ā = d̄ · d · A⁻ᵀ"
    description = "determinant"
    numpy_function = np.linalg.det

    @staticmethod
    def numpy_arguments(a):
        return (a,), {}

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.det", a)
        d = BIND(Det, a) if _routed(xp, a) else xp.linalg.det(a)
        ctx.save(a, d)
        return d

    @staticmethod
    def cofactors(xp, a, d):
        if _routed(xp, a):  # recorded, or dual numbers: d A⁻ᵀ, differentiable again
            return d[..., None, None] * _mT(xp, _call(xp, Inv, a))
        return _cofactors(xp, a)

    @staticmethod
    def vjp(ctx, xp, g, a, d):
        refuse_complex("linalg.det", a)
        return (g[..., None, None] * Det.cofactors(xp, a, d),)

    @staticmethod
    def jvp(ctx, xp, da, a, d):
        return (Det.cofactors(xp, a, d) * da).sum(axis=(-2, -1))

    @staticmethod
    def symbolic(sp, a):
        return _per_matrix(lambda m: m.det(), a)


class SlogDet(Primitive):
    r"""log |det A| (the sign is :class:`DetSign`, without a derivative).

    JVP: tr(A⁻¹Ȧ).  VJP (Giles 2008 §3.1): Ā = ȳ A⁻ᵀ.  At a singular A the value
    is −inf and the derivative does not exist: its backward raises
    :class:`LinAlgError`, as PyTorch's does.
    """

    name = "linalg_slogdet"
    math = "ẏ = tr(A⁻¹Ȧ);  Ā = ȳ A⁻ᵀ"
    description = "logarithm of the absolute determinant"

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.slogdet", a)
        logabs = BIND(SlogDet, a) if _routed(xp, a) else xp.linalg.slogdet(a)[1]
        ctx.save(a)
        return logabs

    @staticmethod
    def vjp(ctx, xp, g, a):
        refuse_complex("linalg.slogdet", a)
        return (g[..., None, None] * _mT(xp, _call(xp, Inv, a)),)

    @staticmethod
    def jvp(ctx, xp, da, a):
        return (_mT(xp, _call(xp, Inv, a)) * da).sum(axis=(-2, -1))

    @staticmethod
    def symbolic(sp, a):
        import sympy

        return _per_matrix(lambda m: sympy.log(sympy.Abs(m.det())), a)


class DetSign(NoDerivative):
    """The sign of det A (−1, 0 or 1): the first result of ``slogdet``, constant where it
    is differentiable."""

    name = "linalg_det_sign"
    description = "sign of the determinant"

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.slogdet", a)
        return BIND(DetSign, a) if _routed(xp, a) else xp.linalg.slogdet(a)[0]

    @staticmethod
    def symbolic(sp, a):
        import sympy

        return _per_matrix(lambda m: sympy.sign(m.det()), a)


# ---------------------------------------------------------------------- Cholesky


def _phi(xp: Any, x: Any) -> Any:
    """Φ(X): the lower triangle with the diagonal halved (Murray 2016)."""
    n = x.shape[-1]
    return x * (_constant(x, "tril", n) - 0.5 * _constant(x, "eye", n))


def _solve_right(xp: Any, x: Any, m: Any) -> Any:
    """X M⁻¹ (as (M⁻ᵀ Xᵀ)ᵀ: one solve)."""
    return _mT(xp, _call(xp, Solve, _mT(xp, m), _mT(xp, x)))


class Cholesky(Primitive):
    r"""L with A = L Lᵀ, lower triangular with a positive diagonal (``upper``: Lᵀ).

    JVP (Murray 2016, eq. 8): L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ), Φ the lower triangle with its
    diagonal halved.  VJP (its transpose, Murray 2016 eq. 10, symmetrized as
    PyTorch does): S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, Ā = ½(S + Sᵀ).
    A matrix that is not positive-definite raises :class:`LinAlgError`.
    """

    name = "linalg_cholesky"
    math = "L̇ = L Φ(L⁻¹ȦL⁻ᵀ);  Ā = sym(L⁻ᵀ Φ(LᵀL̄) L⁻¹)"
    description = "Cholesky factor"
    numpy_function = np.linalg.cholesky

    @staticmethod
    def numpy_arguments(a, *, upper=False):
        return (a,), {"upper": upper}

    @staticmethod
    def forward(ctx, xp, a, upper=False):
        _square("linalg.cholesky", a)
        ctx.upper = upper
        if _routed(xp, a):
            out = BIND(Cholesky, a, upper=upper)
            ctx.save(out)
            return out
        lower = _finite_or_raise("linalg.cholesky", NOT_PD, xp,
                                 _lapack("linalg.cholesky", NOT_PD, xp.linalg.cholesky, a))
        out = _mT(xp, lower) if upper else lower
        ctx.save(out)
        return out

    @staticmethod
    def vjp(ctx, xp, g, out):
        refuse_complex("linalg.cholesky", out)
        lower, g = (_mT(xp, out), _mT(xp, g)) if ctx.upper else (out, g)
        p = _phi(xp, xp.matmul(_mT(xp, lower), g))
        s = _solve_right(xp, _call(xp, Solve, _mT(xp, lower), p), lower)
        return (_sym(xp, s),)

    @staticmethod
    def jvp(ctx, xp, da, out):
        lower = _mT(xp, out) if ctx.upper else out
        inner = _solve_right(xp, _call(xp, Solve, lower, _sym(xp, da)), _mT(xp, lower))
        dl = xp.matmul(lower, _phi(xp, inner))
        return _mT(xp, dl) if ctx.upper else dl

    @staticmethod
    def symbolic(sp, a, upper=False):
        def factor(m):
            lower = _symmetric(m).cholesky(hermitian=False)
            return lower.T if upper else lower

        return _per_matrix(factor, a)


# ----------------------------------------------------------------- pseudo-inverse


class Pinv(Primitive):
    r"""P = A⁺, the Moore-Penrose pseudo-inverse, from the SVD with singular values at or
    below max(atol, rtol·s_max) taken as zero.

    JVP (Golub & Pereyra 1973, at constant rank):
    Ṗ = −P Ȧ P + P Pᵀ Ȧᵀ (I − A P) + (I − P A) Ȧᵀ Pᵀ P.
    VJP (its transpose term by term):
    Ā = −Pᵀ P̄ Pᵀ + (I − A P) P̄ᵀ P Pᵀ + Pᵀ P P̄ᵀ (I − P A).
    """

    name = "linalg_pinv"
    math = "Ṗ = −PȦP + PPᵀȦᵀ(I − AP) + (I − PA)ȦᵀPᵀP"
    description = "Moore-Penrose pseudo-inverse"

    @staticmethod
    def forward(ctx, xp, a, atol=0.0, rtol=None):
        check_matrix("linalg.pinv", a)
        if _routed(xp, a):
            p = BIND(Pinv, a, atol=atol, rtol=rtol)
            ctx.save(a, p)
            return p
        u, s, vh = _lapack("linalg.pinv", "The SVD failed to converge", xp.linalg.svd, a,
                           full_matrices=False)
        if rtol is None:
            rtol = max(a.shape[-2:]) * np.finfo(a.dtype).eps if atol == 0 else 0.0
        smax = s[..., :1] if s.shape[-1] else s
        keep = s > xp.maximum(atol, rtol * smax)
        inv_s = xp.where(keep, 1.0 / xp.where(keep, s, 1.0), 0.0).astype(s.dtype)
        p = xp.matmul(_mT(xp, vh) * inv_s[..., None, :], _mT(xp, u))
        ctx.save(a, p)
        return p

    @staticmethod
    def _terms(xp, a, p):
        m, n = a.shape[-2], a.shape[-1]
        i_ap = _constant(a, "eye", m) - xp.matmul(a, p)
        i_pa = _constant(a, "eye", n) - xp.matmul(p, a)
        return i_ap, i_pa

    @staticmethod
    def vjp(ctx, xp, g, a, p):
        refuse_complex("linalg.pinv", a)
        pt, gt = _mT(xp, p), _mT(xp, g)
        i_ap, i_pa = Pinv._terms(xp, a, p)
        ga = (-xp.matmul(xp.matmul(pt, g), pt)
              + xp.matmul(xp.matmul(i_ap, gt), xp.matmul(p, pt))
              + xp.matmul(xp.matmul(pt, p), xp.matmul(gt, i_pa)))
        return (ga,)

    @staticmethod
    def jvp(ctx, xp, da, a, p):
        pt, dat = _mT(xp, p), _mT(xp, da)
        i_ap, i_pa = Pinv._terms(xp, a, p)
        return (-xp.matmul(xp.matmul(p, da), p)
                + xp.matmul(xp.matmul(p, pt), xp.matmul(dat, i_ap))
                + xp.matmul(xp.matmul(i_pa, dat), xp.matmul(pt, p)))

    @staticmethod
    def symbolic(sp, a, atol=0.0, rtol=None):
        return _per_matrix(lambda m: m.pinv(), a)


# ------------------------------------------------------------- matrix exponential

# Padé 13 coefficients and the largest 1-norm it serves unscaled (Higham 2005, Table 10.2)
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _expm(xp: Any, a: Any) -> Any:
    """exp(A) by scaling and squaring with the [13/13] Padé approximant (Higham 2005),
    one scaling for the whole stack (the largest any matrix needs)."""
    n = a.shape[-1]
    if a.size == 0:
        return a + 0.0
    norm = float(xp.abs(a).sum(axis=-2).max())
    if not np.isfinite(norm):
        return a * np.nan
    s = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = a / (2.0 ** s)
    b = _PADE13
    eye = xp.eye(n, dtype=a.dtype)
    a2 = xp.matmul(a, a)
    a4 = xp.matmul(a2, a2)
    a6 = xp.matmul(a4, a2)
    u = xp.matmul(a, xp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                  + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (xp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    r = xp.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = xp.matmul(r, r)
    return r


def _block_exp_corner(xp: Any, top_left: Any, corner: Any, bottom_right: Any) -> Any:
    """The top-right block of exp([[X, Z], [0, Y]]): the Fréchet derivative of exp
    (Najfeld & Havel 1995; Mathias 1996) when X = Y = A and Z = Ȧ."""
    n = top_left.shape[-1]
    top = xp.concatenate([top_left, corner], axis=-1)
    bottom = xp.concatenate([xp.zeros_like(bottom_right), bottom_right], axis=-1)
    big = _call(xp, MatrixExp, xp.concatenate([top, bottom], axis=-2))
    return big[..., :n, n:]


class MatrixExp(Primitive):
    r"""Y = exp(A) = Σₖ Aᵏ/k!.

    JVP: Ẏ = L(A, Ȧ) = ∫₀¹ e^{sA} Ȧ e^{(1−s)A} ds, the top-right block of
    exp([[A, Ȧ], [0, A]]) (Najfeld & Havel 1995; Mathias 1996; Giles 2008 §3.2).
    VJP: Ā = L(Aᵀ, Ȳ), the same block of exp([[Aᵀ, Ȳ], [0, Aᵀ]]).
    """

    name = "linalg_matrix_exp"
    math = "Ẏ = [exp([[A, Ȧ], [0, A]])]₁₂;  Ā = [exp([[Aᵀ, Ȳ], [0, Aᵀ]])]₁₂"
    description = "matrix exponential"

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.matrix_exp", a)
        ctx.save(a)
        return BIND(MatrixExp, a) if _routed(xp, a) else _expm(xp, a)

    @staticmethod
    def vjp(ctx, xp, g, a):
        at = _mT(xp, a)
        return (_block_exp_corner(xp, at, g, at),)

    @staticmethod
    def jvp(ctx, xp, da, a):
        a = xp.broadcast_to(a, da.shape) if a.shape != da.shape else a
        return _block_exp_corner(xp, a, da, a)

    @staticmethod
    def symbolic(sp, a):
        """exp of a 1 × 1 matrix; refused beyond: sympy's Matrix.exp of a symbolic
        2 × 2 matrix (through its Jordan form) takes seconds, and its derivative nests
        deeper than Python's recursion limit (it used to fail only after ~20 s)."""
        if a.shape[-2:] != (1, 1):
            raise ValueError(
                f"linalg.matrix_exp has no usable symbolic form beyond 1 × 1 (got "
                f"{a.shape[-2]} × {a.shape[-1]}): sympy's exponential of a symbolic matrix "
                f"nests deeper than Python's recursion limit; differentiate it with "
                f"method='forward', 'reverse', 'compiled' or 'numeric'")
        return _per_matrix(lambda m: m.exp(), a)


# ------------------------------------------------------------------------- sympy


def _per_matrix(f: Any, *arrays: Any) -> Any:
    """``f`` on sympy ``Matrix``es, one per matrix of a stack (the symbolic method: small
    sizes, exact expressions); the results stacked back into an object array."""
    import sympy

    arrays = [np.asarray(a, dtype=object) for a in arrays]
    batch = np.broadcast_shapes(*[a.shape[:-2] for a in arrays])
    arrays = [np.broadcast_to(a, batch + a.shape[-2:]) for a in arrays]
    results = []
    for index in np.ndindex(*batch):
        value = f(*[sympy.Matrix(a[index]) for a in arrays])
        if isinstance(value, sympy.MatrixBase):
            value = np.array(value.tolist(), dtype=object)
        else:
            value = np.array(value, dtype=object)
        results.append(value)
    shape = results[0].shape
    out = np.empty(batch + shape, dtype=object)
    for index, value in zip(np.ndindex(*batch), results):
        out[index] = value
    return out


def _symmetric(m: Any) -> Any:
    """½(M + Mᵀ): the matrix whose derivatives the symmetric rules give."""
    return (m + m.T) / 2


#: (the decompositions QR, eigh and SVD are in :mod:`difflab.ops.linalg_spectral`)
PRIMITIVES = (Solve, Inv, Det, SlogDet, DetSign, Cholesky, Pinv, MatrixExp)
