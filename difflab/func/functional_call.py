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


def stack_module_state(models: Any) -> tuple[dict, dict]:
    """The parameters and buffers of several same-shaped modules, stacked along a new dim 0.

    With :func:`functional_call` and :func:`~difflab.func.vmap` this runs an
    ensemble of models in one pass (``vmap(f, in_dims=(0, 0, None))``).  The
    stacked parameters are new leaves that require grad where the originals did.

    Parameters
    ----------
    models : a non-empty list of modules with the same parameter names and shapes.

    Returns
    -------
    ``(params, buffers)``: two dicts from names to stacked tensors.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import functional_call, stack_module_state, vmap
    >>> models = [dl.nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = stack_module_state(models)
    >>> params["weight"].shape
    difflab.Size([4, 2, 3])
    >>> def run(p, b, x):
    ...     return functional_call(models[0], (p, b), (x,))
    >>> vmap(run, in_dims=(0, 0, None))(params, buffers, dl.ones(5, 3)).shape
    difflab.Size([4, 5, 2])
    """
    from difflab.functions import stack

    models = list(models)
    if not models:
        raise ValueError("stack_module_state: expected at least one module")
    first = [dict(m.named_parameters()) for m in models]
    names = list(first[0])
    for n, named in enumerate(first):
        if list(named) != names:
            raise ValueError(f"stack_module_state: module {n} has parameters {list(named)}, "
                             f"module 0 has {names}; all must be alike")
    params = {}
    for name in names:
        stacked = stack([named[name].detach() for named in first])
        params[name] = stacked.requires_grad_() if first[0][name].requires_grad else stacked
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Make every batch-norm module in ``root`` use the batch's statistics, in place.

    Sets ``running_mean``, ``running_var`` and ``num_batches_tracked`` to ``None`` and
    ``track_running_stats`` to ``False``, as PyTorch does, so that under
    :func:`~difflab.func.vmap` a batch norm normalizes each mapped example with its own
    statistics and writes no running buffers (which vmap could not write per example).

    Parameters
    ----------
    root : Module
        The model; it is changed in place.

    Returns
    -------
    Module
        ``root``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import replace_all_batch_norm_modules_
    >>> model = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.BatchNorm1d(4))
    >>> replace_all_batch_norm_modules_(model)[1].running_mean is None
    True
    """
    for module in root.modules():
        # (nn sits above func: a batch norm is recognized by its base class's name)
        if any(c.__name__ == "_BatchNorm" for c in type(module).__mro__):
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                module.register_buffer(name, None)
            module.track_running_stats = False
    return root
