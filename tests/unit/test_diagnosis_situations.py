"""docs/diagnosis.md: every evidence situation leads with the expected cause, alone and through compare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gdrdiag.compare import compare
from gdrdiag.diagnose import diagnose
from gdrdiag.model.findings import Severity
from tests.unit import diagnosis_scenarios as sc

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(sc.SCENARIOS))
def test_right_cause_leads(name):
    build, expected = sc.SCENARIOS[name]
    findings = diagnose(build()).findings
    assert findings, name
    assert findings[0].code == expected, [(f.code, f.severity.value, f.explains) for f in findings[:5]]


@pytest.mark.parametrize("name", [n for n in sc.SCENARIOS if n != "failed measurement"])
def test_leading_cause_says_how_much_and_what_next(name):
    build, expected = sc.SCENARIOS[name]
    lead = diagnose(build()).findings[0]
    assert lead.explains is not None and 0 < lead.explains <= 1
    assert lead.basis in ("measured", "inferred")
    assert lead.next_step.startswith(("gdrdiag ", "numactl "))
    assert lead.severity in (Severity.FAIL, Severity.WARN)


@pytest.mark.parametrize("name", list(sc.SCENARIOS))
def test_same_cause_leads_through_compare_against_healthy(name):
    build, expected = sc.SCENARIOS[name]
    healthy = sc.healthy_bare_metal()
    comparison = compare(healthy, build(), a_label="healthy", b_label=name)
    assert comparison.leading_cause == expected


def test_healthy_bare_metal_has_no_fail_or_warn():
    findings = diagnose(sc.healthy_bare_metal()).findings
    assert findings
    assert [f.code for f in findings if f.severity is not Severity.INFO] == []


def test_ro_off_only_names_the_missing_flag_and_the_ab():
    lead = diagnose(sc.ro_off_only()).findings[0]
    assert "without IBV_ACCESS_RELAXED_ORDERING" in lead.title
    assert lead.basis == "inferred" and "--ro-ab" in lead.next_step
    assert any("no RO-on row" in a for a in lead.against)


def test_ro_ab_share_is_measured_from_the_rows():
    lead = diagnose(sc.ro_ab_present()).findings[0]
    # (380 - 120) / (396 - 120) of the loss is recovered by RO: measured, not a prior.
    assert lead.basis == "measured"
    assert lead.explains == pytest.approx((380 - 120) / (396 - 120), abs=0.002)
    assert lead.severity is Severity.FAIL


def test_ro_on_only_is_flagged_and_fails():
    findings = diagnose(sc.ro_on_only()).findings
    assert findings[0].severity is Severity.FAIL
    assert any(e.startswith("GPU/host = 45%") for e in findings[0].evidence)


def test_size_mismatch_is_stated():
    lead = diagnose(sc.different_sizes()).findings[0]
    assert any("size mismatch" in e and "1 MiB" in e and "4 MiB" in e for e in lead.evidence)


def test_out_of_tree_driver_weakens_the_kernel_cause():
    findings = diagnose(sc.vf_out_of_tree()).findings
    honour = next(f for f in findings if f.code == "CAUSE-RO-NOT-HONOURED")
    assert any("out-of-tree" in a for a in honour.against)
    assert honour.severity is not Severity.FAIL


def test_ro_sensitive_cpu_is_named_in_the_leading_cause():
    lead = diagnose(sc.ro_sensitive_cpu()).findings[0]
    assert any("AMD Zen3/Zen4" in e for e in lead.evidence)
    assert "2-3x" in lead.advice


def test_measurement_contradicts_kernel_inference():
    """A 5.15 VF guest whose A/B shows RO working: RO-KERNEL-VF is demoted, not ranked first."""
    rep = sc.report(
        sc.vm("5.15.0-105-generic"),
        [sc.write("device", 120.0, False), sc.write("device", 370.0, True), sc.write("pinned", 396.0, False)],
    )
    findings = diagnose(rep).findings
    kernel = next(f for f in findings if f.code == "RO-KERNEL-VF")
    assert kernel.severity is Severity.INFO and "contradicted by measurement" in kernel.title
    assert findings[0].code == "CAUSE-RO-NOT-REQUESTED"


def test_failed_measurement_is_fail_with_reason():
    lead = diagnose(sc.failed_measurement()).findings[0]
    assert lead.severity is Severity.FAIL and "payload mismatch" in lead.title


def test_working_set_decline_names_the_knee():
    lead = diagnose(sc.sm_read_decline()).findings[0]
    assert lead.basis == "measured"
    assert any("from 1024 MiB on" in e for e in lead.evidence)


def test_docs_table_lists_every_situation_with_its_test():
    text = (ROOT / "docs" / "diagnosis.md").read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| ([^|]+?) \| `([A-Z0-9-]+)` \|", text, re.M)}
    for name, (_, expected) in sc.SCENARIOS.items():
        assert rows.get(name) == expected, name


def test_every_test_the_docs_table_names_exists():
    text = (ROOT / "docs" / "diagnosis.md").read_text()
    named = set(re.findall(r"`(?:[\w/]+\.py::)?(test_\w+)`", text))
    assert len(named) >= 10
    sources = "".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    assert sorted(n for n in named if f"def {n}(" not in sources) == []
