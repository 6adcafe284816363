/* Stale ref lock files of a local store (protocol.md §7 "stale-ref-lock"):
 * listing "<commondir>/refs/<ns>/<x>.lock" and removing one safely — under
 * the store's own lock file (the one serialising deletes, §9), re-checking
 * the file's identity and age just before unlinking it. Filesystem only; the
 * local transport (local.c) wraps these two calls. */
#define _DEFAULT_SOURCE
#include "backend.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void held_message(char *err, size_t errlen, const char *lock, const lease_fs_lock_info *in,
                         long waited_ms);

/* ---- reflease's ref lock (protocol.md §9 "Ref locks and crashed writers") --
 * git's lock is "<ref>.lock" created O_EXCL; its content becomes the ref at
 * the rename. reflease takes the same lock so that git and reflease exclude
 * each other, and adds two things git's lock lacks:
 *   - the lock file is complete from the moment it exists: the content is
 *     written and fsync'd into an owner file "<ref>..owner-<pid>-XXXXXX.lock"
 *     first, and the lock is taken by link()ing it to "<ref>.lock" (atomic,
 *     EEXIST when held). A rename by anyone never publishes a half-written ref.
 *   - the writer holds flock(LOCK_EX) on that file from before the link to
 *     after the rename. The kernel drops it when the writer dies (SIGKILL,
 *     OOM, a cancelled runner) however the process ends; a stopped or
 *     swapped-out writer keeps it. A lock with two links (lock + owner file:
 *     reflease's) whose flock anyone can take has no live writer: a waiter
 *     removes it at once. A lock with one link (git's, or an older reflease's)
 *     proves nothing: it is removed only when unheld and FOREIGN_STALE_S old
 *     by its mtime (git itself waits 100 ms for a ref lock).
 * Before renaming or unlinking "<ref>.lock" a writer checks it is still its
 * own file; when it is not (or the rename fails) the outcome is open and the
 * caller settles it by reading the ref. */
#define FOREIGN_STALE_S 60

/* How long to wait for the store's own lock file, ms. */
#define STORE_LOCK_WAIT_MS 3000

void lease_ref_lock_list_clear(lease_ref_lock_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->count; i++)
		free(l->items[i].refname);
	free(l->items);
	l->items = NULL;
	l->count = 0;
}

static int join(char *out, size_t outlen, const char *dir, const char *rel)
{
	size_t n = strlen(dir);
	int w = snprintf(out, outlen, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", rel);

	return w < 0 || (size_t)w >= outlen ? LEASE_ENOMEM : 0;
}

/* May the writer of the lock file at @p path (listed as @p lk) be alive?
 * Its flock held, or no flock to tell by and younger than FOREIGN_STALE_S.
 * A file gone or replaced since it was listed: its writer finished (0). */
static int lock_live(const char *path, const lease_ref_lock *lk)
{
	lease_fs_lock_info info;

	if (lease__fs_lock_state(path, lk, FOREIGN_STALE_S, 0, &info) != LEASE_FS_LOCK_HELD)
		return 0;
	return info.live || (!info.ours && info.age_s < FOREIGN_STALE_S);
}

int lease__fs_list_ref_locks(lease_ref_lock_list *out, const char *commondir, const char *prefix,
                             char *err, size_t errlen)
{
	char dirpath[4096], path[4096 + 256], refname[1024];
	lease_ref_lock *items = NULL, *grown;
	size_t count = 0, cap = 0, plen = strlen(prefix);
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = join(dirpath, sizeof(dirpath), commondir, prefix)) < 0)
		return rc;
	if (!(d = opendir(dirpath))) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR)
			return 0;
		lease__error_set(err, errlen, "cannot list the ref lock files in %s: %s%s", dirpath,
		                 strerror(e),
		                 e == EACCES || e == EPERM
		                         ? " (the store's directories must be readable "
		                           "by every user of the store)"
		                         : "");
		return lease__fs_errno_class(e);
	}
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		int w;

		if (n <= 5 || strcmp(de->d_name + n - 5, ".lock") != 0)
			continue;
		/* In the common dir itself only the store-wide locks (§7, §9). */
		if (plen == 0 && strcmp(de->d_name, "packed-refs.lock") != 0 &&
		    strcmp(de->d_name, "reflease-delete.lock") != 0)
			continue;
		if (join(path, sizeof(path), dirpath, de->d_name) < 0 || lstat(path, &sb) < 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		w = snprintf(refname, sizeof(refname), "%s%.*s", prefix, (int)(n - 5), de->d_name);
		if (w < 0 || (size_t)w >= sizeof(refname))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 8;
			if (!(grown = realloc(items, cap * sizeof(*items)))) {
				rc = LEASE_ENOMEM;
				break;
			}
			items = grown;
		}
		if (!(items[count].refname = strdup(refname))) {
			rc = LEASE_ENOMEM;
			break;
		}
		items[count].mtime = (int64_t)sb.st_mtime;
		items[count].dev = (uint64_t)sb.st_dev;
		items[count].ino = (uint64_t)sb.st_ino;
		items[count].live = lock_live(path, &items[count]);
		count++;
	}
	closedir(d);
	out->items = items;
	out->count = count;
	if (rc < 0)
		lease_ref_lock_list_clear(out);
	return rc;
}

/* Re-check identity and age just before removing (protocol.md §7); never
 * a lock whose writer is alive (it holds the file's flock, §9). */
static int remove_checked(const char *path, const lease_ref_lock *lk, int64_t min_age_s,
                          int64_t now, char *err, size_t errlen)
{
	lease_fs_lock_info info;
	struct stat sb;
	int r;

	if (lstat(path, &sb) < 0) {
		lease__error_set(err, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? LEASE_ENOTFOUND : LEASE_EINTERNAL;
	}
	if ((uint64_t)sb.st_dev != lk->dev || (uint64_t)sb.st_ino != lk->ino ||
	    now - (int64_t)sb.st_mtime < min_age_s) {
		lease__error_set(err, errlen, "%s changed or is younger than %llds: kept", path,
		                 (long long)min_age_s);
		return LEASE_ECAS;
	}
	/* the age was checked above on the store's clock */
	r = lease__fs_lock_state(path, lk, INT64_MIN, 1, &info);
	if (r == LEASE_FS_LOCK_BROKEN)
		return 0;
	if (r == LEASE_FS_LOCK_GONE) {
		lease__error_set(err, errlen, "%s changed or was removed meanwhile: kept", path);
		return LEASE_ECAS;
	}
	lease__error_set(err, errlen, "%s %s: kept", path,
	                 info.live ? "is held by a live writer (it holds the lock's flock)"
	                           : "could not be looked at");
	return LEASE_ECAS;
}

int lease__fs_remove_ref_lock(const char *commondir, const char *store_lock,
                              const lease_ref_lock *lk, int64_t min_age_s, int64_t now, char *err,
                              size_t errlen)
{
	char path[4096];
	long waited = 0;
	int fd, rc;

	if ((rc = join(path, sizeof(path), commondir, lk->refname)) < 0 ||
	    strlen(path) + 6 > sizeof(path))
		return LEASE_ENOMEM;
	memcpy(path + strlen(path), ".lock", 6);
	/* A stale store lock itself: re-check and remove it without taking it. */
	if (strcmp(path, store_lock) == 0)
		return remove_checked(path, lk, min_age_s, now, err, errlen);
	/* The store's own lock: no other reaper runs while we look at and
	 * remove the file. */
	while ((fd = open(store_lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		if (errno != EEXIST || waited >= STORE_LOCK_WAIT_MS) {
			int e = errno;
			lease__error_set(err, errlen, "cannot take the store lock %s: %s",
			                 store_lock,
			                 e == EEXIST ? "held by another reaper" : strerror(e));
			return e == EEXIST ? LEASE_ELOCKED : lease__fs_errno_class(e);
		}
		lease__sleep_ms(20, LEASE_SLEEP_FULL);
		waited += 20;
	}
	close(fd);
	rc = remove_checked(path, lk, min_age_s, now, err, errlen);
	if (unlink(store_lock) < 0 && rc == 0) {
		lease__error_set(err, errlen, "cannot remove the store lock %s: %s", store_lock,
		                 strerror(errno));
		rc = LEASE_EINTERNAL;
	}
	return rc;
}

/* ---- git's own lock protocol for deletes (protocol.md §9) ----------------
 * git (refs/files-backend.c, refs/packed-backend.c) deletes a ref by locking
 * "<ref>.lock", then "packed-refs.lock", reading packed-refs again while
 * holding that lock, writing the new packed-refs into the lock file and
 * renaming it into place, then unlinking the loose file. libgit2 (1.5 to at
 * least 1.9, refdb_fs.c packed_delete) reloads packed-refs *before* taking
 * packed-refs.lock and writes that copy back: a `git pack-refs` that
 * finished in between is undone. Only the order below is used here. */

int lease__fs_errno_class(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
	case EROFS: return LEASE_EAUTH;
	case ENOSPC:
#ifdef EDQUOT
	case EDQUOT:
#endif
		return LEASE_ECONFIG;
	default: return LEASE_EINTERNAL;
	}
}

const char *lease__fs_errno_hint(int e)
{
	switch (e) {
	case EACCES:
	case EPERM: return " (permission denied: the store must be writable by this user)";
	case EROFS: return " (the store is on a read-only filesystem)";
	case ENOSPC:
#ifdef EDQUOT
	case EDQUOT:
#endif
		return " (the disk is full: free space, then retry)";
	default: return "";
	}
}

int lease__fs_shared_perm(const char *value)
{
	static const char *const yes[] = {"true", "yes", "on"};
	char *end;
	long i;
	size_t k;

	if (!value || !*value || strcasecmp(value, "umask") == 0)
		return 0;
	if (strcasecmp(value, "group") == 0)
		return LEASE_PERM_GROUP;
	if (strcasecmp(value, "all") == 0 || strcasecmp(value, "world") == 0 ||
	    strcasecmp(value, "everybody") == 0)
		return LEASE_PERM_EVERYBODY;
	i = strtol(value, &end, 8);
	if (*end) {
		for (k = 0; k < sizeof(yes) / sizeof(yes[0]); k++)
			if (strcasecmp(value, yes[k]) == 0)
				return LEASE_PERM_GROUP;
		return 0;
	}
	switch (i) {
	case 0: return 0;
	case 1: return LEASE_PERM_GROUP;
	case 2: return LEASE_PERM_EVERYBODY;
	default: break;
	}
	if ((i & 0600) != 0600)
		return 0;
	return -(int)(i & 0666);
}

/* git's calc_shared_perm + adjust_shared_perm (path.c) on a mode. */
static mode_t shared_mode(int shared, mode_t old)
{
	int tweak = shared < 0 ? -shared : shared;
	mode_t m;

	if (!(old & S_IWUSR))
		tweak &= ~0222;
	if (old & S_IXUSR)
		tweak |= (tweak & 0444) >> 2;
	m = shared < 0 ? (old & ~(mode_t)0777) | (mode_t)tweak : old | (mode_t)tweak;
	if (S_ISDIR(old)) {
		m |= (m & 0444) >> 2;
		m |= S_ISGID;
	}
	return m;
}

int lease__fs_adjust_shared_perm(int shared, const char *path)
{
	struct stat sb;
	mode_t m;

	if (!shared || stat(path, &sb) < 0 || sb.st_uid != geteuid())
		return 0;
	m = shared_mode(shared, sb.st_mode);
	if (((sb.st_mode ^ m) & ~(mode_t)S_IFMT) && chmod(path, m & ~(mode_t)S_IFMT) < 0)
		return lease__fs_errno_class(errno);
	return 0;
}

int lease__fs_adjust_shared_tree(int shared, const char *commondir, const char *rel)
{
	char path[4096];
	size_t base;
	char *p;
	int rc = 0, r;

	if (!shared)
		return 0;
	if (join(path, sizeof(path), commondir, rel) < 0)
		return LEASE_ENOMEM;
	base = strlen(path) - strlen(rel);
	for (p = path + base; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if ((r = lease__fs_adjust_shared_perm(shared, path)) < 0 && rc == 0)
			rc = r;
		*p = '/';
	}
	if ((r = lease__fs_adjust_shared_perm(shared, path)) < 0 && rc == 0)
		rc = r;
	return rc;
}

/* mkdir -p of @p path's parent directories below @p base, with the modes
 * core.sharedRepository asks for. */
static void mkparents(const char *base, const char *path, int shared)
{
	char buf[4096];
	size_t blen = strlen(base);
	char *p;

	if (strlen(path) >= sizeof(buf))
		return;
	memcpy(buf, path, strlen(path) + 1);
	for (p = buf + blen + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(buf, 0777) < 0 && errno != EEXIST)
			return;
		(void)lease__fs_adjust_shared_perm(shared, buf);
		*p = '/';
	}
}

int lease__fs_lock(int *fd, const char *commondir, const char *path, int wait_ms, int shared,
                   char *err, size_t errlen)
{
	static _Thread_local unsigned int seed; /* jitter, per thread */
	char lock[4096 + 8];
	long waited = 0;
	int made = 0, w;

	w = snprintf(lock, sizeof(lock), "%s.lock", path);
	if (w < 0 || (size_t)w >= sizeof(lock))
		return LEASE_ENOMEM;
	for (;;) {
		*fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (*fd >= 0) {
			/* reconcile --reap tells a live holder by its flock (§9) */
			(void)flock(*fd, LOCK_EX | LOCK_NB);
			(void)lease__fs_adjust_shared_perm(shared, lock);
			return 0;
		}
		if (errno == ENOENT && made < 3) {
			/* git pack-refs --prune removes empty directories */
			mkparents(commondir, lock, shared);
			made++;
			continue;
		}
		if (errno == ENOTDIR) {
			lease__error_set(err, errlen,
			                 "cannot create %s: a parent path is a file (a ref)", lock);
			return LEASE_ENOTFOUND;
		}
		if (errno != EEXIST) {
			int e = errno;
			lease__error_set(err, errlen, "cannot create %s: %s%s", lock, strerror(e),
			                 lease__fs_errno_hint(e));
			return lease__fs_errno_class(e);
		}
		if (waited >= wait_ms) {
			lease_fs_lock_info info;

			(void)lease__fs_lock_state(lock, NULL, 0, 0, &info);
			held_message(err, errlen, lock, &info, waited);
			return LEASE_ELOCKED;
		}
		if (!seed)
			seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
		lease__sleep_ms(5 + (long)(rand_r(&seed) % 20), LEASE_SLEEP_FULL);
		waited += 15;
	}
}

/* Read a whole small file into a malloc'd NUL-terminated buffer. 0, ENOENT
 * (as LEASE_ENOTFOUND, also for a directory), or an error class. */
static int slurp(char **out, size_t *len, const char *path)
{
	struct stat sb;
	size_t cap, n = 0;
	ssize_t r;
	char *buf;
	int fd;

	*out = NULL;
	*len = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT || errno == ENOTDIR ? LEASE_ENOTFOUND
		                                           : lease__fs_errno_class(errno);
	if (fstat(fd, &sb) < 0 || S_ISDIR(sb.st_mode)) {
		close(fd);
		return LEASE_ENOTFOUND;
	}
	cap = (size_t)sb.st_size + 1;
	if (!(buf = malloc(cap))) {
		close(fd);
		return LEASE_ENOMEM;
	}
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Find "<hex> <refname>\n" in packed-refs text; its span (with a following
 * "^<peeled>" line) in [*b, *e). 1 found, 0 not. */
static int packed_find(const char *text, size_t len, const char *refname, lease_oid *oid, size_t *b,
                       size_t *e)
{
	size_t rlen = strlen(refname), pos = 0;

	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		size_t next = pos + ll + (nl ? 1 : 0);

		if (ll == LEASE_OID_HEXSZ + 1 + rlen && line[LEASE_OID_HEXSZ] == ' ' &&
		    memcmp(line + LEASE_OID_HEXSZ + 1, refname, rlen) == 0) {
			char hex[LEASE_OID_HEXSZ + 1];

			memcpy(hex, line, LEASE_OID_HEXSZ);
			hex[LEASE_OID_HEXSZ] = '\0';
			if (lease_oid_fromhex(oid, hex) < 0)
				return 0;
			*b = pos;
			if (next < len && text[next] == '^') {
				const char *nl2 = memchr(text + next, '\n', len - next);
				next = nl2 ? (size_t)(nl2 - text) + 1 : len;
			}
			*e = next;
			return 1;
		}
		pos = next;
	}
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void fsync_dir_of(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if ((fd = open(dir, O_RDONLY | O_CLOEXEC)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int lease__fs_delete_ref(const char *commondir, const char *refname, const lease_oid *old_oid,
                         int wait_ms, int shared, char *err, size_t errlen)
{
	char loose[4096], packed[4096], plock[4096 + 8], logp[4096];
	char *ltext = NULL, *ptext = NULL;
	size_t llen = 0, plen = 0, pb = 0, pe = 0;
	int pfd = -1, rc, in_packed = 0, loose_present = 0;
	lease_fs_lock lk;
	lease_oid cur, poid;

	memset(&cur, 0, sizeof(cur));
	memset(&lk, 0, sizeof(lk));
	lk.fd = -1;
	if (join(loose, sizeof(loose), commondir, refname) < 0 ||
	    join(packed, sizeof(packed), commondir, "packed-refs") < 0 ||
	    join(logp, sizeof(logp), commondir, "logs") < 0 ||
	    strlen(logp) + 1 + strlen(refname) >= sizeof(logp))
		return LEASE_ENOMEM;
	snprintf(plock, sizeof(plock), "%s.lock", packed);
	snprintf(logp + strlen(logp), sizeof(logp) - strlen(logp), "/%s", refname);

	/* the ref lock holds the old oid: a rename of it by anyone changes nothing */
	if ((rc = lease__fs_ref_lock(&lk, commondir, loose, old_oid, wait_ms, shared, err,
	                             errlen)) < 0) {
		if (rc == LEASE_ENOTFOUND) {
			lease__error_set(err, errlen, "ref absent");
			rc = LEASE_ECAS;
		}
		return rc;
	}
	if ((rc = lease__fs_lock(&pfd, commondir, packed, wait_ms, shared, err, errlen)) < 0)
		goto out;
	/* Both locks held: read the loose file and packed-refs now. */
	rc = slurp(&ltext, &llen, loose);
	if (rc == 0) {
		char hex[LEASE_OID_HEXSZ + 1];

		loose_present = 1;
		if (strncmp(ltext, "ref:", 4) == 0) {
			lease__error_set(err, errlen, "%s is a symbolic ref", refname);
			rc = LEASE_ECAS;
			goto out;
		}
		memcpy(hex, ltext, llen < LEASE_OID_HEXSZ ? llen : LEASE_OID_HEXSZ);
		hex[llen < LEASE_OID_HEXSZ ? llen : LEASE_OID_HEXSZ] = '\0';
		if (lease_oid_fromhex(&cur, hex) < 0) {
			lease__error_set(err, errlen, "%s: not a ref file", loose);
			rc = LEASE_ECAS;
			goto out;
		}
	} else if (rc != LEASE_ENOTFOUND) {
		lease__error_set(err, errlen, "cannot read %s: %s", loose, strerror(errno));
		goto out;
	}
	rc = slurp(&ptext, &plen, packed);
	if (rc < 0 && rc != LEASE_ENOTFOUND) {
		lease__error_set(err, errlen, "cannot read %s: %s", packed, strerror(errno));
		goto out;
	}
	in_packed = ptext && packed_find(ptext, plen, refname, &poid, &pb, &pe);
	if (!loose_present && in_packed)
		cur = poid;
	if (!loose_present && !in_packed) {
		lease__error_set(err, errlen, "ref absent");
		rc = LEASE_ECAS;
		goto out;
	}
	if (!lease_oid_equal(&cur, old_oid)) {
		lease__error_set(err, errlen, "ref changed");
		rc = LEASE_ECAS;
		goto out;
	}
	/* git's order: packed-refs first (a reader still sees the loose ref),
	 * then the loose file; packed-refs.lock is released last. */
	if (in_packed) {
		if (write_all(pfd, ptext, pb) < 0 || write_all(pfd, ptext + pe, plen - pe) < 0 ||
		    fsync(pfd) < 0) {
			int e = errno;
			lease__error_set(err, errlen, "cannot write %s: %s%s", plock, strerror(e),
			                 lease__fs_errno_hint(e));
			rc = lease__fs_errno_class(e);
			goto out;
		}
		close(pfd);
		pfd = -1;
		if (rename(plock, packed) < 0) {
			int e = errno;
			lease__error_set(err, errlen, "cannot rename %s: %s%s", plock, strerror(e),
			                 lease__fs_errno_hint(e));
			unlink(plock);
			rc = lease__fs_errno_class(e);
			goto out;
		}
		fsync_dir_of(packed);
	}
	if (loose_present && unlink(loose) < 0) {
		int e = errno;
		lease__error_set(err, errlen, "cannot remove %s: %s%s", loose, strerror(e),
		                 lease__fs_errno_hint(e));
		rc = lease__fs_errno_class(e);
		goto out;
	}
	(void)unlink(logp);
	rc = 0;
out:
	if (pfd >= 0) {
		close(pfd);
		unlink(plock);
	}
	lease__fs_ref_unlock(&lk);
	free(ltext);
	free(ptext);
	return rc;
}

int lease__fs_probe_write(const char *dir, char *err, size_t errlen)
{
	char path[4096], block[4096];
	int fd, e, w;

	w = snprintf(path, sizeof(path), "%s/.reflease-probe-XXXXXX", dir);
	if (w < 0 || (size_t)w >= sizeof(path))
		return LEASE_ENOMEM;
	memset(block, 0, sizeof(block));
	if ((fd = mkstemp(path)) < 0) {
		e = errno;
		lease__error_set(err, errlen, "cannot write in %s: %s%s", dir, strerror(e),
		                 lease__fs_errno_hint(e));
		return lease__fs_errno_class(e);
	}
	e = write_all(fd, block, sizeof(block)) < 0 || fsync(fd) < 0 ? errno : 0;
	close(fd);
	unlink(path);
	if (e) {
		lease__error_set(err, errlen, "cannot write in %s: %s%s", dir, strerror(e),
		                 lease__fs_errno_hint(e));
		return lease__fs_errno_class(e);
	}
	return 0;
}

/* The "..owner-" infix: ".." never appears in a ref name (git
 * check-ref-format), so an owner file is never another ref's lock. */
#define OWNER_INFIX "..owner-"

/* Remove the owner files of @p lock that are links of inode @p ino. */
static void unlink_owner_links(const char *lock, uint64_t dev, uint64_t ino)
{
	char dir[4096], path[4096 + 256], base[1024];
	const char *slash = strrchr(lock, '/');
	size_t blen;
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if (!slash || (size_t)(slash - lock) >= sizeof(dir) || strlen(slash + 1) >= sizeof(base))
		return;
	memcpy(dir, lock, (size_t)(slash - lock));
	dir[slash - lock] = '\0';
	snprintf(base, sizeof(base), "%s", slash + 1);
	blen = strlen(base) - 5; /* without ".lock" */
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, blen) != 0 ||
		    strncmp(de->d_name + blen, OWNER_INFIX, strlen(OWNER_INFIX)) != 0)
			continue;
		if (join(path, sizeof(path), dir, de->d_name) < 0 || lstat(path, &sb) < 0)
			continue;
		if ((uint64_t)sb.st_dev == dev && (uint64_t)sb.st_ino == ino)
			(void)unlink(path);
	}
	closedir(d);
}

int lease__fs_lock_state(const char *lock, const lease_ref_lock *expect, int64_t min_foreign_age_s,
                         int remove, lease_fs_lock_info *info)
{
	struct stat a, b;
	int fd, live;

	memset(info, 0, sizeof(*info));
	if (lstat(lock, &a) < 0)
		return errno == ENOENT ? LEASE_FS_LOCK_GONE : LEASE_FS_LOCK_HELD;
	info->age_s = (int64_t)time(NULL) - (int64_t)a.st_mtime;
	info->ours = a.st_nlink >= 2;
	if (!S_ISREG(a.st_mode))
		return LEASE_FS_LOCK_HELD;
	if ((fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? LEASE_FS_LOCK_GONE : LEASE_FS_LOCK_HELD;
	if (fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return LEASE_FS_LOCK_GONE; /* replaced meanwhile: look again */
	}
	if (expect && ((uint64_t)b.st_dev != expect->dev || (uint64_t)b.st_ino != expect->ino)) {
		close(fd);
		return LEASE_FS_LOCK_GONE; /* not the file listed */
	}
	live = flock(fd, LOCK_EX | LOCK_NB) < 0;
	info->live = live && errno == EWOULDBLOCK;
	/* flock unsupported here: nothing proves a writer gone but age */
	if (live && !info->live)
		info->ours = 0;
	if (info->live || (!info->ours && info->age_s < min_foreign_age_s) || !remove) {
		close(fd);
		return LEASE_FS_LOCK_HELD;
	}
	/* Unheld and stale: no writer can take this file's flock while we hold
	 * it, so the name still denotes it when we unlink it. */
	if (lstat(lock, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		(void)unlink(lock);
		if (info->ours)
			unlink_owner_links(lock, (uint64_t)b.st_dev, (uint64_t)b.st_ino);
	}
	close(fd);
	return LEASE_FS_LOCK_BROKEN;
}

/* The "held" message (B66: the lock's own age, from its mtime). */
static void held_message(char *err, size_t errlen, const char *lock, const lease_fs_lock_info *in,
                         long waited_ms)
{
	if (in->live)
		lease__error_set(err, errlen,
		                 "ref lock held by another writer for %lld s, alive (it holds the "
		                 "flock of %s); waited %.1f s",
		                 (long long)in->age_s, lock, waited_ms / 1000.0);
	else
		lease__error_set(
		        err, errlen,
		        "ref lock held by another writer for %lld s (%s: git's or an older "
		        "reflease's, nothing shows whether its writer is alive; such a lock "
		        "is removed once unheld and %d s old); waited %.1f s",
		        (long long)in->age_s, lock, FOREIGN_STALE_S, waited_ms / 1000.0);
}

/* Create the owner file of @p path's lock holding @p content, flock'ed. */
static int make_owner(lease_fs_lock *lk, const char *commondir, const char *path,
                      const lease_oid *content, int shared, char *err, size_t errlen)
{
	static _Thread_local unsigned int seed; /* owner file names, per thread */
	char hex[LEASE_OID_HEXSZ + 2];
	int made = 0, tries = 0, w, e;

	if (!seed)
		seed = (unsigned int)getpid() ^ (unsigned int)time(NULL) ^
		       (unsigned int)(uintptr_t)&seed;
	for (;;) {
		/* git's modes (0666 less the umask, then core.sharedRepository),
		 * which the ref keeps after the rename: not mkstemp's 0600 */
		w = snprintf(lk->owner, sizeof(lk->owner), "%s" OWNER_INFIX "%ld-%08x.lock", path,
		             (long)getpid(), (unsigned)rand_r(&seed));
		if (w < 0 || (size_t)w >= sizeof(lk->owner))
			return LEASE_ENOMEM;
		lk->fd = open(lk->owner, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (lk->fd >= 0)
			break;
		if (errno == EEXIST && tries++ < 16)
			continue;
		if (errno == ENOENT && made++ < 3) {
			mkparents(commondir, lk->owner, shared);
			continue;
		}
		e = errno;
		if (e == ENOTDIR) {
			lease__error_set(err, errlen,
			                 "cannot create %s.lock: a parent path is a file (a ref)",
			                 path);
			return LEASE_ENOTFOUND;
		}
		lease__error_set(err, errlen, "cannot create %s: %s%s", lk->owner, strerror(e),
		                 lease__fs_errno_hint(e));
		return lease__fs_errno_class(e);
	}
	lease_oid_tohex(hex, content);
	hex[LEASE_OID_HEXSZ] = '\n';
	hex[LEASE_OID_HEXSZ + 1] = '\0';
	/* a fresh file: the flock is ours at once (ENOLCK/EOPNOTSUPP: the lock
	 * is then told apart by age only, like git's) */
	(void)flock(lk->fd, LOCK_EX | LOCK_NB);
	if (write_all(lk->fd, hex, LEASE_OID_HEXSZ + 1) < 0 || fsync(lk->fd) < 0) {
		e = errno;
		lease__error_set(err, errlen, "cannot write %s: %s%s", lk->owner, strerror(e),
		                 lease__fs_errno_hint(e));
		close(lk->fd);
		unlink(lk->owner);
		lk->fd = -1;
		return lease__fs_errno_class(e);
	}
	(void)lease__fs_adjust_shared_perm(shared, lk->owner);
	return 0;
}

/* The lock without a hard link: O_EXCL, flock, content, fsync; the owner
 * file dropped. 0 held, 1 held by another (EEXIST), -1 with errno. */
static int excl_lock(lease_fs_lock *lk, const lease_oid *content, int shared)
{
	char hex[LEASE_OID_HEXSZ + 2];
	struct stat sb;
	int fd, e;

	if ((fd = open(lk->lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0)
		return errno == EEXIST ? 1 : -1;
	(void)flock(fd, LOCK_EX | LOCK_NB);
	lease_oid_tohex(hex, content);
	hex[LEASE_OID_HEXSZ] = '\n';
	hex[LEASE_OID_HEXSZ + 1] = '\0';
	if (write_all(fd, hex, LEASE_OID_HEXSZ + 1) < 0 || fsync(fd) < 0 || fstat(fd, &sb) < 0) {
		e = errno;
		close(fd);
		unlink(lk->lock);
		errno = e;
		return -1;
	}
	(void)lease__fs_adjust_shared_perm(shared, lk->lock);
	close(lk->fd);
	unlink(lk->owner);
	lk->fd = fd;
	lk->dev = (uint64_t)sb.st_dev;
	lk->ino = (uint64_t)sb.st_ino;
	return 0;
}

int lease__fs_ref_lock(lease_fs_lock *lk, const char *commondir, const char *path,
                       const lease_oid *content, int wait_ms, int shared, char *err, size_t errlen)
{
	static _Thread_local unsigned int seed; /* jitter, per thread */
	lease_fs_lock_info info;
	int64_t start = lease__mono_ms(), waited = 0;
	int made = 0, rc, w, e;

	memset(&info, 0, sizeof(info));
	lk->fd = -1;
	w = snprintf(lk->lock, sizeof(lk->lock), "%s.lock", path);
	if (w < 0 || (size_t)w >= sizeof(lk->lock))
		return LEASE_ENOMEM;
	if ((rc = make_owner(lk, commondir, path, content, shared, err, errlen)) < 0)
		return rc;
	for (;;) {
		if (link(lk->owner, lk->lock) == 0) {
			struct stat sb;

			if (fstat(lk->fd, &sb) == 0) {
				lk->dev = (uint64_t)sb.st_dev;
				lk->ino = (uint64_t)sb.st_ino;
			}
			return 0;
		}
		e = errno;
		if (e == ENOENT && made++ < 3) {
			mkparents(commondir, lk->lock, shared); /* pack-refs --prune */
			continue;
		}
		if (e == EPERM || e == EOPNOTSUPP || e == ENOSYS || e == EXDEV || e == EMLINK) {
			/* no hard links here (some FUSE, SMB, vfat): git's own
			 * O_EXCL lock, flock'ed at once, the content written in
			 * it; a one-link lock, told apart by its flock and age */
			if ((rc = excl_lock(lk, content, shared)) == 0)
				return 0;
			if (rc != 1) {
				lease__error_set(err, errlen, "cannot create %s: %s%s", lk->lock,
				                 strerror(errno), lease__fs_errno_hint(errno));
				rc = lease__fs_errno_class(errno);
				break;
			}
			e = EEXIST;
		}
		if (e != EEXIST) {
			lease__error_set(err, errlen, "cannot create %s: %s%s", lk->lock,
			                 strerror(e), lease__fs_errno_hint(e));
			rc = lease__fs_errno_class(e);
			break;
		}
		rc = lease__fs_lock_state(lk->lock, NULL, FOREIGN_STALE_S, 1, &info);
		if (rc != LEASE_FS_LOCK_HELD)
			continue; /* gone or removed: link again at once */
		waited = lease__mono_ms() - start;
		if (waited >= wait_ms) {
			held_message(err, errlen, lk->lock, &info, (long)waited);
			rc = LEASE_ELOCKED;
			break;
		}
		if (!seed)
			seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
		lease__sleep_ms(5 + (long)(rand_r(&seed) % 20), LEASE_SLEEP_FULL);
	}
	close(lk->fd);
	unlink(lk->owner);
	lk->fd = -1;
	return rc;
}

/* Is "<ref>.lock" still the file this writer linked? */
static int still_ours(const lease_fs_lock *lk)
{
	struct stat sb;

	return lstat(lk->lock, &sb) == 0 && (uint64_t)sb.st_dev == lk->dev &&
	       (uint64_t)sb.st_ino == lk->ino;
}

int lease__fs_ref_lock_commit(lease_fs_lock *lk, const char *path, int *err_no)
{
	int rc = 0;

	*err_no = 0;
	if (!still_ours(lk)) {
		*err_no = ENOENT;
		rc = 1;
	} else if (rename(lk->lock, path) < 0) {
		*err_no = errno;
		rc = 1;
	}
	/* A rename that returned 0 moved this writer's own file: only this
	 * writer could have removed it from the lock name since the check
	 * (a breaker needs its flock). Not checked afterwards: a successor may
	 * already have replaced the ref by then, which is no open outcome. */
	if (rc == 0)
		fsync_dir_of(path);
	unlink(lk->owner);
	close(lk->fd);
	lk->fd = -1;
	return rc;
}

void lease__fs_ref_unlock(lease_fs_lock *lk)
{
	if (lk->fd < 0)
		return;
	if (still_ours(lk))
		unlink(lk->lock);
	unlink(lk->owner);
	close(lk->fd);
	lk->fd = -1;
}
