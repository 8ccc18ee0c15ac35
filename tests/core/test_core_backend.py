"""Backends: the same tests on NumPy and, where present, CuPy."""

import numpy as np

import difflab as dl
from difflab.autograd import gradcheck


def test_device_objects():
    assert dl.device("cpu") == dl.Device("cpu") == "cpu"
    assert str(dl.Device("cuda")) == "cuda:0" and dl.Device("cuda:1").index == 1
    assert repr(dl.Device("cpu")) == "device(type='cpu')"
    assert dl.Device(dl.Device("cuda:2")) == "cuda:2"


def test_cuda_queries_without_a_gpu_answer_plainly():
    assert isinstance(dl.cuda.is_available(), bool)
    assert dl.cuda.device_count() >= 0


def test_same_computation_on_each_device(device):
    x = dl.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=dl.float64, device=device,
                  requires_grad=True)
    w = dl.tensor([1.5, -0.5], dtype=dl.float64, device=device, requires_grad=True)
    loss = ((x @ w).tanh() ** 2).sum() + x.exp().mean()
    loss.backward()
    assert x.device == dl.device(device) and x.grad.device == dl.device(device)
    cpu_x = dl.tensor(x.detach().cpu().numpy(), requires_grad=True)
    cpu_w = dl.tensor(w.detach().cpu().numpy(), requires_grad=True)
    (((cpu_x @ cpu_w).tanh() ** 2).sum() + cpu_x.exp().mean()).backward()
    assert np.allclose(x.grad.cpu().numpy(), cpu_x.grad.numpy())
    assert np.allclose(w.grad.cpu().numpy(), cpu_w.grad.numpy())


def test_gradcheck_on_each_device(device):
    a = dl.randn(3, 4, dtype=dl.float64, device=device, requires_grad=True)
    b = dl.randn(4, dtype=dl.float64, device=device, requires_grad=True)
    assert gradcheck(lambda p, q: (p * q).sin() @ q, (a, b))


def test_moving_between_devices_keeps_gradients(device):
    x = dl.ones(3, dtype=dl.float64, requires_grad=True)
    y = (x.to(device) * 2).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0] and x.grad.device == dl.device("cpu")


def test_cuda_device_properties(cuda):
    assert dl.cuda.device_count() >= 1 and isinstance(dl.cuda.get_device_name(0), str)
    dl.cuda.synchronize()
    assert dl.cuda.current_device() == 0
