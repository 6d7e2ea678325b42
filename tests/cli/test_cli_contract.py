"""The CLI contract (issue 12), kept fixed: every command, the same battery of bad inputs.

Commands and their options are enumerated from the typer app, so a new command or option is in
the battery without editing this file. Every case must end with exactly one line on stderr,
exit 2, no traceback, and nothing written (the sandbox folder is unchanged, a symlink's target
keeps its bytes). ``test_battery_size`` pins the count reported in issue 12's note.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest
import typer.main
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.cli.common import OUTPUT_FLAGS

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
    "copy-bench": [["-n", "0"], ["--iters", "-3"], ["--sizes", "12QB"], ["--pin-size", "1Q"]],
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
    ],
    "fleet": [
        ["{sandbox}", "--min-group", "0"],
        ["{sandbox}", "--top", "-1"],
        ["{sandbox}", "--rel-floor", "2"],
    ],
    "mr-bench": [
        ["--size", "12QB"],
        # the two-machine options (issue 22): timeouts that are not seconds, soft off loopback,
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
    ],
}
# Report readers also get a Report whose number does not fit a float (issue 22: OverflowError).
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
    # Issue 12's note reports this number; a new command or option grows it.
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
