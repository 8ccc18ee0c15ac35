r"""Convolution and pooling primitives: each one's forward next to its derivative rule.

The protocol and the rules' conventions are those of :mod:`difflab.ops.nn_ops`.

Convolution is written with two linear maps that are each other's transpose:

* ``im2col``: x (N, C, H, W) -> windows (N, C, OH, OW, kh, kw), every
  receptive field laid out as a small block (a strided *view*, no copy);
* ``col2im``: windows -> x, adding each window back where it came from
  (overlapping windows add up).

Their JVPs are themselves; the VJP of one is the other.  A convolution is
then ``windows · weight`` (one matrix product), and its input gradient is
``col2im(ȳ · weight)``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from difflab import backend, fastpath
from difflab.ops import conv_products, pool_tiles
from difflab.ops.nn_ops import _recording
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import plain_values

# -------------------------------------------------------------- im2col / col2im


def _is_array(value: Any) -> bool:
    """A NumPy or CuPy array (object arrays of sympy expressions too): not a tensor being
    recorded (``create_graph``) nor dual numbers nested in dual numbers."""
    return isinstance(value, np.ndarray) or backend.is_gpu_array(value)




def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """⌊(size + 2·padding - dilation·(kernel - 1) - 1) / stride⌋ + 1, PyTorch's formula."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _windows(xp, x, kernel, stride, padding, dilation, pad_value=0.0):
    """The im2col view: (N, C, H, W) -> (N, C, OH, OW, kh, kw), no copy but the padding."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x.shape
    oh = conv_output_size(h, kh, sh, ph, dh)
    ow = conv_output_size(w, kw, sw, pw, dw)
    if oh <= 0 or ow <= 0:
        raise ValueError(
            f"the input {h}x{w} (padded to {h + 2 * ph}x{w + 2 * pw}) is smaller than the "
            f"kernel {kh}x{kw} with dilation {(dh, dw)}: the output would be empty"
        )
    if ph or pw:  # (a frame of pad_value around each image; np.pad does it in 2x the time)
        padded = xp.full((n, c, h + 2 * ph, w + 2 * pw), pad_value, dtype=x.dtype)
        padded[:, :, ph:ph + h, pw:pw + w] = x
        x = padded
    s_n, s_c, s_h, s_w = x.strides
    return xp.lib.stride_tricks.as_strided(
        x,
        shape=(n, c, oh, ow, kh, kw),
        strides=(s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw),
    )


def _window_index(x_shape, kernel, stride, padding, dilation):
    """(the padded shape, the index (:, :, R, C)) with padded[index] every window (N, C,
    OH, OW, kh, kw): im2col by indexing, for values that have no strides to view."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x_shape
    oh = conv_output_size(h, kh, sh, ph, dh)
    ow = conv_output_size(w, kw, sw, pw, dw)
    rows = (np.arange(oh) * sh).reshape(oh, 1, 1, 1) + (np.arange(kh) * dh).reshape(1, 1, kh, 1)
    cols = (np.arange(ow) * sw).reshape(1, ow, 1, 1) + (np.arange(kw) * dw).reshape(1, 1, 1, kw)
    return (n, c, h + 2 * ph, w + 2 * pw), (slice(None), slice(None), rows, cols)


def _gathered_windows(xp, x, kernel, stride, padding, dilation):
    """The windows of dual numbers under a tape (forward over reverse): indexing, which
    NumPy's protocol maps onto the index primitive (zero padding by concatenation)."""
    (ph, pw), (n, c, h, w) = padding, x.shape
    if ph:
        x = xp.concatenate([np.zeros((n, c, ph, w)), x, np.zeros((n, c, ph, w))], axis=2)
    if pw:
        x = xp.concatenate([np.zeros((n, c, h + 2 * ph, pw)), x,
                            np.zeros((n, c, h + 2 * ph, pw))], axis=3)
    return x[_window_index((n, c, h, w), kernel, stride, padding, dilation)[1]]


def _scattered_windows(xp, win, x_shape, kernel, stride, padding, dilation):
    """The transpose of :func:`_gathered_windows`: the windows added back (a scatter)."""
    padded, index = _window_index(x_shape, kernel, stride, padding, dilation)
    out = xp.scatter_add(win, index, padded)
    (ph, pw), (h, w) = padding, x_shape[2:]
    return out[:, :, ph:ph + h, pw:pw + w]


def _col2im_array(xp, win, x_shape, kernel, stride, padding, dilation):
    """Add every window back where it came from: the transpose of :func:`_windows`.

    One strided accumulation per kernel position (kh·kw of them), each a
    whole-array operation; overlapping windows add up.
    """
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x_shape
    oh, ow = win.shape[2], win.shape[3]
    out = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=win.dtype)
    for i in range(kh):
        rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            out[:, :, rows, cols] += win[:, :, :, :, i, j]
    if ph or pw:
        out = out[:, :, ph:ph + h, pw:pw + w]
    return out


class Im2Col(Primitive):
    """windows = im2col(x): each receptive field of x as a (kh, kw) block.

    A linear map that only copies values.  JVP: im2col(ẋ).  VJP (its
    transpose): x̄ = col2im(ȳ), which adds overlapping windows together.
    """

    name = "im2col"

    @staticmethod
    def forward(ctx, xp, x, kernel, stride, padding, dilation):
        ctx.geometry = (x.shape, kernel, stride, padding, dilation)
        return im2col(xp, x, kernel, stride, padding, dilation)  # (dual numbers nested: pushed)

    @staticmethod
    def vjp(ctx, xp, g):
        shape, *geometry = ctx.geometry
        return (col2im(xp, g, shape, *geometry),)

    @staticmethod
    def jvp(ctx, xp, dx):
        _, *geometry = ctx.geometry
        # The k tangents are k more images: (k, N, ...) -> (k·N, ...) -> windows -> (k, N, ...)
        k = dx.shape[0]
        windows = im2col(xp, dx.reshape((-1,) + tuple(dx.shape[2:])), *geometry)
        return windows.reshape((k, -1) + tuple(windows.shape[1:]))


class Col2Im(Primitive):
    """x = col2im(windows): the transpose of :class:`Im2Col`.  VJP: im2col(ȳ).

    Linear, so its JVP is itself: ẋ = col2im(ẇindows).
    """

    name = "col2im"

    @staticmethod
    def forward(ctx, xp, win, x_shape, kernel, stride, padding, dilation):
        ctx.geometry = (kernel, stride, padding, dilation)
        ctx.x_shape = tuple(x_shape)
        return col2im(xp, win, x_shape, kernel, stride, padding, dilation)

    @staticmethod
    def vjp(ctx, xp, g):
        return (im2col(xp, g, *ctx.geometry),)

    @staticmethod
    def jvp(ctx, xp, dwin):
        # The k tangents are k more batches of windows: (k, N, ...) -> (k·N, ...) and back
        k, (n, *rest) = dwin.shape[0], ctx.x_shape
        out = col2im(xp, dwin.reshape((-1,) + tuple(dwin.shape[2:])), (k * n, *rest),
                     *ctx.geometry)
        return out.reshape((k, n) + tuple(out.shape[1:]))


def im2col(xp: Any, x: Any, kernel, stride, padding, dilation) -> Any:
    """im2col on an array (fast path), or the primitive on a tensor (recorded on the tape:
    ``create_graph``) or on dual numbers nested in dual numbers (pushed), or by indexing
    on dual numbers under a tape (forward over reverse)."""
    if _is_array(x):
        return _windows(backend.array_module(x), x, kernel, stride, padding, dilation)
    if _recording(xp):
        return xp.record_primitive(Im2Col, x, kernel=kernel, stride=stride, padding=padding,
                                   dilation=dilation)
    return _gathered_windows(xp, x, kernel, stride, padding, dilation)


def col2im(xp: Any, win: Any, x_shape, kernel, stride, padding, dilation) -> Any:
    """col2im on an array (fast path), or as :func:`im2col` says for other values."""
    if _is_array(win):
        return _col2im_array(backend.array_module(win), win, x_shape, kernel, stride,
                             padding, dilation)
    if _recording(xp):
        return xp.record_primitive(Col2Im, win, x_shape=tuple(x_shape), kernel=kernel,
                                   stride=stride, padding=padding, dilation=dilation)
    return _scattered_windows(xp, win, x_shape, kernel, stride, padding, dilation)


# ---------------------------------------------------------------- convolution


def _group_matmul(xp, a, b):
    """a[g] @ b[g] for every group g.

    On raw arrays each product is a separate 2-D ``matmul``: NumPy's batched
    matmul falls back to a slow loop when the slices are transposed views,
    while a 2-D product of a transposed view still runs in BLAS.
    """
    if not ((isinstance(a, np.ndarray) or backend.is_gpu_array(a))
            and (isinstance(b, np.ndarray) or backend.is_gpu_array(b))):
        return xp.matmul(a, b)
    if a.shape[0] == 1:
        return xp.matmul(a[0], b[0])[None]
    out = xp.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=xp.result_type(a, b))
    for g in range(a.shape[0]):
        xp.matmul(a[g], b[g], out=out[g])
    return out


def _plain_weight_gradient(xp, gm, cols):
    """W̄_g = Ȳ_g X_gᵀ for every group g: (G, O/G, M) and (G, K, M) -> (G, O/G, K)."""
    return _group_matmul(xp, gm, xp.transpose(cols, (0, 2, 1)))


# (shortcut 16 of difflab/fastpath.py: the same product, its long factor read as stored)
_weight_gradient = (functools.partial(conv_products.weight_gradient,
                                      plain=_plain_weight_gradient)
                    if fastpath.ENABLED else _plain_weight_gradient)


def _plain_input_gradient(xp, gcols, x_shape, geometry):
    """x̄ = col2im of the windows' gradient gcols (G, C/G, kh, kw, N, OH, OW)."""
    g_, cg, kh, kw, n, oh, ow = gcols.shape
    # (G, C/G, kh, kw, N, OH, OW) -> (N, C, OH, OW, kh, kw): a view, no copy
    gwin = xp.transpose(gcols, (4, 0, 1, 5, 6, 2, 3)).reshape((n, g_ * cg, oh, ow, kh, kw))
    return col2im(xp, gwin, x_shape, *geometry)


# (shortcut 16 again: a same-size convolution's col2im as one long add per slab)
_input_gradient = (functools.partial(conv_products.input_gradient,
                                     plain=_plain_input_gradient)
                   if fastpath.ENABLED else _plain_input_gradient)


class Conv2d(Primitive):
    r"""y = conv2d(x, W) + b, as in PyTorch (a cross-correlation, no kernel flip).

    Shapes: x (N, C, H, W), W (O, C/G, kh, kw), b (O,), y (N, O, OH, OW),
    with G = ``groups``: input channels and output channels are split into
    G groups and group g only sees its own input channels.

    With the windows of x laid out per group as a matrix of columns
    X_g (C/G·kh·kw, N·OH·OW) — one column per output pixel — and
    W_g (O/G, C/G·kh·kw):

    .. math::
        Y_g = W_g X_g, \qquad
        \bar W_g = \bar Y_g X_g^\top, \qquad
        \bar x = \mathrm{col2im}(W_g^\top \bar Y_g), \qquad
        \bar b = \textstyle\sum_{n,i,j} \bar y_{n,:,i,j}.

    The same three formulas as :class:`Linear`, on windows instead of rows.
    (Columns rather than rows, because then the innermost axis of every copy
    is a row of the image, contiguous in memory: the copies are 3-5x faster.)
    """

    name = "conv2d"

    @staticmethod
    def _columns(xp, win, g_):
        """(N, C, OH, OW, kh, kw) windows -> (G, C/G·kh·kw, N·OH·OW) columns (one copy)."""
        n, c, oh, ow, kh, kw = win.shape
        grouped = win.reshape((n, g_, c // g_, oh, ow, kh, kw))
        return xp.transpose(grouped, (1, 2, 5, 6, 0, 3, 4)).reshape(
            (g_, c // g_ * kh * kw, n * oh * ow))

    @staticmethod
    def _convolve(xp, x, w, stride, padding, dilation, g_):
        """(W ⋆ x as (N, O, OH, OW), x's columns (G, K, M)): Y_g = W_g X_g for each group."""
        n = x.shape[0]
        o, cg, kh, kw = w.shape
        win = im2col(xp, x, (kh, kw), stride, padding, dilation)
        oh, ow = win.shape[2], win.shape[3]
        cols = Conv2d._columns(xp, win, g_)                      # (G, K, M)
        y = _group_matmul(xp, w.reshape((g_, o // g_, cg * kh * kw)), cols)  # (G, O/G, M)
        return xp.transpose(y.reshape((o, n, oh, ow)), (1, 0, 2, 3)), cols

    @staticmethod
    def forward(ctx, xp, x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                groups=1):
        y, cols = Conv2d._convolve(xp, x, w, stride, padding, dilation, groups)
        n, c = x.shape[:2]
        o, _, kh, kw = w.shape
        if b is not None:
            y = y + b.reshape((1, o, 1, 1))
        ctx.geometry = ((kh, kw), stride, padding, dilation)
        ctx.sizes = (n, c, y.shape[2], y.shape[3], groups)
        need = ctx.needs_input_grad
        ctx.save(x, w, cols if len(need) < 2 or need[1] else None)  # (the columns serve W̄)
        return xp.ascontiguousarray(y) if _is_array(y) else y

    #: Recorded (create_graph), the VJP copies the columns again from x, as W̄ must stay a
    #: function of x for a second derivative; a traced training step, which needs one
    #: derivative only, runs the rule on arrays with the saved columns (difflab.jit).
    first_order_is_cheaper = True

    @staticmethod
    def vjp(ctx, xp, g, x, w, cols):
        need = ctx.needs_input_grad
        n, c, oh, ow, g_ = ctx.sizes
        o, cg, kh, kw = w.shape
        og, k = o // g_, cg * kh * kw
        gx = gw = gb = None
        if need[0] or need[1]:  # ȳ as (G, O/G, N·OH·OW), matching the layout of Y above
            gm = xp.transpose(g, (1, 0, 2, 3)).reshape((g_, og, n * oh * ow))
        if need[1]:
            if _recording(xp):  # (the saved columns would be a constant to the tape)
                cols = Conv2d._columns(xp, im2col(xp, x, *ctx.geometry), g_)
            gw = _weight_gradient(xp, gm, cols).reshape(w.shape)
        if len(need) > 2 and need[2]:
            gb = g.sum(axis=(0, 2, 3))
        if need[0]:
            gcols = _group_matmul(xp, xp.transpose(w.reshape((g_, og, k)), (0, 2, 1)), gm)
            gx = _input_gradient(xp, gcols.reshape((g_, cg, kh, kw, n, oh, ow)), x.shape,
                                 ctx.geometry)
        return gx, gw, gb

    @staticmethod
    def jvp(ctx, xp, dx, dw, db, x, w, cols):
        """ẏ = conv2d(ẋ, W) + conv2d(x, Ẇ) + ḃ: y is bilinear in (x, W), so each tangent
        meets the other input's value.  The k tangents of x are k·N more images; each of
        the k tangents of W multiplies x's columns, Ẏ_g = Ẇ_g X_g."""
        n, c, oh, ow, g_ = ctx.sizes
        o, cg, kh, kw = w.shape
        _, stride, padding, dilation = ctx.geometry
        terms = []
        if dx is not None:
            k = dx.shape[0]
            y, _ = Conv2d._convolve(xp, dx.reshape((-1,) + tuple(dx.shape[2:])), w, stride,
                                    padding, dilation, g_)
            terms.append(y.reshape((k, n, o, oh, ow)))
        if dw is not None:
            k = dw.shape[0]
            if cols is None:  # (saved only when W needs a derivative)
                cols = Conv2d._columns(xp, im2col(xp, x, (kh, kw), stride, padding,
                                                  dilation), g_)
            y = xp.matmul(dw.reshape((k, g_, o // g_, cg * kh * kw)), cols)  # (k, G, O/G, M)
            terms.append(xp.transpose(y.reshape((k, o, n, oh, ow)), (0, 2, 1, 3, 4)))
        if db is not None:
            terms.append(db.reshape((db.shape[0], 1, o, 1, 1)))
        out = terms[0]
        for term in terms[1:]:
            out = out + term
        return xp.broadcast_to(out, (out.shape[0], n, o, oh, ow))


# -------------------------------------------------------------------- pooling


def _plain_max_pool_gradient(xp, g, masks, geometry):
    """x̄ = col2im(mask · ȳ): each window's ȳ routed to its maximum, added back."""
    shape, kernel, *rest = geometry
    n, c, oh, ow = g.shape
    routed = g.reshape((1, n, c, oh, ow)) * masks  # (kh·kw, N, C, OH, OW)
    # -> (N, C, OH, OW, kh, kw), a view: each position's slab stays contiguous
    gwin = xp.transpose(routed, (1, 2, 3, 4, 0)).reshape((n, c, oh, ow) + tuple(kernel))
    return col2im(xp, gwin, shape, kernel, *rest)


# (shortcut 17 of difflab/fastpath.py: windows that tile the image, written in place)
_max_pool_gradient = (functools.partial(pool_tiles.max_pool_gradient,
                                        plain=_plain_max_pool_gradient)
                      if fastpath.ENABLED else _plain_max_pool_gradient)



class MaxPool2d(Primitive):
    """y = the largest value of each window (padding counts as -∞).

    Piecewise linear: the derivative picks the arg-max of each window.
    VJP: x̄ = col2im(mask · ȳ), where the mask marks each window's maximum; it
    is saved (it is piecewise constant).  Ties go to the first maximum, as in
    PyTorch.
    """

    name = "max_pool2d"

    @staticmethod
    def symbolic(sp, x, kernel, stride, padding, dilation):
        win = _windows(np, x, kernel, stride, padding, dilation, pad_value=-np.inf)
        return sp.reduce(sp.maximum, win, axis=(-2, -1))

    @staticmethod
    def forward(ctx, xp, x, kernel, stride, padding, dilation):
        ctx.geometry = (x.shape, kernel, stride, padding, dilation)
        if _is_array(x):
            best, masks = MaxPool2d._first_maxima(xp, x, kernel, stride, padding, dilation)
            ctx.save(masks)
            return best
        # recorded (create_graph) or nested dual numbers: the masks from the values, and
        # the maxima picked by them from x's windows, a function of x that carries its
        # derivative (a padded place, 0 here, is never picked)
        values = plain_values(x)
        _, masks = MaxPool2d._first_maxima(backend.array_module(values), values, kernel,
                                           stride, padding, dilation)
        ctx.save(masks)
        win = im2col(xp, x, kernel, stride, padding, dilation)
        return MaxPool2d._picked(xp, win, masks)[0]

    @staticmethod
    def _picked(xp, win, masks):
        """Σ_p mask_p · window_p: each window's value at its maximum, for k stacks of
        windows (k·N, C, OH, OW, kh, kw) -> (k, N, C, OH, OW)."""
        win = win.reshape((-1,) + tuple(masks.shape[1:]) + (masks.shape[0],))
        return (win * xp.transpose(masks, (1, 2, 3, 4, 0))).sum(axis=-1)

    @staticmethod
    def _first_maxima(xp, x, kernel, stride, padding, dilation):
        """(the maximum of each window, masks[p]: the windows whose first maximum sits at
        kernel position p), on arrays."""
        win = _windows(xp, x, kernel, stride, padding, dilation, pad_value=-np.inf)
        kh, kw = win.shape[4:]
        positions = [win[..., i, j] for i in range(kh) for j in range(kw)]
        # One whole-array step per kernel position (kh·kw of them, usually 4 or 9):
        # much faster than an argmax along a short trailing axis.
        best = positions[0].copy()
        for candidate in positions[1:]:
            xp.maximum(best, candidate, out=best)
        # masks[p] marks the windows whose first maximum sits at position p
        masks = xp.empty((len(positions),) + best.shape, dtype=bool)
        taken = xp.zeros(best.shape, dtype=bool)
        for mask, candidate in zip(masks, positions):
            hit = candidate == best
            xp.greater(hit, taken, out=mask)  # hit and not taken yet
            taken |= hit
        return best, masks

    #: On arrays, ȳ · mask multiplies by the booleans directly; recorded, the mask is first
    #: converted to ȳ's dtype (a copy of the size of all the windows).  A traced training
    #: step, which needs one derivative only, runs the array rule (difflab.jit).
    first_order_is_cheaper = True

    @staticmethod
    def vjp(ctx, xp, g, masks):
        return (_max_pool_gradient(xp, g, masks, ctx.geometry),)

    @staticmethod
    def jvp(ctx, xp, dx, masks):
        """ẏ = the tangent at each window's maximum: Σ_p mask_p · window_p(ẋ) (the VJP's
        transpose: pick where it routes).  The k tangents of x are k·N more images."""
        _, kernel, stride, padding, dilation = ctx.geometry
        win = im2col(xp, dx.reshape((-1,) + tuple(dx.shape[2:])), kernel, stride, padding,
                     dilation)  # (k·N, C, OH, OW, kh, kw); a padded place is never picked
        return MaxPool2d._picked(xp, win, masks)


class AvgPool2d(Primitive):
    """y = the mean of each window (zero padding counted, PyTorch's default).

    Linear.  VJP: x̄ = col2im(ȳ / (kh·kw) spread over each window).
    """

    name = "avg_pool2d"

    @staticmethod
    def forward(ctx, xp, x, kernel, stride, padding):
        win = im2col(xp, x, kernel, stride, padding, (1, 1))
        ctx.geometry = (x.shape, kernel, stride, padding, (1, 1))
        return win.mean(axis=(-2, -1))

    @staticmethod
    def vjp(ctx, xp, g):
        shape, kernel, *rest = ctx.geometry
        n, c, oh, ow = g.shape
        area = kernel[0] * kernel[1]
        spread = xp.broadcast_to(g.reshape((n, c, oh, ow, 1, 1)) * (1.0 / area),
                                 (n, c, oh, ow) + tuple(kernel))
        return (col2im(xp, spread, shape, kernel, *rest),)

    @staticmethod
    def jvp(ctx, xp, dx):
        """Linear: ẏ = avg_pool2d(ẋ), the k tangents of x pooled as k·N more images."""
        _, kernel, stride, padding, _ = ctx.geometry
        k = dx.shape[0]
        y = im2col(xp, dx.reshape((-1,) + tuple(dx.shape[2:])), kernel, stride, padding,
                   (1, 1)).mean(axis=(-2, -1))
        return y.reshape((k, -1) + tuple(y.shape[1:]))
