"""nccl-tests (NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf, ...) output -> BenchResults. Pure.

Two forms, learnt from nccl-tests' src/util.cu:

- text (stdout): ``# nccl-tests version 2.x ...`` and ``# Collective test starting: all_reduce_perf``
  (newer versions), ``# nThread 1 nGpus 1 minBytes 8 ...``, rank lines ``#  Rank  0 Group  0 Pid
  1234 on node01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3`` (older versions: ``[0x18]``), the
  table ``# size count type redop root time algbw busbw #wrong time algbw busbw #wrong`` (out-of-place
  columns first, then in-place; ``cputime`` with -C; extra i_min/i_max/i_p99/i_cv% columns with
  per-iteration timing; a timestamp column with -T), then ``# Out of bounds values : 0 OK`` and
  ``# Avg bus bandwidth : 112.3``.
- JSON (``-J file.json``, nccl-tests 2.17.4 and later; file versions 1 to 3): ``{"version": 3,
  "args": [...], "env": [...], "nccl_version": .., "config": {"nthreads", "ngpus", ...,
  "devices": [{"rank", "hostname", "device", "device_info", ...}]}, "results": [{"size", "count",
  "type", "redop", "root", "out_of_place": {"time" | "cpu_time", "alg_bw", "bus_bw", "nwrong"},
  "in_place": {...}}], "average_bus_bandwidth": {...}}``. ``env`` (the whole environment of the
  run) is never read nor kept. ``devices`` has one entry per process (the first rank of each), so
  ranks = nthreads x ngpus x len(devices).

One result per size: value = the out-of-place bus bandwidth (GB/s, 1e9 B/s), metrics algbw, busbw
and the time (us). The collective comes from ``Collective test starting: X_perf`` (text), ``args[0]``
(JSON) or, for older text without that line, the file name (``all_reduce_8gpu.txt``); otherwise it is
unknown. ranks = the rank lines (text). A size with wrong elements (#wrong > 0) is an ERROR result:
a fast wrong answer is a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import MAX_TEXT, add, integer, number
from gdrdiag.importers.common import text as name_or_none
from gdrdiag.importers.nccl_log import LogReader
from gdrdiag.model.imported_path import PathKind
from gdrdiag.model.params import ImportedMetrics, ImportedParams, NcclRankDevice, NcclRunFacts
from gdrdiag.model.path import Mover
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

MAX_LINE = 1024
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoallv",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
    "scatter",
    "gather",
    "hypercube",
)
_HEADER = re.compile(r"#\s+size\s+count\s+type\s+redop\s+root\s+(?:cpu)?time\s+algbw\s+busbw\s+#wrong.*")
_STARTING = re.compile(r"# Collective test starting: ([A-Za-z0-9_.-]{1,60})\s*")
_RANK = re.compile(
    r"#\s+Rank\s+(\d{1,6}) Group\s+\d{1,6} Pid\s+\d{1,10} on\s+(\S{1,200})\s+device\s+(\d{1,4})"
    r"\s+\[([^\]]{0,40})\].{0,200}"
)
# lines that begin a run's output (nccl-tests src/common.cu): the version, the collective, the options
_NEW_RUN = re.compile(r"# (?:nccl-tests version|Collective test starting|nThread )")
MAX_RANKS = 4096
_AVG = re.compile(r"# Avg bus bandwidth\s*:.*")


class NcclTestsFormatError(UserInputError):
    """nccl-tests output this importer cannot read."""


def looks_like(lines: list[str]) -> bool:
    """True when these lines hold an nccl-tests result table."""
    return any(_HEADER.fullmatch(ln[:MAX_LINE].strip()) for ln in lines if ln.startswith("#"))


def is_json(data: Any) -> bool:
    """True for an nccl-tests ``-J`` document."""
    return isinstance(data, dict) and isinstance(data.get("results"), list) and "nccl_version" in data


def collective_of(name: str) -> Optional[str]:
    """``all_reduce`` from ``all_reduce_perf``, ``./build/all_gather_perf_mpi`` or a file name holding it."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return next((c for c in COLLECTIVES if c in base), None)


@dataclass
class _Run:
    """One run's part of the text: its collective, rank lines, INFO facts and table header."""

    collective: Optional[str] = None
    ranks: dict[int, NcclRankDevice] = field(default_factory=dict)
    log: LogReader = field(default_factory=LogReader)
    names: Optional[list[str]] = None
    rows: list[tuple[str, list[str]]] = field(default_factory=list)  # (line, its columns)


# The start of an NCCL log line: "host:pid:tid [cudaDev] NCCL " (NCCL src/debug.cc); host:pid is
# group 1. Read from lines that begin with it, so a log line glued inside a result row is found by
# the host:pid it shares with them, not guessed (a row piece ends in a number, a host may begin with one).
_LOG_START = re.compile(r"\s*([A-Za-z0-9_.\-]{1,100}:\d{1,10}):\d{1,10}\s+\[\d{1,4}\]\s*NCCL ")
MAX_LOG_SOURCES = 64  # distinct host:pid pairs looked for inside rows (one per rank process)


def _mended(lines: list[str]) -> list[str]:
    """The lines with NCCL log lines cut out of the result rows they landed in, each row whole again.

    nccl-tests prints a result row in pieces: the size columns, then the out-of-place group, then the
    in-place group and the newline (NVIDIA/nccl-tests src/common.cu). With NCCL_DEBUG_SUBSYS asking
    for a line per call (TUNING, COLL) NCCL's log lines land between the pieces, the first glued to
    the end of a piece: ``268435456 ... -1vm:1365:1365 [0] NCCL INFO AllGather: ...``.
    """
    sources: list[str] = []
    for ln in lines:
        if "NCCL " in ln and len(sources) < MAX_LOG_SOURCES and (m := _LOG_START.match(ln[:MAX_LINE])):
            if m.group(1) + ":" not in sources:
                sources.append(m.group(1) + ":")
    if not sources:
        return lines
    out: list[str] = []
    piece = ""
    for ln in lines:
        if "NCCL " in ln and not _LOG_START.match(ln[:MAX_LINE]):
            at = min((i for src in sources if (i := ln.find(src, 0, MAX_LINE)) > 0), default=-1)
            if at > 0 and _LOG_START.match(ln, at):
                piece = (piece + ln[:at])[: MAX_LINE + 1]  # longer than any row: read as no row
                out.append(ln[at:])
                continue
        if piece and not _LOG_START.match(ln[:MAX_LINE]):
            # the row's next piece, or the line that ends it
            out.append(piece + ln if ln.strip() and not ln.startswith("#") else piece)
            if not ln.strip() or ln.startswith("#"):
                out.append(ln)
            piece = ""
            continue
        out.append(ln)
    if piece:
        out.append(piece)
    return out


def _runs(lines: list[str]) -> list[_Run]:
    """The text cut into runs: a start line (version, collective, nThread) after a table begins the next.

    Several ranks' or nodes' outputs pasted one after the other stay readable: INFO lines belong to
    the run they follow, a run without a table of its own lends its facts to the run before it.
    """
    runs = [_Run()]
    for ln in lines:
        run = runs[-1]
        if run.log.feed(ln):
            continue
        if len(ln) > MAX_LINE:
            continue  # no header nor result row is this long
        if ln.startswith("#"):
            s = ln.strip()
            if _NEW_RUN.match(s) and run.rows:
                run = _Run()
                runs.append(run)
            if m := _STARTING.fullmatch(s):
                run.collective = collective_of(m.group(1))
            elif m := _RANK.fullmatch(s):
                if len(run.ranks) < MAX_RANKS:
                    run.ranks[int(m.group(1))] = _rank_device(m)
            elif _HEADER.fullmatch(s):
                run.names = s.lstrip("#").split()
            continue
        parts = ln.split()
        if run.names is None or not parts or not (parts[0].isascii() and parts[0].isdigit()):
            continue  # NCCL WARN lines and other text interleaved with the table
        run.rows.append((ln, parts))
    return runs


def _rank_device(m: "re.Match[str]") -> NcclRankDevice:
    return NcclRankDevice(
        int(m.group(1)), host=m.group(2)[:MAX_TEXT], cuda_dev=int(m.group(3)), bus_id=m.group(4)
    )


def parse_text(text: str, source: str = "") -> list[BenchResult]:
    """Results of nccl-tests' stdout (one result per size), with the facts of NCCL's INFO lines in it."""
    runs = _runs(_mended([ln.rstrip("\r") for ln in text.splitlines()]))
    if all(r.names is None for r in runs):
        raise NcclTestsFormatError("nccl-tests output: no '# size count type redop root time ...' header")
    out: list[BenchResult] = []
    seen: set[tuple] = set()
    for i, run in enumerate(runs):
        if not run.rows:
            continue
        # a run pasted after this one without a table of its own (another rank's log) adds its facts
        for later in runs[i + 1 :]:
            if later.rows:
                break
            run.log.merge(later.log)
            run.ranks.update(later.ranks)
        ranks = len(run.ranks) or None
        facts = run.log.facts(tuple(run.ranks.values()), ranks)
        for ln, parts in run.rows:
            _row(out, seen, run, ln, parts, ranks or (facts.ranks if facts else None), facts, source)
    if not out:
        raise NcclTestsFormatError("nccl-tests output: a result header without a result row (truncated?)")
    return out


def _row(
    out: list[BenchResult],
    seen: set[tuple],
    run: _Run,
    ln: str,
    parts: list[str],
    ranks: Optional[int],
    facts: Optional[NcclRunFacts],
    source: str,
) -> None:
    names = run.names or []
    if len(parts) < len(names):
        raise NcclTestsFormatError(
            f"nccl-tests output: row {ln.strip()[:60]!r} has {len(parts)} columns for "
            f"{len(names)} in the header (truncated output?)"
        )
    # the first occurrence of each column name is the out-of-place one
    first = {
        n: parts[_index(names, n)] for n in ("time", "cputime", "algbw", "busbw", "#wrong") if n in names
    }
    collective = run.collective or collective_of(source)
    once = (collective, ranks, tuple(parts))
    if once in seen:
        return  # the same run's table pasted twice (each node's copy of rank 0's output)
    seen.add(once)
    add(
        out,
        _result(
            collective=collective,
            ranks=ranks,
            size=integer(parts[0], "nccl-tests output: size"),
            dtype=parts[2][:20],
            redop=parts[3][:20],
            time_us=number(first.get("time", first.get("cputime")), "nccl-tests output: time"),
            algbw=number(first["algbw"], "nccl-tests output: algbw"),
            busbw=number(first["busbw"], "nccl-tests output: busbw"),
            wrong=_wrong(first["#wrong"]),
            source=source,
            facts=facts,
        ),
    )


def _index(names: list[str], name: str) -> int:
    if name in names:
        return names.index(name)
    return names.index("cputime") if name == "time" else len(names)


def _wrong(cell: Any) -> Optional[int]:
    if cell is None or (isinstance(cell, str) and cell.strip().upper() == "N/A"):
        return None
    return int(number(cell, "nccl-tests output: #wrong"))


def parse_json(data: Any, source: str = "") -> list[BenchResult]:
    """Results of an nccl-tests ``-J`` file (already decoded)."""
    if not is_json(data):
        raise NcclTestsFormatError("nccl-tests JSON: expected an object with 'nccl_version' and 'results'")
    args = data.get("args")
    program = args[0] if isinstance(args, list) and args and isinstance(args[0], str) else ""
    collective = collective_of(program) or collective_of(source)
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    devices = config.get("devices") if isinstance(config.get("devices"), list) else []
    ranks = None
    if devices and "nthreads" in config and "ngpus" in config:
        ranks = (
            integer(config["nthreads"], "nccl-tests JSON: nthreads")
            * integer(config["ngpus"], "nccl-tests JSON: ngpus")
            * len(devices)
        )
        if ranks >= 1 << 31:
            raise NcclTestsFormatError("nccl-tests JSON: more ranks than a run can have")
    facts = _json_facts(devices, ranks)
    out: list[BenchResult] = []
    for r in data["results"]:
        if not isinstance(r, dict) or "size" not in r:
            raise NcclTestsFormatError("nccl-tests JSON: a result without a size (truncated?)")
        oop = r.get("out_of_place")
        if oop is None:
            continue  # trace replay: in-place only
        if not isinstance(oop, dict):
            raise NcclTestsFormatError("nccl-tests JSON: out_of_place is not an object")
        add(
            out,
            _result(
                collective=collective,
                ranks=ranks or None,
                size=integer(r["size"], "nccl-tests JSON: size"),
                dtype=str(name_or_none(r.get("type"), "nccl-tests JSON: type") or "")[:20],
                redop=str(name_or_none(r.get("redop"), "nccl-tests JSON: redop") or "")[:20],
                time_us=number(oop.get("time", oop.get("cpu_time")), "nccl-tests JSON: time"),
                algbw=number(oop.get("alg_bw"), "nccl-tests JSON: alg_bw"),
                busbw=number(oop.get("bus_bw"), "nccl-tests JSON: bus_bw"),
                wrong=_wrong(oop.get("nwrong")),
                source=source,
                facts=facts,
            ),
        )
    if not out:
        raise NcclTestsFormatError("nccl-tests JSON: no out-of-place result")
    return out


def _json_facts(devices: list, ranks: Optional[int]) -> Optional[NcclRunFacts]:
    """The hosts of a ``-J`` file's processes (``config.devices``: one entry per process)."""
    hosts: dict[str, None] = {}
    for d in devices[:MAX_RANKS]:
        host = name_or_none(d.get("hostname"), "nccl-tests JSON: hostname") if isinstance(d, dict) else None
        if host:
            hosts.setdefault(host, None)
    if not hosts:
        return None
    return NcclRunFacts(ranks=ranks, nodes=len(hosts), hosts=tuple(hosts))


def _gdr(facts: Optional[NcclRunFacts]) -> Optional[bool]:
    """GPUDirect RDMA as NCCL's ``via NET/IB/...`` lines said: GDRDMA on any, or on none (None: no NET)."""
    net = [
        t
        for t in (facts.transports if facts else ())
        if t.kind == "NET" and not t.detail.startswith("Socket")
    ]
    return any("GDRDMA" in t.detail for t in net) if net else None


def _result(
    *,
    collective: Optional[str],
    ranks: Optional[int],
    size: int,
    dtype: str,
    redop: str,
    time_us: float,
    algbw: float,
    busbw: float,
    wrong: Optional[int],
    source: str,
    facts: Optional[NcclRunFacts] = None,
) -> BenchResult:
    params = ImportedParams(
        tool=Provider.NCCL_TESTS.value,
        test=f"{collective}_perf" if collective else "unknown collective",
        size_bytes=size,
        memory=MemoryKind.DEVICE,
        collective=collective,
        ranks=ranks,
        source_file=source or None,
        gpu_direct_rdma=_gdr(facts),
        nccl=facts,
        path_kind=PathKind.COLLECTIVE,
        mover=Mover.COLLECTIVE,
    )
    key = f"nccl_{collective or 'collective'}"
    what = (
        f"nccl-tests {collective or 'collective (name not in the output)'} over "
        f"{ranks if ranks else 'an unknown number of'} ranks, {dtype} {redop}, out-of-place"
    )
    metrics = ImportedMetrics(algbw_gbytes_per_s=algbw, busbw_gbytes_per_s=busbw, latency_us=time_us)
    if wrong:
        return BenchResult.error(
            key,
            f"nccl-tests counted {wrong} wrong elements at {size} bytes",
            description=what,
            params=params,
            metrics=metrics,
            provider=Provider.NCCL_TESTS.value,
            verified=False,
        )
    return BenchResult(
        key=key,
        status=Status.OK,
        description=what,
        params=params,
        unit="GB/s",
        samples=(busbw,),
        stats=SampleStats.of([busbw]),
        metrics=metrics,
        provider=Provider.NCCL_TESTS.value,
        verified=True if wrong == 0 else None,
        method=(
            "imported from nccl-tests: the bus bandwidth (algbw x the collective's factor) of the "
            "out-of-place run, averaged over its iterations"
        ),
    )
