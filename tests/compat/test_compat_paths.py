"""PyTorch's module paths (torch.nn.modules.linear, torch.utils.data.sampler, torch.backends,
torch.amp, torch.cuda.amp) import as difflab's, and their switches behave as PyTorch's."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest

import difflab as dl
from difflab import coverage

ROOT = Path(__file__).resolve().parents[2]
PATHS = coverage.load_module_paths()
PAGE = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PATHS)
def test_every_listed_module_path_imports_or_is_marked_missing(path):
    name = coverage.difflab_path(path)
    row = next(line for line in PAGE.splitlines() if line.startswith(f"| `{path}` |"))
    if "| missing" in row:
        assert not coverage.importable(name)
    else:
        module = importlib.import_module(name)
        assert row == f"| `{path}` | `{name}` |" and module.__name__ == name


def test_importable_imports_only_difflab():
    with pytest.raises(ValueError, match="only imports difflab"):
        coverage.importable("os")
    assert not coverage.importable("difflab.no_such_module")


def test_module_files_hold_the_same_classes_as_nn():
    from difflab.nn.modules import (
        activation,
        batchnorm,
        conv,
        dropout,
        flatten,
        linear,
        normalization,
        pooling,
        sparse,
        transformer,
    )

    for module in (activation, batchnorm, conv, dropout, flatten, linear, normalization,
                   pooling, sparse, transformer):
        assert module.__all__
        for name in module.__all__:
            assert getattr(module, name) is getattr(dl.nn, name), (module.__name__, name)
    from difflab.utils.data import dataloader, dataset, distributed, sampler

    for module in (dataloader, dataset, distributed, sampler):
        for name in module.__all__:
            assert getattr(module, name) is getattr(dl.utils.data, name)
    assert dl.utils.data.RandomSampler is dl.data.RandomSampler


def test_backend_switches_take_booleans_and_restore():
    cudnn, cuda = dl.backends.cudnn, dl.backends.cuda
    saved = cudnn.benchmark, cudnn.deterministic
    try:
        cudnn.benchmark = True
        assert cudnn.benchmark is True
        with pytest.raises(TypeError, match="benchmark must be True or False"):
            cudnn.benchmark = 1
        with cudnn.flags(enabled=True, deterministic=True):
            assert cudnn.deterministic is True and cudnn.benchmark is False
        assert cudnn.benchmark is True
    finally:
        cudnn.benchmark, cudnn.deterministic = saved
    assert not cudnn.is_available() and cudnn.version() is None
    cuda.matmul.allow_tf32 = True
    assert cuda.matmul.allow_tf32 is True
    cuda.matmul.allow_tf32 = False
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
        cuda.matmul.allow_tf33 = True
    with pytest.raises(TypeError, match="allow_tf32 must be True or False"):
        cuda.matmul.allow_tf32 = "yes"
    cuda.enable_flash_sdp(False)
    assert not cuda.flash_sdp_enabled()
    cuda.enable_flash_sdp(True)
    assert not dl.backends.mps.is_available() and not dl.backends.mps.is_built()


def test_cuda_no_ops_answer_as_pytorch_without_a_gpu():
    dl.manual_seed(3)
    expected = dl.rand(3)
    dl.manual_seed(3)
    dl.cuda.manual_seed(11)
    dl.cuda.manual_seed_all(12)
    dl.cuda.seed()
    dl.cuda.seed_all()
    dl.cuda.empty_cache()
    assert np.array_equal(dl.rand(3).array, expected.array)  # the CPU stream is untouched
    with pytest.raises(TypeError, match="a seed must be an integer"):
        dl.cuda.manual_seed_all(1.5)
    if not dl.cuda.is_available():
        assert dl.cuda.memory_allocated() == dl.cuda.memory_reserved() == 0
        assert not dl.cuda.is_initialized()


def test_autocast_answers_is_autocast_enabled_and_a_disabled_region_keeps_dtypes():
    model = dl.nn.Linear(3, 2)
    x = dl.randn(4, 3)
    with dl.autocast("cpu"):
        assert dl.amp.is_autocast_enabled("cpu")
        with dl.amp.autocast("cpu", enabled=False):
            assert not dl.amp.is_autocast_enabled("cpu")
            y = model(x)
        assert dl.amp.is_autocast_enabled("cpu")
    assert not dl.amp.is_autocast_enabled("cpu")
    assert y.dtype == dl.float32 and np.allclose(y.array, model(x).array)

    @dl.amp.autocast("cpu", dtype=dl.float16)
    def inside():
        return dl.amp.is_autocast_enabled("cpu")

    assert inside() and not dl.amp.is_autocast_enabled("cpu")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        dl.amp.autocast("tpu")
    with pytest.raises(ValueError, match="lower-precision"):
        dl.amp.autocast("cpu", dtype=dl.int64)


@pytest.mark.skipif(dl.cuda.is_available(), reason="checks the behaviour without CUDA")
def test_cuda_autocast_and_scaler_disable_themselves_with_pytorchs_warnings():
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
        region = dl.amp.autocast("cuda")
    with region:
        assert not dl.amp.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
        scaler = dl.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with pytest.warns(FutureWarning, match="deprecated"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        old = dl.cuda.amp.GradScaler()
    model = dl.nn.Linear(2, 1)
    opt = dl.optim.SGD(model.parameters(), lr=0.1)
    loss = model(dl.ones(3, 2)).sum()
    assert old.scale(loss) is loss
    loss.backward()
    before = model.weight.array.copy()
    old.step(opt)
    old.update()
    assert np.allclose(model.weight.array, before - 0.1 * model.weight.grad.array)


def _sgd_problem(seed: int = 0):
    dl.manual_seed(seed)
    model = dl.nn.Linear(3, 1)
    return model, dl.optim.SGD(model.parameters(), lr=0.1), dl.randn(5, 3)


def test_grad_scaler_unscales_exactly_and_skips_overflowing_steps():
    model, opt, x = _sgd_problem()
    reference, ref_opt, _ = _sgd_problem()
    scaler = dl.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    for _step in range(2):
        for m, o, scaled in ((model, opt, True), (reference, ref_opt, False)):
            o.zero_grad()
            loss = m(x).pow(2).mean()
            if scaled:
                scaler.scale(loss).backward()
                scaler.step(o)
                scaler.update()
            else:
                loss.backward()
                o.step()
        assert np.allclose(model.weight.array, reference.weight.array, rtol=1e-6)
    assert scaler.get_scale() == 2.0**11  # grew after growth_interval good steps
    # an overflowing gradient: the step is skipped and the scale backs off
    opt.zero_grad()
    before = model.weight.array.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        (model(x).sum() * float("inf")).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    assert scaler.step(opt) is None
    scaler.update()
    assert np.array_equal(model.weight.array, before) and scaler.get_scale() == 2.0**10
    state = scaler.state_dict()
    other = dl.amp.GradScaler("cpu")
    other.load_state_dict(state)
    assert other.get_scale() == 2.0**10 and other.state_dict() == state
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0.0)
    with pytest.raises(ValueError, match="growth_factor"):
        dl.amp.GradScaler("cpu", growth_factor=0.5)
