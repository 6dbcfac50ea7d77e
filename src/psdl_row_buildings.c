/*
 * psdl_row_buildings.c -- the buildings of psdl.city.blocks' rows, from a footprint to the
 * room store's records (see psdl_row_buildings.h). C99, no Lua.
 *
 * Every step repeats the Lua it replaces operation for operation: the generator is
 * random.lua's xoshiro256** (`R:fn`), the ground lookup is blocks/ground.lua's `sampler`,
 * the plan is blocks/buildings.lua's `Ctx:building`, the emission Builder:building's checks,
 * core.building (psdl_building) and store:building's records. A change to one of those must
 * change its twin here (the digests of spec/digest_spec.lua catch a difference).
 */
#include "psdl_row_buildings.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lua's math.max / math.min for two numbers (the second wins only when strictly larger /
 * smaller). */
static double lmax(double a, double b) { return b > a ? b : a; }
static double lmin(double a, double b) { return b < a ? b : a; }

/* ================================================================ the generator */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double psdl_xoshiro_float(void *ud) {
    uint64_t *s = ((psdl_xoshiro *)ud)->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return (double)(result >> 11) * (1.0 / 9007199254740992.0);
}

/* buildings.lua's rint: lo, or lo + floor(rng() * (hi - lo + 1)) when hi > lo. */
static double rint_draw(psdl_row_rng rng, void *ud, double lo, double hi) {
    if (hi <= lo) return lo;
    return lo + floor(rng(ud) * (hi - lo + 1));
}

/* buildings.lua's pick: list[rint(rng, 1, #list)], 0-based; a generator outside [0, 1)
 * cannot reach past the list (its pick is kept within it). */
static uint32_t pick(psdl_row_rng rng, void *ud, const uint32_t *list, size_t n) {
    double k = rint_draw(rng, ud, 1, (double)n);
    if (!(k >= 1)) k = 1;
    if (k > (double)n) k = (double)n;
    return list[(size_t)k - 1];
}

/* ================================================================ the ground */

static double min3(double a, double b, double c) { return lmin(lmin(a, b), c); }
static double max3(double a, double b, double c) { return lmax(lmax(a, b), c); }

void psdl_row_ground_cells(double *cells, const double *tris, size_t ntris) {
    assert((cells && tris) || ntris == 0);
    const double s = PSDL_ROW_GROUND_CELL;
    for (size_t i = 0; i < ntris; i++) {
        const double *t = tris + 9 * i;
        double *c = cells + 4 * i;
        c[0] = floor(min3(t[0], t[3], t[6]) / s);
        c[1] = floor(max3(t[0], t[3], t[6]) / s);
        c[2] = floor(min3(t[2], t[5], t[8]) / s);
        c[3] = floor(max3(t[2], t[5], t[8]) / s);
    }
}

double psdl_row_ground_at(const psdl_row_ground *g, double x, double z) {
    assert(g);
    if (g->flat) return g->y;
    const double s = PSDL_ROW_GROUND_CELL;
    double ci = floor(x / s), cj = floor(z / s);
    double bestd = HUGE_VAL, besty = 0;
    int have = 0;
    for (size_t i = 0; i < g->ntris; i++) {
        const double *c = g->cells + 4 * i;
        if (!(c[0] <= ci && ci <= c[1] && c[2] <= cj && cj <= c[3])) continue;
        const double *t = g->tris + 9 * i;
        double ax = t[0], az = t[2], bx = t[3], bz = t[5], cx = t[6], cz = t[8];
        double d = (bz - cz) * (ax - cx) + (cx - bx) * (az - cz);
        if (fabs(d) > 1e-12) {
            double l1 = ((bz - cz) * (x - cx) + (cx - bx) * (z - cz)) / d;
            double l2 = ((cz - az) * (x - cx) + (ax - cx) * (z - cz)) / d;
            double l3 = 1 - l1 - l2;
            double m = min3(l1, l2, l3);
            if (m >= -1e-6) return l1 * t[1] + l2 * t[4] + l3 * t[7];
            if (-m < bestd) bestd = -m, besty = l1 * t[1] + l2 * t[4] + l3 * t[7], have = 1;
        }
    }
    if (have) return besty;
    /* outside every triangle of the cell (a point on the rim): the nearest corner */
    double bd = HUGE_VAL, by = 0;
    for (size_t i = 0; i < g->ntris; i++) {
        const double *t = g->tris + 9 * i;
        for (int k = 0; k <= 6; k += 3) {
            double dx = t[k] - x, dz = t[k + 2] - z;
            double dd = dx * dx + dz * dz;
            if (dd < bd) bd = dd, by = t[k + 1];
        }
    }
    return by;
}

/* ================================================================ the plan */

int psdl_row_building_plan(const psdl_row_spec *s, const psdl_row_ground *g, psdl_row_rng rng, void *ud,
                           const double *fp, size_t n, double *outline, psdl_row_plan *p) {
    assert(s && g && rng && (fp || n == 0) && (outline || n == 0) && p);
    memset(p, 0, sizeof *p);
    double base = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        double x = fp[3 * i], z = fp[3 * i + 2];
        double y = floor(psdl_row_ground_at(g, x, z) * 1000 + 0.5) / 1000;
        outline[3 * i] = x, outline[3 * i + 1] = y, outline[3 * i + 2] = z;
        if (y > base) base = y;
    }
    double floors = rint_draw(rng, ud, s->floors_min, s->floors_max);
    double fh = s->floor_height;
    if (s->ndecks && n) { /* under a bridge deck: no taller than the clearance, or none */
        double bb[4];
        psdl_ring_box(bb, fp, n);
        double clear = HUGE_VAL;
        for (size_t k = 0; k < s->ndecks; k++) {
            const double *dp = s->deck_pts + 3 * s->deck_at[k];
            size_t dn = s->deck_at[k + 1] - s->deck_at[k];
            if (dn && psdl_rings_overlap(fp, n, bb, dp, dn, s->deck_box + 4 * k))
                clear = lmin(clear, s->deck_low[k] - base - s->deck_gap);
        }
        if (clear < HUGE_VAL) {
            if (clear < fh) {
                p->base = base, p->floors = floors;
                return 0;
            }
            if (base + floors * fh > base + clear) floors = lmax(1, lmin(floors, floor(clear / fh)));
        }
    }
    p->base = base;
    p->floors = floors;
    p->upper_floors = floors;
    p->floor_height = fh;
    p->facade = pick(rng, ud, s->facades, s->nfacades);
    p->roof = pick(rng, ud, s->roofs, s->nroofs);
    if (s->nground && floors >= 2) {
        p->ground_height = fh;
        p->ground = pick(rng, ud, s->ground_facades, s->nground);
        p->upper_floors = floors - 1;
    }
    return 1;
}

/* ================================================================ the records */

/* Appends one record; 0 or PSDL_ROW_NOMEM / PSDL_ROW_FULL. */
static int push(const psdl_row_target *t, const psdl_store_rec *rec, const uint32_t *refs, size_t n) {
    int e = psdl_store_push(t->store, t->room, rec, refs, n);
    if (e == PSDL_STORE_OK) return PSDL_ROW_OK;
    return e == PSDL_STORE_NOMEM ? PSDL_ROW_NOMEM : PSDL_ROW_FULL;
}

/* The attributes (6 words each, psdl_building's ops) and the roof's fans as store records,
 * as store:building (src/lpsdl_store.c) makes them from core.building's output. */
static int push_building(const psdl_row_target *t, const psdl_row_plan *p, uint32_t sliver, const uint32_t *ops,
                         size_t na, const uint32_t *roof, size_t nroof, double vground, double vupper,
                         psdl_row_built *out) {
    for (size_t i = 0; i < na; i++) {
        const uint32_t *a = ops + 6 * i;
        psdl_store_rec rec;
        memset(&rec, 0, sizeof rec);
        uint32_t refs[2] = {a[1] + 1, a[2] + 1};
        if (a[0] == PSDL_BUILDING_BOUND) {
            rec.type = PSDL_STORE_FACADE_BOUND;
            rec.param[0] = (double)a[5];
            rec.param[1] = (double)a[3] + 1;
            rec.aux = 3;
            out->runs++;
        } else if (a[0] == PSDL_BUILDING_SLIVER) {
            rec.type = PSDL_STORE_SLIVER;
            rec.group = sliver;
            rec.param[0] = (double)a[3] + 1;
            rec.param[1] = (double)a[4] + 1;
            rec.aux = 3;
            out->slivers++;
        } else {
            int ground = a[0] == PSDL_BUILDING_GROUND;
            rec.type = PSDL_STORE_FACADE;
            rec.group = ground ? p->ground : p->facade;
            rec.param[0] = (double)a[3] + 1;
            rec.param[1] = (double)a[4] + 1;
            rec.param[2] = (double)a[5];
            rec.param[3] = ground ? vground : vupper;
            rec.aux = 15;
            out->facades++;
        }
        int e = push(t, &rec, refs, 2);
        if (e) return e;
    }
    double hr = (double)roof[nroof - 1] + 1;
    uint32_t refs[64];
    for (size_t i = 0; i + 1 < nroof;) {
        size_t m = roof[i];
        uint32_t *buf = m <= 64 ? refs : (uint32_t *)malloc(m * sizeof *buf);
        if (!buf) return PSDL_ROW_NOMEM;
        for (size_t k = 0; k < m; k++) buf[k] = roof[i + 1 + k] + 1;
        psdl_store_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.type = PSDL_STORE_ROOF;
        rec.group = p->roof;
        rec.param[0] = hr;
        rec.aux = 1;
        int e = push(t, &rec, buf, m);
        if (buf != refs) free(buf);
        if (e) return e;
        i += 1 + m;
    }
    return PSDL_ROW_OK;
}

static int finite_float(double v) { return v >= -FLT_MAX && v <= FLT_MAX; }

int psdl_row_building_emit(const psdl_row_spec *s, const psdl_row_plan *p, const double *outline, size_t n,
                           const psdl_row_target *t, psdl_row_built *out) {
    assert(s && p && (outline || n == 0) && t && t->vpool && t->hpool && t->store && out);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < 3 * n; i++)
        if (!finite_float(outline[i])) return PSDL_ROW_RANGE;
    if (n < 3) return PSDL_ROW_NOROOF;
    if (s->refuse) return PSDL_ROW_REFUSED;
    double fh = p->floor_height, gh = p->ground_height, base = p->base;
    double top = base + gh + p->upper_floors * fh;
    out->top = top;
    if (!isfinite(top) || !isfinite(base + gh)) return PSDL_ROW_RANGE;
    if (!(top > base)) return PSDL_ROW_NOHEIGHT;
    if (top < base + gh) return PSDL_ROW_BELOW;
    if (gh > 0 && !(base + gh > base)) return PSDL_ROW_VANISH;
    double vup = lmax(1, floor((top - base - gh) / fh + 0.5));
    double vgh = lmax(1, floor(gh / fh + 0.5));
    if (vup > 32767 || vgh > 32767) {
        out->repeats = lmax(vup, vgh);
        return PSDL_ROW_REPEATS;
    }
    /* retail winding (Builder:building turns an outline with positive area round) */
    enum { SMALL = 32 };
    double pts_s[3 * SMALL];
    const double *pts = outline;
    double *rev = NULL;
    size_t rb = 0, ob = psdl_building_bound(n, 1, &rb);
    uint32_t ops_s[6 * 4 * SMALL], roof_s[4 * SMALL];
    uint32_t *ops = ops_s, *roof = roof_s;
    int result = PSDL_ROW_NOMEM;
    if (ob > sizeof ops_s / sizeof *ops_s) ops = (uint32_t *)malloc(ob * sizeof *ops);
    if (rb + 1 > sizeof roof_s / sizeof *roof_s) roof = (uint32_t *)malloc((rb + 1) * sizeof *roof);
    if (!ops || !roof) goto done;
    if (psdl_signed_area(outline, n) > 0) {
        rev = n <= SMALL ? pts_s : (double *)malloc(3 * n * sizeof *rev);
        if (!rev) goto done;
        for (size_t i = 0; i < n; i++) memcpy(rev + 3 * i, outline + 3 * (n - 1 - i), 3 * sizeof *rev);
        pts = rev;
    }
    psdl_building_opts o;
    memset(&o, 0, sizeof o);
    o.base = base;
    o.top = top;
    o.floor_height = fh;
    o.ground_height = gh;
    o.bay_width = s->bay_width;
    o.sliver_density = s->sliver_density;
    o.snap = t->snap;
    o.closed = 1;
    size_t nroof = 0;
    size_t na = psdl_building(ops, roof, &nroof, t->vpool, t->hpool, pts, n, &o);
    if (na == PSDL_GEOM_NOMEM) goto done;
    size_t count = psdl_pool_count(t->vpool);
    if (t->budget && count > t->budget) {
        out->reached = count;
        result = PSDL_ROW_BUDGET;
        goto done;
    }
    if (nroof <= 1) {
        result = PSDL_ROW_NOROOF;
        goto done;
    }
    result = push_building(t, p, s->sliver, ops, na, roof, nroof, vgh, vup, out);
done:
    if (ops != ops_s) free(ops);
    if (roof != roof_s) free(roof);
    if (rev != pts_s) free(rev);
    return result;
}
