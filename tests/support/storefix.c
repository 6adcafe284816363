/* Stores for tests, opened in one line (storefix.h). */
#define _DEFAULT_SOURCE
#include "support/storefix.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/testrepo.h"

int64_t storefix_clock(void *payload)
{
	return *(const int64_t *)payload;
}

lease_store *storefix_transport(lease_transport *t, const lease_store_options *o)
{
	lease_store *st = NULL;
	char err[512] = "";

	ck_assert_ptr_nonnull(t);
	ck_assert_msg(lease_store_open_transport(&st, t, o, err, sizeof(err)) == 0,
	              "open transport: %s", err);
	return st;
}

lease_store *storefix_mem(memstore **mem, const lease_store_options *o)
{
	return storefix_transport(memstore_new(mem), o);
}

lease_store *storefix_open(const char *spec, const lease_store_options *o)
{
	lease_store *st = NULL;
	char err[512] = "";

	ck_assert_msg(lease_store_open(&st, spec, o, err, sizeof(err)) == 0, "open %s: %s", spec,
	              err);
	return st;
}

lease_store *storefix_local(const char *dir, const lease_store_options *o)
{
	char spec[1100];

	snprintf(spec, sizeof(spec), "local:%s", dir);
	return storefix_open(spec, o);
}

void storefix_local_dir(char *out, size_t outlen)
{
	char err[512] = "";

	ck_assert_int_eq(testrepo_make(out, outlen, TESTREPO_EMPTY_DIR), 0);
	ck_assert_msg(lease_store_init_local(out, NULL, err, sizeof(err)) == 0, "init %s: %s", out,
	              err);
}

lease_op_options storefix_op(const char *owner, const char *host, const char *token,
                             int64_t ttl_seconds)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = owner;
	o.host = host;
	o.lease_token = token;
	o.ttl_seconds = ttl_seconds;
	return o;
}

void storefix_keep_from(lease_keep_options *k, const char *owner, const char *host,
                        const lease_result *acq, int64_t ttl_seconds, int64_t known_ttl)
{
	k->owner = owner;
	k->host = host;
	k->lease_token = acq->payload.lease_token;
	k->ttl_seconds = ttl_seconds;
	k->known_expires_at = acq->payload.expires_at;
	k->known_ttl_seconds = known_ttl;
	k->known_now = acq->now;
}

void storefix_expect_count(lease_store *st, size_t n)
{
	lease_namespace ns;

	memset(&ns, 0, sizeof(ns));
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, n);
	lease_namespace_clear(&ns);
}

void storefix_expect_absent(lease_store *st, const char *name)
{
	lease_ref_state s;

	ck_assert_int_eq(lease_fetch_ref(&s, st, name), 0);
	ck_assert_int_eq(s.present, 0);
	lease_ref_state_clear(&s);
}
