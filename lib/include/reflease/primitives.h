/**
 * @file primitives.h
 * The five post-state-validated primitives (protocol.md §3): every transport
 * call is followed by a re-read; a transport's success report alone is never
 * trusted. Failures set lease_store_last_cas_error() and
 * lease_store_last_error().
 */
#ifndef REFLEASE_PRIMITIVES_H
#define REFLEASE_PRIMITIVES_H

#include "common.h"
#include "object.h"
#include "schema.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One read of a lease ref, with its payload parsed (never fatal). */
typedef struct lease_ref_state {
	char name[LEASE_NAME_MAX + 1]; /**< lease name */
	int present;                   /**< 0: the ref is absent */
	lease_oid oid;                 /**< ref target when present */
	lease_commit commit;           /**< the target's commit, when present */
	int payload_rc;                /**< 0, LEASE_EPAYLOAD or LEASE_EVERSION */
	char payload_error[256];       /**< reason when payload_rc != 0 */
	lease_payload payload;         /**< valid when payload_rc == 0 */
	lease_op op;                   /**< summary op of the commit */
	int has_parent_commit;         /**< parent prefetched (fetch_namespace only) */
	lease_commit parent_commit;
} lease_ref_state;

/** Free what @p s owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_ref_state_clear(lease_ref_state *s);

/**
 * Write a payload commit object (empty tree, @p parent or none, author =
 * committer = reflease <reflease@localhost>, dated now by the store clock).
 * This changes no ref.
 * @param out      receives the new commit's oid
 * @param parent   the previous tip, or NULL for a root commit
 * @return 0, LEASE_ENET, LEASE_EAUTH, LEASE_EINTERNAL
 */
REFLEASE_EXTERN int lease_write_commit(lease_oid *out, lease_store *st, const lease_oid *parent,
                                       const char *message);

/**
 * Create refs/<ns>/<name> at @p new_oid only if absent, then re-read: the ref
 * must equal @p new_oid (protocol.md §3). A transport that reports the ref
 * already present fails with noop set, even if it already equals @p new_oid.
 * @return 0, LEASE_EINVALID (name), LEASE_ECAS (exists; outcome known),
 *         LEASE_EUNVERIFIED (reported success but not observed; outcome unknown),
 *         LEASE_ENET (outcome unknown)
 */
REFLEASE_EXTERN int lease_cas_create(lease_store *st, const char *name, const lease_oid *new_oid);

/**
 * As lease_cas_create() for a full ref name under refs/<ns>/ or
 * refs/<ns>-archive/ (used for archive refs, protocol.md §1).
 */
REFLEASE_EXTERN int lease_cas_create_ref(lease_store *st, const char *refname,
                                         const lease_oid *new_oid);

/**
 * Replace refs/<ns>/<name> from @p old_oid to @p new_oid, then re-read: the ref
 * must equal @p new_oid. old == new fails with noop and no I/O.
 * @return 0, LEASE_EINVALID, LEASE_ECAS (ref still old: a no-op, or a third
 *         oid: lost race), LEASE_EUNVERIFIED, LEASE_ENET
 */
REFLEASE_EXTERN int lease_cas_replace(lease_store *st, const char *name, const lease_oid *old_oid,
                                      const lease_oid *new_oid);

/**
 * As lease_cas_replace() for a full ref name under refs/<ns>/,
 * refs/<ns>-archive/ or refs/<ns>-queue/ (tickets, protocol.md §5 "Fair
 * waiting"); LEASE_EINVALID for any other ref.
 */
REFLEASE_EXTERN int lease_cas_replace_ref(lease_store *st, const char *refname,
                                          const lease_oid *old_oid, const lease_oid *new_oid);

/**
 * As lease_cas_delete() for a full ref name under refs/<ns>/,
 * refs/<ns>-archive/ or refs/<ns>-queue/ (tickets, protocol.md §5 "Fair
 * waiting"); LEASE_EINVALID for any other ref.
 */
REFLEASE_EXTERN int lease_cas_delete_ref(lease_store *st, const char *refname,
                                         const lease_oid *old_oid);

/**
 * Delete refs/<ns>/<name> if it equals @p old_oid, then re-read: the ref must
 * be absent.
 * @return 0, LEASE_EINVALID, LEASE_ECAS, LEASE_EUNVERIFIED, LEASE_ENET
 */
REFLEASE_EXTERN int lease_cas_delete(lease_store *st, const char *name, const lease_oid *old_oid);

/**
 * Read refs/<ns>/<name> and its commit consistently: the payload belongs to
 * the oid the ref held at one instant; its name must match (else payload_rc
 * is LEASE_EPAYLOAD, "name mismatch"). An absent ref is success with
 * present = 0.
 * @param out  filled; the caller clears it with lease_ref_state_clear()
 * @return 0, LEASE_EINVALID (name), LEASE_EUNVERIFIED (inconsistent or
 *         incomplete read), LEASE_ENET
 */
REFLEASE_EXTERN int lease_fetch_ref(lease_ref_state *out, lease_store *st, const char *name);

/**
 * Read the leases @p names (1 to LEASE_SET_MAX distinct names) as
 * lease_fetch_ref() reads one each: through the transport's read_refs in one
 * call where it has one (reflease/sys/transport.h version 4; github: one
 * GraphQL query for the whole set, protocol.md "Sets"), else one by one. A
 * member the batched read leaves unanswered, or answers with another object
 * than its target, is read on its own. Used for a set operation's read of
 * every member.
 * @param out     n states, filled; the caller clears each with
 *                lease_ref_state_clear() (all cleared on an error but the
 *                failed one's name)
 * @param failed  receives the index of the member whose read failed (0 when
 *                the batched read as a whole failed); may be NULL
 * @return 0, LEASE_EINVALID (a name, or n), LEASE_EUNVERIFIED (inconsistent
 *         or incomplete read), LEASE_ENET and the transport's other errors
 */
REFLEASE_EXTERN int lease_fetch_refs(lease_ref_state *out, lease_store *st,
                                     const char *const *names, size_t n, size_t *failed);

/**
 * Is refs/<ns>/<name> still at @p oid? One look at the ref's target alone,
 * without its commit and without waiting, through the transport's
 * read_ref_oid (reflease/sys/transport.h; read_ref when it has none): on
 * github a conditional REST read that costs no counted request while the ref
 * is unchanged since the last look or the last write's re-read (a 304), on
 * remote one ls-remote, on local the ref file. The heartbeat service asks it
 * between heartbeats and reads the lease in full only when it says no
 * (protocol.md §6 "The run guarantee").
 * @return 1 (still at @p oid), 0 (absent or elsewhere: read it in full),
 *         LEASE_EINVALID (name), or the read's error (the store's last
 *         error says why)
 */
REFLEASE_EXTERN int lease_ref_still_at(lease_store *st, const char *name, const lease_oid *oid);

/**
 * Block until refs/<ns>/<name> may no longer be what the caller last read
 * (@p known_present, @p known_oid; NULL = zero oid), or @p timeout_ms passed
 * (protocol.md §5 "Waiting"). Reads only. Uses the transport's wait_change
 * (local: inotify, re-read at least every 150 ms; github: a conditional REST
 * read every ~2 s; remote: an ls-remote every ~2 s); a transport without one
 * sleeps @p timeout_ms. A failed look is not reported: the caller's next
 * read reports errors.
 * @return 1 (may have changed, or a signal came: read again), 0 (no change
 *         seen in @p timeout_ms), LEASE_EINVALID (name)
 */
REFLEASE_EXTERN int lease_wait_ref_change(lease_store *st, const char *name, int known_present,
                                          const lease_oid *known_oid, int timeout_ms);

/**
 * As lease_wait_ref_change() for a full ref name under refs/<ns>/,
 * refs/<ns>-archive/ or refs/<ns>-queue/ (a fair waiter watches the ticket
 * ahead of it, protocol.md §5 "Fair waiting").
 * @return 1, 0, or LEASE_EINVALID (a ref outside those)
 */
REFLEASE_EXTERN int lease_wait_refname_change(lease_store *st, const char *refname,
                                              int known_present, const lease_oid *known_oid,
                                              int timeout_ms);

/** 1 when the store's transport can wait for a change (lease_wait_ref_change()
 *  returns early on one), 0 when it only sleeps. */
REFLEASE_EXTERN int lease_store_can_watch(const lease_store *st);

/** Most leases one set operation names (protocol.md "Sets"). */
#define LEASE_SET_MAX LEASE_PAYLOAD_SET_MAX

/** 1 when the store can write a set in one atomic write (its transport has
 *  cas_many, reflease/sys/transport.h version 3), else 0. */
REFLEASE_EXTERN int lease_store_can_write_set(const lease_store *st);

/**
 * Move every refs/<ns>/@p names[i] from @p olds[i] (all-zero, or @p olds
 * NULL: absent, a create) to @p news[i], all or none, in one atomic write of
 * the store (the transport's cas_many: protocol.md "Sets"), then re-read
 * every member: each must read its new oid (protocol.md §3). 1 to
 * LEASE_SET_MAX distinct names.
 * @return 0 (every member verified), LEASE_ECAS (a compare failed, or a
 *         member moved elsewhere; outcome known when no member reads its
 *         new oid), LEASE_EUNVERIFIED (reported applied but not all members
 *         show it within the verify window), LEASE_ECONFIG (the store cannot
 *         write a set: nothing written, never separate writes instead),
 *         LEASE_EINVALID (names, oids), LEASE_ENET and other transport errors
 */
REFLEASE_EXTERN int lease_cas_set(lease_store *st, const char *const *names, const lease_oid *olds,
                                  const lease_oid *news, size_t n);

/** A ref under refs/<ns>/ whose name breaks protocol.md §1. */
typedef struct lease_invalid_ref {
	char *refname; /**< owned */
	lease_oid oid;
} lease_invalid_ref;

/** The result of lease_fetch_namespace(). Free with lease_namespace_clear(). */
typedef struct lease_namespace {
	lease_ref_state *leases; /**< sorted by name, no duplicates */
	size_t count;
	lease_invalid_ref *invalid; /**< reported as invalid-name, never fatal */
	size_t invalid_count;
} lease_namespace;

/** Free what @p ns owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_namespace_clear(lease_namespace *ns);

/**
 * List every lease of the store's namespace, each with its commit and (when
 * it has one) its parent commit. Look-alike refs outside refs/<ns>/ are
 * filtered, invalid names reported, duplicates rejected, entries whose oid
 * changed between listing and reading read again (bounded).
 * @return 0, LEASE_EUNVERIFIED (inconsistent listing), LEASE_ENET, LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_fetch_namespace(lease_namespace *out, lease_store *st);

/**
 * Called by lease_namespace_each() once per ref of the namespace, in name
 * order: a lease's state @p s (its commit, parent commit and payload read;
 * borrowed for the call), or, for a ref whose name breaks the lease-name rule,
 * @p s NULL and @p invalid (borrowed). @p total is the number of refs listed
 * so far: all of them, or, on a transport that lists part by part
 * (list_refs_each, reflease/sys/transport.h), those of the parts read so far.
 * Return 0 to go on, anything else to stop the walk with that value.
 */
typedef int (*lease_namespace_visit)(const lease_ref_state *s, const lease_invalid_ref *invalid,
                                     size_t total, void *payload);

/**
 * The namespace read in bounded memory (issue 29): one listing, then each
 * lease read and handed to @p visit one at a time, so the caller holds one
 * lease's state beyond the listing (protocol.md §7); on a transport that
 * lists part by part (list_refs_each: GitHub) one part of the listing at a
 * time, a part's failure after others were walked returned as the listing's
 * error (the walk is then incomplete, never reported as whole). Unlike
 * lease_fetch_namespace() it never gives up on one entry: a duplicated
 * listing entry is skipped, and an entry that cannot be read consistently is
 * read on its own — unreadable is then payload_rc LEASE_EPAYLOAD
 * ("unreadable: why"); a lease deleted since the listing is left out.
 * @return 0, the first nonzero value of @p visit, LEASE_ENET, LEASE_ENOMEM,
 *         or the listing's error
 */
REFLEASE_EXTERN int lease_namespace_each(lease_store *st, lease_namespace_visit visit,
                                         void *payload);

/**
 * Highest `transitions` among the archives of lease @p name (protocol.md §1,
 * §5): the refs refs/<ns>-archive/<name>/<stamp>-<token8>, each read through
 * its commit. Unreadable archives are skipped. Used by a first create after a
 * prune, which starts at 1 + this value so `transitions` stays monotonic.
 * @param out    receives the highest value (untouched when none)
 * @param found  receives 1 when at least one readable archive exists, else 0
 * @return 0, LEASE_EINVALID (name), LEASE_ENET, LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_fetch_archive_max_transitions(int64_t *out, int *found, lease_store *st,
                                                        const char *name);

#ifdef __cplusplus
}
#endif
#endif
