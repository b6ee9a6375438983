#!/usr/bin/env python3
"""encore benchmark: workloads where encore replays nothing or little (issue 11), for the
paired method of scripts/bench (--method pairs|switch). Random weights; nothing is downloaded.

    bench_never_slower.py --workload W [--schedule LETTERS] [--blocks B] [--steps N]
                          [--warmup N] [--check-steps N]

Workloads (batch 1 unless said; a host synchronisation after every step):
    triton               8 Triton kernel launches a step, from Python     graph: torch.cuda.graph
    cupy                 8 CuPy elementwise ops a step, on a stream         graph: CuPy stream capture
    resnet18             PyTorch eager ResNet-18 inference, 1x3x224x224     graph: torch.cuda.graph
    resnet18-b32         the same at batch 32: the GPU's time, not launching, sets the pace
    resnet18-det         ResNet-18 at batch 1 with torch.use_deterministic_algorithms(True)
    jax-ops              JAX op by op (8 elementwise ops a step, no jit: each op an event wait,
                         a kernel, an event record)                  graph: jax.jit of the same step
                         (PyTorch then fills every new tensor: issue 28)
    train                PyTorch eager training step of the MLP at batch 32 (Adam, capturable)
                                                                            graph: torch.cuda.graph
    mlp-compile          8 x (Linear 256, GELU, LayerNorm), torch.compile default mode
    mlp-cpp              the same, torch.compile(options={"cpp_wrapper": True})
    transformer-compile  6 transformer blocks (hidden 768, 12 heads, a fixed KV cache of 128,
                         one token a step), torch.compile default mode
    transformer-cpp      the same, cpp_wrapper=True
                         (the compile workloads' graph mode: torch.compile(mode="reduce-overhead"))
    mlp-aoti, transformer-aoti
                         the same models packaged by AOTInductor (built once into
                         BENCH_AOTI_DIR, default /tmp/encore-aoti) and loaded with
                         aoti_load_package                 graph: torch.cuda.graph

After the warm-up, check-steps steps run and the checksum of the last output (or, for
train, of the loss and the first weights) is printed: the same steps in every process, so
outputs are compared across variants (eager, encore, encore-off). Then B timed blocks of N
steps; block i runs as letter schedule[i % len] says (tests/bench/encore_switch.py):
    E  as it is                 P  encore switched off      A  encore switched on
    G  encore off, the framework's graph mode (built after the check, from a second,
       identical model)
Output (parsed by scripts/bench):
    BLOCK workload=W i=I state=L steps=N us_per_step=F
    RESULT workload=W status=ok checksum=HEX us_per_step=MEDIAN ...
A failure prints `RESULT workload=W status=error error=...` and exits 1: nothing is skipped
silently.
"""
import argparse
import hashlib
import os
import re
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import encore_switch  # noqa: E402

T0 = time.perf_counter()
DEFAULT_STEPS = {"triton": 200, "cupy": 200, "resnet18": 40, "resnet18-b32": 10, "resnet18-det": 40, "jax-ops": 200, "train": 50, "mlp-compile": 100, "mlp-cpp": 100,
                 "transformer-compile": 50, "transformer-cpp": 50, "mlp-aoti": 100, "transformer-aoti": 50}


def note(msg):
    print(f"bench_never_slower: [{time.perf_counter() - T0:6.2f}s] {msg}", file=sys.stderr, flush=True)


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def used_mb():
    """Device memory in use (MiB), from the driver through cudart: whatever the framework holds,
    encore's graphs and the graph mode's pools alike. 0 before any framework is imported."""
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        free, total = sys.modules["torch"].cuda.mem_get_info()
    elif "cupy" in sys.modules:
        free, total = sys.modules["cupy"].cuda.runtime.memGetInfo()
    else:
        return 0.0
    return (total - free) / 2**20


def torch_checksum(t):
    import torch
    t = t.detach().float().to("cpu").contiguous()
    return digest(t.numpy().tobytes()) if hasattr(t, "numpy") else digest(bytes(t.view(torch.uint8).tolist()))


# ------------------------------------------------------------------ workloads ----
# Each builder returns (step, sync, checksum_of_last, make_graph): step() runs one step and
# returns its output; sync() waits for the device; make_graph() builds the graph mode's step
# (or None where the framework has none).

def torch_device():
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device visible to PyTorch")
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    return dev


def manual_graph(torch, step, capture_error_mode="global"):
    """torch.cuda.graph of one step: warm-up on a side stream, capture, replay. AOTInductor's runner
    queries events while it runs, which the default global capture mode refuses (seen on an H100,
    torch 2.11: the capture was invalidated): it is captured in relaxed mode (and
    then faults at replay: build_aoti)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode=capture_error_mode):
        out = step()

    def replay():
        g.replay()
        return out
    return replay


def build_triton():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def blend_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * 0.5 + y * 0.5, mask=mask)

    @triton.jit
    def squash_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.sigmoid(alpha * x + y) - 0.5, mask=mask)

    dev = torch_device()
    n, block = 1 << 16, 1024
    g = torch.Generator(device=dev)
    g.manual_seed(0)
    bufs = [torch.randn(n, device=dev, generator=g) for _ in range(4)]
    grid = (triton.cdiv(n, block),)

    def make(b):
        a, c, d, e = b

        def step():
            for _ in range(2):
                blend_kernel[grid](a, c, d, n, BLOCK_SIZE=block)
                squash_kernel[grid](d, a, e, 0.75, n, BLOCK_SIZE=block)
                blend_kernel[grid](e, d, c, n, BLOCK_SIZE=block)
                squash_kernel[grid](c, e, a, 1.25, n, BLOCK_SIZE=block)
            return a
        return step

    def make_graph():
        g2 = torch.Generator(device=dev)
        g2.manual_seed(0)
        return manual_graph(torch, make([torch.randn(n, device=dev, generator=g2) for _ in range(4)]))
    return make(bufs), torch.cuda.synchronize, torch_checksum, make_graph


def build_cupy():
    import cupy as cp
    cp.cuda.Device(0).use()
    n = 1 << 16
    stream = cp.cuda.Stream(non_blocking=True)

    def buffers():
        rs = cp.random.RandomState(0)
        with stream:
            b = [rs.standard_normal(n, dtype=cp.float32) for _ in range(3)]
        stream.synchronize()
        return b

    def make(b):
        x, y, t = b

        def step():
            with stream:
                cp.multiply(x, 0.5, out=t)
                cp.add(t, y, out=x)
                cp.sin(x, out=y)
                cp.tanh(y, out=t)
                cp.multiply(t, 1.5, out=y)
                cp.subtract(x, y, out=t)
                cp.cos(t, out=x)
                cp.add(x, t, out=x)
            return x
        return step

    def make_graph():
        step = make(buffers())
        for _ in range(3):  # kernels compiled and loaded before the capture
            step()
        stream.synchronize()
        stream.begin_capture()
        step()
        graph = stream.end_capture()

        def replay():
            graph.launch(stream)
            return None
        return replay

    def checksum(x):
        return digest(cp.asnumpy(x).tobytes())
    return make(buffers()), stream.synchronize, checksum, make_graph


def build_jax_ops():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    import numpy as np
    x0 = jax.device_put(np.linspace(0.0, 1.0, 1 << 16, dtype=np.float32))
    y0 = jax.device_put(np.linspace(1.0, 2.0, 1 << 16, dtype=np.float32))

    def ops(x, y):
        t = x * 0.5
        x = t + y
        y = jnp.sin(x)
        t = jnp.tanh(y)
        y = t * 1.5
        t = x - y
        x = jnp.cos(t)
        return x + t, y

    state = {"x": x0, "y": y0}
    last = {"v": x0}  # the output to wait for, of whichever mode ran last

    def step():
        state["x"], state["y"] = ops(state["x"], state["y"])
        last["v"] = state["x"]
        return state["x"]

    def make_graph():
        jitted = jax.jit(ops)
        g = {"x": x0, "y": y0}

        def gstep():
            g["x"], g["y"] = jitted(g["x"], g["y"])
            last["v"] = g["x"]
            return g["x"]
        return gstep

    def sync():
        last["v"].block_until_ready()

    def checksum(x):
        return digest(np.asarray(x).tobytes())
    return step, sync, checksum, make_graph


def resnet18_model(torch, nn):
    try:
        import torchvision
        return torchvision.models.resnet18(weights=None)
    except ImportError:
        note("torchvision not importable: using the ResNet-18 defined here (same layers)")

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(self.b2(self.c2(y)) + idt)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)


def build_resnet18(batch=1, deterministic=False):
    import torch
    from torch import nn
    dev = torch_device()
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)

    def make():
        torch.manual_seed(0)
        model = resnet18_model(torch, nn).to(dev).eval()
        x = torch.randn(batch, 3, 224, 224, device=dev)

        def step():
            with torch.no_grad():
                return model(x)
        return step
    return make(), torch.cuda.synchronize, torch_checksum, lambda: manual_graph(torch, make())


def mlp_model(nn):
    layers = []
    for _ in range(8):
        layers += [nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256)]
    return nn.Sequential(*layers)


def build_train():
    import torch
    from torch import nn
    import torch.nn.functional as F
    dev = torch_device()

    def make():
        torch.manual_seed(0)
        model = mlp_model(nn).to(dev).train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
        x = torch.randn(32, 256, device=dev)
        y = torch.randn(32, 256, device=dev)
        first = model[0].weight

        def step():
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return torch.cat([loss.detach().reshape(1), first.detach().flatten()[:4096]])
        return step
    return make(), torch.cuda.synchronize, torch_checksum, lambda: manual_graph(torch, make())


def transformer_model(torch, nn, dev, layers=6, d=768, heads=12, past=128):
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            hd = d // heads
            self.register_buffer("k_cache", torch.randn(1, heads, past, hd) * 0.5)
            self.register_buffer("v_cache", torch.randn(1, heads, past, hd) * 0.5)

        def forward(self, x):  # x: [1, 1, d], one token attending to the fixed cache and itself
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.view(1, 1, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            keys = torch.cat([self.k_cache, k], dim=2)
            vals = torch.cat([self.v_cache, v], dim=2)
            a = F.scaled_dot_product_attention(q, keys, vals).transpose(1, 2).reshape(1, 1, d)
            x = x + self.proj(a)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    return nn.Sequential(*[Block() for _ in range(layers)], nn.LayerNorm(d)).to(dev).eval()


def build_compiled(model_name, cpp_wrapper):
    import torch
    from torch import nn
    dev = torch_device()

    def make_model():
        torch.manual_seed(0)
        if model_name == "mlp":
            return mlp_model(nn).to(dev).eval(), torch.randn(1, 256, device=dev)
        return transformer_model(torch, nn, dev), torch.randn(1, 1, 768, device=dev)

    model, x = make_model()

    def fwd_main(inp):
        return model(inp)
    compiled = torch.compile(fwd_main, options={"cpp_wrapper": True}) if cpp_wrapper else torch.compile(fwd_main)

    def step():
        with torch.no_grad():
            return compiled(x)

    def make_graph():
        model2, x2 = make_model()

        def fwd_graph(inp):
            return model2(inp)
        ro = torch.compile(fwd_graph, mode="reduce-overhead")
        mark = getattr(torch.compiler, "cudagraph_mark_step_begin", None)

        def gstep():
            if mark:
                mark()
            with torch.no_grad():
                return ro(x2)
        for _ in range(3):
            gstep()
        torch.cuda.synchronize()
        return gstep
    return step, torch.cuda.synchronize, torch_checksum, make_graph


def aoti_package(model_name):
    """The AOTInductor package of the model (built once, kept under BENCH_AOTI_DIR, default
    /tmp/encore-aoti): torch.export, then torch._inductor.aoti_compile_and_package, its .so built
    by BENCH_AOTI_CXX if set (on the GPU image: /usr/bin/g++; the image's $CXX links libstdc++
    statically into the .so, which then crashes at load: docs/pytorch.md). Returns its path."""
    import torch
    from torch import nn
    d = os.environ.get("BENCH_AOTI_DIR", "/tmp/encore-aoti")
    path = os.path.join(d, f"{model_name}.pt2")
    if os.path.exists(path):
        return path
    os.makedirs(d, exist_ok=True)
    dev = torch_device()
    torch.manual_seed(0)
    if model_name == "mlp":
        model, x = mlp_model(nn).to(dev).eval(), torch.randn(1, 256, device=dev)
    else:
        model, x = transformer_model(torch, nn, dev), torch.randn(1, 1, 768, device=dev)
    cxx = os.environ.get("BENCH_AOTI_CXX")
    if cxx:  # the compiler of the package's .so: what torch's default, (None, $CXX read at import), would be
        import torch._inductor.config as inductor_config
        inductor_config.cpp.cxx = (None, cxx)
    t = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
        tmp = f"{path}.{os.getpid()}.pt2"
        torch._inductor.aoti_compile_and_package(ep, package_path=tmp)
    os.replace(tmp, path)
    note(f"aoti: packaged {model_name} in {time.perf_counter() - t:.1f}s: {path}")
    return path


def build_aoti(model_name):
    """The model packaged by AOTInductor, loaded with torch._inductor.aoti_load_package (its
    single-threaded runner), run from Python. Graph mode: a manual torch.cuda.graph of the loaded
    model's call (the same runner)."""
    import torch
    import torch._inductor
    dev = torch_device()
    path = aoti_package(model_name)

    # The single-threaded runner (made for CUDA graphs, pytorch#148601): the default one keeps a pool
    # of model instances behind events, and its first eager call after a capture of it failed
    # ("invalid argument", H200, torch 2.11, 2026-11-26).
    fn = torch._inductor.aoti_load_package(path, run_single_threaded=True)
    torch.manual_seed(0)
    x = torch.randn(1, 256, device=dev) if model_name == "mlp" else torch.randn(1, 1, 768, device=dev)

    def step():
        with torch.no_grad():
            out = fn(x)
        return out[0] if isinstance(out, (list, tuple)) else out

    def make_graph():
        # The graph of the very runner the other blocks run. A second aoti_load_package of the same
        # package in this process, captured, faulted at its first replay with an illegal address,
        # without encore too (H100, torch 2.11, 2026-11-26: scripts/gpu-aoti-graph-check); the one
        # loaded runner captured replays right (H200, 2026-11-26: scripts/gpu-aoti-graph-why, every
        # case the same as eager, the single-threaded runner in global capture mode too).
        return manual_graph(torch, step, "relaxed")
    return step, torch.cuda.synchronize, torch_checksum, make_graph


BUILDERS = {
    "triton": build_triton,
    "cupy": build_cupy,
    "resnet18": build_resnet18,
    "resnet18-b32": lambda: build_resnet18(32),
    "resnet18-det": lambda: build_resnet18(1, deterministic=True),
    "jax-ops": build_jax_ops,
    "train": build_train,
    "mlp-compile": lambda: build_compiled("mlp", False),
    "mlp-cpp": lambda: build_compiled("mlp", True),
    "transformer-compile": lambda: build_compiled("transformer", False),
    "transformer-cpp": lambda: build_compiled("transformer", True),
    "mlp-aoti": lambda: build_aoti("mlp"),
    "transformer-aoti": lambda: build_aoti("transformer"),
}


def run(args):
    name = args.workload
    steps = args.steps or DEFAULT_STEPS[name]
    note(f"{name}: building (encore switch {'found' if encore_switch.available() else 'absent'})")
    step, sync, checksum_of, make_graph = BUILDERS[name]()
    mem_start = used_mb()  # the model is built; the warm-up compiles, learns and captures
    t0 = time.perf_counter()
    for _ in range(args.warmup):  # compiles (torch.compile, Triton, CuPy) happen here
        step()
        sync()
    warm_s = time.perf_counter() - t0
    out = None
    for _ in range(args.check_steps):
        out = step()
        sync()
    csum = checksum_of(out)
    mem_warm, mem_graph = used_mb(), 0.0
    gstep, graph_error = None, ""
    if "G" in args.schedule:
        encore_switch.set_active(False)  # the framework's graph mode alone
        tg = time.perf_counter()
        try:
            gstep = make_graph()
            sync()
            mem_graph = used_mb() - mem_warm
            note(f"{name}: graph mode built in {time.perf_counter() - tg:.1f}s")
        except Exception as e:  # the graph mode's failure is a result; encore's blocks still run
            graph_error = re.sub(r"\s+", "_", f"{type(e).__name__}:{e}")[:160]
            note(f"{name}: graph mode failed ({graph_error}): its blocks are left out")
        encore_switch.set_active(True)
    per = []
    for b in range(args.blocks):
        state = args.schedule[b % len(args.schedule)]
        if state == "G" and gstep is None:
            continue
        if state != "E":
            encore_switch.set_active(state == "A")
        fn = gstep if state == "G" else step
        t = time.perf_counter()
        for _ in range(steps):
            fn()
            sync()
        us = (time.perf_counter() - t) / steps * 1e6
        per.append(us)
        print(f"BLOCK workload={name} i={b} state={state} steps={steps} us_per_step={us:.3f}", flush=True)
    encore_switch.set_active(True)
    print(f"RESULT workload={name} status=ok checksum={csum} us_per_step={statistics.median(per):.3f} "
          f"blocks={args.blocks} steps={steps} warmup_s={warm_s:.1f} switch={int(encore_switch.available())} "
          f"total_steps={args.warmup + args.check_steps + args.blocks * steps} "
          f"mem_start_mb={mem_start:.1f} mem_warm_mb={mem_warm:.1f} mem_graph_mb={mem_graph:.1f}"
          + (f" graph_error={graph_error}" if graph_error else ""),
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", required=True, choices=sorted(BUILDERS))
    ap.add_argument("--schedule", default="E", help="block letters, cycled: E, P, A, G (default E)")
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--steps", type=int, default=None, help="steps per block (default per workload)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--check-steps", type=int, default=5)
    args = ap.parse_args()
    if not re.fullmatch(r"[EPAG]+", args.schedule):
        ap.error("--schedule takes the letters E, P, A and G")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        run(args)
    except Exception as e:
        traceback.print_exc()
        err = re.sub(r"\s+", "_", f"{type(e).__name__}:{e}")[:160]
        print(f"RESULT workload={args.workload} status=error error={err}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
