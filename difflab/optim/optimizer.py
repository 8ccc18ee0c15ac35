"""The ``Optimizer`` base class: parameter groups, ``zero_grad``, ``state_dict``.

An optimizer holds references to the model's parameters (grouped, each
group with its own hyper-parameters such as ``lr``) and, per parameter, a
``state`` dict (momentum buffers, moment estimates, step counts).  ``step()``
reads each ``p.grad`` and updates ``p`` *in place*, outside the tape: the
update itself is not something to differentiate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from difflab import backend, fastpath
from difflab.autograd.engine import GraphRecorder
from difflab.nn.modules.module import zero_grads
from difflab.tensor import Tensor


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()



def check_implementation(foreach: bool | None = None, fused: bool | None = None,
                         capturable: bool = False, differentiable: bool = False) -> None:
    """Check PyTorch's four switches of how an optimizer computes its step (not what).

    ``foreach`` (one operation over all the parameters), ``fused`` (one kernel) and
    ``capturable`` (a step a CUDA graph can record) choose an implementation; difflab
    picks its own (the foreach shortcut of ``difflab/optim/foreach.py`` where it
    applies) and computes the same numbers, so they are accepted.
    ``differentiable=True`` asks for the step itself to be recorded on the tape (to
    differentiate through an update), which difflab's in-place steps are not: refused.

    Parameters
    ----------
    foreach, fused : bool, optional
        Accepted (None, True or False).
    capturable : bool, default False
        Accepted.
    differentiable : bool, default False
        Only False.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        For a switch that is not a bool (or None).
    NotImplementedError
        For ``differentiable=True``.

    Examples
    --------
    >>> from difflab.optim.optimizer import check_implementation
    >>> check_implementation(foreach=True, fused=None)
    >>> check_implementation(differentiable=True)
    Traceback (most recent call last):
    ...
    NotImplementedError: differentiable=True: ...
    """
    for name, value, may_be_none in (("foreach", foreach, True), ("fused", fused, True),
                                     ("capturable", capturable, False),
                                     ("differentiable", differentiable, False)):
        if not isinstance(value, bool) and not (may_be_none and value is None):
            raise TypeError(f"{name} must be True or False"
                            f"{' (or None)' if may_be_none else ''}, got {value!r}")
    if differentiable:
        raise NotImplementedError(
            "differentiable=True: difflab's optimizers update the parameters in place, "
            "outside the tape, so a step cannot be differentiated; to differentiate through "
            "an update, write it as a function of the parameters (p - lr * g) and use "
            "difflab.func.grad on it")


class Optimizer:
    """Base class of the optimizers: parameter groups, per-parameter state, ``state_dict``.

    An optimizer holds references to the model's parameters, in *parameter
    groups* (each with its own hyper-parameters such as ``lr``), and per
    parameter a ``state`` dict (momentum buffers, moment estimates, step counts).
    :meth:`step` reads each ``p.grad`` and updates ``p`` in place, outside the
    tape: the update itself is not something to differentiate.  A subclass
    implements ``_update(xp, p, g, state, group)`` on the raw arrays.

    Parameters
    ----------
    params : iterable of Tensor, or iterable of dict
        The tensors to optimise (``model.parameters()``), or parameter groups:
        dicts with a ``"params"`` entry and any hyper-parameters that differ from
        ``defaults``.
    defaults : dict
        The hyper-parameters every group gets unless it sets its own.

    Attributes
    ----------
    param_groups : list of dict
        The groups, each with its ``"params"`` list and every hyper-parameter
        (a learning-rate scheduler changes ``group["lr"]``).
    state : dict
        Parameter -> its state dict, filled on the first :meth:`step`.
    defaults : dict
        As given.

    Raises
    ------
    TypeError
        If ``params`` is a single Tensor (wrap it in a list) or holds something
        that is not a Tensor.
    ValueError
        If ``params`` is empty (a used-up generator, say), holds a non-leaf tensor,
        or lists a parameter twice.

    See Also
    --------
    SGD, Adam, AdamW, difflab.optim.lr_scheduler

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> opt = optim.SGD([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.01}],
    ...                 lr=0.1)
    >>> [group["lr"] for group in opt.param_groups]
    [0.1, 0.01]
    >>> optim.SGD(model.weight, lr=0.1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    TypeError: params argument given to the optimizer ... (wrap it in a list: [t])
    """

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got a single Tensor (wrap it in a list: [t])"
            )
        self.defaults = defaults
        self.state: dict = {}
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError(
                f"{type(self).__name__} got an empty parameter list: pass model.parameters() "
                f"of a model that has parameters (was the generator already used up?)"
            )
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (a smaller lr, say).

        The group's missing hyper-parameters are taken from ``defaults``.

        Parameters
        ----------
        param_group : dict
            ``{"params": tensors, "lr": ..., ...}``; ``"params"`` may be one tensor
            or an iterable of them.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            If ``param_group`` is not a dict or holds a non-Tensor.
        ValueError
            If the group is empty, holds a non-leaf tensor, shares a parameter with
            another group, or leaves out a required hyper-parameter.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> body, head = nn.Linear(4, 4), nn.Linear(4, 2)
        >>> opt = optim.SGD(body.parameters(), lr=0.01)
        >>> opt.add_param_group({"params": head.parameters(), "lr": 0.1})
        >>> [(len(g["params"]), g["lr"]) for g in opt.param_groups]
        [(2, 0.01), (2, 0.1)]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"a parameter group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor (one computed from others)")
        if not params:
            raise ValueError("optimizer got a parameter group with no parameters")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & {id(p) for p in params} or len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear in more than one parameter group")
        group = dict(param_group, params=params)
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {key}")
            group.setdefault(key, default)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients before the next backward (which would add to them).

        Parameters
        ----------
        set_to_none : bool, default True
            ``True`` sets ``p.grad = None`` (cheaper; a parameter without a gradient
            is skipped by :meth:`step`); ``False`` fills the gradients with zeros.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
        >>> opt = optim.SGD([p], lr=0.1)
        >>> (p ** 2).sum().backward()
        >>> opt.zero_grad()
        >>> p.grad is None
        True
        """
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (one step of the method).

        Parameters that have no gradient (``p.grad is None``) are skipped, and their
        state is not created.  With ``maximize=True`` the update climbs the gradient.

        Parameters
        ----------
        closure : callable, optional
            A function that recomputes the loss (zero_grad, forward, backward) and
            returns it.  It is called with gradients enabled before the update; most
            methods do not need it (:class:`LBFGS` does).

        Returns
        -------
        Any
            The closure's return value (the loss), or None without a closure.

        Raises
        ------
        RuntimeError
            If a gradient's shape differs from its parameter's.
        NotImplementedError
            On the base class, which has no update rule.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
        >>> opt = optim.SGD([p], lr=0.1)
        >>> (p ** 2).sum().backward()          # the gradient is 2p
        >>> opt.step()
        >>> p.detach()
        tensor([0.8, 1.6])
        """
        self._tell_the_tracer()
        loss = None
        if closure is not None:
            from difflab.autograd.grad_mode import enable_grad

            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            flat_step = type(self).__dict__.get("_flat_step")  # (speed shortcut: foreach.py)
            if flat_step is not None and fastpath.ENABLED and flat_step(self, group):
                continue
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.array
                if g.shape != p.shape:
                    raise RuntimeError(
                        f"gradient of shape {tuple(g.shape)} for a parameter of shape "
                        f"{tuple(p.shape)}"
                    )
                state = self.state.setdefault(p, {})
                xp = backend.array_module(p.array)
                self._update(xp, p.array, g if not group.get("maximize") else -g, state, group)
                p._version[0] += 1
        return loss

    def _tell_the_tracer(self) -> None:
        """A step inside a traced call (``dl.compile``) updates arrays and Python state
        that no graph records: the active recorder hears of it first (a graph break)."""
        if GraphRecorder.active is not None:
            GraphRecorder.active.side_effect(f"{type(self).__name__}.step()")

    def _update(self, xp: Any, p: Any, g: Any, state: dict, group: dict) -> None:
        """Update the array ``p`` in place from gradient ``g`` (subclasses)."""
        raise NotImplementedError

    @staticmethod
    def _buffer(state: dict, name: str, like: Any, fill: float = 0.0) -> Any:
        """The state array ``name`` (created full of ``fill`` on first use)."""
        if name not in state:
            xp = backend.array_module(like)
            state[name] = Tensor._wrap(xp.full(like.shape, fill, dtype=like.dtype))
        return state[name].array

    # ------------------------------------------------------------ state dict
    def state_dict(self) -> dict:
        """The optimizer's state as plain data: ``{"state": {...}, "param_groups": [...]}``.

        Parameters are numbered in group order, so the dict refers to no object and
        loads into a fresh optimizer over a fresh model of the same shape.  The state
        tensors are detached (they share memory with the optimizer's).

        Returns
        -------
        dict
            ``"state"``: parameter index -> its state (buffers, step counts);
            ``"param_groups"``: each group's hyper-parameters, with ``"params"`` the
            list of indices.

        See Also
        --------
        load_state_dict : the inverse.
        difflab.serialization.save : write it to a file, with the model's ``state_dict``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
        >>> opt = optim.SGD([p], lr=0.1, momentum=0.9)
        >>> (p ** 2).sum().backward()
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([2., 4.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["momentum"]
        ([0], 0.9)
        """
        index = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    state[index[id(p)]] = {k: (v.detach() if isinstance(v, Tensor) else v)
                                           for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the hyper-parameters and per-parameter state saved by :meth:`state_dict`.

        The state tensors are copied, converted to each parameter's dtype and device.

        Parameters
        ----------
        state_dict : dict
            What :meth:`state_dict` returned (possibly through ``dl.save`` and ``dl.load``).

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If it is not an optimizer state dict, the number or sizes of the groups
            differ, the state names a parameter that is not here, or a state tensor's
            shape differs from its parameter's.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> p, q = nn.Parameter(dl.ones(2)), nn.Parameter(dl.ones(2))
        >>> a = optim.Adam([p], lr=0.1)
        >>> p.sum().backward()
        >>> a.step()
        >>> b = optim.Adam([q], lr=0.5)
        >>> b.load_state_dict(a.state_dict())
        >>> b.param_groups[0]["lr"], b.state[q]["step"]
        (0.1, 1)
        """
        groups = state_dict.get("param_groups")
        if groups is None or "state" not in state_dict:
            raise ValueError("not an optimizer state_dict: expected keys 'state' and "
                             "'param_groups'")
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(groups)} parameter groups, this optimizer has "
                f"{len(self.param_groups)}"
            )
        for saved, group in zip(groups, self.param_groups):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group ({len(saved['params'])} vs {len(group['params'])})"
                )
        by_index = {}
        for saved, group in zip(groups, self.param_groups):
            for i, p in zip(saved["params"], group["params"]):
                by_index[int(i)] = p
            for key, value in saved.items():
                if key != "params":
                    group[key] = value
        self.state = {}
        for i, entries in state_dict["state"].items():
            p = by_index.get(int(i))
            if p is None:
                raise ValueError(f"optimizer state refers to parameter {i}, which is not here")
            restored = {}
            for key, value in entries.items():
                if key == "step" and isinstance(value, Tensor) and value.ndim == 0:
                    value = int(value.item())  # (PyTorch keeps the count as a float tensor)
                if isinstance(value, Tensor) or isinstance(value, np.ndarray):
                    array = value.array if isinstance(value, Tensor) else value
                    if tuple(array.shape) != tuple(p.shape) and array.ndim:
                        raise ValueError(
                            f"optimizer state '{key}' of parameter {i} has shape "
                            f"{tuple(array.shape)}, the parameter has {tuple(p.shape)}"
                        )
                    array = backend.to_device(array, p.device) if p.is_cuda else \
                        backend.to_numpy(array)
                    value = Tensor._wrap(array.astype(p.dtype, copy=True))
                restored[key] = value
            self.state[p] = restored
