// What patching a graph's kernel nodes costs on a real GPU, host and wall time (issue 30:
// "patching many nodes costs time: measure per node and decide").
//
// One graph of N tiny kernels in a chain, replayed ITERS times a block in each of these
// ways, the blocks interleaved (ROUNDS rounds, the order turned each round):
//   eager      the N kernels launched one by one (the yardstick)
//   plain      the graph launched as captured
//   args-K     K kernel nodes patched first (cudaGraphExecKernelNodeSetParams), a scalar argument
//              changed, the grid kept
//   grid-K     K kernel nodes patched first with another grid (two grids in turn) and its length
//   two-execs  two graphs of the two grids, launched in turn, none patched (a graph per shape)
//   node-K     as args-K through the generic entry point (cudaGraphExecNodeSetParams, CUDA 12.2+):
//              does it cost the host less a node?
// each with a synchronize after every iteration ("sync": a serving loop that reads each answer)
// and with one every 64 iterations ("async": a loop that runs ahead).
//
//   patch_cost [--n N] [--iters I] [--rounds R]
//
// Output: one line per way and regime, the medians over rounds:
//   RESULT way=<way> regime=<sync|async> host_us=<API time an iteration> wall_us=<wall an iteration>
//          per_node_host_us=<(host - plain's host) / K, patched ways>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "patch_cost: %s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)

__global__ void bump(float *x, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5f + v;
}

static double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Kernel {
    float *x;
    int n;
    float v;
    void *args[3];
    void bind() { args[0] = &x, args[1] = &n, args[2] = &v; }
};

static const int BLOCK = 128;
static const int LEN_A = 64 * BLOCK, LEN_B = 40 * BLOCK; // two "batch sizes"

// k's node over `len` elements (k.n set to it: the parameters point at k's fields, and are copied by the call).
static cudaKernelNodeParams node_params(Kernel &k, int len) {
    k.n = len;
    cudaKernelNodeParams p = {};
    p.func = (void *)bump;
    p.gridDim = dim3((len + BLOCK - 1) / BLOCK);
    p.blockDim = dim3(BLOCK);
    p.kernelParams = k.args;
    return p;
}

static cudaGraphExec_t build(cudaStream_t s, std::vector<Kernel> &ks, int len, std::vector<cudaGraphNode_t> &nodes) {
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    nodes.clear();
    for (auto &k : ks) { // a chain, as a stream capture of one stream makes it
        int n = k.n;
        cudaKernelNodeParams p = node_params(k, len);
        cudaGraphNode_t nd;
        CK(cudaGraphAddKernelNode(&nd, g, nodes.empty() ? nullptr : &nodes.back(), nodes.empty() ? 0 : 1, &p));
        nodes.push_back(nd);
        k.n = n;
    }
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphUpload(e, s));
    return e;
}

int main(int argc, char **argv) {
    int N = 16, ITERS = 400, ROUNDS = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) N = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters")) ITERS = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) ROUNDS = atoi(argv[i + 1]);
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<Kernel> ks(N);
    for (auto &k : ks) {
        CK(cudaMalloc(&k.x, LEN_A * sizeof(float)));
        CK(cudaMemset(k.x, 0, LEN_A * sizeof(float)));
        k.n = LEN_A;
        k.v = 1.0f;
        k.bind();
    }
    std::vector<cudaGraphNode_t> nodesA, nodesB;
    cudaGraphExec_t ea = build(s, ks, LEN_A, nodesA), eb = build(s, ks, LEN_B, nodesB);
    if ((int)nodesA.size() != N) {
        fprintf(stderr, "patch_cost: %zu nodes found, %d expected\n", nodesA.size(), N);
        return 1;
    }
    std::vector<std::string> ways = {"eager", "plain", "two-execs"};
    std::vector<int> ks_list = {1, 6, N};
    for (int k : ks_list) ways.push_back("args-" + std::to_string(k));
    for (int k : ks_list) ways.push_back("grid-" + std::to_string(k));
    for (int k : ks_list) ways.push_back("node-" + std::to_string(k));
    const char *regimes[2] = {"sync", "async"};
    // results[way][regime] = per-round (host, wall)
    std::vector<std::vector<std::vector<double>>> host(ways.size(), std::vector<std::vector<double>>(2)),
        wall(ways.size(), std::vector<std::vector<double>>(2));
    long it_global = 0;
    for (int r = 0; r < ROUNDS; r++) {
        std::vector<size_t> order(ways.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = (i + r) % order.size();
        if (r & 1) std::reverse(order.begin(), order.end());
        for (int reg = 0; reg < 2; reg++)
            for (size_t oi : order) {
                const std::string &w = ways[oi];
                int k = 0, grid = 0;
                if (!w.compare(0, 5, "args-")) k = atoi(w.c_str() + 5);
                if (!w.compare(0, 5, "grid-")) k = atoi(w.c_str() + 5), grid = 1;
                int generic = !w.compare(0, 5, "node-");
                if (generic) k = atoi(w.c_str() + 5);
                CK(cudaStreamSynchronize(s));
                double api = 0, t0 = now_us();
                for (int it = 0; it < ITERS; it++, it_global++) {
                    double a0 = now_us();
                    if (w == "eager") {
                        for (auto &kk : ks) bump<<<LEN_A / BLOCK, BLOCK, 0, s>>>(kk.x, LEN_A, kk.v);
                    } else if (w == "plain") {
                        CK(cudaGraphLaunch(ea, s));
                    } else if (w == "two-execs") {
                        CK(cudaGraphLaunch(it & 1 ? eb : ea, s));
                    } else {
                        int len = grid && (it & 1) ? LEN_B : LEN_A;
                        for (int j = 0; j < k; j++) {
                            ks[j].v = grid ? 1.0f : (float)(it_global & 7);
                            cudaKernelNodeParams p = node_params(ks[j], len);
                            if (generic) {
                                cudaGraphNodeParams np = {};
                                np.type = cudaGraphNodeTypeKernel;
                                np.kernel.func = p.func;
                                np.kernel.gridDim = p.gridDim;
                                np.kernel.blockDim = p.blockDim;
                                np.kernel.kernelParams = p.kernelParams;
                                CK(cudaGraphExecNodeSetParams(ea, nodesA[j], &np));
                            } else {
                                CK(cudaGraphExecKernelNodeSetParams(ea, nodesA[j], &p));
                            }
                        }
                        CK(cudaGraphLaunch(ea, s));
                    }
                    api += now_us() - a0;
                    if (reg == 0 || (it & 63) == 63) CK(cudaStreamSynchronize(s));
                }
                CK(cudaStreamSynchronize(s));
                host[oi][reg].push_back(api / ITERS);
                wall[oi][reg].push_back((now_us() - t0) / ITERS);
                for (int j = 0; j < k; j++) { // the graph's grids as built again, for the next way's block
                    cudaKernelNodeParams p = node_params(ks[j], LEN_A);
                    CK(cudaGraphExecKernelNodeSetParams(ea, nodesA[j], &p));
                }
            }
    }
    auto med = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    for (int reg = 0; reg < 2; reg++) {
        double plain_host = med(host[1][reg]);
        for (size_t i = 0; i < ways.size(); i++) {
            int k = 0;
            if (!ways[i].compare(0, 5, "args-") || !ways[i].compare(0, 5, "grid-") || !ways[i].compare(0, 5, "node-")) k = atoi(ways[i].c_str() + 5);
            printf("RESULT way=%s regime=%s host_us=%.2f wall_us=%.2f", ways[i].c_str(), regimes[reg], med(host[i][reg]),
                   med(wall[i][reg]));
            if (k) printf(" per_node_host_us=%.2f", (med(host[i][reg]) - plain_host) / k);
            printf("\n");
        }
    }
    return 0;
}
