"""Real multi-process jobs: 2 and 4 ranks started by the launcher as subprocesses.

pytest itself never runs under mpiexec.  Each job runs worker.py once; every
rank writes what it saw to a JSON file, and the tests below read them.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

import difflab
import difflab.distributed as dist
from difflab import backend
from difflab.distributed import run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(difflab.__file__)))

MPIEXEC = os.environ.get("DIFFLAB_MPIEXEC") or run.mpiexec_path()
pytestmark = pytest.mark.skipif(
    not (dist.is_mpi_available() and os.path.isfile(MPIEXEC)),
    reason='needs mpi4py and the mpiexec beside this Python (pip install "difflab[mpi]")',
)


def launch(n, script, *args, timeout=120, extra_env=None):
    """Run the launcher in its own session; kill the whole session if it overruns."""
    env = dict(os.environ, **(extra_env or {}))
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")  # this checkout's difflab
    process = subprocess.Popen(
        [sys.executable, "-m", "difflab.distributed.run", "-n", str(n), script, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"the job did not end within {timeout} s:\n{out}\n{err}")
    return process.returncode, out, err


@pytest.fixture(scope="module", params=[2, 4], ids=["2-ranks", "4-ranks"])
def job(request, tmp_path_factory):
    """The worker's results, one dict per rank."""
    n = request.param
    out_dir = tmp_path_factory.mktemp(f"ranks{n}")
    code, out, err = launch(n, os.path.join(HERE, "worker.py"), str(out_dir))
    assert code == 0, f"the {n}-rank job failed:\n{out}\n{err}"
    return [json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(n)]


def test_every_rank_knows_its_place_and_runs_one_blas_thread(job):
    assert [r["rank"] for r in job] == list(range(len(job)))
    assert {r["size"] for r in job} == {len(job)}
    assert {r["threads"] for r in job} == {"1"}


def test_collectives(job):
    n = len(job)
    ranks = range(n)
    first = [r + 1.0 for r in ranks]  # rank r sent [r + 1, -(r + 2)]
    second = [-(r + 2.0) for r in ranks]
    product = [1.0, 1.0]
    for a, b in zip(first, second):
        product = [product[0] * a, product[1] * b]
    expected = {
        "all_reduce_SUM": [sum(first), sum(second)],
        "all_reduce_AVG": [sum(first) / n, sum(second) / n],
        "all_reduce_PRODUCT": product,
        "all_reduce_MIN": [min(first), min(second)],
        "all_reduce_MAX": [max(first), max(second)],
        "all_reduce_async_avg": [sum(first) / n],
        "broadcast": [n - 1.0] * 3,
        "all_gather": [[r, r * r] for r in ranks],
        # the transposed view [[r, 1], [10 r, 2]] summed over the ranks
        "all_reduce_strided": [[sum(ranks), n], [10.0 * sum(ranks), 2.0 * n]],
    }
    for result in job:
        seen = result["collectives"]
        for key, value in expected.items():
            assert seen[key] == value, (key, result["rank"])  # small integers: exact
        mine = [result["rank"] + 1.0]  # reduce: only the destination changes
        assert seen["reduce"] == ([product[0]] if result["rank"] == n - 1 else mine)


@pytest.mark.parametrize("buckets", ["1e-06", "1000.0"], ids=["bucket-smaller-than-a-param",
                                                                "one-bucket-for-all"])
@pytest.mark.parametrize("accumulate", ["1", "2"], ids=["every-step", "no_sync-accumulation"])
def test_ddp_equals_single_process_training(job, buckets, accumulate):
    results = [r["ddp"][f"{buckets}:{accumulate}"] for r in job]
    for r in results:
        assert r["gap"] <= 1e-12  # to the single-process run on the whole global batch
        assert r["buckets"] == (4 if buckets == "1e-06" else 1)
    for r in results[1:]:  # and the ranks agree with each other
        for a, b in zip(r["params"], results[0]["params"]):
            assert max(abs(x - y) for x, y in zip(a, b)) <= 1e-12


def test_disagreeing_ranks_get_an_error_naming_both_shapes(job):
    for result in job:
        errors = result["errors"]
        assert "rank 0: shape (3,)" in errors["all_reduce_shapes"]
        assert "rank 1: shape (4,)" in errors["all_reduce_shapes"]
        assert "op=SUM" in errors["all_reduce_ops"] and "op=MAX" in errors["all_reduce_ops"]
        assert "parameter '0.weight' has shape (5, 4)" in errors["ddp_shapes"]
        assert "has shape (6, 4) (float32) on rank 1" in errors["ddp_shapes"]


def test_unused_parameters_are_averaged_as_zeros_or_left_alone(job):
    n = len(job)
    on_rank0 = job[0]["unused"]["head0_grad"]
    for result in job:
        assert result["unused"]["never_grad"] is True
        assert result["unused"]["head0_grad"] == on_rank0  # rank 0's gradient / n everywhere
        assert result["unused"]["body_grad"] == job[0]["unused"]["body_grad"]
    assert all(abs(v) > 0 for v in on_rank0[0]) and n > 1


def test_sampler_shares_are_disjoint_and_cover_the_data(job):
    n = len(job)
    parts = [r["sampler"] for r in job]
    assert {len(p) for p in parts} == {-(-10 // n)}
    every = [i for p in parts for i in p]
    assert set(every) == set(range(10)) and len(every) == n * -(-10 // n)


def test_sync_batch_norm_equals_batch_norm_on_the_whole_batch(job):
    # uneven shares (rank r: r + 2 samples): outputs, input gradients and running
    # statistics as one process's BatchNorm1d on all of them; the parameters' gradients
    # add up over the ranks to the whole batch's (DDP then averages them)
    for rank in job:
        assert rank["sync_bn"]["gap"] < 1e-12
    for name in ("weight_grad", "bias_grad"):
        summed = np.sum([rank["sync_bn"][name] for rank in job], axis=0)
        np.testing.assert_allclose(summed, job[0]["sync_bn"][f"full_{name}"], rtol=1e-10)


def test_a_rank_that_raises_ends_the_job_with_its_traceback():
    marker = f"marker-{uuid.uuid4().hex}"
    start = time.perf_counter()
    code, out, err = launch(2, os.path.join(HERE, "failing_worker.py"), marker, timeout=60)
    elapsed = time.perf_counter() - start
    assert code != 0
    assert "Traceback" in err and f"ValueError: rank 1 fails on purpose ({marker})" in err
    assert "must not get here" not in out
    assert elapsed < 30, f"the job took {elapsed:.1f} s to end"
    time.sleep(0.5)
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline_has(pid, marker)]
    assert left == [], f"processes left behind: {left}"


def test_cuda_tensors_go_through_host_memory_and_stay_on_the_gpu(tmp_path):
    # Without a GPU the ranks run on the CuPy stand-in, switched on by its variable.
    stand_in = {} if difflab.cuda.is_available() else {backend.STAND_IN_VARIABLE: "1"}
    code, out, err = launch(2, os.path.join(HERE, "worker.py"), str(tmp_path), "cuda",
                            extra_env=stand_in)
    assert code == 0, f"the job failed:\n{out}\n{err}"
    for r in range(2):
        seen = json.loads((tmp_path / f"rank{r}.json").read_text())
        assert seen["all_reduce"] == [3.0, 4.0] and seen["device"].startswith("cuda")
        assert seen["all_gather"] == [[0.0], [1.0]]
        assert seen["grad_device"].startswith("cuda")
        assert seen["gap"] <= 1e-12


def _cmdline_has(pid, text):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return text.encode() in f.read()
    except OSError:
        return False
