/* psdl_overlaps.h -- rooms of unrelated parts of a road network that overlap in plan
 * (psdl.city.network's `overlaps`, docs/architecture.md): the road and intersection rooms of
 * roads sharing no node, of a node and a road not ending there, of two nodes no road joins.
 *
 * The rooms come as plan polygons with an owner each (a road or a node of the network); a
 * uniform grid of their boxes (psdl_grid, 40 m cells) gives each polygon its candidates, and
 * a pair of unrelated owners is tested once, in the order psdl.city.network's Lua did it
 * (polygons in order, candidates in grid order), with the same arithmetic operation for
 * operation, so the same pairs and points come out.
 *
 * Pure C99, no Lua (the binding is core.room_overlaps in src/lpsdl_geom.c). */
#ifndef PSDL_OVERLAPS_H
#define PSDL_OVERLAPS_H

#include <stddef.h>
#include <stdint.h>

/** An owner that is a node (its entries in `ends`). */
#define PSDL_OVERLAP_NODE UINT32_MAX

/** Error codes (0 = success). */
enum { PSDL_OVERLAPS_OK = 0, PSDL_OVERLAPS_NOMEM = -1, PSDL_OVERLAPS_INVALID = -2 };

/** One overlap: the owners of the two polygons (a: the polygon met first) and a point (x, z,
 *  metres) where they overlap. */
typedef struct psdl_overlap {
    uint32_t a, b;
    double x, z;
} psdl_overlap;

/** The overlaps of npoly plan polygons: polygon i has the points xz[2 start[i]] ..
 *  xz[2 start[i + 1] - 1] (x, z pairs; start has npoly + 1 entries, increasing), the box
 *  box[4i .. 4i + 3] (x0, z0, x1, z1; it may be larger than the points' box) and the owner
 *  owner[i] (< nowners). Owner o is a road from node ends[2o] to node ends[2o + 1] (owner
 *  numbers of nodes), or a node when both are PSDL_OVERLAP_NODE. Two owners are related
 *  (never tested) when they are the same, two roads sharing a node, a road and one of its
 *  nodes, or two nodes some road joins. Polygons with fewer than 3 points are left out.
 *
 *  Two polygons overlap when a point of one lies inside the other's box and more than eps
 *  metres inside the polygon, or two edges cross properly with every end more than eps
 *  from the other edge's line. A pair of owners is reported once (its first overlap).
 *
 *  *out (malloc'd, freed by the caller; NULL when there is none) receives *nout overlaps.
 *  Returns 0, PSDL_OVERLAPS_NOMEM, or PSDL_OVERLAPS_INVALID (an owner or node number out of
 *  range, a start not increasing, a box not finite or too large for the grid, eps or cell not
 *  finite and positive); *out is NULL and *nout 0 on error. */
int psdl_room_overlaps(psdl_overlap **out, size_t *nout, const double *xz, const uint32_t *start,
                       const double *box, const uint32_t *owner, size_t npoly, const uint32_t *ends,
                       size_t nowners, double eps, double cell);

#endif
