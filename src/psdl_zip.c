/*
 * psdl_zip.c -- zip archives in memory on libzip (psdl_zip.h, companion-formats.md §8.2).
 *
 * Why libzip meets §8.2: it writes to a seekable buffer, so it patches sizes and CRCs into
 * the local headers instead of using data descriptors (flag bit 3); with sizes known up
 * front (buffer sources) it writes no ZIP64 records or fields; the extra fields it keeps per
 * entry are deleted here (zip_file_extra_field_delete with ZIP_EXTRA_FIELD_ALL, local and central) and it adds none
 * of its own for plain ASCII names; no archive comment is set. The DOS time is set per entry
 * (zip_file_set_dostime) so archives are reproducible. spec/package_spec.lua reads every
 * archive back with python3's zipfile and checks the raw headers.
 */
#include "psdl_zip.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int psdl_zip_build(const psdl_zip_file *files, size_t n, int level, uint16_t dostime, uint16_t dosdate,
                   void **out, size_t *out_size, char *err, size_t errlen) {
    zip_error_t ze;
    zip_error_init(&ze);
    *out = NULL;
    *out_size = 0;
    if (n > 65535) {
        set_err(err, errlen, "%zu files: a zip without ZIP64 holds at most 65535", n);
        return -1;
    }
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    if (!src) {
        set_err(err, errlen, "zip: %s", zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return -1;
    }
    zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    if (!za) {
        set_err(err, errlen, "zip: %s", zip_error_strerror(&ze));
        zip_source_free(src);
        zip_error_fini(&ze);
        return -1;
    }
    zip_source_keep(src); /* read the archive back after zip_close */
    for (size_t i = 0; i < n; i++) {
        zip_source_t *fs = zip_source_buffer(za, files[i].data, files[i].size, 0);
        zip_int64_t idx = fs ? zip_file_add(za, files[i].name, fs, ZIP_FL_ENC_UTF_8) : -1;
        if (idx < 0) {
            set_err(err, errlen, "zip: %s: %s", files[i].name, zip_strerror(za));
            if (fs) zip_source_free(fs);
            goto fail;
        }
        zip_int32_t method = (level > 0 && files[i].size > 0) ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
        if (zip_set_file_compression(za, (zip_uint64_t)idx, method, (zip_uint32_t)(level > 0 ? level : 0)) != 0 ||
            zip_file_set_dostime(za, (zip_uint64_t)idx, dostime, dosdate, 0) != 0 ||
            zip_file_extra_field_delete(za, (zip_uint64_t)idx, ZIP_EXTRA_FIELD_ALL,
                                         ZIP_FL_CENTRAL | ZIP_FL_LOCAL) != 0 ||
            zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0, ZIP_OPSYS_DOS, 0) != 0) {
            set_err(err, errlen, "zip: %s: %s", files[i].name, zip_strerror(za));
            goto fail;
        }
    }
    if (zip_close(za) != 0) {
        set_err(err, errlen, "zip: %s", zip_strerror(za));
        zip_discard(za);
        zip_source_free(src);
        zip_error_fini(&ze);
        return -1;
    }
    zip_stat_t st;
    if (zip_source_open(src) != 0 || zip_source_stat(src, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
        set_err(err, errlen, "zip: cannot read the archive back");
        zip_source_free(src);
        zip_error_fini(&ze);
        return -1;
    }
    void *buf = malloc(st.size ? st.size : 1);
    if (!buf || zip_source_read(src, buf, st.size) != (zip_int64_t)st.size) {
        set_err(err, errlen, buf ? "zip: cannot read the archive back" : "not enough memory");
        free(buf);
        zip_source_close(src);
        zip_source_free(src);
        zip_error_fini(&ze);
        return -1;
    }
    zip_source_close(src);
    zip_source_free(src);
    zip_error_fini(&ze);
    *out = buf;
    *out_size = (size_t)st.size;
    return 0;
fail:
    zip_discard(za);
    zip_source_free(src);
    zip_error_fini(&ze);
    return -1;
}

void psdl_zip_entries_free(psdl_zip_entry *entries, size_t n) {
    if (!entries) return;
    for (size_t i = 0; i < n; i++) {
        free(entries[i].name);
        free(entries[i].data);
    }
    free(entries);
}

int psdl_zip_read(const void *buf, size_t size, size_t max_total, psdl_zip_entry **entries, size_t *n,
                  char *err, size_t errlen) {
    zip_error_t ze;
    zip_error_init(&ze);
    *entries = NULL;
    *n = 0;
    zip_source_t *src = zip_source_buffer_create(buf, size, 0, &ze);
    if (!src) {
        set_err(err, errlen, "zip: %s", zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return -1;
    }
    zip_t *za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
    if (!za) {
        set_err(err, errlen, "not a zip archive (%s)", zip_error_strerror(&ze));
        zip_source_free(src);
        zip_error_fini(&ze);
        return -1;
    }
    zip_int64_t count = zip_get_num_entries(za, 0);
    psdl_zip_entry *es = calloc(count > 0 ? (size_t)count : 1, sizeof *es);
    size_t total = 0;
    if (!es) {
        set_err(err, errlen, "not enough memory");
        goto fail;
    }
    for (zip_int64_t i = 0; i < count; i++) {
        zip_stat_t st;
        const char *name = zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        if (!name || zip_stat_index(za, (zip_uint64_t)i, ZIP_FL_ENC_RAW, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
            set_err(err, errlen, "entry %lld: %s", (long long)i + 1, zip_strerror(za));
            goto fail;
        }
        if (st.size > max_total - total) {
            set_err(err, errlen, "%s: the archive unpacks to more than %zu bytes", name, max_total);
            goto fail;
        }
        es[i].name = strdup(name);
        es[i].data = malloc(st.size ? st.size : 1);
        *n = (size_t)i + 1;
        if (!es[i].name || !es[i].data) {
            set_err(err, errlen, "not enough memory");
            goto fail;
        }
        zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
        if (!zf) {
            set_err(err, errlen, "%s: %s", name, zip_strerror(za));
            goto fail;
        }
        zip_int64_t got = zip_fread(zf, es[i].data, st.size);
        /* one more read: libzip checks the CRC at the end of the data */
        unsigned char extra;
        zip_int64_t more = got == (zip_int64_t)st.size ? zip_fread(zf, &extra, 1) : 0;
        if (got != (zip_int64_t)st.size || more != 0) {
            set_err(err, errlen, "%s: %s", name, got < 0 || more < 0 ? zip_file_strerror(zf) : "size mismatch");
            zip_fclose(zf);
            goto fail;
        }
        zip_fclose(zf);
        es[i].size = (size_t)st.size;
        total += (size_t)st.size;
    }
    zip_discard(za);
    zip_error_fini(&ze);
    *entries = es;
    *n = (size_t)count;
    return 0;
fail:
    psdl_zip_entries_free(es, *n);
    *n = 0;
    zip_discard(za);
    zip_error_fini(&ze);
    return -1;
}
