"""A convolution's backward in fewer, longer NumPy steps.  Skip this on a first read.

Shortcut 16 of :mod:`difflab.fastpath`: two products of the plain rule in
:class:`difflab.ops.nn_conv.Conv2d`, computed so that NumPy and BLAS read
memory in long runs.  Both give the plain rule's numbers, bit for bit.

**The weight gradient.**  The plain rule writes it as it reads,
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

**The input gradient of a same-size convolution** (stride 1, no dilation,
the output as large as the input: a 3 x 3 kernel with padding 1).  The
plain rule adds the kh·kw slabs of the windows' gradient back into a padded
image (``col2im``), each add one NumPy call whose inner loop is one output
row (OW values) long, so the loops' overhead dominates small images.  Here
each slab (OH·OW values of one image and channel, contiguous in the product
just computed) is added to the flat (H·W) image at the offset its kernel
position shifts it by: one long run per image and channel.  The values that
would fall into the padding and wrap around to the next row are set to zero
in the slab first (it is a fresh array), and adding +0 leaves every sum as
it was (a sum that starts at +0 is never -0).  The slabs are added in the
plain rule's order, so each pixel's sum is the same, bit for bit.
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


def input_gradient(xp: Any, gcols: Any, x_shape: tuple, geometry: tuple, plain: Any) -> Any:
    """x̄ from the windows' gradient of a same-size convolution, one flat add per slab.

    Parameters
    ----------
    xp : module
        The array namespace of the backward pass.
    gcols : array, shape (G, C/G, kh, kw, N, OH, OW)
        ``W_gᵀ Ȳ_g``: the gradient of every window, a fresh array (written into).
    x_shape : tuple of int
        The input's shape (N, C, H, W).
    geometry : tuple
        ``(kernel, stride, padding, dilation)``, each a pair.
    plain : callable
        The plain rule ``plain(xp, gcols, x_shape, geometry)``, for anything this
        does not handle (other arrays than NumPy's, strides, dilation, other sizes).

    Returns
    -------
    array, shape (N, C, H, W)
        The input's gradient (a transposed view of a fresh (C, N, H, W) array).
    """
    (kh, kw), stride, (ph, pw), dilation = geometry
    n, c, h, w = x_shape
    if not (type(gcols) is np.ndarray and gcols.dtype.kind in "fc"
            and stride == (1, 1) and dilation == (1, 1)
            and gcols.shape[-2:] == (h, w) and gcols.flags.c_contiguous):
        return plain(xp, gcols, x_shape, geometry)
    out = np.zeros((c, n, h * w), dtype=gcols.dtype)
    slabs = gcols.reshape((c, kh, kw, n, h, w))
    for i in range(kh):
        for j in range(kw):
            slab, shift = slabs[:, i, j], j - pw  # (a view into gcols)
            if shift < 0:  # columns that would wrap to the row above: padding, dropped
                slab[..., :-shift] = 0.0
            elif shift > 0:  # columns that would wrap to the row below
                slab[..., w - shift:] = 0.0
            flat, offset = slab.reshape((c, n, h * w)), (i - ph) * w + shift
            if offset >= 0:
                out[:, :, offset:] += flat[:, :, :h * w - offset]
            else:
                out[:, :, :offset] += flat[:, :, -offset:]
    return np.transpose(out.reshape((c, n, h, w)), (1, 0, 2, 3))
