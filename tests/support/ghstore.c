/* A lease store on the fake GitHub, on a virtual clock, for tests (ghstore.h). */
#define _DEFAULT_SOURCE
#include "support/ghstore.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ghstore_start(fakegh **out, const fakegh_options *o, vclock *vc)
{
	vclock_init(vc, 0);
	return fakegh_start_clocked(out, o, vclock_ms_cb, vc);
}

void ghstore_options(lease_store_options *o, const char *api_url, const char *token, int timeout_s,
                     int verify_ms, vclock *vc, lease_log_fn log)
{
	const lease_store_options init = LEASE_STORE_OPTIONS_INIT;

	*o = init;
	if (vc)
		vclock_apply(vc, &o->clock, 0);
	o->github_api_url = api_url;
	o->github_token = token;
	o->timeout_s = timeout_s;
	o->verify_timeout_ms = verify_ms;
	o->log = log;
	o->log_level = LEASE_LOG_DEBUG;
}

int ghstore_open(lease_store **out, const lease_store_options *o)
{
	char err[512];
	int rc = lease_store_open(out, "github:octo/leases", o, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "open: %s\n", err);
	return rc;
}

char *ghstore_message(const char *name, const char *owner, const char *token, lease_phase phase,
                      unsigned transitions, int64_t acquired_at, int64_t expires_at)
{
	lease_payload p;
	char *m = NULL;

	memset(&p, 0, sizeof(p));
	snprintf(p.sdlc_version, sizeof(p.sdlc_version), "1.1.0");
	p.version_major = 1;
	p.version_minor = 1;
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.owner, sizeof(p.owner), "%s", owner);
	snprintf(p.host, sizeof(p.host), "runner-1");
	p.phase = phase;
	snprintf(p.lease_token, sizeof(p.lease_token), "%s", token);
	p.transitions = transitions;
	p.acquired_at = acquired_at;
	p.expires_at = expires_at;
	snprintf(p.nonce, sizeof(p.nonce), "%016llx", (unsigned long long)random());
	p.has_ttl = 1;
	p.ttl_seconds = 300;
	ck_assert_int_eq(lease_message_build(&m, &p, LEASE_OP_ACQUIRE), 0);
	return m;
}

int ghstore_ref_at(fakegh *f, const char *name, lease_oid *oid)
{
	char ref[300], hex[41];
	int present;

	snprintf(ref, sizeof(ref), "refs/leases/%s", name);
	present = fakegh_get_ref(f, ref, hex);
	if (present == 1)
		ck_assert_int_eq(lease_oid_fromhex(oid, hex), 0);
	return present;
}

void ghstore_stop(lease_store **st, fakegh **fk)
{
	lease_store_free(*st);
	*st = NULL;
	fakegh_stop(*fk);
	*fk = NULL;
}
