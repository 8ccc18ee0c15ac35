r"""Pruning: zero out a layer's weights by a mask, and keep them zero while training.

Pruning ``module.weight`` moves the parameter to ``module.weight_orig`` (still trained),
adds a buffer ``module.weight_mask`` of zeros and ones, and a forward pre-hook that sets
the plain attribute ``module.weight = weight_orig * weight_mask`` before each call.  The
gradient reaching ``weight_orig`` is the mask times the weight's gradient
(:math:`\partial L / \partial w_{\text{orig}} = m \odot \partial L / \partial w`), so the
pruned entries stay where they are.  Pruning again prunes the entries still unpruned
(a :class:`PruningContainer` combines the masks); :func:`remove` makes the pruning
permanent (``weight`` is one parameter again, zeros included).

``amount`` is an int (how many entries, or channels, to prune) or a float in [0, 1]
(that fraction of them, rounded).  The methods, as in PyTorch:

=========================  ==============  ===========================================
function                   class           prunes
=========================  ==============  ===========================================
``identity``               Identity        nothing (a mask of ones)
``random_unstructured``    RandomUnstr.    entries chosen at random
``l1_unstructured``        L1Unstructured  the entries of smallest absolute value
``random_structured``      RandomStruct.   whole channels along ``dim``, at random
``ln_structured``          LnStructured    the channels of smallest L\ :sub:`n` norm
``global_unstructured``    (any unstr.)    across several tensors at once
``custom_from_mask``       CustomFromMask  where a given mask is 0
=========================  ==============  ===========================================
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

from difflab.autograd.grad_mode import no_grad
from difflab.creation import ones_like, rand, rand_like, zeros_like
from difflab.functions import norm
from difflab.functions_indexing import topk
from difflab.functions_statistics import kthvalue
from difflab.nn.modules.module import Module
from difflab.nn.utils._pre_hooks import drop_pre_hook, pre_hooks_on
from difflab.nn.utils.convert_parameters import parameters_to_vector
from difflab.tensor import Tensor

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


class BasePruningMethod:
    """The base of the pruning methods: a subclass gives ``compute_mask(t, default_mask)``.

    An instance is also the forward pre-hook that recomputes ``module.<name> =
    <name>_orig * <name>_mask`` before each call.  ``PRUNING_TYPE`` says how it
    combines with an earlier pruning of the same tensor: ``"unstructured"`` (it sees the
    unpruned entries), ``"structured"`` (the channels along ``dim`` not wholly pruned)
    or ``"global"`` (the whole tensor).

    Examples
    --------
    A method pruning the negative entries:

    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> class Negatives(prune.BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         return default_mask * (t >= 0).to(default_mask.dtype)
    >>> m = nn.Linear(2, 2)
    >>> m.weight.data = dl.tensor([[1.0, -2.0], [-3.0, 4.0]])
    >>> _ = Negatives.apply(m, "weight")
    >>> m.weight_mask
    tensor([[1., 0.],
            [0., 1.]])
    """

    PRUNING_TYPE: str | None = None
    _tensor_name: str | None = None

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask so far (``default_mask``): subclasses."""
        raise NotImplementedError(f"{type(self).__name__} must define compute_mask(t, "
                                  "default_mask), the method's mask")

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` of ``module`` (recorded: the gradient reaches the
        original through the mask)."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (on top of earlier pruning)."""
        method, old_entry = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise ValueError(f"importance_scores should have the same shape as parameter "
                                 f"{name} of {type(module).__name__}: "
                                 f"{tuple(importance_scores.shape)} != {tuple(orig.shape)}")
        else:
            importance_scores = orig
        first = old_entry is None
        if first:  # move module.<name> to module.<name>_orig
            if name not in module._parameters:
                raise ValueError(f"Parameter '{name}' of module {type(module).__name__} is not "
                                 "a parameter: only parameters can be pruned")
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:  # anything wrong: the module stays as it was
            with no_grad():
                mask = method.compute_mask(importance_scores, default_mask=default_mask)
        except Exception:
            if first:
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        if not first:
            drop_pre_hook(module, old_entry)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` pruned by this method (no module involved): ``t * compute_mask(...)``."""
        scores = t if importance_scores is None else importance_scores
        mask = self.compute_mask(scores, default_mask=ones_like(t) if default_mask is None
                                 else default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is one parameter, ``orig * mask``."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            delattr(module, self._tensor_name)
        orig = module._parameters.pop(self._tensor_name + "_orig")
        orig.data = weight.data
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type, module: Module, name: str, *args: Any, **kwargs: Any
                      ) -> tuple[BasePruningMethod, int | None]:
    """The new method, joined in a new container with the one already pruning ``name``;
    and the id of that one's hook (None if ``name`` is not pruned yet)."""
    found = pre_hooks_on(module, BasePruningMethod, name, attribute="_tensor_name")
    assert len(found) <= 1, (f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not found:
        return method, None
    old = module._forward_pre_hooks[found[0]]
    container = PruningContainer(*old) if isinstance(old, PruningContainer) else (
        PruningContainer(old))
    container.add_pruning_method(method)
    return container, found[0]


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor (iterative pruning).

    Its mask is the last method's, computed on what the earlier ones left: an
    unstructured method sees only the entries still unpruned (so ``amount=0.5`` twice
    prunes 75%), a structured one the channels not wholly pruned.

    Parameters
    ----------
    *args : BasePruningMethod
        The methods so far (all on the same tensor).

    Raises
    ------
    TypeError
        If a method is not a ``BasePruningMethod``.
    ValueError
        If a method acts on another tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = nn.Linear(4, 2)
    >>> _ = prune.l1_unstructured(m, "weight", amount=0.5)
    >>> _ = prune.l1_unstructured(m, "weight", amount=0.5)   # half of what is left
    >>> hook = next(iter(m._forward_pre_hooks.values()))
    >>> type(hook).__name__, len(hook), int((m.weight_mask == 0).sum())
    ('PruningContainer', 2, 6)
    """

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if args and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must act on this container's tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the part of ``t`` still unpruned."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            where: Any = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have '
                                     "the attribute `dim` defined.")
            n_dims, dim = t.dim(), method.dim
            dim = dim + n_dims if dim < 0 else dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            # the channels not yet wholly pruned
            keep = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            where = tuple(keep if d == dim else slice(None) for d in range(n_dims))
        elif method.PRUNING_TYPE == "global":
            where = tuple(slice(None) for _ in range(t.dim()))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prune nothing: the mask is all ones (the pruning machinery, with no effect).

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = prune.Identity.apply(nn.Linear(2, 2), "weight")
    >>> type(m).__name__
    'Identity'
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` by nothing."""
        return super().apply(module, name)


def _validate_amount_init(amount: Any) -> None:
    """``amount``: a non-negative int, or a float in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral)
            and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _n_to_prune(amount: Any, tensor_size: int) -> int:
    """An int as it is; a fraction of ``tensor_size``, rounded (half to even, as Python)."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _validate_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {tuple(t.shape)} with {t.dim()} dims")
    if dim >= t.dim() or dim < -t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _zero_at(mask: Tensor, flat_indices: Tensor) -> Tensor:
    """A copy of ``mask`` with the entries at ``flat_indices`` (of the flattened mask) 0."""
    flat = mask.reshape(-1).clone()
    flat[flat_indices] = 0
    return flat.reshape(mask.shape)


def _channels_mask(t: Tensor, dim: int, channels: Any) -> Tensor:
    """Zeros shaped like ``t``, ones on the ``channels`` (a boolean or index tensor) of ``dim``."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` entries chosen uniformly at random.

    Parameters
    ----------
    amount : int or float
        How many entries (int) or which fraction of them (float in [0, 1]).

    Raises
    ------
    TypeError, ValueError
        If ``amount`` is not a number, is negative, or a float above 1.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils import prune
    >>> int((prune.RandomUnstructured(amount=3).prune(dl.ones(2, 4)) == 0).sum())
    3
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with ``amount`` random entries set to 0."""
        size = t.numel()
        n = _n_to_prune(self.amount, size)
        _validate_amount(n, size)
        if n == 0:
            return default_mask.clone()
        return _zero_at(default_mask, topk(rand_like(t).reshape(-1), k=n).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float  # type: ignore[override]
              ) -> BasePruningMethod:
        """Prune ``module.<name>`` (see :func:`random_unstructured`)."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` entries of smallest absolute value (magnitude pruning).

    Parameters
    ----------
    amount : int or float
        How many entries (int) or which fraction of them (float in [0, 1]).

    Raises
    ------
    TypeError, ValueError
        If ``amount`` is not a number, is negative, or a float above 1.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils import prune
    >>> prune.L1Unstructured(amount=0.5).prune(dl.tensor([0.1, -3.0, 2.0, -0.2]))
    tensor([ 0., -3.,  2., -0.])
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the ``amount`` smallest ``|t|`` entries set to 0."""
        size = t.numel()
        n = _n_to_prune(self.amount, size)
        _validate_amount(n, size)
        if n == 0:
            return default_mask.clone()
        return _zero_at(default_mask, topk(t.abs().reshape(-1), k=n, largest=False).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        """Prune ``module.<name>`` (see :func:`l1_unstructured`)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole channels (slices along ``dim``) chosen at random.

    Parameters
    ----------
    amount : int or float
        How many channels (int) or which fraction of them (float in [0, 1]).
    dim : int, default -1
        The dimension whose slices are the channels.

    Raises
    ------
    TypeError, ValueError
        If ``amount`` is not a number, is negative, or a float above 1.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils import prune
    >>> pruned = prune.RandomStructured(amount=1, dim=0).prune(dl.ones(3, 2))
    >>> sorted(pruned.sum(dim=1).tolist())
    [0.0, 2.0, 2.0]
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` times ones with ``amount`` random channels of zeros."""
        _validate_structured(t, self.dim)
        size = t.shape[self.dim]
        n = _n_to_prune(self.amount, size)
        _validate_amount(n, size)
        if n == 0:
            return default_mask
        prob = rand(size)
        threshold = kthvalue(prob, k=n).values
        mask = _channels_mask(t, self.dim, prob > threshold)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        """Prune ``module.<name>`` (see :func:`random_structured`)."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels (slices along ``dim``) of smallest L\\ :sub:`n` norm.

    Parameters
    ----------
    amount : int or float
        How many channels (int) or which fraction of them (float in [0, 1]).
    n : int, float, inf, -inf, 'fro' or 'nuc'
        The norm's order (as ``difflab.norm``'s ``p``).
    dim : int, default -1
        The dimension whose slices are the channels.

    Raises
    ------
    TypeError, ValueError
        If ``amount`` is not a number, is negative, or a float above 1.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils import prune
    >>> t = dl.tensor([[1.0, 5.0], [0.5, 0.1], [2.0, 2.0]])
    >>> prune.LnStructured(amount=1, n=1, dim=0).prune(t)
    tensor([[1., 5.],
            [0., 0.],
            [2., 2.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` times ones with the ``amount`` weakest channels zero."""
        _validate_structured(t, self.dim)
        size = t.shape[self.dim]
        n_prune = _n_to_prune(self.amount, size)
        _validate_amount(n_prune, size)
        if n_prune == 0:
            return default_mask
        dim = self.dim % t.dim()
        norms = norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = topk(norms, k=size - n_prune, largest=True).indices
        mask = _channels_mask(t, dim, keep)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              n: Any, dim: int, importance_scores: Tensor | None = None) -> BasePruningMethod:
        """Prune ``module.<name>`` (see :func:`ln_structured`)."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune where a given mask is 0.

    Parameters
    ----------
    mask : Tensor
        Zeros where to prune, ones elsewhere; the tensor's shape.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils import prune
    >>> prune.CustomFromMask(dl.tensor([1.0, 0.0, 1.0])).prune(dl.tensor([4.0, 5.0, 6.0]))
    tensor([4., 0., 6.])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask * mask``."""
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"the mask's shape {tuple(self.mask.shape)} is not the tensor's "
                             f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor  # type: ignore[override]
              ) -> BasePruningMethod:
        """Prune ``module.<name>`` where ``mask`` is 0."""
        return super().apply(module, name, mask=mask)


# --------------------------------------------------------------------- functions
def identity(module: Module, name: str) -> Module:
    """Prune ``module.<name>`` by nothing: the pruning machinery with a mask of ones.

    Parameters
    ----------
    module : Module
        The module.
    name : str
        The parameter.

    Returns
    -------
    Module
        ``module``, with ``<name>_orig``, ``<name>_mask`` and the hook.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = prune.identity(nn.Linear(2, 3), "bias")
    >>> m.bias_mask
    tensor([1., 1., 1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` entries of ``module.<name>`` chosen at random.

    Parameters
    ----------
    module : Module
        The module.
    name : str
        The parameter.
    amount : int or float
        How many entries (int) or which fraction of them (float in [0, 1]); on an
        already pruned tensor, counted among the entries still unpruned.

    Returns
    -------
    Module
        ``module``, with ``<name>_orig``, ``<name>_mask`` and the hook.

    Raises
    ------
    TypeError, ValueError
        If ``amount`` is not a number, negative, a float above 1, or more than the entries.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = prune.random_unstructured(nn.Linear(4, 5), "weight", amount=0.25)
    >>> int((m.weight_mask == 0).sum())
    5
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float,
                    importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value.

    Parameters
    ----------
    module : Module
        The module.
    name : str
        The parameter.
    amount : int or float
        How many entries (int) or which fraction of them (float in [0, 1]); on an
        already pruned tensor, counted among the entries still unpruned.
    importance_scores : Tensor, optional
        Rank these instead of the parameter's values (its shape).

    Returns
    -------
    Module
        ``module``, with ``<name>_orig``, ``<name>_mask`` and the hook.

    Raises
    ------
    TypeError, ValueError
        If ``amount`` is not a number, negative, a float above 1, or more than the entries.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = nn.Linear(2, 2)
    >>> m.weight.data = dl.tensor([[0.1, -2.0], [3.0, -0.05]])
    >>> m = prune.l1_unstructured(m, "weight", amount=2)
    >>> m.weight_mask
    tensor([[0., 1.],
            [1., 0.]])
    >>> sorted(name for name, _ in m.named_parameters())
    ['bias', 'weight_orig']
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` whole channels (slices along ``dim``) of ``module.<name>`` at random.

    Parameters
    ----------
    module : Module
        The module.
    name : str
        The parameter (at least 2 dimensions).
    amount : int or float
        How many channels (int) or which fraction (float in [0, 1]).
    dim : int
        The dimension whose slices are the channels.

    Returns
    -------
    Module
        ``module``, with ``<name>_orig``, ``<name>_mask`` and the hook.

    Raises
    ------
    ValueError
        On a bad ``amount`` or a 1-d tensor.
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = prune.random_structured(nn.Linear(3, 4), "weight", amount=2, dim=0)
    >>> sorted(m.weight_mask.sum(dim=1).tolist())
    [0.0, 0.0, 3.0, 3.0]
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` channels (slices along ``dim``) of smallest L\\ :sub:`n` norm.

    Parameters
    ----------
    module : Module
        The module.
    name : str
        The parameter (at least 2 dimensions).
    amount : int or float
        How many channels (int) or which fraction (float in [0, 1]).
    n : int, float, inf, -inf, 'fro' or 'nuc'
        The norm's order.
    dim : int
        The dimension whose slices are the channels (0: a layer's output units).
    importance_scores : Tensor, optional
        Rank the channels of these instead of the parameter's.

    Returns
    -------
    Module
        ``module``, with ``<name>_orig``, ``<name>_mask`` and the hook.

    Raises
    ------
    ValueError
        On a bad ``amount`` or a 1-d tensor.
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = nn.Linear(2, 3)
    >>> m.weight.data = dl.tensor([[1.0, 1.0], [0.1, 0.2], [3.0, 0.0]])
    >>> prune.ln_structured(m, "weight", amount=1, n=2, dim=0).weight
    tensor([[1., 1.],
            [0., 0.],
            [3., 0.]], grad_fn=<MulBackward0>)
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune several tensors together: rank all their entries as one vector.

    With ``L1Unstructured`` and ``amount=0.2``, the 20% of entries of smallest absolute
    value across all the tensors are pruned (a layer of small weights loses more than
    one of large weights).  Each tensor then holds its part of the mask, as if pruned by
    :func:`custom_from_mask`; tensors already pruned keep their masks, and only their
    unpruned entries are ranked.

    Parameters
    ----------
    parameters : iterable of (Module, str)
        The tensors, as ``(module, name)`` pairs.
    pruning_method : type
        An unstructured pruning class (``L1Unstructured``, ``RandomUnstructured``, or
        one of your own).
    importance_scores : dict, optional
        ``{(module, name): scores}``: rank these instead of the tensors' values.
    **kwargs
        Given to ``pruning_method`` (``amount=...``).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        If ``parameters`` is not iterable, ``importance_scores`` not a dict, or the
        method not unstructured.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> a, b = nn.Linear(2, 1, bias=False), nn.Linear(2, 1, bias=False)
    >>> a.weight.data = dl.tensor([[0.1, 0.2]])
    >>> b.weight.data = dl.tensor([[3.0, 4.0]])
    >>> prune.global_unstructured([(a, "weight"), (b, "weight")],
    ...                           pruning_method=prune.L1Unstructured, amount=2)
    >>> a.weight_mask, b.weight_mask
    (tensor([[0., 0.]]), tensor([[1., 1.]]))
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, name), getattr(m, name))
                                   for m, name in parameters])
    default_mask = parameters_to_vector([getattr(m, name + "_mask") if hasattr(m, name + "_mask")
                                         else ones_like(getattr(m, name))
                                         for m, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    with no_grad():
        final_mask = container.compute_mask(scores.detach(), default_mask)
    start = 0
    for m, name in parameters:
        param = getattr(m, name)
        size = param.numel()
        custom_from_mask(m, name, mask=final_mask[start:start + size].reshape(param.shape))
        start += size


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0.

    Parameters
    ----------
    module : Module
        The module.
    name : str
        The parameter.
    mask : Tensor
        Zeros where to prune, ones elsewhere; the parameter's shape.

    Returns
    -------
    Module
        ``module``, with ``<name>_orig``, ``<name>_mask`` and the hook.

    Raises
    ------
    ValueError
        If ``mask`` has another shape.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = prune.custom_from_mask(nn.Linear(3, 2), "bias", mask=dl.tensor([0.0, 1.0]))
    >>> (m.bias == 0).tolist(), m.bias_mask
    ([True, False], tensor([0., 1.]))
    """
    CustomFromMask.apply(module, name, mask=mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: one parameter again, zeros included.

    ``<name>_orig``, ``<name>_mask`` and the hook go; the parameter ``<name>`` is the
    object that was ``<name>_orig`` (an optimizer holding it still trains it), holding
    ``orig * mask``.

    Parameters
    ----------
    module : Module
        A module with ``<name>`` pruned.
    name : str
        The parameter.

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If ``module.<name>`` is not pruned.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> m = prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1)
    >>> m = prune.remove(m, "weight")
    >>> list(m.state_dict()), int((m.weight == 0).sum()), prune.is_pruned(m)
    (['bias', 'weight'], 1, False)
    """
    for hook_id in pre_hooks_on(module, BasePruningMethod, name, attribute="_tensor_name"):
        drop_pre_hook(module, hook_id).remove(module)
        return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any module inside it has a pruned tensor.

    Parameters
    ----------
    module : Module
        The model.

    Returns
    -------
    bool
        True if some submodule has a pruning hook.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import prune
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    >>> prune.is_pruned(net)
    False
    >>> _ = prune.random_unstructured(net[0], "weight", amount=1)
    >>> prune.is_pruned(net)
    True
    """
    return any(isinstance(hook, BasePruningMethod)
               for m in module.modules()
               for hook in m.__dict__.get("_forward_pre_hooks", {}).values())
