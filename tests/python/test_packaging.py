"""What the installed package carries: its version, single-sourced from
Cargo.toml, and its type stubs."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import ferrograd

ROOT = Path(__file__).resolve().parents[2]


def test_version_comes_from_cargo_toml():
    cargo = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'\[workspace\.package\][^\[]*?\nversion = "([^"]+)"', cargo)
    assert m, "workspace version not found in Cargo.toml"
    assert ferrograd.__version__ == m.group(1)
    assert importlib.metadata.version("ferrograd") == m.group(1)


def test_package_carries_its_stubs():
    package = Path(ferrograd.__file__).parent
    assert (package / "_core.pyi").is_file()
    # PEP 561: without the marker, type checkers ignore the package's types.
    assert (package / "py.typed").is_file()


# A meta-path finder that refuses numpy, so the child below runs as on a
# machine without it.
_WITHOUT_NUMPY = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("No module named 'numpy'")
sys.meta_path.insert(0, Refuse())
import ferrograd as torch
import ferrograd.autograd.functional, ferrograd.func, ferrograd.nn, ferrograd.optim, ferrograd.utils.data
from ferrograd.utils.data import DataLoader, TensorDataset
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
(x * x).sum().backward()
batch = next(iter(DataLoader(TensorDataset(torch.arange(4.0)), batch_size=2)))
print(x.grad.tolist(), batch[0].tolist(), "numpy" in sys.modules)
try:
    x.detach().numpy()
except ImportError as e:
    print("numpy():", type(e).__name__)
"""


def test_numpy_is_an_optional_extra():
    # ferrograd[numpy] is optional: everything but the NumPy bridge works
    # without it, and the bridge says what is missing.
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_NUMPY], capture_output=True, text=True, timeout=120, check=True
    ).stdout.splitlines()
    assert out[0] == "[2.0, -4.0, 6.0] [0.0, 1.0] False"
    assert out[1] == "numpy(): ImportError"
