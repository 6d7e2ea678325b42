"""What inspect reports about each RDMA device through pyverbs: ports, GIDs, limits, dma-buf support.

Reads only; opens each device briefly and closes it on every path.
"""

from __future__ import annotations

import errno
from typing import Any

from gdrdiag.errors import NotSupported
from gdrdiag.hw.verbs import LINK_LAYER, MTU_BYTES
from gdrdiag.hw.verbs_pyverbs import list_device_names, verbs_error

_DEVICE_FIELDS = (
    "fw_version",
    "node_guid",
    "sys_image_guid",
    "vendor_id",
    "vendor_part_id",
    "hw_ver",
    "max_qp",
    "max_qp_wr",
    "max_cq",
    "max_cqe",
    "max_mr",
    "max_mr_size",
    "max_pd",
    "max_sge",
    "phys_port_cnt",
    "device_cap_flags",
)  # ibv_device_attr fields (infiniband/verbs.h)
_PORT_FIELDS = (
    "state",
    "phys_state",
    "max_mtu",
    "active_mtu",
    "lid",
    "sm_lid",
    "link_layer",
    "active_width",
    "active_speed",
    "gid_tbl_len",
    "max_msg_sz",
    "port_cap_flags",
)  # ibv_port_attr fields


def device_facts(name: str) -> dict:
    """Plain JSON-able facts about one device and its ports (for ``inspect``).

    Raises NotSupported when pyverbs or the device is missing. Values are ints/strings; a
    field the device would not report is absent, never 0.
    """
    names = list_device_names()
    if name not in names:
        raise NotSupported(f"RDMA device {name!r} not found (devices: {', '.join(names)})")
    from pyverbs.device import Context
    from pyverbs.pyverbs_error import PyverbsError

    facts: dict[str, Any] = {"name": name}
    try:
        ctx = Context(name=name)
    except PyverbsError as exc:
        raise verbs_error(exc, "ibv_open_device", name) from None
    with ctx:
        a = ctx.query_device()
        for field in _DEVICE_FIELDS:
            value = getattr(a, field, None)
            if value is None:
                continue
            if isinstance(value, bytes):
                value = value.decode(errors="replace").rstrip("\0")
            facts[field] = value if isinstance(value, str) else int(value)
        facts["ports"] = [_port_facts(ctx, p) for p in range(1, int(a.phys_port_cnt) + 1)]
    return facts


def _port_facts(ctx: Any, p: int) -> dict:
    """One port: its attributes, MTUs in bytes, and every non-zero GID with its type (RoCE v1/v2)."""
    pa = ctx.query_port(p)
    port: dict[str, Any] = {"port": p}
    for field in _PORT_FIELDS:
        value = getattr(pa, field, None)
        if value is not None:
            port[field] = int(value)
    port["link_layer_name"] = LINK_LAYER.get(port.get("link_layer", 0), "unknown")
    for k in ("max_mtu", "active_mtu"):
        if k in port:
            port[f"{k}_bytes"] = MTU_BYTES.get(port[k])
    gids = []
    for idx in range(int(pa.gid_tbl_len)):
        try:
            gid = str(ctx.query_gid(p, idx))
        except Exception:  # an empty or unreadable GID table entry is not a device fact
            continue
        if not int(gid.replace(":", "") or "0", 16):
            continue
        entry: dict[str, Any] = {"index": idx, "gid": gid}
        try:
            entry["type"] = int(ctx.query_gid_type(p, idx))
        except Exception:  # older pyverbs or kernels without GID types: the type stays absent
            pass
        gids.append(entry)
    port["gids"] = gids
    return port


def dmabuf_probe(name: str) -> str:
    """Whether this device can register dma-buf MRs (NCCL's probe: ``ncclIbDmaBufSupport``).

    Calls ``ibv_reg_dmabuf_mr`` with fd -1: EOPNOTSUPP/EPROTONOSUPPORT mean the kernel or provider
    lacks dma-buf MRs (raised as NotSupported); any other error (EBADF is typical) means the path
    exists and only the fd was bad. Returns a one-line description of the outcome. NCCL makes
    the same call in src/transport/net_ib/gdr.cc (https://github.com/NVIDIA/nccl).
    """
    names = list_device_names()
    if name not in names:
        raise NotSupported(f"RDMA device {name!r} not found (devices: {', '.join(names)})")
    from pyverbs.device import Context
    from pyverbs.pd import PD as PvPD
    from pyverbs.pyverbs_error import PyverbsError

    try:
        from pyverbs.mr import DmaBufMR
    except ImportError:
        raise NotSupported("this pyverbs has no DmaBufMR (rdma-core < v34)") from None
    try:
        ctx = Context(name=name)
    except PyverbsError as exc:
        raise verbs_error(exc, "ibv_open_device", name) from None
    with ctx, PvPD(ctx) as pd:
        try:
            mr = DmaBufMR(pd, 0, 0, dmabuf=-1, offset=0)
        except TypeError:
            too_old = "this pyverbs' DmaBufMR cannot take an fd (needs rdma-core >= v44)"
            raise NotSupported(too_old) from None
        except PyverbsError as exc:
            code = int(getattr(exc, "error_code", -1) or -1)
            if code in (errno.EOPNOTSUPP, errno.EPROTONOSUPPORT):
                why = f"ibv_reg_dmabuf_mr: {errno.errorcode[code]}: the kernel or provider has no dma-buf MRs"
                raise NotSupported(f"{why} (kernel >= 5.12 and rdma-core >= v34 needed)") from None
            return (
                f"supported: ibv_reg_dmabuf_mr(fd=-1) failed with "
                f"{errno.errorcode.get(code, str(code))}, i.e. only the fd was rejected"
            )
        mr.close()
        return "supported: ibv_reg_dmabuf_mr(fd=-1) unexpectedly succeeded"
