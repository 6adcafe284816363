/**
 * @file wait.h (internal)
 * The one wait loop of every acquire --wait (protocol.md §5 "Waiting",
 * issue 38 item 2, issue 40 B68/B69). A plain, set, slot or fair wait is a
 * strategy — what to watch, how to try once, what a round does — over
 * lease__wait_run(), which alone owns:
 *   - both clocks: the wait ends when wait_seconds have passed on the
 *     monotonic clock, or on the store clock less its 1 s rounding when that
 *     runs faster (F22, F24); where store time is this machine's clock, no
 *     single wait is longer than LEASE_WAIT_CLOCK_LOOK_MS, so that a forward
 *     step of the wall clock is seen at once (B69);
 *   - the wait's end: the last answer is read from the store after the
 *     budget is spent, unless the store just answered that nothing changed
 *     and the holder's takeover instant has not come (B68, B69);
 *   - the store's lock wait (at most what the wait has left, at least
 *     LEASE_WAIT_LOCK_FLOOR_MS) and the wait's end for rate-limit sleeps;
 *     a ref lock met at the end of the wait with the lease held by another
 *     is reported as that holder ("held by …", LEASE_EHELD);
 *   - interruption: lease_op_options.wait_cb, called before each wait with
 *     its length and after a wait that ended early with 0 (the one
 *     mechanism: the caller's signal only sets a flag that wait_cb reads;
 *     each wait is cut short by a signal);
 *   - the progress report (progress_cb, every LEASE_WAIT_REPORT_S s).
 */
#ifndef REFLEASE_LEASE_WAIT_H
#define REFLEASE_LEASE_WAIT_H

#include "reflease/runtime.h"
#include "reflease/sys/transport.h"

#include <stddef.h>
#include <stdint.h>

/** The longest single wait where store time is this machine's clock, ms. */
#define LEASE_WAIT_CLOCK_LOOK_MS 2000
/** What the last answer may take past the wait's budget (the store's wait
 *  end: lease__store_set_wait_end), ms: the look at the end of the last
 *  wait and the round after the budget is spent (B68, B69). */
#define LEASE_WAIT_LAST_ANSWER_MS 3000
/** The shortest ref lock wait of an attempt inside a wait, ms. */
#define LEASE_WAIT_LOCK_FLOOR_MS 1000

/** What a round of a strategy found, for the loop (zeroed before each round). */
typedef struct lease_wait_look {
	/** The lease in the way as read (report, takeover instant); NULL = unknown. */
	const lease_result *holder;
	/** 1: @p holder is shown in the report only (its instant is not waited for). */
	int report_only;
	/** Where the loop may put "held by" when a lock ends the wait (or NULL). */
	lease_result *result;
	int64_t queue_position; /**< fair waits: the waiter's place; else 0 */
	/** Seconds until the round must run again anyway (a ticket's renewal,
	 *  the takeover instant of a ticket ahead); <= 0: none. */
	double cap_s;
	/** Watch one ref: the lease @p name (NULL: the full ref @p refname). */
	const char *name;
	const char *refname;
	int present;
	lease_oid oid;
	/** Or several refs under @p prefix (@p n known states; n > 0). */
	const char *prefix;
	const lease_ref_read *known;
	size_t n;
} lease_wait_look;

/** Why a wait ended (lease_wait_strategy.end). */
typedef enum lease_wait_end {
	LEASE_WAIT_DONE = 0,    /**< a round's answer: taken, or an error */
	LEASE_WAIT_RAN_OUT,     /**< the wait ran out, still held */
	LEASE_WAIT_INTERRUPTED, /**< wait_cb stopped it */
} lease_wait_end;

/** A kind of wait: lease__wait_run() calls these with its @p ctx. */
typedef struct lease_wait_strategy {
	const char *what; /**< "lease", "set", "slot": named in messages */
	/**
	 * Try once (@p last: the round after the wait's budget is spent):
	 * @return LEASE_EHELD or LEASE_ELOCKED with @p look filled (wait), else
	 *         the wait's answer (0: taken, or an error).
	 */
	int (*round)(void *ctx, int last, lease_wait_look *look);
	/** The wait is over for @p why with @p rc (may be NULL): clean up, and
	 *  write the strategy's own message over the loop's in @p msg. */
	void (*end)(void *ctx, lease_wait_end why, int rc, char *msg, size_t msglen);
} lease_wait_strategy;

/**
 * Run the wait of @p o (o->wait_seconds; <= 0: one round) with strategy
 * @p s over @p ctx. @p msg (@p msglen) is the result's message: at the end
 * "still held after waiting S s: …" or "interrupted while waiting for the
 * <what>" (then the strategy's end() may rewrite it).
 * @return the last round's code (LEASE_EHELD when the wait ran out or was
 *         interrupted).
 */
int lease__wait_run(lease_store *st, const lease_op_options *o, const lease_wait_strategy *s,
                    void *ctx, char *msg, size_t msglen);

/** One attempt of a plain or set waiting acquire: its code, and in
 *  *@p blocker the lease (as read) to wait for when it is held. */
typedef int (*lease_acquire_attempt)(void *arg, const lease_result **blocker);

/**
 * acquire --wait of one lease or a set (protocol.md §5 "Waiting"): the
 * strategy that watches the blocking ref (*blocker of @p attempt) over
 * lease__wait_run(). @p what names what is waited for ("lease", "set").
 */
int lease__acquire_waiting(lease_store *st, const lease_op_options *opts,
                           lease_acquire_attempt attempt, void *arg, char *msg, size_t msglen,
                           const char *what);

/**
 * acquire --wait --fair (protocol.md §5 "Fair waiting"): the queue ticket
 * strategy over lease__wait_run() (wait.c, fair_wait).
 */
int lease__acquire_fair(lease_result *out, lease_store *st, const char *name,
                        const lease_op_options *opts);

/**
 * One acquire of @p name with no wait (runtime.c): the single-lease
 * operation, its queue entry (@p queued_at, @p queue_position; 0 = none:
 * not a fair waiter) recorded in the commit. Leaves the store's lock wait
 * and wait end as the wait loop set them.
 */
int lease__acquire_once(lease_result *out, lease_store *st, const char *name,
                        const lease_op_options *opts, int64_t queued_at, int64_t queue_position);

/** Seconds until the holder in @p r may be taken over (protocol.md §4),
 *  on the store clock; -1 when there is no such instant (no payload, released). */
double lease__until_takeover(lease_store *st, const lease_result *r);

#endif
