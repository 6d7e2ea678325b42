"""Out-of-band TCP exchange for two-machine mr-bench (the role perftest's port 18515 socket plays).

Messages are JSON objects framed by a 4-byte big-endian length, each with a ``type``. Every
receive has a timeout and every message a size cap, so a peer that is unreachable, silent,
dies mid-run or speaks something else ends the run with a clear error instead of a hang.

Conversation (client = the side that posts the WRITEs, server = the side written to)::

    client -> hello    {protocol, params, qps: [QpInfo...]}
    server -> welcome  {qps: [QpInfo...], mr: {addr, rkey, length}, lands_in, memory, ...}
    per measured run:
      client -> run    {index}            server poisons its buffer
      server -> ready
      client -> done   {regions: [{offset, length, seed}...]}   after the last completion
      server -> verified {ok, detail}     server checked every byte
    client -> bye
"""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Any, Optional

from gdrdiag.errors import GdrdiagError, UserInputError

PROTOCOL = "gdrdiag-mr-bench/1"
DEFAULT_PORT = 18515
MAX_MESSAGE = 1 << 20


class PeerError(GdrdiagError):
    """The peer went away, timed out, or sent something this side does not understand."""


class Channel:
    """A connected socket that sends and receives framed JSON messages with timeouts."""

    def __init__(self, sock: socket.socket, peer: str, timeout_s: float):
        self.sock = sock
        self.peer = peer
        self.timeout_s = timeout_s
        sock.settimeout(timeout_s)

    def send(self, msg_type: str, **payload: Any) -> None:
        """Send one message."""
        body = json.dumps({"type": msg_type, **payload}, separators=(",", ":")).encode()
        if len(body) > MAX_MESSAGE:
            raise PeerError(f"message {msg_type!r} too large ({len(body)} bytes)")
        try:
            self.sock.sendall(struct.pack(">I", len(body)) + body)
        except OSError as exc:
            raise PeerError(
                f"lost the connection to {self.peer} while sending {msg_type!r}: {exc.strerror or exc}"
            ) from None

    def _recv_exact(self, n: int, expect: str, deadline: float) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PeerError(f"peer {self.peer} sent no {expect!r} within {self.timeout_s:g} s")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout:
                raise PeerError(f"peer {self.peer} sent no {expect!r} within {self.timeout_s:g} s") from None
            except OSError as exc:
                raise PeerError(
                    f"lost the connection to {self.peer} waiting for {expect!r}: {exc.strerror or exc}"
                ) from None
            if not chunk:
                raise PeerError(
                    f"peer {self.peer} closed the connection (it exited or died) while we "
                    f"waited for {expect!r}"
                )
            buf += chunk
        return bytes(buf)

    def recv(self, expect: "str | tuple[str, ...]", timeout_s: Optional[float] = None) -> dict:
        """Receive one message of type ``expect`` (or one of them); a peer ``error`` is raised."""
        types = (expect,) if isinstance(expect, str) else tuple(expect)
        expect = "/".join(types)
        deadline = time.monotonic() + (timeout_s if timeout_s is not None else self.timeout_s)
        (n,) = struct.unpack(">I", self._recv_exact(4, expect, deadline))
        if n > MAX_MESSAGE:
            raise PeerError(
                f"peer {self.peer} announced a {n}-byte message (limit {MAX_MESSAGE}); "
                f"is it a gdrdiag mr-bench peer?"
            )
        raw = self._recv_exact(n, expect, deadline)
        try:
            msg = json.loads(raw)
        except ValueError:
            raise PeerError(
                f"peer {self.peer} sent something that is not JSON; is it a gdrdiag peer?"
            ) from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise PeerError(f"peer {self.peer} sent a malformed message")
        if msg["type"] == "error":
            raise PeerError(f"peer {self.peer} reported: {msg.get('message', 'unknown error')}")
        if msg["type"] not in types:
            raise PeerError(f"peer {self.peer} sent {msg['type']!r} where {expect!r} was expected")
        return msg

    def close(self) -> None:
        """Close the socket (idempotent)."""
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "Channel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Listener:
    """A listening socket; :meth:`accept` waits a bounded time for one client."""

    def __init__(self, port: int = DEFAULT_PORT, bind: str = "127.0.0.1"):
        if not 0 <= port <= 65535:
            raise UserInputError(f"port {port} outside 0..65535")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((bind, port))
        except OSError as exc:
            self.sock.close()
            raise UserInputError(f"cannot listen on {bind}:{port}: {exc.strerror or exc}") from None
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]

    def accept(self, timeout_s: float, io_timeout_s: float) -> Channel:
        """Wait up to ``timeout_s`` for a client."""
        self.sock.settimeout(timeout_s)
        try:
            conn, addr = self.sock.accept()
        except socket.timeout:
            raise PeerError(f"no client connected to port {self.port} within {timeout_s:g} s") from None
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return Channel(conn, f"{addr[0]}:{addr[1]}", io_timeout_s)

    def close(self) -> None:
        """Stop listening (idempotent)."""
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "Listener":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def connect(
    host: str,
    port: int = DEFAULT_PORT,
    *,
    timeout_s: float = 10.0,
    io_timeout_s: float = 30.0,
    retry_s: float = 0.0,
) -> Channel:
    """Connect to a server; retry refused connections for ``retry_s`` (the server may be starting)."""
    if not 0 < port <= 65535:
        raise UserInputError(f"port {port} outside 1..65535")
    deadline = time.monotonic() + max(retry_s, 0.0)
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=timeout_s)
        except socket.gaierror as exc:
            raise UserInputError(f"cannot resolve peer host {host!r}: {exc.strerror or exc}") from None
        except socket.timeout:
            raise UserInputError(
                f"cannot reach peer {host}:{port}: no answer within {timeout_s:g} s"
            ) from None
        except OSError as exc:
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise UserInputError(
                f"cannot reach peer {host}:{port}: {exc.strerror or exc} "
                f"(is `gdrdiag mr-bench --server` running there?)"
            ) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return Channel(sock, f"{host}:{port}", io_timeout_s)
