/* A plug-in style loop: every iteration a module is loaded, one of its
 * kernels runs once on a side stream, and the module is unloaded, while an
 * unrelated hot sequence with the main module's kernels runs on another
 * stream. An unload may drop only what belongs to the unloaded module: the
 * unrelated stream's graphs survive and it keeps replaying; and what encore
 * keeps per module is freed, so memory stays bounded (the program reports its
 * RSS).
 *
 *   prog_module_churn [iterations (default 5000)] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 256u

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 5000;
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream u = prog_stream(CU_STREAM_NON_BLOCKING), t = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), z = prog_alloc(N);
    k_fill(&k, u, x, 1, N);
    k_fill(&k, u, y, 2, N);
    k_fill(&k, t, z, 3, N);
    CK(drv.cuCtxSynchronize());
    uint32_t host[N];
    for (int it = 0; it < iterations; it++) {
        k_mix(&k, u, x, 5, N);
        k_add(&k, u, y, x, N);
        k_stamp(&k, u, y, N);
        k_axpy(&k, u, x, y, 3, N);

        CUmodule m = prog_module_load(prog_kernels_path(1));
        uint32_t salt = (uint32_t)it, n = N;
        void *p[] = {&z, &salt, &n};
        prog_launch(prog_function(m, "mix"), PROG_GRID(N), PROG_BLOCK, 0, t, p);
        CK(drv.cuStreamSynchronize(t));
        CK(drv.cuModuleUnload(m));

        CK(drv.cuMemcpyDtoHAsync(host, y, sizeof host, u));
        CK(drv.cuStreamSynchronize(u));
        if (it % 100 == 0 || it == iterations - 1)
            printf("iteration %4d y %016llx z %016llx\n", it,
                   (unsigned long long)prog_hash_buf(PROG_HASH_INIT, host, N),
                   (unsigned long long)prog_hash_dev(t, z, N));
    }
    prog_report_launches();
    prog_report_rss();
    return 0;
}
