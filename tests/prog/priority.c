/* Priorities: a replayed graph must run its launches at the priority they
 * would have had eagerly. The simulated driver counts the kernels that ran at
 * a priority other than 0 and the sum of their priorities
 * (sim.priority_kernels, sim.priority_sum), which must equal the run without
 * encore's.
 *
 *   prog_priority stream        a stream created with priority -2, plain
 *                               launches (a graph launched into it runs its
 *                               nodes at -2)
 *   prog_priority launch-attr   a stream of priority 0, launches with
 *                               CU_LAUNCH_ATTRIBUTE_PRIORITY -3 (a graph
 *                               keeps node priorities only when instantiated
 *                               with CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)
 *   prog_priority mixed         a stream created with priority -2, half of
 *                               the launches with CU_LAUNCH_ATTRIBUTE_PRIORITY
 *                               -3 (with node priorities, the other nodes
 *                               would run at the capturing stream's priority)
 *   prog_priority mixed-default the same on a stream of priority 0
 *   prog_priority mixed-set     the same, and halfway through the stream's
 *                               priority is set to -2 (cuStreamSetAttribute) */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 40

int main(int argc, char **argv)
{
    int attr = argc > 1 && !strcmp(argv[1], "launch-attr");
    int mixed = argc > 1 && !strncmp(argv[1], "mixed", 5);
    int at_zero = attr || (mixed && strcmp(argv[1], "mixed")); /* the stream's priority is 0 */
    int set_half = mixed && !strcmp(argv[1], "mixed-set");
    if (argc != 2 || (!attr && !mixed && strcmp(argv[1], "stream")) ||
        (mixed && strcmp(argv[1], "mixed") && strcmp(argv[1], "mixed-default") && !set_half))
        prog_die("usage: prog_priority stream|launch-attr|mixed|mixed-default|mixed-set");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s;
    CK(drv.cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, at_zero ? 0 : -2));
    int prio = 1;
    CK(drv.cuStreamGetPriority(s, &prio));
    printf("stream priority %d\n", prio);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    a.value.priority = -3;
    uint32_t n = N, salt = 5, three = 3;
    void *pm[] = {&x, &salt, &n}, *pa[] = {&y, &x, &n}, *ps[] = {&y, &n}, *px[] = {&x, &y, &three, &n};
    for (int it = 0; it < ITERATIONS; it++) {
        if (set_half && it == ITERATIONS / 2) {
            CUstreamAttrValue v;
            memset(&v, 0, sizeof v);
            v.priority = -2;
            CK(drv.cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
        }
        prog_launch_ex(k.mix, PROG_GRID(N), PROG_BLOCK, 0, s, pm, &a, attr || mixed ? 1 : 0);
        prog_launch_ex(k.add, PROG_GRID(N), PROG_BLOCK, 0, s, pa, &a, attr ? 1 : 0);
        prog_launch_ex(k.stamp, PROG_GRID(N), PROG_BLOCK, 0, s, ps, &a, attr || mixed ? 1 : 0);
        prog_launch_ex(k.axpy, PROG_GRID(N), PROG_BLOCK, 0, s, px, &a, attr ? 1 : 0);
        printf("iteration %2d y %016llx\n", it, (unsigned long long)prog_hash_dev(s, y, N));
    }
    prog_report_launches();
    return 0;
}
