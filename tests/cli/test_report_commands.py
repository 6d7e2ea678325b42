"""report / diagnose / compare through the CLI: exit codes, JSON, HTML, hostile input."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
runner = CliRunner()


def test_diagnose_vm_fixture_fails_with_ro_findings():
    res = runner.invoke(app, ["diagnose", str(REPORTS / "vm_guest_kvm.json")])
    assert res.exit_code == 1, res.output
    assert "RO-KERNEL-VF" in res.output and "GDR-DEVICE-SLOW" in res.output


def test_diagnose_json():
    res = runner.invoke(app, ["--json", "diagnose", str(REPORTS / "baremetal_hgx.json")])
    data = json.loads(res.output)
    assert res.exit_code == 0
    assert {f["code"] for f in data["findings"]} >= {"RO-AB-NO-EFFECT"}


def test_compare_table_and_html(tmp_path):
    html = tmp_path / "c.html"
    res = runner.invoke(
        app,
        [
            "compare",
            str(REPORTS / "baremetal_hgx.json"),
            str(REPORTS / "vm_guest_kvm.json"),
            "--html",
            str(html),
        ],
    )
    assert res.exit_code == 1, res.output  # the VM's Report has FAIL findings
    assert "15b3:101e" in res.output and "0.215" in res.output
    assert res.output.rstrip().endswith(f"wrote {html}")
    assert "Leading cause in vm_guest_kvm: CAUSE-RO-NOT-HONOURED" in res.output
    page = html.read_text()
    assert page.startswith("<!doctype html>") and "data:image/svg+xml;base64," in page
    assert "RO-KERNEL-VF" in page


@pytest.mark.parametrize(
    ("a", "b", "code"),
    [("vm_guest_kvm", "baremetal_hgx", 0), ("baremetal_hgx", "vm_guest_kvm", 1)],
)
def test_compare_exits_1_when_b_has_a_fail_finding(a, b, code):
    """README says 1 means a FAIL finding; compare exited 0 whatever B held."""
    from gdrdiag.cli.report_files import load_report
    from gdrdiag.diagnose import diagnose

    fails = [
        f.code for f in diagnose(load_report(REPORTS / f"{b}.json")).findings if f.severity.value == "FAIL"
    ]
    assert bool(fails) == bool(code)
    for args in ([], ["--json"]):
        res = runner.invoke(app, [*args, "compare", str(REPORTS / f"{a}.json"), str(REPORTS / f"{b}.json")])
        assert res.exit_code == code, res.output


def test_compare_json_round_numbers():
    res = runner.invoke(
        app, ["--json", "compare", str(REPORTS / "baremetal_hgx.json"), str(REPORTS / "vm_guest_kvm.json")]
    )
    data = json.loads(res.output)
    assert any(c["case"]["key"] == "rdma_write_device_mr" and c["ratio"] < 0.25 for c in data["cases"])


HOSTILE = {
    "truncated.json": lambda good: good[: len(good) // 2],
    "not_json.json": lambda good: "this is not json",
    "huge_number.json": lambda good: good.replace('"median": 55.3', '"median": 1e400', 1),
    "wrong_type.json": lambda good: good.replace('"schema_version": 1', '"schema_version": "one"', 1),
    "future.json": lambda good: good.replace('"schema_version": 1', '"schema_version": 99', 1),
    "deep.json": lambda good: '{"schema_version": 1, "notes": ' + "[" * 50000 + "]" * 50000 + "}",
    "array.json": lambda good: "[1, 2, 3]",
    "binary.json": None,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["diagnose", "compare"])
def test_hostile_reports_exit_2_with_one_line(tmp_path, name, command):
    good = (REPORTS / "baremetal_hgx.json").read_text()
    path = tmp_path / name
    make = HOSTILE[name]
    if make is None:
        path.write_bytes(b"\x1f\x8b\x08\x00\xff\xfe garbage")
    else:
        path.write_text(make(good))
    args = [command, str(path)] + ([str(REPORTS / "vm_guest_kvm.json")] if command == "compare" else [])
    res = runner.invoke(app, args)
    assert res.exit_code == 2, (name, res.output)
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_missing_report_file(tmp_path):
    res = runner.invoke(app, ["diagnose", str(tmp_path / "nope.json")])
    assert res.exit_code == 2 and "no such file" in res.output


def test_report_without_gpu_writes_a_valid_report(tmp_path):
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason() is None:
        pytest.skip("a GPU is present; this checks the no-GPU path quickly")
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["report", "-o", str(out), "--quick", "--html", str(tmp_path / "r.html")])
    assert res.exit_code in (0, 1), res.output
    from gdrdiag.model.report import Report

    rep = Report.from_json(out.read_text())
    assert rep.machine is not None
    assert rep.results and all(r.status.value == "WAIVED" and r.reason for r in rep.results)
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    again = runner.invoke(app, ["diagnose", str(out)])
    assert again.exit_code == res.exit_code


def test_report_flag_conflict():
    res = runner.invoke(app, ["report", "-o", "x.json", "--quick", "--full"])
    assert res.exit_code == 2 and "not both" in res.output


def test_compare_html_renders_in_headless_chromium(tmp_path):
    """The documented browser check, automated where Chromium is installed (Debian: chromium)."""
    import shutil
    import subprocess

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium here (apt-get install chromium to run this check)")
    html = tmp_path / "c.html"
    runner.invoke(
        app,
        [
            "compare",
            str(REPORTS / "baremetal_hgx.json"),
            str(REPORTS / "vm_guest_kvm.json"),
            "--html",
            str(html),
        ],
    )
    png = tmp_path / "c.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1300,2400",
            f"--screenshot={png}",
            html.as_uri(),
        ],
        check=False,
        capture_output=True,
        timeout=120,
    )
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1300, 2400)
    assert len(data) > 100_000  # a blank page compresses to a few KiB; tables and plots do not
