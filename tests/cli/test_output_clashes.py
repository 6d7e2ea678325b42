"""Outputs are checked against each other and against the inputs before any work, whatever --force.

``report -o X --html X`` ran every step, wrote X and only then refused the second output;
``compare A B --html A --force`` replaced its own input with an HTML page; ``fleet --drain-z nan``
was taken (every comparison with NaN is false, so no node was ever drained). Each is one line on
stderr, exit 2, and nothing is written.
"""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

from ..conftest import FIXTURES

REPORT = FIXTURES / "reports" / "baremetal_hgx.json"
VM = FIXTURES / "reports" / "vm_guest_kvm.json"


def _refused(res, words: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.stdout[-300:], res.stderr)
    assert res.stderr.count("\n") == 1 and words in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and "[1/" not in res.stderr  # no step ran


@pytest.mark.parametrize("source", [["--quick"], ["--from-report", str(REPORT), "--host", "n1"]])
def test_two_outputs_naming_one_file_are_refused_before_the_work(tmp_path, source):
    out = tmp_path / "x"
    res = CliRunner().invoke(app, ["report", *source, "-o", str(out), "--html", str(out)])
    _refused(res, "name the same file")
    assert not out.exists()


def test_two_outputs_through_different_spellings_are_one_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    res = CliRunner().invoke(
        app, ["report", "--from-report", str(REPORT), "-o", "r.json", "--html", "sub/../r.json"]
    )
    _refused(res, "name the same file")
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("which", ["a", "b"])
def test_force_does_not_let_an_output_replace_an_input(tmp_path, which):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    shutil.copy(REPORT, a)
    shutil.copy(VM, b)
    before = (a.read_bytes(), b.read_bytes())
    target = a if which == "a" else b
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--html", str(target), "--force"])
    _refused(res, "is one of its inputs")
    assert (a.read_bytes(), b.read_bytes()) == before


def test_report_from_a_report_cannot_overwrite_it(tmp_path):
    src = tmp_path / "r.json"
    shutil.copy(REPORT, src)
    before = src.read_bytes()
    res = CliRunner().invoke(
        app, ["report", "--from-report", str(src), "--host", "n1", "-o", str(src), "--force"]
    )
    _refused(res, "is one of its inputs")
    assert src.read_bytes() == before


@pytest.mark.parametrize(
    "option, value",
    [("--drain-z", "nan"), ("--investigate-z", "inf"), ("--drain-z", "-inf"), ("--investigate-z", "nan")],
)
def test_fleet_z_thresholds_must_be_finite(tmp_path, option, value):
    (tmp_path / "r").mkdir()
    res = CliRunner().invoke(app, ["fleet", str(tmp_path / "r"), option, value])
    _refused(res, "finite")
