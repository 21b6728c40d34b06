"""ferrograd.optim.LBFGS: convergence on Rosenbrock's function with and without the strong-Wolfe
line search, the iterates of a NumPy L-BFGS on a quadratic, the closure evaluations each
stopping rule allows, hand-computed line searches, state and state dicts, and torch's errors."""

from __future__ import annotations

import copy

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import optim


def rosenbrock(x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def make_closure(opt, x, fn):
    """A closure that evaluates ``fn(x)``, backpropagates it and counts its calls."""
    calls = []

    def closure():
        calls.append(x.detach().clone())
        opt.zero_grad()
        loss = fn(x)
        loss.backward()
        return loss

    return closure, calls


# A quadratic 0.5 x.A.x - b.x with a known minimizer.
A = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, -0.3], [0.1, -0.3, 1.0]])
B = np.array([1.0, -2.0, 0.5])
X_STAR = np.linalg.solve(A, B)


def quadratic(x):
    a, b = fg.tensor(A), fg.tensor(B)
    return 0.5 * (x @ a @ x) - (b * x).sum()


# --- convergence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_rosenbrock_minimum_is_found_from_the_classic_start(line_search_fn):
    x = fg.tensor([-1.2, 1.0], dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS(
        [x], max_iter=100, tolerance_grad=1e-12, tolerance_change=1e-14, line_search_fn=line_search_fn
    )
    closure, _ = make_closure(opt, x, rosenbrock)
    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(to_np(x), [1.0, 1.0], atol=1e-6)
    assert rosenbrock(x).item() < 1e-12


def test_rosenbrock_in_four_dimensions_with_strong_wolfe():
    x = fg.tensor([-1.5, 2.0, 0.3, -0.7], dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS(
        [x], max_iter=200, max_eval=400, tolerance_grad=1e-10, tolerance_change=1e-14,
        line_search_fn="strong_wolfe",
    )  # fmt: skip
    closure, _ = make_closure(opt, x, rosenbrock)
    for _ in range(10):
        opt.step(closure)
    # (1, 1, 1, 1) is the global minimum; (-0.776, 0.613, 0.382, 0.146) a local one that this
    # start can also reach. Both are stationary points of the function.
    x.grad = None
    rosenbrock(x).backward()
    assert np.abs(to_np(x.grad)).max() < 1e-6


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_quadratic_minimizer_is_found(line_search_fn):
    x = fg.zeros(3, dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS([x], tolerance_grad=1e-12, tolerance_change=1e-14, line_search_fn=line_search_fn)
    closure, calls = make_closure(opt, x, quadratic)
    opt.step(closure)
    np.testing.assert_allclose(to_np(x), X_STAR, atol=1e-8)
    assert len(calls) == opt.state[x]["func_evals"]


# --- against a NumPy L-BFGS ---------------------------------------------------------------------


def numpy_lbfgs(x, grad_fn, iterations, lr=1.0, history_size=100):
    """L-BFGS with fixed steps as documented: the first step along -g scaled by
    min(1, 1 / sum|g|) * lr, later ones lr * d with d = -H g from the two-loop recursion over the
    kept pairs (s, y) with s.y > 1e-10, started from H_diag = s.y / y.y. Returns the iterates."""
    g = grad_fn(x)
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    h_diag, d, t, g_prev = 1.0, None, None, g
    iterates = []
    for k in range(iterations):
        if k == 0:
            d = -g
        else:
            y, s = g - g_prev, t * d
            if y @ s > 1e-10:
                pairs = (pairs + [(s, y)])[-history_size:]
                h_diag = (y @ s) / (y @ y)
            q = -g
            alphas = []
            for s_i, y_i in reversed(pairs):
                a_i = (s_i @ q) / (y_i @ s_i)
                q = q - a_i * y_i
                alphas.append(a_i)
            r = h_diag * q
            for (s_i, y_i), a_i in zip(pairs, reversed(alphas), strict=True):
                r = r + (a_i - (y_i @ r) / (y_i @ s_i)) * s_i
            d = r
        g_prev = g
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if k == 0 else lr
        x = x + t * d
        iterates.append(x)
        g = grad_fn(x)
    return iterates


@pytest.mark.parametrize("history_size", [100, 2])
def test_fixed_step_iterates_match_a_numpy_lbfgs(history_size):
    x = fg.zeros(3, dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS(
        [x], lr=0.5, max_iter=8, history_size=history_size, tolerance_grad=0.0, tolerance_change=0.0
    )
    closure, calls = make_closure(opt, x, quadratic)
    opt.step(closure)
    # The closure sees x_0 .. x_7; the last iterate x_8 is not evaluated (the caller would).
    expected = numpy_lbfgs(np.zeros(3), lambda v: A @ v - B, 8, lr=0.5, history_size=history_size)
    got = [to_np(c) for c in calls[1:]] + [to_np(x)]
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=1e-14)
    assert len(opt.state[x]["old_dirs"]) <= history_size


# --- evaluation counts and stopping rules -----------------------------------------------------------


@pytest.mark.parametrize(
    ("max_iter", "max_eval", "evals", "iterations"),
    [(5, None, 5, 5), (10, 4, 4, 3), (1, None, 1, 1), (3, 100, 3, 3)],
)
def test_closure_evaluations_follow_max_iter_and_max_eval(max_iter, max_eval, evals, iterations):
    # Far from converged (a tiny lr), so only max_iter and max_eval stop a step: one evaluation
    # up front and one per iteration but the last.
    x = fg.zeros(3, dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS([x], lr=1e-3, max_iter=max_iter, max_eval=max_eval)
    closure, calls = make_closure(opt, x, quadratic)
    loss = opt.step(closure)
    assert len(calls) == evals
    assert opt.state[x]["func_evals"] == evals
    assert opt.state[x]["n_iter"] == iterations
    assert loss.item() == 0.0  # the loss of the first evaluation, at x = 0
    assert opt.param_groups[0]["max_eval"] == (max_eval if max_eval is not None else max_iter * 5 // 4)


def test_a_stationary_start_returns_after_one_evaluation():
    x = fg.tensor(X_STAR, requires_grad=True)
    opt = optim.LBFGS([x])
    closure, calls = make_closure(opt, x, quadratic)
    opt.step(closure)
    assert len(calls) == 1 and opt.state[x]["n_iter"] == 0 and "d" not in opt.state[x]
    np.testing.assert_array_equal(to_np(x), X_STAR)


def test_the_loss_change_tolerance_stops_a_step():
    x = fg.zeros(3, dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS([x], lr=1e-3, max_iter=50, tolerance_change=1e-2)
    closure, calls = make_closure(opt, x, quadratic)
    opt.step(closure)
    # Steps of 1e-3 change the loss by less than 1e-2: the first iteration already stops.
    assert len(calls) == 2 and opt.state[x]["n_iter"] == 1


# --- the strong-Wolfe line search, hand-computed --------------------------------------------------


@pytest.mark.parametrize(
    ("scale", "target", "expected", "evals"),
    [
        # f = (x - 3)^2 from 0: t = 1/6 along d = 6 reaches x = 1, where f' = -4 meets the
        # curvature condition |f'(t) d| <= 0.9 * 36: accepted at once.
        (1.0, 3.0, 1.0, 2),
        # f = 0.01 (x - 30)^2: the first point 0.6 still descends steeply (|slope| 0.3528 >
        # 0.324), so the step is extrapolated; the cubic's minimum (t = 50) is clamped to 10 t.
        (0.01, 30.0, 6.0, 3),
        # f = 50 (x - 0.5)^2: t = 1/50 along d = 50 overshoots to x = 1 (no decrease); the bracket
        # [0, t] is zoomed by cubic interpolation, exact for a quadratic: x = 0.5.
        (50.0, 0.5, 0.5, 3),
    ],
)
def test_strong_wolfe_line_search_steps(scale, target, expected, evals):
    x = fg.tensor([0.0], dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS([x], max_iter=1, line_search_fn="strong_wolfe")
    closure, calls = make_closure(opt, x, lambda v: (scale * (v - target) ** 2).sum())
    opt.step(closure)
    assert x.item() == pytest.approx(expected, abs=1e-12)
    assert len(calls) == evals


# --- complex parameters, state, errors ------------------------------------------------------------


def test_complex_parameters_step_like_their_real_view():
    z0 = np.array([1 + 2j, -1 + 0.5j])
    z = fg.tensor(z0.tolist(), dtype=fg.complex128, requires_grad=True)
    r = fg.tensor(np.stack([z0.real, z0.imag], -1), dtype=fg.float64, requires_grad=True)
    weights = fg.tensor([[1.0, 2.0], [3.0, 0.5]], dtype=fg.float64)
    results = []
    for p, view in ((z, lambda p: fg.view_as_real(p)), (r, lambda p: p)):
        opt = optim.LBFGS([p], max_iter=5, line_search_fn="strong_wolfe")
        closure, _ = make_closure(opt, p, lambda p, view=view: ((view(p) - 1) ** 2 * weights).sum())
        opt.step(closure)
        results.append(to_np(view(p.detach())))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_state_uses_torch_names_and_a_loaded_copy_continues_identically():
    x = fg.tensor([-1.2, 1.0, 0.5], dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS([x], max_iter=3, history_size=4, line_search_fn="strong_wolfe")
    closure, _ = make_closure(opt, x, rosenbrock)
    opt.step(closure)
    opt.step(closure)
    state = opt.state[x]
    assert set(state) == {
        "func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
        "prev_loss", "al",
    }  # fmt: skip
    assert len(state["al"]) == 4 and len(state["old_dirs"]) <= 4 and state["n_iter"] >= 2

    y = x.detach().clone().requires_grad_(True)
    fresh = optim.LBFGS([y])
    fresh.load_state_dict(copy.deepcopy(opt.state_dict()))
    assert fresh.param_groups[0]["line_search_fn"] == "strong_wolfe"
    closure_y, _ = make_closure(fresh, y, rosenbrock)
    for _ in range(3):
        opt.step(closure)
        fresh.step(closure_y)
    assert x.tolist() == y.tolist()
    assert fresh.state[y]["func_evals"] == opt.state[x]["func_evals"]


def test_params_of_several_tensors_are_one_flat_vector():
    a = fg.zeros(2, dtype=fg.float64, requires_grad=True)
    b = fg.zeros(1, dtype=fg.float64, requires_grad=True)
    opt = optim.LBFGS([a, b], tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = quadratic(fg.cat([a, b]))
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(np.concatenate([to_np(a), to_np(b)]), X_STAR, atol=1e-8)
    assert set(opt.state) == {a}  # the whole state sits under the first parameter


def test_errors_match_torch():
    a, b = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.LBFGS([a], lr=-1)
    with pytest.raises(TypeError):
        optim.LBFGS([a]).step()  # the closure is required
    opt = optim.LBFGS([a], line_search_fn="backtracking")
    closure, _ = make_closure(opt, a, lambda v: ((v - 1) ** 2).sum())
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
