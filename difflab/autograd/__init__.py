"""Reverse-mode automatic differentiation on a tape.

* :mod:`~difflab.autograd.engine`: the tape records and the backward walk;
* :func:`grad`, :func:`backward`: start a walk;
* :class:`Function`: custom operations with your own backward;
* :func:`gradcheck`, :func:`gradgradcheck`: compare with finite differences;
* :func:`tape`, :func:`draw`: watch the tape, draw the graph;
* :class:`detect_anomaly`: find the operation whose backward made a NaN.
* :mod:`~difflab.autograd.graph`: hooks on the tensors saved for backward
  (``saved_tensors_hooks``, ``save_on_cpu``).
* :mod:`~difflab.autograd.profiler`: ``torch.autograd.profiler`` (``profile``,
  ``record_function``), the same profiler as :mod:`difflab.profiler`.
* :mod:`~difflab.autograd.functional`: also PyTorch's ``jacobian``, ``hessian``, ``vjp``,
  ``jvp``, ``hvp``, ``vhp`` (from :mod:`~difflab.autograd.functional_transforms`).
"""

from difflab.autograd import functional, functional_transforms, graph, profiler
from difflab.autograd.anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from difflab.autograd.function import Function, FunctionCtx
from difflab.autograd.functional import backward, grad
from difflab.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from difflab.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from difflab.autograd.tape import Tape, draw, tape
from difflab.autograd.variable import Variable

# PyTorch spells these torch.autograd.functional.jacobian; they build tensors (stack, zeros),
# so they live a layer above functional.py and the package hangs them on that module here.
for _name in functional_transforms.__all__:
    setattr(functional, _name, getattr(functional_transforms, _name))
functional.__all__ = [*functional.__all__, *functional_transforms.__all__]
del _name

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "Tape", "backward", "detect_anomaly", "draw",
    "Variable", "enable_grad", "grad", "gradcheck", "gradgradcheck", "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled", "no_grad", "set_detect_anomaly", "set_grad_enabled", "tape",
]
