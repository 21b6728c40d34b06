"""ferrograd.nn.utils.parametrize and parametrizations, the hook-based
weight_norm and spectral_norm, and nn.utils.stateless.

Oracles: NumPy (triangles, norms, the largest singular value from
``numpy.linalg.svd``), float64 central differences through ``gradcheck``,
and properties (``Q^T Q = I``, assignment round trips, object identity of
the stored tensors, state dict key names)."""

from __future__ import annotations

import copy
import pickle
import warnings

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import nn
from ferrograd.autograd import gradcheck
from ferrograd.nn.utils import parametrizations as PZ
from ferrograd.nn.utils import parametrize as P


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class Double(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, X):
        return X / 2


class PlusOne(nn.Module):
    def forward(self, X):
        return X + 1


class Split(nn.Module):
    """Two stored tensors whose sum is the weight."""

    def forward(self, A, B):
        return A + B

    def right_inverse(self, X):
        return (X * 0.25, X * 0.75)


class Sum(nn.Module):
    def forward(self, X):
        return X.sum()


def _np_sym(a):
    return np.triu(a) + np.triu(a, 1).T


def _f64_linear(n_in, n_out, seed=0):
    fg.manual_seed(seed)
    return nn.Linear(n_in, n_out).double()


# ---------------------------------------------------------------------------
# register_parametrization and the parametrized class


def test_register_swaps_the_class_and_moves_the_tensor():
    m = nn.Linear(3, 3)
    w = m.weight
    assert P.register_parametrization(m, "weight", Symmetric()) is m
    assert type(m).__name__ == "ParametrizedLinear"
    assert type(m).__bases__ == (nn.Linear,)
    assert isinstance(type(m).__dict__["weight"], property)
    assert m.parametrizations.weight.original is w
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    np.testing.assert_allclose(to_np(m.weight), _np_sym(to_np(w)), rtol=1e-6)
    assert P.type_before_parametrizations(m) is nn.Linear
    assert P.type_before_parametrizations(nn.ReLU()) is nn.ReLU
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert not P.is_parametrized(nn.Linear(2, 2))
    # The original class is untouched.
    assert "weight" not in nn.Linear.__dict__


def test_gradients_reach_original_float64():
    m = _f64_linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    x = fg.randn(4, 3, dtype=fg.float64)

    def f(orig):
        return fg.func.functional_call(m, {"parametrizations.weight.original": orig}, (x,))

    orig = m.parametrizations.weight.original.detach().clone().requires_grad_()
    assert gradcheck(f, (orig,))
    # Through the module as well: d/dX sum(C * sym(X)) = triu(C) + tril(C, -1)^T.
    C = np.random.default_rng(0).standard_normal((3, 3))
    (m.weight * fg.tensor(C)).sum().backward()
    expected = np.triu(C) + np.tril(C, -1).T
    np.testing.assert_allclose(to_np(m.parametrizations.weight.original.grad), expected, rtol=1e-12)


def test_assignment_goes_through_right_inverse_in_place():
    m = nn.Linear(3, 2)
    P.register_parametrization(m, "weight", Double())
    original = m.parametrizations.weight.original
    value = fg.arange(6.0).reshape(2, 3)
    m.weight = value
    assert m.parametrizations.weight.original is original
    np.testing.assert_allclose(to_np(original), to_np(value) / 2)
    np.testing.assert_allclose(to_np(m.weight), to_np(value))


def test_registration_keeps_the_value_when_right_inverse_inverts():
    m = nn.Linear(3, 2)
    before = to_np(m.weight)
    P.register_parametrization(m, "weight", Double())
    np.testing.assert_allclose(to_np(m.weight), before, rtol=1e-6)
    np.testing.assert_allclose(to_np(m.parametrizations.weight.original), before / 2, rtol=1e-6)


def test_parametrizations_chain_in_registration_order():
    m = nn.Linear(3, 2)
    w = to_np(m.weight)
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "weight", PlusOne())
    # original = w / 2; weight = 2 * original + 1.
    np.testing.assert_allclose(to_np(m.weight), w + 1, rtol=1e-6)
    assert len(m.parametrizations.weight) == 2
    with pytest.raises(RuntimeError, match="PlusOne does not implement right_inverse"):
        m.weight = fg.zeros(2, 3)


def test_tuple_right_inverse_stores_original0_original1():
    m = nn.Linear(3, 2)
    w = to_np(m.weight)
    P.register_parametrization(m, "weight", Split())
    plist = m.parametrizations.weight
    assert not plist.is_tensor and plist.ntensors == 2
    assert list(m.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1",
    ]  # fmt: skip
    assert isinstance(plist.original0, nn.Parameter) and plist.original1.requires_grad
    np.testing.assert_allclose(to_np(plist.original0), w * 0.25, rtol=1e-6)
    np.testing.assert_allclose(to_np(m.weight), w, rtol=1e-6)
    m.weight = fg.ones(2, 3)
    np.testing.assert_allclose(to_np(plist.original1), np.full((2, 3), 0.75))
    with pytest.raises(ValueError, match="sequence of tensors"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear
    assert isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(to_np(m.weight), np.ones((2, 3)))
    assert list(m.state_dict()) == ["bias", "weight"]


def test_remove_leave_parametrized_keeps_the_object():
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    original = m.parametrizations.weight.original
    value = to_np(m.weight)
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and "parametrizations" not in m._modules
    assert m.weight is original and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(to_np(m.weight), value)
    assert list(m.state_dict()) == ["bias", "weight"]


def test_remove_without_leaving_parametrized_restores_original():
    m = nn.Linear(3, 3)
    w = to_np(m.weight)
    P.register_parametrization(m, "weight", Symmetric())
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_allclose(to_np(m.weight), w)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")


def test_class_stays_while_one_tensor_is_parametrized():
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "bias", Double())
    P.remove_parametrizations(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear" and "weight" not in type(m).__dict__
    P.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear


def test_buffer_stays_a_buffer():
    m = nn.BatchNorm1d(3)
    P.register_parametrization(m, "running_var", Double())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert not isinstance(m.parametrizations.running_var.original, nn.Parameter)
    np.testing.assert_allclose(to_np(m.running_var), np.ones(3))
    P.remove_parametrizations(m, "running_var")
    assert "running_var" in m._buffers


def test_bad_parametrizations_raise_value_error():
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Sum())
    assert type(m) is nn.Linear and isinstance(m.weight, nn.Parameter)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        P.register_parametrization(m, "nope", Double())
    P.register_parametrization(m, "weight", Sum(), unsafe=True)
    assert m.weight.dim() == 0
    with pytest.raises(ValueError, match="ParametrizationList requires one or more modules"):
        P.ParametrizationList([], fg.zeros(2))


def test_second_parametrization_is_checked_against_the_current_value():
    m = nn.Linear(3, 2)
    P.register_parametrization(m, "weight", Double())

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    with pytest.raises(ValueError, match="may not change the dtype"):
        P.register_parametrization(m, "weight", ToDouble())
    assert len(m.parametrizations.weight) == 1


def test_assigning_a_parameter_to_a_parametrized_name_raises():
    m = nn.Linear(3, 2)
    P.register_parametrization(m, "weight", Double())
    with pytest.raises(KeyError, match="already exists"):
        m.weight = nn.Parameter(fg.ones(2, 3))


def test_cached_computes_once_per_outermost_context():
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0

    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Counting())
    calls.clear()
    with P.cached():
        a = m.weight
        with P.cached():
            b = m.weight
        c = m.weight
    assert a is b is c and len(calls) == 1
    assert m.weight is not a and len(calls) == 2
    assert P._cache == {}


def test_registration_follows_the_module_mode():
    m = nn.Linear(2, 2).eval()
    p = Double()
    P.register_parametrization(m, "weight", p)
    assert not p.training
    m.train()
    assert p.training


def test_deepcopy_is_independent_and_pickle_is_refused():
    m = nn.Linear(3, 2)
    P.register_parametrization(m, "weight", Double())
    c = copy.deepcopy(m)
    assert type(c) is type(m)
    assert c.parametrizations.weight.original is not m.parametrizations.weight.original
    np.testing.assert_allclose(to_np(c.weight), to_np(m.weight))
    c.weight = fg.zeros(2, 3)
    assert float(m.weight.abs().sum()) > 0
    with pytest.raises(RuntimeError, match="state_dict"):
        pickle.dumps(m)


def test_state_dict_round_trip_between_parametrized_modules():
    a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    P.register_parametrization(a, "weight", Double())
    P.register_parametrization(b, "weight", Double())
    b.load_state_dict(a.state_dict())
    np.testing.assert_allclose(to_np(b.weight), to_np(a.weight))


def test_transfer_shares_the_stored_tensors():
    a = nn.Linear(3, 2)
    P.register_parametrization(a, "weight", Double())
    b = P.transfer_parametrizations_and_params(a, nn.Linear(3, 2))
    assert type(b).__name__ == "ParametrizedLinear"
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    np.testing.assert_allclose(to_np(b.weight), to_np(a.weight))
    # A tensor the target lacks is created first.
    c = P.transfer_parametrizations_and_params(a, nn.Module(), "weight")
    assert list(c.state_dict()) == ["parametrizations.weight.original"]
    np.testing.assert_allclose(to_np(c.weight), to_np(a.weight))
    s = nn.Linear(3, 2)
    P.register_parametrization(s, "weight", Split())
    t = P.transfer_parametrizations_and_params(s, nn.Linear(3, 2))
    assert t.parametrizations.weight.original1 is s.parametrizations.weight.original1
    assert P.transfer_parametrizations_and_params(nn.Linear(2, 2), nn.ReLU()).__class__ is nn.ReLU


def test_optimizer_updates_the_original_and_the_weight_follows():
    m = _f64_linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    opt = fg.optim.SGD(m.parameters(), lr=0.1)
    before = to_np(m.parametrizations.weight.original)
    m(fg.ones(1, 3, dtype=fg.float64)).sum().backward()
    grad = to_np(m.parametrizations.weight.original.grad)
    opt.step()
    np.testing.assert_allclose(to_np(m.parametrizations.weight.original), before - 0.1 * grad)
    np.testing.assert_allclose(to_np(m.weight), _np_sym(before - 0.1 * grad))


# ---------------------------------------------------------------------------
# orthogonal

ORTH_SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]


def _orth_module(shape, omap, triv, dtype=fg.float64, seed=0):
    fg.manual_seed(seed)
    m = nn.Module()
    m.weight = nn.Parameter(fg.randn(*shape, dtype=dtype))
    return PZ.orthogonal(m, orthogonal_map=omap, use_trivialization=triv)


def _assert_orthonormal(Q, atol=1e-10):
    q = to_np(Q)
    if q.shape[-2] < q.shape[-1]:
        q = np.swapaxes(q, -1, -2)
    gram = np.swapaxes(q, -1, -2).conj() @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=atol)


@pytest.mark.parametrize("shape", ORTH_SHAPES, ids=str)
@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False], ids=["triv", "notriv"])
def test_orthogonal_gives_orthonormal_columns_or_rows(shape, omap, triv):
    m = _orth_module(shape, omap, triv)
    _assert_orthonormal(m.weight)
    assert m.weight.shape == fg.Size(shape)
    keys = ["parametrizations.weight.original"] + (["parametrizations.weight.0.base"] if triv else [])
    assert sorted(m.state_dict()) == sorted(keys)
    # After a gradient step on the unconstrained tensor the result is still
    # orthonormal, and different.
    before = to_np(m.weight)
    (m.weight * fg.randn(*shape, dtype=fg.float64)).sum().backward()
    with fg.no_grad():
        m.parametrizations.weight.original -= 0.1 * m.parametrizations.weight.original.grad
    _assert_orthonormal(m.weight)
    assert not np.allclose(to_np(m.weight), before)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)], ids=str)
def test_orthogonal_map_gradients_match_finite_differences(omap, shape):
    m = _orth_module(shape, omap, True)
    orth = m.parametrizations.weight[0]
    fg.manual_seed(1)
    X = (0.3 * fg.randn(*shape, dtype=fg.float64)).requires_grad_()
    assert gradcheck(orth, (X,))


def _random_orthonormal(shape, seed, axis_first=False):
    """Orthonormal columns (rows when wide) of the given shape; with
    ``axis_first`` the first column is ``-e_1`` (no reflection needed)."""
    rng = np.random.default_rng(seed)
    *batch, n, k = shape
    tall, wide = max(n, k), min(n, k)
    q = np.zeros((*batch, tall, wide))
    if axis_first:
        q[..., 0, 0] = -1.0
        q[..., 1:, 1:] = np.linalg.qr(rng.standard_normal((*batch, tall - 1, wide - 1)))[0]
    else:
        q = np.linalg.qr(rng.standard_normal((*batch, tall, wide)))[0]
    return np.swapaxes(q, -1, -2) if n < k else q


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", ORTH_SHAPES, ids=str)
def test_orthogonal_assignment_round_trips(omap, shape):
    m = _orth_module(shape, omap, True)
    q = _random_orthonormal(shape, 3)
    m.weight = fg.tensor(q)
    np.testing.assert_allclose(to_np(m.weight), q, atol=1e-10)
    # The stored tensor is the point every map sends to the identity.
    *_, n, k = shape
    eye = np.zeros(shape)
    idx = np.arange(min(n, k))
    eye[..., idx, idx] = -1
    np.testing.assert_array_equal(to_np(m.parametrizations.weight.original), eye)


@pytest.mark.parametrize("axis_first", [False, True])
@pytest.mark.parametrize("shape", ORTH_SHAPES, ids=str)
def test_householder_without_trivialization_inverts_exactly(shape, axis_first):
    m = _orth_module(shape, "householder", False)
    q = _random_orthonormal(shape, 4, axis_first)
    m.weight = fg.tensor(q)
    np.testing.assert_allclose(to_np(m.weight), q, atol=1e-10)


def test_orthogonal_without_trivialization_refuses_assignment_for_exp_and_cayley():
    for omap in ["matrix_exp", "cayley"]:
        m = _orth_module((3, 3), omap, False)
        with pytest.raises(NotImplementedError, match="use_trivialization=False"):
            m.weight = fg.eye(3, dtype=fg.float64)


def test_orthogonal_assignment_of_a_non_orthogonal_matrix_orthonormalizes_it():
    m = _orth_module((4, 4), "matrix_exp", True)
    a = np.random.default_rng(5).standard_normal((4, 4))
    m.weight = fg.tensor(a)
    q, r = np.linalg.qr(a)
    np.testing.assert_allclose(to_np(m.weight), q * np.sign(np.diag(r)), atol=1e-10)


def test_orthogonal_defaults_and_errors():
    assert _orth_module((3, 3), None, True).parametrizations.weight[0].orthogonal_map.name == "matrix_exp"
    assert _orth_module((5, 3), None, True).parametrizations.weight[0].orthogonal_map.name == "householder"
    m = nn.Module()
    m.weight = nn.Parameter(fg.randn(3, 2, dtype=fg.complex128))
    PZ.orthogonal(m)
    assert m.parametrizations.weight[0].orthogonal_map.name == "matrix_exp"
    _assert_orthonormal(m.weight)
    with pytest.raises(ValueError, match="householder parametrization does not support complex"):
        _orth_module((3, 3), "householder", True, fg.complex64)
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        PZ.orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        PZ.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        PZ.orthogonal(nn.Linear(2, 2), "w")
    m = _orth_module((3, 3), "cayley", True)
    with pytest.raises(ValueError, match="of shape"):
        m.weight = fg.eye(2, dtype=fg.float64)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley"])
def test_orthogonal_complex_is_unitary(omap):
    m = _orth_module((2, 3, 3), omap, True, fg.complex128)
    _assert_orthonormal(m.weight)


# ---------------------------------------------------------------------------
# weight_norm (parametrization and hook)


def _np_weight_norm(g, v, dim, ndim):
    if dim is None or dim == -1:
        return g * v / np.linalg.norm(v)
    keep = dim % ndim
    others = tuple(d for d in range(ndim) if d != keep)
    return g * v / np.sqrt((v * v).sum(axis=others, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, 2, -2, None, -1])
def test_weight_norm_parametrization_matches_numpy(dim):
    fg.manual_seed(0)
    m = nn.Conv2d(2, 3, 3).double()
    w = to_np(m.weight)
    PZ.weight_norm(m, dim=dim)
    p = m.parametrizations.weight
    g, v = to_np(p.original0), to_np(p.original1)
    assert list(m.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1",
    ]  # fmt: skip
    keep = None if dim in (None, -1) else dim % 4
    expected_g_shape = () if keep is None else tuple(s if d == keep else 1 for d, s in enumerate(w.shape))
    assert g.shape == expected_g_shape
    np.testing.assert_allclose(v, w)
    np.testing.assert_allclose(to_np(m.weight), w, rtol=1e-12)
    with fg.no_grad():
        p.original0.mul_(3.0)
        p.original1.add_(0.5)
    np.testing.assert_allclose(to_np(m.weight), _np_weight_norm(3 * g, v + 0.5, dim, 4), rtol=1e-12)


def test_weight_norm_gradients_match_finite_differences():
    for dim in (0, 1, None):
        fn = PZ._WeightNorm(dim)
        fg.manual_seed(0)
        v = fg.randn(3, 4, dtype=fg.float64, requires_grad=True)
        g = fn.right_inverse(v.detach())[0].clone().requires_grad_()
        assert gradcheck(fn, (g, v))


def test_weight_norm_loads_a_hook_based_state_dict():
    fg.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = nn.utils.weight_norm(nn.Linear(3, 2))
    new = PZ.weight_norm(nn.Linear(3, 2))
    new.load_state_dict(old.state_dict())
    np.testing.assert_allclose(to_np(new.parametrizations.weight.original0), to_np(old.weight_g))
    np.testing.assert_allclose(to_np(new.weight), to_np(old.weight), rtol=1e-6)


def test_hook_weight_norm_splits_into_g_and_v():
    fg.manual_seed(0)
    m = nn.Linear(3, 4).double()
    w = to_np(m.weight)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(m, dim=1)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(to_np(m.weight_g), np.linalg.norm(w, axis=0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(to_np(m.weight), w, rtol=1e-12)
    # The forward pre-hook recomputes the weight from the new g: 2 g v / |v|.
    with fg.no_grad():
        m.weight_g.mul_(2.0)
    x = fg.randn(5, 3, dtype=fg.float64)
    y = m(x)
    np.testing.assert_allclose(to_np(m.weight), 2 * w, rtol=1e-12)
    np.testing.assert_allclose(to_np(y), to_np(x) @ (2 * w).T + to_np(m.bias), rtol=1e-10)
    y.sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(m, dim=1)
    nn.utils.remove_weight_norm(m)
    assert isinstance(m.weight, nn.Parameter) and list(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(to_np(m.weight), 2 * w, rtol=1e-12)
    assert len(m._forward_pre_hooks) == 0
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


# ---------------------------------------------------------------------------
# spectral_norm (parametrization and hook)


def _sigma_max(a, dim=0):
    a = np.moveaxis(a, dim, 0)
    return np.linalg.svd(a.reshape(a.shape[0], -1), compute_uv=False)[0]


@pytest.mark.parametrize(("make", "dim"), [
    (lambda: nn.Linear(6, 4), 0),
    (lambda: nn.Conv2d(3, 5, 3), 0),
    (lambda: nn.ConvTranspose2d(3, 5, 3), 1),
])  # fmt: skip
def test_spectral_norm_divides_by_the_largest_singular_value(make, dim):
    fg.manual_seed(0)
    m = make().double()
    w = to_np(m.weight)
    PZ.spectral_norm(m)
    sn = m.parametrizations.weight[0]
    assert sn.dim == dim
    assert sn._u.shape == (w.shape[dim],)
    for _ in range(100):  # training mode: each access runs a power iteration
        W = m.weight
    np.testing.assert_allclose(to_np(W), w / _sigma_max(w, dim), rtol=1e-7)
    assert _sigma_max(to_np(W), dim) == pytest.approx(1.0, rel=1e-7)
    assert sorted(m.state_dict()) == [
        "bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v",
        "parametrizations.weight.original",
    ]  # fmt: skip


def test_spectral_norm_updates_buffers_only_in_training():
    fg.manual_seed(0)
    m = PZ.spectral_norm(nn.Linear(5, 4).double())
    sn = m.parametrizations.weight[0]
    u = sn._u
    before = to_np(u)
    with fg.no_grad():
        m.parametrizations.weight.original.mul_(fg.randn(4, 5, dtype=fg.float64))
    m.eval()
    a, b = m.weight, m.weight
    np.testing.assert_array_equal(to_np(u), before)
    np.testing.assert_array_equal(to_np(a), to_np(b))
    m.train()
    _ = m.weight
    assert sn._u is u and not np.allclose(to_np(u), before)


def test_spectral_norm_gradient_in_eval_mode_matches_finite_differences():
    fg.manual_seed(0)
    m = PZ.spectral_norm(nn.Linear(4, 3).double()).eval()
    sn = m.parametrizations.weight[0]
    W = m.parametrizations.weight.original.detach().clone().requires_grad_()
    assert gradcheck(sn, (W,))


def test_spectral_norm_of_a_vector_is_the_unit_vector():
    m = PZ.spectral_norm(nn.Linear(4, 3).double(), "bias")
    b = to_np(m.parametrizations.bias.original)
    np.testing.assert_allclose(to_np(m.bias), b / np.linalg.norm(b))
    assert "parametrizations.bias.0._u" not in m.state_dict()


def test_spectral_norm_errors():
    with pytest.raises(ValueError, match="n_power_iterations=0"):
        PZ.spectral_norm(nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        PZ.spectral_norm(nn.Linear(3, 2), dim=2)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        PZ.spectral_norm(nn.Linear(3, 2), "w")
    with pytest.raises(IndexError, match="Dimension out of range"):
        PZ.weight_norm(nn.Linear(3, 2), dim=2)


def test_hook_spectral_norm_layout_power_iteration_and_removal():
    fg.manual_seed(0)
    m = nn.utils.spectral_norm(nn.Linear(6, 4).double(), n_power_iterations=3)
    w = to_np(m.weight_orig)
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert isinstance(m.weight_orig, nn.Parameter) and "weight_u" in m._buffers
    u_obj = m.weight_u
    x = fg.randn(2, 6, dtype=fg.float64)
    for _ in range(40):
        m(x)
    assert m.weight_u is u_obj
    np.testing.assert_allclose(to_np(m.weight), w / _sigma_max(w), rtol=1e-8)
    # In eval mode the estimates stay as they are.
    m.eval()
    u = to_np(m.weight_u)
    m(x).sum().backward()
    np.testing.assert_array_equal(to_np(m.weight_u), u)
    assert m.weight_orig.grad is not None
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(to_np(m.weight), w / _sigma_max(w), rtol=1e-8)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(m)
    with pytest.raises(ValueError, match="n_power_iterations=0"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    ct = nn.utils.spectral_norm(nn.ConvTranspose2d(3, 5, 2))
    assert ct.weight_u.shape == (5,) and ct.weight_v.shape == (3 * 2 * 2,)


# ---------------------------------------------------------------------------
# stateless.functional_call


def test_stateless_functional_call_warns_and_matches_func():
    m = nn.Linear(3, 2)
    params = {"weight": fg.ones(2, 3), "bias": fg.zeros(2)}
    x = fg.arange(3.0).reshape(1, 3)
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        y = nn.utils.stateless.functional_call(m, params, x)
    np.testing.assert_allclose(to_np(y), [[3.0, 3.0]])
    np.testing.assert_allclose(to_np(fg.func.functional_call(m, params, (x,))), [[3.0, 3.0]])
    assert not fg.equal(m.weight, fg.ones(2, 3))


def test_functional_call_on_a_parametrized_name_uses_right_inverse():
    m = nn.Linear(3, 2)
    P.register_parametrization(m, "weight", Double())
    original = m.parametrizations.weight.original
    saved = to_np(original)
    W = fg.arange(6.0).reshape(2, 3)
    x = fg.ones(1, 3)
    y = fg.func.functional_call(m, {"weight": W}, (x,))
    np.testing.assert_allclose(to_np(y), to_np(x) @ to_np(W).T + to_np(m.bias), rtol=1e-6)
    assert m.parametrizations.weight.original is original
    np.testing.assert_allclose(to_np(original), saved, rtol=1e-6)
    y = fg.func.functional_call(m, {"parametrizations.weight.original": W}, (x,))
    np.testing.assert_allclose(to_np(y), to_np(x) @ (2 * to_np(W)).T + to_np(m.bias), rtol=1e-6)
