"""The CLI contract, kept fixed: every command, the same battery of bad inputs.

Commands and their options are enumerated from the typer app, so a new command or option is in
the battery without editing this file. Every case must end with exactly one line on stderr,
exit 2, no traceback, and nothing written (the sandbox folder is unchanged, a symlink's target
keeps its bytes). ``test_battery_size`` pins the count, so a change to it is seen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest
import typer.main
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.cli.common import ERROR_LINE_MAX, OUTPUT_FLAGS

from ..conftest import FIXTURES

GOOD_REPORT = str(FIXTURES / "reports" / "baremetal_hgx.json")
# Path parameters a command reads -> how to reach that parameter with everything else valid.
INPUTS = {
    "bundle",
    "report_path",
    "a_path",
    "b_path",
    "from_report",
    "add_results",
    "path",
    "baseline",
    "secret_file",
}
UNUSABLE_DIR_OK = {"path"}  # fleet PATH may be a folder of records
# A valid invocation to which one bad output option is added (the bad value is refused before work).
BASE_FOR_OUTPUT = {"compare": [GOOD_REPORT, GOOD_REPORT], "report": ["--from-report", GOOD_REPORT]}
# Out-of-range and contradictory options, per command (each refused with one line, exit 2).
SEMANTIC = {
    "copy-bench": [
        ["-n", "0"],
        ["--iters", "-3"],
        ["--sizes", "12QB"],
        ["--pin-size", "1Q"],
        ["--list", "no_such"],
    ],
    "gather-bench": [
        ["--requests", "0"],
        ["--slots", "-1"],
        ["--record-bytes", "12QB"],
        ["--kernels", "warp", "gather_warp"],
        ["--request-rate", "0"],
    ],
    "inspect": [["--check", "--expect-gpus", "-1"], ["--strict"], ["--expect-nics", "2"]],
    "report": [
        ["--quick", "--full", "-o", "{sandbox}/r.json"],
        [],
        ["--host", "a/b", "-o", "{sandbox}/r.json"],
        # a saved Report is not measured again: the options that shape a measurement contradict it
        ["--from-report", GOOD_REPORT, "--quick", "-o", "{sandbox}/r.json"],
        ["--from-report", GOOD_REPORT, "--full", "-o", "{sandbox}/r.json"],
        ["--from-report", GOOD_REPORT, "--rdma-size", "1M", "-o", "{sandbox}/r.json"],
    ],
    "peer-bench": [["-a", "--sizes", "4K,1M"]],
    "fleet": [
        ["{sandbox}", "--min-group", "0"],
        ["{sandbox}", "--top", "-1"],
        ["{sandbox}", "--rel-floor", "2"],
    ],
    "mr-bench": [
        ["--size", "12QB"],
        # the two-machine options: timeouts that are not seconds, soft off loopback,
        # contradictions, ports out of range, secrets others can read or all blanks
        ["--server", "--accept-timeout", "nan"],
        ["--server", "--accept-timeout", "inf"],
        ["--server", "--accept-timeout", "-1"],
        ["--connect", "127.0.0.1", "--timeout", "nan"],
        ["--connect", "127.0.0.1", "--timeout", "inf"],
        ["--server", "--timeout", "-1"],
        ["--server", "--connect", "127.0.0.1"],
        ["--provider", "soft", "--connect", "10.0.0.9"],
        ["--provider", "soft", "--server", "--bind", "0.0.0.0"],
        ["--server", "-p", "70000"],
        ["--connect", "127.0.0.1", "-p", "0"],
        ["--server", "--write-with-imm"],
        ["--connect", "127.0.0.1", "--secret-file", "{secret644}"],
        ["--server", "--secret-file", "{blanksecret}"],
        ["--connect", "127.0.0.1", "-a"],
        ["--loop-cost", "--provider", "pyverbs"],
    ],
}
# Report readers also get a Report whose number does not fit a float (OverflowError).
REPORT_INPUTS = {"report_path", "a_path", "b_path", "from_report"}


def _commands() -> dict[str, object]:
    """Every command and sub-command of the app, by its path after ``gdrdiag``."""
    root = typer.main.get_command(app)
    found: dict[str, object] = {}

    def walk(group, prefix: list[str]) -> None:
        ctx = group.make_context("gdrdiag", [], resilient_parsing=True)
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if hasattr(cmd, "list_commands"):
                walk(cmd, prefix + [name])
            else:
                found[" ".join(prefix + [name])] = cmd

    walk(root, [])
    return found


COMMANDS = _commands()


def _annotation(param):
    descriptor = getattr(param, "type_descriptor", None)
    return getattr(descriptor, "annotation", None)


def _long_opts(cmd) -> list[str]:
    return [o for p in cmd.params for o in getattr(p, "opts", ()) if o.startswith("--") and o != "--help"]


def _input_case(name: str, words: list[str], cmd, pname: str, value: str) -> list[str]:
    """Arguments that give ``value`` to the input parameter ``pname`` and valid values elsewhere."""
    param = next(p for p in cmd.params if p.name == pname)
    if param.opts[0].startswith("-"):
        base = []
        if name == "report":
            base = ["-o", "{sandbox}/r.json"] + (
                ["--from-report", GOOD_REPORT] if pname != "from_report" else []
            )
        if name == "fleet":
            base = ["{sandbox}"]
        return [*words, *base, param.opts[0], value]
    args = [value if q.name == pname else GOOD_REPORT for q in cmd.params if q.name in INPUTS]
    return [*words, *args]


def _cases() -> list[tuple[str, str, list[str]]]:
    """(command, case name, arguments) for the whole battery; ``{sandbox}``/``{file}``/... filled later."""
    cases = []
    for name, cmd in COMMANDS.items():
        words = name.split()
        params = {p.name: p for p in cmd.params}
        opts = _long_opts(cmd)
        first = next((o for o in opts if o not in ("--json", "--force")), "--json")
        typo = first[:-2] + first[-1] + first[-2]
        cases.append((name, f"typo {typo}", [*words, typo]))
        cases.append((name, "unknown option", [*words, "--no-such-option-at-all"]))
        if any(getattr(p, "required", False) for p in cmd.params):
            cases.append((name, "missing argument", words))
        ints = [p for p in cmd.params if p.opts[0].startswith("-") and _annotation(p) in (int, Optional[int])]
        if ints:
            cases.append((name, f"not a number {ints[0].opts[0]}", [*words, ints[0].opts[0], "twelve"]))
        for i, extra in enumerate(SEMANTIC.get(name, [])):
            cases.append((name, f"out of range or contradictory #{i}", [*words, *extra]))
        for pname in OUTPUT_FLAGS:
            if pname not in params:
                continue
            flag = params[pname].opts[0]
            base = [*words, *BASE_FOR_OUTPUT.get(name, [])]
            if name == "fleet":
                base.append("{sandbox}")
            for kind, value in (
                ("a directory", "{sandbox}"),
                ("a missing folder", "{sandbox}/no/such/out.json"),
                ("an unwritable place", "/proc/gdrdiag-contract-test.json"),
                ("a symlink to a file", "{link}"),
                ("a name too long", "{sandbox}/" + "n" * 300 + ".json"),
                ("a path too long", "{sandbox}/" + "d/" * 2500 + "x.json"),
            ):
                cases.append((name, f"{flag} is {kind}", [*base, flag, value]))
            if pname not in ("jsonl", "prometheus"):
                cases.append((name, f"{flag} exists, no --force", [*base, flag, "{file}"]))
        for pname in INPUTS & set(params):
            p = params[pname]

            def with_value(value: str, name=name, words=words, cmd=cmd, pname=pname) -> list[str]:
                return _input_case(name, words, cmd, pname, value)

            cases.append((name, f"{p.opts[0]} missing file", with_value("{sandbox}/missing.json")))
            if pname not in UNUSABLE_DIR_OK:
                cases.append((name, f"{p.opts[0]} is a directory", with_value("{emptydir}")))
            cases.append((name, f"{p.opts[0]} is not what it should be", with_value("{junk}")))
            cases.append((name, f"{p.opts[0]} path too long", with_value("d/" * 2500 + "x.json")))
            if pname in REPORT_INPUTS:
                cases.append((name, f"{p.opts[0]} holds a number past float", with_value("{huge}")))
    return cases


CASES = _cases()


def test_battery_size():
    # A new command or option grows this number.
    print(f"CLI contract battery: {len(CASES)} cases over {len(COMMANDS)} commands")
    assert len(COMMANDS) >= 9 and len(CASES) >= 100


@pytest.fixture
def sandbox(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    (box / "existing.json").write_text("keep me\n")
    (box / "target.txt").write_text("link target\n")
    os.symlink(box / "target.txt", box / "link.json")
    (box / "emptydir").mkdir()
    (box / "junk.json").write_bytes(b"\x00\x01 not json, not a bundle \xff")
    good = Path(GOOD_REPORT).read_text()
    (box / "huge.json").write_text(good.replace('"median": 55.3', '"median": 1' + "0" * 400, 1))
    (box / "secret644").write_bytes(b"0123456789abcdef0123\n")
    (box / "secret644").chmod(0o644)
    (box / "blanksecret").write_bytes(b" " * 24 + b"\n")
    (box / "blanksecret").chmod(0o600)
    return box


def _snapshot(box: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(box.rglob("*")):
        out[str(p.relative_to(box))] = b"<dir>" if p.is_dir() and not p.is_symlink() else p.read_bytes()
    return out


@pytest.mark.parametrize("command, case, argv", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(sandbox, command, case, argv):
    values = {
        "{sandbox}": str(sandbox),
        "{link}": str(sandbox / "link.json"),
        "{file}": str(sandbox / "existing.json"),
        "{emptydir}": str(sandbox / "emptydir"),
        "{junk}": str(sandbox / "junk.json"),
        "{huge}": str(sandbox / "huge.json"),
        "{secret644}": str(sandbox / "secret644"),
        "{blanksecret}": str(sandbox / "blanksecret"),
    }
    args = []
    for a in argv:
        for k, v in values.items():
            a = a.replace(k, v)
        args.append(a)
    before = _snapshot(sandbox)
    result = CliRunner().invoke(app, args)
    err = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (args, result.exit_code, result.stdout[-500:], result.stderr[-500:])
    assert len(err) == 1 and err[0], (args, result.stderr)
    assert len(err[0]) <= ERROR_LINE_MAX, (len(err[0]), err[0])  # echoed paths and values are cut short
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    assert _snapshot(sandbox) == before, args


def test_typos_name_the_nearest_option_and_command():
    r = CliRunner().invoke(app, ["inspect", "--bundel", "x"])
    assert r.exit_code == 2 and "Did you mean --bundle?" in r.stderr
    r = CliRunner().invoke(app, ["inspcet"])
    assert r.exit_code == 2 and "Did you mean 'inspect'?" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("where", ["before", "after"])
def test_json_is_accepted_before_and_after_the_command(where):
    bundle = str(FIXTURES / "machines" / "a_dev_firecracker")
    args = (
        ["--json", "inspect", "--bundle", bundle]
        if where == "before"
        else ["inspect", "--bundle", bundle, "--json"]
    )
    r = CliRunner().invoke(app, args)
    assert r.exit_code in (0, 1) and r.stdout.lstrip().startswith("{")


def test_every_command_accepts_json():
    for name, cmd in COMMANDS.items():
        assert "--json" in _long_opts(cmd), name


def test_help_shows_json_as_a_flag_not_a_bool_value():
    r = CliRunner().invoke(app, ["--help"])
    line = next(x for x in r.stdout.splitlines() if "--json" in x)
    assert "<bool>" not in line and "BOOLEAN" not in line


def test_force_overwrites_through_a_rename(tmp_path):
    out = tmp_path / "c.json"
    out.write_text("old")
    r = CliRunner().invoke(app, ["report", "--from-report", GOOD_REPORT, "-o", str(out)])
    assert r.exit_code == 2 and out.read_text() == "old"
    inode = out.stat().st_ino
    r = CliRunner().invoke(app, ["report", "--from-report", GOOD_REPORT, "-o", str(out), "--force"])
    assert r.exit_code in (0, 1), r.stderr
    assert out.read_text().startswith("{") and out.stat().st_ino != inode  # a new file renamed into place
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary file left


def test_unwritable_folder_as_a_non_root_user(tmp_path):
    """A folder the user cannot write: one line, exit 2 (run as nobody when the tests run as root)."""
    import shutil
    import subprocess
    import sys
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="gdrdiag-ro-", dir="/tmp"))  # pytest's tmp is 0700 (root only)
    top.chmod(0o755)
    ro = top / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    cmd = [sys.executable, "-m", "gdrdiag", "report", "--from-report", GOOD_REPORT, "-o", str(ro / "r.json")]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            shutil.rmtree(top)
            pytest.skip("running as root and no setpriv to drop to an unprivileged user")
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        written = os.listdir(ro)
    finally:
        ro.chmod(0o755)
        shutil.rmtree(top)
    if "Permission denied" in proc.stderr and "python" in proc.stderr.lower() and proc.returncode != 2:
        pytest.skip(f"nobody cannot run this Python: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot write" in proc.stderr
    assert written == []


# ---- hostile inputs: import, fleet, show ------------------------------------------------
#
# Each is refused (one line on stderr, exit 2, no traceback, nothing written), or, where the input
# holds something legitimately usable, accepted: exit 0/1, no traceback, a valid output (a Report that
# reads back, an HTML page) and the hostile part said or skipped. Every case also ends in bounded time
# (the quadratic header regex took 46 s on an 80 KB line; 100,000 metric names 285 s over 5,000 nodes).
# The number past float in a Report field is in the battery above ("holds a number past float") for
# show, diagnose, compare and report --from-report.

REFUSED = "refused"
ACCEPTED_REPORT = "accepted: the Report written reads back"
ACCEPTED_FLEET = "accepted: the record is skipped and said so, the others make the page"
HOSTILE_SECONDS = 20.0


def _perftest_json(value: str) -> str:
    return (
        (FIXTURES / "imported" / "perftest_write.json").read_text().replace('"BW_average": 10049.81', value)
    )


def _hostile_inputs(folder: Path) -> None:
    """Every hostile input file, written once into ``folder`` (outside the sandbox)."""
    import json

    from gdrdiag.cli.report_files import load_report
    from gdrdiag.node_record import record_line

    host = (FIXTURES / "imported" / "ib_write_bw_host.txt").read_text()
    (folder / "long_header.txt").write_text("x" * 80_000 + "\n" + host)  # 76 s before the M1 fix
    with open(folder / "huge.txt", "wb") as f:
        f.truncate(1 << 40)  # sparse: a TiB that takes no disk
    (folder / "deep.json").write_text('{"a": ' * 1000 + "1" + "}" * 1000)
    (folder / "bigint.json").write_text(_perftest_json('"BW_average": 1' + "0" * 400))
    (folder / "infinity.json").write_text(_perftest_json('"BW_average": Infinity'))
    (folder / "inf.txt").write_text(host.replace("395.62", "inf"))
    good = record_line(load_report(Path(GOOD_REPORT)), "good", 0)
    many = json.dumps({f"m{i}": 1.0 for i in range(100_000)})
    bad_records = {
        "names": good.replace('"metrics":{', f'"metrics":{many[:-1]},', 1),
        "sku_surrogate": good.replace('"sku":"', '"sku":"\\udc80', 1),
        "metric_surrogate": good.replace('"metrics":{', '"metrics":{"x\\ud800":1.0,', 1),
        "host_newline": good.replace('"host":"good"', '"host":"n1\\n"', 1),
    }
    for name, line in bad_records.items():
        assert line != good, name
        for variant, hosts in ((name, ()), (f"{name}_beside_good", ("a", "b", "c"))):
            (folder / variant).mkdir()
            (folder / variant / "x.json").write_text(line + "\n")
            for h in hosts:
                (folder / variant / f"{h}.json").write_text(
                    good.replace('"host":"good"', f'"host":"{h}"', 1) + "\n"
                )
    (folder / "good").mkdir()
    (folder / "good" / "a.json").write_text(good + "\n")
    (folder / "deep_list.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000)
    (folder / "deep_table.toml").write_text("a = " + "{x=" * 20_000 + "1" + "}" * 20_000)
    (folder / "deep_report.json").write_text(
        '{"schema_version": 2, "results": ' + "[" * 1000 + "]" * 1000 + "}"
    )
    (folder / "infinity_report.json").write_text(
        Path(GOOD_REPORT).read_text().replace('"median": 55.3', '"median": Infinity', 1)
    )


IMPORT_OUT = ["-o", "{sandbox}/out.json"]
FLEET_OUT = ["--html", "{sandbox}/fleet.html"]
HOSTILE = [
    ("import", "an 80 KB perftest header line", ["{in}/long_header.txt", *IMPORT_OUT], ACCEPTED_REPORT),
    ("import", "a file of 1 TiB", ["{in}/huge.txt", *IMPORT_OUT], REFUSED),
    ("import", "JSON 1,000 levels deep", ["{in}/deep.json", *IMPORT_OUT], REFUSED),
    ("import", "an integer >= 2^1024", ["{in}/bigint.json", *IMPORT_OUT], REFUSED),
    ("import", "Infinity in JSON", ["{in}/infinity.json", *IMPORT_OUT], REFUSED),
    ("import", "inf in perftest text", ["{in}/inf.txt", *IMPORT_OUT], REFUSED),
    ("fleet", "a record of 100,000 metric names", ["{in}/names", *FLEET_OUT], REFUSED),
    ("fleet", "a lone surrogate in the SKU", ["{in}/sku_surrogate", *FLEET_OUT], REFUSED),
    ("fleet", "a lone surrogate in a metric name", ["{in}/metric_surrogate", *FLEET_OUT], REFUSED),
    ("fleet", "a host name ending in a newline", ["{in}/host_newline", *FLEET_OUT], REFUSED),
    *[
        ("fleet", f"{what}, beside good records", [f"{{in}}/{name}_beside_good", *FLEET_OUT], ACCEPTED_FLEET)
        for name, what in (
            ("names", "a record of 100,000 metric names"),
            ("sku_surrogate", "a lone surrogate in the SKU"),
            ("metric_surrogate", "a lone surrogate in a metric name"),
            ("host_newline", "a host name ending in a newline"),
        )
    ],
    (
        "fleet",
        "--baseline lists 100,000 deep",
        ["{in}/good", "--baseline", "{in}/deep_list.toml", *FLEET_OUT],
        REFUSED,
    ),
    (
        "fleet",
        "--baseline tables 20,000 deep",
        ["{in}/good", "--baseline", "{in}/deep_table.toml", *FLEET_OUT],
        REFUSED,
    ),
    ("show", "JSON 1,000 levels deep", ["{in}/deep_report.json"], REFUSED),
    ("show", "Infinity in a float field", ["{in}/infinity_report.json"], REFUSED),
    ("diagnose", "Infinity in a float field", ["{in}/infinity_report.json"], REFUSED),
]


@pytest.fixture(scope="module")
def hostile_inputs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    _hostile_inputs(folder)
    return folder


@pytest.mark.parametrize("command, case, argv, outcome", HOSTILE, ids=[f"{c}: {n}" for c, n, _, _ in HOSTILE])
def test_hostile_input_is_refused_in_one_line_or_accepted_with_a_valid_output(
    sandbox, hostile_inputs, command, case, argv, outcome
):
    import time

    from gdrdiag.model.report import Report

    args = [
        command,
        *(a.replace("{in}", str(hostile_inputs)).replace("{sandbox}", str(sandbox)) for a in argv),
    ]
    before = _snapshot(sandbox)
    start = time.monotonic()
    result = CliRunner().invoke(app, args)
    took = time.monotonic() - start
    assert "Traceback" not in result.output and "Traceback" not in result.stderr, result.stderr[-800:]
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert took < HOSTILE_SECONDS, (case, took)
    err = result.stderr.strip().splitlines()
    if outcome == REFUSED:
        assert result.exit_code == 2, (args, result.exit_code, result.stdout[-300:], result.stderr[-300:])
        assert len(err) == 1 and err[0].startswith("gdrdiag"), result.stderr
        assert _snapshot(sandbox) == before, args
        return
    assert result.exit_code in (0, 1), (args, result.exit_code, result.stderr[-500:])
    written = set(_snapshot(sandbox)) - set(before)
    if outcome == ACCEPTED_REPORT:
        assert written == {"out.json"}
        report = Report.from_json((sandbox / "out.json").read_text())
        assert report.results and Report.from_json(report.to_json()) == report
    else:
        assert written == {"fleet.html"} and "1 record(s) skipped" in result.stdout
        page = (sandbox / "fleet.html").read_text(encoding="utf-8")
        assert page.lstrip().lower().startswith("<!doctype html") and "x.json" in page
