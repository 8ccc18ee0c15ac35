r"""PyTorch's ``torch.autograd.functional``: Jacobians, Hessians and their products.

Each function takes a Python function ``func`` and the point ``inputs`` (a tensor
or a tuple of tensors), and answers with tensors laid out as PyTorch lays them
out. All of them are built on :func:`difflab.autograd.grad`, the tape's reverse
walk:

* :func:`vjp` is one walk seeded with v: vᵀJ;
* :func:`jacobian` is one walk per output element (row i of J is e_iᵀJ);
* :func:`jvp` is the *double-backward trick*: the vjp u ↦ uᵀJ is linear in u,
  so differentiating it with respect to u, seeded with v, gives Jv;
* :func:`hessian` is the Jacobian of the (recorded) gradient; :func:`vhp` and
  :func:`hvp` are the vjp and jvp of the gradient.

``vectorize=True`` is accepted and runs the same loop of walks (PyTorch batches
the walks with vmap; the tensor layer that holds these functions cannot import
:mod:`difflab.func`). For forward mode use :func:`difflab.func.jacfwd`.

Layout (PyTorch's): for an output of shape ``O`` and an input of shape ``I`` the
Jacobian has shape ``O + I``. With tuple outputs and/or tuple inputs the blocks
are nested tuples, ``J[i][j]`` for output i and input j; a tensor (not a
tuple) on either side drops that level.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from difflab.autograd.functional import grad as autograd_grad
from difflab.autograd.grad_mode import enable_grad
from difflab.creation import ones_like, zeros, zeros_like
from difflab.functions_shapes import stack
from difflab.tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("reverse-mode", "forward-mode")

_F = TypeVar("_F", bound=Callable[..., Any])


def _records(transform: _F) -> _F:
    """Run ``transform`` with recording on, even when called inside ``no_grad()``: the
    walks need the tape (PyTorch's functions enable grad the same way)."""
    @functools.wraps(transform)
    def run(*args: Any, **kwargs: Any) -> Any:
        with enable_grad():
            return transform(*args, **kwargs)
    return run  # type: ignore[return-value]


def _as_tuple(value: Any, what: str, who: str) -> tuple[bool, tuple]:
    """``(was_tuple, value as a tuple)``, checking every element is a tensor."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f" the value at index {i} has" if was_tuple else " the given value has"
            raise TypeError(
                f"The {what} given to {who} must be either a Tensor or a tuple of Tensors but"
                f"{where} type {type(item).__name__}. Wrap several tensors in a tuple "
                f"(not a list), e.g. ({what.split()[0]}_a, {what.split()[0]}_b)."
            )
    return was_tuple, tuple(items)


def _unpack(value: tuple, was_tuple: bool | tuple[bool, bool]) -> Any:
    """Drop the tuple levels the caller did not ask for (PyTorch's ``_tuple_postprocess``)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            value = tuple(row[0] for row in value)
        return value if outer else value[0]
    return value if was_tuple else value[0]


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Fresh leaves to differentiate at, still on the caller's tape when ``create_graph``."""
    prepared = []
    for x in inputs:
        if create_graph and x.requires_grad:
            prepared.append(x.view_as(x))  # keeps the link to the caller's graph
        else:
            prepared.append(x._off_tape().requires_grad_(True))
    return tuple(prepared)


def _finish(values: tuple, create_graph: bool) -> tuple:
    """Detach the results unless the caller wants to differentiate them again."""
    if create_graph:
        return values
    return tuple(v._off_tape() if isinstance(v, Tensor) else v for v in values)


def _call(func: Callable, inputs: tuple, who: str) -> tuple[bool, tuple]:
    with enable_grad():
        outputs = func(*inputs)
    return _as_tuple(outputs, "outputs of the user-provided function", who)


def _grads(outputs: tuple, inputs: tuple, seeds: tuple, create_graph: bool) -> tuple:
    """``autograd.grad`` that tolerates outputs off the tape: ``None`` for what they miss."""
    used = [i for i, out in enumerate(outputs) if out.requires_grad]
    if not used:
        return (None,) * len(inputs)
    return autograd_grad([outputs[i] for i in used], list(inputs),
                         [seeds[i] for i in used], retain_graph=True,
                         create_graph=create_graph, allow_unused=True)


def _fill(results: tuple, like: tuple, strict: bool, message: str) -> tuple:
    """Zeros where a result is ``None`` (an independent input), or an error when strict."""
    filled = []
    for i, (g, x) in enumerate(zip(results, like)):
        if g is None:
            if strict:
                raise RuntimeError(message.format(i=i))
            g = zeros_like(x)
        filled.append(g)
    return tuple(filled)


def _check_v(v: Any, against: tuple, who: str, what: str) -> tuple:
    """The seed ``v`` as a tuple matching ``against`` (``None``: 1, for one element)."""
    if v is None:
        if len(against) != 1 or against[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if the {what} of the user-provided function "
                f"is a single Tensor with a single element. Pass v= with one tensor of the "
                f"{what}' shape per {what[:-1] if what.endswith('s') else what}."
            )
        return (ones_like(against[0]),)
    _, vs = _as_tuple(v, "v", who)
    if len(vs) != len(against):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(against)} but got "
                           f"{len(vs)} (one tensor per {what[:-1]}).")
    for i, (vi, a) in enumerate(zip(vs, against)):
        if tuple(vi.shape) != tuple(a.shape):
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {tuple(a.shape)} "
                               f"but got {tuple(vi.shape)}.")
    return vs


def _check_strategy(strategy: str, who: str) -> None:
    if strategy not in _STRATEGIES:
        raise ValueError(f'Expected strategy to be either "forward-mode" or "reverse-mode", '
                         f"got {strategy!r}.")
    if strategy == "forward-mode":
        raise NotImplementedError(
            f'{who}(strategy="forward-mode") is not implemented: difflab.autograd builds on '
            f"the tape's reverse walk. Use difflab.func.jacfwd (forward mode, dual numbers) "
            f'or strategy="reverse-mode".'
        )


def _jacobian_blocks(func: Callable, inputs: tuple, create_graph: bool, strict: bool,
                     who: str = "jacobian") -> tuple[bool, tuple]:
    """``(outputs were a tuple, J[i][j] for every output i and input j)``."""
    inputs = _prepare(inputs, create_graph)
    outputs_tuple, outputs = _call(func, inputs, who)
    blocks = []
    for i, out in enumerate(outputs):
        flat = out.reshape(-1)
        rows: list[list] = [[] for _ in inputs]
        for k in range(flat.numel()):
            gs = _grads((flat[k],), inputs, (None,), create_graph)
            for j, g in enumerate(gs):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {j}. This is not allowed in strict mode."
                        )
                    g = zeros_like(inputs[j])
                rows[j].append(g)
        row_blocks = []
        for j, x in enumerate(inputs):
            shape = tuple(out.shape) + tuple(x.shape)
            if rows[j]:
                block = stack(rows[j]).reshape(shape)
            else:  # an empty output: an empty Jacobian of the right shape
                block = zeros(shape, dtype=x.dtype)
            row_blocks.append(block if create_graph else block._off_tape())
        blocks.append(tuple(row_blocks))
    return outputs_tuple, tuple(blocks)


@_records
def jacobian(
    func: Callable,
    inputs: Tensor | tuple[Tensor, ...],
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Tensor | tuple:
    r"""The Jacobian of ``func`` at ``inputs``, PyTorch's ``autograd.functional.jacobian``.

    .. math:: J_{ij}[o, i] = \frac{\partial\, \mathrm{out}_i[o]}{\partial\, \mathrm{in}_j[i]}

    computed row by row: each element of each output starts one reverse walk
    (:func:`difflab.autograd.grad`), giving e_oᵀJ.

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` (unpacked) and returns a tensor or a tuple
        of tensors.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    create_graph : bool, default False
        Record the walks, so the Jacobian can be differentiated again.
    strict : bool, default False
        Raise when an output does not depend on an input (instead of zeros).
    vectorize : bool, default False
        Accepted for PyTorch's signature; the same loop of walks runs either way.
    strategy : {"reverse-mode", "forward-mode"}, default "reverse-mode"
        Only reverse mode is implemented here (use :func:`difflab.func.jacfwd`
        for forward mode).

    Returns
    -------
    Tensor or tuple
        A tensor of shape ``output.shape + input.shape`` for one output and one
        input; a tuple over inputs (one output), over outputs (one input), or a
        tuple of tuples ``J[i][j]`` (tuples on both sides).

    Raises
    ------
    TypeError
        If ``inputs`` or the outputs of ``func`` are not a tensor or a tuple of tensors.
    RuntimeError
        If ``strict`` and an output is independent of an input.
    NotImplementedError
        For ``strategy="forward-mode"``.
    ValueError
        For an unknown ``strategy``.

    See Also
    --------
    hessian : the Jacobian of the gradient.
    vjp : one row combination vᵀJ, for one walk.
    difflab.jacobian : the same matrix by any of the four methods.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0])
    >>> dl.autograd.functional.jacobian(lambda x: x ** 2, x)
    tensor([[2., 0.],
            [0., 4.]])
    >>> J = dl.autograd.functional.jacobian(lambda a, b: a * b, (x, dl.tensor([3.0, 4.0])))
    >>> [tuple(block.shape) for block in J]
    [(2, 2), (2, 2)]
    >>> J[1]
    tensor([[1., 0.],
            [0., 2.]])
    """
    del vectorize  # the same loop of walks (see the module's docstring)
    _check_strategy(strategy, "jacobian")
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    outputs_tuple, blocks = _jacobian_blocks(func, xs, create_graph, strict)
    return _unpack(blocks, (outputs_tuple, inputs_tuple))


@_records
def hessian(
    func: Callable,
    inputs: Tensor | tuple[Tensor, ...],
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Tensor | tuple:
    r"""The Hessian of a scalar ``func`` at ``inputs``, PyTorch's ``autograd.functional.hessian``.

    .. math:: H_{jk}[a, b] = \frac{\partial^2 f}{\partial\, \mathrm{in}_j[a]\,
              \partial\, \mathrm{in}_k[b]}

    the Jacobian of the recorded gradient (reverse over reverse).

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` and returns a tensor with a single element.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    create_graph : bool, default False
        Record the walks, so the Hessian can be differentiated again.
    strict : bool, default False
        Raise when the gradient does not depend on an input (instead of zeros).
    vectorize : bool, default False
        Accepted for PyTorch's signature; the same loop of walks runs either way.
    outer_jacobian_strategy : {"reverse-mode", "forward-mode"}, default "reverse-mode"
        Only reverse mode is implemented here.

    Returns
    -------
    Tensor or tuple of tuple of Tensor
        ``H`` of shape ``input.shape + input.shape`` for one input; for a tuple of
        inputs, the blocks ``H[j][k]`` of shape ``in_j.shape + in_k.shape``.

    Raises
    ------
    RuntimeError
        If ``func`` does not return one tensor with a single element, or if
        ``strict`` and the gradient is independent of an input.
    TypeError
        If ``inputs`` is not a tensor or a tuple of tensors.
    NotImplementedError
        For ``outer_jacobian_strategy="forward-mode"``.

    See Also
    --------
    hvp, vhp : a Hessian-vector product without the whole matrix.
    difflab.hessian : the same matrix by any of the four methods.

    Examples
    --------
    >>> import difflab as dl
    >>> f = lambda x: (x ** 3).sum()
    >>> dl.autograd.functional.hessian(f, dl.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    >>> H = dl.autograd.functional.hessian(lambda a, b: (a * b).sum(),
    ...                                    (dl.tensor([1.0]), dl.tensor([2.0])))
    >>> H[0][1]
    tensor([[1.]])
    """
    del vectorize
    _check_strategy(outer_jacobian_strategy, "hessian")
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "hessian")

    def scalar_func(*args: Tensor) -> Tensor:
        out = func(*args)
        if isinstance(out, tuple) or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor, "
                               f"not {type(out).__name__}.")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a "
                f"single element, but it has shape {tuple(out.shape)}. Reduce it first "
                "(e.g. .sum())."
            )
        if strict and not out.requires_grad:
            raise RuntimeError("The output of the user-provided function does not require "
                               "gradients. This is not allowed in strict mode.")
        return out.reshape(())

    def gradient(*args: Tensor) -> tuple:
        _, blocks = _jacobian_blocks(scalar_func, args, True, strict, "hessian")
        return blocks[0]

    _, blocks = _jacobian_blocks(gradient, xs, create_graph, strict, "hessian")
    return _unpack(blocks, (inputs_tuple, inputs_tuple))


@_records
def vjp(
    func: Callable,
    inputs: Tensor | tuple[Tensor, ...],
    v: Tensor | tuple[Tensor, ...] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    r"""The vector-Jacobian product vᵀJ, PyTorch's ``torch.autograd.functional.vjp``.

    .. math:: \mathrm{vjp}_j = \sum_i v_i^\top \frac{\partial\, \mathrm{out}_i}
              {\partial\, \mathrm{in}_j}

    one reverse walk seeded with v.

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` and returns a tensor or a tuple of tensors.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        One tensor of each output's shape; may be omitted only for a single
        output with a single element (then v = 1).
    create_graph : bool, default False
        Record the walk, so the product can be differentiated again.
    strict : bool, default False
        Raise when the outputs do not depend on an input (instead of zeros).

    Returns
    -------
    func_output : Tensor or tuple of Tensor
        ``func(*inputs)``.
    vjp : Tensor or tuple of Tensor
        One tensor per input, of its shape (a tuple if ``inputs`` is one).

    Raises
    ------
    RuntimeError
        If ``v`` is missing or of the wrong shape, or if ``strict`` and the
        outputs are independent of an input.
    TypeError
        If ``inputs`` or the outputs are not a tensor or a tuple of tensors.

    See Also
    --------
    jvp : the other product, Jv.
    difflab.autograd.grad : the walk it runs.

    Examples
    --------
    >>> import difflab as dl
    >>> out, g = dl.autograd.functional.vjp(lambda x: x ** 2, dl.tensor([1.0, 2.0]),
    ...                                     dl.tensor([1.0, 1.0]))
    >>> out, g
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(xs, create_graph)
    outputs_tuple, outputs = _call(func, xs, "vjp")
    vs = _check_v(v, outputs, "vjp", "outputs")
    gs = _grads(outputs, xs, vs, create_graph)
    gs = _fill(gs, xs, strict, "The output of the user-provided function is independent of "
                               "input {i}. This is not allowed in strict mode.")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(gs, create_graph), inputs_tuple))


def _double_backward(outputs: tuple, xs: tuple, vs: tuple, create_graph: bool,
                     strict: bool) -> tuple:
    """Jv by the double-backward trick: d/du (uᵀJ) seeded with v."""
    us = tuple(zeros_like(out)._off_tape().requires_grad_(True) for out in outputs)
    grads_x = _grads(outputs, xs, us, True)
    grads_x = tuple(g for g in grads_x if g is not None)
    if not grads_x:
        jv: tuple = (None,) * len(outputs)
    else:
        jv = _grads(grads_x, us, vs, create_graph)
    return _fill(jv, outputs, strict, "The output {i} of the user-provided function is "
                                      "independent of the inputs. This is not allowed in "
                                      "strict mode.")


@_records
def jvp(
    func: Callable,
    inputs: Tensor | tuple[Tensor, ...],
    v: Tensor | tuple[Tensor, ...] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    r"""The Jacobian-vector product Jv, PyTorch's ``torch.autograd.functional.jvp``.

    .. math:: \mathrm{jvp}_i = \sum_j \frac{\partial\, \mathrm{out}_i}
              {\partial\, \mathrm{in}_j} v_j

    by the double-backward trick (as PyTorch): u ↦ uᵀJ is linear in u, so
    its gradient with respect to u, seeded with v, is Jv. Two reverse walks,
    no forward mode.

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` and returns a tensor or a tuple of tensors.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        One tensor of each input's shape; may be omitted only for a single
        input with a single element (then v = 1).
    create_graph : bool, default False
        Record the walks, so the product can be differentiated again.
    strict : bool, default False
        Raise when an output does not depend on the inputs (instead of zeros).

    Returns
    -------
    func_output : Tensor or tuple of Tensor
        ``func(*inputs)``.
    jvp : Tensor or tuple of Tensor
        One tensor per output, of its shape.

    Raises
    ------
    RuntimeError
        If ``v`` is missing or of the wrong shape, or if ``strict`` and an output
        is independent of the inputs.
    TypeError
        If ``inputs`` or the outputs are not a tensor or a tuple of tensors.

    See Also
    --------
    vjp : the product the trick differentiates.
    difflab.func.jvp : forward mode, with dual numbers.

    Examples
    --------
    >>> import difflab as dl
    >>> out, jv = dl.autograd.functional.jvp(lambda x: x ** 2, dl.tensor([1.0, 2.0]),
    ...                                      dl.tensor([1.0, 0.5]))
    >>> jv
    tensor([2., 2.])
    """
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, "jvp", "inputs")
    outputs_tuple, outputs = _call(func, xs, "jvp")
    jv = _double_backward(outputs, xs, vs, create_graph, strict)
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(jv, create_graph), outputs_tuple))


def _scalar_output(func: Callable, xs: tuple, who: str) -> Tensor:
    _, outputs = _call(func, xs, who)
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError(f"The function given to {who} should return a single Tensor with a "
                           f"single element (reduce it first, e.g. .sum()).")
    return outputs[0]


@_records
def vhp(
    func: Callable,
    inputs: Tensor | tuple[Tensor, ...],
    v: Tensor | tuple[Tensor, ...] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Any]:
    r"""The vector-Hessian product vᵀH of a scalar function, PyTorch's ``vhp``.

    .. math:: \mathrm{vhp}_k = \sum_j v_j^\top \frac{\partial^2 f}
              {\partial\, \mathrm{in}_j\, \partial\, \mathrm{in}_k}

    the vjp of the recorded gradient: two reverse walks.

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` and returns a tensor with a single element.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        One tensor of each input's shape; may be omitted only for a single
        input with a single element.
    create_graph : bool, default False
        Record the walks, so the product can be differentiated again.
    strict : bool, default False
        Raise when the gradient does not depend on an input (instead of zeros).

    Returns
    -------
    func_output : Tensor
        ``func(*inputs)``.
    vhp : Tensor or tuple of Tensor
        One tensor per input, of its shape.

    Raises
    ------
    RuntimeError
        If ``func`` does not return a single element, ``v`` is missing or of the
        wrong shape, or if ``strict`` and the gradient is independent of an input.
    TypeError
        If ``inputs`` is not a tensor or a tuple of tensors.

    See Also
    --------
    hvp : Hv (equal to vᵀH for a twice continuously differentiable f).
    hessian : the whole matrix.

    Examples
    --------
    >>> import difflab as dl
    >>> out, p = dl.autograd.functional.vhp(lambda x: (x ** 3).sum(), dl.tensor([1.0, 2.0]),
    ...                                     dl.tensor([1.0, 1.0]))
    >>> out, p
    (tensor(9.), tensor([ 6., 12.]))
    """
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "vhp")
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, "vhp", "inputs")
    out = _scalar_output(func, xs, "vhp")
    message = ("The jacobian of the user-provided function is independent of input {i}. "
               "This is not allowed in strict mode.")
    if strict and not out.requires_grad:
        raise RuntimeError(message.format(i=0))
    gs = tuple(g for g in _grads((out,), xs, (None,), True))
    used = [g is not None for g in gs]
    first = tuple(g for g in gs if g is not None)
    products = _grads(first, xs, tuple(v_ for v_, u in zip(vs, used) if u), create_graph)
    products = _fill(products, xs, strict, message)
    return _finish((out,), create_graph)[0], _unpack(_finish(products, create_graph),
                                                     inputs_tuple)


@_records
def hvp(
    func: Callable,
    inputs: Tensor | tuple[Tensor, ...],
    v: Tensor | tuple[Tensor, ...] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Any]:
    r"""The Hessian-vector product Hv of a scalar function, PyTorch's ``hvp``.

    .. math:: \mathrm{hvp}_j = \sum_k \frac{\partial^2 f}
              {\partial\, \mathrm{in}_j\, \partial\, \mathrm{in}_k} v_k

    the jvp of the recorded gradient by the double-backward trick (three
    reverse walks, as PyTorch). For a twice continuously differentiable f, H is
    symmetric and :func:`vhp` gives the same numbers in one walk fewer.

    Parameters
    ----------
    func : callable
        Takes the tensors of ``inputs`` and returns a tensor with a single element.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        One tensor of each input's shape; may be omitted only for a single
        input with a single element.
    create_graph : bool, default False
        Record the walks, so the product can be differentiated again.
    strict : bool, default False
        Raise when the gradient does not depend on an input (instead of zeros).

    Returns
    -------
    func_output : Tensor
        ``func(*inputs)``.
    hvp : Tensor or tuple of Tensor
        One tensor per input, of its shape.

    Raises
    ------
    RuntimeError
        If ``func`` does not return a single element, ``v`` is missing or of the
        wrong shape, or if ``strict`` and the gradient is independent of an input.
    TypeError
        If ``inputs`` is not a tensor or a tuple of tensors.

    See Also
    --------
    vhp : vᵀH.
    jvp : the double-backward trick on any function.

    Examples
    --------
    >>> import difflab as dl
    >>> f = lambda a, b: (a ** 2 * b).sum()
    >>> out, (ha, hb) = dl.autograd.functional.hvp(
    ...     f, (dl.tensor([1.0]), dl.tensor([3.0])), (dl.tensor([1.0]), dl.tensor([0.0])))
    >>> ha, hb
    (tensor([6.]), tensor([2.]))
    """
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "hvp")
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, "hvp", "inputs")
    out = _scalar_output(func, xs, "hvp")
    message = ("The jacobian of the user-provided function is independent of input {i}. "
               "This is not allowed in strict mode.")
    if strict and not out.requires_grad:
        raise RuntimeError(message.format(i=0))
    gs = _grads((out,), xs, (None,), True)
    if strict:
        for i, g in enumerate(gs):
            if g is None or not g.requires_grad:  # the gradient is constant in the inputs
                raise RuntimeError(message.format(i=i))
    gs = tuple(g if g is not None else zeros_like(x) for g, x in zip(gs, xs))
    products = _double_backward(gs, xs, vs, create_graph, False)
    return _finish((out,), create_graph)[0], _unpack(_finish(products, create_graph),
                                                     inputs_tuple)
