"""Process groups: which processes take part, and who is who.

A data-parallel job is N copies of one program, the *ranks* 0..N-1 of a
*world* of size N, started together by ``mpiexec`` (see
:mod:`difflab.distributed.run`).  :func:`init_process_group` connects this
process to the others; afterwards :func:`get_rank` and
:func:`get_world_size` say where it stands, and the collectives of
:mod:`difflab.distributed.collectives` move data between all of them.

Two backends, with PyTorch's names where PyTorch has one:

``"mpi"``
    MPI through mpi4py (``pip install "difflab[mpi]"`` installs mpi4py and
    the MPICH library).  Rank and world size come from ``mpiexec``; a script
    started without it is a world of one.
``"single"``
    One process, no MPI needed: every collective leaves its data as it is
    (a sum over one rank is that rank's value).  The same training script
    then runs alone on a machine without MPI.

The collectives are written once, against the MPI communicator interface
(``Allreduce``, ``Bcast``, ...); the ``"single"`` backend is a communicator
of one process with the same methods.
"""

from __future__ import annotations

import enum
import importlib.util
import os
from typing import Any

MPI_INSTALL_HINT = (
    'Install MPI for Python with the mpi extra: pip install "difflab[mpi]" '
    "(or: pip install mpi4py mpich)."
)

# Environment variables by which MPI launchers tell a process how many were started.
_LAUNCHER_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


class ReduceOp(enum.Enum):
    """How :func:`all_reduce` and :func:`reduce` combine the ranks' values, elementwise.

    An enum: pass a member (``ReduceOp.SUM``) as a collective's ``op``; a plain string
    is refused.  ``AVG`` is the sum divided by the world size, and needs a floating
    point tensor; the others are MPI's ``SUM``, ``PROD``, ``MIN`` and ``MAX``.

    Parameters
    ----------
    value : {'sum', 'avg', 'product', 'min', 'max'}
        ``ReduceOp(value)`` looks a member up by its value (an unknown one raises
        ``ValueError``); usually the members are named directly.

    See Also
    --------
    all_reduce : the result on every rank.
    reduce : the result on one rank.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> [op.name for op in dist.ReduceOp]
    ['SUM', 'AVG', 'PRODUCT', 'MIN', 'MAX']
    >>> dist.ReduceOp("max") is dist.ReduceOp.MAX
    True
    >>> dist.init_process_group("single")          # one process: the values stay as they are
    >>> t = dl.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.AVG)
    >>> t
    tensor([1., 2.])
    >>> dist.all_reduce(dl.tensor([1, 2]), op=dist.ReduceOp.AVG)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    RuntimeError: all_reduce: ... ReduceOp.AVG needs a floating point tensor, this one is int64.
    >>> dist.destroy_process_group()
    """

    SUM = "sum"
    AVG = "avg"  # the sum divided by the world size
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


class _SelfComm:
    """A communicator of one process: the ``"single"`` backend.

    It has the methods of an mpi4py communicator that the collectives use.
    With one rank, reducing, broadcasting and gathering leave the data as it is.
    """

    def Get_rank(self) -> int:  # (mpi4py's method names)
        return 0

    def Get_size(self) -> int:
        return 1

    def Allreduce(self, sendbuf: Any, recvbuf: Any, op: Any = None) -> None:
        if sendbuf is not _IN_PLACE:
            recvbuf[...] = sendbuf

    def Iallreduce(self, sendbuf: Any, recvbuf: Any, op: Any = None) -> _DoneRequest:
        self.Allreduce(sendbuf, recvbuf, op)
        return _DoneRequest()

    def Reduce(self, sendbuf: Any, recvbuf: Any, op: Any = None, root: int = 0) -> None:
        self.Allreduce(sendbuf, recvbuf, op)

    def Bcast(self, buf: Any, root: int = 0) -> None:
        pass

    def Allgather(self, sendbuf: Any, recvbuf: Any) -> None:
        recvbuf[0] = sendbuf

    def Barrier(self) -> None:
        pass

    def allgather(self, obj: Any) -> list:
        return [obj]

    def Free(self) -> None:
        pass


class _DoneRequest:
    """What a non-blocking operation of :class:`_SelfComm` returns: already complete."""

    def Wait(self) -> None:
        pass

    def Test(self) -> bool:
        return True


_IN_PLACE = object()  # the "single" backend's stand-in for MPI.IN_PLACE


class ProcessGroup:
    """A set of ranks that run collectives together (here: always the whole world).

    :func:`init_process_group` makes the default one, which every collective uses when
    given no ``group``; a group object is passed as ``group=`` to :func:`get_rank`,
    :func:`all_reduce` and the others.  It wraps a communicator and the backend's
    constants, nothing more: the collectives do the work.

    Parameters
    ----------
    backend : str
        Its name, as :func:`get_backend` returns it (``"mpi"``, ``"single"``).
    comm : object
        An mpi4py communicator (a private copy of ``MPI.COMM_WORLD``), or the
        one-process stand-in of the ``"single"`` backend: anything with the mpi4py
        methods the collectives call (``Get_rank``, ``Get_size``, ``Allreduce``, ...).
    in_place : object
        The backend's ``MPI.IN_PLACE`` marker.
    ops : dict
        The backend's reduction operation for each of ``ReduceOp.SUM``, ``PRODUCT``,
        ``MIN`` and ``MAX`` (``AVG`` is a SUM then a division).

    See Also
    --------
    init_process_group : makes the default group.
    get_rank : this process's rank in a group.

    Examples
    --------
    A group around a minimal one-rank communicator (:func:`init_process_group` makes
    the real ones):

    >>> import difflab.distributed as dist
    >>> class OneRank:
    ...     def Get_rank(self):
    ...         return 0
    ...     def Get_size(self):
    ...         return 1
    >>> group = dist.ProcessGroup("custom", OneRank(), in_place=None, ops={})
    >>> group
    ProcessGroup(backend='custom', rank=0, size=1)
    >>> dist.get_rank(group), dist.get_world_size(group), dist.get_backend(group)
    (0, 1, 'custom')
    """

    def __init__(self, backend: str, comm: Any, in_place: Any, ops: dict) -> None:
        self.backend = backend
        self.comm = comm
        self.in_place = in_place
        self.ops = ops

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, rank={self.rank()}, size={self.size()})"


def _single_group() -> ProcessGroup:
    ops = dict.fromkeys((ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX))
    return ProcessGroup("single", _SelfComm(), _IN_PLACE, ops)


def _mpi_group() -> ProcessGroup:
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise RuntimeError(
            f"init_process_group(backend='mpi') needs mpi4py, which could not be loaded "
            f"({exc}). {MPI_INSTALL_HINT} To run in one process without MPI, use "
            f"init_process_group(backend='single')."
        ) from None
    ops = {ReduceOp.SUM: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
           ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}
    # A private copy of the world communicator: our messages never mix with the user's.
    return ProcessGroup("mpi", MPI.COMM_WORLD.Dup(), MPI.IN_PLACE, ops)


def _launched_size() -> int:
    """How many processes an MPI launcher says it started (1 when not launched by one)."""
    for name in _LAUNCHER_SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 1


class _State:
    group: ProcessGroup | None = None


def is_available() -> bool:
    """True: difflab.distributed is always importable (the "single" backend needs nothing).

    Returns
    -------
    bool
        Always True.

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> dist.is_available()
    True
    """
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py is installed, so that ``backend="mpi"`` can work.

    Returns
    -------
    bool
        True when mpi4py can be imported.

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> isinstance(dist.is_mpi_available(), bool)
    True
    """
    return importlib.util.find_spec("mpi4py") is not None


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: Any = None, world_size: int = -1, rank: int = -1) -> None:
    """Join the job's default process group.  Call once per process, before any collective.

    Parameters
    ----------
    backend : ``"mpi"`` or ``"single"`` (see the module docstring).  ``None``
        picks ``"mpi"`` when mpi4py is installed, else ``"single"``.
    init_method, timeout : accepted for PyTorch compatibility and unused: MPI
        finds the other processes itself.
    world_size, rank : if given, checked against what the backend reports
        (with MPI they come from ``mpiexec`` and cannot be chosen here).

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        If it was called already in this process (``destroy_process_group()`` first).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")         # one process; under mpiexec: "mpi"
    >>> dist.is_initialized(), dist.get_rank(), dist.get_backend()
    (True, 0, 'single')
    >>> dist.destroy_process_group()
    """
    del init_method, timeout
    if _State.group is not None:
        raise RuntimeError(
            "trying to initialize the default process group twice: init_process_group was "
            "already called in this process (call destroy_process_group() first to start over)."
        )
    if backend is None:
        backend = "mpi" if is_mpi_available() else "single"
    backend = str(backend).lower()
    if backend == "mpi":
        group = _mpi_group()
    elif backend == "single":
        launched = _launched_size()
        if launched > 1:
            raise RuntimeError(
                f"init_process_group(backend='single') in a process that mpiexec started as one "
                f"of {launched}: each would train alone. Use backend='mpi'. {MPI_INSTALL_HINT}"
            )
        group = _single_group()
    else:
        raise ValueError(
            f"unknown backend {backend!r}: difflab runs on 'mpi' (mpi4py) or 'single' "
            f"(one process, no MPI). PyTorch's 'gloo' and 'nccl' are not available."
        )
    for name, wanted, actual in (("world_size", world_size, group.size()),
                                 ("rank", rank, group.rank())):
        if wanted not in (-1, None) and wanted != actual:
            group.comm.Free()
            raise ValueError(
                f"init_process_group: {name}={wanted} was asked for, but the {backend!r} "
                f"backend reports {name} {actual}. With MPI the launcher decides: "
                f"python -m difflab.distributed.run -n N script.py."
            )
    _State.group = group


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has been called (and not undone).

    Returns
    -------
    bool

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _State.group is not None


def destroy_process_group() -> None:
    """Leave the default process group; :func:`init_process_group` may be called again.

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        Before :func:`init_process_group`.

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    group = _default_group("destroy_process_group")
    group.comm.Free()
    _State.group = None


def _default_group(caller: str) -> ProcessGroup:
    group = _State.group
    if group is None:
        raise RuntimeError(
            f"{caller}: the default process group has not been initialized. Call "
            f"difflab.distributed.init_process_group() first (backend='mpi' under mpiexec, "
            f"or backend='single' for one process)."
        )
    return group


def _group(group: ProcessGroup | None, caller: str) -> ProcessGroup:
    return _default_group(caller) if group is None else group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's number in the group: 0 .. world_size - 1.

    Parameters
    ----------
    group : ProcessGroup, optional
        The group (default: the default group).

    Returns
    -------
    int

    Raises
    ------
    RuntimeError
        Before :func:`init_process_group`.

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")
    >>> dist.get_rank()
    0
    >>> dist.destroy_process_group()
    """
    return _group(group, "get_rank").rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """How many processes the group has.

    Parameters
    ----------
    group : ProcessGroup, optional
        The group (default: the default group).

    Returns
    -------
    int

    Raises
    ------
    RuntimeError
        Before :func:`init_process_group`.

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    return _group(group, "get_world_size").size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The group's backend: ``"mpi"`` or ``"single"``.

    Parameters
    ----------
    group : ProcessGroup, optional
        The group (default: the default group).

    Returns
    -------
    str

    Raises
    ------
    RuntimeError
        Before :func:`init_process_group`.

    Examples
    --------
    >>> import difflab.distributed as dist
    >>> dist.init_process_group("single")
    >>> dist.get_backend()
    'single'
    >>> dist.destroy_process_group()
    """
    return _group(group, "get_backend").backend
