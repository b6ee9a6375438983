/* encore: the fingerprints of a launch.
 *
 * Structure: function, block, shared memory, argument size and the number
 * of launch attributes (the attributes themselves are hashed on top by the
 * caller). Arguments: their bytes, padding between parameters zeroed by the
 * caller, and the grid. The grid goes with the arguments, not the structure
 * (issue 30): a kernel whose grid follows the data (an attention kernel over
 * a KV cache that grows by a token a step) is the same launch with other
 * parameters, and the graph captured for it is patched (the kernel node's
 * grid with its arguments) instead of a graph captured for every length.
 * Both with XXH3, inlined (XXH_INLINE_ALL), so no hash symbol leaves
 * libencore. */
#ifndef ENCORE_FINGERPRINT_H
#define ENCORE_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

/* Two 32-bit fields in one 64-bit word, the first in the low half. */
static inline uint64_t enc_fp_pair(uint32_t lo, uint32_t hi) { return (uint64_t)lo | (uint64_t)hi << 32; }

/* A grid as one 64-bit value (0 for a stream operation's grid). */
static inline uint64_t enc_fp_grid(const unsigned grid[3]) {
    return enc_fp_pair(grid[0], grid[1]) ^ ((uint64_t)grid[2] * 0x9e3779b97f4a7c15ull);
}

/* The arguments' fingerprint: their bytes as recorded, seeded with the grid
 * (a stream operation's grid is 0: seed 0 is XXH3's unseeded hash). */
static inline uint64_t enc_fp_args(const void *args, size_t n, const unsigned grid[3]) {
    return XXH3_64bits_withSeed(args, n, enc_fp_grid(grid));
}

static inline uint64_t enc_structural_fp(const void *f, const unsigned block[3], unsigned smem, uint32_t argbytes,
                                         uint32_t nattrs) {
    /* The key is whole 64-bit words, each written by one assignment: XXH3
     * reads its input 8 bytes at a time, and an 8-byte load of what two
     * 4-byte stores (or a memset and a store) just wrote cannot be forwarded
     * from the store buffer; it waits for them to reach the cache (perf: a
     * fifth of enc_record_launch's samples on the simulated driver). With
     * no padding there is nothing to zero either. */
    struct {
        uint64_t f, block_xy, block_z_smem, argbytes_nattrs;
    } key;
    key.f = (uint64_t)(uintptr_t)f;
    key.block_xy = enc_fp_pair(block[0], block[1]);
    key.block_z_smem = enc_fp_pair(block[2], smem);
    key.argbytes_nattrs = enc_fp_pair(argbytes, nattrs);
    _Static_assert(sizeof key == 4 * sizeof(uint64_t), "the key has no padding");
    return XXH3_64bits(&key, sizeof key);
}

#endif
