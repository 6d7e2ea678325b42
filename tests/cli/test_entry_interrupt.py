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
