"""L-BFGS: a quasi-Newton method from a short history of steps and gradient changes, with an
optional strong-Wolfe line search (cubic interpolation, as in minFunc)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from .optimizer import Optimizer, ParamsT, _check_lr, _closure_loss, _get_value, _use_grad_for_differentiable

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    r"""L-BFGS, a limited-memory quasi-Newton method.

    Each ``step(closure)`` runs up to ``max_iter`` iterations on a flat view of all parameters.
    An iteration builds the search direction ``d = -H g`` from the last ``history_size`` pairs
    ``(s, y)`` (a step and the change of the gradient it caused) by the two-loop recursion,
    starting from the scaled identity ``H_diag = s.y / y.y``; pairs with ``s.y <= 1e-10`` are
    not kept. The first iteration ever steps ``min(1, 1 / sum|g|) * lr`` along ``-g``, later
    ones ``lr`` along ``d``, or, with ``line_search_fn="strong_wolfe"``, the step that a
    bracketing line search with cubic interpolation finds to satisfy the strong Wolfe
    conditions (``c1 = 1e-4``, ``c2 = 0.9``, at most 25 evaluations).

    A step ends after ``max_iter`` iterations or ``max_eval`` closure evaluations, or when
    ``max|g| <= tolerance_grad``, when the step ``max|t * d|`` or the loss change falls
    below ``tolerance_change``, or when ``d`` is no longer a descent direction.

    Args:
        params (iterable): the tensors to optimize, or ``(name, tensor)`` pairs; one parameter
            group only.
        lr (float or Tensor): the step length (default: 1).
        max_iter (int): iterations per ``step`` (default: 20).
        max_eval (int, optional): closure evaluations per ``step`` (default:
            ``max_iter * 5 // 4``).
        tolerance_grad (float): stop when the largest gradient entry is at most this
            (default: 1e-7).
        tolerance_change (float): stop when the step or the loss changes less than this
            (default: 1e-9).
        history_size (int): the number of ``(s, y)`` pairs kept (default: 100).
        line_search_fn (str, optional): ``None`` (fixed steps) or ``"strong_wolfe"``.

    State: kept under the first parameter, with torch's names: ``func_evals``, ``n_iter``,
    ``d``, ``t``, ``old_dirs`` (the ``y``), ``old_stps`` (the ``s``), ``ro`` (``1 / y.s``),
    ``H_diag``, ``prev_flat_grad``, ``prev_loss`` and ``al``.

    Example:
        >>> x = ferrograd.tensor([3.0, -1.0], dtype=ferrograd.float64, requires_grad=True)
        >>> opt = ferrograd.optim.LBFGS([x], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((x - 1) ** 2 * ferrograd.tensor([1.0, 10.0], dtype=ferrograd.float64)).sum()
        ...     loss.backward()
        ...     return loss
        >>> loss = opt.step(closure)
        >>> [round(v, 6) for v in x.tolist()]
        [1.0, 1.0]
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    # --- the flat view of all parameters ---------------------------------------------------------

    def _numel(self) -> int:
        if self._numel_cache is None:
            # A complex parameter counts as its real view: twice as many numbers.
            self._numel_cache = sum(2 * p.numel() if _fg.is_complex(p) else p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        """All gradients as one 1-D tensor (zeros for a parameter without one)."""
        views = []
        for p in self._params:
            grad = p.grad if p.grad is not None else _fg.zeros_like(p)
            if _fg.is_complex(grad):
                grad = _fg.view_as_real(grad)
            views.append(grad.reshape(-1))
        return _fg.cat(views, 0)

    def _add_grad(self, step_size: Any, update: Tensor) -> None:
        """``params += step_size * update``, ``update`` being a flat vector."""
        offset = 0
        alpha = _get_value(step_size)
        for p in self._params:
            if _fg.is_complex(p):
                p = _fg.view_as_real(p)
            numel = p.numel()
            p.add_(update[offset : offset + numel].view_as(p), alpha=alpha)
            offset += numel
        assert offset == self._numel()

    def _clone_param(self) -> list[Tensor]:
        return [p.clone().contiguous() for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, data in zip(self._params, params_data, strict=True):
            p.copy_(data)

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Tensor], t: Any, d: Tensor
    ) -> tuple[float, Tensor]:
        """The loss and flat gradient at ``x + t * d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(_closure_loss(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # --- the step --------------------------------------------------------------------------------

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Perform one optimization step: up to ``max_iter`` L-BFGS iterations.

        Args:
            closure (Callable): re-evaluates the model and returns the loss (after calling
                ``backward``); it runs with gradients enabled, possibly several times.

        Returns:
            The loss of the first evaluation of ``closure``.
        """
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # The whole optimizer's state lives under the first parameter (as in torch's dicts).
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _closure_loss(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already at a stationary point
            return orig_loss

        d = state.get("d")
        t = state.get("t")
        old_dirs = state.get("old_dirs")
        old_stps = state.get("old_stps")
        ro = state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad = state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                # Remember the pair (s, y) of the last step, if the curvature along it is positive.
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = _two_loop_direction(flat_grad, old_dirs, old_stps, ro, h_diag, state["al"])

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone().contiguous()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # The first step ever is scaled down by the gradient's size; later ones use lr.
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)  # the directional derivative
            if gtd > -tolerance_change:  # not a descent direction (any more)
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list[Tensor], t: Any, d: Tensor) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd
                )
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # Re-evaluate unless this was the last iteration (the caller will).
                    loss = float(_closure_loss(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # the step became too small
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss stopped changing
                break

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss


def _two_loop_direction(
    flat_grad: Tensor,
    old_dirs: list[Tensor],
    old_stps: list[Tensor],
    ro: list[Any],
    h_diag: Any,
    al: list[Any],
) -> Tensor:
    """``-H g`` for the inverse-Hessian estimate ``H`` of the pairs ``(s, y)`` (``old_stps``,
    ``old_dirs``) and the initial scale ``h_diag``: the L-BFGS two-loop recursion. ``al`` is
    scratch space of at least ``len(old_dirs)`` entries (kept in the state, as torch does)."""
    num_old = len(old_dirs)
    q = flat_grad.neg()
    for i in range(num_old - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q.add_(old_dirs[i], alpha=-_get_value(al[i]))
    r = _fg.mul(q, h_diag)
    for i in range(num_old):
        be_i = old_dirs[i].dot(r) * ro[i]
        r.add_(old_stps[i], alpha=_get_value(al[i] - be_i))
    return r


# --- the strong-Wolfe line search --------------------------------------------------------------


def _sqrt(x: Any) -> Any:
    return x.sqrt() if isinstance(x, Tensor) else math.sqrt(x)


def _cubic_interpolate(
    x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: tuple[Any, Any] | None = None
) -> Any:
    """The minimizer of the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1`` and
    ``g2``, clamped to ``bounds`` (default: the interval between ``x1`` and ``x2``); the
    middle of the bounds when the cubic has no minimum."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = _sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(
    obj_func: Callable[[list[Tensor], Any, Tensor], tuple[float, Tensor]],
    x: list[Tensor],
    t: Any,
    d: Tensor,
    f: float,
    g: Tensor,
    gtd: Any,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Tensor, Any, int]:
    """A step ``t`` along ``d`` from ``x`` (loss ``f``, gradient ``g``, slope ``gtd``) that
    satisfies the strong Wolfe conditions::

        f(t) <= f + c1 * t * gtd          (sufficient decrease)
        |f'(t)| <= -c2 * gtd              (curvature)

    First the step grows (by cubic extrapolation, up to 10x) until an interval that contains
    such a step is bracketed; then the bracket is zoomed in on by cubic interpolation, with
    safeguards against steps too close to its ends. Returns the loss, the gradient and the
    step found, and the number of evaluations of ``obj_func`` (at most ``max_ls``).
    """
    d_norm = d.abs().max()
    g = g.clone().contiguous()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # Bracketing: look for an interval [t_prev, t] that contains an acceptable step.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[Any] = []
    bracket_f: list[Any] = []
    bracket_g: list[Tensor] = []
    bracket_gtd: list[Any] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break

        # Extrapolate: a cubic step at least 1% beyond t and at most 10 t.
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))

        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:  # out of evaluations: settle for the better end of [0, t]
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until a step satisfies both conditions.
    insufficient_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the bracket is too small
            break

        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )

        # A point too close to an end of the bracket makes little progress: the first time,
        # accept it; if it happens again (or t fell outside), move it 10% of the width inside.
        hi, lo = max(bracket), min(bracket)
        eps = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < eps:
            if insufficient_progress or t >= hi or t <= lo:
                t = hi - eps if abs(t - hi) < abs(t - lo) else lo + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Not enough decrease: t becomes the high end.
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # both conditions hold
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # The minimum lies on the other side of t: the old low end becomes the high end.
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new

    t = bracket[low_pos]
    return bracket_f[low_pos], bracket_g[low_pos], t, ls_func_evals
