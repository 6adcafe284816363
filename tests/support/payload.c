/* Lease payloads built by hand for tests (payload.h). */
#define _DEFAULT_SOURCE
#include "support/payload.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void payload_fill(lease_payload *p, const char *name, const char *owner, lease_phase phase,
                  const char *token, int64_t acquired_at, int64_t expires_at)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->sdlc_version, sizeof(p->sdlc_version), "1.1.0");
	p->version_major = 1;
	p->version_minor = 1;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->owner, sizeof(p->owner), "%s", owner);
	snprintf(p->host, sizeof(p->host), "runner-1");
	p->phase = phase;
	snprintf(p->lease_token, sizeof(p->lease_token), "%s", token);
	p->acquired_at = acquired_at;
	p->expires_at = expires_at;
	snprintf(p->nonce, sizeof(p->nonce), "%016llx", (unsigned long long)random());
	p->has_ttl = 1;
	p->ttl_seconds = 300;
}

char *payload_message(const lease_payload *p, lease_op op)
{
	char *m = NULL;

	ck_assert_int_eq(lease_message_build(&m, p, op), 0);
	return m;
}
