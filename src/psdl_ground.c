/*
 * psdl_ground.c -- the ground of a block room: fans over pooled vertices into the room store
 * (psdl_ground.h). What Room:fan_refs (builder/room.lua) does for psdl.city.blocks, step for
 * step: the points of the references, the crossing and area tests, psdl_fans, the hub points
 * pooled in order, one fan record per fan; then the level test of blocks/ground.lua.
 */
#include "psdl_ground.h"

#include <assert.h>
#include <math.h>
#include <string.h>

size_t psdl_ground_bound(size_t n) { return psdl_fans_bound(n, 0); }

size_t psdl_ground_plan(uint32_t *fans, double *extra, size_t *nextra, double *pts, const psdl_pool *pool,
                        const uint32_t *refs, size_t n, int check) {
    assert(fans && extra && nextra && pts && pool && (refs || n == 0));
    *nextra = 0;
    size_t count = psdl_pool_count(pool);
    const float *v = psdl_pool_data(pool);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = refs[i];
        if (r < 1 || r > count) return PSDL_GROUND_BADREF;
        const float *p = v + 3 * (size_t)(r - 1);
        pts[3 * i] = (double)p[0], pts[3 * i + 1] = (double)p[1], pts[3 * i + 2] = (double)p[2];
    }
    if (n < 3) return PSDL_GROUND_NOAREA;
    if (check) {
        uint32_t e[2];
        size_t c = psdl_self_crossing(e, pts, n, NULL, 0, 1e-6);
        if (c == PSDL_GEOM_NOMEM) return c;
        if (c == 1) return PSDL_GROUND_CROSSING;
    }
    if (!(fabs(psdl_signed_area(pts, n)) > 1e-9)) return PSDL_GROUND_NOAREA;
    size_t w = psdl_fans(fans, extra, nextra, pts, n, NULL, 0, 0);
    if (w == PSDL_GEOM_NOMEM) return w;
    if (w == 0 || w == PSDL_GEOM_INVALID) return PSDL_GROUND_NOAREA;
    return w;
}

int psdl_ground_emit(psdl_store *s, size_t room, uint32_t group, psdl_pool *pool, const uint32_t *refs, size_t n,
                     const uint32_t *fans, size_t w, const double *extra, size_t nextra, double snap, uint32_t *hubs, uint32_t *out) {
    assert(s && pool && (refs || n == 0) && (fans || w == 0) && (extra || nextra == 0) && (hubs || nextra == 0) &&
           (out || w == 0));
    if (room < 1 || room > psdl_store_rooms(s)) return PSDL_STORE_RANGE;
    /* the plan's layout and indices first: nothing is changed for a bad plan */
    for (size_t i = 0; i < w;) {
        size_t m = fans[i];
        if (m < 3 || m > w - i - 1) return PSDL_STORE_RANGE;
        for (size_t k = 1; k <= m; k++)
            if (fans[i + k] >= n + nextra) return PSDL_STORE_RANGE;
        i += 1 + m;
    }
    /* the hubs, pooled in order (Builder:vertices_flat of the plan's extra points) */
    for (size_t j = 0; j < nextra; j++) {
        uint32_t r = psdl_pool_add_snapped(pool, extra + 3 * j, snap);
        if (r == UINT32_MAX) return PSDL_STORE_NOMEM;
        hubs[j] = r + 1;
    }
    for (size_t i = 0; i < w;) {
        size_t m = fans[i];
        out[i] = (uint32_t)m;
        for (size_t k = 1; k <= m; k++) {
            uint32_t x = fans[i + k];
            out[i + k] = x < n ? refs[x] : hubs[x - n];
        }
        i += 1 + m;
    }
    psdl_store_mark_t mk;
    psdl_store_mark(s, &mk);
    for (size_t i = 0; i < w;) {
        size_t m = out[i];
        psdl_store_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.type = PSDL_STORE_FAN;
        rec.group = group;
        int e = psdl_store_push(s, room, &rec, out + i + 1, m);
        if (e) {
            psdl_store_truncate(s, &mk);
            return e;
        }
        i += 1 + m;
    }
    return 0;
}

int psdl_ground_level(const psdl_pool *pool, const uint32_t *out, size_t w, float *y) {
    assert(pool && (out || w == 0) && y);
    size_t count = psdl_pool_count(pool);
    const float *v = psdl_pool_data(pool);
    int any = 0;
    float y0 = 0;
    for (size_t i = 0; i < w;) {
        size_t m = out[i];
        for (size_t k = 1; k <= m && i + k < w; k++) {
            uint32_t r = out[i + k];
            if (r < 1 || r > count) return 0;
            float h = v[3 * (size_t)(r - 1) + 1];
            if (!any) y0 = h, any = 1;
            else if (h != y0) return 0;
        }
        i += 1 + m;
    }
    if (!any) return 0;
    *y = y0;
    return 1;
}
