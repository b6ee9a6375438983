/* Hot sequences launched with cuLaunchKernelEx and with the `extra`
 * argument-buffer form of cuLaunchKernel, where a few iterations differ from
 * the hot sequence only inside the launch attributes or the argument buffer.
 *
 *   prog_launch_forms ex-attributes  cuLaunchKernelEx with a priority attribute and a
 *                                    dynamic shared-memory size; odd iterations change
 *                                    the priority (a configuration difference)
 *   prog_launch_forms extra          packed(a, b, c, dst, n) through CU_LAUNCH_PARAM_BUFFER_POINTER;
 *                                    odd iterations change the high half of b
 *                                    (bytes 12..15 of the buffer: an argument difference)
 *   prog_launch_forms unknown-attribute  the ex-attributes loop with a launch attribute whose id
 *                                    no header names (the simulated driver takes it and ignores
 *                                    it): a launch encore cannot know how to re-issue */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 40

static int odd_iteration(int it)
{
    return it == 12 || it == 13 || it == 25;
}

int main(int argc, char **argv)
{
    int extra = argc > 1 && !strcmp(argv[1], "extra");
    int unknown = argc > 1 && !strcmp(argv[1], "unknown-attribute");
    if (argc != 2 || (!extra && !unknown && strcmp(argv[1], "ex-attributes")))
        prog_die("usage: prog_launch_forms ex-attributes|extra|unknown-attribute");
    prog_init();
    prog_kernels k;
    CUdeviceptr x, y;
    CUstream s = prog_stream_xy(&k, N, &x, &y);

    for (int it = 0; it < ITERATIONS; it++) {
        int odd = odd_iteration(it);
        uint32_t n = N;
        k_mix(&k, s, x, 5, N);
        if (extra) {
            unsigned char buf[40];
            uint8_t a = 9;
            uint64_t b = odd ? 0x0000000700000003ULL : 0x0000000500000003ULL;
            uint16_t c = 300;
            memset(buf, 0, sizeof buf);
            memcpy(buf + 0, &a, sizeof a);
            memcpy(buf + 8, &b, sizeof b);
            memcpy(buf + 16, &c, sizeof c);
            memcpy(buf + 24, &y, sizeof y);
            memcpy(buf + 32, &n, sizeof n);
            prog_launch_extra(k.packed, PROG_GRID(N), PROG_BLOCK, 0, s, buf, 36);
            k_add(&k, s, x, y, N);
            prog_launch_extra(k.packed, PROG_GRID(N), PROG_BLOCK, 0, s, buf, 36);
        } else {
            CUlaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = unknown ? (CUlaunchAttributeID)200 : CU_LAUNCH_ATTRIBUTE_PRIORITY;
            attr.value.priority = odd && !unknown ? 1 : 0;
            void *p_stamp[] = {&y, &n};
            prog_launch_ex(k.stamp, PROG_GRID(N), PROG_BLOCK, 256, s, p_stamp, &attr, 1);
            k_add(&k, s, x, y, N);
            void *p_add[] = {&y, &x, &n};
            prog_launch_ex(k.add, PROG_GRID(N), PROG_BLOCK, 0, s, p_add, &attr, 1);
        }
        unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N);
        printf("iteration %2d%s x %016llx y %016llx\n", it, odd ? " (differs)" : "", hx, hy);
    }
    prog_report_launches();
    return 0;
}
