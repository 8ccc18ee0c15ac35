"""Views as PyTorch has them: shared memory, one version counter, one history.

PyTorch documents which functions return views (its "Tensor Views" page). For each
of them, a write through the result reaches the base and a write into the base is
seen through the result, and both bump the one version counter; autograd sees a
write on either side (``tensor_views``).  The functions that copy (``contiguous``
of a transpose, ``reshape`` where the strides do not allow the shape, integer and
mask indexing) must not share memory.  The expected values are pinned (derived
from which elements of the base each view covers), so these run without PyTorch;
the last test compares with PyTorch where it is installed.
"""

import numpy as np
import pytest

import difflab as dl

#: name -> a view of a 3x4 tensor, by the functions PyTorch documents as views
VIEWS = {
    "slice": lambda x: x[1:, ::2],
    "integer": lambda x: x[1],
    "ellipsis": lambda x: x[..., 1],
    "none": lambda x: x[None, 1:],
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x, L=dl: L.diagonal(x, 1),
    "diagonal_below": lambda x: x.diagonal(-1),
    "diagonal_dims_swapped": lambda x: x.diagonal(dim1=-1, dim2=-2),
    "movedim": lambda x: x.movedim(0, 1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "permute": lambda x: x.permute(1, 0),
    "select": lambda x: x.select(1, 2),
    "squeeze": lambda x: x[None].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "H": lambda x: x.H,
    "mT": lambda x: x.mT,
    "mH": lambda x: x.mH,
    "adjoint": lambda x: x.adjoint(),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "swapdims": lambda x, L=dl: L.swapdims(x, 0, 1),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "view": lambda x: x.view(12),
    "view_as": lambda x: x.view(2, 6).view_as(x),
    "reshape": lambda x: x.reshape(2, 6),
    "flatten": lambda x: x.flatten(),
    "contiguous": lambda x: x.contiguous(),
    "unbind": lambda x: x.unbind(1)[3],
    "split": lambda x: x.split(2, 1)[1],
    "split_with_sizes": lambda x: x.split([1, 3], 1)[1],
    "chunk": lambda x: x.chunk(3, 0)[2],
    "tensor_split": lambda x, L=dl: L.tensor_split(x, 2, 1)[1],
    "view_of_view": lambda x: x[1:].T.diagonal(),
}

#: name -> a result PyTorch copies (no memory shared with the 3x4 base)
COPIES = {
    "contiguous_of_transpose": lambda x: x.t().contiguous(),
    "reshape_of_transpose": lambda x: x.t().reshape(12),
    "flatten_of_transpose": lambda x: x.t().flatten(),
    "flip": lambda x: x.flip(0),
    "integer_array_index": lambda x: x[[0, 2]],
    "mask_index": lambda x: x[x > 3],
    "clone": lambda x: x.clone(),
}


def _base():
    return dl.arange(12.0, dtype=dl.float64).reshape(3, 4)


def _coverage(make):
    """How many times the view ``make`` gives covers each element of the 3x4 base
    (the base's values are their own positions, so the view's values say where)."""
    seen = make(_base()).numpy().ravel().astype(int)
    return np.bincount(seen, minlength=12).reshape(3, 4)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_write_through_the_view_reaches_the_base(name, device):
    x = _base().to(device)
    v = VIEWS[name](x)
    covered = _coverage(VIEWS[name]) > 0
    v.fill_(-1.0)
    expected = np.where(covered, -1.0, np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(x.cpu().numpy(), expected)
    assert x._version[0] == v._version[0] == 1


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_write_into_the_base_is_seen_through_the_view(name):
    x = _base()
    v = VIEWS[name](x)
    before = v.numpy().copy()
    x.add_(100.0)
    np.testing.assert_array_equal(v.numpy(), before + 100.0)
    assert x._version[0] == v._version[0] == 1


@pytest.mark.parametrize("name", sorted(COPIES))
def test_a_copy_shares_no_memory_with_its_input(name):
    x = _base()
    c = COPIES[name](x)
    c.fill_(-1.0)
    np.testing.assert_array_equal(x.numpy(), np.arange(12.0).reshape(3, 4))
    assert x._version[0] == 0 and c._version[0] == 1
    x.zero_()
    assert (c.numpy() == -1.0).all()


def test_the_diagonal_idioms_write_the_matrix():
    a = dl.ones(3, 3)
    a.diagonal().add_(0.5)  # (a jitter on the diagonal)
    np.testing.assert_array_equal(a.numpy(), [[1.5, 1, 1], [1, 1.5, 1], [1, 1, 1.5]])
    mask = dl.ones(3, 3, dtype=dl.bool)
    mask.diagonal().fill_(False)  # (no self-attention)
    np.testing.assert_array_equal(mask.numpy(), ~np.eye(3, dtype=bool))
    batch = dl.zeros(2, 3, 3)
    batch.diagonal(dim1=-2, dim2=-1).copy_(dl.tensor([[1.0, 2, 3], [4, 5, 6]]))
    np.testing.assert_array_equal(batch.numpy(), [np.diag([1.0, 2, 3]), np.diag([4.0, 5, 6])])
    wide = dl.zeros(2, 4)
    dl.diagonal(wide, offset=2).fill_(7.0)
    np.testing.assert_array_equal(wide.numpy(), [[0, 0, 7, 0], [0, 0, 0, 7]])
    below = dl.zeros(3, 2)
    below.diagonal(-1, 1, 0).fill_(1.0)  # (dim1=1, dim2=0: offset -1 is above, in x's terms)
    np.testing.assert_array_equal(below.numpy(), [[0, 1], [0, 0], [0, 0]])
    empty = dl.zeros(2, 2)
    assert empty.diagonal(5).shape == (0,)
    empty.diagonal(5).fill_(1.0)  # (no elements: nothing written)
    assert (empty.numpy() == 0).all()


def test_the_diagonal_is_a_view_on_the_gpu(device):
    a = dl.zeros(3, 3, device=device)
    d = a.diagonal()
    d.fill_(2.0)
    assert a._version[0] == 1
    a.add_(1.0)
    np.testing.assert_array_equal(d.cpu().numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(a.cpu().numpy(), np.eye(3) * 2 + 1)


@pytest.mark.parametrize("method", ["forward", "reverse", "symbolic", "numeric"])
def test_the_diagonal_differentiates_by_every_method(method):
    """Σ diag(a)² + Σ diag(a, 1)·diag(a, -1): 2 a_ii on the diagonal, a_(i+1)i above
    it and a_i(i+1) below it."""
    from difflab import diff

    def f(a):
        return (dl.diagonal(a) ** 2).sum() + (a.diagonal(1) * a.diagonal(-1)).sum()

    gradient = diff.grad(f, method=method)(dl.arange(9.0, dtype=dl.float64).reshape(3, 3))
    np.testing.assert_allclose(np.asarray(gradient, dtype=float),
                               [[0, 3, 0], [1, 8, 7], [0, 5, 16]], rtol=1e-7, atol=1e-7)


def test_the_diagonal_batches_under_vmap():
    from difflab.func import vmap

    x = dl.arange(18.0).reshape(2, 3, 3)
    np.testing.assert_array_equal(vmap(lambda a: a.diagonal())(x).numpy(),
                                  [[0, 4, 8], [9, 13, 17]])
    np.testing.assert_array_equal(vmap(lambda a: dl.diagonal(a, -1))(x).numpy(),
                                  [[3, 7], [12, 16]])


# ------------------------------------------------------------------- autograd


WRITABLE = sorted(set(VIEWS) - {"contiguous"})  # (contiguous() of x is x itself: no view)


@pytest.mark.parametrize("name", WRITABLE)
def test_a_write_through_a_view_of_a_graph_tensor_is_the_base_s_write(name, device):
    """y = 1.5 w; the view's elements doubled in place; the gradient of Σ y·c is
    1.5 c, doubled where the view lies (PyTorch's CopySlices; difflab refused)."""
    c = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
    w = dl.tensor(np.arange(12.0).reshape(3, 4) / 7 + 0.5, requires_grad=True, device=device)
    y = w * 1.5
    VIEWS[name](y).mul_(2.0)
    (y * dl.tensor(c, device=device)).sum().backward()
    covered = _coverage(VIEWS[name]) > 0
    np.testing.assert_allclose(w.grad.cpu().numpy(), 1.5 * c * np.where(covered, 2, 1))


@pytest.mark.parametrize("name", WRITABLE)
def test_a_view_used_after_its_base_was_written_reads_the_write(name):
    """y = 1.5 w, then y *= 3 in place: v = 4.5 w where it lies, so Σ v² has gradient
    40.5 w there, once per time v covers an element (a view read before the write
    gave 4.5 w: the gradient of the old values)."""
    w = dl.tensor(np.arange(12.0).reshape(3, 4) / 7 + 0.5, requires_grad=True)
    y = w * 1.5
    v = VIEWS[name](y)
    y.mul_(3.0)
    (v * v).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 40.5 * w.detach().numpy() * _coverage(VIEWS[name]))


@pytest.mark.parametrize("name", ["slice", "diagonal", "T", "view", "select"])
def test_a_recorded_write_through_a_view_of_a_plain_tensor_gives_the_base_a_history(name):
    w = dl.tensor(2.0, requires_grad=True)
    c = dl.tensor(np.linspace(-1.0, 2.0, 12).reshape(3, 4))
    y = dl.zeros(3, 4, dtype=dl.float64)
    VIEWS[name](y).add_(w)
    assert y.requires_grad
    (y * c).sum().backward()
    covered = _coverage(VIEWS[name]) > 0
    assert w.grad.item() == pytest.approx(c.numpy()[covered].sum())


def test_an_element_written_with_plus_equals_keeps_its_gradient():
    w = dl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    y = w * 1
    y[1:] += w[:2] * 2  # (a view written in place, then put back by __setitem__)
    (y * dl.tensor([[1.0, 1.0], [10.0, 10.0], [100.0, 100.0]])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[21, 21], [210, 210], [100, 100]])


def test_the_gradient_through_a_view_matches_the_out_of_place_program():
    """A written diagonal and a later read of a slice, against the same computation
    written without views (every method of the gradient agrees)."""
    def in_place(w):
        y = w * w
        y.diagonal().mul_(3.0)
        y[:, 0].add_(1.0)
        return (y.sin() * y).sum()

    def out_of_place(w):
        y = w * w
        y = y * (1 + 2 * dl.eye(3, dtype=w.dtype))
        y = y + dl.tensor([[1.0, 0, 0]] * 3, dtype=w.dtype)
        return (y.sin() * y).sum()

    w0 = np.arange(9.0).reshape(3, 3) / 5 - 0.7
    grads = []
    for f in (in_place, out_of_place):
        w = dl.tensor(w0, requires_grad=True)
        f(w).backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    assert dl.autograd.gradcheck(in_place, (dl.tensor(w0, requires_grad=True),))


def _writes_rows_and_the_diagonal(w):
    y = w * 1
    y[1:] += w[:2] * 2
    y.diagonal().mul_(3)
    return (y * y).sum()


@pytest.mark.parametrize("compiled", [False, True])
def test_a_program_writing_through_views_gives_pytorch_s_gradient(device, compiled):
    """The value and gradient PyTorch 2.13 gives for this program (pinned)."""
    f = dl.compile(_writes_rows_and_the_diagonal) if compiled else _writes_rows_and_the_diagonal
    w = dl.arange(9.0, device=device).reshape(3, 3).requires_grad_()
    out = f(w)
    out.backward()
    assert out.item() == 3704.0
    np.testing.assert_array_equal(w.grad.cpu().numpy(),
                                  [[12, 218, 40], [54, 168, 666], [24, 30, 324]])


def test_a_view_of_a_leaf_that_requires_grad_is_not_written_while_recording():
    w = dl.ones(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        w.diagonal().mul_(2.0)
    with dl.no_grad():
        w.diagonal().mul_(2.0)  # (an update, as an optimizer's)
    np.testing.assert_array_equal(w.detach().numpy(), np.eye(3) + 1)


def test_a_saved_view_written_through_its_base_refuses_the_stale_backward():
    w = dl.ones(3, 3, requires_grad=True)
    y = w * 2
    d = y.diagonal()
    z = (d * d).sum()  # (mul saves d)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.backward()


def test_a_detached_tensor_shares_memory_but_not_history():
    w = dl.ones(3, requires_grad=True)
    y = w * 2
    d = y.detach()
    assert d._base is None and d._version is y._version
    d.add_(w)  # (its own history, not y's: PyTorch's detach is no view for autograd)
    assert y.grad_fn is not None
    (y * 1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])


def test_the_gradient_through_written_views_on_the_gpu(device):
    """v = y[0] = (3 w₀₀, 1.5 w₀₁) after the write: Σ v² has gradient (18 w₀₀, 4.5 w₀₁)."""
    w = dl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, device=device)
    y = w * 1.5
    v = y[0]
    y.diagonal().mul_(2.0)
    (v * v).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), [[18.0, 9.0], [0.0, 0.0]])


def test_a_graph_tensor_with_views_pickles_and_copies_without_them():
    import copy
    import pickle

    w = dl.ones(3, requires_grad=True)
    y = w * 2
    v = y[1:]
    for twin in (pickle.loads(pickle.dumps(y)), copy.deepcopy(y)):
        assert twin.tolist() == [2.0, 2.0, 2.0]
    y.mul_(3.0)  # (the copies' views are none of y's: only v follows this write)
    (v * 1).sum().backward()
    assert w.grad.tolist() == [0.0, 6.0, 6.0]


# ------------------------------------------------------------- traced programs


def _writes_the_diagonal(x):
    y = x * 1
    y.diagonal().fill_(7.0)
    return y * 2


def _reads_a_diagonal_after_a_write(x):
    y = x * 1
    d = y.diagonal()
    y.mul_(3.0)
    return d * 1


@pytest.mark.parametrize("f", [_writes_the_diagonal, _reads_a_diagonal_after_a_write])
def test_a_traced_write_through_the_diagonal_is_refused_or_run_eagerly(f):
    x = dl.arange(4.0).reshape(2, 2)
    with pytest.raises(dl.jit.GraphError, match="changed in place"):
        dl.jit.trace(f, (x,))
    compiled = dl.compile(f)
    for value in (x, x + 1):
        np.testing.assert_array_equal(compiled(value).numpy(), f(value).numpy())


def test_a_traced_write_through_a_view_of_a_graph_tensor_is_refused():
    def f(w):
        y = w * 1
        y.diagonal().mul_(2.0)
        return y

    with pytest.raises(RuntimeError, match="not supported in a traced function"):
        dl.jit.trace(f, (dl.ones(2, 2, requires_grad=True),))


# ---------------------------------------------------------- contiguous and view


def test_contiguous_copies_only_what_is_not_contiguous():
    x = dl.ones(2, 3)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and y._version is not x._version
    w = dl.ones(2, 3, requires_grad=True)
    (w.t().contiguous() * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), 2.0))


def test_contiguous_and_view_under_vmap_and_forward_mode():
    """Batched values and dual numbers have no memory layout: nothing to copy or refuse."""
    from difflab.func import jacfwd, vmap

    x = dl.arange(12.0).reshape(3, 2, 2)
    out = vmap(lambda a: a.t().contiguous().view(4))(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy().transpose(0, 2, 1).reshape(3, 4))
    jacobian = jacfwd(lambda a: a.view(2, 2).t().contiguous().sum(0))(dl.ones(4))
    np.testing.assert_array_equal(jacobian.numpy(), [[1, 1, 0, 0], [0, 0, 1, 1]])


def test_view_refuses_a_shape_the_strides_cannot_give():
    x = dl.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="Use .reshape"):
        x.t().view(6)
    assert x.t().view(3, 1, 2).shape == (3, 1, 2)  # (a size-1 axis: no copy needed)
    assert x[:, :2].view(2, 2, 1).shape == (2, 2, 1)
    assert dl.zeros(0, 3).t().view(0).shape == (0,)


def test_a_view_as_another_dtype_reads_the_bytes():
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    v = x.view(dl.int32)  # (PyTorch's reinterpretation: difflab converted the values)
    assert v.tolist() == [1065353216, 1073741824] and not v.requires_grad
    assert x.view(dl.uint8).tolist() == [0, 0, 128, 63, 0, 0, 0, 64]
    assert x.view(dl.float64).shape == (1,)
    with dl.no_grad():
        v[0] = 0
    assert x.tolist() == [0.0, 2.0] and x._version[0] == 1
    with pytest.raises(RuntimeError, match="cannot view"):
        dl.ones(2, 2).t().view(dl.float64)  # (the last dimension is not contiguous)


# ------------------------------------------------------------------ PyTorch


@pytest.mark.parametrize("name", sorted(VIEWS) + sorted(COPIES))
@pytest.mark.parametrize("through", ["result", "base"])
def test_writes_and_versions_match_pytorch(name, through):
    torch = pytest.importorskip("torch")
    make = VIEWS.get(name) or COPIES[name]
    seen = []
    for lib in (torch, dl):
        x = lib.arange(12.0, dtype=lib.float64).reshape(3, 4)
        # (a view made by a function, L.diagonal(x, 1), takes the library as L)
        v = make(x, lib) if "L" in make.__code__.co_varnames else make(x)
        (v if through == "result" else x).mul_(-1.0).add_(0.5)
        version = (lambda t: t._version) if lib is torch else (lambda t: t._version[0])
        seen.append((x.tolist(), v.tolist(), version(x), version(v)))
    assert seen[0] == seen[1]
