/* encore: kernel names as people write them (core/observe/names.c). */
#ifndef ENCORE_NAMES_H
#define ENCORE_NAMES_H

#include <stddef.h>

/* The readable part of a mangled C++ name into out ("_Z6k_axpyPfPKffi" ->
 * "k_axpy", "_ZN2at6native6kernelIfEEvT_" -> "at::native::kernel<...>"): 1, or
 * 0 for a name that is not mangled (or not understood). No allocation. */
int enc_name_readable(const char *mangled, char *out, size_t cap);

/* Does one of the comma-separated fnmatch patterns match the name, as the
 * driver gives it or by its readable part? */
int enc_name_matches(const char *patterns, const char *name);

#endif
