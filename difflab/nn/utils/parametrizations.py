r"""Ready-made parametrizations (``torch.nn.utils.parametrizations``).

Each registers a module with :func:`~difflab.nn.utils.parametrize.register_parametrization`:

* :func:`weight_norm`: :math:`w = g \, v / \|v\|`, the magnitude ``g`` (``original0``) and
  the direction ``v`` (``original1``) trained apart (Salimans & Kingma, 2016);
* :func:`spectral_norm`: :math:`w = W / \sigma(W)`, the largest singular value estimated
  by power iteration (Miyato et al., 2018);
* :func:`orthogonal`: :math:`w` orthogonal (:math:`w^\top w = I` or :math:`w w^\top = I`),
  the image of an unconstrained matrix under the matrix exponential, the Cayley map or a
  product of Householder reflections.
"""

from __future__ import annotations

from difflab import backend, linalg
from difflab.autograd.grad_mode import no_grad
from difflab.creation import eye, randn, zeros_like
from difflab.dtype_info import finfo
from difflab.functions import allclose
from difflab.functions_shapes import cat
from difflab.nn import functional as F
from difflab.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from difflab.nn.modules.module import Module
from difflab.nn.utils import parametrize
from difflab.tensor import Tensor

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ------------------------------------------------------------------ weight norm
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (kept, size 1 elsewhere).

    ``dim=-1`` means no dimension kept: the norm of the whole tensor, a scalar (PyTorch's
    convention, which ``weight_norm(..., dim=None)`` uses).

    Parameters
    ----------
    v : Tensor
        Any tensor with at least one dimension.
    pow : float, default 2
        The order of the norm.
    dim : int, default 0
        The dimension kept; -1 for none.

    Returns
    -------
    Tensor
        Shape ``(1, ..., v.shape[dim], ..., 1)``, or ``()`` for ``dim=-1``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils.parametrizations import norm_except_dim
    >>> norm_except_dim(dl.tensor([[3.0, 4.0], [0.0, 1.0]]), 2, 0)
    tensor([[5.],
            [1.]])
    """
    if dim == -1:
        return v.norm(pow)
    dim = dim + v.dim() if dim < 0 else dim
    others = [d for d in range(v.dim()) if d != dim]
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs()


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    r""":math:`w = v \, g / \|v\|`, the norm over every dimension but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    """The weight-norm parametrization: ``forward(g, v)``, ``right_inverse(w) = (g, v)``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    r"""Weight normalization: :math:`w = g \, v / \|v\|`, with ``g`` and ``v`` trained.

    Separates the length of each slice of the weight along ``dim`` (``g``, one number
    per output unit with the default ``dim=0``) from its direction (``v``), which speeds
    up and steadies gradient descent (Salimans & Kingma, 2016).  The norm is taken over
    every dimension but ``dim`` (``dim=None``: over the whole tensor).  ``g`` is
    ``module.parametrizations.<name>.original0`` and ``v`` is ``original1``; at
    registration :math:`g = \|w\|` and :math:`v = w`, so the weight does not change.
    The gradients, by the quotient rule:
    :math:`\partial L/\partial g = (\partial L/\partial w \cdot v)/\|v\|` and
    :math:`\partial L/\partial v = (g/\|v\|)\,(\partial L/\partial w - (\partial L/\partial w
    \cdot \hat v)\,\hat v)`, recorded by the tape from the forward computation.

    Parameters
    ----------
    module : Module
        The module (a layer with a weight).
    name : str, default "weight"
        The parameter to normalize.
    dim : int or None, default 0
        The dimension whose slices get their own magnitude; None for one magnitude.

    Returns
    -------
    Module
        ``module``, parametrized.

    Raises
    ------
    ValueError
        If ``module`` has no parameter or buffer ``name``.

    See Also
    --------
    difflab.nn.utils.weight_norm : the older hook-based form (``weight_g``, ``weight_v``).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils.parametrizations import weight_norm
    >>> m = weight_norm(nn.Linear(2, 2))
    >>> m.weight = dl.tensor([[3.0, 4.0], [0.0, 2.0]])
    >>> m.parametrizations.weight.original0
    Parameter containing:
    tensor([[5.],
            [2.]], requires_grad=True)
    >>> list(m.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


# ---------------------------------------------------------------- spectral norm
def _weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix: dimension ``dim`` first, the others flattened into columns."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.reshape(weight.shape[0], -1)


class _SpectralNorm(Module):
    r"""The spectral-norm parametrization: :math:`W / (u^\top W v)`, ``u``, ``v`` by power
    iteration (buffers ``_u``, ``_v``, updated in training mode, outside the tape)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:  # (a vector's norm is exact: no iteration, see forward)
            self.n_power_iterations = n_power_iterations
            matrix = _weight_matrix(weight, self.dim)
            h, w = matrix.shape
            u = matrix.new_empty(h).normal_(0, 1)
            v = matrix.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(matrix, 15)  # start from reasonable u, v

    def _power_method(self, matrix: Tensor, n_power_iterations: int) -> None:
        r"""Refine :math:`u \approx` the first left singular vector and :math:`v` the right
        one, in place: :math:`u \leftarrow Wv/\|Wv\|`, :math:`v \leftarrow W^\top u/\|W^\top
        u\|`.  No gradient flows through the iteration."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(matrix.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(matrix.mT.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = _weight_matrix(weight, self.dim)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # (constants of the tape's record)
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    r"""Spectral normalization: :math:`w = W / \sigma(W)`, the largest singular value one.

    Dividing by the spectral norm makes the layer 1-Lipschitz, which steadies the
    discriminator of a GAN (Miyato et al., 2018).  The weight is read as a matrix with
    dimension ``dim`` as rows; :math:`\sigma \approx u^\top W v` with :math:`u, v` the
    first singular vectors, estimated by power iteration: 15 steps at registration, then
    ``n_power_iterations`` at each access in training mode (none in eval mode).  ``u``
    and ``v`` are buffers (``parametrizations.<name>.0._u`` and ``._v``), updated in
    place outside the tape: the gradient treats them as constants,
    :math:`\partial \sigma / \partial W = u v^\top`.  A 1-d weight is divided by its
    norm, exactly.

    Parameters
    ----------
    module : Module
        The module.
    name : str, default "weight"
        The parameter to normalize.
    n_power_iterations : int, default 1
        Power-iteration steps per access in training mode (positive).
    eps : float, default 1e-12
        Added safety in the normalizations (the smallest norm divided by).
    dim : int, optional
        The dimension read as rows; by default 1 for ``ConvTranspose*d``, else 0.

    Returns
    -------
    Module
        ``module``, parametrized.

    Raises
    ------
    ValueError
        If ``module`` has no tensor ``name`` or ``n_power_iterations`` is not positive.
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    difflab.nn.utils.spectral_norm : the older hook-based form (``weight_orig``).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils.parametrizations import spectral_norm
    >>> _ = dl.manual_seed(0)
    >>> m = spectral_norm(nn.Linear(4, 3)).eval()
    >>> round(dl.linalg.matrix_norm(m.weight.detach(), ord=2).item(), 4)
    1.0
    >>> list(m.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0._u',
     'parametrizations.weight.0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with "
                         f"name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    return parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))


# ------------------------------------------------------------------- orthogonal
ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    identity = eye(k, dtype=q.dtype, device=q.device)
    return bool(allclose(q.mT @ q, identity, atol=10.0 * n * finfo(q.dtype).eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a = QR`` (``a`` tall) with diag(R) >= 0: the orthogonal matrix nearest in
    the Gram-Schmidt sense."""
    q, r = linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_reflections(q: Tensor) -> Tensor:
    """The ``X`` whose Householder map gives ``q``'s QR factor: LAPACK's geqrf vectors below
    the diagonal, and on it the signs of R's diagonal (flipped where geqrf left a reflection
    out, ``tau == 0``), matrix by matrix.  Computed on arrays: no gradient."""
    xp = backend.array_module(q.array)
    matrices = q.array.reshape(-1, *q.shape[-2:])
    packed = []
    for matrix in matrices:
        h, tau = xp.linalg.qr(matrix, mode="raw")  # (h is the transpose of geqrf's a)
        a = h.T.copy()
        k = min(a.shape)
        signs = xp.sign(xp.diagonal(a)[:k]) * xp.where(tau[:k] == 0, -1.0, 1.0)
        a[xp.arange(k), xp.arange(k)] = signs
        packed.append(a)
    return Tensor._wrap(xp.stack(packed).reshape(q.shape).astype(q.array.dtype))


class _Orthogonal(Module):
    """The orthogonal parametrization: a tall ``X`` to an orthogonal ``Q`` by one of
    :data:`ORTHOGONAL_MAPS`, times the buffer ``base`` (with ``use_trivialization``)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex():
            raise ValueError("orthogonal: complex weights are not supported here (the "
                             "parametrizations are written for real matrices)")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()  # n*k - k(k-1)/2 free entries
            if n != k:  # embed into a square matrix
                x = cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mT  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                q = linalg.matrix_exp(a)
            else:  # Cayley: (I - A/2)^{-1} (I + A/2)
                identity = eye(n, dtype=a.dtype, device=a.device)
                q = linalg.solve(identity - 0.5 * a, identity + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:  # Householder: the reflections' unit-diagonal vectors below the diagonal
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = linalg.householder_product(a, tau)
            # the signs of x's diagonal (1 or -1, not trained: .int() cuts the tape)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape "
                             f"{tuple(self.shape)}. Got a tensor of shape {tuple(q.shape)}.")
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            a = _householder_reflections(q)
            return a.mT if transpose else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:  # complete q to a full n x n orthogonal matrix
            extra = randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
            q = _make_orthogonal(cat([q, extra], dim=-1))
        self.base = q
        # -I: householder(zeros) is then I, and base @ I = base (the target)
        rows, columns = q_init.shape[-2], q_init.shape[-1]
        return zeros_like(q_init) - eye(rows, columns, dtype=q.dtype, device=q.device)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    r"""Make ``module.<name>`` an orthogonal matrix (or a batch of them), trained as such.

    For a weight of shape ``(n, k)`` the parametrized weight :math:`Q` has orthonormal
    columns (:math:`Q^\top Q = I`, when :math:`n \ge k`) or rows (:math:`QQ^\top = I`), at
    every step of any optimizer.  ``original`` holds an unconstrained matrix :math:`X`;
    the map to :math:`Q` is one of

    * ``"matrix_exp"``: :math:`Q = \exp(A)`, :math:`A = \operatorname{tril}(X) -
      \operatorname{tril}(X)^\top` skew-symmetric (so :math:`\exp(A)^\top \exp(A) = I`);
    * ``"cayley"``: :math:`Q = (I - A/2)^{-1}(I + A/2)`, the same :math:`A`;
    * ``"householder"``: :math:`Q = H_1 \cdots H_k`, reflections
      :math:`H_i = I - \tau_i v_i v_i^\top` whose vectors are the columns of
      :math:`X` below the diagonal.

    (Non-square: the first ``k`` columns of the square map.)  By default ``matrix_exp``
    for a square matrix and ``householder`` otherwise.  With ``use_trivialization=True``
    (the default) the result is multiplied by a buffer ``base`` (an orthogonal matrix, the
    weight when it was registered or last assigned; ``parametrizations.<name>.0.base``):
    the optimizer moves around ``base`` (a "dynamic trivialization", Lezcano-Casado 2019),
    and assigning any matrix sets ``base`` to its nearest orthogonal one (QR).  The
    derivative of each map is recorded by the tape (``matrix_exp``, ``solve``,
    ``householder_product`` each carry their rules).

    Parameters
    ----------
    module : Module
        The module.
    name : str, default "weight"
        A parameter or buffer with at least 2 dimensions.
    orthogonal_map : {"matrix_exp", "cayley", "householder"}, optional
        The map; see above.
    use_trivialization : bool, default True
        Keep the ``base`` buffer (see above).  Without it only ``householder`` accepts an
        assignment (the reflections of the QR factorization).

    Returns
    -------
    Module
        ``module``, parametrized.

    Raises
    ------
    ValueError
        If ``module`` has no tensor ``name``, it has fewer than 2 dimensions, or the map
        is not one of the three (the message lists them).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils.parametrizations import orthogonal
    >>> _ = dl.manual_seed(0)
    >>> m = orthogonal(nn.Linear(3, 3))
    >>> w = m.weight.detach()
    >>> bool(dl.allclose(w @ w.mT, dl.eye(3), atol=1e-5))
    True
    >>> orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    Traceback (most recent call last):
        ...
    ValueError: orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: qr
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with "
                         f"name '{name}'")
    if weight.dim() < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    return parametrize.register_parametrization(module, name, orth, unsafe=True)


