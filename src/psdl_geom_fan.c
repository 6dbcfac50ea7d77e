/* psdl_geom_fan.c -- triangulation (ear clipping with hole bridges, after earcut), merging
 * into convex pieces (Hertel-Mehlhorn) and triangle fans in retail winding (psdl_geom.h). */
#include "psdl_geom.h"
#include "psdl_segment.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ linked ring (earcut) */

/* Internally rings wind counter-clockwise in (x, z) (S > 0), as earcut's outer rings do;
 * triangles are flipped to retail winding (S < 0) on output. */
typedef struct node {
    uint32_t i; /* index into the caller's points */
    double x, z;
    int32_t prev, next;
} node;

typedef struct ring {
    node *nodes;
    size_t count, cap;
    double eps; /* area below which a triangle is degenerate */
} ring;

static int32_t new_node(ring *r, uint32_t i, double x, double z, int32_t last) {
    assert(r->count < r->cap);
    int32_t k = (int32_t)r->count++;
    node *p = &r->nodes[k];
    p->i = i;
    p->x = x;
    p->z = z;
    if (last < 0) {
        p->prev = p->next = k;
    } else {
        node *l = &r->nodes[last];
        p->next = l->next;
        p->prev = last;
        r->nodes[l->next].prev = k;
        l->next = k;
    }
    return k;
}

static void remove_node(ring *r, int32_t k) {
    node *p = &r->nodes[k];
    r->nodes[p->next].prev = p->prev;
    r->nodes[p->prev].next = p->next;
}

/* earcut's area(): negative when p -> q -> s turns left (counter-clockwise). */
static double tri_area(const node *p, const node *q, const node *s) {
    return (q->z - p->z) * (s->x - q->x) - (q->x - p->x) * (s->z - q->z);
}

static int equals(const node *a, const node *b) { return a->x == b->x && a->z == b->z; }

/* Relative flatness: corners whose sine is below this count as straight, so that points
 * rounded to float32 on a straight edge (about 1e-7 relative) are still seen collinear and
 * never become the third corner of a sliver triangle. */
#define SIN_EPS 1e-5

/* Threshold for a cross product of edges of lengths la, lb: max(eps, SIN_EPS * la * lb). */
static double cross_thr(double ax, double az, double bx, double bz, double eps) {
    double t = SIN_EPS * sqrt((ax * ax + az * az) * (bx * bx + bz * bz));
    return t > eps ? t : eps;
}

/* tri_area(p, q, s) < 0 by a margin: a strictly convex corner at q. */
static int convex_corner(const node *p, const node *q, const node *s, double eps) {
    return -tri_area(p, q, s) > cross_thr(q->x - p->x, q->z - p->z, s->x - q->x, s->z - q->z, eps);
}

static int point_in_triangle(double ax, double az, double bx, double bz, double cx, double cz, double px, double pz) {
    return (cx - px) * (az - pz) >= (ax - px) * (cz - pz) && (ax - px) * (bz - pz) >= (bx - px) * (az - pz) &&
           (bx - px) * (cz - pz) >= (cx - px) * (bz - pz);
}

/* Twice the signed area (S) of the ring of points [start, end) of pts. */
static double ring_s(const double *pts, size_t start, size_t end) {
    double s = 0;
    for (size_t i = start; i < end; i++) {
        size_t j = i + 1 < end ? i + 1 : start;
        s += pts[3 * i] * pts[3 * j + 2] - pts[3 * j] * pts[3 * i + 2];
    }
    return s;
}

/* Links points [start, end) into a ring with the wanted winding (ccw: S > 0), dropping
 * consecutive duplicates; returns the last node or -1. */
static int32_t link_ring(ring *r, const double *pts, size_t start, size_t end, int ccw) {
    int32_t last = -1;
    int forward = (ring_s(pts, start, end) > 0) == ccw;
    for (size_t t = start; t < end; t++) {
        size_t i = forward ? t : end - 1 - (t - start);
        double x = pts[3 * i], z = pts[3 * i + 2];
        if (last >= 0 && r->nodes[last].x == x && r->nodes[last].z == z) continue;
        last = new_node(r, (uint32_t)i, x, z, last);
    }
    if (last >= 0 && r->nodes[last].next != last) {
        int32_t first = r->nodes[last].next;
        if (equals(&r->nodes[last], &r->nodes[first])) {
            int32_t prev = r->nodes[last].prev;
            remove_node(r, last);
            last = prev;
        }
    }
    return last;
}

static int is_ear(const ring *r, int32_t ek) {
    const node *b = &r->nodes[ek], *a = &r->nodes[b->prev], *c = &r->nodes[b->next];
    if (!convex_corner(a, b, c, r->eps)) return 0; /* reflex or flat */
    double x0 = fmin(a->x, fmin(b->x, c->x)), x1 = fmax(a->x, fmax(b->x, c->x));
    double z0 = fmin(a->z, fmin(b->z, c->z)), z1 = fmax(a->z, fmax(b->z, c->z));
    int32_t pk = c->next;
    while (pk != b->prev) {
        const node *p = &r->nodes[pk];
        if (p->x >= x0 && p->x <= x1 && p->z >= z0 && p->z <= z1 && !equals(p, a) && !equals(p, b) && !equals(p, c) &&
            point_in_triangle(a->x, a->z, b->x, b->z, c->x, c->z, p->x, p->z) &&
            !convex_corner(&r->nodes[p->prev], p, &r->nodes[p->next], r->eps))
            return 0;
        pk = p->next;
    }
    return 1;
}

/* ---------------------------------------------------------------- holes (earcut) */

static int locally_inside(const ring *r, const node *a, const node *b) {
    const node *ap = &r->nodes[a->prev], *an = &r->nodes[a->next];
    return tri_area(ap, a, an) < 0 ? tri_area(a, b, an) >= 0 && tri_area(a, ap, b) >= 0
                                   : tri_area(a, b, ap) < 0 || tri_area(a, an, b) < 0;
}

static int sector_contains_sector(const ring *r, const node *m, const node *p) {
    return tri_area(&r->nodes[m->prev], m, &r->nodes[p->prev]) < 0 &&
           tri_area(&r->nodes[p->next], m, &r->nodes[m->next]) < 0;
}

static int32_t find_hole_bridge(const ring *r, int32_t hk, int32_t outer) {
    const node *hole = &r->nodes[hk];
    int32_t pk = outer, mk = -1;
    double hx = hole->x, hz = hole->z, qx = -INFINITY;
    do {
        const node *p = &r->nodes[pk], *pn = &r->nodes[p->next];
        if (hz <= p->z && hz >= pn->z && pn->z != p->z) {
            double x = p->x + (hz - p->z) * (pn->x - p->x) / (pn->z - p->z);
            if (x <= hx && x > qx) {
                qx = x;
                mk = p->x < pn->x ? pk : p->next;
                if (x == hx) return mk;
            }
        }
        pk = p->next;
    } while (pk != outer);
    if (mk < 0) return -1;
    int32_t stop = mk;
    double mx = r->nodes[mk].x, mz = r->nodes[mk].z, tan_min = INFINITY;
    pk = mk;
    do {
        const node *p = &r->nodes[pk];
        if (hx >= p->x && p->x >= mx && hx != p->x &&
            point_in_triangle(hz < mz ? hx : qx, hz, mx, mz, hz < mz ? qx : hx, hz, p->x, p->z)) {
            double t = fabs(hz - p->z) / (hx - p->x);
            const node *m = &r->nodes[mk];
            if (locally_inside(r, p, hole) &&
                (t < tan_min || (t == tan_min && (p->x > m->x || (p->x == m->x && sector_contains_sector(r, m, p)))))) {
                mk = pk;
                tan_min = t;
            }
        }
        pk = p->next;
    } while (pk != stop);
    return mk;
}

/* Joins the ring of b into the ring of a with a two-way bridge a <-> b (earcut's
 * splitPolygon). */
static void split_polygon(ring *r, int32_t ak, int32_t bk) {
    node a = r->nodes[ak], b = r->nodes[bk];
    int32_t a2 = (int32_t)r->count++, b2 = (int32_t)r->count++;
    assert(r->count <= r->cap);
    r->nodes[a2] = a;
    r->nodes[b2] = b;
    int32_t an = a.next, bp = b.prev;
    r->nodes[ak].next = bk;
    r->nodes[bk].prev = ak;
    r->nodes[a2].next = an;
    r->nodes[an].prev = a2;
    r->nodes[b2].next = a2;
    r->nodes[a2].prev = b2;
    r->nodes[bp].next = b2;
    r->nodes[b2].prev = bp;
}

typedef struct hole_ref {
    int32_t left;
    double x;
} hole_ref;

static int cmp_hole(const void *a, const void *b) {
    double x = ((const hole_ref *)a)->x, y = ((const hole_ref *)b)->x;
    return x < y ? -1 : x > y;
}

/* Hole starts as psdl_geom.h requires them: strictly increasing, each in 1 .. n-1 (so that
 * the outer ring and every hole has at least one point and all lie within pts). */
static int holes_ok(const uint32_t *hole_starts, size_t nholes, size_t n) {
    if (nholes == 0) return 1;
    if (!hole_starts || nholes >= n) return 0;
    for (size_t h = 0; h < nholes; h++)
        if (hole_starts[h] < 1 || hole_starts[h] >= n || (h > 0 && hole_starts[h] <= hole_starts[h - 1])) return 0;
    return 1;
}

/* Builds the outer ring with every hole bridged in (hole starts checked by holes_ok);
 * returns a node of it or -1 (-2: out of memory). *missed (may be NULL) receives the number of holes of 3 or more points that found
 * no bridge (a hole outside the outer ring). */
static int32_t build_ring(ring *r, const double *pts, size_t n, const uint32_t *hole_starts, size_t nholes,
                          size_t *missed) {
    if (missed) *missed = 0;
    size_t outer_end = nholes ? hole_starts[0] : n;
    int32_t outer = link_ring(r, pts, 0, outer_end, 1);
    if (outer < 0 || nholes == 0) return outer;
    hole_ref *holes = (hole_ref *)malloc(nholes * sizeof *holes);
    if (!holes) return -2;
    size_t nh = 0;
    for (size_t h = 0; h < nholes; h++) {
        size_t s = hole_starts[h], e = h + 1 < nholes ? hole_starts[h + 1] : n;
        if (e <= s + 2) continue;
        int32_t last = link_ring(r, pts, s, e, 0);
        if (last < 0) continue;
        int32_t k = last, left = last;
        do {
            const node *p = &r->nodes[k], *l = &r->nodes[left];
            if (p->x < l->x || (p->x == l->x && p->z < l->z)) left = k;
            k = p->next;
        } while (k != last);
        holes[nh].left = left;
        holes[nh].x = r->nodes[left].x;
        nh++;
    }
    qsort(holes, nh, sizeof *holes, cmp_hole);
    for (size_t h = 0; h < nh; h++) {
        int32_t bridge = find_hole_bridge(r, holes[h].left, outer);
        if (bridge < 0) {
            if (missed) (*missed)++;
            continue;
        }
        split_polygon(r, bridge, holes[h].left);
    }
    free(holes);
    return outer;
}

/* Clips ears of the ring at `start`, writing counter-clockwise triangles (3 indices each)
 * to dst; returns the triangle count. */
static size_t clip_ears(ring *r, int32_t start, uint32_t *dst) {
    size_t nt = 0;
    int32_t ear = start, stop = start;
    int pass = 0;
    while (r->nodes[ear].prev != r->nodes[ear].next) {
        node *e = &r->nodes[ear];
        int32_t prev = e->prev, next = e->next;
        int ok = is_ear(r, ear);
        if (!ok && pass == 2) ok = convex_corner(&r->nodes[prev], e, &r->nodes[next], r->eps); /* last resort */
        if (ok) {
            dst[3 * nt] = r->nodes[prev].i;
            dst[3 * nt + 1] = e->i;
            dst[3 * nt + 2] = r->nodes[next].i;
            nt++;
            remove_node(r, ear);
            ear = r->nodes[next].next;
            stop = ear;
            pass = 0;
            continue;
        }
        ear = next;
        if (ear == stop) {
            if (pass == 0) {
                /* drop nodes equal to their successor (bridge leftovers) and flat spikes */
                int32_t k = ear, removed = 0;
                int32_t guard = (int32_t)r->count * 2;
                do {
                    node *p = &r->nodes[k];
                    node *pn = &r->nodes[p->next], *pp = &r->nodes[p->prev];
                    int spike = tri_area(pp, p, pn) == 0 && (pp->x - p->x) * (pn->x - p->x) + (pp->z - p->z) * (pn->z - p->z) > 0;
                    if (p->next != k && (equals(p, pn) || spike)) {
                        int32_t nx = p->prev;
                        remove_node(r, k);
                        removed = 1;
                        k = nx;
                        if (r->nodes[k].prev == r->nodes[k].next) break;
                    } else {
                        k = p->next;
                    }
                } while (k != ear && --guard > 0);
                ear = stop = k;
                pass = removed ? 0 : 1;
                if (!removed) pass = 1;
            } else if (pass == 1) {
                pass = 2;
            } else {
                break; /* only flat vertices remain */
            }
        }
    }
    return nt;
}

static double extent_eps(const double *pts, size_t n) {
    if (n == 0) return 1e-12;
    double x0 = pts[0], x1 = pts[0], z0 = pts[2], z1 = pts[2];
    for (size_t i = 1; i < n; i++) {
        x0 = fmin(x0, pts[3 * i]), x1 = fmax(x1, pts[3 * i]);
        z0 = fmin(z0, pts[3 * i + 2]), z1 = fmax(z1, pts[3 * i + 2]);
    }
    double e = fmax(x1 - x0, z1 - z0);
    return 1e-12 * (e * e + 1);
}

size_t psdl_triangulate_bound(size_t n, size_t nholes) { return n + 2 * nholes; }

/* Counter-clockwise triangles into dst (as clip_ears); PSDL_GEOM_NOMEM on failure. */
static size_t triangulate_ccw(uint32_t *dst, const double *pts, size_t n, const uint32_t *hole_starts, size_t nholes) {
    if (n < 3) return 0;
    ring r;
    r.cap = n + 2 * nholes + 2;
    r.count = 0;
    r.nodes = (node *)malloc(r.cap * sizeof *r.nodes);
    if (!r.nodes) return PSDL_GEOM_NOMEM;
    r.eps = extent_eps(pts, n);
    int32_t start = build_ring(&r, pts, n, hole_starts, nholes, NULL);
    size_t nt = 0;
    if (start == -2) {
        free(r.nodes);
        return PSDL_GEOM_NOMEM;
    }
    if (start >= 0) nt = clip_ears(&r, start, dst);
    free(r.nodes);
    return nt;
}

size_t psdl_triangulate(uint32_t *dst, const double *pts, size_t n, const uint32_t *hole_starts, size_t nholes) {
    assert(dst && (pts || n == 0));
    if (!holes_ok(hole_starts, nholes, n)) return PSDL_GEOM_INVALID;
    size_t nt = triangulate_ccw(dst, pts, n, hole_starts, nholes);
    if (nt == PSDL_GEOM_NOMEM) return nt;
    for (size_t t = 0; t < nt; t++) { /* retail winding */
        uint32_t tmp = dst[3 * t + 1];
        dst[3 * t + 1] = dst[3 * t + 2];
        dst[3 * t + 2] = tmp;
    }
    return nt;
}

/* ================================================================ convex pieces and fans */

/* Plan cross product (b - a) x (c - b) of points by index: > 0 for a left (CCW) turn. */
static double turn(const double *pts, uint32_t a, uint32_t b, uint32_t c) {
    const double *p = pts + 3 * a, *q = pts + 3 * b, *s = pts + 3 * c;
    return (q[0] - p[0]) * (s[2] - q[2]) - (q[2] - p[2]) * (s[0] - q[0]);
}

/* Is the turn a -> b -> c a right (clockwise) turn beyond the flatness threshold? */
static int reflex_turn(const double *pts, uint32_t a, uint32_t b, uint32_t c, double eps) {
    const double *p = pts + 3 * a, *q = pts + 3 * b, *s = pts + 3 * c;
    return turn(pts, a, b, c) < -cross_thr(q[0] - p[0], q[2] - p[2], s[0] - q[0], s[2] - q[2], eps);
}

/* Is the counter-clockwise ring convex (collinear corners allowed)? */
static int ring_convex(const double *pts, const uint32_t *rg, size_t k, double eps) {
    for (size_t i = 0; i < k; i++)
        if (reflex_turn(pts, rg[(i + k - 1) % k], rg[i], rg[(i + 1) % k], eps)) return 0;
    return 1;
}

/* Writes the fans of one convex counter-clockwise ring rg[0..k-1]; returns words written
 * (PSDL_GEOM_NOMEM on failure). */
static size_t emit_piece(uint32_t *dst, double *extra, size_t *nextra, const double *pts, size_t n, const uint32_t *rg,
                         size_t k, unsigned flags, double eps) {
    /* a boundary hub that sees every rim edge at non-zero area */
    for (size_t h = 0; h < k; h++) {
        int ok = 1;
        for (size_t j = 1; j + 1 < k && ok; j++) {
            uint32_t a = rg[(h + j) % k], b = rg[(h + j + 1) % k];
            const double *p = pts + 3 * rg[h], *q = pts + 3 * a, *s = pts + 3 * b;
            double cr = (q[0] - p[0]) * (s[2] - p[2]) - (q[2] - p[2]) * (s[0] - p[0]);
            if (cr <= cross_thr(q[0] - p[0], q[2] - p[2], s[0] - p[0], s[2] - p[2], eps)) ok = 0;
        }
        if (!ok) continue;
        size_t w = 0;
        dst[w++] = (uint32_t)k;
        dst[w++] = rg[h];
        for (size_t j = k - 1; j >= 1; j--) dst[w++] = rg[(h + j) % k]; /* clockwise: retail */
        return w;
    }
    if (!(flags & PSDL_FANS_NO_EXTRA)) {
        double c[3] = {0, 0, 0};
        for (size_t j = 0; j < k; j++)
            for (int d = 0; d < 3; d++) c[d] += pts[3 * rg[j] + d];
        size_t e = (*nextra)++;
        for (int d = 0; d < 3; d++) extra[3 * e + d] = c[d] / (double)k;
        size_t w = 0;
        dst[w++] = (uint32_t)(k + 2);
        dst[w++] = (uint32_t)(n + e);
        dst[w++] = rg[0];
        for (size_t j = k - 1; j >= 1; j--) dst[w++] = rg[j];
        dst[w++] = rg[0];
        return w;
    }
    /* split into single triangles by ear clipping the piece */
    double *sub = (double *)malloc(3 * k * sizeof *sub);
    uint32_t *tri = (uint32_t *)malloc(3 * k * sizeof *tri);
    if (!sub || !tri) {
        free(sub);
        free(tri);
        return PSDL_GEOM_NOMEM;
    }
    for (size_t j = 0; j < k; j++) memcpy(sub + 3 * j, pts + 3 * rg[j], 3 * sizeof *sub);
    size_t nt = triangulate_ccw(tri, sub, k, NULL, 0);
    size_t w = 0;
    if (nt != PSDL_GEOM_NOMEM)
        for (size_t t = 0; t < nt; t++) {
            dst[w++] = 3;
            dst[w++] = rg[tri[3 * t]];
            dst[w++] = rg[tri[3 * t + 2]];
            dst[w++] = rg[tri[3 * t + 1]];
        }
    free(sub);
    free(tri);
    return nt == PSDL_GEOM_NOMEM ? nt : w;
}

size_t psdl_fans_bound(size_t n, size_t nholes) { return 6 * (n + 2 * nholes); }

/* Directed-edge hash for Hertel-Mehlhorn: key (u, v) -> triangle. */
typedef struct ehash {
    uint64_t *keys;
    uint32_t *vals;
    size_t mask;
} ehash;

static uint64_t ekey(uint32_t u, uint32_t v) { return ((uint64_t)u << 32) | v; }

static size_t ehash_slot(const ehash *h, uint64_t k) {
    uint64_t x = k * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & h->mask;
}

static void ehash_put(ehash *h, uint64_t k, uint32_t v) {
    size_t s = ehash_slot(h, k);
    while (h->keys[s] != UINT64_MAX && h->keys[s] != k) s = (s + 1) & h->mask;
    h->keys[s] = k;
    h->vals[s] = v;
}

static uint32_t ehash_get(const ehash *h, uint64_t k) {
    size_t s = ehash_slot(h, k);
    while (h->keys[s] != UINT64_MAX) {
        if (h->keys[s] == k) return h->vals[s];
        s = (s + 1) & h->mask;
    }
    return UINT32_MAX;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

size_t psdl_fans(uint32_t *dst, double *extra, size_t *nextra, const double *pts, size_t n,
                 const uint32_t *hole_starts, size_t nholes, unsigned flags) {
    assert(dst && nextra && (pts || n == 0));
    *nextra = 0;
    if (!holes_ok(hole_starts, nholes, n)) return PSDL_GEOM_INVALID;
    if (n < 3) return 0;
    double eps = extent_eps(pts, n);
    /* fast path: a convex outer ring without holes is one piece */
    if (nholes == 0) {
        uint32_t *rg = (uint32_t *)malloc(n * sizeof *rg);
        if (!rg) return PSDL_GEOM_NOMEM;
        int ccw = ring_s(pts, 0, n) > 0;
        size_t k = 0;
        for (size_t t = 0; t < n; t++) {
            uint32_t i = (uint32_t)(ccw ? t : n - 1 - t);
            if (k > 0 && pts[3 * rg[k - 1]] == pts[3 * i] && pts[3 * rg[k - 1] + 2] == pts[3 * i + 2]) continue;
            rg[k++] = i;
        }
        while (k > 1 && pts[3 * rg[k - 1]] == pts[3 * rg[0]] && pts[3 * rg[k - 1] + 2] == pts[3 * rg[0] + 2]) k--;
        if (k >= 3 && fabs(ring_s(pts, 0, n)) > eps && ring_convex(pts, rg, k, eps)) {
            size_t w = emit_piece(dst, extra, nextra, pts, n, rg, k, flags, eps);
            free(rg);
            return w;
        }
        free(rg);
    }
    size_t tb = psdl_triangulate_bound(n, nholes);
    uint32_t *tri = (uint32_t *)malloc(3 * tb * sizeof *tri);
    uint32_t *parent = (uint32_t *)malloc(tb * sizeof *parent);
    /* each piece's ring lives in `pool` (a merged ring is appended; the pool grows) */
    uint32_t *rstart = (uint32_t *)malloc(tb * sizeof *rstart);
    uint32_t *rlen = (uint32_t *)malloc(tb * sizeof *rlen);
    size_t pool_cap = 8 * tb + 16;
    uint32_t *pool = (uint32_t *)malloc(pool_cap * sizeof *pool);
    uint32_t *tmp = (uint32_t *)malloc((tb + 3) * sizeof *tmp);
    ehash h;
    size_t hcap = 16;
    while (hcap < 6 * tb + 16) hcap <<= 1;
    h.mask = hcap - 1;
    h.keys = (uint64_t *)malloc(hcap * sizeof *h.keys);
    h.vals = (uint32_t *)malloc(hcap * sizeof *h.vals);
    size_t result = PSDL_GEOM_NOMEM;
    if (!tri || !parent || !rstart || !rlen || !pool || !tmp || !h.keys || !h.vals) goto done;
    size_t nt = triangulate_ccw(tri, pts, n, hole_starts, nholes);
    if (nt == PSDL_GEOM_NOMEM) goto done;
    memset(h.keys, 0xFF, hcap * sizeof *h.keys);
    size_t used = 0;
    for (size_t t = 0; t < nt; t++) {
        parent[t] = (uint32_t)t;
        rstart[t] = (uint32_t)used;
        rlen[t] = 3;
        for (int j = 0; j < 3; j++) {
            pool[used + (size_t)j] = tri[3 * t + (size_t)j];
            ehash_put(&h, ekey(tri[3 * t + (size_t)j], tri[3 * t + (size_t)((j + 1) % 3)]), (uint32_t)t);
        }
        used += 3;
    }
    /* Hertel-Mehlhorn: remove a diagonal when the merged piece stays convex at its ends */
    for (size_t t = 0; t < nt; t++)
        for (int j = 0; j < 3; j++) {
            uint32_t u = tri[3 * t + (size_t)j], v = tri[3 * t + (size_t)((j + 1) % 3)];
            if (u > v) continue;
            uint32_t ot = ehash_get(&h, ekey(v, u));
            if (ot == UINT32_MAX) continue;
            uint32_t P = uf_find(parent, (uint32_t)t), Q = uf_find(parent, ot);
            if (P == Q) continue;
            const uint32_t *pr = pool + rstart[P], *qr = pool + rstart[Q];
            size_t pk = rlen[P], qk = rlen[Q];
            size_t pu = pk, qv = qk;
            for (size_t a = 0; a < pk; a++)
                if (pr[a] == u && pr[(a + 1) % pk] == v) pu = a;
            for (size_t a = 0; a < qk; a++)
                if (qr[a] == v && qr[(a + 1) % qk] == u) qv = a;
            if (pu == pk || qv == qk) continue;
            /* merged: P from v around to u, then Q's points strictly between u and v */
            size_t m = 0;
            for (size_t a = 1; a <= pk; a++) tmp[m++] = pr[(pu + a) % pk]; /* v ... u */
            for (size_t a = 2; a < qk; a++) tmp[m++] = qr[(qv + a) % qk];  /* after u ... before v */
            /* convex at u (index pk - 1) and v (index 0)? */
            size_t iu = pk - 1;
            if (reflex_turn(pts, tmp[(iu + m - 1) % m], tmp[iu], tmp[(iu + 1) % m], eps)) continue;
            if (reflex_turn(pts, tmp[m - 1], tmp[0], tmp[1], eps)) continue;
            if (used + m > pool_cap) {
                size_t ncap = 2 * pool_cap + m;
                uint32_t *np = (uint32_t *)realloc(pool, ncap * sizeof *np);
                if (!np) goto done;
                pool = np;
                pool_cap = ncap;
                pr = pool + rstart[P];
            }
            memcpy(pool + used, tmp, m * sizeof *tmp);
            rstart[P] = (uint32_t)used;
            rlen[P] = (uint32_t)m;
            used += m;
            parent[Q] = P;
        }
    size_t w = 0;
    for (size_t t = 0; t < nt; t++) {
        if (parent[t] != t) continue;
        size_t r = emit_piece(dst + w, extra, nextra, pts, n, pool + rstart[t], rlen[t], flags, eps);
        if (r == PSDL_GEOM_NOMEM) goto done;
        w += r;
    }
    result = w;
done:
    free(tri);
    free(parent);
    free(rstart);
    free(rlen);
    free(pool);
    free(tmp);
    free(h.keys);
    free(h.vals);
    return result;
}

/* ================================================================ keyholes, crossings, containment */

size_t psdl_keyhole_bound(size_t n, size_t nholes) { return n + 2 * nholes; }

size_t psdl_keyhole(uint32_t *dst, const double *pts, size_t n, const uint32_t *hole_starts, size_t nholes) {
    assert(dst && (pts || n == 0) && (hole_starts || nholes == 0));
    if (!holes_ok(hole_starts, nholes, n)) return PSDL_GEOM_INVALID;
    size_t outer_end = nholes ? hole_starts[0] : n;
    if (outer_end < 3) return 0;
    ring r;
    r.cap = n + 2 * nholes + 2;
    r.count = 0;
    r.nodes = (node *)malloc(r.cap * sizeof *r.nodes);
    if (!r.nodes) return PSDL_GEOM_NOMEM;
    r.eps = extent_eps(pts, n);
    size_t missed = 0, m = 0;
    int32_t start = build_ring(&r, pts, n, hole_starts, nholes, &missed);
    size_t result = 0;
    if (start == -2) result = PSDL_GEOM_NOMEM;
    else if (missed) result = PSDL_GEOM_INVALID;
    else if (start >= 0) {
        /* the ring runs counter-clockwise (S > 0): walk it, then write it backwards from the
         * point with the lowest index (retail winding, the holes turning the other way) */
        int32_t k = start, first = start;
        do {
            if (r.nodes[k].i < r.nodes[first].i) first = k;
            k = r.nodes[k].next;
            m++;
        } while (k != start && m <= r.cap);
        assert(m <= psdl_keyhole_bound(n, nholes));
        k = first;
        dst[0] = r.nodes[first].i;
        for (size_t w = 1; w < m; w++) {
            k = r.nodes[k].prev;
            dst[w] = r.nodes[k].i;
        }
        result = m >= 3 ? m : 0;
    }
    free(r.nodes);
    return result;
}

/* Segments (a, b) and (c, d) cross properly in plan: each one's ends lie on opposite sides
 * of the other's line, more than tol from it. */
static int seg_cross(const double *a, const double *b, const double *c, const double *d, double tol) {
    double abx = b[0] - a[0], abz = b[2] - a[2], cdx = d[0] - c[0], cdz = d[2] - c[2];
    double lab = sqrt(abx * abx + abz * abz), lcd = sqrt(cdx * cdx + cdz * cdz);
    if (lab == 0 || lcd == 0) return 0;
    double o1 = abx * (c[2] - a[2]) - abz * (c[0] - a[0]), o2 = abx * (d[2] - a[2]) - abz * (d[0] - a[0]);
    double o3 = cdx * (a[2] - c[2]) - cdz * (a[0] - c[0]), o4 = cdx * (b[2] - c[2]) - cdz * (b[0] - c[0]);
    double t1 = tol * lab, t2 = tol * lcd;
    return ((o1 > t1 && o2 < -t1) || (o1 < -t1 && o2 > t1)) && ((o3 > t2 && o4 < -t2) || (o3 < -t2 && o4 > t2));
}

/* The point after point k in its ring [s, e). */
static size_t ring_next(size_t k, size_t s, size_t e) { return k + 1 < e ? k + 1 : s; }

typedef struct xedge {
    double x0, x1;
    size_t k, s, e; /* edge from point k; its ring [s, e) */
} xedge;

static int cmp_xedge(const void *a, const void *b) {
    double x = ((const xedge *)a)->x0, y = ((const xedge *)b)->x0;
    if (x != y) return x < y ? -1 : 1;
    size_t i = ((const xedge *)a)->k, j = ((const xedge *)b)->k;
    return (i > j) - (i < j);
}

/* psdl_self_crossing of one ring of n points (4 <= n <= SMALL_RING): every pair of edges
 * whose boxes meet (the boxes made once, as the sweep makes them), in the order (lower edge,
 * higher edge), so the first crossing found is the pair the sweep below reports (the
 * lowest); no sorting and no allocation (most rooms have a handful of points). */
#define SMALL_RING 32
static size_t self_crossing_small(uint32_t out[2], const double *pts, size_t n, double tol) {
    double box[SMALL_RING][4]; /* x0, x1, z0, z1 of the edge from point k */
    for (size_t k = 0; k < n; k++) {
        const double *a = pts + 3 * k, *b = pts + 3 * (k + 1 < n ? k + 1 : 0);
        box[k][0] = fmin(a[0], b[0]), box[k][1] = fmax(a[0], b[0]);
        box[k][2] = fmin(a[2], b[2]), box[k][3] = fmax(a[2], b[2]);
    }
    for (size_t i = 0; i + 2 < n; i++) {
        const double *a = pts + 3 * i, *b = pts + 3 * (i + 1);
        for (size_t j = i + 2; j < n; j++) {
            if (i == 0 && j == n - 1) continue; /* neighbours across the ring's start */
            if (box[j][1] < box[i][0] || box[j][0] > box[i][1] || box[j][3] < box[i][2] || box[j][2] > box[i][3])
                continue;
            if (!seg_cross(a, b, pts + 3 * j, pts + 3 * (j + 1 < n ? j + 1 : 0), tol)) continue;
            out[0] = (uint32_t)i, out[1] = (uint32_t)j;
            return 1;
        }
    }
    return 0;
}

size_t psdl_self_crossing(uint32_t out[2], const double *pts, size_t n, const uint32_t *hole_starts, size_t nholes,
                          double tol) {
    assert(out && (pts || n == 0) && (hole_starts || nholes == 0));
    if (!holes_ok(hole_starts, nholes, n)) return PSDL_GEOM_INVALID;
    if (n < 4) return 0;
    if (n <= SMALL_RING && nholes == 0) return self_crossing_small(out, pts, n, tol);
    xedge *ed = (xedge *)malloc(n * sizeof *ed);
    if (!ed) return PSDL_GEOM_NOMEM;
    size_t ne = 0;
    for (size_t h = 0; h <= nholes; h++) {
        size_t s = h == 0 ? 0 : hole_starts[h - 1], e = h < nholes ? hole_starts[h] : n; /* s < e <= n */
        for (size_t k = s; k < e; k++) {
            const double *a = pts + 3 * k, *b = pts + 3 * ring_next(k, s, e);
            ed[ne].x0 = fmin(a[0], b[0]), ed[ne].x1 = fmax(a[0], b[0]);
            ed[ne].k = k, ed[ne].s = s, ed[ne].e = e;
            ne++;
        }
    }
    qsort(ed, ne, sizeof *ed, cmp_xedge);
    size_t found = 0, best_i = 0, best_j = 0;
    for (size_t i = 0; i < ne; i++) {
        const xedge *p = &ed[i];
        size_t pn = ring_next(p->k, p->s, p->e);
        const double *a = pts + 3 * p->k, *b = pts + 3 * pn;
        double z0 = fmin(a[2], b[2]), z1 = fmax(a[2], b[2]);
        for (size_t j = i + 1; j < ne && ed[j].x0 <= p->x1; j++) {
            const xedge *q = &ed[j];
            size_t qn = ring_next(q->k, q->s, q->e);
            if (q->k == pn || qn == p->k) continue; /* neighbouring edges */
            const double *c = pts + 3 * q->k, *d = pts + 3 * qn;
            if (fmax(c[2], d[2]) < z0 || fmin(c[2], d[2]) > z1) continue;
            if (!seg_cross(a, b, c, d, tol)) continue;
            size_t lo = p->k < q->k ? p->k : q->k, hi = p->k < q->k ? q->k : p->k;
            if (!found || lo < best_i || (lo == best_i && hi < best_j)) best_i = lo, best_j = hi;
            found = 1;
        }
    }
    free(ed);
    if (found) out[0] = (uint32_t)best_i, out[1] = (uint32_t)best_j;
    return found;
}

/* ---------------------------------------------------------------- open polylines */

/* Orientation of c against the line a -> b in plan (the sign of the cross product), in the
 * same operations as psdl.city.network's Lua predecessor so that results stay identical. */
static double orient_xz(const double *a, const double *b, const double *c) {
    return (b[0] - a[0]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[0] - a[0]);
}

/* c on segment ab, given that the three are collinear: within the segment's box. */
static int on_seg_xz(const double *a, const double *b, const double *c) {
    return c[0] >= fmin(a[0], b[0]) && c[0] <= fmax(a[0], b[0]) && c[2] >= fmin(a[2], b[2]) &&
           c[2] <= fmax(a[2], b[2]);
}

/* Where segments p1 p2 and p3 p4 meet in plan: a proper crossing (the point on p1 p2), else
 * an end of one lying exactly on the other (p3, p4, p1, p2 in that order). 0 when apart. */
static int segs_meet_at(const double *p1, const double *p2, const double *p3, const double *p4, double at[2]) {
    double d1 = orient_xz(p3, p4, p1), d2 = orient_xz(p3, p4, p2), d3 = orient_xz(p1, p2, p3),
           d4 = orient_xz(p1, p2, p4);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) {
        double t = d1 / (d1 - d2);
        at[0] = p1[0] + t * (p2[0] - p1[0]);
        at[1] = p1[2] + t * (p2[2] - p1[2]);
        return 1;
    }
    const double *on = NULL;
    if (d3 == 0 && on_seg_xz(p1, p2, p3))
        on = p3;
    else if (d4 == 0 && on_seg_xz(p1, p2, p4))
        on = p4;
    else if (d1 == 0 && on_seg_xz(p3, p4, p1))
        on = p1;
    else if (d2 == 0 && on_seg_xz(p3, p4, p2))
        on = p2;
    if (!on) return 0;
    at[0] = on[0];
    at[1] = on[2];
    return 1;
}

size_t psdl_polyline_crossing(uint32_t out[4], double at[2], const double *pts, size_t n) {
    assert(out && at && (pts || n == 0));
    if (n < 4) return 0;
    /* the points that remain once consecutive repeats (same x and z) are dropped */
    size_t *keep = (size_t *)malloc(n * sizeof *keep);
    xedge *ed = (xedge *)malloc(n * sizeof *ed);
    if (!keep || !ed) {
        free(keep);
        free(ed);
        return PSDL_GEOM_NOMEM;
    }
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const double *p = pts + 3 * k;
        if (m && pts[3 * keep[m - 1]] == p[0] && pts[3 * keep[m - 1] + 2] == p[2]) continue;
        keep[m++] = k;
    }
    size_t found = 0, best_j = 0, best_i = 0;
    double best_at[2] = {0, 0};
    if (m >= 4) {
        for (size_t k = 0; k + 1 < m; k++) {
            const double *a = pts + 3 * keep[k], *b = pts + 3 * keep[k + 1];
            ed[k].x0 = fmin(a[0], b[0]), ed[k].x1 = fmax(a[0], b[0]);
            ed[k].k = k, ed[k].s = 0, ed[k].e = m;
        }
        size_t ne = m - 1;
        qsort(ed, ne, sizeof *ed, cmp_xedge);
        const double *first = pts + 3 * keep[0], *last = pts + 3 * keep[m - 1];
        for (size_t u = 0; u < ne; u++) {
            const double *a = pts + 3 * keep[ed[u].k], *b = pts + 3 * keep[ed[u].k + 1];
            double z0 = fmin(a[2], b[2]), z1 = fmax(a[2], b[2]);
            for (size_t w = u + 1; w < ne && ed[w].x0 <= ed[u].x1; w++) {
                const double *c = pts + 3 * keep[ed[w].k], *d = pts + 3 * keep[ed[w].k + 1];
                if (fmax(c[2], d[2]) < z0 || fmin(c[2], d[2]) > z1) continue;
                size_t j = ed[u].k < ed[w].k ? ed[u].k : ed[w].k, i = ed[u].k < ed[w].k ? ed[w].k : ed[u].k;
                if (i - j < 2) continue; /* neighbours share a point */
                if (found && (j > best_j || (j == best_j && i > best_i))) continue;
                double x[2];
                const double *p1 = pts + 3 * keep[j], *p2 = pts + 3 * keep[j + 1];
                if (!segs_meet_at(p1, p2, pts + 3 * keep[i], pts + 3 * keep[i + 1], x)) continue;
                /* a loop between two nodes at one place closes where it began */
                if (j == 0 && i == m - 2 && x[0] == first[0] && x[1] == first[2] && x[0] == last[0] &&
                    x[1] == last[2])
                    continue;
                found = 1, best_j = j, best_i = i, best_at[0] = x[0], best_at[1] = x[1];
            }
        }
    }
    if (found) {
        out[0] = (uint32_t)keep[best_j], out[1] = (uint32_t)keep[best_j + 1];
        out[2] = (uint32_t)keep[best_i], out[3] = (uint32_t)keep[best_i + 1];
        at[0] = best_at[0], at[1] = best_at[1];
    }
    free(keep);
    free(ed);
    return found;
}

/* ---------------------------------------------------------------- rings simple with a margin */

/* Segments ab and cd meet: they cross, or an end of one lies within touch of the other
 * (psdl_segs_meet, the test of psdl.plan.segs_meet). */
static int segs_meet(const double *a, const double *b, const double *c, const double *d, double touch) {
    return psdl_segs_meet(a[0], a[2], b[0], b[2], c[0], c[2], d[0], d[2], touch);
}

typedef struct sedge {
    double x0, x1;
    size_t k;
} sedge;

static int cmp_sedge(const void *a, const void *b) {
    double x = ((const sedge *)a)->x0, y = ((const sedge *)b)->x0;
    if (x != y) return x < y ? -1 : 1;
    size_t i = ((const sedge *)a)->k, j = ((const sedge *)b)->k;
    return (i > j) - (i < j);
}

size_t psdl_ring_simple(const double *pts, size_t n, double touch) {
    assert(pts || n == 0);
    if (n < 3) return 0;
    for (size_t i = 0; i < n; i++) {
        const double *p = pts + 3 * i, *q = pts + 3 * ((i + 1) % n);
        double dx = q[0] - p[0], dz = q[2] - p[2];
        if (sqrt(dx * dx + dz * dz) < 1e-6) return 0;
    }
    if (n <= 24) { /* every pair */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 2; j < n; j++) {
                if (i == 0 && j == n - 1) continue; /* neighbours across the closing point */
                if (segs_meet(pts + 3 * i, pts + 3 * ((i + 1) % n), pts + 3 * j, pts + 3 * ((j + 1) % n), touch))
                    return 0;
            }
        return 1;
    }
    /* sweep along x: pairs whose x extents lie more than touch apart never meet */
    sedge *e = (sedge *)malloc(n * sizeof *e);
    if (!e) return PSDL_GEOM_NOMEM;
    for (size_t k = 0; k < n; k++) {
        const double *a = pts + 3 * k, *b = pts + 3 * ((k + 1) % n);
        e[k].x0 = fmin(a[0], b[0]), e[k].x1 = fmax(a[0], b[0]), e[k].k = k;
    }
    qsort(e, n, sizeof *e, cmp_sedge);
    size_t result = 1;
    for (size_t i = 0; i < n && result; i++) {
        for (size_t j = i + 1; j < n && result; j++) {
            if (e[i].x1 < e[j].x0 - touch) break; /* so are all later ones */
            size_t p = e[i].k < e[j].k ? e[i].k : e[j].k, q = e[i].k < e[j].k ? e[j].k : e[i].k;
            if (q == p + 1 || (p == 0 && q == n - 1)) continue; /* neighbours */
            if (segs_meet(pts + 3 * p, pts + 3 * ((p + 1) % n), pts + 3 * q, pts + 3 * ((q + 1) % n), touch))
                result = 0;
        }
    }
    free(e);
    return result;
}

/* p lies outside the plan bounding box of segment (a, b) grown by g: then it is more than g
 * from the segment, and psdl_seg_dist need not be computed. */
static int far_from_seg(const double *p, const double *a, const double *b, double g) {
    return p[0] < fmin(a[0], b[0]) - g || p[0] > fmax(a[0], b[0]) + g || p[2] < fmin(a[2], b[2]) - g ||
           p[2] > fmax(a[2], b[2]) + g;
}

/* p inside the polygon poly (crossing number, §1.5) or within eps of its boundary. */
static int inside_poly(const double *poly, size_t n, const double *p, double eps) {
    int in = 0;
    double g = eps + 1e-6; /* far beyond rounding: the box test never hides a distance <= eps */
    for (size_t k = 0; k < n; k++) {
        const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
        if (!far_from_seg(p, a, b, g) && psdl_seg_dist(p[0], p[2], a[0], a[2], b[0], b[2]) <= eps) return 1;
        if ((a[2] > p[2]) != (b[2] > p[2]) && p[0] < a[0] + (p[2] - a[2]) * (b[0] - a[0]) / (b[2] - a[2])) in = !in;
    }
    return in;
}

/* A directed plan edge of a polygon by its end coordinates (-0 stored as +0, so that the
 * sort agrees with ==). */
typedef struct dedge {
    double ax, az, bx, bz;
    size_t k;
} dedge;

static int cmp_dedge_key(const dedge *x, double ax, double az, double bx, double bz) {
    if (x->ax != ax) return x->ax < ax ? -1 : 1;
    if (x->az != az) return x->az < az ? -1 : 1;
    if (x->bx != bx) return x->bx < bx ? -1 : 1;
    if (x->bz != bz) return x->bz < bz ? -1 : 1;
    return 0;
}

static int cmp_dedge(const void *a, const void *b) {
    const dedge *y = (const dedge *)b;
    int c = cmp_dedge_key((const dedge *)a, y->ax, y->az, y->bx, y->bz);
    if (c) return c;
    size_t i = ((const dedge *)a)->k, j = y->k;
    return (i > j) - (i < j);
}

/* cut[k] = 1 for every edge k (point k -> k+1 of the ring poly[0 .. n-1]) whose reverse,
 * by plan coordinates, is another edge j != k of the ring. Sorts the edges once and
 * binary-searches each reverse: O(n log n). Edges with a NaN coordinate equal nothing.
 * Returns 0, or -1 when out of memory. */
static int mark_reversed(unsigned char *cut, const double *poly, size_t n) {
    dedge *e = (dedge *)malloc(n * sizeof *e);
    if (!e) return -1;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
        if (isnan(a[0]) || isnan(a[2]) || isnan(b[0]) || isnan(b[2])) continue;
        e[m].ax = a[0] + 0.0, e[m].az = a[2] + 0.0, e[m].bx = b[0] + 0.0, e[m].bz = b[2] + 0.0; /* -0 -> +0 */
        e[m].k = k;
        m++;
    }
    qsort(e, m, sizeof *e, cmp_dedge);
    for (size_t i = 0; i < m; i++) {
        const dedge *x = &e[i];
        size_t lo = 0, hi = m; /* first edge >= the reverse of x */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_dedge_key(&e[mid], x->bx, x->bz, x->ax, x->az) < 0) lo = mid + 1;
            else hi = mid;
        }
        /* the run of reverses holds x itself only when x has zero length */
        for (size_t j = lo; j < m && j < lo + 2 && cmp_dedge_key(&e[j], x->bx, x->bz, x->ax, x->az) == 0; j++)
            if (e[j].k != x->k) cut[x->k] = 1;
    }
    free(e);
    return 0;
}

/* Whether edge k of the ring poly[0 .. n-1] is run backwards by another edge j != k (by plan
 * coordinates; NaN equals nothing): what mark_reversed finds, for one edge, in O(n). */
static int reversed_elsewhere(const double *poly, size_t n, size_t k) {
    const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
    for (size_t j = 0; j < n; j++) {
        const double *c = poly + 3 * j, *d = poly + 3 * ((j + 1) % n);
        if (j != k && c[0] == b[0] && c[2] == b[2] && d[0] == a[0] && d[2] == a[2]) return 1;
    }
    return 0;
}

/* Rings up to this size find reversed edges one edge at a time, when an edge is first
 * tested (most edges are far from the points and never are); larger ones sort once. */
#define FIRST_OUTSIDE_LAZY 256

size_t psdl_first_outside(const double *poly, size_t n, const double *pts, size_t m, int closed, double eps) {
    assert((poly || n == 0) && (pts || m == 0));
    if (n < 3) return m ? 1 : 0;
    /* edges of poly that it also runs backwards (keyhole bridges) bound nothing: cut[k] is
     * 1 for those, 2 for the others, 0 while not yet known */
    unsigned char *cut = (unsigned char *)calloc(n, 1);
    if (!cut) return PSDL_GEOM_NOMEM;
    if (n > FIRST_OUTSIDE_LAZY) {
        if (mark_reversed(cut, poly, n) != 0) {
            free(cut);
            return PSDL_GEOM_NOMEM;
        }
        for (size_t k = 0; k < n; k++)
            if (!cut[k]) cut[k] = 2;
    }
    size_t result = 0;
    size_t ne = closed ? m : (m ? m - 1 : 0);
    for (size_t i = 0; i < m && !result; i++) {
        const double *p = pts + 3 * i;
        if (!inside_poly(poly, n, p, eps)) result = i + 1;
    }
    for (size_t i = 0; i < ne && !result; i++) {
        const double *p = pts + 3 * i, *q = pts + 3 * ((i + 1) % m);
        double mid[3] = {(p[0] + q[0]) / 2, (p[1] + q[1]) / 2, (p[2] + q[2]) / 2};
        if (!inside_poly(poly, n, mid, eps)) result = i + 1;
        /* a proper crossing lies inside both segments' boxes: edges whose box is clear of
         * (p, q)'s need no test */
        double x0 = fmin(p[0], q[0]) - 1e-6, x1 = fmax(p[0], q[0]) + 1e-6;
        double z0 = fmin(p[2], q[2]) - 1e-6, z1 = fmax(p[2], q[2]) + 1e-6;
        for (size_t k = 0; k < n && !result; k++) {
            const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
            if (fmax(a[0], b[0]) < x0 || fmin(a[0], b[0]) > x1 || fmax(a[2], b[2]) < z0 || fmin(a[2], b[2]) > z1)
                continue;
            if (!seg_cross(p, q, a, b, eps)) continue;
            if (!cut[k]) cut[k] = reversed_elsewhere(poly, n, k) ? 1 : 2;
            if (cut[k] == 2) result = i + 1;
        }
    }
    free(cut);
    return result;
}

/* ================================================================ the ring index */

void psdl_ring_index_free(psdl_ring_index *ix) {
    if (!ix) return;
    free(ix->start), free(ix->edges), free(ix->stamp), free(ix->cut);
    memset(ix, 0, sizeof *ix);
}

/* The slab of z (monotonic in z: a z range maps to a slab range). */
static size_t ix_slab(const psdl_ring_index *ix, double z) {
    double s = floor((z - ix->z0) * ix->scale);
    if (!(s > 0)) return 0; /* (NaN too) */
    if (s >= (double)(ix->nslab - 1)) return ix->nslab - 1;
    return (size_t)s;
}

int psdl_ring_index_init(psdl_ring_index *ix, const double *poly, size_t n) {
    assert(ix && (poly || n == 0));
    psdl_ring_index_free(ix);
    ix->poly = poly, ix->n = n, ix->plain = 1;
    if (n < 3 || n > UINT32_MAX / 64) return 0;
    double z0 = INFINITY, z1 = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        const double *p = poly + 3 * k;
        if (!isfinite(p[0]) || !isfinite(p[2])) return 0;
        if (p[2] < z0) z0 = p[2];
        if (p[2] > z1) z1 = p[2];
    }
    ix->nslab = n;
    ix->z0 = z0;
    ix->scale = z1 > z0 ? (double)n / (z1 - z0) : 0;
    if (!isfinite(ix->scale)) ix->scale = 0;
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
        total += ix_slab(ix, fmax(a[2], b[2])) - ix_slab(ix, fmin(a[2], b[2])) + 1;
    }
    if (total > 16 * n) return 0; /* edges spanning many slabs: the plain test is as quick */
    ix->start = (uint32_t *)calloc(n + 1, sizeof *ix->start);
    ix->edges = (uint32_t *)malloc(total * sizeof *ix->edges);
    ix->stamp = (uint32_t *)calloc(n, sizeof *ix->stamp);
    ix->cut = (unsigned char *)calloc(n, 1);
    if (!ix->start || !ix->edges || !ix->stamp || !ix->cut) {
        psdl_ring_index_free(ix);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
        size_t s1 = ix_slab(ix, fmax(a[2], b[2]));
        for (size_t s = ix_slab(ix, fmin(a[2], b[2])); s <= s1; s++) ix->start[s + 1]++;
    }
    for (size_t s = 0; s < n; s++) ix->start[s + 1] += ix->start[s];
    for (size_t k = 0; k < n; k++) { /* edges in order within each slab (stamp: fill counts, zeroed after) */
        const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
        size_t s1 = ix_slab(ix, fmax(a[2], b[2]));
        for (size_t s = ix_slab(ix, fmin(a[2], b[2])); s <= s1; s++) ix->edges[ix->start[s] + ix->stamp[s]++] = (uint32_t)k;
    }
    memset(ix->stamp, 0, n * sizeof *ix->stamp);
    ix->clock = 0;
    ix->plain = 0;
    return 0;
}

/* A new query: a stamp no edge holds. */
static uint32_t ix_tick(psdl_ring_index *ix) {
    if (++ix->clock == 0) {
        memset(ix->stamp, 0, ix->n * sizeof *ix->stamp);
        ix->clock = 1;
    }
    return ix->clock;
}

/* inside_poly(ix->poly, ix->n, p, eps) over the edges of the slabs near p.z: the same edges
 * decide (those within eps of p, and those p's ray crosses, all span z within eps of p.z). */
static int ix_inside(psdl_ring_index *ix, const double *p, double eps) {
    const double *poly = ix->poly;
    size_t n = ix->n;
    int in = 0;
    double g = eps + 1e-6;
    double slack = g + 1e-3; /* far beyond rounding of the slab bounds */
    uint32_t t = ix_tick(ix);
    size_t s1 = ix_slab(ix, p[2] + slack);
    for (size_t s = ix_slab(ix, p[2] - slack); s <= s1; s++)
        for (uint32_t e = ix->start[s]; e < ix->start[s + 1]; e++) {
            size_t k = ix->edges[e];
            if (ix->stamp[k] == t) continue;
            ix->stamp[k] = t;
            const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
            if (!far_from_seg(p, a, b, g) && psdl_seg_dist(p[0], p[2], a[0], a[2], b[0], b[2]) <= eps) return 1;
            if ((a[2] > p[2]) != (b[2] > p[2]) && p[0] < a[0] + (p[2] - a[2]) * (b[0] - a[0]) / (b[2] - a[2])) in = !in;
        }
    return in;
}

size_t psdl_ring_first_outside(psdl_ring_index *ix, const double *pts, size_t m, int closed, double eps) {
    assert(ix && (pts || m == 0));
    if (ix->plain || !(eps >= 0) || eps > 1e6) return psdl_first_outside(ix->poly, ix->n, pts, m, closed, eps);
    const double *poly = ix->poly;
    size_t n = ix->n;
    for (size_t i = 0; i < 3 * m; i++) /* (non-finite points: the plain test) */
        if (!isfinite(pts[i])) return psdl_first_outside(poly, n, pts, m, closed, eps);
    size_t ne = closed ? m : (m ? m - 1 : 0);
    for (size_t i = 0; i < m; i++)
        if (!ix_inside(ix, pts + 3 * i, eps)) return i + 1;
    for (size_t i = 0; i < ne; i++) {
        const double *p = pts + 3 * i, *q = pts + 3 * ((i + 1) % m);
        double mid[3] = {(p[0] + q[0]) / 2, (p[1] + q[1]) / 2, (p[2] + q[2]) / 2};
        if (!ix_inside(ix, mid, eps)) return i + 1;
        double x0 = fmin(p[0], q[0]) - 1e-6, x1 = fmax(p[0], q[0]) + 1e-6;
        double z0 = fmin(p[2], q[2]) - 1e-6, z1 = fmax(p[2], q[2]) + 1e-6;
        uint32_t t = ix_tick(ix);
        size_t s1 = ix_slab(ix, z1 + 1e-3);
        for (size_t s = ix_slab(ix, z0 - 1e-3); s <= s1; s++)
            for (uint32_t e = ix->start[s]; e < ix->start[s + 1]; e++) {
                size_t k = ix->edges[e];
                if (ix->stamp[k] == t) continue;
                ix->stamp[k] = t;
                const double *a = poly + 3 * k, *b = poly + 3 * ((k + 1) % n);
                if (fmax(a[0], b[0]) < x0 || fmin(a[0], b[0]) > x1 || fmax(a[2], b[2]) < z0 || fmin(a[2], b[2]) > z1)
                    continue;
                if (!seg_cross(p, q, a, b, eps)) continue;
                if (!ix->cut[k]) ix->cut[k] = reversed_elsewhere(poly, n, k) ? 1 : 2;
                if (ix->cut[k] == 2) return i + 1;
            }
    }
    return 0;
}
