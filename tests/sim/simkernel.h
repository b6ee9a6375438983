/* Kernels for the simulated driver (tests only).
 *
 * The simulated libcuda.so.1 runs "kernels" as host functions on the stream's
 * worker thread. A module image passed to cuModuleLoadData / cuLibraryLoadData
 * is the text "simcuda:<path>": <path> is a shared object holding the kernels,
 * or empty for the main program (which must then be linked with -rdynamic).
 * cuModuleGetFunction(&f, mod, "axpy") looks up the exported descriptor
 * `simcuda_kernel_axpy` defined with SIMCUDA_KERNEL below. Parameters are laid
 * out like a real kernel's: each at its natural alignment, and
 * cuFuncGetParamInfo reports the offsets and sizes.
 *
 *   static void axpy_body(const simcuda_dims *d, void **args) {
 *       float a = *(float *)args[0]; float *x = *(float **)args[1]; ...
 *   }
 *   SIMCUDA_KERNEL(axpy, axpy_body, sizeof(float), sizeof(float *), sizeof(float *), sizeof(int));
 *
 * Device pointers are host pointers in the simulation, so a kernel body
 * dereferences them directly.
 *
 * Parameter layout: parameter i sits at the next offset aligned to its
 * natural alignment, taken as the largest power of two dividing its size, at
 * most 8 (so a float then a pointer gives offsets 0 and 8).
 *
 * Common kernels: tests/sim/kernels_common.c builds libsimkernels.so into
 * ${ENCORE_SIM_DIR} (fill_u32, add_u32, axpy_f32, scale_add_u32, copy_u32,
 * hash_mix, spin_flag_set, sleep_us, fault_u32; parameters documented there).
 * A kernel "faults" by calling simcuda_device_fault(code) (exported by the
 * simulated libcuda.so.1; reach it with dlopen("libcuda.so.1", RTLD_NOLOAD)
 * and dlsym): the context takes `code` as its sticky error. Its
 * absolute path is in the CMake variable ENCORE_SIMKERNELS_PATH; tests get it
 * as a define and load it with
 *   target_compile_definitions(t PRIVATE SIMKERNELS_PATH="${ENCORE_SIMKERNELS_PATH}")
 *   cuModuleLoadData(&mod, "simcuda:" SIMKERNELS_PATH);
 *   cuModuleGetFunction(&fill, mod, "fill_u32");
 *
 * Environment of the simulated driver:
 *   SIMCUDA_JITTER=0|1|<seed>  0: no delays. 1 or a seed: before every op the
 *                              worker sleeps 0-50 us (random, seeded). Unset:
 *                              a quarter of ops sleep 0-20 us.
 *   SIMCUDA_STATS=1            at exit, print to stderr
 *                              "simcuda: kernels=<N> graph_launches=<G> graph_kernels=<K>"
 *                              N: kernel bodies run (eager and in graphs),
 *                              G: graph launches run, K: kernel nodes run;
 *                              and "simcuda: faults=<F> priority_kernels=<P>
 *                              priority_sum=<S> graph_execs_live=<E>": kernels
 *                              that faulted, kernels run at a priority other
 *                              than 0 and the sum of their priorities,
 *                              executable graphs not destroyed at exit.
 *   SIMCUDA_FAIL_CAPTURE=1     cuStreamEndCapture fails with
 *                              CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (a value
 *                              > 1 is used as the CUresult to return).
 *   SIMCUDA_FAIL_CAPTURE_AFTER=N  the same for every capture after the
 *                              first N (which succeed).
 *   SIMCUDA_FAIL_INSTANTIATE=1 cuGraphInstantiate* fail with
 *                              CUDA_ERROR_INVALID_VALUE (> 1: that CUresult).
 *   SIMCUDA_FAIL_NODE_DEPS=1   cuGraphNodeGetDependencies (with edge data or
 *                              without) fails with CUDA_ERROR_LOSSY_QUERY (> 1:
 *                              that CUresult): a graph's nodes cannot be
 *                              walked as a chain.
 *   SIMCUDA_FAIL_EXEC_SET_PARAMS=1  every update of an executable graph's
 *                              node (cuGraphExec{Kernel,Memcpy,Memset}NodeSetParams*,
 *                              cuGraphExecEvent{Record,Wait}NodeSetEvent) fails
 *                              with CUDA_ERROR_INVALID_VALUE (> 1: that CUresult).
 *   SIMCUDA_VERBOSE=1          explain module load failures on stderr.
 *   SIMCUDA_TEARDOWN_AT_EXIT=0 no teardown at exit (by default the driver
 *                              drains the primary context and refuses every
 *                              call with CUDA_ERROR_DEINITIALIZED from an
 *                              atexit handler registered by the first cuInit).
 * In a process forked after cuInit, calls fail with CUDA_ERROR_NOT_INITIALIZED,
 * as the driver's do.
 *
 * Semantics follow a real driver where they were checked: tests/sim/sim_probe.c
 * asks a driver about capture rules, implicit synchronisation, events recorded
 * in captures, cuGetProcAddress variants and launch validation; the test
 * sim.probe requires the simulator's answers to equal those of an H100 with
 * driver 580.159.04 (sim_probe.driver580.txt); its rules section (capture
 * modes with fork/join, sticky errors, attribute limits at launch and graph
 * launch, module unload, primary-context reset) is compared with expected
 * answers not yet recorded on a GPU, the guessed ones marked
 * (sim_probe.rules.expected.txt). Not simulated: the 32-bit
 * CUDA 2.x entry points (cuMemAlloc without _v2, ...), arrays, textures,
 * 2D/3D copies, memory pools, module globals (cuModuleGetGlobal answers
 * CUDA_ERROR_NOT_FOUND), peer/multi-device, green contexts, memcpy nodes added
 * with cuGraphAddMemcpyNode, cuGraphLaunch into a capturing stream (refused).
 * Memory of graph allocations (cuMemAllocAsync while capturing) is never
 * given back.
 * Tests linked against the simulator may also call simcuda_get_stats(), the
 * counters behind SIMCUDA_STATS (exported by libcuda.so.1; find it with
 * dlsym(RTLD_DEFAULT, "simcuda_get_stats")). */
#ifndef SIMCUDA_KERNEL_H
#define SIMCUDA_KERNEL_H

#include <stddef.h>

typedef struct simcuda_dims {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    unsigned cluster[3]; /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION of the launch; 0, 0, 0 without one */
} simcuda_dims;

typedef void (*simcuda_kernel_fn)(const simcuda_dims *dims, void **args);

#define SIMCUDA_MAX_PARAMS 32

typedef struct simcuda_kernel_desc {
    simcuda_kernel_fn fn;
    int nparams;
    size_t sizes[SIMCUDA_MAX_PARAMS];
} simcuda_kernel_desc;

#define SIMCUDA_NARGS_(...) (sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t))
#define SIMCUDA_KERNEL(name, body, ...)                                        \
    __attribute__((visibility("default"))) const simcuda_kernel_desc           \
        simcuda_kernel_##name = {body, (int)SIMCUDA_NARGS_(__VA_ARGS__), {__VA_ARGS__}}
#define SIMCUDA_KERNEL0(name, body)                                            \
    __attribute__((visibility("default"))) const simcuda_kernel_desc           \
        simcuda_kernel_##name = {body, 0, {0}}

typedef void (*simcuda_get_stats_fn)(unsigned long long *kernels, unsigned long long *graph_launches,
                                    unsigned long long *graph_kernels);

#endif
