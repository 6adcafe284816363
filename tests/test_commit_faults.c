/* The write-and-settle engine's (commit.c's) commit-write faults
 * (protocol.md §3, §5 "Settling"): a commit write whose answer is lost is
 * nothing published — the engine reads again, decides again and writes
 * once more, one lease chain with one acquire; a commit write the store
 * refuses ends the operation with that error, nothing written. Over the
 * in-memory transport whose write_commit this test can fail. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "reflease.h"
#include "support/memstore.h"

static lease_store *st;
static memstore *M;
static int wc_calls, wc_fail_first; /* write_commit calls; the first fails with this code */
static int (*o_write_commit)(lease_transport *, lease_oid *, const lease_oid *, const char *,
                             int64_t);

static int f_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                          const char *message, int64_t when)
{
	if (++wc_calls == 1 && wc_fail_first)
		return wc_fail_first;
	return o_write_commit(t, out, parent, message, when);
}

static void open_store(int fail_first)
{
	lease_transport *t = memstore_new(&M);
	char err[256] = "";

	ck_assert_ptr_nonnull(t);
	o_write_commit = t->write_commit;
	t->write_commit = f_write_commit;
	wc_calls = 0;
	wc_fail_first = fail_first;
	ck_assert_msg(lease_store_open_transport(&st, t, NULL, err, sizeof(err)) == 0, "%s", err);
}

static lease_op_options alice(void)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = "alice";
	o.host = "h";
	o.ttl_seconds = 60;
	return o;
}

START_TEST(lost_commit_write_is_written_again)
{
	lease_op_options o = alice();
	lease_history h;
	lease_result r;
	lease_oid tip;

	open_store(LEASE_ENET);
	ck_assert_msg(lease_acquire(&r, st, "l", &o) == 0, "%s", r.message);
	ck_assert_int_eq(wc_calls, 2);
	ck_assert_int_eq(memstore_counts_get(M)->create_ref, 1);
	ck_assert(memstore_get_ref(M, "refs/leases/l", &tip));
	ck_assert(lease_oid_equal(&tip, &r.oid));
	ck_assert_int_eq(lease_history_read(&h, st, "l", 0, 0), 0);
	ck_assert_uint_eq(h.count, 1);
	ck_assert_int_eq(h.items[0].op, LEASE_OP_ACQUIRE);
	lease_history_free(&h);
	lease_store_free(st);
}
END_TEST

START_TEST(refused_commit_write_ends_the_operation)
{
	lease_op_options o = alice();
	lease_result r;

	open_store(LEASE_EAUTH);
	ck_assert_int_eq(lease_acquire(&r, st, "l", &o), LEASE_EAUTH);
	ck_assert_int_eq(r.code, LEASE_EAUTH);
	ck_assert_int_eq(wc_calls, 1);
	ck_assert_int_eq(memstore_counts_get(M)->create_ref, 0);
	ck_assert(!memstore_get_ref(M, "refs/leases/l", NULL));
	lease_store_free(st);
}
END_TEST

Suite *commit_faults_suite(void);
Suite *commit_faults_suite(void)
{
	Suite *s = suite_create("commit_faults");
	TCase *tc = tcase_create("commit_faults");

	tcase_add_test(tc, lost_commit_write_is_written_again);
	tcase_add_test(tc, refused_commit_write_ends_the_operation);
	suite_add_tcase(s, tc);
	return s;
}
