"""``torch.backends`` at PyTorch's paths: the switches programs set for cuDNN, CUDA and MPS.

``difflab.backends.cudnn.benchmark = True``,
``difflab.backends.cuda.matmul.allow_tf32 = True`` and
``difflab.backends.mps.is_available()`` work as in PyTorch.  difflab computes
with NumPy or CuPy, without cuDNN or TF32 tensor cores, so the switches are
recorded (and read back, and checked: they take booleans) but change no
result: every float32 product is a full float32 one.
"""

from difflab.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
