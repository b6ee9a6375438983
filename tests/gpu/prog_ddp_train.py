"""Issue 15: DDP training over NCCL, compared bit for bit with and without encore.

    torchrun --nproc-per-node 2 tests/gpu/prog_ddp_train.py --model mlp|transformer [--steps N]

Fixed seeds, random data generated on each rank (nothing downloaded), Adam.
Every rank writes (to OUT.rank<r> with --out; else rank 0 prints) its loss
every 10 steps and, at the end, a SHA-256 of its final weights' bytes (DDP keeps the ranks' weights equal: both lines must
agree across ranks and runs). The steps per second (after 20 warm-up steps)
go to stderr, so stdout compares byte for byte.

With --blocks K (and encore preloaded), the steps after the warm-up run in
blocks of K, encore switched on and off through its in-process switch
(tests/bench/encore_switch.py) in the order ABBA ABBA ... on every rank at the
same steps, each block timed between two synchronisations: the ratio of
adjacent on/off blocks (on / off: below 1 is faster) is free of the
process-to-process noise that separate runs carry. Results do not depend on
the switch (encore keeps them bit-identical), so the lines compared stay the
same."""
import argparse
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import encore_switch  # noqa: E402  (a no-op without encore)


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
    ap.add_argument("--blocks", type=int, default=0, help="alternate encore on/off in blocks of this many steps")
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
    blocks = []  # (on, seconds)
    tb = None
    for step in range(args.steps):
        if step == 20:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        if args.blocks and step >= 20 and (step - 20) % args.blocks == 0:
            torch.cuda.synchronize()
            now = time.perf_counter()
            if tb is not None:
                blocks.append((on, now - tb))
            k = (step - 20) // args.blocks
            on = (k % 4) in (0, 3)  # ABBA
            encore_switch.set_active(on)
            tb = now
        x = torch.randn(*shape, device="cuda", generator=g)
        y = torch.randint(0, 10, (32,), device="cuda", generator=g)
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            say(f"rank {rank} step {step} loss {loss.item():.9f}")
    torch.cuda.synchronize()
    encore_switch.set_active(True)
    if len(blocks) >= 2:
        pairs = [blocks[i][1] / blocks[i + 1][1] if blocks[i][0] else blocks[i + 1][1] / blocks[i][1]
                 for i in range(0, len(blocks) - 1, 2)]
        pairs.sort()
        mid = pairs[len(pairs) // 2] if len(pairs) % 2 else (pairs[len(pairs) // 2 - 1] + pairs[len(pairs) // 2]) / 2
        print(f"paired_ratio={mid:.4f} pairs={len(pairs)} min={pairs[0]:.4f} max={pairs[-1]:.4f} "
              f"switch={int(encore_switch.available())} rank={rank} model={args.model} "
              f"ratios={','.join(f'{p:.4f}' for p in pairs)}", file=sys.stderr, flush=True)
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
