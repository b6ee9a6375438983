/* The program's own switch (core/path/switch.c): blocks of a loop alternate with
 * encore active and passing through, in one process, through the pseudo
 * entry point "encoreSetActive" that encore's cuGetProcAddress hands out
 * (tests/bench/encore_switch.h). Without encore the look-up fails and the
 * switch does nothing; the output is the same either way.
 *
 *   prog_switch [blocks (default 6)] [iterations per block (default 20)] [trial|ops]
 *
 * Each iteration: add(y, x) stamp(y) axpy(x, y, 3) mix(x, 7), then x is
 * copied back (a flush point). Blocks 0, 2, 4, ... are active, 1, 3, ...
 * passive. The switch comes in the middle of the first iteration of a
 * block, after its first two launches: switching off finds them held (the
 * sequence was captured and replays) and must issue them first. Prints the
 * checksums, and on stderr active_launches=N and passive_launches=N (the
 * launches made while encore was on and off) for the checks. With "trial",
 * blocks 1, 3, ... are trial blocks instead of passive ones: active with
 * ENCORE_TRIAL's settings (encoreSetActive(2), block letter T); their
 * launches are counted as passive_launches. With "ops", each iteration begins
 * with a memset of y (y = 2 before the add): a stream operation the engine
 * records and holds like a launch while encore is active, and must pass
 * through, unrecorded, while it is not. */
#include "prog.h"
#include "../bench/encore_switch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024u

int main(int argc, char **argv) {
    int blocks = argc > 1 ? atoi(argv[1]) : 6;
    int per_block = argc > 2 ? atoi(argv[2]) : 20;
    int trial = argc > 3 && strcmp(argv[3], "trial") == 0;
    int ops = argc > 3 && strcmp(argv[3], "ops") == 0;
    if (blocks < 1 || per_block < 1) prog_die("usage: prog_switch [blocks] [iterations per block] [trial|ops]");
    prog_init();
    encore_switch_fn sw = encore_switch_find();
    prog_kernels k;
    CUdeviceptr x, y;
    CUstream s = prog_stream_xy(&k, N, &x, &y);
    uint64_t counted[2] = {0, 0}, mark = prog_launches_made();
    int active = 1;
    for (int b = 0; b < blocks; b++) {
        for (int it = 0; it < per_block; it++) {
            if (ops) CK(drv.cuMemsetD32Async(y, 2, N, s));
            k_add(&k, s, y, x, N);
            k_stamp(&k, s, y, N);
            if (it == 0 && b > 0) { /* the block's state starts here, between held launches */
                uint64_t now = prog_launches_made();
                counted[active] += now - mark;
                mark = now;
                active = b % 2 == 0;
                if (encore_switch_set(sw, active ? 1 : trial ? 2 : 0) != 0) prog_die("encoreSetActive failed");
            }
            k_axpy(&k, s, x, y, 3, N);
            k_mix(&k, s, x, 7, N);
            printf("block %d iteration %2d x %016llx\n", b, it, (unsigned long long)prog_hash_dev(s, x, N));
        }
    }
    counted[active] += prog_launches_made() - mark;
    encore_switch_set(sw, 1);
    fprintf(stderr, "active_launches=%llu\npassive_launches=%llu\n", (unsigned long long)counted[1],
            (unsigned long long)counted[0]);
    prog_report_launches();
    return 0;
}
