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

:class:`~difflab.tensor.Tensor` inherits these methods.  Their docstrings share
one text of these rules for users (``_RETURNS``, ``_RAISES``, ``_NOTES``, added
by the ``_in_place`` decorator), which the in-place methods of the
``functions_*`` modules (``index_add_``, ...) use too.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from difflab import backend, tensor_views
from difflab.autograd.engine import GraphRecorder as _GraphRecorder
from difflab.autograd.engine import apply as _apply
from difflab.autograd.grad_mode import _State
from difflab.ops import registry as _ops
from difflab.ops import structural as _structural
from difflab.tensor_arguments import (
    fill_number,
    index_arrays,
    is_tensor,
    rounded_division,
    times_alpha,
    unwrap,
    unwrap_operand,
    wrap,
)

if TYPE_CHECKING:
    from difflab.tensor import Tensor

_Method = TypeVar("_Method", bound=Callable[..., Any])
_wrap_array = wrap  # (for fill_diagonal_, whose parameter ``wrap`` is PyTorch's name)

# ------------------------------------------------------------------ the docstrings
# What every in-place method returns, refuses and means for autograd is written once,
# here; :func:`_in_place` adds it to each method's own docstring (its summary,
# parameters and example), so the reference shows the whole contract on every page.
_RETURNS = """Tensor
    ``self``, holding the new values (so calls chain: ``x.mul_(2).add_(1)``)."""

_RAISES = """RuntimeError
    While gradients are recorded (outside ``no_grad()``): when ``self`` is a leaf
    that requires grad or a view of one (or, in a traced function, a view of a tensor
    that is part of a graph).  Always:
    when the new values do not fit ``self``'s shape (an in-place result cannot
    grow ``self``: ``x.add_(y)`` needs ``x + y`` of ``x``'s shape)."""

_NOTES = """In place: the new values are written into ``self``'s memory (a view of it
sees them too) and ``self``'s version counter goes up by one.  Autograd's rules
are PyTorch's:

* a leaf that requires grad refuses while gradients are recorded (its gradient
  would be lost): update it under ``with difflab.no_grad():``, as an optimizer's
  step does;
* any other tensor that is part of a graph takes the write as a new record, so
  gradients flow through it as through the out-of-place call, to ``self``'s old
  value and to the other tensor arguments;
* a write into a view is its base's write too (the base's old value with the
  view's elements replaced: PyTorch's ``CopySlices``), and the base's other views
  read the new value, so gradients through any of them reach the write; a view of
  a leaf that requires grad refuses, as the leaf does;
* a backward pass that needs a value saved before the write raises a RuntimeError
  (the version counter tells it), rather than giving a wrong gradient."""

_SECTIONS = ("Parameters", "Returns", "Raises", "See Also", "Notes", "Examples")
_HEADER = re.compile(rf"^({'|'.join(_SECTIONS)})\n-+\n", re.MULTILINE)


def _in_place(function: str | None = None, what: str = "the out-of-place function, "
              "with its derivative rule") -> Callable[[_Method], _Method]:
    """Complete an in-place method's docstring: its own text (summary, Parameters,
    Notes, Examples) plus the shared Returns, Raises and Notes above, and a See Also
    entry for ``difflab.<function>`` (what it writes into ``self``)."""
    def complete(method: _Method) -> _Method:
        parts = _HEADER.split(inspect.cleandoc(method.__doc__ or ""))
        head = parts[0].rstrip()
        sections = {title: body.strip() for title, body in zip(parts[1::2], parts[2::2])}
        sections["Returns"] = _RETURNS
        sections["Raises"] = "\n".join(filter(None, (sections.get("Raises"), _RAISES)))
        if function is not None:
            also = f"difflab.{function} : {what}."
            sections["See Also"] = "\n".join(filter(None, (also, sections.get("See Also"))))
        sections["Notes"] = "\n\n".join(filter(None, (sections.get("Notes"), _NOTES)))
        method.__doc__ = head + "".join(f"\n\n{title}\n{'-' * len(title)}\n{sections[title]}"
                                        for title in _SECTIONS if title in sections) + "\n"
        return method
    return complete


#: The distributions ``Tensor._draw_`` draws through a primitive of ``difflab.random``
#: (recorded, so that a traced graph draws anew), by their class there.
_DRAW_PRIMITIVES = {"normal": "Normal", "uniform": "Uniform"}


class InPlaceMethods:
    """In-place operations on tensors (mixed into :class:`~difflab.tensor.Tensor`)."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> None:
        self._set(index, value, "__setitem__")

    def _set(self, index: Any, value: Any, name: str) -> None:
        """``self[index] = value``, kept to the in-place rules; ``name`` is the operation
        an error names (``x.abs_()`` writes with ``self[...] = ...``)."""
        self._check_no_overlap(name)
        if index is Ellipsis:  # (the whole tensor: copy_, fill_, add_, ...)
            self._check_fits(value, name)
        index = index_arrays(index)
        value_tensor = value if is_tensor(value) else None
        records = _State.enabled and (
            self.requires_grad or (value_tensor is not None and value_tensor.requires_grad)
        )
        self._check_inplace(name, records)
        recorder = _GraphRecorder.active
        if records:
            old = self._snapshot()
            result = _apply(_structural.IndexPut, old, unwrap_operand(value), index=index)
            if recorder is not None:
                recorder.written(self, result)
            self._rebase(result)
        elif recorder is not None:  # (traced: the write is a primitive the graph replays)
            self._write(recorder, _apply(_structural.IndexPut, self, unwrap_operand(value),
                                         index=index), name)
        else:
            if backend.is_gpu_array(self.array):  # (CuPy would wrap an index out of range)
                _structural.check_on_device(index, self.array.shape)
            try:
                self.array[index] = unwrap(value)
            except ValueError as exc:  # (NumPy's words name neither the call nor the fix)
                if "broadcast" not in str(exc):  # (a value that is no number, ...)
                    raise ValueError(f"{name}: {exc}") from None
                raise RuntimeError(f"{name}: shape mismatch: {exc}; give a value whose shape "
                                   f"broadcasts to the indexed part's") from None
        self._version[0] += 1

    def _check_fits(self, value: Any, name: str) -> None:
        """The RuntimeError (PyTorch's, as the other in-place writes') of a write into the
        whole tensor whose ``value`` does not broadcast to ``self``'s shape (the tensor
        keeps its shape: an in-place result cannot grow)."""
        shape, target = tuple(np.shape(unwrap(value))), tuple(self.shape)
        try:
            fits = np.broadcast_shapes(shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"{name}: cannot write a value of shape {shape} into this tensor of shape "
                f"{target} (an in-place write keeps the shape); give one that broadcasts "
                f"to {target}")

    def _check_no_overlap(self, name: str) -> None:
        """PyTorch's RuntimeError for a write into memory that several elements share
        (``x.expand(3, 4)``: a step of 0 bytes along an axis), where NumPy's arrays
        are read-only and CuPy's would be written in a race."""
        strides = getattr(self.array, "strides", ())
        if 0 in strides and any(stride == 0 and n > 1
                                for n, stride in zip(self.array.shape, strides)):
            raise RuntimeError(
                f"{name}: unsupported operation: more than one element of the written-to "
                f"tensor refers to a single memory location (it was expanded or "
                f"broadcast). Please clone() the tensor before performing the operation.")

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
        base = self._base
        if base is not None and base.requires_grad and base.grad_fn is None:
            raise RuntimeError(
                f"a view of a leaf tensor that requires grad is being used in an in-place "
                f"operation ({name}): the leaf's gradient would be lost. Do the update "
                f"under 'with difflab.no_grad():', or clone() the view first."
            )
        if base is not None and tensor_views.writes_forbidden(self):
            raise RuntimeError(
                f"in-place operation {name} on a view made by a Function (a module with "
                f"backward hooks passes its inputs and outputs through one): the write "
                f"would bypass the Function's gradient. clone() it first, as PyTorch asks."
            )
        if base is not None and self.array.dtype != base.array.dtype:
            raise RuntimeError(
                f"in-place operation {name} on a view of another dtype (x.view(dtype)) "
                f"cannot be recorded: its bits are no differentiable function of the base's "
                f"values. Write under 'with difflab.no_grad():', or into a clone()."
            )
        if base is not None and base.requires_grad and _GraphRecorder.active is not None:
            raise RuntimeError(
                f"in-place operation {name} on a view of a tensor that is part of a graph is "
                f"not supported in a traced function: the graph records values, not memory. "
                f"Apply the operation to the base tensor (x[index] = ...) or clone() the "
                f"view first."
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
        """Make ``self`` hold ``result``'s values, in its own memory, and its tape record.

        The memory may be a view's, or have views: their records follow (a view's base
        takes the write into its own record, the views of ``self`` read it again), as
        :mod:`difflab.tensor_views` explains."""
        self.array[...] = result.array
        self.grad_fn = result.grad_fn
        self._requires_grad = True
        if _GraphRecorder.active is None:  # (a traced graph refuses a stale view instead)
            if self._base is not None:
                tensor_views.write_through(self, result)
            tensor_views.refresh(self)
        if self.grad_fn is not None and getattr(self.grad_fn, "saved_sources", None):
            # the record may have saved its output: that is now self's array
            self.grad_fn.saved = tuple(
                self.array if s is result.array else s for s in self.grad_fn.saved
            )
            self.grad_fn.saved_versions = [
                (self._version, self._version[0] + 1) if box is result._version else (box, v)
                for box, v in self.grad_fn.saved_versions
            ]

    def _inplace(self, op: Any, other: Any, ufunc_name: str, name: str) -> Tensor:
        self._check_no_overlap(name)
        other_tensor = other if is_tensor(other) else None
        records = _State.enabled and (
            self.requires_grad or (other_tensor is not None and other_tensor.requires_grad)
        )
        self._check_inplace(name, records)
        recorder = _GraphRecorder.active
        if records:
            result = _apply(op, self._snapshot(), unwrap_operand(other))
            self._check_fits(result, name)
            if recorder is not None:
                recorder.written(self, result)
            self._rebase(result)
        elif recorder is not None:  # (traced: the write is a primitive the graph replays)
            self._write(recorder, _apply(op, self, unwrap_operand(other)), name)
        else:
            xp = backend.array_module(self.array)
            try:
                getattr(xp, ufunc_name)(self.array, unwrap(other), out=self.array,
                                        casting="same_kind")
            except (TypeError, ValueError) as exc:
                raise RuntimeError(
                    f"{name}: cannot write the result into this tensor "
                    f"(shape {tuple(self.shape)}, dtype {self.dtype}): {exc}"
                ) from None
        self._version[0] += 1
        return self

    # ------------------------------------------------------------ arithmetic
    @_in_place("add")
    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        """In-place :func:`difflab.add`: writes ``self + alpha * other`` into ``self``.

        ``x += y`` is ``x.add_(y)``.  ``other`` broadcasts to ``self``'s shape (not the
        other way round: the result must fit ``self``), and the result keeps ``self``'s
        dtype.

        Parameters
        ----------
        other : Tensor or number
            The addend, broadcastable to ``self``'s shape.
        alpha : number, optional
            The scale of ``other`` (default 1).

        Raises
        ------
        RuntimeError
            When the result cannot be written into ``self``: ``other`` does not broadcast
            to ``self``'s shape, or the result's dtype does not cast to ``self``'s
            (a float added into an integer tensor).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0])
        >>> x.add_(dl.tensor([10.0, 20.0]), alpha=2).tolist()
        [21.0, 42.0]

        Gradients flow through the write (into a tensor that is not a leaf):

        >>> w = dl.tensor([3.0], requires_grad=True)
        >>> y = w * 1
        >>> y.add_(w, alpha=2).sum().backward()
        >>> w.grad.tolist()
        [3.0]
        """
        return self._inplace(_ops.ADD, times_alpha(other, alpha, self, "add_"), "add", "add_")

    @_in_place("sub")
    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        """In-place :func:`difflab.sub`: writes ``self - alpha * other`` into ``self``.

        ``x -= y`` is ``x.sub_(y)``.  ``other`` broadcasts to ``self``'s shape, and the
        result keeps ``self``'s dtype.

        Parameters
        ----------
        other : Tensor or number
            The subtrahend, broadcastable to ``self``'s shape.
        alpha : number, optional
            The scale of ``other`` (default 1).

        Raises
        ------
        RuntimeError
            When the result cannot be written into ``self`` (shape or dtype), as for
            :meth:`difflab.Tensor.add_`.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([5.0, 5.0])
        >>> x.sub_(dl.tensor([1.0, 2.0]), alpha=2).tolist()
        [3.0, 1.0]
        """
        return self._inplace(_ops.SUB, times_alpha(other, alpha, self, "sub_"), "subtract",
                             "sub_")

    @_in_place("mul")
    def mul_(self, other: Any) -> Tensor:
        """In-place :func:`difflab.mul`: writes ``self * other`` into ``self``.

        ``x *= y`` is ``x.mul_(y)``.  ``other`` broadcasts to ``self``'s shape, and the
        result keeps ``self``'s dtype.

        Parameters
        ----------
        other : Tensor or number
            The factor, broadcastable to ``self``'s shape.

        Raises
        ------
        RuntimeError
            When the result cannot be written into ``self`` (shape or dtype), as for
            :meth:`difflab.Tensor.add_`.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.ones(2, 2)
        >>> x.mul_(dl.tensor([2.0, 3.0])).tolist()
        [[2.0, 3.0], [2.0, 3.0]]

        A leaf that requires grad refuses while gradients are recorded:

        >>> p = dl.tensor([1.0], requires_grad=True)
        >>> p.mul_(2)
        Traceback (most recent call last):
            ...
        RuntimeError: a leaf tensor that requires grad is being used in an in-place ... (mul_)...
        >>> with dl.no_grad():
        ...     p.mul_(2).tolist()
        [2.0]
        """
        return self._inplace(_ops.MUL, other, "multiply", "mul_")

    @_in_place("div")
    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """In-place :func:`difflab.div`: writes ``self / other`` into ``self``.

        ``x /= y`` is ``x.div_(y)``: true division, so an integer tensor refuses (its
        quotients are floats; use ``x = x / y``, or a ``rounding_mode``, which keeps
        integers integers).

        Parameters
        ----------
        other : Tensor or number
            The divisor, broadcastable to ``self``'s shape.
        rounding_mode : {None, "trunc", "floor"}, optional
            None (the default): true division; ``"trunc"``: rounded towards zero;
            ``"floor"``: rounded down, as ``//`` (see :func:`difflab.div`).

        Raises
        ------
        RuntimeError
            When the result cannot be written into ``self`` (shape or dtype: an
            integer ``self`` without a ``rounding_mode``), as for
            :meth:`difflab.Tensor.add_`; for a ``rounding_mode`` other than these.
        ZeroDivisionError
            With a ``rounding_mode``, for an integer divisor that is 0 (the error
            is a RuntimeError too, as PyTorch's).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([3.0, 5.0]).div_(2).tolist()
        [1.5, 2.5]
        >>> dl.tensor([7, -7]).div_(2, rounding_mode="trunc").tolist()
        [3, -3]
        """
        if rounded_division(rounding_mode) is None:
            return self._inplace(_ops.DIV, other, "divide", "div_")
        # (no derivative: written in as floor_ writes its values)
        return self._replace_with_result(
            lambda x: x.div(other, rounding_mode=rounding_mode), "div_")

    divide_ = true_divide_ = div_  # (PyTorch's other names)

    @_in_place("floor_divide")
    def floor_divide_(self, other: Any) -> Tensor:
        """In-place :func:`difflab.floor_divide`: writes ``self // other`` into ``self``.

        ``x.div_(other, rounding_mode="floor")``: rounded down, no derivative.

        Parameters
        ----------
        other : Tensor or number
            The divisor, broadcastable to ``self``'s shape.

        Raises
        ------
        RuntimeError
            When the quotient's dtype is of a higher kind than ``self``'s (an integer
            tensor divided by a float), as PyTorch's.
        ZeroDivisionError
            For an integer divisor that is 0 (also a RuntimeError, as PyTorch's).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([7, -7]).floor_divide_(2).tolist()
        [3, -4]
        """
        return self.div_(other, rounding_mode="floor")

    @_in_place("remainder")
    def remainder_(self, other: Any) -> Tensor:
        """In-place :func:`difflab.remainder`: writes ``self % other`` into ``self``.

        Parameters
        ----------
        other : Tensor or number
            The divisor, broadcastable to ``self``'s shape.

        Raises
        ------
        RuntimeError
            When the result's dtype is of a higher kind than ``self``'s (an integer
            tensor and a float divisor), as PyTorch's.
        ZeroDivisionError
            For an integer divisor that is 0 (also a RuntimeError, as PyTorch's).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([7, -7]).remainder_(3).tolist()
        [1, 2]
        """
        return self._replace_with_result(lambda x: x.remainder(other), "remainder_")

    @_in_place("fmod")
    def fmod_(self, other: Any) -> Tensor:
        """In-place :func:`difflab.fmod`: writes C's remainder of ``self / other`` into it.

        Parameters
        ----------
        other : Tensor or number
            The divisor, broadcastable to ``self``'s shape.

        Raises
        ------
        RuntimeError
            When the result's dtype is of a higher kind than ``self``'s (an integer
            tensor and a float divisor), as PyTorch's.
        ZeroDivisionError
            For an integer divisor that is 0 (also a RuntimeError, as PyTorch's).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([7.5, -7.5]).fmod_(2).tolist()
        [1.5, -1.5]
        """
        return self._replace_with_result(lambda x: x.fmod(other), "fmod_")

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # ------------------------------------------------------- filling and copying
    @_in_place("zeros_like", "a new tensor of zeros")
    def zero_(self) -> Tensor:
        """Fill ``self`` with zeros, in place (``x.fill_(0)``).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.ones(2, 2)
        >>> x[0].zero_().tolist()
        [0.0, 0.0]
        >>> x.tolist()
        [[0.0, 0.0], [1.0, 1.0]]
        """
        return self._fill(0, "zero_")

    @_in_place("full", "a new tensor of one value")
    def fill_(self, value: Any) -> Tensor:
        """Fill ``self`` with one value, in place.

        Parameters
        ----------
        value : number or 0-d Tensor
            The value, cast to ``self``'s dtype.  A 0-d tensor that requires grad
            gets the sum of the gradient of every entry.

        Raises
        ------
        RuntimeError
            If ``value`` has dimensions (as in PyTorch): to write a tensor of values use
            :meth:`difflab.Tensor.copy_`.
        TypeError
            If ``value`` is not a number (None, a string).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(3).fill_(2.5).tolist()
        [2.5, 2.5, 2.5]
        >>> dl.zeros(2, dtype=dl.int64).fill_(7.9).tolist()
        [7, 7]
        """
        return self._fill(fill_number(value, "fill_"), "fill_")

    def _fill(self, value: Any, name: str) -> Tensor:
        self._set(Ellipsis, value, name)
        return self

    @_in_place()
    def copy_(self, src: Any) -> Tensor:
        """Copy ``src``'s values into ``self``, in place.

        ``src`` broadcasts to ``self``'s shape; ``self`` keeps its dtype and device.
        ``src`` may be on another device (it is moved) and of another dtype (its values
        are cast, as NumPy's ``astype``: floats to integers truncate).  The gradient
        reaches ``src`` through the copy (``self``'s old value gets none).

        Parameters
        ----------
        src : Tensor or array_like
            The values, broadcastable to ``self``'s shape.

        See Also
        --------
        difflab.Tensor.clone : a new tensor with the same values.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(2, 3)
        >>> x.copy_(dl.tensor([1.0, 2.0, 3.0])).tolist()
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
        >>> dl.zeros(2, dtype=dl.int64).copy_(dl.tensor([1.7, -2.7])).tolist()
        [1, -2]
        """
        src_array = unwrap(src)
        if is_tensor(src) and src.device != self.device:
            src_array = backend.to_device(src.array, self.device)
            src = wrap(src_array, src.grad_fn) if src.requires_grad else src_array
        self._set(Ellipsis, src, "copy_")
        return self

    # ------------------------------------------------ the math functions, in place
    # Each computes the new value out of place (recorded on the tape when x is part of a
    # graph) and writes it back with _set, which keeps the in-place rules above (leaf
    # check, snapshot, version counter) in one place.
    def _replace_with(self, compute: Any, name: str) -> Tensor:
        """Write ``compute(x)`` into ``x``; ``name`` is the method an error names.  While
        recording, ``compute`` reads a snapshot: its record may save its input (``abs``
        saves x), and the write replaces x."""
        if _State.enabled and self.requires_grad:
            self._check_inplace(name, True)  # (before computing: the error names the call)
            source = self._snapshot()
        else:
            source = self
        self._set(Ellipsis, compute(source), name)
        return self

    def _replace_with_result(self, compute: Any, name: str) -> Tensor:
        """:meth:`_replace_with`, refusing a result of a higher kind than ``self``'s dtype
        (a float into an integer tensor: PyTorch's "result type Float can't be cast to
        the desired output type Long"), which the write would truncate."""
        def checked(x: Tensor) -> Tensor:
            result = compute(x)
            if not np.can_cast(np.dtype(result.dtype), np.dtype(self.dtype), "same_kind"):
                raise RuntimeError(
                    f"{name}: result type {result.dtype} can't be cast to the desired "
                    f"output type {self.dtype}; use x = x.{name[:-1]}(...) for a new tensor")
            return result

        return self._replace_with(checked, name)

    @_in_place("clamp")
    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        """In-place :func:`difflab.clamp`: writes ``self`` limited to ``[min, max]``.

        Parameters
        ----------
        min, max : number or Tensor, optional
            The bounds (broadcastable to ``self``); at least one of them.

        Raises
        ------
        ValueError
            When neither bound is given.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([-2.0, 0.5, 3.0]).clamp_(-1.0, 1.0).tolist()
        [-1.0, 0.5, 1.0]
        >>> dl.tensor([-2.0, 3.0]).clamp_(min=0.0).tolist()
        [0.0, 3.0]
        """
        return self._replace_with(lambda x: x.clamp(min, max), "clamp_")

    @_in_place("abs")
    def abs_(self) -> Tensor:
        """In-place :func:`difflab.abs`: writes ``|self|`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([-1.0, 2.0])
        >>> x.abs_().tolist()
        [1.0, 2.0]
        """
        return self._replace_with(lambda x: x.abs(), "abs_")

    @_in_place("neg")
    def neg_(self) -> Tensor:
        """In-place :func:`difflab.neg`: writes ``-self`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0, -2.0]).neg_().tolist()
        [-1.0, 2.0]
        """
        return self._replace_with(lambda x: -x, "neg_")

    @_in_place("exp")
    def exp_(self) -> Tensor:
        """In-place :func:`difflab.exp`: writes ``exp(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).exp_().tolist()
        [1.0]

        The gradient is the out-of-place one, :math:`e^x`:

        >>> x = dl.tensor([0.0, 1.0], dtype=dl.float64, requires_grad=True)
        >>> y = x * 1
        >>> y.exp_().sum().backward()
        >>> x.grad.numpy().round(4).tolist()
        [1.0, 2.7183]
        """
        return self._replace_with(lambda x: x.exp(), "exp_")

    @_in_place("log")
    def log_(self) -> Tensor:
        """In-place :func:`difflab.log`: writes ``log(self)`` (natural) into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0]).log_().tolist()
        [0.0]
        """
        return self._replace_with(lambda x: x.log(), "log_")

    @_in_place("lgamma")
    def lgamma_(self) -> Tensor:
        """In-place :func:`difflab.lgamma`: writes ``log|Γ(self)|`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0, 3.0], dtype=dl.float64).lgamma_().numpy().round(6).tolist()
        [0.0, 0.693147]
        """
        return self._replace_with(lambda x: x.lgamma(), "lgamma_")

    @_in_place("digamma")
    def digamma_(self) -> Tensor:
        """In-place :func:`difflab.digamma`: writes ``ψ(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0], dtype=dl.float64).digamma_().numpy().round(6).tolist()
        [-0.577216]
        """
        return self._replace_with(lambda x: x.digamma(), "digamma_")

    @_in_place("polygamma")
    def polygamma_(self, n: int) -> Tensor:
        """In-place :func:`difflab.polygamma`: writes ``ψ⁽ⁿ⁾(self)`` into ``self``.

        Parameters
        ----------
        n : int
            The order: the n-th derivative of the digamma function (0 is digamma).

        Raises
        ------
        ValueError
            When ``n`` is negative.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0], dtype=dl.float64).polygamma_(1).numpy().round(6).tolist()
        [1.644934]
        """
        return self._replace_with(lambda x: x.polygamma(n), "polygamma_")

    @_in_place("erfc")
    def erfc_(self) -> Tensor:
        """In-place :func:`difflab.erfc`: writes ``1 - erf(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).erfc_().tolist()
        [1.0]
        """
        return self._replace_with(lambda x: x.erfc(), "erfc_")

    @_in_place("erfinv")
    def erfinv_(self) -> Tensor:
        """In-place :func:`difflab.erfinv`: writes ``erf⁻¹(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).erfinv_().tolist()
        [0.0]
        """
        return self._replace_with(lambda x: x.erfinv(), "erfinv_")

    @_in_place("sqrt")
    def sqrt_(self) -> Tensor:
        """In-place :func:`difflab.sqrt`: writes ``√self`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([4.0, 9.0]).sqrt_().tolist()
        [2.0, 3.0]
        """
        return self._replace_with(lambda x: x.sqrt(), "sqrt_")

    @_in_place("pow")
    def pow_(self, exponent: Any) -> Tensor:
        """In-place :func:`difflab.pow`: writes ``self ** exponent`` into ``self``.

        Parameters
        ----------
        exponent : number or Tensor
            The power, broadcastable to ``self``'s shape.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([2.0, 3.0]).pow_(2).tolist()
        [4.0, 9.0]
        """
        return self._replace_with(lambda x: x ** exponent, "pow_")

    @_in_place("sigmoid")
    def sigmoid_(self) -> Tensor:
        """In-place :func:`difflab.sigmoid`: writes ``1 / (1 + exp(-self))`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).sigmoid_().tolist()
        [0.5]
        """
        return self._replace_with(lambda x: x.sigmoid(), "sigmoid_")

    @_in_place("tanh")
    def tanh_(self) -> Tensor:
        """In-place :func:`difflab.tanh`: writes ``tanh(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).tanh_().tolist()
        [0.0]
        """
        return self._replace_with(lambda x: x.tanh(), "tanh_")

    @_in_place("relu")
    def relu_(self) -> Tensor:
        """In-place :func:`difflab.relu`: writes ``max(self, 0)`` into ``self``.

        What ``nn.ReLU(inplace=True)`` does.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([-1.0, 2.0]).relu_().tolist()
        [0.0, 2.0]
        """
        return self._replace_with(lambda x: x.relu(), "relu_")

    @_in_place("floor")
    def floor_(self) -> Tensor:
        """In-place :func:`difflab.floor`: writes ``⌊self⌋`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.7, -1.2]).floor_().tolist()
        [1.0, -2.0]
        """
        return self._replace_with(lambda x: x.floor(), "floor_")

    @_in_place("round")
    def round_(self, decimals: int = 0) -> Tensor:
        """In-place :func:`difflab.round`: writes ``self`` rounded to ``decimals`` places.

        Halves round to even, as PyTorch.

        Parameters
        ----------
        decimals : int, optional
            The number of decimal places (default 0; negative rounds to tens,
            hundreds, ...).  As PyTorch: ``round(x · 10^d) / 10^d``, so a result
            need not be the nearest float to the decimal.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.5, 1.5, 2.25]).round_().tolist()
        [0.0, 2.0, 2.0]
        >>> dl.tensor([1.25, 1234.0], dtype=dl.float64).round_(-2).tolist()
        [0.0, 1200.0]
        """
        return self._replace_with(lambda x: x.round(decimals=decimals), "round_")

    @_in_place("log10")
    def log10_(self) -> Tensor:
        """In-place :func:`difflab.log10`: writes ``log₁₀(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([100.0], dtype=dl.float64).log10_().tolist()
        [2.0]
        """
        return self._replace_with(lambda x: x.log10(), "log10_")

    @_in_place("log2")
    def log2_(self) -> Tensor:
        """In-place :func:`difflab.log2`: writes ``log₂(self)`` into ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([8.0]).log2_().tolist()
        [3.0]
        """
        return self._replace_with(lambda x: x.log2(), "log2_")

    @_in_place("tril")
    def tril_(self, diagonal: int = 0) -> Tensor:
        """In-place :func:`difflab.tril`: zeros the entries above a diagonal of ``self``.

        Parameters
        ----------
        diagonal : int, optional
            Which diagonal is the last one kept: 0 the main one, 1 the one above it,
            -1 the one below (default 0).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.ones(2, 2).tril_().tolist()
        [[1.0, 0.0], [1.0, 1.0]]
        >>> dl.ones(2, 3).tril_(1).tolist()
        [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
        """
        return self._replace_with(lambda x: x.tril(diagonal), "tril_")

    @_in_place("triu")
    def triu_(self, diagonal: int = 0) -> Tensor:
        """In-place :func:`difflab.triu`: zeros the entries below a diagonal of ``self``.

        Parameters
        ----------
        diagonal : int, optional
            Which diagonal is the first one kept: 0 the main one, 1 the one above it,
            -1 the one below (default 0).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.ones(2, 2).triu_().tolist()
        [[1.0, 1.0], [0.0, 1.0]]
        >>> dl.ones(3, 2).triu_(-1).tolist()
        [[1.0, 1.0], [1.0, 1.0], [0.0, 1.0]]
        """
        return self._replace_with(lambda x: x.triu(diagonal), "triu_")

    # ------------------------------------------------------- in-place random draws
    # Fresh values from a generator: nothing to differentiate (the gradient to the old
    # values is zero).  ``normal_`` and ``uniform_`` are draw primitives, so that a traced
    # graph draws anew at every run; the others draw with NumPy's sampler of that name.
    def _floating(self, name: str) -> None:
        """Continuous draws fill only floating tensors (PyTorch's rule: rounding them
        to integers would give another distribution, silently)."""
        if not self.dtype.is_floating_point:
            raise TypeError(
                f"{name} draws real numbers, so it fills a floating-point tensor, not one of "
                f"{self.dtype}; make the tensor with dtype=difflab.float32 (or x.float())")

    @_in_place("normal", "a new tensor of normal draws")
    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        r"""Fill ``self`` with draws from the normal distribution :math:`N(\mu, \sigma^2)`.

        Parameters
        ----------
        mean : float, optional
            The mean :math:`\mu` (default 0).
        std : float, optional
            The standard deviation :math:`\sigma \ge 0` (default 1).
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        TypeError
            When ``self`` is not a floating-point tensor.
        ValueError
            When ``std`` is negative or nan.

        See Also
        --------
        difflab.nn.init.normal_ : the same, as a weight initializer.

        Notes
        -----
        The density, for every entry independently:

        .. math:: p(x) = \frac{1}{\sigma\sqrt{2\pi}}
                  \exp\!\left(-\frac{(x - \mu)^2}{2\sigma^2}\right)

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(3, dtype=dl.float64).normal_(10.0, 0.1).numpy().round(2).tolist()
        [10.01, 9.99, 10.06]
        >>> x = dl.empty(10_000).normal_(generator=dl.Generator().manual_seed(1))
        >>> abs(x.mean().item()) < 0.05, round(x.std().item(), 1)
        (True, 1.0)
        """
        self._floating("normal_")
        return self._draw_("normal_", "normal", mean, std, generator=generator)

    @_in_place("rand", "a new tensor of uniform draws in [0, 1)")
    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
        r"""Fill ``self`` with draws from the uniform distribution on :math:`[a, b)`.

        Parameters
        ----------
        a : float, optional
            The lower bound (default 0), included.
        b : float, optional
            The upper bound (default 1), excluded; at least ``a``.
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        TypeError
            When ``self`` is not a floating-point tensor.
        ValueError
            When ``b < a``, or a bound is not finite.

        See Also
        --------
        difflab.nn.init.uniform_ : the same, as a weight initializer.

        Notes
        -----
        The density, for every entry independently:

        .. math:: p(x) = \frac{1}{b - a} \quad \text{for } a \le x < b

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(3, dtype=dl.float64).uniform_(-1.0, 1.0).numpy().round(3).tolist()
        [0.274, -0.46, -0.918]
        """
        self._floating("uniform_")
        return self._draw_("uniform_", "uniform", a, b, generator=generator)

    def _draw_(self, name: str, distribution: str, *params: float,
               generator: Any = None) -> Tensor:
        """Fill self with draws of ``distribution`` (``name``: the method, for errors):
        ``normal`` and ``uniform`` through their draw primitives (``random.Normal``,
        ``random.Uniform``: a traced graph draws anew at every run), the others with
        NumPy's sampler of that name (``random.draw_array``)."""
        from difflab import random

        primitive = _DRAW_PRIMITIVES.get(distribution)
        if primitive is None:
            values = random.draw_array(distribution, *params, shape=tuple(self.shape),
                                       dtype=self.dtype, device=self.device, generator=generator)
        else:
            values = _apply(getattr(random, primitive), *params, shape=tuple(self.shape),
                            dtype=np.dtype(self.dtype), device=self.device,
                            generator=random._setting(generator))
        self._fill(values, name)
        return self

    @_in_place()
    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        r"""Fill ``self`` with draws from the exponential distribution of rate ``lambd``.

        The waiting time of a process with ``lambd`` events per unit of time: mean
        :math:`1/\lambda`, variance :math:`1/\lambda^2`.

        Parameters
        ----------
        lambd : float, optional
            The rate :math:`\lambda > 0` (default 1).
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        TypeError
            When ``self`` is not a floating-point tensor.
        ValueError
            When ``lambd`` is not positive.

        Notes
        -----
        The density, for every entry independently:

        .. math:: p(x) = \lambda e^{-\lambda x} \quad \text{for } x \ge 0

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(3, dtype=dl.float64).exponential_(2.0).numpy().round(2).tolist()
        [0.34, 0.51, 0.01]
        >>> round(dl.empty(10_000).exponential_(4.0).mean().item(), 2)
        0.25
        """
        self._floating("exponential_")
        if lambd <= 0:
            raise ValueError(f"exponential_ expects a positive rate lambd, got {lambd}")
        return self._draw_("exponential_", "exponential", 1.0 / lambd, generator=generator)

    @_in_place()
    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        r"""Fill ``self`` with geometric draws: the trials up to the first success.

        Each entry counts Bernoulli(p) trials up to and including the first
        success (1, 2, ...).  Mean :math:`1/p`.  An integer ``self`` holds the counts exactly.

        Parameters
        ----------
        p : float
            The probability of success of each trial, in :math:`(0, 1]`.
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        ValueError
            When ``p`` is not in :math:`(0, 1]`.

        Notes
        -----
        The probability of each value, for every entry independently:

        .. math:: P(k) = (1 - p)^{k - 1}\, p \quad \text{for } k = 1, 2, \dots

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(6, dtype=dl.int64).geometric_(0.5).tolist()
        [2, 1, 1, 1, 3, 4]
        >>> dl.empty(3).geometric_(1.0).tolist()
        [1.0, 1.0, 1.0]
        """
        if not 0 < p <= 1:
            raise ValueError(f"geometric_ expects a probability p in (0, 1], got {p}")
        return self._draw_("geometric_", "geometric", p, generator=generator)

    @_in_place()
    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *,
                generator: Any = None) -> Tensor:
        r"""Fill ``self`` with Cauchy draws of median ``median`` and scale ``sigma``.

        Heavy tails: it has no mean and no variance (the sample mean of n draws is
        as spread as one draw), which is why it tests robust estimators.

        Parameters
        ----------
        median : float, optional
            The median :math:`m` (default 0).
        sigma : float, optional
            The scale :math:`\sigma > 0`, half the interquartile range (default 1).
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        TypeError
            When ``self`` is not a floating-point tensor.
        ValueError
            When ``sigma`` is not positive.

        Notes
        -----
        The density, for every entry independently:

        .. math:: p(x) = \frac{1}{\pi\sigma\left(1 + \left(\frac{x - m}{\sigma}\right)^2\right)}

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(3, dtype=dl.float64).cauchy_(5.0, 0.5).numpy().round(3).tolist()
        [4.524, 8.053, 4.259]
        """
        from difflab.random import draw_array

        self._floating("cauchy_")
        if not sigma > 0:
            raise ValueError(f"cauchy_ expects a positive scale sigma, got {sigma}")
        draws = draw_array("standard_cauchy", shape=tuple(self.shape), dtype="float64",
                           device=self.device, generator=generator)
        return self._fill(draws * sigma + median, "cauchy_")

    @_in_place()
    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *,
                    generator: Any = None) -> Tensor:
        r"""Fill ``self`` with log-normal draws: :math:`e^Y`, :math:`Y \sim N(\mu, \sigma^2)`.

        ``mean`` and ``std`` are those of the logarithm :math:`Y`, not of the draws
        (whose mean is :math:`e^{\mu + \sigma^2/2}`); the defaults are PyTorch's.

        Parameters
        ----------
        mean : float, optional
            The mean :math:`\mu` of the logarithm (default 1).
        std : float, optional
            The standard deviation :math:`\sigma \ge 0` of the logarithm (default 2).
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        TypeError
            When ``self`` is not a floating-point tensor.
        ValueError
            When ``std`` is negative.

        Notes
        -----
        The density, for every entry independently:

        .. math:: p(x) = \frac{1}{x\sigma\sqrt{2\pi}}
                  \exp\!\left(-\frac{(\ln x - \mu)^2}{2\sigma^2}\right) \quad
                  \text{for } x > 0

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> x = dl.empty(3, dtype=dl.float64).log_normal_(0.0, 0.25)
        >>> x.numpy().round(3).tolist()
        [1.032, 0.968, 1.174]
        >>> x.log().numpy().round(3).tolist()
        [0.031, -0.033, 0.16]
        """
        self._floating("log_normal_")
        if std < 0:
            raise ValueError(f"log_normal_ expects a standard deviation std >= 0, got {std}")
        return self._draw_("log_normal_", "lognormal", mean, std, generator=generator)

    @_in_place("bernoulli", "draws with a probability per entry")
    def bernoulli_(self, p: float = 0.5, *, generator: Any = None) -> Tensor:
        r"""Fill ``self`` with 1 with probability ``p``, else 0 (Bernoulli draws).

        Parameters
        ----------
        p : float, optional
            The probability of a 1, in :math:`[0, 1]` (default 0.5).
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        ValueError
            When ``p`` is not in :math:`[0, 1]`.

        Notes
        -----
        The probability of each value, for every entry independently:

        .. math:: P(1) = p, \qquad P(0) = 1 - p

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(6).bernoulli_(0.3).tolist()
        [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
        >>> dl.empty(2, dtype=dl.bool).bernoulli_(1.0).tolist()
        [True, True]
        """
        if not 0 <= p <= 1:
            raise ValueError(f"bernoulli_ expects a probability p in [0, 1], got {p}")
        from difflab.random import uniform_array

        draws = uniform_array(0.0, 1.0, tuple(self.shape), "float64", self.device, generator)
        return self._fill(draws < p, "bernoulli_")

    @_in_place("randint", "a new tensor of integers drawn uniformly")
    def random_(self, from_: int = 0, to: int | None = None, *, generator: Any = None) -> Tensor:
        r"""Fill ``self`` with integers drawn uniformly from ``[from_, to)``.

        As PyTorch: ``x.random_(to)``, one argument, draws from ``[0, to)``;
        ``x.random_()`` from 0 up to the largest integer the dtype holds exactly
        (:math:`2^{p}` for a float of ``p`` significand bits, so :math:`2^{24}` for
        float32; the largest value for an integer dtype; 0 or 1 for bool).

        Parameters
        ----------
        from_ : int, optional
            The smallest value (default 0); alone, the bound ``to``.
        to : int, optional
            One past the largest value.
        generator : difflab.Generator, optional
            The generator to draw from (default: the global one, which
            ``difflab.manual_seed`` seeds).

        Raises
        ------
        ValueError
            When the range is empty (``to <= from_``).

        Notes
        -----
        The probability of each value, for every entry independently:

        .. math:: P(k) = \frac{1}{\text{to} - \text{from\_}} \quad
                  \text{for } k = \text{from\_}, \dots, \text{to} - 1

        Examples
        --------
        >>> import difflab as dl
        >>> _ = dl.manual_seed(0)
        >>> dl.empty(6, dtype=dl.int64).random_(3, 6).tolist()
        [5, 4, 4, 3, 3, 3]
        >>> x = dl.empty(100).random_(2)
        >>> sorted(set(x.tolist()))
        [0.0, 1.0]
        """
        from difflab.random import integers_array

        if to is None and from_ != 0:  # (PyTorch's one-argument form: random_(to))
            from_, to = 0, from_
        if to is None:
            if self.dtype.is_floating_point:
                to = 2 ** (np.finfo(self.dtype.dtype).nmant + 1)
            elif self.dtype.kind == "b":
                to = 2
            else:
                to = int(np.iinfo(self.dtype.dtype).max)
        if to <= from_:
            raise ValueError(f"random_ expects from_ < to, got [{from_}, {to})")
        return self._fill(integers_array(from_, to, tuple(self.shape), self.dtype, self.device,
                                         generator), "random_")


# ------------------------------------------ the rest of the math, in place, from a table
# PyTorch has an in-place twin ``x.f_(...)`` of most of its math methods.  Each is the one
# mechanism above: compute ``x.f(...)`` out of place (recorded when x is part of a graph)
# and write it back (``_replace_with_result``: refusing a float result in an integer
# tensor, as PyTorch does).  The table names the out-of-place method, its arguments as
# PyTorch spells them, and the example the docstring runs.
_MATH_IN_PLACE: dict[str, tuple[str, str, str, str]] = {
    # name: (the out-of-place method, its arguments, the example's self, its arguments)
    **{f"{f}_": (f, "", "[0.25, 0.5]", "") for f in (
        "sin cos tan asin acos atan sinh cosh asinh atanh erf expm1 log1p exp2 rsqrt "
        "reciprocal square sign sgn trunc frac ceil i0 sinc deg2rad rad2deg").split()},
    "acosh_": ("acosh", "", "[1.5, 2.0]", ""),
    "logical_not_": ("logical_not", "", "[0.0, 0.5]", ""),
    "bitwise_not_": ("bitwise_not", "", "[6, 3]", ""),
    "logit_": ("logit", "eps=None", "[0.25, 0.5]", ""),
    **{f"{f}_": (f, "other", "[0.25, 0.5]", "dl.tensor([0.5, 0.5])") for f in (
        "atan2 hypot xlogy eq ne lt le gt ge logical_and logical_or logical_xor heaviside "
        "copysign nextafter").split()},
    **{f"{f}_": (f, "other", "[6, 3]", "dl.tensor([3, 5])") for f in (
        "bitwise_and bitwise_or bitwise_xor gcd lcm").split()},
    "ldexp_": ("ldexp", "other", "[0.25, 0.5]", "dl.tensor([2, 3])"),
    "clamp_min_": ("clamp_min", "min", "[0.25, 0.5]", "0.3"),
    "clamp_max_": ("clamp_max", "max", "[0.25, 0.5]", "0.3"),
    "addcmul_": ("addcmul", "tensor1, tensor2, *, value=1", "[0.25, 0.5]",
                 "dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]), value=0.5"),
    "addcdiv_": ("addcdiv", "tensor1, tensor2, *, value=1", "[0.25, 0.5]",
                 "dl.tensor([1.0, 2.0]), dl.tensor([4.0, 8.0]), value=-2"),
    "lerp_": ("lerp", "end, weight", "[0.25, 0.5]", "dl.tensor([1.0, 1.0]), 0.25"),
    "cumsum_": ("cumsum", "dim, *, dtype=None", "[0.25, 0.5]", "0"),
    "cumprod_": ("cumprod", "dim, *, dtype=None", "[0.25, 0.5]", "0"),
    "nan_to_num_": ("nan_to_num", "nan=0.0, posinf=None, neginf=None", "[0.25, float('nan')]",
                    "nan=2.0"),
    "renorm_": ("renorm", "p, dim, maxnorm", "[[3.0, 4.0], [0.3, 0.4]]", "2, 0, 1.0"),
    "addmm_": ("addmm", "mat1, mat2, *, beta=1, alpha=1", "[[0.25, 0.5]]",
               "dl.ones(1, 3), dl.ones(3, 2), alpha=0.5"),
    "addmv_": ("addmv", "mat, vec, *, beta=1, alpha=1", "[0.25, 0.5]",
               "dl.ones(2, 3), dl.ones(3), beta=2"),
    "addr_": ("addr", "vec1, vec2, *, beta=1, alpha=1", "[[0.25, 0.5]]",
              "dl.ones(1), dl.ones(2), alpha=2"),
    "baddbmm_": ("baddbmm", "batch1, batch2, *, beta=1, alpha=1", "[[[0.25, 0.5]]]",
                 "dl.ones(1, 1, 3), dl.ones(1, 3, 2)"),
    "addbmm_": ("addbmm", "batch1, batch2, *, beta=1, alpha=1", "[[0.25, 0.5]]",
                "dl.ones(2, 1, 3), dl.ones(2, 3, 2)"),
}

#: Another name of an in-place method (``x.arccos_()`` is ``x.acos_()``), as PyTorch has.
_IN_PLACE_ALIASES = {
    "arcsin_": "asin_", "arccos_": "acos_", "arctan_": "atan_", "arcsinh_": "asinh_",
    "arccosh_": "acosh_", "arctanh_": "atanh_", "arctan2_": "atan2_", "fix_": "trunc_",
    "absolute_": "abs_", "negative_": "neg_", "multiply_": "mul_", "subtract_": "sub_",
    "clip_": "clamp_", "greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_",
    "less_equal_": "le_", "not_equal_": "ne_",
}


def _math_in_place(name: str, function: str, arguments: str, example: str,
                   example_arguments: str) -> Callable[..., Tensor]:
    """The method ``name``: ``x.<function>(...)`` written into ``x`` (see the table)."""
    if arguments:
        def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
            return self._replace_with_result(lambda x: getattr(x, function)(*args, **kwargs),
                                             name)
        parameters = (f"\n\nParameters\n----------\n{arguments}\n    As "
                      f":meth:`difflab.Tensor.{function}` takes them.")
    else:
        def method(self: Tensor) -> Tensor:
            return self._replace_with_result(lambda x: getattr(x, function)(), name)
        parameters = ""
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"In-place :meth:`difflab.Tensor.{function}`: writes ``self.{function}(...)`` into "
        f"``self``.{parameters}\n\nExamples\n--------\n>>> import difflab as dl\n"
        f">>> x = dl.tensor({example})\n>>> new = x.{function}({example_arguments})\n"
        f">>> x.{name}({example_arguments}) is x, x.tolist() == new.tolist()\n(True, True)\n")
    return _in_place(f"Tensor.{function}")(method)


for _name, _entry in _MATH_IN_PLACE.items():
    setattr(InPlaceMethods, _name, _math_in_place(_name, *_entry))
for _name, _same in _IN_PLACE_ALIASES.items():
    setattr(InPlaceMethods, _name, getattr(InPlaceMethods, _same))


# --------------------------------------------- in place, changing the shape or a diagonal
def _view_in_place(self: Tensor, compute: Callable[[Tensor], Tensor], name: str) -> Tensor:
    """Make ``self`` the view ``compute(self)``: the same memory in a new shape, as PyTorch
    changes a tensor's view in place (``x.unsqueeze_(0)``).  While recording, ``self``
    takes the view's record, so gradients flow back through the reshaping."""
    records = _State.enabled and self.requires_grad
    self._check_inplace(name, records)
    if _GraphRecorder.active is not None:  # (a graph line keeps its shape)
        raise RuntimeError(f"{name}: a traced or compiled function may not change a tensor's "
                           f"shape in place; write x = x.{name[:-1]}(...) instead")
    result = compute(self)
    self.array = result.array
    if records:
        self.grad_fn = result.grad_fn
    self._version[0] += 1
    return self


@_in_place("Tensor.squeeze", "the same reshaping, as a new view")
def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """In-place :meth:`difflab.Tensor.squeeze`: drop dimensions of length 1 from ``self``'s shape.

    Parameters
    ----------
    dim : int or tuple of int, optional
        Only these dimensions (each dropped if its length is 1); default: all of length 1.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(1, 3, 1)
    >>> x.squeeze_() is x, x.shape
    (True, difflab.Size([3]))
    """
    return _view_in_place(self, lambda x: x.squeeze() if dim is None else x.squeeze(dim),
                          "squeeze_")


@_in_place("Tensor.unsqueeze", "the same reshaping, as a new view")
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In-place :meth:`difflab.Tensor.unsqueeze`: insert a dimension of length 1 at ``dim``.

    Parameters
    ----------
    dim : int
        Where the new dimension goes.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(2, 3)
    >>> x.unsqueeze_(0).shape
    difflab.Size([1, 2, 3])
    """
    return _view_in_place(self, lambda x: x.unsqueeze(dim), "unsqueeze_")


@_in_place("Tensor.transpose", "the same reshaping, as a new view")
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place :meth:`difflab.Tensor.transpose`: swap two dimensions of ``self`` (``swapaxes_``).

    Parameters
    ----------
    dim0, dim1 : int
        The dimensions swapped.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(6.0).reshape(2, 3)
    >>> x.transpose_(0, 1)
    tensor([[0., 3.],
            [1., 4.],
            [2., 5.]])
    """
    return _view_in_place(self, lambda x: x.transpose(dim0, dim1), "transpose_")


@_in_place("Tensor.t", "the same reshaping, as a new view")
def t_(self: Tensor) -> Tensor:
    """In-place :meth:`difflab.Tensor.t`: transpose a matrix (0-D and 1-D tensors stay).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(2, 3)
    >>> x.t_().shape
    difflab.Size([3, 2])
    """
    return _view_in_place(self, lambda x: x.t(), "t_")


@_in_place("Tensor.reshape", "a new shape for the same number of elements")
def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``sizes``, keeping its first elements in row-major order.

    The same number of elements: a reshape; fewer: the first ones; more: the old ones
    followed by new memory (PyTorch leaves it uninitialised; difflab fills zeros).  As
    in PyTorch, a tensor that requires grad refuses (its history would not fit).

    Parameters
    ----------
    *sizes : int or sequence of int
        The new shape.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(6.0)
    >>> x.resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    >>> x.resize_(3, 2)
    tensor([[0., 1.],
            [2., 3.],
            [0., 0.]])
    """
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad; resize a detached "
                           "copy (x.detach().clone().resize_(...)) or use x.reshape")
    if _GraphRecorder.active is not None:
        raise RuntimeError("resize_: a traced or compiled function may not resize a tensor")
    xp = backend.array_module(self.array)
    flat, count = self.array.reshape(-1), int(np.prod(shape, dtype=np.int64))
    if count > flat.size:  # (new memory, as PyTorch reallocates)
        grown = xp.zeros(count, dtype=self.array.dtype)
        grown[:flat.size] = flat
        flat = grown
    self.array = flat[:count].reshape(shape)
    self._version[0] += 1
    return self


@_in_place("Tensor.reshape_as", "another tensor's shape, the same number of elements")
def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """:meth:`difflab.Tensor.resize_` to ``the_template``'s shape.

    Parameters
    ----------
    the_template : Tensor
        Whose shape to take.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.arange(4.0).resize_as_(dl.zeros(2, 2)).shape
    difflab.Size([2, 2])
    """
    return self.resize_(tuple(the_template.shape))


@_in_place("Tensor.masked_fill", "the out-of-place write of one value where a mask holds")
def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal of ``self`` (NumPy's ``fill_diagonal``).

    A 2-D tensor's diagonal ``x[i, i]``; more dimensions, all of one length:
    ``x[i, i, ..., i]``.  With ``wrap``, a tall matrix's diagonal starts again below
    (every ``columns + 1``-th element of the flattened tensor).  The diagonal's old
    values get no gradient.

    Parameters
    ----------
    fill_value : number
        The value.
    wrap : bool, optional
        For a tall matrix: continue the diagonal below the square part.

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, or more than 2 of unequal lengths.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.zeros(2, 3).fill_diagonal_(5.0)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    if self.ndim < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    mask = np.zeros(tuple(self.shape), dtype=bool)
    try:
        np.fill_diagonal(mask, True, wrap=wrap)
    except ValueError:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal "
                           "length") from None
    where = backend.to_device(mask, backend.device_of(self.array))
    return self._replace_with(lambda x: x.masked_fill(_wrap_array(where), fill_value),
                              "fill_diagonal_")


@_in_place("float_power")
def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place :func:`difflab.float_power`: ``self ** exponent`` in double precision.

    ``self`` must be float64 (or complex128): PyTorch refuses to round the double result
    into a narrower tensor, and so does this.

    Parameters
    ----------
    exponent : Tensor or number
        The exponents.

    Raises
    ------
    RuntimeError
        When ``self`` is not float64 or complex128.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([2.0, 3.0], dtype=dl.float64).float_power_(2)
    tensor([4., 9.], dtype=difflab.float64)
    """
    if str(self.dtype) not in ("difflab.float64", "difflab.complex128"):
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype} but the "
                           f"operation's result requires dtype difflab.float64")
    return self._replace_with(lambda x: x.float_power(exponent), "float_power_")


for _method in (squeeze_, unsqueeze_, transpose_, t_, resize_, resize_as_, fill_diagonal_,
                float_power_):
    setattr(InPlaceMethods, _method.__name__, _method)
InPlaceMethods.swapaxes_ = InPlaceMethods.swapdims_ = transpose_
