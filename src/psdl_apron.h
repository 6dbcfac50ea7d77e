/*
 * psdl_apron.h -- the outer edge of a generated city's ground apron: the line `margin` metres
 * out from the road network's outlines (psdl.city.blocks.apron describes it; this is the
 * per-element work: the distance grid, the contour and the joining of separate parts).
 * C99, no Lua.
 *
 * Conventions (as psdl_geom.h): metres, the plan is x, z. Input outlines are packed plan
 * points `x, z` (2 doubles a point), outline k being points start[k] .. start[k + 1] - 1;
 * any winding. Output rings are packed `x, z` too, in retail winding (S < 0,
 * docs/psdl-format.md §4.2), no two consecutive points equal.
 *
 * The method, whose every floating-point step is fixed (outputs are compared byte for byte):
 *   1. The squared plan distance to the outlines' edges is sampled at the corners of a square
 *      grid of `cell` metres reaching margin + 2 cell past the outlines' bounds, kept only
 *      below (margin + 1.5 cell)^2; corners inside an outline (even-odd scanlines along each
 *      grid row, per outline) get 0.
 *   2. The contour at `margin` (marching squares): points interpolated linearly in the
 *      distance along grid edges (a corner without a sample counts as margin + 1.5 cell),
 *      saddle cells joined through the middle when the mean of the four corner distances is
 *      below the margin; segments run with the inside on their left; chained into loops
 *      starting from the lowest edge key ((j * (ni + 1) + i) * 2 + horizontal); only the
 *      outer loops (counter-clockwise) are kept, reversed.
 *   3. While there is more than one ring (at most one round per outline): each outline
 *      belongs to the first ring holding its first point (crossing number); every ring but
 *      the one with the most outline points is joined to its nearest outline point of another
 *      ring (a bucket grid of 2 margin cells searched in growing squares; the first pair
 *      found at the least squared distance) by adding that segment to the distance field,
 *      and the contour is traced again. A round that joins nothing ends the loop.
 */
#ifndef PSDL_APRON_H
#define PSDL_APRON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Rings returned by psdl_apron_rings: ring r is points start[r] .. start[r + 1] - 1 of xz
 * (2 doubles a point); `count` rings, start has count + 1 entries. Free with
 * psdl_apron_free. */
typedef struct psdl_apron {
    double *xz;
    size_t *start;
    size_t count;
} psdl_apron;

/** Results of psdl_apron_rings. */
enum {
    PSDL_APRON_OK = 0,
    PSDL_APRON_NOMEM = 1,    /**< an allocation failed */
    PSDL_APRON_TOO_BIG = 2,  /**< the distance grid would exceed PSDL_APRON_MAX_CELLS */
    PSDL_APRON_INVALID = 3,  /**< margin or cell not finite and > 0, or a coordinate not finite */
};

/** The largest distance grid (corners) psdl_apron_rings builds: 4.2 million, about 50 bytes
 * of scratch each (210 MiB; a 5 km network at 2.5 m cells; the city's default 12 m cells over
 * 5 km need 0.18 million). Also the limit of the joining step's bucket grid. */
#define PSDL_APRON_MAX_CELLS ((size_t)1 << 22)

/**
 * The rings of the apron's outer edge around some outlines (see the file comment).
 * @param out     filled on PSDL_APRON_OK (0 rings when there are no points); untouched
 *                otherwise
 * @param xz      plan points of all outlines, x, z pairs (metres)
 * @param start   nout + 1 offsets into the points, increasing (outline k: start[k] ..
 *                start[k + 1] - 1; empty outlines allowed)
 * @param nout    number of outlines
 * @param margin  metres (> 0)
 * @param cell    grid spacing, metres (> 0; at most margin / 2 is sensible)
 * @param cells   when not NULL, receives the number of grid corners (also when too big)
 * @return PSDL_APRON_OK or an error code of the enum above
 */
int psdl_apron_rings(psdl_apron *out, const double *xz, const size_t *start, size_t nout, double margin,
                     double cell, size_t *cells);

/** Frees the rings of a psdl_apron (NULL-safe fields; the struct is zeroed). */
void psdl_apron_free(psdl_apron *a);

/**
 * The points of the apron's edge (psdl.city.blocks' `fill_apron` without a height function):
 * each edge a -> c of each ring of a cut into m = max(1, ceil(len / step - 1e-9)) parts (len
 * its plan length), the points a + (c - a) * i / m for i = 0 .. m - 1 in order; each point's
 * height that of the nearest of the points hp (x, y, z, nh of them): a grid of `hcell` m
 * cells holding them in order, searched at most `span` cells out (psdl_grid_nearest: among
 * equally near points the first inserted), 0 when none is found. Plain double arithmetic in
 * the order of the Lua loop it replaced, so that a city keeps its bytes.
 * @param out    receives x, y, z per point (malloc'd; the caller frees it; NULL for none)
 * @param ostart receives a->count + 1 offsets in points (malloc'd; the caller frees it)
 * @return PSDL_APRON_OK, PSDL_APRON_NOMEM, or PSDL_APRON_INVALID (step or hcell not finite
 *         and > 0, a height point not finite, more points than the grid numbers; nothing
 *         allocated)
 */
int psdl_apron_edge(double **out, size_t **ostart, const psdl_apron *a, double step, const double *hp, size_t nh,
                    double hcell, long long span);

#ifdef __cplusplus
}
#endif

#endif
