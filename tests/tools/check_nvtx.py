#!/usr/bin/env python3
"""ENCORE_NVTX=1 on the simulated driver, seen by a stand-in NVTX tool.

Runs a program whose hot sequence diverges now and then (prog_divergence)
under encore with ENCORE_NVTX=1 and NVTX_INJECTION64_PATH naming
libnvtx_record.so, which records every range pushed and popped. Checks that
each replayed graph, each capture and each eager fallback (with its reason)
got a range, that the counts agree with encore's JSON summary, that pushes
and pops pair up per thread; and that without ENCORE_NVTX encore marks nothing.

Usage: check_nvtx.py LIBENCORE SIM_DIR RECORDER PROGRAM [ARGS...]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit"))
from checks import check, finish  # noqa: E402


def run(lib, sim, recorder, prog, tmp, nvtx):
    rec = os.path.join(tmp, f"nvtx-{nvtx}.txt")
    log = os.path.join(tmp, f"log-{nvtx}.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENCORE")}
    # as run_diff.py does: simulated launches are slow (more so under a sanitizer or load), so that
    # no stream looks "sparse" (ENCORE_MAX_GAP) and goes unheld
    env.update(LD_LIBRARY_PATH=sim, LD_PRELOAD=lib, NVTX_INJECTION64_PATH=recorder, NVTX_RECORD_FILE=rec,
               ENCORE_LOG=log, ENCORE_MAX_GAP="10s")
    if nvtx:
        env["ENCORE_NVTX"] = "1"
    p = subprocess.run(prog, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
    lines = open(rec).read().splitlines() if os.path.exists(rec) else []
    summary = {}
    if os.path.exists(log):
        for line in open(log):
            e = json.loads(line)
            if e.get("event") == "summary":
                summary = e
    return p.returncode, lines, summary


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    lib, sim, recorder, prog = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        rc, lines, s = run(lib, sim, recorder, prog, tmp, 1)
        check("nvtx: the program ran", rc == 0, f"exit status {rc}")
        check("nvtx: encore loaded the NVTX tool", "init" in [l.split()[0] for l in lines], str(lines[:3]))
        pushes = [l.split(" ", 2)[2] for l in lines if l.startswith("push ")]
        replays = [m for m in pushes if re.fullmatch(r"encore: sequence \d+, \d+ launches", m)]
        captures = [m for m in pushes if re.fullmatch(r"encore: capture, \d+ launches", m)]
        eager = [m for m in pushes if re.fullmatch(r"encore: eager, \d+ launches: .+", m)]
        check("nvtx: one range per replayed graph", len(replays) == s.get("graph_launches", -1) > 0,
              f"{len(replays)} ranges, summary graph_launches={s.get('graph_launches')}")
        check("nvtx: one range per capture", len(captures) == s.get("graphs_captured", -1) + s.get(
            "capture_failures", 0) > 0, f"{len(captures)} ranges, summary {s.get('graphs_captured')} captured")
        check("nvtx: eager fallbacks name their reason",
              any(m.endswith(": a different kernel came") for m in eager), str(eager[:5]))
        eager_launches = sum(int(m.split()[2]) for m in eager)
        check("nvtx: eager ranges cover no more launches than ran eagerly",
              0 < eager_launches <= s.get("launches_eager", 0), f"{eager_launches} vs {s.get('launches_eager')}")
        check("nvtx: every range is encore's", len(pushes) == len(replays) + len(captures) + len(eager),
              str([m for m in pushes if m not in replays + captures + eager][:3]))
        depth, bad = {}, []
        for l in lines:
            w = l.split(" ", 2)
            if w[0] in ("push", "pop"):
                depth[w[1]] = depth.get(w[1], 0) + (1 if w[0] == "push" else -1)
                if depth[w[1]] < 0:
                    bad.append(l)
        check("nvtx: pushes and pops pair up on each thread",
              not bad and all(d == 0 for d in depth.values()), f"{bad[:3]} {depth}")

        rc, lines, s = run(lib, sim, recorder, prog, tmp, 0)
        check("nvtx: without ENCORE_NVTX encore loads no NVTX tool and marks nothing",
              rc == 0 and not lines and s.get("graph_launches", 0) > 0, f"rc={rc} {lines[:3]}")
    finish()


if __name__ == "__main__":
    main()
