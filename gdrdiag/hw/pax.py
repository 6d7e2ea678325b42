"""Checking a tar archive's pax headers in one pass, before ``tarfile`` parses them.

Pythons without the pax-header fix (CVE-2024-6232) match each record of a pax header with a
backtracking regular expression: a malformed 64 KiB header costs seconds, and a bundle may hold
thousands of them. :func:`malformed_pax_record` reads the header's bytes once, checks the framing
POSIX gives every record (``<length> <keyword>=<value>`` and a newline, the length counting the
whole record) and puts the file back where it was, so ``tarfile`` only ever parses well-formed
headers, whatever the interpreter.
"""

from __future__ import annotations

import tarfile
from typing import BinaryIO, Callable, Optional

PAX_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_MAX_LENGTH_DIGITS = 11  # the decimal length of a record, then its space


def check_header(info: tarfile.TarInfo, tf: tarfile.TarFile, error: Callable[[str], Exception]) -> None:
    """Raise ``error`` (one line) when ``info`` is a pax header with a malformed record.

    Called from ``TarInfo._proc_member``, where ``tf``'s file is at the header's first byte.
    """
    if info.type not in PAX_TYPES:
        return
    at = malformed_pax_record(tf.fileobj, info.size)  # type: ignore[arg-type]
    if at is not None:
        raise error(f"bundle has a malformed pax header (at byte {at} of {info.size}): refused")


def malformed_pax_record(fileobj: BinaryIO, size: int) -> Optional[int]:
    """The offset of the first malformed record of the ``size``-byte header at the file's position.

    None when every record is well formed (NUL padding ends the records).
    """
    start = fileobj.tell()
    data = fileobj.read(size)
    fileobj.seek(start)
    pos, end = 0, len(data)
    while pos < end and data[pos] != 0:
        space = data.find(b" ", pos, pos + _MAX_LENGTH_DIGITS + 1)
        digits = data[pos:space] if space > pos else b""
        length = int(digits) if digits.isdigit() else 0
        record_end = pos + length
        framed = length >= 5 and record_end <= end and data[record_end - 1] == 0x0A
        keyword, equals, _ = data[space + 1 : record_end - 1].partition(b"=") if framed else (b"", b"", b"")
        if not (keyword and equals):
            return pos
        pos = record_end
    return None
