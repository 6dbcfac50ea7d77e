/* psdl_drivable.c -- drivability rules: what a car meets in a city that loads.
 *
 * The game finds the car's room by walking neighbour links and testing perimeters
 * (psdl-format.md §1.5, cityLevel::FindRoomId); a hole is where the car falls out of the
 * world, an overlap where it is in two rooms at once, floor outside its room is drawn and
 * collided in the wrong room. Rules (docs/validate.md lists them with their thresholds):
 *
 *   nonfinite          ERROR  NaN or infinite vertex, height, bound or lane value
 *   empty_city         ERROR  no room at all
 *   perimeter_crossing ERROR  two edges of one perimeter cross
 *   perimeter_spike    WARN   the outline turns back on itself (two edges within 2 degrees)
 *   perimeter_kink     WARN   a short edge (< 0.5 m) between two hairpin turns (< 30 degrees)
 *   room_overlap       ERROR  two non-warp rooms overlap by more than 0.5 m²
 *   hole               ERROR above 1 m², WARN above 0.01 m²: ground enclosed by the
 *                      non-warp rooms that no room's perimeter holds
 *   edge_gap           WARN   an enclosed gap of at most 0.01 m² but wider than 2 cm, or an edge
 *                             linked to a neighbour lying more than 2 cm off its perimeter
 *   floor_outside      WARN above 1 %, ERROR above 25 % of a floor attribute's plan area
 *                      more than 5 cm outside its room
 *   unreachable        ERROR for road (0x08) and intersection (0x10) rooms, WARN for others:
 *                      no chain of neighbour links from the largest road room reaches it
 *
 * Every problem carries the room ids and a position in metres (x, z of the plan).
 * Work is linear in the size of the city apart from sorting: rooms and perimeter points go
 * into uniform spatial grids, pairs of rooms are only looked at when their boxes share a
 * cell, and per-room work is bounded by the 255-point perimeter limit (§3.2).
 */
#include "psdl_internal.h"
#include "psdl_geom.h"
#include "psdl_segment.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FLAG_ROAD 0x08u
#define FLAG_INTERSECTION 0x10u
#define FLAG_WARP 0x40u

#define OVERLAP_AREA 0.5      /* m² */
#define HOLE_ERROR_AREA 1.0   /* m² */
#define HOLE_WARN_AREA 0.01   /* m² */
#define GAP_WIDTH 0.02        /* m */
#define FLOOR_TOLERANCE 0.05  /* m outside the room that still counts as inside */
#define FLOOR_WARN 0.01       /* fraction of the attribute's area */
#define FLOOR_ERROR 0.25
#define SPIKE_DEG 2.0
#define KINK_DEG 30.0
#define KINK_EDGE 0.5         /* m */
#define JOIN_TOL 0.002        /* m: a vertex this near an edge splits it (T-junction) */
#define COORD_LIMIT 1e7       /* m: beyond this a coordinate is treated as unusable */
#define PI 3.14159265358979323846

/* ------------------------------------------------------------------ reporting */

typedef psdl_check_run dctx;

#define ERR PSDL_SEV_ERROR
#define WARN PSDL_SEV_WARNING

static void dreport(dctx *c, psdl_severity sev, const char *rule, long room, long other, long attr,
                    int has_pos, double x, double z, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 11, 12)))
#endif
    ;

static void dreport(dctx *c, psdl_severity sev, const char *rule, long room, long other, long attr,
                    int has_pos, double x, double z, const char *path, const char *fmt, ...) {
    psdl_problem p;
    if (!psdl_problem_begin(c, &p, sev, rule, room, other, attr, -1)) return;
    if (has_pos && !(isfinite(x) && isfinite(z))) has_pos = 0;
    p.has_position = has_pos;
    p.x = has_pos ? x : 0;
    p.z = has_pos ? z : 0;
    va_list ap;
    va_start(ap, fmt);
    psdl_problem_vsend(c, &p, path, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ rooms in plan */

typedef struct droom {
    uint32_t off, n;   /* points pts[2*off ..], counter-clockwise in (x, z), no repeats */
    double area;       /* > 0, m² */
    double minx, minz, maxx, maxz;
    double cx, cz;     /* area centroid */
    int usable;        /* finite, in range, >= 3 points, non-zero area */
    int broken;        /* a perimeter vertex missing or not finite: min/max hold the others' box */
    int warp;
    uint32_t tri_off, ntri; /* triangulation: tris[3*tri_off ..] indices into the room's points */
    int tri_done;
} droom;

typedef struct plan {
    const psdl_doc *doc;
    uint32_t nrooms;
    droom *rooms;
    double *pts;      /* x, z pairs */
    uint32_t *orig;   /* perimeter index of each point */
    uint32_t npts;
    uint32_t *tris;
    uint32_t ntris, captris;
    uint32_t maxn;    /* largest cleaned perimeter */
    double *scratch;  /* clipping buffers: 2 x (4 * maxn + 64) points */
} plan;

static double cross2(double ax, double az, double bx, double bz) { return ax * bz - az * bx; }

/* fmin and fmax for numbers known to be no NaN (inlined; fmin is a library call). */
static double dmin(double a, double b) { return b < a ? b : a; }
static double dmax(double a, double b) { return b > a ? b : a; }

/* Length of (x, z) (no overflow care needed: coordinates are below COORD_LIMIT). */
static double dist2(double x, double z) { return sqrt(x * x + z * z); }

static int finite_vec(const psdl_vec3 *p) { return isfinite(p->x) && isfinite(p->y) && isfinite(p->z); }

/* Where a plan's perimeters come from: the rooms 1.. of a document, or a list of rooms
 * given as perimeters over a point array (psdl_check_overlaps: list entry i is room i + 1). */
typedef struct ring_src {
    const psdl_doc *doc;
    const double *pts; /* x, y, z */
    size_t npts;
    const uint32_t *start, *verts;
    const unsigned char *warp;
} ring_src;

static uint32_t src_count(const ring_src *s, uint32_t r) {
    if (s->doc) return s->doc->rooms[r].nperimeter;
    return s->start[r] - s->start[r - 1];
}

/* Point k of room r's perimeter in (x, z): 0 when its vertex is missing or not finite. */
static int src_point(const ring_src *s, uint32_t r, uint32_t k, double *x, double *z) {
    if (s->doc) {
        const psdl_doc *d = s->doc;
        uint16_t vi = d->rooms[r].perimeter[k].vertex;
        if (vi >= d->nvertices || !finite_vec(&d->vertices[vi])) return 0;
        *x = d->vertices[vi].x, *z = d->vertices[vi].z;
        return 1;
    }
    uint32_t vi = s->verts[s->start[r - 1] + k];
    if (vi >= s->npts) return 0;
    const double *p = &s->pts[3 * (size_t)vi];
    if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) return 0;
    *x = p[0], *z = p[2];
    return 1;
}

static int src_warp(const ring_src *s, uint32_t r) {
    if (s->doc) return (s->doc->rooms[r].flags & FLAG_WARP) != 0;
    return s->warp && s->warp[r - 1];
}

/* Fill the plan of rooms 1 .. nrooms - 1: cleaned, counter-clockwise perimeters. Returns 0
 * when out of memory. */
static int plan_build_src(plan *P, const ring_src *src, uint32_t nrooms) {
    memset(P, 0, sizeof *P);
    P->doc = src->doc;
    P->nrooms = nrooms;
    size_t total = 0;
    for (uint32_t r = 1; r < nrooms; r++) total += src_count(src, r);
    P->rooms = calloc(nrooms ? nrooms : 1, sizeof *P->rooms);
    P->pts = malloc((total + 1) * 2 * sizeof(double));
    P->orig = malloc((total + 1) * sizeof(uint32_t));
    if (!P->rooms || !P->pts || !P->orig) return 0;
    uint32_t at = 0;
    for (uint32_t r = 1; r < nrooms; r++) {
        uint32_t count = src_count(src, r);
        droom *R = &P->rooms[r];
        R->off = at;
        R->warp = src_warp(src, r);
        int ok = 1;
        uint32_t n = 0;
        for (uint32_t k = 0; k < count; k++) {
            double x, z;
            if (!src_point(src, r, k, &x, &z) || fabs(x) > COORD_LIMIT || fabs(z) > COORD_LIMIT) {
                ok = 0;
                break;
            }
            if (n > 0 && P->pts[2 * (at + n - 1)] == x && P->pts[2 * (at + n - 1) + 1] == z) continue;
            P->pts[2 * (at + n)] = x;
            P->pts[2 * (at + n) + 1] = z;
            P->orig[at + n] = k;
            n++;
        }
        while (ok && n > 1 && P->pts[2 * at] == P->pts[2 * (at + n - 1)] &&
               P->pts[2 * at + 1] == P->pts[2 * (at + n - 1) + 1])
            n--;
        if (!ok) { /* the box of what can be read: no hole is concluded there */
            R->minx = R->minz = INFINITY, R->maxx = R->maxz = -INFINITY;
            for (uint32_t k = 0; k < count; k++) {
                double x, z;
                if (!src_point(src, r, k, &x, &z)) continue;
                R->minx = fmin(R->minx, x), R->maxx = fmax(R->maxx, x);
                R->minz = fmin(R->minz, z), R->maxz = fmax(R->maxz, z);
            }
            R->broken = 1;
        }
        if (!ok || n < 3) {
            R->n = 0;
            continue;
        }
        double *p = &P->pts[2 * at];
        double s = 0, cx = 0, cz = 0;
        R->minx = R->maxx = p[0];
        R->minz = R->maxz = p[1];
        for (uint32_t i = 0; i < n; i++) {
            const double *a = &p[2 * i], *b = &p[2 * ((i + 1) % n)];
            double c = cross2(a[0], a[1], b[0], b[1]);
            s += c;
            cx += (a[0] + b[0]) * c;
            cz += (a[1] + b[1]) * c;
            R->minx = dmin(R->minx, a[0]), R->maxx = dmax(R->maxx, a[0]);
            R->minz = dmin(R->minz, a[1]), R->maxz = dmax(R->maxz, a[1]);
        }
        if (!(fabs(s) > 1e-9)) { /* no area (a bow tie, a sliver): only the shape rules look at it */
            R->n = n;
            at += n;
            if (n > P->maxn) P->maxn = n;
            continue;
        }
        R->cx = cx / (3 * s);
        R->cz = cz / (3 * s);
        if (s < 0) { /* reverse to counter-clockwise */
            for (uint32_t i = 0, j = n - 1; i < j; i++, j--) {
                double tx = p[2 * i], tz = p[2 * i + 1];
                p[2 * i] = p[2 * j], p[2 * i + 1] = p[2 * j + 1];
                p[2 * j] = tx, p[2 * j + 1] = tz;
                uint32_t t = P->orig[at + i];
                P->orig[at + i] = P->orig[at + j];
                P->orig[at + j] = t;
            }
        }
        R->area = fabs(s) / 2;
        R->n = n;
        R->usable = 1;
        at += n;
        if (n > P->maxn) P->maxn = n;
    }
    P->npts = at;
    /* clipping buffers for polygons of up to 2 * maxn points (grown rooms) */
    P->scratch = malloc((size_t)2 * (8 * (size_t)P->maxn + 64) * 2 * sizeof(double));
    return P->scratch != NULL;
}

/* The plan of a document's rooms. */
static int plan_build(plan *P, const psdl_doc *d) {
    ring_src s;
    memset(&s, 0, sizeof s);
    s.doc = d;
    return plan_build_src(P, &s, d->nrooms);
}

static void plan_free(plan *P) {
    free(P->rooms);
    free(P->pts);
    free(P->orig);
    free(P->tris);
    free(P->scratch);
}

/* Crossing-number test (§1.5, PointInPerimeter) against a room's cleaned perimeter. */
static int point_in_room(const plan *P, const droom *R, double x, double z) {
    if (!R->usable || x < R->minx || x > R->maxx || z < R->minz || z > R->maxz) return 0;
    const double *p = &P->pts[2 * R->off];
    int in = 0;
    for (uint32_t i = 0, j = R->n - 1; i < R->n; j = i++) {
        double xi = p[2 * i], zi = p[2 * i + 1], xj = p[2 * j], zj = p[2 * j + 1];
        if ((zi > z) != (zj > z) && x < (xj - xi) * (z - zi) / (zj - zi) + xi) in = !in;
    }
    return in;
}

/* Triangulation of a room (ear clipping, psdl_triangulate) after dropping zero-width
 * spikes (a point whose edges run exactly back on each other adds no area, and defeats ear
 * clipping). A room whose perimeter still cannot be triangulated (it crosses itself, which
 * perimeter_crossing reports) gets no triangles: overlap_area then works from the other
 * room. Returns 0 when out of memory. */
static int room_triangles(plan *P, uint32_t r) {
    droom *R = &P->rooms[r];
    if (R->tri_done) return 1;
    R->tri_done = 1;
    R->ntri = 0;
    uint32_t n = R->n;
    if (P->ntris + n > P->captris) {
        uint32_t cap = P->captris ? P->captris * 2 : 1024;
        while (cap < P->ntris + n) cap *= 2;
        uint32_t *t = realloc(P->tris, (size_t)cap * 3 * sizeof(uint32_t));
        if (!t) return 0;
        P->tris = t;
        P->captris = cap;
    }
    double *xyz = malloc((size_t)n * 3 * sizeof(double));
    uint32_t *keep = malloc((size_t)n * sizeof(uint32_t));
    if (!xyz || !keep) {
        free(xyz);
        free(keep);
        return 0;
    }
    const double *p = &P->pts[2 * R->off];
    uint32_t m = 0;
    for (uint32_t pass = 0; pass < 2; pass++) { /* the second pass settles the wrap-around */
        uint32_t src_n = pass == 0 ? n : m;
        m = 0;
        for (uint32_t k = 0; k < src_n; k++) {
            uint32_t i = pass == 0 ? k : keep[k];
            keep[m++] = i;
            while (m >= 3) {
                const double *a = &p[2 * keep[m - 3]], *b = &p[2 * keep[m - 2]], *c = &p[2 * keep[m - 1]];
                double ux = b[0] - a[0], uz = b[1] - a[1], wx = c[0] - b[0], wz = c[1] - b[1];
                double cr = cross2(ux, uz, wx, wz);
                int same = c[0] == a[0] && c[1] == a[1];
                if (!same && !(fabs(cr) <= 1e-9 * dist2(ux, uz) * dist2(wx, wz) && ux * wx + uz * wz < 0)) break;
                /* b is the tip of a spike: drop it (and a, when the spike returns onto it) */
                keep[m - 2] = keep[m - 1];
                m--;
                if (same) m--;
            }
        }
        if (pass == 0 && m >= 3) { /* rotate so the wrap-around is checked inside the list */
            uint32_t h = m / 2;
            for (uint32_t k = 0; k < m; k++) xyz[k] = keep[(k + h) % m];
            for (uint32_t k = 0; k < m; k++) keep[k] = (uint32_t)xyz[k];
        }
    }
    size_t k = 0;
    if (m >= 3) {
        for (uint32_t i = 0; i < m; i++) {
            xyz[3 * i] = p[2 * keep[i]];
            xyz[3 * i + 1] = 0;
            xyz[3 * i + 2] = p[2 * keep[i] + 1];
        }
        uint32_t *dst = &P->tris[3 * (size_t)P->ntris];
        k = psdl_triangulate(dst, xyz, m, NULL, 0);
        if (k == PSDL_GEOM_NOMEM) {
            free(xyz);
            free(keep);
            return 0;
        }
        if (k == PSDL_GEOM_INVALID || k > m) k = 0;
        for (size_t t = 0; t < 3 * k; t++) dst[t] = keep[dst[t]];
    }
    free(xyz);
    free(keep);
    R->tri_off = P->ntris;
    R->ntri = (uint32_t)k;
    P->ntris += (uint32_t)k;
    return 1;
}

/* Area (and area-weighted centroid sums) of polygon poly[0..n-1] (x, z pairs, any simple
 * or self-touching ring) inside the triangle t (x, z pairs): Sutherland-Hodgman with the
 * convex triangle as the clip window, which gives the exact area for a concave subject.
 * buf holds 2 x (4n + 64) points. */
static double clip_tri(const double *poly, uint32_t n, const double t[6], double *buf, double *sx, double *sz) {
    double tri[6];
    memcpy(tri, t, sizeof tri);
    if (cross2(tri[2] - tri[0], tri[3] - tri[1], tri[4] - tri[0], tri[5] - tri[1]) < 0) {
        double a = tri[2], b = tri[3];
        tri[2] = tri[4], tri[3] = tri[5], tri[4] = a, tri[5] = b;
    }
    size_t cap = 4 * (size_t)n + 64;
    double *in = buf, *out = buf + 2 * cap;
    const double *src = poly;
    uint32_t m = n;
    for (int e = 0; e < 3 && m > 0; e++) {
        double ax = tri[2 * e], az = tri[2 * e + 1], bx = tri[(2 * e + 2) % 6], bz = tri[(2 * e + 3) % 6];
        double ex = bx - ax, ez = bz - az;
        uint32_t k = 0;
        for (uint32_t i = 0; i < m; i++) {
            const double *p = &src[2 * i], *q = &src[2 * ((i + 1) % m)];
            double dp = cross2(ex, ez, p[0] - ax, p[1] - az), dq = cross2(ex, ez, q[0] - ax, q[1] - az);
            if (dp >= 0) {
                if (k + 2 > cap) return 0;
                out[2 * k] = p[0], out[2 * k + 1] = p[1], k++;
            }
            if ((dp >= 0) != (dq >= 0)) {
                double f = dp / (dp - dq);
                if (k + 2 > cap) return 0;
                out[2 * k] = p[0] + f * (q[0] - p[0]), out[2 * k + 1] = p[1] + f * (q[1] - p[1]), k++;
            }
        }
        m = k;
        src = out;
        double *sw = in;
        in = out;
        out = sw;
    }
    double s = 0, cx = 0, cz = 0;
    for (uint32_t i = 0; i < m; i++) {
        const double *a = &src[2 * i], *b = &src[2 * ((i + 1) % m)];
        double c = cross2(a[0], a[1], b[0], b[1]);
        s += c, cx += (a[0] + b[0]) * c, cz += (a[1] + b[1]) * c;
    }
    if (s < 0) s = -s, cx = -cx, cz = -cz;
    if (sx) *sx += cx / 6, *sz += cz / 6;
    return s / 2;
}

/* ------------------------------------------------------------------ spatial grid of rooms */

typedef struct grid {
    double x0, z0, cell;
    int nx, nz;
    uint32_t *start; /* nx * nz + 1 */
    uint32_t *items;
} grid;

static int cell_of(double v, double v0, double cell, int n) {
    double c = (v - v0) / cell;
    if (!(c > 0)) return 0;
    if (c >= n - 1) return n - 1;
    return (int)c;
}

static void grid_size(grid *g, double minx, double minz, double maxx, double maxz, double count, double cell) {
    double w = maxx - minx, h = maxz - minz;
    if (!(cell > 0)) cell = 1;
    double lim = count * 2 + 16;
    if (lim > 4e6) lim = 4e6;
    while ((w / cell + 1) * (h / cell + 1) > lim) cell *= 1.5;
    g->x0 = minx, g->z0 = minz, g->cell = cell;
    g->nx = (int)(w / cell) + 1;
    g->nz = (int)(h / cell) + 1;
}

/* Grid of usable rooms by bounding box. Returns 0 when out of memory. */
static int grid_rooms(grid *g, const plan *P) {
    memset(g, 0, sizeof *g);
    double minx = INFINITY, minz = INFINITY, maxx = -INFINITY, maxz = -INFINITY, sum = 0;
    uint32_t cnt = 0;
    for (uint32_t r = 1; r < P->nrooms; r++) {
        const droom *R = &P->rooms[r];
        if (!R->usable) continue;
        minx = dmin(minx, R->minx), maxx = dmax(maxx, R->maxx);
        minz = dmin(minz, R->minz), maxz = dmax(maxz, R->maxz);
        sum += (R->maxx - R->minx) + (R->maxz - R->minz);
        cnt++;
    }
    if (!cnt) {
        minx = minz = 0, maxx = maxz = 1;
        cnt = 1;
    }
    grid_size(g, minx, minz, maxx, maxz, cnt, sum / (2.0 * cnt));
    size_t ncell = (size_t)g->nx * g->nz;
    g->start = calloc(ncell + 1, sizeof(uint32_t));
    if (!g->start) return 0;
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t r = 1; r < P->nrooms; r++) {
            const droom *R = &P->rooms[r];
            if (!R->usable) continue;
            int x0 = cell_of(R->minx, g->x0, g->cell, g->nx), x1 = cell_of(R->maxx, g->x0, g->cell, g->nx);
            int z0 = cell_of(R->minz, g->z0, g->cell, g->nz), z1 = cell_of(R->maxz, g->z0, g->cell, g->nz);
            for (int cz = z0; cz <= z1; cz++)
                for (int cx = x0; cx <= x1; cx++) {
                    size_t c = (size_t)cz * g->nx + cx;
                    if (pass == 0)
                        g->start[c + 1]++, total++;
                    else
                        g->items[g->start[c]++] = r;
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < ncell; c++) g->start[c + 1] += g->start[c];
            g->items = malloc((total + 1) * sizeof(uint32_t));
            if (!g->items) return 0;
        } else {
            for (size_t c = ncell; c > 0; c--) g->start[c] = g->start[c - 1];
            g->start[0] = 0;
        }
    }
    return 1;
}

static void grid_free(grid *g) {
    free(g->start);
    free(g->items);
}

/* The first usable room (other than skip) that holds (x, z); warp: -1 any, 0 only non-warp,
 * 1 only warp. Returns 0 when none. */
static uint32_t room_at(const plan *P, const grid *g, double x, double z, uint32_t skip, int warp) {
    int cx = cell_of(x, g->x0, g->cell, g->nx), cz = cell_of(z, g->z0, g->cell, g->nz);
    size_t c = (size_t)cz * g->nx + cx;
    for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++) {
        uint32_t r = g->items[k];
        if (r == skip) continue;
        if (warp >= 0 && P->rooms[r].warp != warp) continue;
        if (point_in_room(P, &P->rooms[r], x, z)) return r;
    }
    return 0;
}

/* ------------------------------------------------------------------ numbers */

/* A float for a message: "NaN", "+Infinity", "-Infinity" or %g. */
static const char *num_text(char *buf, size_t cap, double v) {
    if (isnan(v)) return "NaN";
    if (isinf(v)) return v > 0 ? "+Infinity" : "-Infinity";
    snprintf(buf, cap, "%g", v);
    return buf;
}

static void check_numbers(dctx *c) {
    const psdl_doc *d = c->doc;
    char path[96];
    for (uint32_t i = 0; i < d->nvertices; i++)
        if (!finite_vec(&d->vertices[i])) {
            char b1[32], b2[32], b3[32];
            snprintf(path, sizeof path, "vertices[%lu]", (unsigned long)i + 1);
            dreport(c, ERR, "nonfinite", -1, -1, -1, 0, 0, 0, path,
                    "vertex (%s, %s, %s) is not finite: the game reads it for drawing, collision and room "
                    "finding (§4.1)",
                    num_text(b1, sizeof b1, d->vertices[i].x), num_text(b2, sizeof b2, d->vertices[i].y),
                    num_text(b3, sizeof b3, d->vertices[i].z));
        }
    for (uint32_t i = 0; i < d->nheights; i++)
        if (!isfinite(d->heights[i])) {
            snprintf(path, sizeof path, "heights[%lu]", (unsigned long)i + 1);
            char b1[32];
            dreport(c, ERR, "nonfinite", -1, -1, -1, 0, 0, 0, path,
                    "height %s is not finite: facades, slivers and roofs read it (§1.2)",
                    num_text(b1, sizeof b1, d->heights[i]));
        }
    if (d->has_tail) {
        const psdl_vec3 *b[3] = {&d->bounds_min, &d->bounds_max, &d->sphere_center};
        const char *names[3] = {"bounds.min", "bounds.max", "bounds.center"};
        for (int k = 0; k < 3; k++)
            if (!finite_vec(b[k]))
                dreport(c, ERR, "nonfinite", -1, -1, -1, 0, 0, 0, names[k],
                        "bounding value is not a finite number (§1.6)");
        if (!isfinite(d->sphere_radius))
            dreport(c, ERR, "nonfinite", -1, -1, -1, 0, 0, 0, "bounds.radius",
                    "bounding radius is not a finite number (§1.6)");
    }
    for (uint32_t i = 0; i < d->nroads; i++) {
        const psdl_road *rd = &d->roads[i];
        for (unsigned k = 0; k < (unsigned)rd->nleft + rd->nright; k++)
            if (!isfinite(rd->lane_values[k])) {
                snprintf(path, sizeof path, "roads[%lu].lanes[%u]", (unsigned long)i + 1, k + 1);
                char b1[32];
                dreport(c, ERR, "nonfinite", -1, -1, -1, 0, 0, 0, path,
                        "lane value %s is not finite: the traffic code reads it (§1.7)",
                        num_text(b1, sizeof b1, rd->lane_values[k]));
            }
    }
    if (d->nrooms <= 1)
        dreport(c, ERR, "empty_city", -1, -1, -1, 0, 0, 0, "rooms",
                "the city has no room: the game has nowhere to put the car (§1.1)");
}

/* ------------------------------------------------------------------ perimeter shape */

static void check_shapes(dctx *c, const plan *P) {
    char path[96];
    const double cspike = cos(SPIKE_DEG * PI / 180), ckink = cos(KINK_DEG * PI / 180);
    size_t cap = (size_t)P->maxn * 3 + 3;
    double *xyz = malloc(cap * sizeof(double));
    if (!xyz) return;
    for (uint32_t r = 1; r < P->nrooms && !c->stop; r++) {
        const droom *R = &P->rooms[r];
        if (R->n < 3) continue; /* usable, or readable with no area */
        const double *p = &P->pts[2 * R->off];
        uint32_t n = R->n;
        /* self-crossing */
        for (uint32_t i = 0; i < n; i++) xyz[3 * i] = p[2 * i], xyz[3 * i + 1] = 0, xyz[3 * i + 2] = p[2 * i + 1];
        uint32_t e[2];
        size_t k = psdl_self_crossing(e, xyz, n, NULL, 0, 1e-6);
        if (k == 1) {
            const double *a = &p[2 * e[0]], *b = &p[2 * ((e[0] + 1) % n)];
            const double *q = &p[2 * e[1]], *s = &p[2 * ((e[1] + 1) % n)];
            double d1x = b[0] - a[0], d1z = b[1] - a[1], d2x = s[0] - q[0], d2z = s[1] - q[1];
            double den = cross2(d1x, d1z, d2x, d2z);
            double t = den != 0 ? cross2(q[0] - a[0], q[1] - a[1], d2x, d2z) / den : 0.5;
            double x = a[0] + t * d1x, z = a[1] + t * d1z;
            snprintf(path, sizeof path, "rooms[%lu].perimeter[%lu]", (unsigned long)r,
                     (unsigned long)P->orig[R->off + e[0]] + 1);
            dreport(c, ERR, "perimeter_crossing", (long)r, -1, -1, 1, x, z, path,
                    "perimeter crosses itself at (%.2f, %.2f) (edges from points %lu and %lu): the game's "
                    "point-in-perimeter test gives the wrong room there (§1.5)",
                    x, z, (unsigned long)P->orig[R->off + e[0]] + 1, (unsigned long)P->orig[R->off + e[1]] + 1);
        }
        /* spikes and kinks */
        int spikes = 0, kinks = 0;
        for (uint32_t i = 0; i < n; i++) {
            const double *a = &p[2 * ((i + n - 1) % n)], *b = &p[2 * i], *q = &p[2 * ((i + 1) % n)];
            double ux = a[0] - b[0], uz = a[1] - b[1], wx = q[0] - b[0], wz = q[1] - b[1];
            double lu = dist2(ux, uz), lw = dist2(wx, wz);
            if (lu <= 0 || lw <= 0) continue;
            double cb = (ux * wx + uz * wz) / (lu * lw);
            if (cb >= cspike) {
                if (spikes++ == 0) {
                    snprintf(path, sizeof path, "rooms[%lu].perimeter[%lu]", (unsigned long)r,
                             (unsigned long)P->orig[R->off + i] + 1);
                    dreport(c, WARN, "perimeter_spike", (long)r, -1, -1, 1, b[0], b[1], path,
                            "perimeter runs %.2f m out and straight back at (%.2f, %.2f): a zero-width spike "
                            "(edges within %.0f degrees)",
                            fmin(lu, lw), b[0], b[1], SPIKE_DEG);
                }
                continue;
            }
            /* kink: short edge b -> q between hairpin turns at b and q */
            if (cb >= ckink && lw < KINK_EDGE) {
                const double *s = &p[2 * ((i + 2) % n)];
                double vx = b[0] - q[0], vz = b[1] - q[1], yx = s[0] - q[0], yz = s[1] - q[1];
                double lv = dist2(vx, vz), ly = dist2(yx, yz);
                if (lv > 0 && ly > 0 && (vx * yx + vz * yz) / (lv * ly) >= ckink && kinks++ == 0) {
                    snprintf(path, sizeof path, "rooms[%lu].perimeter[%lu]", (unsigned long)r,
                             (unsigned long)P->orig[R->off + i] + 1);
                    dreport(c, WARN, "perimeter_kink", (long)r, -1, -1, 1, b[0], b[1], path,
                            "perimeter folds back and forth at (%.2f, %.2f): a %.2f m edge between two "
                            "hairpin turns (under %.0f degrees)",
                            b[0], b[1], lw, KINK_DEG);
                }
            }
        }
    }
    free(xyz);
}

/* ------------------------------------------------------------------ overlaps */

/* The first pass over a pair (check_overlaps): within SKIP_LIMIT m of the origin, the
 * triangles of one room that the other lies beside (wholly on the outer side of one of the
 * triangle's edge lines, or within SKIP_GAP m of it: shared corners give exactly 0) are not
 * clipped. A skipped triangle holds at most a strip of the other room SKIP_GAP wide (with
 * the cross product's rounding, under 1.5e-11 m) along an edge under 46,341 m, wound at
 * most 127 times by a perimeter of 255 points: for the 253 triangles of a room, under
 * 0.07 m² together with clip_tri's rounding on them (each term within 2^28 m² x 2^-53, at
 * most 4 x 255 + 64 points a clip). A pair whose first pass measures at most SKIP_AREA is
 * therefore not above OVERLAP_AREA when measured whole; only the others are measured whole
 * (the same area, position and message as without the first pass). */
#define SKIP_LIMIT 16384.0
#define SKIP_GAP 1e-11
#define SKIP_AREA 0.25

/* Whether the nb points pb lie on the outer side of an edge line of triangle t (within
 * SKIP_GAP m of it). */
static int tri_beside(const double t[6], const double *pb, uint32_t nb) {
    double s = cross2(t[2] - t[0], t[3] - t[1], t[4] - t[0], t[5] - t[1]);
    double sgn = s > 0 ? 1 : s < 0 ? -1 : 0;
    if (sgn == 0) return 0;
    for (int e = 0; e < 3; e++) {
        const double *a = &t[2 * e], *b = &t[2 * ((e + 1) % 3)];
        double ex = sgn * (b[0] - a[0]), ez = sgn * (b[1] - a[1]), lim = SKIP_GAP * dist2(ex, ez);
        uint32_t k = 0;
        while (k < nb && cross2(ex, ez, pb[2 * k] - a[0], pb[2 * k + 1] - a[1]) <= lim) k++;
        if (k == nb) return 1;
    }
    return 0;
}

/* Area of rooms a and b in common; centroid sums in *sx, *sz. -1 when out of memory.
 * beside: skip the triangles the other room lies beside (tri_beside; the first pass). */
static double overlap_area(plan *P, uint32_t a, uint32_t b, double *sx, double *sz, int beside) {
    if (P->rooms[a].n > P->rooms[b].n) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    if (!room_triangles(P, a)) return -1;
    if (P->rooms[a].ntri == 0) { /* a cannot be triangulated: work from b */
        uint32_t t = a;
        a = b;
        b = t;
        if (!room_triangles(P, a)) return -1;
    }
    const droom *A = &P->rooms[a], *B = &P->rooms[b];
    const double *pa = &P->pts[2 * A->off], *pb = &P->pts[2 * B->off];
    double area = 0;
    for (uint32_t t = 0; t < A->ntri; t++) {
        const uint32_t *ix = &P->tris[3 * (size_t)(A->tri_off + t)];
        double tri[6] = {pa[2 * ix[0]], pa[2 * ix[0] + 1], pa[2 * ix[1]], pa[2 * ix[1] + 1],
                         pa[2 * ix[2]], pa[2 * ix[2] + 1]};
        double x0 = dmin(tri[0], dmin(tri[2], tri[4])), x1 = dmax(tri[0], dmax(tri[2], tri[4]));
        double z0 = dmin(tri[1], dmin(tri[3], tri[5])), z1 = dmax(tri[1], dmax(tri[3], tri[5]));
        if (x1 <= B->minx || x0 >= B->maxx || z1 <= B->minz || z0 >= B->maxz) continue;
        if (beside && tri_beside(tri, pb, B->n)) continue;
        area += clip_tri(pb, B->n, tri, P->scratch, sx, sz);
    }
    return area;
}

/* Whether both rooms' boxes lie within SKIP_LIMIT m of the origin. */
static int near_origin(const droom *A, const droom *B) {
    double m = dmax(dmax(dmax(fabs(A->minx), fabs(A->maxx)), dmax(fabs(A->minz), fabs(A->maxz))),
                    dmax(dmax(fabs(B->minx), fabs(B->maxx)), dmax(fabs(B->minz), fabs(B->maxz))));
    return m <= SKIP_LIMIT;
}

static int check_overlaps(dctx *c, plan *P, const grid *g) {
    char path[96];
    for (int cz = 0; cz < g->nz && !c->stop; cz++)
        for (int cx = 0; cx < g->nx; cx++) {
            size_t cell = (size_t)cz * g->nx + cx;
            for (uint32_t i = g->start[cell]; i < g->start[cell + 1]; i++) {
                uint32_t a = g->items[i];
                const droom *A = &P->rooms[a];
                if (A->warp) continue;
                for (uint32_t j = i + 1; j < g->start[cell + 1]; j++) {
                    uint32_t b = g->items[j];
                    const droom *B = &P->rooms[b];
                    if (B->warp) continue;
                    double ix0 = dmax(A->minx, B->minx), ix1 = dmin(A->maxx, B->maxx);
                    double iz0 = dmax(A->minz, B->minz), iz1 = dmin(A->maxz, B->maxz);
                    if (!(ix1 > ix0 && iz1 > iz0) || (ix1 - ix0) * (iz1 - iz0) <= OVERLAP_AREA) continue;
                    /* each pair once: in the cell of the boxes' common corner */
                    if (cell_of(ix0, g->x0, g->cell, g->nx) != cx || cell_of(iz0, g->z0, g->cell, g->nz) != cz)
                        continue;
                    double sx = 0, sz = 0, area;
                    if (near_origin(A, B)) { /* the first pass: no report can come of a pair it clears */
                        area = overlap_area(P, a, b, &sx, &sz, 1);
                        if (area < 0) return 0;
                        if (area <= SKIP_AREA) continue;
                        sx = sz = 0;
                    }
                    area = overlap_area(P, a, b, &sx, &sz, 0);
                    if (area < 0) return 0;
                    if (area > OVERLAP_AREA) {
                        uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
                        snprintf(path, sizeof path, "rooms[%lu].perimeter", (unsigned long)lo);
                        dreport(c, ERR, "room_overlap", (long)lo, (long)hi, -1, 1, sx / area, sz / area, path,
                                "rooms %lu and %lu overlap by %.2f m² around (%.2f, %.2f); neither is a warp room "
                                "(flag 0x40), so the car is in two rooms at once (§3.3 item 10)",
                                (unsigned long)lo, (unsigned long)hi, area, sx / area, sz / area);
                    }
                }
            }
        }
    return 1;
}

/* ------------------------------------------------------------------ holes */

/* An edge in millimetres. In the hash the key is undirected, a the lower end: count copies
 * run a -> b (first from room), back copies b -> a (first from room_b). As a boundary edge
 * it is directed a -> b. */
typedef struct bedge {
    int64_t ax, az, bx, bz;
    uint32_t room, room_b;
    uint32_t count, back;
    int used;
} bedge;

/* v in millimetres, rounded half away from zero: llround's result without its library call
 * (|v| <= COORD_LIMIT here, so v * 1000 and the truncated integer are exact in a double and
 * the fraction x - i is exact too). */
static int64_t qmm(double v) {
    double x = v * 1000.0;
    int64_t i = (int64_t)x;
    double f = x - (double)i;
    if (f >= 0.5)
        i++;
    else if (f <= -0.5)
        i--;
    return i;
}

static uint64_t mix64(uint64_t h) { /* splitmix64's finaliser */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

static uint64_t hash_edge(int64_t ax, int64_t az, int64_t bx, int64_t bz) {
    uint64_t h = mix64((uint64_t)ax + 0x9e3779b97f4a7c15ull);
    h = mix64(h ^ (uint64_t)az);
    h = mix64(h ^ (uint64_t)bx);
    return mix64(h ^ (uint64_t)bz);
}

/* Open-addressing table of the sub-edges: slot i holds the 1-based index of an edge in
 * `edges` (0: empty) and the upper half of its key's hash, so that most probes compare
 * 8 bytes of a small table instead of a 56-byte record. The slot of a key (hash & mask,
 * linear probing, the capacity and growth rule below) fixes the order in which the
 * uncovered edges are collected, and so the order of the loops and of their problems. */
typedef struct hslot {
    uint32_t idx, fp;
} hslot;

typedef struct ehash {
    hslot *slots;
    size_t mask, n;
    bedge *edges; /* n used, in insertion order */
    size_t cap;
    int nomem;
} ehash;

/* The edge with key (ax, az, bx, bz) (hv: its hash_edge), added (zeroed counts) when insert
 * and absent; NULL when absent and !insert, or out of memory. */
static bedge *ehash_find(ehash *h, uint64_t hv, int64_t ax, int64_t az, int64_t bx, int64_t bz, int insert) {
    uint32_t fp = (uint32_t)(hv >> 32);
    size_t i = (size_t)hv & h->mask;
    for (;;) {
        hslot *s = &h->slots[i];
        if (s->idx == 0) {
            if (!insert) return NULL;
            if (h->n == h->cap) {
                size_t cap = h->cap ? h->cap * 2 : 1024;
                bedge *e2 = realloc(h->edges, cap * sizeof *e2);
                if (!e2) {
                    h->nomem = 1;
                    return NULL;
                }
                h->edges = e2;
                h->cap = cap;
            }
            bedge *e = &h->edges[h->n++];
            memset(e, 0, sizeof *e);
            e->ax = ax, e->az = az, e->bx = bx, e->bz = bz;
            s->idx = (uint32_t)h->n;
            s->fp = fp;
            return e;
        }
        if (s->fp == fp) {
            bedge *e = &h->edges[s->idx - 1];
            if (e->ax == ax && e->az == az && e->bx == bx && e->bz == bz) return e;
        }
        i = (i + 1) & h->mask;
    }
}

/* Double the table: the slots are visited in order and their keys placed again, as a table
 * of records would be rebuilt. Returns 0 when out of memory. */
static int ehash_grow(ehash *h) {
    size_t ncap = (h->mask + 1) * 2;
    hslot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return 0;
    for (size_t s = 0; s <= h->mask; s++) {
        if (!h->slots[s].idx) continue;
        const bedge *e = &h->edges[h->slots[s].idx - 1];
        uint64_t hv = hash_edge(e->ax, e->az, e->bx, e->bz);
        size_t i = (size_t)hv & (ncap - 1);
        while (ns[i].idx) i = (i + 1) & (ncap - 1);
        ns[i] = h->slots[s];
    }
    free(h->slots);
    h->slots = ns;
    h->mask = ncap - 1;
    return 1;
}

/* A sub-edge waiting for its turn in the table (check_holes): its key in the table's
 * direction (a before b), its hash, whether it runs b -> a, and its room. The sub-edges of a
 * room are collected first so that the table's slots for the next ones are fetched while
 * one is placed; they are placed in the order they were found, so the table is the same. */
typedef struct pend_edge {
    int64_t ax, az, bx, bz;
    uint64_t hv;
    uint32_t room;
    int back;
} pend_edge;

/* Hint the processor to fetch the cache line at p (no effect on results). */
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* Place the pending sub-edges pe[0 .. n-1] in the table, in order: the table grows when
 * half full (before the insertion that would pass it), a key's first sub-edge in each
 * direction sets that direction's room. Returns 0 when out of memory. */
static int place_pending(ehash *h, const pend_edge *pe, size_t n) {
    enum { AHEAD = 8 };
    for (size_t j = 0; j < n && j < AHEAD; j++) PREFETCH(&h->slots[(size_t)pe[j].hv & h->mask]);
    for (size_t j = 0; j < n; j++) {
        if (j + AHEAD < n) PREFETCH(&h->slots[(size_t)pe[j + AHEAD].hv & h->mask]);
        const pend_edge *q = &pe[j];
        if (h->n * 2 >= h->mask && !ehash_grow(h)) return 0;
        bedge *d = ehash_find(h, q->hv, q->ax, q->az, q->bx, q->bz, 1);
        if (!d) return 0;
        if (!q->back) {
            if (d->count++ == 0) d->room = q->room;
        } else {
            if (d->back++ == 0) d->room_b = q->room;
        }
    }
    return 1;
}

typedef struct splitpt {
    double t;
    double x, z;
} splitpt;

static int cmp_split(const void *a, const void *b) {
    double x = ((const splitpt *)a)->t, y = ((const splitpt *)b)->t;
    return x < y ? -1 : x > y;
}

static int cmp_bedge(const void *a, const void *b) {
    const bedge *x = a, *y = b;
    if (x->ax != y->ax) return x->ax < y->ax ? -1 : 1;
    if (x->az != y->az) return x->az < y->az ? -1 : 1;
    return 0;
}

/* The first boundary edge that starts at (x, z) (edges sorted by start), or nb. */
static size_t first_from(const bedge *e, size_t nb, int64_t x, int64_t z) {
    size_t lo = 0, hi = nb;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e[mid].ax < x || (e[mid].ax == x && e[mid].az < z))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int point_in_loop(const double *q, size_t m, double x, double z) {
    int in = 0;
    for (size_t i = 0, j = m - 1; i < m; j = i++) {
        double xi = q[2 * i], zi = q[2 * i + 1], xj = q[2 * j], zj = q[2 * j + 1];
        if ((zi > z) != (zj > z) && x < (xj - xi) * (z - zi) / (zj - zi) + xi) in = !in;
    }
    return in;
}

/* Report one closed uncovered loop (clockwise: a hole) if it is one. */
static void hole_loop(dctx *c, const plan *P, const grid *g, const bedge *e, const size_t *loop, size_t m,
                      double *q) {
    double s = 0, perim = 0;
    for (size_t i = 0; i < m; i++) {
        q[2 * i] = (double)e[loop[i]].ax / 1000.0;
        q[2 * i + 1] = (double)e[loop[i]].az / 1000.0;
    }
    for (size_t i = 0; i < m; i++) {
        const double *a = &q[2 * i], *b = &q[2 * ((i + 1) % m)];
        s += cross2(a[0], a[1], b[0], b[1]);
        perim += dist2(b[0] - a[0], b[1] - a[1]);
    }
    if (!(s < 0)) return; /* an outer boundary of the city */
    double area = -s / 2;
    /* width: twice the area over the perimeter, the mean width of a long gap */
    double width = 2 * area / perim;
    if (area <= HOLE_WARN_AREA && width <= GAP_WIDTH) return;
    /* a point inside the loop, on the uncovered side of an edge: the right of its direction */
    double px = 0, pz = 0;
    int found = 0;
    double off = fmin(fmax(width * 0.25, 1e-4), 0.5);
    for (int tries = 0; tries < 3 && !found; tries++) {
        for (size_t i = 0; i < m && !found; i++) {
            const double *a = &q[2 * i], *b = &q[2 * ((i + 1) % m)];
            double ex = b[0] - a[0], ez = b[1] - a[1], l = dist2(ex, ez);
            if (l < 4 * off) continue;
            double x = (a[0] + b[0]) / 2 + ez / l * off, z = (a[1] + b[1]) / 2 - ex / l * off;
            if (point_in_loop(q, m, x, z)) px = x, pz = z, found = 1;
        }
        off /= 4;
    }
    if (!found) return;
    /* covered after all (rooms overlapping, or a bridge or tunnel room over it): not a hole */
    if (room_at(P, g, px, pz, 0, -1)) return;
    /* where a room's perimeter cannot be read (reported as vertex_index or nonfinite) */
    for (uint32_t r = 1; r < P->nrooms; r++) {
        const droom *R = &P->rooms[r];
        if (R->broken && px >= R->minx - 1 && px <= R->maxx + 1 && pz >= R->minz - 1 && pz <= R->maxz + 1) return;
    }
    uint32_t rooms[8];
    size_t nr = 0;
    for (size_t i = 0; i < m && nr < 8; i++) {
        uint32_t r = e[loop[i]].room;
        size_t k = 0;
        while (k < nr && rooms[k] != r) k++;
        if (k == nr) rooms[nr++] = r;
    }
    char list[64];
    size_t at = 0;
    list[0] = 0;
    for (size_t k = 0; k < nr && at < sizeof list - 12; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%lu", k ? ", " : "", (unsigned long)rooms[k]);
    char path[96];
    snprintf(path, sizeof path, "rooms[%lu].perimeter", (unsigned long)rooms[0]);
    if (area > HOLE_WARN_AREA)
        dreport(c, area > HOLE_ERROR_AREA ? ERR : WARN, "hole", (long)rooms[0], nr > 1 ? (long)rooms[1] : -1, -1, 1,
                px, pz, path,
                "%.2f m² of ground around (%.2f, %.2f), about %.2f m wide, lies in no room (bordered by rooms "
                "%s): the car falls out of the world there",
                area, px, pz, width, list);
    else
        dreport(c, WARN, "edge_gap", (long)rooms[0], nr > 1 ? (long)rooms[1] : -1, -1, 1, px, pz, path,
                "a gap about %.3f m wide (%.4f m²) at (%.2f, %.2f) between rooms %s lies in no room", width, area, px,
                pz, list);
}

/* Holes: the perimeter edges of the non-warp rooms, split where another room's corner lies
 * on them, cancel in pairs where two rooms share them; what is left bounds the city and its
 * holes. Loops of it wound clockwise are holes. Returns 0 when out of memory. */
static int check_holes(dctx *c, const plan *P, const grid *g) {
    int ok = 0;
    uint32_t *pstart = NULL, *pitems = NULL;
    splitpt *sp = NULL;
    bedge *bound = NULL;
    pend_edge *pe = NULL;
    uint64_t *odd = NULL;
    size_t *loop = NULL;
    double *q = NULL;
    ehash h;
    memset(&h, 0, sizeof h);
    /* grid of the non-warp rooms' points */
    grid pg;
    memset(&pg, 0, sizeof pg);
    size_t npts = 0;
    double minx = INFINITY, minz = INFINITY, maxx = -INFINITY, maxz = -INFINITY, len = 0;
    for (uint32_t r = 1; r < P->nrooms; r++) {
        const droom *R = &P->rooms[r];
        if (!R->usable || R->warp) continue;
        npts += R->n;
        minx = dmin(minx, R->minx), maxx = dmax(maxx, R->maxx);
        minz = dmin(minz, R->minz), maxz = dmax(maxz, R->maxz);
        for (uint32_t i = 0; i < R->n; i++) {
            const double *a = &P->pts[2 * (R->off + i)], *b = &P->pts[2 * (R->off + (i + 1) % R->n)];
            len += dist2(b[0] - a[0], b[1] - a[1]);
        }
    }
    if (npts == 0) return 1;
    grid_size(&pg, minx - 1, minz - 1, maxx + 1, maxz + 1, (double)npts, fmax(len / npts, 0.5));
    size_t ncell = (size_t)pg.nx * pg.nz;
    pstart = calloc(ncell + 1, sizeof *pstart);
    pitems = malloc(npts * sizeof *pitems);
    if (!pstart || !pitems) goto done;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t r = 1; r < P->nrooms; r++) {
            const droom *R = &P->rooms[r];
            if (!R->usable || R->warp) continue;
            for (uint32_t i = 0; i < R->n; i++) {
                const double *a = &P->pts[2 * (R->off + i)];
                size_t cidx = (size_t)cell_of(a[1], pg.z0, pg.cell, pg.nz) * pg.nx + cell_of(a[0], pg.x0, pg.cell, pg.nx);
                if (pass == 0)
                    pstart[cidx + 1]++;
                else
                    pitems[pstart[cidx]++] = R->off + i;
            }
        }
        if (pass == 0)
            for (size_t k = 0; k < ncell; k++) pstart[k + 1] += pstart[k];
        else {
            for (size_t k = ncell; k > 0; k--) pstart[k] = pstart[k - 1];
            pstart[0] = 0;
        }
    }
    /* hash of directed sub-edges */
    size_t cap = 64;
    while (cap < npts * 2) cap *= 2;
    h.slots = calloc(cap, sizeof *h.slots);
    h.mask = cap - 1;
    h.cap = npts;
    h.edges = malloc(h.cap * sizeof *h.edges);
    if (!h.edges) goto done;
    size_t spcap = 64, pecap = 0, npe = 0;
    sp = malloc(spcap * sizeof *sp);
    if (!h.slots || !sp) goto done;
    for (uint32_t r = 1; r < P->nrooms; r++) {
        const droom *R = &P->rooms[r];
        if (!R->usable || R->warp) continue;
        npe = 0;
        int64_t qbx = 0, qbz = 0; /* the previous edge's end, quantized: this edge's start */
        for (uint32_t i = 0; i < R->n; i++) {
            const double *a = &P->pts[2 * (R->off + i)], *b = &P->pts[2 * (R->off + (i + 1) % R->n)];
            double ex = b[0] - a[0], ez = b[1] - a[1], l2 = ex * ex + ez * ez;
            size_t ns = 0;
            sp[ns].t = 0, sp[ns].x = a[0], sp[ns].z = a[1], ns++;
            /* points on the edge: the cells along it, row by row */
            double z0 = dmin(a[1], b[1]) - JOIN_TOL, z1 = dmax(a[1], b[1]) + JOIN_TOL;
            int r0 = cell_of(z0, pg.z0, pg.cell, pg.nz), r1 = cell_of(z1, pg.z0, pg.cell, pg.nz);
            for (int row = r0; row <= r1; row++) {
                double rz0 = pg.z0 + row * pg.cell - JOIN_TOL, rz1 = rz0 + pg.cell + 2 * JOIN_TOL;
                double xa, xb;
                if (ez == 0) {
                    xa = dmin(a[0], b[0]), xb = dmax(a[0], b[0]);
                } else {
                    double ta = (rz0 - a[1]) / ez, tb = (rz1 - a[1]) / ez;
                    double t0 = dmax(0, dmin(ta, tb)), t1 = dmin(1, dmax(ta, tb));
                    xa = dmin(a[0] + t0 * ex, a[0] + t1 * ex), xb = dmax(a[0] + t0 * ex, a[0] + t1 * ex);
                }
                int c0 = cell_of(xa - JOIN_TOL, pg.x0, pg.cell, pg.nx), c1 = cell_of(xb + JOIN_TOL, pg.x0, pg.cell, pg.nx);
                for (int col = c0; col <= c1; col++) {
                    size_t cidx = (size_t)row * pg.nx + col;
                    for (uint32_t k = pstart[cidx]; k < pstart[cidx + 1]; k++) {
                        const double *p = &P->pts[2 * pitems[k]];
                        double t = ((p[0] - a[0]) * ex + (p[1] - a[1]) * ez) / l2;
                        if (!(t > 1e-9 && t < 1 - 1e-9)) continue;
                        double dx = a[0] + t * ex - p[0], dz = a[1] + t * ez - p[1];
                        if (dx * dx + dz * dz > JOIN_TOL * JOIN_TOL) continue;
                        if (ns + 2 > spcap) {
                            splitpt *n2 = realloc(sp, spcap * 2 * sizeof *sp);
                            if (!n2) goto done;
                            sp = n2;
                            spcap *= 2;
                        }
                        sp[ns].t = t, sp[ns].x = p[0], sp[ns].z = p[1], ns++;
                    }
                }
            }
            sp[ns].t = 1, sp[ns].x = b[0], sp[ns].z = b[1], ns++;
            if (ns > 2) qsort(sp + 1, ns - 2, sizeof *sp, cmp_split);
            if (npe + ns > pecap) {
                size_t c2 = pecap ? pecap : 256;
                while (c2 < npe + ns) c2 *= 2;
                pend_edge *n2 = realloc(pe, c2 * sizeof *pe);
                if (!n2) goto done;
                pe = n2;
                pecap = c2;
            }
            /* the sub-edges between consecutive split points, quantized to millimetres (sp[0],
             * this edge's start, is the previous edge's end: quantized already) */
            int64_t ax = i ? qbx : qmm(sp[0].x), az = i ? qbz : qmm(sp[0].z);
            for (size_t k = 0; k + 1 < ns; k++) {
                int64_t bx = qmm(sp[k + 1].x), bz = qmm(sp[k + 1].z);
                if (!(ax == bx && az == bz)) {
                    pend_edge *pq = &pe[npe++];
                    pq->room = r;
                    pq->back = !(ax < bx || (ax == bx && az < bz));
                    if (!pq->back)
                        pq->ax = ax, pq->az = az, pq->bx = bx, pq->bz = bz;
                    else
                        pq->ax = bx, pq->az = bz, pq->bx = ax, pq->bz = az;
                    pq->hv = hash_edge(pq->ax, pq->az, pq->bx, pq->bz);
                }
                ax = bx, az = bz;
            }
            qbx = ax, qbz = az;
        }
        if (!place_pending(&h, pe, npe)) goto done;
    }
    /* what does not cancel: marked in a bit set over the edges (read in their own order),
     * then collected in the order of the table's slots */
    size_t nb = 0, bcap = 256;
    bound = malloc(bcap * sizeof *bound);
    odd = calloc(h.n / 64 + 1, sizeof *odd);
    if (!bound || !odd) goto done;
    for (size_t k = 0; k < h.n; k++)
        if (h.edges[k].count != h.edges[k].back) odd[k / 64] |= (uint64_t)1 << (k % 64);
    for (size_t s = 0; s <= h.mask; s++) {
        uint32_t idx = h.slots[s].idx;
        if (!idx || !(odd[(idx - 1) / 64] >> ((idx - 1) % 64) & 1)) continue; /* empty, or shared */
        const bedge *d = &h.edges[idx - 1];
        int fwd = d->count > d->back;
        uint32_t extra = fwd ? d->count - d->back : d->back - d->count;
        for (uint32_t k = 0; k < extra && k < 4; k++) {
            if (nb == bcap) {
                bedge *n2 = realloc(bound, bcap * 2 * sizeof *bound);
                if (!n2) goto done;
                bound = n2;
                bcap *= 2;
            }
            bedge *o = &bound[nb++];
            memset(o, 0, sizeof *o);
            if (fwd)
                o->ax = d->ax, o->az = d->az, o->bx = d->bx, o->bz = d->bz, o->room = d->room;
            else
                o->ax = d->bx, o->az = d->bz, o->bx = d->ax, o->bz = d->az, o->room = d->room_b;
        }
    }
    qsort(bound, nb, sizeof *bound, cmp_bedge);
    loop = malloc((nb + 1) * sizeof *loop);
    q = malloc((nb + 1) * 2 * sizeof *q);
    if (!loop || !q) goto done;
    for (size_t s0 = 0; s0 < nb && !c->stop; s0++) {
        if (bound[s0].used) continue;
        size_t m = 0, cur = s0;
        bound[cur].used = 1;
        loop[m++] = cur;
        int closed = 0;
        while (m <= nb) {
            const bedge *ce = &bound[cur];
            if (ce->bx == bound[s0].ax && ce->bz == bound[s0].az) {
                closed = 1;
                break;
            }
            double dx = (double)(ce->bx - ce->ax), dz = (double)(ce->bz - ce->az);
            size_t best = nb;
            double best_turn = INFINITY;
            for (size_t k = first_from(bound, nb, ce->bx, ce->bz); k < nb && bound[k].ax == ce->bx && bound[k].az == ce->bz;
                 k++) {
                if (bound[k].used) continue;
                double ox = (double)(bound[k].bx - bound[k].ax), oz = (double)(bound[k].bz - bound[k].az);
                double turn = atan2(cross2(dx, dz, ox, oz), dx * ox + dz * oz);
                if (turn >= PI - 1e-12) turn = PI;
                if (turn < best_turn) best_turn = turn, best = k;
            }
            if (best == nb) break;
            bound[best].used = 1;
            loop[m++] = best;
            cur = best;
        }
        if (closed && m >= 3) hole_loop(c, P, g, bound, loop, m, q);
    }
    ok = 1;
done:
    free(pstart);
    free(pitems);
    free(sp);
    free(pe);
    free(odd);
    free(h.slots);
    free(h.edges);
    free(bound);
    free(loop);
    free(q);
    return ok;
}

/* ------------------------------------------------------------------ gaps along linked edges */

/* Distance from (x, z) to the segment a-b (x, z pairs): psdl_seg_dist. */
static double seg_dist(const double *a, const double *b, double x, double z) {
    return psdl_seg_dist(x, z, a[0], a[1], b[0], b[1]);
}

/* Distance from (x, z) to the perimeter of room R. */
static double dist_to_room(const plan *P, const droom *R, double x, double z) {
    const double *p = &P->pts[2 * R->off];
    double best = INFINITY;
    for (uint32_t i = 0; i < R->n; i++) best = dmin(best, seg_dist(&p[2 * i], &p[2 * ((i + 1) % R->n)], x, z));
    return best;
}

/* Whether (x, z) lies within GAP_WIDTH of room R's perimeter: the distance to its edges in
 * turn (seg_dist, as dist_to_room measures it), stopping at the first near enough. */
static int near_room(const plan *P, const droom *R, double x, double z) {
    const double *p = &P->pts[2 * R->off];
    for (uint32_t i = 0; i < R->n; i++)
        if (seg_dist(&p[2 * i], &p[2 * ((i + 1) % R->n)], x, z) <= GAP_WIDTH) return 1;
    return 0;
}

/* Whether the edge a-b (plan points) of a room lies on room N's perimeter at both ends and
 * its middle m: a and b are N's points i and i + 1 (or i - 1) and m is within GAP_WIDTH of
 * that edge. Then none of the three is farther than GAP_WIDTH from N's perimeter, which is
 * all check_link_gaps needs to know about an edge the two rooms share. */
static int shared_edge(const plan *P, const droom *N, const double *a, const double *b, const double *m) {
    const double *p = &P->pts[2 * N->off];
    uint32_t n = N->n;
    for (uint32_t i = 0; i < n; i++) {
        if (p[2 * i] != a[0] || p[2 * i + 1] != a[1]) continue;
        const double *nx = &p[2 * ((i + 1) % n)], *pv = &p[2 * ((i + n - 1) % n)];
        if (nx[0] == b[0] && nx[1] == b[1]) return seg_dist(&p[2 * i], nx, m[0], m[1]) <= GAP_WIDTH;
        if (pv[0] == b[0] && pv[1] == b[1]) return seg_dist(pv, &p[2 * i], m[0], m[1]) <= GAP_WIDTH;
    }
    return 0;
}

/* An edge that names a neighbour (§1.5) should lie on that room's perimeter: where its ends
 * or middle are more than 2 cm from it, the two rooms leave a gap along the edge (or
 * overlap) however small its area. Once per pair of rooms. Most linked edges are shared
 * point for point (shared_edge) or near at all three points (near_room); only the others
 * are measured exactly (dist_to_room) for the message. */
static void check_link_gaps(dctx *c, const plan *P) {
    const psdl_doc *d = c->doc;
    char path[96];
    for (uint32_t r = 1; r < P->nrooms && !c->stop; r++) {
        const droom *R = &P->rooms[r];
        if (!R->usable) continue;
        const psdl_room *rm = &d->rooms[r];
        uint32_t reported = 0;
        for (uint32_t k = 0; k < rm->nperimeter && !c->stop; k++) {
            uint16_t nb = rm->perimeter[k].neighbour;
            if (nb == 0 || nb >= P->nrooms || nb == r || nb == reported || !P->rooms[nb].usable) continue;
            const psdl_vec3 *a = &d->vertices[rm->perimeter[k].vertex];
            const psdl_vec3 *b = &d->vertices[rm->perimeter[(k + 1) % rm->nperimeter].vertex];
            if (a->x == b->x && a->z == b->z) continue; /* a repeated point (§1.5) */
            double pts[3][2] = {{a->x, a->z}, {b->x, b->z}, {((double)a->x + b->x) / 2, ((double)a->z + b->z) / 2}};
            const droom *N = &P->rooms[nb];
            if (shared_edge(P, N, pts[0], pts[1], pts[2])) continue;
            if (near_room(P, N, pts[0][0], pts[0][1]) && near_room(P, N, pts[1][0], pts[1][1]) &&
                near_room(P, N, pts[2][0], pts[2][1]))
                continue;
            double worst = 0;
            int at = 0;
            for (int i = 0; i < 3; i++) {
                double dd = dist_to_room(P, N, pts[i][0], pts[i][1]);
                if (dd > worst) worst = dd, at = i;
            }
            if (worst > GAP_WIDTH) {
                reported = nb;
                snprintf(path, sizeof path, "rooms[%lu].perimeter[%lu].neighbour", (unsigned long)r,
                         (unsigned long)k + 1);
                dreport(c, WARN, "edge_gap", (long)r, (long)nb, -1, 1, pts[at][0], pts[at][1], path,
                        "this edge is linked to room %u but lies up to %.3f m off its perimeter, at (%.2f, %.2f): "
                        "a gap along the shared edge",
                        (unsigned)nb, worst, pts[at][0], pts[at][1]);
            }
        }
    }
}

/* ------------------------------------------------------------------ floor outside its room */

typedef struct tribuf {
    double *t; /* 6 doubles per triangle */
    size_t n, cap;
    int nomem;
} tribuf;

/* Room for n more triangles in b (nomem set when there is none). */
static int tri_reserve(tribuf *b, size_t n) {
    if (b->nomem) return 0;
    if (b->n + n <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    double *t = realloc(b->t, cap * 6 * sizeof(double));
    if (!t) {
        b->nomem = 1;
        return 0;
    }
    b->t = t;
    b->cap = cap;
    return 1;
}

/* Appends a triangle; tri_reserve made room for it. */
static void tri_add(tribuf *b, const psdl_vec3 *p, const psdl_vec3 *q, const psdl_vec3 *r) {
    double *d = &b->t[6 * b->n++];
    d[0] = p->x, d[1] = p->z, d[2] = q->x, d[3] = q->z, d[4] = r->x, d[5] = r->z;
}

static psdl_vec3 midv(const psdl_vec3 *a, const psdl_vec3 *b) {
    psdl_vec3 m = {(a->x + b->x) / 2, (a->y + b->y) / 2, (a->z + b->z) / 2};
    return m;
}

/* The floor triangles of one attribute in plan, as the game draws them at LOD 3 (the same
 * triangles lua/psdl/export.lua writes): strips as quad strips between columns (the road
 * surface in two halves meeting at the curbs' midpoint), fans from their hub, crosswalks as
 * a 4-point strip. Returns 0 for attributes that are not floors or use a vertex that is
 * missing or not finite (fin[v]: vertex v is finite, finite_vec, worked out once). */
static int floor_triangles(const psdl_doc *d, const unsigned char *fin, const psdl_attr *a, tribuf *b) {
    unsigned t = a->type;
    unsigned stride;
    switch (t) {
    case PSDL_ATTR_ROAD: stride = 4; break;
    case PSDL_ATTR_DIVIDED_ROAD: stride = 6; break;
    case PSDL_ATTR_SIDEWALK_STRIP:
    case PSDL_ATTR_WALKWAY: stride = 2; break;
    case PSDL_ATTR_CROSSWALK:
    case PSDL_ATTR_ROAD_FAN:
    case PSDL_ATTR_FAN: stride = 0; break;
    default: return 0;
    }
    for (uint32_t j = 0; j < a->nrefs; j++)
        if (a->refs[j] >= d->nvertices || !fin[a->refs[j]]) return 0;
    const psdl_vec3 *V = d->vertices;
#define RV(i) (&V[a->refs[i]])
    if (t == PSDL_ATTR_CROSSWALK) {
        if (a->nrefs < 4) return 0;
        if (!tri_reserve(b, 2)) return 1;
        tri_add(b, RV(1), RV(0), RV(3));
        tri_add(b, RV(0), RV(3), RV(2));
        return 1;
    }
    if (t == PSDL_ATTR_ROAD_FAN || t == PSDL_ATTR_FAN) {
        if (a->nrefs >= 3 && !tri_reserve(b, a->nrefs - 2)) return 1;
        for (uint32_t j = 1; j + 1 < a->nrefs; j++) tri_add(b, RV(0), RV(j), RV(j + 1));
        return 1;
    }
    if (t == PSDL_ATTR_SIDEWALK_STRIP && a->cap != PSDL_CAP_NONE) return 1; /* a cap has no plan area */
    uint32_t n = a->nrefs / stride;
    /* two triangles per column gap (a road's 4 columns are 5 with the midpoint) and section */
    if (n >= 2 && !tri_reserve(b, (size_t)(n - 1) * 2 * (t == PSDL_ATTR_ROAD ? 4 : stride - 1))) return 1;
    for (uint32_t i = 0; i + 1 < n; i++) {
        const uint16_t *s0 = &a->refs[i * stride], *s1 = &a->refs[(i + 1) * stride];
        psdl_vec3 c0[7], c1[7];
        unsigned nc = 0;
        if (t == PSDL_ATTR_ROAD) {
            c0[0] = V[s0[0]], c0[1] = V[s0[1]], c0[2] = midv(&V[s0[1]], &V[s0[2]]), c0[3] = V[s0[2]], c0[4] = V[s0[3]];
            c1[0] = V[s1[0]], c1[1] = V[s1[1]], c1[2] = midv(&V[s1[1]], &V[s1[2]]), c1[3] = V[s1[2]], c1[4] = V[s1[3]];
            nc = 5;
        } else {
            for (unsigned k = 0; k < stride; k++) c0[k] = V[s0[k]], c1[k] = V[s1[k]];
            nc = stride;
        }
        for (unsigned k = 0; k + 1 < nc; k++) {
            tri_add(b, &c0[k], &c0[k + 1], &c1[k]);
            tri_add(b, &c0[k + 1], &c1[k], &c1[k + 1]);
        }
    }
#undef RV
    return 1;
}

/* The edges of a grown room for tri_wound_once: per edge its start p, end q and box, 8
 * doubles (px, pz, qx, qz, min x, max x, min z, max z), ordered by min z (tri_wound_once
 * stops at the first edge above the triangle; the order changes none of its answers). */
static int cmp_edge_minz(const void *a, const void *b) {
    double x = ((const double *)a)[6], y = ((const double *)b)[6];
    return (x > y) - (x < y);
}

static void edge_boxes(double *ge, const double *g, uint32_t gn) {
    for (uint32_t i = 0, j = gn - 1; i < gn; j = i++) {
        const double *p = &g[2 * j], *q = &g[2 * i];
        double *e = &ge[8 * i];
        e[0] = p[0], e[1] = p[1], e[2] = q[0], e[3] = q[1];
        e[4] = p[0] < q[0] ? p[0] : q[0], e[5] = p[0] < q[0] ? q[0] : p[0];
        e[6] = p[1] < q[1] ? p[1] : q[1], e[7] = p[1] < q[1] ? q[1] : p[1];
    }
    qsort(ge, gn, 8 * sizeof(double), cmp_edge_minz);
}

/* Whether no edge of the grown room (ge: gn edges from edge_boxes) comes within mu of
 * triangle t, and the room winds once (either way) around it: then clipping the room by t
 * (clip_tri) gives the triangle's own area, up to rounding. An edge is clear of the
 * triangle when their boxes are mu apart, when the three corners lie more than mu on one
 * side of its line, or when both its ends lie more than mu outside one side of the triangle.
 * The winding number is taken at the centroid, which every edge then misses by at least mu. */
static int tri_wound_once(const double *ge, uint32_t gn, const double t[6], double mu) {
    double x0 = dmin(t[0], dmin(t[2], t[4])) - mu, x1 = dmax(t[0], dmax(t[2], t[4])) + mu;
    double z0 = dmin(t[1], dmin(t[3], t[5])) - mu, z1 = dmax(t[1], dmax(t[3], t[5])) + mu;
    double cx = (t[0] + t[2] + t[4]) / 3, cz = (t[1] + t[3] + t[5]) / 3;
    int wn = 0;
    /* only the edges whose z range meets [z0, z1]: an edge wholly above or below is clear of
     * the triangle's box and cannot cross the centroid's row (z0 < cz < z1, as mu exceeds
     * the rounding of the mean); edges are ordered by min z, so the first above ends it */
    uint32_t lo = 0, hi = gn;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (ge[8 * mid + 6] <= z1)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t i = 0; i < lo; i++) {
        const double *e = &ge[8 * i];
        if (e[7] < z0) continue;
        const double *p = e, *q = e + 2;
        if (!((e[5] < x0) | (e[4] > x1) | (e[7] < z0) | (e[6] > z1))) {
            double ex = q[0] - p[0], ez = q[1] - p[1], lim = mu * dist2(ex, ez);
            double d0 = cross2(ex, ez, t[0] - p[0], t[1] - p[1]), d1 = cross2(ex, ez, t[2] - p[0], t[3] - p[1]);
            double d2 = cross2(ex, ez, t[4] - p[0], t[5] - p[1]);
            if (!((d0 > lim && d1 > lim && d2 > lim) || (d0 < -lim && d1 < -lim && d2 < -lim))) {
                /* both ends outside one side of the triangle (corners a, b with the third, o, inside) */
                int clear = 0;
                for (int k = 0; k < 3 && !clear; k++) {
                    const double *a = &t[2 * k], *b = &t[2 * ((k + 1) % 3)], *o = &t[2 * ((k + 2) % 3)];
                    double fx = b[0] - a[0], fz = b[1] - a[1], fl = mu * dist2(fx, fz);
                    double so = cross2(fx, fz, o[0] - a[0], o[1] - a[1]);
                    double sp = cross2(fx, fz, p[0] - a[0], p[1] - a[1]), sq = cross2(fx, fz, q[0] - a[0], q[1] - a[1]);
                    if (so > 0 ? (sp < -fl && sq < -fl) : so < 0 ? (sp > fl && sq > fl) : 0) clear = 1;
                }
                if (!clear) return 0;
            }
        }
        if ((p[1] <= cz) != (q[1] <= cz)) { /* the edge crosses the centroid's row */
            double cr = cross2(q[0] - p[0], q[1] - p[1], cx - p[0], cz - p[1]);
            if (p[1] <= cz) wn += cr > 0;
            else wn -= cr < 0;
        }
    }
    return wn == 1 || wn == -1;
}

/* Bounds for the shortcuts of check_floors, from the largest coordinate m (metres) of the
 * document: mu, the margin by which a triangle must clear the grown room's edges (above the
 * float rounding of a road's midpoint, 2^-24 m), and err, a bound on clip_tri's rounding for
 * a triangle the room winds once around (a few ulps of m² for each of its up to 4 gn + 64
 * points, gn the grown room's). */
typedef struct floor_bounds {
    double mu, m2, err; /* err: for the room at hand (floor_bounds_room) */
} floor_bounds;

/* err for a grown room of gn points. */
static void floor_bounds_room(floor_bounds *fb, uint32_t gn) {
    fb->err = 64.0 * (4.0 * gn + 70) * DBL_EPSILON * fb->m2;
}

/* Whether the rounding a set of ntri triangles of plan area total (the sum check_floors
 * forms) could bring about a report when every one of them lies inside: the clip of each is
 * its area up to fb->err, and check_floors reports above 1 % outside; half of that is kept as
 * margin for the sums' own rounding. */
static int floor_sum_clear(const floor_bounds *fb, size_t ntri, double total, double inside) {
    if (!(isfinite(total) && total > 0)) return 1; /* check_floors reports nothing then either */
    double slack = (double)ntri * (fb->err + 4.0 * DBL_EPSILON * (total + fabs(inside)));
    return (total - inside) + slack < 0.5 * FLOOR_WARN * total;
}

/* Sum of the plan areas of tb's triangles as check_floors forms it (those over 1e-12 m²),
 * and their count in *ntri. */
static double floor_total(const tribuf *tb, size_t *ntri) {
    double total = 0;
    size_t k = 0;
    for (size_t i = 0; i < tb->n; i++) {
        const double *t = &tb->t[6 * i];
        double ar = fabs(cross2(t[2] - t[0], t[3] - t[1], t[4] - t[0], t[5] - t[1])) / 2;
        if (!(ar > 1e-12)) continue;
        total += ar;
        k++;
    }
    *ntri = k;
    return total;
}

/* Whether a floor attribute's triangles (tb) certainly lie inside the grown room g closely
 * enough that check_floors would report nothing: the triangles g winds once around
 * (tri_wound_once) count whole, the others are clipped. When not certain, check_floors
 * measures the attribute exactly. */
static int floor_certainly_inside(const plan *P, const double *g, const double *ge, uint32_t gn,
                                  const floor_bounds *fb, const tribuf *tb) {
    double total = 0, inside = 0;
    size_t ntri = 0;
    for (size_t i = 0; i < tb->n; i++) {
        const double *t = &tb->t[6 * i];
        double ar = fabs(cross2(t[2] - t[0], t[3] - t[1], t[4] - t[0], t[5] - t[1])) / 2;
        if (!(ar > 1e-12)) continue;
        total += ar;
        ntri++;
        inside += tri_wound_once(ge, gn, t, fb->mu) ? ar : clip_tri(g, gn, t, P->scratch, NULL, NULL);
    }
    return floor_sum_clear(fb, ntri, total, inside);
}

/* A convex grown room as half-planes: for edge i, the points v with
 * cross(e_i, v - p_i) > lim_i lie more than mu inside it. */
typedef struct halfplanes {
    double *h; /* px, pz, ex, ez, lim per edge */
    uint32_t n;
} halfplanes;

/* Fill hp from g (gn points, counter-clockwise) when g is convex: every turn to the left
 * (or straight on) and the edge directions change sign twice in x and twice in z (once
 * round). Returns 0 when g is not convex. */
static int halfplanes_of(halfplanes *hp, const double *g, uint32_t gn, double mu) {
    int sx = 0, sz = 0, fx = 0, fz = 0, px = 0, pz = 0;
    for (uint32_t i = 0; i < gn; i++) {
        const double *a = &g[2 * i], *b = &g[2 * ((i + 1) % gn)], *q = &g[2 * ((i + 2) % gn)];
        double ex = b[0] - a[0], ez = b[1] - a[1], wx = q[0] - b[0], wz = q[1] - b[1];
        double cr = cross2(ex, ez, wx, wz);
        if (!(cr > 0 || (cr == 0 && ex * wx + ez * wz > 0))) return 0;
        int dx = (ex > 0) - (ex < 0), dz = (ez > 0) - (ez < 0);
        if (dx) {
            if (px && dx != px) sx++;
            if (!fx) fx = dx;
            px = dx;
        }
        if (dz) {
            if (pz && dz != pz) sz++;
            if (!fz) fz = dz;
            pz = dz;
        }
        double *h = &hp->h[5 * i];
        h[0] = a[0], h[1] = a[1], h[2] = ex, h[3] = ez, h[4] = mu * dist2(ex, ez);
    }
    if (px && fx && px != fx) sx++; /* the change across the start */
    if (pz && fz && pz != fz) sz++;
    hp->n = gn;
    return sx == 2 && sz == 2;
}

/* Whether (x, z) lies more than mu inside every half-plane of hp. */
static int inside_halfplanes(const halfplanes *hp, double x, double z) {
    for (uint32_t i = 0; i < hp->n; i++) {
        const double *h = &hp->h[5 * i];
        if (!(cross2(h[2], h[3], x - h[0], z - h[1]) > h[4])) return 0;
    }
    return 1;
}

/* Whether every vertex attribute a references lies more than mu inside the convex grown
 * room hp; then so do its floor triangles, whose corners are those vertices or midpoints
 * of two of them (rounded to float, less than mu off). seen[v] == stamp marks the vertices
 * already found inside for this room. */
static int attr_inside_convex(const psdl_doc *d, const psdl_attr *a, const halfplanes *hp, uint32_t *seen,
                              uint32_t stamp) {
    for (uint32_t j = 0; j < a->nrefs; j++) {
        uint16_t v = a->refs[j];
        if (seen[v] == stamp) continue;
        if (!inside_halfplanes(hp, d->vertices[v].x, d->vertices[v].z)) return 0;
        seen[v] = stamp;
    }
    return 1;
}

static int check_floors(dctx *c, const plan *P) {
    char path[96];
    tribuf tb = {NULL, 0, 0, 0};
    const psdl_doc *d = c->doc;
    double *grow = malloc(((size_t)P->maxn * 2 + 2) * 2 * sizeof(double));
    halfplanes hp = {malloc(((size_t)P->maxn * 2 + 2) * 5 * sizeof(double)), 0};
    double *ge = malloc(((size_t)P->maxn * 2 + 2) * 8 * sizeof(double));
    uint32_t *seen = calloc(d->nvertices ? d->nvertices : 1, sizeof *seen);
    unsigned char *fin = malloc(d->nvertices ? d->nvertices : 1);
    if (!grow || !hp.h || !ge || !seen || !fin) {
        free(grow);
        free(hp.h);
        free(ge);
        free(seen);
        free(fin);
        return 0;
    }
    /* the shortcuts' margins from the largest coordinate (grown rooms reach 0.1 m further);
     * which vertices are finite, for floor_triangles */
    double m = 0;
    for (uint32_t i = 0; i < P->npts * 2; i++) m = dmax(m, fabs(P->pts[i]));
    for (uint32_t i = 0; i < d->nvertices; i++) {
        fin[i] = (unsigned char)finite_vec(&d->vertices[i]);
        if (fin[i]) m = dmax(m, dmax(fabs(d->vertices[i].x), fabs(d->vertices[i].z)));
    }
    m += 1;
    floor_bounds fb = {2e-7 * m, m * m, 0};
    for (uint32_t r = 1; r < P->nrooms && !c->stop; r++) {
        const droom *R = &P->rooms[r];
        if (!R->usable) continue;
        const psdl_room *rm = &d->rooms[r];
        /* the room grown by the tolerance: each edge moved out, joined by a mitre, or by a
         * bevel (two points) at a corner sharper than 90 degrees, where a mitre would reach far */
        const double *p = &P->pts[2 * R->off];
        uint32_t n = R->n, gn = 0;
        for (uint32_t i = 0; i < n; i++) {
            const double *a = &p[2 * ((i + n - 1) % n)], *b = &p[2 * i], *q = &p[2 * ((i + 1) % n)];
            double e1x = b[0] - a[0], e1z = b[1] - a[1], e2x = q[0] - b[0], e2z = q[1] - b[1];
            double l1 = dist2(e1x, e1z), l2 = dist2(e2x, e2z);
            double n1x = e1z / l1, n1z = -e1x / l1, n2x = e2z / l2, n2z = -e2x / l2; /* outward: right */
            double den = 1 + n1x * n2x + n1z * n2z;
            if (den < 1) {
                grow[2 * gn] = b[0] + FLOOR_TOLERANCE * n1x, grow[2 * gn + 1] = b[1] + FLOOR_TOLERANCE * n1z, gn++;
                grow[2 * gn] = b[0] + FLOOR_TOLERANCE * n2x, grow[2 * gn + 1] = b[1] + FLOOR_TOLERANCE * n2z, gn++;
            } else {
                grow[2 * gn] = b[0] + FLOOR_TOLERANCE * (n1x + n2x) / den;
                grow[2 * gn + 1] = b[1] + FLOOR_TOLERANCE * (n1z + n2z) / den;
                gn++;
            }
        }
        int convex = halfplanes_of(&hp, grow, gn, fb.mu), boxed = 0;
        floor_bounds_room(&fb, gn);
        for (uint32_t k = 0; k < rm->nattrs && !c->stop; k++) {
            const psdl_attr *a = &rm->attrs[k];
            tb.n = 0;
            if (!floor_triangles(d, fin, a, &tb) || tb.nomem || tb.n == 0) goto next;
            /* the shortcuts: no report can come of an attribute certainly inside */
            if (convex && attr_inside_convex(d, a, &hp, seen, r)) {
                size_t ntri;
                double total = floor_total(&tb, &ntri);
                if (floor_sum_clear(&fb, ntri, total, total)) goto next;
            }
            if (!boxed) edge_boxes(ge, grow, gn), boxed = 1;
            if (floor_certainly_inside(P, grow, ge, gn, &fb, &tb)) goto next;
            {
                double total = 0, inside = 0, sx = 0, sz = 0, tx = 0, tz = 0;
                for (size_t i = 0; i < tb.n; i++) {
                    const double *t = &tb.t[6 * i];
                    double ar = fabs(cross2(t[2] - t[0], t[3] - t[1], t[4] - t[0], t[5] - t[1])) / 2;
                    if (!(ar > 1e-12)) continue;
                    total += ar;
                    tx += ar * (t[0] + t[2] + t[4]) / 3, tz += ar * (t[1] + t[3] + t[5]) / 3;
                    inside += clip_tri(grow, gn, t, P->scratch, &sx, &sz);
                }
                double out = total - inside;
                if (isfinite(total) && total > 0 && out > FLOOR_WARN * total) {
                    double frac = out / total;
                    double px = (tx - sx) / out, pz = (tz - sz) / out;
                    snprintf(path, sizeof path, "rooms[%lu].attributes[%lu]", (unsigned long)r, (unsigned long)k + 1);
                    dreport(c, frac > FLOOR_ERROR ? ERR : WARN, "floor_outside", (long)r, -1, (long)k, 1, px, pz, path,
                            "%.1f %% of this %s (%.2f of %.2f m²) lies more than %.0f cm outside room %lu, around "
                            "(%.2f, %.2f): it is drawn and collided in the wrong room",
                            frac * 100, psdl_attr_type_name((int)a->type), out, total, FLOOR_TOLERANCE * 100,
                            (unsigned long)r, px, pz);
                }
            }
        next:
            if (tb.nomem) break;
            if (a->last) break;
        }
        if (tb.nomem) break;
    }
    int ok = !tb.nomem;
    free(tb.t);
    free(grow);
    free(hp.h);
    free(ge);
    free(seen);
    free(fin);
    return ok;
}

/* ------------------------------------------------------------------ reachability */

static int check_reach(dctx *c, const plan *P) {
    const psdl_doc *d = c->doc;
    char path[96];
    uint32_t start = 0;
    double best = -1;
    for (uint32_t r = 1; r < d->nrooms; r++)
        if ((d->rooms[r].flags & FLAG_ROAD) && P->rooms[r].usable && P->rooms[r].area > best)
            best = P->rooms[r].area, start = r;
    if (!start) return 1; /* no road room to start from */
    uint8_t *seen = calloc(d->nrooms, 1);
    uint32_t *queue = malloc((size_t)d->nrooms * sizeof *queue);
    if (!seen || !queue) {
        free(seen);
        free(queue);
        return 0;
    }
    size_t head = 0, tail = 0;
    queue[tail++] = start;
    seen[start] = 1;
    while (head < tail) {
        const psdl_room *rm = &d->rooms[queue[head++]];
        for (uint32_t k = 0; k < rm->nperimeter; k++) {
            uint16_t nb = rm->perimeter[k].neighbour;
            if (nb == 0 || nb >= d->nrooms || seen[nb]) continue;
            seen[nb] = 1;
            queue[tail++] = nb;
        }
    }
    for (uint32_t r = 1; r < d->nrooms && !c->stop; r++) {
        if (seen[r]) continue;
        uint8_t f = d->rooms[r].flags;
        int road = (f & (FLAG_ROAD | FLAG_INTERSECTION)) != 0;
        const droom *R = &P->rooms[r];
        snprintf(path, sizeof path, "rooms[%lu]", (unsigned long)r);
        dreport(c, road ? ERR : WARN, "unreachable", (long)r, (long)start, -1, R->usable, R->cx, R->cz, path,
                "%s room %lu cannot be reached from road room %lu (the largest) through neighbour links: the "
                "game walks links to find the car's room (§1.5)",
                (f & FLAG_INTERSECTION) ? "intersection" : (f & FLAG_ROAD) ? "road" : "non-road", (unsigned long)r,
                (unsigned long)start);
    }
    free(seen);
    free(queue);
    return 1;
}

/* ------------------------------------------------------------------ entry */

void psdl_check_drivable(const psdl_doc *doc, psdl_problem_fn fn, void *ud, psdl_validate_result *result) {
    psdl_validate_result local = {0, 0};
    if (!result) result = &local;
    dctx c = {doc, fn, ud, result, 0};
    check_numbers(&c);
    plan P;
    grid g;
    memset(&g, 0, sizeof g);
    int ok = plan_build(&P, doc) && grid_rooms(&g, &P);
    if (ok) check_shapes(&c, &P);
    if (ok && !c.stop) ok = check_overlaps(&c, &P, &g);
    if (ok && !c.stop) ok = check_holes(&c, &P, &g);
    if (ok && !c.stop) check_link_gaps(&c, &P);
    if (ok && !c.stop) ok = check_floors(&c, &P);
    if (ok && !c.stop) ok = check_reach(&c, &P);
    if (!ok)
        dreport(&c, ERR, "drivable_nomem", -1, -1, -1, 0, 0, 0, "rooms",
                "out of memory while checking drivability: the city was not fully checked");
    grid_free(&g);
    plan_free(&P);
}

int psdl_check_overlaps(const double *pts, size_t npts, const uint32_t *start, const uint32_t *verts, size_t nrooms,
                        const unsigned char *warp, psdl_problem_fn fn, void *ud, psdl_validate_result *result) {
    psdl_validate_result local = {0, 0};
    if (!result) result = &local;
    if (nrooms >= UINT32_MAX) return -1;
    dctx c = {NULL, fn, ud, result, 0};
    ring_src s = {NULL, pts, npts, start, verts, warp};
    plan P;
    grid g;
    memset(&g, 0, sizeof g);
    int ok = plan_build_src(&P, &s, (uint32_t)nrooms + 1) && grid_rooms(&g, &P);
    if (ok) ok = check_overlaps(&c, &P, &g);
    grid_free(&g);
    plan_free(&P);
    return ok ? 0 : -1;
}
