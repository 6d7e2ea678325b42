"""Help text a new user reads: words are never broken across lines, and no
option shows a Python type such as ``<list[Path]>`` as its metavar."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app

from .test_cli_contract import COMMANDS


def _help(words: list[str], columns: str) -> str:
    res = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": columns})
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.mark.parametrize("columns", ["80", "100"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_never_breaks_a_word(name, columns):
    """`--sweep` printed `patter` / `n` at 80 columns."""
    text = _help(name.split(), columns)
    tokens = set(text.split())
    broken = [
        word
        for p in COMMANDS[name].params
        for word in (getattr(p, "help", None) or "").split()
        if word not in tokens
    ]
    assert broken == [], (name, broken)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_shows_no_python_types(name):
    text = _help(name.split(), "100")
    assert not re.search(r"<(list|tuple|dict|Optional)\[", text), text
