/* psdl_row_buildings.h -- the buildings of psdl.city.blocks' rows, from a footprint to the
 * room store's records (city-layout.md §5; the attributes of psdl-format.md §2.4 0x3, 0x7,
 * 0xB, 0xC): the city generator's random numbers (xoshiro256**, the sequence of
 * lua/psdl/city/random.lua), the ground under a footprint (a plane, or the triangles of the
 * room's ground fans), the floors under bridge decks, the texture picks, then the building's
 * geometry (psdl_building) pushed into a psdl_store room.
 *
 * This is `Ctx:building` of lua/psdl/city/blocks/buildings.lua and `Builder:building` of
 * lua/psdl/builder/building.lua for one generated footprint, operation for operation (same
 * arithmetic, same order of draws), so that a city's bytes do not depend on which side made
 * them. Pure C99, no Lua (the binding is src/lpsdl_rows.c). */
#ifndef PSDL_ROW_BUILDINGS_H
#define PSDL_ROW_BUILDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "psdl_geom.h"
#include "psdl_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The city generator's state: xoshiro256** (Blackman and Vigna), s[0..3] being the fields
 *  s1..s4 of a lua/psdl/city/random.lua generator (as Lua integers, two's complement). */
typedef struct psdl_xoshiro {
    uint64_t s[4];
} psdl_xoshiro;

/** The next number in [0, 1) (the top 53 bits of the next output) of the generator ud (a
 *  psdl_xoshiro); random.lua's `R:float`. A psdl_row_rng. */
double psdl_xoshiro_float(void *ud);

/** The ground of a block room as its buildings sample it: a plane at height y (flat != 0), or
 *  the triangles of its ground fans, 9 numbers each (x, y, z of three points), ntris of them,
 *  and cells: 4 numbers per triangle that psdl_row_ground_cells fills (the 12 m grid cells
 *  its box covers). */
typedef struct psdl_row_ground {
    int flat;
    double y;
    const double *tris;
    const double *cells;
    size_t ntris;
} psdl_row_ground;

/** Cell size (m) of the ground lookup (lua/psdl/city/blocks/ground.lua's sampler grid). */
#define PSDL_ROW_GROUND_CELL 12.0

/** Fills cells (4 * ntris numbers) for the triangles tris: per triangle the first and last
 *  grid column and row its plan box covers (floor(min / 12) .. floor(max / 12)). */
void psdl_row_ground_cells(double *cells, const double *tris, size_t ntris);

/** Ground height at (x, z): the plane's height; else the first triangle (in order) of the
 *  grid cell holding (x, z) that contains the point (barycentric, 1e-6 slack); else the one
 *  of those closest to containing it; else (no triangle in that cell) the height of the
 *  nearest triangle corner over all triangles (0 without triangles). */
double psdl_row_ground_at(const psdl_row_ground *g, double x, double z);

/** How the buildings of a row look (metres; group numbers are the builder's texture groups,
 *  1-based). Decks: ndecks bridge decks, deck k's plan ring being deck_pts[3 * deck_at[k] ..
 *  3 * deck_at[k + 1] - 1] (x, y, z points), its box deck_box[4k .. 4k + 3] ({x0, x1, z0, z1})
 *  and its underside deck_low[k]; a building under one stays deck_gap below it. */
typedef struct psdl_row_spec {
    double floors_min, floors_max; /* floors drawn from min .. max (whole numbers) */
    double floor_height, bay_width, sliver_density;
    const uint32_t *facades, *roofs, *ground_facades; /* group lists to pick from */
    size_t nfacades, nroofs, nground;                 /* nfacades, nroofs >= 1; nground 0: none */
    uint32_t sliver;                                  /* the slivers' group */
    int refuse; /* non-zero: the options are not what Builder:building takes (the caller knows
                   why); a building that would be made gives PSDL_ROW_REFUSED instead */
    const double *deck_pts, *deck_box, *deck_low;
    const size_t *deck_at;
    size_t ndecks;
    double deck_gap;
} psdl_row_spec;

/** A building planned on a footprint: its base (the highest ground point), floors, the facade
 *  (storey) height and ground-floor height, the groups picked (ground 0: no ground floor). */
typedef struct psdl_row_plan {
    double base, floors, upper_floors, floor_height, ground_height;
    uint32_t facade, roof, ground;
} psdl_row_plan;

/** Plans the building on footprint fp[0 .. n-1] (x, y, z points, retail, plan; y ignored):
 *  outline (3n numbers) receives the footprint at ground level (each height rounded to the
 *  millimetre), then draws from rng: the floors, the facade, the roof and, with a ground
 *  floor (nground > 0 and at least 2 floors), its facade (a list of one, or a range of one
 *  whole number, draws nothing; a pick stays within its list whatever rng returns). Under a
 *  bridge deck (plan overlap) the building has at
 *  most the floors that fit below the deck less deck_gap; where not even one floor fits it is
 *  left out: returns 0 after drawing the floors. Returns 1 when the building is to be made. */
int psdl_row_building_plan(const psdl_row_spec *s, const psdl_row_ground *g, psdl_row_rng rng, void *ud,
                           const double *fp, size_t n, double *outline, psdl_row_plan *p);

/** Where a building's geometry goes: the builder's vertex and height pools, its store and the
 *  room (1-based store room number), the builder's snap grid (0: exact) and vertex budget
 *  (0: none). */
typedef struct psdl_row_target {
    psdl_pool *vpool, *hpool;
    psdl_store *store;
    size_t room;
    double snap;
    size_t budget;
} psdl_row_target;

/** What psdl_row_building_emit made: the top, the wall runs (facade bounds), facades and
 *  slivers; with PSDL_ROW_BUDGET the vertex count reached; with PSDL_ROW_REPEATS the repeats
 *  that were too many. */
typedef struct psdl_row_built {
    double top;
    size_t runs, facades, slivers;
    size_t reached;
    double repeats;
} psdl_row_built;

/** Results of psdl_row_building_emit. */
enum {
    PSDL_ROW_OK = 0,
    PSDL_ROW_RANGE,    /* a coordinate or height not finite or beyond the float range */
    PSDL_ROW_NOHEIGHT, /* top <= base */
    PSDL_ROW_BELOW,    /* top below the ground floor's top */
    PSDL_ROW_VANISH,   /* the ground floor's height vanishes at the base (rounding) */
    PSDL_ROW_REPEATS,  /* vertical facade repeats above 32767 */
    PSDL_ROW_BUDGET,   /* the vertex pool went over the budget */
    PSDL_ROW_NOROOF,   /* the outline has no area: no roof fan */
    PSDL_ROW_NOMEM,    /* out of memory, or a pool full */
    PSDL_ROW_FULL,     /* the store is full (or the room is not in it) */
    PSDL_ROW_REFUSED   /* the spec says refuse */
};

/** Makes the planned building on outline[0 .. n-1] (psdl_row_building_plan's, retail; turned
 *  round when wound the other way): top = base + ground floor + floors * floor height; the
 *  attributes of psdl_building (bounds, slivers, ground-floor and upper facades, the roof's
 *  fans) pushed to the target room as Builder:building's store:building would push them.
 *  Checks as Builder:building does, in its order; the footprint is taken as inside the room
 *  (psdl_row_fits tested it). Returns PSDL_ROW_OK with *out filled, or an error code: then
 *  the pools and the store may hold part of the building (the caller truncates them to the
 *  counts it took before: psdl_pool_truncate, psdl_store_truncate). */
int psdl_row_building_emit(const psdl_row_spec *s, const psdl_row_plan *p, const double *outline, size_t n,
                           const psdl_row_target *t, psdl_row_built *out);

#ifdef __cplusplus
}
#endif
#endif /* PSDL_ROW_BUILDINGS_H */
