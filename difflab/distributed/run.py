"""Start N ranks of a training script: ``python -m difflab.distributed.run -n 4 train.py [args]``.

The role of PyTorch's ``torchrun``, on MPI.  It runs::

    mpiexec -n 4 python -m mpi4py train.py [args]

with three choices made for you:

* the ``mpiexec`` that sits beside the running Python (installed there by
  the ``mpich`` wheel of the ``mpi`` extra), so it matches the MPI library
  that mpi4py loads, whatever other MPI is on the ``PATH``;
* ``python -m mpi4py``, so that an exception on one rank aborts the whole
  job (MPI_Abort): without it the other ranks would wait forever in their
  next collective;
* one BLAS/OpenMP thread per process (``OMP_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``), unless you set them:
  N processes each starting one thread per core oversubscribe the machine
  (two ranks on two cores ran 30 times slower).

The launcher replaces itself with ``mpiexec`` (``exec``), so Ctrl-C and
signals reach mpiexec directly and the exit status is the job's.

Where mpi4py was built against a system MPI (clusters, distribution
packages), name that MPI's launcher with ``--mpiexec PATH`` or the
environment variable ``DIFFLAB_MPIEXEC``; Open MPI's then needs
``OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`` to run as root,
which MPICH's does not.  On a cluster you may also call your site's
``mpiexec`` or ``srun`` with ``python -m mpi4py train.py`` directly.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence

from difflab.distributed.process_group import MPI_INSTALL_HINT

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m difflab.distributed.run",
        description="Run a script as N MPI ranks (data-parallel training), like torchrun.",
    )
    parser.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="n", type=int,
                        default=1, help="number of processes (ranks) to start (default 1)")
    parser.add_argument("--mpiexec", default=None,
                        help="the mpiexec to use (default: $DIFFLAB_MPIEXEC, else the one "
                             "beside this Python)")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run SCRIPT as a module, like python -m")
    parser.add_argument("script", help="the training script (or module with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return parser


def mpiexec_path() -> str:
    """The ``mpiexec`` beside the running Python (where the mpich wheel puts it)."""
    name = "mpiexec.exe" if os.name == "nt" else "mpiexec"
    return os.path.join(os.path.dirname(os.path.abspath(sys.executable)), name)


def command(n: int, script: str, args: Sequence[str], module: bool = False,
            mpiexec: str | None = None) -> list[str]:
    """The command line that starts the job (checked: raises ValueError on bad input).

    ``mpiexec``: the launcher to use; by default ``$DIFFLAB_MPIEXEC`` or the
    one beside the running Python.
    """
    if n < 1:
        raise ValueError(f"-n must be at least 1 (the number of processes to start), got {n}")
    mpiexec = mpiexec or os.environ.get("DIFFLAB_MPIEXEC") or mpiexec_path()
    if not (os.path.isfile(mpiexec) and os.access(mpiexec, os.X_OK)):
        raise ValueError(
            f"no mpiexec at {mpiexec}. {MPI_INSTALL_HINT} It puts mpiexec beside the Python "
            f"that runs this launcher; or name another one with --mpiexec PATH."
        )
    if importlib.util.find_spec("mpi4py") is None:
        raise ValueError(f"mpi4py is not installed for {sys.executable}. {MPI_INSTALL_HINT}")
    if not module and not os.path.isfile(script):
        raise ValueError(f"no such script: {script}")
    target = ["-m", script] if module else [script]
    return [mpiexec, "-n", str(n), sys.executable, "-m", "mpi4py", *target, *args]


def environment(base: dict | None = None) -> dict:
    """The ranks' environment: one BLAS/OpenMP thread each unless the caller chose."""
    env = dict(os.environ if base is None else base)
    for name in THREAD_VARIABLES:
        env.setdefault(name, "1")
    return env


def main(argv: Sequence[str] | None = None) -> None:
    parser = _parser()
    options = parser.parse_args(argv)
    try:
        cmd = command(options.n, options.script, options.args, options.module, options.mpiexec)
    except ValueError as exc:
        parser.error(str(exc))  # exits with status 2, the message on stderr
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(cmd[0], cmd, environment())


if __name__ == "__main__":
    main()
