/**
 * @file sys/transport.h
 * The transport interface: the versioned vtable of raw store calls a backend
 * supplies (style.md §8, protocol.md §3, §9). The library's own backends
 * (local, github, remote) implement it; so may a user, and hand the result
 * to lease_store_open_transport() (reflease/store.h).
 *
 * A transport knows refs, object ids and commit objects only — never leases,
 * phases or tokens. It may lie: report success without acting, report a
 * mismatch for a write that landed, serve a stale read, or answer a read with
 * another object than the one asked for. The library never trusts a report:
 * the primitives (lib/lease/primitives.c, reflease/primitives.h) re-read and
 * validate every post-state (protocol.md §3), so a lying transport costs
 * retries or an "unverified" result, never a wrong lease. What a transport
 * must not do is apply a write whose compare failed: create_ref, replace_ref
 * and delete_ref must be atomic compare-and-swaps on the store's side.
 *
 * Not included by reflease.h: the sys/ headers are for those implementing a
 * transport, not for users of leases.
 *
 * Conventions: every call returns 0 or a negative LEASE_E* code (common.h)
 * unless said otherwise. Strings and arrays a call hands back are allocated
 * with malloc(3) and become the caller's (the library frees them with free(3),
 * through lease_commit_clear(), lease_ref_list_clear() and
 * lease_ref_lock_list_clear()). The commits and lists a call fills arrive
 * zeroed. The library calls a transport from the thread using its store
 * handle, one call at a time — but for list_refs_each, whose part callback
 * may make other calls on the same transport; a handle is not shared between
 * threads.
 */
#ifndef REFLEASE_SYS_TRANSPORT_H
#define REFLEASE_SYS_TRANSPORT_H

#include "../common.h"
#include "../object.h"
#include "../store.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The vtable version this library speaks. A transport sets
 * lease_transport.version to it; lease_store_open_transport() refuses any
 * other value (LEASE_EINVALID) but 1 to 4, whose transports end before the
 * members later versions appended (version 2: scan_commits, set_lock_wait;
 * version 3: read_ref_oid, cas_many, list_refs_each; version 4: read_refs;
 * version 5: set_deadline, wait_refs_change — each treated as NULL). Later versions only append
 * members, so version, kind and the calls below keep their places.
 */
#define LEASE_TRANSPORT_VERSION 5

/**
 * One compare-and-swap of a set write (cas_many, version 3): @p refname from
 * @p old_oid (all-zero: the ref must be absent, i.e. a create) to
 * @p new_oid (never zero: a set write creates or replaces, never deletes).
 */
typedef struct lease_ref_update {
	const char *refname; /**< full ref name, borrowed */
	lease_oid old_oid;   /**< expected target; zero = must be absent */
	lease_oid new_oid;   /**< the new target */
} lease_ref_update;

/**
 * One ref of a batched read (read_refs, version 4). The library sets
 * @p refname and zeroes the rest; the transport fills the answer of each
 * ref it read, as read_ref fills its out-parameters, and sets @p answered.
 */
typedef struct lease_ref_read {
	const char *refname; /**< full ref name asked for, borrowed */
	/** 1 when the transport read this ref (the fields below are its answer);
	 *  0 = no answer for it: the library reads it on its own (read_ref) */
	int answered;
	int present;         /**< 1 present (@p oid its target), 0 absent */
	lease_oid oid;       /**< the ref's target when present */
	int has_commit;      /**< 1 when @p commit is the target's commit */
	lease_commit commit; /**< as read_ref's commit_out: owned (message: malloc),
	                          freed by the library whatever has_commit says */
} lease_ref_read;

/** One entry of a ref listing (list_refs). */
typedef struct lease_ref_entry {
	char *refname; /**< full ref name ("refs/leases/x"), owned (malloc) */
	lease_oid oid; /**< the ref's target */
	/** 1 when the transport prefetched the target's commit into @p commit
	 *  (optional; the library reads it with read_commit otherwise and
	 *  re-reads by ref when commit.oid is not @p oid). */
	int has_commit;
	lease_commit commit;        /**< the prefetched commit, owned (message: malloc) */
	int has_parent_commit;      /**< 1 when @p parent_commit is the commit's first parent */
	lease_commit parent_commit; /**< prefetched parent commit, owned (optional) */
} lease_ref_entry;

/** A ref listing. Start zeroed; fill with lease_ref_list_push(); free with
 *  lease_ref_list_clear(). */
typedef struct lease_ref_list {
	lease_ref_entry *items; /**< count entries, owned */
	size_t count;
	size_t cap; /**< allocated entries */
} lease_ref_list;

/** Free what @p l owns (names, prefetched commits, the array) and zero it.
 *  Accepts NULL. */
REFLEASE_EXTERN void lease_ref_list_clear(lease_ref_list *l);

/**
 * Append an entry for @p refname (copied) at @p oid, without prefetched
 * commits; the transport may then fill the new last entry's has_commit,
 * commit, has_parent_commit and parent_commit.
 * @return 0, or LEASE_ENOMEM (the list keeps its previous entries)
 */
REFLEASE_EXTERN int lease_ref_list_push(lease_ref_list *l, const char *refname,
                                        const lease_oid *oid);

/** A ref lock file ("<ref>.lock") found by list_ref_locks (protocol.md §7). */
typedef struct lease_ref_lock {
	char *refname; /**< the locked ref's full name (without ".lock"), owned (malloc) */
	int64_t mtime; /**< the lock file's modification time, s since the epoch */
	uint64_t dev;  /**< identity of the file (st_dev), re-checked before removal */
	uint64_t ino;  /**< identity of the file (st_ino), re-checked before removal */
	/** 1 when the lock's writer may still be alive: a write to the ref is
	 *  in progress (local: the writer holds the file's flock, or where the
	 *  file shows no flock — git's own lock, a file system without flock —
	 *  the file is under 60 s old); 0 when its writer is gone (a crash's
	 *  leftover, protocol.md §9). A transport that cannot tell sets 1. */
	int live;
} lease_ref_lock;

/** A list of ref lock files: items is a malloc'd array of count entries.
 *  Free with lease_ref_lock_list_clear(). */
typedef struct lease_ref_lock_list {
	lease_ref_lock *items;
	size_t count;
} lease_ref_lock_list;

/** Free what @p l owns (each refname, the array) and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_ref_lock_list_clear(lease_ref_lock_list *l);

/**
 * A raw transport. An implementation embeds it as the first member of its
 * own struct (so a call can cast @p t back), sets version, kind, the figures
 * and the calls, and hands it to lease_store_open_transport(), which takes
 * ownership (free is called by lease_store_free(), or at once when the open
 * fails).
 *
 * A transport wrapping another by copying its vtable must override or clear
 * every call it does not forward itself, later versions' calls included: a
 * copied call is the inner transport's, and the library calls it with the
 * wrapper's pointer.
 *
 * Required calls (lease_store_open_transport() refuses a transport lacking
 * one, LEASE_EINVALID naming it): write_commit, create_ref, replace_ref,
 * delete_ref, read_ref, read_commit, list_refs, last_error, free.
 * Optional calls (NULL = the behaviour each one states): now, list_ref_locks,
 * remove_ref_lock, pace, wait_change, scan_commits and set_lock_wait (version 2),
 * read_ref_oid, cas_many and list_refs_each (version 3), read_refs (version 4),
 * set_deadline and wait_refs_change (version 5).
 *
 * Error codes a call may return beyond those it names: LEASE_ENET
 * (unreachable; a write's outcome is then unknown and settled by re-reading,
 * protocol.md §5), LEASE_EAUTH, LEASE_ERATELIMIT, LEASE_EINVALID,
 * LEASE_ECONFIG, LEASE_ELOCKED, LEASE_ENOMEM — these six say the request was
 * refused, i.e. not applied (protocol.md §3) — and LEASE_EINTERNAL.
 */
struct lease_transport {
	unsigned int version; /**< LEASE_TRANSPORT_VERSION */
	/** The backend's name ("local", "github", "remote", "mem", ...): non-NULL,
	 *  borrowed for the transport's lifetime; lease_store_kind() returns it. */
	const char *kind;
	int skew_margin_s;    /**< clock skew margin for takeover, s (protocol.md §4) */
	int ttl_min_s;        /**< lowest TTL a writer may grant, s (protocol.md §4) */
	int verify_window_ms; /**< default verify window, ms: 0 = reads are authoritative
	                           (local), else how long a write may take to show
	                           (10000 github/remote) (protocol.md §3) */

	/**
	 * Required. Write a commit object with the empty tree, @p parent as its
	 * only parent (NULL: a root commit), @p message verbatim and author =
	 * committer = "reflease <reflease@localhost>" dated @p when (s since the
	 * epoch). Changes no ref. The object should be readable by read_commit
	 * once this returns 0 (one that is not shows up as an incomplete read).
	 * @param out  receives the new commit's oid
	 * @return 0, or an error
	 */
	int (*write_commit)(lease_transport *t, lease_oid *out, const lease_oid *parent,
	                    const char *message, int64_t when);
	/**
	 * Required. Create @p refname at @p new_oid only if it is absent
	 * (atomically on the store's side).
	 * @return 0 (reported created), LEASE_EEXISTS (reported present), or an
	 *         error (LEASE_ENET: outcome unknown)
	 */
	int (*create_ref)(lease_transport *t, const char *refname, const lease_oid *new_oid);
	/**
	 * Required. Replace @p refname from @p old_oid to @p new_oid only if it
	 * holds @p old_oid (atomically on the store's side).
	 * @return 0 (reported replaced), LEASE_ECAS (reported mismatch, including
	 *         an absent ref), or an error
	 */
	int (*replace_ref)(lease_transport *t, const char *refname, const lease_oid *old_oid,
	                   const lease_oid *new_oid);
	/**
	 * Required. Delete @p refname only if it holds @p old_oid (atomically on
	 * the store's side).
	 * @return 0 (reported deleted), LEASE_ECAS (reported mismatch, including
	 *         an absent ref), or an error
	 */
	int (*delete_ref)(lease_transport *t, const char *refname, const lease_oid *old_oid);
	/**
	 * Required. Read @p refname: *@p present 1 and *@p oid its target, or
	 * *@p present 0 (absent is success). When the backend can, it also returns
	 * the target's commit from the same atomic answer: @p commit_out filled
	 * (as read_commit fills it) and *@p has_commit = 1; the library frees
	 * @p commit_out whatever @p has_commit says, and checks commit_out->oid
	 * against *@p oid. A local store may report a symbolic ref or a target
	 * whose object is absent through commit_out->symbolic / missing
	 * (reflease/object.h).
	 * @return 0, or an error
	 */
	int (*read_ref)(lease_transport *t, const char *refname, int *present, lease_oid *oid,
	                int *has_commit, lease_commit *commit_out);
	/**
	 * Required. Read the object @p oid into @p out: oid, is_commit (0 for a
	 * blob, tree or tag, the rest then unset), has_parent and parent (first
	 * parent), time (committer time, s since the epoch; 0 = unknown) and
	 * message (malloc'd, the caller's). The library checks out->oid is @p oid.
	 * @return 0, LEASE_ENOTFOUND (no such object), or an error
	 */
	int (*read_commit)(lease_transport *t, lease_commit *out, const lease_oid *oid);
	/**
	 * Required. List the refs whose name starts with @p prefix (e.g.
	 * "refs/leases/") into @p out with lease_ref_list_push(). May return
	 * look-alikes and duplicates (the primitives filter and reject them) and
	 * may prefetch commits and parents. On an error the library clears @p out.
	 * @return 0, or an error
	 */
	int (*list_refs)(lease_transport *t, lease_ref_list *out, const char *prefix);
	/**
	 * Optional. The store's time into *@p out, s since the epoch
	 * (protocol.md §4; e.g. GitHub's Date header). NULL, or a call that fails,
	 * means time(2). An injected clock (lease_store_options.clock) wins.
	 * @return 0, or an error
	 */
	int (*now)(lease_transport *t, int64_t *out);
	/**
	 * Required. A message for the last failed call, or NULL / "" when there
	 * is none. Borrowed: valid until the next call on @p t. Never a
	 * credential. The library reads it right after a call fails and makes
	 * it, verbatim, the store handle's message (lease_store_last_error()):
	 * the deepest cause, which the layers above do not prefix (protocol.md
	 * §3 "One error channel"). It should say what the returned code does
	 * not — which ref or object, the store's own words — and the library
	 * adds the primitive's words only when it is NULL or "".
	 */
	const char *(*last_error)(lease_transport *t);
	/**
	 * Required. Free the transport and everything it owns. Called once, by
	 * lease_store_free() or by a lease_store_open_transport() that fails.
	 */
	void (*free)(lease_transport *t);

	/* Optional calls (NULL when the backend has no such thing). */

	/**
	 * Optional (local stores). List the lock files of loose refs directly
	 * under @p prefix (e.g. "refs/leases/x.lock"), whatever their age, into
	 * @p out. NULL = the store has no lock files (an empty list). On an error
	 * the library clears @p out.
	 * @return 0, or an error
	 */
	int (*list_ref_locks)(lease_transport *t, lease_ref_lock_list *out, const char *prefix);
	/**
	 * Optional (local stores). Remove @p lk's lock file while holding the
	 * store's own lock file (the one serialising deletes), only if it is
	 * still the same file (dev, inode) and its age at @p now (s since the
	 * epoch) is at least @p min_age_s. NULL = LEASE_ENOTFOUND.
	 * @return 0 (removed), LEASE_ECAS (replaced or too young: kept),
	 *         LEASE_ENOTFOUND (already gone), or an error
	 */
	int (*remove_ref_lock)(lease_transport *t, const lease_ref_lock *lk, int64_t min_age_s,
	                       int64_t now);
	/**
	 * Optional (GitHub). A new write operation of a burst begins — wait until
	 * at least @p gap_ms (monotonic) after the transport's last
	 * content-creating request (GitHub docs, "Best practices for using the
	 * REST API": at least one second between POST/PATCH/PUT/DELETE requests in
	 * bursts). NULL = no wait.
	 * @return the milliseconds waited (0 when none was needed)
	 */
	int64_t (*pace)(lease_transport *t, int64_t gap_ms);
	/**
	 * Optional. Block until @p refname may no longer be what the caller last
	 * read (@p known_present, @p known_oid), or @p timeout_ms passed; reads
	 * only, never writes (protocol.md §5 "Waiting"). Local: inotify on the
	 * loose ref's directory and packed-refs (lib/store/local_watch.c); github:
	 * conditional REST reads; remote: ls-remote polls (lib/store/wait_poll.c).
	 * NULL = the library sleeps @p timeout_ms and reads again.
	 * @return 1 (may have changed: read again), 0 (no change seen in
	 *         @p timeout_ms), or an error (the caller reads again)
	 */
	int (*wait_change)(lease_transport *t, const char *refname, int known_present,
	                   const lease_oid *known_oid, int timeout_ms);

	/* Version 2. */

	/**
	 * Optional (local stores; version 2). Call @p visit with the message of
	 * every commit object in the store whose message starts with @p prefix,
	 * referenced or not — the chain below a tip whose object went missing is
	 * still there (protocol.md §5 "generation", issue 23) — until it returns
	 * nonzero; at most @p max_objects objects are looked at. @p msg is
	 * borrowed for the call. NULL = the store cannot be scanned.
	 * @return 0 (scanned, or stopped by @p visit), or an error
	 */
	int (*scan_commits)(lease_transport *t, const char *prefix, size_t max_objects,
	                    int (*visit)(const char *msg, void *payload), void *payload);
	/**
	 * Optional (local stores; version 2). Bound how long the next writes wait
	 * for another writer's ref lock before LEASE_ELOCKED to @p wait_ms
	 * (< 0: the transport's own default, 3000 ms locally), so that a wait
	 * (`acquire --wait`) ends on time when a stale lock is in the way
	 * (issue 23). NULL = not adjustable.
	 */
	void (*set_lock_wait)(lease_transport *t, int wait_ms);

	/* Version 3. */

	/**
	 * Optional (version 3). Read @p refname's target only, without its
	 * commit: *@p present and *@p oid as read_ref would report them, in one
	 * request and without waiting, as cheaply as the backend can. A backend
	 * with conditional reads keeps the validator of its last answer for the
	 * ref and asks conditionally, so asking "is the ref still at the oid I
	 * wrote?" again and again costs nothing counted while it is (github:
	 * REST GET with If-None-Match, a 304 does not count against GitHub's
	 * primary rate limit; remote: one ls-remote; local: the ref file alone).
	 * The library uses it for the post-state re-read of every write
	 * (protocol.md §3), which so leaves the validator of its own write, and
	 * for the heartbeat service's re-read of the stored lease (protocol.md
	 * §6). NULL = read_ref (the commit read and dropped).
	 * @return 0, or an error
	 */
	int (*read_ref_oid)(lease_transport *t, const char *refname, int *present, lease_oid *oid);

	/**
	 * Optional (version 3; protocol.md "Sets"). Apply the @p n updates @p u
	 * (distinct refs) all together or not at all, atomically on the store's
	 * side: every compare holds and every ref moves, or no ref changes.
	 * Local: git's ref locks taken for the whole set in sorted name order,
	 * released on any failure; github: one GraphQL updateRefs mutation;
	 * remote: an atomic push (not available through libgit2 1.5: NULL).
	 * NULL = the store cannot write a set; a set operation then fails with
	 * LEASE_ECONFIG (exit 78) and never falls back to separate writes.
	 * @return 0 (reported applied), LEASE_ECAS (a compare failed: nothing
	 *         applied), or an error (LEASE_ENET: outcome unknown)
	 */
	int (*cas_many)(lease_transport *t, const lease_ref_update *u, size_t n);

	/**
	 * Optional (GitHub; version 3). list_refs handed over part by part, so
	 * that neither the transport nor the library holds the whole listing
	 * (issue 29, protocol.md §7 "Bounded memory"): call @p part with
	 * successive parts of the listing of refs under @p prefix, each a list
	 * as list_refs fills (look-alikes, duplicates and prefetched commits
	 * allowed), borrowed for the call — the transport frees it afterwards.
	 * Parts come in ascending name order (strcmp of the full names, the
	 * order git and GitHub list refs): the library sorts within a part and
	 * skips an entry that does not sort after every name of the parts before
	 * it (a part repeated, or a ref created during the listing, which a
	 * listing that is not atomic may miss anyway). While @p part runs, the
	 * library may make other calls on @p t (read_ref, read_commit, ...).
	 * A nonzero return of @p part ends the listing at once and is returned.
	 * NULL = list_refs (the whole listing at once). A transport that wraps
	 * another by copying its vtable and overrides list_refs overrides or
	 * clears this one too (else the walk lists through the inner one).
	 * @return 0 (every part handed over), the nonzero value of @p part, or an
	 *         error — also after some parts were handed over: the caller then
	 *         reports the listing as failed, never the parts as the whole
	 */
	int (*list_refs_each)(lease_transport *t, const char *prefix,
	                      int (*part)(lease_ref_list *l, void *payload), void *payload);

	/* Version 4. */

	/**
	 * Optional (GitHub; version 4; protocol.md "Sets"). Read the @p n refs
	 * of @p refs (distinct names, n >= 1) together, as cheaply as the
	 * backend can — github: one GraphQL query with one aliased
	 * Repository.ref(qualifiedName:) per ref, each answered with its target
	 * commit (message, first parent); a ref GraphQL answers null is
	 * confirmed absent by REST within the call, as read_ref does. Fill each
	 * entry as read_ref fills its out-parameters and set its answered to 1.
	 * The answers need not be one atomic snapshot of the refs (each entry
	 * is one ref's state at some instant during the call), and the library
	 * trusts none of them further than a read_ref answer: it checks each
	 * commit against its oid, reads an entry left unanswered (or whose
	 * commit is another object) with read_ref, and validates every
	 * post-state of a set write from these reads (protocol.md §3).
	 * The library uses it for a set operation's read of every member and
	 * for the post-state re-read of the set write (lease_cas_set). NULL =
	 * each ref read on its own (read_ref; read_ref_oid for the re-read).
	 * @return 0 (every entry answered or left unanswered), or an error
	 *         (the library then frees the entries' commits and reports it)
	 */
	int (*read_refs)(lease_transport *t, lease_ref_read *refs, size_t n);

	/* Version 5. */

	/**
	 * Optional (version 5; protocol.md §3 "Deadlines"). The operation that
	 * begins now must end within @p ms milliseconds (> 0): every call the
	 * library makes until the next set_deadline — each request, retry,
	 * connection and rate-limit wait the transport makes inside it — ends
	 * by then, with LEASE_ENET (outcome unknown for a write) when the
	 * store has not answered. @p ms is the operation's --timeout
	 * (lease_store_options.timeout_s), capped at the end of an `acquire
	 * --wait` (never below 1 s); the transport measures it on its own
	 * monotonic clock from the call. @p ms <= 0: the operation ended, no
	 * deadline (each call then bounds itself as it would without this
	 * call). The library calls it where an operation begins and ends, and
	 * again where each operation of a paced burst begins.
	 * NULL = the transport is not told: --timeout then bounds only what the
	 * library does between calls (its retries, settle reads and waits),
	 * never a call that blocks — a transport that can block on a network
	 * should implement it (issue 38).
	 */
	void (*set_deadline)(lease_transport *t, int64_t ms);

	/**
	 * Optional (version 5; protocol.md §5 "Waiting", issue 38). Block until
	 * one of the @p n refs of @p known (full names, each under @p prefix,
	 * e.g. "refs/leases/db@" for db's slots) may no longer be what the caller
	 * last read — its present and oid; refs under @p prefix that are not in
	 * @p known are not watched —, or @p timeout_ms passed; reads only, never
	 * writes. It is how a waiter on several refs (a slot waiter) costs what
	 * a waiter on one costs: github polls the listing of @p prefix
	 * (GET /git/matching-refs/) conditionally, If-None-Match with the
	 * validator of its last answer for @p prefix, so an unchanged listing is
	 * a 304, which GitHub does not count. NULL = the library re-reads each
	 * ref (read_ref_oid) at a steady pace: 200 ms on a store that can watch
	 * (wait_change set), else ttl_min/20 s.
	 * @return 1 (may have changed: read again), 0 (no change seen in
	 *         @p timeout_ms), or an error (the caller reads again)
	 */
	int (*wait_refs_change)(lease_transport *t, const char *prefix, const lease_ref_read *known,
	                        size_t n, int timeout_ms);
};

#ifdef __cplusplus
}
#endif
#endif
