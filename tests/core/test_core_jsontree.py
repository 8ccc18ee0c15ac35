"""The one JSON tree codec behind checkpoints and graph files: round trips, limits, tampering."""

import doctest
import json
import math

import numpy as np
import pytest

from difflab import export as E
from difflab import jsontree, serialization
from difflab.jit.graph import Ref
from difflab.jsontree import (
    Limits,
    Tag,
    TreeCodec,
    array_tag,
    dict_tag,
    float_tag,
    set_tag,
    tuple_tag,
)


class Bad(ValueError):
    pass


def codec(**kwargs):
    return TreeCodec([array_tag("$a", lambda v: isinstance(v, np.ndarray)), float_tag("$f"),
                      tuple_tag("$t"), dict_tag("$d"), set_tag("$s")], Bad, **kwargs)


def test_values_round_trip_with_arrays_apart_and_strict_json():
    value = {"a": (1, 2.5, None, True), 3: [float("nan"), -math.inf], 4.5: {1, 2},
             "x": np.arange(6.0).reshape(2, 3), "n": np.float32(0.5)}
    blobs = []
    tree = codec().encode(value, blobs)
    json.dumps(tree, allow_nan=False)  # (non-finite floats are tagged: strict JSON)
    assert len(blobs) == 1 and blobs[0] is value["x"]
    back = codec().decode(tree, blobs)
    assert list(back) == list(value) and back["a"] == (1, 2.5, None, True)
    assert math.isnan(back[3][0]) and back[3][1] == -math.inf and back[4.5] == {1, 2}
    np.testing.assert_array_equal(back["x"], value["x"])
    assert back["n"] == 0.5 and type(back["n"]) is float


@pytest.mark.parametrize("tree, why", [
    ({"$t": [1], "$d": []}, "unknown entry"),  # two tags
    ({"$t": [1], "other": 1}, "unknown entry"),  # a key the tag does not allow
    ({"__import__": "os"}, "unknown entry"),
    ({"$t": "abc"}, r"\$t must hold a list"),
    ({"$d": [[1, 2, 3]]}, r"must be a \[key, value\] pair"),
    ({"$d": [[[1], 2]]}, "dict key or set member of type list"),
    ({"$s": [{"$t": [1]}]}, "dict key or set member of type tuple"),
    ({"$f": "1e308"}, "must be 'nan', 'inf' or '-inf'"),
    ({"$a": 1.0}, "blob reference must be an integer"),
    ({"$a": True}, "blob reference must be an integer"),
    ({"$a": 5}, "refers to blob 5, which is not there"),
    ({"$a": -1}, "refers to blob -1"),
])
def test_a_tampered_tree_is_refused_with_the_callers_error(tree, why):
    with pytest.raises(Bad, match=why):
        codec().decode(tree, [np.zeros(1)])


def test_depth_and_size_limits_on_reading_and_depth_on_writing():
    deep = 1
    for _ in range(12):
        deep = [deep]
    small = codec(limits=Limits(max_depth=10, max_nodes=50))
    with pytest.raises(Bad, match="nested more than 10 levels"):
        small.decode(deep)
    with pytest.raises(Bad, match="more than 50 values"):
        small.decode(list(range(60)))
    with pytest.raises(TypeError, match="nested more than 10 levels"):
        small.encode(deep)
    tuples = ()
    for _ in range(12):
        tuples = (tuples,)
    with pytest.raises(Bad, match="nested more than 10 levels"):  # (tagged entries count too)
        small.decode(codec().encode(tuples))
    assert small.decode(list(range(40))) == list(range(40))


def test_a_cycle_or_an_unknown_type_is_refused_when_writing():
    loop: list = []
    loop.append(loop)
    with pytest.raises(TypeError, match="contains itself"):
        codec().encode(loop)
    with pytest.raises(TypeError, match="a value of type object cannot be written"):
        codec().encode([object()])
    with pytest.raises(TypeError, match="keys must be str"):
        TreeCodec([dict_tag("d", keys=(str,))]).encode({1: 2})
    shared = [1]  # (the same list twice is no cycle)
    assert codec().decode(codec().encode([shared, shared])) == [[1], [1]]


class Node:
    def __init__(self, child):
        self.child = child


def node_tag():
    """A tag whose entry holds its child two levels down: {"node": {"$t": [child]}}."""
    def write(node, w):
        return {"node": w.inside(node, lambda v, w: {"$t": [w.write(v.child)]})}

    return Tag("node", lambda v: isinstance(v, Node), write,
               lambda e, r, d: Node(r.read(e["node"], d + 1)[0]))


def test_the_writer_refuses_exactly_the_trees_the_reader_refuses():
    def chain(n):
        value = "leaf"
        for _ in range(n):
            value = Node(value)
        return value

    small = TreeCodec([node_tag(), tuple_tag("$t")], Bad, limits=Limits(max_depth=10))
    assert small.decode(small.encode(chain(5))).child.child.child.child.child == "leaf"
    with pytest.raises(TypeError, match="nested more than 10 levels"):  # (the leaf at 12)
        small.encode(chain(6))
    with pytest.raises(Bad, match="nested more than 10 levels"):
        small.decode(TreeCodec([node_tag(), tuple_tag("$t")]).encode(chain(6)))


def test_a_refused_value_is_named_by_its_place():
    with pytest.raises(TypeError, match=r"type object cannot be written \(\['a'\]\[1\]\)"):
        TreeCodec([dict_tag("d")]).encode({"a": {1: object()}})


def test_checkpoints_and_graph_files_share_the_codec_and_its_limits():
    assert serialization.MAX_DEPTH == jsontree.LIMITS.max_depth
    assert isinstance(serialization._codec(), TreeCodec) and isinstance(E._CODEC, TreeCodec)
    assert serialization._codec().limits == jsontree.LIMITS == E._CODEC.limits


@pytest.mark.parametrize("value", [
    Ref("v3"), (1, slice(1, None, None), Ellipsis), np.dtype("float32"), {"axis": (0, -1)},
    [float("inf"), float("-inf")], slice(None, -1, 2)])
def test_a_graph_files_values_round_trip(value):
    tree = E._encode(value, "here")
    json.dumps(tree, allow_nan=False)
    assert E._decode(tree, "here") == value


@pytest.mark.parametrize("tree, why", [
    ({"ref": 3}, "ref must hold a string"),
    ({"slice": [1, 2]}, r"a slice is \[start, stop, step\]"),
    ({"ellipsis": 1}, "ellipsis must hold true"),
    ({"dtype": "object"}, "not a numeric dtype"),
    ({"dtype": "no such"}, "is not a dtype"),
    ({"dict": [[1, 2]]}, "dict key or set member of type int"),
    ({"__tuple__": [1]}, "unknown entry"),  # (a checkpoint's spelling is no graph tag)
])
def test_a_graph_files_tampered_values_are_refused_naming_the_node(tree, why):
    with pytest.raises(E.GraphFileError, match=f"node 'v1': .*{why}"):
        E._decode(tree, "node 'v1'")


def test_a_graph_refuses_to_save_a_value_it_cannot_write():
    with pytest.raises(E.GraphError, match="node v1: cannot save a value of type set"):
        E._encode({1, 2}, "node v1")


def test_docstring_examples_run():
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = doctest.DocTestFinder().find(jsontree, "jsontree")
    for test in tests:
        runner.run(test)
    assert runner.failures == 0
    documented = {t.name.split(".")[-1] for t in tests if t.examples}
    assert {"jsontree", "TreeCodec", "Tag", "Limits", "tuple_tag", "dict_tag", "set_tag",
            "float_tag", "array_tag"} <= documented
