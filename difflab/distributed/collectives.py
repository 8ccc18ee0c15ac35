"""Collectives: operations that every rank calls together, each with its own tensor.

==============  ===========================================================
``all_reduce``  every rank's tensor becomes op(x_0, x_1, ..., x_{N-1})
``reduce``      only rank ``dst``'s tensor becomes op(x_0, ..., x_{N-1})
``broadcast``   every rank's tensor becomes rank ``src``'s
``all_gather``  every rank receives the list [x_0, ..., x_{N-1}]
``barrier``     no rank leaves until every rank has arrived
==============  ===========================================================

The names, arguments and in-place semantics are PyTorch's
(``torch.distributed``).  Every rank must call the same collectives in the
same order with tensors of the same shape and dtype; each call first checks
that they agree (one small message per call) and raises the same clear
error on every rank if they do not, instead of hanging or silently
reading past the end of a buffer.

Tensors on the GPU (CuPy) are copied to host memory, communicated, and
copied back: difflab does not assume a CUDA-aware MPI build.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import backend
from difflab.distributed.process_group import ProcessGroup, ReduceOp, _group
from difflab.tensor import Tensor


class Work:
    """A collective started with ``async_op=True``: ``wait()`` blocks until it is done.

    The tensor holds the result only after ``wait()`` returns, which is when the result
    is copied back into it (a GPU tensor, a strided view).  ``wait()`` may be called
    again: the work is finished once.  ``is_completed()`` says whether the
    communication has finished, without blocking.  The collectives make it; user code
    only waits on it.

    Parameters
    ----------
    request : object, optional
        The backend's request (mpi4py's ``Request`` of ``Iallreduce``), with ``Wait()``
        and ``Test()``; ``None`` for work that is already done.
    finish : callable, optional
        Run once by the first ``wait()``, after the request: writes the result into the
        tensor (and divides it, for ``ReduceOp.AVG``).

    See Also
    --------
    all_reduce : returns one with ``async_op=True``.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")
    >>> t = dl.tensor([1.0, 2.0])
    >>> work = dist.all_reduce(t, op=dist.ReduceOp.SUM, async_op=True)
    >>> work.wait(), t                             # (one rank: the sum is t itself)
    (True, tensor([1., 2.]))
    >>> dist.destroy_process_group()
    >>> done = dist.Work(finish=lambda: print("result written"))
    >>> done.wait()
    result written
    True
    >>> done.wait()                                # finished once
    True
    """

    def __init__(self, request: Any = None, finish: Callable[[], None] | None = None) -> None:
        self._request = request
        self._finish = finish
        self._done = False

    def is_completed(self) -> bool:
        """Whether the communication has finished (``wait()`` still writes the result)."""
        return self._done or self._request is None or bool(self._request.Test())

    def wait(self, timeout: Any = None) -> bool:
        if not self._done:
            if self._request is not None:
                self._request.Wait()
            if self._finish is not None:
                self._finish()
            self._done = True
        return True


# ------------------------------------------------------------ buffers and checks


def _check_tensor(tensor: Any, caller: str, name: str = "tensor") -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{caller}: {name} must be a difflab Tensor, got {type(tensor).__name__}")


def _host(tensor: Tensor) -> np.ndarray:
    """The tensor's values as a contiguous NumPy array that MPI can read and write.

    The tensor's own array when it already is one (no copy); otherwise a copy
    (a GPU array, a strided view), which :func:`_write_back` copies back.
    """
    array = tensor.array
    if type(array) is np.ndarray and array.flags.c_contiguous and array.flags.writeable:
        return array
    return np.ascontiguousarray(backend.to_numpy(array))


def _write_back(tensor: Tensor, host: np.ndarray) -> None:
    """Make ``tensor`` hold ``host``'s values, in its own memory, on its own device."""
    if host is not tensor.array:
        tensor.array[...] = backend.to_device(host, backend.device_of(tensor.array))
    tensor._version[0] += 1  # changed in place: a tape that saved it will notice


def _problem(tensor: Tensor, writes: bool, op: ReduceOp | None = None) -> str | None:
    """What is wrong with this rank's tensor for a collective, if anything."""
    if writes and not getattr(getattr(tensor.array, "flags", None), "writeable", True):
        return ("its tensor is read-only (a broadcast view?); pass a tensor that owns its "
                "memory: .clone() it first")
    if op is ReduceOp.AVG and tensor.array.dtype.kind not in "fc":
        return f"ReduceOp.AVG needs a floating point tensor, this one is {tensor.array.dtype}"
    return None


def _agree(group: ProcessGroup, caller: str, tensor: Tensor, writes: bool,
           **settings: Any) -> None:
    """Check that every rank passes a tensor of one shape and dtype, and the same settings.

    One small message per call, gathered on every rank, so every rank sees every
    disagreement and raises the same error (none is left waiting for the others).
    """
    problem = _problem(tensor, writes, settings.get("op"))
    mine = (tuple(tensor.shape), str(tensor.array.dtype), sorted(settings.items(), key=str),
            problem)
    everyone = group.comm.allgather(_plain(mine))
    troubled = [(r, info[3]) for r, info in enumerate(everyone) if info[3] is not None]
    if troubled:
        rank, text = troubled[0]
        raise RuntimeError(f"{caller}: on rank {rank}, {text}.")
    if all(info[:3] == everyone[0][:3] for info in everyone):
        return
    ranks = "; ".join(
        f"rank {r}: shape {info[0]}, {info[1]}"
        + "".join(f", {key}={value}" for key, value in info[2])
        for r, info in enumerate(everyone)
    )
    raise RuntimeError(
        f"{caller}: the ranks passed different tensors or settings ({ranks}). Every rank "
        f"must call it with a tensor of the same shape and dtype, and the same arguments."
    )


def _plain(info: tuple) -> tuple:
    """Only strings and numbers travel between ranks (no pickled objects of ours)."""
    shape, dtype, settings, problem = info
    settings = [(key, value.name if isinstance(value, ReduceOp) else value)
                for key, value in settings]
    return shape, dtype, tuple(settings), problem


def _mpi_op(group: ProcessGroup, op: ReduceOp, caller: str) -> Any:
    if not isinstance(op, ReduceOp):
        raise TypeError(
            f"{caller}: op must be a difflab.distributed.ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), "
            f"got {op!r}"
        )
    return group.ops[ReduceOp.SUM if op is ReduceOp.AVG else op]


def _iallreduce_sum(group: ProcessGroup, array: np.ndarray) -> Any:
    """Start summing a contiguous NumPy array across the ranks, in place; returns the request.

    Unchecked: the caller (DistributedDataParallel) checked the layout once, up front.
    """
    return group.comm.Iallreduce(group.in_place, array, op=group.ops[ReduceOp.SUM])


# ------------------------------------------------------------------ collectives


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Replace ``tensor`` on every rank by op over all ranks' tensors (elementwise, in place).

    ``ReduceOp.AVG`` is the sum divided by the world size.  With
    ``async_op=True`` the reduction runs in the background (MPI's
    ``Iallreduce``) and the returned :class:`Work`'s ``wait()`` finishes it.

    Parameters
    ----------
    tensor : Tensor
        This rank's values; replaced by the result.
    op : ReduceOp, default ReduceOp.SUM
        ``SUM``, ``AVG``, ``PRODUCT``, ``MIN`` or ``MAX``.
    group : ProcessGroup, optional
        The group (default: the one :func:`~difflab.distributed.init_process_group` made).
    async_op : bool, default False
        Return at once with a :class:`Work` whose ``wait()`` finishes the collective.

    Returns
    -------
    Work or None
        A :class:`Work` with ``async_op=True``; else None, once every rank has taken part.

    Raises
    ------
    RuntimeError
        Before ``init_process_group``, or when the ranks pass tensors of different shapes,
        dtypes or settings (the message names each rank's).

    See Also
    --------
    reduce : the result on one rank only.
    difflab.nn.parallel.DistributedDataParallel : averages the gradients this way.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")         # one process; under mpiexec: "mpi"
    >>> t = dl.tensor([1.0, 2.0])
    >>> dist.all_reduce(t)                        # one rank: the sum of one tensor
    >>> t
    tensor([1., 2.])
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "all_reduce")
    group = _group(group, "all_reduce")
    mpi_op = _mpi_op(group, op, "all_reduce")
    _agree(group, "all_reduce", tensor, writes=True, op=op)
    host = _host(tensor)
    size = group.size()

    def finish() -> None:
        if op is ReduceOp.AVG:
            host[...] /= size
        _write_back(tensor, host)

    if async_op:
        return Work(group.comm.Iallreduce(group.in_place, host, op=mpi_op), finish)
    group.comm.Allreduce(group.in_place, host, op=mpi_op)
    finish()
    return None


def reduce(tensor: Tensor, dst: int, op: ReduceOp = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Replace ``tensor`` on rank ``dst`` by op over all ranks' tensors; others keep theirs.

    Parameters
    ----------
    tensor : Tensor
        This rank's values (replaced by the result on ``dst``).
    dst : int
        The rank that receives the result.
    op : ReduceOp, default ReduceOp.SUM
        How the values combine.
    group : ProcessGroup, optional
        The group (default: the one :func:`~difflab.distributed.init_process_group` made).
    async_op : bool, default False
        Return at once with a :class:`Work` whose ``wait()`` finishes the collective.

    Returns
    -------
    Work or None
        A :class:`Work` with ``async_op=True``; else None, once every rank has taken part.

    Raises
    ------
    RuntimeError
        Before ``init_process_group``, or when the ranks pass tensors of different shapes,
        dtypes or settings (the message names each rank's).
    ValueError
        If ``dst`` is not a rank of the group.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")         # one process; under mpiexec: "mpi"
    >>> t = dl.tensor([3.0])
    >>> dist.reduce(t, dst=0)
    >>> t
    tensor([3.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "reduce")
    group = _group(group, "reduce")
    mpi_op = _mpi_op(group, op, "reduce")
    _check_rank(group, dst, "reduce", "dst")
    _agree(group, "reduce", tensor, writes=True, op=op, dst=dst)
    host = _host(tensor)
    if group.rank() == dst:
        group.comm.Reduce(group.in_place, host, op=mpi_op, root=dst)
        if op is ReduceOp.AVG:
            host[...] /= group.size()
        _write_back(tensor, host)
    else:
        group.comm.Reduce(host, None, op=mpi_op, root=dst)
    return Work() if async_op else None


def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None,
              async_op: bool = False) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into the ``tensor`` of every other rank (in place).

    Parameters
    ----------
    tensor : Tensor
        On ``src`` the values to send; elsewhere replaced by them.
    src : int
        The rank that sends.
    group : ProcessGroup, optional
        The group (default: the one :func:`~difflab.distributed.init_process_group` made).
    async_op : bool, default False
        Return at once with a :class:`Work` whose ``wait()`` finishes the collective.

    Returns
    -------
    Work or None
        A :class:`Work` with ``async_op=True``; else None, once every rank has taken part.

    Raises
    ------
    RuntimeError
        Before ``init_process_group``, or when the ranks pass tensors of different shapes,
        dtypes or settings (the message names each rank's).
    ValueError
        If ``src`` is not a rank of the group.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")         # one process; under mpiexec: "mpi"
    >>> t = dl.tensor([3.0])
    >>> dist.broadcast(t, src=0)
    >>> t
    tensor([3.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "broadcast")
    group = _group(group, "broadcast")
    _check_rank(group, src, "broadcast", "src")
    _agree(group, "broadcast", tensor, writes=group.rank() != src, src=src)
    _broadcast_array(group, tensor, src)
    return Work() if async_op else None


def _broadcast_array(group: ProcessGroup, tensor: Tensor, src: int) -> None:
    """Unchecked broadcast (DistributedDataParallel checks the whole model once)."""
    host = _host(tensor)
    group.comm.Bcast(host, root=src)
    if group.rank() != src:
        _write_back(tensor, host)


def all_gather(tensor_list: list, tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Fill ``tensor_list[i]`` (in place) with rank i's ``tensor``, on every rank.

    ``tensor_list`` holds world-size tensors of ``tensor``'s shape and dtype,
    for example ``[difflab.zeros_like(t) for _ in range(world_size)]``.

    Parameters
    ----------
    tensor_list : list of Tensor
        World-size tensors of ``tensor``'s shape and dtype, filled in place.
    tensor : Tensor
        This rank's values.
    group : ProcessGroup, optional
        The group (default: the one :func:`~difflab.distributed.init_process_group` made).
    async_op : bool, default False
        Return at once with a :class:`Work` whose ``wait()`` finishes the collective.

    Returns
    -------
    Work or None
        A :class:`Work` with ``async_op=True``; else None, once every rank has taken part.

    Raises
    ------
    RuntimeError
        Before ``init_process_group``, or when the ranks pass tensors of different shapes,
        dtypes or settings (the message names each rank's).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")         # one process; under mpiexec: "mpi"
    >>> gathered = [dl.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.all_gather(gathered, dl.tensor([1.0, 2.0]))
    >>> gathered
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "all_gather")
    group = _group(group, "all_gather")
    size = group.size()
    if not isinstance(tensor_list, list) or len(tensor_list) != size:
        got = len(tensor_list) if isinstance(tensor_list, list) else type(tensor_list).__name__
        raise ValueError(
            f"all_gather: tensor_list must be a list of world_size={size} tensors, got {got}"
        )
    for i, out in enumerate(tensor_list):
        _check_tensor(out, "all_gather", f"tensor_list[{i}]")
        if tuple(out.shape) != tuple(tensor.shape) or out.dtype != tensor.dtype:
            raise ValueError(
                f"all_gather: tensor_list[{i}] has shape {tuple(out.shape)} and dtype "
                f"{out.dtype}, but the tensor to gather has shape {tuple(tensor.shape)} and "
                f"dtype {tensor.dtype}: they must match"
            )
    _agree(group, "all_gather", tensor, writes=False)
    gathered = np.empty((size, *tensor.shape), dtype=tensor.array.dtype)
    group.comm.Allgather(np.ascontiguousarray(backend.to_numpy(tensor.array)), gathered)
    for out, part in zip(tensor_list, gathered):
        _write_back(out, np.ascontiguousarray(part))
    return Work() if async_op else None


def barrier(group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Wait until every rank of the group has called ``barrier``.

    Parameters
    ----------
    group : ProcessGroup, optional
        The group (default: the one :func:`~difflab.distributed.init_process_group` made).
    async_op : bool, default False
        Return at once with a :class:`Work` whose ``wait()`` finishes the collective.

    Returns
    -------
    Work or None
        A :class:`Work` with ``async_op=True``; else None, once every rank has taken part.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")         # one process; under mpiexec: "mpi"
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    _group(group, "barrier").comm.Barrier()
    return Work() if async_op else None


def _check_rank(group: ProcessGroup, rank: Any, caller: str, name: str) -> None:
    size = group.size()
    if not isinstance(rank, (int, np.integer)) or not 0 <= rank < size:
        raise ValueError(
            f"{caller}: {name}={rank!r} is not a rank of this group (ranks are 0..{size - 1})"
        )
