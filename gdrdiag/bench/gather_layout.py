"""Gather layouts: the record table, the index sets, and what the PCIe model needs from them.

A ``Layout`` is R-byte records at a stride from a base offset, read at (source, destination) index
pairs drawn by a pattern; ``Case`` is one layout x kernel x SM limit. The functions here build the
index sets, the byte-level histograms the model reads, the sweeps' cases and the payload check; all are
pure numpy, so they are tested without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

from gdrdiag.bench.gather_kernels import KERNELS, LINES_RECORDS_PER_WARP, KernelSpec, round_up
from gdrdiag.errors import UserInputError
from gdrdiag.model.params import GatherParams
from gdrdiag.pathmodel import pcie as pcie_model

POISON = 0xA5


MAX_RECORD_BYTES = 1 << 20  # kernels pack a byte offset in 27 bits; 1 MiB keeps far below


MAX_SLOTS = (1 << 32) - 1  # indices are uint32


TABLE_PAD = 256  # chunk loads may read up to 15 B past a record (native/gather.cu); keep slack


DEFAULT_REQUESTS = 128


DEFAULT_RECORDS_PER_REQUEST = 2048


DEFAULT_RECORD_BYTES = 656  # the packed FP8 MLA KV token (sgl-project/sglang, DeepSeek MLA FP8 KV cache)


DEFAULT_SLOTS = 300_000


DEFAULT_SEED = 20251121


# Down to 16 B: small records are where token and KV-entry gathers live.
RECORD_SIZE_SWEEP = (16, 32, 64, 128, 256, 512, 640, 656, 768, 1024, 2048, 4096)


PATTERNS = ("random", "unique", "sorted", "runs", "sequential")


SWEEPS = ("ladder", "record-size", "stride", "offset", "pattern", "sm", "threads", "working-set")

# Working-set sweep: table sizes from 16 MiB, doubling, up to a quarter of host memory (the table is
# pinned; the rest of the machine keeps three quarters) and at most 64 GiB.
WORKING_SET_MIN_BYTES = 16 << 20
WORKING_SET_MAX_BYTES = 64 << 30


def host_memory_bytes() -> Optional[int]:
    """Physical memory of this host (sysconf), or None where the platform does not say."""
    import os

    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def working_set_sizes(stride: int, host_bytes: Optional[int], quick: bool = False) -> list[int]:
    """Table sizes (bytes of slots x stride) the working-set sweep visits: 16 MiB, 32 MiB, ... limit.

    The limit is a quarter of ``host_bytes`` (4 GiB when unknown), capped at 64 GiB and at what uint32
    indices can address. Quick runs take every fourth size (16 MiB, 256 MiB, 4 GiB, ...).
    """
    limit = min(WORKING_SET_MAX_BYTES, (host_bytes // 4) if host_bytes else 4 << 30, MAX_SLOTS * stride)
    sizes, size = [], WORKING_SET_MIN_BYTES
    while size <= limit:
        sizes.append(size)
        size *= 2
    return sizes[::4] if quick else sizes


def parse_pattern(text: str) -> tuple[str, int]:
    """``random``, ``sorted``, ``sequential`` or ``runs:K`` -> (pattern, run length)."""
    t = text.strip().lower()
    if t.startswith("runs"):
        k_text = t[4:].lstrip(":=-")
        if not k_text.isdigit() or int(k_text) < 1:
            raise UserInputError(f"pattern {text!r}: write runs:K with K >= 1 records per run")
        return "runs", int(k_text)
    if t not in PATTERNS:
        raise UserInputError(f"unknown index pattern {text!r} (random, unique, sorted, sequential, runs:K)")
    return t, 1


def pattern_name(pattern: str, run_length: int) -> str:
    """Inverse of :func:`parse_pattern`."""
    return f"runs:{run_length}" if pattern == "runs" else pattern


@dataclass(frozen=True)
class Layout:
    """Table layout and index set of one gather."""

    record_bytes: int = DEFAULT_RECORD_BYTES
    stride: int = DEFAULT_RECORD_BYTES
    base_offset: int = 0
    pattern: str = "random"
    run_length: int = 1
    slots: int = DEFAULT_SLOTS
    records: int = DEFAULT_REQUESTS * DEFAULT_RECORDS_PER_REQUEST
    seed: int = DEFAULT_SEED

    @property
    def dst_stride(self) -> int:
        """Destination slots are 16-B aligned: R rounded up to 16."""
        return round_up(self.record_bytes, 16)

    @property
    def nbytes(self) -> int:
        """Useful bytes moved per batch."""
        return self.records * self.record_bytes

    @property
    def table_bytes(self) -> int:
        """Pinned bytes the table needs (base offset, slots, read-past padding)."""
        return self.base_offset + self.slots * self.stride + TABLE_PAD

    @property
    def index_key(self) -> tuple:
        """What the generated indices depend on."""
        return (self.pattern, self.run_length, self.slots, self.records, self.seed)

    def validate(self) -> "Layout":
        """Raise UserInputError for a layout no kernel can run; return self."""
        if self.record_bytes <= 0:
            raise UserInputError(f"record size must be greater than 0, got {self.record_bytes}")
        if self.record_bytes > MAX_RECORD_BYTES:
            raise UserInputError(
                f"record size {self.record_bytes} is above the {MAX_RECORD_BYTES}-byte limit"
            )
        if self.stride < self.record_bytes:
            raise UserInputError(f"stride {self.stride} is smaller than the record size {self.record_bytes}")
        if not 0 <= self.base_offset < 4096:
            raise UserInputError(f"table base offset must be in 0..4095, got {self.base_offset}")
        if self.records <= 0:
            raise UserInputError(f"number of records must be greater than 0, got {self.records}")
        if not 0 < self.slots <= MAX_SLOTS:
            raise UserInputError(f"table slots must be in 1..{MAX_SLOTS}, got {self.slots}")
        if self.pattern not in PATTERNS:
            raise UserInputError(f"unknown index pattern {self.pattern!r}")
        if self.pattern in ("sequential", "unique") and self.records > self.slots:
            raise UserInputError(
                f"{self.pattern} indices need {self.records} slots but the table has {self.slots}"
            )
        if self.pattern == "runs" and self.run_length > self.slots:
            raise UserInputError(
                f"runs of {self.run_length} records need at least {self.run_length} slots, "
                f"the table has {self.slots}"
            )
        return self


@dataclass(frozen=True)
class Case:
    """One measured gather: kernel, layout, SM limit (persistent kernels), threads per block."""

    kernel: str
    layout: Layout
    sweep: str = "ladder"
    sm_limit: Optional[int] = None  # None: all SMs
    threads: Optional[int] = None  # None: the kernel's default


def make_indices(layout: Layout):
    """(source slots, destination slots) as uint32 numpy arrays; deterministic in layout.seed.

    random: uniform slots with replacement (repeats happen: ~1/3 of 262,144 draws from 300,000
    slots); unique: random without replacement; sorted: random, sorted; runs: runs of
    ``run_length`` consecutive slots from random starts; sequential: 0..n-1. Destinations are a
    random permutation of 0..n-1 (unique).
    """
    import numpy as np

    rng = np.random.default_rng(layout.seed)
    n, s = layout.records, layout.slots
    if layout.pattern in ("random", "sorted"):
        src = rng.integers(0, s, size=n, dtype=np.int64)
        if layout.pattern == "sorted":
            src.sort()
    elif layout.pattern == "unique":
        src = rng.permutation(s)[:n].astype(np.int64)
    elif layout.pattern == "runs":
        k = layout.run_length
        starts = rng.integers(0, s - k + 1, size=-(-n // k), dtype=np.int64)
        src = (starts[:, None] + np.arange(k, dtype=np.int64)[None, :]).reshape(-1)[:n]
    else:
        src = np.arange(n, dtype=np.int64)
    dst = rng.permutation(n)
    return src.astype(np.uint32), dst.astype(np.uint32)


def segment_histogram(src, layout: Layout, spec: KernelSpec) -> dict[tuple[int, int], int]:
    """{(start address mod 4096, records in the merged run): count} as ``spec`` reads ``src``.

    Only merging kernels (gather_lines) read consecutive packed slots as one range, and only
    within the records a warp takes at once; every other kernel reads records one by one. The
    table base is 4 KiB aligned plus ``base_offset`` (gather.py allocates it so).
    """
    import numpy as np

    src = np.asarray(src, dtype=np.int64)
    n = src.size
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    merge = spec.merges_runs and stride == R and R % 16 == 0 and base % 16 == 0
    if merge:
        starts = np.ones(n, dtype=bool)
        starts[1:] = src[1:] != src[:-1] + 1
        starts[np.arange(n) % LINES_RECORDS_PER_WARP == 0] = True
        first = np.flatnonzero(starts)
        lengths = np.diff(np.append(first, n))
    else:
        first = np.arange(n)
        lengths = np.ones(n, dtype=np.int64)
    offsets = (base + src[first] * stride) % pcie_model.PAGE
    keys = offsets * 64 + lengths  # lengths <= 8 < 64
    uniq, counts = np.unique(keys, return_counts=True)
    return {(int(k // 64), int(k % 64)): int(c) for k, c in zip(uniq, counts, strict=True)}


def read_plan(src, layout: Layout, spec: KernelSpec):
    """(segment histogram, records whose bytes cross PCIe) for ``spec`` reading ``src``.

    Sort-first kernels read in slot order. Kernels with L1-allocating loads fetch a slot that
    repeats the previous record's slot once (the second read hits L1: same warp or CTA, back to
    back); such repeats are left out of the reads, so the model's ratio to CE is scaled by
    records / records read.
    """
    import numpy as np

    src = np.asarray(src, dtype=np.int64)
    if spec.presort:
        src = np.sort(src)
    if spec.l1_dedupe and src.size > 1:
        keep = np.ones(src.size, dtype=bool)
        keep[1:] = src[1:] != src[:-1]
        src = src[keep]
    return segment_histogram(src, layout, spec), int(src.size)


def planned_segments(src, layout: Layout, group: int = LINES_RECORDS_PER_WARP):
    """The segments gather_lines_dedupe reads over pairs sorted by source slot, as arrays.

    Returns (sorted slots, head positions, owners per segment, owner mask): warps take groups of
    ``group`` consecutive sorted records; a run of equal slots is read once, by the group
    holding its first record (the owner); an owner continues the segment of the previous owner
    when its slot is the next one and that owner is in the same group (packed, 16-B aligned
    layouts only, lines_step in native/gather.cu). A segment is ``owners`` consecutive slots
    from the slot at its head. Only for 16-B aligned layouts (stride and base offset).
    """
    import numpy as np

    src = np.sort(np.asarray(src, dtype=np.int64))
    n = src.size
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    merge = stride == R and R % 16 == 0 and base % 16 == 0
    idx = np.arange(n)
    owner = np.ones(n, dtype=bool)
    owner[1:] = src[1:] != src[:-1]
    # The owner of each record's run (the last owner at or before it).
    run_owner = np.maximum.accumulate(np.where(owner, idx, 0))
    grp = idx // group
    head = owner.copy()
    if merge and n:
        prev_owner = np.empty(n, dtype=np.int64)
        prev_owner[0] = -1
        prev_owner[1:] = run_owner[:-1]
        same_group = (prev_owner >= 0) & (prev_owner // group == grp)
        cont = np.zeros(n, dtype=bool)
        cont[1:] = owner[1:] & same_group[1:] & (src[1:] == src[:-1] + 1)
        head = owner & ~cont
    owners = np.flatnonzero(owner)
    heads = np.flatnonzero(head)
    # Owners per segment: the owners from each head to the next head.
    lengths = np.diff(np.append(np.searchsorted(owners, heads), owners.size))
    return src, heads, lengths, owner


def planned_read_plan(
    src, layout: Layout, group: int = LINES_RECORDS_PER_WARP
) -> tuple[dict[tuple[int, int], int], int]:
    """(segment histogram, slots read) of gather_lines_dedupe over pairs sorted by source slot.

    The segments of :func:`planned_segments` as {(start address mod 4096, slots): count}.
    Layouts off the fast path (odd sizes or offsets) are read record by record, with no merging
    or dedupe.
    """
    import numpy as np

    n = np.asarray(src).size
    aligned = layout.stride % 16 == 0 and layout.base_offset % 16 == 0
    if not aligned or n == 0:
        return segment_histogram(np.sort(np.asarray(src, dtype=np.int64)), layout, KERNELS["warp"]), int(n)
    ssrc, heads, lengths, owner = planned_segments(src, layout, group)
    offsets = (layout.base_offset + ssrc[heads] * layout.stride) % pcie_model.PAGE
    keys = offsets * 64 + lengths  # lengths <= 32 < 64
    uniq, counts = np.unique(keys, return_counts=True)
    hist = {(int(k // 64), int(k % 64)): int(c) for k, c in zip(uniq, counts, strict=True)}
    return hist, int(owner.sum())


def layout_of(params: GatherParams, seed: Optional[int]) -> Optional[Layout]:
    """The Layout a gather row measured, from its GatherParams and its seed; None for a CE row."""
    fields = (
        params.kernel,
        params.record_bytes,
        params.stride_bytes,
        params.pattern,
        params.slots,
        params.records,
    )
    if any(f is None for f in fields):
        return None
    pattern, run_length = parse_pattern(params.pattern)
    return Layout(
        record_bytes=params.record_bytes,
        stride=params.stride_bytes,
        base_offset=params.base_offset_bytes or 0,
        pattern=pattern,
        run_length=run_length,
        slots=params.slots,
        records=params.records,
        seed=DEFAULT_SEED if seed is None else seed,
    )


# Records under this size are where the read-request rate can bind (a request carries at most one
# record's bytes, and at 0.75 G/s x 128 B the cap is far above any CE): runs that gather them
# measure the rate first (gather.py, the request-rate calibration).
REQUEST_RATE_BELOW_BYTES = 128
# Warp-kernel gathers of records up to this size send one read request per record: each measures
# the read-request rate (the calibration reads 16-B records; docs/benchmarks.md).
REQUEST_RATE_MAX_RECORD_BYTES = 32


def request_rate_layout(base: Layout) -> Layout:
    """The request-rate calibration's layout: 16-B packed records of ``base``'s table and index set size.

    Read by the warp kernel, each record is one 16-B request: unique slots in random order, so no
    record repeats or shares a request with the one before (random where the table has fewer
    slots than records). The table is the record-size sweep's 16-B table, so its translation
    footprint is the one the small-record rows see.
    """
    pattern = "unique" if base.records <= base.slots else "random"
    return Layout(
        record_bytes=16,
        stride=16,
        base_offset=0,
        pattern=pattern,
        run_length=1,
        slots=base.slots,
        records=base.records,
        seed=base.seed,
    )


def needs_request_rate(layouts: Sequence[Layout]) -> bool:
    """Whether a run over ``layouts`` gathers records small enough for the request rate to bind."""
    return any(lay.record_bytes < REQUEST_RATE_BELOW_BYTES for lay in layouts)


def sm_limits(sm_count: int, quick: bool = False) -> list[int]:
    """SM counts for the --sm-limit sweep: 1, 2, 4, ... up to all."""
    base = [1, 2, 4, 16] if quick else [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96]
    out = sorted({v for v in base if v < sm_count} | {sm_count})
    return out


def sweep_cases(
    sweep: str,
    base: Layout,
    kernels: Sequence[str],
    sm_count: int,
    *,
    quick: bool = False,
    threads: Optional[int] = None,
    host_bytes: Optional[int] = None,
) -> list[Case]:
    """Cases of one sweep around ``base`` for ``kernels`` (the ladder takes every kernel given).

    ``host_bytes`` bounds the working-set sweep (default: this host's physical memory).
    """
    cases: list[Case] = []

    def add(layout: Layout, **kw) -> None:
        for k in kernels:
            cases.append(Case(k, layout, sweep=sweep, threads=threads, **kw))

    if sweep == "ladder":
        add(base)
    elif sweep == "record-size":
        sizes = (640, 656, 768) if quick else RECORD_SIZE_SWEEP
        for R in sizes:
            add(replace(base, record_bytes=R, stride=R))
    elif sweep == "stride":
        for R in (base.record_bytes,) if quick else (base.record_bytes, 96, 1000):
            for stride in sorted({R, round_up(R, 128)}):
                add(replace(base, record_bytes=R, stride=stride))
    elif sweep == "offset":
        for R in sorted({640, base.record_bytes}):
            for off in (0, 16, 64, 112):
                add(replace(base, record_bytes=R, stride=R, base_offset=off))
    elif sweep == "pattern":
        pats = (
            (("random", 1), ("sorted", 1), ("runs", 16))
            if quick
            else (
                ("random", 1),
                ("unique", 1),
                ("sorted", 1),
                ("runs", 4),
                ("runs", 16),
                ("runs", 64),
                ("sequential", 1),
            )
        )
        for pat, k in pats:
            layout = replace(base, pattern=pat, run_length=k)
            if pat in ("sequential", "unique") and layout.records > layout.slots:
                continue
            add(layout)
    elif sweep == "sm":
        for k in kernels:
            if KERNELS[k].mapping != "persistent":
                continue
            for limit in sm_limits(sm_count, quick):
                cases.append(Case(k, base, sweep=sweep, sm_limit=limit, threads=threads))
    elif sweep == "threads":
        for t in (256, 1024) if quick else (128, 256, 512, 1024):
            for k in kernels:
                cases.append(Case(k, base, sweep=sweep, threads=t))
    elif sweep == "working-set":
        # Same records, same random pattern, a larger table each step: only the spread of the
        # addresses changes, so a decline is translation reach (IOTLB/ATC) or NUMA, not the link.
        for size in working_set_sizes(
            base.stride, host_bytes if host_bytes is not None else host_memory_bytes(), quick
        ):
            add(replace(base, slots=max(1, size // base.stride), pattern="random", run_length=1))
    else:
        raise UserInputError(f"unknown sweep {sweep!r} (choose from: {', '.join(SWEEPS)}, all)")
    return cases


def parse_sweeps(text: Optional[str]) -> tuple[str, ...]:
    """``"all"``, ``"ladder,sm"`` or None (ladder only) -> sweep names in run order."""
    if not text:
        return ("ladder",)
    t = text.strip().lower()
    if t == "all":
        return SWEEPS
    out = []
    for p in t.split(","):
        p = p.strip()
        if not p:
            continue
        if p not in SWEEPS:
            raise UserInputError(f"unknown sweep {p!r} (choose from: {', '.join(SWEEPS)}, all)")
        if p not in out:
            out.append(p)
    if "ladder" not in out:
        out.insert(0, "ladder")  # the ladder picks the best kernel the other sweeps use
    return tuple(out)


def verify_gather(table_bytes, dst_bytes, src_idx, dst_idx, layout: Layout) -> Optional[str]:
    """None when every destination byte is right, else a one-line description of the first error.

    ``table_bytes``: the pinned table from its (4 KiB aligned) start; ``dst_bytes``: the device
    buffer read back, ``records * dst_stride`` bytes.
    """
    import numpy as np
    from numpy.lib.stride_tricks import as_strided

    R, stride, dstr, n = layout.record_bytes, layout.stride, layout.dst_stride, layout.records
    tab = np.asarray(table_bytes, dtype=np.uint8)[layout.base_offset :]
    src_view = as_strided(tab, shape=(layout.slots, R), strides=(stride, 1), writeable=False)
    got = np.asarray(dst_bytes, dtype=np.uint8)[: n * dstr].reshape(n, dstr)
    # Check in chunks of records to bound the temporaries (1 GiB tables at 4 KiB records).
    chunk = max(1, (64 << 20) // max(1, R))
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        expected = src_view[src_idx[lo:hi]]
        actual = got[dst_idx[lo:hi], :R]
        if not np.array_equal(actual, expected):
            bad = np.argwhere(actual != expected)[0]
            i = lo + int(bad[0])
            return (
                f"record {i} (source slot {int(src_idx[i])} -> destination slot {int(dst_idx[i])}) "
                f"byte {int(bad[1])}: got 0x{int(actual[bad[0], bad[1]]):02x}, "
                f"expected 0x{int(expected[bad[0], bad[1]]):02x}"
            )
    if dstr > R:
        pad = got[:, R:]
        if not np.all(pad == POISON):
            slot, col = (int(v) for v in np.argwhere(pad != POISON)[0])
            return f"destination slot {slot} byte {R + col} past the record was overwritten (poison gone)"
    return None
