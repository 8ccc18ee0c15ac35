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

from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_picking as _picking

__all__ = [
    "Constraint", "boolean", "dependent", "greater_than", "greater_than_eq",
    "half_open_interval", "independent", "integer_interval", "interval", "lower_cholesky",
    "nonnegative", "nonnegative_integer", "positive", "positive_definite", "real",
    "real_vector", "simplex", "unit_interval",
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


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return F.all(value >= 0, dim=-1) & (F.abs(value.sum(-1) - 1) < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = F.all(F.all(value.tril() == value, dim=-1), dim=-1)
        diagonal = F.all(_picking.diagonal(value, 0, -2, -1) > 0, dim=-1)
        return lower & diagonal


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        import numpy as np

        symmetric = F.all(F.all(F.isclose(value, value.transpose(-1, -2)), dim=-1), dim=-1)
        array = np.asarray(value.detach().numpy())  # (a check: read off the values)
        eigen = np.linalg.eigvalsh(array).min(-1) > 0
        return symmetric & _creation.tensor(eigen)


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


class _Dependent(Constraint):
    """The support depends on a parameter (Uniform's [low, high)): checked by the distribution."""

    def check(self, value):
        raise ValueError("a dependent constraint cannot be checked on its own: the "
                         "distribution checks it against its parameters")


real = _Real()
real_vector = _Independent(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _NonnegativeInteger()
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
dependent = _Dependent()
greater_than, greater_than_eq = _GreaterThan, _GreaterThanEq
interval, half_open_interval, integer_interval = _Interval, _HalfOpenInterval, _IntegerInterval
independent = _Independent
