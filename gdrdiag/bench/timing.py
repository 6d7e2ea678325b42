"""How gdrdiag times device work, and the words that describe it in every result.

Method (after nvbandwidth's "Measurement Details", see docs/measurement.md):

- Work is timed with CUDA events recorded on the same stream around each iteration, so the
  interval is GPU time, not host time.
- Optionally a *spin gate* holds the stream: a tiny kernel spins on a flag in mapped pinned
  memory while all timed iterations are queued behind it, then the host releases the flag.
  The GPU then runs the iterations back to back and host enqueue cost is excluded. The gate
  has a cycle timeout so a stream can never hang.
- Warm-up iterations run first and are discarded; every timed sample is kept and the median
  is the headline (robust to the odd slow sample).
- Host-synchronous operations (pageable copies, pinning on demand) are timed with
  ``time.perf_counter`` around the call, because that is what the caller waits for.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from gdrdiag.hw import cuda, nvrtc
from gdrdiag.model.results import SampleStats

# About 5 s at 2 GHz: longer than any gated batch we queue, short enough to never look hung.
GATE_TIMEOUT_CYCLES = 10_000_000_000
# Each gated iteration queues 2 events + its work; the driver's stream queue holds roughly a
# thousand entries before cuLaunchKernel/cuMemcpyAsync block (which would deadlock behind the
# gate until its timeout), so gated batches stay well below that.
MAX_GATED_QUEUE_ENTRIES = 600


@dataclass(frozen=True)
class Timed:
    """Samples in seconds per iteration, and the method that produced them."""

    seconds: tuple[float, ...]
    method: str

    @property
    def stats(self) -> SampleStats:
        """Summary of the samples (in seconds)."""
        return SampleStats.of(self.seconds)


class SpinGate:
    """Holds a stream behind a spinning kernel until :meth:`release` (see module docstring)."""

    def __init__(self, gpu: cuda.GpuContext):
        drv = cuda.driver()
        self._module = nvrtc.load("spin_gate", gpu.arch)
        self._kernel = self._module.function("spin_gate")
        self._flag_host = int(
            cuda.call(
                cuda.driver().cuMemHostAlloc, 4, drv.CU_MEMHOSTALLOC_DEVICEMAP | drv.CU_MEMHOSTALLOC_PORTABLE
            )
        )
        self._flag_dev = int(cuda.call(cuda.driver().cuMemHostGetDevicePointer, self._flag_host, 0))
        self._flag = ctypes.c_int.from_address(self._flag_host)
        self._flag.value = 0

    def hold(self, stream: cuda.Stream) -> None:
        """Queue the spinning kernel on ``stream``."""
        self._flag.value = 0
        cuda.launch(
            self._kernel,
            1,
            1,
            [(self._flag_dev, ctypes.c_void_p), (GATE_TIMEOUT_CYCLES, ctypes.c_longlong)],
            stream,
        )

    def release(self) -> None:
        """Let the held stream run."""
        self._flag.value = 1

    def close(self) -> None:
        """Release the stream and free the flag and module (idempotent)."""
        if self._flag_host:
            self._flag.value = 1
            cuda.call(cuda.driver().cuCtxSynchronize)
            cuda.call(cuda.driver().cuMemFreeHost, self._flag_host)
            self._flag_host = 0
            self._module.close()

    def __enter__(self) -> "SpinGate":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def time_stream(
    stream: cuda.Stream,
    op: Callable[[cuda.Stream], None],
    *,
    iterations: int,
    warmup: int = 2,
    gate: Optional[SpinGate] = None,
    what: str = "",
    sync_each: bool = False,
) -> Timed:
    """Time ``op(stream)`` with CUDA events, ``iterations`` samples after ``warmup`` runs.

    With a ``gate`` the iterations are queued behind it and run back to back (enqueue cost
    excluded); without one each sample includes whatever the host adds between events, which
    is right for work whose per-call API cost is the point (many small copies). ``sync_each``
    waits for each iteration before queuing the next (how CuPy's and PyTorch's reference loops
    time, so a comparison with them uses the same method); it cannot be combined with a gate.
    """
    if sync_each and gate is not None:
        raise ValueError("sync_each waits per iteration: a gated stream would never run")
    for _ in range(warmup):
        op(stream)
    stream.synchronize()
    events = [(cuda.Event(), cuda.Event()) for _ in range(iterations)]
    try:
        if gate is not None:
            gate.hold(stream)
        try:
            for start, end in events:
                start.record(stream)
                op(stream)
                end.record(stream)
                if sync_each:
                    end.synchronize()
        finally:
            if gate is not None:
                gate.release()
        stream.synchronize()
        seconds = tuple(cuda.elapsed_ms(s, e) / 1e3 for s, e in events)
    finally:
        for start, end in events:
            start.close()
            end.close()
    gated = (
        "queued behind a spin-gate kernel (enqueue cost excluded)" if gate else "host enqueue cost included"
    )
    if sync_each:
        gated += ", each iteration waited for before the next"
    method = (
        f"CUDA events around each iteration on one stream, {gated}; {warmup} warm-up, "
        f"{iterations} samples kept, median reported"
    )
    return Timed(seconds, f"{what}: {method}" if what else method)


def time_interleaved(
    stream: cuda.Stream,
    ops: dict[str, Callable[[cuda.Stream], None]],
    *,
    iterations: int,
    warmup: int = 1,
) -> dict[str, Timed]:
    """Time several ways of doing the same work on one stream, in interleaved rounds.

    Every call starts on a drained stream (events around it, waited for before the next call), and
    round i runs each op once, the order rotated by one each round: drift on a shared machine (a
    co-tenant, the CPU's clock) falls on every op alike, and no op's sample depends on how soon the
    op before it returned. For copy-bench's batched rows (the same driver call from Python, from C
    and through cuda-bindings), whose cost depends on whether the stream is busy when it is made.
    """
    names = list(ops)
    for _ in range(warmup):
        for name in names:
            ops[name](stream)
            stream.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in names}
    stream.synchronize()
    for i in range(iterations):
        k = i % len(names) if names else 0
        for name in names[k:] + names[:k]:
            with cuda.Event() as start, cuda.Event() as end:
                start.record(stream)
                ops[name](stream)
                end.record(stream)
                samples[name].append(elapsed_seconds(start, end))
    method = (
        f"CUDA events around each call on one stream, each waited for before the next (the stream "
        f"drained at every call); {', '.join(names)} interleaved over {iterations} rounds, the order "
        f"rotated each round; {warmup} warm-up, median reported"
    )
    return {name: Timed(tuple(samples[name]), method) for name in names}


def elapsed_seconds(start: cuda.Event, end: cuda.Event) -> float:
    """Seconds between two recorded events (waits for ``end``)."""
    return cuda.elapsed_ms(start, end) / 1e3


def time_host(fn: Callable[[], None], *, iterations: int, warmup: int = 1, what: str = "") -> Timed:
    """Time a host-synchronous call with ``time.perf_counter`` (wall clock)."""
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - t0)
    method = (
        f"wall clock (perf_counter) around the synchronous call; {warmup} warm-up, "
        f"{iterations} samples kept, median reported"
    )
    return Timed(tuple(seconds), f"{what}: {method}" if what else method)


def gated_iterations(requested: int, entries_per_iteration: int = 3) -> int:
    """Cap gated iterations so the queued work fits the stream queue (see MAX_GATED_QUEUE_ENTRIES)."""
    return max(1, min(requested, MAX_GATED_QUEUE_ENTRIES // max(1, entries_per_iteration)))
