#!/usr/bin/env python3
"""Per-step breakdown on the GPU (issue 31): where a step's time goes, eager against encore against
the launch-free bound, from one trace per process (tests/bench/timeline.c) and the BLOCK lines of the
paired benchmark programs (t0_ns, t1_ns: CLOCK_MONOTONIC, the tracer's clock).

    breakdown.py run --build DIR --out DIR [--workloads cublas,libtorch,transformer-cpp] [--blocks 8]
    breakdown.py analyse --out DIR WORKLOAD ENCORE_STDOUT ENCORE_TRACE BOUND_STDOUT BOUND_TRACE

run: per workload two processes, both on schedule "PA" (argv from bench_paired.Paired.argv):
  encore  LD_PRELOAD=libencore.so:libencore_timeline.so, ENCORE_NVTX=1 (encore's ranges recorded by
          the tracer as the NVTX tool): P blocks = encore passive, A blocks = encore;
  bound   LD_PRELOAD=libskiplaunch.so:libencore_timeline.so, SKIPLAUNCH_SWITCH=1: P blocks = eager
          without encore (skiplaunch passes launches through), A blocks = the launch-free bound
          (launches return at once, nothing runs).
then the analysis: OUT/breakdown.md (a table per workload), OUT/breakdown.json (the same numbers),
OUT/timeline-<workload>.png (matplotlib; skipped with a message without it).

Every number is per step, the median over the blocks of a row of the per-block value (block total
divided by its steps), in microseconds. Columns (see docs/bench/METHOD-paired.md, "The per-step
breakdown"):
  wall           the block's time per step (as BLOCK's us_per_step)
  host busy      wall minus the time the host thread sat in synchronising driver calls
  sync wait      that time: cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize, copies that
                 are not Async (they wait for the stream)
  launch, graph launch, patch, capture, copy, other
                 time in driver calls of the host thread by class: kernel launches (cuLaunch*),
                 cuGraphLaunch, graph node patches (cuGraphExec*Set*Params*, cuGraphExecUpdate),
                 capture and graph building (cuStream{Begin,End}Capture, cuGraphInstantiate*,
                 cuGraph* but launch and exec calls), Async copies and memsets, everything else
  other threads  driver time on every other thread (encore's deadline thread, framework threads)
  replay/capture/eager
                 encore's NVTX ranges by kind ("encore: sequence", "encore: capture",
                 "encore: eager"), summed over threads
  GPU busy       the union of the GPU intervals (kernels, copies, memsets) inside the step
  GPU idle       wall minus GPU busy
  start delay    from the step's start (the previous step's last synchronisation returning) to the
                 first GPU activity in it: host work before the first launch, plus, in A blocks, how
                 long encore holds the launches (a held launch never reaches the driver, so the
                 driver trace cannot date it; the step start can)
  launch->GPU    from the step's first launch-type driver call (kernel or graph launch, Async copy
                 or memset) that reached the driver to the first GPU activity after it
  launches, graph launches, GPU intervals: counts per step
"Host in encore" is an estimate: (host busy - driver)(encore A) - (host busy - driver)(bound A), the
host time that is neither the program's own (the bound has it too) nor the driver's. CUPTI adds host
time to every driver call it reports, more in P blocks (one call a launch) than in A blocks (one
graph launch a sequence): the breakdown explains, the switch benchmark without the tracer
(tests/bench/bench --method switch) gives the ratios.
"""
import argparse
import bisect
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
from cupti_path import pip_cupti  # noqa: E402  (tests/gpu/cupti_path.py: the GPU tests' lookup too)

# ---------------------------------------------------------------- the trace file --------

MAGIC = b"ENCTL01\n"
HEADER = struct.Struct("<8sIIIIQQqq6I4Q")
GPU_REC = struct.Struct("<QQIBBH")
CALL_REC = struct.Struct("<QIHH")
RANGE_REC = struct.Struct("<QQHHHH")
STATUS = {0: "ok", 1: "nocupti", 2: "error"}
GPU_KINDS = {0: "kernel", 1: "copy", 2: "memset"}


class Trace:
    """One process's trace (tests/bench/timeline.c's file), on CLOCK_MONOTONIC: GPU intervals as
    (start, end, stream, kind, in_graph) sorted by start; driver calls as (t0, t1, class, thread,
    name) sorted by t0; ranges as (t0, t1, kind, thread, message) sorted by t0."""

    def __init__(self, path):
        data = open(path, "rb").read()
        h = HEADER.unpack_from(data, 0)
        if h[0] != MAGIC:
            raise ValueError(f"{path}: not an encore timeline trace")
        (_, self.version, self.pid, status, self.flags, self.mono_start, self.mono_end, self.off_start,
         self.off_end, n_gpu, n_calls, n_ranges, n_threads, n_names, n_strings, *dropped) = h
        self.status = STATUS.get(status, str(status))
        self.dropped = dict(zip(("gpu", "calls", "ranges", "cupti"), dropped))
        o = HEADER.size
        gpu = list(GPU_REC.iter_unpack(data[o:o + n_gpu * GPU_REC.size]))
        o += n_gpu * GPU_REC.size
        calls = list(CALL_REC.iter_unpack(data[o:o + n_calls * CALL_REC.size]))
        o += n_calls * CALL_REC.size
        ranges = list(RANGE_REC.iter_unpack(data[o:o + n_ranges * RANGE_REC.size]))
        o += n_ranges * RANGE_REC.size
        self.tids = list(struct.unpack_from(f"<{n_threads}I", data, o))
        o += 4 * n_threads
        self.names = {}
        for _ in range(n_names):
            cbid, n = struct.unpack_from("<HH", data, o)
            self.names[cbid] = data[o + 4:o + 4 + n].decode(errors="replace")
            o += 4 + n
        strings = []
        for _ in range(n_strings):
            (n,) = struct.unpack_from("<H", data, o)
            strings.append(data[o + 2:o + 2 + n].decode(errors="replace"))
            o += 2 + n
        self.drift_ns = self.off_end - self.off_start if self.flags & 3 == 3 else None
        self.gpu = sorted((self.to_mono(s), self.to_mono(e), st, GPU_KINDS.get(k, str(k)), g)
                          for s, e, st, k, g, _dev in gpu)
        classes = {}
        self.calls = []
        for t0, dur, cbid, th in calls:
            name = self.names.get(cbid, f"cbid{cbid}")
            if name not in classes:
                classes[name] = call_class(name)
            self.calls.append((t0, t0 + dur, classes[name], th, name))
        self.calls.sort()
        self.ranges = sorted((t0, t1, range_kind(strings[s] if s < len(strings) else ""), th,
                              strings[s] if s < len(strings) else "(a message not kept)")
                             for t0, t1, s, th, _d, _p in ranges)
        self.gpu_starts = [g[0] for g in self.gpu]
        self.call_starts = [c[0] for c in self.calls]
        self.range_starts = [r[0] for r in self.ranges]
        self.max_gpu = max((g[1] - g[0] for g in self.gpu), default=0)
        self.max_call = max((c[1] - c[0] for c in self.calls), default=0)
        self.max_range = max((r[1] - r[0] for r in self.ranges), default=0)

    def offset_at(self, t):
        """cupti - mono at mono time t: the start offset, drifting linearly to the end one."""
        if self.flags & 3 == 3 and self.mono_end > self.mono_start:
            f = min(1.0, max(0.0, (t - self.mono_start) / (self.mono_end - self.mono_start)))
            return self.off_start + f * (self.off_end - self.off_start)
        return self.off_start if self.flags & 1 else 0

    def to_mono(self, cupti_ts):
        t = cupti_ts - self.off_start
        return int(round(cupti_ts - self.offset_at(t)))

    @staticmethod
    def _window(items, starts, longest, t0, t1):
        """The records that overlap [t0, t1) (records sorted by start; none longer than longest)."""
        lo = bisect.bisect_left(starts, t0 - longest)
        hi = bisect.bisect_left(starts, t1)
        return [r for r in items[lo:hi] if r[1] > t0 or r[0] >= t0]

    def gpu_in(self, t0, t1):
        return self._window(self.gpu, self.gpu_starts, self.max_gpu, t0, t1)

    def calls_in(self, t0, t1):
        return self._window(self.calls, self.call_starts, self.max_call, t0, t1)

    def ranges_in(self, t0, t1):
        return self._window(self.ranges, self.range_starts, self.max_range, t0, t1)


def write_trace(path, gpu=(), calls=(), ranges=(), tids=(), names=None, strings=(), status=0, pid=1,
                mono=(0, 0), offsets=(0, 0), flags=3, dropped=(0, 0, 0, 0)):
    """A trace file as tests/bench/timeline.c writes it (for tests): gpu (start, end, stream, kind,
    in_graph) on CUPTI's clock, calls (t0, duration, cbid, thread), ranges (t0, t1, string, thread,
    depth), names {cbid: name}."""
    names = names or {}
    with open(path, "wb") as f:
        f.write(HEADER.pack(MAGIC, 1, pid, status, flags, mono[0], mono[1], offsets[0], offsets[1], len(gpu),
                            len(calls), len(ranges), len(tids), len(names), len(strings), *dropped))
        for s, e, st, k, g in gpu:
            f.write(GPU_REC.pack(s, e, st, k, g, 0))
        for t0, d, cbid, th in calls:
            f.write(CALL_REC.pack(t0, d, cbid, th))
        for t0, t1, s, th, d in ranges:
            f.write(RANGE_REC.pack(t0, t1, s, th, d, 0))
        f.write(struct.pack(f"<{len(tids)}I", *tids))
        for cbid, name in names.items():
            b = name.encode()
            f.write(struct.pack("<HH", cbid, len(b)) + b)
        for s in strings:
            b = s.encode()
            f.write(struct.pack("<H", len(b)) + b)


# ---------------------------------------------------------------- classes --------

CLASSES = ["launch", "graph_launch", "patch", "capture", "copy", "other"]  # driver time (sync apart)
CLASS_LABELS = {"launch": "launch", "graph_launch": "graph launch", "patch": "patch", "capture": "capture",
                "copy": "copy", "other": "other", "sync": "sync"}
LAUNCH_TYPE = ("launch", "graph_launch", "copy")
RANGE_KEYS = {"replay": "replay", "capture": "capture_range", "eager": "eager"}  # NVTX kind -> metric

_SYNC = re.compile(r"^cu(StreamSynchronize|CtxSynchronize|EventSynchronize)(_v\d+)?(_ptsz|_ptds)?$|"
                   r"^cuMemcpy(?!.*Async)")
_CLASS_RE = [
    ("graph_launch", re.compile(r"^cuGraphLaunch")),
    ("launch", re.compile(r"^cuLaunch")),
    ("patch", re.compile(r"^cuGraphExec\w*Set\w*Params|^cuGraphExecUpdate")),
    ("capture", re.compile(r"^cuStream(Begin|End)Capture|^cuGraphInstantiate|^cuGraphUpload|^cuGraphExecDestroy|"
                           r"^cuGraph(?!Launch|Exec)")),
    ("copy", re.compile(r"^cuMemcpy.*Async|^cuMemset")),
]


def call_class(name):
    """A driver function's class: sync, launch, graph_launch, patch, capture, copy or other."""
    if _SYNC.search(name):
        return "sync"
    for cls, rx in _CLASS_RE:
        if rx.search(name):
            return cls
    return "other"


def range_kind(msg):
    for kind, prefix in (("replay", "encore: sequence"), ("capture", "encore: capture"), ("eager", "encore: eager")):
        if msg.startswith(prefix):
            return kind
    return "other"


# ---------------------------------------------------------------- BLOCK lines --------

def parse_blocks(text):
    """BLOCK lines with t0_ns and t1_ns -> [{i, state, steps, us, t0, t1}] (extra keys ignored)."""
    out = []
    for line in text.splitlines():
        if not line.startswith("BLOCK "):
            continue
        kv = dict(t.split("=", 1) for t in line.split()[1:] if "=" in t)
        try:
            out.append({"i": int(kv["i"]), "state": kv["state"], "steps": int(kv["steps"]),
                        "us": float(kv["us_per_step"]), "t0": int(kv["t0_ns"]), "t1": int(kv["t1_ns"])})
        except (KeyError, ValueError):
            pass
    return out


# ---------------------------------------------------------------- per block --------

def overlap(a0, a1, t0, t1):
    return max(0, min(a1, t1) - max(a0, t0))


def union_length(intervals, t0, t1):
    """Total length of the union of intervals, clipped to [t0, t1)."""
    total, cur0, cur1 = 0, None, None
    for s, e in sorted((max(s, t0), min(e, t1)) for s, e in intervals if min(e, t1) > max(s, t0)):
        if cur1 is None or s > cur1:
            if cur1 is not None:
                total += cur1 - cur0
            cur0, cur1 = s, e
        else:
            cur1 = max(cur1, e)
    return total + (cur1 - cur0 if cur1 is not None else 0)


def step_bounds(calls, main, t0, t1, n):
    """The steps of a block as [(start, end)]: each step ends where its last synchronising call on
    the host thread returns (when the block's synchronising calls divide into n equal groups), else
    the block split evenly (said in the second value)."""
    syncs = sorted(c for c in calls if c[3] == main and c[2] == "sync" and t0 <= c[0] < t1)
    if n > 0 and syncs and len(syncs) % n == 0:
        k = len(syncs) // n
        ends = [min(syncs[(j + 1) * k - 1][1], t1) for j in range(n)]
        return list(zip([t0] + ends[:-1], ends)), "sync"
    edges = [t0 + (t1 - t0) * j // max(n, 1) for j in range(max(n, 1) + 1)]
    return list(zip(edges[:-1], edges[1:])), "even"


def first_gpu_start(gpu, t, t_end):
    starts = [g[0] for g in gpu if t <= g[0] < t_end]
    return min(starts) if starts else None


def block_metrics(tr, blk):
    """Per-step values of one block (µs), and its steps."""
    t0, t1, n = blk["t0"], blk["t1"], max(1, blk["steps"])
    calls = tr.calls_in(t0, t1)
    counts = {}
    for c in calls:
        counts[c[3]] = counts.get(c[3], 0) + 1
    main = max(counts, key=counts.get) if counts else None
    gpu = tr.gpu_in(t0, t1)
    ranges = tr.ranges_in(t0, t1)
    us = 1e-3 / n
    m = {"wall": (t1 - t0) * us}
    by = dict.fromkeys(CLASSES + ["sync"], 0)
    other_threads = 0
    nl = ngl = 0
    for c in calls:
        d = overlap(c[0], c[1], t0, t1)
        if c[3] == main:
            by[c[2]] += d
            nl += c[2] == "launch" and c[0] >= t0
            ngl += c[2] == "graph_launch" and c[0] >= t0
        else:
            other_threads += d
    for k in by:
        m[k] = by[k] * us
    m["driver"] = sum(by[k] for k in CLASSES) * us
    m["host_busy"] = m["wall"] - m["sync"]
    m["other_threads"] = other_threads * us
    for kind, key in RANGE_KEYS.items():
        m[key] = sum(overlap(r[0], r[1], t0, t1) for r in ranges if r[2] == kind) * us
        m["n_" + kind] = sum(1 for r in ranges if r[2] == kind and t0 <= r[0] < t1) / n
    m["gpu_busy"] = union_length([(g[0], g[1]) for g in gpu], t0, t1) * us
    m["gpu_idle"] = m["wall"] - m["gpu_busy"]
    m["launches"] = nl / n
    m["graph_launches"] = ngl / n
    m["gpu_intervals"] = sum(1 for g in gpu if t0 <= g[0] < t1) / n
    steps, how = step_bounds(calls, main, t0, t1, n)
    d_start, d_launch, early = [], [], 0
    for s, e in steps:
        g = first_gpu_start(gpu, s, e)
        if g is not None:
            d_start.append((g - s) / 1e3)
        first = next((c for c in calls if c[3] == main and c[2] in LAUNCH_TYPE and s <= c[0] < e), None)
        if first is not None:
            early += first_gpu_start(gpu, s, first[0]) is not None  # GPU work before any launch: clocks apart
            g = first_gpu_start(gpu, first[0], e)
            if g is not None:
                d_launch.append((g - first[0]) / 1e3)
    m["start_delay"] = statistics.median(d_start) if d_start else None
    m["launch_to_gpu"] = statistics.median(d_launch) if d_launch else None
    return m, {"steps": steps, "split": how, "main": main, "early": early}


# ---------------------------------------------------------------- per workload --------

# (key, process, block letter, label)
VARIANTS = [("eager", "bound", "P", "eager (no encore: the bound's process, P blocks)"),
            ("passive", "encore", "P", "encore passive (P)"),
            ("encore", "encore", "A", "encore (A)"),
            ("bound", "bound", "A", "launch-free bound (A)")]
METRICS = ["wall", "host_busy", "sync", "launch", "graph_launch", "patch", "capture", "copy", "other", "driver",
           "other_threads", "replay", "capture_range", "eager", "gpu_busy", "gpu_idle", "start_delay",
           "launch_to_gpu", "launches", "graph_launches", "gpu_intervals", "n_replay", "n_capture", "n_eager"]
COLUMNS = [("wall", "wall"), ("host_busy", "host busy"), ("sync", "sync wait"), ("launch", "launch"),
           ("graph_launch", "graph launch"), ("patch", "patch"), ("capture", "capture"), ("copy", "copy"),
           ("other", "other"), ("other_threads", "other threads"), ("replay", "replay"),
           ("capture_range", "capture range"), ("eager", "eager range"), ("gpu_busy", "GPU busy"),
           ("gpu_idle", "GPU idle"), ("start_delay", "start delay"), ("launch_to_gpu", "launch->GPU"),
           ("launches", "launches"), ("graph_launches", "graph launches"), ("gpu_intervals", "GPU intervals")]


NEEDS_CALLS = ("host_busy", "sync", "driver", "other_threads", "launch_to_gpu", "launches", "graph_launches") + tuple(
    CLASSES)
NEEDS_GPU = ("gpu_busy", "gpu_idle", "start_delay", "launch_to_gpu", "gpu_intervals")


def median_or_none(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def analyse_workload(workload, procs):
    """procs: {"encore": (blocks, Trace or None), "bound": (...)} -> the workload's numbers."""
    out = {"workload": workload, "variants": {}, "notes": [], "selection": {}}
    for pname, (blocks, tr) in procs.items():
        if tr is None:
            out["notes"].append(f"{pname} process: no trace")
            continue
        d = tr.dropped
        out["notes"].append(
            f"{pname} process: trace status {tr.status}, {len(tr.gpu)} GPU intervals, {len(tr.calls)} driver calls, "
            f"{len(tr.ranges)} ranges; GPU clock: "
            + ("CUPTI timed on CLOCK_MONOTONIC (timestamp callback)" if tr.flags & 4 else
               f"offset measured, drift over the run {tr.drift_ns / 1e3:.1f} us" if tr.drift_ns is not None else
               "offset not measured")
            + (f"; DROPPED gpu {d['gpu']}, calls {d['calls']}, ranges {d['ranges']}, by CUPTI {d['cupti']}"
               if any(d.values()) else ""))
    for key, pname, letter, label in VARIANTS:
        blocks, tr = procs.get(pname, ([], None))
        mine = [b for b in blocks if b["state"] == letter]
        if tr is None or not mine:
            continue
        per = []
        splits = set()
        early = 0
        for b in mine:
            m, info = block_metrics(tr, b)
            early += info["early"]
            for k in (NEEDS_CALLS if not tr.calls else ()) + (NEEDS_GPU if not tr.gpu else ()):
                m[k] = None  # the trace has none of these (no CUPTI): not zero, unknown
            per.append(m)
            splits.add(info["split"])
        row = {"label": label, "blocks": len(per)}
        for k in METRICS:
            row[k] = median_or_none([p.get(k) for p in per])
        row["steps_from"] = "+".join(sorted(splits))
        if early:
            out["notes"].append(f"{label}: CLOCK CHECK: in {early} steps GPU activity started before the step's "
                                "first launch-type driver call: the GPU and host clocks disagree (start delay and "
                                "launch->GPU are suspect)")
        out["variants"][key] = row
        mid = mine[len(mine) // 2]
        out["selection"][key] = {"process": pname, "block": mid["i"]}
    v = out["variants"]
    if "encore" in v and "bound" in v and None not in (v["encore"]["host_busy"], v["bound"]["host_busy"]):
        own = v["bound"]["host_busy"] - v["bound"]["driver"]
        out["host_in_encore"] = v["encore"]["host_busy"] - v["encore"]["driver"] - own
        note = process_variance_note(v)
        if note:
            out["notes"].append(note)
    return out


def process_variance_note(v, limit=0.2):
    """The estimate of host in encore compares two processes. Their passive blocks (encore's P, the bound
    process's P: both launch eagerly) should take about the same wall time; where they differ by more than
    `limit`, the processes differ (on these machines by up to 30%) and the estimate carries it: say so."""
    p, e = v.get("passive", {}).get("wall"), v.get("eager", {}).get("wall")
    if not p or not e or abs(p / e - 1) <= limit:
        return None
    return (f"PROCESS VARIANCE: encore's passive blocks took {p:.1f} us a step and the bound process's eager "
            f"blocks {e:.1f} ({100 * (p / e - 1):+.0f}%): the two processes differ, and the estimate of host in "
            "encore (across them) carries that difference")


def fmt(x, digits=1):
    if x is None:
        return "—"
    return f"{x:.{digits}f}"


def markdown(results):
    lines = ["# Per-step breakdown (encore, issue 31)", "",
             "Microseconds per step, medians over blocks of the per-block value (block total / steps). "
             "Rows: eager = the bound's process with launches passed through (no encore); encore passive and "
             "encore = one process switching encore off (P) and on (A); launch-free bound = launches return at "
             "once (libskiplaunch.so), nothing runs on the GPU. Driver columns: time in driver calls of the host "
             "thread (those that reach the driver: a launch encore holds is not one), by class. replay / capture "
             "range / eager range: encore's NVTX ranges. start delay: step start to the first GPU activity; "
             "launch->GPU: first launch-type driver call to the first GPU activity after it. All under CUPTI, "
             "which adds host time to every driver call it reports (more in P blocks, one call a launch, than in "
             "A blocks): ratios come from the switch benchmark without the tracer. Columns: "
             "tests/bench/breakdown.py and docs/bench/METHOD-paired.md.", ""]
    for r in results:
        lines += [f"## {r['workload']}", ""]
        lines.append("| variant | blocks | " + " | ".join(c[1] for c in COLUMNS) + " |")
        lines.append("|---|---|" + "---|" * len(COLUMNS))
        for key, _p, _l, _label in VARIANTS:
            row = r["variants"].get(key)
            if not row:
                continue
            cells = [fmt(row.get(k), 2 if k in ("launches", "graph_launches", "gpu_intervals") else 1)
                     for k, _ in COLUMNS]
            lines.append(f"| {row['label']} | {row['blocks']} | " + " | ".join(cells) + " |")
        lines.append("")
        if "host_in_encore" in r:
            lines.append(f"Host in encore ≈ {r['host_in_encore']:.1f} µs per step — an ESTIMATE: (host busy − "
                         "driver) of encore's A blocks minus the same of the bound's A blocks (the program's own "
                         "host work), under CUPTI.")
        for n in r["notes"]:
            lines.append(f"- {n}")
        steps = {k: v.get("steps_from") for k, v in r["variants"].items()}
        if any(s != "sync" for s in steps.values()):
            lines.append(f"- steps found from synchronising calls (sync) or by splitting blocks evenly (even): {steps}")
        if r.get("png"):
            lines.append(f"\n![timeline of {r['workload']}]({os.path.basename(r['png'])})")
        lines.append("")
    return "\n".join(lines)


def short_table(results):
    cols = [("wall", "wall"), ("host_busy", "busy"), ("driver", "driver"), ("sync", "sync"), ("gpu_busy", "gpu"),
            ("gpu_idle", "idle"), ("start_delay", "delay")]
    out = [f"{'workload':<18} {'variant':<9} " + " ".join(f"{h:>8}" for _, h in cols) + "   (us per step)"]
    for r in results:
        for key, _p, _l, _label in VARIANTS:
            row = r["variants"].get(key)
            if row:
                out.append(f"{r['workload']:<18} {key:<9} " + " ".join(f"{fmt(row.get(k)):>8}" for k, _ in cols))
        if "host_in_encore" in r:
            out.append(f"{r['workload']:<18} host in encore ~ {r['host_in_encore']:.1f} us per step (estimate)")
    return "\n".join(out)


# ---------------------------------------------------------------- the timeline --------

COLOURS = {"launch": "#6baed6", "graph_launch": "#fb6a4a", "patch": "#ff7f0e", "capture": "#9467bd",
           "copy": "#17becf", "other": "#7f7f7f", "sync": "#dddddd", "replay": "#2ca02c", "capture_range": "#c5b0d5",
           "eager": "#bcbd22", "kernel": "#08519c", "graph kernel": "#a50f15", "memset": "#8c564b"}
LEGEND = {"capture_range": "capture range", "eager": "eager range", "kernel": "GPU kernel",
          "graph kernel": "GPU kernel in a graph", "memset": "GPU memset"}


def draw_timeline(workload, panels, path):
    """panels: [(title, Trace, block)]; 2-3 consecutive steps in the middle of each block, rows host
    driver calls (by class), encore's ranges, GPU activity; µs from the first shown step's start."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except Exception as e:
        print(f"breakdown: no timeline for {workload}: matplotlib does not import ({e})", file=sys.stderr)
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 2.1 * len(panels) + 0.8), sharex=True, squeeze=False)
    used = set()
    for ax, (title, tr, blk) in zip(axes[:, 0], panels):
        _m, info = block_metrics(tr, blk)
        steps = info["steps"]
        k = min(3, len(steps))
        first = max(0, len(steps) // 2 - 1)
        shown = steps[first:first + k]
        w0, w1 = shown[0][0], shown[-1][1]
        rows = {"GPU": 0, "encore's ranges": 1, "driver (host thread)": 2, "driver (other threads)": 3}

        def bar(y, items):
            for s, e, cls in items:
                ax.broken_barh([((max(s, w0) - w0) / 1e3, max((min(e, w1) - max(s, w0)) / 1e3, 0.05))], (y - 0.4, 0.8),
                               facecolors=COLOURS.get(cls, "#444444"), edgecolor="none")
                used.add(cls)
        calls = tr.calls_in(w0, w1)
        bar(rows["driver (host thread)"], [(c[0], c[1], c[2]) for c in calls if c[3] == info["main"]])
        bar(rows["driver (other threads)"], [(c[0], c[1], c[2]) for c in calls if c[3] != info["main"]])
        bar(rows["encore's ranges"], [(r[0], r[1], "capture_range" if r[2] == "capture" else r[2])
                             for r in tr.ranges_in(w0, w1) if r[2] != "other"])
        bar(rows["GPU"], [(g[0], g[1], "graph kernel" if (g[3] == "kernel" and g[4]) else g[3])
                          for g in tr.gpu_in(w0, w1)])
        for s, _e in shown[1:]:
            ax.axvline((s - w0) / 1e3, color="black", lw=0.6, ls="--")
        ax.set_yticks(list(rows.values()))
        ax.set_yticklabels(list(rows.keys()))
        ax.set_title(f"{title}: block {blk['i']}, steps {first + 1}-{first + k} of {len(steps)}", fontsize=9)
    axes[-1, 0].set_xlabel("µs from the first shown step's start")
    handles = [Patch(color=COLOURS[c], label=LEGEND.get(c, CLASS_LABELS.get(c, c))) for c in COLOURS if c in used]
    fig.suptitle(f"{workload}: host driver calls, encore's ranges, GPU activity (dashed: step boundaries)",
                 y=0.995, fontsize=10)
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.965), ncol=min(7, len(handles) or 1),
               fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def timeline_for(result, procs, path):
    panels = []
    for key, _p, _l, label in VARIANTS:
        sel = result["selection"].get(key)
        if key == "eager" or not sel:
            continue
        blocks, tr = procs[sel["process"]]
        blk = next(b for b in blocks if b["i"] == sel["block"] and b["state"] == ("P" if key == "passive" else "A"))
        panels.append((label, tr, blk))
    return draw_timeline(result["workload"], panels, path) if panels else None


# ---------------------------------------------------------------- analyse / run --------

def load(stdout_path, trace_path):
    blocks = parse_blocks(open(stdout_path, errors="replace").read()) if os.path.exists(stdout_path) else []
    try:
        tr = Trace(trace_path) if trace_path and os.path.exists(trace_path) else None
    except (ValueError, struct.error) as e:
        print(f"breakdown: {trace_path}: {e}", file=sys.stderr)
        tr = None
    return blocks, tr


def analyse_files(workload, files, out_dir, png=True):
    procs = {p: load(*files[p]) for p in files}
    r = analyse_workload(workload, procs)
    if png and r["variants"]:
        r["png"] = timeline_for(r, procs, os.path.join(out_dir, f"timeline-{workload}.png"))
    return r


def write_outputs(results, out_dir):
    with open(os.path.join(out_dir, "breakdown.md"), "w") as f:
        f.write(markdown(results) + "\n")
    with open(os.path.join(out_dir, "breakdown.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(os.path.join(out_dir, "breakdown-table.txt"), "w") as f:
        f.write(short_table(results) + "\n")


def find_file(build, name):
    for dirpath, _dirs, files in os.walk(build):
        if name in files:
            return os.path.join(dirpath, name)
    return None


def run_process(argv, env, out_dir, tag, timeout):
    t = time.monotonic()
    with open(os.path.join(out_dir, f"{tag}.stdout"), "w") as fo, open(os.path.join(out_dir, f"{tag}.stderr"), "w") as fe:
        try:
            rc = subprocess.run(argv, env=env, stdout=fo, stderr=fe, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        except OSError as e:
            fe.write(f"breakdown: {e}\n")
            rc = "oserror"
    tail = open(os.path.join(out_dir, f"{tag}.stderr"), errors="replace").read().splitlines()
    tl = [x for x in tail if x.startswith("encore-timeline:")]
    print(f"breakdown: {tag}: rc={rc} in {time.monotonic() - t:.0f}s; {tl[-1] if tl else 'no tracer line'}",
          flush=True)
    if rc != 0:
        why = [x for x in tail if x.strip() and not x.startswith("encore-timeline:")]
        print(f"breakdown: {tag}: {why[-1][:300] if why else 'no stderr'}", flush=True)
    return rc


def cmd_run(a):
    import bench_paired
    os.makedirs(a.out, exist_ok=True)
    libs = {n: find_file(a.build, f) for n, f in
            (("encore", "libencore.so"), ("timeline", "libencore_timeline.so"), ("skiplaunch", "libskiplaunch.so"))}
    missing = [n for n, p in libs.items() if not p]
    if missing:
        print(f"breakdown: not built in {a.build}: {', '.join(missing)}", file=sys.stderr)
        return 2
    paired = bench_paired.Paired(types.SimpleNamespace(quick=False, sim=a.sim, python=a.python), libs, a.build, a.out,
                                 None, print, time.monotonic() + 3600)
    deadline = time.monotonic() + a.budget_s
    cupti = os.environ.get("ENCTL_CUPTI") or pip_cupti()
    procs = os.path.join(a.out, "procs")  # each process's stdout, stderr and trace
    os.makedirs(procs, exist_ok=True)
    print(f"breakdown: CUPTI for Python and libtorch processes: {cupti or 'the tracer looks it up'}", flush=True)
    results = []
    for w in [x for x in a.workloads.split(",") if x]:
        if w not in bench_paired.WORKLOADS:
            print(f"breakdown: unknown workload {w}", file=sys.stderr)
            continue
        kind = bench_paired.WORKLOADS[w][0]
        argv = paired.argv(w, "PA", a.blocks)
        files = {}
        for pname in ("encore", "bound"):
            left = deadline - time.monotonic()
            if left < 20:
                print(f"breakdown: {w} {pname}: not run, the time budget is spent", flush=True)
                continue
            env = {k: v for k, v in os.environ.items() if not k.startswith(("ENCORE", "ENCTL")) and k != "LD_PRELOAD"}
            if a.sim:  # the simulated driver (tests/sim): the run's own code, not a time
                sim = os.environ.get("ENCORE_SIM_DIR") or os.path.join(a.build, "tests", "sim")
                env["LD_LIBRARY_PATH"] = sim + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
            env.update({"PYTHONUNBUFFERED": "1", "ENCTL_PARENT_PID": str(os.getpid()),
                        "ENCTL_FILE": os.path.join(procs, f"{w}-{pname}.trace")})
            if cupti and kind in ("py", "cpp"):  # the CUPTI torch brings: one CUPTI in the process
                env["ENCTL_CUPTI"] = cupti
            if pname == "encore":
                env.update({"LD_PRELOAD": f"{libs['encore']}:{libs['timeline']}", "ENCORE_NVTX": "1",
                            "NVTX_INJECTION64_PATH": libs["timeline"]})
            else:
                env.update({"LD_PRELOAD": f"{libs['skiplaunch']}:{libs['timeline']}", "SKIPLAUNCH_SWITCH": "1"})
            tag = f"{w}-{pname}"
            if os.path.exists(env["ENCTL_FILE"]):
                os.remove(env["ENCTL_FILE"])
            run_process(argv, env, procs, tag, min(a.timeout_s, left))
            files[pname] = (os.path.join(procs, f"{tag}.stdout"), env["ENCTL_FILE"])
        try:
            r = analyse_files(w, files, a.out, png=not a.no_png)
        except Exception as e:  # one workload's failure leaves the others
            r = {"workload": w, "variants": {}, "notes": [f"analysis failed: {type(e).__name__}: {e}"]}
        results.append(r)
        write_outputs(results, a.out)
    print(short_table(results))
    return 0 if results and all(r["variants"] for r in results) else 1


def cmd_analyse(a):
    os.makedirs(a.out, exist_ok=True)
    r = analyse_files(a.workload, {"encore": (a.encore_stdout, a.encore_trace), "bound": (a.bound_stdout,
                                                                                        a.bound_trace)},
                      a.out, png=not a.no_png)
    write_outputs([r], a.out)
    print(short_table([r]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the workloads under the tracer and analyse")
    r.add_argument("--build", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--workloads", default="cublas,libtorch,transformer-cpp")
    r.add_argument("--blocks", type=int, default=8)
    r.add_argument("--python", default=sys.executable)
    r.add_argument("--budget-s", type=float, default=240)
    r.add_argument("--timeout-s", type=float, default=200)
    r.add_argument("--no-png", action="store_true")
    r.add_argument("--sim", action="store_true", help="on the simulated driver (native workloads; a test of the run)")
    n = sub.add_parser("analyse", help="analyse existing stdout and trace files")
    n.add_argument("--out", required=True)
    n.add_argument("--no-png", action="store_true")
    for x in ("workload", "encore_stdout", "encore_trace", "bound_stdout", "bound_trace"):
        n.add_argument(x)
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    return cmd_run(a) if a.cmd == "run" else cmd_analyse(a)


if __name__ == "__main__":
    sys.exit(main())
