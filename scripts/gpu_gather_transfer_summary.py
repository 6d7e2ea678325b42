"""Does the gather model transfer? One table per record-size sweep Report.

Reads the Reports of ``gather-bench --sweep record-size`` (one per pattern) and prints, per
(pattern, R, kernel), the measured ratio to CE beside three models, all pure functions of the
indices (the seed is in the Report), the CE rate and the plan time the Report recorded:

- ``h100``: the model as calibrated on the H100, parameters unchanged: planned kernels priced
  per sorted segment, no request cap for them, 0.75 G requests/s for the rest;
- ``q075``: the sector-by-sector model (gdrdiag/bench/gather_requests.py) with the H100's rate;
- ``now``: the same with the rate this run measured (the fastest of its warp-kernel gathers of
  16-32-B records, the request-rate calibration among them), which is what the Report's own
  columns say (checked: they must agree).

``q075`` and ``now`` time each batch at the link's rate, without the copy engine's cost per copy
(``ce_fixed_us``, in the rows of Reports written since gather-bench measures it; for older
Reports ``--fit-ce-fixed`` fits it over their 4-32 MiB CE references), plus the kernel's own
fixed cost (pcie_model.batch_ratio).

Also writes ``rows.csv`` and ``summary.json`` (the record-size summary: best / ceiling per size and
pattern under each model) beside the Reports, and with ``--fixture PATH`` the compact fixture the
unit tests read (tests/fixtures/gather/). Runs anywhere: no GPU needed.
Usage: python3 scripts/gpu_gather_transfer_summary.py DIR [--fixture PATH --label TEXT]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gdrdiag.bench import gather as g  # noqa: E402
from gdrdiag.model.params import GatherParams  # noqa: E402
from gdrdiag.model.serde import from_jsonable  # noqa: E402
from gdrdiag.pathmodel import pcie as pcie_model  # noqa: E402

H100_RATE = 0.75


def h100_model(spec, layout, src, link, ce, plan_us, reuse, group) -> tuple[float, float]:
    """(ceiling, prediction) of the model as it stood when calibrated on the H100."""
    if not spec.dedupe:
        m = g.model_metrics(spec, layout, src, link, ce, plan_us, reuse, group)
        return m["ceiling_ratio_to_ce"], m.get("model_kernel_ratio_to_ce") or m["ceiling_ratio_to_ce"]
    R, n = layout.record_bytes, layout.records
    group = group or (g.flat_records_per_load(R) if spec.flat else g.planned_records_per_step(R))
    hist, n_read = g.planned_read_plan(src, layout, group)
    ceiling = pcie_model.predict(hist, R, spec.model_mode, line_aware=spec.line_aware, p=link).ratio_to_ce
    ceiling *= n / max(1, n_read)
    pred = pcie_model.ratio_with_fixed_cost(ceiling, layout.nbytes, ce, (plan_us or 0.0) / max(1, reuse))
    return ceiling, pred


def ce_fixed_from_references(report: dict) -> Optional[float]:
    """The CE's cost per copy fitted over the Report's CE references of at most 32 MiB (us).

    For Reports written before gather-bench measured it (from a 4 MiB and a 1 MiB copy): a
    least-squares line t = fixed + bytes / rate through the sweep's references of 4-32 MiB.
    """
    refs = [
        (r["params"]["copy_bytes"], r["params"]["copy_bytes"] / r["stats"]["median"] / 1e3)
        for r in report["results"]
        if r["key"] == g.CE_KEY and r["status"] == "OK" and r["params"].get("copy_bytes", 1 << 40) <= 32 << 20
    ]
    if len(refs) < 2:
        return None
    n = len(refs)
    mb, mt = sum(b for b, _ in refs) / n, sum(t for _, t in refs) / n
    slope = sum((b - mb) * (t - mt) for b, t in refs) / sum((b - mb) ** 2 for b, _ in refs)
    return max(0.0, mt - slope * mb)


def rows_of(report: dict, fitted_ce_fixed: bool = False) -> list[dict]:
    """One row per OK gather of the record-size sweep and the request-rate calibration.

    The run's read-request rate is the fastest of its warp-kernel gathers of 16-32-B records (the
    calibration among them), as gather-bench takes it.
    """
    rows, rates = [], []
    fixed = ce_fixed_from_references(report) if fitted_ce_fixed else None
    for r in report["results"]:
        p, m = r["params"], r["metrics"]
        sweep = (r.get("settings") or {}).get("sweep")
        if r["status"] != "OK" or not p.get("kernel") or sweep not in ("record-size", "request-rate"):
            continue
        lay = g.layout_of(from_jsonable(GatherParams, p), (r.get("settings") or {}).get("seed"))
        if p["kernel"] == g.REQUEST_RATE_KERNEL and lay.record_bytes <= g.REQUEST_RATE_MAX_RECORD_BYTES:
            src, _ = g.make_indices(lay)
            rates.append(g.measured_request_rate(r["stats"]["median"], lay, src, pcie_model.LinkParams()))
        rows.append(
            dict(
                sweep=sweep,
                pattern=p["pattern"],
                record_bytes=p["record_bytes"],
                kernel=p["kernel"],
                gbytes_per_s=r["stats"]["median"],
                ce_gbytes_per_s=m.get("ce_gbytes_per_s"),
                ratio_to_ce=m.get("ratio_to_ce"),
                plan_us=m.get("plan_us"),
                plan_reuse=p.get("plan_reuse") or 1,
                group=p.get("records_per_step") or 0,
                ceiling_reported=m.get("ceiling_ratio_to_ce"),
                pred_reported=m.get("model_kernel_ratio_to_ce"),
                link_params=p.get("link_params"),
                _layout=lay,
                _rcb=p.get("rcb_bytes") or 128,
                _mps=p.get("mps_bytes") or 256,
                _mrrs=p.get("mrrs_bytes") or 4096,
                ce_fixed_us=m.get("ce_fixed_us") if m.get("ce_fixed_us") is not None else fixed,
            )
        )
    for row in rows:
        row["request_rate"] = max(rates) if rates else None
    return rows


def score(rows: list[dict]) -> None:
    """Add each model's ceiling and prediction to every row (in place)."""
    for row in rows:
        if row["sweep"] != "record-size" or not row["ce_gbytes_per_s"]:
            continue
        lay, spec = row["_layout"], g.KERNELS[row["kernel"]]
        src, _ = g.make_indices(lay)
        base = pcie_model.LinkParams(mps=row["_mps"], mrrs=row["_mrrs"], rcb=row["_rcb"])
        ce, plan, reuse, group = row["ce_gbytes_per_s"], row["plan_us"], row["plan_reuse"], row["group"]
        h100 = pcie_model.LinkParams(
            mps=base.mps, mrrs=base.mrrs, rcb=base.rcb, read_requests_per_ns=H100_RATE
        )
        row["ceiling_h100"], row["pred_h100"] = h100_model(spec, lay, src, h100, ce, plan, reuse, group)
        for name, rate in (("q075", H100_RATE), ("now", row["request_rate"] or H100_RATE)):
            link = pcie_model.LinkParams(
                mps=base.mps, mrrs=base.mrrs, rcb=base.rcb, read_requests_per_ns=rate
            )
            m = g.model_metrics(spec, lay, src, link, ce, plan, reuse, group, row["ce_fixed_us"])
            row[f"ceiling_{name}"] = m["ceiling_ratio_to_ce"]
            row[f"pred_{name}"] = m.get("model_kernel_ratio_to_ce") or m["ceiling_ratio_to_ce"]


def summary(rows: list[dict]) -> list[dict]:
    """Per (pattern, R): the best kernel over its ceiling, and the planned kernel's pred / meas, per model."""
    out = []
    groups: dict = {}
    for row in rows:
        if row["sweep"] == "record-size" and row.get("ceiling_now"):
            groups.setdefault((row["pattern"], row["record_bytes"]), []).append(row)
    for (pattern, R), rs in sorted(groups.items()):
        best = max(rs, key=lambda r: r["ratio_to_ce"])
        planned = [r for k in ("planned-flat", "planned-lines") for r in rs if r["kernel"] == k]
        mine = best if best["kernel"] in ("planned-flat", "planned-lines") else (planned or [None])[0]
        item = dict(
            pattern=pattern, record_bytes=R, best_kernel=best["kernel"], best_ratio=best["ratio_to_ce"]
        )
        for name in ("h100", "q075", "now"):
            item[f"best_over_ceiling_{name}"] = best["ratio_to_ce"] / best[f"ceiling_{name}"]
            if mine is not None:
                item["planned_kernel"] = mine["kernel"]
                item[f"pred_over_meas_{name}"] = mine[f"pred_{name}"] / mine["ratio_to_ce"]
        out.append(item)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--fixture", type=Path)
    ap.add_argument("--label", default="")
    ap.add_argument(
        "--fit-ce-fixed",
        action="store_true",
        help="Reports without ce_fixed_us: fit the CE's cost per copy over their 4-32 MiB references",
    )
    args = ap.parse_args()
    rows: list[dict] = []
    device = ""
    for path in sorted(args.dir.glob("rs-*.json")):
        report = json.loads(path.read_text())
        rows += rows_of(report, args.fit_ce_fixed)
        gpus = (report.get("machine") or {}).get("gpus") or []
        device = device or (gpus[0].get("name", "") if gpus else "")
    score(rows)
    # The Report's own columns are the 'now' model: say so, or say where they differ.
    for row in rows:
        if row.get("ceiling_now") and row["ceiling_reported"]:
            if abs(row["ceiling_now"] / row["ceiling_reported"] - 1) > 1e-6:
                print(
                    f"MISMATCH {row['pattern']} {row['record_bytes']} {row['kernel']}: "
                    f"{row['ceiling_now']} vs reported {row['ceiling_reported']}"
                )
    rates = sorted({(r["pattern"], r["request_rate"]) for r in rows if r["request_rate"]})
    print(f"device: {device or 'see gpu.txt'}; measured read-request rate (G/s) per sweep: {rates}")
    print("pattern R kernel | x CE | ceiling h100/q075/now | pred/meas h100/q075/now")
    for r in rows:
        if r.get("ceiling_now"):
            print(
                f"{r['pattern']} {r['record_bytes']} {r['kernel']} | {r['ratio_to_ce']:.3f} | "
                f"{r['ceiling_h100']:.3f} {r['ceiling_q075']:.3f} {r['ceiling_now']:.3f} | "
                f"{r['pred_h100'] / r['ratio_to_ce']:.3f} {r['pred_q075'] / r['ratio_to_ce']:.3f} "
                f"{r['pred_now'] / r['ratio_to_ce']:.3f}"
            )
    summ = summary(rows)
    print("pattern R best | best/ceiling h100 q075 now | planned pred/meas h100 q075 now")
    for s in summ:
        pm_ = " ".join(f"{s.get(f'pred_over_meas_{n}', float('nan')):.3f}" for n in ("h100", "q075", "now"))
        print(
            f"{s['pattern']} {s['record_bytes']} {s['best_kernel']} | "
            + " ".join(f"{s[f'best_over_ceiling_{n}']:.3f}" for n in ("h100", "q075", "now"))
            + f" | {s.get('planned_kernel', '-')} {pm_}"
        )
    public = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    with open(args.dir / "rows.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=sorted({k for r in public for k in r}))
        w.writeheader()
        w.writerows(public)
    (args.dir / "summary.json").write_text(json.dumps(dict(device=device, rows=summ), indent=1))
    if args.fixture:
        keep = (
            "sweep",
            "pattern",
            "record_bytes",
            "kernel",
            "gbytes_per_s",
            "ce_gbytes_per_s",
            "ratio_to_ce",
            "plan_us",
            "plan_reuse",
            "group",
            "ce_fixed_us",
            "request_rate",
        )
        lay = rows[0]["_layout"] if rows else g.Layout()
        fixture = dict(
            label=args.label,
            device=device,
            link=dict(mps=rows[0]["_mps"], mrrs=rows[0]["_mrrs"], rcb=rows[0]["_rcb"]) if rows else {},
            request_rate=next((r["request_rate"] for r in rows if r["request_rate"]), None),
            slots=lay.slots,
            records=lay.records,
            seed=lay.seed,
            rows=[{k: r[k] for k in keep} for r in rows],
        )
        args.fixture.parent.mkdir(parents=True, exist_ok=True)
        args.fixture.write_text(json.dumps(fixture, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
