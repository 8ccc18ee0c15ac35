"""Programs a stranger writes with torch.fft, run as ``import difflab as torch``: a spectral
low-pass filter trained by gradient descent, and a convolution by FFT that must equal
``F.conv1d`` in values and gradients.  Each runs in PyTorch too where it is installed, and
gives the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

import difflab

T = 2 * np.pi * np.arange(32) / 32
SIGNAL = np.sin(3 * T) + 0.4 * np.cos(12 * T)  # a slow wave (bin 3) and a fast one (bin 12)


def train_low_pass(torch, steps=150):
    """Learn the gains of each rfft bin that turn a noisy signal into its smooth part."""
    x = torch.tensor(SIGNAL, dtype=torch.float64)
    target = torch.sin(3 * torch.tensor(T, dtype=torch.float64))
    gains = torch.full((17,), 0.5, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([gains], lr=0.05)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        smooth = torch.fft.irfft(torch.fft.rfft(x) * gains, n=32)
        loss = ((smooth - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, gains.detach().numpy().copy()


def test_a_low_pass_filter_learns_to_keep_the_slow_wave():
    losses, gains = train_low_pass(difflab)
    assert losses[-1] < 1e-6 * losses[0]
    # the slow wave's bin is kept, the fast one's dropped
    assert abs(gains[3] - 1.0) < 1e-3
    assert abs(gains[12]) < 1e-3


def test_the_low_pass_filter_trains_as_in_pytorch():
    torch = pytest.importorskip("torch")
    mine, gains = train_low_pass(difflab, steps=20)
    theirs, their_gains = train_low_pass(torch, steps=20)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10)
    np.testing.assert_allclose(gains, their_gains, rtol=1e-9, atol=1e-12)


def fft_conv1d(torch, x, k):
    """``F.conv1d(x, k)`` (a cross-correlation, no padding) through the spectrum."""
    length, width = x.shape[-1], k.shape[-1]
    n = length + width - 1  # long enough that no product wraps around
    spectrum = torch.fft.rfft(x, n=n) * torch.fft.rfft(k, n=n).conj()
    return torch.fft.irfft(spectrum, n=n)[..., : length - width + 1]


@pytest.mark.parametrize("length, width", [(16, 5), (9, 4), (7, 7), (5, 1)])
def test_a_convolution_by_fft_equals_conv1d(length, width):
    torch = difflab
    rng = np.random.default_rng(length * 10 + width)
    x = torch.tensor(rng.standard_normal((3, 1, length)), requires_grad=True)
    k = torch.tensor(rng.standard_normal((1, 1, width)), requires_grad=True)
    weights = torch.tensor(rng.standard_normal((3, 1, length - width + 1)))
    results = []
    for conv in (lambda x, k: torch.nn.functional.conv1d(x, k), lambda x, k: fft_conv1d(
            torch, x, k)):
        x.grad = k.grad = None
        y = conv(x, k)
        (y * weights).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), k.grad.numpy()))
    for by_fft, direct in zip(results[1], results[0]):
        np.testing.assert_allclose(by_fft, direct, rtol=1e-10, atol=1e-12)


def test_the_pinned_loss_curve_of_pytorch():
    # torch 2.13, train_low_pass(torch, steps=3): the first three losses
    losses, _ = train_low_pass(difflab, steps=3)
    np.testing.assert_allclose(losses, PINNED_LOSSES, rtol=1e-10)


PINNED_LOSSES = [0.14500000000000007, 0.11745000090000002, 0.09289566309353288]
