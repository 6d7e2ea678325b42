"""The Kubernetes recipe validates against the Kubernetes OpenAPI schema (kubernetes-validate, strict).

No cluster and no kubectl: kubernetes-validate bundles the JSON schemas of each Kubernetes
release. Strict mode also rejects unknown fields (a typo such as ``completionsMode``). The node
Job is a template (scripts/fleet/k8s-gdrdiag-nodes.yaml) rendered once per GPU count with
``envsubst '$GPUS $NODES'``, as docs/fleet.md says; every rendering tested here is validated.
"""

import os
import re
import shutil
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import REPORTS, ROOT

yaml = pytest.importorskip("yaml")
kv = pytest.importorskip("kubernetes_validate")

MANIFEST = Path(__file__).resolve().parents[2] / "scripts" / "fleet" / "k8s-gdrdiag.yaml"
NODE_JOB = MANIFEST.with_name("k8s-gdrdiag-nodes.yaml")
DOC = Path(__file__).resolve().parents[2] / "docs" / "fleet.md"
# a mixed fleet: (GPUs per node, nodes of that count)
SKUS = [(4, 20), (8, 12)]


def _docs():
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


def _render_text(gpus, nodes, plain=False):
    """The node Job for one GPU count, rendered as docs/fleet.md says (envsubst '$GPUS $NODES')."""
    env = dict(os.environ, GPUS=str(gpus), NODES=str(nodes))
    if shutil.which("envsubst"):
        cmd = ["envsubst"] if plain else ["envsubst", "$GPUS $NODES"]
        out = subprocess.run(cmd, input=NODE_JOB.read_text(), env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout
    # no gettext here: the same substitution (${NAME} of these two names only)
    return string.Template(NODE_JOB.read_text()).safe_substitute(GPUS=str(gpus), NODES=str(nodes))


def _node_job(gpus, nodes=16):
    (job,) = [d for d in yaml.safe_load_all(_render_text(gpus, nodes)) if d]
    return job


@pytest.mark.parametrize("version", ["1.29.0", kv.latest_version()])
def test_every_object_validates_strictly(version):
    docs = _docs()
    assert [d["kind"] for d in docs] == [
        "PersistentVolumeClaim",
        "Job",
        "DaemonSet",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    for d in docs:
        kv.validate(d, version, strict=True)
    for gpus, nodes in SKUS + [(1, 1), (2, 64)]:
        job = _node_job(gpus, nodes)
        assert job["kind"] == "Job"
        kv.validate(job, version, strict=True)


def test_the_validator_really_rejects_mistakes():
    job = _node_job(8)
    job["spec"]["completionsMode"] = "Indexed"  # typo
    with pytest.raises(kv.ValidationError):
        kv.validate(job, kv.latest_version(), strict=True)
    job = _node_job(8)
    job["spec"]["completions"] = "sixteen"
    with pytest.raises(kv.ValidationError):
        kv.validate(job, kv.latest_version(), strict=True)
    # the template itself, unrendered, is not a manifest: GPUS and NODES must be set
    (raw,) = [d for d in yaml.safe_load_all(NODE_JOB.read_text()) if d]
    with pytest.raises(kv.ValidationError):
        kv.validate(raw, kv.latest_version(), strict=True)


@pytest.mark.parametrize(("gpus", "nodes"), SKUS)
def test_node_job_requests_every_gpu_of_its_nodes(gpus, nodes):
    job = _node_job(gpus, nodes)
    assert job["metadata"]["name"] == f"gdrdiag-nodes-{gpus}gpu"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == nodes
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"gdrdiag.io/gpus": str(gpus)}  # only the nodes of this count
    assert pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (container,) = pod["containers"]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": gpus}}  # an int: every GPU
    assert container["securityContext"]["privileged"] is True
    assert "--record" in container["args"][0] and "{host}" in container["args"][0]
    # the record is named by the Kubernetes node name
    assert container["env"] == [
        {"name": "GDRDIAG_HOST", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
    ]


def test_the_gpu_counts_of_a_mixed_fleet_do_not_collide():
    jobs = [_node_job(g, n) for g, n in SKUS]
    assert len({j["metadata"]["name"] for j in jobs}) == len(jobs)
    selectors = [j["spec"]["template"]["spec"]["nodeSelector"]["gdrdiag.io/gpus"] for j in jobs]
    assert selectors == [str(g) for g, _ in SKUS]


@pytest.mark.skipif(shutil.which("envsubst") is None, reason="gettext envsubst not installed")
def test_plain_envsubst_renders_the_same():
    """Forgetting envsubst's variable list must not blank the shell's own $ words."""
    assert _render_text(4, 20, plain=True) == _render_text(4, 20)
    body = "\n".join(x for x in _render_text(8, 12).splitlines() if not x.lstrip().startswith("#"))
    assert "${" not in body and "$GPUS" not in body and "$NODES" not in body


def _kubelet_expand(text, env):
    """$(NAME) of a defined variable, as the kubelet expands command and args."""
    return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), text)


@pytest.mark.parametrize("rc", [0, 1, 2])
def test_node_pod_writes_its_record_under_the_node_name(tmp_path, rc):
    pytest.importorskip("prometheus_client")
    (container,) = _node_job(4)["spec"]["template"]["spec"]["containers"]
    script = _kubelet_expand(container["args"][0], {"GDRDIAG_HOST": "gpu-b-3"})
    script = script.replace("/results", str(tmp_path))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # gdrdiag, measuring nothing: the record from a fixture Report (the pod's --quick dropped: a saved
    # Report is not measured again, and report refuses the two together); then exit as a node would
    (bin_dir / "gdrdiag").write_text(
        '#!/bin/sh\nfor a; do shift; case "$a" in --quick|--full) ;; *) set -- "$@" "$a" ;; esac; done\n'
        f'"{sys.executable}" -m gdrdiag "$@" --from-report "{REPORTS}/baremetal_hgx.json" --quiet'
        f" > /dev/null || exit 2\nexit {rc}\n"
    )
    (bin_dir / "gdrdiag").chmod(0o755)
    # the pod's environment: GDRDIAG_HOST from spec.nodeName
    env = dict(
        os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONPATH=str(ROOT), GDRDIAG_HOST="gpu-b-3"
    )
    out = subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert (out.returncode == 0) == (rc <= 1), (
        out.stdout + out.stderr
    )  # exit 1 is a FAIL finding, not a failed pod
    assert (tmp_path / "started" / "gpu-b-3").exists()
    assert sorted(p.name for p in tmp_path.glob("gpu-b-3.*")) == ["gpu-b-3.json", "gpu-b-3.prom"]
    assert '"host":"gpu-b-3"' in (tmp_path / "gpu-b-3.json").read_text().replace(" ", "")


def test_the_docs_quote_the_files():
    doc = DOC.read_text()
    assert MANIFEST.read_text().strip() in doc, "docs/fleet.md must show the tested manifest verbatim"
    assert NODE_JOB.read_text().strip() in doc, "docs/fleet.md must show the node Job template verbatim"


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
    checks = tmp_path / "check.log"
    fakes = {
        "gdrdiag": f"#!/bin/sh\necho \"$*\" >> {checks}\necho 'NOT READY: ACS-REDIRECT 0000:17:01.0'\n"
        'exit "$CHECK_RC"\n',
        # `kubectl get node` answers with the node's labels gdrdiag.io/gpus and gdrdiag.io/nics
        "kubectl": f'#!/bin/sh\necho "$*" >> {log}\n[ "$1" != get ] || printf %s "$NODE_COUNTS"\n',
        "sleep": "#!/bin/sh\nkill -TERM $PPID\n",  # one round of the loop
    }
    for name, text in fakes.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", NODE_NAME="gpu-7", NODE_COUNTS="4/4")
    get = (
        "get node gpu-7 -o jsonpath={.metadata.labels.gdrdiag\\.io/gpus}/{.metadata.labels.gdrdiag\\.io/nics}"
    )
    subprocess.run(["/bin/sh", "-c", script], env={**env, "CHECK_RC": "1"}, capture_output=True, timeout=30)
    assert log.read_text().splitlines() == [
        get,
        "taint node gpu-7 gdrdiag.io/not-ready=true:NoSchedule --overwrite",
        "label node gpu-7 gdrdiag.io/ready=false --overwrite",
    ]
    assert checks.read_text().splitlines() == ["inspect --check --expect-gpus 4 --expect-nics 4"]
    assert not (tmp_path / "ready").exists()
    log.unlink()
    checks.unlink()
    subprocess.run(["/bin/sh", "-c", script], env={**env, "CHECK_RC": "0"}, capture_output=True, timeout=30)
    assert log.read_text().splitlines() == [
        get,
        "taint node gpu-7 gdrdiag.io/not-ready:NoSchedule-",
        "label node gpu-7 gdrdiag.io/ready=true --overwrite",
    ]
    assert (tmp_path / "ready").exists()
    # the counts are the node's own: an 8-GPU node is checked for 8; a node without the labels
    # (or with a value that is not a count) is checked without counting, and says so
    for counts, expect in (
        ("8/8", " --expect-gpus 8 --expect-nics 8"),
        ("/", ""),
        ("x/2", " --expect-nics 2"),
    ):
        checks.unlink()
        out = subprocess.run(
            ["/bin/sh", "-c", script],
            env={**env, "CHECK_RC": "0", "NODE_COUNTS": counts},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert checks.read_text().split() == f"inspect --check{expect}".split(), counts
        assert ("GPUs not counted" in out.stdout) == counts.startswith(("/", "x"))
    assert container["readinessProbe"]["exec"]["command"] == ["test", "-f", "/tmp/ready"]
    assert ds["tolerations"][0]["key"] == "gdrdiag.io/not-ready"
    # the RBAC: the pod's ServiceAccount, bound to a role that may get and patch nodes, nothing more
    assert ds["serviceAccountName"] == _by_name("gdrdiag-ready")["metadata"]["name"]
    role = next(d for d in _docs() if d["kind"] == "ClusterRole")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    binding = next(d for d in _docs() if d["kind"] == "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"][0]["name"] == ds["serviceAccountName"]
