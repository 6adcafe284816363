/* Local backend (protocol.md §9): a git repository opened with libgit2 1.5.1.
 *
 * create  = git_reference_create_matching(force=1, current_id = all-zero oid):
 *           the "must be absent" check runs under the ref lock. Never
 *           git_reference_create(force=0), whose existence check in 1.5.1 runs
 *           before the lock is taken.
 * replace = git_reference_create_matching on the old oid.
 * delete  = look up, compare, git_reference_delete (compared again under the
 *           ref lock), serialised by <commondir>/reflease-delete.lock because
 *           libgit2 1.5.1 rewrites packed-refs from a copy read before its lock.
 * A loose-ref lock held by a concurrent writer (GIT_ELOCKED) is retried with
 * jitter for up to LOCK_RETRY_MS, never reported as a lost CAS. */
#define _DEFAULT_SOURCE
#include "git2compat.h"
#include "gitobj.h"
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long a writer waits for a concurrent writer's ref or delete lock, ms. */
#define LOCK_RETRY_MS 3000
/* The store's own lock file (serialises deletes; reconcile --reap uses it too). */
#define DELETE_LOCK "reflease-delete.lock"
/* The empty tree every payload commit points at (protocol.md §2). */

typedef struct local_transport {
	lease_transport base;
	git_repository *repo;
	char lockpath[4096];
	unsigned int seed;
	int have_empty_tree;
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

	snprintf(lt->errbuf, sizeof(lt->errbuf), "%s%s%s", what, e && e->message ? ": " : "",
	         e && e->message ? e->message : "");
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
	if (errno == EACCES || errno == EPERM || errno == EROFS)
		return fail(lt, LEASE_EAUTH, what);
	return fail(lt, LEASE_EINTERNAL, what);
}

static int64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep 1..(2^min(try,4)) ms, jittered. */
static void backoff(local_transport *lt, int attempt)
{
	int cap = 1 << (attempt < 4 ? attempt : 4);
	long ms = 1 + (long)(rand_r(&lt->seed) % (unsigned)(cap * 2));
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int local_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                              const char *message, int64_t when)
{
	local_transport *lt = L(t);
	const char *what = NULL;
	int err;

	git_error_clear();
	lt->errbuf[0] = '\0';
	err = lease_git_write_commit(out, lt->repo, &lt->have_empty_tree, parent, message, when,
	                             &what);
	return err < 0 ? map_git_error(lt, err, what) : 0;
}

/* git_reference_create_matching with lock-contention retries.
 * 0, LEASE_ECAS (compare failed), or an error. */
static int create_matching(local_transport *lt, const char *refname, const lease_oid *new_oid,
                           const lease_oid *current)
{
	git_reference *ref = NULL;
	git_oid nid, cid;
	int64_t deadline = monotonic_ms() + LOCK_RETRY_MS;
	int attempt = 0, err;

	git_error_clear();
	lt->errbuf[0] = '\0';

	lease_git_oid_to(&nid, new_oid);
	lease_git_oid_to(&cid, current);
	for (;;) {
		err = git_reference_create_matching(&ref, lt->repo, refname, &nid, 1, &cid, NULL);
		git_reference_free(ref);
		ref = NULL;
		if (err == 0)
			return 0;
		if (err == GIT_EMODIFIED)
			return fail(lt, LEASE_ECAS, "ref changed");
		/* libgit2 1.5.1 compares under the lock and answers ENOTFOUND when
		 * the ref to replace is absent. */
		if (err == GIT_ENOTFOUND && !lease_oid_is_zero(current))
			return fail(lt, LEASE_ECAS, "ref absent");
		if (err != GIT_ELOCKED || monotonic_ms() >= deadline)
			break;
		backoff(lt, attempt++);
	}
	return map_git_error(lt, err,
	                     err == GIT_ELOCKED ? "ref lock held by another writer for 3 s "
	                                          "(a crashed writer's stale lock? "
	                                          "reconcile --reap removes one "
	                                          "older than 60 s)"
	                                        : "cannot update the ref");
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

/* Take the store's delete lock (O_CREAT|O_EXCL), retried briefly. */
static int delete_lock(local_transport *lt)
{
	int64_t deadline = monotonic_ms() + LOCK_RETRY_MS;
	int attempt = 0, fd;

	for (;;) {
		fd = open(lt->lockpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EEXIST) {
			snprintf(lt->errbuf, sizeof(lt->errbuf), "cannot create %s: %s",
			         lt->lockpath, strerror(errno));
			return errno == EACCES || errno == EROFS ? LEASE_EAUTH : LEASE_EINTERNAL;
		}
		if (monotonic_ms() >= deadline) {
			snprintf(lt->errbuf, sizeof(lt->errbuf),
			         "delete lock %s held by another writer (stale? remove it if no "
			         "reflease process runs)",
			         lt->lockpath);
			return LEASE_ELOCKED;
		}
		backoff(lt, attempt++);
	}
}

static int local_delete_ref(lease_transport *t, const char *refname, const lease_oid *old_oid)
{
	local_transport *lt = L(t);
	git_reference *ref = NULL;
	int64_t deadline;
	int attempt = 0, err, rc;

	git_error_clear();
	lt->errbuf[0] = '\0';

	if ((rc = delete_lock(lt)) < 0)
		return rc;
	deadline = monotonic_ms() + LOCK_RETRY_MS;
	for (;;) {
		err = git_reference_lookup(&ref, lt->repo, refname);
		if (err == GIT_ENOTFOUND) {
			rc = fail(lt, LEASE_ECAS, "ref absent");
			break;
		}
		if (err < 0) {
			rc = map_git_error(lt, err, "cannot read the ref");
			break;
		}
		if (git_reference_type(ref) != GIT_REFERENCE_DIRECT ||
		    memcmp(git_reference_target(ref)->id, old_oid->id, LEASE_OID_RAWSZ) != 0) {
			rc = fail(lt, LEASE_ECAS, "ref changed");
			break;
		}
		/* git_reference_delete compares with the looked-up oid under the lock. */
		err = git_reference_delete(ref);
		git_reference_free(ref);
		ref = NULL;
		if (err == 0) {
			rc = 0;
			break;
		}
		if (err == GIT_EMODIFIED) {
			rc = fail(lt, LEASE_ECAS, "ref changed");
			break;
		}
		if (err != GIT_ELOCKED || monotonic_ms() >= deadline) {
			rc = map_git_error(lt, err,
			                   err == GIT_ELOCKED ? "ref lock held by another writer"
			                                      : "cannot delete the ref");
			break;
		}
		backoff(lt, attempt++);
	}
	git_reference_free(ref);
	if (unlink(lt->lockpath) < 0 && rc == 0) {
		snprintf(lt->errbuf, sizeof(lt->errbuf), "cannot remove %s: %s", lt->lockpath,
		         strerror(errno));
		rc = LEASE_EINTERNAL;
	}
	return rc;
}

static int local_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	local_transport *lt = L(t);
	const char *what = NULL;
	int err;

	git_error_clear();
	lt->errbuf[0] = '\0';
	if ((err = lease_git_read_commit(out, lt->repo, oid, &what)) == 0)
		return 0;
	lease_commit_clear(out);
	return err == GIT_ENOTFOUND ? fail(lt, LEASE_ENOTFOUND, what)
	                            : map_git_error(lt, err, what);
}

static int local_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                          int *has_commit, lease_commit *commit_out)
{
	local_transport *lt = L(t);
	git_oid id;
	int err, rc;

	git_error_clear();
	lt->errbuf[0] = '\0';

	*present = 0;
	*has_commit = 0;
	memset(oid, 0, sizeof(*oid));
	err = git_reference_name_to_id(&id, lt->repo, refname);
	if (err == GIT_ENOTFOUND)
		return 0;
	if (err < 0)
		return map_git_error(lt, err, "cannot read the ref");
	*present = 1;
	lease_git_oid_from(oid, &id);
	/* Objects are immutable: reading by the oid just read is consistent. */
	rc = local_read_commit(t, commit_out, oid);
	if (rc == 0)
		*has_commit = 1;
	else if (rc != LEASE_ENOTFOUND)
		return rc;
	return 0;
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

		if (strncmp(name, prefix, plen) == 0) {
			if (git_reference_resolve(&resolved, ref) == 0) {
				lease_oid oid;

				lease_git_oid_from(&oid, git_reference_target(resolved));
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
	if (rc < 0)
		lease_ref_list_clear(out);
	return rc;
}

/* Stale ref locks (reconcile, protocol.md §7): lib/store/ref_locks.c does
 * the filesystem work under the store's own lock file (DELETE_LOCK). */
static int local_list_ref_locks(lease_transport *t, lease_ref_lock_list *out, const char *prefix)
{
	return lease_fs_list_ref_locks(out, git_repository_commondir(L(t)->repo), prefix);
}

static int local_remove_ref_lock(lease_transport *t, const lease_ref_lock *lk, int64_t min_age_s,
                                 int64_t now)
{
	local_transport *lt = L(t);

	lt->errbuf[0] = '\0';
	return lease_fs_remove_ref_lock(git_repository_commondir(lt->repo), lt->lockpath, lk,
	                                min_age_s, now, lt->errbuf, sizeof(lt->errbuf));
}

/* wait_change (lib/store/local_watch.c): the ref's oid, no object read. */
static int local_probe(lease_transport *t, const char *refname, lease_probe *p)
{
	git_oid id;
	int err = git_reference_name_to_id(&id, L(t)->repo, refname);

	p->present = err == 0;
	if (err == 0)
		lease_git_oid_from(&p->oid, &id);
	return err == 0 || err == GIT_ENOTFOUND ? 0 : LEASE_ENET;
}

static int local_wait_change(lease_transport *t, const char *refname, int known_present,
                             const lease_oid *known_oid, int timeout_ms)
{
	return lease_fs_wait_ref_change(t, local_probe, git_repository_commondir(L(t)->repo),
	                                refname, known_present, known_oid, timeout_ms);
}

static const char *local_last_error(lease_transport *t)
{
	return L(t)->errbuf[0] ? L(t)->errbuf : NULL;
}

static void local_free(lease_transport *t)
{
	if (!t)
		return;
	git_repository_free(L(t)->repo);
	free(t);
}

static void seterr(char *err, size_t errlen, const char *what, const char *path)
{
	const git_error *e = git_error_last();

	if (err && errlen)
		snprintf(err, errlen, "%s '%s'%s%s", what, path, e && e->message ? ": " : "",
		         e && e->message ? e->message : "");
}

int lease_local_transport_new(lease_transport **out, const char *path, char *err, size_t errlen)
{
	local_transport *lt;
	const char *common;
	int gerr, n;

	*out = NULL;
	if (lease_git_setup() < 0) {
		seterr(err, errlen, "cannot initialise libgit2 for", path);
		return LEASE_EINTERNAL;
	}
	if (!(lt = calloc(1, sizeof(*lt))))
		return LEASE_ENOMEM;
	if ((gerr = git_repository_open_ext(&lt->repo, path, 0, NULL)) < 0) {
		seterr(err, errlen, "no git repository at", path);
		free(lt);
		(void)gerr;
		return LEASE_ECONFIG;
	}
	common = git_repository_commondir(lt->repo);
	n = snprintf(lt->lockpath, sizeof(lt->lockpath), "%s%s%s", common,
	             common[0] && common[strlen(common) - 1] == '/' ? "" : "/", DELETE_LOCK);
	if (n < 0 || (size_t)n >= sizeof(lt->lockpath)) {
		seterr(err, errlen, "repository path too long:", path);
		git_repository_free(lt->repo);
		free(lt);
		return LEASE_ECONFIG;
	}
	lt->seed = (unsigned int)getpid() ^ (unsigned int)monotonic_ms();
	lt->base.version = LEASE_TRANSPORT_VERSION;
	lt->base.kind = "local";
	lt->base.skew_margin_s = 0;
	lt->base.ttl_min_s = 5;
	lt->base.verify_window_ms = 0;
	lt->base.write_commit = local_write_commit;
	lt->base.create_ref = local_create_ref;
	lt->base.replace_ref = local_replace_ref;
	lt->base.delete_ref = local_delete_ref;
	lt->base.read_ref = local_read_ref;
	lt->base.read_commit = local_read_commit;
	lt->base.list_refs = local_list_refs;
	lt->base.now = NULL;
	lt->base.last_error = local_last_error;
	lt->base.free = local_free;
	lt->base.list_ref_locks = local_list_ref_locks;
	lt->base.remove_ref_lock = local_remove_ref_lock;
	lt->base.wait_change = local_wait_change;
	*out = &lt->base;
	return 0;
}

int lease_local_init(const char *path, char *err, size_t errlen)
{
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	int gerr;

	if (lease_git_setup() < 0) {
		seterr(err, errlen, "cannot initialise libgit2 for", path);
		return LEASE_EINTERNAL;
	}
	if ((gerr = git_repository_init(&repo, path, 1)) < 0) {
		seterr(err, errlen, "cannot create a bare repository at", path);
		return LEASE_ECONFIG;
	}
	/* gc.auto=0: git gc / pack-refs must not run while reflease writes (§9).
	 * core.logAllRefUpdates=true: reflogs for branches; lease history lives in
	 * the commit chain. */
	if ((gerr = git_repository_config(&cfg, repo)) < 0 ||
	    (gerr = git_config_set_int32(cfg, "gc.auto", 0)) < 0 ||
	    (gerr = git_config_set_int32(cfg, "gc.autoPackLimit", 0)) < 0 ||
	    (gerr = git_config_set_bool(cfg, "core.logAllRefUpdates", 1)) < 0) {
		seterr(err, errlen, "cannot configure the repository at", path);
		git_config_free(cfg);
		git_repository_free(repo);
		return LEASE_EINTERNAL;
	}
	git_config_free(cfg);
	git_repository_free(repo);
	return 0;
}
