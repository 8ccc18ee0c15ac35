"""Tests that use the student's objects as if they were local, graded in the sandbox.

The instructor's tests below are written as a new instructor writes them from the guide
(issue 25: a Dual-number class with operators, a function taking a callable,
``assert_close`` on a student's object; issue 30: a ``train_step`` that updates the
test's tensors in place with ``optim.SGD`` or by hand, a student's optimizer checked
with ``check_optimizer_step``).  A correct submission must score full marks, as it
does when the same tests run locally.  The attacks after them are a cheating student's
uses of the new surface: functions of the test called at the wrong time, floods and
loops through callbacks, forged changes to objects the test never passed.
"""

from __future__ import annotations

import doctest
import json

import numpy as np
import pytest
from click.testing import CliRunner
from grading_helpers import FAST, by_name, write

from difflab.grading import grade
from difflab.grading.crossing import Mirrors
from difflab.grading.protocol import ProtocolError, decode, encode

#: The student's solution: a Dual class with operators, functions taking callables,
#: in-place training steps, an optimizer.
SOLUTION = '''
import math

import numpy as np

import difflab
from difflab import optim


class Dual:
    def __init__(self, primal, tangent=0.0):
        self.primal, self.tangent = primal, tangent

    @staticmethod
    def lift(x):
        return x if isinstance(x, Dual) else Dual(x, 0.0)

    def __add__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal + other.primal, self.tangent + other.tangent)

    __radd__ = __add__

    def __sub__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal - other.primal, self.tangent - other.tangent)

    def __rsub__(self, other):
        return Dual.lift(other) - self

    def __mul__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal * other.primal,
                    self.primal * other.tangent + self.tangent * other.primal)

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal / other.primal,
                    (self.tangent * other.primal - self.primal * other.tangent)
                    / other.primal ** 2)

    def __rtruediv__(self, other):
        return Dual.lift(other) / self

    def __pow__(self, n):
        return Dual(self.primal ** n, n * self.primal ** (n - 1) * self.tangent)

    def __neg__(self):
        return Dual(-self.primal, -self.tangent)

    def __abs__(self):
        return self if self.primal >= 0 else -self

    def __float__(self):
        return float(self.primal)

    def __eq__(self, other):  # a lazy __eq__: the grader must not believe it
        return True


def derivative(f, x):
    return f(Dual(x, 1.0)).tangent


def central_difference(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def newton_sqrt(a, steps=30):
    x = Dual(1.0, 0.0) if isinstance(a, Dual) else 1.0
    for _ in range(steps):
        x = 0.5 * (x + a / x)
    return x


class Polynomial:
    def __init__(self, *coefficients):
        self.coefficients = list(coefficients)

    def __len__(self):
        return len(self.coefficients)

    def __getitem__(self, i):
        return self.coefficients[i]

    def __iter__(self):
        return iter(self.coefficients)

    def __call__(self, x):
        return sum(c * x ** k for k, c in enumerate(self.coefficients))


def train_step(params, xs, ys, lr):
    """One SGD step of least squares y = w x + b, in place (as in PyTorch)."""
    w, b = params
    opt = optim.SGD(params, lr=lr)
    opt.zero_grad()
    loss = ((w * xs + b - ys) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.item()


def train_step_by_hand(w, b, xs, ys, lr):
    loss = ((w * xs + b - ys) ** 2).mean()
    loss.backward()
    with difflab.no_grad():
        w.add_(w.grad * -lr)
        b[:] = b - lr * b.grad


def record(history, value):
    history.append(value)
    history[-1] = value * 2
    return len(history)


def tally(counts, word):
    counts[word] = counts.get(word, 0) + 1


def normalise_(array):
    array /= np.linalg.norm(array)


class SGD:
    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with difflab.no_grad():
            for p in self.params:
                p -= self.lr * p.grad
'''

TESTS = '''
import numpy as np
import pytest

import difflab
import submission
from difflab import optim
from difflab.grading import assert_close, check_optimizer_step, points


@points(1)
def test_dual_times_dual():
    product = submission.Dual(3., 1.) * submission.Dual(2., 5.)
    assert product.primal == 6. and product.tangent == 17.
    assert isinstance(product, submission.Dual) and not isinstance(2.0, submission.Dual)
    p = submission.Polynomial(1.0)
    assert submission.Polynomial is submission.Polynomial  # one stand-in per object


@points(1)
def test_operators_with_numbers_reflected_and_unary():
    x = submission.Dual(3., 1.)
    y = 2 * x + 1 - x / 2
    assert (y.primal, y.tangent) == (5.5, 1.5)
    z = 1 / x
    assert_close(z.tangent, -1 / 9)
    assert (-x).tangent == -1 and abs(-x).primal == 3
    assert (x ** 3).tangent == 27
    assert (np.float64(2.0) * x).tangent == 2


@points(1)
def test_comparisons_use_the_value():
    x = submission.Dual(3., 1.)
    assert x == 3.0 and x != 4.0 and 2 < x <= 3 and x > 2.5 and x >= 3
    assert float(x) == 3.0 and int(float(x)) == 3 and complex(x) == 3
    assert bool(x) and not bool(submission.Dual(0., 1.))
    assert x == pytest.approx(3.0)


@points(1)
def test_assert_close_on_a_students_object():
    assert_close(submission.Dual(2., 1.), 2.)
    assert_close(submission.newton_sqrt(2.0), np.sqrt(2.0))


@points(1)
def test_derivative_of_the_tests_function():
    assert submission.derivative(lambda t: t * t, 3.) == 6.
    assert submission.derivative(lambda t: 1 / t + 3 * t, 2.) == pytest.approx(2.75)
    assert submission.central_difference(np.sin, 0.5) == pytest.approx(np.cos(0.5))
    calls = []

    def f(t):
        calls.append(float(t))
        return t ** 3

    assert submission.central_difference(f, 2.0) == pytest.approx(12.0)
    assert len(calls) == 2  # the student's code called it twice, here


@points(1)
def test_error_in_the_tests_function_reaches_the_test():
    def broken(t):
        raise ValueError("the test's own mistake")

    with pytest.raises(ValueError, match="own mistake"):
        submission.derivative(broken, 1.0)


@points(1)
def test_sequences():
    p = submission.Polynomial(1., 2., 3.)
    assert len(p) == 3 and p[1] == 2. and list(p) == [1., 2., 3.] and 3. in p
    assert p(2.0) == 17.0 and p(submission.Dual(2.0, 1.0)).tangent == 14.0


@points(2)
def test_train_step_updates_the_tests_tensors_in_place():
    w = difflab.tensor([0.5], requires_grad=True)
    b = difflab.tensor([0.0], requires_grad=True)
    params = [w, b]
    xs, ys = difflab.tensor([1., 2., 3.]), difflab.tensor([2., 4., 6.])
    loss = submission.train_step(params, xs, ys, 0.1)
    assert params[0] is w and params[1] is b
    assert loss == pytest.approx(np.mean((0.5 * np.array([1., 2, 3]) - [2, 4, 6]) ** 2))
    assert_close(w, [0.5 + 0.1 * 14.0], what="w after one step")
    assert_close(w.grad, [-14.0], what="w.grad")
    assert_close(b, [0.1 * 6.0], what="b after one step")


@points(1)
def test_a_step_by_hand_on_tensors_passed_directly():
    w = difflab.tensor([0.5], requires_grad=True)
    b = difflab.tensor([0.0], requires_grad=True)
    submission.train_step_by_hand(w, b, difflab.tensor([1., 2., 3.]),
                                  difflab.tensor([2., 4., 6.]), 0.1)
    assert_close(w, [1.9], what="w")
    assert_close(b, [0.6], what="b")
    assert_close(b.grad, [-6.0], what="b.grad")


@points(1)
def test_lists_dicts_and_arrays_change_in_place():
    history = [1]
    assert submission.record(history, 5) == 2
    assert history == [1, 10]
    counts = {"a": 1}
    submission.tally(counts, "a")
    submission.tally(counts, "b")
    assert counts == {"a": 2, "b": 1}
    v = np.array([3.0, 4.0])
    view = v[:]
    submission.normalise_(v)
    assert_close(view, [0.6, 0.8])


@points(1)
def test_students_optimizer_with_the_helper():
    check_optimizer_step(submission.SGD, optim.SGD, lr=0.1)
'''


@pytest.fixture(scope="module")
def natural(tmp_path_factory):
    root = tmp_path_factory.mktemp("natural")
    write(root / "tests" / "test_natural.py", TESTS)
    return root


@pytest.fixture(scope="module")
def solution_results(natural):
    return grade(write(natural / "solution.py", SOLUTION), natural / "tests", **FAST)


def test_a_correct_submission_scores_full_marks(solution_results):
    failed = {name: t["output"] for name, t in by_name(solution_results).items()
              if t["status"] != "passed"}
    assert not failed, failed
    assert solution_results["score"] == 12


def test_a_lazy_eq_does_not_pass_a_wrong_answer(natural):
    wrong = SOLUTION.replace("self.primal * other.tangent + self.tangent * other.primal",
                             "self.tangent * other.tangent")
    results = grade(write(natural / "wrong.py", wrong), natural / "tests", **FAST,
                    select="test_dual_times_dual")
    assert results["score"] == 0  # its __eq__ says True to everything; the grader decides


def test_an_optimizer_that_rebinds_fails_the_helper_check(natural):
    rebinding = SOLUTION.replace("                p -= self.lr * p.grad",
                                 "                p = p - self.lr * p.grad")
    results = grade(write(natural / "rebind.py", rebinding), natural / "tests", **FAST,
                    select="test_students_optimizer_with_the_helper")
    test = by_name(results)["test_students_optimizer_with_the_helper"]
    assert test["status"] == "failed"
    assert "after step 1" in test["output"] and "did not change" in test["output"]


# -- the mirrors' table, on its own ---------------------------------------------------


def _round_trip(tree_blobs, make):
    tree, blobs = tree_blobs
    return decode(json.loads(json.dumps(tree)), blobs, make)


def test_mirrors_reflect_changes_and_keep_identity():
    test_side, student_side = Mirrors(makes_slots=True), Mirrors(makes_slots=False)

    def test_make(tag, node, reader, depth):
        return test_side.decode_slot(node, reader, depth)

    def student_make(tag, node, reader, depth):
        return student_side.decode_slot(node, reader, depth)

    def test_extra(value, blobs):
        return test_side.ref(value, blobs, test_extra) if isinstance(
            value, (list, dict, np.ndarray)) else NotImplemented

    def student_extra(value, blobs):
        return student_side.ref(value, blobs, student_extra) if isinstance(
            value, (list, dict, np.ndarray)) else NotImplemented

    a = np.zeros(2)
    params = [a, {"n": 1}]
    blobs: list[bytes] = []
    theirs = _round_trip((encode((params,), blobs, extra=test_extra), blobs), student_make)[0]
    theirs[0] += 1.0
    theirs[1]["n"] = 2
    theirs.append(theirs[0])
    blobs = []
    changes = student_side.changed(blobs, student_extra)
    assert sorted(slot for slot, _ in changes) == [0, 1, 2]
    test_side.apply(json.loads(json.dumps(changes)),
                    lambda tree: decode(tree, blobs, test_make))
    assert params[0] is a and params[2] is a and list(a) == [1.0, 1.0]
    assert params[1] == {"n": 2}
    assert student_side.changed([], student_extra) == []  # nothing new since


def test_forged_changes_to_objects_the_test_never_passed_are_refused():
    test_side = Mirrors(makes_slots=True)
    test_side.ref([1, 2], [], lambda v, b: NotImplemented)
    with pytest.raises(ProtocolError, match="did not pass"):
        test_side.apply([[7, [1]]], lambda tree: tree)
    with pytest.raises(ProtocolError, match="did not pass"):  # one change per object
        test_side.apply([[0, [1]], [0, [2]]], lambda tree: tree)
    with pytest.raises(ProtocolError, match="not a list"):
        test_side.apply([[0, {"$dict": []}]], lambda tree: [[0, {}]])
    with pytest.raises(ProtocolError, match="wrong side"):  # the student cannot add objects
        test_side.decode_slot({"$slot": 9, "value": []}, None, 0)
    with pytest.raises(ProtocolError, match="did not pass"):
        test_side.decode_slot({"$slot": 9}, None, 0)


def test_objects_the_test_dropped_are_forgotten():
    test_side = Mirrors(makes_slots=True)
    kept = [1.0]
    test_side.ref(kept, [], lambda v, b: NotImplemented)
    test_side.ref([2.0], [], lambda v, b: NotImplemented)  # nothing else holds it
    assert test_side.unreachable() == [1]
    assert list(test_side.objects.values()) == [kept]


# -- attacks on the new surface ----------------------------------------------------------

ATTACK_TESTS = '''
import numpy as np
import submission
from difflab.grading import points


@points(1)
def test_keep():
    assert submission.keep(lambda t: t * 2) == 2


@points(1)
def test_later():
    assert submission.later(3) == 3


@points(1)
def test_flood():
    assert submission.flood(lambda t: t) == 0


@points(1)
def test_ping_pong():
    assert submission.ping(lambda g, n: g(n)) == 0


@points(1)
def test_forge():
    secret = [31337]  # never passed
    mine = [1, 2]
    submission.forge(mine)
    assert secret == [31337] and mine == [1, 2, 3]


@points(1)
def test_honest():
    assert submission.double(21) == 42
'''

ATTACKS = '''
import json, os, struct
import numpy as np

kept = []


def keep(f):
    kept.append(f)  # a function of this test, kept for later
    return f(1)


def later(x):
    return kept[0](x)  # called during another test: the test's function is gone


def flood(f):
    return f(np.zeros(80 * 2**20 // 8))  # more than a message may carry


def ping(g, n=0):
    return g(lambda m: ping(g, m + 1), n)  # the test's function and mine, forever


def forge(mine):
    mine.append(3)
    for fd in range(3, 64):  # a change to slots 0..40 and a result naming slot 40
        body = {"ok": {"$slot": 40}, "sync": [[k, [0]] for k in range(40)]}
        header = json.dumps({"body": body, "blobs": []}).encode()
        try:
            os.write(fd, struct.pack(">I", len(header)) + header)
        except OSError:
            pass


def double(x):
    return 2 * x
'''


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacks")
    write(root / "tests" / "test_attacks.py", ATTACK_TESTS)
    return by_name(grade(write(root / "attack.py", ATTACKS), root / "tests", **FAST))


def test_a_kept_function_of_an_earlier_test_is_not_run(attacked):
    assert attacked["test_keep"]["status"] == "passed"
    later = attacked["test_later"]
    assert later["status"] == "failed"
    assert "TestFunctionError" in later["output"]


def test_deep_or_huge_arguments_of_a_callback_stop_only_that_test(attacked):
    flood = attacked["test_flood"]
    assert flood["status"] == "failed"
    assert flood["extra_data"]["reason"] == "protocol"


def test_callbacks_calling_each_other_forever_are_cut(attacked):
    ping = attacked["test_ping_pong"]
    assert ping["status"] == "failed"
    assert "TestFunctionError" in ping["output"] or "RecursionError" in ping["output"]


def test_forged_changes_never_reach_the_tests_objects(attacked):
    forge = attacked["test_forge"]
    assert forge["status"] == "failed"
    assert forge["extra_data"]["reason"] == "protocol"
    assert attacked["test_honest"]["status"] == "passed"  # a fresh process for the next


def test_a_test_that_passes_one_of_its_objects_is_refused_with_the_reason(tmp_path):
    write(tmp_path / "tests" / "test_layer.py", '''
        import difflab
        import submission


        def test_train():
            model = difflab.nn.Linear(2, 1)
            submission.train(model)
    ''')
    sub = write(tmp_path / "sub.py", "def train(model):\n    return None\n")
    test = by_name(grade(sub, tmp_path / "tests", **FAST))["test_train"]
    assert test["status"] == "failed"
    assert "a Linear (an object of the test) cannot be passed" in test["output"]


# -- difflab assign: the solution first ---------------------------------------------------


def _assignment(folder, tests: str):
    write(folder / "hw.py", '''
        def double(x):
            ### BEGIN SOLUTION
            return 2 * x
            ### END SOLUTION
    ''')
    write(folder / "tests" / "test_hw.py", tests)
    return folder


def test_assign_refuses_a_release_whose_solution_fails_a_test(tmp_path):
    from difflab.grading.cli import assign_command

    source = _assignment(tmp_path / "hw", '''
        import difflab
        import submission
        from difflab.grading import points


        @points(1)
        def test_double():
            assert submission.double(21) == 42


        @points(2, hidden=True)
        def test_layer():
            submission.double(difflab.nn.Linear(2, 1))
    ''')
    result = CliRunner().invoke(assign_command, [str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "does not pass every test" in result.stderr
    assert "test_layer (0/2)" in result.stderr
    assert "a Linear (an object of the test) cannot be passed" in result.stderr
    assert not (tmp_path / "out" / "student").exists()  # nothing released


def test_assign_validates_and_releases_a_passing_solution(tmp_path):
    from difflab.grading.cli import assign_command

    source = _assignment(tmp_path / "hw", '''
        import submission


        def test_double():
            assert submission.double(21) == 42
    ''')
    result = CliRunner().invoke(assign_command, [str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "validated: the solution passes every test" in result.output
    assert (tmp_path / "out" / "student" / "hw.py").is_file()


def test_assign_validates_with_the_sources_hidden_tests_blocks(tmp_path):
    """The solution is graded with the file's hidden-tests blocks as well as tests/: a
    block that fails refuses the release, one that passes is released as a test."""
    from difflab.grading.cli import assign_command

    source = _assignment(tmp_path / "hw", '''
        import submission


        def test_double():
            assert submission.double(21) == 42
    ''')
    hw = source / "hw.py"
    hw.write_text(hw.read_text() + "### BEGIN HIDDEN TESTS (2 points)\n"
                  "assert double(3) == 6\n### END HIDDEN TESTS\n")
    result = CliRunner().invoke(assign_command, [str(source), "--out", str(tmp_path / "ok")])
    assert result.exit_code == 0, result.output
    assert "and the hidden-tests blocks" in result.output
    assert (tmp_path / "ok" / "instructor" / "tests" / "test_hidden_blocks_hw.py").is_file()

    hw.write_text(hw.read_text().replace("double(3) == 6", "double(3) == 7"))
    result = CliRunner().invoke(assign_command, [str(source), "--out", str(tmp_path / "no")])
    assert result.exit_code == 2, result.output
    assert "does not pass every test" in result.stderr
    assert "(hidden tests) (0/2)" in result.stderr, result.stderr
    assert not (tmp_path / "no" / "student").exists()


def test_validate_solution_docstring_example():
    from difflab.grading import validation

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(validation.validate_solution, "validate_solution"):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted > 0


def test_a_change_of_gradient_only_keeps_the_tests_tape_valid():
    import difflab
    from difflab.grading.crossing import _write_tensor

    w = difflab.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()  # saves w for its backward
    copy = difflab.tensor([1.0, 2.0])
    copy.grad = difflab.tensor([3.0, 4.0])  # the student's code only set .grad
    _write_tensor(w, copy)
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 8.0])
    _write_tensor(w, difflab.tensor([5.0, 6.0]))  # new values, no gradient
    np.testing.assert_allclose(w.numpy(), [5.0, 6.0])
    assert w.grad is None and w._version[0] == 1


# -- the wire's codec: the project's one JSON tree codec, with the wire's tags and limits


def _plain_extra(value, blobs):
    return NotImplemented


def test_wire_values_round_trip_through_the_shared_codec():
    from difflab.grading.protocol import LIMITS
    from difflab.jsontree import Limits

    value = {"a": (1, 2.5, float("-inf")), 3: [np.float32(2), np.arange(3.0), 1 + 2j, None]}
    blobs = []
    back = _round_trip((encode(value, blobs, extra=_plain_extra), blobs), None)
    assert back["a"][:2] == (1, 2.5) and back["a"][2] == float("-inf")
    assert back[3][0].dtype == np.float32 and back[3][0] == 2  # a NumPy scalar stays one
    np.testing.assert_array_equal(back[3][1], np.arange(3.0))
    assert back[3][2:] == [1 + 2j, None]
    assert LIMITS == Limits(max_depth=32, max_nodes=200_000)


@pytest.mark.parametrize("tree, message", [
    ({"$array": 0, "shape": [10 ** 9]}, "unknown entry"),  # a key the tag does not allow
    ({"$tensor": {"$array": 0}, "requires_grad": True, "dtype": "x"}, "unknown entry"),
    ({"$ref": 1}, "unexpected \\$ref"),  # a reference where only data may come
    ({"$complex": [1.0]}, "pair"),
    ({"$tuple": 5}, "must hold a list"),
    ({"$dict": [[[1], 2]]}, "key or set member of type list"),
    ({"$float": "1e999"}, "must be 'nan'"),
    ({"$array": True}, "not sent"),
    (json.loads("[" * 34 + "1" + "]" * 34), "more than 32 levels"),
    ([0] * 200_001, "more than 200000 values"),
], ids=["array-extra-key", "tensor-extra-key", "ref-in-data", "complex-one-part",
        "tuple-not-list", "list-key", "float-text", "bool-blob-index", "deep", "many"])
def test_wire_trees_out_of_range_or_of_the_wrong_shape_are_refused(tree, message):
    blobs = [b""]
    with pytest.raises(ProtocolError, match=message):
        decode(tree, blobs, None)


def test_values_nested_beyond_the_wire_limit_are_not_sent():
    deep = []
    for _ in range(40):
        deep = [deep]
    with pytest.raises(TypeError, match="nested more than 32 levels"):
        encode(deep, [], extra=_plain_extra)
    with pytest.raises(TypeError, match="cannot be sent between the processes"):
        encode(object(), [], extra=_plain_extra)
