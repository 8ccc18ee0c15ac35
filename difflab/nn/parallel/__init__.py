"""Data parallelism: ``DistributedDataParallel`` and ``DataParallel`` (its alias).

:class:`~difflab.nn.parallel.distributed.DistributedDataParallel`,
:class:`~difflab.nn.parallel.data_parallel.DataParallel`.

See :mod:`difflab.distributed` for the process groups and collectives it
runs on, and the launcher ``python -m difflab.distributed.run``.
"""

from difflab.nn.parallel.data_parallel import DataParallel
from difflab.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
