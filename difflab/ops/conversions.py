r"""Copies and conversions: a new dtype, a new device, new memory.

Each is the identity map on values (up to rounding for a narrower dtype), so
its JVP carries the tangent over the same way and its VJP carries the
adjoint back: to the input's dtype, to the input's device.  Each declares
its faces (:mod:`difflab.ops.primitive`): ``dl.astype(x, dtype)`` (the array
API's name; ``Tensor.to(dtype)`` and ``x.astype`` call it too),
``dl.to_device(x, device)`` and ``dl.clone(x)``, so that dual numbers,
arrays and sympy expressions take them as tensors do.  On symbols the three
are the identity: a symbol stands for a real number, with no dtype, device
or memory of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import copied


class Cast(Primitive):
    """y = x converted to another dtype.  VJP: ȳ converted back to x's dtype."""

    name = "to_dtype"
    dl_function = "astype"  # dl.astype(x, dtype) (the array API's); Tensor.to/astype by hand

    @staticmethod
    def arguments(input, dtype, copy=True):  # noqa: A002
        """``astype(x, dtype)``: ``x`` converted to ``dtype`` (the array API's function;
        ``x.to(dtype)`` on a tensor).  The gradient is converted back to ``x``'s dtype.

        Parameters
        ----------
        x : Tensor, array, dual number or sympy expressions
            The values.
        dtype : dtype
            The dtype to convert to (``difflab.float64``, ``numpy.float32``, ...).
        copy : bool
            Accepted for the array API; a conversion always makes new values.

        Returns
        -------
        Tensor or array
            The same values in ``dtype``, of the same kind as ``x``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.astype(dl.tensor([1, 2]), dl.float64)
        tensor([1., 2.], dtype=difflab.float64)
        """
        return (input,), {"dtype": np.dtype(dtype)}

    @staticmethod
    def symbolic(sp, x, dtype):
        if np.dtype(dtype).kind not in "fcO":
            raise TypeError(
                f"symbolic: a conversion to {np.dtype(dtype)} rounds or truncates, which a "
                f"symbol (a real number) cannot say; differentiate where the values stay "
                f"floating point, or use method='forward' or 'reverse'")
        # a truth value (x > 0, isnan(x), True) as a number is 1 or 0: sympy's Piecewise
        number = np.frompyfunc(lambda e: sp.where(e, 1, 0) if _is_truth(e) else e, 1, 1)
        return number(x)

    @staticmethod
    def forward(ctx, xp, x, dtype):
        ctx.in_dtype, ctx.dtype = x.dtype, dtype
        return x.astype(dtype)

    @staticmethod
    def vjp(ctx, xp, g):
        return (g.astype(ctx.in_dtype),)

    @staticmethod
    def complex_vjp(ctx, xp, g):
        # (a complex output of a real x: x̄ = Re ȳ, the real part taken here, not discarded
        # by NumPy's cast with a warning)
        return ((g if ctx.in_dtype.kind == "c" else xp.real(g)).astype(ctx.in_dtype),)

    @staticmethod
    def jvp(ctx, xp, dx):
        # to integers or truth values: a rounding, constant almost everywhere (reverse mode
        # sends nothing back through it); the tangent converted would be truncated
        if np.dtype(ctx.dtype).kind not in "fc":
            return dx * 0
        return dx.astype(ctx.dtype)


class ToDevice(Primitive):
    """y = x copied to another device.  JVP: ẋ copied there too.  VJP: ȳ copied back."""

    name = "to_device"
    tensor_method = dl_function = "to_device"  # x.to_device(d) (the array API's), dl.to_device

    @staticmethod
    def arguments(input, device, /, *, stream=None):  # noqa: A002
        """``to_device(x, device)``: ``x`` copied to ``device`` (the array API's name;
        ``x.to(device)`` on a tensor).  The gradient is copied back.

        Parameters
        ----------
        x : Tensor, array, dual number or sympy expressions
            The values.
        device : str, difflab.device or int
            ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a device, or a CUDA index.
        stream : None
            Accepted for the array API (difflab has no streams): must be None.

        Returns
        -------
        Tensor or array
            The same values on ``device``.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.to_device(dl.tensor([1.0, 2.0]), "cpu").device
        device(type='cpu')
        """
        if stream is not None:
            raise TypeError("to_device: difflab has no streams; leave stream=None")
        return (input,), {"device": backend.device(device)}

    @staticmethod
    def symbolic(sp, x, device):
        return x

    @staticmethod
    def forward(ctx, xp, x, device):
        ctx.source, ctx.target = backend.device_of(x), device
        if ctx.source == device:  # a copy all the same: the result never aliases the input
            return copied(x)
        return backend.to_device(x, device)

    @staticmethod
    def _moved(value: Any, device: Any) -> Any:
        """A tangent or adjoint on ``device``: a tensor by ``.to`` (recorded), else its array."""
        if hasattr(value, "to"):
            return value.to(device)
        return backend.to_device(value, device)

    @staticmethod
    def jvp(ctx, xp, dx):
        return ToDevice._moved(dx, ctx.target)

    @staticmethod
    def vjp(ctx, xp, g):
        return (ToDevice._moved(g, ctx.source),)


class Clone(Primitive):
    """y = a copy of x in new memory.  The identity map: VJP and JVP pass through."""

    name = "clone"
    tensor_method = dl_function = "clone"  # x.clone(), dl.clone(x)
    description = "a copy of a tensor in new memory, on the tape"
    doc = """
        Parameters
        ----------
        input : Tensor, array, dual number or sympy expressions
            The values.
        memory_format : None, keyword-only
            Accepted for PyTorch's signature (difflab's tensors have one layout).

        Returns
        -------
        Tensor or array
            A copy of ``input``: writing into it leaves ``input`` as it was.

        See Also
        --------
        difflab.Tensor.detach : the same memory, off the tape.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = dl.clone(x)
        >>> y.add_(1.0)             # in place, on the copy only
        tensor([2., 3.], grad_fn=<...>)
        >>> x
        tensor([1., 2.], requires_grad=True)
        >>> (y * y).sum().backward()
        >>> x.grad                  # 2y: the gradient passes through the copy
        tensor([4., 6.])
    """

    @staticmethod
    def arguments(input, *, memory_format=None):  # noqa: A002
        """``clone(input)``: a copy in new memory; gradients flow back to ``input``."""
        return (input,), {}

    @staticmethod
    def symbolic(sp, x):
        return x

    @staticmethod
    def forward(ctx, xp, x):
        return copied(x)

    @staticmethod
    def vjp(ctx, xp, g):
        return (g,)

    @staticmethod
    def jvp(ctx, xp, dx):
        return dx


def _is_truth(e: object) -> bool:
    """Whether ``e`` is a truth value: a bool, or sympy's relation or logic (read from
    sympy's own flags, so this layer imports no sympy)."""
    return (isinstance(e, (bool, np.bool_)) or getattr(e, "is_Relational", False)
            or getattr(e, "is_Boolean", False))
