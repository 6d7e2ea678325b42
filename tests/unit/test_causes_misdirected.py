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
