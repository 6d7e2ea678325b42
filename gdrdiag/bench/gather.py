"""gather-bench: GPU zero-copy gather of records from pinned host memory, against the copy engine.

The workload (issue 3): gather ``n`` records of ``R`` bytes from a table of ``slots`` slots in
mapped pinned host memory into device memory, at (source slot, destination slot) pairs, with the
GPU reading host memory over PCIe. Kernels live in ``native/gather.cu`` (the ladder is explained
there). Every gather is divided by a copy-engine reference measured in the same process: a
``cuMemcpyHtoDAsync`` of the same byte count from the same pinned table (``gather_ce_reference``).

Method, per case (docs/gather-bench.md):

1. indices are generated on the host with numpy (seeded; the seed is in params) and copied to
   device memory once per index set;
2. one ungated launch estimates the time, which sets the number of samples for a time budget;
3. the destination is poisoned, then the samples run queued behind the spin gate (CUDA events,
   enqueue cost excluded, bench/timing.py);
4. every destination byte is checked on the host with numpy (records gathered by fancy indexing
   of the pinned table; bytes past each record must still hold the poison); one wrong byte makes
   the result ERROR;
5. the PCIe model (gdrdiag/pcie_model.py) predicts the best ratio to CE the layout allows for the
   kernel's way of reading, from the exact start offsets of the indices used.

Only ``hw/`` talks to the driver; this module uses it through ``hw.cuda``, ``hw.memory``,
``hw.nvrtc``, ``hw.gpu_link`` and ``bench.timing``.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

from gdrdiag import pcie_model
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status

POISON = 0xA5
MAX_RECORD_BYTES = 1 << 20  # kernels pack a byte offset in 27 bits; 1 MiB keeps far below
MAX_SLOTS = (1 << 32) - 1  # indices are uint32
TABLE_PAD = 256  # chunk loads may read up to 15 B past a record (native/gather.cu); keep slack
CE_KEY = "gather_ce_reference"
QUIET_SPREAD = 0.03  # a round whose slowest sample is > 3% slower than its fastest is re-measured

DEFAULT_REQUESTS = 128
DEFAULT_RECORDS_PER_REQUEST = 2048
DEFAULT_RECORD_BYTES = 656  # the packed FP8 MLA KV token (perf-anchors 0.4)
DEFAULT_SLOTS = 300_000
DEFAULT_SEED = 20251121


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of native/gather.cu and how to launch and model it."""

    name: str
    function: str
    mapping: str  # "thread" (a thread per record), "warp" (a warp per record), "persistent"
    default_threads: int
    model_mode: Optional[str]  # pcie_model mode, None where the model does not describe it
    line_aware: bool = False
    merges_runs: bool = False
    l1_dedupe: bool = False  # L1-allocating loads: a slot read twice in a row is fetched once
    presort: bool = False  # counting-sort the pairs by source slot on the GPU first (timed)
    # The sort (the "plan") is made once per index set and reused for GatherConfig.plan_reuse
    # batches over the same indices; each timed sample is one plan plus that many gathers.
    reuse_plan: bool = False
    dedupe: bool = False  # a repeated slot is read once and stored to all its destinations
    min_cc: int = 80
    doc: str = ""

    @property
    def key(self) -> str:
        """Case key in results: ``gather_<kernel>`` with underscores (not the CUDA function's name)."""
        return "gather_" + self.name.replace("-", "_")


KERNELS: dict[str, KernelSpec] = {
    k.name: k
    for k in (
        KernelSpec("byte", "gather_byte", "thread", 256, None, doc="a thread per record, byte copies"),
        KernelSpec("vec16", "gather_vec16", "thread", 256, None, doc="a thread per record, 16-byte loads"),
        KernelSpec(
            "warp",
            "gather_warp",
            "warp",
            256,
            "sector",
            l1_dedupe=True,
            doc="a warp per record, 16 B per lane, load/store per 512 B",
        ),
        KernelSpec(
            "warp-ilp",
            "gather_warp_ilp",
            "warp",
            256,
            "sector",
            l1_dedupe=True,
            doc="a warp per record, all loads (up to 4 KiB) before the stores",
        ),
        KernelSpec(
            "persistent",
            "gather_persistent",
            "persistent",
            1024,
            "sector",
            l1_dedupe=True,
            doc="warp-ilp in a grid-stride loop, one CTA per SM (--sm-limit)",
        ),
        KernelSpec(
            "lines",
            "gather_lines",
            "persistent",
            1024,
            "sector",
            line_aware=True,
            merges_runs=True,
            l1_dedupe=True,
            doc="persistent; 8 records per warp in flight, line-aware loads, consecutive slots merged",
        ),
        KernelSpec(
            "sorted-lines",
            "gather_lines",
            "persistent",
            1024,
            "sector",
            line_aware=True,
            merges_runs=True,
            l1_dedupe=True,
            presort=True,
            doc="GPU counting sort of the pairs by source slot, then lines (sort timed with the gather)",
        ),
        KernelSpec(
            "planned-lines",
            "gather_lines_dedupe",
            "persistent",
            1024,
            "sector",
            line_aware=True,
            merges_runs=True,
            presort=True,
            reuse_plan=True,
            dedupe=True,
            doc="sort-first with the sort reused across batches of one index set (--plan-reuse), "
            "each repeated slot read once",
        ),
        KernelSpec(
            "lines-l2pf",
            "gather_lines_l2pf",
            "persistent",
            1024,
            "sector",
            line_aware=True,
            merges_runs=True,
            doc="lines with non-caching loads and the .L2::256B prefetch-size hint",
        ),
        # Modelled as line-aware SM reads: the H200 measurements show the TMA's sysmem reads get no
        # larger completions than SM loads (640 B: 0.924 of CE, the whole-line ceiling), so the
        # model's "bulk" mode (one request per record) is kept only as the disproved hypothesis.
        KernelSpec(
            "bulk",
            "gather_bulk",
            "persistent",
            1024,
            "sector",
            line_aware=True,
            min_cc=90,
            doc="Hopper cp.async.bulk (TMA) per record into shared memory, mbarrier ring per warp",
        ),
    )
}
LADDER = tuple(KERNELS)
BEST_CANDIDATES = ("planned-lines", "sorted-lines", "lines", "lines-l2pf", "bulk", "persistent", "warp-ilp")
LINES_RECORDS_PER_WARP = 8  # LINES_M in native/gather.cu
LINES_INSTR_IN_FLIGHT = 8  # LINES_K
# Batches one plan (the sorted pairs) serves by default. The plan depends on the indices only,
# not on the table: in KV-cache offload one token list is gathered once per layer (each layer
# has its own KV pool), so the layers of one step can share it. 32 is a stated choice (fewer
# than the layers of large models), not a measured one; --plan-reuse 1 is a sort per batch.
DEFAULT_PLAN_REUSE = 32
ILP_CHUNKS = 8  # warp_ilp's K (chunks per lane per pass)
BULK_MAX_DEPTH = 8

# Down to 16 B (issue 15): small records are where token and KV-entry gathers live.
RECORD_SIZE_SWEEP = (16, 32, 64, 128, 256, 512, 640, 656, 768, 1024, 2048, 4096)
PATTERNS = ("random", "unique", "sorted", "runs", "sequential")
SWEEPS = ("ladder", "record-size", "stride", "offset", "pattern", "sm", "threads")


def kernel_spec(name: str) -> KernelSpec:
    """Look up a kernel by name; UserInputError lists the known names."""
    spec = KERNELS.get(name.strip().lower())
    if spec is None:
        raise UserInputError(f"unknown gather kernel {name!r} (choose from: {', '.join(KERNELS)})")
    return spec


def parse_kernels(text: str) -> tuple[str, ...]:
    """``"warp,lines"`` or ``"all"`` -> kernel names, validated."""
    if text.strip().lower() in ("all", "ladder"):
        return LADDER
    names = tuple(kernel_spec(p).name for p in text.split(",") if p.strip())
    if not names:
        raise UserInputError("no gather kernel named")
    return names


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


def _fmt(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.3f}"


def round_up(value: int, to: int) -> int:
    """``value`` rounded up to a multiple of ``to``."""
    return -(-value // to) * to


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


# ------------------------------------------------------------------------------------------
# Pure helpers (tested without a GPU)
# ------------------------------------------------------------------------------------------


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


def planned_records_per_step(record_bytes: int) -> int:
    """Records per warp step of gather_lines_dedupe: 32 up to 128-B records, else 8 (LINES_M).

    At 8 records a step of 64-B records is 512 B: the step's index loads, shuffles and PCIe round
    trip then serve too few bytes (H100, issue 15: 0.866 of CE against a 0.896 ceiling).
    """
    return 32 if record_bytes <= 128 else LINES_RECORDS_PER_WARP


def planned_read_plan(
    src, layout: Layout, group: int = LINES_RECORDS_PER_WARP
) -> tuple[dict[tuple[int, int], int], int]:
    """(segment histogram, slots read) of gather_lines_dedupe over pairs sorted by source slot.

    Mirrors lines_step with DEDUPE (native/gather.cu): warps take groups of ``group`` consecutive
    sorted records; a run of equal slots is read once, by the group holding its first record (the
    owner); an owner continues the segment of the previous owner when its slot is the next one
    and that owner is in the same group (packed, 16-B aligned layouts only). Layouts off the
    fast path (odd sizes or offsets) are read record by record, with no merging or dedupe.
    """
    import numpy as np

    src = np.sort(np.asarray(src, dtype=np.int64))
    n = src.size
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    aligned = stride % 16 == 0 and base % 16 == 0
    if not aligned or n == 0:
        return segment_histogram(src, layout, KERNELS["warp"]), int(n)
    merge = stride == R and R % 16 == 0
    idx = np.arange(n)
    owner = np.ones(n, dtype=bool)
    owner[1:] = src[1:] != src[:-1]
    # The owner of each record's run (the last owner at or before it).
    run_owner = np.maximum.accumulate(np.where(owner, idx, 0))
    grp = idx // group
    head = owner.copy()
    if merge:
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
    offsets = (base + src[heads] * stride) % pcie_model.PAGE
    keys = offsets * 64 + lengths  # lengths <= 32 < 64
    uniq, counts = np.unique(keys, return_counts=True)
    hist = {(int(k // 64), int(k % 64)): int(c) for k, c in zip(uniq, counts, strict=True)}
    return hist, int(owners.size)


def bytes_in_flight_per_warp(spec: KernelSpec, record_bytes: int, depth: int = 0) -> int:
    """Most useful bytes one warp has requested and not yet received, by design."""
    R = record_bytes
    if spec.name == "byte":
        return 32
    if spec.name == "vec16":
        return 32 * 16
    if spec.name == "warp":
        return min(round_up(R, 16), pcie_model.INSTRUCTION_BYTES)
    if spec.name in ("warp-ilp", "persistent"):
        return min(round_up(R, 16), ILP_CHUNKS * pcie_model.INSTRUCTION_BYTES)
    if spec.name == "planned-lines" and depth == 32:
        return 32 * R  # one step: 32 records, issued before their stores (up to 4 KiB at 128 B)
    if spec.name in ("lines", "lines-l2pf", "sorted-lines", "planned-lines"):
        per_record = max(1, math.ceil((R + 112) / pcie_model.INSTRUCTION_BYTES))
        records = max(1, min(LINES_RECORDS_PER_WARP, LINES_INSTR_IN_FLIGHT // per_record))
        return min(records * R, LINES_INSTR_IN_FLIGHT * pcie_model.INSTRUCTION_BYTES)
    if spec.name == "bulk":
        return max(1, depth) * R
    return R


def bulk_config(record_bytes: int, threads: int, smem_optin: int) -> tuple[int, int, int]:
    """(threads, depth, dynamic shared bytes) for gather_bulk within ``smem_optin`` bytes per CTA."""
    slot = round_up(round_up(record_bytes + 15, 16), 128)  # native/gather.cu slot_bytes
    warps = max(1, threads // 32)
    depth = min(BULK_MAX_DEPTH, smem_optin // (warps * (slot + 8)))
    if depth < 1:
        warps = smem_optin // (slot + 8)
        if warps < 1:
            raise NotSupported(
                f"a {record_bytes}-byte record does not fit the {smem_optin} bytes of shared "
                "memory a CTA may use"
            )
        depth = 1
    return warps * 32, depth, warps * depth * (slot + 8)


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
) -> list[Case]:
    """Cases of one sweep around ``base`` for ``kernels`` (the ladder takes every kernel given)."""
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


def pick_best(results: Sequence[BenchResult], tie: float = 0.005) -> Optional[BenchResult]:
    """The fastest verified result; within ``tie`` of it, the earliest of BEST_CANDIDATES wins.

    Kernels that measure the same (lines and lines-l2pf) would otherwise swap places from run to
    run on noise.
    """
    ok = [r for r in results if r.status is Status.OK and r.value]
    if not ok:
        return None
    top = max(r.value for r in ok)
    near = [r for r in ok if r.value >= top * (1 - tie)]
    order = {name: i for i, name in enumerate(BEST_CANDIDATES)}
    return min(near, key=lambda r: (order.get(str(r.params.kernel), len(order)), -r.value))


def min_sms_for_fraction(points: Sequence[tuple[int, float]], fraction: float = 0.95) -> Optional[int]:
    """Smallest SM count whose GB/s reaches ``fraction`` of the all-SM (largest count) GB/s."""
    if not points:
        return None
    pts = sorted(points)
    full = pts[-1][1]
    for sms, gbps in pts:
        if gbps >= fraction * full:
            return sms
    return pts[-1][0]


def record_size_summary(results: Sequence[BenchResult], kernel: str = "planned-lines") -> list[dict]:
    """Per record size of the record-size sweep: the best kernel against its model ceiling.

    For each (pattern, R): the fastest verified kernel, its ratio to CE, its ceiling
    (``ceiling_ratio_to_ce``), best / ceiling, and for ``kernel`` (the new small-record path) the
    model's prediction with its sort cost (``model_kernel_ratio_to_ce``) against its measurement.
    """
    groups: dict[tuple[str, int], list[BenchResult]] = {}
    for r in results:
        if r.settings.sweep == "record-size" and r.status is Status.OK and r.value:
            groups.setdefault((str(r.params.pattern), int(r.params.record_bytes)), []).append(r)
    rows = []
    for (pattern, R), rs in sorted(groups.items()):
        best = max(rs, key=lambda r: r.value)
        ratio = best.metrics.ratio_to_ce
        ceiling = best.metrics.ceiling_ratio_to_ce
        row = {
            "pattern": pattern,
            "record_bytes": R,
            "best_kernel": best.params.kernel,
            "best_ratio_to_ce": ratio,
            "ceiling_ratio_to_ce": ceiling,
            "best_over_ceiling": ratio / ceiling if ratio and ceiling else None,
        }
        mine = [r for r in rs if r.params.kernel == kernel]
        if mine:
            m = mine[0].metrics
            pred, meas = m.model_kernel_ratio_to_ce, m.ratio_to_ce
            row.update(
                kernel_ratio_to_ce=meas,
                kernel_predicted_ratio_to_ce=pred,
                kernel_predicted_over_measured=pred / meas if pred and meas else None,
            )
        rows.append(row)
    return rows


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


def model_metrics(
    spec: KernelSpec,
    layout: Layout,
    src,
    link: pcie_model.LinkParams,
    ce_gbps: Optional[float] = None,
    plan_us: Optional[float] = None,
    reuse: int = 1,
    group: int = 0,
) -> dict[str, Optional[float]]:
    """The model's columns for one gather row (pure: tested without a GPU).

    ``model_ratio_to_ce``: the link-bound ratio for the bytes the kernel reads, in its order
    (every record once; planned-lines: every distinct slot once, its exact read plan).
    ``ceiling_ratio_to_ce``: the most the model allows the kernel (for kernels with L1-allocating
    loads, the larger of that and the estimate with every back-to-back repeat an L1 hit).
    ``model_kernel_ratio_to_ce`` (sort-first kernels, given the measured plan time): the ceiling
    with the sort's cost per batch added, ``plan_us / reuse`` (pcie_model.ratio_with_fixed_cost).
    """
    import numpy as np

    if spec.model_mode is None:
        return {"model_ratio_to_ce": None}
    out: dict[str, Optional[float]] = {}
    R, n = layout.record_bytes, layout.records
    if spec.dedupe:
        # Its exact read plan: each distinct slot crosses PCIe once (native/gather.cu DEDUPE).
        hist, n_read = planned_read_plan(src, layout, group or planned_records_per_step(R))
        pred = pcie_model.predict(hist, R, spec.model_mode, line_aware=spec.line_aware, p=link)
        model = pred.ratio_to_ce * n / max(1, n_read)
        out["model_ratio_to_ce"] = model
        out["records_read_fraction"] = n_read / n
        out["model_ratio_if_repeats_hit_l1"] = model
        ceiling = model
    else:
        # Link-bound model: every record read once, in the order the kernel reads them.
        order = np.sort(np.asarray(src)) if spec.presort else src
        pred = pcie_model.predict(
            segment_histogram(order, layout, spec), R, spec.model_mode, line_aware=spec.line_aware, p=link
        )
        out["model_ratio_to_ce"] = pred.ratio_to_ce
        # If back-to-back repeats of a slot hit L1, fewer bytes cross PCIe than are delivered.
        read_hist, n_read = read_plan(src, layout, spec)
        read_pred = pcie_model.predict(read_hist, R, spec.model_mode, line_aware=spec.line_aware, p=link)
        out["records_read_fraction"] = n_read / n
        out["model_ratio_if_repeats_hit_l1"] = read_pred.ratio_to_ce * n / max(1, n_read)
        ceiling = pred.ratio_to_ce
        if spec.l1_dedupe:
            ceiling = max(ceiling, out["model_ratio_if_repeats_hit_l1"])
    out["model_gbytes_per_s"] = out["model_ratio_to_ce"] * ce_gbps if ce_gbps else None
    out["ceiling_ratio_to_ce"] = ceiling
    if spec.presort and plan_us is not None and ce_gbps:
        out["model_kernel_ratio_to_ce"] = pcie_model.ratio_with_fixed_cost(
            ceiling, layout.nbytes, ce_gbps, plan_us / max(1, reuse)
        )
    out["model_efficiency"] = pred.efficiency
    out["partial_line_loss"] = pred.partial_line_loss
    out["completions_per_record"] = pred.completions_per_record
    # The layout's own loss, read the best SM way (line-aware), for ALIGN rules.
    best = pcie_model.predict(
        segment_histogram(src, layout, KERNELS["lines"]), R, "sector", line_aware=True, p=link
    )
    out["layout_partial_line_loss"] = best.partial_line_loss
    out["layout_model_ratio_to_ce"] = best.ratio_to_ce
    return out


# ------------------------------------------------------------------------------------------
# The run (needs a GPU)
# ------------------------------------------------------------------------------------------


@dataclass
class GatherConfig:
    """Everything a gather-bench run needs; built by the CLI, validated by :meth:`validate`."""

    base: Layout = field(default_factory=Layout)
    kernels: tuple[str, ...] = LADDER
    sweeps: tuple[str, ...] = ("ladder",)
    sweep_kernels: tuple[str, ...] = ("best", "warp")
    sm_limit: Optional[int] = None
    threads: Optional[int] = None
    device: int = 0
    iterations: int = 20
    time_budget_s: float = 0.25
    quick: bool = False
    plan_reuse: int = DEFAULT_PLAN_REUSE  # batches one plan serves (planned-lines)
    records_per_step: Optional[int] = None  # planned-lines: 8 or 32 records per warp step; None = by R
    rounds: int = 1  # timing rounds per case when samples are disturbed (see _Session._samples)
    # A CE copy of the same bytes before every gather sample (ratio per pair). Off by default: on
    # the H100 a CE copy just before each sample slowed random-order gathers of small records by
    # up to a third (docs/gather-bench.md), so paired ratios understate back-to-back gathers.
    paired_ce: bool = False
    link: pcie_model.LinkParams = field(default_factory=pcie_model.LinkParams)
    link_source: str = "assumed (diagnostics-kb 14, H200 VM)"
    link_explicit: bool = False  # True when the user gave --mps/--mrrs/--rcb

    def validate(self) -> "GatherConfig":
        """Check user input before anything is allocated."""
        self.base.validate()
        for k in self.kernels:
            kernel_spec(k)
        for k in self.sweep_kernels:
            if k != "best":
                kernel_spec(k)
        if self.sm_limit is not None and self.sm_limit < 1:
            raise UserInputError(f"--sm-limit must be at least 1, got {self.sm_limit}")
        if self.threads is not None and (self.threads < 32 or self.threads > 1024 or self.threads % 32):
            raise UserInputError(f"--threads must be a multiple of 32 in 32..1024, got {self.threads}")
        if self.iterations < 1:
            raise UserInputError(f"--iterations must be at least 1, got {self.iterations}")
        if not 1 <= self.plan_reuse <= 256:
            raise UserInputError(f"--plan-reuse must be in 1..256, got {self.plan_reuse}")
        if self.records_per_step not in (None, 8, 32):
            raise UserInputError(f"--records-per-step must be 8 or 32, got {self.records_per_step}")
        if not 1 <= self.rounds <= 10:
            raise UserInputError(f"--rounds must be in 1..10, got {self.rounds}")
        from gdrdiag.hw.memory import host_available_bytes

        need = max(self.base.table_bytes, self.base.nbytes + TABLE_PAD)
        free = host_available_bytes()
        if need > free:
            raise UserInputError(
                f"the pinned table needs {need} bytes but only {free} bytes of host memory are "
                "free; use fewer --slots or a smaller record or stride"
            )
        return self


@dataclass
class GatherRun:
    """What a run produced: results in order, the link, and summary notes."""

    results: list[BenchResult]
    notes: list[str]
    link: object = None
    gpu_name: str = ""
    sm_count: int = 0


ProgressFn = Optional[Callable[[int, int, str], None]]


def run(config: GatherConfig, progress: ProgressFn = None) -> GatherRun:
    """Run the ladder, then the sweeps with the best kernel; always return results."""
    config.validate()
    from gdrdiag.hw import cuda

    cuda.init()
    with _Session(config) as session:
        return session.run_all(progress)


class _Session:
    """GPU resources of one run, released on every exit path (Ctrl-C included)."""

    def __init__(self, config: GatherConfig):
        self.config = config
        self.stack = contextlib.ExitStack()

    def __enter__(self) -> "_Session":
        from gdrdiag.bench import timing
        from gdrdiag.hw import cuda, memory, nvrtc

        try:
            self.gpu = self.stack.enter_context(cuda.GpuContext(self.config.device))
            self.facts = cuda.device_facts(self.config.device)
            self.sm_count = self.gpu.sm_count
            self.cc = int(self.gpu.arch[3:])
            self.stream = self.stack.enter_context(cuda.Stream())
            self.gate = self.stack.enter_context(timing.SpinGate(self.gpu))
            self.module = self.stack.enter_context(nvrtc.load("gather", self.gpu.arch))
            self.smem_optin = (
                cuda.device_attribute(self.gpu.device, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN") or 49152
            )
            self.memory = memory
            self.rounds = 1
            self.table = None
            self.dst = None
            self.idx = None
            self.sm_ids = self.stack.enter_context(
                memory.allocate("device", 4 * max(1, self.sm_count), gpu=self.gpu)
            )
        except BaseException:
            self.stack.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stack.close()

    # -- resources sized for every case up front, so a too-large request fails before work ----
    def allocate_for(self, layouts: Sequence[Layout]) -> None:
        """Allocate (once) the pinned table, destination and index buffers the layouts need."""
        import numpy as np

        # The CE reference copies records * R bytes from the table start: the table holds at least that.
        table_bytes = max(max(lay.table_bytes, lay.nbytes + TABLE_PAD) for lay in layouts)
        dst_bytes = max(lay.records * lay.dst_stride for lay in layouts)
        idx_bytes = 4 * max(lay.records for lay in layouts)
        if self.dst is None or self.dst.size < dst_bytes:
            if self.dst is not None:
                self.dst.close()
            self.dst = self.stack.enter_context(self.memory.allocate("device", dst_bytes, gpu=self.gpu))
        if self.idx is None or self.idx[0].size < idx_bytes:
            if self.idx is not None:
                for b in self.idx:
                    b.close()
            # source, destination, and the sort-first kernel's sorted copies of both
            self.idx = tuple(
                self.stack.enter_context(self.memory.allocate("device", idx_bytes, gpu=self.gpu))
                for _ in range(4)
            )
        # counts per slot, then one total per 1024-slot tile (the sort-first kernel's scan)
        count_bytes = 4 * max(round_up(lay.slots, 64) + -(-lay.slots // 1024) for lay in layouts)
        # The paired CE copies (GatherConfig.paired_ce) land in their own buffer, so the gather's
        # destination keeps its poison and records for verification.
        ce_bytes = max(lay.nbytes for lay in layouts)
        if self.config.paired_ce and (getattr(self, "ce_dst", None) is None or self.ce_dst.size < ce_bytes):
            self.ce_dst = self.stack.enter_context(self.memory.allocate("device", ce_bytes, gpu=self.gpu))
        if getattr(self, "counts", None) is None or self.counts.size < count_bytes:
            self.counts = self.stack.enter_context(self.memory.allocate("device", count_bytes, gpu=self.gpu))
        # The pinned table last: a destination too large for the GPU then fails before up to the
        # same size of host memory is pinned and filled (an 80-GB GPU next to 128 GiB of host
        # memory ran out of host memory the other way round).
        if self.table is None or self.table.size < table_bytes:
            if self.table is not None:
                self.table.close()
            self.table = self.stack.enter_context(
                self.memory.allocate("pinned", table_bytes, alignment=4096, gpu=self.gpu)
            )
            self.table.write(self.memory.pattern(table_bytes, seed=0x3C))
            self.table_np = np.ctypeslib.as_array((ctypes.c_uint8 * table_bytes).from_address(self.table.ptr))
        self._loaded_indices = None
        self._index_cache: dict = {}

    def indices(self, layout: Layout):
        """Host indices for ``layout`` (cached), copied to the device when they change."""
        key = layout.index_key
        if key not in self._index_cache:
            self._index_cache = {key: make_indices(layout)}
        src, dst = self._index_cache[key]
        if self._loaded_indices != key:
            self.idx[0].write(src)
            self.idx[1].write(dst)
            self._loaded_indices = key
        return src, dst

    # -- measurement ----------------------------------------------------------------------------
    def _samples(self, op, what: str, entries: int = 3):
        """Estimate, then poison and time behind the gate; returns Timed.

        The device machines are shared: another tenant's traffic on the link slows a stretch of
        samples (seen on the H100: a CE reference whose samples ran 24-47 GB/s in one round and
        54-55 GB/s in the next). Interference only ever slows, so a round whose samples spread
        more than QUIET_SPREAD is measured again, up to ``config.rounds`` rounds, and the round
        with the shortest median is kept; the number of rounds is in ``self.rounds`` and the
        method text.
        """
        from gdrdiag.bench import timing

        est = timing.time_stream(self.stream, op, iterations=1, warmup=1, what=what)
        t = max(est.seconds[0], 1e-6)
        iters = int(min(self.config.iterations, max(3, self.config.time_budget_s / t)))
        if self.config.quick:
            iters = min(iters, 8)
        iters = timing.gated_iterations(iters, entries)
        best, rnd = None, 0
        while rnd < max(1, self.config.rounds):
            rnd += 1
            self.dst.fill(POISON)
            timed = timing.time_stream(self.stream, op, iterations=iters, warmup=1, gate=self.gate, what=what)
            med = sorted(timed.seconds)[len(timed.seconds) // 2]
            if best is None or med < best[0]:
                best = (med, timed)
            if max(timed.seconds) <= (1 + QUIET_SPREAD) * min(timed.seconds):
                break
        self.rounds = rnd
        timed = best[1]
        if self.config.rounds > 1:
            timed = replace(
                timed,
                method=timed.method + f"; {rnd} round(s) (a round spreading over "
                f"{100 * QUIET_SPREAD:.0f}% is re-measured, up to {self.config.rounds}; the round "
                "with the shortest median is kept)",
            )
        return timed

    def _paired_samples(self, op, nbytes: int, what: str, entries: int):
        """Time ``op`` with a CE copy of ``nbytes`` from the table queued before every sample.

        Returns (Timed of the gather samples, CE copy seconds per sample, in the same order).
        Rounds as in :meth:`_samples` (the round with the shortest median gather time is kept).
        """
        from gdrdiag.bench import timing
        from gdrdiag.hw import cuda

        ce_dst, table = self.ce_dst.ptr, self.table.ptr

        def ce_op(stream) -> None:
            cuda.call("cuMemcpyHtoDAsync", ce_dst, table, nbytes, stream.handle)

        t = sum(timing.time_stream(self.stream, f, iterations=1, warmup=1).seconds[0] for f in (op, ce_op))
        iters = int(min(self.config.iterations, max(3, self.config.time_budget_s / max(t, 1e-6))))
        if self.config.quick:
            iters = min(iters, 8)
        iters = timing.gated_iterations(iters, entries + 2)
        best, rnd = None, 0
        while rnd < max(1, self.config.rounds):
            rnd += 1
            self.dst.fill(POISON)
            self.ce_dst.fill(POISON)
            op(self.stream)  # warm-up
            ce_op(self.stream)
            self.stream.synchronize()
            events = [(cuda.Event(), cuda.Event(), cuda.Event()) for _ in range(iters)]
            try:
                self.gate.hold(self.stream)
                try:
                    for a, b, c in events:
                        a.record(self.stream)
                        ce_op(self.stream)
                        b.record(self.stream)
                        op(self.stream)
                        c.record(self.stream)
                finally:
                    self.gate.release()
                self.stream.synchronize()
                ce_s = tuple(cuda.elapsed_ms(a, b) / 1e3 for a, b, _ in events)
                g_s = tuple(cuda.elapsed_ms(b, c) / 1e3 for _, b, c in events)
            finally:
                for trio in events:
                    for e in trio:
                        e.close()
            med = sorted(g_s)[len(g_s) // 2]
            if best is None or med < best[0]:
                best = (med, g_s, ce_s)
            if max(g_s) <= (1 + QUIET_SPREAD) * min(g_s):
                break
        self.rounds = rnd
        method = (
            f"{what}: CUDA events on one stream, queued behind a spin-gate kernel (enqueue cost "
            f"excluded); 1 warm-up, {iters} samples kept, median reported; before every sample a "
            "copy-engine copy of the same bytes from the same table (paired CE reference; ratio_to_ce "
            f"= median of the per-pair ratios); {rnd} round(s) (a round spreading over "
            f"{100 * QUIET_SPREAD:.0f}% is re-measured, up to {self.config.rounds}; the shortest "
            "median is kept)"
        )
        return timing.Timed(best[1], method), best[2]

    def ce_reference(self, nbytes: int, layout: Layout) -> BenchResult:
        """CuMemcpyHtoDAsync of ``nbytes`` from the pinned table start, verified."""
        from gdrdiag.hw import cuda

        table_ptr, dst_ptr = self.table.ptr, self.dst.ptr

        def op(stream) -> None:
            cuda.call("cuMemcpyHtoDAsync", dst_ptr, table_ptr, nbytes, stream.handle)

        timed = self._samples(op, "copy engine")
        got = self.dst.read_array(nbytes)
        bad = self.memory.first_mismatch(got, self.table_np[:nbytes])
        params = GatherParams(record_bytes=layout.record_bytes, records=layout.records, copy_bytes=nbytes)
        samples = tuple(nbytes / s / 1e9 for s in timed.seconds)
        common = dict(
            description="copy-engine H2D reference: cuMemcpyHtoDAsync of the same bytes from the "
            "same pinned table",
            params=params,
            unit="GB/s",
            provider="cuda",
            method=timed.method + "; destination poisoned before, every byte compared after",
        )
        if bad is not None:
            return BenchResult.error(
                CE_KEY,
                f"copy engine wrote a wrong byte at offset {bad}",
                verified=False,
                samples=samples,
                stats=SampleStats.of(samples),
                **common,
            )
        stats = SampleStats.of(samples)
        return BenchResult(
            key=CE_KEY,
            status=Status.OK,
            samples=samples,
            stats=stats,
            verified=True,
            metrics=GatherMetrics(
                us_per_batch=stats.median and nbytes / stats.median / 1e3,
                ratio_to_raw=self._ratio_raw(stats.median),
                rounds=float(self.rounds),
            ),
            **common,
        )

    def _ratio_raw(self, gbps: float) -> Optional[float]:
        raw = getattr(self.link, "raw_gbytes_per_s", None)
        return gbps / raw if raw else None

    def gather(self, case: Case, ce: Optional[BenchResult]) -> BenchResult:
        """Measure and verify one gather case."""
        from gdrdiag.hw import cuda

        spec = KERNELS[case.kernel]
        layout = case.layout
        params = self._params(case)
        if self.cc < spec.min_cc:
            raise NotSupported(f"{spec.name} needs sm_{spec.min_cc} or newer; this GPU is sm_{self.cc}")
        src, dst = self.indices(layout)
        fn = self.module.function(spec.function)
        threads = case.threads or spec.default_threads
        shared, depth = 0, 0
        if spec.dedupe:
            # native/gather.cu gather_lines_dedupe: depth = records per warp step (8 or 32)
            depth = self.config.records_per_step or planned_records_per_step(layout.record_bytes)
            params = replace(params, records_per_step=depth)
        if spec.name == "bulk":
            threads, depth, shared = bulk_config(layout.record_bytes, threads, self.smem_optin)
            drv = cuda.driver()
            cuda.call(
                "cuFuncSetAttribute",
                fn,
                drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared,
            )
        if spec.mapping == "thread":
            grid = -(-layout.records // threads)
        elif spec.mapping == "warp":
            grid = -(-layout.records // (threads // 32))
        else:
            grid = min(case.sm_limit or self.sm_count, self.sm_count)
        params = replace(params, threads=threads, grid=grid, depth=depth or None)
        persistent = spec.mapping == "persistent"
        sm_ids_ptr = self.sm_ids.ptr if persistent else 0
        table_ptr = self.table.device_ptr + layout.base_offset
        sidx, didx = (
            (self.idx[2].ptr, self.idx[3].ptr) if spec.presort else (self.idx[0].ptr, self.idx[1].ptr)
        )
        args = [
            (self.dst.ptr, ctypes.c_void_p),
            (table_ptr, ctypes.c_void_p),
            (sidx, ctypes.c_void_p),
            (didx, ctypes.c_void_p),
            (layout.records, ctypes.c_ulonglong),
            (layout.record_bytes, ctypes.c_ulonglong),
            (layout.stride, ctypes.c_ulonglong),
            (layout.dst_stride, ctypes.c_ulonglong),
            (sm_ids_ptr, ctypes.c_void_p),
            (depth, ctypes.c_uint),
        ]

        entries, reuse, plan_us = 3, 1, None
        if spec.presort:
            plan = self._plan_op(layout)
            reuse = self.config.plan_reuse if spec.reuse_plan else 1
            params = replace(params, plan_reuse=reuse)
            op = self._presorted(plan, fn, grid, threads, args, shared, reuse)
            entries = 8 + reuse
            plan_us = self._plan_us(plan)
        else:

            def op(stream) -> None:
                cuda.launch(fn, grid, threads, args, stream, shared)

        if persistent:
            self.sm_ids.fill(0xFF)
        nbytes = layout.nbytes
        paired = None
        if self.config.paired_ce:
            timed, paired = self._paired_samples(op, nbytes, f"gather {spec.name}", entries)
        else:
            timed = self._samples(op, f"gather {spec.name}", entries)
        # A planned sample is one plan plus `reuse` gathers: the time per batch is the sample over
        # `reuse` (the plan's cost shared by the batches that use it, as the kernel is meant to run).
        per_batch = tuple(t / reuse for t in timed.seconds)
        samples = tuple(nbytes / s / 1e9 for s in per_batch)
        stats = SampleStats.of(samples)
        got = self.dst.read_array(layout.records * layout.dst_stride)
        problem = verify_gather(self.table_np, got, src, dst, layout)
        if paired is not None and problem is None:
            bad = self.memory.first_mismatch(self.ce_dst.read_array(nbytes), self.table_np[:nbytes])
            if bad is not None:
                problem = f"the paired copy-engine reference wrote a wrong byte at offset {bad}"

        metrics: dict[str, Optional[float]] = {
            "us_per_batch": float(sorted(per_batch)[len(per_batch) // 2] * 1e6)
        }
        metrics["rounds"] = float(self.rounds)
        if plan_us is not None:
            metrics["plan_us"] = plan_us
        ce_gbps = ce.value if ce is not None and ce.status is Status.OK else None
        metrics["ratio_to_ce"] = stats.median / ce_gbps if ce_gbps else None
        if paired is not None:
            # Each gather sample against the CE copy of the same bytes queued just before it: a
            # tenant's traffic slows both, so the median of the per-pair ratios keeps its meaning.
            ce_s = paired
            ratios = sorted(c / (g / reuse) for c, g in zip(ce_s, timed.seconds, strict=True))
            ce_gbps = nbytes / sorted(ce_s)[len(ce_s) // 2] / 1e9
            metrics["ratio_to_ce"] = ratios[len(ratios) // 2]
            metrics["ratio_to_ce_unpaired"] = stats.median / ce.value if ce is not None and ce.value else None
        metrics["ce_gbytes_per_s"] = ce_gbps
        metrics["ratio_to_raw"] = self._ratio_raw(stats.median)
        if persistent:
            ids = self.sm_ids.read_array(4 * grid).view("<i4")
            sms_used = len({int(v) for v in ids if v >= 0})
            blocks_per_sm = 1.0
        else:
            sms_used = self.sm_count
            blocks_per_sm = float(
                cuda.call("cuOccupancyMaxActiveBlocksPerMultiprocessor", fn, threads, shared)
            )
            blocks_per_sm = min(blocks_per_sm, grid / max(1, self.sm_count)) or 1.0
        warps_per_sm = blocks_per_sm * threads / 32
        per_sm = warps_per_sm * bytes_in_flight_per_warp(spec, layout.record_bytes, depth)
        metrics["sms_used"] = float(sms_used)
        metrics["bytes_in_flight_per_sm"] = per_sm
        # Little's law: the round trip the design's in-flight bytes would allow at this rate.
        metrics["littles_law_latency_us"] = (
            per_sm * sms_used / (stats.median * 1e9) * 1e6 if stats.median else None
        )
        metrics.update(self._model_metrics(spec, layout, src, ce_gbps, plan_us, reuse, depth))
        method = timed.method
        if spec.presort:
            method += (
                f"; one sample = the sort (plan) + {reuse} gather(s) over the same indices, "
                f"divided by {reuse}"
                + ("" if reuse > 1 else " (a sort in every batch)")
                + "; plan_us = the sort alone, timed the same way"
            )
        common = dict(
            description=f"zero-copy gather, {spec.doc}",
            params=params,
            settings=self._settings(case),
            unit="GB/s",
            samples=samples,
            stats=stats,
            metrics=GatherMetrics(**metrics),
            provider="cuda",
            method=method + "; destination poisoned before the run, every byte checked on the "
            "host with numpy after it (records and the poison past them)",
        )
        if problem:
            return BenchResult.error(spec.key, f"wrong data: {problem}", verified=False, **common)
        return BenchResult(key=spec.key, status=Status.OK, verified=True, **common)

    def _plan_op(self, layout: Layout):
        """The plan: count, scan, scatter (native/gather.cu) of the pairs by source slot."""
        from gdrdiag.hw import cuda

        names = ("sort_count", "sort_scan_blocks", "sort_scan", "sort_scan_add", "sort_scatter")
        f_count, f_blocks, f_scan, f_add, f_scatter = (self.module.function(n) for n in names)
        n, slots = layout.records, layout.slots
        tiles = -(-slots // 1024)
        cgrid = max(1, min(-(-n // 256), 8 * self.sm_count))
        counts, s_in, d_in, s_out, d_out = (
            self.counts.ptr,
            self.idx[0].ptr,
            self.idx[1].ptr,
            self.idx[2].ptr,
            self.idx[3].ptr,
        )
        sums = counts + 4 * round_up(slots, 64)
        vp, ull = ctypes.c_void_p, ctypes.c_ulonglong

        def op(stream) -> None:
            cuda.call("cuMemsetD32Async", counts, 0, slots, stream.handle)
            cuda.launch(f_count, cgrid, 256, [(s_in, vp), (n, ull), (counts, vp)], stream)
            cuda.launch(f_blocks, tiles, 1024, [(counts, vp), (slots, ull), (sums, vp)], stream)
            cuda.launch(f_scan, 1, 1024, [(sums, vp), (tiles, ull)], stream)
            cuda.launch(f_add, tiles, 1024, [(counts, vp), (slots, ull), (sums, vp)], stream)
            cuda.launch(
                f_scatter,
                cgrid,
                256,
                [(s_in, vp), (d_in, vp), (n, ull), (counts, vp), (s_out, vp), (d_out, vp)],
                stream,
            )

        return op

    def _presorted(self, plan, fn, grid: int, threads: int, args, shared: int, reuse: int = 1):
        """The sort-first sample: the plan, then ``reuse`` gathers over the sorted pairs."""
        from gdrdiag.hw import cuda

        def op(stream) -> None:
            plan(stream)
            for _ in range(reuse):
                cuda.launch(fn, grid, threads, args, stream, shared)

        return op

    def _plan_us(self, plan) -> float:
        """Median microseconds of the plan alone (the model's sort cost term), behind the gate."""
        from gdrdiag.bench import timing

        timed = timing.time_stream(
            self.stream, plan, iterations=timing.gated_iterations(15, 8), warmup=1, gate=self.gate
        )
        return float(sorted(timed.seconds)[len(timed.seconds) // 2] * 1e6)

    def _model_metrics(
        self,
        spec: KernelSpec,
        layout: Layout,
        src,
        ce_gbps,
        plan_us: Optional[float] = None,
        reuse: int = 1,
        group: int = 0,
    ) -> dict[str, Optional[float]]:
        if spec.model_mode is None:
            return {"model_ratio_to_ce": None}
        return model_metrics(spec, layout, src, self.config.link, ce_gbps, plan_us, reuse, group)

    def _params(self, case: Case) -> GatherParams:
        lay = case.layout
        p = self.config.link
        return GatherParams(
            kernel=case.kernel,
            record_bytes=lay.record_bytes,
            stride_bytes=lay.stride,
            base_offset_bytes=lay.base_offset,
            pattern=pattern_name(lay.pattern, lay.run_length),
            sm_limit=case.sm_limit,
            sms_total=self.sm_count,
            records=lay.records,
            slots=lay.slots,
            dst_stride_bytes=lay.dst_stride,
            mps_bytes=p.mps,
            mrrs_bytes=p.mrrs,
            rcb_bytes=p.rcb,
            link_params=self.config.link_source,
            link=self.link_text,
        )

    @staticmethod
    def _settings(case: Case) -> RunSettings:
        return RunSettings(sweep=case.sweep, seed=case.layout.seed)

    # -- orchestration ---------------------------------------------------------------------------
    def sample_link(self) -> None:
        """Read the GPU link from sysfs while copies run (GPUs downclock idle links, LINK-01)."""
        from gdrdiag.hw import cuda, gpu_link

        nbytes = min(self.table.size, self.dst.size, 256 << 20)
        for _ in range(4):
            cuda.call("cuMemcpyHtoDAsync", self.dst.ptr, self.table.ptr, nbytes, self.stream.handle)
        try:
            self.link = gpu_link.read_link(self.facts.pci_bus_id)
        except ValueError as exc:
            self.link = None
            self.link_text = f"unknown: {exc}"
        finally:
            self.stream.synchronize()
        if self.link is not None:
            if self.link.raw_gbytes_per_s:
                self.link_text = (
                    f"Gen{self.link.generation} x{self.link.width} "
                    f"({self.link.raw_gbytes_per_s:.2f} GB/s raw, sysfs, sampled during a copy)"
                )
            else:
                self.link_text = "unknown: " + "; ".join(f"{k}: {v}" for k, v in self.link.unknown.items())

    def run_all(self, progress: ProgressFn) -> GatherRun:
        cfg = self.config
        ladder = sweep_cases("ladder", cfg.base, cfg.kernels, self.sm_count, threads=cfg.threads)
        ladder = [replace(c, sm_limit=cfg.sm_limit) for c in ladder]
        other = [s for s in cfg.sweeps if s != "ladder"]
        planned_layouts = [cfg.base] + [
            c.layout
            for s in other
            for c in sweep_cases(s, cfg.base, ["warp"], self.sm_count, quick=cfg.quick)
        ]
        for lay in planned_layouts:
            lay.validate()
        self.allocate_for(planned_layouts)
        self.link, self.link_text = None, "unknown: not read yet"
        self.sample_link()
        lk = self.link
        if not cfg.link_explicit and lk is not None and lk.mps and lk.mrrs and lk.rcb:
            try:
                cfg.link = replace(cfg.link, mps=lk.mps, mrrs=lk.mrrs, rcb=lk.rcb)
                cfg.link_source = "read from the GPU's PCIe capability (a VM shows its virtual view)"
            except ValueError:
                pass
        results: list[BenchResult] = []
        ce_cache: dict[int, BenchResult] = {}
        notes: list[str] = []
        placeholder = ["lines", "warp", "warp-ilp", "persistent"][: max(1, len(cfg.sweep_kernels))]
        total_est = len(ladder) + sum(
            len(
                sweep_cases(
                    s, cfg.base, placeholder if s != "sm" else ["lines"], self.sm_count, quick=cfg.quick
                )
            )
            for s in other
        )
        done = 0

        def ce_for(layout: Layout) -> BenchResult:
            if layout.nbytes not in ce_cache:
                from gdrdiag.bench.runner import run_case

                res = run_case(CE_KEY, lambda: self.ce_reference(layout.nbytes, layout))
                ce_cache[layout.nbytes] = res[0]
                results.extend(res)
            return ce_cache[layout.nbytes]

        def measure(case: Case) -> list[BenchResult]:
            nonlocal done
            from gdrdiag.bench.runner import run_case

            done += 1
            if progress:
                progress(
                    done, max(total_est, done), f"{case.sweep}: {case.kernel} R={case.layout.record_bytes}"
                )
            ce = ce_for(case.layout)
            spec = KERNELS[case.kernel]
            # What a WAIVED/ERROR result of this case records (the measured one records more).
            fields = dict(
                params=GatherParams(
                    kernel=case.kernel,
                    record_bytes=case.layout.record_bytes,
                    stride_bytes=case.layout.stride,
                    base_offset_bytes=case.layout.base_offset,
                    pattern=pattern_name(case.layout.pattern, case.layout.run_length),
                    sm_limit=case.sm_limit,
                    threads=case.threads,
                ),
                settings=self._settings(case),
            )
            out = run_case(spec.key, lambda: self.gather(case, ce), **fields)
            results.extend(out)
            return out

        ladder_results = [r for c in ladder for r in measure(c)]
        ok = [r for r in ladder_results if r.status is Status.OK and r.value]
        best = pick_best(ok)
        best_name = str(best.params.kernel) if best is not None else "lines"
        if best is not None:
            ratio = best.metrics.ratio_to_ce
            model = best.metrics.model_ratio_to_ce
            notes.append(
                f"best kernel at R={cfg.base.record_bytes} B, "
                f"{pattern_name(cfg.base.pattern, cfg.base.run_length)}"
                f" indices: {best_name}, {best.value:.2f} GB/s"
                + (f" = {ratio:.3f} of CE measured in the same run" if ratio else "")
                + (f" (model allows {model:.3f})" if model else "")
            )
        kernels = tuple(dict.fromkeys(best_name if k == "best" else k for k in cfg.sweep_kernels))
        for sweep in other:
            ks = kernels if sweep != "sm" else (best_name,)
            if sweep == "sm" and KERNELS[best_name].mapping != "persistent":
                ks = ("lines",)
            sweep_results = [
                r
                for c in sweep_cases(sweep, cfg.base, ks, self.sm_count, quick=cfg.quick, threads=cfg.threads)
                for r in measure(c)
            ]
            if sweep == "sm":
                pts = [
                    (int(r.params.sm_limit), r.value)
                    for r in sweep_results
                    if r.status is Status.OK and r.value and r.params.sm_limit
                ]
                need = min_sms_for_fraction(pts, 0.95)
                if need is not None:
                    notes.append(
                        f"{ks[0]} reaches 95% of its all-SM bandwidth with {need} of {self.sm_count} SMs"
                    )
                    for i, r in enumerate(results):
                        if r in sweep_results and r.params.sm_limit == self.sm_count:
                            results[i] = replace(r, metrics=replace(r.metrics, min_sms_for_95pct=float(need)))
        for row in record_size_summary(results):
            line = (
                f"R={row['record_bytes']} B {row['pattern']}: best {row['best_kernel']} "
                f"{_fmt(row['best_ratio_to_ce'])} x CE, ceiling {_fmt(row['ceiling_ratio_to_ce'])}, "
                f"best/ceiling {_fmt(row['best_over_ceiling'])}"
            )
            if row.get("kernel_ratio_to_ce") is not None:
                line += (
                    f"; planned-lines {_fmt(row['kernel_ratio_to_ce'])} measured vs "
                    f"{_fmt(row.get('kernel_predicted_ratio_to_ce'))} predicted "
                    f"(pred/meas {_fmt(row.get('kernel_predicted_over_measured'))})"
                )
            notes.append(line)
        notes.append(
            f"link: {self.link_text}; model PCIe parameters: MPS {cfg.link.mps}, MRRS {cfg.link.mrrs}, "
            f"RCB {cfg.link.rcb}, {cfg.link.cpl_overhead} B per completion ({cfg.link_source})"
        )
        return GatherRun(
            results=results, notes=notes, link=self.link, gpu_name=self.facts.name, sm_count=self.sm_count
        )
