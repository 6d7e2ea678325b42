"""``-f/--force`` on every command that writes a file (``-f`` existed only on collect and report).

Each output option of each command: an existing file is refused without the flag (one line on stderr,
exit 2, the file keeps its bytes) and replaced with ``-f`` (and with ``--force``). ``--jsonl`` (appended
to) and ``--prometheus`` (a node_exporter textfile, replaced on every run) are outside the rule by
design (docs/user-guide.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli.common import OUTPUT_FLAGS

from ..conftest import FIXTURES
from .test_cli_contract import COMMANDS

REPORT = str(FIXTURES / "reports" / "baremetal_hgx.json")
PERFTEST = str(FIXTURES / "imported" / "ib_write_bw_host.txt")
OLD = "keep me\n"


def _fleet_records(tmp_path: Path) -> str:
    """A folder with two node records (written by ``report --record``) for ``fleet``."""
    from gdrdiag.cli import app

    folder = tmp_path / "records"
    folder.mkdir()
    for host in ("n1", "n2"):
        res = CliRunner().invoke(
            app, ["report", "--from-report", REPORT, "--host", host, "--record", f"{folder}/{host}.json"]
        )
        assert res.exit_code in (0, 1), res.output
    return str(folder)


# command, the option that writes, and the rest of a valid invocation ({out} is the output file).
CASES = [
    ("collect", ["collect", "-o", "{out}"]),
    ("report -o", ["report", "--from-report", REPORT, "-o", "{out}"]),
    ("report --html", ["report", "--from-report", REPORT, "-o", "{tmp}/r.json", "--html", "{out}"]),
    ("report --record", ["report", "--from-report", REPORT, "--host", "n1", "--record", "{out}"]),
    ("import -o", ["import", PERFTEST, "-o", "{out}"]),
    ("compare --html", ["compare", REPORT, REPORT, "--html", "{out}"]),
    ("fleet --html", ["fleet", "{records}", "--html", "{out}"]),
    ("copy-bench --json-out", ["copy-bench", "--json-out", "{out}"]),
    ("gather-bench --json-out", ["gather-bench", "--json-out", "{out}"]),
    ("peer-bench --json-out", ["peer-bench", "--json-out", "{out}"]),
    (
        "mr-bench --json-out",
        [
            "mr-bench",
            "--provider",
            "soft",
            "--memory",
            "pageable",
            "-n",
            "20",
            "--repeats",
            "1",
            "--json-out",
            "{out}",
        ],
    ),
]


def test_every_command_that_writes_a_file_takes_dash_f_and_force():
    writers = {name for name, cmd in COMMANDS.items() if {p.name for p in cmd.params} & set(OUTPUT_FLAGS)}
    assert writers == {"collect", "report", "import", "compare", "fleet", "copy-bench", "gather-bench",
                       "peer-bench", "mr-bench"}  # fmt: skip
    for name in writers:
        opts = {o for p in COMMANDS[name].params for o in getattr(p, "opts", ())}
        assert {"-f", "--force"} <= opts, name
    assert {c.split()[0] for c, _ in CASES} == writers  # every writer is exercised below


@pytest.mark.parametrize("case, argv", CASES, ids=[c for c, _ in CASES])
def test_an_existing_output_is_refused_without_force_and_replaced_with_it(tmp_path, case, argv):
    from gdrdiag.cli import app

    out = tmp_path / "existing.out"
    out.write_text(OLD)
    records = _fleet_records(tmp_path) if case.startswith("fleet") else ""
    args = [
        a.replace("{out}", str(out)).replace("{tmp}", str(tmp_path)).replace("{records}", records)
        for a in argv
    ]
    refused = CliRunner().invoke(app, args)
    err = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2, refused.output
    assert len(err) == 1 and "exists; use -f/--force to overwrite" in err[0], refused.stderr
    assert "Traceback" not in refused.output and out.read_text() == OLD
    for flag in ("-f", "--force"):
        out.write_text(OLD)
        forced = CliRunner().invoke(app, [*args, flag])
        assert forced.exit_code in (0, 1), (flag, forced.output)  # 1: a FAIL finding or nothing measured
        assert "Traceback" not in forced.output
        assert out.read_bytes() != OLD.encode() and out.stat().st_size > 0, flag
        if case == "report --html":
            (tmp_path / "r.json").unlink()  # the -o beside it is not what this case forces
