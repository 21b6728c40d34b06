"""Views of non-leaf tensors written in place, then differentiated once and
twice, in reverse and forward mode.

* Fixed programs: an in-place op on a view (unary ops that save their
  result, and the others) followed by a double backward, against float64
  finite differences (``check_grad`` checks first and second order in
  reverse mode and the tangents in forward mode).
* Random programs (tests/python/inplace_programs.py): every slot's value
  against NumPy; first- and second-order gradients, forward-mode tangents
  and forward-over-reverse products against float64 central differences
  of the NumPy replay; reverse against forward mode. ferrograd may refuse
  a program with "modified by an inplace operation" only where torch 2.13
  refuses it too: the seeds torch refuses were recorded by
  ``python scripts/fuzz_inplace_views.py --count 300 --torch
  --write-refusals tests/python/data/inplace_views_torch_refusals.json``
  (torch is not needed to run this test). The script runs any number of
  programs against torch directly.
"""

from __future__ import annotations

import json
import pathlib

import ferrograd as torch
import numpy as np
import pytest
from gradcheck_util import check_grad
from inplace_programs import check_program, generate, program_digest

VIEWS = {
    "select": lambda b: b[0],
    "t_step": lambda b: b.t()[::2],
    "diagonal": lambda b: b.diagonal(),
    "narrow": lambda b: b.narrow(1, 1, 2),
    "unsqueeze": lambda b: b[1:].unsqueeze(0),
}
UNARY = ["tanh_", "sigmoid_", "exp_", "sqrt_", "sin_", "cos_", "neg_", "reciprocal_", "rsqrt_"]


def issue_program(x):
    b = x * 1.0
    v = b[0]
    v.tanh_()
    return (v * v).sin().sum()


def test_double_backward_through_inplace_op_on_view_matches_finite_differences():
    values = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.2]]
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    loss = issue_program(x)
    (g,) = torch.autograd.grad(loss, [x], create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), [x])
    assert g2.shape == x.shape
    check_grad(issue_program, [x.detach().numpy()])


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("op", UNARY)
def test_unary_inplace_on_view_gradients_at_every_order(view, op):
    def fn(x):
        b = x * 1.0 + 1.5  # positive, for sqrt_/rsqrt_/reciprocal_
        v = VIEWS[view](b)
        getattr(v, op)()
        return (v * v).sin().sum() + (b * 0.3).sin().sum()

    x = np.random.default_rng(3).uniform(-0.4, 0.4, (3, 4))
    check_grad(fn, [x], layouts=("contiguous",))


@pytest.mark.parametrize(
    "write",
    [
        lambda v, w: v.mul_(w),
        lambda v, w: v.add_(w * w, alpha=-0.5),
        lambda v, w: v.div_(w + 2.0),
        lambda v, w: v.copy_(w.sin()),
        lambda v, w: v.clamp_(min=-0.05, max=0.95),
        lambda v, w: v.pow_(2),
        lambda v, w: v.addcmul_(w, w, value=0.5),
        lambda v, w: v.lerp_(w, 0.3),
    ],
    ids=["mul_", "add_", "div_", "copy_", "clamp_", "pow_", "addcmul_", "lerp_"],
)
def test_binary_inplace_on_view_gradients_at_every_order(write):
    def fn(x, w):
        b = x * 1.0
        v = b.t()[::2]
        write(v, w)
        return (v * v).sin().sum() + (b * 0.7).sin().sum()

    rng = np.random.default_rng(5)
    check_grad(fn, [rng.uniform(-0.4, 0.4, (3, 4)), rng.uniform(0.1, 0.9, (2, 3))], layouts=("contiguous",))


def test_double_backward_through_exp_on_view_matches_closed_form():
    x = torch.rand(3, 4, dtype=torch.float64, requires_grad=True)
    b = x * 1.0
    v = b[0]
    v.exp_()
    assert b.grad_fn.name() == "CopySlices"
    loss = (v * v).sum()
    (g,) = torch.autograd.grad(loss, [x], create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), [x])
    # loss = sum_j exp(2 x0j): g = 2 exp(2 x0), g2 = 4 exp(2 x0) on row 0.
    want = np.zeros((3, 4))
    want[0] = 4 * np.exp(2 * x.detach().numpy()[0])
    np.testing.assert_allclose(g2.numpy(), want, rtol=1e-12)


def test_fill_and_zero_on_non_leaf_record_a_zero_gradient():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x * 2
    y[1:].fill_(5.0)
    assert y.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 0.0])
    z = x * 3.0
    z.zero_()
    assert z.grad_fn.name() == "FillBackward0"
    (g,) = torch.autograd.grad((z + x * x).sum(), [x])
    np.testing.assert_allclose(g.numpy(), 2 * x.detach().numpy())


REFUSALS_FILE = pathlib.Path(__file__).parent / "data" / "inplace_views_torch_refusals.json"
REFUSALS = json.loads(REFUSALS_FILE.read_text())
N_PROGRAMS = REFUSALS["count"]
CHUNK = 25


@pytest.mark.parametrize("start", range(0, N_PROGRAMS, CHUNK))
def test_random_view_inplace_programs_match_finite_differences(start):
    refused_by_torch = REFUSALS["refused"]
    checked = 0
    for seed in range(start, min(start + CHUNK, N_PROGRAMS)):
        prog, x, w = generate(seed)
        verdict = check_program(torch, prog, x, w, seed)
        if verdict == "refused":
            assert refused_by_torch.get(str(seed)) == program_digest(seed), (
                f"seed {seed}: ferrograd refuses a program torch computes "
                f"(or the generator changed; re-record the refusals):\n{prog.source()}"
            )
        else:
            checked += 1
    # Most programs are accepted by torch and fully checked.
    assert checked >= CHUNK // 2, f"only {checked} programs checked in seeds {start}..{start + CHUNK}"
