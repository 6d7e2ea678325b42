"""Opening an RDMA device through a named provider: the one place that knows every provider.

``gdrdiag.hw.verbs`` is the interface; ``verbs_pyverbs`` and ``verbs_soft`` implement it. Keeping the
factory here means the interface imports no implementation, and no implementation imports another."""

from __future__ import annotations

from typing import Any, Optional

from gdrdiag.hw.verbs import Device, resolve_provider
from gdrdiag.hw.verbs_pyverbs import PyverbsDevice


def open_device(
    provider: str,
    name: Optional[str] = None,
    port: int = 1,
    gid_index: Optional[int] = None,
    **soft_options: Any,
) -> Device:
    """Open ``name`` (first device with an active ``port`` when None) through ``provider``."""
    p = resolve_provider(provider)
    if p == "soft":
        from gdrdiag.hw import verbs_soft

        return verbs_soft.SoftDevice(name or "soft0", port=port, gid_index=gid_index or 0, **soft_options)
    return PyverbsDevice(name, port=port, gid_index=gid_index)


def list_device_names() -> list[str]:
    """Names of the RDMA devices libibverbs sees; NotSupported("no RDMA devices: <why>") if none."""
    from gdrdiag.hw import verbs_pyverbs

    return verbs_pyverbs.list_device_names()
