"""mr-bench's two-machine options, checked together before anything opens.

``--server``/``--connect``, ``--bind``, ``--port``, the timeouts, ``--secret-file``, and the soft
provider's TCP wire (loopback only).
"""

from __future__ import annotations

import ipaddress
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gdrdiag.cli.common import warn
from gdrdiag.errors import UserInputError


@dataclass(frozen=True)
class Peer:
    """The two-machine options: which side this is, where, and the shared secret (or none)."""

    server: bool
    connect: Optional[str]
    port: int
    bind: str
    accept_timeout: float
    secret: Optional[bytes]


SECRET_MIN_BYTES, SECRET_MAX_BYTES = 16, 4096


def read_secret_file(path: Path) -> bytes:
    """The shared secret in ``path``: its bytes less trailing newlines; 16 to 4096 of them."""
    try:
        if not path.is_file():
            raise UserInputError(
                f"--secret-file {path}: {'not a regular file' if path.exists() else 'no such file'}"
            )
        with path.open("rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if mode & 0o077:
                raise UserInputError(
                    f"--secret-file {path}: others may read it (mode {stat.S_IMODE(mode):04o}); "
                    f"chmod 600 {path}"
                )
            data = f.read(SECRET_MAX_BYTES + 2)
    except OSError as exc:
        raise UserInputError(f"--secret-file {path}: cannot read ({exc.strerror or exc})") from None
    secret = data.rstrip(b"\r\n")
    if not secret.strip():
        raise UserInputError(f"--secret-file {path}: only blanks; a secret must be random bytes")
    if len(secret) > SECRET_MAX_BYTES:
        raise UserInputError(
            f"--secret-file {path}: longer than {SECRET_MAX_BYTES} bytes; is it the right file?"
        )
    if len(secret) < SECRET_MIN_BYTES:
        raise UserInputError(
            f"--secret-file {path}: {len(secret)} bytes; a secret needs at least {SECRET_MIN_BYTES} "
            "(e.g. head -c 32 /dev/urandom | base64 > FILE)"
        )
    return secret


def provider_options(provider_name: str, inline: int, time_calls: bool, two_host: bool) -> dict:
    """Options for the provider's device: the native loop's, or the soft provider's TCP wire."""
    if provider_name == "native":
        return {"inline": inline, "time_calls": time_calls}
    return {"wire": True} if provider_name == "soft" and two_host else {}


def is_loopback(bind: str) -> bool:
    """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return False


def peer_options(
    server: bool,
    connect: Optional[str],
    port: int,
    bind: str,
    accept_timeout: float,
    secret_file: Optional[Path],
    write_with_imm: bool,
    provider_name: str = "auto",
) -> Peer:
    """Check the two-machine options together (and read the secret) before anything runs."""
    from gdrdiag.bench.mr_config import MAX_TIMEOUT_S

    if (server or connect) and not (1 if connect else 0) <= port <= 65535:
        raise UserInputError(f"--port {port} outside {1 if connect else 0}..65535")
    if not (math.isfinite(accept_timeout) and 0 < accept_timeout <= MAX_TIMEOUT_S):
        raise UserInputError(f"--accept-timeout {accept_timeout}: give seconds in (0, {MAX_TIMEOUT_S:g}]")
    secret = read_secret_file(secret_file) if secret_file is not None else None
    if secret is not None and not (server or connect):
        raise UserInputError("--secret-file is for two machines: give it with --server or --connect")
    if write_with_imm and (server or connect):
        raise UserInputError("--write-with-imm runs in loopback only")
    if provider_name == "soft" and (server or connect):
        where = f"--connect {connect}" if connect else f"--bind {bind}"
        if not is_loopback(connect or bind):
            raise UserInputError(
                f"--provider soft runs two-machine mode on this machine only (its wire is TCP on "
                f"127.0.0.1): {where} is not a loopback address; use 127.0.0.1, or a real RDMA device"
            )
    if server and secret is None and not is_loopback(bind):
        warn(
            f"--bind {bind} without --secret-file: anyone who reaches port {port} can connect and "
            "write into this machine's buffer; give both sides --secret-file"
        )
    return Peer(server, connect, port, bind, accept_timeout, secret)
