"""One rank of the launched tests: python -m difflab.distributed.run -n N worker.py OUT_DIR.

Every rank runs the same checks and writes what it saw to OUT_DIR/rank<r>.json;
the tests in test_launched.py read those files.  (pytest itself never runs under
mpiexec.)  The errors checked here are raised identically on every rank, so they
can be caught and recorded without ending the job.
"""

import json
import os
import sys

import numpy as np

import difflab as dl
import difflab.distributed as dist
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.data import DataLoader, DistributedSampler, TensorDataset
from difflab.nn.parallel import DistributedDataParallel as DDP

GLOBAL_BATCH, STEPS = 8, 4


def collectives(rank, size):
    out = {}
    for op in dist.ReduceOp:
        t = dl.tensor([rank + 1.0, -(rank + 2.0)], dtype=dl.float64)
        dist.all_reduce(t, op=op)
        out[f"all_reduce_{op.name}"] = t.tolist()
    t = dl.tensor([[rank, 10 * rank], [1, 2]], dtype=dl.float64).T  # a strided view
    dist.all_reduce(t)
    out["all_reduce_strided"] = t.tolist()
    t = dl.tensor([rank + 1.0], dtype=dl.float64)
    work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    work.wait()
    out["all_reduce_async_avg"] = t.tolist()
    t = dl.tensor([float(rank)] * 3, dtype=dl.float64)
    dist.broadcast(t, src=size - 1)
    out["broadcast"] = t.tolist()
    gathered = [dl.zeros(2, dtype=dl.int64) for _ in range(size)]
    dist.all_gather(gathered, dl.tensor([rank, rank * rank]))
    out["all_gather"] = [g.tolist() for g in gathered]
    t = dl.tensor([rank + 1.0], dtype=dl.float64)
    dist.reduce(t, dst=size - 1, op=dist.ReduceOp.PRODUCT)
    out["reduce"] = t.tolist()
    dist.barrier()
    return out


def errors(rank):
    """Bad input that every rank sees: each must raise, and the job must go on."""
    out = {}
    try:
        dist.all_reduce(dl.zeros(3 if rank == 0 else 4))
    except RuntimeError as exc:
        out["all_reduce_shapes"] = str(exc)
    try:
        dist.all_reduce(dl.zeros(2), op=dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX)
    except RuntimeError as exc:
        out["all_reduce_ops"] = str(exc)
    try:
        DDP(nn.Sequential(nn.Linear(4, 5 if rank == 0 else 6), nn.ReLU()))
    except RuntimeError as exc:
        out["ddp_shapes"] = str(exc)
    return out


def make_model():
    dl.manual_seed(1234 + dist.get_rank())  # different on every rank: DDP must align them
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).double()


def data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((STEPS * GLOBAL_BATCH, 5))
    y = rng.integers(0, 3, STEPS * GLOBAL_BATCH)
    return dl.tensor(x), dl.tensor(y)


def train_alone(start):
    """Single-process reference: the whole global batch each step."""
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).double()
    model.load_state_dict(start)
    opt = dl.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    x, y = data()
    for step in range(STEPS):
        batch = slice(step * GLOBAL_BATCH, (step + 1) * GLOBAL_BATCH)
        opt.zero_grad()
        F.cross_entropy(model(x[batch]), y[batch]).backward()
        opt.step()
    return model


def train_ddp(bucket_cap_mb, accumulate):
    """DDP with the same global batch, split over the ranks (and into micro-batches)."""
    rank, size = dist.get_rank(), dist.get_world_size()
    model = DDP(make_model(), bucket_cap_mb=bucket_cap_mb)
    start = {k: v.clone() for k, v in model.module.state_dict().items()}
    opt = dl.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    x, y = data()
    local = GLOBAL_BATCH // size
    micro = local // accumulate
    for step in range(STEPS):
        first = step * GLOBAL_BATCH + rank * local
        opt.zero_grad()
        for k in range(accumulate):
            part = slice(first + k * micro, first + (k + 1) * micro)
            if k < accumulate - 1:
                with model.no_sync():
                    (F.cross_entropy(model(x[part]), y[part]) / accumulate).backward()
            else:
                (F.cross_entropy(model(x[part]), y[part]) / accumulate).backward()
        opt.step()
    reference = train_alone(start)
    gap = max(float(np.abs(p.array - q.array).max())
              for p, q in zip(model.module.parameters(), reference.parameters()))
    return {"gap": gap, "buckets": len(model._buckets),
            "params": [p.array.ravel().tolist() for p in model.module.parameters()]}


def unused_parameters(rank):
    """A head used on rank 0 only, and one used nowhere: find_unused_parameters=True."""
    model = nn.ModuleDict({"body": nn.Linear(3, 2), "head0": nn.Linear(2, 1),
                           "never": nn.Linear(2, 1)}).double()
    ddp = DDP(model, find_unused_parameters=True)
    h = ddp.module["body"](dl.ones(1, 3, dtype=dl.float64))
    loss = h.sum() + (ddp.module["head0"](h).sum() if rank == 0 else 0)
    loss.backward()
    return {"head0_grad": model["head0"].weight.grad.tolist(),
            "never_grad": model["never"].weight.grad is None,
            "body_grad": model["body"].weight.grad.tolist()}


def sampler_share(rank, size):
    dataset = TensorDataset(dl.arange(10))
    sampler = DistributedSampler(dataset, seed=3)
    sampler.set_epoch(2)
    return [int(b.item()) for (b,) in DataLoader(dataset, batch_size=1, sampler=sampler)]


def cuda_checks(rank, size):
    """CuPy tensors go through host memory and come back to the GPU; DDP trains on the GPU."""
    t = dl.tensor([rank + 1.0, 2.0], dtype=dl.float64, device="cuda")
    dist.all_reduce(t)
    gathered = [dl.zeros(1, device="cuda") for _ in range(size)]
    dist.all_gather(gathered, dl.tensor([float(rank)], device="cuda"))
    model = DDP(make_model().to("cuda"), bucket_cap_mb=1e-6)
    opt = dl.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    start = {k: v.cpu() for k, v in model.module.state_dict().items()}
    x, y = data()
    local = GLOBAL_BATCH // size
    for step in range(STEPS):
        part = slice(step * GLOBAL_BATCH + rank * local, step * GLOBAL_BATCH + (rank + 1) * local)
        opt.zero_grad()
        F.cross_entropy(model(x[part].to("cuda")), y[part].to("cuda")).backward()
        opt.step()
    reference = train_alone(start)
    return {"all_reduce": t.cpu().tolist(), "device": str(t.device),
            "all_gather": [g.cpu().tolist() for g in gathered],
            "grad_device": str(next(model.module.parameters()).grad.device),
            "gap": max(float(np.abs(p.cpu().array - q.array).max())
                       for p, q in zip(model.module.parameters(), reference.parameters()))}


def sync_batch_norm(rank, size):
    """nn.SyncBatchNorm on uneven shares (rank r: r + 2 samples), two training steps,
    against BatchNorm1d on the whole batch (computed on every rank)."""
    counts = [r + 2 for r in range(size)]
    rng = np.random.default_rng(3)
    data = rng.normal(size=(sum(counts), 3, 2)) * np.array([1.0, 3.0, 0.5])[:, None] + 1.0
    coef = rng.normal(size=data.shape)
    start = sum(counts[:rank])
    mine = slice(start, start + counts[rank])

    def make(cls):
        layer = cls(3, dtype=dl.float64)
        with dl.no_grad():
            layer.weight.copy_(dl.tensor([0.5, 2.0, -1.0], dtype=dl.float64))
            layer.bias.copy_(dl.tensor([0.1, 0.0, 0.3], dtype=dl.float64))
        return layer

    sync, full = make(nn.SyncBatchNorm), make(nn.BatchNorm1d)
    gaps = []
    for step in (1.0, 2.0):
        x = dl.tensor(data[mine] * step, requires_grad=True)
        y = sync(x)
        (y * dl.tensor(coef[mine])).sum().backward()
        whole = dl.tensor(data * step, requires_grad=True)
        y_whole = full(whole)
        (y_whole * dl.tensor(coef)).sum().backward()
        gaps.append(float(np.abs(y.detach().numpy() - y_whole.detach().numpy()[mine]).max()))
        gaps.append(float(np.abs(x.grad.numpy() - whole.grad.numpy()[mine]).max()))
    for name in ("running_mean", "running_var"):
        gaps.append(float(np.abs(getattr(sync, name).numpy() - getattr(full, name).numpy()
                                 ).max()))
    return {"gap": max(gaps), "weight_grad": sync.weight.grad.tolist(),
            "bias_grad": sync.bias.grad.tolist(), "full_weight_grad": full.weight.grad.tolist(),
            "full_bias_grad": full.bias.grad.tolist()}


def main():
    out_dir = sys.argv[1]
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    if sys.argv[2:] == ["cuda"]:
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
            json.dump(cuda_checks(rank, size), f)
        return
    result = {"rank": rank, "size": size, "threads": os.environ.get("OMP_NUM_THREADS")}
    result["collectives"] = collectives(rank, size)
    result["errors"] = errors(rank)
    result["ddp"] = {f"{cap}:{acc}": train_ddp(cap, acc)
                     for cap in (1e-6, 1000.0) for acc in (1, 2)}
    result["unused"] = unused_parameters(rank)
    result["sampler"] = sampler_share(rank, size)
    result["sync_bn"] = sync_batch_norm(rank, size)
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
