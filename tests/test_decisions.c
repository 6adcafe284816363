/* Field case F07 (two related leases checked separately): a decision is made
 * only by a CAS write on the lease's own ref, never by an earlier read — of
 * that ref or of another one. Also the stale-known-state half of it: a
 * heartbeat CAS from a state read before someone else acted is settled by
 * reading again (see test_known_state.c). */
#include <check.h>
#include <string.h>

#include "reflease.h"
#include "support/memstore.h"
#include "support/storefix.h"
#include "support/suitefix.h"

static int64_t clock_s = 1800000000;

START_TEST(test_f07_earlier_read_never_admits)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_op_options a = LEASE_OP_OPTIONS_INIT, b = LEASE_OP_OPTIONS_INIT;
	lease_result seen, r, rb;
	lease_store *st = NULL;
	memstore *mem;
	lease_oid before, after;

	so.clock.now = storefix_clock;
	so.clock.payload = &clock_s;
	st = storefix_mem(&mem, &so);
	a.owner = "job-a";
	a.host = "h1";
	b.owner = "job-b";
	b.host = "h2";
	/* A checks G: free. */
	ck_assert_int_eq(lease_status(&seen, st, "G"), 0);
	ck_assert_int_eq(seen.status, LEASE_STATUS_ABSENT);
	/* B takes G in between. */
	ck_assert_int_eq(lease_acquire(&rb, st, "G", &b), 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/G", &before), 1);
	/* A's earlier read does not admit it: its own CAS decides (held). */
	ck_assert_int_eq(lease_acquire(&r, st, "G", &a), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_str_eq(r.payload.owner, "job-b");
	ck_assert_int_eq(r.holds_token, 0);
	/* A takes E, which is free: G is untouched by it. */
	ck_assert_int_eq(lease_acquire(&r, st, "E", &a), 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/G", &after), 1);
	ck_assert(lease_oid_equal(&before, &after));
	lease_store_free(st);
}
END_TEST

Suite *decisions_suite(void)
{
	return suitefix_suite("decisions", "f07", 0, NULL, ONE(test_f07_earlier_read_never_admits),
	                      NULL);
}
