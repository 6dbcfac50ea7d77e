/* psdl_grid.c -- a uniform grid of items by plan box (psdl_geom.h): psdl.plan's Grid in C for
 * the searches run once per segment or node (psdl.city.network's conflicts and overlaps).
 * Square cells of `cell` metres; cell (i, j) holds what meets x in [i cell, (i + 1) cell), z
 * likewise. Within a cell items keep their insertion order and queries visit cells x-major
 * and each item once, as psdl.plan's Grid does (the same cell keys, i * 2^20 + j), so a
 * search gives the same candidates in the same order. */
#include "psdl_geom.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct gcell {
    int64_t key;
    uint32_t *items;
    uint32_t n, cap;
    int used;
} gcell;

struct psdl_grid {
    double cell;
    gcell *cells; /* open addressing, power of two */
    size_t ncells, cap;
    uint32_t *stamp; /* per item: the last query that met it */
    size_t nstamp;
    double *pos;     /* per item: x, z of a point item (NaN: none), nstamp pairs when set */
    uint32_t query;
};

psdl_grid *psdl_grid_new(double cell) {
    if (!(cell > 0) || !isfinite(cell)) return NULL;
    psdl_grid *g = (psdl_grid *)calloc(1, sizeof *g);
    if (!g) return NULL;
    g->cell = cell;
    g->cap = 64;
    g->cells = (gcell *)calloc(g->cap, sizeof *g->cells);
    if (!g->cells) {
        free(g);
        return NULL;
    }
    return g;
}

void psdl_grid_free(psdl_grid *g) {
    if (!g) return;
    for (size_t i = 0; i < g->cap; i++) free(g->cells[i].items);
    free(g->cells);
    free(g->stamp);
    free(g->pos);
    free(g);
}

/* The key of cell (i, j): i * 2^20 + j, wrapping as Lua's integers do. */
static int64_t cell_key(int64_t i, int64_t j) { return (int64_t)((uint64_t)i * 1048576u + (uint64_t)j); }

static size_t slot_of(int64_t key, size_t cap) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static gcell *find_cell(const psdl_grid *g, int64_t key) {
    for (size_t s = slot_of(key, g->cap);; s = (s + 1) & (g->cap - 1)) {
        gcell *c = &g->cells[s];
        if (!c->used) return NULL;
        if (c->key == key) return c;
    }
}

static int grow(psdl_grid *g) {
    size_t cap = g->cap * 2;
    gcell *cells = (gcell *)calloc(cap, sizeof *cells);
    if (!cells) return -1;
    for (size_t i = 0; i < g->cap; i++) {
        if (!g->cells[i].used) continue;
        size_t s = slot_of(g->cells[i].key, cap);
        while (cells[s].used) s = (s + 1) & (cap - 1);
        cells[s] = g->cells[i];
    }
    free(g->cells);
    g->cells = cells;
    g->cap = cap;
    return 0;
}

static gcell *get_cell(psdl_grid *g, int64_t key) {
    gcell *c = find_cell(g, key);
    if (c) return c;
    if (2 * (g->ncells + 1) > g->cap && grow(g) != 0) return NULL;
    size_t s = slot_of(key, g->cap);
    while (g->cells[s].used) s = (s + 1) & (g->cap - 1);
    c = &g->cells[s];
    c->used = 1, c->key = key, c->items = NULL, c->n = c->cap = 0;
    g->ncells++;
    return c;
}

/* The cell range of a box; 0, or -1 when it is not finite or spans more than
 * PSDL_GRID_MAX_CELLS cells. */
static int cell_range(const psdl_grid *g, double x0, double z0, double x1, double z1, int64_t *r) {
    double a = floor(x0 / g->cell), b = floor(x1 / g->cell), c = floor(z0 / g->cell), d = floor(z1 / g->cell);
    if (!(fabs(a) < 4e15 && fabs(b) < 4e15 && fabs(c) < 4e15 && fabs(d) < 4e15)) return -1;
    r[0] = (int64_t)a, r[1] = (int64_t)b, r[2] = (int64_t)c, r[3] = (int64_t)d;
    if (r[1] >= r[0] && r[3] >= r[2] && (double)(r[1] - r[0] + 1) * (double)(r[3] - r[2] + 1) > PSDL_GRID_MAX_CELLS)
        return -1;
    return 0;
}

/* Room for item ids up to `item` in the per-item arrays; 0 or -2. */
static int reserve_ids(psdl_grid *g, uint32_t item) {
    if (item < g->nstamp) return 0;
    size_t n = g->nstamp ? g->nstamp : 64;
    while (n <= item) n *= 2;
    uint32_t *st = (uint32_t *)realloc(g->stamp, n * sizeof *st);
    if (!st) return -2;
    memset(st + g->nstamp, 0, (n - g->nstamp) * sizeof *st);
    g->stamp = st;
    if (g->pos) {
        double *pos = (double *)realloc(g->pos, 2 * n * sizeof *pos);
        if (!pos) return -2;
        for (size_t k = 2 * g->nstamp; k < 2 * n; k++) pos[k] = NAN;
        g->pos = pos;
    }
    g->nstamp = n;
    return 0;
}

/* Appends item to cell (i, j); 0 or -2. */
static int cell_add(psdl_grid *g, int64_t i, int64_t j, uint32_t item) {
    gcell *c = get_cell(g, cell_key(i, j));
    if (!c) return -2;
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 4;
        uint32_t *it = (uint32_t *)realloc(c->items, cap * sizeof *it);
        if (!it) return -2;
        c->items = it, c->cap = cap;
    }
    c->items[c->n++] = item;
    return 0;
}

int psdl_grid_insert(psdl_grid *g, uint32_t item, double x0, double z0, double x1, double z1) {
    int64_t r[4];
    if (item > PSDL_GRID_MAX_ID || cell_range(g, x0, z0, x1, z1, r) != 0) return -1;
    if (reserve_ids(g, item)) return -2;
    for (int64_t i = r[0]; i <= r[1]; i++)
        for (int64_t j = r[2]; j <= r[3]; j++)
            if (cell_add(g, i, j, item)) return -2;
    return 0;
}

int psdl_grid_insert_point(psdl_grid *g, uint32_t item, double x, double z) {
    int64_t r[4];
    if (item > PSDL_GRID_MAX_ID || cell_range(g, x, z, x, z, r) != 0) return -1;
    if (reserve_ids(g, item)) return -2;
    if (!g->pos) {
        g->pos = (double *)malloc(2 * g->nstamp * sizeof *g->pos);
        if (!g->pos) return -2;
        for (size_t k = 0; k < 2 * g->nstamp; k++) g->pos[k] = NAN;
    }
    if (cell_add(g, r[0], r[2], item)) return -2;
    g->pos[2 * (size_t)item] = x, g->pos[2 * (size_t)item + 1] = z;
    return 0;
}

int psdl_grid_nearest(const psdl_grid *g, double x, double z, int64_t span, uint32_t *item, double *d2) {
    int64_t r0[4];
    if (cell_range(g, x, z, x, z, r0) != 0) return -1;
    if (!g->pos) return 0; /* no point items */
    if (span > ((int64_t)1 << 40)) span = (int64_t)1 << 40; /* a square past 2^40 cells holds nothing new */
    int64_t gx = r0[0], gz = r0[2];
    double bd = HUGE_VAL;
    int found = 0;
    uint32_t best = 0;
    for (int64_t r = 0; r <= span; r++) {
        for (int64_t i = gx - r; i <= gx + r; i++) {
            int edge = i == gx - r || i == gx + r;
            int64_t step = edge ? 1 : (r > 0 ? 2 * r : 1);
            for (int64_t j = gz - r; j <= gz + r; j += step) {
                const gcell *c = find_cell(g, cell_key(i, j));
                if (!c) continue;
                for (uint32_t k = 0; k < c->n; k++) {
                    uint32_t it = c->items[k];
                    double dx = g->pos[2 * (size_t)it] - x, dz = g->pos[2 * (size_t)it + 1] - z;
                    double d = dx * dx + dz * dz;
                    if (d < bd) bd = d, best = it, found = 1;
                }
            }
        }
        /* points in the next square lie more than r cells away */
        if (found && sqrt(bd) <= (double)r * g->cell) break;
    }
    if (!found) return 0;
    *item = best, *d2 = bd;
    return 1;
}

const uint32_t *psdl_grid_cell(const psdl_grid *g, double x, double z, size_t *n) {
    int64_t r[4];
    *n = 0;
    if (cell_range(g, x, z, x, z, r) != 0) return NULL;
    const gcell *c = find_cell(g, cell_key(r[0], r[2]));
    if (!c || c->n == 0) return NULL;
    *n = c->n;
    return c->items;
}

size_t psdl_grid_collect(psdl_grid *g, uint32_t *out, size_t cap, double x0, double z0, double x1, double z1) {
    int64_t r[4];
    if (cell_range(g, x0, z0, x1, z1, r) != 0) return PSDL_GEOM_INVALID;
    if (++g->query == 0) { /* the stamps wrapped: start again */
        if (g->stamp) memset(g->stamp, 0, g->nstamp * sizeof *g->stamp);
        g->query = 1;
    }
    size_t n = 0;
    for (int64_t i = r[0]; i <= r[1]; i++)
        for (int64_t j = r[2]; j <= r[3]; j++) {
            const gcell *c = find_cell(g, cell_key(i, j));
            if (!c) continue;
            for (uint32_t k = 0; k < c->n; k++) {
                uint32_t it = c->items[k];
                if (g->stamp[it] == g->query) continue;
                g->stamp[it] = g->query;
                if (n < cap) out[n] = it;
                n++;
            }
        }
    return n;
}
