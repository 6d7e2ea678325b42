"""Leading causes that pointed the wrong way, each fixed at the rule that raised it."""

import dataclasses

from gdrdiag.diagnose import diagnose
from gdrdiag.model.params import MrParams
from gdrdiag.model.results import BenchResult, SampleStats
from gdrdiag.model.vocabulary import MemoryKind, RegPath
from tests.unit import diagnosis_scenarios as sc

INTERRUPTED = (
    "interrupted by Ctrl-C after 2 results: the cases after them did not run, so this Report is partial",
)


def _by_code(findings, code):
    return [f for f in findings if f.code == code]


def test_interrupted_vm_run_is_not_an_ro_kernel_fail():
    # A 5.15 VF guest whose mr-bench --ro-ab stopped after its RO-off rows: the RO-on rows that
    # weigh "this kernel ignores RO" are missing because the run stopped, so the inference is INFO.
    rows = [sc.write("device", 120.0, False), sc.write("pinned", 396.0, False)]
    full = sc.report(sc.vm("5.15.0-105-generic"), rows, command="mr-bench --ro-ab")
    (kept,) = _by_code(diagnose(full).findings, "RO-KERNEL-VF")
    assert kept.severity.value == "FAIL"
    for note in (INTERRUPTED, ("interrupted (SIGINT) after 3 of 5 benches",)):
        for results in (rows, []):
            partial = dataclasses.replace(full, results=tuple(results), notes=note)
            assert partial.interrupted
            findings = diagnose(partial).findings
            (ro,) = _by_code(findings, "RO-KERNEL-VF")
            assert ro.severity.value == "INFO" and "interrupted" in ro.title
            assert findings[0].code != "RO-KERNEL-VF"


def test_qp_enomem_is_not_a_registration_failure():
    # ibv_create_qp's ENOMEM (the NIC's QP resources) on every GPU-memory row: registration was
    # never the question, so no "GPU memory could not be registered" cause.
    reason = "ibv_create_qp failed: ENOMEM [12] (mlx5_0 allows at most 4 QPs)"
    rows = [
        BenchResult.waived(
            f"rdma_write_device_{reg}",
            reason,
            params=MrParams(memory=MemoryKind.DEVICE, reg_path=RegPath(reg), landing="gpu"),
            provider="fixture",
        )
        for reg in ("mr", "dmabuf")
    ]
    findings = diagnose(
        sc.report(sc.machine("baremetal_hgx"), rows + [sc.write("pinned", 394.0, False)])
    ).findings
    assert "CAUSE-REG-PATH-MISSING" not in {f.code for f in findings}
    failed = _by_code(findings, "GDR-DEVICE-REG-FAILED")
    assert len(failed) == 2
    assert all("ibv_create_qp failed, not the registration" in f.title for f in failed)
    assert all("nvidia-peermem" not in f.advice for f in failed)
    # A registration failure is still one.
    reg = [dataclasses.replace(r, reason="ibv_reg_mr failed: EFAULT [14]") for r in rows]
    lead = diagnose(sc.report(sc.machine("baremetal_hgx"), reg + [sc.write("pinned", 394.0, False)]))
    assert lead.findings[0].code == "CAUSE-REG-PATH-MISSING"


def test_no_inferred_numa_cause_on_a_loss_that_came_and_went():
    # A 256 MiB pinned H2D copy whose first samples reach the path and later ones sag (another
    # tenant on the link): the NUMA node is the same in every sample, so it explains none of it.
    s = (55.2, 55.2, 54.8, 51.3, 33.1, 26.7, 32.4, 37.1, 41.3, 44.2)
    tail = dataclasses.replace(sc.copy_h2d(40.0), samples=s, stats=SampleStats.of(s))
    findings = diagnose(sc.report(sc.machine("baremetal_hgx"), [tail])).findings
    codes = {f.code for f in findings}
    assert "CAUSE-NUMA-PLACEMENT" not in codes and "PERF-PATH-UNSTABLE" in codes
    # The same loss in every sample is still weighed against NUMA placement.
    steady = diagnose(sc.report(sc.machine("baremetal_hgx"), [sc.copy_h2d(40.0)])).findings
    assert "CAUSE-NUMA-PLACEMENT" in {f.code for f in steady}


PF = "0000:3b:00.0"


def _guest_behind_ro_off_pf(kernel: str = "6.8.0-45-generic"):
    # The KVM guest's VF NIC with its host PF recorded (pf_bdf) and the PF's DevCtl RlxdOrd off.
    m = sc.vm(kernel)
    (nic,) = m.nics
    vf = m.function(nic.bdf)
    pf = dataclasses.replace(
        vf,
        bdf=PF,
        is_vf=False,
        physfn=None,
        virtfns=(vf.bdf,),
        pcie=dataclasses.replace(vf.pcie, relaxed_ordering=False),
    )
    return dataclasses.replace(m, pci=m.pci + (pf,), nics=(dataclasses.replace(nic, pf_bdf=PF),))


def test_ro_off_on_the_host_pf_is_not_a_root_complex_route():
    # A VF's own RO enable is RsvdP (PCIe Base Spec r5.0 9.3.5.4): its writes are strictly ordered
    # when its PF's bit is off, whatever the guest kernel or the MR asks. That is the RO cause, with
    # the PF named, not "peer writes routed through the root complex".
    ab = [sc.write("device", 84.3, False), sc.write("device", 85.1, True), sc.write("pinned", 395.8, False)]
    on_only = [sc.write("device", 178.0, True), sc.write("pinned", 395.0, True)]
    for kernel in ("6.8.0-45-generic", "5.15.0-105-generic"):
        for rows in (ab, on_only):
            findings = diagnose(sc.report(_guest_behind_ro_off_pf(kernel), rows)).findings
            lead = findings[0]
            assert lead.code == "CAUSE-RO-NOT-HONOURED", (kernel, [f.code for f in findings[:3]])
            assert any(PF in e for e in lead.evidence) and PF in lead.advice
            (rc,) = _by_code(findings, "CAUSE-P2P-VIA-RC")
            assert rc.severity.value != "FAIL" and any(PF in a for a in rc.against)
            assert _by_code(findings, "RO-PF-OF-VF")
    # RO-off rows only: the missing flag leads, and says the PF's bit must be set too.
    off = [sc.write("device", 120.0, False), sc.write("pinned", 396.0, False)]
    lead = diagnose(sc.report(_guest_behind_ro_off_pf(), off)).findings[0]
    assert lead.code == "CAUSE-RO-NOT-REQUESTED" and any(PF in e for e in lead.evidence)
    assert not any("would take effect here" in e for e in lead.evidence)


def _noisy_guest(seed: int, driver: str = "") -> list:
    # The 5.15 VF guest with the A/B on both registration paths (mr and dma-buf): two nearly equal
    # rows each side, every row with its own run-to-run noise of up to 3 %.
    import random

    rnd = random.Random(seed)
    m = sc.vm("5.15.0-105-generic")
    if driver:
        m = dataclasses.replace(m, kernel=dataclasses.replace(m.kernel, nvidia_driver_version=driver))
    rows = [
        sc.write("device", gbps * (1 + rnd.uniform(-0.03, 0.03)), ro, reg=reg)
        for reg in ("mr", "dmabuf")
        for gbps, ro in ((84.3, False), (85.1, True))
    ]
    rep = sc.report(m, rows + [sc.write("pinned", 395.8, False)])
    return dataclasses.replace(rep, findings=diagnose(rep).findings)


def test_cause_on_two_registration_paths_keeps_one_subject_through_noise():
    # Which of two nearly equal rows is the weaker one is noise: the finding's subject must not be.
    keys = set()
    for seed in range(16):
        (cause,) = _by_code(_noisy_guest(seed).findings, "CAUSE-RO-NOT-HONOURED")
        keys.add((cause.subject, cause.severity))
        assert any("the same on" in e for e in cause.evidence)
    assert len(keys) == 1


def test_fleet_names_the_real_drift_not_a_noisy_subject():
    # 16 guests of one SKU, all with the same VF RO cause; one has another NVIDIA driver. The shared
    # cause is the group's, so the drift leads that node.
    from gdrdiag.fleet import analyse
    from gdrdiag.node_record import build_head

    heads = [
        build_head(_noisy_guest(i, "550.54.15" if i == 0 else ""), f"g{i:02d}", 1, 1000) for i in range(16)
    ]
    (node,) = [v for v in analyse(heads).nodes if v.host == "g00"]
    assert node.cause is not None and node.cause.code == "FLEET-DRIVER-DRIFT"
