/* The owner-keyed rotation matrix (protocol.md §5). */
#include "lease/rotation.h"

#include <stdio.h>
#include <string.h>

const char *lease__relation_name(lease_relation rel)
{
	switch (rel) {
	case LEASE_REL_FRESH: return "fresh";
	case LEASE_REL_SAME: return "same";
	case LEASE_REL_MOVED: return "moved";
	case LEASE_REL_OTHER: return "other";
	}
	return "unknown";
}

const char *lease__token_change_name(lease_token_change ch)
{
	switch (ch) {
	case LEASE_TOKEN_MINT: return "mint";
	case LEASE_TOKEN_PRESERVE: return "preserve";
	case LEASE_TOKEN_ROTATE: return "rotate";
	}
	return "unknown";
}

lease_relation lease__relation_of(const lease_payload *cur, const char *owner, const char *host)
{
	if (!cur || cur->phase == LEASE_PHASE_RELEASED)
		return LEASE_REL_FRESH;
	if (!owner || strcmp(cur->owner, owner) != 0)
		return LEASE_REL_OTHER;
	if (!host || strcmp(cur->host, host) != 0)
		return LEASE_REL_MOVED;
	return LEASE_REL_SAME;
}

/* The matrix: [relation][presents the current token]. */
static const lease_token_change token_rule[4][2] = {
        [LEASE_REL_FRESH] = {LEASE_TOKEN_MINT, LEASE_TOKEN_MINT},
        [LEASE_REL_SAME] = {LEASE_TOKEN_ROTATE, LEASE_TOKEN_PRESERVE},
        [LEASE_REL_MOVED] = {LEASE_TOKEN_ROTATE, LEASE_TOKEN_ROTATE},
        [LEASE_REL_OTHER] = {LEASE_TOKEN_ROTATE, LEASE_TOKEN_ROTATE},
};

lease_token_change lease__token_rule(lease_relation rel, int presents_current_token)
{
	return token_rule[rel][presents_current_token ? 1 : 0];
}

int lease__rotation_apply(lease_payload *next, const lease_payload *cur, lease_token_change ch,
                          const char *owner, const char *host, int64_t now,
                          int64_t base_transitions, const lease_random *rnd)
{
	char token[LEASE_TOKEN_HEXSZ + 1];
	int rc;

	if (ch == LEASE_TOKEN_PRESERVE) {
		if (!cur)
			return LEASE_EINVALID;
		snprintf(next->owner, sizeof(next->owner), "%s", cur->owner);
		snprintf(next->host, sizeof(next->host), "%s", cur->host);
		memcpy(next->lease_token, cur->lease_token, sizeof(next->lease_token));
		next->transitions = cur->transitions;
		next->acquired_at = cur->acquired_at;
		return 0;
	}
	if ((rc = lease_random_hex(token, LEASE_TOKEN_HEXSZ / 2, rnd)) < 0)
		return rc;
	snprintf(next->owner, sizeof(next->owner), "%s", owner ? owner : "");
	snprintf(next->host, sizeof(next->host), "%s", host ? host : "");
	memcpy(next->lease_token, token, sizeof(next->lease_token));
	next->transitions = cur ? cur->transitions + 1 : base_transitions;
	next->acquired_at = now;
	return 0;
}
