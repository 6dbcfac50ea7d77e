/* fuzz_companion.c -- libFuzzer targets for the companion decoders (src/psdl_companion.h).
 * Built once per format with -DFUZZ_FORMAT=<bai|cpvs|inst|pathset|pkg|tex> as
 * psdl_fuzz_<format> (CMakeLists.txt, PSDL_FUZZ=ON; see tests/c/README.md).
 *
 * For every input: decode through a counting allocator; abort() if a single allocation
 * exceeded what the input can justify (alloc_bound), if a failing decode returned a
 * document, a status that differs from its error record, a message without the
 * "<format>: " prefix or an offset past the input, or left memory allocated; on success
 * abort() unless the document encodes to exactly the input (measured size and bytes) and
 * freeing it releases everything. Memory errors and undefined behaviour are the sanitizers'. */
#include "psdl_companion.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_FORMAT
#error "define FUZZ_FORMAT (bai, cpvs, inst, pathset, pkg or tex)"
#endif
#define CAT2(a, b) a##b
#define CAT3(a, b, c) a##b##c
#define XCAT3(a, b, c) CAT3(a, b, c)
#define STR2(x) #x
#define STR(x) STR2(x)
#define DOC_T XCAT3(psdl_, FUZZ_FORMAT, )
#define DECODE XCAT3(psdl_, FUZZ_FORMAT, _decode)
#define ENCODE XCAT3(psdl_, FUZZ_FORMAT, _encode)
#define FREE XCAT3(psdl_, FUZZ_FORMAT, _free)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, size_t size) {
    fprintf(stderr, "fuzz_%s: %s (input of %zu bytes)\n", STR(FUZZ_FORMAT), what, size);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_alloc al = {count_realloc, &ca};
    DOC_T *doc = NULL;
    psdl_cerror err;
    psdl_status st = DECODE(&al, data, size, &doc, &err);
    if (ca.max_single > alloc_bound(size)) {
        fprintf(stderr, "largest allocation %zu bytes\n", ca.max_single);
        fail("allocation larger than the input justifies", size);
    }
    if (st != PSDL_OK) {
        size_t fl = strlen(STR(FUZZ_FORMAT));
        if (doc != NULL) fail("failed decode returned a document", size);
        if (err.code != st || strncmp(err.message, STR(FUZZ_FORMAT), fl) != 0 || err.message[fl] != ':' ||
            err.offset > size)
            fail("failed decode with a bad error record", size);
        if (ca.live != 0) fail("failed decode leaked memory", size);
        return 0;
    }
    size_t need = 0, written = 0;
    if (ENCODE(doc, NULL, 0, &need, &err) != PSDL_OK) fail(err.message, size);
    if (need != size) fail("measured size differs from the input size", size);
    unsigned char *out = malloc(need ? need : 1);
    if (!out) abort();
    if (ENCODE(doc, out, need, &written, &err) != PSDL_OK) fail(err.message, size);
    if (written != size || memcmp(out, data, size) != 0) fail("re-encoded bytes differ from the input", size);
    free(out);
    FREE(doc);
    if (ca.live != 0) fail("free left memory allocated", size);
    (void)count_options;
    return 0;
}
