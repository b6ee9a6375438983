/* encore: the best k of n elements, best first.
 *
 * Insertion into a sorted list of at most k indices: n is small (report
 * lists, flush causes) and nothing is allocated. Equal elements keep their
 * order, so ties go to the earlier one. */
#ifndef ENCORE_TOPK_H
#define ENCORE_TOPK_H

#include <stddef.h>
#include <string.h>

/* Fills idx[0..k) with the indices of the best of the n elements of `size`
 * bytes at v (better(a, b): a ranks strictly before b); returns how many. */
static inline size_t enc_top_k(const void *v, size_t n, size_t size, int (*better)(const void *, const void *),
                               size_t *idx, size_t k) {
    const char *base = v;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t pos = m;
        while (pos > 0 && better(base + i * size, base + idx[pos - 1] * size)) pos--;
        if (pos >= k) continue;
        size_t last = m < k ? m : k - 1;
        memmove(idx + pos + 1, idx + pos, (last - pos) * sizeof idx[0]);
        idx[pos] = i;
        if (m < k) m++;
    }
    return m;
}

#endif
