"""Datasets, DataLoader, random_split, and the data shipped with difflab."""

import numpy as np
import pytest

import difflab as dl
from difflab.data import (
    DataLoader,
    Dataset,
    Digits,
    TensorDataset,
    load_digits,
    make_moons,
    make_spirals,
    random_split,
)


def test_utils_data_alias():
    import difflab.utils.data as ud

    assert ud.DataLoader is DataLoader and ud.random_split is random_split


def test_tensor_dataset_and_loader_batches():
    x, y = dl.arange(10).float().reshape(10, 1), dl.arange(10)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert len(list(DataLoader(ds, batch_size=4, drop_last=True))) == 2
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, dl.arange(9))


def test_shuffle_is_seeded_and_covers_everything():
    ds = TensorDataset(dl.arange(20))

    def order(seed):
        loader = DataLoader(ds, batch_size=6, shuffle=True,
                            generator=dl.Generator().manual_seed(seed))
        return np.concatenate([b[0].numpy() for b in loader])

    assert np.array_equal(order(1), order(1))
    assert not np.array_equal(order(1), order(2))
    assert sorted(order(1)) == list(range(20))
    g = dl.Generator().manual_seed(0)
    loader = DataLoader(ds, batch_size=20, shuffle=True, generator=g)
    first, second = next(iter(loader))[0].numpy(), next(iter(loader))[0].numpy()
    assert not np.array_equal(first, second)  # a new order every epoch


class Squares(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float32), "label": i % 2, "name": str(i)}


def test_default_collate_and_custom_collate():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["x"].shape == (3, 2) and batch["label"].dtype == np.int64
    assert batch["name"] == ["0", "1", "2"]
    sums = [b for b in DataLoader(Squares(), batch_size=4, collate_fn=lambda s: len(s))]
    assert sums == [4, 3]


def test_random_split_lengths_and_fractions():
    ds = TensorDataset(dl.arange(10))
    a, b = random_split(ds, [7, 3], generator=dl.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3
    ids = sorted([int(a[i][0].item()) for i in range(7)] + [int(b[i][0].item()) for i in range(3)])
    assert ids == list(range(10))
    parts = random_split(ds, [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    parts = random_split(TensorDataset(dl.arange(11)), [0.5, 0.5])
    assert [len(p) for p in parts] == [6, 5]
    with pytest.raises(ValueError, match="does not equal the length"):
        random_split(ds, [5, 6])
    batch = next(iter(DataLoader(a, batch_size=7)))  # a Subset of a TensorDataset batches fast
    assert sorted(batch[0].numpy()) == sorted(int(a[i][0].item()) for i in range(7))


def test_digits_are_shipped_with_a_fixed_split():
    x, y = load_digits()
    assert x.shape == (1797, 1, 8, 8) and y.shape == (1797,)
    assert x.dtype == np.float32 and 0 <= float(x.numpy().min()) and float(x.numpy().max()) == 1
    assert sorted(np.unique(y.numpy())) == list(range(10))
    xtr, ytr = load_digits(train=True, flatten=True)
    xte, yte = load_digits(train=False, flatten=True)
    assert xtr.shape == (1437, 64) and xte.shape == (360, 64)
    raw, _ = load_digits(train=False, normalize=False)
    assert raw.dtype == np.uint8 and int(raw.numpy().max()) == 16
    ds = Digits(train=False)
    img, label = ds[0]
    assert img.shape == (1, 8, 8) and int(label.item()) == int(yte[0].item())
    batch = next(iter(DataLoader(ds, batch_size=32)))
    assert batch[0].shape == (32, 1, 8, 8)


def test_toy_sets():
    x, y = make_moons(101, noise=0.05, seed=3)
    assert x.shape == (101, 2) and set(np.unique(y.numpy())) == {0, 1}
    x2, _ = make_moons(101, noise=0.05, seed=3)
    assert np.array_equal(x.numpy(), x2.numpy())
    x, y = make_spirals(300, n_classes=3)
    assert x.shape == (300, 2) and np.bincount(y.numpy()).tolist() == [100, 100, 100]
    assert float(np.abs(x.numpy()).max()) < 1.5


def test_a_namedtuple_sample_batches_into_the_same_namedtuple():
    # (PyTorch keeps the sample's namedtuple type; it came back as a plain list)
    from collections import namedtuple

    from difflab.data import default_collate

    Pair = namedtuple("Pair", "x label")
    batch = default_collate([Pair(dl.ones(2), 1), Pair(dl.zeros(2), 0)])
    assert type(batch) is Pair and batch.label.tolist() == [1, 0]
    assert tuple(batch.x.shape) == (2, 2)


def test_without_batching_numpy_samples_become_tensors_as_in_pytorch():
    # (batch_size=None applies default_convert, PyTorch's collate for unbatched loading;
    # the arrays came out as NumPy arrays)
    class Arrays(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return {"x": np.full(3, float(i)), "name": f"s{i}"}

    samples = list(DataLoader(Arrays(), batch_size=None))
    assert isinstance(samples[1]["x"], dl.Tensor) and samples[1]["x"].tolist() == [1.0] * 3
    assert samples[1]["name"] == "s1"
    upper = list(DataLoader(Arrays(), batch_size=None, collate_fn=lambda s: s["name"].upper()))
    assert upper == ["S0", "S1"], "a collate_fn given is applied to each sample"
