/* psdl_store.c -- the room store of psdl.builder (see psdl_store.h). */
#include "psdl_store.h"
#include "psdl_geom.h"

#include <stdlib.h>
#include <string.h>

/* Records and references live in chunks of 2 MiB that never move once made (the first grows
 * by doubling until it is whole, so that a small store stays small). One array grown by
 * realloc was moved by mremap at every doubling, and on the bench machine the next read of
 * each moved page costs as much as a first touch: the first pass over the records of a
 * 14,395-room city after the build (finish's texture layout) took 0.12 s instead of 5 ms. */
#define CHUNK_BYTES ((size_t)2 << 20)
#define REC_CHUNK (CHUNK_BYTES / sizeof(psdl_store_rec))
#define REF_CHUNK (CHUNK_BYTES / sizeof(uint32_t))

typedef struct store_room {
    int32_t head, tail; /* first and last record, -1 = none */
    uint32_t count;
} store_room;

/* A room's record list as it was before a psdl_store_clear (the clear log): the records stay
 * in the arrays, so psdl_store_truncate puts the list back by restoring head, tail and count. */
typedef struct store_cleared {
    size_t room; /* 1-based */
    store_room was;
} store_cleared;

/* The references are numbered in a virtual range cut into chunks of REF_CHUNK: slot k holds
 * the memory of numbers k * REF_CHUNK on. A record's references are contiguous, so one that
 * does not fit in what is left of a chunk starts at the next chunk (the rest stays unused),
 * and one longer than a chunk gets an allocation of several chunks, one slot per chunk. */
typedef struct ref_slot {
    uint32_t *mem; /* the memory of this slot's first number */
    size_t start;  /* the first number of the allocation mem lies in (a slot's own first number
                      when the slot starts it: it is freed through that slot) */
    size_t end;    /* the number after that allocation's last */
} ref_slot;

struct psdl_store {
    store_room *rooms;
    size_t nrooms, caprooms;
    psdl_store_rec **rec; /* chunks of REC_CHUNK records (chunk 0: cap0 of them) */
    size_t nrecs, cap0, nrchunks, caprchunks;
    ref_slot *slot;
    size_t nrefs, nslots, capslots; /* nrefs: the number after the last reference in use */
    store_cleared *cleared; /* the clear log, oldest first (psdl_store_clear) */
    size_t ncleared, capcleared;
};

/* Grows *arr (elements of size elem, *cap of them) to hold at least need; 0 or an error. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return PSDL_STORE_OK;
    if (need > PSDL_STORE_MAX) return PSDL_STORE_FULL;
    size_t c = *cap ? *cap : 16;
    while (c < need) c = c > PSDL_STORE_MAX / 2 ? PSDL_STORE_MAX : c * 2;
    if (c > SIZE_MAX / elem) return PSDL_STORE_NOMEM;
    void *p = realloc(*arr, c * elem);
    if (!p) return PSDL_STORE_NOMEM;
    *arr = p;
    *cap = c;
    return PSDL_STORE_OK;
}

/* A whole chunk (or several): bytes rounded up to CHUNK_BYTES; NULL when out of memory. (Not
 * advised for transparent huge pages: with the kernel's `defrag = madvise` a huge page fault
 * may compact memory on the spot, and the 14,395-room ground-only build was 0.2-0.5 s slower
 * with the advice on the bench machine.) */
static void *chunk_alloc(size_t bytes) {
    if (bytes > SIZE_MAX - CHUNK_BYTES) return NULL;
    return malloc((bytes + CHUNK_BYTES - 1) / CHUNK_BYTES * CHUNK_BYTES);
}

static psdl_store_rec *rec_at(const psdl_store *s, size_t i) { return s->rec[i / REC_CHUNK] + i % REC_CHUNK; }

/* Makes room for record number s->nrecs (0-based). 0 or an error code. */
static int rec_room(psdl_store *s) {
    size_t i = s->nrecs, k = i / REC_CHUNK;
    if (i >= PSDL_STORE_MAX) return PSDL_STORE_FULL;
    if (k == 0) {
        if (i < s->cap0) return PSDL_STORE_OK;
        if (s->nrchunks == 0) {
            int e = grow((void **)&s->rec, &s->caprchunks, 1, sizeof *s->rec);
            if (e) return e;
            s->rec[0] = NULL;
            s->nrchunks = 1;
        }
        size_t c = s->cap0 ? 2 * s->cap0 : 16;
        if (c > REC_CHUNK) c = REC_CHUNK;
        psdl_store_rec *p = (psdl_store_rec *)realloc(s->rec[0], c * sizeof *p);
        if (!p) return PSDL_STORE_NOMEM;
        s->rec[0] = p;
        s->cap0 = c;
        return PSDL_STORE_OK;
    }
    if (k < s->nrchunks) return PSDL_STORE_OK; /* kept after a truncate */
    int e = grow((void **)&s->rec, &s->caprchunks, k + 1, sizeof *s->rec);
    if (e) return e;
    psdl_store_rec *p = (psdl_store_rec *)chunk_alloc(REC_CHUNK * sizeof *p);
    if (!p) return PSDL_STORE_NOMEM;
    s->rec[k] = p;
    s->nrchunks = k + 1;
    return PSDL_STORE_OK;
}

/* Finds room for n references from s->nrefs on (see ref_slot): their first number in *at.
 * 0 or an error code. */
static int ref_room(psdl_store *s, size_t n, size_t *at) {
    size_t p = s->nrefs;
    *at = p;
    if (n == 0) return PSDL_STORE_OK;
    size_t k = p / REF_CHUNK;
    if (k < s->nslots) {
        ref_slot *r = &s->slot[k];
        if (p + n <= r->end) return PSDL_STORE_OK;
        if (k == 0 && r->start == 0 && r->end < REF_CHUNK && p + n <= REF_CHUNK) {
            /* the first chunk grows in place until it is whole */
            size_t c = r->end;
            while (c < p + n) c *= 2;
            if (c > REF_CHUNK) c = REF_CHUNK;
            uint32_t *m = (uint32_t *)realloc(r->mem, c * sizeof *m);
            if (!m) return PSDL_STORE_NOMEM;
            r->mem = m;
            r->end = c;
            return PSDL_STORE_OK;
        }
        p = (r->end + REF_CHUNK - 1) / REF_CHUNK * REF_CHUNK; /* the chunk after that allocation */
        k = p / REF_CHUNK;
    }
    /* no slot from k on (only allocations up to the store's end are kept): a new one at p */
    if (p > PSDL_STORE_MAX || n > PSDL_STORE_MAX - p) return PSDL_STORE_FULL;
    size_t m = (n + REF_CHUNK - 1) / REF_CHUNK; /* chunks it takes */
    int e = grow((void **)&s->slot, &s->capslots, k + m, sizeof *s->slot);
    if (e) return e;
    uint32_t *mem;
    size_t end;
    if (p == 0 && n < REF_CHUNK) { /* a small store's first chunk */
        end = 64;
        while (end < n) end *= 2;
        mem = (uint32_t *)malloc(end * sizeof *mem);
    } else {
        end = p + m * REF_CHUNK;
        mem = (uint32_t *)chunk_alloc(m * REF_CHUNK * sizeof *mem);
    }
    if (!mem) return PSDL_STORE_NOMEM;
    for (size_t j = 0; j < m; j++) {
        s->slot[k + j].mem = mem + j * REF_CHUNK;
        s->slot[k + j].start = p;
        s->slot[k + j].end = end;
    }
    s->nslots = k + m;
    *at = p;
    return PSDL_STORE_OK;
}

/* Frees the reference allocations that start at or after number t. */
static void ref_drop_from(psdl_store *s, size_t t) {
    while (s->nslots > 0) {
        ref_slot *r = &s->slot[s->nslots - 1];
        if (r->start < t) break;
        if (r->start == (s->nslots - 1) * REF_CHUNK) free(r->mem); /* the allocation's first slot */
        s->nslots--;
    }
}

psdl_store *psdl_store_new(void) { return (psdl_store *)calloc(1, sizeof(psdl_store)); }

void psdl_store_free(psdl_store *s) {
    if (!s) return;
    free(s->rooms);
    for (size_t k = 0; k < s->nrchunks; k++) free(s->rec[k]);
    free(s->rec);
    ref_drop_from(s, 0);
    free(s->slot);
    free(s->cleared);
    free(s);
}

long psdl_store_add_room(psdl_store *s) {
    if (!s) return PSDL_STORE_RANGE;
    int e = grow((void **)&s->rooms, &s->caprooms, s->nrooms + 1, sizeof *s->rooms);
    if (e) return e;
    store_room *r = &s->rooms[s->nrooms++];
    r->head = r->tail = -1;
    r->count = 0;
    return (long)s->nrooms;
}

size_t psdl_store_rooms(const psdl_store *s) { return s ? s->nrooms : 0; }

int psdl_store_push(psdl_store *s, size_t room, const psdl_store_rec *rec, const uint32_t *refs, size_t n) {
    if (!s || !rec || room < 1 || room > s->nrooms || rec->type >= PSDL_STORE_NTYPES || (n && !refs))
        return PSDL_STORE_RANGE;
    if (n > PSDL_STORE_MAX) return PSDL_STORE_FULL;
    size_t at;
    int e = rec_room(s);
    if (!e) e = ref_room(s, n, &at);
    if (e) return e;
    psdl_store_rec *d = rec_at(s, s->nrecs);
    *d = *rec;
    d->room = (uint32_t)room;
    d->ref0 = (uint32_t)at;
    d->nrefs = (uint32_t)n;
    d->next = -1;
    if (n) memcpy(s->slot[at / REF_CHUNK].mem + at % REF_CHUNK, refs, n * sizeof *refs);
    s->nrefs = at + n;
    store_room *r = &s->rooms[room - 1];
    int32_t idx = (int32_t)s->nrecs++;
    if (r->tail >= 0) rec_at(s, (size_t)r->tail)->next = idx;
    else r->head = idx;
    r->tail = idx;
    r->count++;
    return PSDL_STORE_OK;
}

size_t psdl_store_count(const psdl_store *s, size_t room) {
    if (!s || room < 1 || room > s->nrooms) return 0;
    return s->rooms[room - 1].count;
}

const psdl_store_rec *psdl_store_first(const psdl_store *s, size_t room) {
    if (!s || room < 1 || room > s->nrooms || s->rooms[room - 1].head < 0) return NULL;
    return rec_at(s, (size_t)s->rooms[room - 1].head);
}

const psdl_store_rec *psdl_store_next(const psdl_store *s, const psdl_store_rec *rec) {
    if (!s || !rec || rec->next < 0 || (size_t)rec->next >= s->nrecs) return NULL;
    return rec_at(s, (size_t)rec->next);
}

const uint32_t *psdl_store_refs(const psdl_store *s, const psdl_store_rec *rec) {
    if (!s || !rec || rec->nrefs == 0 || (size_t)rec->ref0 + rec->nrefs > s->nrefs) return NULL;
    return s->slot[rec->ref0 / REF_CHUNK].mem + rec->ref0 % REF_CHUNK;
}

int psdl_store_clear(psdl_store *s, size_t room) {
    if (!s || room < 1 || room > s->nrooms) return PSDL_STORE_RANGE;
    int e = grow((void **)&s->cleared, &s->capcleared, s->ncleared + 1, sizeof *s->cleared);
    if (e) return e;
    store_room *r = &s->rooms[room - 1];
    s->cleared[s->ncleared].room = room;
    s->cleared[s->ncleared].was = *r;
    s->ncleared++;
    r->head = r->tail = -1;
    r->count = 0;
    return PSDL_STORE_OK;
}

int psdl_store_is_surface(const psdl_store_rec *rec) {
    if (!rec) return 0;
    switch (rec->type) {
    case PSDL_STORE_SIDEWALK_STRIP: return rec->cap == 0;
    case PSDL_STORE_ROAD:
    case PSDL_STORE_DIVIDED_ROAD:
    case PSDL_STORE_WALKWAY:
    case PSDL_STORE_CROSSWALK:
    case PSDL_STORE_ROAD_FAN:
    case PSDL_STORE_FAN: return 1;
    default: return 0;
    }
}

int psdl_store_triangles(const psdl_store *s, size_t room, uint32_t **out, size_t *nout) {
    if (!out || !nout) return PSDL_STORE_RANGE;
    *out = NULL;
    *nout = 0;
    if (!s || room < 1 || room > s->nrooms) return PSDL_STORE_RANGE;
    size_t bound = 0;
    for (const psdl_store_rec *r = psdl_store_first(s, room); r; r = psdl_store_next(s, r))
        if (psdl_store_is_surface(r)) {
            size_t b = psdl_surface_bound(r->nrefs);
            if (b > SIZE_MAX / sizeof(uint32_t) - bound) return PSDL_STORE_NOMEM;
            bound += b;
        }
    uint32_t *d = (uint32_t *)malloc((bound ? bound : 1) * sizeof *d);
    if (!d) return PSDL_STORE_NOMEM;
    size_t w = 0;
    for (const psdl_store_rec *r = psdl_store_first(s, room); r; r = psdl_store_next(s, r))
        if (psdl_store_is_surface(r) && r->nrefs) w += psdl_surface_triangles(d + w, r->type, psdl_store_refs(s, r), r->nrefs);
    *out = d;
    *nout = w;
    return PSDL_STORE_OK;
}

/* First uses of group numbers: an open-addressing hash table (group 0 marks a free slot). */
typedef struct use_slot {
    uint32_t group, room;
    uint64_t key; /* position of the room in the order (high 32 bits), record index (low) */
} use_slot;

typedef struct use_map {
    use_slot *slot;
    size_t cap, n; /* cap: a power of two */
} use_map;

static size_t use_hash(uint32_t g, size_t cap) { return (size_t)((g * 2654435761u) ^ (g >> 15)) & (cap - 1); }

/* Notes a use of group g at key by room; keeps the smallest key. 0 or PSDL_STORE_NOMEM. */
static int use_note(use_map *m, uint32_t g, uint64_t key, uint32_t room) {
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        if (cap > SIZE_MAX / sizeof(use_slot)) return PSDL_STORE_NOMEM;
        use_slot *t = (use_slot *)calloc(cap, sizeof *t);
        if (!t) return PSDL_STORE_NOMEM;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slot[i].group) {
                size_t j = use_hash(m->slot[i].group, cap);
                while (t[j].group) j = (j + 1) & (cap - 1);
                t[j] = m->slot[i];
            }
        free(m->slot);
        m->slot = t;
        m->cap = cap;
    }
    size_t j = use_hash(g, m->cap);
    while (m->slot[j].group && m->slot[j].group != g) j = (j + 1) & (m->cap - 1);
    use_slot *u = &m->slot[j];
    if (!u->group) {
        u->group = g;
        u->key = key;
        u->room = room;
        m->n++;
    } else if (key < u->key) {
        u->key = key;
        u->room = room;
    }
    return PSDL_STORE_OK;
}

static int use_cmp(const void *a, const void *b) {
    uint64_t x = ((const use_slot *)a)->key, y = ((const use_slot *)b)->key;
    return x < y ? -1 : x > y;
}

/* The map's groups in order of first use, into *out (malloc'd; NULL when none). */
static int use_list(use_map *m, psdl_store_use **out, size_t *nout) {
    *out = NULL;
    *nout = 0;
    if (m->n == 0) return PSDL_STORE_OK;
    size_t k = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].group) m->slot[k++] = m->slot[i]; /* k <= i: compacts in place */
    qsort(m->slot, k, sizeof *m->slot, use_cmp);
    psdl_store_use *d = (psdl_store_use *)malloc(k * sizeof *d);
    if (!d) return PSDL_STORE_NOMEM;
    for (size_t i = 0; i < k; i++) {
        d[i].group = m->slot[i].group;
        d[i].room = m->slot[i].room;
    }
    *out = d;
    *nout = k;
    return PSDL_STORE_OK;
}

int psdl_store_group_uses(const psdl_store *s, const uint32_t *order, size_t n, psdl_store_use **groups,
                          size_t *ngroups, psdl_store_use **dividers, size_t *ndividers) {
    if (!groups || !ngroups || !dividers || !ndividers) return PSDL_STORE_RANGE;
    *groups = *dividers = NULL;
    *ngroups = *ndividers = 0;
    if (!s || (n && !order)) return PSDL_STORE_RANGE;
    for (size_t i = 0; i < n; i++)
        if (order[i] < 1 || order[i] > s->nrooms) return PSDL_STORE_RANGE;
    if (n > UINT32_MAX - 1) return PSDL_STORE_RANGE;
    /* pos[room - 1]: the room's first place in order, 1-based (0: not listed) */
    uint32_t *pos = (uint32_t *)calloc(s->nrooms ? s->nrooms : 1, sizeof *pos);
    if (!pos) return PSDL_STORE_NOMEM;
    for (size_t i = n; i-- > 0;) pos[order[i] - 1] = (uint32_t)(i + 1);
    use_map m[2];
    memset(m, 0, sizeof m);
    int e = PSDL_STORE_OK;
    /* a record is its room's (in the room's list) when it is at or after the room's head: a
     * room's records are appended in increasing index order, psdl_store_clear starts the list
     * afresh with records pushed after every older one, and psdl_store_truncate drops the
     * records above the mark from the array */
    for (size_t i = 0; i < s->nrecs && !e; i++) {
        const psdl_store_rec *r = rec_at(s, i);
        if (!r->group && !r->dgroup) continue;
        uint32_t room = r->room;
        if (room < 1 || room > s->nrooms || !pos[room - 1]) continue;
        int32_t head = s->rooms[room - 1].head;
        if (head < 0 || i < (size_t)head) continue;
        uint64_t key = ((uint64_t)pos[room - 1] << 32) | (uint64_t)i;
        if (r->group) e = use_note(&m[0], r->group, key, room);
        if (!e && r->dgroup) e = use_note(&m[1], r->dgroup, key, room);
    }
    free(pos);
    if (!e) e = use_list(&m[0], groups, ngroups);
    if (!e) e = use_list(&m[1], dividers, ndividers);
    free(m[0].slot);
    free(m[1].slot);
    if (e) {
        free(*groups);
        *groups = NULL;
        *ngroups = 0;
    }
    return e;
}

int psdl_store_push_words(psdl_store *s, size_t room, uint32_t group, const uint32_t *words, size_t n) {
    if (n && !words) return PSDL_STORE_RANGE;
    psdl_store_mark_t m;
    psdl_store_mark(s, &m);
    psdl_store_rec rec; /* psdl_store_push copies it: only type and cap change from record to record */
    memset(&rec, 0, sizeof rec);
    rec.group = group;
    for (size_t i = 0; i < n;) {
        int e = PSDL_STORE_RANGE;
        size_t k = n - i >= 3 ? words[i + 2] : 0;
        if (n - i >= 3 && k <= n - i - 3) {
            rec.type = (uint8_t)(words[i] > 0xFF ? 0xFF : words[i]); /* (out of range: refused) */
            rec.cap = (uint8_t)words[i + 1];
            e = psdl_store_push(s, room, &rec, words + i + 3, k);
        }
        if (e) {
            psdl_store_truncate(s, &m);
            return e;
        }
        i += 3 + k;
    }
    return 0;
}

void psdl_store_mark(const psdl_store *s, psdl_store_mark_t *m) {
    if (!m) return;
    m->rooms = s ? s->nrooms : 0;
    m->recs = s ? s->nrecs : 0;
    m->refs = s ? s->nrefs : 0;
    m->cleared = s ? s->ncleared : 0;
}

int psdl_store_truncate(psdl_store *s, const psdl_store_mark_t *m) {
    if (!s || !m || m->rooms > s->nrooms || m->recs > s->nrecs || m->refs > s->nrefs || m->cleared > s->ncleared)
        return PSDL_STORE_RANGE;
    /* the kept records must not use dropped references (a mark taken at one time has none) */
    for (size_t i = 0; i < m->recs; i++)
        if ((size_t)rec_at(s, i)->ref0 + rec_at(s, i)->nrefs > m->refs) return PSDL_STORE_RANGE;
    /* the rooms cleared since the mark get their lists back, latest clear first; records
     * pushed after the mark are then cut off those lists below, as from any other room */
    while (s->ncleared > m->cleared) {
        const store_cleared *c = &s->cleared[--s->ncleared];
        if (c->room <= s->nrooms) s->rooms[c->room - 1] = c->was;
    }
    for (size_t k = 0; k < m->rooms; k++) {
        store_room *r = &s->rooms[k];
        if (r->tail < 0 || (size_t)r->tail < m->recs) continue; /* nothing added since */
        /* a room's records are in increasing index order (appended; a clear starts afresh):
         * keep the prefix below the mark */
        int32_t prev = -1, cur = r->head;
        uint32_t cnt = 0;
        while (cur >= 0 && (size_t)cur < m->recs) {
            prev = cur;
            cnt++;
            cur = rec_at(s, (size_t)cur)->next;
        }
        if (prev < 0) {
            r->head = r->tail = -1;
        } else {
            rec_at(s, (size_t)prev)->next = -1;
            r->tail = prev;
        }
        r->count = cnt;
    }
    s->nrooms = m->rooms;
    s->nrecs = m->recs;
    s->nrefs = m->refs;
    ref_drop_from(s, m->refs); /* (record chunks are kept: the next pushes fill them again) */
    return PSDL_STORE_OK;
}
