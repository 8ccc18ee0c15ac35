r"""Constraints: where a parameter or a sample of a distribution may lie.

A constraint is a small object with ``check(value)``, a boolean tensor that is
True where ``value`` satisfies it (``torch.distributions.constraints``).  A
distribution names one per parameter (``arg_constraints``) and one for its
samples (``support``); with ``validate_args`` it checks them and names the
parameter and the constraint in its error.

>>> import difflab as dl
>>> from difflab.distributions import constraints
>>> constraints.positive.check(dl.tensor([1.0, 0.0, -2.0])).tolist()
[True, False, False]
"""

from __future__ import annotations

import typing

from difflab import backend
from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_picking as _picking
from difflab import functions_shapes as _shapes
from difflab.dtype_info import finfo
from difflab.dtypes import bool_ as _bool
from difflab.ops.shapes import plain_values

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than",
    "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
    "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square",
    "stack", "symmetric", "unit_interval",
]


class Constraint:
    """A region of values; ``check(value)`` is True elementwise (per event) inside it.

    ``event_dim`` is how many rightmost dimensions form one element of the region
    (1 for a simplex: a whole vector is or is not a probability vector).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import constraints
    >>> constraints.interval(0.0, 1.0).check(dl.tensor([0.5, 2.0])).tolist()
    [True, False]
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: typing.Any) -> typing.Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # (False for NaN only)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: float) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return value >= self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: float) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: float, upper_bound: float) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _NonnegativeInteger(Constraint):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= 0)


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: int) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        zeros_and_ones = F.all((value == 0) | (value == 1), dim=-1)
        return zeros_and_ones & (value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Counts >= 0 summing to at most ``upper_bound`` (PyTorch's check: not == upper_bound)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: int) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return F.all(value >= 0, dim=-1) & (value.sum(-1) <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Multinomial(upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return F.all(value >= 0, dim=-1) & (F.abs(value.sum(-1) - 1) < 1e-6)


def _all_of_matrix(value: typing.Any) -> typing.Any:
    """True where every entry of a (..., n, m) boolean tensor is: one verdict per matrix."""
    return F.all(F.all(value, dim=-1), dim=-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_of_matrix(value.tril() == value)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        diagonal = F.all(_picking.diagonal(value, 0, -2, -1) > 0, dim=-1)
        return _all_of_matrix(value.tril() == value) & diagonal


class _CorrCholesky(Constraint):
    """A lower Cholesky factor whose rows have unit length: L Lᵀ is a correlation matrix."""

    event_dim = 2

    def check(self, value):
        tolerance = finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = F.sqrt((value.detach() ** 2).sum(-1))
        unit_rows = F.all(F.abs(row_norm - 1.0) <= tolerance, dim=-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        square = value.shape[-2] == value.shape[-1]
        return _creation.full(tuple(value.shape[:-2]), square, dtype=_bool, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(F.all(square)):
            return square
        return _all_of_matrix(F.isclose(value, value.transpose(-1, -2), atol=1e-6))


def _eigenvalues(value: typing.Any) -> typing.Any:
    """The eigenvalues of symmetric matrices, read off the values (a check: no gradient;
    under forward mode, of the dual numbers' values)."""
    import numpy as np

    array = plain_values(value)                 # the tensor's array (dual numbers, in jvp)
    return np.linalg.eigvalsh(backend.to_numpy(plain_values(array)))   # (their values)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(F.any(symmetric)):  # (not square, or nothing symmetric to decompose)
            return symmetric
        return symmetric & _creation.tensor(_eigenvalues(value).min(-1) >= 0,
                                             device=symmetric.device)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(F.any(symmetric)):
            return symmetric
        return symmetric & _creation.tensor(_eigenvalues(value).min(-1) > 0,
                                             device=symmetric.device)


class _Independent(Constraint):
    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete

    def check(self, value):
        result = self.base.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = F.all(result, dim=-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base!r}, {self.reinterpreted_batch_ndims})"


class _Cat(Constraint):
    """Constraints side by side along ``dim``: piece i (``lengths[i]`` long) satisfies ``cseq[i]``.

    The constraint of a value built by ``cat`` (``CatTransform``'s domain and codomain).
    """

    def __init__(self, cseq: typing.Sequence[Constraint], dim: int = 0,
                 lengths: typing.Sequence[int] | None = None) -> None:
        self.cseq = _constraint_list(cseq, "cat")
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat takes one length per constraint: {len(self.cseq)} "
                             f"constraints, {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(value, self.dim, "cat")
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _shapes.cat(checks, self.dim)

    def __repr__(self) -> str:
        return f"Cat({self.cseq!r}, dim={self.dim}, lengths={self.lengths})"


class _Stack(Constraint):
    """Constraints stacked along ``dim``: the i-th slice satisfies ``cseq[i]``.

    The constraint of a value built by ``stack`` (``StackTransform``'s domain and codomain).
    """

    def __init__(self, cseq: typing.Sequence[Constraint], dim: int = 0) -> None:
        self.cseq = _constraint_list(cseq, "stack")
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim  # (dim counted from the right, in an event)

    def check(self, value):
        _check_dim(value, self.dim, "stack")
        if value.shape[self.dim] != len(self.cseq):
            raise ValueError(f"stack of {len(self.cseq)} constraints checks values with "
                             f"{len(self.cseq)} slices along dim {self.dim}, got "
                             f"{value.shape[self.dim]} (shape {tuple(value.shape)})")
        slices = [value.select(self.dim, i) for i in range(len(self.cseq))]
        return _shapes.stack([c.check(v) for c, v in zip(self.cseq, slices)], self.dim)

    def __repr__(self) -> str:
        return f"Stack({self.cseq!r}, dim={self.dim})"


def _constraint_list(cseq: typing.Any, name: str) -> list[Constraint]:
    cseq = list(cseq)
    for i, c in enumerate(cseq):
        if not isinstance(c, Constraint):
            raise TypeError(f"{name} takes Constraints; item {i} is {type(c).__name__}: {c!r}")
    if not cseq:
        raise ValueError(f"{name} takes at least one constraint")
    return cseq


def _check_dim(value: typing.Any, dim: int, name: str) -> None:
    if not -value.dim() <= dim < value.dim():
        raise ValueError(f"{name}'s dim {dim} is out of range for a value with "
                         f"{value.dim()} dimensions (shape {tuple(value.shape)})")


def is_dependent(constraint: typing.Any) -> bool:
    """Whether ``constraint`` depends on a distribution's parameters (``dependent``).

    Parameters
    ----------
    constraint : Constraint
        Any constraint.

    Returns
    -------
    bool
        True for ``dependent`` and a :class:`dependent_property` read on its class
        (Uniform's ``support``): checked by the distribution itself.

    Examples
    --------
    >>> from difflab.distributions import constraints
    >>> constraints.is_dependent(constraints.dependent), constraints.is_dependent(constraints.real)
    (True, False)
    """
    return isinstance(constraint, _Dependent)


class _Dependent(Constraint):
    """The constraint depends on a parameter (Uniform's ``low`` and ``high``): checked by the
    distribution."""

    def check(self, value):
        raise ValueError("a dependent constraint cannot be checked on its own: the "
                         "distribution checks it against its parameters")


class dependent_property(property, _Dependent):  # noqa: N801 (PyTorch's name)
    """A property whose constraint depends on the instance: ``dependent`` on the class.

    A distribution whose support is built from its parameters (Uniform's
    ``interval(low, high)``) defines ``support`` with it, as
    ``torch.distributions.constraints.dependent_property``: read on an
    instance, the method's constraint (checkable); read on the class, the
    property itself, a dependent constraint (:func:`is_dependent` is True:
    there are no parameters to check against yet).

    Parameters
    ----------
    fn : callable
        The method, ``self -> Constraint``.
    is_discrete : bool, default False, keyword-only
        Whether the constraint it stands for is discrete (on the class).
    event_dim : int, default 0, keyword-only
        Its event dimensions (on the class).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Uniform, constraints
    >>> constraints.is_dependent(Uniform.support)           # on the class
    True
    >>> d = Uniform(dl.tensor([0.0, -1.0]), dl.tensor([1.0, 1.0]))
    >>> d.support.check(dl.tensor([0.5, 2.0])).tolist()    # on an instance: an interval
    [True, False]
    """

    def __init__(self, fn: typing.Any = None, *, is_discrete: bool = False,
                 event_dim: int = 0) -> None:
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn: typing.Any) -> dependent_property:
        """As a decorator with settings: ``@dependent_property(event_dim=1)``."""
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)

    def __repr__(self) -> str:
        return f"DependentProperty({getattr(self.fget, '__name__', '?')})"


real = _Real()
real_vector = _Independent(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _NonnegativeInteger()
simplex = _Simplex()
one_hot = _OneHot()
positive_integer = _IntegerGreaterThan(1)
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
dependent = _Dependent()
greater_than, greater_than_eq, less_than = _GreaterThan, _GreaterThanEq, _LessThan
interval, half_open_interval, integer_interval = _Interval, _HalfOpenInterval, _IntegerInterval
independent = _Independent
cat, stack, multinomial = _Cat, _Stack, _Multinomial
