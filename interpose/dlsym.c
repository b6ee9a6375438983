/* encore: the dlsym override.
 *
 * cudart (static and shared), Triton, CuPy and friends dlopen libcuda and
 * dlsym its entry points, which bypasses symbol interposition. Our dlsym
 * asks glibc's, and when the answer is a function of the real libcuda hands
 * back encore's wrapper of the same name instead (or, for a name the headers
 * do not know, a trampoline that flushes everything first; for a pure
 * pass-through entry point, the driver's own function).
 *
 * dlsym(RTLD_NEXT, name) is resolved by glibc relative to its caller, found
 * from the return address. On x86-64 such calls (for any name but the
 * driver's) therefore tail-jump into glibc's dlsym, so the caller seen is the
 * program's, not encore: other interposers keep working. Driver names are
 * looked up next to encore and wrapped, like every other driver look-up. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "base/driver.h"
#include "core/path/engine.h"
#include "base/log.h"
#include "interpose/hooks.h"

/* The wrapper to hand out for `name`, whose real address is `real`. */
static void *interpose_symbol(const char *name, void *real) {
    if (name[0] != 'c' || name[1] != 'u' || enc_is_ours(real) || !enc_in_libcuda(real)) return real;
    enc_interpose_ensure_init();
    if (!enc_hot.active && !enc_hot.counting_only) return real; /* switched off (ENCORE=0 still counts launches) */
    int i = enc_find_export(name);
    if (i >= 0) {
        void *expected = NULL;
        __atomic_compare_exchange_n(&enc_real_export[i], &expected, real, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
        return enc_hand_out_real(enc_exports[i].entry) ? real : enc_exports[i].wrapper;
    }
    void *t = enc_trampoline_for(real, name);
    return t ? t : real;
}

__attribute__((visibility("hidden"))) void *enc_dlsym_impl(void *handle, const char *name) {
    void *p = enc_real_dlsym(handle, name);
    if (!p || enc_thr.guard) return p;
    return interpose_symbol(name, p);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n" /* RTLD_NEXT? */
        "    jne enc_dlsym_impl\n"
        "    cmpb $0x63, (%rsi)\n" /* 'c' */
        "    jne 1f\n"
        "    cmpb $0x75, 1(%rsi)\n" /* 'u' */
        "    je enc_dlsym_impl\n"
        "1:  movq enc_real_dlsym_fn(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "    jmp *%rax\n" /* glibc sees the program's return address */
        "2:  pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call enc_real_dlsym_resolve\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 3f\n"
        "    jmp *%rax\n"
        "3:  ret\n" /* no dlsym at all: NULL */
        ".size dlsym, .-dlsym\n");
#else
ENC_EXPORT void *dlsym(void *handle, const char *name) { return enc_dlsym_impl(handle, name); }
#endif
