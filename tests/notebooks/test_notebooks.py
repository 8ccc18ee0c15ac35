"""Execute every teaching notebook in ``notebooks/`` from top to bottom.

Each notebook runs in a fresh ``python3`` kernel (ipykernel) through nbclient, in a
temporary working directory (a notebook that saves a ``state_dict`` writes there,
not into the repository), with matplotlib's inline backend.  A cell that raises
fails the test with the cell's source and traceback; the exercise checks at the end
of each notebook run too, against the worked solutions kept in the notebook's
"solution" cells.

Budget: each notebook well under two minutes on a 2-core CPU, all of them under
ten minutes.  ``DIFFLAB_NOTEBOOK_TIMEOUT`` overrides the per-cell limit (seconds).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel", reason="executing notebooks needs ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = int(os.environ.get("DIFFLAB_NOTEBOOK_TIMEOUT", "300"))
NOTEBOOK_BUDGET_S = 120.0  # the promise: each notebook in under two minutes

pytestmark = [pytest.mark.notebooks, pytest.mark.slow]


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 10, f"expected the 10 teaching notebooks, found {len(NOTEBOOKS)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    with_outputs = [i for i, cell in enumerate(nb.cells)
                    if cell.cell_type == "code" and (cell.outputs or cell.execution_count)]
    assert not with_outputs, (
        f"{path.name}: cells {with_outputs} are stored with outputs; clear them before "
        f"committing (jupyter nbconvert --clear-output --inplace {path.name})"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.read(path, as_version=4)
    # The kernel inherits the environment: the repository on the path (an uninstalled
    # checkout still works), no GUI backend, one thread per BLAS (the CPU is shared).
    pythonpath = os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p)
    monkeypatch.setenv("PYTHONPATH", pythonpath)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("NO_COLOR", "1")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, os.environ.get(var, "2"))
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name} failed:\n{exc}", pytrace=False)
    elapsed = time.perf_counter() - start
    print(f"{path.name}: {elapsed:.1f} s")
    assert elapsed < NOTEBOOK_BUDGET_S, (
        f"{path.name} took {elapsed:.0f} s; a notebook must run in under "
        f"{NOTEBOOK_BUDGET_S:.0f} s on a 2-core CPU"
    )
