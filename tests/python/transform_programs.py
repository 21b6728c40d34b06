"""Random programs for the transform-composition test.

A program is a chain of 1-4 common ops (pointwise, matrix products in every
form, addmv/addr/baddbmm/addbmm, linear, softmax, cumsum, sort/topk/kthvalue/median,
flip, indexing, where, reductions, cat/stack,
reshapes, einsum, norms, cholesky, cholesky_solve, solve_triangular, and
sign-free products of the qr, eigh, lobpcg and svd factors, slogdet, logdet,
lu_factor, lu, lu_solve, solve, inv, det, pinv, lstsq, matrix_exp,
phase-free sums over eig's pairs, tensorinv, tensorsolve,
householder_product, vecdot, vander, cross, matrix_power, cond, multi_dot, and
the composites cdist, tensordot, block_diag, atleast_*d, meshgrid,
cartesian_prod, chain_matmul and embedding bags, Fourier filters and
power spectra, and the sequence, loss, attention and short-time Fourier
steps of ``transform_nn_ops``) applied
to a vector or a square matrix in float64,
with constants drawn from the seed. ``check_program`` runs every
composition of ``ferrograd.func``'s transforms (and
``autograd.functional``) on it and compares each with a loop of the
untransformed function, differentiated by the plain reverse-mode engine
(``autograd.grad``), whose Jacobian is itself checked against float64
central differences.

By hand, for many programs (prints a summary; the first failure is raised
with its program):

    python tests/python/transform_programs.py --count 5000 --seed 0
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import ferrograd as torch
import ferrograd.nn.functional as F
import numpy as np
from ferrograd.autograd.functional import hessian as ag_hessian
from ferrograd.autograd.functional import jacobian as ag_jacobian
from ferrograd.func import grad, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap
from transform_nn_ops import nn_ops
from vision_transform_ops import vision_ops

DT = torch.float64
MAX_NUMEL = 24


# ---------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------


class Program:
    """``f(x)``: the drawn chain of ops on an input of ``in_shape``."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        rng = np.random.default_rng(seed)
        self.rng = rng
        n = int(rng.integers(2, 5))
        self.in_shape: tuple[int, ...] = (n,) if rng.random() < 0.5 else (n, n)
        shape = self.in_shape
        self.steps: list[tuple[str, object]] = []
        for _ in range(int(rng.integers(1, 5))):
            name, fn, shape = draw_op(rng, shape)
            self.steps.append((name, fn))
        self.out_shape = shape

    def __call__(self, x):
        for _, fn in self.steps:
            x = fn(x)
        return x

    def __repr__(self) -> str:
        chain = " -> ".join(name for name, _ in self.steps)
        return f"Program(seed={self.seed}, in={list(self.in_shape)}, out={list(self.out_shape)}: {chain})"


def const(rng, *shape, scale=1.0):
    return torch.tensor(rng.normal(size=shape) * scale, dtype=DT)


def weight(rng, rows, cols):
    return const(rng, rows, cols, scale=1.0 / math.sqrt(cols))


UNARY = {
    "sin": torch.sin,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "square": lambda t: t * t,
    "cube": lambda t: t.pow(3),
    "exp_tanh": lambda t: torch.exp(t.tanh()),
    "softplus": F.softplus,
    "rational": lambda t: t / (1 + t * t),
    "leaky": lambda t: torch.relu(t) + 0.1 * t,
    "log1p_sq": lambda t: torch.log1p(t * t),
    "gelu": F.gelu,
    "cos_neg": lambda t: -t.cos(),
}


def chain_matmul(*matrices):
    """``torch.chain_matmul`` without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.chain_matmul(*matrices)


def meshgrid_mix(a, b, indexing):
    """A function of both grids of ``meshgrid(a, b)``."""
    ga, gb = torch.meshgrid(a, b, indexing=indexing)
    return ga * gb + ga.sin()


CDIST_P = [0.5, 1, 1.5, 2, 3.5, math.inf]


def _qr_signfree(t):
    """Q's columns scaled by R's diagonal (the same for either sign of each)."""
    q, r = torch.linalg.qr(t)
    return q * r.diagonal().unsqueeze(-2)


def _eigh_signfree(t):
    w, v = torch.linalg.eigh(t)
    return v * v * w.unsqueeze(-2)


def _lobpcg_signfree(t, x0, largest):
    w, v = torch.lobpcg(t, X=x0, largest=largest, tol=1e-12, niter=50)
    return v * v * w.unsqueeze(-2)


def _svd_signfree(t):
    u, s, _ = torch.linalg.svd(t, full_matrices=False)
    return u * u * s.unsqueeze(-2)


def _eig_phasefree(t):
    """A sum over the eigenpairs (free of their order and phases)."""
    w, v = torch.linalg.eig(t)
    return ((v * v.conj()).real * w.real.unsqueeze(-2).tanh()).sum(-1)


def power_spectrum(z):
    """``|z|^2`` of a complex tensor, smooth where ``z`` is 0 (unlike ``abs``)."""
    return (z * z.conj()).real


def draw_op(rng, s):
    """One op applicable to shape ``s`` (1-d or 2-d): ``(name, fn, out_shape)``."""
    d = len(s)
    cands = []

    def add(name, fn, out):
        out = tuple(int(v) for v in out)
        if 1 <= len(out) <= 2 and 0 < math.prod(out) <= MAX_NUMEL:
            cands.append((name, fn, out))

    m = int(rng.integers(1, 5))
    k = int(rng.integers(0, d))  # a dim
    # Pointwise, unary and with constants.
    u = list(UNARY)[int(rng.integers(len(UNARY)))]
    add(u, UNARY[u], s)
    c = const(rng, *s)
    c_last = const(rng, s[-1])
    add("mul_const", lambda t, c=c: t * c, s)
    add("add_bcast", lambda t, c=c_last: t + c, s)
    add("rsub_div", lambda t, c=c: (c - t) / (1 + c * c), s)
    add("maximum", lambda t, c=c: torch.maximum(t, c), s)
    add("hypot", lambda t, c=c: torch.hypot(t, 1.5 + c * c), s)
    add("logaddexp", lambda t, c=c: torch.logaddexp(t, c) + torch.logaddexp2(c, t), s)
    add("xlogy", lambda t, c=c: torch.xlogy(c, 1 + t * t) + torch.special.xlog1py(t, c * c), s)
    add("gamma_family", lambda t: torch.lgamma(1 + t * t) + torch.digamma(2 + t * t)
        + torch.polygamma(1, 1 + t * t), s)
    add("erf_bessel", lambda t: torch.erfinv(0.5 * t.tanh()) + torch.special.i1e(1 + t * t)
        + torch.special.log_ndtr(t) + torch.sinc(t) + torch.special.erfcx(t), s)
    # Fourier transforms: a filter through the half spectrum along the last
    # dim (and the Hermitian pair), the power spectrum along a dim, and a
    # 2-D filter.
    nf = s[-1]
    filt = torch.tensor(rng.uniform(0.5, 1.5, nf // 2 + 1), dtype=DT)
    add("fft.rfft_filter", lambda t, f=filt, n=nf: torch.fft.irfft(torch.fft.rfft(t) * f, n=n), s)
    add("fft.ihfft_filter",
        lambda t, f=filt, n=nf: torch.fft.hfft(torch.fft.ihfft(t) * f, n=n, norm="forward"), s)
    add("fft.power", lambda t, dd=k: power_spectrum(torch.fft.fft(t, dim=dd, norm="ortho")), s)
    if d == 2:
        filt2 = torch.tensor(rng.uniform(0.5, 1.5, (s[0], nf // 2 + 1)), dtype=DT)
        add("fft.rfft2_filter", lambda t, f=filt2, sh=s: torch.fft.irfft2(torch.fft.rfft2(t) * f, s=sh), s)
    # Matrix products in every form.
    w_left = weight(rng, m, s[0])
    w_right = weight(rng, s[-1], m)
    add("W@t", lambda t, w=w_left: w @ t, (m, *s[1:]))
    add("t@W", lambda t, w=w_right: t @ w, (*s[:-1], m))
    add("matmul", lambda t, w=w_right: torch.matmul(t, w), (*s[:-1], m))
    b = const(rng, m)
    w_lin = w_right.T.contiguous()
    add("linear", lambda t, w=w_lin: F.linear(t, w), (*s[:-1], m))
    add("linear_bias", lambda t, w=w_lin, b=b: F.linear(t, w, b), (*s[:-1], m))
    if d == 1:
        v = const(rng, s[0])
        add("mv", lambda t, w=w_left: torch.mv(w, t), (m,))
        add("dot", lambda t, v=v: torch.dot(t, v).unsqueeze(0), (1,))
        v_m = const(rng, m)
        add("outer", lambda t, v=v_m: torch.outer(t, v), (s[0], m))
        add("einsum_i,ij->j", lambda t, w=w_right: torch.einsum("i,ij->j", t, w), (m,))
        add("linalg.vecdot", lambda t, v=v: torch.linalg.vecdot(t, v).unsqueeze(0), (1,))
        if s[0] >= 2:
            add("linalg.vander", lambda t: torch.linalg.vander(t.tanh(), N=3), (s[0], 3))
        if s[0] == 3:
            add("linalg.cross", lambda t, v=v: torch.linalg.cross(t, v), (3,))
        stack_dim = int(rng.integers(0, 2))
        add("stack", lambda t, c=c, sd=stack_dim: torch.stack([t, c], dim=sd),
            (2, s[0]) if stack_dim == 0 else (s[0], 2))
        shape2 = (s[0], 1) if rng.random() < 0.5 else (1, s[0])
        add("reshape_2d", lambda t, sh=shape2: t.reshape(sh), shape2)
        ud = int(rng.integers(0, 2))
        add("unsqueeze", lambda t, dd=ud: t.unsqueeze(dd), (1, s[0]) if ud == 0 else (s[0], 1))
        add("vector_norm", lambda t: torch.linalg.vector_norm(t, dim=0, keepdim=True), (1,))
        add("normalize", lambda t: t / (1 + t.norm()), s)
        # Composites of a vector: one point for cdist, a coordinate vector
        # for meshgrid and cartesian_prod, a row for block_diag.
        add("atleast_2d", torch.atleast_2d, (1, s[0]))
        p = CDIST_P[int(rng.integers(len(CDIST_P)))]
        points = const(rng, m, s[0])
        add(f"cdist_point(p={p})", lambda t, c=points, p=p: torch.cdist(t.unsqueeze(0), c, p=p), (1, m))
        add("tensordot_0", lambda t, v=v_m: torch.tensordot(t, v, dims=0), (s[0], m))
        add("tensordot_1", lambda t, w=w_right: torch.tensordot(t, w, dims=1), (m,))
        add("meshgrid_ij", lambda t, v=v_m: meshgrid_mix(t, v, "ij"), (s[0], m))
        add("meshgrid_xy", lambda t, v=v_m: meshgrid_mix(v, t, "xy"), (s[0], m))
        add("meshgrid_self", lambda t: meshgrid_mix(t, t.cos(), "ij"), (s[0], s[0]))
        add("cartesian_prod", lambda t, v=v_m: torch.cartesian_prod(t, v), (s[0] * m, 2))
        add("cartesian_prod_self", lambda t: torch.cartesian_prod(t, t.tanh()), (s[0] * s[0], 2))
        add("block_diag_row", lambda t, v=v_m: torch.block_diag(t, v), (2, s[0] + m))
    else:
        v = const(rng, s[1])
        w2 = weight(rng, s[1], m)
        add("mm", lambda t, w=w2: torch.mm(t, w), (s[0], m))
        w_mm = weight(rng, m, s[0])
        add("mm_left", lambda t, w=w_mm: torch.mm(w, t), (m, s[1]))
        add("mv_self", lambda t, v=v: torch.mv(t, v), (s[0],))
        add("bmm", lambda t, w=w2: torch.bmm(t.unsqueeze(0), w.unsqueeze(0)).squeeze(0), (s[0], m))
        add("addmm", lambda t, w=w2, b=b: torch.addmm(b, t, w), (s[0], m))
        add("einsum_ij,jk->ik", lambda t, w=w2: torch.einsum("ij,jk->ik", t, w), (s[0], m))
        add("einsum_ij->ji", lambda t: torch.einsum("ij->ji", t), (s[1], s[0]))
        add("einsum_ij,ij->i", lambda t, c=c: torch.einsum("ij,ij->i", t, c), (s[0],))
        if s[0] == s[1]:
            add("einsum_ii->i", lambda t: torch.einsum("ii->i", t), (s[0],))
            add("diagonal", lambda t: t.diagonal(), (s[0],))
            # Factorizations of a positive-definite matrix made from t, and
            # triangular solves with t (or a constant) as the triangle.
            eye = torch.eye(s[0], dtype=DT)
            up = bool(rng.random() < 0.5)
            add(f"cholesky(upper={up})",
                lambda t, e=eye, u=up: torch.linalg.cholesky(t @ t.T / len(t) + e, upper=u), s)
            rhs = const(rng, s[0], m)
            add("cholesky_solve",
                lambda t, e=eye, r=rhs: torch.cholesky_solve(r, torch.linalg.cholesky(t @ t.T + e)),
                (s[0], m))
            left = bool(rng.random() < 0.5)
            add(f"solve_triangular(A=t, upper={up}, left={left})",
                lambda t, e=eye, r=rhs, u=up, lf=left: torch.linalg.solve_triangular(
                    t.tanh() + 2 * e, r if lf else r.T, upper=u, left=lf),
                (s[0], m) if left else (m, s[0]))
            shift = torch.diag(torch.arange(s[0], dtype=DT))
            rng_pow = int(rng.integers(-2, 4))
            add("eigh", lambda t, d=shift: _eigh_signfree(t @ t.T + d), s)
            if s[0] >= 3:
                x0, lg = const(rng, s[0], 1), bool(rng.random() < 0.5)
                add(f"lobpcg(largest={lg})",
                    lambda t, d=shift, x=x0, lg=lg: _lobpcg_signfree(t @ t.T + 3 * d, x, lg), (s[0], 1))
            add(f"matrix_power({rng_pow})",
                lambda t, e=eye, p=rng_pow: torch.linalg.matrix_power(0.3 * t + e, p), s)
            add("cond", lambda t, e=eye: torch.linalg.cond(0.3 * t + e).reshape(1), (1,))
            add("multi_dot", lambda t, w=w2: torch.linalg.multi_dot([t, t.tanh(), w]), (s[0], m))
            add("slogdet", lambda t, e=eye: torch.linalg.slogdet(t + 3 * e).logabsdet.reshape(1), (1,))
            add("logdet", lambda t, e=eye: torch.logdet(t @ t.T + e).reshape(1), (1,))
            # LU-based: the factors (packed, and unpacked) and the solves of
            # t moved away from singularity.
            add("lu_factor", lambda t, e=eye: torch.linalg.lu_factor(t + 3 * e).LU, s)
            add("lu", lambda t, e=eye: torch.cat(torch.linalg.lu(t + 3 * e)[1:]), (2 * s[0], s[1]))
            adj = bool(rng.random() < 0.5)
            add(f"lu_solve(adjoint={adj})",
                lambda t, e=eye, r=rhs, a=adj: torch.linalg.lu_solve(
                    *torch.linalg.lu_factor(t + 3 * e), r, adjoint=a), (s[0], m))
            fixed = torch.linalg.lu_factor(const(rng, s[0], s[0]) + 3 * eye)
            add("lu_solve(B=t)", lambda t, f=fixed: torch.linalg.lu_solve(f.LU, f.pivots, t), s)
            add("solve", lambda t, e=eye, r=rhs: torch.linalg.solve(t + 3 * e, r), (s[0], m))
            add("inv", lambda t, e=eye: torch.linalg.inv(t + 3 * e), s)
            add("det", lambda t, e=eye: torch.linalg.det(0.3 * t + e).reshape(1), (1,))
            tri = torch.tril(const(rng, s[0], s[0])) * 0.3 + eye
            add("solve_triangular(B=t)",
                lambda t, a=tri: torch.linalg.solve_triangular(a, t, upper=False, unitriangular=True), s)
            add("matrix_exp", lambda t: torch.linalg.matrix_exp(0.3 * t), s)
            add("eig", lambda t, d=shift: _eig_phasefree(0.3 * t + 2 * d), (s[0],))
            add("tensorinv", lambda t, e=eye: torch.linalg.tensorinv(t + 3 * e, ind=1), s)
            add("tensorsolve", lambda t, e=eye, r=rhs: torch.linalg.tensorsolve(t + 3 * e, r[:, 0]), (s[0],))
        # Factorizations of t moved well away from rank deficiency (and,
        # for svd, from repeated singular values).
        k_ = min(s)
        sep = torch.zeros(*s, dtype=DT)
        sep.diagonal().copy_(1.5 * torch.arange(1, k_ + 1, dtype=DT))
        add("qr", lambda t, e=sep: _qr_signfree(0.3 * t + e), (s[0], k_))
        add("svd", lambda t, e=sep: _svd_signfree(0.3 * t + e), (s[0], k_))
        add("pinv", lambda t, e=sep: torch.linalg.pinv(0.3 * t + e), (s[1], s[0]))
        rhs_ls = const(rng, s[0], 2)
        add("lstsq", lambda t, e=sep, r=rhs_ls: torch.linalg.lstsq(0.3 * t + e, r).solution, (s[1], 2))
        if s[0] >= s[1]:
            tau = const(rng, s[1]) * 0.5
            add("householder_product", lambda t, c=tau: torch.linalg.householder_product(t, c), s)
        add("transpose", lambda t: t.T, (s[1], s[0]))
        add("flatten", lambda t: t.reshape(-1), (s[0] * s[1],))
        row = int(rng.integers(0, s[0]))
        add("select_row", lambda t, r=row: t[r], (s[1],))
        cols = torch.tensor(rng.integers(0, s[1], size=int(rng.integers(1, 4))))
        add("index_cols", lambda t, i=cols: t[:, i], (s[0], len(cols)))
        add("sum_dim", lambda t, dd=k: t.sum(dd), s[:k] + s[k + 1:])
        add("matrix_norm", lambda t: torch.linalg.matrix_norm(t).reshape(1), (1,))
        add("frobenius_norm", lambda t: torch.frobenius_norm(t, (0, 1), keepdim=True)[0], (1,))
        add("row_normalize", lambda t: t / (1 + torch.linalg.vector_norm(t, dim=-1, keepdim=True)), s)
        # Bags of the matrix's rows, the matrix as an embedding table (two
        # bags split at a drawn cut; either may be empty).
        n_idx = int(rng.integers(1, 5))
        bag_idx = torch.tensor(rng.integers(0, s[0], size=n_idx))
        offsets = torch.tensor([0, int(rng.integers(0, n_idx + 1))])
        mode = ["sum", "mean", "max"][int(rng.integers(3))]
        psw = const(rng, n_idx) if mode == "sum" and rng.random() < 0.5 else None
        add(
            f"embedding_bag_{mode}" + ("_weighted" if psw is not None else ""),
            lambda t, i=bag_idx, o=offsets, md=mode, w=psw: F.embedding_bag(
                i, t, o, mode=md, per_sample_weights=w
            ),
            (2, s[1]),
        )
        # Composites of a matrix: its rows as points for cdist, contractions
        # with constants, a block of a block matrix, a factor of a chain.
        p = CDIST_P[int(rng.integers(len(CDIST_P)))]
        points = const(rng, m, s[1])
        add(f"cdist(p={p})", lambda t, c=points, p=p: torch.cdist(t, c, p=p), (s[0], m))
        mm_mode = "use_mm_for_euclid_dist"
        add("cdist_mm", lambda t, c=points: torch.cdist(c, t, compute_mode=mm_mode), (m, s[0]))
        add("tensordot_1", lambda t, w=w2: torch.tensordot(t, w, dims=1), (s[0], m))
        w3 = const(rng, s[0], s[1], m)
        add("tensordot_2", lambda t, w=w3: torch.tensordot(t, w, dims=2), (m,))
        add("tensordot_pairs", lambda t, w=w_mm: torch.tensordot(t, w, dims=([0], [1])), (s[1], m))
        block = const(rng, m, int(rng.integers(1, 3)))
        add("block_diag", lambda t, c=block: torch.block_diag(t, c), (s[0] + m, s[1] + block.shape[1]))
        c3 = const(rng, 1, s[1], m)
        add("atleast_3d", lambda t, c=c3: (torch.atleast_3d(t) * c).sum(0), (s[1], m))
        vec_m, vec_0 = const(rng, m), const(rng, s[0])
        add("addmv", lambda t, c=vec_0: torch.addmv(c, t, t[0].tanh(), beta=0.5), (s[0],))
        add("addr", lambda t, v=vec_m: torch.addr(t[:, :1] * 0.7, t[:, 0], v, alpha=1.5), (s[0], m))
        add("baddbmm", lambda t, w=w2: torch.baddbmm(t[:, :1], t[None], w[None], alpha=0.5), (1, s[0], m))
        add("addbmm", lambda t, w=w2: t[0, 0] + torch.addbmm(t @ w, t[None], w[None]), (s[0], m))
        if s[0] == s[1]:
            add("chain_matmul", lambda t, a=w_mm, b=w2: chain_matmul(a, t, t.tanh(), b), (m, m))
    # Along a dim.
    add("softmax", lambda t, dd=k: torch.softmax(t, dd), s)
    add("log_softmax", lambda t, dd=k: F.log_softmax(t, dim=dd), s)
    add("cumsum", lambda t, dd=k: torch.cumsum(t, dd), s)
    add("logcumsumexp", lambda t, dd=k: torch.logcumsumexp(t, dd), s)
    add("cummax", lambda t, dd=k: torch.cummax(t, dd).values, s)
    add("sort", lambda t, dd=k: torch.sort(t, dd, descending=True).values, s)
    kk = max(1, s[k] - 1)
    add("topk", lambda t, dd=k, kk=kk: torch.topk(t, kk, dd, largest=False).values, s[:k] + (kk,) + s[k + 1:])
    add("kthvalue", lambda t, dd=k, kk=kk: t.kthvalue(kk, dd, keepdim=True)[0], s[:k] + (1,) + s[k + 1:])
    add("median", lambda t, dd=k: t.median(dd, keepdim=True).values, s[:k] + (1,) + s[k + 1:])
    dims = tuple(int(x) for x in rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False))
    add("flip", lambda t, dd=dims: torch.flip(t, dd), s)
    # (var of one element is NaN.)
    red = ["sum", "mean", "amax", "logsumexp", "var"][int(rng.integers(5 if s[k] > 1 else 4))]
    add(f"{red}_keepdim", lambda t, dd=k, r=red: getattr(t, r)(dd, keepdim=True),
        s[:k] + (1,) + s[k + 1:])
    add("cat", lambda t, dd=k: torch.cat([t, t.sin()], dd), s[:k] + (2 * s[k],) + s[k + 1:])
    # Indexing and where.
    idx = torch.tensor(rng.integers(0, s[0], size=int(rng.integers(1, 4))))
    add("index", lambda t, i=idx: t[i], (len(idx), *s[1:]))
    if s[0] > 1:
        add("slice", lambda t: t[1:], (s[0] - 1, *s[1:]))
        add("step_slice", lambda t: t.flip(0)[::2], ((s[0] + 1) // 2, *s[1:]))
    cond = torch.tensor(rng.random(size=s) < 0.5)
    add("where_const", lambda t, c=cond: torch.where(c, t, 2 * t - 1), s)
    add("where_data", lambda t: torch.where(t > 0, t, 0.1 * t), s)
    extra_ops(rng, s, k, add)
    nn_ops(rng, s, k, add)
    vision_ops(rng, s, add, const)
    name, fn, out = cands[int(rng.integers(len(cands)))]
    return name, fn, out


def extra_ops(rng, s, k, add):
    """The composites of differences, integrals, statistics, splits and
    scatters (``_ops_reduce_extra``, ``_ops_shape_extra``, ``_ops_scatter_copy``)
    applicable to shape ``s``, with ``k`` a dim, offered through ``add``."""
    d = len(s)
    m = int(rng.integers(1, 4))
    n_k = s[k]
    others = s[:k] + s[k + 1:]
    # Differences and integrals along k (of at least two samples).
    if n_k < 2:
        return
    pre = const(rng, *(s[:k] + (1,) + s[k + 1:]))
    add("diff", lambda t, dd=k: torch.diff(t, dim=dd), s[:k] + (n_k - 1,) + s[k + 1:])
    add("diff_n2_prepend", lambda t, dd=k, p=pre: torch.diff(t, n=2, dim=dd, prepend=p),
        s[:k] + (n_k - 1,) + s[k + 1:])
    eo = 2 if n_k >= 3 and rng.random() < 0.5 else 1
    h = float(rng.uniform(0.5, 2.0))
    add(f"gradient(edge_order={eo})",
        lambda t, dd=k, e=eo, h=h: torch.gradient(t, spacing=h, dim=dd, edge_order=e)[0], s)
    coords = torch.tensor(np.cumsum(rng.uniform(0.3, 1.0, n_k)), dtype=DT)
    add(f"gradient_coords(edge_order={eo})",
        lambda t, dd=k, e=eo, c=coords: torch.gradient(t, spacing=[c], dim=dd, edge_order=e)[0], s)
    add("trapezoid_x", lambda t, dd=k, c=coords: torch.trapezoid(t, c, dim=dd).reshape(others or (1,)),
        others or (1,))
    add("trapz_dx", lambda t, dd=k: torch.trapz(t, dx=0.7, dim=dd).reshape(others or (1,)), others or (1,))
    add("cumulative_trapezoid", lambda t, dd=k, c=coords: torch.cumulative_trapezoid(t, c, dim=dd),
        s[:k] + (n_k - 1,) + s[k + 1:])
    # Products and distances.
    small = const(rng, *([1] * (d - 1) + [2]))
    add("kron", lambda t, c=small: torch.kron(t, c), s[:-1] + (2 * s[-1],))
    w_in = const(rng, m, s[-1])
    add("inner", lambda t, w=w_in: torch.inner(t, w), s[:-1] + (m,))
    p = [1, 2, 3.5, math.inf][int(rng.integers(4))]
    other = const(rng, *s)
    add(f"dist(p={p})", lambda t, c=other, p=p: torch.dist(t, c, p).reshape(1), (1,))
    # NaN-aware reductions and quantiles of t with NaN at drawn places (each
    # slice along k keeps a number).
    keep = rng.random(size=s) < 0.6
    np.moveaxis(keep, k, 0)[0] = True
    keep_t = torch.tensor(keep)

    def with_nan(t, c=keep_t):
        return torch.where(c, t, math.nan)

    add("nansum", lambda t, dd=k: torch.nansum(with_nan(t), dd).reshape(others or (1,)), others or (1,))
    add("nanmean_keepdim", lambda t, dd=k: torch.nanmean(with_nan(t), dd, keepdim=True),
        s[:k] + (1,) + s[k + 1:])
    method = ["linear", "lower", "higher", "midpoint", "nearest"][int(rng.integers(5))]
    q = torch.tensor(np.sort(rng.uniform(0, 1, m)), dtype=DT)
    add(f"quantile({method})", lambda t, dd=k, q=q, mt=method: torch.quantile(t, q, dim=dd, interpolation=mt),
        (m, *others))
    add(f"nanquantile({method})",
        lambda t, dd=k, q=q, mt=method: torch.nanquantile(with_nan(t), q, dim=dd, interpolation=mt),
        (m, *others))
    # Scatters: reductions into t, a masked scatter, and writes into views.
    idx = torch.tensor(rng.integers(0, n_k, size=s))
    red = ["sum", "prod", "mean", "amax", "amin"][int(rng.integers(5))]
    inc = bool(rng.random() < 0.5)
    add(f"scatter_reduce({red}, include_self={inc})",
        lambda t, dd=k, i=idx, r=red, inc=inc: t.scatter_reduce(dd, i, t.sin() * 1.3, r, include_self=inc), s)
    idx1 = torch.tensor(rng.integers(0, n_k, size=n_k))
    red1 = ["prod", "mean", "amax", "amin"][int(rng.integers(4))]
    add(f"index_reduce({red1}, include_self={inc})",
        lambda t, dd=k, i=idx1, r=red1, inc=inc: t.index_reduce(dd, i, t.cos(), r, include_self=inc), s)
    mask = torch.tensor(rng.random(size=s) < 0.5)
    add("masked_scatter", lambda t, mk=mask: torch.masked_scatter(t, mk, (t * 2).flip(0)), s)
    half = (n_k + 1) // 2
    add("slice_scatter",
        lambda t, dd=k, h=half: torch.slice_scatter(t, t.narrow(dd, 0, h).sin(), dd, 0, None, 2), s)
    add("narrow_copy_diff",
        lambda t, dd=k: torch.narrow_copy(t, dd, 1, n_k - 1) - torch.narrow_copy(t, dd, 0, n_k - 1),
        s[:k] + (n_k - 1,) + s[k + 1:])
    add("cumsum_", lambda t, dd=k: (t * 1.0).cumsum_(dd), s)
    split_at = int(rng.integers(1, n_k)) if n_k > 1 else 1
    add("tensor_split_swap",
        lambda t, dd=k, a=split_at: torch.cat(torch.tensor_split(t, [a], dim=dd)[::-1], dim=dd), s)
    t_idx = torch.tensor(rng.integers(0, n_k, size=s[:k] + (m,) + s[k + 1:]))
    add("take_along_dim", lambda t, dd=k, i=t_idx: torch.take_along_dim(t, i, dd), s[:k] + (m,) + s[k + 1:])
    if d == 1:
        n = s[0]
        v = const(rng, n)
        add("vdot", lambda t, v=v: torch.vdot(t, v).reshape(1), (1,))
        add("diagflat", lambda t: torch.diagflat(t, 1), (n + 1, n + 1))
        add("combinations", lambda t: torch.combinations(t, 2), (n * (n - 1) // 2, 2))
        add("combinations_repl", lambda t: torch.combinations(t.sin(), 2, True), (n * (n + 1) // 2, 2))
        add("column_stack", lambda t: torch.column_stack([t, t.sin()]), (n, 2))
        add("row_stack", lambda t, v=v: torch.row_stack([t, v]), (2, n))
        add("select_scatter_0d", lambda t: torch.select_scatter(t, t.sum(), 0, -1), s)
        add("unfold_copy", lambda t: torch.unfold_copy(t, 0, 2, 1), (n - 1, 2))
        if n == 3:
            add("cross", lambda t, v=v: torch.cross(t, v, dim=0), (3,))
    else:
        r, c = s
        add("cov", lambda t: torch.cov(t), (r, r))
        aw = torch.tensor(rng.uniform(0.5, 1.5, c), dtype=DT)
        add("cov_aweights", lambda t, w=aw: torch.cov(t, aweights=w, correction=0), (r, r))
        if c >= 3 and r >= 2:
            # A constant row has no coefficient (0/0): a ramp added to every
            # row keeps the rows of an earlier step's output (diagflat's zero
            # rows, say) from being constant.
            ramp = torch.linspace(0.0, 0.3, c, dtype=DT)
            add("corrcoef", lambda t, rp=ramp: torch.corrcoef(t + rp), (r, r))
        add("renorm", lambda t, dd=k: torch.renorm(t, 2, dd, 0.8), s)
        add("renorm_", lambda t: (t * 1.0).renorm_(1.5, 0, 1.0), s)
        kk = int(rng.integers(1, 4))
        add(f"rot90({kk})", lambda t, kk=kk: torch.rot90(t, kk), (c, r) if kk % 2 else s)
        add("column_stack", lambda t: torch.column_stack([t, t.sin()]), (r, 2 * c))
        add("select_scatter", lambda t: torch.select_scatter(t, t[0].sin(), 0, r - 1), s)
        add("diagonal_scatter", lambda t: torch.diagonal_scatter(t, t.diagonal(1).exp(), 1), s)
        add("sum_to_size", lambda t: t.sum_to_size(1, c), (1, c))
        add("fill_diagonal_", lambda t: (t * 1.0).fill_diagonal_(0.5), s)
        add("hsplit_cat", lambda t: torch.cat(torch.hsplit(t, [1])[::-1], 1), s)
        add("transpose_copy", lambda t: torch.transpose_copy(t, 0, 1), (c, r))
        add("diagonal_copy", lambda t: torch.diagonal_copy(t), (min(r, c),))
        if c == 3:
            w3 = const(rng, r, 3)
            add("cross_rows", lambda t, w=w3: torch.cross(t, w, dim=1), s)


# ---------------------------------------------------------------------------
# Oracles: the plain engine, and central differences
# ---------------------------------------------------------------------------


def ref_jacobian(f, x):
    """d f / d x as a (numel(out), numel(in)) matrix, one ``autograd.grad``
    row at a time."""
    xr = x.detach().requires_grad_()
    y = f(xr)
    if not y.requires_grad:  # f does not depend on x (a constant gradient, say)
        return torch.zeros(y.numel(), x.numel(), dtype=DT)
    rows = []
    for i in range(y.numel()):
        e = torch.zeros(y.numel(), dtype=DT)
        e[i] = 1.0
        (g,) = torch.autograd.grad(y, xr, e.reshape(y.shape), retain_graph=True, allow_unused=True)
        rows.append(torch.zeros(x.numel(), dtype=DT) if g is None else g.reshape(-1))
    return torch.stack(rows)


def ref_vjp(f, x, c):
    xr = x.detach().requires_grad_()
    (g,) = torch.autograd.grad(f(xr), xr, c, allow_unused=True)
    return torch.zeros_like(x) if g is None else g


def close_to_differences(got, f, x, what, prog):
    """``got`` against central differences of ``f`` at ``x``: the three-point
    stencil, or where a large third derivative (near-equal eigenvalues, say)
    swamps its h**2 error, the five-point one, whose error is h**4."""
    try:
        close(got, fd_jacobian(f, x), what, prog, atol=1e-5, rtol=1e-5)
    except Mismatch:
        close(got, fd_jacobian(f, x, eps=1e-4, points=5), what, prog, atol=1e-5, rtol=1e-5)


def fd_jacobian(f, x, eps=1e-6, points=3):
    """Central differences of ``f`` at ``x``, column by column: the three-point
    stencil, or the five-point one (``points=5``)."""
    xs = x.detach().reshape(-1)
    cols = []
    for i in range(xs.numel()):
        e = torch.zeros(xs.numel(), dtype=DT)
        e[i] = eps

        def at(k, e=e):
            return f((xs + k * e).reshape(x.shape)).detach()

        if points == 5:
            cols.append(((8 * (at(1) - at(-1)) - (at(2) - at(-2))) / (12 * eps)).reshape(-1))
        else:
            cols.append(((at(1) - at(-1)) / (2 * eps)).reshape(-1))
    return torch.stack(cols, dim=1)


# ---------------------------------------------------------------------------
# The compositions
# ---------------------------------------------------------------------------


class Mismatch(AssertionError):
    pass


def close(got, want, what, prog, atol=1e-9, rtol=1e-7):
    g = np.asarray(got.detach().numpy() if hasattr(got, "numpy") else got, dtype=np.float64)
    w = np.asarray(want.detach().numpy() if hasattr(want, "numpy") else want, dtype=np.float64)
    if g.shape != w.shape or not np.allclose(g, w, atol=atol, rtol=rtol):
        diff = np.abs(g - w).max() if g.shape == w.shape else "shape"
        raise Mismatch(f"{what}: {prog}: got shape {g.shape}, want {w.shape}, max diff {diff}")


def batch_at(rows, dim):
    """``rows`` stacked along ``dim`` (the input a vmap with that in_dim takes)."""
    return torch.stack(list(rows), dim=dim)


def check_program(prog: Program) -> list[str]:
    """Runs every composition on ``prog``; returns the names of the checks
    run (raises ``Mismatch`` on the first disagreement)."""
    rng = prog.rng
    f = prog
    ins, outs = prog.in_shape, prog.out_shape
    n_in, n_out = math.prod(ins), math.prod(outs)
    ran = []

    def rnd(*shape):
        return const(rng, *shape, scale=0.7)

    def bdim(nd):
        return int(rng.integers(0, nd + 1))

    x = rnd(*ins)
    c_out = rnd(*outs)

    def g(t):
        return (f(t) * c_out).sum()

    J = ref_jacobian(f, x)
    close(J, fd_jacobian(f, x), "reference jacobian vs central differences", prog, atol=1e-5, rtol=1e-5)

    # vmap(f), random in_dims/out_dims.
    B = int(rng.integers(1, 4))
    rows = [rnd(*ins) for _ in range(B)]
    di, do = bdim(len(ins)), bdim(len(outs))
    got = vmap(f, in_dims=di, out_dims=do)(batch_at(rows, di))
    close(got, batch_at([f(r) for r in rows], do), "vmap(f)", prog)
    ran.append("vmap(f)")

    # vmap(vjp_fn), random in_dims/out_dims; and vjp_fn itself.
    out0, vjp_fn = vjp(f, x)
    close(out0, f(x), "vjp output", prog)
    cots = [rnd(*outs) for _ in range(B)]
    want = [ref_vjp(f, x, c) for c in cots]
    close(vjp_fn(cots[0])[0], want[0], "vjp_fn", prog)
    di, do = bdim(len(outs)), bdim(len(ins))
    (got,) = vmap(vjp_fn, in_dims=di, out_dims=do)(batch_at(cots, di))
    close(got, batch_at(want, do), "vmap(vjp_fn)", prog)
    ran.append("vmap(vjp_fn)")

    # vmap of jvp, the primal batched or not.
    tans = [rnd(*ins) for _ in range(B)]
    shared = rng.random() < 0.5

    def jvp_out(a, t):
        return jvp(f, (a,), (t,))[1]

    if shared:
        got = vmap(jvp_out, in_dims=(None, 0))(x, batch_at(tans, 0))
        want = [(J @ t.reshape(-1)).reshape(outs) for t in tans]
    else:
        got = vmap(jvp_out)(batch_at(rows, 0), batch_at(tans, 0))
        want = [(ref_jacobian(f, r) @ t.reshape(-1)).reshape(outs) for r, t in zip(rows, tans, strict=True)]
    close(got, batch_at(want, 0), "vmap(jvp)", prog)
    ran.append("vmap(jvp)")

    # vmap(grad(g)).
    got = vmap(grad(g))(batch_at(rows, 0))
    close(got, batch_at([ref_vjp(f, r, c_out) for r in rows], 0), "vmap(grad)", prog)
    ran.append("vmap(grad)")

    # Jacobians: every way, and chunked.
    Jt = J.reshape(*outs, *ins)
    close(jacrev(f)(x), Jt, "jacrev", prog)
    close(jacfwd(f)(x), Jt, "jacfwd", prog)
    chunk = int(rng.integers(1, n_out + 1))
    close(jacrev(f, chunk_size=chunk)(x), Jt, f"jacrev(chunk_size={chunk})", prog)
    close(ag_jacobian(f, x), Jt, "autograd.functional.jacobian", prog)
    close(ag_jacobian(f, x, vectorize=True), Jt, "autograd.functional.jacobian(vectorize)", prog)
    close(ag_jacobian(f, x, vectorize=True, strategy="forward-mode"), Jt,
          "autograd.functional.jacobian(forward-mode)", prog)
    ran.append("jacobians")

    # Hessians: every way, symmetric, against differences of the gradient.
    H = hessian(g)(x)
    Hm = H.reshape(n_in, n_in)
    close(Hm, Hm.T, "hessian symmetric", prog)
    close(H, jacfwd(jacrev(g))(x), "hessian vs jacfwd(jacrev)", prog)
    close(H, jacrev(jacrev(g))(x), "hessian vs jacrev(jacrev)", prog)
    close(H, ag_hessian(g, x), "hessian vs autograd.functional.hessian", prog)
    close_to_differences(Hm, lambda t: ref_vjp(f, t, c_out), x, "hessian vs differences", prog)
    ran.append("hessians")

    # Nesting depth 2: two drawn compositions per program.
    for name in rng.choice(list(NESTED), size=2, replace=False):
        NESTED[name](prog, x, rnd, J)
        ran.append(str(name))
    return ran


def _vmap_vmap_f(prog, x, rnd, J):
    b1, b2 = 2, 3
    xs = [[rnd(*prog.in_shape) for _ in range(b2)] for _ in range(b1)]
    grid = torch.stack([torch.stack(r) for r in xs])
    got = vmap(vmap(prog))(grid)
    want = torch.stack([torch.stack([prog(v) for v in r]) for r in xs])
    close(got, want, "vmap(vmap(f))", prog)


def _vmap_vmap_vjp(prog, x, rnd, J):
    _, vjp_fn = vjp(prog, x)
    cots = [[rnd(*prog.out_shape) for _ in range(3)] for _ in range(2)]
    grid = torch.stack([torch.stack(r) for r in cots])
    (got,) = vmap(vmap(vjp_fn), in_dims=1)(grid.movedim(0, 1))
    want = torch.stack([torch.stack([ref_vjp(prog, x, c) for c in r]) for r in cots])
    close(got, want, "vmap(vmap(vjp_fn))", prog)


def _jacrev_of_vmap_vjp(prog, x, rnd, J):
    C = torch.stack([rnd(*prog.out_shape) for _ in range(2)])

    def h(a):
        return vmap(vjp(prog, a)[1])(C)[0]

    got = jacrev(h)(x)
    want = []
    for c in C:
        def hi(a, c=c):
            ar = a if a.requires_grad else a.requires_grad_()
            return torch.autograd.grad(prog(ar), ar, c, create_graph=True)[0]

        want.append(ref_jacobian(hi, x).reshape(*prog.in_shape, *prog.in_shape))
    close(got, torch.stack(want), "jacrev(x -> vmap(vjp(f, x)[1])(C))", prog)


def _vjp_of_vmap(prog, x, rnd, J):
    xs = torch.stack([rnd(*prog.in_shape) for _ in range(3)])
    cots = torch.stack([rnd(*prog.out_shape) for _ in range(3)])
    out, vjp_fn = vjp(vmap(prog), xs)
    close(out, torch.stack([prog(r) for r in xs]), "vjp(vmap(f)) output", prog)
    (got,) = vjp_fn(cots)
    want = torch.stack([ref_vjp(prog, r, c) for r, c in zip(xs, cots, strict=True)])
    close(got, want, "vjp(vmap(f))", prog)


def _vmap_of_vmap_vjp_inside(prog, x, rnd, J):
    xs = torch.stack([rnd(*prog.in_shape) for _ in range(2)])
    C = torch.stack([rnd(*prog.out_shape) for _ in range(3)])
    (got,) = vmap(lambda a: vmap(vjp(prog, a)[1])(C))(xs)
    want = torch.stack([torch.stack([ref_vjp(prog, r, c) for c in C]) for r in xs])
    close(got, want, "vmap(a -> vmap(vjp(f, a)[1])(C))", prog)


def _vmap_jacrev_hessian(prog, x, rnd, J):
    xs = torch.stack([rnd(*prog.in_shape) for _ in range(2)])
    got = vmap(jacrev(prog))(xs)
    want = torch.stack([ref_jacobian(prog, r).reshape(*prog.out_shape, *prog.in_shape) for r in xs])
    close(got, want, "vmap(jacrev(f))", prog)
    got = vmap(jacfwd(prog))(xs)
    close(got, want, "vmap(jacfwd(f))", prog)
    c = rnd(*prog.out_shape)

    def g(t):
        return (prog(t) * c).sum()

    got = vmap(hessian(g))(xs)
    for row, r in zip(got, xs, strict=True):
        n = r.numel()
        close_to_differences(row.reshape(n, n), lambda t: ref_vjp(prog, t, c), r, "vmap(hessian(g))", prog)


def _vmap_linearize(prog, x, rnd, J):
    _, jvp_fn = linearize(prog, x)
    tans = torch.stack([rnd(*prog.in_shape) for _ in range(3)])
    got = vmap(jvp_fn)(tans)
    want = torch.stack([(J @ t.reshape(-1)).reshape(prog.out_shape) for t in tans])
    close(got, want, "vmap(linearize jvp_fn)", prog)


def _vmap_autograd_grad(prog, x, rnd, J):
    xr = x.detach().requires_grad_()
    y = prog(xr)
    cots = torch.stack([rnd(*prog.out_shape) for _ in range(3)])
    (got,) = vmap(lambda c: torch.autograd.grad(y, xr, c, retain_graph=True))(cots)
    close(got, torch.stack([ref_vjp(prog, x, c) for c in cots]), "vmap(autograd.grad on outer graph)", prog)


def _jacfwd_of_vmap(prog, x, rnd, J):
    xs = torch.stack([rnd(*prog.in_shape) for _ in range(2)])
    got = jacfwd(vmap(prog))(xs)
    n = math.prod(prog.out_shape)
    want = torch.zeros(2, n, 2, math.prod(prog.in_shape), dtype=DT)
    for i, r in enumerate(xs):
        want[i, :, i, :] = ref_jacobian(prog, r)
    close(got.reshape(want.shape), want, "jacfwd(vmap(f))", prog)


NESTED = {
    "vmap(vmap(f))": _vmap_vmap_f,
    "vmap(vmap(vjp_fn))": _vmap_vmap_vjp,
    "jacrev(vmap(vjp_fn))": _jacrev_of_vmap_vjp,
    "vjp(vmap(f))": _vjp_of_vmap,
    "vmap(vmap(vjp_fn) inside)": _vmap_of_vmap_vjp_inside,
    "vmap(jacrev/jacfwd/hessian)": _vmap_jacrev_hessian,
    "vmap(linearize)": _vmap_linearize,
    "vmap(autograd.grad)": _vmap_autograd_grad,
    "jacfwd(vmap(f))": _jacfwd_of_vmap,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-going", action="store_true", help="report every failure, not the first")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    failures = []
    for seed in range(args.seed, args.seed + args.count):
        prog = Program(seed)
        try:
            check_program(prog)
        except Exception as e:  # noqa: BLE001  (reported with the program)
            if not args.keep_going:
                raise
            failures.append(f"{prog}: {type(e).__name__}: {e}".splitlines()[0])
    for line in failures:
        print(line)
    print(f"{args.count} programs, {len(failures)} failed, {time.perf_counter() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
