/* test_util.h -- shared by tests/c/test_codec.c, test_companion.c and fuzz_decode.c: a
 * counting allocator (psdl_alloc shape) that records the largest single request and the
 * live and peak bytes, can fail on demand, and the allocation bound the decoder promises;
 * the crashers folder of a test program. Header-only (static functions); no Lua. */
#ifndef PSDL_TEST_UTIL_H
#define PSDL_TEST_UTIL_H

#include "psdl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct count_alloc {
    size_t live;       /* bytes currently allocated */
    size_t peak;       /* largest value live reached */
    size_t max_single; /* largest single request */
    size_t calls;      /* allocation requests (nsize > 0) */
    long fail_at;      /* fail the request with this 0-based number; -1 = never */
} count_alloc;

static void count_alloc_reset(count_alloc *c) {
    c->live = c->peak = c->max_single = c->calls = 0;
    c->fail_at = -1;
}

static void *count_realloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    count_alloc *c = (count_alloc *)ud;
    if (nsize == 0) {
        if (ptr) c->live -= osize;
        free(ptr);
        return NULL;
    }
    if (c->fail_at >= 0 && c->calls == (size_t)c->fail_at) {
        c->calls++;
        return NULL;
    }
    c->calls++;
    if (nsize > c->max_single) c->max_single = nsize;
    void *p = realloc(ptr, nsize);
    if (!p) return NULL;
    if (ptr) c->live -= osize;
    c->live += nsize;
    if (c->live > c->peak) c->peak = c->live;
    return p;
}

/* Options that route the document's memory through c. */
static psdl_options count_options(count_alloc *c) {
    psdl_options o;
    o.alloc.realloc = count_realloc;
    o.alloc.ud = c;
    o.limits.max_vertices = o.limits.max_rooms = o.limits.max_attr_words = 0;
    return o;
}

/* psdl_decode of the size bytes at data with the document's memory counted in *c (reset
 * first); the document (NULL on failure) in *doc. */
static inline psdl_status decode_counted(count_alloc *c, const void *data, size_t size, psdl_doc **doc, psdl_error *err) {
    count_alloc_reset(c);
    psdl_options opt = count_options(c);
    *doc = NULL;
    return psdl_decode(&opt, data, size, doc, err);
}

/* No single allocation may exceed what the input can justify: one arena chunk (64 KiB plus
 * its header) or 16 bytes per input byte, whichever is larger. */
static size_t alloc_bound(size_t input_size) {
    size_t chunk = 64u * 1024u + 64u, scaled = 16u * input_size;
    return chunk > scaled ? chunk : scaled;
}

/* The folder of inputs that once crashed a decoder into buf: argv[2] when given, else
 * tests/c/crashers (the folder beside this file). */
static inline void crashers_dir(int argc, char **argv, char *buf, size_t size) {
    if (argc > 2) {
        snprintf(buf, size, "%s", argv[2]);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        if (slash)
            snprintf(buf, size, "%.*s/crashers", (int)(slash - __FILE__), __FILE__);
        else
            snprintf(buf, size, "tests/c/crashers");
    }
}

#endif
