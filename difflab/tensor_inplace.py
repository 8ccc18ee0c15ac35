"""In-place operations: ``x.add_(y)``, ``x += y``, ``x[i] = v``, ``x.zero_()``, ...

An in-place operation changes values that the tape may still need.  Two
rules keep gradients right (as in PyTorch):

* a leaf that requires grad may not be changed in place while recording
  (its gradient would be lost): update it under ``no_grad()``;
* while recording, the tensor's old value becomes a snapshot on the tape,
  the operation is recorded out of place, and the result is written back
  into the tensor's memory, which takes over the new record (``_rebase``).
  Every tensor has a version counter, bumped on each in-place change, so
  that a backward pass can tell when a value it saved was overwritten.

:class:`~difflab.tensor.Tensor` inherits these methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from difflab import backend
from difflab.autograd.engine import GraphRecorder as _GraphRecorder
from difflab.autograd.engine import apply as _apply
from difflab.autograd.grad_mode import _State
from difflab.ops import registry as _ops
from difflab.ops import structural as _structural
from difflab.tensor_arguments import index_arrays, is_tensor, unwrap, unwrap_operand, wrap

if TYPE_CHECKING:
    from difflab.tensor import Tensor


class InPlaceMethods:
    """In-place operations on tensors (mixed into :class:`~difflab.tensor.Tensor`)."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> None:
        index = index_arrays(index)
        value_tensor = value if is_tensor(value) else None
        records = _State.enabled and (
            self.requires_grad or (value_tensor is not None and value_tensor.requires_grad)
        )
        self._check_inplace("__setitem__", records)
        recorder = _GraphRecorder.active
        if records:
            old = self._snapshot()
            result = _apply(_structural.IndexPut, old, unwrap_operand(value), index=index)
            if recorder is not None:
                recorder.written(self, result)
            self._rebase(result)
        elif recorder is not None:  # (traced: the write is a primitive the graph replays)
            self._write(recorder, _apply(_structural.IndexPut, self, unwrap_operand(value),
                                         index=index), "__setitem__")
        else:
            self.array[index] = unwrap(value)
        self._version[0] += 1

    # ---------------------------------------------------------------- in place
    def _check_inplace(self, name: str, records: bool) -> None:
        if not records:
            return
        if self.grad_fn is None and self.requires_grad:
            raise RuntimeError(
                f"a leaf tensor that requires grad is being used in an in-place operation "
                f"({name}). Its gradient would be lost. Do the update under "
                f"'with difflab.no_grad():', or use an out-of-place operation."
            )
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError(
                f"in-place operation {name} on a view of a tensor that is part of a graph is "
                f"not supported: the base tensor would not know about it. Apply the "
                f"operation to the base tensor (x[index] = ...) or clone() the view first."
            )

    def _snapshot(self) -> Tensor:
        """A copy of the current value, standing for it on the tape."""
        if _GraphRecorder.active is not None:  # (traced: a copy the graph knows, no constant)
            return _apply(_structural.Clone, self)
        old = wrap(self.array.copy(), self.grad_fn, [self._version[0]])
        old._requires_grad = self.requires_grad
        return old

    def _write(self, recorder: Any, result: Tensor, name: str) -> None:
        """Write a traced operation's ``result`` into this tensor's memory, as the untraced
        in-place operation would (the same dtype and shape, or the same error); the
        recorder (the graph tracer) is told first, while the old values are still there."""
        if tuple(result.shape) != tuple(self.shape) or not np.can_cast(
                np.dtype(result.dtype), np.dtype(self.dtype), "same_kind"):
            raise RuntimeError(
                f"{name}: cannot write the result into this tensor (shape "
                f"{tuple(self.shape)}, dtype {self.dtype}): the result has shape "
                f"{tuple(result.shape)} and dtype {result.dtype}"
            )
        if result.dtype != self.dtype:
            result = result.to(self.dtype)
        recorder.written(self, result)
        self.array[...] = result.array

    def _rebase(self, result: Tensor) -> None:
        """Make ``self`` hold ``result``'s values, in its own memory, and its tape record."""
        self.array[...] = result.array
        self.grad_fn = result.grad_fn
        self._requires_grad = True
        if self.grad_fn is not None and getattr(self.grad_fn, "saved_sources", None):
            # the record may have saved its output: that is now self's array
            self.grad_fn.saved = tuple(
                self.array if s is result.array else s for s in self.grad_fn.saved
            )
            self.grad_fn.saved_versions = [
                (self._version, self._version[0] + 1) if box is result._version else (box, v)
                for box, v in self.grad_fn.saved_versions
            ]

    def _inplace(self, op: Any, other: Any, ufunc_name: str) -> Tensor:
        other_tensor = other if is_tensor(other) else None
        records = _State.enabled and (
            self.requires_grad or (other_tensor is not None and other_tensor.requires_grad)
        )
        self._check_inplace(ufunc_name + "_", records)
        recorder = _GraphRecorder.active
        if records:
            result = _apply(op, self._snapshot(), unwrap_operand(other))
            if recorder is not None:
                recorder.written(self, result)
            self._rebase(result)
        elif recorder is not None:  # (traced: the write is a primitive the graph replays)
            self._write(recorder, _apply(op, self, unwrap_operand(other)), ufunc_name + "_")
        else:
            xp = backend.array_module(self.array)
            try:
                getattr(xp, ufunc_name)(self.array, unwrap(other), out=self.array,
                                        casting="same_kind")
            except (TypeError, ValueError) as exc:
                raise RuntimeError(
                    f"{ufunc_name}_: cannot write the result into this tensor "
                    f"(shape {tuple(self.shape)}, dtype {self.dtype}): {exc}"
                ) from None
        self._version[0] += 1
        return self

    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        return self._inplace(_ops.ADD, other if alpha == 1 else other * alpha, "add")

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        return self._inplace(_ops.SUB, other if alpha == 1 else other * alpha, "subtract")

    def mul_(self, other: Any) -> Tensor:
        return self._inplace(_ops.MUL, other, "multiply")

    def div_(self, other: Any) -> Tensor:
        return self._inplace(_ops.DIV, other, "divide")

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def fill_(self, value: Any) -> Tensor:
        self[...] = value
        return self

    def copy_(self, src: Any) -> Tensor:
        """Copy ``src``'s values into this tensor (broadcasting, keeping this dtype)."""
        src_array = unwrap(src)
        if is_tensor(src) and src.device != self.device:
            src_array = backend.to_device(src.array, self.device)
            src = wrap(src_array, src.grad_fn) if src.requires_grad else src_array
        self[...] = src
        return self

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        self[...] = self.clamp(min, max)
        return self

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        from difflab import random

        # (a draw primitive, so that a traced graph draws anew at every run)
        self[...] = _apply(random.Normal, mean, std, shape=tuple(self.shape),
                           dtype=np.dtype(self.dtype), device=self.device,
                           generator=random._setting(generator))
        return self

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
        from difflab import random

        self[...] = _apply(random.Uniform, a, b, shape=tuple(self.shape),
                           dtype=np.dtype(self.dtype), device=self.device,
                           generator=random._setting(generator))
        return self
