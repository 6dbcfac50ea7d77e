/* psdl_file.c -- replacing a file safely (POSIX). The one place the core touches the file
 * system; the bindings use it for every write so a failure never leaves a half-written
 * city behind. */
#define _XOPEN_SOURCE 700
#include "psdl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static psdl_status io_fail(psdl_error *err, const char *path, int e) {
    return psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "%s: %s", path, strerror(e));
}

static int write_all(int fd, const void *data, size_t size) {
    const char *p = data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

psdl_status psdl_write_file(const char *path, const void *data, size_t size, psdl_error *err) {
    struct stat st;
    char resolved[PATH_MAX];
    const char *target = path;
    int exists = 0;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            /* write through the link: replace the file it names, keep the link */
            if (!realpath(path, resolved)) return io_fail(err, path, errno);
            target = resolved;
            if (stat(target, &st) != 0) return io_fail(err, path, errno);
        }
        exists = 1;
        if (S_ISDIR(st.st_mode)) return io_fail(err, path, EISDIR);
        if (!S_ISREG(st.st_mode)) {
            /* a device or pipe (/dev/stdout, a FIFO): write straight into it */
            int fd = open(target, O_WRONLY | O_TRUNC);
            if (fd < 0) return io_fail(err, path, errno);
            if (write_all(fd, data, size) != 0) {
                int e = errno;
                close(fd);
                return io_fail(err, path, e);
            }
            if (close(fd) != 0) return io_fail(err, path, errno);
            return PSDL_OK;
        }
    } else if (errno != ENOENT) {
        return io_fail(err, path, errno);
    }
    size_t len = strlen(target);
    if (len + 16 > PATH_MAX) return io_fail(err, path, ENAMETOOLONG);
    char tmp[PATH_MAX + 16];
    memcpy(tmp, target, len);
    memcpy(tmp + len, ".tmp-XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) return io_fail(err, path, errno);
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    int e = 0;
    if (write_all(fd, data, size) != 0) e = errno;
    if (!e && fchmod(fd, mode) != 0) e = errno;
    if (!e && fsync(fd) != 0 && errno != EINVAL) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, target) != 0) e = errno;
    if (e) {
        unlink(tmp);
        return io_fail(err, path, e);
    }
    return PSDL_OK;
}
