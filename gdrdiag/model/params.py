"""Typed parameters, metrics and run settings of bench results: one frozen dataclass per bench.

Every field says its unit in its name (``size_bytes``, ``us_per_block``) or its type
(``MemoryKind``). Unknown is ``None``, never a made-up number; the reason a value is missing lives
in the result's ``reason`` or ``method``.

- *Params* are the physics of a case: what was measured. Fields marked ``IDENTITY_NO`` describe the
  case (where the bytes land) or the machine it ran on (SM count, MPS) and are shown, not matched.
- *Metrics* are derived numbers (ratios to a same-run reference, per-call costs, model predictions).
- *RunSettings* are how the run was made (iterations, seed, which sweep): never identity.

Each params and metrics class carries its ``bench`` as the first field, which is how a Report's
JSON says which class a result's ``params``/``metrics`` object is.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Optional, Union

from gdrdiag.model.imported_path import Flow, PathKind, legacy_path
from gdrdiag.model.path import Mover
from gdrdiag.model.vocabulary import AccessFlags, Bench, Direction, MemoryKind, RegPath

# Field metadata: a parameter that is shown beside a case but does not define it.
IDENTITY_NO = {"identity": False}

ParamValue = Union[str, int, float, bool, None]


_RELAXED_ORDERING_BIT = int(AccessFlags.RELAXED_ORDERING)


def _not_identity(default: object = None) -> object:
    return field(default=default, metadata=IDENTITY_NO)


# Field metadata: a parameter that is neither identity nor shown (the path model's input, which the
# tool and test names already say to a person).
HIDDEN = {"identity": False, "shown": False}


def _hidden() -> object:
    return field(default=None, metadata=HIDDEN)


# Field metadata key: an identity field whose value equals this is left out of the identity, so a
# Report written before the field existed (value None, which meant this value) pairs with a newer one.
IDENTITY_IMPLIED = "identity_implied"


def _gpu_ordinal() -> object:
    """The CUDA ordinal a case ran on: identity, with 0 implied.

    GPU 1 of one Report pairs with GPU 1 of another, never with GPU 0; Reports written before the
    field existed ran on GPU 0 (the benches' default) and are judged against it, so 0 and unset pair.
    """
    return field(default=None, metadata={IDENTITY_IMPLIED: 0})


# ---------------------------------------------------------------------------------------------
# params
# ---------------------------------------------------------------------------------------------


# CopyParams.mode of a row where every GPU of ``streams`` copied at once (bench/copy_together.py): the
# row ran on no one GPU, so it records none and is never one GPU's row.
COPY_MODE_TOGETHER = "together"


@dataclass(frozen=True)
class CopyParams:
    """A host<->GPU copy case."""

    bench: Bench = Bench.COPY
    memory: Optional[MemoryKind] = None  # the host side's memory kind
    direction: Optional[Direction] = None
    mode: Optional[str] = None  # async (CUDA events) or sync (wall clock)
    size_bytes: Optional[int] = None
    layers: Optional[int] = None  # overlap pipeline
    chunk_bytes: Optional[int] = None  # overlap pipeline, bytes per layer
    streams: Optional[int] = None
    block_bytes: Optional[int] = None  # block sweep
    blocks: Optional[int] = None
    library: Optional[str] = None  # the reference copy's library (cupy, torch)
    same_buffers: Optional[bool] = None  # reference timed on gdrdiag's own buffers
    gpu: Optional[int] = _gpu_ordinal()  # type: ignore[assignment]  # CUDA ordinal (--device)
    # The GPU link read while copies ran (GPUs lower an idle link's speed): shown, not identity.
    link: Optional[str] = _not_identity()  # type: ignore[assignment]
    link_generation: Optional[int] = _not_identity()  # type: ignore[assignment]
    link_width: Optional[int] = _not_identity()  # type: ignore[assignment]
    link_max_generation: Optional[int] = _not_identity()  # type: ignore[assignment]
    link_max_width: Optional[int] = _not_identity()  # type: ignore[assignment]


@dataclass(frozen=True)
class GatherParams:
    """A zero-copy gather case (or the copy-engine reference it is divided by)."""

    bench: Bench = Bench.GATHER
    kernel: Optional[str] = None
    record_bytes: Optional[int] = None
    stride_bytes: Optional[int] = None
    base_offset_bytes: Optional[int] = None
    pattern: Optional[str] = None
    slots: Optional[int] = None
    records: Optional[int] = None
    copy_bytes: Optional[int] = None  # the copy-engine reference: bytes copied
    sm_limit: Optional[int] = None
    dst_stride_bytes: Optional[int] = None
    threads: Optional[int] = None
    depth: Optional[int] = None  # records in flight per warp (bulk kernel)
    records_per_step: Optional[int] = None  # planned/dedupe kernels: records a warp takes per step
    plan_reuse: Optional[int] = None  # planned-lines: gathers that share one sort of the index set
    # planned kernels: batches 2..plan_reuse launched with programmatic dependent launch, so each
    # batch's start overlaps the previous batch's end (gather_session, native/gather.cu)
    overlapped_batches: Optional[bool] = None
    gpu: Optional[int] = _gpu_ordinal()  # type: ignore[assignment]  # CUDA ordinal (--device)
    # The machine the model was evaluated for: shown, not identity.
    sms_total: Optional[int] = _not_identity()  # type: ignore[assignment]
    mps_bytes: Optional[int] = _not_identity()  # type: ignore[assignment]
    mrrs_bytes: Optional[int] = _not_identity()  # type: ignore[assignment]
    rcb_bytes: Optional[int] = _not_identity()  # type: ignore[assignment]
    link_params: Optional[str] = _not_identity()  # type: ignore[assignment]
    link: Optional[str] = _not_identity()  # type: ignore[assignment]
    grid: Optional[int] = _not_identity()  # type: ignore[assignment]


@dataclass(frozen=True)
class MrParams:
    """An RDMA memory-region case: registration or WRITE loop.

    Relaxed ordering is one bit of ``access`` (``IBV_ACCESS_RELAXED_ORDERING``), not a second flag.
    """

    bench: Bench = Bench.MR
    memory: Optional[MemoryKind] = None  # destination
    src_memory: Optional[MemoryKind] = None
    reg_path: Optional[RegPath] = None
    access: Optional[AccessFlags] = None
    size_bytes: Optional[int] = None
    qps: Optional[int] = None
    tx_depth: Optional[int] = None
    post_list: Optional[int] = None
    offset_bytes: Optional[int] = None
    mode: Optional[str] = None
    role: Optional[str] = None
    blocks: Optional[int] = None
    variant: Optional[str] = None  # block mode: one WR per block, post lists, one coalesced WR
    write_with_imm: Optional[bool] = None
    signal_every_wrs: Optional[int] = None
    slot_bytes: Optional[int] = None  # two-host exchange slot
    # CUDA ordinal (--gpu) of this host's GPU whose memory the case used (device or managed memory
    # on this side); None when this side's bytes are in host memory
    gpu: Optional[int] = _gpu_ordinal()  # type: ignore[assignment]
    # Where the bytes land and how the run was wired: shown, not identity.
    landing: Optional[str] = _not_identity()  # type: ignore[assignment]
    lands_in: Optional[str] = _not_identity()  # type: ignore[assignment]
    topology: Optional[str] = _not_identity()  # type: ignore[assignment]

    @property
    def relaxed_ordering(self) -> Optional[bool]:
        """True when the MRs were registered with IBV_ACCESS_RELAXED_ORDERING; None when unknown."""
        # int & int: the IntFlag & builds a flag through the enum machinery (diagnose asks per result)
        return None if self.access is None else bool(int(self.access) & _RELAXED_ORDERING_BIT)


@dataclass(frozen=True)
class PeerParams:
    """A GPU<->GPU case: copy-engine peer copies, or an SM kernel reading/writing the peer through UVA.

    ``src_gpu``/``dst_gpu`` are CUDA ordinals: bytes move from ``src_gpu``'s memory into ``dst_gpu``'s.
    ``mover`` is ``ce`` (cuMemcpyPeerAsync) or ``sm`` (an NVRTC kernel); ``op`` says which GPU drives
    the transfer: ``copy`` (CE), ``read`` (a kernel on the destination pulls), ``write`` (a kernel
    on the source pushes), ``latency`` (one small transfer or one dependent load at a time),
    ``all_to_one`` (every other GPU's copy engine into ``dst_gpu`` at once), ``all_to_all`` (every
    GPU into every other, every GPU at once in shifted steps, one copy per GPU at a time),
    ``one_to_all`` (``src_gpu`` into every other GPU at once).
    ``peer_access`` False means the driver stages the copy through host memory.
    """

    bench: Bench = Bench.PEER
    src_gpu: Optional[int] = None
    dst_gpu: Optional[int] = None
    mover: Optional[str] = None  # ce | sm
    op: Optional[str] = None  # copy | read | write | latency | all_to_one | all_to_all | one_to_all
    peer_access: Optional[bool] = None
    bidirectional: Optional[bool] = None  # both ways at once (src->dst and dst->src)
    size_bytes: Optional[int] = None
    library: Optional[str] = None  # the reference copy's library (cupy)
    same_buffers: Optional[bool] = None
    # The many-small-blocks sweep (bench/peer_blocks.py): ``blocks`` blocks of ``block_bytes`` each,
    # ``size_bytes`` = their total; all-to-one (bench/peer_all_to_one.py): ``sources`` GPUs copy
    # ``size_bytes`` each into ``dst_gpu`` at once (``src_gpu`` set only when there is one);
    # all-to-all (bench/peer_all_to_all.py): ``sources`` GPUs (CUDA ordinals 0..sources-1) each copy
    # ``size_bytes`` into every other (pathmodel/peer.py all_to_all_schedule); one-to-all: ``src_gpu``
    # copies ``size_bytes`` into each of ``destinations`` GPUs at once (``dst_gpu`` set only when
    # there is one).
    block_bytes: Optional[int] = None
    blocks: Optional[int] = None
    sources: Optional[int] = None
    destinations: Optional[int] = None
    # How the kernel was launched and what path the pair has: shown, not identity.
    grid: Optional[int] = _not_identity()  # type: ignore[assignment]
    threads: Optional[int] = _not_identity()  # type: ignore[assignment]
    path: Optional[str] = _not_identity()  # type: ignore[assignment]  # NV18, PIX, PXB, PHB, NODE, SYS
    model: Optional[str] = _not_identity()  # type: ignore[assignment]  # the expectation, in words


@dataclass(frozen=True)
class NcclRankDevice:
    """One NCCL rank's GPU, as NCCL's INFO log or nccl-tests' rank lines named it."""

    rank: int
    host: Optional[str] = None
    cuda_dev: Optional[int] = None
    bus_id: Optional[str] = None  # as printed: "18000" (NCCL) or "0000:18:00" / "0x18" (nccl-tests)


@dataclass(frozen=True)
class NcclTransport:
    """A transport NCCL's channels took (``via P2P/CUMEM/read``) and how many connection lines said so."""

    kind: str  # P2P, SHM, NET, COLLNET, NVLS
    detail: str  # what follows the kind: "CUMEM/read", "direct/direct", "IB/0/GDRDMA", "Socket/0"
    connections: int = 1


@dataclass(frozen=True)
class NcclSetting:
    """An NCCL variable the run set (``NCCL_P2P_DISABLE set by environment to 1``)."""

    name: str
    value: str


@dataclass(frozen=True)
class NcclRunFacts:
    """What one NCCL run said about itself: version, ranks and hosts, transports, settings, channels.

    Read from NCCL's INFO log (``NCCL_DEBUG=INFO``) and nccl-tests' own rank lines
    (gdrdiag/importers/nccl_log.py). ``debug_info`` False: no INFO line was read, so transports and
    settings are unknown (not absent).
    """

    version: Optional[str] = None
    ranks: Optional[int] = None
    nodes: Optional[int] = None  # NCCL's nNodes, or the distinct hosts of the rank lines
    hosts: tuple[str, ...] = ()
    devices: tuple[NcclRankDevice, ...] = ()
    transports: tuple[NcclTransport, ...] = ()
    settings: tuple[NcclSetting, ...] = ()
    coll_channels: Optional[int] = None
    p2p_channels: Optional[int] = None
    debug_info: bool = False

    def setting(self, name: str) -> Optional[str]:
        """The value the run set for ``name`` (the last one printed), or None."""
        return next((s.value for s in reversed(self.settings) if s.name == name), None)

    def uses(self, kind: str) -> bool:
        """True when some channel went ``via <kind>/...``."""
        return any(t.kind == kind for t in self.transports)

    @property
    def single_node(self) -> Optional[bool]:
        """True when every rank sat on one host, False across hosts, None when not said."""
        if self.nodes is not None:
            return self.nodes == 1
        return len(self.hosts) == 1 if self.hosts else None

    def __str__(self) -> str:
        """One line for tables: version, ranks/nodes, transports, settings."""
        parts = [f"NCCL {self.version}" if self.version else "NCCL"]
        if self.ranks or self.nodes:
            parts.append(f"{self.ranks or '?'} ranks on {self.nodes or '?'} node(s)")
        parts += [f"{t.kind}/{t.detail} x{t.connections}" for t in self.transports]
        parts += [f"{s.name}={s.value}" for s in self.settings]
        if self.coll_channels is not None:
            parts.append(f"{self.coll_channels} coll channels")
        return ", ".join(parts)


@dataclass(frozen=True)
class UcxRunFacts:
    """What a ucx_perftest output said about the route UCX chose, from its protocol tables.

    ``UCX_PROTO_INFO=y`` makes UCX print, per endpoint configuration, which protocol and transport
    each message size takes (``| 1..inf | rendezvous zero-copy read from remote | cuda_ipc/cuda |``);
    gdrdiag/importers/ucx_perftest.py reads these. ``proto_info`` False: no table was printed, so the
    route is unknown (not absent).
    """

    proto_info: bool = False
    cuda_ipc: bool = False  # a protocol row moved GPU memory with CUDA IPC (the GPUs' peer path)
    staged: bool = False  # a protocol row pipelines GPU memory through host fragments ("frag host")
    tcp: bool = False  # a protocol row goes over TCP (tcp/lo, tcp/eth0)
    routes: tuple[str, ...] = ()  # the distinct GPU-memory protocol rows, "description | config"

    def __str__(self) -> str:
        """One line for tables."""
        if not self.proto_info:
            return "UCX (no UCX_PROTO_INFO table)"
        used = [
            name
            for name, on in (("cuda_ipc", self.cuda_ipc), ("staged", self.staged), ("tcp", self.tcp))
            if on
        ]
        return "UCX routes: " + (", ".join(used) or "host memory only")


@dataclass(frozen=True)
class ImportedParams:
    """A measurement another tool made (perftest, nvbandwidth), as that tool described it."""

    bench: Bench = Bench.IMPORTED
    tool: Optional[str] = None
    test: Optional[str] = None
    size_bytes: Optional[int] = None
    qps: Optional[int] = None
    direction: Optional[str] = None
    memory: Optional[MemoryKind] = None
    access: Optional[AccessFlags] = None
    reg_path: Optional[RegPath] = None  # perftest: dmabuf with --use_cuda_dmabuf, else mr
    gpu: Optional[int] = None  # the CUDA device the tool used (perftest --use_cuda, nvbandwidth column)
    peer_gpu: Optional[int] = None  # GPU<->GPU tests: the other GPU (nvbandwidth row/column, p2p matrix)
    peer_access: Optional[bool] = None  # GPU<->GPU tests: peer access enabled (P2P=Enabled/Disabled)
    collective: Optional[str] = None  # nccl-tests: all_reduce, all_gather, ...
    ranks: Optional[int] = None  # nccl-tests: ranks in the communicator
    # nccl-tests: whether NCCL moved GPU memory with GPUDirect RDMA (its "via NET/IB/0/GDRDMA" lines,
    # or NCCL_NET_GDR_LEVEL as the run set it), when known: the A/B a thread runs to test the path
    gpu_direct_rdma: Optional[bool] = None
    tx_depth: Optional[int] = None
    # How the tool was run, as its output said: shown, not identity.
    # nccl-tests: what NCCL's INFO log and the rank lines said of the run (None: nothing read)
    nccl: Optional[NcclRunFacts] = _not_identity()  # type: ignore[assignment]
    device_name: Optional[str] = _not_identity()  # type: ignore[assignment]
    connection: Optional[str] = _not_identity()  # type: ignore[assignment]
    mtu_bytes: Optional[int] = _not_identity()  # type: ignore[assignment]
    source_file: Optional[str] = _not_identity()  # type: ignore[assignment]
    # GPU<->GPU tests: why the row is slow by design (p2pBandwidthLatencyTest's P2P=Disabled matrices
    # measure the copy staged through host memory beside P2P=Enabled); the path model's RowPath.baseline
    baseline: Optional[str] = _not_identity()  # type: ignore[assignment]
    # GPU<->GPU tests: the tool's own "Device=i CAN/CANNOT Access Peer Device=j" for the pair
    can_access_peer: Optional[bool] = _not_identity()  # type: ignore[assignment]
    # the GPU's PCI address as the tool printed it (p2pBandwidthLatencyTest "pciBusID" lines)
    gpu_bdf: Optional[str] = _not_identity()  # type: ignore[assignment]
    # one direction timed while the reverse copy runs on the same link (nvbandwidth's *_bidirectional_*
    # host testcases): the row is one direction's share of a link loaded both ways
    reverse_load: Optional[bool] = _not_identity()  # type: ignore[assignment]
    # bandwidthTest --device=all: the row is the sum of this many GPUs, measured one after another
    devices_summed: Optional[int] = _not_identity()  # type: ignore[assignment]
    # The path the row measured, as its importer read it (the path model reads only these): what
    # kind of path, what moved the bytes, which way. Filled from the tool and test names for a row
    # built or saved without them (__post_init__), so older Reports are judged as before.
    # messages the tool keeps in flight (ucx_perftest's "Window size"): each message's fixed cost
    # overlaps the copies of the ones before it
    window: Optional[int] = _not_identity()  # type: ignore[assignment]
    # ucx_perftest: the route UCX's protocol tables show (UCX_PROTO_INFO=y), None when not imported
    ucx: Optional[UcxRunFacts] = _not_identity()  # type: ignore[assignment]
    # why the importer could not tell which path the row measured (the path model's reason not to
    # judge it), when it could not
    path_unknown: Optional[str] = _not_identity()  # type: ignore[assignment]
    path_kind: Optional[PathKind] = _hidden()  # type: ignore[assignment]
    mover: Optional[Mover] = _hidden()  # type: ignore[assignment]
    flow: Optional[Flow] = _hidden()  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.path_kind is None and self.mover is None and self.flow is None:
            kind, mover, flow = legacy_path(self.tool, self.test, self.direction, self.collective)
            if kind is not None:
                object.__setattr__(self, "path_kind", kind)
                object.__setattr__(self, "mover", mover)
                object.__setattr__(self, "flow", flow)


BenchParams = Union[CopyParams, GatherParams, MrParams, PeerParams, ImportedParams]

# ---------------------------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CopyMetrics:
    """Derived numbers of copy-bench."""

    bench: Bench = Bench.COPY
    seconds_median: Optional[float] = None
    pin_ms_median: Optional[float] = None
    ratio_to_preallocated: Optional[float] = None
    parts_sum_ms: Optional[float] = None
    h2d_ms: Optional[float] = None
    compute_ms: Optional[float] = None
    d2h_ms: Optional[float] = None
    compute_iters: Optional[float] = None
    speedup_vs_one_stream: Optional[float] = None
    speedup_vs_parts_sum: Optional[float] = None
    us_per_block: Optional[float] = None
    ratio_to_coalesced: Optional[float] = None
    half_bandwidth_block_bytes_per_call: Optional[float] = None
    half_bandwidth_block_bytes_batched: Optional[float] = None
    half_bandwidth_block_bytes_kernel: Optional[float] = None
    half_bandwidth_block_bytes_per_call_c: Optional[float] = None  # per-block copies issued from C
    half_bandwidth_block_bytes_batched_c: Optional[float] = None
    issue_us_per_call: Optional[float] = None  # host time to issue one driver call (per block or batch)
    gdrdiag_over_reference: Optional[float] = None
    # every GPU copying at once (bench/copy_together.py): the total over the sum of the GPUs' rates alone
    ratio_to_sum_alone: Optional[float] = None


@dataclass(frozen=True)
class GatherMetrics:
    """Derived numbers of gather-bench (ratios to the same-run copy engine, the PCIe model)."""

    bench: Bench = Bench.GATHER
    us_per_batch: Optional[float] = None
    ratio_to_ce: Optional[float] = None
    ratio_to_raw: Optional[float] = None
    ce_gbytes_per_s: Optional[float] = None
    sms_used: Optional[float] = None
    bytes_in_flight_per_sm: Optional[float] = None
    littles_law_latency_us: Optional[float] = None
    model_efficiency: Optional[float] = None
    model_gbytes_per_s: Optional[float] = None
    model_ratio_to_ce: Optional[float] = None
    model_ratio_if_repeats_hit_l1: Optional[float] = None
    layout_model_ratio_to_ce: Optional[float] = None
    layout_partial_line_loss: Optional[float] = None
    partial_line_loss: Optional[float] = None
    completions_per_record: Optional[float] = None
    records_read_fraction: Optional[float] = None
    min_sms_for_95pct: Optional[float] = None
    rounds: Optional[float] = None  # measurement rounds a disturbed case took
    plan_us: Optional[float] = None  # planned-lines: one sort of the index set, timed alone
    ratio_to_ce_unpaired: Optional[float] = None
    ceiling_ratio_to_ce: Optional[float] = None  # the model for the bytes this kernel reads
    model_kernel_ratio_to_ce: Optional[float] = None  # the ceiling with the sort's cost added
    # what the read-request rate alone allows this read plan (pcie_model.request_cap);
    # the ceiling is the lower of this and the wire's
    request_cap_ratio_to_ce: Optional[float] = None
    # the CE reference's cost per copy (us), from copies of two sizes in the same run: the model
    # judges kernels at the link's rate without it (pcie_model.batch_ratio)
    ce_fixed_us: Optional[float] = None


@dataclass(frozen=True)
class MrMetrics:
    """Derived numbers of mr-bench (message rates, CPU cost, latency percentiles, registration)."""

    bench: Bench = Bench.MR
    msgs_per_s: Optional[float] = None
    gbps: Optional[float] = None  # block mode: the blocks' payload rate
    cpu_us_per_msg: Optional[float] = None
    cpu_us_per_wr: Optional[float] = None
    cpu_us_per_block: Optional[float] = None
    total_us: Optional[float] = None
    wrs_per_set: Optional[float] = None
    lat_min_us: Optional[float] = None
    lat_p50_us: Optional[float] = None
    lat_p90_us: Optional[float] = None
    lat_p99_us: Optional[float] = None
    lat_p999_us: Optional[float] = None
    lat_max_us: Optional[float] = None
    reg_us_per_gib: Optional[float] = None
    dereg_us: Optional[float] = None
    reuse_us: Optional[float] = None
    register_each_us: Optional[float] = None
    register_each_over_reuse: Optional[float] = None
    posts_per_s: Optional[float] = None
    messages_per_run: Optional[float] = None
    min_msg_bytes_100g: Optional[float] = None
    min_msg_bytes_200g: Optional[float] = None
    min_msg_bytes_400g: Optional[float] = None
    min_msg_bytes_800g: Optional[float] = None
    loop_us_per_post: Optional[float] = None
    provider_us_per_wr: Optional[float] = None
    runs: Optional[float] = None
    verified_runs: Optional[float] = None
    post_ns_per_wr: Optional[float] = None  # native --time-calls: ibv_post_send's share per WR
    poll_ns_per_wr: Optional[float] = None  # native --time-calls: ibv_poll_cq's share per WR
    loop_ns_per_wr: Optional[float] = None  # native: the C loop's own bookkeeping per WR
    ns_per_wr: Optional[float] = None  # loop cost: the loop's own time per WR (1e9 / WR rate)
    timed_post_ns_per_wr: Optional[float] = None  # loop cost, one extra run with clock reads around calls
    timed_poll_ns_per_wr: Optional[float] = None
    timed_loop_ns_per_wr: Optional[float] = None


@dataclass(frozen=True)
class PeerMetrics:
    """Derived numbers of peer-bench: the path model, same-run ratios and the reference."""

    bench: Bench = Bench.PEER
    seconds_median: Optional[float] = None
    expected_gbytes_per_s: Optional[float] = None  # peer_model: what this path should deliver
    measured_over_expected: Optional[float] = None
    on_over_off: Optional[float] = None  # peer access on / off, same pair and size (the staging loss)
    ratio_to_ce: Optional[float] = None  # SM rows: over the copy engine moving the same bytes
    gdrdiag_over_reference: Optional[float] = None  # gdrdiag's CE copy over CuPy's, same buffers
    rounds: Optional[float] = None  # interleaved measurement rounds (reference cases)
    # The block sweep: time per block, host time per driver call, and the ratio to one coalesced
    # copy of the same bytes; on its summary row, where each way reaches half the coalesced rate.
    us_per_block: Optional[float] = None
    issue_us_per_call: Optional[float] = None
    ratio_to_coalesced: Optional[float] = None
    half_bandwidth_block_bytes_per_call: Optional[float] = None
    half_bandwidth_block_bytes_batched: Optional[float] = None
    half_bandwidth_block_bytes_kernel: Optional[float] = None


@dataclass(frozen=True)
class ImportedMetrics:
    """Derived numbers another tool reported beside its headline."""

    bench: Bench = Bench.IMPORTED
    msgs_per_s: Optional[float] = None
    peak_value: Optional[float] = None  # perftest BW peak, in the result's unit
    iterations: Optional[float] = None  # perftest #iterations
    matrix_sum: Optional[float] = None  # nvbandwidth: the testcase's sum over its matrix (GB/s)
    algbw_gbytes_per_s: Optional[float] = None  # nccl-tests: algorithm bandwidth (size / time)
    busbw_gbytes_per_s: Optional[float] = None  # nccl-tests: bus bandwidth (algbw x the collective's factor)
    latency_us: Optional[float] = None  # a latency the tool reported beside its bandwidth


BenchMetrics = Union[CopyMetrics, GatherMetrics, MrMetrics, PeerMetrics, ImportedMetrics]


@dataclass(frozen=True)
class RunSettings:
    """How a result was run: never part of its identity, shown when two Reports differ in it."""

    iterations: Optional[int] = None
    repeats: Optional[int] = None
    warmup: Optional[int] = None
    seed: Optional[int] = None
    sweep: Optional[str] = None
    duration_s: Optional[float] = None
    port: Optional[int] = None
    device_name: Optional[str] = None
    ro_ab: Optional[bool] = None
    link_gbps: Optional[float] = None
    run_timeout_s: Optional[float] = None
    peer: Optional[str] = None  # two-host mode: the server the client wrote to
    # the GPU the row ran on, as the machine facts name it (its ``gpu`` ordinal is CUDA's, which
    # CUDA_VISIBLE_DEVICES renumbers): PCI address and NVML UUID
    gpu_bdf: Optional[str] = None
    gpu_uuid: Optional[str] = None
    # CPU/NUMA placement (--numa): what was asked, the node applied and its CPUs, or why none was.
    numa: Optional[str] = None  # auto | none | a node number, as requested
    numa_node: Optional[int] = None  # the node the run was bound to; None when nothing was applied
    numa_cpus: Optional[str] = None  # the CPUs the run was bound to (cpulist syntax, e.g. 0-15,32-47)
    numa_reason: Optional[str] = None  # why the node was chosen, or why nothing was applied


@dataclass(frozen=True)
class NumaPlacement:
    """Where a bench ran: the ``--numa`` request and what was applied (a run setting, never identity).

    ``node`` is None when nothing was applied; ``reason`` then says why ("the GPU's numa_node is -1
    (no NUMA affinity: one node, or a VM)", "--numa none"). When a node was applied, ``reason``
    says where it came from ("numa_node of the GPU 0000:06:00.0").
    """

    requested: str
    node: Optional[int] = None
    cpus: Optional[str] = None
    reason: Optional[str] = None

    def settings_fields(self) -> dict[str, object]:
        """The RunSettings fields that record this placement."""
        return {
            "numa": self.requested,
            "numa_node": self.node,
            "numa_cpus": self.cpus,
            "numa_reason": self.reason,
        }


PARAMS_BY_BENCH: dict[Bench, type] = {
    Bench.COPY: CopyParams,
    Bench.GATHER: GatherParams,
    Bench.MR: MrParams,
    Bench.PEER: PeerParams,
    Bench.IMPORTED: ImportedParams,
}
METRICS_BY_BENCH: dict[Bench, type] = {
    Bench.COPY: CopyMetrics,
    Bench.GATHER: GatherMetrics,
    Bench.MR: MrMetrics,
    Bench.PEER: PeerMetrics,
    Bench.IMPORTED: ImportedMetrics,
}


_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _field_names(cls: type) -> tuple[tuple[str, bool], ...]:
    """(name, is identity) of every field but ``bench`` and the hidden ones, computed once per class.

    ``dataclasses.fields`` per call was most of ``compare``'s time on 20,000-result Reports. The
    table is a cache of a pure function of a class (whose fields never change), never of data; a
    dict rather than ``functools.cache``, which mypy will not take a ``type`` argument to.
    """
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(
            (f.name, f.metadata.get("identity") is not False)
            for f in dataclasses.fields(cls)
            if f.name != "bench" and f.metadata.get("shown") is not False
        )
    return names


_IDENTITY: dict[type, tuple[tuple[str, object], ...]] = {}


def _identity_fields(cls: type) -> tuple[tuple[str, object], ...]:
    """(name, implied value or None) of ``cls``'s identity fields, computed once per class.

    Identity fields are all but ``bench`` and those marked ``IDENTITY_NO``. Cached per class as
    ``_field_names`` is: a pure function of the class.
    """
    names = _IDENTITY.get(cls)
    if names is None:
        implied = {f.name: f.metadata.get(IDENTITY_IMPLIED) for f in dataclasses.fields(cls)}
        names = _IDENTITY[cls] = tuple(
            (name, implied[name]) for name, identity in _field_names(cls) if identity
        )
    return names


def identity_names(cls: type) -> tuple[str, ...]:
    """Names of ``cls``'s identity fields, whatever their values."""
    return tuple(name for name, _ in _identity_fields(cls))


def identity_items(params: BenchParams) -> tuple[tuple[str, ParamValue], ...]:
    """(name, value) of the fields that define the case, set ones only, enums as their values.

    A value equal to the field's implied value (``IDENTITY_IMPLIED``: the GPU ordinal 0) is left out,
    as an unset one is. Called once per result by ``compare`` (20,000 per Report): only identity
    fields are visited, and a plain value skips the call to ``_plain``.
    """
    values = vars(params)
    items = []
    for name, implied in _identity_fields(type(params)):
        value = values[name]
        if value is not None and (implied is None or value != implied):
            items.append((name, value if type(value) in _PLAIN_TYPES else _plain(value)))
    return tuple(items)


def shown_items(obj: object) -> tuple[tuple[str, ParamValue], ...]:
    """(name, value) of every set field but ``bench``, enums as their values (for tables)."""
    values = vars(obj)
    return tuple(
        (name, _plain(values[name])) for name, _ in _field_names(type(obj)) if values[name] is not None
    )


_PLAIN_TYPES = (str, int, float, bool)


def _plain(value: object) -> ParamValue:
    if type(value) in _PLAIN_TYPES:
        return value  # type: ignore[return-value]
    if isinstance(value, AccessFlags):
        return int(value)
    if isinstance(value, enum.Enum):
        return value._value_
    if hasattr(value, "value"):
        return value.value
    if isinstance(value, (NcclRunFacts, UcxRunFacts)):
        return str(value)  # a record of facts: one line in tables
    return value  # type: ignore[return-value]
