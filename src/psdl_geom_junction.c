/* psdl_geom_junction.c -- intersection geometry from the road ends meeting at a node
 * (psdl_geom.h; city-layout §1.4-1.5, §2.2; psdl-format §2.4 0x1, 0x4, 0x5). */
#include "psdl_geom.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define CURB_RISE 0.15
#define SAME_EPS 1e-7 /* metres: points closer than this are one point */
/* A corner that goes round the node by less than this is straight (two arms in line): its
 * arms end at least STRAIGHT_GAP from the node, so that some road surface stays between
 * their crosswalks (else the surface has no area). */
#define STRAIGHT_SWEEP (0.5 * M_PI / 180.0)
#define STRAIGHT_GAP 1.0
/* Arms of different widths whose corner goes round the node by less than this taper from
 * one to the other (a round join would run back along the wider arm's end: a spike). */
#define TAPER_SWEEP (5.0 * M_PI / 180.0)

enum { MEET_BOTH, MEET_A, MEET_B, MEET_NONE, JOIN, TAPER };

/* Per-arm frame and widths. */
typedef struct arm_info {
    double d[2], f[2]; /* outward direction, left of outward travel (§4.2) */
    double theta;      /* atan2(dz, dx) */
    int kind;
    double aL, aR;     /* curb (edge) offsets from the axis, left and right */
    double sL, sR;     /* sidewalk widths (0 = none) */
    double half_median;
    double depth;      /* crosswalk depth */
    double need_curb;  /* largest distance along d of a corner point on a curb line */
    double need_outer; /* largest distance along d of a corner point on an outer line */
    double e;          /* end distance */
    size_t sec_off;    /* offset of its section in dst->sections */
    uint32_t sec[6], ci[4]; /* section indices; crosswalk-inner road-level columns */
    size_t nci;
} arm_info;

#define MAX_ARC 400

/* A corner's paths hold at most min(arc_points_max, MAX_ARC) points each (an arc of n
 * segments has n + 1 points, n <= MAX_ARC - 2 and n + 1 <= arc_points_max - 2); they live in
 * one block sized for the options (a few KB for the usual 15 degrees, where MAX_ARC-sized
 * arrays took 19 KB a corner: a heap trim and regrow, with its page faults, each call). */
typedef struct corner {
    int type;
    double (*curb)[3]; /* curb path, road level */
    size_t ncurb;
    double (*outer)[3]; /* outer path (JOIN with sidewalks), or [0] = building corner / Y */
    size_t nouter;
    int mitre; /* MEET_A / MEET_B: the sidewalk ends along the other arm's edge */
} corner;

typedef struct jb {
    psdl_junction *j;
    psdl_junction_sizes cap;
    double y, rise;
} jb;

static uint32_t addp(jb *b, double x, double y, double z) {
    psdl_junction *j = b->j;
    for (size_t i = 0; i < j->size.points; i++) {
        const double *p = j->points + 3 * i;
        if (fabs(p[0] - x) < SAME_EPS && fabs(p[1] - y) < SAME_EPS && fabs(p[2] - z) < SAME_EPS) return (uint32_t)i;
    }
    assert(j->size.points < b->cap.points);
    double *p = j->points + 3 * j->size.points;
    p[0] = x, p[1] = y, p[2] = z;
    return (uint32_t)j->size.points++;
}

static uint32_t addv(jb *b, const double *p) { return addp(b, p[0], p[1], p[2]); }

/* Point c + d * t + f * o at height y. */
static void at(double *out, const double *c, const arm_info *a, double t, double o, double y) {
    out[0] = c[0] + a->d[0] * t + a->f[0] * o;
    out[1] = y;
    out[2] = c[2] + a->d[1] * t + a->f[1] * o;
}

/* Meeting point of lines p + s u and q + s2 v (plan); 0 when parallel. */
static int meet(const double *p, const double *u, const double *q, const double *v, double *s, double *s2) {
    double den = u[0] * v[1] - u[1] * v[0];
    if (fabs(den) < 1e-12) return 0;
    double dx = q[0] - p[0], dz = q[2] - p[2];
    *s = (dx * v[1] - dz * v[0]) / den;
    *s2 = (dx * u[1] - dz * u[0]) / den;
    return 1;
}

static double arc_step_rad(const psdl_junction_opts *o) {
    double s = o->arc_step > 0 ? o->arc_step : 15.0;
    if (s < 1) s = 1;
    return s * M_PI / 180.0;
}

static size_t arc_points_max(const psdl_junction_opts *o) { return (size_t)ceil(2 * M_PI / arc_step_rad(o)) + 3; }

void psdl_junction_bound(psdl_junction_sizes *out, const psdl_arm *arms, size_t narms, const psdl_junction_opts *opts) {
    assert(out && opts && (arms || narms == 0));
    size_t S = 0;
    for (size_t i = 0; i < narms; i++) {
        size_t s = psdl_section_stride(arms[i].profile.kind);
        S += s ? s : 6;
    }
    size_t K = arc_points_max(opts), A = narms;
    out->points = S + 4 * A + A * (2 * K + 8) + 8;
    out->surface = A * (K + 12) + 4;
    out->sections = S;
    out->strips = A * (2 * K + 20);
    out->crosswalks = 3 * A;
    out->outline = A * (2 * K + 20) + 4;
}

typedef struct order_item {
    double theta;
    size_t i;
} order_item;

static int cmp_order(const void *a, const void *b) {
    double x = ((const order_item *)a)->theta, y = ((const order_item *)b)->theta;
    return x > y ? -1 : x < y; /* decreasing angle: retail winding (§4.2) */
}

/* Distance along arm a's outward direction of point q (plan). */
static double proj(const double *q, const double *c, const arm_info *a) {
    return (q[0] - c[0]) * a->d[0] + (q[2] - c[2]) * a->d[1];
}

/* Where the sidewalk of arm S ends at a corner with arm O, which has none; S's curb meets
 * O's edge line (through `pe` along O) at distance t along S; `off` is S's outer offset,
 * `side` +1 when S's sidewalk is on its left (O's edge is its right), -1 the other way.
 * Square across S's width where that end stays clear of O's carriageway by a metre or more;
 * else (an acute or nearly right corner) along O's edge line: out to where S's outer line meets it, or, where
 * the two lines are too close to parallel for that, the square end moved onto it. Returns 1
 * when the end runs along O's edge (the curb corner is then inside the outline). */
static int sidewalk_end(double *q, const double *c, const arm_info *S, const arm_info *O, double t, double off,
                        const double *pe, int side, double y) {
    at(q, c, S, t, off, y);
    /* O's edge normal pointing away from O's axis: -f for its right edge, +f for its left */
    double nx = -side * O->f[0], nz = -side * O->f[1];
    double out = (q[0] - pe[0]) * nx + (q[2] - pe[2]) * nz;
    /* clear of O's edge by less than a metre: a square end would leave a wedge of ground a
     * few degrees wide between the sidewalk's end and O's side (a spike in the block
     * there); it runs along O's edge instead */
    if (out > 1.0) return 0;
    double os[3], u, v;
    at(os, c, S, 0, off, y);
    double sw = fabs(off) - (side > 0 ? S->aL : S->aR);
    if (meet(os, S->d, pe, O->d, &u, &v) && u >= t && u <= t + 2 * sw + 1 && v >= 0) {
        at(q, c, S, u, off, y);
        return 1;
    }
    q[0] -= out * nx, q[2] -= out * nz; /* onto the edge line */
    return 1;
}

/* Builds corner geometry between arm A's left side and arm B's right side. */
static void build_corner(corner *cn, const double *c, arm_info *A, arm_info *B, double gamma, double radius,
                         double step, double y, double rise) {
    double pa[3], pb[3];
    cn->ncurb = cn->nouter = 0;
    cn->mitre = 0;
    int use_meet = gamma < M_PI - 0.5 * M_PI / 180.0;
    double tA = 0, tB = 0;
    if (use_meet) {
        at(pa, c, A, 0, A->aL, y);
        at(pb, c, B, 0, -B->aR, y);
        /* arms of very different widths: the narrow one's curb line can meet the wide
         * one's a little behind the node (t < 0 on one arm); that corner point still
         * bounds the corner (the narrow arm's curb runs on into the junction up to the wide
         * one's), where a round join would tear the sidewalks into crossing quads */
        double lim = 2 * (A->aL + B->aR);
        if (!meet(pa, A->d, pb, B->d, &tA, &tB) || (tA < 0 && tB < 0) || tA < -lim || tB < -lim) use_meet = 0;
    }
    int hasA = A->sL > 0, hasB = B->sR > 0;
    if (use_meet && hasA && hasB) {
        double oa[3], ob[3], uA, uB;
        at(oa, c, A, 0, A->aL + A->sL, y);
        at(ob, c, B, 0, -(B->aR + B->sR), y);
        double olim = 2 * (A->aL + A->sL + B->aR + B->sR);
        if (!meet(oa, A->d, ob, B->d, &uA, &uB) || (uA < 0 && uB < 0) || uA < -olim || uB < -olim) use_meet = 0;
        else {
            double Pc[3], Bc[3];
            at(Pc, c, A, tA, A->aL, y);
            at(Bc, c, A, uA, A->aL + A->sL, y + rise);
            /* fillet inside the sidewalk wedge, shrunk until it leaves some sidewalk at the corner */
            double r = radius > 0 ? radius : 0;
            double half = gamma / 2, bis[2] = {A->d[0] + B->d[0], A->d[1] + B->d[1]};
            double bl = sqrt(bis[0] * bis[0] + bis[1] * bis[1]);
            if (bl < 1e-12) r = 0;
            else bis[0] /= bl, bis[1] /= bl;
            /* the sidewalk left at the corner: from the arc's middle to the building corner,
             * along the bisector; keep at least half the narrower sidewalk */
            double minw = 0.5 * fmin(A->sL, B->sR);
            double dB = (Bc[0] - Pc[0]) * bis[0] + (Bc[2] - Pc[2]) * bis[1];
            for (int it = 0; it < 40 && r > 0; it++) {
                if (dB - (r / sin(half) - r) >= minw) break;
                r *= 0.8;
                if (r < 0.05) r = 0;
            }
            if (r > 0 && dB - (r / sin(half) - r) < minw) {
                /* still too big after the shrinking (a radius far beyond the corner): the
                 * largest that fits */
                double k = 1 / sin(half) - 1;
                r = k > 0 ? (dB - minw) / k : 0;
                if (!(r >= 0.05)) r = 0;
            }
            if (r > 0) {
                double L = r / tan(half);
                double o[2] = {Pc[0] + bis[0] * r / sin(half), Pc[2] + bis[1] * r / sin(half)};
                double Ta[2] = {Pc[0] + A->d[0] * L, Pc[2] + A->d[1] * L};
                double Tb[2] = {Pc[0] + B->d[0] * L, Pc[2] + B->d[1] * L};
                double fa = atan2(Ta[1] - o[1], Ta[0] - o[0]), fb = atan2(Tb[1] - o[1], Tb[0] - o[0]);
                double sw = fb - fa;
                while (sw > M_PI) sw -= 2 * M_PI;
                while (sw < -M_PI) sw += 2 * M_PI;
                size_t nseg = (size_t)ceil(fabs(sw) / step - 1e-9);
                if (nseg < 1) nseg = 1;
                if (nseg > MAX_ARC - 2) nseg = MAX_ARC - 2;
                for (size_t i = 0; i <= nseg; i++) {
                    double ang = fa + sw * (double)i / (double)nseg;
                    double *q = cn->curb[cn->ncurb++];
                    if (i == 0) q[0] = Ta[0], q[2] = Ta[1];
                    else if (i == nseg) q[0] = Tb[0], q[2] = Tb[1];
                    else q[0] = o[0] + r * cos(ang), q[2] = o[1] + r * sin(ang);
                    q[1] = y;
                }
                A->need_curb = fmax(A->need_curb, tA + L);
                B->need_curb = fmax(B->need_curb, tB + L);
            } else {
                memcpy(cn->curb[cn->ncurb++], Pc, sizeof Pc);
                A->need_curb = fmax(A->need_curb, tA);
                B->need_curb = fmax(B->need_curb, tB);
            }
            memcpy(cn->outer[cn->nouter++], Bc, sizeof Bc);
            A->need_outer = fmax(A->need_outer, uA);
            B->need_outer = fmax(B->need_outer, uB);
            cn->type = MEET_BOTH;
            return;
        }
    }
    if (use_meet) {
        double Pc[3];
        at(Pc, c, A, tA, A->aL, y);
        memcpy(cn->curb[cn->ncurb++], Pc, sizeof Pc);
        A->need_curb = fmax(A->need_curb, tA);
        B->need_curb = fmax(B->need_curb, tB);
        /* A's sidewalk ends at the curb corner: across its width where the corner is
         * right or obtuse; at an acute corner a square end would reach into B's carriageway,
         * so it ends along B's edge line instead (mitred), out to where its outer line
         * meets B's edge; B's end section moves out past that point. */
        if (hasA) {
            double q[3];
            if (sidewalk_end(q, c, A, B, tA, A->aL + A->sL, pb, 1, y + rise)) cn->mitre = 1;
            memcpy(cn->outer[cn->nouter++], q, sizeof q);
            A->need_outer = fmax(A->need_outer, proj(q, c, A));
            if (cn->mitre) B->need_curb = fmax(B->need_curb, proj(q, c, B));
            cn->type = MEET_A;
        } else if (hasB) {
            double q[3];
            if (sidewalk_end(q, c, B, A, tB, -(B->aR + B->sR), pa, -1, y + rise)) cn->mitre = 1;
            memcpy(cn->outer[cn->nouter++], q, sizeof q);
            B->need_outer = fmax(B->need_outer, proj(q, c, B));
            if (cn->mitre) A->need_curb = fmax(A->need_curb, proj(q, c, A));
            cn->type = MEET_B;
        } else {
            cn->type = MEET_NONE;
        }
        return;
    }
    /* round join about the node: from A's curb at the node to B's */
    cn->type = JOIN;
    double fa = atan2(A->f[1], A->f[0]);
    double sweep = gamma - M_PI; /* clockwise (decreasing angle) */
    if (sweep < 0) sweep = 0;
    size_t nseg = sweep > 1e-9 ? (size_t)ceil(sweep / step - 1e-9) : 1;
    if (nseg < 1) nseg = 1;
    if (nseg > MAX_ARC - 2) nseg = MAX_ARC - 2;
    double c0 = A->aL, c1 = B->aR, o0 = A->aL + A->sL, o1 = B->aR + B->sR;
    double dw0 = fmax(fabs(c0 - c1), hasA && hasB ? fabs(o0 - o1) : 0);
    if (sweep < STRAIGHT_SWEEP || (sweep < TAPER_SWEEP && (dw0 > SAME_EPS || hasA != hasB))) {
        /* arms in line: keep a piece of road surface */
        double dw = dw0, gap = STRAIGHT_GAP;
        if (dw > SAME_EPS || hasA != hasB) {
            /* a change of width: the curb (and outer line) taper straight from one arm's
             * crosswalk to the other's instead of stepping at the node, where the two
             * sidewalk ends would meet in T-junctions */
            cn->type = TAPER;
            gap = fmax(gap, dw);
        }
        A->need_curb = fmax(A->need_curb, gap);
        B->need_curb = fmax(B->need_curb, gap);
        if (cn->type == TAPER) return;
    }
    if (nseg == 1) {
        /* arms almost in line with equal widths: the corner's two ends lie (nearly) on top
         * of each other at the node; two points a fraction of a millimetre apart would give
         * sliver fans whose winding flips with rounding (almost-straight T junctions), so
         * they become one point half way */
        double q0[3], q1[3], w0[3], w1[3];
        at(q0, c, A, 0, c0, y);
        at(q1, c, B, 0, -c1, y);
        at(w0, c, A, 0, o0, y + (hasA ? rise : 0));
        at(w1, c, B, 0, -o1, y + (hasB ? rise : 0));
        double dq = hypot(q1[0] - q0[0], q1[2] - q0[2]), dw = hypot(w1[0] - w0[0], w1[2] - w0[2]);
        /* a corner a hair short of straight (gamma <= 180 degrees, too flat for the
         * meeting point above): the curb lines cross just beside the node, and the two
         * ends would run a few centimetres backwards (a kink): one point too */
        int flat = gamma <= M_PI;
        if ((dq < 0.05 || flat) && (dw < 0.05 || flat || hasA != hasB)) {
            double *q = cn->curb[cn->ncurb++];
            for (int k = 0; k < 3; k++) q[k] = 0.5 * (q0[k] + q1[k]);
            if (hasA == hasB) {
                double *w = cn->outer[cn->nouter++];
                for (int k = 0; k < 3; k++) w[k] = 0.5 * (w0[k] + w1[k]);
            } else { /* one sidewalk: its own outer point (outer[0] for A, the last for B) */
                memcpy(cn->outer[cn->nouter++], w0, sizeof w0);
                memcpy(cn->outer[cn->nouter++], w1, sizeof w1);
            }
            return;
        }
    }
    for (size_t i = 0; i <= nseg; i++) {
        double u = (double)i / (double)nseg;
        double *q = cn->curb[cn->ncurb++];
        double *w = cn->outer[cn->nouter++];
        if (i == 0) {
            at(q, c, A, 0, c0, y);
            at(w, c, A, 0, o0, y + (hasA ? rise : 0));
        } else if (i == nseg) {
            at(q, c, B, 0, -c1, y);
            at(w, c, B, 0, -o1, y + (hasB ? rise : 0));
        } else {
            double ang = fa - sweep * u, rc = c0 + (c1 - c0) * u, ro = o0 + (o1 - o0) * u;
            q[0] = c[0] + rc * cos(ang), q[1] = y, q[2] = c[2] + rc * sin(ang);
            w[0] = c[0] + ro * cos(ang), w[1] = y + rise, w[2] = c[2] + ro * sin(ang);
        }
    }
}

/* Appends an index to a list, skipping a repeat of the last one. */
static void push_idx(uint32_t *list, size_t *n, uint32_t v) {
    if (*n > 0 && list[*n - 1] == v) return;
    list[(*n)++] = v;
}

/* Plan distance between points a and b of `pts`. */
static double plan_dist(const double *pts, uint32_t a, uint32_t b) {
    return hypot(pts[3 * a] - pts[3 * b], pts[3 * a + 2] - pts[3 * b + 2]);
}

/* Removes zero-width spikes from a closed outline of point indices (plan: x and z of
 * `pts`): a point where the outline turns straight back (the next point lies on the way it
 * came, e.g. out along a sidewalk end with no length and back to the curb), with the
 * points on top of it in plan (a curb-height and a road-level point), and repeats of one
 * index. Such a spike encloses no area; left in, the room's perimeter has a spike, and the
 * blocks beside it a sliver. Returns the new count. */
static size_t unspike_outline(uint32_t *o, size_t n, const double *pts) {
    int changed = 1;
    while (changed && n >= 3) {
        changed = 0;
        for (size_t i = 0; i < n && n >= 3; i++) {
            if (o[i] == o[(i + 1) % n]) { /* a repeat */
                memmove(o + i, o + i + 1, (n - i - 1) * sizeof *o);
                n--;
                changed = 1;
                break;
            }
            /* the cluster of points on top of o[i] in plan: i0..i1 (cyclic), and the
             * nearest points apart from it before and after */
            size_t k0 = 0, k1 = 0;
            while (k0 + 1 < n && plan_dist(pts, o[(i + n - k0 - 1) % n], o[i]) < SAME_EPS) k0++;
            while (k1 + 1 < n && plan_dist(pts, o[(i + k1 + 1) % n], o[i]) < SAME_EPS) k1++;
            if (k0 + k1 + 3 > n) continue;
            const double *p = pts + 3 * o[(i + n - k0 - 1) % n], *v = pts + 3 * o[i], *q = pts + 3 * o[(i + k1 + 1) % n];
            double ax = p[0] - v[0], az = p[2] - v[2], bx = q[0] - v[0], bz = q[2] - v[2];
            double la = hypot(ax, az), lb = hypot(bx, bz);
            double cr = (ax * bz - az * bx) / (la * lb), dt = (ax * bx + az * bz) / (la * lb);
            if (!(dt > 0 && fabs(cr) < 1e-6)) continue;
            /* drop the cluster */
            size_t m = k0 + k1 + 1, start = (i + n - k0) % n;
            uint32_t *tmp = (uint32_t *)malloc(n * sizeof *tmp);
            if (!tmp) return n;
            size_t w = 0;
            for (size_t k = 0; k < n; k++) {
                size_t d = (k + n - start) % n;
                if (d >= m) tmp[w++] = o[k];
            }
            memcpy(o, tmp, w * sizeof *o);
            free(tmp);
            n = w;
            changed = 1;
            break;
        }
    }
    return n;
}

/* Sidewalk strip writer. */
typedef struct strip_w {
    jb *b;
    size_t head; /* index of the strip's npairs word */
    size_t npairs;
} strip_w;

static void strip_begin(strip_w *s, jb *b, unsigned caps) {
    psdl_junction *j = b->j;
    s->b = b;
    s->head = j->size.strips;
    s->npairs = 0;
    j->strips[j->size.strips++] = 0;
    j->strips[j->size.strips++] = caps;
}

static void strip_pair(strip_w *s, uint32_t curb, uint32_t outer) {
    psdl_junction *j = s->b->j;
    if (s->npairs > 0) {
        uint32_t pc = j->strips[j->size.strips - 2], po = j->strips[j->size.strips - 1];
        if (pc == curb && po == outer) return;
    }
    j->strips[j->size.strips++] = curb;
    j->strips[j->size.strips++] = outer;
    s->npairs++;
}

static void strip_end(strip_w *s) {
    psdl_junction *j = s->b->j;
    if (s->npairs < 2) { /* nothing to draw: drop it */
        j->size.strips = s->head;
        return;
    }
    j->strips[s->head] = (uint32_t)s->npairs;
}

size_t psdl_junction_build(psdl_junction *dst, const psdl_arm *arms, size_t narms, const psdl_junction_opts *opts) {
    assert(dst && opts && (arms || narms == 0));
    if (narms == 0) return PSDL_GEOM_INVALID;
    jb b;
    b.j = dst;
    psdl_junction_bound(&b.cap, arms, narms, opts);
    memset(&dst->size, 0, sizeof dst->size);
    const double *c = opts->center;
    /* NaN or infinite input would defeat the point deduplication (and the bounds): refuse
     * it, and negative widths */
    if (!isfinite(c[0]) || !isfinite(c[1]) || !isfinite(c[2]) || !isfinite(opts->radius) ||
        !isfinite(opts->arc_step) || !isfinite(opts->curb))
        return PSDL_GEOM_INVALID;
    for (size_t i = 0; i < narms; i++) {
        const psdl_arm *a = &arms[i];
        const psdl_profile *p = &a->profile;
        if (!isfinite(a->dir[0]) || !isfinite(a->dir[1]) || !isfinite(p->left) || !isfinite(p->right) ||
            !isfinite(p->sidewalk_left) || !isfinite(p->sidewalk_right) || !isfinite(p->median) ||
            !isfinite(a->crosswalk) || !isfinite(a->min_distance) || p->left < 0 || p->right < 0)
            return PSDL_GEOM_INVALID;
    }
    b.y = c[1];
    b.rise = opts->curb < 0 ? CURB_RISE : opts->curb;
    double step = arc_step_rad(opts);
    arm_info *ai = (arm_info *)calloc(narms, sizeof *ai);
    order_item *ord = (order_item *)malloc(narms * sizeof *ord);
    corner *cn = (corner *)malloc(narms * sizeof *cn);
    size_t arc_cap = arc_points_max(opts);
    if (arc_cap > MAX_ARC) arc_cap = MAX_ARC;
    double *arcs = (double *)malloc(narms * 2 * arc_cap * 3 * sizeof *arcs);
    size_t result = PSDL_GEOM_NOMEM;
    if (!ai || !ord || !cn || !arcs) goto done;
    for (size_t k = 0; k < narms; k++) {
        cn[k].curb = (double (*)[3])(arcs + 2 * k * arc_cap * 3);
        cn[k].outer = (double (*)[3])(arcs + (2 * k + 1) * arc_cap * 3);
    }
    result = PSDL_GEOM_INVALID;
    for (size_t i = 0; i < narms; i++) {
        const psdl_arm *a = &arms[i];
        arm_info *x = &ai[i];
        double l = sqrt(a->dir[0] * a->dir[0] + a->dir[1] * a->dir[1]);
        if (l < 1e-12) goto done;
        x->d[0] = a->dir[0] / l, x->d[1] = a->dir[1] / l;
        x->f[0] = x->d[1], x->f[1] = -x->d[0];
        x->theta = atan2(x->d[1], x->d[0]);
        x->kind = a->profile.kind;
        if (x->kind != PSDL_SECTION_ROAD && x->kind != PSDL_SECTION_WALKWAY && x->kind != PSDL_SECTION_DIVIDED) goto done;
        x->half_median = x->kind == PSDL_SECTION_DIVIDED && a->profile.median > 0 ? a->profile.median / 2 : 0;
        x->aL = x->half_median + a->profile.left;
        x->aR = x->half_median + a->profile.right;
        int sw = x->kind != PSDL_SECTION_WALKWAY;
        x->sL = sw && a->profile.sidewalk_left > 0 ? a->profile.sidewalk_left : 0;
        x->sR = sw && a->profile.sidewalk_right > 0 ? a->profile.sidewalk_right : 0;
        x->depth = a->crosswalk > 0 ? a->crosswalk : 0;
        x->need_curb = x->need_outer = 0;
        ord[i].theta = x->theta;
        ord[i].i = i;
    }
    qsort(ord, narms, sizeof *ord, cmp_order);
    for (size_t k = 0; k < narms; k++) {
        size_t ka = ord[k].i, kb = ord[(k + 1) % narms].i;
        double gamma = narms == 1 ? 2 * M_PI : ai[ka].theta - ai[kb].theta;
        while (gamma <= 0) gamma += 2 * M_PI;
        if (narms > 1 && (gamma < M_PI / 180.0 || gamma > 2 * M_PI - M_PI / 180.0)) goto done;
        build_corner(&cn[k], c, &ai[ka], &ai[kb], gamma, opts->radius, step, b.y, b.rise);
    }
    /* end distances and per-arm points */
    size_t so = 0;
    for (size_t i = 0; i < narms; i++) {
        arm_info *x = &ai[i];
        double e = fmax(x->need_curb + x->depth, x->need_outer);
        if (arms[i].min_distance > e) e = arms[i].min_distance;
        if (x->depth > e) e = x->depth;
        x->e = e;
        dst->distance[i] = e;
        double p[3];
        double off[6], rise[6];
        size_t st = 0;
        switch (x->kind) {
        case PSDL_SECTION_ROAD:
            off[st] = x->aL + x->sL, rise[st++] = x->sL > 0 ? b.rise : 0;
            off[st] = x->aL, rise[st++] = 0;
            off[st] = -x->aR, rise[st++] = 0;
            off[st] = -(x->aR + x->sR), rise[st++] = x->sR > 0 ? b.rise : 0;
            break;
        case PSDL_SECTION_DIVIDED:
            off[st] = x->aL + x->sL, rise[st++] = x->sL > 0 ? b.rise : 0;
            off[st] = x->aL, rise[st++] = 0;
            off[st] = x->half_median, rise[st++] = 0;
            off[st] = -x->half_median, rise[st++] = 0;
            off[st] = -x->aR, rise[st++] = 0;
            off[st] = -(x->aR + x->sR), rise[st++] = x->sR > 0 ? b.rise : 0;
            break;
        default:
            off[st] = x->aL, rise[st++] = 0;
            off[st] = -x->aR, rise[st++] = 0;
            break;
        }
        x->sec_off = so;
        for (size_t col = 0; col < st; col++) {
            at(p, c, x, e, off[col], b.y + rise[col]);
            x->sec[col] = addv(&b, p);
            dst->sections[so++] = x->sec[col];
        }
        /* road-level columns at the crosswalk's inner edge */
        size_t c0 = x->kind == PSDL_SECTION_WALKWAY ? 0 : 1, c1 = x->kind == PSDL_SECTION_WALKWAY ? st - 1 : st - 2;
        x->nci = 0;
        for (size_t col = c0; col <= c1; col++) {
            if (x->depth > 0) {
                at(p, c, x, e - x->depth, off[col], b.y);
                x->ci[x->nci++] = addv(&b, p);
            } else {
                x->ci[x->nci++] = x->sec[col];
            }
        }
        if (x->depth > 0)
            for (size_t q = 0; q + 1 < x->nci; q++) {
                uint32_t *cw = dst->crosswalks + 4 * dst->size.crosswalks++;
                cw[0] = x->ci[q];          /* c0: left column, inner edge */
                cw[1] = x->sec[c0 + q];     /* c1: left column, at the road end */
                cw[2] = x->ci[q + 1];      /* c2: right column, inner edge */
                cw[3] = x->sec[c0 + q + 1]; /* c3: right column, at the road end */
            }
    }
    dst->size.sections = so;
    /* surface, strips and outline, arm by arm in retail order */
    for (size_t k = 0; k < narms; k++) {
        arm_info *A = &ai[ord[k].i], *B = &ai[ord[(k + 1) % narms].i];
        corner *q = &cn[k];
        size_t stA = psdl_section_stride(A->kind), stB = psdl_section_stride(B->kind);
        int sidewalkA = A->kind != PSDL_SECTION_WALKWAY, sidewalkB = B->kind != PSDL_SECTION_WALKWAY;
        uint32_t curbA = sidewalkA ? A->sec[1] : A->sec[0], outerA = A->sec[0];
        uint32_t curbB = sidewalkB ? B->sec[stB - 2] : B->sec[stB - 1], outerB = B->sec[stB - 1];
        uint32_t ciA = A->ci[0], ciB = B->ci[B->nci - 1];
        /* arm A: section right to left (outline) and crosswalk inner edge (surface) */
        for (size_t col = stA; col-- > 0;) push_idx(dst->outline, &dst->size.outline, A->sec[col]);
        for (size_t col = A->nci; col-- > 0;) push_idx(dst->surface, &dst->size.surface, A->ci[col]);
        uint32_t curbp[MAX_ARC], outp[MAX_ARC];
        for (size_t i = 0; i < q->ncurb; i++) curbp[i] = addv(&b, q->curb[i]);
        for (size_t i = 0; i < q->nouter; i++) outp[i] = addv(&b, q->outer[i]);
        for (size_t i = 0; i < q->ncurb; i++) push_idx(dst->surface, &dst->size.surface, curbp[i]);
        int hasA = A->sL > 0, hasB = B->sR > 0;
        strip_w s;
        uint32_t *ol = dst->outline;
        size_t *on = &dst->size.outline;
        switch (q->type) {
        case MEET_BOTH:
            strip_begin(&s, &b, 0);
            strip_pair(&s, curbA, outerA);
            strip_pair(&s, ciA, outerA);
            for (size_t i = 0; i < q->ncurb; i++) strip_pair(&s, curbp[i], outp[0]);
            strip_pair(&s, ciB, outerB);
            strip_pair(&s, curbB, outerB);
            strip_end(&s);
            push_idx(ol, on, outp[0]);
            break;
        case MEET_A:
            strip_begin(&s, &b, 2);
            strip_pair(&s, curbA, outerA);
            strip_pair(&s, ciA, outerA);
            strip_pair(&s, curbp[0], outp[0]);
            strip_end(&s);
            push_idx(ol, on, outp[0]);
            if (!q->mitre) push_idx(ol, on, curbp[0]); /* mitred: the curb corner is inside */
            push_idx(ol, on, ciB);
            break;
        case MEET_B:
            strip_begin(&s, &b, 1);
            strip_pair(&s, curbp[0], outp[0]);
            strip_pair(&s, ciB, outerB);
            strip_pair(&s, curbB, outerB);
            strip_end(&s);
            push_idx(ol, on, ciA);
            if (!q->mitre) push_idx(ol, on, curbp[0]);
            push_idx(ol, on, outp[0]);
            break;
        case MEET_NONE:
            push_idx(ol, on, ciA);
            push_idx(ol, on, curbp[0]);
            push_idx(ol, on, ciB);
            break;
        case TAPER: /* arms in line, widths changing: from A's crosswalk straight to B's */
            if (hasA && hasB) {
                strip_begin(&s, &b, 0);
                strip_pair(&s, curbA, outerA);
                strip_pair(&s, ciA, outerA);
                strip_pair(&s, ciB, outerB);
                strip_pair(&s, curbB, outerB);
                strip_end(&s);
                break;
            }
            if (hasA) { /* A's sidewalk ends beside its crosswalk */
                strip_begin(&s, &b, 2);
                strip_pair(&s, curbA, outerA);
                strip_pair(&s, ciA, outerA);
                strip_end(&s);
            } else if (hasB) {
                strip_begin(&s, &b, 1);
                strip_pair(&s, ciB, outerB);
                strip_pair(&s, curbB, outerB);
                strip_end(&s);
            }
            push_idx(ol, on, ciA);
            push_idx(ol, on, ciB);
            break;
        default: /* JOIN */
            if (hasA && hasB) {
                strip_begin(&s, &b, 0);
                strip_pair(&s, curbA, outerA);
                strip_pair(&s, ciA, outerA);
                for (size_t i = 0; i < q->ncurb; i++) strip_pair(&s, curbp[i], outp[i]);
                strip_pair(&s, ciB, outerB);
                strip_pair(&s, curbB, outerB);
                strip_end(&s);
                for (size_t i = 0; i < q->nouter; i++) push_idx(ol, on, outp[i]);
            } else if (hasA) {
                strip_begin(&s, &b, 2);
                strip_pair(&s, curbA, outerA);
                strip_pair(&s, ciA, outerA);
                strip_pair(&s, curbp[0], outp[0]);
                strip_end(&s);
                push_idx(ol, on, outp[0]);
                for (size_t i = 0; i < q->ncurb; i++) push_idx(ol, on, curbp[i]);
                push_idx(ol, on, ciB);
            } else if (hasB) {
                strip_begin(&s, &b, 1);
                strip_pair(&s, curbp[q->ncurb - 1], outp[q->nouter - 1]);
                strip_pair(&s, ciB, outerB);
                strip_pair(&s, curbB, outerB);
                strip_end(&s);
                push_idx(ol, on, ciA);
                for (size_t i = 0; i < q->ncurb; i++) push_idx(ol, on, curbp[i]);
                push_idx(ol, on, outp[q->nouter - 1]);
            } else {
                push_idx(ol, on, ciA);
                for (size_t i = 0; i < q->ncurb; i++) push_idx(ol, on, curbp[i]);
                push_idx(ol, on, ciB);
            }
            break;
        }
    }
    /* close the loops: drop a last point equal to the first */
    while (dst->size.outline > 1 && dst->outline[dst->size.outline - 1] == dst->outline[0]) dst->size.outline--;
    dst->size.outline = unspike_outline(dst->outline, dst->size.outline, dst->points); /* the spike rule */
    while (dst->size.surface > 1 && dst->surface[dst->size.surface - 1] == dst->surface[0]) dst->size.surface--;
    assert(dst->size.points <= b.cap.points && dst->size.surface <= b.cap.surface &&
           dst->size.strips <= b.cap.strips && dst->size.outline <= b.cap.outline);
    result = 0;
done:
    free(ai);
    free(ord);
    free(cn);
    free(arcs);
    return result;
}

size_t psdl_junction_pool_bound(const psdl_junction *j) {
    assert(j);
    return psdl_fans_bound(j->size.surface, 0);
}

size_t psdl_junction_pool(uint32_t *refs, uint32_t *fans, psdl_pool *vpool, const psdl_junction *j, double snap) {
    assert(refs && fans && vpool && j);
    for (size_t i = 0; i < j->size.points; i++)
        if ((refs[i] = psdl_pool_add_snapped(vpool, j->points + 3 * i, snap)) == UINT32_MAX) return PSDL_GEOM_NOMEM;
    size_t ns = j->size.surface;
    double *sp = (double *)malloc((3 * ns + 1) * sizeof *sp);
    double *extra = (double *)malloc(3 * (ns + 1) * sizeof *extra);
    uint32_t *f = (uint32_t *)malloc((psdl_fans_bound(ns, 0) + 1) * sizeof *f);
    uint32_t *xref = NULL;
    size_t result = PSDL_GEOM_NOMEM;
    if (!sp || !extra || !f) goto done;
    for (size_t i = 0; i < ns; i++) memcpy(sp + 3 * i, j->points + 3 * (size_t)j->surface[i], 3 * sizeof *sp);
    size_t ne = 0, w = psdl_fans(f, extra, &ne, sp, ns, NULL, 0, 0);
    if (w == PSDL_GEOM_NOMEM || w == PSDL_GEOM_INVALID) {
        result = w;
        goto done;
    }
    xref = (uint32_t *)malloc((ne + 1) * sizeof *xref);
    if (!xref) goto done;
    for (size_t k = 0; k < ne; k++)
        if ((xref[k] = psdl_pool_add_snapped(vpool, extra + 3 * k, snap)) == UINT32_MAX) goto done;
    for (size_t i = 0; i < w;) {
        size_t m = f[i];
        fans[i] = f[i];
        for (size_t k = 1; k <= m; k++) {
            uint32_t v = f[i + k];
            fans[i + k] = v < ns ? refs[j->surface[v]] : xref[v - ns];
        }
        i += 1 + m;
    }
    result = w;
done:
    free(sp);
    free(extra);
    free(f);
    free(xref);
    return result;
}
