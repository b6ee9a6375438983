/* One slot of the ring the graph updater reads (devupdate_updater.cu, devupdate_driver_probe.c): the updates of
 * one graph launch, written by the host into page-locked memory before the launch. Plain C for both sides. */
#ifndef ENC_DEVUPDATE_SLOT_H
#define ENC_DEVUPDATE_SLOT_H
#include <stdint.h>
enum { ENC_DEV_PARAM = 0, ENC_DEV_GRID = 1, ENC_DEV_SLOT_UPDATES = 64, ENC_DEV_VALUE = 16 };
typedef struct enc_dev_update {
    void *node;          /* the node's device handle (CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, at capture) */
    uint32_t kind;       /* ENC_DEV_PARAM: size bytes of value at offset in the kernel's parameters; ENC_DEV_GRID */
    uint32_t offset, size;
    uint32_t grid[3];
    unsigned char value[ENC_DEV_VALUE] __attribute__((aligned(8)));
} enc_dev_update;
typedef struct enc_dev_slot {
    uint32_t n;           /* updates in u */
    int32_t rc;           /* the first failed update's error, 0 */
    volatile uint32_t done; /* set by the updater when it applied the slot (the host's ring is free again) */
    uint32_t pad;
    enc_dev_update u[ENC_DEV_SLOT_UPDATES];
} enc_dev_slot;
#endif
