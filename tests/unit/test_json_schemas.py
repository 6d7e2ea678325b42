"""docs/schemas: what the model's types give, valid draft 2020-12, and strict enough to mean something."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gdrdiag.json_schemas import SHAPES, documents
from gdrdiag.model.report import Report

# The lab guest runs `pytest -m rdma` over the whole tree without the dev extra: skip there.
jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures" / "reports"
V1_REPORTS = sorted(REPORTS.glob("*.json"))
V2_REPORTS = sorted((REPORTS / "v2").glob("*.json"))


def _schema(name: str) -> dict:
    return json.loads((ROOT / "docs" / "schemas" / f"{name}.schema.json").read_text())


def _errors(name: str, data: object) -> list[str]:
    """Every error, with the errors under each ``anyOf`` branch (an Optional record's branch)."""
    validator = jsonschema.Draft202012Validator(_schema(name))
    out: list[str] = []

    def walk(errors) -> None:
        for e in errors:
            out.append(f"{list(e.absolute_path)}: {e.message[:160]}")
            walk(e.context)

    walk(validator.iter_errors(data))
    return out


def test_the_schema_files_are_what_the_model_gives():
    on_disk = {
        str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "docs" / "schemas").glob("*.json"))
    }
    built = documents()
    assert sorted(on_disk) == sorted(built)
    for rel, text in built.items():
        assert on_disk[rel] == text, f"{rel} is stale: run python scripts/make_docs.py"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_every_schema_is_a_valid_2020_12_schema_and_documented(shape):
    schema = _schema(shape.name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["required"] and schema["additionalProperties"] is False
    assert f"schemas/{shape.name}.schema.json" in (ROOT / "docs" / "json.md").read_text()


@pytest.mark.parametrize("path", V1_REPORTS + V2_REPORTS, ids=lambda p: p.name)
def test_every_fixture_report_validates_as_gdrdiag_reads_it(path):
    """v1 files as they are upgraded on reading (what show --json prints); v2 files as stored too."""
    loaded = json.loads(Report.from_json(path.read_text()).to_json())
    assert _errors("report-v2", loaded) == []
    if path in V2_REPORTS:
        assert _errors("report-v2", json.loads(path.read_text())) == []


def test_a_v1_file_is_not_a_v2_report():
    assert _errors("report-v2", json.loads(V1_REPORTS[0].read_text()))


def _good() -> dict:
    return json.loads(Report.from_json((REPORTS / "vm_guest_kvm.json").read_text()).to_json())


def _broken(change) -> dict:
    data = copy.deepcopy(_good())
    change(data)
    return data


@pytest.mark.parametrize(
    "what,change,where",
    [
        ("status", lambda d: d["results"][0].update(status="MAYBE"), "status"),
        ("provider", lambda d: d["results"][0].update(provider="magic"), "provider"),
        ("severity", lambda d: d["findings"][0].update(severity="FATAL"), "severity"),
        ("schema version", lambda d: d.update(schema_version=1), "schema_version"),
        ("missing key", lambda d: d["results"][0].pop("stats"), "stats"),
        ("extra key", lambda d: d["machine"]["host"].update(colour="red"), "colour"),
        ("number as text", lambda d: d["results"][0]["stats"].update(median="55"), "median"),
        ("params of no bench", lambda d: d["results"][0]["params"].update(bench="dma"), "params"),
        ("memory kind", lambda d: d["results"][0]["params"].update(memory="hbm"), "params"),
    ],
)
def test_the_report_schema_refuses(what, change, where):
    assert _errors("report-v2", _good()) == []
    errors = _errors("report-v2", _broken(change))
    assert errors and any(where in e for e in errors), (what, errors)
