/* Unit tests of recording a launch into a sequence (core/streams/record.c): what a
 * record keeps, its fingerprints and the sequence hashes, padding between
 * parameters zeroed, launches that cannot be recorded, and moving the pending
 * launch into a fresh sequence (the anchor cut). */
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "testhelper.h"

/* A layout of (int at 0, pointer-sized at 8): 4 bytes of padding at 4..8. */
static enc_layout *padded_layout(void) {
    enc_layout *L = calloc(1, sizeof *L + 4 * sizeof(uint32_t));
    L->func = (void *)0x100;
    L->nparams = 2;
    L->ok = 1;
    L->off[0] = 0;
    L->off[1] = 8;
    L->off[2] = 4;
    L->off[3] = 8;
    L->argbytes = 16;
    strcpy(L->name, "axpy");
    return L;
}

static enc_launch launch_of(const enc_layout *L, void **params) {
    enc_launch l;
    memset(&l, 0, sizeof l);
    l.f = (CUfunction)L->func;
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = 128;
    l.block[1] = l.block[2] = 1;
    l.params = params;
    return l;
}

static enc_seq new_seq(void) {
    enc_seq s;
    memset(&s, 0, sizeof s);
    if (enc_record_init(&s, 8) != 0) exit(2);
    return s;
}

static void free_seq(enc_seq *s) {
    free(s->recs);
    free(s->arena);
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    enc_layout *L = padded_layout();

    TEST("record: equal launches record equal fingerprints and hashes whatever garbage was in the arena's padding") {
        int n = 7;
        uint64_t p = 0xdeadbeef;
        void *params[2] = {&n, &p};
        enc_launch l = launch_of(L, params);
        enc_seq a = new_seq(), b = new_seq();
        memset(a.arena, 0xaa, a.arena_cap);
        memset(b.arena, 0x55, b.arena_cap);
        EXPECT_EQ_INT(enc_record_launch(&a, &l, L), 0);
        EXPECT_EQ_INT(enc_record_launch(&b, &l, L), 0);
        EXPECT(a.recs[0].afp == b.recs[0].afp);
        EXPECT(a.recs[0].sfp == b.recs[0].sfp);
        EXPECT(memcmp(a.arena, b.arena, L->argbytes) == 0);
        EXPECT(a.arena[4] == 0 && a.arena[7] == 0);
        enc_record_commit(&a);
        enc_record_commit(&b);
        enc_record_hash(&a);
        enc_record_hash(&b);
        EXPECT(a.hash == b.hash);
        EXPECT(a.shash == b.shash);
        free_seq(&a);
        free_seq(&b);
    }

    TEST("record: the arguments are copied, so later changes by the program do not reach the record") {
        int n = 7;
        uint64_t p = 1;
        void *params[2] = {&n, &p};
        enc_launch l = launch_of(L, params);
        enc_seq s = new_seq();
        enc_record_launch(&s, &l, L);
        n = 8;
        int copied;
        memcpy(&copied, s.arena + s.recs[0].arg_off, sizeof copied);
        EXPECT_EQ_INT(copied, 7);
        EXPECT(s.recs[0].f == l.f && s.recs[0].L == L && s.recs[0].block[0] == 128);
        free_seq(&s);
    }

    TEST("record: other argument bytes change the argument fingerprint, not the structural one") {
        int n = 7;
        uint64_t p = 1;
        void *params[2] = {&n, &p};
        enc_launch l = launch_of(L, params);
        enc_seq s = new_seq();
        enc_record_launch(&s, &l, L);
        enc_record_commit(&s);
        p = 2;
        enc_record_launch(&s, &l, L);
        EXPECT(s.recs[0].sfp == s.recs[1].sfp);
        EXPECT(s.recs[0].afp != s.recs[1].afp);
        free_seq(&s);
    }

    TEST("record: the sequence hashes fold in the launches committed, not the pending one") {
        int n = 7;
        uint64_t p = 1;
        void *params[2] = {&n, &p};
        enc_launch l = launch_of(L, params);
        enc_seq s = new_seq();
        enc_record_launch(&s, &l, L);
        enc_record_hash(&s);
        EXPECT(s.hash == 0 && s.n == 0);
        enc_record_commit(&s);
        enc_record_launch(&s, &l, L); /* pending */
        enc_record_hash(&s);
        uint64_t h1 = s.hash;
        EXPECT(h1 != 0 && s.n == 1);
        enc_record_commit(&s);
        enc_record_hash(&s);
        EXPECT(s.hash != h1 && s.n == 2);
        free_seq(&s);
    }

    TEST("record: a missing parameter pointer cannot be recorded and keeps nothing") {
        int n = 7;
        void *params[2] = {&n, NULL};
        enc_launch l = launch_of(L, params);
        enc_seq s = new_seq();
        EXPECT(enc_record_launch(&s, &l, L) < 0);
        EXPECT_EQ_INT(s.arena_used, 0);
        free_seq(&s);
    }

    TEST("record: arguments in one packed buffer are copied; a shorter one (NCCL's) is zero-filled, an empty one refused") {
        unsigned char buf[16];
        memset(buf, 3, sizeof buf);
        size_t size = sizeof buf;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                         CU_LAUNCH_PARAM_END};
        enc_launch l = launch_of(L, NULL);
        l.extra = extra;
        enc_seq s = new_seq();
        EXPECT_EQ_INT(enc_record_launch(&s, &l, L), 0);
        EXPECT(memcmp(s.arena, buf, sizeof buf) == 0);
        enc_record_commit(&s);
        size_t used = s.arena_used;
        size = 8;
        EXPECT_EQ_INT(enc_record_launch(&s, &l, L), 0);
        EXPECT(memcmp(s.arena + used, buf, 8) == 0);
        for (size_t i = 8; i < L->argbytes; i++) EXPECT_EQ_INT(s.arena[used + i], 0);
        size = 0;
        EXPECT(enc_record_launch(&s, &l, L) < 0);
        free_seq(&s);
    }

    TEST("record: launch attributes are part of the structure; a cooperative launch is refused") {
        int n = 7;
        uint64_t p = 1;
        void *params[2] = {&n, &p};
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        attr.value.priority = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        enc_launch plain = launch_of(L, params), with = launch_of(L, params);
        with.shape = ENC_SHAPE_EX;
        with.config = &cfg;
        enc_seq s = new_seq();
        EXPECT_EQ_INT(enc_record_launch(&s, &plain, L), 0);
        enc_record_commit(&s);
        EXPECT_EQ_INT(enc_record_launch(&s, &with, L), 0);
        EXPECT(s.recs[0].sfp != s.recs[1].sfp);
        EXPECT_EQ_INT(s.recs[1].nattrs, 1);
        attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr.value.cooperative = 1;
        enc_record_commit(&s);
        int rc = enc_record_launch(&s, &with, L);
        EXPECT(rc < 0);
        EXPECT(strstr(enc_record_why(rc), "cooperative") != NULL);
        free_seq(&s);
    }

    TEST("record: the pending launch moves into a fresh sequence with its bytes, hashed alone") {
        int n = 7;
        uint64_t p = 1;
        void *params[2] = {&n, &p};
        enc_launch l = launch_of(L, params);
        enc_seq s = new_seq(), alone = new_seq();
        for (int i = 0; i < 3; i++) {
            p = (uint64_t)i;
            enc_record_launch(&s, &l, L);
            enc_record_commit(&s);
        }
        p = 42;
        enc_record_launch(&s, &l, L);
        enc_record_launch(&alone, &l, L);
        enc_record_commit(&alone);
        enc_detached_rec d = enc_record_detach_pending(&s);
        EXPECT_EQ_INT(s.arena_used, 3 * 16);
        enc_record_reset(&s);
        enc_record_attach_pending(&s, &d);
        EXPECT_EQ_INT(s.recs[0].arg_off, 0);
        EXPECT_EQ_INT(s.arena_used, 16);
        uint64_t moved;
        memcpy(&moved, s.arena + 8, sizeof moved);
        EXPECT_EQ_INT(moved, 42);
        enc_record_commit(&s);
        enc_record_hash(&s);
        enc_record_hash(&alone);
        EXPECT(s.n == 1 && s.hash == alone.hash && s.shash == alone.shash);
        free_seq(&s);
        free_seq(&alone);
    }

    free(L);
    return th_report();
}
