/* Unit tests of the hold budget and the hold ramp (core/streams/sequence.c): how long
 * a stream's sequences may be, given the host time between its launches and
 * how many sequences ended full since the last flush point. */
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
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

    static enc_stream_state st; /* a stream's fields as sequence.c reads them; zeroed */
    enc_opt.min_sequence = 2;

    TEST("hold ramp: off, a sequence ends at the stream's cap") {
        enc_opt.hold_ramp = 0;
        st.seq_cap = 8;
        st.ramp = 0;
        EXPECT_EQ_INT(enc_sequence_limit(&st), 8);
    }

    TEST("hold ramp: on, a cut stream's sequences after a flush point are 2, 4, then the cap") {
        enc_opt.hold_ramp = 1;
        st.seq_cap = 8;
        uint32_t want[] = {2, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8};
        for (uint8_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            st.ramp = i;
            EXPECT_EQ_INT(enc_sequence_limit(&st), want[i]);
        }
        st.seq_cap = 64; /* a quarter of a larger cap first */
        st.ramp = 0;
        EXPECT_EQ_INT(enc_sequence_limit(&st), 16);
        st.ramp = 1;
        EXPECT_EQ_INT(enc_sequence_limit(&st), 32);
    }

    TEST("hold ramp: never below ENCORE_MIN_SEQUENCE") {
        enc_opt.min_sequence = 3;
        st.seq_cap = 8;
        st.ramp = 0;
        EXPECT_EQ_INT(enc_sequence_limit(&st), 3);
        enc_opt.min_sequence = 2;
    }

    TEST("hold ramp: a stream the budget does not cut is left as it is") {
        st.seq_cap = 0; /* pace not known, or fast: ENCORE_MAX_SEQUENCE */
        st.ramp = 0;
        EXPECT_EQ_INT(enc_sequence_limit(&st), 128);
        st.seq_cap = 128;
        EXPECT_EQ_INT(enc_sequence_limit(&st), 128);
        enc_opt.hold_ramp = 0;
    }
    return th_report();
}
