"""Every JSON document gdrdiag writes, produced through the CLI and validated against its schema file.

The schema files live in docs/schemas (built from the model's types by scripts/make_docs.py;
tests/unit/test_json_schemas.py keeps them equal to what the code writes). Here the real outputs
are checked against them: a key the schema does not list, a missing key, a wrong type or a word
outside an enum (status, severity, provider, level) fails.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

from ..conftest import FIXTURES

# The lab guest runs `pytest -m rdma` over the whole tree without the dev extra: skip there.
jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
REPORTS = FIXTURES / "reports"
BUNDLE = FIXTURES / "machines" / "c_baremetal_hgx_h100_cx7"
IMPORTED = FIXTURES / "imported"
runner = CliRunner()


@lru_cache(maxsize=None)
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "docs" / "schemas" / f"{name}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def assert_valid(name: str, data: object) -> None:
    """``data`` matches docs/schemas/NAME.schema.json; the first errors are named when not."""
    errors = sorted(_validator(name).iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors[:5]]


def _json(args: list[str], codes=(0,)) -> object:
    res = runner.invoke(app, args)
    assert res.exit_code in codes, res.output
    return json.loads(res.stdout)


def test_report_written_by_report_and_show(tmp_path):
    out = tmp_path / "r.json"
    printed = _json(
        ["--json", "report", "--from-report", str(REPORTS / "vm_guest_kvm.json"), "-o", str(out)], (1,)
    )
    assert_valid("report-v2", printed)
    assert_valid("report-v2", json.loads(out.read_text()))
    assert_valid("report-v2", _json(["show", str(REPORTS / "baremetal_hgx.json"), "--json"]))


def test_bench_reports_with_and_without_numbers(tmp_path):
    out = tmp_path / "mr.json"
    mr = [
        "mr-bench",
        "--provider",
        "soft",
        "--memory",
        "pageable",
        "-n",
        "200",
        "--ro-ab",
        "--json-out",
        str(out),
    ]
    printed = _json(["--json", *mr])
    assert_valid("report-v2", printed)
    assert_valid("report-v2", json.loads(out.read_text()))
    assert {r["provider"] for r in printed["results"]} == {"soft"}
    copy = _json(["--json", "copy-bench", "--quick"], (0, 1))  # no GPU here: WAIVED; with one: numbers
    assert_valid("report-v2", copy)


def test_inspect_of_a_bundle_and_of_this_machine():
    bundle = _json(["inspect", "--bundle", str(BUNDLE), "--json"], (0, 1))
    assert_valid("inspect", bundle)
    assert bundle["machine"]["gpus"]
    assert_valid("inspect", _json(["inspect", "--json"], (0, 1)))


def test_inspect_check():
    assert_valid("inspect-check", _json(["inspect", "--check", "--bundle", str(BUNDLE), "--json"], (0, 1)))


def test_diagnose():
    data = _json(["diagnose", str(REPORTS / "vm_guest_kvm.json"), "--json"], (1,))
    assert_valid("diagnose", data)
    assert {f["severity"] for f in data["findings"]} >= {"FAIL", "WARN", "INFO"}


def test_compare():
    data = _json(
        ["compare", str(REPORTS / "baremetal_hgx.json"), str(REPORTS / "vm_guest_kvm.json"), "--json"],
        codes=(1,),  # the VM's Report has FAIL findings
    )
    assert_valid("compare", data)
    assert data["cases"] and data["machine"]


def test_collect(tmp_path):
    data = _json(["collect", "-o", str(tmp_path / "node.tar.gz"), "--json"])
    assert_valid("collect", data)


def test_import(tmp_path):
    out = tmp_path / "imported.json"
    files = [str(IMPORTED / "ib_write_bw_host.txt"), str(IMPORTED / "nvbandwidth.json")]
    printed = _json(["import", *files, "--bundle", str(BUNDLE), "-o", str(out), "--json"], (0, 1))
    assert_valid("import", printed)
    assert_valid("import", json.loads(out.read_text()))
    assert_valid("report-v2", printed)  # an import is a Report


def test_node_records_and_fleet(tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    lines = tmp_path / "nodes.jsonl"
    for host, fixture in (("n1", "baremetal_hgx"), ("n2", "baremetal_hgx"), ("n3", "baremetal_hgx")):
        args = ["report", "--from-report", str(REPORTS / f"{fixture}.json"), "--host", host]
        res = runner.invoke(app, [*args, "--record", str(records / f"{host}.json"), "--jsonl", str(lines)])
        assert res.exit_code == 0, res.output
    for path in sorted(records.glob("*.json")):
        assert_valid("node-record", json.loads(path.read_text()))
    for line in lines.read_text().splitlines():
        assert_valid("node-record", json.loads(line))
    data = _json(["fleet", str(records), "--json"], (0, 1))
    assert_valid("fleet", data)
    assert [g["nodes"] for g in data["groups"]] == [3]


@pytest.mark.parametrize(
    "name,data,path",
    [
        ("diagnose", {"report": "r.json", "findings": [{"code": "X", "severity": "FATAL"}]}, "severity"),
        ("collect", {"path": "b", "files": 1, "bytes": 2, "privileged": True, "gpus": 0}, "nics"),
        ("inspect-check", {"ready": "yes"}, "ready"),
    ],
)
def test_the_schemas_refuse_what_gdrdiag_never_writes(name, data, path):
    errors = list(_validator(name).iter_errors(data))
    said = [f"{list(e.absolute_path)} {e.message}" for e in errors]
    said += [c.message for e in errors for c in e.context]
    assert any(path in text for text in said), said
