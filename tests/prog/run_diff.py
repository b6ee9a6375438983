#!/usr/bin/env python3
"""Run a test program without and with encore on the simulated driver and compare.

    run_diff.py --encore LIBENCORE --sim-dir DIR [options] -- PROGRAM [ARGS...]

The program runs twice with LD_LIBRARY_PATH=DIR (where the simulated
libcuda.so.1 lives) and SIMCUDA_STATS=1: once as it is (the baseline) and once
with LD_PRELOAD=LIBENCORE, the --encore-env variables and ENCORE_LOG set to a
temporary file. Both must exit 0 and print the same stdout, byte for byte
(the simulator's own "simcuda: " statistics lines are set aside first). Then
the checks given on the command line are made against encore's summary (the
last "event":"summary" line of the log).

Values the checks can name (KEY):
  any summary field; nested ones with a dot: divergences_by_kind.args,
    flushes.deadline, calls.launch, eager_by.learning
Checked in every run: the eager_by reasons add up to launches_eager.
  replay_fraction            launches_replayed / launches_seen
  launches_per_graph_launch  launches_replayed / graph_launches
  launches_made              the program's "launches_made=N" stderr line
  sim.kernels, sim.graph_launches, sim.graph_kernels, sim.faults,
  sim.priority_kernels, sim.priority_sum, sim.graph_execs_live
                             the simulator's statistics in the encore run
                             (every KEY=N of its "simcuda: " lines)
  prog.KEY                   a "KEY=N" line the program printed on stderr
                             (rss_kb, ...) in the encore run
  base.sim.kernels, base.prog.rss_kb, ...  the same in the baseline run
A check's VALUE is a number or another KEY.

Exit status: 0 pass, 1 fail, 77 skip (libencore.so or the simulator missing).
With --fuzz, stdout is compared line by line as "seed S digest H" lines; the
first differing seed is reported with the commands that reproduce it alone,
and with --shrink the runner also looks for a shorter program that still
differs (see fuzz.c: --max-ops and --drop).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

SKIP = 77


def parse_kv(text, what):
    if "=" not in text:
        raise SystemExit(f"run_diff: {what} wants KEY=VALUE, not {text!r}")
    k, v = text.rsplit("=", 1) if what == "--expect-stderr-lines" else text.split("=", 1)
    return k, v


def flatten(obj, prefix=""):
    out = {}
    for k, v in obj.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        elif isinstance(v, bool):
            out[key] = int(v)
        elif isinstance(v, (int, float)):
            out[key] = v
    return out


SIM_LINE_RE = re.compile(r"^simcuda: (\w+=-?\d+(?: \w+=-?\d+)*)\s*$", re.M)
LAUNCHES_RE = re.compile(r"^launches_made=(\d+)\s*$", re.M)
PROG_KV_RE = re.compile(r"^([a-z][a-z0-9_]*)=(-?\d+)\s*$", re.M)


def split_sim_lines(stdout):
    """The simulator's statistics lines may land on stdout; they differ by design."""
    kept = [l for l in stdout.splitlines(keepends=True) if not l.startswith("simcuda: ")]
    return "".join(kept)


def sim_stats(text):
    """Every KEY=N of the simulator's "simcuda: " statistics lines (the last value wins)."""
    out = {}
    for m in SIM_LINE_RE.finditer(text):
        for kv in m.group(1).split():
            k, v = kv.split("=")
            out[k] = int(v)
    return out


def prog_stats(text):
    """The program's own "KEY=N" lines on stderr (the last value wins)."""
    return {m.group(1): int(m.group(2)) for m in PROG_KV_RE.finditer(text)}


class Run:
    def __init__(self, rc, stdout, stderr, seconds, timed_out):
        self.rc, self.stdout, self.stderr, self.seconds, self.timed_out = rc, stdout, stderr, seconds, timed_out


def run(cmd, env, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        out, err, rc, to = p.stdout, p.stderr, p.returncode, False
    except subprocess.TimeoutExpired as e:
        out, err, rc, to = e.stdout or b"", e.stderr or b"", -9, True
    dec = lambda b: b.decode("utf-8", "replace")
    return Run(rc, dec(out), dec(err), time.monotonic() - t0, to)


def tail(text, n=25):
    lines = text.rstrip("\n").splitlines()
    if len(lines) > n:
        lines = [f"... ({len(lines) - n} lines before)"] + lines[-n:]
    return "\n".join("    | " + l for l in lines)


def notable(text, n=12):
    """The program's and encore's own messages (they may scroll out of the tail)."""
    lines = [l for l in text.splitlines() if l.startswith(("prog", "encore: ", "simcuda: "))]
    if len(lines) > n:
        lines = lines[:n] + [f"... ({len(lines) - n} more)"]
    return "\n".join("    | " + l for l in lines)


def first_difference(a, b):
    al, bl = a.splitlines(keepends=True), b.splitlines(keepends=True)
    for i in range(max(len(al), len(bl))):
        x = al[i] if i < len(al) else "<end of output>"
        y = bl[i] if i < len(bl) else "<end of output>"
        if x != y:
            return i + 1, x.rstrip("\n"), y.rstrip("\n")
    return None


def without_seed_options(prog):
    """The fuzz program's command without its --seeds/--seeds-env options (to run one seed alone)."""
    out, skip = [], False
    for a in prog:
        if skip:
            skip = False
        elif a in ("--seeds", "--seeds-env"):
            skip = True
        else:
            out.append(a)
    return out


class Runner:
    def __init__(self, args, prog):
        self.args, self.prog = args, prog
        self.prog_alone = without_seed_options(prog) if args.fuzz else prog
        self.base_env = dict(os.environ)
        ld = self.base_env.get("LD_LIBRARY_PATH", "")
        self.base_env["LD_LIBRARY_PATH"] = args.sim_dir + (":" + ld if ld else "")
        self.base_env["SIMCUDA_STATS"] = "1"
        # An encore built with ASan is preloaded ahead of the runtime; let ASan accept that.
        asan = self.base_env.get("ASAN_OPTIONS", "")
        if "verify_asan_link_order" not in asan:
            self.base_env["ASAN_OPTIONS"] = "verify_asan_link_order=0" + (":" + asan if asan else "")
        for kv in args.env:
            k, v = parse_kv(kv, "--env")
            self.base_env[k] = v
        # Neither run inherits encore settings from the caller's environment.
        for k in list(self.base_env):
            if k.startswith("ENCORE"):
                del self.base_env[k]
        # The simulated driver's launches cost far more host time than a real
        # one's, so under load a stream could look "sparse" (ENCORE_MAX_GAP)
        # and never be held: tests of that rule set it themselves. Nor are its
        # steps timed as a GPU's would be (ENCORE_SELF_CHECK: its tests set it,
        # and check from the first 64 steps on, not after a second of replays).
        self.encore_extra = {"ENCORE_MAX_GAP": "10s", "ENCORE_SELF_CHECK": "0", "ENCORE_SELF_CHECK_AFTER": "0"}
        # RUN_DIFF_ENCORE_ENV="K=V ...": the whole suite under a setting (a trial's), each test's own on top.
        for kv in os.environ.get("RUN_DIFF_ENCORE_ENV", "").split() + list(args.encore_env):
            k, v = parse_kv(kv, "--encore-env")
            self.encore_extra[k] = v

    def env_plain(self):
        return dict(self.base_env)

    def env_encore(self, log):
        env = dict(self.base_env)
        extra = dict(self.encore_extra)
        after = extra.pop("LD_PRELOAD", "")  # --encore-env LD_PRELOAD=LIB: preloaded after encore (libsimaudit.so)
        env["LD_PRELOAD"] = " ".join(x for x in (self.args.encore, after, env.get("LD_PRELOAD", "")) if x)
        env.update(extra)
        env["ENCORE_LOG"] = log
        return env

    def run_plain(self, extra_args=(), alone=False):
        prog = self.prog_alone if alone else self.prog
        return run(prog + list(extra_args), self.env_plain(), self.args.timeout)

    def run_encore(self, extra_args=(), alone=False):
        fd, log = tempfile.mkstemp(prefix="encore-log-", suffix=".jsonl")
        os.close(fd)
        try:
            prog = self.prog_alone if alone else self.prog
            r = run(prog + list(extra_args), self.env_encore(log), self.args.timeout)
            with open(log, "r", encoding="utf-8", errors="replace") as f:
                r.log = f.read()
        finally:
            if self.args.keep_log:
                print(f"run_diff: encore log kept in {log}")
            else:
                os.unlink(log)
        return r

    def repro(self, extra_args, encore):
        """A shell command line that runs the program alone, as the runner did."""
        env = {"LD_LIBRARY_PATH": self.args.sim_dir, "SIMCUDA_STATS": "1"}
        for kv in self.args.env:
            k, v = parse_kv(kv, "--env")
            env[k] = v
        if encore:
            env["LD_PRELOAD"] = self.args.encore
            env.update(self.encore_extra)
            env["ENCORE_LOG"] = "/tmp/encore-repro.jsonl"
        pre = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        return f"env {pre} " + " ".join(shlex.quote(a) for a in self.prog_alone + list(extra_args))


def summary_of(log):
    import json

    summary = None
    for line in log.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("event") == "summary":
            summary = obj
    return summary


def values_of(summary, enc, base):
    vals = flatten(summary) if summary else {}
    seen = vals.get("launches_seen", 0)
    vals["replay_fraction"] = vals.get("launches_replayed", 0) / seen if seen else 0.0
    gl = vals.get("graph_launches", 0)
    vals["launches_per_graph_launch"] = vals.get("launches_replayed", 0) / gl if gl else 0.0
    for k, v in sim_stats(enc.stderr + "\n" + enc.stdout).items():
        vals["sim." + k] = v
    for k, v in sim_stats(base.stderr + "\n" + base.stdout).items():
        vals["base.sim." + k] = v
    for k, v in prog_stats(enc.stderr).items():
        vals["prog." + k] = v
    for k, v in prog_stats(base.stderr).items():
        vals["base.prog." + k] = v
    m = None
    for m in LAUNCHES_RE.finditer(base.stderr):
        pass
    if m:
        vals["launches_made"] = int(m.group(1))
    return vals


def resolve(vals, text):
    try:
        return float(text), text
    except ValueError:
        if text not in vals:
            return None, text
        return float(vals[text]), f"{text} ({vals[text]})"


def fmt(v):
    return str(int(v)) if float(v).is_integer() else f"{v:.4f}"


def check_expectations(args, vals, enc, failures, notes):
    def get(key):
        if key not in vals and key.startswith("flushes_by_call.") and "launches_seen" in vals:
            return 0.0  # the summary names only the calls that issued held launches
        if key not in vals:
            failures.append(f"{key}: not in the summary or the program's output")
            return None
        return float(vals[key])

    ops = [("==", args.expect, lambda a, b: a == b), (">=", args.expect_min, lambda a, b: a >= b),
           ("<=", args.expect_max, lambda a, b: a <= b)]
    for kv in args.expect_max_over_base:
        key, delta = parse_kv(kv, "--expect-max-over-base")
        got, base_val = get(key), get("base." + key)
        if got is None or base_val is None:
            continue
        if got > base_val + float(delta):
            failures.append(f"{key} = {fmt(got)}, expected <= base.{key} ({fmt(base_val)}) + {delta}")
        else:
            notes.append(f"{key} = {fmt(got)} (<= base.{key} {fmt(base_val)} + {delta})")
    if args.expect_launches_made:
        args.expect.append("launches_seen=launches_made")
    # Every run: each launch issued one by one has one reason (the report's breakdown adds up).
    by = {k: v for k, v in vals.items() if k.startswith("eager_by.")}
    if by and sum(by.values()) != vals.get("launches_eager", 0):
        failures.append(f"eager_by adds up to {sum(by.values())}, launches_eager is {vals.get('launches_eager', 0)}")
    for sym, items, ok in ops:
        for kv in items:
            key, want = parse_kv(kv, "--expect")
            got = get(key)
            wv, wdesc = resolve(vals, want)
            if got is None:
                continue
            if wv is None:
                failures.append(f"{key} {sym} {want}: {want} is not known")
            elif not ok(got, wv):
                failures.append(f"{key} = {fmt(got)}, expected {sym} {wdesc}")
            else:
                notes.append(f"{key} = {fmt(got)} ({sym} {wdesc})")
    for text in args.expect_stderr_contains:
        if text not in enc.stderr:
            failures.append(f"stderr of the encore run lacks {text!r}")
    for text in args.expect_stderr_lacks:
        if text in enc.stderr:
            failures.append(f"stderr of the encore run contains {text!r}")
    for kv in args.expect_stderr_lines:
        text, n = parse_kv(kv, "--expect-stderr-lines")
        count = sum(1 for l in enc.stderr.splitlines() if text in l)
        if count != int(n):
            failures.append(f"stderr of the encore run has {count} lines containing {text!r}, expected {n}")


# The summary's counters, all zero: what a pass-through run that wrote no log amounts to.
ZERO_SUMMARY = {
    "launches_seen": 0, "launches_replayed": 0, "launches_eager": 0, "graphs_captured": 0, "graph_launches": 0, "graph_launches_patched": 0,
    "graphs_evicted": 0, "capture_failures": 0, "divergences": 0, "disabled": 0,
    "divergences_by_kind": {k: 0 for k in ("kernel", "config", "args", "short")},
    "flushes": {k: 0 for k in ("stream_call", "all_call", "legacy_order", "deadline", "sequence_full", "capture",
                               "opaque_launch", "exit")},
    "flushes_by_call": {},
    "calls": {k: 0 for k in ("pass", "launch", "flush_stream", "flush_all")},
}

SEED_RE = re.compile(r"^seed (\d+) digest ([0-9a-f]+)$")


def fuzz_compare(base_out, enc_out):
    """First seed whose line differs (or is missing), or None."""
    def table(text):
        d, order = {}, []
        for l in text.splitlines():
            m = SEED_RE.match(l)
            if m:
                s = int(m.group(1))
                d[s] = m.group(2)
                order.append(s)
        return d, order

    bd, border = table(base_out)
    ed, _ = table(enc_out)
    for s in border:
        if ed.get(s) != bd[s]:
            return s, bd[s], ed.get(s, "<missing>")
    return None


def shrink(runner, seed, budget_s):
    """Shortest --max-ops prefix, then droppable operations removed one group at a time."""
    t_end = time.monotonic() + budget_s

    def differs(extra):
        a = runner.run_plain(extra, alone=True)
        b = runner.run_encore(extra, alone=True)
        if a.rc != 0:
            return False  # a program that fails alone is not a reproduction
        return b.rc != 0 or a.stdout != b.stdout

    seeds = ["--seeds", f"{seed}-{seed}"]
    info = runner.run_plain(seeds + ["--count-ops"], alone=True)
    m = re.search(r"ops (\d+) droppable ([0-9,]*)", info.stdout)
    if not m:
        print("run_diff: shrink: the program does not report its operations (--count-ops)")
        return None
    nops = int(m.group(1))
    droppable = [int(x) for x in m.group(2).split(",") if x]
    # 1. shortest prefix that still differs (binary search; a prefix of a race-free program is race-free)
    lo, hi = 0, nops
    while lo < hi and time.monotonic() < t_end:
        mid = (lo + hi) // 2
        if differs(seeds + ["--max-ops", str(mid)]):
            hi = mid
        else:
            lo = mid + 1
    limit = ["--max-ops", str(hi)]
    keep_drop = []
    cands = [i for i in droppable if i < hi]
    # 2. drop accesses (launches, copies, memsets) in halving groups while the difference persists
    size = max(1, len(cands) // 2)
    while size >= 1 and time.monotonic() < t_end:
        i = 0
        while i < len(cands) and time.monotonic() < t_end:
            group = cands[i:i + size]
            trial = keep_drop + group
            if differs(seeds + limit + ["--drop", ",".join(map(str, sorted(trial)))]):
                keep_drop = trial
                cands = cands[:i] + cands[i + size:]
            else:
                i += size
        if size == 1:
            break
        size //= 2
    extra = seeds + limit
    if keep_drop:
        extra += ["--drop", ",".join(map(str, sorted(keep_drop)))]
    return extra


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encore", required=True, help="path of libencore.so")
    ap.add_argument("--sim-dir", required=True, help="directory of the simulated libcuda.so.1")
    ap.add_argument("--name", default=None, help="test name for the verdict line")
    ap.add_argument("--env", action="append", default=[], metavar="K=V", help="for both runs")
    ap.add_argument("--encore-env", action="append", default=[], metavar="K=V", help="for the encore run only")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--expect", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--expect-min", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--expect-max", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--expect-max-over-base", action="append", default=[], metavar="KEY=DELTA",
                    help="KEY in the encore run <= base.KEY (the baseline run's) + DELTA, e.g. prog.rss_kb=8192")
    ap.add_argument("--expect-launches-made", action="store_true",
                    help="launches_seen must equal the program's launches_made=N")
    ap.add_argument("--expect-stderr-contains", action="append", default=[], metavar="TEXT")
    ap.add_argument("--expect-stderr-lacks", action="append", default=[], metavar="TEXT")
    ap.add_argument("--expect-stderr-lines", action="append", default=[], metavar="TEXT=N",
                    help="the encore run's stderr has exactly N lines containing TEXT")
    ap.add_argument("--summary-optional", action="store_true",
                    help="a missing summary counts as all zeros (pass-through may write none)")
    ap.add_argument("--fuzz", action="store_true", help="compare 'seed S digest H' lines")
    ap.add_argument("--shrink", action="store_true", help="with --fuzz: shrink the first failing seed")
    ap.add_argument("--shrink-budget", type=float, default=120.0, help="seconds for --shrink (default 120)")
    ap.add_argument("--keep-log", action="store_true")
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    prog = args.prog[1:] if args.prog and args.prog[0] == "--" else args.prog
    if not prog:
        ap.error("no program given (after --)")
    name = args.name or os.path.basename(prog[0])

    if not os.path.isfile(args.encore):
        print(f"SKIP {name}: {args.encore} does not exist (encore not built)")
        return SKIP
    if not os.path.isfile(os.path.join(args.sim_dir, "libcuda.so.1")):
        print(f"SKIP {name}: no simulated libcuda.so.1 in {args.sim_dir}")
        return SKIP

    r = Runner(args, prog)
    base = r.run_plain()
    enc = r.run_encore()
    failures, notes = [], []

    for label, x in (("without encore", base), ("with encore", enc)):
        if x.timed_out:
            failures.append(f"{label}: timed out after {args.timeout:g} s")
        elif x.rc != 0:
            failures.append(f"{label}: exit status {x.rc}")
    out_base, out_enc = split_sim_lines(base.stdout), split_sim_lines(enc.stdout)
    fuzz_fail = None
    if args.fuzz:
        fuzz_fail = fuzz_compare(out_base, out_enc)
        if fuzz_fail:
            s, h0, h1 = fuzz_fail
            failures.append(f"seed {s} differs: digest {h0} without encore, {h1} with encore")
    if not fuzz_fail and out_base != out_enc:
        d = first_difference(out_base, out_enc)
        failures.append(f"stdout differs at line {d[0]}:\n    without encore: {d[1]}\n    with encore:    {d[2]}")
    lines = out_base.count("\n")

    summary = summary_of(getattr(enc, "log", ""))
    if summary is None:
        if args.summary_optional:
            notes.append("no summary in the log (pass-through); counters taken as 0")
            summary = dict(ZERO_SUMMARY)
        elif not enc.timed_out:
            failures.append("no \"event\":\"summary\" line in encore's log")
    vals = values_of(summary or {}, enc, base)
    if summary is not None:
        check_expectations(args, vals, enc, failures, notes)

    seen = vals.get("launches_seen", 0)
    frac = (f"replay fraction {vals['replay_fraction']:.3f} ({fmt(vals.get('launches_replayed', 0))}/{fmt(seen)}"
            f" launches replayed, {fmt(vals.get('graphs_captured', 0))} graphs captured,"
            f" {fmt(vals.get('graph_launches', 0))} graph launches)")
    print(f"run_diff: {name}: {frac}")
    print(f"run_diff: times: {base.seconds:.2f} s without encore, {enc.seconds:.2f} s with encore")
    for n in notes:
        print(f"run_diff:   ok: {n}")
    if failures:
        for f in failures:
            print(f"run_diff:   FAIL: {f}")
        if base.rc != 0 or base.timed_out:
            print("run_diff: messages without encore:\n" + notable(base.stderr))
            print("run_diff: stderr without encore (end):\n" + tail(base.stderr))
        print("run_diff: messages with encore:\n" + notable(enc.stderr))
        print("run_diff: stderr with encore (end):\n" + tail(enc.stderr))
        if fuzz_fail:
            s = fuzz_fail[0]
            alone = ["--seeds", f"{s}-{s}", "--verbose"]
            print(f"run_diff: first failing seed: {s}; reproduce it alone (the listing is the program):")
            print("    " + r.repro(alone, encore=False))
            print("    " + r.repro(alone, encore=True))
            if args.shrink:
                extra = shrink(r, s, args.shrink_budget)
                if extra:
                    print("run_diff: shrunk reproduction (still differs):")
                    print("    " + r.repro(extra + ["--verbose"], encore=False))
                    print("    " + r.repro(extra + ["--verbose"], encore=True))
        else:
            print("run_diff: reproduce:")
            print("    " + r.repro([], encore=False))
            print("    " + r.repro([], encore=True))
        print(f"FAIL {name}: {failures[0].splitlines()[0]}")
        return 1
    print(f"PASS {name}: stdout identical ({lines} lines), {len(notes)} checks, "
          f"replay fraction {vals['replay_fraction']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
