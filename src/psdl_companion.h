/*
 * psdl_companion.h -- lossless codecs for the MM2 files that ship beside the PSDL:
 * .bai (AI roads), .cpvs (visibility), .inst (placed models), .pathset (prop paths),
 * PKG3 (models) and .tex (textures). C99, no Lua.
 *
 * Reference: docs/companion-formats.md ("CF §n"); the Lua tables are in docs/companion.md.
 *
 * Conventions (the PSDL codec's, psdl.h):
 *   - decode reads a memory buffer to EOF into a document that owns one arena (freed with
 *     the format's _free function); every count is checked against the bytes left before
 *     anything is allocated; no read outside the buffer, no abort on bad input.
 *   - a decoded document encodes back to the identical bytes: whatever the format's fields
 *     do not explain (trailing bytes, raw editor fields, chunks without a view) is kept.
 *   - encode writes into a caller buffer; psdl_<f>_encode(doc, NULL, 0, &n, err) only
 *     measures. Errors: invalid (a count too large for its field, inconsistent arrays).
 *   - failures fill a psdl_cerror: status, byte offset, 0-based record index (-1 none) and
 *     a message "<format>: <status>: <detail> at offset 0x.. (record k)" with k 1-based.
 * All values are little-endian on disk and host floats in memory, copied bit for bit.
 */
#ifndef PSDL_COMPANION_H
#define PSDL_COMPANION_H

#include "psdl.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Error of a companion codec. record: 0-based index of the top-level record (road,
 *  intersection, cpvs row, instance, path, chunk, mip level) or -1. */
typedef struct psdl_cerror {
    psdl_status code;
    size_t offset;
    long record;
    char message[256];
} psdl_cerror;

/** The format a buffer's magic names: "bai" (CAI1), "cpvs" (PVS0), "pathset" (PTH1),
 *  "pkg" (PKG3/PKG2), "psdl" (PSD0/PSD1), or NULL (.inst and .tex have no magic). */
const char *psdl_companion_detect(const void *data, size_t size);

/* ================================================================ .bai (CF §2) */

typedef struct psdl_bai_end {
    uint32_t intersection; /* 0-based intersection index as stored */
    uint16_t light_index;  /* 0xCDCD on disk */
    uint16_t rule;         /* 0 stop, 1 light, 2 always stop, 3 none */
    uint16_t flags;
    uint32_t road_index;   /* 0-based position in the intersection's road list */
    psdl_vec3 light_pos, light_axis;
} psdl_bai_end;

/** One side (CF §2.3 "Side record"). Row arrays are nsections long each, row-major:
 *  lengths[row * nsections + k] with rows 0..nlanes-1 the lanes and row nlanes the sidewalk;
 *  lanes[lane * nsections + k]; trams, trains likewise. */
typedef struct psdl_bai_side {
    uint16_t nlanes, ntrams, ntrains, nsidewalks, flags;
    float *lengths;  /* (nlanes + 1) * nsections */
    float *lateral;  /* nlanes + 1 */
    float params[10];
    psdl_vec3 *lanes;    /* nlanes * nsections, stored (travel) order */
    psdl_vec3 *sidewalk; /* nsections */
    psdl_vec3 *trams;    /* ntrams * nsections */
    psdl_vec3 *trains;   /* ntrains * nsections */
    psdl_vec3 *curb;     /* nsections */
    psdl_vec3 *edge;     /* nsections */
} psdl_bai_side;

typedef struct psdl_bai_road {
    uint16_t id, nsections, flags, nrooms;
    uint16_t *rooms; /* game room ids */
    float half_width, speed_limit;
    psdl_bai_side side[2]; /* side A, side B */
    float *centre_length;  /* nsections */
    psdl_vec3 *origin, *x_axis, *y_axis, *z_axis, *w_axis; /* nsections each */
    psdl_bai_end end[2]; /* end[0] at the last section, end[1] at the first */
} psdl_bai_road;

typedef struct psdl_bai_intersection {
    uint16_t id, room;
    psdl_vec3 center;
    uint16_t nroads;
    uint32_t *roads; /* 0-based road indices as stored */
} psdl_bai_intersection;

typedef struct psdl_bai_list {
    uint16_t n;
    uint16_t *roads; /* 0-based road indices as stored */
} psdl_bai_list;

typedef struct psdl_bai {
    uint16_t nroads, nintersections;
    psdl_bai_road *roads;
    psdl_bai_intersection *intersections;
    uint32_t ncull;            /* nCullRooms = R */
    psdl_bai_list *near, *in;  /* ncull lists each, indexed by room id */
    const uint8_t *trailing;   /* bytes after the in-lists (NULL if none; retail has none) */
    size_t ntrailing;
    void *arena_;
} psdl_bai;

/** Decode a CAI1 file. Bytes after the in-lists (CF §2.2: retail ends exactly there) are
 *  kept as trailing. Errors: bad_magic, truncated, bad_count (a count beyond the bytes
 *  left), nomem. */
psdl_status psdl_bai_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_bai **out,
                            psdl_cerror *err);
/** An empty document to fill (arrays from psdl_companion_alloc). NULL when out of memory. */
psdl_bai *psdl_bai_new(const psdl_alloc *alloc);
/** Encode into dst (cap bytes); dst NULL only measures (*written = size). Errors: invalid
 *  (a count too large for its field, an array missing for its count, cap too small). */
psdl_status psdl_bai_encode(const psdl_bai *bai, void *dst, size_t cap, size_t *written, psdl_cerror *err);
/** Frees the document and everything it owns. NULL-safe. */
void psdl_bai_free(psdl_bai *bai);

/* ================================================================ .cpvs (CF §3) */

typedef struct psdl_cpvs_row {
    const uint8_t *rle; /* compressed bytes as stored (arena copy) */
    uint32_t len;
} psdl_cpvs_row;

typedef struct psdl_cpvs {
    uint32_t n;          /* header n = R + 1 (>= 2); rows for rooms 1 .. n-2 */
    psdl_cpvs_row *rows; /* rows[r - 1] is room r's row; n - 2 rows */
    const uint8_t *trailing; /* bytes after the end offset (NULL if none) */
    size_t ntrailing;
    void *arena_;
} psdl_cpvs;

/** Decode a PVS0 file. offsets[0] must be 0, offsets non-decreasing, the end offset within
 *  the data (bytes after it are kept as trailing); every row must decompress cleanly (a run
 *  crossing the row's end is bad_count with the row as record). Errors: bad_magic,
 *  truncated, bad_count, bad_index, nomem. */
psdl_status psdl_cpvs_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_cpvs **out,
                             psdl_cerror *err);
/** An empty document to fill (arrays from psdl_companion_alloc on its arena_); NULL when
 *  out of memory. */
psdl_cpvs *psdl_cpvs_new(const psdl_alloc *alloc);
/** Encode into dst (cap bytes); dst NULL only measures (*written = size). Errors: invalid
 *  (a count too large for its field, an array missing for its count, cap too small). */
psdl_status psdl_cpvs_encode(const psdl_cpvs *cpvs, void *dst, size_t cap, size_t *written, psdl_cerror *err);
/** Frees the document and everything it owns. NULL-safe. */
void psdl_cpvs_free(psdl_cpvs *cpvs);

/** Decompress one RLE row (CF §3.3) into dst (cap bytes; dst may be NULL to measure; bytes
 *  past cap are not written). *outlen receives the full decompressed length. Returns 0, or -1 when a run is cut off by the
 *  end of the row (*outlen then holds the offset in rle where the bad run starts). */
int psdl_cpvs_rle_decode(const uint8_t *rle, size_t len, uint8_t *dst, size_t cap, size_t *outlen);

/** Compress len bytes with the canonical RLE: runs of 3..127 equal bytes as repeats,
 *  everything else as literals of 1..128 bytes. dst may be NULL to measure; returns the
 *  compressed size (at most len + ceil(len / 128)). */
size_t psdl_cpvs_rle_encode(const uint8_t *src, size_t len, uint8_t *dst);

/* ================================================================ .inst (CF §4) */

typedef struct psdl_inst_record {
    uint16_t room, flags;
    uint8_t compact;   /* name byte bit 7 */
    uint8_t name_len;  /* bytes of name without its NUL (name byte & 0x7F is name_len + 1) */
    char *name;        /* NUL-terminated copy (may contain NULs before name_len) */
    psdl_vec3 m[4];    /* full: x, y, z axes and origin. compact: m[0] = (x, 0, z), m[3] */
} psdl_inst_record;

typedef struct psdl_inst {
    uint32_t nrecords;
    psdl_inst_record *records;
    void *arena_;
} psdl_inst;

/** Decode an instance list (records to EOF). Errors: truncated, bad_string (name byte 0,
 *  or the name's last byte is not NUL), nomem. */
psdl_status psdl_inst_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_inst **out,
                             psdl_cerror *err);
/** An empty document to fill (arrays from psdl_companion_alloc on its arena_); NULL when
 *  out of memory. */
psdl_inst *psdl_inst_new(const psdl_alloc *alloc);
/** Encode into dst (cap bytes); dst NULL only measures (*written = size). Errors: invalid
 *  (a count too large for its field, an array missing for its count, cap too small). */
psdl_status psdl_inst_encode(const psdl_inst *inst, void *dst, size_t cap, size_t *written, psdl_cerror *err);
/** Frees the document and everything it owns. NULL-safe. */
void psdl_inst_free(psdl_inst *inst);

/* ================================================================ .pathset (CF §5.1) */

typedef struct psdl_path {
    char name[33];    /* the 32-byte field, plus a NUL for C use */
    uint32_t npoints, selection;
    uint32_t *words;  /* the u32 before each point */
    psdl_vec3 *points;
    uint8_t type, spacing;
    uint16_t pad;
} psdl_path;

typedef struct psdl_pathset {
    uint32_t npaths, current;
    psdl_path *paths;
    const uint8_t *trailing; /* bytes after the last path (NULL if none) */
    size_t ntrailing;
    void *arena_;
} psdl_pathset;

/** Decode a PTH1 file (bytes after the last path kept as trailing). Errors: bad_magic,
 *  truncated, bad_count, nomem. */
psdl_status psdl_pathset_decode(const psdl_alloc *alloc, const void *data, size_t size,
                                psdl_pathset **out, psdl_cerror *err);
/** An empty document to fill (arrays from psdl_companion_alloc on its arena_); NULL when
 *  out of memory. */
psdl_pathset *psdl_pathset_new(const psdl_alloc *alloc);
/** Encode into dst (cap bytes); dst NULL only measures (*written = size). Errors: invalid
 *  (a count too large for its field, an array missing for its count, cap too small). */
psdl_status psdl_pathset_encode(const psdl_pathset *ps, void *dst, size_t cap, size_t *written,
                                psdl_cerror *err);
/** Frees the document and everything it owns. NULL-safe. */
void psdl_pathset_free(psdl_pathset *ps);

/* ================================================================ PKG3 (CF §7.2) */

/* D3D FVF bits the geometry view understands (PKGIE's names). */
#define PSDL_FVF_XYZ 0x002u
#define PSDL_FVF_NORMAL 0x010u
#define PSDL_FVF_DIFFUSE 0x040u
#define PSDL_FVF_SPECULAR 0x080u
#define PSDL_FVF_TEX1 0x100u

typedef struct psdl_pkg_vertex {
    psdl_vec3 position, normal; /* normal when fvf & NORMAL */
    uint32_t diffuse, specular; /* when fvf & DIFFUSE / SPECULAR */
    float u, v;                 /* when fvf & TEX1 */
} psdl_pkg_vertex;

typedef struct psdl_pkg_packet {
    uint32_t primitive, nvertices, nindices;
    psdl_pkg_vertex *vertices;
    uint16_t *indices; /* 0-based into vertices */
} psdl_pkg_packet;

typedef struct psdl_pkg_section {
    uint32_t shader; /* 0-based as stored */
    uint32_t npackets;
    psdl_pkg_packet *packets;
} psdl_pkg_section;

typedef struct psdl_pkg_geometry {
    uint32_t fvf, nsections;
    psdl_pkg_section *sections;
} psdl_pkg_geometry;

typedef struct psdl_pkg_shader {
    int textured;       /* 0: length byte 0 (untextured) */
    uint8_t name_len;   /* without NUL */
    char *name;
    float colour[4][4]; /* full: diffuse, ambient, specular, emissive (r, g, b, a) */
    uint8_t bytes[3][4]; /* compact: diffuse, second, emissive (r, g, b, a) */
    float power;
} psdl_pkg_shader;

typedef struct psdl_pkg_shaders {
    uint32_t paint_jobs, per_job; /* paint_jobs <= 127 */
    int compact;
    psdl_pkg_shader *shaders; /* paint_jobs * per_job, job-major */
} psdl_pkg_shaders;

typedef struct psdl_pkg_xref {
    float m[12];  /* m0..m3 rows */
    char name[32]; /* NUL-terminated (at most 31 bytes of name) */
} psdl_pkg_xref;

typedef enum psdl_pkg_kind {
    PSDL_PKG_RAW = 0, PSDL_PKG_GEOMETRY, PSDL_PKG_SHADERS, PSDL_PKG_XREFS
} psdl_pkg_kind;

typedef struct psdl_pkg_chunk {
    uint8_t name_len; /* without NUL */
    char *name;
    int kind;         /* psdl_pkg_kind: which member below is used */
    const uint8_t *data; /* RAW: body bytes */
    size_t size;
    psdl_pkg_geometry geometry;
    psdl_pkg_shaders shaders;
    uint32_t nxrefs;
    psdl_pkg_xref *xrefs;
} psdl_pkg_chunk;

typedef struct psdl_pkg {
    char magic[4]; /* "PKG3" */
    uint32_t nchunks;
    psdl_pkg_chunk *chunks;
    void *arena_;
} psdl_pkg;

/** Decode a PKG3 file: chunks to EOF; each chunk gets a view (geometry, shaders, xrefs) only
 *  when the view re-encodes to its exact bytes, else kind RAW. Errors: bad_magic (PKG2 is
 *  refused: without chunk sizes it cannot be split losslessly), truncated, bad_string,
 *  nomem. */
psdl_status psdl_pkg_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_pkg **out,
                            psdl_cerror *err);
/** An empty document to fill (arrays from psdl_companion_alloc on its arena_); NULL when
 *  out of memory. */
psdl_pkg *psdl_pkg_new(const psdl_alloc *alloc);
/** Encode; refuses (invalid) an index past its packet's vertices, > 65535 vertices in a
 *  packet, primitive 3 with an index count not a multiple of 3, > 127 sections, > 127 paint
 *  jobs, names longer than 254 bytes (xrefs: 31). */
psdl_status psdl_pkg_encode(const psdl_pkg *pkg, void *dst, size_t cap, size_t *written, psdl_cerror *err);
/** Frees the document and everything it owns. NULL-safe. */
void psdl_pkg_free(psdl_pkg *pkg);

/* ================================================================ .tex (CF §9) */

typedef struct psdl_tex {
    uint16_t width, height, format, mips, unknown;
    uint32_t flags;
    int layout_known;        /* format with a documented texel layout (see psdl_tex_bpp) */
    const uint8_t *palette;  /* palettes: 256 (16 for P4/PA4) BGRA entries */
    size_t npalette;         /* bytes */
    uint32_t nlevels;
    const uint8_t **levels;  /* texel bytes per level */
    size_t *level_size;
    const uint8_t *data;     /* unknown layout: every byte after the header */
    size_t ndata;
    const uint8_t *trailing; /* bytes after the last level (NULL if none) */
    size_t ntrailing;
    void *arena_;
} psdl_tex;

/** Bits per texel of a format MM2 reads (1, 6, 14, 15, 16, 17, 18), 0 for others. */
unsigned psdl_tex_bpp(unsigned format);
/** Palette bytes of a format (1024, 64 or 0). */
size_t psdl_tex_palette_size(unsigned format);
/** Levels a header describes: mips, or the chain down to a side of 1 when mips is 0. */
uint32_t psdl_tex_level_count(unsigned width, unsigned height, unsigned mips);
/** Bytes of level i (0-based) of a width x height texture in format. */
size_t psdl_tex_level_size(unsigned width, unsigned height, unsigned format, uint32_t level);

/** Decode a texture. Errors: truncated, bad_count (zero size), nomem. */
psdl_status psdl_tex_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_tex **out,
                            psdl_cerror *err);
/** An empty document to fill (arrays from psdl_companion_alloc on its arena_); NULL when
 *  out of memory. */
psdl_tex *psdl_tex_new(const psdl_alloc *alloc);
/** Encode into dst (cap bytes); dst NULL only measures (*written = size). Errors: invalid
 *  (a count too large for its field, an array missing for its count, cap too small). */
psdl_status psdl_tex_encode(const psdl_tex *tex, void *dst, size_t cap, size_t *written, psdl_cerror *err);
/** Frees the document and everything it owns. NULL-safe. */
void psdl_tex_free(psdl_tex *tex);

/** Halve an RGB888 (bpp 3) or RGBA8888 (bpp 4) image with a 2 x 2 box filter (a side of 1
 *  stays 1): src is w x h, dst receives max(1, w/2) x max(1, h/2) texels. */
void psdl_tex_halve(const uint8_t *src, unsigned w, unsigned h, unsigned bpp, uint8_t *dst);

/* ================================================================ shared */

/** Arena memory of any companion document (zeroed, 8-byte aligned); NULL when out of
 *  memory or size 0. arena is the document's arena_ member. */
void *psdl_companion_alloc(void *arena, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* PSDL_COMPANION_H */
