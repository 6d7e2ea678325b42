"""Statements in README/docs that the code decides: checked against the code so they stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gdrdiag.bench import copy_config, gather_layout, mr_config

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COMMAND = re.compile(
    r"\bgdrdiag (inspect|collect|copy-bench|gather-bench|mr-bench|report|diagnose|compare|import|fleet)\b"
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_with_commands_says_how_to_run_them(page):
    text = page.read_text()
    if COMMAND.search(text):
        assert ". .venv/bin/activate" in text and ".venv/bin/gdrdiag" in text


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_assumes_sudo(page):
    assert not re.search(r"\bsudo\s+(gdrdiag|bash|python|\.venv)", page.read_text())


def test_documented_poison_bytes_are_the_codes():
    measurement = (ROOT / "docs/measurement.md").read_text()
    m = re.search(r"copy-bench and gather-bench: (0x[0-9A-F]{2});\s+mr-bench: (0x[0-9A-F]{2})", measurement)
    assert m, "docs/measurement.md no longer names the poison bytes"
    assert int(m.group(1), 16) == copy_config.POISON == gather_layout.POISON
    assert int(m.group(2), 16) == mr_config.POISON
    for page, constant in (("mr-bench.md", mr_config.POISON), ("gather-bench.md", gather_layout.POISON)):
        named = re.findall(r"poisoned \((0x[0-9A-F]{2})\)", (ROOT / "docs" / page).read_text())
        assert named and {int(b, 16) for b in named} == {constant}, page


def test_documented_mr_seeds_are_the_codes():
    import inspect

    from gdrdiag.bench import mr_setup

    measurement = (ROOT / "docs/measurement.md").read_text()
    assert "(0x5A + 17 x the QP's index)" in measurement
    assert "seed=0x5A + 17 * i" in inspect.getsource(mr_setup.fill_sources)


def test_the_fixtures_inspect_md_names_exist_and_none_is_called_pending():
    fixtures = (ROOT / "docs/inspect.md").read_text().split("## Fixtures", 1)[1]
    named = set(re.findall(r"`([a-z]_[a-z0-9_]+)`", fixtures))
    assert named, "docs/inspect.md no longer names its fixtures"
    for name in named:
        assert (ROOT / "tests/fixtures/machines" / name).is_dir(), name
    assert "until" not in fixtures


def test_no_code_comment_cites_an_issue_number():
    """Comments and docstrings cite a spec, a public source or the repository's own docs: an issue
    number points at nothing a reader of the repository can open."""
    root = Path(__file__).resolve().parents[2]
    cite = re.compile(r"\bissues? #?[0-9]+\b", re.IGNORECASE)
    skip = ("tests/real/", "tests/cases/", "tests/fixtures/")
    found = []
    for pattern in ("gdrdiag/**/*.py", "tests/**/*.py", "scripts/**/*.py", "scripts/**/*.sh", ".ci/*"):
        for path in root.glob(pattern):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(skip) or not path.is_file():
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if cite.search(line) and "github.com" not in line:
                    found.append(f"{rel}:{n}: {line.strip()[:80]}")
    assert found == []
