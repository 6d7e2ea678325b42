"""In-repo fuzzers for the readers of input gdrdiag did not write itself (issue 22).

Each mutates a seed corpus (the tool outputs in tests/fixtures/imported/, the saved Reports, node
records written by gdrdiag) with byte- and value-level damage, then checks the reader's contract:
it reads the input or refuses it with its one-line error (``UserInputError`` / ``SchemaError``),
never another exception; whatever it reads diagnoses without a rule error, and a Report made from
it writes JSON that reads back equal. Bounded: a fixed number of examples per reader, derandomized
in CI (``derandomize=True``) so a run costs the same every time; set ``GDRDIAG_FUZZ_EXAMPLES`` to
fuzz longer locally.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdrdiag.diagnose import diagnose
from gdrdiag.errors import UserInputError
from gdrdiag.importers import import_text
from gdrdiag.model.report import Report
from gdrdiag.model.serde import SchemaError
from gdrdiag.node_record import parse_head, record_line

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
IMPORT_SEEDS = sorted(
    p.read_text(errors="replace") for p in (ROOT / "imported").iterdir() if p.suffix in (".txt", ".json")
)
REPORT_SEEDS = sorted(p.read_text() for p in (ROOT / "reports").glob("*.json"))
EXAMPLES = int(os.environ.get("GDRDIAG_FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("GDRDIAG_FUZZ_EXAMPLES"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Replacement tokens that broke readers before (issue 22's hostile inputs): huge, non-finite and
# negative numbers, deep nesting, control and surrogate characters, empty and odd types.
NASTY = [
    "1e309", "-1", "0", "NaN", "Infinity", "9" * 400, str(2**63), str(2**1024), "[" * 200, "null",
    '"\\ud800"', "\x1b[31m", "\u202e", "{}", "[]", "true", '""', "-0.0", "4294967296",
]  # fmt: skip


@st.composite
def _mutated(draw, seeds: list[str]) -> str:
    """A seed with a few edits: cut, duplicate or replace a span, or splice a nasty token in."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 200)))
        op = draw(st.sampled_from(["cut", "dup", "nasty", "digit", "truncate"]))
        if op == "cut":
            text = text[:i] + text[j:]
        elif op == "dup":
            text = text[:j] + text[i:j] * draw(st.integers(1, 5)) + text[j:]
        elif op == "nasty":
            text = text[:i] + draw(st.sampled_from(NASTY)) + text[j:]
        elif op == "digit":
            text = text[:i] + draw(st.sampled_from("0123456789.-e")) + text[i + 1 :]
        else:
            text = text[:i]
    return text


def _diagnoses_cleanly(report: Report) -> None:
    errors = [f.evidence for f in diagnose(report).findings if f.code == "DIAG-RULE-ERROR"]
    assert not errors, errors


@FUZZ
@given(_mutated(IMPORT_SEEDS))
def test_import_reads_or_refuses_in_one_line_and_what_it_reads_reads_back(text):
    try:
        results = import_text(text, "fuzz")
    except UserInputError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    report = Report(tool_version="fuzz", command="import", results=tuple(results))
    assert Report.from_json(report.to_json()) == report
    _diagnoses_cleanly(report)


@FUZZ
@given(_mutated(REPORT_SEEDS))
def test_a_report_reads_or_refuses_in_one_line_and_diagnoses(text):
    try:
        report = Report.from_json(text)
    except SchemaError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    _diagnoses_cleanly(report)
    assert Report.from_json(report.to_json()) == report


RECORD_SEEDS = [
    record_line(Report.from_json(t), host, 0)
    for t, host in zip(REPORT_SEEDS, ("n1", "n2", "n3", "n4"), strict=False)
]


@FUZZ
@given(_mutated(RECORD_SEEDS))
def test_a_node_record_reads_or_refuses_in_one_line(text):
    try:
        head = parse_head(text)
    except SchemaError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert head.host and "\n" not in head.host
    json.dumps(head.__dict__, default=str)  # every field is plain data
