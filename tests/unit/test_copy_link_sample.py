"""copy-bench reads the GPU link under load (as gather-bench does), records it, and the rules use it."""

from __future__ import annotations

import dataclasses

import pytest

from gdrdiag.bench.copy import with_link
from gdrdiag.diagnose import diagnose
from gdrdiag.hw import gpu_link
from gdrdiag.model.case import CaseId
from gdrdiag.model.params import GatherParams, RunSettings
from gdrdiag.model.results import BenchResult
from gdrdiag.render.copy_table import render_copy_results

from . import diagnosis_scenarios as sc

GEN4_OF_GEN5 = gpu_link.GpuLink(
    bus_id="0000:1b:00.0", generation=4, width=16, max_generation=5, max_width=16, raw_gbytes_per_s=31.51
)


def test_the_link_is_read_while_the_copies_run():
    events = []

    def reader(bus_id):
        events.append(f"read {bus_id}")
        return GEN4_OF_GEN5

    sample = gpu_link.sample_under_load(
        "0000:1b:00.0", lambda: events.append("start"), lambda: events.append("end"), reader
    )
    assert events == ["start", "read 0000:1b:00.0", "end"]
    assert sample.link is GEN4_OF_GEN5
    assert sample.text == "Gen4 x16 (31.51 GB/s raw, sysfs, sampled during a copy)"


def test_a_bad_bus_id_is_unknown_and_the_copies_are_still_waited_for():
    ended = []

    def reader(bus_id):
        raise ValueError(f"not a PCI bus id: {bus_id!r}")

    sample = gpu_link.sample_under_load("gpu0", lambda: None, lambda: ended.append(True), reader)
    assert sample.link is None and sample.text == "unknown: not a PCI bus id: 'gpu0'"
    assert ended == [True]


def test_an_unreadable_link_says_why():
    link = gpu_link.GpuLink(bus_id="0000:1b:00.0", unknown={"generation": "current_link_speed: missing"})
    sample = gpu_link.sample_under_load("0000:1b:00.0", lambda: None, lambda: None, lambda _: link)
    assert sample.text == "unknown: generation: current_link_speed: missing"


def _sampled(result: BenchResult) -> BenchResult:
    return with_link(result, gpu_link.LinkSample(GEN4_OF_GEN5, gpu_link.describe(GEN4_OF_GEN5)))


def test_copy_results_record_the_sample_and_it_is_not_identity():
    plain = sc.copy_h2d(20.0)
    sampled = _sampled(plain)
    p = sampled.params
    assert (p.link_generation, p.link_width, p.link_max_generation, p.link_max_width) == (4, 16, 5, 16)
    assert p.link.startswith("Gen4 x16")
    assert CaseId.of(sampled) == CaseId.of(plain)
    other = BenchResult.waived("gather_ladder", "x", params=GatherParams())
    assert _sampled(other) == other
    assert "GPU link under load: Gen4 x16 (31.51 GB/s raw" in render_copy_results([sampled])


def _causes(result: BenchResult) -> dict:
    findings = diagnose(sc.report(sc.machine("baremetal_hgx"), [result])).findings
    return {f.code: f for f in findings if f.code.startswith("CAUSE-")}


def test_link_degraded_uses_the_link_copy_bench_sampled():
    # The saved machine read its GPU link idle (link_sampled_idle), so without copy-bench's own
    # sample the rule cannot say anything about the link under load.
    assert sc.machine("baremetal_hgx").gpus[0].link_sampled_idle
    assert "CAUSE-LINK-DEGRADED" not in _causes(sc.copy_h2d(20.0))
    cause = _causes(_sampled(sc.copy_h2d(20.0)))["CAUSE-LINK-DEGRADED"]
    assert "link sampled by copy-bench during a copy: Gen4 x16 of Gen5 x16" in cause.evidence
    assert cause.explains == pytest.approx((1 - 31.51 / 63.02) / (1 - 20.0 / 58.0), abs=0.02)


def test_a_full_speed_sample_rules_the_link_out():
    full = dataclasses.replace(GEN4_OF_GEN5, generation=5, raw_gbytes_per_s=63.02)
    result = with_link(sc.copy_h2d(20.0), gpu_link.LinkSample(full, gpu_link.describe(full)))
    assert "CAUSE-LINK-DEGRADED" not in _causes(result)


def test_numa_cause_weighs_the_recorded_placement():
    bound = dataclasses.replace(
        sc.copy_h2d(20.0),
        settings=RunSettings(numa="auto", numa_node=0, numa_cpus="0-55", numa_reason="numa_node of GPU 0"),
    )
    cause = _causes(bound)["CAUSE-NUMA-PLACEMENT"]
    assert cause.against == ("the run was bound to node 0, CPUs 0-55 (--numa auto: numa_node of GPU 0)",)
    unbound = dataclasses.replace(bound, settings=RunSettings(numa="auto", numa_reason="unknown because x"))
    open_cause = _causes(unbound)["CAUSE-NUMA-PLACEMENT"]
    assert open_cause.explains > cause.explains
    assert open_cause.against == ("the run was not bound to a node (--numa auto: unknown because x)",)
