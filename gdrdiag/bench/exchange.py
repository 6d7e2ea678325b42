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

With a shared secret (``--secret-file`` on both sides) a handshake comes first; see
:func:`admit_client` and :func:`prove_to_server`::

    client -> auth_hello {nonce_c}
    server -> challenge  {nonce_s, mac: HMAC(secret, "server" | nonce_c | nonce_s)}
    client -> auth       {mac: HMAC(secret, "client" | nonce_s | nonce_c)}
    server -> auth_ok
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import socket
import struct
import threading
import time
from typing import Any, Callable, Optional

from gdrdiag.errors import GdrdiagError, UserInputError

PROTOCOL = "gdrdiag-mr-bench/1"
DEFAULT_PORT = 18515
MAX_MESSAGE = 1 << 20
NONCE_HEX = 32  # a handshake nonce: 16 random bytes as hex
MAX_PENDING = 8  # connections a server lets talk at once before one is admitted; more wait in the backlog


class PeerError(GdrdiagError):
    """The peer went away, timed out, or sent something this side does not understand."""


class Channel:
    """A connected socket that sends and receives framed JSON messages with timeouts."""

    def __init__(self, sock: socket.socket, peer: str, timeout_s: float):
        self.sock = sock
        self.peer = peer
        self.timeout_s = timeout_s
        # While set, a monotonic time that caps every receive: the server's admission deadline,
        # one budget for the whole handshake and hello rather than a fresh timeout per message.
        self.deadline: Optional[float] = None
        self.deadline_s = 0.0
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

    def _late(self, expect: str) -> PeerError:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return PeerError(
                f"peer {self.peer} did not finish its handshake within {self.deadline_s:g} s "
                f"(still waiting for {expect!r})"
            )
        return PeerError(f"peer {self.peer} sent no {expect!r} within {self.timeout_s:g} s")

    def _recv_exact(self, n: int, expect: str, deadline: float) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._late(expect)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout:
                raise self._late(expect) from None
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
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
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
        except RecursionError:
            # CPython's decoder recurses once per nesting level and stops at the interpreter's
            # recursion limit (json module docs: "RecursionError ... deeply nested"); no message of
            # this protocol nests more than a few levels.
            raise PeerError(
                f"peer {self.peer} sent a message nested too deep to decode; is it a gdrdiag peer?"
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


class _Admission:
    """The connections :meth:`Listener.admit` lets talk at once: their slots, the winner, the refusals.

    Each connection talks in its own thread (:meth:`talk`); its slot is freed however that ends,
    an exception of any kind included, so a hostile peer cannot keep a slot by crashing its thread.
    """

    def __init__(
        self,
        secret: Optional[bytes],
        check: Callable[[dict], Any],
        note: Optional[Callable[[str], None]],
    ):
        self.secret, self.check, self.note = secret, check, note
        self.lock = threading.Lock()
        self.won: Any = None
        self.refused: list[str] = []
        self.pending = 0
        self.done = threading.Event()
        self.freed = threading.Event()

    def has_room(self, wait_s: float) -> bool:
        """True when a slot is free; else waits up to ``wait_s`` for one to free and says False.

        Only the accepting thread takes slots (:meth:`start`), so a slot free here is still free
        when it accepts.
        """
        with self.lock:
            if self.pending < MAX_PENDING:
                return True
            self.freed.clear()
        self.freed.wait(wait_s)
        return False

    def start(self, ch: Channel) -> None:
        """Take a slot for ``ch`` and talk to it in a thread of its own."""
        with self.lock:
            self.pending += 1
        threading.Thread(target=self.talk, args=(ch,), daemon=True, name=f"admit {ch.peer}").start()

    def refuse(self, ch: Channel, why: str) -> None:
        ch.close()
        with self.lock:
            self.refused.append(why)
        if self.note:
            self.note(f"refused {ch.peer}: {why}")

    def talk(self, ch: Channel) -> None:
        """The handshake and hello of one connection; the first that passes is the winner."""
        try:
            try:
                hello = admit_client(ch, self.secret)
                try:
                    checked = self.check(hello)
                except (PeerError, ValueError) as exc:
                    ch.send("error", message=str(exc))
                    raise PeerError(str(exc)) from None
            except PeerError as exc:
                self.refuse(ch, str(exc))
                return
            except Exception as exc:  # noqa: BLE001 - any other failure refuses this one connection
                self.refuse(ch, f"{type(exc).__name__}: {exc}")
                return
            with self.lock:
                if self.won is None:
                    ch.deadline = None
                    self.won = (ch, checked)
                    self.done.set()
                    return
            try:
                ch.send("error", message="this server is already serving another client")
            except PeerError:
                pass
            ch.close()
        finally:
            with self.lock:
                self.pending -= 1
            self.freed.set()

    def close(self) -> "tuple[Any, list[str]]":
        """(the winner or None, the refusals); a handshake still going on is turned away when it ends."""
        with self.lock:
            won, refused = self.won, list(self.refused)
            if won is None:
                self.won = ()
        return won, refused


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
        self.sock.listen(MAX_PENDING)
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

    def admit(
        self,
        timeout_s: float,
        io_timeout_s: float,
        secret: Optional[bytes],
        check: Callable[[dict], Any],
        note: Optional[Callable[[str], None]] = None,
    ) -> "tuple[Channel, Any]":
        """The first client that passes the handshake and whose ``hello`` ``check`` accepts.

        Connections talk concurrently (at most :data:`MAX_PENDING` at once), so a stalled or hostile
        connection does not keep the real client out: it is told why, closed, and the server goes
        on waiting until ``timeout_s``. Each connection has one admission deadline,
        ``io_timeout_s`` for its whole handshake and hello (a sender trickling a byte at a time is
        dropped when it passes), and its slot is freed however its admission ends. While every slot
        is taken, new connections wait in the listen backlog rather than being closed, so the real
        client is admitted as soon as a slot frees. ``check`` raises :class:`PeerError` (or
        ``ValueError``) for a hello it refuses; it returns what the caller needs from the hello.
        (channel, what ``check`` returned).
        """
        deadline = time.monotonic() + timeout_s
        adm = _Admission(secret, check, note)
        while not adm.done.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if not adm.has_room(min(left, 0.05)):
                continue  # the next connection stays queued in the kernel's backlog until a slot frees
            self.sock.settimeout(min(left, 0.05))
            try:
                conn, addr = self.sock.accept()
            except socket.timeout:
                continue
            except OSError as exc:
                raise PeerError(f"port {self.port}: accept failed: {exc.strerror or exc}") from None
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            admit_s = min(io_timeout_s, max(left, 0.05))
            ch = Channel(conn, f"{addr[0]}:{addr[1]}", admit_s)
            ch.deadline, ch.deadline_s = time.monotonic() + admit_s, admit_s
            adm.start(ch)
        won, refused = adm.close()
        if won:
            won[0].sock.settimeout(io_timeout_s)
            won[0].timeout_s = io_timeout_s
            return won
        last = f"; refused {len(refused)}, the last: {refused[-1]}" if refused else ""
        raise PeerError(f"no client connected to port {self.port} within {timeout_s:g} s{last}")

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


def _mac(secret: bytes, role: str, first: str, second: str) -> str:
    """HMAC-SHA256 (RFC 2104) of the protocol, the prover's role and both nonces.

    The role keeps a server's proof from being replayed as a client's (and back); the nonces tie
    each proof to this connection.
    """
    text = f"{PROTOCOL}|{role}|{first}|{second}".encode()
    return hmac.new(secret, text, hashlib.sha256).hexdigest()


def _nonce(msg: dict, peer: str) -> str:
    value = msg.get("nonce")
    if not (
        isinstance(value, str) and len(value) == NONCE_HEX and all(c in "0123456789abcdef" for c in value)
    ):
        raise PeerError(f"peer {peer} sent a malformed handshake")
    return value


def _proves(msg: dict, expected: str) -> bool:
    # compare_digest refuses a str with non-ASCII characters (TypeError): compare bytes, and only
    # a MAC that can be one (ASCII) at all.
    mac = msg.get("mac")
    return isinstance(mac, str) and mac.isascii() and hmac.compare_digest(mac.encode(), expected.encode())


def prove_to_server(ch: Channel, secret: Optional[bytes]) -> None:
    """Client: the shared-secret handshake, before ``hello`` (nothing when there is no secret).

    Mutual challenge-response: each side proves it holds the secret over a fresh nonce of the
    other's, so a peer without it, or one replaying an old exchange, is refused; the secret never
    crosses the wire. It authenticates the peer when the connection opens; it does not encrypt or
    protect the messages after it (QP numbers, addresses and rkeys travel in clear).
    """
    if secret is None:
        return
    mine = secrets.token_hex(NONCE_HEX // 2)
    ch.send("auth_hello", nonce=mine)
    challenge = ch.recv("challenge")
    theirs = _nonce(challenge, ch.peer)
    if not _proves(challenge, _mac(secret, "server", mine, theirs)):
        raise PeerError(f"server {ch.peer} does not hold the secret of --secret-file; refused it")
    ch.send("auth", mac=_mac(secret, "client", theirs, mine))
    ch.recv("auth_ok")


def admit_client(ch: Channel, secret: Optional[bytes]) -> dict:
    """Server: the client's ``hello``, after the shared-secret handshake where this side has a secret.

    A server with a secret refuses a client without one (or with another), and a server without one
    refuses a client that asks for the handshake: both sides then end with one line saying why.
    """
    first = ch.recv(("auth_hello", "hello"))
    if secret is None:
        if first["type"] == "hello":
            return first
        ch.send("error", message="this server has no --secret-file; give both sides the same one, or neither")
        raise PeerError(
            f"client {ch.peer} asked for a shared-secret handshake; this server has no --secret-file"
        )
    if first["type"] == "hello":
        ch.send("error", message="this server requires --secret-file: give the client the same secret file")
        raise PeerError(
            f"client {ch.peer} sent no shared-secret proof; refused (this server has --secret-file)"
        )
    theirs = _nonce(first, ch.peer)
    mine = secrets.token_hex(NONCE_HEX // 2)
    ch.send("challenge", nonce=mine, mac=_mac(secret, "server", theirs, mine))
    if not _proves(ch.recv("auth"), _mac(secret, "client", mine, theirs)):
        ch.send("error", message="wrong shared secret (--secret-file differs from the server's)")
        raise PeerError(f"client {ch.peer} proved a different shared secret; refused")
    ch.send("auth_ok")
    return ch.recv("hello")
