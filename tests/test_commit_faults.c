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
#include "support/suitefix.h"

static lease_store *st;
static memstore *M;
static lease_transport *T;          /* st's transport */
static int wc_calls, wc_fail_first; /* write_commit calls; the first fails with this code */
static int64_t clk, wc_takes_s;     /* the store clock; store time each commit write takes */
static int (*o_replace_ref)(lease_transport *, const char *, const lease_oid *, const lease_oid *);
static lease_oid others[2]; /* another writer's free states, swapped in before each CAS */
static int swaps;
static int (*o_write_commit)(lease_transport *, lease_oid *, const lease_oid *, const char *,
                             int64_t);

static int f_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                          const char *message, int64_t when)
{
	if (++wc_calls == 1 && wc_fail_first)
		return wc_fail_first;
	clk += wc_takes_s;
	return o_write_commit(t, out, parent, message, when);
}

static int64_t clk_now(void *p)
{
	(void)p;
	return clk;
}

/* Before each CAS another writer moves the ref to a state that leaves the
 * lease free (a release), never the same one twice in a row. */
static int f_replace_ref(lease_transport *t, const char *refname, const lease_oid *old_oid,
                         const lease_oid *new_oid)
{
	ck_assert_int_eq(memstore_set_ref(M, refname, &others[swaps++ % 2]), 0);
	return o_replace_ref(t, refname, old_oid, new_oid);
}

static void open_store(int fail_first)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t = T = memstore_new(&M);
	char err[256] = "";

	ck_assert_ptr_nonnull(t);
	o_write_commit = t->write_commit;
	t->write_commit = f_write_commit;
	o_replace_ref = t->replace_ref;
	wc_calls = swaps = 0;
	wc_fail_first = fail_first;
	wc_takes_s = 0;
	clk = 1800000000;
	so.clock.now = clk_now;
	ck_assert_msg(lease_store_open_transport(&st, t, &so, err, sizeof(err)) == 0, "%s", err);
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

/* A free lease that another writer keeps changing before each CAS, while
 * each commit write takes longer than a tenth of the TTL (the payload goes
 * stale before its CAS, F15): each round rebuilds its payload at most
 * LEASE_ENGINE_REBUILD_MAX times, and the operation gives up after
 * LEASE_ENGINE_ROUNDS_MAX rounds (48 commits written, more than the 32 the
 * engine remembers), the lease never taken. */
START_TEST(changing_lease_with_stale_payloads_gives_up)
{
	lease_op_options o = alice(), c = alice();
	lease_result r;
	lease_oid at;
	int i;

	open_store(0);
	for (i = 0; i < 2; i++) { /* two free states: carol's, then dave's release */
		c.owner = i ? "dave" : "carol";
		c.lease_token = NULL;
		ck_assert_int_eq(lease_acquire(&r, st, "l", &c), 0);
		c.lease_token = r.payload.lease_token;
		ck_assert_int_eq(lease_release(&r, st, "l", &c), 0);
		others[i] = r.oid;
	}
	T->replace_ref = f_replace_ref;
	wc_calls = 0;
	wc_takes_s = 7; /* > ttl/10 = 6 s */
	ck_assert_int_eq(lease_acquire(&r, st, "l", &o), LEASE_ECAS);
	ck_assert_ptr_nonnull(strstr(r.message, "gave up after 12 rounds"));
	ck_assert_int_eq(wc_calls, 12 * 4);
	ck_assert_int_eq(swaps, 12);
	ck_assert(memstore_get_ref(M, "refs/leases/l", &at));
	ck_assert(lease_oid_equal(&at, &others[0]) || lease_oid_equal(&at, &others[1]));
	lease_store_free(st);
}
END_TEST

Suite *commit_faults_suite(void)
{
	return suitefix_suite("commit_faults", "commit_faults", 0, NULL,
	                      ONE(lost_commit_write_is_written_again),
	                      ONE(refused_commit_write_ends_the_operation),
	                      ONE(changing_lease_with_stale_payloads_gives_up), NULL);
}
