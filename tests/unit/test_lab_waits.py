"""The QEMU lab's guest waits scale with the guest's measured speed, and a timed-out step is retried.

The guest helpers (scripts/lab/guest/lib.sh) run here in ``sh`` (dash, as in the Debian guest)
without booting anything: the factor's arithmetic, the measurement with a stand-in ``python3``
that reports a chosen time, the retry of a step that failed with a timeout, and a scan of every
guest script for a fixed wait (``--timeout 30``, ``timeout 300``, ``seq 50``, ``sleep 3``) that
is not multiplied by the factor.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIB = REPO / "scripts" / "lab" / "guest" / "lib.sh"
GUEST_SCRIPTS = sorted((REPO / "scripts" / "lab" / "guest").glob("*.sh")) + [
    REPO / "scripts" / "native_lab_check.sh"
]


def sh(
    script: str, results: Path, env: dict | None = None, path: str = "/usr/bin:/bin"
) -> subprocess.CompletedProcess:
    """Run ``script`` in dash after sourcing lib.sh, with R=results."""
    return subprocess.run(
        ["sh", "-c", f". {LIB}\n{script}"],
        env={"PATH": path, "R": str(results), **(env or {})},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize(
    ("measured", "reference", "cap", "factor"),
    [
        ("0.400", "0.5", "8", 1),  # faster than the idle reference: never below 1
        ("0.500", "0.5", "8", 1),
        ("0.510", "0.5", "8", 2),  # rounded up: a little slower already doubles the waits
        ("1.480", "0.5", "8", 3),
        ("30.0", "0.5", "8", 8),  # capped
        ("3.0", "0.5", "4", 4),
        ("unmeasured", "0.5", "8", 1),  # the measurement failed: the waits as written
        ("", "0.5", "8", 1),
        ("1.0", "0", "8", 1),
    ],
)
def test_the_wait_factor_is_the_rounded_up_slowdown_within_its_cap(
    tmp_path, measured, reference, cap, factor
):
    out = sh(f'wait_factor "{measured}" "{reference}" "{cap}"', tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == str(factor), out


def _fake_python(tmp_path: Path, seconds: str) -> str:
    """A PATH whose python3 prints ``seconds`` (what the speed workload would measure)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(f"#!/bin/sh\necho {seconds}\n")
    fake.chmod(0o755)
    return f"{bin_dir}:/usr/bin:/bin"


def test_lab_speed_exports_the_factor_and_says_it(tmp_path):
    out = sh(
        'lab_speed; echo "factor=$LAB_WAIT_FACTOR"; scaled 30; sh -c \'echo "child=$LAB_WAIT_FACTOR"\'',
        tmp_path,
        path=_fake_python(tmp_path, "1.200"),
    )
    assert out.returncode == 0, out
    lines = out.stdout.splitlines()
    assert lines[0] == "speed: waits scaled x3 (CPU workload 1.200 s, 0.5 s on an idle machine; cap 8)"
    assert lines[1:] == ["factor=3", "90", "child=3"]  # exported: the plan's sub-scripts see it
    assert (tmp_path / "wait-factor").read_text() == "3\n"
    assert (tmp_path / "speed.txt").read_text() == lines[0] + "\n"


def test_a_factor_given_in_the_environment_is_kept(tmp_path):
    out = sh(
        "lab_speed; scaled 10", tmp_path, env={"LAB_WAIT_FACTOR": "5"}, path=_fake_python(tmp_path, "0.1")
    )
    assert out.stdout.splitlines() == ["speed: waits scaled x5 (LAB_WAIT_FACTOR given; cap 8)", "50"]


def test_without_a_measurement_waits_are_as_written(tmp_path):
    assert sh("scaled 30", tmp_path).stdout.strip() == "30"


# ---- retry once after a timeout ------------------------------------------------------------------

# A step command that fails the first time it runs (writing WORDS to $R/x.err) and passes after.
FLAKY = """
flaky() {
    if [ -f "$R/.ran" ]; then echo fine >"$R/x.err"; return 0; fi
    : >"$R/.ran"; sleep 0.1; echo "$1" >"$R/x.err"; return ${2:-1}
}
"""


@pytest.mark.parametrize(
    ("words", "rc"),
    [
        ("gdrdiag: error: no RDMA completion for 30 s with 128 WRs outstanding", 1),
        ("gdrdiag: error: peer 10.9.0.2:4242 sent no 'done' within 30 s", 1),
        ("", 124),  # coreutils timeout
    ],
)
def test_a_step_that_timed_out_is_retried_once_and_says_so(tmp_path, words, rc):
    out = sh(FLAKY + f'step mr-x flaky "{words}" {rc}; echo "step rc $?"', tmp_path)
    assert "retrying step mr-x once: " + (words or "exit 124 (timeout)") in out.stdout, out.stdout
    assert out.stdout.splitlines()[-1] == "step rc 0"
    steps = (tmp_path / "steps.tsv").read_text().splitlines()
    assert len(steps) == 1 and steps[0].startswith("mr-x\t") and steps[0].endswith("\t0")
    assert not (tmp_path / "failed-steps").exists()
    assert (tmp_path / "retried-steps").read_text().startswith("retrying step mr-x once")


def test_a_step_that_failed_otherwise_is_not_retried(tmp_path):
    out = sh(FLAKY + 'step mr-x flaky "gdrdiag: error: no such device nosuch0"; echo "step rc $?"', tmp_path)
    assert "retrying" not in out.stdout and out.stdout.splitlines()[-1] == "step rc 1"
    assert (tmp_path / "failed-steps").read_text() == "mr-x\n"


def test_a_step_that_times_out_twice_fails(tmp_path):
    script = 'slow() { sleep 0.1; echo "no completion within 10 s" >"$R/y.err"; return 1; }\n'
    script += 'step s slow; echo "rc $?"'
    out = sh(script, tmp_path)
    assert out.stdout.count("retrying step s once") == 1 and out.stdout.splitlines()[-1] == "rc 1"
    assert (tmp_path / "failed-steps").read_text() == "s\n"
    assert len((tmp_path / "steps.tsv").read_text().splitlines()) == 1


def test_an_earlier_steps_timeout_does_not_make_a_later_failure_a_retry(tmp_path):
    (tmp_path / "old.err").write_text("no completion within 10 s\n")
    script = 'bad() { sleep 0.1; echo "refused" >"$R/z.err"; return 1; }\nstep later bad'
    assert "retrying" not in sh(script, tmp_path).stdout


# ---- no fixed wait escapes the factor ------------------------------------------------------------

# A literal number of seconds or retries right after a wait: gdrdiag's --timeout/--accept-timeout,
# coreutils timeout, a seq-counted retry loop, or a sleep of a second or more (a sleep below one
# second is a polling interval inside a loop whose count is scaled).
FIXED_WAIT = re.compile(
    r"""(--timeout|--accept-timeout)[ =]["']?\d"""
    r"""|(^|[\s;&|(])timeout\s+(-\S+\s+)*["']?\d"""
    r"""|\$\(seq\s+["']?\d"""
    r"""|(^|[\s;&|(])sleep\s+["']?([1-9]\d*)(\.\d+)?\b"""
)


def test_the_scan_finds_fixed_waits():
    for bad in (
        "--timeout 30",
        '--accept-timeout "240"',
        "timeout 300 ib_write_bw",
        "for _ in $(seq 50); do",
        "sleep 3",
        "x; sleep 15",
    ):
        assert FIXED_WAIT.search(bad), bad
    for good in (
        '--timeout "$(scaled 30)"',
        "timeout $(scaled 120) ib_write_bw",
        'seq "$(scaled 50)"',
        "sleep 0.2",
    ):
        assert not FIXED_WAIT.search(good), good


@pytest.mark.parametrize("script", GUEST_SCRIPTS, ids=lambda p: p.name)
def test_no_guest_script_has_a_fixed_wait(script):
    bad = [
        f"{script.name}:{n}: {line.strip()}"
        for n, line in enumerate(script.read_text().splitlines(), 1)
        if not line.lstrip().startswith("#") and FIXED_WAIT.search(line.split(" # ")[0])
    ]
    assert not bad, "waits not multiplied by the wait factor (use $(scaled N)):\n" + "\n".join(bad)


RUN_SH = REPO / "scripts" / "lab" / "run.sh"


def _watch(results: Path, stall: int, boot_s: int, writer: str = "") -> tuple[bool, int]:
    """run.sh's watch_progress over a stand-in boot (a sleep), with ``writer`` writing beside it.

    Returns (stalled, the stand-in's exit status): a stalled boot is stopped and says so.
    """
    text = RUN_SH.read_text()
    funcs = "".join(
        re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", text, re.S | re.M).group(0)
        for name in ("newest_write", "watch_progress")
    )
    script = (
        f"{funcs}sleep {boot_s} & boot=$!\n{writer}\n"
        f'watch_progress "$boot" "{results}" {stall}\nwait "$boot"; echo "rc=$?"'
    )
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    rc = int(re.search(r"rc=(\d+)", out.stdout).group(1))
    return (results / ".stalled").exists(), rc


def test_a_boot_that_writes_nothing_is_stopped_as_stalled(tmp_path):
    # the stand-in would run 90 s; the watcher's first look (5 s) finds nothing written for 4 s
    stalled, rc = _watch(tmp_path, stall=4, boot_s=90)
    assert stalled and rc == 143  # stopped with SIGTERM
    assert (tmp_path / ".stalled").read_text() == "4\n"


def test_a_boot_that_keeps_writing_runs_to_its_end(tmp_path):
    # a write every second, a stall only after 8 s without one: a loaded machine cannot fake a stall
    heartbeat = f'(for i in $(seq 20); do : > "{tmp_path}/.alive"; sleep 1; done) &'
    script_start = time.monotonic()
    stalled, rc = _watch(tmp_path, stall=8, boot_s=12, writer=heartbeat)
    assert not stalled and rc == 0 and time.monotonic() - script_start >= 11


def test_every_boot_is_watched_and_a_stalled_one_reported():
    text = RUN_SH.read_text()
    assert 'watch_progress "$tpid" "$res" "$stall" &' in text
    assert "local limit=${LAB_TIMEOUT:-5400} stall=${LAB_STALL:-900}" in text
    assert "without progress" in text


PLAN_SH = REPO / "scripts" / "lab" / "guest" / "plan.sh"


def _heartbeat_line() -> str:
    line = next(ln for ln in PLAN_SH.read_text().splitlines() if ".alive" in ln and "while" in ln)
    return line.replace('"$HEARTBEAT_S"', "30")


def test_the_guest_writes_a_heartbeat_while_it_runs_and_stops_it():
    plan = PLAN_SH.read_text()
    assert re.search(r'while :; do : >"\$R/\.alive"; sleep "\$HEARTBEAT_S"; done', plan)
    assert "HEARTBEAT_S=30" in plan and 'kill "$HEARTBEAT_PID"' in plan


def test_the_heartbeat_does_not_keep_the_plans_output_pipe_open(tmp_path):
    # lab-init runs `(sh plan.sh ...) 2>&1 | tee guest.log` and powers off when tee ends: a
    # background writer that holds the pipe would keep the guest running until the host's guard
    script = f"R={tmp_path}\n( {_heartbeat_line()}\necho plan-done ) 2>&1 | cat"
    start = time.monotonic()
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=20, check=False)
    subprocess.run(["pkill", "-f", str(tmp_path)], check=False)  # the heartbeat left running
    assert out.stdout.strip() == "plan-done" and time.monotonic() - start < 10
    assert (tmp_path / ".alive").exists()
