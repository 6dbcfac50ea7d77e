/*
 * psdl_geom.h -- geometry kernels of psdlkit: the shapes a PSDL city is made of. C99, no Lua.
 *
 * Reference (read this first)
 * ===========================
 *
 * Every kernel is a pure function on flat arrays (style §4.3): the destination comes first,
 * a *_bound companion gives the output size to allocate where it varies, and the return value
 * is a count. Format facts cite docs/psdl-format.md as §n.
 *
 * Conventions
 * -----------
 *   - Points are `double` triples x, y, z (metres, Y up, XZ the ground plane, §4.1), packed:
 *     point i is pts[3*i .. 3*i+2]. "Plan" means the XZ projection.
 *   - Indices are 0-based positions in the point array the call was given.
 *   - S(poly) = sum over edges of (x_i * z_{i+1} - x_{i+1} * z_i), twice the signed plan area.
 *     Retail winding (§4.2) for up-facing fans, roofs and room perimeters is S < 0; every
 *     kernel here emits that winding. psdl_signed_area() returns S / 2.
 *   - Strips (road 0x0, walkway 0x2, sidewalk 0x1, divided road 0x8) are lists of sections,
 *     each section a row of `stride` points. Following §4.2, the first point of a section
 *     lies on the left when travelling from section k to section k + 1, where "left" of a
 *     direction (tx, tz) is the side (tz, -tx): travelling +Z, the first point is at +X. A
 *     quad (v0, v1, v3, v2) of such a strip has an upward normal. This "left" is the format's
 *     L column (outer L, curb L, ...); on a map with x east and z north (docs/network.md)
 *     it is the driver's right-hand side, the game's world being left-handed.
 *   - Heights of cross-sections: carriageway, curb and median points at the centre line's y;
 *     sidewalk outer points PSDL_CURB_RISE (0.15 m) higher (§2.4 0x0, §4.1).
 *   - Angles in the option structs are degrees; everything else is metres.
 *
 * Errors
 * ------
 * Kernels never write past the size their *_bound returns. Programmer errors (NULL pointers,
 * n too small where stated) are assert()s; index arguments that come from data (hole starts,
 * the vertex indices of psdl_boundary, psdl_link and psdl_link_bound) are checked, and the
 * kernel returns PSDL_GEOM_INVALID without writing. Kernels that need scratch memory
 * allocate it with malloc and return PSDL_GEOM_NOMEM ((size_t)-1) when that fails; the
 * bindings raise.
 */
#ifndef PSDL_GEOM_H
#define PSDL_GEOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Returned by kernels that allocate scratch memory when the allocation failed. */
#define PSDL_GEOM_NOMEM ((size_t)-1)
/** Returned by psdl_junction_build for arms it cannot join (two arms less than 1 degree
 *  apart, a zero direction, an unknown profile kind), and by the kernels that say so for
 *  input they refuse (a NaN or infinite coordinate or option, hole starts out of order or
 *  range, a vertex index not below the point count). */
#define PSDL_GEOM_INVALID ((size_t)-2)

/* ================================================================ measures (§4.2, §3.3) */

/** Signed plan area of the polygon pts[0 .. n-1] (closed implicitly), i.e. S / 2 in m².
 *  Negative for retail winding (§4.2). 0 for n < 3. */
double psdl_signed_area(const double *pts, size_t n);

/** Winding of a polygon: -1 retail (S < 0), +1 opposite, 0 when |S| / 2 <= eps (m²). */
int psdl_winding(const double *pts, size_t n, double eps);

/** Non-planarity of the quad (a, b, c, d) in metres: the largest distance of a corner from
 *  the plane through the other three (0 for a planar quad). Corners whose opposite triangle
 *  is degenerate are skipped; a fully degenerate quad gives 0. */
double psdl_quad_deviation(const double *a, const double *b, const double *c, const double *d);

/** Largest psdl_quad_deviation over every quad of a strip: nsections rows of `stride`
 *  points; the quads are (row k col j, row k col j+1, row k+1 col j+1, row k+1 col j) for
 *  adjacent columns. Road strips must be planar (§3.5). */
double psdl_strip_deviation(const double *pts, size_t nsections, size_t stride);

/** Largest |y - y_hub| over a fan's points (hub first). A road fan (0x5) must be flat: the
 *  game flattens it to the hub's height (§2.4 0x5, validator tolerance 0.05 m). */
double psdl_fan_flatness(const double *pts, size_t n);

/** Smallest plan area (m², unsigned) of the triangles (p0, p_i, p_i+1) of a fan of n >= 3
 *  points: 0 means a degenerate triangle. */
double psdl_fan_min_area(const double *pts, size_t n);

/** Bounds recommended by §1.6 over pts[first .. n-1]: out[0..2] AABB min, out[3..5] max,
 *  out[6..8] the AABB centre, out[9] the largest distance from the centre to a point.
 *  Returns the number of points used (0 leaves out untouched). `first` skips a dummy vertex. */
size_t psdl_bounds(double out[10], const double *pts, size_t n, size_t first);

/** psdl_bounds over float points (a vertex pool's own storage), read in place: the same
 *  result as psdl_bounds over the same values as doubles. */
size_t psdl_bounds_f(double out[10], const float *pts, size_t n, size_t first);

/* ================================================================ centre lines */

/** Options of psdl_spline. Zero-initialised fields take the defaults given. */
typedef struct psdl_spline_opts {
    double spacing;    /* m, largest distance between samples along the curve (default 5) */
    double max_angle;  /* degrees, largest plan turn between consecutive chords (default 7.5) */
    double half_width; /* m, half the widest cross-section the line will carry; with
                        * planar_tol it adds samples on curves that climb (default 0: off) */
    double planar_tol; /* m, largest quad deviation (psdl_quad_deviation) tolerated for level
                        * cross-sections of half_width on a climbing curve (default 0.02) */
    int has_start_dir, has_end_dir; /* use start_dir / end_dir as the end tangents */
    double start_dir[2], end_dir[2]; /* plan tangent (x, z) at the first / last point */
} psdl_spline_opts;

/** Number of points psdl_spline writes for these control points (exact, not just a bound).
 *  Takes what psdl_spline takes; returns PSDL_GEOM_INVALID when a coordinate, an option or
 *  an end tangent is NaN or infinite, PSDL_GEOM_NOMEM when its scratch memory (it allocates)
 *  cannot be had. */
size_t psdl_spline_bound(const double *ctrl, size_t n, const psdl_spline_opts *opts);

/** A smooth centre line through the n >= 2 control points ctrl (x, y, z), written to dst as
 *  points. A centripetal Catmull-Rom spline (alpha 0.5, parametrised by plan distance, so it
 *  neither cusps nor self-intersects within a segment); y is interpolated along with x and z.
 *  Missing end tangents come from reflecting the neighbour control point, so two control
 *  points give a straight line. With a given end tangent the end segment is a cubic Bezier
 *  instead, its handles a third of the chord long along the given tangent and the
 *  neighbouring segment's (or, for a lone segment, the given tangent mirrored about the
 *  chord), so the line leaves exactly along the tangent without a tight hook. Each control
 *  segment is cut into pieces of equal "cost",
 *  where a piece's cost is length / spacing + plan turn / max_angle, and every piece costs
 *  at most 1, so samples crowd where the line bends. Then, when half_width > 0, every piece
 *  whose level-section quad (sections of half_width along the bisectors, as psdl_sections
 *  builds them) deviates more than planar_tol is halved, repeatedly (on a climbing curve the
 *  twist is about 2 * half_width * rise * turn / length). Consecutive equal control points
 *  are skipped. Every control point is a sample. Returns the point count (exactly what
 *  psdl_spline_bound returns), 0 when n < 2 or all control points coincide in plan,
 *  PSDL_GEOM_INVALID when a coordinate, an option or an end tangent is NaN or infinite
 *  (nothing written), or PSDL_GEOM_NOMEM (both functions allocate scratch memory). */
size_t psdl_spline(double *dst, const double *ctrl, size_t n, const psdl_spline_opts *opts);

/** psdl_spline into a new array: *dst (malloc'd, x, y, z per point; the caller frees it;
 *  NULL when the result is not a positive count) receives the points, built once (where
 *  psdl_spline_bound and psdl_spline build them twice). Returns what psdl_spline returns. */
size_t psdl_spline_alloc(double **dst, const double *ctrl, size_t n, const psdl_spline_opts *opts);

/** Length in metres of the polyline pts[0 .. n-1] (3D; plan = 0 also counts y). */
double psdl_polyline_length(const double *pts, size_t n, int plan);

/** Section direction at point k of a polyline pts[0 .. n-1] (requires k < n, asserted): the
 *  plan vector (tz, -tx) to the left of travel (§4.2) of the tangent at k. At interior
 *  points the tangent turns from the incoming
 *  chord towards the outgoing one in proportion to their lengths (the exact tangent for
 *  points on a circle, however unevenly spaced, so neighbouring sections meet at the
 *  centre of curvature), and the vector is scaled by the mitre factor 1 / cos(turn / 2)
 *  capped at miter_limit. out[0] = x, out[1] = z. start_dir / end_dir (may be NULL)
 *  override the tangents at the first / last point. */
void psdl_section_dir(double out[2], const double *pts, size_t n, size_t k, double miter_limit,
                      const double *start_dir, const double *end_dir);

/** Offset of a polyline: dst[i] = pts[i] + offset * section_dir(i) (positive = left of
 *  travel, §4.2), y kept. Offsets that would fold the line on a tight curve (the offset
 *  point passing the point where this section line meets its neighbour's) are clamped to
 *  that meeting point, so consecutive offset points may coincide but never reverse.
 *  miter_limit <= 0 means 4. Returns the number of clamped points. Writes n points. */
size_t psdl_offset(double *dst, const double *pts, size_t n, double offset, double miter_limit);

/* ================================================================ cross-sections (§2.4) */

/** Cross-section kinds and their strides (points per section). */
typedef enum psdl_section_kind {
    PSDL_SECTION_ROAD = 0,     /* 0x0: outer L, curb L, curb R, outer R (4) */
    PSDL_SECTION_WALKWAY = 1,  /* 0x2 rectangle strip: left, right (2) */
    PSDL_SECTION_DIVIDED = 2,  /* 0x8: outer L, curb L, median L, median R, curb R, outer R (6) */
    PSDL_SECTION_SIDEWALK = 3  /* 0x1: curb, outer (2); the outer edge is on the right */
} psdl_section_kind;

/** Points per section of a kind: 4, 2, 6, 2 (0 for an unknown kind). */
size_t psdl_section_stride(int kind);

/** A road profile, in metres. Widths are measured across, at right angles to the centre
 *  line. */
typedef struct psdl_profile {
    int kind;              /* psdl_section_kind */
    double left, right;    /* carriageway width left / right of the centre line (curb offset;
                            * DIVIDED: from the median edge to the curb; WALKWAY: edge offset) */
    double sidewalk_left;  /* sidewalk width beyond the left curb, 0 = none (outer == curb,
                            * §2.4 0x0 "outerL == curbL"); SIDEWALK: unused */
    double sidewalk_right; /* same on the right; SIDEWALK: the strip's width (outer on the right) */
    double median;         /* DIVIDED: total median width between median L and median R */
    double curb;           /* sidewalk rise over the road; < 0 means PSDL_CURB_RISE (0.15) */
    double miter_limit;    /* <= 0 means 4 */
} psdl_profile;

/** n * stride of the kind. */
size_t psdl_sections_bound(size_t n, const psdl_profile *profile);

/** Cross-sections of a strip along the centre line center[0 .. n-1]: n sections of
 *  psdl_section_stride(kind) points each, written to dst. Each section lies on one straight,
 *  level line through its centre point along psdl_section_dir (end sections at right angles
 *  to the end segments, or to start_dir / end_dir when given, plan vectors or NULL), so every
 *  quad between sections is planar when the line is straight or flat. Points are ordered
 *  left to right of travel (§4.2). Offsets on the inside of a curve tighter than the offset
 *  are clamped as psdl_offset does; *clamped (may be NULL) receives the number of clamped
 *  points. A width of 0 puts two columns on the same point (equal coordinates). Returns the
 *  number of points written. */
size_t psdl_sections(double *dst, const double *center, size_t n, const psdl_profile *profile,
                     const double *start_dir, const double *end_dir, size_t *clamped);

/* ================================================================ fans (§2.4 0x5, 0x6, 0xC) */

/** Triangles of a triangulation of a polygon with holes: at most n + 2 * nholes - 2. */
size_t psdl_triangulate_bound(size_t n, size_t nholes);

/** Ear-clipping triangulation of a simple polygon with holes, in plan. pts holds the outer
 *  ring (points 0 .. hole_starts[0]-1) followed by each hole (hole h from hole_starts[h] to
 *  the next start or n); rings may be given in either winding. Hole starts (nholes of them;
 *  hole_starts may be NULL when nholes is 0) must be strictly increasing and each in
 *  1 .. n-1, so that every ring has a point and all lie within pts; otherwise nothing is
 *  written and PSDL_GEOM_INVALID returned (this holds for psdl_fans, psdl_keyhole and
 *  psdl_self_crossing too). Holes of fewer than 3 points are ignored. Holes are bridged to
 *  the outer ring (earcut's method). dst receives 3 indices per triangle, each triangle in
 *  retail winding (S < 0) and of non-zero area; every point is kept (collinear points on
 *  edges become triangle corners, never dropped). Returns the triangle count,
 *  PSDL_GEOM_INVALID (hole starts) or PSDL_GEOM_NOMEM. */
size_t psdl_triangulate(uint32_t *dst, const double *pts, size_t n, const uint32_t *hole_starts,
                        size_t nholes);

/** Flags of psdl_fans. */
#define PSDL_FANS_NO_EXTRA 1u /* never add a hub point: fans need no new vertex */

/** Words psdl_fans writes at most: 6 * (n + 2 * nholes). Extra points at most
 *  n + 2 * nholes (for the extra array, 3 doubles each). */
size_t psdl_fans_bound(size_t n, size_t nholes);

/** Triangle fans covering a polygon with holes (as psdl_triangulate takes it), each fan a
 *  convex piece in retail winding (§4.2) with no degenerate triangle. Convex input needs no
 *  split; a concave polygon is triangulated (ear clipping) and its triangles merged into
 *  convex pieces (Hertel-Mehlhorn: drop a diagonal whenever both its ends stay convex, which
 *  gives at most four times the minimum number of pieces). A piece becomes one fan with its
 *  hub on the boundary when some boundary hub sees every rim edge at non-zero area; a piece
 *  whose boundary has collinear runs that defeat every boundary hub gets a hub at its vertex
 *  average (a new point written to extra as x, y, z, with index n + j, on the piece's plane),
 *  or with PSDL_FANS_NO_EXTRA is split into its triangles. dst receives for each fan
 *  [m, hub, v1, ..., v(m-1)] (m >= 3 indices; a hub at an extra point closes its rim by
 *  repeating v1). *nextra receives the number of extra points. Returns the words written,
 *  PSDL_GEOM_INVALID when the hole starts break psdl_triangulate's rules (strictly
 *  increasing, each in 1 .. n-1), or PSDL_GEOM_NOMEM. */
size_t psdl_fans(uint32_t *dst, double *extra, size_t *nextra, const double *pts, size_t n,
                 const uint32_t *hole_starts, size_t nholes, unsigned flags);

/** Points psdl_keyhole writes at most: n + 2 * nholes. */
size_t psdl_keyhole_bound(size_t n, size_t nholes);

/** One ring for a polygon with holes (given as psdl_triangulate takes them): the outer ring
 *  in retail winding (S < 0), each hole joined through a zero-width keyhole cut (outer point
 *  -> bridge to a hole point -> the hole ring in the opposite sense -> back to the hole point
 *  -> back along the bridge to the outer point, both bridge ends repeated), bridges found as
 *  psdl_triangulate finds them. A crossing-number test over the ring (§1.5: the game's
 *  PointInPerimeter) puts the holes outside, the doubled bridge cancelling itself, so it
 *  serves as a room perimeter. dst receives point indices, starting at the outer ring's
 *  lowest index; consecutive duplicate points are dropped. Returns the count (0 for fewer
 *  than 3 outer points), PSDL_GEOM_INVALID when a hole of 3 or more points finds no bridge
 *  (it lies outside the outer ring) or when the hole starts break psdl_triangulate's rules
 *  (strictly increasing, each in 1 .. n-1), or PSDL_GEOM_NOMEM. */
size_t psdl_keyhole(uint32_t *dst, const double *pts, size_t n, const uint32_t *hole_starts, size_t nholes);

/** Whether the ring pts[0 .. n-1] is simple with a margin, in plan: every edge at least
 *  1e-6 m long and no two edges that are not neighbours meeting (crossing, or coming within
 *  touch metres of each other: an end of one within touch of the other). Fewer than 3
 *  points are not simple. Returns 1, 0, or PSDL_GEOM_NOMEM. */
size_t psdl_ring_simple(const double *pts, size_t n, double touch);

/** First proper crossing between two edges of a polygon with holes (rings as
 *  psdl_triangulate takes them; edge k runs from point k to the next point of its ring, the
 *  last back to the ring's first): the two edges' interiors cross, each one's ends lying more
 *  than tol (m) on either side of the other's line. Touching, overlapping and neighbouring
 *  edges do not count. Hole starts follow psdl_triangulate's rules (strictly increasing,
 *  each in 1 .. n-1). Returns 1 with out[0] < out[1] the two edges (the crossing with the
 *  lowest edges), 0 when the rings are simple and apart, PSDL_GEOM_INVALID for hole starts
 *  that break the rules, or PSDL_GEOM_NOMEM. */
size_t psdl_self_crossing(uint32_t out[2], const double *pts, size_t n, const uint32_t *hole_starts,
                          size_t nholes, double tol);

/** Where the open polyline pts[0 .. n-1] (x, y, z; in plan) first meets itself, the test
 *  psdl.city puts a road's centre line to: consecutive repeated points (same x and z) are
 *  dropped; then two segments that are not neighbours (segment k runs from point k to the
 *  next) meet when they cross (each one's ends strictly on either side of the other's line)
 *  or an end of one lies exactly on the other, except that a line whose first and last
 *  points coincide may close there. The earliest meeting along the line counts (lowest
 *  first segment, then lowest second). Returns 1 with out[0], out[1] the first segment's
 *  end points and out[2], out[3] the second's (indices into pts; of a repeated point its
 *  first) and at the meeting point (x, z; a crossing is given on the first segment), 0 when
 *  the line is simple (always for fewer than 4 distinct points), or PSDL_GEOM_NOMEM. Unlike
 *  psdl_self_crossing (closed rings, proper crossings with a tolerance) touching counts.
 *  Plain double arithmetic in the order of psdl.city's former Lua test, so that cities keep
 *  their bytes (where the compiler fuses no multiply-adds). */
size_t psdl_polyline_crossing(uint32_t out[4], double at[2], const double *pts, size_t n);

/** Whether the points pts[0 .. m-1] (a polyline, or a ring when closed) stay inside the
 *  polygon poly[0 .. n-1] in plan: every point and every edge midpoint inside by the
 *  crossing-number test (§1.5; a keyhole ring from psdl_keyhole works) or within eps of its
 *  boundary, and no edge crossing a boundary edge by more than eps (edges the polygon also
 *  runs backwards, keyhole bridges, bound nothing; found by sorting the polygon's edges,
 *  O(n log n), then O(n) per point and edge of pts). Returns 0 when inside, else 1 + the
 *  index of the first point outside or of the first point of the first edge leaving, or
 *  PSDL_GEOM_NOMEM. */
size_t psdl_first_outside(const double *poly, size_t n, const double *pts, size_t m, int closed, double eps);

/** A ring's edges indexed by plan z for psdl_ring_first_outside: the ring's z range cut
 *  into slabs, each listing (in edge order) the edges whose z range meets it; the edges the
 *  ring also runs backwards found once per edge and kept. Zero it before the first
 *  psdl_ring_index_init. */
typedef struct psdl_ring_index {
    const double *poly; /**< the ring (not copied: it must outlive the index) */
    size_t n;
    int plain;          /**< 1: no index (a non-finite point, or edges spanning too many
                             slabs): psdl_first_outside is used */
    double z0, scale;   /**< slab of z: floor((z - z0) * scale), clamped */
    size_t nslab;
    uint32_t *start;    /**< nslab + 1 offsets into edges */
    uint32_t *edges;
    uint32_t *stamp;    /**< per edge: the query that last visited it */
    uint32_t clock;
    unsigned char *cut; /**< per edge: 0 not known, 1 run backwards elsewhere, 2 bounds */
} psdl_ring_index;

/** Indexes the ring poly[0 .. n-1] (x, y, z points) into ix (freeing what ix held).
 *  Returns 0, or -1 when out of memory (ix is then empty). */
int psdl_ring_index_init(psdl_ring_index *ix, const double *poly, size_t n);

/** Releases what ix holds (ix zeroed or freed before is fine). */
void psdl_ring_index_free(psdl_ring_index *ix);

/** psdl_first_outside(ix->poly, ix->n, pts, m, closed, eps) over the index: the same result
 *  (every test the same, only edges whose z range is too far from a point or edge to matter
 *  skipped), in about O(m * edges per slab) instead of O(m * n). */
size_t psdl_ring_first_outside(psdl_ring_index *ix, const double *pts, size_t m, int closed, double eps);

/* ================================================================ facades (§2.4 0x3, 0x7, 0xB) */

/** Light-table index (0..63) of a wall whose base runs from left to right in plan direction
 *  (dx, dz) (§2.4 0x7). The wall faces n = (-dz, 0, dx) (SetWall, §4.2); entry i of the
 *  game's 64-entry table faces a = i * pi / 32 - pi / 2 with normal (cos a, 0, sin a)
 *  [INFER, §6 item 8], so i = round((atan2(n.z, n.x) + pi / 2) * 32 / pi) mod 64: a wall
 *  facing -Z gets 0, +X 16, +Z 32, -X 48. Returns 0 for a zero-length direction. */
unsigned psdl_light_index(double dx, double dz);

/** Options of psdl_facades. */
typedef struct psdl_facade_opts {
    double floor_height; /* m per vertical texture repeat (default 3) */
    double bay_width;    /* m per horizontal repeat (default 4) */
    double bottom, top;  /* m, facade base and top heights (top > bottom) */
    int closed;          /* 1: the outline is a closed ring (last point joins the first) */
    double collinear_deg; /* plan turn below which two segments form one run (default 1) */
} psdl_facade_opts;

/** Segments psdl_facades describes: n - 1, or n for a closed outline. */
size_t psdl_facades_bound(size_t n, int closed);

/** Facade layout along an outline pts[0 .. n-1] whose points run in retail winding (S < 0
 *  for a closed building outline, §4.2) so that every facade faces outward: normal
 *  (-dz, 0, dx) for a base running left -> right (§2.4 0xB). For each segment (zero-length
 *  ones are skipped) dst receives 6 words: left index, right index, u repeats
 *  (round(length / bay_width), 1..32767), v repeats (round((top - bottom) / floor_height),
 *  1..32767), light index (psdl_light_index), flags: bit 0 = the segment starts a new wall
 *  run (segments of one run are collinear within collinear_deg and need one facade bound
 *  spanning the run, §2.4 0x7), bit 1 = the ground under the segment lies below `bottom`
 *  at either end (a sliver fills from the base points up to `bottom`, §2.4 0x3). Returns
 *  the number of segments written. */
size_t psdl_facades(uint32_t *dst, const double *pts, size_t n, const psdl_facade_opts *opts);

struct psdl_pool; /* the pools below (psdl_pool) */

/** Options of psdl_building (metres). */
typedef struct psdl_building_opts {
    double base, top;      /* facade bottom and top heights (top > base) */
    double floor_height;   /* m per vertical repeat (default 3) */
    double ground_height;  /* a ground floor of this height (0: none) */
    double bay_width;      /* m per horizontal repeat (default 4) */
    double sliver_density; /* sliver texture repeats per metre */
    double snap;           /* > 0: coordinates rounded to this grid before pooling */
    int closed;            /* 1: a closed footprint (with a roof); 0: a row of facades */
} psdl_building_opts;

/** Attribute kinds psdl_building writes. */
enum { PSDL_BUILDING_BOUND = 1, PSDL_BUILDING_SLIVER, PSDL_BUILDING_GROUND, PSDL_BUILDING_UPPER };

/** Words psdl_building writes at most into ops (returned), and into roof (*roof_words). */
size_t psdl_building_bound(size_t n, int closed, size_t *roof_words);

/** The geometry of a building on the outline pts[0 .. n-1] (retail winding when closed, as
 *  psdl_facades takes it), its points added to the vertex pool vpool and its heights to the
 *  height pool hpool (dimension 1) in the order the builder's attribute calls would add them
 *  (psdl.builder's Builder:building): psdl_facades' segments; per wall run a facade bound
 *  (§2.4 0x7), per segment a sliver (0x3) where the ground falls below `base`, a ground-floor
 *  facade (0xB) when ground_height > 0 and an upper facade when top > base + ground_height;
 *  for a closed outline a roof (0xC) of psdl_fans' convex pieces over the pooled (float)
 *  points, extra hub points pooled after. ops receives 6 words per attribute: kind
 *  (PSDL_BUILDING_*), the two base vertices (pool indices), two height indices (bound: top,
 *  0; sliver: base, sliver_density; facades: bottom, top) and the light index (bound) or the
 *  horizontal repeats (facades). roof receives [m, v1 .. vm] per fan (hub first, pool
 *  indices) and the top's height index last; *nroof the words written (0 when open; 1 when
 *  closed and the outline has no area: no fan). Returns the number of attributes, or
 *  PSDL_GEOM_NOMEM (a pool full or out of memory; the pools may hold some of the points). */
size_t psdl_building(uint32_t *ops, uint32_t *roof, size_t *nroof, struct psdl_pool *vpool,
                     struct psdl_pool *hpool, const double *pts, size_t n, const psdl_building_opts *o);

/* ================================================================ intersections */

/** One road end at an intersection. */
typedef struct psdl_arm {
    double dir[2];       /* plan direction from the node outward along the road (normalised
                          * by the kernel) */
    psdl_profile profile; /* the road's profile as seen travelling outward (ROAD, WALKWAY or
                           * DIVIDED); left / right of outward travel */
    double crosswalk;    /* m, crosswalk depth along the road, 0 = none */
    double min_distance; /* m, the road end is at least this far from the node */
} psdl_arm;

/** Options of psdl_junction. */
typedef struct psdl_junction_opts {
    double center[3];   /* the node (x, y, z); the intersection is flat at y */
    double radius;      /* m, curb corner radius between arms with sidewalks (default 0: sharp) */
    double arc_step;    /* degrees between corner arc points (default 15) */
    double curb;        /* sidewalk rise, < 0 means PSDL_CURB_RISE */
} psdl_junction_opts;

/** Sizes of a junction's outputs (psdl_junction_bound fills upper bounds, psdl_junction_build the
 *  actual counts). */
typedef struct psdl_junction_sizes {
    size_t points;     /* points (x, y, z each) */
    size_t surface;    /* indices of the road-surface polygon */
    size_t sections;   /* indices of the arms' end sections (sum of strides) */
    size_t strips;     /* words of sidewalk strips */
    size_t crosswalks; /* crosswalks (4 indices each) */
    size_t outline;    /* indices of the room outline */
} psdl_junction_sizes;

/** A junction's geometry; arrays allocated by the caller with psdl_junction_bound's sizes.
 *  All indices point into `points`, in which every point is distinct. */
typedef struct psdl_junction {
    double *points;      /* x, y, z */
    uint32_t *surface;   /* road-surface polygon, retail winding, convex or not: give it to
                          * psdl_fans for the road fans (0x5); flat at the node's y */
    uint32_t *sections;  /* per arm, in input order: its end section, stride points ordered
                          * left to right of outward travel; the road room starts here */
    double *distance;    /* per arm: distance of the end section from the node along dir */
    uint32_t *strips;    /* sidewalk strips (0x1): [npairs, caps, curb0, outer0, curb1, outer1,
                          * ...] each, caps bit 0 = needs a start cap at the first pair, bit 1 =
                          * an end cap at the last pair (§2.4 0x1); curbs on the left of travel */
    uint32_t *crosswalks; /* 4 indices each: c0, c1, c2, c3 (§2.4 0x4): (c0, c1) along one
                           * curb (c1 at the road end), (c2, c3) along the other */
    uint32_t *outline;   /* the room's outline (perimeter), retail winding: the union of the
                          * surface, crosswalks and sidewalk strips, every boundary point kept */
    psdl_junction_sizes size; /* counts written by psdl_junction_build */
} psdl_junction;

/** Upper bounds of the output sizes of psdl_junction_build for these arms and options. */
void psdl_junction_bound(psdl_junction_sizes *out, const psdl_arm *arms, size_t narms,
                         const psdl_junction_opts *opts);

/** The geometry of an intersection where narms >= 1 road ends meet at opts->center (one arm
 *  is a dead end: the road surface closes in a half circle). Arms are taken in retail order
 *  (decreasing atan2(dz, dx), so the outline winds S < 0); between two neighbouring arms
 *  the kernel builds a corner: where they meet at less than 180 degrees the curb lines meet
 *  in a fillet of `radius` (when both sides have sidewalks; sharp otherwise) and the outer
 *  sidewalk lines at the building corner, which the corner sidewalk strip repeats as its
 *  outer point (city-layout §1.5); at 180 degrees or more the corner goes round the node
 *  (within half a degree of 180, two arms in line, e.g. a mid-block crosswalk or a change of
 *  width, both arms end at least 1 m from the node, so that road surface stays between
 *  their crosswalks). Each arm's end section lies at the smallest distance that keeps the corners and its
 *  crosswalk (between the section and a line `crosswalk` metres nearer the node, one per
 *  carriageway) inside the intersection, and at least min_distance. A sidewalk that meets a
 *  side without one (a walkway, a road with no sidewalk there) ends square across its width
 *  where the two curb lines meet (at the node for corners of 180 degrees or more), closed by
 *  an end cap, or a start cap when it begins there; the game's cap is a triangle from the
 *  curb to the outer point (§2.4 0x1), so next to a road-level surface the 0.15 m face under
 *  the outer point stays open, as in retail. The surface, the
 *  crosswalks and the strips share every vertex on their common edges, and the outline holds
 *  every point on the boundary, so the roads and blocks around close with no gap, no overlap
 *  and no T-junction. Returns 0, PSDL_GEOM_INVALID (see above; also for a NaN or infinite
 *  coordinate, width or option, or a negative left / right width) or PSDL_GEOM_NOMEM. */
size_t psdl_junction_build(psdl_junction *dst, const psdl_arm *arms, size_t narms,
                     const psdl_junction_opts *opts);

/** Words psdl_junction_pool writes into fans at most (psdl_fans_bound of the surface). */
size_t psdl_junction_pool_bound(const psdl_junction *j);

/** The room geometry of a built junction j in a vertex pool, in the order psdl.builder's
 *  Builder:intersection adds it: every point of j (refs[i] receives the pool index of
 *  j->points[i]; snapped to the grid `snap` when positive, psdl_pool_add_snapped), then the
 *  road fans (0x5) of its surface polygon: psdl_fans over the surface's points (doubles, as
 *  the junction made them), the hub points it adds pooled after. fans receives
 *  [m, v1 .. vm] per fan, hub first, as pool indices. Returns the words written to fans
 *  (0: the surface has no area), or PSDL_GEOM_NOMEM (out of memory or the pool full; the
 *  pool may hold some of the points). */
size_t psdl_junction_pool(uint32_t *refs, uint32_t *fans, struct psdl_pool *vpool, const psdl_junction *j,
                          double snap);

/* ================================================================ streets */

/** Rooms psdl_street_rooms makes at most for nsec sections cut into rooms of at most split
 *  sections ((nsec - 2) / (split - 1) + 1; 0 for fewer than 2 sections or split < 2);
 *  *outline_words (may be NULL) receives the words its outlines take at most. */
size_t psdl_street_rooms_bound(size_t nsec, size_t stride, size_t split, size_t *outline_words);

/** A street's road rooms (psdl.builder's Builder:street): the nsec sections of stride points
 *  sf (x, y, z each, left to right of travel, psdl_sections' layout) added to the vertex pool
 *  in order (snapped when snap > 0: psdl_pool_add_snapped), refs[i] receiving the pool index
 *  of point i; then cut into rooms of at most `split` (>= 2) sections, as even as can be,
 *  consecutive rooms sharing a section: room k spans sections ranges[2k] .. ranges[2k + 1]
 *  (0-based). outlines receives per room [n, v1 .. vn]: the strip's outline as pool indices,
 *  first section left to right, the right rail, the last section right to left, the left rail
 *  back (retail winding, §4.2), repeats of the last index skipped and the closing repeats of
 *  the first dropped; *noutline the words written. Buffers: nsec * stride refs, 2 *
 *  psdl_street_rooms_bound ranges, its outline words. Returns the number of rooms,
 *  PSDL_GEOM_INVALID (stride 0 or split < 2, nothing written) or PSDL_GEOM_NOMEM (out of
 *  memory or the pool full; the pool may hold some of the points). */
size_t psdl_street_rooms(uint32_t *refs, uint32_t *ranges, uint32_t *outlines, size_t *noutline,
                         struct psdl_pool *vpool, const double *sf, size_t nsec, size_t stride, size_t split,
                         double snap);

/* ================================================================ grids */

/** A uniform grid of items (uint32 ids) by plan box: psdl.plan's Grid (psdl_grid.c). */
typedef struct psdl_grid psdl_grid;

/** Boxes spanning more cells than this are refused (psdl_grid_insert, psdl_grid_collect). */
#define PSDL_GRID_MAX_CELLS (1 << 24)
/** The largest item id (the grid keeps a word per id up to the largest inserted). */
#define PSDL_GRID_MAX_ID (1u << 24)

/** New grid of square cells of `cell` metres (> 0, finite), or NULL. */
psdl_grid *psdl_grid_new(double cell);

/** Frees a grid (NULL-safe). */
void psdl_grid_free(psdl_grid *g);

/** Inserts item (0 .. PSDL_GRID_MAX_ID) into every cell its box meets: cells floor(x0 / cell) ..
 *  floor(x1 / cell) by floor(z0 / cell) .. floor(z1 / cell), keyed i * 2^20 + j as
 *  psdl.plan's Grid keys them. Returns 0, -1 (a box not finite or over PSDL_GRID_MAX_CELLS
 *  cells, or a bad id; nothing inserted) or -2 (out of memory; the item may be in some
 *  cells). */
int psdl_grid_insert(psdl_grid *g, uint32_t item, double x0, double z0, double x1, double z1);

/** The items whose cells meet the box, each once, cells x-major (i, then j), items in
 *  insertion order within a cell: the first `cap` written to out. Returns how many there are
 *  (more than cap: call again with room for all), or PSDL_GEOM_INVALID for a box not finite
 *  or over PSDL_GRID_MAX_CELLS cells. */
size_t psdl_grid_collect(psdl_grid *g, uint32_t *out, size_t cap, double x0, double z0, double x1, double z1);

/** Inserts a point item (psdl.plan's Grid:insert_point): into the cell holding (x, z), its
 *  position kept for psdl_grid_nearest. Returns 0, -1 (x or z not finite, or a bad id) or -2
 *  (out of memory). */
int psdl_grid_insert_point(psdl_grid *g, uint32_t item, double x, double z);

/** The point item nearest to (x, z) in plan (psdl.plan's Grid:nearest): searched in growing
 *  squares of cells around the cell of (x, z), at most `span` cells out, the square of radius
 *  r visited x-major (its left and right columns whole, the others at their two ends) and
 *  each cell's items in insertion order; stops after the first square whose search found a
 *  point within r cells. Among equally near points the first visited. Items inserted by box
 *  have no position and are passed over. Returns 1 (*item and *d2, the squared distance, m²,
 *  set), 0 (none within span) or -1 (x or z not finite or too far from the origin). */
int psdl_grid_nearest(const psdl_grid *g, double x, double z, int64_t span, uint32_t *item, double *d2);

/** The items of the one cell holding (x, z), in insertion order and as often as they were
 *  inserted there (psdl.plan's Grid:cell): *n of them, valid until the next insert; NULL with
 *  *n = 0 for an empty cell or (x, z) not finite or too far from the origin. */
const uint32_t *psdl_grid_cell(const psdl_grid *g, double x, double z, size_t *n);

/* ================================================================ pools (§3.2, §3.5) */

/** A deduplicating pool of float tuples (dimension 1 for heights, 3 for vertices). Exact:
 *  two tuples are one entry when their float32 values are equal (-0 equals +0). A vertex
 *  pool reserves entry 0 as the dummy vertex (§3.2, never returned by psdl_pool_add). */
typedef struct psdl_pool psdl_pool;

/** New pool of dimension dim (1..4); reserve_first = 1 keeps entry 0 as a dummy of zeros.
 *  NULL when out of memory. */
psdl_pool *psdl_pool_new(unsigned dim, int reserve_first);

/** Frees a pool (NULL-safe). */
void psdl_pool_free(psdl_pool *pool);

/** Index of the tuple v[0 .. dim-1] (rounded to float), added if new. Returns UINT32_MAX
 *  when out of memory (or at 2^32 - 2 entries). O(1) expected (open-addressing hash, grown
 *  at half load; when growing fails the pool keeps adding up to 3/4 load, then refuses). */
uint32_t psdl_pool_add(psdl_pool *pool, const double *v);

/** psdl_pool_add of a 3-D point p rounded to the grid `snap` (metres) first when snap > 0:
 *  each coordinate floor(c / snap + 0.5) * snap, the builder's `snap` option (psdl.builder,
 *  Lua's math.floor arithmetic, so the pooled floats are those the Lua side would add). */
uint32_t psdl_pool_add_snapped(psdl_pool *pool, const double *p, double snap);

/** Index of v if present (the dummy never matches), else UINT32_MAX. */
uint32_t psdl_pool_find(const psdl_pool *pool, const double *v);

/** Number of entries (the dummy included). */
size_t psdl_pool_count(const psdl_pool *pool);

/** The entries, dim floats each (valid until the next add). */
const float *psdl_pool_data(const psdl_pool *pool);

/** Drops the entries from index n on (n: a count psdl_pool_count returned earlier), so that
 *  the pool is as it was then: the kept entries keep their indices, a dropped tuple is new
 *  again. psdl.builder undoes a call that failed part-way with it. Allocates nothing.
 *  Returns 0, or -1 with nothing changed when n is above the count or below the reserved
 *  dummy (1 for a vertex pool). */
int psdl_pool_truncate(psdl_pool *pool, size_t n);

/** Overwrites the reserved entry 0 (the dummy vertex, §3.2) with v without rehashing (it is
 *  never looked up). Returns 0, or -1 with nothing written when the pool was created
 *  without reserve_first (its entry 0 is an ordinary hashed entry). */
int psdl_pool_set_dummy(psdl_pool *pool, const double *v);

/* ================================================================ rooms (§1.5) */

/* Room perimeters are passed in CSR form: room r (0-based) owns verts[start[r] .. start[r+1]-1],
 * vertex indices into a point array pts (x, y, z doubles, npts points). */

/** Surface triangles of one attribute's vertex list (3 indices each, into the same vertex
 *  numbering as refs), in retail winding where the format fixes it: road strips (type 0,
 *  stride 4), sidewalk strips (1, stride 2), walkways (2, stride 2), divided roads (8,
 *  stride 6) give two triangles per quad; crosswalks (4) two; fans (5, 6) and roofs (12)
 *  one per rim edge; other types none. Triangles with a repeated index are skipped. Returns
 *  the number of indices written (at most psdl_surface_bound). */
size_t psdl_surface_triangles(uint32_t *dst, int type, const uint32_t *refs, size_t n);

/** Upper bound of psdl_surface_triangles' output for n refs: 6 * n. */
size_t psdl_surface_bound(size_t n);

/** Outline of the union of triangles tris[0 .. 3*ntris-1] (indices into pts, each < npts;
 *  PSDL_GEOM_INVALID, nothing written, when one is not): the boundary
 *  edges (used once) chained into loops; dst receives the loop of largest plan area, in
 *  retail winding (S < 0), every boundary point kept, with the holes inside it (loops wound
 *  the other way) joined through zero-width keyhole cuts as psdl_keyhole makes them, so that
 *  the game's crossing-number test (§1.5) leaves them out. Returns the point count (at most
 *  3 * ntris), 0 when there is no loop, PSDL_GEOM_INVALID, or PSDL_GEOM_NOMEM. */
size_t psdl_boundary(uint32_t *dst, const uint32_t *tris, size_t ntris, const double *pts, size_t npts);

/** psdl_boundary over float points (a vertex pool's x, y, z, npts points), taking only the
 *  points the triangles use, renumbered in index order, so that the outline is the same
 *  point for point whatever else the pool holds; dst (at least 3 * ntris + 1 entries)
 *  receives indices into pts. Same returns as psdl_boundary. */
size_t psdl_boundary_used(uint32_t *dst, const uint32_t *tris, size_t ntris, const float *pts, size_t npts);

/** Upper bound of psdl_link's output points for the same inputs (room perimeters in CSR form
 *  as above, every vertex < npts): the perimeter points plus, for every vertex, the square
 *  of the number of perimeter entries naming it (the repeats for rooms touching only at a
 *  vertex, §1.5 of docs/psdl-format.md). Allocates scratch memory sized by the largest
 *  vertex used (not by npts). Returns PSDL_GEOM_INVALID when a vertex is >= npts,
 *  PSDL_GEOM_NOMEM when out of memory or when the bound exceeds 2^32 - 1 (psdl_link's
 *  offsets are 32-bit). */
size_t psdl_link_bound(const uint32_t *start, const uint32_t *verts, size_t nrooms, size_t npts);

/** Neighbour links (§1.5). For each room, the perimeter point k gets as neighbour the room
 *  (1-based position: room r is r + 1; 0 = none) having the same edge (either direction) as
 *  k -> k+1; then for each perimeter vertex touched by further rooms that share no edge with
 *  this room, the vertex is repeated once per such room (a zero-length edge carrying it),
 *  placed before the point's own edge. Links are symmetric by construction. Consecutive
 *  duplicate points and a closing duplicate of the first point are dropped first. Every vertex
 *  must be < npts (scratch is sized by the largest one used); dst_verts and dst_nb need
 *  psdl_link_bound entries each. dst_verts, dst_nb receive the new perimeters in CSR form
 *  with dst_start (nrooms + 1 entries). Returns the number of points written,
 *  PSDL_GEOM_INVALID (nothing written) when a vertex is >= npts, or PSDL_GEOM_NOMEM. */
size_t psdl_link(uint32_t *dst_verts, uint32_t *dst_nb, uint32_t *dst_start, const uint32_t *start,
                 const uint32_t *verts, size_t nrooms, size_t npts);

/** T-junctions between room perimeters: a perimeter vertex v of one room lying strictly
 *  inside a perimeter edge (a, b) of another room (3D distance to the segment <= eps, not
 *  within eps of either end) where v is not a point of that edge. Found with a uniform
 *  plan grid (linear in the number of perimeter points for even spreads). dst receives up
 *  to cap records of 3 words: room (0-based), edge position k (perimeter point k -> k+1 of
 *  that room, 0-based), vertex v; sorted by room, edge and distance from a. Vertices >= npts
 *  are skipped, as are edges ending at one; eps <= 0 or NaN means 1e-3. Returns the total
 *  number of records found (which may exceed cap), PSDL_GEOM_INVALID when the perimeter
 *  points' plan extent is not finite (a coordinate infinite, or finite ones spanning more
 *  than the largest double, like -1e308 .. 1e308), or PSDL_GEOM_NOMEM. */
size_t psdl_tjunctions(uint32_t *dst, size_t cap, const double *pts, size_t npts, const uint32_t *start,
                       const uint32_t *verts, size_t nrooms, double eps);

/** A block perimeter edge that runs along a road room's edge at another height. */
typedef struct psdl_height_mismatch {
    uint32_t block, edge;     /* block room (0-based), its perimeter point edge -> edge + 1 */
    uint32_t road, road_edge; /* road or intersection room (0-based), its edge */
    double dy;                /* the block edge's midpoint height minus the road edge's there (m) */
} psdl_height_mismatch;

/** Block edges beside road edges at another height (rooms link only through shared
 *  vertices, §1.5, so such a block stays unlinked; the builder warns). Rooms in CSR form as
 *  above, with each perimeter point's neighbour nb (0 = none) and a kind per room: 1 block,
 *  2 road or intersection, 0 neither (tunnels and bridges). A block edge (two distinct
 *  vertices, no neighbour, plan length above 2 eps) matches a road edge when its midpoint's
 *  plan foot on the road edge lies on it within eps, the two are parallel (sine of their
 *  angle below 0.01), and the midpoint's height differs from the road edge's there by more
 *  than eps and at most gap. One record per pair of rooms, with the lowest block edge and,
 *  for it, the lowest road edge; sorted by block room, then road room. Compares only edges
 *  near each other (a grid of `cell` metres, 16 when not positive). Writes up to cap records;
 *  returns the total found, or PSDL_GEOM_NOMEM. Vertices >= npts are skipped. */
size_t psdl_height_mismatches(psdl_height_mismatch *dst, size_t cap, const double *pts, size_t npts,
                              const uint32_t *start, const uint32_t *verts, const uint32_t *nb,
                              const unsigned char *kind, size_t nrooms, double eps, double gap, double cell);

struct psdl_doc;

/** psdl_height_mismatches over the rooms 1 .. nrooms - 1 of a document (the perimeters'
 *  vertex and neighbour fields, the float vertices as they are): kind[r] and the rooms of the
 *  records are 0-based, for document room r + 1. The document Builder:finish assembles has
 *  the perimeters and vertices it would pass in CSR form, so both give the same records. */
size_t psdl_height_mismatches_doc(psdl_height_mismatch *dst, size_t cap, const struct psdl_doc *doc,
                                  const unsigned char *kind, double eps, double gap, double cell);

/* ================================================================ building rows (city-layout.md §5) */

/** What a row of buildings looks like (metres; ranges min <= max). */
typedef struct psdl_row_opts {
    double setback;              /* from the frontage line to the front walls */
    double depth_min, depth_max; /* building depth, street to back wall */
    double width_min, width_max; /* frontage width of one building (rounded to bays) */
    double gap_min, gap_max;     /* gap between neighbouring buildings */
    double bay_width;            /* facade bay; widths are whole bays, at least max(4, bay) */
} psdl_row_opts;

/** Random numbers for a layout: the next number in [0, 1). */
typedef double (*psdl_row_rng)(void *ud);
/** Called for every footprint placed: n points (x, y = 0, z; retail, plan) that fit the room
 *  and are recorded as placed before the call. The array is reused after the call. Returns
 *  0 to go on, non-zero to stop the layout (psdl_building_rows returns PSDL_GEOM_INVALID). */
typedef int (*psdl_row_place)(void *ud, const double *fp, size_t n);

/** A block room as the building rows see it: its outline and the footprints placed in it
 *  (inset by 0.05 m, with boxes), plus the scratch memory of a layout. Fields are private. */
typedef struct psdl_row_room {
    double *poly;
    size_t n;
    size_t nplaced;
    double *placed, *placed_box;
    size_t *placed_at;
    size_t placed_cap, placed_n_cap, poly_cap;
    double *chain, *q, *seg, *mit, *forbid, *cand, *fp, *work, *work2, *runs;
    size_t chain_cap, q_cap, seg_cap, mit_cap, forbid_cap, cand_cap, fp_cap, work_cap, work2_cap, runs_cap;
    psdl_ring_index ix; /* poly's edges by z for psdl_row_fits (made on first use) */
    int ix_made;
} psdl_row_room;

/** The plan box {x0, x1, z0, z1} of the ring pts[0 .. n-1] (x, y, z points; n = 0 gives
 *  an empty box: +inf, -inf, +inf, -inf). */
void psdl_ring_box(double bb[4], const double *pts, size_t n);

/** Do the simple rings a (na points) and b (nb >= 1 points), with plan boxes ab and bb
 *  (psdl_ring_box), overlap: an edge of one meeting an edge of the other (crossing, or within
 *  1e-3 m), or the first point of one inside the other (crossing number)? The test of
 *  psdl.plan's `overlap`, operation for operation. */
int psdl_rings_overlap(const double *a, size_t na, const double *ab, const double *b, size_t nb, const double *bb);

/** Prepares r for the room outline poly[0 .. n-1] (points x, y, z; retail, the room's
 *  perimeter as psdl_first_outside takes it; copied; the layout's scratch is made when a
 *  layout runs). Returns 0, or -1 when memory cannot be
 *  had (r is then empty; psdl_row_room_free on it is harmless). */
int psdl_row_room_init(psdl_row_room *r, const double *poly, size_t n);

/** Releases what r holds (r may be zeroed or already freed). */
void psdl_row_room_free(psdl_row_room *r);

/** Gives back the scratch memory of r's layouts (psdl_building_rows makes it again when it
 *  runs), keeping the outline and the footprints placed: a city keeps a row room per block
 *  room while its blocks are filled, and the scratch was most of each one's memory (about
 *  10 KiB a room, 3.5 MiB per 1,000 rooms at peak). NULL is fine. */
void psdl_row_room_trim(psdl_row_room *r);

/** Does footprint fp[0 .. n-1] (points x, y, z; retail) stand in room r clear of the
 *  footprints placed so far? It must be a simple ring (psdl_ring_simple, 1e-3 m) of at least
 *  3 finite points wound retail (S < 0), lie inside the room outline on the ground plane
 *  (psdl_first_outside, closed, 0.01 m), and its 0.05 m inset (mitre clamped at 1 / 0.3) may
 *  not meet the inset of any footprint placed (edges within 1e-3 m, or one inside the
 *  other). When it fits, it is recorded as placed. Returns 1, 0, or PSDL_GEOM_NOMEM. */
size_t psdl_row_fits(psdl_row_room *r, const double *fp, size_t n);

/** Building rows along room r's street edges: front[i] != 0 marks edge i (point i to
 *  point i + 1) as frontage. Runs of frontage edges become chains (a room whose every edge is
 *  frontage gives one closed chain opened at the middle of its longest edge); each chain is
 *  simplified (points within 0.03 m of their neighbours' line, or 0.05 m of the last kept,
 *  dropped), then laid out: a corner building wrapping every bend of more than 25 degrees
 *  (arms of 2 .. max(2, width_max / 2) m), then rows between them and the chain's ends
 *  (widths in whole bays, gaps, depths drawn from rng), each footprint square to the street
 *  between the setback line and the depth, tried with its ends pulled in (2, 4, 7 m) and at
 *  0.65 and 0.4 of its depth (never under 3 m) until psdl_row_fits accepts it; accepted ones
 *  go to place(ud, ...). Draws, in this order: per corner a depth and two arm lengths; then
 *  per gap between corner buildings (and the chain's ends) two gap lengths; then per row
 *  building a width in bays, a depth and the gap after it (a range whose max <= min draws
 *  nothing), so the same generator gives the same city. Returns the number of footprints
 *  placed, PSDL_GEOM_NOMEM, or PSDL_GEOM_INVALID when place asked to stop. */
size_t psdl_building_rows(psdl_row_room *r, const unsigned char *front, const psdl_row_opts *o, psdl_row_rng rng,
                          psdl_row_place place, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* PSDL_GEOM_H */
