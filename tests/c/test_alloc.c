/* test_alloc.c -- the Lua state's fast allocator (src/psdl_alloc.h), driven as Lua drives an
 * allocator: blocks made by a previous allocator before the switch must go back to it, the
 * fast allocator's blocks never reach it, contents survive every resize (grow, shrink, moves
 * between the two), other threads and a full range fall back to the previous allocator.
 * Run under ASan/UBSan by scripts/test; built without mimalloc it checks that nothing switches. */
#define _DEFAULT_SOURCE
#include "psdl_alloc.h"

#include "check.h"

#include <pthread.h>
#include <stdint.h>

/* The previous allocator: malloc/realloc/free, remembering every block it handed out so that a
 * block it never made is caught (the fast allocator's block sent to it would be a crash). */
#define MAXB 8192
typedef struct {
    void *blocks[MAXB];
    size_t n;       /* live blocks */
    size_t calls;   /* every call */
    size_t foreign; /* pointers it did not make */
} prev_heap;

static long find(prev_heap *h, void *p) {
    for (size_t i = 0; i < h->n; i++)
        if (h->blocks[i] == p) return (long)i;
    return -1;
}

static void *prev_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    prev_heap *h = ud;
    (void)osize;
    h->calls++;
    long i = -1;
    if (ptr) {
        i = find(h, ptr);
        if (i < 0) {
            h->foreign++;
            return NULL; /* never touch it */
        }
    }
    if (nsize == 0) {
        free(ptr);
        h->blocks[i] = h->blocks[--h->n];
        return NULL;
    }
    if (!ptr && h->n == MAXB) return NULL;
    void *q = realloc(ptr, nsize);
    if (!q) return NULL;
    if (ptr) h->blocks[i] = q;
    else h->blocks[h->n++] = q;
    return q;
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 31u + i * 7u);
}

static int intact(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 31u + i * 7u)) return 0;
    return 1;
}

static void test_reasons(void) {
    set_ctx("reasons");
    for (int c = PSDL_ALLOC_OK; c <= PSDL_ALLOC_BADARG; c++) CHECK(strlen(psdl_alloc_reason(c)) > 1);
    CHECK(strcmp(psdl_alloc_reason(99), "unknown") == 0);
    psdl_alloc_fn fn = NULL;
    void *ud = NULL;
    CHECK_EQ(psdl_alloc_wrap(NULL, NULL, &fn, &ud), PSDL_ALLOC_BADARG);
    CHECK(fn == NULL && ud == NULL);
    CHECK(!psdl_alloc_owns(NULL));
}

static prev_heap H; /* static: large */

typedef struct {
    psdl_alloc_fn fn;
    void *ud;
    void *fast_block; /* made on the owner thread */
    int ok;
    size_t calls_before, calls_after;
    void *made; /* allocated by the other thread through the wrapper */
    int wrap_rc;
} thread_job;

static void *other_thread(void *arg) {
    thread_job *j = arg;
    j->calls_before = H.calls;
    /* on this thread the fast heap is not used: new blocks come from the previous allocator */
    j->made = j->fn(j->ud, NULL, 5, 100);
    j->calls_after = H.calls;
    if (j->made) fill(j->made, 100, 9);
    /* a fast block may be freed from any thread */
    j->fn(j->ud, j->fast_block, 64, 0);
    /* and this thread cannot take the fast allocator over */
    psdl_alloc_fn fn;
    void *ud;
    j->wrap_rc = psdl_alloc_wrap(prev_alloc, &H, &fn, &ud);
    j->ok = 1;
    return NULL;
}

static void test_switch(void) {
    set_ctx("blocks made before the switch");
    enum { OLD = 200 };
    unsigned char *old[OLD];
    size_t osz[OLD];
    for (int i = 0; i < OLD; i++) {
        osz[i] = 1 + (size_t)(i * 37 % 500);
        old[i] = prev_alloc(&H, NULL, 0, osz[i]);
        fill(old[i], osz[i], (unsigned)i);
    }
    CHECK_EQ(H.n, OLD);

    psdl_alloc_fn fn = NULL;
    void *ud = NULL;
    int rc = psdl_alloc_wrap(prev_alloc, &H, &fn, &ud);
    if (!psdl_alloc_name()) {
        set_ctx("without mimalloc");
        CHECK_EQ(rc, PSDL_ALLOC_UNAVAILABLE);
        CHECK(fn == NULL);
        for (int i = 0; i < OLD; i++) prev_alloc(&H, old[i], osz[i], 0);
        CHECK_EQ(H.n, 0);
        return;
    }
    CHECKF(rc == PSDL_ALLOC_OK, "wrap: %s", psdl_alloc_reason(rc));
    if (rc != PSDL_ALLOC_OK) return;
    CHECK(fn != NULL && fn != prev_alloc);
    /* the same previous allocator again: the same wrapper; wrapping the wrapper: itself */
    psdl_alloc_fn fn2;
    void *ud2;
    CHECK_EQ(psdl_alloc_wrap(prev_alloc, &H, &fn2, &ud2), PSDL_ALLOC_OK);
    CHECK(fn2 == fn && ud2 == ud);
    CHECK_EQ(psdl_alloc_wrap(fn, ud, &fn2, &ud2), PSDL_ALLOC_OK);
    CHECK(fn2 == fn && ud2 == ud);

    set_ctx("new blocks are the fast allocator's");
    size_t fast0, passed0;
    psdl_alloc_counts(&fast0, &passed0);
    size_t calls0 = H.calls;
    enum { NEW = 2000 };
    static unsigned char *nb[NEW];
    static size_t nsz[NEW];
    int owned = 1;
    for (int i = 0; i < NEW; i++) {
        nsz[i] = 1 + (size_t)((i * 7919) % (i % 50 == 0 ? 300000 : 700));
        nb[i] = fn(ud, NULL, (size_t)(i % 9), nsz[i]);
        if (!nb[i]) { owned = 0; break; }
        fill(nb[i], nsz[i], (unsigned)(1000 + i));
        if (!psdl_alloc_owns(nb[i])) owned = 0;
    }
    CHECK(owned);
    CHECK_EQ(H.calls, calls0); /* the previous allocator was not asked */
    size_t fast1, passed1;
    psdl_alloc_counts(&fast1, &passed1);
    CHECK(fast1 >= fast0 + NEW);

    set_ctx("resizes keep the contents");
    int ok = 1;
    for (int i = 0; i < NEW; i++) {
        /* grow, shrink a little (kept in place), shrink a lot (moved) */
        size_t sizes[3] = {nsz[i] * 3 + 5, nsz[i] * 3, nsz[i] / 4 + 1};
        for (int k = 0; k < 3; k++) {
            size_t keep = sizes[k] < nsz[i] ? sizes[k] : nsz[i];
            unsigned char *q = fn(ud, nb[i], nsz[i], sizes[k]);
            if (!q || !intact(q, keep, (unsigned)(1000 + i))) { ok = 0; break; }
            if (!psdl_alloc_owns(q)) ok = 0;
            nb[i] = q;
            nsz[i] = sizes[k];
            fill(q, nsz[i], (unsigned)(1000 + i));
        }
        if (!ok) break;
    }
    CHECK(ok);
    CHECK_EQ(H.calls, calls0);

    set_ctx("blocks made before the switch go back to their allocator");
    ok = 1;
    for (int i = 0; i < OLD; i++) {
        if (!intact(old[i], osz[i], (unsigned)i)) ok = 0;
        CHECK(!psdl_alloc_owns(old[i]));
        if (i % 2) { /* resized: it stays the previous allocator's */
            unsigned char *q = fn(ud, old[i], osz[i], osz[i] * 2 + 1);
            if (!q || find(&H, q) < 0 || !intact(q, osz[i], (unsigned)i)) ok = 0;
            else old[i] = q;
            osz[i] = osz[i] * 2 + 1;
            fill(old[i], osz[i], (unsigned)i);
        }
    }
    CHECK(ok);
    CHECK_EQ(H.n, OLD);

    set_ctx("another thread");
    thread_job j;
    memset(&j, 0, sizeof j);
    j.fn = fn;
    j.ud = ud;
    j.fast_block = fn(ud, NULL, 0, 64);
    CHECK(psdl_alloc_owns(j.fast_block));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &j) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(j.ok);
    CHECK(j.made != NULL && !psdl_alloc_owns(j.made) && find(&H, j.made) >= 0);
    CHECK(j.calls_after == j.calls_before + 1);
    CHECK_EQ(j.wrap_rc, PSDL_ALLOC_THREAD);
    /* the other thread's block is freed on this one, through the wrapper, by its allocator */
    CHECK(intact(j.made, 100, 9));
    fn(ud, j.made, 100, 0);
    CHECK_EQ(H.n, OLD);

    set_ctx("a full range: the previous allocator takes over");
    /* 1 GiB blocks (address space only: nothing touches their pages) until one is not ours */
    enum { BIG = 12 };
    void *big[BIG];
    int nbig = 0, spilled = 0;
    size_t gib = (size_t)1 << 30;
    while (nbig < BIG) {
        void *p = fn(ud, NULL, 0, gib);
        if (!p) break;
        big[nbig++] = p;
        if (!psdl_alloc_owns(p)) { spilled = 1; break; }
    }
    CHECKF(spilled, "a block past %zu GiB went to the previous allocator (%d blocks)", PSDL_ALLOC_ARENA >> 30, nbig);
    if (spilled) CHECK(find(&H, big[nbig - 1]) >= 0);
    size_t fast2, passed2;
    psdl_alloc_counts(&fast2, &passed2);
    CHECK(passed2 > passed1);
    /* a small block still fits between the big ones, or comes from the previous allocator */
    unsigned char *s = fn(ud, NULL, 0, 32);
    CHECK(s != NULL);
    for (int i = 0; i < nbig; i++) fn(ud, big[i], gib, 0);
    fn(ud, s, 32, 0);
    /* after the big blocks are gone the range serves again */
    unsigned char *again = fn(ud, NULL, 0, 1000);
    CHECK(psdl_alloc_owns(again));
    fn(ud, again, 1000, 0);

    set_ctx("everything freed");
    for (int i = 0; i < NEW; i++) fn(ud, nb[i], nsz[i], 0);
    for (int i = 0; i < OLD; i++) fn(ud, old[i], osz[i], 0);
    CHECK_EQ(H.n, 0);
    CHECK_EQ(H.foreign, 0);

    set_ctx("slots");
    /* distinct previous allocators (user data) until the table is full */
    static prev_heap extra[PSDL_ALLOC_SLOTS + 1];
    int full = 0;
    for (int i = 0; i <= PSDL_ALLOC_SLOTS; i++) {
        int r = psdl_alloc_wrap(prev_alloc, &extra[i], &fn2, &ud2);
        if (r == PSDL_ALLOC_FULL) { full = 1; break; }
        CHECK_EQ(r, PSDL_ALLOC_OK);
    }
    CHECK(full);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("fast allocator: %s\n", psdl_alloc_name() ? psdl_alloc_name() : "none");
    test_reasons();
    test_switch();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
