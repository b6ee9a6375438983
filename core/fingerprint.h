/* encore: the fingerprints of a launch.
 *
 * Structure: function, grid, block, shared memory, argument size and the
 * number of launch attributes (the attributes themselves are hashed on top
 * by the caller). Arguments: their bytes, padding between parameters zeroed
 * by the caller. Both with XXH3, inlined (XXH_INLINE_ALL), so no hash symbol
 * leaves libencore. */
#ifndef ENCORE_FINGERPRINT_H
#define ENCORE_FINGERPRINT_H

#include <stdint.h>
#include <string.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

static inline uint64_t enc_structural_fp(const void *f, const unsigned grid[3], const unsigned block[3], unsigned smem,
                                         uint32_t argbytes, uint32_t nattrs) {
    struct {
        const void *f;
        unsigned dims[7];
        uint32_t argbytes, nattrs;
    } key;
    /* The key is hashed as bytes, padding included (4 bytes after nattrs on
     * LP64): zero it all first, or stack garbage makes equal launches differ. */
    memset(&key, 0, sizeof key);
    key.f = f;
    memcpy(key.dims, grid, 3 * sizeof *grid);
    memcpy(key.dims + 3, block, 3 * sizeof *block);
    key.dims[6] = smem;
    key.argbytes = argbytes;
    key.nattrs = nattrs;
    return XXH3_64bits(&key, sizeof key);
}

#endif
