#!/usr/bin/env python3
"""Tests of the paired method's statistics (tests/bench/bench_paired.py) on made-up blocks.

Usage: test_bench_paired.py [path/to/tests/bench]
Prints one line per behaviour and "N passed, N failed".
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_paired as bp  # noqa: E402
from checks import check, finish  # noqa: E402


def blocks(spec):
    """'D10 A5 P10' -> block records."""
    out = []
    for i, t in enumerate(spec.split()):
        out.append({"i": i, "state": t[0], "us": float(t[1:])})
    return out


b = blocks("D10 P12 A5 D10 P12 A5 D10")
check("block_ratios: each A block against the mean of its nearest P blocks before and after",
      bp.block_ratios(b, "A") == [5 / 12, 5 / 12])
check("block_ratios: against D blocks when asked (the reference letter is a parameter)",
      bp.block_ratios(b, "A", "D") == [0.5, 0.5])
check("block_ratios: every block of the letter gives one ratio, not only the first",
      len(bp.block_ratios(blocks("D10 E11 D10 E11 D10 E11 D10"), "E", "D")) == 3)
check("block_ratios: a block with a reference on one side only uses that one",
      bp.block_ratios(blocks("A6 D12"), "A", "D") == [0.5])
check("block_ratios: no reference block, no ratio", bp.block_ratios(blocks("A6 A7"), "A", "D") == [])

check("verdict: within 2% only when the whole interval lies inside [0.98, 1.02]",
      bp.verdict((0.985, 1.015)).startswith("within") and not bp.verdict((0.97, 1.01)).startswith("within"))
check("verdict: slower only when the whole interval lies above 1.02", bp.verdict((1.03, 1.2)).startswith("SLOWER"))
check("verdict: within 1% with the tighter bound", bp.verdict((0.995, 1.008), 0.01).startswith("within 1%"))
check("verdict: no interval from fewer than 2 ratios", bp.verdict(None).startswith("no interval"))

ci = bp.bootstrap_ci([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0])
check("bootstrap_ci: the interval holds the median and is reproducible (fixed seed)",
      ci[0] <= 1.0 <= ci[1] and ci == bp.bootstrap_ci([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0]))


class Args:
    quick, sim = False, False


P = bp.Paired.__new__(bp.Paired)
P.args = Args()
check("switch_schedule: native encore blocks are measured against D blocks (eager in-process)",
      P.switch_schedule("native-random", "encore", 19)[0] == "DPA")
check("switch_schedule: native encore-off alternates D and E",
      P.switch_schedule("native-repeat", "encore-off", 19)[0] == "DE")
check("switch_schedule: a native workload with a graph mode gets G blocks",
      P.switch_schedule("native-repeat", "encore", 19)[0] == "DPAG")
s, n = P.switch_schedule("triton", "encore", 19)
check("switch_schedule: Python workloads alternate P and A (no D: the driver cannot be bypassed there)",
      s == "PAG" and n % 3 == 1)

sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
import bench_never_slower as bns  # noqa: E402  (stdlib and ctypes only at import)

check("corpus: at least 20 workloads, every one known to bench_paired, none twice",
      len(bp.CORPUS) >= 20 and all(w in bp.WORKLOADS for w in bp.CORPUS) and len(set(bp.CORPUS)) == len(bp.CORPUS))
check("corpus: every Python workload has a builder and default steps in bench_never_slower.py",
      all(w in bns.BUILDERS and w in bns.DEFAULT_STEPS for w, v in bp.WORKLOADS.items() if v[0] == "py"))
check("expand_workloads: 'corpus' stands for the corpus, in order, names around it kept, repeats dropped",
      bp.expand_workloads(["cupy", "corpus", "mlp-cpp"]) ==
      ["cupy"] + [w for w in bp.CORPUS if w != "cupy"] + ["mlp-cpp"])
s, n = P.switch_schedule("jax-jit", "encore", 19)
check("switch_schedule: a workload without a graph mode of its own alternates P and A only", s == "PA" and n % 2 == 1)

import engine_ab  # noqa: E402  (tests/bench is on the path)

c = engine_ab.compare([0.70, 0.72, 0.71, 0.69, 0.73], [0.80, 0.82, 0.81, 0.79, 0.83])
check("engine_ab: where the old engine gained and the new one's ratios lie above it, it gains less",
      c["verdict"] == "GAINS LESS" and c["ci"][0] > 1.0)
c = engine_ab.compare([0.70, 0.72, 0.71, 0.69, 0.73], [0.60, 0.62, 0.61, 0.59, 0.63])
check("engine_ab: ratios below the old engine's gain more", c["verdict"] == "gains more")
c = engine_ab.compare([0.70, 0.80, 0.75, 0.65, 0.85], [0.72, 0.78, 0.74, 0.66, 0.84])
check("engine_ab: overlapping ratios show no difference", c["verdict"].startswith("same"))
c = engine_ab.compare([1.00, 1.01, 0.99, 1.00, 1.02], [1.10, 1.11, 1.09, 1.12, 1.10])
check("engine_ab: slower where the old engine did not gain is not 'gains less'",
      c["verdict"].startswith("slower than old"))
held_rows = [{"workload": "w", "method": "switch", "ok": True, "variant": "encore",
              "encore": {"deferred_ns": 3000, "deferred_samples": 20}, "blocks": []},
             {"workload": "w", "method": "switch", "ok": True, "variant": "encore",
              "encore": {"deferred_ns": 0, "deferred_samples": 0}, "blocks": []},
             {"workload": "w", "method": "switch", "ok": True, "variant": "eager", "encore": None, "blocks": []}]
check("engine_ab: a process's held launch is its own sample's mean; processes without one are left out",
      engine_ab.held_launch_ns(held_rows, "w") == [150.0])
check("engine_ab: no verdict without ratios of both engines", engine_ab.compare([], [0.9, 0.8])["verdict"] == "no data")
check("engine_ab: hosts differ where every process of one engine ran its passive blocks >10% slower",
      engine_ab.hosts_differ([229.0, 266.0, 235.0], [180.0, 183.0, 178.0]))
check("engine_ab: passive steps that overlap across the engines' processes are the same hosts",
      not engine_ab.hosts_differ([1398.0, 2400.0, 2266.0], [1450.0, 1746.0, 1478.0]))
check("engine_ab: within 10% the hosts are the same", not engine_ab.hosts_differ([200.0], [215.0]))

import json  # noqa: E402
import tempfile  # noqa: E402


def fake_process(folder, ratio, workload="w", passive=100.0):
    """One switch process of `workload` whose A blocks take `ratio` of its P blocks' time (`passive` us)."""
    os.makedirs(folder, exist_ok=True)
    blocks = [{"i": i, "state": "PA"[i % 2], "us": passive * (ratio if i % 2 else 1.0) + i * 0.01} for i in range(19)]
    with open(os.path.join(folder, "paired-results.jsonl"), "a") as f:
        f.write(json.dumps({"workload": workload, "method": "switch", "ok": True, "variant": "encore",
                            "blocks": blocks, "encore": {"graphs_captured": 2}}) + "\n")


with tempfile.TemporaryDirectory() as root:
    for e, ratios in (("old", (0.80, 0.82)), ("new", (0.90, 0.88)), ("c0ffee", (0.70, 0.72))):
        for r in ratios:
            fake_process(os.path.join(root, "w", e), r)
    table = engine_ab.more_engines(root)
    rows = [line for line in table.splitlines() if line.startswith("| w |")]
    check("engine_ab: a third engine's folder gets a row of the second table, old and new first",
          [r.split("|")[2].strip() for r in rows] == ["old", "new", "c0ffee"])
    check("engine_ab: the second table gives each process's own median",
          "0.700 0.720" in rows[2] and "0.800 0.820" in rows[0])
    os.rename(os.path.join(root, "w", "c0ffee"), os.path.join(root, "x"))
    check("engine_ab: no second table with only old and new", engine_ab.more_engines(root) == "")

with tempfile.TemporaryDirectory() as logs:
    def log_of(pid, seen, age_s):
        path = os.path.join(logs, f"0001-w-encore-switch-r0.{pid}.jsonl")
        with open(path, "w") as f:
            f.write(json.dumps({"event": "summary", "launches_seen": seen}) + "\n")
        t = __import__("time").time() - age_s
        os.utime(path, (t, t))
    log_of(100, 9000, 60.0)  # an earlier process of the same tag (engine-ab's PROCS), more launches
    log_of(200, 5000, 0.0)
    pattern = os.path.join(logs, "0001-w-encore-switch-r0.%p.jsonl")
    since = __import__("time").time() - 10.0
    check("read_summary: a run's summary is its own log's, not an earlier run's of the same tag",
          (bp.read_summary(pattern, since=since) or {}).get("launches_seen") == 5000)
    check("read_summary: without a start time, the log that saw the most launches (a program's processes)",
          (bp.read_summary(pattern) or {}).get("launches_seen") == 9000)

import contextlib  # noqa: E402
import io  # noqa: E402


def ab_table(old_passive, new_passive):
    """engine_ab's first table for one workload: the new engine's ratios clearly above the old one's."""
    with tempfile.TemporaryDirectory() as root:
        for r in (0.57, 0.56, 0.59):
            fake_process(os.path.join(root, "w", "old"), r, passive=old_passive)
        for r in (0.62, 0.61, 0.60):
            fake_process(os.path.join(root, "w", "new"), r, passive=new_passive)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            engine_ab.main(["engine_ab", root])
        return out.getvalue()


t = ab_table(100.0, 101.0)
check("engine_ab: on the same hosts, ratios above the old engine's gain less", "| GAINS LESS |" in t and
      "gains less at 95%: 1" in t)
t = ab_table(250.0, 180.0)
check("engine_ab: where the old engine's hosts ran its passive blocks slower, the verdict is not counted",
      "hosts differed (was: GAINS LESS)" in t and "gains less at 95%: 0" in t and "| 250 / 180 |" in t)
check("never_replayed: the graphs a process captured and how many of them never replayed, with the share",
      bp.never_replayed({"graphs_captured": 40, "captured_never_replayed": 11}) == "40, 11 (28%)")
check("never_replayed: a summary without the count reads as not measured",
      bp.never_replayed({"launches_seen": 5}) == "—" and bp.never_replayed(None) == "—")
finish()
