"""Cause rules for NCCL collectives within one host, from NCCL's own INFO log (``params.nccl``).

A collective whose ranks all sit on one host is bound by its GPUs' peer paths (NVLink, NVSwitch,
PCIe peer-to-peer: :func:`gdrdiag.pathmodel.bounds.peer_path_bound`), never by a NIC. Below it, the
largest size of each run is explained by what NCCL's log says it did:

- ``CAUSE-NCCL-NO-P2P``: channels via SHM (host memory) where the GPUs have a peer path, with the
  variable that turned P2P off (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL=LOC) when the run set one;
- ``CAUSE-NCCL-SOCKET-LOCAL``: channels via NET within one host (P2P and SHM both off);
- ``CAUSE-NCCL-SETTING``: one channel, or a forced protocol or algorithm (NCCL_PROTO=LL, ...);
- ``MEASURE-NCCL-LOG``: no INFO log in the output (partial evidence): the hypotheses that fit the
  loss and the one rerun that tells them apart.

An INFO log imported alone (a training job's, no nccl-tests table: a result with no bandwidth) has
no loss to explain; :func:`log_facts` states what its facts show for a run on one host, WARN:

- ``NCCL-LOG-NO-P2P``: P2P off between GPUs of one host (channels via SHM, or NCCL_P2P_DISABLE,
  NCCL_P2P_LEVEL=LOC set);
- ``NCCL-LOG-SOCKET-LOCAL``: GPUs of one host connected through the network transport (NET/Socket);
- ``NCCL-LOG-SETTING``: a limiting setting (NCCL_PROTO, NCCL_ALGO, one channel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gdrdiag.diagnose.causes import Cause, Context
from gdrdiag.diagnose.peer_shortfall import PeerShortfall, measure_finding
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.params import ImportedParams, NcclRunFacts
from gdrdiag.model.path import SLOW_BELOW, Judgement, Mover
from gdrdiag.pathmodel.bounds import peer_path_bound
from gdrdiag.pathmodel.rows import facts_only, path_of, staged_reason

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

RERUN = "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV"
# Variables that limit a collective on purpose (NCCL env docs): channels, protocol, algorithm.
_KNOBS = ("NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_PROTO", "NCCL_ALGO", "NCCL_NTHREADS")


# The largest row of one single-node run against its GPUs' peer path, with the run's NCCL facts
_Shortfall = PeerShortfall[Optional[NcclRunFacts]]


def shortfalls(report: "Report", ctx: Context) -> list[_Shortfall]:
    """The largest row of each single-node NCCL run below SLOW_BELOW of its GPUs' peer path."""
    largest: dict[tuple, Judgement] = {}
    for j in ctx.judgements:
        p = report.results[j.index].params
        if (
            j.mover is not Mover.COLLECTIVE
            or not isinstance(p, ImportedParams)
            or not j.measured_gbytes_per_s
        ):
            continue
        run = (p.source_file, p.collective, p.ranks)
        if run not in largest or (j.size_bytes or 0) > (largest[run].size_bytes or 0):
            largest[run] = j
    out = []
    for j in largest.values():
        r = report.results[j.index]
        path, _ = path_of(r)
        bound = peer_path_bound(ctx.machine, path) if path is not None else None
        if bound is None or not bound.gbytes_per_s:
            continue
        p = r.params
        facts = p.nccl if isinstance(p, ImportedParams) else None
        s = _Shortfall(j, facts, bound.gbytes_per_s, bound.name, "busbw")
        staged = path is not None and path.collective is not None and path.collective.staged is not None
        # a run over the GPUs' peer paths is short only where its own judgement says so (one yardstick);
        # a staged run is healthy for its staged path and short of the peer path it did not take
        if s.share < SLOW_BELOW and (staged or j.is_loss):
            out.append(s)
    return out


def _knobs(facts: NcclRunFacts) -> list[str]:
    found = [f"{name}={v}" for name in _KNOBS if (v := facts.setting(name)) is not None]
    if facts.coll_channels == 1 and not any(k.startswith("NCCL_MAX_NCHANNELS") for k in found):
        found.append("1 coll channel (NCCL's log)")
    return found


def _cause(s: _Shortfall, code: str, title: str, why: str, fix: str) -> Cause:
    return s.cause(code, title, why, fix, f"rerun with {RERUN} and check the 'via' lines")


def nccl_causes(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-NCCL-NO-P2P / -SOCKET-LOCAL / -SETTING for each single-node run its log explains."""
    out = []
    for s in shortfalls(report, ctx):
        facts = s.facts
        if facts is None:
            continue
        staged = staged_reason(facts)
        net = next((t for t in facts.transports if t.kind == "NET"), None)
        if staged is not None and net is not None and not facts.uses("SHM") and not facts.uses("P2P"):
            off = ", ".join(
                f"{k}={v}" for k in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE") if (v := facts.setting(k))
            )
            out.append(
                _cause(
                    s,
                    "CAUSE-NCCL-SOCKET-LOCAL",
                    f"NCCL connected GPUs of one host through its network transport (via NET/{net.detail})"
                    + (f": {off}" if off else ""),
                    f"NCCL's log: {net.connections} connection(s) via NET/{net.detail}, none via P2P or SHM",
                    "Unset "
                    + (
                        " and ".join(k.split("=")[0] for k in off.split(", "))
                        if off
                        else "NCCL_P2P_DISABLE and NCCL_SHM_DISABLE"
                    )
                    + " so NCCL uses the GPUs' "
                    "peer paths.",
                )
            )
        elif staged is not None:
            via = (
                ", ".join(f"{t.kind}/{t.detail} x{t.connections}" for t in facts.transports[:3])
                or "not logged"
            )
            var = staged if "=" in staged else None
            out.append(
                _cause(
                    s,
                    "CAUSE-NCCL-NO-P2P",
                    f"NCCL did not use peer-to-peer: {var or staged}; its bytes went through host memory",
                    f"NCCL's log: {staged}; channels: {via}",
                    (f"Unset {var.split('=')[0]} (it turns NCCL's P2P transport off). " if var else "")
                    + "Where no variable is set, `nvidia-smi topo -p2p r` shows whether the driver offers "
                    "peer access between these GPUs.",
                )
            )
        elif knobs := _knobs(facts):
            out.append(
                _cause(
                    s,
                    "CAUSE-NCCL-SETTING",
                    f"NCCL ran with a limiting setting: {', '.join(knobs)}",
                    f"NCCL's log: {', '.join(knobs)}",
                    f"Unset {', '.join(k.split('=')[0] for k in knobs if k.startswith('NCCL_')) or 'it'} and "
                    "let NCCL choose channels, protocol and algorithm.",
                )
            )
    return out


def log_needed(report: "Report", ctx: Context) -> list[Finding]:
    """MEASURE-NCCL-LOG: a single-node run below its peer path with no NCCL INFO log to say why."""
    partial = [s for s in shortfalls(report, ctx) if s.facts is None or not s.facts.debug_info]
    return measure_finding(
        partial,
        "MEASURE-NCCL-LOG",
        "no NCCL INFO log to say why",
        "P2P off (NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC: channels via SHM); P2P and SHM off (via "
        "NET/Socket); one channel (NCCL_MAX_NCHANNELS=1); a forced protocol (NCCL_PROTO=LL); another "
        "process using a GPU",
        f"Run the same test again with {RERUN} and import that output: the 'via' lines and the "
        "'set by environment' lines tell these apart.",
        f"{RERUN} <the same nccl-tests command>",
    )


def _where(facts: NcclRunFacts) -> str:
    hosts = ", ".join(facts.hosts[:4]) or "one host"
    gpus = sorted({d.cuda_dev for d in facts.devices if d.cuda_dev is not None})
    on = f", GPUs {', '.join(map(str, gpus[:16]))}" if gpus else ""
    return f"{facts.ranks or '?'} ranks on {hosts}{on}" + (
        f" (NCCL {facts.version})" if facts.version else ""
    )


def _set_lines(facts: NcclRunFacts, names: tuple[str, ...]) -> list[str]:
    return [f"NCCL INFO {n} set by environment to {v}" for n in names if (v := facts.setting(n)) is not None]


def _via_lines(facts: NcclRunFacts, kinds: tuple[str, ...] = ()) -> list[str]:
    return [
        f"NCCL INFO Channel .. via {t.kind}{'/' + t.detail if t.detail else ''} "
        f"({t.connections} connection(s))"
        for t in facts.transports
        if not kinds or t.kind in kinds
    ][:4]


def _log_finding(key: str, source: str, code: str, title: str, evidence: list[str], fix: str) -> Finding:
    of = f" ({source})" if source else ""
    return Finding(
        code=code,
        severity=Severity.WARN,
        title=f"NCCL's log{of}: {title} (the log holds no bandwidth: no loss measured)",
        evidence=tuple(evidence),
        advice=fix,
        subject=key,
        next_step="run nccl-tests (all_reduce_perf -b 8 -e 1G -g <GPUs>) with the same environment and "
        f"{RERUN}, and import it with --bundle: the path model then measures what this setting costs",
    )


def _log_transport(facts: NcclRunFacts) -> Optional[tuple[str, str, list[str], str]]:
    """(code, title, log lines, fix) for P2P off or sockets within one host, or None."""
    net = next((t for t in facts.transports if t.kind == "NET"), None)
    off = ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_P2P_LEVEL")
    if net is not None and not facts.uses("SHM") and not facts.uses("P2P") and not facts.uses("NVLS"):
        lines = _via_lines(facts, ("NET",)) + _set_lines(facts, off)
        unset = [n for n in off[:2] if facts.setting(n) is not None] or list(off[:2])
        return (
            "NCCL-LOG-SOCKET-LOCAL",
            f"GPUs of one host connected through the network transport (via NET/{net.detail})",
            lines,
            f"Unset {' and '.join(unset)} so NCCL uses the GPUs' peer paths (or shared memory).",
        )
    staged = staged_reason(facts)
    if staged is None:
        return None
    var = staged.split("=")[0] if "=" in staged else None
    return (
        "NCCL-LOG-NO-P2P",
        f"P2P off between GPUs of one host ({staged}); the bytes go through host memory",
        _set_lines(facts, off) + _via_lines(facts),
        (f"Unset {var} (it turns NCCL's P2P transport off). " if var else "")
        + "Where no variable is set, `nvidia-smi topo -p2p r` shows whether the driver offers peer "
        "access between these GPUs.",
    )


def log_facts(report: "Report", ctx: Context) -> list[Finding]:
    """NCCL-LOG-*: what an NCCL INFO log imported alone shows of a run on one host (no loss measured)."""
    out = []
    for i, r in enumerate(report.results):
        p = r.params
        if not facts_only(r) or not isinstance(p, ImportedParams) or p.nccl is None:
            continue
        facts = p.nccl
        if not facts.debug_info or facts.single_node is not True:
            continue
        where = f"results[{i}] {r.key}: {_where(facts)}"
        source = p.source_file or ""
        if found := _log_transport(facts):
            code, title, lines, fix = found
            out.append(_log_finding(r.key, source, code, title, [where, *lines], fix))
        if knobs := _knobs(facts):
            names = tuple(k.split("=")[0] for k in knobs if k.startswith("NCCL_"))
            lines = _set_lines(facts, names)
            if facts.coll_channels == 1:
                lines.append("NCCL INFO 1 coll channels, ... (one channel drives one share of the links)")
            out.append(
                _log_finding(
                    r.key,
                    source,
                    "NCCL-LOG-SETTING",
                    f"a limiting setting: {', '.join(knobs)}",
                    [where, *lines],
                    f"Unset {', '.join(names) or 'it'} and let NCCL choose channels, protocol and algorithm; "
                    "keep it only where a test needs it.",
                )
            )
    return out


RULES = (nccl_causes,)
