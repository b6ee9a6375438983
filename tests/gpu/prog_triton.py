"""encore GPU test: Triton kernels (vector add and a fused op) launched in a loop.

Triton launches through cuLaunchKernelEx, which it looks up with plain dlsym.
Prints checksums to stdout; --save PATH torch.saves the outputs.
"""
import sys

import gpuprog_util as U

ITERS = 50
N = 1 << 14
BLOCK = 1024

U.setup_env()
try:
    import triton
    import triton.language as tl
    _TRITON_ERROR = None
except Exception as _e:  # not installed, or broken
    triton = None
    _TRITON_ERROR = _e

if triton is not None:

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)

    @triton.jit
    def fused_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK_SIZE: tl.constexpr):
        # out = (alpha * x + y) * sigmoid(x) * 0.5
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        out = (alpha * x + y) * tl.sigmoid(x) * 0.5
        tl.store(out_ptr + offs, out, mask=mask)


def main():
    args = U.parse_args(__doc__)
    torch = U.import_torch()
    if triton is None:
        U.skip(f"cannot import triton: {_TRITON_ERROR}")

    torch.manual_seed(0)
    a = torch.randn(N, device="cuda")
    b = torch.randn(N, device="cuda")
    c = torch.empty_like(a)
    d = torch.empty_like(a)
    grid = (triton.cdiv(N, BLOCK),)
    history = torch.empty(ITERS, N, device="cuda")

    for it in range(ITERS):
        add_kernel[grid](a, b, c, N, BLOCK_SIZE=BLOCK)
        fused_kernel[grid](c, a, d, 0.5, N, BLOCK_SIZE=BLOCK)
        # the scalar changes every 5th iteration: same kernel, other arguments
        alpha = 0.25 if it % 5 == 4 else 0.75
        fused_kernel[grid](d, b, c, alpha, N, BLOCK_SIZE=BLOCK)
        add_kernel[grid](c, d, a, N, BLOCK_SIZE=BLOCK)
        history[it].copy_(a)
        if it % 10 == 9 or it == 0:
            torch.cuda.synchronize()
            print(f"iter {it} a {U.digest(a)} c {U.digest(c)}")
    torch.cuda.synchronize()
    print(f"final history {U.digest(history)} a {U.digest(a)} d {U.digest(d)}")
    U.save({"history": history.cpu(), "a": a.cpu(), "b": b.cpu(), "c": c.cpu(), "d": d.cpu()}, args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
