/* What the GPU test programs gpu_do_no_harm.cu and gpu_never_wrong2.cu share:
 * CHECK (a failed CUDA runtime call is printed on stdout, where the suite
 * compares it, and ends the program with status 1) and a weighted checksum of
 * n floats of device memory, copied back with a blocking cudaMemcpy. */
#ifndef ENCORE_GPU_CHECK_H
#define ENCORE_GPU_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            printf("%s failed: %s (%d)\n", #call, cudaGetErrorName(e_), (int)e_);                    \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)

static inline double checksum(const float *d, int n) {
    float *h = (float *)malloc(n * sizeof(float));
    CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    double s = 0;
    for (int i = 0; i < n; i++) s += h[i] * (double)((i % 7) + 1);
    free(h);
    return s;
}

#endif
