/* Stream attributes: a graph's kernel nodes keep the access-policy window
 * and memory-sync domain of the stream they were captured on (encore's), and
 * a graph launch applies only the launch stream's priority to them, not its
 * other attributes. A replayed sequence must run as it would eagerly. The
 * simulated driver counts the kernels run with an access-policy window and
 * the sum of its sizes (sim.apw_kernels, sim.apw_bytes), the kernels run in
 * a memory-sync domain other than the default (sim.domain_kernels) and at a
 * priority other than 0 (sim.priority_kernels, sim.priority_sum).
 *
 * Three phases of a hot loop on one stream: as created; with an attribute
 * set on the stream (cuStreamSetAttribute); with it set back.
 *   prog_stream_attrs window    an access-policy window over x
 *   prog_stream_attrs domain    the remote memory-sync domain
 *   prog_stream_attrs copy      a window copied from another stream
 *                               (cuStreamCopyAttributes), then the attributes
 *                               of a fresh stream copied back
 *   prog_stream_attrs priority  priority -4 (graphs launched into the
 *                               stream run at it: the loop replays throughout) */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define PHASE 20

static const char *mode;
static CUstream s, donor, fresh;
static CUdeviceptr x, y;

/* Phase 2 (on = 1): the attribute is set; phase 3 (on = 0): set back. */
static void set_attribute(int on) {
    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    if (!strcmp(mode, "window") || !strcmp(mode, "copy")) {
        v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)x;
        v.accessPolicyWindow.num_bytes = on ? N * sizeof(uint32_t) : 0;
        v.accessPolicyWindow.hitRatio = 0.6f;
        v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
        v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
        if (!strcmp(mode, "window")) {
            CK(drv.cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
        } else {
            CK(drv.cuStreamSetAttribute(donor, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
            CK(drv.cuStreamCopyAttributes(s, on ? donor : fresh));
        }
    } else if (!strcmp(mode, "domain")) {
        v.memSyncDomain = on ? CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE : CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
        CK(drv.cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
    } else {
        v.priority = on ? -4 : 0;
        CK(drv.cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
    }
}

int main(int argc, char **argv) {
    mode = argc == 2 ? argv[1] : "";
    if (strcmp(mode, "window") && strcmp(mode, "domain") && strcmp(mode, "copy") && strcmp(mode, "priority"))
        prog_die("usage: prog_stream_attrs window|domain|copy|priority");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    s = prog_stream(CU_STREAM_NON_BLOCKING);
    donor = prog_stream(CU_STREAM_NON_BLOCKING);
    fresh = prog_stream(CU_STREAM_NON_BLOCKING);
    x = prog_alloc(N);
    y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    for (int it = 0; it < 3 * PHASE; it++) {
        if (it == PHASE) set_attribute(1);
        if (it == 2 * PHASE) set_attribute(0);
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        printf("iteration %2d y %016llx\n", it, (unsigned long long)prog_hash_dev(s, y, N));
    }
    prog_report_launches();
    return 0;
}
