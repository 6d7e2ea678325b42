"""``gdrdiag inspect``: exit codes, JSON shape, bundles, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
runner = CliRunner()


@pytest.mark.parametrize(
    "name, code",
    [
        ("a_dev_firecracker", 0),
        ("b_synth_firecracker_h200", 0),
        ("c_baremetal_hgx_h100_cx7", 0),
        ("d_kvm_h100_cx7_vf", 1),
        ("e_baremetal_acs_redirect", 1),
        ("f_link_downtrained", 0),
    ],
)
def test_exit_code_follows_the_worst_finding(name, code):
    r = runner.invoke(app, ["inspect", "--bundle", str(MACHINES / name)])
    assert r.exit_code == code, r.output
    assert "Findings" in r.output and "virtualization:" in r.output


def test_json_is_a_report_with_machine_and_ranked_findings():
    r = runner.invoke(app, ["--json", "inspect", "--bundle", str(MACHINES / "d_kvm_h100_cx7_vf")])
    assert r.exit_code == 1
    d = json.loads(r.output)
    assert d["schema_version"] == 2 and d["machine"]["virt"]["is_vm"] is True
    assert d["findings"][0]["severity"] == "FAIL" and d["findings"][0]["code"] == "RO-KERNEL-VF"
    assert d["machine"]["nics"][0]["is_vf"] is True


def test_summary_uses_lspci_names():
    r = runner.invoke(app, ["inspect", "--wide", "--bundle", str(MACHINES / "f_link_downtrained")])
    assert "RlxdOrd+" in r.output and "MaxReadReq 4096" in r.output
    assert "x8 (downgraded)" in r.output and "16 GT/s (downgraded)" in r.output
    assert "PIX" in r.output


def test_live_inspect_runs_here():
    r = runner.invoke(app, ["inspect", "--brief"])
    assert r.exit_code in (0, 1), r.output
    assert "virtualization:" in r.output


def test_bad_bundle_is_a_one_line_usage_error(tmp_path):
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"\x1f\x8b garbage")
    r = runner.invoke(app, ["inspect", "--bundle", str(bad)])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and "corrupt or truncated" in r.output
    r = runner.invoke(app, ["inspect", "--bundle", str(tmp_path / "none.tar.gz")])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = runner.invoke(app, ["inspect", "--no-such-flag"])
    assert r.exit_code == 2


def test_help_is_fast_and_imports_nothing_heavy():
    code = (
        "import sys, time; t=time.time(); from gdrdiag.cli import app; "
        "heavy=[m for m in ('numpy','cuda','pyverbs','tabulate') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    t = time.time()
    subprocess.run([sys.executable, "-m", "gdrdiag", "--help"], capture_output=True, check=True)
    assert time.time() - t < 1.5  # generous for a loaded CI box; typically ~0.2 s
