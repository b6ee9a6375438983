/* Unit tests of core/state/fingerprint.h: what makes two launches' structural
 * fingerprints equal or different, and where the grid goes (the arguments'). */
#include <string.h>

#include "core/state/fingerprint.h"
#include "testhelper.h"

static const unsigned G[3] = {4, 1, 1}, B[3] = {128, 1, 1};
static const unsigned NO_GRID[3] = {0, 0, 0};
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
    return enc_structural_fp(&kernel_a, B, 0, 24, 0);
}

static uint64_t fp_after_stack_filled_with(int byte)
{
    dirty_stack(byte);
    return fp_in_fresh_frame();
}

int main(int argc, char **argv)
{
    th_init(argc, argv);

    TEST("fingerprint: equal launches fingerprint equally, whatever the stack held") {
        uint64_t a = fp_after_stack_filled_with(0xAA), b = fp_after_stack_filled_with(0x55);
        EXPECT(a == b);
        EXPECT(a == enc_structural_fp(&kernel_a, B, 0, 24, 0));
    }
    TEST("fingerprint: another function differs") {
        EXPECT(enc_structural_fp(&kernel_a, B, 0, 24, 0) != enc_structural_fp(&kernel_b, B, 0, 24, 0));
    }
    TEST("fingerprint: another block or shared memory size differs") {
        const unsigned b2[3] = {64, 1, 1};
        uint64_t base = enc_structural_fp(&kernel_a, B, 0, 24, 0);
        EXPECT(base != enc_structural_fp(&kernel_a, b2, 0, 24, 0));
        EXPECT(base != enc_structural_fp(&kernel_a, B, 1024, 24, 0));
    }
    TEST("fingerprint: another argument size or attribute count differs") {
        uint64_t base = enc_structural_fp(&kernel_a, B, 0, 24, 0);
        EXPECT(base != enc_structural_fp(&kernel_a, B, 0, 32, 0));
        EXPECT(base != enc_structural_fp(&kernel_a, B, 0, 24, 1));
    }
    TEST("fingerprint: each of block, shared memory, argument size and attribute count counts in its own place") {
        /* the key packs two 32-bit fields per word: the same change in any
         * two places must give two fingerprints */
        const unsigned v[6] = {128, 1, 1, 0, 24, 0}; /* block, smem, argbytes, nattrs */
        uint64_t fp[7];
        for (int i = 0; i < 7; i++) {
            unsigned w[6];
            memcpy(w, v, sizeof w);
            if (i < 6) w[i] += 7;
            fp[i] = enc_structural_fp(&kernel_a, w, w[3], w[4], w[5]);
        }
        for (int i = 0; i < 7; i++)
            for (int j = i + 1; j < 7; j++) EXPECT(fp[i] != fp[j]);
    }
    TEST("fingerprint: the grid is no part of the structure (a grid that follows the data is patched)") {
        /* enc_structural_fp takes no grid: two launches that differ only in
         * their grid have one structure; their arguments' fingerprints differ */
        const unsigned g2[3] = {5, 1, 1};
        const unsigned char args[24] = {1, 2, 3};
        EXPECT(enc_fp_args(args, sizeof args, G) != enc_fp_args(args, sizeof args, g2));
        EXPECT(enc_fp_args(args, sizeof args, G) == enc_fp_args(args, sizeof args, G));
    }
    TEST("fingerprint: each grid dimension counts in its own place") {
        const unsigned char args[16] = {9};
        const unsigned gx[3] = {2, 1, 1}, gy[3] = {1, 2, 1}, gz[3] = {1, 1, 2};
        uint64_t x = enc_fp_args(args, sizeof args, gx), y = enc_fp_args(args, sizeof args, gy),
                 z = enc_fp_args(args, sizeof args, gz);
        EXPECT(x != y && y != z && x != z);
    }
    TEST("fingerprint: a stream operation's arguments (no grid) hash as XXH3 unseeded") {
        const unsigned char args[40] = {7, 7, 7};
        EXPECT(enc_fp_args(args, sizeof args, NO_GRID) == XXH3_64bits(args, sizeof args));
    }
    return th_report();
}
