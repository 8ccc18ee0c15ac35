r"""The base of every transform: ``Transform``, its inverse, composition and independence.

What a transform is, and the change of variables it serves, is told in
:mod:`difflab.distributions.transforms` (where the maps themselves are, and where
programs import all of this from, as from ``torch.distributions.transforms``).  Here
is what every map shares: calling with a cache, ``inv``, ``sign``, shapes, equality,
and the two ways to build a transform from transforms, :class:`ComposeTransform`
(one after another) and :class:`IndependentTransform` (more dimensions per event).

>>> import difflab as dl
>>> from difflab.distributions.transforms import ComposeTransform, identity_transform
>>> identity_transform(dl.tensor([1.5])).tolist()
[1.5]
"""

from __future__ import annotations

import numbers
import typing

from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_picking as _picking
from difflab import functions_shapes as _shapes
from difflab.distributions import constraints
from difflab.distributions.distribution import as_parameter
from difflab.tensor import Tensor
from difflab.tensor_arguments import Size

__all__ = ["CatTransform", "ComposeTransform", "IndependentTransform", "StackTransform",
           "Transform", "identity_transform"]


def _sum_rightmost(value: typing.Any, dims: int) -> typing.Any:
    """Sum the ``dims`` rightmost dimensions (per-element log-dets → one per event)."""
    for _ in range(dims):
        value = value.sum(-1)
    return value


def _tensor(value: typing.Any, like: Tensor | None = None) -> Tensor:
    """``value`` as a floating tensor (in ``like``'s dtype when it is a plain number)."""
    if isinstance(value, Tensor) or like is None:
        return as_parameter(value)
    return _creation.tensor(value, dtype=like.dtype, device=like.device)

class Transform:
    """An invertible map with a computable log |det Jacobian| (``torch.distributions.Transform``).

    A subclass defines ``_call`` (the forward map), ``_inverse`` and
    ``log_abs_det_jacobian``, and names its ``domain`` and ``codomain``
    constraints (``event_dim`` is the larger of their event dimensions).  Two
    transforms are equal (``==``) when they are the same map: of one class with the
    same parameters (a subclass with parameters says how in ``_same_map``; by
    default it equals only itself).

    Parameters
    ----------
    cache_size : int, optional
        0 (no caching) or 1: remember the last pair (x, y), so that ``t.inv(t(x))``
        returns the very ``x`` given (no round-off, and no inverse computed, which
        helps when the inverse is unstable: ``atanh`` near ±1).  Caching reverses the
        graph (the returned x *is* the input), as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import TanhTransform
    >>> t = TanhTransform(cache_size=1)
    >>> x = dl.tensor([20.0])
    >>> y = t(x)                      # tanh(20) rounds to 1: atanh would give inf
    >>> t.inv(y) is x
    True
    """

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"cache_size must be 0 (no cache) or 1 (the last pair), "
                             f"got {cache_size!r}")
        self._cache_size = cache_size
        self._cached: tuple[typing.Any, typing.Any] | None = None
        self._inv: _InverseTransform | None = None

    @property
    def event_dim(self) -> int:
        """How many rightmost dimensions one application acts on (0: elementwise)."""
        return max(self.domain.event_dim, self.codomain.event_dim)

    @property
    def inv(self) -> Transform:
        """The inverse transform: ``t.inv(t(x)) == x``, with the log-det negated."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> typing.Any:
        """+1 for an increasing map of numbers, -1 for a decreasing one."""
        raise NotImplementedError(
            f"{type(self).__name__} is not a monotone map of numbers, so it has no sign "
            f"(cdf and icdf of a TransformedDistribution need one)")

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with ``cache_size`` (the same object when it already has it).

        Parameters
        ----------
        cache_size : int, optional
            0 or 1.

        Returns
        -------
        Transform
            A transform equal to this one, caching as asked.

        Examples
        --------
        >>> from difflab.distributions.transforms import ExpTransform
        >>> ExpTransform().with_cache(1)._cache_size
        1
        """
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __call__(self, x: typing.Any) -> Tensor:
        x = _tensor(x)
        if self._cache_size == 0:
            return self._call(x)
        if self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y: typing.Any) -> Tensor:
        y = _tensor(y)
        if self._cache_size == 0:
            return self._inverse(y)
        if self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define its forward map")

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define its inverse")

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |det ∂y/∂x| at a pair ``y = t(x)``, one number per event.

        Parameters
        ----------
        x : Tensor
            The input.
        y : Tensor
            ``t(x)`` (passed in so that it is not computed twice).

        Returns
        -------
        Tensor
            Of shape ``x.shape`` less the transform's ``event_dim`` rightmost dimensions.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.distributions.transforms import AffineTransform
        >>> t = AffineTransform(1.0, -2.0)
        >>> x = dl.tensor([3.0])
        >>> round(t.log_abs_det_jacobian(x, t(x)).item(), 6)          # log|-2|
        0.693147
        """
        raise NotImplementedError(
            f"{type(self).__name__} is not a bijection: it has no log-determinant")

    def forward_shape(self, shape: typing.Any) -> Size:
        """The shape of ``t(x)`` for an ``x`` of ``shape``.

        Parameters
        ----------
        shape : tuple of int
            The input's shape.

        Returns
        -------
        Size
            The output's shape (the same, for most transforms).

        Examples
        --------
        >>> from difflab.distributions.transforms import StickBreakingTransform
        >>> StickBreakingTransform().forward_shape((5, 2))
        difflab.Size([5, 3])
        """
        return Size(shape)

    def inverse_shape(self, shape: typing.Any) -> Size:
        """The shape of ``t.inv(y)`` for a ``y`` of ``shape``.

        Parameters
        ----------
        shape : tuple of int
            The output's shape.

        Returns
        -------
        Size
            The input's shape.

        Examples
        --------
        >>> from difflab.distributions.transforms import StickBreakingTransform
        >>> StickBreakingTransform().inverse_shape((3,))
        difflab.Size([2])
        """
        return Size(shape)

    # -- equality: the same map (what kl_divergence of two transformed distributions asks) --
    _stateless = False  # (a transform with no parameters: any two of its class are equal)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other):
            return False
        return self._same_map(other)

    def _same_map(self, other: typing.Any) -> bool:
        """Whether ``other`` (of this class) is the same map: by default only itself."""
        return self._stateless

    def __hash__(self) -> int:
        return hash(type(self))  # (equal transforms share a class; parameters may be tensors)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


def _same_value(a: typing.Any, b: typing.Any) -> bool:
    """Two parameters (numbers or tensors) equal everywhere."""
    if a is b:
        return True
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    a, b = _tensor(a), _tensor(b)
    try:
        return bool(F.all(a == b))
    except (ValueError, RuntimeError):  # (shapes that do not broadcast)
        return False


class _InverseTransform(Transform):
    """t⁻¹: forward and inverse swapped, the log-det negated (log|det J⁻¹| = -log|det J|)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(transform._cache_size)
        self._inv = transform  # (t.inv.inv is t)

    @property
    def domain(self):  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self):  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> typing.Any:
        return self._inv.sign

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x: typing.Any) -> Tensor:
        return self._inv._inv_call(x)

    def _inv_call(self, y: typing.Any) -> Tensor:
        return self._inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def _same_map(self, other):
        return self._inv == other._inv

    def forward_shape(self, shape: typing.Any) -> Size:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: typing.Any) -> Size:
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{self._inv!r}.inv"

# -- building transforms from transforms --------------------------------------------------

def _check_transform(t: typing.Any, where: str) -> Transform:
    if not isinstance(t, Transform):
        raise TypeError(f"{where} must be a Transform (difflab.distributions.transforms), "
                        f"got {type(t).__name__}: {t!r}")
    return t


class ComposeTransform(Transform):
    r"""The transforms one after another: y = f_n(… f_2(f_1(x))).

    forward: apply the parts in order;  inverse: their inverses in reverse order;
    log|det ∂y/∂x| = Σᵢ log|det ∂xᵢ/∂xᵢ₋₁| (the chain rule: the determinant of a
    product of Jacobians is the product of their determinants), each part's term
    summed over the dimensions that are events for the whole but not for it.

    Parameters
    ----------
    parts : list of Transform
        The transforms, first applied first.  An empty list is the identity.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Returns
    -------
    Tensor
        Called, ``t(x)``: the parts applied in order (the empty composition,
        ``identity_transform``, returns x).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import (AffineTransform, ComposeTransform,
    ...                                               ExpTransform)
    >>> t = ComposeTransform([AffineTransform(0.0, 2.0), ExpTransform()])   # y = e^(2x)
    >>> x = dl.tensor([1.0])
    >>> round(t.log_abs_det_jacobian(x, t(x)).item(), 6)       # log 2 + 2x
    2.693147
    """

    def __init__(self, parts: typing.Sequence[Transform], cache_size: int = 0) -> None:
        if isinstance(parts, Transform) or not isinstance(parts, (list, tuple)):
            raise TypeError(f"ComposeTransform takes a list of Transforms, got "
                            f"{type(parts).__name__}")
        self.parts = [_check_transform(p, f"ComposeTransform's part {i}")
                      for i, p in enumerate(parts)]
        if cache_size:
            self.parts = [p.with_cache(cache_size) for p in self.parts]
        super().__init__(cache_size)

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if cache_size == self._cache_size else ComposeTransform(self.parts,
                                                                            cache_size)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def domain(self):  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim,
                            part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim,
                            part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def sign(self) -> typing.Any:
        result: typing.Any = 1
        for part in self.parts:
            result = result * part.sign
        return result

    def _same_map(self, other):
        return self.parts == other.parts

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _sum_rightmost(_creation.zeros_like(x), self.domain.event_dim)
        intermediates = [x]
        for part in self.parts[:-1]:
            intermediates.append(part(intermediates[-1]))
        intermediates.append(y)
        total: typing.Any = 0.0
        event_dim = self.domain.event_dim
        for part, before, after in zip(self.parts, intermediates[:-1], intermediates[1:]):
            term = part.log_abs_det_jacobian(before, after)
            total = total + _sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return Size(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return Size(shape)

    def __repr__(self) -> str:
        return "ComposeTransform([" + ", ".join(repr(p) for p in self.parts) + "])"


class IndependentTransform(Transform):
    """A transform whose ``reinterpreted_batch_ndims`` rightmost dimensions become events.

    forward and inverse: the base transform's;  log|det|: the base's, summed over
    those dimensions (one number per event, as :class:`~difflab.distributions.Independent`
    sums log-densities).

    Parameters
    ----------
    base_transform : Transform
        The transform applied.
    reinterpreted_batch_ndims : int
        How many more rightmost dimensions form one event.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import ExpTransform, IndependentTransform
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> x = dl.tensor([1.0, 2.0])
    >>> t.log_abs_det_jacobian(x, t(x)).item()
    3.0
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.base_transform = _check_transform(base_transform, "base_transform")
        if cache_size:
            self.base_transform = self.base_transform.with_cache(cache_size)
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"reinterpreted_batch_ndims must be an int >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def domain(self):  # type: ignore[override]
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def sign(self) -> typing.Any:
        return self.base_transform.sign

    def _same_map(self, other):
        return (self.reinterpreted_batch_ndims == other.reinterpreted_batch_ndims
                and self.base_transform == other.base_transform)

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _check_slices(value: Tensor, dim: int, size: int, what: str, owner: str) -> None:
    """``value`` has dimension ``dim`` of ``size``: what Cat/StackTransform slice along."""
    if not -value.dim() <= dim < value.dim():
        raise ValueError(f"{owner}'s dim {dim} is out of range for {what} with "
                         f"{value.dim()} dimensions (shape {tuple(value.shape)})")
    if value.shape[dim] != size:
        raise ValueError(f"{owner} expects {what} of size {size} along dim {dim}, got "
                         f"shape {tuple(value.shape)}")


class CatTransform(Transform):
    r"""Transforms applied to consecutive pieces of dimension ``dim``, as ``cat`` joins them.

    forward: piece i (``lengths[i]`` long along ``dim``) goes through ``tseq[i]`` and the
    results are joined with ``cat``;  inverse: the same with each part's inverse;
    log|det|: the parts' log-dets, joined along ``dim`` when ``dim`` is a batch
    dimension, added when it lies inside the event (the Jacobian is block diagonal:
    its determinant is the product of the blocks').  Each part must keep its piece's
    length (an elementwise map, or one of vectors to vectors of the same size).
    ``biject_to(constraints.cat(...))`` builds one from the pieces' constraints.

    Parameters
    ----------
    tseq : list of Transform
        One transform per piece.
    dim : int, optional
        The dimension cut into pieces (0).
    lengths : list of int, optional
        The pieces' lengths along ``dim`` (1 each by default).
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import CatTransform, ExpTransform
    >>> from difflab.distributions.transforms import identity_transform
    >>> t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[1, 2])
    >>> x = dl.tensor([0.0, 5.0, 6.0])
    >>> t(x).tolist(), t.log_abs_det_jacobian(x, t(x)).tolist()
    ([1.0, 5.0, 6.0], [0.0, 0.0, 0.0])
    """

    def __init__(self, tseq: typing.Sequence[Transform], dim: int = 0,
                 lengths: typing.Sequence[int] | None = None, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        parts = [_check_transform(t, f"CatTransform's part {i}") for i, t in enumerate(tseq)]
        if not parts:
            raise ValueError("CatTransform takes at least one transform")
        self.transforms = [p.with_cache(cache_size) for p in parts] if cache_size else parts
        self.lengths = [1] * len(parts) if lengths is None else list(lengths)
        if len(self.lengths) != len(parts):
            raise ValueError(f"CatTransform takes one length per transform: {len(parts)} "
                             f"transforms, {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def length(self) -> int:
        """The size of dimension ``dim`` of an input: the sum of ``lengths``."""
        return sum(self.lengths)

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _same_map(self, other):
        return (self.dim == other.dim and self.lengths == other.lengths
                and self.transforms == other.transforms)

    def _pieces(self, value: Tensor, what: str) -> list[Tensor]:
        _check_slices(value, self.dim, self.length, what, "CatTransform")
        pieces, start = [], 0
        for length in self.lengths:
            pieces.append(_picking.narrow(value, self.dim, start, length))
            start += length
        return pieces

    def _joined(self, pieces: list[Tensor]) -> Tensor:
        for piece, length, part in zip(pieces, self.lengths, self.transforms):
            if piece.shape[self.dim] != length:
                raise ValueError(f"CatTransform's part {part!r} changed its piece's length "
                                 f"along dim {self.dim} from {length} to "
                                 f"{piece.shape[self.dim]}: the parts must keep the lengths")
        return _shapes.cat(pieces, self.dim)

    def _call(self, x):
        return self._joined([t(p) for t, p in zip(self.transforms, self._pieces(x, "x"))])

    def _inverse(self, y):
        return self._joined([t.inv(p) for t, p in zip(self.transforms, self._pieces(y, "y"))])

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for part, xs, ys in zip(self.transforms, self._pieces(x, "x"), self._pieces(y, "y")):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(xs, ys),
                                        self.event_dim - part.event_dim))
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:  # (a batch dimension: one log-det per piece's entries, joined)
            return _shapes.cat(terms, dim)
        return sum(terms[1:], terms[0])

    def __repr__(self) -> str:
        return f"CatTransform({self.transforms!r}, dim={self.dim}, lengths={self.lengths})"


class StackTransform(Transform):
    r"""Transforms applied to the slices of dimension ``dim``, as ``stack`` joins them.

    forward: slice i along ``dim`` goes through ``tseq[i]``, and the results are
    stacked again;  inverse: the same with the inverses;  log|det|: the slices'
    log-dets stacked along ``dim``, summed over it when ``dim`` lies inside the event
    (``event_dim`` counts it then, as the domain ``constraints.stack`` does).
    ``biject_to(constraints.stack(...))`` builds one from the slices' constraints.

    Parameters
    ----------
    tseq : list of Transform
        One transform per slice (as many as dimension ``dim``'s size).
    dim : int, optional
        The dimension whose slices are transformed (0).
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Notes
    -----
    With ``dim`` inside the event (``dim=-1`` with elementwise parts) PyTorch 2.13
    returns the log-dets unsummed, one per element, although its ``event_dim`` is 1;
    here they are summed, one per event, as ``TransformedDistribution`` needs.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import ExpTransform, StackTransform
    >>> from difflab.distributions.transforms import identity_transform
    >>> t = StackTransform([ExpTransform(), identity_transform], dim=0)
    >>> x = dl.tensor([[0.0, 1.0], [5.0, 6.0]])
    >>> t(x).tolist()[1], t.log_abs_det_jacobian(x, t(x)).tolist()
    ([5.0, 6.0], [[0.0, 1.0], [0.0, 0.0]])
    """

    def __init__(self, tseq: typing.Sequence[Transform], dim: int = 0,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        parts = [_check_transform(t, f"StackTransform's part {i}")
                 for i, t in enumerate(tseq)]
        if not parts:
            raise ValueError("StackTransform takes at least one transform")
        self.transforms = [p.with_cache(cache_size) for p in parts] if cache_size else parts
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _same_map(self, other):
        return self.dim == other.dim and self.transforms == other.transforms

    def _slices(self, value: Tensor, what: str) -> list[Tensor]:
        _check_slices(value, self.dim, len(self.transforms), what, "StackTransform")
        return [_picking.select(value, self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return _shapes.stack([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))],
                             self.dim)

    def _inverse(self, y):
        return _shapes.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))],
                             self.dim)

    def log_abs_det_jacobian(self, x, y):
        inner = max(t.event_dim for t in self.transforms)
        terms = [_sum_rightmost(t.log_abs_det_jacobian(xs, ys), inner - t.event_dim)
                 for t, xs, ys in zip(self.transforms, self._slices(x, "x"),
                                      self._slices(y, "y"))]
        stacked = _shapes.stack(terms, self.dim if self.dim >= 0 else self.dim + inner)
        return _sum_rightmost(stacked, self.event_dim - inner)  # (dim inside the event)

    def __repr__(self) -> str:
        return f"StackTransform({self.transforms!r}, dim={self.dim})"


#: The identity map (an empty composition): y = x, log|det| = 0.
identity_transform = ComposeTransform([])
