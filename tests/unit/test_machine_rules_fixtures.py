"""Load a fixture machine once per test session (inspect is pure over the tree)."""

from __future__ import annotations

import functools
from pathlib import Path

MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@functools.lru_cache(maxsize=None)
def machine(name: str):
    from gdrdiag.hw.bundle import open_bundle
    from gdrdiag.inspect.collect import inspect_source

    with open_bundle(str(MACHINES / name)) as src:
        return inspect_source(src)


@functools.lru_cache(maxsize=None)
def findings(name: str):
    from gdrdiag.diagnose import diagnose_machine

    return tuple(diagnose_machine(machine(name)))


def codes(name: str, severity: str | None = None) -> set[str]:
    return {f.code for f in findings(name) if severity is None or f.severity.value == severity}


# ---- tests on every fixture machine -----------------------------------------------------------

import pytest  # noqa: E402

ALL = sorted(p.name for p in MACHINES.iterdir() if (p / "meta.json").exists())


@pytest.mark.parametrize("name", ALL)
def test_machine_round_trips_through_report_json(name):
    from gdrdiag.model.report import Report

    r = Report(machine=machine(name), findings=findings(name))
    assert Report.from_json(r.to_json()) == r


@pytest.mark.parametrize("name", ALL)
def test_findings_are_ranked_and_cite_a_reference(name):
    fs = findings(name)
    ranks = [f.severity.rank for f in fs]
    assert ranks == sorted(ranks)
    assert all(f.reference and f.advice and f.code for f in fs)
