/* psdl_geom_street.c -- a street's cross-sections as road rooms: the sections pooled,
 * cut into rooms of at most `split` sections as even as can be, and each room's outline
 * (psdl_geom.h; psdl.builder's Builder:street; psdl-format §2.4 0x0/0x2/0x6, §4.2). */
#include "psdl_geom.h"

#include <assert.h>
#include <stdint.h>

size_t psdl_street_rooms_bound(size_t nsec, size_t stride, size_t split, size_t *outline_words) {
    size_t rooms = 0;
    if (nsec >= 2 && split >= 2) rooms = (nsec - 2) / (split - 1) + 1;
    /* each room: [count] + first section, two rails, last section */
    if (outline_words) *outline_words = rooms * (1 + 2 * stride) + 2 * (nsec + rooms);
    return rooms;
}

/* Appends v to the outline being written at o[1 ..], unless it repeats the last one. */
static void put(uint32_t *o, size_t *n, uint32_t v) {
    if (*n > 0 && o[*n] == v) return;
    o[++*n] = v;
}

size_t psdl_street_rooms(uint32_t *refs, uint32_t *ranges, uint32_t *outlines, size_t *noutline,
                         psdl_pool *vpool, const double *sf, size_t nsec, size_t stride, size_t split,
                         double snap) {
    assert(refs && ranges && outlines && noutline && vpool && (sf || nsec == 0));
    *noutline = 0;
    if (stride == 0 || split < 2) return PSDL_GEOM_INVALID;
    for (size_t i = 0; i < nsec * stride; i++)
        if ((refs[i] = psdl_pool_add_snapped(vpool, sf + 3 * i, snap)) == UINT32_MAX) return PSDL_GEOM_NOMEM;
    size_t nrooms = psdl_street_rooms_bound(nsec, stride, split, NULL), made = 0, w = 0;
    size_t first = 1; /* 1-based sections, as the builder counts them */
    while (first < nsec && made < nrooms) {
        size_t left = nrooms - made;
        size_t last = first + (nsec - first + left - 1) / left;
        if (last > nsec) last = nsec;
        ranges[2 * made] = (uint32_t)(first - 1);
        ranges[2 * made + 1] = (uint32_t)(last - 1);
        /* the outline of the strip: first section left to right, the right rail, the last
         * section right to left, the left rail back (retail winding, §4.2) */
        const uint32_t *r = refs + (first - 1) * stride;
        size_t ns = last - first + 1, n = 0;
        uint32_t *o = outlines + w;
        for (size_t c = 1; c <= stride; c++) put(o, &n, r[c - 1]);
        for (size_t k = 2; k <= ns; k++) put(o, &n, r[k * stride - 1]);
        for (size_t c = stride - 1; c >= 1; c--) put(o, &n, r[(ns - 1) * stride + c - 1]);
        for (size_t k = ns - 1; k >= 2; k--) put(o, &n, r[(k - 1) * stride]);
        while (n > 1 && o[n] == o[1]) n--;
        o[0] = (uint32_t)n;
        w += 1 + n;
        made++;
        first = last;
    }
    *noutline = w;
    return made;
}
