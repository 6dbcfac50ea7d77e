/*
 * psdl_faces.c -- the boundary loops of a road network (psdl_faces.h). Every step keeps the
 * order of the Lua it replaced (blocks/faces.lua): boundary edges in outline order, loose ends
 * and starts in the order their vertices first appear, gap pairs by (length, end, start), the
 * candidates at a vertex in edge order, pinches split depth first.
 */
#include "psdl_faces.h"
#include "psdl_geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A directed boundary edge. */
typedef struct edge {
    uint32_t a, c;
    int used;
} edge;

/* A growable array of elements of `size` bytes. */
typedef struct vec {
    void *p;
    size_t n, cap, size;
} vec;

static int vec_push(vec *v, const void *x) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        if (cap > ((size_t)-1) / 4 / v->size) return -1;
        void *p = realloc(v->p, cap * v->size);
        if (!p) return -1;
        v->p = p, v->cap = cap;
    }
    memcpy((char *)v->p + v->n * v->size, x, v->size);
    v->n++;
    return 0;
}

/* The key of the undirected edge a-c (Lua: ukey). */
static uint64_t ukey(uint32_t a, uint32_t c) {
    return a < c ? ((uint64_t)a << 32) | c : ((uint64_t)c << 32) | a;
}

/* Use counts of undirected edges: open addressing, keys + 1 so that 0 is empty. */
typedef struct counts {
    uint64_t *key;
    uint32_t *n;
    size_t mask;
} counts;

static size_t slot(const counts *h, uint64_t k) {
    uint64_t x = k * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(x >> 20) & h->mask;
    while (h->key[i] && h->key[i] != k + 1) i = (i + 1) & h->mask;
    return i;
}

/* (x, z) of vertex v */
#define PX(v) pts[3 * (size_t)(v)]
#define PZ(v) pts[3 * (size_t)(v) + 2]

/* A candidate pair of a loose end (i) and start (j) d metres apart. */
typedef struct gap_pair {
    double d;
    size_t i, j;
} gap_pair;

static int by_gap(const void *pa, const void *pb) {
    const gap_pair *p = (const gap_pair *)pa, *q = (const gap_pair *)pb;
    if (p->d != q->d) return p->d < q->d ? -1 : 1;
    if (p->i != q->i) return p->i < q->i ? -1 : 1;
    return p->j < q->j ? -1 : p->j > q->j;
}

/* Joins loose ends to loose starts (faces.lua: "Rooms that overlap or leave a sliver ...");
 * appends the virtual edges to *edges and the gaps to *gaps. */
static int close_gaps(vec *edges, const double *pts, size_t npts, vec *gaps) {
    int rc = PSDL_FACES_NOMEM;
    long long *deg = (long long *)calloc(npts ? npts : 1, sizeof *deg);
    unsigned char *seen = (unsigned char *)calloc(npts ? npts : 1, 1);
    vec order = {NULL, 0, 0, sizeof(uint32_t)}, ends = {NULL, 0, 0, sizeof(uint32_t)};
    vec starts = {NULL, 0, 0, sizeof(uint32_t)}, pairs = {NULL, 0, 0, sizeof(gap_pair)};
    unsigned char *ue = NULL, *us = NULL;
    if (!deg || !seen) goto done;
    size_t ne = edges->n;
    for (size_t k = 0; k < ne; k++) {
        const edge *e = (const edge *)edges->p + k;
        if (!seen[e->a] && (seen[e->a] = 1, vec_push(&order, &e->a))) goto done;
        if (!seen[e->c] && (seen[e->c] = 1, vec_push(&order, &e->c))) goto done;
        deg[e->a]++;
        deg[e->c]--;
    }
    for (size_t k = 0; k < order.n; k++) {
        uint32_t v = ((const uint32_t *)order.p)[k];
        for (long long d = deg[v]; d < 0; d++)
            if (vec_push(&ends, &v)) goto done;
        for (long long d = deg[v]; d > 0; d--)
            if (vec_push(&starts, &v)) goto done;
    }
    if (ends.n > 0) {
        const uint32_t *E = (const uint32_t *)ends.p, *S = (const uint32_t *)starts.p;
        for (size_t i = 0; i < ends.n; i++) {
            for (size_t j = 0; j < starts.n; j++) {
                double dx = PX(S[j]) - PX(E[i]), dz = PZ(S[j]) - PZ(E[i]);
                double d = sqrt(dx * dx + dz * dz);
                if (d <= PSDL_FACES_GAP && E[i] != S[j]) {
                    gap_pair g = {d, i, j};
                    if (vec_push(&pairs, &g)) goto done;
                }
            }
        }
        if (pairs.n) qsort(pairs.p, pairs.n, sizeof(gap_pair), by_gap);
        ue = (unsigned char *)calloc(ends.n, 1);
        us = (unsigned char *)calloc(starts.n ? starts.n : 1, 1);
        if (!ue || !us) goto done;
        for (size_t k = 0; k < pairs.n; k++) {
            const gap_pair *g = (const gap_pair *)pairs.p + k;
            if (!ue[g->i] && !us[g->j]) {
                ue[g->i] = us[g->j] = 1;
                edge e = {E[g->i], S[g->j], 0};
                psdl_faces_gap r = {g->d, e.a, e.c};
                if (vec_push(edges, &e) || vec_push(gaps, &r)) goto done;
            }
        }
    }
    rc = PSDL_FACES_OK;
done:
    free(deg);
    free(seen);
    free(order.p);
    free(ends.p);
    free(starts.p);
    free(pairs.p);
    free(ue);
    free(us);
    return rc;
}

/* Splits a loop at the vertices it visits twice into simple loops, depth first (faces.lua's
 * split_pinches): a loop with a repeat at positions j < i gives loop[j .. i-1] and then
 * loop[i ..] + loop[.. j-1]. stamp/at are npts scratch arrays. */
static int split_pinches(const uint32_t *loop, size_t len, vec *verts, vec *starts, uint32_t *stamp, size_t *at,
                         uint32_t *clock) {
    vec stack = {NULL, 0, 0, sizeof(vec)};
    vec first = {NULL, 0, 0, sizeof(uint32_t)};
    for (size_t k = 0; k < len; k++)
        if (vec_push(&first, loop + k)) goto fail;
    if (vec_push(&stack, &first)) goto fail;
    first.p = NULL;
    while (stack.n) {
        vec seg = ((vec *)stack.p)[--stack.n];
        const uint32_t *s = (const uint32_t *)seg.p;
        uint32_t now = ++*clock;
        size_t i = 0, j = 0;
        int pinch = 0;
        for (i = 0; i < seg.n; i++) {
            uint32_t v = s[i];
            if (stamp[v] == now) {
                j = at[v], pinch = 1;
                break;
            }
            stamp[v] = now, at[v] = i;
        }
        if (!pinch) {
            size_t off = verts->n;
            int bad = 0;
            for (size_t k = 0; k < seg.n && !bad; k++) bad = vec_push(verts, s + k);
            free(seg.p);
            if (bad || vec_push(starts, &off)) goto fail;
            continue;
        }
        vec a = {NULL, 0, 0, sizeof(uint32_t)}, c = {NULL, 0, 0, sizeof(uint32_t)};
        int bad = 0;
        for (size_t k = j; k < i && !bad; k++) bad = vec_push(&a, s + k);
        for (size_t k = i; k < seg.n && !bad; k++) bad = vec_push(&c, s + k);
        for (size_t k = 0; k < j && !bad; k++) bad = vec_push(&c, s + k);
        free(seg.p);
        /* c below a: a is split (and output) first */
        if (bad || vec_push(&stack, &c)) {
            free(a.p), free(c.p);
            goto fail;
        }
        if (vec_push(&stack, &a)) {
            free(a.p);
            goto fail;
        }
    }
    free(stack.p);
    return 0;
fail:
    for (size_t k = 0; k < stack.n; k++) free(((vec *)stack.p)[k].p);
    free(stack.p);
    free(first.p);
    return -1;
}

void psdl_faces_free(psdl_faces *f) {
    if (!f) return;
    free(f->start);
    free(f->verts);
    free(f->gaps);
    free(f->open);
    memset(f, 0, sizeof *f);
}

/* Traces the loops (faces.lua: "trace loops; the face lies on the left (math) of each edge:
 * take the sharpest left turn"). The candidates at a vertex: out[ost[v] .. ost[v+1]-1]. */
static int trace(edge *E, size_t ne, const size_t *ost, const size_t *out, const double *pts, size_t npts,
                 vec *verts, vec *starts, vec *open) {
    const double two_pi = 2 * 3.14159265358979323846;
    vec loop = {NULL, 0, 0, sizeof(uint32_t)};
    uint32_t *stamp = (uint32_t *)calloc(npts ? npts : 1, sizeof *stamp);
    size_t *at = (size_t *)malloc((npts ? npts : 1) * sizeof *at);
    uint32_t clock = 0;
    int rc = -1;
    if (!stamp || !at) goto done;
    for (size_t k0 = 0; k0 < ne; k0++) {
        edge *e0 = E + k0;
        if (e0->used) continue;
        e0->used = 1;
        loop.n = 0;
        if (vec_push(&loop, &e0->a)) goto done;
        edge *e = e0;
        int ok = 1;
        for (size_t it = 0; it < ne + 1; it++) {
            uint32_t v = e->c;
            edge *best = NULL;
            double bestang = 0;
            if (ost[v] < ost[v + 1]) {
                double pvx = PX(v), pvz = PZ(v), pux = PX(e->a), puz = PZ(e->a);
                double bx = pux - pvx, bz = puz - pvz;
                double back = atan2(bz, bx);
                for (size_t q = ost[v]; q < ost[v + 1]; q++) {
                    edge *f = E + out[q];
                    if (!f->used || f == e0) {
                        double a = back - atan2(PZ(f->c) - pvz, PX(f->c) - pvx);
                        double ang = fmod(a, two_pi); /* Lua's float %: the sign of the divisor */
                        if (ang != 0 && (ang < 0) != (two_pi < 0)) ang += two_pi;
                        if (ang <= 1e-12) ang = two_pi;
                        if (!best || ang < bestang) best = f, bestang = ang;
                    }
                }
            }
            if (!best) {
                ok = 0;
                break;
            }
            if (best == e0) break;
            best->used = 1;
            if (vec_push(&loop, &v)) goto done;
            e = best;
        }
        if (ok) {
            if (split_pinches((const uint32_t *)loop.p, loop.n, verts, starts, stamp, at, &clock)) goto done;
        } else {
            psdl_faces_open o = {loop.n, e0->a};
            if (vec_push(open, &o)) goto done;
        }
    }
    rc = 0;
done:
    free(loop.p);
    free(stamp);
    free(at);
    return rc;
}

int psdl_faces_loops(psdl_faces *out, const double *pts, size_t npts, const uint32_t *start, const uint32_t *verts,
                     size_t nrooms) {
    memset(out, 0, sizeof *out);
    if (start[0] != 0) return PSDL_FACES_INVALID;
    for (size_t r = 0; r < nrooms; r++)
        if (start[r + 1] < start[r]) return PSDL_FACES_INVALID;
    size_t total = start[nrooms];
    for (size_t k = 0; k < total; k++)
        if (verts[k] >= npts) return PSDL_FACES_INVALID;
    if (total > ((size_t)-1) / 64 || npts > ((size_t)-1) / 64) return PSDL_FACES_NOMEM;
    int rc = PSDL_FACES_NOMEM;
    counts h = {NULL, NULL, 0};
    vec edges = {NULL, 0, 0, sizeof(edge)}, gaps = {NULL, 0, 0, sizeof(psdl_faces_gap)};
    vec lv = {NULL, 0, 0, sizeof(uint32_t)}, ls = {NULL, 0, 0, sizeof(size_t)};
    vec open = {NULL, 0, 0, sizeof(psdl_faces_open)};
    size_t *ost = NULL, *adj = NULL;
    size_t cap = 16;
    while (cap < 2 * total + 16) cap *= 2;
    h.key = (uint64_t *)calloc(cap, sizeof *h.key);
    h.n = (uint32_t *)calloc(cap, sizeof *h.n);
    h.mask = cap - 1;
    if (!h.key || !h.n) goto done;
    /* boundary edges: used by exactly one room, directed as in that room */
    for (size_t r = 0; r < nrooms; r++) {
        size_t s = start[r], n = start[r + 1] - s;
        for (size_t k = 0; k < n; k++) {
            uint32_t a = verts[s + k], c = verts[s + (k + 1) % n];
            if (a != c) {
                uint64_t key = ukey(a, c);
                size_t i = slot(&h, key);
                h.key[i] = key + 1;
                h.n[i]++;
            }
        }
    }
    for (size_t r = 0; r < nrooms; r++) {
        size_t s = start[r], n = start[r + 1] - s;
        for (size_t k = 0; k < n; k++) {
            uint32_t a = verts[s + k], c = verts[s + (k + 1) % n];
            if (a != c && h.n[slot(&h, ukey(a, c))] == 1) {
                edge e = {a, c, 0};
                if (vec_push(&edges, &e)) goto done;
            }
        }
    }
    if (close_gaps(&edges, pts, npts, &gaps)) goto done;
    /* the edges leaving each vertex, in edge order (real edges, then the gaps' virtual ones) */
    size_t ne = edges.n;
    edge *E = (edge *)edges.p;
    ost = (size_t *)calloc(npts + 2, sizeof *ost);
    adj = (size_t *)malloc((ne ? ne : 1) * sizeof *adj);
    if (!ost || !adj) goto done;
    for (size_t k = 0; k < ne; k++) ost[E[k].a + 2]++;
    for (size_t v = 0; v < npts; v++) ost[v + 2] += ost[v + 1];
    for (size_t k = 0; k < ne; k++) adj[ost[E[k].a + 1]++] = k;
    /* now ost[v] .. ost[v + 1] - 1 are v's edges */
    if (trace(E, ne, ost, adj, pts, npts, &lv, &ls, &open)) goto done;
    size_t end = lv.n;
    if (vec_push(&ls, &end)) goto done;
    out->nloops = ls.n - 1;
    out->start = (size_t *)ls.p, ls.p = NULL;
    out->verts = (uint32_t *)lv.p, lv.p = NULL;
    out->ngaps = gaps.n, out->gaps = (psdl_faces_gap *)gaps.p, gaps.p = NULL;
    out->nopen = open.n, out->open = (psdl_faces_open *)open.p, open.p = NULL;
    rc = PSDL_FACES_OK;
done:
    free(h.key);
    free(h.n);
    free(edges.p);
    free(gaps.p);
    free(lv.p);
    free(ls.p);
    free(open.p);
    free(ost);
    free(adj);
    if (rc != PSDL_FACES_OK) psdl_faces_free(out);
    return rc;
}

/* ================================================================ faces of a network */

void psdl_faces_net_free(psdl_faces_net *n) {
    if (!n) return;
    psdl_faces_free(&n->loops);
    free(n->start);
    free(n->verts);
    free(n->kinds);
    free(n->area);
    free(n->host);
    memset(n, 0, sizeof *n);
}

static int by_u64(const void *pa, const void *pb) {
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

static int has_key(const uint64_t *keys, size_t n, uint64_t k) {
    return n > 0 && bsearch(&k, keys, n, sizeof *keys, by_u64) != NULL;
}

/* S of a ring (blocks: plan.area2): summed from the last point, the Lua's operation order. */
static double ring_s(const double *pts, const uint32_t *v, size_t n) {
    double s = 0;
    uint32_t p = v[n - 1];
    for (size_t i = 0; i < n; i++) {
        uint32_t q = v[i];
        s = s + PX(p) * PZ(q) - PX(q) * PZ(p);
        p = q;
    }
    return s;
}

/* Crossing number of (x, z) on a ring (plan.inside, the Lua's operation order). */
static int ring_inside(const double *pts, const uint32_t *v, size_t n, double x, double z) {
    int c = 0;
    uint32_t p = v[n - 1];
    for (size_t i = 0; i < n; i++) {
        uint32_t q = v[i];
        if ((PZ(q) > z) != (PZ(p) > z)) {
            double xi = PX(q) + (z - PZ(q)) * (PX(p) - PX(q)) / (PZ(p) - PZ(q));
            if (x < xi) c = !c;
        }
        p = q;
    }
    return c;
}

/* A T-junction record of psdl_tjunctions with its position in the list. */
typedef struct tj_rec {
    uint32_t room, edge, v;
    size_t at;
} tj_rec;

static int by_tj(const void *pa, const void *pb) {
    const tj_rec *p = (const tj_rec *)pa, *q = (const tj_rec *)pb;
    if (p->room != q->room) return p->room < q->room ? -1 : 1;
    if (p->edge != q->edge) return p->edge < q->edge ? -1 : 1;
    return p->at < q->at ? -1 : p->at > q->at;
}

/* Faces by area, then order (blocks/faces.lua's islands); NaN areas last. */
typedef struct face_key {
    double area;
    size_t i;
} face_key;

static int by_face(const void *pa, const void *pb) {
    const face_key *p = (const face_key *)pa, *q = (const face_key *)pb;
    int na = p->area != p->area, nb = q->area != q->area;
    if (na != nb) return na - nb;
    if (!na && p->area != q->area) return p->area < q->area ? -1 : 1;
    return p->i < q->i ? -1 : p->i > q->i;
}

/* The ordinary rooms' outlines (3 points or more) split at their T-junctions: *bst / *bv. */
static int split_outlines(const double *pts, size_t npts, const uint32_t *start, const uint32_t *verts,
                          size_t nrooms, const unsigned char *warp, double eps, uint32_t **bst, uint32_t **bv,
                          size_t *nbase) {
    size_t nb = 0, total = 0;
    for (size_t r = 0; r < nrooms; r++) {
        size_t n = start[r + 1] - start[r];
        if (n >= 3 && !warp[r]) nb++, total += n;
    }
    uint32_t *st = (uint32_t *)malloc((nb + 1) * sizeof *st), *v = (uint32_t *)malloc((total ? total : 1) * sizeof *v);
    uint32_t *tj = NULL, *sst = NULL, *sv = NULL;
    tj_rec *recs = NULL;
    int rc = PSDL_FACES_NOMEM;
    if (!st || !v) goto done;
    st[0] = 0;
    size_t m = 0, b = 0;
    for (size_t r = 0; r < nrooms; r++) {
        size_t n = start[r + 1] - start[r];
        if (n < 3 || warp[r]) continue;
        memcpy(v + m, verts + start[r], n * sizeof *v);
        m += n;
        st[++b] = (uint32_t)m;
    }
    size_t ntj = 0;
    if (nb > 1) { /* faces.lua: T-junctions only between two rooms or more */
        /* room for as many as the outlines have points (a city's T-junctions are fewer: one
         * call, not a count and a second call) */
        size_t cap = total < ((size_t)-1) / 64 - 256 ? total + 256 : 256;
        tj = (uint32_t *)malloc(3 * cap * sizeof *tj);
        if (!tj) goto done;
        size_t k = psdl_tjunctions(tj, cap, pts, npts, st, v, nb, eps);
        if (k == PSDL_GEOM_INVALID) {
            rc = PSDL_FACES_INVALID;
            goto done;
        }
        if (k == PSDL_GEOM_NOMEM || k > ((size_t)-1) / 64) goto done;
        if (k > cap) {
            uint32_t *t2 = (uint32_t *)realloc(tj, 3 * k * sizeof *tj);
            if (!t2) goto done;
            tj = t2;
            if (psdl_tjunctions(tj, k, pts, npts, st, v, nb, eps) != k) goto done;
        }
        ntj = k;
    }
    recs = (tj_rec *)malloc((ntj ? ntj : 1) * sizeof *recs);
    sst = (uint32_t *)malloc((nb + 1) * sizeof *sst);
    sv = (uint32_t *)malloc((total + ntj ? total + ntj : 1) * sizeof *sv);
    if (!recs || !sst || !sv) goto done;
    for (size_t k = 0; k < ntj; k++) {
        recs[k].room = tj[3 * k], recs[k].edge = tj[3 * k + 1], recs[k].v = tj[3 * k + 2], recs[k].at = k;
    }
    /* blocks/faces.lua inserted them edge by edge from the last, each edge's in reverse: the
     * vertices found on an edge follow its first point in the order found */
    if (ntj > 1) qsort(recs, ntj, sizeof *recs, by_tj);
    size_t t = 0, w = 0;
    sst[0] = 0;
    for (size_t r = 0; r < nb; r++) {
        size_t n = st[r + 1] - st[r];
        while (t < ntj && recs[t].room < r) t++;
        for (size_t k = 0; k < n; k++) {
            sv[w++] = v[st[r] + k];
            while (t < ntj && recs[t].room == r && recs[t].edge == k) sv[w++] = recs[t++].v;
        }
        while (t < ntj && recs[t].room == r) t++; /* an edge past the outline: none is found */
        sst[r + 1] = (uint32_t)w;
    }
    *bst = sst, *bv = sv, *nbase = nb;
    sst = sv = NULL;
    rc = PSDL_FACES_OK;
done:
    free(st);
    free(v);
    free(tj);
    free(recs);
    free(sst);
    free(sv);
    return rc;
}

int psdl_faces_network(psdl_faces_net *out, const double *pts, size_t npts, const uint32_t *start,
                       const uint32_t *verts, size_t nrooms, const unsigned char *warp, double eps) {
    memset(out, 0, sizeof *out);
    if (start[0] != 0) return PSDL_FACES_INVALID;
    for (size_t r = 0; r < nrooms; r++)
        if (start[r + 1] < start[r] || warp[r] > PSDL_FACES_DECK) return PSDL_FACES_INVALID;
    size_t total = start[nrooms];
    for (size_t k = 0; k < total; k++)
        if (verts[k] >= npts) return PSDL_FACES_INVALID;
    if (total > ((size_t)-1) / 64 || npts > ((size_t)-1) / 64 || nrooms > UINT32_MAX) return PSDL_FACES_NOMEM;
    uint32_t *bst = NULL, *bv = NULL;
    uint64_t *portal = NULL, *deck = NULL;
    face_key *order = NULL;
    size_t nb = 0, np = 0, nd = 0;
    int rc = split_outlines(pts, npts, start, verts, nrooms, warp, eps, &bst, &bv, &nb);
    if (rc != PSDL_FACES_OK) goto done;
    rc = psdl_faces_loops(&out->loops, pts, npts, bst, bv, nb);
    if (rc != PSDL_FACES_OK) goto done;
    rc = PSDL_FACES_NOMEM;
    /* the edges of warp rooms */
    portal = (uint64_t *)malloc((total ? total : 1) * sizeof *portal);
    deck = (uint64_t *)malloc((total ? total : 1) * sizeof *deck);
    if (!portal || !deck) goto done;
    for (size_t r = 0; r < nrooms; r++) {
        size_t s = start[r], n = start[r + 1] - s;
        if (n < 3 || !warp[r]) continue;
        for (size_t k = 0; k < n; k++) {
            uint64_t key = ukey(verts[s + k], verts[s + (k + 1) % n]);
            if (warp[r] == PSDL_FACES_PORTAL) portal[np++] = key;
            else deck[nd++] = key;
        }
    }
    if (np > 1) qsort(portal, np, sizeof *portal, by_u64);
    if (nd > 1) qsort(deck, nd, sizeof *deck, by_u64);
    /* the rings: faces first, then outlines, each in loop order */
    const psdl_faces *L = &out->loops;
    size_t nl = L->nloops, nv = L->start[nl];
    double *s_of = (double *)malloc((nl ? nl : 1) * sizeof *s_of);
    out->start = (size_t *)malloc((nl + 1) * sizeof *out->start);
    out->verts = (uint32_t *)malloc((nv ? nv : 1) * sizeof *out->verts);
    out->kinds = (unsigned char *)malloc(nv ? nv : 1);
    out->area = (double *)malloc((nl ? nl : 1) * sizeof *out->area);
    if (!s_of || !out->start || !out->verts || !out->kinds || !out->area) {
        free(s_of);
        goto done;
    }
    for (size_t l = 0; l < nl; l++) {
        size_t n = L->start[l + 1] - L->start[l];
        s_of[l] = n >= 3 ? ring_s(pts, L->verts + L->start[l], n) : 0;
    }
    size_t nr = 0, w = 0;
    out->start[0] = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t l = 0; l < nl; l++) {
            double s = s_of[l];
            if (!(fabs(s) > 2 * 0.5) || (pass == 0) != (s > 0)) continue;
            const uint32_t *lv = L->verts + L->start[l];
            size_t n = L->start[l + 1] - L->start[l];
            for (size_t k = 0; k < n; k++) out->verts[w + k] = lv[n - 1 - k];
            for (size_t k = 0; k < n; k++) {
                uint64_t key = ukey(out->verts[w + k], out->verts[w + (k + 1) % n]);
                out->kinds[w + k] = has_key(portal, np, key) ? PSDL_FACES_PORTAL
                                    : has_key(deck, nd, key) ? PSDL_FACES_DECK
                                                             : PSDL_FACES_STREET;
            }
            out->area[nr] = pass == 0 ? s / 2 : -s / 2;
            w += n;
            out->start[++nr] = w;
        }
        if (pass == 0) out->nfaces = nr;
    }
    free(s_of);
    out->nrings = nr;
    /* islands: each outline in the smallest larger face holding its loop's first point */
    size_t nf = out->nfaces, no = nr - nf;
    out->host = (size_t *)malloc((no ? no : 1) * sizeof *out->host);
    order = (face_key *)malloc((nf ? nf : 1) * sizeof *order);
    if (!out->host || !order) goto done;
    for (size_t f = 0; f < nf; f++) order[f].area = out->area[f], order[f].i = f;
    if (nf > 1) qsort(order, nf, sizeof *order, by_face);
    for (size_t o = 0; o < no; o++) {
        size_t ri = nf + o, n = out->start[ri + 1] - out->start[ri];
        uint32_t p = out->verts[out->start[ri] + n - 1]; /* the loop's first point */
        double a = out->area[ri];
        out->host[o] = PSDL_FACES_NONE;
        for (size_t k = 0; k < nf; k++) {
            size_t f = order[k].i;
            if (out->area[f] > a &&
                ring_inside(pts, out->verts + out->start[f], out->start[f + 1] - out->start[f], PX(p), PZ(p))) {
                out->host[o] = f;
                break;
            }
        }
    }
    rc = PSDL_FACES_OK;
done:
    free(bst);
    free(bv);
    free(portal);
    free(deck);
    free(order);
    if (rc != PSDL_FACES_OK) psdl_faces_net_free(out);
    return rc;
}
