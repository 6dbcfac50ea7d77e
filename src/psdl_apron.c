/*
 * psdl_apron.c -- the outer edge of a city's ground apron (psdl_apron.h): a distance grid
 * around the network's outlines, its contour at the margin, and straight strips joining the
 * parts that lie further apart than twice the margin. The arithmetic is written in the same
 * order as the Lua description it replaced, so the rings are the same doubles.
 */
#include "psdl_apron.h"
#include "psdl_geom.h"
#include "psdl_segment.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- growable arrays */

typedef struct dbuf {
    double *v;
    size_t n, cap;
} dbuf;

static int dbuf_push2(dbuf *b, double x, double z) {
    if (b->n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        double *v = (double *)realloc(b->v, cap * sizeof *v);
        if (!v) return 0;
        b->v = v, b->cap = cap;
    }
    b->v[b->n++] = x;
    b->v[b->n++] = z;
    return 1;
}

typedef struct zbuf {
    size_t *v;
    size_t n, cap;
} zbuf;

static int zbuf_push(zbuf *b, size_t x) {
    if (b->n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        size_t *v = (size_t *)realloc(b->v, cap * sizeof *v);
        if (!v) return 0;
        b->v = v, b->cap = cap;
    }
    b->v[b->n++] = x;
    return 1;
}

/* ---------------------------------------------------------------- the distance field */

/* Squared distances at the grid corners (corner (i, j) at (gx + i cell, gz + j cell), index
 * j * W + i), -1 where no sample is kept (beyond reach). */
typedef struct field {
    double *d;
    double gx, gz, cell, margin, reach, reach2;
    long ni, nj, W;
} field;

static long lmax(long a, long b) { return a > b ? a : b; }
static long lmin(long a, long b) { return a < b ? a : b; }

/* Lower the field to the distance from segment a-b. */
static void add_segment(field *F, double ax, double az, double bx, double bz) {
    double cell = F->cell, reach = F->reach, gx = F->gx, gz = F->gz;
    long i0 = lmax(0, (long)floor((fmin(ax, bx) - reach - gx) / cell));
    long i1 = lmin(F->ni, (long)ceil((fmax(ax, bx) + reach - gx) / cell));
    long j0 = lmax(0, (long)floor((fmin(az, bz) - reach - gz) / cell));
    long j1 = lmin(F->nj, (long)ceil((fmax(az, bz) + reach - gz) / cell));
    for (long j = j0; j <= j1; j++) {
        double z = gz + (double)j * cell;
        double *row = F->d + j * F->W;
        for (long i = i0; i <= i1; i++) {
            double e = psdl_seg_dist2(gx + (double)i * cell, z, ax, az, bx, bz);
            if (e < F->reach2) {
                double old = row[i];
                if (old < 0 || e < old) row[i] = e;
            }
        }
    }
}

/* a scanline crossing: grid row j at x */
typedef struct xing {
    long j;
    double x;
} xing;

static int xing_cmp(const void *a, const void *b) {
    const xing *p = (const xing *)a, *q = (const xing *)b;
    if (p->j != q->j) return p->j < q->j ? -1 : 1;
    return p->x < q->x ? -1 : p->x > q->x ? 1 : 0;
}

/* Distance 0 at the corners inside outline pts[0 .. n-1] (scanlines along each grid row;
 * half-open crossings, each counted once). xs: scratch, grows. */
static int fill_inside(field *F, const double *pts, size_t n, xing **xs, size_t *xcap) {
    double cell = F->cell, gx = F->gx, gz = F->gz;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const double *a = pts + 2 * k, *b = pts + 2 * ((k + 1) % n);
        double az = a[1], bz = b[1];
        if (az == bz) continue;
        double lo = fmin(az, bz), hi = fmax(az, bz);
        long jlo = lmax(0, (long)ceil((lo - gz) / cell)), jhi = lmin(F->nj, (long)floor((hi - gz) / cell));
        for (long j = jlo; j <= jhi; j++) {
            double z = gz + (double)j * cell;
            if ((az <= z) != (bz <= z)) {
                if (m == *xcap) {
                    size_t cap = *xcap ? *xcap * 2 : 256;
                    xing *v = (xing *)realloc(*xs, cap * sizeof *v);
                    if (!v) return 0;
                    *xs = v, *xcap = cap;
                }
                (*xs)[m].j = j;
                (*xs)[m].x = a[0] + (z - az) * (b[0] - a[0]) / (bz - az);
                m++;
            }
        }
    }
    if (m > 1) qsort(*xs, m, sizeof **xs, xing_cmp);
    for (size_t s = 0; s < m;) {
        size_t e = s;
        while (e < m && (*xs)[e].j == (*xs)[s].j) e++;
        double *row = F->d + (*xs)[s].j * F->W;
        for (size_t k = s; k + 1 < e; k += 2) {
            long i0 = lmax(0, (long)ceil(((*xs)[k].x - gx) / cell));
            long i1 = lmin(F->ni, (long)floor(((*xs)[k + 1].x - gx) / cell));
            for (long i = i0; i <= i1; i++) row[i] = 0;
        }
        s = e;
    }
    return 1;
}

/* ---------------------------------------------------------------- the contour */

typedef struct tracer {
    size_t nkeys;         /* 2 * corners: an edge key per corner and direction */
    double *pt;           /* key -> x, z of the contour point on that edge */
    unsigned char *has;   /* key -> point made */
    int32_t *nxt;         /* key -> next key along the contour, -1 none */
    unsigned char *used;  /* key -> chained */
    dbuf ring;            /* scratch: one loop */
} tracer;

/* distance at a corner (far corners: beyond the margin) */
static double val(const field *F, long i, long j) {
    double e = F->d[j * F->W + i];
    return e < 0 ? F->reach : sqrt(e);
}

/* The key of the contour point on the grid edge from corner (i, j) along x (horizontal) or
 * z, made when new. */
static int32_t edge_point(const field *F, tracer *T, long i, long j, int horizontal) {
    int32_t key = (int32_t)((j * F->W + i) * 2 + (horizontal ? 1 : 0));
    if (T->has[key]) return key;
    long i2 = horizontal ? i + 1 : i, j2 = horizontal ? j : j + 1;
    double va = val(F, i, j), vb = val(F, i2, j2);
    double t = va != vb ? (F->margin - va) / (vb - va) : 0.5;
    if (t < 0) t = 0;
    else if (t > 1) t = 1;
    double xa = F->gx + (double)i * F->cell, za = F->gz + (double)j * F->cell;
    T->pt[2 * key] = xa + t * (double)(i2 - i) * F->cell;
    T->pt[2 * key + 1] = za + t * (double)(j2 - j) * F->cell;
    T->has[key] = 1;
    return key;
}

/* The outer rings of the field's contour at its margin, into out (replaced). */
static int contour(const field *F, tracer *T, dbuf *out_xz, zbuf *out_start) {
    memset(T->has, 0, T->nkeys);
    memset(T->used, 0, T->nkeys);
    for (size_t k = 0; k < T->nkeys; k++) T->nxt[k] = -1;
    out_xz->n = 0;
    out_start->n = 0;
    if (!zbuf_push(out_start, 0)) return 0;
    double m2 = F->margin * F->margin;
    const double *d = F->d;
    for (long j = 0; j < F->nj; j++) {
        long row = j * F->W, up = (j + 1) * F->W;
        for (long i = 0; i < F->ni; i++) {
            double e00 = d[row + i], e10 = d[row + i + 1], e11 = d[up + i + 1], e01 = d[up + i];
            int c00 = e00 >= 0 && e00 < m2, c10 = e10 >= 0 && e10 < m2;
            int c11 = e11 >= 0 && e11 < m2, c01 = e01 >= 0 && e01 < m2;
            if (c00 == c10 && c10 == c11 && c11 == c01) continue;
            /* edges counter-clockwise: bottom, right, top, left: corners a -> b, edge origin */
            const int ca[4] = {c00, c10, c11, c01}, cb[4] = {c10, c11, c01, c00};
            const long ei[4] = {i, i + 1, i, i}, ej[4] = {j, j, j + 1, j};
            const int eh[4] = {1, 0, 1, 0};
            int outs[2], ins[2], no = 0, nin = 0;
            for (int k = 0; k < 4; k++) {
                if (ca[k] && !cb[k]) outs[no++] = k;
                else if (cb[k] && !ca[k]) ins[nin++] = k;
            }
            int pa[2], pb[2], np = 0;
            if (no == 1) {
                pa[0] = outs[0], pb[0] = ins[0], np = 1;
            } else { /* a saddle: joined through the middle when the cell's mean is inside */
                double mean = (val(F, i, j) + val(F, i + 1, j) + val(F, i + 1, j + 1) + val(F, i, j + 1)) / 4;
                int step = mean < F->margin ? 1 : 3; /* next or previous edge round the cell */
                for (int o = 0; o < no; o++) {
                    int k = outs[o];
                    do k = (k + step) % 4;
                    while (!(cb[k] && !ca[k]));
                    pa[np] = outs[o], pb[np] = k, np++;
                }
            }
            for (int p = 0; p < np; p++) {
                int32_t ka = edge_point(F, T, ei[pa[p]], ej[pa[p]], eh[pa[p]]);
                int32_t kb = edge_point(F, T, ei[pb[p]], ej[pb[p]], eh[pb[p]]);
                T->nxt[ka] = kb;
            }
        }
    }
    /* chain the segments into loops; keep the outer ones (counter-clockwise), reversed */
    for (size_t k0 = 0; k0 < T->nkeys; k0++) {
        if (T->nxt[k0] < 0 || T->used[k0]) continue;
        dbuf *ring = &T->ring;
        ring->n = 0;
        int32_t k = (int32_t)k0;
        while (k >= 0 && !T->used[k]) {
            T->used[k] = 1;
            double x = T->pt[2 * k], z = T->pt[2 * k + 1];
            if (ring->n == 0 || ring->v[ring->n - 2] != x || ring->v[ring->n - 1] != z)
                if (!dbuf_push2(ring, x, z)) return 0;
            k = T->nxt[k];
        }
        size_t n = ring->n / 2;
        while (n > 1 && ring->v[0] == ring->v[2 * n - 2] && ring->v[1] == ring->v[2 * n - 1]) n--;
        double s = 0;
        for (size_t a = 0; a < n; a++) {
            const double *p = ring->v + 2 * a, *q = ring->v + 2 * ((a + 1) % n);
            s = s + p[0] * q[1] - q[0] * p[1];
        }
        if (n >= 3 && s > 0) {
            for (size_t a = n; a-- > 0;)
                if (!dbuf_push2(out_xz, ring->v[2 * a], ring->v[2 * a + 1])) return 0;
            if (!zbuf_push(out_start, out_xz->n / 2)) return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- joining the parts */

/* The outline points in buckets of B metres (cell (i, j) holds the points with
 * floor(x / B) = i, floor(z / B) = j, in input order), as compressed rows. */
typedef struct buckets {
    double B;
    long i0, j0, gw, gh;
    size_t *first; /* gw * gh + 1 offsets into pt */
    size_t *pt;    /* point indices */
    long *bi, *bj; /* each point's bucket */
} buckets;

static int buckets_make(buckets *G, const double *xz, size_t npts, double B) {
    memset(G, 0, sizeof *G);
    G->B = B;
    G->bi = (long *)malloc((npts ? npts : 1) * sizeof *G->bi);
    G->bj = (long *)malloc((npts ? npts : 1) * sizeof *G->bj);
    if (!G->bi || !G->bj) return PSDL_APRON_NOMEM;
    long i0 = 0, i1 = -1, j0 = 0, j1 = -1;
    for (size_t p = 0; p < npts; p++) {
        long i = (long)floor(xz[2 * p] / B), j = (long)floor(xz[2 * p + 1] / B);
        G->bi[p] = i, G->bj[p] = j;
        if (p == 0 || i < i0) i0 = i;
        if (p == 0 || i > i1) i1 = i;
        if (p == 0 || j < j0) j0 = j;
        if (p == 0 || j > j1) j1 = j;
    }
    G->i0 = i0, G->j0 = j0, G->gw = i1 - i0 + 1, G->gh = j1 - j0 + 1;
    if (G->gw > 0 && (size_t)G->gw > PSDL_APRON_MAX_CELLS / (size_t)G->gh) return PSDL_APRON_TOO_BIG;
    size_t nc = (size_t)(G->gw * G->gh);
    G->first = (size_t *)calloc(nc + 1, sizeof *G->first);
    G->pt = (size_t *)malloc((npts ? npts : 1) * sizeof *G->pt);
    if (!G->first || !G->pt) return PSDL_APRON_NOMEM;
    for (size_t p = 0; p < npts; p++) G->first[(size_t)((G->bj[p] - j0) * G->gw + (G->bi[p] - i0)) + 1]++;
    for (size_t c = 0; c < nc; c++) G->first[c + 1] += G->first[c];
    size_t *fill = (size_t *)malloc((nc ? nc : 1) * sizeof *fill);
    if (!fill) return PSDL_APRON_NOMEM;
    memcpy(fill, G->first, nc * sizeof *fill);
    for (size_t p = 0; p < npts; p++) G->pt[fill[(size_t)((G->bj[p] - j0) * G->gw + (G->bi[p] - i0))]++] = p;
    free(fill);
    return PSDL_APRON_OK;
}

static void buckets_free(buckets *G) {
    free(G->first);
    free(G->pt);
    free(G->bi);
    free(G->bj);
}

/* The search state of one ring's nearest pair. */
typedef struct nearest {
    const double *xz;
    const int *group_of; /* point -> ring of its outline, -1 none */
    int g;
    double best;
    size_t bp, bq;
    int found;
} nearest;

static void visit(const buckets *G, nearest *N, size_t p, long i, long j) {
    if (i < G->i0 || j < G->j0 || i >= G->i0 + G->gw || j >= G->j0 + G->gh) return;
    size_t c = (size_t)((j - G->j0) * G->gw + (i - G->i0));
    const double *P = N->xz + 2 * p;
    for (size_t e = G->first[c]; e < G->first[c + 1]; e++) {
        size_t q = G->pt[e];
        int h = N->group_of[q];
        if (h >= 0 && h != N->g) {
            const double *Q = N->xz + 2 * q;
            double dx = Q[0] - P[0], dz = Q[1] - P[1];
            double dd = dx * dx + dz * dz;
            if (dd < N->best) N->best = dd, N->bp = p, N->bq = q, N->found = 1;
        }
    }
}

/* The nearest point of another ring to point p (buckets searched in growing squares up to
 * `span` rings of cells; a square at least (r - 1) B away cannot do better). */
static void search(const buckets *G, nearest *N, size_t p, long span) {
    long bx = G->bi[p], bz = G->bj[p];
    for (long r = 0; r <= span; r++) {
        if (r > 1 && pow((double)(r - 1) * G->B, 2) >= N->best) break;
        for (long i = bx - r; i <= bx + r; i++) {
            if (i < G->i0 || i >= G->i0 + G->gw) continue;
            if (i == bx - r || i == bx + r) {
                for (long j = bz - r; j <= bz + r; j++) visit(G, N, p, i, j);
            } else {
                visit(G, N, p, i, bz - r);
                visit(G, N, p, i, bz + r);
            }
        }
        if (bx - r <= G->i0 && bx + r >= G->i0 + G->gw - 1 && bz - r <= G->j0 && bz + r >= G->j0 + G->gh - 1)
            break; /* every bucket seen */
    }
}

/* ---------------------------------------------------------------- the rings */

int psdl_apron_rings(psdl_apron *out, const double *xz, const size_t *start, size_t nout, double margin,
                     double cell, size_t *cells) {
    if (cells) *cells = 0;
    if (!(margin > 0) || !(cell > 0) || !isfinite(margin) || !isfinite(cell)) return PSDL_APRON_INVALID;
    size_t npts = start[nout];
    double x0 = HUGE_VAL, z0 = HUGE_VAL, x1 = -HUGE_VAL, z1 = -HUGE_VAL;
    for (size_t p = 0; p < npts; p++) {
        double x = xz[2 * p], z = xz[2 * p + 1];
        if (!isfinite(x) || !isfinite(z)) return PSDL_APRON_INVALID;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (z < z0) z0 = z;
        if (z > z1) z1 = z;
    }
    if (x0 > x1) {
        memset(out, 0, sizeof *out);
        out->start = (size_t *)calloc(1, sizeof *out->start);
        return out->start ? PSDL_APRON_OK : PSDL_APRON_NOMEM;
    }
    field F;
    memset(&F, 0, sizeof F);
    double pad = margin + 2 * cell;
    double wi = ceil((x1 - x0 + 2 * pad) / cell), wj = ceil((z1 - z0 + 2 * pad) / cell);
    double ncorner = (wi + 1) * (wj + 1);
    if (cells) *cells = ncorner < (double)SIZE_MAX ? (size_t)ncorner : SIZE_MAX;
    if (!(ncorner <= (double)PSDL_APRON_MAX_CELLS)) return PSDL_APRON_TOO_BIG;
    F.ni = (long)wi, F.nj = (long)wj, F.W = F.ni + 1;
    F.gx = x0 - pad, F.gz = z0 - pad, F.cell = cell, F.margin = margin;
    F.reach = margin + 1.5 * cell;
    F.reach2 = F.reach * F.reach;
    size_t ncorners = (size_t)F.W * (size_t)(F.nj + 1);

    int rc = PSDL_APRON_NOMEM;
    tracer T;
    memset(&T, 0, sizeof T);
    buckets G;
    memset(&G, 0, sizeof G);
    dbuf rxz = {0};
    zbuf rst = {0};
    xing *xs = NULL;
    size_t xcap = 0;
    int *group = NULL, *group_of = NULL;
    size_t *count = NULL;

    F.d = (double *)malloc(ncorners * sizeof *F.d);
    T.nkeys = 2 * ncorners;
    T.pt = (double *)malloc(2 * T.nkeys * sizeof *T.pt);
    T.has = (unsigned char *)malloc(T.nkeys);
    T.used = (unsigned char *)malloc(T.nkeys);
    T.nxt = (int32_t *)malloc(T.nkeys * sizeof *T.nxt);
    if (!F.d || !T.pt || !T.has || !T.used || !T.nxt) goto done;
    for (size_t k = 0; k < ncorners; k++) F.d[k] = -1;

    for (size_t o = 0; o < nout; o++) {
        size_t n = start[o + 1] - start[o];
        const double *H = xz + 2 * start[o];
        for (size_t k = 0; k < n; k++) {
            const double *a = H + 2 * k, *b = H + 2 * ((k + 1) % n);
            add_segment(&F, a[0], a[1], b[0], b[1]);
        }
    }
    for (size_t o = 0; o < nout; o++)
        if (start[o + 1] > start[o] && !fill_inside(&F, xz + 2 * start[o], start[o + 1] - start[o], &xs, &xcap))
            goto done;
    if (!contour(&F, &T, &rxz, &rst)) goto done;

    double B = 2 * margin;
    rc = buckets_make(&G, xz, npts, B);
    if (rc != PSDL_APRON_OK) goto done;
    rc = PSDL_APRON_NOMEM;
    long span = (long)ceil((double)(F.ni > F.nj ? F.ni : F.nj) * cell / B) + 1;
    group = (int *)malloc((nout ? nout : 1) * sizeof *group);
    group_of = (int *)malloc((npts ? npts : 1) * sizeof *group_of);
    if (!group || !group_of) goto done;
    for (size_t round = 0; round < nout; round++) {
        size_t nr = rst.n - 1;
        if (nr <= 1) break;
        /* the ring of each outline (by its first point), and the points of each ring */
        free(count);
        count = (size_t *)calloc(nr, sizeof *count);
        if (!count) goto done;
        for (size_t o = 0; o < nout; o++) {
            group[o] = -1;
            if (start[o + 1] == start[o]) continue; /* (an empty outline has no first point) */
            const double *p = xz + 2 * start[o];
            for (size_t g = 0; g < nr; g++) {
                if (psdl_ring_inside(rxz.v + 2 * rst.v[g], rst.v[g + 1] - rst.v[g], 2, p[0], p[1])) {
                    group[o] = (int)g;
                    count[g] += start[o + 1] - start[o];
                    break;
                }
            }
            for (size_t p2 = start[o]; p2 < start[o + 1]; p2++) group_of[p2] = group[o];
        }
        size_t largest = 0;
        for (size_t g = 1; g < nr; g++)
            if (count[g] > count[largest]) largest = g;
        /* each ring's outline point nearest to a point of another ring, joined to it; the
         * largest ring waits for the others to join it */
        size_t added = 0;
        for (size_t g = 0; g < nr; g++) {
            if (g == largest) continue;
            nearest N = {xz, group_of, (int)g, HUGE_VAL, 0, 0, 0};
            for (size_t o = 0; o < nout; o++) {
                if (group[o] != (int)g) continue;
                for (size_t p = start[o]; p < start[o + 1]; p++) search(&G, &N, p, span);
            }
            if (N.found) {
                add_segment(&F, xz[2 * N.bp], xz[2 * N.bp + 1], xz[2 * N.bq], xz[2 * N.bq + 1]);
                added++;
            }
        }
        if (added == 0) break;
        if (!contour(&F, &T, &rxz, &rst)) goto done;
    }
    out->xz = rxz.v;
    out->start = rst.v;
    out->count = rst.n - 1;
    rxz.v = NULL, rst.v = NULL;
    rc = PSDL_APRON_OK;
done:
    free(F.d);
    free(T.pt);
    free(T.has);
    free(T.used);
    free(T.nxt);
    free(T.ring.v);
    free(rxz.v);
    free(rst.v);
    free(xs);
    free(group);
    free(group_of);
    free(count);
    buckets_free(&G);
    return rc;
}

void psdl_apron_free(psdl_apron *a) {
    free(a->xz);
    free(a->start);
    memset(a, 0, sizeof *a);
}

/* ================================================================ the edge's points */

int psdl_apron_edge(double **out, size_t **ostart, const psdl_apron *a, double step, const double *hp, size_t nh,
                    double hcell, long long span) {
    assert(out && ostart && a && (hp || nh == 0));
    *out = NULL, *ostart = NULL;
    if (!(step > 0) || !isfinite(step) || !(hcell > 0) || !isfinite(hcell) || nh > PSDL_GRID_MAX_ID)
        return PSDL_APRON_INVALID;
    for (size_t i = 0; i < 3 * nh; i++)
        if (!isfinite(hp[i])) return PSDL_APRON_INVALID;
    /* the points each ring makes, first (an edge's count is at most its length / step + 1) */
    size_t total = 0;
    for (size_t r = 0; r < a->count; r++) {
        size_t s = a->start[r], n = a->start[r + 1] - s;
        for (size_t k = 0; k < n; k++) {
            const double *p = a->xz + 2 * (s + k), *q = a->xz + 2 * (s + (k + 1) % n);
            double len = sqrt(pow(q[0] - p[0], 2) + pow(q[1] - p[1], 2));
            double m = fmax(1, ceil(len / step - 1e-9));
            if (!(m < 1e9) || total > ((size_t)1 << 40)) return PSDL_APRON_INVALID;
            total += (size_t)m;
        }
    }
    size_t *st = (size_t *)malloc((a->count + 1) * sizeof *st);
    double *xyz = (double *)malloc((total ? 3 * total : 1) * sizeof *xyz);
    psdl_grid *g = psdl_grid_new(hcell);
    if (!st || !xyz || !g) goto nomem;
    for (size_t i = 0; i < nh; i++)
        if (psdl_grid_insert_point(g, (uint32_t)i + 1, hp[3 * i], hp[3 * i + 2]) != 0) goto nomem;
    size_t w = 0;
    for (size_t r = 0; r < a->count; r++) {
        st[r] = w;
        size_t s = a->start[r], n = a->start[r + 1] - s;
        for (size_t k = 0; k < n; k++) {
            const double *p = a->xz + 2 * (s + k), *q = a->xz + 2 * (s + (k + 1) % n);
            double len = sqrt(pow(q[0] - p[0], 2) + pow(q[1] - p[1], 2));
            double m = fmax(1, ceil(len / step - 1e-9));
            for (double i = 0; i < m; i++) {
                double t = i / m;
                double x = p[0] + (q[0] - p[0]) * t, z = p[1] + (q[1] - p[1]) * t;
                uint32_t id = 0;
                double d2;
                double y = psdl_grid_nearest(g, x, z, span, &id, &d2) == 1 && id >= 1 && id <= nh ? hp[3 * (id - 1) + 1]
                                                                                                  : 0;
                xyz[3 * w] = x, xyz[3 * w + 1] = y, xyz[3 * w + 2] = z;
                w++;
            }
        }
    }
    st[a->count] = w;
    psdl_grid_free(g);
    *out = xyz, *ostart = st;
    return PSDL_APRON_OK;
nomem:
    free(st), free(xyz);
    psdl_grid_free(g);
    return PSDL_APRON_NOMEM;
}
