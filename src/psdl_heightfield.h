/*
 * psdl_heightfield.h -- a grid of heights held as one C array: the per-point work on
 * terrains (docs/terrain.md). A heightfield is a view: it describes memory its owner
 * allocated (an NHTG's heights, a decoded heightmap's samples, a buffer of doubles) and
 * never frees it.
 *
 * Axis convention (psdl_nhtg.h, nhtg-format.md §4): rows = the slow index i (z), cols =
 * the fast index j (x); point (i, j) is element k = i * cols + j, the file order of an NHTG
 * and the raster scan of a heightmap image (top row first).
 *
 * Sample types: F32 (an NHTG's float heights, metres), F64 (doubles: heights a caller set,
 * a city's ground), U16 and U8 (integer samples; height = offset + scale * sample, computed
 * in double precision, the heightmap mapping of lua/psdl/terrain.lua).
 *
 * Every computation here is written to give bit for bit what the Lua code it replaced gave
 * (IEEE doubles, the same operations in the same order; no contraction into fused
 * multiply-adds under -std=c99).
 */
#ifndef PSDL_HEIGHTFIELD_H
#define PSDL_HEIGHTFIELD_H

#include "psdl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum psdl_hf_type { PSDL_HF_F32 = 1, PSDL_HF_F64 = 2, PSDL_HF_U16 = 3, PSDL_HF_U8 = 4 } psdl_hf_type;

typedef struct psdl_heightfield {
    uint32_t rows, cols;  /* points: slow index i (z) x fast index j (x) */
    psdl_hf_type type;
    void *data;           /* rows * cols samples, row-major */
    double offset, scale; /* U16, U8: height = offset + scale * sample; F32, F64: unused */
} psdl_heightfield;

/** Points in the field: rows * cols. */
size_t psdl_hf_count(const psdl_heightfield *f);

/** Bytes of one sample of the given type (4, 8, 2, 1). */
size_t psdl_hf_sample_size(psdl_hf_type type);

/** Height of element k (0-based; k < rows * cols), metres. */
double psdl_hf_get(const psdl_heightfield *f, size_t k);

/** Height of point (i, j), both clamped to the grid. */
double psdl_hf_point(const psdl_heightfield *f, int64_t i, int64_t j);

/** Bilinear height at grid coordinates u (along columns, x) and v (along rows, z), in cells;
 *  outside the grid the nearest edge value. NaN when u or v is NaN. */
double psdl_hf_bilinear(const psdl_heightfield *f, double u, double v);

typedef struct psdl_hf_stats {
    double min, max, mean;  /* heights (metres); NaN heights are skipped by min and max */
    size_t min_at, max_at;  /* element of the first lowest / highest height */
    size_t below;           /* heights below the water level given */
    size_t count;           /* rows * cols */
    int found;              /* 0 when no height compared (every one NaN) */
} psdl_hf_stats;

/** Lowest, highest and mean height (the mean summed in element order), where they are, and
 *  how many lie below water. */
void psdl_hf_stats_of(const psdl_heightfield *f, double water, psdl_hf_stats *s);

/** Heights as samples of a heightmap: sample = floor((h - offset) / scale + 0.5), each in
 *  0..maxval, into out (rows * cols). Returns PSDL_OK, or PSDL_E_BAD_COUNT with *bad = the
 *  first element whose sample is out of range (or NaN) and *value its unrounded sample. */
psdl_status psdl_hf_quantize(const psdl_heightfield *f, double offset, double scale, uint32_t maxval,
                             uint16_t *out, size_t *bad, double *value);

/** Heights as floats (an NHTG's array) into out. Returns PSDL_OK, or PSDL_E_INVALID with
 *  *bad = the first element that is not a finite float once rounded. */
psdl_status psdl_hf_to_f32(const psdl_heightfield *f, float *out, size_t *bad);

/** As psdl_hf_to_f32 without writing anything: PSDL_OK when every height fits a finite
 *  float, else PSDL_E_INVALID with *bad = the first that does not. */
psdl_status psdl_hf_check_f32(const psdl_heightfield *f, size_t *bad);

/** Height k as a float (what psdl_hf_to_f32 writes); psdl_hf_check_f32 first. */
float psdl_hf_get_f32(const psdl_heightfield *f, size_t k);

/** Heights as doubles into out. */
void psdl_hf_to_f64(const psdl_heightfield *f, double *out);

/** Rasterise triangles (9 doubles each: x, y, z of three points) onto the points of a grid
 *  (origin ox, oz, cell metres apart, rows x cols): each point inside a triangle (edges
 *  included, 1e-7 in barycentric terms) takes the triangle's plane height there when it is
 *  higher than what the point holds. best must hold rows * cols values, -HUGE_VAL for "none
 *  yet". */
void psdl_hf_rasterize(const double *tris, size_t ntris, double ox, double oz, double cell, uint32_t rows,
                       uint32_t cols, double *best);

/** Points still at -HUGE_VAL take the height of their nearest covered neighbour (breadth
 *  first from the covered points in element order, visiting up, down, left, right).
 *  covered[k] = 1 where a height was there before. queue: scratch of rows * cols entries.
 *  Returns the number of covered points. */
size_t psdl_hf_fill_nearest(double *best, uint8_t *covered, uint32_t rows, uint32_t cols, size_t *queue);

#ifdef __cplusplus
}
#endif
#endif /* PSDL_HEIGHTFIELD_H */
