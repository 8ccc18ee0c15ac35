r"""Spectral normalization by a forward pre-hook (PyTorch's older ``nn.utils.spectral_norm``).

``spectral_norm(module)`` renames the parameter ``weight`` to ``weight_orig``, adds the
buffers ``weight_u`` and ``weight_v`` (the power iteration's singular vectors) and a
forward pre-hook that sets the plain attribute ``module.weight = weight_orig / sigma``
before each call.  :func:`difflab.nn.utils.parametrizations.spectral_norm` is the newer
form (recomputed at each access, 15 warm-up iterations at registration).
"""

from __future__ import annotations

from typing import Any

from difflab.autograd.grad_mode import no_grad
from difflab.nn import functional as F
from difflab.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter, is_lazy
from difflab.nn.utils._pre_hooks import drop_pre_hook, pre_hooks_on
from difflab.nn.utils.parametrizations import _weight_matrix
from difflab.tensor import Tensor

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    r"""The forward pre-hook of :func:`spectral_norm`: ``module.<name> = W / (u^T W v)``.

    Parameters
    ----------
    name : str, default "weight"
        The tensor it computes.
    n_power_iterations : int, default 1
        Power-iteration steps per call in training mode (positive).
    dim : int, default 0
        The dimension read as rows.
    eps : float, default 1e-12
        The smallest norm divided by in the normalizations.

    Raises
    ------
    ValueError
        If ``n_power_iterations`` is not positive.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils.spectral_norm import SpectralNorm
    >>> m = nn.utils.spectral_norm(nn.Linear(2, 2))
    >>> [type(hook).__name__ for hook in m._forward_pre_hooks.values()]
    ['SpectralNorm']
    """

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        r""":math:`W / (u^\top W v)`; first, with ``do_power_iteration``, refine ``u`` and
        ``v`` in place (outside the tape): :math:`v \leftarrow W^\top u / \|W^\top u\|`,
        :math:`u \leftarrow W v / \|W v\|`."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = _weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(matrix.mT.mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(matrix.mv(v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()  # (constants of the tape's record)
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Put back one parameter ``<name>`` holding the normalized weight."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float
              ) -> SpectralNorm:
        """Register the hook on ``module`` (see :func:`spectral_norm`)."""
        if pre_hooks_on(module, SpectralNorm, name):
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                               f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None "
                             f"(or not a parameter of {type(module).__name__})")
        if is_lazy(weight):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            h, w = _weight_matrix(weight, fn.dim).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first call (code that reads module.weight still can)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    r"""Spectral normalization by a hook: ``weight = weight_orig / sigma`` before each call.

    :math:`\sigma \approx u^\top W v` estimates the largest singular value of the weight
    read as a matrix (dimension ``dim`` as rows); ``u`` and ``v`` (buffers
    ``<name>_u``, ``<name>_v``, random unit vectors at first) take
    ``n_power_iterations`` power-iteration steps at each call in training mode, outside
    the tape, and none in eval mode.  The trained parameter is ``<name>_orig``;
    ``module.<name>`` is a plain attribute the hook sets (the raw weight until the first
    call).

    Parameters
    ----------
    module : Module
        The module.
    name : str, default "weight"
        The parameter.
    n_power_iterations : int, default 1
        Steps per call in training mode (positive).
    eps : float, default 1e-12
        The smallest norm divided by in the normalizations.
    dim : int, optional
        The dimension read as rows; by default 1 for ``ConvTranspose*d``, else 0.

    Returns
    -------
    Module
        ``module``, with the hook.

    Raises
    ------
    RuntimeError
        If ``name`` already has a spectral-norm hook.
    ValueError
        If ``name`` is not a parameter, an uninitialized one, or
        ``n_power_iterations`` is not positive.

    See Also
    --------
    remove_spectral_norm, difflab.nn.utils.parametrizations.spectral_norm

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> m = nn.utils.spectral_norm(nn.Linear(3, 2))
    >>> list(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    >>> _ = m(dl.ones(1, 3))        # the hook computes m.weight
    >>> m.weight.shape
    difflab.Size([2, 3])
    """
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Remove the hook of :func:`spectral_norm`: ``name`` is one parameter again (normalized).

    Parameters
    ----------
    module : Module
        A module with a spectral-norm hook on ``name``.
    name : str, default "weight"
        The parameter.

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If ``module`` has no spectral-norm hook on ``name``.

    Examples
    --------
    >>> from difflab import nn
    >>> m = nn.utils.spectral_norm(nn.Linear(2, 2))
    >>> list(nn.utils.remove_spectral_norm(m).state_dict())
    ['bias', 'weight']
    """
    for hook_id in pre_hooks_on(module, SpectralNorm, name):
        drop_pre_hook(module, hook_id).remove(module)
        return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
