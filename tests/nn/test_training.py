"""Real training: the digits MLP, the seeds' ConvMixer, a dynamic graph with a shared weight."""

import time

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim
from difflab.data import DataLoader, TensorDataset, load_digits, make_moons


def accuracy(model, x, y):
    model.eval()
    with dl.no_grad():
        return float((model(x).argmax(1) == y).float().mean().item())


@pytest.mark.slow
def test_digits_mlp_reaches_97_percent_within_30_seconds():
    start = time.perf_counter()
    dl.manual_seed(0)
    x_train, y_train = load_digits(train=True, flatten=True)
    x_test, y_test = load_digits(train=False, flatten=True)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=dl.Generator().manual_seed(0))
    for _ in range(30):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    elapsed = time.perf_counter() - start
    acc = accuracy(model, x_test, y_test)
    print(f"digits MLP: test accuracy {acc:.4f} in {elapsed:.1f} s")
    assert acc >= 0.97
    assert elapsed <= 30


# The one-line ConvMixer of the course notes, verbatim but for the import.
CONVMIXER = (
    "c=lambda h,d,k,p,n,S=Sequential:S(*[S(Conv2d(*x),GELU(),BatchNorm2d(h))for x in"
    "[(3,h,p,p)]+[(h,h,k,1,k//2,1,h),(h,h,1)]*d],AdaptiveAvgPool2d(1),Flatten(),Linear(h,n))"
)


def convmixer(h, d, k, p, n):
    namespace = {}
    exec("from difflab.nn import *", namespace)
    exec(CONVMIXER, namespace)
    return namespace["c"](h, d, k, p, n)


def test_convmixer_builds_like_pytorch():
    model = convmixer(16, 2, 3, 2, 10)
    assert len(model) == 1 + 2 * 2 + 3
    depthwise = model[1][0]
    assert depthwise.groups == 16 and depthwise.padding == (1, 1)
    out = model(dl.randn(2, 3, 8, 8))
    assert out.shape == (2, 10)


@pytest.mark.slow
def test_convmixer_trains_on_digits_to_90_percent():
    # The lambda hard-codes 3 input channels (RGB); the digits are grey, so the one
    # channel is repeated three times, as one would feed a greyscale image to an RGB model.
    start = time.perf_counter()
    dl.manual_seed(0)
    x_train, y_train = load_digits(train=True)
    x_test, y_test = load_digits(train=False)
    x_train, x_test = x_train.repeat(1, 3, 1, 1), x_test.repeat(1, 3, 1, 1)
    model = convmixer(16, 2, 3, 2, 10)
    opt = optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=dl.Generator().manual_seed(0))
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(6):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    acc = accuracy(model, x_test, y_test)
    print(f"ConvMixer(16, 2, 3, 2): test accuracy {acc:.4f} in "
          f"{time.perf_counter() - start:.1f} s")
    assert acc >= 0.90


class DynamicNet(nn.Module):
    """Python decides the depth per batch; one hidden layer is reused (a shared weight)."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(2, 16)
        self.shared = nn.Linear(16, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x, depth):
        h = self.inp(x).tanh()
        for _ in range(depth):  # the graph is as deep as this loop runs
            h = self.shared(h).tanh()
        if float(h.abs().mean().item()) > 10:  # data-dependent branch
            h = h * 0.1
        return self.out(h)


def test_dynamic_graph_with_shared_weight_trains():
    dl.manual_seed(0)
    x, y = make_moons(200, noise=0.1, seed=0)
    model = DynamicNet()
    opt = optim.Adam(model.parameters(), lr=0.02)
    rng = np.random.default_rng(0)
    first = None
    for _ in range(150):
        depth = int(rng.integers(1, 4))
        opt.zero_grad()
        loss = F.cross_entropy(model(x, depth), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < 0.2 < first
    # the shared layer's gradient is the sum over its uses: check against finite differences
    model.double()
    xd = x.double()
    params = [model.shared.weight]
    assert dl.autograd.gradcheck(
        lambda w: F.cross_entropy(model(xd[:8], 3), y[:8]), params, atol=1e-6)
