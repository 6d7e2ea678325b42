"""The catalogue is the code's: every emitted code is catalogued, the docs are generated from it, and
every reference a finding carries resolves (a docs/kb/ section, an https URL, or a PCIe spec section)."""

import fnmatch
import re
from pathlib import Path

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.diagnose.catalogue import catalogue, documents, unresolved
from gdrdiag.model.report import Report
from tests.unit import diagnosis_scenarios as sc

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = (
    r'code="([A-Z0-9]+(?:-[A-Z0-9]+)+)"',
    r'finding\(\s*"([A-Z0-9]+(?:-[A-Z0-9]+)+)"',
    r'Cause\(\s*"([A-Z0-9]+(?:-[A-Z0-9]+)+)"',
    r'^\s*"([A-Z]+-[A-Z0-9-]+)",\s*$',
)


def _codes_in_rules() -> set[str]:
    codes = set()
    for path in (ROOT / "gdrdiag" / "diagnose").glob("*.py"):
        if path.name.startswith("catalogue"):
            continue
        text = path.read_text()
        for pat in PATTERNS:
            codes |= set(re.findall(pat, text, re.M))
    return codes


def _pages() -> dict[str, str]:
    """The KB pages as they are on disk (what a user follows)."""
    return {f"docs/kb/{p.name}": p.read_text() for p in (ROOT / "docs" / "kb").glob("*.md")}


def _all_findings():
    reports = [
        Report.from_json(p.read_text()) for p in sorted((ROOT / "tests/fixtures/reports").glob("*.json"))
    ]
    reports += [build() for build, _ in sc.SCENARIOS.values()]
    return [f for r in reports for f in diagnose(r).findings]


def test_every_code_in_the_rules_is_catalogued_and_nothing_else():
    codes = _codes_in_rules()
    assert len(codes) > 60
    assert sorted(codes - set(catalogue())) == []
    assert sorted(set(catalogue()) - codes) == []


def test_docs_are_generated_from_the_catalogue():
    for rel, text in documents().items():
        on_disk = (ROOT / rel).read_text()
        assert on_disk == text, f"{rel} is stale: run python scripts/make_docs.py"


def test_findings_md_matches_the_catalogue_field_by_field():
    text = (ROOT / "docs" / "findings.md").read_text()
    for e in catalogue().values():
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| `{e.code}` |"))
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[1] == e.severity and cells[2] == e.when and cells[3] == e.fix, e.code
        assert cells[4] == f"[{e.code}](kb/{e.area}.md#{e.anchor})"


def test_every_catalogue_reference_resolves():
    bad = {code: unresolved(e.reference, _pages()) for code, e in catalogue().items()}
    assert {c: b for c, b in bad.items() if b} == {}


def test_every_emitted_finding_has_a_resolving_reference_and_a_documented_severity():
    findings = _all_findings()
    assert len({f.code for f in findings}) > 25
    for f in findings:
        assert f.reference, f.code
        assert unresolved(f.reference, _pages()) == [], (f.code, f.reference)
        assert f.severity.value in catalogue()[f.code].severity, (f.code, f.severity)


@pytest.mark.parametrize(
    "ref",
    [
        "diagnostics-kb RO-05 [R7]",
        "perf-anchors 0.1",
        "docs/kb/ro.md#nope",
        "docs/kb/none.md#ro-kernel-vf",
        "see the forum",
    ],
)
def test_an_unresolvable_reference_is_caught(ref):
    assert unresolved(ref, _pages()) == [ref]


#: Citations of the project's private research notes (their names, and the [Rn] numbers of their
#: reference lists), which no user can open: code, docs and fixtures cite the public source instead.
PRIVATE_NOTE_CITATION = re.compile(r"diagnostics-kb|perf-anchors|style-anchors|peers\.md|\[R\d+\]")

#: Scanned for those citations: the package, scripts, native sources, tests (fixtures included),
#: the docs and the README.
SCANNED = ("gdrdiag", "scripts", "native", "tests", "docs", "README.md")

#: Not scanned: this file (its cases above are such citations on purpose).
NOT_SCANNED = ("tests/unit/test_findings_catalogue.py",)
SKIPPED_DIRS = {"__pycache__", ".git", ".venv", ".hypothesis", ".pytest_cache", "build"}


def _scanned_texts():
    """(relative path, text) of every UTF-8 file under ``SCANNED`` outside ``NOT_SCANNED``."""
    for top in SCANNED:
        base = ROOT / top
        paths = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in paths:
            rel = path.relative_to(ROOT).as_posix()
            if SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts[:-1]):
                continue
            if any(fnmatch.fnmatch(rel, pattern) for pattern in NOT_SCANNED):
                continue
            try:
                yield rel, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:  # binary fixtures (config space dumps) hold no citations
                continue


def test_no_kb_or_findings_text_cites_the_private_research_notes():
    for rel, text in documents().items():
        assert not PRIVATE_NOTE_CITATION.search(text), rel


def test_no_code_script_test_fixture_or_doc_cites_the_private_research_notes():
    scanned, cited = 0, []
    for rel, text in _scanned_texts():
        scanned += 1
        for n, line in enumerate(text.splitlines(), 1):
            if PRIVATE_NOTE_CITATION.search(line):
                cited.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert scanned > 500, scanned  # the walk really reached the tree
    hint = "cite the public source (spec section, Linux file, URL, docs/*.md):\n"
    assert cited == [], hint + "\n".join(cited)


@pytest.mark.parametrize(
    "text",
    ["see diagnostics-kb 0.1", "perf-anchors 2.4", "style-anchors 16", "peers.md sec. 3", "pci_regs.h [R1]"],
)
def test_the_citation_pattern_catches_each_note(text):
    assert PRIVATE_NOTE_CITATION.search(text)
