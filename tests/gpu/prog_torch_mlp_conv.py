"""encore GPU test: PyTorch MLP 8x(Linear 256, GELU, LayerNorm) and a small conv net.

Forward only: batch 1, eval mode, no_grad, 50 iterations. Inputs are copied
into static buffers and outputs out of the layers' buffers, so every
iteration launches the same kernels with the same arguments (what a
sequence-replaying layer can replay). Prints checksums; --save PATH
torch.saves all outputs.
"""
import sys

import gpuprog_util as U

ITERS = 50


def main():
    args = U.parse_args(__doc__)
    torch = U.import_torch()
    nn = torch.nn

    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(256, 256), nn.GELU(), nn.LayerNorm(256)]
    mlp = nn.Sequential(*layers).cuda().eval()
    conv = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
    ).cuda().eval()

    gen = torch.Generator().manual_seed(1)
    xs = torch.randn(ITERS, 1, 256, generator=gen).cuda()
    imgs = torch.randn(ITERS, 1, 3, 32, 32, generator=gen).cuda()
    x = torch.empty(1, 256, device="cuda")
    img = torch.empty(1, 3, 32, 32, device="cuda")
    out_mlp = torch.empty(ITERS, 1, 256, device="cuda")
    out_conv = torch.empty(ITERS, 1, 10, device="cuda")

    with torch.no_grad():
        for it in range(ITERS):
            x.copy_(xs[it])
            img.copy_(imgs[it])
            y = mlp(x)
            z = conv(img)
            out_mlp[it].copy_(y)
            out_conv[it].copy_(z)
            if it % 10 == 9 or it == 0:
                print(f"iter {it} mlp {U.digest(y)} conv {U.digest(z)}")
    torch.cuda.synchronize()
    print(f"final mlp {U.digest(out_mlp)} conv {U.digest(out_conv)}")
    U.save({"mlp": out_mlp.cpu(), "conv": out_conv.cpu()}, args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
