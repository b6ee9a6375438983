/* encore: one slot of the ring a device-patched graph's updater reads (ENCORE_DEVICE_PATCH: devpatch.c).
 *
 * Plain C, shared by the library, the updater kernel (updater.cu) and the simulated driver (tests/sim). A
 * slot holds the updates of one graph launch: written by the host into page-locked memory before the
 * launch, applied by the graph's first node on the GPU, which then marks it done (the host writes a slot
 * again only once it is done). Update i is a kernel node's device handle (from
 * CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE at capture) and either `size` bytes at `offset` of its
 * parameters, taken from the slot's bytes at `value_off`, or its grid. */
#ifndef ENCORE_DEVSLOT_H
#define ENCORE_DEVSLOT_H

#include <stddef.h>
#include <stdint.h>

enum { ENC_DEV_PARAM = 1, ENC_DEV_GRID = 2 }; /* what an update sets of its node: either or both */

typedef struct enc_dev_update {
    uint64_t node; /* CUgraphDeviceNode */
    uint32_t kind; /* ENC_DEV_PARAM | ENC_DEV_GRID: its bytes first, then its grid, by one thread */
    uint32_t offset, size, value_off;
    uint32_t grid[3];
    uint32_t pad;
} enc_dev_update;

typedef struct enc_dev_slot {
    uint32_t n;             /* updates after this header */
    int32_t rc;             /* the first refused update's error (cudaError_t), 0 */
    volatile uint32_t done; /* set by the updater once applied */
    uint32_t values;        /* the host's: where the last update's bytes begin (they fill the slot from its end) */
    enc_dev_update u[];
} enc_dev_slot;

/* The updater's parameters: encore_updater(ring, mask, slot_bytes, counter), slot (*counter & mask) at
 * ring + that * slot_bytes; the counter (device memory) counts the graph's launches. */
#define ENC_DEV_UPDATER_NAME "encore_updater"
#define ENC_DEV_UPDATER_THREADS 128 /* threads of the updater: updates a launch at most */

/* The updater built for one architecture: the library's table (scripts/embed-updater.cmake generates it). */
typedef struct enc_updater_image {
    int major, minor;
    const unsigned char *bytes;
    size_t size;
} enc_updater_image;
extern const enc_updater_image enc_updater_images[];
extern const int enc_updater_nimages;

#endif
