/*
 * psdl_split.c -- splitting a block into rooms (psdl_split.h). Each function repeats the Lua
 * it replaced (psdl.plan's shape, clipped_area, part_area, in_cone, chord_angle, chord_valid;
 * blocks/split.lua's find_chord and the limit test of split) expression for expression, in
 * the same order of operations, so the chosen chords and so the city's bytes do not change.
 */
#include "psdl_split.h"

#include <math.h>
#include <stdlib.h>

#include "psdl_region.h"

#define X(k) xz[2 * (k)]
#define Z(k) xz[2 * (k) + 1]

/* Extent of the polygon along (dx, dz) from the centroid (cx, cz) relative to (ox, oz). */
static void extent(const double *xz, size_t n, double ox, double oz, double cx, double cz, double dx, double dz,
                   double *tmin, double *tmax) {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        double t = (X(i) - ox - cx) * dx + (Z(i) - oz - cz) * dz;
        if (t < lo) lo = t;
        if (t > hi) hi = t;
    }
    *tmin = lo, *tmax = hi;
}

void psdl_split_shape(const double *xz, size_t n, psdl_shape *sh) {
    double ox = X(0), oz = Z(0);
    double A = 0, cx = 0, cz = 0, ixx = 0, izz = 0, ixz = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = (i + 1) % n;
        double x0 = X(i) - ox, z0 = Z(i) - oz, x1 = X(k) - ox, z1 = Z(k) - oz;
        double c = x0 * z1 - x1 * z0;
        A = A + c;
        cx = cx + (x0 + x1) * c;
        cz = cz + (z0 + z1) * c;
        ixx = ixx + (x0 * x0 + x0 * x1 + x1 * x1) * c;
        izz = izz + (z0 * z0 + z0 * z1 + z1 * z1) * c;
        ixz = ixz + (x0 * z1 + 2 * x0 * z0 + 2 * x1 * z1 + x1 * z0) * c;
    }
    A = A / 2;
    if (fabs(A) < 1e-12) {
        sh->area = 0, sh->cx = ox, sh->cz = oz, sh->dx = 1, sh->dz = 0;
        sh->extent = 0, sh->tmin = 0, sh->tmax = 0;
        return;
    }
    cx = cx / (6 * A), cz = cz / (6 * A);
    double sxx = ixx / (12 * A) - cx * cx;
    double szz = izz / (12 * A) - cz * cz;
    double sxz = ixz / (24 * A) - cx * cz;
    /* the cut runs across the longer side of the frame of the dominant edge direction (edges
     * of a street grid), or across the major axis of inertia when no direction dominates */
    double sc = 0, ss = 0, tl = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = (i + 1) % n;
        double ex = X(k) - X(i), ez = Z(k) - Z(i);
        double l = sqrt(ex * ex + ez * ez);
        if (l > 0) {
            double c = ex / l, sn = ez / l;
            double c2 = c * c - sn * sn, s2 = 2 * c * sn;
            double nsc = sc + l * (c2 * c2 - s2 * s2), nss = ss + l * 2 * s2 * c2, ntl = tl + l;
            sc = nsc, ss = nss, tl = ntl;
        }
    }
    double dx, dz;
    if (tl > 0 && sqrt(sc * sc + ss * ss) > 0.5 * tl) {
        double phi = atan2(ss, sc) / 4;
        double ax = cos(phi), az = sin(phi);
        double a0, a1, b0, b1;
        extent(xz, n, ox, oz, cx, cz, ax, az, &a0, &a1);
        extent(xz, n, ox, oz, cx, cz, -az, ax, &b0, &b1);
        if (a1 - a0 >= b1 - b0) dx = ax, dz = az;
        else dx = -az, dz = ax;
    } else {
        double th = 0.5 * atan2(2 * sxz, sxx - szz);
        dx = cos(th), dz = sin(th);
    }
    double tmin, tmax;
    extent(xz, n, ox, oz, cx, cz, dx, dz, &tmin, &tmax);
    sh->area = fabs(A), sh->cx = cx + ox, sh->cz = cz + oz, sh->dx = dx, sh->dz = dz;
    sh->extent = tmax - tmin, sh->tmin = tmin, sh->tmax = tmax;
}

/* Area of the polygon's part where (p - c)·d <= tau (psdl.plan.clipped_area). */
static double clipped_area(const double *xz, size_t n, double cx, double cz, double dx, double dz, double tau) {
    double px = X(n - 1), pz = Z(n - 1);
    double tp = (px - cx) * dx + (pz - cz) * dz - tau;
    double sum = 0, fx = 0, fz = 0, lx = 0, lz = 0;
    int have = 0;
    for (size_t i = 0; i < n; i++) {
        double qx = X(i), qz = Z(i);
        double tq = (qx - cx) * dx + (qz - cz) * dz - tau;
        if ((tp <= 0) != (tq <= 0)) {
            double f = tp / (tp - tq);
            double x = px + (qx - px) * f, z = pz + (qz - pz) * f;
            if (have) sum = sum + lx * z - x * lz;
            else fx = x, fz = z;
            lx = x, lz = z, have = 1;
        }
        if (tq <= 0) {
            if (have) sum = sum + lx * qz - qx * lz;
            else fx = qx, fz = qz;
            lx = qx, lz = qz, have = 1;
        }
        px = qx, pz = qz, tp = tq;
    }
    if (!have) return 0;
    sum = sum + lx * fz - fx * lz;
    return fabs(sum) / 2;
}

/* Area of the part of the ring from index i to j (inclusive, i <= j), closed by the chord. */
static double part_area(const double *xz, size_t i, size_t j) {
    double s = 0;
    double px = X(j), pz = Z(j);
    for (size_t k = i; k <= j; k++) {
        double qx = X(k), qz = Z(k);
        s = s + px * qz - qx * pz;
        px = qx, pz = qz;
    }
    return fabs(s) / 2;
}

int psdl_split_in_cone(const double *xz, size_t n, size_t i, double bx, double bz) {
    size_t i0 = (i + 1) % n, i1 = (i + n - 1) % n;
    double ax = X(i), az = Z(i);
    if (psdl_seg_orient(ax, az, X(i1), Z(i1), X(i0), Z(i0)) >= 0) /* convex */
        return psdl_seg_orient(ax, az, bx, bz, X(i0), Z(i0)) > 0 && psdl_seg_orient(bx, bz, ax, az, X(i1), Z(i1)) > 0;
    return !(psdl_seg_orient(ax, az, bx, bz, X(i1), Z(i1)) >= 0 && psdl_seg_orient(bx, bz, ax, az, X(i0), Z(i0)) >= 0);
}

/* Smallest angle (radians) between the chord direction (dx, dz) from vertex i and the two
 * boundary edges at i. */
static double chord_angle(const double *xz, size_t n, size_t i, double dx, double dz) {
    size_t nb[2] = {(i + n - 1) % n, (i + 1) % n};
    double l = sqrt(dx * dx + dz * dz);
    double best = 3.14159265358979323846;
    for (int s = 0; s < 2; s++) {
        double ex = X(nb[s]) - X(i), ez = Z(nb[s]) - Z(i);
        double el = sqrt(ex * ex + ez * ez);
        if (el > 0 && l > 0) {
            double c = (ex * dx + ez * dz) / (el * l);
            if (c > 1) c = 1;
            else if (c < -1) c = -1;
            double ang = acos(c);
            if (ang < best) best = ang;
        }
    }
    return best;
}

/* Is the chord i-j a diagonal of the simple polygon (inside it, touching no other vertex or
 * edge)? */
static int chord_valid(const double *xz, size_t n, size_t i, size_t j) {
    if (i == j || (i + 1) % n == j || (j + 1) % n == i) return 0;
    double ax = X(i), az = Z(i), cx = X(j), cz = Z(j);
    if (!psdl_split_in_cone(xz, n, i, cx, cz) || !psdl_split_in_cone(xz, n, j, ax, az)) return 0;
    double t = PSDL_REGION_TOUCH;
    double x0 = fmin(ax, cx) - t, x1 = fmax(ax, cx) + t;
    double z0 = fmin(az, cz) - t, z1 = fmax(az, cz) + t;
    size_t p = n - 1;
    for (size_t k = 0; k < n; k++) {
        double px = X(p), pz = Z(p), qx = X(k), qz = Z(k);
        if (!((px < x0 && qx < x0) || (px > x1 && qx > x1) || (pz < z0 && qz < z0) || (pz > z1 && qz > z1)) &&
            p != i && p != j && k != i && k != j) {
            if (psdl_segs_meet(ax, az, cx, cz, px, pz, qx, qz, t)) return 0;
        }
        p = k;
    }
    return 1;
}

int psdl_split_obstacle_hit(const psdl_split_obstacles *obs, double ax, double az, double cx, double cz) {
    double x0 = fmin(ax, cx), x1 = fmax(ax, cx), z0 = fmin(az, cz), z1 = fmax(az, cz);
    for (size_t o = 0; o < obs->count; o++) {
        const double *bb = obs->box + 4 * o;
        if (bb[1] < x0 || bb[0] > x1 || bb[3] < z0 || bb[2] > z1) continue;
        const double *xz = obs->xz + 2 * obs->start[o];
        size_t n = obs->start[o + 1] - obs->start[o];
        if (n == 0) continue;
        size_t p = n - 1;
        for (size_t k = 0; k < n; k++) {
            if (psdl_segs_meet(ax, az, cx, cz, X(p), Z(p), X(k), Z(k), PSDL_REGION_TOUCH)) return 1;
            p = k;
        }
        if (psdl_region_inside(xz, n, (ax + cx) / 2, (az + cz) / 2)) return 1;
    }
    return 0;
}

/* A crossing of the station line: edge k, position u along the line. */
typedef struct crossing {
    size_t k;
    double u;
} crossing;

/* A candidate chord i-j and its distance from the station line. */
typedef struct candidate {
    size_t i, j;
    double d;
} candidate;

static int by_u(const void *pa, const void *pb) {
    const crossing *p = (const crossing *)pa, *q = (const crossing *)pb;
    if (p->u != q->u) return p->u < q->u ? -1 : 1;
    return p->k < q->k ? -1 : p->k > q->k;
}

static int by_d(const void *pa, const void *pb) {
    const candidate *p = (const candidate *)pa, *q = (const candidate *)pb;
    if (p->d != q->d) return p->d < q->d ? -1 : 1;
    if (p->i != q->i) return p->i < q->i ? -1 : 1;
    return p->j < q->j ? -1 : p->j > q->j;
}

/* The chord search's work arrays: n each of t and xs, up to 18 n candidates. */
typedef struct work {
    double *t;
    crossing *xs;
    candidate *cand;
} work;

/* Candidate chords at station tau, best first (find_chord's `candidates`); their count. */
static size_t candidates(const double *xz, size_t n, const psdl_shape *sh, double tau, work *w) {
    double cx = sh->cx, cz = sh->cz, dx = sh->dx, dz = sh->dz;
    double ux = -dz, uz = dx;
    double *t = w->t;
    for (size_t i = 0; i < n; i++) t[i] = (X(i) - cx) * dx + (Z(i) - cz) * dz - tau;
    size_t nx = 0;
    for (size_t k = 0; k < n; k++) {
        size_t k2 = (k + 1) % n;
        double a = t[k], c = t[k2];
        if ((a <= 0) != (c <= 0)) {
            double f = a / (a - c);
            double x = X(k) + (X(k2) - X(k)) * f;
            double z = Z(k) + (Z(k2) - Z(k)) * f;
            w->xs[nx].k = k, w->xs[nx].u = (x - cx) * ux + (z - cz) * uz;
            nx++;
        }
    }
    qsort(w->xs, nx, sizeof *w->xs, by_u);
    size_t m = 0;
    enum { W = 3 };
    for (size_t s = 0; s + 1 < nx; s += 2) {
        size_t k1 = w->xs[s].k, k2 = w->xs[s + 1].k;
        for (int a = -W + 1; a <= W; a++) {
            size_t i = (size_t)(((long long)k1 + a) % (long long)n + (long long)n) % n;
            for (int b = -W + 1; b <= W; b++) {
                size_t j = (size_t)(((long long)k2 + b) % (long long)n + (long long)n) % n;
                if (i != j) {
                    w->cand[m].i = i, w->cand[m].j = j, w->cand[m].d = fabs(t[i]) + fabs(t[j]);
                    m++;
                }
            }
        }
    }
    qsort(w->cand, m, sizeof *w->cand, by_d);
    return m;
}

/* Can chord i-j be used? If so 1 and its score in *score (lower is better; NaN for a chord
 * of length 0, which counts as valid but never wins, as in the Lua), else 0. */
static int evaluate(const double *xz, size_t n, const psdl_shape *sh, size_t i, size_t j, double minfrac,
                    const psdl_split_obstacles *obs, double *score) {
    double A = sh->area, dx = sh->dx, dz = sh->dz;
    double ax = X(i), az = Z(i), cx = X(j), cz = Z(j);
    double ddx = cx - ax, ddz = cz - az;
    if ((i + 1) % n == j || (j + 1) % n == i) return 0;
    if (!psdl_split_in_cone(xz, n, i, cx, cz) || !psdl_split_in_cone(xz, n, j, ax, az)) return 0;
    if (chord_angle(xz, n, i, ddx, ddz) < 0.35 || chord_angle(xz, n, j, -ddx, -ddz) < 0.35) return 0;
    double frac = part_area(xz, i < j ? i : j, i < j ? j : i) / A;
    if (frac < minfrac || frac > 1 - minfrac) return 0;
    /* (the footprints first: near buildings most chords cross one, and that test is cheaper) */
    if (obs && psdl_split_obstacle_hit(obs, ax, az, cx, cz)) return 0;
    if (!chord_valid(xz, n, i, j)) return 0;
    double len = sqrt(ddx * ddx + ddz * ddz);
    *score = fabs(frac - 0.5) * 2 + 0.6 * len / sqrt(A) + 1.5 * fabs(ddx * dx + ddz * dz) / len;
    return 1;
}

/* find_chord: 1 and the chord in *bi, *bj, or 0. */
static int find_chord(const double *xz, size_t n, const psdl_shape *sh, const psdl_split_obstacles *obs, work *w,
                      size_t *bi, size_t *bj) {
    static const double fracs[] = {0, 0.5, 0.42, 0.58, 0.33, 0.67, 0.25, 0.75};
    double A = sh->area;
    int found = 0;
    double bs = HUGE_VAL;
    for (size_t f = 0; f < sizeof fracs / sizeof fracs[0]; f++) {
        double frac = fracs[f];
        double tau = 0;
        if (frac != 0) { /* the station: the line where the part below holds frac of the area */
            double lo = sh->tmin, hi = sh->tmax;
            for (int it = 0; it < 11; it++) {
                double mid = (lo + hi) / 2;
                if (clipped_area(xz, n, sh->cx, sh->cz, sh->dx, sh->dz, mid) < A * frac) lo = mid;
                else hi = mid;
            }
            tau = (lo + hi) / 2;
        }
        size_t m = candidates(xz, n, sh, tau, w);
        int valid = 0;
        for (size_t c = 0; c < m; c++) {
            double s;
            if (evaluate(xz, n, sh, w->cand[c].i, w->cand[c].j, frac == 0 ? 0.3 : 0.12, obs, &s)) {
                valid++;
                if (s < bs) found = 1, bs = s, *bi = w->cand[c].i, *bj = w->cand[c].j;
                if (valid >= 4) break;
            }
        }
        if (found) return 1;
    }
    if (obs) return find_chord(xz, n, sh, NULL, w, bi, bj); /* through a building if need be */
    return 0;
}

int psdl_split_chord(const double *xz, size_t n, double max_area, double max_points, double max_length, int try_,
                     const psdl_split_obstacles *obs, size_t *i, size_t *j) {
    if (n < 3) return PSDL_SPLIT_FITS;
    if ((double)n <= max_points) {
        /* clearly within the limits (area and bounding-box diagonal): no need for the axes */
        double x0 = HUGE_VAL, x1 = -HUGE_VAL, z0 = HUGE_VAL, z1 = -HUGE_VAL;
        for (size_t k = 0; k < n; k++) {
            if (X(k) < x0) x0 = X(k);
            if (X(k) > x1) x1 = X(k);
            if (Z(k) < z0) z0 = Z(k);
            if (Z(k) > z1) z1 = Z(k);
        }
        double dx = x1 - x0, dz = z1 - z0;
        double s = 0, px = X(n - 1), pz = Z(n - 1);
        for (size_t k = 0; k < n; k++) {
            s = s + px * Z(k) - X(k) * pz;
            px = X(k), pz = Z(k);
        }
        if (dx * dx + dz * dz <= max_length * max_length && fabs(s) / 2 <= max_area) return PSDL_SPLIT_FITS;
    }
    psdl_shape sh;
    psdl_split_shape(xz, n, &sh);
    int need = sh.area > max_area || (double)n > max_points || sh.extent > max_length;
    if (!(need && try_ && sh.area > 4)) return PSDL_SPLIT_FITS;
    if (n > ((size_t)-1) / 64 / sizeof(candidate)) return PSDL_SPLIT_NOMEM;
    work w;
    w.t = (double *)malloc(n * sizeof *w.t);
    w.xs = (crossing *)malloc(n * sizeof *w.xs);
    w.cand = (candidate *)malloc(18 * n * sizeof *w.cand);
    int rc = PSDL_SPLIT_NOMEM;
    if (w.t && w.xs && w.cand) rc = find_chord(xz, n, &sh, obs, &w, i, j) ? PSDL_SPLIT_CHORD : PSDL_SPLIT_NONE;
    free(w.t);
    free(w.xs);
    free(w.cand);
    return rc;
}
