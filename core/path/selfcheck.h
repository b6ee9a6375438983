/* encore: the self-check (core/path/selfcheck.c, ENCORE_SELF_CHECK): steps timed with encore
 * active and passing through, and encore stepping aside where active is slower. */
#ifndef ENCORE_CORE_PATH_SELFCHECK_H
#define ENCORE_CORE_PATH_SELFCHECK_H

#include <stdint.h>

/* 1 once the program called encoreSetActive: the switch is its own, the self-check stays off
 * (unless ENCORE_SELF_CHECK=2: benchmarks, whose active blocks then include the checks; a trial
 * block may set it, ENCORE_TRIAL=ENCORE_SELF_CHECK=2). */
extern int enc_program_switched;
/* A step boundary of the thread that waits for the GPU (launch.c: its first launch after a wait). */
void enc_selfcheck_step(void);
/* The program switched encore (or its trial settings): a check it rules out ends, and what it
 * had paused runs again. */
void enc_selfcheck_switched(void);
/* A check's verdict from the median step times of its first `groups` groups of four blocks (A P
 * P A, P A A P, ...); *ratio_permille: the middle of the groups' active / passive, times 1000. */
enum { ENC_CHECK_UNDECIDED, ENC_CHECK_GAINS, ENC_CHECK_LOSES };
int enc_selfcheck_verdict(const uint64_t *med, uint32_t groups, uint32_t *ratio_permille);

#endif
