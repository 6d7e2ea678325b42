"""No GPU is handled one way: every bench WAIVEs each case with the reason, exits 0, writes its JSON.

CUDA is made unavailable by replacing ``hw.cuda.init`` with one that raises what a machine
without the NVIDIA driver raises, so these tests run the same on this GPU-less machine and on
a GPU machine. The GDR-NO-RDMA advice is taken from the finding itself and run as given.
"""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.errors import NotSupported
from tests.conftest import FIXTURES

runner = CliRunner()
REASON = "no NVIDIA driver: made unavailable by the test"


@pytest.fixture
def no_cuda(monkeypatch):
    """CUDA as on a machine without the NVIDIA driver."""
    from gdrdiag.hw import cuda

    def init() -> None:
        raise NotSupported(REASON)

    monkeypatch.setattr(cuda, "init", init)


def _all_waived(report: dict, prefix: str) -> list[dict]:
    results = [r for r in report["results"] if r["key"].startswith(prefix)]
    assert results, f"no {prefix} results"
    assert all(r["status"] == "WAIVED" and REASON in r["reason"] for r in results), results
    return results


@pytest.mark.parametrize(
    "command,prefix",
    [
        (["gather-bench", "--quick"], "gather_"),
        (["copy-bench", "--quick"], "copy_"),
        (["mr-bench", "--provider", "soft", "--memory", "device,pinned", "-n", "50"], "rdma_write_"),
    ],
    ids=["gather-bench", "copy-bench", "mr-bench"],
)
def test_bench_without_gpu_waives_every_case_exits_0_and_writes_json(no_cuda, tmp_path, command, prefix):
    out = tmp_path / "r.json"
    text = runner.invoke(app, [*command, "--json-out", str(out)])
    assert text.exit_code == 0, text.output
    assert "WAIVED" in text.stdout and "Traceback" not in text.output
    written = _all_waived(json.loads(out.read_text()), prefix)

    printed = runner.invoke(app, [*command, "--json"])
    assert printed.exit_code == 0, printed.output
    assert [r["key"] for r in _all_waived(json.loads(printed.stdout), prefix)] == [r["key"] for r in written]


def test_gather_bench_without_gpu_names_each_case_it_would_run(no_cuda):
    from gdrdiag.bench.gather_kernels import KERNELS

    res = runner.invoke(app, ["gather-bench", "--kernels", "warp,lines", "--json"])
    assert res.exit_code == 0, res.output
    keys = [r["key"] for r in json.loads(res.stdout)["results"]]
    assert keys == ["gather_ce_reference", KERNELS["warp"].key, KERNELS["lines"].key]


def test_report_without_gpu_waives_copy_and_gather_with_the_reason(no_cuda, tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["report", "--quick", "--no-rdma", "-o", str(out)])
    report = json.loads(out.read_text())
    fail = any(f["severity"] == "FAIL" for f in report["findings"])
    assert res.exit_code == (1 if fail else 0), res.output
    _all_waived(report, "copy_")
    _all_waived(report, "gather_")


def _no_rdma_advice(bundle: str) -> str:
    """The command GDR-NO-RDMA advises for this fixture machine, as the finding words it."""
    from gdrdiag.diagnose import diagnose_machine
    from gdrdiag.hw.bundle import open_bundle
    from gdrdiag.inspect.collect import inspect_source

    with open_bundle(str(FIXTURES / "machines" / bundle)) as source:
        findings = diagnose_machine(inspect_source(source))
    advice = next(f.advice for f in findings if f.code == "GDR-NO-RDMA")
    commands = [part for part in advice.split("`")[1::2] if part.startswith("gdrdiag ")]
    assert commands, advice
    return commands[0]


@pytest.mark.parametrize("bundle", ["a_dev_firecracker", "b_gpu_firecracker_h200"])
def test_the_no_rdma_advice_measures_something_without_a_gpu(no_cuda, bundle):
    command = _no_rdma_advice(bundle)
    res = runner.invoke(app, [*shlex.split(command)[1:], "--json"])
    assert res.exit_code == 0, res.output
    results = json.loads(res.stdout)["results"]
    measured = [r for r in results if r["status"] == "OK"]
    assert measured and all(r["verified"] is True for r in measured)
    assert all(r["provider"] == "soft" for r in measured)
    waived = [r for r in results if r["status"] == "WAIVED"]
    assert waived and all(REASON in r["reason"] for r in waived)
