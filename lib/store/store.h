/**
 * @file store.h (internal)
 * The versioned vtable of raw transport calls every backend supplies
 * (style.md §8). Transports know refs, oids and commit objects only — never
 * phases or tokens. They may lie (report success without acting, serve a
 * stale read): lib/lease/primitives.c validates every post-state.
 */
#ifndef REFLEASE_STORE_INTERNAL_H
#define REFLEASE_STORE_INTERNAL_H

#include "reflease/primitives.h"
#include "reflease/store.h"

/** Current transport vtable version. */
#define LEASE_TRANSPORT_VERSION 1

/** One entry of a ref listing. */
typedef struct lease_ref_entry {
	char *refname; /**< full ref name, owned */
	lease_oid oid;
	int has_commit; /**< commit prefetched by the transport (optional) */
	lease_commit commit;
	int has_parent_commit; /**< parent commit prefetched (optional) */
	lease_commit parent_commit;
} lease_ref_entry;

/** A ref listing; free with lease_ref_list_clear(). */
typedef struct lease_ref_list {
	lease_ref_entry *items;
	size_t count;
	size_t cap; /**< allocated entries */
} lease_ref_list;

/** Free what @p l owns and zero it. Accepts NULL. */
void lease_ref_list_clear(lease_ref_list *l);
/** Append an entry (refname copied). 0 or LEASE_ENOMEM. */
int lease_ref_list_push(lease_ref_list *l, const char *refname, const lease_oid *oid);

/** A ref lock file ("<ref>.lock") found by list_ref_locks (protocol.md §7). */
typedef struct lease_ref_lock {
	char *refname; /**< the locked ref's full name (without ".lock"), owned */
	int64_t mtime; /**< the lock file's modification time, s since the epoch */
	uint64_t dev;  /**< identity of the file, re-checked before removal */
	uint64_t ino;
} lease_ref_lock;

/** A list of ref lock files; free with lease_ref_lock_list_clear(). */
typedef struct lease_ref_lock_list {
	lease_ref_lock *items;
	size_t count;
} lease_ref_lock_list;

/** Free what @p l owns and zero it. Accepts NULL. */
void lease_ref_lock_list_clear(lease_ref_lock_list *l);

/**
 * A raw transport. Backends embed it as their first member and set the
 * calls. Every call returns 0 or a negative LEASE_E* code and may set a
 * message retrievable with last_error.
 */
struct lease_transport {
	unsigned int version; /**< LEASE_TRANSPORT_VERSION */
	const char *kind;     /**< "local", "github", "remote", "mem" */
	int skew_margin_s;    /**< protocol.md §4 */
	int ttl_min_s;        /**< protocol.md §4 */
	int verify_window_ms; /**< default verify window (0 local, 10000 github/remote) */

	/** Write a commit (empty tree, optional parent, given message and time). */
	int (*write_commit)(lease_transport *t, lease_oid *out, const lease_oid *parent,
	                    const char *message, int64_t when);
	/**
	 * Create @p refname at @p new_oid if absent.
	 * @return 0 (reported created), LEASE_EEXISTS (reported present), or an
	 *         error (LEASE_ENET: outcome unknown)
	 */
	int (*create_ref)(lease_transport *t, const char *refname, const lease_oid *new_oid);
	/**
	 * Replace @p refname from @p old_oid to @p new_oid.
	 * @return 0 (reported replaced), LEASE_ECAS (reported mismatch), or an error
	 */
	int (*replace_ref)(lease_transport *t, const char *refname, const lease_oid *old_oid,
	                   const lease_oid *new_oid);
	/**
	 * Delete @p refname if it equals @p old_oid.
	 * @return 0 (reported deleted), LEASE_ECAS (reported mismatch), or an error
	 */
	int (*delete_ref)(lease_transport *t, const char *refname, const lease_oid *old_oid);
	/**
	 * Read @p refname. When the backend can, it also returns the target's
	 * commit in the same atomic answer (@p commit_out filled, *has_commit = 1).
	 * @return 0 (with *present 0 or 1), or an error
	 */
	int (*read_ref)(lease_transport *t, const char *refname, int *present, lease_oid *oid,
	                int *has_commit, lease_commit *commit_out);
	/**
	 * Read the object @p oid. A non-commit object gives is_commit = 0.
	 * @return 0, LEASE_ENOTFOUND, or an error
	 */
	int (*read_commit)(lease_transport *t, lease_commit *out, const lease_oid *oid);
	/**
	 * List refs whose name starts with @p prefix (e.g. "refs/leases/"). May
	 * return look-alikes and duplicates (primitives filter); may prefetch
	 * commits and parents.
	 */
	int (*list_refs)(lease_transport *t, lease_ref_list *out, const char *prefix);
	/** The store's time, seconds since the epoch; NULL = time(2). */
	int (*now)(lease_transport *t, int64_t *out);
	/** Message for the last failure (borrowed), or NULL. */
	const char *(*last_error)(lease_transport *t);
	/** Free the transport. */
	void (*free)(lease_transport *t);

	/* Optional calls (NULL when the backend has no such thing). */

	/**
	 * Local stores: list the lock files of loose refs directly under
	 * @p prefix (e.g. "refs/leases/x.lock"), whatever their age.
	 * @return 0, or an error
	 */
	int (*list_ref_locks)(lease_transport *t, lease_ref_lock_list *out, const char *prefix);
	/**
	 * Local stores: remove @p lk's lock file while holding the store's own
	 * lock file (the one serialising deletes), only if it is still the same
	 * file (dev, inode) and its age at @p now is at least @p min_age_s.
	 * @return 0 (removed), LEASE_ECAS (replaced or too young: kept),
	 *         LEASE_ENOTFOUND (already gone), or an error
	 */
	int (*remove_ref_lock)(lease_transport *t, const lease_ref_lock *lk, int64_t min_age_s,
	                       int64_t now);
	/**
	 * GitHub: a new write operation of a burst begins — wait until at least
	 * @p gap_ms (monotonic) after the transport's last content-creating
	 * request (GitHub docs, "Best practices for using the REST API": at
	 * least one second between POST/PATCH/PUT/DELETE requests in bursts).
	 * @return the milliseconds waited (0 when none was needed)
	 */
	int64_t (*pace)(lease_transport *t, int64_t gap_ms);
	/**
	 * Block until @p refname may no longer be what the caller last read
	 * (@p known_present, @p known_oid), or @p timeout_ms passed; reads only,
	 * never writes (protocol.md §5 "Waiting"). Local: inotify on the loose
	 * ref's directory and packed-refs (lib/store/local_watch.c); github:
	 * conditional REST reads; remote: ls-remote polls (lib/store/wait_poll.c).
	 * @return 1 (may have changed: read again), 0 (no change seen in
	 *         @p timeout_ms), or an error (the caller reads again)
	 */
	int (*wait_change)(lease_transport *t, const char *refname, int known_present,
	                   const lease_oid *known_oid, int timeout_ms);
};

/** The store handle (opaque to users of reflease/store.h). */
struct lease_store {
	lease_transport *t;
	char ns[LEASE_NS_MAX + 1];
	lease_clock clock;
	lease_random random;
	int verify_timeout_ms;
	int timeout_s;
	lease_log_fn log;
	void *log_payload;
	int log_level;
	char spec[1024];
	char errmsg[1024];
	lease_cas_error cas_err;
	int64_t paced_ms; /**< total waited by lease_store_pace() */
};

/** Gap between the content-creating requests of two operations of a burst, ms (issue 15). */
#define LEASE_PACE_MS 1000

/**
 * Mark the start of one write operation of a burst (reconcile --reap /
 * --prune-released, migrate --apply: one per lease; never between the
 * writes of one operation): the transport waits until LEASE_PACE_MS have
 * passed since its last content-creating request (GitHub only; a no-op
 * elsewhere). @return the milliseconds waited, also added to
 * lease_store_paced_ms().
 */
int64_t lease_store_pace(lease_store *st);

/** Total milliseconds lease_store_pace() waited on @p st. */
int64_t lease_store_paced_ms(const lease_store *st);

/** Set the handle's error message (printf-style) and return @p code. */
int lease_store_set_error(lease_store *st, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/** Log through the handle's callback when @p level is enabled. */
void lease_store_log(lease_store *st, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/**
 * Local backend (lib/store/local.c) over libgit2: @p path is a repository
 * itself (a bare one, or a working tree's top or its .git), never a
 * directory inside one; NULL = the repository the current directory is in,
 * found upward as git does (the CLI's default store, protocol.md §9).
 * @return 0, LEASE_ECONFIG (no repository at @p path, or one owned by
 *         another user and not listed in safe.directory), LEASE_ENOMEM
 */
int lease_local_transport_new(lease_transport **out, const char *path, char *err, size_t errlen);

/**
 * GitHub backend (lib/store/github.c) over libcurl + jansson, protocol.md §9:
 * @p arg is "OWNER/REPO". The token comes from opts->github_token, else
 * REFLEASE_GITHUB_TOKEN, else GITHUB_TOKEN; base URLs from GITHUB_API_URL /
 * GITHUB_GRAPHQL_URL (https, or http towards loopback only). No I/O here.
 * @return 0, LEASE_EINVALID (bad OWNER/REPO), LEASE_ECONFIG (no token, URL
 *         refused), LEASE_ENOMEM
 */
int lease_github_transport_new(lease_transport **out, const char *arg,
                               const lease_store_options *opts, char *err, size_t errlen);

/**
 * Make a GitHub transport read through REST only (what it falls back to by
 * itself when GraphQL does not see refs/<ns>/); tests replaying recorded
 * REST traffic use it. A no-op on other transports.
 */
void lease_github_set_rest_only(lease_transport *t);

/**
 * The HTTP client of a GitHub transport (borrowed), for tests and the fuzz
 * target (lease_http_set_responder(), lease_http_set_body_cap() in http.h);
 * NULL for other transports.
 */
struct lease_http *lease_github_http(lease_transport *t);

/**
 * 1 when REFLEASE_GIT_TOKEN may be offered to @p url: https://, or http://
 * towards a loopback host as lease_host_is_loopback() parses it (never a
 * name that merely begins with "127."); 0 otherwise (issue 15, protocol.md §9).
 */
int lease_remote_token_allowed(const char *url);

/**
 * Remote backend (lib/store/remote.c, protocol.md §9 "remote") for @p url:
 * git://, http(s)://, ssh:// through libgit2's smart protocol with a local
 * object cache under $XDG_CACHE_HOME/reflease/; file:// served by the local
 * backend's code with the remote figures (30 s skew, TTL >= 60 s, 10 s
 * verify window). Reads REFLEASE_GIT_TOKEN (https credential) once.
 * @return 0, LEASE_EINVALID (unsupported URL, password in the URL),
 *         LEASE_ECONFIG (no cache directory, no repository for file://),
 *         LEASE_ENOMEM, LEASE_EINTERNAL
 */
int lease_remote_transport_new(lease_transport **out, const char *url, char *err, size_t errlen);

/**
 * Filesystem helpers for local stores (lib/store/ref_locks.c): list the
 * "*.lock" files directly under <commondir>/<prefix>.
 * @return 0, LEASE_ENOMEM, LEASE_EINTERNAL
 */
int lease_fs_list_ref_locks(lease_ref_lock_list *out, const char *commondir, const char *prefix);

/**
 * Remove @p lk's lock file under <commondir> while holding @p store_lock
 * (O_CREAT|O_EXCL, waited for up to 3 s), only when it is still the same
 * file (dev, inode) and at least @p min_age_s old at @p now (protocol.md §7).
 * @return 0, LEASE_ECAS (changed or too young), LEASE_ENOTFOUND, LEASE_EINTERNAL
 */
int lease_fs_remove_ref_lock(const char *commondir, const char *store_lock,
                             const lease_ref_lock *lk, int64_t min_age_s, int64_t now, char *err,
                             size_t errlen);

/**
 * Error class of a filesystem errno (protocol.md §9): EACCES, EPERM, EROFS
 * -> LEASE_EAUTH (exit 77); ENOSPC, EDQUOT -> LEASE_ECONFIG (exit 78, "the
 * disk is full"); anything else LEASE_EINTERNAL.
 */
int lease_fs_errno_class(int e);
/** A parenthesised hint for @p e (" (the disk is full: ...)"), or "" (static). */
const char *lease_fs_errno_hint(int e);

/**
 * Take git's lock on @p path: create "<path>.lock" O_EXCL (making missing
 * directories below @p commondir), waiting up to @p wait_ms while another
 * writer holds it. The caller writes through *@p fd and unlinks or renames
 * the lock file.
 * @return 0, LEASE_ELOCKED (still held), LEASE_ENOTFOUND (a parent path is a
 *         file), LEASE_EAUTH / LEASE_ECONFIG (lease_fs_errno_class), LEASE_ENOMEM
 */
int lease_fs_lock(int *fd, const char *commondir, const char *path, int wait_ms, char *err,
                  size_t errlen);

/**
 * Delete @p refname of the repository whose common dir is @p commondir if it
 * holds @p old_oid, by git's protocol (protocol.md §9): lock "<ref>.lock",
 * lock "packed-refs.lock", read the loose file and packed-refs under both
 * locks, compare, write packed-refs without the ref through its lock file and
 * rename it into place, unlink the loose file and its reflog, unlock. Never
 * rewrites packed-refs from a copy read before its lock.
 * @return 0, LEASE_ECAS (absent, another oid, symbolic), LEASE_ELOCKED (a
 *         lock held past @p wait_ms), LEASE_EAUTH, LEASE_ECONFIG (disk full),
 *         LEASE_EINTERNAL, LEASE_ENOMEM; @p err says which
 */
int lease_fs_delete_ref(const char *commondir, const char *refname, const lease_oid *old_oid,
                        int wait_ms, char *err, size_t errlen);

/**
 * Find out why a write in @p dir failed: create, write 4 KiB to, fsync and
 * remove a probe file there.
 * @return 0 (the directory takes writes), or lease_fs_errno_class() of the
 *         failure with @p err naming @p dir and the reason
 */
int lease_fs_probe_write(const char *dir, char *err, size_t errlen);

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
 * The wait_change of a polled backend (github, remote): probe @p refname every
 * @p interval_ms (jittered to 75-125 %, never growing) until what it sees
 * differs from (@p known_present, @p known_oid) or @p timeout_ms passed.
 * @p state keeps the validator across calls (owned by the transport). A
 * failed probe is not a change: polling goes on at the same pace.
 * @return 1 (changed), 0 (timeout)
 */
int lease_poll_ref_change(lease_transport *t, lease_probe *state, lease_probe_fn probe,
                          const char *refname, int known_present, const lease_oid *known_oid,
                          int timeout_ms, int interval_ms);

/**
 * The local wait_change (lib/store/local_watch.c): inotify on the directory
 * of @p refname's loose file under @p commondir and on @p commondir itself
 * (packed-refs), re-checked with @p probe at least every LEASE_WATCH_CAP_MS
 * (a missed event costs at most that) and at once after the watches are set
 * (a change just before them). Without inotify: the probe every
 * LEASE_WATCH_CAP_MS.
 * @return 1 (changed, or an event on the ref or packed-refs), 0 (timeout)
 */
int lease_fs_wait_ref_change(lease_transport *t, lease_probe_fn probe, const char *commondir,
                             const char *refname, int known_present, const lease_oid *known_oid,
                             int timeout_ms);

/** Longest a local waiter goes without re-reading the ref, ms. */
#define LEASE_WATCH_CAP_MS 150

#endif
