/* encore: the dlsym override.
 *
 * cudart (static and shared), Triton, CuPy and friends dlopen libcuda and
 * dlsym its entry points, which bypasses symbol interposition. Our dlsym
 * asks glibc's, and when the answer is a function of the real libcuda hands
 * back encore's wrapper of the same name instead (or, for a name the headers
 * do not know, a trampoline that flushes everything first). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "core/driver.h"
#include "core/engine.h"
#include "core/log.h"
#include "interpose/hooks.h"

/* RTLD_NEXT must be resolved relative to our caller, not to encore: walk the
 * link map after the caller's object and take the first object that defines
 * the name itself. */
static void *dlsym_next(const void *caller, const char *name) {
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return enc_real_dlsym(RTLD_NEXT, name);
    for (struct link_map *m = lm->l_next; m; m = m->l_next) {
        void *p = enc_real_dlsym(m, name);
        Dl_info pi;
        if (p && dladdr(p, &pi) && pi.dli_fbase == (void *)m->l_addr) return p;
        if (p && dladdr(p, &pi) && pi.dli_fname && m->l_name && strcmp(pi.dli_fname, m->l_name) == 0) return p;
    }
    return NULL;
}

/* The wrapper to hand out for `name`, whose real address is `real`. */
static void *interpose_symbol(const char *name, void *real) {
    if (name[0] != 'c' || name[1] != 'u' || enc_is_ours(real) || !enc_in_libcuda(real)) return real;
    enc_core_ensure_init();
    if (!enc_active) return real; /* ENCORE=0 or switched off */
    int i = enc_find_export(name);
    if (i >= 0) {
        void *expected = NULL;
        __atomic_compare_exchange_n(&enc_real_export[i], &expected, real, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
        return enc_exports[i].wrapper;
    }
    void *t = enc_trampoline_for(real, name);
    return t ? t : real;
}

ENC_EXPORT void *dlsym(void *handle, const char *name) {
    void *p;
    if (handle == RTLD_NEXT)
        p = dlsym_next(__builtin_return_address(0), name);
    else
        p = enc_real_dlsym(handle, name);
    if (!p || enc_tls_guard) return p;
    /* cuGetProcAddress is how cudart fetches everything else: always wrap it. */
    return interpose_symbol(name, p);
}
