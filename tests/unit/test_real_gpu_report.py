"""diagnose on the real Report taken on the GPU machine (H200 passed through to a Firecracker VM)."""

from pathlib import Path

from gdrdiag.diagnose import diagnose
from gdrdiag.model.findings import Severity
from gdrdiag.model.report import Report

REPORT = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "gpu_machine_h200.json"


def test_real_report_findings_are_what_an_expert_would_say():
    report = Report.from_json(REPORT.read_text())
    findings = diagnose(report).findings
    codes = {f.code for f in findings}
    # A VM with a passed-through GPU on a flat bus, no NIC, no peermem: said as INFO, not faults.
    assert {"VIRT-VM", "VIRT-FLAT-TOPOLOGY", "GDR-NO-RDMA", "GDR-PEERMEM-MISSING"} <= codes
    # The copy engine reaches ~88% of Gen5 x16 raw: healthy, so no CE finding.
    assert "PERF-CE-H2D-LOW" not in codes
    # Pageable copies are far slower than pinned (a rung by design here: pinned rows are healthy),
    # and small per-call copies are API-bound.
    pageable = [f for f in findings if f.code == "CAUSE-PAGEABLE-MEMORY"]
    assert pageable and all(f.severity is Severity.INFO for f in pageable)
    assert "PERF-SMALL-COPIES" in codes
    # A healthy machine: nothing to fix.
    assert not any(f.severity in (Severity.FAIL, Severity.WARN) for f in findings), [
        (f.code, f.title) for f in findings if f.severity is not Severity.INFO
    ]
    # The stored findings are what diagnose says today.
    assert {f.code for f in report.findings} == codes


def test_real_report_gpu_facts():
    m = Report.from_json(REPORT.read_text()).machine
    gpu = m.gpus[0]
    assert m.virt.is_vm and gpu.nvml_virtualization_mode.upper().startswith("PASS")
    assert (gpu.link.max_speed_gts, gpu.link.max_width) == (32.0, 16)
    assert gpu.gdr_attributes["GPU_DIRECT_RDMA_SUPPORTED"] == 1 and gpu.bar1_index == 2
    assert m.nics == () and m.kernel.peermem_loaded is False
