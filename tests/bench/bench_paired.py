"""The paired method of tests/bench/bench (--method pairs|switch): ratios that resolve 2%.

Process-to-process variation on the GPU machines reaches 1.8x, so one process per variant
decides nothing. Two ways to pair:

  pairs   many short interleaved processes, eager (no preload), encore-off (ENCORE=0) and
          encore, the order alternating round by round; one ratio per adjacent pair
          (variant / eager of the same round), median ratio with a bootstrap 95% interval.
  switch  one process per workload and encore variant, alternating blocks with encore
          passive (P) and active (A) through the in-process switch (encoreSetActive), and,
          where the framework has one, blocks of its graph mode (G, encore passive): one
          ratio per A or G block against the mean of its nearest P blocks before and after.
          Process pairs still measure encore-off against eager (interposition, which the
          switch cannot turn off); encore/eager is then (A/P) x (off/eager), its interval
          bootstrapped over both samples.

The launch-free bound in the same process (variant encore+bound; issue 31): LD_PRELOAD=
libskiplaunch.so:libencore.so SKIPLAUNCH_SWITCH=1, schedule PABPBA repeated: P both pass (encore passive,
every launch made), A encore active, B encore passive and every launch skipped (tests/bench/skip_launch.c).
encore / bound = (P/A speedup) / (P/B speedup) per adjacent triple (P, A, B; P the mean of the nearest P
blocks before and after the pair), median with a bootstrap 95% interval: no process-to-process noise in it.

Native workloads (bench_native) also run blocks "D" that bypass encore altogether (the driver's
own entry points, tests/bench/direct_driver.h): there every ratio is taken in-process against the
nearest D blocks, eager included: encore (A/D), its graph mode (G/D), and encore-off (E/D, from a
process with ENCORE=0); process pairs are not needed for them.

A claim "within 2%" is made only when the whole 95% interval lies inside [0.98, 1.02]; the
report says so either way. Results are appended to OUT/paired-results.jsonl as each process
ends, and OUT/paired-report.md (+ paired-chart.png where matplotlib imports) is rewritten
after each workload, so a run cut short by its budget leaves what it measured.
"""
import json
import os
import random
import re
import statistics
import subprocess
import time

NATIVE_CALLS_PER_STEP = 17  # bench_native: 16 launches and a stream synchronisation a step
BOOT_N = 2000
BOOT_SEED = 11
WITHIN = 0.02

# name: (kind, graph mode label or None, estimated seconds of a process, label in the report)
WORKLOADS = {
    "native-random": ("native", None, 3,
        "native, nothing repeats (16 launches a step, random kernel and grid)"),
    "native-random-start": ("native", None, 2,
        "the same, its first 40,000 launches (encore still learning, then resting)"),
    "native-norepeat": ("native", None, 2,
        "native, new arguments in every launch (16 a step)"),
    "native-repeat": ("native", "own stream capture", 2,
        "native, the same 16 launches every step"),
    "native-ring": ("native", "own graphs, one per buffer pair", 3,
        "native, 16 launches on a new buffer pair each step (ring of 64)"),
    "native-step": ("native", "own graph, patched by the program", 2,
        "native, 16 launches, the first takes the step number"),
    "cublas": ("cublas", "own stream capture (one graph)", 4,
        "cuBLAS loop: 12 sgemm + 13 kernels an iteration (bench_cublas)"),
    "triton": ("py", "manual torch.cuda.graph", 12,
        "Triton kernel loop from Python (8 launches)"),
    "cupy": ("py", "CuPy stream capture", 6,
        "CuPy elementwise loop (8 ops)"),
    "resnet18": ("py", "manual torch.cuda.graph", 12,
        "PyTorch eager ResNet-18 b=1"),
    "resnet18-b32": ("py", "manual torch.cuda.graph", 15,
        "PyTorch eager ResNet-18 b=32 (GPU-bound)"),
    "resnet18-det": ("py", "manual torch.cuda.graph", 12,
        "PyTorch eager ResNet-18 b=1, use_deterministic_algorithms(True)"),
    "jax-ops": ("py", "jax.jit", 12,
        "JAX op by op, 8 elementwise ops (no jit)"),
    "train": ("py", "manual torch.cuda.graph", 12,
        "PyTorch eager MLP training step b=32"),
    "mlp-compile": ("py", "reduce-overhead", 40,
        "torch.compile MLP 8x(Linear256,GELU,LN)"),
    "mlp-cpp": ("py", "reduce-overhead", 60,
        "torch.compile MLP, cpp_wrapper"),
    "transformer-compile": ("py", "reduce-overhead", 45,
        "torch.compile 6 transformer blocks, KV 128"),
    "transformer-cpp": ("py", "reduce-overhead", 100,
        "torch.compile transformer, cpp_wrapper"),
    "transformer-aoti": ("py", "manual torch.cuda.graph of the runner, relaxed capture", 30,
        "AOTInductor transformer, from Python (aoti_load_package)"),
    "mlp-aoti": ("py", "manual torch.cuda.graph of the runner, relaxed capture", 25,
        "AOTInductor MLP, from Python"),
    # the corpus of issue 28: programs shaped like what users run (tests/bench/bench_never_slower.py)
    "mlp-graphs": ("py", None, 40,
        "own CUDA graphs: torch.compile reduce-overhead MLP"),
    "transformer-graphs": ("py", None, 50,
        "own CUDA graphs: torch.compile reduce-overhead transformer"),
    "jax-jit": ("py", None, 15,
        "JAX jitted step (8 elementwise ops + 256x256 matmul) in a loop"),
    "hf-generate": ("py", None, 25,
        "Hugging Face Llama (4 layers, fp16) generate 32 tokens, dynamic cache"),
    "serve-varbatch": ("py", None, 12,
        "inference server loop, MLP, batch 1..64 changing every request"),
    "serve-fixed": ("py", None, 12,
        "inference server loop, MLP, batch 32 every request (serve-varbatch's yardstick)"),
    "ddp-1gpu": ("py", None, 20,
        "DDP training step (NCCL, world size 1), MLP b=32, SGD"),
    "unet-step": ("py", "manual torch.cuda.graph", 15,
        "diffusion UNet denoising step, 1x3x64x64, eager"),
    "rl-loop": ("py", "manual torch.cuda.graph", 12,
        "RL loop: 256 CartPole envs in torch + policy MLP + sampling"),
    "cupy-solver": ("py", None, 10,
        "CuPy conjugate gradient, CSR Poisson 65,536 unknowns, 20 iterations"),
    # PyTorch from C++ (tests/bench/bench_libtorch.cpp, built by tests/bench/build-libtorch-bench)
    "libtorch": ("cpp", "manual at::cuda::CUDAGraph", 15,
        "libtorch C++ transformer, op by op (no Python)"),
    "aoti-cpp": ("cpp", "manual at::cuda::CUDAGraph, relaxed capture", 15,
        "AOTInductor transformer, from C++ (AOTIModelPackageLoader)"),
}
# The corpus of issue 28, in priority order (a run cut short by its budget keeps the first ones):
# `tests/bench/bench --workloads corpus`, `WORKLOADS=corpus scripts/gpu/bench-never-slower`.
CORPUS = ["native-repeat", "native-step", "native-random", "cublas", "triton", "cupy", "cupy-solver", "resnet18",
          "resnet18-det", "jax-ops", "jax-jit", "train", "ddp-1gpu", "unet-step", "rl-loop", "mlp-compile",
          "transformer-cpp", "transformer-aoti", "mlp-graphs", "transformer-graphs", "hf-generate", "serve-varbatch",
          "libtorch"]
WORKLOAD_SETS = {"corpus": CORPUS}


def expand_workloads(names):
    """A comma list of workloads, where a set's name (corpus) stands for its workloads; order kept,
    repeats dropped."""
    out = []
    for w in names:
        for x in WORKLOAD_SETS.get(w, [w]):
            if x and x not in out:
                out.append(x)
    return out


# Named variants: the environment on top of LD_PRELOAD=libencore.so (None: no preload).
# They separate encore's costs with existing options (issue 11, item 3).
VARIANTS = {
    "eager": None,
    "encore-off": {"ENCORE": "0"},                      # interposition only (hooks count launches)
    "encore": {},                                       # everything, defaults
    "encore-count": {"ENCORE_MAX_GAP": "1us"},          # stream states, launches counted, nothing recorded
    "encore-record": {"ENCORE_MIN_REPEATS": "1000000"},  # recorded and learnt, never captured or held
    "encore-hold-always": {"ENCORE_HOLD_RULE": "0"},    # holding without the hold rule
    "encore-gap30": {"ENCORE_MAX_GAP": "30us"},          # streams held up to 30 us a launch (default 10)
    "encore-budget30": {"ENCORE_HOLD_BUDGET": "30us"},   # the default since 2026-11-26 (before: 120 us of host time)
    "encore-budget120": {"ENCORE_HOLD_BUDGET": "120us"},  # the default before 2026-11-26: longer held sequences
    "encore-ramp": {"ENCORE_HOLD_RAMP": "1"},  # a trial: shorter first sequences after a flush point
    "encore-budget60": {"ENCORE_HOLD_BUDGET": "60us"},   # between the two
    "encore-min2": {"ENCORE_MIN_REPEATS": "2"},          # the default before 2026-11-26 (evening): captured at the 2nd sighting
    "launch-free": {},  # not encore: libskiplaunch.so, switchable (env() says so); A blocks skip every launch
    "encore+bound": {},  # libskiplaunch.so before libencore.so (env() says so), schedule PABPBA: B blocks skip
    "encore+trial": {},  # schedule PATPTA: T blocks active with ENCORE_TRIAL's settings (give them: encore+trial@ENCORE_TRIAL=...)
}
VARIANT_NOTES = {
    "encore-off": "ENCORE=0: the hooks only (interposition), against no preload",
    "encore": "defaults: recording, holding, replay",
    "encore-count": "ENCORE_MAX_GAP=1us: every stream left alone; launches counted, nothing recorded or held",
    "encore-record": "ENCORE_MIN_REPEATS=1000000: recorded and learnt, nothing captured or held",
    "encore-hold-always": "ENCORE_HOLD_RULE=0: held wherever a graph's sequence begins",
    "encore-gap30": "ENCORE_MAX_GAP=30us: streams whose launches come up to 30 us apart are held too",
    "encore-budget30": "ENCORE_HOLD_BUDGET=30us: held sequences of at most 30 us of host time (the default now)",
    "encore-budget120": "ENCORE_HOLD_BUDGET=120us: held sequences of at most 120 us of host time (the old default)",
    "encore-ramp": "ENCORE_HOLD_RAMP=1: after a flush point, a budget-cut stream's first sequences are a quarter of the cut, doubling back",
    "encore-budget60": "ENCORE_HOLD_BUDGET=60us: held sequences of at most 60 us of host time",
    "encore-min2": "ENCORE_MIN_REPEATS=2: a sequence captured when it comes the second time (the default before 3)",
    "launch-free": "no encore: LD_PRELOAD=libskiplaunch.so SKIPLAUNCH_SWITCH=1, its A blocks skip every kernel "
                   "launch (the GPU does nothing): the launch-free bound, what no launch interposer can beat",
    "encore+bound": "LD_PRELOAD=libskiplaunch.so:libencore.so SKIPLAUNCH_SWITCH=1, blocks P (both pass), A (encore "
                    "active), B (encore passive, every launch skipped): encore against the launch-free bound in one "
                    "process",
    "encore+trial": "blocks P (passive), A (encore active), T (active with ENCORE_TRIAL's settings, encoreSetActive(2)), "
                    "P A T P T A: "
                    "a setting against the defaults in one process (encore+trial@ENCORE_TRIAL=ENCORE_HOLD_RAMP=1;...)",
}
VARIANT_BASE = {}  # a variant made by register_variant: its base variant


def register_variant(v):
    """A variant BASE@K=V/K=V (encore+bound@ENCORE_HOLD_RAMP=1/ENCORE_HOLD_BUDGET=15us): BASE's environment and
    schedule with these encore options on top, for trying an option side by side with the defaults. Returns
    False for an unknown base or a malformed option."""
    if v in VARIANTS:
        return True
    base, _, opts = v.partition("@")
    if base not in VARIANTS or VARIANTS[base] is None or base == "launch-free" or not opts:
        return False
    env = dict(VARIANTS[base])
    for kv in opts.split("/"):
        k, eq, val = kv.partition("=")
        if not eq or not k.startswith("ENCORE"):
            return False
        env[k] = val
    VARIANTS[v], VARIANT_BASE[v] = env, base
    VARIANT_NOTES[v] = f"{base} with {opts.replace('/', ' ')}"
    return True


def base_variant(v):
    return VARIANT_BASE.get(v, v)


BOUND_TARGET = 0.9  # issue 31: encore / launch-free bound >= 0.9


# ---------------------------------------------------------------- statistics -----

def bootstrap_ci(values, stat=statistics.median, n=BOOT_N, seed=BOOT_SEED):
    """Percentile bootstrap 95% interval of stat(values); (lo, hi), None with < 2 values."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    k = len(values)
    est = sorted(stat([values[rng.randrange(k)] for _ in range(k)]) for _ in range(n))
    return est[int(0.025 * n)], est[min(n - 1, int(0.975 * n))]


def bootstrap_product_ci(a, b, n=BOOT_N, seed=BOOT_SEED):
    """Interval of median(a) x median(b), a and b resampled independently."""
    if len(a) < 2 or len(b) < 2:
        return None
    rng = random.Random(seed)
    est = sorted(statistics.median([a[rng.randrange(len(a))] for _ in a]) *
                 statistics.median([b[rng.randrange(len(b))] for _ in b]) for _ in range(n))
    return est[int(0.025 * n)], est[min(n - 1, int(0.975 * n))]


def verdict(ci, within=WITHIN):
    if ci is None:
        return "no interval (fewer than 2 ratios)"
    lo, hi = ci
    if lo >= 1 - within and hi <= 1 + within:
        return f"within {within:.0%} at 95%"
    if hi < 1 - within:
        return f"faster by more than {within:.0%} at 95%"
    if lo > 1 + within:
        return f"SLOWER by more than {within:.0%} at 95%"
    return f"not shown within {within:.0%} (interval too wide or crossing it)"


def block_ratios(blocks, letter, ref="P"):
    """Ratios of each `letter` block to the mean of its nearest `ref` blocks before and after."""
    out = []
    for i, b in enumerate(blocks):
        if b["state"] != letter:
            continue
        before = next((blocks[j]["us"] for j in range(i - 1, -1, -1) if blocks[j]["state"] == ref), None)
        after = next((blocks[j]["us"] for j in range(i + 1, len(blocks)) if blocks[j]["state"] == ref), None)
        near = [v for v in (before, after) if v]
        if near:
            out.append(b["us"] / statistics.mean(near))
    return out


def triple_ratios(blocks):
    """encore / bound per adjacent triple: a P block followed by an A and a B block (either order),
    (P/A) / (P/B) with P the mean of that P block and the nearest P block after the pair."""
    out = []
    for i in range(1, len(blocks) - 1):
        x, y = blocks[i], blocks[i + 1]
        if blocks[i - 1]["state"] != "P" or {x["state"], y["state"]} != {"A", "B"}:
            continue
        after = next((blocks[j]["us"] for j in range(i + 2, len(blocks)) if blocks[j]["state"] == "P"), None)
        near = [v for v in (blocks[i - 1]["us"], after) if v]
        p = statistics.mean(near) if near else None
        a, b = (x, y) if x["state"] == "A" else (y, x)
        if p and a["us"] and b["us"]:
            out.append((p / a["us"]) / (p / b["us"]))
    return out


def bound_verdict(ci, target=BOUND_TARGET):
    if ci is None:
        return "no interval (fewer than 2 triples)"
    if ci[0] >= target:
        return f"at least {target} at 95%"
    if ci[1] < target:
        return f"BELOW {target} at 95%"
    return f"not shown (the interval crosses {target})"


def summarize(ratios):
    if not ratios:
        return None
    ci = bootstrap_ci(ratios)
    return {"n": len(ratios), "median": statistics.median(ratios), "ci": ci, "verdict": verdict(ci)}


# ---------------------------------------------------------------- running --------

class Paired:
    def __init__(self, args, libs, build_dir, out, pin, log, deadline):
        self.args, self.libs, self.build_dir, self.out = args, libs, build_dir, out
        self.pin, self.log, self.deadline = pin, log, deadline
        self.procs = []      # every process record
        self.notes = []
        self.durations = {}  # (workload, variant, method) -> seconds of the last such process
        self.seq = 0
        self.jsonl = os.path.join(out, "paired-results.jsonl")
        self.native_bin = find(build_dir, "bench_native")
        self.ptx = os.environ.get("ENCORE_PROGKERNELS") if args.sim else find(build_dir, "bench_native_kernels.ptx")
        if args.sim and not self.ptx:
            self.ptx = find(build_dir, "libprogkernels.so")
        self.cublas_bin = find(build_dir, "bench_cublas")
        self.libtorch_bins = (find(build_dir, "bench_libtorch"), find(build_dir, "bench_libtorch_aoti"))
        self.py_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_never_slower.py")

    # -- one process --
    def argv(self, workload, schedule, blocks):
        quick = self.args.quick
        if WORKLOADS[workload][0] == "native":
            pattern = workload.split("-")[1]
            steps = "10" if self.args.sim else ("100" if not quick else "50")
            # Steady state: a warm-up of 2,400 steps (38,400 launches) lets encore learn, or, where
            # nothing repeats, rest (core/streams/rest.c: 16,384 recorded, 16,384 resting, 4,096 probed, then a
            # rest of 65,536 covers the timed blocks). native-random-start times the start instead.
            warmup = "10" if self.args.sim else ("20" if workload.endswith("-start") else "2400")
            return [self.native_bin, "--module", self.ptx or "", "--pattern", pattern, "--schedule", schedule,
                    "--blocks", str(blocks), "--steps", steps, "--warmup", warmup]
        if WORKLOADS[workload][0] == "cpp":  # libtorch reaches the driver through cudart: no D blocks, as Python
            aoti = workload == "aoti-cpp"
            binary = self.libtorch_bins[1 if aoti else 0]
            argv = [binary or "bench_libtorch", "--workload", "aoti" if aoti else "transformer", "--schedule",
                    schedule, "--blocks", str(blocks), "--steps", "50", "--warmup", "20"]
            return argv + (["--package", aoti_package_path(self.args.python, "transformer")] if aoti else [])
        if WORKLOADS[workload][0] == "cublas":  # cuBLAS reaches the driver through cudart: no D blocks, as Python
            return [self.cublas_bin or "bench_cublas", "--schedule", schedule, "--blocks", str(blocks), "--steps",
                    "10" if self.args.sim else "40", "--warmup", "10" if self.args.sim else "200"]
        return [self.args.python, self.py_script, "--workload", workload, "--schedule", schedule, "--blocks",
                str(blocks)]

    def env(self, variant, tag):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENCORE") and k != "LD_PRELOAD"}
        if self.args.sim:
            sim = os.environ.get("ENCORE_SIM_DIR") or os.path.join(self.build_dir, "tests", "sim")
            env["LD_LIBRARY_PATH"] = sim + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env["PYTHONUNBUFFERED"] = "1"
        log_path = None
        extra = VARIANTS[variant]
        if variant == "launch-free":
            env["LD_PRELOAD"] = self.libs["skiplaunch"]
            env["SKIPLAUNCH_SWITCH"] = "1"
        elif extra is not None:
            env["LD_PRELOAD"] = self.libs["encore"]
            if base_variant(variant) == "encore+bound":  # skiplaunch first: launches reach it, then (passed on) encore
                env["LD_PRELOAD"] = self.libs["skiplaunch"] + ":" + self.libs["encore"]
                env["SKIPLAUNCH_SWITCH"] = "1"
            env.update(extra)
            if variant != "encore-off":
                log_path = os.path.join(self.out, "paired-logs", f"{tag}.%p.jsonl")
                env["ENCORE_LOG"] = log_path
        return env, log_path

    def estimate(self, workload, variant, method):
        if (workload, variant, method) in self.durations:
            return self.durations[(workload, variant, method)]
        if method == "pairs":  # no compile cache to fill, no graph mode to build: about half a switch process
            return 0.5 * (self.durations.get((workload, None, None)) or WORKLOADS[workload][2])
        return self.durations.get((workload, None, None)) or WORKLOADS[workload][2]

    def fits(self, workload, variant, method, deadline=None):
        return time.monotonic() + self.estimate(workload, variant, method) <= (deadline or self.deadline)

    def run(self, workload, variant, method, schedule, blocks, rnd=0):
        self.seq += 1
        tag = f"{self.seq:04d}-{workload}-{re.sub(r'[^A-Za-z0-9+._-]', '_', variant)}-{method}-r{rnd}"
        env, log_path = self.env(variant, tag)
        argv = self.argv(workload, schedule, blocks)
        t0 = time.monotonic()
        rec = {"tag": tag, "workload": workload, "variant": variant, "method": method, "round": rnd,
               "schedule": schedule, "argv": argv, "encore_env": {k: v for k, v in env.items()
                                                                   if k.startswith("ENCORE")}}
        timeout = max(30.0, min(600.0, self.deadline - time.monotonic() + 30))
        started = time.time()  # the run's own log files are written after it (read_summary)
        try:
            r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                               preexec_fn=(lambda: os.sched_setaffinity(0, self.pin)) if self.pin else None)
            rec["rc"], out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rec["rc"] = "timeout"
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        except OSError as e:
            rec["rc"], out, err = "oserror", "", str(e)
        rec["wall_s"] = round(time.monotonic() - t0, 2)
        rec["blocks"], rec["result"] = [], {}
        for line in out.splitlines():
            kv = dict(t.split("=", 1) for t in line.split()[1:] if "=" in t)
            if line.startswith("BLOCK "):
                try:
                    rec["blocks"].append({"i": int(kv["i"]), "state": kv["state"], "us": float(kv["us_per_step"])})
                except (KeyError, ValueError):
                    pass
            elif line.startswith("RESULT "):
                rec["result"] = kv
        rec["encore"] = read_summary(log_path, since=started)
        rec["stderr_tail"] = err[-1500:]
        ok = rec["rc"] == 0 and rec["result"].get("status") == "ok" and rec["blocks"]
        rec["ok"] = bool(ok)
        self.durations[(workload, variant, method)] = rec["wall_s"]
        self.durations[(workload, None, None)] = max(self.durations.get((workload, None, None)) or 0, rec["wall_s"])
        what = f"{len(rec['blocks'])} blocks, median {rec['result'].get('us_per_step', '?')} us/step" if ok else \
            f"FAILED rc={rec['rc']} {rec['result'].get('error', '')} " + \
            ((err.strip().splitlines() or [''])[-1][:160])
        self.log(f"{tag}: {what} ({rec['wall_s']}s)")
        with open(self.jsonl, "a") as f:
            f.write(json.dumps(rec, default=str) + "\n")
        self.procs.append(rec)
        return rec

    # -- the plan --
    def switch_schedule(self, w, v, blocks_sw):
        """The block letters and count of a switch process of workload w, variant v."""
        native = WORKLOADS[w][0] == "native"
        if base_variant(v) in ("encore+bound", "encore+trial"):  # triples of P, A and B (or T): no D or G blocks
            # Both orders, in turn: the block right after a passive one runs colder than the one after
            # it (calls 13-15 of 2026-11-27: whichever setting came second read 2-5% faster).
            sched = "PABPBA" if base_variant(v) == "encore+bound" else "PATPTA"
            return sched, ((6 if self.args.quick else 24) if native else blocks_sw // 3) * 3 + 1
        with_graph = v == "encore" and WORKLOADS[w][1] and not getattr(self.args, "no_graph_blocks", False)
        sched = "PAG" if with_graph else "PA"  # launch-free: P launches, A skips
        if native:  # every ratio against D blocks (eager in-process): encore-off is E/D
            sched = "DE" if v == "encore-off" else "D" + sched
            return sched, (6 if self.args.quick else 24) * len(sched) + 1
        nb = blocks_sw if len(sched) == 2 else (blocks_sw // len(sched)) * len(sched) + 1
        return sched, nb + (1 if len(sched) == 2 and nb % 2 == 0 else 0)

    # -- the plan --
    def go(self, workloads, variants):
        os.makedirs(os.path.join(self.out, "paired-logs"), exist_ok=True)
        method = self.args.method
        quick = self.args.quick
        blocks_sw = getattr(self.args, "switch_blocks", None) or (7 if quick else 19)  # PAG x 6 + P, or PA x 9 + P
        rounds = self.args.rounds if self.args.rounds is not None else (3 if quick else 30)  # 0: no process pairs
        if self.native_bin and any(WORKLOADS[w][0] == "native" for w in workloads) and not self.args.sim:
            self.run("native-norepeat", "eager", "warmup", "E", 3)  # the first process after a quiet spell is slow
        if method == "switch":
            # the switch processes get at most this share of what is left: process pairs need the rest
            phase1 = time.monotonic() + self.args.switch_share * (self.deadline - time.monotonic())
            for w in workloads:  # phase 1: every workload's switch processes (they also warm compile caches)
                native = WORKLOADS[w][0] == "native"
                vs = [x for x in variants if x != "eager" and (native or x != "encore-off") and
                      not (native and x == "launch-free")]  # native: bound known (D blocks bypass the preload)
                # native: blocks of a few ms, so many of them, and 4 processes a variant, interleaved;
                # Python: 2 processes a variant where the budget allows (the first also warms caches)
                procs = self.args.switch_procs or (1 if quick else (4 if native else 2))
                for k in range(procs):
                    for v in (vs if k % 2 == 0 else list(reversed(vs))):
                        sched, nb = self.switch_schedule(w, v, blocks_sw)
                        if not self.fits(w, v, "switch", phase1):
                            self.notes.append(f"{w}: {v} (switch, process {k + 1}) not run: the time budget was reached")
                            continue
                        self.run(w, v, "switch", sched, nb, k)
                self.write_report(workloads, variants)
            pair_variants = ["eager", "encore-off"]
        else:
            pair_variants = ["eager"] + [v for v in variants
                                             if base_variant(v) not in ("eager", "launch-free", "encore+bound",
                                                                        "encore+trial")]
        blocks_pair = 3 if quick else 5
        for rnd in range(rounds):  # phase 2: interleaved process pairs, round-robin over the workloads
            ran = False
            for w in workloads:
                if method == "switch" and WORKLOADS[w][0] == "native":
                    continue  # measured in-process against D blocks
                order = pair_variants if rnd % 2 == 0 else list(reversed(pair_variants))
                if not all(self.fits(w, v, "pairs") for v in order):
                    continue
                for v in order:
                    self.run(w, v, "pairs", "E", blocks_pair, rnd)
                ran = True
            if ran:
                self.write_report(workloads, variants)
            else:
                self.notes.append(f"process pairs stopped after {rnd} rounds: the time budget was reached")
                break
        return self.write_report(workloads, variants)

    # -- analysis --
    def analyse(self, workloads, variants):
        rows = []
        for w in workloads:
            procs = [p for p in self.procs if p["workload"] == w and p["ok"]]
            row = {"workload": w, "label": WORKLOADS[w][3], "graph_label": WORKLOADS[w][1], "variants": {}}
            # process pairs: per round, variant / eager of the same round (per process: its median block)
            by_round = {}
            for p in procs:
                if p["method"] == "pairs":
                    by_round.setdefault(p["round"], {})[p["variant"]] = statistics.median(b["us"] for b in p["blocks"])
            for v in variants:
                if v == "eager":
                    continue
                pr = [r[v] / r["eager"] for r in by_round.values() if v in r and "eager" in r]
                sw = [p for p in procs if p["method"] == "switch" and p["variant"] == v]
                a_ratios = [x for p in sw for x in block_ratios(p["blocks"], "A")]
                g_ratios = [x for p in sw for x in block_ratios(p["blocks"], "G")]
                cell = {"pairs": summarize(pr), "switch": summarize(a_ratios), "graph_vs_passive": summarize(g_ratios),
                        "_pairs": pr, "_switch": a_ratios, "_graph": g_ratios}
                if any(b["state"] == "B" for p in sw for b in p["blocks"]):  # the bound in the same process
                    t = [x for p in sw for x in triple_ratios(p["blocks"])]
                    cell["bound"] = summarize([x for p in sw for x in block_ratios(p["blocks"], "B")])
                    cell["encore_vs_bound"] = summarize(t)
                    if cell["encore_vs_bound"]:
                        cell["encore_vs_bound"]["verdict"] = bound_verdict(cell["encore_vs_bound"]["ci"])
                if any(b["state"] == "T" for p in sw for b in p["blocks"]):  # a trial's settings against the defaults
                    cell["trial_vs_encore"] = summarize([x for p in sw for x in block_ratios(p["blocks"], "T", "A")])
                    cell["trial_switch"] = summarize([x for p in sw for x in block_ratios(p["blocks"], "T")])
                    if cell["trial_vs_encore"]:
                        cell["trial_vs_encore"]["verdict"] = verdict(cell["trial_vs_encore"]["ci"], 0.02)
                if any(b["state"] == "D" for p in sw for b in p["blocks"]):  # eager in the same process
                    d = {k: [x for p in sw for x in block_ratios(p["blocks"], k, "D")] for k in "AEGP"}
                    cell["direct"] = {k: summarize(x) for k, x in d.items() if x}
                    main = d["E"] if v == "encore-off" else d["A"]
                    if main:
                        cell["vs_eager_direct"] = dict(summarize(main), how="in-process against D blocks")
                    if d["G"]:
                        cell["graph_vs_eager_direct"] = summarize(d["G"])
                s = next((p["encore"] for p in sw if p.get("encore")), None) or \
                    next((p["encore"] for p in procs if p["variant"] == v and p.get("encore")), None)
                if s:
                    seen = (s.get("launches_seen") or 0) - (s.get("launches_passive") or 0)
                    cell["replay_pct"] = 100.0 * (s.get("launches_replayed") or 0) / seen if seen > 0 else 0.0
                    if s.get("active_blocks_replay_pct") is not None:  # the timed active blocks only
                        cell["replay_pct_blocks"] = s["active_blocks_replay_pct"]
                    if s.get("active_blocks_sync_wait_us") is not None:  # the GPU behind the host at syncs
                        cell["sync_wait_us"] = [s.get("active_blocks_sync_wait_us"), s.get("passive_blocks_sync_wait_us")]
                    cell["encore_summary"] = {k: s.get(k) for k in ("launches_seen", "launches_replayed",
                                                                     "launches_passive", "graphs_captured",
                                                                     "captured_never_replayed",
                                                                     "divergences", "holds", "holds_replayed",
                                                                     "holds_given_up", "holds_resumed",
                                                                     "streams_left_alone", "streams_rested",
                                                                     "launches_unrecorded")}
                    total = next((int(p["result"].get("total_steps", 0)) for p in sw if p["result"].get("total_steps")),
                                 0)
                    calls = s.get("calls") or {}
                    if total and isinstance(calls, dict):
                        cell["hooked_calls_per_step"] = sum(v for v in calls.values() if isinstance(v, int)) / total
                    pv = [b["us"] for p in sw for b in p["blocks"] if b["state"] == "P"]
                    if pv:
                        cell["passive_us"] = statistics.median(pv)
                row["variants"][v] = cell
            off = row["variants"].get("encore-off", {}).get("_pairs", [])
            for v, cell in row["variants"].items():
                if v == "launch-free":  # its P blocks launch as eager does (the preload's hooks only)
                    if cell["switch"]:
                        cell["vs_eager"] = dict(cell["switch"], how="in-process: launches skipped / launched")
                    continue
                if cell.get("vs_eager_direct"):
                    cell["vs_eager"] = cell["vs_eager_direct"]
                    if cell.get("graph_vs_eager_direct"):
                        cell["graph_vs_eager"] = cell["graph_vs_eager_direct"]
                    continue
                if v == "encore-off":
                    continue
                if cell["_switch"] and off:  # encore / eager = (active / passive) x (off / eager)
                    ci = bootstrap_product_ci(cell["_switch"], off)
                    cell["vs_eager"] = {"median": statistics.median(cell["_switch"]) * statistics.median(off),
                                        "ci": ci, "verdict": verdict(ci), "how": "switch x pairs(off/eager)"}
                elif cell["pairs"]:
                    cell["vs_eager"] = dict(cell["pairs"], how="pairs")
                if cell["_graph"] and off:
                    ci = bootstrap_product_ci(cell["_graph"], off)
                    cell["graph_vs_eager"] = {"median": statistics.median(cell["_graph"]) * statistics.median(off),
                                              "ci": ci}
            if off and not row["variants"]["encore-off"].get("vs_eager"):
                row["variants"]["encore-off"]["vs_eager"] = dict(row["variants"]["encore-off"]["pairs"], how="pairs")
            row["memory"] = memory_added(procs)
            sums = {p["result"].get("checksum") for p in procs if p["result"].get("checksum")}
            row["checksums_equal"] = len(sums) <= 1 if sums else None
            row["checksums"] = sorted(s for s in sums if s)
            row["failed"] = [p["tag"] for p in self.procs if p["workload"] == w and not p["ok"] and
                             p["method"] != "warmup"]
            rows.append(row)
        self.derive_interposition(rows)
        return rows

    def hook_cost_ns(self, rows):
        """What one hooked call costs (ns), measured where eager runs in the same process: the native
        workloads' encore-off processes, E blocks against D blocks, NATIVE_CALLS_PER_STEP calls a step.
        (median, lowest lower bound, highest upper bound) over the native workloads, or None."""
        per = []
        for r in rows:
            e = r["variants"].get("encore-off", {}).get("direct", {}).get("E")
            if WORKLOADS[r["workload"]][0] != "native" or not e or not e.get("ci"):
                continue
            d = [b["us"] for p in self.procs if p["workload"] == r["workload"] and p["variant"] == "encore-off"
                 and p["method"] == "switch" and p["ok"] for b in p["blocks"] if b["state"] == "D"]
            f = statistics.median(d) * 1000 / NATIVE_CALLS_PER_STEP
            per.append(((e["median"] - 1) * f, (e["ci"][0] - 1) * f, (e["ci"][1] - 1) * f))
        if not per:
            return None
        return statistics.median(x[0] for x in per), min(x[1] for x in per), max(x[2] for x in per)

    def derive_interposition(self, rows):
        """Python workloads cannot bypass encore in-process, and their process pairs vary by up to 1.8x:
        their encore-off / eager is derived instead, from the measured cost of a hooked call times the
        hooked calls a step makes (encore's summary) over the time of a passive step; encore / eager is
        then the in-process switch (A/P) times that. Labelled as derived wherever it is shown."""
        hook = self.hook_cost_ns(rows)
        if not hook:
            return
        h_med, h_lo, h_hi = hook
        for r in rows:
            if WORKLOADS[r["workload"]][0] == "native":
                continue
            e = r["variants"].get("encore", {})
            cps, pus = e.get("hooked_calls_per_step"), e.get("passive_us")
            if not cps or not pus:
                continue
            share = lambda ns: max(0.0, ns) * cps / (pus * 1000)  # noqa: E731 (a hook never saves time)
            off = {"median": 1 + share(h_med), "ci": (1 + share(h_lo), 1 + share(h_hi)),
                   "how": f"derived: {cps:.1f} hooked calls a step x {h_med:.0f} ns [{max(0.0, h_lo):.0f}, "
                          f"{h_hi:.0f}] over {pus:.1f} us"}
            off["verdict"] = verdict(off["ci"], 0.01)
            r["off_derived"] = off
            sw = e.get("switch")
            if sw and sw.get("ci"):
                ci = (sw["ci"][0] * off["ci"][0], sw["ci"][1] * off["ci"][1])
                e["vs_eager"] = {"median": sw["median"] * off["median"], "ci": ci, "verdict": verdict(ci),
                                 "how": "in-process switch x derived interposition"}
            g = e.get("graph_vs_passive")
            if g and g.get("ci"):
                e["graph_vs_eager"] = {"median": g["median"] * off["median"],
                                       "ci": (g["ci"][0] * off["ci"][0], g["ci"][1] * off["ci"][1])}

    def write_report(self, workloads, variants):
        rows = self.analyse(workloads, variants)
        md = report_md(rows, self.args, self.notes)
        with open(os.path.join(self.out, "paired-report.md"), "w") as f:
            f.write(md)
        with open(os.path.join(self.out, "paired-summary.json"), "w") as f:
            json.dump({"rows": strip_private(rows), "notes": self.notes}, f, indent=1, default=str)
        return rows, md


def strip_private(rows):
    out = []
    for r in rows:
        r = dict(r)
        r["variants"] = {v: {k: x for k, x in c.items() if not k.startswith("_")} for v, c in r["variants"].items()}
        out.append(r)
    return out


_AOTI_PATHS = {}


def aoti_package_path(python, model):
    """The AOTInductor package of tests/bench's model, built once (by bench_never_slower.py's own
    function, in a process of its own, outside every timed process)."""
    if model not in _AOTI_PATHS:
        bench = os.path.dirname(os.path.abspath(__file__))  # tests/bench, beside this file
        code = f"import sys; sys.path.insert(0, {bench!r}); import bench_never_slower as b; print(b.aoti_package({model!r}))"
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600)
        lines = r.stdout.strip().splitlines()
        _AOTI_PATHS[model] = lines[-1] if r.returncode == 0 and lines else "/nonexistent-aoti-package.pt2"
    return _AOTI_PATHS[model]


def memory_added(procs):
    """Device memory (MiB, the driver's count) a process's warm-up added, per variant (median over
    processes), and what building the graph mode added; None where the workload does not say."""
    def grow(p):
        r = p["result"]
        try:
            return float(r["mem_warm_mb"]) - float(r["mem_start_mb"])
        except (KeyError, ValueError):
            return None
    out = {}
    for v in ("eager", "encore-off", "encore"):
        xs = [x for x in (grow(p) for p in procs if p["variant"] == v) if x is not None]
        if xs:
            out[v] = statistics.median(xs)
    gs = [float(p["result"]["mem_graph_mb"]) for p in procs if "G" in p["schedule"] and
          p["result"].get("mem_graph_mb") and not p["result"].get("graph_error")]
    if gs:
        out["graph"] = statistics.median(gs)
    base = out.get("eager", out.get("encore-off"))
    if "encore" in out and base is not None:
        out["encore_extra"] = out["encore"] - base
    return out or None


def find(build_dir, name):
    for dirpath, _dirs, files in os.walk(build_dir):
        if name in files:
            return os.path.join(dirpath, name)
    return None


def add_since(acc, ev, before, *keys):
    """acc[i] += how much counter keys[i] grew from switch event `before` to `ev`."""
    for i, k in enumerate(keys):
        acc[i] += (ev.get(k) or 0) - (before.get(k) or 0)


def run_logs(pattern, since=None):
    """The ENCORE_LOG files of one run (the path has %p: a file a process). since (time.time() at the
    run's start): files last written before it are another run's with the same tag
    (scripts/gpu/engine-ab's PROCS runs a workload's process again into the same folder) and are
    left out."""
    import glob
    paths = []
    for path in glob.glob(pattern.replace("%p", "*")):
        try:
            if since is None or os.path.getmtime(path) >= since:
                paths.append(path)
        except OSError:
            pass
    return paths


def read_summary(pattern, since=None):
    """encore's summary for one run from its ENCORE_LOG files (run_logs; of several processes'
    files, the one that saw the most launches)."""
    if not pattern:
        return None
    best = None
    for path in run_logs(pattern, since):
        summary, on, off = None, None, None
        active = [0, 0]  # launches seen and replayed in active blocks
        waits = {"A": [0, 0], "P": [0, 0]}  # ns and calls blocked in synchronizing calls, active / switched off
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    if '"summary"' not in line and '"switch_' not in line:
                        continue
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    kind = ev.get("event")
                    if kind == "summary":
                        summary = {k: v for k, v in ev.items() if k not in ("top_sequences", "top_divergences")}
                    elif kind == "switch_on":
                        if off:
                            add_since(waits["P"], ev, off, "sync_wait_ns", "sync_waits")
                        on, off = ev, None
                    elif kind == "switch_off" and on:  # an active block ends (encore's log: core/path/switch.c)
                        add_since(active, ev, on, "launches_seen", "launches_replayed")
                        add_since(waits["A"], ev, on, "sync_wait_ns", "sync_waits")
                        on, off = None, ev
        except OSError:
            continue
        if summary and active[0] > 0:
            summary["active_blocks_launches"] = active[0]
            summary["active_blocks_replay_pct"] = 100.0 * active[1] / active[0]
        for k, name in (("A", "active"), ("P", "passive")):  # the host's mean wait in a synchronizing call
            if summary and waits[k][1] > 0:
                summary[f"{name}_blocks_sync_wait_us"] = waits[k][0] / waits[k][1] / 1e3
        if summary and (best is None or (summary.get("launches_seen") or 0) > (best.get("launches_seen") or 0)):
            best = summary
    return best


# ---------------------------------------------------------------- report ---------

def fmt_ratio(c):
    if not c:
        return "—"
    ci = c.get("ci")
    return f"{c['median']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{c['median']:.3f} (n<2)"


def in_process_section(L, rows, key, title, intro, columns, cells):
    """A report section of the cells that have `key` (an in-process ratio): one row a workload and variant,
    `cells(cell, cell[key])` the values after the workload and the variant."""
    found = [(r, v, c) for r in rows for v, c in r["variants"].items() if c.get(key)]
    if not found:
        return
    L += ["", f"## {title}", "", intro, "", "| workload | variant | " + " | ".join(columns) + " |",
          "|" + "---|" * (len(columns) + 2)]
    for r, v, c in found:
        L.append(f"| {r['workload']} | {v} | " + " | ".join(str(x) for x in cells(c, c[key])) + " |")


def never_replayed(s):
    """'captured, never (share)' from an encore summary, or an em dash."""
    if not s or s.get("graphs_captured") is None:
        return "—"
    c, n = s.get("graphs_captured") or 0, s.get("captured_never_replayed") or 0
    return f"{c}, {n} ({100.0 * n / c:.0f}%)" if c else "0, 0"


def fmt_num(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def fmt_speedup(c):
    if not c:
        return "—"
    ci = c.get("ci")
    m = 1 / c["median"]
    return f"{m:.2f}x [{1 / ci[1]:.2f}, {1 / ci[0]:.2f}]" if ci else f"{m:.2f}x"


def report_md(rows, args, notes):
    L = [f"# encore: paired benchmark ({args.method}{', simulated driver' if args.sim else ''})", "",
         "Ratios are time per step, variant / eager (below 1: faster), median with a bootstrap 95% interval "
         f"({BOOT_N} resamples, seed {BOOT_SEED}). \"within 2%\" is claimed only when the whole interval lies "
         "inside [0.98, 1.02] (encore-off: [0.99, 1.01]). Native workloads: every ratio in-process, against "
         "blocks that bypass encore (D: the driver's own entry points). Python workloads cannot bypass encore: "
         "encore/eager is the in-process switch (active / passive blocks) times encore-off / eager, and "
         "encore-off / eager is *derived* (marked so): the cost of one hooked call, measured in the native "
         "encore-off processes (E against D blocks), times the hooked calls a step makes (encore's summary), "
         "over a passive step's time. Their process pairs (no preload against ENCORE=0, below) are kept but "
         "vary too much between processes to resolve 1%.", ""]
    L += ["| workload | encore / eager | verdict | replay % | encore-off / eager | verdict | "
          "graph mode (speedup over eager) | launch-free bound (speedup) |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        e = r["variants"].get("encore", {})
        o = r["variants"].get("encore-off", {})
        ve, vo = e.get("vs_eager"), r.get("off_derived") or o.get("vs_eager")
        rp = e.get("replay_pct")
        g = e.get("graph_vs_eager")
        gtxt = f"{r['graph_label']}: {fmt_speedup(g)}" if g else (r["graph_label"] or "none") + (
            "" if g or not r["graph_label"] else " (not measured)")
        L.append(f"| {r['label']} | {fmt_ratio(ve)} | {ve['verdict'] if ve else '—'} | "
                 f"{'—' if rp is None else f'{rp:.1f}'} | {fmt_ratio(vo)}{' (derived)' if r.get('off_derived') else ''} | "
                 f"{verdict(vo['ci'], 0.01) if vo else '—'} | {gtxt} | "
                 f"{fmt_speedup(r['variants'].get('launch-free', {}).get('vs_eager'))} |")
    L += ["", "## Cost breakdown (in-process: variant active / passive blocks)", ""]
    L += ["| workload | variant | active / passive | n | verdict | replay % (process) | replay % (timed active "
          "blocks) | sync wait, active / switched off (µs a call) | graphs captured, never replayed (issue 28: "
          "at most 10%) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for v, c in r["variants"].items():
            if c.get("switch"):
                sw_us = c.get("sync_wait_us") or [None, None]
                L.append(f"| {r['workload']} | {v} | {fmt_ratio(c['switch'])} | {c['switch']['n']} | "
                         f"{c['switch']['verdict']} | {fmt_num(c.get('replay_pct'))} | "
                         f"{fmt_num(c.get('replay_pct_blocks'))} | {' / '.join(fmt_num(x) for x in sw_us)} | "
                         f"{never_replayed(c.get('encore_summary'))} |")
    in_process_section(
        L, rows, "encore_vs_bound", "encore against the launch-free bound, in one process (variant encore+bound)",
        "`LD_PRELOAD=libskiplaunch.so:libencore.so SKIPLAUNCH_SWITCH=1`, blocks P A B P B A repeated: P both pass "
        "(encore passive, every launch made), A encore active, B encore passive and every kernel launch "
        "skipped (the launch-free bound). Speedups over the nearest P blocks; encore / bound = (P/A) / (P/B) "
        f"per adjacent triple, median with a bootstrap 95% interval (issue 31 asks for >= {BOUND_TARGET}).",
        ["encore speedup (P/A)", "bound speedup (P/B)", "encore / bound", "triples", "verdict",
         "replay % (timed active blocks)"],
        lambda c, x: [fmt_speedup(c.get("switch")), fmt_speedup(c.get("bound")), fmt_ratio(x), x["n"], x["verdict"],
                      fmt_num(c.get("replay_pct_blocks"))])
    in_process_section(
        L, rows, "trial_vs_encore", "A setting against the defaults, in one process (variant encore+trial)",
        "Blocks P A T P T A repeated (both orders: the block right after a passive one runs colder): P encore "
        "passive, A encore active with the effective settings, T active with ENCORE_TRIAL's settings (the "
        "program's switch, encoreSetActive(2)). trial / defaults: each T block over the mean of its nearest A "
        "blocks, median with a bootstrap 95% interval (below 1: the setting is faster).",
        ["defaults (A/P)", "trial (T/P)", "trial / defaults", "n", "verdict"],
        lambda c, x: [fmt_ratio(c.get("switch")), fmt_ratio(c.get("trial_switch")), fmt_ratio(x), x["n"],
                      x["verdict"]])
    mrows = [r for r in rows if r.get("memory")]
    if mrows:
        L += ["", "## Device memory (MiB in use by the driver's count, medians over processes)", "",
              "Warm-up growth: in use after the warm-up and check steps minus in use once the model is built "
              "(compiled kernels, workspaces, encore's graphs). encore's extra: its growth minus eager's. Graph "
              "mode: what building it added (its memory pool and graph).", "",
              "| workload | warm-up growth, eager | warm-up growth, encore | encore's extra | graph mode |",
              "|---|---|---|---|---|"]
        f1 = lambda x: "—" if x is None else f"{x:.1f}"
        for r in mrows:
            m = r["memory"]
            L.append(f"| {r['workload']} | {f1(m.get('eager', m.get('encore-off')))} | {f1(m.get('encore'))} | "
                     f"{f1(m.get('encore_extra'))} | {f1(m.get('graph'))} |")
    drows = [(r, v, c) for r in rows for v, c in r["variants"].items() if c.get("direct")]
    if drows:
        L += ["", "## In-process against eager (native: blocks / the nearest D blocks, which bypass encore)", ""]
        L += ["| workload | variant | active (A) | passive (P) | as it is (E) | own graph (G) |",
              "|---|---|---|---|---|---|"]
        for r, v, c in drows:
            d = c["direct"]
            L.append(f"| {r['workload']} | {v} | " + " | ".join(
                f"{fmt_ratio(d.get(k))} n={d[k]['n']}" if d.get(k) else "—" for k in "APEG") + " |")
    der = [r for r in rows if r.get("off_derived")]
    if der:
        L += ["", "## Interposition of the Python workloads (derived, not measured in their processes)", ""]
        L += ["| workload | encore-off / eager (derived) | verdict (1%) | how |", "|---|---|---|---|"]
        for r in der:
            o = r["off_derived"]
            L.append(f"| {r['workload']} | {fmt_ratio(o)} | {o['verdict']} | {o['how']} |")
    L += ["", "Variants: " + "; ".join(f"`{k}` {v}" for k, v in VARIANT_NOTES.items()), ""]
    L += ["## Process pairs (variant / eager, per round)", ""]
    L += ["| workload | variant | ratio | pairs | verdict |", "|---|---|---|---|---|"]
    for r in rows:
        for v, c in r["variants"].items():
            if c.get("pairs"):
                L.append(f"| {r['workload']} | {v} | {fmt_ratio(c['pairs'])} | {c['pairs']['n']} | "
                         f"{c['pairs']['verdict']} |")
    L += ["", "## Outputs and failures", ""]
    for r in rows:
        eq = {True: "all processes printed the same checksum", False: "CHECKSUMS DIFFER: " + ", ".join(r["checksums"]),
              None: "no checksum"}[r["checksums_equal"]]
        L.append(f"- {r['workload']}: {eq}" + (f"; failed: {', '.join(r['failed'])}" if r["failed"] else ""))
        s = r["variants"].get("encore", {}).get("encore_summary")
        if s:
            L.append(f"  - encore: " + ", ".join(f"{k}={v}" for k, v in s.items()))
    if notes:
        L += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(L) + "\n"


def short_table(rows):
    """One line a workload; the column encore/bound (variant encore+bound, in one process) only where a row
    has it."""
    bound = any(r["variants"].get("encore+bound", {}).get("encore_vs_bound") for r in rows)
    out = ["workload                                   encore/eager [95%]        replay%  off/eager [95%]" +
           ("           encore/bound [95%]" if bound else "")]
    for r in rows:
        e = r["variants"].get("encore", {}).get("vs_eager")
        o = r.get("off_derived") or r["variants"].get("encore-off", {}).get("vs_eager")
        rp = r["variants"].get("encore", {}).get("replay_pct")
        line = f"{r['label'][:42]:42} {fmt_ratio(e):25} {'—' if rp is None else f'{rp:5.1f}':>7}  {fmt_ratio(o)}"
        if bound:
            line = f"{line:100} {fmt_ratio(r['variants'].get('encore+bound', {}).get('encore_vs_bound'))}"
        out.append(line)
    return "\n".join(out)


def chart(rows, path):
    """Speedup over eager per workload with its interval: encore beside the graph mode. Skipped silently
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    names, enc, enc_err, gr, gr_err = [], [], [[], []], [], [[], []]
    for r in rows:
        e = r["variants"].get("encore", {}).get("vs_eager")
        g = r["variants"].get("encore", {}).get("graph_vs_eager")
        if not e:
            continue
        names.append(r["workload"])
        for c, vals, err in ((e, enc, enc_err), (g, gr, gr_err)):
            if c:
                s = 1 / c["median"]
                lo, hi = (1 / c["ci"][1], 1 / c["ci"][0]) if c.get("ci") else (s, s)
                vals.append(s)
                err[0].append(max(0.0, s - lo))
                err[1].append(max(0.0, hi - s))
            else:
                vals.append(0.0)
                err[0].append(0.0)
                err[1].append(0.0)
    if not names:
        return False
    try:
        fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 4))
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], enc, 0.4, yerr=enc_err, capsize=3, label="encore")
        ax.bar([i + 0.2 for i in x], gr, 0.4, yerr=gr_err, capsize=3, label="framework graph mode")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axhspan(0.98, 1.02, color="0.85", zorder=0)
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("speedup over eager (95% interval)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return True
    except Exception:
        return False
