r"""The base class of every distribution: shapes, checks, and what a subclass fills in.

A distribution has a *batch shape* (independent distributions side by side,
from broadcasting its parameters) and an *event shape* (the shape of one
draw: ``()`` for a number, ``(k,)`` for a vector).  ``sample(sample_shape)``
returns ``sample_shape + batch_shape + event_shape``; ``log_prob(value)``
one log density per draw, of shape ``sample_shape + batch_shape``.

``rsample`` draws by *reparameterization*: the sample is a differentiable
function of the parameters and of noise that does not depend on them
(x = μ + σ·ε for a normal), so a loss of samples has pathwise gradients.
``sample`` is the same draw with no gradient.  A distribution without such a
form (a discrete one, a gamma) has ``has_rsample = False`` and its
``rsample`` says so.

>>> import difflab as dl
>>> from difflab.distributions import Normal
>>> Normal(dl.zeros(3), 1.0).sample((2,)).shape
difflab.Size([2, 3])
"""

from __future__ import annotations

import typing

from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_joining as _joining
from difflab.autograd.grad_mode import no_grad
from difflab.distributions import constraints
from difflab.dtypes import get_default_dtype
from difflab.tensor import Tensor
from difflab.tensor_arguments import Size

__all__ = ["Distribution", "ExponentialFamily"]


def as_parameter(value: typing.Any, like: typing.Any = None) -> Tensor:
    """A parameter as a floating tensor: numbers and lists made in the dtype and on the
    device of ``like`` (another parameter) when that is a floating tensor, as PyTorch's
    ``broadcast_all`` makes them, so that ``Normal(0.0, scale.cuda().double())`` keeps its
    ``loc`` on the GPU in float64 next to its scale; else in the default dtype."""
    if isinstance(value, Tensor):
        return value if value.dtype.is_floating_point else value.to(get_default_dtype())
    if isinstance(like, Tensor):
        dtype = like.dtype if like.dtype.is_floating_point else get_default_dtype()
        return _creation.tensor(value, dtype=dtype, device=like.device)
    return _creation.tensor(value, dtype=get_default_dtype())


def broadcast_all(*values: typing.Any) -> tuple[Tensor, ...]:
    """The parameters as floating tensors of one broadcast shape (``broadcast_all``); the
    numbers among them on the device of the first tensor among them (as PyTorch's)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    tensors = [as_parameter(v, like) for v in values]
    return tuple(_joining.broadcast_tensors(*tensors))


class Distribution:
    """A probability distribution with PyTorch's interface.

    Parameters
    ----------
    batch_shape : tuple of int
        The shape of the batch of independent distributions.
    event_shape : tuple of int
        The shape of one draw.
    validate_args : bool, optional
        Check parameters (at construction) and values (``log_prob``, ``cdf``)
        against their constraints, with an error naming what is wrong.  The
        default is :meth:`set_default_validate_args` (True, as PyTorch's).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Normal
    >>> d = Normal(dl.tensor([0.0, 1.0]), dl.tensor([1.0, 2.0]))
    >>> d.batch_shape, d.event_shape
    (difflab.Size([2]), difflab.Size([]))
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: constraints.Constraint | None = None
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Whether distributions check their arguments unless told (True at start).

        Examples
        --------
        >>> from difflab.distributions import Distribution
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args takes True or False, got {value!r}")
        Distribution._validate_default = value

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate_args = (Distribution._validate_default if validate_args is None
                               else validate_args)
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        for name, constraint in self.arg_constraints.items():
            if constraints.dependent is constraint or name not in self._given():
                continue
            value = getattr(self, name)
            if not bool(F.all(constraint.check(value.detach()))):
                raise ValueError(
                    f"Expected parameter {name} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {type(self).__name__} to satisfy "
                    f"the constraint {constraint!r}, but found invalid values:\n{value}")

    def _given(self) -> tuple[str, ...]:
        """The names of the parameters this instance was built from (probs or logits, ...)."""
        return tuple(self.arg_constraints)

    def _a_parameter(self) -> Tensor | None:
        """One of the parameters' tensors: a number given as a value (``d.cdf(0.5)``) is
        made on its device (a distribution built on others answers with theirs)."""
        for name in self._given():
            value = getattr(self, name, None)
            if isinstance(value, Tensor):
                return value
        return None

    # -- shapes ------------------------------------------------------------------------
    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single draw."""
        return self._event_shape

    def _extended_shape(self, sample_shape: typing.Any = ()) -> Size:
        return Size(tuple(Size(sample_shape)) + tuple(self._batch_shape)
                    + tuple(self._event_shape))

    def expand(self, batch_shape: typing.Any, _instance: typing.Any = None) -> Distribution:
        """The same distribution with its parameters broadcast to ``batch_shape``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.distributions import Normal
        >>> Normal(0.0, 1.0).expand((3,)).batch_shape
        difflab.Size([3])
        """
        batch_shape = tuple(Size(batch_shape))
        params = {}
        for name in self._given():
            value = getattr(self, name)
            tail = tuple(value.shape[len(self._batch_shape):])
            params[name] = value.expand(*(batch_shape + tail))
        params.update(self._fixed_arguments())
        return type(self)(**params, validate_args=False)

    def _fixed_arguments(self) -> dict:
        """Constructor arguments that are not broadcast parameters (none by default)."""
        return {}

    # -- drawing -----------------------------------------------------------------------
    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        """Draws of shape ``sample_shape + batch_shape + event_shape``, with no gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        """Reparameterized draws: a differentiable function of the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterized sampler (rsample): its samples are "
            f"not a differentiable function of its parameters. Use sample(), and for "
            f"gradients the score function: (loss(x).detach() * d.log_prob(x)).mean()")

    def sample_n(self, n: int) -> Tensor:
        """``n`` draws (``sample((n,))``)."""
        return self.sample((n,))

    # -- what a subclass defines ----------------------------------------------------------
    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not define log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        """The distribution function P(X <= value)."""
        raise NotImplementedError(f"{type(self).__name__} does not define cdf")

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of :meth:`cdf` (the quantile function)."""
        raise NotImplementedError(f"{type(self).__name__} does not define icdf")

    def entropy(self) -> Tensor:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not define entropy")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support, along a new first dimension."""
        raise NotImplementedError(f"{type(self).__name__} has no finite support to enumerate")

    @property
    def mean(self) -> Tensor:
        """The mean."""
        raise NotImplementedError(f"{type(self).__name__} does not define mean")

    @property
    def mode(self) -> Tensor:
        """The most likely value."""
        raise NotImplementedError(f"{type(self).__name__} does not define mode")

    @property
    def variance(self) -> Tensor:
        """The variance."""
        raise NotImplementedError(f"{type(self).__name__} does not define variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation, the square root of :attr:`variance`."""
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    # -- checks ------------------------------------------------------------------------
    def _validate_sample(self, value: typing.Any) -> Tensor:
        value = as_parameter(value, self._a_parameter())
        if not self._validate_args:
            return value
        event = tuple(self._event_shape)
        if event and tuple(value.shape[len(value.shape) - len(event):]) != event:
            raise ValueError(f"The rightmost dimensions of value {tuple(value.shape)} must "
                             f"equal the event shape {event} of {type(self).__name__}")
        support = self.support
        if support is not None and support is not constraints.dependent:
            inside = support.check(value.detach())
            if not bool(F.all(inside)):
                raise ValueError(
                    f"Expected value argument ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                    f"distribution {type(self).__name__}, but found invalid values:\n{value}")
        return value

    def __repr__(self) -> str:
        parts = []
        for name in self._given():
            value = getattr(self, name)
            parts.append(f"{name}: {value.detach() if value.numel() == 1 else value.shape}")
        return f"{type(self).__name__}({', '.join(parts)})"


class ExponentialFamily(Distribution):
    """A distribution of the form p(x) = h(x) exp(⟨θ, T(x)⟩ - A(θ)).

    A subclass names its natural parameters θ (``_natural_params``), its log
    normalizer A (``_log_normalizer``) and E[log h(X)] (``_mean_carrier_measure``);
    then the entropy follows from the identity E[T(X)] = ∇A(θ):

        H = A(θ) - ⟨θ, ∇A(θ)⟩ - E[log h(X)],

    with ∇A taken by difflab's reverse mode (``create_graph``: the entropy stays
    differentiable).  Subclasses with a closed form override :meth:`entropy`;
    this one is the check that the two agree.

    Parameters
    ----------
    batch_shape, event_shape, validate_args
        As for :class:`difflab.distributions.Distribution`.

    Examples
    --------
    >>> from difflab.distributions import Exponential, ExponentialFamily
    >>> d = Exponential(2.0)
    >>> round(ExponentialFamily.entropy(d).item(), 6), round(d.entropy().item(), 6)
    (0.306853, 0.306853)
    """

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not name its natural parameters")

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define its log normalizer")

    @property
    def _mean_carrier_measure(self) -> typing.Any:
        return 0.0

    def entropy(self) -> Tensor:
        from difflab.autograd import grad

        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result = log_normalizer - self._mean_carrier_measure
        batch = tuple(self._batch_shape)
        for theta, g in zip(params, gradients):  # ⟨θ, ∇A⟩: summed over a parameter's event
            result = result - (theta * g).reshape(*batch, -1).sum(-1)
        return result
