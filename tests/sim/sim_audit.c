/* libsimaudit.so: the CUPTI audit's contract with encore (tests/gpu/audit.c), on
 * the simulated driver. Preloaded after encore (LD_PRELOAD="libencore.so
 * libsimaudit.so"), it gives encore the hooks it brackets every launch it
 * makes with (encore_audit_enter, encore_audit_leave: core/path/init.c looks
 * them up), and the simulator asks simaudit_depth() at every kernel and graph
 * launch: a launch outside a bracket bypassed encore. With SIMCUDA_STATS the
 * simulator prints "simcuda: audit_launches=N audit_unseen=K" (run_diff's
 * sim.audit_unseen). A GPU found the first hole this closes: launches that
 * passed through while encore was switched off went to the driver unbracketed
 * (2026-11-27, call 33). */
#define AUDIT_EXPORT __attribute__((visibility("default")))

static _Thread_local int depth;

AUDIT_EXPORT void encore_audit_enter(void) { depth++; }
AUDIT_EXPORT void encore_audit_leave(void) { depth--; }
AUDIT_EXPORT int simaudit_depth(void) { return depth; }
