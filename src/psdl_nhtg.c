/* psdl_nhtg.c -- The Sims 2 neighbourhood terrain (NHTG, nhtg-format.md §2): decode with a
 * bounds-checked cursor (every count checked against the bytes left before allocating),
 * encode by size query + fill. The axis convention is documented in psdl_nhtg.h. */
#include "psdl_internal.h"
#include "psdl_nhtg.h"

#include <math.h>

#define NESTED_NAME "c2DArray"
#define NESTED_NAME_LEN 8u
#define NESTED_HEADER 28u /* id, version, name length, name, two dimensions */

typedef struct cur {
    const uint8_t *start, *p, *end;
    psdl_error *err;
} cur;

static size_t c_off(const cur *c) { return (size_t)(c->p - c->start); }
static size_t c_left(const cur *c) { return (size_t)(c->end - c->p); }

static int c_need(cur *c, size_t n, const char *what) {
    if (c_left(c) >= n) return 1;
    psdl_fail(c->err, PSDL_E_TRUNCATED, c_off(c), 1, -1, -1, "need %zu bytes for %s, %zu remain", n, what,
              c_left(c));
    return 0;
}

static int c_u32(cur *c, uint32_t *v, const char *what) {
    if (!c_need(c, 4, what)) return 0;
    *v = psdl_get_u32(c->p);
    c->p += 4;
    return 1;
}

size_t psdl_nhtg_size(uint32_t width, uint32_t height, size_t type_len) {
    uint64_t points = ((uint64_t)width + 1) * ((uint64_t)height + 1);
    uint64_t s = 52u + (uint64_t)NESTED_HEADER + 5u * points;
    if (type_len > (size_t)-1 / 2 || s > (uint64_t)((size_t)-1 - type_len)) return 0;
    return (size_t)s + type_len;
}

/* The 28-byte nested c2DArray header; checks its dimensions against rows x cols. */
static psdl_status read_nested(cur *c, uint32_t rows, uint32_t cols, const char *which) {
    uint32_t id, version, name_len, d1, d2;
    size_t off = c_off(c);
    if (!c_need(c, NESTED_HEADER, which)) return PSDL_E_TRUNCATED;
    id = psdl_get_u32(c->p);
    if (id != PSDL_C2DARRAY_ID)
        return psdl_fail(c->err, PSDL_E_BAD_MAGIC, off, 1, -1, -1, "%s: block id 0x%08X is not c2DArray (0x%08X)",
                         which, (unsigned)id, (unsigned)PSDL_C2DARRAY_ID);
    version = psdl_get_u32(c->p + 4);
    if (version != PSDL_C2DARRAY_VERSION)
        return psdl_fail(c->err, PSDL_E_BAD_MAGIC, off + 4, 1, -1, -1,
                         "%s: unknown c2DArray version %u (only %u is known)", which, (unsigned)version,
                         (unsigned)PSDL_C2DARRAY_VERSION);
    name_len = psdl_get_u32(c->p + 8);
    if (name_len != NESTED_NAME_LEN || memcmp(c->p + 12, NESTED_NAME, NESTED_NAME_LEN) != 0)
        return psdl_fail(c->err, PSDL_E_BAD_STRING, off + 8, 1, -1, -1,
                         "%s: block name is not the 8 bytes \"c2DArray\" (length field %u)", which,
                         (unsigned)name_len);
    d1 = psdl_get_u32(c->p + 20);
    d2 = psdl_get_u32(c->p + 24);
    if (d1 != rows)
        return psdl_fail(c->err, PSDL_E_BAD_COUNT, off + 20, 1, -1, -1,
                         "%s: first dimension %u does not match grid width W + 1 = %u", which, (unsigned)d1,
                         (unsigned)rows);
    if (d2 != cols)
        return psdl_fail(c->err, PSDL_E_BAD_COUNT, off + 24, 1, -1, -1,
                         "%s: second dimension %u does not match grid height H + 1 = %u", which,
                         (unsigned)d2, (unsigned)cols);
    c->p += NESTED_HEADER;
    return PSDL_OK;
}

static psdl_nhtg *nhtg_shell(const psdl_options *opt) {
    psdl_arena *arena = psdl_arena_new(opt ? &opt->alloc : NULL);
    if (!arena) return NULL;
    psdl_nhtg *t = psdl_arena_alloc(arena, sizeof *t);
    if (!t) {
        psdl_arena_free(arena);
        return NULL;
    }
    t->arena_ = arena;
    return t;
}

void psdl_nhtg_free(psdl_nhtg *t) {
    if (t) psdl_arena_free(t->arena_);
}

psdl_status psdl_nhtg_decode(const psdl_options *opt, const void *data, size_t size, psdl_nhtg **out,
                             psdl_error *err) {
    psdl_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    err->room = err->attribute = -1;
    *out = NULL;
    cur c = {data, data, (const uint8_t *)data + size, err};
    uint32_t id, version, w, h, type_len;
    float water;
    psdl_nhtg *t = NULL;

    if (!c_u32(&c, &id, "the NHTG block id")) goto fail;
    if (id != PSDL_NHTG_TYPE) {
        psdl_fail(err, PSDL_E_BAD_MAGIC, 0, 1, -1, -1, "block id 0x%08X is not NHTG (0x%08X)", (unsigned)id,
                  (unsigned)PSDL_NHTG_TYPE);
        goto fail;
    }
    if (!c_u32(&c, &version, "the NHTG version")) goto fail;
    if (version != PSDL_NHTG_VERSION) {
        psdl_fail(err, PSDL_E_BAD_MAGIC, 4, 1, -1, -1, "unknown NHTG version %u (only %u is known)",
                  (unsigned)version, (unsigned)PSDL_NHTG_VERSION);
        goto fail;
    }
    if (!c_u32(&c, &w, "the grid width")) goto fail;
    if (!c_u32(&c, &h, "the grid height")) goto fail;
    if (w == 0 || w > PSDL_NHTG_MAX_TILES || h == 0 || h > PSDL_NHTG_MAX_TILES) {
        psdl_fail(err, PSDL_E_BAD_COUNT, (w == 0 || w > PSDL_NHTG_MAX_TILES) ? 8 : 12, 1, -1, -1,
                  "grid of %u x %u tiles: each side must be 1..%u", (unsigned)w, (unsigned)h,
                  (unsigned)PSDL_NHTG_MAX_TILES);
        goto fail;
    }
    if (!c_need(&c, 4, "the water level")) goto fail;
    water = psdl_get_f32(c.p);
    if (!isfinite(water)) {
        psdl_fail(err, PSDL_E_INVALID, c_off(&c), 1, -1, -1, "water level is not a finite number (bits 0x%08X)",
                  (unsigned)psdl_get_u32(c.p));
        goto fail;
    }
    c.p += 4;
    size_t len_off = c_off(&c);
    if (!c_u32(&c, &type_len, "the terrain-type length")) goto fail;
    if (type_len > PSDL_NHTG_MAX_TYPE_LEN) {
        psdl_fail(err, PSDL_E_BAD_COUNT, len_off, 1, -1, -1, "terrain-type length %u is over the limit %u",
                  (unsigned)type_len, (unsigned)PSDL_NHTG_MAX_TYPE_LEN);
        goto fail;
    }
    if (!c_need(&c, type_len, "the terrain type")) goto fail;
    const uint8_t *type = c.p;
    c.p += type_len;

    uint32_t rows = w + 1, cols = h + 1;
    size_t points = (size_t)rows * cols;
    if (read_nested(&c, rows, cols, "height array") != PSDL_OK) goto fail;
    if (points > c_left(&c) / 4) {
        psdl_fail(err, PSDL_E_TRUNCATED, c_off(&c), 1, -1, -1,
                  "need %zu bytes for %u x %u heights, %zu remain", points * 4, (unsigned)rows, (unsigned)cols,
                  c_left(&c));
        goto fail;
    }
    /* Every height must be finite: find the first bad one before allocating anything. */
    for (size_t k = 0; k < points; k++) {
        float v = psdl_get_f32(c.p + 4 * k);
        if (!isfinite(v)) {
            psdl_fail(err, PSDL_E_INVALID, c_off(&c) + 4 * k, 1, -1, -1,
                      "height at row %zu, column %zu is not a finite number (bits 0x%08X)", k / cols, k % cols,
                      (unsigned)psdl_get_u32(c.p + 4 * k));
            goto fail;
        }
    }
    const uint8_t *heights = c.p;
    c.p += points * 4;
    if (read_nested(&c, rows, cols, "second array") != PSDL_OK) goto fail;
    if (points > c_left(&c)) {
        psdl_fail(err, PSDL_E_TRUNCATED, c_off(&c), 1, -1, -1, "need %zu bytes for the second array, %zu remain",
                  points, c_left(&c));
        goto fail;
    }
    const uint8_t *extra = c.p;
    c.p += points;
    if (c_left(&c) != 0) {
        psdl_fail(err, PSDL_E_TRAILING, c_off(&c), 1, -1, -1, "%zu bytes after the end of the NHTG resource",
                  c_left(&c));
        goto fail;
    }

    t = nhtg_shell(opt);
    if (!t) goto nomem;
    t->version = version;
    t->width = w;
    t->height = h;
    t->water_level = water;
    t->type_len = type_len;
    t->rows = rows;
    t->cols = cols;
    t->terrain_type = psdl_arena_alloc(t->arena_, (size_t)type_len + 1);
    t->heights = psdl_arena_alloc(t->arena_, points * sizeof(float));
    t->extra = psdl_arena_alloc(t->arena_, points);
    if (!t->terrain_type || !t->heights || !t->extra) goto nomem;
    memcpy(t->terrain_type, type, type_len);
    for (size_t k = 0; k < points; k++) t->heights[k] = psdl_get_f32(heights + 4 * k);
    memcpy(t->extra, extra, points);
    *out = t;
    return PSDL_OK;
nomem:
    psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
fail:
    psdl_nhtg_free(t);
    return err->code;
}

psdl_nhtg *psdl_nhtg_new(const psdl_options *opt, uint32_t width, uint32_t height, const char *type,
                         size_t type_len, float fill) {
    if (width == 0 || width > PSDL_NHTG_MAX_TILES || height == 0 || height > PSDL_NHTG_MAX_TILES ||
        type_len > PSDL_NHTG_MAX_TYPE_LEN || !isfinite(fill))
        return NULL;
    psdl_nhtg *t = nhtg_shell(opt);
    if (!t) return NULL;
    size_t points = ((size_t)width + 1) * ((size_t)height + 1);
    t->version = PSDL_NHTG_VERSION;
    t->width = width;
    t->height = height;
    t->water_level = PSDL_NHTG_WATER_LEVEL;
    t->type_len = (uint32_t)type_len;
    t->rows = width + 1;
    t->cols = height + 1;
    t->terrain_type = psdl_arena_alloc(t->arena_, type_len + 1);
    t->heights = psdl_arena_alloc(t->arena_, points * sizeof(float));
    t->extra = psdl_arena_alloc(t->arena_, points);
    if (!t->terrain_type || !t->heights || !t->extra) {
        psdl_nhtg_free(t);
        return NULL;
    }
    if (type_len) memcpy(t->terrain_type, type, type_len);
    for (size_t k = 0; k < points; k++) t->heights[k] = fill;
    return t;
}

size_t psdl_nhtg_encoded_size(const psdl_nhtg *t) { return psdl_nhtg_size(t->width, t->height, t->type_len); }

static uint8_t *put_nested(uint8_t *p, uint32_t rows, uint32_t cols) {
    psdl_put_u32(p, PSDL_C2DARRAY_ID);
    psdl_put_u32(p + 4, PSDL_C2DARRAY_VERSION);
    psdl_put_u32(p + 8, NESTED_NAME_LEN);
    memcpy(p + 12, NESTED_NAME, NESTED_NAME_LEN);
    psdl_put_u32(p + 20, rows);
    psdl_put_u32(p + 24, cols);
    return p + NESTED_HEADER;
}

psdl_status psdl_nhtg_encode(const psdl_nhtg *t, void *dst, size_t cap, size_t *written, psdl_error *err) {
    return psdl_nhtg_encode_from(t, NULL, NULL, dst, cap, written, err);
}

psdl_status psdl_nhtg_encode_from(const psdl_nhtg *t, psdl_nhtg_height_fn height, void *ud, void *dst, size_t cap,
                                  size_t *written, psdl_error *err) {
    if (written) *written = 0;
    if (t->version != PSDL_NHTG_VERSION)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "version %u cannot be written (only %u is known)",
                         (unsigned)t->version, (unsigned)PSDL_NHTG_VERSION);
    if (t->width == 0 || t->width > PSDL_NHTG_MAX_TILES || t->height == 0 || t->height > PSDL_NHTG_MAX_TILES)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "grid of %u x %u tiles: each side must be 1..%u",
                         (unsigned)t->width, (unsigned)t->height, (unsigned)PSDL_NHTG_MAX_TILES);
    if (t->rows != t->width + 1 || t->cols != t->height + 1)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1,
                         "%u x %u points do not match a grid of %u x %u tiles (W + 1 rows, H + 1 columns)",
                         (unsigned)t->rows, (unsigned)t->cols, (unsigned)t->width, (unsigned)t->height);
    if (t->type_len > PSDL_NHTG_MAX_TYPE_LEN || (t->type_len && !t->terrain_type))
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "terrain type of %u bytes (at most %u)",
                         (unsigned)t->type_len, (unsigned)PSDL_NHTG_MAX_TYPE_LEN);
    if (!isfinite(t->water_level))
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "water level is not a finite number");
    size_t points = (size_t)t->rows * t->cols;
    size_t heights_off = 24u + t->type_len + NESTED_HEADER;
    for (size_t k = 0; k < points; k++)
        if (!isfinite(height ? height(ud, k) : t->heights[k]))
            return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1,
                             "height at row %zu, column %zu (byte offset 0x%zx) is not a finite number",
                             k / t->cols, k % t->cols, heights_off + 4 * k);
    size_t need = psdl_nhtg_encoded_size(t);
    if (need == 0 || cap < need)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "destination of %zu bytes is smaller than %zu", cap,
                         need);
    uint8_t *p = dst;
    psdl_put_u32(p, PSDL_NHTG_TYPE);
    psdl_put_u32(p + 4, t->version);
    psdl_put_u32(p + 8, t->width);
    psdl_put_u32(p + 12, t->height);
    psdl_put_f32(p + 16, t->water_level);
    psdl_put_u32(p + 20, t->type_len);
    if (t->type_len) memcpy(p + 24, t->terrain_type, t->type_len);
    p = put_nested(p + 24 + t->type_len, t->rows, t->cols);
    if (height)
        for (size_t k = 0; k < points; k++, p += 4) psdl_put_f32(p, height(ud, k));
    else
        for (size_t k = 0; k < points; k++, p += 4) psdl_put_f32(p, t->heights[k]);
    p = put_nested(p, t->rows, t->cols);
    if (t->extra)
        memcpy(p, t->extra, points);
    else
        memset(p, 0, points);
    if (written) *written = need;
    return PSDL_OK;
}
