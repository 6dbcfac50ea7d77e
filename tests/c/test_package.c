/* test_package.c -- the C parts of `psdl package` under ASan/UBSan: the visibility caster
 * (src/psdl_visibility.c) and the zip container (src/psdl_zip.c). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "psdl_visibility.h"
#include "psdl_zip.h"

static size_t add_quad(float *t, uint32_t *room, size_t n, float x0, float x1, float z0, float z1, float y,
                       uint32_t r) {
    float a[18] = {x0, y, z0, x1, y, z0, x1, y, z1, x0, y, z0, x1, y, z1, x0, y, z1};
    memcpy(t + 9 * n, a, sizeof a);
    room[n] = room[n + 1] = r;
    return n + 2;
}

static size_t add_wall(float *t, uint32_t *room, size_t n, float x, float h, uint32_t r) {
    float a[18] = {x, -1, -500, x, h, -500, x, h, 500, x, -1, -500, x, h, 500, x, -1, 500};
    memcpy(t + 9 * n, a, sizeof a);
    room[n] = room[n + 1] = r;
    return n + 2;
}

static int bit(const uint8_t *row, uint32_t t) { return (row[t >> 3] >> (t & 7)) & 1; }

static void test_visibility(void) {
    set_ctx("visibility");
    float tris[9 * 16];
    uint32_t rooms[16];
    size_t n = 0;
    n = add_quad(tris, rooms, n, 0, 10, 0, 10, 0, 1);
    n = add_quad(tris, rooms, n, 10, 20, 0, 10, 0, 2);
    n = add_quad(tris, rooms, n, 300, 310, 0, 10, 0, 3);
    psdl_vis_opts o = {.range = 1000.0, .rays = 2000, .eyes = 8, .targeted = 8, .seed = 3, .threads = 2};
    psdl_vis *v = psdl_vis_new(tris, rooms, n, 4, NULL);
    CHECK(v != NULL);
    CHECK_EQ(psdl_vis_triangles(v), 6);
    uint8_t out[3];
    CHECK_EQ(psdl_vis_rows(v, 1, 3, &o, out), 0);
    CHECK(bit(out, 1) && bit(out, 2) && bit(out, 3));
    /* bad ranges are refused */
    CHECK_EQ(psdl_vis_rows(v, 0, 1, &o, out), -1);
    CHECK_EQ(psdl_vis_rows(v, 2, 4, &o, out), -1);
    psdl_vis_free(v);

    /* a wall between rooms 2 and 3 hides room 3 from room 1 */
    n = add_wall(tris, rooms, n, 150, 100, 0);
    /* a non-finite triangle is dropped */
    float nan = NAN;
    for (int k = 0; k < 9; k++) tris[9 * n + k] = k == 4 ? nan : 1.0f;
    rooms[n++] = 2;
    v = psdl_vis_new(tris, rooms, n, 4, NULL);
    CHECK_EQ(psdl_vis_triangles(v), 8);
    uint8_t a[3], b[3];
    CHECK_EQ(psdl_vis_rows(v, 1, 3, &o, a), 0);
    CHECK(bit(a, 1) && bit(a, 2) && !bit(a, 3) && bit(a, 0));
    CHECK(bit(a + 2, 3) && !bit(a + 2, 1));
    /* one thread gives the same rows */
    psdl_vis_opts o1 = o;
    o1.threads = 1;
    CHECK_EQ(psdl_vis_rows(v, 1, 3, &o1, b), 0);
    CHECK(memcmp(a, b, 3) == 0);
    psdl_vis_free(v);

    /* the flood: rooms 1-3 side by side, neighbours 1-2 and 2-3, a wall at x = 150 before
     * room 4 (x 300); no aimed rays, one random ray: the flood reaches 2 and 3, not 4 */
    {
        float ft[9 * 16];
        uint32_t fr[16];
        size_t fn = 0;
        fn = add_quad(ft, fr, fn, 0, 10, 0, 10, 0, 1);
        fn = add_quad(ft, fr, fn, 10, 20, 0, 10, 0, 2);
        fn = add_quad(ft, fr, fn, 20, 30, 0, 10, 0, 3);
        fn = add_quad(ft, fr, fn, 300, 310, 0, 10, 0, 4);
        fn = add_wall(ft, fr, fn, 150, 100, 0);
        psdl_vis *fv = psdl_vis_new(ft, fr, fn, 5, NULL);
        CHECK(fv != NULL);
        /* skipped: room 0, an id >= R, a room paired with itself */
        const uint32_t pairs[] = {1, 2, 3, 2, 0, 4, 3, 9, 4, 4, 3, 4};
        CHECK_EQ(psdl_vis_set_neighbours(fv, pairs, 6), 0);
        psdl_vis_opts fo = {.range = 1000.0, .rays = 1, .eyes = 4, .targeted = 0, .frontier = 8, .seed = 5, .threads = 2};
        uint8_t f1[4], f2[4];
        CHECK_EQ(psdl_vis_rows(fv, 1, 4, &fo, f1), 0);
        CHECK(bit(f1, 2) && bit(f1, 3) && !bit(f1, 4));
        fo.threads = 1;
        CHECK_EQ(psdl_vis_rows(fv, 1, 4, &fo, f2), 0);
        CHECK(memcmp(f1, f2, 4) == 0);
        /* eyes at random heights sample differently but still see the open ground */
        fo.random_height = 1;
        CHECK_EQ(psdl_vis_rows(fv, 1, 4, &fo, f2), 0);
        CHECK(bit(f2, 2) && bit(f2, 3) && !bit(f2, 4));
        psdl_vis_free(fv);
        CHECK_EQ(psdl_vis_set_neighbours(NULL, pairs, 1), -1);
    }

    /* an empty world and a room without triangles */
    v = psdl_vis_new(tris, rooms, 0, 4, NULL);
    CHECK(v != NULL);
    CHECK_EQ(psdl_vis_rows(v, 1, 3, &o, a), 0);
    CHECK(a[0] == 0 && a[1] == 0 && a[2] == 0);
    psdl_vis_free(v);
    psdl_vis_free(NULL);
    /* triangles naming rooms beyond R count as room 0 */
    uint32_t bad[2] = {99, 99};
    v = psdl_vis_new(tris, bad, 2, 4, NULL);
    CHECK(v != NULL);
    psdl_vis_free(v);
}

static void test_zip(void) {
    set_ctx("zip");
    const char big[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    psdl_zip_file files[3] = {{"city/a.txt", big, sizeof big - 1}, {"tune/b.cinfo", "x\r\n", 3}, {"e.bin", "", 0}};
    void *zip = NULL;
    size_t size = 0;
    char err[256];
    CHECK_EQ(psdl_zip_build(files, 3, 9, 0, (20 << 9) | (1 << 5) | 1, &zip, &size, err, sizeof err), 0);
    CHECK(size > 22);
    const unsigned char *z = zip;
    CHECK(memcmp(z + size - 22, "PK\5\6", 4) == 0);
    CHECK(z[size - 2] == 0 && z[size - 1] == 0); /* no comment */
    /* every local header: no extra field, no data descriptor flag */
    size_t pos = 0;
    int locals = 0;
    while (pos + 30 <= size && memcmp(z + pos, "PK\3\4", 4) == 0) {
        unsigned flags = z[pos + 6] | (z[pos + 7] << 8);
        unsigned nlen = z[pos + 26] | (z[pos + 27] << 8), xlen = z[pos + 28] | (z[pos + 29] << 8);
        unsigned long csize = z[pos + 18] | (z[pos + 19] << 8) | ((unsigned long)z[pos + 20] << 16) |
                              ((unsigned long)z[pos + 21] << 24);
        CHECK_EQ(xlen, 0);
        CHECK_EQ(flags & 8, 0);
        pos += 30 + nlen + xlen + csize;
        locals++;
    }
    CHECK_EQ(locals, 3);
    psdl_zip_entry *es = NULL;
    size_t ne = 0;
    CHECK_EQ(psdl_zip_read(zip, size, 1 << 20, &es, &ne, err, sizeof err), 0);
    CHECK_EQ(ne, 3);
    if (ne == 3) {
        check_str_impl(es[0].name, "city/a.txt", __FILE__, __LINE__, "name 0");
        CHECK_EQ(es[0].size, sizeof big - 1);
        CHECK(memcmp(es[0].data, big, sizeof big - 1) == 0);
        CHECK_EQ(es[2].size, 0);
    }
    psdl_zip_entries_free(es, ne);
    /* the unpack limit */
    CHECK_EQ(psdl_zip_read(zip, size, 10, &es, &ne, err, sizeof err), -1);
    CHECK(strstr(err, "more than") != NULL);
    /* every truncation fails cleanly */
    for (size_t cut = 0; cut < size; cut += 7) {
        if (psdl_zip_read(zip, cut, 1 << 20, &es, &ne, err, sizeof err) == 0) psdl_zip_entries_free(es, ne);
    }
    /* a flipped data byte fails the CRC check */
    unsigned char *bad = malloc(size);
    memcpy(bad, zip, size);
    bad[30 + 10 + 2] ^= 0x55;
    int r = psdl_zip_read(bad, size, 1 << 20, &es, &ne, err, sizeof err);
    if (r == 0) psdl_zip_entries_free(es, ne);
    CHECK_EQ(r, -1);
    free(bad);
    /* the same files give the same bytes */
    void *zip2 = NULL;
    size_t size2 = 0;
    CHECK_EQ(psdl_zip_build(files, 3, 9, 0, (20 << 9) | (1 << 5) | 1, &zip2, &size2, err, sizeof err), 0);
    CHECK(size2 == size && memcmp(zip, zip2, size) == 0);
    free(zip2);
    free(zip);
    /* stored */
    CHECK_EQ(psdl_zip_build(files, 3, 0, 0, 0x21, &zip, &size, err, sizeof err), 0);
    CHECK(size > (sizeof big - 1) + 3);
    free(zip);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_visibility();
    test_zip();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
