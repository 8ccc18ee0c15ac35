r"""The orthogonal decompositions: QR, the symmetric eigenproblem, the SVD.

Forward next to JVP and VJP, as in :mod:`difflab.ops.linalg` (whose shared
steps and conventions these follow: results packed in one array, rules that
read only the inputs and the output, primitives called inside rules through
the dispatch).  References: Walter & Lehmann 2018 and Seeger et al. 2017
(*Auto-differentiating linear algebra*) for QR; Townsend 2016
(*Differentiating the singular value decomposition*) and Seeger et al. 2017
for the eigendecomposition and the SVD.

The eigenvectors and singular vectors are not unique where eigenvalues or
singular values repeat: their derivatives divide by the gaps between them
(F_ij = 1/(w_j − w_i)), and are inf or NaN there, as PyTorch's are.  A term
0/0 (nothing asked of that pair, as when only the eigenvalues are used) is
dropped, so the eigenvalues' and singular values' derivatives stay finite.
"""

from __future__ import annotations

from typing import Any

from difflab.ops import linalg as base  # (base.BIND: registered after import)
from difflab.ops.complex_numbers import refuse_complex
from difflab.ops.linalg import (
    _call,
    _constant,
    _diag,
    _diagonal,
    _divide,
    _lapack,
    _mT,
    _per_matrix,
    _routed,
    _solve_right,
    _square,
    _sym,
    _symmetric,
    check_matrix,
)
from difflab.ops.primitive import NoDerivative, Primitive

NO_SYMBOLIC = ("linalg.{name} has no symbolic form: sympy's decompositions of a symbolic "
               "matrix choose other signs than LAPACK (and have no closed form beyond 2 × 2); "
               "differentiate it with method='forward', 'reverse', 'compiled' or 'numeric', "
               "or use eigvalsh / svdvals (closed forms up to 2 × 2)")


def _eigenvalues_2x2(m: Any, what: str) -> list:
    """The eigenvalues of a symmetric 1 × 1 or 2 × 2 sympy matrix, ascending, in closed
    form: (a + c)/2 ∓ √(((a − c)/2)² + b²)."""
    import sympy

    if m.shape == (1, 1):
        return [m[0, 0]]
    if m.shape != (2, 2):
        raise ValueError(f"linalg.{what} on symbols: a closed form for matrices up to 2 × 2 "
                         f"only, got {m.shape[0]} × {m.shape[1]}; use method='forward', "
                         f"'reverse' or 'numeric'")
    mean = (m[0, 0] + m[1, 1]) / 2
    radius = sympy.sqrt(((m[0, 0] - m[1, 1]) / 2) ** 2 + m[1, 0] ** 2)
    return [mean - radius, mean + radius]


# ---------------------------------------------------------------------------- QR


def _qr_parts(packed: Any, m: int) -> tuple:
    """Q and R out of the packed (Q; Rᵀ)."""
    return packed[..., :m, :], packed[..., m:, :]


class QR(Primitive):
    r"""A = Q R, Q with orthonormal columns, R upper triangular; packed as (Q; Rᵀ).

    For m ≥ n (``reduced``), with X = Qᵀ Ȧ R⁻¹ and Ω = tril(X, −1) − tril(X, −1)ᵀ
    (the part of Qᵀ Q̇ that is skew):
    JVP: Ṙ = (X − Ω) R,  Q̇ = Ȧ R⁻¹ − Q (X − Ω).
    VJP (Walter & Lehmann 2018; Seeger et al. 2017): M = R R̄ᵀ − Q̄ᵀ Q,
    Ā = (Q̄ + Q copyltu(M)) R⁻ᵀ, copyltu(M) = tril(M) + tril(M, −1)ᵀ.
    For m < n, A = [X | Y] with X square: the square rule for X with
    Q̄ + Y R̄₂ᵀ, and Ȳ = Q R̄₂.  ``complete`` with m > n has no derivative
    (Q's last columns are not determined by A), as in PyTorch.
    """

    name = "linalg_qr"
    math = "Ā = (Q̄ + Q copyltu(RR̄ᵀ − Q̄ᵀQ)) R⁻ᵀ  (m ≥ n)"
    description = "QR decomposition (Q and Rᵀ stacked)"

    @staticmethod
    def symbolic(sp, *inputs, **params):
        raise ValueError(NO_SYMBOLIC.format(name="qr"))

    @staticmethod
    def forward(ctx, xp, a, mode="reduced"):
        check_matrix("linalg.qr", a)
        if mode not in ("reduced", "complete"):
            raise ValueError(f"linalg.qr: mode is 'reduced', 'complete' or 'r', got {mode!r}")
        ctx.m, ctx.n, ctx.mode = a.shape[-2], a.shape[-1], mode
        if _routed(xp, a):
            out = base.BIND(QR, a, mode=mode)
        else:
            q, r = xp.linalg.qr(a, mode=mode)
            out = xp.concatenate([q, _mT(xp, r)], axis=-2)
        ctx.save(out)
        return out

    @staticmethod
    def _check(ctx):
        if ctx.mode == "complete" and ctx.m > ctx.n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols (the last columns of Q are "
                               "not determined by A); use mode='reduced'")

    @staticmethod
    def _square_vjp(xp, q, r, gq, gr):
        m_ = xp.matmul(r, _mT(xp, gr)) - xp.matmul(_mT(xp, gq), q)
        k = m_.shape[-1]
        copyltu = m_ * _constant(m_, "tril", k) + _mT(xp, m_ * _constant(m_, "stril", k))
        return _solve_right(xp, gq + xp.matmul(q, copyltu), _mT(xp, r))

    @staticmethod
    def vjp(ctx, xp, g, out):
        refuse_complex("linalg.qr", out)
        QR._check(ctx)
        m, n = ctx.m, ctx.n
        q, rt = _qr_parts(out, m)
        gq, grt = _qr_parts(g, m)
        r, gr = _mT(xp, rt), _mT(xp, grt)
        if m >= n:
            return (QR._square_vjp(xp, q, r, gq, gr),)
        # wide: A = [X | Y], X = Q R₁, Y = Q R₂
        r1, r2, gr1, gr2 = r[..., :m], r[..., m:], gr[..., :m], gr[..., m:]
        y = xp.matmul(q, r2)
        gx = QR._square_vjp(xp, q, r1, gq + xp.matmul(y, _mT(xp, gr2)), gr1)
        return (xp.concatenate([gx, xp.matmul(q, gr2)], axis=-1),)

    @staticmethod
    def _square_jvp(xp, q, r, da):
        ar = _solve_right(xp, da, r)  # Ȧ R⁻¹
        x = xp.matmul(_mT(xp, q), ar)
        k = x.shape[-1]
        low = x * _constant(x, "stril", k)
        upper = x - (low - _mT(xp, low))  # X − Ω
        return ar - xp.matmul(q, upper), xp.matmul(upper, r)

    @staticmethod
    def jvp(ctx, xp, da, out):
        QR._check(ctx)
        m, n = ctx.m, ctx.n
        q, rt = _qr_parts(out, m)
        r = _mT(xp, rt)
        if m >= n:
            dq, dr = QR._square_jvp(xp, q, r, da)
        else:
            dq, dr1 = QR._square_jvp(xp, q, r[..., :m], da[..., :m])
            dr2 = xp.matmul(_mT(xp, q), da[..., m:] - xp.matmul(dq, r[..., m:]))
            dr = xp.concatenate([dr1, dr2], axis=-1)
        return xp.concatenate([dq, _mT(xp, dr)], axis=-2)


# ------------------------------------------------------- symmetric eigenproblems


def _eigen_gaps(xp: Any, w: Any) -> Any:
    """E with E_ij = w_j − w_i off the diagonal and 1 on it (so it can divide)."""
    n = w.shape[-1]
    return (w[..., None, :] - w[..., :, None]) + _constant(w, "eye", n)


def _eigh_parts(packed: Any) -> tuple:
    return packed[..., 0, :], packed[..., 1:, :]


class Eigh(Primitive):
    r"""A = V diag(w) Vᵀ for symmetric A, w ascending; packed as (w; V), (n+1) × n.

    JVP (Seeger et al. 2017; Giles 2008 §3.1): with X = Vᵀ sym(Ȧ) V,
    ẇ = diag(X), V̇ = V (F ∘ X), F_ij = 1/(w_j − w_i) off the diagonal, 0 on it.
    VJP (its transpose, PyTorch's form): Ā = V (diag(w̄) + F ∘ ½(VᵀV̄ − V̄ᵀV)) Vᵀ.

    Repeated eigenvalues: the eigenvectors are not unique there and F has
    1/0.  As in PyTorch, the gradient is then inf or NaN where the
    eigenvectors' adjoint meets the repeated pair; terms with nothing to
    divide (0/0, such as when only the eigenvalues are used) are left out, so
    ``eigvalsh``'s gradient stays finite.
    """

    name = "linalg_eigh"
    math = "Ā = V (diag(w̄) + F∘skew(VᵀV̄)) Vᵀ,  F_ij = 1/(w_j − w_i)"
    description = "symmetric eigendecomposition (w and V stacked)"

    @staticmethod
    def symbolic(sp, *inputs, **params):
        raise ValueError(NO_SYMBOLIC.format(name="eigh"))

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.eigh", a)
        if _routed(xp, a):
            out = base.BIND(Eigh, a)
        else:
            w, v = _lapack("linalg.eigh", "The algorithm failed to converge", xp.linalg.eigh, a)
            out = xp.concatenate([w[..., None, :], v], axis=-2)
        ctx.save(out)
        return out

    @staticmethod
    def vjp(ctx, xp, g, out):
        refuse_complex("linalg.eigh", out)
        w, v = _eigh_parts(out)
        gw, gv = _eigh_parts(g)
        vtgv = xp.matmul(_mT(xp, v), gv)
        skew = (vtgv - _mT(xp, vtgv)) * 0.5
        inner = _divide(xp, skew, _eigen_gaps(xp, w)) + _diag(gw)
        return (xp.matmul(xp.matmul(v, inner), _mT(xp, v)),)

    @staticmethod
    def jvp(ctx, xp, da, out):
        w, v = _eigh_parts(out)
        x = xp.matmul(xp.matmul(_mT(xp, v), _sym(xp, da)), v)
        off = x * _constant(x, "off", x.shape[-1])
        dv = xp.matmul(v, _divide(xp, off, _eigen_gaps(xp, w)))
        return xp.concatenate([_diagonal(x)[..., None, :], dv], axis=-2)


class EigvalsH(Primitive):
    r"""The eigenvalues w of symmetric A, ascending.

    JVP: ẇ = diag(Vᵀ Ȧ V).  VJP: Ā = V diag(w̄) Vᵀ (finite at repeated eigenvalues:
    the sum over a repeated eigenvalue's eigenvectors does not depend on which
    basis LAPACK picked).
    """

    name = "linalg_eigvalsh"
    math = "ẇᵢ = vᵢᵀȦvᵢ;  Ā = V diag(w̄) Vᵀ"
    description = "eigenvalues of a symmetric matrix"

    @staticmethod
    def forward(ctx, xp, a):
        _square("linalg.eigvalsh", a)
        if _routed(xp, a):
            ctx.save(a, None)
            return base.BIND(EigvalsH, a)
        if not any(ctx.needs_input_grad):
            return _lapack("linalg.eigvalsh", "The algorithm failed to converge",
                           xp.linalg.eigvalsh, a)
        w, v = _lapack("linalg.eigvalsh", "The algorithm failed to converge",
                       xp.linalg.eigh, a)
        ctx.save(a, v)  # (V read only on arrays; a recorded backward recomputes it from a)
        return w

    @staticmethod
    def symbolic(sp, a):
        return _per_matrix(lambda m: _eigenvalues_2x2(_symmetric(m), "eigvalsh"), a)

    @staticmethod
    def _vectors(xp, a, v):
        if _routed(xp, a):
            return _eigh_parts(_call(xp, Eigh, a))[1]
        return v

    @staticmethod
    def vjp(ctx, xp, g, a, v):
        refuse_complex("linalg.eigvalsh", a)
        v = EigvalsH._vectors(xp, a, v)
        return (xp.matmul(v * g[..., None, :], _mT(xp, v)),)

    @staticmethod
    def jvp(ctx, xp, da, a, v):
        v = EigvalsH._vectors(xp, a, v)
        return _diagonal(xp.matmul(xp.matmul(_mT(xp, v), _sym(xp, da)), v))


# --------------------------------------------------------------------------- SVD


def _svd_parts(packed: Any, m: int) -> tuple:
    """U, s and V (not Vᵀ) out of the packed (U; s; V)."""
    return packed[..., :m, :], packed[..., m, :], packed[..., m + 1:, :]


class SVD(Primitive):
    r"""A = U diag(s) Vᵀ (the reduced SVD, s descending); packed as (U; s; V), (m+1+n) × k.

    JVP (Townsend 2016), with P = Uᵀ Ȧ V, S = diag(s), F_ij = 1/(s_j² − s_i²):
    ṡ = diag(P),  U̇ = U (F ∘ (P S + S Pᵀ)) + (I − UUᵀ) Ȧ V S⁻¹,
    V̇ = V (F ∘ (S P + Pᵀ S)) + (I − VVᵀ) Ȧᵀ U S⁻¹.
    VJP (its transpose, Townsend 2016 eq. 30, PyTorch's form)::

        Ā = U [(F ∘ (UᵀŪ − ŪᵀU)) S + diag(s̄) + S (F ∘ (VᵀV̄ − V̄ᵀV))] Vᵀ
            + (I − UUᵀ) Ū S⁻¹ Vᵀ + U S⁻¹ V̄ᵀ (I − VVᵀ)

    Repeated singular values (and, for a non-square A, a zero one) give inf or
    NaN where U's or V's adjoint meets them, as in PyTorch; ``svdvals``
    stays finite.
    """

    name = "linalg_svd"
    math = "Ā = U[(F∘skew(UᵀŪ))S + diag(s̄) + S(F∘skew(VᵀV̄))]Vᵀ + projections"
    description = "singular value decomposition (U, s and V stacked)"

    @staticmethod
    def symbolic(sp, *inputs, **params):
        raise ValueError(NO_SYMBOLIC.format(name="svd"))

    @staticmethod
    def forward(ctx, xp, a):
        check_matrix("linalg.svd", a)
        ctx.m = a.shape[-2]
        if _routed(xp, a):
            out = base.BIND(SVD, a)
        else:
            u, s, vh = _lapack("linalg.svd", "The algorithm failed to converge",
                               xp.linalg.svd, a, full_matrices=False)
            out = xp.concatenate([u, s[..., None, :], _mT(xp, vh)], axis=-2)
        ctx.save(out)
        return out

    @staticmethod
    def vjp(ctx, xp, g, out):
        refuse_complex("linalg.svd", out)
        m = ctx.m
        u, s, v = _svd_parts(out, m)
        gu, gs, gv = _svd_parts(g, m)
        k = s.shape[-1]
        s2 = s * s
        gaps = _eigen_gaps(xp, s2)
        utgu, vtgv = xp.matmul(_mT(xp, u), gu), xp.matmul(_mT(xp, v), gv)
        ju, jv = utgu - _mT(xp, utgu), vtgv - _mT(xp, vtgv)
        inner = (_divide(xp, ju, gaps) * s[..., None, :]
                 + s[..., :, None] * _divide(xp, jv, gaps) + _diag(gs))
        ga = xp.matmul(xp.matmul(u, inner), _mT(xp, v))
        if m > k:  # (I − UUᵀ) Ū S⁻¹ Vᵀ
            rest = gu - xp.matmul(u, utgu)
            ga = ga + xp.matmul(rest / s[..., None, :], _mT(xp, v))
        if v.shape[-2] > k:  # U S⁻¹ V̄ᵀ (I − VVᵀ)
            rest = gv - xp.matmul(v, vtgv)
            ga = ga + xp.matmul(u / s[..., None, :], _mT(xp, rest))
        return (ga,)

    @staticmethod
    def jvp(ctx, xp, da, out):
        m = ctx.m
        u, s, v = _svd_parts(out, m)
        k = s.shape[-1]
        p = xp.matmul(xp.matmul(_mT(xp, u), da), v)
        gaps = _eigen_gaps(xp, s * s)
        ps, sp_ = p * s[..., None, :], s[..., :, None] * p
        ju = (ps + _mT(xp, ps)) * _constant(p, "off", k)
        jv = (sp_ + _mT(xp, sp_)) * _constant(p, "off", k)
        du = xp.matmul(u, _divide(xp, ju, gaps))
        dv = xp.matmul(v, _divide(xp, jv, gaps))
        if m > k:
            av = xp.matmul(da, v)
            du = du + (av - xp.matmul(u, xp.matmul(_mT(xp, u), av))) / s[..., None, :]
        if v.shape[-2] > k:
            atu = xp.matmul(_mT(xp, da), u)
            dv = dv + (atu - xp.matmul(v, xp.matmul(_mT(xp, v), atu))) / s[..., None, :]
        return xp.concatenate([du, _diagonal(p)[..., None, :], dv], axis=-2)


class SVDComplement(NoDerivative):
    """The columns of the full SVD beyond k = min(m, n): U's last m − k columns
    (``side="U"``) or Vh's last n − k rows (``side="Vh"``).  They span the complement of
    A's range (of its row space) and are not determined by A beyond that, so they carry
    no derivative, as in PyTorch (``svd(A, full_matrices=True)``)."""

    name = "linalg_svd_complement"
    description = "the full SVD's columns beyond min(m, n)"

    @staticmethod
    def forward(ctx, xp, a, side="U"):
        check_matrix("linalg.svd", a)
        if _routed(xp, a):
            return base.BIND(SVDComplement, a, side=side)
        u, _, vh = _lapack("linalg.svd", "The algorithm failed to converge", xp.linalg.svd,
                           a, full_matrices=True)
        k = min(a.shape[-2:])
        return u[..., k:] if side == "U" else vh[..., k:, :]


class SvdVals(Primitive):
    r"""The singular values s of A, descending.

    JVP: ṡᵢ = uᵢᵀ Ȧ vᵢ.  VJP: Ā = U diag(s̄) Vᵀ (finite at repeated singular values).
    """

    name = "linalg_svdvals"
    math = "ṡᵢ = uᵢᵀȦvᵢ;  Ā = U diag(s̄) Vᵀ"
    description = "singular values"

    @staticmethod
    def forward(ctx, xp, a):
        check_matrix("linalg.svdvals", a)
        if _routed(xp, a):
            ctx.save(a, None, None)
            return base.BIND(SvdVals, a)
        if not any(ctx.needs_input_grad):
            return _lapack("linalg.svdvals", "The algorithm failed to converge",
                           xp.linalg.svd, a, compute_uv=False)
        u, s, vh = _lapack("linalg.svdvals", "The algorithm failed to converge",
                           xp.linalg.svd, a, full_matrices=False)
        ctx.m = a.shape[-2]
        ctx.save(a, u, vh)
        return s

    @staticmethod
    def symbolic(sp, a):
        def values(m):
            gram = m.T * m if m.shape[1] <= m.shape[0] else m * m.T
            import sympy

            return [sympy.sqrt(w) for w in reversed(_eigenvalues_2x2(gram, "svdvals"))]

        return _per_matrix(values, a)

    @staticmethod
    def _vectors(ctx, xp, a, u, vh):
        if _routed(xp, a):
            uu, _, v = _svd_parts(_call(xp, SVD, a), a.shape[-2])
            return uu, _mT(xp, v)
        return u, vh

    @staticmethod
    def vjp(ctx, xp, g, a, u, vh):
        u, vh = SvdVals._vectors(ctx, xp, a, u, vh)
        return (xp.matmul(u * g[..., None, :], vh),)

    @staticmethod
    def jvp(ctx, xp, da, a, u, vh):
        u, vh = SvdVals._vectors(ctx, xp, a, u, vh)
        return _diagonal(xp.matmul(xp.matmul(_mT(xp, u), da), _mT(xp, vh)))


PRIMITIVES = (QR, Eigh, EigvalsH, SVD, SVDComplement, SvdVals)
