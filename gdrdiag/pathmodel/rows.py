"""Rows -> paths: what each kind of measured row moved, from where to where, and by what mover.

Pure. The first step of the path model (:mod:`gdrdiag.pathmodel.judge`): a gdrdiag bench row, an imported
tool's row or a posted number becomes a :class:`RowPath` (source, destination, mover, size, the
sweep it belongs to), or the reason it has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.params import (
    COPY_MODE_TOGETHER,
    CopyParams,
    GatherParams,
    ImportedParams,
    MrParams,
    NcclRunFacts,
    PeerParams,
)
from gdrdiag.model.path import Endpoint, Mover, Place
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.pathmodel.peer import pattern_cost_us

# Bytes per second of each bandwidth unit a tool prints (GB/s = 1e9 B/s: gdrdiag/units.py).
_BYTES_PER_S = {
    "GB/s": 1e9,
    "Gb/s": 1e9 / 8,
    "MB/s": 1e6,
    "MiB/s": float(1 << 20),
    "GiB/s": float(1 << 30),
    "Mb/s": 1e6 / 8,
}


@dataclass(frozen=True)
class CollectiveRoute:
    """Where an NCCL collective's ranks sat and how NCCL connected them, as far as its output said.

    ``nodes`` 1 with ``gpus``: one host, the CUDA ordinals of its ranks; ``staged``: why the bytes went
    through host memory instead of GPU peer paths (``NCCL_P2P_DISABLE=1``, ``channels via SHM``),
    None when NCCL used P2P or the output does not say; ``op``: which collective (its ring kernel's
    steps: :mod:`gdrdiag.pathmodel.collective`).
    """

    nodes: Optional[int] = None
    gpus: tuple[int, ...] = ()
    staged: Optional[str] = None
    op: Optional[str] = None  # the collective: all_reduce, all_gather, ... (nccl-tests' names)


@dataclass(frozen=True)
class RowPath:
    """The path of one row, before any expectation."""

    source: Endpoint
    destination: Endpoint
    mover: Mover
    size: Optional[int]
    gpu: Optional[int]
    nic: Optional[str]
    family: tuple  # rows of one sweep share it (everything but the size)
    both_directions: bool = False  # a bidirectional row: bytes moved both ways at once
    ops_in_flight: int = 1  # QPs: NIC operations that overlap
    peer_gpu: Optional[int] = None
    peer_access: Optional[bool] = None
    peer_sources: Optional[int] = None  # all-to-one: how many GPUs copy into the destination at once
    # all-to-all (GPUs 0..peer_sources-1 each into every other) or one-to-all (source into every other
    # GPU) at once: the pattern the peer model's node-wide expectation is asked for; None: a pair's path
    peer_pattern: Optional[str] = None
    ranks: Optional[int] = None
    baseline: Optional[str] = None  # a rung built to be slow: why it is never a loss
    reference: Optional[str] = None  # a measured yardstick of the same Report (key) when facts are missing
    issue_us_per_op: Optional[float] = None  # host time per operation, measured with the row (issue loops)
    window: Optional[int] = None  # messages a tool keeps in flight (ucx_perftest's "Window size")
    # peer-bench's node-wide rows: what a sample pays once beside its bytes (pathmodel/peer.py
    # pattern_cost_us: the fork/join across GPUs and the copies a GPU runs in turn)
    per_sample_us: Optional[float] = None
    collective: Optional[CollectiveRoute] = None  # NCCL rows: hosts, GPUs and transport of the run


def to_gbytes_per_s(value: float, unit: str) -> Optional[float]:
    """``value`` in GB/s, or None when ``unit`` is not a bandwidth."""
    scale = _BYTES_PER_S.get(unit)
    return value * scale / 1e9 if scale is not None else None


# ---------------------------------------------------------------------------------------------
# rows -> paths
# ---------------------------------------------------------------------------------------------

_HOST_KINDS = {MemoryKind.PINNED, MemoryKind.PINNED_WC, MemoryKind.REGISTERED, MemoryKind.PAGEABLE}


def _host(memory: Optional[MemoryKind]) -> Endpoint:
    return Endpoint(Place.HOST, None, memory)


def _gpu(index: Optional[int], memory: Optional[MemoryKind] = MemoryKind.DEVICE) -> Endpoint:
    return Endpoint(Place.GPU, index, memory)


def ran_on(p: "CopyParams | GatherParams | MrParams") -> int:
    """The CUDA ordinal a gdrdiag bench row ran on (its GPU's link judges it).

    0 for a Report written before rows recorded it: copy-, gather- and mr-bench ran on
    ``--device``/``--gpu`` 0 unless told otherwise, and the path model assumed GPU 0.
    """
    return p.gpu if p.gpu is not None else 0


def _copy_path(r: BenchResult, p: CopyParams) -> tuple[Optional[RowPath], Optional[str]]:
    direction = p.direction.value if p.direction is not None else None
    key = r.key
    gpu = ran_on(p)
    if p.mode == COPY_MODE_TOGETHER:
        return (
            None,
            "every GPU copying at once: the host's memory and root complexes bound it, of which gdrdiag "
            "has no model; ratio_to_sum_alone compares it with the GPUs alone",
        )
    if key.startswith("copy_overlap"):
        return (
            None,
            "overlap pipeline: its bandwidth includes the kernel's time; judged by its speedup metric",
        )
    if key.startswith("copy_pinning_"):
        if key == "copy_pinning_preallocated":
            return RowPath(
                _host(MemoryKind.PINNED), _gpu(gpu), Mover.COPY_ENGINE, p.size_bytes, gpu, None, (key, gpu)
            ), None
        return RowPath(
            _host(MemoryKind.PAGEABLE),
            _gpu(gpu),
            Mover.COPY_ENGINE,
            p.size_bytes,
            gpu,
            None,
            (key, gpu),
            baseline="a rung of the pinning trade-off (pin per transfer, or none): slow by design",
        ), None
    if key.startswith("copy_blocks_"):
        mover = Mover.SM if key.endswith("_kernel") else Mover.COPY_ENGINE
        size = p.block_bytes
        if key.endswith("_coalesced") or key.endswith("_kernel"):
            size = (p.block_bytes or 0) * (p.blocks or 1) or None
        # The batched rows time one cuMemcpyBatchAsync at a time on a drained stream, where the
        # driver's cost grows with the bytes (its idle-stream path) rather than per copy; the same
        # call behind queued work runs at the link's rate (docs/benchmarks.md). Their
        # ratio (host call against stream, paths._host_issued_at) is shown; the block summary's
        # half-bandwidth sizes judge them.
        baseline = (
            "one batched call at a time on a drained stream: the driver's idle-stream path, judged by "
            "the block summary"
            if key.startswith("copy_blocks_batched")
            else None
        )
        return RowPath(
            _host(MemoryKind.PINNED),
            _gpu(gpu),
            mover,
            size,
            gpu,
            None,
            (key, gpu),
            baseline=baseline,
            issue_us_per_op=issue_per_op(r),
        ), None
    if direction not in ("h2d", "d2h", "bidir"):
        return None, f"copy direction {direction!r} is not a host<->GPU path"
    memory = p.memory
    host = _host(memory)
    src, dst = (host, _gpu(gpu)) if direction != "d2h" else (_gpu(gpu), host)
    return RowPath(
        src, dst, Mover.COPY_ENGINE, p.size_bytes, gpu, None, (key, p.mode, gpu), direction == "bidir"
    ), None


def _gather_path(r: BenchResult, p: GatherParams, best: dict) -> tuple[Optional[RowPath], Optional[str]]:
    gpu = ran_on(p)
    if r.key == "gather_ce_reference":
        return RowPath(
            _host(MemoryKind.PINNED), _gpu(gpu), Mover.COPY_ENGINE, p.copy_bytes, gpu, None, (r.key, gpu)
        ), None
    layout = _gather_layout(p)
    baseline = None
    if best.get(layout) is not r:
        baseline = "a rung of the kernel ladder: only the best kernel of a layout is judged against the model"
    if p.sm_limit is not None and p.sms_total is not None and p.sm_limit != p.sms_total:
        baseline = f"SM-limited run ({p.sm_limit} of {p.sms_total} SMs): slower by design"
    return RowPath(
        _host(MemoryKind.PINNED), _gpu(gpu), Mover.SM, p.slots, gpu, None, (r.key, layout), baseline=baseline
    ), None


def _gather_layout(p: GatherParams) -> tuple:
    """What a kernel ladder shares: the layout, and the GPU it ran on (each GPU's best is judged)."""
    return (
        p.record_bytes,
        p.stride_bytes,
        p.base_offset_bytes,
        p.pattern,
        p.slots,
        r_sweep_free(p),
        ran_on(p),
    )


def r_sweep_free(p: GatherParams) -> Optional[int]:
    """The part of a gather's identity that a kernel ladder shares (the records, not the kernel)."""
    return p.records


def _mr_path(r: BenchResult, p: MrParams) -> tuple[Optional[RowPath], Optional[str]]:
    if not r.key.startswith("rdma_write_"):
        return None, "an RDMA registration or loop cost, not a bandwidth: judged by mr-bench's own rules"
    if (p.mode or "bw") != "bw":
        return None, f"mr-bench {p.mode} mode: a latency or per-block cost, not a path bandwidth"
    if p.role == "server":
        return None, "the server side of a two-host run: the client's row carries the bandwidth"
    gpu = ran_on(p)
    landing_gpu = p.landing == "gpu" if p.landing else p.memory is MemoryKind.DEVICE
    # a two-host client's destination is the server's GPU, whose ordinal the client does not know:
    # judged against this machine's first GPU, as before rows recorded their GPU
    dst = _gpu(0 if p.role == "client" else gpu) if landing_gpu else _host(p.memory)
    src_kind = p.src_memory or p.memory
    src = _gpu(gpu) if src_kind is MemoryKind.DEVICE else _host(src_kind)
    qps = p.qps or 1
    return RowPath(
        src,
        dst,
        Mover.NIC_DMA,
        p.size_bytes,
        gpu,
        r.settings.device_name,
        (r.key, str(p.reg_path), p.relaxed_ordering, qps, p.post_list, gpu),
        ops_in_flight=qps,
    ), None


NCCL_LOG_REASON = "no bandwidth: an NCCL log (the facts of a run, NCCL_DEBUG=INFO, with no nccl-tests table)"


def facts_only(r: BenchResult) -> bool:
    """True for a result that holds facts and no number by design (an imported NCCL INFO log)."""
    p = r.params
    return isinstance(p, ImportedParams) and p.path_kind is PathKind.FACTS and r.value is None


def _imported_path(r: BenchResult, p: ImportedParams) -> tuple[Optional[RowPath], Optional[str]]:
    """An imported row's path, from the path fields its importer filled (kind, mover, flow).

    The tool and test names only group a sweep and name the row in a reason; they decide nothing.
    """
    kind = p.path_kind
    gpu = p.gpu if p.gpu is not None else 0
    if kind is PathKind.CPU_STORES:
        return (
            None,
            "CPU stores into GPU memory through its BAR (gdrcopy): the CPU moves the bytes, no DMA path "
            "to model",
        )
    # one sweep: the same test on the same devices from one file (each posted number is its own run)
    run = r.key if r.own_run else p.source_file
    family = (p.tool, p.test, p.direction, p.memory, p.gpu, p.peer_gpu, p.peer_access, p.qps, p.access, run)
    if kind is PathKind.NIC_DMA:
        mem = _gpu(gpu) if p.memory is MemoryKind.DEVICE else _host(p.memory or MemoryKind.PINNED)
        remote = Endpoint(Place.REMOTE, None, p.memory)
        src, dst = (remote, mem) if p.flow is Flow.FROM_REMOTE else (mem, remote)
        return RowPath(
            src, dst, Mover.NIC_DMA, p.size_bytes, gpu, p.device_name, family, ops_in_flight=p.qps or 1
        ), None
    if kind is PathKind.FACTS:
        return None, NCCL_LOG_REASON
    if kind is PathKind.COLLECTIVE:
        return _collective_path(p, gpu, family)
    if kind is PathKind.GPU_GPU:
        return _peer_copy_path(r, p, gpu, family)
    if kind is PathKind.HOST_GPU:
        return _host_copy_path(p, gpu, family)
    if p.path_unknown:
        return None, p.path_unknown
    return None, f"{p.tool or ''} {p.test or ''}: a measurement this version's path model does not know"


def _peer_copy_path(
    r: BenchResult, p: ImportedParams, gpu: int, family: tuple
) -> tuple[Optional[RowPath], Optional[str]]:
    """A GPU-to-GPU copy another tool timed (p2pBandwidthLatencyTest, nvbandwidth, bandwidthTest).

    Judged as a copy-engine copy whatever ``p.mover`` says: the imported peer rows have always been
    held to the copy engine's bound and per-copy cost (nvbandwidth's ``*_sm`` ones included), and
    these verdicts are kept until the SM peer bound is checked against real runs.
    """
    if p.peer_gpu is None or p.peer_gpu == p.gpu:
        return None, "a copy within one GPU's memory (HBM), not a data path gdrdiag models"
    if to_gbytes_per_s(1.0, r.unit) is None:
        return None, f"a per-copy latency ({r.unit or '?'}), not a bandwidth"
    return RowPath(
        _gpu(gpu),
        _gpu(p.peer_gpu),
        Mover.COPY_ENGINE,
        p.size_bytes,
        gpu,
        None,
        family,
        both_directions=p.flow is Flow.PEER_BIDIR,
        peer_gpu=p.peer_gpu,
        peer_access=p.peer_access,
        baseline=p.baseline,
        window=p.window,
    ), None


def _host_copy_path(p: ImportedParams, gpu: int, family: tuple) -> tuple[Optional[RowPath], Optional[str]]:
    """A host<->GPU copy another tool timed (nvbandwidth, bandwidthTest, a posted cudaMemcpy)."""
    host = _host(p.memory or MemoryKind.PINNED)
    src, dst = (_gpu(gpu), host) if p.flow is Flow.D2H else (host, _gpu(gpu))
    if p.devices_summed and p.devices_summed > 1:
        return None, (
            f"the sum of {p.devices_summed} GPUs measured one after another (bandwidthTest "
            "--device=all): import one run per GPU (--device=N) to judge each link"
        )
    if p.reverse_load:
        # The two directions share a host link unevenly: on the H100 VMs of tests/real/ H2D keeps
        # 0.68-0.71 of its one-way rate while D2H keeps 0.90-0.95; on the H200 pair both ~0.88
        # (docs/benchmarks.md, "real runs"; the same split: github.com/NVIDIA/nvbandwidth/issues/11)
        return None, (
            "one direction timed while the reverse copy runs: the directions share the link unevenly, "
            "so only their sum has a model (copy-bench's both-ways row judges it)"
        )
    mover = p.mover or Mover.COPY_ENGINE
    return RowPath(
        src, dst, mover, p.size_bytes, gpu, None, family, p.flow is Flow.BIDIR, window=p.window
    ), None


def staged_reason(facts: Optional[NcclRunFacts]) -> Optional[str]:
    """Why NCCL moved a run's bytes through host memory instead of GPU peer paths, or None.

    NCCL_P2P_DISABLE=1 and NCCL_P2P_LEVEL=LOC turn its P2P transport off (NCCL env docs,
    https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-p2p-disable); channels
    ``via SHM`` or ``via NET`` with none ``via P2P`` show it whatever the reason.
    """
    if facts is None:
        return None
    disable = facts.setting("NCCL_P2P_DISABLE")
    if disable is not None and disable.strip() not in ("", "0"):
        return f"NCCL_P2P_DISABLE={disable}"
    level = facts.setting("NCCL_P2P_LEVEL")
    if level is not None and level.strip().upper() in ("LOC", "0"):
        return f"NCCL_P2P_LEVEL={level}"
    if not facts.uses("P2P") and not facts.uses("NVLS"):
        via = next((t for t in facts.transports if t.kind in ("SHM", "NET")), None)
        if via is not None:
            return f"channels via {via.kind}/{via.detail}"
    return None


def _collective_path(p: ImportedParams, gpu: int, family: tuple) -> tuple[Optional[RowPath], Optional[str]]:
    """An NCCL row: GPU to GPU when its ranks sat on one host, else the GPU to the far side (NICs).

    Facts from the output (:class:`gdrdiag.model.params.NcclRunFacts`: NCCL's nNodes, or the hosts of
    nccl-tests' rank lines) say where the ranks were; without them the row stays ``->remote`` and
    the bounds decide by the rank count against the machine's GPUs.
    """
    facts = p.nccl
    nodes = facts.nodes if facts is not None else None
    if facts is not None and nodes is None and facts.single_node:
        nodes = 1
    gpus: tuple[int, ...] = ()
    if facts is not None and nodes == 1:
        gpus = tuple(sorted({d.cuda_dev for d in facts.devices if d.cuda_dev is not None}))
    route = CollectiveRoute(nodes, gpus, staged_reason(facts), p.collective)
    src, dst = _gpu(gpu), Endpoint(Place.REMOTE)
    if nodes == 1 and len(gpus) >= 2:
        src, dst = _gpu(gpus[0]), _gpu(gpus[-1])
    elif nodes == 1 and (p.ranks or len(gpus)) == 1:
        return None, "one rank on one GPU: no bytes move between GPUs (busbw is 0 by definition)"
    return RowPath(
        src,
        dst,
        Mover.COLLECTIVE,
        p.size_bytes,
        src.index,
        p.device_name,
        family,
        ranks=p.ranks,
        collective=route,
    ), None


# peer-bench's block sweep: the ways that pay one operation per block (their size is the block's),
# beside those that move the whole set in one (bench/peer_blocks.py).
_PER_BLOCK_KEYS = ("peer_blocks_per_call", "peer_blocks_batched")


def _peer_path(r: BenchResult, p: PeerParams) -> tuple[Optional[RowPath], Optional[str]]:
    """peer-bench rows: GPU to GPU, by the copy engine or an SM kernel, peer access on or off.

    Block-sweep rows: one call per block (or one batched entry) is one operation of the block's
    size, so the sweep over block sizes fits its per-operation cost; the coalesced copy and the
    gather kernel move every block in one operation. All-to-one rows: ``sources`` copies in flight
    at once into the destination, the size being all of their bytes, with the node-wide rows' cost
    per sample.
    """
    if r.key == "peer_blocks_summary":
        return None, "a summary of the block sweep (half-bandwidth block sizes), not a bandwidth"
    if p.op == "latency":
        return None, "a per-copy latency (us), not a bandwidth"
    if p.op in NODE_PATTERNS:
        return _node_pattern_path(r, p)
    many = p.op == "all_to_one" and (p.sources or 1) > 1
    if (p.src_gpu is None and not many) or p.dst_gpu is None:
        return None, "a peer-bench row without its GPU pair"
    mover = Mover.SM if p.mover == "sm" else Mover.COPY_ENGINE
    family = (r.key, p.src_gpu, p.dst_gpu, p.mover, p.op, p.peer_access, p.bidirectional, p.library)
    size, per_sample = p.size_bytes, None
    if r.key in _PER_BLOCK_KEYS and p.block_bytes:
        size = p.block_bytes
    if p.op == "all_to_one":
        size = (p.size_bytes or 0) * (p.sources or 1) or None
        per_sample = pattern_cost_us(1) if many else None  # the sources copy at once, one each
    return RowPath(
        _gpu(p.src_gpu),
        _gpu(p.dst_gpu),
        mover,
        size,
        p.src_gpu,
        None,
        family,
        both_directions=bool(p.bidirectional),
        peer_gpu=p.dst_gpu,
        peer_access=p.peer_access,
        peer_sources=p.sources if p.op == "all_to_one" else None,
        issue_us_per_op=issue_per_op(r) if r.key in _PER_BLOCK_KEYS else None,
        per_sample_us=per_sample,
    ), None


# peer-bench's node-wide patterns (bench/peer_all_to_all.py): judged against the peer model's steps
# (all to all) or one GPU's egress (one to all), not a pair's path.
NODE_PATTERNS = ("all_to_all", "one_to_all")


def _node_pattern_path(r: BenchResult, p: PeerParams) -> tuple[Optional[RowPath], Optional[str]]:
    """All-to-all or one-to-all rows, the size being all the bytes, with their cost per sample.

    All-to-all: ``sources`` GPUs, each into every other in n-1 shifted steps, one copy per GPU at a
    time (:func:`gdrdiag.pathmodel.peer.all_to_all_schedule`); one-to-all: ``src_gpu`` into
    ``destinations``, which its copy engine runs in turn.
    """
    if p.op == "all_to_all":
        n = p.sources or 0
        if n < 2:
            return None, "an all-to-all row without its GPU count"
        copies, in_turn = n * (n - 1), n - 1
    else:
        if p.src_gpu is None or not p.destinations:
            return None, "a one-to-all row without its source GPU or destination count"
        copies = in_turn = p.destinations
    return RowPath(
        _gpu(p.src_gpu),
        _gpu(p.dst_gpu),
        Mover.COPY_ENGINE,
        (p.size_bytes or 0) * copies or None,
        p.src_gpu,
        None,
        (r.key, p.src_gpu, p.op, p.sources, p.destinations, p.peer_access),
        peer_access=p.peer_access,
        peer_sources=p.sources,
        peer_pattern=p.op,
        per_sample_us=pattern_cost_us(in_turn),
    ), None


def issue_per_op(r: BenchResult) -> Optional[float]:
    """The host's time per block (us) of a row that issues its blocks from a loop or one batched call.

    ``issue_us_per_call`` is measured per driver call: per block for one call per block, for the
    whole set for a batched call (so divided by its blocks here). None for rows without it.
    """
    issue = getattr(r.metrics, "issue_us_per_call", None)
    blocks = getattr(r.params, "blocks", None) or 1
    if not issue or issue <= 0 or not getattr(r.params, "block_bytes", None):
        return None
    return issue / blocks if "batched" in r.key else issue


def best_gathers(results: Sequence[BenchResult]) -> dict:
    """The fastest all-SM gather of each layout: the row the model judges."""
    best: dict = {}
    for r in results:
        p = r.params
        if not isinstance(p, GatherParams) or r.key == "gather_ce_reference" or r.status is not Status.OK:
            continue
        if p.sm_limit is not None and p.sms_total is not None and p.sm_limit != p.sms_total:
            continue
        layout = _gather_layout(p)
        if r.value and (layout not in best or r.value > (best[layout].value or 0)):
            best[layout] = r
    return best


def path_of(r: BenchResult, best_gathers: Optional[dict] = None) -> tuple[Optional[RowPath], Optional[str]]:
    """The path of one result, or (None, why it has none)."""
    p = r.params
    if isinstance(p, CopyParams):
        if r.key == "copy_blocks_summary":
            return None, "a summary of the block sweep (half-bandwidth block sizes), not a bandwidth"
        return _copy_path(r, p)
    if isinstance(p, GatherParams):
        return _gather_path(r, p, best_gathers if best_gathers is not None else {})
    if isinstance(p, MrParams):
        return _mr_path(r, p)
    if isinstance(p, ImportedParams):
        return _imported_path(r, p)
    if isinstance(p, PeerParams):
        return _peer_path(r, p)
    return None, "a result kind the path model does not know"
