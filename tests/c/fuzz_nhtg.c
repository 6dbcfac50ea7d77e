/* fuzz_nhtg.c -- libFuzzer target for the terrain decoders (psdl_nhtg.h; see tests/c/README.md).
 *
 * The first input byte picks the decoder, the rest is its input:
 *   0: psdl_nhtg_decode; on success psdl_nhtg_encode must give the input's exact bytes
 *   1: psdl_dbpf_decode, then psdl_dbpf_extract of every entry (and psdl_nhtg_decode of
 *      NHTG entries), then a rebuild replacing the first entry that is not the DIR
 *   2: psdl_qfs_decompress; on success compress + decompress must give the same bytes
 *   3: psdl_png_decode (then psdl_png_encode + decode give the same samples)
 *   4: psdl_pgm_decode (then psdl_pgm_encode + decode give the same samples)
 * Always, through a counting allocator: nothing left allocated at the end, and failing
 * calls leave a "psdl: " message with an offset within the input. abort() on any
 * violation; memory errors and undefined behaviour are the sanitizers' job. */
#include "psdl_nhtg.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what) {
    fprintf(stderr, "fuzz_nhtg: %s\n", what);
    abort();
}

static void check_err(const psdl_error *err, size_t size) {
    if (strncmp(err->message, "psdl: ", 6) != 0 || err->offset > size) fail("bad error record");
}

static void same_raster(const psdl_raster *a, const psdl_raster *b) {
    if (a->width != b->width || a->height != b->height ||
        memcmp(a->samples, b->samples, (size_t)a->width * a->height * sizeof(uint16_t)) != 0)
        fail("raster changed in a round trip");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned mode = data[0] % 5;
    data++;
    size--;
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    psdl_error err;
    if (mode == 0) {
        psdl_nhtg *t = NULL;
        if (psdl_nhtg_decode(&opt, data, size, &t, &err) != PSDL_OK) {
            check_err(&err, size);
        } else {
            if (psdl_nhtg_encoded_size(t) != size) fail("encoded size differs");
            uint8_t *out = malloc(size);
            if (!out) abort();
            if (psdl_nhtg_encode(t, out, size, NULL, &err) != PSDL_OK || memcmp(out, data, size) != 0)
                fail("NHTG re-encode differs");
            free(out);
        }
        psdl_nhtg_free(t);
    } else if (mode == 1) {
        psdl_dbpf *p = NULL;
        if (psdl_dbpf_decode(&opt, data, size, &p, &err) != PSDL_OK) {
            check_err(&err, size);
        } else {
            for (uint32_t e = 0; e < p->nentries; e++) {
                size_t us;
                if (psdl_dbpf_resource_size(p, e, &us, &err) != PSDL_OK) continue;
                if (us > (1u << 22)) continue;
                uint8_t *o = malloc(us ? us : 1);
                if (!o) abort();
                if (psdl_dbpf_extract(p, e, o, us, NULL, &err) == PSDL_OK && p->entries[e].type == PSDL_NHTG_TYPE) {
                    psdl_nhtg *t = NULL;
                    psdl_nhtg_decode(&opt, o, us, &t, &err);
                    psdl_nhtg_free(t);
                } else if (err.code != PSDL_OK) {
                    check_err(&err, size);
                }
                free(o);
            }
            for (uint32_t e = 0; e < p->nentries; e++) {
                if ((long)e == p->dir) continue;
                static const uint8_t rec[3] = {1, 2, 3};
                size_t need = psdl_dbpf_rebuild_size(p, e, sizeof rec, 0);
                if (need == 0 || need > (1u << 24)) break;
                uint8_t *o = malloc(need);
                if (!o) abort();
                size_t w = 0;
                if (psdl_dbpf_rebuild(p, e, rec, sizeof rec, 0, 3, o, need, &w, &err) == PSDL_OK) {
                    psdl_dbpf *q = NULL;
                    if (w != need || psdl_dbpf_decode(&opt, o, w, &q, &err) != PSDL_OK) fail("rebuilt package unreadable");
                    psdl_dbpf_free(q);
                }
                free(o);
                break;
            }
            psdl_dbpf_free(p);
        }
    } else if (mode == 2) {
        size_t us;
        if (psdl_qfs_size(data, size, &us, &err) == PSDL_OK && us <= (1u << 20)) {
            uint8_t *o = malloc(us ? us : 1);
            if (!o) abort();
            if (psdl_qfs_decompress(data, size, o, us, NULL, &err) == PSDL_OK) {
                size_t bound = psdl_qfs_compress_bound(us), w = 0;
                uint8_t *c = malloc(bound), *back = malloc(us ? us : 1);
                if (!c || !back) abort();
                if (psdl_qfs_compress(&opt, o, us, c, bound, &w, &err) != PSDL_OK) fail("compress failed");
                if (psdl_qfs_decompress(c, w, back, us, NULL, &err) != PSDL_OK || memcmp(back, o, us) != 0)
                    fail("QFS round trip differs");
                free(c);
                free(back);
            } else {
                check_err(&err, size);
            }
            free(o);
        }
    } else {
        psdl_raster *r = NULL;
        psdl_status st = mode == 3 ? psdl_png_decode(&opt, data, size, &r, &err) : psdl_pgm_decode(&opt, data, size, &r, &err);
        if (st != PSDL_OK) {
            if (strncmp(err.message, "psdl: ", 6) != 0) fail("bad error record");
        } else {
            psdl_raster *r2 = NULL;
            if (mode == 3) {
                void *out = NULL;
                size_t on = 0;
                if (psdl_png_encode(&opt, r, &out, &on, &err) != PSDL_OK) fail("PNG re-encode failed");
                if (psdl_png_decode(&opt, out, on, &r2, &err) != PSDL_OK) fail("PNG re-decode failed");
                psdl_buffer_free(&opt, out, on);
            } else if (!r->text || !strpbrk(r->text, "\r\n")) {
                size_t need = psdl_pgm_encoded_size(r);
                uint8_t *out = malloc(need);
                if (!out) abort();
                if (psdl_pgm_encode(r, out, need, NULL, &err) != PSDL_OK) fail("PGM re-encode failed");
                if (psdl_pgm_decode(&opt, out, need, &r2, &err) != PSDL_OK) fail("PGM re-decode failed");
                free(out);
            }
            if (r2) same_raster(r, r2);
            psdl_raster_free(r2);
        }
        psdl_raster_free(r);
    }
    if (ca.live != 0) fail("memory left allocated");
    (void)alloc_bound;
    return 0;
}
