/**
 * @file memstore.h
 * An in-memory transport (kind "mem") that can be told to lie, for testing
 * post-state validation (style.md §8, protocol.md §3). Built on the public
 * transport interface alone (reflease/sys/transport.h).
 *
 * Usage:
 *
 *     memstore *m;
 *     lease_store *st;
 *     lease_store_open_transport(&st, memstore_new(&m), NULL, NULL, 0);
 *     memstore_faults_get(m)->lie_replace = 1;   // next replace: success, no-op
 *     ...
 *     lease_store_free(st);                      // frees the transport and m
 *
 * Refs and commit objects live in memory; oids are unique, real-looking
 * 40-hex ids (a hash of the content and a counter, not SHA-1). Every "next N"
 * knob is decremented by each call it affects. The transport's verify window
 * is 0 by default (set transport->verify_window_ms or the store option
 * verify_timeout_ms to model a lagging store). Not thread-safe; one process.
 */
#ifndef REFLEASE_TEST_MEMSTORE_H
#define REFLEASE_TEST_MEMSTORE_H

#include "reflease/sys/transport.h"

/** The in-memory store behind a "mem" transport (owned by the transport). */
typedef struct memstore memstore;

/** Fault knobs. Counters ("next N calls") unless said otherwise. */
typedef struct memstore_faults {
	int lie_create;       /**< create_ref reports success (0) without acting */
	int lie_replace;      /**< replace_ref reports success without acting */
	int lie_delete;       /**< delete_ref reports success without acting */
	int exists_on_create; /**< create_ref answers LEASE_EEXISTS without acting */
	int fail_before;      /**< a write (create/replace/delete) fails LEASE_ENET, not applied */
	int drop_after_apply; /**< a write applies, then fails LEASE_ENET (answer lost) */
	int stale_reads;      /**< read_ref answers the ref's state before its last write */
	int wrong_commit;     /**< a commit answer (read_commit, read_ref's commit) carries
	                           another oid than the one asked for */
	int stale_list;       /**< list_refs lists each ref's state before its last write */
	int lookalikes;       /**< flag: list_refs adds refs/<ns>-x/a, refs/<ns>x, refs/<ns>/a/b */
	int duplicates;       /**< flag: list_refs lists every entry twice */
	int prefetch;         /**< flag: list_refs prefetches each ref's current commit and
	                           its parent (like a GraphQL batch) */
} memstore_faults;

/** Calls made so far, per vtable entry. */
typedef struct memstore_counts {
	int write_commit, create_ref, replace_ref, delete_ref, read_ref, read_commit, list_refs;
} memstore_counts;

/**
 * Create an in-memory transport. Hand it to lease_store_open_transport(),
 * which takes ownership. @p handle (may be NULL) receives the store's handle,
 * valid until the transport is freed. NULL on allocation failure.
 */
lease_transport *memstore_new(memstore **handle);

/** The fault knobs (borrowed; edit in place). */
memstore_faults *memstore_faults_get(memstore *m);
/** Call counters (borrowed; zero them with memstore_counts_reset()). */
const memstore_counts *memstore_counts_get(const memstore *m);
/** Zero the call counters. */
void memstore_counts_reset(memstore *m);

/**
 * Set @p refname to @p oid directly, bypassing CAS and faults (another
 * writer's action); @p oid NULL deletes it. The target need not exist.
 * @return 0 or LEASE_ENOMEM
 */
int memstore_set_ref(memstore *m, const char *refname, const lease_oid *oid);
/**
 * An atomic cas_many (a set write, protocol.md "Sets") over the memstore
 * @p t, for tests to install as t->cas_many: every compare, then every
 * update; the fault knobs fail_before, lie_replace and drop_after_apply
 * apply to the whole write. @return 0, LEASE_ECAS (nothing applied),
 * LEASE_ENET (injected), LEASE_ENOMEM
 */
int memstore_cas_many(lease_transport *t, const lease_ref_update *u, size_t n);
/**
 * The listing of @p t (its list_refs) under @p prefix into @p all, sorted by
 * ref name (a memstore lists in creation order): for tests that hand it out
 * in parts as a list_refs_each would. @return list_refs' code
 */
int memstore_list_sorted(lease_transport *t, lease_ref_list *all, const char *prefix);
/** 1 and *oid when @p refname is present, else 0. Bypasses faults. */
int memstore_get_ref(const memstore *m, const char *refname, lease_oid *oid);
/** Store a non-commit object (a blob) with @p data; its oid in @p out. 0 or LEASE_ENOMEM. */
int memstore_put_blob(memstore *m, lease_oid *out, const char *data);

#endif
