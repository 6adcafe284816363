/* A lease store on the fake GitHub, on a virtual clock, for tests (ghstore.h). */
#include "support/ghstore.h"

#include <stdio.h>

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
