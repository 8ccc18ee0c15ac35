"""Data-parallel training on MPI, with PyTorch's names (``torch.distributed``).

N copies of one training script run as the ranks 0..N-1 of a job, each on its
share of every batch; after each backward pass the ranks average their
gradients, so every rank takes the same optimizer step as one process would
on the whole batch.

    python -m difflab.distributed.run -n 4 train.py      # like torchrun

and in ``train.py``::

    import difflab.distributed as dist
    from difflab.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    model = DDP(model)                          # same start on every rank
    sampler = DistributedSampler(dataset)       # each rank its share
    ...

Collectives (:mod:`difflab.distributed.collectives`): ``all_reduce``,
``reduce``, ``broadcast``, ``all_gather``, ``barrier`` with ``ReduceOp``;
process groups (:mod:`difflab.distributed.process_group`):
``init_process_group``, ``get_rank``, ``get_world_size``, ``is_initialized``,
``destroy_process_group``.  The ``"mpi"`` backend needs the ``mpi`` extra
(mpi4py and MPICH); the ``"single"`` backend runs the same script alone
without it.
"""

from difflab.distributed.collectives import (
    Work,
    all_gather,
    all_reduce,
    barrier,
    broadcast,
    reduce,
)
from difflab.distributed.process_group import (
    ProcessGroup,
    ReduceOp,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
)

__all__ = [
    "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_reduce", "barrier", "broadcast",
    "destroy_process_group", "get_backend", "get_rank", "get_world_size", "init_process_group",
    "is_available", "is_initialized", "is_mpi_available", "reduce",
]
