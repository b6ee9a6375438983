#!/usr/bin/env python3
"""Tests of scripts/encore-log-summary on synthetic ENCORE_LOG files.

Usage: test_log_summary.py [path/to/encore-log-summary]
Prints one line per behaviour and "N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "scripts", "encore-log-summary")
from checks import check, finish


def run(*args, stdin=None):
    p = subprocess.run([sys.executable, TOOL, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def summary(pid, seen, replayed, **kw):
    s = {"event": "summary", "time": 10.0, "pid": pid, "version": "0.1.0", "launches_seen": seen,
         "launches_replayed": replayed, "launches_eager": seen - replayed,
         "replay_pct": round(100.0 * replayed / seen, 1) if seen else 0.0, "graphs_captured": 2,
         "graph_launches": 100, "graphs_evicted": 1, "capture_failures": 0, "divergences": 3,
         "divergences_by_kind": {"kernel": 2, "config": 0, "args": 1, "short": 0},
         "flushes": {}, "calls": {}, "deferred_ns": 0, "deferred_samples": 0, "release_ns": 0, "release_samples": 0,
         "disabled": 0,
         "top_sequences": [{"seq": 1, "length": 4, "hits": 100, "saved": 300, "kernels": ["gemm", "_Z6k_axpyPfPKffi"],
                            "evicted": False}],
         "top_divergences": [{"kind": "kernel", "expected": "relu", "got": "gelu", "arg_index": -1,
                              "position": 1, "count": 2},
                             {"kind": "args", "expected": "gemm", "got": "gemm", "arg_index": 4,
                              "position": 0, "count": 1}]}
    s.update(kw)
    return s


def start(pid, cmd):
    return {"event": "start", "time": 1.0, "pid": pid, "ppid": 1, "version": "0.1.0", "exe": "/usr/bin/x",
            "cmdline": cmd, "started": 1.0, "options": {"min_repeats": 2}}


def write(path, events, extra_lines=()):
    with open(path, "w", encoding="utf-8") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
        for line in extra_lines:
            f.write(line + "\n")


with tempfile.TemporaryDirectory() as d:
    a, b = os.path.join(d, "run-100.jsonl"), os.path.join(d, "shared.jsonl")
    write(a, [start(100, "python train.py"),
              {"event": "warning", "time": 1.5, "pid": 100, "message": "ENCORE_MIN_REPEATS=x is not valid"},
              {"event": "warning", "time": 1.6, "pid": 100, "message": "ENCORE_MIN_REPEATS=x is not valid"},
              {"event": "capture", "time": 2.0, "pid": 100, "seq": 1, "length": 4, "first_kernel": "gemm",
               "capture_us": 1.0, "instantiate_us": 2.0},
              {"event": "capture_failure", "time": 2.5, "pid": 100, "seq": 2, "what": "cuStreamEndCapture",
               "cuda_error": 900},
              summary(100, 1000, 800)])
    # a shared file: pid 200 finished, pid 300 has no summary, then pid 200 reused
    write(b, [start(200, "./solver a"), summary(200, 500, 100),
              start(300, "./solver b"),
              {"event": "divergence", "time": 3, "pid": 300, "kind": "config", "expected": "k\nname",
               "got": "k", "arg_index": -1, "position": 0, "count": 1, "n": 1, "suppressed": 0},
              {"event": "divergence", "time": 4, "pid": 300, "kind": "config", "expected": "k\nname",
               "got": "k", "arg_index": -1, "position": 0, "count": 9, "n": 9, "suppressed": 7},
              start(200, "./solver c"), summary(200, 10, 10)],
          extra_lines=["not json", '{"no":"event"}', ""])

    rc, out, err = run(a, b)
    check("log-summary: exit 0 on readable logs", rc == 0, err)
    check("log-summary: header counts processes, files and bad lines",
          "encore log summary: 4 processes in 2 files (2 unreadable lines skipped)" in out, out[:300])
    check("log-summary: per-process replay percentage",
          "1,000 seen, 800 replayed (80.0%), 200 eager" in out and "500 seen, 100 replayed (20.0%)" in out, out)
    check("log-summary: command line shown", "pid 100  python train.py" in out)
    check("log-summary: top divergence reasons in words",
          "a different kernel at position 1: relu -> gelu" in out and "argument 4 differed at position 0: gemm" in out,
          out)
    check("log-summary: warnings counted once per text", out.count("ENCORE_MIN_REPEATS=x is not valid") == 1
          and "         2  ENCORE_MIN_REPEATS=x is not valid" in out, out)
    check("log-summary: capture failures listed", "cuStreamEndCapture (CUDA error 900)" in out)
    check("log-summary: a process without summary is marked and uses its events",
          "pid 300  ./solver b   [no summary" in out and "divergences   9 (config 9)" in out, out)
    check("log-summary: control characters in names are not printed raw", "k?name" in out and "k\nname" not in out)
    check("log-summary: a reused pid is a separate process", "pid 200  ./solver a" in out and "pid 200  ./solver c" in out)
    check("log-summary: mangled C++ names shown by their readable part", "[gemm, k_axpy]" in out, out)
    check("log-summary: a total line for several processes",
          "total: 1,510 launches, 910 replayed (60.3%)" in out and "1 without summary" in out, out[-400:])

    rc, out, err = run("--json", a, b)
    try:
        doc = json.loads(out)
        ok = True
    except ValueError as e:
        ok, doc = False, {}
        err = str(e)
    check("log-summary --json: parses", rc == 0 and ok, err)
    procs = doc.get("processes", [])
    check("log-summary --json: one entry per process, busiest first",
          [p["pid"] for p in procs][:2] == [100, 200] and len(procs) == 4, str([p.get("pid") for p in procs]))
    tot = doc.get("total", {})
    check("log-summary --json: totals are the sums",
          tot.get("launches_seen") == 1510 and tot.get("launches_replayed") == 910 and tot.get("replay_pct") == 60.3
          and tot.get("processes") == 4 and tot.get("processes_without_summary") == 1, str(tot))
    p100 = procs[0] if procs else {}
    check("log-summary --json: process numbers equal its summary line",
          p100.get("launches_seen") == 1000 and p100.get("replay_pct") == 80.0 and p100.get("has_summary") is True
          and p100.get("warnings") == [{"message": "ENCORE_MIN_REPEATS=x is not valid", "count": 2}], str(p100))
    check("log-summary --json: bad lines counted", doc.get("bad_lines") == 2)
    check("log-summary --json: exact kernel names kept",
          procs and procs[0]["top_sequences"][0]["kernels"] == ["gemm", "_Z6k_axpyPfPKffi"])

    # issue 28: graphs that never replayed are named, with when each was captured (its capture event)
    u = os.path.join(d, "unreplayed.jsonl")
    write(u, [start(500, "python cg.py"),
              {"event": "capture", "time": 1.25, "pid": 500, "seq": 7, "length": 8, "first_kernel": "[memset]",
               "capture_us": 1.0, "instantiate_us": 2.0},
              summary(500, 1000, 900, captured_never_replayed=5,
                      never_replayed=[{"seq": 7, "length": 8, "hits": 0, "saved": 0, "kernels": ["[memset]", "csrmv"],
                                       "evicted": False},
                                      {"seq": 9, "length": 5, "hits": 0, "saved": 0, "kernels": ["naxpy"],
                                       "evicted": True}])])
    rc, out, _ = run(u)
    check("log-summary: graphs never replayed are listed with when each was captured",
          "captured, never replayed (2 of 5 shown, the first captured first):" in out
          and "seq 7: 8 launches, captured at 0.250 s  [[memset], csrmv]" in out
          and "seq 9: 5 launches, captured (no capture event)  [naxpy]  (evicted)" in out, out)
    rc, out, _ = run("--json", u)
    pj = (json.loads(out).get("processes") or [{}])[0] if rc == 0 else {}
    check("log-summary --json: never_replayed carries captured_s",
          [q.get("captured_s") for q in pj.get("never_replayed", [])] == [0.25, None], str(pj.get("never_replayed")))

    # issue 28: time leads a process's lines, the measured self-check first, then the estimate
    t = os.path.join(d, "time.jsonl")
    write(t, [start(400, "python serve.py"),
              summary(400, 1000, 900, time_balance_ns=-1500000, time_saved_ns=2000000, time_lost_ns=3500000,
                      per_launch_ns=2625, launch_samples=40, self_checks=3, self_check_permille=1042)])
    rc, out, _ = run(t)
    check("log-summary: the time line leads, measured ratio then the estimate",
          "  time          steps 1.042x as long with encore active (measured: 3 self-checks); host time saved "
          "+2.000 ms, lost -3.500 ms, balance -1.500 ms (estimate: 2.62 us a launch, median of 40 timed)" in out
          and out.index("  time ") < out.index("  launches "), out)
    check("log-summary: a log without the time fields has no time line", "  time  " not in run(a)[1])
    rc, out, _ = run("--json", t)
    pj = (json.loads(out).get("processes") or [{}])[0] if rc == 0 else {}
    check("log-summary --json: the time fields of the summary",
          pj.get("time_balance_ns") == -1500000 and pj.get("self_check_permille") == 1042, str(pj)[:300])

    rc, out, _ = run("-", stdin=open(a, encoding="utf-8").read())
    check("log-summary: '-' reads stdin", rc == 0 and "pid 100" in out)
    rc, out, err = run(os.path.join(d, "missing.jsonl"))
    check("log-summary: an unreadable file -> exit 2 with a message", rc == 2 and "cannot read" in err, err)
    rc, out, err = run()
    check("log-summary: no file -> usage error 2", rc == 2)
    empty = os.path.join(d, "empty.jsonl")
    write(empty, [])
    rc, out, _ = run(empty)
    check("log-summary: an empty log says so", rc == 0 and "no encore events found" in out, out)

    # --timeline: drawn with matplotlib where it is installed; else one message, exit 0, the text still printed
    png = os.path.join(d, "timeline.png")
    rc, out, err = run("--timeline", png, "--pid", "100", a)
    try:
        import matplotlib  # noqa: F401
        check("log-summary --timeline: draws the process's timeline (matplotlib installed)",
              rc == 0 and os.path.getsize(png) > 1000 and "timeline of pid 100" in err, err)
    except ImportError:
        check("log-summary --timeline: without matplotlib says so, draws nothing, still summarises",
              rc == 0 and "needs matplotlib" in err and not os.path.exists(png) and "pid 100" in out, err)
    rc, out, err = run("--timeline", png, "--pid", "999999", a)
    check("log-summary --timeline: an unknown --pid -> exit 2 with a message", rc == 2 and "no process 999999" in err,
          err)

finish()
