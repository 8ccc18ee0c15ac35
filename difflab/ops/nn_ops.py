r"""Neural-network primitives: each one's forward next to its derivative rule.

These are *fused* primitives: one tape record for what would otherwise be a
dozen elementwise steps.  That matters for speed (the Python cost of a
record is paid once, and the arrays are walked fewer times) and it lets the
derivative use the algebra that makes it cheap and stable, e.g. the
gradient of cross-entropy is ``softmax - onehot`` instead of a chain of
``exp``, ``sum`` and ``div`` adjoints.

The protocol is the one in :mod:`difflab.ops.structural`:

``forward(ctx, xp, *inputs, **params) -> output``
    computes on raw arrays (NumPy or CuPy, whatever ``xp`` is);
``vjp(ctx, xp, g, *saved) -> (x̄₁, x̄₂, ...)``
    reverse mode: the adjoint of every input from the output adjoint ``g``;
``jvp(ctx, xp, *tangents, *saved) -> ẏ``
    forward mode, where written: the output tangent from input tangents.

Every rule saves only inputs, the output, or piecewise-constant things
(masks, indices), and computes the rest again from them, so that when the
backward pass is itself recorded (``create_graph=True``, ``xp`` is then
``difflab.functions`` and the saved values are Tensors) the rule is
differentiated correctly too.  One exception, for speed: ``conv2d`` saves
its columns (a linear function of x, costly to copy again) and reads them
on arrays only; recorded, it computes them again from x.

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

import math
from typing import Any

import numpy as np

from difflab import backend
from difflab.ops.primitive import Primitive


def _recording(xp: Any) -> bool:
    """True when the backward pass is itself being recorded (``create_graph=True``).

    ``xp`` is then difflab's dispatching namespace, whose ``record_primitive(primitive,
    *inputs, **params)`` puts a primitive on the tape; NumPy and CuPy have no
    ``record_primitive``, and the rules compute on arrays directly.
    """
    return hasattr(xp, "record_primitive")


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"expected an int or a pair of ints, got {v!r}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


# ----------------------------------------------------------------------- linear


class Linear(Primitive):
    r"""y = x Wᵀ + b, for x of shape (..., in), W (out, in), b (out,).

    JVP: ẏ = ẋ Wᵀ + x Ẇᵀ + ḃ.
    VJP (its transpose), with ȳ and x flattened to matrices over the
    leading axes:

    .. math::
        \bar x = \bar y W, \qquad \bar W = \bar y^\top x, \qquad
        \bar b = \textstyle\sum_n \bar y_n .
    """

    name = "linear"

    @staticmethod
    def forward(ctx, xp, x, w, b=None):
        y = xp.matmul(x, w.T)
        if b is not None:
            if isinstance(y, np.ndarray) or backend.is_gpu_array(y):
                y += b  # y is fresh: add in place, no second (batch, out) array
            else:
                y = y + b
        ctx.save(x, w)
        return y

    @staticmethod
    def vjp(ctx, xp, g, x, w):
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if need[0]:
            gx = xp.matmul(g, w)
        if need[1] or (len(need) > 2 and need[2]):
            g2 = g.reshape((-1, g.shape[-1]))
            if need[1]:
                gw = xp.matmul(g2.T, x.reshape((-1, x.shape[-1])))
            if len(need) > 2 and need[2]:
                gb = g2.sum(axis=0)
        return gx, gw, gb

    @staticmethod
    def jvp(ctx, xp, dx, dw, db=None, x=None, w=None):
        out = None
        if dx is not None:
            out = xp.matmul(dx, w.T)
        if dw is not None:  # (k tangents of w: transpose each, not the k axis)
            term = xp.matmul(x, xp.swapaxes(dw, -1, -2))
            out = term if out is None else out + term
        if db is not None:
            if out is not None:  # ḃ (k, out) against (k, ..., out): broadcast over the rows
                db = db.reshape((db.shape[0],) + (1,) * (out.ndim - db.ndim) + db.shape[1:])
            out = db if out is None else out + db
        return out


# -------------------------------------------------------------- im2col / col2im


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
    if ph or pw:
        x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=pad_value)
    s_n, s_c, s_h, s_w = x.strides
    return xp.lib.stride_tricks.as_strided(
        x,
        shape=(n, c, oh, ow, kh, kw),
        strides=(s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw),
    )


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
        return _windows(xp, x, kernel, stride, padding, dilation)

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
        return _col2im_array(xp, win, x_shape, kernel, stride, padding, dilation)

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
    """im2col on an array (fast path), or recorded on the tape (``create_graph``)."""
    if _recording(xp):
        return xp.record_primitive(Im2Col, x, kernel=kernel, stride=stride, padding=padding,
                                   dilation=dilation)
    return _windows(xp, x, kernel, stride, padding, dilation)


def col2im(xp: Any, win: Any, x_shape, kernel, stride, padding, dilation) -> Any:
    """col2im on an array (fast path), or recorded on the tape (``create_graph``)."""
    if _recording(xp):
        return xp.record_primitive(Col2Im, win, x_shape=tuple(x_shape), kernel=kernel,
                                   stride=stride, padding=padding, dilation=dilation)
    return _col2im_array(xp, win, x_shape, kernel, stride, padding, dilation)


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
        win = _windows(xp, x, (kh, kw), stride, padding, dilation)
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
        return xp.ascontiguousarray(y)

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
            gw = _group_matmul(xp, gm, xp.transpose(cols, (0, 2, 1))).reshape(w.shape)
        if len(need) > 2 and need[2]:
            gb = g.sum(axis=(0, 2, 3))
        if need[0]:
            gcols = _group_matmul(xp, xp.transpose(w.reshape((g_, og, k)), (0, 2, 1)), gm)
            # (G, C/G, kh, kw, N, OH, OW) -> (N, C, OH, OW, kh, kw): a view, no copy
            gwin = xp.transpose(gcols.reshape((g_, cg, kh, kw, n, oh, ow)),
                                (4, 0, 1, 5, 6, 2, 3)).reshape((n, c, oh, ow, kh, kw))
            gx = col2im(xp, gwin, x.shape, *ctx.geometry)
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
                cols = Conv2d._columns(xp, _windows(xp, x, (kh, kw), stride, padding,
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


class MaxPool2d(Primitive):
    """y = the largest value of each window (padding counts as -∞).

    Piecewise linear: the derivative picks the arg-max of each window.
    VJP: x̄ = col2im(mask · ȳ), where the mask marks each window's maximum; it
    is saved (it is piecewise constant).  Ties go to the first maximum, as in
    PyTorch.
    """

    name = "max_pool2d"

    @staticmethod
    def forward(ctx, xp, x, kernel, stride, padding, dilation):
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
        ctx.geometry = (x.shape, kernel, stride, padding, dilation)
        ctx.save(masks)
        return best

    #: On arrays, ȳ · mask multiplies by the booleans directly; recorded, the mask is first
    #: converted to ȳ's dtype (a copy of the size of all the windows).  A traced training
    #: step, which needs one derivative only, runs the array rule (difflab.jit).
    first_order_is_cheaper = True

    @staticmethod
    def vjp(ctx, xp, g, masks):
        shape, kernel, *rest = ctx.geometry
        n, c, oh, ow = g.shape
        routed = g.reshape((1, n, c, oh, ow)) * masks  # (kh·kw, N, C, OH, OW)
        # -> (N, C, OH, OW, kh, kw), a view: each position's slab stays contiguous
        gwin = xp.transpose(routed, (1, 2, 3, 4, 0)).reshape((n, c, oh, ow) + tuple(kernel))
        return (col2im(xp, gwin, shape, kernel, *rest),)

    @staticmethod
    def jvp(ctx, xp, dx, masks):
        """ẏ = the tangent at each window's maximum: Σ_p mask_p · window_p(ẋ) (the VJP's
        transpose: pick where it routes).  The k tangents of x are k·N more images."""
        _, kernel, stride, padding, dilation = ctx.geometry
        k = dx.shape[0]
        win = _windows(xp, dx.reshape((-1,) + tuple(dx.shape[2:])), kernel, stride, padding,
                       dilation)  # (k·N, C, OH, OW, kh, kw); a padded place is never picked
        win = win.reshape((k,) + tuple(masks.shape[1:]) + (masks.shape[0],))
        return (win * xp.transpose(masks, (1, 2, 3, 4, 0))).sum(axis=-1)


class AvgPool2d(Primitive):
    """y = the mean of each window (zero padding counted, PyTorch's default).

    Linear.  VJP: x̄ = col2im(ȳ / (kh·kw) spread over each window).
    """

    name = "avg_pool2d"

    @staticmethod
    def forward(ctx, xp, x, kernel, stride, padding):
        win = _windows(xp, x, kernel, stride, padding, (1, 1))
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
        y = _windows(xp, dx.reshape((-1,) + tuple(dx.shape[2:])), kernel, stride, padding,
                     (1, 1)).mean(axis=(-2, -1))
        return y.reshape((k, -1) + tuple(y.shape[1:]))


# ------------------------------------------------------ softmax and its friends


class LogSoftmax(Primitive):
    r"""yᵢ = xᵢ - log Σⱼ exp(xⱼ) along ``dim`` (shifted by the max: no overflow).

    ∂yᵢ/∂xⱼ = δᵢⱼ - softmax(x)ⱼ, and softmax(x) = exp(y) reuses the output:

    .. math::
        \bar x = \bar y - e^{y} \textstyle\sum_i \bar y_i, \qquad
        \dot y = \dot x - \textstyle\sum_j e^{y_j} \dot x_j .
    """

    name = "log_softmax"

    @staticmethod
    def forward(ctx, xp, x, dim):
        # Counted from the end: forward mode's tangents have a k axis in front.
        ctx.dim = dim - x.ndim if dim >= 0 else dim
        shifted = x - x.max(axis=dim, keepdims=True)
        y = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save(y)
        return y

    @staticmethod
    def vjp(ctx, xp, g, y):
        return (g - xp.exp(y) * g.sum(axis=ctx.dim, keepdims=True),)

    @staticmethod
    def jvp(ctx, xp, dx, y):
        return dx - (xp.exp(y) * dx).sum(axis=ctx.dim, keepdims=True)


class Softmax(Primitive):
    r"""yᵢ = exp(xᵢ) / Σⱼ exp(xⱼ) along ``dim``.

    ∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ - yⱼ), so (reusing the output)

    .. math::
        \bar x = y \odot (\bar y - \textstyle\sum_i \bar y_i y_i), \qquad
        \dot y = y \odot (\dot x - \textstyle\sum_j y_j \dot x_j).
    """

    name = "softmax"

    @staticmethod
    def forward(ctx, xp, x, dim):
        # Counted from the end: forward mode's tangents have a k axis in front.
        ctx.dim = dim - x.ndim if dim >= 0 else dim
        e = xp.exp(x - x.max(axis=dim, keepdims=True))
        y = e / e.sum(axis=dim, keepdims=True)
        ctx.save(y)
        return y

    @staticmethod
    def vjp(ctx, xp, g, y):
        return (y * (g - (g * y).sum(axis=ctx.dim, keepdims=True)),)

    @staticmethod
    def jvp(ctx, xp, dx, y):
        return y * (dx - (dx * y).sum(axis=ctx.dim, keepdims=True))


class NLLLoss(Primitive):
    r"""Negative log-likelihood of class indices, for log-probabilities z (N, C).

    ℓₙ = -wₜₙ · z[n, tₙ] (wₜ the class weight, 0 for ``ignore_index``);
    ``reduction`` 'mean' divides Σℓₙ by Σwₜₙ, 'sum' does not divide, 'none'
    keeps the vector.  Picking one entry per row is linear in z:

    .. math::
        \bar z[n, t_n] = -w_{t_n} \bar\ell_n
        \ (\text{divided by } \textstyle\sum w \text{ for 'mean'}),
        \quad 0 \text{ elsewhere}.

    The saved row and class indices are constants of the graph.
    """

    name = "nll_loss"

    @staticmethod
    def forward(ctx, xp, z, target, weight, ignore_index, reduction):
        n = z.shape[0]
        valid = target != ignore_index
        t = xp.where(valid, target, 0)
        rows = xp.arange(n)
        w = (valid if weight is None else weight[t] * valid).astype(z.dtype)
        losses = -z[rows, t] * w
        ctx.reduction, ctx.shape = reduction, z.shape
        if reduction == "none":
            out = losses
        elif reduction == "sum":
            out = losses.sum()
        else:
            out = losses.sum() / w.sum()
        ctx.save(rows, t, w)
        return out

    @staticmethod
    def vjp(ctx, xp, g, rows, t, w):
        coef = w * -1.0
        if ctx.reduction == "mean":  # (Σw from the saved w: a traced graph reads each batch's)
            coef = coef / w.sum()
        if ctx.reduction == "none":
            values = g * coef
        else:
            values = xp.broadcast_to(g.reshape((1,)), coef.shape) * coef
        return (xp.scatter_add(values, (rows, t), ctx.shape),)

    @staticmethod
    def jvp(ctx, xp, dz, rows, t, w):
        """ℓ̇ₙ = -wₜₙ · ż[n, tₙ] for each of the k tangents (then summed, or divided by Σw)."""
        picked = dz[:, rows, t] * (w * -1.0)  # (k, N)
        if ctx.reduction == "none":
            return picked
        total = picked.sum(axis=1)
        return total / w.sum() if ctx.reduction == "mean" else total


class BCEWithLogits(Primitive):
    r"""ℓ = -[t log σ(x) + (1 - t) log(1 - σ(x))], elementwise, from logits x.

    Computed as max(x, 0) - x t + log(1 + e^{-|x|}), which never overflows.

    .. math::
        \frac{\partial \ell}{\partial x} = \sigma(x) - t, \qquad
        \frac{\partial \ell}{\partial t} = -x .
    """

    name = "bce_with_logits"

    @staticmethod
    def forward(ctx, xp, x, t):
        ctx.save(x, t)
        return xp.maximum(x, 0) - x * t + xp.log1p(xp.exp(-xp.abs(x)))

    @staticmethod
    def vjp(ctx, xp, g, x, t):
        need_x, need_t = ctx.needs_input_grad
        gx = gt = None
        if need_x:
            e = xp.exp(-xp.abs(x))
            sig = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
            gx = g * (sig - t)
        if need_t:
            gt = g * -x
        return gx, gt

    @staticmethod
    def jvp(ctx, xp, dx, dt, x, t):
        """ℓ̇ = (σ(x) - t) ẋ - x ṫ (the VJP's two partials, times the tangents)."""
        out = None
        if dx is not None:
            e = xp.exp(-xp.abs(x))
            sig = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
            out = (sig - t) * dx
        if dt is not None:
            term = dt * (x * -1.0)
            out = term if out is None else out + term
        return out


class MSELoss(Primitive):
    r"""Squared error ℓ = (x - y)², elementwise, then averaged (``mean``), summed
    (``sum``) or kept (``none``).

    With d = x - y and s the reduction's scale (1/n for the mean of n elements,
    1 for the sum or none):

    .. math::
        \bar x = 2 s\, d\, \bar\ell, \qquad \bar y = -\bar x, \qquad
        \dot\ell = \textstyle\sum 2 s\, d\, (\dot x - \dot y)
        \ (\text{no sum for none}).

    A primitive of its own (not a mean of products) so that the tape names it as
    PyTorch does: ``MseLossBackward0``.
    """

    name = "mse_loss"

    @staticmethod
    def forward(ctx, xp, x, y, reduction="mean"):
        d = x - y
        ctx.save(x, y)  # (the inputs, not d: a recorded backward then sees d depend on them)
        ctx.reduction = reduction
        ctx.scale = 2.0 / d.size if reduction == "mean" and d.size else 2.0
        if reduction == "none":
            return d * d
        total = xp.sum(d * d)
        return total * (1.0 / d.size if d.size else float("nan")) if reduction == "mean" \
            else total

    @staticmethod
    def vjp(ctx, xp, g, x, y):
        gx = (g * ctx.scale) * (x - y)
        need_x, need_y = ctx.needs_input_grad
        return (gx if need_x else None), (-gx if need_y else None)

    @staticmethod
    def jvp(ctx, xp, dx, dy, x, y):
        d = x - y
        change = dx if dy is None else dy * -1.0 if dx is None else dx - dy
        out = (ctx.scale * d) * change
        if ctx.reduction == "none":
            return out
        return xp.sum(out, axis=tuple(range(-d.ndim, 0)))


# ---------------------------------------------------------------- normalisation


class Normalize(Primitive):
    r"""x̂ = (x - μ) / √(σ² + ε), with μ and σ² the mean and (biased) variance over ``axes``.

    The heart of batch norm (axes = batch and space) and layer norm (axes =
    the last dimensions); the affine part γ x̂ + β is two ordinary ops.
    With m elements per mean and s = 1/√(σ² + ε):

    .. math::
        \bar x = s \left(\bar y - \mathrm{mean}(\bar y)
                 - \hat x\, \mathrm{mean}(\bar y \hat x)\right)

    (the three terms: direct, through μ, through σ²).  ``mean``/``var`` may
    be passed precomputed (batch norm needs them for its running averages).
    """

    name = "normalize"

    @staticmethod
    def forward(ctx, xp, x, axes, eps, mean=None, var=None):
        if mean is None:
            mean = x.mean(axis=axes, keepdims=True)
            centered = x - mean
            var = (centered * centered).mean(axis=axes, keepdims=True)
        else:
            centered = x - mean
        ctx.invstd = 1.0 / xp.sqrt(var + eps)
        ctx.axes, ctx.eps = axes, eps
        y = centered * ctx.invstd
        ctx.save(x, y)
        return y

    @staticmethod
    def _invstd(ctx, xp, x):
        """s, kept by the forward; recorded, computed again from x, so that it is
        differentiated too (and a traced graph computes it for each input)."""
        if not _recording(xp):
            return ctx.invstd
        centered = x - x.mean(axis=ctx.axes, keepdims=True)
        return 1.0 / xp.sqrt((centered * centered).mean(axis=ctx.axes, keepdims=True)
                             + ctx.eps)

    @staticmethod
    def vjp(ctx, xp, g, x, y):
        axes = ctx.axes
        mean_g = g.mean(axis=axes, keepdims=True)
        mean_gy = (g * y).mean(axis=axes, keepdims=True)
        return ((g - mean_g - y * mean_gy) * Normalize._invstd(ctx, xp, x),)

    @staticmethod
    def jvp(ctx, xp, dx, x, y):
        """The Jacobian s (I - 11ᵀ/m - x̂x̂ᵀ/m) is symmetric: the JVP is the VJP's formula,
        ẏ = s (ẋ - mean(ẋ) - x̂ mean(x̂ ẋ)), over the same axes of each of the k tangents."""
        axes = tuple(a + 1 if a >= 0 else a for a in ctx.axes)  # (past the k axis)
        mean_dx = dx.mean(axis=axes, keepdims=True)
        mean_dxy = (dx * y).mean(axis=axes, keepdims=True)
        return (dx - mean_dx - y * mean_dxy) * Normalize._invstd(ctx, xp, x)


# ------------------------------------------------------------------ activations


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _erf(xp, x):
    """The error function from the array namespace (scipy/cupyx); math.erf as a fallback."""
    try:
        return xp.erf(x)
    except (ImportError, AttributeError):
        return np.vectorize(math.erf, otypes=[x.dtype])(x)


class GELU(Primitive):
    r"""y = x Φ(x), Φ the standard normal CDF (``approximate='tanh'``: Hendrycks' formula).

    Exact:  dy/dx = Φ(x) + x φ(x),  φ(x) = e^{-x²/2}/√(2π).

    Tanh:   y = ½x(1 + tanh u),  u = √(2/π)(x + 0.044715x³),
            dy/dx = ½(1 + tanh u) + ½x(1 - tanh² u)·√(2/π)(1 + 3·0.044715x²).
    """

    name = "gelu"

    @staticmethod
    def forward(ctx, xp, x, approximate="none"):
        ctx.approximate = approximate
        ctx.save(x)
        if approximate == "tanh":
            return 0.5 * x * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1.0 + _erf(xp, x * _SQRT_HALF))

    @staticmethod
    def derivative(xp, x, approximate):
        if approximate == "tanh":
            t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
            return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_OVER_PI * (
                1.0 + 3 * 0.044715 * x * x)
        cdf = 0.5 * (1.0 + _erf(xp, x * _SQRT_HALF))
        return cdf + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI

    @staticmethod
    def vjp(ctx, xp, g, x):
        return (g * GELU.derivative(xp, x, ctx.approximate),)

    @staticmethod
    def jvp(ctx, xp, dx, x):
        return dx * GELU.derivative(xp, x, ctx.approximate)


class LeakyReLU(Primitive):
    """y = x for x > 0, a·x otherwise.  dy/dx = 1 or a (a piecewise-constant factor, saved)."""

    name = "leaky_relu"

    @staticmethod
    def forward(ctx, xp, x, slope):
        factor = xp.where(x > 0, 1.0, slope).astype(x.dtype)
        ctx.save(factor)
        return x * factor

    @staticmethod
    def vjp(ctx, xp, g, factor):
        return (g * factor,)

    @staticmethod
    def jvp(ctx, xp, dx, factor):
        return dx * factor


# -------------------------------------------------------------------- embedding


class Embedding(Primitive):
    """y = W[idx]: rows of a table.  VJP: scatter-add ȳ into the rows (repeats add up).

    The row ``padding_idx`` (if any) gets no gradient, as in PyTorch.
    """

    name = "embedding"

    @staticmethod
    def forward(ctx, xp, w, idx, padding_idx=None):
        ctx.idx, ctx.shape = idx, w.shape
        if padding_idx is not None:
            keep = xp.ones((w.shape[0], 1), dtype=w.dtype)
            keep[padding_idx] = 0
            ctx.save(keep)
        return w[idx]

    @staticmethod
    def vjp(ctx, xp, g, keep=None):
        gw = xp.scatter_add(g, ctx.idx, ctx.shape)
        return (gw if keep is None else gw * keep,)

    @staticmethod
    def jvp(ctx, xp, dw, keep=None):
        return dw[:, ctx.idx]  # (the rows picked from each of the k tangents)
