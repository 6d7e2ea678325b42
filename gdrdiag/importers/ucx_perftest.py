r"""UCX's ``ucx_perftest`` text output -> BenchResults. Pure.

The format, from UCX's source (openucx/ucx src/tools/perf/perftest_run.c, ``print_header`` and
``print_progress``):

- a test box, printed by the side that describes the test (the server in a two-process run, both
  with ``-l``)::

    | API:          protocol layer      |
    | Test:         tag match bandwidth |
    | Send memory:  cuda                |
    | Recv memory:  cuda                |
    | Message size: 67108864            |

- a results table, printed by the client: progress lines (``[thread 0] ...``) and one ``Final:``
  line of eight numbers: iterations, the percentile latency, average and overall latency (us),
  average and overall bandwidth, average and overall message rate. "MB/s" is MiB/s: the tool
  divides bytes per second by 1024 * 1024.
- with ``UCX_PROTO_INFO=y``, UCX's protocol tables (one per endpoint configuration, rows
  ``| range | protocol | transport/device |``), each line behind a UCX log prefix. Both processes
  print to one terminal, so their lines interleave.

One result per ``Final:`` line: a bandwidth test's overall bandwidth (GB/s), a latency test's
percentile latency (us). The box names the test and the memory types; without it (the client's
output alone) the row is kept and says why it is not judged.

Which GPUs: ucx_perftest puts group 0 (the server, which receives in the bandwidth tests) on CUDA
device 0 and group 1 (the client, which sends) on device 1 (``gpu_index = group_index % number of
GPUs``: src/tools/perf/cuda/cuda_alloc.c, ``ucx_perf_cuda_init``), unless ``-a`` names devices (the
box then prints ``Send device`` / ``Recv device``). ``gpu`` is the sender, ``peer_gpu`` the receiver.

The route (:class:`gdrdiag.model.params.UcxRunFacts`): a GPU-to-GPU message moved by CUDA IPC
(``cuda_ipc/cuda``) took the GPUs' peer path; one pipelined through ``frag host`` buffers
(``cuda_copy`` into host memory, then shared memory, CMA or TCP) was staged through host memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import add, integer, number
from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.params import ImportedMetrics, ImportedParams, UcxRunFacts
from gdrdiag.model.path import Mover
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

MAX_LINE = 4096
MAX_ROUTES = 8
_MIB = 1024 * 1024
# (API line, Test line) -> the test's -t name, from the tests[] table of src/tools/perf/perftest.c
_TESTS = {
    ("protocol layer", "tag match bandwidth"): "tag_bw",
    ("protocol layer", "tag match latency"): "tag_lat",
    ("protocol layer", "tag sync match bandwidth"): "tag_sync_bw",
    ("protocol layer", "tag sync match latency"): "tag_sync_lat",
    ("protocol layer", "put bandwidth"): "ucp_put_bw",
    ("protocol layer", "put latency"): "ucp_put_lat",
    ("protocol layer", "stream bandwidth"): "stream_bw",
    ("protocol layer", "stream latency"): "stream_lat",
    ("protocol layer", "am bandwidth / message rate"): "ucp_am_bw",
    ("protocol layer", "am latency"): "ucp_am_lat",
    ("protocol layer", "get latency / bandwidth / message rate"): "ucp_get",
    ("transport layer", "put bandwidth / message rate"): "put_bw",
    ("transport layer", "get bandwidth / message rate"): "get_bw",
    ("transport layer", "active message bandwidth / message rate"): "am_bw",
    ("transport layer", "put latency"): "put_lat",
    ("transport layer", "active message latency"): "am_lat",
}
_BOX = re.compile(
    r"\|\s{0,4}(API|Test|Data layout|Send memory|Recv memory|Send device|Recv device|Message size"
    r"|Window size):\s+(.{1,120}?)\s*\|"
)
_NUM = r"([0-9][0-9,]{0,30}(?:\.[0-9]{1,12})?)"
_FINAL = re.compile(r"Final:\s+" + r"\s+".join([_NUM] * 8) + r"\s*$")
_TABLE_HEAD = re.compile(r"bandwidth \(MB/s\)\s*\|\s*message rate \(msg/s\)")
# a protocol-table row: | range | protocol | config |, after UCX's "[time] [host:pid:tid]" prefix
_PROTO_ROW = re.compile(
    r"\|\s*([0-9][0-9.KMG]*\.\.(?:inf|[0-9][0-9KMG]*)|[0-9]+)\s*\|\s*([^|]{1,200}?)\s*\|\s*([^|]{0,120}?)\s*\|"
)
_MEMORY = {"host": MemoryKind.PINNED, "cuda": MemoryKind.DEVICE}


class UcxPerftestFormatError(UserInputError):
    """ucx_perftest output this importer cannot read."""


def looks_like(lines: list[str]) -> bool:
    """True for output holding ucx_perftest's results table or its test box."""
    return any(_TABLE_HEAD.search(ln[:MAX_LINE]) for ln in lines) or any(
        "| API:" in ln[:MAX_LINE] and ("protocol layer" in ln or "transport layer" in ln) for ln in lines
    )


@dataclass
class _Box:
    fields: dict[str, str] = field(default_factory=dict)


def _boxes(lines: list[str]) -> list[_Box]:
    out: list[_Box] = []
    for ln in lines:
        m = _BOX.search(ln[:MAX_LINE])
        if not m:
            continue
        name, value = m.group(1), m.group(2).strip()
        if name == "API" or not out:
            out.append(_Box())
        out[-1].fields.setdefault(name, value)
    return out


def route_facts(lines: list[str]) -> UcxRunFacts:
    """The route UCX's protocol tables show for GPU memory (all False with no table)."""
    rows = [m for ln in lines if (m := _PROTO_ROW.search(ln[:MAX_LINE]))]
    if not rows:
        return UcxRunFacts()
    routes: list[str] = []
    cuda_ipc = staged = tcp = False
    for m in rows:
        proto, config = m.group(2).strip(), m.group(3).strip()
        gpu_row = "cuda" in proto or "cuda" in config
        cuda_ipc |= "cuda_ipc" in config
        staged |= "frag host" in proto
        tcp |= gpu_row and "tcp/" in config
        if gpu_row and proto not in ("short",) and len(routes) < MAX_ROUTES:
            route = f"{proto} | {config or '-'}"
            if route not in routes:
                routes.append(route)
    return UcxRunFacts(proto_info=True, cuda_ipc=cuda_ipc, staged=staged, tcp=tcp, routes=tuple(routes))


def _final_values(m: re.Match) -> list[float]:
    return [number(g.replace(",", ""), "ucx_perftest: Final line") for g in m.groups()]


def parse_text(text: str, source: str = "") -> list[BenchResult]:
    """Results of one ucx_perftest output (one or several runs, each ending in a ``Final:`` line)."""
    lines = text.splitlines()
    finals = [m for ln in lines if (m := _FINAL.search(ln[:MAX_LINE].rstrip()))]
    if not finals:
        raise UcxPerftestFormatError(
            "ucx_perftest output without a 'Final:' line (the client prints the results; was it cut short?)"
        )
    boxes = _boxes(lines)
    facts = route_facts(lines)
    out: list[BenchResult] = []
    for i, m in enumerate(finals):
        # the i-th box describes the i-th run; one box (a server's) describes every run of that output
        box = boxes[i] if len(boxes) == len(finals) else boxes[0] if len(boxes) == 1 else None
        add(out, _result(_final_values(m), box, facts, source))
    return out


def _test_name(box: Optional[_Box]) -> Optional[str]:
    if box is None:
        return None
    api, desc = box.fields.get("API", ""), box.fields.get("Test", "")
    return _TESTS.get((api, desc))


def _device(text: Optional[str]) -> Optional[int]:
    """``cuda:1`` -> 1 (a ``Send device`` / ``Recv device`` line)."""
    if text and ":" in text:
        tail = text.rsplit(":", 1)[1].strip()
        if tail.isdigit() and len(tail) < 4:
            return int(tail)
    return None


@dataclass(frozen=True)
class _Path:
    kind: Optional[PathKind]
    flow: Optional[Flow]
    direction: Optional[str]
    memory: Optional[MemoryKind]
    gpu: Optional[int]
    peer_gpu: Optional[int]
    unknown: Optional[str]


def _path(box: Optional[_Box], test: Optional[str], facts: UcxRunFacts) -> _Path:
    if box is None or test is None:
        why = (
            "ucx_perftest's client prints no test box: which test and memory types ran is not in this output "
            "(import the server's output with it, or run with -l)"
            if box is None
            else f"ucx_perftest test {box.fields.get('Test', '?')!r} ({box.fields.get('API', '?')}) is not "
            "one gdrdiag reads"
        )
        return _Path(None, None, None, None, None, None, why)
    send, recv = box.fields.get("Send memory", "host"), box.fields.get("Recv memory", "host")
    sender = _device(box.fields.get("Send device"))
    receiver = _device(box.fields.get("Recv device"))
    # two processes, no -a: the receiver (group 0) on CUDA device 0, the sender (group 1) on device 1
    sender = 1 if sender is None else sender
    receiver = 0 if receiver is None else receiver
    if send == "cuda" and recv == "cuda":
        return _Path(PathKind.GPU_GPU, Flow.PEER, "d2d", MemoryKind.DEVICE, sender, receiver, None)
    if send == "host" and recv == "cuda":
        return _Path(PathKind.HOST_GPU, Flow.H2D, "h2d", MemoryKind.PINNED, receiver, None, None)
    if send == "cuda" and recv == "host":
        return _Path(PathKind.HOST_GPU, Flow.D2H, "d2h", MemoryKind.PINNED, sender, None, None)
    if send == "host" and recv == "host":
        return _Path(
            None,
            None,
            "h2h",
            None,
            None,
            None,
            "host memory to host memory: within one machine UCX copies with the CPU (shared memory, CMA), "
            "across machines the route is not in the output; no GPU path to judge",
        )
    return _Path(
        None, None, None, None, None, None, f"ucx_perftest memory types {send} -> {recv}: not modelled"
    )


def _result(values: list[float], box: Optional[_Box], facts: UcxRunFacts, source: str) -> BenchResult:
    iters, pct_lat, _avg_lat, _overall_lat, _avg_bw, overall_bw, _avg_mr, overall_mr = values
    test = _test_name(box)
    path = _path(box, test, facts)
    size = None
    if box is not None and box.fields.get("Message size"):
        size = integer(box.fields["Message size"], "ucx_perftest: Message size") or None
    window = None
    if box is not None and box.fields.get("Window size"):
        window = integer(box.fields["Window size"], "ucx_perftest: Window size") or None
    latency = test is not None and "lat" in test
    peer_access = None
    if path.kind is PathKind.GPU_GPU and facts.proto_info:
        peer_access = (
            True if facts.cuda_ipc and not facts.staged else False if facts.staged or facts.tcp else None
        )
    params = ImportedParams(
        tool=Provider.UCX_PERFTEST.value,
        test=test or "unknown",
        size_bytes=size,
        direction=path.direction,
        memory=path.memory,
        gpu=path.gpu,
        peer_gpu=path.peer_gpu,
        peer_access=peer_access,
        window=window,
        ucx=facts,
        source_file=source or None,
        path_unknown=path.unknown,
        path_kind=path.kind,
        # UCX moves GPU memory with the copy engine: cuda_ipc and cuda_copy issue cuMemcpyAsync
        # (src/uct/cuda/cuda_ipc/cuda_ipc_ep.c, src/uct/cuda/cuda_copy/cuda_copy_ep.c)
        mover=Mover.COPY_ENGINE if path.kind is not None else None,
        flow=path.flow,
    )
    if latency:
        value, unit = pct_lat, "us"
        described = f"ucx_perftest {test}: {box.fields.get('Test') if box else ''}, one-way latency (us)"
    else:
        value, unit = overall_bw * _MIB / 1e9, "GB/s"
        fields = box.fields if box else {}
        described = (
            f"ucx_perftest {test or '(test not printed)'}: {fields.get('Send memory', '?')} -> "
            f"{fields.get('Recv memory', '?')}, {size or '?'} B messages, overall bandwidth "
            "(its MB/s is MiB/s)"
        )
    if value <= 0:
        return BenchResult.error(
            f"ucx_perftest_{test or 'unknown'}",
            "ucx_perftest printed 0",
            params=params,
            provider=Provider.UCX_PERFTEST.value,
        )
    return BenchResult(
        key=f"ucx_perftest_{test or 'unknown'}",
        status=Status.OK,
        description=described,
        params=params,
        unit=unit,
        samples=(value,),
        stats=SampleStats.of([value]),
        metrics=ImportedMetrics(msgs_per_s=overall_mr, iterations=iters),
        provider=Provider.UCX_PERFTEST.value,
        verified=None,
        method="imported from ucx_perftest: its Final line (overall over every iteration)",
    )
