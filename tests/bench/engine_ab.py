#!/usr/bin/env python3
"""Two engines against the same programs, in one run: does the newer one gain less anywhere?

    tests/bench/engine_ab.py ROOT

ROOT holds one folder per workload, each with an `old` and a `new` output folder of
`tests/bench/bench --method switch` (one libencore.so each, `--encore-lib` for the old one;
scripts/gpu/engine-ab makes them). For each workload and engine, the ratios of every active block
to its neighbouring passive blocks (the in-process switch) give a median and a bootstrap 95%
interval; new / old is the ratio of the two medians with its interval (both engines resampled).

Verdicts, per workload:
  "gains less"    the old engine gained (its interval lies below 1) and new / old lies above 1
                  at 95%: the newer engine is worse there (issue 28's acceptance forbids it);
  "gains more"    new / old lies below 1 at 95%;
  "same"          otherwise (no difference shown).
The ratios inside one process share its machine state, so the two engines are compared by their
in-process ratios, never by their absolute step times (processes differ by up to 30%).

Even so, a ratio depends on the host's speed: where the host is slower, encore saves more of a
step (H200, 2026-11-28, call 52: every old-engine process of the cuBLAS loop ran its passive blocks
25-45% slower than every new-engine one, and "gains less" came out 1.076 [1.043, 1.104], where the
call before, one process each, read "gains more" 0.902 [0.852, 0.980]). So the table shows each
engine's passive step (the median of each process's passive blocks, range over processes), and
where every process of one engine ran them more than HOST_SPREAD slower than every process of the
other, a verdict becomes "hosts differed": not counted either way; run more processes. Beside it,
each process's own sample of a held launch's host time (the report's "encore time per held
launch", issue 31), range over processes: it follows the host as much as the engine.

Folders other than `old` and `new` under a workload (scripts/gpu/engine-ab's MORE_REVS: a bisection,
a variant) get a second table: each engine's ratio, each process's own median (processes of one
engine differ by up to ±5%: a difference that does not hold across processes is not read as one) and
engine / old with its interval.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_paired as bp  # noqa: E402


def rows_of(folder):
    path = os.path.join(folder, "paired-results.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def switch_rows(rows, workload):
    """The switch processes of `workload` that ran to the end (every variant)."""
    return [r for r in rows if r.get("workload") == workload and r.get("method") == "switch" and r.get("ok")]


def engine_ratios(rows, workload):
    """Active / passive block ratios of the encore switch processes of `workload`; their checksums,
    the share of launches replayed, graphs captured and of them never replayed (the process
    summaries, both halves; an engine without that count reports 0)."""
    ratios, sums, seen, replayed, caps, never = [], set(), 0, 0, 0, 0
    for r in switch_rows(rows, workload):
        if r.get("result", {}).get("checksum"):
            sums.add(r["result"]["checksum"])
        if bp.base_variant(r.get("variant", "")) != "encore":
            continue
        ratios += bp.block_ratios(r["blocks"], "A")
        e = r.get("encore") or {}
        seen += int(e.get("launches_seen") or 0)
        replayed += int(e.get("launches_replayed") or 0)
        caps += int(e.get("graphs_captured") or 0)
        never += int(e.get("captured_never_replayed") or 0)
    return ratios, sums, (100.0 * replayed / seen if seen else None), (caps, never)


HOST_SPREAD = 0.10


def passive_steps(rows, workload):
    """Each encore switch process's median passive block (us a step)."""
    out = []
    for r in switch_rows(rows, workload):
        if bp.base_variant(r.get("variant", "")) != "encore":
            continue
        p = [b["us"] for b in r["blocks"] if b["state"] == "P"]
        if p:
            out.append(statistics.median(p))
    return out


def hosts_differ(old_p, new_p):
    """Every process of one engine ran its passive blocks more than HOST_SPREAD slower than every
    process of the other (module docstring)."""
    if not old_p or not new_p:
        return False
    return min(old_p) > max(new_p) * (1 + HOST_SPREAD) or min(new_p) > max(old_p) * (1 + HOST_SPREAD)


def held_launch_ns(rows, workload):
    """Each encore switch process's own sample of a held launch's host time (ns: the report's
    "encore time per held launch", issue 31), where it took one."""
    out = []
    for r in switch_rows(rows, workload):
        e = r.get("encore") or {}
        if bp.base_variant(r.get("variant", "")) == "encore" and int(e.get("deferred_samples") or 0) > 0:
            out.append(int(e.get("deferred_ns") or 0) / int(e["deferred_samples"]))
    return out


def fmt_steps(p):
    if not p:
        return "—"
    return f"{min(p):.0f}" if len(p) == 1 or round(min(p)) == round(max(p)) else f"{min(p):.0f}–{max(p):.0f}"


def compare(old, new):
    """old, new: lists of active / passive ratios. The medians, their intervals, new / old with its
    interval, and the verdict (module docstring)."""
    out = {"old": bp.summarize(old), "new": bp.summarize(new), "new_over_old": None, "ci": None,
           "verdict": "no data"}
    if not old or not new:
        return out
    out["new_over_old"] = statistics.median(new) / statistics.median(old)
    ci = bp.bootstrap_product_ci(new, [1.0 / x for x in old])
    out["ci"] = ci
    if ci is None:
        out["verdict"] = "no interval (fewer than 2 ratios)"
        return out
    gained_before = out["old"]["ci"] is not None and out["old"]["ci"][1] < 1.0
    if ci[0] > 1.0:
        out["verdict"] = "GAINS LESS" if gained_before else "slower than old (old did not gain)"
    elif ci[1] < 1.0:
        out["verdict"] = "gains more"
    else:
        out["verdict"] = "same (no difference shown)"
    return out


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    root = argv[1]
    lines = ["| workload | old engine, active / passive [95%] | replayed | new engine | replayed | "
             "new / old [95%] | verdict | passive step (us), old / new | held launch (ns), old / new | checksums | "
             "new: captured, never replayed |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    worse = 0
    for w in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, w, "old")) and not os.path.isdir(os.path.join(root, w, "new")):
            continue
        old_rows, new_rows = rows_of(os.path.join(root, w, "old")), rows_of(os.path.join(root, w, "new"))
        o, so, ro, _ = engine_ratios(old_rows, w)
        n, sn, rn, (caps, never) = engine_ratios(new_rows, w)
        c = compare(o, n)
        po, pn = passive_steps(old_rows, w), passive_steps(new_rows, w)
        if c["verdict"] in ("GAINS LESS", "gains more", "slower than old (old did not gain)") and hosts_differ(po, pn):
            c["verdict"] = f"hosts differed (was: {c['verdict']}): not shown"
        worse += c["verdict"] == "GAINS LESS"
        ratio = bp.fmt_ratio(c["ci"] and {"median": c["new_over_old"], "ci": c["ci"]})
        sums = "same" if len(so | sn) == 1 else ("—" if not (so | sn) else "DIFFER")
        pct = (lambda x: bp.fmt_num(x) + ("" if x is None else "%"))
        lines.append(f"| {w} | {bp.fmt_ratio(c['old'])} | {pct(ro)} | {bp.fmt_ratio(c['new'])} | {pct(rn)} | {ratio} | "
                     f"{c['verdict']} | {fmt_steps(po)} / {fmt_steps(pn)} | "
                     f"{fmt_steps(held_launch_ns(old_rows, w))} / {fmt_steps(held_launch_ns(new_rows, w))} | "
                     f"{sums} | {caps}, {never} |")
    print("\n".join(lines))
    print(f"\nworkloads where the new engine gains less at 95%: {worse}")
    more = more_engines(root)
    if more:
        print("\n" + more)
    return 0


def process_medians(rows, workload):
    """Each encore switch process's own median active / passive ratio."""
    return [statistics.median(r) for r in
            (bp.block_ratios(x["blocks"], "A") for x in switch_rows(rows, workload)
             if bp.base_variant(x.get("variant", "")) == "encore") if r]


def more_engines(root):
    """The second table (module docstring), or "" when no workload has engines beyond old and new."""
    lines = []
    for w in sorted(os.listdir(root)):
        folder = os.path.join(root, w)
        if not os.path.isdir(folder):
            continue
        names = sorted(e for e in os.listdir(folder) if os.path.isdir(os.path.join(folder, e)))
        if not [e for e in names if e not in ("old", "new")]:
            continue
        o, *_ = engine_ratios(rows_of(os.path.join(folder, "old")), w)
        for e in [e for e in ("old", "new") if e in names] + [e for e in names if e not in ("old", "new")]:
            rows = rows_of(os.path.join(folder, e))
            r, sums, pct, (caps, never) = engine_ratios(rows, w)
            c = compare(o, r)
            vs = bp.fmt_ratio(c["ci"] and {"median": c["new_over_old"], "ci": c["ci"]})
            per = " ".join(f"{x:.3f}" for x in process_medians(rows, w)) or "—"
            pct_s = bp.fmt_num(pct) + ("" if pct is None else "%")
            lines.append(f"| {w} | {e} | {bp.fmt_ratio(c['new'])} | {per} | {pct_s} | {vs} | {caps}, {never} |")
    if not lines:
        return ""
    return "\n".join(["| workload | engine | active / passive [95%] | per process | replayed | engine / old [95%] | "
                      "captured, never replayed |", "|---|---|---|---|---|---|---|"] + lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
