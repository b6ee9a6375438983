"""Two-GPU probe for issue 15: DDP training of a small MLP over NCCL.

    torchrun --nproc-per-node 2 tests/gpu/prog_ddp_probe.py [--steps N]

Fixed seeds, random data generated on each rank, batch 32, Adam. Rank 0
prints the loss every 10 steps and a checksum of the final weights (their
float bits summed), so two runs can be compared byte for byte. Nothing is
downloaded."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    torch.manual_seed(1234)
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256))],
                          nn.Linear(256, 10)).cuda()
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    g = torch.Generator(device="cuda").manual_seed(100 + rank)
    for step in range(args.steps):
        x = torch.randn(32, 256, device="cuda", generator=g)
        y = torch.randint(0, 10, (32,), device="cuda", generator=g)
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if rank == 0 and step % 10 == 0:
            print(f"step {step} loss {loss.item():.9f}", flush=True)
    torch.cuda.synchronize()
    if rank == 0:
        bits = sum(int(p.detach().float().view(torch.int32).to(torch.int64).sum().item()) for p in model.parameters())
        print(f"weights checksum {bits}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
