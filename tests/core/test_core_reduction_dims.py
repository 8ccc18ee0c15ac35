"""A reduction's empty ``dim`` (``dim=[]``, ``dim=()``) reduces over every dimension, as in
PyTorch 2.13; NumPy's ``axis=()`` keeps NumPy's meaning (no axis reduced), which the
derivative rules rely on.

The expected numbers were computed with PyTorch 2.13 on the CPU (``torch.sum(x, dim=[])``
and so on, in float64) and written in here: PyTorch is not imported.  difflab used to
reduce over no dimension (``sum(dim=[])`` gave ``x`` back, ``var`` nan everywhere).
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

X = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
# torch.<name>(torch.tensor(X, dtype=torch.float64), dim=[]).item()
PYTORCH = {"sum": 5.0, "mean": 0.8333333333333334, "amax": 5.0, "amin": -6.0,
           "std": 4.167333280008532, "var": 17.366666666666667, "nansum": 5.0,
           "nanmean": 0.8333333333333334, "logsumexp": 5.420326756010547}


@pytest.mark.parametrize("empty", [[], ()], ids=["list", "tuple"])
@pytest.mark.parametrize("name", sorted(PYTORCH))
def test_an_empty_dim_reduces_every_dimension(name, empty):
    x = dl.tensor(X, dtype=dl.float64)
    for keepdim, shape in ((False, ()), (True, (1, 1))):
        for result in (getattr(dl, name)(x, dim=empty, keepdim=keepdim),
                       getattr(x, name)(dim=empty, keepdim=keepdim),
                       getattr(x, name)(empty, keepdim=keepdim)):
            assert tuple(result.shape) == shape
            assert result.dtype == dl.float64
            assert result.reshape(()).item() == pytest.approx(PYTORCH[name], rel=1e-15)


def test_the_functions_built_on_the_reductions_follow():
    x = dl.tensor(X, dtype=dl.float64)
    assert dl.count_nonzero(x, dim=[]).item() == 6 and x.count_nonzero(()).item() == 6
    assert x.norm(dim=[]).item() == pytest.approx(9.539392014169456, rel=1e-15)
    assert x.norm(p=1, dim=[]).item() == 21.0 and x.norm(p=float("inf"), dim=()).item() == 6.0
    variance, mean = dl.var_mean(x, dim=[])
    assert (variance.item(), mean.item()) == pytest.approx((17.366666666666667,
                                                            0.8333333333333334))
    std, _ = dl.std_mean(x, dim=(), correction=0)
    assert std.item() == pytest.approx(3.8042374035044424)  # (PyTorch's 3.8042)
    assert dl.tensor([[1, 2], [3, 4]]).sum(dim=[]).item() == 10  # (integers: int64)
    assert dl.tensor([[1, 2], [3, 4]]).sum(dim=[]).dtype == dl.int64
    assert x.sum(dim=[], dtype=dl.float32).dtype == dl.float32
    assert dl.sum(np.array(X), dim=[]) == 5.0  # (an array given dim: PyTorch's meaning)
    assert dl.mean(np.array(X), dim=()) == pytest.approx(0.8333333333333334)


def test_empty_and_0d_inputs():
    assert dl.zeros(0, 3).sum(dim=[]).item() == 0.0
    assert np.isnan(dl.zeros(0, 3).mean(dim=[]).item())
    assert dl.tensor(3.0).sum(dim=[]).item() == 3.0 and dl.tensor(3.0).mean(dim=()).item() == 3.0


def test_all_and_any_keep_pytorchs_elementwise_meaning():
    # PyTorch 2.13: all(dim=[]) and any(dim=()) reduce nothing (each element's truth value)
    x = dl.tensor(X) > 0
    expected = [[True, False, True], [True, True, False]]
    assert dl.all(x, dim=[]).tolist() == expected and dl.any(x, dim=()).tolist() == expected


@pytest.mark.parametrize("call, words", [
    (lambda x: x.prod(dim=[]), "prod: dim must be one int"),
    (lambda x: dl.prod(x, ()), "prod: dim must be one int"),
    (lambda x: dl.aminmax(x, dim=[]), "aminmax: dim must be an int, got list"),
    (lambda x: x.argmax(dim=()), "argmax: dim must be an int, got tuple"),
    (lambda x: x.max(dim=[]), "dim must be an int"),
    (lambda x: dl.median(x, dim=[]), "median: dim must be an int"),
    (lambda x: dl.cumsum(x, ()), "cumsum: dim must be an int"),
    (lambda x: dl.softmax(x, []), "softmax: dim must be an int"),
], ids=["prod", "prod-tuple", "aminmax", "argmax", "max", "median", "cumsum", "softmax"])
def test_the_one_dim_functions_refuse_an_empty_dim_as_pytorch_does(call, words):
    with pytest.raises(TypeError, match=words):  # (PyTorch: "argument 'dim' must be int")
        call(dl.tensor(X))


def test_numpys_axis_of_no_axes_still_reduces_nothing():
    x = dl.tensor(X, dtype=dl.float64)
    assert x.sum(axis=()).tolist() == X and dl.sum(x, axis=()).tolist() == X
    assert x.amax(axis=()).tolist() == X and x.mean(axis=()).tolist() == X


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "std", "var", "logsumexp"])
def test_gradcheck_over_an_empty_dim(name):
    # (PyTorch 2.13's std(dim=[]) backward gives ±inf: difflab's is the gradient of the
    # std of all elements, checked against central differences)
    x = dl.tensor([[0.3, -1.2, 2.5], [1.7, -0.4, 0.9]], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda t: getattr(t, name)(dim=[]), (x,))
    assert gradcheck(lambda t: getattr(dl, name)(t, dim=(), keepdim=True), (x,))
