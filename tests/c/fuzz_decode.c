/* fuzz_decode.c -- libFuzzer target for the psdl decoder (see tests/c/README.md).
 *
 * For every input: psdl_decode through a counting allocator. On success: psdl_validate (with a
 * callback that does nothing), psdl_encoded_size, psdl_encode into a malloc'd buffer, and
 * abort() unless the bytes equal the input (decode is lossless). Always: abort() if a single
 * allocation exceeded what the input can justify (alloc_bound in test_util.h), if memory is
 * still allocated after psdl_doc_free, or if a failing decode left no "psdl: " message or an
 * offset past the input. Memory errors and undefined behaviour are the sanitizers' job
 * (built with -fsanitize=fuzzer,address,undefined). */
#include "psdl.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ignore_problem(void *ud, const psdl_problem *p) {
    (void)ud;
    (void)p;
    return 0;
}

static void fail(const char *what, size_t size) {
    fprintf(stderr, "fuzz_decode: %s (input of %zu bytes)\n", what, size);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    count_alloc ca;
    psdl_doc *doc;
    psdl_error err;
    psdl_status st = decode_counted(&ca, data, size, &doc, &err);
    if (ca.max_single > alloc_bound(size)) {
        fprintf(stderr, "largest allocation %zu bytes\n", ca.max_single);
        fail("allocation larger than the input justifies", size);
    }
    if (st != PSDL_OK) {
        if (doc != NULL) fail("failed decode returned a document", size);
        if (err.code != st || strncmp(err.message, "psdl: ", 6) != 0 || err.offset > size)
            fail("failed decode with a bad error record", size);
        if (ca.live != 0) fail("failed decode leaked memory", size);
        return 0;
    }
    psdl_validate_result vr;
    psdl_validate(doc, ignore_problem, NULL, &vr);
    size_t need = psdl_encoded_size(doc);
    if (need != size) fail("psdl_encoded_size differs from the input size", size);
    unsigned char *out = malloc(need ? need : 1);
    if (!out) abort();
    size_t written = 0;
    st = psdl_encode(doc, out, need, &written, &err);
    if (st != PSDL_OK) fail(err.message, size);
    if (written != size || memcmp(out, data, size) != 0) fail("re-encoded bytes differ from the input", size);
    free(out);
    psdl_doc_free(doc);
    if (ca.live != 0) fail("psdl_doc_free left memory allocated", size);
    return 0;
}
