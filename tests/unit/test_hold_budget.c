/* Unit tests of the hold budget (core/sequence.c): how long a stream's
 * sequences may be, given the host time between its launches. */
#include "core/internal.h"
#include "policy/options.h"
#include "testhelper.h"

int main(int argc, char **argv) {
    th_init(argc, argv);
    enc_opt.max_sequence = 128;
    enc_opt.hold_budget = 120; /* microseconds */

    TEST("hold budget: a fast host keeps the longest sequence") {
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(300), 128);  /* 0.3 us per deferred launch */
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(900), 128);  /* 133 launches fit */
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(0), 128);    /* pace not known yet */
    }

    TEST("hold budget: a slower host gets the largest power of two that fits") {
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(1000), 64);  /* 120 fit */
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(7500), 16);  /* exactly 16 fit */
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(9000), 8);   /* 13 fit */
    }

    TEST("hold budget: never shorter than 8 launches") {
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(100000), 8);
    }

    TEST("hold budget: never longer than ENCORE_MAX_SEQUENCE") {
        enc_opt.max_sequence = 20;
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(100), 20);
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(7500), 16);
        enc_opt.max_sequence = 4; /* below the floor: the option wins */
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(100000), 4);
        enc_opt.max_sequence = 128;
    }

    TEST("hold budget: 0 switches it off") {
        enc_opt.hold_budget = 0;
        EXPECT_EQ_INT(enc_sequence_cap_for_pace(100000), 128);
        enc_opt.hold_budget = 120;
    }
    return th_report();
}
