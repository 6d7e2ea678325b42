"""GPU<->GPU peer rules (docs/kb/peer.md): pure functions of a Report's machine and peer-bench rows.

- PEER-ACCESS-OFF: peer copies staged through host memory. With peer access off the driver moves
  a cudaMemcpyPeer device -> host -> device; on an NVLink pair that is ~10x slower. Measured: the
  on/off ratio of the same pair and size. When only staged copies were measured and the driver
  offers peer access, the loss against the path model is the evidence and the finding is FAIL.
  Imported rows a tool measured with peer access off by design (p2pBandwidthLatencyTest's
  P2P=Disabled matrices, ``ImportedParams.baseline``) are one INFO per file, like peer-bench's own
  A/B: never a WARN on their own. Latency rows (us) are never read as bandwidth.
- PEER-P2P-UNSUPPORTED: ``cuDeviceCanAccessPeer`` is 0 for a pair: every copy between them is staged
  and no kernel can touch the peer's memory.
- PEER-NVLINK-DOWN: a GPU has NVLinks that are not active, so its pairs run on fewer links.
- PEER-ACS-REDIRECT: a PCIe peer pair whose switch ports have ACS request/completion redirect on,
  so every peer TLP climbs to the root complex (PCIe Base Spec r5.0 sec. 6.12).
- PEER-SLOW: a large copy-engine peer copy with peer access on, or a node-wide pattern (all to one,
  one to all, all to all), reaches under :data:`PEER_OF_MODEL_HEALTHY` of the path model (links x
  rate x efficiency, :mod:`gdrdiag.pathmodel.peer`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Optional

from gdrdiag.diagnose._common import ev, finding, is_downstream_facing, shown
from gdrdiag.diagnose.context import Context
from gdrdiag.diagnose.virt_rules import REDIRECT_BITS
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import GpuPeerPair, MachineInfo, PathClass
from gdrdiag.model.params import PeerParams
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status, is_imported, is_peer
from gdrdiag.pathmodel.peer import expect, pair_of
from gdrdiag.pathmodel.rows import to_gbytes_per_s
from gdrdiag.units import MiB, format_size

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.results import ImportedResult, PeerResult

PEER_OF_MODEL_HEALTHY = 0.9
LARGE_PEER_BYTES = 64 * MiB
STAGED_LOSS_FAIL = 2.0  # peer access on is at least this many times faster: FAIL when it is off

ENABLE_ADVICE = (
    "Enable peer access before copying between GPUs: cudaDeviceEnablePeerAccess(peer, 0) from each GPU "
    "(driver API cuCtxEnablePeerAccess); PyTorch and CuPy copy peer-to-peer once it is enabled. Under NCCL, "
    "leave NCCL_P2P_DISABLE unset (and NCCL_P2P_LEVEL at least NVL on NVLink pairs). In a container or VM, "
    "every GPU of the pair must be visible to the process (CUDA_VISIBLE_DEVICES)."
)


def _large(results: Iterable[BenchResult], key: str) -> list[PeerResult]:
    """The largest-size OK rows of ``key`` per (src, dst, bidirectional), at least LARGE_PEER_BYTES."""
    best: dict[tuple, PeerResult] = {}
    for r in results:
        if r.key != key or r.status is not Status.OK or not is_peer(r) or not r.value:
            continue
        p = r.params
        if (p.size_bytes or 0) < LARGE_PEER_BYTES:
            continue
        k = (p.src_gpu, p.dst_gpu, p.bidirectional)
        if k not in best or (p.size_bytes or 0) > (best[k].params.size_bytes or 0):
            best[k] = r
    return list(best.values())


def is_bandwidth(r: BenchResult) -> bool:
    """True when the row's unit is a bandwidth (a latency in us never is)."""
    return to_gbytes_per_s(1.0, r.unit) is not None


def imported_peer_rows(results: Iterable[BenchResult], peer_access: bool) -> list[ImportedResult]:
    """Imported GPU->GPU bandwidth rows between two GPUs with peer access as given (not the diagonal)."""
    return [
        r
        for r in results
        if r.status is Status.OK
        and is_imported(r)
        and r.params.peer_access is peer_access
        and r.params.gpu is not None
        and r.params.peer_gpu is not None
        and r.params.gpu != r.params.peer_gpu
        and r.value
        and is_bandwidth(r)
    ]


def _imported_staged(results: Iterable[BenchResult]) -> list[ImportedResult]:
    """Imported GPU->GPU bandwidth rows measured with peer access off that no tool made so by design.

    Rows whose route a library chose (UCX's protocol tables) are left to that library's cause rule
    (diagnose/causes_ucx.py): enabling peer access is not what fixes them.
    """
    return [
        r for r in imported_peer_rows(results, False) if r.params.baseline is None and r.params.ucx is None
    ]


def _row_ev(r: PeerResult) -> str:
    p = r.params
    if p.op == "all_to_all":
        gpus = f"{shown(p.sources)} GPUs"
    elif p.op == "one_to_all":
        gpus = f"{shown(p.src_gpu)}->all"
    elif p.op == "all_to_one" and (p.sources or 1) > 1:
        gpus = f"all->{shown(p.dst_gpu)}"
    else:
        gpus = f"{shown(p.src_gpu)}->{shown(p.dst_gpu)}"
    return f"results[{r.key} {gpus} size={_size_text(p.size_bytes)}] = {r.value:.1f} GB/s"


def _size_text(size: Optional[int]) -> str:
    """A size for evidence lines; one not recorded reads ``?``."""
    return format_size(size) if size is not None else "?"


@dataclasses.dataclass(frozen=True)
class _MeasuredAB:
    """One pair's peer-bench A/B: the staged copy, the peer copy, and the path between them."""

    off: PeerResult
    on: PeerResult
    path: str

    @property
    def ratio(self) -> float:
        return float(self.on.value or 0) / float(self.off.value or 1)

    @property
    def pair(self) -> str:
        return f"{shown(self.off.params.src_gpu)}->{shown(self.off.params.dst_gpu)}"


def _measured_ab(pairs: list[_MeasuredAB]) -> Finding:
    """PEER-ACCESS-OFF when both sides were measured: peer-bench's own A/B, one INFO for all pairs.

    This machine has peer access working (the on rows), so the staged rows are rungs by design:
    INFO, with the measured share. One finding however many pairs were measured: on a node of 8 GPUs
    the 56 ordered pairs say the same thing, so the title gives the range and the evidence the
    slowest pair's rows and every pair's ratio.
    """
    worst = min(pairs, key=lambda ab: ab.ratio)
    p = worst.off.params
    ratios = [ab.ratio for ab in pairs]
    paths = ", ".join(sorted({ab.path for ab in pairs}))
    if len(pairs) == 1:
        who = f"GPU {shown(p.src_gpu)} -> {shown(p.dst_gpu)} ({paths})"
        slower = f"{ratios[0]:.1f}x"
        subject = f"gpu{p.src_gpu}->gpu{p.dst_gpu}"
        per_pair = [f"on / off = {ratios[0]:.2f}"]
    else:
        who = f"{len(pairs)} ordered GPU pairs ({paths})"
        slower = f"{min(ratios):.1f}-{max(ratios):.1f}x"
        subject = "gpu-pairs"
        per_pair = ["on / off per pair: " + ", ".join(f"{ab.pair} {ab.ratio:.2f}" for ab in pairs)]
    return dataclasses.replace(
        finding(
            "PEER-ACCESS-OFF",
            Severity.INFO,
            f"{who}: copies without peer access run {slower} slower "
            "(staged through host memory); anything that does not enable peer access pays this",
            [
                _row_ev(worst.off),
                _row_ev(worst.on),
                "by design: peer-bench measures peer access off beside on; on works here",
                *per_pair,
            ],
            ENABLE_ADVICE,
            "",
            subject,
        ),
        explains=round(1 - 1 / min(ratios), 3),
        basis="by design",
    )


def access_off(report: Report, ctx: Context) -> Iterable[Finding]:
    """PEER-ACCESS-OFF: measured staging loss (on/off), or staged rows where the driver offers peer access."""
    m = report.machine
    on_rows = {(r.params.src_gpu, r.params.dst_gpu): r for r in _large(report.results, "peer_ce_on")}
    measured: list[_MeasuredAB] = []
    for off in _large(report.results, "peer_ce_off"):
        p = off.params
        on = on_rows.get((p.src_gpu, p.dst_gpu))
        pair = pair_of(m, p.src_gpu, p.dst_gpu)
        path = pair.path_text if pair else "?"
        if on is not None and on.value and off.value:
            ratio = on.value / off.value
            if ratio < 1.5:
                continue
            measured.append(_MeasuredAB(off, on, path))
            continue
        if pair is None or pair.can_access_peer is not True:
            continue  # PEER-P2P-UNSUPPORTED speaks for pairs without peer access
        exp = expect(m, pair, mover="ce", peer_access=True)
        if exp.gbytes_per_s is None or not off.value:
            continue
        ratio = exp.gbytes_per_s / off.value
        if ratio < 1.5:
            continue
        yield dataclasses.replace(
            finding(
                "PEER-ACCESS-OFF",
                Severity.FAIL if ratio >= STAGED_LOSS_FAIL else Severity.WARN,
                f"GPU {p.src_gpu} -> {p.dst_gpu} ({path}): peer copies are staged through host memory - peer "
                f"access is not enabled; the path model gives {ratio:.1f}x with it on",
                [
                    _row_ev(off),
                    f"machine.peers[{p.src_gpu}->{p.dst_gpu}].can_access_peer = True",
                    f"expected with peer access on: {exp.gbytes_per_s:.1f} GB/s ({exp.text})",
                ],
                ENABLE_ADVICE,
                "",
                f"gpu{p.src_gpu}->gpu{p.dst_gpu}",
            ),
            explains=round(1 - 1 / ratio, 3),
            basis="inferred",
        )
    if measured:
        yield _measured_ab(measured)
    yield from _imported_access_off(report)
    yield from _imported_by_design(report)


def _gbs(r: BenchResult) -> float:
    return to_gbytes_per_s(float(r.value or 0), r.unit) or 0.0


def _imported_by_design(report: Report) -> Iterable[Finding]:
    """PEER-ACCESS-OFF INFO, one per imported file: the tool measured peer access off beside on by design.

    The on/off ratio is taken pair by pair on the one-way rows of the same file; a pair whose peer
    copy is not faster than its staged one is no by-design cost (causes_peer.py speaks for it).
    """
    staged = [r for r in imported_peer_rows(report.results, False) if r.params.baseline]
    on = {_ab_key(r): r for r in imported_peer_rows(report.results, True)}
    files: dict[tuple, list[tuple[ImportedResult, ImportedResult]]] = {}
    for off in staged:
        p = off.params
        peer = on.get(_ab_key(off))
        if peer is not None and _gbs(peer) > _gbs(off):
            files.setdefault((p.tool, p.source_file), []).append((off, peer))
    for (tool, source), ab in files.items():
        ratios = [_gbs(peer) / _gbs(off) for off, peer in ab]
        worst_off, worst_on = min(ab, key=lambda x: _gbs(x[1]) / _gbs(x[0]))
        reason = worst_off.params.baseline
        yield dataclasses.replace(
            finding(
                "PEER-ACCESS-OFF",
                Severity.INFO,
                f"{tool or 'imported'}{f' ({source})' if source else ''}: copies with peer access off "
                f"run {min(ratios):.1f}-{max(ratios):.1f}x slower than with it on ({len(ab)} pair rows, "
                "staged through host memory); measured beside P2P on by design",
                [
                    f"results[{worst_off.key} {worst_off.params.gpu}->{worst_off.params.peer_gpu}] = "
                    f"{_gbs(worst_off):.1f} GB/s (peer access off)",
                    f"results[{worst_on.key} {worst_on.params.gpu}->{worst_on.params.peer_gpu}] = "
                    f"{_gbs(worst_on):.1f} GB/s (peer access on)",
                    f"by design: {reason}",
                ],
                ENABLE_ADVICE,
                "",
                source or (tool or ""),
            ),
            explains=round(1 - 1 / min(ratios), 3),
            basis="by design",
        )


def _ab_key(r: ImportedResult) -> tuple:
    """What pairs an imported peer-access-off row with its peer-access-on row: file, test, data flow.

    A read row (``unidirectional_read``: the row GPU pulls the column's memory) moves data column ->
    row, so it pairs with the staged row of that direction.
    """
    p = r.params
    test = p.test or ""
    src, dst = (p.peer_gpu, p.gpu) if test.endswith("_read") else (p.gpu, p.peer_gpu)
    return (p.tool, p.source_file, test.removesuffix("_read"), src, dst)


def _imported_access_off(report: Report) -> Iterable[Finding]:
    """PEER-ACCESS-OFF for imported rows measured with peer access disabled where the driver offers it."""
    m = report.machine
    for r in _imported_staged(report.results):
        p = r.params
        pair = pair_of(m, p.gpu, p.peer_gpu)
        if pair is None or pair.can_access_peer is not True:
            continue
        exp = expect(m, pair, mover="ce", peer_access=True)
        if exp.gbytes_per_s is None or not r.value or exp.gbytes_per_s / r.value < 1.5:
            continue
        yield dataclasses.replace(
            finding(
                "PEER-ACCESS-OFF",
                Severity.WARN,
                f"{p.tool or 'imported'}: GPU {p.gpu} -> {p.peer_gpu} measured with peer access disabled at "
                f"{r.value:.1f} GB/s; the driver offers peer access ({exp.gbytes_per_s:.0f} GB/s expected)",
                [f"results[{r.key}] = {r.value:.1f} GB/s (peer_access = False)", exp.text],
                ENABLE_ADVICE,
                "",
                f"gpu{p.gpu}->gpu{p.peer_gpu}",
            ),
            explains=round(1 - r.value / exp.gbytes_per_s, 3),
            basis="inferred",
        )


def p2p_unsupported(m: MachineInfo) -> Iterable[Finding]:
    """PEER-P2P-UNSUPPORTED: the driver offers no peer access for a GPU pair."""
    for pair in m.peers:
        if pair.can_access_peer is not False:
            continue
        vm = bool(m.virt.is_vm)
        yield finding(
            "PEER-P2P-UNSUPPORTED",
            Severity.WARN,
            f"GPU {pair.src_ordinal} cannot access GPU {pair.dst_ordinal}'s memory "
            "(cuDeviceCanAccessPeer = 0): "
            "every copy between them is staged through host memory"
            + (" - in this VM the hypervisor decides" if vm else ""),
            [
                ev(f"machine.peers[{pair.src_ordinal}->{pair.dst_ordinal}].can_access_peer", False),
                ev(f"machine.peers[{pair.src_ordinal}->{pair.dst_ordinal}].path", pair.path_text),
                *([pair.note] if pair.note else []),
            ],
            "`nvidia-smi topo -p2p rw` names the reason per pair (CNS: chipset not supported, TNS: "
            "topology not "
            "supported, NS: not supported). "
            + (
                "In a VM, P2P needs the host to pass the GPUs through with peer-to-peer allowed "
                "(NVLink, or GPUs "
                "under one PCIe switch with ACS redirect off on the host); ask the provider for a "
                "P2P-capable shape."
                if vm
                else "On bare metal, PCIe P2P needs both GPUs under a switch or a root complex "
                "that supports it, with ACS redirect off on the switch ports (see PEER-ACS-REDIRECT) "
                "and the IOMMU in "
                "passthrough."
            ),
            "",
            f"gpu{pair.src_ordinal}->gpu{pair.dst_ordinal}",
        )


def nvlink_down(m: MachineInfo) -> Iterable[Finding]:
    """PEER-NVLINK-DOWN: NVLinks NVML lists but that are not active."""
    for g in m.gpus:
        if not g.nvlinks:
            continue
        down = [lk.link for lk in g.nvlinks if lk.active is False]
        if not down:
            continue
        active = sum(1 for lk in g.nvlinks if lk.active)
        yield finding(
            "PEER-NVLINK-DOWN",
            Severity.FAIL if active == 0 else Severity.WARN,
            f"GPU {g.bdf}: {len(down)} of {len(g.nvlinks)} NVLinks are not active ({active} carry its peer "
            "traffic)",
            [
                ev(f"gpus[{g.bdf}].nvlinks.active", f"{active}/{len(g.nvlinks)}"),
                ev(f"gpus[{g.bdf}].nvlinks.inactive", ",".join(map(str, down))),
            ],
            "`nvidia-smi nvlink -s` and `nvidia-smi nvlink -e` (error counters) per link; on "
            "NVSwitch systems "
            "check the fabric manager (`systemctl status nvidia-fabricmanager`). A link that stays "
            "down after "
            "a GPU reset is a hardware case for the vendor.",
            "",
            g.bdf,
        )


def redirecting_bridges(m: MachineInfo, pair: GpuPeerPair) -> list[tuple[str, tuple[str, ...]]]:
    """(bridge, redirect bits set) for each downstream-facing port on the pair's path with ACS redirect."""
    out = []
    for b in pair.bridges:
        f = m.function(b)
        if f is None or f.acs is None or not is_downstream_facing(f):
            continue
        on = tuple(x for x in REDIRECT_BITS if x in f.acs.ctl_flags)
        if on:
            out.append((b, on))
    return out


def acs_redirect(m: MachineInfo) -> Iterable[Finding]:
    """PEER-ACS-REDIRECT: a PCIe GPU<->GPU path through switch ports with ACS redirect on (one per pair)."""
    if m.virt.is_vm:
        return
    seen: set[tuple[int, int]] = set()
    for pair in m.peers:
        key = (min(pair.src_ordinal, pair.dst_ordinal), max(pair.src_ordinal, pair.dst_ordinal))
        if key in seen or pair.path_class not in (PathClass.PIX, PathClass.PXB):
            continue
        seen.add(key)
        bridges = redirecting_bridges(m, pair)
        if not bridges:
            continue
        names = ", ".join(b for b, _ in bridges)
        yield finding(
            "PEER-ACS-REDIRECT",
            Severity.FAIL,
            f"ACS redirect on {names} sends GPU {key[0]} <-> GPU {key[1]} peer traffic up to the root "
            "complex instead of across the switch",
            [
                *(ev(f"pci[{b}].acs.ctl_flags", "/".join(bits)) for b, bits in bridges),
                ev(f"machine.peers[{key[0]}<->{key[1]}].path", pair.path_text),
            ],
            f"Disable ACS redirect on the switch ports between the GPUs: BIOS 'ACS disable', kernel "
            f"pci=disable_acs_redir={names.replace(', ', ';')}, or `setpci -s <port> ECAP_ACS+0x6.w=0000` "
            "(until reboot). With an IOMMU active the kernel sets redirect; iommu=pt alone does not "
            "clear it.",
            "",
            f"gpu{key[0]}<->gpu{key[1]}",
        )


# peer-bench's keys PEER-SLOW reads: a pair's copy (one way, both ways) and the node-wide patterns
# (bench/peer_all_to_one.py, bench/peer_all_to_all.py), each judged by its own path model figure.
_PAIR_KEYS = ("peer_ce_on", "peer_ce_bidir_on")
_PATTERN_KEYS = ("peer_all_to_one", "peer_one_to_all", "peer_all_to_all")


def _who(p: PeerParams, m: Optional[MachineInfo]) -> tuple[str, str]:
    """What a row moved, in words (GPUs with their PCI addresses where known) and as a finding subject."""

    def named(ordinal: Optional[int]) -> tuple[str, Optional[str]]:
        bdf = next((g.bdf for g in (m.gpus if m else ()) if g.cuda_ordinal == ordinal), None)
        return (f"GPU {shown(ordinal)} ({bdf})" if bdf else f"GPU {shown(ordinal)}"), bdf

    if p.op == "all_to_all":
        return f"all to all among {shown(p.sources)} GPUs", "gpus-all-to-all"
    if p.op == "one_to_all":
        text, bdf = named(p.src_gpu)
        return f"{text} into {shown(p.destinations)} GPUs at once", bdf or f"gpu{p.src_gpu}->all"
    if p.op == "all_to_one" and (p.sources or 1) > 1:
        text, bdf = named(p.dst_gpu)
        return f"{p.sources} GPUs into {text} at once", bdf or f"all->gpu{p.dst_gpu}"
    return f"GPU {shown(p.src_gpu)} -> {shown(p.dst_gpu)}", f"gpu{p.src_gpu}->gpu{p.dst_gpu}"


def _is_one_pair(p: PeerParams) -> bool:
    """A node-wide row on too few GPUs to be more than one pair's copy (one way or both ways)."""
    if p.op == "all_to_all":
        return (p.sources or 0) <= 2
    if p.op == "one_to_all":
        return (p.destinations or 0) <= 1
    return (p.sources or 1) <= 1


def _pairs_alone(report: Report, ctx: Context, index: dict[int, int]) -> Optional[str]:
    """The pair copies' range against their model, for a node-wide row's evidence (None: none measured)."""
    ratios = [
        j.ratio
        for r in _large(report.results, "peer_ce_on")
        if (j := ctx.judgement(index[id(r)])) is not None and j.ratio is not None
    ]
    if not ratios:
        return None
    span = f"{min(ratios):.0%}-{max(ratios):.0%}"
    return f"this Report's pair copies, one at a time, reach {span} of their model"


def peer_slow(report: Report, ctx: Context) -> Iterable[Finding]:
    """PEER-SLOW: a large CE peer row with peer access on under PEER_OF_MODEL_HEALTHY of the path model.

    A pair's copy (one way or both), or a node-wide pattern: every other GPU into one, one GPU into
    every other, all to all. The row's judgement (today's path model) is the yardstick, never the
    ratio peer-bench saved in the row's metrics: re-diagnosing an old Report uses today's model.
    """
    index = {id(r): i for i, r in enumerate(report.results)}
    for key in _PAIR_KEYS + _PATTERN_KEYS:
        for r in _large(report.results, key):
            j = ctx.judgement(index[id(r)])
            frac = j.ratio if j is not None else None
            if j is None or frac is None or frac >= PEER_OF_MODEL_HEALTHY:
                continue
            p = r.params
            assert isinstance(p, PeerParams)
            if key in _PATTERN_KEYS and _is_one_pair(p):
                continue  # that pair's copy under another name: its own row speaks for it
            who, subject = _who(p, report.machine)
            evidence = [_row_ev(r), f"expected {j.expected_gbytes_per_s:.2f} GB/s at this size ({j.bound})"]
            if key in _PATTERN_KEYS and (alone := _pairs_alone(report, ctx, index)) is not None:
                evidence.append(alone)
            yield finding(
                "PEER-SLOW",
                Severity.FAIL if frac < 0.5 else Severity.WARN,
                f"{who}{f' ({p.path})' if p.path else ''}: peer copies reach {frac:.0%} of the path model "
                f"(healthy: >= {PEER_OF_MODEL_HEALTHY:.0%})",
                evidence,
                _slow_advice(p, key),
                "",
                subject,
            )


def _slow_advice(p: PeerParams, key: str) -> str:
    """The fix for a slow row: a PCIe path through the root complex, many copies at once, or one pair."""
    if p.path in ("PHB", "NODE", "SYS"):
        return (
            "The pair's P2P traffic crosses the root complex: many CPUs forward peer TLPs slowly; NCCL "
            "avoids such pairs by default (NCCL_P2P_LEVEL). Place communicating GPUs under one switch."
        )
    if key in _PATTERN_KEYS:
        return (
            "Many copies at once fall short where pairs alone may not: check every GPU's links "
            "(`nvidia-smi nvlink -s` on each), the NVSwitch fabric (`nvidia-smi -q`, Fabric: State "
            "Completed, Status Success; the fabric manager service running on the host), and that no "
            "other job uses the GPUs while measuring."
        )
    return (
        "Check every link of the pair is up and at full rate (`nvidia-smi nvlink -s`, `nvidia-smi topo "
        "-m`), and that no other job shares the GPUs while measuring."
    )


MACHINE_RULES = [p2p_unsupported, nvlink_down, acs_redirect]


# Every code this module's rules emit (machine and results): peer-bench shows these of diagnose's findings.
CODES = frozenset(
    {"PEER-ACCESS-OFF", "PEER-ACS-REDIRECT", "PEER-NVLINK-DOWN", "PEER-P2P-UNSUPPORTED", "PEER-SLOW"}
)


RULES = [access_off, peer_slow]
