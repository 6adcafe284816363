/**
 * @file backend.h (internal)
 * What the transports in lib/store share: the backend constructors, their
 * deadline, log and test hooks, the filesystem helpers of local stores and
 * the probe/wait helpers. Included by lib/store (and tests), never by
 * lib/lease or cmd/ (`make lint` checks it). The transport vtable itself is
 * public: reflease/sys/transport.h (style.md §8).
 */
#ifndef REFLEASE_STORE_BACKEND_H
#define REFLEASE_STORE_BACKEND_H

#include "reflease/store.h"
#include "reflease/sys/transport.h"
#include "util/clock.h"

#include <stddef.h>
#include <stdint.h>

/**
 * Record the spec @p st was opened by (lease_store_open(), open.c; store.c
 * keeps the handle's layout to itself).
 */
void lease__store_set_spec(lease_store *st, const char *spec);

/**
 * Local backend (lib/store/local.c) over libgit2: @p path is a repository
 * itself (a bare one, or a working tree's top or its .git), never a
 * directory inside one; NULL = the repository the current directory is in,
 * found upward as git does (the CLI's default store, protocol.md §9).
 * @return 0, LEASE_ECONFIG (no repository at @p path, or one owned by
 *         another user and not listed in safe.directory), LEASE_ENOMEM
 */
int lease__local_transport_new(lease_transport **out, const char *path,
                               const lease_store_options *opts, char *err, size_t errlen);

/**
 * The common dir of the repository a local transport has open (borrowed,
 * valid while @p t lives), or NULL when @p t is not the local transport.
 */
const char *lease__local_commondir(lease_transport *t);

/**
 * GitHub backend (lib/store/github.c) over libcurl + jansson, protocol.md §9:
 * @p arg is "OWNER/REPO". The token comes from opts->github_token, else
 * opts->github_token_file; base URLs from opts->github_api_url /
 * github_graphql_url (https, or http towards loopback only); its clock,
 * randomness, log and CA settings from @p opts too. No I/O but the token file.
 * @return 0, LEASE_EINVALID (bad OWNER/REPO), LEASE_ECONFIG (no token, URL
 *         refused), LEASE_ENOMEM
 */
int lease__github_transport_new(lease_transport **out, const char *arg,
                                const lease_store_options *opts, char *err, size_t errlen);

/**
 * Make a GitHub transport read through REST only (what it falls back to by
 * itself when GraphQL does not see refs/<ns>/); tests replaying recorded
 * REST traffic use it. A no-op on other transports.
 */
void lease__github_set_rest_only(lease_transport *t);

/**
 * The HTTP client of a GitHub transport (borrowed), for tests and the fuzz
 * target (lease__http_set_responder(), lease__http_set_body_cap() in http.h);
 * NULL for other transports.
 */
struct lease_http *lease__github_http(lease_transport *t);

/**
 * The most refs a listing of GitHub transport @p t held at once since it was
 * opened or last reset (@p reset 1 zeroes it after reading): list_refs holds
 * the whole listing, list_refs_each one page plus the refs carried over to
 * the next part (issue 29). For tests and benchmarks; 0 for other transports.
 */
size_t lease__github_listing_peak(lease_transport *t, int reset);

/**
 * The request budgets GitHub transport @p t saw (lease_store_budgets(),
 * issue 39), up to @p max into @p out; 0 for other transports.
 * @return how many it holds
 */
size_t lease__github_budgets(const lease_transport *t, lease_budget *out, size_t max);

/**
 * 1 when REFLEASE_GIT_TOKEN may be offered to @p url: https://, or http://
 * towards a loopback host as lease__host_is_loopback() parses it (never a
 * name that merely begins with "127."); 0 otherwise (issue 15, protocol.md §9).
 */
int lease__remote_token_allowed(const char *url);

/**
 * Remote backend (lib/store/remote.c, protocol.md §9 "remote") for @p url:
 * git://, http(s)://, ssh:// through libgit2's smart protocol with a local
 * object cache under $XDG_CACHE_HOME/reflease/; file:// served by the local
 * backend's code with the remote figures (30 s skew, TTL >= 60 s, 10 s
 * verify window). From @p opts (may be NULL): git_token (the https
 * credential), cache_dir, the CA settings, the clock and the log.
 * @return 0, LEASE_EINVALID (unsupported URL, password in the URL),
 *         LEASE_ECONFIG (no cache directory, no repository for file://),
 *         LEASE_ENOMEM, LEASE_EINTERNAL
 */
int lease__remote_transport_new(lease_transport **out, const char *url,
                                const lease_store_options *opts, char *err, size_t errlen);

/**
 * Filesystem helpers for local stores (lib/store/ref_locks.c): list the
 * "*.lock" files directly under <commondir>/<prefix>.
 * @return 0, LEASE_ENOMEM, LEASE_EAUTH / LEASE_ECONFIG / LEASE_EINTERNAL
 *         (lease__fs_errno_class of a directory that cannot be listed, with
 *         @p err naming it)
 */
int lease__fs_list_ref_locks(lease_ref_lock_list *out, const char *commondir, const char *prefix,
                             char *err, size_t errlen);

/**
 * Remove @p lk's lock file under <commondir> while holding @p store_lock
 * (O_CREAT|O_EXCL, waited for up to 3 s), only when it is still the same
 * file (dev, inode) and at least @p min_age_s old at @p now (protocol.md §7).
 * @return 0, LEASE_ECAS (changed or too young), LEASE_ENOTFOUND, LEASE_EINTERNAL
 */
int lease__fs_remove_ref_lock(const char *commondir, const char *store_lock,
                              const lease_ref_lock *lk, int64_t min_age_s, int64_t now, char *err,
                              size_t errlen);

/**
 * Error class of a filesystem errno (protocol.md §9): EACCES, EPERM, EROFS
 * -> LEASE_EAUTH (exit 77); ENOSPC, EDQUOT -> LEASE_ECONFIG (exit 78, "the
 * disk is full"); anything else LEASE_EINTERNAL.
 */
int lease__fs_errno_class(int e);
/** A parenthesised hint for @p e (" (the disk is full: ...)"), or "" (static). */
const char *lease__fs_errno_hint(int e);

/** core.sharedRepository = group (git's PERM_GROUP). */
#define LEASE_PERM_GROUP 0660
/** core.sharedRepository = all / world / everybody (git's PERM_EVERYBODY). */
#define LEASE_PERM_EVERYBODY 0664

/**
 * Parse a core.sharedRepository value as git does (setup.c git_config_perm):
 * NULL, "", "umask", false, 0 -> 0 (modes follow the umask); "group", true, 1
 * -> LEASE_PERM_GROUP; "all", "world", "everybody", 2 -> LEASE_PERM_EVERYBODY;
 * an octal mode "0NNN" -> -(NNN & 0666). A mode that denies its owner read
 * or write (git refuses it) -> 0.
 */
int lease__fs_shared_perm(const char *value);

/**
 * git's adjust_shared_perm (path.c) for a file or directory reflease wrote in
 * a repository whose core.sharedRepository parsed to @p shared
 * (lease__fs_shared_perm): add the group (or everybody's) read and write bits
 * (read only for a file without owner write, e.g. an object), x bits copied
 * from r for directories and executables, setgid on directories; an octal
 * mode replaces the permission bits instead. Only paths this user owns are
 * changed (another user's were adjusted by their writer). A no-op when
 * @p shared is 0. @return 0, or lease__fs_errno_class() of a failed chmod
 */
int lease__fs_adjust_shared_perm(int shared, const char *path);

/**
 * lease__fs_adjust_shared_perm() of every path from <commondir>/<first
 * component of @p rel> down to <commondir>/@p rel ("refs/leases/a" adjusts
 * refs, refs/leases and refs/leases/a). Missing paths are skipped.
 * @return 0, or the first failure's class
 */
int lease__fs_adjust_shared_tree(int shared, const char *commondir, const char *rel);

/**
 * Take git's lock on @p path: create "<path>.lock" O_EXCL (making missing
 * directories below @p commondir), waiting up to @p wait_ms while another
 * writer holds it. The lock file and the directories made get the modes
 * core.sharedRepository asks for (@p shared, lease__fs_shared_perm), as git
 * gives them, so the file renamed into place keeps them. The caller writes
 * through *@p fd and unlinks or renames the lock file.
 * @return 0, LEASE_ELOCKED (still held), LEASE_ENOTFOUND (a parent path is a
 *         file), LEASE_EAUTH / LEASE_ECONFIG (lease__fs_errno_class), LEASE_ENOMEM
 */
int lease__fs_lock(int *fd, const char *commondir, const char *path, int wait_ms, int shared,
                   char *err, size_t errlen);

/** What lease__fs_lock_state() saw of a lock file (protocol.md §9). */
typedef struct lease_fs_lock_info {
	int64_t age_s; /**< now - its mtime, s (its real age, not a wait) */
	int ours;      /**< two links: reflease's lock, its flock tells liveness */
	int live;      /**< its flock is held: a writer is alive */
} lease_fs_lock_info;

/** lease__fs_lock_state() results. */
#define LEASE_FS_LOCK_HELD   0 /**< held by a live writer, or not provably stale */
#define LEASE_FS_LOCK_GONE   1 /**< absent, or replaced while looked at: look again */
#define LEASE_FS_LOCK_BROKEN 2 /**< stale and removed (@p remove) */

/**
 * Decide whether lock file @p lock has a live writer (protocol.md §9 "Ref
 * locks and crashed writers"): a lock whose flock nobody holds and which is
 * reflease's (two links) is stale at any age; one that is not reflease's
 * (git's, one link) only when also @p min_foreign_age_s old by its mtime.
 * With @p remove, a stale one is unlinked (with its owner file) while this
 * process holds its flock, so that no other breaker or writer can act on
 * the same file meanwhile. @p expect (may be NULL): only that file
 * (dev, inode). Never blocks.
 * @return LEASE_FS_LOCK_HELD, LEASE_FS_LOCK_GONE or LEASE_FS_LOCK_BROKEN
 */
int lease__fs_lock_state(const char *lock, const lease_ref_lock *expect, int64_t min_foreign_age_s,
                         int remove, lease_fs_lock_info *info);

/** A ref lock held by this process (lease__fs_ref_lock). */
typedef struct lease_fs_lock {
	int fd;              /**< the lock's file, flock'ed; -1 when not held */
	uint64_t dev, ino;   /**< its identity */
	char lock[4096 + 8]; /**< "<ref path>.lock" */
	char owner[4096 + 64];
} lease_fs_lock;

/**
 * Take the ref lock "<@p path>.lock" holding "<@p content hex>\n" from the
 * moment it exists (protocol.md §9): write an owner file beside it, flock it,
 * link() it to the lock name. While the lock is held by another writer, wait
 * up to @p wait_ms, removing it at once when its writer is gone
 * (lease__fs_lock_state). Missing directories below @p commondir are made
 * with core.sharedRepository's modes (@p shared).
 * @return 0 (held: rename it with lease__fs_ref_lock_commit or drop it with
 *         lease__fs_ref_unlock), LEASE_ELOCKED (still held; @p err gives the
 *         lock's real age and whether its writer is alive), LEASE_ENOTFOUND (a
 *         parent path is a file), LEASE_EAUTH / LEASE_ECONFIG, LEASE_ENOMEM
 */
int lease__fs_ref_lock(lease_fs_lock *lk, const char *commondir, const char *path,
                       const lease_oid *content, int wait_ms, int shared, char *err, size_t errlen);

/**
 * Rename a held ref lock onto @p path and release it. The lock file is
 * checked to be still this writer's first; when it is not (removed or
 * renamed by a writer outside this protocol) or the rename fails, the
 * outcome is open: the caller reads the ref to settle it.
 * @return 0 (renamed), 1 (open: *@p err_no says why)
 */
int lease__fs_ref_lock_commit(lease_fs_lock *lk, const char *path, int *err_no);

/** Drop a held ref lock without renaming it (only if still this writer's). */
void lease__fs_ref_unlock(lease_fs_lock *lk);

/**
 * Delete @p refname of the repository whose common dir is @p commondir if it
 * holds @p old_oid, by git's protocol (protocol.md §9): lock "<ref>.lock",
 * lock "packed-refs.lock", read the loose file and packed-refs under both
 * locks, compare, write packed-refs without the ref through its lock file and
 * rename it into place, unlink the loose file and its reflog, unlock. Never
 * rewrites packed-refs from a copy read before its lock. A rewritten
 * packed-refs gets the modes @p shared asks for (lease__fs_lock).
 * @return 0, LEASE_ECAS (absent, another oid, symbolic), LEASE_ELOCKED (a
 *         lock held past @p wait_ms), LEASE_EAUTH, LEASE_ECONFIG (disk full),
 *         LEASE_EINTERNAL, LEASE_ENOMEM; @p err says which
 */
int lease__fs_delete_ref(const char *commondir, const char *refname, const lease_oid *old_oid,
                         int wait_ms, int shared, char *err, size_t errlen);

/**
 * Find out why a write in @p dir failed: create, write 4 KiB to, fsync and
 * remove a probe file there.
 * @return 0 (the directory takes writes), or lease__fs_errno_class() of the
 *         failure with @p err naming @p dir and the reason
 */
int lease__fs_probe_write(const char *dir, char *err, size_t errlen);

/** What one probe of a polled ref saw (lib/store/wait_poll.c). */
typedef struct lease_probe {
	int present;        /**< the ref exists */
	lease_oid oid;      /**< its oid when present */
	int not_modified;   /**< a conditional read answered "unchanged" (HTTP 304) */
	char etag[128];     /**< validator of the last full answer ("" = none) */
	char etag_ref[320]; /**< the ref @p etag belongs to */
} lease_probe;

/**
 * One read of @p refname for a poll: the backend fills @p p (present, oid)
 * and, when it can read conditionally, sends p->etag (when p->etag_ref is
 * @p refname) and sets p->not_modified or stores the answer's validator.
 * @return 0, or an error (the poll goes on)
 */
typedef int (*lease_probe_fn)(lease_transport *t, const char *refname, lease_probe *p);

/**
 * @p ms (milliseconds) jittered to [0.75, 1.25) of itself, so that processes
 * started together spread out (a poll's pace, a re-read's pause); @p ms
 * itself when no random bytes can be had. wait_poll.c.
 */
int64_t lease__jittered_ms(int64_t ms);

/**
 * The wait_change of a polled backend (github, remote): probe @p refname every
 * @p interval_ms on the transport's clock @p clk (jittered to 75-125 %, never growing) until what
 * it sees differs from (@p known_present, @p known_oid) or @p timeout_ms passed.
 * @p state keeps the validator across calls (owned by the transport). A
 * failed probe is not a change: polling goes on at the same pace.
 * @return 1 (changed), 0 (timeout)
 */
int lease__poll_ref_change(lease_transport *t, const lease_clock *clk, lease_probe *state,
                           lease_probe_fn probe, const char *refname, int known_present,
                           const lease_oid *known_oid, int timeout_ms, int interval_ms);

/**
 * The local wait_change (lib/store/local_watch.c): inotify on the directory
 * of @p refname's loose file under @p commondir and on @p commondir itself
 * (packed-refs), re-checked with @p probe at least every LEASE_WATCH_CAP_MS
 * (a missed event costs at most that) and at once after the watches are set
 * (a change just before them). Without inotify, or on a clock whose sleep is
 * injected (@p clk, a test's virtual time): the probe every
 * LEASE_WATCH_CAP_MS on that clock. Only an event that can change the read
 * (the ref's own file, packed-refs, a watch losing track) brings the re-read
 * forward; writers' lock files do not (issue 43).
 * @param watch_fd the transport's cached inotify descriptor (-1: none), taken
 *        for the wait and given back with its watches removed; the transport
 *        closes it when freed (closing one waits for the kernel's SRCU grace
 *        period, about 2.5 ms, which so stays off the handoff's path). Safe
 *        when two threads wait on one transport (the second makes its own).
 * @return 1 (changed, or a signal interrupted the wait), 0 (timeout)
 */
int lease__fs_wait_ref_change(lease_transport *t, const lease_clock *clk, lease_probe_fn probe,
                              const char *commondir, const char *refname, int known_present,
                              const lease_oid *known_oid, int timeout_ms, int *watch_fd);

/** Longest a local waiter goes without re-reading the ref, ms. */
#define LEASE_WATCH_CAP_MS 150

#endif
