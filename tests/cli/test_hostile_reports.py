"""Hostile Reports and what reaches the terminal: escape sequences, lone surrogates,
mathtext in plot labels. Every string from a Report, a bundle or a peer goes through
``render.sanitize.terminal_safe`` before it is printed."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.render.sanitize import one_line, terminal_safe

from ..conftest import FIXTURES

REPORT = FIXTURES / "reports" / "baremetal_hgx.json"
# Clear screen + home, set the window title (OSC 0), write the clipboard (OSC 52), a C1 CSI, a DCS
# string, bell, backspace, carriage return, and a right-to-left override.
NASTY = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]52;c;ZWNobyBwd25lZA==\x1b\\\x9b31m\x90qdcs\x9c\x07\x08\rok\u202e"
FORBIDDEN = ["\x1b", "\x9b", "\x9c", "\x90", "\x07", "\x08", "\r", "\u202e"]


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("plain text\twith tab\nand newline", "plain text\twith tab\nand newline"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("a\x1b]0;title\x07b", "ab"),
        ("a\x1b]52;c;Zm9v\x1b\\b", "ab"),
        ("a\x9b2Jb", "ab"),
        ("a\x1bcb", "ab"),  # RIS: full terminal reset
        ("x\ud800y", "x\ufffdy"),
        ("héllo → ✓", "héllo → ✓"),
    ],
)
def test_terminal_safe(raw, clean):
    assert terminal_safe(raw) == clean
    terminal_safe(raw).encode("utf-8")  # always encodable


def test_one_line_is_one_line_and_bounded():
    assert one_line("a\nb\r\nc" + "x" * 1000, limit=50).count("\n") == 0
    assert len(one_line("x" * 1000, limit=50)) == 50


def _hostile_report(tmp_path, name="hostile.json"):
    data = json.loads(REPORT.read_text())
    data["command"] = NASTY
    data["machine"]["host"]["hostname"] = "node" + NASTY
    data["notes"] = [NASTY, "lone \ud800 surrogate"]
    for r in data["results"][:3]:
        r["key"] = r["key"] + "_$\\frac{1}{$" + NASTY
    for f in data["findings"][:2]:
        f["title"] = f["title"] + NASTY
        f["evidence"] = [NASTY]
    path = tmp_path / name
    path.write_text(json.dumps(data))  # json escapes: the file itself is plain ASCII
    return path


def _assert_clean(result):
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    for ch in FORBIDDEN:
        assert ch not in result.stdout, repr(ch)
        assert ch not in result.stderr, repr(ch)


def test_diagnose_prints_nothing_raw(tmp_path):
    r = CliRunner().invoke(app, ["diagnose", str(_hostile_report(tmp_path))])
    assert r.exit_code in (0, 1), r.stderr
    _assert_clean(r)


def test_compare_and_html_with_mathtext_labels(tmp_path):
    pytest.importorskip("matplotlib")
    a = _hostile_report(tmp_path, "a.json")
    b = _hostile_report(tmp_path, "b.json")
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "--all", "--html", str(tmp_path / "c.html")])
    assert r.exit_code == 0, r.stderr
    _assert_clean(r)
    assert (tmp_path / "c.html").read_text(encoding="utf-8").startswith("<!doctype html>")


def test_report_html_from_a_hostile_report(tmp_path):
    pytest.importorskip("matplotlib")
    src = _hostile_report(tmp_path)
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    r = CliRunner().invoke(
        app, ["report", "--from-report", str(src), "-o", str(out), "--html", str(page), "--host", "n1"]
    )
    assert r.exit_code in (0, 1), r.stderr
    _assert_clean(r)
    assert page.exists() and out.exists()


def test_inspect_of_a_bundle_with_escape_sequences(tmp_path):
    root = tmp_path / "b"
    shutil.copytree(FIXTURES / "machines" / "a_dev_firecracker", root, symlinks=True)
    hostname = root / "fs/proc/sys/kernel/hostname"
    hostname.parent.mkdir(parents=True, exist_ok=True)
    hostname.write_text("node" + NASTY + "\n")
    (root / "facts/verbs.json").write_text(json.dumps({"status": "none", "reason": NASTY}))
    r = CliRunner().invoke(app, ["inspect", "--bundle", str(root)])
    assert r.exit_code in (0, 1), r.stderr
    _assert_clean(r)


HOSTILE_JSON = {
    "deeply nested": '{"schema_version": 2, "results": ' + "[" * 50_000 + "]" * 50_000 + "}",
    "5000-digit integer": '{"schema_version": 2, "tool_version": ' + "9" * 5000 + "}",
    "integer beyond 64 bits": REPORT.read_text().replace('"n": 5,', '"n": 1208925819614629174706176,', 1),
    "NaN": '{"schema_version": 2, "tool_version": NaN}',
    "Infinity": '{"schema_version": 2, "tool_version": -Infinity}',
    "unhashable params tag": json.dumps(
        {"schema_version": 2, "results": [{"key": "k", "status": "OK", "params": {"bench": [1]}}]}
    ),
    "not an object": "[1, 2, 3]",
    "binary": "\x00\x01\x02",
}


@pytest.mark.parametrize("case", sorted(HOSTILE_JSON))
def test_hostile_report_files_are_one_line_exit_2(tmp_path, case):
    path = tmp_path / "r.json"
    path.write_text(HOSTILE_JSON[case])
    for args in (["diagnose", str(path)], ["compare", str(path), str(REPORT)]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2, (case, args, r.stderr, r.exception)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_sigterm_while_writing_an_output_file_leaves_no_temporary_file(tmp_path):
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        import gdrdiag.cli.report_files as rf
        os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGTERM)  # the signal arrives mid-write
        rf.write_text_file(Path({str(tmp_path / "out.json")!r}), "x" * 1000)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 143, proc.stderr
    assert os.listdir(tmp_path) == []
