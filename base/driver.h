/* encore: the real driver functions the engine calls itself.
 *
 * Resolved once from the real libcuda through its own cuGetProcAddress, at
 * the version encore was built against. Every call the engine makes through
 * these runs with enc_thr.guard set. */
#ifndef ENCORE_DRIVER_H
#define ENCORE_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

typedef struct enc_driver {
    PFN_cuGetProcAddress_v12000 getProcAddress;
    PFN_cuLaunchKernel_v4000 launchKernel;
    PFN_cuLaunchKernelEx_v11060 launchKernelEx;
    PFN_cuStreamBeginCapture_v10010 streamBeginCapture;
    PFN_cuStreamEndCapture_v10000 streamEndCapture;
    PFN_cuGraphInstantiateWithFlags_v11040 graphInstantiate;
    PFN_cuGraphLaunch_v10000 graphLaunch;
    PFN_cuGraphExecDestroy_v10000 graphExecDestroy;
    PFN_cuGraphDestroy_v10000 graphDestroy;
    PFN_cuStreamCreate_v2000 streamCreate;
    PFN_cuStreamGetFlags_v5050 streamGetFlags;
    PFN_cuStreamGetCtx_v9020 streamGetCtx;
    PFN_cuCtxGetCurrent_v4000 ctxGetCurrent;
    PFN_cuCtxPushCurrent_v4000 ctxPushCurrent;
    PFN_cuCtxPopCurrent_v4000 ctxPopCurrent;
    PFN_cuFuncGetParamInfo_v12040 funcGetParamInfo;
    PFN_cuKernelGetParamInfo_v12040 kernelGetParamInfo;
    PFN_cuFuncGetName_v12030 funcGetName;
    PFN_cuKernelGetName_v12030 kernelGetName;
    PFN_cuEventCreate_v2000 eventCreate;
    PFN_cuEventRecord_v2000 eventRecord;
    PFN_cuStreamWaitEvent_v3020 streamWaitEvent;
    /* optional: validating a held launch against the limits it must keep */
    PFN_cuFuncGetAttribute_v2020 funcGetAttribute;
    PFN_cuKernelGetAttribute_v12000 kernelGetAttribute;
    PFN_cuCtxGetDevice_v2000 ctxGetDevice;
    PFN_cuDeviceGetAttribute_v2000 deviceGetAttribute;
    /* optional: which module or library a function belongs to (without them,
     * every unload drops every layout), and freeing a thread's side stream */
    PFN_cuFuncGetModule_v11000 funcGetModule;
    PFN_cuKernelGetLibrary_v12050 kernelGetLibrary;
    PFN_cuLibraryGetModule_v12000 libraryGetModule;
    /* optional: which CUfunction a CUkernel is in the current context (without it, a changed
     * attribute of one kind of handle is taken to change every function of the other kind) */
    PFN_cuKernelGetFunction_v12000 kernelGetFunction;
    PFN_cuStreamDestroy_v4000 streamDestroy;
    PFN_cuEventDestroy_v4000 eventDestroy;
    /* optional: patching changed arguments into a captured graph */
    PFN_cuGraphGetNodes_v10000 graphGetNodes;
    PFN_cuGraphNodeGetDependencies_v10000 graphNodeGetDependencies;
    /* with edge data (CUDA 12.3): the only one that answers for a node whose
     * edge is programmatic (a launch with programmatic stream serialization:
     * llama.cpp's kernels); the one above refuses with CUDA_ERROR_LOSSY_QUERY */
    PFN_cuGraphNodeGetDependencies_v12030 graphNodeGetDependenciesEdges;
    PFN_cuGraphNodeGetType_v10000 graphNodeGetType;
    PFN_cuGraphKernelNodeGetParams_v10000 graphKernelNodeGetParams;
    PFN_cuGraphExecKernelNodeSetParams_v10010 graphExecKernelNodeSetParams;
    /* optional: patching copies, memsets and events (without them those nodes are not patched) */
    PFN_cuGraphMemcpyNodeGetParams_v10000 graphMemcpyNodeGetParams;
    PFN_cuGraphExecMemcpyNodeSetParams_v10020 graphExecMemcpyNodeSetParams;
    PFN_cuGraphMemsetNodeGetParams_v10000 graphMemsetNodeGetParams;
    PFN_cuGraphExecMemsetNodeSetParams_v10020 graphExecMemsetNodeSetParams;
    PFN_cuGraphExecEventRecordNodeSetEvent_v11010 graphExecEventRecordNodeSetEvent;
    PFN_cuGraphExecEventWaitNodeSetEvent_v11010 graphExecEventWaitNodeSetEvent;
    /* optional: which context a primary-context reset or release destroys */
    PFN_cuDevicePrimaryCtxGetState_v7000 devicePrimaryCtxGetState;
    PFN_cuDevicePrimaryCtxRetain_v7000 devicePrimaryCtxRetain;
    PFN_cuDevicePrimaryCtxRelease_v11000 devicePrimaryCtxRelease;
    /* optional: comparing a stream's attributes with encore's capture stream's */
    PFN_cuStreamGetAttribute_v11000 streamGetAttribute;
    /* optional: stream operations held as graph nodes (core/graphs/nodes.c; without them they end the sequence) */
    PFN_cuEventRecordWithFlags_v11010 eventRecordWithFlags;
    PFN_cuMemcpyAsync_v4000 memcpyAsync;
    PFN_cuMemsetD8Async_v3020 memsetD8Async;
    PFN_cuMemsetD16Async_v3020 memsetD16Async;
    PFN_cuMemsetD32Async_v3020 memsetD32Async;
    /* optional: device-side patches (ENCORE_DEVICE_PATCH, core/graphs/devpatch.c; without them, host patches) */
    PFN_cuModuleLoadData_v2000 moduleLoadData;
    PFN_cuModuleGetFunction_v2000 moduleGetFunction;
    PFN_cuMemHostAlloc_v2020 memHostAlloc;
    PFN_cuMemHostGetDevicePointer_v3020 memHostGetDevicePointer;
    PFN_cuMemFreeHost_v2000 memFreeHost;
    PFN_cuMemAlloc_v3020 memAlloc;
    PFN_cuStreamSynchronize_v2000 streamSynchronize;
} enc_driver;

extern enc_driver enc_drv;

/* Errors after which the context (or the process) runs no more CUDA work:
 * every later call returns them (cuda.h: "any further CUDA work will return
 * the same error"). A device-side assert leaves the context unusable too;
 * CUDA_ERROR_DEINITIALIZED: the driver is shutting down. */
static inline int enc_error_is_sticky(CUresult r) {
    switch ((int)r) {
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case 226: /* CUDA_ERROR_CONTAINED (not in every header encore builds with) */
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case 721: /* CUDA_ERROR_TENSOR_MEMORY_LEAK (idem) */
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE: return 1;
    default: return 0;
    }
}

/* dlopen the real libcuda (once); NULL if there is none. */
void *enc_libcuda(void);
/* The real dlsym (glibc's), found with dlvsym. */
void *enc_real_dlsym(void *handle, const char *name);
extern void *(*enc_real_dlsym_fn)(void *, const char *);
void *(*enc_real_dlsym_resolve(void))(void *, const char *);
/* Resolve enc_drv; returns 0 on success. Safe to call more than once. */
int enc_driver_resolve(void);
/* Does this address belong to the real libcuda? */
int enc_in_libcuda(const void *addr);

#endif
