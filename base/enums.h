/* encore: the enumerations every layer shares.
 *
 * The class of a driver entry point (policy/entry_class.h assigns them), why
 * held launches were issued, and what made a held sequence diverge. They sit
 * at the bottom so that policy/ needs nothing above base/, and core/observe/stats.h,
 * the engine and the report all name the same values. */
#ifndef ENCORE_ENUMS_H
#define ENCORE_ENUMS_H

/* Hook classes (policy/entry_class.h has the table that assigns them). */
enum enc_class {
    ENC_CLASS_PASS = 0,     /* pure query: straight through */
    ENC_CLASS_LAUNCH,       /* kernel launch: may be deferred and replayed */
    ENC_CLASS_FLUSH_STREAM, /* stream-ordered work or query on one stream */
    ENC_CLASS_FLUSH_ALL,    /* may observe any stream: device sync, blocking copy, free, unknown */
    ENC_CLASS_COUNT
};

/* Why held launches were issued or the open sequence being learnt was cut. */
enum enc_flush_reason {
    ENC_FLUSH_STREAM_CALL = 0, /* a flush-stream call on the same stream */
    ENC_FLUSH_ALL_CALL,        /* a flush-everything call (any thread) */
    ENC_FLUSH_LEGACY_ORDER,    /* legacy default stream implicit synchronisation */
    ENC_FLUSH_DEADLINE,        /* the flush deadline passed with launches held */
    ENC_FLUSH_SEQUENCE_FULL,   /* the open sequence reached ENCORE_MAX_SEQUENCE */
    ENC_FLUSH_CAPTURE,         /* the program began capturing a stream */
    ENC_FLUSH_OPAQUE_LAUNCH,   /* a launch encore cannot fingerprint (no parameter info, cooperative) */
    ENC_FLUSH_EXIT,            /* process exit */
    ENC_FLUSH_PAUSE,           /* held launches completed a graph whose sequence the host paused after before
                                * (ENCORE_PAUSE_END): replayed at once */
    ENC_FLUSH_REASON_COUNT
};

/* What made a held sequence diverge from every graph. */
enum enc_divergence_kind {
    ENC_DIV_KERNEL = 0, /* a different kernel came */
    ENC_DIV_CONFIG,     /* same kernel, other grid/block/shared memory/attributes */
    ENC_DIV_ARGS,       /* same kernel and configuration, other argument bytes */
    ENC_DIV_SHORT,      /* a flush point came before the sequence was complete */
    ENC_DIV_KIND_COUNT
};

/* Why a launch went to the driver one by one (the report's eager launches, by reason). */
enum enc_eager_reason {
    ENC_EAGER_LEARNING = 0, /* recorded; no captured sequence begins or goes on here (yet) */
    ENC_EAGER_RELEASED,     /* held, then issued one by one: no graph matched where the hold ended */
    ENC_EAGER_DIVERGED,     /* the launch that left every captured sequence (issued after those released) */
    ENC_EAGER_FIRST,        /* a kernel's first launch (its parameters are learnt after it) */
    ENC_EAGER_LEFT_ALONE,   /* its stream's launches came further apart than ENCORE_MAX_GAP */
    ENC_EAGER_RESTING,      /* its stream rested (nothing repeated) */
    ENC_EAGER_OPAQUE,       /* the program captures, another context, stream attributes, no parameter info */
    ENC_EAGER_PASSIVE,      /* encore switched off (ENCORE=0, the program, a failure), or no stream state */
    ENC_EAGER_REASON_COUNT
};

/* What learning made of a sequence that ended without a replay (the report's
 * "sequences ended while learning", for telling why nothing was captured). */
enum enc_learn_outcome {
    ENC_LEARN_SHORT = 0,  /* fewer launches than ENCORE_MIN_SEQUENCE */
    ENC_LEARN_UNRECORDED, /* something in it could not be recorded: never a candidate */
    ENC_LEARN_LEFT_ALONE, /* its stream is left alone (ENCORE_MAX_GAP) */
    ENC_LEARN_NEW,        /* neither it nor its structure came before (as far as the table remembers) */
    ENC_LEARN_AGAIN,      /* it came again exactly: counted towards a capture */
    ENC_LEARN_STRUCTURE,  /* only its structure came again (other arguments): counted for a patchable graph */
    ENC_LEARN_GIVEN_UP,   /* it came again, but its candidate is never captured (failed, or not patchable) */
    ENC_LEARN_NO_SLOT,    /* the candidate table had no slot for it */
    ENC_LEARN_UNDER_TWO,  /* fewer than two kernels (stream operations, one kernel): a graph saves nothing */
    ENC_LEARN_OUTCOME_COUNT
};

#endif
