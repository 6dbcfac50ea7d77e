/* psdl_conflicts.h -- conflicts of a road network before anything is built (psdl.city.network's
 * `conflicts`, city-layout.md §1.3: roads meet only at nodes; docs/architecture.md).
 *
 * The roads come as plan polylines (their end nodes and via points) with a half width and a
 * level flag (a bridge or tunnel); the nodes as plan points with the reach of a dead end. A
 * uniform grid of the segments' boxes (psdl_grid; each box grown by the road's half width)
 * gives each segment and node its candidates; they are met in the order psdl.city.network's
 * Lua met them (roads in order, segments in order, candidates in grid order; then the nodes
 * in order) with the same arithmetic operation for operation, so the same conflicts come out
 * in the same order:
 *
 * - two roads at grade whose segments cross properly ("cross");
 * - a road at grade and a bridge or tunnel crossing it (a "level" crossing, listed on the
 *   bridge or tunnel: where the ramps must fit);
 * - a node lying within a road's half width plus its reach of the centre line of a road at
 *   grade not ending there, away from that road's ends (the nearest such road: "node" /
 *   "touch" in the Lua).
 *
 * Pure C99, no Lua (the binding is core.network_conflicts in src/lpsdl_geom.c). */
#ifndef PSDL_CONFLICTS_H
#define PSDL_CONFLICTS_H

#include <stddef.h>
#include <stdint.h>

/** Error codes (0 = success). */
enum { PSDL_CONFLICTS_OK = 0, PSDL_CONFLICTS_NOMEM = -1, PSDL_CONFLICTS_INVALID = -2 };

/** A road of the network. */
typedef struct psdl_net_road {
    int64_t index;   /**< the road's number: each pair of roads is tested from the lower one */
    uint32_t a, b;   /**< its end nodes (0-based node numbers) */
    double hw;       /**< half width, metres (>= 0) */
    int level;       /**< nonzero: a bridge or tunnel (crosses anything; listed as "level") */
    int in_small;    /**< nonzero: its segments go into the small grid too (see `use_small`) */
    int query_small; /**< nonzero: its segments meet only the small grid's */
} psdl_net_road;

/** A node of the network. */
typedef struct psdl_net_node {
    double x, z;     /**< plan position, metres */
    double reach;    /**< how far beyond a road's half width the node counts as on it (m) */
    int active;      /**< zero: not tested (a tunnel or bridge node, or no road ends there) */
    int query_small; /**< nonzero: it meets only the small grid's segments */
} psdl_net_node;

/** A bridge or tunnel `lv` crossing road `other` at grade at (x, z); `half`: half the length
 *  its ramps keep clear there, (hw(lv) + hw(other)) / max(sine of the angle, 0.2) + 1. */
typedef struct psdl_net_level {
    uint32_t lv, other;
    double x, z, half;
} psdl_net_level;

/** Roads a and b (a's index the lower) at grade crossing at (x, z): plan distances sa, sb
 *  from their first points, height y (the mean of both centre lines' heights there). */
typedef struct psdl_net_cross {
    uint32_t a, b;
    double x, z, sa, sb, y;
} psdl_net_cross;

/** Node `node` at distance d from the centre line of road `road` (the nearest), at plan
 *  distance s along it; (x, z) the nearest point; (dx, dz) the segment's unit direction
 *  there ((1, 0) for a segment of no length). */
typedef struct psdl_net_touch {
    uint32_t node, road;
    double d, s, x, z, dx, dz;
} psdl_net_touch;

/** The conflicts found (arrays malloc'd; psdl_conflicts_free frees them). */
typedef struct psdl_net_conflicts {
    psdl_net_level *levels;
    size_t nlevels;
    psdl_net_cross *crosses;
    size_t ncrosses;
    psdl_net_touch *touches;
    size_t ntouches;
} psdl_net_conflicts;

/** The conflicts of a network of nroads roads and nnodes nodes. Road r's polyline is the
 *  points pts[3 start[r]] .. pts[3 start[r + 1] - 1] as (x, z, y) triples (at least two;
 *  start has nroads + 1 entries, increasing, start[nroads] points in all); y is only used
 *  for a crossing's height. Segments go into a grid of `cell` metres; with `use_small`, a
 *  second grid holds the segments of roads with `in_small`, and roads and nodes with
 *  `query_small` meet only those (psdl.city.repair re-checking what it changed).
 *
 *  Fills *out (zeroed first). Returns 0, PSDL_CONFLICTS_NOMEM, or PSDL_CONFLICTS_INVALID (a
 *  start not increasing or a road of fewer than 2 points, a node number out of range, a
 *  segment box not finite or too large for the grid, cell not finite and positive, too many
 *  segments); on error nothing is left to free. */
int psdl_network_conflicts(psdl_net_conflicts *out, const double *pts, const uint32_t *start,
                           const psdl_net_road *roads, size_t nroads, const psdl_net_node *nodes,
                           size_t nnodes, int use_small, double cell);

/** Frees the arrays of a result (NULL-safe) and zeroes it. */
void psdl_conflicts_free(psdl_net_conflicts *c);

#endif
