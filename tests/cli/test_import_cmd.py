"""gdrdiag import on each format, merged with a bundle; bad input one line, exit 2; exit 1 on FAIL."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.model.report import Report

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
FIX = ROOT / "imported"
VM_BUNDLE = ROOT / "machines" / "d_kvm_h100_cx7_vf"
runner = CliRunner()


@pytest.mark.parametrize(
    "name",
    [
        "ib_write_bw_host.txt",
        "ib_read_bw_sweep.txt",
        "ib_send_bw_dmabuf.txt",
        "perftest_write.json",
        "nvbandwidth.json",
    ],
)
def test_each_format_imports_into_a_report(tmp_path, name):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["import", str(FIX / name), "-o", str(out)])
    assert res.exit_code in (0, 1), res.output
    rep = Report.from_json(out.read_text())
    assert rep.results and all(r.provider in ("perftest", "nvbandwidth") for r in rep.results)
    assert "no machine facts" in res.output


def test_import_with_bundle_is_judged_against_the_machine(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(
        app,
        [
            "import",
            str(FIX / "ib_write_bw_cuda.txt"),
            str(FIX / "ib_write_bw_host.txt"),
            "--bundle",
            str(VM_BUNDLE),
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 1, res.output
    rep = Report.from_json(out.read_text())
    assert rep.machine is not None and rep.machine.virt.is_vm
    assert rep.findings[0].code == "CAUSE-RO-NOT-HONOURED"
    again = runner.invoke(app, ["diagnose", str(out)])
    assert again.exit_code == 1 and "CAUSE-RO-NOT-HONOURED" in again.output


def test_import_into_a_saved_report(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(
        app,
        [
            "--json",
            "import",
            str(FIX / "nvbandwidth.json"),
            "--into",
            str(ROOT / "reports" / "baremetal_hgx.json"),
            "-o",
            str(out),
        ],
    )
    data = json.loads(res.output)
    assert any(r["provider"] == "nvbandwidth" for r in data["results"])
    assert any(r["provider"] == "fixture" for r in data["results"])


@pytest.mark.parametrize("content", ["truncated", "not json {", '{"a": 1}', ""])
def test_bad_input_is_one_line_exit_2(tmp_path, content):
    path = FIX / "truncated.txt" if content == "truncated" else tmp_path / "bad.txt"
    if content != "truncated":
        path.write_text(content)
    res = runner.invoke(app, ["import", str(path)])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output


def test_missing_file_and_missing_bundle_exit_2(tmp_path):
    assert runner.invoke(app, ["import", str(tmp_path / "nope.txt")]).exit_code == 2
    res = runner.invoke(
        app, ["import", str(FIX / "ib_write_bw_host.txt"), "--bundle", str(tmp_path / "nope")]
    )
    assert res.exit_code == 2


def test_diagnose_and_report_exit_1_on_a_failed_measurement(tmp_path):
    from tests.unit.diagnosis_scenarios import failed_measurement

    path = tmp_path / "failed.json"
    path.write_text(failed_measurement().to_json())
    res = runner.invoke(app, ["diagnose", str(path)])
    assert res.exit_code == 1 and "MEASURE-FAILED" in res.output
    res = runner.invoke(app, ["report", "--from-report", str(path), "-o", str(tmp_path / "out.json")])
    assert res.exit_code == 1, res.output
