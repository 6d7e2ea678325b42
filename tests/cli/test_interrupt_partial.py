"""Ctrl-C part way through a bench: the results measured before it are written and shown, exit 130."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gdrdiag.bench import mr
from gdrdiag.cli import app

runner = CliRunner()


def _interrupt_second_case(monkeypatch):
    """Let mr-bench's first loopback case run for real, then press Ctrl-C in the second."""
    real = mr._bw_case
    calls = []

    def second_is_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(mr, "_bw_case", second_is_interrupted)
    return calls


def test_mr_bench_keeps_what_was_measured_before_ctrl_c(monkeypatch, tmp_path):
    calls = _interrupt_second_case(monkeypatch)
    out = tmp_path / "partial.json"
    cmd = ["mr-bench", "--quiet", "--provider", "soft", "--memory", "pageable,pinned", "-s", "4K", "-n", "50"]
    res = runner.invoke(app, [*cmd, "--json-out", str(out)])
    assert len(calls) == 2
    assert res.exit_code == 130, res.output
    assert res.stderr.strip() == (
        "gdrdiag: interrupted; the 1 result measured before it was kept (the Report says it is partial)"
    )
    saved = json.loads(out.read_text())
    assert [(r["key"], r["status"], r["verified"]) for r in saved["results"]] == [
        ("rdma_write_pageable_mr", "OK", True)
    ]
    assert any(n.startswith("interrupted by Ctrl-C after 1 result:") for n in saved["notes"])
    assert "rdma_write" in res.stdout or "pageable" in res.stdout  # the table of what was measured


def test_an_interrupt_before_any_result_still_exits_130_with_an_empty_partial_report(monkeypatch, tmp_path):
    def at_once(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mr, "_bw_case", at_once)
    out = tmp_path / "empty.json"
    res = runner.invoke(
        app,
        [
            "--json",
            "mr-bench",
            "--quiet",
            "--provider",
            "soft",
            "--memory",
            "pageable",
            "--json-out",
            str(out),
        ],
    )
    assert res.exit_code == 130
    assert json.loads(res.stdout)["results"] == []
    assert "interrupted by Ctrl-C after 0 results" in " ".join(json.loads(out.read_text())["notes"])


def test_report_writes_a_partial_report_when_interrupted(monkeypatch, tmp_path):
    from gdrdiag.bench.runner import run_case
    from gdrdiag.cli import report_cmd
    from gdrdiag.errors import NotSupported

    def first(profile):  # a bench whose one case is WAIVED here, through the runner as real ones are
        def waived():
            raise NotSupported("not on this machine")

        return run_case("first_case", waived)

    def second(profile):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_cmd, "PROFILE_BENCHES", (("first", first), ("second", second)))
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["report", "--quiet", "--no-rdma", "-o", str(out)])
    assert res.exit_code == 130, res.output
    saved = json.loads(out.read_text())
    assert [(r["key"], r["status"]) for r in saved["results"]] == [("first_case", "WAIVED")]
    assert saved["machine"] is not None
    # a WAIVED case is kept, but not counted as a measured result
    assert any(
        n.startswith("interrupted by Ctrl-C after 0 measured results and 1 WAIVED case:")
        for n in saved["notes"]
    )


def test_ctrl_c_during_a_size_sweep_keeps_the_sizes_already_measured(monkeypatch, tmp_path):
    """`-a` interrupted at the 4th size kept only the WAIVED cases, none of the sizes."""
    real = mr._measure_size
    calls = []

    def fourth_is_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(mr, "_measure_size", fourth_is_interrupted)
    out = tmp_path / "sweep.json"
    cmd = [
        "mr-bench",
        "--quiet",
        "--provider",
        "soft",
        "--memory",
        "pageable",
        "-a",
        "-n",
        "20",
        "--repeats",
        "1",
    ]
    res = runner.invoke(app, [*cmd, "--json-out", str(out)])
    assert res.exit_code == 130, res.output
    saved = json.loads(out.read_text())["results"]
    assert [(r["status"], r["params"]["size_bytes"]) for r in saved] == [("OK", 2), ("OK", 4), ("OK", 8)]
    assert "every case WAIVED" not in res.output
    assert "the 3 results measured before it were kept" in res.stderr
