"""Neural networks: ``Module``, ``Parameter``, layers, losses, ``functional`` and ``init``.

The names and behaviour follow ``torch.nn``, so ``from difflab.nn import *``
runs PyTorch model definitions (the one-line ConvMixer of the course notes
included).  What ``torch.nn`` does not have: :func:`difflab.nn.utils.compute_gradients`
fills the parameters' gradients by any of difflab's four differentiators.
"""

from difflab.nn import functional, init, parallel, utils
from difflab.nn.modules import *  # noqa: F403
from difflab.nn.modules import __all__ as _modules_all
from difflab.nn.optimized import OptimizedModule
from difflab.nn.parallel import DataParallel
from difflab.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [*_modules_all, "Buffer", "DataParallel", "OptimizedModule", "Parameter",
           "UninitializedBuffer", "UninitializedParameter", "functional", "init", "parallel",
           "utils"]
