"""Helpers around modules: gradient clipping, parameters as one vector, padding sequences
(:mod:`.rnn`), and :func:`compute_gradients`, which fills ``.grad`` with any differentiator."""

from difflab.nn.utils import rnn
from difflab.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from difflab.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from difflab.nn.utils.gradients import SYMBOLIC_MAX_PARAMETERS, GradientCost, compute_gradients

__all__ = [
    "SYMBOLIC_MAX_PARAMETERS", "GradientCost", "clip_grad_norm_", "clip_grad_value_",
    "compute_gradients", "parameters_to_vector", "rnn", "vector_to_parameters",
]
