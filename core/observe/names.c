/* encore: kernel names as people write them.
 *
 * The driver names a C++ kernel by its mangled name; the report's table shows
 * its readable part, and ENCORE_INCLUDE / ENCORE_EXCLUDE patterns match
 * either, so that `nccl*` or `at::native::*` mean what they say. */
#define _GNU_SOURCE
#include "core/observe/names.h"

#include <fnmatch.h>
#include <string.h>

#include "policy/options.h"

/* The readable part of an Itanium-mangled C++ name (the report's table shows
 * it, the JSON keeps the exact name): "_Z6k_axpyPfPKffi" -> "k_axpy",
 * "_ZN2at6native6kernelIfEEvT_" -> "at::native::kernel<...>". Only the
 * qualified function name, no parameters; anything unexpected gives 0 and the
 * caller uses the raw name. No allocation (unlike __cxa_demangle). */
int enc_name_readable(const char *m, char *out, size_t cap) {
    const char *p = m;
    size_t o = 0;
    if (p[0] != '_' || p[1] != 'Z') return 0;
    p += 2;
    if (*p == 'L') p++;
    int nested = *p == 'N';
    if (nested) {
        p++;
        while (*p == 'r' || *p == 'V' || *p == 'K' || *p == 'R' || *p == 'O') p++;
    }
    int parts = 0;
    for (;;) {
        const char *piece = NULL;
        size_t len = 0;
        if (p[0] == 'S' && p[1] == 't') {
            piece = "std";
            len = 3;
            p += 2;
        } else if (*p >= '1' && *p <= '9') {
            while (*p >= '0' && *p <= '9') {
                len = len * 10 + (size_t)(*p - '0');
                if (len > 4096) return 0;
                p++;
            }
            if (strnlen(p, len) < len) return 0;
            piece = p;
            p += len;
        } else {
            break;
        }
        if (o + len + 3 >= cap) return 0;
        if (parts++) {
            out[o++] = ':';
            out[o++] = ':';
        }
        memcpy(out + o, piece, len);
        o += len;
        if (!nested && piece[0] != 's') /* _ZSt4sort...: std::sort */
            break;
    }
    if (parts == 0) return 0;
    if (*p == 'I' && o + 6 < cap) {
        memcpy(out + o, "<...>", 5);
        o += 5;
    }
    out[o] = '\0';
    return 1;
}

int enc_name_matches(const char *patterns, const char *name) {
    char buf[ENC_OPT_STRLEN], readable[512];
    int has_readable = enc_name_readable(name, readable, sizeof readable);
    strncpy(buf, patterns, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        while (*p == ' ') p++;
        if (!*p) continue;
        if (fnmatch(p, name, 0) == 0 || (has_readable && fnmatch(p, readable, 0) == 0)) return 1;
    }
    return 0;
}
