"""A whole node measured GPU by GPU: the GPU slower than its siblings is named, with its cause.

The machine is the 8-GPU + 8-NIC fixture (tests/fixtures/machines/g_8gpu_8nic_two_odd: GPU 5's link
trained at x8, GPU 6 on NUMA node 1 while its siblings are on node 0). The rows are constructed
(provider ``fixture``) as copy-bench --gpus all --numa none would write them: they exercise the
rules, they are not measurements.
"""

from __future__ import annotations

import dataclasses

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.diagnose.node_rules import MIN_GAP, outliers, sibling_rows, split_by_gpu
from gdrdiag.model.findings import Severity
from gdrdiag.model.machine import GpuProcess
from gdrdiag.model.params import CopyParams, GatherParams, RunSettings
from gdrdiag.model.report import Report
from gdrdiag.model.vocabulary import Direction, MemoryKind
from gdrdiag.render.gpu_table import OUTLIER_MARK, render_gpus_side_by_side
from tests.unit.diagnosis_scenarios import ok
from tests.unit.test_machine_rules_fixtures import machine

MiB = 1 << 20
UNBOUND = RunSettings(numa="none", numa_reason="--numa none")
# Gen5 x16 pinned copies as the H100s of docs/benchmarks.md ran them (~53-55 GB/s); GPU 5 on x8 moves
# half; GPU 6's host memory on the far socket costs it a fifth (the inter-socket link's share).
HEALTHY = {0: 53.6, 1: 54.1, 2: 53.2, 3: 54.0, 4: 53.8, 5: 27.0, 6: 43.0, 7: 53.5}


def node():
    return machine("g_8gpu_8nic_two_odd")


def copy(gpu: int, gbytes: float, direction: Direction = Direction.H2D, size: int = 256 * MiB):
    p = CopyParams(memory=MemoryKind.PINNED, direction=direction, mode="async", size_bytes=size, gpu=gpu)
    return ok(f"copy_{direction.value}_pinned", gbytes, "GB/s", p, UNBOUND)


def node_report(values: dict[int, float], m=None) -> Report:
    rows = [copy(g, v, d) for d in (Direction.H2D, Direction.D2H) for g, v in values.items()]
    return Report(
        tool_version="test",
        created_utc="2026-11-28T00:00:00Z",
        command="t",
        results=tuple(rows),
        machine=m if m is not None else node(),
    )


def outlier_findings(report: Report):
    return [f for f in diagnose(report).findings if f.code == "PERF-GPU-OUTLIER"]


def test_the_fixture_node_has_eight_gpus_and_eight_nics_with_two_odd_gpus():
    m = node()
    assert len(m.gpus) == 8 and len(m.nics) == 8
    by_ordinal = {g.cuda_ordinal: g for g in m.gpus}
    assert by_ordinal[5].link.width == 8 and by_ordinal[5].link.max_width == 16
    assert by_ordinal[6].numa_node == 1
    assert {by_ordinal[o].numa_node for o in (0, 1, 2, 3, 4, 5, 7)} == {0}


def test_the_gpu_on_a_link_trained_down_and_the_gpu_on_the_far_node_are_named_with_their_causes():
    m = node()
    found = {f.subject: f for f in outlier_findings(node_report(HEALTHY))}
    bdf = {g.cuda_ordinal: g.bdf for g in m.gpus}
    assert set(found) == {bdf[5], bdf[6]}
    narrow, far = found[bdf[5]], found[bdf[6]]
    assert narrow.severity is Severity.WARN and far.severity is Severity.WARN
    assert narrow.title.startswith(f"GPU 5 ({bdf[5]})") and "x8" in narrow.title and "x16" in narrow.title
    assert far.title.startswith(f"GPU 6 ({bdf[6]})") and "NUMA node 1" in far.title
    assert "--numa auto" in far.advice
    # the worst case first in the evidence, with the share and the siblings' median
    assert "0.50 of the other GPUs' median" in narrow.evidence[0]


def test_the_path_model_also_judges_the_x8_gpu_against_its_capable_link():
    """Both yardsticks agree on GPU 5: lost against its x16-capable path, and below its siblings."""
    report = node_report(HEALTHY)
    j = next(j for j in diagnose(report).judgements if report.results[j.index].params.gpu == 5)
    assert j.ratio is not None and j.ratio < 0.6 and report.machine.gpus[5].bdf in (j.bound or "")


def test_a_healthy_node_with_run_to_run_noise_names_no_gpu():
    jitter = {g: 53.5 * (1 + 0.03 * ((g * 37) % 5 - 2) / 2) for g in range(8)}  # +-3 %
    assert outlier_findings(node_report(jitter)) == []


def test_noisy_samples_widen_the_tolerance():
    """A row whose own samples scatter by 10 % cannot single out a GPU 15 % below the others."""
    report = node_report({g: (45.0 if g == 3 else 53.0) for g in range(8)})
    assert [f.subject for f in outlier_findings(report)] == [node().gpus[3].bdf]
    noisy = []
    for r in report.results:
        s = tuple(r.value * f for f in (0.85, 0.95, 1.0, 1.05, 1.15))
        noisy.append(dataclasses.replace(r, samples=s, stats=type(r.stats).of(s)))
    rows = sibling_rows(noisy)
    assert all(o.tolerance > 0.15 for o in outliers(noisy, rows)) or outliers(noisy, rows) == []
    assert outliers(noisy, rows) == []


def test_two_gpus_have_no_odd_one_out_and_half_slow_is_two_populations():
    assert outlier_findings(node_report({0: 53.0, 1: 20.0})) == []
    half = {g: (27.0 if g % 2 else 53.0) for g in range(8)}
    assert outlier_findings(node_report(half)) == []


def test_small_copies_are_not_compared():
    """Below 1 MiB a copy is set by per-call latency, which varies more between runs than GPUs."""
    rows = [copy(g, 5.0 if g == 2 else 9.0, size=64 * 1024) for g in range(8)]
    assert sibling_rows(rows) == []


def test_a_busy_gpu_is_named_first_and_no_other_gpu_is():
    m = node()
    busy_bdf = next(g.bdf for g in m.gpus if g.cuda_ordinal == 2)
    gpus = tuple(
        dataclasses.replace(g, other_processes=(GpuProcess(pid=4242, name="python3"),), utilization_pct=100)
        if g.bdf == busy_bdf
        else g
        for g in m.gpus
    )
    # the x8 GPU and the far GPU healthy here: only the busy one is slow
    values = {g: 53.5 for g in range(8)}
    values[2] = 30.0
    m = dataclasses.replace(m, gpus=gpus)
    findings = [f for f in diagnose(node_report(values, m)).findings if f.severity is not Severity.INFO]
    assert findings[0].code == "CAUSE-GPU-BUSY" and "GPU 2" in findings[0].title
    others = [g.bdf for g in m.gpus if g.bdf != busy_bdf]
    for f in findings:
        if f.code == "PCIE-LINK-WIDTH":  # the fixture's x8 link is a machine fact of its own
            continue
        text = " ".join((f.title, f.subject, *f.evidence))
        assert not any(b in text for b in others), f
    outlier = next(f for f in findings if f.code == "PERF-GPU-OUTLIER")
    assert outlier.subject == busy_bdf and "in use" in outlier.title
    info = [f for f in diagnose(node_report(values, m)).findings if f.code == "GPU-IN-USE"]
    assert [f.subject for f in info] == [busy_bdf]


def test_gather_rows_are_compared_too():
    def gather(gpu, v):
        p = GatherParams(kernel="warp", record_bytes=656, slots=1 << 20, gpu=gpu)
        return ok("gather_warp", v, "GB/s", p, UNBOUND)

    rows = [gather(g, 30.0 if g == 5 else 45.0) for g in range(8)]
    found = outliers(rows, sibling_rows(rows))
    assert [(o.gpu, round(o.share, 2)) for o in found] == [(5, 0.67)]


def test_split_by_gpu_renumbers_each_gpus_judgements():
    report = node_report(HEALTHY)
    diagnosis = diagnose(report)
    shares = split_by_gpu(report.results, diagnosis.judgements, report.machine)
    assert [s.gpu for s in shares] == list(range(8))
    for s in shares:
        assert s.address == next(g.bdf for g in report.machine.gpus if g.cuda_ordinal == s.gpu)
        assert all(r.params.gpu == s.gpu for r in s.results)
        for j in s.judgements:
            assert s.results[j.index].key == j.key


def test_the_side_by_side_table_marks_the_outliers_only():
    report = node_report(HEALTHY)
    rows = sibling_rows(report.results)
    text = render_gpus_side_by_side(report.results, rows, outliers(report.results, rows))
    assert "GPU 0" in text and "GPU 7" in text
    lines = [ln for ln in text.splitlines() if ln.startswith("copy_h2d_pinned")]
    assert len(lines) == 1 and lines[0].count(OUTLIER_MARK.strip()) == 2
    assert "27.0 <" in lines[0] and "43.0 <" in lines[0] and "53.6 <" not in lines[0]
    assert render_gpus_side_by_side(report.results, []) == ""


@pytest.mark.parametrize("gap", [MIN_GAP])
def test_a_gpu_just_inside_the_minimum_gap_is_not_named(gap):
    report = node_report({g: (53.0 * (1 - gap + 0.01) if g == 1 else 53.0) for g in range(8)})
    assert outlier_findings(report) == []


def test_a_nic_on_the_bus_that_verbs_does_not_list_is_named():
    from gdrdiag.diagnose.inventory_rules import nics_not_rdma

    m = node()
    assert list(nics_not_rdma(m)) == []  # all eight have their RDMA device
    lost = m.nics[3]
    one_missing = dataclasses.replace(m, nics=tuple(n for n in m.nics if n is not lost))
    (f,) = list(nics_not_rdma(one_missing))
    assert f.subject == lost.bdf and f.severity is Severity.WARN and "7 other NIC(s)" in f.title
    none_listed = dataclasses.replace(m, nics=())
    found = list(nics_not_rdma(none_listed))
    assert len(found) == 8 and {f.severity for f in found} == {Severity.INFO}


def _bound_to(node_number: int) -> RunSettings:
    return RunSettings(numa=str(node_number), numa_node=node_number, numa_reason="--numa")


def _numa_causes(rows) -> list:
    report = Report(
        tool_version="test",
        created_utc="2026-11-28T00:00:00Z",
        command="t",
        results=tuple(rows),
        machine=node(),
    )
    return [f for f in diagnose(report).findings if f.code == "CAUSE-NUMA-PLACEMENT"]


def test_numa_placement_reads_the_node_of_the_gpu_the_row_ran_on():
    """GPU 6 sits on node 1: its buffers on node 1 are local, on node 0 far (GPU 0's node is not its)."""
    p6 = CopyParams(
        memory=MemoryKind.PINNED, direction=Direction.H2D, mode="async", size_bytes=256 * MiB, gpu=6
    )
    p0 = dataclasses.replace(p6, gpu=0)
    slow_local = ok("copy_h2d_pinned", 30.0, "GB/s", p6, _bound_to(1))
    (weak,) = _numa_causes([slow_local])  # slow, but not for its placement: a weak candidate at most
    assert weak.severity is Severity.INFO and weak.against == (
        "the run was bound to node 1 (--numa 1: --numa)",
    )
    slow_far = ok("copy_h2d_pinned", 30.0, "GB/s", p6, _bound_to(0))
    healthy_own = ok("copy_h2d_pinned", 54.0, "GB/s", p0, _bound_to(0))
    (cause,) = _numa_causes([slow_far, healthy_own])
    assert "host buffers on node 0; the device is on node 1" in cause.evidence
    assert "gpu6" in " ".join(cause.evidence)
    assert any(e.startswith("on the device's own node: ") and "gpu0" in e for e in cause.evidence)


def test_a_small_max_read_request_is_read_on_the_gpu_the_slow_copy_ran_on():
    """GPU 3 set to MaxReadReq 128: its slow copy names GPU 3's register; GPU 0's does not name it."""
    m = node()
    gpu3 = m.gpu(3)
    assert gpu3 is not None and gpu3.cuda_ordinal == 3
    pci = tuple(
        dataclasses.replace(f, pcie=dataclasses.replace(f.pcie, max_read_request=128))
        if f.bdf == gpu3.bdf and f.pcie is not None
        else f
        for f in m.pci
    )
    m = dataclasses.replace(m, pci=pci)

    def mrrs_causes(gpu: int) -> list:
        report = node_report({gpu: 30.0}, m)
        return [f for f in diagnose(report).findings if f.code == "CAUSE-MPS-MRRS"]

    (on_gpu3,) = mrrs_causes(3)
    assert f"pci[{gpu3.bdf}].pcie.max_read_request = 128" in " ".join(on_gpu3.evidence)
    assert mrrs_causes(0) == []
