"""Output files follow the umask: a Report holds host names and the kernel command line.

Files used to be made 0644 whatever the umask; a user with umask 077 got world-readable Reports.
Each writer is run under umask 077 (expect 0600) and 002 (expect 0664, as any file the user makes).
"""

from __future__ import annotations

import os
import stat

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

from ..conftest import FIXTURES

REPORT = FIXTURES / "reports" / "baremetal_hgx.json"


@pytest.fixture(params=[0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_report_outputs_and_records_follow_the_umask(tmp_path, umask):
    pytest.importorskip("matplotlib")
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    record, jsonl = tmp_path / "n1.json", tmp_path / "all.jsonl"
    res = CliRunner().invoke(
        app,
        [
            "report",
            "--from-report",
            str(REPORT),
            "--host",
            "n1",
            "-o",
            str(out),
            "--html",
            str(page),
            "--record",
            str(record),
            "--jsonl",
            str(jsonl),
        ],
    )
    assert res.exit_code in (0, 1), res.stderr
    for path in (out, page, record, jsonl):
        assert _mode(path) == 0o666 & ~umask, (path.name, oct(_mode(path)))


def test_fleet_html_follows_the_umask(tmp_path, umask):
    records = tmp_path / "records"
    records.mkdir()
    for host in ("a", "b", "c"):
        res = CliRunner().invoke(
            app,
            ["report", "--from-report", str(REPORT), "--host", host, "--record", f"{records}/{{host}}.json"],
        )
        assert res.exit_code in (0, 1), res.stderr
    page = tmp_path / "fleet.html"
    res = CliRunner().invoke(app, ["fleet", str(records), "--html", str(page)])
    assert res.exit_code in (0, 1), res.stderr
    assert _mode(page) == 0o666 & ~umask
