"""Tests for notebook 9's exercises: choosing a device; cosine similarities on any device."""

import numpy as np
import submission

import difflab as dl
from difflab.grading import GradingFailure, check_gradient, points, student_environment
from difflab.grading.checks import assert_close

RNG = np.random.default_rng(9)


@points(1, tags=["devices"])
def test_pick_device():
    device = submission.pick_device()
    if isinstance(device, str):
        raise GradingFailure(f"pick_device() returned the string {device!r}; return a "
                             "difflab device: dl.device(...)")
    # what the student's code can use, measured where it runs (under the grader's memory
    # limit CUDA cannot start, though this test's own process may see a GPU)
    cuda = student_environment()["cuda"]
    want = "cuda" if cuda else "cpu"
    if device.type != want:
        raise GradingFailure(f"pick_device() chose {device.type!r}, but in the process "
                             f"running your code dl.cuda.is_available() is {cuda}: choose "
                             f"{want!r} there")


def cosine(x):
    norms = np.linalg.norm(x, axis=1)
    return (x @ x.T) / np.outer(norms, norms)


@points(2, tags=["devices"])
def test_pairwise_cosine():
    x = RNG.standard_normal((6, 4))
    assert_close(submission.pairwise_cosine(dl.tensor(x)), cosine(x),
                 what="pairwise_cosine(x)", atol=1e-10, rtol=1e-8,
                 hint="Divide each row by its norm (x.norm(dim=1, keepdim=True)), then "
                      "take the matrix product with the transpose.")


@points(1, hidden=True, tags=["devices"])
def test_pairwise_cosine_scaled_rows_and_gradient():
    x = RNG.standard_normal((3, 5)) * np.array([[1.0], [100.0], [0.01]])
    assert_close(submission.pairwise_cosine(dl.tensor(x)), cosine(x),
                 what="pairwise_cosine(x) with rows of very different lengths",
                 atol=1e-10, rtol=1e-8)
    check_gradient(submission.pairwise_cosine, [RNG.standard_normal((3, 4))])
