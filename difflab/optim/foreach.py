"""Speed shortcut of ``Adam``, ``AdamW`` and ``SGD``: one update over all of a group's
parameters at once (PyTorch's ``foreach`` implementation).  Skip this on a first read.

:meth:`Optimizer.step <difflab.optim.Optimizer.step>` updates one parameter at a
time: Adam's ``_update`` is about a dozen NumPy operations, each of which costs
a microsecond or so of Python and NumPy overhead before it touches any number.
For the small parameters of a teaching model (a LayerNorm's 32 weights, a bias)
that overhead is the whole cost: 8 parameters, 100 operations.

Here the same formulas run once over a group's parameters laid end to end:

* the moment estimates (``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``;
  SGD's ``momentum_buffer``) live in one flat array per name, and each
  parameter's ``state`` holds a tensor that is a *view* of its stretch of it, so
  ``optimizer.state[p]`` and ``state_dict()`` read (and a user may write) them as
  before;
* the gradients are gathered into one flat array (one copy), the formulas run
  on the flat arrays, and each parameter is updated in place by its stretch of
  the result: per parameter one operation instead of a dozen;
* where numba is loaded already (a compiled model's kernels load it), Adam's
  dozen lines over the flat arrays are one loop (``_adam_loop``), each
  operation the line's own, in the same order, so the same bits (the GRU
  step of ``bench_compile.py``, 6 parameters, 4,932 numbers: Adam's whole
  ``step()`` took about half as long, 31-38 µs against 61-75 µs, measured
  interleaved on a loaded machine).  The loop raises no NumPy warning where a
  NaN appears; the lines would;
* plain SGD (no momentum, no weight decay) has nothing to lay out flat: there,
  with numba loaded, each parameter's ``p -= lr * g`` is one loop
  (``_sgd_loop``), one pass instead of NumPy's three (the temporary ``lr * g``
  written, then read again).

Every operation is the per-parameter one, elementwise on the same numbers in the
same order (``m *= b1``, ``m += (1 - b1) * g``, ...), so the results are the
same bits (``tests/optim/test_optim_foreach.py`` compares with the plain path,
``DIFFLAB_FASTPATH=0``, bit for bit).  A group takes the plain path, parameter by
parameter, whenever the shortcut could not say the same:

* fewer than two parameters with a gradient, or large ones (more than
  ``fastpath.LARGE`` elements each on average: there the arithmetic is the cost,
  and the gather is one more pass over memory);
* anything but NumPy arrays of one floating dtype, a gradient of another shape or
  dtype than its parameter's, hyper-parameters that are not plain numbers;
* weight decay over parameters that do not each own their memory (two views of
  one array, or two parameters of the very same array: the plain path's decay of
  the second reads the first's update);
* state the shortcut did not lay out itself (loaded with ``load_state_dict``,
  made by the plain path, replaced by the user), a different set of parameters
  with gradients than at the first step (a parameter frozen later), or step
  counts that differ;
* a subclass (it may have its own ``_update``): only the classes that name a
  ``_flat_step`` themselves take it.
"""

from __future__ import annotations

import math
import sys
import weakref
from typing import Any

import numpy as np

from difflab import fastpath
from difflab.tensor import Tensor


class Layout:
    """The flat state of one parameter group: which parameters, where, and the flat arrays.

    Parameters
    ----------
    group : dict
        The parameter group (kept to recognise it).
    params : list of Tensor
        The parameters laid out, in order.
    names : tuple of str
        The state buffers kept flat (``"exp_avg"``, ...).

    Attributes
    ----------
    flat : dict
        Name -> the flat array of every parameter's buffer, end to end.
    views : dict
        Name -> per parameter, the array its ``state[name]`` tensor holds (a view of
        ``flat[name]``, of the parameter's shape).
    gradient, update : numpy.ndarray
        Where the gradients are gathered, and the step is computed, at each step
        (``updates``: per parameter, its stretch of ``update``).
    started : bool
        Whether SGD's momentum buffers hold a first gradient yet.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.foreach import Layout
    >>> a, b = dl.zeros(2, 3, dtype=dl.float64), dl.zeros(4, dtype=dl.float64)
    >>> layout = Layout({}, [a, b], ("exp_avg",))
    >>> layout.flat["exp_avg"].shape, [v.shape for v in layout.views["exp_avg"]]
    ((10,), [(2, 3), (4,)])
    """

    def __init__(self, group: dict, params: list, names: tuple) -> None:
        self.group = group
        self.params = list(params)
        first = params[0].array
        self.dtype = first.dtype
        self.shapes = [p.array.shape for p in params]
        sizes = [p.array.size for p in params]
        self.bounds = list(zip(np.cumsum([0] + sizes[:-1]).tolist(), np.cumsum(sizes).tolist()))
        total = sum(sizes)
        self.names = names
        self.flat: dict = {}
        self.views: dict = {}
        for name in names:
            self.flat[name] = np.zeros(total, self.dtype)
            self.views[name] = self.split(self.flat[name])
        self.gradient = np.empty(total, self.dtype)
        self.update = np.empty(total, self.dtype)
        self.updates = self.split(self.update)
        self.started = False

    def split(self, flat: np.ndarray) -> list:
        """Per parameter, its stretch of ``flat`` shaped like the parameter."""
        return [flat[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)]

    def fits(self, params: list, state: dict) -> bool:
        """Whether these parameters, with that state, are the ones laid out, unchanged."""
        if len(params) != len(self.params):
            return False
        for k, (p, q) in enumerate(zip(params, self.params)):
            if p is not q or p.array.shape != self.shapes[k] or p.array.dtype != self.dtype:
                return False
            entries = state.get(p)
            if entries is None:
                return False
            for name in self.names:
                held = entries.get(name)
                if not isinstance(held, Tensor) or held.array is not self.views[name][k]:
                    return False
        return True


#: Per optimizer, per group (by id), its Layout; forgotten with the optimizer.
_layouts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _gradients(group: dict) -> list | None:
    """The group's parameters that have a gradient, if they suit the flat update
    (NumPy arrays of one floating dtype, gradients of their shape and dtype)."""
    params = [p for p in group["params"] if p.grad is not None]
    if len(params) < 2:
        return None
    dtype = params[0].array.dtype
    if dtype.kind != "f":
        return None
    total = 0
    for p in params:
        a, g = p.array, p.grad.array
        if type(a) is not np.ndarray or type(g) is not np.ndarray or a.dtype != dtype \
                or g.dtype != dtype or g.shape != a.shape:
            return None
        total += a.size
    if total > fastpath.LARGE * len(params):
        return None
    return params


def _numbers(*values: Any) -> bool:
    """Whether the hyper-parameters are Python numbers.  A NumPy scalar or a tensor as the
    learning rate combines with float32 arrays by other promotion rules (a float64 scalar
    makes ``lr * g`` float64, rounded once when it is subtracted), so the plain path
    takes it."""
    return all(type(v) in (int, float, bool) for v in values)


def _layout(optimizer: Any, group: dict, params: list, names: tuple) -> Layout | None:
    """The group's layout if ``params`` and their state fit it; a new one if none of them
    has state yet (their state is set to its views); else None (the plain path)."""
    layouts = _layouts.setdefault(optimizer, {})
    layout = layouts.get(id(group))
    if layout is not None and layout.group is group and layout.names == names \
            and layout.fits(params, optimizer.state):
        return layout
    if any(p in optimizer.state for p in params):
        return None
    layout = layouts[id(group)] = Layout(group, params, names)
    for k, p in enumerate(params):
        optimizer.state[p] = {name: Tensor._wrap(layout.views[name][k]) for name in names}
    return layout


def _gather(layout: Layout, params: list, maximize: bool) -> np.ndarray:
    """The gradients end to end (negated for ``maximize``, as the plain path's ``-g``)."""
    flat = np.concatenate([p.grad.array.reshape(-1) for p in params], out=layout.gradient)
    return -flat if maximize else flat


def _apply(layout: Layout, params: list, decay: float | None = None) -> None:
    """``p -= u`` per parameter, ``u`` its stretch of ``layout.update`` (after ``p *= decay``,
    AdamW's decoupled weight decay, parameter by parameter as the plain path)."""
    for p, piece in zip(params, layout.updates):
        if decay is not None:
            p.array *= decay
        p.array -= piece
        p._version[0] += 1


def _own_memory(params: list) -> bool:
    """Whether no two parameters can share memory (each owns its array).

    The plain path updates one parameter after the other, so with weight decay (which
    reads θ) a parameter that is a view of another's memory, or holds the very same array
    (``nn.Parameter(p.detach())``), would read the other's new values; the flat update
    reads them all first.  It takes only owners, each of its own array.
    """
    return (all(p.array.base is None for p in params)
            and len({id(p.array) for p in params}) == len(params))


def adam_step(optimizer: Any, group: dict) -> bool:
    """Adam's (and AdamW's) update of ``group``, flat; False (nothing done) where the
    plain path must take it.

    The formulas of ``Adam._update`` (:class:`difflab.optim.sgd.Adam`), each on the flat arrays.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.foreach import adam_step
    >>> a, b = dl.ones(3, requires_grad=True), dl.ones(2, requires_grad=True)
    >>> opt = dl.optim.Adam([a, b], lr=0.1)
    >>> (a.sum() + (2 * b).sum()).backward()
    >>> adam_step(opt, opt.param_groups[0]), a.detach(), opt.state[b]["step"]
    (True, tensor([0.9, 0.9, 0.9]), 1)
    """
    params = _gradients(group)
    if params is None:
        return False
    decoupled = type(optimizer)._decoupled
    if group["weight_decay"] and not decoupled and not _own_memory(params):
        return False
    if not _numbers(group["lr"], *group["betas"], group["eps"], group["weight_decay"]):
        return False
    steps = {optimizer.state[p].get("step", 0) if p in optimizer.state else 0 for p in params}
    if len(steps) != 1:
        return False
    names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
    layout = _layout(optimizer, group, params, names)
    if layout is None:
        return False
    lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    g = _gather(layout, params, group.get("maximize"))
    if wd and not decoupled:
        g = g + wd * np.concatenate([p.array.reshape(-1) for p in params])
    step = steps.pop() + 1
    for p in params:
        optimizer.state[p]["step"] = step
    m, v = layout.flat["exp_avg"], layout.flat["exp_avg_sq"]
    v_max = layout.flat["max_exp_avg_sq"] if group["amsgrad"] else None
    bias1, bias2 = 1.0 - b1**step, 1.0 - b2**step
    kernel = _adam_kernel(layout.dtype)
    if kernel is not None:  # (the lines below as one loop: the same bits)
        t = layout.dtype.type
        kernel(g, m, v, v if v_max is None else v_max, layout.update, t(b1), t(1.0 - b1),
               t(b2), t(1.0 - b2), t(1.0 / math.sqrt(bias2)), t(eps), t(lr / bias1),
               v_max is not None)
    else:
        m *= b1
        m += (1.0 - b1) * g
        v *= b2
        v += (1.0 - b2) * (g * g)
        if v_max is not None:
            np.maximum(v_max, v, out=v_max)
            v = v_max
        denom = np.sqrt(v) * (1.0 / math.sqrt(bias2))
        denom += eps
        # (lr / bias1) * (m / denom), as the plain path; a product of two numbers is the
        # same either way round, so it is computed in the update's buffer)
        update = np.divide(m, denom, out=layout.update)
        update *= lr / bias1
    _apply(layout, params, 1.0 - lr * wd if wd and decoupled else None)
    return True


def _adam_loop(g, m, v, v_max, update, b1, c1, b2, c2, k, eps, scale,
               amsgrad):  # pragma: no cover (numba compiles it)
    """Adam's lines of :func:`adam_step` as one loop over the elements, each operation the
    line's own, in its order, rounded once (IEEE: numba contracts no product and sum into
    a fused multiply-add without ``fastmath``).  The numbers are the arrays' dtype, as
    NumPy casts a Python number to a float32 array's.  ``v_max`` is ``v`` without amsgrad."""
    for i in range(g.size):
        gi = g[i]
        mi = m[i] * b1
        mi = mi + c1 * gi
        m[i] = mi
        vi = v[i] * b2
        vi = vi + c2 * (gi * gi)
        v[i] = vi
        if amsgrad:
            w = v_max[i]
            if vi > w or vi != vi:  # (np.maximum: the larger, NaN if either is)
                w = vi
            v_max[i] = w
            vi = w
        d = np.sqrt(vi) * k
        d = d + eps
        update[i] = (mi / d) * scale


_KERNEL: list = []  # numba's dispatcher of _adam_loop, made on first use


def _adam_kernel(dtype: np.dtype) -> Any:
    """Adam's loop compiled by numba (kept in its disk cache), or None: the NumPy lines.

    Only where numba is loaded already (a compiled model's kernels loaded it), so a
    process that trains eagerly does not pay numba's import for it; and only for
    float64 and float32 arrays.  The NumPy lines and the loop give the same bits
    (``tests/optim/test_optim_foreach.py``).
    """
    if _KERNEL:
        return _KERNEL[0] if dtype in _LOOP_DTYPES else None
    if "numba" not in sys.modules or dtype not in _LOOP_DTYPES or not _numba_allowed():
        return None
    import numba

    _KERNEL.append(numba.njit(error_model="numpy", cache=True)(_adam_loop))
    return _KERNEL[0]


_LOOP_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _sgd_in_one_pass(optimizer: Any, group: dict) -> bool:
    """Plain SGD's ``p -= lr * g`` (no momentum, no weight decay) as one loop per parameter.

    NumPy writes ``lr * g`` into a temporary, then reads it again to subtract it:
    three passes over a parameter's size.  The loop (:func:`_sgd_loop`) reads p and g
    once and writes p, the same two roundings per element, so the same bits; for
    the MLP of ``bench_compile.py`` (784 x 512 float32 weights) it took half as long
    as the NumPy lines (132 µs against 284, interleaved).  False (nothing done) where
    the plain path must take it: numba not loaded, ``maximize``, ``lr`` 1 (one
    operation already) or not a Python number, and any parameter whose array and
    gradient are not C-contiguous NumPy arrays of one float dtype and shape, or
    share memory.
    """
    lr = group["lr"]
    if group["weight_decay"] or group.get("maximize") or not _numbers(lr) or lr == 1.0 \
            or not _SGD_KERNEL and "numba" not in sys.modules:  # (no loop: nothing to check)
        return False
    pairs = []
    for p in group["params"]:
        if p.grad is None:
            continue
        a, g = p.array, p.grad.array
        if type(a) is not np.ndarray or type(g) is not np.ndarray or a.dtype != g.dtype \
                or a.shape != g.shape or not (a.flags.c_contiguous and a.flags.writeable
                                              and g.flags.c_contiguous) \
                or np.may_share_memory(a, g):
            return False
        pairs.append((p, a, g))
    kernel = _sgd_kernel(pairs[0][1].dtype) if pairs else None
    if kernel is None or any(a.dtype != pairs[0][1].dtype for _, a, _ in pairs):
        return False
    rate = pairs[0][1].dtype.type(lr)  # (as NumPy casts a Python number to the array's dtype)
    for p, a, g in pairs:
        optimizer.state.setdefault(p, {})  # (as the plain step: an empty state per parameter)
        kernel(a.reshape(-1), g.reshape(-1), rate)
        p._version[0] += 1
    return True


def _sgd_loop(p, g, lr):  # pragma: no cover (numba compiles it)
    """``p -= lr * g`` as one loop: the product rounded, then the difference, as NumPy's
    two lines (no fused multiply-add without ``fastmath``)."""
    for i in range(p.size):
        p[i] = p[i] - lr * g[i]


_SGD_KERNEL: list = []  # numba's dispatcher of _sgd_loop, made on first use


def _sgd_kernel(dtype: np.dtype) -> Any:
    """:func:`_sgd_loop` compiled by numba, or None (the NumPy lines), as
    :func:`_adam_kernel` decides."""
    if _SGD_KERNEL:
        return _SGD_KERNEL[0] if dtype in _LOOP_DTYPES else None
    if "numba" not in sys.modules or dtype not in _LOOP_DTYPES or not _numba_allowed():
        return None
    import numba

    _SGD_KERNEL.append(numba.njit(error_model="numpy", cache=True)(_sgd_loop))
    return _SGD_KERNEL[0]


def _numba_allowed() -> bool:
    from difflab.jit.fusion import USE_NUMBA  # (DIFFLAB_JIT_NUMBA=0 switches it off)

    return USE_NUMBA


def sgd_step(optimizer: Any, group: dict) -> bool:
    """SGD's update of ``group``, flat; False (nothing done) where the plain path must
    take it.

    The formulas of ``SGD._update`` (:class:`difflab.optim.sgd.SGD`), each on the flat arrays.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.foreach import sgd_step
    >>> a, b = dl.ones(3, requires_grad=True), dl.ones(2, requires_grad=True)
    >>> opt = dl.optim.SGD([a, b], lr=0.1, momentum=0.9)
    >>> (a.sum() + (2 * b).sum()).backward()
    >>> sgd_step(opt, opt.param_groups[0]), b.detach(), opt.state[b]["momentum_buffer"]
    (True, tensor([0.8, 0.8]), tensor([2., 2.]))
    """
    lr, mu, wd = group["lr"], group["momentum"], group["weight_decay"]
    if not mu:  # (plain SGD: nothing to lay out flat; each parameter in one pass)
        return _sgd_in_one_pass(optimizer, group)
    params = _gradients(group)
    if params is None:
        return False
    if wd and not _own_memory(params) or not _numbers(lr, mu, wd, group["dampening"]):
        return False
    layout = _layout(optimizer, group, params, ("momentum_buffer",))
    if layout is None:
        return False
    g = _gather(layout, params, group.get("maximize"))
    if wd:
        g = g + wd * np.concatenate([p.array.reshape(-1) for p in params])
    if mu:
        buf = layout.flat["momentum_buffer"]
        if not layout.started:  # (the first step: b = g)
            buf[...] = g
            layout.started = True
        else:
            buf *= mu
            buf += (1.0 - group["dampening"]) * g if group["dampening"] else g
        g = g + mu * buf if group["nesterov"] else buf
    if lr == 1.0:
        layout.update[...] = g
    else:
        np.multiply(g, lr, out=layout.update)  # (lr * g, as the plain path)
    _apply(layout, params)
    return True
