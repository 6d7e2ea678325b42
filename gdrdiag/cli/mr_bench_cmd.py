"""``gdrdiag mr-bench``: MR registration and RDMA WRITE loops (perftest-style options)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from gdrdiag.bench.gpus import choose_gpus
from gdrdiag.cli.application import app
from gdrdiag.cli.bench_command import BenchCommand, Output, run_bench_command
from gdrdiag.cli.cases import CASES_HELP, LIST_HELP
from gdrdiag.cli.common import handles_errors, split_list, wants_json
from gdrdiag.cli.mr_bench_output import MrRun, afterword, failed, loop_cost_note, report, text
from gdrdiag.cli.mr_peer import Peer, is_loopback, peer_options, provider_options
from gdrdiag.cli.progress import QUIET_HELP, Progress
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.model.vocabulary import AccessFlags, RelaxedOrdering
from gdrdiag.model.words import NUMA_HELP
from gdrdiag.units import parse_size, parse_size_list

if TYPE_CHECKING:
    from gdrdiag.bench.mr_config import MrMode
    from gdrdiag.model.results import BenchResult

DEFAULT_MEMORY = "device,pinned"
MAX_LINK_GBPS = 100_000  # --link-gbps: 100 Tb/s, past any link made
SOFT_HINT = "use --provider soft to run the whole pipeline in software (not a hardware measurement)"
SOFT_TWO_HOST_HINT = (
    "to try two-machine mode without a NIC, run both ends on this machine with --provider soft "
    "(--server, and --connect 127.0.0.1; software, not a hardware measurement)"
)


@app.command("mr-bench")
@handles_errors
def mr_bench(
    ctx: typer.Context,
    cases: Optional[list[str]] = typer.Argument(
        None, help=CASES_HELP, show_default=False, metavar="[CASE]..."
    ),
    list_cases: bool = typer.Option(False, "--list", help=LIST_HELP),
    provider: str = typer.Option(
        "auto",
        "--provider",
        help="auto (native where its C loop built and a device exists, else pyverbs), native, pyverbs, "
        "or soft (software, no NIC).",
    ),
    ib_dev: Optional[str] = typer.Option(
        None, "--ib-dev", "-d", help="RDMA device (default: first with the port up)."
    ),
    ib_port: int = typer.Option(1, "--ib-port", "-i", help="Port of the RDMA device."),
    gid_index: Optional[int] = typer.Option(None, "--gid-index", "-x", help="GID index (default: auto)."),
    peer_dev: Optional[str] = typer.Option(
        None, "--peer-dev", help="Loopback to another device/VF of this machine."
    ),
    peer_port: Optional[int] = typer.Option(None, "--peer-port", help="Loopback to another port."),
    memory: str = typer.Option(
        DEFAULT_MEMORY,
        "--memory",
        "-G",
        help="Destination memory kinds: device, managed, pinned, pinned-wc, registered, pageable "
        "(-m is perftest's MTU).",
    ),
    src_memory: Optional[str] = typer.Option(
        None, "--src-memory", help="Source memory kind (default: same)."
    ),
    reg: str = typer.Option(
        "mr", "--reg", help="Registration paths: mr (ibv_reg_mr; GPU needs nvidia-peermem), dmabuf."
    ),
    access: str = typer.Option(
        "local_write,remote_write",
        "--access",
        help="MR access flags by name (local_write, remote_write, remote_read, relaxed_ordering, ...).",
    ),
    relaxed_ordering: Optional[bool] = typer.Option(
        None,
        "--relaxed-ordering/--no-relaxed-ordering",
        help="Register MRs with IBV_ACCESS_RELAXED_ORDERING (default: off).",
        show_default=False,
    ),
    ro_ab: bool = typer.Option(
        False, "--ro-ab", help="Run RO off and on on the same buffers/QPs; give a verdict."
    ),
    matrix: bool = typer.Option(
        False, "--matrix", help="Every memory kind x reg path x RO off/on, with findings."
    ),
    size: Optional[str] = typer.Option(None, "--size", "-s", help="Message size (default 64K; matrix 1M)."),
    all_sizes: bool = typer.Option(False, "--all", "-a", help="Sweep 2 B .. 8 MiB."),
    qps: Optional[int] = typer.Option(None, "--qp", "-q", help="QPs (default 1; matrix 4)."),
    tx_depth: int = typer.Option(128, "--tx-depth", "-t", help="Outstanding WRs per QP."),
    mtu: Optional[int] = typer.Option(
        None,
        "--mtu",
        "-m",
        help="Path MTU in bytes: 256, 512, 1024, 2048 or 4096, at most the port's (default: the port's).",
    ),
    cpu_freq: bool = typer.Option(
        False,
        "--cpu-freq",
        "-F",
        help="Accepted for perftest command lines (there: no CPU-frequency warning); gdrdiag never "
        "stops on one.",
    ),
    post_list: int = typer.Option(1, "--post-list", "-l", help="WRs per ibv_post_send."),
    cq_mod: Optional[int] = typer.Option(
        None, "--cq-mod", "-Q", help="Signal one WR in this many, 1 .. -t (default min(100, half of -t))."
    ),
    iters: Optional[int] = typer.Option(
        None, "--iters", "-n", help="WRs per QP per run (default 5000; latency 1000)."
    ),
    duration: Optional[float] = typer.Option(None, "--duration", "-D", help="Seconds per run instead of -n."),
    repeats: int = typer.Option(3, "--repeats", help="Measured runs per point (median reported)."),
    latency: bool = typer.Option(False, "--latency", help="Latency mode: one WRITE at a time, percentiles."),
    blocks: Optional[int] = typer.Option(
        None, "--blocks", help="Block mode: N blocks of -s as one WR each, as post lists, as one WR."
    ),
    offset: int = typer.Option(
        0, "--offset", help="Start offset of source and destination (alignment sweeps)."
    ),
    mr_size: Optional[str] = typer.Option(None, "--mr-size", help="Refuse runs that would need a larger MR."),
    write_with_imm: bool = typer.Option(
        False, "--write-with-imm", help="RDMA WRITE_WITH_IMM (loopback only)."
    ),
    reg_cost: bool = typer.Option(
        False, "--reg-cost", help="Registration cost per kind and size; reuse vs per transfer."
    ),
    reg_sizes: str = typer.Option("4K,64K,1M,16M,256M,1G", "--reg-sizes", help="Sizes for --reg-cost."),
    loop_cost: bool = typer.Option(
        False,
        "--loop-cost",
        help="The loops' own WR rates: Python over the soft provider and C over a null provider (no NIC).",
    ),
    link_gbps: float = typer.Option(400.0, "--link-gbps", help="Link rate the loop cost is judged against."),
    server: bool = typer.Option(False, "--server", help="Two machines: be the target; wait for --connect."),
    connect: Optional[str] = typer.Option(
        None, "--connect", help="Two machines: write to the server on HOST."
    ),
    tcp_port: int = typer.Option(18515, "--port", "-p", help="TCP port of the QP exchange."),
    timeout: float = typer.Option(
        10.0,
        "--timeout",
        help="Seconds without a completion or peer message before giving up (--connect: also how long "
        "a refused connection is retried while the server starts).",
    ),
    accept_timeout: float = typer.Option(
        60.0, "--accept-timeout", help="--server: seconds to wait for the client."
    ),
    bind: str = typer.Option(
        "127.0.0.1", "--bind", help="--server: the address to listen on (0.0.0.0 for every interface)."
    ),
    secret_file: Optional[Path] = typer.Option(
        None,
        "--secret-file",
        help="--server/--connect: a file both sides hold (16+ bytes, e.g. from /dev/urandom); "
        "each side must prove it has the same one before anything is exchanged.",
    ),
    gpu: Optional[int] = typer.Option(
        None, "--gpu", help="CUDA device ordinal for GPU memory kinds (default 0).", show_default=False
    ),
    gpus: Optional[str] = typer.Option(
        None,
        "--gpus",
        help="GPU memory kinds on each of these GPUs in turn (all, or ordinals such as 0,2 or 0-3); "
        "host memory kinds once.",
        show_default=False,
    ),
    numa: str = typer.Option("auto", "--numa", help=NUMA_HELP),
    inline: int = typer.Option(
        0, "--inline", "-I", help="native: post WRs up to this many bytes with IBV_SEND_INLINE (0: never)."
    ),
    time_calls: bool = typer.Option(
        False,
        "--time-calls",
        help="native: time every ibv_post_send/ibv_poll_cq (two clock reads each).",
    ),
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the results as JSON here."),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP + " (no short -q: that is perftest's QPs)"),
) -> None:
    """RDMA WRITE loops into every memory kind; relaxed ordering A/B; registration cost.

    The command people type: `gdrdiag mr-bench --relaxed-ordering`.

    Without an RDMA device it says so and exits 1, unless --provider soft is given. Cases that
    cannot run here (GPU memory without a GPU) are WAIVED with the reason; only those exit 0.
    """
    from gdrdiag.bench import mr as mrb
    from gdrdiag.bench.mr_config import choose_provider
    from gdrdiag.model.words import parse_memory_kind, parse_numa

    provider_name, provider_why = choose_provider(provider)
    if (inline or time_calls) and provider_name != "native":
        raise UserInputError(f"--inline and --time-calls need the native provider ({provider_why})")
    mode = _Mode(latency, reg_cost, loop_cost, blocks, matrix, memory, reg)
    if list_cases or cases:
        mode = _from_cases(ctx, cases, list_cases, provider_name, mode)
    _refuse_contradictions(mode, json_out, server, connect, all_sizes, size, iters, duration, link_gbps)
    _refuse_unused_provider(provider, mode.loop_cost)
    _refuse_soft_device(provider_name, ib_dev, peer_dev)
    peer = peer_options(
        server, connect, tcp_port, bind, accept_timeout, secret_file, write_with_imm, provider_name
    )
    ro, base_access = relaxed_ordering_setting(relaxed_ordering, ro_ab, mode.matrix, access)
    ordinals = choose_gpus(gpus, gpu, _one_gpu_only(mode, bool(server or connect)))
    mode, no_gpu_note = _soft_default_memory(ctx, mode, provider_name, bool(server or connect), gpu or 0)
    sizes = (
        mrb.SWEEP_SIZES
        if all_sizes
        else (parse_size(size or ("1M" if mode.matrix else "64K"), what="--size"),)
    )
    if iters is None and duration is None:
        iters = 1000 if mode.latency else 5000
    cfg = mrb.MrBenchConfig(
        provider=provider_name,
        device=ib_dev,
        port=ib_port,
        gid_index=gid_index,
        peer_device=peer_dev,
        peer_port=peer_port if peer_port is not None else ib_port,
        kinds=tuple(parse_memory_kind(k) for k in split_list(mode.memory, "--memory")),
        reg_paths=split_list(mode.reg, "--reg"),
        src_kind=parse_memory_kind(src_memory) if src_memory else None,
        access=base_access,
        ro=ro,
        mtu=mtu,
        sizes=sizes,
        qps=qps if qps is not None else (4 if mode.matrix else 1),
        tx_depth=tx_depth,
        post_list=post_list,
        cq_mod=cq_mod,
        iterations=iters,
        duration=duration,
        repeats=repeats,
        latency=mode.latency,
        write_with_imm=write_with_imm,
        blocks=mode.blocks,
        offset=offset,
        mr_size=parse_size(mr_size, what="--mr-size") if mr_size else None,
        gpu=gpu or 0,
        timeout_s=timeout,
        reg_sizes=tuple(parse_size_list(reg_sizes, what="--reg-sizes")),
        only=mode.only,
        soft_options=provider_options(provider_name, inline, time_calls, bool(server or connect)),
        provider_note=provider_why,
        numa=parse_numa(numa),
    )
    cfg.check_numa()
    if mode.matrix:
        cfg = mrb.matrix_config(cfg)
    cfg.validate()
    said = f"provider: {provider_name} ({provider_why})"
    command = _command(cfg, ordinals or (cfg.gpu,), mode, peer, link_gbps, quiet, [said, no_gpu_note])
    # --json-out was checked before the run (handles_errors, with the shared --force); mr-bench has
    # no --force of its own, and its write replaces the file as it always has.
    run_bench_command(ctx, command, Output(json_out, force=True, quiet=quiet))


def _command(
    cfg, ordinals: tuple[int, ...], mode: "_Mode", peer: Peer, link_gbps: float, quiet: bool, notes: list[str]
) -> BenchCommand["MrRun"]:
    """mr-bench as the shared tail runs it: the run on each GPU, its Report, text, exit rule and afterword.

    ``notes`` are the text's first notes (the provider, the no-GPU note); with ``--loop-cost`` the
    loop-cost sentence, made from the rows, takes the provider's place.
    """
    loop, run_on = _gpu_runs(cfg, ordinals, mode, peer, link_gbps, quiet)

    def finished(results: list["BenchResult"]) -> MrRun:
        lead = loop_cost_note(results, link_gbps) if mode.loop_cost else notes[0]
        return MrRun(results, [lead, *notes[1:]])

    return BenchCommand(
        name="mr-bench",
        steps=None,  # each GPU's run plans its own steps (_progress)
        measure=lambda progress: finished(loop.run(run_on)),
        partial=lambda partial: finished(loop.tag_partial(partial)),
        report=report,
        text=functools.partial(text, mode.matrix),
        failed=failed,
        afterword=afterword,
    )


def relaxed_ordering_setting(
    relaxed_ordering: Optional[bool], ro_ab: bool, matrix: bool, access: str
) -> tuple[RelaxedOrdering, AccessFlags]:
    """The one relaxed-ordering setting and the access flags without the RO bit, from the options.

    RO can be asked for three ways (``--relaxed-ordering``, ``--ro-ab``, ``relaxed_ordering`` in
    ``--access``); they are folded here, at the boundary, into one value the bench asks
    (``cfg.ro.access(cfg.access)``). Options that contradict each other are refused, never overridden.
    """
    from gdrdiag.model.words import parse_access

    flags = parse_access(access)
    in_access = bool(flags & AccessFlags.RELAXED_ORDERING)
    base = flags & ~AccessFlags.RELAXED_ORDERING
    if relaxed_ordering is False and in_access:
        raise UserInputError("--no-relaxed-ordering contradicts relaxed_ordering in --access; drop one")
    both = "--matrix" if matrix else "--ro-ab" if ro_ab else None
    if both is not None:
        if relaxed_ordering is not None:
            flag = "--relaxed-ordering" if relaxed_ordering else "--no-relaxed-ordering"
            raise UserInputError(f"{both} runs RO off and on itself; drop {flag}")
        if in_access:
            raise UserInputError(f"{both} runs RO off and on itself; drop relaxed_ordering from --access")
        return RelaxedOrdering.AB, base
    return (RelaxedOrdering.ON if relaxed_ordering or in_access else RelaxedOrdering.OFF), base


def _gpu_here(cfg) -> bool:
    """Whether the GPU kinds asked for can run here (asked only when one is asked for)."""
    if not any(k.needs_gpu for k in (*cfg.kinds, *((cfg.src_kind,) if cfg.src_kind else ()))):
        return True
    from gdrdiag.bench.preflight import gpu_missing

    return gpu_missing(cfg.gpu) is None


def _progress(cfg, mode: "_Mode", server: bool, connect: Optional[str], quiet: bool) -> Progress:
    """The run's progress lines: its planned steps, and for ``--loop-cost`` each step's planned seconds."""
    steps = planned_points(cfg, mode, server, connect, gpu_here=_gpu_here(cfg))
    plan = loop_cost_plan(cfg) if mode.loop_cost else None
    return Progress("mr-bench", steps, enabled=not quiet, plan=plan)


def planned_points(
    cfg, mode: "_Mode", server: bool, connect: Optional[str], gpu_here: bool = True
) -> Optional[int]:
    """How many progress steps the run will report; None where it is not known (``--server``).

    A loopback run's total is the sum of its cases' steps (``mr.planned_steps``). Cases WAIVED here
    (a GPU kind without a GPU) take no steps, so they are not planned: counting them stopped `-a` at
    [23/69] and put the ETA of the measured cases at 0 s. ``--loop-cost`` and ``--connect`` are not
    run case by case: their steps are the loop-cost plan's and one per measured run to the server.
    """
    from gdrdiag.bench import mr as mrb

    if server:
        return None
    if mode.loop_cost:
        return len(loop_cost_plan(cfg))
    if connect:  # one step per measured run to the server
        return cfg.repeats
    return mrb.planned_steps(mrb.MrPlan(cfg, mode.name, gpu_here))


def loop_cost_plan(cfg) -> tuple[float, ...]:
    """Planned seconds of each ``--loop-cost`` step: the Python loop's, then the C loop's (if built).

    The steps differ in length (the C loop adds a timed-calls run) and the C loop takes none when
    its library is absent (one WAIVED result): counting 8 equal steps there said ETA 22 s at [2/8]
    with three 3 s steps left, and the run ended at [4/8].
    """
    from gdrdiag.bench import loop_cost_native, mr_loop_cost

    common = dict(duration=loop_cost_duration(cfg), tx_depth=cfg.tx_depth, repeats=cfg.repeats)
    return mr_loop_cost.planned_seconds(**common) + loop_cost_native.planned_seconds(**common)


def loop_cost_duration(cfg) -> float:
    """Seconds per timed run of ``--loop-cost`` (``-D``, else 1 s)."""
    return cfg.duration or 1.0


@dataclass
class _Mode:
    """Which mr-bench mode runs, on which memory kinds and registration paths (options or cases)."""

    latency: bool
    reg_cost: bool
    loop_cost: bool
    blocks: Optional[int]
    matrix: bool
    memory: str
    reg: str
    only: Optional[frozenset[str]] = None

    @property
    def name(self) -> "MrMode":
        """The run's mode (bw, latency, blocks, reg, loop)."""
        from gdrdiag.bench.mr_config import MrMode

        if self.reg_cost:
            return MrMode.REG
        if self.latency:
            return MrMode.LATENCY
        if self.blocks is not None:
            return MrMode.BLOCKS
        if self.loop_cost:
            return MrMode.LOOP
        return MrMode.BW


def _one_gpu_only(mode: "_Mode", two_host: bool) -> Optional[str]:
    """Why this mode runs one GPU by nature (``--gpus`` refused), or None."""
    if mode.loop_cost:
        return "--loop-cost measures no GPU"
    return "--server/--connect run one GPU per end" if two_host else None


def _gpu_runs(cfg, ordinals: tuple[int, ...], mode: "_Mode", peer, link_gbps: float, quiet: bool):
    """The run on each GPU in turn (one GPU: the run): every kind on the first, GPU memory on the others.

    Host memory is the same memory whichever GPU is current, so its rows are measured once; each GPU
    memory row records its GPU. Returns the GPU loop and the run on one GPU (``loop.run(run_on)``),
    each GPU's run with its own progress lines.
    """
    import dataclasses

    from gdrdiag.bench.gpus import GpuLoop
    from gdrdiag.bench.mr_setup import uses_local_gpu

    gpu_kinds = tuple(k for k in cfg.kinds if k.needs_gpu)
    configs = {
        g: dataclasses.replace(cfg, gpu=g, kinds=cfg.kinds if i == 0 or not gpu_kinds else gpu_kinds)
        for i, g in enumerate(ordinals)
    }
    loop = GpuLoop(tuple(g for g in ordinals if g == ordinals[0] or gpu_kinds), uses_local_gpu)

    def run_on(g: int) -> list:
        progress = _progress(configs[g], mode, bool(peer.server), peer.connect, quiet)
        return _run(configs[g], mode, peer, link_gbps, progress)

    return loop, run_on


def _run(cfg, mode: _Mode, peer: Peer, link_gbps: float, steps: Progress) -> list:
    """Run the chosen mode (loop cost, server, client, or a loopback mode) with progress on stderr."""
    from gdrdiag.bench import mr as mrb

    progress = steps.step
    try:
        if mode.loop_cost:
            common = dict(
                duration=loop_cost_duration(cfg),
                tx_depth=cfg.tx_depth,
                repeats=cfg.repeats,
                link_gbps=link_gbps,
                progress=progress,
            )
            return mrb.placed_loop_cost(cfg.numa, **common)
        if peer.server:
            return mrb.serve(
                cfg,
                port=peer.port,
                bind=peer.bind,
                accept_timeout_s=peer.accept_timeout,
                progress=steps.note,
                secret=peer.secret,
            )
        if peer.connect:
            # A server that is still starting refuses the connection: keep trying for --timeout seconds.
            return mrb.run_client(
                cfg,
                peer.connect,
                port=peer.port,
                retry_s=cfg.timeout_s,
                progress=progress,
                secret=peer.secret,
            )
        return mrb.run(cfg, mode=mode.name, progress=progress)
    except NotSupported as exc:
        if cfg.provider in ("pyverbs", "native") and exc.reason.startswith("no RDMA devices"):
            hint = SOFT_HINT
            if peer.server or peer.connect:
                hint = SOFT_TWO_HOST_HINT
                if not is_loopback(peer.connect or peer.bind):
                    hint = "two-machine mode across machines needs an RDMA device on both"
            raise NotSupported(f"{exc.reason}. {hint}") from None
        raise


def _refuse_unused_provider(provider: str, loop_cost: bool) -> None:
    """``--loop-cost`` opens no device (its loops run over soft and null providers): refuse a --provider."""
    if loop_cost and provider.strip().lower() != "auto":
        why = f"--loop-cost times its loops over built-in null providers, never --provider {provider[:20]}"
        raise UserInputError(f"{why}; drop --provider")


def _refuse_soft_device(provider_name: str, ib_dev: Optional[str], peer_dev: Optional[str]) -> None:
    """The soft provider opens no RDMA device: a -d or --peer-dev with it is a contradiction."""
    if provider_name == "soft" and (ib_dev is not None or peer_dev is not None):
        raise UserInputError(
            f"--provider soft opens no RDMA device; drop {'-d' if ib_dev is not None else '--peer-dev'} "
            "(or use --provider pyverbs/native with it)"
        )


def _soft_default_memory(
    ctx: typer.Context, mode: _Mode, provider_name: str, two_host: bool, gpu: int
) -> tuple[_Mode, str]:
    """A plain soft run with the default --memory: see _soft_without_gpu; anything else unchanged."""
    memory_source = ctx.get_parameter_source("memory")
    memory_given = memory_source is not None and memory_source.name != "DEFAULT"
    plain_soft = provider_name == "soft" and not (mode.matrix or two_host)
    if plain_soft and not memory_given and mode.memory == DEFAULT_MEMORY:
        return _soft_without_gpu(mode, gpu)
    if provider_name == "soft" and two_host and not memory_given and mode.memory == DEFAULT_MEMORY:
        import dataclasses

        note = (
            "soft provider, two-machine mode over TCP on 127.0.0.1: pageable host memory "
            "(the soft wire moves host memory)"
        )
        return dataclasses.replace(mode, memory="pageable"), note
    return mode, ""


def _soft_without_gpu(mode: _Mode, gpu: int) -> tuple[_Mode, str]:
    """The soft provider's default kinds on a machine without a GPU: pageable host memory as well.

    ``device`` and ``pinned`` need a CUDA context; without one they are WAIVED with the reason and
    pageable memory is measured, so ``gdrdiag mr-bench --provider soft`` (the advice GDR-NO-RDMA
    gives on a machine without an RDMA device) measures something wherever it is given.
    """
    import dataclasses

    from gdrdiag.bench.preflight import gpu_missing

    why = gpu_missing(gpu)
    if why is not None:
        note = f"no GPU ({why}): pageable host memory measured beside the GPU kinds"
        return dataclasses.replace(mode, memory=f"{DEFAULT_MEMORY},pageable"), note
    return mode, ""


def _from_cases(
    ctx: typer.Context, cases: Optional[list[str]], list_cases: bool, provider_name: str, mode: _Mode
) -> _Mode:
    """``--list`` (prints and exits), or the mode, kinds and paths that case selectors name."""
    from gdrdiag.bench.mr_config import MrMode
    from gdrdiag.bench.registry import mr_registry, mr_selection

    registry = mr_registry()
    if list_cases:
        from gdrdiag.bench.preflight import probe_capabilities
        from gdrdiag.cli.cases import print_case_list

        print_case_list(ctx, registry, probe_capabilities(provider_name), wants_json(ctx), cases)
    selected = registry.select(cases or ())
    chosen = mr_selection(selected)
    # each mode flag given, with the mode it asks for (--matrix is bandwidth, over every kind and path)
    given = [
        (flag, m)
        for flag, m, on in (
            ("--latency", MrMode.LATENCY, mode.latency),
            ("--blocks", MrMode.BLOCKS, mode.blocks is not None),
            ("--reg-cost", MrMode.REG, mode.reg_cost),
            ("--loop-cost", MrMode.LOOP, mode.loop_cost),
            ("--matrix", None, mode.matrix),
        )
        if on
    ]
    if given and [m for _, m in given] != [chosen.mode]:
        raise UserInputError(f"the selected cases are {chosen.mode} cases; drop {given[0][0]}")
    if mode.memory != DEFAULT_MEMORY or mode.reg != "mr":
        raise UserInputError("give cases or --memory/--reg, not both (a case names its memory and path)")
    memory, reg = mode.memory, mode.reg
    if chosen.kinds:
        memory, reg = ",".join(k.value for k in chosen.kinds), ",".join(chosen.reg_paths)
    return _Mode(
        latency=chosen.mode is MrMode.LATENCY,
        reg_cost=chosen.mode is MrMode.REG,
        loop_cost=chosen.mode is MrMode.LOOP,
        blocks=mode.blocks if mode.blocks is not None else (64 if chosen.mode is MrMode.BLOCKS else None),
        matrix=False,
        memory=memory,
        reg=reg,
        only=frozenset(c.key for c in selected),
    )


def _refuse_contradictions(
    mode: _Mode,
    json_out: Optional[Path],
    server: bool,
    connect: Optional[str],
    all_sizes: bool,
    size: Optional[str],
    iters: Optional[int],
    duration: Optional[float],
    link_gbps: float,
) -> None:
    """One line, exit 2, before anything is opened, for options that cannot go together or are no value.

    ``--link-gbps`` inf or NaN ended the whole ``--loop-cost`` run in a traceback, and 0 or a negative
    rate ran it to say nothing: a rate is a finite number of Gb/s above 0.
    """
    if not (math.isfinite(link_gbps) and 0 < link_gbps <= MAX_LINK_GBPS):
        raise UserInputError(f"--link-gbps {link_gbps:g}: give a link rate in (0, {MAX_LINK_GBPS}] Gb/s")
    if json_out is not None and json_out.parent and not json_out.parent.exists():
        raise UserInputError(f"--json-out: directory {json_out.parent} does not exist")
    if server and connect:
        raise UserInputError("--server and --connect are two ends; give one")
    modes = [
        m
        for m, on in (
            ("--matrix", mode.matrix),
            ("--latency", mode.latency),
            ("--blocks", mode.blocks is not None),
            ("--reg-cost", mode.reg_cost),
            ("--loop-cost", mode.loop_cost),
        )
        if on
    ]
    if len(modes) > 1:
        raise UserInputError(f"{' and '.join(modes)} are separate modes; pick one")
    if all_sizes and size is not None:
        raise UserInputError("-a sweeps all sizes; drop -s")
    if iters is not None and duration is not None:
        raise UserInputError("give either -n or -D, not both")
