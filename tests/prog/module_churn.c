/* A plug-in style loop: every iteration a module is loaded, one of its
 * kernels runs once on a side stream, and the module is unloaded, while an
 * unrelated hot sequence with the main module's kernels runs on another
 * stream. An unload may drop only what belongs to the unloaded module: the
 * unrelated stream's graphs survive and it keeps replaying; and what encore
 * keeps per module is freed, so memory stays bounded (the program reports its
 * RSS).
 *
 * The code loaded each iteration is a module (cuModuleLoadData, a CUfunction
 * of it), or a library: its kernel launched as a CUkernel ("library"), or
 * the CUfunction cuKernelGetFunction gives for it ("library-function").
 *
 *   prog_module_churn [iterations (default 5000)] [module|library|library-function] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256u

enum code { MODULE, LIBRARY, LIBRARY_FUNCTION };

/* Load the code, launch its "mix" once on t, unload it. */
static void load_launch_unload(enum code how, CUstream t, CUdeviceptr z, uint32_t salt)
{
    uint32_t n = N;
    void *p[] = {&z, &salt, &n};
    char image[4096];
    snprintf(image, sizeof image, "simcuda:%s", prog_kernels_path(1));
    if (how == MODULE) {
        CUmodule m = prog_module_load(prog_kernels_path(1));
        prog_launch(prog_function(m, "mix"), PROG_GRID(N), PROG_BLOCK, 0, t, p);
        CK(drv.cuStreamSynchronize(t));
        CK(drv.cuModuleUnload(m));
        return;
    }
    CUlibrary lib;
    CUkernel kern;
    CUfunction f;
    CK(drv.cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    CK(drv.cuLibraryGetKernel(&kern, lib, "mix"));
    if (how == LIBRARY)
        f = (CUfunction)(void *)kern;
    else
        CK(drv.cuKernelGetFunction(&f, kern));
    prog_launch(f, PROG_GRID(N), PROG_BLOCK, 0, t, p);
    CK(drv.cuStreamSynchronize(t));
    CK(drv.cuLibraryUnload(lib));
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 5000;
    const char *mode = argc > 2 ? argv[2] : "module";
    enum code how = !strcmp(mode, "library") ? LIBRARY : !strcmp(mode, "library-function") ? LIBRARY_FUNCTION : MODULE;
    if (how == MODULE && strcmp(mode, "module"))
        prog_die("usage: prog_module_churn [iterations] [module|library|library-function]");
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

        load_launch_unload(how, t, z, (uint32_t)it);

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
