"""perftest (linux-rdma/perftest) bandwidth output -> BenchResults. Pure.

Two forms, learnt from perftest's sources (src/perftest_parameters.c/.h, src/cuda_memory.c):

- plain text: a header block (`` RDMA_Write BW Test``, `` Number of qps   : 1``,
  `` PCIe relax order: ON``, `` TX depth        : 128``, ``Device         : mlx5_0``), CUDA lines
  printed before it when ``--use_cuda`` is given (``initializing CUDA``, ``allocated GPU buffer of a
  N address at 0x.. for type CUDA_MEM_DEVICE``, ``using DMA-BUF for GPU buffer ...`` with
  ``--use_cuda_dmabuf``), then the result table under `` #bytes  #iterations  BW peak[Gb/sec]
  BW average[Gb/sec]  MsgRate[Mpps]`` (``[MB/sec]`` without ``--report_gbits``; perftest's MB is
  2^20 bytes). ``-a`` prints one row per size.
- ``--out_json`` file: ``{"test_info": {"test": "RDMA_Write_BW_Test", "Number_of_qps": 1,
  "PCIe_relax_order": "ON", "TX_depth": 128, "Device": "mlx5_0", ...}, "results": {"MsgSize": 65536,
  "n_iterations": 5000, "BW_peak": .., "BW_average": .., "MsgRate": ..}}``. The JSON does not say
  the bandwidth unit nor the CUDA memory type or dma-buf, so the caller states the unit
  (``gbits``) and the memory kind comes from ``cuda_device`` (present -> device memory, path unknown).

The headline is BW average. RO is one access-flag bit, as gdrdiag records it for its own runs.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import add, integer, number
from gdrdiag.importers.common import text as name_or_none
from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.params import ImportedMetrics, ImportedParams, RunSettings
from gdrdiag.model.path import Mover
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import AccessFlags, MemoryKind, Provider, RegPath

MB_TO_GBIT = (1 << 20) * 8 / 1e9  # perftest's MB/sec is MiB/s (perftest_parameters.c, report_fmt MBS)

_TESTS = {"rdma_write": "write_bw", "rdma_read": "read_bw", "send": "send_bw"}
_ACCESS = {
    "write_bw": AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE,
    "read_bw": AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ,
    "send_bw": AccessFlags.LOCAL_WRITE,
}
_TITLE = re.compile(r"[ \t]*(RDMA_Write|RDMA_Read|Send)[ _]BW[ _]Test[ \t]*", re.I)
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9 .*_-]{0,39}")
# Header lines are short; a longer line is no header field, and only this much of any line is looked
# at, so the cost of a line is bounded whatever it holds (the old field pattern was quadratic).
MAX_LINE = 256
_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb/sec|MB/sec)\]\s+BW average\[(Gb/sec|MB/sec)\]")
_CUDA_TYPE = re.compile(r"for type (CUDA_MEM_\w+)")


class PerftestFormatError(UserInputError):
    """perftest output this importer cannot read (malformed or truncated)."""


def title_of(line: str) -> Optional[str]:
    """``write_bw``/``read_bw``/``send_bw`` when ``line`` is a perftest BW title (`` RDMA_Write BW Test``)."""
    m = _TITLE.fullmatch(line[:MAX_LINE].rstrip("\r"))
    return _TESTS[m.group(1).lower()] if m else None


def _fields(line: str) -> list[tuple[str, str]]:
    """The ``Key : value`` pairs of one header line (pairs are tab-separated); linear in the line."""
    if len(line) > MAX_LINE:
        return []
    out = []
    for piece in line.split("\t"):
        key, colon, value = piece.partition(":")
        key, value = key.strip(), value.strip()
        if colon and value and _KEY.fullmatch(key):
            out.append((key, value))
    return out


def _memory(text: str) -> tuple[MemoryKind, Optional[RegPath], str]:
    """(memory kind, registration path, words) from the CUDA lines perftest prints before its header."""
    if "initializing CUDA" not in text:
        return (
            MemoryKind.PAGEABLE,
            RegPath.MR,
            "host memory (perftest allocates with malloc; ibv_reg_mr pins it)",
        )
    kind = _CUDA_TYPE.search(text)
    name = kind.group(1) if kind else "CUDA_MEM_DEVICE"
    memory = {"CUDA_MEM_MANAGED": MemoryKind.MANAGED, "CUDA_MEM_MALLOC": MemoryKind.PAGEABLE}.get(
        name, MemoryKind.DEVICE
    )
    path = RegPath.DMABUF if "using DMA-BUF" in text else RegPath.MR
    return (
        memory,
        path,
        f"{name} via {'dma-buf' if path is RegPath.DMABUF else 'ibv_reg_mr (nvidia-peermem)'}",
    )


def _int(value: Any, what: str) -> int:
    if isinstance(value, str):
        value = value.strip().split("[")[0]  # "4096[B]"
    try:
        return integer(value, f"perftest output: {what}")
    except UserInputError as exc:
        raise PerftestFormatError(str(exc)) from None


def _gpu(text: str) -> Optional[int]:
    m = re.search(r"Picking (?:device No\.|GPU number) (\d{1,9})\b", text)
    return int(m.group(1)) if m else None


def parse_text(text: str, source: str = "") -> list[BenchResult]:
    """Results of one perftest BW run's plain-text output (every size row of ``-a``)."""
    lines = text.splitlines()
    test = next((t for ln in lines if (t := title_of(ln))), None)
    if test is None:
        raise PerftestFormatError("perftest text: no ' RDMA_Write/RDMA_Read/Send BW Test' header line")
    fields: dict[str, str] = {}
    header_at, unit = None, ""
    for i, ln in enumerate(lines):
        h = _HEADER.search(ln[:MAX_LINE])
        if h:
            header_at, unit = i, h.group(2)
            break
        for key, value in _fields(ln):
            fields.setdefault(key.lower(), value)
    if header_at is None:
        raise PerftestFormatError(
            "perftest text: no ' #bytes #iterations BW peak ... BW average' result header (truncated output?)"
        )
    rows = []
    for ln in lines[header_at + 1 :]:
        parts = ln.split()
        if not parts or set(ln.strip()) <= {"-"}:
            if rows:
                break
            continue
        if not (parts[0].isascii() and parts[0].isdigit()):
            break
        if len(parts) < 5:
            raise PerftestFormatError(
                f"perftest text: result row {ln.strip()[:60]!r} has {len(parts)} columns, "
                "expected 5 (truncated output?)"
            )
        add(rows, parts[:5])
    if not rows:
        raise PerftestFormatError("perftest text: result header without a result row (truncated output?)")
    memory, path, words = _memory(text)
    ro = fields.get("pcie relax order", "").upper()
    common = dict(
        test=test,
        qps=_int(fields.get("number of qps", "1"), "Number of qps"),
        tx_depth=_int(fields["tx depth"], "TX depth") if "tx depth" in fields else None,
        ro=None if ro not in ("ON", "OFF") else ro == "ON",
        memory=memory,
        reg_path=path,
        words=words,
        device=name_or_none(fields.get("device"), "perftest output: Device"),
        connection=name_or_none(fields.get("connection type"), "perftest output: Connection type"),
        mtu=_int(fields["mtu"], "Mtu") if "mtu" in fields else None,
        gpu=_gpu(text),
        source=source,
    )
    return [
        _result(
            size=_int(r[0], "#bytes"),
            iterations=_int(r[1], "#iterations"),
            peak=_float(r[2]),
            average=_float(r[3]),
            msg_rate_mpps=_float(r[4]),
            gbits=unit == "Gb/sec",
            **common,
        )
        for r in rows
    ]


def _float(value: Any) -> float:
    try:
        return number(value, "perftest output")
    except UserInputError as exc:
        raise PerftestFormatError(str(exc)) from None


def parse_json(data: Any, source: str = "", gbits: bool = False) -> list[BenchResult]:
    """Results of a perftest ``--out_json`` file (already decoded); ``gbits`` when run with --report_gbits."""
    if not isinstance(data, dict) or not isinstance(data.get("test_info"), dict) or "results" not in data:
        raise PerftestFormatError("perftest JSON: expected an object with 'test_info' and 'results'")
    info = data["test_info"]
    test_words = (name_or_none(info.get("test"), "perftest JSON: test") or "").lower()
    test = next((v for k, v in _TESTS.items() if test_words.startswith(k)), None)
    if test is None or not test_words.endswith("bw_test"):
        raise PerftestFormatError(
            f"perftest JSON: test {test_words[:40]!r} is not ib_write_bw/ib_read_bw/ib_send_bw"
        )
    results = data["results"] if isinstance(data["results"], list) else [data["results"]]
    cuda = info.get("cuda_device")
    memory = MemoryKind.DEVICE if cuda is not None else MemoryKind.PAGEABLE
    words = (
        "CUDA device memory (the JSON does not say dma-buf or peermem, nor the CUDA memory type)"
        if cuda is not None
        else "host memory (malloc, pinned by ibv_reg_mr)"
    )
    ro = (name_or_none(info.get("PCIe_relax_order"), "perftest JSON: PCIe_relax_order") or "").upper()
    out: list[BenchResult] = []
    for r in results:
        if not isinstance(r, dict) or "BW_average" not in r or "MsgSize" not in r:
            raise PerftestFormatError("perftest JSON: a result lacks MsgSize or BW_average (truncated?)")
        add(
            out,
            _result(
                test=test,
                size=_int(r["MsgSize"], "MsgSize"),
                iterations=_int(r.get("n_iterations", 0), "n_iterations"),
                peak=_float(r.get("BW_peak", r["BW_average"])),
                average=_float(r["BW_average"]),
                msg_rate_mpps=_float(r.get("MsgRate", 0.0)),
                gbits=gbits,
                qps=_int(info.get("Number_of_qps", 1), "Number_of_qps"),
                tx_depth=_int(info["TX_depth"], "TX_depth") if "TX_depth" in info else None,
                ro=None if ro not in ("ON", "OFF") else ro == "ON",
                memory=memory,
                reg_path=None if cuda is not None else RegPath.MR,
                words=words,
                device=name_or_none(info.get("Device"), "perftest JSON: Device"),
                connection=name_or_none(info.get("Connection_type"), "perftest JSON: Connection_type"),
                mtu=_int(info["Mtu"], "Mtu") if "Mtu" in info else None,
                gpu=_int(cuda, "cuda_device") if cuda is not None else None,
                source=source,
            ),
        )
    return out


def _result(
    *,
    test: str,
    size: int,
    iterations: int,
    peak: float,
    average: float,
    msg_rate_mpps: float,
    gbits: bool,
    qps: int,
    tx_depth: Optional[int],
    ro: Optional[bool],
    memory: MemoryKind,
    reg_path: Optional[RegPath],
    words: str,
    device: Optional[str],
    connection: Optional[str],
    mtu: Optional[int],
    gpu: Optional[int],
    source: str,
) -> BenchResult:
    scale = 1.0 if gbits else MB_TO_GBIT
    access = None if ro is None else (_ACCESS[test] | AccessFlags.RELAXED_ORDERING if ro else _ACCESS[test])
    params = ImportedParams(
        tool=Provider.PERFTEST.value,
        test=test,
        size_bytes=size,
        qps=qps,
        direction="write" if test == "write_bw" else None,
        memory=memory,
        access=access,
        reg_path=reg_path,
        gpu=gpu,
        tx_depth=tx_depth,
        device_name=device,
        connection=connection,
        mtu_bytes=mtu,
        source_file=source or None,
        # RDMA WRITE and SEND push this host's buffer to the far side; READ pulls the far side's into it
        path_kind=PathKind.NIC_DMA,
        mover=Mover.NIC_DMA,
        flow=Flow.FROM_REMOTE if test == "read_bw" else Flow.TO_REMOTE,
    )
    value = round(average * scale, 4)
    return BenchResult(
        key=f"perftest_{test}",
        status=Status.OK,
        description=f"perftest ib_{test}: {words}",
        params=params,
        unit="Gb/s",
        samples=(value,),
        stats=SampleStats.of([value]),
        metrics=ImportedMetrics(
            msgs_per_s=msg_rate_mpps * 1e6, peak_value=round(peak * scale, 4), iterations=float(iterations)
        ),
        settings=RunSettings(iterations=iterations),
        provider=Provider.PERFTEST.value,
        verified=None,
        method=(
            "imported from perftest output: BW average over the run"
            + ("" if gbits else ", converted from perftest MB/sec (2^20 B/s) to Gb/s")
        ),
    )
