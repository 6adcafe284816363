/* lease_op_options.known_oid/known_payload (runtime.h): a heartbeat that CASes
 * from the state its caller last wrote skips the read (one request less on
 * GitHub, issue 6's budget of 3 per heartbeat in `heartbeat --every`), and a
 * stale known state is never less safe: the CAS fails and the outcome is
 * settled by reading (protocol.md §5). */
#include <check.h>
#include <string.h>

#include "reflease.h"
#include "support/memstore.h"
#include "support/storefix.h"
#include "support/suitefix.h"

static int64_t clock_s;

static lease_store *open_mem(memstore **mem)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;

	clock_s = 1800000000;
	o.clock.now = storefix_clock;
	o.clock.payload = &clock_s;
	return storefix_mem(mem, &o);
}

static void acquire(lease_store *st, lease_result *r)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = "alice";
	o.host = "h1";
	o.ttl_seconds = 300;
	ck_assert_int_eq(lease_acquire(r, st, "job", &o), 0);
}

START_TEST(test_known_state_skips_the_read)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_result a, h;
	memstore *mem;
	lease_store *st = open_mem(&mem);
	lease_oid oid;

	acquire(st, &a);
	clock_s += 100;
	memstore_counts_reset(mem);
	o.owner = "alice";
	o.host = "h1";
	o.lease_token = a.payload.lease_token;
	o.known_oid = &a.oid;
	o.known_payload = &a.payload;
	ck_assert_int_eq(lease_heartbeat(&h, st, "job", &o), 0);
	ck_assert_int_eq(h.status, LEASE_STATUS_RENEWED);
	ck_assert_str_eq(h.payload.lease_token, a.payload.lease_token);
	ck_assert_int_eq(h.payload.expires_at, clock_s + 300);
	/* one commit, one CAS, one verifying read: nothing read before deciding */
	ck_assert_int_eq(memstore_counts_get(mem)->write_commit, 1);
	ck_assert_int_eq(memstore_counts_get(mem)->replace_ref, 1);
	ck_assert_int_eq(memstore_counts_get(mem)->read_ref, 1);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/job", &oid), 1);
	ck_assert(lease_oid_equal(&oid, &h.oid));
	lease_store_free(st);
}
END_TEST

START_TEST(test_stale_known_state_is_settled_by_reading)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT, b = LEASE_OP_OPTIONS_INIT;
	lease_result a, br, h;
	memstore *mem;
	lease_store *st = open_mem(&mem);
	lease_oid oid;

	acquire(st, &a);
	/* an administrator breaks the lease: alice's known state is now stale */
	b.owner = "admin";
	b.host = "ops";
	b.force = 1;
	ck_assert_int_eq(lease_break(&br, st, "job", &b), 0);
	clock_s += 100;
	o.owner = "alice";
	o.host = "h1";
	o.lease_token = a.payload.lease_token;
	o.known_oid = &a.oid;
	o.known_payload = &a.payload;
	ck_assert_int_eq(lease_heartbeat(&h, st, "job", &o), LEASE_ENOTHOLDER);
	ck_assert_int_eq(h.status, LEASE_STATUS_NOT_HOLDER);
	/* the released lease is untouched (F13: never recreated) */
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/job", &oid), 1);
	ck_assert(lease_oid_equal(&oid, &br.oid));
	lease_store_free(st);
}
END_TEST

Suite *known_state_suite(void)
{
	return suitefix_suite("known_state", "heartbeat", 0, NULL,
	                      ONE(test_known_state_skips_the_read),
	                      ONE(test_stale_known_state_is_settled_by_reading), NULL);
}
