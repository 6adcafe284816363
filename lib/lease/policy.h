/**
 * @file policy.h (internal)
 * One spelling per rule (protocol.md §4–§6): the pure timing and generation
 * rules that the runtime, the heartbeat service, reconcile and the CLI share.
 * No I/O, no store: every input is a number or a payload. The public faces
 * (lease_heartbeat_floor(), lease_lost_at(), …, runtime.h) are thin wrappers.
 */
#ifndef REFLEASE_POLICY_H
#define REFLEASE_POLICY_H

#include "reflease/common.h"
#include "reflease/schema.h"

#include <stdint.h>

/**
 * The heartbeat floor for @p ttl: max(1, ⌊ttl/10⌋) whole seconds
 * (protocol.md §6, decision: integer — store time has whole seconds).
 */
int64_t lease__policy_floor(int64_t ttl);

/**
 * Whether two heartbeat times @p interval seconds apart in one tenure came
 * too often for @p ttl: interval < lease__policy_floor(ttl) (protocol.md §6).
 * The runtime writes a heartbeat exactly when the sweep would not flag it.
 */
int lease__policy_below_floor(int64_t interval, int64_t ttl);

/**
 * Whether @p left seconds (expires_at − now) are less than half of @p ttl:
 * 2·left < ttl (protocol.md §6, F15). A heartbeat is always due then, and a
 * write granted so late is no success.
 */
int lease__policy_less_than_half_left(int64_t left, int64_t ttl);

/**
 * The one heartbeat floor rule (protocol.md §6), for the runtime (may this
 * preserving heartbeat write?) and the sweep (was this one legitimate?):
 * a heartbeat @p since seconds after the last one, over a payload of TTL
 * @p stored_ttl with @p left seconds to its expiry, asking for @p ttl_new,
 * is due when it changes the TTL (@p ttl_changes: always due, cli.md), when
 * less than half of @p ttl_new is left, or when @p since is not below the
 * floor of @p stored_ttl. @return 1 due, 0 too early
 */
int lease__policy_heartbeat_due(int64_t since, int64_t stored_ttl, int ttl_changes, int64_t left,
                                int64_t ttl_new);

/**
 * The longest heartbeat interval for @p ttl, seconds: ⌊ttl/2⌋ (protocol.md
 * §6 "Ceiling"); an interval asked above it is refused, never replaced.
 */
int64_t lease__policy_every_max(int64_t ttl);

/**
 * The heartbeat interval for @p ttl, seconds: @p every when given (> 0),
 * never above lease__policy_every_max(); else ttl/3; at least 1 (§6).
 */
int64_t lease__policy_interval(int64_t ttl, int64_t every);

/** kill_grace for @p ttl: min(10 s, ttl/6), never negative (protocol.md §6). */
double lease__policy_kill_grace(int64_t ttl);

/**
 * How long before its expiry a holder of a lease of @p ttl must consider it
 * lost: kill_grace + 2 s, seconds (§6).
 */
double lease__policy_lost_margin(int64_t ttl);

/**
 * The lost deadline of a lease expiring at @p expires_at with @p ttl:
 * expires_at − lease__policy_lost_margin(), seconds on the store clock (§6).
 */
double lease__policy_lost_deadline(int64_t expires_at, int64_t ttl);

/**
 * The TTL @p p was granted: ttl_seconds when stored; for a pre-bump payload
 * @p assumed (0 = LEASE_TTL_DEFAULT) and *approximate = 1 (§6).
 * @p approximate may be NULL.
 */
int64_t lease__policy_stored_ttl(const lease_payload *p, int64_t assumed, int *approximate);

/**
 * The heartbeat time of @p p: when its write was made, expires_at − its TTL
 * (lease__policy_stored_ttl() with @p assumed; exact when ttl_seconds is
 * stored, else *approximate = 1), seconds on the store clock (§6).
 * @p approximate may be NULL.
 */
int64_t lease__policy_heartbeat_time(const lease_payload *p, int64_t assumed, int *approximate);

/**
 * The TTL a write granted by a preserving write without a TTL option keeps
 * (§6): the stored ttl_seconds (LEASE_TTL_DEFAULT for pre-bump or 0), raised
 * to @p ttl_min. @p approximate (may be NULL) is set for pre-bump payloads.
 */
int64_t lease__policy_kept_ttl(const lease_payload *p, int64_t ttl_min, int *approximate);

/**
 * Whether a live payload of TTL @p ttl built at store time @p built_at is
 * stale at @p now: built more than ttl/10 before (10·(now − built_at) > ttl),
 * so that it is planned again before its CAS (protocol.md §5, F15).
 */
int lease__policy_payload_stale(int64_t built_at, int64_t now, int64_t ttl);

/**
 * Whether a lease expiring at @p expires_at is past it at store time @p now
 * with @p margin seconds of skew allowance: now > expires_at + margin (§4).
 */
int lease__policy_past_expiry(int64_t expires_at, int64_t now, int64_t margin);

/**
 * The first store second at which a lease expiring at @p expires_at may be
 * taken over with @p margin seconds of skew allowance: expires_at + margin
 * + 1 (§4), the first for which lease__policy_past_expiry() holds.
 */
int64_t lease__policy_takeover_at(int64_t expires_at, int64_t margin);

/**
 * Whether @p p counts as expired at @p now with @p margin seconds of skew
 * allowance: a live phase past its expiry (lease__policy_past_expiry(), §4).
 * Released payloads are never expired.
 */
int lease__policy_expired(const lease_payload *p, int64_t now, int64_t margin);

/**
 * `transitions` of the tenure a mint starts when no readable payload is
 * current: 1 + @p highest, or 0 when nothing was readable (@p highest < 0)
 * (§5: the fencing generation never goes backwards).
 */
int64_t lease__policy_next_generation(int64_t highest);

/**
 * Make @p p the `released` payload of a release, break or reap at store
 * time @p now (§5, §7): phase released, expires_at = max(now, acquired_at)
 * (never a chronology violation), ttl_seconds 0, no queued_at (a fair
 * waiter's wait is its acquire commit's only). Token, transitions,
 * acquired_at and identity are the caller's.
 */
void lease__policy_released(lease_payload *p, int64_t now);

#endif
