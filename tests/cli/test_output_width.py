"""Every command's default text output fits COLUMNS (100 when unset); ``--wide`` keeps everything.

The benches run with CUDA made unavailable (as on this GPU-less machine), so the commands take
the same path on every machine; the tables a GPU machine prints are checked from the saved
GPU-machine Report in tests/fixtures (render level, without the CLI's last-resort wrapping).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.errors import NotSupported
from gdrdiag.model.report import Report
from tests.conftest import FIXTURES

runner = CliRunner()
MACHINES = sorted(p.name for p in (FIXTURES / "machines").iterdir() if p.is_dir())
REPORTS = FIXTURES / "reports"
IMPORTED = FIXTURES / "imported"
H200 = REPORTS / "gpu_machine_h200.json"
BARE = REPORTS / "baremetal_hgx.json"
VM = REPORTS / "vm_guest_kvm.json"


@pytest.fixture
def no_cuda(monkeypatch):
    """CUDA as on a machine without the NVIDIA driver (benches WAIVE, quickly, everywhere)."""
    from gdrdiag.hw import cuda

    def init() -> None:
        raise NotSupported("no NVIDIA driver: made unavailable by the test")

    monkeypatch.setattr(cuda, "init", init)


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    """Node records of the three saved Reports, as `gdrdiag fleet` reads them."""
    out = tmp_path_factory.mktemp("fleet")
    for i, report in enumerate((H200, BARE, VM)):
        res = runner.invoke(
            app,
            [
                "report",
                "--from-report",
                str(report),
                "--host",
                f"node{i}",
                "--record",
                str(out / f"n{i}.json"),
            ],
        )
        assert res.exit_code in (0, 1), res.output
    return out


SOFT = ["mr-bench", "--provider", "soft", "--memory", "pageable", "--repeats", "1"]
COMMANDS = {
    "inspect": ["inspect"],
    "inspect --brief": ["inspect", "--brief"],
    **{f"inspect --bundle {m}": ["inspect", "--bundle", str(FIXTURES / "machines" / m)] for m in MACHINES},
    **{
        f"inspect --brief --bundle {m}": ["inspect", "--brief", "--bundle", str(FIXTURES / "machines" / m)]
        for m in MACHINES
    },
    "copy-bench": ["copy-bench"],
    "gather-bench": ["gather-bench"],
    "mr-bench": [*SOFT, "-s", "4K", "-n", "50"],
    "mr-bench --matrix": [*SOFT[:3], "--matrix", "-n", "50", "--repeats", "1", "-s", "64K"],
    "mr-bench --latency": [*SOFT, "--latency", "-n", "50"],
    "mr-bench --reg-cost": [*SOFT, "--reg-cost", "--reg-sizes", "4K,64K"],
    "mr-bench --blocks": [*SOFT, "--blocks", "8", "-s", "4K", "-n", "50"],
    "copy-bench --list": ["copy-bench", "--list"],
    "gather-bench --list": ["gather-bench", "--list"],
    "mr-bench --list": ["mr-bench", "--list"],
    "diagnose h200": ["diagnose", str(H200)],
    "diagnose baremetal": ["diagnose", str(BARE)],
    "diagnose vm": ["diagnose", str(VM)],
    "compare": ["compare", str(BARE), str(VM)],
    "compare --all": ["compare", "--all", str(BARE), str(H200)],
    "import": [
        "import",
        str(IMPORTED / "ib_write_bw_cuda.txt"),
        str(IMPORTED / "nvbandwidth.json"),
        "--bundle",
        str(FIXTURES / "machines" / "c_baremetal_hgx_h100_cx7"),
    ],
}


def _invoke(args: list[str], columns: str = "100"):
    res = runner.invoke(app, args, env={"COLUMNS": columns})
    assert res.exit_code in (0, 1), res.output
    assert "Traceback" not in res.output
    return res


def _too_long(text: str, width: int) -> list[str]:
    """Lines wider than ``width``, except a URL alone on its line (a URL is never split)."""
    return [
        line
        for line in text.splitlines()
        if len(line) > width and not (len(line.split()) == 1 and "://" in line)
    ]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_default_output_fits_100_columns(name, no_cuda):
    res = _invoke(COMMANDS[name])
    assert res.stdout.strip()
    assert _too_long(res.stdout, 100) == []


def test_report_and_fleet_fit_100_columns(no_cuda, tmp_path, fleet_dir):
    report = _invoke(["report", "--quick", "--no-rdma", "-o", str(tmp_path / "r.json")])
    fleet = _invoke(["fleet", str(fleet_dir), "--min-group", "1"])
    for res in (report, fleet):
        assert res.stdout.strip() and _too_long(res.stdout, 100) == []


@pytest.mark.parametrize("columns", ["72", "130"])
def test_columns_is_honoured(columns):
    args = ["inspect", "--bundle", str(FIXTURES / "machines" / "c_baremetal_hgx_h100_cx7")]
    res = _invoke(args, columns)
    assert _too_long(res.stdout, int(columns)) == []
    if int(columns) > 100:  # room is used, not thrown away
        assert any(len(line) > 100 for line in res.stdout.splitlines())


def test_wide_keeps_every_line_whole():
    """With --wide, each finding's advice is one line, as long as it is (no wrapping)."""
    bundle = str(FIXTURES / "machines" / "d_kvm_h100_cx7_vf")
    report = json.loads(_invoke(["inspect", "--json", "--bundle", bundle]).stdout)
    advice = [f["advice"] for f in report["findings"] if len(f.get("advice") or "") > 100]
    assert advice
    wide = _invoke(["inspect", "--wide", "--bundle", bundle]).stdout.splitlines()
    narrow = _invoke(["inspect", "--bundle", bundle]).stdout.splitlines()
    for text in advice:
        assert any(text in line for line in wide)
        assert not any(text in line for line in narrow)
    assert max(len(line) for line in wide) > 100


def test_wide_keeps_the_columns_narrow_output_leaves_out():
    args = [*SOFT, "-s", "4K", "-n", "50"]
    narrow = _invoke(args).stdout
    wide = _invoke([*args, "--wide"]).stdout
    assert "left out to fit 100 columns: provider" in narrow
    header = next(line for line in wide.splitlines() if line.startswith("memory"))
    assert header.split()[-1] == "provider" and "left out" not in wide


# Render level: the tables of a real GPU machine fit without the CLI's last-resort line wrapping.


def _bench_results(path: Path, prefix: str):
    report = Report.from_json(path.read_text())
    return report, [r for r in report.results if r.key.startswith(prefix)]


def test_gpu_machine_tables_fit_and_wide_keeps_them_whole():
    from gdrdiag.render.copy_table import render_copy_results
    from gdrdiag.render.gather_table import render_gather_results

    report, copy = _bench_results(H200, "copy_")
    _, gather = _bench_results(H200, "gather_")
    for text in (render_copy_results(copy, 100), render_gather_results(gather, report.notes, 100)):
        assert _too_long(text, 100) == []
    wide = render_gather_results(gather, report.notes, None)
    assert "KiB/SM in flight" in wide and "left out" not in wide


def test_rdma_tables_fit():
    from gdrdiag.diagnose import rdma_rules
    from gdrdiag.render.mr_table import render_mr_results

    _, results = _bench_results(BARE, "rdma_")
    text = render_mr_results(results, pairs=rdma_rules.ro_pairs(results), width=100)
    assert "Gb/s" in text and _too_long(text, 100) == []


def test_wide_before_the_command_is_the_same_switch():
    bundle = str(FIXTURES / "machines" / "d_kvm_h100_cx7_vf")
    before = _invoke(["--wide", "inspect", "--bundle", bundle]).stdout
    after = _invoke(["inspect", "--wide", "--bundle", bundle]).stdout
    assert before == after and max(len(line) for line in before.splitlines()) > 100
