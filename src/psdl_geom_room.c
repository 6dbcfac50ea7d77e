/* psdl_geom_room.c -- deduplicating pools, room surfaces and outlines, neighbour links and
 * T-junction detection (psdl_geom.h, §1.5, §3.2, §3.5). */
#include "psdl_geom.h"
#include "psdl.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ pools */

struct psdl_pool {
    unsigned dim;
    float *data;
    size_t count, cap;
    uint32_t *slots; /* open addressing: entry index + 1, 0 = empty */
    size_t mask;
    int reserved;
};

static uint32_t fbits(float f) {
    uint32_t u;
    if (f == 0) f = 0; /* -0 == +0 */
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t hash_tuple(const float *v, unsigned dim) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (unsigned d = 0; d < dim; d++) {
        h ^= fbits(v[d]);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

static int same_tuple(const float *a, const float *b, unsigned dim) {
    for (unsigned d = 0; d < dim; d++)
        if (fbits(a[d]) != fbits(b[d])) return 0;
    return 1;
}

psdl_pool *psdl_pool_new(unsigned dim, int reserve_first) {
    assert(dim >= 1 && dim <= 4);
    psdl_pool *p = (psdl_pool *)calloc(1, sizeof *p);
    if (!p) return NULL;
    p->dim = dim;
    p->cap = 256;
    p->data = (float *)calloc(p->cap * dim, sizeof *p->data);
    p->mask = 1023;
    p->slots = (uint32_t *)calloc(p->mask + 1, sizeof *p->slots);
    if (!p->data || !p->slots) {
        psdl_pool_free(p);
        return NULL;
    }
    if (reserve_first) {
        p->count = 1; /* entry 0: the dummy, never hashed */
        p->reserved = 1;
    }
    return p;
}

void psdl_pool_free(psdl_pool *pool) {
    if (!pool) return;
    free(pool->data);
    free(pool->slots);
    free(pool);
}

static int pool_rehash(psdl_pool *p, size_t nmask) {
    uint32_t *ns = (uint32_t *)calloc(nmask + 1, sizeof *ns);
    if (!ns) return 0;
    for (size_t i = p->reserved ? 1 : 0; i < p->count; i++) {
        size_t s = (size_t)hash_tuple(p->data + i * p->dim, p->dim) & nmask;
        while (ns[s]) s = (s + 1) & nmask;
        ns[s] = (uint32_t)i + 1;
    }
    free(p->slots);
    p->slots = ns;
    p->mask = nmask;
    return 1;
}

static void to_floats(float *f, const double *v, unsigned dim) {
    for (unsigned d = 0; d < dim; d++) {
        f[d] = (float)v[d];
        if (f[d] == 0) f[d] = 0;
    }
}

uint32_t psdl_pool_find(const psdl_pool *pool, const double *v) {
    float f[4];
    to_floats(f, v, pool->dim);
    size_t s = (size_t)hash_tuple(f, pool->dim) & pool->mask;
    while (pool->slots[s]) {
        uint32_t i = pool->slots[s] - 1;
        if (same_tuple(pool->data + (size_t)i * pool->dim, f, pool->dim)) return i;
        s = (s + 1) & pool->mask;
    }
    return UINT32_MAX;
}

uint32_t psdl_pool_add(psdl_pool *pool, const double *v) {
    float f[4];
    to_floats(f, v, pool->dim);
    size_t s = (size_t)hash_tuple(f, pool->dim) & pool->mask;
    while (pool->slots[s]) {
        uint32_t i = pool->slots[s] - 1;
        if (same_tuple(pool->data + (size_t)i * pool->dim, f, pool->dim)) return i;
        s = (s + 1) & pool->mask;
    }
    if (pool->count >= UINT32_MAX - 1) return UINT32_MAX;
    /* The table is rehashed at half load; when that failed (out of memory) adds go on at a
     * higher load, but never past 3/4: a full table would make every probe loop forever. */
    size_t hashed = pool->count - (pool->reserved ? 1u : 0u);
    if ((hashed + 1) * 4 > (pool->mask + 1) * 3) {
        if (!pool_rehash(pool, pool->mask * 2 + 1)) return UINT32_MAX;
        s = (size_t)hash_tuple(f, pool->dim) & pool->mask;
        while (pool->slots[s]) s = (s + 1) & pool->mask;
    }
    if (pool->count == pool->cap) {
        size_t ncap = pool->cap * 2;
        float *nd = (float *)realloc(pool->data, ncap * pool->dim * sizeof *nd);
        if (!nd) return UINT32_MAX;
        pool->data = nd;
        pool->cap = ncap;
    }
    uint32_t idx = (uint32_t)pool->count++;
    memcpy(pool->data + (size_t)idx * pool->dim, f, pool->dim * sizeof *f);
    pool->slots[s] = idx + 1;
    if (2 * pool->count > pool->mask + 1) {
        if (!pool_rehash(pool, pool->mask * 2 + 1)) {
            /* keep working at a higher load factor; entries are intact */
        }
    }
    return idx;
}

size_t psdl_pool_count(const psdl_pool *pool) { return pool->count; }

const float *psdl_pool_data(const psdl_pool *pool) { return pool->data; }

int psdl_pool_truncate(psdl_pool *pool, size_t n) {
    if (!pool || n > pool->count || n < (pool->reserved ? 1u : 0u)) return -1;
    pool->count = n;
    /* rebuild the hash in place at the current size (no allocation: this runs on error paths,
     * possibly out of memory); the kept entries keep their indices */
    memset(pool->slots, 0, (pool->mask + 1) * sizeof *pool->slots);
    for (size_t i = pool->reserved ? 1 : 0; i < n; i++) {
        size_t s = (size_t)hash_tuple(pool->data + i * pool->dim, pool->dim) & pool->mask;
        while (pool->slots[s]) s = (s + 1) & pool->mask;
        pool->slots[s] = (uint32_t)i + 1;
    }
    return 0;
}

int psdl_pool_set_dummy(psdl_pool *pool, const double *v) {
    if (!pool->reserved) return -1; /* entry 0 is a hashed entry: overwriting it would corrupt the pool */
    to_floats(pool->data, v, pool->dim);
    return 0;
}

/* ================================================================ surfaces and outlines */

size_t psdl_surface_bound(size_t n) { return 6 * n; }

static size_t put_tri(uint32_t *dst, size_t w, uint32_t a, uint32_t b, uint32_t c) {
    if (a == b || b == c || a == c) return w;
    dst[w] = a;
    dst[w + 1] = b;
    dst[w + 2] = c;
    return w + 3;
}

size_t psdl_surface_triangles(uint32_t *dst, int type, const uint32_t *refs, size_t n) {
    assert(dst && (refs || n == 0));
    size_t stride = 0, w = 0;
    switch (type) {
    case 0: stride = 4; break;
    case 1:
    case 2: stride = 2; break;
    case 8: stride = 6; break;
    case 4:
        if (n == 4) { /* collision quad (c1, c0, c3, c2), §2.4 0x4 */
            w = put_tri(dst, w, refs[1], refs[0], refs[2]);
            w = put_tri(dst, w, refs[1], refs[2], refs[3]);
        }
        return w;
    case 5:
    case 6:
    case 12:
        for (size_t i = 1; i + 1 < n; i++) w = put_tri(dst, w, refs[0], refs[i], refs[i + 1]);
        return w;
    default: return 0;
    }
    size_t ns = n / stride;
    for (size_t k = 0; k + 1 < ns; k++)
        for (size_t j = 0; j + 1 < stride; j++) {
            uint32_t v0 = refs[k * stride + j], v1 = refs[k * stride + j + 1];
            uint32_t v2 = refs[(k + 1) * stride + j], v3 = refs[(k + 1) * stride + j + 1];
            /* quad (v0, v1, v3, v2), §4.2 */
            w = put_tri(dst, w, v0, v1, v3);
            w = put_tri(dst, w, v0, v3, v2);
        }
    return w;
}

/* ---------------------------------------------------------------- a small u64 -> u32 hash map */

typedef struct umap {
    uint64_t *keys;
    uint32_t *vals;
    size_t mask;
} umap;

static int umap_init(umap *m, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n + 16) cap <<= 1;
    m->mask = cap - 1;
    m->keys = (uint64_t *)malloc(cap * sizeof *m->keys);
    m->vals = (uint32_t *)calloc(cap, sizeof *m->vals);
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        return 0;
    }
    memset(m->keys, 0xFF, cap * sizeof *m->keys);
    return 1;
}

static void umap_free(umap *m) {
    free(m->keys);
    free(m->vals);
}

static size_t umap_slot(const umap *m, uint64_t k) {
    uint64_t x = k * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    size_t s = (size_t)x & m->mask;
    while (m->keys[s] != UINT64_MAX && m->keys[s] != k) s = (s + 1) & m->mask;
    return s;
}

/* Pointer to the value of k, inserting 0 when absent. */
static uint32_t *umap_at(umap *m, uint64_t k) {
    size_t s = umap_slot(m, k);
    if (m->keys[s] == UINT64_MAX) {
        m->keys[s] = k;
        m->vals[s] = 0;
    }
    return &m->vals[s];
}

static uint32_t umap_get(const umap *m, uint64_t k) {
    size_t s = umap_slot(m, k);
    return m->keys[s] == UINT64_MAX ? 0 : m->vals[s];
}

static uint64_t dkey(uint32_t u, uint32_t v) { return ((uint64_t)u << 32) | v; }

/* Signed plan S of three points. */
static double tri_s(const double *pts, uint32_t a, uint32_t b, uint32_t c) {
    const double *p = pts + 3 * (size_t)a, *q = pts + 3 * (size_t)b, *r = pts + 3 * (size_t)c;
    return (p[0] * q[2] - q[0] * p[2]) + (q[0] * r[2] - r[0] * q[2]) + (r[0] * p[2] - p[0] * r[2]);
}

typedef struct bedge {
    uint32_t u, v;
    int used;
} bedge;

static int cmp_bedge(const void *a, const void *b) {
    const bedge *x = (const bedge *)a, *y = (const bedge *)b;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Index of v in the sorted array u[0..n-1] (present). */
static uint32_t find_u32(const uint32_t *u, size_t n, uint32_t v) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

size_t psdl_boundary_used(uint32_t *dst, const uint32_t *tris, size_t ntris, const float *pts, size_t npts) {
    assert(dst && (tris || ntris == 0) && (pts || ntris == 0));
    size_t nt = 3 * ntris;
    if (ntris > (size_t)-1 / (9 * sizeof(double))) return PSDL_GEOM_NOMEM;
    for (size_t i = 0; i < nt; i++)
        if (tris[i] >= npts) return PSDL_GEOM_INVALID;
    if (nt == 0) return 0;
    uint32_t *t = (uint32_t *)malloc(nt * sizeof *t);
    uint32_t *u = (uint32_t *)malloc(nt * sizeof *u);
    double *q = (double *)malloc(3 * nt * sizeof *q);
    size_t n = PSDL_GEOM_NOMEM;
    if (t && u && q) {
        memcpy(u, tris, nt * sizeof *u);
        qsort(u, nt, sizeof *u, cmp_u32);
        size_t nu = 0;
        for (size_t i = 0; i < nt; i++)
            if (nu == 0 || u[nu - 1] != u[i]) u[nu++] = u[i];
        for (size_t i = 0; i < nu; i++)
            for (size_t k = 0; k < 3; k++) q[3 * i + k] = pts[3 * (size_t)u[i] + k];
        for (size_t i = 0; i < nt; i++) t[i] = find_u32(u, nu, tris[i]);
        n = psdl_boundary(dst, t, ntris, q, nu);
        if (n != PSDL_GEOM_NOMEM && n != PSDL_GEOM_INVALID)
            for (size_t i = 0; i < n; i++) dst[i] = u[dst[i]];
    }
    free(t);
    free(u);
    free(q);
    return n;
}

size_t psdl_boundary(uint32_t *dst, const uint32_t *tris, size_t ntris, const double *pts, size_t npts) {
    assert(dst && (tris || ntris == 0) && pts);
    for (size_t i = 0; i < 3 * ntris; i++)
        if (tris[i] >= npts) return PSDL_GEOM_INVALID;
    umap cnt;
    if (!umap_init(&cnt, 3 * ntris)) return PSDL_GEOM_NOMEM;
    uint32_t *t = (uint32_t *)malloc((3 * ntris + 1) * sizeof *t);
    bedge *be = (bedge *)malloc((3 * ntris + 1) * sizeof *be);
    uint32_t *loop = (uint32_t *)malloc((3 * ntris + 1) * sizeof *loop);
    /* loops wound the other way (holes): their points and starts */
    uint32_t *hv = (uint32_t *)malloc((3 * ntris + 1) * sizeof *hv);
    size_t *hs = (size_t *)malloc((3 * ntris + 1) * sizeof *hs);
    double *kp = NULL;
    uint32_t *kstart = NULL, *kd = NULL;
    size_t nhv = 0, nhs = 0;
    size_t result = PSDL_GEOM_NOMEM;
    if (!t || !be || !loop || !hv || !hs) goto done;
    size_t nt = 0;
    for (size_t i = 0; i < ntris; i++) {
        uint32_t a = tris[3 * i], b = tris[3 * i + 1], c = tris[3 * i + 2];
        if (a == b || b == c || a == c) continue;
        double s = tri_s(pts, a, b, c);
        if (s == 0) continue;
        if (s > 0) { /* retail winding */
            uint32_t x = b;
            b = c;
            c = x;
        }
        t[3 * nt] = a, t[3 * nt + 1] = b, t[3 * nt + 2] = c;
        nt++;
        (*umap_at(&cnt, dkey(a, b)))++;
        (*umap_at(&cnt, dkey(b, c)))++;
        (*umap_at(&cnt, dkey(c, a)))++;
    }
    size_t ne = 0;
    for (size_t i = 0; i < nt; i++)
        for (int j = 0; j < 3; j++) {
            uint32_t u = t[3 * i + (size_t)j], v = t[3 * i + (size_t)((j + 1) % 3)];
            if (umap_get(&cnt, dkey(u, v)) > umap_get(&cnt, dkey(v, u))) { /* net boundary edge */
                be[ne].u = u, be[ne].v = v, be[ne].used = 0;
                ne++;
            }
        }
    qsort(be, ne, sizeof *be, cmp_bedge);
    {
        size_t un = 0; /* an edge used twice in one direction counts once */
        for (size_t i = 0; i < ne; i++)
            if (un == 0 || be[un - 1].u != be[i].u || be[un - 1].v != be[i].v) be[un++] = be[i];
        ne = un;
    }
    double best_s = 0;
    size_t best_n = 0;
    for (size_t s = 0; s < ne; s++) {
        if (be[s].used) continue;
        size_t m = 0;
        size_t cur = s;
        uint32_t start = be[s].u;
        while (1) {
            be[cur].used = 1;
            loop[m++] = be[cur].u;
            uint32_t v = be[cur].v;
            if (v == start) break;
            /* outgoing unused edges of v: binary search the first with u == v */
            size_t lo = 0, hi = ne;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (be[mid].u < v) lo = mid + 1;
                else hi = mid;
            }
            size_t pick = ne;
            double pick_ang = 0;
            const double *pu = pts + 3 * (size_t)be[cur].u, *pv = pts + 3 * (size_t)v;
            double ix = pv[0] - pu[0], iz = pv[2] - pu[2];
            for (size_t k = lo; k < ne && be[k].u == v; k++) {
                if (be[k].used) continue;
                const double *pw = pts + 3 * (size_t)be[k].v;
                double ox = pw[0] - pv[0], oz = pw[2] - pv[2];
                /* sharpest clockwise turn keeps a loop tight around its own interior */
                double ang = atan2(ix * oz - iz * ox, ix * ox + iz * oz);
                if (pick == ne || ang < pick_ang) pick = k, pick_ang = ang;
            }
            if (pick == ne) {
                m = 0; /* open chain: not a loop */
                break;
            }
            cur = pick;
            if (m > 3 * ntris) {
                m = 0;
                break;
            }
        }
        if (m >= 3) {
            double area = 0;
            for (size_t i = 0; i < m; i++) {
                const double *a = pts + 3 * (size_t)loop[i], *b = pts + 3 * (size_t)loop[(i + 1) % m];
                area += a[0] * b[2] - b[0] * a[2];
            }
            if (area < best_s) {
                best_s = area;
                best_n = m;
                memcpy(dst, loop, m * sizeof *loop);
            } else if (area > 0) {
                hs[nhs++] = nhv;
                memcpy(hv + nhv, loop, m * sizeof *loop);
                nhv += m;
            }
        }
    }
    result = best_n;
    if (best_n >= 3 && nhs > 0) {
        /* holes inside the outline join it through keyhole cuts (psdl_keyhole), so that the
         * perimeter's crossing-number test leaves them out (§1.5) */
        size_t np = best_n + nhv, nk = 0;
        kp = (double *)malloc(3 * np * sizeof *kp);
        kstart = (uint32_t *)malloc((nhs + 1) * sizeof *kstart);
        kd = (uint32_t *)malloc((psdl_keyhole_bound(np, nhs) + 1) * sizeof *kd);
        uint32_t *ids = (uint32_t *)malloc((np + 1) * sizeof *ids);
        if (!kp || !kstart || !kd || !ids) {
            free(ids);
            result = PSDL_GEOM_NOMEM;
            goto done;
        }
        for (size_t i = 0; i < best_n; i++) ids[i] = dst[i], memcpy(kp + 3 * i, pts + 3 * (size_t)dst[i], 3 * sizeof *kp);
        size_t w = best_n;
        for (size_t h = 0; h < nhs; h++) {
            size_t s0 = hs[h], s1 = h + 1 < nhs ? hs[h + 1] : nhv;
            const double *q = pts + 3 * (size_t)hv[s0];
            int in = 0; /* the hole's first point inside the outline (crossing number) */
            for (size_t i = 0; i < best_n; i++) {
                const double *a = kp + 3 * i, *b = kp + 3 * ((i + 1) % best_n);
                if ((a[2] > q[2]) != (b[2] > q[2]) && q[0] < a[0] + (q[2] - a[2]) * (b[0] - a[0]) / (b[2] - a[2])) in = !in;
            }
            if (!in) continue;
            kstart[nk++] = (uint32_t)w;
            for (size_t i = s0; i < s1; i++, w++) ids[w] = hv[i], memcpy(kp + 3 * w, pts + 3 * (size_t)hv[i], 3 * sizeof *kp);
        }
        if (nk > 0) {
            size_t r = psdl_keyhole(kd, kp, w, kstart, nk);
            if (r == PSDL_GEOM_NOMEM) result = r;
            else if (r != PSDL_GEOM_INVALID && r >= 3 && r <= 3 * ntris) {
                for (size_t i = 0; i < r; i++) dst[i] = ids[kd[i]];
                result = r;
            }
        }
        free(ids);
    }
done:
    umap_free(&cnt);
    free(t);
    free(be);
    free(loop);
    free(hv);
    free(hs);
    free(kp);
    free(kstart);
    free(kd);
    return result;
}

/* ================================================================ neighbour links */

/* Cleaned perimeter of room r: consecutive duplicates and a closing duplicate dropped;
 * returns its length (points written to out). */
static size_t clean_perimeter(uint32_t *out, const uint32_t *v, size_t n) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != v[i]) out[m++] = v[i];
    while (m > 1 && out[m - 1] == out[0]) m--;
    return m;
}

typedef struct vr {
    uint32_t v, r;
} vr;

/* Checks that every perimeter vertex is below npts; *nvert receives 1 + the largest one (0
 * when there is none): per-vertex scratch is sized by it, not by npts. */
static int link_vertices(const uint32_t *verts, size_t total, size_t npts, size_t *nvert) {
    size_t m = 0;
    for (size_t i = 0; i < total; i++) {
        if (verts[i] >= npts) return 0;
        if ((size_t)verts[i] + 1 > m) m = (size_t)verts[i] + 1;
    }
    *nvert = m;
    return 1;
}

size_t psdl_link_bound(const uint32_t *start, const uint32_t *verts, size_t nrooms, size_t npts) {
    assert(start && (verts || start[nrooms] == 0));
    size_t total = start[nrooms], nv;
    if (!link_vertices(verts, total, npts, &nv)) return PSDL_GEOM_INVALID;
    uint32_t *occ = (uint32_t *)calloc(nv + 1, sizeof *occ);
    if (!occ) return PSDL_GEOM_NOMEM;
    for (size_t i = 0; i < total; i++) occ[verts[i]]++;
    uint64_t extra = 0;
    for (size_t v = 0; v < nv; v++) extra += (uint64_t)occ[v] * occ[v];
    free(occ);
    /* dst_start is 32-bit: an output that large cannot be written anyway */
    if (extra > UINT32_MAX || total + extra > UINT32_MAX) return PSDL_GEOM_NOMEM;
    return total + (size_t)extra;
}

size_t psdl_link(uint32_t *dst_verts, uint32_t *dst_nb, uint32_t *dst_start, const uint32_t *start,
                 const uint32_t *verts, size_t nrooms, size_t npts) {
    assert(dst_verts && dst_nb && dst_start && start && (verts || start[nrooms] == 0));
    size_t total = start[nrooms], nvert;
    if (!link_vertices(verts, total, npts, &nvert)) return PSDL_GEOM_INVALID;
    uint32_t *cv = (uint32_t *)malloc((total + 1) * sizeof *cv);
    uint32_t *cs = (uint32_t *)malloc((nrooms + 1) * sizeof *cs);
    /* per vertex (counting sort, rooms in order): the rooms touching it (tstart/troom, a room
     * listed again for each time its perimeter names the vertex) and the edges whose lower
     * vertex it is (estart: the edge's other vertex ehi and its room eroom) */
    uint32_t *tstart = (uint32_t *)calloc(nvert + 2, sizeof *tstart);
    uint32_t *estart = (uint32_t *)calloc(nvert + 2, sizeof *estart);
    uint32_t *troom = (uint32_t *)malloc((total + 1) * sizeof *troom);
    uint32_t *ehi = (uint32_t *)malloc((total + 1) * sizeof *ehi);
    uint32_t *eroom = (uint32_t *)malloc((total + 1) * sizeof *eroom);
    uint32_t *enb = (uint32_t *)malloc((total + 1) * sizeof *enb);
    /* per room: its edge neighbours (sorted unique), CSR */
    uint32_t *nbs = (uint32_t *)malloc((total + 1) * sizeof *nbs);
    uint32_t *nbstart = (uint32_t *)malloc((nrooms + 1) * sizeof *nbstart);
    uint32_t *mark = (uint32_t *)malloc((nvert + 1) * sizeof *mark);
    size_t result = PSDL_GEOM_NOMEM;
    if (!cv || !cs || !tstart || !estart || !troom || !ehi || !eroom || !enb || !nbs || !nbstart || !mark) goto done;
    size_t m = 0;
    for (size_t r = 0; r < nrooms; r++) {
        cs[r] = (uint32_t)m;
        m += clean_perimeter(cv + m, verts + start[r], start[r + 1] - start[r]);
    }
    cs[nrooms] = (uint32_t)m;
    for (size_t r = 0; r < nrooms; r++) {
        size_t n = cs[r + 1] - cs[r];
        for (size_t k = 0; k < n; k++) {
            uint32_t a = cv[cs[r] + k], b = cv[cs[r] + (k + 1) % n];
            tstart[a + 1]++;
            if (n >= 2 && a != b) estart[(a < b ? a : b) + 1]++;
        }
    }
    for (size_t v = 0; v < nvert; v++) {
        tstart[v + 1] += tstart[v];
        estart[v + 1] += estart[v];
    }
    /* fill in room order, so that each vertex lists its rooms ascending; the running fill
     * positions live in the next slot (tstart[v + 1]), restored by the shift below */
    for (size_t r = 0; r < nrooms; r++) {
        size_t n = cs[r + 1] - cs[r];
        for (size_t k = 0; k < n; k++) {
            uint32_t a = cv[cs[r] + k], b = cv[cs[r] + (k + 1) % n];
            troom[tstart[a]++] = (uint32_t)r;
            if (n >= 2 && a != b) {
                uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
                ehi[estart[lo]] = hi;
                eroom[estart[lo]++] = (uint32_t)r;
            }
        }
    }
    for (size_t v = nvert; v > 0; v--) {
        tstart[v] = tstart[v - 1];
        estart[v] = estart[v - 1];
    }
    tstart[0] = estart[0] = 0;
    /* edge neighbour of every point: the lowest other room with the same edge (either
     * direction) */
    size_t nn = 0;
    for (size_t r = 0; r < nrooms; r++) {
        nbstart[r] = (uint32_t)nn;
        size_t n = cs[r + 1] - cs[r];
        for (size_t k = 0; k < n; k++) {
            uint32_t a = cv[cs[r] + k], b = cv[cs[r] + (k + 1) % n];
            uint32_t nb = 0;
            if (n >= 2 && a != b) {
                uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
                for (size_t i = estart[lo]; i < estart[lo + 1]; i++)
                    if (ehi[i] == hi && eroom[i] != r) {
                        nb = eroom[i] + 1;
                        break;
                    }
            }
            enb[cs[r] + k] = nb;
            if (nb) {
                /* insert into the room's sorted unique neighbour list */
                size_t j = nn;
                while (j > nbstart[r] && nbs[j - 1] > nb) j--;
                if (!(j > nbstart[r] && nbs[j - 1] == nb)) {
                    memmove(nbs + j + 1, nbs + j, (nn - j) * sizeof *nbs);
                    nbs[j] = nb;
                    nn++;
                }
            }
        }
    }
    nbstart[nrooms] = (uint32_t)nn;
    /* output with vertex repeats for rooms touching only at a vertex (once per vertex and
     * room: mark[v] holds the last room that placed v's repeats) */
    memset(mark, 0xFF, (nvert + 1) * sizeof *mark);
    size_t w = 0;
    for (size_t r = 0; r < nrooms; r++) {
        dst_start[r] = (uint32_t)w;
        size_t n = cs[r + 1] - cs[r];
        for (size_t k = 0; k < n; k++) {
            uint32_t v = cv[cs[r] + k];
            int first = mark[v] != (uint32_t)r; /* v < nvert (link_vertices) */
            mark[v] = (uint32_t)r;
            if (first)
                for (size_t i = tstart[v]; i < tstart[v + 1]; i++) {
                    if (troom[i] == r || (i > tstart[v] && troom[i] == troom[i - 1])) continue;
                    uint32_t x = troom[i] + 1;
                    int linked = 0;
                    for (size_t j = nbstart[r]; j < nbstart[r + 1]; j++)
                        if (nbs[j] == x) linked = 1;
                    if (linked) continue;
                    dst_verts[w] = v;
                    dst_nb[w] = x;
                    w++;
                }
            dst_verts[w] = v;
            dst_nb[w] = enb[cs[r] + k];
            w++;
        }
    }
    dst_start[nrooms] = (uint32_t)w;
    result = w;
done:
    free(cv);
    free(cs);
    free(tstart);
    free(estart);
    free(troom);
    free(ehi);
    free(eroom);
    free(enb);
    free(nbs);
    free(nbstart);
    free(mark);
    return result;
}

/* ================================================================ T-junctions */

typedef struct tj {
    uint32_t room, edge, v;
    double t;
} tj;

static int cmp_tj(const void *a, const void *b) {
    const tj *x = (const tj *)a, *y = (const tj *)b;
    if (x->room != y->room) return x->room < y->room ? -1 : 1;
    if (x->edge != y->edge) return x->edge < y->edge ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* Cells of a grid axis spanning `span` metres (1 .. g + 1; NaN-safe: no float-to-size_t
 * conversion outside the range). */
static size_t cell_count(double span, double cell, size_t g) {
    double c = floor(span / cell);
    if (!(c >= 0)) return 1;
    if (c > (double)g) return g + 1;
    return (size_t)c + 1;
}

/* fmin and fmax without the library call (the same results: a NaN argument gives the other;
 * a zero's sign may differ, which none of the uses below can see) for the loops over every
 * vertex and edge. */
static double min_nan(double a, double b) { return (a < b || b != b) ? a : b; }
static double max_nan(double a, double b) { return (a > b || b != b) ? a : b; }

/* Grid index of a coordinate already divided by the cell size, clamped to 0 .. n-1. */
static size_t cell_at(double v, size_t n) {
    v = floor(v);
    if (!(v > 0)) return 0;
    if (v >= (double)(n - 1)) return n - 1;
    return (size_t)v;
}

size_t psdl_tjunctions(uint32_t *dst, size_t cap, const double *pts, size_t npts, const uint32_t *start,
                       const uint32_t *verts, size_t nrooms, double eps) {
    assert(pts && start && (dst || cap == 0));
    size_t total = start[nrooms];
    if (total == 0) return 0;
    if (!(eps > 0)) eps = 1e-3; /* also NaN */
    /* unique (vertex, room) entries sorted by vertex, then room (a counting sort over the
     * vertices, rooms in order); vstart[v] is vertex v's first entry */
    size_t nvert = 0;
    for (size_t i = 0; i < total; i++)
        if (verts[i] < npts && (size_t)verts[i] + 1 > nvert) nvert = (size_t)verts[i] + 1;
    if (nvert == 0) return 0;
    vr *ent = (vr *)malloc(total * sizeof *ent);
    uint32_t *vstart = (uint32_t *)calloc(nvert + 1, sizeof *vstart);
    uint32_t *cstart = NULL, *cells = NULL, *uv = NULL, *cent = NULL;
    double *cp = NULL;
    size_t found_cap = 64, nfound = 0;
    tj *found = (tj *)malloc(found_cap * sizeof *found);
    size_t result = PSDL_GEOM_NOMEM;
    if (!ent || !vstart || !found) goto done;
    for (size_t i = 0; i < total; i++)
        if (verts[i] < npts) vstart[verts[i] + 1]++;
    for (size_t v = 0; v < nvert; v++) vstart[v + 1] += vstart[v];
    for (size_t r = 0; r < nrooms; r++) /* fill positions in vstart[v + 1], shifted back below */
        for (size_t i = start[r]; i < start[r + 1]; i++)
            if (verts[i] < npts) {
                size_t at = vstart[verts[i]]++;
                ent[at].v = verts[i];
                ent[at].r = (uint32_t)r;
            }
    for (size_t v = nvert; v > 0; v--) vstart[v] = vstart[v - 1];
    vstart[0] = 0;
    size_t ne = 0;
    for (size_t v = 0; v < nvert; v++) { /* unique (v, r), vstart renumbered */
        size_t s0 = vstart[v], s1 = vstart[v + 1];
        vstart[v] = (uint32_t)ne;
        for (size_t i = s0; i < s1; i++)
            if (i == s0 || ent[i].r != ent[i - 1].r) ent[ne++] = ent[i];
    }
    vstart[nvert] = (uint32_t)ne;
    /* the grid holds each vertex once (uv: the vertices some room names, ascending): a vertex
     * named by several rooms is tested once per edge */
    uv = (uint32_t *)malloc((ne + 1) * sizeof *uv);
    if (!uv) goto done;
    size_t nu = 0;
    for (size_t v = 0; v < nvert; v++)
        if (vstart[v + 1] > vstart[v]) uv[nu++] = (uint32_t)v;
    double x0 = INFINITY, z0 = INFINITY, x1 = -INFINITY, z1 = -INFINITY;
    for (size_t i = 0; i < nu; i++) {
        const double *p = pts + 3 * (size_t)uv[i];
        x0 = min_nan(x0, p[0]), x1 = max_nan(x1, p[0]), z0 = min_nan(z0, p[2]), z1 = max_nan(z1, p[2]);
    }
    double ext = fmax(x1 - x0, z1 - z0);
    /* finite coordinates can still span more than DBL_MAX (-1e308 .. 1e308): the cell size
     * would be infinite and the cell counts NaN */
    if (!isfinite(ext)) {
        result = PSDL_GEOM_INVALID;
        goto done;
    }
    size_t g = (size_t)sqrt((double)nu) + 1;
    if (g > 1024) g = 1024;
    double cell = ext / (double)g;
    if (!(cell >= 4 * eps)) cell = 4 * eps;
    size_t gx = cell_count(x1 - x0, cell, g), gz = cell_count(z1 - z0, cell, g);
    cstart = (uint32_t *)calloc(gx * gz + 1, sizeof *cstart);
    cells = (uint32_t *)malloc((nu + 1) * sizeof *cells);
    /* each cell's vertices and their points side by side (the candidate loop reads them in
     * order instead of all over the point array) */
    cent = (uint32_t *)malloc((nu + 1) * sizeof *cent);
    cp = (double *)malloc((3 * nu + 1) * sizeof *cp);
    if (!cstart || !cells || !cent || !cp) goto done;
#define CELL_OF(px, pz) (cell_at(((pz)-z0) / cell, gz) * gx + cell_at(((px)-x0) / cell, gx))
    for (size_t i = 0; i < nu; i++) {
        const double *p = pts + 3 * (size_t)uv[i];
        cells[i] = (uint32_t)CELL_OF(p[0], p[2]);
        cstart[cells[i] + 1]++;
    }
    for (size_t c = 0; c < gx * gz; c++) cstart[c + 1] += cstart[c];
    for (size_t i = 0; i < nu; i++) { /* fill positions in cstart[c + 1], shifted back below */
        size_t at = cstart[cells[i]]++;
        cent[at] = uv[i];
        memcpy(cp + 3 * at, pts + 3 * (size_t)uv[i], 3 * sizeof *cp);
    }
    for (size_t c = gx * gz; c > 0; c--) cstart[c] = cstart[c - 1];
    cstart[0] = 0;
    for (size_t r = 0; r < nrooms; r++) {
        size_t n = start[r + 1] - start[r];
        const uint32_t *pv = verts + start[r];
        for (size_t k = 0; k < n; k++) {
            uint32_t a = pv[k], b = pv[(k + 1) % n];
            if (a == b || a >= npts || b >= npts) continue;
            const double *pa = pts + 3 * (size_t)a, *pb = pts + 3 * (size_t)b;
            double d[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
            double len2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (len2 <= 4 * eps * eps) continue;
            double len = sqrt(len2);
            double ex0 = min_nan(pa[0], pb[0]) - eps, ex1 = max_nan(pa[0], pb[0]) + eps;
            double ez0 = min_nan(pa[2], pb[2]) - eps, ez1 = max_nan(pa[2], pb[2]) + eps;
            size_t cx0 = cell_at((ex0 - x0) / cell, gx), cx1 = cell_at((ex1 - x0) / cell, gx);
            size_t cz0 = cell_at((ez0 - z0) / cell, gz), cz1 = cell_at((ez1 - z0) / cell, gz);
            for (size_t cz = cz0; cz <= cz1; cz++)
                for (size_t cx = cx0; cx <= cx1; cx++) {
                    size_t c = cz * gx + cx;
                    for (size_t q = cstart[c]; q < cstart[c + 1]; q++) {
                        uint32_t ev = cent[q];
                        if (ev == a || ev == b) continue;
                        const double *p = cp + 3 * q;
                        double w[3] = {p[0] - pa[0], p[1] - pa[1], p[2] - pa[2]};
                        double t = (w[0] * d[0] + w[1] * d[1] + w[2] * d[2]) / len2;
                        if (t * len <= eps || (1 - t) * len <= eps) continue;
                        double cxp = pa[0] + t * d[0] - p[0], cyp = pa[1] + t * d[1] - p[1], czp = pa[2] + t * d[2] - p[2];
                        if (cxp * cxp + cyp * cyp + czp * czp > eps * eps) continue;
                        {   /* a vertex of this room's own perimeter is no T-junction (tested
                             * after the geometry, which rejects nearly every candidate) */
                            int own = 0;
                            for (size_t i = vstart[ev]; i < vstart[ev + 1]; i++)
                                if (ent[i].r == r) own = 1;
                            if (own) continue;
                        }
                        if (nfound == found_cap) {
                            tj *nf = (tj *)realloc(found, 2 * found_cap * sizeof *nf);
                            if (!nf) goto done;
                            found = nf;
                            found_cap *= 2;
                        }
                        found[nfound].room = (uint32_t)r;
                        found[nfound].edge = (uint32_t)k;
                        found[nfound].v = ev;
                        found[nfound].t = t;
                        nfound++;
                    }
                }
        }
    }
#undef CELL_OF
    qsort(found, nfound, sizeof *found, cmp_tj);
    for (size_t f = 0; f < nfound && f < cap; f++) {
        dst[3 * f] = found[f].room;
        dst[3 * f + 1] = found[f].edge;
        dst[3 * f + 2] = found[f].v;
    }
    result = nfound;
done:
    free(ent);
    free(vstart);
    free(uv);
    free(cstart);
    free(cells);
    free(cent);
    free(cp);
    free(found);
    return result;
}

/* ---------------------------------------------------------------- blocks beside roads at another height */

typedef struct hm_cand {
    int64_t gx, gz;  /* grid cell of the edge's midpoint */
    uint32_t room, k; /* block room, perimeter position */
    uint32_t a, c;    /* end vertices */
} hm_cand;

static int cmp_hm_cell(const void *x, const void *y) {
    const hm_cand *p = (const hm_cand *)x, *q = (const hm_cand *)y;
    if (p->gx != q->gx) return p->gx < q->gx ? -1 : 1;
    if (p->gz != q->gz) return p->gz < q->gz ? -1 : 1;
    if (p->room != q->room) return p->room < q->room ? -1 : 1;
    return (p->k > q->k) - (p->k < q->k);
}

static int cmp_hm_rec(const void *x, const void *y) {
    const psdl_height_mismatch *p = (const psdl_height_mismatch *)x, *q = (const psdl_height_mismatch *)y;
    if (p->block != q->block) return p->block < q->block ? -1 : 1;
    return (p->road > q->road) - (p->road < q->road);
}

/* First candidate in the sorted array c[0 .. n-1] at cell (gx, gz) or after it, searched in
 * c[lo .. hi-1] (where it lies: hi when none there). */
static size_t hm_lower(const hm_cand *c, size_t lo, size_t hi, int64_t gx, int64_t gz) {
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].gx < gx || (c[mid].gx == gx && c[mid].gz < gz)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Where psdl_height_mismatches reads rooms and points: CSR arrays over doubles, or the rooms
 * 1.. of a document over its float vertices (room r of the kernel is document room r + 1). */
typedef struct hm_src {
    const double *pts;          /* x, y, z (CSR form) */
    const uint32_t *start, *verts, *nb;
    const psdl_doc *doc;        /* or a document */
    size_t npts;
} hm_src;

static size_t hm_len(const hm_src *s, size_t r) {
    return s->doc ? s->doc->rooms[r + 1].nperimeter : (size_t)(s->start[r + 1] - s->start[r]);
}

static uint32_t hm_vert(const hm_src *s, size_t r, size_t k) {
    return s->doc ? s->doc->rooms[r + 1].perimeter[k].vertex : s->verts[s->start[r] + k];
}

static uint32_t hm_nb(const hm_src *s, size_t r, size_t k) {
    return s->doc ? s->doc->rooms[r + 1].perimeter[k].neighbour : s->nb[s->start[r] + k];
}

/* Point v (< npts) as doubles. */
static void hm_point(const hm_src *s, uint32_t v, double p[3]) {
    if (s->doc) {
        const psdl_vec3 *q = &s->doc->vertices[v];
        p[0] = q->x, p[1] = q->y, p[2] = q->z;
    } else {
        const double *q = s->pts + 3 * (size_t)v;
        p[0] = q[0], p[1] = q[1], p[2] = q[2];
    }
}

static size_t hm_run(psdl_height_mismatch *dst, size_t cap, const hm_src *src, const unsigned char *kind,
                     size_t nrooms, double eps, double gap, double cell) {
    size_t npts = src->npts;
    if (!(cell > 0)) cell = 16;
    size_t ncand = 0, result = 0, nrec = 0, reccap = 16;
    for (size_t r = 0; r < nrooms; r++) {
        if (kind[r] != 1) continue;
        size_t n = hm_len(src, r);
        for (size_t k = 0; k < n; k++) {
            uint32_t a = hm_vert(src, r, k), c = hm_vert(src, r, (k + 1) % n);
            if (a != c && hm_nb(src, r, k) == 0 && a < npts && c < npts) ncand++;
        }
    }
    if (ncand == 0) return 0;
    hm_cand *cand = (hm_cand *)malloc(ncand * sizeof *cand);
    psdl_height_mismatch *rec = (psdl_height_mismatch *)malloc(reccap * sizeof *rec);
    umap pairs;
    if (!cand || !rec || !umap_init(&pairs, 64)) { /* umap_init frees what it got when it fails */
        free(cand);
        free(rec);
        return PSDL_GEOM_NOMEM;
    }
    size_t w = 0;
    for (size_t r = 0; r < nrooms; r++) {
        if (kind[r] != 1) continue;
        size_t n = hm_len(src, r);
        for (size_t k = 0; k < n; k++) {
            uint32_t a = hm_vert(src, r, k), c = hm_vert(src, r, (k + 1) % n);
            if (a == c || hm_nb(src, r, k) != 0 || a >= npts || c >= npts) continue;
            double pa[3], pc[3];
            hm_point(src, a, pa);
            hm_point(src, c, pc);
            cand[w].gx = (int64_t)floor((pa[0] + pc[0]) / 2 / cell);
            cand[w].gz = (int64_t)floor((pa[2] + pc[2]) / 2 / cell);
            cand[w].room = (uint32_t)r, cand[w].k = (uint32_t)k, cand[w].a = a, cand[w].c = c;
            w++;
        }
    }
    qsort(cand, ncand, sizeof *cand, cmp_hm_cell);
    int64_t cx0 = cand[0].gx, cx1 = cand[ncand - 1].gx;
    /* the first candidate of each cell column cx0 .. cx1 (col[j]: column cx0 + j; col[ncol]:
     * ncand), so that a search looks in one column; none when the columns are too many */
    size_t *col = NULL, ncol = 0;
    if (cx1 - cx0 >= 0 && (uint64_t)(cx1 - cx0) < 4 * (uint64_t)ncand + 1024) {
        ncol = (size_t)(cx1 - cx0) + 1;
        col = (size_t *)malloc((ncol + 1) * sizeof *col);
        if (col) {
            size_t i = 0;
            for (size_t j = 0; j <= ncol; j++) {
                while (i < ncand && cand[i].gx < cx0 + (int64_t)j) i++;
                col[j] = i;
            }
        }
    }
    for (size_t r = 0; r < nrooms; r++) {
        if (kind[r] != 2) continue;
        size_t n = hm_len(src, r);
        for (size_t k = 0; k < n; k++) {
            uint32_t ea = hm_vert(src, r, k), ec = hm_vert(src, r, (k + 1) % n);
            if (ea == ec || ea >= npts || ec >= npts) continue;
            double e0[3], e1[3];
            hm_point(src, ea, e0);
            hm_point(src, ec, e1);
            /* the cells the edge's box (grown by eps) covers: a midpoint within eps of the
             * edge lies in one of them */
            double gx0 = floor((min_nan(e0[0], e1[0]) - eps) / cell), gx1 = floor((max_nan(e0[0], e1[0]) + eps) / cell);
            double gz0 = floor((min_nan(e0[2], e1[2]) - eps) / cell), gz1 = floor((max_nan(e0[2], e1[2]) + eps) / cell);
            if (!(gx0 <= gx1 && gz0 <= gz1)) continue; /* NaN */
            if (gx1 < (double)cx0 || gx0 > (double)cx1) continue;
            if (gx0 < (double)cx0) gx0 = (double)cx0;
            if (gx1 > (double)cx1) gx1 = (double)cx1;
            double ex = e1[0] - e0[0], ey = e1[1] - e0[1], ez = e1[2] - e0[2];
            double l2 = ex * ex + ez * ez;
            for (int64_t gx = (int64_t)gx0; gx <= (int64_t)gx1; gx++) {
                size_t lo = col ? col[gx - cx0] : 0, hi = col ? col[gx - cx0 + 1] : ncand;
                for (size_t i = hm_lower(cand, lo, hi, gx, (int64_t)gz0); i < ncand && cand[i].gx == gx &&
                                                                             (double)cand[i].gz <= gz1;
                     i++) {
                    const hm_cand *q = &cand[i];
                    double pa[3], pc[3];
                    hm_point(src, q->a, pa);
                    hm_point(src, q->c, pc);
                    double mx = (pa[0] + pc[0]) / 2, my = (pa[1] + pc[1]) / 2, mz = (pa[2] + pc[2]) / 2;
                    double dx = pc[0] - pa[0], dz = pc[2] - pa[2];
                    double len = sqrt(dx * dx + dz * dz);
                    if (!(len > 2 * eps)) continue;
                    double t = ((mx - e0[0]) * ex + (mz - e0[2]) * ez) / l2;
                    if (!(t >= 0 && t <= 1)) continue;
                    double px = e0[0] + t * ex - mx, pz = e0[2] + t * ez - mz;
                    double cr = fabs(dx * ez - dz * ex) / (len * sqrt(l2));
                    double dy = my - (e0[1] + t * ey);
                    if (!(px * px + pz * pz <= eps * eps && cr < 0.01 && fabs(dy) > eps && fabs(dy) <= gap)) continue;
                    /* one record per pair of rooms: the lowest block edge, and for it the
                     * lowest road edge */
                    uint32_t *slot = umap_at(&pairs, dkey(q->room, (uint32_t)r));
                    if (*slot == 0) {
                        if (nrec == reccap) {
                            psdl_height_mismatch *nr = (psdl_height_mismatch *)realloc(rec, 2 * reccap * sizeof *nr);
                            if (!nr) {
                                result = PSDL_GEOM_NOMEM;
                                goto done;
                            }
                            rec = nr;
                            reccap *= 2;
                        }
                        rec[nrec].block = q->room, rec[nrec].edge = q->k, rec[nrec].road = (uint32_t)r;
                        rec[nrec].road_edge = (uint32_t)k, rec[nrec].dy = dy;
                        *slot = (uint32_t)++nrec;
                        if (2 * nrec + 16 > pairs.mask) { /* keep the map under half load */
                            umap bigger;
                            if (!umap_init(&bigger, 2 * nrec)) {
                                result = PSDL_GEOM_NOMEM;
                                goto done;
                            }
                            for (size_t j = 0; j < nrec; j++)
                                *umap_at(&bigger, dkey(rec[j].block, rec[j].road)) = (uint32_t)j + 1;
                            umap old = pairs;
                            pairs = bigger;
                            umap_free(&old);
                        }
                    } else {
                        psdl_height_mismatch *m = &rec[*slot - 1];
                        if (q->k < m->edge || (q->k == m->edge && (uint32_t)k < m->road_edge)) {
                            m->edge = q->k, m->road_edge = (uint32_t)k, m->dy = dy;
                        }
                    }
                }
            }
        }
    }
    qsort(rec, nrec, sizeof *rec, cmp_hm_rec);
    for (size_t j = 0; j < nrec && j < cap; j++) dst[j] = rec[j];
    result = nrec;
done:
    free(col);
    free(cand);
    free(rec);
    umap_free(&pairs);
    return result;
}

size_t psdl_height_mismatches(psdl_height_mismatch *dst, size_t cap, const double *pts, size_t npts,
                              const uint32_t *start, const uint32_t *verts, const uint32_t *nb,
                              const unsigned char *kind, size_t nrooms, double eps, double gap, double cell) {
    assert((dst || cap == 0) && (pts || npts == 0) && start && (verts || start[nrooms] == 0) && (nb || start[nrooms] == 0) &&
           (kind || nrooms == 0));
    hm_src src = {pts, start, verts, nb, NULL, npts};
    return hm_run(dst, cap, &src, kind, nrooms, eps, gap, cell);
}

size_t psdl_height_mismatches_doc(psdl_height_mismatch *dst, size_t cap, const psdl_doc *doc,
                                  const unsigned char *kind, double eps, double gap, double cell) {
    assert((dst || cap == 0) && doc && (kind || doc->nrooms <= 1));
    hm_src src = {NULL, NULL, NULL, NULL, doc, doc->nvertices};
    return hm_run(dst, cap, &src, kind, doc->nrooms > 0 ? doc->nrooms - 1 : 0, eps, gap, cell);
}
