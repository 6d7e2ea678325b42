"""NCCL's own INFO log (``NCCL_DEBUG=INFO``) -> :class:`gdrdiag.model.params.NcclRunFacts`. Pure.

Used by :mod:`.nccl_tests` for the INFO lines interleaved with nccl-tests' text, and on its own
(:func:`parse_log`; :func:`parse_text` for ``gdrdiag import``) for a pasted log: a training job's
log without an nccl-tests table becomes one result that holds the facts and no bandwidth. Every
line NCCL prints at INFO level reads ``host:pid:tid [cudaDev] NCCL INFO <message>`` (NVIDIA/nccl
``src/debug.cc``); the messages kept, with the source that prints them (NVIDIA/nccl, 2.18 to 2.28):

- ``NCCL version 2.28.3+cuda13.0`` (``src/init.cc``, showVersion);
- ``comm 0x.. rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0`` (``src/init.cc``,
  2.19 and later) and ``ncclCommInitRank comm 0x.. rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000
  commId 0x.. - Init COMPLETE`` (older: ``cudaDev 0 busId 18000``);
- ``Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read`` (``src/transport.cc``; older ``Channel 00 :
  0[18000] -> 1[2a000] via P2P/IPC``; the network adds ``[send]``/``[receive]``): the transport
  of each connection: ``P2P/...`` (``src/transport/p2p.cc``: CUMEM, IPC, direct pointer, /read),
  ``SHM/direct/direct`` (``src/transport/shm.cc``), ``NET/IB/0/GDRDMA`` or ``NET/Socket/0``
  (``src/transport/net.cc``), ``CollNet/...``, ``NVLS``;
- ``NCCL_P2P_DISABLE set by environment to 1.`` (``src/misc/param.cc``: every NCCL_* variable the
  run set, NCCL_P2P_LEVEL, NCCL_SHM_DISABLE, NCCL_PROTO, NCCL_ALGO, NCCL_MAX_NCHANNELS, ...);
- ``2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per
  peer`` (``src/init.cc``; older versions lack the collnet/nvls parts).

Bounds: lines longer than :data:`MAX_LINE` are skipped (topology dumps), names are cut to
``common.MAX_TEXT``, at most :data:`MAX_RANKS` ranks, :data:`MAX_KINDS` distinct transports and
settings are kept; the rest is counted, never stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import MAX_TEXT
from gdrdiag.model.imported_path import PathKind
from gdrdiag.model.params import ImportedParams, NcclRankDevice, NcclRunFacts, NcclSetting, NcclTransport
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import Provider

MAX_LINE = 2048
MAX_RANKS = 4096
MAX_KINDS = 64
LOG_KEY = "nccl_log"
LOG_TEST = "NCCL INFO log"
_MARK = "NCCL INFO "
_PREFIX = re.compile(r"\s*([A-Za-z0-9_.\-]{1,100}):\d{1,10}:\d{1,10}\s+\[\d{1,4}\]\s*$")
_VERSION = re.compile(r"NCCL version (\S{1,40})")
_COMM = re.compile(
    r"comm 0x[0-9a-fA-F]{1,16} rank (\d{1,6}) nRanks (\d{1,6}) nNodes (\d{1,6}) localRanks \d{1,6} "
    r"localRank \d{1,6}"
)
_INIT = re.compile(
    r"(?:rank (\d{1,6}) nranks (\d{1,6}) )?cudaDev (\d{1,4})(?: nvmlDev \d{1,4})? busId ([0-9a-fA-F]{1,16})"
)
_CHANNEL = re.compile(
    r"Channel \d{1,4}(?:/\d{1,4})? : (\d{1,6})\[[0-9a-fA-F]{1,16}\] -> (\d{1,6})\[[0-9a-fA-F]{1,16}\]"
    r"(?: \[(?:send|receive)\])? via ([A-Za-z0-9]{1,16})(?:/(\S.{0,80}))?$"
)
_ENV = re.compile(r"(NCCL_[A-Z0-9_]{1,60}) set by environment to (\S{0,80}?)\.?\s*$")
_CHANNELS = re.compile(r"(\d{1,4}) coll channels,.*?(\d{1,4}) p2p channels,")


def is_info(line: str) -> bool:
    """True for one of NCCL's INFO lines."""
    return _MARK in line[:MAX_LINE]


def looks_like(lines: list[str]) -> bool:
    """True when some line is NCCL's own ``host:pid:tid [dev] NCCL INFO ...`` (a pasted INFO log)."""
    for line in lines:
        at = line.find(_MARK, 0, MAX_LINE)
        if at >= 0 and _PREFIX.fullmatch(line[:at]):
            return True
    return False


@dataclass
class LogReader:
    """Collects facts line by line (nccl-tests' importer feeds it the INFO lines it meets)."""

    version: Optional[str] = None
    ranks: Optional[int] = None
    nodes: Optional[int] = None
    hosts: dict[str, None] = field(default_factory=dict)
    devices: dict[int, NcclRankDevice] = field(default_factory=dict)
    transports: dict[tuple[str, str], int] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    coll_channels: Optional[int] = None
    p2p_channels: Optional[int] = None
    info_lines: int = 0

    def feed(self, line: str) -> bool:
        """Read one line; True when it was an NCCL INFO line."""
        if len(line) > MAX_LINE:
            return False
        at = line.find(_MARK)
        if at < 0:
            return False
        self.info_lines += 1
        prefix = _PREFIX.fullmatch(line[:at])
        host = prefix.group(1)[:MAX_TEXT] if prefix else None
        if host is not None and len(self.hosts) < MAX_RANKS:
            self.hosts.setdefault(host, None)
        self._message(line[at + len(_MARK) :].strip(), host)
        return True

    def _message(self, msg: str, host: Optional[str]) -> None:
        if m := _CHANNEL.match(msg):
            key = (m.group(3)[:16], (m.group(4) or "").strip()[:MAX_TEXT])
            if key in self.transports or len(self.transports) < MAX_KINDS:
                self.transports[key] = self.transports.get(key, 0) + 1
        elif m := _ENV.match(msg):
            if m.group(1) in self.settings or len(self.settings) < MAX_KINDS:
                self.settings[m.group(1)] = m.group(2)[:MAX_TEXT]
        elif m := _VERSION.match(msg):
            self.version = m.group(1)
        elif m := _COMM.search(msg):
            rank, self.ranks, self.nodes = int(m.group(1)), int(m.group(2)), int(m.group(3))
            self._device(rank, host=host)
        elif m := _INIT.search(msg):
            if m.group(1) is not None:
                self.ranks = int(m.group(2))
                self._device(int(m.group(1)), host=host, cuda_dev=int(m.group(3)), bus_id=m.group(4))
        elif m := _CHANNELS.match(msg):
            self.coll_channels, self.p2p_channels = int(m.group(1)), int(m.group(2))

    def _device(self, rank: int, **known: object) -> None:
        old = self.devices.get(rank)
        if old is None and len(self.devices) >= MAX_RANKS:
            return
        base = old or NcclRankDevice(rank)
        self.devices[rank] = NcclRankDevice(
            rank,
            host=(known.get("host") or base.host),  # type: ignore[arg-type]
            cuda_dev=known.get("cuda_dev", base.cuda_dev),  # type: ignore[arg-type]
            bus_id=(known.get("bus_id") or base.bus_id),  # type: ignore[arg-type]
        )

    def merge(self, other: "LogReader") -> None:
        """Add another rank's log of the same run (its channels, devices and hosts; first values kept)."""
        self.info_lines += other.info_lines
        self.version = self.version or other.version
        self.ranks = self.ranks or other.ranks
        self.nodes = self.nodes if self.nodes is not None else other.nodes
        for h in other.hosts:
            if len(self.hosts) < MAX_RANKS:
                self.hosts.setdefault(h, None)
        for r, d in other.devices.items():
            if r not in self.devices and len(self.devices) < MAX_RANKS:
                self.devices[r] = d
        for k, n in other.transports.items():
            if k in self.transports or len(self.transports) < MAX_KINDS:
                self.transports[k] = self.transports.get(k, 0) + n
        for k, v in other.settings.items():
            if len(self.settings) < MAX_KINDS:
                self.settings.setdefault(k, v)
        self.coll_channels = self.coll_channels if self.coll_channels is not None else other.coll_channels
        self.p2p_channels = self.p2p_channels if self.p2p_channels is not None else other.p2p_channels

    def facts(
        self, rank_lines: tuple[NcclRankDevice, ...] = (), ranks: Optional[int] = None
    ) -> Optional[NcclRunFacts]:
        """The facts read so far, with nccl-tests' rank lines (which name host and device of every rank).

        None when neither the log nor the rank lines said anything.
        """
        devices = dict(self.devices)
        for d in rank_lines:
            old = devices.get(d.rank)
            devices[d.rank] = NcclRankDevice(
                d.rank,
                host=d.host or (old.host if old else None),
                cuda_dev=d.cuda_dev if d.cuda_dev is not None else (old.cuda_dev if old else None),
                bus_id=(old.bus_id if old and old.bus_id else d.bus_id),
            )
        hosts = dict(self.hosts)
        for d in devices.values():
            if d.host and len(hosts) < MAX_RANKS:
                hosts.setdefault(d.host, None)
        if not self.info_lines and not devices and not hosts:
            return None
        return NcclRunFacts(
            version=self.version,
            ranks=ranks or self.ranks or (len(devices) or None),
            # the hosts named by the lines, before NCCL's nNodes: with P2P and SHM both off NCCL counts
            # each rank of one host as a node of its own (nNodes 2 on a 2-GPU host, tests/real)
            nodes=len(hosts) if hosts else self.nodes,
            hosts=tuple(hosts),
            devices=tuple(devices[r] for r in sorted(devices)),
            transports=tuple(NcclTransport(k, d, n) for (k, d), n in self.transports.items()),
            settings=tuple(NcclSetting(k, v) for k, v in self.settings.items()),
            coll_channels=self.coll_channels,
            p2p_channels=self.p2p_channels,
            debug_info=self.info_lines > 0,
        )


def parse_log(text: str) -> Optional[NcclRunFacts]:
    """The facts of a pasted NCCL INFO log (None when it holds no NCCL INFO line)."""
    reader = LogReader()
    for line in text.splitlines():
        reader.feed(line.rstrip("\r"))
    return reader.facts() if reader.info_lines else None


class NcclLogFormatError(UserInputError):
    """An NCCL INFO log this importer cannot read."""


def parse_text(text: str, source: str = "") -> list[BenchResult]:
    """A pasted NCCL INFO log as one result: the run's facts (``params.nccl``), no bandwidth.

    The result is OK with no samples: nothing was measured, so the path model never judges it as a
    number (it says why: :func:`gdrdiag.pathmodel.rows.path_of`); the facts alone are diagnosed
    (:mod:`gdrdiag.diagnose.causes_nccl`).
    """
    facts = parse_log(text)
    if facts is None:
        raise NcclLogFormatError(f"NCCL INFO log: no INFO line of at most {MAX_LINE} characters")
    where = (
        f"{facts.ranks or 'an unknown number of'} ranks on {facts.nodes or 'an unknown number of'} node(s)"
    )
    return [
        BenchResult(
            key=LOG_KEY,
            status=Status.OK,
            description=f"NCCL's INFO log{f' (NCCL {facts.version})' if facts.version else ''}: {where}; "
            "facts only, no bandwidth",
            params=ImportedParams(
                tool=Provider.NCCL.value,
                test=LOG_TEST,
                ranks=facts.ranks,
                source_file=source or None,
                nccl=facts,
                path_kind=PathKind.FACTS,
            ),
            provider=Provider.NCCL.value,
            method="imported from NCCL's INFO log (NCCL_DEBUG=INFO): version, ranks and hosts, each "
            "channel's transport, the NCCL_* settings; nothing measured",
        )
    ]
