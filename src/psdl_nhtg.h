/*
 * psdl_nhtg.h -- terrain: The Sims 2 neighbourhood terrain (NHTG), DBPF packages, QFS/RefPack
 * compression and grayscale heightmap rasters (PNG through libpng, PGM by hand). C99, no Lua.
 *
 * Reference (read this first)
 * ===========================
 *
 * Format notes: docs/nhtg-format.md (sections cited as §n). Conventions are those
 * of psdl.h: functions that can fail on data return a psdl_status and fill an optional
 * psdl_error (code, byte offset, message "psdl: <code>: <detail> at offset 0x.."); every
 * count is checked against the bytes left before anything is allocated; nothing reads
 * outside its buffer; programmer errors (NULL where a pointer is required) are assert()s.
 * Objects returned by *_decode own one arena and are released with one *_free call.
 * Encoders that know their size take a destination buffer (size query, then fill, no
 * allocation); the two that cannot (QFS compression's hash table, PNG) allocate through
 * psdl_options.alloc and release everything before they return, except the PNG output.
 *
 * Status codes used here (psdl_status_name):
 *   truncated       the data ends inside a field or an array
 *   bad_magic       a wrong block id, nested id or name, an unknown version, not a DBPF
 *                   package / QFS record / PNG / PGM; the message says which
 *   bad_count       a dimension that does not match the grid (nested c2DArray dimensions
 *                   against W+1 / H+1, raster size against the grid), a count over a limit
 *                   or over the bytes left, a DIR whose size is not a whole number of records
 *   bad_index       a package index entry outside the file, a resource that is not there,
 *                   a QFS back-reference before the start of the output
 *   trailing_bytes  bytes after the end of an NHTG resource or a PGM image
 *   invalid         a non-finite height or water level (decode: at its byte offset), or an
 *                   in-memory value the format cannot hold (encode)
 *   bad_string      the nested block name is not "c2DArray"
 *   nomem
 *
 * NHTG (type 0xABCB5DA4, §2)
 * --------------------------
 * Little-endian: id, version (4), W, H (tiles), water level (f32), u32 L + L bytes of
 * terrain type (no NUL), then two nested c2DArray blocks (id 0x6B943B43, version 1, u32 8 +
 * "c2DArray", two u32 dimensions): (W+1)(H+1) float32 heights, then (W+1)(H+1) opaque bytes.
 *
 * AXIS CONVENTION (§4). The height array is one flat run; psdlkit reads it as a grid of
 *   rows = W + 1 (the FIRST nested dimension, the SLOW index i) and
 *   cols = H + 1 (the SECOND nested dimension, the FAST index j):
 *   heights[i * cols + j] is point (i, j), exactly the file order.
 * World and image mapping used everywhere in psdlkit:
 *   j (fast, column) -> x = j * cell_size;   i (slow, row) -> z = i * cell_size;
 *   heightmap images store row i as image row i, top row first, so the image raster scan
 *   is the file order; image width = cols, image height = rows.
 * In hood terms (Mootilda's readers): the fast index j pairs with the FIRST NHTR coordinate
 * (which Mootilda calls X) and with a lot's "Top"; the slow index i pairs with the SECOND
 * NHTR coordinate and with a lot's "Left": lot height = point(i = Left, j = Top); NHTR
 * (first, second) -> point(i = second / 10, j = first / 10). With W = H (every known hood)
 * the pairing of W with the slow dimension cannot be checked against a file; psdlkit
 * follows the order of the format table (first dimension = W + 1) and refuses a file
 * whose dimensions disagree.
 *
 * DBPF 1.x (§8)
 * -------------
 * 96-byte header, index of 20-byte (type, group, instance, offset, size) or 24-byte entries
 * (instance-high after instance; header u32 at 60 == 2, minor version >= 1). A resource is
 * compressed when the DIR resource (type 0xE86B1EEF) lists its TGI; its record is then
 * u32 record size, 0x10 0xFB, u24 big-endian uncompressed size, RefPack stream.
 * psdl_dbpf_rebuild writes a package with one resource replaced: the original header with
 * the index fields updated and the hole table emptied, then every resource's bytes in index
 * order (byte-identical except the replaced one and the DIR; bytes no entry covers, such as
 * holes, are dropped), then the index in its original order. The DIR entry of the replaced
 * resource is updated, added or removed; a DIR is added when needed (appended last), and
 * removed when it would be empty. A package with two DIR entries is refused on decoding,
 * and one whose replaced entry shares its type, group and instance with another on
 * rebuilding (the DIR could not tell them apart).
 *
 * QFS / RefPack
 * -------------
 * psdl_qfs_* work on the record as a Sims 2 package stores it (9-byte header above). The
 * record-size field is written as the whole record's size (what the index entry says) and
 * ignored when reading (the index entry bounds the record). After the stop opcode, any
 * further bytes in the record are ignored; a stream may also end without a stop opcode
 * exactly at the end of the record. The output must be exactly the announced size.
 *
 * Heightmap rasters
 * -----------------
 * psdl_raster: width x height samples (uint16), row-major, top row first, maxval = the
 * largest possible sample (255 or 65535 for PNG; 1..65535 for PGM). text: the value of the
 * psdlkit metadata (PNG tEXt keyword "psdlkit:heightmap", PGM comment line
 * "# psdlkit:heightmap <text>"), e.g. "offset=300 scale=0.01 cell_size=10"; the mapping
 * height = offset + scale * sample is applied by the Lua layer (lua/psdl/terrain.lua).
 * PNG: grayscale 1-16 bits (below 8 expanded to 8 bits), gray+alpha (alpha dropped); no
 * gamma transform. PGM: binary P5, 8-bit (maxval < 256) or 16-bit big-endian samples.
 */
#ifndef PSDL_NHTG_H
#define PSDL_NHTG_H

#include "psdl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- NHTG */

#define PSDL_NHTG_TYPE 0xABCB5DA4u      /* block id and DBPF resource type */
#define PSDL_NHTG_VERSION 4u            /* the only version known (§3) */
#define PSDL_C2DARRAY_ID 0x6B943B43u    /* nested block id */
#define PSDL_C2DARRAY_VERSION 1u        /* the only nested version known */
#define PSDL_NHTG_WATER_LEVEL 312.5f    /* every known hood (§7) */
#define PSDL_NHTG_MAX_TILES 16384u      /* largest W or H accepted */
#define PSDL_NHTG_MAX_TYPE_LEN 255u     /* longest terrain-type string accepted */

typedef struct psdl_nhtg {
    uint32_t version;      /* 4 */
    uint32_t width;        /* W, tiles (offset 8); rows = W + 1 */
    uint32_t height;       /* H, tiles (offset 12); cols = H + 1 */
    float water_level;     /* 312.5 in every known hood */
    uint32_t type_len;     /* L */
    char *terrain_type;    /* L bytes as stored, plus a NUL */
    uint32_t rows, cols;   /* points: W + 1 (slow index i, z) and H + 1 (fast index j, x) */
    float *heights;        /* rows * cols, heights[i * cols + j] (file order) */
    uint8_t *extra;        /* rows * cols bytes of the second c2DArray, opaque; NULL = zeros (encode) */
    void *arena_;          /* private */
} psdl_nhtg;

/** Bytes of an NHTG resource with a W x H grid and an L-byte type: 52 + L + 4 P + 28 + P,
 *  P = (W + 1)(H + 1). 0 when it does not fit a size_t. */
size_t psdl_nhtg_size(uint32_t width, uint32_t height, size_t type_len);

/** Decode an NHTG resource (uncompressed). Errors: truncated, bad_magic (id, version, nested
 *  id or version), bad_string (nested name), bad_count (W or H 0 or over the limit, type
 *  string over the limit, nested dimensions other than W+1 / H+1), invalid (non-finite water
 *  level or height, at its offset), trailing_bytes, nomem. */
psdl_status psdl_nhtg_decode(const psdl_options *opt, const void *data, size_t size, psdl_nhtg **out,
                             psdl_error *err);

/** A new NHTG (version 4, water 312.5, every height = fill, extra all zero) with a copy of
 *  type (type_len bytes). NULL when out of memory or when a size is out of range. */
psdl_nhtg *psdl_nhtg_new(const psdl_options *opt, uint32_t width, uint32_t height, const char *type,
                         size_t type_len, float fill);

/** Frees t and all its memory. NULL-safe. */
void psdl_nhtg_free(psdl_nhtg *t);

/** Bytes psdl_nhtg_encode writes (psdl_nhtg_size of t's fields). */
size_t psdl_nhtg_encoded_size(const psdl_nhtg *t);

/** Write t into dst (cap bytes). Allocates nothing. Refuses (invalid) a version other than 4,
 *  W or H of 0 or over the limit, rows/cols other than W+1/H+1, a non-finite water level or
 *  height (the message names the point and its byte offset), cap too small. */
psdl_status psdl_nhtg_encode(const psdl_nhtg *t, void *dst, size_t cap, size_t *written, psdl_error *err);

/** Height k (0-based, file order) of an NHTG being encoded, for psdl_nhtg_encode_from. */
typedef float (*psdl_nhtg_height_fn)(void *ud, size_t k);

/** As psdl_nhtg_encode, with the heights from height(ud, k) instead of t->heights (which
 *  may be NULL): encodes a height grid held elsewhere without a float copy of it. */
psdl_status psdl_nhtg_encode_from(const psdl_nhtg *t, psdl_nhtg_height_fn height, void *ud, void *dst, size_t cap,
                                  size_t *written, psdl_error *err);

/* ---------------------------------------------------------------- QFS / RefPack */

#define PSDL_QFS_HEADER_SIZE 9u
#define PSDL_QFS_MAX_SIZE 0xFFFFFFu /* the u24 uncompressed-size field */

/** Uncompressed size announced by a Sims 2 QFS record (src, n bytes). Errors: truncated,
 *  bad_magic (no 0x10 0xFB at offset 4). */
psdl_status psdl_qfs_size(const void *src, size_t n, size_t *usize, psdl_error *err);

/** Decompress a QFS record into dst (cap >= the announced size). Errors: as psdl_qfs_size;
 *  truncated (an opcode or its literals run past the record), bad_index (a back-reference
 *  before the start of the output), bad_count (output longer or shorter than announced, or
 *  cap too small). *written = the announced size on success. */
psdl_status psdl_qfs_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *written,
                                psdl_error *err);

/** As psdl_qfs_decompress, with error offsets counted from base (where the record sits in
 *  a package). */
psdl_status psdl_qfs_decompress_at(const void *src, size_t n, size_t base, void *dst, size_t cap,
                                   size_t *written, psdl_error *err);

/** Largest record psdl_qfs_compress can write for n input bytes. */
size_t psdl_qfs_compress_bound(size_t n);

/** Compress n bytes into a Sims 2 QFS record in dst (cap >= psdl_qfs_compress_bound(n)):
 *  greedy LZ77 with one hash candidate per position, every RefPack opcode form. Allocates a
 *  128 KiB hash table through opt (NULL: malloc) and frees it before returning. Errors:
 *  bad_count (n over PSDL_QFS_MAX_SIZE, cap too small), nomem. */
psdl_status psdl_qfs_compress(const psdl_options *opt, const void *src, size_t n, void *dst, size_t cap,
                              size_t *written, psdl_error *err);

/* ---------------------------------------------------------------- DBPF packages */

#define PSDL_DBPF_HEADER_SIZE 96u
#define PSDL_DBPF_DIR_TYPE 0xE86B1EEFu
#define PSDL_DBPF_DIR_GROUP 0xE86B1EEFu
#define PSDL_DBPF_DIR_INSTANCE 0x286B1F03u

typedef struct psdl_dbpf_entry {
    uint32_t type, group, instance;
    uint32_t instance_hi; /* 24-byte entries only; 0 otherwise */
    uint32_t offset, size; /* where the record is in the package */
    int compressed;        /* listed in the DIR */
    uint32_t usize;        /* uncompressed size the DIR lists (compressed), else size */
} psdl_dbpf_entry;

/** A decoded package: header fields and index. data/size borrow the caller's bytes, which
 *  must outlive the object. */
typedef struct psdl_dbpf {
    uint8_t header[PSDL_DBPF_HEADER_SIZE];
    uint32_t major, minor;              /* 1, 0 or 1 (or 2) */
    uint32_t index_major, index_minor;  /* 7; the u32 at 60 (1 or 2 with minor >= 1) */
    uint32_t entry_size;                /* 20 or 24 */
    uint32_t index_offset, index_size;
    uint32_t hole_count, hole_offset, hole_size;
    uint32_t nentries;
    psdl_dbpf_entry *entries;           /* index order */
    long dir;                           /* index of the DIR entry, or -1 */
    uint32_t dir_record_size;           /* 16 or 20 */
    const uint8_t *data;
    size_t size;
    void *arena_;                       /* private */
} psdl_dbpf;

/** Decode a package's header, index and DIR. An entry named by DIR records (type, group,
 *  instance and, with 20-byte records, instance-high) is compressed, with the uncompressed
 *  size of the last record naming it; records are matched through the entries sorted by
 *  key, O((entries + records) log entries), with scratch memory from opt. Errors:
 *  truncated, bad_magic (not "DBPF", major version other than 1, index major other than 7,
 *  compressed DIR), bad_index (index or an entry outside the file, two DIR entries),
 *  bad_count (index size smaller than its entries, DIR size not a whole number of records),
 *  nomem. */
psdl_status psdl_dbpf_decode(const psdl_options *opt, const void *data, size_t size, psdl_dbpf **out,
                             psdl_error *err);

/** Frees p (not the bytes it borrows). NULL-safe. */
void psdl_dbpf_free(psdl_dbpf *p);

/** First entry of the given type at or after index start, or -1. */
long psdl_dbpf_find(const psdl_dbpf *p, uint32_t type, size_t start);

/** Size of entry i's contents once decompressed. Errors: bad_index, and those of
 *  psdl_qfs_size for a compressed entry. */
psdl_status psdl_dbpf_resource_size(const psdl_dbpf *p, size_t i, size_t *usize, psdl_error *err);

/** Entry i's contents (decompressed when the DIR lists it) into dst. Error offsets are
 *  package offsets. */
psdl_status psdl_dbpf_extract(const psdl_dbpf *p, size_t i, void *dst, size_t cap, size_t *written,
                              psdl_error *err);

/** Size of the package psdl_dbpf_rebuild writes when entry i's record becomes record_size
 *  bytes (compressed or not). 0 when it would not fit the format's 32-bit fields. */
size_t psdl_dbpf_rebuild_size(const psdl_dbpf *p, size_t i, size_t record_size, int compressed);

/** Write the package with entry i's record replaced by record (record_size bytes; a QFS
 *  record of usize uncompressed bytes when compressed, raw contents otherwise) into dst.
 *  See "DBPF 1.x" above for what is kept. Errors: bad_index (i), invalid (cap too small,
 *  sizes over 32 bits). */
psdl_status psdl_dbpf_rebuild(const psdl_dbpf *p, size_t i, const void *record, size_t record_size,
                              int compressed, uint32_t usize, void *dst, size_t cap, size_t *written,
                              psdl_error *err);

/* ---------------------------------------------------------------- heightmap rasters */

/* width * height accepted when decoding a heightmap: 4,194,304 (2048 x 2048), 64 times the
 * 257 x 257 points of a large Sims 2 hood. Checked from the header, before any pixel is
 * decoded or any buffer for them allocated. */
#define PSDL_RASTER_MAX_PIXELS (1u << 22)
#define PSDL_RASTER_TEXT_KEY "psdlkit:heightmap"

typedef struct psdl_raster {
    uint32_t width, height; /* columns (x, fast index), rows (z, slow index) */
    uint32_t maxval;        /* 255 or 65535 for PNG; 1..65535 for PGM */
    uint16_t *samples;      /* width * height, row-major, top row first */
    const char *text;       /* psdlkit metadata value, NUL-terminated, or NULL */
    void *arena_;           /* private (NULL for a raster built by the caller) */
} psdl_raster;

/** Decode a PNG heightmap. The chunk list is walked first: a chunk running past the end is
 *  truncated, a chunk other than IDAT over 1 MiB is bad_count (before libpng allocates it).
 *  Errors: bad_magic (not a PNG, or not grayscale: the message names the colour type),
 *  bad_count (over PSDL_RASTER_MAX_PIXELS), truncated or invalid (libpng's message), nomem. */
psdl_status psdl_png_decode(const psdl_options *opt, const void *data, size_t size, psdl_raster **out,
                            psdl_error *err);

/** Decode a binary PGM (P5). Errors: bad_magic (not P5), bad_count (size 0 or over the
 *  limit, maxval 0 or over 65535), truncated, trailing_bytes, nomem. */
psdl_status psdl_pgm_decode(const psdl_options *opt, const void *data, size_t size, psdl_raster **out,
                            psdl_error *err);

/** Frees a decoded raster. NULL-safe. */
void psdl_raster_free(psdl_raster *r);

/** Encode r as a grayscale PNG (8-bit when maxval == 255, 16-bit when maxval == 65535),
 *  with r->text as a tEXt chunk. *out is allocated through opt (NULL: malloc) and released
 *  with psdl_buffer_free(opt, *out, *out_size). Errors: invalid (maxval, sizes, a sample
 *  over maxval), nomem. */
psdl_status psdl_png_encode(const psdl_options *opt, const psdl_raster *r, void **out, size_t *out_size,
                            psdl_error *err);

/** Release a buffer returned by psdl_png_encode. NULL-safe. */
void psdl_buffer_free(const psdl_options *opt, void *p, size_t size);

/** Bytes psdl_pgm_encode writes, or 0 when r cannot be encoded. */
size_t psdl_pgm_encoded_size(const psdl_raster *r);

/** Encode r as a binary PGM (P5; 16-bit big-endian when maxval > 255), with r->text as a
 *  "# psdlkit:heightmap" comment line. Errors: invalid (maxval, sizes, a sample over
 *  maxval, a newline in text), cap too small. */
psdl_status psdl_pgm_encode(const psdl_raster *r, void *dst, size_t cap, size_t *written, psdl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* PSDL_NHTG_H */
