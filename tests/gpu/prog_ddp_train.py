"""Issue 15: DDP training over NCCL, compared bit for bit with and without encore.

    torchrun --nproc-per-node 2 tests/gpu/prog_ddp_train.py --model mlp|transformer [--steps N]

Fixed seeds, random data generated on each rank (nothing downloaded), Adam.
Every rank writes (to OUT.rank<r> with --out; else rank 0 prints) its loss
every 10 steps and, at the end, a SHA-256 of its final weights' bytes (DDP keeps the ranks' weights equal: both lines must
agree across ranks and runs). The steps per second (after 20 warm-up steps)
go to stderr, so stdout compares byte for byte."""
import argparse
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def make_model(kind):
    if kind == "mlp":
        return nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256))],
                             nn.Linear(256, 10))
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.0, batch_first=True)
    return nn.Sequential(nn.TransformerEncoder(layer, num_layers=2), nn.Flatten(), nn.Linear(16 * 128, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["mlp", "transformer"], default="mlp")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--out", default=None, help="each rank writes its lines to OUT.rank<r> (else rank 0 prints them)")
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    torch.manual_seed(1234)
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    sink = open(f"{args.out}.rank{rank}", "w") if args.out else (sys.stdout if rank == 0 else open(os.devnull, "w"))

    def say(text):
        print(text, file=sink, flush=True)

    model = make_model(args.model).cuda()
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    g = torch.Generator(device="cuda").manual_seed(100 + rank)
    shape = (32, 256) if args.model == "mlp" else (32, 16, 128)
    t0 = None
    for step in range(args.steps):
        if step == 20:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        x = torch.randn(*shape, device="cuda", generator=g)
        y = torch.randint(0, 10, (32,), device="cuda", generator=g)
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            say(f"rank {rank} step {step} loss {loss.item():.9f}")
    torch.cuda.synchronize()
    if t0 is not None:
        print(f"steps_per_s={(args.steps - 20) / (time.perf_counter() - t0):.2f} rank={rank} model={args.model}",
              file=sys.stderr, flush=True)
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    say(f"rank {rank} weights sha256 {h.hexdigest()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
