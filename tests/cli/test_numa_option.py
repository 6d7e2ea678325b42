"""``--numa auto|none|N`` on every bench and on report: refused when bad, recorded in every result."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.hw import placement
from gdrdiag.hw.sysfs import SysfsTree

runner = CliRunner()
SOFT_MR = ["mr-bench", "--provider", "soft", "--memory", "pageable", "-n", "200", "--repeats", "1"]
COMMANDS = [
    ["copy-bench", "--quick"],
    ["gather-bench", "--quick"],
    SOFT_MR,
    ["report", "--quick", "--no-rdma", "-o", "r.json"],
]
HERE_NODES = placement.online_nodes(SysfsTree("/"))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("value,needle", [("foo", "expected auto, none or a NUMA node"), ("77", "no such")])
def test_bad_numa_is_one_line_and_exit_2(command, value, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [*command, "--numa", value])
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()


def _settings(output: str) -> list[dict]:
    return [r["settings"] for r in json.loads(output)["results"]]


def test_mr_bench_records_auto_as_unknown_with_the_reason_here():
    """A real run on this machine: the soft provider has no PCI function, so auto changes nothing."""
    res = runner.invoke(app, ["--json", *SOFT_MR])
    assert res.exit_code == 0, res.output
    settings = _settings(res.stdout)
    assert settings
    for s in settings:
        assert s["numa"] == "auto" and s["numa_node"] is None and s["numa_cpus"] is None
        assert s["numa_reason"].startswith("unknown because RDMA device ")


@pytest.mark.skipif(0 not in HERE_NODES, reason="no NUMA node 0 here")
def test_mr_bench_numa_0_is_applied_and_shown_in_one_line():
    res = runner.invoke(app, [*SOFT_MR, "--numa", "0"])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line.startswith("numa:")]
    assert len(lines) == 1
    if "not applied" not in lines[0]:  # a container may refuse set_mempolicy: then it says why
        cpus = placement.plan(placement.parse_numa("0"), None, "nothing").cpus
        assert lines[0] == f"numa: 0 -> node 0, CPUs {cpus} (--numa 0)"


def test_copy_bench_without_a_gpu_records_the_request(tmp_path):
    out = tmp_path / "c.json"
    res = runner.invoke(app, ["copy-bench", "--quick", "--numa", "none", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    # after the verdict block, the detail starts with the placement line
    assert [x for x in res.stdout.splitlines() if x.startswith("numa: ")][0].startswith(
        "numa: none -> not applied"
    )
    settings = _settings(out.read_text())
    assert settings and all(s["numa"] == "none" and s["numa_node"] is None for s in settings)


def test_report_records_the_placement_in_every_result(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["report", "--quick", "--no-rdma", "-o", str(out)])
    assert res.exit_code in (0, 1), res.output
    settings = _settings(out.read_text())
    assert settings and all(s["numa"] == "auto" and s["numa_reason"] for s in settings)
    shown = [line for line in res.output.splitlines() if line.startswith("numa: auto -> ")]
    assert shown and all(re.search(r" \[(copy|gather|rdma)(, (copy|gather|rdma))*\]$", x) for x in shown)
    assert {b for x in shown for b in re.findall(r"copy|gather|rdma", x.rsplit("[", 1)[1])} == {
        "copy",
        "gather",
        "rdma",
    }


def test_loop_cost_records_the_placement_too():
    res = runner.invoke(app, ["--json", "mr-bench", "--loop-cost", "-D", "0.05", "--repeats", "1"])
    assert res.exit_code == 0, res.output
    settings = _settings(res.stdout)
    assert settings
    for s in settings:
        assert s["numa"] == "auto" and s["numa_reason"] == "unknown because --loop-cost measures no device"
