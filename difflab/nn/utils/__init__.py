"""Helpers around modules: gradient clipping, parameters as one vector, padding sequences
(:mod:`.rnn`), :func:`compute_gradients` (fills ``.grad`` with any differentiator), and
PyTorch's reparametrizations: :mod:`.parametrize` and :mod:`.parametrizations` (weight and
spectral norms, orthogonal weights), the older hook-based :func:`weight_norm` and
:func:`spectral_norm`, :mod:`.prune`, and :mod:`.fusion` (a batch norm folded into the
convolution or linear layer before it)."""

from difflab.nn.utils import fusion, parametrizations, parametrize, prune, rnn
from difflab.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from difflab.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from difflab.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from difflab.nn.utils.gradients import SYMBOLIC_MAX_PARAMETERS, GradientCost, compute_gradients
from difflab.nn.utils.skip_init import skip_init
from difflab.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from difflab.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "SYMBOLIC_MAX_PARAMETERS", "GradientCost", "clip_grad_norm", "clip_grad_norm_",
    "clip_grad_value_", "clip_grads_with_norm_", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
    "fuse_linear_bn_eval", "fuse_linear_bn_weights", "fusion", "get_total_norm", "skip_init",
    "compute_gradients", "parameters_to_vector", "parametrizations", "parametrize", "prune",
    "remove_spectral_norm", "remove_weight_norm", "rnn", "spectral_norm", "vector_to_parameters",
    "weight_norm",
]
