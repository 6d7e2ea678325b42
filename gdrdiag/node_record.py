"""Node records: one versioned, self-describing JSON record per node, for fleet analysis.

A record is one JSON object on one line::

    {"record": "gdrdiag-node-record", "record_version": 1, "host": ..., "sku": ..., "exit_code": ...,
     "metrics": {...}, "missing": {...}, "facts": {...}, "findings": [...], "pairs": [...],
     "report_schema_version": 1, "report_chars": N, "report": {...the whole Report...}}

The *head* (everything before ``report``) is what ``gdrdiag fleet`` needs; it is computed from the
Report by :mod:`gdrdiag.fleet_metrics` when the record is written. ``report`` is always the last
key and ``report_chars`` is the length of its JSON text, so a reader can decode the head without
decoding a 100-KiB Report per node (10,000 nodes in seconds) and still detect a torn record: a
truncated record fails the length check. The full Report stays in the record for drill-down
(``jq .report node.json > r.json; gdrdiag diagnose r.json``).

Writing is safe when many nodes write into one shared directory at once:

- :func:`write_record_file`: one file per node, written to a temporary file in the same
  directory, flushed, fsync'ed and renamed into place (``os.link`` when overwriting is refused,
  so two writers of one name cannot both win). A reader never sees a partial file.
- :func:`append_record_line`: one ``write()`` on an ``O_APPEND`` descriptor per record. On a
  local file system concurrent appends do not interleave; on NFS ``O_APPEND`` is not atomic, so
  shared network directories should use one file per node (docs/fleet.md).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from gdrdiag.filemode import NEW_FILE, new_file_mode
from gdrdiag.model.fleet import (
    RECORD_KIND,
    RECORD_VERSION,
    NodeFinding,
    NodePair,
    NodeRecordHead,
    Skipped,
)
from gdrdiag.model.serde import SchemaError, to_jsonable

__all__ = ["NodeFinding", "NodePair", "NodeRecordHead", "Skipped", "RECORD_KIND", "RECORD_VERSION"]
SUPPORTED_RECORD_VERSIONS = (1, 2)  # 1 is read as a record without version 2's facts (FACTS_SINCE)
MAX_RECORD_BYTES = 64 * 1024 * 1024  # a Report may be up to 64 MiB (model.report.MAX_REPORT_BYTES)
_REPORT_MARK = ',"report":'
# A node name goes into file names ({host}) and into every output: a plain host name only.
# \Z, not $: "$" also matches before a trailing newline ("n1\n" would pass and name a file "n1\n.json").
HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}\Z")
# Bounds per record, so one hostile record cannot make a group's work quadratic:
# fleet scores the known metrics only, and a record with more names than any real one is refused.
MAX_NAMES = 512  # metrics, missing, facts, sku_parts entries each
MAX_ITEMS = 4096  # findings, pairs


def git_revision(root: Path) -> Optional[str]:
    """The commit ``root``'s git checkout is at (12 hex digits), read from ``.git`` without running git.

    Follows the layout git documents (gitrepository-layout(5)): ``.git`` is a folder or a
    ``gitdir: PATH`` file (worktrees, submodules); ``HEAD`` is a commit or ``ref: refs/...``; the
    ref is a loose file or a line of ``packed-refs`` (in the common dir for a worktree). Any
    surprise is None: a build from an sdist or wheel has no revision, and that is not an error.
    """
    try:
        git = root / ".git"
        if git.is_file():
            text = git.read_text(encoding="utf-8", errors="replace")[:4096].strip()
            if not text.startswith("gitdir:"):
                return None
            git = (root / text[len("gitdir:") :].strip()).resolve()
        if not git.is_dir():
            return None
        head = (git / "HEAD").read_text(encoding="utf-8", errors="replace")[:4096].strip()
        common = git
        if (git / "commondir").is_file():
            common = (git / (git / "commondir").read_text(encoding="utf-8").strip()).resolve()
        if head.startswith("ref:"):
            ref = head[4:].strip()
            if ".." in ref or not ref.startswith("refs/"):
                return None
            sha = None
            for base in (git, common):
                loose = base / ref
                if loose.is_file():
                    sha = loose.read_text(encoding="utf-8", errors="replace")[:200].strip()
                    break
            if sha is None:
                packed = common / "packed-refs"
                if packed.is_file() and packed.stat().st_size < (64 << 20):
                    for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
                        parts = line.split(" ", 1)
                        if len(parts) == 2 and parts[1].strip() == ref:
                            sha = parts[0]
                            break
        else:
            sha = head
    except (OSError, ValueError):
        return None
    if sha is None or not re.fullmatch(r"[0-9a-f]{40}([0-9a-f]{24})?", sha):
        return None
    return sha[:12]


_TOOL_VERSION: list[str] = []


def tool_version() -> str:
    """The build: the release plus, in a git checkout, ``+g`` and its revision (PEP 440 local version).

    Two builds of one release then write different tool versions, so ``fleet`` can say which
    nodes ran which build. Read once, when the first record is written, not at import.
    """
    if not _TOOL_VERSION:
        from gdrdiag import __version__

        rev = git_revision(Path(__file__).resolve().parents[1])
        _TOOL_VERSION.append(f"{__version__}+g{rev}" if rev else __version__)
    return _TOOL_VERSION[0]


def build_head(report: Any, host: str, exit_code: int, report_chars: int) -> NodeRecordHead:
    """The head of a node record for ``report`` (a ``model.Report``) taken on ``host``."""
    from dataclasses import asdict

    from gdrdiag.diagnose import diagnose_machine
    from gdrdiag.fleet_metrics import node_facts, node_metrics, node_pairs, node_sku

    machine_keys = (
        {(f.code, f.subject) for f in diagnose_machine(report.machine)}
        if report.machine is not None
        else set()
    )
    metrics, missing = node_metrics(report)
    sku = node_sku(report)
    return NodeRecordHead(
        host=host,
        sku=sku.key,
        exit_code=exit_code,
        created_utc=report.created_utc,
        tool_version=tool_version(),
        sku_parts=asdict(sku),
        metrics=metrics,
        missing=missing,
        facts=node_facts(report),
        findings=tuple(
            NodeFinding(
                code=f.code,
                severity=f.severity.value,
                title=f.title,
                subject=f.subject,
                origin="machine" if (f.code, f.subject) in machine_keys else "results",
                explains=f.explains,
                basis=f.basis,
            )
            for f in report.findings
        ),
        pairs=tuple(NodePair(peer=p.peer, metric=p.metric, value=p.value) for p in node_pairs(report)),
        report_schema_version=report.schema_version,
        report_chars=report_chars,
        note="; ".join(report.notes)[:500],
    )


def record_line(report: Any, host: str, exit_code: int) -> str:
    """One node record as one line of JSON (no trailing newline), ``report`` last."""
    report_json = report.to_json(indent=None)
    head = build_head(report, host, exit_code, len(report_json))
    return head_line(head, report_json)


def head_line(head: NodeRecordHead, report_json: str) -> str:
    """Join a head and the Report's one-line JSON into a record line (``report_chars`` must match)."""
    head_json = json.dumps(to_jsonable(head), separators=(",", ":"), allow_nan=False)
    return head_json[:-1] + _REPORT_MARK + report_json + "}"


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------


def write_record_file(path: Path, line: str, force: bool = False) -> None:
    """Write one record to ``path`` atomically (temp file + fsync + rename); FileExistsError unless force."""
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode())
        if force:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails with FileExistsError if another writer got there first
            os.unlink(tmp)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def append_record_line(path: Path, line: str) -> None:
    """Append one record (plus newline) with a single write on an O_APPEND descriptor."""
    data = (line + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, NEW_FILE)  # the umask applies
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short write: {written} of {len(data)} bytes (disk full?)")
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------


def parse_head(text: str) -> NodeRecordHead:
    """Decode and validate the head of one record; SchemaError (with a one-line reason) if it is not one.

    Fast path: the text before ``,"report":`` is decoded as the head and the rest is checked by
    length only (``report_chars``). Records not laid out that way are decoded in full (then a
    successful decode is the check).
    """
    # LF, CRLF or CR line ends, and a UTF-8 byte order mark some editors add, are not the record
    text = text.lstrip("\ufeff").rstrip("\r\n")
    if not text.startswith("{") or not text.endswith("}"):
        raise SchemaError("not a JSON object (truncated record?)")
    at = text.find(_REPORT_MARK)
    if at > 0:
        return _parse(text[:at], len(text) - at - len(_REPORT_MARK) - 1)
    return _parse(text, None)


HEAD_CHUNK = 16 << 10  # a head is a few KiB: read this much first ...
HEAD_READ = 1 << 20  # ... and up to this much looking for ',"report":', else read the record in full


def parse_head_file(path: Path, size: int) -> NodeRecordHead:
    """:func:`parse_head` for a one-record file, reading only the head and the last bytes.

    The length of the report is taken from the file size (records are ASCII JSON: ``json.dumps``
    escapes everything else), so 10,000 records of ~100 KiB cost ~10,000 small reads, not 1 GB.
    """
    mark = _REPORT_MARK.encode()
    with open(path, "rb") as f:
        first = f.read(HEAD_CHUNK)
        at = first.find(mark)
        while at < 0 and len(first) < min(size, HEAD_READ):
            more = f.read(HEAD_CHUNK)
            if not more:  # the file shrank under us
                break
            first += more
            at = first.find(mark, max(0, len(first) - len(more) - len(mark)))
        if at <= 0 or len(first) >= size:  # small, or not laid out head-first: decode it all
            rest = f.read(max(0, MAX_RECORD_BYTES - len(first))) if len(first) < size else b""
            return parse_head((first + rest).decode("utf-8", errors="replace"))
        f.seek(max(0, size - 4))
        tail = f.read()
    body = tail.rstrip(b"\r\n")  # LF, CRLF or CR after the record
    end = size - (len(tail) - len(body))
    start = 3 if first.startswith(b"\xef\xbb\xbf") else 0  # a UTF-8 byte order mark
    if not first.startswith(b"{", start) or not body.endswith(b"}"):
        raise SchemaError("not a JSON object (truncated record?)")
    return _parse(first[start:at].decode("utf-8", errors="replace"), end - at - len(_REPORT_MARK) - 1)


def _parse(text: str, report_len: Optional[int]) -> NodeRecordHead:
    """Decode a whole record (``report_len`` None) or a head cut before ``,"report":``."""
    data: Any
    try:
        data = json.loads(text + "}" if report_len is not None else text, parse_constant=_reject_constant)
    except RecursionError:
        raise SchemaError("JSON nested too deeply") from None
    except ValueError as exc:
        raise SchemaError(f"not valid JSON: {str(exc)[:120]}") from None
    if not isinstance(data, dict):
        raise SchemaError("not a JSON object")
    if data.get("record") != RECORD_KIND:
        # A missing key is said in words: formatting it printed ``record = 'None'``.
        found = data.get("record")
        kind = "no record field" if found is None else f"record = {str(found)[:60]!r}"
        raise SchemaError(f"not a gdrdiag node record ({kind})")
    version = data.get("record_version")
    if version not in SUPPORTED_RECORD_VERSIONS:
        if version is None:
            raise SchemaError("no record_version: not a record this gdrdiag reads")
        raise SchemaError(f"record_version {str(version)[:20]} is not one this gdrdiag reads")
    if report_len is None:
        report = data.pop("report", None)
        if not isinstance(report, dict):
            raise SchemaError("no report in the record")
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(data):
        raise SchemaError("text with a lone surrogate (not valid Unicode)")
    head = _head_from(data)
    if report_len is not None and head.report_chars != report_len:
        raise SchemaError(f"torn record: report is {report_len} characters, head says {head.report_chars}")
    if not HOST_RE.match(head.host):
        raise SchemaError(f"host {head.host[:40]!r} is not a plain host name")
    return head


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # \ud800-\udfff escaped: pairs or lone halves


def _has_lone_surrogate(data: Any) -> bool:
    """True when any string in the decoded head cannot be written as UTF-8 (a lone surrogate)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _head_from(data: dict) -> NodeRecordHead:
    """Build a head from decoded JSON with strict type checks.

    Equivalent to ``serde.from_jsonable(NodeRecordHead, data)`` for this flat shape, and about ten
    times faster (fleet decodes 10,000 heads).
    """
    kwargs: dict[str, Any] = {}
    for name, kind in _HEAD_FIELDS.items():
        if name not in data:
            if name in _REQUIRED:
                raise SchemaError(f"$: missing field {name!r}")
            continue
        value = data[name]
        if kind is str:
            ok = isinstance(value, str)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63
        elif kind == "str_dict":
            ok = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            if ok and len(value) > MAX_NAMES:
                raise SchemaError(f"$.{name}: {len(value)} entries (more than {MAX_NAMES})")
        elif kind == "float_dict":
            if isinstance(value, dict) and len(value) > MAX_NAMES:
                raise SchemaError(f"$.{name}: {len(value)} entries (more than {MAX_NAMES})")
            ok = isinstance(value, dict) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e300
                for v in value.values()
            )
            value = {k: float(v) for k, v in value.items()} if ok else value
        else:
            value, ok = _items(kind, value)
        if not ok:
            raise SchemaError(f"$.{name}: wrong type ({type(value).__name__})")
        kwargs[name] = value
    return NodeRecordHead(**kwargs)


_FINDING_KEYS = frozenset({"code", "severity", "title", "subject", "origin", "explains", "basis"})
_FINDINGS: dict[tuple, NodeFinding] = {}  # one object per distinct finding: 10,000 nodes share a few hundred


def _findings(value: list) -> tuple[Any, bool]:
    """The fast path of :func:`_items` for findings: same checks, and equal findings shared."""
    out = []
    for item in value:
        if type(item) is not dict or not _FINDING_KEYS.issuperset(item):
            return value, False
        g = item.get
        key = (g("code"), g("severity"), g("title"), g("subject"), g("origin"), g("explains"), g("basis"))
        f = _FINDINGS.get(key)
        if f is None:
            code, severity, title, subject, origin, explains, basis = key
            if type(code) is not str or type(severity) is not str or type(title) is not str:
                return value, False
            if any(v is not None and type(v) is not str for v in (subject, origin, basis)):
                return value, False
            if explains is not None and (
                isinstance(explains, bool) or not isinstance(explains, (int, float)) or abs(explains) > 1e300
            ):
                return value, False
            f = NodeFinding(
                code=code,
                severity=severity,
                title=title,
                subject="" if subject is None else subject,
                origin="machine" if origin is None else origin,
                explains=None if explains is None else float(explains),
                basis=basis,
            )
            if len(_FINDINGS) < 100_000:
                _FINDINGS[key] = f
        out.append(f)
    return tuple(out), True


def _items(cls: type, value: Any) -> tuple[Any, bool]:
    """A list of flat objects (findings, pairs) -> tuple of ``cls``, checking every field's type."""
    if not isinstance(value, list):
        return value, False
    if len(value) > MAX_ITEMS:
        raise SchemaError(f"{len(value)} findings or pairs (more than {MAX_ITEMS})")
    if cls is NodeFinding:
        return _findings(value)
    types = _ITEM_TYPES[cls]
    required = _ITEM_REQUIRED[cls]
    out = []
    for item in value:
        if type(item) is not dict or not required.issubset(item):
            return value, False
        for key, v in list(item.items()):  # only the keys present: absent optional ones default
            kind = types.get(key)
            if kind is None:
                return value, False
            if v is None and key in _ITEM_OPTIONAL:
                del item[key]  # an explicit null: the default
            elif kind is float:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or abs(v) > 1e300:
                    return value, False
            elif type(v) is not kind:
                return value, False
        out.append(cls(**item))
    return tuple(out), True


_ITEM_TYPES: dict[type, dict[str, type]] = {
    NodeFinding: {
        "code": str,
        "severity": str,
        "title": str,
        "subject": str,
        "origin": str,
        "explains": float,
        "basis": str,
    },
    NodePair: {"peer": str, "metric": str, "value": float},
}
_ITEM_OPTIONAL = frozenset({"subject", "origin", "explains", "basis"})
_ITEM_REQUIRED = {cls: frozenset(types) - _ITEM_OPTIONAL for cls, types in _ITEM_TYPES.items()}
_REQUIRED = ("host", "sku", "exit_code")
_HEAD_FIELDS: dict[str, Any] = {
    "host": str,
    "sku": str,
    "exit_code": int,
    "record": str,
    "record_version": int,
    "created_utc": str,
    "tool_version": str,
    "sku_parts": "str_dict",
    "metrics": "float_dict",
    "missing": "str_dict",
    "facts": "str_dict",
    "findings": NodeFinding,
    "pairs": NodePair,
    "report_schema_version": int,
    "report_chars": int,
    "note": str,
}


def _reject_constant(name: str) -> Any:
    raise SchemaError(f"JSON constant {name} is not allowed")


# --------------------------------------------------------------------------------------------
# loading many records (fleet's input): bounded, never raises on a bad record
# --------------------------------------------------------------------------------------------


@dataclass
class LoadResult:
    """Records read from a directory or a JSONL file, plus what was skipped."""

    records: list[NodeRecordHead] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def _read_limited_lines(path: Path) -> Iterator[tuple[int, Optional[str]]]:
    """(line number, text or None when the line is too long) for each line, in bounded memory."""
    with open(path, "rb") as f:
        number = 0
        while True:
            raw = f.readline(MAX_RECORD_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the huge line
                    raw = f.readline(1 << 20)
                yield number, None
                continue
            yield number, raw.decode("utf-8", errors="replace")


def load_records(path: Path) -> LoadResult:
    """Read node records from a directory (``*.json``, ``*.jsonl``) or one file; never raises on bad records.

    Hidden files (temporary files of writers still at work) are ignored. For a host seen more
    than once the newest record (``created_utc``) is kept and the others are counted as skipped.
    """
    out = LoadResult()
    if path.is_dir():
        files = sorted(
            p for p in path.iterdir() if not p.name.startswith(".") and p.suffix in (".json", ".jsonl")
        )
    else:
        files = [path]
    for file in files:
        try:
            if not file.is_file():  # a folder, FIFO or device named *.json: never opened
                out.skipped.append(Skipped(file.name, "not a regular file"))
            elif file.suffix == ".jsonl":
                _add_lines(out, file)
            else:
                size = file.stat().st_size
                if size > MAX_RECORD_BYTES:
                    out.skipped.append(Skipped(file.name, f"larger than {MAX_RECORD_BYTES} bytes"))
                else:
                    _add_file(out, file, size)
        except OSError as exc:
            out.skipped.append(Skipped(file.name, f"cannot read ({exc.strerror or exc})"))
    _dedupe(out)
    return out


def _add_lines(out: LoadResult, file: Path) -> None:
    """Every record of a JSONL file, whatever its line ends: LF, CRLF, or CR alone.

    A bare CR cannot be inside a record (JSON escapes it in strings, and the writer puts no
    whitespace between tokens), so CR is a line end too. ``FILE:N`` counts records' lines.
    """
    number = 0
    for _, text in _read_limited_lines(file):
        if text is None:
            number += 1
            out.skipped.append(Skipped(f"{file.name}:{number}", f"larger than {MAX_RECORD_BYTES} bytes"))
            continue
        body = text.rstrip("\r\n")
        for part in body.split("\r") if "\r" in body else (body,):
            number += 1
            if part.strip():
                _add(out, f"{file.name}:{number}", part)


def _add(out: LoadResult, where: str, text: str) -> None:
    try:
        out.records.append(parse_head(text))
    except SchemaError as exc:
        out.skipped.append(Skipped(where, str(exc).splitlines()[0][:200] if str(exc) else "bad record"))
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:  # never a crash on hostile input
        out.skipped.append(Skipped(where, f"unreadable record ({type(exc).__name__})"))


def _add_file(out: LoadResult, file: Path, size: int) -> None:
    try:
        out.records.append(parse_head_file(file, size))
    except SchemaError as exc:
        out.skipped.append(Skipped(file.name, str(exc).splitlines()[0][:200] if str(exc) else "bad record"))
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:
        out.skipped.append(Skipped(file.name, f"unreadable record ({type(exc).__name__})"))


def created_at(text: str) -> float:
    """``created_utc`` as seconds since the epoch; -inf when it is not an ISO 8601 time.

    Compared as a time, not as text: "2026-1-9" > "2026-01-10" as text, and a record whose
    created_utc is "9999" or "zzz" must not replace another node's newest record.
    """
    import datetime

    t = text.strip()
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    try:
        when = datetime.datetime.fromisoformat(t)
    except ValueError:
        return float("-inf")
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def _dedupe(out: LoadResult) -> None:
    """Keep the newest record per host (by parsed created_utc; on a tie, the first one read)."""
    newest: dict[str, tuple[float, NodeRecordHead]] = {}
    for r in out.records:
        when = created_at(r.created_utc)
        if r.host not in newest or when > newest[r.host][0]:
            if r.host in newest:
                out.skipped.append(Skipped(r.host, "older duplicate record for this host"))
            newest[r.host] = (when, r)
        else:
            out.skipped.append(Skipped(r.host, "older duplicate record for this host"))
    out.records = [r for _, r in newest.values()]
