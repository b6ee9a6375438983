/* Unit tests of core/state/fingerprint.h: what makes two launches' structural
 * fingerprints equal or different. */
#include <string.h>

#include "core/state/fingerprint.h"
#include "testhelper.h"

static const unsigned G[3] = {4, 1, 1}, B[3] = {128, 1, 1};
static int kernel_a, kernel_b; /* two distinct "function" addresses */

/* Fill the stack below the caller with `byte`... */
__attribute__((noinline)) static void dirty_stack(int byte)
{
    volatile unsigned char junk[4096];
    for (unsigned i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)byte;
}

/* ...then fingerprint in a frame that lands where the junk was. */
__attribute__((noinline)) static uint64_t fp_in_fresh_frame(void)
{
    return enc_structural_fp(&kernel_a, G, B, 0, 24, 0);
}

static uint64_t fp_after_stack_filled_with(int byte)
{
    dirty_stack(byte);
    return fp_in_fresh_frame();
}

/* The key as it was built before it became whole words: bytes, padding zeroed. */
static uint64_t bytewise_fp(const void *f, const unsigned grid[3], const unsigned block[3], unsigned smem,
                            uint32_t argbytes, uint32_t nattrs)
{
    struct {
        const void *f;
        unsigned dims[7];
        uint32_t argbytes, nattrs;
    } key;
    memset(&key, 0, sizeof key);
    key.f = f;
    memcpy(key.dims, grid, 3 * sizeof *grid);
    memcpy(key.dims + 3, block, 3 * sizeof *block);
    key.dims[6] = smem;
    key.argbytes = argbytes;
    key.nattrs = nattrs;
    return XXH3_64bits(&key, sizeof key);
}

static uint32_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)(*x >> 16);
}

int main(int argc, char **argv)
{
    th_init(argc, argv);

    TEST("fingerprint: equal launches fingerprint equally, whatever the stack held") {
        uint64_t a = fp_after_stack_filled_with(0xAA), b = fp_after_stack_filled_with(0x55);
        EXPECT(a == b);
        EXPECT(a == enc_structural_fp(&kernel_a, G, B, 0, 24, 0));
    }
    TEST("fingerprint: another function differs") {
        EXPECT(enc_structural_fp(&kernel_a, G, B, 0, 24, 0) != enc_structural_fp(&kernel_b, G, B, 0, 24, 0));
    }
    TEST("fingerprint: another grid, block or shared memory size differs") {
        const unsigned g2[3] = {4, 2, 1}, b2[3] = {64, 1, 1};
        uint64_t base = enc_structural_fp(&kernel_a, G, B, 0, 24, 0);
        EXPECT(base != enc_structural_fp(&kernel_a, g2, B, 0, 24, 0));
        EXPECT(base != enc_structural_fp(&kernel_a, G, b2, 0, 24, 0));
        EXPECT(base != enc_structural_fp(&kernel_a, G, B, 1024, 24, 0));
    }
    TEST("fingerprint: another argument size or attribute count differs") {
        uint64_t base = enc_structural_fp(&kernel_a, G, B, 0, 24, 0);
        EXPECT(base != enc_structural_fp(&kernel_a, G, B, 0, 32, 0));
        EXPECT(base != enc_structural_fp(&kernel_a, G, B, 0, 24, 1));
    }
    TEST("fingerprint: each of grid, block, shared memory, argument size and attribute count counts in its own place") {
        /* the key packs two 32-bit fields per word: the same change in any
         * two places must give two fingerprints */
        const unsigned v[9] = {4, 1, 1, 128, 1, 1, 0, 24, 0}; /* grid, block, smem, argbytes, nattrs */
        uint64_t fp[10];
        for (int i = 0; i < 10; i++) {
            unsigned w[9];
            memcpy(w, v, sizeof w);
            if (i < 9) w[i] += 7;
            fp[i] = enc_structural_fp(&kernel_a, w, w + 3, w[6], w[7], w[8]);
        }
        for (int i = 0; i < 10; i++)
            for (int j = i + 1; j < 10; j++) EXPECT(fp[i] != fp[j]);
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && UINTPTR_MAX == UINT64_MAX
    TEST("fingerprint: on a little-endian 64-bit machine, the same values as the bytewise key of earlier versions") {
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < 10000; i++) {
            unsigned g[3], b[3];
            for (int j = 0; j < 3; j++) {
                g[j] = i & 1 ? next_random(&x) : next_random(&x) % 4;
                b[j] = i & 1 ? next_random(&x) : next_random(&x) % 4;
            }
            const void *f = (const void *)(uintptr_t)((uint64_t)next_random(&x) << 32 | next_random(&x));
            unsigned smem = next_random(&x);
            uint32_t argbytes = next_random(&x), nattrs = next_random(&x) % 3;
            if (enc_structural_fp(f, g, b, smem, argbytes, nattrs) != bytewise_fp(f, g, b, smem, argbytes, nattrs)) {
                EXPECT(0);
                break;
            }
        }
    }
#endif
    return th_report();
}
