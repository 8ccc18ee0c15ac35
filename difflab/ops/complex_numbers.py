r"""Complex numbers on the tape: the conjugate Wirtinger rule, and the primitives that need
their own.

A real loss :math:`L` of a complex :math:`z = a + ib` has, as PyTorch defines it, the
gradient

.. math::

    \bar z = \frac{\partial L}{\partial a} + i\,\frac{\partial L}{\partial b}
           = 2\,\frac{\partial L}{\partial z^*}

(the conjugate Wirtinger derivative, doubled), so :math:`\nabla_z |z|^2 = 2z`, and a real
input receives the real part of what reaches it.  For a primitive :math:`y = f(z)` the
chain rule in these terms reads

.. math::

    \bar z = \bar y^{\,*}\,\frac{\partial y}{\partial z^*}
           + \bar y\,\Big(\frac{\partial y}{\partial z}\Big)^{*}.

**Holomorphic primitives** (:math:`\partial y/\partial z^* = 0`: arithmetic, ``exp``,
``log``, ``sin``, ``tanh``, ``pow``, ``matmul``, and every linear map with real
coefficients: ``sum``, ``reshape``, indexing, ``cat``, ...) keep the second term only,
:math:`\bar z = \bar y \cdot f'(z)^*`.  Their real rule computes
:math:`\bar y \cdot f'(z)` with the same formula on complex arrays, so
:func:`complex_adjoints` conjugates around it, once for every such primitive:

.. math::

    \bar z = \big(\mathrm{vjp}(\bar y^{\,*})\big)^*.

**The others** declare their own rule, ``complex_vjp`` beside ``vjp``: ``conj``
(:math:`\bar z = \bar y^*`) and ``view_as_complex`` (the real and imaginary parts of
:math:`\bar y`).  The primitives with a complex input and a real output (``real``,
``imag``, ``angle``, ``view_as_real``, ``abs``, a cast to a real dtype) receive a real
adjoint, so their plain ``vjp`` is the whole rule and hands back a complex adjoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.ops.primitive import Primitive


def complex_adjoints(op: Any, ctx: Any, xp: Any, g: Any, saved: tuple) -> tuple:
    """The inputs' adjoints from a complex adjoint ``g`` of ``op``'s output (PyTorch's rule).

    ``op.complex_vjp`` where the primitive declares one; else, for a holomorphic
    primitive, its real rule conjugated around: ``conj(vjp(conj(g)))`` = ȳ·f′(z)*.
    A real input (``ctx.parents``: a record, or a leaf tensor) receives the real part
    of its adjoint, ∂L/∂x for a real loss L.
    """
    own = op.complex_vjp
    if own is not None:
        grads = own(ctx, xp, g, *saved)
    else:
        grads = tuple(None if d is None else d.conj()  # (the method: an unwritten slice's
                      for d in op.vjp(ctx, xp, xp.conj(g), *saved))  # too, on CuPy)
    return tuple(d.real if d is not None and d.dtype.kind == "c" and _holds_reals(parent)
                 else d for parent, d in zip(ctx.parents, grads))


def _holds_reals(parent: Any) -> bool:
    """Whether a record's input (a record, or a leaf tensor; None: a constant) is real."""
    meta = getattr(parent, "output_meta", None)  # (a record: its output's shape, dtype)
    if meta is not None:
        return meta[1].kind != "c"
    return parent is not None and parent.dtype.kind != "c"


def refuse_complex(name: str, *arrays: Any) -> None:
    """Raise for complex values reaching a derivative rule written for real ones only.

    The matrix decompositions' rules transpose where complex values need the conjugate
    transpose (and choose phases PyTorch chooses otherwise): a wrong number, so no number.
    """
    for a in arrays:
        if getattr(getattr(a, "dtype", None), "kind", "") == "c":
            raise NotImplementedError(
                f"{name}: difflab differentiates this operation for real matrices only; its "
                f"gradient through complex values is not supported (it would be wrong). "
                f"Differentiate with respect to real inputs, or compute it under "
                f"difflab.no_grad()")


def _parts(v: Any) -> tuple:
    """(Re v, Im v) of a sympy expression (its symbols are real) or a Python number."""
    if hasattr(v, "as_real_imag"):
        return v.as_real_imag()
    return v.real, v.imag


def _complex_of(dtype: Any) -> Any:
    """The complex dtype of a real one's precision (complex64 for float32)."""
    return np.result_type(dtype, np.complex64)


def _refuse_real(x: Any, name: str) -> None:
    if x.dtype.kind != "c":
        raise RuntimeError(f"{name} is not implemented for tensors with non-complex dtypes "
                           f"(got {x.dtype}); it reads the imaginary part of a complex tensor")


class Real(Primitive):
    r"""y = Re z.  VJP: :math:`\bar z = \bar y + 0i` (a real ``y`` of a real ``x``: itself).

    The JVP takes the real part of the tangent; the VJP, its transpose, puts the real
    adjoint back as a complex one.
    """

    name = "real"
    dl_function = "real"  # dl.real(z); Tensor.real is a property (tensor.py)
    description = "the real part of each element"
    math = "d Re(z) = Re(dz);  z̄ = ȳ"
    doc = """
        Parameters
        ----------
        input : Tensor
            Complex (or real: then the same values).

        Returns
        -------
        Tensor
            The real parts, in the real dtype of the same precision; its gradient
            reaches ``input`` as ``ȳ + 0i``.

        Examples
        --------
        >>> import difflab as dl
        >>> z = dl.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        >>> dl.real(z)
        tensor([1., 3.], grad_fn=<RealBackward0>)
        >>> dl.real(z * z).sum().backward()
        >>> z.grad                                # Re(z²)' = 2·conj(z)
        tensor([2.-4.j, 6.+2.j], dtype=difflab.complex64)
    """

    @staticmethod
    def arguments(input):  # noqa: A002
        """``real(input)``: the real parts of a complex tensor."""
        return (input,), {}

    @staticmethod
    def symbolic(sp, x):
        return sp.elementwise(lambda v: _parts(v)[0], x)

    @staticmethod
    def forward(ctx, xp, x):
        ctx.in_dtype = x.dtype
        return xp.real(x).copy()

    @staticmethod
    def vjp(ctx, xp, g):
        return (g.astype(ctx.in_dtype),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.real(dx)


class Imag(Primitive):
    r"""y = Im z.  VJP: :math:`\bar z = i\,\bar y`.

    Only for complex inputs (PyTorch's ``imag`` refuses a real tensor, whose
    imaginary part would be a constant 0).
    """

    name = "imag"
    dl_function = "imag"  # dl.imag(z); Tensor.imag is a property (tensor.py)
    description = "the imaginary part of each element"
    math = "d Im(z) = Im(dz);  z̄ = i·ȳ"
    doc = """
        Parameters
        ----------
        input : Tensor
            Complex.

        Returns
        -------
        Tensor
            The imaginary parts, in the real dtype of the same precision; its gradient
            reaches ``input`` as ``i·ȳ``.

        Raises
        ------
        RuntimeError
            For a real ``input``.

        Examples
        --------
        >>> import difflab as dl
        >>> z = dl.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        >>> dl.imag(z)
        tensor([ 2., -1.], grad_fn=<ImagBackward0>)
        >>> dl.imag(z).sum().backward()
        >>> z.grad
        tensor([0.+1.j, 0.+1.j], dtype=difflab.complex64)
    """

    @staticmethod
    def arguments(input):  # noqa: A002
        """``imag(input)``: the imaginary parts of a complex tensor."""
        return (input,), {}

    @staticmethod
    def symbolic(sp, x):
        return sp.elementwise(lambda v: _parts(v)[1], x)

    @staticmethod
    def forward(ctx, xp, x):
        _refuse_real(x, "imag")
        ctx.in_dtype = x.dtype
        return xp.imag(x).copy()

    @staticmethod
    def vjp(ctx, xp, g):
        return ((g * 1j).astype(ctx.in_dtype),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.imag(dx)


class Conj(Primitive):
    r"""y = z*, the complex conjugate.  VJP: :math:`\bar z = \bar y^*` (its own complex rule).

    Not holomorphic (:math:`\partial y/\partial z = 0`,
    :math:`\partial y/\partial z^* = 1`), so it declares ``complex_vjp``; on real values
    it is the identity, and so is its rule.
    """

    name = "conj"
    tensor_method = dl_function = "conj"  # z.conj(), dl.conj(z)
    description = "the complex conjugate of each element"
    math = "d conj(z) = conj(dz);  z̄ = conj(ȳ)"
    doc = """
        Parameters
        ----------
        input : Tensor
            Complex (or real: then the same values).

        Returns
        -------
        Tensor
            ``a - ib`` for each ``a + ib``; its gradient reaches ``input`` as ``conj(ȳ)``.

        Examples
        --------
        >>> import difflab as dl
        >>> z = dl.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        >>> dl.conj(z)
        tensor([1.-2.j, 3.+1.j], dtype=difflab.complex64, grad_fn=<ConjBackward0>)
        >>> (z.conj() * z).real.sum().backward()   # |z|²: gradient 2z
        >>> z.grad
        tensor([2.+4.j, 6.-2.j], dtype=difflab.complex64)
    """

    @staticmethod
    def arguments(input):  # noqa: A002
        """``conj(input)``: the complex conjugates."""
        return (input,), {}

    @staticmethod
    def symbolic(sp, x):
        return sp.elementwise(lambda v: v.conjugate(), x)

    @staticmethod
    def forward(ctx, xp, x):
        return xp.conj(x)

    @staticmethod
    def vjp(ctx, xp, g):
        return (xp.conj(g),)

    complex_vjp = vjp  # (z̄ = conj(ȳ): the rule above, for complex adjoints as for real)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.conj(dx)


class Angle(Primitive):
    r"""y = arg z = atan2(Im z, Re z).  VJP: :math:`\bar z = \bar y \cdot i z / |z|^2`
    (0 at z = 0); 0 for a real input, whose angle is the constant 0 or π.

    From :math:`\partial y/\partial a = -b/|z|^2` and :math:`\partial y/\partial b =
    a/|z|^2`: :math:`\bar z = \bar y\,(-b + ia)/|z|^2 = \bar y\, iz/|z|^2`.
    """

    name = "angle"  # dl.angle and Tensor.angle: difflab.functions_counting (ints to float)
    description = "the angle of each element in the complex plane"
    math = "z̄ = ȳ·i·z/|z|²  (0 at z = 0; 0 for real z)"

    @staticmethod
    def symbolic(sp, x):  # (a real value's: 0 or π, derivative 0, as PyTorch's)
        def angle(v: Any) -> Any:
            re, im = _parts(v)
            return sp.where(re < 0, np.pi, 0.0) if im == 0 else sp.arctan2(im, re)
        return sp.elementwise(angle, x)

    @staticmethod
    def forward(ctx, xp, x):
        ctx.save(x)
        return _angle(xp, x)

    @staticmethod
    def vjp(ctx, xp, g, x):
        if x.dtype.kind != "c":
            return (g * 0,)
        size = x.real * x.real + x.imag * x.imag
        zero = size == 0
        return (xp.where(zero, 0, g * 1j * x / xp.where(zero, 1, size)).astype(x.dtype),)

    @staticmethod
    def jvp(ctx, xp, dx, x):
        if x.dtype.kind != "c":
            return xp.real(dx) * 0
        size = x.real * x.real + x.imag * x.imag
        return xp.where(size == 0, 0, (x.real * dx.imag - x.imag * dx.real)
                        / xp.where(size == 0, 1, size))


def _angle(xp: Any, x: Any) -> Any:
    """atan2(imag, real) of complex values; for real ones PyTorch's rule: π where x < 0,
    0 elsewhere (-0.0 too, where NumPy's ``angle`` gives π), nan at nan."""
    if x.dtype.kind == "c":
        return xp.angle(x)
    return xp.where(x < 0, np.pi, xp.where(xp.isnan(x), x, 0)).astype(x.dtype)


class ViewAsReal(Primitive):
    r"""y[..., 0] = Re z, y[..., 1] = Im z.  VJP: :math:`\bar z = \bar y_0 + i\,\bar y_1`."""

    name = "view_as_real"
    dl_function = "view_as_real"
    description = "a complex tensor as pairs of reals (a last dimension of 2)"
    math = "z̄ = ȳ[..., 0] + i·ȳ[..., 1]"
    doc = """
        Parameters
        ----------
        input : Tensor
            Complex.

        Returns
        -------
        Tensor
            Real, of shape ``input.shape + (2,)``: the real and imaginary parts (a
            copy: difflab's result does not share ``input``'s memory, PyTorch's does).

        Raises
        ------
        RuntimeError
            For a real ``input``.

        Examples
        --------
        >>> import difflab as dl
        >>> z = dl.tensor([1 + 2j], requires_grad=True)
        >>> dl.view_as_real(z)
        tensor([[1., 2.]], grad_fn=<ViewAsRealBackward0>)
        >>> (dl.view_as_real(z) * dl.tensor([3.0, 4.0])).sum().backward()
        >>> z.grad
        tensor([3.+4.j], dtype=difflab.complex64)
    """

    @staticmethod
    def arguments(input):  # noqa: A002
        """``view_as_real(input)``: a complex tensor's parts along a new last dimension."""
        return (input,), {}

    @staticmethod
    def forward(ctx, xp, x):
        _refuse_real(x, "view_as_real")
        ctx.in_dtype = x.dtype
        return xp.stack([xp.real(x), xp.imag(x)], axis=-1)

    @staticmethod
    def vjp(ctx, xp, g):
        return ((g[..., 0] + 1j * g[..., 1]).astype(ctx.in_dtype),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.stack([xp.real(dx), xp.imag(dx)], axis=-1)


class ViewAsComplex(Primitive):
    r"""z = x[..., 0] + i x[..., 1].  Its complex rule: :math:`\bar x_0 = \mathrm{Re}\,\bar z`,
    :math:`\bar x_1 = \mathrm{Im}\,\bar z`.

    A real input, a complex output: the conjugated real rule would get the sign of
    :math:`\bar x_1` wrong, so it declares ``complex_vjp``.
    """

    name = "view_as_complex"
    dl_function = "view_as_complex"
    description = "pairs of reals (a last dimension of 2) as a complex tensor"
    math = "x̄[..., 0] = Re z̄,  x̄[..., 1] = Im z̄"
    doc = """
        Parameters
        ----------
        input : Tensor
            float32 or float64, with a last dimension of size 2.

        Returns
        -------
        Tensor
            complex64 or complex128, of shape ``input.shape[:-1]`` (a copy).

        Raises
        ------
        RuntimeError
            For another dtype, or a last dimension of another size.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([[3.0, 4.0]], requires_grad=True)
        >>> dl.view_as_complex(x)
        tensor([3.+4.j], dtype=difflab.complex64, grad_fn=<ViewAsComplexBackward0>)
        >>> dl.view_as_complex(x).abs().sum().backward()
        >>> x.grad
        tensor([[0.6, 0.8]])
    """

    @staticmethod
    def arguments(input):  # noqa: A002
        """``view_as_complex(input)``: pairs along the last dimension as complex numbers."""
        return (input,), {}

    @staticmethod
    def forward(ctx, xp, x):
        if x.dtype not in (np.float32, np.float64) or x.ndim == 0 or x.shape[-1] != 2:
            raise RuntimeError(f"view_as_complex: expected a float32 or float64 tensor whose "
                               f"last dimension has size 2, got {x.dtype} of shape "
                               f"{tuple(x.shape)}")
        return (x[..., 0] + 1j * x[..., 1]).astype(_complex_of(x.dtype))

    @staticmethod
    def complex_vjp(ctx, xp, g):
        return (xp.stack([xp.real(g), xp.imag(g)], axis=-1),)

    vjp = complex_vjp  # (its output is complex: every adjoint that reaches it is too)

    @staticmethod
    def jvp(ctx, xp, dx):
        return dx[..., 0] + 1j * dx[..., 1]


PRIMITIVES = [Real, Imag, Conj, Angle, ViewAsReal, ViewAsComplex]
