// encore: the updater kernel of device-patched graphs (ENCORE_DEVICE_PATCH, core/graphs/devpatch.c).
//
// Compiled at build time (when a CUDA compiler is found) with relocatable device code and linked against the
// device runtime into one cubin per architecture, embedded in the library and loaded from its bytes with
// cuModuleLoadData: the library's host code stays driver-API only. A device-patched graph's first node: it
// takes its launch's slot of the ring (core/graphs/devslot.h) and applies the updates, one thread an update,
// to the graph's device-updatable kernel nodes, which run after it. On the H200 (driver 13.0) this path
// held (tests/bench/devupdate_driver_probe.c, 2026-11-29 call 92).
#include <cuda_runtime.h>

#include "devslot.h"

extern "C" __global__ void encore_updater(unsigned char *ring, unsigned mask, unsigned slot_bytes, unsigned *counter) {
    __shared__ enc_dev_slot *s;
    if (threadIdx.x == 0) s = (enc_dev_slot *)(ring + (size_t)(*counter & mask) * slot_bytes);
    __syncthreads();
    unsigned i = threadIdx.x;
    if (i < s->n) {
        const enc_dev_update *u = &s->u[i];
        cudaGraphDeviceNode_t node = (cudaGraphDeviceNode_t)u->node;
        cudaError_t e = cudaSuccess;
        if (u->kind & ENC_DEV_PARAM)
            e = cudaGraphKernelNodeSetParam(node, u->offset, (unsigned char *)s + u->value_off, u->size);
        if (e == cudaSuccess && (u->kind & ENC_DEV_GRID))
            e = cudaGraphKernelNodeSetGridDim(node, dim3(u->grid[0], u->grid[1], u->grid[2]));
        if (e != cudaSuccess) atomicCAS((int *)&s->rc, 0, (int)e);
    }
    __syncthreads();
    if (threadIdx.x == 0) { /* the count first: a slot seen done means this launch is counted (devpatch.c) */
        *counter += 1;
        __threadfence_system();
        s->done = 1;
    }
}
