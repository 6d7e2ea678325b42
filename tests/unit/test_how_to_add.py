"""The walks of docs/architecture.md ("How to add a case, an importer, a cause rule"), end to end.

A cause rule: one function and one catalogue entry make a finding that diagnose ranks and that
carries its KB reference. An importer: every module of gdrdiag/importers/ is wired into detection, and
every format is detected from a saved raw output. A bench case's registry entry is checked by
tests/cli/test_case_selection.py (every listed case runs or says why).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gdrdiag import diagnose as diagnose_pkg
from gdrdiag.diagnose import catalogue as catalogue_mod
from gdrdiag.diagnose._common import finding
from gdrdiag.diagnose.catalogue_entry import E
from gdrdiag.model.findings import Severity
from gdrdiag.model.report import Report

ROOT = Path(__file__).resolve().parents[2]


def test_a_cause_rule_is_one_function_and_one_catalogue_entry(monkeypatch):
    entry = E(
        "CAUSE-WALK-EXAMPLE",
        "causes",
        "WARN",
        "a walk-through's example",
        "shows the two places a rule lives",
        "nothing to fix",
        "https://docs.nvidia.com/cuda/",
    )
    monkeypatch.setattr(catalogue_mod, "_entries", lambda real=catalogue_mod._entries: (*real(), entry))

    def walk_rule(report, ctx):  # the rule: facts in, findings out
        if ctx.machine is not None:
            yield finding(
                "CAUSE-WALK-EXAMPLE", Severity.WARN, "an example", ["machine = present"], "none", ""
            )

    monkeypatch.setattr(diagnose_pkg, "RULES", [*diagnose_pkg.RULES, walk_rule])
    report = Report.from_json((ROOT / "tests/fixtures/reports/baremetal_hgx.json").read_text())
    found = [f for f in diagnose_pkg.diagnose(report).findings if f.code == "CAUSE-WALK-EXAMPLE"]
    assert len(found) == 1
    assert found[0].reference.startswith("docs/kb/causes.md#cause-walk-example")


IMPORTER_MODULES = sorted(
    p.stem for p in (ROOT / "gdrdiag" / "importers").glob("*.py") if p.stem not in ("__init__", "common")
)


@pytest.mark.parametrize("module", IMPORTER_MODULES)
def test_every_importer_module_is_wired_into_detection(module):
    init = (ROOT / "gdrdiag" / "importers" / "__init__.py").read_text()
    assert f"{module}." in init, f"importers/__init__.py does not call {module}"


def _saved_outputs():
    for folder in (ROOT / "tests" / "fixtures" / "imported", ROOT / "tests" / "real"):
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix in (".txt", ".json", ".log", ".csv"):
                yield path


def test_every_format_is_detected_from_a_saved_raw_output():
    """A format no saved output exercises is an importer without its fixture."""
    from gdrdiag.errors import UserInputError
    from gdrdiag.importers import FORMATS, _detect

    seen = set()
    for path in _saved_outputs():
        try:
            seen.add(_detect(path.read_text(errors="replace"))[0])
        except UserInputError:
            continue
    assert seen >= set(FORMATS), set(FORMATS) - seen
