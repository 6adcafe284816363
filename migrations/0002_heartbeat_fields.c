/*
 * Migration 0002 (1.1.x → 1.2.0): the schema of replaced heartbeats
 * (protocol.md §2 "Heartbeats replace heartbeats", §8).
 *
 * 1.2.0 adds two optional fields that only a heartbeat commit carries:
 * `heartbeats` (how many heartbeats of the tenure's run the commit stands
 * for) and `previous_heartbeat_at` (the time of the heartbeat it replaced).
 * A migration commit is no heartbeat, so the step derives neither: it sets
 * sdlc_version 1.2.0 and a new nonce and leaves every other field as it was
 * (a migration never extends or shortens a lease). The chain below the tip
 * is kept as it is: the next heartbeat is appended on the migration commit
 * and the ones after it replace that heartbeat, so from then on the chain
 * grows with tenures and transitions only.
 */
#include "lease/migration.h"

#include <stdio.h>

/* This file's step; registry.c declares it from the generated registry. */
extern const lease_migration lease_migration_0002;

static int apply_0002(lease_payload *p, const char **method, const lease_migration_input *in,
                      char *err, size_t errlen)
{
	(void)method; /* nothing is derived */
	if (p->version_major != 1 || p->version_minor != 1) {
		lease__error_set(err, errlen, "migration 0002 applies to 1.1.x, not %s",
		                 p->sdlc_version);
		return LEASE_EPAYLOAD;
	}
	/* a 1.1 payload has neither field; nothing read may claim them */
	p->has_heartbeats = 0;
	p->heartbeats = 0;
	p->has_previous_heartbeat = 0;
	p->previous_heartbeat_at = 0;
	return lease__migration_stamp(p, &lease_migration_0002, in);
}

const lease_migration lease_migration_0002 = {
        "0002",
        1,
        1,
        "1.2.0",
        1,
        2,
        0,
        "schema of replaced heartbeats (heartbeats, previous_heartbeat_at on heartbeat "
        "commits only), new nonce; nothing derived, expiry unchanged",
        apply_0002,
};
