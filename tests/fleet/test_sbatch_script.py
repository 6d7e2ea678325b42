"""scripts/fleet/gdrdiag-fleet.sbatch's own logic, without Slurm: a node that writes no record and a
hung node are named as MISSING, the summary is written and the job fails.

A stand-in ``srun`` (a shell script on PATH) starts the tasks as local processes with
``SLURM_PROCID`` set, as srun would; ``GDRDIAG`` is a wrapper that makes task 2 exit without a
record and task 3 hang. Everything else is the real script and the real gdrdiag. The same
scenario under a real Slurm is tests/fleet/test_slurm.py (CI).
"""

import os
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import REPORTS, ROOT

NODES = 5

FAKE_SRUN = """#!/bin/bash
# srun stand-in: drop srun's options, run the command once per task with SLURM_PROCID set.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
pids=()
for i in $(seq 0 $((FAKE_SRUN_TASKS - 1))); do
    SLURM_PROCID=$i "$@" &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
"""

WRAPPER = """#!/bin/bash
# gdrdiag, except that on task 2 report writes nothing and on task 3 it hangs.
if [ "$1" = report ]; then
    case "${SLURM_PROCID:-}" in
        2) echo "node-2: crashed before writing its record" >&2; exit 1 ;;
        3) exec sleep 600 ;;
    esac
fi
exec "$PYTHON" -m gdrdiag "$@"
"""


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout not installed")
def test_missing_and_hung_nodes_are_named_and_fail_the_job(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("srun", FAKE_SRUN), ("gdrdiag-wrapper", WRAPPER)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    hosts = tmp_path / "expected-hosts.txt"
    hosts.write_text("".join(f"node-{i}\n" for i in range(NODES)))
    results = tmp_path / "results"
    env = dict(
        os.environ,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        PYTHON=sys.executable,
        PYTHONPATH=str(ROOT),
        FAKE_SRUN_TASKS=str(NODES),
        GDRDIAG=str(bin_dir / "gdrdiag-wrapper"),
        GDRDIAG_REPORT_ARGS=f"--from-report {REPORTS}/baremetal_hgx.json --host node-$SLURM_PROCID",
        GDRDIAG_NODE_TIMEOUT="15",  # the hung node is cut here; the others need a few s each
        GDRDIAG_EXPECT_HOSTS=str(hosts),
        SLURM_JOB_ID="42",
    )
    start = time.monotonic()
    job = subprocess.run(
        ["bash", str(ROOT / "scripts" / "fleet" / "gdrdiag-fleet.sbatch"), str(results)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - start
    summary = (results / "fleet.txt").read_text()
    assert job.returncode == 1, job.stdout + job.stderr
    assert elapsed < 100  # the hung node was cut at GDRDIAG_NODE_TIMEOUT, not at the job's limit
    assert sorted(p.name for p in results.glob("node-*.json")) == [
        "node-0.json",
        "node-1.json",
        "node-4.json",
    ]
    assert "2 expected node(s) without a record" in " ".join(summary.split()[:40])
    assert "MISSING: 2 expected node(s)" in summary and "node-2, node-3" in summary
    assert summary in job.stdout  # the job log shows the summary too
    assert "124 = a node timed out" in job.stdout


def test_fleet_expect_hosts_usage(tmp_path):
    from typer.testing import CliRunner

    from gdrdiag.cli import app

    runner = CliRunner()
    records = tmp_path / "r"
    records.mkdir()
    bare = str(REPORTS / "baremetal_hgx.json")
    for h in ("a", "b", "c"):
        runner.invoke(
            app, ["report", "--from-report", bare, "--host", h, "--record", f"{records}/{{host}}.json"]
        )
    hosts = tmp_path / "hosts"
    hosts.write_text("a\nb\n# comment\n\nc  # trailing comment\n")
    assert runner.invoke(app, ["fleet", str(records), "--expect-hosts", str(hosts)]).exit_code == 0
    hosts.write_text("a\nb\nc\nd\n")
    res = runner.invoke(app, ["--json", "fleet", str(records), "--expect-hosts", str(hosts)])
    assert res.exit_code == 1 and '"missing_hosts": [\n  "d"\n ]' in res.output
    hosts.write_text("a\n../etc\n")
    res = runner.invoke(app, ["fleet", str(records), "--expect-hosts", str(hosts)])
    assert res.exit_code == 2 and ":2:" in res.output and res.output.count("\n") == 1
