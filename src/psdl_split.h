/*
 * psdl_split.h -- splitting a block into rooms: the plan shape of a simple polygon (area,
 * centroid, dominant direction, extent) and the chord psdl.city.blocks cuts it along
 * (city-layout.md §1.2; docs/architecture.md "blocks"). C99, no Lua.
 *
 * Conventions (psdl_geom.h): metres, the plan is x, z; a polygon is n points as x, z pairs
 * (`xz`), in retail winding (S < 0, psdl-format §4.2), indices 0-based here (the Lua side
 * adds 1). Every function follows the Lua code it replaced (psdl.plan's shape, clipped_area,
 * part_area, in_cone, chord_angle, chord_valid and blocks/split.lua's find_chord) operation
 * for operation, so that a city's bytes stay the same.
 */
#ifndef PSDL_SPLIT_H
#define PSDL_SPLIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The plan shape of a polygon (psdl.plan.shape). */
typedef struct psdl_shape {
    double area;        /**< |area| (m²); 0 for a degenerate polygon */
    double cx, cz;      /**< centroid (m) */
    double dx, dz;      /**< unit direction the polygon is cut across (the dominant edge
                             direction's longer frame side, else the major axis of inertia) */
    double extent;      /**< tmax - tmin (m) */
    double tmin, tmax;  /**< extent along (dx, dz) relative to the centroid (m) */
} psdl_shape;

/**
 * Is the direction from vertex i of the n-point polygon xz (retail winding) towards (bx, bz)
 * inside the polygon's interior angle at i? (psdl.plan.in_cone: O'Rourke's InCone with the
 * neighbours swapped for the retail winding.)
 */
int psdl_split_in_cone(const double *xz, size_t n, size_t i, double bx, double bz);

/** Shape of the n-point polygon xz (n >= 1). */
void psdl_split_shape(const double *xz, size_t n, psdl_shape *sh);

/**
 * Polygons a chord must not cross (given building footprints): m polygons, polygon k is
 * points start[k] .. start[k + 1] - 1 of xz; box[4k..4k+3] its x0, x1, z0, z1.
 */
typedef struct psdl_split_obstacles {
    size_t count;
    const size_t *start; /**< count + 1 offsets */
    const double *xz;    /**< x, z pairs */
    const double *box;   /**< 4 per polygon */
} psdl_split_obstacles;

/**
 * Does the segment a-c meet one of the obstacles (an edge within 1 mm, psdl_segs_meet, or
 * its midpoint inside one)? Only obstacles whose box meets the segment's box are tested.
 */
int psdl_split_obstacle_hit(const psdl_split_obstacles *obs, double ax, double az, double cx, double cz);

/** Results of psdl_split_chord. */
enum {
    PSDL_SPLIT_FITS = 0,   /**< within the limits (or not to be cut): keep the polygon */
    PSDL_SPLIT_CHORD = 1,  /**< cut along the chord *i - *j */
    PSDL_SPLIT_NONE = 2,   /**< over the limits, but no chord found */
    PSDL_SPLIT_NOMEM = -1  /**< out of memory */
};

/**
 * What to do with a polygon on the way to rooms within the limits (blocks/split.lua's
 * `split` and `find_chord`): PSDL_SPLIT_FITS when it has at most max_points points, a box
 * diagonal within max_length and an area within max_area, or when it is over a limit but
 * `try` is 0 (too deep) or its area is 4 m² or less; else the best chord between two of its
 * vertices near the half-area line across its shape's direction (a few stations tried,
 * chords scored by area balance, length and slant; chords crossing an obstacle only when no
 * other is found): PSDL_SPLIT_CHORD with *i < or > *j (0-based), or PSDL_SPLIT_NONE.
 * @param xz      n >= 3 points, x, z pairs (metres), retail winding
 * @param obs     obstacles or NULL
 * @return a PSDL_SPLIT_* code
 */
int psdl_split_chord(const double *xz, size_t n, double max_area, double max_points, double max_length, int try_,
                     const psdl_split_obstacles *obs, size_t *i, size_t *j);

#ifdef __cplusplus
}
#endif

#endif
