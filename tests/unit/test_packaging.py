"""Packaging metadata: an SPDX license string, and a setuptools floor that accepts it.

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


def _setup_lines() -> list[str]:
    return (ROOT / "scripts" / "setup.sh").read_text().splitlines()


def test_setup_waits_for_apts_lock_and_says_so():
    """Apt-get exited 100 at once while unattended-upgrades held the lock."""
    lines = [ln for ln in _setup_lines() if not ln.lstrip().startswith("#")]
    calls = [ln for ln in lines if re.search(r"(^\s*|\$SUDO\s+)apt-get\s", ln)]
    assert calls and all("DPkg::Lock::Timeout" in ln for ln in calls), calls
    assert not [ln for ln in lines if re.search(r"^\s*(if !\s+)?(\$SUDO\s+)?apt-get\s+(update|install)", ln)]
    assert any("waiting up to" in ln and "apt's lock" in ln for ln in lines)


def test_setup_keeps_pips_banner_out_of_sight():
    """Set-up printed setuptools' editable-install banner."""
    pip_lines = [ln for ln in _setup_lines() if "pip install" in ln and not ln.lstrip().startswith("#")]
    assert pip_lines and all('>"$PIP_LOG" 2>&1' in ln for ln in pip_lines), pip_lines
