"""``Module``: the base class of every layer and model.

A module keeps three ordered registries, filled by plain attribute
assignment in ``__init__``:

* ``_parameters``: :class:`~difflab.nn.Parameter` objects (trained);
* ``_buffers``: tensors that are state but not trained (BatchNorm's
  running averages), registered with :meth:`Module.register_buffer`;
* ``_modules``: child modules.

Everything else (``parameters()``, ``state_dict()``, ``to()``, ``train()``,
the ``repr``) walks these registries recursively.  ``model(x)`` calls
``model.forward(x)``; the tape records whatever ``forward`` does, Python
control flow included (a *dynamic* graph).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from difflab import backend
from difflab.dtypes import as_dtype, bfloat16
from difflab.nn.parameter import Parameter
from difflab.tensor import Tensor
from difflab.tensor_arguments import to_arguments


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list


def _to_array_like(value: Any, like: Tensor) -> Any:
    """``value`` (Tensor or array) as an array with ``like``'s dtype and device."""
    array = value.array if isinstance(value, Tensor) else value
    if not hasattr(array, "shape"):
        array = np.asarray(array)
    array = backend.to_device(array, like.device) if like.is_cuda else backend.to_numpy(array)
    return array.astype(like.dtype, copy=False)


def zero_grads(parameters: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Forget the gradients before the next backward (which would add to them):
    ``.grad = None``, or fill them with zeros."""
    for p in parameters:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad.array[...] = 0


class Module:
    """Base class for all layers and models: subclass it and write ``forward``.

    >>> class TwoLayerNet(Module):
    ...     def __init__(self, d_in, h, d_out):
    ...         super().__init__()
    ...         self.fc1, self.fc2 = Linear(d_in, h), Linear(h, d_out)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())

    # ------------------------------------------------------------- calling
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} has no forward(): define forward(self, ...) in your Module"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ----------------------------------------------------- attribute routing
    def _check_init(self) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign parameters or modules before Module.__init__() call: call "
                f"super().__init__() first in {type(self).__name__}.__init__"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init()
            self._remove_from(name, d["_buffers"], d["_modules"])
            d.pop(name, None)
            d["_parameters"][name] = value
        elif isinstance(value, Module):
            self._check_init()
            self._remove_from(name, d["_parameters"], d["_buffers"])
            d.pop(name, None)
            d["_modules"][name] = value
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as parameter '{name}' "
                    f"(a Parameter or None expected; wrap it: nn.Parameter(value))"
                )
            d["_parameters"][name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as child module '{name}' "
                    f"(a Module or None expected)"
                )
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer '{name}'")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *registries: dict) -> None:
        for registry in registries:
            registry.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in d.get(registry, {}):
                del d[registry][name]
                d["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        extra = list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(super().__dir__()) | set(extra))

    # ----------------------------------------------------------- registering
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a declared-but-absent one like a missing bias)."""
        self._check_init()
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter '{name}' "
                            f"(nn.Parameter or None required)")
        if "." in name or not name:
            raise KeyError(f"parameter name can't contain '.' or be empty, got {name!r}")
        self.__dict__.pop(name, None)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state, not a parameter (in the state_dict if persistent)."""
        self._check_init()
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register {type(tensor).__name__} as buffer '{name}' "
                            f"(a Tensor or None required)")
        if "." in name or not name:
            raise KeyError(f"buffer name can't contain '.' or be empty, got {name!r}")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_init()
        self.__dict__.pop(name, None)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The module at dotted path ``target`` ('' is self)."""
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no submodule '{part}'")
            module = module._modules[part]
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter '{name}'")
        return module._parameters[name]

    # ---------------------------------------------------------------- walking
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for self and every descendant, each once."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a shared parameter appears once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module and its descendants (each once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout active, batch statistics); returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (no dropout, running statistics); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients (``.grad = None``, or fill them with zeros)."""
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child (recursively) and then on self, e.g. to initialise."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # --------------------------------------------------------- devices, dtypes
    def _convert(self, convert: Callable[[Any], Any], floating_only: bool) -> Module:
        """Replace every parameter's and buffer's array in place (the objects stay the same,
        so an optimizer built before ``to()`` still holds the right tensors)."""
        for m in self.modules():
            for registry in (m._parameters, m._buffers):
                for t in registry.values():
                    if t is None or (floating_only and t.dtype.kind not in "fc"):
                        continue
                    t.array = convert(t.array)
                    if t.grad is not None:
                        t.grad.array = convert(t.grad.array)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(device)``, ``to(dtype)`` or ``to(device, dtype)``; floating tensors change dtype."""
        device, dtype = to_arguments(args, kwargs)
        if device is not None:
            dev = backend.device(device)
            self._convert(lambda a: backend.to_device(a, dev), floating_only=False)
        if dtype is not None:
            dtype = as_dtype(dtype)
            if dtype.kind not in "fc":
                raise TypeError(f"Module.to only accepts floating dtypes, got {dtype}")
            self._convert(lambda a: a.astype(dtype.dtype), floating_only=True)
        return self

    def cuda(self, device: Any = None) -> Module:
        return self.to("cuda" if device is None else backend.Device("cuda", int(device)))

    def cpu(self) -> Module:
        return self.to("cpu")

    def double(self) -> Module:
        return self.to(np.float64)

    def float(self) -> Module:
        return self.to(np.float32)

    def half(self) -> Module:
        return self.to(np.float16)

    def bfloat16(self) -> Module:
        """Floating parameters and buffers as bfloat16 (needs ml_dtypes, as
        ``difflab.bfloat16``)."""
        return self.to(bfloat16)

    def type(self, dst_type: Any) -> Module:
        return self.to(dst_type)

    # ------------------------------------------------------------ state dict
    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """name -> tensor for every parameter and persistent buffer.

        The tensors share memory with the module's (as in PyTorch): save them
        with :func:`difflab.serialization.save`, or ``copy`` them, before training further.
        """
        destination = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def _state_targets(self) -> OrderedDict:
        return self.state_dict(keep_vars=True)

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        With ``strict=True`` (the default) the keys must match exactly: any
        missing or unexpected key is an error that lists them all.  A shape
        mismatch is always an error.  Nothing is copied unless everything
        checks out.  Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"expected a dict (a state_dict), got {type(state_dict).__name__}")
        targets = self._state_targets()
        missing = [k for k in targets if k not in state_dict]
        unexpected = [k for k in state_dict if k not in targets]
        errors = []
        if strict:
            if missing:
                errors.append("Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ".")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ".")
        converted = {}  # every value converted before any is copied: all or nothing
        for key, target in targets.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            try:
                shape = tuple(getattr(value, "shape", np.shape(value)))
            except (TypeError, ValueError) as exc:
                errors.append(f"the value for {key} is not an array ({exc}).")
                continue
            if shape != tuple(target.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {shape} from "
                    f"checkpoint, the shape in current model is {tuple(target.shape)}."
                )
                continue
            try:
                converted[key] = _to_array_like(value, target)
            except (TypeError, ValueError) as exc:
                kind = getattr(getattr(value, "dtype", None), "name", type(value).__name__)
                errors.append(f"cannot copy {key} ({kind}) into a {target.dtype} "
                              f"parameter: {exc}.")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        for key, array in converted.items():
            targets[key].array[...] = array
            targets[key]._version[0] += 1
        return _IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr line (override it)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {child_repr}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def num_parameters(self, trainable_only: bool = False) -> int:
        """How many numbers the parameters hold."""
        return sum(int(p.numel()) for p in self.parameters()
                   if p.requires_grad or not trainable_only)
