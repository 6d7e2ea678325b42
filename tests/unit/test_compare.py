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
    """Field by field, the role NIC: PF on bare metal, VF in the guest (not a whole-string diff)."""
    fn = next(d for d in comparison.machine if d.fact.endswith(" function"))
    assert (fn.a, fn.b) == ("PF", "VF")
    ids = next(d for d in comparison.machine if d.fact.endswith(" device id"))
    assert (ids.a, ids.b) == ("15b3:1021", "15b3:101e")
    assert any(f.code == "SRIOV-VF" for f in comparison.findings_only_b)


def test_names_ro_not_honoured_first(comparison):
    """compare re-diagnoses: the leading cause of the VM's device-memory gap is RO not applied."""
    assert comparison.leading_cause == "CAUSE-RO-NOT-HONOURED"
    first = next(e for e in comparison.explanations if e.case.startswith("rdma_write_device"))
    assert first.rank == 1 and "relaxed ordering" in first.cause
    assert "CAUSE-RO-NOT-HONOURED" in first.evidence_b and first.evidence_a == "absent"
    assert any(e.cause == "differs: kernel" for e in comparison.explanations)


def test_names_the_flat_guest_topology(comparison):
    flat = next(d for d in comparison.machine if d.fact == "flat guest PCI tree")
    assert (flat.a, flat.b) == ("no", "yes")
    assert any(f.code == "VIRT-FLAT-TOPOLOGY" for f in comparison.findings_only_b)
    path = next(d for d in comparison.machine if d.fact == "GPU-NIC path class")
    assert "PIX" in path.a and "synthetic VM tree" in path.b


def test_adding_a_nic_changes_no_fact_of_the_role_nic():
    """One more NIC must not read as 'VF instead of PF', 'ATS off: VM' or 'further apart'."""
    import dataclasses

    bare = Report.from_json((REPORTS / "baremetal_hgx.json").read_text())
    extra = dataclasses.replace(bare.machine.nics[0], name="mlx5_9", bdf=None)
    more = dataclasses.replace(
        bare, machine=dataclasses.replace(bare.machine, nics=bare.machine.nics + (extra,))
    )
    c = compare(bare, more)
    assert c.machine == ()
    assert c.leading_cause is None


def _slower(report, key, factor):
    import dataclasses

    return dataclasses.replace(
        report,
        results=tuple(
            dataclasses.replace(
                r,
                samples=tuple(x * factor for x in r.samples),
                stats=SampleStats.of([x * factor for x in r.samples]),
            )
            if r.key == key
            else r
            for r in report.results
        ),
    )


def test_unexplained_delta_says_so_with_the_experiment():
    """Same machine, gather 20% slower, nothing else differs: say so, and name the experiment."""
    from gdrdiag.compare import NOTHING

    bare = Report.from_json((REPORTS / "baremetal_hgx.json").read_text())
    c = compare(bare, _slower(bare, "gather_warp", 0.8))
    ex = [e for e in c.explanations if e.case == "gather_warp"]
    assert [e.cause for e in ex] == [NOTHING]
    assert "gather-bench --sweep working-set" in ex[0].evidence_b


def test_copy_delta_ranks_the_copy_causes():
    bare = Report.from_json((REPORTS / "baremetal_hgx.json").read_text())
    c = compare(bare, _slower(bare, "copy_h2d_pinned", 0.75))
    ex = [e for e in c.explanations if e.case == "copy_h2d_pinned"]
    assert ex[0].rank == 1 and "NUMA" in ex[0].cause and "--numa auto" in ex[0].evidence_b


def test_output_fits_100_columns(comparison):
    from gdrdiag.render.compare_table import render_comparison

    text = render_comparison(comparison)
    # A URL longer than the width stands whole on its own line (never split a URL).
    lone_url = [line for line in text.splitlines() if len(line.split()) == 1 and "://" in line]
    assert max(len(line) for line in text.splitlines() if line not in lone_url) <= 100
    wide = render_comparison(comparison, wide=True)
    assert max(len(line) for line in wide.splitlines()) > 100


def test_names_the_device_memory_gap(comparison):
    device = [d for d in comparison.cases if d.key == "rdma_write_device_mr"]
    assert len(device) == 2 and all(d.large and d.ratio < 0.25 for d in device)
    host = [d for d in comparison.cases if d.key == "rdma_write_pinned_mr"]
    assert host and all(not d.large for d in host)
    assert any(f.code == "GDR-DEVICE-SLOW" for f in comparison.findings_only_b)


def _r(key, value, size=None, landing=None):
    params = MrParams(size_bytes=size, landing=landing)  # landing describes; it is not identity
    return BenchResult(
        key=key, status=Status.OK, params=params, unit="GB/s", samples=(value,), stats=SampleStats.of([value])
    )


def test_match_cases_by_key_and_params_ignoring_descriptions():
    a = [_r("rdma_x", 10.0, size=1, landing="x"), _r("rdma_x", 20.0, size=2), _r("rdma_only_a", 1.0)]
    b = [_r("rdma_x", 5.0, size=1, landing="y"), _r("rdma_x", 20.0, size=2), _r("rdma_only_b", 1.0)]
    cases = match_cases(a, b)
    assert [(c.key, c.ratio) for c in cases] == [
        ("rdma_x", 0.5),
        ("rdma_x", 1.0),
        ("rdma_only_a", None),
        ("rdma_only_b", None),
    ]
    assert cases[0].large and not cases[1].large
    assert (cases[2].b_status, cases[3].a_status) == (None, None)
