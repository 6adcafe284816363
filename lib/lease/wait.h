/**
 * @file wait.h (internal)
 * What every wait of an acquire shares (protocol.md §5 "Waiting", issue 38):
 * the progress report — when the wait begins and every LEASE_WAIT_REPORT_S s
 * after, through lease_op_options.progress_cb — and the cap it puts on each
 * wait so that a report is never late. Used by the plain and set waits and
 * the fair wait (runtime.c) and the slot wait (slots.c).
 */
#ifndef REFLEASE_LEASE_WAIT_H
#define REFLEASE_LEASE_WAIT_H

#include "reflease/runtime.h"

#include <stdint.h>

/** One wait's report state. Start it with lease__waiter_begin(). */
typedef struct lease_waiter {
	lease_store *st;
	const lease_op_options *o;
	int64_t start_ms; /**< the wait's start, the store's monotonic ms */
	int64_t next_ms;  /**< the next report is due then (0: at once) */
} lease_waiter;

/** Begin the report state of a wait of @p o on @p st (monotonic clock: now). */
void lease__waiter_begin(lease_waiter *w, lease_store *st, const lease_op_options *o);

/**
 * Before a wait of up to @p wait_s seconds: report @p holder (the lease in
 * the way as read: its name and payload's owner, host and expires_at; NULL =
 * unknown) and @p queue_position (fair waits; else 0) when a report is due,
 * then return @p wait_s capped at the next report's instant when a
 * progress_cb is set (else @p wait_s). *@p capped (may be NULL) is 1 when
 * the cap shortened it: a wait that ends then without a change is a report,
 * not a reason to try again.
 */
double lease__waiter_report(lease_waiter *w, const lease_result *holder, int64_t queue_position,
                            double wait_s, int *capped);

#endif
