"""How often dl.compile runs a function's Python: the side effects of a first call.

torch.compile runs a Python side effect (a list append, a print) once per call.
difflab's compile runs the function's Python while tracing and none of it on a
replay; a first call that stops its trace at a break making the call eager runs
the Python before that break twice, and arguments of 1 MiB or more are traced on
stand-ins first.  ``CompiledFunction.python_runs`` and ``explain``'s
``python_runs`` count every run, so a side effect's count is never a surprise.
"""

import difflab as dl
from difflab.jit import standins

dl.manual_seed(0)
model = dl.nn.Linear(2, 1)
opt = dl.optim.SGD(model.parameters(), lr=0.1)


def counting(log):
    def split(x):  # a graph break that splits: `if` on a value
        log.append("before")
        y = x.sin()
        if y.sum() > 0:
            log.append("after")
            return y * 2
        return -y

    def eager(x):  # a break that makes the call eager: the value handed to a list
        log.append("before")
        y = x.sin()
        values = y.tolist()
        log.append("after")
        return y * len(values)

    def step(x):  # backward() inside: eager too (model and opt: the test's globals)
        log.append("before")
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        log.append("after")
        opt.step()
        return loss

    return split, eager, step


def test_a_split_first_call_runs_the_python_once_and_a_replay_runs_none():
    log = []
    split, _, _ = counting(log)
    f = dl.compile(split)
    f(dl.ones(3))
    assert log == ["before", "after"] and f.python_runs == 1
    f(dl.ones(3))
    assert log == ["before", "after"] and f.python_runs == 1  # replayed: no Python
    f(-dl.ones(3))  # the other branch: traced once
    assert log == ["before", "after", "before"] and f.python_runs == 2


def test_an_eager_break_runs_the_python_before_it_twice_and_counts_it():
    log = []
    _, eager, _ = counting(log)
    f = dl.compile(eager)
    f(dl.ones(3))
    # traced up to .tolist() (the trace stops there), then the eager call runs all of f
    assert log == ["before", "before", "after"]
    assert f.python_runs == 2
    f(dl.ones(3))  # known to run eagerly: once per call, as torch.compile
    assert log.count("before") == 3 and f.python_runs == 3


def test_a_training_step_with_backward_inside_counts_its_two_runs():
    log = []
    _, _, step = counting(log)
    f = dl.compile(step)
    before = model.weight.detach().clone()
    f(dl.ones(4, 2))
    assert log == ["before", "before", "after"] and f.python_runs == 2
    # the trace stopped before backward(): the parameters moved by one step only
    expected = before - 0.1 * model.weight.grad
    assert dl.allclose(model.weight, expected)


def test_large_arguments_are_traced_on_stand_ins_and_counted():
    log = []
    split, _, _ = counting(log)
    f = dl.compile(split)
    n = standins.MIN_BYTES // 8 + 1  # float64: just over the stand-ins' threshold
    f(dl.ones(n, dtype=dl.float64))
    # a stand-in trace up to the read (the values must decide), then the real trace
    assert log == ["before", "before", "after"] and f.python_runs == 2


def test_explain_reports_the_python_runs_of_the_call():
    log = []
    split, eager, _ = counting(log)
    out = dl.jit.explain(split)(dl.ones(3))
    assert out.python_runs == 1 and "Python Runs: 1\n" in str(out)
    out = dl.jit.explain(eager)(dl.ones(3))
    assert out.python_runs == 2
    assert "Python Runs: 2 (the function's Python before the first break ran more" in str(out)
