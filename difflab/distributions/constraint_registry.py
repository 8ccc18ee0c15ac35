r"""``biject_to`` and ``transform_to``: from unconstrained numbers to a constraint.

An optimizer moves parameters anywhere on the real line; a scale must stay
positive, a probability vector on the simplex.  Optimize an unconstrained u
and use ``transform_to(constraint)(u)``: a map from the reals onto the
constrained set (``torch.distributions.constraint_registry``).

* ``biject_to(c)`` is a *bijection* (with a log-determinant: what a
  change of variables in a density, as in variational inference, needs);
* ``transform_to(c)`` is any map onto c (may be cheaper, need not be
  invertible: softmax for the simplex).

Both are tables from a constraint's class to a factory, extended with
``register``.

>>> import difflab as dl
>>> from difflab.distributions import constraints, transform_to
>>> t = transform_to(constraints.positive)                  # exp
>>> t(dl.tensor([0.0])).tolist()
[1.0]
"""

from __future__ import annotations

import numbers
import typing

from difflab.distributions import constraints
from difflab.distributions import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to factories of transforms onto them.

    Parameters
    ----------
    name : str
        What the registry is called in its errors (``biject_to``, ``transform_to``).

    Returns
    -------
    Transform
        Calling the registry with a constraint returns the registered factory's
        transform for it (found by the constraint's class, then its base classes).

    Examples
    --------
    >>> from difflab.distributions import constraints
    >>> from difflab.distributions.constraint_registry import ConstraintRegistry
    >>> from difflab.distributions.transforms import ExpTransform
    >>> mine = ConstraintRegistry("mine")
    >>> _ = mine.register(constraints.positive, lambda c: ExpTransform())
    >>> mine(constraints.positive)
    ExpTransform()
    """

    def __init__(self, name: str = "registry") -> None:
        self.name = name
        self._registry: dict[type, typing.Callable[[typing.Any], T.Transform]] = {}

    def register(self, constraint: typing.Any,
                 factory: typing.Callable[[typing.Any], T.Transform] | None = None
                 ) -> typing.Any:
        """Register ``factory(constraint) -> Transform`` for a constraint (or its class).

        Parameters
        ----------
        constraint : Constraint or type
            A constraint object (its class is registered) or a Constraint subclass.
        factory : callable, optional
            Takes the constraint, returns the transform.  Left out: ``register``
            is a decorator.

        Returns
        -------
        callable
            The factory (or, as a decorator, the function that registers it).

        Examples
        --------
        >>> from difflab.distributions import constraints
        >>> from difflab.distributions.constraint_registry import ConstraintRegistry
        >>> from difflab.distributions.transforms import SoftplusTransform
        >>> mine = ConstraintRegistry("mine")
        >>> @mine.register(constraints.positive)
        ... def _(constraint):
        ...     return SoftplusTransform()
        >>> mine(constraints.positive)
        SoftplusTransform()
        """
        if factory is None:
            return lambda f: self.register(constraint, f)
        key = constraint if isinstance(constraint, type) else type(constraint)
        if not (isinstance(key, type) and issubclass(key, constraints.Constraint)):
            raise TypeError(f"{self.name}.register takes a Constraint or a Constraint "
                            f"subclass, got {constraint!r}")
        self._registry[key] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> T.Transform:
        if not isinstance(constraint, constraints.Constraint):
            raise TypeError(f"{self.name} takes a constraint (difflab.distributions."
                            f"constraints), got {type(constraint).__name__}")
        if constraint.is_discrete:
            raise NotImplementedError(f"{self.name} maps the reals onto continuous sets; "
                                      f"{constraint!r} is discrete")
        for cls in type(constraint).__mro__:
            if cls in self._registry:
                return self._registry[cls](constraint)
        raise NotImplementedError(
            f"{self.name} has no transform for {constraint!r}: register one with "
            f"{self.name}.register(constraint, factory)")


biject_to = ConstraintRegistry("biject_to")
transform_to = ConstraintRegistry("transform_to")


def _real(constraint):
    return T.identity_transform


def _is(bound: typing.Any, number: float) -> bool:
    """Whether a bound is the plain number ``number`` (a tensor of bounds, one per batch
    member, takes the general transform: comparing it would ask a tensor for one bool)."""
    return isinstance(bound, numbers.Number) and bound == number


def _greater_than(constraint):
    """exp onto (0, ∞), then shifted to (lower_bound, ∞) (positive, nonnegative: no shift)."""
    if _is(constraint.lower_bound, 0):
        return T.ExpTransform()
    return T.ComposeTransform([T.ExpTransform(),
                               T.AffineTransform(constraint.lower_bound, 1.0)])


def _less_than(constraint):
    """exp onto (0, ∞), then reflected to (-∞, upper_bound): y = upper_bound - eˣ."""
    return T.ComposeTransform([T.ExpTransform(),
                               T.AffineTransform(constraint.upper_bound, -1.0)])


def _interval(constraint):
    """σ onto (0, 1), then stretched to (lower_bound, upper_bound)."""
    low, high = constraint.lower_bound, constraint.upper_bound
    if _is(low, 0) and _is(high, 1):
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(low, high - low)])


def _independent(registry):
    def factory(constraint):
        return T.IndependentTransform(registry(constraint.base),
                                      constraint.reinterpreted_batch_ndims)
    return factory


def _cat(registry):
    """One transform per piece (the registry's for its constraint), joined by CatTransform."""
    def factory(constraint):
        return T.CatTransform([registry(c) for c in constraint.cseq], constraint.dim,
                              constraint.lengths)
    return factory


def _stack(registry):
    def factory(constraint):
        return T.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)
    return factory


for _registry in (biject_to, transform_to):
    _registry.register(type(constraints.real), lambda c: T.identity_transform)
    _registry.register(constraints.greater_than, _greater_than)  # positive, nonnegative too
    _registry.register(constraints.interval, _interval)          # half_open, unit_interval
    _registry.register(constraints.less_than, _less_than)
    _registry.register(constraints.independent, _independent(_registry))
    _registry.register(constraints.cat, _cat(_registry))
    _registry.register(constraints.stack, _stack(_registry))
    _registry.register(type(constraints.corr_cholesky), lambda c: T.CorrCholeskyTransform())
biject_to.register(type(constraints.simplex), lambda c: T.StickBreakingTransform())
transform_to.register(type(constraints.simplex), lambda c: T.SoftmaxTransform())
# (onto, not a bijection: the upper triangle of the square matrix is forgotten)
transform_to.register(type(constraints.lower_cholesky), lambda c: T.LowerCholeskyTransform())
# (L Lᵀ of that: onto the positive definite matrices, again forgetting the upper triangle)
transform_to.register(type(constraints.positive_definite), lambda c: T.PositiveDefiniteTransform())
transform_to.register(type(constraints.positive_semidefinite),
                      lambda c: T.PositiveDefiniteTransform())
