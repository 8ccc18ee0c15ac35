"""Data types.  They are NumPy's dtype objects, under PyTorch's names too.

Floating tensors made from Python numbers are float32 by default, as in
PyTorch (:func:`set_default_dtype` changes that); use float64 for checking
derivatives, where rounding error must stay near 1e-16.
"""

from __future__ import annotations

from typing import Any

import numpy as np

float16 = half = np.dtype("float16")
float32 = np.dtype("float32")
float64 = double = np.dtype("float64")
int32 = np.dtype("int32")
int64 = long = np.dtype("int64")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")
complex64 = cfloat = np.dtype("complex64")
complex128 = cdouble = np.dtype("complex128")


class _Defaults:
    dtype = float32


def set_default_dtype(dtype: Any) -> None:
    """Set the dtype of floating tensors made from Python numbers (float32 unless changed)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"the default dtype must be a floating dtype, got {dtype}")
    _Defaults.dtype = dtype


def get_default_dtype() -> np.dtype:
    """The dtype of floating tensors made from Python numbers."""
    return _Defaults.dtype
