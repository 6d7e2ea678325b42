"""Read saved Reports from disk, turning every way a file can be wrong into a one-line error."""

from __future__ import annotations

import contextlib
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


def check_output_path(path: Path, what: str, force: bool = False, append: bool = False) -> None:
    """Refuse an output path before any work is done: one line, exit 2 (UserInputError).

    Refused: a symbolic link (gdrdiag never writes through one), a folder, a missing or
    unwritable parent folder (probed by creating and removing a temporary file, which also
    catches read-only mounts and root-owned pseudo file systems), something that is not a
    regular file, and an existing file unless ``force`` (or ``append``, for files written by
    appending). Benches call this through ``common.handles_errors`` before they measure, so a
    bad path never costs a run's results.
    """
    text = str(path)
    name = text[-160:] if len(text) <= 160 else "..." + text[-157:]
    if not text or text.endswith(os.sep):
        raise UserInputError(f"{what} {name}: give a file name, not a folder")
    if len(os.fsencode(os.path.basename(text))) > 255 or len(os.fsencode(text)) > 4000:
        raise UserInputError(f"{what} {name}: file name too long")
    if os.path.islink(text):
        raise UserInputError(f"{what} {name} is a symbolic link; gdrdiag does not write through links")
    if os.path.isdir(text):
        raise UserInputError(f"{what} {name} is a folder; give a file name")
    parent = os.path.dirname(os.path.abspath(text))
    try:
        is_dir = os.path.isdir(parent)
    except (OSError, ValueError):
        is_dir = False
    if not is_dir:
        raise UserInputError(f"{what} {name}: folder {parent[-120:]} does not exist")
    if os.path.lexists(text):
        if not os.path.isfile(text):
            raise UserInputError(f"{what} {name} exists and is not a regular file")
        if not (force or append):
            raise UserInputError(f"{what} {name} exists; use -f/--force to overwrite")
    try:
        fd, probe = tempfile.mkstemp(prefix=".gdrdiag-probe-", dir=parent)
    except OSError as exc:
        raise UserInputError(f"{what} {name}: cannot write in {parent[-120:]} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def write_text_file(path: Path, text: str, force: bool = False, what: str = "output") -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    A full disk or a crash leaves the old file (or none), never a truncated one. A symlink at
    ``path`` is refused (never followed); an existing file is replaced only with ``force``
    (without it the temporary file is hard-linked into place, which fails atomically when the
    name exists). Text that cannot be encoded (a lone surrogate from a hostile Report) is
    replaced, not a crash. Any OS error becomes a one-line UserInputError.
    """
    from gdrdiag.hw.safefs import terminate_unwinds

    check_output_path(path, what, force=force)
    with terminate_unwinds():
        _write_through_temporary(path, text, force)


def _write_through_temporary(path: Path, text: str, force: bool) -> None:
    from gdrdiag.filemode import new_file_mode

    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", dir=folder)
    except OSError as exc:
        raise UserInputError(f"{path}: cannot write there ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode())  # mkstemp makes 0600; an output is as readable as any new file
        _move_into_place(tmp, path, force)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise UserInputError(f"{path}: cannot write ({exc.strerror})") from None
    except BaseException:  # Ctrl-C mid-write, or a refusal: leave no temporary file behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _move_into_place(tmp: str, path: Path, force: bool) -> None:
    """Rename ``tmp`` to ``path`` (never following a link there); without ``force``, never replace."""
    if force:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise UserInputError(f"{path} exists; use -f/--force to overwrite") from None
    except OSError:  # a file system without hard links: check, then rename
        if os.path.lexists(path):
            raise UserInputError(f"{path} exists; use -f/--force to overwrite") from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)
