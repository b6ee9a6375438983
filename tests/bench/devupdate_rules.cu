// Which device-side graph updates the driver takes, and what a device-updatable graph costs the GPU: the
// questions ENCORE_DEVICE_PATCH's first GPU runs left open (docs/bench/2026-11-29-h200-device-patches.md).
// On the H200 (driver 580.159.04) encore's updater had its updates refused (cudaErrorInvalidValue) in graphs
// holding copies, memsets or event nodes, and a node given its arguments and its grid in one launch changed
// results (two threads) or was refused (one thread). Each case below is one graph, replayed ITERS times with
// other values each launch, checked exactly against the host's arithmetic, and says how many launches had an
// update refused:
//   args            graph of N kernels, each node's argument updated (the baseline)
//   args+grid-one   a node's argument and its grid, by one thread one after the other
//   args+grid-two   the same by two threads at once
//   args+grid-apply the same by one cudaGraphKernelNodeUpdatesApply of two entries
//   grid            a node's grid only
//   memcpy          args, the graph holding a device-to-device copy node never changed
//   memcpy-host     args, that copy node given another source from the host before every launch
//   memset          args, the graph holding a memset node
//   event           args, the graph holding an event record node
// Then the GPU's time a launch, GPU-bound (launches queued, one synchronize): the graph as captured, the same
// with device-updatable nodes and an updater that applies nothing, and with every node's argument updated.
//
//   nvcc -O2 -rdc=true -arch=native devupdate_rules.cu -lcudadevrt -o devupdate_rules
//   devupdate_rules [--n N] [--iters I]
//
// Output: RESULT case=<case> refused=<launches with a refusal> first_error=<e> check=<ok|...>, then
// RESULT cost=<way> gpu_us_per_launch=<...>. A standalone program: no encore.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            printf("RESULT failed call=\"%s\" line=%d error=%s\n", #call, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)

enum { MAXN = 32, RING = 4, MAXU = 2 * MAXN, BLOCKS = 8, ELEMS = 64 };
enum { U_PARAM = 1, U_GRID = 2 };

struct Update {
    cudaGraphDeviceNode_t node;
    int kind; // U_PARAM, U_GRID or both (one thread applies both, param first)
    float v;
    unsigned grid;
};
struct Slot {
    int n, rc, mode; // mode 0: a thread an entry; 1: thread 0 all, in order; 2: one UpdatesApply
    Update u[MAXU];
};

// Block b of launch j adds v to x[j * BLOCKS + b]: the result depends on the node's argument and its grid.
struct AddArgs { // add's parameters as the driver lays them out
    float *x;
    int j;
    float v;
};
__global__ void add(float *x, int j, float v) {
    if (threadIdx.x == 0) x[j * BLOCKS + blockIdx.x] += v;
}

__device__ static cudaError_t apply_one(const Update &u) {
    cudaError_t e = cudaSuccess;
    if (u.kind & U_PARAM) e = cudaGraphKernelNodeSetParam(u.node, offsetof(AddArgs, v), &u.v, sizeof u.v);
    if (e == cudaSuccess && (u.kind & U_GRID)) e = cudaGraphKernelNodeSetGridDim(u.node, dim3(u.grid, 1, 1));
    return e;
}

__global__ void updater(Slot *ring, unsigned *counter) {
    Slot *s = &ring[*counter % RING];
    cudaError_t e = cudaSuccess;
    if (s->mode == 0) {
        if ((int)threadIdx.x < s->n) e = apply_one(s->u[threadIdx.x]);
    } else if (threadIdx.x == 0 && s->mode == 1) {
        for (int i = 0; i < s->n && e == cudaSuccess; i++) e = apply_one(s->u[i]);
    } else if (threadIdx.x == 0 && s->mode == 2) {
        __align__(16) unsigned char buf[MAXU * sizeof(cudaGraphKernelNodeUpdate)]; // no default constructor
        memset(buf, 0, sizeof buf);
        cudaGraphKernelNodeUpdate *up = reinterpret_cast<cudaGraphKernelNodeUpdate *>(buf);
        int k = 0;
        for (int i = 0; i < s->n; i++) {
            if (s->u[i].kind & U_PARAM) {
                up[k].node = s->u[i].node;
                up[k].field = cudaGraphKernelNodeFieldParam;
                up[k].updateData.param.pValue = &s->u[i].v;
                up[k].updateData.param.offset = offsetof(AddArgs, v);
                up[k].updateData.param.size = sizeof(float);
                k++;
            }
            if (s->u[i].kind & U_GRID) {
                up[k].node = s->u[i].node;
                up[k].field = cudaGraphKernelNodeFieldGridDim;
                up[k].updateData.gridDim = dim3(s->u[i].grid, 1, 1);
                k++;
            }
        }
        e = cudaGraphKernelNodeUpdatesApply(up, k);
    }
    if (e != cudaSuccess) atomicCAS(&s->rc, 0, (int)e);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system();
        *counter += 1;
    }
}

static int N = 8, ITERS = 400;
static float value(int it, int node) { return (float)((it * 7 + node * 3) % 13) * 0.25f; }
static unsigned grid_of(int it, int node) { return 1 + (unsigned)((it + node) % BLOCKS); }

struct Graph {
    cudaGraphExec_t exec = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphNode_t copy = nullptr;
    cudaGraphDeviceNode_t nodes[MAXN];
};

// Capture: the updater (unless `plain`), then N adds (device-updatable unless `plain`), with the extra node kind
// after the first add.
static Graph capture(cudaStream_t s, const std::string &extra, bool plain, Slot *ring_d, unsigned *counter,
                     float *x, float *scratch, cudaEvent_t ev) {
    Graph g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    if (!plain) updater<<<1, 64, 0, s>>>(ring_d, counter);
    for (int j = 0; j < N; j++) {
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeDeviceUpdatableKernelNode;
        at[0].val.deviceUpdatableKernelNode.deviceUpdatable = 1;
        at[0].val.deviceUpdatableKernelNode.devNode = nullptr;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(BLOCKS);
        cfg.blockDim = dim3(32);
        cfg.stream = s;
        cfg.attrs = plain ? nullptr : at;
        cfg.numAttrs = plain ? 0 : 1;
        CK(cudaLaunchKernelEx(&cfg, add, x, j, 0.0f));
        g.nodes[j] = at[0].val.deviceUpdatableKernelNode.devNode;
        if (j == 0 && extra == "memcpy") CK(cudaMemcpyAsync(scratch, scratch + ELEMS, ELEMS * sizeof(float), cudaMemcpyDeviceToDevice, s));
        if (j == 0 && extra == "memset") CK(cudaMemsetAsync(scratch, 0, ELEMS * sizeof(float), s));
        if (j == 0 && extra == "event") CK(cudaEventRecord(ev, s));
    }
    CK(cudaStreamEndCapture(s, &g.graph));
    if (extra == "memcpy") { // the copy node, for memcpy-host
        size_t cnt = 0;
        CK(cudaGraphGetNodes(g.graph, nullptr, &cnt));
        std::vector<cudaGraphNode_t> all(cnt);
        CK(cudaGraphGetNodes(g.graph, all.data(), &cnt));
        for (auto n : all) {
            cudaGraphNodeType t;
            CK(cudaGraphNodeGetType(n, &t));
            if (t == cudaGraphNodeTypeMemcpy) g.copy = n;
        }
    }
    CK(cudaGraphInstantiate(&g.exec, g.graph, 0));
    CK(cudaGraphUpload(g.exec, s));
    return g;
}

static void run_case(const std::string &name, cudaStream_t s, Slot *ring, Slot *ring_d, unsigned *counter, float *x,
                     float *scratch, cudaEvent_t ev) {
    std::string extra = name == "memcpy" || name == "memcpy-host" ? "memcpy" : name == "memset" ? "memset"
                        : name == "event"                                     ? "event"
                                                                              : "";
    bool grid = name.rfind("args+grid", 0) == 0 || name == "grid", args = name != "grid";
    int mode = name == "args+grid-one" ? 1 : name == "args+grid-apply" ? 2 : 0;
    CK(cudaMemset(x, 0, MAXN * BLOCKS * sizeof(float)));
    CK(cudaMemset(counter, 0, sizeof(unsigned)));
    for (int k = 0; k < RING; k++) ring[k].n = 0;
    CK(cudaDeviceSynchronize());
    Graph g = capture(s, extra, false, ring_d, counter, x, scratch, ev);
    std::vector<double> want(MAXN * BLOCKS, 0.0);
    int refused = 0, first = 0;
    for (int it = 0; it < ITERS; it++) {
        Slot &sl = ring[it % RING];
        if (it >= RING) { // the slot's last launch has run: read its verdict
            if (sl.rc) refused++, first = first ? first : sl.rc;
        }
        sl.rc = 0;
        sl.mode = mode;
        int k = 0;
        for (int j = 0; j < N; j++) {
            float v = args ? value(it, j) : 0.0f;
            unsigned gr = grid ? grid_of(it, j) : (unsigned)BLOCKS;
            if (name == "args+grid-two") { // two entries of one node, applied by two threads at once
                sl.u[k++] = {g.nodes[j], U_PARAM, v, gr};
                sl.u[k++] = {g.nodes[j], U_GRID, v, gr};
            } else {
                sl.u[k++] = {g.nodes[j], (args ? U_PARAM : 0) | (grid ? U_GRID : 0), v, gr};
            }
            for (unsigned b = 0; b < gr; b++) want[j * BLOCKS + b] += v;
        }
        sl.n = k;
        if (name == "memcpy-host" && g.copy) // another source each launch, set from the host
            CK(cudaGraphExecMemcpyNodeSetParams1D(g.exec, g.copy, scratch, scratch + ELEMS * (1 + it % 2),
                                                  ELEMS * sizeof(float), cudaMemcpyDeviceToDevice));
        CK(cudaGraphLaunch(g.exec, s));
        if (it % RING == RING - 1) CK(cudaStreamSynchronize(s)); // the ring is never overrun
    }
    CK(cudaStreamSynchronize(s));
    for (int k = 0; k < RING; k++)
        if (ring[k].rc) refused++, first = first ? first : ring[k].rc;
    std::vector<float> got(MAXN * BLOCKS);
    CK(cudaMemcpy(got.data(), x, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    std::string check = "ok";
    for (size_t i = 0; i < got.size() && check == "ok"; i++)
        if ((double)got[i] != want[i]) {
            char b[96];
            snprintf(b, sizeof b, "x[%zu]=%g,want=%g", i, (double)got[i], want[i]);
            check = b;
        }
    printf("RESULT case=%s refused=%d first_error=%d check=%s\n", name.c_str(), refused, first, check.c_str());
    fflush(stdout);
    CK(cudaGraphExecDestroy(g.exec));
    CK(cudaGraphDestroy(g.graph));
}

static void run_cost(const char *way, cudaStream_t s, Slot *ring, Slot *ring_d, unsigned *counter, float *x,
                     float *scratch, cudaEvent_t ev) {
    bool plain = !strcmp(way, "plain"), update = !strcmp(way, "updated");
    CK(cudaMemset(counter, 0, sizeof(unsigned)));
    for (int k = 0; k < RING; k++) {
        ring[k].n = 0;
        ring[k].mode = 0;
    }
    CK(cudaDeviceSynchronize());
    Graph g = capture(s, "", plain, ring_d, counter, x, scratch, ev);
    if (update) // the same slot contents for every launch: every node's argument
        for (int k = 0; k < RING; k++) {
            for (int j = 0; j < N; j++) ring[k].u[j] = {g.nodes[j], U_PARAM, 0.25f, BLOCKS};
            ring[k].n = N;
        }
    const int L = 2000;
    for (int w = 0; w < 50; w++) CK(cudaGraphLaunch(g.exec, s));
    CK(cudaStreamSynchronize(s));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < L; i++) CK(cudaGraphLaunch(g.exec, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    printf("RESULT cost=%s n=%d gpu_us_per_launch=%.2f\n", way, N, ms * 1000.0 / L);
    fflush(stdout);
    CK(cudaGraphExecDestroy(g.exec));
    CK(cudaGraphDestroy(g.graph));
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) N = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters")) ITERS = atoi(argv[i + 1]);
    }
    if (N < 1 || N > MAXN) N = 8;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Slot *ring, *ring_d;
    CK(cudaHostAlloc((void **)&ring, RING * sizeof(Slot), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&ring_d, ring, 0));
    unsigned *counter;
    float *x, *scratch;
    CK(cudaMalloc(&counter, sizeof(unsigned)));
    CK(cudaMalloc(&x, MAXN * BLOCKS * sizeof(float)));
    CK(cudaMalloc(&scratch, 3 * ELEMS * sizeof(float)));
    CK(cudaMemset(scratch, 0, 3 * ELEMS * sizeof(float)));
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const char *cases[] = {"args", "args+grid-one", "args+grid-two", "args+grid-apply", "grid",
                           "memcpy", "memcpy-host", "memset", "event"};
    for (const char *c : cases) run_case(c, s, ring, ring_d, counter, x, scratch, ev);
    for (const char *w : {"plain", "updatable-idle", "updated"}) run_cost(w, s, ring, ring_d, counter, x, scratch, ev);
    return 0;
}
