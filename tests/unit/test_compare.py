"""compare over the saved bare-metal and VM Reports: the expert's story, with evidence."""

from pathlib import Path

import pytest

from gdrdiag.compare import compare, match_cases
from gdrdiag.model.params import MrParams
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, SampleStats, Status

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


@pytest.fixture(scope="module")
def comparison():
    bare = Report.from_json((REPORTS / "baremetal_hgx.json").read_text())
    vm = Report.from_json((REPORTS / "vm_guest_kvm.json").read_text())
    return compare(bare, vm, a_label="bare", b_label="vm")


def test_names_the_vf_in_the_guest(comparison):
    nic = next(d for d in comparison.machine if d.fact == "NIC functions")
    assert "PF 15b3:1021" in nic.a and "VF 15b3:101e" in nic.b
    assert any(f.code == "SRIOV-VF" for f in comparison.findings_only_b)


def test_names_ro_not_honoured(comparison):
    codes = {f.code for f in comparison.findings_only_b}
    assert {"RO-KERNEL-VF", "RO-AB-IGNORED"} <= codes
    first = next(e for e in comparison.explanations if e.case.startswith("rdma_write_device"))
    assert first.rank == 1 and "relaxed ordering" in first.cause
    assert "RO-KERNEL-VF" in first.evidence_b and "RO-AB-NO-EFFECT" in first.evidence_a


def test_names_the_flat_guest_topology(comparison):
    flat = next(d for d in comparison.machine if d.fact == "flat guest PCI tree")
    assert (flat.a, flat.b) == ("no", "yes")
    assert any(f.code == "VIRT-FLAT-TOPOLOGY" for f in comparison.findings_only_b)
    path = next(d for d in comparison.machine if d.fact == "GPU-NIC path class")
    assert "PIX" in path.a and "synthetic VM tree" in path.b


def test_names_the_device_memory_gap(comparison):
    device = [d for d in comparison.cases if d.key == "rdma_write_device_mr"]
    assert len(device) == 2 and all(d.large and d.ratio < 0.25 for d in device)
    host = [d for d in comparison.cases if d.key == "rdma_write_pinned_mr"]
    assert host and all(not d.large for d in host)
    assert any(f.code == "GDR-DEVICE-SLOW" for f in comparison.findings_only_b)


def _r(key, value, size=None, landing=None):
    params = MrParams(size_bytes=size, landing=landing)  # landing describes; it is not identity
    return BenchResult(key=key, status=Status.OK, params=params, unit="GB/s", samples=(value,),
                       stats=SampleStats.of([value]))


def test_match_cases_by_key_and_params_ignoring_descriptions():
    a = [_r("rdma_x", 10.0, size=1, landing="x"), _r("rdma_x", 20.0, size=2), _r("rdma_only_a", 1.0)]
    b = [_r("rdma_x", 5.0, size=1, landing="y"), _r("rdma_x", 20.0, size=2), _r("rdma_only_b", 1.0)]
    cases = match_cases(a, b)
    assert [(c.key, c.ratio) for c in cases] == [
        ("rdma_x", 0.5), ("rdma_x", 1.0), ("rdma_only_a", None), ("rdma_only_b", None)
    ]
    assert cases[0].large and not cases[1].large
    assert (cases[2].b_status, cases[3].a_status) == (None, None)
