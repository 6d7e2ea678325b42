"""Write tests/real/<machine>/expected.toml: the verdict each run of a machine folder must get.

The verdict follows from what was done to the run (scripts/real/gpu_real_runs.sh names each fault
run after its knob), never from what gdrdiag says of it: run this once per new machine folder,
then read the file and correct by hand what the runs themselves show (a transient, a fault that did
not bite). ``python scripts/real/expectations.py tests/real/<machine>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# run-name fragment -> (verdict, leading code, why); the first fragment that matches wins
RULES = (
    ("p2p-disable-all_reduce-info", "fault", "CAUSE-NCCL-NO-P2P", "NCCL_P2P_DISABLE=1: channels via SHM"),
    ("p2p-disable-sendrecv-info", "fault", "CAUSE-NCCL-NO-P2P", "NCCL_P2P_DISABLE=1: channels via SHM"),
    ("p2p-disable-all_reduce", "partial", "MEASURE-NCCL-LOG", "NCCL_P2P_DISABLE=1 without NCCL_DEBUG=INFO"),
    ("p2p-level-loc", "fault", "CAUSE-NCCL-NO-P2P", "NCCL_P2P_LEVEL=LOC: channels via SHM"),
    ("one-channel", "fault", "CAUSE-NCCL-SETTING", "NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=1"),
    ("eight-channels", "fault", "CAUSE-NCCL-SETTING", "NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=8"),
    ("proto-ll", "fault", "CAUSE-NCCL-SETTING", "NCCL_PROTO=LL"),
    ("socket", "fault", "CAUSE-NCCL-SOCKET-LOCAL", "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1: via NET/Socket"),
    ("pageable", "fault", "CAUSE-PAGEABLE-MEMORY", "bandwidthTest --memory=pageable"),
    ("ucx-no-cuda-ipc-tag_bw-cuda-64M-info", "fault", "CAUSE-UCX-NO-CUDA-IPC", "UCX_TLS=^cuda_ipc: staged"),
    ("ucx-no-cuda-ipc-tag_bw-cuda-10K-info", "fault", "CAUSE-UCX-NO-CUDA-IPC", "UCX_TLS=^cuda_ipc: staged"),
    ("ucx-no-cuda-ipc", "partial", "MEASURE-UCX-PROTO", "UCX_TLS=^cuda_ipc without UCX_PROTO_INFO=y"),
    ("ucx-tcp", "fault", "CAUSE-UCX-NO-CUDA-IPC", "UCX_TLS=tcp,cuda_copy: over TCP"),
    (
        "busy-gpu",
        "slow",
        "PERF-PATH-SLOW",
        "a second process kept a GPU busy; the bundle, collected before it started, cannot show it",
    ),
)


def expectation(name: str, own_bundle: bool = False) -> tuple[str, str, str]:
    """(verdict, lead, why) of one run by its name; ``own_bundle``: collected during the run."""
    if "ucx-busy-gpu" in name:
        return (
            "healthy",
            "",
            "a second process kept the sending GPU busy with matrix products, but UCX moves GPU memory with "
            "the copy engine (cuda_ipc), which time-slicing of the SMs does not slow: no loss to explain",
        )
    if "busy-gpu" in name and own_bundle:
        return (
            "fault",
            "CAUSE-GPU-BUSY",
            "a second process kept a GPU busy; the run's bundle was collected meanwhile",
        )
    for fragment, verdict, lead, why in RULES:
        if fragment in name:
            return verdict, lead, why
    return "healthy", "", "a healthy run"


def main(folder: Path) -> None:
    lines = []
    for run in sorted((folder / "runs").iterdir()):
        verdict, lead, why = expectation(run.name, (run / "bundle.tar.gz").exists())
        lines.append(
            f'[{run.name}]\nverdict = "{verdict}"\n'
            + (f'lead = "{lead}"\n' if lead else "")
            + f'why = "{why}"\n'
        )
    (folder / "expected.toml").write_text("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
