"""Module.register_state_dict_pre_hook / _post_hook and register_load_state_dict_pre_hook /
_post_hook, written as a PyTorch user writes them: the calls, their order and arguments,
pinned to PyTorch 2.13's (the same programs run on torch when it is installed)."""

from __future__ import annotations

import pytest

import difflab as dl
from difflab import nn
from difflab.utils.hooks import RemovableHandle

PUBLIC = ("register_state_dict_pre_hook", "register_state_dict_post_hook",
          "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook")


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Sequential(lib.nn.Linear(3, 1)))


def _save_order(lib):
    """Which hooks state_dict runs, in which order, with which arguments."""
    net, log = _net(lib), []
    for name, module in (("root", net), ("0", net[0]), ("1", net[1]), ("1.0", net[1][0])):
        module.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars, name=name: log.append(("pre", name, prefix, keep_vars)))
        module.register_state_dict_post_hook(
            lambda m, sd, prefix, meta, name=name: log.append(
                ("post", name, prefix, sorted(sd), meta.get("version"))))
    net.state_dict(keep_vars=True)
    return log


#: PyTorch 2.13's log of _save_order: a module's pre-hook, its children's, its post-hook.
SAVE_ORDER = [
    ("pre", "root", "", True), ("pre", "0", "0.", True),
    ("post", "0", "0.", ["0.bias", "0.weight"], 1),
    ("pre", "1", "1.", True), ("pre", "1.0", "1.0.", True),
    ("post", "1.0", "1.0.", ["0.bias", "0.weight", "1.0.bias", "1.0.weight"], 1),
    ("post", "1", "1.", ["0.bias", "0.weight", "1.0.bias", "1.0.weight"], 1),
    ("post", "root", "", ["0.bias", "0.weight", "1.0.bias", "1.0.weight"], 1),
]


def _load_order(lib):
    """Which hooks load_state_dict runs, in which order, and what each sees."""
    net, log = _net(lib), []
    state = dict(net.state_dict())
    state["extra"] = lib.zeros(1)
    del state["1.0.bias"]
    for name, module in (("root", net), ("1", net[1]), ("1.0", net[1][0])):
        module.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors, name=name:
            log.append(("pre", name, prefix, sorted(sd), strict, list(missing),
                        list(unexpected))))
        module.register_load_state_dict_post_hook(
            lambda m, keys, name=name: log.append(
                ("post", name, list(keys.missing_keys), list(keys.unexpected_keys))))
    result = net.load_state_dict(state, strict=False)
    return log, (list(result.missing_keys), list(result.unexpected_keys))


ALL = ["0.bias", "0.weight", "1.0.weight", "extra"]
#: PyTorch 2.13's: pre-hooks parent first, each with its part of the state dict and the keys
#: found so far; post-hooks children first (strict is True in the hooks either way).
LOAD_ORDER = [
    ("pre", "root", "", ALL, True, [], []),
    ("pre", "1", "1.", ["1.0.weight"], True, [], ["extra"]),
    ("pre", "1.0", "1.0.", ["1.0.weight"], True, [], ["extra"]),
    ("post", "1.0", ["1.0.bias"], ["extra"]),
    ("post", "1", ["1.0.bias"], ["extra"]),
    ("post", "root", ["1.0.bias"], ["extra"]),
]


def test_every_public_state_dict_hook_method_is_there_and_returns_a_handle():
    layer = nn.Linear(2, 1)
    for name in PUBLIC:
        handle = getattr(layer, name)(lambda *args: None)
        assert isinstance(handle, RemovableHandle), name
        handle.remove()
    assert all(not getattr(layer, registry) for registry in (
        "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks"))


def test_state_dict_hooks_run_in_pytorchs_order():
    assert _save_order(dl) == SAVE_ORDER


def test_load_state_dict_hooks_run_in_pytorchs_order_with_pytorchs_arguments():
    log, result = _load_order(dl)
    assert log == LOAD_ORDER
    assert result == (["1.0.bias"], ["extra"])


def test_the_same_programs_on_pytorch():
    torch = pytest.importorskip("torch")
    assert all(hasattr(torch.nn.Module, name) for name in PUBLIC)
    assert _save_order(torch) == SAVE_ORDER
    assert _load_order(torch) == (LOAD_ORDER, (["1.0.bias"], ["extra"]))


def test_a_pre_hook_renames_an_old_checkpoints_keys():
    """A model whose layer was renamed loads its old checkpoints through a pre-hook."""

    class Old(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 1)

    class New(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(2, 1)
            self.register_load_state_dict_pre_hook(self._upgrade)

        @staticmethod
        def _upgrade(module, state, prefix, local_metadata, strict, missing, unexpected,
                     errors):
            for key in [k for k in state if k.startswith(prefix + "fc.")]:
                state[prefix + "head." + key[len(prefix + "fc."):]] = state.pop(key)

    old = Old()
    checkpoint = old.state_dict()
    new = New()
    assert new.load_state_dict(checkpoint) == ([], [])
    assert new.head.weight.tolist() == old.fc.weight.tolist()
    assert list(checkpoint) == ["fc.weight", "fc.bias"]  # (the hook changed a copy)
    wrapped = nn.Sequential(New())  # (under a prefix too)
    assert wrapped.load_state_dict({"0." + k: v for k, v in checkpoint.items()}) == ([], [])
    assert wrapped[0].head.bias.tolist() == old.fc.bias.tolist()


def test_a_post_hook_reads_and_clears_the_keys_so_a_strict_load_passes():
    layer, seen = nn.Linear(2, 1), []

    def optional_bias(module, keys):
        seen.append((list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.missing_keys.remove("bias")
        keys.unexpected_keys.clear()

    handle = layer.register_load_state_dict_post_hook(optional_bias)
    result = layer.load_state_dict({"weight": dl.ones(1, 2), "note": dl.zeros(1)})
    assert seen == [(["bias"], ["note"])]
    assert result == ([], []) and layer.weight.tolist() == [[1.0, 1.0]]
    handle.remove()
    with pytest.raises(RuntimeError, match='Missing key.*"bias".*\n.*Unexpected.*"note"'):
        layer.load_state_dict({"weight": dl.ones(1, 2), "note": dl.zeros(1)})


def test_a_strict_load_fails_after_the_post_hooks_and_puts_the_old_values_back():
    layer, calls = nn.Linear(2, 1), []
    before = layer.weight.tolist()
    layer.register_load_state_dict_post_hook(lambda module, keys: calls.append("post"))
    with pytest.raises(RuntimeError, match='Missing key.*"bias"'):
        layer.load_state_dict({"weight": dl.full((1, 2), 7.0)})
    assert calls == ["post"]  # (PyTorch runs the post-hooks, then raises)
    assert layer.weight.tolist() == before
    layer.register_load_state_dict_post_hook(
        lambda module, keys: keys.missing_keys.append("made.up"))
    with pytest.raises(RuntimeError, match='"made.up"'):  # (an added key fails it too)
        layer.load_state_dict({"weight": dl.ones(1, 2), "bias": dl.ones(1)})


def test_a_pre_hook_can_fail_the_load_through_error_msgs():
    layer = nn.Linear(2, 1)
    layer.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, missing, unexpected, errors:
        errors.append("this checkpoint is from another model"))
    before = layer.bias.tolist()
    with pytest.raises(RuntimeError, match="another model"):
        layer.load_state_dict({"weight": dl.ones(1, 2), "bias": dl.ones(1)}, strict=False)
    assert layer.bias.tolist() == before


def test_post_hooks_must_return_none_as_in_pytorch():
    layer = nn.Linear(2, 1)
    with layer.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd):
        with pytest.raises(RuntimeError, match="must return None"):
            layer.state_dict()
    assert list(layer.state_dict()) == ["weight", "bias"]
    layer.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError, match="inplace"):
        layer.load_state_dict(layer.state_dict())


def test_a_post_hook_that_drops_keys_and_a_pre_hook_that_reads_keep_vars():
    layer, seen = nn.Linear(2, 1), []
    layer.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(keep_vars))

    def no_bias(module, state, prefix, local_metadata):
        del state[prefix + "bias"]

    layer.register_state_dict_post_hook(no_bias)
    assert list(nn.Sequential(layer).state_dict()) == ["0.weight"]
    assert list(layer.state_dict(keep_vars=True)) == ["weight"]
    assert seen == [False, True]


@pytest.mark.parametrize("name", PUBLIC)
def test_a_hook_that_is_not_callable_is_refused(name):
    with pytest.raises(TypeError, match="callable"):
        getattr(nn.Linear(2, 1), name)("not a hook")
