/* encore: what each driver entry point means to the engine (the one table). */
#ifndef ENCORE_ENTRY_CLASS_H
#define ENCORE_ENTRY_CLASS_H

#include <stdint.h>

#include "base/enums.h" /* enum enc_class */

/* Extra duties on top of the class. */
enum enc_entry_flag {
    ENC_F_CAPTURE_BEGIN = 1,    /* the program starts capturing a stream: leave it alone */
    ENC_F_CAPTURE_END = 2,      /* ... and stops */
    ENC_F_STREAM_DESTROY = 4,   /* forget what was learnt about the stream */
    ENC_F_UNLOAD = 8,           /* code or a context goes away: drop graphs and parameter layouts */
    ENC_F_LOOKUP = 16,          /* hands out entry points: always wrapped, even when pass-through */
    ENC_F_INIT = 32,            /* initialises the driver: encore's exit flush must run before its teardown */
    ENC_F_CONTEXT_GONE = 64,    /* destroys a context: forget encore's handles in it (streams, events, graphs) */
    ENC_F_STREAM_ATTRS = 128,   /* changes a stream's attributes: graphs may no longer run as its launches would */
    ENC_F_FUNC_SET = 256,       /* sets a function's attribute: flushes only if the value changes (the class
                                 applies to a wrapper that cannot tell) */
    ENC_F_EVENT = 512,          /* names an event: what holds a record of it (or a wait on it) is issued first */
    ENC_F_TRACK = 1024,         /* creates or frees memory or an event encore keeps track of (core/graphs/evtab.c) */
    ENC_F_NODE = 2048,          /* a stream operation the engine may hold as a graph node (core/graphs/nodes.c); the
                                 class applies when it does not */
    ENC_F_ANY_EVENT = 4096,     /* may record or wait on any event (a graph's event nodes): every held record and
                                 wait, on any stream, is issued first */
    ENC_F_PROGRAM_GRAPH = 8192, /* the program launches a graph of its own: work on the stream that encore does
                                   not hold, weighed in the stream's window (core/streams/rest.c) */
    ENC_F_CURRENT_CTX = 16384,  /* changes the calling thread's current context: encore's remembered one is
                                   forgotten (core/path/context.c); always wrapped, so that encore sees it */
    ENC_F_WAITS = 32768,        /* may block the host until the GPU gets there (a synchronize, a copy to the
                                   host): the call is timed (the report's sync_wait_ns: the GPU was behind) */
    ENC_F_POLLS = 65536         /* asks whether the GPU got there without waiting (a query): a thread that never
                                   waits and polls instead has its steps end there (ENCORE_SELF_CHECK) */
};

typedef struct enc_entry_policy {
    const char *name; /* base name, as asked of cuGetProcAddress (no _v2/_ptsz suffix) */
    unsigned char cls;
    uint32_t flags;
    const char *why; /* one line: why this class is safe */
} enc_entry_policy;

extern const enc_entry_policy enc_policy_table[];
extern const int enc_policy_count;

/* Class and flags of an entry point. Unlisted names are ENC_CLASS_FLUSH_ALL:
 * default-deny. Returns 1 if the name is listed. */
int enc_policy_lookup(const char *name, unsigned char *cls, uint32_t *flags);

/* Does a call of this class and flags return the error a held launch got when it was issued
 * late (the first call to observe its stream, or any stream, after: as CUDA calls return
 * errors of earlier asynchronous work)? Calls that observe (a synchronize, a query, a copy to
 * the host: flags ENC_F_WAITS, ENC_F_POLLS, ENC_F_ANY_EVENT or none) do; a call whose own
 * success the program acts on (a capture begun, a stream destroyed, code unloaded, memory
 * freed: any other flag) does not. */
int enc_policy_reports_pending(unsigned char cls, uint32_t flags);

#endif
