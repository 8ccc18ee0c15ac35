"""``torch.autograd.graph``: hooks on the values the tape saves for backward.

A record on the tape keeps what its backward step will read: ``x * y`` keeps
``x`` and ``y`` (∂(xy)/∂x = y), ``exp(x)`` keeps its output.  Those *saved
tensors* are why training holds more memory than inference.  Inside
``saved_tensors_hooks(pack_hook, unpack_hook)`` every value a new record saves
goes through ``pack_hook(tensor)`` at once, and the record keeps whatever that
returns (an index, a file name, a copy on the host); when the backward step
needs the value, ``unpack_hook(packed)`` must give the tensor back.  So a
program decides where its saved activations live (:class:`save_on_cpu`, a
file on disk) or just counts them.

Which values an operation saves is the operation's own choice, so the number
of ``pack_hook`` calls can differ from PyTorch's for the same program: difflab's
``exp`` keeps its output as PyTorch's does, but, for instance, a record of a
fused or composite operation may keep other intermediate arrays than
PyTorch's kernels.  The contract is the same: every saved value is packed once
when saved, unpacked each time the backward reads it, and the unpacked tensor
is what the derivative is computed from.  A compiled function
(:func:`difflab.compile`) called inside a region runs eagerly, so its values are
packed as well.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from difflab.autograd.saved_hooks import SavedTensorsHooks

__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]

#: The message of the innermost ``disable_saved_tensors_hooks``, else None.
_disabled: list = [None]


class saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """Pack every tensor the tape saves for backward, and unpack it when backward reads it.

    Inside the region, each operation that records itself on the tape hands
    every value its backward will need to ``pack_hook(tensor)`` (the tensor is
    the input itself when an input is saved); the record keeps what
    ``pack_hook`` returns instead of the value.  When the backward step runs,
    ``unpack_hook(packed)`` is called with it and must return a tensor with the
    values the derivative is to be computed from: the gradient uses that
    tensor.  Regions nest: the innermost one's hooks apply.  The hooks run with
    the region's hooks off, so what they compute is not packed again.

    Parameters
    ----------
    pack_hook : callable
        ``pack_hook(tensor) -> Any``, called once per saved value, when saved.
    unpack_hook : callable
        ``unpack_hook(packed) -> Tensor``, called each time backward reads the value.

    Raises
    ------
    RuntimeError
        On entering the region inside ``disable_saved_tensors_hooks(message)``
        (the message).
    TypeError
        At backward time, if ``unpack_hook`` returns something other than a tensor.

    See Also
    --------
    save_on_cpu : hooks that keep the saved values in host memory.

    Examples
    --------
    >>> import difflab as dl
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t
    >>> a = dl.ones(3, requires_grad=True)
    >>> b = dl.full((3,), 2.0, requires_grad=True)
    >>> with dl.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    ...     y = a * b
    >>> len(packed)
    2

    An unpack hook that changes the value changes the gradient: d(a*b)/da reads b:

    >>> with dl.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 10):
    ...     y = a * b
    >>> y.sum().backward(); a.grad
    tensor([20., 20., 20.])
    """

    def __init__(self, pack_hook: Callable[[Any], Any],
                 unpack_hook: Callable[[Any], Any]) -> None:
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(f"saved_tensors_hooks takes two callables, pack_hook and "
                            f"unpack_hook; got {type(pack_hook).__name__} and "
                            f"{type(unpack_hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._outer: list = []

    def __enter__(self) -> saved_tensors_hooks:
        if _disabled[-1] is not None:
            raise RuntimeError(_disabled[-1])
        self._outer.append(SavedTensorsHooks.active)
        SavedTensorsHooks.active = (self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        SavedTensorsHooks.active = self._outer.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (PyTorch's name)
    """Keep the tensors saved for backward in host memory; move them back for backward.

    ``saved_tensors_hooks`` whose pack hook copies each saved value to the CPU
    (``tensor.cpu()``; a CPU tensor stays as it is) with its device, and whose
    unpack hook moves it back to that device.  On a GPU this trades the
    device memory of the activations for two copies per value.

    Parameters
    ----------
    pin_memory : bool, default False
        Accepted for PyTorch's signature; the host copies are plain host arrays
        (difflab allocates no page-locked memory).
    device_type : str, default "cuda"
        Accepted for PyTorch's signature.

    See Also
    --------
    saved_tensors_hooks : the general hooks.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> with dl.autograd.graph.save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Any) -> tuple:
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed: tuple) -> Any:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)
        self.pin_memory = pin_memory
        self.device_type = device_type


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Refuse ``saved_tensors_hooks`` inside this region: entering one raises ``error_message``.

    For code that must keep its saved values as they are (a library whose
    backward reads them directly).  Hooks already active stay active.

    Parameters
    ----------
    error_message : str
        The message of the RuntimeError raised by entering a hooks region inside.

    Returns
    -------
    contextlib.AbstractContextManager
        The region (also usable as a decorator).

    Examples
    --------
    >>> import difflab as dl
    >>> with dl.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with dl.autograd.graph.save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """
    _disabled.append(str(error_message))
    try:
        yield
    finally:
        _disabled.pop()
