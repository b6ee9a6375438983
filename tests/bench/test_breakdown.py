#!/usr/bin/env python3
"""CTest bench.breakdown_on_the_simulator (label sim): the arithmetic of tests/bench/breakdown.py on
made-up traces whose busy, idle and synchronisation times are known, and, where the tracer
(libencore_timeline.so) and the simulated driver are built, the tracer preloaded with encore into
bench_native on the simulated driver: CUPTI absent or refusing, it says so in one line, passes
everything through (the same checksum) and still records encore's NVTX ranges.

    test_breakdown.py [--encore LIB --timeline LIB --skiplaunch LIB --bench-native BIN
                       --kernels LIB --sim-dir DIR [--build DIR]]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "unit"))
import breakdown as bd  # noqa: E402
from checks import check, finish  # noqa: E402

US = 1000
NAMES = {1: "cuLaunchKernel", 2: "cuStreamSynchronize", 3: "cuGraphLaunch", 4: "cuGraphExecKernelNodeSetParams_v2",
         5: "cuGraphInstantiateWithFlags", 6: "cuMemcpyHtoDAsync_v2", 7: "cuCtxGetCurrent", 8: "cuEventRecord"}
OFF = 7_777_000_000  # CUPTI's clock minus CLOCK_MONOTONIC in the made-up traces


def near(a, b, eps=1e-6):
    return a is not None and b is not None and abs(a - b) <= eps


class Made:
    """A made-up process: driver calls, GPU intervals (written on CUPTI's clock), ranges, BLOCK lines."""

    def __init__(self):
        self.calls, self.gpu, self.ranges, self.strings, self.lines = [], [], [], [], []

    def call(self, t, dur, cbid, thread=0):
        self.calls.append((t, dur, cbid, thread))

    def kernel(self, s, e, graph=0):
        self.gpu.append((s + OFF, e + OFF, 7, 0, graph))

    def range(self, s, e, msg, thread=0):
        if msg not in self.strings:
            self.strings.append(msg)
        self.ranges.append((s, e, self.strings.index(msg), thread, 0))

    def block(self, i, state, t0, steps, per_step_us, step):
        for j in range(steps):
            step(self, t0 + j * per_step_us * US)
        t1 = t0 + steps * per_step_us * US
        self.lines.append(f"BLOCK workload=made i={i} state={state} steps={steps} us_per_step={per_step_us:.3f} "
                          f"t0_ns={t0} t1_ns={t1} extra=ignored")

    def write(self, d, name):
        trace = os.path.join(d, name + ".trace")
        bd.write_trace(trace, self.gpu, self.calls, self.ranges, tids=[100, 101], names=NAMES, strings=self.strings,
                       mono=(0, 10**13), offsets=(OFF, OFF))
        out = os.path.join(d, name + ".stdout")
        with open(out, "w") as f:
            f.write("\n".join(["warming up"] + self.lines + ["RESULT workload=made status=ok"]) + "\n")
        return out, trace


def eager_step(p, s):  # 100 us: launches at 10 and 20 (5 us each), a query, a sync from 30 to 100
    p.call(s + 10 * US, 5 * US, 1)
    p.call(s + 20 * US, 5 * US, 1)
    p.call(s + 26 * US, 1 * US, 7)
    p.call(s + 30 * US, 70 * US, 2)
    p.kernel(s + 18 * US, s + 40 * US)
    p.kernel(s + 45 * US, s + 60 * US)
    p.kernel(s + 50 * US, s + 55 * US)  # inside the one before: the union counts it once


def outlier_step(p, s):  # 1000 us, no GPU: a block the median must leave aside
    p.call(s + 10 * US, 5 * US, 1)
    p.call(s + 20 * US, 980 * US, 2)


def encore_step(p, s):  # 60 us: a replay range 20-28 with a patch and a graph launch, sync 28-60
    p.range(s + 20 * US, s + 28 * US, "encore: sequence 3, 2 launches")
    p.call(s + 21 * US, 2 * US, 4)
    p.call(s + 24 * US, 3 * US, 3)
    p.call(s + 28 * US, 32 * US, 2)
    p.call(s + 5 * US, 4 * US, 8, thread=1)  # another thread (encore's deadline thread, say)
    p.kernel(s + 30 * US, s + 40 * US, graph=1)
    p.kernel(s + 40 * US, s + 50 * US, graph=1)


def bound_eager_step(p, s):  # 90 us
    p.call(s + 5 * US, 4 * US, 1)
    p.call(s + 12 * US, 4 * US, 1)
    p.call(s + 20 * US, 70 * US, 2)
    p.kernel(s + 10 * US, s + 40 * US)


def bound_free_step(p, s):  # 15 us: launches skipped (never reach the driver), a sync of 3 us
    p.call(s + 12 * US, 3 * US, 2)


def made_up(d):
    B = 10**12
    enc, bound = Made(), Made()
    enc.block(0, "P", B, 2, 100, eager_step)
    enc.block(1, "A", B + 300 * US, 2, 60, encore_step)
    enc.block(2, "P", B + 600 * US, 2, 100, eager_step)
    enc.block(3, "A", B + 900 * US, 2, 60, encore_step)
    enc.block(4, "P", B + 1200 * US, 2, 1000, outlier_step)
    B2 = B + 10**9
    bound.block(0, "P", B2, 2, 90, bound_eager_step)
    bound.block(1, "A", B2 + 400 * US, 2, 15, bound_free_step)
    return {"encore": enc.write(d, "enc"), "bound": bound.write(d, "bound")}


def test_arithmetic(d):
    files = made_up(d)
    r = bd.analyse_files("made", files, d, png=True)
    v = r["variants"]
    P, A, E, F = v.get("passive", {}), v.get("encore", {}), v.get("eager", {}), v.get("bound", {})
    check("blocks: every row has its blocks (P 3, A 2, eager 1, bound 1)",
          (P.get("blocks"), A.get("blocks"), E.get("blocks"), F.get("blocks")) == (3, 2, 1, 1), str(v))
    check("wall: the median over blocks, not the mean (an outlier P block of 1000 us left aside)",
          near(P["wall"], 100.0), P["wall"])
    check("sync wait and host busy: 70 us in cuStreamSynchronize, 30 us busy",
          near(P["sync"], 70.0) and near(P["host_busy"], 30.0), (P["sync"], P["host_busy"]))
    check("driver by class: 10 us of launches, 1 us other, 11 in all",
          near(P["launch"], 10.0) and near(P["other"], 1.0) and near(P["driver"], 11.0),
          (P["launch"], P["other"], P["driver"]))
    check("GPU busy is the union of the intervals (18-40, 45-60, 50-55: 37 us), idle the rest",
          near(P["gpu_busy"], 37.0) and near(P["gpu_idle"], 63.0), (P["gpu_busy"], P["gpu_idle"]))
    check("start delay: step start to the first GPU activity (18 us); launch->GPU 8 us",
          near(P["start_delay"], 18.0) and near(P["launch_to_gpu"], 8.0), (P["start_delay"], P["launch_to_gpu"]))
    check("counts per step: 2 launches, 3 GPU intervals",
          near(P["launches"], 2) and near(P["gpu_intervals"], 3), (P["launches"], P["gpu_intervals"]))
    check("encore's A blocks: graph launch 3, patch 2, sync 32, busy 28",
          near(A["graph_launch"], 3.0) and near(A["patch"], 2.0) and near(A["sync"], 32.0)
          and near(A["host_busy"], 28.0), A)
    check("another thread's driver time is its own column (4 us), not the host thread's",
          near(A["other_threads"], 4.0) and near(A["driver"], 5.0), (A["other_threads"], A["driver"]))
    check("encore's ranges: 8 us of replay, one a step; none in P blocks",
          near(A["replay"], 8.0) and near(A["n_replay"], 1) and near(P["replay"], 0.0), (A["replay"], P["replay"]))
    check("adjacent graph kernels: 20 us busy; start delay 30 (held until the graph launch), launch->GPU 6",
          near(A["gpu_busy"], 20.0) and near(A["start_delay"], 30.0) and near(A["launch_to_gpu"], 6.0), A)
    check("steps found from the synchronising calls (one a step)",
          all(x.get("steps_from") == "sync" for x in v.values()), {k: x.get("steps_from") for k, x in v.items()})
    check("eager (the bound's P blocks): wall 90, busy 20, launch 8, GPU 30, delay 10, launch->GPU 5",
          near(E["wall"], 90.0) and near(E["host_busy"], 20.0) and near(E["launch"], 8.0)
          and near(E["gpu_busy"], 30.0) and near(E["start_delay"], 10.0) and near(E["launch_to_gpu"], 5.0), E)
    check("the bound's A blocks: no GPU activity, no start delay, busy 12",
          near(F["gpu_busy"], 0.0) and F["start_delay"] is None and near(F["host_busy"], 12.0), F)
    check("host in encore (estimate) = (28 - 5) - (12 - 0) = 11 us",
          near(r.get("host_in_encore"), 11.0), r.get("host_in_encore"))
    check("passive and eager walls within 20% (100 against 90 us): no process-variance note",
          not any("PROCESS VARIANCE" in n for n in r["notes"]), r["notes"])
    check("passive blocks 43% slower than the other process's eager ones: the estimate is said to carry it",
          "+43%" in (bd.process_variance_note({"passive": {"wall": 1689.7}, "eager": {"wall": 1185.2}}) or ""),
          bd.process_variance_note({"passive": {"wall": 1689.7}, "eager": {"wall": 1185.2}}))
    md = bd.markdown([r])
    check("markdown: one row per variant and the estimate said to be one",
          md.count("\n| ") == 5 and "ESTIMATE" in md, md)
    bd.write_outputs([r], d)
    check("breakdown.md and breakdown.json written",
          all(os.path.exists(os.path.join(d, f)) for f in ("breakdown.md", "breakdown.json")))
    try:
        import matplotlib  # noqa: F401
        check("the timeline PNG is drawn where matplotlib imports",
              r.get("png") and os.path.getsize(r["png"]) > 1000, r.get("png"))
    except ImportError:
        check("no matplotlib: no PNG, and no failure", r.get("png") is None, r.get("png"))


def test_pieces(d):
    cls = {n: bd.call_class(n) for n in
           ("cuLaunchKernel", "cuLaunchKernelEx_ptsz", "cuGraphLaunch_ptsz", "cuGraphExecKernelNodeSetParams_v2",
            "cuGraphExecMemcpyNodeSetParams", "cuGraphExecUpdate_v2", "cuStreamBeginCapture_v2", "cuStreamEndCapture",
            "cuGraphInstantiateWithFlags", "cuGraphAddKernelNode_v2", "cuMemcpyHtoDAsync_v2", "cuMemsetD32Async",
            "cuStreamSynchronize_ptsz", "cuCtxSynchronize", "cuEventSynchronize", "cuMemcpyDtoH_v2", "cuStreamQuery",
            "cuEventRecord")}
    want = {"cuLaunchKernel": "launch", "cuLaunchKernelEx_ptsz": "launch", "cuGraphLaunch_ptsz": "graph_launch",
            "cuGraphExecKernelNodeSetParams_v2": "patch", "cuGraphExecMemcpyNodeSetParams": "patch",
            "cuGraphExecUpdate_v2": "patch", "cuStreamBeginCapture_v2": "capture", "cuStreamEndCapture": "capture",
            "cuGraphInstantiateWithFlags": "capture", "cuGraphAddKernelNode_v2": "capture",
            "cuMemcpyHtoDAsync_v2": "copy", "cuMemsetD32Async": "copy", "cuStreamSynchronize_ptsz": "sync",
            "cuCtxSynchronize": "sync", "cuEventSynchronize": "sync", "cuMemcpyDtoH_v2": "sync",
            "cuStreamQuery": "other", "cuEventRecord": "other"}
    check("driver functions by class", cls == want, {k: (cls[k], want[k]) for k in cls if cls[k] != want[k]})
    check("union of intervals clipped to the window",
          bd.union_length([(0, 10), (5, 20), (30, 40), (35, 36)], 2, 38) == 18 + 8)
    p = os.path.join(d, "drift.trace")
    bd.write_trace(p, gpu=[(500_000 + 2_000, 600_000 + 2_200, 1, 0, 0)], mono=(0, 1_000_000), offsets=(1_000, 3_000))
    t = bd.Trace(p)
    check("GPU times come back on CLOCK_MONOTONIC, the offset drifting linearly from start to end",
          abs(t.gpu[0][0] - 500_000) <= 5 and abs(t.gpu[0][1] - 600_000) <= 5 and t.drift_ns == 2_000, t.gpu)
    steps, how = bd.step_bounds([(15, 20, "sync", 0, "s"), (30, 40, "sync", 0, "s"), (45, 50, "sync", 0, "s")], 0,
                                0, 60, 2)
    check("three syncs in two steps: the block is split evenly, and says so",
          how == "even" and steps == [(0, 30), (30, 60)], (steps, how))
    steps, how = bd.step_bounds([(5, 10, "sync", 0, "s"), (15, 20, "sync", 0, "s"), (25, 28, "sync", 0, "s"),
                                 (35, 40, "sync", 0, "s")], 0, 0, 40, 2)
    check("two syncs a step: a step ends where its second one returns",
          how == "sync" and steps == [(0, 20), (20, 40)], (steps, how))
    p = os.path.join(d, "early.trace")  # a kernel 5 us before the only launch: the clocks disagree
    bd.write_trace(p, gpu=[(5 * US + OFF, 8 * US + OFF, 1, 0, 0)], calls=[(10 * US, 2 * US, 1, 0), (20 * US, 5 * US, 2, 0)],
                   names=NAMES, tids=[1], mono=(0, 10**6), offsets=(OFF, OFF))
    res = bd.analyse_workload("early", {"encore": ([{"i": 0, "state": "P", "steps": 1, "us": 25.0, "t0": 0,
                                                     "t1": 25 * US}], bd.Trace(p))})
    check("GPU activity before the step's first launch is called out (CLOCK CHECK)",
          any("CLOCK CHECK" in n for n in res["notes"]), res["notes"])
    bad = os.path.join(d, "empty.trace")
    open(bad, "wb").close()
    check("an empty trace file: no trace, no exception", bd.load(os.devnull, bad) == ([], None))


def test_paired_parser(d):
    """bench_paired's parser reads BLOCK lines with t0_ns and t1_ns as before (extra keys ignored)."""
    import bench_paired as bp
    p = bp.Paired(types.SimpleNamespace(quick=True, sim=True, python=sys.executable), {}, d, d, None, lambda m: None,
                  10**12)
    code = ("print('BLOCK workload=cublas i=0 state=P steps=4 us_per_step=12.500 t0_ns=5 t1_ns=55');"
            "print('BLOCK workload=cublas i=1 state=A steps=4 us_per_step=7.250 t0_ns=60 t1_ns=89');"
            "print('RESULT workload=cublas status=ok checksum=ab us_per_step=10')")
    p.argv = lambda *a: [sys.executable, "-c", code]
    rec = p.run("cublas", "eager", "switch", "PA", 2)
    check("bench_paired parses BLOCK lines that end with t0_ns and t1_ns",
          rec["ok"] and rec["blocks"] == [{"i": 0, "state": "P", "us": 12.5}, {"i": 1, "state": "A", "us": 7.25}],
          rec.get("blocks"))


def run_sim(a, d, preload, extra, tag):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENCORE", "ENCTL")) and k != "LD_PRELOAD"}
    env["LD_LIBRARY_PATH"] = a.sim_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    if preload:
        env["LD_PRELOAD"] = preload
    env.update(extra)
    argv = [a.bench_native, "--module", a.kernels, "--pattern", "repeat", "--schedule", "PA", "--blocks", "6",
            "--steps", "10", "--warmup", "10"]
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    with open(os.path.join(d, tag + ".stdout"), "w") as f:
        f.write(r.stdout)
    checksum = next((t for line in r.stdout.splitlines() if line.startswith("RESULT") for t in line.split()
                     if t.startswith("checksum=")), None)
    return r, checksum


def test_tracer(a, d):
    base, want = run_sim(a, d, None, {}, "plain")
    check("bench_native on the simulated driver: BLOCK lines carry t0_ns and t1_ns",
          base.returncode == 0 and len(bd.parse_blocks(base.stdout)) == 6, base.stdout + base.stderr)
    nvtx = {"ENCORE_NVTX": "1", "NVTX_INJECTION64_PATH": a.timeline}
    for how, extra in (("CUPTI absent (ENCTL_CUPTI names no file)", {"ENCTL_CUPTI": "/nonexistent/libcupti.so"}),
                       ("the CUPTI this machine has, if any", {})):
        trace = os.path.join(d, "sim.trace")
        if os.path.exists(trace):
            os.remove(trace)
        r, got = run_sim(a, d, f"{a.encore}:{a.timeline}", dict(nvtx, ENCTL_FILE=trace, **extra), "enc")
        lines = [x for x in r.stderr.splitlines() if x.startswith("encore-timeline:")]
        check(f"{how}: the program runs through, its checksum unchanged", r.returncode == 0 and got == want,
              f"rc {r.returncode}, {got} vs {want}\n{r.stderr[-2000:]}")
        check(f"{how}: one line says CUPTI is missing or refused, one line sums up",
              len(lines) == 2 and ("not available" in lines[0] or "refused" in lines[0]) and "status=" in lines[1],
              "\n".join(lines))
        try:
            t = bd.Trace(trace)
        except Exception as e:
            check(f"{how}: the trace file is written and read", False, repr(e))
            continue
        blocks = bd.parse_blocks(r.stdout)
        res = bd.analyse_workload("native-repeat", {"encore": (blocks, t)})
        v = res["variants"]
        check(f"{how}: encore's replay ranges recorded through NVTX, in A blocks only",
              v.get("encore", {}).get("n_replay", 0) > 0 and v.get("passive", {}).get("n_replay") == 0,
              f"{t.status}, {len(t.ranges)} ranges; {v}")
        check(f"{how}: no driver calls: their columns unknown (None), not zero",
              t.calls or v.get("encore", {}).get("host_busy", 0) is None, v.get("encore"))
    trace = os.path.join(d, "bound.trace")
    r, got = run_sim(a, d, f"{a.skiplaunch}:{a.timeline}",
                     {"SKIPLAUNCH_SWITCH": "1", "ENCTL_FILE": trace, "ENCTL_CUPTI": "/nonexistent"}, "bound")
    check("after libskiplaunch.so, without encore: runs through and writes its trace",
          r.returncode == 0 and os.path.exists(trace) and len(bd.parse_blocks(r.stdout)) == 6, r.stderr[-2000:])
    trace = os.path.join(d, "helper.trace")
    r, got = run_sim(a, d, f"{a.encore}:{a.timeline}", dict(nvtx, ENCTL_FILE=trace, ENCTL_PARENT_PID="1"), "helper")
    check("ENCTL_PARENT_PID names another parent: dormant (no line, no file), the program unchanged",
          r.returncode == 0 and got == want and not os.path.exists(trace) and "encore-timeline:" not in r.stderr,
          r.stderr[-2000:])


def test_run(a, d):
    """breakdown.py run, as scripts/gpu/breakdown calls it, on the simulated driver: both processes
    of a native workload, the tables and the JSON."""
    out = os.path.join(d, "run")
    env = dict(os.environ, ENCORE_PROGKERNELS=a.kernels, ENCORE_SIM_DIR=a.sim_dir)
    r = subprocess.run([sys.executable, os.path.join(HERE, "breakdown.py"), "run", "--sim", "--build", a.build, "--out",
                        out, "--workloads", "native-repeat", "--blocks", "4", "--no-png"], env=env,
                       capture_output=True, text=True, timeout=120)
    md = open(os.path.join(out, "breakdown.md")).read() if os.path.exists(os.path.join(out, "breakdown.md")) else ""
    check("breakdown.py run --sim: both processes run, one row per variant in breakdown.md",
          r.returncode == 0 and "## native-repeat" in md and md.count("\n| ") == 5, r.stdout + r.stderr)
    try:
        res = __import__("json").load(open(os.path.join(out, "breakdown.json")))
        n = res[0]["variants"]["encore"]["n_replay"]
    except Exception as e:
        n = repr(e)
    check("breakdown.py run --sim: breakdown.json has encore's replays in its A blocks",
          isinstance(n, (int, float)) and n > 0, n)
    check("breakdown.py run: the short table is printed last", r.stdout.strip().splitlines()[-1:] and
          r.stdout.strip().splitlines()[-1].startswith("native-repeat"), r.stdout[-500:])


def main():
    ap = argparse.ArgumentParser()
    for opt in ("encore", "timeline", "skiplaunch", "bench-native", "kernels", "sim-dir", "build"):
        ap.add_argument("--" + opt)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="encore-breakdown-") as d:
        test_arithmetic(d)
        test_pieces(d)
        test_paired_parser(d)
        if all((a.encore, a.timeline, a.skiplaunch, a.bench_native, a.kernels, a.sim_dir)):
            test_tracer(a, d)
            if a.build:
                test_run(a, d)
        else:
            print("(the tracer is not built here: only the analysis is tested)")
    finish()


if __name__ == "__main__":
    main()
