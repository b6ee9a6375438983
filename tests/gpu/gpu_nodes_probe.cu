// Stream operations as graph nodes on a real GPU (issue 12; scripts/gpu/nodes-probe).
//   gpu_nodes_probe WORKLOAD [iters]   WORKLOAD: events | forkjoin | copy | memset  -> "RESULT ..." line
//                                       | copyring | setring | eventring (ends, destinations, events from rings of 8: patched)
//                                       | eventchurn (forkjoin with two events created and destroyed every iteration)
//   gpu_nodes_probe rules                the driver rules nodes.c relies on      -> "RULE ..." lines
//                                        (8-11: patching event nodes, the cases DDP may meet; 12: a wait
//                                        and a record of one event in one graph)
//   gpu_nodes_probe rule13               patching from an event patched in before and destroyed since
//                                        (alone, under a timeout: a use after destroy may hang the driver)
//   gpu_nodes_probe attrpatch            14: does a launch attribute (a cluster shape, a programmatic
//                                        edge) survive an argument patch of its node (core/graphs/replay.c
//                                        attrs_patchable patches programmatic serialization only)?
//   gpu_nodes_probe gridpatch            15: what cuGraphExecKernelNodeSetParams takes of a kernel node's
//                                        launch configuration (issue 30): a larger and a smaller grid, another
//                                        block shape, more dynamic shared memory than captured; each patched
//                                        graph's result against the same launch made eagerly
//   gpu_nodes_probe copysize             16: does cuGraphExecMemcpyNodeSetParams take a 1-D copy of another
//                                        size (larger and smaller than captured), and
//                                        cuGraphExecMemsetNodeSetParams a memset of another width? (issue 30:
//                                        core/graphs/nodes.c patches a copy's size, not a memset's)
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(2); } } while (0)
#define N 4096

__global__ void axpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] * 0.5f;
}
__global__ void spin(long long cycles) { long long t = clock64(); while (clock64() - t < cycles) {} }

static void k(float *y, const float *x, float a, cudaStream_t s) { axpy<<<N / 256, 256, 0, s>>>(y, x, a, N); }
static double sum(const float *d) {
    std::vector<float> h(N);
    CK(cudaMemcpy(h.data(), d, N * 4, cudaMemcpyDeviceToHost));
    double t = 0; for (float v : h) t += v; return t;
}
static const char *nm(cudaError_t e) { return cudaGetErrorName(e); }

static int workload(const char *w, int iters) {
    cudaStream_t s1, s2; CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    float *x, *y, *z, *pin; CK(cudaMalloc(&x, N * 4)); CK(cudaMalloc(&y, N * 4)); CK(cudaMalloc(&z, N * 4)); CK(cudaMallocHost(&pin, N * 4));
    for (int i = 0; i < N; i++) pin[i] = (float)(i % 17);
    CK(cudaMemcpy(x, pin, N * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(y, 0, N * 4)); CK(cudaMemset(z, 0, N * 4));
    cudaEvent_t e1, e2; CK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    const int R = 8; float *pr[R], *dr[R]; cudaEvent_t er[R][2];
    for (int r = 0; r < R; r++) {
        CK(cudaMallocHost(&pr[r], N * 4)); CK(cudaMalloc(&dr[r], N * 4)); CK(cudaMemset(dr[r], 0, N * 4));
        for (int i = 0; i < N; i++) pr[r][i] = (float)((i + r) % 13);
        CK(cudaEventCreateWithFlags(&er[r][0], cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&er[r][1], cudaEventDisableTiming));
    }
    CK(cudaDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < iters; it++) {
        if (!strcmp(w, "events")) {          // cuBLAS-like: its own event records between kernels
            for (int j = 0; j < 8; j++) { k(y, x, 1.01f, s1); CK(cudaEventRecord(e1, s1)); k(x, y, 0.99f, s1); }
        } else if (!strcmp(w, "forkjoin") || !strcmp(w, "eventring") || !strcmp(w, "eventchurn")) { // fork/join every iteration
            cudaEvent_t a = w[5] == 'r' ? er[it % R][0] : e1, b = w[5] == 'r' ? er[it % R][1] : e2;
            if (w[5] == 'c') { CK(cudaEventCreateWithFlags(&a, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&b, cudaEventDisableTiming)); }
            k(y, x, 1.01f, s1); CK(cudaEventRecord(a, s1)); CK(cudaStreamWaitEvent(s2, a, 0));
            for (int j = 0; j < 4; j++) k(z, y, 0.5f, s2);
            CK(cudaEventRecord(b, s2)); CK(cudaStreamWaitEvent(s1, b, 0));
            for (int j = 0; j < 4; j++) k(x, z, 0.25f, s1);
            if (w[5] == 'c') { CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b)); } // as PyTorch's collectives' events
        } else if (!strcmp(w, "copy")) {     // pinned H2D and D2D mid-iteration
            k(y, x, 1.01f, s1); CK(cudaMemcpyAsync(z, pin, N * 4, cudaMemcpyHostToDevice, s1));
            k(y, z, 0.5f, s1); CK(cudaMemcpyAsync(z, y, N * 4, cudaMemcpyDeviceToDevice, s1));
            for (int j = 0; j < 6; j++) k(x, z, 0.25f, s1);
        } else if (!strcmp(w, "copyring")) { // a new pinned source and device destination every iteration
            k(y, x, 1.01f, s1); CK(cudaMemcpyAsync(z, pr[it % R], N * 4, cudaMemcpyHostToDevice, s1));
            k(y, z, 0.5f, s1); CK(cudaMemcpyAsync(dr[it % R], y, N * 4, cudaMemcpyDeviceToDevice, s1));
            for (int j = 0; j < 6; j++) k(x, z, 0.25f, s1);
        } else if (!strcmp(w, "setring")) {  // a new destination and value every iteration, then a copy from it
            k(y, x, 1.01f, s1); if (cuMemsetD32Async((CUdeviceptr)dr[it % R], 0x3f800000u + (unsigned)(it % 5), N, (CUstream)s1) != CUDA_SUCCESS) return 2;
            CK(cudaMemcpyAsync(z, dr[it % R], N * 4, cudaMemcpyDeviceToDevice, s1)); k(z, y, 0.5f, s1);
            for (int j = 0; j < 6; j++) k(x, z, 0.25f, s1);
        } else if (!strcmp(w, "memset")) {
            k(y, x, 1.01f, s1); CK(cudaMemsetAsync(z, 0, N * 4, s1)); k(z, y, 0.5f, s1);
            for (int j = 0; j < 6; j++) k(x, z, 0.25f, s1);
        } else { fprintf(stderr, "unknown workload %s\n", w); return 2; }
        if (it % 100 == 99) CK(cudaStreamSynchronize(s1));
    }
    CK(cudaStreamSynchronize(s1)); CK(cudaStreamSynchronize(s2));
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    double ring = 0; for (int r = 0; r < R; r++) ring += sum(dr[r]);
    printf("RESULT workload=%s iters=%d checksum=%.6e us_per_iter=%.2f\n", w, iters, sum(x) + sum(y) + sum(z) + ring, us);
    return 0;
}

// One capture of s holding spin, the op `f` and a kernel; returns the exec or NULL (and prints the answers).
template <class F> static cudaGraphExec_t capture(const char *name, cudaStream_t s, F f) {
    cudaGraph_t g = nullptr; cudaGraphExec_t ge = nullptr;
    cudaError_t b = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    spin<<<1, 1, 0, s>>>(1000);
    cudaError_t o = f();
    spin<<<1, 1, 0, s>>>(1000);
    cudaError_t e = cudaStreamEndCapture(s, &g);
    cudaError_t i = g ? cudaGraphInstantiate(&ge, g, 0) : cudaErrorUnknown;
    printf("RULE %-34s begin=%s op=%s end=%s instantiate=%s\n", name, nm(b), nm(o), nm(e), nm(i));
    cudaGetLastError();
    return i == cudaSuccess ? ge : nullptr;
}

// The event node of a one-node graph captured on s (a record, or a wait), its graph kept in *g.
static CUgraphNode event_node(cudaStream_t s, cudaEvent_t e, int wait, cudaGraph_t *g, cudaGraphExec_t *gx) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CK(wait ? cudaStreamWaitEvent(s, e, cudaEventWaitExternal) : cudaEventRecordWithFlags(e, s, cudaEventRecordExternal));
    CK(cudaStreamEndCapture(s, g)); CK(cudaGraphInstantiate(gx, *g, 0));
    size_t nn = 1; cudaGraphNode_t n = nullptr; CK(cudaGraphGetNodes(*g, &n, &nn));
    return (CUgraphNode)n;
}

// 8-11. Patching event nodes (core/graphs/nodes.c enc_op_patch), the cases DDP may meet: on two H100s
// every rank's patch of an event record and of an event wait returned CUDA error 1 (2026-11-25).
static void event_patch_rules(cudaStream_t s) {
    static const struct { const char *what; unsigned flags; int destroy_old; } cases[] = {
        {"another event", cudaEventDisableTiming, 0},
        {"another event, the captured one destroyed", cudaEventDisableTiming, 1},
        {"an event with blocking sync", cudaEventDisableTiming | cudaEventBlockingSync, 0},
        {"a timing event", cudaEventDefault, 0},
    };
    for (int wait = 0; wait < 2; wait++)
        for (const auto &c : cases) {
            cudaEvent_t old, neu; CK(cudaEventCreateWithFlags(&old, cudaEventDisableTiming));
            cudaGraph_t g; cudaGraphExec_t gx; CUgraphNode n = event_node(s, old, wait, &g, &gx);
            if (c.destroy_old) CK(cudaEventDestroy(old));
            CK(cudaEventCreateWithFlags(&neu, c.flags));
            CUresult r = wait ? cuGraphExecEventWaitNodeSetEvent((CUgraphExec)gx, n, (CUevent)neu)
                              : cuGraphExecEventRecordNodeSetEvent((CUgraphExec)gx, n, (CUevent)neu);
            cudaError_t l = cudaGraphLaunch(gx, s); cudaError_t q = cudaStreamSynchronize(s); cudaGetLastError();
            printf("RULE %s node exec-set to %s: %d, then launch %s, sync %s\n", wait ? "wait" : "record", c.what, (int)r, nm(l), nm(q));
            CK(cudaGraphExecDestroy(gx)); CK(cudaGraphDestroy(g)); CK(cudaEventDestroy(neu));
            if (!c.destroy_old) CK(cudaEventDestroy(old));
        }
}

// 13. Patching from an event patched in before and destroyed since (the captured one alive):
// encore drops such graphs (core/graphs/nodes.c enc_nodes_forget_graphs); is that needed?
static void patched_event_destroyed(cudaStream_t s) {
    for (int wait = 0; wait < 2; wait++) {
        cudaEvent_t cap, mid, neu;
        CK(cudaEventCreateWithFlags(&cap, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&mid, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&neu, cudaEventDisableTiming));
        cudaGraph_t g; cudaGraphExec_t gx; CUgraphNode n = event_node(s, cap, wait, &g, &gx);
        CUresult r1 = wait ? cuGraphExecEventWaitNodeSetEvent((CUgraphExec)gx, n, (CUevent)mid)
                           : cuGraphExecEventRecordNodeSetEvent((CUgraphExec)gx, n, (CUevent)mid);
        CK(cudaEventDestroy(mid));
        CUresult r2 = wait ? cuGraphExecEventWaitNodeSetEvent((CUgraphExec)gx, n, (CUevent)neu)
                           : cuGraphExecEventRecordNodeSetEvent((CUgraphExec)gx, n, (CUevent)neu);
        cudaError_t l = cudaGraphLaunch(gx, s); cudaError_t q = cudaStreamSynchronize(s); cudaGetLastError();
        printf("RULE %s node exec-set to an event, that event destroyed, exec-set again: %d then %d, launch %s, sync %s\n",
               wait ? "wait" : "record", (int)r1, (int)r2, nm(l), nm(q));
        CK(cudaGraphExecDestroy(gx)); CK(cudaGraphDestroy(g)); CK(cudaEventDestroy(cap)); CK(cudaEventDestroy(neu));
    }
}

// 12. One graph waits for an event and later records the same event (NCCL's one event for
// both directions, if encore kept both in one sequence): does the wait wait for the record
// made before the launch (another stream's, slow), and does the graph finish?
static void same_event_wait_then_record(cudaStream_t s, cudaStream_t s2) {
    cudaEvent_t ev, d; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&d, cudaEventDisableTiming));
    cudaGraph_t g; cudaGraphExec_t gx;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CK(cudaStreamWaitEvent(s, ev, cudaEventWaitExternal)); spin<<<1, 1, 0, s>>>(1000); CK(cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal));
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&gx, g, 0));
    spin<<<1, 1, 0, s2>>>(200000000); CK(cudaEventRecord(ev, s2)); // ~0.1 s
    CK(cudaGraphLaunch(gx, s)); CK(cudaEventRecord(d, s));
    printf("RULE wait then record of one event in one graph: done before the other stream's record? %s (expect cudaErrorNotReady)\n", nm(cudaEventQuery(d)));
    fflush(stdout);
    auto t0 = std::chrono::steady_clock::now(); cudaError_t r;
    while ((r = cudaEventQuery(d)) == cudaErrorNotReady && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {}
    printf("RULE wait then record of one event in one graph: finished within 5 s: %s\n", nm(r));
}

// 14. The cluster a block is in, as the kernel sees it, written to out[slot].
__global__ void cluster_size(int *out, int slot) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned n; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    if (threadIdx.x == 0 && blockIdx.x == 0) out[slot] = (int)n;
#else
    if (threadIdx.x == 0 && blockIdx.x == 0) out[slot] = -1;
#endif
}

// One graph: a kernel, then cluster_size launched with `attr`; patch cluster_size's slot argument
// (cuGraphExecKernelNodeSetParams, as encore does) and see what the patched node runs with.
static void attr_patch(const char *what, cudaLaunchAttribute attr, int want) {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int *out; CK(cudaMalloc(&out, 4 * sizeof(int))); CK(cudaMemset(out, 0, 4 * sizeof(int)));
    cudaGraph_t g; cudaGraphExec_t gx;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    spin<<<1, 1, 0, s>>>(1000);
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(2); cfg.blockDim = dim3(32); cfg.stream = s;
    cfg.attrs = &attr; cfg.numAttrs = 1;
    cudaError_t le = cudaLaunchKernelEx(&cfg, cluster_size, out, 0);
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&gx, g, 0));
    size_t nn = 0; CK(cudaGraphGetNodes(g, nullptr, &nn)); std::vector<cudaGraphNode_t> nodes(nn); CK(cudaGraphGetNodes(g, nodes.data(), &nn));
    // the entry points encore resolves (base/driver.c): the CUDA 10.0 and 10.1 forms
    CUresult (*get)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1 *) = nullptr;
    CUresult (*set)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *) = nullptr;
    CUdriverProcAddressQueryResult qr;
    cuGetProcAddress("cuGraphKernelNodeGetParams", (void **)&get, 10000, CU_GET_PROC_ADDRESS_DEFAULT, &qr);
    cuGetProcAddress("cuGraphExecKernelNodeSetParams", (void **)&set, 10010, CU_GET_PROC_ADDRESS_DEFAULT, &qr);
    CUresult pr = CUDA_ERROR_NOT_FOUND;
    for (size_t i = 0; get && set && i < nn; i++) {
        CUDA_KERNEL_NODE_PARAMS_v1 p; CUgraphNodeType t; cuGraphNodeGetType((CUgraphNode)nodes[i], &t);
        if (t != CU_GRAPH_NODE_TYPE_KERNEL || get((CUgraphNode)nodes[i], &p) != CUDA_SUCCESS) continue;
        if (p.gridDimX != 2) continue; // the spin kernel has one block
        int slot = 1; void *args[] = {&out, &slot}; p.kernelParams = args; p.extra = nullptr;
        pr = set((CUgraphExec)gx, (CUgraphNode)nodes[i], &p);
    }
    cfg.stream = s; CK(cudaLaunchKernelEx(&cfg, cluster_size, out, 0)); // eager, into slot 0
    CK(cudaGraphLaunch(gx, s)); cudaError_t q = cudaStreamSynchronize(s); cudaGetLastError();
    int h[2] = {0, 0}; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    printf("RULE 14 %s: capture launch %s, patch %d, sync %s; eager %d, the patched node %d (%d if the attribute was kept)\n",
           what, nm(le), (int)pr, nm(q), h[0], h[1], want);
    cudaGraphExecDestroy(gx); cudaGraphDestroy(g); cudaFree(out); cudaStreamDestroy(s);
}

static int attr_patch_rules() {
    cudaLaunchAttribute a = {}; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = 2; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
    attr_patch("cluster shape 2x1x1", a, 2);
    cudaLaunchAttribute b = {}; b.id = cudaLaunchAttributeProgrammaticStreamSerialization; b.val.programmaticStreamSerializationAllowed = 1;
    attr_patch("programmatic serialization (cluster of 1)", b, 1);
    return 0;
}

__global__ void axpy_smem(float *y, const float *x, float a, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    if (i < n) y[i] = a * tile[threadIdx.x] + y[i] * 0.5f;
}

// One kernel node captured at (grid0, block0, smem0), patched to (grid, block, smem), launched;
// its output against the same launch made eagerly on a copy of the same inputs.
static void grid_patch(const char *what, unsigned grid0, unsigned block0, unsigned smem0, unsigned grid, unsigned block,
                       unsigned smem) {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *x, *y, *z; CK(cudaMalloc(&x, N * 4)); CK(cudaMalloc(&y, N * 4)); CK(cudaMalloc(&z, N * 4));
    std::vector<float> h(N); for (int i = 0; i < N; i++) h[i] = (float)(i % 97);
    CK(cudaMemcpy(x, h.data(), N * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(y, 0, N * 4)); CK(cudaMemset(z, 0, N * 4));
    int n = N; float a = 2.f;
    cudaGraph_t g; cudaGraphExec_t gx;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    axpy_smem<<<grid0, block0, smem0, s>>>(y, x, a, n);
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&gx, g, 0));
    cudaGraphNode_t node; size_t nn = 1; CK(cudaGraphGetNodes(g, &node, &nn));
    CUresult (*get)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1 *) = nullptr;
    CUresult (*set)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *) = nullptr;
    CUdriverProcAddressQueryResult qr;
    cuGetProcAddress("cuGraphKernelNodeGetParams", (void **)&get, 10000, CU_GET_PROC_ADDRESS_DEFAULT, &qr);
    cuGetProcAddress("cuGraphExecKernelNodeSetParams", (void **)&set, 10010, CU_GET_PROC_ADDRESS_DEFAULT, &qr);
    CUDA_KERNEL_NODE_PARAMS_v1 p; CUresult gr = get((CUgraphNode)node, &p);
    void *args[] = {&y, &x, &a, &n};
    p.gridDimX = grid; p.blockDimX = block; p.sharedMemBytes = smem; p.kernelParams = args; p.extra = nullptr;
    CUresult pr = set((CUgraphExec)gx, (CUgraphNode)node, &p);
    cudaError_t l = cudaGraphLaunch(gx, s), q = cudaStreamSynchronize(s); cudaGetLastError();
    axpy_smem<<<grid, block, smem, s>>>(z, x, a, n);
    cudaError_t e = cudaStreamSynchronize(s); cudaGetLastError();
    printf("RULE 15 %s: get %d, patch %d, launch %s, sync %s, eager %s; graph sum %.0f, eager sum %.0f (%s)\n", what, (int)gr,
           (int)pr, nm(l), nm(q), nm(e), sum(y), sum(z), sum(y) == sum(z) ? "the same" : "DIFFERENT");
    cudaGraphExecDestroy(gx); cudaGraphDestroy(g); cudaFree(x); cudaFree(y); cudaFree(z); cudaStreamDestroy(s);
}

static int grid_patch_rules() {
    grid_patch("grid 4 -> 16 (block 256)", 4, 256, 1024, 16, 256, 1024);
    grid_patch("grid 16 -> 4 (block 256)", 16, 256, 1024, 4, 256, 1024);
    grid_patch("block 256 -> 128, grid 8 -> 32", 8, 256, 1024, 32, 128, 512);
    grid_patch("dynamic shared memory 1024 -> 4096 bytes", 16, 256, 1024, 16, 256, 4096);
    grid_patch("dynamic shared memory 1024 -> 64 KiB (above the default 48 KiB)", 16, 256, 1024, 16, 256, 65536);
    return 0;
}

static int rules() {
    cudaStream_t s, s2; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    const long long LONG = 200000000; // ~0.1 s
    // 1. a non-timing event recorded by an external record node: observers after the launch see the graph's record
    cudaEvent_t ev; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    cudaGraphExec_t ge = capture("record external (no timing)", s, [&] { return cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal); });
    if (ge) { spin<<<1, 1, 0, s>>>(LONG); CK(cudaGraphLaunch(ge, s));
        printf("RULE record-node query after launch: %s (expect cudaErrorNotReady)\n", nm(cudaEventQuery(ev)));
        CK(cudaStreamSynchronize(s)); printf("RULE record-node query after sync: %s\n", nm(cudaEventQuery(ev))); }
    // 2. a timing event recorded by an external record node: elapsed time against an eager record
    cudaEvent_t t0, t1; CK(cudaEventCreate(&t0)); CK(cudaEventCreate(&t1));
    ge = capture("record external (timing event)", s, [&] { return cudaEventRecordWithFlags(t1, s, cudaEventRecordExternal); });
    if (ge) { CK(cudaEventRecord(t0, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s)); float ms = -1;
        cudaError_t r = cudaEventElapsedTime(&ms, t0, t1); printf("RULE timing event from a record node: elapsed=%s ms=%.4f\n", nm(r), ms); }
    // 3. an interprocess event in a record node
    cudaEvent_t ipc; CK(cudaEventCreateWithFlags(&ipc, cudaEventDisableTiming | cudaEventInterprocess));
    ge = capture("record external (IPC event)", s, [&] { return cudaEventRecordWithFlags(ipc, s, cudaEventRecordExternal); });
    if (ge) { cudaError_t r = cudaGraphLaunch(ge, s); CK(cudaStreamSynchronize(s)); printf("RULE IPC record node launch=%s query=%s\n", nm(r), nm(cudaEventQuery(ipc))); }
    // 4. an external wait node waits for the event's record as of the launch
    cudaEvent_t w; CK(cudaEventCreateWithFlags(&w, cudaEventDisableTiming));
    ge = capture("wait external", s, [&] { return cudaStreamWaitEvent(s, w, cudaEventWaitExternal); });
    if (ge) { spin<<<1, 1, 0, s2>>>(LONG); CK(cudaEventRecord(w, s2)); CK(cudaGraphLaunch(ge, s)); cudaEvent_t d; CK(cudaEventCreateWithFlags(&d, cudaEventDisableTiming));
        CK(cudaEventRecord(d, s)); printf("RULE wait node: graph done before s2's spin? %s (expect cudaErrorNotReady)\n", nm(cudaEventQuery(d))); CK(cudaDeviceSynchronize()); }
    // 5. a pageable host-to-device copy in a capture: read when captured, or when the graph runs?
    static float page[N]; float *d; CK(cudaMalloc(&d, N * 4)); for (int i = 0; i < N; i++) page[i] = 1;
    ge = capture("pageable H2D copy", s, [&] { return cudaMemcpyAsync(d, page, N * 4, cudaMemcpyHostToDevice, s); });
    if (ge) { for (int i = 0; i < N; i++) page[i] = 2; CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
        float h; CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost)); printf("RULE pageable copy node read host memory at %s\n", h == 2 ? "launch (eager stages at the call: encore ends the sequence)" : "capture"); }
    // 6. patching a captured copy, memset and record node in the executable graph (core/graphs/nodes.c enc_op_patch)
    float *pa, *pb, *da, *db; CK(cudaMallocHost(&pa, N * 4)); CK(cudaMallocHost(&pb, N * 4)); CK(cudaMalloc(&da, N * 4)); CK(cudaMalloc(&db, N * 4));
    for (int i = 0; i < N; i++) { pa[i] = 1; pb[i] = 3; }
    cudaGraph_t g = nullptr; cudaGraphExec_t gx = nullptr; cudaEvent_t ea, eb;
    CK(cudaEventCreateWithFlags(&ea, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&eb, cudaEventDisableTiming));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CK(cudaMemcpyAsync(da, pa, N * 4, cudaMemcpyHostToDevice, s));
    CK(cudaMemsetAsync(db, 0, N * 4, s));
    CK(cudaEventRecordWithFlags(ea, s, cudaEventRecordExternal));
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&gx, g, 0));
    size_t nn = 0; CK(cudaGraphGetNodes(g, nullptr, &nn)); std::vector<cudaGraphNode_t> nodes(nn); CK(cudaGraphGetNodes(g, nodes.data(), &nn));
    CUcontext ctx; cuCtxGetCurrent(&ctx);
    for (size_t i = 0; i < nn; i++) {
        CUgraphNode n = (CUgraphNode)nodes[i]; CUgraphNodeType t; cuGraphNodeGetType(n, &t);
        if (t == CU_GRAPH_NODE_TYPE_MEMCPY) {
            CUDA_MEMCPY3D p; CUresult r = cuGraphMemcpyNodeGetParams(n, &p);
            printf("RULE copy node params: get=%d srcType=%d dstType=%d width=%zu height=%zu depth=%zu srcX=%zu\n", (int)r, (int)p.srcMemoryType, (int)p.dstMemoryType, p.WidthInBytes, p.Height, p.Depth, p.srcXInBytes);
            if (p.srcMemoryType == CU_MEMORYTYPE_HOST) p.srcHost = pb; else p.srcDevice = (CUdeviceptr)pb;
            printf("RULE copy node exec-set to another pinned source: %d (expect 0)\n", (int)cuGraphExecMemcpyNodeSetParams((CUgraphExec)gx, n, &p, ctx));
            CUDA_MEMCPY3D q = p; if (q.srcMemoryType == CU_MEMORYTYPE_HOST) { q.srcMemoryType = CU_MEMORYTYPE_DEVICE; q.srcDevice = (CUdeviceptr)db; q.srcHost = nullptr; } else q.srcDevice = (CUdeviceptr)db;
            printf("RULE copy node exec-set to a device source (pinned before): %d\n", (int)cuGraphExecMemcpyNodeSetParams((CUgraphExec)gx, n, &q, ctx));
        } else if (t == CU_GRAPH_NODE_TYPE_MEMSET) {
            CUDA_MEMSET_NODE_PARAMS p; CUresult r = cuGraphMemsetNodeGetParams(n, &p);
            printf("RULE memset node params: get=%d elementSize=%u width=%zu height=%zu\n", (int)r, p.elementSize, p.width, p.height);
            p.dst = (CUdeviceptr)da; p.value = 7;
            printf("RULE memset node exec-set to another device buffer and value: %d (expect 0)\n", (int)cuGraphExecMemsetNodeSetParams((CUgraphExec)gx, n, &p, ctx));
        } else if (t == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
            printf("RULE record node exec-set to another event: %d (expect 0)\n", (int)cuGraphExecEventRecordNodeSetEvent((CUgraphExec)gx, n, (CUevent)eb));
        }
    }
    CK(cudaGraphLaunch(gx, s)); CK(cudaStreamSynchronize(s));
    float h2[2]; CK(cudaMemcpy(&h2[0], da, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&h2[1], db, 4, cudaMemcpyDeviceToHost));
    printf("RULE patched graph ran: da[0]=%g (memset 7 after copy of 3: expect bits 7) db[0]=%g eb query=%s ea query=%s\n", h2[0], h2[1], nm(cudaEventQuery(eb)), nm(cudaEventQuery(ea)));
    // 7. event record flags outside a capture
    printf("RULE record external outside capture: %s\n", nm(cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal))); cudaGetLastError();
    CK(cudaDeviceSynchronize());
    event_patch_rules(s);
    same_event_wait_then_record(s, s2);
    return 0;
}

// 16: a copy node (host to device, pinned) and a memset node, captured at half of N, patched to N and to N/4;
// what the graph wrote against what the eager calls write (the device buffer filled with 9 before each launch).
static void copy_size_case(cudaStream_t s, cudaGraphExec_t gx, CUgraphNode cn, CUgraphNode mn, float *pa, float *da,
                           float *dm, size_t bytes, const char *what) {
    CUcontext ctx; cuCtxGetCurrent(&ctx);
    CUDA_MEMCPY3D p; cuGraphMemcpyNodeGetParams(cn, &p); p.WidthInBytes = bytes;
    int rc = (int)cuGraphExecMemcpyNodeSetParams((CUgraphExec)gx, cn, &p, ctx);
    CUDA_MEMSET_NODE_PARAMS m; cuGraphMemsetNodeGetParams(mn, &m); m.width = bytes;
    int rm = (int)cuGraphExecMemsetNodeSetParams((CUgraphExec)gx, mn, &m, ctx);
    std::vector<float> want(N), got(N); std::vector<unsigned char> wantm(N * 4), gotm(N * 4);
    CK(cudaMemset(da, 0, N * 4)); CK(cudaMemset(dm, 9, N * 4));
    CK(cudaMemcpyAsync(da, pa, bytes, cudaMemcpyHostToDevice, s)); CK(cudaMemsetAsync(dm, 5, bytes, s)); CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(want.data(), da, N * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(wantm.data(), dm, N * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemset(da, 0, N * 4)); CK(cudaMemset(dm, 9, N * 4));
    cudaError_t lr = cudaGraphLaunch(gx, s); cudaError_t sr = cudaStreamSynchronize(s);
    CK(cudaMemcpy(got.data(), da, N * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(gotm.data(), dm, N * 4, cudaMemcpyDeviceToHost));
    printf("RULE copy size %s: copy exec-set %d, memset exec-set %d, launch %s/%s, copy = eager: %s, memset = eager: %s\n", what, rc, rm,
           nm(lr), nm(sr), want == got ? "yes" : "no", wantm == gotm ? "yes" : "no");
}

static int copy_size_rules() {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *pa, *da, *dm; CK(cudaMallocHost(&pa, N * 4)); CK(cudaMalloc(&da, N * 4)); CK(cudaMalloc(&dm, N * 4));
    for (int i = 0; i < N; i++) pa[i] = (float)(i + 1);
    cudaGraph_t g; cudaGraphExec_t gx;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CK(cudaMemcpyAsync(da, pa, N * 2, cudaMemcpyHostToDevice, s)); // half of N floats, in bytes
    CK(cudaMemsetAsync(dm, 5, N * 2, s));
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&gx, g, 0));
    size_t nn = 0; CK(cudaGraphGetNodes(g, nullptr, &nn)); std::vector<cudaGraphNode_t> nodes(nn); CK(cudaGraphGetNodes(g, nodes.data(), &nn));
    CUgraphNode cn = nullptr, mn = nullptr;
    for (size_t i = 0; i < nn; i++) { CUgraphNodeType t; cuGraphNodeGetType((CUgraphNode)nodes[i], &t);
        if (t == CU_GRAPH_NODE_TYPE_MEMCPY) cn = (CUgraphNode)nodes[i]; else if (t == CU_GRAPH_NODE_TYPE_MEMSET) mn = (CUgraphNode)nodes[i]; }
    if (!cn || !mn) { printf("RULE copy size: nodes not found\n"); return 1; }
    copy_size_case(s, gx, cn, mn, pa, da, dm, N * 2, "as captured (N/2 floats)");
    copy_size_case(s, gx, cn, mn, pa, da, dm, N * 4, "larger (N floats)");
    copy_size_case(s, gx, cn, mn, pa, da, dm, N, "smaller (N/4 floats)");
    copy_size_case(s, gx, cn, mn, pa, da, dm, 4, "one float");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: gpu_nodes_probe WORKLOAD [iters] | rules (see the top of the file)\n"); return 2; }
    int dev = 0; if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) return 77;
    setvbuf(stdout, nullptr, _IOLBF, 0); // each RULE line out at once: a crash or a timeout keeps what came before
    if (!strcmp(argv[1], "rules")) return rules();
    if (!strcmp(argv[1], "attrpatch")) return attr_patch_rules();
    if (!strcmp(argv[1], "gridpatch")) return grid_patch_rules();
    if (!strcmp(argv[1], "copysize")) return copy_size_rules();
    if (!strcmp(argv[1], "rule13")) {
        cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        patched_event_destroyed(s);
        return 0;
    }
    return workload(argv[1], argc > 2 ? atoi(argv[2]) : 2000);
}
