"""``gdrdiag show``: every saved Report in tests/fixtures as text and JSON; bad files one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.cli.report_files import load_report
from gdrdiag.model.results import Status
from gdrdiag.render.report_view import fit_width
from gdrdiag.render.results_table import num, spread

from ..conftest import FIXTURES

# The v1 fixtures, and v2 Reports written by gdrdiag itself (a subfolder: the v1 golden test globs *.json)
REPORTS = FIXTURES / "reports"
REPORT_FILES = sorted(REPORTS.glob("*.json")) + sorted((REPORTS / "v2").glob("*.json"))
runner = CliRunner()


def _raw_schema(path: Path) -> int:
    return json.loads(path.read_text())["schema_version"]


def test_the_fixtures_hold_both_schema_versions():
    assert {_raw_schema(p) for p in REPORT_FILES} == {1, 2}


def _show(*args: str):
    return runner.invoke(app, ["show", *args])


@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: p.name)
def test_show_prints_the_reports_own_numbers(path):
    report = load_report(path)
    res = _show(str(path))
    assert res.exit_code == 0, res.output
    out = res.stdout
    m = report.machine
    assert f"host: {m.host.hostname}" in out
    assert f"gdrdiag {report.tool_version}" in out and report.created_utc in out
    for gpu in m.gpus:
        assert gpu.bdf in out and gpu.name in out
    for nic in m.nics:
        assert nic.name in out
    assert ("VM (" if m.virt.is_vm else "bare metal") in out
    # a few results per bench, each with its median and its sample spread as the file has them
    ok = [r for r in report.results if r.status is Status.OK]
    chosen = {r.bench: r for r in ok}.values()
    assert chosen
    for r in chosen:
        digits = 1 if r.bench.value == "mr" else 2
        assert num(r.value, digits) in out, (r.key, r.value)
        assert spread(r) in out, (r.key, spread(r))
    for f in report.findings:
        assert f.code in out
    count = f" ({len(report.findings)})" if report.findings else ": none"
    assert f"Findings saved in the Report{count}" in out


@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: p.name)
def test_show_fits_100_columns(path):
    res = _show(str(path))
    assert res.exit_code == 0
    widest = max(res.stdout.splitlines(), key=len)
    assert len(widest) <= 100, widest


@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: p.name)
def test_show_json_is_the_report_as_loaded_v2(path):
    res = _show(str(path), "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["schema_version"] == 2
    assert data == json.loads(load_report(path).to_json())
    # the root --json means the same
    assert json.loads(runner.invoke(app, ["--json", "show", str(path)]).stdout) == data


def test_show_one_bench():
    path = FIXTURES / "reports" / "vm_guest_kvm.json"
    res = _show(str(path), "--bench", "mr-bench")
    assert res.exit_code == 0
    assert "== mr-bench: 8 results" in res.stdout
    assert "relaxed ordering A/B" in res.stdout
    assert "== copy-bench" not in res.stdout and "Host<->GPU copies" not in res.stdout
    short = _show(str(path), "--bench", "gather")
    assert "== gather-bench: 3 results" in short.stdout and "== mr-bench" not in short.stdout
    none = _show(str(path), "--bench", "imported")
    assert none.exit_code == 0 and "imported: 0 results (none in this Report)" in none.stdout


def test_show_one_bench_as_json_keeps_only_its_results():
    path = FIXTURES / "reports" / "vm_guest_kvm.json"
    data = json.loads(_show(str(path), "--bench", "copy-bench", "--json").stdout)
    whole = load_report(path)
    assert [r["key"] for r in data["results"]] == [r.key for r in whole.results if r.bench.value == "copy"]
    assert len(data["findings"]) == len(whole.findings) and data["machine"] is not None


def test_show_a_report_without_machine_or_results(tmp_path):
    bare = tmp_path / "bare.json"
    bare.write_text('{"schema_version": 2}')
    res = _show(str(bare))
    assert res.exit_code == 0, res.output
    assert "machine: not recorded in this Report" in res.stdout
    assert "results: 0 (none)" in res.stdout and "Findings saved in the Report: none" in res.stdout


def test_show_imported_results(tmp_path):
    imported = tmp_path / "imported.json"
    source = FIXTURES / "imported" / "ib_write_bw_host.txt"
    assert runner.invoke(app, ["import", str(source), "-o", str(imported)]).exit_code in (0, 1)
    report = load_report(imported)
    res = _show(str(imported), "--bench", "imported")
    assert res.exit_code == 0, res.output
    assert "Imported results" in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= 100
    for r in report.results:
        assert r.key in res.stdout and num(r.value) in res.stdout


def _one_line_exit_2(res, *words: str) -> None:
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    for word in words:
        assert word in lines[0]


def test_bad_files_are_one_line_exit_2(tmp_path):
    _one_line_exit_2(_show(str(tmp_path / "missing.json")), "no such file")
    _one_line_exit_2(_show(str(tmp_path)), "not a regular file")
    (tmp_path / "text.json").write_text("this is not json")
    _one_line_exit_2(_show(str(tmp_path / "text.json")), "not valid JSON")
    (tmp_path / "v9.json").write_text('{"schema_version": 9, "results": []}')
    _one_line_exit_2(_show(str(tmp_path / "v9.json")), "schema_version")
    (tmp_path / "list.json").write_text("[1, 2]")
    _one_line_exit_2(_show(str(tmp_path / "list.json")), "a report is a JSON object")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00binary")
    _one_line_exit_2(_show(str(tmp_path / "bin.json")), "not UTF-8")


def test_unknown_bench_is_one_line_exit_2():
    res = _show(str(REPORT_FILES[0]), "--bench", "dma")
    _one_line_exit_2(res, "--bench", "copy-bench")


def test_fit_width_folds_a_wide_table_without_losing_a_cell():
    header = "case" + "".join(f"  col{i:02d}-long-name" for i in range(12))
    rule = "----" + "".join("  " + "-" * 15 for _ in range(12))
    row = "abcd" + "".join(f"  {i:>15}" for i in range(12))
    text = "\n".join(["Title", header, rule, row, "", "after the table"])
    folded = fit_width(text, 60)
    lines = folded.splitlines()
    assert max(len(line) for line in lines) <= 60
    assert lines[0] == "Title" and lines[-1] == "after the table"
    for i in range(12):
        assert f"col{i:02d}-long-name" in folded
        assert any(line.startswith("abcd") and f" {i}" in line for line in lines)
    # every part repeats the first column
    assert sum(1 for line in lines if line.startswith("case")) > 1


def test_show_never_prints_the_word_none():
    """The gather copy-engine reference's bytes column said None."""
    from typer.testing import CliRunner

    from gdrdiag.cli import app

    for name in ("baremetal_hgx", "vm_guest_kvm", "gpu_machine_h200"):
        res = CliRunner().invoke(app, ["show", str(REPORTS / f"{name}.json")], env={"COLUMNS": "100"})
        assert res.exit_code in (0, 1) and res.stdout.strip(), res.output
        # (evidence lines quote the stored findings' text, which diagnose writes: not show's own words)
        said = [ln for ln in res.stdout.splitlines() if "None" in ln.split() and "evidence:" not in ln]
        assert said == [], (name, said)


def test_a_report_without_a_schema_version_says_so_not_none(tmp_path):
    """`None is not a schema` in user text."""
    from typer.testing import CliRunner

    from gdrdiag.cli import app

    p = tmp_path / "r.json"
    p.write_text('{"results": []}')
    res = CliRunner().invoke(app, ["show", str(p)])
    assert res.exit_code == 2 and "schema_version is missing" in res.stderr and "None" not in res.stderr
