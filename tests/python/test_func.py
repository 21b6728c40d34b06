"""ferrograd.func: grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd, hessian, functional_call, stack_module_state.

Oracles: closed-form derivatives computed with NumPy (linear maps, tanh
layers, cubic and quadratic forms), float64 central finite differences for
nonlinear functions, ordinary ``backward`` on an ``nn.Module`` for
``functional_call``, and the transforms against each other in every pairwise
nesting (all must give the Hessian of the same function). Error messages
are torch.func's.
"""

from __future__ import annotations

import itertools

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest
from custom_functions import Cube
from ferrograd import func

pytestmark = pytest.mark.timeout(60)

RNG = np.random.default_rng(20261127)


def T(arr, requires_grad: bool = False) -> fg.Tensor:
    return fg.tensor(np.asarray(arr, dtype=np.float64)).requires_grad_(requires_grad)


def N(t) -> np.ndarray:
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1.0, 1.0, size=shape)


def close(t, expected, tol: float = 1e-10) -> None:
    got = N(t) if isinstance(t, fg.Tensor) else np.asarray(t)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def central_jacobian(f, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f(a) / d a by central differences, shaped out.shape + a.shape."""
    out_shape = np.shape(f(a))
    J = np.zeros((int(np.prod(out_shape)), a.size))
    for k in range(a.size):
        d = np.zeros(a.size)
        d[k] = eps
        d = d.reshape(a.shape)
        J[:, k] = (np.asarray(f(a + d)) - np.asarray(f(a - d))).reshape(-1) / (2 * eps)
    return J.reshape(*out_shape, *a.shape)


# ---------------------------------------------------------------------------
# grad and grad_and_value
# ---------------------------------------------------------------------------


def test_grad_matches_closed_form_for_each_argnums():
    a, b = rand(4), rand(4)

    def f(x, y):
        return (x.sin() * y).sum()

    close(func.grad(f)(T(a), T(b)), np.cos(a) * b)
    close(func.grad(f, argnums=1)(T(a), T(b)), np.sin(a))
    close(func.grad(f, argnums=-1)(T(a), T(b)), np.sin(a))
    gx, gy = func.grad(f, argnums=(0, 1))(T(a), T(b))
    close(gx, np.cos(a) * b)
    close(gy, np.sin(a))


def test_grad_of_nested_containers_keeps_their_structure():
    a, b, c = rand(3), rand(2), rand(2)

    def f(d):
        return (d["a"] ** 2).sum() + (d["b"][0] * d["b"][1]).sum()

    g = func.grad(f)({"a": T(a), "b": [T(b), T(c)]})
    assert set(g) == {"a", "b"} and isinstance(g["b"], list) and len(g["b"]) == 2
    close(g["a"], 2 * a)
    close(g["b"][0], c)
    close(g["b"][1], b)


def test_grad_and_value_and_aux():
    a = rand(5)

    def f(x):
        y = x.exp()
        return y.sum(), {"y": y}

    (g, (value, aux)) = func.grad_and_value(f, has_aux=True)(T(a))
    close(g, np.exp(a))
    close(value, np.exp(a).sum())
    close(aux["y"], np.exp(a))
    g2, aux2 = func.grad(f, has_aux=True)(T(a))
    close(g2, np.exp(a))
    close(aux2["y"], np.exp(a))
    # Results of a top-level transform are plain tensors.
    assert not g.requires_grad and not value.requires_grad and not aux["y"].requires_grad


def test_unused_argument_gets_zeros():
    a, b = rand(3), rand(2)
    gx, gy = func.grad(lambda x, y: (x * x).sum(), argnums=(0, 1))(T(a), T(b))
    close(gx, 2 * a)
    close(gy, np.zeros(2))


def test_second_derivative_by_nested_grad():
    for a in rand(4):
        g2 = func.grad(func.grad(lambda x: x.sin() * x * x))(T(a))
        # d2/dx2 (x^2 sin x) = 2 sin x + 4 x cos x - x^2 sin x
        close(g2, 2 * np.sin(a) + 4 * a * np.cos(a) - a * a * np.sin(a))


def test_no_perturbation_confusion():
    a, c = rand(1)[0], rand(1)[0]
    # d/dx [d/dy (x y)] at y = x is d/dx x = 1.
    close(func.grad(lambda x: func.grad(lambda y: x * y)(x))(T(a)), 1.0)
    # d/dx [x * d/dy (x y)](c) = d/dx x^2 = 2x, whatever c is.
    close(func.grad(lambda x: x * func.grad(lambda y: x * y)(T(c)))(T(a)), 2 * a)


def test_result_stays_differentiable_for_outer_autograd():
    a, w = rand(3), rand(3)
    x = T(a, requires_grad=True)
    W = T(w, requires_grad=True)
    g = func.grad(lambda x: (W * x**3).sum())(x)
    close(g, 3 * w * a**2)
    assert g.requires_grad
    g.sum().backward()
    close(x.grad, 6 * w * a)
    close(W.grad, 3 * a**2)


def test_grad_of_gradient_independent_of_input_needs_no_grad():
    # d/dx sum(x) = ones does not depend on x, as in torch.
    x = T(rand(3), requires_grad=True)
    g = func.grad(lambda x: x.sum())(x)
    close(g, np.ones(3))
    assert not g.requires_grad


def test_grad_under_no_grad_still_differentiates():
    a = rand(3)
    with fg.no_grad():
        g = func.grad(lambda x: (x**2).sum())(T(a))
    close(g, 2 * a)


# ---------------------------------------------------------------------------
# vjp, jvp, linearize
# ---------------------------------------------------------------------------


def test_vjp_of_tanh_layer_and_repeated_calls():
    W, a = rand(3, 4), rand(4)
    y = np.tanh(W @ a)
    out, vjp_fn = func.vjp(lambda x: (T(W) @ x).tanh(), T(a))
    close(out, y)
    for _ in range(2):
        v = rand(3)
        (g,) = vjp_fn(T(v))
        close(g, W.T @ (v * (1 - y**2)))


def test_vjp_of_several_primals_and_outputs():
    a, b = rand(3), rand(3)
    out, vjp_fn, aux = func.vjp(lambda x, y: ((x * y, {"s": x.sum()}), x.cos()), T(a), T(b), has_aux=True)
    close(out[0], a * b)
    close(aux, np.cos(a))
    u, s = rand(3), rand(1)[0]
    gx, gy = vjp_fn((T(u), {"s": T(s)}))
    close(gx, u * b + s)
    close(gy, u * a)


def test_jvp_of_tanh_layer():
    W, a, v = rand(3, 4), rand(4), rand(4)
    y = np.tanh(W @ a)
    out, t = func.jvp(lambda x: (T(W) @ x).tanh(), (T(a),), (T(v),))
    close(out, y)
    close(t, (1 - y**2) * (W @ v))


def test_jvp_inside_an_open_dual_level_uses_reverse_mode():
    W, a, v = rand(3, 4), rand(4), rand(4)
    y = np.tanh(W @ a)
    with fwAD.dual_level():
        out, t = func.jvp(lambda x: (T(W) @ x).tanh(), (T(a),), (T(v),))
    close(out, y)
    close(t, (1 - y**2) * (W @ v))


def test_nested_jvp_is_second_directional_derivative():
    a, u, v = rand(3), rand(3), rand(3)

    def f(x):
        return (x.sin() * x).sum()

    def df_v(x):
        return func.jvp(f, (x,), (T(v),))[1]

    _, d2 = func.jvp(df_v, (T(a),), (T(u),))
    # Hessian of sum(x sin x) is diag(2 cos x - x sin x).
    close(d2, np.sum(u * v * (2 * np.cos(a) - a * np.sin(a))))


def test_linearize_matches_jvp():
    a = rand(4)

    def f(x):
        return (x.exp() * x[0]).tanh()

    out, jvp_fn = func.linearize(f, T(a))
    for _ in range(3):
        v = rand(4)
        expected = func.jvp(f, (T(a),), (T(v),))[1]
        close(jvp_fn(T(v)), N(expected))
    close(out, np.tanh(np.exp(a) * a[0]))


# ---------------------------------------------------------------------------
# jacrev, jacfwd, hessian
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_of_tanh_layer(jac):
    W, b, a = rand(3, 4), rand(3), rand(4)
    y = np.tanh(W @ a + b)
    J = getattr(func, jac)(lambda x: (T(W) @ x + T(b)).tanh())(T(a))
    close(J, np.diag(1 - y**2) @ W)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_structure_for_argnums_and_outputs(jac):
    a, b = rand(3), rand(2, 3)

    def f(x, y):
        return {"p": x * y, "s": (x.sin(), y.sum())}

    J = getattr(func, jac)(f, argnums=(0, 1))(T(a), T(b))
    assert set(J) == {"p", "s"}
    close(J["p"][0], np.einsum("ij,jk->ijk", b, np.eye(3)))
    close(J["p"][1], np.einsum("j,ik,jl->ijkl", a, np.eye(2), np.eye(3)))
    close(J["s"][0][0], np.diag(np.cos(a)))
    close(J["s"][0][1], np.zeros((3, 2, 3)))
    close(J["s"][1][0], np.zeros(3))
    close(J["s"][1][1], np.ones((2, 3)))


def test_jacrev_chunks_give_the_same_jacobian():
    a = rand(5)

    def f(x):
        return (x[:, None] * x[None, :]).sin()

    full = N(func.jacrev(f)(T(a)))
    for chunk in (1, 2, 7, 100):
        close(func.jacrev(f, chunk_size=chunk)(T(a)), full, tol=0)
    close(full, central_jacobian(lambda x: np.sin(x[:, None] * x[None, :]), a), tol=1e-7)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_against_finite_differences(jac):
    a = rand(2, 3)

    def f(x):
        return (x @ x.t()).exp() / (1 + x.square().sum())

    def f_np(x):
        return np.exp(x @ x.T) / (1 + np.sum(x * x))

    close(getattr(func, jac)(f)(T(a)), central_jacobian(f_np, a), tol=1e-7)


def test_jacobian_with_aux():
    a = rand(3)
    J, aux = func.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True)(T(a))
    close(J, np.diag(np.exp(a)))
    close(aux, a.sum())
    J, aux = func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(T(a))
    close(J, np.diag(np.exp(a)))
    close(aux, a.sum())


def _cubic(A):
    def f(x):
        return (x**3).sum() + x @ (T(A) @ x)

    return f


def test_hessian_of_cubic_plus_quadratic():
    A, a = rand(4, 4), rand(4)
    close(func.hessian(_cubic(A))(T(a)), np.diag(6 * a) + A + A.T)


def test_hessian_of_two_arguments():
    a, b = rand(3), rand(3)
    H = func.hessian(lambda x, y: (x * x * y).sum(), argnums=(0, 1))(T(a), T(b))
    close(H[0][0], np.diag(2 * b))
    close(H[0][1], np.diag(2 * a))
    close(H[1][0], np.diag(2 * a))
    close(H[1][1], np.zeros((3, 3)))


JACOBIANS = {"jacrev": func.jacrev, "jacfwd": func.jacfwd}


@pytest.mark.parametrize("outer, inner", list(itertools.product(JACOBIANS, JACOBIANS)))
def test_every_nesting_of_jacobians_gives_the_hessian(outer, inner):
    A, a = rand(4, 4), rand(4)
    H = JACOBIANS[outer](JACOBIANS[inner](_cubic(A)))(T(a))
    close(H, np.diag(6 * a) + A + A.T)


def test_products_with_the_hessian_in_every_order():
    A, a, v = rand(4, 4), rand(4), rand(4)
    f = _cubic(A)
    H = np.diag(6 * a) + A + A.T
    # forward over reverse
    close(func.jvp(func.grad(f), (T(a),), (T(v),))[1], H @ v)
    # reverse over forward
    close(func.grad(lambda x: func.jvp(f, (x,), (T(v),))[1])(T(a)), H @ v)
    # reverse over reverse
    close(func.vjp(func.grad(f), T(a))[1](T(v))[0], H.T @ v)
    close(func.grad(lambda x: (func.grad(f)(x) * T(v)).sum())(T(a)), H.T @ v)
    # linearize of the gradient
    close(func.linearize(func.grad(f), T(a))[1](T(v)), H @ v)
    # a Jacobian of a jvp and a jvp of a Jacobian
    close(func.jacrev(lambda x: func.jvp(f, (x,), (T(v),))[1])(T(a)), H @ v)
    close(func.jvp(func.jacrev(f), (T(a),), (T(v),))[1], H @ v)
    close(func.jacfwd(lambda x: func.vjp(f, x)[1](T(1.0))[0])(T(a)), H)


def test_third_derivative_by_triple_nesting():
    for a in rand(3):
        d3 = func.grad(func.grad(func.grad(lambda x: x.sin() * x)))(T(a))
        # d3/dx3 (x sin x) = -3 sin x - x cos x
        close(d3, -3 * np.sin(a) - a * np.cos(a))
        d3 = func.jacfwd(func.jacrev(func.jacfwd(lambda x: x.sin() * x)))(T(a))
        close(d3, -3 * np.sin(a) - a * np.cos(a))


# ---------------------------------------------------------------------------
# functional_call and stack_module_state
# ---------------------------------------------------------------------------


def _mlp():
    fg.manual_seed(0)
    return fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.Tanh(), fg.nn.Linear(4, 2)).double()


def test_functional_call_uses_the_given_parameters_and_restores_the_module():
    m = fg.nn.Linear(3, 2).double()
    W, b, x = rand(2, 3), rand(2), rand(5, 3)
    before = {k: v for k, v in m.named_parameters()}
    out = func.functional_call(m, {"weight": T(W), "bias": T(b)}, (T(x),))
    close(out, x @ W.T + b)
    assert all(getattr(m, k) is v for k, v in before.items())
    # Only the weight given: the module's own bias is used.
    out = func.functional_call(m, {"weight": T(W)}, T(x))
    close(out, x @ W.T + N(m.bias))


def test_functional_call_restores_the_module_when_the_call_raises():
    m = fg.nn.Linear(3, 2).double()
    weight = m.weight
    with pytest.raises(RuntimeError):
        func.functional_call(m, {"weight": T(rand(2, 3))}, (T(rand(5, 4)),))
    assert m.weight is weight


def test_grad_through_functional_call_equals_backward():
    m = _mlp()
    x, y = T(rand(6, 3)), T(rand(6, 2))
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p):
        return ((func.functional_call(m, p, (x,)) - y) ** 2).mean()

    g = func.grad(loss)(params)
    ((m(x) - y) ** 2).mean().backward()
    for k, p in m.named_parameters():
        close(g[k], N(p.grad), tol=1e-12)


def test_functional_call_ties_weights_and_checks_keys():
    m = fg.nn.Module()
    m.a = fg.nn.Linear(2, 2, bias=False).double()
    m.b = fg.nn.Linear(2, 2, bias=False).double()
    m.b.weight = m.a.weight
    m.forward = lambda x: m.b(m.a(x))
    W, x = rand(2, 2), rand(2)
    out = func.functional_call(m, {"a.weight": T(W)}, (T(x),))
    close(out, W @ (W @ x))
    out = func.functional_call(m, {"a.weight": T(W)}, (T(x),), tie_weights=False)
    close(out, N(m.a.weight) @ (W @ x))
    lin = fg.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): 'bias'"):
        func.functional_call(lin, {"weight": fg.zeros(2, 3)}, (fg.zeros(3),), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        func.functional_call(lin, ({"weight": fg.zeros(2, 3)}, {"weight": fg.zeros(2, 3)}), (fg.zeros(3),))


def test_stack_module_state():
    models = [_mlp(), fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.Tanh(), fg.nn.Linear(4, 2)).double()]
    params, buffers = func.stack_module_state(models)
    assert buffers == {}
    for k, p in params.items():
        assert p.is_leaf and p.requires_grad and tuple(p.shape)[0] == 2
        for i, m in enumerate(models):
            close(p[i], N(dict(m.named_parameters())[k]), tol=0)
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        func.stack_module_state([])
    models[1].eval()
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        func.stack_module_state(models)


def test_ensemble_gradients_by_functional_call_on_stacked_state():
    models = [_mlp(), _mlp()]
    with fg.no_grad():
        for p in models[1].parameters():
            p.mul_(0.5)
    params, _ = func.stack_module_state(models)
    x = T(rand(4, 3))

    def loss(p, i):
        return func.functional_call(models[0], {k: v[i] for k, v in p.items()}, (x,)).square().sum()

    g = func.grad(loss)(params, 1)
    models[1](x).square().sum().backward()
    for k, p in models[1].named_parameters():
        close(g[k][1], N(p.grad), tol=1e-12)
        close(g[k][0], np.zeros(tuple(p.shape)))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_errors_are_torchs():
    x = T(rand(3))
    scalar = "Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims"
    with pytest.raises(RuntimeError, match=scalar):
        func.grad(lambda x: x)(x)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a Tensor, got <class 'int'>"):
        func.grad(lambda x: 3)(x)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\) if has_aux is True"):
        func.grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        func.grad(lambda x: x.sum(), argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        func.grad(lambda x: x.sum(), argnums=1.0)(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        func.grad(lambda x: x.sum(), argnums=())(x)
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor, got <class 'float'>"):
        func.grad(lambda x: x.sum())(3.0)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(lambda x: x, x, x)
    with pytest.raises(RuntimeError, match="same python structure"):
        func.jvp(lambda x: x, (x,), (x, x))
    with pytest.raises(RuntimeError, match="tangent:0 with shape"):
        func.jvp(lambda x: x, (x,), (x[:2],))
    with pytest.raises(RuntimeError, match="expected f\\(\\*primals\\) to return only tensors"):
        func.vjp(lambda x: 3, x)
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        func.jacrev(lambda x: x, chunk_size=0)
    _, vjp_fn = func.vjp(lambda x: x * 2, x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vjp_fn(x[:2])
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        vjp_fn((x,))



def test_custom_function_under_transforms():
    a = rand(4)
    close(func.grad(lambda x: Cube.apply(x).sum())(T(a)), 3 * a**2)
    close(func.jacrev(Cube.apply)(T(a)), np.diag(3 * a**2))
    close(func.jacfwd(Cube.apply)(T(a)), np.diag(3 * a**2))
    close(func.hessian(lambda x: Cube.apply(x).sum())(T(a)), np.diag(6 * a))
    close(func.jvp(Cube.apply, (T(a),), (T(np.ones(4)),))[1], 3 * a**2)
