/* Unit tests of the candidate table (core/graphs/learn.c, enc_cand_find): a
 * sequence's hash is counted in one of a few slots near its home slot; a new
 * hash takes a free slot, or else the least-counted candidate still counting.
 * And of how its sightings count (core/graphs/hold.c, enc_cand_sighted):
 * those inside one flush interval of the stream count for half. */
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/graphs/worth.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "testhelper.h"

#define HOME 5
/* The k-th hash whose home slot is HOME. */
static uint64_t at_home(uint64_t k) { return (k + 1) * ENC_CAND_CAP + HOME; }

/* Fill the slots a hash with home HOME can use with counting candidates of these counts. */
static void fill(enc_candidate *t, const uint32_t *counts, int n) {
    for (int i = 0; i < n; i++) {
        enc_candidate *c = enc_cand_find(t, at_home((uint64_t)i), 1);
        c->count = counts[i];
    }
}

/* n sightings of c on st, in st's current flush interval. */
static void sighted(const enc_stream_state *st, enc_candidate *c, int n) {
    for (int i = 0; i < n; i++) enc_cand_sighted(st, c);
}

/* A fresh candidate's sightings until `need` of them are enough; with a flush
 * point of its stream after the first `flush_after` of them (0: none). */
static int sightings_until_due(uint32_t need, int flush_after) {
    static enc_stream_state st;
    enc_candidate t[ENC_CAND_CAP] = {{0}};
    enc_candidate *c = enc_cand_find(t, 77, 1);
    int n = 0;
    while (!enc_capture_enough(c, need) && n < 100) {
        if (flush_after && n == flush_after) st.flush_points++;
        sighted(&st, c, 1);
        n++;
    }
    return n;
}

int main(int argc, char **argv) {
    th_init(argc, argv);

    TEST("candidates: an unknown hash is not found without create") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        EXPECT(enc_cand_find(t, 1234, 0) == NULL);
    }

    TEST("candidates: a created candidate starts counting from zero in its home slot") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        enc_candidate *c = enc_cand_find(t, at_home(0), 1);
        EXPECT(c == &t[HOME]);
        EXPECT_EQ_INT(c->count, 0);
        EXPECT_EQ_INT(c->state, ENC_CAND_COUNTING);
        EXPECT(c->hash == at_home(0));
    }

    TEST("candidates: a counted candidate is found again, with or without create") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        enc_candidate *c = enc_cand_find(t, 77, 1);
        c->count = 1;
        EXPECT(enc_cand_find(t, 77, 0) == c);
        EXPECT(enc_cand_find(t, 77, 1) == c);
        EXPECT_EQ_INT(c->count, 1);
    }

    TEST("candidates: hashes with the same home slot take the next slots") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        uint32_t counts[3] = {1, 1, 1};
        fill(t, counts, 3);
        EXPECT(enc_cand_find(t, at_home(1), 0) == &t[HOME + 1]);
        EXPECT(enc_cand_find(t, at_home(2), 0) == &t[HOME + 2]);
    }

    TEST("candidates: a free slot is taken before any counting candidate") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        uint32_t counts[7] = {5, 1, 5, 5, 5, 5, 5};
        fill(t, counts, 7);
        enc_candidate *c = enc_cand_find(t, at_home(100), 1);
        EXPECT(c == &t[HOME + 7]);
        EXPECT(enc_cand_find(t, at_home(1), 0) == &t[HOME + 1]); /* the least counted one is still there */
    }

    TEST("candidates: with no free slot, the least-counted counting candidate is taken over") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        uint32_t counts[8] = {5, 4, 3, 1, 2, 6, 7, 8};
        fill(t, counts, 8);
        enc_candidate *c = enc_cand_find(t, at_home(100), 1);
        EXPECT(c == &t[HOME + 3]);
        EXPECT(c->hash == at_home(100));
        EXPECT_EQ_INT(c->count, 0);
        EXPECT(enc_cand_find(t, at_home(3), 0) == NULL); /* the victim is forgotten */
    }

    TEST("candidates: captured and never-again candidates are not taken over") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        uint32_t counts[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        fill(t, counts, 8);
        for (int i = 0; i < 8; i++) t[HOME + i].state = i % 2 ? ENC_CAND_CAPTURED : ENC_CAND_NEVER;
        EXPECT(enc_cand_find(t, at_home(100), 1) == NULL);
        t[HOME + 6].state = ENC_CAND_COUNTING;
        EXPECT(enc_cand_find(t, at_home(100), 1) == &t[HOME + 6]);
    }

    TEST("candidates: the slots wrap around the end of the table") {
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        uint64_t last = 3 * ENC_CAND_CAP + (ENC_CAND_CAP - 1);
        enc_candidate *c1 = enc_cand_find(t, last, 1);
        c1->count = 1;
        enc_candidate *c2 = enc_cand_find(t, last + ENC_CAND_CAP, 1);
        EXPECT(c1 == &t[ENC_CAND_CAP - 1]);
        EXPECT(c2 == &t[0]);
    }

    TEST("candidates: sightings inside one flush interval are due at twice the sightings asked for") {
        EXPECT_EQ_INT(sightings_until_due(3, 0), 6);
    }

    TEST("candidates: a sighting after a flush point makes the sightings asked for enough") {
        EXPECT_EQ_INT(sightings_until_due(3, 2), 3);
    }

    TEST("candidates: one sighting asked for is enough at the first") { EXPECT_EQ_INT(sightings_until_due(1, 0), 1); }

    TEST("candidates: a slot taken by another hash forgets the intervals its sightings came in") {
        static enc_stream_state st;
        enc_candidate t[ENC_CAND_CAP] = {{0}};
        uint32_t counts[8] = {2, 2, 2, 2, 2, 2, 2, 2};
        fill(t, counts, 8);
        t[HOME].count = 1;
        t[HOME].spanned = 1;
        enc_candidate *c = enc_cand_find(t, at_home(100), 1);
        EXPECT(c == &t[HOME]);
        EXPECT_EQ_INT(c->spanned, 0);
        sighted(&st, c, 3);
        EXPECT(!enc_capture_enough(c, 3));
    }

    return th_report();
}
