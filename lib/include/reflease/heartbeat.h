/**
 * @file heartbeat.h
 * The heartbeat service (protocol.md §6): keep a lease by heartbeating it
 * every S seconds until the caller asks to stop or the lease is lost.
 * Transient failures are retried with backoff until the lost deadline
 * `expires_at − (kill_grace + 2 s)`, so that guarded work can be stopped
 * before anyone else may take the lease over. The service never prints: it
 * reports every attempt through a callback.
 */
#ifndef REFLEASE_HEARTBEAT_H
#define REFLEASE_HEARTBEAT_H

#include <signal.h>

#include "common.h"
#include "runtime.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kill_grace, the lost deadline and the default interval are runtime.h's
 * lease_kill_grace(), lease_lost_at() and lease_heartbeat_interval(). */

/**
 * How long before the lost deadline the heartbeat service starts its last
 * attempt, seconds (protocol.md §6): one second because store time is read
 * in whole seconds, one for the write itself to land. A watchdog that fires
 * at the lost deadline taken a second early (as `run`'s does) therefore never
 * fires at the instant a heartbeat is aimed for.
 */
#define LEASE_KEEP_MARGIN 2.0

/**
 * The least window, seconds, from the earliest heartbeat the floor allows
 * after a write to the lost deadline that `run` accepts (protocol.md §6,
 * issue 40 B67): two attempts of a whole second, a 1 s backoff between them
 * and the watchdog's whole-second slack.
 */
#define LEASE_KEEP_MIN_WINDOW 4.0

/**
 * The window a keeper of a lease of @p ttl_seconds has at least, seconds
 * (protocol.md §6): from the earliest heartbeat the floor allows after a
 * write to the lost deadline, `ttl − max(1, ⌊ttl/10⌋) − (kill_grace + 2 s)`.
 */
REFLEASE_EXTERN double lease_keep_window(int64_t ttl_seconds);

/**
 * Check that heartbeats can keep a lease of @p ttl_seconds (protocol.md §6):
 * after a write, the next one must be allowed by the floor (`max(1 s,
 * ttl/10)`) before it is due at the lost deadline minus LEASE_KEEP_MARGIN,
 * and lease_keep_window() must be at least LEASE_KEEP_MIN_WINDOW, so that a
 * heartbeat has two attempts before `run`'s watchdog. False for TTLs under
 * 9 s (at TTL 6 a heartbeat had 1 s before the watchdog: issue 40 B67).
 * @return 0, or LEASE_EINVALID when no schedule can work (or ttl is out of
 *         1..86400)
 */
REFLEASE_EXTERN int lease_keep_check_ttl(int64_t ttl_seconds);

/**
 * Resolve and check a heartbeat interval (cli.md "--every S"): @p every 0
 * means the default ttl/3; an interval must be at least 1 s and at most
 * ttl/2 (protocol.md §6 "Ceiling"); it is never silently replaced.
 * @param out  receives the interval, seconds
 * @return 0, or LEASE_EINVALID (ttl out of 1..86400, every < 0 or > ttl/2)
 */
REFLEASE_EXTERN int lease_heartbeat_every(int64_t *out, int64_t ttl_seconds, int64_t every);

/**
 * The pace, seconds, at which a keeper re-reads the stored lease of @p st
 * (lease_keep_options.check_seconds): the heartbeat floor of the store's
 * shortest TTL, max(1 s, ⌊ttl_min/10⌋) — 1 s on a local store, 6 s on
 * github/remote — so a write that shortened the lease to the shortest TTL
 * the store takes is seen while heartbeats can still land (protocol.md §6).
 */
REFLEASE_EXTERN double lease_keep_check_interval(const lease_store *st);

/** What a report of the heartbeat service is about. */
typedef enum lease_keep_event {
	LEASE_KEEP_WRITE = 0, /**< a heartbeat succeeded ("renewed" or "not_due") */
	LEASE_KEEP_RETRY,     /**< a transient failure; the service will retry */
	LEASE_KEEP_LOST,      /**< the lease is lost: not holder, expired, or the lost
	                           deadline passed with failures; the service returns */
	LEASE_KEEP_FAILED,    /**< a permanent error (permission, payload, configuration);
	                           the service returns */
	LEASE_KEEP_CHANGED    /**< a re-read (check_seconds) found an earlier stored expiry,
	                           written with this token by someone else (a shorter TTL):
	                           the service adopted it (expires_at, lost_at, next_in) */
} lease_keep_event;

/** One report of the heartbeat service; borrowed for the callback's duration. */
typedef struct lease_keep_report {
	lease_keep_event event;
	int code;                   /**< the heartbeat's return code (0 for WRITE) */
	const lease_result *result; /**< the heartbeat's result (status, payload, message) */
	int attempt;                /**< consecutive failures so far (0 after a success) */
	int64_t now;                /**< store time of the report, seconds since the epoch */
	int64_t expires_at;         /**< the lease's expiry as last written, 0 = unknown */
	double lost_at;             /**< the lost deadline (§6), seconds since the epoch */
	int64_t ttl_seconds;        /**< TTL of the last successful write, seconds */
	double next_in;             /**< seconds until the next attempt (WRITE, RETRY) */
	/** lease_keep_set() after a set write (WRITE, RETRY, and LOST or FAILED
	 *  decided by that write): the write's whole answer, each member's result
	 *  (@p result is its summary); NULL for lease_keep() and for the reports
	 *  of a re-read or of the lost deadline. */
	const lease_set_result *set;
} lease_keep_report;

#define LEASE_KEEP_OPTIONS_VERSION 1

/**
 * Options of lease_keep(). Initialise with LEASE_KEEP_OPTIONS_INIT.
 * Strings are borrowed for the call.
 */
typedef struct lease_keep_options {
	unsigned int version;
	const char *owner;       /**< identity (§5), required */
	const char *host;        /**< identity (§5), required */
	const char *lease_token; /**< the token held, required; a handoff rotation is followed */
	int64_t ttl_seconds;     /**< TTL each heartbeat grants; 0 = the stored ttl_seconds */
	int64_t every_seconds;   /**< interval; 0 = ttl/3; never above ttl/2 */
	/** Known expiry of the lease (e.g. from the acquire that just took it),
	 *  seconds since the epoch. When set, the first heartbeat is due one
	 *  interval after @p known_now; when 0 the first one is written at once. */
	int64_t known_expires_at;
	int64_t known_ttl_seconds; /**< the TTL behind known_expires_at, seconds */
	int64_t known_now;         /**< store time known_expires_at was learnt at */
	/** Stop request, typically set by the caller's signal handler; checked
	 *  before every attempt and during every sleep. May be NULL. */
	const volatile sig_atomic_t *stop;
	/** Sleep @p seconds (> 0). Return non-zero when interrupted by a stop
	 *  request (the CLI's run wakes on its child's exit so). NULL = the
	 *  store's sleep (lease_store_options.clock.sleep_ms, else nanosleep(2))
	 *  in slices of at most 100 ms, checking @p stop between slices. */
	int (*sleep)(double seconds, void *payload);
	void *sleep_payload;
	/** Called for every attempt's outcome. May be NULL. */
	void (*report)(const lease_keep_report *rep, void *payload);
	void *report_payload;
	double backoff_initial_s; /**< first retry delay, seconds; 0 = 1 s */
	double backoff_max_s;     /**< longest retry delay, seconds; 0 = 30 s */
	/** Re-read the stored lease every @p check_seconds while waiting for the
	 *  next heartbeat (0 = never; lease_keep_check_interval() gives the pace
	 *  for a store). Another writer with this token (a guarded command's own
	 *  `heartbeat --ttl`, a transition) may have moved expires_at earlier:
	 *  the service adopts min(own write, stored expiry) and heartbeats at the
	 *  pace the stored TTL demands (LEASE_KEEP_CHANGED); a stored lease that
	 *  is gone, released or under another token is lost at once (protocol.md
	 *  §6 "The run guarantee"). */
	double check_seconds;
	/** The oid of the state behind known_expires_at (e.g. the acquire's
	 *  result.oid), or NULL. The re-reads of @p check_seconds first ask
	 *  whether the ref is still at the state last known under the token
	 *  (lease_ref_still_at(): on github a conditional read, a 304 that costs
	 *  no counted request) and read the lease in full only when it moved;
	 *  without it the first re-read is a full read. */
	const lease_oid *known_oid;
} lease_keep_options;

#define LEASE_KEEP_OPTIONS_INIT                                                                    \
	{                                                                                          \
		LEASE_KEEP_OPTIONS_VERSION, NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL,     \
		        NULL, NULL, 0, 0, 0, NULL                                                  \
	}

/**
 * Keep the lease @p name with heartbeats every interval until @p opts->stop
 * is set or the lease is lost (protocol.md §6, cli.md `heartbeat --every`).
 *
 * Each attempt is one lease_heartbeat(). Success ("renewed", "not_due")
 * schedules the next one an interval later. LEASE_ENOTHOLDER, LEASE_EEXPIRED
 * and LEASE_EHELD mean the lease is lost at once (F21: a different token or a
 * passed expires_at). Transient failures (LEASE_ENET, LEASE_ECAS,
 * LEASE_EUNVERIFIED, LEASE_ERATELIMIT, LEASE_EINTERNAL, LEASE_ENOMEM) are
 * retried with exponential backoff (1 s doubling to 30 s) but never past the
 * lost deadline `expires_at − (kill_grace + 2 s)`; reaching it declares the
 * lease lost. No attempt is scheduled later than LEASE_KEEP_MARGIN before the
 * lost deadline (a shorter interval than asked when the TTL is small). When the expiry is unknown
 * (the first heartbeat failed), the deadline is one interval after the start. Any other error is
 * permanent. A heartbeat that rotates the token (a cross-host handoff, §5) is followed: later
 * heartbeats present the new token.
 *
 * @param last  receives the last heartbeat's result (may be NULL)
 * @return 0 when stopped by the caller; LEASE_ENOTHOLDER or LEASE_EEXPIRED
 *         when lost (LEASE_EEXPIRED also for the lost deadline);
 *         LEASE_EINVALID for bad options; another negative code for a
 *         permanent error
 */
REFLEASE_EXTERN int lease_keep(lease_result *last, lease_store *st, const char *name,
                               const lease_keep_options *opts);

/**
 * Keep a set of leases (protocol.md "Sets"; `run A B … -- CMD`) as
 * lease_keep() keeps one: every heartbeat is one lease_heartbeat_set() with
 * the set's one token, a single atomic write of the members that are due
 * (the single-lease due rule, lease__policy_heartbeat_due(), applied to each
 * member: a member not due is not written; none due writes nothing). The
 * schedule and the lost deadline follow the member whose lost deadline is the
 * earliest (its stored expires_at and TTL); the re-reads of
 * @p opts->check_seconds read every member: one gone, released or under
 * another token is lost at once, one whose stored expiry is earlier than the
 * set's earliest (a heartbeat of that member with a shorter TTL) moves the
 * deadline (LEASE_KEEP_CHANGED). A member lost is the whole set lost: the
 * service returns. Reports carry a summary of the set write: its status, code
 * and message, and the payload of the member that decided (the one that
 * stopped the set, else the one with the earliest lost deadline) as
 * `result`, and the set write's whole answer as `set`.
 * @p opts->known_oid is ignored (the first re-read reads each member in full).
 *
 * @param last   receives the last summary (as the reports'; may be NULL)
 * @param names  1..LEASE_SET_MAX distinct lease names, borrowed for the call
 * @return as lease_keep(); LEASE_EINVALID also for bad @p names, LEASE_ECONFIG
 *         when the store cannot write a set (nothing written), LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_keep_set(lease_result *last, lease_store *st, const char *const *names,
                                   size_t n, const lease_keep_options *opts);

#ifdef __cplusplus
}
#endif
#endif
