"""Verdict blocks: the numbers each bench leads with are the results' numbers (saved Reports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.bench.gather_config import GatherRun
from gdrdiag.cli import app
from gdrdiag.diagnose import diagnose, rdma_rules
from gdrdiag.diagnose.verdicts import copy_verdict, gather_verdict, mr_verdict
from gdrdiag.model.report import Report
from gdrdiag.model.results import Status
from gdrdiag.pathmodel import judge
from gdrdiag.render.verdict import render_copy_verdict, render_gather_verdict, render_mr_verdict

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
runner = CliRunner()


@pytest.fixture(scope="module")
def h200() -> Report:
    """A real Report from the H200 GPU machine (copy and gather results measured there)."""
    return Report.from_json((REPORTS / "gpu_machine_h200.json").read_text())


@pytest.fixture(scope="module")
def bare() -> Report:
    return Report.from_json((REPORTS / "baremetal_hgx.json").read_text())


def _largest_pinned(report: Report, key: str):
    ok = [r for r in report.results if r.key == key and r.status is Status.OK and r.params.mode == "async"]
    return max(ok, key=lambda r: r.params.size_bytes)


def _expected(judgements, results, row) -> float:
    """The path model's expectation of ``row`` (the one yardstick the verdict divides by)."""
    index = next(i for i, r in enumerate(results) if r is row)
    return next(j for j in judgements if j.index == index).expected_gbytes_per_s


def test_copy_verdict_is_the_largest_pinned_copy_against_the_link_model(h200):
    h2d, d2h = _largest_pinned(h200, "copy_h2d_pinned"), _largest_pinned(h200, "copy_d2h_pinned")
    judgements = diagnose(h200).judgements
    model = _expected(judgements, h200.results, h2d)
    d2h_model = _expected(judgements, h200.results, d2h)
    pageable = next(
        r
        for r in h200.results
        if r.key == "copy_h2d_pageable" and r.params.size_bytes == h2d.params.size_bytes
    )
    v = copy_verdict(list(h200.results), judgements)
    assert (v.h2d_gbps, v.d2h_gbps, v.model_gbps) == (h2d.value, d2h.value, model)
    assert v.h2d_of_model == pytest.approx(h2d.value / model)
    assert v.pageable_over_pinned == pytest.approx(pageable.value / h2d.value)
    text = render_copy_verdict(v)
    assert text.splitlines()[0] == "Verdict (copy-bench)"
    for shown in (
        f"H2D {h2d.value:.2f} GB/s",
        f"D2H {d2h.value:.2f} GB/s",
        f"H2D {100 * h2d.value / model:.0f}%",
        f"D2H {100 * d2h.value / d2h_model:.0f}%",
        f"{pageable.value / h2d.value:.2f} x pinned",
    ):
        assert shown in text


def test_copy_verdict_without_the_machine_says_the_model_is_unknown(h200):
    text = render_copy_verdict(copy_verdict(list(h200.results), ()))
    assert "PCIe model: unknown here" in text and "%" not in text


def test_gather_verdict_is_the_fastest_ladder_kernel_against_the_copy_engine(h200):
    ladder = [r for r in h200.results if r.key.startswith("gather_") and r.key != "gather_ce_reference"]
    best = max(ladder, key=lambda r: r.value)
    ce = next(r for r in h200.results if r.key == "gather_ce_reference")
    v = gather_verdict(list(h200.results))
    assert (v.best_kernel, v.best_gbps, v.best_ratio_to_ce) == (
        best.params.kernel,
        best.value,
        best.metrics.ratio_to_ce,
    )
    text = render_gather_verdict(v)
    assert f"{best.params.kernel}, {best.value:.2f} GB/s = {best.metrics.ratio_to_ce:.3f} x" in text
    assert f"({ce.value:.2f} GB/s, same run)" in text


def test_mr_verdict_is_the_best_write_per_memory_kind_and_the_ro_ratio(bare):
    results = list(bare.results)
    pairs = rdma_rules.ro_pairs(results)
    v = mr_verdict(results, pairs)
    text = render_mr_verdict(v)
    kinds = {str(r.params.memory) for r in results if r.key.startswith("rdma_write_")}
    assert {b.memory for b in v.best} == kinds
    for kind in kinds:
        best = max(
            r.value for r in results if r.key.startswith("rdma_write_") and str(r.params.memory) == kind
        )
        assert f"best write into {kind} " in text and f"{best:.1f} Gb/s" in text
    assert pairs and len(v.ro) == len(pairs)
    for p in pairs:
        assert f"RO on/off {p.off.params.memory}/{p.off.params.reg_path}: {p.verdict.ratio:.2f}" in text


def test_waived_cases_are_counted_with_the_reason(h200):
    waived = [r for r in h200.results if r.status is Status.WAIVED]
    v = mr_verdict(list(h200.results))
    assert v.waived.count == len(waived) and v.waived.reason == waived[0].reason
    assert f"WAIVED: {len(waived)} case(s) - {waived[0].reason[:40]}" in " ".join(
        render_mr_verdict(v).split()
    )


def test_copy_bench_leads_with_the_verdict_then_the_tables(h200, monkeypatch):
    from gdrdiag.bench import copy

    copy_results = [r for r in h200.results if r.key.startswith("copy_")]
    monkeypatch.setattr(copy, "run_copy_bench", lambda opts, progress=None: copy_results)
    res = runner.invoke(app, ["copy-bench"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    h2d = _largest_pinned(h200, "copy_h2d_pinned")
    assert lines[0] == "Verdict (copy-bench)"
    verdict_end = lines.index("")
    assert any(f"H2D {h2d.value:.2f} GB/s" in line for line in lines[:verdict_end])
    assert any(line.startswith("Host<->GPU copies") for line in lines[verdict_end:])


def test_copy_bench_judges_a_live_run_against_this_machines_link(h200, monkeypatch):
    """A live run's Report has no machine: the CLI reads this machine's facts for the link model."""
    from gdrdiag.bench import copy
    from gdrdiag.inspect import collect

    copy_results = [r for r in h200.results if r.key.startswith("copy_")]
    monkeypatch.setattr(copy, "run_copy_bench", lambda opts, progress=None: copy_results)
    monkeypatch.setattr(collect, "inspect_source", lambda source: h200.machine)
    res = runner.invoke(app, ["copy-bench"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    h2d = _largest_pinned(h200, "copy_h2d_pinned")
    model = _expected(judge(tuple(copy_results), h200.machine), copy_results, h2d)
    assert f"({model:.1f} GB/s" in res.stdout and f"H2D {100 * h2d.value / model:.0f}%" in res.stdout
    assert "VIRT-VM" not in res.stdout  # inspect's findings are inspect's; the bench adds its own


def test_gather_bench_leads_with_the_verdict(h200, monkeypatch):
    from gdrdiag.bench import gather

    results = [r for r in h200.results if r.key.startswith("gather_")]
    run = GatherRun(results=results, notes=[], gpu_name="NVIDIA H200", sm_count=132)
    monkeypatch.setattr(gather, "run", lambda config, progress=None: run)
    res = runner.invoke(app, ["gather-bench"], env={"COLUMNS": "100"})
    assert res.exit_code in (0, 1), res.output
    best = gather_verdict(results)
    lines = res.stdout.splitlines()
    assert lines[2] == "Verdict (gather-bench)"
    assert f"{best.best_kernel}, {best.best_gbps:.2f} GB/s" in lines[3]


def test_mr_bench_verdict_shows_the_measured_number(tmp_path):
    out = tmp_path / "r.json"
    args = ["mr-bench", "--provider", "soft", "--memory", "pageable", "-n", "200", "--repeats", "1"]
    res = runner.invoke(app, [*args, "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    measured = [r for r in json.loads(out.read_text())["results"] if r["status"] == "OK"]
    best = max(r["stats"]["median"] for r in measured)
    lines = res.stdout.splitlines()
    assert lines[0] == "Verdict (mr-bench)"
    assert f"best write into pageable (mr, 64 KiB): {best:.1f} Gb/s [soft: NOT a hardware number]" in lines[1]


def test_mr_bench_latency_mode_leads_with_its_percentiles(tmp_path):
    out = tmp_path / "r.json"
    args = ["mr-bench", "--provider", "soft", "--memory", "pageable", "--latency", "-n", "100"]
    res = runner.invoke(app, [*args, "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    lat = next(r for r in json.loads(out.read_text())["results"] if r["status"] == "OK")
    p50, p99 = lat["metrics"]["lat_p50_us"], lat["metrics"]["lat_p99_us"]
    assert f"write latency into pageable (mr, 64 KiB): p50 {p50:.2f} us, p99 {p99:.2f} us" in res.stdout


def test_pageable_over_pinned_compares_the_same_size_and_mode():
    """Sync and async pageable copies of one size both exist (H100 run: async 7.94, sync 8.73 GB/s)."""
    from gdrdiag.model.params import CopyParams
    from gdrdiag.model.results import BenchResult, SampleStats
    from gdrdiag.model.vocabulary import Direction, MemoryKind

    def copy(key: str, mode: str, gbps: float) -> BenchResult:
        memory = MemoryKind.PINNED if "pinned" in key else MemoryKind.PAGEABLE
        params = CopyParams(memory=memory, direction=Direction.H2D, mode=mode, size_bytes=1 << 30)
        stats = SampleStats(n=1, median=gbps, minimum=gbps, maximum=gbps, mean=gbps, stdev=0.0)
        return BenchResult(
            key=key, status=Status.OK, unit="GB/s", params=params, samples=(gbps,), stats=stats
        )

    results = [
        copy("copy_h2d_pinned", "async", 55.10),
        copy("copy_h2d_pageable", "async", 7.94),
        copy("copy_h2d_pageable", "sync", 8.73),
    ]
    verdict = copy_verdict(results)
    assert verdict.h2d_gbps == 55.10 and verdict.pageable_h2d_gbps == 7.94


def test_copy_verdict_answers_the_first_look_questions():
    """Both directions pinned and pageable, both ways at once, and the small-block cost, in the block."""
    from gdrdiag.bench.copy_blocks import block_summary
    from gdrdiag.model.params import CopyMetrics, CopyParams
    from gdrdiag.model.results import BenchResult, SampleStats
    from gdrdiag.model.vocabulary import Direction, MemoryKind

    def result(key: str, params: CopyParams, gbps: float, **metrics) -> BenchResult:
        stats = SampleStats(n=1, median=gbps, minimum=gbps, maximum=gbps, mean=gbps, stdev=0.0)
        return BenchResult(
            key=key,
            status=Status.OK,
            unit="GB/s",
            params=params,
            samples=(gbps,),
            stats=stats,
            metrics=CopyMetrics(**metrics),
        )

    def copy(direction: str, memory: MemoryKind, gbps: float) -> BenchResult:
        params = CopyParams(memory=memory, direction=Direction(direction), mode="async", size_bytes=256 << 20)
        return result(f"copy_{direction}_{memory.value}", params, gbps)

    blocks = [
        result(f"copy_blocks_{m}", CopyParams(block_bytes=b, blocks=10_000), 1.0, ratio_to_coalesced=r)
        for m, points in (
            ("per_call", ((8192, 0.1), (131072, 0.4), (524288, 0.8))),
            ("batched", ((8192, 0.25), (32768, 0.75), (524288, 1.0))),
            ("coalesced", ((8192, 1.0), (32768, 1.0), (131072, 1.0), (524288, 1.0))),
        )
        for b, r in points
    ]
    results = [
        copy("h2d", MemoryKind.PINNED, 55.0),
        copy("d2h", MemoryKind.PINNED, 53.0),
        copy("bidir", MemoryKind.PINNED, 97.2),
        copy("h2d", MemoryKind.PAGEABLE, 11.0),
        copy("d2h", MemoryKind.PAGEABLE, 5.3),
        *blocks,
        block_summary(blocks),
    ]
    v = copy_verdict(results)
    assert v.bidir_gbps == 97.2 and v.bidir_of_sum == pytest.approx(97.2 / 108.0)
    assert v.pageable_d2h_over_pinned == pytest.approx(0.1)
    assert v.half_block_per_call == pytest.approx(2 ** (17 + 2 * 0.25))  # 0.4 -> 0.8 over 128K..512K
    assert v.half_block_batched == pytest.approx(2 ** (13 + 2 * 0.5)) and v.largest_block == 524288
    text = render_copy_verdict(v)
    for shown in (
        "both ways at once (pinned, two streams): 97.20 GB/s = 0.90 x (H2D + D2H)",
        "pageable H2D 11.00 GB/s = 0.20 x pinned, D2H 5.30 GB/s = 0.10 x pinned",
        "half the coalesced rate at 181.0 KiB blocks with one copy call each, 16 KiB with one",
    ):
        assert shown in " ".join(text.split()), text
    # A curve that never gets there says so, with the largest block measured.
    never = [b for b in blocks if b.key != "copy_blocks_per_call"]
    text = render_copy_verdict(copy_verdict([*results[:5], *never, block_summary(never)]))
    assert "not by 512 KiB blocks with one copy call each" in " ".join(text.split())
