/* psdl_overlaps.c -- rooms of unrelated parts of a road network that overlap in plan
 * (psdl_overlaps.h). The tests repeat psdl.city.network's former Lua operation for operation
 * (seg_closest, seg_cross, unit, poly_dist, poly_overlap); math.min / math.max as Lua's:
 * min(a, b) = b < a ? b : a, max(a, b) = a < b ? b : a. */
#include "psdl_overlaps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psdl_geom.h"
#include "psdl_segment.h"

static double lmin(double a, double b) { return b < a ? b : a; }
static double lmax(double a, double b) { return a < b ? b : a; }

/* Signed plan distance of (x, z) from the polygon of n points P: negative inside. */
static double poly_dist(double x, double z, const double *P, size_t n) {
    int c = 0;
    double d = HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        const double *a = P + 2 * i, *b = P + 2 * ((i + 1) % n);
        double e = psdl_seg_closest(x, z, a, b, NULL);
        if (e < d) d = e;
        if ((a[1] > z) != (b[1] > z) && x < a[0] + (z - a[1]) * (b[0] - a[0]) / (b[1] - a[1])) c = !c;
    }
    return c ? -d : d;
}

/* A point where polygons P (n points, box pb) and Q (m points, box qb) overlap by more than
 * eps: 1 with it in *x, *z, else 0. */
static int poly_overlap(const double *P, size_t n, const double *pb, const double *Q, size_t m, const double *qb,
                        double eps, double *x, double *z) {
    for (int pass = 0; pass < 2; pass++) {
        const double *A = pass ? Q : P, *B = pass ? P : Q, *bb = pass ? pb : qb;
        size_t na = pass ? m : n, nb = pass ? n : m;
        for (size_t i = 0; i < na; i++) {
            const double *p = A + 2 * i;
            if (p[0] > bb[0] && p[0] < bb[2] && p[1] > bb[1] && p[1] < bb[3] && poly_dist(p[0], p[1], B, nb) < -eps) {
                *x = p[0], *z = p[1];
                return 1;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const double *a = P + 2 * i, *b = P + 2 * ((i + 1) % n);
        if (!(lmax(a[0], b[0]) > qb[0] && lmin(a[0], b[0]) < qb[2] && lmax(a[1], b[1]) > qb[1] &&
              lmin(a[1], b[1]) < qb[3]))
            continue;
        for (size_t k = 0; k < m; k++) {
            const double *u = Q + 2 * k, *v = Q + 2 * ((k + 1) % m);
            double t, e[2], f[2];
            if (!psdl_seg_cross(a, b, u, v, &t, NULL)) continue;
            /* a proper crossing: the ends of each edge clear of the other's line */
            if (!psdl_seg_unit(b[0] - a[0], b[1] - a[1], e) || !psdl_seg_unit(v[0] - u[0], v[1] - u[1], f)) continue;
            double du = (u[0] - a[0]) * e[1] - (u[1] - a[1]) * e[0];
            double dv = (v[0] - a[0]) * e[1] - (v[1] - a[1]) * e[0];
            double da = (a[0] - u[0]) * f[1] - (a[1] - u[1]) * f[0];
            double db = (b[0] - u[0]) * f[1] - (b[1] - u[1]) * f[0];
            /* math.min(abs(du), abs(dv), abs(da), abs(db)) > eps */
            if (lmin(lmin(lmin(fabs(du), fabs(dv)), fabs(da)), fabs(db)) > eps) {
                *x = a[0] + t * (b[0] - a[0]);
                *z = a[1] + t * (b[1] - a[1]);
                return 1;
            }
        }
    }
    return 0;
}

/* Node pairs joined by a road, (lo << 32 | hi), sorted, for bsearch. */
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t pair_key(uint32_t p, uint32_t q) {
    uint32_t lo = p < q ? p : q, hi = p < q ? q : p;
    return (uint64_t)lo << 32 | hi;
}

/* Are owners p and q related (psdl_overlaps.h)? */
static int related(uint32_t p, uint32_t q, const uint32_t *ends, const uint64_t *joined, size_t njoined) {
    if (p == q) return 1;
    uint32_t pa = ends[2 * (size_t)p], pb = ends[2 * (size_t)p + 1];
    uint32_t qa = ends[2 * (size_t)q], qb = ends[2 * (size_t)q + 1];
    int proad = pa != PSDL_OVERLAP_NODE, qroad = qa != PSDL_OVERLAP_NODE;
    if (proad && qroad) return pa == qa || pa == qb || pb == qa || pb == qb;
    if (proad) return pa == q || pb == q;
    if (qroad) return qa == p || qb == p;
    uint64_t k = pair_key(p, q);
    return bsearch(&k, joined, njoined, sizeof *joined, cmp_u64) != NULL;
}

int psdl_room_overlaps(psdl_overlap **out, size_t *nout, const double *xz, const uint32_t *start,
                       const double *box, const uint32_t *owner, size_t npoly, const uint32_t *ends,
                       size_t nowners, double eps, double cell) {
    if (!out || !nout) return PSDL_OVERLAPS_INVALID;
    *out = NULL, *nout = 0;
    if ((npoly && (!xz || !start || !box || !owner)) || (nowners && !ends) || !(eps > 0) || !isfinite(eps) ||
        !(cell > 0) || !isfinite(cell) || npoly >= PSDL_GRID_MAX_ID || nowners >= UINT32_MAX)
        return PSDL_OVERLAPS_INVALID;
    for (size_t i = 0; i < npoly; i++) {
        if (owner[i] >= nowners || start[i + 1] < start[i]) return PSDL_OVERLAPS_INVALID;
        for (int k = 0; k < 4; k++)
            if (!isfinite(box[4 * i + (size_t)k])) return PSDL_OVERLAPS_INVALID;
    }
    size_t nroads = 0;
    for (size_t o = 0; o < nowners; o++) {
        uint32_t a = ends[2 * o], b = ends[2 * o + 1];
        if ((a == PSDL_OVERLAP_NODE) != (b == PSDL_OVERLAP_NODE)) return PSDL_OVERLAPS_INVALID;
        if (a == PSDL_OVERLAP_NODE) continue;
        if (a >= nowners || b >= nowners || ends[2 * (size_t)a] != PSDL_OVERLAP_NODE ||
            ends[2 * (size_t)b] != PSDL_OVERLAP_NODE)
            return PSDL_OVERLAPS_INVALID;
        nroads++;
    }
    int err = PSDL_OVERLAPS_OK;
    uint64_t *joined = (uint64_t *)malloc((nroads ? nroads : 1) * sizeof *joined);
    uint32_t *cand = NULL;
    size_t ccap = 64, nres = 0, rcap = 0;
    psdl_overlap *res = NULL;
    psdl_grid *g = psdl_grid_new(cell);
    cand = (uint32_t *)malloc(ccap * sizeof *cand);
    if (!joined || !g || !cand) {
        err = PSDL_OVERLAPS_NOMEM;
        goto done;
    }
    size_t nj = 0;
    for (size_t o = 0; o < nowners; o++)
        if (ends[2 * o] != PSDL_OVERLAP_NODE) joined[nj++] = pair_key(ends[2 * o], ends[2 * o + 1]);
    qsort(joined, nj, sizeof *joined, cmp_u64);
    for (size_t i = 0; i < npoly; i++) {
        if (start[i + 1] - start[i] < 3) continue;
        const double *b = box + 4 * i;
        int e = psdl_grid_insert(g, (uint32_t)i, b[0], b[1], b[2], b[3]);
        if (e) {
            err = e == -2 ? PSDL_OVERLAPS_NOMEM : PSDL_OVERLAPS_INVALID;
            goto done;
        }
    }
    for (size_t i = 0; i < npoly; i++) {
        size_t n = start[i + 1] - start[i];
        if (n < 3) continue;
        const double *P = xz + 2 * (size_t)start[i], *pb = box + 4 * i;
        size_t nc;
        for (;;) {
            nc = psdl_grid_collect(g, cand, ccap, pb[0], pb[1], pb[2], pb[3]);
            if (nc == PSDL_GEOM_INVALID) {
                err = PSDL_OVERLAPS_INVALID;
                goto done;
            }
            if (nc <= ccap) break;
            uint32_t *c2 = (uint32_t *)realloc(cand, nc * sizeof *cand);
            if (!c2) {
                err = PSDL_OVERLAPS_NOMEM;
                goto done;
            }
            cand = c2, ccap = nc;
        }
        for (size_t c = 0; c < nc; c++) {
            size_t j = cand[c];
            const double *qb = box + 4 * j;
            /* (the boxes first: the cheapest test, and most candidates fail it) */
            if (j == i || !(qb[0] < pb[2] && pb[0] < qb[2] && qb[1] < pb[3] && pb[1] < qb[3])) continue;
            uint32_t k1 = owner[i], k2 = owner[j];
            if (related(k1, k2, ends, joined, nj)) continue;
            int seen = 0; /* the pair of owners reported already (either way round) */
            for (size_t r = 0; r < nres && !seen; r++)
                seen = (res[r].a == k1 && res[r].b == k2) || (res[r].a == k2 && res[r].b == k1);
            if (seen) continue;
            double x, z;
            const double *Q = xz + 2 * (size_t)start[j];
            if (!poly_overlap(P, n, pb, Q, start[j + 1] - start[j], qb, eps, &x, &z)) continue;
            if (nres == rcap) {
                size_t cap = rcap ? 2 * rcap : 8;
                psdl_overlap *r2 = (psdl_overlap *)realloc(res, cap * sizeof *res);
                if (!r2) {
                    err = PSDL_OVERLAPS_NOMEM;
                    goto done;
                }
                res = r2, rcap = cap;
            }
            res[nres].a = k1, res[nres].b = k2, res[nres].x = x, res[nres].z = z;
            nres++;
        }
    }
done:
    free(joined);
    free(cand);
    psdl_grid_free(g);
    if (err) {
        free(res);
        return err;
    }
    *out = res, *nout = nres;
    return PSDL_OVERLAPS_OK;
}
