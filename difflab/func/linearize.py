"""``linearize``: f's value and its linear map t ↦ J·t, with f evaluated once.

f is recorded on the tape once.  The linear map is read from that record with the
"double vjp": the backward pass u ↦ Jᵀu is itself recorded (``create_graph``) for a
dummy cotangent u, and since it is linear in u, the gradient of ⟨Jᵀu, t⟩ with respect
to u is J·t.  Each call of the returned function is two backward passes over the
record; f never runs again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from difflab import autograd
from difflab.func import _tree
from difflab.tensor import Tensor


def linearize(func: Callable, *primals: Any) -> tuple:
    r"""Evaluate ``func`` once and return its value and its linear map :math:`t \mapsto J t`.

    ``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the Jacobian-vector
    product :math:`J t` at ``primals``, computed without calling ``func`` again: worth it
    when many tangents are pushed through the same point (a Newton-Krylov solver, a
    Jacobian built column by column).

    Parameters
    ----------
    func : callable
        A function of tensors returning a tensor or a tuple/list/dict of them.
    *primals : Tensor
        The point (floating tensors).

    Returns
    -------
    tuple
        The output (detached), and ``jvp_fn``: it takes one tangent per primal, shaped
        like it, and returns tangents shaped like the output.  It may be called many
        times; each call is two backward passes over the one recorded evaluation (so
        every operation in ``func`` needs a twice-differentiable rule).

    Raises
    ------
    TypeError
        If a primal is not a floating tensor, or ``func`` returns something other than
        tensors.
    ValueError
        From ``jvp_fn``: when it is not given one tangent per primal, each a tensor
        shaped like its primal.

    See Also
    --------
    jvp : one Jacobian-vector product (evaluates ``func`` each time).
    vjp : the transposed map :math:`u \mapsto J^\top u`.
    jacfwd : the whole Jacobian, one column per input coordinate.

    Notes
    -----
    ``func`` is recorded on the tape once.  The backward pass
    :math:`u \mapsto J^\top u` is itself recorded (``create_graph``) for a dummy
    cotangent :math:`u`; since it is linear in :math:`u`,

    .. math::
        \nabla_u \langle J^\top u, t \rangle = J t ,

    a second backward pass gives the tangent (the "double vjp" trick).  Each call of
    ``jvp_fn`` costs two backward passes, however many times it is called.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import linearize
    >>> x = dl.tensor([0.0, 1.0], dtype=dl.float64)
    >>> out, jvp_fn = linearize(lambda x: x.sin() * x, x)
    >>> out.tolist() == [0.0, 1.0 * 0.8414709848078965]
    True
    >>> jvp_fn(dl.ones(2, dtype=dl.float64))         # (sin x + x cos x) * t
    tensor([0.    , 1.3818], dtype=difflab.float64)
    >>> jvp_fn(dl.tensor([0.0, 2.0], dtype=dl.float64))   # again: func does not run
    tensor([0.    , 2.7635], dtype=difflab.float64)
    >>> jvp_fn(dl.ones(3, dtype=dl.float64))         # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: jvp_fn: a tangent must be a tensor shaped like its primal (2,), got ...
    """
    for p in primals:
        if not isinstance(p, Tensor) or not p.dtype.is_floating_point:
            raise TypeError(f"linearize: primals must be floating tensors, got "
                            f"{type(p).__name__ if not isinstance(p, Tensor) else p.dtype}")
    with autograd.enable_grad():
        inputs = [p._off_tape().requires_grad_() for p in primals]
        out = func(*inputs)
    outs, rebuild = _tree.flatten(out)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"linearize: f must return tensors, got {type(o).__name__}")
    live = [o for o in outs if o.requires_grad]

    def jvp_fn(*tangents: Any) -> Any:
        if len(tangents) != len(inputs):
            raise ValueError(f"jvp_fn: expected {len(inputs)} tangent(s), one per primal, "
                             f"got {len(tangents)}")
        for t, p in zip(tangents, inputs):
            if not isinstance(t, Tensor) or tuple(t.shape) != tuple(p.shape):
                raise ValueError(f"jvp_fn: a tangent must be a tensor shaped like its primal "
                                 f"{tuple(p.shape)}, got {getattr(t, 'shape', type(t))}")
        results = {id(o): o._off_tape() * 0 for o in outs}  # (outputs that do not depend on x)
        if live:
            with autograd.enable_grad():
                dummies = [(o._off_tape() * 0).requires_grad_() for o in live]
                pulled = autograd.grad(live, inputs, grad_outputs=dummies, create_graph=True,
                                       retain_graph=True, allow_unused=True)
                pairing = [(g * t.to(g.dtype)).sum() for g, t in zip(pulled, tangents)
                           if g is not None and g.requires_grad]
                if pairing:
                    pushed = autograd.grad(sum(pairing), dummies, retain_graph=True,
                                           allow_unused=True)
                    for o, d, j in zip(live, dummies, pushed):
                        results[id(o)] = d._off_tape() * 0 if j is None else j._off_tape()
        return rebuild([results[id(o)] for o in outs])

    return rebuild([o._off_tape() for o in outs]), jvp_fn
