/* A function attribute whose launch rules encore does not check (whether
 * non-portable cluster sizes are allowed) changes once, early in a hot loop
 * whose kernels are a CUkernel (a library's "mix", as cudart launches
 * PyTorch's kernels) and CUfunctions (a module's, as cuDNN and cuBLAS
 * launch theirs). A CUkernel and a CUfunction may name the same code, so a
 * change through one kind of handle may concern launches through the other;
 * cuKernelGetFunction says which.
 *
 *   prog_attr_other_kind other-function [iterations]
 *       the change goes to a module function the loop never launches
 *       (cuFuncSetAttribute): the loop goes on replaying
 *   prog_attr_other_kind other-kernel [iterations]
 *       to a library kernel the loop never launches (cuKernelSetAttribute):
 *       the loop goes on replaying
 *   prog_attr_other_kind same-code [iterations]
 *       to the CUfunction cuKernelGetFunction gives for the loop's CUkernel:
 *       the same code, whose launches are not held from then on
 *
 * Issue 28: with torch.use_deterministic_algorithms(True), an attribute
 * cuDNN set on one of its functions stopped every launch of PyTorch's fill
 * kernel from being held, and ResNet-18 replayed nothing. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024u
#define CHANGE_AT 5

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int iterations = argc > 2 ? atoi(argv[2]) : 100;
    if (strcmp(mode, "other-function") && strcmp(mode, "other-kernel") && strcmp(mode, "same-code"))
        prog_die("usage: prog_attr_other_kind other-function|other-kernel|same-code [iterations]");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    char image[4096];
    snprintf(image, sizeof image, "simcuda:%s", prog_kernels_path(1));
    CUlibrary lib;
    CUkernel mix, unused;
    CK(drv.cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    CK(drv.cuLibraryGetKernel(&mix, lib, "mix"));
    CK(drv.cuLibraryGetKernel(&unused, lib, "nop"));

    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    uint32_t n = N, salt = 5;
    void *p[] = {&x, &salt, &n};
    for (int it = 0; it < iterations; it++) {
        if (it == CHANGE_AT) {
            if (!strcmp(mode, "other-function")) {
                CK(drv.cuFuncSetAttribute(k.nop, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
            } else if (!strcmp(mode, "other-kernel")) {
                CK(drv.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, unused, 0));
            } else {
                CUfunction f;
                CK(drv.cuKernelGetFunction(&f, mix));
                CK(drv.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
            }
        }
        prog_launch((CUfunction)(void *)mix, PROG_GRID(N), PROG_BLOCK, 0, s, p);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "iteration", it);
    }
    prog_finish(s, x, y, N);
    CK(drv.cuLibraryUnload(lib));
    return 0;
}
