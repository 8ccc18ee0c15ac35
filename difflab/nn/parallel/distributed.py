"""``DistributedDataParallel``: the same model on every rank, gradients averaged in backward.

Why averaging gives single-process training
    With a global batch of B samples split evenly over N ranks, rank r
    computes the mean-loss gradient of its own B/N samples,
    g_r = (N/B) Σ_{i in rank r} ∇ℓ_i.  Their average over the ranks,

        (1/N) Σ_r g_r = (1/B) Σ_{all i} ∇ℓ_i,

    is the gradient one process would compute on the whole batch.  Every rank
    starts from rank 0's parameters and applies the same averaged gradient,
    so the ranks stay identical, step after step, to rounding.

Overlapping communication with backward
    Gradients become final one parameter at a time while backward runs
    (:meth:`~difflab.tensor.Tensor.register_post_accumulate_grad_hook`).  They are copied
    into *buckets*, flat arrays of about ``bucket_cap_mb`` MiB filled in
    reverse parameter order (the order backward produces them); a full
    bucket's sum over the ranks starts at once as a non-blocking MPI
    ``Iallreduce``, while backward carries on with earlier layers.  A
    callback queued for the end of the backward pass waits for every bucket,
    divides by the world size and writes the averages into ``.grad``.
    Buckets are started in the same order on every rank (MPI requires
    collectives in the same order everywhere): a bucket that fills early
    waits for the ones before it.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd import engine
from difflab.distributed import process_group as _pg
from difflab.distributed.collectives import _broadcast_array, _iallreduce_sum
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor


class _Bucket:
    """A flat array holding several parameters' gradients, reduced in one message."""

    def __init__(self, indices: list[int], params: list, dtype: np.dtype) -> None:
        self.indices = indices  # positions in DistributedDataParallel._params
        self.offsets = []
        size = 0
        for i in indices:
            self.offsets.append(size)
            size += params[i].array.size
        self.flat = np.zeros(size, dtype=dtype)
        self.filled = [False] * len(indices)
        self.pending = len(indices)  # gradients still to arrive in this backward pass
        self.request = None  # the Iallreduce in flight

    def reset(self) -> None:
        self.filled = [False] * len(self.indices)
        self.pending = len(self.indices)
        self.request = None


def _build_buckets(params: list, cap_bytes: float) -> list[_Bucket]:
    """Group the parameters, last first, into buckets of one dtype and about ``cap_bytes``.

    A bucket is closed once it reaches the cap, so one parameter larger than
    the cap gets a bucket of its own; a parameter is never split.
    """
    buckets, open_by_dtype = [], {}
    for i in reversed(range(len(params))):
        dtype = params[i].array.dtype
        indices = open_by_dtype.setdefault(dtype, [])
        indices.append(i)
        if sum(params[j].array.nbytes for j in indices) >= cap_bytes:
            buckets.append(_Bucket(indices, params, dtype))
            del open_by_dtype[dtype]
    for dtype, indices in open_by_dtype.items():
        buckets.append(_Bucket(indices, params, dtype))
    return buckets


class DistributedDataParallel(Module):
    """Train ``module`` on every rank of the process group as if on one process.

    ``DistributedDataParallel(model)`` copies rank 0's parameters and
    buffers to every rank; afterwards each ``loss.backward()`` leaves in
    every parameter's ``.grad`` the average of the ranks' gradients, so the
    optimizer steps agree on every rank.  Each rank feeds its own share of
    the batch (see :class:`~difflab.data.sampler.DistributedSampler`).

    For gradient accumulation, run the forward and backward passes of all
    micro-batches but the last inside ``with model.no_sync():``; they only add
    into each rank's own ``.grad``, and the last backward averages the sums.

    Parameters
    ----------
    module : the model; called by ``forward``, reachable as ``.module``.
    device_ids, output_device : PyTorch's way to say which GPU the process
        uses; difflab runs the module where its parameters are, so at most
        one device is accepted and nothing is moved.
    broadcast_buffers : copy rank 0's buffers (BatchNorm's running
        statistics) to every rank at each forward, so all ranks evaluate alike.
    process_group : the group to average over (default: the whole job).
    bucket_cap_mb : the size of one message, in MiB.  Small buckets start
        communicating early; large ones send fewer messages.
    find_unused_parameters : allow parameters that get no gradient in some
        backward passes (branches, frozen heads).  Costs one more small
        message per step; parameters unused on every rank keep ``.grad``
        as it was.  Without it, a parameter left without a gradient is an error.
    """

    def __init__(self, module: Module, device_ids: list | None = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool = True,
                 process_group: _pg.ProcessGroup | None = None, bucket_cap_mb: float = 25.0,
                 find_unused_parameters: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel wraps an nn.Module, got {type(module).__name__}"
            )
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError(
                "DistributedDataParallel: one device per process (device_ids=[local_rank]); "
                f"got {device_ids}. Start one process per device instead."
            )
        if not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb!r}")
        group = _pg._group(process_group, "DistributedDataParallel")
        self.module = module
        self.process_group = group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_cap_mb = bucket_cap_mb
        self.dim = dim
        self.require_backward_grad_sync = True  # False inside no_sync()
        names = [name for name, p in module.named_parameters() if p.requires_grad]
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._check_same_model(names)
        self._sync_module_states()
        self._buckets = _build_buckets(self._params, bucket_cap_mb * 2**20)
        self._where = {}  # parameter position -> (bucket, slot in it)
        for bucket in self._buckets:
            for slot, i in enumerate(bucket.indices):
                self._where[i] = (bucket, slot)
        self._sync_this_pass = True  # decided at forward, as in PyTorch
        self._pass_started = False
        self._next_bucket = 0
        # The hooks hold the wrapper weakly: a dropped wrapper leaves no live hooks.
        this = weakref.ref(self)
        self._hook_handles = [
            p.register_post_accumulate_grad_hook(_GradReadyHook(this, i))
            for i, p in enumerate(self._params)
        ]

    # ------------------------------------------------------------- set up
    def _check_same_model(self, names: list[str]) -> None:
        """Every rank must hold the same parameters (names, shapes, dtypes) and settings."""
        mine = (tuple((name, tuple(p.shape), str(p.array.dtype))
                      for name, p in zip(names, self._params)),
                bool(self.find_unused_parameters), float(self.bucket_cap_mb))
        everyone = self.process_group.comm.allgather(mine)
        for rank, theirs in enumerate(everyone):
            if theirs == everyone[0]:
                continue
            raise RuntimeError(
                "DistributedDataParallel: the model differs across ranks: "
                + _first_difference(everyone[0], theirs, rank)
                + ". Every rank must build the same model with the same arguments."
            )

    def _sync_module_states(self) -> None:
        """Rank 0's parameters and buffers, copied to every rank (one broadcast each)."""
        if self.process_group.size() == 1:
            return
        for p in self._params:
            _broadcast_array(self.process_group, p.data, 0)
        self._broadcast_buffers()

    def _broadcast_buffers(self) -> None:
        for buffer in self.module.buffers():
            if buffer is not None:
                _broadcast_array(self.process_group, buffer, 0)

    # ------------------------------------------------------------- running
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self._sync_this_pass = self.require_backward_grad_sync
        if self.broadcast_buffers and self.process_group.size() > 1:
            self._broadcast_buffers()
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside: backward only accumulates each rank's own gradients (no communication)."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    # ------------------------------------------------- during backward
    def _grad_ready(self, index: int) -> None:
        """Parameter ``index``'s gradient is final: into its bucket; start full buckets."""
        if not self._sync_this_pass:
            return
        if not self._pass_started:
            self._pass_started = True
            engine.queue_callback(self._finish_pass)
        bucket, slot = self._where[index]
        if bucket.filled[slot]:
            return
        grad = self._params[index].grad
        start = bucket.offsets[slot]
        bucket.flat[start:start + grad.array.size] = backend.to_numpy(grad.array).ravel()
        bucket.filled[slot] = True
        bucket.pending -= 1
        self._start_ready_buckets()

    def _start_ready_buckets(self) -> None:
        """Start the full buckets, strictly in bucket order (the same on every rank)."""
        while self._next_bucket < len(self._buckets):
            bucket = self._buckets[self._next_bucket]
            if bucket.pending:
                return
            bucket.request = _iallreduce_sum(self.process_group, bucket.flat)
            self._next_bucket += 1

    def _finish_pass(self) -> None:
        """At the end of backward: start what is left, wait for all, write the averages."""
        self._pass_started = False
        try:
            missing = [i for i in range(len(self._params))
                       if not self._where[i][0].filled[self._where[i][1]]]
            if missing and not self.find_unused_parameters:
                names = dict(zip(map(id, self.module.parameters()),
                                 (name for name, _ in self.module.named_parameters())))
                listed = ", ".join(names.get(id(self._params[i]), "?") for i in missing[:8])
                raise RuntimeError(
                    f"DistributedDataParallel: {len(missing)} parameter(s) received no gradient "
                    f"in this backward pass on rank {self.process_group.rank()} ({listed}). "
                    f"Every rank must average every gradient: make the loss depend on all "
                    f"parameters, freeze unused ones (requires_grad=False) before wrapping, "
                    f"or pass find_unused_parameters=True."
                )
            for i in missing:  # they contribute zero to the sum
                bucket, slot = self._where[i]
                start = bucket.offsets[slot]
                bucket.flat[start:start + self._params[i].array.size] = 0
                bucket.filled[slot] = True
                bucket.pending -= 1
            self._start_ready_buckets()
            used = None
            if self.find_unused_parameters:
                used = np.ones(len(self._params))
                used[missing] = 0
                self.process_group.comm.Allreduce(self.process_group.in_place, used,
                                                  op=self.process_group.ops[_pg.ReduceOp.SUM])
            size = self.process_group.size()
            for bucket in self._buckets:
                bucket.request.Wait()
                bucket.flat /= size
                for slot, i in enumerate(bucket.indices):
                    if used is None or used[i] > 0:
                        self._set_grad(self._params[i], bucket, slot)
        finally:
            self._next_bucket = 0
            for bucket in self._buckets:
                bucket.reset()

    @staticmethod
    def _set_grad(param: Tensor, bucket: _Bucket, slot: int) -> None:
        start = bucket.offsets[slot]
        average = bucket.flat[start:start + param.array.size].reshape(param.shape)
        average = backend.to_device(average, backend.device_of(param.array))
        if param.grad is None:  # unused here, used on another rank
            param.grad = Tensor._wrap(average.copy())
        else:
            param.grad.array[...] = average

    def __del__(self) -> None:
        for handle in getattr(self, "_hook_handles", ()):
            handle.remove()

    def extra_repr(self) -> str:
        return (f"world_size={self.process_group.size()}, buckets={len(self._buckets)}, "
                f"bucket_cap_mb={self.bucket_cap_mb}")


class _GradReadyHook:
    """The hook on one parameter: tells its wrapper (if still alive) that the grad is final."""

    def __init__(self, wrapper: weakref.ref, index: int) -> None:
        self.wrapper, self.index = wrapper, index

    def __call__(self, param: Tensor) -> None:
        wrapper = self.wrapper()
        if wrapper is not None:
            wrapper._grad_ready(self.index)


def _first_difference(first: tuple, other: tuple, rank: int) -> str:
    """Name the first thing that differs between rank 0's description and ``rank``'s."""
    params0, params = first[0], other[0]
    for a, b in zip(params0, params):
        if a != b:
            return (f"parameter '{a[0]}' has shape {a[1]} ({a[2]}) on rank 0 but "
                    f"'{b[0]}' has shape {b[1]} ({b[2]}) on rank {rank}")
    if len(params0) != len(params):
        return (f"rank 0 has {len(params0)} parameters that require grad, rank {rank} "
                f"has {len(params)}")
    return (f"find_unused_parameters / bucket_cap_mb are {first[1:]} on rank 0 but "
            f"{other[1:]} on rank {rank}")
