/* Launches the driver refuses, made where encore holds and replays a hot
 * sequence: each call must return exactly what the driver returns for it
 * (encore validates what it holds, or issues it eagerly), nothing refused may
 * run, and nothing may hang.
 *
 * The hot sequence is mix, stamp (with dynamic shared memory above the
 * default limit, after raising the function's
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), add. After it is hot, one
 * iteration per case launches stamp refused:
 *   grid       a grid beyond the device's limit (gridDimY 70000)
 *   block      a block beyond the device's limit (2048 threads)
 *   bad-func   a handle that is no function
 *   unloaded   a function of a module unloaded since
 *   smem       the function's dynamic shared memory limit lowered below what
 *              the launch asks (its structure is that of the captured graph,
 *              so encore holds it)
 *   both-forms its parameters given both ways: kernelParams and an `extra`
 *              buffer (the driver refuses both at once; from kernelParams
 *              alone it is the hot launch)
 *   null-param a NULL among kernelParams
 *   null-size  an `extra` buffer whose size pointer is NULL
 *   null-attrs cuLaunchKernelEx with one attribute counted and no array
 * Every return code and every synchronisation's is printed, and the data
 * after each iteration.
 *
 *   prog_launch_errors CASE[,CASE...]|all|eager   (all: every case, smem last;
 *                                                  eager: all but smem and both-forms,
 *                                                  which encore holds) */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define SMEM 50000u

static prog_kernels k;
static CUstream s;
static CUdeviceptr x, y;

static int is_form(const char *refuse)
{
    return !strcmp(refuse, "both-forms") || !strcmp(refuse, "null-param") || !strcmp(refuse, "null-size") ||
           !strcmp(refuse, "null-attrs");
}

/* The stamp launch with its arguments in a form the driver refuses. */
static CUresult stamp_forms(const char *refuse, unsigned gy, unsigned block, void **ps)
{
    unsigned char buf[12];
    size_t size = sizeof buf;
    memcpy(buf, ps[0], sizeof(CUdeviceptr));
    memcpy(buf + 8, ps[1], sizeof(uint32_t));
    int null_size = !strcmp(refuse, "null-size");
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, null_size ? NULL : &size,
                     CU_LAUNCH_PARAM_END};
    if (!strcmp(refuse, "null-attrs")) {
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = PROG_GRID(N);
        cfg.gridDimY = gy;
        cfg.gridDimZ = 1;
        cfg.blockDimX = block;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.sharedMemBytes = SMEM;
        cfg.hStream = s;
        cfg.numAttrs = 1; /* and attrs NULL */
        return drv.cuLaunchKernelEx(&cfg, k.stamp, ps, NULL);
    }
    void *with_null[] = {ps[0], NULL};
    void **params = !strcmp(refuse, "both-forms") ? ps : !strcmp(refuse, "null-param") ? with_null : NULL;
    return drv.cuLaunchKernel(k.stamp, PROG_GRID(N), gy, 1, block, 1, 1, SMEM, s, params,
                              !strcmp(refuse, "null-param") ? NULL : extra);
}

static void iteration(const char *label, const char *refuse)
{
    uint32_t n = N, salt = 5;
    void *pm[] = {&x, &salt, &n}, *ps[] = {&y, &n}, *pa[] = {&y, &x, &n};
    CUfunction stamp = k.stamp;
    unsigned gy = 1, block = PROG_BLOCK;
    int dummy = 0;
    prog_kernels gone;
    if (!strcmp(refuse, "grid"))
        gy = 70000;
    else if (!strcmp(refuse, "block"))
        block = 2048;
    else if (!strcmp(refuse, "bad-func"))
        stamp = (CUfunction)(void *)&dummy;
    else if (!strcmp(refuse, "unloaded")) {
        prog_kernels_load(&gone, 1);
        stamp = gone.stamp;
        CK(drv.cuModuleUnload(gone.mod));
    } else if (!strcmp(refuse, "smem"))
        CK(drv.cuFuncSetAttribute(k.stamp, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
    printf("%-9s mix %s", label, prog_err_name(prog_launch_rc(k.mix, PROG_GRID(N), PROG_BLOCK, 0, s, pm)));
    prog_count_launch();
    CUresult r = is_form(refuse) ? stamp_forms(refuse, gy, block, ps)
                                 : drv.cuLaunchKernel(stamp, PROG_GRID(N), gy, 1, block, 1, 1, SMEM, s, ps, NULL);
    printf(" stamp %s", prog_err_name(r));
    printf(" add %s", prog_err_name(prog_launch_rc(k.add, PROG_GRID(N), PROG_BLOCK, 0, s, pa)));
    printf(" synchronize %s", prog_err_name(drv.cuStreamSynchronize(s)));
    printf(" y %016llx\n", (unsigned long long)prog_hash_dev(s, y, N));
    if (!strcmp(refuse, "smem"))
        CK(drv.cuFuncSetAttribute(k.stamp, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)SMEM));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a hang under encore still shows how far the program got */
    if (argc != 2)
        prog_die("usage: prog_launch_errors CASE[,CASE...]|all|eager");
    const char *cases = !strcmp(argv[1], "all")     ? "grid,block,bad-func,unloaded,both-forms,null-param,null-size,null-attrs,smem"
                        : !strcmp(argv[1], "eager") ? "grid,block,bad-func,unloaded,null-param,null-size,null-attrs"
                                                    : argv[1];
    prog_init();
    prog_kernels_load(&k, 0);
    CK(drv.cuFuncSetAttribute(k.stamp, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)SMEM));
    s = prog_stream(CU_STREAM_NON_BLOCKING);
    x = prog_alloc(N);
    y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    for (int it = 0; it < 8; it++)
        iteration("hot", "");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", cases);
    char *save = NULL;
    for (char *c = strtok_r(buf, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        iteration(c, c);
        for (int it = 0; it < 3; it++)
            iteration("hot", "");
    }
    prog_report_launches();
    return 0;
}
