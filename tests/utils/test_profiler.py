"""torch.profiler under ``import difflab as torch``: one event per primitive applied and per
backward step, record_function's labels nested, the Chrome trace, the schedule, and no
change to any result."""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import engine
from difflab.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def mlp_step(x, w1, w2):
    """A known function: 5 primitives forward (matmul, relu, matmul, pow, mean)."""
    return (((x @ w1).relu() @ w2) ** 2).mean()


def inputs():
    rng = np.random.default_rng(0)
    x = dl.tensor(rng.standard_normal((4, 3)))
    w1 = dl.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w2 = dl.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    return x, w1, w2


def names(prof):
    return [e.name for e in prof.events()]


def test_counts_every_primitive_and_backward_step_of_a_known_function():
    x, w1, w2 = inputs()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        mlp_step(x, w1, w2).backward()
    assert names(prof) == ["matmul", "relu", "matmul", "pow", "mean",
                           "MeanBackward0", "PowBackward0", "MatmulBackward0",
                           "ReluBackward0", "MatmulBackward0"]
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts == {"matmul": 2, "relu": 1, "pow": 1, "mean": 1, "MeanBackward0": 1,
                      "PowBackward0": 1, "MatmulBackward0": 2, "ReluBackward0": 1}


def test_a_module_and_a_loss_are_their_primitives():
    dl.manual_seed(0)
    model = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.ReLU(), dl.nn.Linear(4, 1))
    x, y = dl.ones(2, 3), dl.zeros(2, 1)
    with profile() as prof:
        dl.nn.functional.mse_loss(model(x), y).backward()
    forward = [e.name for e in prof.events() if e.kind == "operator"]
    backward = [e.name for e in prof.events() if e.kind == "backward"]
    assert forward.count("linear") == 2 and "relu" in forward
    assert len(backward) == sum(1 for e in prof.events() if e.kind == "operator"
                                and e.name not in ("sub_", "detach"))  # one step per record
    assert backward[-1] == "LinearBackward0"


def test_record_function_labels_nest_and_hold_their_operations():
    x, w1, w2 = inputs()

    @record_function("hidden")
    def hidden(v):
        return (v @ w1).relu()

    with profile() as prof:
        with record_function("model_inference"):
            h = hidden(x)
            with record_function("head"):
                out = h @ w2
        out.sum().backward()
    parent = {e.name: (e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()
              if e.kind != "backward"}
    assert parent == {"model_inference": None, "hidden": "model_inference",
                      "matmul": "head", "relu": "hidden", "head": "model_inference",
                      "sum": None}
    inference = prof.events()[0]
    assert [c.name for c in inference.cpu_children] == ["hidden", "head"]
    total = inference.cpu_time_total
    assert total >= sum(c.cpu_time_total for c in inference.cpu_children) >= 0
    assert inference.self_cpu_time_total == pytest.approx(
        total - sum(c.cpu_time_total for c in inference.cpu_children))


def test_record_function_is_reentrant_as_a_decorator():
    @record_function("fact")
    def fact(n, x):
        return x if n == 0 else fact(n - 1, x * 1.0)

    with profile() as prof:
        fact(2, dl.ones(1))
    events = prof.events()
    assert [e.name for e in events] == ["fact", "mul", "fact", "mul", "fact"]
    assert [e.cpu_parent.name if e.cpu_parent else None for e in events] == [
        None, "fact", "fact", "fact", "fact"]
    assert events[4].cpu_parent is events[2]


def test_a_custom_function_is_one_event_holding_its_operations():
    class Cube(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = dl.tensor([1.0, 2.0], requires_grad=True)
    with profile() as prof:
        Cube.apply(x).sum().backward()
    events = prof.events()
    assert [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in events[:3]] == [
        ("Cube", None), ("mul", "Cube"), ("mul", "Cube")]
    assert "CubeBackward" in names(prof)
    assert x.grad.tolist() == [3.0, 12.0]


def test_nothing_is_recorded_outside_a_profile():
    x, w1, w2 = inputs()
    mlp_step(x, w1, w2).backward()
    assert engine.Profiling.active is None
    with record_function("alone"):  # no profile: nothing happens, no error
        mlp_step(x, w1, w2)
    with profile() as prof:
        _ = x.sin()
    mlp_step(x, w1, w2).backward()
    assert names(prof) == ["sin"] and engine.Profiling.active is None
    with profile(enabled=False) as off:
        mlp_step(x, w1, w2)
    assert names(off) == []


def test_the_profiler_changes_no_result_or_gradient():
    plain_inputs, profiled_inputs = inputs(), inputs()
    loss = mlp_step(*plain_inputs)
    loss.backward()
    with profile(record_shapes=True, profile_memory=True, with_stack=True):
        profiled = mlp_step(*profiled_inputs)
        profiled.backward()
    assert profiled.item() == loss.item()
    for a, b in zip(plain_inputs[1:], profiled_inputs[1:]):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_compiled_and_second_order_programs_give_the_same_results_profiled():
    f = dl.compile(lambda v: (v.sin() * v).sum())
    x = dl.tensor([0.5, 1.5], requires_grad=True)
    plain = f(x)
    (g_plain,) = dl.autograd.grad(plain, x, create_graph=True)
    with profile() as prof:
        value = f(x)
        (g,) = dl.autograd.grad(value, x, create_graph=True)
        g.sum().backward()
    assert value.item() == plain.item()
    np.testing.assert_array_equal(g.detach().numpy(), g_plain.detach().numpy())
    assert "CompiledBackward0" in names(prof)
    # the create_graph backward's operations are events inside its step
    step = next(e for e in prof.events() if e.name == "CompiledBackward0")
    assert step.kind == "backward"


def test_record_shapes_and_grouping_by_them():
    with profile(record_shapes=True) as prof:
        for n in (2, 3, 2):
            _ = dl.ones(n, 4) @ dl.ones(4, 1)
    rows = prof.key_averages(group_by_input_shape=True)
    assert [(r.key, r.input_shapes, r.count) for r in rows] == [
        ("matmul", [[2, 4], [4, 1]], 2), ("matmul", [[3, 4], [4, 1]], 1)]
    table = rows.table(sort_by="count")
    assert "Input Shapes" in table and "[[2, 4], [4, 1]]" in table
    with profile() as no_shapes:
        _ = dl.ones(2) + 1
    with pytest.raises(ValueError, match="record_shapes=True"):
        no_shapes.key_averages(group_by_input_shape=True)


def test_memory_counts_the_bytes_each_event_returned():
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            _ = dl.ones(10, dtype=dl.float64).exp()  # 80 bytes
            _ = dl.ones(4, dtype=dl.float32).sin()  # 16 bytes
    block, exp, sin = prof.events()
    assert (exp.self_cpu_memory_usage, sin.self_cpu_memory_usage) == (80, 16)
    assert (block.self_cpu_memory_usage, block.cpu_memory_usage) == (0, 96)
    table = prof.key_averages().table()
    assert "Self CPU Mem" in table and "80 b" in table


def test_with_stack_names_the_callers_file():
    with profile(with_stack=True) as prof:
        _ = dl.ones(2).cos()
    (event,) = prof.events()
    assert event.stack and "test_profiler.py" in event.stack[0]
    rows = prof.key_averages(group_by_stack_n=1)
    assert "Source Location" in rows.table()


def test_table_sorts_limits_and_refuses_device_time():
    with profile() as prof:
        for _ in range(3):
            _ = dl.ones(2) + 1
        _ = dl.ones(2).sin()
    averages = prof.key_averages()
    lines = averages.table(sort_by="count", row_limit=1).splitlines()
    assert lines[3].split()[0] == "add" and lines[3].split()[-1] == "3"
    assert lines[-1].startswith("Self CPU time total: ")
    rows = [line for line in lines if line.strip().startswith(("add", "sin"))]
    assert len(rows) == 1
    with pytest.raises(ValueError, match="no device time"):
        averages.table(sort_by="cuda_time_total")
    with pytest.raises(ValueError, match="expected one of"):
        averages.table(sort_by="time")
    shares = [float(line.split()[1].rstrip("%")) for line in
              averages.table().splitlines()[3:5]]
    assert sum(shares) == pytest.approx(100, abs=0.02)


def test_chrome_trace_is_valid_json_with_one_complete_event_each(tmp_path):
    x, w1, w2 = inputs()
    with profile(record_shapes=True) as prof:
        with record_function("step"):
            mlp_step(x, w1, w2).backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert [e["name"] for e in events] == names(prof)
    assert all(e["ph"] == "X" and e["dur"] >= 0 and isinstance(e["ts"], float)
               and isinstance(e["tid"], int) for e in events)
    assert events[0]["cat"] == "user_annotation" and events[1]["cat"] == "cpu_op"
    assert events[1]["args"]["Input Dims"] == [[4, 3], [3, 5]]
    # a child lies inside its parent's span
    assert events[0]["ts"] <= events[1]["ts"]
    assert events[1]["ts"] + events[1]["dur"] <= events[0]["ts"] + events[0]["dur"] + 1e-3


def test_schedule_actions_as_pytorch_documents():
    s = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    assert [s(k) for k in range(11)] == [
        ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE, ProfilerAction.WARMUP,
        ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE,
        ProfilerAction.NONE]
    with pytest.raises(ValueError, match="active"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(ValueError, match="wait"):
        schedule(wait=-1, warmup=0, active=1)


def test_steps_record_only_the_active_ones_and_hand_each_cycle_over():
    seen = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda p: seen.append(names(p))) as prof:
        for step in range(10):
            _ = dl.ones(1) * step
            prof.step()
    assert seen == [["ProfilerStep#2", "mul", "ProfilerStep#3", "mul"],
                    ["ProfilerStep#6", "mul", "ProfilerStep#7", "mul"]]
    assert [(row.key, row.count) for row in prof.key_averages()] == [  # as PyTorch's
        ("ProfilerStep*", 2), ("mul", 2)]
    assert engine.Profiling.active is None


def test_tensorboard_trace_handler_writes_one_trace_per_cycle(tmp_path):
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path), "worker")) as prof:
        for _ in range(3):
            _ = dl.ones(2).exp()
            prof.step()
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2 and all(f.name.endswith(".pt.trace.json") for f in files)
    for f in files:
        assert [e["name"] for e in json.loads(f.read_text())["traceEvents"]][1] == "exp"
    with pytest.raises(ValueError, match="use_gzip"):
        tensorboard_trace_handler(str(tmp_path), use_gzip=True)


def test_bad_arguments_and_nesting_are_refused():
    with pytest.raises(TypeError, match="experimental_config"):
        profile(experimental_config=object())
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])
    with pytest.raises(TypeError, match="str"):
        record_function(3)
    with profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            profile().start()
    assert engine.Profiling.active is None


def test_cuda_activity_is_accepted_with_a_warning_that_no_device_time_is_recorded():
    with pytest.warns(UserWarning, match="no device time"):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            _ = dl.ones(2).sin()
    assert names(prof) == ["sin"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with profile(activities=[ProfilerActivity.CPU]):
            pass


def test_events_of_other_threads_are_their_own_trees():
    def work():
        with record_function("thread"):
            _ = dl.ones(2).cos()

    with profile() as prof:
        with record_function("main"):
            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
            _ = dl.ones(2).sin()
    by_name = {e.name: e for e in prof.events()}
    assert by_name["thread"].cpu_parent is None
    assert by_name["cos"].cpu_parent is by_name["thread"]
    assert by_name["sin"].cpu_parent is by_name["main"]
    assert by_name["thread"].thread != by_name["main"].thread


def test_threads_applying_the_same_primitive_at_once_are_all_recorded():
    from difflab.ops.primitive import Primitive

    inside, release = threading.Event(), threading.Event()

    class Waits(Primitive):
        """Thread A's call waits inside forward until thread B has applied it too."""

        name = "waits"

        def forward(self, ctx, xp, x):
            if not inside.is_set():
                inside.set()
                release.wait(5)
            return 2 * x

    op, x = Waits(), dl.ones(2)

    def first():
        engine.apply(op, x)

    with profile() as prof:
        a = threading.Thread(target=first)
        a.start()
        inside.wait(5)
        engine.apply(op, x)  # while thread A is inside its own call of the same primitive
        release.set()
        a.join()
    assert [e.name for e in prof.events()] == ["waits", "waits"]


def test_torch_autograd_profiler_is_the_same_profiler():
    assert dl.autograd.profiler.profile is profile
    assert dl.autograd.profiler.record_function is record_function
    with dl.autograd.profiler.profile(use_cuda=False, record_shapes=True) as prof:
        with dl.autograd.profiler.record_function("label"):
            _ = dl.ones(3) * 2
    assert [e.name for e in prof.function_events] == ["label", "mul"]
    assert "label" in prof.table(sort_by="self_cpu_time_total")
    assert prof.self_cpu_time_total >= 0


def test_a_profile_stopped_by_an_error_stops_recording():
    with pytest.raises(ZeroDivisionError):
        with profile():
            with record_function("failing"):
                _ = dl.ones(2).sin()
                raise ZeroDivisionError
    assert engine.Profiling.active is None


@pytest.mark.parametrize("module", [
    "difflab.autograd.profiler", "difflab.autograd.profiler_util", "difflab.profiler",
    "difflab.utils.benchmark", "difflab.utils.benchmark.timer",
    "difflab.utils.benchmark.measurement", "difflab.utils.benchmark.compare",
    "difflab.compiler", "difflab._dynamo"])
def test_every_example_of_the_new_modules_runs(module):
    from tests.docs.docstring_rules import run_module_examples

    results = run_module_examples(module)
    assert results.failed == 0 and results.attempted > 0
