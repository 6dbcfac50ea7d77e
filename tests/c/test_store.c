/* test_store.c -- the room store of psdl.builder (src/psdl_store.h): rooms filled in any
 * order keep their records in push order, references are copied, clear + push replaces a
 * room's records, surface triangles leave caps and non-floor records out, and every misuse
 * (no such room, a type out of range, NULL arguments) gives an error code, never a crash.
 * Run under ASan/UBSan by scripts/test (build-asan/psdl_ctest_store). */
#include "psdl_store.h"

#include "check.h"

static psdl_store_rec rec_of(int type, uint32_t group) {
    psdl_store_rec r;
    memset(&r, 0, sizeof r);
    r.type = (uint8_t)type;
    r.group = group;
    return r;
}

static void test_rooms_and_order(void) {
    set_ctx("rooms and order");
    psdl_store *s = psdl_store_new();
    CHECK(s != NULL);
    CHECK(psdl_store_rooms(s) == 0);
    CHECK(psdl_store_add_room(s) == 1);
    CHECK(psdl_store_add_room(s) == 2);
    uint32_t a[] = {1, 2, 3, 4, 5, 6, 7, 8};
    psdl_store_rec r = rec_of(PSDL_STORE_ROAD, 3);
    /* interleaved: room 2, room 1, room 2 */
    CHECK(psdl_store_push(s, 2, &r, a, 8) == 0);
    r = rec_of(PSDL_STORE_FAN, 1);
    r.param[0] = 2.5;
    CHECK(psdl_store_push(s, 1, &r, a, 4) == 0);
    r = rec_of(PSDL_STORE_FACADE, 2);
    r.param[2] = 7;
    a[0] = 99; /* the store copied the references */
    CHECK(psdl_store_push(s, 2, &r, a + 6, 2) == 0);
    CHECK(psdl_store_count(s, 1) == 1);
    CHECK(psdl_store_count(s, 2) == 2);
    const psdl_store_rec *x = psdl_store_first(s, 2);
    CHECK(x && x->type == PSDL_STORE_ROAD && x->group == 3 && x->nrefs == 8);
    CHECK(x && psdl_store_refs(s, x)[0] == 1 && psdl_store_refs(s, x)[7] == 8);
    x = psdl_store_next(s, x);
    CHECK(x && x->type == PSDL_STORE_FACADE && x->param[2] == 7 && x->nrefs == 2);
    CHECK(x && psdl_store_refs(s, x)[0] == 7);
    CHECK(psdl_store_next(s, x) == NULL);
    x = psdl_store_first(s, 1);
    CHECK(x && x->type == PSDL_STORE_FAN && x->param[0] == 2.5 && psdl_store_refs(s, x)[0] == 1);
    /* many records: the arrays grow, earlier ones keep their values */
    for (int i = 0; i < 10000; i++) {
        psdl_store_rec q = rec_of(PSDL_STORE_SLIVER, (uint32_t)i + 1);
        uint32_t v[2] = {(uint32_t)i + 1, (uint32_t)i + 2};
        if (psdl_store_push(s, 1 + (size_t)(i % 2), &q, v, 2) != 0) {
            CHECK(0);
            break;
        }
    }
    CHECK(psdl_store_count(s, 1) == 5001 && psdl_store_count(s, 2) == 5002);
    size_t k = 0, ok = 1;
    for (x = psdl_store_first(s, 1); x; x = psdl_store_next(s, x), k++)
        if (k > 0 && (x->group != 2 * (k - 1) + 1 || psdl_store_refs(s, x)[1] != x->group + 1)) ok = 0;
    CHECK(ok && k == 5001);
    psdl_store_free(s);
}

static void test_clear_and_triangles(void) {
    set_ctx("clear and triangles");
    psdl_store *s = psdl_store_new();
    CHECK(psdl_store_add_room(s) == 1);
    uint32_t road[] = {1, 2, 3, 4, 5, 6, 7, 8};
    psdl_store_rec r = rec_of(PSDL_STORE_ROAD, 1);
    CHECK(psdl_store_push(s, 1, &r, road, 8) == 0);
    r = rec_of(PSDL_STORE_SIDEWALK_STRIP, 1);
    r.cap = 1; /* a cap is no floor */
    CHECK(psdl_store_push(s, 1, &r, road, 2) == 0);
    r = rec_of(PSDL_STORE_FACADE, 1); /* no floor either */
    CHECK(psdl_store_push(s, 1, &r, road, 2) == 0);
    uint32_t *t = NULL;
    size_t n = 0;
    CHECK(psdl_store_triangles(s, 1, &t, &n) == 0);
    CHECK(n == 18); /* 3 quads, 2 triangles each */
    CHECK(t && t[0] == 1 && t[1] == 2 && t[2] == 6);
    free(t);
    CHECK(psdl_store_clear(s, 1) == 0);
    CHECK(psdl_store_count(s, 1) == 0 && psdl_store_first(s, 1) == NULL);
    CHECK(psdl_store_triangles(s, 1, &t, &n) == 0 && n == 0);
    free(t);
    uint32_t fan[] = {10, 11, 12, 13};
    r = rec_of(PSDL_STORE_FAN, 2);
    CHECK(psdl_store_push(s, 1, &r, fan, 4) == 0);
    CHECK(psdl_store_count(s, 1) == 1 && psdl_store_first(s, 1)->group == 2);
    CHECK(psdl_store_triangles(s, 1, &t, &n) == 0 && n == 6);
    free(t);
    psdl_store_free(s);
}

static void test_misuse(void) {
    set_ctx("misuse");
    psdl_store *s = psdl_store_new();
    psdl_store_rec r = rec_of(PSDL_STORE_ROAD, 1);
    uint32_t v[] = {1, 2};
    CHECK(psdl_store_push(s, 1, &r, v, 2) == PSDL_STORE_RANGE); /* no rooms yet */
    CHECK(psdl_store_add_room(s) == 1);
    CHECK(psdl_store_push(s, 0, &r, v, 2) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push(s, 2, &r, v, 2) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push(s, 1, NULL, v, 2) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push(s, 1, &r, NULL, 2) == PSDL_STORE_RANGE);
    r.type = PSDL_STORE_NTYPES;
    CHECK(psdl_store_push(s, 1, &r, v, 2) == PSDL_STORE_RANGE);
    CHECK(psdl_store_count(s, 1) == 0);
    r.type = PSDL_STORE_TUNNEL; /* no references is fine */
    CHECK(psdl_store_push(s, 1, &r, NULL, 0) == 0);
    CHECK(psdl_store_refs(s, psdl_store_first(s, 1)) == NULL);
    CHECK(psdl_store_count(s, 7) == 0 && psdl_store_first(s, 7) == NULL && psdl_store_first(s, 0) == NULL);
    CHECK(psdl_store_clear(s, 0) == PSDL_STORE_RANGE && psdl_store_clear(s, 2) == PSDL_STORE_RANGE);
    uint32_t *t = (uint32_t *)1;
    size_t n = 5;
    CHECK(psdl_store_triangles(s, 3, &t, &n) == PSDL_STORE_RANGE && t == NULL && n == 0);
    CHECK(psdl_store_triangles(s, 1, NULL, &n) == PSDL_STORE_RANGE);
    CHECK(psdl_store_next(s, NULL) == NULL && psdl_store_refs(s, NULL) == NULL);
    CHECK(psdl_store_add_room(NULL) < 0 && psdl_store_rooms(NULL) == 0 && psdl_store_count(NULL, 1) == 0);
    CHECK(psdl_store_first(NULL, 1) == NULL && psdl_store_clear(NULL, 1) == PSDL_STORE_RANGE);
    psdl_store_free(s);
    psdl_store_free(NULL);
}

/* mark + truncate: rooms added since the mark are dropped, records pushed since to older
 * rooms too (their lists cut, counts and triangles as before), the store takes new pushes
 * after it; counts that are no mark of the store (above its counts, or dropping references a
 * kept record uses) are refused with nothing changed. */
static void test_mark_truncate(void) {
    set_ctx("mark and truncate");
    psdl_store *s = psdl_store_new();
    CHECK(s != NULL);
    uint32_t a[] = {1, 2, 3, 4, 5, 6, 7, 8};
    psdl_store_rec r = rec_of(PSDL_STORE_FAN, 1);
    CHECK(psdl_store_add_room(s) == 1 && psdl_store_add_room(s) == 2);
    CHECK(psdl_store_push(s, 1, &r, a, 4) == 0);
    CHECK(psdl_store_push(s, 2, &r, a + 4, 4) == 0);
    psdl_store_mark_t m;
    psdl_store_mark(s, &m);
    CHECK(m.rooms == 2 && m.recs == 2 && m.refs == 8);
    r = rec_of(PSDL_STORE_ROAD, 5);
    CHECK(psdl_store_push(s, 1, &r, a, 8) == 0); /* an older room gets more */
    CHECK(psdl_store_add_room(s) == 3);
    CHECK(psdl_store_push(s, 3, &r, a, 8) == 0);
    CHECK(psdl_store_push(s, 1, &r, a, 8) == 0);
    CHECK(psdl_store_count(s, 1) == 3);
    psdl_store_mark_t bad = m;
    bad.rooms = 9;
    CHECK(psdl_store_truncate(s, &bad) == PSDL_STORE_RANGE && psdl_store_rooms(s) == 3);
    bad = m;
    bad.refs = 5; /* room 2's record uses references 4..7 */
    CHECK(psdl_store_truncate(s, &bad) == PSDL_STORE_RANGE && psdl_store_count(s, 1) == 3);
    CHECK(psdl_store_truncate(NULL, &m) == PSDL_STORE_RANGE && psdl_store_truncate(s, NULL) == PSDL_STORE_RANGE);
    CHECK(psdl_store_truncate(s, &m) == 0);
    CHECK(psdl_store_rooms(s) == 2 && psdl_store_count(s, 1) == 1 && psdl_store_count(s, 2) == 1);
    CHECK(psdl_store_count(s, 3) == 0 && psdl_store_first(s, 3) == NULL);
    const psdl_store_rec *x = psdl_store_first(s, 1);
    CHECK(x && x->type == PSDL_STORE_FAN && psdl_store_next(s, x) == NULL);
    uint32_t *t;
    size_t n;
    CHECK(psdl_store_triangles(s, 1, &t, &n) == 0 && n == 6);
    free(t);
    /* pushes after it append to the cut lists */
    CHECK(psdl_store_push(s, 1, &r, a, 8) == 0 && psdl_store_count(s, 1) == 2);
    x = psdl_store_first(s, 1);
    CHECK(x && (x = psdl_store_next(s, x)) != NULL && x->type == PSDL_STORE_ROAD && psdl_store_refs(s, x)[7] == 8);
    CHECK(psdl_store_add_room(s) == 3);
    /* back to empty */
    psdl_store_mark_t zero = {0, 0, 0, 0};
    CHECK(psdl_store_truncate(s, &zero) == 0 && psdl_store_rooms(s) == 0);
    CHECK(psdl_store_add_room(s) == 1 && psdl_store_count(s, 1) == 0);
    psdl_store_mark(NULL, &m);
    CHECK(m.rooms == 0 && m.recs == 0 && m.refs == 0);
    psdl_store_mark(s, NULL);
    psdl_store_free(s);
}

/* The group uses by walking each listed room's record list (what psdl_store_group_uses
 * gives in one pass over the array): into g/gr (groups, their rooms), d/dr; counts in *ng, *nd. */
static void walk_uses(const psdl_store *s, const uint32_t *order, size_t n, uint32_t *g, uint32_t *gr, size_t *ng,
                      uint32_t *d, uint32_t *dr, size_t *nd) {
    *ng = *nd = 0;
    for (size_t i = 0; i < n; i++)
        for (const psdl_store_rec *r = psdl_store_first(s, order[i]); r; r = psdl_store_next(s, r)) {
            size_t k;
            if (r->group) {
                for (k = 0; k < *ng && g[k] != r->group; k++) continue;
                if (k == *ng) g[*ng] = r->group, gr[(*ng)++] = order[i];
            }
            if (r->dgroup) {
                for (k = 0; k < *nd && d[k] != r->dgroup; k++) continue;
                if (k == *nd) d[*nd] = r->dgroup, dr[(*nd)++] = order[i];
            }
        }
}

/* Compares psdl_store_group_uses over order with the walk; returns whether they agree. */
static int uses_agree(const psdl_store *s, const uint32_t *order, size_t n) {
    static uint32_t g[4096], gr[4096], d[4096], dr[4096];
    size_t ng, nd;
    walk_uses(s, order, n, g, gr, &ng, d, dr, &nd);
    psdl_store_use *ug, *ud;
    size_t nug, nud;
    if (psdl_store_group_uses(s, order, n, &ug, &nug, &ud, &nud) != 0) return 0;
    int ok = nug == ng && nud == nd;
    for (size_t i = 0; ok && i < ng; i++) ok = ug[i].group == g[i] && ug[i].room == gr[i];
    for (size_t i = 0; ok && i < nd; i++) ok = ud[i].group == d[i] && ud[i].room == dr[i];
    free(ug);
    free(ud);
    return ok;
}

/* psdl_store_group_uses: first uses in the order's rooms and each room's push order, over
 * rooms filled in any order, cleared and refilled, cut back by a truncate; rooms listed
 * twice or not at all; group numbers up to UINT32_MAX; misuse refused. */
static void test_group_uses(void) {
    set_ctx("group uses");
    psdl_store *s = psdl_store_new();
    for (int i = 0; i < 40; i++) CHECK(psdl_store_add_room(s) == i + 1);
    uint32_t v[3] = {1, 2, 3};
    unsigned long x = 12345;
#define NEXT(m) ((x = x * 6364136223846793005UL + 1442695040888963407UL), (uint32_t)((x >> 33) % (m)))
    for (int i = 0; i < 3000; i++) {
        int type = NEXT(2) ? PSDL_STORE_FACADE : PSDL_STORE_DIVIDED_ROAD;
        psdl_store_rec r = rec_of(type, NEXT(50));
        if (r.type == PSDL_STORE_DIVIDED_ROAD) r.dgroup = NEXT(8);
        if (NEXT(40) == 0) r.group = 0xFFFFFFF0u - NEXT(3); /* far apart: a hash table, not an array */
        CHECK(psdl_store_push(s, 1 + NEXT(40), &r, v, 3) == 0);
        if (NEXT(300) == 0) CHECK(psdl_store_clear(s, 1 + NEXT(40)) == 0);
    }
    uint32_t order[80];
    for (uint32_t i = 0; i < 40; i++) order[i] = 40 - i; /* backwards */
    CHECK(uses_agree(s, order, 40));
    for (uint32_t i = 0; i < 40; i++) order[i] = 1 + NEXT(40); /* repeats, some rooms left out */
    CHECK(uses_agree(s, order, 40));
    CHECK(uses_agree(s, order, 0));
    /* a truncate back to a mark taken mid-way, then more pushes and clears */
    psdl_store_mark_t m;
    psdl_store_mark(s, &m);
    for (int i = 0; i < 500; i++) {
        psdl_store_rec r = rec_of(PSDL_STORE_ROOF, 100 + NEXT(20));
        CHECK(psdl_store_push(s, 1 + NEXT(40), &r, v, 3) == 0);
        if (i == 250) CHECK(psdl_store_clear(s, 7) == 0);
    }
    CHECK(uses_agree(s, order, 40));
    CHECK(psdl_store_truncate(s, &m) == 0);
    for (uint32_t i = 0; i < 40; i++) order[i] = i + 1;
    CHECK(uses_agree(s, order, 40));
    psdl_store_rec r = rec_of(PSDL_STORE_ROOF, 999);
    CHECK(psdl_store_push(s, 40, &r, v, 3) == 0 && psdl_store_clear(s, 3) == 0);
    CHECK(uses_agree(s, order, 40));
    /* a room given its records after another: the first use follows the order, not the pushes */
    psdl_store *t = psdl_store_new();
    CHECK(psdl_store_add_room(t) == 1 && psdl_store_add_room(t) == 2);
    r = rec_of(PSDL_STORE_ROOF, 5);
    CHECK(psdl_store_push(t, 2, &r, v, 3) == 0);
    r = rec_of(PSDL_STORE_ROOF, 6);
    CHECK(psdl_store_push(t, 1, &r, v, 3) == 0);
    r = rec_of(PSDL_STORE_ROOF, 5);
    CHECK(psdl_store_push(t, 1, &r, v, 3) == 0);
    uint32_t o2[2] = {1, 2};
    psdl_store_use *ug, *ud;
    size_t nug, nud;
    CHECK(psdl_store_group_uses(t, o2, 2, &ug, &nug, &ud, &nud) == 0);
    CHECK(nug == 2 && ug && ug[0].group == 6 && ug[0].room == 1 && ug[1].group == 5 && ug[1].room == 1);
    CHECK(nud == 0 && ud == NULL);
    free(ug);
    /* misuse: nothing allocated, lists NULL */
    uint32_t bad[2] = {1, 3};
    ug = ud = (psdl_store_use *)1;
    CHECK(psdl_store_group_uses(t, bad, 2, &ug, &nug, &ud, &nud) == PSDL_STORE_RANGE && ug == NULL && ud == NULL);
    bad[1] = 0;
    CHECK(psdl_store_group_uses(t, bad, 2, &ug, &nug, &ud, &nud) == PSDL_STORE_RANGE);
    CHECK(psdl_store_group_uses(t, NULL, 2, &ug, &nug, &ud, &nud) == PSDL_STORE_RANGE);
    CHECK(psdl_store_group_uses(NULL, o2, 2, &ug, &nug, &ud, &nud) == PSDL_STORE_RANGE);
    CHECK(psdl_store_group_uses(t, o2, 2, NULL, &nug, &ud, &nud) == PSDL_STORE_RANGE);
    CHECK(psdl_store_group_uses(t, o2, 2, &ug, &nug, &ud, NULL) == PSDL_STORE_RANGE);
    CHECK(psdl_store_group_uses(t, NULL, 0, &ug, &nug, &ud, &nud) == 0 && nug == 0 && ug == NULL);
#undef NEXT
    psdl_store_free(t);
    psdl_store_free(s);
}

/* Checks every record of the store's rooms 1..nrooms: record j of room k (in push order) has
 * group value(k, j) and references value + 0, 1, ... (as push_checked made them). */
static uint32_t value_of(size_t room, size_t j) { return (uint32_t)(room * 1000003u + j * 7u + 1u); }

static int push_checked(psdl_store *s, size_t room, size_t j, size_t n, uint32_t *buf) {
    psdl_store_rec r = rec_of(PSDL_STORE_FAN, value_of(room, j));
    for (size_t i = 0; i < n; i++) buf[i] = value_of(room, j) + (uint32_t)i;
    r.param[0] = (double)n;
    return psdl_store_push(s, room, &r, buf, n);
}

static int all_checked(const psdl_store *s, size_t nrooms) {
    for (size_t k = 1; k <= nrooms; k++) {
        size_t j = 0;
        for (const psdl_store_rec *r = psdl_store_first(s, k); r; r = psdl_store_next(s, r), j++) {
            if (r->group != value_of(k, j) || r->room != k || r->nrefs != (uint32_t)r->param[0]) return 0;
            const uint32_t *v = psdl_store_refs(s, r);
            if (r->nrefs && !v) return 0;
            for (size_t i = 0; i < r->nrefs; i++)
                if (v[i] != value_of(k, j) + (uint32_t)i) return 0;
        }
        if (j != psdl_store_count(s, k)) return 0;
    }
    return 1;
}

/* Records and references in chunks (2 MiB each, never moved): more records than a chunk
 * holds (29,127 of 72 bytes), references running over chunk ends (a record's stay
 * contiguous), one record with more references than a chunk (524,288), a truncate back
 * across chunks and pushes after it, a truncate to nothing. */
static void test_chunks(void) {
    set_ctx("chunks");
    psdl_store *s = psdl_store_new();
    for (int k = 0; k < 3; k++) CHECK(psdl_store_add_room(s) == k + 1);
    uint32_t *buf = (uint32_t *)malloc(1300000 * sizeof *buf);
    CHECK(buf != NULL);
    if (!buf) return;
    size_t cnt[4] = {0, 0, 0, 0};
    int ok = 1;
    for (size_t i = 0; i < 70000 && ok; i++) {
        size_t room = 1 + i % 3, n = (i * 37) % 41; /* 0 .. 40 references */
        ok = push_checked(s, room, cnt[room]++, n, buf) == 0;
    }
    CHECK(ok);
    CHECK(all_checked(s, 3));
    psdl_store_mark_t m;
    psdl_store_mark(s, &m);
    size_t kept[4];
    memcpy(kept, cnt, sizeof cnt);
    /* a record longer than a chunk, records after it, one more of that size, another room */
    CHECK(push_checked(s, 2, cnt[2]++, 1200000, buf) == 0);
    for (size_t i = 0; i < 40000 && ok; i++) ok = push_checked(s, 1 + i % 3, cnt[1 + i % 3]++, 30, buf) == 0;
    CHECK(ok);
    CHECK(psdl_store_add_room(s) == 4);
    CHECK(push_checked(s, 3, cnt[3]++, 600000, buf) == 0);
    CHECK(all_checked(s, 3));
    CHECK(psdl_store_truncate(s, &m) == 0 && psdl_store_rooms(s) == 3);
    memcpy(cnt, kept, sizeof cnt);
    CHECK(psdl_store_count(s, 1) == cnt[1] && psdl_store_count(s, 2) == cnt[2] && psdl_store_count(s, 3) == cnt[3]);
    CHECK(all_checked(s, 3));
    /* pushes after the truncate, over the chunks it kept and new ones */
    for (size_t i = 0; i < 35000 && ok; i++) ok = push_checked(s, 1 + i % 3, cnt[1 + i % 3]++, (i * 13) % 50, buf) == 0;
    CHECK(ok);
    CHECK(push_checked(s, 1, cnt[1]++, 700000, buf) == 0);
    CHECK(all_checked(s, 3));
    /* the group uses over chunked records: every record has a group of its own, so every
     * record is a first use, in the order's rooms and each room's push order */
    uint32_t order[3] = {3, 1, 2};
    psdl_store_use *ug, *ud;
    size_t nug, nud;
    CHECK(psdl_store_group_uses(s, order, 3, &ug, &nug, &ud, &nud) == 0);
    CHECK(nug == cnt[1] + cnt[2] + cnt[3] && nud == 0);
    if (nug == cnt[1] + cnt[2] + cnt[3]) {
        size_t at = 0;
        for (size_t o = 0; o < 3 && ok; o++)
            for (size_t j = 0; j < cnt[order[o]] && ok; j++, at++)
                ok = ug[at].group == value_of(order[o], j) && ug[at].room == order[o];
        CHECK(ok);
    }
    free(ug);
    psdl_store_mark_t zero = {0, 0, 0, 0};
    CHECK(psdl_store_truncate(s, &zero) == 0 && psdl_store_rooms(s) == 0);
    CHECK(psdl_store_add_room(s) == 1);
    memset(cnt, 0, sizeof cnt);
    CHECK(push_checked(s, 1, cnt[1]++, 5, buf) == 0 && push_checked(s, 1, cnt[1]++, 600000, buf) == 0);
    CHECK(push_checked(s, 1, cnt[1]++, 0, buf) == 0 && push_checked(s, 1, cnt[1]++, 9, buf) == 0);
    CHECK(all_checked(s, 1));
    free(buf);
    psdl_store_free(s);
}

/* a flat word list (store:push_flat, core.junction_store): every record in the group, cap
 * kept, references copied; a count running past the end, a type out of range or a room that
 * is none leave the store as it was, also the records of the list before the bad one. */
static void test_push_words(void) {
    set_ctx("push words");
    psdl_store *s = psdl_store_new();
    CHECK(s != NULL && psdl_store_add_room(s) == 1 && psdl_store_add_room(s) == 2);
    uint32_t w[] = {PSDL_STORE_ROAD, 0, 4, 1, 2, 3, 4, PSDL_STORE_SIDEWALK_STRIP, 2, 2, 5, 6, PSDL_STORE_FAN, 0, 0};
    CHECK(psdl_store_push_words(s, 2, 7, w, sizeof w / sizeof *w) == 0);
    CHECK(psdl_store_count(s, 2) == 3 && psdl_store_count(s, 1) == 0);
    const psdl_store_rec *x = psdl_store_first(s, 2);
    CHECK(x && x->type == PSDL_STORE_ROAD && x->group == 7 && x->nrefs == 4 && psdl_store_refs(s, x)[3] == 4);
    x = psdl_store_next(s, x);
    CHECK(x && x->type == PSDL_STORE_SIDEWALK_STRIP && x->cap == 2 && x->group == 7 && psdl_store_refs(s, x)[1] == 6);
    x = psdl_store_next(s, x);
    CHECK(x && x->type == PSDL_STORE_FAN && x->nrefs == 0 && psdl_store_next(s, x) == NULL);
    psdl_store_mark_t m, after;
    psdl_store_mark(s, &m);
    uint32_t past[] = {PSDL_STORE_ROAD, 0, 2, 1, 2, PSDL_STORE_ROAD, 0, 3, 1, 2};
    CHECK(psdl_store_push_words(s, 1, 1, past, 10) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push_words(s, 1, 1, past, 7) == PSDL_STORE_RANGE); /* type, cap, no count */
    uint32_t type[] = {PSDL_STORE_ROAD, 0, 1, 1, 300, 0, 0};
    CHECK(psdl_store_push_words(s, 1, 1, type, 7) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push_words(s, 3, 1, w, 7) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push_words(s, 1, 1, NULL, 3) == PSDL_STORE_RANGE);
    CHECK(psdl_store_push_words(NULL, 1, 1, w, 7) == PSDL_STORE_RANGE);
    psdl_store_mark(s, &after);
    CHECK(after.rooms == m.rooms && after.recs == m.recs && after.refs == m.refs && psdl_store_count(s, 1) == 0);
    CHECK(psdl_store_push_words(s, 1, 1, NULL, 0) == 0 && psdl_store_count(s, 1) == 0);
    psdl_store_free(s);
}

/* A clear after a mark is undone by truncating to it: the room gets its records from before
 * the clear back (those below the mark), in order, and pushes after that append to them. */
static void test_truncate_undoes_clear(void) {
    set_ctx("truncate undoes clear");
    psdl_store *s = psdl_store_new();
    uint32_t a[] = {1, 2, 3, 4, 5, 6, 7, 8};
    psdl_store_rec r = rec_of(PSDL_STORE_FAN, 1);
    CHECK(psdl_store_add_room(s) == 1 && psdl_store_add_room(s) == 2);
    CHECK(psdl_store_push(s, 1, &r, a, 4) == 0 && psdl_store_push(s, 2, &r, a + 4, 4) == 0);
    r = rec_of(PSDL_STORE_ROAD_FAN, 2);
    CHECK(psdl_store_push(s, 1, &r, a + 1, 3) == 0);
    psdl_store_mark_t m, bad;
    psdl_store_mark(s, &m);
    CHECK(m.cleared == 0);
    r = rec_of(PSDL_STORE_ROAD, 3);
    CHECK(psdl_store_push(s, 1, &r, a, 8) == 0); /* pushed after the mark, then cleared with the rest */
    CHECK(psdl_store_clear(s, 1) == 0 && psdl_store_clear(s, 2) == 0);
    r = rec_of(PSDL_STORE_FAN, 4);
    CHECK(psdl_store_push(s, 1, &r, a + 2, 5) == 0);
    CHECK(psdl_store_clear(s, 1) == 0); /* twice: the latest clear is undone first */
    CHECK(psdl_store_push(s, 1, &r, a, 3) == 0);
    CHECK(psdl_store_count(s, 1) == 1 && psdl_store_count(s, 2) == 0);
    bad = m;
    bad.cleared = 9;
    CHECK(psdl_store_truncate(s, &bad) == PSDL_STORE_RANGE && psdl_store_count(s, 1) == 1);
    CHECK(psdl_store_truncate(s, &m) == 0);
    CHECK(psdl_store_count(s, 1) == 2 && psdl_store_count(s, 2) == 1);
    const psdl_store_rec *x = psdl_store_first(s, 1);
    CHECK(x && x->type == PSDL_STORE_FAN && x->group == 1 && x->nrefs == 4);
    x = x ? psdl_store_next(s, x) : NULL;
    CHECK(x && x->type == PSDL_STORE_ROAD_FAN && psdl_store_refs(s, x)[0] == 2 && psdl_store_next(s, x) == NULL);
    x = psdl_store_first(s, 2);
    CHECK(x && psdl_store_refs(s, x)[0] == 5);
    psdl_store_mark_t now;
    psdl_store_mark(s, &now);
    CHECK(now.rooms == m.rooms && now.recs == m.recs && now.refs == m.refs && now.cleared == 0);
    r = rec_of(PSDL_STORE_WALKWAY, 5);
    CHECK(psdl_store_push(s, 1, &r, a, 2) == 0 && psdl_store_count(s, 1) == 3);
    psdl_store_free(s);
}

int main(void) {
    test_rooms_and_order();
    test_truncate_undoes_clear();
    test_chunks();
    test_group_uses();
    test_clear_and_triangles();
    test_misuse();
    test_mark_truncate();
    test_push_words();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
