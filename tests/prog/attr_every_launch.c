/* Libraries such as CUTLASS and FlashAttention set a function attribute
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before every launch,
 * with the value it already has. The sequence still repeats exactly: encore
 * must keep replaying it (an attribute change invalidates only the graphs
 * holding that function, and one that changes nothing need not even do
 * that).
 *
 *   prog_attr_every_launch [iterations] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 1024u
#define SMEM 50000

static void set_smem(CUfunction f)
{
    CK(drv.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, SMEM));
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 100;
    prog_kernels k;
    CUdeviceptr x, y, r;
    CUstream s = prog_hot_setup(&k, N, &x, &y, &r);
    uint32_t n = N;
    void *ps[] = {&y, &n};
    for (int it = 0; it < iterations; it++) {
        set_smem(k.mix);
        k_mix(&k, s, x, 5, N);
        set_smem(k.add);
        k_add(&k, s, y, x, N);
        set_smem(k.stamp);
        prog_launch(k.stamp, PROG_GRID(N), PROG_BLOCK, SMEM, s, ps);
        set_smem(k.axpy);
        k_axpy(&k, s, x, y, 3, N);
        set_smem(k.reduce);
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "iteration", it);
    }
    prog_finish(s, x, y, N);
    return 0;
}
