"""Bad input gets a clear error that names the problem."""

import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim


def test_linear_wrong_feature_size():
    with pytest.raises(ValueError, match=r"Linear expected input with 4 features .* \(2, 5\)"):
        nn.Linear(4, 3)(dl.randn(2, 5))


def test_conv2d_wrong_channels_and_rank():
    with pytest.raises(ValueError, match=r"expected input with 3 channels .* got 1 channels"):
        nn.Conv2d(3, 8, 3)(dl.randn(2, 1, 8, 8))
    with pytest.raises(ValueError, match="4-D input"):
        nn.Conv2d(3, 8, 3)(dl.randn(3, 8, 8))
    with pytest.raises(ValueError, match="smaller than the kernel"):
        nn.Conv2d(1, 1, 5)(dl.randn(1, 1, 3, 3))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 8, 3, groups=2)


def test_class_targets_of_wrong_dtype_or_shape():
    logits = dl.randn(4, 3)
    with pytest.raises(TypeError, match="integer dtype.*target.long"):
        nn.CrossEntropyLoss()(logits, dl.tensor([0.0, 1.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match=r"expected target of shape \(4,\).*\(4, 1\)"):
        nn.CrossEntropyLoss()(logits, dl.tensor([[0], [1], [2], [1]]))
    with pytest.raises(IndexError, match="target holds class 3 but the input has 3 classes"):
        nn.CrossEntropyLoss()(logits, dl.tensor([0, 1, 3, 1]))
    with pytest.raises(TypeError, match="integer dtype"):
        nn.NLLLoss()(logits, dl.tensor([0.0, 1.0, 2.0, 1.0]))


def test_elementwise_losses_check_shapes_and_ranges():
    with pytest.raises(ValueError, match=r"target shape \(4,\) must equal the input shape"):
        nn.MSELoss()(dl.randn(4, 1), dl.randn(4))
    with pytest.raises(ValueError, match="probabilities in \\[0, 1\\]"):
        nn.BCELoss()(dl.tensor([0.5, 1.5]), dl.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="reduction"):
        nn.L1Loss(reduction="avg")


def test_optimizer_with_no_parameters():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam(nn.ReLU().parameters())
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(nn.Parameter(dl.zeros(2)), lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.SGD(nn.Linear(2, 2).parameters(), lr=-1)


def test_embedding_and_batchnorm_errors():
    with pytest.raises(IndexError, match=r"indices must be in \[0, 5\)"):
        nn.Embedding(5, 2)(dl.tensor([1, 5]))
    with pytest.raises(TypeError, match="integers"):
        nn.Embedding(5, 2)(dl.tensor([1.0]))
    with pytest.raises(ValueError, match="expected 4 channels"):
        nn.BatchNorm2d(4)(dl.randn(2, 3, 2, 2))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(dl.randn(1, 3))


def test_pooling_errors():
    with pytest.raises(ValueError, match="at most half of the kernel"):
        F.max_pool2d(dl.randn(1, 1, 4, 4), 2, padding=2)
