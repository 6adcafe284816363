/* The GitHub backend (lib/store/github.c, http.c; protocol.md §3, §4, §9
 * github) against the fake GitHub server (tests/support/fakegh.c): the
 * transport through the five primitives, request counts per primitive, read
 * lag, the fault matrix (each write path × each injected fault → the right
 * code and post-state), the time base, URL and credential rules, and the
 * token canary. Field cases: F10, F24, F25, F26 (transport level). */
#define _DEFAULT_SOURCE
#include <check.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reflease/primitives.h"
#include "reflease/reconcile.h"
#include "reflease/schema.h"
#include "store/backend.h"
#include "store/handle.h"
#include "store/http.h"
#include "support/fakegh.h"
#include "support/ghstore.h"
#include "support/logcap.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/textcase.h"
#include "support/vclock.h"

#define CANARY "ghp_CANARYtoken0123456789abcdefCANARY"
#define TOKEN  "0123456789abcdef0123456789abcdef"

static fakegh *fk;
static lease_store *st;
/* The API URL the stores of a test open with (the fake's, by default). */
static char api_url[256];

static void env_for(const fakegh *f)
{
	snprintf(api_url, sizeof(api_url), "%s", fakegh_url(f));
}

/* Open a store on the fake; on @p vc's virtual time when not NULL. */
static int open_store_on(lease_store **out, const char *token, int timeout_s, int verify_ms,
                         vclock *vc)
{
	lease_store_options o;

	ghstore_options(&o, api_url, token, timeout_s, verify_ms, vc, logcap);
	return ghstore_open(out, &o);
}

/* The time of a test's stores and of the fake (read lag, the request log):
 * virtual (issue 26), so retries, backoff, verify polls and lag cost no real
 * time. */
static vclock gvc;

static int open_store(lease_store **out, const char *token, int timeout_s, int verify_ms)
{
	return open_store_on(out, token, timeout_s, verify_ms, &gvc);
}

static void start(const fakegh_options *o)
{
	ck_assert_int_eq(ghstore_start(&fk, o, &gvc), 0);
	env_for(fk);
	logcap_reset();
	ck_assert_int_eq(open_store(&st, CANARY, 5, 2000), 0);
}

static void setup(void)
{
	start(NULL);
}

static void teardown(void)
{
	ghstore_stop(&st, &fk);
}

static void commit(lease_oid *out, const char *name, const lease_oid *parent)
{
	int64_t now = time(NULL);
	char *m = ghstore_message(name, "alice", TOKEN, LEASE_PHASE_CLAIMED, 0, now, now + 300);
	int rc = lease_write_commit(out, st, parent, m);

	if (rc < 0)
		fprintf(stderr, "write_commit: %s\n", lease_store_last_error(st));
	ck_assert_int_eq(rc, 0);
	free(m);
}

/* The ref as the fake's repository holds it: 1 with *oid, or 0 absent. */
static int ref_at(const char *name, lease_oid *oid)
{
	return ghstore_ref_at(fk, name, oid);
}

static void dump_log(void)
{
	size_t i, n = fakegh_log_size(fk);
	char line[700];

	for (i = 0; i < n; i++)
		if (fakegh_log_line(fk, i, line, sizeof(line)) == 0)
			fprintf(stderr, "  fake: %s\n", line);
}

/* ---- the primitives over the GitHub transport ----------------------------- */

START_TEST(cycle_create_read_replace_delete)
{
	lease_ref_state s;
	lease_oid a, b, seen;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "deploy"), 0);
	ck_assert_int_eq(s.present, 0);
	lease_ref_state_clear(&s);

	commit(&a, "deploy", NULL);
	ck_assert_int_eq(lease_cas_create(st, "deploy", &a), 0);
	ck_assert_int_eq(ref_at("deploy", &seen), 1);
	ck_assert(lease_oid_equal(&seen, &a));

	ck_assert_int_eq(lease_fetch_ref(&s, st, "deploy"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert(lease_oid_equal(&s.oid, &a));
	ck_assert_int_eq(s.payload_rc, 0);
	ck_assert_str_eq(s.payload.owner, "alice");
	ck_assert_int_eq(s.commit.has_parent, 0);
	lease_ref_state_clear(&s);

	commit(&b, "deploy", &a);
	ck_assert_int_eq(lease_cas_replace(st, "deploy", &a, &b), 0);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "deploy"), 0);
	ck_assert(lease_oid_equal(&s.oid, &b));
	ck_assert_int_eq(s.commit.has_parent, 1);
	ck_assert(lease_oid_equal(&s.commit.parent, &a));
	lease_ref_state_clear(&s);

	ck_assert_int_eq(lease_cas_delete(st, "deploy", &b), 0);
	ck_assert_int_eq(ref_at("deploy", &seen), 0);
	/* REST PATCH and DELETE carry no precondition: never used (§9). */
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_PATCH), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_DELETE), 0);
}
END_TEST

/* What the requests since the last call cost at the fake: @p n of @p ep
 * among @p any in all; the counts start again. */
static void cost(fakegh_endpoint ep, unsigned n, unsigned any)
{
	ck_assert_uint_eq(fakegh_count(fk, ep), n);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), any);
	fakegh_reset_counts(fk);
}

/* Request counts per primitive, counted at the fake (issue 6 budget). */
START_TEST(request_counts_per_primitive)
{
	lease_ref_state s;
	lease_oid a, b;

	memset(&s, 0, sizeof(s));
	/* absent read before GraphQL has shown the namespace: GraphQL + REST confirm */
	ck_assert_int_eq(lease_fetch_ref(&s, st, "x"), 0);
	lease_ref_state_clear(&s);
	cost(FAKEGH_MATCHING, 1, 2);

	commit(&a, "x", NULL);
	cost(FAKEGH_COMMIT_POST, 1, 1);

	ck_assert_int_eq(lease_cas_create(st, "x", &a), 0);
	cost(FAKEGH_REF_CREATE, 1, 2);

	ck_assert_int_eq(lease_fetch_ref(&s, st, "x"), 0);
	lease_ref_state_clear(&s);
	cost(FAKEGH_GQL_QUERY, 1, 1);

	commit(&b, "x", &a);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_cas_replace(st, "x", &a, &b), 0);
	cost(FAKEGH_GQL_MUTATION, 1, 2);

	/* a delete's verification reads an absence: the post-state re-read is
	 * a REST read of the ref (read_ref_oid), whose 404 is authoritative —
	 * no GraphQL null to confirm (issue 15 #3) */
	ck_assert_int_eq(lease_cas_delete(st, "x", &b), 0);
	cost(FAKEGH_REF_GET, 1, 2);

	/* a later absent read: GraphQL + the REST confirmation, always */
	ck_assert_int_eq(lease_fetch_ref(&s, st, "x"), 0);
	ck_assert_int_eq(s.present, 0);
	lease_ref_state_clear(&s);
	cost(FAKEGH_MATCHING, 1, 2);
}
END_TEST

/* A fresh process whose namespace already holds a lease: GraphQL seeing
 * other refs of refs/<ns>/ is no evidence about this one (issue 15 #3): the
 * absence costs GraphQL + one REST listing, as in an empty namespace. */
START_TEST(absent_read_in_seen_namespace_confirmed_by_rest)
{
	lease_store *s2 = NULL;
	lease_ref_state s;
	lease_oid a;

	memset(&s, 0, sizeof(s));
	commit(&a, "other", NULL);
	ck_assert_int_eq(lease_cas_create(st, "other", &a), 0);
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 2000), 0);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_ref(&s, s2, "newname"), 0);
	ck_assert_int_eq(s.present, 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), 2);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1);
	lease_ref_state_clear(&s);
	lease_store_free(s2);
}
END_TEST

/* The REST listing that confirms an absence (refs/<ns>*) serves the archive
 * listing asked for right after it, once; never a namespace listing. */
START_TEST(absence_listing_serves_archive_listing_once)
{
	lease_store *s2 = NULL;
	lease_ref_state s;
	lease_ref_list l = {NULL, 0, 0};
	lease_oid a;
	char hex[41];

	memset(&s, 0, sizeof(s));
	commit(&a, "arch", NULL);
	lease_oid_tohex(hex, &a);
	ck_assert_int_eq(
	        fakegh_set_ref(fk, "refs/leases-archive/arch/20261130T000000Z-0123abcd", hex), 0);
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 2000), 0);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_ref(&s, s2, "arch"), 0);
	ck_assert_int_eq(s.present, 0);
	lease_ref_state_clear(&s);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases-archive/arch/"), 0);
	ck_assert_uint_eq(l.count, 1);
	ck_assert_int_eq(l.items[0].has_commit, 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1); /* served */
	lease_ref_list_clear(&l);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases-archive/arch/"), 0);
	ck_assert_uint_eq(l.count, 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 2); /* once only */
	lease_ref_list_clear(&l);
	ck_assert_int_eq(lease_fetch_ref(&s, s2, "arch"), 0);
	lease_ref_state_clear(&s);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 3);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases/"), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 4); /* never the namespace */
	lease_ref_list_clear(&l);
	lease_store_free(s2);
}
END_TEST

/* fetch_namespace: one matching-refs + ceil(N/100) GraphQL batches, with
 * each lease's commit and parent; invalid names and blobs reported. */
START_TEST(namespace_listing_batches)
{
	lease_store *s2 = NULL;
	lease_namespace ns;
	lease_oid a, b;
	char ref[64], hex[41], blob[41];
	size_t i;
	int found = 0;

	memset(&ns, 0, sizeof(ns));
	commit(&a, "l000", NULL);
	ck_assert_int_eq(lease_cas_create(st, "l000", &a), 0);
	commit(&b, "l000", &a);
	ck_assert_int_eq(lease_cas_replace(st, "l000", &a, &b), 0);
	lease_oid_tohex(hex, &a);
	for (i = 1; i < 150; i++) {
		snprintf(ref, sizeof(ref), "refs/leases/l%03zu", i);
		ck_assert_int_eq(fakegh_set_ref(fk, ref, hex), 0);
	}
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/sub/dir", hex), 0);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases-archive/l000/x", hex), 0);
	ck_assert_int_eq(fakegh_write_blob(fk, "not a commit", blob), 0);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/zblob", blob), 0);

	/* read by a handle that wrote none of these commits (a handle serves the
	 * commits it wrote itself without asking, github.c): the batches alone */
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 2000), 0);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_namespace(&ns, s2), 0);
	/* 151 entries: matching-refs + 2 batches; budget ceil(N/100) + 2 */
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_QUERY), 2);
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_ANY), (151 + 99) / 100 + 2);
	ck_assert_uint_eq(ns.count, 151);
	ck_assert_uint_eq(ns.invalid_count, 1);
	ck_assert_str_eq(ns.invalid[0].refname, "refs/leases/sub/dir");
	for (i = 0; i < ns.count; i++) {
		if (strcmp(ns.leases[i].name, "l000") == 0) {
			found = 1;
			ck_assert(lease_oid_equal(&ns.leases[i].oid, &b));
			ck_assert_int_eq(ns.leases[i].has_parent_commit, 1);
			ck_assert(lease_oid_equal(&ns.leases[i].parent_commit.oid, &a));
			ck_assert_ptr_nonnull(strstr(ns.leases[i].parent_commit.message, "l000"));
		}
		if (strcmp(ns.leases[i].name, "zblob") == 0)
			ck_assert_int_eq(ns.leases[i].commit.is_commit, 0);
	}
	ck_assert(found);
	lease_namespace_clear(&ns);
	lease_store_free(s2);
}
END_TEST

/* A transport that may lie: a create answered "already exists", a replace
 * from a stale oid, a delete of a moved ref — each a CAS failure. */
START_TEST(cas_mismatches)
{
	lease_oid a, b, c;

	commit(&a, "m", NULL);
	commit(&b, "m", &a);
	commit(&c, "m", &a);
	ck_assert_int_eq(lease_cas_create(st, "m", &a), 0);
	ck_assert_int_eq(lease_cas_create(st, "m", &b), LEASE_ECAS);
	ck_assert_int_eq(lease_store_last_cas_error(st)->noop, 1);
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_int_eq(lease_cas_replace(st, "m", &a, &b), 0);
	/* stale beforeOid: HTTP 200 with errors[] */
	ck_assert_int_eq(lease_cas_replace(st, "m", &a, &c), LEASE_ECAS);
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert(lease_oid_equal(&lease_store_last_cas_error(st)->observed, &b));
	ck_assert_int_eq(lease_cas_delete(st, "m", &a), LEASE_ECAS);
	ck_assert_int_eq(lease_cas_delete(st, "m", &b), 0);
	ck_assert_int_eq(lease_cas_delete(st, "m", &b), LEASE_ECAS);
}
END_TEST

/* Read lag: the old value for N ms after a write; verification polls through
 * it inside the window; a 404 right after a create is lag, not loss. */
START_TEST(read_lag_polled_within_window)
{
	lease_oid a, b;

	commit(&a, "lag", NULL);
	commit(&b, "lag", &a);
	fakegh_set_read_lag(fk, 400);
	ck_assert_int_eq(lease_cas_create(st, "lag", &a), 0);
	ck_assert_int_eq(lease_cas_replace(st, "lag", &a, &b), 0);
	ck_assert_int_eq(lease_cas_delete(st, "lag", &b), 0);
	/* the post-state re-reads (REST, read_ref_oid) polled */
	ck_assert_uint_gt(fakegh_count(fk, FAKEGH_REF_GET), 3);
}
END_TEST

START_TEST(read_lag_past_window_unverified)
{
	lease_store *s2 = NULL;
	lease_oid a;

	commit(&a, "lag2", NULL);
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 200), 0);
	fakegh_set_read_lag(fk, 3000);
	ck_assert_int_eq(lease_cas_create(s2, "lag2", &a), LEASE_EUNVERIFIED);
	ck_assert_int_eq(lease_store_last_cas_error(s2)->outcome, LEASE_OUTCOME_UNKNOWN);
	lease_store_free(s2);
}
END_TEST

/* ---- sets: the batched read (read_refs, protocol.md "Sets") ------------------ */

/* Create refs/leases/@p name at a fresh commit (through the primitives). */
static void plant_ref(lease_oid *out, const char *name)
{
	commit(out, name, NULL);
	ck_assert_int_eq(lease_cas_create(st, name, out), 0);
}

/* Every member in one GraphQL query, each with its commit; a missing one
 * (GraphQL's `ref: null`) confirmed by one REST listing for all of them. */
START_TEST(set_read_in_one_query)
{
	static const char *const abc[] = {"sa", "sb", "sc"};
	lease_ref_state s[3];
	lease_oid a, b;
	size_t failed = 9, i;

	memset(s, 0, sizeof(s));
	plant_ref(&a, "sa");
	plant_ref(&b, "sb");
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_refs(s, st, abc, 2, &failed), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_QUERY), 1);
	ck_assert(s[0].present && lease_oid_equal(&s[0].oid, &a) && s[0].payload_rc == 0);
	ck_assert(s[1].present && lease_oid_equal(&s[1].oid, &b) && s[1].payload_rc == 0);
	ck_assert_str_eq(s[1].payload.name, "sb");
	for (i = 0; i < 2; i++)
		lease_ref_state_clear(&s[i]);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_refs(s, st, abc, 3, &failed), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_QUERY), 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), 2);
	ck_assert(s[0].present && s[1].present && !s[2].present);
	for (i = 0; i < 3; i++)
		lease_ref_state_clear(&s[i]);
}
END_TEST

/* The absences of a set's read serve each member's archive listing once
 * (the generation floor of a fresh acquire, protocol.md §5), never another
 * listing. */
START_TEST(set_absences_serve_each_archive_listing)
{
	static const char *const xy[] = {"ax", "ay"};
	lease_ref_state s[2];
	lease_ref_list l = {NULL, 0, 0};
	lease_store *s2 = NULL;
	lease_oid a;
	char hex[41];

	memset(s, 0, sizeof(s));
	commit(&a, "ax", NULL);
	lease_oid_tohex(hex, &a);
	ck_assert_int_eq(
	        fakegh_set_ref(fk, "refs/leases-archive/ax/20261130T000000Z-0123abcd", hex), 0);
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 2000), 0);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_refs(s, s2, xy, 2, NULL), 0);
	ck_assert(!s[0].present && !s[1].present);
	lease_ref_state_clear(&s[0]);
	lease_ref_state_clear(&s[1]);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases-archive/ay/"), 0);
	ck_assert_uint_eq(l.count, 0);
	lease_ref_list_clear(&l);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases-archive/zz/"), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 2); /* not a member: asked */
	lease_ref_list_clear(&l);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases-archive/ax/"), 0);
	ck_assert_uint_eq(l.count, 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 2); /* served */
	lease_ref_list_clear(&l);
	ck_assert_int_eq(s2->t->list_refs(s2->t, &l, "refs/leases-archive/ax/"), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 3); /* once only */
	lease_ref_list_clear(&l);
	lease_store_free(s2);
}
END_TEST

/* Whatever GraphQL shows of refs/<ns>/ (issue 15 #3), the batched read
 * answers as the single read does: presence only from the ref asked for,
 * absences confirmed by REST. */
START_TEST(set_read_same_whatever_graphql_shows)
{
	static const fakegh_gql_view views[] = {FAKEGH_GQL_SEES, FAKEGH_GQL_BLIND,
	                                        FAKEGH_GQL_DISAGREE, FAKEGH_GQL_ELSEWHERE};
	static const char *const names[] = {"w1", "v", "w2"};
	fakegh_options o;
	lease_ref_state s[3], one;
	lease_oid a, b, other;
	char hex[41];
	size_t i;

	teardown();
	memset(&o, 0, sizeof(o));
	o.graphql_view = views[_i];
	start(&o);
	memset(s, 0, sizeof(s));
	commit(&other, "other", NULL);
	lease_oid_tohex(hex, &other);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/other", hex), 0);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/heads/v", hex), 0);
	commit(&a, "w1", NULL);
	lease_oid_tohex(hex, &a);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/w1", hex), 0);
	ck_assert_int_eq(lease_fetch_refs(s, st, names, 3, NULL), 0);
	ck_assert_msg(s[0].present && lease_oid_equal(&s[0].oid, &a), "view %d: w1", _i);
	ck_assert_msg(!s[1].present, "view %d: absent lease read as present", _i);
	ck_assert_msg(!s[2].present, "view %d: w2", _i);
	for (i = 0; i < 3; i++)
		lease_ref_state_clear(&s[i]);
	/* a set write of two creates, verified by the batched re-read */
	{
		const char *const vw[] = {"v", "w2"};
		lease_oid olds[2], news[2];
		memset(olds, 0, sizeof(olds));
		commit(&news[0], "v", NULL);
		commit(&news[1], "w2", NULL);
		ck_assert_msg(lease_cas_set(st, vw, olds, news, 2) == 0, "view %d: %s", _i,
		              lease_store_last_error(st));
		commit(&b, "v", &news[0]);
		olds[0] = news[0];
		olds[1] = news[1];
		news[0] = b;
		commit(&news[1], "w2", &olds[1]);
		ck_assert_int_eq(lease_cas_set(st, vw, olds, news, 2), 0);
		/* a stale set write: a compare fails, nothing applied */
		ck_assert_int_eq(lease_cas_set(st, vw, olds, news, 2), LEASE_ECAS);
	}
	ck_assert_int_eq(lease_fetch_refs(s, st, names, 3, NULL), 0);
	ck_assert(s[0].present && s[1].present && s[2].present);
	ck_assert(lease_oid_equal(&s[1].oid, &b));
	memset(&one, 0, sizeof(one));
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(lease_fetch_ref(&one, st, names[i]), 0);
		ck_assert(lease_oid_equal(&one.oid, &s[i].oid));
		ck_assert_int_eq(one.payload_rc, s[i].payload_rc);
		lease_ref_state_clear(&one);
		lease_ref_state_clear(&s[i]);
	}
}
END_TEST

/* Replica lag: the set write's batched re-read polls through it inside the
 * verify window; past the window the set is unverified, never taken as
 * written. */
START_TEST(set_write_verified_through_read_lag)
{
	static const char *const ab[] = {"la", "lb"}, *const cd[] = {"lc", "ld"};
	lease_store *s2 = NULL;
	lease_oid olds[2], news[2];
	unsigned q;

	memset(olds, 0, sizeof(olds));
	commit(&news[0], "la", NULL);
	commit(&news[1], "lb", NULL);
	fakegh_set_read_lag(fk, 400);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_cas_set(st, ab, olds, news, 2), 0);
	q = fakegh_count(fk, FAKEGH_GQL_QUERY);
	ck_assert_uint_gt(q, 1); /* polled */
	/* a member the lag still hides is GraphQL's null, confirmed by REST
	 * (a listing, or a ref read when no listing is at hand: seen in the
	 * slower sanitized build) — at most one per member and poll */
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_REF_GET), 2 * q);

	commit(&news[0], "lc", NULL);
	commit(&news[1], "ld", NULL);
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 200), 0);
	fakegh_set_read_lag(fk, 3000);
	ck_assert_int_eq(lease_cas_set(s2, cd, olds, news, 2), LEASE_EUNVERIFIED);
	ck_assert_int_eq(lease_store_last_cas_error(s2)->outcome, LEASE_OUTCOME_UNKNOWN);
	lease_store_free(s2);
}
END_TEST

/* ---- the fault matrix -------------------------------------------------------- */

enum op { OP_COMMIT, OP_CREATE, OP_REPLACE, OP_DELETE, OP_READ, OP_LIST };
enum after { AFTER_ANY, AFTER_OLD, AFTER_NEW };

struct fault_case {
	const char *id;
	enum op op;
	fakegh_endpoint ep;
	fakegh_fault_kind kind;
	int count, arg;
	int rc, alt_rc;     /* expected code (alt_rc: also acceptable, 0 = none) */
	int outcome;        /* -1 = not checked */
	enum after after;   /* ref afterwards */
	const char *needle; /* in the error message */
};

static const struct fault_case faults[] = {
        /* create: POST /git/refs. A dropped answer on a reused connection is
         * re-sent once by libcurl itself: the re-sent create is answered "already
         * exists" (a replace: a stale beforeOid) for this very write — a CAS
         * failure with an unknown outcome, settled upstream by re-reading (§9). */
        {"create-5xx", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_5XX, 1, 0, LEASE_ENET, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_OLD, "unknown"},
        {"create-drop", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_DROP, 1, 0, LEASE_ECAS, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_NEW, NULL},
        {"create-drop-twice", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_DROP, 2, 0, LEASE_ENET, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_NEW, "unknown"},
        {"F24-create-403-retry-after", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_403_RETRY, 1, 100,
         LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "rate limited"},
        {"F24-create-403-reset", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_403_RESET, 1, 100,
         LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "rate limited"},
        {"F24-create-403-no-header", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_403_NOHDR, 1, 0,
         LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "rate limited"},
        {"F24-create-429-retry-after", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_429_RETRY, 1, 100,
         LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "429"},
        {"F24-create-429-no-header", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_429_NOHDR, 1, 0,
         LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "429"},
        {"F25-create-422-rules", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_422_RULES, 1, 0,
         LEASE_EAUTH, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "refs/leases/"},
        {"create-401", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_401, 1, 0, LEASE_EAUTH, 0,
         LEASE_OUTCOME_KNOWN, AFTER_OLD, "401"},
        {"F25-create-403-forbidden", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_403_FORBIDDEN, 1, 0,
         LEASE_EAUTH, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "contents: write"},
        {"F26-create-409-empty", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_409_EMPTY, 1, 0,
         LEASE_ECONFIG, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "initial commit"},
        {"create-stall-then-ok", OP_CREATE, FAKEGH_REF_CREATE, FAKEGH_FAULT_STALL, 1, 200, 0, 0, -1,
         AFTER_NEW, NULL},
        /* replace: GraphQL updateRefs */
        {"replace-5xx", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_5XX, 1, 0, LEASE_ENET, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_OLD, "unknown"},
        {"replace-drop", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_DROP, 1, 0, LEASE_ECAS, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_NEW, NULL},
        {"F24-replace-graphql-rate-limited", OP_REPLACE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_RATE_LIMITED, 1, 100, LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD,
         "RATE_LIMITED"},
        {"F24-replace-graphql-rate-limited-no-header", OP_REPLACE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_RATE_LIMITED, 1, 0, LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD,
         "RATE_LIMITED"},
        {"F24-replace-403-retry-after", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_403_RETRY, 1,
         100, LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "rate limited"},
        {"F25-replace-rules", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_422_RULES, 1, 0,
         LEASE_EAUTH, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "refs/leases/"},
        {"F25-replace-forbidden", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_403_FORBIDDEN, 1, 0,
         LEASE_EAUTH, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "contents: write"},
        {"replace-401", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_401, 1, 0, LEASE_EAUTH, 0,
         LEASE_OUTCOME_KNOWN, AFTER_OLD, "401"},
        {"replace-no-updateRefs", OP_REPLACE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_NO_UPDATEREFS, 1, 0,
         LEASE_ECONFIG, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "updateRefs"},
        {"replace-graphql-internal-error", OP_REPLACE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_INTERNAL, 1, 0, LEASE_ENET, 0, LEASE_OUTCOME_UNKNOWN, AFTER_OLD,
         "unknown"},
        /* delete: GraphQL updateRefs with a zero afterOid */
        {"delete-5xx", OP_DELETE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_5XX, 1, 503, LEASE_ENET, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_OLD, "503"},
        {"delete-drop", OP_DELETE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_DROP, 1, 0, LEASE_ECAS, 0,
         LEASE_OUTCOME_UNKNOWN, AFTER_NEW, NULL},
        /* outcome not checked: the primitives take a failed re-read for "absent",
         * which for a delete looks like the target (reported to the lead) */
        {"F24-delete-graphql-rate-limited", OP_DELETE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_RATE_LIMITED, 1, 100, LEASE_ERATELIMIT, 0, -1, AFTER_OLD, "rate limited"},
        {"F25-delete-rules", OP_DELETE, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_422_RULES, 1, 0,
         LEASE_EAUTH, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD, "rules"},
        /* commit objects: idempotent, so a 5xx is retried */
        {"commit-5xx-retried", OP_COMMIT, FAKEGH_COMMIT_POST, FAKEGH_FAULT_5XX, 1, 0, 0, 0, -1,
         AFTER_ANY, NULL},
        {"F26-commit-409-empty", OP_COMMIT, FAKEGH_COMMIT_POST, FAKEGH_FAULT_409_EMPTY, 1, 0,
         LEASE_ECONFIG, 0, -1, AFTER_ANY, "empty"},
        {"F25-commit-403-forbidden", OP_COMMIT, FAKEGH_COMMIT_POST, FAKEGH_FAULT_403_FORBIDDEN, 1,
         0, LEASE_EAUTH, 0, -1, AFTER_ANY, "contents: write"},
        {"F24-commit-429-no-header", OP_COMMIT, FAKEGH_COMMIT_POST, FAKEGH_FAULT_429_NOHDR, 1, 0,
         LEASE_ERATELIMIT, 0, -1, AFTER_ANY, "rate limited"},
        /* reads: retried on 5xx and lost answers */
        {"read-5xx-retried", OP_READ, FAKEGH_GQL_QUERY, FAKEGH_FAULT_5XX, 1, 0, 0, 0, -1, AFTER_ANY,
         NULL},
        {"read-drop-retried", OP_READ, FAKEGH_GQL_QUERY, FAKEGH_FAULT_DROP, 2, 0, 0, 0, -1,
         AFTER_ANY, NULL},
        {"read-graphql-internal-error-retried", OP_READ, FAKEGH_GQL_QUERY,
         FAKEGH_FAULT_GQL_INTERNAL, 1, 0, 0, 0, -1, AFTER_ANY, NULL},
        {"read-401", OP_READ, FAKEGH_GQL_QUERY, FAKEGH_FAULT_401, 1, 0, LEASE_EAUTH, 0, -1,
         AFTER_ANY, "401"},
        {"F24-read-graphql-rate-limited", OP_READ, FAKEGH_GQL_QUERY, FAKEGH_FAULT_GQL_RATE_LIMITED,
         1, 100, LEASE_ERATELIMIT, 0, -1, AFTER_ANY, "rate limited"},
        /* issue 15 #2: GraphQL rate limits in the shapes GitHub sends */
        {"read-graphql-RATE_LIMIT-type", OP_READ, FAKEGH_GQL_QUERY, FAKEGH_FAULT_GQL_RATE_LIMIT, 1,
         100, LEASE_ERATELIMIT, 0, -1, AFTER_ANY, "RATE_LIMIT"},
        {"read-graphql-403-errors-only", OP_READ, FAKEGH_GQL_QUERY, FAKEGH_FAULT_GQL_403_RATE_LIMIT,
         1, 100, LEASE_ERATELIMIT, 0, -1, AFTER_ANY, "rate limited"},
        {"read-graphql-untyped-rate-limit", OP_READ, FAKEGH_GQL_QUERY,
         FAKEGH_FAULT_GQL_UNTYPED_RATE_LIMIT, 1, 0, LEASE_ERATELIMIT, 0, -1, AFTER_ANY,
         "rate limit exceeded"},
        {"replace-graphql-RATE_LIMIT-type", OP_REPLACE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_RATE_LIMIT, 1, 100, LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD,
         "rate limited"},
        {"replace-graphql-403-errors-only", OP_REPLACE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_403_RATE_LIMIT, 1, 0, LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN, AFTER_OLD,
         "rate limited"},
        {"replace-graphql-untyped-rate-limit", OP_REPLACE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_UNTYPED_RATE_LIMIT, 1, 0, LEASE_ERATELIMIT, 0, LEASE_OUTCOME_KNOWN,
         AFTER_OLD, "rate limited"},
        {"delete-graphql-RATE_LIMIT-type", OP_DELETE, FAKEGH_GQL_MUTATION,
         FAKEGH_FAULT_GQL_RATE_LIMIT, 1, 100, LEASE_ERATELIMIT, 0, -1, AFTER_OLD, "rate limited"},
        /* issue 15 #1: a sporadic 422 "Reference update failed" on create */
        {"create-422-update-failed-once", OP_CREATE, FAKEGH_REF_CREATE,
         FAKEGH_FAULT_422_UPDATE_FAILED, 1, 0, 0, 0, -1, AFTER_NEW, NULL},
        {"create-422-update-failed-persistent", OP_CREATE, FAKEGH_REF_CREATE,
         FAKEGH_FAULT_422_UPDATE_FAILED, 3, 0, LEASE_ENET, 0, -1, AFTER_OLD, "transient"},
        {"list-5xx-retried", OP_LIST, FAKEGH_MATCHING, FAKEGH_FAULT_5XX, 1, 0, 0, 0, -1, AFTER_ANY,
         NULL},
        {"F26-list-409-empty", OP_LIST, FAKEGH_MATCHING, FAKEGH_FAULT_409_EMPTY, 1, 0,
         LEASE_ECONFIG, 0, -1, AFTER_ANY, "empty"},
};
#define NFAULTS (sizeof(faults) / sizeof(faults[0]))

START_TEST(fault_matrix)
{
	const struct fault_case *fc = &faults[_i];
	lease_oid a, b, seen;
	lease_ref_state s;
	lease_namespace ns;
	int rc = 0, present;
	const lease_oid *old = NULL, *target = NULL;

	memset(&s, 0, sizeof(s));
	memset(&ns, 0, sizeof(ns));
	commit(&a, "f", NULL);
	commit(&b, "f", &a);
	if (fc->op != OP_CREATE && fc->op != OP_COMMIT)
		ck_assert_int_eq(lease_cas_create(st, "f", &a), 0);
	fakegh_fault(fk, fc->ep, fc->kind, fc->count, fc->arg);
	switch (fc->op) {
	case OP_COMMIT: rc = lease_write_commit(&seen, st, &a, "f: acquire claimed\n\n{}"); break;
	case OP_CREATE:
		rc = lease_cas_create(st, "f", &a);
		target = &a;
		break;
	case OP_REPLACE:
		rc = lease_cas_replace(st, "f", &a, &b);
		old = &a;
		target = &b;
		break;
	case OP_DELETE:
		rc = lease_cas_delete(st, "f", &a);
		old = &a;
		break;
	case OP_READ:
		rc = lease_fetch_ref(&s, st, "f");
		if (rc == 0)
			ck_assert(lease_oid_equal(&s.oid, &a));
		lease_ref_state_clear(&s);
		break;
	case OP_LIST:
		rc = lease_fetch_namespace(&ns, st);
		lease_namespace_clear(&ns);
		break;
	}
	if (getenv("FAKEGH_DEBUG"))
		fprintf(stderr, "%s: rc %d, %u creates, %u mutations\n", fc->id, rc,
		        fakegh_count(fk, FAKEGH_REF_CREATE), fakegh_count(fk, FAKEGH_GQL_MUTATION));
	if (rc != fc->rc && (fc->alt_rc == 0 || rc != fc->alt_rc)) {
		fprintf(stderr, "%s: rc %d (%s): %s\n", fc->id, rc, lease_error_id(rc),
		        lease_store_last_error(st));
		dump_log();
	}
	ck_assert_msg(rc == fc->rc || (fc->alt_rc && rc == fc->alt_rc), "%s: rc %d", fc->id, rc);
	if (fc->outcome >= 0)
		ck_assert_msg((int)lease_store_last_cas_error(st)->outcome == fc->outcome,
		              "%s: outcome", fc->id);
	if (fc->needle)
		ck_assert_msg(strstr(lease_store_last_error(st), fc->needle),
		              "%s: '%s' not in '%s'", fc->id, fc->needle,
		              lease_store_last_error(st));
	present = ref_at("f", &seen);
	if (fc->after == AFTER_OLD) {
		if (old)
			ck_assert_msg(present && lease_oid_equal(&seen, old), "%s: not old",
			              fc->id);
		else
			ck_assert_msg(!present, "%s: not absent", fc->id);
	} else if (fc->after == AFTER_NEW) {
		if (target)
			ck_assert_msg(present && lease_oid_equal(&seen, target), "%s: not new",
			              fc->id);
		else
			ck_assert_msg(!present, "%s: not deleted", fc->id);
	}
	/* never a blind resend of a write beyond libcurl's own single re-send
	 * (a create refused by a transient 422 is resent: it never overwrites) */
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_REF_CREATE),
	                  fc->kind == FAKEGH_FAULT_422_UPDATE_FAILED ? 3 : 2);
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_GQL_MUTATION), 2);
	ck_assert(!strstr(logcap_buf, CANARY));
	ck_assert(!strstr(lease_store_last_error(st), CANARY));
}
END_TEST

/* Rate limits that end inside the timeout are waited out (retry-after). */
START_TEST(F24_rate_limit_waited_inside_timeout)
{
	lease_oid a, b;

	commit(&a, "w", NULL);
	commit(&b, "w", &a);
	fakegh_fault(fk, FAKEGH_REF_CREATE, FAKEGH_FAULT_403_RETRY, 1, 1);
	ck_assert_int_eq(lease_cas_create(st, "w", &a), 0);
	fakegh_fault(fk, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_429_RETRY, 1, 1);
	ck_assert_int_eq(lease_cas_replace(st, "w", &a, &b), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_CREATE), 2);
	/* progress is logged */
	ck_assert_ptr_nonnull(strstr(logcap_buf, "retrying in 1 s"));
}
END_TEST

/* A server that answers too late: a read is unreachable (69) after the
 * timeout; a write's outcome is unknown — it may land after we gave up. */
START_TEST(timeouts_read_unreachable_write_unknown)
{
	lease_store *s2 = NULL;
	lease_ref_state s;
	lease_oid a, seen;
	int i;

	commit(&a, "slow", NULL);
	ck_assert_int_eq(open_store(&s2, CANARY, 1, 200), 0);
	memset(&s, 0, sizeof(s));
	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_STALL, 1, 2500);
	ck_assert_int_eq(lease_fetch_ref(&s, s2, "slow"), LEASE_ENET);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(s2), "unreachable"));
	lease_ref_state_clear(&s);
	lease_store_free(s2);
	ck_assert_int_eq(open_store(&s2, CANARY, 1, 200), 0);
	fakegh_fault(fk, FAKEGH_REF_CREATE, FAKEGH_FAULT_STALL, 1, 2500);
	ck_assert_int_eq(lease_cas_create(s2, "slow", &a), LEASE_ENET);
	ck_assert_int_eq(lease_store_last_cas_error(s2)->outcome, LEASE_OUTCOME_UNKNOWN);
	lease_store_free(s2);
	for (i = 0; i < 50 && ref_at("slow", &seen) != 1; i++)
		usleep(100000);
	ck_assert_int_eq(ref_at("slow", &seen), 1); /* it landed after all */
	ck_assert(lease_oid_equal(&seen, &a));
}
END_TEST

/* F10: a 422 other than "already exists" (a ref named like a path prefix) is
 * re-read and reported as what it is, never as a held lease. */
START_TEST(F10_path_collision_422_reread)
{
	lease_oid a;

	commit(&a, "a", NULL);
	ck_assert_int_eq(
	        fakegh_set_ref(fk, "refs/leases/a/b", "0000000000000000000000000000000000000000"),
	        -1);
	{
		char hex[41];
		lease_oid_tohex(hex, &a);
		ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/a/b", hex), 0);
	}
	ck_assert_int_eq(lease_cas_create(st, "a", &a), LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "422"));
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	/* and a '/' in a name is refused before any I/O */
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_cas_create(st, "a/b", &a), LEASE_EINVALID);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), 0);
}
END_TEST

/* POST /git/refs straight through the HTTP client (no verification read). */
static void raw_create(const char *name, const lease_oid *oid)
{
	lease_http *h = NULL;
	lease_http_response r;
	char url[200], body[200], hex[41], err[256];

	lease_oid_tohex(hex, oid);
	ck_assert_int_eq(lease__http_new(&h, CANARY, err, sizeof(err)), 0);
	snprintf(url, sizeof(url), "%s/repos/octo/leases/git/refs", fakegh_url(fk));
	snprintf(body, sizeof(body), "{\"ref\":\"refs/leases/%s\",\"sha\":\"%s\"}", name, hex);
	ck_assert_int_eq(lease__http_request(h, &r, "POST", url, body, 5000), 0);
	ck_assert_int_eq(r.status, 201);
	lease__http_response_clear(&r);
	lease__http_free(h);
}

/* Issue 15 #6: replica lag on the create path. Another writer's create has
 * landed but reads still miss it: our create is answered "already exists"
 * (or first a sporadic "Reference update failed"), the re-read answers 404
 * — lag, never "absent", never a path collision: polled through, settled as
 * a lost race with the other writer's oid observed. */
START_TEST(create_exists_then_404_is_lag)
{
	lease_store *s2 = NULL;
	lease_oid a, b;
	int round;

	ck_assert_int_eq(open_store(&s2, CANARY, 10, 8000), 0);
	for (round = 0; round < 2; round++) {
		char name[16];
		snprintf(name, sizeof(name), "lagx%d", round);
		commit(&a, name, NULL);
		commit(&b, name, NULL);
		/* the other writer's create lands; reads miss it for 2.5 s */
		fakegh_set_read_lag(fk, 2500);
		raw_create(name, &a);
		fakegh_reset_counts(fk);
		if (round == 1)
			fakegh_fault(fk, FAKEGH_REF_CREATE, FAKEGH_FAULT_422_UPDATE_FAILED, 1, 0);
		ck_assert_int_eq(lease_cas_create(s2, name, &b), LEASE_ECAS);
		ck_assert_int_eq(lease_store_last_cas_error(s2)->outcome, LEASE_OUTCOME_KNOWN);
		ck_assert_int_eq(lease_store_last_cas_error(s2)->observed_present, 1);
		ck_assert(lease_oid_equal(&lease_store_last_cas_error(s2)->observed, &a));
		if (round == 0) /* the re-read right after: inside the lag */
			ck_assert_uint_gt(fakegh_count(fk, FAKEGH_REF_GET), 1); /* polled */
		fakegh_set_read_lag(fk, 0);
	}
	lease_store_free(s2);
}
END_TEST

/* Issue 15 #3: GraphQL's view of refs outside heads/ and tags/ is
 * undocumented. Whatever it shows — everything, nothing, a namespace count
 * that disagrees with ref(), or another ref than the one asked for — the
 * backend gives the same answers: presence only from the ref asked for,
 * absences confirmed by REST. */
START_TEST(same_answers_whatever_graphql_shows)
{
	static const fakegh_gql_view views[] = {FAKEGH_GQL_SEES, FAKEGH_GQL_BLIND,
	                                        FAKEGH_GQL_DISAGREE, FAKEGH_GQL_ELSEWHERE};
	fakegh_options o;
	lease_ref_state s;
	lease_oid a, b, other;
	char hex[41];

	teardown();
	memset(&o, 0, sizeof(o));
	o.graphql_view = views[_i];
	start(&o);
	/* a namespace that already holds a ref (what DISAGREE's count shows),
	 * and a branch named like the lease (what ELSEWHERE answers) */
	commit(&other, "other", NULL);
	lease_oid_tohex(hex, &other);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/other", hex), 0);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/heads/v", hex), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "v"), 0);
	ck_assert_msg(s.present == 0, "view %d: absent lease read as present", _i);
	lease_ref_state_clear(&s);
	commit(&a, "v", NULL);
	ck_assert_msg(lease_cas_create(st, "v", &a) == 0, "view %d: %s", _i,
	              lease_store_last_error(st));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "v"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert(lease_oid_equal(&s.oid, &a));
	ck_assert_int_eq(s.payload_rc, 0);
	lease_ref_state_clear(&s);
	commit(&b, "v", &a);
	ck_assert_int_eq(lease_cas_replace(st, "v", &a, &b), 0);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "v"), 0);
	ck_assert(lease_oid_equal(&s.oid, &b));
	lease_ref_state_clear(&s);
	ck_assert_int_eq(lease_cas_create(st, "v", &a), LEASE_ECAS);
	storefix_expect_count(st, 2);
	ck_assert_int_eq(lease_cas_delete(st, "v", &b), 0);
	storefix_expect_absent(st, "v");
}
END_TEST

/* Issue 15 #4: a renamed or transferred repository answers REST with 301
 * (GET) and 307 (other methods), as @octokit/fixtures recorded; the redirect
 * is followed on the API host (a 301 moves every later request there), and
 * GraphQL follows renames on its own. */
START_TEST(moved_repository_followed_on_api_host)
{
	lease_namespace ns;
	lease_ref_state s;
	lease_oid a, b;
	size_t i, n, redirected = 0;
	char line[700];

	fakegh_set_moved(fk, "");
	commit(&a, "mv", NULL); /* POST → 307, repeated at /repositories/4242 */
	ck_assert_int_eq(lease_cas_create(st, "mv", &a), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "mv"), 0);
	ck_assert_int_eq(s.present, 1);
	lease_ref_state_clear(&s);
	memset(&ns, 0, sizeof(ns));
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0); /* GET → 301: remembered */
	ck_assert_uint_eq(ns.count, 1);
	lease_namespace_clear(&ns);
	commit(&b, "mv", &a);
	ck_assert_int_eq(lease_cas_replace(st, "mv", &a, &b), 0);
	ck_assert_int_eq(lease_cas_delete(st, "mv", &b), 0);
	n = fakegh_log_size(fk);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(fakegh_log_line(fk, i, line, sizeof(line)), 0);
		if (strstr(line, " 301") || strstr(line, " 307")) {
			redirected++;
			ck_assert_ptr_nonnull(strstr(line, "/repos/octo/leases/"));
		}
	}
	/* the commit and create (307), the first listing (301); then the new place */
	ck_assert_uint_ge(redirected, 2);
	ck_assert_uint_le(redirected, 3);
	ck_assert_ptr_nonnull(strstr(logcap_buf, "moved"));
}
END_TEST

/* ... and never followed off the API host: the token stays home; the
 * command stops with a configuration error (78) saying where it moved. */
START_TEST(moved_repository_elsewhere_explained)
{
	fakegh *fk2 = NULL;
	fakegh_options o;
	lease_ref_state s;
	lease_oid a;
	char there[128];
	int rc;

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(fakegh_start(&fk2, &o), 0);
	snprintf(there, sizeof(there), "%s/repos/new-owner/leases", fakegh_url(fk2));
	fakegh_set_moved(fk, there);
	memset(&a, 0, sizeof(a));
	rc = lease_write_commit(&a, st, NULL, "mv: acquire claimed\n\n{}");
	ck_assert_int_eq(rc, LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "moved"));
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), there));
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "mv"), LEASE_ECONFIG); /* the REST confirm */
	lease_ref_state_clear(&s);
	ck_assert_uint_eq(fakegh_count(fk2, FAKEGH_ANY), 0);
	ck_assert(!strstr(lease_store_last_error(st), CANARY));
	fakegh_stop(fk2);
}
END_TEST

/* F26: an empty repository: writes say what to do (exit 78 upstream). */
START_TEST(F26_empty_repository)
{
	fakegh_options o;
	lease_oid a;
	lease_namespace ns;

	teardown();
	memset(&o, 0, sizeof(o));
	o.empty = 1;
	start(&o);
	memset(&ns, 0, sizeof(ns));
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(lease_write_commit(&a, st, NULL, "x: acquire claimed\n\n{}"),
	                 LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "push an initial commit"));
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_ECONFIG);
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_ANY), 3); /* no loop */
}
END_TEST

/* Bad credentials: the fake expects another token. */
START_TEST(wrong_token_is_eauth)
{
	fakegh_options o;
	lease_ref_state s;

	teardown();
	memset(&o, 0, sizeof(o));
	o.token = "the-right-one";
	start(&o);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "x"), LEASE_EAUTH);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "401"));
	ck_assert(!strstr(lease_store_last_error(st), CANARY));
	ck_assert(!strstr(logcap_buf, CANARY));
	lease_ref_state_clear(&s);
}
END_TEST

/* protocol.md §4: the store's time is the server's Date plus monotonic time. */
START_TEST(time_base_is_date_header)
{
	fakegh_options o;
	lease_ref_state s;
	lease_oid a;
	int64_t now;

	teardown();
	memset(&o, 0, sizeof(o));
	o.time_offset_s = 5000;
	start(&o);
	ck_assert_int_eq(lease_store_skew_margin(st), 5);
	ck_assert_int_eq(lease_store_ttl_min(st), 60);
	/* before any answer: the local clock, no request spent on it */
	now = lease_store_now(st);
	ck_assert_int_le(now, (int64_t)time(NULL) + 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "t"), 0);
	lease_ref_state_clear(&s);
	now = lease_store_now(st);
	ck_assert_int_ge(now, (int64_t)time(NULL) + 4990);
	ck_assert_int_le(now, (int64_t)time(NULL) + 5010);
	commit(&a, "t", NULL);
	ck_assert_int_eq(lease_cas_create(st, "t", &a), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "t"), 0);
	ck_assert_int_ge(s.commit.time, (int64_t)time(NULL) + 4990);
	lease_ref_state_clear(&s);
}
END_TEST

/* REST fallback where GraphQL does not see refs/<ns>/ (protocol.md §9). */
START_TEST(graphql_blind_falls_back_to_rest)
{
	fakegh_options o;
	lease_ref_state s;
	lease_namespace ns;
	lease_oid a, b;

	teardown();
	memset(&o, 0, sizeof(o));
	o.graphql_blind = 1;
	start(&o);
	commit(&a, "blind", NULL);
	ck_assert_int_eq(lease_cas_create(st, "blind", &a), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "blind"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert_int_eq(s.payload_rc, 0);
	lease_ref_state_clear(&s);
	commit(&b, "blind", &a);
	ck_assert_int_eq(lease_cas_replace(st, "blind", &a, &b), 0);
	ck_assert_uint_gt(fakegh_count(fk, FAKEGH_REF_GET), 0);
	ck_assert_uint_gt(fakegh_count(fk, FAKEGH_COMMIT_GET), 0);
	memset(&ns, 0, sizeof(ns));
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_int_eq(ns.leases[0].payload_rc, 0);
	lease_namespace_clear(&ns);
}
END_TEST

/* A paginated listing (Link: rel="next") is followed to the end. */
START_TEST(listing_follows_link_next)
{
	fakegh_options o;
	lease_namespace ns;
	lease_oid a;
	char ref[64], hex[41];
	int i;

	teardown();
	memset(&o, 0, sizeof(o));
	o.page_size = 7;
	start(&o);
	commit(&a, "p00", NULL);
	lease_oid_tohex(hex, &a);
	for (i = 0; i < 20; i++) {
		snprintf(ref, sizeof(ref), "refs/leases/p%02d", i);
		ck_assert_int_eq(fakegh_set_ref(fk, ref, hex), 0);
	}
	memset(&ns, 0, sizeof(ns));
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 20);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 3);
	lease_namespace_clear(&ns);
}
END_TEST

/* ---- the namespace read page by page (issue 29 item 3) ----------------------- */

#define STREAM_PAGE   7   /* the fake's page of matching-refs */
#define STREAM_LEASES 230 /* + an invalid name and a blob: 232 refs, 34 pages */
#define STREAM_REFS   (STREAM_LEASES + 2)
#define STREAM_PAGES  ((STREAM_REFS + STREAM_PAGE - 1) / STREAM_PAGE)
#define GQL_BATCH     100 /* lib/store/github.c: refs prefetched per GraphQL request */

/* A namespace of STREAM_LEASES leases, each its own commit (every tenth
 * with a parent), a ref whose name breaks the rule and a ref at a blob,
 * served by a fake that pages matching-refs by STREAM_PAGE. */
static void stream_namespace(void)
{
	fakegh_options o;
	lease_oid a, b;
	char ref[64], name[16], hex[41];
	int i;

	teardown();
	memset(&o, 0, sizeof(o));
	o.page_size = STREAM_PAGE;
	start(&o);
	for (i = 0; i < STREAM_LEASES; i++) {
		snprintf(name, sizeof(name), "s%03d", i);
		commit(&a, name, NULL);
		if (i % 10 == 0) {
			commit(&b, name, &a);
			a = b;
		}
		lease_oid_tohex(hex, &a);
		snprintf(ref, sizeof(ref), "refs/leases/%s", name);
		ck_assert_int_eq(fakegh_set_ref(fk, ref, hex), 0);
	}
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/s10x/y", hex), 0);
	ck_assert_int_eq(fakegh_write_blob(fk, "not a commit", hex), 0);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/zblob", hex), 0);
}

/* What a walk saw: one line per visit, and the fake's state at the first. */
typedef struct seen {
	char lines[STREAM_REFS + 8][512];
	size_t n;
	unsigned pages_at_first;        /* matching-refs requests when the first lease came */
	fakegh_fault_kind fault_at_100; /* injected into the next page after 100 visits */
} seen;

static void seen_line(seen *w, const char *line)
{
	if (w->n == 0)
		w->pages_at_first = fakegh_count(fk, FAKEGH_MATCHING);
	ck_assert_uint_lt(w->n, STREAM_REFS + 8);
	snprintf(w->lines[w->n++], sizeof(w->lines[0]), "%s", line);
	if (w->n == GQL_BATCH && w->fault_at_100)
		fakegh_fault(fk, FAKEGH_MATCHING, w->fault_at_100, 3, 0);
}

static int count_visits(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total,
                        void *payload)
{
	(void)s, (void)iv, (void)total;
	++*(int *)payload;
	return 0;
}

static int seen_visit(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total,
                      void *payload)
{
	char line[512], hex[41], phex[41] = "-";

	(void)total;
	if (iv) {
		lease_oid_tohex(hex, &iv->oid);
		snprintf(line, sizeof(line), "invalid %s %s", iv->refname, hex);
	} else {
		lease_oid_tohex(hex, &s->oid);
		if (s->has_parent_commit)
			lease_oid_tohex(phex, &s->parent_commit.oid);
		snprintf(line, sizeof(line), "%s %s %d %s %d rc=%d %.40s %.200s", s->name, hex,
		         s->commit.is_commit, phex, s->commit.has_parent, s->payload_rc,
		         s->payload_rc == 0 ? s->payload.lease_token : "",
		         s->commit.message ? s->commit.message : "");
	}
	seen_line(payload, line);
	return 0;
}

/* The requests of each class since the last reset. */
static void request_counts(unsigned out[FAKEGH_N_ENDPOINTS])
{
	int ep;

	for (ep = 0; ep < FAKEGH_N_ENDPOINTS; ep++)
		out[ep] = fakegh_count(fk, (fakegh_endpoint)ep);
}

/* lease_namespace_each on GitHub holds one page at a time (issue 29 item 3):
 * the first lease is visited before the last page is asked for, the
 * transport never holds more than a page plus the refs carried to the next
 * GraphQL batch, and the walk's entries and requests are those of the whole
 * listing (list_refs, what the walk used before). */
START_TEST(namespace_read_page_by_page)
{
	static seen whole, paged;
	unsigned cw[FAKEGH_N_ENDPOINTS], cp[FAKEGH_N_ENDPOINTS];
	int (*each)(lease_transport *, const char *, int (*)(lease_ref_list *, void *), void *);
	size_t i, peak;
	int ep;

	stream_namespace();
	memset(&whole, 0, sizeof(whole));
	memset(&paged, 0, sizeof(paged));

	/* the whole listing at once: the walk before list_refs_each */
	each = st->t->list_refs_each;
	ck_assert(each != NULL);
	st->t->list_refs_each = NULL;
	lease__github_listing_peak(st->t, 1);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_namespace_each(st, seen_visit, &whole), 0);
	request_counts(cw);
	ck_assert_uint_eq(lease__github_listing_peak(st->t, 1), STREAM_REFS);
	ck_assert_uint_eq(whole.pages_at_first, STREAM_PAGES);
	st->t->list_refs_each = each;

	/* page by page */
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_namespace_each(st, seen_visit, &paged), 0);
	request_counts(cp);
	peak = lease__github_listing_peak(st->t, 1);
	ck_assert_msg(peak <= STREAM_PAGE + GQL_BATCH - 1,
	              "the transport held %zu refs at once (a page is %d)", peak, STREAM_PAGE);
	ck_assert_uint_eq(paged.pages_at_first, (GQL_BATCH + STREAM_PAGE - 1) / STREAM_PAGE);

	/* the same entries, in the same order, for the same requests */
	ck_assert_uint_eq(whole.n, STREAM_REFS);
	ck_assert_uint_eq(paged.n, whole.n);
	for (i = 0; i < whole.n; i++)
		ck_assert_str_eq(paged.lines[i], whole.lines[i]);
	ck_assert_ptr_nonnull(strstr(whole.lines[0], "s000 "));
	ck_assert_ptr_nonnull(strstr(whole.lines[110], "invalid refs/leases/s10x/y"));
	ck_assert_ptr_nonnull(strstr(whole.lines[STREAM_REFS - 1], "zblob "));
	for (ep = 0; ep < FAKEGH_N_ENDPOINTS; ep++)
		ck_assert_msg(cp[ep] == cw[ep], "%s: %u requests page by page, %u whole",
		              fakegh_endpoint_name((fakegh_endpoint)ep), cp[ep], cw[ep]);
	ck_assert_uint_eq(cp[FAKEGH_MATCHING], STREAM_PAGES);
	ck_assert_uint_eq(cp[FAKEGH_GQL_QUERY], (STREAM_REFS + GQL_BATCH - 1) / GQL_BATCH);
}
END_TEST

/* reconcile's visit: count, and break the next page after 100 entries. */
static int seen_entry(const lease_reconcile_entry *e, void *payload)
{
	seen_line(payload, e->name);
	return 0;
}

/* A page that fails after others were walked fails the read, and the sweep
 * with it: no half namespace passes for the whole (issue 29 item 3). */
START_TEST(namespace_page_failing_midway_fails_the_sweep)
{
	static seen w;
	lease_reconcile_options ro = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report sum;
	int rc;

	stream_namespace();
	memset(&w, 0, sizeof(w));
	w.fault_at_100 = FAKEGH_FAULT_401;
	rc = lease_namespace_each(st, seen_visit, &w);
	ck_assert_int_eq(rc, LEASE_EAUTH);
	ck_assert_uint_eq(w.n, GQL_BATCH);
	ck_assert_msg(strstr(lease_store_last_error(st), "the listing failed after 100 refs"), "%s",
	              lease_store_last_error(st));

	/* the sweep: reconcile stops with the error, its summary short */
	fakegh_clear_faults(fk);
	memset(&w, 0, sizeof(w));
	w.fault_at_100 = FAKEGH_FAULT_403_FORBIDDEN;
	rc = lease_reconcile_each(&sum, st, &ro, seen_entry, &w);
	ck_assert_int_eq(rc, LEASE_EAUTH);
	ck_assert_uint_eq(sum.count, GQL_BATCH);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "the listing failed after"));
	lease_reconcile_report_free(&sum);

	/* the fault gone, the same sweep sees every ref */
	fakegh_clear_faults(fk);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_reconcile_each(&sum, st, &ro, seen_entry, &w), 0);
	ck_assert_uint_eq(sum.count, STREAM_REFS);
	lease_reconcile_report_free(&sum);
}
END_TEST

/* GHES: base URLs with path prefixes (/api/v3, /api/graphql derived). */
START_TEST(ghes_path_prefix)
{
	lease_store *s2 = NULL;
	char url[128];
	lease_oid a;

	snprintf(url, sizeof(url), "%s/api/v3/", fakegh_url(fk));
	snprintf(api_url, sizeof(api_url), "%s", url);
	ck_assert_int_eq(open_store(&s2, CANARY, 5, 2000), 0);
	ck_assert_int_eq(lease_write_commit(&a, s2, NULL, "g: acquire claimed\n\n{}"), 0);
	ck_assert_int_eq(lease_cas_create(s2, "g", &a), 0);
	lease_store_free(s2);
}
END_TEST

/* ---- canned answers (lease__http_set_responder); virtual time (vclock) ---------- */

struct canned {
	const char *answer; /* every request gets it */
	int requests;
	char urls[8][300];
};

static int canned_respond(void *payload, const char *method, const char *url, const char *body,
                          const char **raw, size_t *raw_len)
{
	struct canned *c = payload;

	(void)method;
	(void)body;
	if (c->requests < 8)
		snprintf(c->urls[c->requests], sizeof(c->urls[0]), "%s", url);
	c->requests++;
	*raw = c->answer;
	*raw_len = strlen(c->answer);
	return 0;
}

/* A `next` link leading back to the same page fails the listing at once
 * (before issue 29 it was followed 100 times and the listing taken as the
 * whole): never a listing cut short passing for the whole one. */
START_TEST(listing_link_loop_fails)
{
	static char answer[1024];
	struct canned c = {answer, 0, {{0}}};
	static int visits;

	snprintf(answer, sizeof(answer),
	         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nLink: "
	         "<%s/repos/octo/leases/git/matching-refs/leases/?page=2>; rel=\"next\"\r\n\r\n"
	         "[{\"ref\":\"refs/leases/a\",\"object\":{\"sha\":"
	         "\"0123456789abcdef0123456789abcdef01234567\"}}]",
	         fakegh_url(fk));
	lease__github_set_rest_only(st->t); /* no GraphQL prefetch: REST only */
	lease__http_set_responder(lease__github_http(st->t), canned_respond, &c);
	visits = 0;
	ck_assert_int_eq(lease_namespace_each(st, count_visits, &visits), LEASE_EINTERNAL);
	ck_assert_int_eq(c.requests, 2);
	ck_assert_msg(strstr(lease_store_last_error(st), "does not advance"), "%s",
	              lease_store_last_error(st));
}
END_TEST

/* Issue 15 #7 on the virtual clock (the store options' clock, issue 26):
 * lease__store_pace() waits until 1 s after the last content-creating
 * request, and only then; no real time. */
START_TEST(pacing_on_the_virtual_clock)
{
	struct canned c = {"HTTP/1.1 201 Created\r\nDate: Mon, 30 Nov 2026 08:00:00 GMT\r\n\r\n"
	                   "{\"sha\":\"0123456789abcdef0123456789abcdef01234567\"}",
	                   0,
	                   {{0}}};
	struct timespec t0, t1;
	lease_store *s2 = NULL;
	vclock vc;
	lease_oid a;
	int64_t v0, waited;

	vclock_init(&vc, 0);
	ck_assert_int_eq(open_store_on(&s2, CANARY, 5, 2000, &vc), 0);
	lease__http_set_responder(lease__github_http(s2->t), canned_respond, &c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(lease__store_pace(s2), 0); /* nothing written yet */
	ck_assert_int_eq(lease_write_commit(&a, s2, NULL, "p: acquire claimed\n\n{}"), 0);
	v0 = vclock_mono_ms(&vc);
	waited = lease__store_pace(s2);
	ck_assert_int_gt(waited, 900);
	ck_assert_int_le(waited, 1000);
	ck_assert_int_ge(vclock_mono_ms(&vc) - v0, waited);
	ck_assert_int_eq(lease__store_pace(s2), 0); /* a second has passed */
	ck_assert_int_eq(lease__store_paced_ms(s2), waited);
	vclock_advance(&vc, 400);
	ck_assert_int_eq(lease_write_commit(&a, s2, NULL, "p: acquire claimed\n\n{}"), 0);
	vclock_advance(&vc, 400);
	waited = lease__store_pace(s2);
	ck_assert_int_gt(waited, 500);
	ck_assert_int_le(waited, 600);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_lt((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 900);
	lease_store_free(s2);
}
END_TEST

/* Issue 15 #4 on canned answers: a Location off the API host is never
 * requested (the token stays home); a redirect loop is bounded. */
START_TEST(redirects_bounded_and_never_off_host)
{
	struct canned off = {"HTTP/1.1 301 Moved Permanently\r\nDate: Mon, 30 Nov 2026 08:00:00 "
	                     "GMT\r\nLocation: https://api.example.invalid/repositories/9/git/"
	                     "commits\r\n\r\n{\"message\":\"Moved Permanently\"}",
	                     0,
	                     {{0}}};
	struct canned loop = {"HTTP/1.1 307 Temporary Redirect\r\nDate: Mon, 30 Nov 2026 "
	                      "08:00:00 GMT\r\nLocation: /repos/octo/leases/git/commits\r\n\r\n",
	                      0,
	                      {{0}}};
	lease_oid a;
	int i;

	lease__http_set_responder(lease__github_http(st->t), canned_respond, &off);
	ck_assert_int_eq(lease_write_commit(&a, st, NULL, "m: acquire claimed\n\n{}"),
	                 LEASE_ECONFIG);
	ck_assert_int_eq(off.requests, 1);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "api.example.invalid"));
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "moved"));
	lease__http_set_responder(lease__github_http(st->t), canned_respond, &loop);
	ck_assert_int_eq(lease_write_commit(&a, st, NULL, "m: acquire claimed\n\n{}"),
	                 LEASE_ECONFIG);
	ck_assert_int_eq(loop.requests, 4); /* the request and 3 hops */
	for (i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(strstr(loop.urls[i], fakegh_url(fk)));
	lease__http_set_responder(lease__github_http(st->t), NULL, NULL);
}
END_TEST

/* ---- configuration and the credential ------------------------------------------- */

START_TEST(plain_http_only_to_loopback)
{
	static const textcase t[] = {
	        {"https://api.github.com", 1},
	        {"https://ghe.example.invalid/api/v3", 1},
	        {"http://127.0.0.1:8080", 1},
	        {"http://127.4.5.6", 1},
	        {"http://localhost:9", 1},
	        {"http://[::1]:9/api/v3", 1},
	        {"http://api.github.invalid", 0},
	        {"http://10.0.0.1", 0},
	        {"http://128.0.0.1", 0},
	        {"http://[::2]", 0},
	        {"http://localhost.example.invalid", 0},
	        /* issue 15 item 8: loopback by parsing, never by prefix */
	        {"http://127.example.invalid", 0},
	        {"http://127.0.0.1.example.invalid:8080", 0},
	        {"http://[::ffff:127.0.0.1]", 1},
	        {"ftp://127.0.0.1", 0},
	        {"file:///etc/passwd", 0},
	        {"", 0},
	};
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *s2 = NULL;
	char err[512];
	size_t i;

	for (i = 0; i < TEXTCASES(t); i++)
		ck_assert_msg((lease__http_check_url(t[i].text, err, sizeof(err)) == 0) ==
		                      t[i].want,
		              "%s", t[i].text);
	o.github_token = CANARY;
	o.github_api_url = "http://api.example.invalid";
	ck_assert_int_eq(lease_store_open(&s2, "github:octo/leases", &o, err, sizeof(err)),
	                 LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err, "http"));
	ck_assert(!strstr(err, CANARY));
	/* issue 15 #8: a name beginning with "127." is no loopback address */
	o.github_api_url = "http://127.example.invalid/api/v3";
	ck_assert_int_eq(lease_store_open(&s2, "github:octo/leases", &o, err, sizeof(err)),
	                 LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err, "127.example.invalid"));
	ck_assert(!strstr(err, CANARY));
	/* a GraphQL URL on another origin is never used (issue 24 #2: ignored,
	 * the token goes to the API's origin only; tests/test_github_net.c) */
	o.github_api_url = "https://api.example.invalid";
	o.github_graphql_url = "http://gql.example.invalid/graphql";
	ck_assert_int_eq(lease_store_open(&s2, "github:octo/leases", &o, err, sizeof(err)), 0);
	lease_store_free(s2);
}
END_TEST

START_TEST(spec_and_token_rules)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *s2 = NULL;
	char err[512];

	ck_assert_int_eq(lease_store_open(&s2, "github:noslash", &o, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_int_eq(lease_store_open(&s2, "github:o/r/x", &o, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_int_eq(lease_store_open(&s2, "github:o/..", &o, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_int_eq(lease_store_open(&s2, "github:octo/leases", &o, err, sizeof(err)),
	                 LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err, "GITHUB_TOKEN"));
	o.github_token = "bad token\r\nX-Injected: 1";
	ck_assert_int_eq(lease_store_open(&s2, "github:octo/leases", &o, err, sizeof(err)),
	                 LEASE_ECONFIG);
	ck_assert(!strstr(err, "Injected"));
	/* no token but a token file: read at open (the library reads no
	 * environment variable, issue 26: GITHUB_TOKEN is the CLI's, test_cli.c) */
	o.github_token = NULL;
	{
		char path[] = "/tmp/reflease-token-XXXXXX";
		int fd = mkstemp(path);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, CANARY "\n", sizeof(CANARY)), (ssize_t)sizeof(CANARY));
		close(fd);
		o.github_token_file = path;
		ck_assert_int_eq(lease_store_open(&s2, "github:octo/leases", &o, err, sizeof(err)),
		                 0);
		ck_assert_str_eq(lease_store_kind(s2), "github");
		lease_store_free(s2);
		unlink(path);
	}
}
END_TEST

/* The token canary: a verbose (DEBUG) run with successes, faults and errors
 * never shows the token in any log line or error message. */
START_TEST(token_canary_never_logged)
{
	lease_namespace ns;
	lease_oid a, b;
	lease_ref_state s;

	memset(&ns, 0, sizeof(ns));
	memset(&s, 0, sizeof(s));
	commit(&a, "c", NULL);
	fakegh_fault(fk, FAKEGH_REF_CREATE, FAKEGH_FAULT_DROP, 1, 0);
	(void)lease_cas_create(st, "c", &a);
	ck_assert(!strstr(lease_store_last_error(st), CANARY));
	commit(&b, "c", &a);
	fakegh_fault(fk, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_401, 1, 0);
	ck_assert_int_eq(lease_cas_replace(st, "c", &a, &b), LEASE_EAUTH);
	ck_assert(!strstr(lease_store_last_error(st), CANARY));
	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_5XX, 1, 0);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "c"), 0);
	lease_ref_state_clear(&s);
	fakegh_fault(fk, FAKEGH_MATCHING, FAKEGH_FAULT_403_FORBIDDEN, 1, 0);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_EAUTH);
	ck_assert(!strstr(lease_store_last_error(st), CANARY));
	ck_assert_uint_gt(logcap_len, 100); /* the run did log, verbosely */
	ck_assert_ptr_nonnull(strstr(logcap_buf, "github: POST"));
	ck_assert(!strstr(logcap_buf, CANARY));
	ck_assert(!strstr(logcap_buf, "Bearer"));
}
END_TEST

/* http.c: bounded bodies fail cleanly; keep-alive reuses one connection. */
START_TEST(http_body_cap_and_headers)
{
	lease_http *h = NULL;
	lease_http_response r;
	char url[160], err[256];

	ck_assert_int_eq(lease__http_new(&h, CANARY, err, sizeof(err)), 0);
	snprintf(url, sizeof(url), "%s/repos/octo/leases/git/matching-refs/heads/", fakegh_url(fk));
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 5000), 0);
	ck_assert_int_eq(r.result, LEASE_HTTP_OK);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_gt(r.date, 0);
	ck_assert_int_ge(r.rl_remaining, 0);
	ck_assert_int_gt(r.rl_reset, 0);
	lease__http_response_clear(&r);
	lease__http_set_body_cap(h, 16);
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 5000), 0);
	ck_assert_int_eq(r.result, LEASE_HTTP_UNANSWERED);
	ck_assert_int_eq(r.body_overflow, 1);
	ck_assert_ptr_null(r.body);
	lease__http_response_clear(&r);
	lease__http_set_body_cap(h, 0);
	/* same-SHA PATCH is answered 200 by GitHub (and the fake): a lie a CAS
	 * must never rely on — reflease never sends PATCH. */
	{
		char hex[41], body[128];
		ck_assert_int_eq(fakegh_get_ref(fk, "refs/heads/main", hex), 1);
		snprintf(url, sizeof(url), "%s/repos/octo/leases/git/refs/heads/main",
		         fakegh_url(fk));
		snprintf(body, sizeof(body), "{\"sha\":\"%s\",\"force\":false}", hex);
		ck_assert_int_eq(lease__http_request(h, &r, "PATCH", url, body, 5000), 0);
		ck_assert_int_eq(r.status, 200);
		lease__http_response_clear(&r);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:1/x");
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 2000), 0);
	ck_assert_int_eq(r.result, LEASE_HTTP_NOT_SENT);
	ck_assert(!strstr(r.error, CANARY));
	lease__http_response_clear(&r);
	ck_assert_int_eq(lease__http_request(h, &r, "GET", "http://x.example.invalid/", NULL, 2000),
	                 LEASE_ECONFIG);
	lease__http_response_clear(&r);
	ck_assert_uint_eq(lease__http_request_count(h), 4);
	lease__http_free(h);
}
END_TEST
/* Issue 43: a github: store initialises libcurl only, loaded then. These
 * run without the fixture (the fake server initialises libgit2 itself) and
 * open a store on a closed loopback port: opening sends nothing. */
START_TEST(github_store_leaves_libgit2_alone)
{
	lease_store_options o;

	ghstore_options(&o, "http://127.0.0.1:9", TOKEN, 5, 2000, NULL, NULL);
	ck_assert_int_eq(ghstore_open(&st, &o), 0);
	lease_store_free(st);
	st = NULL;
	/* libgit2 counts its initialisations: this is the first */
	ck_assert_int_eq(git_libgit2_init(), 1);
	git_libgit2_shutdown();
}
END_TEST

START_TEST(absent_libcurl_named_with_its_package)
{
	lease_store_options o;
	char err[512];

	lease__http_set_soname("libcurl-absent.so.9");
	ghstore_options(&o, "http://127.0.0.1:9", TOKEN, 5, 2000, NULL, NULL);
	ck_assert_int_eq(lease_store_open(&st, "github:octo/leases", &o, err, sizeof(err)),
	                 LEASE_ECONFIG);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(err, "cannot load libcurl (libcurl-absent.so.9)") &&
	                      strstr(err, "apt-get install libcurl4"),
	              "%s", err);
	/* the library-wide initialisation reports it too */
	ck_assert_int_eq(lease_global_init(), LEASE_ECONFIG);
}
END_TEST

Suite *github_suite(void)
{
	const suitefix_fixture fx = {setup, teardown, 0};
	Suite *s = suite_create("github");

	suitefix_add(s, "transport", 30, &fx, ONE(cycle_create_read_replace_delete),
	             ONE(request_counts_per_primitive),
	             ONE(absent_read_in_seen_namespace_confirmed_by_rest),
	             ONE(absence_listing_serves_archive_listing_once),
	             ONE(namespace_listing_batches), ONE(cas_mismatches),
	             ONE(read_lag_polled_within_window), ONE(read_lag_past_window_unverified),
	             ONE(time_base_is_date_header), ONE(graphql_blind_falls_back_to_rest),
	             ONE(ghes_path_prefix), ONE(listing_follows_link_next),
	             LOOP(same_answers_whatever_graphql_shows, 0, 4), ONE(set_read_in_one_query),
	             ONE(set_absences_serve_each_archive_listing),
	             LOOP(set_read_same_whatever_graphql_shows, 0, 4),
	             ONE(set_write_verified_through_read_lag),
	             ONE(moved_repository_followed_on_api_host),
	             ONE(moved_repository_elsewhere_explained), NULL);
	suitefix_add(s, "stream", 60, &fx, ONE(namespace_read_page_by_page),
	             ONE(namespace_page_failing_midway_fails_the_sweep),
	             ONE(listing_link_loop_fails), NULL);
	suitefix_add(s, "faults", 30, &fx, LOOP(fault_matrix, 0, (int)NFAULTS),
	             ONE(F24_rate_limit_waited_inside_timeout),
	             ONE(timeouts_read_unreachable_write_unknown),
	             ONE(F10_path_collision_422_reread), ONE(create_exists_then_404_is_lag),
	             ONE(F26_empty_repository), ONE(wrong_token_is_eauth), NULL);
	suitefix_add(s, "config", 30, &fx, ONE(plain_http_only_to_loopback),
	             ONE(spec_and_token_rules), ONE(token_canary_never_logged),
	             ONE(http_body_cap_and_headers), ONE(pacing_on_the_virtual_clock),
	             ONE(redirects_bounded_and_never_off_host), NULL);
	suitefix_add(s, "load", 30, NULL, ONE(github_store_leaves_libgit2_alone),
	             ONE(absent_libcurl_named_with_its_package), NULL);
	return s;
}
