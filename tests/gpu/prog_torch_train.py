"""encore GPU test: 20-step training loop (MLP + Adam), fixed seed, fixed data.

Prints every step's loss exactly (float.hex and repr); --save PATH
torch.saves the final parameters and the optimizer's moment estimates.
With and without encore the losses and weights must be identical.
"""
import sys

import gpuprog_util as U

STEPS = 20
BATCH = 64


def main():
    args = U.parse_args(__doc__)
    torch = U.import_torch()
    nn = torch.nn
    F = torch.nn.functional

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(64, 256), nn.ReLU(),
        nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256),
        nn.Linear(256, 10),
    ).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    g = torch.Generator(device="cuda")
    g.manual_seed(1234)
    X = torch.randn(4 * BATCH, 64, device="cuda", generator=g)
    Y = torch.randint(0, 10, (4 * BATCH,), device="cuda", generator=g)

    model.train()
    for step in range(STEPS):
        lo = (step % 4) * BATCH
        xb, yb = X[lo:lo + BATCH], Y[lo:lo + BATCH]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        v = loss.item()
        print(f"step {step} loss {v.hex()} {v!r}")
    torch.cuda.synchronize()

    params = {name: p.detach().cpu().clone() for name, p in model.named_parameters()}
    moments = {}
    for i, p in enumerate(model.parameters()):
        st = opt.state[p]
        moments[f"{i}.exp_avg"] = st["exp_avg"].detach().cpu().clone()
        moments[f"{i}.exp_avg_sq"] = st["exp_avg_sq"].detach().cpu().clone()
    print(f"final params {U.digest(*params.values())}")
    U.save({"params": params, "moments": moments}, args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
