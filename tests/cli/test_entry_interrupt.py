"""Ctrl-C while the CLI is still being imported: one line and exit 130, not a traceback."""

from __future__ import annotations

import importlib.abc
import sys

import pytest

from gdrdiag import entry


class _InterruptingFinder(importlib.abc.MetaPathFinder):
    """Behaves like a Ctrl-C arriving while ``gdrdiag.cli`` is imported."""

    def find_spec(self, name, path=None, target=None):  # noqa: ARG002 - the finder protocol
        if name == "gdrdiag.cli":
            raise KeyboardInterrupt
        return None


def test_interrupt_during_the_cli_import_is_one_line_and_exit_130(monkeypatch, capsys):
    # An interrupted run ignores and blocks SIGINT before it exits (entry's doc): both replaced
    # here, as this is the test process.
    monkeypatch.setattr(entry.signal, "signal", lambda *a: None)
    monkeypatch.setattr(entry.signal, "pthread_sigmask", lambda *a: None)
    monkeypatch.delitem(sys.modules, "gdrdiag.cli", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_InterruptingFinder(), *sys.meta_path])
    with pytest.raises(SystemExit) as exc:
        entry.main()
    assert exc.value.code == 130
    err = capsys.readouterr().err
    assert err == "gdrdiag: interrupted\n"


def test_the_console_script_goes_through_the_entry_module():
    from pathlib import Path

    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["gdrdiag"] == "gdrdiag.entry:main"


def test_running_from_source_without_the_dependencies_is_one_line(tmp_path):
    """`PYTHONPATH=. python3 -m gdrdiag` without typer was a traceback."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    blocker = tmp_path / "typer.py"
    blocker.write_text("raise ModuleNotFoundError(\"No module named 'typer'\", name='typer')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}"}
    res = subprocess.run(
        [sys.executable, "-m", "gdrdiag", "inspect"], capture_output=True, text=True, env=env, timeout=60
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "'typer'" in res.stderr


def test_a_ctrl_c_while_a_finished_run_leaves_keeps_its_exit_code(monkeypatch, capsys):
    """SIGINT pending when the exit ignores it: ``signal.signal`` raises KeyboardInterrupt first.

    CPython runs pending signal handlers before it swaps one (Modules/signalmodule.c), so a
    Ctrl-C in the last instant of a finished run surfaced there as a traceback and a death by
    SIGINT. The run had finished: its exit code stands and nothing is said.
    """
    import gdrdiag.cli

    calls = []

    def signal_once_interrupted(*args):
        calls.append(args)
        if len(calls) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(entry.signal, "signal", signal_once_interrupted)
    monkeypatch.setattr(entry.signal, "pthread_sigmask", lambda *a: None)
    monkeypatch.setattr(gdrdiag.cli, "main", lambda: sys.exit(1))
    with pytest.raises(SystemExit) as exc:
        entry.main()
    assert exc.value.code == 1 and len(calls) == 2
    assert capsys.readouterr().err == ""
