/*
 * psdl_zip.h -- the zip container of an add-on city (`.ar`, companion-formats.md §8.2), on
 * libzip (Debian libzip-dev). No Lua here.
 */
#ifndef PSDL_ZIP_H
#define PSDL_ZIP_H

#include <stddef.h>
#include <stdint.h>

/* One file of an archive. */
typedef struct {
    const char *name; /* archive name, '/' separators */
    const void *data;
    size_t size;
} psdl_zip_file;

/*
 * Build a zip archive in memory that meets the game reader's constraints (§8.2): entries in
 * the given order (the caller sorts them), no archive comment, no extra fields in local or
 * central headers, no data descriptors, no ZIP64, method 8 (deflate, `level` 1-9) or 0
 * (store, level 0; a file that does not shrink is stored too), a fixed DOS time (`dostime`,
 * `dosdate`) so the same files give the same bytes. On success *out (free with free()) and
 * *out_size hold the archive and 0 is returned; otherwise -1 and a message in err.
 */
int psdl_zip_build(const psdl_zip_file *files, size_t n, int level, uint16_t dostime, uint16_t dosdate,
                   void **out, size_t *out_size, char *err, size_t errlen);

/* One entry read back: name and contents (both malloc'd, name NUL-terminated). */
typedef struct {
    char *name;
    unsigned char *data;
    size_t size;
} psdl_zip_entry;

/*
 * Read every entry of a zip archive held in memory (names as stored, raw bytes, contents
 * decompressed and CRC-checked by libzip). On success *entries (free with
 * psdl_zip_entries_free) and *n are set and 0 is returned; otherwise -1 and a message
 * naming the entry in err. max_total bounds the sum of the uncompressed sizes.
 */
int psdl_zip_read(const void *buf, size_t size, size_t max_total, psdl_zip_entry **entries, size_t *n,
                  char *err, size_t errlen);

/* Free what psdl_zip_read returned. */
void psdl_zip_entries_free(psdl_zip_entry *entries, size_t n);

#endif
