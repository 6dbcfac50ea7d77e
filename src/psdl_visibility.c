/*
 * psdl_visibility.c -- room-to-room visibility by ray casting (psdl_visibility.h,
 * companion-formats.md §3.5).
 *
 * A bounding volume hierarchy over the triangles (median split of the centroids on the
 * longest axis, at most 4 triangles per leaf), closest-hit traversal with a slab test and
 * the Moller-Trumbore triangle test (two-sided: facades and roofs occlude from both sides).
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

struct psdl_vis {
    tri3 *tris;          /* in hierarchy order */
    uint32_t *room;      /* room of each triangle, hierarchy order */
    size_t ntri;
    node *nodes;
    size_t nnodes;
    uint32_t nrooms;
    uint8_t *subterranean; /* per room */
    /* eye-point triangles per room: up[ups[r] .. ups[r+1]) indices into tris, cumulative areas */
    uint32_t *ups;
    uint32_t *up;
    double *up_area;
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
        size_t mid = it.lo + cnt / 2;
        select_k(cs, it.lo, it.hi, mid, axis);
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
    v->ups = calloc((size_t)nrooms + 1, sizeof(uint32_t));
    if (!cs || !v->subterranean || !v->ups) goto fail;
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
    size_t nup = 0;
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
        /* up-facing: normal y over its length > 0.5 (either winding) */
        double nx = (double)d->e1[1] * d->e2[2] - (double)d->e1[2] * d->e2[1];
        double ny = (double)d->e1[2] * d->e2[0] - (double)d->e1[0] * d->e2[2];
        double nz = (double)d->e1[0] * d->e2[1] - (double)d->e1[1] * d->e2[0];
        double len = sqrt(nx * nx + ny * ny + nz * nz);
        if (len > 1e-6 && fabs(ny) > 0.5 * len && v->room[k] != 0) {
            v->ups[v->room[k] + 1]++;
            nup++;
        }
    }
    for (uint32_t r = 0; r < nrooms; r++) v->ups[r + 1] += v->ups[r];
    v->up = malloc((nup ? nup : 1) * sizeof(uint32_t));
    v->up_area = malloc((nup ? nup : 1) * sizeof(double));
    uint32_t *fill = calloc(nrooms, sizeof(uint32_t));
    if (!v->up || !v->up_area || !fill) {
        free(fill);
        goto fail;
    }
    for (size_t k = 0; k < n; k++) {
        const tri3 *d = &v->tris[k];
        double nx = (double)d->e1[1] * d->e2[2] - (double)d->e1[2] * d->e2[1];
        double ny = (double)d->e1[2] * d->e2[0] - (double)d->e1[0] * d->e2[2];
        double nz = (double)d->e1[0] * d->e2[1] - (double)d->e1[1] * d->e2[0];
        double len = sqrt(nx * nx + ny * ny + nz * nz);
        uint32_t r = v->room[k];
        if (len > 1e-6 && fabs(ny) > 0.5 * len && r != 0) {
            uint32_t at = v->ups[r] + fill[r]++;
            v->up[at] = (uint32_t)k;
            v->up_area[at] = 0.5 * len;
        }
    }
    free(fill);
    for (uint32_t r = 0; r < nrooms; r++) /* cumulative areas per room */
        for (uint32_t k = v->ups[r] + 1; k < v->ups[r + 1]; k++) v->up_area[k] += v->up_area[k - 1];
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
    free(v->ups);
    free(v->up);
    free(v->up_area);
    free(v);
}

size_t psdl_vis_triangles(const psdl_vis *v) { return v ? v->ntri : 0; }

/* ------------------------------------------------------------------ casting */

/* Closest hit along o + t d, 0 < t < tmax: the triangle index, or -1. *t_out gets t. */
static long cast(const psdl_vis *v, const double o[3], const double d[3], double tmax, double *t_out) {
    if (v->ntri == 0) return -1;
    double inv[3];
    for (int a = 0; a < 3; a++) inv[a] = d[a] != 0.0 ? 1.0 / d[a] : (d[a] >= 0 ? 1e300 : -1e300);
    uint32_t stack[STACK_MAX];
    int sp = 0;
    stack[sp++] = 0;
    long best = -1;
    double bt = tmax;
    while (sp) {
        const node *nd = &v->nodes[stack[--sp]];
        double t0 = 0.0, t1 = bt;
        int miss = 0;
        for (int a = 0; a < 3 && !miss; a++) {
            double ta = (nd->lo[a] - o[a]) * inv[a], tb = (nd->hi[a] - o[a]) * inv[a];
            if (ta > tb) {
                double s = ta;
                ta = tb;
                tb = s;
            }
            if (ta > t0) t0 = ta;
            if (tb < t1) t1 = tb;
            if (t0 > t1) miss = 1;
        }
        if (miss) continue;
        if (nd->count) {
            for (uint32_t k = nd->first; k < nd->first + nd->count; k++) {
                const tri3 *tr = &v->tris[k];
                double e1[3] = {tr->e1[0], tr->e1[1], tr->e1[2]}, e2[3] = {tr->e2[0], tr->e2[1], tr->e2[2]};
                double p[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
                double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
                if (fabs(det) < 1e-12) continue;
                double id = 1.0 / det;
                double s[3] = {o[0] - tr->v0[0], o[1] - tr->v0[1], o[2] - tr->v0[2]};
                double u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * id;
                if (u < 0.0 || u > 1.0) continue;
                double q[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
                double w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * id;
                if (w < 0.0 || u + w > 1.0) continue;
                double t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * id;
                if (t > 1e-4 && t < bt) {
                    bt = t;
                    best = (long)k;
                }
            }
        } else if (sp + 2 <= STACK_MAX) {
            stack[sp++] = nd->first + 1;
            stack[sp++] = nd->first;
        }
    }
    if (t_out) *t_out = bt;
    return best;
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

/* A random eye point of room r: 0 and the point in eye, or -1 when none could be found. */
static int pick_eye(const psdl_vis *v, uint32_t r, rng *g, double eye[3]) {
    uint32_t a = v->ups[r], b = v->ups[r + 1];
    if (a == b) return -1;
    double total = v->up_area[b - 1];
    int low = v->subterranean[r] != 0;
    for (int attempt = 0; attempt < 8; attempt++) {
        double x = rng_unit(g) * total;
        uint32_t lo = a, hi = b - 1;
        while (lo < hi) { /* first cumulative area > x */
            uint32_t mid = lo + (hi - lo) / 2;
            if (v->up_area[mid] > x) hi = mid;
            else lo = mid + 1;
        }
        const tri3 *t = &v->tris[v->up[lo]];
        double u = rng_unit(g), w = rng_unit(g);
        if (u + w > 1.0) {
            u = 1.0 - u;
            w = 1.0 - w;
        }
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = t->v0[k] + u * t->e1[k] + w * t->e2[k];
        double h = low ? 0.5 + 4.5 * rng_unit(g) : 1.0 + 14.0 * rng_unit(g);
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

static void room_row(const psdl_vis *v, uint32_t r, const psdl_vis_opts *o, uint8_t *row) {
    rng g = {o->seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)r * 0xD1B54A32D192ED03ull) ^ 0x5DEECE66Dull};
    uint32_t eyes = o->eyes ? o->eyes : 1;
    uint32_t per = o->rays / eyes;
    if (per == 0) per = 1;
    const double two_pi = 6.283185307179586;
    for (uint32_t e = 0; e < eyes; e++) {
        double eye[3];
        if (pick_eye(v, r, &g, eye) != 0) continue;
        for (uint32_t k = 0; k < per; k++) {
            double az = two_pi * rng_unit(&g);
            double sy = -0.6 + 1.0 * rng_unit(&g);
            double cy = sqrt(1.0 - sy * sy);
            double d[3] = {cy * cos(az), sy, cy * sin(az)};
            long hit = cast(v, eye, d, o->range, NULL);
            if (hit >= 0) {
                uint32_t t = v->room[hit];
                row[t >> 3] |= (uint8_t)(1u << (t & 7));
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
} job;

static void *worker(void *arg) {
    job *j = arg;
    for (uint32_t r = j->first + (uint32_t)j->index; r <= j->last; r += (uint32_t)j->step)
        room_row(j->v, r, j->o, j->out + (size_t)(r - j->first) * j->stride);
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
    for (int i = 0; i < nt; i++) jobs[i] = (job){v, first, last, opts, out, stride, i, nt};
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) break;
        started = i;
    }
    /* threads that could not start: their share runs here */
    worker(&jobs[0]);
    for (int i = started + 1; i < nt; i++) worker(&jobs[i]);
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
    return 0;
}
