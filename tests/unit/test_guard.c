/* Unit tests of the re-entrancy guard's scope (base/guard.h). */
#include "base/guard.h"
#include "testhelper.h"

static int guarded_return(void) {
    ENC_GUARDED {
        if (enc_thr.guard) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    th_init(argc, argv);

    TEST("guard: ENC_GUARDED sets the guard for its block and clears it after") {
        int inside = 0;
        ENC_GUARDED inside = enc_thr.guard;
        EXPECT_EQ_INT(inside, 1);
        EXPECT_EQ_INT(enc_thr.guard, 0);
    }

    TEST("guard: returning from inside the block restores the guard") {
        EXPECT_EQ_INT(guarded_return(), 1);
        EXPECT_EQ_INT(enc_thr.guard, 0);
    }

    TEST("guard: nested blocks keep the guard set until the outermost one ends") {
        int after_inner = 0;
        ENC_GUARDED {
            ENC_GUARDED {}
            after_inner = enc_thr.guard;
        }
        EXPECT_EQ_INT(after_inner, 1);
        EXPECT_EQ_INT(enc_thr.guard, 0);
    }

    TEST("guard: a block entered with the guard already set leaves it set") {
        enc_thr.guard = 1;
        ENC_GUARDED {}
        EXPECT_EQ_INT(enc_thr.guard, 1);
        enc_thr.guard = 0;
    }

    TEST("guard: break leaves the block (runs it once) and restores the guard") {
        int runs = 0;
        ENC_GUARDED {
            runs++;
            break;
        }
        EXPECT_EQ_INT(runs, 1);
        EXPECT_EQ_INT(enc_thr.guard, 0);
    }

    return th_report();
}
