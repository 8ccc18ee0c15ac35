"""Generators: every random function takes one, and a seed gives one stream on every run."""

import subprocess
import sys

import numpy as np
import pytest

import difflab as dl
from difflab.data import DataLoader, TensorDataset, random_split

DRAWS = {
    "rand": lambda g: dl.rand(3, generator=g),
    "randn": lambda g: dl.randn(2, 2, generator=g),
    "randint": lambda g: dl.randint(0, 10, (4,), generator=g),
    "randperm": lambda g: dl.randperm(6, generator=g),
    "normal": lambda g: dl.normal(0.0, 1.0, (3,), generator=g),
    "multinomial": lambda g: dl.multinomial(dl.tensor([0.2, 0.3, 0.5]), 5, True, generator=g),
    "bernoulli": lambda g: dl.bernoulli(dl.full((5,), 0.5), generator=g),
    "uniform_": lambda g: dl.empty(3).uniform_(generator=g),
    "normal_": lambda g: dl.empty(3).normal_(generator=g),
    "init": lambda g: dl.nn.init.xavier_uniform_(dl.empty(2, 3), generator=g),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_same_seed_same_numbers(name):
    first = DRAWS[name](dl.Generator().manual_seed(7)).tolist()
    again = DRAWS[name](dl.Generator().manual_seed(7)).tolist()
    other = [DRAWS[name](dl.Generator().manual_seed(s)).tolist() for s in (8, 9, 10)]
    assert first == again
    assert any(o != first for o in other)


def test_a_generator_is_a_stream_and_does_not_touch_the_global_one():
    dl.manual_seed(0)
    expected_global = dl.rand(3).tolist()
    dl.manual_seed(0)
    g = dl.Generator().manual_seed(1)
    a, b = dl.rand(2, generator=g).tolist(), dl.rand(2, generator=g).tolist()
    assert a != b  # a stream, not a repeat
    assert dl.rand(3).tolist() == expected_global


def test_manual_seed_returns_the_default_generator_and_state_round_trips():
    g = dl.manual_seed(3)
    assert g is dl.default_generator and dl.initial_seed() == 3
    state = dl.get_rng_state()
    first = dl.randn(4).tolist()
    dl.set_rng_state(state)
    assert dl.randn(4).tolist() == first
    with pytest.raises(ValueError, match="not a generator state"):
        dl.set_rng_state(dl.tensor([1, 2, 3], dtype=dl.uint8))


def test_bad_seeds_and_generators_are_clear_errors():
    with pytest.raises(TypeError, match="seed must be an integer"):
        dl.Generator().manual_seed(1.5)
    with pytest.raises(TypeError, match="difflab.Generator"):
        dl.rand(2, generator=np.random.default_rng(0))
    assert dl.Generator().manual_seed(-1).initial_seed() == 2**64 - 1  # as PyTorch reads it


def test_unseeded_generators_start_alike():
    # PyTorch's Generator() starts from a fixed seed too: programs are reproducible.
    assert dl.rand(3, generator=dl.Generator()).tolist() == \
        dl.rand(3, generator=dl.Generator()).tolist()


SCRIPT = ("import difflab as dl; g = dl.Generator().manual_seed(42); "
          "print(dl.randn(3, generator=g).tolist(), dl.multinomial(dl.ones(5), 3, "
          "generator=g).tolist(), dl.randperm(5, generator=g).tolist())")


def test_the_same_seed_gives_the_same_stream_in_every_process():
    runs = [subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].strip()


def test_dataloader_and_random_split_take_generators():
    data = TensorDataset(dl.arange(10))

    def order(seed):
        loader = DataLoader(data, batch_size=10, shuffle=True,
                            generator=dl.Generator().manual_seed(seed))
        return next(iter(loader))[0].tolist()

    assert order(1) == order(1) and sorted(order(1)) == list(range(10))
    split = [list(s.indices) for s in random_split(data, [7, 3],
                                                   generator=dl.Generator().manual_seed(5))]
    again = [list(s.indices) for s in random_split(data, [7, 3],
                                                   generator=dl.Generator().manual_seed(5))]
    assert split == again


# -------------------------------------------------------------------- multinomial

def test_multinomial_draws_in_proportion():
    g = dl.Generator().manual_seed(0)
    draws = dl.multinomial(dl.tensor([1.0, 3.0, 0.0]), 4000, replacement=True, generator=g)
    assert draws.dtype == dl.int64 and draws.shape == (4000,)
    counts = np.bincount(draws.numpy(), minlength=3)
    assert counts[2] == 0
    assert abs(counts[1] / 4000 - 0.75) < 0.03


def test_multinomial_without_replacement_and_rows():
    g = dl.Generator().manual_seed(0)
    once = dl.multinomial(dl.ones(2, 5), 5, generator=g)
    assert once.shape == (2, 5)
    assert all(sorted(row) == [0, 1, 2, 3, 4] for row in once.tolist())
    x = dl.randn(4, requires_grad=True)
    assert x.softmax(0).multinomial(2, generator=g).shape == (2,)  # from a graph: fine


@pytest.mark.parametrize("weights, n, replacement, message", [
    ([0.5, -0.1, 0.6], 1, True, "non-negative"),
    ([0.0, 0.0], 1, True, "all zero"),
    ([0.5, float("nan")], 1, True, "non-negative"),
    ([0.5, 0.5], 3, False, "cannot draw 3 samples without replacement from 2"),
    ([0.5, 0.0, 0.5], 3, False, "only 2 categories of non-zero weight"),
    ([0.5, 0.5], 0, True, "must be positive"),
    ([[[0.5]]], 1, True, "1-D"),
])
def test_multinomial_errors(weights, n, replacement, message):
    with pytest.raises(ValueError, match=message):
        dl.multinomial(dl.tensor(weights), n, replacement)


def test_multinomial_on_cuda(cuda):
    p = dl.tensor([0.1, 0.9], device=cuda)
    out = dl.multinomial(p, 3, True, generator=dl.Generator().manual_seed(0))
    assert out.device == cuda


def test_fork_rng_leaves_the_stream_as_if_the_block_had_not_drawn():
    dl.manual_seed(7)
    plain = dl.rand(4).numpy()
    dl.manual_seed(7)
    with dl.random.fork_rng():
        inside = dl.randn(3, 3).numpy()  # (draws of another kind and size)
        dl.manual_seed(123)             # even a reseed inside is undone
    np.testing.assert_array_equal(dl.rand(4).numpy(), plain)
    assert inside.shape == (3, 3)


def test_fork_rng_restores_the_state_when_the_block_raises():
    dl.manual_seed(1)
    state = dl.get_rng_state().numpy()
    with pytest.raises(KeyError):
        with dl.random.fork_rng(devices=[0], device_type="cuda"):
            dl.rand(10)
            raise KeyError("inside")
    np.testing.assert_array_equal(dl.get_rng_state().numpy(), state)


def test_fork_rng_disabled_is_an_ordinary_block():
    dl.manual_seed(2)
    dl.rand(2)
    second_draw = dl.rand(2).numpy()
    dl.manual_seed(2)
    with dl.random.fork_rng(enabled=False):
        dl.rand(2)
    np.testing.assert_array_equal(dl.rand(2).numpy(), second_draw)  # (the block's draw counted)
