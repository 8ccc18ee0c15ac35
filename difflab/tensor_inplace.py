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
        return self._replace_with(lambda x: x.clamp(min, max))

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

    # ------------------------------------------------ the math functions, in place
    # Each computes the new value out of place (recorded on the tape when x is part of a
    # graph) and writes it back with __setitem__, which keeps the in-place rules above
    # (leaf check, snapshot, version counter) in one place.
    def _replace_with(self, compute: Any) -> Tensor:
        """Write ``compute(x)`` into ``x``.  While recording, ``compute`` reads a snapshot:
        its record may save its input (``abs`` saves x), and the write replaces x."""
        source = self._snapshot() if (_State.enabled and self.requires_grad) else self
        self[...] = compute(source)
        return self

    def abs_(self) -> Tensor:
        """``x.abs()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([-1.0, 2.0])
        >>> x.abs_().tolist()
        [1.0, 2.0]
        """
        return self._replace_with(lambda x: x.abs())

    def neg_(self) -> Tensor:
        """``-x`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0, -2.0]).neg_().tolist()
        [-1.0, 2.0]
        """
        return self._replace_with(lambda x: -x)

    def exp_(self) -> Tensor:
        """``x.exp()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).exp_().tolist()
        [1.0]
        """
        return self._replace_with(lambda x: x.exp())

    def log_(self) -> Tensor:
        """``x.log()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0]).log_().tolist()
        [0.0]
        """
        return self._replace_with(lambda x: x.log())

    def lgamma_(self) -> Tensor:
        """``x.lgamma()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0, 3.0], dtype=dl.float64).lgamma_().numpy().round(6).tolist()
        [0.0, 0.693147]
        """
        return self._replace_with(lambda x: x.lgamma())

    def digamma_(self) -> Tensor:
        """``x.digamma()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0], dtype=dl.float64).digamma_().numpy().round(6).tolist()
        [-0.577216]
        """
        return self._replace_with(lambda x: x.digamma())

    def polygamma_(self, n: int) -> Tensor:
        """``x.polygamma(n)`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0], dtype=dl.float64).polygamma_(1).numpy().round(6).tolist()
        [1.644934]
        """
        return self._replace_with(lambda x: x.polygamma(n))

    def erfc_(self) -> Tensor:
        """``x.erfc()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).erfc_().tolist()
        [1.0]
        """
        return self._replace_with(lambda x: x.erfc())

    def erfinv_(self) -> Tensor:
        """``x.erfinv()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).erfinv_().tolist()
        [0.0]
        """
        return self._replace_with(lambda x: x.erfinv())

    def sqrt_(self) -> Tensor:
        """``x.sqrt()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([4.0, 9.0]).sqrt_().tolist()
        [2.0, 3.0]
        """
        return self._replace_with(lambda x: x.sqrt())

    def pow_(self, exponent: Any) -> Tensor:
        """``x ** exponent`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([2.0, 3.0]).pow_(2).tolist()
        [4.0, 9.0]
        """
        return self._replace_with(lambda x: x ** exponent)

    def sigmoid_(self) -> Tensor:
        """``x.sigmoid()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).sigmoid_().tolist()
        [0.5]
        """
        return self._replace_with(lambda x: x.sigmoid())

    def tanh_(self) -> Tensor:
        """``x.tanh()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0]).tanh_().tolist()
        [0.0]
        """
        return self._replace_with(lambda x: x.tanh())

    def relu_(self) -> Tensor:
        """``x.relu()`` written into ``x`` (what ``nn.ReLU(inplace=True)`` does).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([-1.0, 2.0]).relu_().tolist()
        [0.0, 2.0]
        """
        return self._replace_with(lambda x: x.relu())

    def floor_(self) -> Tensor:
        """``x.floor()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.7, -1.2]).floor_().tolist()
        [1.0, -2.0]
        """
        return self._replace_with(lambda x: x.floor())

    def round_(self, decimals: int = 0) -> Tensor:
        """``x.round(decimals)`` written into ``x`` (halves to even, as PyTorch).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.5, 1.5, 2.25]).round_().tolist()
        [0.0, 2.0, 2.0]
        """
        return self._replace_with(lambda x: x.round(decimals=decimals) if decimals else x.round())

    def log10_(self) -> Tensor:
        """``x.log10()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([100.0], dtype=dl.float64).log10_().tolist()
        [2.0]
        """
        return self._replace_with(lambda x: x.log10())

    def log2_(self) -> Tensor:
        """``x.log2()`` written into ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([8.0]).log2_().tolist()
        [3.0]
        """
        return self._replace_with(lambda x: x.log2())

    def tril_(self, diagonal: int = 0) -> Tensor:
        """``x.tril(diagonal)`` written into ``x``: zeros above the diagonal.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.ones(2, 2).tril_().tolist()
        [[1.0, 0.0], [1.0, 1.0]]
        """
        return self._replace_with(lambda x: x.tril(diagonal))

    def triu_(self, diagonal: int = 0) -> Tensor:
        """``x.triu(diagonal)`` written into ``x``: zeros below the diagonal.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.ones(2, 2).triu_().tolist()
        [[1.0, 1.0], [0.0, 1.0]]
        """
        return self._replace_with(lambda x: x.triu(diagonal))

    # ------------------------------------------------------- in-place random draws
    # Fresh values from the generator, like normal_ and uniform_: nothing to differentiate.
    def _draw_(self, distribution: str, *params: float, generator: Any = None) -> Tensor:
        from difflab.random import draw_array

        self[...] = draw_array(distribution, *params, shape=tuple(self.shape),
                               dtype=self.dtype, device=self.device, generator=generator)
        return self

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with draws from the exponential distribution of rate ``lambd`` (mean 1/λ).

        Examples
        --------
        >>> import difflab as dl
        >>> bool((dl.empty(100).exponential_(2.0) >= 0).all())
        True
        """
        if lambd <= 0:
            raise ValueError(f"exponential_ expects a positive rate lambd, got {lambd}")
        return self._draw_("exponential", 1.0 / lambd, generator=generator)

    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...).

        Examples
        --------
        >>> import difflab as dl
        >>> bool((dl.empty(100).geometric_(0.5) >= 1).all())
        True
        """
        if not 0 < p <= 1:
            raise ValueError(f"geometric_ expects a probability p in (0, 1], got {p}")
        return self._draw_("geometric", p, generator=generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *,
                generator: Any = None) -> Tensor:
        """Fill with draws from the Cauchy distribution ``median + sigma · tan(π(U - ½))``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.empty(3).cauchy_().shape
        difflab.Size([3])
        """
        from difflab.random import draw_array

        draws = draw_array("standard_cauchy", shape=tuple(self.shape), dtype="float64",
                           device=self.device, generator=generator)
        self[...] = draws * sigma + median
        return self

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *,
                    generator: Any = None) -> Tensor:
        """Fill with ``exp(N(mean, std²))`` draws (``mean``, ``std`` of the logarithm).

        Examples
        --------
        >>> import difflab as dl
        >>> bool((dl.empty(10).log_normal_() > 0).all())
        True
        """
        return self._draw_("lognormal", mean, std, generator=generator)

    def bernoulli_(self, p: float = 0.5, *, generator: Any = None) -> Tensor:
        """Fill with 1 with probability ``p``, else 0.

        Examples
        --------
        >>> import difflab as dl
        >>> sorted(set(dl.empty(50).bernoulli_(0.5).tolist())) in ([0.0, 1.0], [0.0], [1.0])
        True
        """
        if not 0 <= p <= 1:
            raise ValueError(f"bernoulli_ expects a probability p in [0, 1], got {p}")
        from difflab.random import uniform_array

        draws = uniform_array(0.0, 1.0, tuple(self.shape), "float64", self.device, generator)
        self[...] = draws < p
        return self

    def random_(self, from_: int = 0, to: int | None = None, *, generator: Any = None) -> Tensor:
        """Fill with integers drawn uniformly from ``[from_, to)``.

        Without ``to``: up to ``2**mantissa`` for floats (every integer exactly
        representable), the dtype's largest value for integers, as PyTorch.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.empty(20).random_(3, 6)
        >>> bool(((x >= 3) & (x < 6)).all())
        True
        """
        from difflab.random import integers_array

        if to is None:
            if self.dtype.is_floating_point:
                to = 2 ** (np.finfo(self.dtype.dtype).nmant + 1)
            elif self.dtype.kind == "b":
                to = 2
            else:
                to = int(np.iinfo(self.dtype.dtype).max)
        if to <= from_:
            raise ValueError(f"random_ expects from_ < to, got [{from_}, {to})")
        self[...] = integers_array(from_, to, tuple(self.shape), self.dtype, self.device,
                                   generator)
        return self
