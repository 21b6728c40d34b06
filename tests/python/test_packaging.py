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
