"""No ``None`` in what a user reads (``pf_bdf = None`` in diagnose's evidence, ``record = 'None'``).

A Report's optional fields are None where a fact is unknown (docs/architecture.md). Every fixture
Report and captured machine goes through diagnose and the text renderers as it is, then once per
optional field that it holds a value for, with that field set to None wherever it occurs (the way a
machine that could not read it would save it), and once with every result failed without a reason.
No finding's title, evidence, advice, counter-evidence or next step, and no line of ``show``, the
HTML page or a bench's verdict block, may hold the word ``None``. (Rendering a whole Report is slow,
so the renderers get one variant per class, every optional field of that class set to None at once;
machine facts are rendered by the machine walk below, per field.)
"""

from __future__ import annotations

import dataclasses
import functools
import re
import typing
from pathlib import Path
from typing import Iterable, Iterator

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.diagnose.machine import diagnose_machine
from gdrdiag.model.findings import Finding
from gdrdiag.model.report import Report
from gdrdiag.model.results import Status

from ..conftest import FIXTURES
from .test_machine_rules_fixtures import ALL as MACHINES
from .test_machine_rules_fixtures import machine

NONE_WORD = re.compile(r"\bNone\b")
REPORTS = sorted((FIXTURES / "reports").rglob("*.json"))
Site = tuple[type, str]  # (a model dataclass, one of its Optional fields)


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def _optional(tp: object) -> bool:
    return typing.get_origin(tp) is typing.Union and type(None) in typing.get_args(tp)


def _sites(obj: object, out: set[Site]) -> set[Site]:
    """Every (class, Optional field) that holds a value somewhere in ``obj``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.init and value is not None and _optional(_hints(type(obj))[f.name]):
                out.add((type(obj), f.name))
            _sites(value, out)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _sites(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _sites(x, out)
    return out


@functools.lru_cache(maxsize=None)
def _reachable(cls: type) -> frozenset[type]:
    """Model classes that can occur inside a ``cls`` (from its type hints), ``cls`` included."""
    found = {cls}
    todo = list(_hints(cls).values())
    while todo:
        tp = todo.pop()
        if isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp not in found:
            found |= {tp} if tp is cls else _reachable(tp)
        todo.extend(typing.get_args(tp))
    return frozenset(found)


def _without(obj: object, sites: frozenset[Site]) -> object:
    """``obj`` with the fields ``sites`` set to None wherever they occur (the rest shared, not copied)."""
    if isinstance(obj, tuple):
        new_items = tuple(_without(x, sites) for x in obj)
        return obj if all(a is b for a, b in zip(new_items, obj, strict=True)) else new_items
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return obj
    if not {cls for cls, _ in sites} & _reachable(type(obj)):
        return obj  # nothing to change below here
    changes = {}
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        value = getattr(obj, f.name)
        if (type(obj), f.name) in sites:
            new = None
        elif isinstance(value, tuple) or dataclasses.is_dataclass(value):
            new = _without(value, sites)
        else:
            continue
        if new is not value:
            changes[f.name] = new
    return dataclasses.replace(obj, **changes) if changes else obj


def _variants(obj: object) -> Iterator[tuple[str, object]]:
    """``obj`` as saved, then once per optional field it holds a value for, that field None."""
    yield "as saved", obj
    for site in sorted(_sites(obj, set()), key=lambda s: (s[0].__name__, s[1])):
        variant = _without(obj, frozenset({site}))
        assert variant is not obj, site  # the field was found and set to None
        yield f"{site[0].__name__}.{site[1]} = None", variant


def _class_variants(report: Report) -> Iterator[tuple[str, Report]]:
    """``report`` once per result class (params, metrics, ...), all its optional fields None at once."""
    by_class: dict[type, set[Site]] = {}
    for site in _sites(report.results, set()):
        by_class.setdefault(site[0], set()).add(site)
    for cls, sites in sorted(by_class.items(), key=lambda kv: kv[0].__name__):
        variant = _without(report, frozenset(sites))
        assert isinstance(variant, Report) and variant is not report, cls
        yield f"every optional field of {cls.__name__} = None", variant


def _finding_texts(findings: Iterable[Finding]) -> Iterator[tuple[str, str]]:
    for f in findings:
        yield f"{f.code} title", f.title
        yield f"{f.code} advice", f.advice
        yield f"{f.code} next_step", f.next_step
        yield from ((f"{f.code} evidence", e) for e in f.evidence)
        yield from ((f"{f.code} against", a) for a in f.against)


def _rendered(report: Report) -> Iterator[tuple[str, str]]:
    """What ``show`` prints, the HTML page (plots left out: they are images) and the verdict blocks."""
    from gdrdiag.diagnose.rdma_rules import ro_pairs
    from gdrdiag.diagnose.verdicts import copy_verdict, gather_verdict, mr_verdict
    from gdrdiag.model.vocabulary import Bench
    from gdrdiag.pathmodel import judge
    from gdrdiag.render import html
    from gdrdiag.render.report_view import ViewInput, render_report_view
    from gdrdiag.render.verdict import render_copy_verdict, render_gather_verdict, render_mr_verdict

    mr = [r for r in report.results if r.bench is Bench.MR]
    pairs = ro_pairs(mr)
    yield (
        "show",
        render_report_view(ViewInput(report=report, label="r.json", benches=tuple(Bench), ro_pairs=pairs)),
    )
    yield "html", html.report_html(report, report.findings)
    yield "mr verdict", render_mr_verdict(mr_verdict(mr, pairs))
    copies = [r for r in report.results if r.bench is Bench.COPY]
    yield "copy verdict", render_copy_verdict(copy_verdict(copies, judge(tuple(copies), report.machine)))
    yield (
        "gather verdict",
        render_gather_verdict(gather_verdict([r for r in report.results if r.bench is Bench.GATHER])),
    )


def _leaks(texts: Iterable[tuple[str, str]], where: str) -> list[str]:
    return [f"{where}: {what}: {line.strip()[:160]}" for what, text in texts for line in text.splitlines()
            if NONE_WORD.search(line)]  # fmt: skip


@pytest.fixture
def no_plots(monkeypatch):
    from gdrdiag.render import html

    monkeypatch.setattr(html, "_plots", lambda report: "")


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: str(p.relative_to(FIXTURES / "reports")))
def test_no_none_in_findings_or_rendered_text_of_a_report(path: Path, no_plots):
    saved = Report.from_json(path.read_text())
    failed = dataclasses.replace(
        saved,
        results=tuple(
            dataclasses.replace(r, status=Status.ERROR, verified=None, reason=None) for r in saved.results
        ),
    )
    leaks: list[str] = []
    for name, variant in [*_variants(saved), ("every result failed, no reason", failed)]:
        assert isinstance(variant, Report)
        leaks += _leaks(_finding_texts(diagnose(variant).findings), name)
    for name, variant in [("as saved", saved), *_class_variants(saved), ("every result failed", failed)]:
        leaks += _leaks(
            _rendered(dataclasses.replace(variant, findings=tuple(diagnose(variant).findings))), name
        )
    assert not leaks, "\n".join(leaks[:20])


@pytest.mark.parametrize("name", MACHINES)
def test_no_none_in_findings_or_inspect_text_of_a_machine(name: str):
    from gdrdiag.render.html_machine import machine_section
    from gdrdiag.render.machine_table import render_inspect, render_peer_matrix

    leaks: list[str] = []
    for what, variant in _variants(machine(name)):
        findings = diagnose_machine(variant)  # type: ignore[arg-type]
        texts = [
            *_finding_texts(findings),
            ("inspect", render_inspect(variant, findings)),  # type: ignore[arg-type]
            ("peer matrix", render_peer_matrix(variant)),  # type: ignore[arg-type]
            ("html", machine_section(variant)),  # type: ignore[arg-type]
        ]
        leaks += _leaks(texts, what)
    assert not leaks, "\n".join(leaks[:20])


def test_a_record_without_its_kind_or_version_says_so_in_words():
    import json

    from gdrdiag.model.serde import SchemaError
    from gdrdiag.node_record import parse_head

    with pytest.raises(SchemaError) as no_kind:
        parse_head(json.dumps({"host": "n1"}))
    with pytest.raises(SchemaError) as no_version:
        parse_head(json.dumps({"record": "gdrdiag-node-record", "host": "n1"}))
    for exc in (no_kind, no_version):
        assert not NONE_WORD.search(str(exc.value)), str(exc.value)
    assert "no record field" in str(no_kind.value) and "no record_version" in str(no_version.value)


def test_fleet_names_a_fact_the_node_lacks_as_absent():
    """A node without a fact its SKU group has (FactDiff.value None): the HTML said ``kernel = None``."""
    from gdrdiag.model.fleet import FactDiff, FleetResult, NodeVerdict
    from gdrdiag.render.fleet_html import fleet_html
    from gdrdiag.render.fleet_table import render_fleet

    node = NodeVerdict(
        host="n1",
        sku="H100 x8",
        level="investigate",
        worst_metric=None,
        worst_z=None,
        worst_ratio=None,
        scores=(),
        differing=(FactDiff(name="kernel", value=None, majority="6.8.0", share=0.9),),
    )
    result = FleetResult(groups=(), nodes=(node,))
    for text in (fleet_html(result), render_fleet(result, width=None)):
        assert "kernel = absent (group: 6.8.0)" in text and not NONE_WORD.search(text), text
