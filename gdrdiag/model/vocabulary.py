"""The words every layer uses for a measurement: bench, provider, memory kind, and the rest.

Also registration path, direction, verbs access flags and relaxed-ordering mode.

One enum per idea, so a value is spelled once (``MemoryKind.PINNED_WC``, not ``"pinned-wc"`` in one
place and ``"wc"`` in another). The values are what users type and what Reports store.
"""

from __future__ import annotations

import enum


class Word(str, enum.Enum):
    """A str enum that prints as its value (``f"{MemoryKind.PINNED}"`` is ``pinned``, on 3.10-3.12)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Bench(Word):
    """Which bench produced a result; the first part of every case identity."""

    COPY = "copy"
    GATHER = "gather"
    MR = "mr"
    PEER = "peer"
    IMPORTED = "imported"

    @classmethod
    def of_key(cls, key: str) -> "Bench":
        """The bench a case key belongs to (``copy_h2d_pinned`` -> COPY, ``peer_ce_on`` -> PEER, ...)."""
        if key.startswith("copy"):
            return cls.COPY
        if key.startswith("gather"):
            return cls.GATHER
        if key.startswith(("mr_", "rdma")):
            return cls.MR
        if key.startswith("peer_"):
            return cls.PEER
        return cls.IMPORTED


class Provider(Word):
    """What moved the bytes of a result.

    Only hardware providers produce numbers that may judge hardware or be paired with each other;
    ``soft`` (gdrdiag's software verbs) and ``fixture`` (synthetic numbers in test Reports) never are.
    """

    CUDA = "cuda"
    PYVERBS = "pyverbs"
    NATIVE = "native"
    NATIVE_NULL = "native-null"  # the C loop over a null device: the loop's own cost, no NIC
    SOFT = "soft"
    FIXTURE = "fixture"
    PERFTEST = "perftest"
    NVBANDWIDTH = "nvbandwidth"
    BANDWIDTH_TEST = "bandwidthTest"  # CUDA samples
    P2P_TEST = "p2pBandwidthLatencyTest"  # CUDA samples
    NCCL_TESTS = "nccl-tests"
    NCCL = "nccl"  # NCCL's own INFO log (NCCL_DEBUG=INFO): facts of a run, no number
    UCX_PERFTEST = "ucx_perftest"  # UCX's own benchmark (openucx/ucx src/tools/perf)
    # numbers a person posted (an issue thread, a forum post) with no tool output to import:
    # hardware numbers, as the person measured them, but not re-checkable
    POSTED = "posted"

    @property
    def is_hardware(self) -> bool:
        """True when the number came from real hardware."""
        return self not in (Provider.SOFT, Provider.FIXTURE, Provider.NATIVE_NULL)

    @classmethod
    def parse(cls, text: str) -> "Provider | None":
        """The provider named by a stored string, or None when it names none we know."""
        known = cls._value2member_map_.get(text) if type(text) is str else None
        if known is not None:
            return known  # type: ignore[return-value]  # once per result: no enum call
        try:
            return cls(text)
        except ValueError:
            return None


class MemoryKind(Word):
    """The memory kinds gdrdiag allocates; the value is what users type."""

    DEVICE = "device"
    MANAGED = "managed"
    PINNED = "pinned"
    PINNED_WC = "pinned-wc"
    REGISTERED = "registered"
    PAGEABLE = "pageable"

    @property
    def needs_gpu(self) -> bool:
        """True for kinds that need the CUDA driver (all but pageable)."""
        return self is not MemoryKind.PAGEABLE

    @property
    def on_gpu(self) -> bool:
        """True when the bytes live in GPU memory (device only; managed is placement-dependent)."""
        return self is MemoryKind.DEVICE

    @property
    def host_accessible(self) -> bool:
        """True when the CPU can load/store the range directly."""
        return self is not MemoryKind.DEVICE

    @property
    def location(self) -> str:
        """Where the bytes physically live, in words, for reports."""
        return _LOCATIONS[self]


_LOCATIONS = {
    MemoryKind.DEVICE: "GPU memory",
    MemoryKind.MANAGED: "managed: host DRAM until the GPU touches it (pages migrate)",
    MemoryKind.PINNED: "host DRAM, page-locked",
    MemoryKind.PINNED_WC: "host DRAM, page-locked, write-combined",
    MemoryKind.REGISTERED: "host DRAM, page-locked by cuMemHostRegister",
    MemoryKind.PAGEABLE: "host DRAM, pageable",
}


class RegPath(Word):
    """How an RDMA memory region was registered."""

    MR = "mr"  # ibv_reg_mr (GPU memory through nvidia-peermem)
    DMABUF = "dmabuf"  # cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr


class Direction(Word):
    """Which way a host<->GPU copy moves bytes."""

    H2D = "h2d"
    D2H = "d2h"
    BIDIR = "bidir"


class AccessFlags(enum.IntFlag):
    """``enum ibv_access_flags`` bits (rdma-core libibverbs/verbs.h).

    RELAXED_ORDERING is ``IBV_ACCESS_OPTIONAL_FIRST``: an optional flag, which libibverbs drops
    silently where the provider or kernel does not support it (verbs.h, ``IBV_ACCESS_OPTIONAL_RANGE``).
    """

    LOCAL_WRITE = 1
    REMOTE_WRITE = 1 << 1
    REMOTE_READ = 1 << 2
    REMOTE_ATOMIC = 1 << 3
    MW_BIND = 1 << 4
    ZERO_BASED = 1 << 5
    ON_DEMAND = 1 << 6
    HUGETLB = 1 << 7
    FLUSH_GLOBAL = 1 << 8
    FLUSH_PERSISTENT = 1 << 9
    RELAXED_ORDERING = 1 << 20


class RelaxedOrdering(Word):
    """The user's relaxed-ordering choice for an RDMA run: one setting, not a bool plus a bit."""

    OFF = "off"
    ON = "on"
    AB = "ab"  # both, alternated in one run (the A/B that decides whether RO matters)

    def access(self, base: AccessFlags) -> tuple[AccessFlags, ...]:
        """The access flags each arm of the run registers with."""
        with_ro = base | AccessFlags.RELAXED_ORDERING
        without = base & ~AccessFlags.RELAXED_ORDERING
        return {RelaxedOrdering.OFF: (without,), RelaxedOrdering.ON: (with_ro,)}.get(self, (without, with_ro))
