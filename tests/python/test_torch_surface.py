"""The parts of torch's surface that ordinary scripts touch first:
reflected operators (graph structure as torch records it), ``torch.cuda``
and ``torch.accelerator`` on a CPU-only machine, the default device,
``torch.backends`` flags, the legacy typed constructors and
``Tensor.type()``, node reprs and dtype arguments.

Expected node structures were recorded from torch 2.13 into
``data/reflected_ops_torch_nodes.json``; torch is not needed to run this.
"""

from __future__ import annotations

import json
from pathlib import Path

import ferrograd as torch
import numpy as np
import pytest

DATA = Path(__file__).parent / "data" / "reflected_ops_torch_nodes.json"

T = [1.0, 2.0]
CASES = {
    "2 * b": lambda b: 2 * b,
    "2.5 * b": lambda b: 2.5 * b,
    "True * b": lambda b: True * b,
    "1 + b": lambda b: 1 + b,
    "1 - b": lambda b: 1 - b,
    "2 / b": lambda b: 2 / b,
    "2 ** b": lambda b: 2**b,
    "b ** 2": lambda b: b**2,
    "b % 2": lambda b: b % 2,
    "b.fmod(2)": lambda b: b.fmod(2),
    "b - 1": lambda b: b - 1,
    "b / 2": lambda b: b / 2,
    "t + b": lambda b: torch.tensor(T) + b,
    "b.__rpow__(t)": lambda b: b.__rpow__(torch.tensor(T)),
    "rsub(b, 1)": lambda b: torch.rsub(b, 1),
    "rsub(b, 3, alpha=2)": lambda b: torch.rsub(b, 3, alpha=2),
    "rsub(b, t)": lambda b: torch.rsub(b, torch.tensor(T)),
}

# Closed-form d/dx of sum(f(sin x)) for each case (b = sin x).
GRADS = {
    "2 * b": lambda x: 2 * np.cos(x),
    "1 - b": lambda x: -np.cos(x),
    "2 / b": lambda x: -2 * np.cos(x) / np.sin(x) ** 2,
    "2 ** b": lambda x: np.log(2) * 2 ** np.sin(x) * np.cos(x),
    "b ** 2": lambda x: 2 * np.sin(x) * np.cos(x),
    "b.__rpow__(t)": lambda x: np.log(T) * np.array(T) ** np.sin(x) * np.cos(x),
    "rsub(b, 3, alpha=2)": lambda x: -2 * np.cos(x),
}

X = np.array([0.5, 1.5])


def node_of(case: str):
    x = torch.tensor(X.tolist(), dtype=torch.float64, requires_grad=True)
    b = x.sin()
    return x, CASES[case](b)


@pytest.mark.parametrize("case", list(CASES))
def test_reflected_and_scalar_forms_record_torchs_nodes(case):
    name, next_names, saved = json.loads(DATA.read_text())[case]
    _, y = node_of(case)
    fn = y.grad_fn
    assert fn.name() == name
    assert [n.name() if n is not None else None for n, _ in fn.next_functions] == next_names
    # (torch also shows `_saved_alpha` on AddBackward0/SubBackward0; ferrograd
    # shows it where alpha enters the formula of a Scalar overload.)
    for attr in ("_saved_exponent", "_saved_alpha"):
        if attr in saved and (attr != "_saved_alpha" or name.startswith("Rsub")):
            got = getattr(fn, attr)
            want = saved[attr]
            assert (isinstance(got, torch.Tensor) if want == "Tensor" else got == want), attr
    if name.startswith("Pow") and saved.get("_saved_self") != "Tensor":
        assert fn._saved_self == saved["_saved_self"]


@pytest.mark.parametrize("case", list(GRADS))
def test_reflected_forms_give_the_closed_form_gradient(case):
    x, y = node_of(case)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), GRADS[case](X), rtol=1e-12)


def test_reflected_values_match_numpy():
    a = torch.tensor([0.5, 2.0, -3.0], dtype=torch.float64)
    n = a.numpy()
    np.testing.assert_array_equal((2 / a).numpy(), np.reciprocal(n) * 2)
    np.testing.assert_array_equal((1 - a).numpy(), 1 - n)
    np.testing.assert_array_equal((3 * a).numpy(), 3 * n)
    np.testing.assert_array_equal((3 + a).numpy(), 3 + n)
    np.testing.assert_allclose((2**a).numpy(), 2.0**n, rtol=1e-15)
    np.testing.assert_array_equal(torch.rsub(a, 3, alpha=2).numpy(), 3 - 2 * n)
    i = torch.tensor([1, 2, 4])
    assert (2 / i).dtype == torch.float32
    np.testing.assert_array_equal((2 / i).numpy(), [2.0, 1.0, 0.5])
    assert (7 - i).tolist() == [6, 5, 3]


def test_node_dir_lists_saved_values_and_repr_is_torchs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    names = dir(y.grad_fn)
    assert "_saved_self" in names and "_raw_saved_other" in names and "name" in names
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert repr(acc).startswith("<AccumulateGrad object at 0x")
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")


def test_cuda_on_a_cpu_only_build():
    assert torch.cuda.is_available() is False
    assert torch.cuda.device_count() == 0
    torch.cuda.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == 0
    for f in (torch.cuda.current_device, torch.cuda.get_device_name, lambda: torch.cuda.set_device(0)):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            f()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch.zeros(2, device=device).device.type == "cpu"


def test_accelerator_backends_and_default_device():
    assert torch.accelerator.is_available() is False
    assert torch.accelerator.current_accelerator() is None
    assert torch.accelerator.device_count() == 0
    assert torch.get_default_device().type == "cpu"
    torch.set_default_device("cpu")
    torch.set_default_device(None)
    with pytest.raises(RuntimeError, match="CPU only"):
        torch.set_default_device("cuda")
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    assert torch.backends.cudnn.deterministic is True
    assert torch.backends.cudnn.is_available() is False
    assert torch.backends.mps.is_available() is False
    torch.use_deterministic_algorithms(True)
    assert torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(False)
    assert not torch.are_deterministic_algorithms_enabled()


def test_legacy_constructors_and_isinstance():
    f = torch.FloatTensor(2, 3)
    assert f.shape == (2, 3) and f.dtype == torch.float32
    assert torch.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert torch.LongTensor([1.7, -2.5]).tolist() == [1, -2]
    assert torch.DoubleTensor(torch.Size([4])).dtype == torch.float64
    assert torch.IntTensor([3]).dtype == torch.int32
    assert torch.BoolTensor([1, 0]).tolist() == [True, False]
    assert torch.FloatTensor().shape == (0,)
    assert isinstance(torch.ones(2), torch.FloatTensor)
    assert not isinstance(torch.ones(2, dtype=torch.float64), torch.FloatTensor)
    assert isinstance(torch.ones(2, dtype=torch.float64), torch.DoubleTensor)
    assert not issubclass(torch.FloatTensor, torch.Tensor)
    assert torch.FloatTensor.dtype == torch.float32
    a = torch.ones(3)
    shared = torch.FloatTensor(a)
    shared[0] = 5.0
    assert a[0].item() == 5.0
    with pytest.raises(TypeError, match="float64"):
        torch.FloatTensor(torch.ones(2, dtype=torch.float64))


def test_tensor_type_names_and_conversions():
    x = torch.ones(2)
    assert x.type() == "torch.FloatTensor"
    assert torch.ones(2, dtype=torch.int64).type() == "torch.LongTensor"
    assert x.type(torch.DoubleTensor).dtype == torch.float64
    assert x.type("torch.DoubleTensor").dtype == torch.float64
    assert x.type(torch.int64).dtype == torch.int64
    assert x.type(torch.FloatTensor) is x
    with pytest.raises(ValueError, match="invalid type: 'torch.float64'"):
        x.type("torch.float64")


def test_string_dtypes_are_type_errors():
    for f in (
        lambda: torch.randn(2, dtype="float32"),
        lambda: torch.zeros(2, dtype="float64"),
        lambda: torch.tensor([1], dtype="int64"),
        lambda: torch.ones(2).to(dtype="float64"),
    ):
        with pytest.raises(TypeError, match="dtype"):
            f()
    assert torch.zeros(2, dtype=float).dtype == torch.float64


def test_numpy_scalars_on_the_left_defer_to_the_tensor():
    b = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    y = np.float64(2.0) * b
    assert isinstance(y, torch.Tensor) and y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].variable is b
    z = np.float32(1.0) + b
    assert isinstance(z, torch.Tensor)
    np.testing.assert_array_equal(z.detach().numpy(), [1.5, 2.5])
    # (torch refuses an ndarray on the left; ferrograd takes it as a tensor.)
    w = np.array([1.0, 2.0]) * b
    np.testing.assert_array_equal(w.detach().numpy(), [0.5, 3.0])
