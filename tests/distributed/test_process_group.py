"""Process groups and collectives in this process ("single" backend; MPI as a world of one)."""

import sys

import numpy as np
import pytest

import difflab as dl
import difflab.distributed as dist
from difflab.distributed import ReduceOp

needs_mpi4py = pytest.mark.skipif(
    not dist.is_mpi_available(), reason='mpi4py is not installed (pip install "difflab[mpi]")'
)


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(dl.ones(2)),
    lambda: dist.broadcast(dl.ones(2), 0),
    lambda: dist.all_gather([dl.ones(2)], dl.ones(2)),
    lambda: dist.reduce(dl.ones(2), 0),
    lambda: dist.barrier(),
    lambda: dist.get_rank(),
    lambda: dist.get_world_size(),
    lambda: dist.destroy_process_group(),
])
def test_collective_before_init_process_group_says_what_to_call(call):
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match=r"init_process_group\(\) first"):
        call()


def test_single_backend_is_a_world_of_one():
    dist.init_process_group("single")
    assert dist.is_initialized() and dist.get_backend() == "single"
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    for op in ReduceOp:
        t = dl.tensor([1.5, -2.0], dtype=dl.float64)
        assert dist.all_reduce(t, op=op) is None
        assert t.tolist() == [1.5, -2.0]  # op over one rank: the value itself
    t = dl.tensor([3.0])
    work = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
    assert work.wait() and work.is_completed() and t.tolist() == [3.0]
    out = [dl.zeros(2)]
    dist.all_gather(out, dl.tensor([4.0, 5.0]))
    assert out[0].tolist() == [4.0, 5.0]
    dist.broadcast(t, src=0)
    dist.reduce(t, dst=0)
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_all_reduce_is_in_place_and_bumps_the_version():
    dist.init_process_group("single")
    t = dl.tensor([1.0, 2.0])
    array, version = t.array, t._version[0]
    dist.all_reduce(t)
    assert t.array is array and t._version[0] == version + 1


def test_init_twice_unknown_backend_and_mismatched_world_size():
    dist.init_process_group("single")
    with pytest.raises(RuntimeError, match="twice"):
        dist.init_process_group("single")
    dist.destroy_process_group()
    with pytest.raises(ValueError, match="unknown backend 'gloo'"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="world_size=4 was asked for"):
        dist.init_process_group("single", world_size=4)
    assert not dist.is_initialized()
    dist.init_process_group("single", world_size=1, rank=0)


def test_single_backend_refuses_a_process_started_as_one_of_many(monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "4")
    with pytest.raises(RuntimeError, match="one of 4: each would train alone"):
        dist.init_process_group("single")


def test_mpi_backend_without_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py now fails
    with pytest.raises(RuntimeError, match=r'pip install "difflab\[mpi\]"'):
        dist.init_process_group("mpi")


@needs_mpi4py
def test_mpi_backend_alone_is_a_world_of_one():
    dist.init_process_group("mpi")
    assert (dist.get_backend(), dist.get_rank(), dist.get_world_size()) == ("mpi", 0, 1)
    t = dl.tensor([[1.0, 2.0], [3.0, 4.0]]).T  # strided: communicated through a copy
    dist.all_reduce(t, op=ReduceOp.MAX)
    assert t.tolist() == [[1.0, 3.0], [2.0, 4.0]]


@pytest.mark.parametrize("backend", ["single", pytest.param("mpi", marks=needs_mpi4py)])
def test_bad_arguments_are_named(backend):
    dist.init_process_group(backend)
    with pytest.raises(TypeError, match="op must be a difflab.distributed.ReduceOp"):
        dist.all_reduce(dl.ones(2), op="sum")
    with pytest.raises(TypeError, match="must be a difflab Tensor"):
        dist.all_reduce(np.ones(2))
    with pytest.raises(ValueError, match=r"src=1 is not a rank of this group \(ranks are 0..0\)"):
        dist.broadcast(dl.ones(2), src=1)
    with pytest.raises(ValueError, match="list of world_size=1 tensors, got 2"):
        dist.all_gather([dl.ones(2), dl.ones(2)], dl.ones(2))
    with pytest.raises(ValueError, match=r"tensor_list\[0\] has shape \(3,\)"):
        dist.all_gather([dl.ones(3)], dl.ones(2))
    with pytest.raises(RuntimeError, match="AVG needs a floating point tensor"):
        dist.all_reduce(dl.tensor([1, 2]), op=ReduceOp.AVG)
    read_only = dl.Tensor._wrap(np.broadcast_to(np.ones(1), (3,)))
    with pytest.raises(RuntimeError, match=r"read-only.*clone\(\) it first"):
        dist.all_reduce(read_only)


@pytest.mark.parametrize("backend", ["single", pytest.param("mpi", marks=needs_mpi4py)])
def test_a_cuda_tensor_is_reduced_in_place_on_its_gpu(backend, cuda):
    dist.init_process_group(backend)
    t = dl.tensor([1.0, 2.0], device="cuda")
    array = t.array
    dist.all_reduce(t, op=ReduceOp.AVG)
    assert t.array is array and t.device.type == "cuda" and t.tolist() == [1.0, 2.0]
