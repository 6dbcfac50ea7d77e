/*
 * psdl_geom_rows.c -- building rows along a block room's street edges (city-layout.md §5):
 * frontage chains, footprint candidates square to the street, the fit test against the room
 * and the buildings already placed, corner buildings and rows with gaps. C99, no Lua.
 *
 * The layout draws its random numbers through a callback and hands every footprint that fits
 * to another, so the caller keeps the description (widths, depths, gaps, the generator) and
 * makes the building (src/psdl_row_buildings.c, through src/lpsdl_rows.c). The arithmetic follows the Lua layout it replaces operation for
 * operation (same order, same comparisons), so that a city's bytes stay the same.
 *
 * Memory: everything a layout needs lives in the psdl_row_room (its scratch is sized at init
 * and grown when a given footprint is larger), so a callback that never returns (a Lua error
 * unwinding with longjmp) leaks nothing; psdl_row_room_free releases it.
 */
#include "psdl_geom.h"
#include "psdl_segment.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Lua's math.max / math.min for two numbers: the second wins only when strictly larger /
 * smaller (so ties and NaN keep the first). */
static double lmax(double a, double b) { return b > a ? b : a; }
static double lmin(double a, double b) { return b < a ? b : a; }

static double dist_xz(const double *a, const double *b) {
    double dx = b[0] - a[0], dz = b[2] - a[2];
    return sqrt(dx * dx + dz * dz);
}

#define TOUCH 1e-3 /* psdl.plan's TOUCH (m): segments this near meet */

/* (psdl_geom.h) */
int psdl_rings_overlap(const double *a, size_t na, const double *ab, const double *b, size_t nb, const double *bb) {
    assert(a && b && ab && bb && na > 0 && nb > 0);
    if (ab[1] < bb[0] || bb[1] < ab[0] || ab[3] < bb[2] || bb[3] < ab[2]) return 0;
    for (size_t i = 0; i < na; i++) {
        const double *p = a + 3 * i, *q = a + 3 * ((i + 1) % na);
        for (size_t j = 0; j < nb; j++) {
            const double *r = b + 3 * j, *s = b + 3 * ((j + 1) % nb);
            if (psdl_segs_meet(p[0], p[2], q[0], q[2], r[0], r[2], s[0], s[2], TOUCH)) return 1;
        }
    }
    return psdl_ring_inside(b, nb, 3, a[0], a[2]) || psdl_ring_inside(a, na, 3, b[0], b[2]);
}

void psdl_ring_box(double bb[4], const double *pts, size_t n) {
    bb[0] = HUGE_VAL, bb[1] = -HUGE_VAL, bb[2] = HUGE_VAL, bb[3] = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        const double *p = pts + 3 * i;
        if (p[0] < bb[0]) bb[0] = p[0];
        if (p[0] > bb[1]) bb[1] = p[0];
        if (p[2] < bb[2]) bb[2] = p[2];
        if (p[2] > bb[3]) bb[3] = p[2];
    }
}

/* Twice the signed plan area (S < 0: retail), summed from the closing edge on. */
static double area2(const double *pts, size_t n) {
    double s = 0;
    const double *p = pts + 3 * (n - 1);
    for (size_t i = 0; i < n; i++) {
        const double *q = pts + 3 * i;
        s = s + p[0] * q[2] - q[0] * p[2];
        p = q;
    }
    return s;
}

/* Inset of a retail ring by d (mitred, the mitre factor clamped at 1 / 0.3), into out. */
static void inset(double *out, const double *pts, size_t n, double d) {
    for (size_t i = 0; i < n; i++) {
        const double *p = pts + 3 * i, *a = pts + 3 * ((i + n - 1) % n), *c = pts + 3 * ((i + 1) % n);
        double ax = p[0] - a[0], az = p[2] - a[2];
        double cx = c[0] - p[0], cz = c[2] - p[2];
        double la = sqrt(ax * ax + az * az), lc = sqrt(cx * cx + cz * cz);
        if (la > 0) ax = ax / la, az = az / la;
        if (lc > 0) cx = cx / lc, cz = cz / lc;
        double nx = az + cz, nz = -ax - cx;
        double nl = sqrt(nx * nx + nz * nz);
        if (nl < 1e-9) nx = cz, nz = -cx;
        else nx = nx / nl, nz = nz / nl;
        double k = nx * cz - nz * cx;
        if (k < 0.3) k = 0.3;
        out[3 * i] = p[0] + nx * d / k;
        out[3 * i + 1] = p[1];
        out[3 * i + 2] = p[2] + nz * d / k;
    }
}

/* Makes room for need doubles in *buf (capacity *cap, in doubles). 0 or -1. */
static int grow(double **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    double *p = (double *)realloc(*buf, c * sizeof *p);
    if (!p) return -1;
    *buf = p;
    *cap = c;
    return 0;
}

int psdl_row_room_init(psdl_row_room *r, const double *poly, size_t n) {
    assert(r && (poly || n == 0));
    memset(r, 0, sizeof *r);
    if (grow(&r->poly, &r->poly_cap, 3 * (n ? n : 1))) return -1;
    if (n) memcpy(r->poly, poly, 3 * n * sizeof *poly);
    r->n = n;
    return 0;
}

/* The layout's scratch for room r's outline, made when a layout starts (psdl_row_room_trim
 * gives it back after): a chain has at most n + 2 points; a candidate footprint twice that
 * and four more. 0 or -1. */
static int scratch_grow(psdl_row_room *r) {
    size_t chain = r->n + 2;
    return grow(&r->chain, &r->chain_cap, 3 * chain) || grow(&r->q, &r->q_cap, 3 * chain) ||
                   grow(&r->seg, &r->seg_cap, 4 * chain) || grow(&r->mit, &r->mit_cap, 2 * chain) ||
                   grow(&r->forbid, &r->forbid_cap, 3 * chain) || grow(&r->cand, &r->cand_cap, 3 * (2 * chain + 4)) ||
                   grow(&r->fp, &r->fp_cap, 3 * (2 * chain + 4)) || grow(&r->work, &r->work_cap, 3 * (2 * chain + 4)) ||
                   grow(&r->runs, &r->runs_cap, 2 * chain + 2)
               ? -1
               : 0;
}

void psdl_row_room_trim(psdl_row_room *r) {
    if (!r) return;
    free(r->chain), free(r->q), free(r->seg), free(r->mit), free(r->forbid);
    free(r->cand), free(r->fp), free(r->work), free(r->work2), free(r->runs);
    r->chain = r->q = r->seg = r->mit = r->forbid = r->cand = r->fp = r->work = r->work2 = r->runs = NULL;
    r->chain_cap = r->q_cap = r->seg_cap = r->mit_cap = r->forbid_cap = 0;
    r->cand_cap = r->fp_cap = r->work_cap = r->work2_cap = r->runs_cap = 0;
}

void psdl_row_room_free(psdl_row_room *r) {
    if (!r) return;
    free(r->poly), free(r->chain), free(r->q), free(r->seg), free(r->mit), free(r->forbid);
    free(r->cand), free(r->fp), free(r->work), free(r->work2), free(r->runs), free(r->placed), free(r->placed_box);
    free(r->placed_at);
    psdl_ring_index_free(&r->ix);
    memset(r, 0, sizeof *r);
}

size_t psdl_row_fits(psdl_row_room *r, const double *fp, size_t n) {
    assert(r && (fp || n == 0));
    if (n < 3) return 0;
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(fp[i])) return 0;
    size_t s = psdl_ring_simple(fp, n, TOUCH);
    if (s != 1) return s; /* 0 or PSDL_GEOM_NOMEM */
    if (area2(fp, n) >= 0) return 0;
    /* the builder's own test (Builder:building): the footprint on the ground plane inside the
     * room, 0.01 m of tolerance */
    if (grow(&r->work, &r->work_cap, 3 * n)) return PSDL_GEOM_NOMEM;
    for (size_t i = 0; i < n; i++) {
        r->work[3 * i] = fp[3 * i];
        r->work[3 * i + 1] = 0;
        r->work[3 * i + 2] = fp[3 * i + 2];
    }
    if (!r->ix_made) { /* the outline's edges by z, once per room (psdl_ring_first_outside) */
        if (psdl_ring_index_init(&r->ix, r->poly, r->n)) return PSDL_GEOM_NOMEM;
        r->ix_made = 1;
    }
    size_t out = psdl_ring_first_outside(&r->ix, r->work, n, 1, 0.01);
    if (out == PSDL_GEOM_NOMEM) return out;
    if (out) return 0;
    /* clear of the buildings placed: their footprints inset by 0.05 m may not meet */
    size_t base = r->nplaced ? r->placed_at[r->nplaced] : 0;
    if (grow(&r->placed, &r->placed_cap, base + 3 * n)) return PSDL_GEOM_NOMEM;
    double *t = r->placed + base;
    inset(t, fp, n, 0.05);
    double bb[4];
    psdl_ring_box(bb, t, n);
    for (size_t k = 0; k < r->nplaced; k++) {
        size_t a = r->placed_at[k], m = (r->placed_at[k + 1] - a) / 3;
        if (psdl_rings_overlap(t, n, bb, r->placed + a, m, r->placed_box + 4 * k)) return 0;
    }
    /* record it: placed_at holds nplaced + 1 offsets (doubles) into placed */
    if (r->nplaced + 2 > r->placed_n_cap) {
        size_t c = r->placed_n_cap ? 2 * r->placed_n_cap : 16;
        size_t *at = (size_t *)realloc(r->placed_at, c * sizeof *at);
        if (!at) return PSDL_GEOM_NOMEM;
        r->placed_at = at;
        double *bx = (double *)realloc(r->placed_box, 4 * c * sizeof *bx);
        if (!bx) return PSDL_GEOM_NOMEM;
        r->placed_box = bx;
        r->placed_n_cap = c;
    }
    if (r->nplaced == 0) r->placed_at[0] = 0;
    memcpy(r->placed_box + 4 * r->nplaced, bb, sizeof bb);
    r->nplaced++;
    r->placed_at[r->nplaced] = base + 3 * n;
    return 1;
}

/* ================================================================ one frontage chain */

/* The state of one chain's layout: the simplified chain Q (m points), its segments
 * (tx, tz, len, s0 per segment), mitre vectors (x, z per point), the stretches around
 * corners where no regular building may end (lo, hi, point per stretch). */
typedef struct chain_layout {
    psdl_row_room *r;
    const psdl_row_opts *o;
    psdl_row_rng rng;
    psdl_row_place place;
    void *ud;
    const double *q, *seg, *mit;
    size_t m;
    double L, sb, minw;
    const double *forbid;
    size_t nforbid;
    size_t placed;
} chain_layout;

#define SEG_TX(c, k) ((c)->seg[4 * (k)])
#define SEG_TZ(c, k) ((c)->seg[4 * (k) + 1])
#define SEG_LEN(c, k) ((c)->seg[4 * (k) + 2])
#define SEG_S0(c, k) ((c)->seg[4 * (k) + 3])
#define MIT_X(c, k) ((c)->mit[2 * (k)])
#define MIT_Z(c, k) ((c)->mit[2 * (k) + 1])

static double rint_draw(chain_layout *c, double lo, double hi) {
    if (hi <= lo) return lo;
    return lo + floor(c->rng(c->ud) * (hi - lo + 1));
}

static double runi(chain_layout *c, double lo, double hi) {
    if (hi <= lo) return lo;
    return lo + c->rng(c->ud) * (hi - lo);
}

/* Around chain point k (an interior point), the stretch [S_k - before, S_k + after] where a
 * wall square to the street at depth o would not meet the offset lines cleanly. */
static void reach(const chain_layout *c, size_t k, double o, double *before_out, double *after_out) {
    double in = MIT_X(c, k) * SEG_TX(c, k - 1) + MIT_Z(c, k) * SEG_TZ(c, k - 1);
    double out = MIT_X(c, k) * SEG_TX(c, k) + MIT_Z(c, k) * SEG_TZ(c, k);
    double before = lmax(lmax(0, -o * in), 0);
    double after = lmax(0, o * out);
    before = lmax(before, -c->sb * in);
    after = lmax(after, c->sb * out);
    *before_out = before + 0.3;
    *after_out = after + 0.3;
}

static int allowed(const chain_layout *c, double s) {
    if (s < -1e-9 || s > c->L + 1e-9) return 0;
    for (size_t i = 0; i < c->nforbid; i++)
        if (s > c->forbid[3 * i] && s < c->forbid[3 * i + 1]) return 0;
    return 1;
}

/* s moved back out of every forbidden stretch; 0 when it falls below lo. */
static int snap_back(const chain_layout *c, double *s, double lo) {
    for (size_t it = 0; it < c->nforbid + 1; it++) {
        int moved = 0;
        for (size_t i = 0; i < c->nforbid; i++)
            if (*s > c->forbid[3 * i] && *s < c->forbid[3 * i + 1]) *s = c->forbid[3 * i], moved = 1;
        if (!moved) break;
    }
    return !(*s < lo);
}

static int snap_fwd(const chain_layout *c, double *s, double hi) {
    for (size_t it = 0; it < c->nforbid + 1; it++) {
        int moved = 0;
        for (size_t i = 0; i < c->nforbid; i++)
            if (*s > c->forbid[3 * i] && *s < c->forbid[3 * i + 1]) *s = c->forbid[3 * i + 1], moved = 1;
        if (!moved) break;
    }
    return !(*s > hi);
}

/* The point of a wall square to the street at station s, o metres in (y 0); near a bend,
 * where that line would leave the offset segment, the bend's mitre point instead, so walls
 * at increasing stations never cross. */
static void foot(const chain_layout *c, double s, double o, double *p) {
    size_t lo = 0, hi = c->m - 2;
    while (lo < hi) { /* the first segment ending at or after s */
        size_t mid = (lo + hi) / 2;
        if (s <= SEG_S0(c, mid) + SEG_LEN(c, mid) + 1e-9) hi = mid;
        else lo = mid + 1;
    }
    size_t k = lo;
    double u = s - SEG_S0(c, k);
    double tx = SEG_TX(c, k), tz = SEG_TZ(c, k);
    double a = o * (MIT_X(c, k) * tx + MIT_Z(c, k) * tz);
    double b = SEG_LEN(c, k) + o * (MIT_X(c, k + 1) * tx + MIT_Z(c, k + 1) * tz);
    const double *q = c->q + 3 * k;
    p[1] = 0;
    if (u < a) {
        p[0] = q[0] + MIT_X(c, k) * o, p[2] = q[2] + MIT_Z(c, k) * o;
    } else if (u > b) {
        p[0] = q[3] + MIT_X(c, k + 1) * o, p[2] = q[5] + MIT_Z(c, k + 1) * o;
    } else {
        p[0] = q[0] + tx * u + tz * o, p[2] = q[2] + tz * u - tx * o;
    }
}

/* The footprint between stations s0 and s1, depth D behind the setback line, into c->r->fp:
 * front line forward, back line backward, points closer than 0.05 m dropped. */
static size_t footprint(chain_layout *c, double s0, double s1, double D) {
    psdl_row_room *r = c->r;
    double *front = r->cand, *back = r->work;
    size_t nf = 0, nb = 0;
    double sb = c->sb, sd = c->sb + D;
    foot(c, s0, sb, front + 3 * nf++);
    foot(c, s0, sd, back + 3 * nb++);
    for (size_t k = 1; k + 1 < c->m; k++) {
        double sk = SEG_S0(c, k);
        if (sk > s0 + 1e-6 && sk < s1 - 1e-6) {
            const double *q = c->q + 3 * k;
            double *f = front + 3 * nf++, *b = back + 3 * nb++;
            f[0] = q[0] + MIT_X(c, k) * sb, f[1] = 0, f[2] = q[2] + MIT_Z(c, k) * sb;
            b[0] = q[0] + MIT_X(c, k) * sd, b[1] = 0, b[2] = q[2] + MIT_Z(c, k) * sd;
        }
    }
    foot(c, s1, sb, front + 3 * nf++);
    foot(c, s1, sd, back + 3 * nb++);
    for (size_t i = nb; i-- > 0;) memcpy(front + 3 * nf++, back + 3 * i, 3 * sizeof *front);
    double *out = r->fp;
    size_t n = 0;
    for (size_t i = 0; i < nf; i++) {
        const double *p = front + 3 * i;
        if (n == 0 || dist_xz(p, out + 3 * (n - 1)) > 0.05) memcpy(out + 3 * n++, p, 3 * sizeof *out);
    }
    while (n > 1 && dist_xz(out, out + 3 * (n - 1)) <= 0.05) n--;
    return n;
}

/* Places a building between stations s0 and s1 at depth D (its ends pulled in, its depth
 * reduced when it does not fit). 1 placed, 0 not, -1 out of memory, -2 the place callback
 * stopped the layout. */
static int place(chain_layout *c, double s0, double s1, double D) {
    static const double trims[8][2] = {{0, 0}, {2, 0}, {0, 2}, {4, 0}, {0, 4}, {4, 4}, {7, 0}, {0, 7}};
    static const double depths[3] = {1, 0.65, 0.4};
    if (s1 - s0 < c->minw) return 0;
    for (size_t t = 0; t < 8; t++) {
        double a = s0 + trims[t][0], e = s1 - trims[t][1];
        if (e - a < c->minw) break;
        if ((trims[t][0] == 0 || allowed(c, a)) && (trims[t][1] == 0 || allowed(c, e))) {
            for (size_t f = 0; f < 3; f++) {
                double d = D * depths[f];
                if (d >= 3) {
                    size_t n = footprint(c, a, e, d);
                    size_t fit = psdl_row_fits(c->r, c->r->fp, n);
                    if (fit == PSDL_GEOM_NOMEM) return -1;
                    if (fit == 1) {
                        c->placed++;
                        if (c->place(c->ud, c->r->fp, n)) return -2;
                        return 1;
                    }
                }
            }
        }
    }
    return 0;
}

/* Drops chain points on the line of their neighbours (within 0.03 m), then points within
 * 0.05 m of the last kept; ch (n points) into c->r->q. Returns the count. */
static size_t simplify(psdl_row_room *r, const double *ch, size_t n) {
    double *out = r->q;
    size_t m = 0;
    memcpy(out, ch, 3 * sizeof *out), m = 1;
    for (size_t k = 1; k + 1 < n; k++) {
        const double *a = out + 3 * (m - 1), *p = ch + 3 * k, *e = ch + 3 * (k + 1);
        if (psdl_seg_dist(p[0], p[2], a[0], a[2], e[0], e[2]) > 0.03) memcpy(out + 3 * m++, p, 3 * sizeof *out);
    }
    memcpy(out + 3 * m++, ch + 3 * (n - 1), 3 * sizeof *out);
    size_t j = 1;
    for (size_t k = 1; k < m; k++)
        if (dist_xz(out + 3 * k, out + 3 * (j - 1)) > 0.05) memmove(out + 3 * j++, out + 3 * k, 3 * sizeof *out);
    return j;
}

/* Lays buildings out along the chain ch (n points). 0, -1 out of memory, or -2 the place
 * callback stopped it. */
static int layout(chain_layout *c, const double *ch, size_t n) {
    psdl_row_room *r = c->r;
    const psdl_row_opts *o = c->o;
    size_t m = simplify(r, ch, n);
    if (m < 2) return 0;
    double *seg = r->seg, *mit = r->mit, *q = r->q;
    double S = 0;
    for (size_t k = 0; k + 1 < m; k++) {
        double dx = q[3 * k + 3] - q[3 * k], dz = q[3 * k + 5] - q[3 * k + 2];
        double l = sqrt(dx * dx + dz * dz);
        seg[4 * k] = dx / l, seg[4 * k + 1] = dz / l, seg[4 * k + 2] = l, seg[4 * k + 3] = S;
        S = S + l;
    }
    for (size_t k = 0; k < m; k++) {
        const double *a = seg + 4 * (k > 0 ? k - 1 : k), *e = seg + 4 * (k + 1 < m ? k : k - 1);
        double nax = a[1], naz = -a[0], ncx = e[1], ncz = -e[0];
        double sx = nax + ncx, sz = naz + ncz;
        double sl = sqrt(sx * sx + sz * sz);
        if (sl < 1e-9) {
            mit[2 * k] = ncx, mit[2 * k + 1] = ncz;
        } else {
            sx = sx / sl, sz = sz / sl;
            double d = sx * ncx + sz * ncz;
            if (d < 0.3) d = 0.3;
            mit[2 * k] = sx / d, mit[2 * k + 1] = sz / d;
        }
    }
    c->q = q, c->seg = seg, c->mit = mit, c->m = m, c->L = S;
    c->sb = o->setback;
    double dmin = o->depth_min, dmax = o->depth_max, wmin = o->width_min, wmax = o->width_max;
    double gmin = o->gap_min, gmax = o->gap_max, bay = o->bay_width;
    c->minw = lmax(4, bay);
    double minw = c->minw, L = S, sb = c->sb;
    /* sharp bends (over 25 degrees) get a corner building; regular buildings never end near one */
    double *forbid = r->forbid;
    size_t nforbid = 0;
    for (size_t k = 1; k + 1 < m; k++) {
        const double *a = seg + 4 * (k - 1), *e = seg + 4 * k;
        double turn = fabs(atan2(a[0] * e[1] - a[1] * e[0], a[0] * e[0] + a[1] * e[1]));
        if (turn > 25 * M_PI / 180) {
            double bf, af;
            reach(c, k, sb + dmax, &bf, &af);
            forbid[3 * nforbid] = seg[4 * k + 3] - bf;
            forbid[3 * nforbid + 1] = seg[4 * k + 3] + af;
            forbid[3 * nforbid + 2] = (double)k;
            nforbid++;
        }
    }
    c->forbid = forbid, c->nforbid = nforbid;
    double endm = lmax(0.5, gmin / 2);
    /* 1. corner buildings wrapping each bend; taken stretches into runs (pairs) */
    double *taken = r->runs;
    size_t ntaken = 0;
    double lo_limit = endm;
    for (size_t ci = 0; ci < nforbid; ci++) {
        size_t k = (size_t)forbid[3 * ci + 2];
        double D = runi(c, dmin, dmax);
        double bf, af;
        reach(c, k, sb + D, &bf, &af);
        double f0 = seg[4 * k + 3] - bf, f1 = seg[4 * k + 3] + af;
        double hi_limit = L - endm;
        if (ci + 1 < nforbid) {
            size_t nxt = (size_t)forbid[3 * (ci + 1) + 2];
            double nbf, naf;
            reach(c, nxt, sb + dmax, &nbf, &naf);
            hi_limit = (f1 + seg[4 * nxt + 3] - nbf) / 2 - gmin / 2;
        }
        double arm_a = runi(c, 2, lmax(2, wmax / 2));
        double arm_b = runi(c, 2, lmax(2, wmax / 2));
        double c0 = lmax(f0 - arm_a, lo_limit);
        double c1 = lmin(f1 + arm_b, hi_limit);
        int ok0 = c0 < f0 && snap_back(c, &c0, lo_limit);
        int ok1 = c1 > f1 && snap_fwd(c, &c1, hi_limit);
        if (ok0 && ok1 && c0 < f0 && c1 > f1) {
            int p = place(c, c0, c1, D);
            if (p < 0) return p;
            if (p) {
                taken[2 * ntaken] = c0, taken[2 * ntaken + 1] = c1, ntaken++;
                lo_limit = c1 + gmin;
            }
        }
    }
    /* 2. rows between the corner buildings (and the chain's ends); the gaps are drawn first */
    size_t nruns = ntaken + 1;
    if (grow(&r->work2, &r->work2_cap, 2 * nruns)) return -1;
    double *runs = r->work2;
    double prev = endm - gmin;
    for (size_t i = 0; i < ntaken; i++) {
        runs[2 * i] = prev + runi(c, gmin, gmax);
        runs[2 * i + 1] = taken[2 * i] - runi(c, gmin, gmax);
        prev = taken[2 * i + 1];
    }
    runs[2 * ntaken] = prev + runi(c, gmin, gmax);
    runs[2 * ntaken + 1] = L - endm;
    if (ntaken == 0) runs[0] = endm;
    double nb_lo = lmax(1, floor(wmin / bay + 0.5)), nb_hi = lmax(1, floor(wmax / bay + 0.5));
    for (size_t i = 0; i < nruns; i++) {
        double r0 = runs[2 * i], r1 = runs[2 * i + 1];
        double s = r0;
        int have = snap_fwd(c, &s, r1);
        int guard = 0;
        while (have && r1 - s >= minw && guard < 500) {
            guard++;
            double e = s + lmax(minw, rint_draw(c, nb_lo, nb_hi) * bay);
            if (r1 - e < lmax(minw, wmin * 0.6) + gmin) e = r1; /* no room for another: take the rest */
            if (e - s > wmax * 1.6) e = s + wmax;
            if (!allowed(c, e)) {
                double e0 = e;
                if (!snap_back(c, &e, s + minw)) {
                    e = e0;
                    if (!snap_fwd(c, &e, r1)) break;
                }
            }
            double D = runi(c, dmin, dmax);
            int p = place(c, s, e, D);
            if (p < 0) return p;
            s = e + runi(c, gmin, gmax);
            have = snap_fwd(c, &s, r1);
        }
    }
    return 0;
}

size_t psdl_building_rows(psdl_row_room *r, const unsigned char *front, const psdl_row_opts *o, psdl_row_rng rng,
                          psdl_row_place place_cb, void *ud) {
    assert(r && (front || r->n == 0) && o && rng && place_cb);
    size_t n = r->n;
    if (n < 2) return 0;
    if (scratch_grow(r)) return PSDL_GEOM_NOMEM;
    chain_layout c;
    memset(&c, 0, sizeof c);
    c.r = r, c.o = o, c.rng = rng, c.place = place_cb, c.ud = ud;
    const double *P = r->poly;
    int all = 1;
    for (size_t i = 0; i < n; i++)
        if (!front[i]) {
            all = 0;
            break;
        }
    double *ch = r->chain;
    if (all) { /* one closed run opened at the middle of the longest edge */
        size_t best = 0;
        double bl = -1;
        for (size_t i = 0; i < n; i++) {
            double l = dist_xz(P + 3 * i, P + 3 * ((i + 1) % n));
            if (l > bl) best = i, bl = l;
        }
        const double *a = P + 3 * best, *e = P + 3 * ((best + 1) % n);
        double mid[3] = {(a[0] + e[0]) / 2, (a[1] + e[1]) / 2, (a[2] + e[2]) / 2};
        memcpy(ch, mid, sizeof mid);
        for (size_t k = 1; k <= n; k++) memcpy(ch + 3 * k, P + 3 * ((best + k) % n), 3 * sizeof *ch);
        memcpy(ch + 3 * (n + 1), mid, sizeof mid);
        int err = layout(&c, ch, n + 2);
        if (err) return err == -2 ? PSDL_GEOM_INVALID : PSDL_GEOM_NOMEM;
        return c.placed;
    }
    for (size_t i = 0; i < n; i++) {
        size_t prev = (i + n - 1) % n;
        if (front[i] && !front[prev]) {
            size_t len = 0, k = i;
            memcpy(ch + 3 * len++, P + 3 * i, 3 * sizeof *ch);
            while (front[k]) {
                k = (k + 1) % n;
                memcpy(ch + 3 * len++, P + 3 * k, 3 * sizeof *ch);
                if (k == i) break;
            }
            int err = layout(&c, ch, len);
            if (err) return err == -2 ? PSDL_GEOM_INVALID : PSDL_GEOM_NOMEM;
        }
    }
    return c.placed;
}
