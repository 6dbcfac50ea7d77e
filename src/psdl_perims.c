/* psdl_perims.c -- the perimeter set of Builder:finish (see psdl_perims.h). */
#include "psdl_perims.h"
#include "psdl_geom.h"

#include <stdlib.h>
#include <string.h>

struct psdl_perims {
    size_t nrooms, caprooms;
    uint32_t *start; /* nrooms + 1 offsets (caprooms + 1 allocated) */
    uint32_t *verts;
    size_t capverts;
    /* the links (psdl_perims_link), NULL when not linked */
    uint32_t *lstart, *lverts, *lnb;
};

/* Grows *arr (elements of size elem, *cap of them) to hold at least need; 0 or an error. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return PSDL_PERIMS_OK;
    if (need > PSDL_PERIMS_MAX) return PSDL_PERIMS_FULL;
    size_t c = *cap ? *cap : 64;
    while (c < need) c = c > PSDL_PERIMS_MAX / 2 ? PSDL_PERIMS_MAX : c * 2;
    if (c > SIZE_MAX / elem) return PSDL_PERIMS_NOMEM;
    void *q = realloc(*arr, c * elem);
    if (!q) return PSDL_PERIMS_NOMEM;
    *arr = q;
    *cap = c;
    return PSDL_PERIMS_OK;
}

static void unlink_set(psdl_perims *p) {
    free(p->lstart);
    free(p->lverts);
    free(p->lnb);
    p->lstart = p->lverts = p->lnb = NULL;
}

psdl_perims *psdl_perims_new(void) {
    psdl_perims *p = (psdl_perims *)calloc(1, sizeof *p);
    if (!p) return NULL;
    /* both arrays exist from the start: a room's points are never a null pointer */
    p->start = (uint32_t *)calloc(1, sizeof *p->start);
    p->capverts = 64;
    p->verts = (uint32_t *)malloc(p->capverts * sizeof *p->verts);
    if (!p->start || !p->verts) {
        free(p->start);
        free(p->verts);
        free(p);
        return NULL;
    }
    return p;
}

void psdl_perims_free(psdl_perims *p) {
    if (!p) return;
    unlink_set(p);
    free(p->start);
    free(p->verts);
    free(p);
}

size_t psdl_perims_rooms(const psdl_perims *p) { return p ? p->nrooms : 0; }

/* Room for one more room and n more points; 0 or an error (nothing changed). */
static int reserve(psdl_perims *p, size_t n) {
    size_t used = p->start[p->nrooms];
    if (p->nrooms + 1 > PSDL_PERIMS_MAX || n > PSDL_PERIMS_MAX - used) return PSDL_PERIMS_FULL;
    if (p->nrooms + 1 > p->caprooms) {
        size_t cap = p->caprooms;
        /* start holds caprooms + 1 entries: grow a copy of the count, then the array */
        size_t c = cap ? cap : 64;
        while (c < p->nrooms + 1) c = c > PSDL_PERIMS_MAX / 2 ? PSDL_PERIMS_MAX : c * 2;
        uint32_t *s = (uint32_t *)realloc(p->start, (c + 1) * sizeof *s);
        if (!s) return PSDL_PERIMS_NOMEM;
        p->start = s;
        p->caprooms = c;
    }
    return grow((void **)&p->verts, &p->capverts, used + n, sizeof *p->verts);
}

int psdl_perims_add(psdl_perims *p, const uint32_t *verts, size_t n) {
    if (!p || (n && !verts)) return PSDL_PERIMS_RANGE;
    int e = reserve(p, n);
    if (e) return e;
    uint32_t used = p->start[p->nrooms];
    if (n) memcpy(p->verts + used, verts, n * sizeof *verts);
    p->start[++p->nrooms] = used + (uint32_t)n;
    unlink_set(p);
    return PSDL_PERIMS_OK;
}

long psdl_perims_add_boundary(psdl_perims *p, const uint32_t *tris, size_t ntris, const float *pts, size_t npts) {
    if (!p || (ntris && (!tris || !pts))) return PSDL_PERIMS_RANGE;
    if (ntris > PSDL_PERIMS_MAX / 3) return PSDL_PERIMS_FULL;
    size_t nt = 3 * ntris;
    for (size_t i = 0; i < nt; i++)
        if (tris[i] >= npts) return PSDL_PERIMS_RANGE;
    /* only the points the triangles use (psdl_boundary_used: as core.boundary over a pool,
     * the same outline, point for point) */
    uint32_t *d = (uint32_t *)malloc((nt + 1) * sizeof *d);
    if (!d) return PSDL_PERIMS_NOMEM;
    size_t n = psdl_boundary_used(d, tris, ntris, pts, npts);
    long rc;
    if (n == PSDL_GEOM_NOMEM) rc = PSDL_PERIMS_NOMEM;
    else if (n == PSDL_GEOM_INVALID) rc = PSDL_PERIMS_RANGE;
    else {
        rc = psdl_perims_add(p, d, n);
        if (rc == PSDL_PERIMS_OK) rc = (long)n;
    }
    free(d);
    return rc;
}

const uint32_t *psdl_perims_get(const psdl_perims *p, size_t room, size_t *n) {
    if (!p || room >= p->nrooms) {
        if (n) *n = 0;
        return NULL;
    }
    if (n) *n = p->start[room + 1] - p->start[room];
    return p->verts + p->start[room];
}

int psdl_perims_set(psdl_perims *p, size_t room, const uint32_t *verts, size_t n) {
    if (!p || room >= p->nrooms || (n && !verts)) return PSDL_PERIMS_RANGE;
    size_t used = p->start[p->nrooms], old = p->start[room + 1] - p->start[room];
    if (n > old && n - old > PSDL_PERIMS_MAX - used) return PSDL_PERIMS_FULL;
    /* the new points are copied first: verts may point into the set */
    uint32_t *copy = (uint32_t *)malloc((n ? n : 1) * sizeof *copy);
    if (!copy) return PSDL_PERIMS_NOMEM;
    if (n) memcpy(copy, verts, n * sizeof *copy);
    if (n > old) {
        int e = grow((void **)&p->verts, &p->capverts, used + (n - old), sizeof *p->verts);
        if (e) {
            free(copy);
            return e;
        }
    }
    size_t s = p->start[room], tail = used - p->start[room + 1];
    memmove(p->verts + s + n, p->verts + s + old, tail * sizeof *p->verts);
    if (n) memcpy(p->verts + s, copy, n * sizeof *copy);
    free(copy);
    for (size_t r = room + 1; r <= p->nrooms; r++) p->start[r] = (uint32_t)(p->start[r] - old + n);
    unlink_set(p);
    return PSDL_PERIMS_OK;
}

size_t psdl_perims_csr(const psdl_perims *p, const uint32_t **start, const uint32_t **verts) {
    if (!p) {
        if (start) *start = NULL;
        if (verts) *verts = NULL;
        return 0;
    }
    if (start) *start = p->start;
    if (verts) *verts = p->verts;
    return p->nrooms;
}

int psdl_perims_link(psdl_perims *p, size_t npts) {
    if (!p) return PSDL_PERIMS_RANGE;
    unlink_set(p);
    size_t nr = p->nrooms;
    size_t bound = psdl_link_bound(p->start, p->verts, nr, npts);
    if (bound == PSDL_GEOM_INVALID) return PSDL_PERIMS_RANGE;
    if (bound == PSDL_GEOM_NOMEM) return PSDL_PERIMS_NOMEM;
    uint32_t *ds = (uint32_t *)malloc((nr + 1) * sizeof *ds);
    uint32_t *dv = (uint32_t *)malloc((bound ? bound : 1) * sizeof *dv);
    uint32_t *dn = (uint32_t *)malloc((bound ? bound : 1) * sizeof *dn);
    size_t n = ds && dv && dn ? psdl_link(dv, dn, ds, p->start, p->verts, nr, npts) : PSDL_GEOM_NOMEM;
    if (n == PSDL_GEOM_NOMEM || n == PSDL_GEOM_INVALID) {
        free(ds);
        free(dv);
        free(dn);
        return n == PSDL_GEOM_NOMEM ? PSDL_PERIMS_NOMEM : PSDL_PERIMS_RANGE;
    }
    p->lstart = ds;
    p->lverts = dv;
    p->lnb = dn;
    return PSDL_PERIMS_OK;
}

int psdl_perims_linked(const psdl_perims *p) { return p && p->lstart != NULL; }

size_t psdl_perims_linked_csr(const psdl_perims *p, const uint32_t **start, const uint32_t **verts, const uint32_t **nb) {
    int ok = psdl_perims_linked(p);
    if (start) *start = ok ? p->lstart : NULL;
    if (verts) *verts = ok ? p->lverts : NULL;
    if (nb) *nb = ok ? p->lnb : NULL;
    return ok ? p->nrooms : 0;
}
