"""Every public name added for PyTorch breadth (issue 27) has a numpy-style docstring with
an example, and the examples run (doctest)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import difflab as dl
from tests.docs.docstring_rules import problems, run_module_examples

MODULES = [
    "difflab.nn.functional_activations", "difflab.nn.functional_layers",
    "difflab.nn.functional_losses", "difflab.nn.functional_conv",
    "difflab.nn.functional_pooling", "difflab.nn.functional_vision",
    "difflab.nn.functional_sampling", "difflab.nn.modules.container", "difflab.nn.modules.fold",
    "difflab.nn.modules.pixelshuffle", "difflab.nn.modules.upsampling",
    "difflab.nn.modules.distance", "difflab.nn.modules.normalization",
    "difflab.nn.modules.instancenorm", "difflab.nn.modules.dropout", "difflab.nn.modules.linear",
    "difflab.nn.modules.sparse", "difflab.nn.modules.padding", "difflab.nn.utils.rnn",
    "difflab.nn.modules.activation", "difflab.nn.modules.conv", "difflab.nn.modules.pooling",
    "difflab.nn.modules.transformer", "difflab.nn.modules.loss", "difflab.data.sampler",
    "difflab.data.dataset", "difflab.data.dataloader",
    "difflab.optim.lbfgs", "difflab.optim.adaptive",
    "difflab.optim.lr_scheduler", "difflab.amp.autocast_mode", "difflab.amp.grad_scaler",
    "difflab.cuda", "difflab.cuda.amp", "difflab.backends.cudnn", "difflab.backends.cuda",
    "difflab.backends.mps", "difflab.serialization", "difflab.serialization_modules",
    "difflab.functions_joining", "difflab.functions_picking", "difflab.functions_math",
    "difflab.functions_statistics", "difflab.tensor_inplace",
    "difflab.functions_selecting", "difflab.creation",
    "difflab.functions_sequences", "difflab.tensor",
    "difflab.special",
    "difflab.special.composites", "difflab.distributions", "difflab.distributions.distribution",
    "difflab.distributions.constraints", "difflab.distributions.continuous",
    "difflab.distributions.discrete", "difflab.distributions.gamma",
    "difflab.distributions.multivariate", "difflab.distributions.kl",
    "difflab.distributions.univariate", "difflab.distributions.counts",
    "difflab.distributions.relaxed", "difflab.distributions.transforms",
    "difflab.distributions.transform_base",
    "difflab.distributions.transformed", "difflab.distributions.constraint_registry",
    "difflab.functions_counting", "difflab.functions_scattering", "difflab.func.linearize",
    "difflab.func.functional_call", "difflab.optim.sgd", "difflab.autograd.functional_transforms",
]
# The API reference of nn, optim and utils.data (issue 31): every example runs.
MODULES += [
    "difflab.nn.modules.module", "difflab.nn.init", "difflab.nn.modules.layers",
    "difflab.optim.optimizer", "difflab.optim.sgd", "difflab.data.datasets",
    "difflab.nn.utils.clip_grad", "difflab.nn.utils.convert_parameters",
    "difflab.nn.utils.gradients", "difflab.nn.functional_core", "difflab.nn.modules.rnn",
    "difflab.nn.modules.attention", "difflab.nn.parameter", "difflab.nn.modules.lazy",
    "difflab.nn.modules.adaptive", "difflab.nn.parallel.data_parallel",
    "difflab.linalg.decompositions", "difflab.linalg.solvers", "difflab.linalg.norms",
    "difflab.linalg.elimination", "difflab.linalg.faces", "difflab.autograd.backward_hook",
]
# Parametrizations, pruning, the hook-based norms and weight averaging: the methods' too.
MODULES += [
    "difflab.nn.utils.parametrize", "difflab.nn.utils.parametrizations", "difflab.nn.utils.prune",
    "difflab.nn.utils.weight_norm", "difflab.nn.utils.spectral_norm", "difflab.optim.swa_utils",
]

def _public(module: str) -> list[str]:
    return list(importlib.import_module(module).__all__)


NEW_NAMES = {
    "difflab.special": _public("difflab.special"),
    **{f"difflab.distributions.{m}": _public(f"difflab.distributions.{m}")
       for m in ("distribution", "continuous", "discrete", "gamma", "multivariate", "kl",
                 "univariate", "counts", "relaxed", "transforms", "transform_base", "transformed",
                 "constraint_registry")},
    **{m: _public(m) for m in ("difflab.linalg.decompositions", "difflab.linalg.solvers",
                               "difflab.linalg.norms", "difflab.linalg.elimination",
                               "difflab.linalg.faces")},
    "difflab.functions_joining": _public("difflab.functions_joining"),
    "difflab.autograd.functional_transforms": _public("difflab.autograd.functional_transforms"),
    "difflab.functions_picking": _public("difflab.functions_picking"),
    "difflab.functions_math": _public("difflab.functions_math"),
    "difflab.functions_statistics": _public("difflab.functions_statistics"),
    "difflab.functions_selecting": _public("difflab.functions_selecting"),
    "difflab.functions_sequences": _public("difflab.functions_sequences"),
    "difflab.functions_counting": _public("difflab.functions_counting"),
    "difflab.creation": ["poisson"],
    "difflab.functions_scattering": _public("difflab.functions_scattering"),
    "difflab.nn.functional_layers": _public("difflab.nn.functional_layers"),
    "difflab.nn.functional_losses": _public("difflab.nn.functional_losses"),
    "difflab.nn.functional_conv": _public("difflab.nn.functional_conv"),
    "difflab.nn.functional_pooling": _public("difflab.nn.functional_pooling"),
    "difflab.nn.functional_vision": _public("difflab.nn.functional_vision"),
    "difflab.nn.functional_sampling": _public("difflab.nn.functional_sampling"),
    "difflab.nn.modules.padding": _public("difflab.nn.modules.padding"),
    "difflab.nn.modules.fold": _public("difflab.nn.modules.fold"),
    "difflab.nn.utils.rnn": _public("difflab.nn.utils.rnn"),
    "difflab.nn.modules.pixelshuffle": _public("difflab.nn.modules.pixelshuffle"),
    "difflab.nn.modules.distance": _public("difflab.nn.modules.distance"),
    "difflab.nn.modules.instancenorm": _public("difflab.nn.modules.instancenorm"),
    "difflab.nn.modules.upsampling": _public("difflab.nn.modules.upsampling"),
    "difflab.nn.modules.lazy": _public("difflab.nn.modules.lazy"),
    "difflab.nn.modules.adaptive": _public("difflab.nn.modules.adaptive"),
    "difflab.nn.modules.loss": ["SmoothL1Loss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
                                "HingeEmbeddingLoss", "SoftMarginLoss",
                                "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
                                "TripletMarginLoss", "GaussianNLLLoss", "PoissonNLLLoss",
                                "CTCLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
                                "TripletMarginWithDistanceLoss", "NLLLoss2d"],
    "difflab.nn.modules.normalization": ["GroupNorm", "RMSNorm", "LocalResponseNorm",
                                         "CrossMapLRN2d"],
    "difflab.nn.modules.batchnorm": ["BatchNorm3d", "SyncBatchNorm"],
    "difflab.nn.modules.activation": ["Softmax2d", "RReLU"],
    "difflab.nn.modules.dropout": ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                   "FeatureAlphaDropout"],
    "difflab.nn.modules.conv": ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                                "ConvTranspose3d"],
    "difflab.nn.modules.pooling": ["MaxPool1d", "AvgPool1d", "AdaptiveMaxPool2d",
                                   "AdaptiveAvgPool1d", "AdaptiveMaxPool1d",
                                   "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxPool3d",
                                   "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
                                   "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
                                   "FractionalMaxPool2d", "FractionalMaxPool3d"],
    "difflab.nn.modules.linear": ["Bilinear"],
    "difflab.nn.modules.sparse": ["EmbeddingBag"],
    "difflab.nn.modules.container": ["ParameterDict"],
    "difflab.nn.functional": ["conv1d", "max_pool1d", "avg_pool1d", "hardtanh", "relu6",
                              "smooth_l1_loss", "huber_loss", "celu", "elu", "glu",
                              "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
                              "logsigmoid", "mish", "prelu", "selu", "silu", "softmin",
                              "softplus", "softshrink", "softsign", "tanhshrink", "threshold"],
    "difflab.nn": ["Conv1d", "MaxPool1d", "AvgPool1d", "Hardtanh", "ReLU6", "SmoothL1Loss",
                   "HuberLoss", "Transformer", "TransformerEncoder", "TransformerDecoder",
                   "TransformerEncoderLayer", "TransformerDecoderLayer", "CELU", "ELU",
                   "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "Mish",
                   "PReLU", "SiLU", "Softmin", "Softplus", "Softshrink", "Softsign",
                   "Tanhshrink", "Threshold"],
    "difflab.utils.data": ["Sampler", "SequentialSampler", "RandomSampler",
                           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
                           "IterableDataset", "ChainDataset", "StackDataset", "default_convert",
                           "get_worker_info"],
    "difflab.optim": ["LBFGS", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD",
                      "SparseAdam"],
    "difflab.func": ["linearize", "replace_all_batch_norm_modules_"],
    "difflab.optim.lr_scheduler": ["MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR",
                                   "CosineAnnealingWarmRestarts", "CyclicLR", "ChainedScheduler",
                                   "SequentialLR"],
    "difflab.amp": ["autocast", "GradScaler", "is_autocast_enabled"],
    "difflab.cuda": ["is_initialized", "manual_seed", "manual_seed_all", "seed", "seed_all",
                     "empty_cache", "memory_allocated", "memory_reserved"],
    "difflab.cuda.amp": ["autocast", "GradScaler"],
    "difflab.backends.cudnn": ["is_available", "version", "flags"],
    "difflab.backends.cuda": ["is_built", "enable_flash_sdp", "flash_sdp_enabled",
                              "enable_math_sdp", "enable_mem_efficient_sdp"],
    "difflab.backends.mps": ["is_available", "is_built"],
    "difflab.autograd.backward_hook": _public("difflab.autograd.backward_hook"),
    "difflab.nn.modules.module": ["register_module_forward_pre_hook",
                                  "register_module_forward_hook",
                                  "register_module_full_backward_pre_hook",
                                  "register_module_full_backward_hook",
                                  "register_module_backward_hook"],
    "difflab.serialization": ["add_safe_globals", "get_safe_globals", "clear_safe_globals",
                              "safe_globals", "allowed_globals"],
}


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_in_the_docstrings_run(module):
    cudnn = dl.backends.cudnn
    saved = cudnn.benchmark, cudnn.deterministic
    try:
        results = run_module_examples(module)
    finally:
        cudnn.benchmark, cudnn.deterministic = saved
        dl.serialization.clear_safe_globals()
    assert results.failed == 0, f"{results.failed} example(s) failed in {module}"


@pytest.mark.parametrize("module,name", [(m, n) for m, names in NEW_NAMES.items()
                                         for n in names])
def test_every_new_name_has_an_example(module, name):
    obj = getattr(importlib.import_module(module), name)
    assert "examples" not in problems(obj), f"{module}.{name} lacks an example"
    doc = inspect.getdoc(obj)
    assert len(doc.splitlines()[0]) > 10, f"{module}.{name} lacks a summary line"


def test_the_functions_with_arguments_document_them():
    F = dl.nn.functional
    for f in (F.conv1d, F.max_pool1d, F.avg_pool1d, F.hardtanh, F.smooth_l1_loss,
              F.huber_loss):
        doc = inspect.getdoc(f)
        assert "Parameters\n----------" in doc and "Returns\n-------" in doc, f.__name__
    for cls in (dl.nn.Conv1d, dl.nn.TransformerEncoderLayer, dl.optim.LBFGS,
                dl.utils.data.RandomSampler, dl.amp.GradScaler, dl.amp.autocast):
        assert "Parameters\n----------" in inspect.getdoc(cls), cls.__name__
