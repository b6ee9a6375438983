/* encore: device-side patches (ENCORE_DEVICE_PATCH, a trial, off: devpatch.c). */
#ifndef ENCORE_DEVPATCH_H
#define ENCORE_DEVPATCH_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "core/graphs/devslot.h"
#include "core/state/stream_state.h"

/* A device-patched graph's own: its ring of slots and the node handles its updates name. */
typedef struct enc_devgraph {
    unsigned char *ring;       /* page-locked, mapped */
    CUdeviceptr ring_d;        /* the same, as the device sees it */
    uint32_t slot_bytes, mask; /* slots: mask + 1 (a power of two) */
    int ctx_slot, counter;     /* its context's entry, and its counter there */
    uint64_t *launched;        /* the host's count of the counter's launches (in the context's entry) */
    uint8_t *dirty;            /* a record: 1 once patched (then set by every slot) */
    CUgraphDeviceNode nodes[]; /* one a record */
} enc_devgraph;

/* What g's records are: kernel launches without attributes, with attributes, stream operations (copies,
 * memsets, event records and waits). */
#define ENC_DEV_KIND_KERNELS 1u
#define ENC_DEV_KIND_ATTRS 2u
#define ENC_DEV_KIND_OPS 4u
unsigned enc_devpatch_kinds(const enc_graph *g);
/* Whether g (its records, before capture) is to be captured device-patched on ctx: the option, patching, kernel
 * launches only (no stream operation: devpatch.c), at most DEV_MAX_RECS, no kind the driver refused, device
 * patches not broken, and the updater loaded there. */
int enc_devpatch_wanted(const enc_graph *g, CUcontext ctx);
/* The driver refused to capture or instantiate g device-patched (error r): graphs of its kind (launches with
 * attributes; plain kernels: every kind) are captured as before from then on. One info line a kind. */
void enc_devpatch_refused(const enc_graph *g, CUresult r);
/* Its ring and counter (before the capture), or NULL (then it is captured as any other). */
enc_devgraph *enc_devpatch_new(const enc_graph *g, CUcontext ctx);
/* During the capture on `s`: the updater first, then each record with its own attributes and the
 * device-updatable one. */
CUresult enc_devpatch_capture(enc_devgraph *d, const enc_graph *g, CUstream s);
/* `ring`: free its ring too (not while a launch of its graph may still run: a destroy the program's capture
 * deferred). */
void enc_devpatch_free(enc_devgraph *d, int ring);
/* ctx was destroyed: its updater, counters and rings went with it (its graphs are dropped). */
void enc_devpatch_context_gone(CUcontext ctx);

/* A replay: the next slot, or NULL when the GPU has not taken it yet (the held launches go out eagerly) or
 * refused an update in it (then device patches are broken: one warning). */
enc_dev_slot *enc_devpatch_slot(enc_devgraph *d);
/* Add to slot s what makes g's node i held launch h (of arena), where g's record is `was` (of was_arena) with the
 * same grid (grids are not patched on the device: replay.c chooses no device-patched graph for other grids): once
 * a node was patched, every launch's slot carries its whole argument bytes, so that each launch sets its nodes
 * itself, whether a launch already queued sees an earlier launch's device updates or not (not probed). Returns 1
 * if h's arguments differ from `was`, 0 if not, or -1 if the slot has no room (it cannot happen:
 * enc_devpatch_new sizes it for every record). */
int enc_devpatch_add(enc_devgraph *d, enc_dev_slot *s, uint32_t i, const enc_rec *h, const unsigned char *arena,
                     const enc_rec *was, const unsigned char *was_arena);
/* The GPU refused an update once: no device-patched graph is captured or replayed from then on. */
int enc_devpatch_broken(void);
/* Before the graph launch (the slot is the GPU's from now), and after it: `ok` the launch went out. */
void enc_devpatch_launching(enc_dev_slot *s);
void enc_devpatch_launched(enc_devgraph *d, enc_dev_slot *s, int ok);

#endif
