"""The gather kernels of native/gather.cu as data: launch shape, model mode, and what each keeps in flight.

One ``KernelSpec`` per kernel of the ladder; gather-bench's registry cases, the runner and the PCIe
model all read this table, so a new kernel is one entry here and one function in native/gather.cu.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.pathmodel import pcie as pcie_model


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
    flat: bool = False  # a thread per 16-B chunk (planned-flat): records must divide 512 B
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
            "planned-flat",
            "gather_flat_dedupe",
            "persistent",
            1024,
            "sector",
            line_aware=True,
            merges_runs=True,
            presort=True,
            reuse_plan=True,
            dedupe=True,
            flat=True,
            doc="planned-lines' plan read one 16-B chunk per thread, 4 in flight "
            "(records of 16-512 B that divide 512 B)",
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


BEST_CANDIDATES = (
    "planned-lines",
    "planned-flat",
    "sorted-lines",
    "lines",
    "lines-l2pf",
    "bulk",
    "persistent",
    "warp-ilp",
)


LINES_RECORDS_PER_WARP = 8  # LINES_M in native/gather.cu


LINES_INSTR_IN_FLIGHT = 8  # LINES_K


# Batches one plan (the sorted pairs) serves by default. The plan depends on the indices only,
# not on the table: in KV-cache offload one token list is gathered once per layer (each layer
# has its own KV pool), so the layers of one step can share it. 32 is a stated choice (fewer
# than the layers of large models), not a measured one; --plan-reuse 1 is a sort per batch.
DEFAULT_PLAN_REUSE = 32


ILP_CHUNKS = 8  # warp_ilp's K (chunks per lane per pass)


FLAT_CHUNKS_IN_FLIGHT = 4  # FLAT_F in native/gather.cu (16-B chunks per thread, loads before stores)


BULK_MAX_DEPTH = 8


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


def planned_records_per_step(record_bytes: int) -> int:
    """Records per warp step of gather_lines_dedupe: 32 up to 128-B records, else 8 (LINES_M).

    At 8 records a step of 64-B records is 512 B: the step's index loads, shuffles and PCIe round
    trip then serve too few bytes (H100, 0.866 of CE against a 0.896 ceiling).
    """
    return 32 if record_bytes <= 128 else LINES_RECORDS_PER_WARP


def flat_layout_problem(record_bytes: int, stride: int, base_offset: int) -> Optional[str]:
    """Why planned-flat cannot gather this layout, or None where it can.

    gather_flat_dedupe computes a record's chunk with a shift (C = R / 16 a power of two) and its
    model assumes a 512-B warp load holds whole records; any other layout is planned-lines' job.
    """
    R = record_bytes
    if R % 16 or 512 % R or stride % 16 or base_offset % 16:
        return (
            f"planned-flat takes 16-B aligned records that divide 512 B (16, 32, ..., 512 B); "
            f"this layout has R={R}, stride={stride}, offset={base_offset} (planned-lines covers it)"
        )
    return None


def flat_records_per_load(record_bytes: int) -> int:
    """Records one 512-B warp load of gather_flat_dedupe covers (its read plan's group)."""
    return pcie_model.INSTRUCTION_BYTES // record_bytes


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
    if spec.flat:
        return FLAT_CHUNKS_IN_FLIGHT * pcie_model.INSTRUCTION_BYTES
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


def round_up(value: int, to: int) -> int:
    """``value`` rounded up to a multiple of ``to``."""
    return -(-value // to) * to
