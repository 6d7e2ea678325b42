"""A bundle's pax headers are checked by gdrdiag, in one pass, before tarfile parses them.

Python releases without the pax-header fix (CVE-2024-6232) parse a malformed pax header with a
backtracking regular expression: a 64 KiB header cost seconds, and a bundle may hold thousands.
gdrdiag checks every record (``<length> <keyword>=<value>`` and a newline) itself first, whatever the
interpreter, so tarfile's parser only ever sees well-formed headers; and a header is refused
above :data:`~gdrdiag.hw.bundle.MAX_HEADER_BYTES`.
"""

from __future__ import annotations

import gzip
import io
import tarfile

import pytest

from gdrdiag.hw import bundle
from gdrdiag.hw.bundle import BundleError, safe_extract

META = b'{"format": "gdrdiag-bundle"}\n'


def _archive(pax: bytes) -> bytes:
    """A gzip tar: one pax header with the bytes ``pax``, then meta.json, then the end blocks."""
    hdr = tarfile.TarInfo("././@PaxHeader")
    hdr.type, hdr.size = tarfile.XHDTYPE, len(pax)
    pad = b"\0" * (-len(pax) % 512)
    body = tarfile.TarInfo("gdrdiag-bundle/meta.json")
    body.size = len(META)
    data = hdr.tobuf(tarfile.USTAR_FORMAT) + pax + pad
    data += body.tobuf(tarfile.USTAR_FORMAT) + META + b"\0" * (512 - len(META)) + b"\0" * 1024
    return gzip.compress(data)


@pytest.fixture
def parsed(monkeypatch):
    """The pax headers tarfile's own parser was handed."""
    seen: list[int] = []
    original = tarfile.TarInfo._proc_pax

    def spy(self, tf):  # noqa: ANN001
        seen.append(self.size)
        return original(self, tf)

    monkeypatch.setattr(tarfile.TarInfo, "_proc_pax", spy)
    return seen


@pytest.mark.parametrize(
    "pax",
    [
        b"1" * 8000 + b" ",  # the backtracking pattern: digits, a space, no keyword or '='
        b"30 comment" + b" " * 19 + b"\n",  # a record without '='
        b"99 comment=short\n",  # a length past the header's end
        b"3 a=\n",  # shorter than the shortest record
        b"16 comment=abcd!",  # the record does not end with a newline
        b"x6 comment=abcd\n",  # no length
    ],
)
def test_a_malformed_pax_header_is_refused_before_tarfile_parses_it(tmp_path, parsed, pax):
    p = tmp_path / "b.tar.gz"
    p.write_bytes(_archive(pax))
    with pytest.raises(BundleError, match="malformed pax header") as exc:
        safe_extract(str(p), str(tmp_path / "o"))
    assert "\n" not in str(exc.value)
    assert parsed == []


def test_a_pax_header_over_the_limit_is_refused(tmp_path, parsed):
    value = b"A" * bundle.MAX_HEADER_BYTES
    record = b"comment=" + value + b"\n"
    length = len(record) + 1 + len(str(len(record) + 8))
    pax = str(length).encode() + b" " + record
    p = tmp_path / "b.tar.gz"
    p.write_bytes(_archive(pax))
    with pytest.raises(BundleError, match="extended tar header"):
        safe_extract(str(p), str(tmp_path / "o"))
    assert parsed == []


def test_well_formed_pax_headers_are_read(tmp_path, parsed):
    """A long path and a non-ASCII comment (the pax headers a real bundle has) pass."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        folder = tarfile.TarInfo("gdrdiag-bundle")
        folder.type = tarfile.DIRTYPE
        tf.addfile(folder)
        info = tarfile.TarInfo("gdrdiag-bundle/" + "d" * 150)
        info.size = len(META)
        info.pax_headers = {"comment": "é" * 100}
        tf.addfile(info, io.BytesIO(META))
    p = tmp_path / "b.tar.gz"
    p.write_bytes(buf.getvalue())
    safe_extract(str(p), str(tmp_path / "o"))
    assert len(parsed) == 1
