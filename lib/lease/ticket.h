/**
 * @file ticket.h (internal)
 * A fair waiter's own ticket (protocol.md §5 "Fair waiting"): take, renew
 * and remove it. Used by lease_acquire() with opts->fair (runtime.c).
 */
#ifndef REFLEASE_TICKET_H
#define REFLEASE_TICKET_H

#include "reflease/queue.h"

/** The waiter's own ticket. Zero it before the first lease__ticket_take(). */
typedef struct lease_own_ticket {
	lease_ticket t;     /**< as last written (refname, id, key, oid, payload) */
	int held;           /**< 1 while the ref is believed to be there */
	int64_t renewed_at; /**< store time of the last write, s */
} lease_own_ticket;

/**
 * Take a ticket for lease @p name, as the bakery algorithm takes a number,
 * in one write (protocol.md §5 "Fair waiting", issue 39 item 3): list the
 * queue, then create refs/<ns>-queue/<name>/<random id> with key = the
 * store time of the listing in ms, raised past every key listed; the create
 * goes through the one write engine (commit.c, issue 38 item 1). @p since
 * is kept from an earlier ticket of the same wait (0: now).
 * @return 0, or an error (nothing left behind but, on an unknown outcome,
 *         a ticket that expires or is reaped)
 */
int lease__ticket_take(lease_own_ticket *me, lease_store *st, const char *name, const char *owner,
                       const char *host, int64_t ttl_seconds, int64_t since);

/**
 * Renew @p me by CAS (expires_at = now + ttl), through the one write engine
 * (commit.c: settled, bounded, backed off while refused). @return 0;
 * LEASE_EEXPIRED when the ticket had expired (it is not renewed: the caller
 * drops it and takes a new one); LEASE_ECAS when the ref is gone or changed
 * (reaped: held becomes 0) or the store kept refusing while it did not move
 * (held stays 1: the caller drops it); or an error.
 */
int lease__ticket_renew(lease_own_ticket *me, lease_store *st, const char *name);

/** Delete @p me by CAS from its oid through the write engine (best effort);
 *  held becomes 0. */
void lease__ticket_drop(lease_own_ticket *me, lease_store *st);

#endif
