/* encore: other CUDA tools in the process that encore steps aside for. */
#ifndef ENCORE_TOOLS_H
#define ENCORE_TOOLS_H

/* At start-up: is the program running under NVIDIA compute-sanitizer? If so,
 * prints one `encore:` warning saying that encore passes every call through,
 * and returns 1. compute-sanitizer checks each kernel launch the program
 * makes and reports errors at the program's own launch calls; with encore,
 * launches would be deferred and replayed from graphs captured on encore's
 * stream, so its reports would point at graph launches instead. Detected by
 * compute-sanitizer's injection library: CUDA_INJECTION64_PATH or
 * LD_PRELOAD naming a library of compute-sanitizer's, or one already loaded. */
int enc_tools_step_aside(void);

/* The test behind it, for unit tests: the text naming the tool, or NULL.
 * `injection` and `preload` are the two variables' values (may be NULL). */
const char *enc_tools_sanitizer_in(const char *injection, const char *preload);

#endif
