"""CaseId: physics and provider are identity; run settings and status are not."""

import dataclasses
import glob
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.compare import match_cases
from gdrdiag.model.case import CaseId, unclassified_params
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import Bench, Provider

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def _ok(key: str, value: float, provider: str = "pyverbs", **params) -> BenchResult:
    return BenchResult(key=key, status=Status.OK, params=params, unit="Gb/s", samples=(value,),
                       stats=SampleStats.of([value]), provider=provider, verified=True)


def test_run_settings_do_not_split_a_case():
    a = [_ok("rdma_write_device_mr", 90.0, memory="device", size=1 << 20, qps=4, ro=False,
             ro_ab=True, duration_s=2.0, port=1)]
    b = [_ok("rdma_write_device_mr", 45.0, memory="device", size=1 << 20, qps=4, ro=False,
             ro_ab=False, duration_s=5.0, port=2)]
    (row,) = match_cases(a, b)
    assert row.ratio == pytest.approx(0.5)
    assert any(s.startswith("ro_ab:") for s in row.settings) and any(s.startswith("port:") for s in row.settings)


def test_physics_splits_a_case():
    a = [_ok("rdma_write_device_mr", 90.0, memory="device", size=1 << 20, qps=4)]
    b = [_ok("rdma_write_device_mr", 45.0, memory="device", size=1 << 20, qps=8)]
    rows = match_cases(a, b)
    assert len(rows) == 2 and all(r.ratio is None for r in rows)


def test_soft_is_never_paired_with_hardware():
    a = [_ok("rdma_write_pageable_mr", 9.0, provider="soft", memory="pageable", size=65536)]
    b = [_ok("rdma_write_pageable_mr", 90.0, provider="pyverbs", memory="pageable", size=65536)]
    (row,) = match_cases(a, b)
    assert row.ratio is None and not row.large
    assert row.not_comparable == "not comparable: provider soft vs pyverbs"
    assert (row.a_value, row.b_value) == (9.0, 90.0)


def test_soft_against_soft_is_labelled_soft_in_compare_output(tmp_path):
    r = Report(results=(_ok("rdma_write_pageable_mr", 9.0, provider="soft", memory="pageable", size=65536),))
    r2 = Report(results=(_ok("rdma_write_pageable_mr", 3.0, provider="soft", memory="pageable", size=65536),))
    (tmp_path / "a.json").write_text(r.to_json())
    (tmp_path / "b.json").write_text(r2.to_json())
    out = CliRunner().invoke(app, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]).output
    assert "[soft]" in out and "never a NIC or GPU" in out


def test_ok_against_waived_is_one_row_with_the_reason():
    a = [_ok("copy_h2d_pinned", 55.0, provider="cuda", kind="pinned", direction="h2d", size=1 << 30)]
    b = [BenchResult.waived("copy_h2d_pinned", "no CUDA driver here", provider="cuda")]
    (row,) = match_cases(a, b)
    assert (row.a_status, row.b_status) == ("OK", "WAIVED")
    assert row.b_reason == "no CUDA driver here"


def test_waived_with_the_same_params_is_one_row_too():
    a = [_ok("copy_h2d_pinned", 55.0, provider="cuda", kind="pinned", direction="h2d", size=1 << 30)]
    b = [BenchResult.waived("copy_h2d_pinned", "no GPU", provider="cuda",
                            params={"kind": "pinned", "direction": "h2d", "size": 1 << 30})]
    (row,) = match_cases(a, b)
    assert (row.a_status, row.b_status, row.b_reason) == ("OK", "WAIVED", "no GPU")


def test_reports_that_differ_only_in_run_settings_pair_every_case():
    real = Report.from_json((REPORTS / "gpu_machine_h200.json").read_text())
    rerun = [dataclasses.replace(r, params={**r.params, "seed": 99, "iterations": 7, "device_name": "x"},
                                 method=r.method + " (rerun)") for r in real.results]
    rows = match_cases(real.results, rerun)
    assert len(rows) == len({CaseId.of(r) for r in real.results})
    assert all(r.a_status and r.b_status for r in rows)


def test_compare_is_linear_enough_for_big_reports():
    a = [_ok("rdma_write_pageable_mr", 1.0, memory="pageable", size=s) for s in range(20_000)]
    rows = match_cases(a, list(a))
    assert len(rows) == 20_000 and all(r.ratio == 1.0 for r in rows)


def test_bench_and_provider_vocabulary():
    assert Bench.of_key("mr_reg_device_mr") is Bench.MR and Bench.of_key("copy_blocks") is Bench.COPY
    assert not Provider.SOFT.is_hardware and not Provider.FIXTURE.is_hardware and Provider.CUDA.is_hardware


SOFT_RUNS = [
    ["mr-bench", "--provider", "soft", "-m", "pageable", "-n", "100", "--repeats", "2"],
    ["mr-bench", "--provider", "soft", "-m", "pageable", "-n", "100", "--repeats", "2", "--ro-ab"],
    ["mr-bench", "--provider", "soft", "-m", "pageable", "-n", "100", "--latency"],
    ["mr-bench", "--provider", "soft", "-m", "pageable", "-n", "100", "--blocks", "16", "-s", "4K"],
    ["mr-bench", "--provider", "soft", "-m", "pageable", "--reg-cost", "--reg-sizes", "4K"],
    ["mr-bench", "--provider", "soft", "--loop-cost", "-n", "500"],
    ["copy-bench", "--quick"],
]


@pytest.mark.parametrize("argv", SOFT_RUNS, ids=lambda a: " ".join(a[:4]))
def test_every_parameter_a_bench_writes_is_classified(argv, tmp_path):
    out = tmp_path / "r.json"
    CliRunner().invoke(app, [*argv, "--json-out", str(out)])
    results = Report.from_json(out.read_text()).results
    assert results
    assert {(r.key, p) for r in results for p in unclassified_params(r)} == set()


@pytest.mark.parametrize("path", sorted(glob.glob(str(REPORTS / "*.json"))), ids=lambda p: Path(p).name)
def test_every_parameter_in_saved_reports_is_classified(path):
    results = Report.from_json(Path(path).read_text()).results
    assert {(r.key, p) for r in results for p in unclassified_params(r)} == set()
