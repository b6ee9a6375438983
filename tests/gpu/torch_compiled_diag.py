#!/usr/bin/env python3
"""Why does a compiled PyTorch model not replay under encore? (issue 13 diagnosis)

    torch_compiled_diag.py --mode default|cpp_wrapper|reduce-overhead|aoti|eager
                           [--model transformer|mlp] [--feedback] [--steps N]

A stack of 6 transformer blocks (hidden 768, 12 heads, a fixed KV cache of 128,
batch 1, one token per step) or an MLP 8 x (Linear 256, GELU, LayerNorm), random
weights, a host sync per step. --feedback feeds each step's output back as the
next input (a decode loop's shape); otherwise the same input every step.
Prints stage timings on stderr and one RESULT line: median us/step and a checksum.
"""
import argparse, faulthandler, hashlib, os, statistics, sys, time

faulthandler.enable()

T0 = time.perf_counter()


def note(m):
    print(f"diag [{time.perf_counter() - T0:7.2f}s] {m}", file=sys.stderr, flush=True)


def build(kind, dev):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    if kind == "mlp":
        layers = []
        for _ in range(8):
            layers += [nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256)]
        return nn.Sequential(*layers).to(dev).eval(), torch.randn(1, 256, device=dev)

    class Block(nn.Module):
        def __init__(self, h=768, nh=12, past=128):
            super().__init__()
            self.nh, self.hd = nh, h // nh
            self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
            self.qkv = nn.Linear(h, 3 * h)
            self.proj = nn.Linear(h, h)
            self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
            # Parameters, not buffers: AOTInductor's loader crashed on buffer
            # constants (a segfault in aoti_load_package, seen on torch 2.11, H100).
            self.kc = nn.Parameter(torch.randn(1, nh, past, self.hd), requires_grad=False)
            self.vc = nn.Parameter(torch.randn(1, nh, past, self.hd), requires_grad=False)

        def forward(self, x):  # x: [1, 1, h]
            q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
            sh = lambda t: t.view(1, 1, self.nh, self.hd).transpose(1, 2)
            q, k, v = sh(q), sh(k), sh(v)
            K = torch.cat([self.kc, k], dim=2)
            V = torch.cat([self.vc, v], dim=2)
            a = torch.nn.functional.scaled_dot_product_attention(q, K, V)
            x = x + self.proj(a.transpose(1, 2).reshape(1, 1, -1))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(Block() for _ in range(6))
            self.ln = nn.LayerNorm(768)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.ln(x)

    return Stack().to(dev).eval(), torch.randn(1, 1, 768, device=dev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="cpp_wrapper")
    ap.add_argument("--model", default="transformer")
    ap.add_argument("--feedback", action="store_true")
    ap.add_argument("--steps", type=int, default=300)
    a = ap.parse_args()
    import torch
    note(f"torch {torch.__version__} mode={a.mode} model={a.model} feedback={a.feedback}")
    dev = "cuda"
    model, x0 = build(a.model, dev)
    with torch.no_grad():
        if a.mode == "eager":
            fn = model
        elif a.mode == "aoti":
            import torch._inductor as ind
            ep = torch.export.export(model, (x0,))
            note("exported")
            path = os.path.join(os.environ.get("DIAG_TMP", "/tmp"), f"aoti-{a.model}.pt2")
            if not os.path.exists(path):
                ind.aoti_compile_and_package(ep, package_path=path)
            note(f"packaged {path}")
            fn = ind.aoti_load_package(path)
            note("loaded")
        else:
            if a.mode == "cpp_wrapper":  # torch.compile takes mode or options, not both
                fn = torch.compile(model, options={"cpp_wrapper": True})
            else:
                fn = torch.compile(model, mode="reduce-overhead" if a.mode == "reduce-overhead" else "default")
        x = x0.clone()
        for i in range(3):
            y = fn(x)
            torch.cuda.synchronize()
            note(f"warm step {i} done")
        for _ in range(20):
            y = fn(x)
            if a.feedback:
                x = y.clone() if a.mode == "reduce-overhead" else y
            torch.cuda.synchronize()
        x = x0.clone()
        ts = []
        h = hashlib.sha256()
        for i in range(a.steps):
            t = time.perf_counter()
            y = fn(x)
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t)
            if a.feedback:
                x = y.clone() if a.mode == "reduce-overhead" else y
            if i % 50 == 0:
                h.update(y.float().cpu().numpy().tobytes())
        h.update(y.float().cpu().numpy().tobytes())
    print(f"RESULT mode={a.mode} model={a.model} feedback={int(a.feedback)} "
          f"us_per_step={statistics.median(ts) * 1e6:.1f} min_us={min(ts) * 1e6:.1f} "
          f"checksum={h.hexdigest()[:16]}", flush=True)


if __name__ == "__main__":
    main()
