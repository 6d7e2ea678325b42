"""Packaging metadata (issue 12): an SPDX license string, and a setuptools floor that accepts it.

setuptools deprecates ``project.license`` as a TOML table (builds fail from 2027-02-18); the SPDX
string form needs setuptools >= 77.0.3 (PEP 639). ``scripts/check_build_floor.sh`` builds the
wheel with exactly the floor and fails on any setuptools warning; this test keeps the two in step.
"""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_is_an_spdx_string():
    assert PYPROJECT["project"]["license"] == "Apache-2.0"


def test_setuptools_floor_accepts_the_spdx_license():
    (req,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    m = re.fullmatch(r"setuptools>=(\d+)\.(\d+)\.(\d+)", req)
    assert m, f"{req}: give an exact, tested lower bound"
    assert tuple(map(int, m.groups())) >= (77, 0, 3)
    assert "setuptools==$FLOOR" in (ROOT / "scripts/check_build_floor.sh").read_text()
