"""Mixed precision, at PyTorch's paths: ``difflab.amp.autocast`` and ``difflab.amp.GradScaler``.

PyTorch's automatic mixed precision runs chosen operations in float16 or
bfloat16 inside ``autocast`` regions, and ``GradScaler`` multiplies the loss by
a large factor so that small float16 gradients do not underflow to zero.

In difflab an ``autocast`` region casts the inputs of the matrix products
(``matmul``, ``linear``, the convolutions, ``einsum``) to bfloat16 on the CPU
(float16 if asked; bfloat16 needs ml_dtypes) and those of the losses to
float32, as PyTorch's CPU lists do; every other operation keeps its inputs'
dtype.  ``GradScaler`` is the real algorithm
(scale, unscale, skip steps with inf/NaN gradients, grow and back off the
scale) on the CPU; asked for CUDA on a machine without one, it disables
itself with PyTorch's warning, exactly as PyTorch does, and then passes
everything through.  A mixed-precision training loop written for a GPU
therefore runs unchanged.
"""

from difflab.amp.autocast_mode import autocast, is_autocast_enabled
from difflab.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_enabled"]
