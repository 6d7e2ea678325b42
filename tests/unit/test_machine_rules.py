"""Each fixture machine yields the findings an expert would name (and no others worse than INFO)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gdrdiag.diagnose import RULES, diagnose, diagnose_machine, register, worst
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.report import Report

from .test_machine_rules_fixtures import MACHINES, codes, findings, machine

# fixture -> (FAIL codes, WARN codes, INFO codes that must be present)
EXPECTED = {
    "a_dev_firecracker": (set(), set(), {"VIRT-VM", "VIRT-NO-VIOMMU", "GDR-NO-GPU", "GDR-NO-RDMA"}),
    "b_synth_firecracker_h200": (
        set(),
        set(),
        {
            "VIRT-VM",
            "VIRT-NO-VIOMMU",
            "VIRT-FLAT-TOPOLOGY",
            "GDR-NO-RDMA",
            "GDR-PEERMEM-MISSING",
            "GDR-HOST-DMABUF",
        },
    ),
    "c_baremetal_hgx_h100_cx7": (set(), set(), {"GDR-HOST-DMABUF"}),
    "d_kvm_h100_cx7_vf": (
        {"RO-KERNEL-VF"},
        {"VIRT-FLAT-TOPOLOGY"},
        {"VIRT-VM", "VIRT-NO-VIOMMU", "VIRT-HOST-ACS-ATS", "SRIOV-VF", "RO-VF-BIT", "RO-ACCESS-FLAG"},
    ),
    "e_baremetal_acs_redirect": ({"ACS-REDIRECT"}, {"IOMMU-TRANSLATED"}, set()),
    "f_link_downtrained": (set(), {"PCIE-LINK-WIDTH", "PCIE-LINK-SPEED"}, set()),
    "g_8gpu_8nic_two_odd": (set(), {"PCIE-LINK-WIDTH"}, {"GDR-HOST-DMABUF"}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name):
    fails, warns, infos = EXPECTED[name]
    assert codes(name, "FAIL") == fails
    assert codes(name, "WARN") == warns
    assert infos <= codes(name, "INFO")


def test_healthy_bare_metal_is_not_flagged_for_ro_acs_or_topology():
    got = codes("c_baremetal_hgx_h100_cx7")
    assert not got & {
        "RO-PF-DISABLED",
        "ACS-REDIRECT",
        "GDR-PATH-CLASS",
        "GDR-NUMA-MISMATCH",
        "PCIE-PATH-NARROW",
        "RO-ACCESS-FLAG",
        "GDR-NO-REG-PATH",
    }


def test_vf_rlxdord_zero_is_never_ro_pf_disabled():
    m = machine("d_kvm_h100_cx7_vf")
    assert m.function("0000:00:06.0").pcie.relaxed_ordering is False
    assert "RO-PF-DISABLED" not in codes("d_kvm_h100_cx7_vf")
    assert "PCIE-MRRS-SMALL" not in codes("d_kvm_h100_cx7_vf")  # VF DevCtl is RsvdP


def test_guest_kernel_64_or_ofed_clears_the_ro_fail():
    m = machine("d_kvm_h100_cx7_vf")
    new = replace(m, kernel=replace(m.kernel, release="6.8.0-45-generic", version_tuple=(6, 8, 0)))
    assert "RO-KERNEL-VF" not in {f.code for f in diagnose_machine(new)}
    ofed = replace(m, kernel=replace(m.kernel, mlx5_out_of_tree=True))
    (f,) = [f for f in diagnose_machine(ofed) if f.code == "RO-KERNEL-VF"]
    assert f.severity is Severity.INFO


def test_pf_with_ro_off_is_flagged_on_bare_metal():
    m = machine("c_baremetal_hgx_h100_cx7")
    nic = m.function("0000:19:00.0")
    off = replace(nic, pcie=replace(nic.pcie, relaxed_ordering=False))
    m2 = replace(m, pci=tuple(off if f.bdf == nic.bdf else f for f in m.pci))
    (f,) = [f for f in diagnose_machine(m2) if f.code == "RO-PF-DISABLED"]
    assert f.subject == "mlx5_0" and f.severity is Severity.WARN


def test_acs_with_ats_and_direct_translated_is_accepted():
    m = machine("e_baremetal_acs_redirect")
    nic = m.function(m.nics[0].bdf)
    ats_on = replace(nic, ats=replace(nic.ats, enabled=True))
    fixed = []
    for f in m.pci:
        if f.bdf == nic.bdf:
            f = ats_on
        elif f.acs is not None:
            f = replace(f, acs=replace(f.acs, ctl_flags=f.acs.ctl_flags + ("DirectTrans",)))
        fixed.append(f)
    assert "ACS-REDIRECT" not in {f.code for f in diagnose_machine(replace(m, pci=tuple(fixed)))}


def test_acs_redirect_names_the_switch_ports_and_the_fix():
    # One finding per GPU<->NIC path (duplicates pushed the cause down), every bridge in it.
    fs = [f for f in findings("e_baremetal_acs_redirect") if f.code == "ACS-REDIRECT"]
    assert len(fs) == 1 and fs[0].subject == "0000:33:00.0<->mlx5_0"
    assert "0000:32:00.0" in fs[0].title and "0000:32:01.0" in fs[0].title
    assert "ECAP_ACS+0x6.w=0000" in fs[0].advice and "ReqRedir" in fs[0].title


def test_idle_gpu_speed_drop_is_info_not_warn():
    m = machine("c_baremetal_hgx_h100_cx7")
    g = m.function("0000:18:00.0")
    slow = replace(g, link=replace(g.link, speed_gts=2.5, speed_downgraded=True))
    m2 = replace(m, pci=tuple(slow if f.bdf == g.bdf else f for f in m.pci))
    got = {(f.code, f.severity) for f in diagnose_machine(m2)}
    assert ("PCIE-LINK-SPEED-IDLE", Severity.INFO) in got and "PCIE-LINK-SPEED" not in {c for c, _ in got}


def test_no_peermem_and_no_dmabuf_is_a_fail():
    m = machine("c_baremetal_hgx_h100_cx7")
    k = replace(m.kernel, peermem_loaded=False, nvidia_flavour=type(m.kernel.nvidia_flavour)("proprietary"))
    assert "GDR-NO-REG-PATH" in {
        f.code for f in diagnose_machine(replace(m, kernel=k)) if f.severity is Severity.FAIL
    }


def test_registry_runs_report_rules_and_survives_a_broken_rule():
    def bench_rule(report, ctx):
        yield Finding(code="PERF-TEST", severity=Severity.WARN, title="t")

    def broken(report, ctx):
        raise ValueError("boom")

    register(bench_rule)
    register(broken)
    try:
        out = diagnose(Report(machine=machine("f_link_downtrained"))).findings
        got = [f.code for f in out]
        assert "PERF-TEST" in got and "DIAG-RULE-ERROR" in got and "PCIE-LINK-WIDTH" in got
        assert worst(out) is Severity.WARN
    finally:
        RULES.remove(bench_rule)
        RULES.remove(broken)


def test_findings_catalogue_lists_every_code():
    doc = (MACHINES.parents[2] / "docs" / "findings.md").read_text()
    emitted = {f.code for name in EXPECTED for f in findings(name)}
    for code in emitted | {"PCIE-LINK-SPEED-IDLE", "RO-PF-DISABLED", "GDR-NO-REG-PATH", "DIAG-RULE-ERROR"}:
        assert f"`{code}`" in doc, code
