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
        for m in ("per_call", "per_call_c", "batched", "batched_c", "batched_binding", "coalesced")
        for b, r in ((4096, 0.2), (65536, 0.8))
    ]
    results = [sweep, ref, pin, overlap, *blocks, block_summary(blocks)]
    text = render_copy_results(results)
    assert "Host<->GPU copies" in text and "Block sweep" in text and "per call (C)" in text
    assert "bindings" in text  # the batched call through cuda-bindings, its own column
    assert "Half the coalesced bandwidth" in text


class _FakeClock:
    """Stands in for the CUDA events (hw/cuda.py) so the interleaving logic runs without a GPU."""

    def __init__(self):
        self.log: list[str] = []
        self.now = 0.0

    def event(self):
        clock = self

        class Event:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return None

            def record(self, stream):
                self.at = clock.now

        return Event()


class _FakeStream:
    def __init__(self, clock):
        self.clock, self.syncs = clock, 0

    def synchronize(self):
        self.syncs += 1
        self.clock.log.append("sync")


def _fake_cuda(monkeypatch, clock):
    import types

    from gdrdiag.bench import timing

    def elapsed_ms(start, end):  # the real one waits for ``end``
        clock.log.append("wait")
        return (end.at - start.at) * 1e3

    fake = types.SimpleNamespace(Event=clock.event, elapsed_ms=elapsed_ms)
    monkeypatch.setattr(timing, "cuda", fake)


def _op(clock, name, seconds):
    def op(stream):
        clock.log.append(name)
        clock.now += seconds

    return op


def test_interleaved_timing_rotates_the_order_and_drains_before_each_call(monkeypatch):
    from gdrdiag.bench.timing import time_interleaved

    clock = _FakeClock()
    _fake_cuda(monkeypatch, clock)
    ops = {"py": _op(clock, "py", 0.001), "c": _op(clock, "c", 0.002), "bind": _op(clock, "bind", 0.004)}
    timed = time_interleaved(_FakeStream(clock), ops, iterations=3, warmup=1)
    calls = [x for x in clock.log if x not in ("sync", "wait")]
    assert calls == ["py", "c", "bind"] + ["py", "c", "bind", "c", "bind", "py", "bind", "py", "c"]
    # The warm-up waits after every call; then every timed call is waited for (through its end
    # event) before the next one starts.
    assert clock.log[:6] == ["py", "sync", "c", "sync", "bind", "sync"]
    timed_part = clock.log[clock.log.index("sync", 6) + 1 :]
    assert timed_part[1::2] == ["wait"] * 9
    for name, seconds in (("py", 0.001), ("c", 0.002), ("bind", 0.004)):
        assert timed[name].seconds == pytest.approx((seconds,) * 3)
    assert "interleaved over 3 rounds" in timed["py"].method and "drained" in timed["py"].method


def test_batched_ways_are_verified_one_by_one_then_timed_together(monkeypatch):
    """A way that is not supported is WAIVED, a wrong byte is ERROR, the rest OK; none masks another."""
    import types

    from gdrdiag.bench import copy_blocks
    from gdrdiag.errors import NotSupported

    clock = _FakeClock()
    _fake_cuda(monkeypatch, clock)
    stream = _FakeStream(clock)
    written: list[str] = []

    class Dev:
        def fill(self, value, nbytes):
            written.append("poison")

    def way(name, seconds, fail=None):
        def op(s):
            if fail:
                raise fail
            written.append(name)
            clock.now += seconds

        return op

    # The destination is checked right after each way's own single call: only "c" writes wrong bytes.
    monkeypatch.setattr(
        copy_blocks, "first_wrong_byte", lambda dev, exp, n: 7 if written[-1] == "c" else None
    )
    ctx = types.SimpleNamespace(streams=[stream], opts=CopyBenchOptions(iterations=4))
    params = CopyParams(block_bytes=4096, blocks=1000)
    issue = {"copy_blocks_batched": [0.5e-3] * 9}
    ways = [
        ("copy_blocks_batched", "py", way("py", 0.002)),
        ("copy_blocks_batched_c", "c", way("c", 0.002)),
        (
            "copy_blocks_batched_binding",
            "bind",
            way("bind", 0.004, NotSupported("no batch in these bindings")),
        ),
    ]
    rows = {r.key: r for r in copy_blocks._measure_batched(ctx, Dev(), None, params, issue, ways)}
    assert written[:4] == ["poison", "py", "poison", "c"]  # verified one by one, each into poison
    py, c, bind = (
        rows["copy_blocks_batched"],
        rows["copy_blocks_batched_c"],
        rows["copy_blocks_batched_binding"],
    )
    assert py.status is Status.OK and py.verified and len(py.samples) == 4
    assert py.value == pytest.approx(4096 * 1000 / 0.002 / 1e9)
    assert py.metrics.issue_us_per_call == pytest.approx(500.0)
    assert c.status is Status.ERROR and "offset 7" in c.reason and len(c.samples) == 4  # timed too
    assert bind.status is Status.WAIVED and bind.reason == "no batch in these bindings"


def test_batched_rows_are_not_judged_against_a_per_copy_model():
    """One batch on a drained stream takes the driver's idle path (cost grows with bytes): baseline rows.

    The per-call rows keep their per-copy judgement (CAUSE-SMALL-COPIES comes from it).
    """
    from gdrdiag.pathmodel.rows import path_of

    def row(key):
        return BenchResult(key=key, status=Status.OK, params=CopyParams(block_bytes=8192, blocks=10_000))

    for key in ("copy_blocks_batched", "copy_blocks_batched_c", "copy_blocks_batched_binding"):
        path, why = path_of(row(key))
        assert why is None and "drained stream" in path.baseline
    for key in ("copy_blocks_per_call", "copy_blocks_per_call_c", "copy_blocks_coalesced"):
        assert path_of(row(key))[0].baseline is None
