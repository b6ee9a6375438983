/* The driver's own entry points, found without asking the dynamic linker, for
 * benchmark programs that compare "encore" with "no encore" in one process.
 *
 * Under LD_PRELOAD=libencore.so, dlsym and cuGetProcAddress hand out encore's
 * wrappers. direct_driver_sym() reads the symbol from the loaded library's own
 * dynamic symbol table (dl_iterate_phdr, DT_SYMTAB/DT_STRTAB, DT_HASH or
 * DT_GNU_HASH for the symbol count), so a block of launches made through it
 * runs exactly as without encore: nothing is counted, recorded or held. The
 * program must first have encore issue what it holds (encore_switch_set(sw, 0))
 * and must not mix the two paths inside a block.
 *
 * This is a benchmark instrument, not something encore supports: a program that
 * did this on its own would launch behind encore's back (see README, limits). */
#ifndef ENCORE_DIRECT_DRIVER_H
#define ENCORE_DIRECT_DRIVER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

struct direct_driver_query {
    const char *lib;  /* a part of the library's path, e.g. "libcuda.so" */
    const char *name; /* the symbol */
    void *found;
};

static size_t direct_driver_nsyms(const uint32_t *hash, const uint32_t *gnu) {
    if (hash) return hash[1]; /* nchain */
    if (!gnu) return 0;
    uint32_t nbuckets = gnu[0], symoff = gnu[1], bloom = gnu[2];
    const uint32_t *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last) last = buckets[b];
    if (last < symoff) return symoff;
    while (!(chain[last - symoff] & 1)) last++; /* the end of the last chain */
    return (size_t)last + 1;
}

static int direct_driver_cb(struct dl_phdr_info *info, size_t size, void *data) {
    struct direct_driver_query *q = (struct direct_driver_query *)data;
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, q->lib)) return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;
    ElfW(Addr) base = info->dlpi_addr;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *hash = NULL, *gnu = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        ElfW(Addr) p = dyn->d_un.d_ptr;
        if (p < base) p += base; /* glibc relocates these in place on most targets; not on all */
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: strtab = (const char *)p; break;
        case DT_HASH: hash = (const uint32_t *)p; break;
        case DT_GNU_HASH: gnu = (const uint32_t *)p; break;
        default: break;
        }
    }
    if (!symtab || !strtab) return 0;
    size_t n = direct_driver_nsyms(hash, gnu);
    for (size_t i = 0; i < n; i++) {
        const ElfW(Sym) *s = &symtab[i];
        if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC) continue;
        if (!strcmp(strtab + s->st_name, q->name)) {
            q->found = (void *)(base + s->st_value);
            return 1;
        }
    }
    return 0;
}

/* The address of `name` in the loaded library whose path contains `lib`; NULL if not found. */
static inline void *direct_driver_sym(const char *lib, const char *name) {
    struct direct_driver_query q = {lib, name, NULL};
    dl_iterate_phdr(direct_driver_cb, &q);
    return q.found;
}

#endif
