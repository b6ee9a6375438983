#!/usr/bin/env python3
"""CTest bench.encore_and_bound_in_one_process_on_the_simulator (label sim): encore and the
launch-free bound in one process (issue 31), LD_PRELOAD=libskiplaunch.so:libencore.so
SKIPLAUNCH_SWITCH=1, on the simulated driver.

bench_native on schedule PAB: the B blocks launch nothing (the simulator's kernel count is that
of a process without them; libskiplaunch.so skipped exactly their launches), the P and A blocks
launch everything and reach encore (encore saw every launch made), the A blocks replay (encore's
switch events), the checksum is the one without any preload. libskiplaunch.so alone still answers
encore's switch (variant launch-free). And the paired method's variant encore+bound gives an
encore / bound row with an interval.

    test_bound.py --encore LIB --skiplaunch LIB --bench-native BIN --kernels LIB --sim-dir DIR --build DIR
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "unit"))
import bench_paired as bp  # noqa: E402
from checks import check, finish  # noqa: E402

STEPS, K = 10, 16  # bench_native's steps a block (below) and launches a step (its default)


def run_native(a, d, tag, preload, schedule, blocks, extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENCORE", "SKIPLAUNCH", "SIMCUDA"))
           and k != "LD_PRELOAD"}
    env["LD_LIBRARY_PATH"] = a.sim_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["SIMCUDA_STATS"] = "1"
    env["SKIPLAUNCH_REPORT"] = "1"
    if preload:
        env["LD_PRELOAD"] = preload
    env.update(extra or {})
    argv = [a.bench_native, "--module", a.kernels, "--pattern", "repeat", "--schedule", schedule, "--blocks",
            str(blocks), "--steps", str(STEPS), "--warmup", "10"]
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    with open(os.path.join(d, tag + ".log"), "w") as f:
        f.write(r.stdout + "\n--- stderr\n" + r.stderr)
    res = next((dict(t.split("=", 1) for t in line.split()[1:] if "=" in t) for line in r.stdout.splitlines()
                if line.startswith("RESULT ")), {})
    states = "".join(t.split("=", 1)[1] for line in r.stdout.splitlines() if line.startswith("BLOCK ")
                     for t in line.split() if t.startswith("state="))
    m = re.search(r"simcuda: kernels=(\d+)", r.stderr)
    s = re.search(r"skiplaunch: skipped (\d+) launches", r.stderr)
    return {"rc": r.returncode, "result": res, "states": states, "kernels": int(m.group(1)) if m else None,
            "skipped": int(s.group(1)) if s else None, "tail": (r.stdout + r.stderr)[-2000:]}


def test_native(a, d):
    both = f"{a.skiplaunch}:{a.encore}"
    ref7 = run_native(a, d, "ref5", None, "E", 5)  # what the 5 P and A blocks of PABPABP launch, no preload
    ref4 = run_native(a, d, "ref4", None, "E", 4)
    check("reference runs (no preload) end well", ref7["rc"] == 0 and ref4["rc"] == 0 and ref7["kernels"],
          ref7["tail"] + ref4["tail"])
    log = os.path.join(d, "encore.%p.jsonl")
    r = run_native(a, d, "pab", both, "PAB", 7, {"SKIPLAUNCH_SWITCH": "1", "ENCORE_LOG": log})
    check("both preloads, schedule PAB: the program ends well with both switches found",
          r["rc"] == 0 and r["result"].get("status") == "ok" and r["result"].get("switch") == "1" and
          r["result"].get("bound_switch") == "1" and r["states"] == "PABPABP", r["tail"])
    check("B blocks launch nothing: the simulator ran as many kernels as P A P A P without a preload",
          r["kernels"] is not None and r["kernels"] == ref7["kernels"], f"{r['kernels']} vs {ref7['kernels']}")
    check("libskiplaunch.so skipped exactly the B blocks' launches (2 blocks)",
          r["skipped"] == 2 * STEPS * K, r["skipped"])
    check("the checksum (taken before the blocks) is the one without a preload",
          r["result"].get("checksum") and r["result"].get("checksum") == ref7["result"].get("checksum"),
          f"{r['result'].get('checksum')} vs {ref7['result'].get('checksum')}")
    s = bp.read_summary(log) or {}
    check("encore saw every launch that was made (P and A blocks, warm-up): launches pass through skiplaunch",
          s.get("launches_seen") == ref7["kernels"], f"{s.get('launches_seen')} vs {ref7['kernels']}")
    check("A blocks replay (encore's switch events: launches replayed in the timed active blocks)",
          (s.get("active_blocks_launches") or 0) == 2 * STEPS * K and (s.get("active_blocks_replay_pct") or 0) > 50,
          {k: s.get(k) for k in ("active_blocks_launches", "active_blocks_replay_pct", "launches_replayed")})
    no = run_native(a, d, "pab-no-skip", a.encore, "PAB", 7)
    check("B blocks without libskiplaunch.so: refused with a RESULT line, not run as P",
          no["rc"] != 0 and no["result"].get("error") == "no_skiplaunch_switch_for_B_blocks", no["tail"])
    lf = run_native(a, d, "launch-free", a.skiplaunch, "PA", 4, {"SKIPLAUNCH_SWITCH": "1"})
    check("libskiplaunch.so alone (variant launch-free) still answers encoreSetActive: its A blocks skip",
          lf["rc"] == 0 and lf["result"].get("switch") == "1" and lf["skipped"] == 2 * STEPS * K and
          lf["kernels"] is not None and ref4["kernels"] is not None and
          lf["kernels"] + lf["skipped"] == ref4["kernels"], lf["tail"])


def test_paired(a, d):
    out = os.path.join(d, "paired")
    env = dict(os.environ, ENCORE_PROGKERNELS=a.kernels, ENCORE_SIM_DIR=a.sim_dir)
    r = subprocess.run([sys.executable, os.path.join(HERE, "bench"), "--method", "switch", "--sim", "--quick",
                        "--no-build", "--build-dir", a.build, "--out", out, "--budget-s", "60", "--variants",
                        "encore+bound,encore+bound@ENCORE_HOLD_RAMP=1/ENCORE_HOLD_BUDGET=15us,"
                        "encore+trial@ENCORE_TRIAL=ENCORE_MAX_SEQUENCE=4", "--workloads",
                        "native-repeat"], env=env, capture_output=True, text=True,
                       timeout=240)
    try:
        with open(os.path.join(out, "paired-summary.json")) as f:
            rows = json.load(f)["rows"]
        c = rows[0]["variants"]["encore+bound"]
        o = rows[0]["variants"]["encore+bound@ENCORE_HOLD_RAMP=1/ENCORE_HOLD_BUDGET=15us"]
        t = rows[0]["variants"]["encore+trial@ENCORE_TRIAL=ENCORE_MAX_SEQUENCE=4"]
    except Exception as e:
        c = o = t = {"error": repr(e)}
    eb = c.get("encore_vs_bound") or {}
    check("the paired method's encore+bound on --sim: an encore / bound ratio with a 95% interval",
          r.returncode == 0 and eb.get("n", 0) >= 2 and eb.get("ci") and eb.get("median") is not None and
          (c.get("bound") or {}).get("n", 0) >= 2 and (c.get("switch") or {}).get("n", 0) >= 2,
          f"rc {r.returncode}: {c}\n{r.stderr[-1500:]}")
    check("a variant with options on top (NAME@K=V/K=V) runs beside it, with its own encore / bound ratio",
          (o.get("encore_vs_bound") or {}).get("n", 0) >= 2, f"{o}")
    check("variant encore+trial: trial blocks (T) against the defaults (A) in one process, with a 95% interval",
          (t.get("trial_vs_encore") or {}).get("n", 0) >= 2 and (t.get("switch") or {}).get("n", 0) >= 2, f"{t}")
    md = open(os.path.join(out, "paired-report.md")).read() if os.path.exists(os.path.join(out, "paired-report.md")) \
        else ""
    check("paired-report.md has the encore+bound section with a native-repeat row",
          "launch-free bound, in one process" in md and re.search(r"\| native-repeat \| encore\+bound \| [0-9.]+x", md), md[-1500:])
    check("paired-report.md has the encore+trial section", "A setting against the defaults, in one process" in md,
          md[-1500:])
    table = r.stdout.strip().splitlines()
    check("the short table printed last has the encore/bound column",
          any("encore/bound [95%]" in x for x in table[-3:]), "\n".join(table[-3:]))


def main():
    ap = argparse.ArgumentParser()
    for opt in ("encore", "skiplaunch", "bench-native", "kernels", "sim-dir", "build"):
        ap.add_argument("--" + opt, required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="encore-bound-") as d:
        test_native(a, d)
        test_paired(a, d)
    finish()


if __name__ == "__main__":
    main()
