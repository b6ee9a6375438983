#!/usr/bin/env python3
"""encore benchmark: PyTorch workloads, run unmodified under each preload variant.

    bench_torch.py [--workloads mlp,resnet18,gpt2,train] [--mode eager|graph|compile]
                   [--iters-scale F] [--blocks B] [--no-check] [--no-compile]
                   [--save-dir DIR --tag TAG] [--compile-budget-s S] [--no-sync-each]
    bench_torch.py --compare DIR [--ref TAG]

Workloads (random weights, no downloads, batch 1 unless said):
    mlp       8 x (Linear 256, GELU, LayerNorm) inference
    resnet18  torchvision ResNet-18 (weights=None) inference, 1x3x224x224
    gpt2      GPT-2 small (transformers GPT2Config(), random init) decode step: one token
              attending to a fixed 128-token past rebuilt into a DynamicCache every step,
              so every step has identical shapes (falls back to a fixed 32-token forward
              without cache if that API is missing)
    train     training step of the MLP at batch 32: zero_grad, forward, MSE, backward,
              Adam(capturable=True) step (capturable in every mode so the kernels match)

Modes:
    eager     plain PyTorch (run it with and without LD_PRELOAD=libencore.so)
    graph     manual torch.cuda.graph: warm-up on a side stream, capture one step, replay
    compile   torch.compile(mode="reduce-overhead") of the model (compile time reported apart)

Each workload warms up, computes its check output (saved with --save-dir for the
runner's cross-process comparison; graph and compile also compare in-process with
an eager step), then times B blocks of N iterations with torch.cuda.synchronize()
after every iteration and perf_counter, and prints

    RESULT workload=<w> mode=<m> us_per_iter=<median of block means> ... checksum=<sha256/16>

or `RESULT workload=<w> mode=<m> status=error error=<...>`. Timing nothing but the
step: no assertion about time anywhere (benchmarks are not tests).
"""
import argparse
import gc
import hashlib
import json
import os
import re
import statistics
import sys
import time
import traceback

T0 = time.perf_counter()


def note(msg):
    print(f"bench_torch: [{time.perf_counter() - T0:6.2f}s] {msg}", file=sys.stderr, flush=True)


def fail_line(workload, mode, status, err):
    err = re.sub(r"\s+", "_", str(err))[:160] or "?"
    print(f"RESULT workload={workload} mode={mode} status={status} error={err}", flush=True)


def versions():
    import torch
    from importlib import metadata
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": sys.version.split()[0]}
    for pkg in ("torchvision", "transformers", "triton"):
        try:
            info[pkg] = metadata.version(pkg)
        except Exception:
            info[pkg] = None
    try:
        info["gpu"] = torch.cuda.get_device_name(0)
    except Exception:
        info["gpu"] = None
    return info


def tensor_bytes(t):
    import torch
    t = t.detach().to("cpu").contiguous()
    try:
        return t.numpy().tobytes()
    except Exception:
        return bytes(t.view(torch.uint8).flatten().tolist())


def checksum(t):
    return hashlib.sha256(tensor_bytes(t)).hexdigest()[:16]


def compare_tensors(ref, t):
    import torch
    if ref.shape != t.shape:
        return False, None
    eq = bool(torch.equal(ref, t))
    d = (ref.double() - t.double()).abs()
    d = d[torch.isfinite(d)]
    return eq, float(d.max().item()) if d.numel() else float("nan")


# ---------------------------------------------------------------- workloads ----

def mlp_layers(nn):
    layers = []
    for _ in range(8):
        layers += [nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256)]
    return nn.Sequential(*layers)


def build_mlp(dev):
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = mlp_layers(nn).to(dev).eval()
    x = torch.randn(1, 256, device=dev)

    def make_step(m):
        def step():
            with torch.no_grad():
                return m(x)
        return step
    return {"model": model, "make_step": make_step, "kind": "infer", "iters": 100, "warmup": 30}


def build_resnet18(dev):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).to(dev).eval()
    x = torch.randn(1, 3, 224, 224, device=dev)

    def make_step(m):
        def step():
            with torch.no_grad():
                return m(x)
        return step
    return {"model": model, "make_step": make_step, "kind": "infer", "iters": 40, "warmup": 20}


PAST_LEN = 128
FIXED_SEQ = 32


def build_gpt2(dev):
    import torch
    from torch import nn
    from transformers import GPT2Config, GPT2LMHeadModel
    try:
        from transformers import DynamicCache
    except ImportError:
        DynamicCache = None
    cfg = GPT2Config()
    torch.manual_seed(0)
    try:  # initialise on the GPU: much faster than 124M parameters on the CPU
        with torch.device(dev):
            lm = GPT2LMHeadModel(cfg)
        lm = lm.to(dev)
    except Exception as e:
        note(f"gpt2: init on the GPU failed ({type(e).__name__}: {e}); initialising on the CPU")
        torch.manual_seed(0)
        lm = GPT2LMHeadModel(cfg).to(dev)
    lm.eval()
    head_dim = cfg.n_embd // cfg.n_head
    g = torch.Generator(device=dev)
    g.manual_seed(1)

    class Decode(nn.Module):
        """One decode step against a fixed-length past: the past is rebuilt into a fresh
        cache every step (its update copies the fixed tensors), so shapes never change."""

        def __init__(self):
            super().__init__()
            self.lm = lm
            self.n = cfg.n_layer
            for i in range(cfg.n_layer):
                self.register_buffer(f"k{i}", torch.randn(1, cfg.n_head, PAST_LEN, head_dim, device=dev, generator=g))
                self.register_buffer(f"v{i}", torch.randn(1, cfg.n_head, PAST_LEN, head_dim, device=dev, generator=g))

        def forward(self, tok, pos):
            past = [(getattr(self, f"k{i}"), getattr(self, f"v{i}")) for i in range(self.n)]
            if DynamicCache is not None:
                cache = DynamicCache()
                for i, (k, v) in enumerate(past):
                    cache.update(k, v, i)
            else:
                cache = tuple(past)
            out = self.lm(input_ids=tok, past_key_values=cache, position_ids=pos, use_cache=True)
            return out.logits[:, -1, :]

    class Fixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.lm = lm

        def forward(self, ids, pos):
            return self.lm(input_ids=ids, position_ids=pos, use_cache=False).logits[:, -1, :]

    tok = torch.tensor([[42]], device=dev)
    pos = torch.tensor([[PAST_LEN]], device=dev)
    variant = f"decode-past{PAST_LEN}"
    model = Decode()
    try:
        with torch.no_grad():
            y = model(tok, pos)
        if tuple(y.shape) != (1, cfg.vocab_size):
            raise RuntimeError(f"unexpected logits shape {tuple(y.shape)}")
    except Exception as e:  # API drift: fall back to a fixed-length forward without cache
        print(f"bench_torch: gpt2 decode with a fixed past failed ({type(e).__name__}: {e}); "
              f"using a fixed {FIXED_SEQ}-token forward", file=sys.stderr)
        variant = f"fixed-seq{FIXED_SEQ}"
        model = Fixed()
        tok = torch.randint(0, cfg.vocab_size, (1, FIXED_SEQ), device=dev, generator=g)
        pos = torch.arange(FIXED_SEQ, device=dev).unsqueeze(0)

    def make_step(m):
        def step():
            with torch.no_grad():
                return m(tok, pos)
        return step
    return {"model": model, "make_step": make_step, "kind": "infer", "iters": 15, "warmup": 10,
            "variant": variant}


def build_train(dev):
    import torch
    from torch import nn
    import torch.nn.functional as F
    torch.manual_seed(0)
    model = mlp_layers(nn).to(dev).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    x = torch.randn(32, 256, device=dev)
    y = torch.randn(32, 256, device=dev)
    first = model[0].weight

    def make_step(m):
        def step():
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        return step

    def check_output(loss):
        return torch.cat([loss.reshape(1).float(), first.detach().flatten()[:4096]])
    return {"model": model, "make_step": make_step, "kind": "train", "iters": 25, "warmup": 20,
            "check_output": check_output, "opt": opt}


BUILDERS = {"mlp": build_mlp, "resnet18": build_resnet18, "gpt2": build_gpt2, "train": build_train}


# ---------------------------------------------------------------- running ------

def timed_blocks(fn, n, blocks, sync_each):
    """Per block: wall µs per iteration, and this thread's CPU µs per iteration
    (close to the wall time when every iteration synchronises: the wait spins)."""
    import torch
    per, cpu = [], []
    for _ in range(blocks):
        torch.cuda.synchronize()
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n):
            fn()
            if sync_each:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / n * 1e6)
        cpu.append((time.thread_time() - c0) / n * 1e6)
    return per, cpu


def run_workload(name, args, dev):
    import torch
    mode = args.mode
    torch.cuda.synchronize()
    gc.collect()
    torch.cuda.empty_cache()
    free0 = torch.cuda.mem_get_info()[0]
    note(f"{name}: building")
    w = BUILDERS[name](dev)
    note(f"{name}: built; warming up ({mode})")
    n_iters = max(5, int(w["iters"] * args.iters_scale))
    warmup = args.warmup if args.warmup is not None else w["warmup"]
    check_of = w.get("check_output", lambda t: t)
    fields = {}
    eager_ref = None
    capture_ms = compile_s = None

    if mode == "eager":
        step = w["make_step"](w["model"])
        run = step
        t0 = time.perf_counter()
        first = None
        for i in range(warmup):
            out = step()
            torch.cuda.synchronize()
            if i == 0:
                first = time.perf_counter() - t0
        warm_s = time.perf_counter() - t0
        check = check_of(out).clone()
    elif mode == "graph":
        step = w["make_step"](w["model"])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        n_side = min(3, warmup)
        t0 = time.perf_counter()
        first = None
        with torch.cuda.stream(side):
            for i in range(n_side):
                out = step()
                torch.cuda.synchronize()
                if i == 0:
                    first = time.perf_counter() - t0
        torch.cuda.current_stream().wait_stream(side)
        if w["kind"] == "infer":
            eager_ref = check_of(out).clone()
        graph = torch.cuda.CUDAGraph()
        tc = time.perf_counter()
        with torch.cuda.graph(graph):
            static_out = step()
        torch.cuda.synchronize()
        capture_ms = (time.perf_counter() - tc) * 1e3
        w["_graph"] = graph

        def run():
            graph.replay()
            return static_out
        for _ in range(warmup - n_side):
            run()
            torch.cuda.synchronize()
        warm_s = time.perf_counter() - t0
        check = check_of(static_out).clone()
    elif mode == "compile":
        if args.no_compile:
            fail_line(name, mode, "skipped", "--no-compile")
            return
        if args.compile_budget_s and time.perf_counter() - T0 > args.compile_budget_s:
            fail_line(name, mode, "skipped", "compile_time_budget_exhausted")
            return
        if w["kind"] == "infer":
            with torch.no_grad():
                eager_ref = check_of(w["make_step"](w["model"])()).clone()
        compiled = torch.compile(w["model"], mode="reduce-overhead")
        step = w["make_step"](compiled)
        mark = getattr(torch.compiler, "cudagraph_mark_step_begin", None)

        def run():
            if mark:
                mark()
            return step()
        t0 = time.perf_counter()
        first = None
        for i in range(max(warmup, 3)):
            out = run()
            torch.cuda.synchronize()
            if i == 0:
                first = time.perf_counter() - t0
            if i == 2:
                compile_s = time.perf_counter() - t0
        warm_s = time.perf_counter() - t0
        check = check_of(out).clone()
    else:
        raise ValueError(mode)

    torch.cuda.synchronize()
    if eager_ref is not None:
        eq, diff = compare_tensors(eager_ref, check)
        fields["check"] = "equal" if eq else f"maxdiff:{diff:.3g}"
    else:
        fields["check"] = "na"
    if args.save_dir and not args.no_check:
        os.makedirs(args.save_dir, exist_ok=True)
        torch.save(check.detach().cpu(), os.path.join(args.save_dir, f"{name}__{args.tag}.pt"))
    csum = "na" if args.no_check else checksum(check)

    note(f"{name}: warmed up; timing {args.blocks} x {n_iters} iterations")
    per, cpu = timed_blocks(run, n_iters, args.blocks, not args.no_sync_each)
    torch.cuda.synchronize()
    free1 = torch.cuda.mem_get_info()[0]
    fields.update({
        "us_per_iter": f"{statistics.median(per):.2f}",
        "us_min_block": f"{min(per):.2f}",
        "us_max_block": f"{max(per):.2f}",
        "cpu_us_per_iter": f"{statistics.median(cpu):.2f}",
        "cpu_us_min_block": f"{min(cpu):.2f}",
        "iters": n_iters * args.blocks,
        "warmup": warmup,
        "warmup_ms": f"{warm_s * 1e3:.1f}",
        "first_ms": f"{(first or 0) * 1e3:.1f}",
        "capture_ms": f"{capture_ms:.2f}" if capture_ms is not None else "na",
        "compile_s": f"{compile_s:.1f}" if compile_s is not None else "na",
        "mem_added_mib": f"{(free0 - free1) / 2**20:.1f}",
        "variant": w.get("variant", "-"),
        "checksum": csum,
        "status": "ok",
    })
    print(f"bench_torch: {name} {mode}: {fields['us_per_iter']} us/iter "
          f"(blocks {fields['us_min_block']}-{fields['us_max_block']}), check {fields['check']}", file=sys.stderr)
    print(f"RESULT workload={name} mode={mode} " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)
    del w, run, step, check
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def compare_dir(d, ref_tag):
    import torch
    files = sorted(f for f in os.listdir(d) if f.endswith(".pt") and "__" in f)
    by_w = {}
    for f in files:
        w, tag = f[:-3].split("__", 1)
        by_w.setdefault(w, {})[tag] = os.path.join(d, f)
    for w, tags in sorted(by_w.items()):
        ref_name = ref_tag if ref_tag in tags else next((t for t in sorted(tags) if t.startswith("eager-")), None)
        if not ref_name:
            continue
        ref = torch.load(tags[ref_name])
        for tag, path in sorted(tags.items()):
            eq, diff = compare_tensors(ref, torch.load(path))
            print("COMPARE " + json.dumps({"workload": w, "tag": tag, "ref": ref_name, "equal": eq,
                                           "max_abs_diff": diff}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="mlp,resnet18,gpt2,train")
    ap.add_argument("--mode", default="eager", choices=["eager", "graph", "compile"])
    ap.add_argument("--iters-scale", type=float, default=1.0, help="scale every workload's iterations per block")
    ap.add_argument("--blocks", type=int, default=5, help="timed blocks (the median block is reported)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up iterations (default per workload)")
    ap.add_argument("--no-check", action="store_true", help="no checksum/saved output (launch-free preload)")
    ap.add_argument("--no-compile", action="store_true", help="skip --mode compile (slow)")
    ap.add_argument("--no-sync-each", action="store_true", help="synchronise per block, not per iteration")
    ap.add_argument("--save-dir", default=None, help="save each workload's check output here")
    ap.add_argument("--tag", default="run", help="name of this run in saved outputs")
    ap.add_argument("--compile-budget-s", type=float, default=None,
                    help="do not start compiling another workload after this many seconds")
    ap.add_argument("--compare", metavar="DIR", help="compare saved outputs in DIR with --ref and exit")
    ap.add_argument("--ref", default="eager-r0")
    args = ap.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # random weights only: never reach for a hub
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    if args.compare:
        compare_dir(args.compare, args.ref)
        return 0
    import torch
    note(f"imported torch {torch.__version__}")
    if not torch.cuda.is_available():
        print("bench_torch: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    torch.cuda.init()
    torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    note("CUDA initialised")
    print("INFO " + json.dumps(versions()), flush=True)
    rc = 0
    for name in [w for w in args.workloads.split(",") if w]:
        if name not in BUILDERS:
            fail_line(name, args.mode, "error", "unknown_workload")
            rc = 2
            continue
        try:
            run_workload(name, args, dev)
        except Exception as e:
            traceback.print_exc()
            fail_line(name, args.mode, "error", f"{type(e).__name__}:{e}")
            try:
                gc.collect()
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception:
                pass
    return rc


if __name__ == "__main__":
    sys.exit(main())
