/* encore: issuing recorded work on a program's stream (issue.c). */
#ifndef ENCORE_ISSUE_H
#define ENCORE_ISSUE_H

#include <cuda.h>
#include <stdint.h>

#include "core/state/stream_state.h"

/* Make st's context current on this thread; returns 1 if it pushed. */
int enc_stream_enter_ctx(const enc_stream_state *st);
void enc_stream_leave_ctx(int pushed);
/* Where to issue st's held work from this thread (see enc_stream_state). */
CUstream enc_stream_begin_issue(enc_stream_state *st, int *pushed, int *side);
void enc_stream_end_issue(enc_stream_state *st, int pushed, int side);
/* The owner thread orders its per-thread stream after work released elsewhere. */
void enc_stream_join_side(enc_stream_state *st);
/* ... its per-thread streams (any context), before a call that may order work after them. */
void enc_stream_join_own_sides(void);
/* Before holding on a per-thread stream: mark where the hold starts (0: cannot hold). */
int enc_stream_hold_ok(enc_stream_state *st);
/* Compare st's stream's attributes with encore's capture stream's (sets attrs_differ and attr_gen). */
void enc_stream_check_attrs(enc_stream_state *st);
/* Has st's stream the priority of encore's capture stream? (driver calls) */
int enc_stream_priority_like_capture(enc_stream_state *st);
/* Issue one recorded launch (its bytes in `arena`) on `stream`. */
CUresult enc_stream_issue_rec(const enc_rec *r, const unsigned char *arena, CUstream stream);
/* ... a kernel launch, through cuLaunchKernelEx with these attributes instead of its own (the driver may
 * write values back into them: a device-updatable node's handle). */
CUresult enc_stream_issue_rec_with(const enc_rec *r, const unsigned char *arena, CUstream stream,
                                   CUlaunchAttribute *attrs, unsigned nattrs);

#endif
