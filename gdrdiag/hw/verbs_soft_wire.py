"""The soft provider's wire: RDMA WRITEs between soft devices in two processes of one machine.

Without it a soft QP reaches only QPs of its own process. A device opened with ``wire=True``
listens on 127.0.0.1 (a port the kernel picks) and writes that port into its GID, so the QP
information two-machine mr-bench exchanges also says where the WRITEs go. One WRITE crosses as a
request header (destination QP, remote address, rkey, length, immediate); the responder applies
the checks the in-process path applies (QP state, remote-write access, rkey, range) and answers
``go`` or the error completion; only after ``go`` is the payload sent, read straight into the
registered memory, and acknowledged. The requester waits for the acknowledgement of each WR, so a
completion means the bytes are in the peer's memory, as an RC ACK does.

It is a wire for trying two-machine mode without a NIC, not a transport: loopback only, host
memory only (device and managed memory are refused at registration), one round trip per WR. Its
numbers are software's: every result records ``provider = soft``.
"""

from __future__ import annotations

import ctypes
import socket
import struct
import threading
from typing import Any, Optional

from gdrdiag.hw import verbs as v
from gdrdiag.hw.verbs import QpState, WcOpcode, WcStatus

HOST = "127.0.0.1"
# "soft" in hex, then 127.0.0.1's top half, then the port: fe80::736f:6674:7f00:PORT.
GID_PREFIX = "fe80:0000:0000:0000:736f:6674:7f00:"
_HEADER = struct.Struct(">IQIQBI")  # qp_num, remote address, rkey, length, has immediate, immediate
_GO = 0xFF  # the responder's "send the payload" (every other answer byte is an ibv_wc_status)
REPLY_TIMEOUT_S = 30.0


def gid_for(port: int) -> str:
    """The GID of a wire device listening on ``port``."""
    return f"{GID_PREFIX}{port:04x}"


def port_of(gid: str) -> Optional[int]:
    """The wire port a GID names, or None for a GID that is not a wire device's."""
    if not (isinstance(gid, str) and gid.startswith(GID_PREFIX) and len(gid) == len(GID_PREFIX) + 4):
        return None
    try:
        port = int(gid[len(GID_PREFIX) :], 16)
    except ValueError:
        return None
    return port or None


def _recv_exact(sock: socket.socket, n: int) -> Optional[bytes]:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


CHUNK = 1 << 20  # the payload is read a chunk at a time and copied while its MR is still registered


def _receive_payload(sock: socket.socket, dev: Any, rmr: Any, offset: int, n: int) -> bool:
    """Read ``n`` bytes from ``sock`` into ``rmr`` at ``offset``; False when the peer left.

    Each chunk lands in a bounded buffer first and is copied into the MR only while the MR is still
    registered (``dev._wire_store``, under the provider's lock): an MR deregistered (and its memory
    freed) during a WRITE is never written after.
    """
    buf = bytearray(min(n, CHUNK))
    view = memoryview(buf)
    done = 0
    while done < n:
        want = min(CHUNK, n - done)
        got = 0
        while got < want:
            k = sock.recv_into(view[got:want], want - got)
            if not k:
                return False
            got += k
        if not dev._wire_store(rmr, offset + done, buf, want):
            return False
        done += want
    return True


class WireListener:
    """The responder half of a wire device: serves WRITEs into the device's MRs until closed."""

    def __init__(self, dev: Any):
        self.dev = dev
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((HOST, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._closed = threading.Event()
        self._conns: set = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept_loop, daemon=True, name=f"soft wire {self.port}").start()

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                if self._closed.is_set():
                    conn.close()
                    return
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            while not self._closed.is_set():
                head = _recv_exact(conn, _HEADER.size)
                if head is None:
                    return
                qpn, raddr, rkey, length, has_imm, imm = _HEADER.unpack(head)
                status, rmr, peer = self._check(qpn, raddr, rkey, length, bool(has_imm))
                if status is not WcStatus.SUCCESS:
                    conn.sendall(bytes([int(status)]))
                    return  # the requester's QP goes to ERR, as after an error completion
                conn.sendall(bytes([_GO]))
                if not _receive_payload(conn, self.dev, rmr, raddr - rmr.addr, length):
                    return
                if has_imm:
                    recv_id = peer._recvs.popleft()
                    peer.recv_cq._push(
                        v.Completion(
                            recv_id, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, length, peer.qp_num, imm
                        ),
                        None,
                        0,
                    )
                conn.sendall(bytes([int(WcStatus.SUCCESS)]))
        except (OSError, ValueError, IndexError):
            return
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def _check(self, qpn: int, raddr: int, rkey: int, length: int, imm: bool) -> tuple:
        """(status, MR, responder QP): the in-process path's responder checks."""
        dev = self.dev
        peer = dev._qp_here(qpn)
        rmr = dev._by_rkey.get(rkey)
        if peer is None or peer.closed or peer.state not in (QpState.RTR, QpState.RTS):
            return WcStatus.RETRY_EXC_ERR, None, None
        if (
            not peer.access & v.ACCESS_REMOTE_WRITE
            or rmr is None
            or rmr.pd is not peer.pd
            or not rmr.remote_writable
            or raddr < rmr.addr
            or raddr + length > rmr.end
            or length > dev.max_msg_size
        ):
            return WcStatus.REM_ACCESS_ERR, None, None
        if imm and not peer._recvs:
            return WcStatus.RNR_RETRY_EXC_ERR, None, None
        return WcStatus.SUCCESS, rmr, peer

    def close(self) -> None:
        """Stop serving and drop every connection (idempotent)."""
        self._closed.set()
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for c in [self.sock, *conns]:
            try:
                c.close()
            except OSError:
                pass


class WireLink:
    """The requester half: one connection from a QP to the responder device's wire port."""

    def __init__(self, port: int):
        self.port = port
        self.sock: Optional[socket.socket] = None

    def write(
        self, qpn: int, laddr_va: int, raddr: int, rkey: int, length: int, imm: Optional[int]
    ) -> WcStatus:
        """One WRITE of ``length`` bytes at ``laddr_va``; the completion status the responder gave."""
        try:
            if self.sock is None:
                self.sock = socket.create_connection((HOST, self.port), timeout=REPLY_TIMEOUT_S)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock = self.sock
            sock.sendall(_HEADER.pack(qpn, raddr, rkey, length, imm is not None, (imm or 0) & 0xFFFFFFFF))
            answer = _recv_exact(sock, 1)
            if answer is None:
                return WcStatus.RETRY_EXC_ERR
            if answer[0] != _GO:
                return WcStatus(answer[0])
            if length:
                sock.sendall(memoryview((ctypes.c_char * length).from_address(laddr_va)).cast("B"))
            answer = _recv_exact(sock, 1)
            return WcStatus.RETRY_EXC_ERR if answer is None else WcStatus(answer[0])
        except (OSError, ValueError):
            # No answer, a refused connection or a reset: transport retries exhausted, as on a fabric.
            return WcStatus.RETRY_EXC_ERR

    def close(self) -> None:
        """Drop the connection (idempotent)."""
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None


def post(qp: Any, items: tuple) -> None:
    """SoftQP.post for a QP whose peer is across the wire: the same rules, one round trip per WR."""
    dev = qp.device
    cq = qp.cq
    qpn = qp.qp_num
    since = qp._since_cqe
    for wr_id, laddr, length, lkey, raddr, rkey, signaled, imm in items:
        since += 1
        if qp.state is QpState.ERR:
            cq._push(v.Completion(wr_id, WcStatus.WR_FLUSH_ERR, WcOpcode.RDMA_WRITE, 0, qpn), qp, since)
            since = 0
            continue
        mr = dev._by_lkey.get(lkey)
        if mr is None or mr.pd is not qp.pd or laddr < mr.addr or laddr + length > mr.end:
            status = WcStatus.LOC_PROT_ERR
        elif length > dev.max_msg_size:
            status = WcStatus.LOC_LEN_ERR
        else:
            status = qp._wire.write(qp.remote.qp_num, mr.va + (laddr - mr.addr), raddr, rkey, length, imm)
        if status is not WcStatus.SUCCESS:
            cq._push(v.Completion(wr_id, status, WcOpcode.RDMA_WRITE, 0, qpn), qp, since)
            since = 0
            qp.state = QpState.ERR
            continue
        if signaled:
            cq._push(v.Completion(wr_id, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, length, qpn), qp, since)
            since = 0
    qp._since_cqe = since
