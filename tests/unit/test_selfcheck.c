/* Unit tests of the self-check's verdict (core/path/selfcheck.c): from a
 * check's blocks' median step times, in the order A P P A, P A A P,
 * A P P A, P A A P, does encore cost the program time, or gain clearly? */
#include "core/path/selfcheck.h"
#include "testhelper.h"

/* A check whose A blocks took a (per group) and whose P blocks took p. */
static void fill(uint64_t med[16], const uint64_t a[4], uint64_t p) {
    static const int active[16] = {1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0};
    for (int b = 0; b < 16; b++) med[b] = active[b] ? a[b / 4] : p;
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    uint64_t med[16];
    uint32_t r = 0;

    TEST("self-check: steps slower with encore active in every group: step aside") {
        fill(med, (const uint64_t[]){1100, 1100, 1100, 1100}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_LOSES);
        EXPECT_EQ_INT(r, 1100);
    }

    TEST("self-check: steps faster with encore active in every group: a clear gain") {
        fill(med, (const uint64_t[]){850, 850, 850, 850}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_GAINS);
        EXPECT_EQ_INT(r, 850);
    }

    TEST("self-check: a clear gain shows after two groups") {
        fill(med, (const uint64_t[]){900, 940, 0, 0}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 2, &r), ENC_CHECK_GAINS);
        EXPECT_EQ_INT(r, 920);
    }

    TEST("self-check: a loss is never decided before four groups") {
        fill(med, (const uint64_t[]){1200, 1200, 0, 0}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 2, &r), ENC_CHECK_UNDECIDED);
    }

    TEST("self-check: a small gain is no clear gain: checked again sooner") {
        fill(med, (const uint64_t[]){970, 980, 960, 990}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_UNDECIDED);
    }

    TEST("self-check: within 1% is no loss") {
        fill(med, (const uint64_t[]){1010, 1010, 1010, 1010}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_UNDECIDED);
    }

    TEST("self-check: two slow groups of four decide nothing (noise)") {
        fill(med, (const uint64_t[]){1500, 1500, 900, 900}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_UNDECIDED);
        EXPECT_EQ_INT(r, 1200); /* the middle of four: (900 + 1500) / 2 */
    }

    TEST("self-check: three slow groups and a middle above 1.01: step aside") {
        fill(med, (const uint64_t[]){1030, 1050, 990, 1040}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_LOSES);
        EXPECT_EQ_INT(r, 1035);
    }

    TEST("self-check: one group's outlier does not make a loss") {
        fill(med, (const uint64_t[]){5000, 980, 990, 970}, 1000);
        EXPECT_EQ_INT(enc_selfcheck_verdict(med, 4, &r), ENC_CHECK_UNDECIDED);
    }
    return th_report();
}
