"""``torch.backends.cuda``: CUDA's matmul and attention switches (recorded only in difflab).

Examples
--------
>>> import difflab as dl
>>> dl.backends.cuda.matmul.allow_tf32 = True
>>> dl.backends.cuda.matmul.allow_tf32
True
"""

from __future__ import annotations

from typing import Any

from difflab import cuda as _cuda
from difflab.backends._flags import check_flag


class _Matmul:
    """``difflab.backends.cuda.matmul``: the precision PyTorch's CUDA matmuls may use.

    ``allow_tf32`` (TF32 tensor cores for float32 products) and the reduced-
    precision reductions for float16/bfloat16 are recorded; CuPy's products in
    difflab stay full float32 whatever they say.
    """

    _names = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction")

    def __init__(self) -> None:
        object.__setattr__(self, "allow_tf32", False)
        object.__setattr__(self, "allow_fp16_reduced_precision_reduction", True)
        object.__setattr__(self, "allow_bf16_reduced_precision_reduction", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._names:
            raise AttributeError(f"Unknown attribute {name} (backends.cuda.matmul has "
                                 f"{', '.join(self._names)})")
        object.__setattr__(self, name, check_flag("difflab.backends.cuda.matmul", name, value))


matmul = _Matmul()

_sdp = {"flash": True, "mem_efficient": True, "math": True}


def is_built() -> bool:
    """Whether this difflab can use CUDA (CuPy installed and a device present).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.backends.cuda.is_built() == dl.cuda.is_available()
    True
    """
    return _cuda.is_available()


def _sdp_switch(kind: str) -> tuple:
    def enable(enabled: bool) -> None:
        _sdp[kind] = check_flag("difflab.backends.cuda", f"enable_{kind}_sdp", enabled)

    def query() -> bool:
        return _sdp[kind]

    enable.__doc__ = (
        f"Record whether scaled_dot_product_attention may use the {kind} kernel (difflab "
        f"has one kernel, the math one, whatever this says).\n\n    Examples\n    --------\n"
        f"    >>> import difflab as dl\n    >>> dl.backends.cuda.enable_{kind}_sdp(True)\n"
        f"    >>> dl.backends.cuda.{kind}_sdp_enabled()\n    True\n")
    query.__doc__ = (
        f"What :func:`enable_{kind}_sdp` last set (True by default).\n\n    Examples\n"
        f"    --------\n    >>> import difflab as dl\n"
        f"    >>> isinstance(dl.backends.cuda.{kind}_sdp_enabled(), bool)\n    True\n")
    return enable, query


enable_flash_sdp, flash_sdp_enabled = _sdp_switch("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp_switch("mem_efficient")
enable_math_sdp, math_sdp_enabled = _sdp_switch("math")
