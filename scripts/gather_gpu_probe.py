"""Device-machine probe for gather-bench: run a gather config and write JSON + a compact summary.

Usage: PYTHONPATH=. python3 scripts/gather_gpu_probe.py OUT.json [--kernels k1,k2] [--sizes 656,640]
       [--sweeps ladder,sm] [--quick] [--sweep-kernels best,warp]
"""

import argparse
import sys
import time

from gdrdiag.bench import gather
from gdrdiag.model import Report

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--kernels", default="all")
ap.add_argument("--sizes", default="656")
ap.add_argument("--sweeps", default="ladder")
ap.add_argument("--sweep-kernels", default="best,warp")
ap.add_argument("--quick", action="store_true")
ap.add_argument("--iterations", type=int, default=20)
a = ap.parse_args()
allres, notes = [], []
t0 = time.time()
for size in [int(x) for x in a.sizes.split(",")]:
    cfg = gather.GatherConfig(
        base=gather.Layout(record_bytes=size, stride=size),
        kernels=gather.parse_kernels(a.kernels),
        sweeps=gather.parse_sweeps(a.sweeps),
        sweep_kernels=tuple(a.sweep_kernels.split(",")),
        quick=a.quick,
        iterations=a.iterations,
    )
    run = gather.run(
        cfg, progress=lambda i, n, label: print(f"[{i}/{n}] {label}", file=sys.stderr, flush=True)
    )
    allres += run.results
    notes += run.notes
    for r in run.results:

        def f(k, m=r.metrics):
            return ("%.3f" % m[k]) if m.get(k) is not None else "-"

        print(
            f"{r.key:22s} {r.status.value:6s} R={r.params.record_bytes} st={r.params.stride_bytes} "
            f"off={r.params.base_offset_bytes} pat={r.params.pattern} sm={r.params.sm_limit} "
            f"thr={r.params.threads} sw={r.settings.sweep} "
            f"GBps={r.value and round(r.value, 2)} ce={f('ratio_to_ce')} model={f('model_ratio_to_ce')} "
            f"sms={f('sms_used')} infl={f('bytes_in_flight_per_sm')} lat={f('littles_law_latency_us')} "
            f"{r.reason or ''}",
            flush=True,
        )
    print("\n".join(run.notes), flush=True)
print(f"elapsed {time.time() - t0:.1f} s")
rep = Report(command="gather-probe", results=tuple(allres), notes=tuple(notes))
open(a.out, "w").write(rep.to_json())
