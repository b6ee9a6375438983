/* Unit tests of what happens when a held launch fails as it is released
 * (core/state/failure.c): a sticky error asks encore to switch off; any other is
 * kept on its stream and returned, once, by the next call that observes that
 * stream or by a flush-everything call. The stream states are real ones
 * (core/streams/stream.c) on a fake driver that only answers what a new state asks. */
#include "base/driver.h"
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

static CUresult fake_stream_get_flags(CUstream s, unsigned *flags) {
    (void)s;
    *flags = 0;
    return CUDA_SUCCESS;
}

static CUresult fake_stream_get_ctx(CUstream s, CUcontext *ctx) {
    (void)s;
    *ctx = (CUcontext)(uintptr_t)0x77;
    return CUDA_SUCCESS;
}

static enc_layout layout = {.name = "mix", .ok = 1};
static enc_rec rec = {.L = &layout};

static enc_stream_state *stream(uintptr_t handle) { return enc_stream_for((CUstream)handle, 0, 1); }

/* Issuing a launch st held failed with r. */
static void release_fails(enc_stream_state *st, CUresult r) {
    enc_mutex_lock(&st->mu);
    enc_note_release_failure(st, &rec, r);
    enc_mutex_unlock(&st->mu);
}

static CUresult next_call_on(enc_stream_state *st) { return enc_core_take_error(st->handle, 0, 0); }
static CUresult next_flush_everything_call(void) { return enc_core_take_error(NULL, 0, 1); }

int main(int argc, char **argv) {
    th_init(argc, argv);
    enc_options_init();
    enc_drv.streamGetFlags = fake_stream_get_flags;
    enc_drv.streamGetCtx = fake_stream_get_ctx;
    enc_stream_state *a = stream(0x1000), *b = stream(0x2000);
    if (!a || !b) return 2;

    TEST("failure: a released launch's error is returned once, by the next call on its stream") {
        release_fails(a, CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_call_on(a), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_call_on(a), CUDA_SUCCESS);
        EXPECT_EQ_INT(enc_hot.n_pending_err, 0);
    }

    TEST("failure: a call on another stream does not return it") {
        release_fails(a, CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_call_on(b), CUDA_SUCCESS);
        EXPECT_EQ_INT(next_call_on(a), CUDA_ERROR_INVALID_VALUE);
    }

    TEST("failure: a flush-everything call returns any stream's error") {
        release_fails(b, CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_flush_everything_call(), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_call_on(b), CUDA_SUCCESS);
        EXPECT_EQ_INT(next_flush_everything_call(), CUDA_SUCCESS);
    }

    TEST("failure: a stream keeps its first error") {
        release_fails(a, CUDA_ERROR_INVALID_VALUE);
        release_fails(a, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
        EXPECT_EQ_INT(next_call_on(a), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_call_on(a), CUDA_SUCCESS);
    }

    TEST("failure: a sequence whose release failed is never learnt") {
        a->seq.poisoned = 0;
        release_fails(a, CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(a->seq.poisoned, 1);
        next_call_on(a);
    }

    TEST("failure: a destroyed stream's error goes to the next flush-everything call") {
        enc_stream_state *c = stream(0x3000);
        release_fails(c, CUDA_ERROR_INVALID_VALUE);
        enc_stream_retire(c);
        EXPECT_EQ_INT(c->pending_err, CUDA_SUCCESS); /* the state is reused for the next new stream */
        EXPECT_EQ_INT(next_flush_everything_call(), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(next_flush_everything_call(), CUDA_SUCCESS);
    }

    TEST("failure: sticky errors are those after which the driver runs no more work") {
        EXPECT(enc_error_is_sticky(CUDA_ERROR_ILLEGAL_ADDRESS));
        EXPECT(enc_error_is_sticky(CUDA_ERROR_ASSERT));
        EXPECT(enc_error_is_sticky(CUDA_ERROR_LAUNCH_FAILED));
        EXPECT(enc_error_is_sticky(CUDA_ERROR_DEINITIALIZED));
        EXPECT(!enc_error_is_sticky(CUDA_SUCCESS));
        EXPECT(!enc_error_is_sticky(CUDA_ERROR_INVALID_VALUE));
        EXPECT(!enc_error_is_sticky(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
        EXPECT(!enc_error_is_sticky(CUDA_ERROR_NOT_READY));
    }

    TEST("failure: a sticky error leaves no pending error and asks to switch off") {
        enc_hot.disable_requested = 0;
        release_fails(b, CUDA_ERROR_ILLEGAL_ADDRESS);
        EXPECT_EQ_INT(next_call_on(b), CUDA_SUCCESS); /* every later call returns it from the driver */
        EXPECT_EQ_INT(enc_hot.disable_requested, 1);
    }

    TEST("failure: a sticky result of a program's call asks to switch off, another does not") {
        enc_hot.disable_requested = 0;
        enc_core_note_result(CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ_INT(enc_hot.disable_requested, 0);
        enc_core_note_result(CUDA_ERROR_ASSERT);
        EXPECT_EQ_INT(enc_hot.disable_requested, 1);
    }
    return th_report();
}
