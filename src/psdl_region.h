/*
 * psdl_region.h -- a plan region with holes (an outer ring and hole rings) and the test of a
 * chord across it: what psdl.city.blocks asks many times over when it joins the holes of a
 * region (the network's outlines inside the apron or a block) to the ring around them.
 * C99, no Lua.
 *
 * Conventions (psdl_geom.h): metres, the plan is x, z. Ring r is points start[r] ..
 * start[r + 1] - 1 of `xz` (x, z pairs); ring 0 is the outer ring, the others are holes.
 * Every point carries an identity `id` (the caller's: psdl.city.blocks passes the address of
 * the point's Lua table, so that a point shared by two rings is the same point); a chord's
 * own ends are named by their ids.
 */
#ifndef PSDL_REGION_H
#define PSDL_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "psdl_segment.h" /* psdl_seg_dist2, psdl_segs_meet: the plan tests used here */

#ifdef __cplusplus
extern "C" {
#endif

/** Distance (m) within which segments count as touching (psdl.plan's TOUCH). */
#define PSDL_REGION_TOUCH 1e-3

/**
 * Is (x, z) inside the ring of n points `pts` (x, z pairs)? Crossing number from the last point
 * round, the same steps as psdl.plan.inside (psdl_ring_inside; points on the boundary either
 * way); 0 for n = 0.
 */
int psdl_region_inside(const double *pts, size_t n, double x, double z);

/**
 * Is the chord from point a to point c clear: no edge of any ring meets it (psdl_segs_meet)
 * except the edges with an end whose id is ida or idc, and its midpoint inside the outer ring
 * and outside every hole (crossing number, as psdl.plan.inside)?
 * @param xz     ring points, x, z pairs (metres)
 * @param ids    one identity per point
 * @param start  nrings + 1 increasing offsets (ring 0 the outer ring, at least 1 ring)
 * @param ida, idc  identities of the chord's ends (their edges are not tested)
 * @param ax, az, cx, cz  the chord's ends (metres)
 * @return 1 when clear, else 0
 */
int psdl_region_chord_clear(const double *xz, const uint64_t *ids, const size_t *start, size_t nrings, uint64_t ida,
                            uint64_t idc, double ax, double az, double cx, double cz);

/** No such point (psdl_region_target). */
#define PSDL_REGION_NONE ((size_t)-1)
/** Out of memory (psdl_region_target). */
#define PSDL_REGION_NOMEM ((size_t)-2)

/**
 * The point of the outer ring (ring 0) a hole's point `hk` is joined to by a chord
 * (psdl.city.blocks' hole joining, blocks/split.lua): the outer points by distance from it
 * (nearest first, then by index), the first whose chord lies in the outer ring's interior
 * angle there (psdl_split_in_cone) and is clear (psdl_region_chord_clear), in a first pass
 * also at least 10 degrees off the edges at both ends (no sliver), in a second pass any; and,
 * when `other_hk` is given, not meeting the chord from hole point other_hk to outer point
 * `avoid` (the first chord), which is itself never chosen.
 * @param ring   the hole (1 .. nrings - 1)
 * @param hk     index of the hole's point (0-based within the hole)
 * @param avoid  an outer point (0-based) not to choose, or PSDL_REGION_NONE
 * @param other_hk  the hole point of the first chord, or PSDL_REGION_NONE (then avoid is not
 *   a chord end)
 * @return the outer point (0-based), PSDL_REGION_NONE, or PSDL_REGION_NOMEM
 */
size_t psdl_region_target(const double *xz, const uint64_t *ids, const size_t *start, size_t nrings, size_t ring,
                          size_t hk, size_t avoid, size_t other_hk);

#ifdef __cplusplus
}
#endif

#endif
