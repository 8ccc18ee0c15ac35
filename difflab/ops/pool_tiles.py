"""A max pool's backward over windows that tile the image.  Skip this on a first read.

Shortcut 17 of :mod:`difflab.fastpath`.  The plain rule of
:class:`difflab.ops.nn_conv.MaxPool2d` routes ȳ to each window's maximum
(``ȳ · mask_p`` for every kernel position p, one array of all the windows)
and adds the windows back into a zero image (``col2im``, kh·kw strided adds).
When the windows tile the image (stride = kernel, no padding, no dilation:
the usual 2 x 2 pool), every pixel lies in one window at most, so each
kernel position's product can be written straight into its pixels: kh·kw
strided multiplications and no array of windows.

The same bits: the plain rule's pixel is ``+0 + ȳ·mask``, a sum from +0,
which is never -0; here the product ``ȳ·mask`` is written directly (it is -0
where ȳ < 0 and the mask is False), so one pass of ``+= 0.0`` at the end
turns those -0 into +0 and leaves every other value as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def max_pool_gradient(xp: Any, g: Any, masks: Any, geometry: tuple, plain: Any) -> Any:
    """x̄ of a max pool whose windows tile the image, one product per kernel position.

    Parameters
    ----------
    xp : module
        The array namespace of the backward pass.
    g : array, shape (N, C, OH, OW)
        The output's adjoint ȳ.
    masks : bool array, shape (kh·kw, N, C, OH, OW)
        ``masks[p]`` marks the windows whose first maximum sits at kernel position p.
    geometry : tuple
        ``(x's shape, kernel, stride, padding, dilation)``, as the rule saved it.
    plain : callable
        The plain rule ``plain(xp, g, masks, geometry)``, for anything else
        (other arrays than NumPy's, overlapping windows, padding, dilation).

    Returns
    -------
    array, shape (N, C, H, W)
        The input's gradient.
    """
    shape, (kh, kw), stride, padding, dilation = geometry
    n, c, oh, ow = g.shape
    if not (type(g) is np.ndarray and type(masks) is np.ndarray and g.dtype.kind == "f"
            and masks.dtype == bool and stride == (kh, kw) and padding == (0, 0)
            and dilation == (1, 1) and oh * kh <= shape[2] and ow * kw <= shape[3]):
        return plain(xp, g, masks, geometry)
    gx = np.empty(shape, dtype=g.dtype)
    if oh * kh < shape[2] or ow * kw < shape[3]:  # (rows or columns no window covers)
        gx[...] = 0.0
    for p in range(kh * kw):
        i, j = divmod(p, kw)
        np.multiply(g, masks[p], out=gx[:, :, i:oh * kh:kh, j:ow * kw:kw])
    gx += 0.0  # (-0 -> +0, as the plain rule's sum from +0 gives)
    return gx
