"""A bench's JSON (``--json``, ``--json-out``) says which machine measured it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.hw.bundle import LiveSource
from gdrdiag.inspect.collect import inspect_source

runner = CliRunner()
MR_SOFT = ["mr-bench", "--provider", "soft", "--memory", "pageable", "-n", "200", "--repeats", "1"]


def _this_machine() -> dict:
    machine = inspect_source(LiveSource())
    return {
        "hostname": machine.host.hostname,
        "gpus": [(g.name, g.bdf) for g in machine.gpus],
        "nics": [n.name for n in machine.nics],
        "is_vm": machine.virt.is_vm,
    }


def _identity(data: dict) -> dict:
    m = data["machine"]
    return {
        "hostname": m["host"]["hostname"],
        "gpus": [(g["name"], g["bdf"]) for g in m["gpus"]],
        "nics": [n["name"] for n in m["nics"]],
        "is_vm": m["virt"]["is_vm"],
    }


def test_mr_bench_json_out_names_the_machine(tmp_path):
    out = tmp_path / "mr.json"
    res = runner.invoke(app, [*MR_SOFT, "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["machine"] is not None
    assert data["machine"]["host"]["hostname"]
    assert _identity(data) == _this_machine()


def test_copy_bench_json_names_the_machine_even_when_everything_is_waived():
    res = runner.invoke(app, ["--json", "copy-bench", "--quick"])
    data = json.loads(res.stdout)
    assert data["results"]
    assert _identity(data) == _this_machine()


def test_a_machine_that_cannot_be_read_is_null_with_the_reason(tmp_path, monkeypatch):
    import gdrdiag.inspect.collect as collect

    def broken(source):
        raise OSError("sysfs went away")

    monkeypatch.setattr(collect, "inspect_source", broken)
    out = tmp_path / "mr.json"
    res = runner.invoke(app, [*MR_SOFT, "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["machine"] is None
    assert "machine facts unknown: sysfs went away" in data["notes"]
    assert [r["status"] for r in data["results"]] == ["OK"]  # the measurement is kept
