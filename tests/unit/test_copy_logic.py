import pytest

from gdrdiag.bench.copy import planned_case_count
from gdrdiag.bench.copy_blocks import block_summary, half_bandwidth_block_size
from gdrdiag.bench.copy_config import CopyBenchOptions
from gdrdiag.errors import UserInputError
from gdrdiag.model.params import CopyMetrics, CopyParams
from gdrdiag.model.results import BenchResult, Status


def test_half_bandwidth_interpolates_in_log_size():
    # ratio 0.25 at 4 KiB, 0.75 at 16 KiB -> halfway in log2 space = 8 KiB
    assert half_bandwidth_block_size([(16384, 0.75), (4096, 0.25)]) == pytest.approx(8192)


def test_half_bandwidth_edges():
    assert half_bandwidth_block_size([(128, 0.6), (256, 0.9)]) == 128
    assert half_bandwidth_block_size([(128, 0.1), (256, 0.2)]) is None


def test_block_summary_uses_only_ok_results():
    def r(key, bs, ratio, status=Status.OK):
        return BenchResult(
            key=key,
            status=status,
            params=CopyParams(block_bytes=bs),
            metrics=CopyMetrics(ratio_to_coalesced=ratio),
        )

    results = [
        r("copy_blocks_per_call", 4096, 0.2),
        r("copy_blocks_per_call", 65536, 0.8),
        r("copy_blocks_batched", 4096, 0.9, Status.ERROR),
    ]
    s = block_summary(results)
    assert s.metrics.half_bandwidth_block_bytes_per_call == pytest.approx(2 ** (12 + 4 * 0.5))
    assert s.metrics.half_bandwidth_block_bytes_batched is None


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(directions=("up",)),
        dict(modes=("fast",)),
        dict(parts=("x",)),
        dict(iterations=0),
        dict(overlap_layers=1),
        dict(block_count=0),
        dict(sizes=(1 << 50,)),
        dict(pin_size=1 << 50),
    ],
)
def test_options_validation(kwargs):
    with pytest.raises(UserInputError):
        CopyBenchOptions(**kwargs).validate()


def test_planned_case_count_matches_the_sweep_shape():
    opts = CopyBenchOptions(sizes=(4096, 8192), parts=("sweep",), reference=False)
    # 5 kinds x (h2d async, h2d sync, d2h async, d2h sync, bidir async) x 2 sizes
    assert planned_case_count(opts) == 5 * 5 * 2


def test_every_copy_table_section_renders_from_typed_results():
    """The renderer reads typed params/metrics (a GPU run is where these rows come from)."""
    from gdrdiag.bench.copy_blocks import block_summary
    from gdrdiag.model.params import CopyMetrics, CopyParams
    from gdrdiag.model.results import BenchResult, SampleStats, Status
    from gdrdiag.model.vocabulary import Direction, MemoryKind
    from gdrdiag.render.copy_table import render_copy_results

    def ok(key, params, value=10.0, **metrics):
        return BenchResult(
            key=key,
            status=Status.OK,
            params=params,
            unit="GB/s",
            samples=(value,),
            stats=SampleStats.of([value]),
            metrics=CopyMetrics(**metrics),
            provider="cuda",
            verified=True,
        )

    sweep = ok(
        "copy_h2d_pinned",
        CopyParams(memory=MemoryKind.PINNED, direction=Direction.H2D, mode="async", size_bytes=1 << 20),
    )
    ref = ok(
        "copy_h2d_pinned_reference",
        CopyParams(size_bytes=1 << 20, library="cupy"),
        gdrdiag_over_reference=1.0,
    )
    pin = ok(
        "copy_pinning_preallocated",
        CopyParams(size_bytes=1 << 20, direction=Direction.H2D),
        ratio_to_preallocated=1.0,
    )
    overlap = ok(
        "copy_overlap_two_streams",
        CopyParams(layers=8, chunk_bytes=1 << 20, streams=2),
        speedup_vs_one_stream=1.8,
        parts_sum_ms=2.0,
    )
    blocks = [
        ok(
            f"copy_blocks_{m}",
            CopyParams(block_bytes=b, blocks=100),
            us_per_block=1.0,
            ratio_to_coalesced=r,
            issue_us_per_call=0.5,
        )
        for m in ("per_call", "per_call_c", "batched", "batched_c", "coalesced")
        for b, r in ((4096, 0.2), (65536, 0.8))
    ]
    results = [sweep, ref, pin, overlap, *blocks, block_summary(blocks)]
    text = render_copy_results(results)
    assert "Host<->GPU copies" in text and "Block sweep" in text and "per call (C)" in text
    assert "Half the coalesced bandwidth" in text
