/* sim_probe: prints how a CUDA driver answers a list of edge cases
 * (capture rules, implicit synchronisation, cuGetProcAddress variants,
 * validation), so the simulator's answers can be compared with a real GPU's:
 *   sim_probe simcuda:/path/libsimkernels.so    (with the simulator's libcuda.so.1)
 *   sim_probe ptx                               (real driver: embedded PTX)
 *   sim_probe <image> rules                     the "rules" section instead:
 *                                               capture modes with fork/join,
 *                                               sticky errors, attribute limits,
 *                                               module unload, context reset
 * The rules section was recorded on an H100 with driver 580 on 2026-11-23
 * (sim_probe.rules.driver580.txt). sim.probe_rules compares the simulator's
 * answers with sim_probe.rules.expected.txt: the recorded answers, except
 * where a comment says the simulator differs and why ("# differs"), and a
 * "# guess" comment where a line was not recorded. Record again with
 *   ./sim_probe ptx rules > sim_probe.rules.driver<version>.txt
 * It loads libcuda.so.1 (or $PROBE_LIBCUDA) with dlopen. The test sim.probe
 * runs it on the simulator and compares with sim_probe.driver580.txt, the
 * output of a real NVIDIA H100 with driver 580.159.04 (CUDA 13.0). After
 * changing this program, regenerate that file on a GPU machine:
 *   cc -I<cuda>/include sim_probe.c -o sim_probe -ldl -lpthread && ./sim_probe ptx */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PTX of (CUDA C, compute_75):
 *   extern "C" __global__ void axpy_f32(float a, const float *x, float *y, unsigned n);
 *   extern "C" __global__ void hash_mix(unsigned *dst, const unsigned *src, unsigned n, unsigned salt);
 *   extern "C" __global__ void sleep_us(unsigned us);  (%globaltimer + __nanosleep)
 * with the bodies of tests/sim/kernels_common.c, one element per thread. */
static const char k_ptx[] =
    "\n"
    ".version 9.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    "	// .globl	axpy_f32\n"
    "\n"
    ".visible .entry axpy_f32(\n"
    "	.param .f32 axpy_f32_param_0,\n"
    "	.param .u64 axpy_f32_param_1,\n"
    "	.param .u64 axpy_f32_param_2,\n"
    "	.param .u32 axpy_f32_param_3\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<2>;\n"
    "	.reg .f32 	%f<5>;\n"
    "	.reg .b32 	%r<6>;\n"
    "	.reg .b64 	%rd<8>;\n"
    "\n"
    "\n"
    "	ld.param.f32 	%f1, [axpy_f32_param_0];\n"
    "	ld.param.u64 	%rd1, [axpy_f32_param_1];\n"
    "	ld.param.u64 	%rd2, [axpy_f32_param_2];\n"
    "	ld.param.u32 	%r2, [axpy_f32_param_3];\n"
    "	mov.u32 	%r3, %ctaid.x;\n"
    "	mov.u32 	%r4, %ntid.x;\n"
    "	mov.u32 	%r5, %tid.x;\n"
    "	mad.lo.s32 	%r1, %r3, %r4, %r5;\n"
    "	setp.ge.u32 	%p1, %r1, %r2;\n"
    "	@%p1 bra 	$L__BB0_2;\n"
    "\n"
    "	cvta.to.global.u64 	%rd3, %rd2;\n"
    "	cvta.to.global.u64 	%rd4, %rd1;\n"
    "	mul.wide.u32 	%rd5, %r1, 4;\n"
    "	add.s64 	%rd6, %rd4, %rd5;\n"
    "	ld.global.f32 	%f2, [%rd6];\n"
    "	add.s64 	%rd7, %rd3, %rd5;\n"
    "	ld.global.f32 	%f3, [%rd7];\n"
    "	fma.rn.f32 	%f4, %f2, %f1, %f3;\n"
    "	st.global.f32 	[%rd7], %f4;\n"
    "\n"
    "$L__BB0_2:\n"
    "	ret;\n"
    "\n"
    "}\n"
    "	// .globl	hash_mix\n"
    ".visible .entry hash_mix(\n"
    "	.param .u64 hash_mix_param_0,\n"
    "	.param .u64 hash_mix_param_1,\n"
    "	.param .u32 hash_mix_param_2,\n"
    "	.param .u32 hash_mix_param_3\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<2>;\n"
    "	.reg .b32 	%r<28>;\n"
    "	.reg .b64 	%rd<8>;\n"
    "\n"
    "\n"
    "	ld.param.u64 	%rd1, [hash_mix_param_0];\n"
    "	ld.param.u64 	%rd2, [hash_mix_param_1];\n"
    "	ld.param.u32 	%r3, [hash_mix_param_2];\n"
    "	ld.param.u32 	%r2, [hash_mix_param_3];\n"
    "	mov.u32 	%r4, %ctaid.x;\n"
    "	mov.u32 	%r5, %ntid.x;\n"
    "	mov.u32 	%r6, %tid.x;\n"
    "	mad.lo.s32 	%r1, %r4, %r5, %r6;\n"
    "	setp.ge.u32 	%p1, %r1, %r3;\n"
    "	@%p1 bra 	$L__BB1_2;\n"
    "\n"
    "	cvta.to.global.u64 	%rd3, %rd1;\n"
    "	mul.wide.u32 	%rd4, %r1, 4;\n"
    "	add.s64 	%rd5, %rd3, %rd4;\n"
    "	cvta.to.global.u64 	%rd6, %rd2;\n"
    "	add.s64 	%rd7, %rd6, %rd4;\n"
    "	ld.global.u32 	%r7, [%rd7];\n"
    "	ld.global.u32 	%r8, [%rd5];\n"
    "	shl.b32 	%r9, %r8, 6;\n"
    "	add.s32 	%r10, %r7, %r9;\n"
    "	shr.u32 	%r11, %r8, 2;\n"
    "	add.s32 	%r12, %r10, %r11;\n"
    "	add.s32 	%r13, %r12, -1640531527;\n"
    "	xor.b32  	%r14, %r13, %r8;\n"
    "	mul.lo.s32 	%r15, %r14, -2048144789;\n"
    "	shr.u32 	%r16, %r15, 13;\n"
    "	xor.b32  	%r17, %r16, %r15;\n"
    "	xor.b32  	%r18, %r1, %r2;\n"
    "	shl.b32 	%r19, %r17, 6;\n"
    "	add.s32 	%r20, %r18, %r19;\n"
    "	shr.u32 	%r21, %r17, 2;\n"
    "	add.s32 	%r22, %r20, %r21;\n"
    "	add.s32 	%r23, %r22, -1640531527;\n"
    "	xor.b32  	%r24, %r23, %r17;\n"
    "	mul.lo.s32 	%r25, %r24, -2048144789;\n"
    "	shr.u32 	%r26, %r25, 13;\n"
    "	xor.b32  	%r27, %r26, %r25;\n"
    "	st.global.u32 	[%rd5], %r27;\n"
    "\n"
    "$L__BB1_2:\n"
    "	ret;\n"
    "\n"
    "}\n"
    "	// .globl	sleep_us\n"
    ".visible .entry sleep_us(\n"
    "	.param .u32 sleep_us_param_0\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<2>;\n"
    "	.reg .b32 	%r<3>;\n"
    "	.reg .b64 	%rd<6>;\n"
    "\n"
    "\n"
    "	ld.param.u32 	%r1, [sleep_us_param_0];\n"
    "	// begin inline asm\n"
    "	mov.u64 %rd3, %globaltimer;\n"
    "	// end inline asm\n"
    "	mul.wide.u32 	%rd2, %r1, 1000;\n"
    "\n"
    "$L__BB2_1:\n"
    "	mov.u32 	%r2, 1000;\n"
    "	// begin inline asm\n"
    "	nanosleep.u32 %r2;\n"
    "	// end inline asm\n"
    "	// begin inline asm\n"
    "	mov.u64 %rd4, %globaltimer;\n"
    "	// end inline asm\n"
    "	sub.s64 	%rd5, %rd4, %rd3;\n"
    "	setp.lt.u64 	%p1, %rd5, %rd2;\n"
    "	@%p1 bra 	$L__BB2_1;\n"
    "\n"
    "	ret;\n"
    "\n"
    "}\n"
    "	// .globl	fault_u32\n"
    ".visible .entry fault_u32(\n"
    "	.param .u64 fault_u32_param_0,\n"
    "	.param .u32 fault_u32_param_1\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<2>;\n"
    "	.reg .b32 	%r<2>;\n"
    "	.reg .b64 	%rd<2>;\n"
    "\n"
    "	ld.param.u64 	%rd1, [fault_u32_param_0];\n"
    "	ld.param.u32 	%r1, [fault_u32_param_1];\n"
    "	setp.eq.s32 	%p1, %r1, 0;\n"
    "	@%p1 bra 	$L__BB3_2;\n"
    "	st.global.u32 	[%rd1], %r1;\n"
    "\n"
    "$L__BB3_2:\n"
    "	ret;\n"
    "\n"
    "}\n"
    "\n"
    "\n";

static void *g_lib;
#define FNS(X) X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxGetCurrent) \
  X(cuModuleLoadData) X(cuModuleGetFunction) X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuFuncGetParamInfo) \
  X(cuLaunchKernel) X(cuGetProcAddress_v2) X(cuGetErrorName) X(cuStreamCreate) X(cuStreamDestroy_v2) \
  X(cuStreamBeginCapture_v2) X(cuStreamEndCapture) X(cuStreamIsCapturing) X(cuCtxSynchronize) \
  X(cuStreamSynchronize) X(cuStreamQuery) X(cuMemsetD32Async) X(cuMemsetD32_v2) X(cuEventCreate) \
  X(cuEventRecord) X(cuEventQuery) X(cuEventSynchronize) X(cuStreamWaitEvent) X(cuStreamAddCallback) \
  X(cuLaunchHostFunc) X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) \
  X(cuGraphDestroy) X(cuGraphExecDestroy) X(cuMemcpyHtoDAsync_v2) X(cuMemcpyHtoD_v2) \
  X(cuThreadExchangeStreamCaptureMode) X(cuGraphGetNodes) X(cuGraphKernelNodeGetParams_v2) \
  X(cuGraphNodeGetType) X(cuEventElapsedTime_v2) X(cuEventDestroy_v2) X(cuCtxCreate_v4) X(cuCtxDestroy_v2) \
  X(cuStreamGetCaptureInfo_v3) X(cuCtxGetApiVersion) X(cuMemAllocHost_v2) X(cuMemFreeHost) \
  X(cuMemcpyDtoHAsync_v2) X(cuGraphExecKernelNodeSetParams_v2) X(cuGraphExecUpdate_v2) X(cuGraphCreate) \
  X(cuGraphAddKernelNode_v2) X(cuStreamGetId) X(cuDriverGetVersion) X(cuEventRecordWithFlags) X(cuGetProcAddress)\
  X(cuLibraryLoadData) X(cuLibraryGetKernel) X(cuModuleUnload) X(cuFuncSetAttribute) X(cuDevicePrimaryCtxReset_v2) \
  X(cuMemsetD32_v2_ptds)
#define DECL(n) static __typeof__(&n) p_##n;
FNS(DECL)

static const char *nm(CUresult rc) {
    const char *s = NULL;
    if (p_cuGetErrorName(rc, &s) != CUDA_SUCCESS || !s) return "?";
    return s;
}
#define R(label, call) printf("%-44s %s\n", label, nm(call))
static const char *st_name(CUstreamCaptureStatus s) {
    return s == CU_STREAM_CAPTURE_STATUS_NONE ? "NONE" : s == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "ACTIVE" : "INVALIDATED";
}
static void status(const char *label, CUstream s) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult rc = p_cuStreamIsCapturing(s, &st);
    printf("%-44s %s %s\n", label, nm(rc), rc ? "-" : st_name(st));
}
static void end(const char *label, CUstream s) {
    CUgraph g = NULL;
    CUresult rc = p_cuStreamEndCapture(s, &g);
    printf("%-44s %s graph=%s\n", label, nm(rc), g ? "yes" : "null");
    if (g) p_cuGraphDestroy(g);
}

static CUfunction f_axpy, f_hash, f_sleep;
static CUresult sleep_us(CUstream s, unsigned us) {
    void *args[] = {&us};
    return p_cuLaunchKernel(f_sleep, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}
static CUdeviceptr gx, gtmp, ys[6];
static CUstream g_nb, g_s2, g_b;
/* each stream writes its own buffer (x is only read), so that the probe has
 * no data races of its own */
static int sidx(CUstream s) {
    return s == g_nb ? 1 : s == g_s2 ? 2 : s == g_b ? 3 : s == CU_STREAM_PER_THREAD ? 4 : s ? 5 : 0;
}
static CUresult axpy(CUstream s) {
    float a = 2.0f;
    unsigned n = 256;
    void *args[] = {&a, &gx, &ys[sidx(s)], &n};
    return p_cuLaunchKernel(f_axpy, 1, 1, 1, 256, 1, 1, 0, s, args, NULL);
}

typedef struct { CUcontext ctx; int relaxed; CUresult rc; CUstream end_stream; } thr_arg;
static void *other_thread_alloc(void *p) {
    thr_arg *a = p;
    p_cuCtxSetCurrent(a->ctx);
    if (a->relaxed) {
        CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
        p_cuThreadExchangeStreamCaptureMode(&m);
    }
    CUdeviceptr d = 0;
    a->rc = p_cuMemAlloc_v2(&d, 64);
    if (d) p_cuMemFree_v2(d);
    return NULL;
}
static void *other_thread_end(void *p) {
    thr_arg *a = p;
    p_cuCtxSetCurrent(a->ctx);
    CUgraph g = NULL;
    a->rc = p_cuStreamEndCapture(a->end_stream, &g);
    if (g) p_cuGraphDestroy(g);
    return NULL;
}
static void other(const char *label, CUcontext ctx, int relaxed) {
    thr_arg a = {ctx, relaxed, CUDA_SUCCESS, NULL};
    pthread_t t;
    pthread_create(&t, NULL, other_thread_alloc, &a);
    pthread_join(t, NULL);
    R(label, a.rc);
}
static void *other_thread_ctxsync(void *p) {
    thr_arg *a = p;
    p_cuCtxSetCurrent(a->ctx);
    if (a->relaxed) {
        CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
        p_cuThreadExchangeStreamCaptureMode(&m);
    }
    a->rc = p_cuCtxSynchronize();
    return NULL;
}
static void CUDA_CB cb(CUstream h, CUresult st, void *ud) { (void)h; (void)st; (void)ud; }
static void host(void *ud) { (void)ud; }

static const char *which(void *p) {
    static const char *sfx[] = {"", "_v2", "_v3", "_v4", "_ptsz", "_ptds", "_v2_ptsz", "_v2_ptds", "_v3_ptsz", NULL};
    static const char *extra[] = {"cuGraphInstantiateWithFlags", NULL};
    static char buf[160];
    Dl_info di;
    if (!p) return "NULL";
    if (dladdr(p, &di) && di.dli_sname && di.dli_saddr == p) {
        snprintf(buf, sizeof buf, "%s", di.dli_sname);
        return buf;
    }
    (void)sfx; (void)extra;
    return "(not an exported symbol)";
}

static int probe_rules(CUcontext ctx, CUdevice dev, CUmodule mod, const char *image);

static void gpa(const char *name, int ver, unsigned long long flags) {
    void *p = NULL;
    CUdriverProcAddressQueryResult st = 9;
    CUresult rc = p_cuGetProcAddress_v2(name, &p, ver, flags, &st);
    printf("gpa %-28s %5d f%llu %-22s st=%d %s\n", name, ver, flags, nm(rc), (int)st, which(p));
}

int main(int argc, char **argv) {
    const char *lib = getenv("PROBE_LIBCUDA") ? getenv("PROBE_LIBCUDA") : "libcuda.so.1";
    g_lib = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!g_lib) { fprintf(stderr, "dlopen %s: %s\n", lib, dlerror()); return 2; }
#define LOAD(n) p_##n = (__typeof__(&n))dlsym(g_lib, #n); if (!p_##n) { fprintf(stderr, "missing %s\n", #n); return 2; }
    FNS(LOAD)
    const char *image = (argc > 1 && strncmp(argv[1], "simcuda:", 8) == 0) ? argv[1] : k_ptx;
    int rules = argc > 2 && strcmp(argv[2], "rules") == 0;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    int ver = 0;
    p_cuDriverGetVersion(&ver);
    printf("driver version %d\n", ver);
    if (p_cuInit(0) || p_cuDeviceGet(&dev, 0) || p_cuDevicePrimaryCtxRetain(&ctx, dev) || p_cuCtxSetCurrent(ctx)) return 3;
    R("cuModuleLoadData", p_cuModuleLoadData(&mod, image));
    R("cuModuleGetFunction axpy_f32", p_cuModuleGetFunction(&f_axpy, mod, "axpy_f32"));
    R("cuModuleGetFunction hash_mix", p_cuModuleGetFunction(&f_hash, mod, "hash_mix"));
    R("cuModuleGetFunction sleep_us", p_cuModuleGetFunction(&f_sleep, mod, "sleep_us"));
    p_cuMemAlloc_v2(&gx, 4096);
    for (int i = 0; i < 6; i++) p_cuMemAlloc_v2(&ys[i], 4096);
    if (rules) return probe_rules(ctx, dev, mod, image);

    for (size_t i = 0; i < 5; i++) {
        size_t off = 0, sz = 0;
        CUresult rc = p_cuFuncGetParamInfo(f_axpy, i, &off, &sz);
        printf("paraminfo axpy %zu %-28s %zu %zu\n", i, nm(rc), rc ? 0 : off, rc ? 0 : sz);
    }
    {
        float a = 1; unsigned n = 1;
        void *args[] = {&a, &gx, &ys[0], &n};
        R("launch block 1025", p_cuLaunchKernel(f_axpy, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL));
        R("launch block 32x32x2", p_cuLaunchKernel(f_axpy, 1, 1, 1, 32, 32, 2, 0, NULL, args, NULL));
        R("launch grid 0", p_cuLaunchKernel(f_axpy, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
        R("launch no params", p_cuLaunchKernel(f_axpy, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        R("launch smem 60000", p_cuLaunchKernel(f_axpy, 1, 1, 1, 32, 1, 1, 60000, NULL, args, NULL));
        R("launch bad func", p_cuLaunchKernel((CUfunction)&a, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
        R("ctx sync", p_cuCtxSynchronize());
    }

    const unsigned long long PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    gpa("cuCtxSynchronize", 12000, 0);
    gpa("cuCtxSynchronize", 13000, 0);
    gpa("cuMemcpyHtoDAsync", 12000, 0);
    gpa("cuMemcpyHtoDAsync", 12000, PT);
    gpa("cuLaunchKernel", 13000, PT);
    gpa("cuLaunchKernel", 13000, 1);
    gpa("cuLaunchKernel", 13000, 0);
    gpa("cuLaunchKernel", 6050, PT);
    gpa("cuLaunchKernel", 3000, 0);
    gpa("cuMemcpyDtoH", 13000, PT);
    gpa("cuModuleGetFunction", 13000, PT);
    gpa("cuStreamBeginCapture", 13000, PT);
    gpa("cuStreamBeginCapture", 10000, 0);
    gpa("cuStreamGetCaptureInfo", 12030, 0);
    gpa("cuGraphInstantiate", 11000, 0);
    gpa("cuGraphInstantiate", 12000, 0);
    gpa("cuGetProcAddress", 11030, 0);
    gpa("cuGetProcAddress", 12000, 0);
    gpa("cuCtxCreate", 13000, 0);
    gpa("cuMemAlloc", 13000, 0);
    /* (the 32-bit cuMemAlloc of CUDA 2.0 is not simulated: not asked) */
    gpa("cuNoSuchFunction", 13000, 0);
    gpa("cuLibraryLoadData", 11080, 0);
    gpa("cuLaunchKernel", 13000, 4);
    gpa("cuLaunchKernel", 13000, 3);
    gpa("cuLaunchKernel_ptsz", 13000, 0);
    gpa("cuMemcpyHtoDAsync_v2", 13000, 0);
    gpa("cuGetErrorString", 13000, 0);

    CUstream nb, b, s2;
    p_cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);
    p_cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
    p_cuStreamCreate(&b, CU_STREAM_DEFAULT);
    g_nb = nb;
    g_s2 = s2;
    g_b = b;
    CUevent e, e2, et;
    p_cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    p_cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING);
    p_cuEventCreate(&et, 0);

    R("begin capture NULL", p_cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_RELAXED));
    R("begin capture LEGACY", p_cuStreamBeginCapture_v2(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_RELAXED));
    R("begin capture PER_THREAD", p_cuStreamBeginCapture_v2(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_RELAXED));
    end("  end PER_THREAD", CU_STREAM_PER_THREAD);
    end("end capture, not capturing", nb);
    R("begin capture twice (1)", p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    R("begin capture twice (2)", p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    end("  end", nb);

    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(nb);
    R("global: cuMemAlloc same thread", p_cuMemAlloc_v2(&gtmp, 64));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("relaxed: cuMemAlloc same thread", p_cuMemAlloc_v2(&gtmp, 64));
    R("relaxed: cuMemFree same thread", p_cuMemFree_v2(gtmp));
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(nb);
    other("global: cuMemAlloc other thread", ctx, 0);
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(nb);
    other("global: cuMemAlloc other relaxed thread", ctx, 1);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    axpy(nb);
    other("threadlocal: cuMemAlloc other thread", ctx, 0);
    R("threadlocal: cuMemAlloc same thread", p_cuMemAlloc_v2(&gtmp, 64));
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("relaxed: cuCtxSynchronize", p_cuCtxSynchronize());
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(nb);
    R("global: cuCtxSynchronize", p_cuCtxSynchronize());
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("relaxed: cuStreamSynchronize(capturing)", p_cuStreamSynchronize(nb));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("relaxed: cuStreamQuery(capturing)", p_cuStreamQuery(nb));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("relaxed: cuStreamSynchronize(other nb)", p_cuStreamSynchronize(s2));
    R("relaxed: cuStreamSynchronize(NULL)", p_cuStreamSynchronize(NULL));
    R("relaxed: memset legacy (nb captures)", p_cuMemsetD32Async(ys[0], 0, 4, NULL));
    R("relaxed: cuMemsetD32 sync api", p_cuMemsetD32_v2(ys[0], 0, 4));
    R("relaxed: cuMemcpyHtoD sync api", p_cuMemcpyHtoD_v2(ys[0], &ver, 4));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(nb);
    R("global: cuMemcpyHtoD sync api", p_cuMemcpyHtoD_v2(ys[0], &ver, 4));
    status("  status", nb);
    end("  end", nb);

    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    R("blocking captures: memset on legacy", p_cuMemsetD32Async(ys[0], 0, 4, NULL));
    status("  status(b)", b);
    end("  end", b);
    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    R("blocking captures: launch on legacy", axpy(NULL));
    end("  end", b);
    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    R("blocking captures: sync legacy", p_cuStreamSynchronize(NULL));
    end("  end", b);
    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    status("blocking captures: IsCapturing(legacy)", NULL);
    status("  status(b)", b);
    end("  end", b);
    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    R("blocking captures: record on legacy", p_cuEventRecord(e, NULL));
    end("  end", b);
    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    R("blocking captures: launch on other blocking", axpy(s2));
    end("  end", b);

    p_cuEventRecord(e, s2);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("capture waits on outside event", p_cuStreamWaitEvent(nb, e, 0));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("capture waits on never-recorded event", p_cuStreamWaitEvent(nb, e2, 0));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("record in capture", p_cuEventRecord(e2, nb));
    R("  query captured event", p_cuEventQuery(e2));
    R("  synchronize captured event", p_cuEventSynchronize(e2));
    status("  status", nb);
    end("  end", nb);
    R("query event after capture ended", p_cuEventQuery(e2));
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("capture: cuStreamAddCallback", p_cuStreamAddCallback(nb, cb, NULL, 0));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    R("capture: cuLaunchHostFunc", p_cuLaunchHostFunc(nb, host, NULL));
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    CUdeviceptr ad = 0;
    R("capture: cuMemAllocAsync", p_cuMemAllocAsync(&ad, 256, nb));
    if (ad) R("capture: cuMemFreeAsync", p_cuMemFreeAsync(ad, nb));
    end("  end", nb);
    {
        unsigned hostbuf[4] = {1, 2, 3, 4};
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
        axpy(nb);
        R("capture: HtoDAsync from pageable", p_cuMemcpyHtoDAsync_v2(ys[1], hostbuf, 16, nb));
        R("capture: DtoHAsync to pageable", p_cuMemcpyDtoHAsync_v2(hostbuf, ys[1], 16, nb));
        status("  status", nb);
        end("  end", nb);
    }
    /* graph launch into a capturing stream */
    {
        CUgraph g = NULL;
        CUgraphExec ex = NULL;
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
        axpy(nb);
        p_cuMemsetD32Async(ys[1], 1, 4, nb);
        p_cuStreamEndCapture(nb, &g);
        size_t n = 0;
        R("captured graph: GetNodes", p_cuGraphGetNodes(g, NULL, &n));
        printf("  nodes %zu\n", n);
        CUgraphNode nodes[4];
        n = 4;
        p_cuGraphGetNodes(g, nodes, &n);
        CUgraphNodeType ty = 0;
        p_cuGraphNodeGetType(nodes[0], &ty);
        CUDA_KERNEL_NODE_PARAMS kp;
        memset(&kp, 0, sizeof kp);
        R("captured kernel node: GetParams", p_cuGraphKernelNodeGetParams_v2(nodes[0], &kp));
        printf("  type %d func==axpy %d kernelParams %s extra %s a=%g\n", (int)ty, kp.func == f_axpy,
               kp.kernelParams ? "set" : "NULL", kp.extra ? "set" : "NULL",
               kp.kernelParams ? (double)*(float *)kp.kernelParams[0] : -1.0);
        R("instantiate", p_cuGraphInstantiateWithFlags(&ex, g, 0));
        p_cuStreamBeginCapture_v2(s2, CU_STREAM_CAPTURE_MODE_RELAXED);
        R("capture: cuGraphLaunch into capture", p_cuGraphLaunch(ex, s2));
        status("  status", s2);
        end("  end", s2);
        float a2 = 3.0f;
        unsigned nn = 256;
        void *args[] = {&a2, &gx, &ys[1], &nn};
        kp.kernelParams = args;
        R("exec kernel node set params", p_cuGraphExecKernelNodeSetParams_v2(ex, nodes[0], &kp));
        CUgraph g2;
        p_cuGraphCreate(&g2, 0);
        CUgraphNode k2;
        p_cuGraphAddKernelNode_v2(&k2, g2, NULL, 0, &kp);
        CUgraphExecUpdateResultInfo info;
        memset(&info, 0, sizeof info);
        R("exec update, other topology", p_cuGraphExecUpdate_v2(ex, g2, &info));
        printf("  result %d\n", (int)info.result);
        R("graph launch", p_cuGraphLaunch(ex, nb));
        R("sync", p_cuStreamSynchronize(nb));
        p_cuGraphExecDestroy(ex);
        p_cuGraphDestroy(g);
        p_cuGraphDestroy(g2);
    }
    /* fork without join */
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    p_cuEventRecord(e, nb);
    R("fork: wait", p_cuStreamWaitEvent(s2, e, 0));
    status("  status(s2)", s2);
    axpy(s2);
    end("  end unjoined", nb);
    status("  status(s2) after", s2);
    /* end from another thread */
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(nb);
    {
        thr_arg a = {ctx, 0, CUDA_SUCCESS, nb};
        pthread_t t;
        pthread_create(&t, NULL, other_thread_end, &a);
        pthread_join(t, NULL);
        R("global: end from other thread", a.rc);
    }
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    {
        thr_arg a = {ctx, 0, CUDA_SUCCESS, nb};
        pthread_t t;
        pthread_create(&t, NULL, other_thread_end, &a);
        pthread_join(t, NULL);
        R("relaxed: end from other thread", a.rc);
    }
    status("  status", nb);
    end("  end", nb);

    /* more: v1 cuGetProcAddress, context sync from another thread, events
     * recorded in a capture, timing of "synchronous" and pageable calls */
    {
        void *p = (void *)1;
        R("gpa v1 cuNoSuchFunction", p_cuGetProcAddress("cuNoSuchFunction", &p, 13000, 0));
        R("gpa v1 cuLibraryLoadData 11080", p_cuGetProcAddress("cuLibraryLoadData", &p, 11080, 0));
        R("gpa v1 cuLaunchKernel 6050 PT", p_cuGetProcAddress("cuLaunchKernel", &p, 6050, PT));
    }
    {
        thr_arg a = {ctx, 0, CUDA_SUCCESS, NULL};
        pthread_t t;
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
        axpy(nb);
        pthread_create(&t, NULL, other_thread_ctxsync, &a);
        pthread_join(t, NULL);
        R("relaxed capture: ctx sync other thread", a.rc);
        status("  status", nb);
        end("  end", nb);
        a.relaxed = 1;
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
        axpy(nb);
        pthread_create(&t, NULL, other_thread_ctxsync, &a);
        pthread_join(t, NULL);
        R("relaxed capture: ctx sync other relaxed thr", a.rc);
        status("  status", nb);
        end("  end", nb);
    }
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    p_cuEventRecord(e2, nb);
    R("captured event: query only", p_cuEventQuery(e2));
    status("  status", nb);
    end("  end", nb);
    R("  query after end", p_cuEventQuery(e2));
    R("  sync after end", p_cuEventSynchronize(e2));
    R("  wait after end", p_cuStreamWaitEvent(s2, e2, 0));
    R("  record again eagerly", p_cuEventRecord(e2, s2));
    R("  synchronize", p_cuEventSynchronize(e2));
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    p_cuEventRecord(e2, nb);
    end("captured event, capture ends well", nb);
    R("  query after end", p_cuEventQuery(e2));
    R("  wait after end", p_cuStreamWaitEvent(s2, e2, 0));
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    R("  wait in a new capture", p_cuStreamWaitEvent(nb, e2, 0));
    end("  end", nb);
    R("  record again eagerly", p_cuEventRecord(e2, s2));
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(nb);
    p_cuEventRecord(e2, nb);
    R("captured event: sync only", p_cuEventSynchronize(e2));
    status("  status", nb);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(b, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(b);
    R("blocking captures: cuMemsetD32 sync api", p_cuMemsetD32_v2(ys[0], 0, 4));
    status("  status(b)", b);
    end("  end", b);
    {
        CUdeviceptr d = 0;
        p_cuMemAlloc_v2(&d, 64);
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
        axpy(nb);
        R("global: cuMemFree same thread", p_cuMemFree_v2(d));
        end("  end", nb);
        void *hp = NULL;
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
        axpy(nb);
        R("global: cuMemAllocHost", p_cuMemAllocHost_v2(&hp, 64));
        end("  end", nb);
        CUstream ts;
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
        axpy(nb);
        R("global: cuStreamCreate", p_cuStreamCreate(&ts, CU_STREAM_NON_BLOCKING));
        R("global: cuEventQuery (uncaptured)", p_cuEventQuery(et));
        R("global: cuEventSynchronize (uncaptured)", p_cuEventSynchronize(et));
        R("global: cuStreamSynchronize(other nb)", p_cuStreamSynchronize(s2));
        R("global: cuStreamQuery(other nb)", p_cuStreamQuery(s2));
        R("global: cuStreamSynchronize(legacy)", p_cuStreamSynchronize(NULL));
        CUmodule m2;
        R("global: cuModuleLoadData", p_cuModuleLoadData(&m2, image));
        status("  status", nb);
        end("  end", nb);
    }
    {
        /* a CUkernel launched as a CUfunction */
        CUlibrary lib;
        CUkernel kk;
        R("cuLibraryLoadData", p_cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
        R("cuLibraryGetKernel", p_cuLibraryGetKernel(&kk, lib, "axpy_f32"));
        float a = 1;
        unsigned n = 4;
        void *args[] = {&a, &gx, &ys[1], &n};
        R("launch CUkernel as CUfunction", p_cuLaunchKernel((CUfunction)kk, 1, 1, 1, 32, 1, 1, 0, nb, args, NULL));
        R("  sync", p_cuStreamSynchronize(nb));
    }
    {
        /* which calls return before the queued work is done? */
        unsigned *pinned = NULL, pageable[64];
        p_cuMemAllocHost_v2((void **)&pinned, 256);
        sleep_us(NULL, 50000);
        R("memsetD32 sync api, then query legacy", (p_cuMemsetD32_v2(ys[0], 0, 4), p_cuStreamQuery(NULL)));
        p_cuCtxSynchronize();
        sleep_us(nb, 50000);
        R("DtoHAsync to pageable, then query", (p_cuMemcpyDtoHAsync_v2(pageable, ys[1], 256, nb), p_cuStreamQuery(nb)));
        p_cuCtxSynchronize();
        sleep_us(nb, 50000);
        R("DtoHAsync to pinned, then query", (p_cuMemcpyDtoHAsync_v2(pinned, ys[1], 256, nb), p_cuStreamQuery(nb)));
        p_cuCtxSynchronize();
        sleep_us(nb, 50000);
        R("HtoDAsync from pageable, then query", (p_cuMemcpyHtoDAsync_v2(ys[1], pageable, 256, nb), p_cuStreamQuery(nb)));
        p_cuCtxSynchronize();
        sleep_us(NULL, 50000);
        R("DtoD sync api, then query legacy", (p_cuMemcpyHtoD_v2(ys[0], pageable, 256), p_cuStreamQuery(NULL)));
        p_cuCtxSynchronize();
        p_cuMemFreeHost(pinned);
    }

    /* events */
    R("query never-recorded event", p_cuEventQuery(e2 ? et : et));
    float ms = 0;
    p_cuEventRecord(e, nb);
    p_cuEventRecord(et, nb);
    p_cuStreamSynchronize(nb);
    R("elapsed, one DISABLE_TIMING", p_cuEventElapsedTime_v2(&ms, e, et));
    CUevent fresh;
    p_cuEventCreate(&fresh, 0);
    R("elapsed, never recorded", p_cuEventElapsedTime_v2(&ms, fresh, et));
    R("record with flags 0", p_cuEventRecordWithFlags(et, nb, 0));
    /* contexts */
    CUcontext c2, cur = NULL;
    R("cuCtxCreate_v4", p_cuCtxCreate_v4(&c2, NULL, 0, dev));
    R("cuCtxDestroy current", p_cuCtxDestroy_v2(c2));
    p_cuCtxGetCurrent(&cur);
    printf("%-44s %s\n", "  current after destroy", cur == ctx ? "primary" : cur ? "other" : "NULL");
    p_cuCtxSetCurrent(ctx);
    unsigned api = 0;
    p_cuCtxGetApiVersion(NULL, &api);
    printf("%-44s %u\n", "ctx api version", api);
    R("cuMemFree(0)", p_cuMemFree_v2(0));
    R("cuMemFree(bogus)", p_cuMemFree_v2(gx + 4));
    CUstream tmp;
    p_cuStreamCreate(&tmp, 0);
    R("stream destroy", p_cuStreamDestroy_v2(tmp));
    unsigned long long id1 = 0, id2 = 0;
    R("stream id NULL", p_cuStreamGetId(NULL, &id1));
    R("stream id PER_THREAD", p_cuStreamGetId(CU_STREAM_PER_THREAD, &id2));
    printf("  ids differ %s\n", id1 != id2 ? "yes" : "no");
    R("final ctx sync", p_cuCtxSynchronize());
    return 0;
}

/* ---- the rules section ------------------------------------------------- */
static void *other_thread_legacy_memset(void *p) {
    thr_arg *a = p;
    p_cuCtxSetCurrent(a->ctx);
    a->rc = p_cuMemsetD32Async(ys[0], 0, 4, NULL);
    return NULL;
}
static void *other_thread_query_legacy(void *p) {
    thr_arg *a = p;
    p_cuCtxSetCurrent(a->ctx);
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    p_cuThreadExchangeStreamCaptureMode(&m);
    a->rc = p_cuStreamQuery(NULL);
    return NULL;
}
static void run_other(const char *label, CUcontext ctx, void *(*fn)(void *)) {
    thr_arg a = {ctx, 0, CUDA_SUCCESS, NULL};
    pthread_t t;
    pthread_create(&t, NULL, fn, &a);
    pthread_join(t, NULL);
    R(label, a.rc);
}

static int probe_rules(CUcontext ctx, CUdevice dev, CUmodule mod, const char *image) {
    (void)mod;
    CUstream s1, s2, s3, nb, tmp;
    p_cuStreamCreate(&s1, CU_STREAM_DEFAULT);
    p_cuStreamCreate(&s2, CU_STREAM_DEFAULT);
    p_cuStreamCreate(&s3, CU_STREAM_DEFAULT);
    p_cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);
    g_b = s1;
    g_s2 = s2;
    g_nb = nb;
    CUevent ef, e1, e2;
    p_cuEventCreate(&ef, CU_EVENT_DISABLE_TIMING);
    p_cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING);
    p_cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING);
    unsigned *pinned = NULL;
    p_cuMemAllocHost_v2((void **)&pinned, 256);

    /* fork/join over events, blocking streams, each capture mode */
    static const CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                                CU_STREAM_CAPTURE_MODE_RELAXED};
    static const char *mname[] = {"global", "thread-local", "relaxed"};
    for (int m = 0; m < 3; m++) {
        char l[64];
        printf("fork/join, %s\n", mname[m]);
        R("  begin s1", p_cuStreamBeginCapture_v2(s1, modes[m]));
        R("  record fork", p_cuEventRecord(ef, s1));
        R("  s2 waits fork", p_cuStreamWaitEvent(s2, ef, 0));
        R("  s3 waits fork", p_cuStreamWaitEvent(s3, ef, 0));
        status("  status(s2)", s2);
        R("  HtoDAsync s1 (pinned)", p_cuMemcpyHtoDAsync_v2(ys[1], pinned, 64, s1));
        R("  memset s2", p_cuMemsetD32Async(ys[2], 0, 16, s2));
        R("  record e1 on s2", p_cuEventRecord(e1, s2));
        R("  memset s3", p_cuMemsetD32Async(ys[3], 0, 16, s3));
        R("  record e2 on s3", p_cuEventRecord(e2, s3));
        R("  s1 waits e1", p_cuStreamWaitEvent(s1, e1, 0));
        R("  kernel s1", axpy(s1));
        R("  s1 waits e2", p_cuStreamWaitEvent(s1, e2, 0));
        R("  kernel s1 again", axpy(s1));
        R("  DtoHAsync s1 (pinned)", p_cuMemcpyDtoHAsync_v2(pinned, ys[3], 64, s1));
        R("  host function s1", p_cuLaunchHostFunc(s1, host, NULL));
        snprintf(l, sizeof l, "  end");
        end(l, s1);
        status("  status(s3) after", s3);
    }
    /* a forked stream that does not rejoin */
    p_cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
    p_cuEventRecord(ef, s1);
    p_cuStreamWaitEvent(s2, ef, 0);
    axpy(s2);
    p_cuEventRecord(e1, s2);
    end("fork without join: end", s1);
    /* legacy-stream work while a forked blocking stream captures */
    p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_GLOBAL);
    p_cuEventRecord(ef, nb);
    p_cuStreamWaitEvent(s2, ef, 0);
    run_other("nb captures, s2 forked: legacy memset other thr", ctx, other_thread_legacy_memset);
    R("  launch into the invalidated capture", axpy(nb));
    R("  record into the invalidated capture", p_cuEventRecord(e1, nb)); /* guess */
    status("  status(s2)", s2);
    end("  end", nb);
    p_cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_RELAXED);
    axpy(s1);
    run_other("blocking captures: query legacy, relaxed thr", ctx, other_thread_query_legacy); /* guess */
    status("  status", s1);
    end("  end", s1);
    /* a capture abandoned by destroying its stream */
    p_cuStreamCreate(&tmp, CU_STREAM_NON_BLOCKING);
    p_cuStreamBeginCapture_v2(tmp, CU_STREAM_CAPTURE_MODE_GLOBAL);
    axpy(tmp);
    R("destroy the capturing stream", p_cuStreamDestroy_v2(tmp));     /* guess */
    R("  global: cuStreamSynchronize(other)", p_cuStreamSynchronize(nb)); /* guess: the capture is over */
    R("  global: cuMemAlloc", p_cuMemAlloc_v2(&gtmp, 64));             /* guess */
    p_cuMemFree_v2(gtmp);

    /* function attributes checked at launch; graphs launched after a change */
    {
        float a = 1;
        unsigned n = 4;
        void *args[] = {&a, &gx, &ys[1], &n};
        CUgraph g = NULL;
        CUgraphExec ex = NULL;
        R("raise max dynamic smem to 64K", p_cuFuncSetAttribute(f_axpy, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
        R("  launch smem 60000", p_cuLaunchKernel(f_axpy, 1, 1, 1, 32, 1, 1, 60000, nb, args, NULL));
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
        p_cuLaunchKernel(f_axpy, 1, 1, 1, 32, 1, 1, 60000, nb, args, NULL);
        p_cuStreamEndCapture(nb, &g);
        R("  instantiate", p_cuGraphInstantiateWithFlags(&ex, g, 0));
        R("lower max dynamic smem to 1024", p_cuFuncSetAttribute(f_axpy, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
        R("  launch smem 60000", p_cuLaunchKernel(f_axpy, 1, 1, 1, 32, 1, 1, 60000, nb, args, NULL));
        R("  graph launch, its node asks 60000", p_cuGraphLaunch(ex, nb)); /* guess: strict */
        R("  sync", p_cuStreamSynchronize(nb));
        p_cuFuncSetAttribute(f_axpy, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536);
        R("  graph launch after raising again", p_cuGraphLaunch(ex, nb));
        R("  sync", p_cuStreamSynchronize(nb));
        p_cuFuncSetAttribute(f_axpy, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152);
        p_cuGraphExecDestroy(ex);
        p_cuGraphDestroy(g);
    }
    /* module unload */
    {
        CUmodule m2;
        CUfunction f2;
        CUgraph g = NULL;
        CUgraphExec ex = NULL;
        float a = 1;
        unsigned n = 4;
        void *args[] = {&a, &gx, &ys[1], &n};
        p_cuModuleLoadData(&m2, image);
        p_cuModuleGetFunction(&f2, m2, "axpy_f32");
        p_cuStreamBeginCapture_v2(nb, CU_STREAM_CAPTURE_MODE_RELAXED);
        p_cuLaunchKernel(f2, 1, 1, 1, 32, 1, 1, 0, nb, args, NULL);
        p_cuStreamEndCapture(nb, &g);
        p_cuGraphInstantiateWithFlags(&ex, g, 0);
        R("unload a module", p_cuModuleUnload(m2));
        R("  launch its function", p_cuLaunchKernel(f2, 1, 1, 1, 32, 1, 1, 0, nb, args, NULL)); /* guess */
        R("  graph launch holding its function", p_cuGraphLaunch(ex, nb));                  /* guess */
        R("  sync", p_cuStreamSynchronize(nb));
        p_cuGraphExecDestroy(ex);
        p_cuGraphDestroy(g);
    }
    /* sticky errors, then a reset */
    {
        CUfunction ff;
        R("cuModuleGetFunction fault_u32", p_cuModuleGetFunction(&ff, mod, "fault_u32"));
        CUdeviceptr bad = 8;
        unsigned code = 700;
        void *args[] = {&bad, &code};
        R("fault: launch", p_cuLaunchKernel(ff, 1, 1, 1, 1, 1, 1, 0, nb, args, NULL));
        R("  synchronize", p_cuStreamSynchronize(nb));
        R("  launch after", axpy(nb));
        R("  synchronize other stream", p_cuStreamSynchronize(s2));
        R("  cuMemAlloc", p_cuMemAlloc_v2(&gtmp, 64));
        R("  cuEventQuery", p_cuEventQuery(ef));
        R("  cuCtxSynchronize", p_cuCtxSynchronize());
        CUcontext cur = NULL;
        R("  cuCtxGetCurrent", p_cuCtxGetCurrent(&cur));
        R("reset", p_cuDevicePrimaryCtxReset_v2(dev));
        CUcontext c2 = NULL;
        R("  retain", p_cuDevicePrimaryCtxRetain(&c2, dev));
        printf("%-44s %s\n", "  same handle", c2 == ctx ? "yes" : "no");
        p_cuCtxSetCurrent(c2);
        R("  synchronize an old stream", p_cuStreamSynchronize(nb));    /* guess */
        R("  record an old event", p_cuEventRecord(ef, NULL));          /* guess */
        R("  launch an old module's function", axpy(NULL));             /* guess */
        CUmodule m3;
        R("  load the module again", p_cuModuleLoadData(&m3, image));
        R("  get axpy", p_cuModuleGetFunction(&f_axpy, m3, "axpy_f32"));
        R("  cuMemAlloc", p_cuMemAlloc_v2(&gx, 4096));
        p_cuMemAlloc_v2(&ys[0], 4096);
        R("  launch", axpy(NULL));
        R("  cuCtxSynchronize", p_cuCtxSynchronize());
    }
    return 0;
}
