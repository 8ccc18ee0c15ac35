"""``DataParallel``: PyTorch's single-process wrapper, here a name for DistributedDataParallel.

PyTorch's ``nn.DataParallel`` runs one process that, at every step, copies
the model to each GPU, splits the batch among them, runs the pieces in
threads and gathers the outputs on the first GPU.  The copies every step,
the threads competing for Python's interpreter lock and the one GPU that
gathers everything make it slower than one process per device, which is
why PyTorch itself recommends ``DistributedDataParallel`` instead.

difflab has only the better way.  ``DataParallel(model)`` is
:class:`~difflab.nn.parallel.distributed.DistributedDataParallel` over the
default process group when
:func:`~difflab.distributed.process_group.init_process_group` has been
called, and over a group of one process otherwise, where it just calls the
model: scripts written for ``nn.DataParallel`` run unchanged, on one
process, and scale by starting more with
``python -m difflab.distributed.run -n N``.
"""

from __future__ import annotations

from typing import Any

from difflab.distributed import process_group as _pg
from difflab.nn.modules.module import Module
from difflab.nn.parallel.distributed import DistributedDataParallel


class DataParallel(DistributedDataParallel):
    """PyTorch's ``nn.DataParallel``: ``DistributedDataParallel`` over the job's processes.

    Over the default process group when ``init_process_group`` has been called
    (each process computes its share of the batch and the gradients are
    averaged), and over a group of one process otherwise, where it just calls
    the model: scripts written for ``nn.DataParallel`` run unchanged on one
    process, and scale by starting more with ``python -m difflab.distributed.run -n N``.

    Parameters
    ----------
    module : Module
        The model; reach it again as ``.module``.
    device_ids : list of int, optional
        Accepted for PyTorch compatibility: one process, one device (a list of
        several is ignored).
    output_device : int, optional
        Accepted for PyTorch compatibility.
    dim : int, default 0
        The batch dimension.

    Attributes
    ----------
    module : Module
        The wrapped model.

    See Also
    --------
    difflab.nn.parallel.DistributedDataParallel

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> model = nn.DataParallel(nn.Linear(2, 1))
    >>> model(dl.ones(3, 2)).shape, type(model.module).__name__
    (difflab.Size([3, 1]), 'Linear')
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        group = None if _pg.is_initialized() else _pg._single_group()
        if device_ids is not None and len(device_ids) > 1:
            device_ids = None  # PyTorch would split over these GPUs; here one process, one device
        super().__init__(module, device_ids=device_ids, output_device=output_device, dim=dim,
                         process_group=group)
