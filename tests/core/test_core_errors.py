"""Each mistake gets a clear error that names the problem and how to fix it."""

import numpy as np
import pytest

import difflab as dl


def test_shape_mismatch_names_both_shapes():
    a, b = dl.ones(2, 3), dl.ones(4, 5)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        a + b
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\)"):
        a @ b


def test_backward_on_non_scalar_without_gradient():
    x = dl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"scalar outputs.*shape \(3,\).*gradient="):
        (x * 2).backward()


def test_second_backward_through_freed_graph_mentions_retain_graph():
    x = dl.ones(3, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_saved_tensor_modified_in_place_is_caught_by_the_version_counter():
    x = dl.ones(3, requires_grad=True)
    h = x * 2
    y = (h * h).sum()  # mul saves h
    with dl.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation.*version"):
        y.backward()


def test_in_place_on_a_leaf_that_requires_grad():
    w = dl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad.*no_grad"):
        w += 1
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w[0] = 5.0
    with dl.no_grad():
        w -= 0.5  # allowed: the optimiser's update
    assert w.tolist() == [0.5, 0.5, 0.5]


def test_requires_grad_on_an_integer_tensor():
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        dl.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        dl.arange(3).requires_grad_()


def test_cuda_asked_for_where_there_is_none():
    if dl.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(RuntimeError, match=r"pip install 'difflab\[cuda12\]'"):
        dl.device("cuda")
    with pytest.raises(RuntimeError, match="CUDA"):
        dl.ones(2).cuda()
    with pytest.raises(RuntimeError, match="CUDA"):
        dl.cuda.get_device_name(0)
    assert dl.cuda.device_count() == 0 and not dl.cuda.is_available()


def test_two_devices_in_one_op_names_both(cuda):
    with pytest.raises(RuntimeError, match="cpu and cuda:0"):
        dl.ones(2) + dl.ones(2).cuda()


def test_device_mismatch_message_without_a_gpu():
    # Simulate a second kind of array to check the message itself on any machine.
    from difflab.autograd import engine

    class Fake:
        name = "add"

    with pytest.raises(RuntimeError, match="same device.*'add'"):
        engine._raise_device_mismatch(Fake, [dl.ones(1), dl.ones(1)])


def test_bad_device_strings():
    with pytest.raises(ValueError, match="unknown device"):
        dl.device("tpu")
    with pytest.raises(ValueError, match="bad device index"):
        dl.device("cuda:x")


def test_item_of_many_elements_and_numpy_of_grad_tensor():
    with pytest.raises(ValueError, match="only one-element"):
        dl.ones(3).item()
    with pytest.raises(RuntimeError, match=r"detach\(\).numpy\(\)"):
        dl.ones(3, requires_grad=True).numpy()


def test_reshape_of_wrong_size_and_bad_dim():
    with pytest.raises(ValueError, match=r"shape \(4, 4\) is invalid for input of size 6"):
        dl.ones(2, 3).reshape(4, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        dl.ones(2, 3).sum(5)


def test_grad_of_unrecorded_output():
    with pytest.raises(RuntimeError, match="does not require grad"):
        dl.ones(2).sum().backward()


def test_custom_function_returning_wrong_gradient_count_or_shape():
    class Bad(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="returned 2 gradient"):
        Bad.apply(dl.ones(2, requires_grad=True)).sum().backward()

    class BadShape(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    with pytest.raises(RuntimeError, match=r"shape \(\) for input 0, which has shape \(2,\)"):
        BadShape.apply(dl.ones(2, requires_grad=True)).sum().backward()


def test_mismatched_gradient_shape():
    x = dl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"gradient has shape \(2,\).*\(3,\)"):
        (x * 2).backward(gradient=np.ones(2))


def test_cat_and_stack_shape_errors():
    with pytest.raises(ValueError, match="tensor 1 has shape"):
        dl.cat([dl.ones(2, 3), dl.ones(2, 4)], dim=0)
    with pytest.raises(ValueError, match="equal size"):
        dl.stack([dl.ones(2), dl.ones(3)])


def test_unsupported_operand():
    with pytest.raises(TypeError, match="unsupported operand"):
        dl.ones(2) + "a"
