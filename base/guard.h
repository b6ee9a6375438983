/* encore: the re-entrancy guard.
 *
 * enc_thr.guard is set on a thread while encore itself runs (or the driver
 * runs inside a hooked call): hooks reached meanwhile pass straight through,
 * so nothing encore does is recorded, held or counted as the program's.
 *
 * Set it for a block with ENC_GUARDED, modelled on libfaketime's DONT_FAKE_TIME:
 *
 *     ENC_GUARDED {
 *         enc_drv.streamGetFlags(...);   // calls that must not be intercepted
 *     }
 *
 * The block sets the guard and puts back the value it found when the block is
 * left, however it is left: `return` inside it restores the guard too (the
 * saved value lives in a variable with __attribute__((cleanup))). The block is
 * a one-pass for loop, so `break` and `continue` inside it leave the block, not
 * an enclosing loop. Blocks nest. */
#ifndef ENCORE_GUARD_H
#define ENCORE_GUARD_H

#include "base/thread.h"

/* Its values: 0 in the program's code; ENC_GUARD_OWN in encore's own code
 * (which may hold encore's locks); ENC_GUARD_DRIVER in the driver, running
 * a call the program made through a hook (encore holds none of its locks on
 * this thread then). Hooks reached pass straight through in both. The exit
 * handlers tell them apart (core/path/init.c): exit() from a signal handler that
 * interrupted encore's own code must not take encore's locks. */
#define ENC_GUARD_OWN 1
#define ENC_GUARD_DRIVER 2

static inline int enc_guard_enter(void) {
    int was = enc_thr.guard;
    enc_thr.guard = 1;
    return was;
}

static inline void enc_guard_restore(const int *was) { enc_thr.guard = *was; }

#define ENC_GUARDED                                                                                  \
    for (int enc_guard_was_ __attribute__((cleanup(enc_guard_restore), unused)) = enc_guard_enter(), \
                                                                       enc_guard_once_ = 1;          \
         enc_guard_once_; enc_guard_once_ = 0)

/* For a thread of encore's own, or the exit handler, that never hands control
 * back to the program: the guard stays set for the rest of the thread. */
static inline void enc_guard_set_for_good(void) { enc_thr.guard = 1; }

#endif
