/* Kernel names as people write them (core/observe/names.c): ENCORE_INCLUDE and
 * ENCORE_EXCLUDE patterns match a kernel by the name the driver gives or by
 * its readable part. */
#include <string.h>

#include "core/observe/names.h"
#include "testhelper.h"

int main(int argc, char **argv) {
    th_init(argc, argv);

    TEST("names: a pattern matches a C kernel's name") {
        EXPECT(enc_name_matches("k_*", "k_axpy"));
        EXPECT(!enc_name_matches("gemm*", "k_axpy"));
    }

    TEST("names: a pattern matches a mangled C++ kernel by its readable name") {
        /* NCCL's all-reduce kernel, as the driver names it on two H100s */
        const char *nccl = "_Z39ncclDevKernel_AllReduce_Sum_u32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
        EXPECT(enc_name_matches("nccl*", nccl));
        EXPECT(enc_name_matches("ncclDevKernel_AllReduce*", nccl));
        EXPECT(enc_name_matches("at::native::*",
                                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_"));
        EXPECT(!enc_name_matches("at::native::*", nccl));
    }

    TEST("names: a pattern still matches the mangled name itself") {
        EXPECT(enc_name_matches("_Z39nccl*", "_Z39ncclDevKernel_AllReduce_Sum_u32_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
    }

    TEST("names: several comma-separated patterns, spaces after commas, empty ones ignored") {
        EXPECT(enc_name_matches("gemm*, ,k_ax*", "k_axpy"));
        EXPECT(!enc_name_matches(",,", "k_axpy"));
    }

    TEST("names: the readable part of a name that is not mangled is not made up") {
        char out[64];
        EXPECT(!enc_name_readable("plain_c_kernel", out, sizeof out));
        EXPECT(!enc_name_readable("_Z99short", out, sizeof out));
        EXPECT(enc_name_readable("_Z6k_axpyPfPKffi", out, sizeof out) && !strcmp(out, "k_axpy"));
    }

    return th_report();
}
