/* The transport interface's check at open (reflease/sys/transport.h,
 * lease_store_open_transport()): a wrong vtable version, a missing kind or a
 * missing required call is refused with LEASE_EINVALID naming it, and the
 * transport is freed (ownership passes also on failure); the optional calls
 * may all be absent, and each absence behaves as the header says. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease/door.h"
#include "reflease/primitives.h"
#include "reflease/sys/transport.h"
#include "support/memstore.h"

/* The required calls, in the order the open checks them. */
static const char *const required[] = {"write_commit", "create_ref", "replace_ref",
                                       "delete_ref",   "read_ref",   "read_commit",
                                       "list_refs",    "last_error", "free"};
#define NREQUIRED ((int)(sizeof(required) / sizeof(required[0])))

/* Frees seen by counting_free, and the memstore's own free it forwards to. */
static int frees;
static void (*mem_free_fn)(lease_transport *t);

static void counting_free(lease_transport *t)
{
	frees++;
	mem_free_fn(t);
}

/* A memstore transport whose free is counted. */
static lease_transport *counted_transport(void)
{
	lease_transport *t = memstore_new(NULL);

	ck_assert_ptr_nonnull(t);
	frees = 0;
	mem_free_fn = t->free;
	t->free = counting_free;
	return t;
}

/* Clear required call @p i of @p t. */
static void drop_call(lease_transport *t, int i)
{
	switch (i) {
	case 0: t->write_commit = NULL; break;
	case 1: t->create_ref = NULL; break;
	case 2: t->replace_ref = NULL; break;
	case 3: t->delete_ref = NULL; break;
	case 4: t->read_ref = NULL; break;
	case 5: t->read_commit = NULL; break;
	case 6: t->list_refs = NULL; break;
	case 7: t->last_error = NULL; break;
	case 8: t->free = NULL; break;
	default: ck_abort_msg("no required call %d", i);
	}
}

/* Open over @p t, expecting LEASE_EINVALID with @p want in the message. */
static void expect_refused(lease_transport *t, const char *want)
{
	lease_store *st = (lease_store *)1;
	char err[256] = "";

	ck_assert_int_eq(lease_store_open_transport(&st, t, NULL, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
}

START_TEST(missing_required_call_refused)
{
	lease_transport *t = counted_transport();
	char want[96];

	drop_call(t, _i);
	snprintf(want, sizeof(want), "transport 'mem' lacks the required call %s", required[_i]);
	expect_refused(t, want);
	if (_i == NREQUIRED - 1) {
		/* Without free the library cannot free it: it stays the caller's. */
		ck_assert_int_eq(frees, 0);
		mem_free_fn(t);
	} else {
		ck_assert_int_eq(frees, 1);
	}
}
END_TEST

START_TEST(wrong_version_refused)
{
	const unsigned int versions[] = {0, LEASE_TRANSPORT_VERSION + 1};
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		lease_transport *t = counted_transport();
		char want[64];

		t->version = versions[i];
		snprintf(want, sizeof(want), "transport of vtable version %u:", versions[i]);
		expect_refused(t, want);
		ck_assert_int_eq(frees, 1);
	}
}
END_TEST

static int trap_scan(lease_transport *t, const char *prefix, size_t max_objects,
                     int (*visit)(const char *msg, void *payload), void *payload)
{
	(void)t, (void)prefix, (void)max_objects, (void)visit, (void)payload;
	ck_abort_msg("scan_commits of a version 1 transport called");
	return 0;
}

static int count_visit(const char *msg, void *payload)
{
	(void)msg;
	++*(int *)payload;
	return 0;
}

/* Version 1 transports (issue 23 appended scan_commits, version 2) still
 * open; the members after version 1's end are never read. */
START_TEST(version1_transport_accepted)
{
	lease_transport *t = counted_transport();
	lease_store *st = NULL;
	char err[256] = "";
	int n = 0;

	t->version = 1;
	t->scan_commits = trap_scan; /* beyond a real version 1 struct */
	ck_assert_int_eq(lease_store_open_transport(&st, t, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_scan_commits(st, "x: ", 10, count_visit, &n), LEASE_ENOTFOUND);
	lease_store_free(st);
	ck_assert_int_eq(frees, 1);
	(void)n;
}
END_TEST

static int oid_reads;

static int trap_read_ref_oid(lease_transport *t, const char *refname, int *present, lease_oid *oid)
{
	(void)t, (void)refname, (void)present, (void)oid;
	ck_abort_msg("read_ref_oid of a version 2 transport called");
	return 0;
}

static int absent_read_ref_oid(lease_transport *t, const char *refname, int *present,
                               lease_oid *oid)
{
	(void)t, (void)refname, (void)oid;
	oid_reads++;
	*present = 0;
	return 0;
}

/* Version 2 transports (read_ref_oid appended, version 3) still open and
 * their reads of the ref alone go through read_ref; a version 3 transport's
 * read_ref_oid answers lease_ref_still_at(). */
START_TEST(version2_transport_accepted)
{
	lease_transport *t = counted_transport();
	lease_store *st = NULL;
	lease_oid zero;
	char err[256] = "";

	memset(&zero, 0, sizeof(zero));
	t->version = 2;
	t->read_ref_oid = trap_read_ref_oid; /* beyond a real version 2 struct */
	ck_assert_int_eq(lease_store_open_transport(&st, t, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_ref_still_at(st, "x", &zero), 0);
	lease_store_free(st);
	ck_assert_int_eq(frees, 1);

	t = counted_transport();
	t->read_ref_oid = absent_read_ref_oid;
	oid_reads = 0;
	ck_assert_int_eq(lease_store_open_transport(&st, t, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_ref_still_at(st, "x", &zero), 0);
	ck_assert_int_eq(oid_reads, 1);
	ck_assert_int_eq(lease_ref_still_at(st, "bad name!", &zero), LEASE_EINVALID);
	lease_store_free(st);
}
END_TEST

START_TEST(no_kind_refused)
{
	lease_transport *t = counted_transport();

	t->kind = NULL;
	expect_refused(t, "transport without a kind");
	ck_assert_int_eq(frees, 1);
	t = counted_transport();
	t->kind = "";
	expect_refused(t, "transport without a kind");
	ck_assert_int_eq(frees, 1);
}
END_TEST

START_TEST(no_transport_refused)
{
	expect_refused(NULL, "no transport given");
}
END_TEST

/* Refused options free the transport too (ownership passes on every failure). */
START_TEST(bad_options_free_transport)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *st;
	char err[256] = "";

	o.version = LEASE_STORE_OPTIONS_VERSION + 1;
	ck_assert_int_eq(lease_store_open_transport(&st, counted_transport(), &o, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_int_eq(frees, 1);
	o.version = LEASE_STORE_OPTIONS_VERSION;
	o.ns = "bad ns";
	ck_assert_int_eq(lease_store_open_transport(&st, counted_transport(), &o, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_int_eq(frees, 1);
}
END_TEST

/* Every optional call absent: the store opens, the primitives work, and each
 * absence behaves as sys/transport.h documents it. */
START_TEST(optional_calls_absent)
{
	lease_transport *t = counted_transport();
	lease_store *st;
	lease_ref_state rs;
	lease_ref_lock_list locks;
	lease_ref_lock lk = {0};
	lease_oid c;
	char err[256] = "";
	int64_t before = (int64_t)time(NULL), now;

	t->now = NULL;
	t->list_ref_locks = NULL;
	t->remove_ref_lock = NULL;
	t->pace = NULL;
	t->wait_change = NULL;
	ck_assert_msg(lease_store_open_transport(&st, t, NULL, err, sizeof(err)) == 0, "open: %s",
	              err);
	ck_assert_str_eq(lease_store_kind(st), "mem");

	ck_assert_int_eq(lease_write_commit(&c, st, NULL, "x: acquire\n\n{}"), 0);
	ck_assert_int_eq(lease_cas_create(st, "x", &c), 0);
	ck_assert_int_eq(lease_fetch_ref(&rs, st, "x"), 0);
	ck_assert_int_eq(rs.present, 1);
	ck_assert(lease_oid_equal(&rs.oid, &c));
	lease_ref_state_clear(&rs);

	/* now: time(2). */
	now = lease_store_now(st);
	ck_assert(now >= before && now <= (int64_t)time(NULL));
	/* pace: no wait. */
	ck_assert_int_eq(lease_store_pace(st), 0);
	/* wait_change: the library sleeps the timeout, reporting no change. */
	ck_assert_int_eq(lease_store_can_watch(st), 0);
	ck_assert_int_eq(lease_wait_ref_change(st, "x", 1, &c, 1), 0);
	/* list_ref_locks: an empty list; remove_ref_lock: LEASE_ENOTFOUND. */
	ck_assert_int_eq(lease_list_ref_locks(&locks, st, "refs/leases/"), 0);
	ck_assert_uint_eq(locks.count, 0);
	lease_ref_lock_list_clear(&locks);
	lk.refname = "refs/leases/x";
	ck_assert_int_eq(lease_remove_ref_lock(st, &lk, 0), LEASE_ENOTFOUND);

	lease_store_free(st);
	ck_assert_int_eq(frees, 1);
}
END_TEST

Suite *transport_suite(void);
Suite *transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("open_check");

	tcase_add_loop_test(tc, missing_required_call_refused, 0, NREQUIRED);
	tcase_add_test(tc, wrong_version_refused);
	tcase_add_test(tc, version1_transport_accepted);
	tcase_add_test(tc, version2_transport_accepted);
	tcase_add_test(tc, no_kind_refused);
	tcase_add_test(tc, no_transport_refused);
	tcase_add_test(tc, bad_options_free_transport);
	tcase_add_test(tc, optional_calls_absent);
	suite_add_tcase(s, tc);
	return s;
}
