"""In-repo fuzzers for the readers of input gdrdiag did not write itself.

Each mutates a seed corpus (the tool outputs in tests/fixtures/imported/, the saved Reports, node
records written by gdrdiag; each importer on its own seeds, text- and JSON-tree-level; node
record files and JSONL folders; random frames on the two-machine wire) with byte- and value-level
damage, then checks the reader's contract:
it reads the input or refuses it with its one-line error (``UserInputError`` / ``SchemaError``),
never another exception; whatever it reads diagnoses without a rule error, and a Report made from
it writes JSON that reads back equal. Bounded: a fixed number of examples per reader, derandomized
in CI (``derandomize=True``) so a run costs the same every time; set ``GDRDIAG_FUZZ_EXAMPLES`` to
fuzz longer locally.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdrdiag.bench import exchange
from gdrdiag.diagnose import diagnose
from gdrdiag.errors import UserInputError
from gdrdiag.importers import (
    FORMATS,
    bandwidth_test,
    detect,
    import_text,
    nccl_log,
    nccl_tests,
    nvbandwidth,
    p2p_test,
    perftest,
    ucx_perftest,
)
from gdrdiag.model.report import Report
from gdrdiag.model.serde import SchemaError
from gdrdiag.node_record import load_records, parse_head, parse_head_file, record_line

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
IMPORT_SEEDS = sorted(
    p.read_text(errors="replace") for p in (ROOT / "imported").iterdir() if p.suffix in (".txt", ".json")
)
REPORT_SEEDS = sorted(p.read_text() for p in (ROOT / "reports").glob("*.json"))
EXAMPLES = int(os.environ.get("GDRDIAG_FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("GDRDIAG_FUZZ_EXAMPLES"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Replacement tokens that broke readers before (a security review's hostile inputs): huge, non-finite and
# negative numbers, deep nesting, control and surrogate characters, empty and odd types.
NASTY = [
    "1e309", "-1", "0", "NaN", "Infinity", "9" * 400, str(2**63), str(2**1024), "[" * 200, "null",
    '"\\ud800"', "\x1b[31m", "\u202e", "{}", "[]", "true", '""', "-0.0", "4294967296",
]  # fmt: skip


@st.composite
def _mutated(draw, seeds: list[str]) -> str:
    """A seed with a few edits: cut, duplicate or replace a span, or splice a nasty token in."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 200)))
        op = draw(st.sampled_from(["cut", "dup", "nasty", "digit", "truncate"]))
        if op == "cut":
            text = text[:i] + text[j:]
        elif op == "dup":
            text = text[:j] + text[i:j] * draw(st.integers(1, 5)) + text[j:]
        elif op == "nasty":
            text = text[:i] + draw(st.sampled_from(NASTY)) + text[j:]
        elif op == "digit":
            text = text[:i] + draw(st.sampled_from("0123456789.-e")) + text[i + 1 :]
        else:
            text = text[:i]
    return text


def _diagnoses_cleanly(report: Report) -> None:
    errors = [f.evidence for f in diagnose(report).findings if f.code == "DIAG-RULE-ERROR"]
    assert not errors, errors


@FUZZ
@given(_mutated(IMPORT_SEEDS))
def test_import_reads_or_refuses_in_one_line_and_what_it_reads_reads_back(text):
    try:
        results = import_text(text, "fuzz")
    except UserInputError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    report = Report(tool_version="fuzz", command="import", results=tuple(results))
    assert Report.from_json(report.to_json()) == report
    _diagnoses_cleanly(report)


@FUZZ
@given(_mutated(REPORT_SEEDS))
def test_a_report_reads_or_refuses_in_one_line_and_diagnoses(text):
    try:
        report = Report.from_json(text)
    except SchemaError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    _diagnoses_cleanly(report)
    assert Report.from_json(report.to_json()) == report


RECORD_SEEDS = [
    record_line(Report.from_json(t), host, 0)
    for t, host in zip(REPORT_SEEDS, ("n1", "n2", "n3", "n4"), strict=False)
]


@FUZZ
@given(_mutated(RECORD_SEEDS))
def test_a_node_record_reads_or_refuses_in_one_line(text):
    try:
        head = parse_head(text)
    except SchemaError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert head.host and "\n" not in head.host
    json.dumps(head.__dict__, default=str)  # every field is plain data


# ---- each importer on its own inputs -------------------------------------------------------------
#
# The test above samples the whole corpus, so a format with one seed (perftest --out_json) got a
# few examples per run, and every input went through detection first. These call each format's
# own parser on its own seeds, damaged, so every importer sees hostile input every run.

PARSERS = {
    "perftest-text": perftest.parse_text,
    "bandwidthTest-text": bandwidth_test.parse_text,
    "p2pBandwidthLatencyTest-text": p2p_test.parse_text,
    "nccl-tests-text": nccl_tests.parse_text,
    "nccl-log-text": nccl_log.parse_text,
    "ucx_perftest-text": ucx_perftest.parse_text,
}
JSON_PARSERS = {
    "perftest-json": perftest.parse_json,
    "nvbandwidth-json": nvbandwidth.parse_json,
    "nccl-tests-json": nccl_tests.parse_json,
}
BY_FORMAT: dict[str, list[str]] = {}
for _text in IMPORT_SEEDS:
    try:
        BY_FORMAT.setdefault(detect(_text), []).append(_text)
    except UserInputError:
        pass
PER_FORMAT = settings(FUZZ, max_examples=max(EXAMPLES // 3, 10))


def _reads_or_refuses(parse, arg) -> None:
    """``parse(arg)`` gives results a Report holds, or one line of a ``UserInputError``."""
    try:
        results = parse(arg, "fuzz")
    except UserInputError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    report = Report(tool_version="fuzz", command="import", results=tuple(results))
    assert Report.from_json(report.to_json()) == report


def test_every_importer_has_seeds_and_a_fuzzer():
    assert set(PARSERS) | set(JSON_PARSERS) == set(FORMATS)
    assert set(BY_FORMAT) == set(FORMATS), set(FORMATS) - set(BY_FORMAT)


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@PER_FORMAT
@given(data=st.data())
def test_each_text_importer_reads_or_refuses_its_own_damaged_output(fmt, data):
    _reads_or_refuses(PARSERS[fmt], data.draw(_mutated(BY_FORMAT[fmt])))


# Values JSON text can carry (no NaN or Infinity: the shared loader refuses those before a parser
# runs), with the sizes and types that broke readers before.
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(["", "N/A", "1e309", "-1", "\u202e", "a" * 300]),
        st.text(max_size=12),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def _json_mutated(draw, seeds: list[str]):
    """A decoded seed with a few of its values (at any depth) replaced, removed or duplicated."""
    data = json.loads(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        node, path = data, []
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            path.append((node, key))
            node = node[key]
        if not path:
            continue
        parent, key = path[-1]
        op = draw(st.sampled_from(["replace", "drop", "dup"]))
        if op == "replace":
            parent[key] = draw(JSON_VALUES)
        elif op == "drop":
            del parent[key]
        elif isinstance(parent, list):
            parent.extend([parent[key]] * draw(st.integers(1, 3)))
    return data


@pytest.mark.parametrize("fmt", sorted(JSON_PARSERS))
@PER_FORMAT
@given(data=st.data())
def test_each_json_importer_reads_or_refuses_a_damaged_tree(fmt, data):
    _reads_or_refuses(JSON_PARSERS[fmt], data.draw(_json_mutated(BY_FORMAT[fmt])))


# ---- node record files and folders ---------------------------------------------------------------


@PER_FORMAT
@given(_mutated(RECORD_SEEDS), st.sampled_from(["", "\n", "\r\n", "\ufeff"]))
def test_a_node_record_file_reads_or_refuses_in_one_line(text, around):
    """parse_head_file (one record a file) reads the head and the tail only: damage anywhere."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "n.json"
        body = (around if around == "\ufeff" else "") + text + (around if around != "\ufeff" else "")
        path.write_bytes(body.encode("utf-8", errors="surrogatepass"))
        try:
            head = parse_head_file(path, path.stat().st_size)
        except SchemaError as exc:
            assert "\n" not in str(exc) and str(exc)
        else:
            assert head.host and "\n" not in head.host


@PER_FORMAT
@given(st.lists(_mutated(RECORD_SEEDS), min_size=1, max_size=4))
def test_a_jsonl_of_damaged_records_loads_without_raising(lines):
    """load_records never raises on a bad record: it skips it with one line saying why."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "all.jsonl"
        path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogatepass"))
        out = load_records(path)
    for s in out.skipped:
        assert s.reason and "\n" not in s.reason


# ---- the two-machine wire protocol ---------------------------------------------------------------


@st.composite
def _frames(draw) -> bytes:
    """What a peer may put on the wire: a frame of random JSON, nesting, bytes or a lying length."""
    kind = draw(st.sampled_from(["json", "deep", "bytes", "length"]))
    if kind == "json":
        value = draw(
            st.one_of(
                JSON_VALUES,
                st.fixed_dictionaries({"type": st.text(max_size=8)}, optional={"message": JSON_VALUES}),
            )
        )
        body = json.dumps(value).encode()
    elif kind == "deep":
        n = draw(st.integers(500, 200_000))
        body = draw(st.sampled_from([b"[", b'{"a":'])) * n
    else:
        body = draw(st.binary(max_size=64))
    n = len(body) if kind != "length" else draw(st.sampled_from([0, 3, 1 << 20, (1 << 20) + 1, 2**32 - 1]))
    return struct.pack(">I", n) + body


@PER_FORMAT
@given(_frames())
def test_a_random_frame_is_a_message_or_a_one_line_peer_error(frame):
    a, b = socket.socketpair()
    with exchange.Channel(a, "fuzz", 0.2), exchange.Channel(b, "fuzz", 0.2) as rx:
        a.sendall(frame[: 1 << 16])
        a.shutdown(socket.SHUT_WR)
        try:
            msg = rx.recv(("hello", "run", ""))
        except exchange.PeerError as exc:
            assert "\n" not in str(exc) and str(exc)
        else:
            assert isinstance(msg, dict) and msg["type"] in ("hello", "run", "")
