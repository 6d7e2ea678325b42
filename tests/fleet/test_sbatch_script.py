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
# srun stand-in: drop srun's options, run the command once per task with SLURM_PROCID set, and
# SLURMD_NODENAME (FAKE_SRUN_NODE-<i>) and SLURM_GPUS_ON_NODE (the i-th of FAKE_SRUN_GPUS, if any)
# as srun sets them on a node.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
read -r -a gpus <<< "${FAKE_SRUN_GPUS:-}"
pids=()
for i in $(seq 0 $((FAKE_SRUN_TASKS - 1))); do
    if [ -n "${gpus[$i]:-}" ]; then export SLURM_GPUS_ON_NODE="${gpus[$i]}"; else unset SLURM_GPUS_ON_NODE; fi
    SLURM_PROCID=$i SLURMD_NODENAME="${FAKE_SRUN_NODE:-node}-$i" "$@" &
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


# scontrol stand-in: the allocation's Slurm node names (FAKE_SLURM_NODES of them)
FAKE_SCONTROL = """#!/bin/bash
[ "$1 $2" = "show hostnames" ] || exit 1
for i in $(seq 0 $((FAKE_SLURM_NODES - 1))); do echo "${FAKE_SRUN_NODE:-node}-$i"; done
"""

# hostname stand-in: a host name unlike the Slurm node name (`hostname -s`: without the domain)
FAKE_HOSTNAME = """#!/bin/bash
if [ "${1:-}" = -s ]; then echo "host${SLURM_PROCID}"; else echo "host${SLURM_PROCID}.dc1.example.com"; fi
"""


def _bin(tmp_path, **scripts):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _run_job(tmp_path, results, nodes, tasks, **extra):
    """The real script with stand-in srun/scontrol/hostname: FAKE_SLURM_NODES nodes, tasks of them run."""
    bin_dir = _bin(
        tmp_path, srun=FAKE_SRUN, scontrol=FAKE_SCONTROL, hostname=FAKE_HOSTNAME, gdrdiag=GDRDIAG_PY
    )
    env = dict(
        os.environ,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        PYTHONPATH=str(ROOT),
        FAKE_SRUN_TASKS=str(tasks),
        FAKE_SLURM_NODES=str(nodes),
        FAKE_SRUN_NODE="gpu-a",
        GDRDIAG=str(bin_dir / "gdrdiag"),
        GDRDIAG_REPORT_ARGS=f"--from-report {REPORTS}/baremetal_hgx.json --quiet",
        SLURM_JOB_ID="43",
        SLURM_JOB_NODELIST=f"gpu-a-[0-{nodes - 1}]",
        **extra,
    )
    env.pop("GDRDIAG_HOST", None)
    env.pop("GDRDIAG_EXPECT_HOSTS", None)
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "fleet" / "gdrdiag-fleet.sbatch"), str(results)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


GDRDIAG_PY = f'#!/bin/sh\nexec "{sys.executable}" -m gdrdiag "$@"\n'


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout not installed")
@pytest.mark.parametrize(
    ("naming", "names"),
    [
        (None, ["gpu-a-0", "gpu-a-1", "gpu-a-2"]),
        ("slurm", ["gpu-a-0", "gpu-a-1", "gpu-a-2"]),
        ("hostname", ["host0", "host1", "host2"]),
    ],
)
def test_records_are_named_by_the_chosen_naming(tmp_path, naming, names):
    extra = {} if naming is None else {"GDRDIAG_NAMING": naming}
    results = tmp_path / "results"
    job = _run_job(tmp_path, results, 3, 3, FAKE_SRUN_GPUS="8 4", CUDA_VISIBLE_DEVICES="0,1", **extra)
    assert job.returncode == 0, job.stdout + job.stderr + (results / "report-tasks.log").read_text()
    assert sorted(p.name for p in results.glob("*.json")) == [f"{n}.json" for n in names]
    for n in names:
        assert f'"host":"{n}"' in (results / f"{n}.json").read_text().replace(" ", "")
    # the expected nodes are the allocation's, under the names their records use: none missing
    assert (results / "expected-hosts.txt").read_text().split() == names
    # each task's GPU count is its allocation's: SLURM_GPUS_ON_NODE, else CUDA_VISIBLE_DEVICES
    log = (results / "report-tasks.log").read_text()
    assert f"gpu-a-0: record {names[0]}, 8 GPU(s) allocated" in log
    assert f"gpu-a-1: record {names[1]}, 4 GPU(s) allocated" in log
    assert f"gpu-a-2: record {names[2]}, 2 GPU(s) allocated" in log


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout not installed")
def test_hostname_naming_names_a_node_that_never_started_by_its_slurm_name(tmp_path):
    results = tmp_path / "results"
    job = _run_job(tmp_path, results, 3, 2, GDRDIAG_NAMING="hostname")
    assert job.returncode == 1, job.stdout + job.stderr
    assert (results / "expected-hosts.txt").read_text().split() == ["host0", "host1", "gpu-a-2"]
    assert "MISSING: 1 expected node(s)" in job.stdout and "gpu-a-2" in job.stdout
    assert "no GPU(s) allocated" in (results / "report-tasks.log").read_text()


def test_an_unknown_naming_is_refused_before_anything_runs(tmp_path):
    results = tmp_path / "results"
    job = _run_job(tmp_path, results, 1, 1, GDRDIAG_NAMING="fqdn")
    assert job.returncode == 2 and "GDRDIAG_NAMING must be slurm or hostname" in job.stderr
    assert not results.exists()


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
