/* psdl_file.c -- replacing a file safely (POSIX). The one place the core touches the file
 * system; the bindings use it for every write so a failure never leaves a half-written
 * city behind. */
#if defined(__linux__)
#define _GNU_SOURCE /* O_TMPFILE, linkat */
#else
#define _XOPEN_SOURCE 700
#endif
#include "psdl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
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

/* Temporary files are named "<target>.tmp-<pid>-<6 random characters>", so that a write
 * killed between creating and renaming its file (kill -9, power loss) leaves a name the
 * next write of the same target recognises: a temporary file whose process is gone is
 * removed (remove_stale_temps). Older psdlkit versions used "<target>.tmp-XXXXXX"; those
 * are removed when they are more than an hour old. */

/* The folder part of path into dir (with a trailing '/', or "" for the current folder) and
 * a pointer to the base name. */
static const char *split_path(const char *path, char *dir, size_t dir_size) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    if (n >= dir_size) n = dir_size - 1;
    memcpy(dir, path, n);
    dir[n] = 0;
    return slash ? slash + 1 : path;
}

static int all_chars(const char *s, size_t n, const char *set) {
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i])) return 0;
    return 1;
}

#define TEMP_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

static void remove_stale_temps(const char *target) {
    char dir[PATH_MAX];
    const char *base = split_path(target, dir, sizeof dir);
    size_t blen = strlen(base);
    DIR *d = opendir(dir[0] ? dir : ".");
    if (!d) return;
    struct dirent *ent;
    time_t now = time(NULL);
    while ((ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        if (strncmp(name, base, blen) != 0 || strncmp(name + blen, ".tmp-", 5) != 0) continue;
        const char *rest = name + blen + 5;
        size_t rlen = strlen(rest);
        char full[PATH_MAX + 64];
        if (snprintf(full, sizeof full, "%s%s", dir, name) >= (int)sizeof full) continue;
        struct stat st;
        if (lstat(full, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        const char *dash = strchr(rest, '-');
        if (dash && dash > rest && all_chars(rest, (size_t)(dash - rest), "0123456789") &&
            strlen(dash + 1) == 6 && all_chars(dash + 1, 6, TEMP_CHARS)) {
            long pid = strtol(rest, NULL, 10);
            if (pid > 0 && pid <= (long)INT_MAX && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
                unlink(full);
        } else if (rlen == 6 && all_chars(rest, 6, TEMP_CHARS) && now - st.st_mtime > 3600) {
            unlink(full);
        }
    }
    closedir(d);
}

/* The failure to create the temporary file beside target (errno e): the folder's own
 * problem when it is missing, otherwise both names, so that a folder refusing new files
 * (/proc, a read-only mount) is not mistaken for a missing target (the long temporary name
 * last, as the message is capped). The target is untouched. */
static psdl_status temp_fail(psdl_error *err, const char *path, const char *target, int exists, int e) {
    char dir[PATH_MAX];
    struct stat st;
    split_path(target, dir, sizeof dir);
    if (stat(dir[0] ? dir : ".", &st) != 0) return io_fail(err, path, e);
    psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "%s", path);
    /* written whole here: psdl_fail keeps 160 characters of detail */
    if (err)
        snprintf(err->message, sizeof err->message,
                 "psdl: io: %s: %s: the temporary file beside it cannot be created (%s: its "
                 "folder takes no new files): %s.tmp-%ld-XXXXXX",
                 path, exists ? "left untouched" : "not written", strerror(e), target, (long)getpid());
    return PSDL_E_IO;
}

/* A named temporary file "<target>.tmp-<pid>-XXXXXX" (mkstemp); its name goes to tmp. */
static int open_named(const char *target, char *tmp) {
    sprintf(tmp, "%s.tmp-%ld-XXXXXX", target, (long)getpid());
    return mkstemp(tmp);
}

/* An unnamed file in the target's folder (Linux O_TMPFILE): a write killed before the
 * rename leaves nothing on disk. -1 where the system or file system lacks it. */
static int open_unnamed(const char *target, mode_t mode) {
#if defined(O_TMPFILE)
    char dir[PATH_MAX];
    split_path(target, dir, sizeof dir);
    return open(dir[0] ? dir : ".", O_TMPFILE | O_WRONLY, mode);
#else
    (void)target;
    (void)mode;
    return -1;
#endif
}

/* Link the unnamed file fd under a fresh temporary name (written to tmp). 0 or -1. */
static int link_unnamed(int fd, const char *target, char *tmp) {
#if defined(O_TMPFILE)
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    for (int attempt = 0; attempt < 16; attempt++) {
        sprintf(tmp, "%s.tmp-%ld-", target, (long)getpid());
        size_t n = strlen(tmp);
        unsigned long r = (unsigned long)rand() ^ ((unsigned long)time(NULL) * 2654435761u) ^
                          ((unsigned long)attempt * 40503u) ^ (unsigned long)clock();
        for (int i = 0; i < 6; i++) {
            tmp[n + (size_t)i] = TEMP_CHARS[r % 62];
            r = r / 62 + (unsigned long)(i + 1) * 7919u;
        }
        tmp[n + 6] = 0;
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) return 0;
        if (errno != EEXIST) return -1;
    }
    return -1;
#else
    (void)fd;
    (void)target;
    (void)tmp;
    return -1;
#endif
}

/* Writes the bytes to fd, sets its mode and syncs it (EINVAL from fsync: a file system that
 * cannot sync, accepted): 0, or the errno of the step that failed. */
static int fill_file(int fd, const void *data, size_t size, mode_t mode) {
    if (write_all(fd, data, size) != 0) return errno;
    if (fchmod(fd, mode) != 0) return errno;
    if (fsync(fd) != 0 && errno != EINVAL) return errno;
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
    if (len + 48 > PATH_MAX) return io_fail(err, path, ENAMETOOLONG);
    remove_stale_temps(target);
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    char tmp[PATH_MAX + 48];
    int named = 0; /* whether tmp names a file on disk that must go on failure */
    int e = 0;
    int fd = open_unnamed(target, mode);
    if (fd < 0) {
        fd = open_named(target, tmp);
        if (fd < 0) return temp_fail(err, path, target, exists, errno);
        named = 1;
    }
    e = fill_file(fd, data, size, mode);
    if (!e && !named) {
        /* give the unnamed file a temporary name (it exists on disk only from here to the
         * rename), or fall back to a named temporary file when linking is not possible */
        if (link_unnamed(fd, target, tmp) == 0) {
            named = 1;
        } else {
            close(fd);
            fd = open_named(target, tmp);
            if (fd < 0) return temp_fail(err, path, target, exists, errno);
            named = 1;
            e = fill_file(fd, data, size, mode);
        }
    }
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, target) != 0) e = errno;
    if (e) {
        if (named) unlink(tmp);
        return io_fail(err, path, e);
    }
    return PSDL_OK;
}

/* First block for a stream whose size fstat does not tell (a pipe, a device). */
#define READ_FIRST_BLOCK ((size_t)64u * 1024u)

psdl_status psdl_read_stream(FILE *f, const char *path, const psdl_options *opt, psdl_bytes *out, psdl_error *err) {
    psdl_alloc al = psdl_alloc_of(opt);
    out->data = NULL;
    out->size = out->capacity = 0;
    if (!path) path = "(stream)";
    size_t want = READ_FIRST_BLOCK;
    struct stat st;
    int fd = fileno(f);
    if (fd >= 0 && fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return io_fail(err, path, EISDIR);
        /* one byte more than the file, so that the read that finds its end needs no block */
        if (S_ISREG(st.st_mode) && st.st_size >= 0 && (uintmax_t)st.st_size < (uintmax_t)SIZE_MAX)
            want = (size_t)st.st_size + 1;
    }
    for (;;) {
        if (out->size == out->capacity) {
            size_t cap = out->capacity ? out->capacity * 2 : want;
            if (cap <= out->capacity) goto nomem; /* size_t overflow */
            char *p = al.realloc(al.ud, out->data, out->capacity, cap);
            if (!p) goto nomem;
            out->data = p;
            out->capacity = cap;
        }
        size_t room = out->capacity - out->size;
        errno = 0;
        size_t n = fread(out->data + out->size, 1, room, f);
        out->size += n;
        if (n < room) { /* the end of the stream, or an error */
            if (feof(f) && !ferror(f)) return PSDL_OK;
            int e = ferror(f) && errno ? errno : EIO;
            psdl_bytes_free(opt, out);
            return io_fail(err, path, e);
        }
    }
nomem:
    {
        size_t had = out->size;
        psdl_bytes_free(opt, out);
        return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "%s: no memory for more than %zu bytes of the file", path,
                         had);
    }
}

void psdl_bytes_free(const psdl_options *opt, psdl_bytes *b) {
    if (!b) return;
    if (b->data) {
        psdl_alloc al = psdl_alloc_of(opt);
        al.realloc(al.ud, b->data, b->capacity, 0);
    }
    b->data = NULL;
    b->size = b->capacity = 0;
}

psdl_status psdl_real_path(const char *path, char *out, size_t out_size, psdl_error *err) {
    char resolved[PATH_MAX];
    if (!realpath(path, resolved)) return io_fail(err, path, errno);
    size_t n = strlen(resolved);
    if (n + 1 > out_size) return io_fail(err, path, ENAMETOOLONG);
    memcpy(out, resolved, n + 1);
    return PSDL_OK;
}

psdl_status psdl_check_output(const char *path, psdl_error *err) {
    struct stat st;
    if (!path || !*path) return psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "an empty file name");
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "%s: a folder, not a file", path);
        if (!S_ISREG(st.st_mode)) return PSDL_OK; /* a device or pipe is written directly */
    } else if (errno != ENOENT) {
        return io_fail(err, path, errno);
    }
    /* the folder must exist and take new files (the temporary file of the atomic write) */
    char dir[PATH_MAX];
    split_path(path, dir, sizeof dir);
    size_t dn = strlen(dir);
    while (dn > 1 && dir[dn - 1] == '/') dir[--dn] = 0; /* "a/b/" -> "a/b", "/" stays */
    if (!dir[0]) snprintf(dir, sizeof dir, ".");
    if (stat(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "%s: the folder %s does not exist", path, dir);
        return io_fail(err, dir, e);
    }
    if (!S_ISDIR(st.st_mode)) return psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "%s: %s is not a folder", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return psdl_fail(err, PSDL_E_IO, 0, 0, -1, -1, "%s: cannot write in the folder %s (%s)", path, dir,
                         strerror(errno));
    return PSDL_OK;
}
