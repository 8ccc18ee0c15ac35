"""The launcher's checks and the command it builds (nothing is started here)."""

import os
import subprocess
import sys

import pytest

from difflab.distributed import run


def launcher(*args):
    return subprocess.run([sys.executable, "-m", "difflab.distributed.run", *args],
                          capture_output=True, text=True, timeout=60)


def test_zero_processes_is_a_usage_error():
    result = launcher("-n", "0", __file__)
    assert result.returncode == 2
    assert "-n must be at least 1 (the number of processes to start), got 0" in result.stderr


def test_a_missing_mpiexec_says_how_to_install_it(tmp_path):
    result = launcher("-n", "2", "--mpiexec", str(tmp_path / "mpiexec"), __file__)
    assert result.returncode == 2
    assert f"no mpiexec at {tmp_path / 'mpiexec'}" in result.stderr
    assert 'pip install "difflab[mpi]"' in result.stderr


def test_the_command_uses_the_mpiexec_beside_python_and_mpi4py(tmp_path, monkeypatch):
    monkeypatch.delenv("DIFFLAB_MPIEXEC", raising=False)
    mpiexec = tmp_path / "mpiexec"
    mpiexec.write_text("#!/bin/sh\n")
    mpiexec.chmod(0o755)
    if not run.importlib.util.find_spec("mpi4py"):
        pytest.skip('mpi4py is not installed (pip install "difflab[mpi]")')
    cmd = run.command(3, __file__, ["--lr", "0.1"], mpiexec=str(mpiexec))
    assert cmd == [str(mpiexec), "-n", "3", sys.executable, "-m", "mpi4py", __file__,
                   "--lr", "0.1"]
    assert run.command(2, "pkg.train", [], module=True, mpiexec=str(mpiexec))[-2:] == [
        "-m", "pkg.train"]
    with pytest.raises(ValueError, match="no such script: nowhere.py"):
        run.command(2, "nowhere.py", [], mpiexec=str(mpiexec))
    assert os.path.dirname(run.mpiexec_path()) == os.path.dirname(
        os.path.abspath(sys.executable))


def test_mpiexec_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DIFFLAB_MPIEXEC", str(tmp_path / "site-mpiexec"))
    with pytest.raises(ValueError, match="no mpiexec at .*site-mpiexec"):
        run.command(2, __file__, [])


def test_missing_mpi4py_is_named(monkeypatch, tmp_path):
    mpiexec = tmp_path / "mpiexec"
    mpiexec.write_text("#!/bin/sh\n")
    mpiexec.chmod(0o755)
    monkeypatch.setattr(run.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r"mpi4py is not installed .*difflab\[mpi\]"):
        run.command(2, __file__, [], mpiexec=str(mpiexec))


def test_one_blas_thread_per_process_unless_chosen():
    env = run.environment({"PATH": "/bin", "MKL_NUM_THREADS": "4"})
    assert env["OMP_NUM_THREADS"] == "1" and env["OPENBLAS_NUM_THREADS"] == "1"
    assert env["MKL_NUM_THREADS"] == "4" and env["PATH"] == "/bin"
