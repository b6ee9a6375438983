// The graph-updater kernel the driver-API probe loads as a module (devupdate_driver_probe.c), as encore would:
// built with relocatable device code and linked against the device runtime (cudadevrt) into one cubin,
//   nvcc -arch=sm_90 -rdc=true -c devupdate_updater.cu -o u.o && nvcc -arch=sm_90 -dlink u.o -lcudadevrt -cubin -o updater.cubin
// and loaded from its bytes with cuModuleLoadData (no CUDA runtime in the process's host code). Each launch of
// the graph it heads takes the next slot of a ring in page-locked host memory (its own counter, in device memory)
// and applies that slot's updates to the graph's device-updatable kernel nodes, one thread an update.
#include <cuda_runtime.h>

#include "devupdate_slot.h"

extern "C" __global__ void encore_updater(enc_dev_slot *ring, unsigned ring_mask, unsigned *counter) {
    __shared__ enc_dev_slot *s;
    if (threadIdx.x == 0) s = &ring[*counter & ring_mask];
    __syncthreads();
    unsigned i = threadIdx.x;
    if (i < s->n) {
        const enc_dev_update *u = &s->u[i];
        cudaGraphDeviceNode_t node = (cudaGraphDeviceNode_t)u->node;
        cudaError_t e = u->kind == ENC_DEV_PARAM ? cudaGraphKernelNodeSetParam(node, u->offset, u->value, u->size)
                                                : cudaGraphKernelNodeSetGridDim(node, dim3(u->grid[0], u->grid[1], u->grid[2]));
        if (e != cudaSuccess) s->rc = (int)e;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        s->done = 1;
        *counter += 1;
    }
}
