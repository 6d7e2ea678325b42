"""The Slurm recipe for real: a one-node Slurm on localhost runs scripts/fleet/gdrdiag-fleet.sbatch.

Needs slurmctld/slurmd/munge running (scripts/fleet/slurm_setup.sh, which `.ci/run` calls through
scripts/fleet/ci.sh). Skipped when `sbatch` is absent or the cluster is down, unless
GDRDIAG_REQUIRE_SLURM=1 (CI), where that is a failure.

Six tasks play six nodes: each task makes its record with ``report --from-report`` from a
synthetic fixture Report (bare-metal HGX numbers with per-node noise) and ``--host node-$SLURM_PROCID``,
because one host cannot be six machines; node-3's Report has an injected ACS redirect (switch
port ACSCtl ReqRedir+ CmpltRedir+, RDMA into GPU memory at 0.35x). The real parts are slurmctld,
slurmd, munge, sbatch, srun, the shared results folder with concurrent atomic writes, and
`gdrdiag fleet` over what the tasks wrote.
"""

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gdrdiag.cli.report_files import load_report

from .conftest import REPORTS, ROOT

pytestmark = pytest.mark.slurm
NODES = 6
SLOW = 3


def _cluster_up() -> str:
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "sbatch/sinfo not installed (run scripts/fleet/slurm_setup.sh)"
    out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=20)
    if out.returncode != 0 or not any(s.startswith(("idle", "mix", "alloc")) for s in out.stdout.split()):
        return f"no usable Slurm node (sinfo: {out.stdout.strip() or out.stderr.strip()})"
    return ""


@pytest.fixture(scope="module")
def slurm():
    why = _cluster_up()
    if why:
        if os.environ.get("GDRDIAG_REQUIRE_SLURM") == "1":
            pytest.fail(why)
        pytest.skip(why)


def _node_reports(folder: Path, synthetic) -> None:
    import dataclasses

    base = load_report(REPORTS / "baremetal_hgx.json")
    rng = random.Random(3)
    for i in range(NODES):
        if i == SLOW:
            rep = synthetic.inject(base, "acs_redirect")
        else:
            rep = synthetic._scale_results(
                base, {f: rng.gauss(1.0, 0.005) for f in ("copy", "gather", "rdma")}
            )
        rep = dataclasses.replace(rep, notes=rep.notes + (f"synthetic node-{i} for the Slurm test",))
        (folder / f"node-{i}.json").write_text(rep.to_json())


def test_sbatch_ranks_the_slow_node_first_with_its_cause(slurm, synthetic, tmp_path):
    reports = tmp_path / "reports"
    results = tmp_path / "results"
    reports.mkdir()
    _node_reports(reports, synthetic)
    gdrdiag = str(Path(sys.executable).with_name("gdrdiag"))
    hosts = tmp_path / "expected-hosts.txt"
    hosts.write_text("".join(f"node-{i}\n" for i in range(NODES)))
    env = dict(
        os.environ,
        GDRDIAG=gdrdiag,
        GDRDIAG_SRUN_ARGS=f"--ntasks={NODES}",
        GDRDIAG_REPORT_ARGS=f"--from-report {reports}/node-$SLURM_PROCID.json --host node-$SLURM_PROCID",
        GDRDIAG_EXPECT_HOSTS=str(hosts),
    )
    start = time.monotonic()
    job = subprocess.run(
        [
            "sbatch",
            "--wait",
            "--nodes=1",
            f"--ntasks={NODES}",
            f"--ntasks-per-node={NODES}",
            f"--chdir={tmp_path}",
            f"--output={tmp_path}/job.out",
            str(ROOT / "scripts" / "fleet" / "gdrdiag-fleet.sbatch"),
            str(results),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - start
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert job.returncode == 1, (
        f"sbatch: {job.stdout}{job.stderr}\njob output:\n{out}"
    )  # fleet flagged a node
    records = sorted(p.name for p in results.glob("*.json"))
    assert records == [f"node-{i}.json" for i in range(NODES)], out
    assert not list(results.glob(".*")), "temporary files left behind"
    fleet = subprocess.run(
        [gdrdiag, "--json", "fleet", str(results)], capture_output=True, text=True, timeout=60
    )
    data = json.loads(fleet.stdout)
    first = data["nodes"][0]
    assert first["host"] == f"node-{SLOW}" and first["level"] == "drain"
    assert first["cause"]["code"] == "ACS-REDIRECT"
    assert [n["host"] for n in data["nodes"] if n["level"] != "ok"] == [f"node-{SLOW}"]
    assert f"node-{SLOW} [drain]" in out and "ACS-REDIRECT" in out  # the job's own fleet report
    assert (results / "fleet.html").exists()
    print(f"slurm job: {NODES} tasks, {elapsed:.1f} s from sbatch to completion")
