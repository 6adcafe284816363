/* What the GitHub tools share (ghbench.c, bench_ghlatency.c): a store on
 * "github:octo/leases", a heartbeat made due. Header-only: each
 * tool is built from its own file (mk/bench.mk, mk/github.mk). */
#ifndef REFLEASE_TOOL_GH_H
#define REFLEASE_TOOL_GH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reflease.h"

/* The store on the API at @p api_url with @p token and a @p timeout_s second
 * deadline per operation; on failure the tool @p tool says why and exits 1. */
static lease_store *tool_open_gh(const char *tool, const char *api_url, const char *token,
                                 int timeout_s)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char err[512];

	o.github_api_url = api_url;
	o.github_token = token;
	o.timeout_s = timeout_s;
	if (lease_store_open(&st, "github:octo/leases", &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", tool, err);
		exit(1);
	}
	return st;
}

/* Make the next heartbeat of @p name due: plant a payload whose heartbeat
 * time lies 200 s back (TTL 300), as @p owner with @p token (NULL: the
 * stored ones). Exits 2 when the lease is unreadable, 3 when the write fails. */
static void tool_make_due(lease_store *st, const char *name, const char *owner, const char *token)
{
	lease_ref_state s;
	lease_payload p;
	lease_oid oid;
	char *m = NULL;
	int64_t now;

	memset(&s, 0, sizeof(s));
	if (lease_fetch_ref(&s, st, name) < 0 || !s.present || s.payload_rc != 0)
		exit(2);
	p = s.payload;
	now = lease_store_now(st);
	if (owner)
		snprintf(p.owner, sizeof(p.owner), "%s", owner);
	if (token)
		snprintf(p.lease_token, sizeof(p.lease_token), "%s", token);
	p.expires_at = now + 100;
	p.acquired_at = now - 200;
	p.ttl_seconds = 300;
	if (lease_message_build(&m, &p, LEASE_OP_HEARTBEAT) < 0 ||
	    lease_write_commit(&oid, st, &s.oid, m) < 0 ||
	    lease_cas_replace(st, name, &s.oid, &oid) < 0)
		exit(3);
	free(m);
	lease_ref_state_clear(&s);
}

#endif
