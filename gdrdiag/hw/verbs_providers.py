"""Opening an RDMA device through a named provider: the one place that knows every provider.

``gdrdiag.hw.verbs`` is the interface; ``verbs_pyverbs`` and ``verbs_soft`` implement it. Keeping the
factory here means the interface imports no implementation, and no implementation imports another.
"""

from __future__ import annotations

from typing import Any, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.hw.verbs import PROVIDERS, Device
from gdrdiag.hw.verbs_pyverbs import PyverbsDevice


def provider_choice(name: str) -> tuple[str, str]:
    """(provider, why the provider was chosen, in words).

    ``auto`` -> ``native`` where its C library built and a device exists, else ``pyverbs``;
    anything not in PROVIDERS is a UserInputError.
    """
    n = (name or "auto").strip().lower()
    if n not in PROVIDERS:
        raise UserInputError(f"unknown provider {name!r} (choose from: {', '.join(PROVIDERS)})")
    if n != "auto":
        return n, f"--provider {n}"
    from gdrdiag.hw import verbs_native

    return verbs_native.auto_choice()


def resolve_provider(name: str) -> str:
    """The provider ``name`` means here (see :func:`provider_choice`)."""
    return provider_choice(name)[0]


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
    if p == "native":
        from gdrdiag.hw import verbs_native

        return verbs_native.NativeDevice(name, port=port, gid_index=gid_index, **soft_options)
    return PyverbsDevice(name, port=port, gid_index=gid_index)


def list_device_names() -> list[str]:
    """Names of the RDMA devices libibverbs sees; NotSupported("no RDMA devices: <why>") if none."""
    from gdrdiag.hw import verbs_pyverbs

    return verbs_pyverbs.list_device_names()
