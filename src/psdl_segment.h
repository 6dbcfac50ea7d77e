/* psdl_segment.h -- plan segment tests written as psdl.city.network's Lua writes them.
 *
 * Points are plan (x, z) pairs in metres. Each function does the Lua's operations in the
 * Lua's order (math.min / math.max keep their first argument on ties), so that the C
 * network conflicts (psdl_conflicts.c) and room overlaps (psdl_overlaps.c) find the same
 * points the former Lua found, bit for bit. */
#ifndef PSDL_SEGMENT_H
#define PSDL_SEGMENT_H

/* The unit vector of (x, z) in u[0], u[1]; 0 (u untouched) when it is shorter than 1e-9
 * metres (the Lua's nil), else 1. */
int psdl_seg_unit(double x, double z, double *u);

/* A proper crossing of segments p-q and u-v: 1 with the parameter on p-q in *t and on u-v in
 * *w (w may be NULL), both strictly inside 1e-9..1-1e-9; 0 for parallel segments (|cross| <
 * 1e-12) and for crossings at or beyond an end. */
int psdl_seg_cross(const double *p, const double *q, const double *u, const double *v, double *t, double *w);

/* The plan distance of (x, z) from segment p-q (metres), and in *t (may be NULL) the
 * parameter 0..1 of the nearest point (0 for a segment of zero length). */
double psdl_seg_closest(double x, double z, const double *p, const double *q, double *t);

#endif
