/*
 * Migration 0001 (1.0.x → 1.1.0): add ttl_seconds (protocol.md §8).
 *
 * ttl_seconds is the TTL the payload's write granted. It is derived as
 * expires_at − the payload commit's time when that time is known (method
 * commit-time; clamped to the store's TTL bounds), else --assumed-ttl
 * (method assumed); a released payload gets 0 (method released). The step
 * sets sdlc_version 1.1.0 and a new nonce and leaves every other field as it
 * was: a migration never extends or shortens a lease.
 */
#include "lease/migration.h"

#include <stdio.h>

/* This file's step; registry.c declares it from the generated registry. */
extern const lease_migration lease_migration_0001;

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int apply_0001(lease_payload *p, const char **method, const lease_migration_input *in,
                      char *err, size_t errlen)
{
	if (p->version_major != 1 || p->version_minor != 0) {
		lease__error_set(err, errlen, "migration 0001 applies to 1.0.x, not %s",
		                 p->sdlc_version);
		return LEASE_EPAYLOAD;
	}
	if (p->phase == LEASE_PHASE_RELEASED) {
		p->ttl_seconds = 0;
		*method = "released";
	} else if (in->has_commit_time) {
		/* Commit times and timestamps are whole seconds: the difference is
		 * already rounded; clamping keeps it within what a 1.1 reader and
		 * this store's writers accept (protocol.md §2, §4). */
		p->ttl_seconds = clamp(p->expires_at - in->commit_time, in->ttl_min, in->ttl_max);
		*method = "commit-time";
	} else {
		p->ttl_seconds = clamp(in->assumed_ttl, in->ttl_min, in->ttl_max);
		*method = "assumed";
	}
	p->has_ttl = 1;
	return lease__migration_stamp(p, &lease_migration_0001, in);
}

const lease_migration lease_migration_0001 = {
        "0001",
        1,
        0,
        "1.1.0",
        1,
        1,
        0,
        "add ttl_seconds (commit-time, assumed or released), new nonce; expiry unchanged",
        apply_0001,
};
