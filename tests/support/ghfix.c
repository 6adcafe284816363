/* The GitHub harness the GitHub suites share (ghfix.h). */
#define _DEFAULT_SOURCE
#include "support/ghfix.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/logcap.h"

fakegh *ghfix_start(const fakegh_options *o)
{
	fakegh_options def;
	fakegh *f = NULL;

	memset(&def, 0, sizeof(def));
	ck_assert_int_eq(fakegh_start(&f, o ? o : &def), 0);
	setenv("GITHUB_API_URL", fakegh_url(f), 1);
	unsetenv("GITHUB_GRAPHQL_URL");
	unsetenv("GITHUB_TOKEN");
	unsetenv("REFLEASE_GITHUB_TOKEN");
	unsetenv("REFLEASE_GITHUB_TOKEN_FILE");
	logcap_reset();
	return f;
}

void ghfix_stop(fakegh *f)
{
	fakegh_stop(f);
	unsetenv("REFLEASE_GITHUB_TOKEN_FILE");
}

int ghfix_open(lease_store **out, const char *token, int timeout_s, int verify_ms)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	char err[512] = "";
	int rc;

	o.github_token = token;
	o.timeout_s = timeout_s;
	o.verify_timeout_ms = verify_ms;
	o.log = logcap;
	o.log_level = LEASE_LOG_DEBUG;
	if ((rc = lease_store_open(out, "github:octo/leases", &o, err, sizeof(err))) < 0)
		fprintf(stderr, "open: %s\n", err);
	return rc;
}

void ghfix_open_ok(lease_store **out, const char *token, int timeout_s, int verify_ms)
{
	ck_assert_int_eq(ghfix_open(out, token, timeout_s, verify_ms), 0);
}

void ghfix_begin(fakegh **fk, lease_store **st, const fakegh_options *o, const char *token,
                 int timeout_s, int verify_ms)
{
	*fk = ghfix_start(o);
	ghfix_open_ok(st, token, timeout_s, verify_ms);
}

void ghfix_end(fakegh **fk, lease_store **st)
{
	lease_store_free(*st);
	*st = NULL;
	ghfix_stop(*fk);
	*fk = NULL;
}

int ghfix_tip(fakegh *f, const char *name, lease_oid *oid)
{
	char ref[300], hex[41];
	int present;

	snprintf(ref, sizeof(ref), "refs/leases/%s", name);
	present = fakegh_get_ref(f, ref, hex);
	if (present == 1)
		ck_assert_int_eq(lease_oid_fromhex(oid, hex), 0);
	return present;
}
