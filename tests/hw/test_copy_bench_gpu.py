"""copy-bench end to end on a real GPU, small sizes: every payload verified, nothing leaked."""

import json

import pytest
from typer.testing import CliRunner

from gdrdiag.bench import copy as copy_bench
from gdrdiag.hw import cuda

pytestmark = pytest.mark.gpu

SMALL = [
    "--full",  # every part (pinning and overlap too) and both modes, at small sizes
    "--kinds",
    "pinned,pinned-wc,registered,pageable,managed",
    "--sizes",
    "64K,4M",
    "--pin-size",
    "16M",
    "--layers",
    "4",
    "--chunk",
    "8M",
    "--blocks",
    "500",
    "--block-sizes",
    "4K,64K",
    "-n",
    "3",
    "--warmup",
    "1",
    "--no-reference",
]


def _free() -> int:
    with cuda.GpuContext(0) as gpu:
        return gpu.free_memory()[0]


def test_small_copy_bench_is_all_verified_and_releases_memory():
    free_before = _free()
    res = CliRunner().invoke(
        __import__("gdrdiag.cli", fromlist=["app"]).app, ["--json", "copy-bench", *SMALL]
    )
    assert res.exit_code == 0, res.output
    results = json.loads(res.stdout)["results"]
    statuses = {(r["key"], r["status"]) for r in results}
    errors = [r for r in results if r["status"] == "ERROR"]
    assert not errors, errors
    ok = [r for r in results if r["status"] == "OK" and r["key"] != "copy_blocks_summary"]
    assert len(ok) > 40, statuses
    assert all(r["verified"] in (True, None) for r in ok)
    assert all(r["stats"]["median"] > 0 for r in ok)
    # pinned H2D beats pageable H2D at 4 MiB
    med = {
        (
            r["params"].get("memory"),
            r["params"].get("direction"),
            r["params"].get("mode"),
            r["params"].get("size_bytes"),
        ): r["stats"]["median"]
        for r in ok
        if r["params"].get("mode")
    }
    assert med[("pinned", "h2d", "async", 4 << 20)] > med[("pageable", "h2d", "async", 4 << 20)]
    assert _free() > free_before - (64 << 20)


def test_ctrl_c_mid_case_releases_memory(monkeypatch):
    free_before = _free()
    real = copy_bench.time_stream

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(copy_bench, "time_stream", interrupted)
    opts = copy_bench.CopyBenchOptions(
        kinds=(copy_bench.MemoryKind.PINNED,),
        sizes=(64 << 20,),
        parts=("sweep",),
        reference=False,
        iterations=2,
    )
    with pytest.raises(KeyboardInterrupt):
        copy_bench.run_copy_bench(opts)
    assert _free() > free_before - (64 << 20)
