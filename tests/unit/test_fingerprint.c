/* Unit tests of core/fingerprint.h: what makes two launches' structural
 * fingerprints equal or different. */
#include "core/fingerprint.h"
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
    return th_report();
}
