"""A convolution's weight gradient computed as its transpose.  Skip this on a first read.

Shortcut 16 of :mod:`difflab.fastpath`.  The plain rule in
:class:`difflab.ops.nn_conv.Conv2d` writes the weight gradient as it reads,
``W̄_g = Ȳ_g X_gᵀ``: a product whose second factor is a transposed view of the
saved columns (K, M), with M = N·OH·OW the long axis.  BLAS runs it, but its
kernels read a transposed long operand slowly (about 1.6x slower at 1 thread
for the small CNN of the benchmarks, float32 and float64 alike).

The same matrix is ``(X_g Ȳ_gᵀ)ᵀ``: now the long operand is read as it is
stored and the short one (O/G rows) is the transposed one.  Each entry is
the same sum over the same M products; OpenBLAS adds them in the same order
either way (``tests/core/test_core_backward_shortcuts.py`` compares the
gradients with and without the shortcuts bit for bit, and
``tests/nn/test_conv_products.py`` compares the two products).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def weight_gradient(xp: Any, gm: Any, cols: Any, plain: Any) -> Any:
    """Ȳ_g X_gᵀ for every group g, as ``(X_g Ȳ_gᵀ)ᵀ`` on NumPy arrays.

    Parameters
    ----------
    xp : module
        The array namespace of the backward pass (NumPy, CuPy, or a recording one).
    gm : array, shape (G, O/G, M)
        The output's adjoint, one row per output channel of a group.
    cols : array, shape (G, K, M)
        The saved columns of the input's windows.
    plain : callable
        The plain rule ``plain(xp, gm, cols)``, used for anything but NumPy arrays.

    Returns
    -------
    array, shape (G, O/G, K)
        The weight gradient, a transposed view of a fresh product.
    """
    if not (type(gm) is np.ndarray and type(cols) is np.ndarray):
        return plain(xp, gm, cols)  # (CuPy arrays, or tensors being recorded)
    product = np.empty((cols.shape[0], cols.shape[1], gm.shape[1]),
                       dtype=np.result_type(gm, cols))  # (G, K, O/G)
    for g in range(cols.shape[0]):  # (2-D products: see nn_conv._group_matmul)
        np.matmul(cols[g], gm[g].T, out=product[g])
    return np.transpose(product, (0, 2, 1))
