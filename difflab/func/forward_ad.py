r"""PyTorch's ``torch.autograd.forward_ad``: dual tensors, on forward mode's dual numbers.

A *dual tensor* is a tensor whose values are dual numbers ``x + ẋ·ε`` with
ε² = 0 (:class:`difflab.diff.Dual`): every operation on it computes its value
and, from the same registry rule, its tangent ``ẏ = J·ẋ``.  So

.. code-block:: python

    import difflab.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, v))     # the value f(x), carrying the tangent J·v
        jvp = fwAD.unpack_dual(y).tangent

is the same mechanism as :func:`difflab.func.jvp` and :func:`difflab.func.jacfwd`,
reached through PyTorch's names.  A level is a fresh *tag* of dual numbers: tensors
without a tangent at the level are constants, and when the level ends its tag ends
with it, so the tensors made inside keep their values and lose their tangents
(``unpack_dual`` then gives ``tangent=None``).  As in PyTorch, one level runs at a
time (nest ``difflab.func.jvp`` for higher derivatives).

Forward over reverse: ``make_dual`` of a tensor that requires grad is recorded on
the tape (its backward passes the gradient to the primal), so a gradient taken
inside the level carries a tangent, the Hessian-vector product ``H·v``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from difflab import backend
from difflab.autograd import engine
from difflab.autograd.function import ForwardAD
from difflab.autograd.grad_mode import is_grad_enabled
from difflab.autograd.gradcheck import ForwardMode
from difflab.diff.dual import Dual
from difflab.diff.tags import end_tag, new_tag, readable_values
from difflab.ops.primitive import Primitive
from difflab.tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


class _Level:
    """The running level: PyTorch's number for it (always 0: one at a time) and the
    tag of its dual numbers; the tangent tensors given to ``make_dual``, so that
    ``unpack_dual`` hands back the very tensor (PyTorch's ``tangent is t``)."""

    tag: int | None = None
    given: dict[int, tuple] = {}


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: a dual tensor's ``primal`` and ``tangent``.

    Parameters
    ----------
    primal : Tensor
        The values.
    tangent : Tensor or None
        The tangent at the level, or None (no tangent there).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.autograd.forward_ad as fwAD
    >>> fwAD.unpack_dual(dl.tensor([1.0, 2.0]))
    UnpackedDualTensor(primal=tensor([1., 2.]), tangent=None)
    """

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Start a forward-mode level: the one ``make_dual`` and ``unpack_dual`` use.

    Prefer ``with dual_level():``, which ends the level even on an error.

    Returns
    -------
    int
        The level's number (0: one level runs at a time, as in PyTorch).

    Raises
    ------
    RuntimeError
        If a level is running already (nested forward mode is not supported: nest
        ``difflab.func.jvp`` instead).

    Examples
    --------
    >>> import difflab.autograd.forward_ad as fwAD
    >>> fwAD.enter_dual_level()
    0
    >>> fwAD.exit_dual_level()
    """
    if _Level.tag is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment: a "
                           "dual_level is running already (for derivatives of derivatives, "
                           "nest difflab.func.jvp or jacfwd)")
    _Level.tag = new_tag()
    ForwardAD.tags.add(_Level.tag)
    engine.LeafGradValues.strip = _without_level_tangent
    readable_values(_Level.tag)  # (item(), numpy() give the values, as PyTorch's)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """End the running level: its dual tensors keep their values, lose their tangents.

    Parameters
    ----------
    level : int, optional
        The level to end (default: the running one, 0).

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        If no level is running, or ``level`` is not the running one.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.autograd.forward_ad as fwAD
    >>> _ = fwAD.enter_dual_level()
    >>> y = fwAD.make_dual(dl.tensor([1.0]), dl.tensor([2.0])) * 3
    >>> fwAD.exit_dual_level()
    >>> fwAD.unpack_dual(y)
    UnpackedDualTensor(primal=tensor([3.]), tangent=None)
    """
    if _Level.tag is None:
        raise RuntimeError("exit_dual_level: no forward AD level is running (enter one "
                           "with enter_dual_level() or `with dual_level():`)")
    _check_level(level, "exit_dual_level")
    end_tag(_Level.tag)
    ForwardAD.tags.discard(_Level.tag)
    engine.LeafGradValues.strip = None
    _Level.tag, _Level.given = None, {}


def _without_level_tangent(g: Any) -> Any:
    """An adjoint bound for a ``.grad``, without the running level's tangent (PyTorch's
    ``.grad`` keeps values only; ``autograd.grad`` keeps the tangent: forward over reverse)."""
    while isinstance(g, Dual) and g.tag == _Level.tag:
        g = g.primal
    return g


class dual_level:  # noqa: N801  (PyTorch's name)
    """Context manager of a forward-mode level: ``with dual_level():`` ... .

    Inside, :func:`make_dual` attaches tangents and every operation carries them;
    on exit the tangents of the level are gone.

    Returns
    -------
    int
        ``with dual_level() as level:`` gives the level's number (0).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.autograd.forward_ad as fwAD
    >>> x, v = dl.tensor([0.0, 1.0]), dl.tensor([1.0, 1.0])
    >>> with fwAD.dual_level():
    ...     y = dl.sin(fwAD.make_dual(x, v))
    ...     print(fwAD.unpack_dual(y).tangent)          # cos(x)·v
    tensor([1.    , 0.5403])
    >>> print(fwAD.unpack_dual(y).tangent)
    None
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def _check_level(level: int | None, name: str) -> None:
    if level is not None and level != 0:
        raise RuntimeError(f"{name}: invalid level {level!r}: the running level is 0 (one "
                           f"level runs at a time); leave level= out")


class _MakeDual(Primitive):
    r"""``make_dual`` of a tensor on the tape: its value becomes a dual number of the
    level's tag; its VJP is the identity to the primal (the tangent gets none), so a
    gradient taken inside the level reaches the primal carrying its own tangent:
    forward over reverse, ``∇f(x + εv) = ∇f(x) + ε·H v``."""

    name, description = "make_dual", "a tensor given a forward-mode tangent"

    def __init__(self, tag: int) -> None:
        self.tag = tag

    def forward(self, ctx: Any, xp: Any, primal: Any, tangent: Any) -> Any:
        return Dual._make(primal, tangent.reshape((1,) + tuple(tangent.shape)), self.tag)

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        return g, None

    def jvp(self, ctx: Any, xp: Any, primal_tangent: Any, tangent_tangent: Any,
            *saved: Any) -> Any:  # (the primal's tangent of an older tag passes through)
        return primal_tangent


class _Primal(Primitive):
    """``unpack_dual(y).primal`` of a dual tensor on the tape: the values; the VJP passes
    the adjoint back to ``y`` whole (a gradient of the values carries the level's tangent:
    forward over reverse, as for every other operation on dual tensors)."""

    name, description = "unpack_dual_primal", "the values of a dual tensor"

    def forward(self, ctx: Any, xp: Any, dual: Any) -> Any:
        return dual.primal

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        return (g,)


class _Tangent(Primitive):
    """``unpack_dual(y).tangent`` of a dual tensor on the tape: reverse mode through it
    (reverse over forward) is refused with a clear error, not given a wrong zero."""

    name, description = "unpack_dual_tangent", "the tangent of a dual tensor"

    def forward(self, ctx: Any, xp: Any, dual: Any) -> Any:
        return dual.tangents[0]

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise RuntimeError(
            "backward through unpack_dual(...).tangent (reverse over forward) is not "
            "supported: take the gradient inside the level and unpack it instead (forward "
            "over reverse: g = autograd.grad(f(make_dual(x, v)), x); unpack_dual(g).tangent "
            "is H·v), or use difflab.func.jacfwd(jacrev(f))")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """The tensor ``tensor`` carrying ``tangent`` at the running level: a dual tensor.

    Every operation on the result computes its value and its tangent, the
    Jacobian-vector product ``J·tangent``.  A tangent laid out as the primal is kept
    as it is (``unpack_dual`` returns that very tensor); another (a transpose) is
    copied into the primal's layout.  If ``tensor`` requires grad, the result is on the
    tape (gradients reach ``tensor``): see the module's forward over reverse.

    Parameters
    ----------
    tensor : Tensor
        The primal: floating point (or complex).
    tangent : Tensor
        The direction: floating point, of the primal's shape.
    level : int, optional
        The level (default: the running one, 0).

    Returns
    -------
    Tensor
        The dual tensor.

    Raises
    ------
    RuntimeError
        Outside a level; for a tangent of another shape; for a tensor that has a tangent
        at this level already; on the GPU (dual numbers hold CPU arrays).
    ValueError
        For a primal or tangent that is not floating point.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.autograd.forward_ad as fwAD
    >>> x, v = dl.tensor([1.0, 2.0]), dl.tensor([1.0, 0.0])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, v) ** 2
    ...     fwAD.unpack_dual(y).tangent                   # 2x·v
    tensor([2., 0.])
    """
    if _Level.tag is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first (or use "
                           "`with fwAD.dual_level():`)")
    _check_level(level, "make_dual")
    _check_dual_inputs(tensor, tangent)
    tangent_values = tangent.array
    if _strides(tangent_values) != _strides(tensor.array):  # another layout: a copy
        tangent_values = np.array(tangent_values, order="C")
    tangent_tensor = Tensor._wrap(tangent_values)
    if tensor.requires_grad and is_grad_enabled():
        dual = engine.apply(_MakeDual(_Level.tag), tensor, tangent_tensor)
    else:
        dual = Tensor._wrap(_MakeDual(_Level.tag).forward(None, np, tensor.array,
                                                          tangent_values))
    if tangent_values is tangent.array:
        _Level.given[id(dual.array)] = (dual.array, tangent)
    return dual


def _strides(values: Any) -> tuple | None:
    """The layout of an array, in elements (None for a value that is no NumPy array)."""
    if not isinstance(values, np.ndarray):
        return None
    return tuple(s // values.itemsize for s in values.strides)


def _check_dual_inputs(tensor: Any, tangent: Any) -> None:
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual: the {what} must be a Tensor, got "
                            f"{type(t).__name__}")
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{t.dtype} (convert it with .double() or .float())")
        if t.is_cuda:
            raise RuntimeError("make_dual: forward mode runs on dual numbers, which hold "
                               "CPU arrays only; .cpu() the tensors")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            f"Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}.")
    if isinstance(tensor.array, Dual) and tensor.array.tag == _Level.tag:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a "
                           "forward gradient at the same level 0 is not supported "
                           "(unpack_dual(x).primal is its value without the tangent)")


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """A tensor's values and its tangent at the running level (None if it has none).

    Outside a level, and for a tensor that never met a dual tensor, the tangent is
    None; after its level ended, a dual tensor's is too.

    Parameters
    ----------
    tensor : Tensor
        Any tensor.
    level : int, optional
        The level (default: the running one, 0).

    Returns
    -------
    UnpackedDualTensor
        ``(primal, tangent)``.  For a tensor on the tape the primal is on it too (a
        gradient through it carries the level's tangent); backward through the tangent
        (reverse over forward) raises a clear error.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = dl.exp(fwAD.make_dual(dl.tensor([0.0]), dl.tensor([3.0])))
    ...     fwAD.unpack_dual(y)
    UnpackedDualTensor(primal=tensor([1.]), tangent=tensor([3.]))
    """
    _check_level(level, "unpack_dual")
    values = tensor.array if isinstance(tensor, Tensor) else None
    if not isinstance(values, Dual):
        return UnpackedDualTensor(tensor, None)
    if values.tag != _Level.tag:  # another derivative's dual numbers (or an ended level)
        return UnpackedDualTensor(tensor, None)
    recorded = tensor.requires_grad and is_grad_enabled()
    primal = engine.apply(_Primal(), tensor) if recorded else Tensor._wrap(values.primal)
    given = _Level.given.get(id(values))
    if given is not None and given[0] is values:
        return UnpackedDualTensor(primal, given[1])
    tangent = engine.apply(_Tangent(), tensor) if recorded else Tensor._wrap(
        values.tangents[0])
    if tangent.dtype != primal.dtype and primal.dtype.is_floating_point:
        tangent = tangent.to(primal.dtype)  # (the rules may widen a float32's)
    return UnpackedDualTensor(primal, tangent)


def _tensors_out(function: Any, inputs: list) -> list:
    out = function(*inputs)
    return [o for o in (out if isinstance(out, (tuple, list)) else (out,))
            if isinstance(o, Tensor)]


def _jacobian_by_dual_tensors(function: Any, inputs: Any) -> list:
    """J[k][i] = d output_k / d input_i, one column per level: the input element's unit
    tangent pushed through ``function`` (``gradcheck(check_forward_ad=True)`` reads it)."""
    inputs = list(inputs)
    sizes = [o.numel() for o in _tensors_out(function, inputs)]
    jac: list = [[None] * len(inputs) for _ in sizes]
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        columns = [np.zeros((n, x.numel())) for n in sizes]
        for j in range(x.numel()):
            unit = np.zeros(x.numel(), dtype=backend.to_numpy(x.array).dtype)
            unit[j] = 1.0
            with dual_level():
                args = list(inputs)
                args[i] = make_dual(x.detach(), Tensor._wrap(unit.reshape(tuple(x.shape))))
                for k, out in enumerate(_tensors_out(function, args)):
                    tangent = unpack_dual(out).tangent
                    if tangent is not None:
                        columns[k][:, j] = backend.to_numpy(tangent.array).reshape(-1)
        for k, part in enumerate(columns):
            jac[k][i] = part
    return jac


ForwardMode.jacobian = _jacobian_by_dual_tensors
