"""The Kubernetes recipe validates against the Kubernetes OpenAPI schema (kubernetes-validate, strict).

No cluster and no kubectl: kubernetes-validate bundles the JSON schemas of each Kubernetes
release. Strict mode also rejects unknown fields (a typo such as ``completionsMode``).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import REPORTS, ROOT

yaml = pytest.importorskip("yaml")
kv = pytest.importorskip("kubernetes_validate")

MANIFEST = Path(__file__).resolve().parents[2] / "scripts" / "fleet" / "k8s-gdrdiag.yaml"
DOC = Path(__file__).resolve().parents[2] / "docs" / "fleet.md"


def _docs():
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


@pytest.mark.parametrize("version", ["1.29.0", kv.latest_version()])
def test_every_object_validates_strictly(version):
    docs = _docs()
    assert [d["kind"] for d in docs] == [
        "PersistentVolumeClaim",
        "Job",
        "Job",
        "DaemonSet",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    for d in docs:
        kv.validate(d, version, strict=True)


def test_the_validator_really_rejects_mistakes():
    job = _docs()[1]
    job["spec"]["completionsMode"] = "Indexed"  # typo
    with pytest.raises(kv.ValidationError):
        kv.validate(job, kv.latest_version(), strict=True)
    job = _docs()[1]
    job["spec"]["completions"] = "sixteen"
    with pytest.raises(kv.ValidationError):
        kv.validate(job, kv.latest_version(), strict=True)


def test_indexed_job_shape_and_the_docs_quote_the_file():
    job = _docs()[1]["spec"]
    assert job["completionMode"] == "Indexed" and job["completions"] == job["parallelism"]
    pod = job["template"]["spec"]
    assert pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    container = pod["containers"][0]
    assert container["securityContext"]["privileged"] is True
    assert "--record" in container["args"][0] and "{host}" in container["args"][0]
    assert MANIFEST.read_text().strip() in DOC.read_text(), (
        "docs/fleet.md must show the tested manifest verbatim"
    )


def test_docs_quote_the_tested_sbatch_script():
    sbatch = MANIFEST.with_name("gdrdiag-fleet.sbatch").read_text().strip()
    assert sbatch in DOC.read_text(), "docs/fleet.md must show scripts/fleet/gdrdiag-fleet.sbatch verbatim"


# ---- the fleet Job runs after the node Job: its wait step against an empty and a full volume ----


def _by_name(name):
    return next(d for d in _docs() if d["metadata"]["name"] == name)


def _wait_script():
    pod = _by_name("gdrdiag-fleet")["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    env = {e["name"]: e["value"] for e in init["env"]}
    assert env["RESULTS"] == "/results" and init["command"] == ["/bin/sh", "-c"]
    return init["args"][0], pod["containers"][0]["args"][0]


def _run_wait(folder, expected, wait):
    script, _ = _wait_script()
    env = dict(
        os.environ, RESULTS=str(folder), EXPECTED=str(expected), WAIT_SECONDS=str(wait), POLL_SECONDS="0.2"
    )
    start = time.monotonic()
    out = subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    return out, time.monotonic() - start


def test_wait_step_on_an_empty_volume_times_out_and_lets_fleet_run(tmp_path):
    out, took = _run_wait(tmp_path, 3, 2)
    assert out.returncode == 0 and "timed out: 0 of 3 records" in out.stdout and took >= 1
    assert (tmp_path / "expected-hosts.txt").read_text() == ""


def test_wait_step_on_a_full_volume_goes_at_once(tmp_path):
    (tmp_path / "started").mkdir()
    for h in ("a", "b", "c"):
        (tmp_path / f"{h}.json").write_text("{}")
        (tmp_path / "started" / h).touch()
    (tmp_path / ".a.json.x.tmp").write_text("")  # a writer's temporary file is not a record
    out, took = _run_wait(tmp_path, 3, 30)
    assert out.returncode == 0 and "all 3 of 3 records" in out.stdout and took < 5
    assert (tmp_path / "expected-hosts.txt").read_text().split() == ["a", "b", "c"]


def test_wait_then_fleet_names_a_node_that_started_but_wrote_nothing(tmp_path):
    from typer.testing import CliRunner

    from gdrdiag.cli import app

    results = tmp_path / "results"
    (results / "started").mkdir(parents=True)
    for h in ("a", "b", "c"):
        (results / "started" / h).touch()
        if h != "c":
            res = CliRunner().invoke(
                app,
                [
                    "report",
                    "--from-report",
                    str(REPORTS / "baremetal_hgx.json"),
                    "--host",
                    h,
                    "--record",
                    f"{results}/{{host}}.json",
                ],
            )
            assert res.exit_code == 0, res.output
    out, _ = _run_wait(results, 3, 1)
    assert "timed out: 2 of 3 records" in out.stdout
    _, fleet = _wait_script()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gdrdiag").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gdrdiag "$@"\n')
    (bin_dir / "gdrdiag").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    run = subprocess.run(
        ["/bin/sh", "-c", fleet.replace("/results", str(results))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr  # exit 1 (a node missing) is not a failed Job
    assert "MISSING: 1 expected node(s)" in run.stdout and "\n  c\n" in run.stdout


# ---- the readiness DaemonSet taints and labels a failing node, with the RBAC it needs -------------


def test_readiness_loop_taints_and_labels_a_failing_node(tmp_path):
    ds = _by_name("gdrdiag-ready")["spec"]["template"]["spec"]
    (container,) = ds["containers"]
    script = container["args"][0].replace("/tmp/", f"{tmp_path}/")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "kubectl.log"
    fakes = {
        "gdrdiag": "#!/bin/sh\necho 'NOT READY: ACS-REDIRECT 0000:17:01.0'\nexit \"$CHECK_RC\"\n",
        "kubectl": f'#!/bin/sh\necho "$*" >> {log}\n',
        "sleep": "#!/bin/sh\nkill -TERM $PPID\n",  # one round of the loop
    }
    for name, text in fakes.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", NODE_NAME="gpu-7")
    subprocess.run(["/bin/sh", "-c", script], env={**env, "CHECK_RC": "1"}, capture_output=True, timeout=30)
    assert log.read_text().splitlines() == [
        "taint node gpu-7 gdrdiag.io/not-ready=true:NoSchedule --overwrite",
        "label node gpu-7 gdrdiag.io/ready=false --overwrite",
    ]
    assert not (tmp_path / "ready").exists()
    log.unlink()
    subprocess.run(["/bin/sh", "-c", script], env={**env, "CHECK_RC": "0"}, capture_output=True, timeout=30)
    assert log.read_text().splitlines() == [
        "taint node gpu-7 gdrdiag.io/not-ready:NoSchedule-",
        "label node gpu-7 gdrdiag.io/ready=true --overwrite",
    ]
    assert (tmp_path / "ready").exists()
    assert container["readinessProbe"]["exec"]["command"] == ["test", "-f", "/tmp/ready"]
    assert ds["tolerations"][0]["key"] == "gdrdiag.io/not-ready"
    # the RBAC: the pod's ServiceAccount, bound to a role that may get and patch nodes, nothing more
    assert ds["serviceAccountName"] == _by_name("gdrdiag-ready")["metadata"]["name"]
    role = next(d for d in _docs() if d["kind"] == "ClusterRole")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    binding = next(d for d in _docs() if d["kind"] == "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"][0]["name"] == ds["serviceAccountName"]
