/* Local backend (protocol.md §9): a git repository opened with libgit2
 * (1.5 to 1.9), shared with git and whatever the user runs in it.
 *
 * create, replace and a set's write = local_cas_many: reflease's ref lock
 *           (lease__fs_ref_lock, ref_locks.c: git's "<ref>.lock", complete
 *           from the moment it exists and flock'ed by its live writer, so a
 *           crashed writer's lock is removed at once by the next writer,
 *           protocol.md §9 "Ref locks and crashed writers"), the compare
 *           under the lock, the rename; a rename whose outcome is open is
 *           settled by reading the ref. Not git_reference_create_matching,
 *           whose lock carries no proof of its writer's life.
 * delete  = lease__fs_delete_ref (ref_locks.c): git's own order — ref lock,
 *           packed-refs.lock, re-read both under the locks, rewrite, unlink.
 *           Never git_reference_delete: libgit2 rewrites packed-refs from a
 *           copy read before its lock, undoing a concurrent `git pack-refs`.
 * Every object written is read back (a full disk has been seen to report
 * success); a failed write is diagnosed by a probe write in the directory
 * (disk full: 78, read-only or permission: 77, naming the path). A ref
 * lock held by a live writer is waited for with jitter for up to
 * LOCK_RETRY_MS, never reported as a lost CAS. */
#define _DEFAULT_SOURCE
#include "backend.h"
#include "git2compat.h"
#include "gitobj.h"
#include "reflease/primitives.h" /* LEASE_SET_MAX: the most updates cas_many gets */
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a writer waits for a concurrent writer's ref or delete lock, ms. */
#define LOCK_RETRY_MS 3000
/* The store's own lock file: reconcile --reap takes it while it removes a
 * stale lock (deletes no longer need it: git's locks order them, §9). */
#define DELETE_LOCK "reflease-delete.lock"

typedef struct local_transport {
	lease_transport base;
	git_repository *repo;
	char lockpath[4096];
	unsigned int seed;
	int have_empty_tree;
	struct timespec pack_mtime; /* objects/pack when the odb was last opened */
	int shared;                 /* core.sharedRepository, lease__fs_shared_perm() */
	int lock_wait_ms;           /* ref lock wait of writes (set_lock_wait) */
	lease_clock clock;          /* the store options' clock: a waiter's (wait_change) */
	int watch_fd;               /* a waiter's inotify descriptor, kept (local_watch.c) */
	char errbuf[8192];
} local_transport;

static local_transport *L(lease_transport *t)
{
	return (local_transport *)t;
}

/* Record libgit2's last message (or @p what) and return @p code. */
static int fail(local_transport *lt, int code, const char *what)
{
	const git_error *e = git_error_last();
	size_t n = e && e->message ? strlen(e->message) : 0;

	/* libgit2 ends some messages in ": " plus an OS reason that may be empty */
	while (n && (e->message[n - 1] == ' ' || e->message[n - 1] == ':'))
		n--;
	lease__error_set(lt->errbuf, sizeof(lt->errbuf), "%s%s%.*s", what, n ? ": " : "", (int)n,
	                 n ? e->message : "");
	return code;
}

/* Map a libgit2 error that is not a CAS outcome. */
static int map_git_error(local_transport *lt, int gerr, const char *what)
{
	switch (gerr) {
	case GIT_ENOTFOUND: return fail(lt, LEASE_ENOTFOUND, what);
	case GIT_ELOCKED: return fail(lt, LEASE_ELOCKED, what);
	case GIT_EINVALIDSPEC: return fail(lt, LEASE_EINVALID, what);
	default: break;
	}
	const git_error *e = git_error_last();

	/* errno may be another call's by now: libgit2's OS message says it too */
	if (errno == EACCES || errno == EPERM || errno == EROFS ||
	    (e && e->klass == GIT_ERROR_OS && e->message &&
	     (strstr(e->message, strerror(EACCES)) || strstr(e->message, strerror(EROFS)))))
		return fail(lt, LEASE_EAUTH, what);
	return fail(lt, LEASE_EINTERNAL, what);
}

/* "<commondir>/<rel>" into @p out. */
static void common_path(local_transport *lt, char *out, size_t outlen, const char *rel)
{
	const char *common = git_repository_commondir(lt->repo);
	size_t n = strlen(common);

	snprintf(out, outlen, "%s%s%s", common, n && common[n - 1] == '/' ? "" : "/", rel);
}

/* A write in <commondir>/@p rel failed with libgit2 error @p gerr: a probe
 * write there tells a full disk (78) or a read-only / forbidden directory
 * (77) from anything else (protocol.md §9). */
static int write_error(local_transport *lt, int gerr, const char *what, const char *rel)
{
	char dir[4096], why[4096];
	int rc;

	if (gerr == GIT_ELOCKED || gerr == GIT_EINVALIDSPEC)
		return map_git_error(lt, gerr, what);
	common_path(lt, dir, sizeof(dir), rel);
	if ((rc = lease__fs_probe_write(dir, why, sizeof(why))) < 0 && rc != LEASE_EINTERNAL &&
	    rc != LEASE_ENOMEM) {
		const git_error *e = git_error_last();

		lease__error_set(lt->errbuf, sizeof(lt->errbuf), "%s: %s%s%s", what, why,
		                 e && e->message ? "; libgit2: " : "",
		                 e && e->message ? e->message : "");
		return rc;
	}
	return map_git_error(lt, gerr, what);
}

/* libgit2 keeps a pack file open (descriptor and mapping) once it has read
 * from it, also after `git gc` or `git repack` deleted it: a long-lived holder
 * (run, heartbeat --every) next to repeated maintenance gathered descriptors
 * without bound (issue 23). When objects/pack has changed since the object
 * database was opened, the repository gets a fresh one, which lets the
 * deleted packs go. One stat(2) per object read or write. */
static void refresh_odb(local_transport *lt)
{
	char dir[4096];
	struct stat sb;
	git_odb *odb = NULL;

	common_path(lt, dir, sizeof(dir), "objects/pack");
	if (stat(dir, &sb) < 0 || (sb.st_mtim.tv_sec == lt->pack_mtime.tv_sec &&
	                           sb.st_mtim.tv_nsec == lt->pack_mtime.tv_nsec))
		return;
	common_path(lt, dir, sizeof(dir), "objects");
	if (git_odb_open(&odb, dir) < 0)
		return; /* the old one still works: reads refresh it on a miss */
	if (git_repository_set_odb(lt->repo, odb) == 0) {
		lt->pack_mtime = sb.st_mtim;
		lt->have_empty_tree = 0;
	}
	git_odb_free(odb); /* the repository holds its own reference */
}

/* The modes git gives what it writes in a shared repository
 * (core.sharedRepository, issue 23): libgit2 ignores the setting (it creates
 * with 0666/0777 less the umask, libgit2#3733), so what reflease had it
 * write is adjusted after the write as git's adjust_shared_perm does. */
static void share_object(local_transport *lt, const git_oid *id)
{
	char hex[LEASE_OID_HEXSZ + 1], rel[64];

	if (!lt->shared)
		return;
	git_oid_tostr(hex, sizeof(hex), id);
	snprintf(rel, sizeof(rel), "objects/%.2s/%s", hex, hex + 2);
	(void)lease__fs_adjust_shared_tree(lt->shared, git_repository_commondir(lt->repo), rel);
}

/* share_object for a ref: its loose file, its reflog, the directories. */
static void share_ref(local_transport *lt, const char *refname)
{
	char rel[1100];

	if (!lt->shared)
		return;
	(void)lease__fs_adjust_shared_tree(lt->shared, git_repository_commondir(lt->repo), refname);
	snprintf(rel, sizeof(rel), "logs/%s", refname);
	(void)lease__fs_adjust_shared_tree(lt->shared, git_repository_commondir(lt->repo), rel);
}

/* In a shared repository another member's write becomes readable when its
 * writer has adjusted the modes, just after libgit2's rename (libgit2
 * creates with the umask; git itself adjusts its lock file before the
 * rename). A read that failed on such a file is looked at again: at once
 * when the file is readable now (adjusted between the failed read and this
 * look; at most SHARED_RECHECKS times, so a file that fails for another
 * reason ends here), and after a pause growing from 2 ms to 64 ms while it
 * is not, for as long as a writer waits for a held ref lock (lock_wait_ms,
 * at least SHARED_SETTLE_MIN_MS): a member stopped between its rename and
 * its adjustment is waited for as a held lock is, and only then is the file
 * unreadable (protocol.md §9). */
#define SHARED_RECHECKS      4
#define SHARED_SETTLE_MIN_MS 20
typedef struct shared_settle {
	int slept_ms; /* paused so far */
	int rechecks; /* looks again at a file readable by then */
} shared_settle;

/* 1 = look again (paused, on the store options' clock, if the file is
 * still unreadable), 0 = the failed read stands. @p s starts zeroed for
 * each read. */
static int shared_not_yet(local_transport *lt, const char *rel, shared_settle *s)
{
	char path[4096];
	int budget =
	        lt->lock_wait_ms > SHARED_SETTLE_MIN_MS ? lt->lock_wait_ms : SHARED_SETTLE_MIN_MS;
	int pause;

	if (!lt->shared)
		return 0;
	common_path(lt, path, sizeof(path), rel);
	if (access(path, R_OK) == 0)
		return s->rechecks++ < SHARED_RECHECKS;
	if ((errno != EACCES && errno != EPERM) || s->slept_ms >= budget)
		return 0;
	pause = s->slept_ms < 2 ? 2 : s->slept_ms > 64 ? 64 : s->slept_ms;
	(void)lease__env_sleep_ms(&lt->clock, pause, LEASE_SLEEP_FULL);
	s->slept_ms += pause;
	return 1;
}

/* Read object @p id back after its write (a full disk has been seen to
 * report success, issue 14). When it does not read, the loose file (if any)
 * is removed so that a later write can make it again. 0 or an error. */
static int read_back(local_transport *lt, const git_oid *id, const char *kind)
{
	git_odb *odb = NULL;
	git_odb_object *obj = NULL;
	char hex[LEASE_OID_HEXSZ + 1], rel[64], path[4096], why[4096];
	int err, rc;

	if ((err = git_repository_odb(&odb, lt->repo)) == 0) {
		err = git_odb_read(&obj, odb, id);
		if (err < 0 && git_odb_refresh(odb) == 0)
			err = git_odb_read(&obj, odb, id);
	}
	git_odb_object_free(obj);
	git_odb_free(odb);
	if (err == 0)
		return 0;
	git_oid_tostr(hex, sizeof(hex), id);
	snprintf(rel, sizeof(rel), "objects/%.2s/%s", hex, hex + 2);
	common_path(lt, path, sizeof(path), rel);
	(void)unlink(path);
	lt->have_empty_tree = 0;
	common_path(lt, path, sizeof(path), "objects");
	rc = lease__fs_probe_write(path, why, sizeof(why));
	if (rc < 0 && rc != LEASE_EINTERNAL && rc != LEASE_ENOMEM) {
		lease__error_set(lt->errbuf, sizeof(lt->errbuf),
		                 "the %s object %s did not read back after its write: %s", kind,
		                 hex, why);
		return rc;
	}
	return fail(lt, LEASE_EINTERNAL,
	            kind[0] == 't' ? "the tree object did not read back"
	                           : "the commit object did not read back");
}

static int local_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                              const char *message, int64_t when)
{
	local_transport *lt = L(t);
	const char *what = NULL;
	git_oid id, tree;
	int err, rc = 0, attempt, fresh_tree;

	/* Checked, not trusted: the tree (once per handle) and the commit are
	 * read back. A write that vanished while the directory takes writes
	 * (seen with `git gc` pruning concurrently: libgit2 1.5 reported
	 * success, the loose object was absent) is made again, twice at most. */
	refresh_odb(lt);
	for (attempt = 0; attempt < 3; attempt++) {
		git_error_clear();
		lt->errbuf[0] = '\0';
		fresh_tree = !lt->have_empty_tree;
		err = lease__git_write_commit(out, lt->repo, &lt->have_empty_tree, parent, message,
		                              when, &what);
		if (err < 0) {
			lt->have_empty_tree = 0;
			rc = write_error(lt, err, what, "objects");
			/* another member's new objects/xx/ not adjusted yet (shared) */
			if (rc == LEASE_EAUTH && lt->shared && attempt < 2) {
				lease__sleep_ms(5, LEASE_SLEEP_FULL);
				continue;
			}
			return rc;
		}
		if (fresh_tree &&
		    git_oid_fromstr(&tree, "4b825dc642cb6eb9a060e54bf8d69288fbee4904") == 0) {
			if ((rc = read_back(lt, &tree, "tree")) < 0) {
				if (rc != LEASE_EINTERNAL)
					return rc;
				continue;
			}
			share_object(lt, &tree);
		}
		lease__git_oid_to(&id, out);
		if ((rc = read_back(lt, &id, "commit")) == 0)
			share_object(lt, &id);
		if (rc != LEASE_EINTERNAL)
			return rc;
	}
	return rc;
}

/* A directory/file conflict for @p refname: a ref below it
 * ("refs/leases/a/b" for "refs/leases/a") or one of its parent paths being a
 * ref. 1 with @p other named, else 0. */
static int df_conflict(local_transport *lt, const char *refname, char *other, size_t olen)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char glob[1100], parent[1024];
	size_t n = strlen(refname), i;
	int found = 0;

	snprintf(glob, sizeof(glob), "%s/*", refname);
	if (git_reference_iterator_glob_new(&it, lt->repo, glob) == 0) {
		if (git_reference_next(&ref, it) == 0) {
			snprintf(other, olen, "%s", git_reference_name(ref));
			found = 1;
		}
		git_reference_free(ref);
		git_reference_iterator_free(it);
	}
	for (i = 5; !found && i < n && i < sizeof(parent); i++) {
		if (refname[i] != '/')
			continue;
		memcpy(parent, refname, i);
		parent[i] = '\0';
		if (git_reference_lookup(&ref, lt->repo, parent) == 0) {
			snprintf(other, olen, "%s", parent);
			found = 1;
		}
		git_reference_free(ref);
		ref = NULL;
	}
	git_error_clear();
	return found;
}

static int df_fail(local_transport *lt, const char *refname, const char *other)
{
	lease__error_set(
	        lt->errbuf, sizeof(lt->errbuf),
	        "%s cannot be written: %s exists (git keeps refs as files, so a ref cannot "
	        "also be a directory of refs); rename or delete %s",
	        refname, other, other);
	return LEASE_ECONFIG;
}

/* The oid a symbolic ref is observed at (protocol.md §7): git's blob id of
 * its file's content "ref: <target>\n" — stable, dangling or not, and what
 * a CAS compares under the ref lock. */
static int symref_oid(lease_oid *out, const char *content, size_t len)
{
	git_oid id;
	int err;

	if ((err = git_odb_hash(&id, content, len, GIT_OBJECT_BLOB)) < 0)
		return err;
	lease__git_oid_from(out, &id);
	return 0;
}

/* What a loose ref file is, looked at directly (protocol.md §7, §9). */
typedef enum raw_kind {
	RAW_NONE,       /* absent, a directory, or a well-formed direct ref */
	RAW_SYMBOLIC,   /* "ref: <target>" */
	RAW_GARBLED,    /* empty or not a ref (a crashed writer's residue) */
	RAW_UNREADABLE, /* this user may not open it */
} raw_kind;

/* Largest ref file content hashed as is; a larger one is observed at its
 * identity, as an unreadable one is. */
#define RAW_MAX 4096

/* Look at <commondir>/@p refname itself. @p oid receives what the file is
 * observed at, which a CAS compares under the ref lock: git's blob id of the
 * content (a symbolic or garbled file), or for a file that cannot be read
 * the blob id of its identity ("unreadable <dev> <ino> <size> <mtime>
 * <ctime>"). @p why (may be NULL) receives the cause, naming the file. */
static raw_kind observe_file(local_transport *lt, const char *refname, lease_oid *oid, char *why,
                             size_t whylen)
{
	char path[4096], ident[256];
	char buf[RAW_MAX + 1];
	struct stat sb;
	ssize_t n = 0, r;
	size_t i;
	int fd, e, hexok = 1, k;

	common_path(lt, path, sizeof(path), refname);
	memset(oid, 0, sizeof(*oid));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		e = errno;
		if ((e != EACCES && e != EPERM) || lstat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			return RAW_NONE;
		k = snprintf(ident, sizeof(ident),
		             "unreadable %llu %llu %lld %lld.%09ld %lld.%09ld",
		             (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
		             (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
		             sb.st_mtim.tv_nsec, (long long)sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec);
		if (symref_oid(oid, ident, (size_t)k) < 0)
			return RAW_NONE;
		if (why)
			snprintf(why, whylen,
			         "cannot read the ref file %s: %s (mode %04o, uid %lu, gid %lu; "
			         "this process: uid %lu)",
			         path, strerror(e), (unsigned)(sb.st_mode & 07777),
			         (unsigned long)sb.st_uid, (unsigned long)sb.st_gid,
			         (unsigned long)geteuid());
		return RAW_UNREADABLE;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return RAW_NONE;
	}
	while ((size_t)n < sizeof(buf) - 1 &&
	       (r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	if (n >= 4 && memcmp(buf, "ref:", 4) == 0) {
		if (symref_oid(oid, buf, (size_t)n) < 0)
			return RAW_NONE;
		return RAW_SYMBOLIC;
	}
	for (i = 0; i < LEASE_OID_HEXSZ && hexok; i++)
		hexok = i < (size_t)n && strchr("0123456789abcdef", buf[i]) && buf[i];
	if (hexok && ((size_t)n == LEASE_OID_HEXSZ || buf[LEASE_OID_HEXSZ] == '\n' ||
	              buf[LEASE_OID_HEXSZ] == ' ' || buf[LEASE_OID_HEXSZ] == '\t'))
		return RAW_NONE;
	if ((size_t)n >= sizeof(buf) - 1) {
		k = snprintf(ident, sizeof(ident), "oversized %llu %llu %lld %lld.%09ld",
		             (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
		             (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
		             sb.st_mtim.tv_nsec);
		if (symref_oid(oid, ident, (size_t)k) < 0)
			return RAW_NONE;
	} else if (symref_oid(oid, buf, (size_t)n) < 0) {
		return RAW_NONE;
	}
	if (why && n == 0)
		snprintf(why, whylen, "the ref file %s is empty (a crashed writer's residue?)",
		         path);
	else if (why)
		snprintf(why, whylen, "the ref file %s is not a ref (%lld bytes, no object id)",
		         path, (long long)sb.st_size);
	return RAW_GARBLED;
}

/* The state of a ref whose file libgit2 could not read (empty, garbled,
 * unreadable): 1 with *@p oid and @p c filled (unreadable set), else 0. */
static int unreadable_state(local_transport *lt, const char *refname, lease_oid *oid,
                            lease_commit *c)
{
	char why[4096 + 512];
	raw_kind k = observe_file(lt, refname, oid, why, sizeof(why));

	if (k != RAW_GARBLED && k != RAW_UNREADABLE)
		return 0;
	memset(c, 0, sizeof(*c));
	c->oid = *oid;
	c->unreadable = k == RAW_GARBLED ? LEASE_EPAYLOAD : LEASE_EAUTH;
	c->message = strdup(why);
	return 1;
}

static int local_cas_many(lease_transport *t, const lease_ref_update *u, size_t n);

/* A single-ref create (@p current zero) or replace: cas_many of one ref,
 * reflease's ref lock protocol (protocol.md §9). A symbolic, garbled or
 * unreadable file compares as observe_file sees it and is replaced by a
 * direct ref (break --force over an unreadable tip, §7). 0, LEASE_ECAS
 * (compare failed), or an error. */
static int create_matching(local_transport *lt, const char *refname, const lease_oid *new_oid,
                           const lease_oid *current)
{
	lease_ref_update u;

	u.refname = refname;
	u.old_oid = *current;
	u.new_oid = *new_oid;
	return local_cas_many(&lt->base, &u, 1);
}

static int local_create_ref(lease_transport *t, const char *refname, const lease_oid *new_oid)
{
	static const lease_oid zero;
	int rc = create_matching(L(t), refname, new_oid, &zero);

	return rc == LEASE_ECAS ? fail(L(t), LEASE_EEXISTS, "ref already exists") : rc;
}

static int local_replace_ref(lease_transport *t, const char *refname, const lease_oid *old_oid,
                             const lease_oid *new_oid)
{
	if (lease_oid_is_zero(old_oid))
		return fail(L(t), LEASE_EINVALID, "replace from the zero oid");
	return create_matching(L(t), refname, new_oid, old_oid);
}

/* git's delete protocol (ref_locks.c): never git_reference_delete, which
 * rewrites packed-refs from a copy read before its lock (protocol.md §9). */
static int local_delete_ref(lease_transport *t, const char *refname, const lease_oid *old_oid)
{
	local_transport *lt = L(t);

	git_error_clear();
	lt->errbuf[0] = '\0';
	return lease__fs_delete_ref(git_repository_commondir(lt->repo), refname, old_oid,
	                            lt->lock_wait_ms, lt->shared, lt->errbuf, sizeof(lt->errbuf));
}

static int local_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	local_transport *lt = L(t);
	const char *what = NULL;
	int err;

	git_error_clear();
	lt->errbuf[0] = '\0';
	refresh_odb(lt);
	if ((err = lease__git_read_commit(out, lt->repo, oid, &what)) == 0)
		return 0;
	lease_commit_clear(out);
	return err == GIT_ENOTFOUND ? fail(lt, LEASE_ENOTFOUND, what)
	                            : map_git_error(lt, err, what);
}

/* A symbolic ref as read (protocol.md §7 "symbolic-ref"): observed at
 * symref_oid of its file content; message = the name it points at. */
static int symbolic_state(local_transport *lt, git_reference *ref, lease_oid *oid, lease_commit *c)
{
	const char *target = git_reference_symbolic_target(ref);
	char content[1200];
	int n;

	(void)lt;
	memset(oid, 0, sizeof(*oid));
	memset(c, 0, sizeof(*c));
	n = snprintf(content, sizeof(content), "ref: %s\n", target ? target : "");
	if (n < 0 || (size_t)n >= sizeof(content) || symref_oid(oid, content, (size_t)n) < 0)
		return LEASE_EINTERNAL;
	c->oid = *oid;
	c->symbolic = 1;
	if (!(c->message = strdup(target ? target : "")))
		return LEASE_ENOMEM;
	return 0;
}

/* read_ref, and with @p want_commit 0 read_ref_oid: the target without
 * reading its object (a symbolic or unreadable ref's state is built anyway). */
static int read_ref_as(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                       int *has_commit, lease_commit *commit_out, int want_commit)
{
	local_transport *lt = L(t);
	git_reference *ref = NULL;
	shared_settle settle = {0, 0};
	int err, rc;

	git_error_clear();
	lt->errbuf[0] = '\0';

	*present = 0;
	*has_commit = 0;
	memset(oid, 0, sizeof(*oid));
	while ((err = git_reference_lookup(&ref, lt->repo, refname)) < 0 && err != GIT_ENOTFOUND &&
	       shared_not_yet(lt, refname, &settle))
		;
	if (err == GIT_ENOTFOUND)
		return 0;
	if (err < 0 && unreadable_state(lt, refname, oid, commit_out)) {
		*present = *has_commit = 1;
		git_error_clear();
		return commit_out->message ? 0 : LEASE_ENOMEM;
	}
	if (err < 0) {
		char path[4096];
		int e;

		/* libgit2 calls a file it may not open "locked" (75): it is 77,
		 * naming the file */
		common_path(lt, path, sizeof(path), refname);
		if (access(path, R_OK) < 0 && ((e = errno) == EACCES || e == EPERM)) {
			lease__error_set(lt->errbuf, sizeof(lt->errbuf),
			                 "cannot read the ref file %s: %s (the store's files and "
			                 "directories must be readable by every user of the store)",
			                 path, strerror(e));
			return LEASE_EAUTH;
		}
		return map_git_error(lt, err, "cannot read the ref");
	}
	*present = 1;
	if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
		rc = symbolic_state(lt, ref, oid, commit_out);
		git_reference_free(ref);
		*has_commit = rc == 0;
		return rc;
	}
	lease__git_oid_from(oid, git_reference_target(ref));
	git_reference_free(ref);
	if (!want_commit)
		return 0;
	/* Objects are immutable: reading by the oid just read is consistent. */
	rc = local_read_commit(t, commit_out, oid);
	if (rc == 0)
		*has_commit = 1;
	else if (rc != LEASE_ENOTFOUND)
		return rc;
	return 0;
}

static int local_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                          int *has_commit, lease_commit *commit_out)
{
	return read_ref_as(t, refname, present, oid, has_commit, commit_out, 1);
}

/* read_ref_oid (transport.h, version 3): the ref alone, no object read. */
static int local_read_ref_oid(lease_transport *t, const char *refname, int *present, lease_oid *oid)
{
	lease_commit c;
	int has_commit = 0, rc;

	memset(&c, 0, sizeof(c));
	rc = read_ref_as(t, refname, present, oid, &has_commit, &c, 0);
	lease_commit_clear(&c);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The loose ref files under <commondir>/@p rel (recursively, at most
 * @p depth levels) whose name starts with @p prefix and that libgit2's
 * iterator skipped (@p known, sorted): every empty, garbled or unreadable
 * one is pushed to @p out as unreadable_state() reads it, so that no name in
 * the namespace goes unseen (protocol.md §7 "unreadable-ref"). A directory
 * that cannot be listed is an error naming it (EACCES: 77). */
static int scan_loose(local_transport *lt, lease_ref_list *out, const char *prefix,
                      char *const *known, size_t nknown, const char *rel, int depth)
{
	char dir[4096], name[1024];
	struct dirent *de;
	struct stat sb;
	git_oid gid;
	DIR *d;
	shared_settle settle;
	int rc = 0, e, gerr;

	common_path(lt, dir, sizeof(dir), rel);
	if (!(d = opendir(dir))) {
		e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return 0;
		lease__error_set(lt->errbuf, sizeof(lt->errbuf), "cannot list the refs in %s: %s%s",
		                 dir, strerror(e),
		                 e == EACCES || e == EPERM
		                         ? " (the store's directories must be readable "
		                           "by every user of the store)"
		                         : "");
		return lease__fs_errno_class(e);
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		const char *nm = name;
		char path[4096 + 256];
		lease_commit c;
		lease_oid oid;

		if (de->d_name[0] == '.' || (n > 5 && strcmp(de->d_name + n - 5, ".lock") == 0))
			continue;
		if ((size_t)snprintf(name, sizeof(name), "%s/%s", rel, de->d_name) >=
		            sizeof(name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		/* a name libgit2 listed costs no system call (d_type, bsearch) */
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && de->d_type != DT_REG)
			continue;
		/* nknown 0: known may be NULL, which bsearch must not get (UBSan) */
		if (de->d_type != DT_DIR && nknown > 0 &&
		    bsearch(&nm, known, nknown, sizeof(*known), name_cmp) != NULL)
			continue;
		if (lstat(path, &sb) < 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (depth > 0)
				rc = scan_loose(lt, out, prefix, known, nknown, name, depth - 1);
			continue;
		}
		if (!S_ISREG(sb.st_mode) || strncmp(name, prefix, strlen(prefix)) != 0)
			continue;
		/* made since libgit2 listed, or not readable then (shared, not
		 * adjusted yet): a ref that reads now is listed as it is */
		memset(&settle, 0, sizeof(settle));
		while ((gerr = git_reference_name_to_id(&gid, lt->repo, name)) < 0 &&
		       gerr != GIT_ENOTFOUND && shared_not_yet(lt, name, &settle))
			;
		if (gerr == 0) {
			lease__git_oid_from(&oid, &gid);
			if ((rc = lease_ref_list_push(out, name, &oid)) < 0)
				break;
			continue;
		}
		git_error_clear();
		if (gerr == GIT_ENOTFOUND || !unreadable_state(lt, name, &oid, &c))
			continue;
		if (!c.message || (rc = lease_ref_list_push(out, name, &oid)) < 0) {
			lease_commit_clear(&c);
			rc = LEASE_ENOMEM;
			break;
		}
		out->items[out->count - 1].commit = c;
		out->items[out->count - 1].has_commit = 1;
	}
	closedir(d);
	return rc;
}

/* local_list_refs' second pass: scan_loose() below @p prefix's directory. */
static int list_unreadable(local_transport *lt, lease_ref_list *out, const char *prefix)
{
	char rel[1024], **known = NULL;
	char *slash;
	size_t i, n = out->count;
	int rc;

	snprintf(rel, sizeof(rel), "%s", prefix);
	if (!(slash = strrchr(rel, '/')) || strncmp(rel, "refs/", 5) != 0)
		return 0;
	*slash = '\0';
	if (n && !(known = malloc(n * sizeof(*known))))
		return LEASE_ENOMEM;
	for (i = 0; i < n; i++)
		known[i] = out->items[i].refname;
	if (n)
		qsort(known, n, sizeof(*known), name_cmp);
	rc = scan_loose(lt, out, prefix, known, n, rel, 16);
	free(known);
	return rc;
}

static int local_list_refs(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	local_transport *lt = L(t);
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char glob[1024];
	size_t plen = strlen(prefix);
	int err, rc = 0;

	git_error_clear();
	lt->errbuf[0] = '\0';

	memset(out, 0, sizeof(*out));
	if (!strpbrk(prefix, "*?[\\") && plen + 2 < sizeof(glob)) {
		snprintf(glob, sizeof(glob), "%s*", prefix);
		err = git_reference_iterator_glob_new(&it, lt->repo, glob);
	} else {
		err = git_reference_iterator_new(&it, lt->repo);
	}
	if (err < 0)
		return map_git_error(lt, err, "cannot list refs");
	while ((err = git_reference_next(&ref, it)) == 0) {
		const char *name = git_reference_name(ref);
		git_reference *resolved = NULL;

		if (strncmp(name, prefix, plen) == 0 &&
		    git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
			/* listed with what it resolves to, flagged (§7 symbolic-ref) */
			lease_commit c;
			lease_oid oid;

			if ((rc = symbolic_state(lt, ref, &oid, &c)) == 0 &&
			    (rc = lease_ref_list_push(out, name, &oid)) == 0) {
				out->items[out->count - 1].commit = c;
				out->items[out->count - 1].has_commit = 1;
			} else {
				lease_commit_clear(&c);
			}
		} else if (strncmp(name, prefix, plen) == 0) {
			if (git_reference_resolve(&resolved, ref) == 0) {
				lease_oid oid;

				lease__git_oid_from(&oid, git_reference_target(resolved));
				rc = lease_ref_list_push(out, name, &oid);
				git_reference_free(resolved);
			}
		}
		git_reference_free(ref);
		ref = NULL;
		if (rc < 0)
			break;
	}
	git_reference_iterator_free(it);
	if (rc == 0 && err != GIT_ITEROVER)
		rc = map_git_error(lt, err, "cannot list refs");
	if (rc == 0)
		rc = list_unreadable(lt, out, prefix);
	if (rc < 0)
		lease_ref_list_clear(out);
	return rc;
}

/* Stale ref locks (reconcile, protocol.md §7): lib/store/ref_locks.c does
 * the filesystem work under the store's own lock file (DELETE_LOCK). */
static int local_list_ref_locks(lease_transport *t, lease_ref_lock_list *out, const char *prefix)
{
	L(t)->errbuf[0] = '\0';
	return lease__fs_list_ref_locks(out, git_repository_commondir(L(t)->repo), prefix,
	                                L(t)->errbuf, sizeof(L(t)->errbuf));
}

static int local_remove_ref_lock(lease_transport *t, const lease_ref_lock *lk, int64_t min_age_s,
                                 int64_t now)
{
	local_transport *lt = L(t);

	lt->errbuf[0] = '\0';
	return lease__fs_remove_ref_lock(git_repository_commondir(lt->repo), lt->lockpath, lk,
	                                 min_age_s, now, lt->errbuf, sizeof(lt->errbuf));
}

/* wait_change (lib/store/local_watch.c): the ref's oid, no object read. */
static int local_probe(lease_transport *t, const char *refname, lease_probe *p)
{
	git_oid id;
	int err = git_reference_name_to_id(&id, L(t)->repo, refname);

	p->present = err == 0;
	if (err == 0)
		lease__git_oid_from(&p->oid, &id);
	return err == 0 || err == GIT_ENOTFOUND ? 0 : LEASE_ENET;
}

static int local_wait_change(lease_transport *t, const char *refname, int known_present,
                             const lease_oid *known_oid, int timeout_ms)
{
	return lease__fs_wait_ref_change(t, &L(t)->clock, local_probe,
	                                 git_repository_commondir(L(t)->repo), refname,
	                                 known_present, known_oid, timeout_ms, &L(t)->watch_fd);
}

/* scan_commits (transport.h, version 2): every object of the store, loose
 * and packed, referenced or not; commits whose message starts with the
 * prefix go to the visitor. */
typedef struct scan_ctx {
	git_odb *odb;
	const char *prefix;
	size_t plen, seen, max;
	int (*visit)(const char *msg, void *payload);
	void *payload;
	int stop, rc;
} scan_ctx;

static int scan_one(const git_oid *id, void *payload)
{
	scan_ctx *c = payload;
	git_odb_object *obj = NULL;
	git_object_t type;
	size_t len, mlen;
	const char *data, *msg;
	char *copy;

	if (c->seen++ >= c->max)
		return 1;
	if (git_odb_read_header(&len, &type, c->odb, id) < 0 || type != GIT_OBJECT_COMMIT)
		return 0;
	if (git_odb_read(&obj, c->odb, id) < 0)
		return 0;
	data = git_odb_object_data(obj);
	len = git_odb_object_size(obj);
	/* the message follows the first empty line */
	for (msg = data; msg + 1 < data + len && !(msg[0] == '\n' && msg[1] == '\n'); msg++)
		;
	msg += 2;
	mlen = msg < data + len ? (size_t)(data + len - msg) : 0;
	if (mlen >= c->plen && memcmp(msg, c->prefix, c->plen) == 0) {
		if (!(copy = malloc(mlen + 1))) {
			c->rc = LEASE_ENOMEM;
			git_odb_object_free(obj);
			return 1;
		}
		memcpy(copy, msg, mlen);
		copy[mlen] = '\0';
		c->stop = c->visit(copy, c->payload);
		free(copy);
	}
	git_odb_object_free(obj);
	return c->stop ? 1 : 0;
}

static int local_scan_commits(lease_transport *t, const char *prefix, size_t max_objects,
                              int (*visit)(const char *msg, void *payload), void *payload)
{
	local_transport *lt = L(t);
	scan_ctx c = {NULL, prefix, strlen(prefix), 0, max_objects, visit, payload, 0, 0};
	int err;

	git_error_clear();
	lt->errbuf[0] = '\0';
	if ((err = git_repository_odb(&c.odb, lt->repo)) < 0)
		return map_git_error(lt, err, "cannot open the object store");
	err = git_odb_foreach(c.odb, scan_one, &c);
	git_odb_free(c.odb);
	if (c.rc < 0)
		return c.rc;
	if (err < 0 && err != 1 && err != GIT_EUSER)
		return map_git_error(lt, err, "cannot list the object store");
	return 0;
}

static void local_set_lock_wait(lease_transport *t, int wait_ms)
{
	L(t)->lock_wait_ms = wait_ms < 0 ? LOCK_RETRY_MS : wait_ms;
}

static const char *local_last_error(lease_transport *t)
{
	return L(t)->errbuf[0] ? L(t)->errbuf : NULL;
}

static void local_free(lease_transport *t)
{
	if (!t)
		return;
	if (L(t)->watch_fd >= 0)
		close(L(t)->watch_fd);
	git_repository_free(L(t)->repo);
	free(t);
}

/* A repository at @p path that this user may not read (issue 23): the
 * directory itself, or the HEAD, config or objects/refs of a bare one or of
 * its .git. 1 with @p what naming the first such path, else 0. */
static int unreadable_repo(const char *path, char *what, size_t whatlen)
{
	static const char *const parts[] = {
	        "",      "/HEAD",      "/config",      "/objects",      "/refs",
	        "/.git", "/.git/HEAD", "/.git/config", "/.git/objects", "/.git/refs"};
	char p[4096];
	struct stat sb;
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, parts[i]);
		if (stat(p, &sb) < 0) {
			if (errno == EACCES || errno == EPERM)
				break;
			continue;
		}
		if (access(p, S_ISDIR(sb.st_mode) ? R_OK | X_OK : R_OK) < 0 &&
		    (errno == EACCES || errno == EPERM))
			break;
	}
	if (i == sizeof(parts) / sizeof(parts[0]))
		return 0;
	snprintf(what, whatlen, "%s", p);
	return 1;
}

/* Why PATH did not open: a repository this user may not read (77),
 * another user's repository (libgit2's ownership check, like git's
 * safe.directory), or no repository at PATH itself (78). Returns the code. */
static int open_error(char *err, size_t errlen, int gerr, const char *named)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message ? e->message : "";
	const char *path = named ? named : ".";
	char what[4096];
	struct stat sb;

	if (named && unreadable_repo(path, what, sizeof(what))) {
		lease__error_set(
		        err, errlen,
		        "the repository at '%s' exists but this user (uid %lu) may not read it: "
		        "%s: %s (a shared store needs group read and search permission on its "
		        "files and directories: git init --shared=group, chgrp -R)",
		        path, (unsigned long)geteuid(), what, strerror(EACCES));
		return LEASE_EAUTH;
	}

	if ((gerr == GIT_EOWNER || strstr(m, "safe.directory") || strstr(m, "not owned")) &&
	    stat(path, &sb) == 0) {
		lease__error_set(
		        err, errlen,
		        "the repository at '%s' is owned by another user (uid %lu, this process "
		        "runs as uid %lu): git and libgit2 refuse it unless it is trusted; if "
		        "you trust it, run: git config --global --add safe.directory '%s'",
		        path, (unsigned long)sb.st_uid, (unsigned long)geteuid(), path);
		return LEASE_ECONFIG;
	}
	if (!named)
		lease__error_set(
		        err, errlen,
		        "no git repository here (the current directory or one above it); pass "
		        "--store local:PATH, github:OWNER/REPO or remote:URL");
	else
		lease__error_set(
		        err, errlen,
		        "no git repository at '%s' (local:PATH must name the repository "
		        "itself: a bare repository, or a working tree's top directory or its "
		        ".git; `reflease init %s` makes one)%s%s",
		        path, path, *m ? ": " : "", m);
	return LEASE_ECONFIG;
}

/* core.sharedRepository of @p repo, parsed (lease__fs_shared_perm); 0 when unset. */
static int shared_setting(git_repository *repo)
{
	git_config *cfg = NULL;
	git_buf v = {0};
	int shared = 0;

	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_string_buf(&v, cfg, "core.sharedRepository") == 0)
		shared = lease__fs_shared_perm(v.ptr);
	git_buf_dispose(&v);
	git_config_free(cfg);
	git_error_clear();
	return shared;
}

/* ---- sets (protocol.md "Sets", issue 27) ---------------------------------- */

/* The target of @p refname as a CAS compares it, read while its lock is
 * held: a symbolic, garbled or unreadable file at what observe_file says,
 * else the loose file or packed-refs through libgit2. 0 or an error. */
static int locked_target(local_transport *lt, const char *refname, int *present, lease_oid *oid)
{
	git_oid id;
	int err;

	*present = 0;
	memset(oid, 0, sizeof(*oid));
	if (observe_file(lt, refname, oid, NULL, 0) != RAW_NONE) {
		*present = 1;
		return 0;
	}
	if ((err = git_reference_name_to_id(&id, lt->repo, refname)) == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	if (err < 0)
		return map_git_error(lt, err, "cannot read a member of the set under its lock");
	*present = 1;
	lease__git_oid_from(oid, &id);
	return 0;
}

/* @p order (0..n-1) sorted by the updates' ref names (n <= LEASE_SET_MAX). */
static void sort_updates(size_t *order, const lease_ref_update *u, size_t n)
{
	size_t i, j, x;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 1; i < n; i++) {
		x = order[i];
		for (j = i; j > 0 && strcmp(u[order[j - 1]].refname, u[x].refname) > 0; j--)
			order[j] = order[j - 1];
		order[j] = x;
	}
}

/* A rename whose outcome is open (lease__fs_ref_lock_commit: the lock was
 * no longer this writer's, or rename failed): settled by reading the ref. 1
 * = it holds @p new_oid (landed: a writer outside the lock protocol renamed
 * this writer's complete lock file into place), 0 = not. */
static int settle_rename(local_transport *lt, const lease_ref_update *u)
{
	lease_oid cur;
	int present = 0;

	return locked_target(lt, u->refname, &present, &cur) == 0 && present &&
	       lease_oid_equal(&cur, &u->new_oid);
}

/* cas_many (reflease/sys/transport.h version 3), and every single-ref
 * create and replace: reflease's ref locks (lease__fs_ref_lock: git's
 * "<ref>.lock", complete from the moment it exists, flock'ed, broken at
 * once when its writer is gone, protocol.md §9) for the whole set, in sorted
 * name order so that two set writers never wait for each other in a cycle;
 * every compare under all the locks; then each lock renamed into place. Any
 * failure before the first rename removes every lock taken and changes
 * nothing. A rename whose outcome is open is settled by reading the ref. */
static int local_cas_many(lease_transport *t, const lease_ref_update *u, size_t n)
{
	local_transport *lt = L(t);
	const char *cd = git_repository_commondir(lt->repo);
	char path[LEASE_SET_MAX][4096], other[1024];
	lease_fs_lock lk[LEASE_SET_MAX];
	size_t order[LEASE_SET_MAX], i, k, locked = 0, renamed = 0;
	int rc = 0, present, e;
	lease_oid cur;

	git_error_clear();
	lt->errbuf[0] = '\0';
	if (n == 0 || n > LEASE_SET_MAX)
		return fail(lt, LEASE_EINVALID, "a set write names 1 to 16 refs");
	for (i = 0; i < n; i++) {
		lk[i].fd = -1;
		common_path(lt, path[i], sizeof(path[i]), u[i].refname);
	}
	sort_updates(order, u, n);
	for (k = 0; k < n; k++) {
		i = order[k];
		if (k > 0 && strcmp(u[order[k - 1]].refname, u[i].refname) == 0) {
			rc = fail(lt, LEASE_EINVALID, "a ref named twice in one set write");
			goto unlock;
		}
		rc = lease__fs_ref_lock(&lk[i], cd, path[i], &u[i].new_oid, lt->lock_wait_ms,
		                        lt->shared, lt->errbuf, sizeof(lt->errbuf));
		if (rc == LEASE_ENOTFOUND && df_conflict(lt, u[i].refname, other, sizeof(other)))
			rc = df_fail(lt, u[i].refname, other);
		if (rc < 0)
			goto unlock;
		locked = k + 1;
	}
	for (k = 0; k < n; k++) {
		i = order[k];
		if ((rc = locked_target(lt, u[i].refname, &present, &cur)) < 0)
			goto unlock;
		if (lease_oid_is_zero(&u[i].old_oid)
		            ? present
		            : !present || !lease_oid_equal(&cur, &u[i].old_oid)) {
			if (n == 1)
				lease__error_set(lt->errbuf, sizeof(lt->errbuf), "%s",
				                 present ? "ref changed" : "ref absent");
			else
				lease__error_set(lt->errbuf, sizeof(lt->errbuf), "%s %s",
				                 u[i].refname,
				                 present ? "holds another oid" : "is absent");
			rc = LEASE_ECAS;
			goto unlock;
		}
		if (!present && df_conflict(lt, u[i].refname, other, sizeof(other))) {
			rc = df_fail(lt, u[i].refname, other);
			goto unlock;
		}
	}
	for (k = 0; k < n; k++, renamed = k) {
		i = order[k];
		if (lease__fs_ref_lock_commit(&lk[i], path[i], &e) != 0 &&
		    !settle_rename(lt, &u[i])) {
			/* Outcome open (the primitive settles it by re-reading):
			 * only a failing file system, or a writer outside the
			 * lock protocol that removed or renamed this lock. */
			lease__error_set(
			        lt->errbuf, sizeof(lt->errbuf),
			        "cannot rename %s.lock into place after %zu of %zu members: %s%s",
			        path[i], renamed, n,
			        e == ENOENT ? "the lock file was removed or moved by a writer "
			                      "outside reflease's lock protocol"
			                    : strerror(e),
			        lease__fs_errno_hint(e));
			rc = e == ENOENT ? LEASE_EINTERNAL : lease__fs_errno_class(e);
			renamed = k + 1;
			goto unlock;
		}
		share_ref(lt, u[i].refname);
	}
	return 0;
unlock:
	for (k = renamed; k < locked; k++)
		lease__fs_ref_unlock(&lk[order[k]]);
	return rc;
}

/* The transport's calls and figures (protocol.md §4, §9). */
static const lease_transport local_vtable = {
        .version = LEASE_TRANSPORT_VERSION,
        .kind = "local",
        .skew_margin_s = 0,
        .ttl_min_s = 5,
        .verify_window_ms = 0,
        .write_commit = local_write_commit,
        .create_ref = local_create_ref,
        .replace_ref = local_replace_ref,
        .delete_ref = local_delete_ref,
        .read_ref = local_read_ref,
        .read_commit = local_read_commit,
        .list_refs = local_list_refs,
        .last_error = local_last_error,
        .free = local_free,
        .list_ref_locks = local_list_ref_locks,
        .remove_ref_lock = local_remove_ref_lock,
        .wait_change = local_wait_change,
        .scan_commits = local_scan_commits,
        .set_lock_wait = local_set_lock_wait,
        .read_ref_oid = local_read_ref_oid,
        .cas_many = local_cas_many,
};

const char *lease__local_commondir(lease_transport *t)
{
	return t && t->free == local_free ? git_repository_commondir(L(t)->repo) : NULL;
}

int lease__local_transport_new(lease_transport **out, const char *path,
                               const lease_store_options *opts, char *err, size_t errlen)
{
	local_transport *lt;
	const char *common;
	int gerr, n, rc;

	*out = NULL;
	if ((rc = lease__git_global_init()) < 0) {
		lease__error_set(err, errlen, "cannot initialise libgit2 for '%s'%s%s", path,
		                 lease__git_sep(), lease__git_msg());
		return rc;
	}
	if (!(lt = calloc(1, sizeof(*lt))))
		return LEASE_ENOMEM;
	lt->watch_fd = -1;
	/* local:PATH names the repository itself (bare, or a working tree's top
	 * or .git); only the default store searches upward, as git does. */
	if ((gerr = git_repository_open_ext(&lt->repo, path ? path : ".",
	                                    path ? GIT_REPOSITORY_OPEN_NO_SEARCH : 0, NULL)) < 0) {
		rc = open_error(err, errlen, gerr, path);
		free(lt);
		return rc;
	}
	common = git_repository_commondir(lt->repo);
	n = snprintf(lt->lockpath, sizeof(lt->lockpath), "%s%s%s", common,
	             common[0] && common[strlen(common) - 1] == '/' ? "" : "/", DELETE_LOCK);
	if (n < 0 || (size_t)n >= sizeof(lt->lockpath)) {
		lease__error_set(err, errlen, "repository path too long: '%s'%s%s", path,
		                 lease__git_sep(), lease__git_msg());
		git_repository_free(lt->repo);
		free(lt);
		return LEASE_ECONFIG;
	}
	lt->seed = (unsigned int)getpid() ^ (unsigned int)lease__mono_ms();
	lt->shared = shared_setting(lt->repo);
	lt->lock_wait_ms = LOCK_RETRY_MS;
	if (opts)
		lt->clock = opts->clock;
	lt->base = local_vtable;
	*out = &lt->base;
	return 0;
}

/* The settings every store gets, created or existing (protocol.md §9).
 * git maintenance is safe alongside reflease (deletes follow git's lock
 * protocol), so automatic gc is left as the repository has it. */
static int configure(git_repository *repo)
{
	git_config *cfg = NULL;
	char path[4096];
	const char *common = git_repository_commondir(repo);
	int gerr;

	if ((gerr = git_repository_config(&cfg, repo)) == 0)
		gerr = git_config_set_bool(cfg, "core.logAllRefUpdates", 1);
	git_config_free(cfg);
	/* libgit2 rewrote config with the umask's modes: a shared repository
	 * keeps it readable by its group (issue 23) */
	snprintf(path, sizeof(path), "%s%sconfig", common,
	         common[0] && common[strlen(common) - 1] == '/' ? "" : "/");
	if (gerr == 0)
		(void)lease__fs_adjust_shared_perm(shared_setting(repo), path);
	return gerr;
}

/* git_repository_discover from @p path or, when it does not exist yet, from
 * its nearest existing ancestor. */
static int discover_above(git_buf *found, const char *path)
{
	char dir[4096];
	struct stat sb;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	while (stat(dir, &sb) != 0) {
		if (!(slash = strrchr(dir, '/')))
			return git_repository_discover(found, ".", 0, NULL);
		if (slash == dir) {
			dir[1] = '\0';
			break;
		}
		*slash = '\0';
	}
	return git_repository_discover(found, dir, 0, NULL);
}

int lease_store_init_local(const char *path, int *created, char *err, size_t errlen)
{
	git_repository *repo = NULL;
	git_buf found = {0};
	int gerr, rc, created_here = 0;

	if (!created)
		created = &created_here;
	*created = 0;
	if ((rc = lease__git_global_init()) < 0) {
		lease__error_set(err, errlen, "cannot initialise libgit2 for '%s'%s%s", path,
		                 lease__git_sep(), lease__git_msg());
		return rc;
	}
	if ((gerr = git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) <
	    0) {
		const git_error *ge = git_error_last();

		/* A repository that is there but not trusted: say so */
		if (gerr == GIT_EOWNER ||
		    (ge && ge->message &&
		     (strstr(ge->message, "safe.directory") || strstr(ge->message, "not owned")))) {
			return open_error(err, errlen, gerr, path);
		}
		/* Never a bare skeleton inside somebody's repository (or its
		 * working tree): looked up from PATH's nearest existing ancestor. */
		git_error_clear();
		if (discover_above(&found, path) == 0) {
			lease__error_set(
			        err, errlen,
			        "'%s' is inside the git repository at '%s': name that repository "
			        "itself, or a directory outside it",
			        path, found.ptr);
			git_buf_dispose(&found);
			return LEASE_ECONFIG;
		}
		git_error_clear();
		if ((gerr = git_repository_init(&repo, path, 1)) < 0) {
			int e = errno;

			lease__error_set(err, errlen, "cannot create a bare repository at '%s'%s%s",
			                 path, lease__git_sep(), lease__git_msg());
			return lease__fs_errno_class(e) == LEASE_EINTERNAL
			               ? LEASE_ECONFIG
			               : lease__fs_errno_class(e);
		}
		*created = 1;
	}
	if ((gerr = configure(repo)) < 0) {
		int e = errno;

		lease__error_set(err, errlen, "cannot configure the repository at '%s'%s%s", path,
		                 lease__git_sep(), lease__git_msg());
		git_repository_free(repo);
		return lease__fs_errno_class(e) == LEASE_EINTERNAL ? LEASE_EINTERNAL
		                                                   : lease__fs_errno_class(e);
	}
	git_repository_free(repo);
	return 0;
}
