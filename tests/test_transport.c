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
#include "support/suitefix.h"

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
	ck_assert_int_eq(lease__scan_commits(st, "x: ", 10, count_visit, &n), LEASE_ENOTFOUND);
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
	ck_assert_int_eq(lease__store_pace(st), 0);
	/* wait_change: the library sleeps the timeout, reporting no change. */
	ck_assert_int_eq(lease_store_can_watch(st), 0);
	ck_assert_int_eq(lease_wait_ref_change(st, "x", 1, &c, 1), 0);
	/* list_ref_locks: an empty list; remove_ref_lock: LEASE_ENOTFOUND. */
	ck_assert_int_eq(lease__list_ref_locks(&locks, st, "refs/leases/"), 0);
	ck_assert_uint_eq(locks.count, 0);
	lease_ref_lock_list_clear(&locks);
	lk.refname = "refs/leases/x";
	ck_assert_int_eq(lease__remove_ref_lock(st, &lk, 0), LEASE_ENOTFOUND);

	lease_store_free(st);
	ck_assert_int_eq(frees, 1);
}
END_TEST

/* list_refs_each (version 3) over the memstore's list_refs: parts of three
 * refs in name order, each after the first repeating the last ref of the
 * part before (a page answered twice) and carrying a ref that sorts before
 * it (listed out of order); the listing fails before part @c fail_part
 * (-1 never). */
static int fail_part = -1, parts_given;

static int parts_each(lease_transport *t, const char *prefix,
                      int (*part)(lease_ref_list *l, void *payload), void *payload)
{
	lease_ref_list all = {NULL, 0, 0};
	size_t i, j;
	int rc;

	parts_given = 0;
	if ((rc = memstore_list_sorted(t, &all, prefix)) < 0)
		return rc;
	for (i = 0; i < all.count && rc == 0; i += 3) {
		lease_ref_list p = {NULL, 0, 0};

		if (parts_given == fail_part) {
			rc = LEASE_ENET;
			break;
		}
		for (j = i; j < i + 3 && j < all.count; j++)
			ck_assert_int_eq(
			        lease_ref_list_push(&p, all.items[j].refname, &all.items[j].oid),
			        0);
		if (i > 0) {
			ck_assert_int_eq(lease_ref_list_push(&p, all.items[i - 1].refname,
			                                     &all.items[i - 1].oid),
			                 0);
			ck_assert_int_eq(
			        lease_ref_list_push(&p, all.items[0].refname, &all.items[0].oid),
			        0);
		}
		parts_given++;
		rc = part(&p, payload);
		lease_ref_list_clear(&p);
	}
	lease_ref_list_clear(&all);
	return rc;
}

static int trap_each(lease_transport *t, const char *prefix,
                     int (*part)(lease_ref_list *l, void *payload), void *payload)
{
	(void)t, (void)prefix, (void)part, (void)payload;
	ck_abort_msg("list_refs_each of a version 2 transport called");
	return 0;
}

/* The names a walk visited, the totals it was told, and where it stops. */
typedef struct names_seen {
	char names[16][LEASE_NAME_MAX + 1];
	size_t total[16];
	int n, stop_at;
} names_seen;

static int names_visit(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total,
                       void *payload)
{
	names_seen *w = payload;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(iv);
	ck_assert_int_lt(w->n, 16);
	snprintf(w->names[w->n], sizeof(w->names[0]), "%s", s->name);
	w->total[w->n++] = total;
	return w->n == w->stop_at ? 7 : 0;
}

/* A store of ten leases n0..n9 over a memstore whose list_refs_each is
 * parts_each (version 3), or trap_each (version 2). */
static lease_store *parts_store(unsigned version)
{
	lease_transport *t = counted_transport();
	lease_store *st = NULL;
	char err[256] = "", name[16];
	lease_oid c;
	int i;

	t->version = version;
	t->list_refs_each = version >= 3 ? parts_each : trap_each;
	ck_assert_int_eq(lease_store_open_transport(&st, t, NULL, err, sizeof(err)), 0);
	for (i = 9; i >= 0; i--) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_int_eq(lease_write_commit(&c, st, NULL, "x: acquire\n\n{}"), 0);
		ck_assert_int_eq(lease_cas_create(st, name, &c), 0);
	}
	fail_part = -1;
	return st;
}

/* The namespace read over list_refs_each (issue 29): each lease once, in
 * name order, whatever a part repeats or lists out of order; the total
 * grows with the parts; the visitor's stop and a part's failure end it. */
START_TEST(namespace_read_by_parts)
{
	lease_store *st = parts_store(3);
	names_seen w;
	int i;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, names_visit, &w), 0);
	ck_assert_int_eq(w.n, 10);
	ck_assert_int_eq(parts_given, 4);
	for (i = 0; i < 10; i++) {
		char want[16];

		snprintf(want, sizeof(want), "n%d", i);
		ck_assert_str_eq(w.names[i], want);
	}
	ck_assert_uint_eq(w.total[0], 3);
	ck_assert_uint_eq(w.total[9], 3 + 5 + 5 + 3);

	/* the visitor's value ends the listing at once and is returned */
	memset(&w, 0, sizeof(w));
	w.stop_at = 4;
	ck_assert_int_eq(lease_namespace_each(st, names_visit, &w), 7);
	ck_assert_int_eq(w.n, 4);
	ck_assert_int_eq(parts_given, 2);

	/* a part failing after two were walked fails the read */
	memset(&w, 0, sizeof(w));
	fail_part = 2;
	ck_assert_int_eq(lease_namespace_each(st, names_visit, &w), LEASE_ENET);
	ck_assert_int_eq(w.n, 6);
	ck_assert_ptr_nonnull(
	        strstr(lease_store_last_error(st), "the listing failed after 8 refs"));
	lease_store_free(st);
}
END_TEST

/* A version 2 transport opens; list_refs_each, beyond its struct's end, is
 * never read: the namespace is read with list_refs. */
START_TEST(version2_transport_lists_whole)
{
	lease_store *st = parts_store(2);
	names_seen w;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, names_visit, &w), 0);
	ck_assert_int_eq(w.n, 10);
	ck_assert_uint_eq(w.total[0], 10);
	lease_store_free(st);
}
END_TEST

Suite *transport_suite(void)
{
	return suitefix_suite("transport", "open_check", 0, NULL,
	                      LOOP(missing_required_call_refused, 0, NREQUIRED),
	                      ONE(wrong_version_refused), ONE(version1_transport_accepted),
	                      ONE(version2_transport_accepted), ONE(no_kind_refused),
	                      ONE(no_transport_refused), ONE(bad_options_free_transport),
	                      ONE(optional_calls_absent), ONE(namespace_read_by_parts),
	                      ONE(version2_transport_lists_whole), NULL);
}
