"""What a new user meets first: options that contradict each other, names that must work, bounded errors.

Each contradiction is refused with one line on stderr naming both options, exit 2, no traceback and
nothing written; each name the help or the README offers works; every error line stays short
however long the value it echoes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gdrdiag
from gdrdiag.cli import app
from gdrdiag.cli.report_files import load_report
from gdrdiag.model.report import Report
from gdrdiag.node_record import record_line

from ..conftest import FIXTURES

runner = CliRunner()
GOOD_REPORT = str(FIXTURES / "reports" / "baremetal_hgx.json")
PEER_REPORT = str(FIXTURES / "reports" / "peer_h100x2.json")
ROOT = Path(__file__).resolve().parents[2]


def _refused(args: list[str], *names: str, folder: Path | None = None) -> None:
    before = sorted(p.name for p in folder.iterdir()) if folder is not None else None
    r = runner.invoke(app, args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, (args, r.exit_code, r.stdout[-300:], r.stderr[-300:])
    assert len(lines) == 1 and "Traceback" not in r.output, r.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    if folder is not None:
        assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.parametrize("level", ["--quick", "--full"])
def test_a_saved_report_is_not_measured_again_so_quick_and_full_are_refused(tmp_path, level):
    _refused(
        ["report", "--from-report", GOOD_REPORT, level, "-o", str(tmp_path / "r.json")],
        "--from-report",
        level,
        folder=tmp_path,
    )


def test_peer_bench_all_sizes_with_sizes_is_refused():
    _refused(["peer-bench", "-a", "--sizes", "4K,1M"], "--all-sizes", "--sizes")


def test_loop_cost_never_opens_the_provider_it_is_given(tmp_path):
    # The loop-cost run builds its own soft and null providers (bench/mr_loop_cost.py); --provider is unused.
    _refused(["mr-bench", "--loop-cost", "--provider", "pyverbs"], "--loop-cost", "--provider")
    _refused(["mr-bench", "mr_loop_cost", "--provider", "soft"], "--loop-cost", "--provider")


@pytest.mark.parametrize(
    "command, selector",
    [
        ("copy-bench", "copy_h2d"),
        ("gather-bench", "gather_warp*"),
        ("peer-bench", "peer_ce"),
        ("mr-bench", "mr_loop"),
    ],
)
def test_list_with_case_selectors_lists_only_the_selected_cases(command, selector):
    r = runner.invoke(app, ["--json", command, "--list", selector])
    assert r.exit_code == 0, r.stderr
    keys = [row["key"] for row in json.loads(r.stdout)]
    everything = [row["key"] for row in json.loads(runner.invoke(app, ["--json", command, "--list"]).stdout)]
    pattern = selector.rstrip("*")
    assert keys and set(keys) < set(everything)
    assert all(k.startswith(pattern) for k in keys)
    text = runner.invoke(app, [command, "--list", selector]).stdout
    assert all(k in text for k in keys) and not any(k in text.split() for k in set(everything) - set(keys))


def test_list_with_a_selector_that_matches_nothing_is_refused():
    _refused(["copy-bench", "--list", "no_such_case"], "no_such_case")


@pytest.mark.parametrize("name", ["peer-bench", "peer"])
def test_show_bench_peer_bench_shows_the_peer_results(name):
    r = runner.invoke(app, ["show", "--bench", name, PEER_REPORT])
    assert r.exit_code == 0, r.stderr
    assert "== peer-bench:" in r.stdout and "GPU<->GPU" in r.stdout
    r = runner.invoke(app, ["--json", "show", "--bench", name, PEER_REPORT])
    report = Report.from_json(r.stdout)
    assert report.results and {x.bench.value for x in report.results} == {"peer"}


def test_show_bench_names_only_benches_it_accepts():
    r = runner.invoke(app, ["show", "--bench", "nope", PEER_REPORT])
    assert r.exit_code == 2
    for offered in re.search(r"use one of (.*)", r.stderr).group(1).split(", "):
        name = offered.strip()
        assert runner.invoke(app, ["show", "--bench", name, PEER_REPORT]).exit_code == 0, name


@pytest.mark.parametrize("where", ["before", "after"])
def test_report_json_without_an_output_file_prints_the_report(tmp_path, where):
    args = ["report", "--from-report", GOOD_REPORT]
    args = ["--json", *args] if where == "before" else [*args, "--json"]
    r = runner.invoke(app, args)
    assert r.exit_code in (0, 1), r.stderr
    report = Report.from_json(r.stdout)
    assert report.results == load_report(Path(GOOD_REPORT)).results


def test_report_with_no_output_at_all_says_json_is_one_way():
    _refused(["report", "--from-report", GOOD_REPORT], "-o FILE", "--json")


def test_no_text_names_a_gdrdiag_version_other_than_this_one():
    r = runner.invoke(app, ["diagnose", "--all-rows", "--wide", GOOD_REPORT])
    assert "gdrdiag 0.2" not in r.stdout
    version = gdrdiag.__version__
    files = [
        *ROOT.joinpath("gdrdiag").rglob("*.py"),
        *ROOT.joinpath("docs").rglob("*.md"),
        ROOT / "README.md",
    ]
    files += list(ROOT.joinpath("tests", "fixtures").rglob("README.md"))
    for path in files:
        for found in re.findall(r"gdrdiag v?(\d+\.\d+(?:\.\d+)?)\b", path.read_text(encoding="utf-8")):
            assert version.startswith(found), (path, found, version)


def _records(folder: Path) -> Path:
    good = record_line(load_report(Path(GOOD_REPORT)), "good", 0)
    records = folder / "records"
    records.mkdir()
    for host in ("a", "b", "c"):
        (records / f"{host}.json").write_text(good.replace('"host":"good"', f'"host":"{host}"', 1) + "\n")
    return records


def test_fleet_says_what_it_wrote(tmp_path):
    records = _records(tmp_path)
    html, prom = tmp_path / "fleet.html", tmp_path / "fleet.prom"
    r = runner.invoke(app, ["fleet", str(records), "--html", str(html), "--prometheus", str(prom)])
    assert r.exit_code in (0, 1), r.stderr
    assert html.exists() and prom.exists()
    assert f"wrote {html}, {prom}" in " ".join(r.stdout.split())  # text output wraps at $COLUMNS
    r = runner.invoke(app, ["fleet", str(records)])
    assert "wrote" not in r.stdout


BOGUS = "z" * 500


@pytest.mark.parametrize(
    "args",
    [
        ["copy-bench", "--sizes", BOGUS],
        ["show", "--bench", BOGUS, GOOD_REPORT],
        ["show", f"/tmp/{BOGUS}.json"],
        ["mr-bench", "--memory", BOGUS],
        ["copy-bench", "-n", BOGUS],
        [BOGUS],
        ["inspect", f"--{BOGUS}"],
    ],
    ids=[
        "bad size",
        "bad bench",
        "long path",
        "bad memory",
        "not a number",
        "no such command",
        "no such option",
    ],
)
def test_an_error_echoing_a_500_character_value_stays_one_short_line(args):
    r = runner.invoke(app, args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.stderr
    assert len(lines[0]) <= 250 and "Traceback" not in r.output, (len(lines[0]), lines[0])
