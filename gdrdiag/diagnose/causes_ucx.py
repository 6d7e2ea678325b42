"""Cause rules for GPU-to-GPU transfers through UCX, from UCX's own protocol tables (``params.ucx``).

A ucx_perftest run with GPU memory on both sides of one host is held to its GPUs' peer path (NVLink,
or PCIe peer-to-peer: :func:`gdrdiag.pathmodel.peer.expect`) at the row's message size, whatever
route UCX took. Below it:

- ``CAUSE-UCX-NO-CUDA-IPC``: UCX's protocol tables (``UCX_PROTO_INFO=y``) show GPU memory pipelined
  through host buffers, or over TCP, and no cuda_ipc: the route is the cause;
- ``MEASURE-UCX-PROTO``: no protocol table in the output (partial evidence): the hypotheses that fit
  the loss and the one rerun that tells them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gdrdiag.diagnose.causes import Cause, Context
from gdrdiag.diagnose.peer_shortfall import PeerShortfall, measure_finding
from gdrdiag.model.findings import Finding
from gdrdiag.model.imported_path import Flow
from gdrdiag.model.params import ImportedParams, UcxRunFacts
from gdrdiag.pathmodel.peer import expect, pair_of

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

RERUN = "UCX_PROTO_INFO=y"
# A loss of at least this share of the peer path is one a cause must name (below it, run-to-run noise)
MIN_LOSS = 0.10


# One UCX GPU-to-GPU row against its GPUs' peer path at the row's message size
_Shortfall = PeerShortfall[UcxRunFacts]


def _at_size(peak: float, size: Optional[int], per_op_us: Optional[float]) -> float:
    """GB/s of one message of ``size`` bytes at ``peak`` beside the row's own per-message cost."""
    if not size or not per_op_us:
        return peak
    return size / (size / (peak * 1e9) + per_op_us * 1e-6) / 1e9


def shortfalls(report: "Report", ctx: Context) -> list[_Shortfall]:
    """UCX GPU-to-GPU rows at least MIN_LOSS below their GPUs' peer path."""
    out = []
    for j in ctx.judgements:
        p = report.results[j.index].params
        if not isinstance(p, ImportedParams) or p.ucx is None or p.flow is not Flow.PEER:
            continue
        if not j.measured_gbytes_per_s or p.gpu is None or p.peer_gpu is None:
            continue
        pair = pair_of(ctx.machine, p.gpu, p.peer_gpu)
        if pair is None:
            continue
        peer = expect(ctx.machine, pair, mover="ce", peer_access=True)
        if not peer.gbytes_per_s:
            continue
        at_size = _at_size(peer.gbytes_per_s, j.size_bytes, j.per_op_us)
        s = _Shortfall(j, p.ucx, at_size, f"{pair.path_text}, at this message size: {peer.text}")
        if s.share < 1 - MIN_LOSS:
            out.append(s)
    return out


def ucx_causes(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-UCX-NO-CUDA-IPC for each UCX GPU-to-GPU loss whose protocol tables show a staged route."""
    out = []
    for s in shortfalls(report, ctx):
        f = s.facts
        if not f.proto_info or f.cuda_ipc or not (f.staged or f.tcp):
            continue
        route = (
            "over TCP through host memory" if f.tcp else "through host memory (cuda_copy into host fragments)"
        )
        shown_routes = "; ".join(f.routes[:3]) or "no GPU-memory row"
        out.append(
            s.cause(
                "CAUSE-UCX-NO-CUDA-IPC",
                f"UCX moved GPU-to-GPU messages {route}, not with CUDA IPC over the GPUs' peer path",
                f"UCX's protocol tables: no cuda_ipc row; GPU-memory rows: {shown_routes}",
                "Leave cuda_ipc in UCX_TLS (unset UCX_TLS, or list cuda_ipc beside cuda_copy); "
                "`ucx_info -d` lists a cuda_ipc transport where this UCX has one; in containers run both "
                "processes in one IPC namespace (docker --ipc=host), each seeing both GPUs.",
                f"rerun with {RERUN} and check for a cuda_ipc row in the 'from cuda' tables",
            )
        )
    return out


def proto_info_needed(report: "Report", ctx: Context) -> list[Finding]:
    """MEASURE-UCX-PROTO: a UCX GPU-to-GPU row below its peer path with no protocol table to say why."""
    partial = [s for s in shortfalls(report, ctx) if not s.facts.proto_info and s.judgement.is_loss]
    return measure_finding(
        partial,
        "MEASURE-UCX-PROTO",
        "no UCX protocol table to say which transport carried it",
        "cuda_ipc left out (UCX_TLS without it, a UCX built without it, processes in separate IPC "
        "namespaces): messages staged through host memory; TCP only (UCX_TLS=tcp,...); another process "
        "using a GPU",
        f"Run the same ucx_perftest again with {RERUN} on both sides and import that output: its "
        "'from cuda' tables name the transport (cuda_ipc, or cuda_copy with 'frag host').",
        f"{RERUN} <the same ucx_perftest command, server and client>",
    )


RULES = (ucx_causes,)
