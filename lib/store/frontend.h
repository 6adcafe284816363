/**
 * @file frontend.h (internal)
 * What the lease layer (lib/lease) may ask of a store beside the public
 * reflease/store.h: an operation's deadline, the pacing of a burst, the ref
 * lock wait, and the handle's error and log. The one store header lib/lease
 * includes (`make lint` checks it; primitives.c adds store/handle.h).
 */
#ifndef REFLEASE_STORE_FRONTEND_H
#define REFLEASE_STORE_FRONTEND_H

#include "reflease/store.h"
#include "util/clock.h"
#include "util/util.h" /* lease__error_set() */

#include <stdint.h>

/**
 * Begin one operation (issue 24 item 3): unless one is already running
 * (nested calls only count), the network transports get a deadline of
 * --timeout (timeout_s) from now for everything the operation sends —
 * each request, retry and rate-limit wait — capped at the wait's end
 * (lease__store_set_wait_end(), never below 1 s) and at @p cap_ms when > 0.
 * Pair with lease__store_op_end(). A no-op on local stores.
 */
void lease__store_op_begin(lease_store *st, int64_t cap_ms);
/**
 * Begin a wait for a change of @p ms (the wait primitives' polls): as
 * lease__store_op_begin() with the deadline @p ms from now, not --timeout —
 * a wait longer than --timeout keeps polling to its end (each poll is one
 * short request) — capped at the wait's end. Pair with lease__store_op_end().
 */
void lease__store_wait_begin(lease_store *st, int64_t ms);
/** End the operation begun by the matching lease__store_op_begin(). */
void lease__store_op_end(lease_store *st);
/**
 * Cap every operation that begins from now on at @p mono_ms (the store's
 * lease__store_mono_ms() clock; a --wait's end, issue 24 item 3), 0 = no cap.
 */
void lease__store_set_wait_end(lease_store *st, int64_t mono_ms);

/**
 * Whether every write to @p st counts against a small request budget
 * (github:, issue 39): the heartbeat service renews at
 * LEASE_RENEW_PACE_BUDGETED there, not at ttl/3 (protocol.md §6).
 */
int lease__store_budgeted(const lease_store *st);

/**
 * 1 when @p st's time (lease_store_now()) is a clock of this machine
 * (time(2), or a test's injected clock in its place) and not the store's own
 * answers (github: its Date headers; a test's clock there stands for them):
 * a wall-clock step moves it, so a wait looks at it every
 * LEASE_WAIT_CLOCK_LOOK_MS (protocol.md §5 "Waiting", B69).
 */
int lease__store_clock_local(const lease_store *st);

/**
 * The store's monotonic clock, ms (lease_store_options.clock.mono_ms, else
 * CLOCK_MONOTONIC): the clock of every wait, verify poll and deadline.
 */
int64_t lease__store_mono_ms(const lease_store *st);
/**
 * Sleep @p ms on the store's clock (lease_store_options.clock.sleep_ms, else
 * nanosleep(2)). @return 0, or -1 when @p mode is LEASE_SLEEP_INTERRUPTIBLE
 * and a signal cut it short
 */
int lease__store_sleep_ms(const lease_store *st, int64_t ms, lease_sleep_mode mode);
/**
 * The fraction of a second of the store's wall clock, [0, 1): 0 under an
 * injected clock.now (whole seconds), else CLOCK_REALTIME's.
 */
double lease__store_wall_fraction(const lease_store *st);
/**
 * The store's time (lease_store_now()) with the local wall clock's fraction
 * of a second (lease__store_wall_fraction()), seconds.
 */
double lease__store_now_precise(lease_store *st);

/** Gap between the content-creating requests of two operations of a burst, ms (issue 15). */
#define LEASE_PACE_MS 1000

/**
 * Mark the start of one write operation of a burst (reconcile --reap /
 * --prune-released, migrate --apply: one per lease): the transport waits
 * until LEASE_PACE_MS have passed since its last content-creating request,
 * and from then on spaces every content-creating request LEASE_PACE_MS
 * apart, the writes of one operation too (GitHub only; a no-op elsewhere;
 * issue 24 item 4). The operation gets its own --timeout (the deadline is
 * set again). @return the milliseconds waited (here and between the
 * writes since the last call), also added to lease__store_paced_ms().
 */
int64_t lease__store_pace(lease_store *st);

/**
 * Bound the ref lock wait of @p st's next writes to @p wait_ms (< 0: the
 * transport's default) through the transport's set_lock_wait (version 2;
 * a no-op without it).
 */
void lease__store_set_lock_wait(lease_store *st, int wait_ms);

/** Total milliseconds lease__store_pace() and the writes of a burst waited on @p st. */
int64_t lease__store_paced_ms(const lease_store *st);

/** Size of the store handle's error message, bytes (NUL included). */
#define LEASE_STORE_ERRMSG_SZ 1024

/**
 * The handle's message buffer (LEASE_STORE_ERRMSG_SZ bytes) while it holds
 * no message, else NULL: the first (deepest) error of a call wins (issue 26
 * step 2, as curl's Curl_failf). lease__store_clear_error() empties it where
 * a call begins.
 */
char *lease__store_error_slot(lease_store *st);
/** The common dir of a local store's repository (borrowed), or NULL when
 *  @p st is not a local store (lease_store_maintain, local_gc.c). */
const char *lease__store_local_commondir(lease_store *st);
/** Forget the handle's message: a call begins (or handled the failure). */
void lease__store_clear_error(lease_store *st);

/**
 * Record why a call on @p st failed, printf-style, and evaluate to @p code:
 * lease__error_set() (util.h, the one error setter) on the handle's buffer,
 * which keeps the first message since the call began — an outer layer
 * calling this after a deeper one did changes nothing, so no message is
 * prefixed twice. The message says only what @p code does not.
 */
#define lease__store_set_error(st, code, ...)                                                      \
	(lease__error_set(lease__store_error_slot(st), LEASE_STORE_ERRMSG_SZ, __VA_ARGS__), (code))
/** Log through the handle's callback when @p level is enabled. */
void lease__store_log(lease_store *st, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif
