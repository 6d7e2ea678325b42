"""Read saved Reports from disk, turning every way a file can be wrong into a one-line error."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gdrdiag.errors import UserInputError
from gdrdiag.model.report import MAX_REPORT_BYTES, Report
from gdrdiag.model.serde import SchemaError


def load_report(path: Path) -> Report:
    """Load and validate a Report JSON file; UserInputError (exit 2) on any problem."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserInputError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read ({exc.strerror})") from None
    if not path.is_file():
        raise UserInputError(f"{path}: not a regular file")
    if size > MAX_REPORT_BYTES:
        raise UserInputError(f"{path}: {size} bytes is larger than a report may be ({MAX_REPORT_BYTES})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserInputError(f"{path}: not UTF-8 text (is it a bundle? use inspect --bundle)") from None
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return Report.from_json(text)
    except SchemaError as exc:
        raise UserInputError(f"{path}: not a gdrdiag report: {str(exc).splitlines()[0][:300]}") from None


def write_text_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    A full disk or a crash leaves the old file (or none), never a truncated one; any OS error becomes
    a one-line UserInputError.
    """
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise UserInputError(f"{path}: cannot write there ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; an output file is as readable as any the user writes
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise UserInputError(f"{path}: cannot write ({exc.strerror})") from None
    except BaseException:  # Ctrl-C mid-write: leave no temporary file behind
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
