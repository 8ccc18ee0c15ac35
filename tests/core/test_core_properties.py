"""Property-based tests: random shapes and random compositions, checked by finite differences."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import difflab as dl
from difflab.autograd import gradcheck

# Each keeps values moderate, so that finite differences stay well-conditioned.
SAFE_UNARY = [dl.sin, dl.cos, dl.tanh, dl.sigmoid, lambda t: dl.exp(dl.sin(t)), dl.atan, dl.erf,
              lambda t: t * t, lambda t: dl.log1p(t * t), lambda t: dl.sqrt(1.0 + t * t)]
BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
          lambda a, b: a / (1.5 + b * b), lambda a, b: dl.atan2(a, 2.5 + b)]  # away from (0, 0)


def tensor(values, device="cpu"):
    return dl.tensor(values, dtype=dl.float64, requires_grad=True, device=device)


# The device fixture only names the device (and puts the CuPy stand-in in place): sharing it
# between the examples of one test is what is wanted.
same_device_for_every_example = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture])


@same_device_for_every_example
@given(st.data())
def test_broadcasting_binary_ops_match_finite_differences(device, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a_shape, b_shape = shapes.input_shapes
    values = st.floats(-2, 2, allow_nan=False)
    a = tensor(data.draw(hnp.arrays(np.float64, a_shape, elements=values)), device)
    b = tensor(data.draw(hnp.arrays(np.float64, b_shape, elements=values)), device)
    op = data.draw(st.sampled_from(BINARY))
    assert gradcheck(op, (a, b))


@same_device_for_every_example
@given(st.data())
def test_random_compositions_match_finite_differences(device, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    x = tensor(data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-1.5, 1.5))), device)
    steps = data.draw(st.lists(st.tuples(st.sampled_from(SAFE_UNARY), st.booleans()),
                               min_size=1, max_size=5))

    peaks = []  # (the largest |value| of each step)

    def composed(t):
        y = t
        for function, reuse_input in steps:
            y = function(y) + (t if reuse_input else 0.0)  # reuse: adjoints must add up
            peaks.append(float(abs(y.detach()).max()) if y.numel() else 0.0)
        return y

    # The reference itself is only good where the values stay moderate: central differences
    # err by about eps^2 f'''/6, and squares of squares reach 1e4 and more (sin of that
    # then swings within one step: the numeric derivative, not the tape's, is off by 0.1%).
    composed(x)
    assume(max(peaks) <= 100.0)
    assert gradcheck(composed, (x,))


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-3, 3)), st.data())
@same_device_for_every_example
def test_reductions_over_random_axes(device, values, data):
    x = tensor(values, device)
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    keepdim = data.draw(st.booleans())
    assert gradcheck(lambda t: t.sum(dim, keepdim) * t.mean(dim, keepdim), (x,))
    assert gradcheck(lambda t: t.logsumexp(dim, keepdim), (x,))
