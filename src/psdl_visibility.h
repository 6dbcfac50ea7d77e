/*
 * psdl_visibility.h -- potentially visible sets of a city's rooms by ray casting against the
 * city's own triangles (companion-formats.md §3.5). No Lua here.
 *
 * The world is the list of triangles the game draws (ground, roads, sidewalks, facades,
 * roofs, tunnel walls and ceilings), each tagged with the game room id it belongs to. For
 * a room r the caster picks eye points on r's up-facing triangles (area-weighted) and lifts
 * them to the top of the camera's range, 15 m (5 m in subterranean rooms; §3.5 samples
 * 0-15 m), but never through a ceiling, roof or deck above the point: over ground and
 * building prisms a higher eye at the same spot sees everything a lower one sees, so the
 * top eye stands for the whole range. From the eyes it casts rays in random directions
 * (azimuth uniform, sin(elevation) uniform in [-0.6, 0.4]) up to the view range; the room
 * of the first triangle each ray hits is visible from r. Then, for every room within range
 * that no ray hit, up to `targeted` rays (scaled down by 150 m / distance beyond 150 m, at
 * least 2) go from the eyes to random points of that room's triangles (area-weighted): the
 * room is visible when nothing of another room lies between an eye and its point (an
 * any-hit test: the first blocker found ends the ray). Aimed rays find what random
 * directions miss: far road surfaces seen at grazing angles, rooms seen through gaps
 * between buildings. Optionally (`frontier`, with psdl_vis_set_neighbours) the perimeter
 * neighbours of every room found visible get aimed rays of their own, flooding outwards.
 * The random numbers of room r come from (seed, r) only, so the result does not depend on
 * threads or the order rooms are asked for.
 *
 * Ray casting samples: a room seen through a gap narrower than the ray spacing can be
 * missed. The caller adds what sampling cannot miss (the room itself, its neighbours,
 * rooms close by: lua/psdl/package/cpvs_gen.lua).
 */
#ifndef PSDL_VISIBILITY_H
#define PSDL_VISIBILITY_H

#include <stddef.h>
#include <stdint.h>

typedef struct psdl_vis psdl_vis;

/* Options of psdl_vis_rows. */
typedef struct {
    double range;        /* view range, metres (§3.5: 1,000 m); rays stop there */
    uint32_t rays;       /* rays cast per room */
    uint32_t eyes;       /* eye points per room (rays are spread over them; at most 256) */
    uint32_t targeted;   /* per room within range that no random ray hit: rays aimed from
                          * the eyes (in turn) at random points of that room; 0 = none */
    uint32_t frontier;   /* rays aimed at each perimeter neighbour of a visible room (flood,
                          * needs psdl_vis_set_neighbours); 0 = none */
    uint64_t seed;       /* seed of the sampling */
    int threads;         /* worker threads (1..16) */
    int random_height;   /* non-zero: eyes a random 1-15 m (0.5-5 m) up, as PVSGEN samples
                          * (§3.5), instead of the top of that range */
} psdl_vis_opts;

/*
 * Build the caster: ntri triangles, 9 floats each (x, y, z of three corners, metres),
 * tri_room[i] = game room id of triangle i (1 .. nrooms-1; 0 = belongs to no room, still
 * occludes), subterranean[r] = non-zero for rooms whose eyes stay low (may be NULL). nrooms
 * is R, the PSDL room-count field. Returns NULL when out of memory. Non-finite triangles
 * are dropped.
 */
psdl_vis *psdl_vis_new(const float *tri, const uint32_t *tri_room, size_t ntri, uint32_t nrooms,
                       const uint8_t *subterranean);

/*
 * Perimeter neighbours for the flood of psdl_vis_opts.frontier: npairs pairs (a, b) of
 * room ids, 2 * npairs values (either order; pairs with 0, an id >= R or a == b are
 * skipped). Replaces earlier ones. Returns 0, or -1 when out of memory.
 */
int psdl_vis_set_neighbours(psdl_vis *v, const uint32_t *pairs, size_t npairs);

/* Free a caster (NULL is fine). */
void psdl_vis_free(psdl_vis *v);

/*
 * Visible rooms of rooms first .. last (inclusive, 1 <= first <= last < R): out receives
 * (last - first + 1) rows of ceil(R / 8) bytes each, bit t of row k set when room t is hit
 * from room first + k. Rooms without up-facing triangles cast nothing (empty rows).
 * Returns 0, or -1 when out of memory or on a bad range (out is then undefined).
 */
int psdl_vis_rows(const psdl_vis *v, uint32_t first, uint32_t last, const psdl_vis_opts *opts,
                  uint8_t *out);

/* Number of triangles kept (finite ones). */
size_t psdl_vis_triangles(const psdl_vis *v);

#endif
