"""Linear algebra: matmul family, einsum, inv/det/solve, checked against NumPy."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from conftest import FLOAT_DTYPES, assert_close, cases

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


@pytest.fixture(params=["gemm", "matrixmultiply"])
def backend(request):
    """Runs a test with each GEMM library, restoring the previous one."""
    before = fg._core._get_gemm_backend()
    fg._core._set_gemm_backend(request.param)
    yield request.param
    fg._core._set_gemm_backend(before)


def check(got, want, **tol):
    """``assert_close`` that also handles empty results (compared by shape)."""
    want = np.asarray(want)
    if want.size == 0:
        assert tuple(got.shape) == want.shape
        assert got.numpy().dtype == want.dtype
    else:
        assert_close(got, want, **tol)


def rand(rng, shape, npdt):
    return rng.standard_normal(shape).astype(npdt)


# ---------------------------------------------------------------- matmul


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (40, 70, 90)])
def test_matmul_2d_every_layout_pair_matches_numpy(rng, backend, fdt, npdt, m, k, n):
    a, b = rand(rng, (m, k), npdt), rand(rng, (k, n), npdt)
    for la, ta, na in cases(a):
        for lb, tb, nb in cases(b):
            got = ta @ tb
            assert got.dtype == fdt
            assert_close(got, na @ nb, **TOL[npdt]), (la, lb)


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_batched_matmul_on_strided_inputs_matches_numpy(rng, backend, fdt, npdt):
    # 64 batches of 20x20: per-matrix work is small, so batches run in parallel.
    a, b = rand(rng, (64, 20, 20), npdt), rand(rng, (64, 20, 20), npdt)
    for _, ta, na in cases(a):
        for _, tb, nb in cases(b):
            assert_close(fg.matmul(ta, tb), np.matmul(na, nb), **TOL[npdt])


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((3,), (5, 3, 4)),
        ((5, 2, 3), (3,)),
        ((2, 3), (5, 3, 4)),
        ((2, 1, 2, 3), (5, 3, 4)),
        ((1, 5, 2, 3), (4, 1, 3, 2)),
        ((7, 1, 4, 6), (1, 3, 6, 5)),
        ((0, 3), (3, 4)),
        ((2, 0), (0, 3)),
        ((4, 0, 2, 3), (3, 5)),
    ],
)
@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_matmul_shape_rules_match_numpy(rng, sa, sb, fdt, npdt):
    a, b = rand(rng, sa, npdt), rand(rng, sb, npdt)
    got = fg.tensor(a).matmul(fg.tensor(b))
    check(got, np.matmul(a, b), **TOL[npdt])


def test_matmul_broadcast_batch_uses_stride_zero_without_copy(rng):
    a = rand(rng, (1, 3, 4), np.float64)
    b = rand(rng, (6, 4, 2), np.float64)
    ta = fg.tensor(a).expand(6, 3, 4)
    assert ta.stride()[0] == 0
    assert_close(ta @ fg.tensor(b), np.broadcast_to(a, (6, 3, 4)) @ b)


def test_matmul_of_sliced_with_step_views(rng):
    base = rand(rng, (12, 16), np.float64)
    ta = fg.tensor(base).as_strided((6, 5), (32, 3), 1)  # base[::2, 1::3]
    tb = fg.tensor(base).as_strided((6, 6), (3, 32), 0)  # base.T[::3, ::2]
    na, nb = base[::2, 1::3], base.T[::3, ::2]
    assert_close(ta.t() @ tb, na.T @ nb, rtol=1e-12)


@pytest.mark.parametrize("fdt,npdt", [(fg.int64, np.int64), (fg.int32, np.int32)])
@pytest.mark.parametrize(
    "sa,sb", [((3,), (3,)), ((4, 5), (5, 3)), ((2, 4, 5), (5,)), ((40, 50), (50, 60))]
)
def test_integer_matmul_is_exact(rng, fdt, npdt, sa, sb):
    a = rng.integers(-50, 50, sa).astype(npdt)
    b = rng.integers(-50, 50, sb).astype(npdt)
    got = fg.tensor(a) @ fg.tensor(b)
    assert got.dtype == fdt
    assert_close(got, np.matmul(a, b), rtol=0, atol=0)


def test_matmul_keeps_float32_sum_accuracy_against_float64(rng):
    a, b = rand(rng, (64, 256), np.float32), rand(rng, (256, 48), np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(fg.tensor(a) @ fg.tensor(b), ref.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_rmatmul_with_numpy_array_on_left(rng):
    a, b = rand(rng, (2, 3), np.float64), rand(rng, (3, 2), np.float64)
    assert_close(fg.Tensor.__rmatmul__(fg.tensor(b), a), a @ b)


def test_vector_matrix_product_drops_the_prepended_dim(rng):
    a, b = rand(rng, (3,), np.float64), rand(rng, (3, 4), np.float64)
    out = fg.tensor(a) @ fg.tensor(b)
    assert out.shape == (4,) and out.is_contiguous() and not out._is_view()
    assert_close(out, a @ b)


# ---------------------------------------------------------------- mm family


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_mm_bmm_mv_dot_on_layouts(rng, fdt, npdt):
    m, v = rand(rng, (4, 6), npdt), rand(rng, (6,), npdt)
    m2 = rand(rng, (6, 3), npdt)
    for _, tm, nm in cases(m):
        assert_close(tm.mm(fg.tensor(m2)), nm @ m2, **TOL[npdt])
        for _, tv, nv in cases(v):
            assert_close(fg.mv(tm, tv), nm @ nv, **TOL[npdt])
            assert_close(fg.dot(tv, tv), np.dot(nv, nv), **TOL[npdt])
    b1, b2 = rand(rng, (3, 4, 5), npdt), rand(rng, (3, 5, 2), npdt)
    for _, t1, n1 in cases(b1):
        for _, t2, n2 in cases(b2):
            assert_close(fg.bmm(t1, t2), n1 @ n2, **TOL[npdt])


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_outer_and_ger_match_numpy(rng, fdt, npdt):
    x, y = rand(rng, (4,), npdt), rand(rng, (3,), npdt)
    for _, tx, nx in cases(x):
        assert_close(fg.outer(tx, fg.tensor(y)), np.outer(nx, y), **TOL[npdt])
        assert_close(tx.ger(fg.tensor(y)), np.outer(nx, y), **TOL[npdt])


def test_outer_promotes_like_mul():
    got = fg.outer(fg.tensor([1, 2]), fg.tensor([0.5, 1.5], dtype=fg.float64))
    assert_close(got, np.outer([1, 2], [0.5, 1.5]))


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_addmm_matches_formula(rng, backend, fdt, npdt):
    inp, m1, m2 = rand(rng, (5,), npdt), rand(rng, (3, 4), npdt), rand(rng, (4, 5), npdt)
    for _, ti, ni in cases(rand(rng, (3, 5), npdt)):
        got = fg.addmm(ti, fg.tensor(m1), fg.tensor(m2), beta=0.5, alpha=2.0)
        assert_close(got, 0.5 * ni + 2.0 * (m1 @ m2), **TOL[npdt])
    # 1-D input broadcasts over rows; defaults beta = alpha = 1.
    got = fg.tensor(inp).addmm(fg.tensor(m1), fg.tensor(m2))
    assert_close(got, inp + m1 @ m2, **TOL[npdt])


def test_addmm_beta_zero_ignores_nan_input(rng):
    m1, m2 = rand(rng, (2, 3), np.float64), rand(rng, (3, 2), np.float64)
    inp = fg.full((2, 2), float("nan"), dtype=fg.float64)
    assert_close(fg.addmm(inp, fg.tensor(m1), fg.tensor(m2), beta=0), m1 @ m2)


def test_addmm_integer():
    a = np.array([[1, 2], [3, 4]], dtype=np.int64)
    got = fg.addmm(fg.tensor(a), fg.tensor(a), fg.tensor(a), beta=2, alpha=3)
    assert_close(got, 2 * a + 3 * (a @ a), rtol=0, atol=0)


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_trace_on_layouts(rng, fdt, npdt):
    for _, t, n in cases(rand(rng, (4, 6), npdt)):
        assert_close(t.trace(), np.trace(n), **TOL[npdt])


def test_trace_of_integers_is_int64():
    t = fg.tensor([[1, 2], [3, 4]], dtype=fg.int32)
    assert t.trace().dtype == fg.int64 and t.trace().item() == 5
    assert fg.tensor([[True, False], [True, True]]).trace().item() == 2


# ---------------------------------------------------------------- errors


def test_mm_shape_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"2x3 and 4x5"):
        fg.zeros(2, 3).mm(fg.zeros(4, 5))
    with pytest.raises(RuntimeError, match=r"2x3 and 4x5"):
        fg.zeros(2, 3) @ fg.zeros(4, 5)
    with pytest.raises(RuntimeError, match=r"1x3 and 4x5"):
        fg.zeros(3) @ fg.zeros(4, 5)
    with pytest.raises(RuntimeError, match=r"2x3x4 and 5x6"):
        fg.zeros(2, 3, 4) @ fg.zeros(5, 6)


def test_matmul_does_not_promote_dtypes():
    with pytest.raises(RuntimeError, match="float != double"):
        fg.zeros(2, 2) @ fg.zeros(2, 2, dtype=fg.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        fg.zeros(2, 2, 2) @ fg.zeros(2, 2, dtype=fg.int64)
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype"):
        fg.dot(fg.zeros(2), fg.zeros(2, dtype=fg.float64))


def test_bool_products_raise_runtime_error():
    b = fg.tensor([[True, False], [False, True]])
    v = b.select(0, 0)
    for f in (lambda: b @ b, lambda: b.mm(b), lambda: fg.dot(v, v), lambda: b.mv(v)):
        with pytest.raises(RuntimeError, match="Bool"):
            f()


def test_matmul_errors_for_rank_and_size():
    with pytest.raises(RuntimeError, match="at least 1D"):
        fg.tensor(1.0) @ fg.zeros(2)
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        fg.zeros(3).mm(fg.zeros(3, 3))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        fg.zeros(3, 3).mm(fg.zeros(3))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        fg.bmm(fg.zeros(3, 3), fg.zeros(1, 3, 3))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        fg.bmm(fg.zeros(1, 3, 3), fg.zeros(3, 3))
    with pytest.raises(RuntimeError, match=r"\[2, 3\] but got: \[3, 3\]"):
        fg.bmm(fg.zeros(2, 3, 3), fg.zeros(3, 3, 3))
    with pytest.raises(RuntimeError, match=r"mat \(2x3\), vec \(4\)"):
        fg.mv(fg.zeros(2, 3), fg.zeros(4))
    with pytest.raises(RuntimeError, match="vector"):
        fg.mv(fg.zeros(2, 3), fg.zeros(3, 1))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        fg.dot(fg.zeros(2), fg.zeros(3))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        fg.dot(fg.zeros(2, 2), fg.zeros(2, 2))
    with pytest.raises(RuntimeError, match="must match the size"):
        fg.zeros(2, 3, 4) @ fg.zeros(3, 4, 5)
    with pytest.raises(RuntimeError, match="Expected 1-D argument self"):
        fg.outer(fg.zeros(2, 2), fg.zeros(2))
    with pytest.raises(RuntimeError, match="trace: expected a matrix"):
        fg.zeros(2, 2, 2).trace()


def test_addmm_errors():
    with pytest.raises(RuntimeError, match="3x4 and 5x2"):
        fg.addmm(fg.zeros(3, 2), fg.zeros(3, 4), fg.zeros(5, 2))
    with pytest.raises(RuntimeError, match="expanded size"):
        fg.addmm(fg.zeros(3), fg.zeros(2, 2), fg.zeros(2, 2))
    with pytest.raises(RuntimeError, match="must not be a floating point"):
        i = fg.zeros(2, 2, dtype=fg.int64)
        fg.addmm(i, i, i, beta=0.5)
    with pytest.raises(RuntimeError, match="same dtype"):
        fg.addmm(fg.zeros(2, 2, dtype=fg.float64), fg.zeros(2, 2), fg.zeros(2, 2))
    with pytest.raises(TypeError):
        fg.addmm(fg.zeros(2, 2), fg.zeros(2, 2), fg.zeros(2, 2), alpha="x")


def test_non_tensor_operands_raise_type_error():
    with pytest.raises(TypeError):
        fg.zeros(2) @ 2
    with pytest.raises(TypeError):
        2 @ fg.zeros(2)
    with pytest.raises(TypeError, match="mat2"):
        fg.zeros(2, 2).mm([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(TypeError):
        fg.einsum("ii", [[1.0]])
    with pytest.raises(TypeError):
        fg.linalg.solve(fg.zeros(2, 2), 3)


# ---------------------------------------------------------------- einsum

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("bn,anm,bm->ba", [(3, 4), (2, 4, 5), (3, 5)]),
    ("i,i->", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("bik,bkj,bjl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 2)]),
    ("...i,...i", [(2, 3), (3,)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("a b , b c -> a c", [(2, 3), (3, 4)]),
    ("ijk,jl->il", [(2, 3, 4), (3, 5)]),
]


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum_matches_numpy(rng, eq, shapes, fdt, npdt):
    arrs = [rand(rng, s, npdt) for s in shapes]
    got = fg.einsum(eq, *[fg.tensor(a) for a in arrs])
    assert_close(got, np.einsum(eq.replace(" ", ""), *arrs), **TOL[npdt])


@pytest.mark.parametrize("eq,shapes", [e for e in EINSUM if len(e[1]) == 2])
def test_einsum_on_strided_operands(rng, eq, shapes):
    arrs = [rand(rng, s, np.float64) for s in shapes]
    for _, t0, n0 in cases(arrs[0]):
        for _, t1, n1 in cases(arrs[1]):
            got = fg.einsum(eq, [t0, t1])
            assert_close(got, np.einsum(eq.replace(" ", ""), n0, n1), rtol=1e-10, atol=1e-12)


def test_einsum_integers_exact(rng):
    a = rng.integers(-9, 9, (3, 4)).astype(np.int64)
    b = rng.integers(-9, 9, (4, 2)).astype(np.int64)
    assert_close(fg.einsum("ij,jk->ik", fg.tensor(a), fg.tensor(b)), a @ b, rtol=0, atol=0)
    assert_close(fg.einsum("ii", fg.tensor(a[:3, :3])), np.trace(a[:3, :3]), rtol=0, atol=0)


def test_einsum_sums_ellipsis_dims_missing_from_explicit_output(rng):
    a = rand(rng, (2, 3, 4), np.float64)
    assert_close(fg.einsum("...j->j", fg.tensor(a)), a.sum(axis=(0, 1)))


def test_einsum_broadcasts_size_one_dims(rng):
    a, b = rand(rng, (1, 4), np.float64), rand(rng, (3, 4), np.float64)
    assert_close(fg.einsum("ij,ij->ij", fg.tensor(a), fg.tensor(b)), a * b)


@pytest.mark.parametrize(
    "eq,shapes,pattern",
    [
        ("ij,jk->ik", [(2, 3)], "fewer operands"),
        ("ij->ij", [(2, 3), (3, 3)], "more operands"),
        ("ij->i", [(2, 3, 4)], "does not match the number of dimensions"),
        ("ii->i", [(2, 3)], "repeated for operand 0"),
        ("ij->ii", [(2, 2)], "appears more than once"),
        ("ij->k", [(2, 2)], "does not appear"),
        ("i1->i", [(2, 2)], "invalid subscript"),
        ("i.j->i", [(2, 2)], "ellipsis"),
        ("i,i->i", [(2,), (3,)], "broadcast"),
    ],
)
def test_einsum_errors(eq, shapes, pattern):
    with pytest.raises(RuntimeError, match=pattern):
        fg.einsum(eq, *[fg.zeros(*s) for s in shapes])


def test_einsum_dtype_mismatch_is_runtime_error():
    with pytest.raises(RuntimeError, match="same dtype"):
        fg.einsum("i,i", fg.zeros(2), fg.zeros(2, dtype=fg.float64))


# ---------------------------------------------------------------- inv, det, solve


def well_conditioned(rng, shape, npdt):
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(npdt)


PERMUTING = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [3.0, 1.0, 2.0]])


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_inv_matches_numpy_on_layouts_and_batches(rng, fdt, npdt):
    tol = dict(rtol=1e-4, atol=1e-5) if npdt is np.float32 else dict(rtol=1e-10, atol=1e-12)
    for shape in [(4, 4), (3, 5, 5), (2, 2, 3, 3)]:
        a = well_conditioned(rng, shape, npdt)
        for label, t, n in cases(a):
            if label == "expanded":
                continue  # every matrix repeats its first row: singular
            assert_close(fg.linalg.inv(t), np.linalg.inv(n), **tol)
    p = PERMUTING.astype(npdt)
    assert_close(fg.inverse(fg.tensor(p)), np.linalg.inv(p), **tol)


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
def test_det_matches_numpy(rng, fdt, npdt):
    tol = dict(rtol=1e-4, atol=1e-4) if npdt is np.float32 else dict(rtol=1e-10, atol=1e-10)
    for shape in [(1, 1), (4, 4), (3, 5, 5)]:
        a = rand(rng, shape, npdt)
        for _, t, n in cases(a):
            assert_close(fg.linalg.det(t), np.linalg.det(n), **tol)
    p = PERMUTING.astype(npdt)
    assert_close(fg.det(fg.tensor(p)), np.linalg.det(p), **tol)
    # Row swaps flip the sign: a permutation matrix of one swap has det -1.
    assert fg.det(fg.tensor([[0.0, 1.0], [1.0, 0.0]])).item() == -1.0


def test_det_of_singular_is_zero_and_inv_raises():
    s = fg.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=fg.float64)
    assert fg.linalg.det(s).item() == 0.0
    with pytest.raises(RuntimeError, match="singular"):
        fg.linalg.inv(s)
    z = fg.tensor([[1.0, 2.0], [1.0, 2.0]])
    with pytest.raises(RuntimeError, match="The diagonal element 2 is zero"):
        fg.linalg.inv(z)
    batch = fg.tensor(np.stack([np.eye(2), [[1.0, 2.0], [1.0, 2.0]]]))
    with pytest.raises(RuntimeError, match=r"Batch element 1"):
        fg.linalg.inv(batch)
    with pytest.raises(RuntimeError, match="singular"):
        fg.linalg.solve(z, fg.ones(2))


def test_det_and_inv_of_empty_matrix():
    assert fg.linalg.det(fg.zeros(0, 0)).item() == 1.0
    assert fg.linalg.inv(fg.zeros(0, 0)).shape == (0, 0)


@pytest.mark.parametrize("fdt,npdt", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 3), (3,)),
        ((3, 3), (3, 2)),
        ((4, 3, 3), (4, 3)),
        ((4, 3, 3), (3,)),
        ((2, 1, 3, 3), (4, 3, 2)),
        ((3, 3), (5, 3, 1)),
    ],
)
def test_solve_matches_numpy_with_broadcasting(rng, fdt, npdt, sa, sb):
    a = well_conditioned(rng, sa, npdt)
    b = rand(rng, sb, npdt)
    got = fg.linalg.solve(fg.tensor(a), fg.tensor(b))
    tol = dict(rtol=1e-4, atol=1e-5) if npdt is np.float32 else dict(rtol=1e-10, atol=1e-12)
    if len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1]):
        want = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        want = np.linalg.solve(a, b)
    assert_close(got, want, **tol)


def test_solve_on_strided_inputs_needs_pivoting(rng):
    p = PERMUTING
    b = rand(rng, (3, 2), np.float64)
    for _, tb, nb in cases(b):
        got = fg.linalg.solve(fg.tensor(p).t(), tb)
        assert_close(got, np.linalg.solve(p.T, nb), rtol=1e-10, atol=1e-12)


def test_linalg_errors():
    with pytest.raises(RuntimeError, match="square"):
        fg.linalg.inv(fg.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fg.linalg.det(fg.zeros(3))
    with pytest.raises(RuntimeError, match="floating point"):
        fg.linalg.inv(fg.zeros(2, 2, dtype=fg.int64))
    with pytest.raises(RuntimeError, match="same dtype"):
        fg.linalg.solve(fg.ones(2, 2), fg.ones(2, dtype=fg.float64))
    with pytest.raises(RuntimeError, match=r"3x3 and 4x2"):
        fg.linalg.solve(fg.ones(3, 3), fg.ones(4, 2))
    with pytest.raises(RuntimeError, match="must match the size"):
        fg.linalg.solve(fg.ones(2, 3, 3), fg.ones(4, 3, 1))


def test_linalg_namespace_and_aliases():
    a = fg.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert fg.linalg.matmul(a, a).tolist() == (a @ a).tolist()
    assert fg.inverse(a).tolist() == fg.linalg.inv(a).tolist()
    assert fg.det(a).item() == pytest.approx(5.0)
    assert a.inverse().tolist() == fg.linalg.inv(a).tolist()
