/*
 * psdl_ground.h -- the ground of a block room (psdl.city.blocks, blocks/ground.lua;
 * docs/architecture.md "blocks"): triangle fans (0x6, psdl-format.md §2.4) over a polygon of
 * pooled vertices, planned over the pool's points and pushed into the room store, as
 * Room:fan_refs does (builder/room.lua) without a Lua table per fan. C99, no Lua.
 *
 * Two steps, so that a binding can ask a height function for the hub points in between:
 * psdl_ground_plan (read, test, psdl_fans) and psdl_ground_emit (pool the hubs, push the fan
 * records). Points are the pool's floats widened to doubles, as `pool:points` gives them to
 * Lua, so the fans are those Room:fan_refs makes of the same references.
 */
#ifndef PSDL_GROUND_H
#define PSDL_GROUND_H

#include <stddef.h>
#include <stdint.h>

#include "psdl_geom.h"
#include "psdl_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** psdl_ground_plan's refusals (besides PSDL_GEOM_NOMEM): a reference outside the pool, a
 *  ring whose edges cross (the check of Room:fan_refs, psdl_self_crossing at 1e-6 m), no area
 *  (|S| <= 1e-9 m², or no fan made). Nothing is written to the pool or the store. */
#define PSDL_GROUND_BADREF ((size_t)-3)
#define PSDL_GROUND_CROSSING ((size_t)-4)
#define PSDL_GROUND_NOAREA ((size_t)-5)

/** Words psdl_ground_plan writes to fans at most for n points (psdl_fans_bound(n, 0)); hub
 *  points at most n (3 doubles each in extra). */
size_t psdl_ground_bound(size_t n);

/** Plans the fans over the polygon of pool vertices refs[0 .. n-1] (1-based references, a
 *  simple ring): its points go to pts (3 * n doubles, x, y, z), then, when `check`, the ring
 *  must not cross itself; its signed area must exceed 1e-9 m² in size; psdl_fans covers it
 *  (fans: [m, hub, v1, ...] per fan, indices below n name refs, n + j the hub point j of
 *  extra, on the piece's plane). Returns the words written (fans at most psdl_ground_bound(n)
 *  words, extra at most 3 * n doubles; *nextra hub points), or PSDL_GROUND_BADREF,
 *  PSDL_GROUND_CROSSING, PSDL_GROUND_NOAREA, PSDL_GEOM_NOMEM. n < 3 is PSDL_GROUND_NOAREA. */
size_t psdl_ground_plan(uint32_t *fans, double *extra, size_t *nextra, double *pts, const psdl_pool *pool,
                        const uint32_t *refs, size_t n, int check);

/** Emits a plan: the hub points extra[0 .. nextra-1] pooled in order (psdl_pool_add_snapped,
 *  snap as the builder's option, 0 for none), then one fan record (type 0x6, no cap, texture
 *  group `group`) per fan of fans[0 .. w-1] pushed to room `room` of store s, its references
 *  refs[i] for plan index i < n and the hub's reference for n + j (hubs[j], nextra of them,
 *  receives it, 1-based). out (w words) receives
 *  the fans with those references: [m, r1, ..., rm] per fan (1-based vertex references).
 *  Returns 0, PSDL_STORE_RANGE (no such room, a plan index past n + nextra: nothing pushed),
 *  PSDL_STORE_NOMEM or PSDL_STORE_FULL (the records pushed by this call are dropped again;
 *  hubs pooled stay, as a failed pool add leaves them). */
int psdl_ground_emit(psdl_store *s, size_t room, uint32_t group, psdl_pool *pool, const uint32_t *refs, size_t n,
                     const uint32_t *fans, size_t w, const double *extra, size_t nextra, double snap, uint32_t *hubs, uint32_t *out);

/** The one height of the points referenced by fans `out` (psdl_ground_emit's layout, w
 *  words) in pool's floats: 1 with *y set when they are all at one height, else 0 (also for
 *  no point, or a reference outside the pool). */
int psdl_ground_level(const psdl_pool *pool, const uint32_t *out, size_t w, float *y);

#ifdef __cplusplus
}
#endif

#endif
