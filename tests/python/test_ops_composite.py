"""The composite functions of torch.functional (atleast_*d, block_diag,
cartesian_prod, cdist, chain_matmul, meshgrid, tensordot, unravel_index).

Values against NumPy (``np.atleast_*d``, ``np.meshgrid``, ``np.tensordot``,
``np.unravel_index``, ``np.linalg.multi_dot``, ``itertools.product``, block
matrices and distances built by hand); gradients, second-order gradients
and forward-mode tangents against float64 central differences
(``check_grad``), also where a distance or a coordinate difference is zero
(a central difference of a norm at its kink is 0, the value torch's
gradient takes there); ``vmap`` against a Python loop; torch's error types
and messages.
"""

from __future__ import annotations

import itertools
import math
import warnings

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd.func import vmap
from gradcheck_util import check_grad

MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]
P_VALUES = [0, 0.5, 1, 1.5, 2, 3.5, math.inf]


def t64(a):
    return fg.tensor(np.asarray(a, dtype=np.float64))


def assert_values(got, want, rtol=1e-12, atol=1e-12):
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape, f"shape {tuple(got.shape)} != {want.shape}"
    np.testing.assert_allclose(to_np(got), want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- atleast_1d / 2d / 3d

ATLEAST = {"atleast_1d": np.atleast_1d, "atleast_2d": np.atleast_2d, "atleast_3d": np.atleast_3d}
SHAPES = [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4), (0,), (2, 0)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(ATLEAST))
def test_atleast_nd_gives_numpys_shape_as_a_view(name, shape, rng):
    a = rng.standard_normal(shape)
    t = fg.tensor(a)
    out = getattr(fg, name)(t)
    want = ATLEAST[name](a)
    assert isinstance(out, fg.Tensor)
    assert_values(out, want)
    if out.dim() == t.dim():
        assert out is t
    elif t.numel():
        assert out.data_ptr() == t.data_ptr()  # a view of the input


@pytest.mark.parametrize("name", sorted(ATLEAST))
def test_atleast_nd_of_several_tensors_or_a_sequence_is_a_tuple(name, rng):
    arrays = [rng.standard_normal(s) for s in [(), (2,), (2, 3)]]
    tensors = [fg.tensor(a) for a in arrays]
    want = ATLEAST[name](*arrays)
    fn = getattr(fg, name)
    for got in (fn(*tensors), fn(tensors), fn(tuple(tensors))):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_values(g, w)
    one = fn([tensors[0]])
    assert isinstance(one, tuple) and len(one) == 1
    assert_values(one[0], ATLEAST[name](arrays[0]))
    assert fn() == () and fn([]) == ()


@pytest.mark.parametrize("name", sorted(ATLEAST))
def test_atleast_nd_rejects_non_tensors(name):
    message = rf"{name}\(\) received an invalid combination of arguments - got \(float\)"
    with pytest.raises(TypeError, match=message):
        getattr(fg, name)(1.0)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        getattr(fg, name)([fg.ones(2), 1])
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        getattr(fg, name)(fg.ones(2), 1)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_atleast_3d_gradients_match_finite_differences(shape, rng):
    check_grad(lambda x: fg.atleast_3d(x * x) * fg.atleast_3d(x).sin(), [rng.standard_normal(shape)])


# ---------------------------------------------------------------- block_diag


def np_block_diag(*arrays):
    """The block matrix, placed by hand in a matrix of zeros."""
    blocks = [np.asarray(a).reshape(1, 1) if np.ndim(a) == 0 else np.atleast_2d(a) for a in arrays]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[0], c : c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


@pytest.mark.parametrize(
    "shapes",
    [[(2, 2), (3,), (), (1, 3)], [(2, 3)], [(0, 2), (2, 2), (2, 0), (0,)], [(), ()], [(3,), (0, 0), (2, 1)]],
)
def test_block_diag_matches_a_hand_built_block_matrix(shapes, rng):
    arrays = [rng.standard_normal(s) for s in shapes]
    got = fg.block_diag(*[fg.tensor(a) for a in arrays])
    assert_values(got, np_block_diag(*arrays))
    assert got.dtype == fg.float64


def test_block_diag_of_strided_inputs_matches_numpy(rng):
    a = rng.standard_normal((3, 4))
    t = fg.tensor(np.ascontiguousarray(a.T)).T  # a transposed view
    v = fg.tensor(a)[:, ::2]  # a step slice
    assert_values(fg.block_diag(t, v), np_block_diag(a, a[:, ::2]))


DTYPE_SETS = [
    [fg.int64, fg.float32, fg.int8],
    [fg.int32, fg.float16],
    [fg.bool, fg.uint8],
    [fg.bool, fg.bool],
    [fg.int8, fg.uint8],
    [fg.float16, fg.bfloat16],
    [fg.int32, fg.complex64],
    [fg.float64, fg.float32],
]


@pytest.mark.parametrize("dtypes", DTYPE_SETS, ids=lambda ds: "-".join(str(d)[10:] for d in ds))
def test_block_diag_promotes_dimensioned_inputs_like_promote_types(dtypes):
    blocks = [fg.ones(2, dtype=d) for d in dtypes]
    want = dtypes[0]
    for d in dtypes[1:]:
        want = fg.promote_types(want, d)
    got = fg.block_diag(*blocks)
    assert got.dtype == want
    assert_values(got.to(fg.float64), np_block_diag(*[np.ones(2)] * len(dtypes)))


@pytest.mark.parametrize(
    ("shaped", "scalar"),
    [(fg.float32, fg.float64), (fg.int32, fg.float64), (fg.int32, fg.int64), (fg.uint8, fg.int8),
     (fg.bool, fg.int16), (fg.float64, fg.complex64), (fg.int16, fg.bool)],
)  # fmt: skip
def test_block_diag_promotes_a_0_dim_input_like_result_type(shaped, scalar):
    # A 0-dim block only raises the category of the dtype, as in arithmetic.
    a, s = fg.ones(2, 2, dtype=shaped), fg.ones((), dtype=scalar)
    assert fg.block_diag(a, s).dtype == fg.result_type(a, s)
    assert fg.block_diag(s, a).dtype == fg.result_type(a, s)


def test_block_diag_of_no_blocks_is_an_empty_row_of_the_default_dtype():
    out = fg.block_diag()
    assert tuple(out.shape) == (1, 0) and out.dtype == fg.get_default_dtype()


def test_block_diag_errors():
    with pytest.raises(RuntimeError, match="must have 2 or fewer dimensions. Input 1 has 3 dimensions"):
        fg.block_diag(fg.ones(2), fg.ones(1, 2, 2))
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        fg.block_diag(fg.ones(2), 3)
    with pytest.raises(TypeError, match="expected Tensor as element 0 in argument 0, but got list"):
        fg.block_diag([fg.ones(2)])


def test_block_diag_gradients_match_finite_differences(rng):
    c = t64(rng.standard_normal((2, 1)))
    check_grad(lambda x, y: fg.block_diag(x * y[0], c, y.tanh(), x[0, 0]), [rng.standard_normal((2, 3)),
                                                                           rng.standard_normal(4)])


# ---------------------------------------------------------------- cartesian_prod


@pytest.mark.parametrize("sizes", [(2, 3), (3, 1, 2), (4,), (2, 0), (1, 1, 1, 2)])
def test_cartesian_prod_matches_itertools_product(sizes, rng):
    arrays = [rng.integers(-9, 9, n) for n in sizes]
    got = fg.cartesian_prod(*[fg.tensor(a) for a in arrays])
    rows = list(itertools.product(*arrays))
    want = np.array(rows, dtype=np.int64).reshape(len(rows), len(arrays))
    if len(arrays) == 1:
        want = want[:, 0]  # one input comes back as it is
    np.testing.assert_array_equal(to_np(got), want)
    assert got.dtype == fg.int64


def test_cartesian_prod_of_one_vector_is_that_vector():
    t = fg.arange(3.0)
    assert fg.cartesian_prod(t) is t


def test_cartesian_prod_errors():
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[\]"):
        fg.cartesian_prod(fg.ones(2), fg.tensor(1.0))
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        fg.cartesian_prod(fg.ones(2, 2))
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        fg.cartesian_prod(fg.ones(2), fg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        fg.cartesian_prod()
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        fg.cartesian_prod(fg.ones(2), 1)


def test_cartesian_prod_gradients_match_finite_differences(rng):
    arrays = [rng.standard_normal(2), rng.standard_normal(3)]
    check_grad(lambda x, y: fg.cartesian_prod(x * x, y, x.sin()), arrays)


# ---------------------------------------------------------------- meshgrid


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize(
    "shapes", [[(2,), (3,)], [(2,), (3,), (4,)], [(3,)], [(), (3,)], [(2,), (0,)], [(4,), (), (2,)]]
)
def test_meshgrid_matches_numpy(indexing, shapes, rng):
    arrays = [rng.standard_normal(s) for s in shapes]
    tensors = [fg.tensor(a) for a in arrays]
    want = np.meshgrid(*arrays, indexing=indexing)
    for got in (fg.meshgrid(*tensors, indexing=indexing), fg.meshgrid(tensors, indexing=indexing)):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w, t in zip(got, want, tensors, strict=True):
            assert_values(g, w)
            if t.numel():
                assert g.data_ptr() == t.data_ptr()  # an expanded view of the input


def test_meshgrid_without_indexing_warns_and_indexes_as_ij(rng):
    a, b = fg.tensor(rng.standard_normal(2)), fg.tensor(rng.standard_normal(3))
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        got = fg.meshgrid(a, b)
    for g, w in zip(got, fg.meshgrid(a, b, indexing="ij"), strict=True):
        assert fg.equal(g, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fg.meshgrid(a, b, indexing="xy")


def test_meshgrid_errors():
    a = fg.ones(2)
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        fg.meshgrid(indexing="ij")
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        fg.meshgrid(a, fg.tensor([1, 2]), indexing="ij")
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij", but received: foo'):
        fg.meshgrid(a, a, indexing="foo")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        fg.meshgrid(a, fg.ones(2, 2), indexing="ij")
    with pytest.raises(TypeError, match="argument 'indexing' must be str, not int"):
        fg.meshgrid(a, a, indexing=1)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        fg.meshgrid(a, 3, indexing="ij")


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_gradients_match_finite_differences(indexing, rng):
    def f(x, y):
        gx, gy = fg.meshgrid(x.sin(), y * y, indexing=indexing)
        return gx * gy + gx

    check_grad(f, [rng.standard_normal(3), rng.standard_normal(2)])


# ---------------------------------------------------------------- cdist


def np_cdist(a, b, p):
    """Distances by the formula: the norm of every difference of rows."""
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(d.dtype)
    if p == math.inf:
        return d.max(-1, initial=0.0)
    return (d**p).sum(-1) ** (1 / p)


CDIST_SHAPES = [((3, 4), (5, 4)), ((2, 1, 3, 4), (5, 2, 4)), ((30, 3), (4, 3)), ((2, 3, 2), (2, 28, 2))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("p", P_VALUES)
@pytest.mark.parametrize("shapes", CDIST_SHAPES)
def test_cdist_matches_the_distance_formula(shapes, p, mode, rng):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    got = fg.cdist(fg.tensor(a), fg.tensor(b), p=p, compute_mode=mode)
    assert got.dtype == fg.float64
    # The matrix-product form of p=2 loses digits to cancellation.
    assert_values(got, np_cdist(a, b, p), rtol=1e-10, atol=1e-10 if p == 2 else 1e-12)


@pytest.mark.parametrize("p", P_VALUES)
def test_cdist_in_float32_matches_the_formula(p, rng):
    a, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((2, 5, 3)).astype(np.float32)
    got = fg.cdist(fg.tensor(a), fg.tensor(b), p=p)
    assert got.dtype == fg.float32
    assert_values(got, np_cdist(a.astype(np.float64), b.astype(np.float64), p), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("p", P_VALUES)
@pytest.mark.parametrize(
    "shapes", [((0, 4), (5, 4)), ((3, 4), (2, 0, 4)), ((3, 0), (5, 0)), ((30, 0), (2, 0))]
)
def test_cdist_of_empty_inputs(shapes, p, mode):
    a, b = np.ones(shapes[0]), np.full(shapes[1], 2.0)
    got = fg.cdist(fg.tensor(a), fg.tensor(b), p=p, compute_mode=mode)
    assert_values(got, np_cdist(a, b, p))


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3.5, math.inf])
def test_cdist_gradients_match_finite_differences(p, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 2, 4))
    check_grad(lambda x, y: fg.cdist(x, y, p=p), [a, b], second_order=p != 0)


def test_cdist_gradients_through_the_matrix_product_match_finite_differences(rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4))
    check_grad(lambda x, y: fg.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), [a, b], atol=1e-5)


def coincident_points(rng):
    """Rows of ``b`` equal to rows of ``a`` (zero distances), and rows sharing
    some of their coordinates (zero coordinate differences)."""
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    b[0] = a[1]
    b[3] = a[2]
    b[1, :2] = a[0, :2]
    b[2, 1] = a[3, 1]
    return a, b


@pytest.mark.parametrize(
    ("p", "mode"),
    [(p, "donot_use_mm_for_euclid_dist") for p in [0.5, 1, 1.5, 2, 3.5, math.inf]]
    + [(2, "use_mm_for_euclid_dist")],
)
def test_cdist_gradient_where_a_distance_or_a_coordinate_difference_is_zero(p, mode, rng):
    # Central differences of a norm at its kink are 0, the value torch's
    # gradient takes there. (Only first order: there is no second derivative.)
    a, b = coincident_points(rng)

    def f(x, y):
        return fg.cdist(x, y, p=p, compute_mode=mode)

    # For p < 1 a central difference along a random direction, which moves
    # a zero coordinate difference too, is off by O(eps**p): there the
    # tangents are checked against the reverse mode (itself checked above).
    # The matrix-product form loses about 1e-16 to cancellation in squared
    # distances near 0, which a step of 1e-6 (squares of 1e-12) would see.
    eps = 1e-4 if mode == "use_mm_for_euclid_dist" else 1e-6
    check_grad(f, [a, b], second_order=False, forward=p >= 1, eps=eps)
    x, y = fg.tensor(a, requires_grad=True), fg.tensor(b, requires_grad=True)
    gx, gy = fg.autograd.grad(f(x, y)[1, 0], (x, y))
    assert not to_np(gx).any() and not to_np(gy).any()
    tx, ty = t64(rng.standard_normal(a.shape)), t64(rng.standard_normal(b.shape))
    _, tangent = fg.func.jvp(f, (t64(a), t64(b)), (tx, ty))
    v = t64(rng.standard_normal((4, 5)))
    vx, vy = fg.autograd.grad(f(x, y), (x, y), v)
    reverse = float((vx * tx).sum() + (vy * ty).sum())
    np.testing.assert_allclose(float((tangent * v).sum()), reverse, rtol=1e-12)


@pytest.mark.parametrize("p", [0, 1, 1.5, 2, math.inf])
def test_vmap_of_cdist_matches_a_loop(p, rng):
    a, b = fg.tensor(rng.standard_normal((4, 3, 2))), fg.tensor(rng.standard_normal((4, 5, 2)))
    got = vmap(lambda x, y: fg.cdist(x, y, p=p))(a, b)
    assert_values(got, np.stack([to_np(fg.cdist(a[i], b[i], p=p)) for i in range(4)]))
    got = vmap(lambda x: fg.cdist(x, b[0], p=p), in_dims=1)(a)
    assert_values(got, np.stack([to_np(fg.cdist(a[:, j], b[0], p=p)) for j in range(3)]))


A, B = np.ones((3, 2)), np.ones((2, 2))
CDIST_ERRORS = [
    ((A, B), {"compute_mode": "foo"}, ValueError, "foo is not a valid value for compute_mode"),
    ((np.ones(2), B), {}, RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D"),
    ((A, np.ones(2)), {}, RuntimeError, "cdist only supports at least 2D tensors, X2 got: 1D"),
    ((A, np.ones((2, 3))), {}, RuntimeError, "X1 and X2 must have the same number of columns. X1: 2 X2: 3"),
    ((A.astype(np.int64), B), {}, RuntimeError, "cdist only supports floating-point dtypes, X1 got: Long"),
    ((A, B.astype(np.complex64)), {}, RuntimeError,
     "cdist only supports floating-point dtypes, X2 got: ComplexFloat"),
    ((A, B), {"p": -1.0}, RuntimeError, "cdist only supports non-negative p values"),
    ((A, B), {"p": math.nan}, RuntimeError, "cdist only supports non-negative p values"),
    ((np.ones((2, 3, 2)), np.ones((3, 2, 2))), {}, RuntimeError, "must match the size of tensor b"),
    ((A, B.astype(np.float32)), {}, RuntimeError, "expected scalar type Double but found Float"),
    ((A, B), {"p": "a"}, TypeError, "argument 'p' \\(position 3\\) must be float, not str"),
]


@pytest.mark.parametrize(("arrays", "kwargs", "error", "message"), CDIST_ERRORS)
def test_cdist_errors(arrays, kwargs, error, message):
    with pytest.raises(error, match=message):
        fg.cdist(*[fg.tensor(a) for a in arrays], **kwargs)


def test_cdist_rejects_non_tensors():
    with pytest.raises(TypeError, match="argument 'x2' \\(position 2\\) must be Tensor, not int"):
        fg.cdist(fg.ones(2, 2), 1)


# ---------------------------------------------------------------- chain_matmul


def chain(*matrices, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fg.chain_matmul(*matrices, **kwargs)


@pytest.mark.parametrize(
    "shapes",
    [[(2, 3), (3, 4)], [(2, 3), (3, 40), (40, 5)], [(5, 1), (1, 6), (6, 2), (2, 7), (7, 3)],
     [(2, 0), (0, 3), (3, 4)], [(30, 2), (2, 30), (30, 2), (2, 1)]],
)  # fmt: skip
def test_chain_matmul_matches_multi_dot(shapes, rng):
    arrays = [rng.standard_normal(s) for s in shapes]
    got = chain(*[fg.tensor(a) for a in arrays])
    assert_values(got, np.linalg.multi_dot(arrays), rtol=1e-10, atol=1e-10)


def test_chain_matmul_of_integers_matches_multi_dot(rng):
    arrays = [rng.integers(-5, 5, s) for s in [(2, 3), (3, 4), (4, 2)]]
    got = chain(*[fg.tensor(a) for a in arrays])
    assert got.dtype == fg.int64
    np.testing.assert_array_equal(to_np(got), np.linalg.multi_dot(arrays))


def test_chain_matmul_of_one_matrix_is_a_copy(rng):
    t = fg.tensor(rng.standard_normal((2, 3)))
    got = chain(t)
    assert fg.equal(got, t) and got.data_ptr() != t.data_ptr()


def test_chain_matmul_warns_that_it_is_deprecated():
    a, b = fg.ones(2, 3), fg.ones(3, 2)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated .* Use torch.linalg.multi_dot instead"):
        fg.chain_matmul(a, b)


def test_chain_matmul_writes_into_out(rng):
    arrays = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)]]
    out = fg.empty(2, 2, dtype=fg.float64)
    got = chain(*[fg.tensor(a) for a in arrays], out=out)
    assert got is out
    assert_values(out, np.linalg.multi_dot(arrays), rtol=1e-12)


def test_chain_matmul_errors():
    a = fg.ones(2, 3)
    with pytest.raises(RuntimeError, match="chain_matmul\\(\\): Expected one or more matrices"):
        chain()
    with pytest.raises(RuntimeError, match="Tensor dimension is 1, expected 2 instead."):
        chain(a, fg.ones(3))
    with pytest.raises(RuntimeError, match=r"tensors 0 and 1 with shapes \[2, 3\] and \[2, 3\] cannot be"):
        chain(a, a)
    with pytest.raises(RuntimeError, match="the same dtype but tensor 0 is float and tensor 2 double"):
        chain(a, fg.ones(3, 3), fg.ones(3, 2, dtype=fg.float64))
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        chain(a, 1)


def test_chain_matmul_gradients_match_finite_differences(rng):
    arrays = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 1)]]
    check_grad(lambda x, y, z: chain(x, y.tanh(), z, z.T), arrays)


# ---------------------------------------------------------------- tensordot

TENSORDOT_DIMS = [
    2, 1, 0, ([1, 2], [0, 1]), [[1, 2], [0, 1]], ([2, 1], [1, 0]), ([-2], [0]), ([0], [2]), ([], []),
]  # fmt: skip


@pytest.mark.parametrize("dims", TENSORDOT_DIMS, ids=str)
def test_tensordot_matches_numpy(dims, rng):
    a, b = rng.standard_normal((2, 4, 4)), rng.standard_normal((4, 4, 2))
    got = fg.tensordot(fg.tensor(a), fg.tensor(b), dims=dims)
    assert_values(got, np.tensordot(a, b, axes=dims), rtol=1e-12)


@pytest.mark.parametrize(
    ("dims", "axes"),
    [(np.array(2), 2), (np.array([[1, 2], [0, 1]]), ([1, 2], [0, 1])), (np.array([[2], [1]]), ([2], [1])),
     (np.array(2.0), 2), (np.array([2]), 2)],
    ids=["0-dim", "2x2", "2x1", "float", "one-element"],
)  # fmt: skip
def test_tensordot_reads_tensor_dims_like_torch(dims, axes, rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 2))
    got = fg.tensordot(fg.tensor(a), fg.tensor(b), dims=fg.tensor(dims))
    assert_values(got, np.tensordot(a, b, axes=axes), rtol=1e-12)


def test_tensordot_broadcasts_contracted_dimensions_of_size_1(rng):
    a, b = rng.standard_normal((2, 1, 3)), rng.standard_normal((4, 5, 3))
    got = fg.tensordot(fg.tensor(a), fg.tensor(b), dims=([1, 2], [0, 2]))
    want = np.tensordot(np.broadcast_to(a, (2, 4, 3)), b, axes=([1, 2], [0, 2]))
    assert_values(got, want, rtol=1e-12)
    got = fg.tensordot(fg.tensor(b), fg.tensor(a), dims=([0], [1]))
    assert_values(got, np.tensordot(b, np.broadcast_to(a, (2, 4, 3)), axes=([0], [1])), rtol=1e-12)


def test_tensordot_of_integers_and_scalars_matches_numpy(rng):
    a, b = rng.integers(-5, 5, (2, 3)), rng.integers(-5, 5, (3, 4))
    got = fg.tensordot(fg.tensor(a), fg.tensor(b), dims=1)
    assert got.dtype == fg.int64
    np.testing.assert_array_equal(to_np(got), np.tensordot(a, b, axes=1))
    assert_values(fg.tensordot(t64(2.5), t64(-3.0), dims=0), np.tensordot(2.5, -3.0, axes=0))
    assert_values(fg.tensordot(fg.ones(2, 0), fg.ones(0, 3), dims=1), np.zeros((2, 3)))


def test_tensordot_writes_into_out(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out = fg.empty(2, 4, dtype=fg.float64)
    assert fg.tensordot(fg.tensor(a), fg.tensor(b), dims=1, out=out) is out
    assert_values(out, a @ b, rtol=1e-12)


TENSORDOT_ERRORS = [
    ({"dims": -1}, RuntimeError, "tensordot expects dims >= 0, but got dims=-1"),
    ({"dims": 4}, RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=4"),
    ({"dims": 1}, RuntimeError,
     "contracted dimensions need to match, but first has size 4 in dim -1 and second has size 3 in dim 0"),
    ({"dims": ([1, 2], [0])}, RuntimeError, "both dimension lists should have same length"),
    ({"dims": ([5], [0])}, IndexError, "Dimension out of range"),
    ({"dims": ([1, -2], [0, 0])}, RuntimeError, "dim 1 appears multiple times in the list of dims"),
    ({"dims": 2.0}, RuntimeError, "tensordot expects dims to be int or tuple"),
    ({"dims": None}, RuntimeError, "tensordot expects dims to be int or tuple"),
    ({"dims": (1, 0)}, TypeError, "argument 'dims_self' \\(position 3\\) must be tuple of ints, not int"),
    ({"dims": ([1], 0)}, TypeError, "argument 'dims_other' \\(position 4\\) must be tuple of ints, not int"),
    ({"dims": ([1, 2],)}, ValueError, "not enough values to unpack"),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "error", "message"), TENSORDOT_ERRORS)
def test_tensordot_errors(kwargs, error, message):
    a, b = fg.ones(2, 3, 4), fg.ones(3, 4, 5)
    with pytest.raises(error, match=message):
        fg.tensordot(a, b, **kwargs)


def test_tensordot_refuses_mixed_dtypes_and_bad_tensor_dims():
    a, b = fg.ones(2, 3, 4), fg.ones(3, 4, 5)
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        fg.tensordot(a, b.to(fg.float64))
    with pytest.raises(AssertionError, match="dims tensor must have size 2 in first dimension, got 3"):
        fg.tensordot(a, b, dims=fg.tensor([1, 2, 3]))


@pytest.mark.parametrize("dims", [1, ([0, 2], [2, 0])], ids=str)
def test_tensordot_gradients_match_finite_differences(dims, rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 2))
    check_grad(lambda x, y: fg.tensordot(x * x, y.sin(), dims=dims), [a, b])


def test_vmap_of_tensordot_matches_a_loop(rng):
    a, b = fg.tensor(rng.standard_normal((5, 2, 3, 4))), fg.tensor(rng.standard_normal((5, 4, 3)))
    for dims in (1, ([1, 2], [1, 0]), 0):
        got = vmap(lambda x, y, d=dims: fg.tensordot(x, y, dims=d))(a, b)
        assert_values(got, np.stack([to_np(fg.tensordot(a[i], b[i], dims=dims)) for i in range(5)]))
    c = fg.tensor(rng.standard_normal((4, 6, 3)))
    got = vmap(lambda y: fg.tensordot(a[0], y, dims=1), in_dims=1)(c)
    assert_values(got, np.stack([to_np(fg.tensordot(a[0], c[:, k], dims=1)) for k in range(6)]))


# ---------------------------------------------------------------- unravel_index


@pytest.mark.parametrize("shape", [(3, 2), (4,), (2, 3, 4), (1, 5, 1)])
@pytest.mark.parametrize("index_shape", [(), (7,), (2, 3)])
def test_unravel_index_matches_numpy(shape, index_shape, rng):
    n = math.prod(shape)
    idx = rng.integers(0, n, index_shape)
    for form in (shape, list(shape), fg.Size(shape)):
        got = fg.unravel_index(fg.tensor(idx), form)
        want = np.unravel_index(idx, shape)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == fg.int64
            assert tuple(g.shape) == np.shape(w)
            np.testing.assert_array_equal(to_np(g), w)
    if len(shape) == 1:
        (got,) = fg.unravel_index(fg.tensor(idx), shape[0])
        np.testing.assert_array_equal(to_np(got), idx)


@pytest.mark.parametrize("dtype", [fg.int32, fg.int16, fg.int8, fg.uint8])
def test_unravel_index_of_other_integer_dtypes_gives_int64(dtype, rng):
    idx = rng.integers(0, 6, 5)
    got = fg.unravel_index(fg.tensor(idx, dtype=dtype), (2, 3))
    for g, w in zip(got, np.unravel_index(idx, (2, 3)), strict=True):
        assert g.dtype == fg.int64
        np.testing.assert_array_equal(to_np(g), w)


def test_unravel_index_wraps_out_of_range_and_negative_indices_as_torch_does(rng):
    # torch takes each coordinate modulo its size (floor division), which is
    # unravelling the index modulo the number of elements.
    shape = (3, 2, 4)
    idx = rng.integers(-60, 60, 20)
    got = fg.unravel_index(fg.tensor(idx), shape)
    for g, w in zip(got, np.unravel_index(np.mod(idx, math.prod(shape)), shape), strict=True):
        np.testing.assert_array_equal(to_np(g), w)


def test_unravel_index_with_zero_sizes_or_no_dimensions():
    got = fg.unravel_index(fg.tensor([], dtype=fg.int64), (2, 0, 3))
    assert len(got) == 3 and all(tuple(g.shape) == (0,) and g.dtype == fg.int64 for g in got)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fg.unravel_index(fg.tensor([1]), (2, 0, 3))
    assert fg.unravel_index(fg.tensor([1, 2]), ()) == ()


UNRAVEL_ERRORS = [
    (fg.tensor([1]), (3, -2), ValueError, r"'shape' cannot have negative values, but got \(3, -2\)"),
    (fg.tensor([1.0]), (3, 2), TypeError, "to be integer dtype, but got ferrograd.float32"),
    (fg.tensor([True]), (3, 2), TypeError, "to be integer dtype, but got ferrograd.bool"),
    (fg.tensor([1]), (3.0, 2), TypeError, "'shape' sequence to only contain ints, but got <class 'float'>"),
    (fg.tensor([1]), "ab", TypeError, "'shape' sequence to only contain ints, but got <class 'str'>"),
    (fg.tensor([1]), 2.5, TypeError, "'shape' to be int or sequence of ints, but got <class 'float'>"),
    (fg.tensor([1]), (2**64, 1), ValueError, "Overflow when unpacking long long"),
    (fg.tensor([1]), (2, 2**62, 4), ValueError, "Overflow when unpacking long long"),
    ([1], (3, 2), TypeError, "argument 'indices' \\(position 1\\) must be Tensor, not list"),
]


@pytest.mark.parametrize(("indices", "shape", "error", "message"), UNRAVEL_ERRORS)
def test_unravel_index_errors(indices, shape, error, message):
    with pytest.raises(error, match=message):
        fg.unravel_index(indices, shape)
