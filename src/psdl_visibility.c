/*
 * psdl_visibility.c -- room-to-room visibility by ray casting (psdl_visibility.h,
 * companion-formats.md §3.5).
 *
 * A bounding volume hierarchy over the triangles (binned surface-area splits, the median
 * when none helps, at most 4 triangles per leaf), closest-hit traversal for random rays
 * and any-hit traversal for aimed ones, both nearest child first, with a slab test and the
 * Moller-Trumbore triangle test (two-sided: facades and roofs occlude from both sides).
 * Rooms are spread over POSIX threads in a fixed interleaving; each room draws its random
 * numbers from its own generator, so rows are the same whatever the thread count.
 */
#define _POSIX_C_SOURCE 200809L
#include "psdl_visibility.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_MAX 4
#define STACK_MAX 128

typedef struct {
    float lo[3], hi[3];
    uint32_t first; /* leaf: first triangle; inner: index of the left child (right = left + 1) */
    uint32_t count; /* leaf: triangle count (> 0); inner: 0 */
} node;

typedef struct {
    float v0[3], e1[3], e2[3];
} tri3;

/* Triangles of each room: idx[start[r] .. start[r+1]) index tris, area[] cumulative per room. */
typedef struct {
    uint32_t *start;
    uint32_t *idx;
    double *area;
} tri_list;

struct psdl_vis {
    tri3 *tris;          /* in hierarchy order */
    uint32_t *room;      /* room of each triangle, hierarchy order */
    size_t ntri;
    node *nodes;
    size_t nnodes;
    uint32_t nrooms;
    uint8_t *subterranean; /* per room */
    tri_list up;         /* up-facing triangles per room: eye points */
    tri_list all;        /* every triangle per room: target points */
    float *box;          /* per room: min x, min z, max x, max z of its triangles */
    uint32_t *adj_start; /* perimeter neighbours of room r: adj[adj_start[r] .. adj_start[r+1]) */
    uint32_t *adj;       /* (NULL until psdl_vis_set_neighbours) */
};

/* ------------------------------------------------------------------ building */

typedef struct {
    float c[3];
    uint32_t i;
} cent;

static float tri_coord(const float *t, int corner, int axis) { return t[corner * 3 + axis]; }

/* quickselect on centroids a[lo..hi) by axis: afterwards a[k] is in its sorted place, smaller
 * ones before it, larger ones after (three-way partition, so equal keys cannot loop) */
static void select_k(cent *a, size_t lo, size_t hi, size_t k, int axis) {
    while (hi - lo > 1) {
        float x = a[lo].c[axis], y = a[lo + (hi - lo) / 2].c[axis], z = a[hi - 1].c[axis];
        float p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            float c = a[i].c[axis];
            if (c < p) {
                cent t = a[lt]; a[lt] = a[i]; a[i] = t;
                lt++; i++;
            } else if (c > p) {
                gt--;
                cent t = a[gt]; a[gt] = a[i]; a[i] = t;
            } else {
                i++;
            }
        }
        if (k < lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return;
    }
}

#define SAH_BINS 16

static float half_area(const float lo[3], const float hi[3]) {
    float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

/* Binned surface-area split of cs[lo..hi) along axis (centroids in [cmin, cmax]): partitions
 * the range in place and returns the first index of the right part (lo or hi when no split
 * beats the others). */
static size_t sah_split(const float *src, cent *cs, size_t lo, size_t hi, int axis, float cmin, float cmax) {
    size_t cnt[SAH_BINS] = {0};
    float blo[SAH_BINS][3], bhi[SAH_BINS][3];
    for (int b = 0; b < SAH_BINS; b++)
        for (int a = 0; a < 3; a++) {
            blo[b][a] = INFINITY;
            bhi[b][a] = -INFINITY;
        }
    float scale = SAH_BINS / (cmax - cmin);
    for (size_t k = lo; k < hi; k++) {
        int b = (int)((cs[k].c[axis] - cmin) * scale);
        if (b >= SAH_BINS) b = SAH_BINS - 1;
        if (b < 0) b = 0;
        cnt[b]++;
        const float *t = src + 9 * (size_t)cs[k].i;
        for (int c = 0; c < 3; c++)
            for (int a = 0; a < 3; a++) {
                float x = t[c * 3 + a];
                if (x < blo[b][a]) blo[b][a] = x;
                if (x > bhi[b][a]) bhi[b][a] = x;
            }
    }
    /* cost of splitting after bin i: left area * left count + right area * right count */
    float rarea[SAH_BINS];
    size_t rcnt[SAH_BINS];
    float rl[3] = {INFINITY, INFINITY, INFINITY}, rh[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t rc = 0;
    for (int b = SAH_BINS - 1; b > 0; b--) {
        for (int a = 0; a < 3; a++) {
            if (blo[b][a] < rl[a]) rl[a] = blo[b][a];
            if (bhi[b][a] > rh[a]) rh[a] = bhi[b][a];
        }
        rc += cnt[b];
        rarea[b] = rc ? half_area(rl, rh) : 0.0f;
        rcnt[b] = rc;
    }
    float ll[3] = {INFINITY, INFINITY, INFINITY}, lh[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t lc = 0;
    float best = INFINITY;
    int split = -1;
    for (int b = 0; b < SAH_BINS - 1; b++) {
        for (int a = 0; a < 3; a++) {
            if (blo[b][a] < ll[a]) ll[a] = blo[b][a];
            if (bhi[b][a] > lh[a]) lh[a] = bhi[b][a];
        }
        lc += cnt[b];
        if (lc == 0 || rcnt[b + 1] == 0) continue;
        float cost = half_area(ll, lh) * (float)lc + rarea[b + 1] * (float)rcnt[b + 1];
        if (cost < best) {
            best = cost;
            split = b;
        }
    }
    if (split < 0) return lo;
    size_t i = lo, j = hi;
    while (i < j) {
        int b = (int)((cs[i].c[axis] - cmin) * scale);
        if (b >= SAH_BINS) b = SAH_BINS - 1;
        if (b <= split) {
            i++;
        } else {
            j--;
            cent t = cs[i];
            cs[i] = cs[j];
            cs[j] = t;
        }
    }
    return i;
}

typedef struct {
    size_t node, lo, hi;
} build_item;

static int build_bvh(psdl_vis *v, const float *src, cent *cs, size_t n) {
    size_t cap = n ? 2 * n : 1;
    v->nodes = malloc(cap * sizeof(node));
    build_item *stack = malloc((n + 1) * sizeof(build_item) + sizeof(build_item) * 64);
    if (!v->nodes || !stack) {
        free(stack);
        return -1;
    }
    size_t sp = 0;
    v->nnodes = 1;
    stack[sp++] = (build_item){0, 0, n};
    while (sp) {
        build_item it = stack[--sp];
        node *nd = &v->nodes[it.node];
        float clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int a = 0; a < 3; a++) {
            nd->lo[a] = INFINITY;
            nd->hi[a] = -INFINITY;
        }
        for (size_t k = it.lo; k < it.hi; k++) {
            const float *t = src + 9 * (size_t)cs[k].i;
            for (int c = 0; c < 3; c++)
                for (int a = 0; a < 3; a++) {
                    float x = tri_coord(t, c, a);
                    if (x < nd->lo[a]) nd->lo[a] = x;
                    if (x > nd->hi[a]) nd->hi[a] = x;
                }
            for (int a = 0; a < 3; a++) {
                if (cs[k].c[a] < clo[a]) clo[a] = cs[k].c[a];
                if (cs[k].c[a] > chi[a]) chi[a] = cs[k].c[a];
            }
        }
        size_t cnt = it.hi - it.lo;
        int axis = 0;
        for (int a = 1; a < 3; a++)
            if (chi[a] - clo[a] > chi[axis] - clo[axis]) axis = a;
        if (cnt <= LEAF_MAX || chi[axis] - clo[axis] <= 0.0f) {
            nd->first = (uint32_t)it.lo;
            nd->count = (uint32_t)cnt;
            continue;
        }
        size_t mid = sah_split(src, cs, it.lo, it.hi, axis, clo[axis], chi[axis]);
        if (mid <= it.lo || mid >= it.hi) { /* no useful split: the median */
            mid = it.lo + cnt / 2;
            select_k(cs, it.lo, it.hi, mid, axis);
        }
        size_t left = v->nnodes;
        v->nnodes += 2;
        nd->first = (uint32_t)left;
        nd->count = 0;
        stack[sp++] = (build_item){left, it.lo, mid};
        stack[sp++] = (build_item){left + 1, mid, it.hi};
    }
    free(stack);
    return 0;
}

/* Twice the area of a triangle and whether it faces up (|normal y| > half its length). */
static double tri_area2(const tri3 *d, int *up) {
    double nx = (double)d->e1[1] * d->e2[2] - (double)d->e1[2] * d->e2[1];
    double ny = (double)d->e1[2] * d->e2[0] - (double)d->e1[0] * d->e2[2];
    double nz = (double)d->e1[0] * d->e2[1] - (double)d->e1[1] * d->e2[0];
    double len = sqrt(nx * nx + ny * ny + nz * nz);
    *up = len > 1e-6 && fabs(ny) > 0.5 * len;
    return len;
}

/* Per-room triangle lists (only up-facing ones when only_up), area-weighted. */
static int build_list(psdl_vis *v, int only_up, tri_list *l) {
    uint32_t nrooms = v->nrooms;
    l->start = calloc((size_t)nrooms + 1, sizeof(uint32_t));
    if (!l->start) return -1;
    size_t total = 0;
    for (size_t k = 0; k < v->ntri; k++) {
        int up;
        double a2 = tri_area2(&v->tris[k], &up);
        if (v->room[k] != 0 && a2 > 1e-6 && (up || !only_up)) {
            l->start[v->room[k] + 1]++;
            total++;
        }
    }
    for (uint32_t r = 0; r < nrooms; r++) l->start[r + 1] += l->start[r];
    l->idx = malloc((total ? total : 1) * sizeof(uint32_t));
    l->area = malloc((total ? total : 1) * sizeof(double));
    uint32_t *fill = calloc(nrooms, sizeof(uint32_t));
    if (!l->idx || !l->area || !fill) {
        free(fill);
        return -1;
    }
    for (size_t k = 0; k < v->ntri; k++) {
        int up;
        double a2 = tri_area2(&v->tris[k], &up);
        uint32_t r = v->room[k];
        if (r != 0 && a2 > 1e-6 && (up || !only_up)) {
            uint32_t at = l->start[r] + fill[r]++;
            l->idx[at] = (uint32_t)k;
            l->area[at] = 0.5 * a2;
        }
    }
    free(fill);
    for (uint32_t r = 0; r < nrooms; r++)
        for (uint32_t k = l->start[r] + 1; k < l->start[r + 1]; k++) l->area[k] += l->area[k - 1];
    return 0;
}

static void free_list(tri_list *l) {
    free(l->start);
    free(l->idx);
    free(l->area);
}

psdl_vis *psdl_vis_new(const float *tri, const uint32_t *tri_room, size_t ntri, uint32_t nrooms,
                       const uint8_t *subterranean) {
    psdl_vis *v = calloc(1, sizeof *v);
    if (!v || nrooms == 0) {
        free(v);
        return NULL;
    }
    v->nrooms = nrooms;
    cent *cs = malloc((ntri ? ntri : 1) * sizeof(cent));
    v->subterranean = calloc(nrooms, 1);
    if (!cs || !v->subterranean) goto fail;
    if (subterranean) memcpy(v->subterranean, subterranean, nrooms);
    size_t n = 0;
    for (size_t i = 0; i < ntri; i++) {
        const float *t = tri + 9 * i;
        int ok = 1;
        for (int k = 0; k < 9; k++)
            if (!isfinite(t[k]) || fabsf(t[k]) > 1e7f) ok = 0;
        if (!ok) continue;
        for (int a = 0; a < 3; a++) cs[n].c[a] = (t[a] + t[3 + a] + t[6 + a]) / 3.0f;
        cs[n].i = (uint32_t)i;
        n++;
    }
    v->ntri = n;
    if (build_bvh(v, tri, cs, n) != 0) goto fail;
    v->tris = malloc((n ? n : 1) * sizeof(tri3));
    v->room = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!v->tris || !v->room) goto fail;
    for (size_t k = 0; k < n; k++) {
        const float *t = tri + 9 * (size_t)cs[k].i;
        tri3 *d = &v->tris[k];
        for (int a = 0; a < 3; a++) {
            d->v0[a] = t[a];
            d->e1[a] = t[3 + a] - t[a];
            d->e2[a] = t[6 + a] - t[a];
        }
        uint32_t r = tri_room[cs[k].i];
        v->room[k] = r < nrooms ? r : 0;
    }
    if (build_list(v, 1, &v->up) != 0 || build_list(v, 0, &v->all) != 0) goto fail;
    v->box = malloc((size_t)nrooms * 4 * sizeof(float));
    if (!v->box) goto fail;
    for (uint32_t r = 0; r < nrooms; r++) {
        float *b = v->box + 4 * (size_t)r;
        b[0] = b[1] = INFINITY;
        b[2] = b[3] = -INFINITY;
    }
    for (size_t k = 0; k < n; k++) {
        const tri3 *d = &v->tris[k];
        float *b = v->box + 4 * (size_t)v->room[k];
        float xs[3] = {d->v0[0], d->v0[0] + d->e1[0], d->v0[0] + d->e2[0]};
        float zs[3] = {d->v0[2], d->v0[2] + d->e1[2], d->v0[2] + d->e2[2]};
        for (int c = 0; c < 3; c++) {
            if (xs[c] < b[0]) b[0] = xs[c];
            if (zs[c] < b[1]) b[1] = zs[c];
            if (xs[c] > b[2]) b[2] = xs[c];
            if (zs[c] > b[3]) b[3] = zs[c];
        }
    }
    free(cs);
    return v;
fail:
    free(cs);
    psdl_vis_free(v);
    return NULL;
}

void psdl_vis_free(psdl_vis *v) {
    if (!v) return;
    free(v->tris);
    free(v->room);
    free(v->nodes);
    free(v->subterranean);
    free_list(&v->up);
    free_list(&v->all);
    free(v->box);
    free(v->adj_start);
    free(v->adj);
    free(v);
}

int psdl_vis_set_neighbours(psdl_vis *v, const uint32_t *pairs, size_t npairs) {
    if (!v) return -1;
    uint32_t nrooms = v->nrooms;
    uint32_t *start = calloc((size_t)nrooms + 1, sizeof(uint32_t));
    uint32_t *adj = malloc((npairs ? 2 * npairs : 1) * sizeof(uint32_t));
    uint32_t *fill = calloc((size_t)nrooms + 1, sizeof(uint32_t));
    if (!start || !adj || !fill) {
        free(start);
        free(adj);
        free(fill);
        return -1;
    }
    for (size_t k = 0; k < npairs; k++) {
        uint32_t a = pairs[2 * k], b = pairs[2 * k + 1];
        if (a == 0 || b == 0 || a >= nrooms || b >= nrooms || a == b) continue;
        start[a + 1]++;
        start[b + 1]++;
    }
    for (uint32_t r = 0; r < nrooms; r++) start[r + 1] += start[r];
    for (size_t k = 0; k < npairs; k++) {
        uint32_t a = pairs[2 * k], b = pairs[2 * k + 1];
        if (a == 0 || b == 0 || a >= nrooms || b >= nrooms || a == b) continue;
        adj[start[a] + fill[a]++] = b;
        adj[start[b] + fill[b]++] = a;
    }
    free(fill);
    free(v->adj_start);
    free(v->adj);
    v->adj_start = start;
    v->adj = adj;
    return 0;
}

size_t psdl_vis_triangles(const psdl_vis *v) { return v ? v->ntri : 0; }

/* ------------------------------------------------------------------ casting */

/* Entry distance of the ray into a node's box, or INFINITY when it misses before tmax. */
static inline float box_enter(const node *nd, const float o[3], const float inv[3], float tmax) {
    float t0 = 0.0f, t1 = tmax;
    for (int a = 0; a < 3; a++) {
        float ta = (nd->lo[a] - o[a]) * inv[a], tb = (nd->hi[a] - o[a]) * inv[a];
        if (ta > tb) {
            float s = ta;
            ta = tb;
            tb = s;
        }
        if (ta > t0) t0 = ta;
        if (tb < t1) t1 = tb;
        if (t0 > t1) return INFINITY;
    }
    return t0;
}

/* Orders two children by their entry distances: *l, *tl the nearer afterwards. */
static inline void nearer_first(uint32_t *l, uint32_t *r, float *tl, float *tr) {
    if (*tl > *tr) {
        uint32_t su = *l;
        *l = *r;
        *r = su;
        float st = *tl;
        *tl = *tr;
        *tr = st;
    }
}


/* The ray od + t dd in floats (o, d) with the inverse direction for box_enter (a zero
 * component gives +-1e30). */
static void ray_setup(const double od[3], const double dd[3], float o[3], float d[3], float inv[3]) {
    for (int a = 0; a < 3; a++) {
        o[a] = (float)od[a];
        d[a] = (float)dd[a];
        inv[a] = d[a] != 0.0f ? 1.0f / d[a] : (d[a] >= 0 ? 1e30f : -1e30f);
    }
}

/* Where the ray o + t d crosses triangle tr (Moller-Trumbore, in floats): t, or -1 when it
 * misses (parallel within 1e-9, or outside the triangle). Both ray walks use it, so that a
 * hit and a blocker are the same test. */
static float ray_tri(const tri3 *tr, const float o[3], const float d[3]) {
    const float *e1 = tr->e1, *e2 = tr->e2;
    float p[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
    float det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    if (det > -1e-9f && det < 1e-9f) return -1.0f;
    float id = 1.0f / det;
    float s[3] = {o[0] - tr->v0[0], o[1] - tr->v0[1], o[2] - tr->v0[2]};
    float u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * id;
    if (u < 0.0f || u > 1.0f) return -1.0f;
    float q[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
    float w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * id;
    if (w < 0.0f || u + w > 1.0f) return -1.0f;
    return (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * id;
}
/* Closest hit along o + t d, 0 < t < tmax: the triangle index, or -1. *t_out gets t.
 * Children are visited nearest first, and a node is skipped when the best hit so far is
 * nearer than its box. */
static long cast(const psdl_vis *v, const double od[3], const double dd[3], double tmax, double *t_out) {
    if (v->ntri == 0) return -1;
    float o[3], d[3], inv[3];
    ray_setup(od, dd, o, d, inv);
    uint32_t stack[STACK_MAX];
    float stack_t[STACK_MAX];
    int sp = 0;
    long best = -1;
    float bt = (float)tmax;
    if (box_enter(&v->nodes[0], o, inv, bt) == INFINITY) {
        if (t_out) *t_out = tmax;
        return -1;
    }
    stack[sp] = 0;
    stack_t[sp++] = 0.0f;
    while (sp) {
        sp--;
        if (stack_t[sp] >= bt) continue;
        const node *nd = &v->nodes[stack[sp]];
        if (nd->count) {
            for (uint32_t k = nd->first; k < nd->first + nd->count; k++) {
                float t = ray_tri(&v->tris[k], o, d);
                if (t > 1e-4f && t < bt) {
                    bt = t;
                    best = (long)k;
                }
            }
        } else if (sp + 2 <= STACK_MAX) {
            uint32_t l = nd->first, r = nd->first + 1;
            float tl = box_enter(&v->nodes[l], o, inv, bt), tr = box_enter(&v->nodes[r], o, inv, bt);
            nearer_first(&l, &r, &tl, &tr); /* push the farther first: the nearer is popped next */
            if (tr != INFINITY) {
                stack[sp] = r;
                stack_t[sp++] = tr;
            }
            if (tl != INFINITY) {
                stack[sp] = l;
                stack_t[sp++] = tl;
            }
        }
    }
    if (t_out) *t_out = best >= 0 ? (double)bt : tmax;
    return best;
}

/* Whether a triangle of a room other than skip crosses o + t d, 1e-4 < t < tmax (any hit:
 * the traversal stops at the first one found; nearest children first, so blockers near
 * the eye, the usual ones in a street, are found early). */
static int occluded(const psdl_vis *v, const double od[3], const double dd[3], double tmax, uint32_t skip) {
    if (v->ntri == 0) return 0;
    float o[3], d[3], inv[3];
    ray_setup(od, dd, o, d, inv);
    uint32_t stack[STACK_MAX];
    int sp = 0;
    float bt = (float)tmax;
    if (box_enter(&v->nodes[0], o, inv, bt) == INFINITY) return 0;
    stack[sp++] = 0;
    while (sp) {
        const node *nd = &v->nodes[stack[--sp]];
        if (nd->count) {
            for (uint32_t k = nd->first; k < nd->first + nd->count; k++) {
                if (v->room[k] == skip) continue;
                float t = ray_tri(&v->tris[k], o, d);
                if (t > 1e-4f && t < bt) return 1;
            }
        } else if (sp + 2 <= STACK_MAX) {
            uint32_t l = nd->first, r = nd->first + 1;
            float tl = box_enter(&v->nodes[l], o, inv, bt), tr = box_enter(&v->nodes[r], o, inv, bt);
            nearer_first(&l, &r, &tl, &tr);
            if (tr != INFINITY) stack[sp++] = r;
            if (tl != INFINITY) stack[sp++] = l;
        }
    }
    return 0;
}

typedef struct {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *g) { /* splitmix64 */
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_unit(rng *g) { return (double)(rng_next(g) >> 11) * (1.0 / 9007199254740992.0); }

/* A random point on the triangles of room r in list l (area-weighted): 0, or -1 when the
 * room has none. */
static int pick_point(const psdl_vis *v, const tri_list *l, uint32_t r, rng *g, double p[3]) {
    uint32_t a = l->start[r], b = l->start[r + 1];
    if (a == b) return -1;
    double x = rng_unit(g) * l->area[b - 1];
    uint32_t lo = a, hi = b - 1;
    while (lo < hi) { /* first cumulative area > x */
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->area[mid] > x) hi = mid;
        else lo = mid + 1;
    }
    const tri3 *t = &v->tris[l->idx[lo]];
    double u = rng_unit(g), w = rng_unit(g);
    if (u + w > 1.0) {
        u = 1.0 - u;
        w = 1.0 - w;
    }
    for (int k = 0; k < 3; k++) p[k] = t->v0[k] + u * t->e1[k] + w * t->e2[k];
    return 0;
}

/* A random eye point of room r (at the top of the camera's range, or a random 1-15 m /
 * 0.5-5 m up when random_height): 0 and the point in eye, or -1 when none could be found. */
static int pick_eye(const psdl_vis *v, uint32_t r, int random_height, rng *g, double eye[3]) {
    int low = v->subterranean[r] != 0;
    for (int attempt = 0; attempt < 8; attempt++) {
        double p[3];
        if (pick_point(v, &v->up, r, g, p) != 0) return -1;
        /* the top of the camera's range (§3.5: 0-15 m, 0-5 m subterranean): over ground and
         * building prisms (no overhang) a segment from a higher eye to a point lies above the
         * one from a lower eye at the same spot, so the top eye sees all the lower ones see;
         * ceilings, roofs and decks above the point clamp it below them */
        double h = low ? 5.0 : 15.0;
        if (random_height) h = low ? 0.5 + 4.5 * rng_unit(g) : 1.0 + 14.0 * rng_unit(g);
        double o[3] = {p[0], p[1] + 0.05, p[2]}, up[3] = {0.0, 1.0, 0.0}, th;
        long hit = cast(v, o, up, h + 0.5, &th);
        if (hit >= 0) {
            /* under the room's own roof (inside a building): another point; under a
             * ceiling, a bridge deck or another room: stay below it */
            if (v->room[hit] == r && !low) continue;
            if (th < 1.0) continue;
            if (h > th - 0.5) h = th - 0.5;
        }
        eye[0] = p[0];
        eye[1] = p[1] + h;
        eye[2] = p[2];
        return 0;
    }
    return -1;
}

/* Rays aimed from the eyes at random points of room t (area-weighted over its triangles):
 * 1 when one reaches its point with no triangle of another room in between (t's own
 * triangles never block: the ray reaches t either way), 0 when all are blocked, t has no
 * triangles or lies beyond range of the eyes' bounds eb (min x, min z, max x, max z).
 * n rays within 150 m, n * 150 m / distance beyond (at least 2): a far room covers less of
 * the view. The rays spread over all the eyes, starting at a different eye for each room,
 * so that a room with few rays is still tried from every side. */
static int aim(const psdl_vis *v, const double (*eyes)[3], uint32_t have, const double eb[4], uint32_t t,
               uint32_t n, double range, rng *g) {
    const float *b = v->box + 4 * (size_t)t;
    if (b[0] > b[2]) return 0; /* no triangles */
    double dx = fmax(0.0, fmax(b[0] - eb[2], eb[0] - b[2])), dz = fmax(0.0, fmax(b[1] - eb[3], eb[1] - b[3]));
    double dd = dx * dx + dz * dz;
    if (dd > range * range) return 0;
    uint32_t nt = n;
    if (dd > 150.0 * 150.0) {
        nt = (uint32_t)(n * 150.0 / sqrt(dd));
        if (nt < 2) nt = 2 < n ? 2 : n;
    }
    for (uint32_t k = 0; k < nt; k++) {
        double p[3];
        if (pick_point(v, &v->all, t, g, p) != 0) return 0;
        const double *eye = eyes[(t + (size_t)k * have / nt) % have];
        double d[3] = {p[0] - eye[0], p[1] - eye[1], p[2] - eye[2]};
        double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (len < 1e-3 || len > range) continue;
        for (int c = 0; c < 3; c++) d[c] /= len;
        if (!occluded(v, eye, d, len - 0.05, t)) return 1;
    }
    return 0;
}

#define EYES_MAX 256

/* Row of room r: random rays from its eyes, then, for every room within range not hit yet,
 * `targeted` rays from an eye to a random point of that room (visible when nothing else is
 * hit first). */
static void room_row(const psdl_vis *v, uint32_t r, const psdl_vis_opts *o, uint8_t *row, uint32_t *queue,
                     uint8_t *tried) {
    rng g = {o->seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)r * 0xD1B54A32D192ED03ull) ^ 0x5DEECE66Dull};
    uint32_t neyes = o->eyes ? o->eyes : 1;
    if (neyes > EYES_MAX) neyes = EYES_MAX;
    double eyes[EYES_MAX][3];
    uint32_t have = 0;
    for (uint32_t e = 0; e < neyes; e++)
        if (pick_eye(v, r, o->random_height, &g, eyes[have]) == 0) have++;
    if (have == 0) return;
    uint32_t per = o->rays / have;
    const double two_pi = 6.283185307179586;
    for (uint32_t e = 0; e < have; e++) {
        for (uint32_t k = 0; k < per; k++) {
            double az = two_pi * rng_unit(&g);
            double sy = -0.6 + 1.0 * rng_unit(&g);
            double cy = sqrt(1.0 - sy * sy);
            double d[3] = {cy * cos(az), sy, cy * sin(az)};
            long hit = cast(v, eyes[e], d, o->range, NULL);
            if (hit >= 0) {
                uint32_t t = v->room[hit];
                row[t >> 3] |= (uint8_t)(1u << (t & 7));
            }
        }
    }
    /* eye bounds, for the range test */
    double ex0 = INFINITY, ez0 = INFINITY, ex1 = -INFINITY, ez1 = -INFINITY;
    for (uint32_t e = 0; e < have; e++) {
        if (eyes[e][0] < ex0) ex0 = eyes[e][0];
        if (eyes[e][0] > ex1) ex1 = eyes[e][0];
        if (eyes[e][2] < ez0) ez0 = eyes[e][2];
        if (eyes[e][2] > ez1) ez1 = eyes[e][2];
    }
    const double eb[4] = {ex0, ez0, ex1, ez1};
    if (o->targeted > 0)
        for (uint32_t t = 1; t < v->nrooms; t++) {
            if (row[t >> 3] & (1u << (t & 7))) continue;
            if (aim(v, (const double (*)[3])eyes, have, eb, t, o->targeted, o->range, &g))
                row[t >> 3] |= (uint8_t)(1u << (t & 7));
        }
    if (o->frontier == 0 || !v->adj) return;
    /* flood: every perimeter neighbour of a visible room gets `frontier` aimed rays of its
     * own (once); a neighbour found visible is flooded in turn. Rooms seen through a gap
     * usually have visible neighbours seen through the same gap, so the rays go where
     * visibility is likely instead of everywhere. */
    memset(tried, 0, ((size_t)v->nrooms + 7) / 8);
    /* the room itself first (its neighbours are tried even when no ray hit it), then every
     * room found visible */
    uint32_t qn = 0;
    queue[qn++] = r;
    tried[r >> 3] |= (uint8_t)(1u << (r & 7));
    for (uint32_t t = 1; t < v->nrooms; t++)
        if (t != r && (row[t >> 3] & (1u << (t & 7)))) {
            queue[qn++] = t;
            tried[t >> 3] |= (uint8_t)(1u << (t & 7));
        }
    for (uint32_t qi = 0; qi < qn; qi++) {
        uint32_t u = queue[qi];
        for (uint32_t k = v->adj_start[u]; k < v->adj_start[u + 1]; k++) {
            uint32_t w = v->adj[k];
            if (tried[w >> 3] & (1u << (w & 7))) continue;
            tried[w >> 3] |= (uint8_t)(1u << (w & 7));
            if (aim(v, (const double (*)[3])eyes, have, eb, w, o->frontier, o->range, &g)) {
                row[w >> 3] |= (uint8_t)(1u << (w & 7));
                queue[qn++] = w;
            }
        }
    }
}

typedef struct {
    const psdl_vis *v;
    uint32_t first, last;
    const psdl_vis_opts *o;
    uint8_t *out;
    size_t stride;
    int index, step;
    uint32_t *queue; /* scratch of the flood: R room ids */
    uint8_t *tried;  /* and ceil(R / 8) bytes */
} job;

static void *worker(void *arg) {
    job *j = arg;
    for (uint32_t r = j->first + (uint32_t)j->index; r <= j->last; r += (uint32_t)j->step)
        room_row(j->v, r, j->o, j->out + (size_t)(r - j->first) * j->stride, j->queue, j->tried);
    return NULL;
}

int psdl_vis_rows(const psdl_vis *v, uint32_t first, uint32_t last, const psdl_vis_opts *opts,
                  uint8_t *out) {
    if (!v || first < 1 || last < first || last >= v->nrooms) return -1;
    size_t stride = ((size_t)v->nrooms + 7) / 8;
    memset(out, 0, stride * (size_t)(last - first + 1));
    int nt = opts->threads < 1 ? 1 : (opts->threads > 16 ? 16 : opts->threads);
    if ((uint32_t)nt > last - first + 1) nt = (int)(last - first + 1);
    job jobs[16];
    pthread_t th[16];
    int started = 0;
    uint32_t *queue = malloc((size_t)nt * v->nrooms * sizeof(uint32_t));
    uint8_t *tried = malloc((size_t)nt * stride);
    if (!queue || !tried) {
        free(queue);
        free(tried);
        return -1;
    }
    for (int i = 0; i < nt; i++)
        jobs[i] = (job){v, first, last, opts, out, stride, i, nt, queue + (size_t)i * v->nrooms, tried + (size_t)i * stride};
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) break;
        started = i;
    }
    /* threads that could not start: their share runs here */
    worker(&jobs[0]);
    for (int i = started + 1; i < nt; i++) worker(&jobs[i]);
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
    free(queue);
    free(tried);
    return 0;
}
