"""A module's hooks are kept as PyTorch keeps them: ``OrderedDict[int, hook]`` keyed by the
handle's id, with the ``_with_kwargs`` / ``_always_called`` dicts beside; programs read
and clear them."""

from collections import OrderedDict

import pytest

import difflab as dl
from difflab import nn
from difflab.nn.modules import module as module_module
from difflab.utils.hooks import RemovableHandle

REGISTRIES = ["_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
              "_state_dict_hooks", "_load_state_dict_pre_hooks",
              "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
              "_forward_pre_hooks_with_kwargs"]


@pytest.mark.parametrize("name", REGISTRIES)
def test_every_hook_registry_is_an_ordered_dict(name):
    d = getattr(nn.Linear(2, 2), name)
    assert type(d) is OrderedDict and len(d) == 0


def test_hooks_are_keyed_by_their_handles_id_and_the_flags_beside():
    m = nn.ReLU()
    f, g = (lambda m, a, o: None), (lambda m, a, k, o: None)
    a = m.register_forward_hook(f)
    b = m.register_forward_hook(g, with_kwargs=True, always_call=True)
    assert isinstance(a, RemovableHandle) and b.id > a.id
    assert list(m._forward_hooks.items()) == [(a.id, f), (b.id, g)]
    assert dict(m._forward_hooks_with_kwargs) == {b.id: True}
    assert dict(m._forward_hooks_always_called) == {b.id: True}
    b.remove()
    assert list(m._forward_hooks) == [a.id]
    assert not m._forward_hooks_with_kwargs and not m._forward_hooks_always_called
    b.remove()  # (twice: harmless)
    a.remove()
    assert len(m._forward_hooks) == 0


def test_prepend_puts_the_hook_first_and_runs_it_first():
    m = nn.Identity()
    order = []
    m.register_forward_pre_hook(lambda m, a: order.append("first"))
    h = m.register_forward_pre_hook(lambda m, a: order.append("prepended"), prepend=True)
    assert next(iter(m._forward_pre_hooks)) == h.id
    m(dl.ones(1))
    assert order == ["prepended", "first"]


def test_a_program_clears_and_counts_the_dicts():
    m = nn.Linear(2, 2)
    seen = []
    m.register_forward_hook(lambda m, a, o: seen.append(1))
    m.register_forward_pre_hook(lambda m, a: seen.append(0))
    assert len(m._forward_hooks) == len(m._forward_pre_hooks) == 1
    m._forward_hooks.clear()
    m._forward_pre_hooks.clear()
    m(dl.ones(1, 2))
    assert seen == []


def test_a_handle_is_a_context_manager_and_removal_after_clear_is_harmless():
    m = nn.Linear(2, 2)
    with m.register_forward_pre_hook(lambda m, args: (args[0] * 0,), with_kwargs=False) as h:
        assert len(m._forward_pre_hooks) == 1 and isinstance(h.id, int)
        assert m(dl.ones(1, 2)).tolist() == m.bias.detach().reshape(1, 2).tolist()
    assert len(m._forward_pre_hooks) == 0
    h2 = m.register_forward_hook(lambda m, a, o: None, with_kwargs=True)
    m._forward_hooks.clear()
    h2.remove()  # (its id is gone from _forward_hooks; still cleared from _with_kwargs)
    assert not m._forward_hooks_with_kwargs


def test_a_pre_hook_with_kwargs_gets_and_replaces_them():
    class Scale(nn.Module):
        def forward(self, x, *, k=1.0):
            return x * k

    m = Scale()
    h = m.register_forward_pre_hook(lambda m, args, kwargs: (args, {"k": 3.0}),
                                    with_kwargs=True)
    assert dict(m._forward_pre_hooks_with_kwargs) == {h.id: True}
    assert m(dl.ones(1), k=2.0).tolist() == [3.0]


def test_backward_hooks_kinds_are_noted_as_pytorch_does():
    m = nn.Linear(2, 2)
    assert m._is_full_backward_hook is None
    m.register_full_backward_hook(lambda m, gi, go: None)
    assert m._is_full_backward_hook is True and len(m._backward_hooks) == 1
    with pytest.raises(RuntimeError, match="both regular"):
        m.register_backward_hook(lambda m, gi, go: None)


def test_the_global_hooks_are_ordered_dicts_too():
    from difflab.nn.modules.module import register_module_forward_hook
    names = []
    with register_module_forward_hook(lambda m, a, o: names.append(type(m).__name__),
                                      with_kwargs=False) as h:
        assert list(module_module._global_forward_hooks) == [h.id]
        nn.Sequential(nn.ReLU())(dl.ones(1))
    assert names == ["ReLU", "Sequential"] and not module_module._global_forward_hooks
    for name in ("_global_forward_pre_hooks", "_global_forward_hooks",
                 "_global_forward_hooks_with_kwargs", "_global_forward_hooks_always_called",
                 "_global_backward_pre_hooks", "_global_backward_hooks"):
        assert type(getattr(module_module, name)) is OrderedDict


def test_the_same_dicts_as_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    for m in (ours, theirs):
        m.register_forward_hook(lambda m, a, k, o: None, with_kwargs=True, always_call=True)
        m.register_forward_pre_hook(lambda m, a: None, prepend=True)
    for name in REGISTRIES:
        assert type(getattr(ours, name)) is type(getattr(theirs, name)), name
        assert len(getattr(ours, name)) == len(getattr(theirs, name)), name
