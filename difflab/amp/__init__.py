"""Mixed precision, at PyTorch's paths: ``difflab.amp.autocast`` and ``difflab.amp.GradScaler``.

PyTorch's automatic mixed precision runs chosen operations in float16 or
bfloat16 inside ``autocast`` regions, and ``GradScaler`` multiplies the loss by
a large factor so that small float16 gradients do not underflow to zero.

difflab has no reduced-precision kernels, so an ``autocast`` region is an
explicit no-op: every operation keeps its inputs' dtype (results are the
float32 ones, never less precise).  ``GradScaler`` is the real algorithm
(scale, unscale, skip steps with inf/NaN gradients, grow and back off the
scale) on the CPU; asked for CUDA on a machine without one, it disables
itself with PyTorch's warning, exactly as PyTorch does, and then passes
everything through.  A mixed-precision training loop written for a GPU
therefore runs unchanged.
"""

from difflab.amp.autocast_mode import autocast, is_autocast_enabled
from difflab.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_enabled"]
