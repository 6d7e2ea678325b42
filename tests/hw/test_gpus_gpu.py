"""``--gpus all`` on a real node: each GPU measured in turn, every row naming its GPU by ordinal and address.

Runs on the GPU machine (one GPU or several); skipped with the reason where CUDA is unusable. The
checks are structural (which GPU each row ran on, its PCI address from the machine facts, a verdict
per GPU) and one loose physical one: a pinned 64 MiB copy moves at least 5 GB/s on any PCIe GPU.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from tests.conftest import gpu_count

pytestmark = pytest.mark.gpu
runner = CliRunner()


@pytest.fixture(scope="module")
def gpus() -> int:
    n = gpu_count()
    if n == 0:
        pytest.skip("no usable CUDA GPU here")
    return n


def test_copy_bench_gpus_all_measures_each_gpu_and_names_it(gpus, tmp_path):
    out = tmp_path / "copy.json"
    args = ["copy-bench", "--gpus", "all", "--kinds", "pinned", "--directions", "h2d,d2h", "--sizes", "64M"]
    res = runner.invoke(app, [*args, "--parts", "sweep", "--iters", "5", "--quiet", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    rows = [r for r in report["results"] if r["status"] == "OK" and not r["key"].endswith("_together")]
    by_gpu = {}
    for r in rows:
        by_gpu.setdefault(r["params"].get("gpu", 0), []).append(r)
    assert sorted(by_gpu) == list(range(gpus))
    addresses = {g["cuda_ordinal"]: g["bdf"] for g in report["machine"]["gpus"]}
    for ordinal, mine in by_gpu.items():
        assert len(mine) == 2
        for r in mine:
            assert r["settings"]["gpu_bdf"] == addresses[ordinal]
            assert r["stats"]["median"] > 5.0
    if gpus > 1:
        assert "GPUs side by side" in res.output
        for ordinal in range(gpus):
            assert f"GPU {ordinal} ({addresses[ordinal]})" in res.output
    if gpus > 1:  # every GPU at once, beside the sum of the GPUs alone
        together = [r for r in report["results"] if r["key"].endswith("_together")]
        assert {r["key"] for r in together} == {"copy_h2d_pinned_together", "copy_d2h_pinned_together"}
        for r in together:
            assert r["status"] == "OK" and r["verified"] is True, r
            assert r["params"]["streams"] == gpus and r["params"].get("gpu") is None
            assert 0.2 < r["metrics"]["ratio_to_sum_alone"] < 1.3
