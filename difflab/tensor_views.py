"""How a view and its base keep one history when either is written in place.

A view (``x[1:]``, ``x.T``, ``x.diagonal()``, ``x.view(6)``, ``x.as_strided(...)``)
shares its base's memory and version counter (``tensor_arguments.view_of``), so a write into one
changes the values of both.  While gradients are recorded, autograd must see
the write on both sides too, as PyTorch's does:

* a write through a view is a write into its base: the base's new value is its
  old value with the view's elements replaced, ``index_put`` at the view's
  positions (PyTorch's ``CopySlices``), and the view reads the base again;
* a write into a base that is part of a graph changes what its views show: each
  view still alive is read again from the base's new value (PyTorch regenerates
  a view's ``grad_fn`` the same way), so a gradient through the view reaches
  the write, instead of the values from before it.

Both need to know where a view's elements lie in its base: :func:`positions`
reads that from the two arrays' strides, so that one rule serves every kind of
view (a slice, a transpose, a diagonal, an expand).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from difflab import backend
from difflab.autograd.engine import apply as _apply
from difflab.ops import structural as _structural

if TYPE_CHECKING:
    from difflab.tensor import Tensor


def positions(view: Any, base: Any) -> np.ndarray:
    """Where each element of array ``view`` lies in array ``base``, whose memory it
    views: its flat (row-major) index in ``base``, in an array of ``view``'s shape.

    Each element's byte offset follows from the strides (and the view's start in
    ``base``'s memory); in a contiguous base it is the index times the item size,
    in any other base its own offsets, sorted, say which element is there.
    """
    start = backend.data_address(view) - backend.data_address(base)
    target = start + _offsets(view)
    if base.flags.c_contiguous:
        return target // base.dtype.itemsize
    offsets = _offsets(base).ravel()
    order = np.argsort(offsets, kind="stable")
    found = np.minimum(np.searchsorted(offsets[order], target), max(offsets.size - 1, 0))
    if target.size and not np.array_equal(offsets[order][found], target):
        raise RuntimeError("a view's elements were not found in its base's memory")
    return order[found]


def _offsets(array: Any) -> np.ndarray:
    """Each element's byte offset from the first one (Σ index · stride), on the host."""
    out = np.zeros(array.shape, np.int64)
    for axis, (size, stride) in enumerate(zip(array.shape, array.strides)):
        steps = np.arange(size, dtype=np.int64) * stride
        out = out + steps.reshape((1,) * axis + (size,) + (1,) * (array.ndim - axis - 1))
    return out


def _device_positions(view: Tensor, base: Tensor) -> Any:
    return backend.array_module(base.array).asarray(positions(view.array, base.array))


#: id(base) -> {id(view): (weak reference to the view, its positions or None)}, for the
#: bases in a graph that have views (kept off the tensors, which pickle and copy as they
#: are; an entry goes when its base does)
_FOLLOWERS: dict[int, dict] = {}


#: id(view) -> a weak reference to it, for the views no write may go through: a module's
#: backward hooks pass its inputs and outputs through an identity record (PyTorch's
#: BackwardHookFunction), whose gradient a write would bypass, as PyTorch refuses too
_UNWRITABLE: dict[int, Any] = {}


def forbid_writes(view: Tensor) -> None:
    """Refuse a recorded in-place write into ``view`` (a Function's output on its input's
    memory): ``Tensor._check_inplace`` asks ``writes_forbidden``."""
    key = id(view)
    _UNWRITABLE[key] = weakref.ref(view, lambda _, key=key: _UNWRITABLE.pop(key, None))


def writes_forbidden(view: Tensor) -> bool:
    ref = _UNWRITABLE.get(id(view))
    return ref is not None and ref() is view


def follow(view: Tensor) -> None:
    """Register ``view`` with its base, which is part of a graph: a recorded write into
    the base then reads it again (:func:`refresh`).  Its positions are found then, once
    (a view's place in its base's memory never changes)."""
    base = view._base
    views = _FOLLOWERS.get(id(base))
    if views is None:
        views = _FOLLOWERS[id(base)] = {}
        weakref.finalize(base, _FOLLOWERS.pop, id(base), None)
    key = id(view)
    forget = weakref.ref(view, lambda _, views=views, key=key: views.pop(key, None))
    views[key] = (forget, None)


def refresh(base: Tensor) -> None:
    """After a recorded write into ``base``: each of its views alive is read again from
    the new value, so that gradients through it reach the write."""
    views = _FOLLOWERS.get(id(base))
    if not views:
        return
    flat = _apply(_structural.Reshape, base, shape=(-1,))
    for key, (ref, at) in list(views.items()):
        view = ref()
        if view is None or not view.array.size:
            continue
        if at is None:
            at = _device_positions(view, base)
            views[key] = (ref, at)
        # (an integer index of the flattened base: its gradient puts them back in place)
        fresh = _apply(_structural.Index, flat, index=at)
        view.grad_fn, view._requires_grad = fresh.grad_fn, True


def write_through(view: Tensor, result: Tensor) -> None:
    """After ``view`` took ``result``'s values, recorded: its base takes them too, as the
    base's old value with the view's elements replaced by them."""
    base = view._base
    at = _device_positions(view, base).ravel()
    # (base still has its old record, which is what the write reads; its values are the
    # new ones already, which index_put does not read where it writes)
    flat = _apply(_structural.Reshape, base, shape=(-1,))
    written = _apply(_structural.Reshape, result, shape=(-1,))
    new = _apply(_structural.IndexPut, flat, written, index=at)
    base._rebase(_apply(_structural.Reshape, new, shape=tuple(base.shape)))
    follow(view)  # (the base is part of a graph now: the view follows its next writes)
