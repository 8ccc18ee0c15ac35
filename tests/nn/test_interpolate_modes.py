"""interpolate's modes 'bicubic', 'area', 'nearest-exact' and ``antialias=True``, and
grid_sample's ``padding_mode='reflection'`` and ``mode='bicubic'``: PyTorch's values (made
once by a script with torch 2.13 and stored here; compared live too where torch is
installed), gradients, edge inputs (one pixel, non-finite pixels and positions), the tracer,
and the errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
INF, NAN = float("inf"), float("nan")


def ramp(*shape):
    """A deterministic float64 array of ``shape`` (no two neighbours equal)."""
    return np.cos(np.arange(math.prod(shape)) * 0.7 + 0.3).reshape(shape)


#: name: (input shape, output spatial size, interpolate's options).
CASES = {
    "bicubic_up_rows_down_cols": ((1, 1, 3, 4), (5, 3), dict(size=(5, 3), mode="bicubic")),
    "bicubic_corners": ((1, 1, 3, 4), (5, 3), dict(size=(5, 3), mode="bicubic",
                                                   align_corners=True)),
    "bicubic_scale_factor": ((1, 2, 3, 4), (5, 2), dict(scale_factor=(1.7, 0.6),
                                                        mode="bicubic")),
    "bicubic_recomputed": ((1, 2, 3, 4), (5, 2), dict(scale_factor=(1.7, 0.6), mode="bicubic",
                                                      recompute_scale_factor=True)),
    "bicubic_of_one_pixel": ((1, 1, 1, 1), (2, 3), dict(size=(2, 3), mode="bicubic")),
    "bicubic_to_one_pixel": ((1, 1, 3, 4), (1, 1), dict(size=(1, 1), mode="bicubic",
                                                        align_corners=True)),
    "bicubic_non_square_down": ((1, 1, 6, 2), (4, 1), dict(size=(4, 1), mode="bicubic")),
    "nearest_exact_1d": ((1, 1, 5), (3,), dict(size=3, mode="nearest-exact")),
    "nearest_exact_up": ((1, 1, 3), (7,), dict(scale_factor=2.5, mode="nearest-exact")),
    "nearest_exact_2d": ((1, 1, 3, 4), (5, 3), dict(size=(5, 3), mode="nearest-exact")),
    "nearest_exact_3d": ((1, 1, 2, 3, 2), (3, 2, 4), dict(size=(3, 2, 4), mode="nearest-exact")),
    "area_1d": ((1, 2, 7), (3,), dict(size=3, mode="area")),
    "area_2d": ((1, 1, 3, 5), (2, 3), dict(size=(2, 3), mode="area")),
    "area_up": ((1, 1, 2, 3), (3, 4), dict(scale_factor=1.5, mode="area")),
    "area_3d": ((1, 1, 2, 3, 4), (1, 2, 3), dict(size=(1, 2, 3), mode="area")),
    "antialias_bilinear": ((1, 1, 5, 7), (2, 3), dict(size=(2, 3), mode="bilinear",
                                                      antialias=True)),
    "antialias_bicubic": ((1, 1, 5, 7), (2, 3), dict(size=(2, 3), mode="bicubic",
                                                     antialias=True)),
    "antialias_bicubic_up_down": ((1, 1, 5, 7), (8, 3), dict(size=(8, 3), mode="bicubic",
                                                             antialias=True)),
    "antialias_bilinear_corners": ((1, 1, 5, 7), (2, 3), dict(
        scale_factor=0.5, mode="bilinear", antialias=True, align_corners=True)),
}
#: grid_sample's positions: inside, past every edge, and more than one image away.
GRID = np.array([[[[-1.3, 0.2], [0.35, -2.9], [1.6, 0.55]],
                  [[-0.15, 4.05], [-3.7, -1.2], [2.45, 3.3]]]])
#: PyTorch 2.13's results (CPU, float64) of CASES, 12 significant digits.
EXPECTED = {
    "bicubic_up_rows_down_cols":
        [1.08851367174, 0.297687504731, -0.7617784876, 0.0372854325464, -0.17154862448,
         -0.225573387256, -0.979331696952, -0.545051602458, 0.381095180926, 0.0582974663544,
         0.224745730604, 0.188378448847, 1.12218207679, 0.932685477204, -0.0984872414476],
    "bicubic_corners":
        [0.955336489126, 0.223870940598, -0.737393715541, -0.202519353794, -0.286993479852,
         -0.0768744560165, -0.999135150273, -0.545051602458, 0.4685166713, -0.219060075958,
         0.0570120367137, 0.274562417512, 0.927478430744, 0.803248652708, -0.145500033809],
    "bicubic_scale_factor":
        [1.03982431102, -0.120864438002, 0.0581213305385, -0.208942991955, -0.964335768844,
         -0.224248392483, -0.0257777454227, 0.199644309811, 1.11259066724, 0.585204176828,
         -0.982440895888, -0.948582762619, -0.235209790051, -0.0131068971131, 0.611196037602,
         0.946115802688, 0.199711640549, -0.0153051186367, -0.414028502168, -1.1560211722],
    "bicubic_recomputed":
        [0.979511377971, -0.561045521769, -0.0111464466722, -0.230003218269, -0.949442547889,
         0.18325155273, 0.103812160801, 0.21211784328, 1.16371405895, 0.147382378023,
         -1.04851723417, -0.58174518293, -0.190589546951, 0.115086217437, 0.707416726968,
         0.729334489752, 0.121545583905, -0.186269356935, -0.548370884142, -1.06461902724],
    "bicubic_of_one_pixel":
        [0.955336489126, 0.955336489126, 0.955336489126, 0.955336489126, 0.955336489126,
         0.955336489126],
    "bicubic_to_one_pixel":
        [0.955336489126],
    "bicubic_non_square_down":
        [0.496502826386, -0.939902962396, 0.446682450427, 0.388362289886],
    "nearest_exact_1d":
        [0.955336489126, -0.128844494296, -0.999135150273],
    "nearest_exact_up":
        [0.955336489126, 0.955336489126, 0.540302305868, 0.540302305868, 0.540302305868,
         -0.128844494296, -0.128844494296],
    "nearest_exact_2d":
        [0.955336489126, -0.128844494296, -0.737393715541, 0.955336489126, -0.128844494296,
         -0.737393715541, -0.999135150273, -0.210795799431, 0.4685166713, 0.927478430744,
         0.526077517381, -0.145500033809, 0.927478430744, 0.526077517381, -0.145500033809],
    "nearest_exact_3d":
        [0.955336489126, 0.955336489126, 0.540302305868, 0.540302305868, -0.999135150273,
         -0.999135150273, -0.790967711914, -0.790967711914, -0.210795799431, -0.210795799431,
         0.4685166713, 0.4685166713, 0.526077517381, 0.526077517381, -0.145500033809,
         -0.145500033809, -0.210795799431, -0.210795799431, 0.4685166713, 0.4685166713,
         0.526077517381, 0.526077517381, -0.145500033809, -0.145500033809],
    "area_1d":
        [0.455598100233, -0.621791120037, -0.666966220539, 0.782075898001, 0.44360335851,
         -0.631279907147],
    "area_2d":
        [0.123468820912, 0.143210566441, 0.035295539222, -0.155296506943, -0.118106736471,
         0.0243624501245],
    "area_up":
        [0.955336489126, 0.747819397497, 0.205728905786, -0.128844494296, 0.108971386792,
         -0.0602225177052, -0.344661262654, -0.459906103105, -0.737393715541, -0.868264432907,
         -0.895051431094, -0.790967711914],
    "area_3d":
        [-0.0782331689999, -0.0615091549678, -0.0158564242473, 0.072843026748, 0.0741730092526,
         0.0406182665205],
    "antialias_bilinear":
        [0.389754810112, 0.146220940603, -0.368907995341, -0.398029880368, -0.122558900325,
         0.380556578096],
    "antialias_bicubic":
        [0.442898338807, 0.188351352377, -0.434655408056, -0.460796065683, -0.141094649756,
         0.454621257737],
    "antialias_bicubic_up_down":
        [0.597885200261, -0.734785328432, -0.630042041732, 0.740941221868, -0.229847966883,
         -0.751000193308, 0.763147262432, 0.512596984396, -0.740714179832, 0.0395807745237,
         0.840242037741, -0.00280876920557, -0.58921946786, 0.611009982121, 0.615959456224,
         -0.919149671043, -0.100692194312, 0.914743019461, -0.408180278915, -0.648765559507,
         0.379787971064, 0.0362376659468, -0.939536551709, -0.0773551553418],
    "antialias_bilinear_corners":
        [0.0766872928966, 0.0213914512982, -0.0901948718071, -0.407891322601, -0.107193985013,
         0.479994469248],
}
#: grid_sample of ramp(1, 2, 3, 4) at GRID (PyTorch 2.13), by mode, padding, align_corners.
SAMPLED = {
    ("bilinear", "reflection", False):
        [-0.405896730447, 0.391762007143, 0.266573147733, -0.559408211433, -0.18969941642,
         0.706315979171, 0.303274817859, -0.953964226788, -0.625433995365, 0.805107204503,
         -0.721944352798, -0.89927448346],
    ("bilinear", "reflection", True):
        [-0.536824281751, 0.438977971975, 0.188116820683, -0.55816991686, -0.124270602441,
         0.180834197469, 0.462557705546, -0.801392892825, -0.131636447923, 0.848596606451,
         -0.444359794919, -0.412584119118],
    ("nearest", "reflection", False):
        [-0.999135150273, 0.526077517381, 0.526077517381, -0.790967711914, -0.128844494296,
         0.540302305868, 0.483304758753, -0.999968293349, -0.999968293349, 0.933633644075,
         -0.780568180169, -0.999693042035],
    ("nearest", "reflection", True):
        [-0.999135150273, 0.526077517381, 0.526077517381, -0.790967711914, -0.128844494296,
         0.540302305868, 0.483304758753, -0.999968293349, -0.999968293349, 0.933633644075,
         -0.780568180169, -0.999693042035],
    ("bicubic", "zeros", False):
        [0.0384709765413, 0, 0.00201281559307, 0, 0, 0, -0.0262072789628, 0, 0.0298208853941,
         0, 0, 0],
    ("bicubic", "zeros", True):
        [-0.483173565858, 0.00103139545228, 0.017233650453, 0, 0, 0, 0.236686948857,
         0.00516705128123, -0.0189531138781, 0, 0, 0],
    ("bicubic", "border", False):
        [-0.677090459413, -0.30018725005, -0.0296014582439, 0.893883559538, 1.00224380847,
         -0.145500033809, 0.439055445607, -0.656354257256, -0.562348834339, -0.864864801543,
         -0.778213479302, -0.769947960542],
    ("bicubic", "border", True):
        [-0.87170943243, -0.152462314293, 0.227979359038, 0.87318639784, 1.14296576651,
         -0.145500033809, 0.45395760502, -0.765400263861, -0.143167743214, -0.89461732526,
         -0.866913980415, -0.769947960542],
    ("bicubic", "reflection", False):
        [-0.661583049142, 0.435871887487, 0.262039294031, -0.642124309884, -0.231342134396,
         0.834450875935, 0.458901874622, -1.29859245969, -0.664530980502, 0.973218669105,
         -0.914689772633, -0.985932418014],
    ("bicubic", "reflection", True):
        [-0.764236938182, 0.490363274194, 0.259764203877, -0.621096752139, -0.116287519827,
         0.321418019305, 0.582696235523, -0.947095083656, -0.208943075811, 0.992762760999,
         -0.620900103872, -0.596756638572],
}


@pytest.mark.parametrize("name", CASES)
def test_interpolate_modes_give_pytorchs_values(name):
    shape, size, options = CASES[name]
    got = F.interpolate(dl.tensor(ramp(*shape)), **options)
    assert tuple(got.shape) == shape[:2] + size
    np.testing.assert_allclose(got.numpy().ravel(), EXPECTED[name], rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name", CASES)
def test_interpolate_modes_in_float32_compute_in_float32(name):
    """A float32 input stays float32 (positions and weights computed in float32, as
    PyTorch's), within float32's rounding of the float64 values."""
    shape, _, options = CASES[name]
    got = F.interpolate(dl.tensor(ramp(*shape).astype(np.float32)), **options)
    assert got.dtype == dl.float32
    np.testing.assert_allclose(got.numpy().ravel(), EXPECTED[name], rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", CASES)
def test_interpolate_modes_gradients(name):
    """gradcheck, and forward mode = reverse mode = jacfwd = jacrev (the weights are
    constants: the Jacobian is the resize's matrix)."""
    shape, _, options = CASES[name]
    x = dl.tensor(ramp(*shape), requires_grad=True)
    assert gradcheck(lambda t: F.interpolate(t, **options), (x,))
    pattern = dl.tensor(np.sin(np.arange(1, 1 + math.prod(CASES[name][0][:2]) * math.prod(
        CASES[name][1]))).reshape(shape[:2] + CASES[name][1]))

    def f(t):
        return (F.interpolate(t, **options) * pattern).sum()

    point = dl.tensor(ramp(*shape))
    reverse = np.asarray(dl.grad(f, method="reverse")(point), dtype=float)
    np.testing.assert_allclose(np.asarray(dl.grad(f, method="forward")(point), dtype=float),
                               reverse, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dl.func.jacfwd(f)(point).numpy(), dl.func.jacrev(f)(point).numpy(),
                               rtol=1e-12, atol=1e-14)


def test_bicubic_of_a_ramp_is_exact_inside_and_clamps_taps_at_the_border():
    """Keys' kernel reproduces a straight line where all four taps are inside; at the
    border the taps repeat the edge pixel (PyTorch clamps each index, it does not pad)."""
    line = dl.tensor([[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]]])
    got = F.interpolate(line, size=(1, 11), mode="bicubic", align_corners=True).numpy()
    np.testing.assert_allclose(got[0, 0, 0, 2:-2], np.arange(2, 9) / 2, atol=1e-15)
    # position 0.5 between pixels 0 and 1: taps -1, 0, 1, 2 read 0, 0, 1, 2
    weights = [-0.09375, 0.59375, 0.59375, -0.09375]  # W(1.5), W(0.5), W(0.5), W(1.5)
    assert got[0, 0, 0, 1] == pytest.approx(weights[2] * 1.0 + weights[3] * 2.0)


def test_nearest_exact_differs_from_nearest_as_pytorch():
    x = dl.arange(4.0).reshape(1, 1, 4)
    assert F.interpolate(x, size=3, mode="nearest").flatten().tolist() == [0.0, 1.0, 2.0]
    # (o + 1/2)·4/3 = 0.67, 2, 3.33
    assert F.interpolate(x, size=3, mode="nearest-exact").flatten().tolist() == [0.0, 2.0, 3.0]
    ints = dl.tensor([[[1, 2, 3]]])  # (only selects: the dtype is kept)
    assert F.interpolate(ints, scale_factor=2, mode="nearest-exact").dtype == dl.int64


def test_area_is_adaptive_average_pooling():
    x = dl.tensor(ramp(2, 3, 5, 7))
    np.testing.assert_array_equal(F.interpolate(x, size=(2, 3), mode="area").numpy(),
                                  F.adaptive_avg_pool2d(x, (2, 3)).numpy())
    np.testing.assert_array_equal(
        F.interpolate(x, scale_factor=0.5, recompute_scale_factor=True, mode="area").numpy(),
        F.adaptive_avg_pool2d(x, (2, 3)).numpy())


def test_non_finite_pixels_as_pytorch():
    """Bicubic mixes four taps with weights that may be 0: 0 · inf is nan, so an inf pixel
    makes its neighbours nan (PyTorch's too); an antialiased resize leaves a dimension
    whose size does not change as it is and skips the taps outside a window."""
    x = dl.tensor([[[[0.0, 1.0, 2.0], [3.0, INF, 5.0], [6.0, 7.0, 8.0]]]])
    same = F.interpolate(x, size=(3, 3), mode="bicubic").numpy()[0, 0]
    np.testing.assert_array_equal(same, [[NAN, NAN, NAN], [NAN, INF, NAN], [NAN, NAN, NAN]])
    aa = F.interpolate(x, size=(2, 3), mode="bilinear", antialias=True).numpy()[0, 0]
    np.testing.assert_array_equal(aa, [[1.125, INF, 3.125], [4.875, INF, 6.875]])
    np.testing.assert_array_equal(F.interpolate(x, size=(3, 3), mode="bilinear",
                                                antialias=True).numpy(), x.numpy())
    np.testing.assert_array_equal(F.interpolate(x, size=(2, 2), mode="area").numpy(),
                                  np.full((1, 1, 2, 2), INF))
    exact = F.interpolate(x, size=(5, 5), mode="nearest-exact").numpy()[0, 0]
    assert np.isinf(exact[2, 2]) and np.isfinite(np.delete(exact.ravel(), 12)).all()


def test_antialias_to_a_width_of_one_is_the_transposed_resize():
    """PyTorch 2.13's CPU kernel repeats the first row when an antialiased output is one
    pixel wide and more than one high (its results differ from the same resize of the
    transposed image); difflab gives the transposed resize's values."""
    x = dl.tensor(np.arange(12.0).reshape(1, 1, 3, 4) ** 2)
    got = F.interpolate(x, size=(2, 1), mode="bilinear", antialias=True).numpy().ravel()
    transposed = F.interpolate(x.transpose(2, 3), size=(1, 2), mode="bilinear",
                               antialias=True).numpy().ravel()
    np.testing.assert_allclose(got, transposed, rtol=1e-15)
    np.testing.assert_allclose(got, [83 / 6, 413 / 6], rtol=1e-14)  # (PyTorch: 83/6 twice)


def test_upsample_module_takes_the_new_modes():
    x = dl.tensor(ramp(1, 2, 3, 4))
    for mode in ("bicubic", "nearest-exact", "area"):
        up = dl.nn.Upsample(scale_factor=2, mode=mode)
        np.testing.assert_array_equal(up(x).numpy(),
                                      F.interpolate(x, scale_factor=2, mode=mode).numpy())


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda x: F.interpolate(x[0], size=3, mode="bicubic"), NotImplementedError,
     "mode 'bicubic' needs a 4-D input"),
    (lambda x: F.interpolate(x.unsqueeze(2), size=(1, 2, 3), mode="bicubic"),
     NotImplementedError, "got a 5-D input, but mode 'bicubic'"),
    (lambda x: F.interpolate(x, size=3, mode="lanczos"), NotImplementedError,
     "mode 'lanczos' is not supported"),
    (lambda x: F.interpolate(x, size=3, mode="area", align_corners=True), ValueError,
     "align_corners option can only be set with the interpolating modes"),
    (lambda x: F.interpolate(x, size=3, mode="nearest-exact", align_corners=False),
     ValueError, "align_corners option"),
    (lambda x: F.interpolate(x, size=3, mode="nearest", antialias=True), ValueError,
     "Anti-alias option is restricted to bilinear and bicubic modes"),
    (lambda x: F.interpolate(x[0], size=3, mode="linear", antialias=True), ValueError,
     "requires a 4-D tensor"),
    (lambda x: F.interpolate(x, scale_factor=0.1, mode="bicubic"), ValueError,
     "scale_factor too small"),
    (lambda x: F.grid_sample(x, dl.zeros(1, 1, 1, 2), mode="bilinear",
                             padding_mode="circular"), NotImplementedError,
     "padding_mode 'circular' is not supported in difflab \\(zeros, border, reflection\\)"),
    (lambda x: F.grid_sample(x, dl.zeros(1, 1, 1, 2), mode="lanczos"), NotImplementedError,
     "mode 'lanczos' is not supported in difflab \\(bilinear, nearest, bicubic\\)"),
])
def test_wrong_modes_and_dimensions_say_what_is_wrong(call, error, words):
    with pytest.raises(error, match=words):
        call(dl.tensor(ramp(1, 2, 3, 4)))


# --------------------------------------------------------------------------- grid_sample


@pytest.mark.parametrize("key", SAMPLED)
def test_grid_sample_reflection_and_bicubic_give_pytorchs_values(key):
    mode, padding, corners = key
    got = F.grid_sample(dl.tensor(ramp(1, 2, 3, 4)), dl.tensor(GRID), mode=mode,
                        padding_mode=padding, align_corners=corners)
    assert tuple(got.shape) == (1, 2, 2, 3)
    np.testing.assert_allclose(got.numpy().ravel(), SAMPLED[key], rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("key", [k for k in SAMPLED if k[0] != "nearest"])
def test_grid_sample_reflection_and_bicubic_gradients(key):
    """gradcheck in the image and the grid (positions away from the folds and whole
    pixels), forward mode = reverse mode."""
    mode, padding, corners = key
    x = dl.tensor(ramp(1, 2, 3, 4), requires_grad=True)
    grid = dl.tensor(GRID, requires_grad=True)

    def f(image, g):
        return F.grid_sample(image, g, mode=mode, padding_mode=padding, align_corners=corners)

    assert gradcheck(f, (x, grid))
    weights = dl.tensor(np.cos(np.arange(12.0)).reshape(1, 2, 2, 3))

    def g_only(g):
        return (f(x.detach(), g) * weights).sum()

    np.testing.assert_allclose(
        np.asarray(dl.grad(g_only, method="forward")(dl.tensor(GRID)), dtype=float),
        np.asarray(dl.grad(g_only, method="reverse")(dl.tensor(GRID)), dtype=float),
        rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("mode", "padding", "want"), [
    # a nan position is clipped to 0 under border and reflection (PyTorch's CPU kernel);
    # reflecting inf is nan, so it reads column 0 too
    ("bilinear", "reflection", [1.5, 1.5, 1.5, 1.0]),
    ("bilinear", "border", [3.5, 1.5, 1.5, 4.0]),
    ("nearest", "reflection", [0.0, 0.0, 0.0, 1.0]),
    ("nearest", "border", [2.0, 0.0, 0.0, 4.0]),
    # bicubic's weights of a position that is not finite are nan
    ("bicubic", "zeros", [NAN] * 4),
    ("bicubic", "border", [NAN] * 4),
    ("bicubic", "reflection", [NAN] * 4),
])
def test_grid_sample_positions_that_are_not_finite(mode, padding, want):
    x = dl.tensor([[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]]])
    grid = dl.tensor([[[[INF, 0.0], [-INF, 0.0], [NAN, 0.0], [0.0, INF]]]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (inf - inf in the fractions)
        got = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=False)
    np.testing.assert_array_equal(got.numpy().ravel(), want)


@pytest.mark.parametrize("corners", [False, True])
def test_grid_sample_of_one_pixel(corners):
    """A 1 × 1 image: reflection (and border) read its pixel everywhere; bicubic with
    zeros padding mixes it with zeros, as PyTorch's (values from torch 2.13)."""
    x = dl.tensor([[[[2.0]]]], dtype=dl.float64)
    grid = dl.tensor([[[[0.3, -0.9], [1.7, 2.5]]]], dtype=dl.float64)
    for padding in ("border", "reflection"):
        for mode in ("bilinear", "nearest", "bicubic"):
            got = F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=corners)
            np.testing.assert_allclose(got.numpy().ravel(), [2.0, 2.0], rtol=1e-14)
    zeros = F.grid_sample(x, grid, mode="bicubic", align_corners=corners).numpy().ravel()
    want = [2.0, 2.0] if corners else [1.255465771484375, -0.02995971679687496]
    np.testing.assert_allclose(zeros, want, rtol=1e-13)


def test_reflection_folds_far_positions_back_with_slope_minus_one():
    """u = 5.5 in a 4-pixel row (corners aligned) folds at 3 to 0.5 and back: the grid's
    derivative changes sign on each fold."""
    row = dl.tensor([[[[0.0, 10.0, 20.0, 30.0]]]])
    for x_position, value, slope in ((2 * 5.5 / 3 - 1, 5.0, -1.0), (2 * 7.5 / 3 - 1, 15.0, 1.0)):
        grid = dl.tensor([[[[x_position, 0.0]]]], requires_grad=True)
        out = F.grid_sample(row, grid, padding_mode="reflection", align_corners=True)
        assert out.item() == pytest.approx(value)
        out.backward()
        assert grid.grad.numpy()[0, 0, 0, 0] == pytest.approx(10.0 * slope * 1.5)


# ------------------------------------------------------------------------------ tracing


@pytest.mark.parametrize("options", [
    dict(size=(5, 3), mode="bicubic"), dict(size=(5, 3), mode="nearest-exact"),
    dict(size=(2, 3), mode="area"), dict(size=(2, 3), mode="bilinear", antialias=True)])
def test_traced_and_compiled_resizes_replay_new_inputs(options):
    class Resize(dl.nn.Module):
        def forward(self, t):
            return F.interpolate(t, **options)

    model = Resize()
    first, second = dl.tensor(ramp(1, 2, 4, 5)), dl.tensor(ramp(1, 2, 4, 5) ** 2 - 0.3)
    traced = dl.jit.trace(model, (first,))
    compiled = dl.compile(model)
    compiled(first)
    want = model(second).numpy()
    np.testing.assert_allclose(traced(second).numpy(), want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(compiled(second).numpy(), want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("mode", ["bicubic", "bilinear", "nearest-exact", "area"])
def test_resizing_to_a_width_of_one_by_every_method(mode):
    """One column read per output (index_select of a one-element index): forward mode and
    the compiled method read it as an integer index before, dropping the axis (forward
    mode summed the rows; the compiled method's backward failed on the shapes)."""
    pattern = dl.tensor(np.arange(1.0, 5.0).reshape(1, 1, 4, 1))

    def f(t):
        return (F.interpolate(t, size=(4, 1), mode=mode) * pattern).sum()

    x = dl.tensor(ramp(1, 1, 6, 2))
    reverse = np.asarray(dl.grad(f, method="reverse")(x), dtype=float)
    for method in ("forward", "compiled", "symbolic", "numeric"):
        np.testing.assert_allclose(np.asarray(dl.grad(f, method=method)(x), dtype=float),
                                   reverse, rtol=1e-7 if method == "numeric" else 1e-12,
                                   atol=1e-9 if method == "numeric" else 1e-14, err_msg=method)


def test_compiled_grid_sample_with_reflection_follows_a_new_grid():
    def sample(image, grid):
        return F.grid_sample(image, grid, mode="bicubic", padding_mode="reflection",
                             align_corners=False)

    compiled = dl.compile(sample)
    image = dl.tensor(ramp(1, 2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the tracer's note that the grid's values are read)
        compiled(image, dl.tensor(GRID))
        other = dl.tensor(GRID[:, ::-1] * 0.7)
        np.testing.assert_allclose(compiled(image, other).numpy(), sample(image, other).numpy(),
                                   rtol=1e-13, atol=1e-15)


def test_onnx_export_refuses_the_gathers_clearly(tmp_path):
    pytest.importorskip("onnx", reason="onnx is not installed (pip install 'difflab[jit]')")
    import difflab.onnx as donnx

    class Resize(dl.nn.Module):
        def forward(self, t):
            return F.interpolate(t, size=(5, 3), mode="bicubic")

    with pytest.raises(donnx.ONNXExportError, match="no ONNX translation for 'index'"):
        donnx.export(Resize(), (dl.tensor(ramp(1, 1, 3, 4)),), tmp_path / "resize.onnx")


# ------------------------------------------------------------------- PyTorch, when installed


def test_live_against_pytorch_when_installed():
    """Every mode, both align_corners, sizes and factors up and down, float32 and float64,
    against torch itself (skipped without it; the stored values above always run)."""
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(0)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-6)):
        x = rng.standard_normal((2, 2, 5, 3)).astype(dtype)
        for mode, corners, aa in [("bicubic", False, False), ("bicubic", True, False),
                                  ("bilinear", False, True), ("bicubic", True, True),
                                  ("area", None, False), ("nearest-exact", None, False)]:
            for size in ((1, 1), (2, 2), (9, 4), (5, 3), (3, 7)):
                options = dict(size=size, mode=mode, align_corners=corners, antialias=aa)
                np.testing.assert_allclose(
                    F.interpolate(dl.tensor(x), **options).numpy(),
                    tf.interpolate(torch.tensor(x), **options).numpy(), rtol=tol, atol=tol,
                    err_msg=str(options))
        grid = rng.uniform(-3.0, 3.0, (2, 3, 4, 2)).astype(dtype)
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                for corners in (False, True):
                    options = dict(mode=mode, padding_mode=padding, align_corners=corners)
                    np.testing.assert_allclose(
                        F.grid_sample(dl.tensor(x), dl.tensor(grid), **options).numpy(),
                        tf.grid_sample(torch.tensor(x), torch.tensor(grid), **options).numpy(),
                        rtol=10 * tol, atol=10 * tol, err_msg=str(options))
