"""A PCIe read-efficiency model for zero-copy gathers, against the copy engine. Pure functions.

What goes over the link in the host->GPU direction when the GPU *reads* host memory is
completions: each read request is answered by one or more completion TLPs carrying data, and
each costs a fixed overhead on top of its payload: a 12-B completion header (PCIe Base Spec r5.0
sec. 2.2.9) and 8 B of framing, sequence number and LCRC (sec. 4.2.2, 3.6) = 20 B; ECRC would add
4. Read requests travel the other way, so they cost the H2D direction nothing; they matter only
for tags and latency (the request rate below).

Rules the model applies (PCIe Base Spec r5.0 2.3.1.1 "Data Return for Read
Requests", 2.2.7 "no request crosses a 4 KiB boundary"):

- a completion never carries more than MPS bytes;
- a request may be answered in several completions, split only at RCB-aligned addresses (64 or
  128 B); the completer is assumed to return the largest completions the rules allow;
- a request never exceeds MRRS and never crosses a 4 KiB boundary.

How requests are formed depends on who reads (the ``mode``):

- ``ce``: the copy engine reads long aligned ranges in MRRS-sized requests, so completions are
  MPS-sized. This is the reference every gather is divided by.
- ``sector``: SM loads (gather_warp .. gather_lines). A warp instruction's addresses are coalesced
  per 128-B line; each (instruction, line) pair becomes one request for the 32-B sectors it
  touches (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory": 32-B sectors). A
  line split between two instructions costs two requests. ``line_aware`` kernels start their
  512-B instructions on 128-B line boundaries, so no line is split.
- ``line``: as ``sector`` but every touched line is fetched whole (an earlier
  assumption); kept so measurements can decide between the two.
- ``bulk``: one request per record cover (TMA bulk copies; whether the GPU really issues them
  this way is what gather_bulk measures).

Link-level overheads that scale every TLP stream alike (DLLPs, SKP ordered sets) cancel in the
ratio to the copy engine, which is why the model predicts *ratios to CE*, not absolute GB/s.

One limit is not the wire's: read *requests* per second. Reads of 16 and 32 B, one request
each, ran at 0.60-0.75 G requests/s on the H100 VM, where the wire would carry 1.1 G/s of them,
and 64-B reads at 0.62-0.67 G/s, under both that and the wire's ~0.70 G/s (docs/benchmarks.md,
"small reads: a request rate"). ``request_cap`` caps a read plan at
``LinkParams.read_requests_per_ns``; it needs the copy engine's absolute rate, so it is applied
where one was measured (bench/gather_analysis.model_metrics), to every read plan whose requests
are counted exactly (the planned kernels' sector plans, bench/gather_requests.py, included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

LINE = 128  # GPU L2 line / coalescing unit (CUDA Best Practices Guide, "Coalesced Access")
SECTOR = 32  # GPU memory transaction granularity (same guide: 32-byte sectors)
PAGE = 4096  # PCIe requests never cross a 4 KiB boundary (PCIe Base Spec 2.2.7)
INSTRUCTION_BYTES = 512  # a warp of 32 lanes x 16-B loads (native/gather.cu)

MODES = ("ce", "sector", "line", "bulk")


@dataclass(frozen=True)
class LinkParams:
    """The PCIe settings the model needs, with the values read on the H200 VM (docs/gather-bench.md)."""

    mps: int = 256  # Max Payload Size: largest completion payload
    mrrs: int = 4096  # Max Read Request Size of the reader
    rcb: int = 128  # Read Completion Boundary of the completer (root port), 64 or 128
    # Bytes per completion TLP besides payload: 3-DW header 12 B + framing/sequence/LCRC 8 B
    # (PCIe Base Spec r5.0 sec. 2.2.9, 4.2.2, 3.6) + ~2 B of ACK/flow-control DLLPs per TLP: 22 B.
    # Fitted on the H200 (docs/gather-bench.md): 22-24 B matches 640-B and 656-B gathers within 1%.
    cpl_overhead: int = 22
    # Read requests the path from the GPU to host memory serves per nanosecond (G/s), whatever
    # their size; None = no such limit. gather-bench measures it in every run that gathers
    # records under 128 B (its request-rate calibration, bench/gather.py: 0.746-0.748 G/s on the
    # H100, docs/benchmarks.md) and sets it here; 0.75 is the default elsewhere, as
    # first measured on the H100 VM (docs/benchmarks.md "small reads: a request rate"): 16- and
    # 32-B reads, one request each (warp and lines kernels, random order, four record-size
    # sweeps; scripts/gpu_gather_calibrate.py's isolated reads, three runs) ran at 0.56-0.75
    # G/s; the slower rows came in disturbed stretches or over 8x larger tables, and
    # interference only slows, so the fastest is the limit. It replaces the 4 B "small
    # completion" surcharge fitted before: that matched isolated 48- and 64-B reads, but not 16-
    # and 32-B ones (one request rate, half the bytes) nor the planned kernels' merged 64-B
    # reads, which ran 1-2% over a ceiling with it and within 0.5% of the wire alone once their
    # batches overlapped.
    read_requests_per_ns: Optional[float] = 0.75

    def __post_init__(self) -> None:
        for name in ("mps", "mrrs", "rcb"):
            v = getattr(self, name)
            if v <= 0 or v & (v - 1):
                raise ValueError(f"{name} must be a power of two, got {v}")
        if self.rcb not in (64, 128):
            raise ValueError(f"rcb must be 64 or 128, got {self.rcb}")
        if self.mps < self.rcb:
            raise ValueError("mps must be at least rcb")
        if self.cpl_overhead < 0:
            raise ValueError("cpl_overhead must be >= 0")
        if self.read_requests_per_ns is not None and self.read_requests_per_ns <= 0:
            raise ValueError("read_requests_per_ns must be > 0 (or None for no request limit)")


@dataclass(frozen=True)
class Efficiency:
    """Totals for a set of records: useful bytes, bytes on the wire (payload + overhead)."""

    useful: int
    wire: int
    requests: int
    completions: int
    records: int
    overhead: int = 0  # the part of ``wire`` that is not payload

    @property
    def efficiency(self) -> float:
        """Useful bytes per byte on the wire (0..1)."""
        return self.useful / self.wire if self.wire else 0.0


def completion_sizes(addr: int, length: int, p: LinkParams) -> list[int]:
    """Payloads of the completions answering one read request of ``length`` bytes at ``addr``.

    The completer returns as much as it may in each completion: all that is left when it fits in
    MPS, else up to the last RCB boundary within MPS bytes (PCIe 2.3.1.1).
    """
    if length <= 0:
        return []
    out = []
    pos, end = addr, addr + length
    while pos < end:
        if end - pos <= p.mps:
            out.append(end - pos)
            break
        cut = (pos + p.mps) // p.rcb * p.rcb
        if cut <= pos:  # cannot happen with mps >= rcb, kept as a guard
            cut = pos + p.mps
        out.append(cut - pos)
        pos = cut
    return out


def split_request(addr: int, length: int, p: LinkParams) -> list[tuple[int, int]]:
    """Cut a range into requests of at most MRRS bytes that do not cross 4 KiB boundaries."""
    out = []
    pos, end = addr, addr + length
    while pos < end:
        nxt = min(end, (pos // PAGE + 1) * PAGE, pos + p.mrrs)
        out.append((pos, nxt - pos))
        pos = nxt
    return out


def _sm_requests(lo: int, hi: int, window_start: int, mode: str) -> list[tuple[int, int]]:
    """Requests SM loads make for bytes [lo, hi) read by 512-B instructions from window_start."""
    reqs = []
    a = lo - (lo - window_start) % 16  # loads are 16-B chunks aligned to the instruction window
    b = hi + (-hi) % 16
    first_instr = (a - window_start) // INSTRUCTION_BYTES
    last_instr = (b - 1 - window_start) // INSTRUCTION_BYTES
    for t in range(first_instr, last_instr + 1):
        ia = max(a, window_start + t * INSTRUCTION_BYTES)
        ib = min(b, window_start + (t + 1) * INSTRUCTION_BYTES)
        line = ia // LINE * LINE
        while line < ib:
            x, y = max(ia, line), min(ib, line + LINE)
            if mode == "line":
                reqs.append((line, LINE))
            else:
                s0 = x // SECTOR * SECTOR
                s1 = -(-y // SECTOR) * SECTOR
                reqs.append((s0, s1 - s0))
            line += LINE
    return reqs


def range_requests(
    start: int, length: int, mode: str, *, line_aware: bool, p: LinkParams
) -> list[tuple[int, int]]:
    """Read requests for one contiguous source range (a record, or a merged run of records)."""
    if mode not in MODES or mode == "ce":
        raise ValueError(f"mode must be one of sector, line, bulk; got {mode!r}")
    if length <= 0:
        return []
    if mode == "bulk":
        a = start // 16 * 16
        b = -(-(start + length) // 16) * 16
        return split_request(a, b - a, p)
    window = start // LINE * LINE if line_aware else start // 16 * 16
    return _sm_requests(start, start + length, window, mode)


def segments_efficiency(
    segments: Mapping[tuple[int, int], int], record_bytes: int, mode: str, *, line_aware: bool, p: LinkParams
) -> Efficiency:
    """Totals over ``segments``: {(start address mod 4096, records in the run): count}.

    A run of ``k`` records is read as one contiguous range of ``k * record_bytes`` (only kernels
    that merge consecutive slots produce k > 1); random indices give runs of one.
    """
    useful = wire = overhead = nreq = ncpl = nrec = 0
    for (offset, k), count in segments.items():
        if count <= 0:
            continue
        length = k * record_bytes
        reqs = range_requests(offset, length, mode, line_aware=line_aware, p=p)
        cpls = [c for a, n in reqs for c in completion_sizes(a, n, p)]
        extra = len(cpls) * p.cpl_overhead
        useful += count * length
        wire += count * (sum(cpls) + extra)
        overhead += count * extra
        nreq += count * len(reqs)
        ncpl += count * len(cpls)
        nrec += count * k
    return Efficiency(useful, wire, nreq, ncpl, nrec, overhead)


def sector_runs(mask: int) -> list[tuple[int, int]]:
    """(first sector, sectors) of each contiguous run of set bits in a line's 4-bit sector mask.

    One PCIe read request covers one contiguous range (PCIe Base Spec r5.0 sec. 2.2.7; its byte
    enables mask only its first and last DW, sec. 2.2.5), so sectors with a gap between them
    take a request each.
    """
    runs, start = [], None
    for s in range(LINE // SECTOR + 1):
        on = s < LINE // SECTOR and (mask >> s) & 1
        if on and start is None:
            start = s
        elif not on and start is not None:
            runs.append((start, s - start))
            start = None
    return runs


def sector_mask_efficiency(
    mask_counts: Sequence[int], useful: int, records: int, p: LinkParams
) -> Efficiency:
    """Totals for (instruction, line) requests given as counts per 4-bit sector mask.

    ``mask_counts[m]`` (m = 0..15) lines had sectors ``m`` requested by one instruction; each
    contiguous run of them is one request (:func:`sector_runs`), answered by completions as
    :func:`completion_sizes` allows (one, for MPS >= 128). ``useful`` bytes were delivered by them.
    """
    wire = overhead = nreq = ncpl = 0
    for m, count in enumerate(mask_counts):
        if count <= 0 or m == 0:
            continue
        for first, n in sector_runs(m):
            for a, length in split_request(first * SECTOR, n * SECTOR, p):
                cpls = completion_sizes(a, length, p)
                nreq += count
                ncpl += count * len(cpls)
                wire += count * (sum(cpls) + len(cpls) * p.cpl_overhead)
                overhead += count * len(cpls) * p.cpl_overhead
    return Efficiency(useful, wire, nreq, ncpl, records, overhead)


def ce_efficiency(p: LinkParams, nbytes: int = 1 << 26) -> float:
    """Efficiency of the copy engine's long, 4 KiB-aligned read of ``nbytes``."""
    page = segments_efficiency({(0, 1): 1}, min(nbytes, PAGE), "bulk", line_aware=True, p=p)
    return page.efficiency


def whole_line_efficiency(p: LinkParams) -> float:
    """Efficiency if every SM request were a whole 128-B line: the SM path's best case."""
    return LINE / (LINE + p.cpl_overhead)


def offset_histogram(stride: int, base_offset: int, slots: int) -> dict[int, float]:
    """Start addresses mod 4096 of uniformly random slots: {offset: probability}.

    Slot k starts at base + k * stride; mod 4096 that repeats every 4096 / gcd(stride, 4096)
    slots, so uniform random slots are uniform over one period (exactly when slots is a multiple
    of the period; the error otherwise is below period / slots).
    """
    period = PAGE // math.gcd(stride, PAGE)
    n = min(period, max(1, slots))
    hist: dict[int, float] = {}
    for k in range(n):
        off = (base_offset + k * stride) % PAGE
        hist[off] = hist.get(off, 0.0) + 1.0 / n
    return hist


@dataclass(frozen=True)
class Prediction:
    """What the model says about one layout read by one kind of kernel."""

    mode: str
    line_aware: bool
    efficiency: float  # useful / wire
    ce_efficiency: float
    ratio_to_ce: float  # the best gather/CE this layout allows
    partial_line_loss: float  # fraction lost against whole-line completions (SM modes)
    requests_per_record: float
    completions_per_record: float
    mean_completion_payload: float


def predict(
    segments: Mapping[tuple[int, int], float],
    record_bytes: int,
    mode: str,
    *,
    line_aware: bool,
    p: LinkParams,
) -> Prediction:
    """Predict efficiency and the ratio to CE for a segment histogram (counts or probabilities)."""
    if record_bytes <= 0:
        raise ValueError("record_bytes must be > 0")
    # Scale probabilities to integer counts so totals stay exact.
    scaled = {
        key: int(round(v * 1_000_000)) if isinstance(v, float) else int(v) for key, v in segments.items()
    }
    eff = segments_efficiency(scaled, record_bytes, mode, line_aware=line_aware, p=p)
    return prediction_of(eff, mode, line_aware=line_aware, p=p)


def prediction_of(eff: Efficiency, mode: str, *, line_aware: bool, p: LinkParams) -> Prediction:
    """The Prediction for wire totals ``eff`` of reads made the ``mode`` way."""
    ce = ce_efficiency(p)
    ideal = whole_line_efficiency(p) if mode in ("sector", "line") else ce
    e = eff.efficiency
    payload = (eff.wire - eff.overhead) / eff.completions if eff.completions else 0.0
    return Prediction(
        mode=mode,
        line_aware=line_aware,
        efficiency=e,
        ce_efficiency=ce,
        ratio_to_ce=e / ce if ce else 0.0,
        partial_line_loss=max(0.0, 1.0 - e / ideal) if ideal else 0.0,
        requests_per_record=eff.requests / eff.records if eff.records else 0.0,
        completions_per_record=eff.completions / eff.records if eff.records else 0.0,
        mean_completion_payload=payload,
    )


def predict_random(
    record_bytes: int,
    stride: int,
    base_offset: int,
    slots: int,
    mode: str,
    *,
    line_aware: bool,
    p: LinkParams,
) -> Prediction:
    """Prediction for uniformly random single records (no merging) of a table layout."""
    hist = offset_histogram(stride, base_offset, slots)
    return predict(
        {(off, 1): prob for off, prob in hist.items()}, record_bytes, mode, line_aware=line_aware, p=p
    )


def predict_runs(
    record_bytes: int,
    base_offset: int,
    run_records: int,
    mode: str,
    *,
    line_aware: bool,
    p: LinkParams,
    slots: int = 1 << 20,
) -> Prediction:
    """Prediction for packed records read as merged runs of ``run_records`` consecutive slots."""
    hist = offset_histogram(record_bytes, base_offset, slots)
    return predict(
        {(off, max(1, run_records)): prob for off, prob in hist.items()},
        record_bytes,
        mode,
        line_aware=line_aware,
        p=p,
    )


def padded_stride(record_bytes: int) -> int:
    """The stride that makes every record start on a 128-B line: R rounded up to 128."""
    return -(-record_bytes // LINE) * LINE


def ce_run_ratio(run_bytes: int, ce_gbytes_per_s: float, call_overhead_us: float = 2.0) -> float:
    """Fraction of CE bandwidth one cuMemcpyAsync per run reaches: t = t_call + b / BW (a cost per call)."""
    if run_bytes <= 0 or ce_gbytes_per_s <= 0:
        return 0.0
    t_copy = run_bytes / (ce_gbytes_per_s * 1e9)
    return t_copy / (t_copy + call_overhead_us * 1e-6)


def best_alternatives(
    record_bytes: int,
    stride: int,
    base_offset: int,
    slots: int,
    mode: str,
    *,
    line_aware: bool,
    p: LinkParams,
) -> dict[str, Optional[float]]:
    """Model ratios to CE of the layout changes ALIGN findings can advise, by name."""
    out: dict[str, Optional[float]] = {}
    out["as_is"] = predict_random(
        record_bytes, stride, base_offset, slots, mode, line_aware=line_aware, p=p
    ).ratio_to_ce
    pad = padded_stride(record_bytes)
    out["padded_stride"] = predict_random(
        record_bytes, pad, 0, slots, mode, line_aware=line_aware, p=p
    ).ratio_to_ce
    out["aligned_base"] = predict_random(
        record_bytes, stride, base_offset - base_offset % LINE, slots, mode, line_aware=line_aware, p=p
    ).ratio_to_ce
    out["runs_of_8"] = (
        predict_runs(record_bytes, base_offset, 8, mode, line_aware=True, p=p).ratio_to_ce
        if stride == record_bytes and record_bytes % 16 == 0
        else None
    )
    return out


def iter_modes() -> Iterable[str]:
    """The request modes the model knows."""
    return iter(MODES)


def request_cap(
    useful_bytes_per_request: float, ce_gbytes_per_s: Optional[float], p: LinkParams
) -> Optional[float]:
    """The most ``p.read_requests_per_ns`` allows, as a ratio to CE (module docstring).

    At Q requests per ns a plan moving ``useful_bytes_per_request`` per request delivers at most
    Q x that GB/s; as a ratio to the copy engine, that over ``ce_gbytes_per_s``. None without a CE
    rate or a request limit.
    """
    if not ce_gbytes_per_s or p.read_requests_per_ns is None or useful_bytes_per_request <= 0:
        return None
    return p.read_requests_per_ns * useful_bytes_per_request / ce_gbytes_per_s


# What a gather batch costs besides its reads: its launch, the first requests' round trip and the
# last warps' tail. Fitted on four H100 record-size sweeps (16 B-4 KiB, both patterns) and held
# unchanged on the H200 (docs/benchmarks.md, "the copy engine's cost per copy"); planned-flat
# batches of 4096 to 262144 records measured 1.0-2.3 us of it directly.
BATCH_FIXED_US = 3.0


def batch_ratio(
    link_ratio_to_ce: float,
    cap: Optional[float],
    nbytes: int,
    ce_gbytes_per_s: Optional[float],
    ce_fixed_us: Optional[float],
    batch_fixed_us: float = BATCH_FIXED_US,
) -> float:
    """Ratio to the CE of one batch of ``nbytes`` that reads at ``link_ratio_to_ce``, capped at ``cap``.

    The copy-engine reference pays a cost per copy (``ce_fixed_us``, measured in the run from
    copies of two sizes): a 4 MiB copy ran at 50-52.5 GB/s where 64 MiB ran at 55 (H100 and H200,
    docs/benchmarks.md). The link's own rate is the CE's without it, and a kernel pays its own
    fixed cost, ``batch_fixed_us``, instead. So the batch takes the longer of its wire time plus
    that cost and its request time (``cap``: what the read-request rate allows, as a ratio to the
    CE), and the ratio is the CE's time over the batch's. Without a measured CE cost (None) the
    two fixed costs are taken as proportional to the bytes: min(link ratio, cap), the model as it
    was before the copy engine's cost was measured.
    """
    capped = link_ratio_to_ce if cap is None else min(link_ratio_to_ce, cap)
    if ce_fixed_us is None or not ce_gbytes_per_s or nbytes <= 0 or link_ratio_to_ce <= 0:
        return capped
    t_ce = nbytes / (ce_gbytes_per_s * 1e3)  # us
    t_link = max(t_ce - max(0.0, ce_fixed_us), 0.5 * t_ce)  # the CE's bytes at the link's own rate
    t_batch = t_link / link_ratio_to_ce + max(0.0, batch_fixed_us)
    if cap:
        t_batch = max(t_batch, t_ce / cap)
    return t_ce / t_batch


def fixed_cost_of_two_copies(small_bytes: int, small_s: float, large_bytes: int, large_s: float) -> float:
    """The cost per copy in t = fixed + bytes / rate, from copies of two sizes (seconds in, us out; >= 0)."""
    if large_bytes <= small_bytes or small_s <= 0 or large_s <= 0:
        raise ValueError("need two positive times and large_bytes > small_bytes")
    fixed_s = (small_s * large_bytes - large_s * small_bytes) / (large_bytes - small_bytes)
    return max(0.0, fixed_s * 1e6)


def ratio_with_fixed_cost(
    link_ratio_to_ce: float, nbytes: int, ce_gbytes_per_s: float, fixed_us: float
) -> float:
    """Ratio to CE of a kernel reading at ``link_ratio_to_ce`` plus ``fixed_us`` of other work per batch.

    The fixed work (a sort or bucketing step) does not overlap the reads of ``nbytes``:
    t = nbytes / (ratio x CE) + fixed; the ratio is nbytes / t / CE. This is the sort's cost term:
    with it the model predicts a sort-first kernel, not just the link it reads over.
    """
    if link_ratio_to_ce <= 0 or nbytes <= 0 or ce_gbytes_per_s <= 0:
        return 0.0
    ce = ce_gbytes_per_s * 1e9
    t = nbytes / (link_ratio_to_ce * ce) + max(0.0, fixed_us) * 1e-6
    return nbytes / t / ce


def reuse_for_fraction(
    link_ratio_to_ce: float, nbytes: int, ce_gbytes_per_s: float, plan_us: float, fraction: float = 0.99
) -> int:
    """Fewest batches one plan must serve so the kernel keeps ``fraction`` of its link ceiling.

    From t = t_link + plan / K: K >= plan / (t_link (1 / fraction - 1)).
    """
    if not 0 < fraction < 1 or link_ratio_to_ce <= 0 or nbytes <= 0 or ce_gbytes_per_s <= 0:
        raise ValueError("need 0 < fraction < 1 and positive ratio, bytes and CE rate")
    t_link_us = nbytes / (link_ratio_to_ce * ce_gbytes_per_s * 1e9) * 1e6
    return max(1, math.ceil(max(0.0, plan_us) / (t_link_us * (1 / fraction - 1))))
