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
    """``DistributedDataParallel`` over the job's processes, or over this process alone.

    ``device_ids``, ``output_device`` and ``dim`` are accepted for PyTorch
    compatibility; the module runs where its parameters are.
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        group = None if _pg.is_initialized() else _pg._single_group()
        if device_ids is not None and len(device_ids) > 1:
            device_ids = None  # PyTorch would split over these GPUs; here one process, one device
        super().__init__(module, device_ids=device_ids, output_device=output_device, dim=dim,
                         process_group=group)
