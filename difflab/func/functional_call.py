"""``functional_call``: a module run with parameters and buffers passed in, as torch.func's."""

from __future__ import annotations

from typing import Any


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = (),
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with some parameters and buffers replaced.

    The module's own tensors are put back afterwards, even on an error.  This
    makes a network's output a plain function of its parameters, which the
    transforms of :mod:`difflab.func` differentiate and vectorize: per-example
    gradients are ``vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)``
    with ``loss`` calling ``functional_call(model, params, (x,))``.

    Parameters
    ----------
    module : the :class:`difflab.nn.Module` to call.
    parameter_and_buffer_dicts : a dict from dotted names (``"0.weight"``, as
        ``named_parameters`` gives them) to tensors, or a tuple of such dicts
        (their keys must not overlap).  Names left out keep the module's own.
    args : the positional arguments (a single non-tuple value is one argument).
    kwargs : the keyword arguments.
    tie_weights : a tensor given for one of several names that share one
        parameter (tied weights) replaces it under every name.
    strict : every parameter and buffer must be given, and no other name.

    Returns
    -------
    What the module returns.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import functional_call
    >>> layer = dl.nn.Linear(2, 1, bias=False)
    >>> functional_call(layer, {"weight": dl.tensor([[1.0, 2.0]])}, (dl.tensor([3.0, 4.0]),))
    tensor([11.])
    """
    dicts = parameter_and_buffer_dicts
    dicts = list(dicts) if isinstance(dicts, (tuple, list)) else [dicts]
    given: dict = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TypeError(f"functional_call: expected a dict of name -> tensor (or a tuple "
                            f"of them), got {type(d).__name__}")
        overlap = set(given) & set(d)
        if overlap:
            raise ValueError(f"functional_call: {sorted(overlap)} appear in more than one "
                             f"of the dicts; give each name once")
        given.update(d)
    owned = dict(module.named_parameters(remove_duplicate=False))
    owned.update(dict(module.named_buffers(remove_duplicate=False)))
    unknown = sorted(set(given) - set(owned))
    if unknown:
        raise ValueError(f"functional_call: {unknown} are not parameters or buffers of the "
                         f"module (it has {sorted(owned)})")
    if strict:
        missing = sorted(set(owned) - set(given))
        if missing:
            raise ValueError(f"functional_call(strict=True): missing {missing}")
    if tie_weights:  # a tied parameter: the same object under several names
        by_identity = {id(owned[name]): value for name, value in given.items()}
        given = {name: by_identity[id(t)] for name, t in owned.items()
                 if id(t) in by_identity}
    saved = []
    try:
        for name, value in given.items():
            owner_name, _, leaf = name.rpartition(".")
            owner = module.get_submodule(owner_name) if owner_name else module
            table = owner._parameters if leaf in owner._parameters else owner._buffers
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        args = args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for table, leaf, old in reversed(saved):
            table[leaf] = old
