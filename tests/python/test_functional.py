"""autograd.functional: jacobian, hessian, vjp, jvp, vhp, hvp.

Oracles: closed-form Jacobians and Hessians computed with NumPy (linear
maps, quadratic forms, elementwise functions, tanh layers, products of
tuple inputs); float64 central finite differences for nonlinear functions
of several inputs and outputs; and the functions checked against each
other (jacobian rows = vjp with basis vectors, columns = jvp with basis
vectors, hessian @ v = hvp = vhp). Error messages are torch's.
"""

from __future__ import annotations

import itertools

import ferrograd as fg
import numpy as np
import pytest
from ferrograd import autograd
from ferrograd.autograd import functional as F

pytestmark = pytest.mark.timeout(60)

RNG = np.random.default_rng(20261121)


def T(arr, requires_grad: bool = False) -> fg.Tensor:
    a = np.asarray(arr, dtype=np.float64)
    t = fg.tensor(a.tolist(), dtype=fg.float64) if a.ndim else fg.tensor(float(a), dtype=fg.float64)
    return t.requires_grad_(requires_grad)


def N(t) -> np.ndarray:
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1.0, 1.0, size=shape)


def close(t, expected, tol: float = 1e-10) -> None:
    got = N(t)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


BOTH = pytest.mark.parametrize("vectorize", [False, True])


# ---------------------------------------------------------------------------
# Closed-form Jacobians
# ---------------------------------------------------------------------------


@BOTH
def test_jacobian_of_linear_map_is_the_matrix(vectorize):
    W = rand(4, 3)
    J = F.jacobian(lambda x: T(W) @ x, T(rand(3)), vectorize=vectorize)
    close(J, W)


@BOTH
@pytest.mark.parametrize(
    "fn, deriv",
    [
        (lambda x: x.sin(), np.cos),
        (lambda x: x.exp(), np.exp),
        (lambda x: x.tanh(), lambda a: 1 - np.tanh(a) ** 2),
    ],
    ids=["sin", "exp", "tanh"],
)
def test_jacobian_of_elementwise_function_is_diagonal(fn, deriv, vectorize):
    a = rand(5)
    close(F.jacobian(fn, T(a), vectorize=vectorize), np.diag(deriv(a)))


@BOTH
def test_jacobian_of_tanh_layer(vectorize):
    W, b, a = rand(3, 4), rand(3), rand(4)
    y = np.tanh(W @ a + b)
    J = F.jacobian(lambda x: (T(W) @ x + T(b)).tanh(), T(a), vectorize=vectorize)
    close(J, np.diag(1 - y**2) @ W)


@BOTH
def test_jacobian_of_matrix_input_and_output(vectorize):
    # Y = X @ B, so dY[i, k] / dX[a, c] = (i == a) * B[c, k]
    X, B = rand(2, 3), rand(3, 4)
    J = F.jacobian(lambda x: x @ T(B), T(X), vectorize=vectorize)
    expected = np.einsum("ia,ck->ikac", np.eye(2), B)
    close(J, expected)


@BOTH
def test_jacobian_of_products_of_tuple_inputs(vectorize):
    a, b = rand(3), rand(3)
    J = F.jacobian(lambda x, y: (x * y, (x * y).sum()), (T(a), T(b)), vectorize=vectorize)
    close(J[0][0], np.diag(b))
    close(J[0][1], np.diag(a))
    close(J[1][0], b)
    close(J[1][1], a)


def test_jacobian_gives_zeros_for_unused_inputs_and_constant_outputs():
    a = rand(3)
    J = F.jacobian(lambda x, y: (x * 2, fg.ones(2, dtype=fg.float64)), (T(a), T(rand(2))))
    close(J[0][0], 2 * np.eye(3))
    close(J[0][1], np.zeros((3, 2)))
    close(J[1][0], np.zeros((2, 3)))
    close(J[1][1], np.zeros((2, 2)))
    assert J[0][1].dtype == fg.float64


def test_jacobian_of_output_without_elements():
    J = F.jacobian(lambda x: (x[:0], x * 3), T(rand(2)))
    assert tuple(J[0].shape) == (0, 2)
    close(J[1], 3 * np.eye(2))



def test_jacobian_of_identity_and_of_scalars():
    close(F.jacobian(lambda x: x, T(rand(3))), np.eye(3))
    close(F.jacobian(lambda x: x, T(rand(3)), strict=True), np.eye(3))
    close(F.jacobian(lambda x: x * x, T(3.0)), 6.0)  # 0-dim in and out: a 0-dim Jacobian
    close(F.hessian(lambda x: x**3, T(2.0)), 12.0)


def test_jacobian_has_the_dtype_of_the_input():
    x = fg.tensor([1.0, 2.0])  # float32 input, float64 output
    J = F.jacobian(lambda t: (t * 2).to(fg.float64), x)
    assert J.dtype == fg.float32
    close(J, 2 * np.eye(2))


def test_everything_works_under_no_grad():
    a, v = rand(3), rand(3)
    with fg.no_grad():
        close(F.jacobian(lambda x: x**2, T(a)), np.diag(2 * a))
        close(F.hessian(lambda x: (x**3).sum(), T(a)), np.diag(6 * a))
        close(F.vjp(lambda x: x**2, T(a), T(v))[1], 2 * a * v)
        close(F.jvp(lambda x: x**2, T(a), T(v))[1], 2 * a * v)
        close(F.vhp(lambda x: (x**3).sum(), T(a), T(v))[1], 6 * a * v)
        close(F.hvp(lambda x: (x**3).sum(), T(a), T(v))[1], 6 * a * v)

# ---------------------------------------------------------------------------
# Closed-form Hessians and the Hessian products
# ---------------------------------------------------------------------------


def quadratic(A):
    return lambda x: x @ (T(A) @ x)


@BOTH
def test_hessian_of_quadratic_form(vectorize):
    A, a = rand(4, 4), rand(4)
    close(F.hessian(quadratic(A), T(a), vectorize=vectorize), A + A.T)
    close(F.jacobian(quadratic(A), T(a)), (A + A.T) @ a)


def test_hvp_and_vhp_of_quadratic_form():
    A, a, v = rand(4, 4), rand(4), rand(4)
    value, hv = F.hvp(quadratic(A), T(a), T(v))
    close(value, a @ A @ a)
    close(hv, (A + A.T) @ v)
    value, vh = F.vhp(quadratic(A), T(a), T(v))
    close(value, a @ A @ a)
    close(vh, v @ (A + A.T))


def test_hvp_and_vhp_of_cubic():
    # f(x) = sum(x^3): H = diag(6x)
    a, v = rand(3), rand(3)
    close(F.hvp(lambda x: (x**3).sum(), T(a), T(v))[1], 6 * a * v)
    close(F.vhp(lambda x: (x**3).sum(), T(a), T(v))[1], 6 * a * v)


@BOTH
def test_hessian_of_scalar_with_tuple_inputs_has_block_structure(vectorize):
    # f(x, y) = sum(x^2 * y) + sum(y^3): H_xx = diag(2y), H_xy = H_yx = diag(2x), H_yy = diag(6y)
    a, b = rand(3), rand(3)
    H = F.hessian(lambda x, y: (x * x * y).sum() + (y**3).sum(), (T(a), T(b)), vectorize=vectorize)
    assert isinstance(H, tuple) and all(isinstance(row, tuple) and len(row) == 2 for row in H)
    close(H[0][0], np.diag(2 * b))
    close(H[0][1], np.diag(2 * a))
    close(H[1][0], np.diag(2 * a))
    close(H[1][1], np.diag(6 * b))


def test_hessian_blocks_of_different_shapes():
    # f(x, M) = x^T M x with x in R^2 and M in R^{2x2}
    a, m = rand(2), rand(2, 2)
    H = F.hessian(lambda x, M: x @ (M @ x), (T(a), T(m)))
    close(H[0][0], m + m.T)
    # d/dx_i d/dM_jk (x_j M_jk x_k) = delta_ij x_k + x_j delta_ik
    dxdM = np.einsum("ij,k->ijk", np.eye(2), a) + np.einsum("j,ik->ijk", a, np.eye(2))
    close(H[0][1], dxdM)
    close(H[1][0], dxdM.transpose(1, 2, 0))
    close(H[1][1], np.zeros((2, 2, 2, 2)))



def test_hessian_blocks_of_an_unused_input_are_zero():
    a = rand(2)
    H = F.hessian(lambda x, y: (x**3).sum(), (T(a), T(rand(3))))
    close(H[0][0], np.diag(6 * a))
    close(H[0][1], np.zeros((2, 3)))
    close(H[1][0], np.zeros((3, 2)))
    close(H[1][1], np.zeros((3, 3)))

# ---------------------------------------------------------------------------
# vjp / jvp against closed forms
# ---------------------------------------------------------------------------


def test_vjp_and_jvp_of_linear_map():
    W, a, u, v = rand(2, 3), rand(3), rand(2), rand(3)
    out, vj = F.vjp(lambda x: T(W) @ x, T(a), T(u))
    close(out, W @ a)
    close(vj, u @ W)
    out, jv = F.jvp(lambda x: T(W) @ x, T(a), T(v))
    close(out, W @ a)
    close(jv, W @ v)


def test_vjp_and_jvp_with_tuples():
    a, b, u, v, w = rand(3), rand(3), rand(3), rand(3), rand(3)
    out, (ga, gb) = F.vjp(lambda x, y: x * y, (T(a), T(b)), T(u))
    close(out, a * b)
    close(ga, u * b)
    close(gb, u * a)
    (o1, o2), jv = F.jvp(lambda x, y: (x * y, x.sin()), (T(a), T(b)), (T(v), T(w)))
    close(o1, a * b)
    close(jv[0], v * b + a * w)
    close(jv[1], np.cos(a) * v)


def test_v_may_be_omitted_for_single_elements():
    out, g = F.vjp(lambda x: (x**2).sum(), T([1.0, 2.0, 3.0]))
    close(g, [2.0, 4.0, 6.0])
    out, jv = F.jvp(lambda x: x * 5, T([2.0]))
    close(jv, [5.0])
    close(F.hvp(lambda x: (x**3).sum(), T([2.0]))[1], [12.0])
    close(F.vhp(lambda x: (x**3).sum(), T([2.0]))[1], [12.0])


# ---------------------------------------------------------------------------
# Cross-checks between the functions
# ---------------------------------------------------------------------------


def two_by_two(x, y):
    return (x.sin() * y[:3].sum(), (x * y[1:]).exp())


def test_jacobian_rows_are_vjps_with_basis_vectors():
    a, b = rand(3), rand(4)
    J = F.jacobian(two_by_two, (T(a), T(b)))
    sizes = (3, 3)
    for i, n in enumerate(sizes):
        for r in range(n):
            e = [np.zeros(s) for s in sizes]
            e[i][r] = 1.0
            _, (ga, gb) = F.vjp(two_by_two, (T(a), T(b)), (T(e[0]), T(e[1])))
            close(J[i][0][r], N(ga))
            close(J[i][1][r], N(gb))


def test_jacobian_columns_are_jvps_with_basis_vectors():
    a, b = rand(3), rand(4)
    J = F.jacobian(two_by_two, (T(a), T(b)))
    for j, n in enumerate((3, 4)):
        for c in range(n):
            e = [np.zeros(3), np.zeros(4)]
            e[j][c] = 1.0
            _, (j0, j1) = F.jvp(two_by_two, (T(a), T(b)), (T(e[0]), T(e[1])))
            close(J[0][j][:, c], N(j0))
            close(J[1][j][:, c], N(j1))


def test_hessian_times_v_equals_hvp_and_vhp():
    W, a, v = rand(3, 3), rand(3), rand(3)

    def loss(x):
        return (T(W) @ x).tanh().pow(2).sum() + (x**4).sum()

    H = N(F.hessian(loss, T(a)))
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    close(F.hvp(loss, T(a), T(v))[1], H @ v)
    close(F.vhp(loss, T(a), T(v))[1], v @ H)


# ---------------------------------------------------------------------------
# Finite differences (float64)
# ---------------------------------------------------------------------------


def fd_jacobian(fn, arrays, eps=1e-6):
    """Blocks [i][j] of d out_i / d in_j by central differences."""
    outs = [np.asarray(o) for o in fn(*arrays)]
    blocks = [[np.zeros(o.shape + a.shape) for a in arrays] for o in outs]
    for j, a in enumerate(arrays):
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[j][idx] += eps
            minus[j][idx] -= eps
            for i, (p, m) in enumerate(zip(fn(*plus), fn(*minus), strict=True)):
                blocks[i][j][(...,) + idx] = (np.asarray(p) - np.asarray(m)) / (2 * eps)
    return blocks


def np_two_outputs(x, y):
    return (np.sin(x) * np.sum(y**2), np.exp(x[:, None] * y[None, :]))


def fg_two_outputs(x, y):
    return (x.sin() * (y**2).sum(), (x.unsqueeze(1) * y.unsqueeze(0)).exp())


@BOTH
def test_jacobian_matches_finite_differences(vectorize):
    a, b = rand(3), rand(2)
    J = F.jacobian(fg_two_outputs, (T(a), T(b)), vectorize=vectorize)
    expected = fd_jacobian(np_two_outputs, [a, b])
    for i, j in itertools.product(range(2), range(2)):
        close(J[i][j], expected[i][j], tol=1e-7)


def test_hessian_matches_finite_differences_of_the_gradient():
    a, b = rand(3), rand(2)

    def np_grad(x, y):  # gradient of f = sum(sin(x)) * sum(y^2) + sum(x)^2 * y[0]
        gx = np.cos(x) * np.sum(y**2) + 2 * np.sum(x) * y[0]
        gy = np.sin(x).sum() * 2 * y + np.array([np.sum(x) ** 2, 0.0])
        return gx, gy

    H = F.hessian(lambda x, y: x.sin().sum() * (y**2).sum() + x.sum() ** 2 * y[0], (T(a), T(b)))
    expected = fd_jacobian(np_grad, [a, b])
    for i, j in itertools.product(range(2), range(2)):
        close(H[i][j], expected[i][j], tol=1e-7)


# ---------------------------------------------------------------------------
# Nesting and shapes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("in_tuple, out_tuple", list(itertools.product([False, True], repeat=2)))
def test_jacobian_nesting_and_shapes(in_tuple, out_tuple):
    x, y = T(rand(2, 3)), T(rand(4))
    inputs = (x, y) if in_tuple else x

    def fn(*args):
        s = args[0].sum(1)  # (2,)
        if len(args) == 2:
            s = s * args[1][:2]
        outs = (s, s.sum())
        return outs if out_tuple else outs[0]

    J = F.jacobian(fn, inputs)
    ins = (x, y) if in_tuple else (x,)
    outs = fn(*ins)
    outs = outs if out_tuple else (outs,)
    rows = J if out_tuple else (J,)
    assert isinstance(rows, tuple) and len(rows) == len(outs)
    for out, row in zip(outs, rows, strict=True):
        blocks = row if in_tuple else (row,)
        assert isinstance(blocks, tuple) and len(blocks) == len(ins)
        for inp, block in zip(ins, blocks, strict=True):
            assert isinstance(block, fg.Tensor)
            assert tuple(block.shape) == tuple(out.shape) + tuple(inp.shape)


def test_hessian_nesting_and_shapes():
    H = F.hessian(lambda x: (x**3).sum(), T(rand(2, 3)))
    assert isinstance(H, fg.Tensor) and tuple(H.shape) == (2, 3, 2, 3)
    H = F.hessian(lambda x, y: (x**2).sum() * (y**2).sum(), (T(rand(2, 3)), T(rand(4))))
    shapes = [[tuple(b.shape) for b in row] for row in H]
    assert shapes == [[(2, 3, 2, 3), (2, 3, 4)], [(4, 2, 3), (4, 4)]]


def test_single_element_tuple_keeps_its_tuple():
    J = F.jacobian(lambda x: (x * 2,), (T(rand(2)),))
    assert isinstance(J, tuple) and isinstance(J[0], tuple) and isinstance(J[0][0], fg.Tensor)
    H = F.hessian(lambda x: (x**2).sum(), (T(rand(2)),))
    assert isinstance(H, tuple) and isinstance(H[0], tuple)
    close(H[0][0], 2 * np.eye(2))


@pytest.mark.parametrize("fn_name", ["vjp", "jvp", "vhp", "hvp"])
def test_product_nesting(fn_name):
    fn = getattr(F, fn_name)
    a, b = rand(3), rand(3)
    if fn_name in ("vjp", "jvp"):
        out, res = fn(lambda x: x * 2, T(a), T(b))
        assert isinstance(out, fg.Tensor) and isinstance(res, fg.Tensor)
        out, res = fn(lambda x, y: (x * y,), (T(a), T(b)), (T(b),) if fn_name == "vjp" else (T(a), T(b)))
        assert isinstance(out, tuple) and len(out) == 1
        assert isinstance(res, tuple) and len(res) == (2 if fn_name == "vjp" else 1)
    else:
        out, res = fn(lambda x: (x**3).sum(), T(a), T(b))
        assert isinstance(out, fg.Tensor) and isinstance(res, fg.Tensor)
        assert tuple(res.shape) == (3,)
        out, res = fn(lambda x, y: (x * y).sum(), (T(a), T(b)), (T(a), T(b)))
        assert isinstance(out, fg.Tensor) and isinstance(res, tuple) and len(res) == 2
        close(res[0], b)  # H = [[0, I], [I, 0]]
        close(res[1], a)


# ---------------------------------------------------------------------------
# create_graph, detaching, and the caller's tensors
# ---------------------------------------------------------------------------


def test_jacobian_with_create_graph_is_differentiable():
    a = rand(3)
    x = T(a, requires_grad=True)
    J = F.jacobian(lambda t: t**3, x, create_graph=True)
    assert J.requires_grad
    (g,) = autograd.grad(J.sum(), x)  # sum of diag(3 x^2) -> 6 x
    close(g, 6 * a)


def test_hessian_with_create_graph_is_differentiable():
    a = rand(3)
    x = T(a, requires_grad=True)
    H = F.hessian(lambda t: (t**4).sum(), x, create_graph=True)
    (g,) = autograd.grad(H.sum(), x)  # sum of diag(12 x^2) -> 24 x
    close(g, 24 * a)


@pytest.mark.parametrize("fn_name", ["vjp", "jvp", "vhp", "hvp"])
def test_products_with_create_graph_are_differentiable(fn_name):
    a, v = rand(3), rand(3)
    x = T(a, requires_grad=True)
    out, res = getattr(F, fn_name)(lambda t: (t**4).sum() if "h" in fn_name else t**4, x, T(v),
                                   create_graph=True)
    assert out.requires_grad and res.requires_grad
    (g,) = autograd.grad(res.sum(), x)
    # vjp/jvp: res = 4 x^3 v -> 12 x^2 v; vhp/hvp: res = 12 x^2 v -> 24 x v
    close(g, 24 * a * v if "h" in fn_name else 12 * a**2 * v)


@pytest.mark.parametrize("fn_name", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_results_are_detached_without_create_graph(fn_name):
    x = T(rand(3), requires_grad=True)
    fn = getattr(F, fn_name)
    if fn_name in ("jacobian", "hessian"):
        results = [fn(lambda t: (t**3).sum(), x)]
    else:
        out, res = fn(lambda t: (t**3).sum(), x, T(rand(3)) if fn_name != "vjp" else None)
        results = [out, res]
    for r in results:
        assert not r.requires_grad and r.grad_fn is None
    assert x.grad is None


def test_function_sees_fresh_inputs_not_the_captured_tensor():
    x = T(rand(3), requires_grad=True)
    # func uses both its argument and the captured x; only the argument counts.
    J = F.jacobian(lambda t: t * x, x)
    close(J, np.diag(N(x)))


@BOTH
def test_vectorize_flag_gives_identical_results(vectorize):
    a, b = rand(3), rand(2)
    J1 = F.jacobian(fg_two_outputs, (T(a), T(b)), vectorize=False)
    J2 = F.jacobian(fg_two_outputs, (T(a), T(b)), vectorize=True)
    for i, j in itertools.product(range(2), range(2)):
        assert N(J1[i][j]).tolist() == N(J2[i][j]).tolist()
    H1 = F.hessian(lambda x: (x**3).prod(), T(a), vectorize=False)
    H2 = F.hessian(lambda x: (x**3).prod(), T(a), vectorize=True)
    assert N(H1).tolist() == N(H2).tolist()


def test_jacobian_is_one_batched_grad_call(monkeypatch):
    calls = []
    real_grad = autograd.grad

    def counting_grad(*args, **kwargs):
        calls.append(kwargs.get("is_grads_batched", False))
        return real_grad(*args, **kwargs)

    monkeypatch.setattr(autograd, "grad", counting_grad)
    F.jacobian(fg_two_outputs, (T(rand(3)), T(rand(2))))
    assert calls == [True]
    calls.clear()
    F.hessian(lambda x, y: (x * y).sum(), (T(rand(3)), T(rand(3))), vectorize=False)
    assert calls == [True, True]  # the gradient, then the jacobian of the gradient


# ---------------------------------------------------------------------------
# Argument errors
# ---------------------------------------------------------------------------


def test_non_tensor_input_raises_type_error():
    with pytest.raises(TypeError, match=r"The inputs given to jacobian must be either a Tensor or a "
                                        r"tuple of Tensors but the given inputs has type <class 'list'>\."):
        F.jacobian(lambda x: x, [1.0, 2.0])


def test_non_tensor_in_input_tuple_raises_type_error():
    with pytest.raises(TypeError, match=r"The inputs given to vjp .* but the value at index 1 has type "
                                        r"<class 'int'>\."):
        F.vjp(lambda x, y: x, (T([1.0]), 3))


def test_non_tensor_output_raises_type_error():
    with pytest.raises(TypeError, match=r"The outputs of the user-provided function given to jvp must be "
                                        r"either a Tensor or a tuple of Tensors but the given outputs of "
                                        r"the user-provided function has type <class 'float'>\."):
        F.jvp(lambda x: 1.0, T([1.0]), T([1.0]))


def test_v_tuple_of_invalid_length():
    with pytest.raises(RuntimeError, match=r"^v is a tuple of invalid length: should be 2 but got 1\.$"):
        F.jvp(lambda x, y: x * y, (T([1.0]), T([2.0])), (T([1.0]),))


def test_v_should_contain_a_single_tensor():
    with pytest.raises(RuntimeError, match=r"^The given v should contain a single Tensor\.$"):
        F.vjp(lambda x: x * 2, T([1.0, 2.0]), (T([1.0, 2.0]), T([1.0, 2.0])))


def test_v_has_invalid_size():
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be .*\[3\]\) but got .*\[2\]\)\.$"):
        F.vjp(lambda x: x * 2, T(rand(3)), T(rand(2)))


def test_entry_of_v_has_invalid_size():
    with pytest.raises(RuntimeError, match=r"^Entry 1 in v has invalid size: should be .*\[2\]\) but "
                                           r"got .*\[3\]\)\.$"):
        F.hvp(lambda x, y: (x * x).sum() + (y * y).sum(), (T(rand(2)), T(rand(2))),
              (T(rand(2)), T(rand(3))))


def test_vjp_v_none_needs_single_element_output():
    with pytest.raises(RuntimeError, match=r"^The vector v can only be None if the user-provided "
                                           r"function returns a single Tensor with a single element\.$"):
        F.vjp(lambda x: x * 2, T(rand(2)))


def test_jvp_v_none_needs_single_element_input():
    with pytest.raises(RuntimeError, match=r"^The vector v can only be None if the input to the "
                                           r"user-provided function is a single Tensor with a single "
                                           r"element\.$"):
        F.jvp(lambda x: x * 2, T(rand(2)))


@pytest.mark.parametrize("fn_name", ["vhp", "hvp"])
def test_hessian_product_v_none_needs_single_element_input(fn_name):
    with pytest.raises(RuntimeError, match=r"^The vector v can only be None if the input to the "
                                           r"user-provided function is a single Tensor with a single "
                                           r"element\.$"):
        getattr(F, fn_name)(lambda x: (x * x).sum(), T(rand(2)))


@pytest.mark.parametrize("fn_name", ["hessian", "vhp", "hvp"])
def test_scalar_function_must_return_a_single_tensor(fn_name):
    args = (T(rand(2)),) if fn_name == "hessian" else (T(rand(2)), T(rand(2)))
    with pytest.raises(RuntimeError, match=rf"^The function given to {fn_name} should return a single "
                                           r"Tensor$"):
        getattr(F, fn_name)(lambda x: ((x * x).sum(),), *args)


@pytest.mark.parametrize("fn_name", ["hessian", "vhp", "hvp"])
def test_scalar_function_must_return_a_single_element(fn_name):
    args = (T(rand(2)),) if fn_name == "hessian" else (T(rand(2)), T(rand(2)))
    with pytest.raises(RuntimeError, match=rf"^The Tensor returned by the function given to {fn_name} "
                                           r"should contain a single element$"):
        getattr(F, fn_name)(lambda x: x * x, *args)


def test_hessian_accepts_single_element_output_of_any_shape():
    close(F.hessian(lambda x: (x * x).sum().reshape(1, 1), T(rand(2))), 2 * np.eye(2))


# ---------------------------------------------------------------------------
# Strict mode
# ---------------------------------------------------------------------------


def test_strict_output_does_not_require_grad():
    with pytest.raises(RuntimeError, match=r"^Output 0 of the user-provided function does not require "
                                           r"gradients\. The outputs must be computed in a differentiable "
                                           r"manner from the input when running in strict mode\.$"):
        F.vjp(lambda x: fg.ones(2, dtype=fg.float64), T(rand(2)), T(rand(2)), strict=True)


def test_strict_vjp_output_independent_of_input():
    with pytest.raises(RuntimeError, match=r"^The output of the user-provided function is independent of "
                                           r"input 1\. This is not allowed in strict mode\.$"):
        F.vjp(lambda x, y: x * 2, (T(rand(2)), T(rand(2))), T(rand(2)), strict=True)
    _, (gx, gy) = F.vjp(lambda x, y: x * 2, (T(rand(2)), T(rand(2))), T([1.0, 1.0]))
    close(gy, np.zeros(2))


def test_strict_vjp_with_create_graph_and_linear_function():
    with pytest.raises(RuntimeError, match=r"^The jacobian of the user-provided function is independent "
                                           r"of input 0\. This is not allowed in strict mode when "
                                           r"create_graph=True\.$"):
        F.vjp(lambda x: x * 2, T(rand(2)), T(rand(2)), create_graph=True, strict=True)


def test_strict_jvp_gradient_independent_of_input():
    with pytest.raises(RuntimeError, match=r"^The output of the user-provided function is independent of "
                                           r"input 1\. This is not allowed in strict mode\.$"):
        F.jvp(lambda x, y: x * 2, (T(rand(2)), T(rand(2))), (T(rand(2)), T(rand(2))), strict=True)


def test_strict_jvp_output_independent_of_inputs_in_double_backward():
    c = T(rand(2), requires_grad=True)  # captured: output 1 requires grad but ignores the input
    with pytest.raises(RuntimeError, match=r"^The gradient with respect to the input is independent of "
                                           r"entry 1 in the grad_outputs when using the double backward "
                                           r"trick to compute forward mode gradients\. This is not allowed "
                                           r"in strict mode\.$"):
        F.jvp(lambda x: (x * 2, c * 3), T(rand(2)), T(rand(2)), strict=True)
    _, (j0, j1) = F.jvp(lambda x: (x * 2, c * 3), T(rand(2)), T([1.0, 1.0]))
    close(j0, [2.0, 2.0])
    close(j1, np.zeros(2))


def test_strict_jacobian_output_independent_of_input():
    with pytest.raises(RuntimeError, match=r"^Output 1 of the user-provided function is independent of "
                                           r"input 0\. This is not allowed in strict mode\.$"):
        F.jacobian(lambda x, y: (x * y, y * 2), (T(rand(2)), T(rand(2))), strict=True)


def test_strict_jacobian_with_create_graph_and_linear_function():
    with pytest.raises(RuntimeError, match=r"^The jacobian of the user-provided function is independent "
                                           r"of input 0\. This is not allowed in strict mode when "
                                           r"create_graph=True\.$"):
        F.jacobian(lambda x: x * 2, T(rand(2)), create_graph=True, strict=True)


def test_strict_jacobian_passes_when_everything_depends():
    a, b = rand(2), rand(2)
    J = F.jacobian(lambda x, y: x * y, (T(a), T(b)), strict=True)
    close(J[0], np.diag(b))
    close(J[1], np.diag(a))


def test_strict_and_vectorize_are_not_supported_together():
    with pytest.raises(RuntimeError, match=r"^torch\.autograd\.functional\.jacobian: `strict=True` and "
                                           r"`vectorized=True` are not supported together\. Please either "
                                           r"set `strict=False` or `vectorize=False`\.$"):
        F.jacobian(lambda x: x * x, T(rand(2)), strict=True, vectorize=True)


def test_strict_hessian_of_linear_function():
    with pytest.raises(RuntimeError, match=r"^While computing the hessian, found that the jacobian of the "
                                           r"user-provided function with respect to input 0 is independent "
                                           r"of the input\. This is not allowed in strict mode\."):
        F.hessian(lambda x: (x * 2).sum(), T(rand(2)), strict=True)


def test_strict_vhp_jacobian_independent_of_an_input():
    c = T(rand(2), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The jacobian of the user-provided function is independent of "
                                           r"input 1\. This is not allowed in strict mode\.$"):
        F.vhp(lambda x, y: (x**3).sum() + (c * y).sum(), (T(rand(2)), T(rand(2))),
              (T(rand(2)), T(rand(2))), strict=True)


def test_strict_hvp_hessian_independent_of_an_entry():
    c = T(rand(2), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The hessian of the user-provided function is independent of "
                                           r"entry 1 in the grad_jacobian\. This is not allowed in strict "
                                           r"mode as it prevents from using the double backward trick to "
                                           r"replace forward mode AD\.$"):
        F.hvp(lambda x, y: (x**3).sum() + (c * y).sum(), (T(rand(2)), T(rand(2))),
              (T(rand(2)), T(rand(2))), strict=True)


def test_strict_vhp_with_create_graph_and_quadratic_function():
    with pytest.raises(RuntimeError, match=r"^The hessian of the user-provided function is independent "
                                           r"of input 0\. This is not allowed in strict mode when "
                                           r"create_graph=True\.$"):
        F.vhp(lambda x: (x * x).sum(), T(rand(2)), T(rand(2)), create_graph=True, strict=True)


# ---------------------------------------------------------------------------
# strategy="forward-mode"
# ---------------------------------------------------------------------------

def test_unknown_strategy_is_rejected():
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or'):
        F.jacobian(lambda x: x, T([1.0]), strategy="sideways")
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or'):
        F.hessian(lambda x: (x * x).sum(), T([1.0]), outer_jacobian_strategy="sideways")


def test_forward_mode_with_create_graph_is_not_supported():
    with pytest.raises(NotImplementedError, match=r"`create_graph=True` and `strategy=\"forward-mode\"` "
                                                  r"are not supported together \(yet\)"):
        F.jacobian(lambda x: x, T([1.0]), create_graph=True, vectorize=True, strategy="forward-mode")


def test_forward_mode_with_strict_is_not_supported():
    with pytest.raises(RuntimeError, match=r"`strict=True` and `strategy=\"forward-mode\"` are not "
                                           r"supported together \(yet\)"):
        F.jacobian(lambda x: x, T([1.0]), strict=True, vectorize=True, strategy="forward-mode")


def test_forward_mode_requires_vectorize():
    with pytest.raises(NotImplementedError, match=r"only implemented for `vectorize=True`"):
        F.jacobian(lambda x: x, T([1.0]), strategy="forward-mode")


def test_forward_mode_jacobian_of_a_linear_map_is_the_matrix():
    w = rand(4, 3)
    jac = F.jacobian(lambda x: T(w) @ x, T(rand(3)), vectorize=True, strategy="forward-mode")
    close(jac, w)


def test_forward_mode_jacobian_of_an_elementwise_function_is_diagonal():
    x = rand(2, 3)
    jac = F.jacobian(lambda x: x.sin(), T(x), vectorize=True, strategy="forward-mode")
    want = np.zeros((2, 3, 2, 3))
    for i, j in itertools.product(range(2), range(3)):
        want[i, j, i, j] = np.cos(x[i, j])
    close(jac, want)


@pytest.mark.parametrize("tuple_in", [False, True])
@pytest.mark.parametrize("tuple_out", [False, True])
def test_forward_mode_jacobian_matches_reverse_mode(tuple_in, tuple_out):
    w = T(rand(3, 3))

    def f(*xs):
        y = (w @ xs[0]).tanh() * (xs[1].exp().sum() if tuple_in else 1.0)
        return (y, (xs[0] * y).sum()) if tuple_out else y

    xs = (T(rand(3)), T(rand(2))) if tuple_in else T(rand(3))
    fwd = F.jacobian(f, xs, vectorize=True, strategy="forward-mode")
    rev = F.jacobian(f, xs)
    flat_f = list(_flatten(fwd))
    flat_r = list(_flatten(rev))
    assert len(flat_f) == len(flat_r)
    for a, b in zip(flat_f, flat_r, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        close(a, N(b))


def _flatten(x):
    if isinstance(x, fg.Tensor):
        yield x
    else:
        for item in x:
            yield from _flatten(item)


def test_forward_mode_jacobian_equals_stacked_jvps():
    w = T(rand(4, 3))

    def f(x):
        return (w @ x).sigmoid()

    x = T(rand(3))
    jac = F.jacobian(f, x, vectorize=True, strategy="forward-mode")
    cols = [F.jvp(f, x, T(np.eye(3)[k]))[1] for k in range(3)]
    close(jac, np.stack([N(c) for c in cols], axis=1))


def test_forward_mode_hessian_of_a_quadratic_form():
    a = rand(3, 3)
    h = F.hessian(lambda x: x @ (T(a) @ x), T(rand(3)), vectorize=True,
                  outer_jacobian_strategy="forward-mode")
    close(h, a + a.T)


def test_forward_over_reverse_hessian_matches_reverse_over_reverse():
    w = T(rand(4, 4))

    def f(x, y):
        return (w @ x).tanh().pow(2).sum() + (x * y.exp()).sum()

    xs = (T(rand(4)), T(rand(4)))
    fwd = F.hessian(f, xs, vectorize=True, outer_jacobian_strategy="forward-mode")
    rev = F.hessian(f, xs)
    for a, b in zip(_flatten(fwd), _flatten(rev), strict=True):
        close(a, N(b))


def test_export():
    assert "functional" in autograd.__all__
    assert fg.autograd.functional is F
    assert set(F.__all__) == {"vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"}
