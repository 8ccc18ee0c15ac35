"""More PyTorch teaching programs, in the style of the official tutorials, run on difflab.

Each program in examples/pytorch/ listed here is what a PyTorch tutorial or course
writes (character-RNN name classification, seq2seq with attention, a spatial
transformer, neural style transfer with L-BFGS, DQN, EmbeddingBag text
classification, torch.func per-sample gradients and ensembling, a ResNet checkpoint
resumed, autocast with a GradScaler, packed variable-length sequences, a model exported
to ONNX and run in ONNX Runtime, pruning then fine-tuning with weight averaging), with
only the import changed.  The checks read what the programs print.

With PyTorch at hand (installed here, or the interpreter named by the environment
variable DIFFLAB_TORCH_PYTHON), the programs whose data and randomness do not come
from torch's generator also run on PyTorch from the *same* initial weights (saved by
the PyTorch run, loaded by difflab's): every number they print must agree to rounding.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.compat.test_compat_programs import PROGRAMS, run

pytestmark = pytest.mark.slow


def value(output: str, label: str) -> str:
    found = re.search(rf"^{re.escape(label)}:? (.*)$", output, re.M)
    assert found, f"the program printed no {label!r}:\n{output[-600:]}"
    return found.group(1).strip()


def number(output: str, label: str) -> float:
    return float(value(output, label))


def check_rnn_names(out: str) -> None:
    assert number(out, "accuracy") > 0.9 and number(out, "final loss") < 0.3, out[-500:]
    assert value(out, "Dovesky").startswith("[(") and "'Polish')" in value(out, "Dovesky")[:20]


def check_seq2seq(out: str) -> None:
    assert number(out, "final loss") < 0.2 and number(out, "sentence accuracy") > 0.1
    assert value(out, "attention shape") == "(1, 6, 4)"
    assert value(out, "<").startswith(value(out, "="))  # the reversed translation


def check_spatial(out: str) -> None:
    assert number(out, "test accuracy") > 0.9 and number(out, "final loss") < 0.3
    assert value(out, "transformed batch") == "(300, 1, 16, 16)"


def check_style(out: str) -> None:
    assert value(out, "output range") == "True True"
    assert number(out, "final loss") < number(out, "first loss") / 5
    assert "'style_loss_5']" in value(out, "layers")  # trimmed after the last loss


def check_dqn(out: str) -> None:
    assert value(out, "greedy steps to the goal") == "5"  # the shortest way: 5 steps right
    assert number(out, "final loss") < 1e-3


def check_text(out: str) -> None:
    assert number(out, "test accuracy") > 0.85
    assert value(out, "sports example is topic") == "1"


def check_func(out: str) -> None:
    assert value(out, "per-sample gradients match") == "True"
    assert value(out, "ensemble predictions match") == "True"
    assert number(out, "largest difference") < 1e-5
    assert value(out, "ensemble output shape") == "(5, 64, 4)"
    assert value(out, "first gradient shape") == "(8, 32, 16)"


def check_resnet(out: str) -> None:
    assert value(out, "resumed equals uninterrupted") == "True"
    assert number(out, "eval accuracy") > 0.9 and number(out, "final loss") < 0.2
    assert re.search(r"^epoch 3 .* lr 0\.00000$", out, re.M)  # the cosine schedule's end


def check_amp(out: str) -> None:
    assert value(out, "output dtype under autocast").endswith(".bfloat16")
    assert value(out, "parameter dtype").endswith(".float32")
    assert value(out, "skipped step left the weights") == "True"
    assert number(out, "scale after an inf") == number(out, "restored scale") == 512.0
    assert number(out, "final loss") < 1.0  # from about 11


def check_packed(out: str) -> None:
    assert value(out, "extra padding changes nothing") == "True"
    assert number(out, "output past the end") == 0.0
    assert number(out, "test accuracy") > 0.85 and number(out, "final loss") < 0.1


def check_onnx(out: str) -> None:
    assert "the result looks good!" in out
    assert value(out, "ops") == "['Conv', 'Identity', 'Relu', 'Reshape', 'Transpose']"
    assert value(out, "output shape") == "(1, 1, 192, 192)"
    assert number(out, "largest difference") < 1e-4


def check_prune_swa(out: str) -> None:
    assert number(out, "dense accuracy") > 0.95 and number(out, "swa accuracy") > 0.95
    assert value(out, "fc2 buffers") == "['weight_mask']"
    assert value(out, "fc2 parameters") == "['bias', 'weight_orig']"
    assert value(out, "Global sparsity") == "43.36%"  # 20% more of what was left: exact
    assert number(out, "averaged models") == 5.0
    assert value(out, "pruned weights stay zero") == "True"
    assert value(out, "state_dict keys of fc2 after remove") == "['bias', 'weight']"
    assert value(out, "fc2 sparsity after remove") == value(out, "Sparsity in fc2.weight")
    assert re.search(r"^epoch 9 .* lr 0\.02000$", out, re.M)  # SWALR holds swa_lr


def total(output: str, label: str) -> float:
    """The sum a program prints after ``label: ... | sum``."""
    return float(value(output, label).rsplit("| sum ", 1)[1])


def check_forward_ad(out: str) -> None:
    # (PyTorch 2.13 prints these sums, from the same fixed values)
    assert total(out, "jvp of fn") == total(out, "expected 2 x t") == 53.57813
    assert value(out, "tangent after the level") == "None"
    assert total(out, "output after the level") == 99.71193
    assert total(out, "module jvp") == total(out, "functional_call jvp") == -31.21498
    assert total(out, "func.jvp over parameters") == -31.21498
    assert value(out, "module and functional_call agree") == "True"
    assert total(out, "Function jvp") == 31.39535
    assert value(out, "gradcheck of the jvp") == "True"
    assert total(out, "setup_context jvp") == 3.29547
    assert total(out, "func.jvp") == 141.46280 and total(out, "func.jvp of a partial") == 86.65262
    assert total(out, "hvp, forward over reverse") == total(out, "hvp, autograd.functional")
    assert total(out, "hvp, forward over reverse") == 3.92243


def check_jacobians_hessians(out: str) -> None:
    assert value(out, "first row").startswith("(8,) 0.000000 0.204145 0.380660 | sum 2.940876")
    for claim in ("vmap(vjp) equals the loop", "jacrev equals the loop",
                  "64x4 layer: jacfwd equals jacrev", "4x64 layer: jacfwd equals jacrev",
                  "hessian equals jacfwd(jacfwd)", "hessian equals jacrev(jacrev)",
                  "the sum trick agrees", "reverse over reverse agrees",
                  "the closed form -sin(x) v agrees"):
        assert value(out, claim) == "True", claim
    assert total(out, "Hessian") == 2.076114
    assert value(out, "batch Hessian").startswith("(6, 7, 5, 5)")
    assert total(out, "batch Hessian") == 15.574380
    assert total(out, "hvp, forward over reverse") == -16.429000


def check_ntk(out: str) -> None:
    assert value(out, "NTK").startswith("(4, 2, 3, 3) 25.65137 -18.40901 10.92094")
    assert abs(total(out, "NTK") - 40.26204) < 1e-3  # (float32 sums: to rounding)
    assert abs(total(out, "NTK trace") - 67.34569) < 1e-3
    assert value(out, "the two methods agree") == "True"
    assert value(out, "NTK by NTK-vector products").startswith(
        "(2, 4, 3, 3) 25.65137 -20.46176 14.79792")


def check_profiler(out: str) -> None:
    assert number(out, "conv2d calls") == 5  # the stem's and two per block
    assert value(out, "top-level event") == "model_inference"
    assert number(out, "first conv2d output bytes") == 5 * 16 * 16 * 16 * 4  # float32
    assert value(out, "trace events").endswith("all complete: True")
    assert value(out, "slowest op called from this file") == "True"
    assert value(out, "cycles handed over at steps") == "[4, 8]"
    assert "Input Shapes" in out and "Self CPU Mem" in out and "Source Location" in out


def check_benchmark(out: str) -> None:
    assert value(out, "both compute the same") == "True"
    assert "1 measurement, 100 runs , 1 thread" in out
    assert "Multithreaded batch dot: Implemented using bmm" in out
    assert re.search(r"^Median: +\d+\.\d\d us$", out, re.M)
    assert out.count("Times are in ") == 2 and "4 threads: ---" in out
    assert value(out, "measurements pickled and loaded") == "4 True"
    assert value(out, "collect_callgrind").startswith("Timer.collect_callgrind: difflab has no")


PROGRAMS_CHECKED = {
    "forward_ad.py": check_forward_ad,
    "jacobians_hessians.py": check_jacobians_hessians,
    "neural_tangent_kernels.py": check_ntk,
    "profiler_recipe.py": check_profiler,
    "benchmark_recipe.py": check_benchmark,
    "rnn_name_classify.py": check_rnn_names,
    "seq2seq_attention.py": check_seq2seq,
    "spatial_transformer.py": check_spatial,
    "style_transfer.py": check_style,
    "dqn_corridor.py": check_dqn,
    "text_embeddingbag.py": check_text,
    "func_ensembling.py": check_func,
    "resnet_checkpoint.py": check_resnet,
    "amp_autocast.py": check_amp,
    "packed_sequences.py": check_packed,
    "onnx_export.py": check_onnx,
    "prune_swa.py": check_prune_swa,
}
NEEDS = {"onnx_export.py": ("onnx", "onnxruntime")}  # (the optional packages a program uses)


@pytest.mark.parametrize("name", sorted(PROGRAMS_CHECKED))
def test_tutorial_programs(name):
    for package in NEEDS.get(name, ()):
        pytest.importorskip(package, reason=f"{name} needs {package} (pip install "
                                            f"'difflab[jit]')")
    PROGRAMS_CHECKED[name](run(name))


# ---------------------------------------------------------------------------------------
# the same program on PyTorch, from the same initial weights

SHARE = """
{i}import os as _os, numpy as _np
{i}if _os.environ["SHARED_WEIGHTS_MODE"] == "save":
{i}    _np.savez(_os.environ["SHARED_WEIGHTS"],
{i}              **{{k: v.detach().numpy() for k, v in {var}.state_dict().items()}})
{i}else:
{i}    {var}.load_state_dict({{k: torch.tensor(v) for k, v in
{i}                          _np.load(_os.environ["SHARED_WEIGHTS"]).items()}})
"""
# program: (the line before which the weights are shared, the module, how many lines of
# output must agree (None: all), relative tolerance)
SHARED = {
    "resnet_checkpoint.py": ("    optimizer = optim.SGD(", "net", None, 1e-5),
    "dqn_corridor.py": ("target_net = DQN(", "policy_net", None, 1e-5),
    "rnn_name_classify.py": ("criterion = nn.NLLLoss()", "rnn", None, 1e-5),
    "prune_swa.py": ("optimizer = torch.optim.SGD(model.parameters(), lr=0.1,", "model", None,
                     1e-4),
    # L-BFGS on clamped pixels magnifies float32 rounding step after step: the first
    # loss and the first report (20 evaluations) only
    "style_transfer.py": ("cnn_normalization_mean = ", "cnn", 5, 1e-3),
}


def torch_python() -> str:
    named = os.environ.get("DIFFLAB_TORCH_PYTHON")
    if named:
        return named
    if importlib.util.find_spec("torch") is None:
        pytest.skip("compares with PyTorch: install it or set DIFFLAB_TORCH_PYTHON")
    return sys.executable


def numbers_of(line: str) -> tuple[str, list[float]]:
    pattern = r"-?\d+\.?\d*(?:e-?\d+)?"
    return re.sub(pattern, "#", line), [float(v) for v in re.findall(pattern, line)]


@pytest.mark.parametrize("name", sorted(SHARED))
def test_tutorial_programs_print_pytorchs_numbers_from_the_same_weights(name, tmp_path):
    python = torch_python()
    anchor, module, lines, rtol = SHARED[name]
    source = (PROGRAMS / name).read_text(encoding="utf-8")
    assert source.count(anchor) == 1
    indent = anchor[:len(anchor) - len(anchor.lstrip())]
    source = source.replace(anchor, SHARE.format(i=indent, var=module).lstrip("\n") + anchor)
    as_pytorch = source.replace("import difflab as torch", "import torch").replace(
        "difflab.", "torch.").replace("from difflab", "from torch")
    env = dict(os.environ, SHARED_WEIGHTS=str(tmp_path / "weights.npz"),
               SHARED_WEIGHTS_MODE="save")
    done = subprocess.run([python, "-W", "ignore", "-"], input=as_pytorch, capture_output=True,
                          text=True, cwd=PROGRAMS, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = done.stdout.splitlines()
    ours = run(name, source, dict(env, SHARED_WEIGHTS_MODE="load")).splitlines()
    assert len(ours) == len(theirs)
    lines = lines or len(theirs)
    assert lines >= 5  # (a test that compares something)
    for mine, other in zip(ours[:lines], theirs[:lines]):
        text, values = numbers_of(mine.replace("difflab.", "torch."))
        other_text, other_values = numbers_of(other)
        assert text == other_text, (mine, other)
        np.testing.assert_allclose(values, other_values, rtol=rtol, atol=1e-8,
                                   err_msg=f"{mine!r} vs PyTorch's {other!r}")


# ---------------------------------------------------------------------------------------
# programs of fixed values (no generator, no initial weights drawn): the same numbers


#: program: the relative tolerance between its numbers and PyTorch's (float32 sums)
FIXED_VALUES = {"forward_ad.py": 1e-5, "jacobians_hessians.py": 1e-9,
                "neural_tangent_kernels.py": 1e-5}


def as_pytorch(source: str) -> str:
    return source.replace("import difflab as torch", "import torch").replace(
        "difflab.", "torch.").replace("from difflab", "from torch")


@pytest.mark.parametrize("name", sorted(FIXED_VALUES))
def test_programs_of_fixed_values_print_pytorchs_numbers(name):
    python = torch_python()
    source = (PROGRAMS / name).read_text(encoding="utf-8")
    done = subprocess.run([python, "-W", "ignore", "-"], input=as_pytorch(source),
                          capture_output=True, text=True, cwd=PROGRAMS, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs, ours = done.stdout.splitlines(), run(name).splitlines()
    assert len(ours) == len(theirs) >= 5
    for mine, other in zip(ours, theirs):
        text, values = numbers_of(mine.replace("difflab.", "torch."))
        other_text, other_values = numbers_of(other)
        assert text == other_text, (mine, other)
        np.testing.assert_allclose(values, other_values, rtol=FIXED_VALUES[name], atol=2e-5,
                                   err_msg=f"{mine!r} vs PyTorch's {other!r}")
