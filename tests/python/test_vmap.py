"""vmap: every batching rule against a Python loop over the batch (the op
run on each slice without vmap), in_dims/out_dims, nesting, randomness,
in-place rules, errors, and composition with the other transforms."""

from __future__ import annotations

import ferrograd as torch
import ferrograd.nn.functional as F
import numpy as np
import pytest
from custom_functions import Cube, Double
from ferrograd.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

BATCH = 3


def rnd(*shape, dtype=torch.float64, seed=[0]):  # noqa: B006  (a counter)
    seed[0] += 1
    g = np.random.default_rng(seed[0])
    return torch.tensor(g.standard_normal(shape), dtype=dtype)


def loop(fn, args, in_dims, out_dim=0):
    """The oracle: ``fn`` on each slice, stacked along ``out_dim``."""
    n = next(a.shape[d] for a, d in zip(args, in_dims, strict=True) if d is not None)
    outs = [fn(*[a if d is None else a.select(d, i) for a, d in zip(args, in_dims, strict=True)])
            for i in range(n)]
    if isinstance(outs[0], tuple):
        return tuple(torch.stack([o[k] for o in outs], out_dim) for k in range(len(outs[0])))
    return torch.stack(outs, out_dim)


def check(fn, *args, in_dims=0, out_dims=0, atol=1e-12):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    got = vmap(fn, in_dims=in_dims, out_dims=out_dims)(*args)
    want = loop(fn, args, dims, out_dims)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w, atol)
    else:
        _same(got, want, atol)


def _same(g, w, atol):
    assert type(g) is torch.Tensor, type(g)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.numpy(), w.numpy(), atol=atol, rtol=1e-10)


X = (BATCH, 4, 5)

UNARY = ["abs", "sin", "cos", "tan", "exp", "expm1", "log1p", "tanh", "sigmoid", "relu", "neg", "sign",
         "floor", "ceil", "round", "trunc", "frac", "square", "erf", "erfc", "atan", "sinh", "cosh",
         "asinh", "isfinite", "isnan", "logical_not", "signbit", "reciprocal", "exp2",
         "clone", "detach", "contiguous", "float", "double", "int", "long", "bool", "half"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_methods_and_functions(name):
    x = rnd(*X)
    check(lambda a: getattr(a, name)(), x)
    if callable(getattr(torch, name, None)) and not isinstance(getattr(torch, name), torch.dtype):
        check(getattr(torch, name), x, in_dims=1)


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "fmod", "remainder", "eq",
          "ne", "lt", "le", "gt", "ge", "logical_and", "logical_xor", "true_divide", "floor_divide"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasting(name):
    a, b, c = rnd(*X).abs() + 0.5, rnd(BATCH, 5).abs() + 0.5, rnd(4, 1).abs() + 0.5
    fn = getattr(torch, name)
    check(fn, a, b)                              # ranks 2 and 1 both batched
    check(fn, a, c, in_dims=(0, None))           # unbatched operand of the same rank
    check(fn, b, a.permute(1, 2, 0), in_dims=(0, 2))  # other batched along its last dim
    check(lambda u, v: getattr(u, name)(v), b, a.transpose(0, 1), in_dims=(0, 1))


@pytest.mark.parametrize("name", ["add", "mul", "sub", "maximum", "lt", "result_type"])
def test_batched_logical_scalars_promote_as_zero_dim(name):
    # A batched row that is a scalar ranks below dimensioned operands in
    # type promotion, as each row's 0-dim tensor does in the loop.
    fn = getattr(torch, name)
    s64, v32 = rnd(BATCH), rnd(BATCH, 3, dtype=torch.float32)
    i64, i32 = torch.arange(BATCH), torch.arange(3 * BATCH, dtype=torch.int32).reshape(BATCH, 3)
    for a, b in ((s64, v32), (v32, s64), (i64, i32), (s64, i32), (s64, v32[0])):
        dims = (0, 0) if b.dim() == 2 else (0, None)
        if name == "result_type":
            def is32(u, v):
                return torch.zeros(()) + (torch.result_type(u, v) == torch.float32)

            _same(vmap(is32, in_dims=dims)(a, b), loop(is32, (a, b), dims), 0)
            continue
        check(fn, a, b, in_dims=dims, atol=1e-6)
        check(fn, b, a, in_dims=dims[::-1], atol=1e-6)
    # Two batched scalars (and a dimensioned pair) keep ordinary promotion.
    check(fn if name != "result_type" else torch.add, s64, rnd(BATCH, dtype=torch.float32), atol=1e-6)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**", "<", ">=", "==", "@"])
def test_operators_both_sides(op):
    a = rnd(BATCH, 4).abs() + 0.1
    w = rnd(4).abs() + 0.1
    f1 = eval(f"lambda u, v: u {op} v")
    f2 = eval(f"lambda u, v: v {op} u")
    check(f1, a, w, in_dims=(0, None))
    check(f2, a, w, in_dims=(0, None))
    if op != "@":
        check(eval(f"lambda u: u {op} 2.0"), a)
        check(eval(f"lambda u: 2.0 {op} u"), a)


def test_ternary_pointwise():
    a, b, c = rnd(*X), rnd(BATCH, 5), rnd(4, 5)
    check(lambda x, y, z: torch.where(x > 0, y, z), a, b, c, in_dims=(0, 0, None))
    check(lambda x, y, z: torch.addcmul(x, y, z, value=0.5), a, b, c, in_dims=(0, 0, None))
    check(lambda x, y, z: torch.lerp(x, y, z.sigmoid()), a, b, c, in_dims=(0, 0, None))
    check(lambda x, y: x.clamp(min=y, max=y + 1), a, b)
    check(lambda x, m: x.masked_fill(m > 0, -1.0), a, b)


REDUCTIONS = [
    ("sum", ()), ("sum", (1,)), ("sum", ((0, 1),)), ("mean", (-1,)), ("prod", (0,)), ("std", ()),
    ("var", (1,)), ("amax", (0,)), ("amin", ()), ("argmax", ()), ("argmax", (1,)), ("argmin", (0,)),
    ("max", ()), ("min", ()), ("logsumexp", (1,)), ("norm", ()), ("all", ()), ("any", (1,)),
    ("count_nonzero", ()), ("cumsum", (1,)), ("cumprod", (0,)), ("softmax", (0,)),
    ("log_softmax", (-1,)),
]


@pytest.mark.parametrize("name,args", REDUCTIONS)
def test_reductions_and_dim_ops(name, args):
    x = rnd(*X)
    if name in ("all", "any", "count_nonzero"):
        x = (x > 0).to(torch.float64) if name == "count_nonzero" else x > 0
    check(lambda a: getattr(a, name)(*args), x)
    check(lambda a: getattr(a, name)(*args), x, in_dims=2)
    if name in ("cumsum", "cumprod", "softmax", "log_softmax"):
        check(lambda a: getattr(a, name)(*args), x, in_dims=2, out_dims=1)


def test_reductions_keepdim_and_tuples():
    x = rnd(*X)
    check(lambda a: a.sum(dim=1, keepdim=True), x)
    check(lambda a: a.sum(dim=None, keepdim=True), x)
    check(lambda a: a.max(dim=1), x)
    check(lambda a: a.max(1, keepdim=True).indices, x)
    check(lambda a: a.std(0, correction=0), x)
    check(lambda a: torch.std_mean(a, 1), x)
    check(lambda a: a.aminmax(dim=0), x)
    check(lambda a: a.sum(), rnd(BATCH))  # logical scalars
    check(lambda a: a.softmax(0), rnd(BATCH))


def test_shape_ops():
    x = rnd(*X)
    cases = [
        lambda a: a.view(20), lambda a: a.reshape(2, -1), lambda a: a.view(5, 4).t(),
        lambda a: a.permute(1, 0), lambda a: a.transpose(0, 1), lambda a: a.T, lambda a: a.mT,
        lambda a: a.unsqueeze(0), lambda a: a.unsqueeze(-1), lambda a: a[:, :1].squeeze(),
        lambda a: a[:1].squeeze(0), lambda a: a.flatten(), lambda a: a.expand(2, 4, 5),
        lambda a: a[:, :1].expand(4, 3), lambda a: a.repeat(2, 1), lambda a: a.tile((2,)),
        lambda a: a.flip(0), lambda a: a.roll(1, 1), lambda a: a.roll(2), lambda a: a.narrow(1, 1, 2),
        lambda a: a.select(1, 2), lambda a: a.unflatten(1, (5, 1)), lambda a: a.movedim(0, 1),
        lambda a: a.diagonal(), lambda a: a[:4, :4].tril(), lambda a: a.chunk(2, 1)[1],
        lambda a: a.split(2)[0], lambda a: a.unbind(1)[3], lambda a: a.contiguous().view_as(a.T.T),
        lambda a: a.reshape_as(a.T), lambda a: a[0].diag(), lambda a: a.diag(), lambda a: a[:4].trace(),
        lambda a: torch.cat([a, a * 2], 1), lambda a: torch.stack([a, a], -1), lambda a: a.ravel(),
    ]
    for fn in cases:
        check(fn, x)
        check(lambda a, fn=fn: fn(a.contiguous()), x.permute(1, 0, 2), in_dims=1)


def test_size_queries():
    x = rnd(*X)
    seen = []
    vmap(lambda a: seen.append((a.shape, a.dim(), a.ndim, a.numel(), a.size(-1), len(a))) or a)(x)
    assert seen == [(torch.Size([4, 5]), 2, 2, 20, 5, 4)]


def test_indexing():
    x = rnd(*X)
    idx = torch.tensor([3, 0, 0])
    check(lambda a: a[1], x)
    check(lambda a: a[..., 2], x)
    check(lambda a: a[None, 1:3, ::2], x)
    check(lambda a: a[idx], x)
    check(lambda a: a[:, idx], x)
    check(lambda a: a[idx, 1:], x)            # advanced then slice: batch stays in front
    check(lambda a: a[idx, :, None][..., 0, 0], x)
    bi = torch.tensor([[0, 1], [2, 3], [1, 1]])
    check(lambda a, i: a[i], x, bi)                               # batched index
    check(lambda a, i: a[i, 1:], x, bi)
    check(lambda a, i, j: a[i, j], x, bi, torch.tensor([[0, 4], [2, 3], [3, 0]]))
    check(lambda a, i, j: a[i, j], x, bi, torch.tensor([1, 2]), in_dims=(0, 0, None))
    check(lambda i: x[0][i], bi)                                  # unbatched table
    check(lambda a, i: a[i], x, torch.tensor([0, 3, 2]))          # one row index each
    check(lambda a, i: a.index_select(1, i), x, bi)
    check(lambda a, i: a.index_select(0, i), x, bi)
    check(lambda a, i: a[:, i], x, torch.tensor([[0, 1], [2, 3], [4, 4]]))
    check(lambda a, i: a[:, i, None], x, torch.tensor([[0, 1], [2, 3], [4, 4]]))
    check(lambda i: x[0][:, i], torch.tensor([[0, 1], [2, 3], [4, 4]]))
    mask = torch.tensor([True, False, True, True, False])
    check(lambda a: a[:, mask], x)                                # the same mask for every row
    with pytest.raises(RuntimeError, match="dynamic shape"):
        vmap(lambda a: a[a > 0])(x)
    check(lambda a, i: a.gather(1, i), x, torch.randint(0, 5, (BATCH, 4, 2)))
    check(lambda a, i: a.gather(1, i), x, torch.randint(0, 5, (4, 2)), in_dims=(0, None))
    check(lambda a: a.index_select(1, idx), x)
    check(lambda a: a.take(idx), x)


def test_setitem_and_inplace():
    x = rnd(*X)

    def f(a, b):
        a = a.clone()
        a[0] = b
        a[:, 1] += 1.0
        a.mul_(2).add_(b)
        a.clamp_(min=-1.0)
        return a

    check(f, x, rnd(BATCH, 5))
    check(f, x, rnd(5), in_dims=(0, None))


def test_inplace_into_unbatched_raises_like_torch():
    x = rnd(BATCH, 4)
    msg = r"output with shape \[4\] doesn't match the broadcast shape \[3, 4\]"
    with pytest.raises(RuntimeError, match=msg):
        vmap(lambda a, b: b.add_(a), in_dims=(0, None))(x, torch.zeros(4))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        vmap(lambda a: torch.zeros(4).copy_(a))(x)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        vmap(lambda a: torch.zeros(4).__setitem__(0, a[0]))(x)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        vmap(lambda a: torch.add(a, 1, out=torch.zeros(4)))(x)


def test_matmul_family_against_loop():
    for sa, sb, da, db in [((BATCH, 4), (4, 3), 0, None), ((BATCH, 2, 4), (4, 3), 0, None),
                           ((4,), (BATCH, 4, 3), None, 0), ((2, 4), (BATCH, 4), None, 0),
                           ((BATCH, 4), (BATCH, 4), 0, 0), ((BATCH, 2, 4), (BATCH, 4, 3), 0, 0),
                           ((5, 2, 4), (BATCH, 4, 3), None, 0), ((4, BATCH), (4,), 1, None),
                           ((BATCH, 5, 2, 4), (4, 3), 0, None), ((2, 4), (BATCH, 5, 4, 3), None, 0)]:
        check(torch.matmul, rnd(*sa), rnd(*sb), in_dims=(da, db))
    check(torch.mm, rnd(BATCH, 2, 4), rnd(4, 3), in_dims=(0, None))
    check(torch.bmm, rnd(BATCH, 2, 2, 4), rnd(2, 4, 3), in_dims=(0, None))
    check(torch.mv, rnd(2, 4), rnd(BATCH, 4), in_dims=(None, 0))
    check(torch.dot, rnd(BATCH, 4), rnd(BATCH, 4))
    check(torch.outer, rnd(BATCH, 4), rnd(BATCH, 3))
    check(torch.outer, rnd(BATCH, 4), rnd(3), in_dims=(0, None))
    check(lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0), rnd(3), rnd(BATCH, 2, 4), rnd(4, 3),
          in_dims=(None, 0, None))
    check(torch.addmm, rnd(3), rnd(BATCH, 2, 4), rnd(4, 3), in_dims=(None, 0, None))
    check(lambda a, b: torch.einsum("ij,jk->ik", a, b), rnd(BATCH, 2, 4), rnd(4, 3), in_dims=(0, None))
    check(lambda a, b: torch.einsum("ij,ij", a, b), rnd(BATCH, 2, 4), rnd(BATCH, 2, 4))
    check(lambda a, b: torch.einsum("...i,i->...", a, b), rnd(BATCH, 2, 4), rnd(4), in_dims=(0, None))


def test_creation_like_and_casts():
    x = rnd(*X)
    check(lambda a: torch.zeros_like(a) + a, x)
    check(lambda a: torch.full_like(a, 2.0) * a, x)
    check(lambda a: torch.ones_like(a, dtype=torch.float32), x)
    check(lambda a: a.to(torch.float32), x)
    check(lambda a: a.type_as(torch.zeros(1, dtype=torch.float32)), x)


def test_nn_functional():
    x = rnd(BATCH, 2, 3, 8, 8)
    w = rnd(4, 3, 3, 3)
    check(lambda a: F.conv2d(a, w, padding=1), x)
    check(lambda a: F.conv2d(a, w, stride=2), x[:, 0])            # unbatched-N input
    check(lambda a: F.max_pool2d(a, 2), x)
    check(lambda a: F.avg_pool2d(a, 2), x)
    check(lambda a: F.adaptive_avg_pool2d(a, 1), x)
    h = rnd(BATCH, 6, 10)
    lw, lb = rnd(7, 10), rnd(7)
    check(lambda a: F.linear(a, lw, lb), h)
    check(lambda a: F.linear(a, lw), h[:, 0])
    check(lambda a, wt: F.linear(a, wt), h, rnd(BATCH, 7, 10))    # per-row weights
    check(lambda a: F.layer_norm(a, (10,)), h)
    check(lambda a: F.gelu(a), h)
    check(lambda a: F.softplus(a), h)
    check(lambda a: F.silu(a), h)
    check(lambda a: F.log_softmax(a, dim=-1), h)
    check(lambda a: F.normalize(a, dim=-1), h)
    check(lambda a: F.pad(a, (1, 2)), h)
    tgt = torch.randint(0, 10, (BATCH, 6))
    for red in ("mean", "sum", "none"):
        check(lambda a, t, red=red: F.cross_entropy(a, t, reduction=red), h, tgt)
        check(lambda a, t, red=red: F.nll_loss(a.log_softmax(-1), t, reduction=red), h[:, 0], tgt[:, 0])
    check(lambda a, t: F.mse_loss(a, t), h, rnd(BATCH, 6, 10))
    emb = rnd(10, 3)
    check(lambda i: F.embedding(i, emb), torch.randint(0, 10, (BATCH, 4)))


def test_in_dims_out_dims_and_pytrees():
    x, y = rnd(4, BATCH), rnd(BATCH, 2)
    got = vmap(lambda d: d["a"].sum() + d["b"][0], in_dims=({"a": 1, "b": 0},))({"a": x, "b": y})
    want = x.sum(0) + y[:, 0]
    np.testing.assert_allclose(got.numpy(), want.numpy())
    got = vmap(lambda p: (p[0] * 2, p[1]), in_dims=((1, None),), out_dims=(1, None))((x, y))
    np.testing.assert_allclose(got[0].numpy(), (x * 2).numpy())
    assert got[1] is y
    out = vmap(lambda a: torch.ones(2), in_dims=1)(x)               # unbatched output expands
    assert out.shape == (BATCH, 2)
    np.testing.assert_allclose(vmap(lambda a: a, in_dims=1, out_dims=-1)(x).numpy(), x.numpy())
    kw = vmap(lambda a, scale=1.0: a * scale)(y, scale=3.0)
    np.testing.assert_allclose(kw.numpy(), (y * 3).numpy())


def test_nested_vmap_is_outer_product_of_loops():
    a, b = rnd(BATCH, 4), rnd(5, 4)
    got = vmap(lambda u: vmap(lambda v: (u * v).sum())(b))(a)
    np.testing.assert_allclose(got.numpy(), (a @ b.T).numpy(), atol=1e-12)
    got = vmap(vmap(torch.dot, in_dims=(None, 0)), in_dims=(0, None))(a, b)
    np.testing.assert_allclose(got.numpy(), (a @ b.T).numpy(), atol=1e-12)
    x = rnd(2, BATCH, 4)
    got = vmap(vmap(lambda u: u.softmax(0) * u.sum()))(x)
    want = torch.stack([torch.stack([r.softmax(0) * r.sum() for r in row]) for row in x])
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


def test_chunk_size_matches_unchunked():
    x = rnd(7, 4)
    f = lambda a: (a.sin() * a.sum(), a.max())  # noqa: E731
    for cs in (1, 2, 3, 7, 10):
        got = vmap(f, chunk_size=cs)(x)
        want = vmap(f)(x)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_randomness_modes():
    x = torch.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + torch.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: F.dropout(a + 1, 0.5))(x)
    torch.manual_seed(0)
    same = vmap(lambda a: a + torch.rand(3), randomness="same")(x)
    assert all(torch.equal(same[0], same[i]) for i in range(4))
    diff = vmap(lambda a: a + torch.rand(3), randomness="different")(x)
    assert not torch.equal(diff[0], diff[1])
    same = vmap(lambda a: torch.rand_like(a), randomness="same")(x)
    assert all(torch.equal(same[0], same[i]) for i in range(4))
    drop = vmap(lambda a: F.dropout(a + 1, 0.5), randomness="different")(torch.zeros(64, 50))
    assert not torch.equal(drop[0], drop[1])
    frac = (drop == 0).to(torch.float64).mean().item()
    assert 0.4 < frac < 0.6
    drop = vmap(lambda a: F.dropout(a + 1, 0.5), randomness="same")(torch.zeros(4, 50))
    assert all(torch.equal(drop[0], drop[i]) for i in range(4))
    u = vmap(lambda a: a.clone().uniform_(), randomness="different")(x)
    assert not torch.equal(u[0], u[1]) and bool(((u >= 0) & (u < 1)).all())
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="sometimes")


def test_errors_match_torch():
    x = rnd(BATCH, 4)
    with pytest.raises(ValueError, match="got sizes \\[3, 4\\] for the mapped dimension"):
        vmap(torch.add)(x, rnd(4, 4))
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'int'>"):
        vmap(lambda a: 3)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a, out_dims=None)(x)
    with pytest.raises(ValueError, match="expected in_dim to satisfy -2 <= in_dim < 2"):
        vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        vmap(lambda a: a, in_dims=(0, 0))(x)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        vmap(lambda a: a, in_dims=[0])(x)
    with pytest.raises(ValueError, match="got no inputs"):
        vmap(lambda: 1)()
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda a, b: a)(x, 3)
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(lambda a: a, chunk_size=0)
    with pytest.raises(RuntimeError, match="calling .item\\(\\) on a Tensor"):
        vmap(lambda a: a.sum().item())(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a if a.sum() > 0 else -a)(x)
    with pytest.raises(RuntimeError, match="dynamic shape"):
        vmap(lambda a: a.nonzero())(x)
    with pytest.raises(IndexError, match="Dimension out of range"):
        vmap(lambda a: a.sum(2))(x)


def test_fallback_is_counted_and_correct():
    torch.func.reset_vmap_fallbacks()
    x = rnd(BATCH, 4, 4)
    b = rnd(BATCH, 4)
    check(lambda a, v: torch.linalg.solve(a @ a.mT + torch.eye(4, dtype=torch.float64), v), x, b)
    counts = torch.func.vmap_fallbacks()
    assert counts.get("linalg.solve", 0) >= 1
    torch.func.reset_vmap_fallbacks()
    check(lambda a: a.sum(0).sin(), x)
    assert torch.func.vmap_fallbacks() == {}
    torch.func.set_vmap_fallback_warning_enabled(True)
    try:
        with pytest.warns(UserWarning, match="batching rule for linalg.solve"):
            vmap(lambda a, v: torch.linalg.solve(a @ a.mT + torch.eye(4, dtype=torch.float64), v))(x, b)
    finally:
        torch.func.set_vmap_fallback_warning_enabled(False)


def test_modules_are_not_changed_and_swapped_methods_are_restored():
    x = rnd(2, 2)
    x.add(1)   # restores the methods an earlier vmap swapped
    original, original_add = torch.sum, torch.Tensor.add
    seen = []
    vmap(lambda a: seen.append(torch.sum is original) or a)(x)
    assert seen == [True]
    np.testing.assert_allclose(torch.sum(x).numpy(), x.numpy().sum())
    np.testing.assert_allclose(x.add(1).numpy(), x.numpy() + 1)   # a swapped method restores
    assert torch.Tensor.add is original_add


def test_names_bound_before_vmap_are_batched():
    # Bound at call time of the test, before vmap runs, as a module's
    # ``from ferrograd import ...`` would be.
    from ferrograd import cat, matmul, sin, softmax, stack
    from ferrograd import sum as tsum
    from ferrograd.linalg import vector_norm
    from ferrograd.nn.functional import gelu, linear

    w = rnd(4, 4)
    x = rnd(BATCH, 4)
    check(lambda r: cat([sin(r), softmax(r, 0)]), x)
    check(lambda r: stack([matmul(w, r), linear(r, w)]).sum(0), x)
    check(lambda r: tsum(gelu(r)) + vector_norm(r), x)
    check(lambda r: tsum(r, 0, keepdim=True), x)


def test_methods_of_unbatched_tensors_take_batched_arguments():
    w = rnd(4)
    x = rnd(BATCH, 4)
    for name in ("atan2", "fmod", "remainder", "eq", "lt", "ge", "logical_and", "true_divide", "mul"):
        check(lambda r, n=name: getattr(w, n)(r), x)
    check(lambda r: (w > 0).bitwise_xor(r > 0), x)
    for name in ("divide", "subtract", "clamp_min", "clamp_max", "isclose", "addcdiv"):
        check(lambda r, n=name: getattr(w, n)(r, r) if n == "addcdiv" else getattr(w, n)(r), x)
    check(lambda r: w.clip(r, None), x)
    W = rnd(4, 4)
    one = torch.tensor([1])
    check(lambda r: W.index_add(0, one, r.unsqueeze(0), alpha=2), x)
    check(lambda r: W.index_copy(0, one, r.unsqueeze(0)), x)
    check(lambda r: W.scatter_add(0, torch.zeros(1, 4, dtype=torch.int64), r.unsqueeze(0)), x)
    check(lambda r: r.unsqueeze(1).expand(4, 4).index_add(1, one, r.unsqueeze(1)), x)
    # A cast to another tensor's dtype keeps self's shape.
    f32 = rnd(BATCH, 4, dtype=torch.float32)
    got = vmap(lambda r: w.type_as(r))(f32)
    assert got.dtype == torch.float32 and tuple(got.shape) == (BATCH, 4)
    np.testing.assert_allclose(got.numpy(), np.broadcast_to(w.numpy().astype(np.float32), (BATCH, 4)))
    got = vmap(lambda r: w.to(r))(f32)
    assert got.dtype == torch.float32 and tuple(got.shape) == (BATCH, 4)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        vmap(lambda r: w.clone().atan2_(r))(x)
    with pytest.raises(TypeError, match="other must be a Tensor or a number"):
        w.atan2("a")


# ---------------------------------------------------------------------------
# Composition with the other transforms
# ---------------------------------------------------------------------------

W = rnd(3, 3)


def _f(a):
    return torch.tanh(W @ a).pow(2).sum()


@pytest.mark.parametrize("transform", [grad, jacrev, jacfwd, hessian])
def test_vmap_of_transform_equals_loop(transform):
    x = rnd(5, 3)
    check(transform(_f), x, atol=1e-12)


def test_vmap_of_jvp_and_vjp():
    x, v = rnd(5, 3), rnd(5, 3)
    check(lambda a, t: jvp(_f, (a,), (t,))[1], x, v)
    check(lambda a: vjp(torch.sin, a)[1](torch.ones(3, dtype=torch.float64))[0], x)


def test_transform_of_vmap_and_nesting():
    x = rnd(5, 3)
    g = grad(lambda w: vmap(lambda a: torch.tanh(w @ a).sum())(x).sum())(W)
    want = sum(grad(lambda w, row=row: torch.tanh(w @ row).sum())(W) for row in x)
    np.testing.assert_allclose(g.numpy(), want.numpy(), atol=1e-12)
    xx = rnd(2, 5, 3)
    check(vmap(grad(_f)), xx)
    check(jacrev(vmap(torch.sin)), rnd(4, 3))


def test_per_sample_gradients_of_a_model_equal_per_example_backward():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs, ys = rnd(5, 6), torch.randint(0, 3, (5,))

    def loss(p, x, y):
        out = torch.func.functional_call(model, p, (x.unsqueeze(0),))
        return F.cross_entropy(out, y.unsqueeze(0))

    got = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
    for i in range(5):
        model.zero_grad()
        F.cross_entropy(model(xs[i:i + 1]), ys[i:i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(got[k][i].numpy(), p.grad.numpy(), atol=1e-12)


def test_model_ensembling_with_stacked_state():
    torch.manual_seed(1)
    models = [torch.nn.Linear(4, 2).double() for _ in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    x = rnd(5, 4)

    def run(p, b, data):
        return torch.func.functional_call(models[0], (p, b), (data,))

    got = vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    want = torch.stack([m(x) for m in models])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)


# ---------------------------------------------------------------------------
# autograd.Function under vmap
# ---------------------------------------------------------------------------


class CubeGenerated(Cube):
    """Cube in the setup_context style (backward and jvp inherited)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])


class ScaleWithRule(torch.autograd.Function):
    """y = x * s (s a tensor), with a hand-written batching rule."""

    calls = []

    @staticmethod
    def forward(x, s):
        return x * s

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[1])

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return g * s, None

    @staticmethod
    def vmap(info, in_dims, x, s):
        ScaleWithRule.calls.append((info.batch_size, info.randomness, in_dims))
        x = x.movedim(in_dims[0], 0) if in_dims[0] is not None else x.unsqueeze(0)
        s = s.movedim(in_dims[1], 0) if in_dims[1] is not None else s.unsqueeze(0)
        return ScaleWithRule.apply(x, s), 0


class NoRule(Double):
    """Double in the setup_context style, without a batching rule."""

    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass


class OldStyle(Double):
    """Double (whose forward takes ctx) asking for a generated rule."""

    generate_vmap_rule = True


def test_function_generate_vmap_rule_values_grads_and_jvp():
    x = rnd(BATCH, 4)
    check(CubeGenerated.apply, x)
    check(grad(lambda a: CubeGenerated.apply(a).sum()), x)
    np.testing.assert_allclose(vmap(grad(lambda a: CubeGenerated.apply(a).sum()))(x).numpy(),
                               (3 * x ** 2).numpy(), atol=1e-12)
    t = rnd(BATCH, 4)
    got = vmap(lambda a, v: jvp(CubeGenerated.apply, (a,), (v,))[1])(x, t)
    np.testing.assert_allclose(got.numpy(), (3 * x ** 2 * t).numpy(), atol=1e-12)
    # Outer autograd through a vmapped Function.
    xr = x.clone().requires_grad_()
    vmap(CubeGenerated.apply)(xr).sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), (3 * x ** 2).numpy(), atol=1e-12)


def test_function_user_vmap_rule():
    x, s = rnd(BATCH, 4), rnd(4)
    ScaleWithRule.calls.clear()
    got = vmap(ScaleWithRule.apply, in_dims=(0, None), randomness="same")(x, s)
    np.testing.assert_allclose(got.numpy(), (x * s).numpy())
    assert ScaleWithRule.calls == [(BATCH, "same", (0, None))]
    s2 = rnd(BATCH, 4)
    got = vmap(ScaleWithRule.apply, in_dims=(1, 0))(x.T.contiguous(), s2)
    np.testing.assert_allclose(got.numpy(), (x * s2).numpy())
    xr = x.clone().requires_grad_()
    vmap(ScaleWithRule.apply, in_dims=(0, None))(xr, s).sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), s.expand(BATCH, 4).numpy())
    nested = vmap(vmap(ScaleWithRule.apply, in_dims=(0, None)), in_dims=(0, None))(rnd(2, BATCH, 4), s)
    assert nested.shape == (2, BATCH, 4)


def test_function_without_rule_errors_like_torch():
    x = rnd(BATCH, 4)
    with pytest.raises(RuntimeError, match="does not have vmap support. Please override and implement"):
        vmap(NoRule.apply)(x)
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        vmap(OldStyle.apply)(x)
    np.testing.assert_allclose(NoRule.apply(x).numpy(), (2 * x).numpy())   # fine outside vmap


# ---------------------------------------------------------------------------
# Sweeps over the Tensor methods
# ---------------------------------------------------------------------------

_NOT_MAPPABLE = {
    # Data-dependent, random, in-place on the argument, or not tensor ops.
    "backward", "item", "tolist", "numpy", "requires_grad_", "retain_grad", "detach_", "cpu",
    "data_ptr", "element_size", "storage_offset", "stride", "size", "dim", "ndimension", "numel",
    "nelement", "is_contiguous", "is_complex", "is_floating_point", "is_signed", "is_inference",
    "is_conj", "is_neg", "nonzero", "argwhere", "bernoulli", "bernoulli_", "uniform_", "normal_",
    "exponential_", "random_", "multinomial", "type", "register_hook",
    "register_post_accumulate_grad_hook", "equal", "masked_select", "get_device", "allclose",
    "cauchy_", "log_normal_", "geometric_", "dim_order", "is_distributed", "unique", "unique_consecutive",
    "histogram",
}


def _methods(required):
    """Tensor methods whose only required parameters (after self) are
    ``required``."""
    import inspect

    out = []
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_") or name in _NOT_MAPPABLE:
            continue
        try:
            sig = inspect.signature(getattr(torch.Tensor, name))
        except (TypeError, ValueError):
            continue
        params = list(sig.parameters.values())[1:]
        needed = [p.name for p in params
                  if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if needed == list(required):
            out.append(name)
    return out


def _as_float64(fn):
    def run(a):
        r = fn(a)
        if isinstance(r, tuple):
            return tuple(t.to(torch.float64) if t.dtype == torch.bfloat16 else t for t in r)
        return r.to(torch.float64) if r.dtype == torch.bfloat16 else r
    return run


def _loop_works(fn, x, dims=0):
    try:
        loop(fn, (x,), (dims,))
    except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError):
        return False
    return True


@pytest.mark.parametrize("name", _methods(()))
def test_every_method_without_arguments_equals_a_loop(name):
    x = rnd(BATCH, 4, 4).abs() + 0.1
    fn = _as_float64(lambda a: getattr(a.clone() if name.endswith("_") else a, name)())
    if not _loop_works(fn, x):
        pytest.skip(f"{name}() does not run on these slices without vmap either")
    check(fn, x)
    check(fn, x.permute(1, 0, 2), in_dims=1)


@pytest.mark.parametrize("name", _methods(("dim",)) + [n for n in _methods(()) if n in (
    "sum", "mean", "prod", "std", "var", "amax", "amin", "argmax", "argmin", "all", "any", "norm",
    "count_nonzero", "logsumexp", "max", "min", "squeeze", "unbind", "flatten")])
@pytest.mark.parametrize("dim", [0, -1])
def test_every_method_with_a_dim_equals_a_loop(name, dim):
    x = rnd(BATCH, 4, 5).abs() + 0.1
    fn = _as_float64(lambda a: getattr(a.clone() if name.endswith("_") else a, name)(dim=dim)
                     if name != "flatten" else a.flatten(dim))
    if not _loop_works(fn, x):
        pytest.skip(f"{name}(dim={dim}) does not run on these slices without vmap either")
    check(fn, x)
    check(fn, x.permute(2, 0, 1), in_dims=1)


def test_vmap_and_plain_code_on_several_threads():
    import threading

    x = rnd(8, 5)
    w = rnd(5)
    want_v = (x * w).sum(1).sin()
    want_g = torch.stack([grad(lambda r: (r * w).sum().sin())(row) for row in x])
    errors = []

    def vmapped():
        try:
            for _ in range(30):
                got = vmap(lambda r: torch.sin(torch.sum(r * w)))(x)
                np.testing.assert_allclose(got.numpy(), want_v.numpy(), atol=1e-12)
                got = vmap(grad(lambda r: torch.sum(r * w).sin()))(x)
                np.testing.assert_allclose(got.numpy(), want_g.numpy(), atol=1e-12)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    def plain():
        try:
            for _ in range(200):
                got = torch.sin(torch.sum(x * w, 1))
                np.testing.assert_allclose(got.numpy(), want_v.numpy(), atol=1e-12)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=f) for f in (vmapped, plain, vmapped, plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
