/**
 * @file renew.h (internal)
 * The renewal point (protocol.md §6 "Renewal point", issue 39): when the
 * heartbeat service renews a lease. Pure: numbers in, numbers out; the
 * keeper (lib/lease/heartbeat.c) measures and calls.
 *
 * A renewal starts when the lease's remaining time falls to what a renewal
 * needs to land before the lost deadline: the lost deadline's margin
 * (kill_grace + 2 s), LEASE_KEEP_MARGIN, the store's skew margin, and
 * LEASE_RENEW_ATTEMPTS attempts of the measured write latency with the
 * keeper's backoff (1 s, 2 s, 4 s) between them — or earlier, at the store's
 * pace (ttl/3 where a write costs nothing; LEASE_RENEW_PACE_BUDGETED on
 * github:, whose writes count against a small budget) or at `--every S`.
 */
#ifndef REFLEASE_RENEW_H
#define REFLEASE_RENEW_H

#include <stdint.h>

/** Attempts a renewal is given before its lost deadline (protocol.md §6). */
#define LEASE_RENEW_ATTEMPTS 4

/** Recent write latencies LEASE_RENEW_WINDOW kept (the largest counts). */
#define LEASE_RENEW_WINDOW 8

/**
 * The renewal pace on a store whose writes count against a request budget
 * (github:), seconds: 375 s, 9.6 renewals an hour = 19.2 content-creating
 * requests (a commit and an updateRefs each) — at most 20 an hour, 25 leases
 * within GitHub's 500/h (issue 39, docs/benchmarks.md).
 */
#define LEASE_RENEW_PACE_BUDGETED 375

/** Recent write latencies of one keeper (zero-initialise). */
typedef struct lease_renew_latency {
	double s[LEASE_RENEW_WINDOW]; /**< seconds */
	unsigned n;                   /**< writes noted so far */
} lease_renew_latency;

/** Note a write (a heartbeat attempt, answered or not) that took @p seconds. */
void lease__renew_note(lease_renew_latency *l, double seconds);

/**
 * The latency a renewal plans with, seconds: the largest of the last
 * LEASE_RENEW_WINDOW writes, rounded up to a whole second, at least 1 s
 * (store time has whole seconds; 1 s before any write was measured).
 */
double lease__renew_latency(const lease_renew_latency *l);

/**
 * What a renewal of a lease of @p ttl needs before its expiry, seconds:
 * lost margin (kill_grace + 2 s) + LEASE_KEEP_MARGIN + @p skew_s + the
 * backoff gaps of LEASE_RENEW_ATTEMPTS attempts (1 + 2 + 4 s) +
 * LEASE_RENEW_ATTEMPTS × @p latency_s (lease__renew_latency()).
 */
double lease__renew_need(int64_t ttl, double latency_s, int skew_s);

/**
 * The renewal lead for @p ttl, seconds: lease__renew_need(), never more than
 * ttl − floor (a renewal sooner after the last write would answer not_due).
 */
double lease__renew_lead(int64_t ttl, double latency_s, int skew_s);

/**
 * The store's renewal pace for @p ttl, seconds: LEASE_RENEW_PACE_BUDGETED
 * when @p budgeted (github:), else ttl/3 (lease__policy_interval()).
 */
int64_t lease__renew_pace(int budgeted, int64_t ttl);

/**
 * The store time of the next renewal after a write at @p since that left the
 * lease expiring at @p expires_at with @p ttl: the earliest of
 * expires_at − lease__renew_lead(), @p since + @p pace (0: none) and the lost
 * deadline − LEASE_KEEP_MARGIN; rounded down to a whole second; never at or
 * before @p since (then since + 1).
 */
double lease__renew_at(int64_t since, int64_t expires_at, int64_t ttl, int64_t pace,
                       double latency_s, int skew_s);

/**
 * The latest store time a renewal of a lease expiring at @p expires_at with
 * @p ttl may start (no pace): min(expires_at − lead, lost deadline −
 * LEASE_KEEP_MARGIN), rounded down to a whole second. May be in the past.
 */
double lease__renew_latest(int64_t expires_at, int64_t ttl, double latency_s, int skew_s);

/**
 * The window a keeper of @p ttl has at least, seconds: from the earliest
 * renewal the floor allows after a write to the lost deadline,
 * ttl − floor − lost margin (lease_keep_window()); lease_keep_check_ttl()
 * wants LEASE_KEEP_MIN_WINDOW of it.
 */
double lease__renew_window(int64_t ttl);

#endif
