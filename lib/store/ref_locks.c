/* Stale ref lock files of a local store (protocol.md §7 "stale-ref-lock"):
 * listing "<commondir>/refs/<ns>/<x>.lock" and removing one safely — under
 * the store's own lock file (the one serialising deletes, §9), re-checking
 * the file's identity and age just before unlinking it. Filesystem only; the
 * local transport (local.c) wraps these two calls. */
#define _DEFAULT_SOURCE
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

int lease_fs_list_ref_locks(lease_ref_lock_list *out, const char *commondir, const char *prefix)
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
	if (!(d = opendir(dirpath)))
		return errno == ENOENT || errno == ENOTDIR ? 0 : LEASE_EINTERNAL;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		int w;

		if (n <= 5 || strcmp(de->d_name + n - 5, ".lock") != 0)
			continue;
		if (join(path, sizeof(path), dirpath, de->d_name) < 0 || lstat(path, &sb) < 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		w = snprintf(refname, sizeof(refname), "%s%.*s", prefix, (int)(n - 5), de->d_name);
		if (w < 0 || (size_t)w >= sizeof(refname) || plen == 0)
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
		count++;
	}
	closedir(d);
	out->items = items;
	out->count = count;
	if (rc < 0)
		lease_ref_lock_list_clear(out);
	return rc;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int lease_fs_remove_ref_lock(const char *commondir, const char *store_lock,
                             const lease_ref_lock *lk, int64_t min_age_s, int64_t now, char *err,
                             size_t errlen)
{
	char path[4096];
	struct stat sb;
	long waited = 0;
	int fd, rc;

	if ((rc = join(path, sizeof(path), commondir, lk->refname)) < 0 ||
	    strlen(path) + 6 > sizeof(path))
		return LEASE_ENOMEM;
	memcpy(path + strlen(path), ".lock", 6);
	/* The store's own lock: no reflease delete (which rewrites packed-refs
	 * and takes ref locks) runs while we look at and remove the file. */
	while ((fd = open(store_lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		if (errno != EEXIST || waited >= STORE_LOCK_WAIT_MS) {
			snprintf(err, errlen, "cannot take the store lock %s: %s", store_lock,
			         errno == EEXIST ? "held by another writer" : strerror(errno));
			return LEASE_EINTERNAL;
		}
		sleep_ms(20);
		waited += 20;
	}
	close(fd);
	/* Re-check identity and age just before removing (protocol.md §7). */
	if (lstat(path, &sb) < 0) {
		rc = errno == ENOENT ? LEASE_ENOTFOUND : LEASE_EINTERNAL;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	} else if ((uint64_t)sb.st_dev != lk->dev || (uint64_t)sb.st_ino != lk->ino ||
	           now - (int64_t)sb.st_mtime < min_age_s) {
		rc = LEASE_ECAS;
		snprintf(err, errlen, "%s changed or is younger than %llds: kept", path,
		         (long long)min_age_s);
	} else if (unlink(path) < 0) {
		rc = errno == ENOENT ? LEASE_ENOTFOUND : LEASE_EINTERNAL;
		snprintf(err, errlen, "cannot remove %s: %s", path, strerror(errno));
	} else {
		rc = 0;
	}
	if (unlink(store_lock) < 0 && rc == 0) {
		snprintf(err, errlen, "cannot remove the store lock %s: %s", store_lock,
		         strerror(errno));
		rc = LEASE_EINTERNAL;
	}
	return rc;
}
