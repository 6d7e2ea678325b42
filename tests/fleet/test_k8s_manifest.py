"""The Kubernetes recipe validates against the Kubernetes OpenAPI schema (kubernetes-validate, strict).

No cluster and no kubectl: kubernetes-validate bundles the JSON schemas of each Kubernetes
release. Strict mode also rejects unknown fields (a typo such as ``completionsMode``).
"""

from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
kv = pytest.importorskip("kubernetes_validate")

MANIFEST = Path(__file__).resolve().parents[2] / "scripts" / "fleet" / "k8s-gdrdiag.yaml"
DOC = Path(__file__).resolve().parents[2] / "docs" / "fleet.md"


def _docs():
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


@pytest.mark.parametrize("version", ["1.29.0", kv.latest_version()])
def test_every_object_validates_strictly(version):
    docs = _docs()
    assert [d["kind"] for d in docs] == ["PersistentVolumeClaim", "Job", "Job", "DaemonSet"]
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
