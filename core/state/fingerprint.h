/* encore: the fingerprints of a launch.
 *
 * Structure: function, grid, block, shared memory, argument size and the
 * number of launch attributes (the attributes themselves are hashed on top
 * by the caller). Arguments: their bytes, padding between parameters zeroed
 * by the caller. Both with XXH3, inlined (XXH_INLINE_ALL), so no hash symbol
 * leaves libencore. */
#ifndef ENCORE_FINGERPRINT_H
#define ENCORE_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

/* The arguments' fingerprint: their bytes as recorded. */
static inline uint64_t enc_fp_args(const void *args, size_t n) { return XXH3_64bits(args, n); }

/* Two 32-bit fields in one 64-bit word, the first in the low half. */
static inline uint64_t enc_fp_pair(uint32_t lo, uint32_t hi) { return (uint64_t)lo | (uint64_t)hi << 32; }

static inline uint64_t enc_structural_fp(const void *f, const unsigned grid[3], const unsigned block[3], unsigned smem,
                                         uint32_t argbytes, uint32_t nattrs) {
    /* The key is whole 64-bit words, each written by one assignment: XXH3
     * reads its input 8 bytes at a time, and an 8-byte load of what two
     * 4-byte stores (or a memset and a store) just wrote cannot be forwarded
     * from the store buffer; it waits for them to reach the cache (perf: a
     * fifth of enc_record_launch's samples on the simulated driver). With
     * no padding there is nothing to zero either. On a little-endian machine
     * these are the bytes of the earlier key {f; dims[7]; argbytes, nattrs;
     * 4 zero bytes}, so the hash values did not change. */
    struct {
        uint64_t f, grid_xy, grid_z_block_x, block_yz, smem_argbytes, nattrs;
    } key;
    key.f = (uint64_t)(uintptr_t)f;
    key.grid_xy = enc_fp_pair(grid[0], grid[1]);
    key.grid_z_block_x = enc_fp_pair(grid[2], block[0]);
    key.block_yz = enc_fp_pair(block[1], block[2]);
    key.smem_argbytes = enc_fp_pair(smem, argbytes);
    key.nattrs = nattrs;
    _Static_assert(sizeof key == 6 * sizeof(uint64_t), "the key has no padding");
    return XXH3_64bits(&key, sizeof key);
}

#endif
