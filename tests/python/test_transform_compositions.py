"""Every composition of the func transforms agrees with a loop of the
untransformed function: random programs (``transform_programs``), and the
cases that used to go wrong, one by one (vmap over a vjp function built
outside the vmap)."""

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.func import jacrev, linearize, vjp, vmap
from transform_programs import DT, Program, check_program

# A few hundred programs in CI; run the module by hand for thousands.
SEEDS = range(10_000, 10_300)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_transforms_agree_with_loops(seed):
    ran = check_program(Program(seed))
    assert "vmap(vjp_fn)" in ran and "hessians" in ran


def rnd(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).normal(size=shape), dtype=DT)


def assert_close(got, want):
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def loop_vjp(f, primals, cot):
    """The vjp of ``f`` at ``primals`` for one cotangent, by autograd.grad."""
    ps = [p.detach().requires_grad_() for p in primals]
    out = f(*ps)
    return torch.autograd.grad(out, ps, cot, allow_unused=True, materialize_grads=True)


def test_vmap_of_vjp_fn_of_scaling_is_the_scaled_identity():
    x = rnd(3)
    _, vjp_fn = vjp(lambda t: t * 2, x)
    (got,) = vmap(vjp_fn)(torch.eye(3, dtype=DT))
    assert_close(got, 2 * torch.eye(3, dtype=DT))


def test_vmap_of_vjp_fn_of_matvec_is_the_matrix():
    W, x = rnd(4, 4, seed=1), rnd(4, seed=2)
    _, vjp_fn = vjp(lambda t: W @ t, x)
    (got,) = vmap(vjp_fn)(torch.eye(4, dtype=DT))
    assert_close(got, W)


def test_vmap_of_vjp_fn_with_several_inputs_pytrees_aux_and_dims():
    a, b = rnd(3, seed=3), {"w": rnd(2, 3, seed=4), "s": rnd(seed=5)}

    def f(a, b):
        y = b["w"] @ a.sin() * b["s"]
        return {"y": y, "z": a.cumsum(0)}, a.norm()

    _, vjp_fn, aux = vjp(f, a, b, has_aux=True)
    assert_close(aux, a.norm())
    cots = {"y": rnd(2, 5, seed=6), "z": rnd(3, 5, seed=7)}
    ga, gb = vmap(vjp_fn, in_dims=({"y": 1, "z": 1},), out_dims=(1, {"w": 0, "s": 0}))(cots)
    for i in range(5):
        want = loop_vjp(lambda a, w, s: f(a, {"w": w, "s": s})[0]["y"], (a, b["w"], b["s"]),
                        cots["y"][:, i])
        want_z = loop_vjp(lambda a: a.cumsum(0), (a,), cots["z"][:, i])
        assert_close(ga[:, i], want[0] + want_z[0])
        assert_close(gb["w"][i], want[1])
        assert_close(gb["s"][i], want[2])


def test_vmap_of_vmap_of_vjp_fn_and_vjp_fn_inside_vmap():
    W, x = rnd(3, 4, seed=8), rnd(4, seed=9)

    def f(t):
        return torch.tanh(W @ t)

    _, vjp_fn = vjp(f, x)
    cots = rnd(2, 5, 3, seed=10)
    (got,) = vmap(vmap(vjp_fn))(cots)
    for i in range(2):
        for j in range(5):
            assert_close(got[i, j], loop_vjp(f, (x,), cots[i, j])[0])
    xs = rnd(6, 4, seed=11)
    (got,) = vmap(lambda a: vmap(vjp(f, a)[1])(cots[0]))(xs)
    for i in range(6):
        for j in range(5):
            assert_close(got[i, j], loop_vjp(f, (xs[i],), cots[0, j])[0])


def test_jacrev_of_a_function_that_vmaps_a_vjp_fn():
    W, x, C = rnd(3, 4, seed=12), rnd(4, seed=13), rnd(2, 3, seed=14)

    def h(a):
        return vmap(vjp(lambda t: torch.tanh(W @ t), a)[1])(C)[0]

    got = jacrev(h)(x)
    # d/da of W^T (c * (1 - tanh(W a)^2)) is W^T diag(c * -2 tanh (1 - tanh^2)) W.
    th = torch.tanh(W @ x)
    for i in range(2):
        want = W.T @ torch.diag(C[i] * -2 * th * (1 - th * th)) @ W
        np.testing.assert_allclose(got[i].numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_vmap_of_linearize_jvp_fn_is_the_jacobian():
    x = rnd(4, seed=15)
    _, jvp_fn = linearize(torch.sin, x)
    got = vmap(jvp_fn)(torch.eye(4, dtype=DT))
    assert_close(got, torch.diag(torch.cos(x)))


def test_autograd_grad_inside_vmap_on_a_graph_built_outside_gives_each_row():
    x = rnd(3, seed=16).requires_grad_()
    y = torch.tanh(x) * 3
    cots = rnd(4, 3, seed=17)
    (got,) = vmap(lambda c: torch.autograd.grad(y, x, c, retain_graph=True))(cots)
    assert_close(got, cots * 3 * (1 - torch.tanh(x.detach()) ** 2))
    # With the user's own batch of cotangents as well.
    many = rnd(4, 2, 3, seed=18)
    (got,) = vmap(lambda c: torch.autograd.grad(y, x, c, retain_graph=True, is_grads_batched=True))(many)
    assert got.shape == (4, 2, 3)
    assert_close(got, many * 3 * (1 - torch.tanh(x.detach()) ** 2))
    # An unused input: None, or zeros when materialized.
    z = rnd(2, seed=19).requires_grad_()
    res = vmap(lambda c: torch.autograd.grad(y, (x, z), c, retain_graph=True, allow_unused=True)[1],
               out_dims=None)(cots)
    assert res is None
    (_, gz) = vmap(lambda c: torch.autograd.grad(y, (x, z), c, retain_graph=True,
                                                 materialize_grads=True))(cots)
    assert_close(gz, torch.zeros(4, 2, dtype=DT))
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        vmap(lambda c: torch.autograd.grad(y, (x, z), c, retain_graph=True))(cots)


def test_autograd_functional_vjp_inside_vmap_gives_each_row():
    x = rnd(3, seed=20)
    cots = rnd(5, 3, seed=21)
    out, got = vmap(lambda c: torch.autograd.functional.vjp(torch.sin, x, c))(cots)
    assert_close(out, torch.sin(x).expand(5, 3))
    assert_close(got, cots * torch.cos(x))


AF_W = rnd(3, 3, seed=24)


def af_vector(t):
    return torch.tanh(AF_W @ t)


def af_scalar(t):
    return torch.tanh(AF_W @ t).pow(2).sum()


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
@pytest.mark.parametrize("batched", ["v", "x", "both"])
def test_autograd_functional_products_inside_vmap_equal_loops(name, batched):
    fn = getattr(torch.autograd.functional, name)
    f = af_scalar if name in ("hvp", "vhp") else af_vector
    xs, vs = rnd(4, 3, seed=25), rnd(4, 3, seed=26)
    dims = {"v": (None, 0), "x": (0, None), "both": (0, 0)}[batched]
    x_in = xs[0] if dims[0] is None else xs
    v_in = vs[0] if dims[1] is None else vs
    out, prod = vmap(lambda a, v: fn(f, a, v), in_dims=dims)(x_in, v_in)
    for i in range(4):
        want_out, want_prod = fn(f, xs[0] if dims[0] is None else xs[i], vs[0] if dims[1] is None else vs[i])
        assert_close(out[i], want_out)
        assert_close(prod[i], want_prod)


@pytest.mark.parametrize("vectorize", [False, True])
def test_autograd_functional_jacobian_and_hessian_inside_vmap_equal_loops(vectorize):
    xs = rnd(4, 3, seed=27)
    jac = vmap(lambda a: torch.autograd.functional.jacobian(af_vector, a, vectorize=vectorize))(xs)
    hes = vmap(lambda a: torch.autograd.functional.hessian(af_scalar, a, vectorize=vectorize))(xs)
    for i in range(4):
        assert_close(jac[i], torch.autograd.functional.jacobian(af_vector, xs[i]))
        assert_close(hes[i], torch.autograd.functional.hessian(af_scalar, xs[i]))
    with pytest.raises(RuntimeError, match="forward-mode"):
        vmap(lambda a: torch.autograd.functional.jacobian(af_vector, a, vectorize=True,
                                                          strategy="forward-mode"))(xs)


def test_refused_compositions_raise_runtime_error():
    x = rnd(3, seed=22).requires_grad_()
    y = x * 2
    with pytest.raises(RuntimeError, match="backward"):
        vmap(lambda c: y.backward(c, retain_graph=True))(torch.eye(3, dtype=DT))
    with pytest.raises(RuntimeError, match="backward"):
        vmap(lambda c: torch.autograd.backward(y, c, retain_graph=True))(torch.eye(3, dtype=DT))
    assert x.grad is None
    # Gradient with respect to a tensor made outside the vmap of a graph
    # batched inside it: each row would get the sum of all rows.
    with pytest.raises(RuntimeError, match="not batched at every|batched at vmap levels"):
        vmap(lambda v: torch.autograd.grad((x * v).sum(), x))(torch.eye(3, dtype=DT))
    # A vjp function that escaped from its vmap.
    escaped = []

    def keep(t):
        escaped.append(vjp(torch.sin, t)[1])
        return t

    vmap(keep)(rnd(2, 3, seed=23))
    with pytest.raises(RuntimeError, match="escaped"):
        escaped[0](torch.ones(3, dtype=DT))
    with pytest.raises(RuntimeError, match="escaped"):
        vmap(escaped[0])(torch.ones(2, 3, dtype=DT))


@pytest.mark.parametrize("ord", [2, 3])
def test_derivatives_of_a_norm_at_zero_are_zero_in_every_mode(ord):
    # The norm's gradient at 0 is 0 (torch's subgradient); its derivative,
    # taken by the double-backward trick (linearize, jvp inside a dual
    # level), must not turn the masked 0/0 into NaN.
    def f(t):
        return torch.linalg.vector_norm(t, ord=ord, dim=0, keepdim=True)

    x = torch.zeros(3, dtype=DT)
    _, jvp_fn = linearize(f, x)
    assert_close(jvp_fn(torch.ones(3, dtype=DT)), torch.zeros(1, dtype=DT))
    assert_close(vmap(jvp_fn)(torch.eye(3, dtype=DT)), torch.zeros(3, 1, dtype=DT))
    assert_close(jacrev(f)(x), torch.zeros(1, 3, dtype=DT))
