#!/usr/bin/env python3
"""encore benchmark: workloads where encore replays nothing or little (issue 11), for the
paired method of tests/bench/bench (--method pairs|switch). Random weights; nothing is downloaded.

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
    mlp-graphs, transformer-graphs
                         a program that runs its own CUDA graphs: the timed step itself is
                         torch.compile(mode="reduce-overhead") of the mlp-compile and
                         transformer-compile models (cudagraph trees, recorded in the build)
                                                                            graph: none (it is one)
    jax-jit              a jitted JAX step (8 elementwise ops and a 256x256 matmul) called in a
                         loop; XLA's own command buffers may run it     graph: none
    hf-generate          Hugging Face LlamaForCausalLM from a tiny random config (hidden 256,
                         4 layers, 4 heads, vocab 1000, fp16), generate() of 32 new tokens
                         after 8, greedy, the default dynamic cache; without transformers, a
                         Llama-shaped decoder in plain PyTorch (KV cache grown by concatenation):
                         RESULT says which (impl=)                      graph: none
    serve-varbatch       an inference server loop: the MLP on a request whose batch size (1..64,
                         a seeded sequence) changes every request, copied in and out
                                                                        graph: none
    serve-fixed          the same server loop, every request 32 rows      graph: none
    ddp-1gpu             DistributedDataParallel training step of the MLP at batch 32 on one GPU
                         (world size 1, NCCL, file:// rendezvous in /tmp), SGD   graph: none
    unet-step            a small diffusion UNet (conv down/up blocks, GroupNorm, SiLU, skips,
                         a timestep-embedding MLP), one denoising step, 1x3x64x64
                                                                            graph: torch.cuda.graph
    rl-loop              256 CartPole environments stepped in torch ops, a policy MLP, actions
                         sampled with a seeded CUDA generator, a rollout buffer written at a
                         device-side index                              graph: torch.cuda.graph
    cupy-solver          conjugate gradient in CuPy on a cupyx.scipy.sparse CSR 2-D Poisson
                         matrix (256x256 grid), 20 iterations a step from x = 0, the scalars
                         kept on the device (as the CUDA samples' conjugateGradient)
                                                                        graph: none

After the warm-up, check-steps steps run and the checksum of the last output (or, for
train, of the loss and the first weights) is printed: the same steps in every process, so
outputs are compared across variants (eager, encore, encore-off). Then B timed blocks of N
steps; block i runs as letter schedule[i % len] says (tests/bench/encore_switch.py):
    E  as it is                 P  encore switched off      A  encore switched on
    G  encore off, the framework's graph mode (built after the check, from a second,
       identical model)
    B  encore off and every kernel launch skipped: the launch-free bound in the same process
       (LD_PRELOAD=libskiplaunch.so:libencore.so SKIPLAUNCH_SWITCH=1; outputs are garbage
       after it, the checksum is taken before the blocks)
A workload whose make_graph is None (or returns None) has no graph mode: its G blocks are left
out. BENCH_WATCHDOG_S (default 540) bounds a process: past it, the stacks go to stderr, a RESULT
line with status=error is printed and the process exits 1 (a hung NCCL or compile never hangs
the benchmark).
Output (parsed by tests/bench/bench):
    BLOCK workload=W i=I state=L steps=N us_per_step=F t0_ns=NS t1_ns=NS
          (t0_ns, t1_ns: time.monotonic_ns() at the block's start and end, for tests/bench/breakdown.py)
    RESULT workload=W status=ok checksum=HEX us_per_step=MEDIAN ... [impl=...]
A failure prints `RESULT workload=W status=error error=...` and exits 1: nothing is skipped
silently.
"""
import argparse
import hashlib
import os
import re
import statistics
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import encore_switch  # noqa: E402

T0 = time.perf_counter()
DEFAULT_STEPS = {"triton": 200, "cupy": 200, "resnet18": 40, "resnet18-b32": 10, "resnet18-det": 40, "jax-ops": 200, "train": 50, "mlp-compile": 100, "mlp-cpp": 100,
                 "transformer-compile": 50, "transformer-cpp": 50, "mlp-aoti": 100, "transformer-aoti": 50,
                 "mlp-graphs": 500, "transformer-graphs": 300, "jax-jit": 500, "hf-generate": 1,
                 "serve-varbatch": 200, "serve-fixed": 200, "ddp-1gpu": 50, "unet-step": 40, "rl-loop": 100, "cupy-solver": 20}
RESULT_EXTRA = {}  # key -> value a builder adds to the RESULT line (e.g. impl=, which implementation ran)


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


def manual_graph(torch, step, capture_error_mode="global", generators=()):
    """torch.cuda.graph of one step: warm-up on a side stream, capture, replay. AOTInductor's runner
    queries events while it runs, which the default global capture mode refuses (seen on an H100,
    torch 2.11: the capture was invalidated): it is captured in relaxed mode (and
    then faults at replay: build_aoti). generators: CUDA generators other than the default one
    that the step draws from, registered with the graph (CUDAGraph.register_generator_state,
    where this PyTorch has it; without it their capture fails and the graph mode is left out)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    for gen in generators:
        g.register_generator_state(gen)
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


def jax_elementwise(jnp, x, y):
    """The 8 elementwise ops of jax-ops and jax-jit (7 here; each caller adds x + t): x, t, y."""
    t = x * 0.5
    x = t + y
    y = jnp.sin(x)
    t = jnp.tanh(y)
    y = t * 1.5
    t = x - y
    x = jnp.cos(t)
    return x, t, y


def build_jax_ops():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    import numpy as np
    x0 = jax.device_put(np.linspace(0.0, 1.0, 1 << 16, dtype=np.float32))
    y0 = jax.device_put(np.linspace(1.0, 2.0, 1 << 16, dtype=np.float32))

    def ops(x, y):
        x, t, y = jax_elementwise(jnp, x, y)
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


def train_step(torch, F, model, opt, x, y, first):
    """One training step (MSE loss): returns the loss and the first weights' first 4,096 values."""
    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return torch.cat([loss.detach().reshape(1), first.detach().flatten()[:4096]])
    return step


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
        return train_step(torch, F, model, opt, x, y, model[0].weight)
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


def reduce_overhead_step(torch, model, x):
    """torch.compile(mode="reduce-overhead") of model(x) under no_grad (cudagraph trees), warmed up
    (4 calls: the trees run eagerly, record, then replay) before it is returned."""
    def fwd_graph(inp):
        return model(inp)
    ro = torch.compile(fwd_graph, mode="reduce-overhead")
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

    def gstep():
        if mark:
            mark()
        with torch.no_grad():
            return ro(x)
    for _ in range(4):
        gstep()
    torch.cuda.synchronize()
    return gstep


def build_compiled(model_name, cpp_wrapper, own_graphs=False):
    """torch.compile of the MLP or the transformer: default mode (or cpp_wrapper), graph mode
    reduce-overhead. own_graphs: the timed step itself is reduce-overhead (a program that runs its
    own CUDA graphs), no separate graph mode."""
    import torch
    from torch import nn
    dev = torch_device()

    def make_model():
        torch.manual_seed(0)
        if model_name == "mlp":
            return mlp_model(nn).to(dev).eval(), torch.randn(1, 256, device=dev)
        return transformer_model(torch, nn, dev), torch.randn(1, 1, 768, device=dev)

    model, x = make_model()
    if own_graphs:
        t = time.perf_counter()
        step = reduce_overhead_step(torch, model, x)
        note(f"{model_name}: reduce-overhead compiled and recorded in {time.perf_counter() - t:.1f}s")
        return step, torch.cuda.synchronize, torch_checksum, None

    def fwd_main(inp):
        return model(inp)
    compiled = torch.compile(fwd_main, options={"cpp_wrapper": True}) if cpp_wrapper else torch.compile(fwd_main)

    def step():
        with torch.no_grad():
            return compiled(x)

    def make_graph():
        model2, x2 = make_model()
        return reduce_overhead_step(torch, model2, x2)
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
        # without encore too (H100, torch 2.11, 2026-11-26: scripts/gpu/aoti-graph-check); the one
        # loaded runner captured replays right (H200, 2026-11-26: scripts/gpu/aoti-graph-why, every
        # case the same as eager, the single-threaded runner in global capture mode too).
        return manual_graph(torch, step, "relaxed")
    return step, torch.cuda.synchronize, torch_checksum, make_graph


# ------------------------------------------------------------ the corpus (issue 28) ----
# Programs shaped like what users run, none tuned for encore.

def build_jax_jit():
    """A jitted JAX step (8 elementwise ops, then a 256x256 matmul and a tanh) called in a loop:
    XLA fuses it and may run it through its own command buffers. XLA's GEMM autotuning picks its
    algorithm by timing, which could differ between processes and with it the output bits: it is
    turned off (--xla_gpu_autotune_level=0, unless XLA_FLAGS already sets a level) so that every
    process prints the same checksum."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_gpu_autotune_level" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_autotune_level=0").strip()
    import jax
    import jax.numpy as jnp
    import numpy as np
    n = 256 * 256
    x0 = jax.device_put(np.linspace(0.0, 1.0, n, dtype=np.float32))
    y0 = jax.device_put(np.linspace(1.0, 2.0, n, dtype=np.float32))
    w = jax.device_put((np.cos(np.arange(n, dtype=np.float64)) / 16.0).astype(np.float32).reshape(256, 256))

    @jax.jit
    def jstep(x, y, w):
        x, t, y = jax_elementwise(jnp, x, y)
        x = x + t
        m = jnp.tanh(jnp.dot(x.reshape(256, 256), w)).reshape(-1)
        return m, y

    state = {"x": x0, "y": y0}

    def step():
        state["x"], state["y"] = jstep(state["x"], state["y"], w)
        return state["x"]

    for _ in range(3):  # traced and compiled here, not in the timed blocks
        step()
    state["x"].block_until_ready()
    state["x"], state["y"] = x0, y0  # every process starts its warm-up from the same inputs

    def sync():
        state["x"].block_until_ready()

    def checksum(x):
        return digest(np.asarray(x).tobytes())
    return step, sync, checksum, None


def llama_config_kwargs():
    return dict(vocab_size=1000, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256,
                rms_norm_eps=1e-6, rope_theta=10000.0, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                tie_word_embeddings=False)


def hf_llama_generate(torch, dev, prompt, new_tokens):
    """Hugging Face LlamaForCausalLM from the tiny random config, fp16, generate() greedy with the
    default (dynamic) cache. Raises where transformers cannot be imported or built."""
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM
    try:
        transformers.logging.set_verbosity_error()
    except Exception:
        pass
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**llama_config_kwargs())).to(device=dev, dtype=torch.float16).eval()
    mask = torch.ones_like(prompt)

    def step():
        with torch.no_grad():
            return model.generate(input_ids=prompt, attention_mask=mask, max_new_tokens=new_tokens,
                                  min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
    return step, f"transformers-{getattr(transformers, '__version__', '?')}"


def plain_llama_generate(torch, dev, prompt, new_tokens):
    """The fallback without transformers: a Llama-shaped decoder in plain PyTorch (RMSNorm, rotary
    embeddings, attention over a KV cache grown by concatenation every token, SwiGLU MLP), greedy
    decoding with the end-of-sequence token suppressed (as min_new_tokens does) and a host check
    of 'all finished' every token (as generate's stopping criteria do)."""
    import torch.nn.functional as F
    from torch import nn
    cfg = llama_config_kwargs()
    d, heads, layers = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    hd, eps, eos = d // heads, cfg["rms_norm_eps"], cfg["eos_token_id"]

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            h = x.float()
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
            return self.weight * h.to(x.dtype)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
            self.gate = nn.Linear(d, cfg["intermediate_size"], bias=False)
            self.up = nn.Linear(d, cfg["intermediate_size"], bias=False)
            self.down = nn.Linear(cfg["intermediate_size"], d, bias=False)

    torch.manual_seed(0)
    embed = nn.Embedding(cfg["vocab_size"], d)
    blocks = nn.ModuleList(Layer() for _ in range(layers))
    norm, head = RMSNorm(), nn.Linear(d, cfg["vocab_size"], bias=False)
    nn.ModuleList([embed, blocks, norm, head]).to(device=dev, dtype=torch.float16).eval()
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))

    def rotate_half(x):
        a, b = x.chunk(2, dim=-1)
        return torch.cat((-b, a), dim=-1)

    def forward(ids, start, cache):
        t = ids.shape[1]
        pos = torch.arange(start, start + t, device=dev, dtype=torch.float32)
        freqs = torch.outer(pos, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(torch.float16)[None, None], emb.sin().to(torch.float16)[None, None]
        x = embed(ids)
        for i, lay in enumerate(blocks):
            h = lay.n1(x)
            q, k, v = (m(h).view(1, t, heads, hd).transpose(1, 2) for m in (lay.q, lay.k, lay.v))
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            if cache[i] is not None:
                k = torch.cat((cache[i][0], k), dim=2)
                v = torch.cat((cache[i][1], v), dim=2)
            cache[i] = (k, v)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=cache[i][0].shape[2] == t and t > 1)
            x = x + lay.o(a.transpose(1, 2).reshape(1, t, d))
            h = lay.n2(x)
            x = x + lay.down(F.silu(lay.gate(h)) * lay.up(h))
        return head(norm(x[:, -1:]))[:, -1].float()

    def step():
        with torch.no_grad():
            cache = [None] * layers
            ids, out, start = prompt, [prompt], 0
            for _ in range(new_tokens):
                logits = forward(ids, start, cache)
                start += ids.shape[1]
                logits[:, eos] = float("-inf")
                ids = logits.argmax(-1, keepdim=True)
                out.append(ids)
                if bool((ids == eos).all()):  # the host's stopping check, every token
                    break
            return torch.cat(out, dim=1)
    return step, "plain-pytorch"


def build_hf_generate():
    import torch
    dev = torch_device()
    g = torch.Generator(device="cpu")
    g.manual_seed(0)
    prompt = torch.randint(3, 1000, (1, 8), generator=g).to(dev)
    new_tokens = 32
    try:
        step, impl = hf_llama_generate(torch, dev, prompt, new_tokens)
        out = step()  # a first generate here: a transformers that imports but cannot run falls back too
        torch.cuda.synchronize()
        if out.shape[1] != prompt.shape[1] + new_tokens:
            raise RuntimeError(f"generate returned {out.shape[1] - prompt.shape[1]} new tokens, not {new_tokens}")
    except Exception as e:
        why = re.sub(r"\s+", "_", f"{type(e).__name__}:{e}")[:120]
        note(f"hf-generate: transformers did not run ({why}): the plain PyTorch Llama decoder runs instead")
        RESULT_EXTRA["impl_fallback_reason"] = why
        step, impl = plain_llama_generate(torch, dev, prompt, new_tokens)
    note(f"hf-generate: {impl}")
    RESULT_EXTRA["impl"] = impl
    return step, torch.cuda.synchronize, torch_checksum, None


def build_serve_varbatch(fixed=None):
    """An inference server loop: every request (one step) brings a batch of 1..64 rows (a seeded
    sequence, the same in every process), copied to the device from pinned host memory, through the
    MLP, and the answer copied back to the host. `fixed`: every request that many rows (the
    yardstick: issue 30 asks the changing batch to gain as much as a fixed one)."""
    import random
    import torch
    from torch import nn
    dev = torch_device()
    torch.manual_seed(0)
    model = mlp_model(nn).to(dev).eval()
    host_in = torch.randn(64, 256).pin_memory()
    host_out = torch.empty(64, 256).pin_memory()
    rng = random.Random(1234)

    def step():
        b = fixed or rng.randint(1, 64)
        with torch.no_grad():
            out = model(host_in[:b].to(dev, non_blocking=True))
        host_out[:b].copy_(out, non_blocking=True)
        return out
    return step, torch.cuda.synchronize, torch_checksum, None


def build_ddp_1gpu():
    """DistributedDataParallel training of the MLP at batch 32 on one GPU: world size 1, NCCL, a
    file:// rendezvous in a fresh /tmp directory; SGD with momentum."""
    import atexit
    import datetime
    import tempfile
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    dev = torch_device()
    index = torch.cuda.current_device()
    if not dist.is_initialized():
        store = os.path.join(tempfile.mkdtemp(prefix="encore-ddp-"), "rendezvous")
        dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1,
                                timeout=datetime.timedelta(seconds=120))

        def teardown():
            try:
                dist.destroy_process_group()
            except Exception:
                pass
        atexit.register(teardown)
    torch.manual_seed(0)
    model = DDP(mlp_model(nn).to(dev).train(), device_ids=[index])
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    x = torch.randn(32, 256, device=dev)
    y = torch.randn(32, 256, device=dev)
    return train_step(torch, F, model, opt, x, y, model.module[0].weight), torch.cuda.synchronize, torch_checksum, None


def unet_model(torch, nn):
    """A small diffusion UNet: 64x64 input, levels of 32, 64 and 128 channels, one residual block
    a level (GroupNorm, SiLU, 3x3 convolutions, the timestep embedding added), strided-conv down,
    nearest-upsample-and-conv up, skip connections concatenated."""
    import math
    import torch.nn.functional as F
    tdim = 128

    class Res(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
            self.t = nn.Linear(tdim, cout)
            self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, temb):
            h = self.c1(F.silu(self.n1(x)))
            h = h + self.t(F.silu(temb))[:, :, None, None]
            h = self.c2(F.silu(self.n2(h)))
            return h + self.skip(x)

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.time = nn.Sequential(nn.Linear(32, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
            self.inc = nn.Conv2d(3, 32, 3, padding=1)
            self.d0, self.d1, self.d2 = Res(32, 32), Res(32, 64), Res(64, 128)
            self.down0, self.down1 = nn.Conv2d(32, 32, 3, 2, 1), nn.Conv2d(64, 64, 3, 2, 1)
            self.mid = Res(128, 128)
            self.u2, self.u1, self.u0 = Res(256, 128), Res(192, 64), Res(96, 32)
            self.up2, self.up1 = nn.Conv2d(128, 128, 3, padding=1), nn.Conv2d(64, 64, 3, padding=1)
            self.out_norm, self.out = nn.GroupNorm(8, 32), nn.Conv2d(32, 3, 3, padding=1)

        def forward(self, x, t):
            half = 16
            freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=x.device, dtype=torch.float32) / half)
            args = t.float()[:, None] * freqs[None]
            temb = self.time(torch.cat([args.sin(), args.cos()], dim=-1))
            h = self.inc(x)
            s0 = self.d0(h, temb)
            s1 = self.d1(self.down0(s0), temb)
            s2 = self.d2(self.down1(s1), temb)
            h = self.mid(s2, temb)
            h = self.u2(torch.cat([h, s2], 1), temb)
            h = self.up2(F.interpolate(h, scale_factor=2.0, mode="nearest"))
            h = self.u1(torch.cat([h, s1], 1), temb)
            h = self.up1(F.interpolate(h, scale_factor=2.0, mode="nearest"))
            h = self.u0(torch.cat([h, s0], 1), temb)
            return self.out(F.silu(self.out_norm(h)))
    return UNet()


def build_unet():
    """One denoising step of the UNet at batch 1, 64x64, eager: eps = unet(x_t, t), then the DDPM
    update of x_t to x_(t-1) (without the noise term)."""
    import torch
    from torch import nn
    dev = torch_device()

    def make():
        torch.manual_seed(0)
        model = unet_model(torch, nn).to(dev).eval()
        x = torch.randn(1, 3, 64, 64, device=dev)
        t = torch.tensor([500], device=dev)
        beta, alpha_bar = 0.01, 0.2
        c_eps, c_out = beta / (1.0 - alpha_bar) ** 0.5, 1.0 / (1.0 - beta) ** 0.5

        def step():
            with torch.no_grad():
                eps = model(x, t)
                return (x - c_eps * eps) * c_out
        return step
    return make(), torch.cuda.synchronize, torch_checksum, lambda: manual_graph(torch, make())


def build_rl_loop():
    """A small RL loop on the GPU: 256 CartPole environments (the classic dynamics, Euler steps,
    reset where an episode ends) stepped in torch ops, a policy MLP (4-64-64-2, tanh), actions
    sampled from its softmax with a seeded CUDA generator, the observations written to a rollout
    buffer of 64 steps at a device-side index. One step = policy + environment step."""
    import math
    import torch
    from torch import nn
    dev = torch_device()
    n, horizon = 256, 64
    gravity, mcart, mpole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    total, pml = mcart + mpole, mpole * length
    th_limit, x_limit = 12 * 2 * math.pi / 360, 2.4

    def make():
        torch.manual_seed(0)
        policy = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2)).to(dev)
        gen = torch.Generator(device=dev)
        gen.manual_seed(7)
        s = (torch.rand(n, 4, device=dev, generator=gen) - 0.5) * 0.1
        ep_ret = torch.zeros(n, device=dev)
        last_ret = torch.zeros(n, device=dev)
        buf = torch.zeros(horizon, n, 4, device=dev)
        idx = torch.zeros(1, dtype=torch.long, device=dev)

        def step():
            with torch.no_grad():
                probs = torch.softmax(policy(s), dim=-1)
                u = torch.rand(n, device=dev, generator=gen)
                force = torch.where(u < probs[:, 1], force_mag, -force_mag)
                x, x_dot, th, th_dot = s.unbind(1)
                costh, sinth = torch.cos(th), torch.sin(th)
                temp = (force + pml * th_dot * th_dot * sinth) / total
                th_acc = (gravity * sinth - costh * temp) / (length * (4.0 / 3.0 - mpole * costh * costh / total))
                x_acc = temp - pml * th_acc * costh / total
                new = torch.stack([x + tau * x_dot, x_dot + tau * x_acc, th + tau * th_dot, th_dot + tau * th_acc], 1)
                done = (new[:, 0].abs() > x_limit) | (new[:, 2].abs() > th_limit)
                reset = (torch.rand(n, 4, device=dev, generator=gen) - 0.5) * 0.1
                s.copy_(torch.where(done[:, None], reset, new))
                ep_ret.add_(1.0)
                last_ret.copy_(torch.where(done, ep_ret, last_ret))
                ep_ret.masked_fill_(done, 0.0)
                buf.index_copy_(0, idx, s[None])
                idx.add_(1).remainder_(horizon)
                return torch.cat([s.flatten(), last_ret, buf.flatten()])
        return step, gen

    step, _ = make()

    def make_graph():
        gstep, gen = make()
        return manual_graph(torch, gstep, generators=(gen,))
    return step, torch.cuda.synchronize, torch_checksum, make_graph


def poisson_csr(cp, sparse, side):
    """The 5-point 2-D Poisson matrix of a side x side grid (4 on the diagonal, -1 to each
    neighbour), built as CSR arrays on the host and copied to the device."""
    import numpy as np
    n = side * side
    idx = np.arange(n)
    i, j = idx // side, idx % side
    cols = np.stack([idx - side, idx - 1, idx, idx + 1, idx + side], axis=1)
    vals = np.broadcast_to(np.array([-1.0, -1.0, 4.0, -1.0, -1.0], dtype=np.float32), cols.shape)
    keep = np.stack([i > 0, j > 0, np.ones(n, dtype=bool), j < side - 1, i < side - 1], axis=1)
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int32)
    return sparse.csr_matrix((cp.asarray(vals[keep]), cp.asarray(cols[keep].astype(np.int32)), cp.asarray(indptr)),
                             shape=(n, n))


def build_cupy_solver():
    """Conjugate gradient in CuPy, as the CUDA samples' conjugateGradient does it with cuSPARSE and
    cuBLAS: on a cupyx.scipy.sparse CSR Poisson matrix (a 256x256 grid, 65,536 unknowns), float32,
    20 iterations a step from x = 0, on a stream of its own. The dot products stay on the device as
    0-d arrays and alpha, beta are computed there: no host synchronisation inside a step."""
    import numpy as np
    import cupy as cp
    import cupyx.scipy.sparse as sparse
    cp.cuda.Device(0).use()
    stream = cp.cuda.Stream(non_blocking=True)
    side, iters = 256, 20
    n = side * side
    axpy = cp.ElementwiseKernel("T a, T x", "T y", "y += a * x", "encore_cg_axpy")
    naxpy = cp.ElementwiseKernel("T a, T x", "T y", "y -= a * x", "encore_cg_naxpy")
    xpby = cp.ElementwiseKernel("T x, T b", "T y", "y = x + b * y", "encore_cg_xpby")
    with stream:
        A = poisson_csr(cp, sparse, side)
        b = cp.asarray(np.sin(np.arange(n, dtype=np.float64) * 0.001).astype(np.float32) + 1.0)
        x, r, p = (cp.zeros(n, dtype=cp.float32) for _ in range(3))
    stream.synchronize()

    def step():
        with stream:
            x.fill(0)
            cp.copyto(r, b)  # r = b - A x, x = 0
            r1 = cp.dot(r, r)
            r0 = None
            for k in range(iters):
                if k == 0:
                    cp.copyto(p, r)
                else:
                    xpby(r, r1 / r0, p)  # p = r + beta p
                ap = A.dot(p)
                alpha = r1 / cp.dot(p, ap)
                axpy(alpha, p, x)
                naxpy(alpha, ap, r)
                r0, r1 = r1, cp.dot(r, r)
        return x

    def checksum(v):
        return digest(cp.asnumpy(v).tobytes())
    return step, stream.synchronize, checksum, None


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
    "mlp-graphs": lambda: build_compiled("mlp", False, own_graphs=True),
    "transformer-graphs": lambda: build_compiled("transformer", False, own_graphs=True),
    "jax-jit": build_jax_jit,
    "hf-generate": build_hf_generate,
    "serve-varbatch": build_serve_varbatch,
    "serve-fixed": lambda: build_serve_varbatch(fixed=32),
    "ddp-1gpu": build_ddp_1gpu,
    "unet-step": build_unet,
    "rl-loop": build_rl_loop,
    "cupy-solver": build_cupy_solver,
}


def run(args):
    name = args.workload
    steps = args.steps or DEFAULT_STEPS[name]
    note(f"{name}: building (encore switch {'found' if encore_switch.available() else 'absent'})")
    if "B" in args.schedule and not encore_switch.skiplaunch_available():
        raise RuntimeError("B blocks need libskiplaunch.so preloaded with SKIPLAUNCH_SWITCH=1")
    step, sync, checksum_of, make_graph = BUILDERS[name]()
    if make_graph is None:
        note(f"{name}: no graph mode of its own (G blocks are left out)")
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
            gstep = make_graph() if make_graph is not None else None
            sync()
            mem_graph = used_mb() - mem_warm
            if gstep is not None:
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
        encore_switch.set_block(state)
        fn = gstep if state == "G" else step
        t0_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, the clock of tests/bench/timeline.c
        for _ in range(steps):
            fn()
            sync()
        t1_ns = time.monotonic_ns()
        us = (t1_ns - t0_ns) / steps / 1e3
        per.append(us)
        print(f"BLOCK workload={name} i={b} state={state} steps={steps} us_per_step={us:.3f} t0_ns={t0_ns} t1_ns={t1_ns}",
              flush=True)
    encore_switch.set_block("A")
    print(f"RESULT workload={name} status=ok checksum={csum} us_per_step={statistics.median(per):.3f} "
          f"blocks={args.blocks} steps={steps} warmup_s={warm_s:.1f} switch={int(encore_switch.available())} "
          f"bound_switch={int(encore_switch.skiplaunch_available())} "
          f"total_steps={args.warmup + args.check_steps + args.blocks * steps} "
          f"mem_start_mb={mem_start:.1f} mem_warm_mb={mem_warm:.1f} mem_graph_mb={mem_graph:.1f}"
          + (f" graph_error={graph_error}" if graph_error else "")
          + "".join(f" {k}={re.sub(r'[^A-Za-z0-9_.:+-]+', '_', str(v))[:160]}" for k, v in RESULT_EXTRA.items()),
          flush=True)


def start_watchdog(workload, seconds):
    """Past `seconds`, whatever the process is doing (a compile, an NCCL rendezvous, a teardown):
    every thread's stack to stderr, a RESULT line with status=error, exit 1. A daemon thread, so a
    process that ends in time is not held up by it."""
    if seconds <= 0:
        return

    def fire():
        try:
            import faulthandler
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        except Exception:
            pass
        print(f"RESULT workload={workload} status=error error=watchdog:no_end_within_{seconds:.0f}s", flush=True)
        os._exit(1)
    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", required=True, choices=sorted(BUILDERS))
    ap.add_argument("--schedule", default="E", help="block letters, cycled: E, P, A, G, B, T (default E)")
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--steps", type=int, default=None, help="steps per block (default per workload)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--check-steps", type=int, default=5)
    args = ap.parse_args()
    if not re.fullmatch(r"[EPAGBT]+", args.schedule):
        ap.error("--schedule takes the letters E, P, A, G, B and T")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    start_watchdog(args.workload, float(os.environ.get("BENCH_WATCHDOG_S", "540")))
    try:  # a crash in native code (a driver, NCCL, XLA) leaves its Python stack in stderr
        import faulthandler
        faulthandler.enable(file=sys.stderr)
    except Exception:
        pass
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
