/* One spelling per rule (protocol.md §4–§6): floor, interval, kill grace,
 * lost deadline, stored TTL, expiry and the next generation. Pure. */
#include "lease/policy.h"
#include "reflease/runtime.h"

#include <stdlib.h>
#include <string.h>

int64_t lease__policy_floor(int64_t ttl)
{
	return ttl / 10 > 1 ? ttl / 10 : 1;
}

int lease__policy_below_floor(int64_t interval, int64_t ttl)
{
	return interval < lease__policy_floor(ttl);
}

int lease__policy_less_than_half_left(int64_t left, int64_t ttl)
{
	return 2 * left < ttl;
}

int lease__policy_heartbeat_due(int64_t since, int64_t stored_ttl, int ttl_changes, int64_t left,
                                int64_t ttl_new)
{
	return ttl_changes || lease__policy_less_than_half_left(left, ttl_new) ||
	       !lease__policy_below_floor(since, stored_ttl);
}

int64_t lease__policy_every_max(int64_t ttl)
{
	return ttl / 2;
}

int64_t lease__policy_interval(int64_t ttl, int64_t every)
{
	if (every <= 0)
		every = ttl / 3;
	else if (every > lease__policy_every_max(ttl))
		every = lease__policy_every_max(ttl);
	return every < 1 ? 1 : every;
}

double lease__policy_kill_grace(int64_t ttl)
{
	double g = (double)ttl / 6.0;
	return g < 10.0 ? (g > 0 ? g : 0) : 10.0;
}

double lease__policy_lost_margin(int64_t ttl)
{
	return lease__policy_kill_grace(ttl) + 2.0;
}

double lease__policy_lost_deadline(int64_t expires_at, int64_t ttl)
{
	return (double)expires_at - lease__policy_lost_margin(ttl);
}

int64_t lease__policy_stored_ttl(const lease_payload *p, int64_t assumed, int *approximate)
{
	if (p->has_ttl) {
		if (approximate)
			*approximate = 0;
		return p->ttl_seconds;
	}
	if (approximate)
		*approximate = 1;
	return assumed > 0 ? assumed : LEASE_TTL_DEFAULT;
}

int64_t lease__policy_heartbeat_time(const lease_payload *p, int64_t assumed, int *approximate)
{
	return p->expires_at - lease__policy_stored_ttl(p, assumed, approximate);
}

int64_t lease__policy_kept_ttl(const lease_payload *p, int64_t ttl_min, int *approximate)
{
	int64_t ttl = lease__policy_stored_ttl(p, LEASE_TTL_DEFAULT, approximate);

	if (ttl <= 0)
		ttl = LEASE_TTL_DEFAULT;
	return ttl < ttl_min ? ttl_min : ttl; /* readers accept at most the store maximum */
}

int lease__policy_payload_stale(int64_t built_at, int64_t now, int64_t ttl)
{
	return 10 * (now - built_at) > ttl;
}

int lease__policy_past_expiry(int64_t expires_at, int64_t now, int64_t margin)
{
	return now > expires_at + margin;
}

int64_t lease__policy_takeover_at(int64_t expires_at, int64_t margin)
{
	return expires_at + margin + 1;
}

int lease__policy_expired(const lease_payload *p, int64_t now, int64_t margin)
{
	if (p->phase == LEASE_PHASE_RELEASED)
		return 0;
	return lease__policy_past_expiry(p->expires_at, now, margin);
}

int64_t lease__policy_next_generation(int64_t highest)
{
	return highest >= 0 ? highest + 1 : 0;
}

void lease__policy_released(lease_payload *p, int64_t now)
{
	p->phase = LEASE_PHASE_RELEASED;
	p->expires_at = now > p->acquired_at ? now : p->acquired_at;
	p->has_ttl = 1;
	p->ttl_seconds = 0;
	/* the fair waiter's wait belongs to its acquire commit only (§5) */
	p->has_queued_at = 0;
	p->queued_at = 0;
	p->queue_position = 0;
	p->has_set = 0; /* a released member is held by no set ("Sets") */
}

/* ---- the public faces (runtime.h) ----------------------------------------
 * Those needing a store's figures (lease_payload_expired(),
 * lease_payload_kept_ttl()) are runtime.c's: they read the figures and pass
 * them here; this file never sees a store (issue 38). */

int64_t lease_payload_ttl(const lease_payload *p, int64_t assumed_ttl, int *approximate)
{
	return lease__policy_stored_ttl(p, assumed_ttl, approximate);
}

int64_t lease_payload_heartbeat_time(const lease_payload *p, int64_t assumed_ttl, int *approximate)
{
	return lease__policy_heartbeat_time(p, assumed_ttl, approximate);
}

int64_t lease_heartbeat_floor(int64_t ttl_seconds)
{
	return lease__policy_floor(ttl_seconds);
}

int64_t lease_heartbeat_every_max(int64_t ttl_seconds)
{
	return lease__policy_every_max(ttl_seconds);
}

int64_t lease_heartbeat_interval(int64_t ttl_seconds)
{
	return lease__policy_interval(ttl_seconds, 0);
}

double lease_kill_grace(int64_t ttl_seconds)
{
	return lease__policy_kill_grace(ttl_seconds);
}

double lease_lost_at(const lease_payload *p, int64_t assumed_ttl)
{
	return lease__policy_lost_deadline(p->expires_at,
	                                   lease__policy_stored_ttl(p, assumed_ttl, NULL));
}
