/**
 * @file door.h (internal)
 * The reads the rest of lib/lease needs beside the five primitives
 * (primitives.c is the one door to the transport, issue 17): a checked
 * commit read, a bounded first-parent walk, the lenient namespace read,
 * ref listing and ref-lock listing/removal. Nothing else in lib/lease
 * calls the transport vtable (`make lint` checks it).
 */
#ifndef REFLEASE_DOOR_H
#define REFLEASE_DOOR_H

#include "reflease/primitives.h"
#include "reflease/sys/transport.h"
#include "store/frontend.h"

/**
 * Read commit @p oid into @p out (cleared first; free with
 * lease_commit_clear()) and check it is the object asked for.
 * @return 0; LEASE_EUNVERIFIED when another object came back; else the
 *         transport's error. The handle's error message says why.
 */
int lease__read_commit(lease_commit *out, lease_store *st, const lease_oid *oid);

/**
 * As lease_fetch_ref() for the full ref name @p refname under refs/<ns>/,
 * refs/<ns>-archive/ or refs/<ns>-queue/ (a fair waiter's ticket, protocol.md
 * §5 "Fair waiting"; the write engine's reads of it, commit.c): the ref and
 * its commit read consistently; out->name is empty, and a commit that is no
 * lease's payload reads with payload_rc set (not an error).
 * @return 0, LEASE_EINVALID (a ref outside those), LEASE_EUNVERIFIED,
 *         LEASE_ENET and the transport's other errors
 */
int lease__fetch_refname(lease_ref_state *out, lease_store *st, const char *refname);

/**
 * The transport's scan_commits (reflease/sys/transport.h): @p visit gets the
 * message of every commit whose message starts with @p prefix, referenced or
 * not, at most @p max_objects objects looked at.
 * @return 0 (scanned, or stopped by @p visit), LEASE_ENOTFOUND (the store
 *         cannot be scanned: no such call, or a version 1 transport), or the
 *         transport's error
 */
int lease__scan_commits(lease_store *st, const char *prefix, size_t max_objects,
                        int (*visit)(const char *msg, void *payload), void *payload);

/**
 * Called by lease__walk_chain() for each commit: @p oid, and its commit, or
 * NULL when it could not be read (the walk ends after that call).
 * Return nonzero to stop the walk with that value.
 */
typedef int (*lease_chain_visit)(const lease_oid *oid, const lease_commit *c, void *payload);

/**
 * Walk @p start_oid (whose commit @p start is already read; NULL to read
 * it) and its first parents, at most @p max commits, each read with
 * lease__read_commit(). @return the first nonzero value of @p visit, or 0
 * (a root, an unreadable commit, or the bound reached).
 */
int lease__walk_chain(lease_store *st, const lease_oid *start_oid, const lease_commit *start,
                      int max, lease_chain_visit visit, void *payload);

/**
 * List the refs under @p prefix (list_refs is a required call, checked at
 * open). Free with lease_ref_list_clear().
 * @return 0 or the transport's error ("listing PREFIX: why" set)
 */
int lease__list_refs(lease_ref_list *out, lease_store *st, const char *prefix);

/**
 * The namespace read lease by lease (reconcile's slow path when
 * lease_fetch_namespace() gives up on one entry, protocol.md §7): a lease
 * that cannot be read is kept with payload_rc LEASE_EPAYLOAD
 * ("unreadable: why"); each readable tip comes with its parent commit.
 * @return 0, LEASE_ENOMEM, LEASE_ENET, or the listing's error
 */
int lease__fetch_namespace_lenient(lease_namespace *out, lease_store *st);

/**
 * The ref lock files under @p prefix ("" = the store's own lock files),
 * local stores only (others give an empty list). Free with
 * lease_ref_lock_list_clear(). @return 0 or the transport's error
 */
int lease__list_ref_locks(lease_ref_lock_list *out, lease_store *st, const char *prefix);

/**
 * Is a write to lease @p name in progress: its ref lock file present and its
 * writer possibly alive (lease_ref_lock.live; local stores — other stores
 * have no lock files and answer 0)? A set write holds every member's lock
 * from before its first rename to each one's own (protocol.md "Sets").
 * @return 1, 0, LEASE_EINVALID (bad name), or the listing's error
 */
int lease__ref_write_live(lease_store *st, const char *name);

/**
 * Remove the stale lock @p lk when it is still at least @p min_age_s old
 * (protocol.md §7). @return 0, LEASE_ENOTFOUND (gone, or the transport
 * removes none), or the transport's error (message set)
 */
int lease__remove_ref_lock(lease_store *st, const lease_ref_lock *lk, int64_t min_age_s);

/**
 * Wait until one of the @p n refs of @p known (full names under @p prefix,
 * each with the present and oid the caller last read) may have changed, or
 * @p timeout_ms passed (protocol.md §5 "Waiting", issue 38): the
 * transport's wait_refs_change (version 5; github: one conditional listing
 * per poll, 304s free), else a re-read of each ref (read_ref_oid) every
 * 200 ms on a store that can watch, every ttl_min/20 s on one that cannot.
 * The polls' requests end with the wait (lease__store_op_begin). A signal
 * cutting a sleep short counts as a change. Each way looks once more when
 * @p timeout_ms ends: 0 means the refs were as known then.
 * @return 1 (read again), 0 (unchanged when the wait ended), or a negative
 *         error of a read (the caller reads again)
 */
int lease__wait_refs_change(lease_store *st, const char *prefix, const lease_ref_read *known,
                            size_t n, int timeout_ms);

/**
 * As lease_ref_still_at() for the full ref name @p refname under
 * refs/<ns>/ or refs/<ns>-queue/ (a fair waiter's watch of the ticket
 * ahead, wait.c): one read_ref_oid, conditional on github (a 304 is free).
 * @return 1 (present at @p oid), 0 (moved or gone), or a negative error
 */
int lease__refname_still_at(lease_store *st, const char *refname, const lease_oid *oid);

#endif
