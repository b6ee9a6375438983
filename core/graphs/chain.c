/* encore: a captured graph's nodes, in launch order, for patching (learn.c captures, replay.c patches).
 *
 * Capturing one stream gives a chain; each node is checked against the launch (or stream operation) it is
 * said to be, so that a patch names a node only where it is certain which launch it is. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/log.h"
#include "core/graphs/chain.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"

/* node's type, for a debug line (-1 if the driver does not say). */
static int node_type(CUgraphNode node) {
    CUgraphNodeType type;
    return enc_drv.graphNodeGetType(node, &type) == CUDA_SUCCESS ? (int)type : -1;
}

/* node's dependencies (at most *nd into d), of any edge kind: a
 * programmatic edge orders the nodes as a plain one does, for this purpose. */
static CUresult node_dependencies(CUgraphNode node, CUgraphNode *d, size_t *nd) {
    if (!enc_drv.graphNodeGetDependenciesEdges) return enc_drv.graphNodeGetDependencies(node, d, nd);
    CUgraphEdgeData edges[2];
    return *nd <= 2 ? enc_drv.graphNodeGetDependenciesEdges(node, d, edges, nd) : CUDA_ERROR_INVALID_VALUE;
}

/* Each node's single dependency, as an index into all[] (-1: none). 0 if a
 * node has more than one, or one outside all[]. */
static int dependency_indices(CUgraphNode *all, uint32_t n, int32_t *dep) {
    for (uint32_t i = 0; i < n; i++) {
        CUgraphNode d[2];
        size_t nd = 2;
        CUresult r = node_dependencies(all[i], d, &nd);
        if (r != CUDA_SUCCESS) {
            ENC_DEBUG("a graph of %u nodes cannot be walked: the dependencies of node %u (type %d) were refused "
                      "(CUDA error %d)",
                      n, i, node_type(all[i]), (int)r);
            return 0;
        }
        dep[i] = -1;
        for (uint32_t j = 0; nd == 1 && j < n; j++)
            if (all[j] == d[0]) dep[i] = (int32_t)j;
        if (nd > 1 || (nd == 1 && dep[i] < 0)) {
            ENC_DEBUG("a graph of %u nodes is not a chain: node %u (type %d) has %zu dependencies", n, i,
                      node_type(all[i]), nd);
            return 0;
        }
    }
    return 1;
}

/* Is `node` the kernel node of launch r (kernel, configuration, argument
 * bytes)? Sets *func to the function the node names. */
static int node_is_launch(CUgraphNode node, const enc_rec *r, const unsigned char *arena, CUfunction *func) {
    CUgraphNodeType type;
    CUDA_KERNEL_NODE_PARAMS_v1 kp;
    const enc_layout *L = r->L;
    if (L->is_op) {
        *func = NULL;
        return enc_op_node_ok(node, r);
    }
    int ok = enc_drv.graphNodeGetType(node, &type) == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_KERNEL &&
             enc_drv.graphKernelNodeGetParams(node, &kp) == CUDA_SUCCESS && (kp.func == r->f || L->is_kernel) &&
             kp.gridDimX == r->grid[0] && kp.gridDimY == r->grid[1] && kp.gridDimZ == r->grid[2] &&
             kp.blockDimX == r->block[0] && kp.blockDimY == r->block[1] && kp.blockDimZ == r->block[2] &&
             kp.sharedMemBytes == r->smem && (L->nparams == 0 || kp.kernelParams);
    for (uint32_t j = 0; ok && j < L->nparams; j++)
        ok = kp.kernelParams[j] &&
             memcmp(kp.kernelParams[j], arena + r->arg_off + L->off[j], enc_layout_size(L, j)) == 0;
    if (!ok || !kp.func) return 0; /* a patch must name the node's function */
    *func = kp.func;
    return 1;
}

/* Walk the chain from its root: chain[i] is the node that depends on
 * chain[i - 1] alone, checked against launch i. */
static int walk_chain(CUgraphNode *all, const int32_t *dep, const enc_rec *recs, const unsigned char *arena, uint32_t n,
                      enc_graph_node *chain) {
    int32_t prev = -1;
    for (uint32_t i = 0; i < n; i++) {
        int32_t next = -1;
        for (uint32_t j = 0; j < n; j++)
            if (dep[j] == prev) {
                if (next >= 0) return 0; /* a fork: not a chain */
                next = (int32_t)j;
            }
        if (next < 0) return 0;
        chain[i].node = all[next];
        prev = next;
        if (!node_is_launch(chain[i].node, &recs[i], arena, &chain[i].func)) {
            ENC_DEBUG("graph node %u of %u (type %d) is not its launch %s", i, n, node_type(chain[i].node),
                      recs[i].L->name);
            return 0;
        }
        chain[i].ev = enc_op_event(&recs[i], arena);
    }
    return 1;
}

enc_graph_node *enc_chain_nodes(CUgraph g, const enc_rec *recs, const unsigned char *arena, uint32_t n) {
    if (!enc_drv.graphGetNodes || !enc_drv.graphNodeGetDependencies || !enc_drv.graphNodeGetType ||
        !enc_drv.graphKernelNodeGetParams || !enc_drv.graphExecKernelNodeSetParams)
        return NULL;
    size_t cnt = 0;
    if (enc_drv.graphGetNodes(g, NULL, &cnt) != CUDA_SUCCESS || cnt != n) {
        ENC_DEBUG("a graph captured from %u launches has %zu nodes", n, cnt);
        return NULL;
    }
    CUgraphNode *all = malloc(n * sizeof *all);
    enc_graph_node *chain = malloc(n * sizeof *chain);
    int32_t *dep = malloc(n * sizeof *dep);
    int ok = all && chain && dep && enc_drv.graphGetNodes(g, all, &cnt) == CUDA_SUCCESS && cnt == n;
    ok = ok && dependency_indices(all, n, dep) && walk_chain(all, dep, recs, arena, n, chain);
    free(all);
    free(dep);
    if (!ok) {
        free(chain);
        return NULL;
    }
    return chain;
}
