"""Shared helpers for the fleet tests: the synthetic generator (scripts/fleet/make_synthetic.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures" / "reports"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "fleet" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def synthetic():
    """The make_synthetic module (generate, inject, FAULTS, EXPECTED_CAUSE)."""
    return _load("make_synthetic")


@pytest.fixture(scope="session")
def evaluate_mod():
    """The evaluate module (evaluate(fleet_json, manifest))."""
    return _load("evaluate")


@pytest.fixture(scope="session")
def small_fleet(synthetic, tmp_path_factory):
    """400 synthetic records (5 % node faults, 1 % noise, no bad records) in a folder, plus the manifest."""
    import json

    out = tmp_path_factory.mktemp("fleet")
    lines, manifest = synthetic.generate(400, 0.05, seed=7, noise=0.01, record_fault_rate=0.0)
    for host, line in lines:
        (out / f"{host}.json").write_text(line + "\n")
    (out / ".manifest.json").write_text(
        json.dumps({"expected_cause": synthetic.EXPECTED_CAUSE, "nodes": manifest})
    )
    return out, manifest
