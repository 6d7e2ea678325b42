"""What an mr-bench run is asked to do, and where the bytes of each memory kind land.

MrBenchConfig is validated before any device is opened; also the modes, the matrix preset and how a
case key is spelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from gdrdiag.bench import preflight
from gdrdiag.bench.cases import kind_key
from gdrdiag.errors import UserInputError
from gdrdiag.hw import memory, verbs_providers
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import GPU_PAGE, MemoryKind
from gdrdiag.model.vocabulary import AccessFlags, RelaxedOrdering, Word
from gdrdiag.model.words import AUTO, NumaRequest
from gdrdiag.units import GiB, KiB, MiB, format_size

MAX_TIMEOUT_S = 86400.0  # --timeout / --accept-timeout: a day at most (sockets refuse much more)
MAX_ITERATIONS = 10**9  # -n: WRs per QP per run (a long run is -D, at most an hour)
MAX_REPEATS = 1000  # --repeats: measured runs per point
# Host memory a --blocks run holds per block beside the bytes: its WriteWR and its places in the
# per-block and per-list chains (Python objects), an upper estimate.
BLOCK_WR_HOST_BYTES = 512

REG_PATHS = ("mr", "dmabuf")


class MrMode(Word):
    """What one mr-bench run measures: every selected case of a run has the same mode.

    The value is the mode's name in options and in the ``mode`` of the rows it produces (bw,
    latency, blocks); ``reg`` is ``--reg-cost`` and ``loop`` is ``--loop-cost``.
    """

    BW = "bw"
    LATENCY = "latency"
    BLOCKS = "blocks"
    REG = "reg"
    LOOP = "loop"


SWEEP_SIZES = tuple(1 << i for i in range(1, 24))  # 2 B .. 8 MiB, as ib_write_bw -a


REG_COST_SIZES = (4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB)


POISON = 0xE7


SOFT_NOTE = (
    "soft provider: bytes moved in software (memcpy / cuMemcpy), not by an RDMA NIC; NOT a hardware number"
)


DEFAULT_ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE


# The path MTUs a QP may use (``enum ibv_mtu``; perftest's ``-m``: 256 - 4096, set_mtu()).
PATH_MTUS = tuple(v.MTU_ENUM)


@dataclass(frozen=True)
class MrBenchConfig:
    """Everything one ``gdrdiag mr-bench`` invocation asks for (validated by :meth:`validate`)."""

    provider: str = "auto"
    device: Optional[str] = None
    port: int = 1
    gid_index: Optional[int] = None
    peer_device: Optional[str] = None
    peer_port: int = 1
    numa: NumaRequest = AUTO  # CPU/memory placement near the RDMA device (hw/placement.py)
    kinds: tuple[MemoryKind, ...] = (MemoryKind.DEVICE,)
    reg_paths: tuple[str, ...] = ("mr",)
    src_kind: Optional[MemoryKind] = None  # None: same as the destination kind
    access: AccessFlags = DEFAULT_ACCESS  # never the RO bit: relaxed ordering is ``ro``
    ro: RelaxedOrdering = RelaxedOrdering.OFF
    sizes: tuple[int, ...] = (65536,)
    qps: int = 1
    tx_depth: int = 128
    post_list: int = 1
    cq_mod: Optional[int] = None
    iterations: Optional[int] = 5000
    duration: Optional[float] = None
    repeats: int = 3
    latency: bool = False
    write_with_imm: bool = False
    blocks: Optional[int] = None
    offset: int = 0
    mr_size: Optional[int] = None
    gpu: int = 0
    timeout_s: float = 10.0
    reg_sizes: tuple[int, ...] = REG_COST_SIZES
    reg_iterations: int = 10
    soft_options: dict = field(default_factory=dict)  # provider options (soft: copy; native: inline...)
    provider_note: str = ""  # why this provider (``--provider auto``'s choice), written into methods
    only: Optional[frozenset[str]] = None  # case keys to run (a --list selection); None: every kind x path
    mtu: Optional[int] = None  # path MTU in bytes (perftest's -m); None: the port's active MTU

    @property
    def arm_access(self) -> tuple[AccessFlags, ...]:
        """The access flags of each RO arm of a bandwidth run (one arm, or off then on for ``--ro-ab``)."""
        return self.ro.access(self.access)

    @property
    def single_access(self) -> AccessFlags:
        """The access flags of modes that register once (latency, blocks, reg cost: the A/B's off arm)."""
        return self.arm_access[0]

    def check_numa(self) -> None:
        """Refuse ``--numa N`` for a node this machine lacks: asked as soon as the config is built."""
        preflight.check_numa(self.numa)

    def validate(self) -> "MrBenchConfig":
        """Reject impossible combinations before touching hardware (UserInputError)."""
        verbs_providers.resolve_provider(self.provider)
        for reg in self.reg_paths:
            if reg not in REG_PATHS:
                raise UserInputError(
                    f"unknown registration path {reg!r} (choose from: {', '.join(REG_PATHS)})"
                )
        if not self.kinds:
            raise UserInputError("no memory kind selected")
        if not self.sizes or any(s <= 0 for s in self.sizes):
            raise UserInputError("message size must be greater than 0")
        if self.qps < 1:
            raise UserInputError(f"-q {self.qps}: need at least one QP")
        if self.tx_depth < 1:
            raise UserInputError(f"-t {self.tx_depth}: TX depth must be at least 1")
        if self.post_list < 1 or self.post_list > self.tx_depth:
            raise UserInputError(
                f"--post-list {self.post_list} must be between 1 and the TX depth ({self.tx_depth})"
            )
        if (self.iterations is None) == (self.duration is None):
            raise UserInputError("give either iterations (-n) or a duration (-D), not both")
        self._check_counts()
        if self.offset < 0 or self.offset >= GPU_PAGE:
            raise UserInputError(f"--offset {self.offset} must be in 0..{GPU_PAGE - 1}")
        if self.cq_mod is not None and not 1 <= self.cq_mod <= self.tx_depth:
            # A signalled WR must come at least every TX-depth WRs, or the send queue fills with WRs
            # that nothing retires (perftest's bound too); honoured as given inside it (rdma_math).
            raise UserInputError(
                f"-Q {self.cq_mod}: signal one WR in 1..{self.tx_depth} (at most the TX depth, -t)"
            )
        if self.blocks is not None and self.blocks < 1:
            raise UserInputError("--blocks must be at least 1")
        if not (isinstance(self.timeout_s, (int, float)) and 0 < self.timeout_s <= MAX_TIMEOUT_S):
            # NaN fails every comparison: it is refused here with infinity and negatives.
            raise UserInputError(f"--timeout {self.timeout_s}: give seconds in (0, {MAX_TIMEOUT_S}]")
        if self.access & AccessFlags.RELAXED_ORDERING:
            # The CLI folds an RO bit of --access into ``ro``; a config carrying both is a caller's bug.
            raise UserInputError("relaxed ordering is the ro setting, not a bit of access")
        if self.mtu is not None and self.mtu not in PATH_MTUS:
            raise UserInputError(
                f"-m {self.mtu}: the MTU must be one of {', '.join(map(str, PATH_MTUS))} (bytes)"
            )
        if self.mr_size is not None:
            need = self.qps * max(self.sizes) * (self.blocks or 1)
            if need > self.mr_size:
                raise UserInputError(
                    f"message size {format_size(max(self.sizes))} x {self.qps} QP(s)"
                    f"{' x ' + str(self.blocks) + ' blocks' if self.blocks else ''} = "
                    f"{need} bytes is larger than the MR (--mr-size {self.mr_size})"
                )
        self._check_host_memory()
        return self

    def _check_counts(self) -> None:
        """-n, -D and --repeats inside their bounds: a run that would never end is refused up front."""
        if self.iterations is not None and self.iterations < self.post_list:
            raise UserInputError(f"-n {self.iterations} must be at least the post list ({self.post_list})")
        if self.iterations is not None and self.iterations > MAX_ITERATIONS:
            raise UserInputError(
                f"-n {self.iterations}: at most {MAX_ITERATIONS} WRs per QP per run (use -D for a timed run)"
            )
        if self.duration is not None and not 0 < self.duration <= 3600:  # NaN fails it too
            raise UserInputError(f"-D {self.duration}: duration must be in (0, 3600] seconds")
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise UserInputError(
                f"--repeats {self.repeats}: measured runs per point must be in 1..{MAX_REPEATS}"
            )

    def host_bytes(self) -> tuple[int, str]:
        """Host memory the largest loopback case holds at once, and the options that make it up.

        Per case: the source and destination buffers where they are host memory (each rounded out to
        64 KiB GPU pages, plus one page), the patterns the destination is checked against, and one
        region read back with its comparison; ``--blocks`` adds its per-block work requests.
        """
        size = max(self.sizes)
        if self.blocks is not None:
            size = self.sizes[0]
            region = patterns = read = self.blocks * size
            extra, what = (
                self.blocks * BLOCK_WR_HOST_BYTES,
                f"--blocks {self.blocks} x -s {format_size(size)}",
            )
        elif self.latency:
            region = patterns = read = size
            extra, what = 0, f"-s {format_size(size)}"
        else:
            region, patterns, read = size * self.qps, size * self.qps, size
            extra, what = 0, f"-s {format_size(size)} x -q {self.qps}"
        alloc = -(-region // GPU_PAGE) * GPU_PAGE + GPU_PAGE
        buffers = max(
            sum(k is not MemoryKind.DEVICE for k in (self.src_kind or kind, kind)) for kind in self.kinds
        )
        return buffers * alloc + patterns + 2 * read + extra, f"{what} x {buffers} buffer(s)"

    def _check_host_memory(self) -> None:
        """Refuse a run whose largest case needs more host memory than is available, before allocating."""
        need, what = self.host_bytes()
        free = memory.host_available_bytes()
        if need > free:
            raise UserInputError(
                f"{what} needs {need} bytes of host memory at once (buffers, the patterns they are "
                f"checked against) but only {free} are available: use a smaller -s or fewer -q/--blocks"
            )


def landing(kind: MemoryKind, reg_path: str, provider: str) -> tuple[str, str]:
    """(``gpu`` | ``host``, words) for an RDMA WRITE into ``kind`` registered via ``reg_path``.

    Managed memory registered with ibv_reg_mr is pinned on the host (x86): the NIC writes host
    DRAM, so the number is a host-memory number (https://github.com/linux-rdma/perftest/issues/283;
    docs/kb/rdma.md#gdr-managed-is-host).
    """
    if kind is MemoryKind.DEVICE:
        where = (
            "gpu",
            "GPU memory (peer-to-peer through BAR1)"
            + (" via dma-buf" if reg_path == "dmabuf" else " via nvidia-peermem"),
        )
    elif kind is MemoryKind.MANAGED:
        where = (
            "host",
            "host DRAM: ibv_reg_mr pins managed pages on the host (x86), so this is a "
            "host-memory number, not GPUDirect",
        )
    else:
        where = ("host", kind.location)
    if provider == "soft":
        return where[0], where[1] + "; " + SOFT_NOTE
    return where


def case_key(prefix: str, kind: MemoryKind, reg_path: str) -> str:
    """How an mr-bench key is spelled: ``rdma_write_pinned_wc_mr`` (prefix, kind, registration path).

    Used where the keys are made: mr.py's ``CASES``, the ``mr_reuse_*`` rows of a registration-cost
    case and the two-host rows (bench/mr_twohost.py), so a two-host row has its loopback case's key.
    """
    return f"{prefix}_{kind_key(kind)}_{reg_path}"


def choose_provider(name: str) -> tuple[str, str]:
    """The provider ``--provider name`` means on this machine, and why, in words.

    ``auto`` is decided here: the native C loop where its library built and an RDMA device exists,
    else pyverbs; a name that is no provider is a UserInputError (one line, exit 2).
    """
    return verbs_providers.provider_choice(name)


def matrix_config(cfg: MrBenchConfig) -> MrBenchConfig:
    """The matrix: every memory kind x both registration paths x RO off/on."""
    return replace(
        cfg,
        kinds=tuple(MemoryKind),
        reg_paths=REG_PATHS,
        ro=RelaxedOrdering.AB,
    )


ProgressFn = Optional[Callable[[str], None]]
