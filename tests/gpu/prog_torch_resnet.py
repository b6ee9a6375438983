"""encore GPU test: torchvision ResNet-18 (weights=None) eval, batch 1, 20 iterations.

Prints checksums; --save PATH torch.saves the logits of every iteration.
"""
import sys

import gpuprog_util as U

ITERS = 20


def main():
    args = U.parse_args(__doc__)
    torch = U.import_torch()
    try:
        import torchvision
    except Exception as e:
        U.skip(f"cannot import torchvision: {e}")

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).cuda().eval()
    gen = torch.Generator().manual_seed(2)
    imgs = torch.randn(ITERS, 1, 3, 224, 224, generator=gen).cuda()
    img = torch.empty(1, 3, 224, 224, device="cuda")
    out = torch.empty(ITERS, 1, 1000, device="cuda")
    with torch.no_grad():
        for it in range(ITERS):
            img.copy_(imgs[it])
            y = model(img)
            out[it].copy_(y)
            if it % 5 == 4 or it == 0:
                print(f"iter {it} logits {U.digest(y)} argmax {int(y.argmax())}")
    torch.cuda.synchronize()
    print(f"final logits {U.digest(out)}")
    U.save({"logits": out.cpu()}, args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
