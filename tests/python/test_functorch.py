"""ferrograd.functorch: torch 2.13's deprecated functorch API (transforms
with FutureWarnings, make_functional, make_functional_with_buffers,
combine_state_for_ensemble)."""

from __future__ import annotations

import re
import warnings

import ferrograd
import ferrograd.functorch as functorch
import pytest
from ferrograd import nn

TRANSFORMS = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


def _message(api: str, new_api: str) -> str:
    # The text torch 2.13's functorch emits (functorch.<api> called).
    return (
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future version of "
        f"PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 release notes and/or the "
        "`torch.func` migration guide for more details https://pytorch.org/docs/main/func.migrating.html"
    )


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kwargs)


def _fd_grads(f, tensors, eps=1e-6):
    """Central finite differences of the scalar ``f(tensors)`` w.r.t. each
    tensor (float64), by perturbing one element at a time."""
    grads = []
    for t in tensors:
        g = ferrograd.zeros_like(t)
        flat, gflat = t.view(-1), g.view(-1)
        for i in range(t.numel()):
            old = flat[i].item()
            with ferrograd.no_grad():
                flat[i] = old + eps
                hi = f(tensors).item()
                flat[i] = old - eps
                lo = f(tensors).item()
                flat[i] = old
            gflat[i] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


class _MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x, scale=1.0):
        return self.fc2(ferrograd.tanh(self.fc1(x))) * scale


# ---------------------------------------------------------------- warnings


CALLS = {
    "vmap": lambda: functorch.vmap(ferrograd.sin),
    "grad": lambda: functorch.grad(lambda x: x.sum()),
    "grad_and_value": lambda: functorch.grad_and_value(lambda x: x.sum()),
    "vjp": lambda: functorch.vjp(ferrograd.sin, ferrograd.ones(2)),
    "jvp": lambda: functorch.jvp(ferrograd.sin, (ferrograd.ones(2),), (ferrograd.ones(2),)),
    "jacrev": lambda: functorch.jacrev(ferrograd.sin),
    "jacfwd": lambda: functorch.jacfwd(ferrograd.sin),
    "hessian": lambda: functorch.hessian(lambda x: x.sum()),
    "make_functional": lambda: functorch.make_functional(nn.Linear(2, 1)),
    "make_functional_with_buffers": lambda: functorch.make_functional_with_buffers(nn.BatchNorm1d(2)),
    "combine_state_for_ensemble": lambda: functorch.combine_state_for_ensemble([nn.Linear(2, 1)]),
}
REPLACEMENT = {
    "vmap": "torch.vmap", "make_functional": "torch.func.functional_call",
    "make_functional_with_buffers": "torch.func.functional_call",
    "combine_state_for_ensemble": "torch.func.stack_module_state",
}  # fmt: skip


@pytest.mark.parametrize("api", sorted(CALLS))
def test_each_function_emits_torchs_future_warning_at_the_caller(api):
    new_api = REPLACEMENT.get(api, f"torch.func.{api}")
    with pytest.warns(FutureWarning, match=re.escape(_message(api, new_api))) as record:
        CALLS[api]()
    ours = [w for w in record if issubclass(w.category, FutureWarning)]
    assert len(ours) == 1
    assert ours[0].category is FutureWarning
    # stacklevel: the warning names the line that called functorch, here.
    assert ours[0].filename == __file__


def test_public_names():
    expected = {
        "vmap", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "jvp", "vjp", "make_functional",
        "make_functional_with_buffers", "combine_state_for_ensemble", "FunctionalModule",
        "FunctionalModuleWithBuffers",
    }  # fmt: skip
    assert set(functorch.__all__) == expected
    for name in expected:
        assert callable(getattr(functorch, name))
    from ferrograd.functorch import combine_state_for_ensemble, make_functional, vmap  # noqa: F401


# ---------------------------------------------------------------- transforms


def test_grad_and_grad_and_value_match_manual_gradient():
    x = ferrograd.tensor([1.0, -2.0, 0.5])
    g = _quiet(functorch.grad, lambda t: (t**3).sum())(x)
    assert ferrograd.allclose(g, 3 * x**2)
    g2, v = _quiet(functorch.grad_and_value, lambda a, b: (a * b).sum(), argnums=(0, 1))(x, 2 * x)
    assert ferrograd.allclose(g2[0], 2 * x) and ferrograd.allclose(g2[1], x)
    assert v.item() == pytest.approx(2 * (x * x).sum().item())
    (gaux, aux) = _quiet(functorch.grad, lambda t: ((t**2).sum(), t.max()), has_aux=True)(x)
    assert ferrograd.allclose(gaux, 2 * x) and aux.item() == 1.0


def test_vmap_equals_a_loop():
    a, b = ferrograd.randn(5, 3), ferrograd.randn(3)
    out = _quiet(functorch.vmap, ferrograd.dot, in_dims=(0, None))(a, b)
    assert ferrograd.allclose(out, ferrograd.stack([ferrograd.dot(r, b) for r in a]))
    out1 = _quiet(functorch.vmap, lambda r: r * 2, out_dims=1)(a)
    assert ferrograd.allclose(out1, (a * 2).t())


def test_jacobians_and_hessian_match_finite_differences():
    x = ferrograd.tensor([0.3, -1.2, 0.7], dtype=ferrograd.float64)
    f = lambda t: ferrograd.sin(t) * t.sum()  # noqa: E731
    jr = _quiet(functorch.jacrev, f)(x)
    jf = _quiet(functorch.jacfwd, f)(x)
    for i in range(3):
        fd = _fd_grads(lambda ts, i=i: f(ts[0])[i], [x.clone()])[0]
        assert ferrograd.allclose(jr[i], fd, atol=1e-6)
        assert ferrograd.allclose(jf[i], fd, atol=1e-6)
    s = lambda t: (t**2).prod()  # noqa: E731
    h = _quiet(functorch.hessian, s)(x)
    gs = _quiet(functorch.grad, s)
    for i in range(3):
        fd_row = _fd_grads(lambda ts, i=i: gs(ts[0])[i], [x.clone()])[0]
        assert ferrograd.allclose(h[i], fd_row, atol=1e-5)


def test_vjp_and_jvp_match_manual_products():
    x = ferrograd.tensor([1.0, 2.0, 3.0])
    out, vjp_fn = _quiet(functorch.vjp, lambda t: t**2, x)
    assert ferrograd.allclose(out, x**2)
    v = ferrograd.tensor([1.0, 0.5, -1.0])
    (ct,) = vjp_fn(v)
    assert ferrograd.allclose(ct, 2 * x * v)
    out2, tan = _quiet(functorch.jvp, lambda t: t**2, (x,), (v,))
    assert ferrograd.allclose(out2, x**2) and ferrograd.allclose(tan, 2 * x * v)


# ---------------------------------------------------------------- make_functional


def test_make_functional_runs_the_model_with_given_params():
    ferrograd.manual_seed(0)
    model = _MLP()
    fmodel, params = _quiet(functorch.make_functional, model)
    assert isinstance(fmodel, functorch.FunctionalModule) and isinstance(fmodel, nn.Module)
    assert isinstance(params, tuple)
    assert fmodel.param_names == ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    x = ferrograd.randn(5, 3)
    assert ferrograd.allclose(fmodel(params, x), model(x))
    assert ferrograd.allclose(fmodel(params, x, scale=3.0), model(x, scale=3.0))
    # Copies: equal values, other tensors, require grad as the originals.
    for p, q in zip(params, model.parameters(), strict=True):
        assert p is not q and ferrograd.equal(p, q) and p.requires_grad and p.is_leaf
    # Other parameter values change the result as running the model with them does.
    new = tuple(p.detach() * 0.5 for p in params)
    with ferrograd.no_grad():
        for q, n in zip(model.parameters(), new, strict=True):
            q.copy_(n)
    assert ferrograd.allclose(fmodel(new, x), model(x))
    # The fmodel is decoupled from the original model: changing the model leaves params alone.
    with ferrograd.no_grad():
        model.fc1.weight.fill_(7.0)
    assert not ferrograd.equal(params[0], model.fc1.weight)


def test_make_functional_disable_autograd_tracking_detaches():
    model = nn.Linear(3, 2)
    fmodel, params = _quiet(functorch.make_functional, model, disable_autograd_tracking=True)
    assert all(not p.requires_grad for p in params)
    assert all(ferrograd.equal(p, q) for p, q in zip(params, model.parameters(), strict=True))
    x = ferrograd.randn(4, 3)
    # Differentiable again through the transforms: d sum(x W^T + b) / dW = column sums of x.
    gw, gb = _quiet(functorch.grad, lambda ps: fmodel(ps, x).sum())(params)
    assert ferrograd.allclose(gw, x.sum(0).expand(2, 3))
    assert ferrograd.allclose(gb, ferrograd.full((2,), 4.0))


def test_backward_through_fmodel_matches_finite_differences():
    ferrograd.manual_seed(1)
    model = _MLP().double()
    fmodel, params = _quiet(functorch.make_functional, model)
    x = ferrograd.randn(4, 3, dtype=ferrograd.float64)
    loss = (fmodel(params, x) ** 2).sum()
    loss.backward()
    fd = _fd_grads(lambda ps: (fmodel(ps, x) ** 2).sum(), list(params))
    for p, g in zip(params, fd, strict=True):
        assert ferrograd.allclose(p.grad, g, atol=1e-6)
    # The original model's parameters are untouched by that backward.
    assert all(q.grad is None for q in model.parameters())


def test_make_functional_refuses_buffers_and_counts_params():
    with pytest.raises(RuntimeError, match=re.escape(
        "make_functional(model): `model` has buffers. Please use make_functional_with_buffers(model) instead."
    )):
        _quiet(functorch.make_functional, nn.BatchNorm1d(2))
    fmodel, params = _quiet(functorch.make_functional, nn.Linear(2, 1))
    with pytest.raises(RuntimeError, match="expected 2 parameters"):
        fmodel(params[:1], ferrograd.ones(1, 2))


def test_make_functional_tied_weights():
    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    model = Tied()
    fmodel, params = _quiet(functorch.make_functional, model)
    assert fmodel.param_names == ("a.weight", "a.bias", "b.bias")
    x = ferrograd.randn(3, 2)
    assert ferrograd.allclose(fmodel(params, x), model(x))
    # The one tied tensor is used for both layers: W2 (W2 x + b1) + b2 with W2 given.
    w = ferrograd.tensor([[2.0, 0.0], [0.0, 3.0]])
    out = fmodel((w, params[1], params[2]), x)
    assert ferrograd.allclose(out, (x @ w.t() + params[1]) @ w.t() + params[2])


def test_make_functional_with_buffers_batch_norm():
    ferrograd.manual_seed(2)
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    reference = _quiet(functorch.make_functional_with_buffers, model)
    fmodel, params, buffers = reference
    assert isinstance(fmodel, functorch.FunctionalModuleWithBuffers)
    assert fmodel.buffer_names == ("1.running_mean", "1.running_var", "1.num_batches_tracked")
    assert all(b is not q and ferrograd.equal(b, q) for b, q in zip(buffers, model.buffers(), strict=True))
    x = ferrograd.randn(6, 3)
    # Training mode: same output, and the given buffers get the model's running-stat update.
    assert ferrograd.allclose(fmodel(params, buffers, x), model(x))
    for b, q in zip(buffers, model.buffers(), strict=True):
        assert ferrograd.allclose(b, q)
    assert buffers[2].item() == 1
    model.eval()
    fmodel.eval()
    assert ferrograd.allclose(fmodel(params, buffers, x), model(x))
    _, p2, _ = _quiet(functorch.make_functional_with_buffers, model, disable_autograd_tracking=True)
    assert all(not p.requires_grad for p in p2) and all(p.requires_grad for p in params)


# ---------------------------------------------------------------- ensembles


def test_combine_state_for_ensemble_stacks_and_vmaps_like_a_loop():
    ferrograd.manual_seed(3)
    models = [_MLP() for _ in range(4)]
    fmodel, params, buffers = _quiet(functorch.combine_state_for_ensemble, models)
    assert buffers == ()
    assert [tuple(p.shape) for p in params] == [(4, 4, 3), (4, 4), (4, 2, 4), (4, 2)]
    for i, m in enumerate(models):
        for stacked, q in zip(params, m.parameters(), strict=True):
            assert ferrograd.equal(stacked[i], q)
    assert all(p.is_leaf and not p.requires_grad for p in params)
    x = ferrograd.randn(5, 3)
    same = _quiet(functorch.vmap, fmodel, in_dims=(0, 0, None))(params, buffers, x)
    assert ferrograd.allclose(same, ferrograd.stack([m(x) for m in models]), atol=1e-6)
    xs = ferrograd.randn(4, 5, 3)
    each = _quiet(functorch.vmap, fmodel)(params, buffers, xs)
    looped = ferrograd.stack([m(xi) for m, xi in zip(models, xs, strict=True)])
    assert ferrograd.allclose(each, looped, atol=1e-6)


def test_ensemble_gradients_equal_per_model_gradients():
    ferrograd.manual_seed(4)
    models = [nn.Linear(3, 1) for _ in range(3)]
    fmodel, params, buffers = _quiet(functorch.combine_state_for_ensemble, models)
    x = ferrograd.randn(2, 3)

    def loss(p, b):
        return (fmodel(p, b, x) ** 2).sum()

    grads = _quiet(functorch.vmap, _quiet(functorch.grad, loss), in_dims=(0, 0))(params, buffers)
    for i, m in enumerate(models):
        m.zero_grad()
        (m(x) ** 2).sum().backward()
        assert ferrograd.allclose(grads[0][i], m.weight.grad, atol=1e-6)
        assert ferrograd.allclose(grads[1][i], m.bias.grad, atol=1e-6)


def test_combine_state_for_ensemble_with_buffers_in_eval_mode():
    ferrograd.manual_seed(5)
    models = [nn.BatchNorm1d(3).eval() for _ in range(2)]
    for k, m in enumerate(models):
        m.running_mean.fill_(float(k))
        m.running_var.fill_(2.0 + k)
    fmodel, params, buffers = _quiet(functorch.combine_state_for_ensemble, models)
    assert [tuple(b.shape) for b in buffers] == [(2, 3), (2, 3), (2,)]
    x = ferrograd.randn(4, 3)
    out = _quiet(functorch.vmap, fmodel, in_dims=(0, 0, None))(params, buffers, x)
    assert ferrograd.allclose(out, ferrograd.stack([m(x) for m in models]), atol=1e-6)


@pytest.mark.parametrize(("models", "message"), [
    ([], "combine_state_for_ensemble: Expected at least one model, got 0."),
    ([nn.Linear(2, 1), nn.Linear(2, 1).eval()],
     "combine_state_for_ensemble: Expected all models to have the same training/eval mode."),
    ([nn.Linear(2, 1), nn.Conv1d(1, 1, 1)],
     "combine_state_for_ensemble: Expected all models to be of the same class."),
])  # fmt: skip
def test_combine_state_for_ensemble_errors(models, message):
    with pytest.raises(RuntimeError, match=re.escape(message)):
        _quiet(functorch.combine_state_for_ensemble, models)
