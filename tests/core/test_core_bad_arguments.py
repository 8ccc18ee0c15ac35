"""Bad arguments get an error that names the call and the fix, never NumPy's or Python's
bare words ("tuple index out of range", "remapped shapes") and never a silent result."""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import engine
from difflab.ops import registry
from difflab.ops.primitive import Primitive

# ------------------------------------------------------------- the engine's prefix


@pytest.mark.parametrize("call, name", [
    (lambda: dl.ones(2, 3).permute(0, 0), "permute"),
    (lambda: dl.multinomial(dl.ones(3), 5), "multinomial"),
    (lambda: dl.bernoulli(dl.full((3,), 2.0)), "bernoulli"),
    (lambda: dl.linalg.cholesky(dl.ones(3)), "linalg.cholesky"),
    (lambda: dl.linalg.slogdet(dl.ones(3)), "linalg.slogdet"),
])
def test_a_primitive_that_names_itself_is_named_once(call, name):
    # Before: "permute: permute: (0, 0) is not a permutation ..."
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{name}: ")
    assert message.count(f"{name}:") == 1, message
    assert "linalg_" not in message


@pytest.mark.parametrize("name", sorted(registry.PRIMITIVES))
def test_every_primitive_is_named_once_in_its_errors(name):
    """Each primitive's forward, failing with a message that names it (as the careful
    ones do) or with NumPy's bare words: its name appears exactly once."""
    real = registry.PRIMITIVES[name]

    class Failing(Primitive):
        pass

    Failing.name = real.name
    for message in (f"{name}: a bad argument", "operands could not be broadcast"):
        def forward(ctx, xp, *arrays, _message=message, **params):
            raise ValueError(_message)
        Failing.forward = staticmethod(forward)
        with pytest.raises(ValueError) as info:
            engine._forward(Failing, None, [np.ones(2)], {},
                            (dl.ones(2),), None, False)
        assert str(info.value).count(f"{name}:") == 1, str(info.value)
        assert str(info.value).startswith(f"{name}: ")


# ------------------------------------------------------------------ one dim check


@pytest.mark.parametrize("call, where", [
    (lambda x: x.size(5), "size"),
    (lambda x: x.size(-3), "size"),
    (lambda x: x.stride(5), "stride"),
    (lambda x: x.unbind(5), "unbind"),
    (lambda x: dl.unbind(x, -3), "unbind"),
    (lambda x: x.chunk(2, dim=4), "chunk"),
    (lambda x: dl.split(x, 1, dim=2), "split"),
])
def test_a_dim_out_of_range_says_the_range(call, where):
    # Before: IndexError "tuple index out of range" (chunk read the shape before split
    # checked the dim).
    with pytest.raises(IndexError, match=rf"^{where}: Dimension out of range \(expected to "
                                         rf"be in range of \[-2, 1\], but got -?\d\)"):
        call(dl.ones(2, 3))


def test_size_stride_and_unbind_of_a_0d_tensor():
    x = dl.tensor(1.0)
    for call in (lambda: x.size(0), lambda: x.stride(-1), lambda: x.unbind(0)):
        with pytest.raises(IndexError, match="no dimensions"):
            call()
    assert x.size() == () and x.stride() == ()


def test_a_dim_that_is_no_int_is_a_type_error():
    with pytest.raises(TypeError, match="size: dim must be an int, got float"):
        dl.ones(2).size(0.0)


def test_good_dims_still_work():
    x = dl.ones(2, 3)
    assert (x.size(-1), x.size(np.int64(0)), x.stride(-2)) == (3, 2, 3)
    assert [t.shape for t in x.unbind(-1)] == [(2,)] * 3


# -------------------------------------------------------------------- expand, repeat


@pytest.mark.parametrize("sizes, words", [
    ((3, 4), r"expanded size of the tensor \(3\) must match the existing size \(2\) at "
             r"non-singleton dimension 0.*\[3, 4\].*\[2, 3\]"),
    ((3,), r"number of sizes provided \(1\) must be greater or equal .* \(2\)"),
    ((-1, 2, 3), r"\(-1\) isn't allowed in a leading, non-existing dimension 0"),
    ((2, -2), r"non-negative .* \[2, -2\]"),
])
def test_expand_to_an_impossible_shape_is_pytorchs_runtime_error(sizes, words):
    # Before: ValueError "operands could not be broadcast together with remapped shapes"
    with pytest.raises(RuntimeError, match=words):
        dl.ones(2, 3).expand(*sizes)
    with pytest.raises(RuntimeError, match="expand: "):
        dl.broadcast_to(dl.ones(2, 3), sizes)


def test_expand_still_broadcasts():
    assert dl.ones(1, 3).expand(4, -1, 3).shape == (4, 1, 3)
    assert dl.ones(2, 1).expand_as(dl.ones(2, 5)).shape == (2, 5)
    assert dl.ones(1, 3).expand(0, 3).shape == (0, 3)


def test_repeat_refuses_a_negative_count():
    # Before: x.repeat(-1, 1) returned x unchanged
    with pytest.raises(RuntimeError, match=r"repeat: the counts must be non-negative.*\(-1, 1\)"):
        dl.ones(2, 3).repeat(-1, 1)
    assert dl.ones(2).repeat(0).shape == (0,)


# ----------------------------------------------------------------------------- split


def test_split_takes_a_numpy_integer_as_one_size():
    # Before: TypeError "'numpy.int64' object is not iterable" (the list-of-sizes branch)
    pieces = dl.split(dl.arange(5.0), np.int64(2))
    assert [p.tolist() for p in pieces] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert len(dl.arange(4.0).split(np.int32(2))) == 2


def test_split_refuses_negative_sizes_and_a_size_of_another_kind():
    with pytest.raises(ValueError, match=r"split: the sizes \[-1, 6\] must not be negative"):
        dl.split(dl.arange(5.0), [-1, 6])
    with pytest.raises(ValueError, match="split: split_size must be a positive int, got 0"):
        dl.split(dl.arange(5.0), 0)
    with pytest.raises(TypeError, match="an int or a list of ints, got float"):
        dl.split(dl.arange(5.0), 2.0)


# ------------------------------------------------------------ writes that do not fit


def test_copy_of_a_shape_that_does_not_fit_names_copy_():
    # Before: NumPy's ValueError "could not broadcast input array from shape (4,) ..."
    for x in (dl.ones(2, 3), dl.ones(2, 3, requires_grad=True) * 1):
        with pytest.raises(RuntimeError, match=r"copy_: cannot write a value of shape \(4,\) "
                                               r"into this tensor of shape \(2, 3\)"):
            x.copy_(dl.ones(4))
    assert dl.zeros(2, 3).copy_(dl.ones(3)).tolist() == [[1.0] * 3] * 2


def test_fill_takes_one_value_only():
    # Before: NumPy's ValueError for shape (4,); a (3,) tensor filled rows silently
    with pytest.raises(RuntimeError, match=r"fill_: the value must be a number or a 0-d "
                                           r"tensor, got one of shape \(4,\).*copy_"):
        dl.ones(2, 3).fill_(dl.ones(4))
    with pytest.raises(RuntimeError, match="fill_"):
        dl.ones(2, 3).fill_(dl.tensor([1.0, 2.0, 3.0]))
    assert dl.ones(2).fill_(dl.tensor(3.0)).tolist() == [3.0, 3.0]


def test_an_in_place_result_that_would_grow_the_tensor_names_the_method():
    x = dl.ones(2, 3, requires_grad=True) * 1  # (recorded: the write is a new record)
    with pytest.raises(RuntimeError, match=r"mul_: cannot write .*\(3, 2, 3\).*\(2, 3\)"):
        x.mul_(dl.ones(3, 2, 3))
    with pytest.raises(RuntimeError, match=r"clamp_: cannot write"):
        dl.ones(2, 3).clamp_(dl.ones(3, 2, 3))


def test_setitem_of_a_shape_that_does_not_fit_names_the_call():
    x = dl.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"__setitem__: shape mismatch"):
        x[0] = dl.ones(5)
    with pytest.raises(ValueError, match=r"__setitem__: could not convert"):
        x[0] = "abc"


@pytest.mark.parametrize("call", [
    lambda x, i, s: x.index_copy(0, i, s),
    lambda x, i, s: x.index_copy_(0, i, s),
    lambda x, i, s: x.index_add(0, i, s),
    lambda x, i, s: x.index_reduce(0, i, s, "prod"),
])
def test_the_index_writes_refuse_a_source_of_another_dtype(call):
    # Before: index_copy and index_add rounded a float64 source to float32 silently
    x, i = dl.ones(3, 2), dl.tensor([0])
    with pytest.raises(RuntimeError, match=r"expected source's dtype \(difflab.float64\) "
                                           r"to equal input's \(difflab.float32\)"):
        call(x, i, dl.ones(1, 2, dtype=dl.float64))
    assert call(x, i, dl.full((1, 2), 2.0)).dtype == dl.float32


# ------------------------------------------------------------------------- linalg


@pytest.mark.parametrize("name", ["svd", "qr", "lu", "lu_factor"])
def test_linalg_decompositions_refuse_a_vector(name):
    # Before: IndexError "tuple index out of range" (svd, qr, lu)
    with pytest.raises(ValueError, match=rf"^linalg.{name}: The input tensor A must have "
                                         rf"at least 2 dimensions.*\(3,\)$"):
        getattr(dl.linalg, name)(dl.ones(3))


# ---------------------------------------------------------------- found by the sweep


@pytest.mark.parametrize("call, name", [
    (lambda x: x.argmax(5), "argmax"),
    (lambda x: dl.cumsum(x, -3), "cumsum"),
    (lambda x: x.any(dim=2), "any"),
    (lambda x: dl.flip(x, (5,)), "flip"),
])
def test_numpys_axis_error_reads_as_pytorchs(call, name):
    # Before: AxisError "axis 5 is out of bounds for array of dimension 2"
    with pytest.raises(IndexError, match=rf"^{name}: Dimension out of range \(expected to be "
                                         rf"in range of \[-2, 1\]"):
        call(dl.ones(2, 3))


@pytest.mark.parametrize("call", [
    lambda x: dl.median(x, 5), lambda x: x.flatten(0, 5), lambda x: x.unsqueeze(7),
    lambda x: x.squeeze(9), lambda x: dl.cummax(x, 5), lambda x: dl.kthvalue(x, 1, 5),
    lambda x: dl.linalg.vector_norm(x, dim=5), lambda x: dl.linalg.matrix_norm(x, dim=(0, 4)),
    lambda x: dl.cat([x, x], 5), lambda x: dl.stack([x, x], 3),
], ids=["median", "flatten", "unsqueeze", "squeeze", "cummax", "kthvalue", "vector_norm",
        "matrix_norm", "cat", "stack"])
def test_a_dim_out_of_range_is_refused_not_wrapped(call):
    # Before: dim % ndim, so dim 5 of a 2-D tensor silently meant dim 1
    with pytest.raises(IndexError, match="Dimension out of range"):
        call(dl.arange(6.0).reshape(2, 3))


def test_the_edges_of_the_dims_still_work():
    x = dl.arange(6.0).reshape(2, 3)
    assert x.unsqueeze(-3).shape == (1, 2, 3) and x.unsqueeze(2).shape == (2, 3, 1)
    assert dl.stack([x, x], -1).shape == (2, 3, 2) and dl.cat([x, x], -1).shape == (2, 6)
    assert dl.tensor(1.0).flatten().shape == (1,) and dl.tensor(1.0).squeeze(0).shape == ()
    with pytest.raises(RuntimeError, match=r"flatten: start_dim \(1\) cannot come after"):
        x.flatten(1, 0)


def test_a_0d_tensor_has_dim_0_for_reductions():
    # Before: IndexError "tuple index out of range" (PyTorch gives these)
    values, indices = dl.median(dl.tensor(1.5), 0)
    assert (values.item(), indices.item()) == (1.5, 0)
    with np.errstate(invalid="ignore"):  # (one value, one degree of freedom: nan)
        assert np.isnan(dl.std(dl.tensor(1.5), 0).item())
        assert dl.var(dl.tensor(1.5), 0).shape == ()
    with pytest.raises(IndexError, match="tensor_split: .*no dimensions"):
        dl.tensor_split(dl.tensor(1.0), 2)


@pytest.mark.parametrize("call", [
    lambda: dl.exp2(None), lambda: dl.clone(None), lambda: dl.amax(None),
    lambda: dl.permute(None, (0,)), lambda: dl.clone("ab"), lambda: dl.cat([dl.ones(1), "a"]),
], ids=["exp2", "clone", "amax", "permute", "a-string", "in-a-list"])
def test_none_or_a_string_is_no_tensor(call):
    # Before: AttributeError ('NoneType' object has no attribute 'ndim'), KeyError 'O', or a
    # tensor of strings
    with pytest.raises(TypeError, match="expected a tensor, a number or an array of numbers"):
        call()


@pytest.mark.parametrize("name", ["cat", "stack", "hstack", "vstack", "column_stack"])
def test_joining_one_tensor_instead_of_a_list_is_refused(name):
    # Before: cat(x) joined x's rows (silently); cat of a vector divided by zero
    with pytest.raises(TypeError, match=rf"{name}: expected a sequence of tensors, got Tensor"):
        getattr(dl, name)(dl.ones(2, 3))


def test_joining_scalars_or_nothing():
    with pytest.raises(RuntimeError, match=r"cat: zero-dimensional tensor \(at position 0\)"):
        dl.cat([dl.tensor(1.0), dl.tensor(2.0)])
    with pytest.raises(ValueError, match="non-empty sequence"):
        dl.hstack([])  # (was IndexError: tuple index out of range)


def test_splitting_into_no_sections():
    # Before: ZeroDivisionError "integer modulo by zero"
    for split in (dl.hsplit, dl.vsplit):
        with pytest.raises(ValueError, match="number of sections must be positive, got 0"):
            split(dl.ones(2, 4), 0)


@pytest.mark.parametrize("call, name", [
    (lambda: dl.zeros(-1), "zeros"), (lambda: dl.full((2, -3), 1.0), "full"),
    (lambda: dl.rand(2, -1), "rand"), (lambda: dl.ones(2).new_zeros(3, -1), "new_zeros"),
])
def test_a_negative_size_names_the_call(call, name):
    # Before: NumPy's ValueError "negative dimensions are not allowed"
    with pytest.raises(ValueError, match=rf"^{name}: Trying to create tensor with negative "
                                         rf"dimension"):
        call()


def test_matrix_norm_refuses_a_vector():
    # Before: ValueError "sum: duplicate value in 'axis'"
    with pytest.raises(ValueError, match="linalg.matrix_norm: The input tensor A must have"):
        dl.linalg.matrix_norm(dl.ones(3))


@pytest.mark.parametrize("call, words", [
    (lambda x: dl.mm(x, 5), r"mm\(\): argument 'mat2' must be a Tensor, not int"),
    (lambda x: dl.mv(x, [1, 2]), r"mv\(\): argument 'vec' must be a Tensor, not list"),
    (lambda x: dl.dot(dl.ones(3), 5), r"dot\(\): argument 'tensor' must be a Tensor"),
    (lambda x: x.dot(5), r"dot\(\): argument 'tensor' must be a Tensor"),
    (lambda x: dl.mm(dl.tensor(1.0), 0), r"mm\(\): argument 'mat2' must be a Tensor"),
    (lambda x: x.view_as(5), r"view_as\(\): argument 'other' must be a Tensor"),
    (lambda x: x.reshape_as([1]), r"reshape_as\(\): argument 'other' must be a Tensor"),
    (lambda x: x.expand_as(1.5), r"expand_as\(\): argument 'other' must be a Tensor"),
    (lambda x: x.type_as(5), r"type_as\(\): argument 'other' must be a Tensor"),
    (lambda x: x.equal(5), r"equal\(\): argument 'other' must be a Tensor"),
    (lambda x: dl.linalg.det(None), r"linalg: expected a tensor"),
    (lambda x: dl.linalg.solve(dl.eye(2), 5), r"linalg: expected a tensor"),
    (lambda x: x.sum(1.5), r"sum: dim must be an int or a tuple of ints, got float"),
    (lambda x: dl.std(x, 1.5), r"dim must be an int or a tuple of ints, got float"),
    (lambda x: x.squeeze(1.5), r"squeeze: dim must be an int or a tuple of ints"),
], ids=["mm", "mv", "dot", "dot-of-a-matrix", "mm-of-a-scalar", "view_as", "reshape_as",
        "expand_as", "type_as", "equal", "linalg-None", "linalg-number", "sum", "std",
        "squeeze"])
def test_a_number_or_list_where_a_tensor_or_dim_goes(call, words):
    # Before: AttributeError ("'int' object has no attribute 'ndim'"), or "'float' object is
    # not iterable"
    with pytest.raises(TypeError, match=words):
        call(dl.ones(2, 3))


def test_matmul_of_a_number_names_the_fix():
    # Before: AttributeError "'int' object has no attribute 'ndim'"
    with pytest.raises(ValueError, match=r"^matmul: both operands need at least one "
                                         r"dimension .* use \* for scalars"):
        dl.matmul(dl.ones(2, 3), 5)
    assert dl.ones(2, 3).type_as(dl.ones(1, dtype=dl.float64)).dtype == dl.float64
    assert dl.ones(2, 3).sum([0]).shape == (3,)


def test_norm_of_order_0_counts_the_nonzero_entries():
    # Before: ZeroDivisionError (1 / p); PyTorch counts the nonzero entries
    x = dl.tensor([[1.0, 0.0, -3.0], [0.0, 2.0, 0.0]])
    assert dl.norm(x, 0).item() == 3.0 and x.norm(0, dim=1).tolist() == [2.0, 1.0]
    assert x.norm(float("-inf")).item() == 0.0
    with pytest.raises(ValueError, match="norm: p must be a number, 'fro' or 'inf', got 'nuc'"):
        x.norm("nuc")


def test_the_largest_of_no_values():
    # Before: NumPy's "zero-size array to reduction operation maximum which has no identity",
    # for softmax and logsumexp too, whose results PyTorch defines
    for call in (lambda x: dl.amax(x), lambda x: dl.max(x), lambda x: dl.amin(x, 0)):
        with pytest.raises(ValueError, match=r"of no values is undefined: dimension 0 of the "
                                             r"input \(shape \(0, 3\)\) is empty"):
            call(dl.ones(0, 3))
    assert dl.softmax(dl.ones(0, 3), 0).shape == (0, 3)
    with np.errstate(divide="ignore"):  # (log of an empty sum)
        assert dl.log_softmax(dl.ones(0, 3), 0).shape == (0, 3)
        assert dl.logsumexp(dl.ones(0, 3), 0).tolist() == [-np.inf] * 3
    assert dl.amax(dl.ones(0, 3), 1).shape == (0,)


@pytest.mark.parametrize("call, name", [
    (lambda: dl.diag_embed(dl.tensor(1.0)), "diag_embed"),
    (lambda: dl.linalg.vander(dl.tensor(1.0)), "linalg.vander"),
    (lambda: dl.linalg.cross(dl.tensor(1.0), dl.tensor(2.0)), "linalg.cross"),
    (lambda: dl.narrow(dl.tensor(1.0), 0, 0, 1), "narrow"),
    (lambda: dl.repeat_interleave(dl.tensor(1.0), 2, dim=0), "repeat_interleave"),
])
def test_a_0d_tensor_where_a_dimension_is_read(call, name):
    # Before: IndexError "tuple index out of range"
    with pytest.raises(IndexError, match=rf"^{name}: Dimension specified as -?\d but the "
                                         rf"tensor has no dimensions"):
        call()


def test_repeat_interleave_of_one_count_and_trapezoid_of_a_number():
    # Before: IndexError "tuple index out of range" for both
    assert dl.repeat_interleave(dl.tensor(2)).tolist() == [0, 0]
    with pytest.raises(TypeError, match=r"trapezoid: x must be a tensor .* pass dx=5"):
        dl.trapezoid(dl.ones(2, 3), 5)


def test_flip_and_tile_say_what_dims_they_take():
    # Before: TypeError "'float' object is not iterable", "'int' object is not iterable"
    with pytest.raises(TypeError, match="flip: dim must be an int or a tuple of ints"):
        dl.ones(2, 3).flip(1.5)
    with pytest.raises(TypeError, match=r"tile: dims must be a tuple of ints .* tile\(x, \(5,\)\)"):
        dl.tile(dl.ones(2, 3), 5)
    assert dl.tile(dl.ones(2, 3), [1, 2]).shape == (2, 6)
    assert dl.ones(2, 3).flip(1).shape == (2, 3)
