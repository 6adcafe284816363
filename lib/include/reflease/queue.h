/**
 * @file queue.h
 * Fair waiting (protocol.md §5 "Fair waiting", issue 28): the tickets of a
 * lease's queue, refs/<ns>-queue/<name>/<key>, each a commit whose message
 * carries the waiter's owner, host, since, expiry, TTL and ticket token. A
 * waiter with opts->fair (lease_acquire(), reflease/runtime.h) takes a
 * ticket, renews it while it waits and takes the lease only when it is free
 * and no older live ticket exists; these calls read the queue for status,
 * list and reconcile.
 */
#ifndef REFLEASE_QUEUE_H
#define REFLEASE_QUEUE_H

#include "common.h"
#include "primitives.h"
#include "schema.h"
#include "store.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Hex digits of a ticket's id (the last component of its ref). */
#define LEASE_TICKET_ID_HEX 16

/** One ticket of a lease's queue as read (protocol.md §5 "Fair waiting"). */
typedef struct lease_ticket {
	char refname[LEASE_NS_MAX + LEASE_NAME_MAX + 48]; /**< refs/<ns>-queue/<name>/<id> */
	char id[LEASE_TICKET_ID_HEX + 1];                 /**< random hex: the tie-break */
	char name[LEASE_NAME_MAX + 1];                    /**< the lease's name */
	uint64_t key;  /**< the order: store time in ms, raised past every key seen; 0 = choosing
	                    (an earlier build's ticket, taken in two writes) */
	lease_oid oid; /**< the ticket ref's target */
	int readable;  /**< 0: its commit or payload could not be read (never live) */
	char owner[LEASE_IDENT_MAX + 1];
	char host[LEASE_IDENT_MAX + 1];
	int64_t since;       /**< store time the waiter took its first ticket, s */
	int64_t expires_at;  /**< store time, s */
	int64_t ttl_seconds; /**< the ticket's TTL, s */
	int live;            /**< readable and expires_at + skew margin is not past at the read */
} lease_ticket;

/**
 * The queue order (protocol.md §5 "Fair waiting"): by key, then by id
 * (a choosing ticket, key 0, sorts first).
 * @return <0, 0 or >0 as @p a comes before, is, or comes after @p b
 */
REFLEASE_EXTERN int lease_ticket_cmp(const lease_ticket *a, const lease_ticket *b);

/** A lease's queue in queue order (oldest first). Free with lease_queue_clear(). */
typedef struct lease_queue {
	lease_ticket *items; /**< count tickets, owned */
	size_t count;
	int64_t now; /**< store time of the read, s */
} lease_queue;

/** Free what @p q owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_queue_clear(lease_queue *q);

/**
 * Read the queue of lease @p name: every ref under refs/<ns>-queue/<name>/
 * with its commit; a ref whose name or payload is not a ticket is kept with
 * readable 0 (never live: it blocks nobody; reconcile --reap removes it).
 * @return 0, LEASE_EINVALID (name), LEASE_ENOMEM, or the store's error
 */
REFLEASE_EXTERN int lease_queue_read(lease_queue *out, lease_store *st, const char *name);

/**
 * Read every queue of the store's namespace (refs/<ns>-queue/) in one
 * listing, as lease_queue_read() does for one: tickets sorted by lease name,
 * then in queue order (list --json).
 * @return 0, LEASE_ENOMEM, or the store's error
 */
REFLEASE_EXTERN int lease_queue_read_all(lease_queue *out, lease_store *st);

/**
 * Position (1 = first) of the ticket @p id among the live keyed tickets of
 * @p q; 0 when it is not one of them.
 */
REFLEASE_EXTERN size_t lease_queue_position(const lease_queue *q, const char *id);

/**
 * Delete the ticket @p t (borrowed, as lease_queue_read() read it) by CAS
 * from t->oid, through the one write engine (protocol.md §5 "Fair waiting",
 * issue 38 item 1: a lost or unanswered delete settled by re-reading, the
 * unknown-outcome bound, the backoff while the store refuses and nothing
 * moves). Used by reconcile --reap and a dead fair waiter's ticket guard.
 * @return 0 (deleted, verified), LEASE_ECAS (the ticket moved or is gone:
 *         not deleted), LEASE_EINVALID (not a ticket ref), or the store's
 *         error (the handle's message says why)
 */
REFLEASE_EXTERN int lease_ticket_delete(lease_store *st, const lease_ticket *t);

/**
 * Delete every ticket of lease @p name that is not live (expired beyond the
 * skew margin, or unreadable), each with lease_ticket_delete() (reconcile
 * --reap, anomaly stale-ticket).
 * @param removed  receives the number deleted (may be NULL)
 * @return 0, or the first error (the sweep goes on past a lost CAS)
 */
REFLEASE_EXTERN int lease_queue_reap(lease_store *st, const char *name, size_t *removed);

#ifdef __cplusplus
}
#endif
#endif
