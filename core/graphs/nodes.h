/* encore: stream operations other than kernel launches as parts of
 * sequences (nodes.c: recording, issuing, patching their graph nodes;
 * evtab.c: which stream holds which event, what memory is device or
 * page-locked). The structures named here are
 * core/state/types.h's. */
#ifndef ENCORE_NODES_H
#define ENCORE_NODES_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "core/state/calls.h"

struct enc_graph;
struct enc_layout;
struct enc_rec;
struct enc_stream_state;

/* The stand-in function of an op kind: never a real CUfunction (those are pointers). */
#define ENC_OP_FUNC(kind) ((CUfunction)(uintptr_t)(kind))
static inline int enc_is_op_func(CUfunction f) { return (uintptr_t)f - 1u < (uintptr_t)ENC_OP_KINDS - 1u; }
/* The stand-in layout of op kind f (one parameter: the enc_op). */
const struct enc_layout *enc_op_layout(CUfunction f);
/* Issue recorded op r on `stream`; `capture`: into encore's capture (event
 * records and waits are captured as nodes: the external flags), naming
 * event `as` instead of its own where given. */
CUresult enc_op_issue(const struct enc_rec *r, const unsigned char *arena, CUstream stream, int capture, CUevent as);
/* Event nodes can be captured naming a placeholder and patched to the program's events. */
int enc_op_events_patchable(void);
/* g was captured with `placeholder` in every event node: name the program's
 * events in its exec (they are what g's records say). NULL, or what failed. */
const char *enc_graph_name_events(struct enc_graph *g, CUevent placeholder);
int enc_nodes_events_churn(void); /* 1: events churn, records and waits are no longer held */
void enc_nodes_note_replay(void); /* a graph with stream operations replayed (nodes.c: events churn?) */
uint64_t enc_nodes_turned_back(uint64_t *not_held); /* event nodes turned back; *not_held: events churn (0/1) */
/* g stops naming ev (the held arguments follow): 1, or 0 if g cannot and must go. */
int enc_graph_unname_event(struct enc_graph *g, CUevent ev);
/* The op's node in a captured graph has the right type. */
int enc_op_node_ok(CUgraphNode node, const struct enc_rec *r);
/* A graph whose patch the driver refused this many times is no longer patched
 * (its exact sequence still replays); a refusal changes nothing else. */
#define ENC_PATCH_REFUSALS 3
/* Can held op h be patched into the node captured for op c (same kind,
 * flags and size; a copy's ends and a memset's destination in the same kind
 * of memory as c's)? */
int enc_op_patchable(const struct enc_rec *h, const unsigned char *harena, const struct enc_rec *c,
                     const unsigned char *carena);
/* Write held op r into `node` of `exec` (in context ctx). A refusal is the
 * graph's alone (replay.c: that sequence runs eagerly); one warning per kind. */
CUresult enc_op_patch(CUgraphExec exec, CUgraphNode node, const struct enc_rec *r, const unsigned char *arena,
                      CUcontext ctx);
/* The event of a recorded event record or wait, else NULL. */
CUevent enc_op_event(const struct enc_rec *r, const unsigned char *arena);
int enc_graph_has_event_op(const struct enc_graph *g); /* a record or wait among g's ops */
/* known, of context ctx, not IPC; a record: not timing */
int enc_evtab_event_ok(CUevent ev, int record, CUcontext ctx);
void enc_evtab_forget_event(CUevent ev);
void enc_nodes_unname(CUevent ev); /* ev destroyed or created: no graph names it (enc_graph_unname_event) */
struct enc_stream_state *enc_evtab_holder(CUevent ev, int wait);
/* st holds a record of ev (or a wait on it): 0 if that cannot be noted (then it is not held). */
int enc_evtab_hold(struct enc_stream_state *st, CUevent ev, int wait);
/* st's held work was issued (with st->mu held): it holds no event any more. */
void enc_evtab_release(struct enc_stream_state *st);
int enc_mem_kind(uintptr_t p, size_t n);  /* enum enc_mem_kind, 0: not known (pageable) */
void enc_mem_context_gone(CUcontext ctx); /* its ranges go (NULL: a context not known: every range) */
/* the same, but device memory of a context other than ctx is not known (0) */
int enc_mem_kind_in(uintptr_t p, size_t n, CUcontext ctx);

#endif
