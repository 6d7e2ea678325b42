"""Findings from measured RDMA WRITE results (mr-bench): the RO A/B verdict and the matrix.

Pure functions of ``BenchResult`` lists (plain data from a Report), so every rule is tested
from fabricated or saved results. Soft-provider results are never judged: a memcpy says
nothing about PCIe ordering or peer-to-peer paths.

Findings (codes are stable):

- ``RO-AB-SENSITIVE``  RO raises bandwidth >= 1.10x on a path: writes without RO are throttled
  by strict PCIe ordering (docs/kb/rdma.md#ro-ab-sensitive). FAIL at >= 2x (an app without RO loses
  half or more), WARN otherwise.
- ``RO-AB-IGNORED``    GPU-memory path slow against host memory (< 0.7x) yet RO changes nothing:
  the flag was probably dropped.
- ``RO-AB-NO-EFFECT``  RO changes nothing and the path is not slow: ordering does not limit it.
- ``GDR-DEVICE-SLOW``  device-memory WRITE bandwidth below 0.7x the host-memory reference of the
  same run (FAIL below 0.5x): the "84 Gb/s vs 400 Gb/s" pattern.
- ``GDR-MANAGED-IS-HOST`` managed memory registered with ibv_reg_mr measured host DRAM.
- ``GDR-PATHS-DIFFER`` dma-buf and nvidia-peermem registration of device memory differ > 25%.
- ``GDR-DEVICE-REG-FAILED`` device memory could not be registered (WAIVED/ERROR with reason).

Use :data:`RULES` (``(results) -> list[Finding]``) or :func:`report_rule` (``(Report, Context) -> ...``)
to register them with :mod:`gdrdiag.diagnose`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

from gdrdiag.diagnose import thresholds
from gdrdiag.diagnose._common import failed_call_not_registration, per_results, shown
from gdrdiag.diagnose.catalogue import with_reference
from gdrdiag.diagnose.context import Context
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.params import identity_items
from gdrdiag.model.results import BenchResult, Status

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

# One threshold per quantity, defined in thresholds.py (docs/diagnosis.md): RO on/off gain, and
# RDMA WRITE into GPU memory against host memory.
RO_GAIN = thresholds.RO_GAIN
RO_GAIN_FAIL = thresholds.RO_GAIN_FAIL
RO_LOSS = 0.95  # below this RO made it slower: inconclusive
SLOW_VS_HOST = thresholds.GPU_VS_HOST_SLOW
FAIL_VS_HOST = thresholds.GPU_VS_HOST_FAIL
NOISE = 0.10  # relative spread ((max - min) / median) above which a near-1 ratio is noise
PATHS_DIFFER = 0.25
MIN_SAMPLES = 2  # runs per side below which an A/B gets no verdict (one sample has no spread)

REF_RO = ""
REF_GDR = ""

CAVEATS_RO = (
    "a VF in a guest on a kernel older than 6.4 (mlx5) silently ignored the RO flag; the MR still registered",
    "libibverbs drops optional access flags where the kernel lacks optional-MR-access support, and "
    "ibv_reg_mr still succeeds: there is no query for 'RO applied'",
    "NIC firmware PCI_WR_ORDERING=force_relax makes every write relaxed, so off and on look alike",
    "loopback on one port: the same NIC also reads the source buffer, so both DMA directions are in "
    "the number",
)
CAVEAT_HOST = "writes into host DRAM rarely depend on RO; the A/B matters for GPU memory"

# Preference order for the host-memory reference of a matrix.
_HOST_REFERENCE_ORDER = ("pinned", "registered", "pageable", "pinned-wc", "managed")


@dataclass(frozen=True)
class RoVerdict:
    """The RO A/B classification with its evidence."""

    code: str  # ro_sensitive | ro_probably_ignored | no_effect | inconclusive | not_judged
    words: str
    ratio: Optional[float]
    caveats: tuple[str, ...] = ()


def classify_ro(
    off_gbps: Optional[float],
    on_gbps: Optional[float],
    *,
    reference_gbps: Optional[float] = None,
    landing: str = "gpu",
    provider: str = "pyverbs",
    off_spread: float = 0.0,
    on_spread: float = 0.0,
    samples: Optional[int] = None,
) -> RoVerdict:
    """Classify an RO off/on pair measured on the same buffers, QPs and sizes.

    ``reference_gbps`` is the host-memory (RO off) number of the same run, used to tell "RO
    ignored on a slow path" from "RO irrelevant". Spreads are (max - min) / median of each side.
    ``samples`` is the number of runs behind the side with fewer: with one run there is no
    spread to judge noise by, so there is no verdict (in the QEMU lab ``--matrix --repeats 1``
    called RO significant on host memory from one sample; with 3 runs it was inconclusive).
    """
    if provider == "soft":
        return RoVerdict(
            "not_judged",
            "no verdict: soft provider (bytes copied in software; PCIe ordering plays no part)",
            None,
        )
    if not off_gbps or not on_gbps or off_gbps <= 0 or on_gbps <= 0:
        return RoVerdict("inconclusive", "inconclusive: a side of the A/B has no measurement", None)
    ratio = on_gbps / off_gbps
    caveats = CAVEATS_RO + ((CAVEAT_HOST,) if landing == "host" else ())
    if samples is not None and samples < MIN_SAMPLES:
        return RoVerdict(
            "inconclusive",
            f"inconclusive: RO on/off = {ratio:.2f}x from {samples} run per side; a verdict needs "
            f"at least {MIN_SAMPLES} (--repeats 3)",
            ratio,
            caveats,
        )
    noise = max(off_spread, on_spread)
    if noise > NOISE and abs(ratio - 1) <= noise:
        return RoVerdict(
            "inconclusive",
            f"inconclusive: RO on/off = {ratio:.2f}x is within the run-to-run "
            f"spread ({noise:.0%}); use more iterations or -D",
            ratio,
            caveats,
        )
    if ratio >= RO_GAIN:
        return RoVerdict(
            "ro_sensitive",
            f"RO-sensitive path: relaxed ordering raises bandwidth {ratio:.2f}x",
            ratio,
            caveats,
        )
    if ratio < RO_LOSS:
        return RoVerdict(
            "inconclusive",
            f"inconclusive: RO made it slower ({ratio:.2f}x); rerun, and check firmware ordering settings",
            ratio,
            caveats,
        )
    if landing == "gpu" and reference_gbps and off_gbps < SLOW_VS_HOST * reference_gbps:
        return RoVerdict(
            "ro_probably_ignored",
            f"RO probably ignored: this GPU-memory path runs at {off_gbps / reference_gbps:.0%} of "
            f"host memory and RO changes nothing ({ratio:.2f}x)",
            ratio,
            caveats,
        )
    return RoVerdict(
        "no_effect",
        f"no effect: RO changes bandwidth by {ratio:.2f}x; ordering does not limit this path",
        ratio,
        caveats,
    )


# -- pairing results ------------------------------------------------------------------------------------


def _identity(r: BenchResult) -> tuple:
    """The case with its access flags left out: RO off and on of one case share it."""
    return (r.key,) + tuple(sorted((k, str(v)) for k, v in identity_items(r.params) if k != "access"))


def _rel_spread(r: BenchResult) -> float:
    s = r.stats
    return (s.maximum - s.minimum) / s.median if s and s.median > 0 else 0.0


@dataclass(frozen=True)
class RoPair:
    """An RO off and an RO on result that differ in nothing else."""

    off: BenchResult
    on: BenchResult
    verdict: RoVerdict

    @property
    def subject(self) -> str:
        """Memory kind / registration path / size, for titles."""
        p = self.off.params
        return f"{shown(p.memory)}/{shown(p.reg_path)} {shown(p.size_bytes)} B"


@per_results  # asked for by every host_reference call: once per Report
def _bw_ok(results: Iterable[BenchResult]) -> list[BenchResult]:
    return [
        r
        for r in results
        if r.status is Status.OK
        and r.value is not None
        and r.key.startswith("rdma_write_")
        and (r.params.mode or "bw") == "bw"
        and r.params.role != "server"
    ]


@per_results  # the RO test decodes access flags: once per Report, not once per host_reference call
def _host_ro_off(results: Iterable[BenchResult]) -> list[BenchResult]:
    return [r for r in _bw_ok(results) if r.params.landing == "host" and not r.params.relaxed_ordering]


@dataclass(frozen=True)
class HostReferences:
    """The host-memory RO-off reference of every size, chosen in one pass over the results.

    A Report of thousands of RO pairs asks for a reference per pair; scanning the results for each
    made ``show`` and ``diagnose`` quadratic in rows. ``any_size`` answers a question without a size.
    """

    by_size: dict[object, BenchResult]
    any_size: Optional[BenchResult]

    def get(self, size: object = None) -> Optional[BenchResult]:
        """The reference for ``size`` (any size when None), as :func:`host_reference` defines it."""
        if size is None:
            return self.any_size
        try:
            return self.by_size.get(size)
        except TypeError:  # an unhashable size matches no result
            return None


def _reference_rank(r: BenchResult) -> Optional[int]:
    """The place of ``r``'s memory kind in the reference preference order; None when not a candidate."""
    memory = r.params.memory
    return next((i for i, kind in enumerate(_HOST_REFERENCE_ORDER) if memory == kind), None)


def host_references(results: Sequence[BenchResult]) -> HostReferences:
    """Each size's reference: the preferred memory kind, the first result of that kind in order."""
    best: dict[object, tuple[int, BenchResult]] = {}
    overall: Optional[tuple[int, BenchResult]] = None
    for r in _host_ro_off(results):
        rank = _reference_rank(r)
        if rank is None:
            continue
        if overall is None or rank < overall[0]:
            overall = (rank, r)
        size = r.params.size_bytes
        if size is not None and (size not in best or rank < best[size][0]):
            best[size] = (rank, r)
    return HostReferences({size: r for size, (_, r) in best.items()}, overall[1] if overall else None)


def host_reference(results: Sequence[BenchResult], size: object = None) -> Optional[BenchResult]:
    """The host-memory RO-off result a GPU-memory number is compared with (same size)."""
    return host_references(results).get(size)


@per_results
def ro_pairs(results: Sequence[BenchResult]) -> list[RoPair]:
    """Match RO off/on results of the same case and params; classify each pair."""
    by_id: dict[tuple, dict[bool, BenchResult]] = {}
    for r in _bw_ok(results):
        by_id.setdefault(_identity(r), {})[bool(r.params.relaxed_ordering)] = r
    pairs = []
    refs = host_references(results)
    for sides in by_id.values():
        if False in sides and True in sides:
            off, on = sides[False], sides[True]
            ref = refs.get(off.params.size_bytes)
            verdict = classify_ro(
                off.value,
                on.value,
                reference_gbps=ref.value if ref else None,
                landing=str(off.params.landing or "gpu"),
                provider=off.provider,
                off_spread=_rel_spread(off),
                on_spread=_rel_spread(on),
                samples=min(len(off.samples), len(on.samples)),
            )
            pairs.append(RoPair(off, on, verdict))
    return pairs


# -- the matrix -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatrixRow:
    """One memory kind x registration path of the matrix, interpreted."""

    memory: str
    reg_path: str
    landing: str
    lands_in: str
    off_gbps: Optional[float]
    on_gbps: Optional[float]
    ratio: Optional[float]
    vs_host: Optional[float]
    verdict: Optional[RoVerdict]
    status: str
    reason: str
    provider: str


def interpret_matrix(results: Sequence[BenchResult]) -> list[MatrixRow]:
    """Rows in memory-kind order with RO off/on, RO ratio and the ratio to the host reference."""
    rows: dict[tuple[str, str], dict] = {}
    order: list[tuple[str, str]] = []
    for r in results:
        if not r.key.startswith("rdma_write_") or (r.params.mode or "bw") != "bw":
            continue
        ident = (str(r.params.memory or "?"), str(r.params.reg_path or "?"))
        if ident not in rows:
            rows[ident] = {"results": []}
            order.append(ident)
        rows[ident]["results"].append(r)
    pairs = {(str(p.off.params.memory), str(p.off.params.reg_path)): p for p in ro_pairs(results)}
    refs = host_references(results)
    out = []
    for ident in order:
        rs = rows[ident]["results"]
        ok = [r for r in rs if r.status is Status.OK]
        off = next((r for r in ok if not r.params.relaxed_ordering), None)
        on = next((r for r in ok if r.params.relaxed_ordering), None)
        first = (ok or rs)[0]
        ref = refs.get(first.params.size_bytes)
        pair = pairs.get(ident)
        bad = next((r for r in rs if r.status is not Status.OK), None)
        vs_host = None
        if off is not None and ref is not None and ref.value and off.params.landing == "gpu":
            vs_host = off.value / ref.value  # type: ignore[operator]
        out.append(
            MatrixRow(
                memory=ident[0],
                reg_path=ident[1],
                landing=str(first.params.landing or ""),
                lands_in=str(first.params.lands_in or ""),
                off_gbps=off.value if off else None,
                on_gbps=on.value if on else None,
                ratio=pair.verdict.ratio if pair else None,
                vs_host=vs_host,
                verdict=pair.verdict if pair else None,
                status=bad.status.value if bad and not ok else "OK" if ok else first.status.value,
                reason=(bad.reason or "") if bad else "",
                provider=first.provider,
            )
        )
    return out


# -- rules ----------------------------------------------------------------------------------------------


def _ev(r: BenchResult, label: str) -> str:
    p = r.params
    return (
        f"results[{r.key} size={shown(p.size_bytes)} qps={shown(p.qps)} "
        f"ro={'on' if p.relaxed_ordering else 'off'}]"
        f".{label} = {r.value:.1f} {r.unit}"
    )


def ro_findings(results: Sequence[BenchResult]) -> list[Finding]:
    """RO-AB-* findings from every RO off/on pair measured by a real provider."""
    out = []
    for pair in ro_pairs(results):
        v = pair.verdict
        if v.code in ("not_judged", "inconclusive"):
            continue
        evidence = (
            _ev(pair.off, "median"),
            _ev(pair.on, "median"),
            f"ratio RO on/off = {v.ratio:.2f}",
            f"lands in: {pair.off.params.lands_in or '?'}",
        )
        if v.code == "ro_sensitive":
            out.append(
                Finding(
                    code="RO-AB-SENSITIVE",
                    severity=Severity.FAIL if (v.ratio or 0) >= RO_GAIN_FAIL else Severity.WARN,
                    title=f"{pair.subject}: {v.words}",
                    subject=pair.subject,
                    evidence=evidence,
                    advice=(
                        "Register bulk-data MRs with IBV_ACCESS_RELAXED_ORDERING (NCCL and perftest do by "
                        "default; custom transports and plugins often do not). Keep flag/signal MRs strictly "
                        "ordered."
                    ),
                    reference=REF_RO,
                )
            )
        elif v.code == "ro_probably_ignored":
            out.append(
                Finding(
                    code="RO-AB-IGNORED",
                    severity=Severity.WARN,
                    title=f"{pair.subject}: {v.words}",
                    subject=pair.subject,
                    evidence=evidence + tuple(f"caveat: {c}" for c in v.caveats[:2]),
                    advice=(
                        "Check that RO can take effect: guest kernel >= 6.4 (or the backported "
                        "mlx5 series) for "
                        "a VF, a kernel with optional MR access support, rdma-core >= v28, and the "
                        "NIC firmware "
                        "ordering policy (mlxconfig PCI_WR_ORDERING). CAUSE-RO-NOT-HONOURED and "
                        "CAUSE-P2P-VIA-RC weigh which applies to this machine."
                    ),
                    reference=REF_RO,
                )
            )
        else:
            out.append(
                Finding(
                    code="RO-AB-NO-EFFECT",
                    severity=Severity.INFO,
                    title=f"{pair.subject}: {v.words}",
                    subject=pair.subject,
                    evidence=evidence,
                    advice="Nothing to change for ordering on this path.",
                    reference=REF_RO,
                )
            )
    return out


def gdr_findings(results: Sequence[BenchResult]) -> list[Finding]:
    """GDR-* findings from the memory-kind matrix (device vs host, managed, dma-buf vs peermem)."""
    # The same tuple when nothing is soft, so ro_pairs' remembered answer is reused (per_results).
    real = results
    if any(r.provider == "soft" for r in results):
        real = tuple(r for r in results if r.provider != "soft")
    rows = interpret_matrix(real)
    out = [f for row in rows for f in _matrix_row_findings(row, real)]
    out.extend(_paths_differ(rows))
    return out


def _matrix_row_findings(row: MatrixRow, real: Sequence[BenchResult]) -> list[Finding]:
    """GDR-DEVICE-SLOW, GDR-MANAGED-IS-HOST and GDR-DEVICE-REG-FAILED for one matrix row."""
    out = []
    subject = f"{row.memory}/{row.reg_path}"
    if row.memory == "device" and row.vs_host is not None and row.vs_host < SLOW_VS_HOST:
        ref = host_reference(real)
        out.append(
            Finding(
                code="GDR-DEVICE-SLOW",
                severity=Severity.FAIL if row.vs_host < FAIL_VS_HOST else Severity.WARN,
                title=f"RDMA WRITE into GPU memory ({row.reg_path}) runs at {row.vs_host:.0%} of host memory",
                subject=subject,
                evidence=(
                    f"{subject} RO off = {row.off_gbps:.1f} Gb/s",
                    f"host reference {ref.params.memory if ref else '?'} = "
                    f"{ref.value if ref and ref.value else 0:.1f} Gb/s",
                    f"RO on = {row.on_gbps:.1f} Gb/s" if row.on_gbps else "RO on not measured",
                ),
                advice=(
                    "The NIC->GPU peer-to-peer path is the bottleneck. The CAUSE-* findings weigh this "
                    "machine's candidates (relaxed ordering, the peer route, placement) against the "
                    "measurements and give the fix and the next experiment for each."
                ),
                reference=REF_GDR,
            )
        )
    if row.memory == "managed" and row.reg_path == "mr" and row.status == "OK":
        out.append(
            Finding(
                code="GDR-MANAGED-IS-HOST",
                severity=Severity.INFO,
                title="managed memory registered with ibv_reg_mr measured host DRAM, not GPU memory",
                subject=subject,
                evidence=(f"{subject} lands in: {row.lands_in}",),
                advice=(
                    "Do not read a fast managed-memory number as GPUDirect: ibv_reg_mr pins "
                    "the managed pages "
                    "on the host (x86). Compare device memory with a host reference instead."
                ),
                reference=REF_GDR,
            )
        )
    if row.status in ("WAIVED", "ERROR") and row.memory == "device":
        out.append(_device_failed(row, subject))
    return out


def _device_failed(row: MatrixRow, subject: str) -> Finding:
    """GDR-DEVICE-REG-FAILED; a row that failed in another verbs call says so, not registration."""
    call = failed_call_not_registration(row.reason)
    if call is not None:
        return Finding(
            code="GDR-DEVICE-REG-FAILED",
            severity=Severity.WARN if row.status == "ERROR" else Severity.INFO,
            title=f"device memory via {row.reg_path} could not be measured ({row.status}): "
            f"{call} failed, not the registration",
            subject=subject,
            evidence=(f"{subject}: {row.reason}",),
            advice=(
                f"The case stopped in {call}, which does not register memory (ENOMEM from "
                "ibv_create_qp: the NIC's queue resources or the locked-memory limit ran out, "
                "ibv_create_qp(3)). Free QPs held by other processes, lower --qps or raise "
                "RLIMIT_MEMLOCK, and re-run; this row says nothing about GPU memory registration."
            ),
            reference="",
        )
    return Finding(
        code="GDR-DEVICE-REG-FAILED",
        severity=Severity.WARN if row.status == "ERROR" else Severity.INFO,
        title=f"device memory via {row.reg_path} could not be measured ({row.status})",
        subject=subject,
        evidence=(f"{subject}: {row.reason}",),
        advice=(
            "For --reg mr load nvidia-peermem; for --reg dmabuf use the open NVIDIA "
            "kernel module, "
            "a CUDA >= 11.7 driver and a kernel/rdma-core with dma-buf MRs."
        ),
        reference="",
    )


def _paths_differ(rows: Sequence[MatrixRow]) -> list[Finding]:
    """GDR-PATHS-DIFFER: device memory via dma-buf and via peermem differ by more than PATHS_DIFFER."""
    out = []
    by_path = {r.reg_path: r for r in rows if r.memory == "device" and r.off_gbps}
    if "mr" in by_path and "dmabuf" in by_path:
        a, b = by_path["mr"].off_gbps, by_path["dmabuf"].off_gbps
        if a and b and abs(a - b) / max(a, b) > PATHS_DIFFER:
            out.append(
                Finding(
                    code="GDR-PATHS-DIFFER",
                    severity=Severity.WARN,
                    title=f"device memory: dma-buf {b:.1f} Gb/s vs nvidia-peermem {a:.1f} Gb/s",
                    subject="device",
                    evidence=(f"device/mr RO off = {a:.1f} Gb/s", f"device/dmabuf RO off = {b:.1f} Gb/s"),
                    advice=(
                        "The registration path changes the mapping the NIC uses (BAR1 via peermem "
                        "vs dma-buf, which "
                        "may use a PCIe or C2C mapping): use the faster one, and check "
                        "CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE on C2C platforms."
                    ),
                    reference=REF_GDR,
                )
            )
    return out


RULES: tuple[Callable[[Sequence[BenchResult]], list[Finding]], ...] = (ro_findings, gdr_findings)


def rdma_findings(results: Sequence[BenchResult]) -> list[Finding]:
    """Every rule of this module, in order (FAIL/WARN/INFO ranking is the registry's job)."""
    out: list[Finding] = []
    for rule in RULES:
        out.extend(rule(results))
    return [with_reference(f) for f in out]


def report_rule(report: "Report", ctx: Context) -> list[Finding]:
    """Adapter for :func:`gdrdiag.diagnose.register`: the rules over ``report.results``."""
    return rdma_findings(report.results)
