"""RO verdicts, matrix interpretation and findings, from plain data (no hardware)."""

from __future__ import annotations

import pytest

from gdrdiag.diagnose import rdma_rules as rr
from gdrdiag.model.findings import Severity
from gdrdiag.model.params import MrParams
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import AccessFlags, MemoryKind, RegPath

LANDING = {
    "device": "gpu",
    "managed": "host",
    "pinned": "host",
    "pinned-wc": "host",
    "registered": "host",
    "pageable": "host",
}


def bw(
    memory,
    reg="mr",
    ro=False,
    gbps=100.0,
    spread=0.0,
    provider="pyverbs",
    size=1 << 20,
    status=Status.OK,
    reason=None,
):
    samples = (gbps * (1 - spread / 2), gbps, gbps * (1 + spread / 2))
    base = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
    params = MrParams(
        memory=MemoryKind(memory),
        reg_path=RegPath(reg),
        size_bytes=size,
        qps=4,
        access=base | AccessFlags.RELAXED_ORDERING if ro else base,
        mode="bw",
        landing=LANDING[memory],
        lands_in=f"{memory} words",
    )
    key = f"rdma_write_{memory.replace('-', '_')}_{reg}"
    if status is not Status.OK:
        return BenchResult(key=key, status=status, reason=reason, params=params, provider=provider)
    return BenchResult(
        key=key,
        status=Status.OK,
        params=params,
        unit="Gb/s",
        samples=samples,
        stats=SampleStats.of(samples),
        provider=provider,
        verified=True,
    )


# -- classify_ro -------------------------------------------------------------------------------------------


def test_ro_sensitive_when_ro_raises_bandwidth():
    v = rr.classify_ro(84.0, 380.0, reference_gbps=400.0)
    assert v.code == "ro_sensitive" and v.ratio == pytest.approx(380 / 84)
    assert "4.52x" in v.words
    assert any("6.4" in c for c in v.caveats)


def test_ro_probably_ignored_when_gpu_path_is_slow_and_ro_changes_nothing():
    v = rr.classify_ro(84.0, 85.0, reference_gbps=400.0, landing="gpu")
    assert v.code == "ro_probably_ignored" and "21%" in v.words


def test_no_effect_when_path_is_fast_and_ro_changes_nothing():
    assert rr.classify_ro(390.0, 392.0, reference_gbps=400.0).code == "no_effect"
    assert (
        rr.classify_ro(84.0, 85.0, reference_gbps=None).code == "no_effect"
    )  # no reference: cannot say slow
    v = rr.classify_ro(84.0, 85.0, reference_gbps=400.0, landing="host")
    assert v.code == "no_effect" and rr.CAVEAT_HOST in v.caveats


def test_noise_and_slower_and_missing_are_inconclusive():
    assert rr.classify_ro(100.0, 104.0, off_spread=0.3).code == "inconclusive"
    assert rr.classify_ro(100.0, 80.0).code == "inconclusive"
    assert rr.classify_ro(None, 80.0).code == "inconclusive"
    assert rr.classify_ro(0.0, 80.0).code == "inconclusive"


def test_soft_results_are_never_judged():
    v = rr.classify_ro(10.0, 50.0, provider="soft")
    assert v.code == "not_judged" and "soft" in v.words


@pytest.mark.parametrize(
    "ratio,code", [(1.09, "no_effect"), (1.10, "ro_sensitive"), (0.96, "no_effect"), (0.94, "inconclusive")]
)
def test_thresholds(ratio, code):
    assert rr.classify_ro(100.0, 100.0 * ratio).code == code


# -- pairing, matrix, findings ---------------------------------------------------------------------------


def vm_matrix(provider="pyverbs"):
    """The #1731 pattern: GPU memory 84 Gb/s without RO, host ~400."""
    return [
        bw("device", "mr", False, 84, provider=provider),
        bw("device", "mr", True, 360, provider=provider),
        bw("device", "dmabuf", False, 86, provider=provider),
        bw("device", "dmabuf", True, 365, provider=provider),
        bw("managed", "mr", False, 395, provider=provider),
        bw("managed", "mr", True, 396, provider=provider),
        bw("pinned", "mr", False, 398, provider=provider),
        bw("pinned", "mr", True, 399, provider=provider),
        bw(
            "pinned",
            "dmabuf",
            status=Status.WAIVED,
            reason="dma-buf path exports device memory only",
            provider=provider,
        ),
    ]


def test_ro_pairs_match_only_identical_cases():
    res = vm_matrix() + [bw("device", "mr", False, 50, size=4096)]  # an unpaired size
    pairs = rr.ro_pairs(res)
    assert {(p.off.params.memory, p.off.params.reg_path) for p in pairs} == {
        ("device", "mr"),
        ("device", "dmabuf"),
        ("managed", "mr"),
        ("pinned", "mr"),
    }
    dev = next(p for p in pairs if p.subject.startswith("device/mr"))
    assert dev.verdict.code == "ro_sensitive"


def test_host_reference_prefers_pinned_ro_off():
    ref = rr.host_reference(vm_matrix())
    assert ref.params.memory == "pinned" and ref.value == 398


def test_interpret_matrix_rows():
    rows = {(r.memory, r.reg_path): r for r in rr.interpret_matrix(vm_matrix())}
    d = rows[("device", "mr")]
    assert d.off_gbps == 84 and d.on_gbps == 360 and d.vs_host == pytest.approx(84 / 398)
    assert d.verdict.code == "ro_sensitive"
    assert rows[("managed", "mr")].vs_host is None  # a host number is not compared as GPU
    w = rows[("pinned", "dmabuf")]
    assert w.status == "WAIVED" and "device memory only" in w.reason


def test_findings_for_the_vm_pattern():
    f = rr.rdma_findings(vm_matrix())
    codes = [x.code for x in f]
    assert codes.count("RO-AB-SENSITIVE") == 2
    sens = next(x for x in f if x.code == "RO-AB-SENSITIVE")
    assert sens.severity is Severity.FAIL  # 360/84 >= 2x
    assert "GDR-DEVICE-SLOW" in codes and "GDR-MANAGED-IS-HOST" in codes
    slow = next(x for x in f if x.code == "GDR-DEVICE-SLOW")
    assert slow.severity is Severity.FAIL and "21%" in slow.title
    assert "RO-AB-NO-EFFECT" in codes  # pinned and managed
    assert "GDR-PATHS-DIFFER" not in codes


def test_ro_ignored_finding():
    res = [bw("device", "mr", False, 84), bw("device", "mr", True, 85), bw("pinned", "mr", False, 400)]
    f = rr.ro_findings(res)
    assert [x.code for x in f] == ["RO-AB-IGNORED"]
    assert "6.4" in f[0].advice


def test_healthy_bare_metal_has_no_warnings():
    res = [
        bw("device", "mr", False, 390),
        bw("device", "mr", True, 392),
        bw("pinned", "mr", False, 398),
        bw("pinned", "mr", True, 398),
    ]
    f = rr.rdma_findings(res)
    assert all(x.severity is Severity.INFO for x in f)
    assert "GDR-DEVICE-SLOW" not in [x.code for x in f]


def test_paths_differ_and_reg_failed():
    res = [bw("device", "mr", False, 100), bw("device", "dmabuf", False, 300), bw("pinned", "mr", False, 300)]
    assert "GDR-PATHS-DIFFER" in [x.code for x in rr.gdr_findings(res)]
    res = [bw("device", "mr", status=Status.WAIVED, reason="nvidia-peermem is not loaded")]
    f = rr.gdr_findings(res)
    assert [x.code for x in f] == ["GDR-DEVICE-REG-FAILED"] and "peermem" in f[0].evidence[0]


def test_soft_results_produce_no_findings():
    assert rr.rdma_findings(vm_matrix(provider="soft")) == []


def test_report_rule_adapter():
    from gdrdiag.diagnose import context
    from gdrdiag.model.report import Report

    rep = Report(results=tuple(vm_matrix()))
    assert [f.code for f in rr.report_rule(rep, context(rep)[0])] == [
        f.code for f in rr.rdma_findings(vm_matrix())
    ]
