/* Reconcile (lib/lease/reconcile*.c; protocol.md §6, §7): stores built with
 * crafted histories (commits written directly with hand-built payload JSON),
 * the exact anomaly set per lease, the heartbeat-floor figures and method,
 * reap racing a heartbeat (an injected concurrent write, and a real forked
 * heartbeating process), prune + archive, history, and workflow-command
 * escaping; slot-count-mismatch over a memstore listed out of order and in
 * parts (issue 27). Field cases: F17 (clock skew), F27 (malformed leases). */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reflease.h"
#include "reflease/sys/transport.h"
#include "store/backend.h"
#include "store/handle.h"
#include "support/memstore.h"
#include "support/passthru.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/testrepo.h"

/* A fixed store time: 2027-01-15T08:00:00Z. */
#define T0    1800000000LL
#define TOK_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TOK_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static char repo[256];
static int64_t clock_now = T0;
static unsigned nonce_ctr;

static int64_t test_clock(void *payload)
{
	(void)payload;
	return clock_now;
}

static lease_store *open_store(void)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;

	o.clock.now = test_clock;
	return storefix_local(repo, &o);
}

static void setup(void)
{
	storefix_local_dir(repo, sizeof(repo));
	clock_now = T0;
}

static void teardown(void)
{
	testrepo_remove(repo);
}

/* A payload as JSON (sorted keys). ttl < 0 omits ttl_seconds (pre-bump). */
static void payload_json(char *out, size_t cap, const char *ver, const char *name,
                         const char *phase, const char *token, int64_t acq, int64_t exp,
                         int64_t ttl)
{
	char a[LEASE_TIME_STRSZ + 1], e[LEASE_TIME_STRSZ + 1], ttls[48] = "";

	lease_time_format(a, acq);
	lease_time_format(e, exp);
	if (ttl >= 0)
		snprintf(ttls, sizeof(ttls), ",\"ttl_seconds\":%lld", (long long)ttl);
	snprintf(out, cap,
	         "{\"acquired_at\":\"%s\",\"expires_at\":\"%s\",\"host\":\"h1\",\"lease_token\":"
	         "\"%s\",\"name\":\"%s\",\"nonce\":\"%016x\",\"owner\":\"alice\",\"phase\":\"%s\","
	         "\"sdlc_version\":\"%s\",\"transitions\":1%s}",
	         a, e, token, name, ++nonce_ctr, phase, ver, ttls);
}

/* Write a commit with summary "<summary_name>: <op> ..." (op NULL = a foreign
 * summary) over @p parent, written at store time @p when, and move the ref. */
static lease_oid put_raw(lease_store *st, const char *ref_name, const lease_oid *parent,
                         const char *op, const char *json, int64_t when)
{
	char msg[4096];
	lease_oid oid;
	int64_t saved = clock_now;

	if (op)
		snprintf(msg, sizeof(msg), "%s: %s working by alice on h1\n\n%s\n", ref_name, op,
		         json);
	else
		snprintf(msg, sizeof(msg), "update lease %s (other tool)\n\n%s\n", ref_name, json);
	clock_now = when;
	ck_assert_int_eq(lease_write_commit(&oid, st, parent, msg), 0);
	clock_now = saved;
	if (parent)
		ck_assert_msg(lease_cas_replace(st, ref_name, parent, &oid) == 0, "%s",
		              lease_store_last_error(st));
	else
		ck_assert_msg(lease_cas_create(st, ref_name, &oid) == 0, "%s",
		              lease_store_last_error(st));
	return oid;
}

/* One 1.1 payload written at hb time @p hb with @p ttl (expires = hb + ttl). */
static lease_oid put11(lease_store *st, const char *name, const lease_oid *parent, const char *op,
                       const char *token, int64_t acq, int64_t hb, int64_t ttl)
{
	char js[1024];

	payload_json(js, sizeof(js), "1.1.0", name, "working", token, acq, hb + ttl, ttl);
	return put_raw(st, name, parent, op, js, hb);
}

static const lease_reconcile_entry *find(const lease_reconcile_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (strcmp(r->entries[i].name, name) == 0)
			return &r->entries[i];
	ck_abort_msg("lease %s not in the report", name);
	return NULL;
}

/* The entry's anomaly ids, comma-separated in report order ("" when clean). */
static const char *ids(const lease_reconcile_entry *e)
{
	static char buf[512];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < e->anomaly_count; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
		                      lease_anomaly_name(e->anomalies[i].id));
	return buf;
}

static const lease_anomaly *anomaly(const lease_reconcile_entry *e, lease_anomaly_id id)
{
	size_t i;

	for (i = 0; i < e->anomaly_count; i++)
		if (e->anomalies[i].id == id)
			return &e->anomalies[i];
	ck_abort_msg("%s has no %s", e->name, lease_anomaly_name(id));
	return NULL;
}

static void make_lock(const char *name, int64_t mtime)
{
	char path[512];
	struct timespec ts[2];
	int fd;

	snprintf(path, sizeof(path), "%s/refs/leases", repo);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/refs/leases/%s.lock", repo, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0123\n", 5), 5);
	close(fd);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)mtime;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int lock_exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/refs/leases/%s.lock", repo, name);
	return access(path, F_OK) == 0;
}

/* A ref written with libgit2 directly (blob targets, invalid names). */
static void raw_ref(const char *refname, int blob)
{
	git_repository *r = NULL;
	git_reference *ref = NULL;
	git_oid id;

	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	if (blob)
		ck_assert_int_eq(git_blob_create_from_buffer(&id, r, "not a lease\n", 12), 0);
	else
		ck_assert_int_eq(git_oid_fromstr(&id, "4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
		                 0);
	if (!blob) {
		/* a commit for an invalid-named ref */
		git_tree *tree = NULL;
		git_signature *sig = NULL;
		git_oid t = id;
		ck_assert_int_eq(git_tree_lookup(&tree, r, &t), 0);
		ck_assert_int_eq(git_signature_new(&sig, "x", "x@y", T0, 0), 0);
		ck_assert_int_eq(
		        git_commit_create(&id, r, NULL, sig, sig, NULL, "x\n", tree, 0, NULL), 0);
		git_signature_free(sig);
		git_tree_free(tree);
	}
	ck_assert_int_eq(git_reference_create(&ref, r, refname, &id, 1, NULL), 0);
	git_reference_free(ref);
	git_repository_free(r);
}

/* The crafted store of the classification tests. */
static void build_store(lease_store *st)
{
	char js[1024];
	lease_oid o, p;

	/* clean: heartbeat 90 s after the acquire, TTL 300 (floor 30). */
	o = put11(st, "clean", NULL, "acquire", TOK_A, T0 - 100, T0 - 100, 300);
	put11(st, "clean", &o, "heartbeat", TOK_A, T0 - 100, T0 - 10, 300);
	/* fast: heartbeated every 2 s with a 300 s TTL → floor 30 s, exact. */
	o = put11(st, "fast", NULL, "acquire", TOK_A, T0 - 4, T0 - 4, 300);
	o = put11(st, "fast", &o, "heartbeat", TOK_A, T0 - 4, T0 - 2, 300);
	put11(st, "fast", &o, "heartbeat", TOK_A, T0 - 4, T0, 300);
	/* foreignhb: an older tool's heartbeat (no known op), 3 s apart. */
	o = put11(st, "foreignhb", NULL, NULL, TOK_A, T0 - 50, T0 - 3, 300);
	put11(st, "foreignhb", &o, NULL, TOK_A, T0 - 50, T0, 300);
	/* prebump: 1.0.0 heartbeats 4 s apart: approximate, TTL assumed 300. */
	payload_json(js, sizeof(js), "1.0.0", "prebump", "working", TOK_A, T0 - 60, T0 + 295, -1);
	o = put_raw(st, "prebump", NULL, "heartbeat", js, T0 - 5);
	payload_json(js, sizeof(js), "1.0.0", "prebump", "working", TOK_A, T0 - 60, T0 + 299, -1);
	put_raw(st, "prebump", &o, "heartbeat", js, T0 - 1);
	/* takeover: a predecessor with TTL 5 (heartbeat T0-10, expired at T0-5) taken
	 * over at T0-4 with TTL 600: heartbeat times 6 s apart, below a 60 s floor if
	 * it were misread as a heartbeat — it is another tenure. */
	o = put11(st, "takeover", NULL, "acquire", TOK_A, T0 - 10, T0 - 10, 5);
	put11(st, "takeover", &o, "acquire", TOK_B, T0 - 4, T0 - 4, 600);
	/* takeover2: the same written by a foreign tool (no known op): expires_at moved
	 * forward, but the token changed. */
	o = put11(st, "takeover2", NULL, NULL, TOK_A, T0 - 10, T0 - 10, 5);
	put11(st, "takeover2", &o, NULL, TOK_B, T0 - 4, T0 - 4, 600);
	/* handoff: a heartbeat that rotated the token (cross-host) 2 s later. */
	o = put11(st, "handoff", NULL, "heartbeat", TOK_A, T0 - 50, T0 - 2, 300);
	put11(st, "handoff", &o, "heartbeat", TOK_B, T0, T0, 300);
	/* transition 2 s after the acquire: not a heartbeat. */
	o = put11(st, "trans", NULL, "acquire", TOK_A, T0 - 2, T0 - 2, 300);
	put11(st, "trans", &o, "transition", TOK_A, T0 - 2, T0, 300);
	/* migrated: 1.0.0 then migrate to 1.1.0, same expires_at. */
	payload_json(js, sizeof(js), "1.0.0", "migrated", "working", TOK_A, T0 - 30, T0 + 270, -1);
	o = put_raw(st, "migrated", NULL, "acquire", js, T0 - 30);
	payload_json(js, sizeof(js), "1.1.0", "migrated", "working", TOK_A, T0 - 30, T0 + 270, 300);
	put_raw(st, "migrated", &o, "migrate", js, T0 - 1);
	/* malformed JSON; newer minor; other major; name mismatch. */
	put_raw(st, "malformed", NULL, "acquire", "{\"name\": \"malformed\", oops", T0 - 5);
	payload_json(js, sizeof(js), "1.7.0", "newer", "working", TOK_A, T0 - 5, T0 + 295, 300);
	put_raw(st, "newer", NULL, "acquire", js, T0 - 5);
	payload_json(js, sizeof(js), "2.0.0", "major2", "working", TOK_A, T0 - 5, T0 + 295, 300);
	put_raw(st, "major2", NULL, "acquire", js, T0 - 5);
	payload_json(js, sizeof(js), "1.1.0", "other", "working", TOK_A, T0 - 5, T0 + 295, 300);
	put_raw(st, "mismatch", NULL, "acquire", js, T0 - 5);
	/* F17: timestamps from the future — clock-skew, not expired. */
	payload_json(js, sizeof(js), "1.1.0", "future", "working", TOK_A, T0 + 1000, T0 + 1300,
	             300);
	put_raw(st, "future", NULL, "acquire", js, T0);
	payload_json(js, sizeof(js), "1.1.0", "future2", "working", TOK_A, T0 + 1000, T0 - 500,
	             300);
	put_raw(st, "future2", NULL, "acquire", js, T0);
	payload_json(js, sizeof(js), "1.1.0", "skewacq", "working", TOK_A, T0 - 10, T0 + 200, 300);
	put_raw(st, "skewacq", NULL, "acquire", js, T0);
	/* expired (by 100 s) and released. */
	put11(st, "expired", NULL, "acquire", TOK_A, T0 - 400, T0 - 400, 300);
	payload_json(js, sizeof(js), "1.1.0", "rel", "released", TOK_A, T0 - 400, T0 - 10, 0);
	p = put11(st, "rel", NULL, "acquire", TOK_A, T0 - 400, T0 - 400, 300);
	put_raw(st, "rel", &p, "release", js, T0 - 10);
	/* x with a stale lock; y with a fresh one; a lock with no ref. */
	put11(st, "x", NULL, "acquire", TOK_A, T0 - 10, T0 - 10, 300);
	put11(st, "y", NULL, "acquire", TOK_A, T0 - 10, T0 - 10, 300);
	make_lock("x", T0 - 120);
	make_lock("y", T0 - 10);
	make_lock("lockonly", T0 - 3600);
	/* a ref at a blob; a ref whose name breaks §1 */
	raw_ref("refs/leases/blob", 1);
	raw_ref("refs/leases/-dash", 0);
}

/* A store built by build_store(), reconciled with @p o (NULL: defaults) into
 * *@p r; the store is the caller's. */
static lease_store *reconciled(lease_reconcile_report *r, const lease_reconcile_options *o)
{
	lease_store *st = open_store();

	build_store(st);
	ck_assert_int_eq(lease_reconcile(r, st, o), 0);
	return st;
}

static const struct {
	const char *name;
	const char *ids;
	lease_severity highest;
} expected[] = {
        {"-dash", "invalid-name", LEASE_SEV_WARNING},
        {"blob", "not-a-commit", LEASE_SEV_ERROR},
        {"clean", "", LEASE_SEV_OK},
        {"expired", "expired", LEASE_SEV_WARNING},
        {"fast", "heartbeat-rate-above-floor", LEASE_SEV_WARNING},
        {"foreignhb", "heartbeat-rate-above-floor", LEASE_SEV_WARNING},
        {"future", "clock-skew", LEASE_SEV_WARNING},
        {"future2", "clock-skew", LEASE_SEV_WARNING},
        {"handoff", "", LEASE_SEV_OK},
        {"lockonly", "stale-ref-lock", LEASE_SEV_WARNING},
        {"major2", "unsupported-version", LEASE_SEV_ERROR},
        {"malformed", "malformed-payload", LEASE_SEV_ERROR},
        {"migrated", "", LEASE_SEV_OK},
        {"mismatch", "name-mismatch", LEASE_SEV_ERROR},
        {"newer", "unsupported-version", LEASE_SEV_WARNING},
        {"prebump", "pre-bump-payload,heartbeat-rate-above-floor", LEASE_SEV_WARNING},
        {"rel", "", LEASE_SEV_OK},
        {"skewacq", "clock-skew", LEASE_SEV_WARNING},
        {"takeover", "", LEASE_SEV_OK},
        {"takeover2", "", LEASE_SEV_OK},
        {"trans", "", LEASE_SEV_OK},
        {"x", "stale-ref-lock", LEASE_SEV_WARNING},
        {"y", "", LEASE_SEV_OK},
};
#define NEXPECTED (sizeof(expected) / sizeof(expected[0]))

START_TEST(exact_anomaly_set_per_lease)
{
	lease_store *st;
	lease_reconcile_report r;
	size_t i, counts[4] = {0};

	st = reconciled(&r, NULL);
	ck_assert_uint_eq(r.count, NEXPECTED);
	for (i = 0; i < NEXPECTED; i++) {
		const lease_reconcile_entry *e = find(&r, expected[i].name);
		ck_assert_msg(strcmp(ids(e), expected[i].ids) == 0, "%s: got [%s], want [%s]",
		              expected[i].name, ids(e), expected[i].ids);
		ck_assert_int_eq(e->highest, expected[i].highest);
		counts[expected[i].highest]++;
		ck_assert_str_eq(r.entries[i].name, expected[i].name); /* sorted by name */
	}
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(r.counts[i], counts[i]);
	ck_assert_int_eq(lease_reconcile_highest(&r), LEASE_SEV_ERROR);
	ck_assert_uint_eq(r.reaped + r.pruned + r.skipped + r.locks_removed, 0);
	ck_assert(lock_exists("x")); /* reported, not removed without --reap */
	ck_assert(!find(&r, "lockonly")->present);
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

/* Issue 29: the streaming sweep visits the same entries as the collecting
 * one — in name order, the same anomaly ids and severity, lock-only entries
 * merged in place — one at a time (each entry is freed after its visit: the
 * visit sees only the one it is given), with the same summary counts; a
 * visit's nonzero return stops the sweep with that value. */
typedef struct visit_log {
	size_t n;
	char names[64][64];
	char ids[64][200];
	int highest[64];
	size_t stop_at;
} visit_log;

static int log_entry(const lease_reconcile_entry *e, void *payload)
{
	visit_log *v = payload;

	ck_assert_uint_lt(v->n, 64);
	snprintf(v->names[v->n], sizeof(v->names[0]), "%s", e->name);
	snprintf(v->ids[v->n], sizeof(v->ids[0]), "%s", ids(e));
	v->highest[v->n] = e->highest;
	v->n++;
	return v->stop_at && v->n == v->stop_at ? -12345 : 0;
}

START_TEST(streaming_sweep_same_entries)
{
	lease_reconcile_report r, sum;
	lease_store *st = reconciled(&r, NULL);
	visit_log *v = calloc(1, sizeof(*v));
	size_t i;

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(lease_reconcile_each(&sum, st, NULL, log_entry, v), 0);
	ck_assert_ptr_null(sum.entries);
	ck_assert_uint_eq(sum.count, r.count);
	ck_assert_uint_eq(v->n, r.count);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(sum.counts[i], r.counts[i]);
	for (i = 0; i < r.count; i++) {
		ck_assert_str_eq(v->names[i], r.entries[i].name);
		ck_assert_str_eq(v->ids[i], ids(&r.entries[i]));
		ck_assert_int_eq(v->highest[i], r.entries[i].highest);
		if (i)
			ck_assert_int_lt(strcmp(v->names[i - 1], v->names[i]), 0);
	}
	lease_reconcile_report_free(&sum);
	memset(v, 0, sizeof(*v));
	v->stop_at = 3;
	ck_assert_int_eq(lease_reconcile_each(&sum, st, NULL, log_entry, v), -12345);
	ck_assert_uint_eq(v->n, 3);
	lease_reconcile_report_free(&sum);
	lease_reconcile_report_free(&r);
	free(v);
	lease_store_free(st);
}
END_TEST

START_TEST(floor_figures_and_method)
{
	lease_store *st;
	lease_reconcile_report r;
	const lease_anomaly *a;

	st = reconciled(&r, NULL);
	/* every 2 s with a 300 s TTL: exact, interval 2, floor 30 */
	a = anomaly(find(&r, "fast"), LEASE_ANOM_HEARTBEAT_FLOOR);
	ck_assert(a->has_floor);
	ck_assert_int_eq(a->method, LEASE_HB_EXACT);
	ck_assert_int_eq(a->interval_seconds, 2);
	ck_assert(a->floor_seconds == 30.0);
	ck_assert_int_eq(a->severity, LEASE_SEV_WARNING);
	a = anomaly(find(&r, "foreignhb"), LEASE_ANOM_HEARTBEAT_FLOOR);
	ck_assert_int_eq(a->method, LEASE_HB_EXACT);
	ck_assert_int_eq(a->interval_seconds, 3);
	/* pre-bump: approximate with the assumed TTL 300 */
	a = anomaly(find(&r, "prebump"), LEASE_ANOM_HEARTBEAT_FLOOR);
	ck_assert_int_eq(a->method, LEASE_HB_APPROXIMATE);
	ck_assert_int_eq(a->assumed_ttl, 300);
	ck_assert_int_eq(a->interval_seconds, 4);
	ck_assert(a->floor_seconds == 30.0);
	ck_assert_int_eq(anomaly(find(&r, "prebump"), LEASE_ANOM_PRE_BUMP)->severity,
	                 LEASE_SEV_INFO);
	ck_assert_int_eq(anomaly(find(&r, "expired"), LEASE_ANOM_EXPIRED)->seconds, 100);
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

/* The approximation uses --assumed-ttl: with 30 s the floor is 3 s and 4 s is fine. */
START_TEST(prebump_assumed_ttl_option)
{
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_store *st;
	lease_reconcile_report r;

	o.default_ttl = 30;
	st = reconciled(&r, &o);
	ck_assert_str_eq(ids(find(&r, "prebump")), "pre-bump-payload");
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

/* F17: a fast contender clock — payloads from the future are clock-skew,
 * never expired; a grace larger than the lateness hides expired. */
START_TEST(f17_future_timestamps_are_clock_skew_not_expired)
{
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_store *st;
	lease_reconcile_report r;

	o.grace_seconds = 200;
	st = reconciled(&r, &o);
	ck_assert_str_eq(ids(find(&r, "future")), "clock-skew");
	ck_assert_str_eq(ids(find(&r, "future2")), "clock-skew");
	ck_assert_str_eq(ids(find(&r, "expired")), ""); /* 100 s late < grace 200 */
	ck_assert_int_eq(r.grace_seconds, 200);
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

static int read_tip(lease_store *st, const char *name, lease_ref_state *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(lease_fetch_ref(s, st, name), 0);
	return s->present;
}

START_TEST(reap_releases_expired_and_removes_stale_locks)
{
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_store *st = open_store();
	lease_reconcile_report r;
	const lease_reconcile_entry *e;
	lease_ref_state s;
	lease_oid newexp;
	char js[1024];

	build_store(st);
	payload_json(js, sizeof(js), "1.4.0", "newexp", "working", TOK_A, T0 - 900, T0 - 600, 300);
	newexp = put_raw(st, "newexp", NULL, "acquire", js, T0 - 900);
	o.reap = 1;
	o.owner = "janitor";
	o.host = "ci";
	ck_assert_int_eq(lease_reconcile(&r, st, &o), 0);
	ck_assert_uint_eq(r.reaped, 1);
	ck_assert_uint_eq(r.locks_removed, 2); /* x and lockonly; y is fresh */
	ck_assert_uint_eq(r.skipped, 1);
	/* a newer minor is never replaced by a writer: skipped, untouched */
	e = find(&r, "newexp");
	ck_assert_str_eq(ids(e), "unsupported-version,expired");
	ck_assert_int_eq(e->action, LEASE_ACTION_SKIPPED);
	ck_assert_ptr_nonnull(strstr(e->action_message, "newer"));
	ck_assert(read_tip(st, "newexp", &s));
	ck_assert(lease_oid_equal(&s.oid, &newexp));
	lease_ref_state_clear(&s);
	e = find(&r, "expired");
	ck_assert_int_eq(e->action, LEASE_ACTION_REAPED);
	ck_assert(!lock_exists("x"));
	ck_assert(!lock_exists("lockonly"));
	ck_assert(lock_exists("y"));
	ck_assert(read_tip(st, "expired", &s));
	ck_assert(lease_oid_equal(&s.oid, &e->action_oid));
	ck_assert(lease_oid_equal(&s.commit.parent, &e->oid)); /* a CAS on the oid read */
	ck_assert_int_eq(s.payload_rc, 0);
	ck_assert_int_eq(s.op, LEASE_OP_REAP);
	ck_assert_int_eq(s.payload.phase, LEASE_PHASE_RELEASED);
	ck_assert_str_eq(s.payload.sdlc_version, SDLC_VERSION);
	ck_assert_int_eq(s.payload.ttl_seconds, 0);
	ck_assert_str_eq(s.payload.lease_token, TOK_A);
	ck_assert_str_eq(s.payload.owner, "janitor");
	ck_assert_int_eq(s.payload.expires_at, T0);
	lease_ref_state_clear(&s);
	lease_reconcile_report_free(&r);
	/* a second sweep finds nothing more to reap */
	ck_assert_int_eq(lease_reconcile(&r, st, &o), 0);
	ck_assert_uint_eq(r.reaped + r.locks_removed, 0);
	ck_assert_str_eq(ids(find(&r, "expired")), "");
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

/* ---- reap racing a heartbeat: an injected concurrent write ---------------------------- */

typedef struct race_transport {
	passthru p; /* first */
	int fired;
	lease_oid hb_oid;
} race_transport;

/* Just before reconcile's CAS lands, the holder heartbeats. */
static int rt_replace(lease_transport *t, const char *refname, const lease_oid *old_oid,
                      const lease_oid *new_oid)
{
	race_transport *rt = (race_transport *)t;
	lease_transport *in = rt->p.inner;
	char js[1024], msg[1200];

	if (!rt->fired) {
		rt->fired = 1;
		payload_json(js, sizeof(js), "1.1.0", "expired", "working", TOK_A, T0 - 400,
		             T0 + 300, 300);
		snprintf(msg, sizeof(msg), "expired: heartbeat working by alice on h1\n\n%s\n", js);
		ck_assert_int_eq(in->write_commit(in, &rt->hb_oid, old_oid, msg, T0), 0);
		ck_assert_int_eq(in->replace_ref(in, refname, old_oid, &rt->hb_oid), 0);
	}
	return in->replace_ref(in, refname, old_oid, new_oid);
}

START_TEST(reap_racing_injected_heartbeat_never_clobbers)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_transport *inner = NULL;
	race_transport *rt = calloc(1, sizeof(*rt));
	lease_store *st = open_store(), *rst = NULL;
	lease_reconcile_report r;
	const lease_reconcile_entry *e;
	lease_ref_state s;
	char err[256];

	put11(st, "expired", NULL, "acquire", TOK_A, T0 - 400, T0 - 400, 300);
	lease_store_free(st);
	ck_assert_int_eq(lease__local_transport_new(&inner, repo, NULL, err, sizeof(err)), 0);
	passthru_init(&rt->p, inner);
	rt->p.base.replace_ref = rt_replace;
	so.clock.now = test_clock;
	ck_assert_int_eq(lease_store_open_transport(&rst, &rt->p.base, &so, err, sizeof(err)), 0);
	o.reap = 1;
	ck_assert_int_eq(lease_reconcile(&r, rst, &o), 0);
	ck_assert(rt->fired);
	ck_assert_uint_eq(r.reaped, 0);
	ck_assert_uint_eq(r.skipped, 1);
	e = find(&r, "expired");
	ck_assert_int_eq(e->action, LEASE_ACTION_SKIPPED);
	ck_assert_str_eq(e->action_kind, "reap");
	ck_assert_ptr_nonnull(strstr(e->action_message, "concurrent write won"));
	ck_assert(read_tip(rst, "expired", &s));
	ck_assert(lease_oid_equal(&s.oid, &rt->hb_oid)); /* the heartbeat stands */
	ck_assert_int_eq(s.payload.phase, LEASE_PHASE_WORKING);
	lease_ref_state_clear(&s);
	lease_reconcile_report_free(&r);
	lease_store_free(rst);
}
END_TEST

/* ---- reap racing a real heartbeating process ------------------------------------------ */

/* Whether @p target is @p tip or a first-parent ancestor of it. */
static int in_chain(lease_store *st, const lease_oid *tip, const lease_oid *target)
{
	lease_oid cur = *tip;
	lease_commit c;

	for (;;) {
		if (lease_oid_equal(&cur, target))
			return 1;
		memset(&c, 0, sizeof(c));
		if (st->t->read_commit(st->t, &c, &cur) < 0 || !c.has_parent) {
			lease_commit_clear(&c);
			return 0;
		}
		cur = c.parent;
		lease_commit_clear(&c);
	}
}

/* The holder: heartbeat (or re-take after a reap) by CAS as fast as it can,
 * reporting every write that succeeded on the pipe. Uses the real clock. */
static void holder(int fd, int rounds)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char spec[300], err[256], js[1024], msg[1200];
	int i;

	snprintf(spec, sizeof(spec), "local:%s", repo);
	if (lease_store_open(&st, spec, &so, err, sizeof(err)) < 0)
		_exit(2);
	for (i = 0; i < rounds; i++) {
		lease_ref_state s;
		lease_oid n;
		int64_t now = (int64_t)time(NULL);

		memset(&s, 0, sizeof(s));
		if (lease_fetch_ref(&s, st, "hot") < 0 || !s.present) {
			lease_ref_state_clear(&s);
			_exit(3);
		}
		payload_json(js, sizeof(js), "1.1.0", "hot", "working", TOK_A, now - 1000, now + 5,
		             5);
		snprintf(msg, sizeof(msg), "hot: %s working by alice on h1\n\n%s\n",
		         s.payload.phase == LEASE_PHASE_RELEASED ? "acquire" : "heartbeat", js);
		if (lease_write_commit(&n, st, &s.oid, msg) == 0 &&
		    lease_cas_replace(st, "hot", &s.oid, &n) == 0)
			if (write(fd, n.id, sizeof(n.id)) != (ssize_t)sizeof(n.id))
				_exit(4);
		lease_ref_state_clear(&s);
	}
	lease_store_free(st);
	_exit(0);
}

START_TEST(reap_racing_real_heartbeating_process_never_clobbers)
{
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_store *st = open_store();
	lease_oid written[4096], reaped_oids[512], tip;
	size_t nw = 0, nr = 0, i;
	int fds[2], status, round, exited = 0;
	time_t deadline;
	pid_t pid;
	ssize_t got;
	lease_ref_state s;

	clock_now = (int64_t)time(NULL);
	put11(st, "hot", NULL, "acquire", TOK_A, clock_now - 1000, clock_now, 5);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		holder(fds[1], 120);
	}
	close(fds[1]);
	/* The sweeper's clock is far ahead: every live payload looks expired. */
	clock_now = (int64_t)time(NULL) + 100000;
	o.reap = 1;
	o.lock_age_seconds = 1000000000; /* the holder's own ref locks are not stale */
	deadline = time(NULL) + 20;
	for (round = 0; nr < 512 && time(NULL) < deadline; round++) {
		lease_reconcile_report r;
		const lease_reconcile_entry *e;

		ck_assert_int_eq(lease_reconcile(&r, st, &o), 0);
		e = find(&r, "hot");
		if (e->action == LEASE_ACTION_REAPED)
			reaped_oids[nr++] = e->action_oid;
		lease_reconcile_report_free(&r);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			break;
		}
	}
	while (nw < 4096 &&
	       (got = read(fds[0], written[nw].id, LEASE_OID_RAWSZ)) == LEASE_OID_RAWSZ)
		nw++;
	close(fds[0]);
	if (exited || waitpid(pid, &status, 0) == pid)
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "holder failed");
	ck_assert(read_tip(st, "hot", &s));
	tip = s.oid;
	lease_ref_state_clear(&s);
	if (getenv("RECONCILE_DEBUG"))
		fprintf(stderr, "race: %zu heartbeats, %zu reaps, %d rounds\n", nw, nr, round);
	ck_assert_uint_gt(nw, 0);
	ck_assert_uint_gt(nr, 0); /* the race really happened both ways */
	/* No successful write, the holder's or the sweeper's, was ever clobbered. */
	for (i = 0; i < nw; i++)
		ck_assert_msg(in_chain(st, &tip, &written[i]), "heartbeat %zu lost", i);
	for (i = 0; i < nr; i++)
		ck_assert_msg(in_chain(st, &tip, &reaped_oids[i]), "reap %zu lost", i);
	lease_store_free(st);
}
END_TEST

/* ---- prune ------------------------------------------------------------------------------ */

START_TEST(prune_archives_then_deletes_and_create_continues_transitions)
{
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	lease_store *st = open_store();
	lease_reconcile_report r;
	const lease_reconcile_entry *e;
	lease_ref_state s;
	lease_result res;
	char js[1024];
	lease_oid p, relo, young;
	const char *archive = "refs/leases-archive/old/20270112T080000Z-aaaaaaaa";

	p = put11(st, "old", NULL, "acquire", TOK_A, T0 - 4 * 86400, T0 - 4 * 86400, 300);
	payload_json(js, sizeof(js), "1.1.0", "old", "released", TOK_A, T0 - 4 * 86400,
	             T0 - 3 * 86400, 0);
	relo = put_raw(st, "old", &p, "release", js, T0 - 3 * 86400);
	p = put11(st, "young", NULL, "acquire", TOK_A, T0 - 600, T0 - 600, 300);
	payload_json(js, sizeof(js), "1.1.0", "young", "released", TOK_A, T0 - 600, T0 - 60, 0);
	young = put_raw(st, "young", &p, "release", js, T0 - 60);
	/* an archive ref already holding the same oid counts as done */
	ck_assert_int_eq(lease_cas_create_ref(st, archive, &relo), 0);
	o.prune_days = 2;
	ck_assert_int_eq(lease_reconcile(&r, st, &o), 0);
	ck_assert_uint_eq(r.pruned, 1);
	ck_assert_uint_eq(r.skipped, 0);
	e = find(&r, "old");
	ck_assert_int_eq(e->action, LEASE_ACTION_PRUNED);
	ck_assert_str_eq(e->archive_ref, archive);
	ck_assert_int_eq(find(&r, "young")->action, LEASE_ACTION_NONE);
	lease_reconcile_report_free(&r);
	ck_assert(!read_tip(st, "old", &s));
	lease_ref_state_clear(&s);
	ck_assert(read_tip(st, "young", &s));
	ck_assert(lease_oid_equal(&s.oid, &young));
	lease_ref_state_clear(&s);
	/* transitions continue from the archive (payload transitions = 1) */
	ao.owner = "bob";
	ao.host = "h2";
	ck_assert_int_eq(lease_acquire(&res, st, "old", &ao), 0);
	ck_assert_int_eq(res.payload.transitions, 2);
	lease_store_free(st);
}
END_TEST

/* ---- F27: malformed leases: listed separately, never reaped, break fixes them ---------- */

START_TEST(f27_break_and_reconcile_of_malformed_leases)
{
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_op_options bo = LEASE_OP_OPTIONS_INIT;
	lease_store *st = open_store();
	lease_reconcile_report r;
	lease_result res;
	lease_oid bad;

	bad = put_raw(st, "garbage", NULL, "acquire", "{\"name\":\"garbage\",\"phase\":7}",
	              T0 - 999);
	put_raw(st, "garbage2", NULL, "acquire", "\x01not json at all", T0 - 999);
	put11(st, "fine", NULL, "acquire", TOK_A, T0, T0, 300);
	o.reap = 1;
	o.prune_days = 0;
	ck_assert_int_eq(lease_reconcile(&r, st, &o), 0);
	ck_assert_str_eq(ids(find(&r, "garbage")), "malformed-payload");
	ck_assert_str_eq(ids(find(&r, "garbage2")), "malformed-payload");
	ck_assert_int_eq(find(&r, "garbage")->action, LEASE_ACTION_NONE); /* never reaped */
	ck_assert(lease_oid_equal(&find(&r, "garbage")->oid, &bad));
	ck_assert_uint_eq(r.counts[LEASE_SEV_ERROR], 2);
	ck_assert_uint_eq(r.counts[LEASE_SEV_OK], 1);
	lease_reconcile_report_free(&r);
	/* break parses leniently and releases by CAS; reconcile then sees it clean */
	bo.owner = "admin";
	bo.host = "h";
	bo.force = 1;
	ck_assert_int_eq(lease_break(&res, st, "garbage", &bo), 0);
	ck_assert_int_eq(lease_reconcile(&r, st, NULL), 0);
	ck_assert_str_eq(ids(find(&r, "garbage")), "");
	ck_assert_int_eq(find(&r, "garbage")->payload.phase, LEASE_PHASE_RELEASED);
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

/* The removal re-checks identity and age under the store's lock file: a lock
 * replaced (another inode) or refreshed since the listing is kept. */
START_TEST(stale_lock_removal_rechecks_inode_and_age)
{
	lease_ref_lock_list l = {0};
	char path[512], store_lock[512], err[256];
	size_t i;

	make_lock("a", T0 - 300);
	make_lock("b", T0 - 300);
	make_lock("c", T0 - 300);
	ck_assert_int_eq(lease__fs_list_ref_locks(&l, repo, "refs/leases/", NULL, 0), 0);
	ck_assert_uint_eq(l.count, 3);
	/* b: replaced by a new file (another inode, renamed over it), old mtime kept */
	make_lock("b-new", T0 - 300);
	snprintf(path, sizeof(path), "%s/refs/leases/b-new.lock", repo);
	snprintf(store_lock, sizeof(store_lock), "%s/refs/leases/b.lock", repo);
	ck_assert_int_eq(rename(path, store_lock), 0);
	/* c: refreshed (a live writer took it again) */
	make_lock("c", T0 - 5);
	snprintf(store_lock, sizeof(store_lock), "%s/reflease-delete.lock", repo);
	for (i = 0; i < l.count; i++) {
		const char *n = l.items[i].refname + strlen("refs/leases/");
		int rc = lease__fs_remove_ref_lock(repo, store_lock, &l.items[i], 60, T0, err,
		                                   sizeof(err));
		if (strcmp(n, "a") == 0)
			ck_assert_msg(rc == 0, "%s", err);
		else
			ck_assert_msg(rc == LEASE_ECAS, "%s: %d %s", n, rc, err);
	}
	ck_assert(!lock_exists("a"));
	ck_assert(lock_exists("b"));
	ck_assert(lock_exists("c"));
	ck_assert_int_ne(access(store_lock, F_OK), 0); /* the store lock is released */
	for (i = 0; i < l.count; i++)                  /* already gone: ENOTFOUND */
		if (strcmp(l.items[i].refname, "refs/leases/a") == 0)
			ck_assert_int_eq(lease__fs_remove_ref_lock(repo, store_lock, &l.items[i],
			                                           60, T0, err, sizeof(err)),
			                 LEASE_ENOTFOUND);
	lease_ref_lock_list_clear(&l);
}
END_TEST

/* One unreadable lease (a ref at a missing object) never stops the sweep:
 * the others are still classified, parents included; the missing object is
 * an anomaly of its own (issue 14). */
START_TEST(unreadable_lease_never_stops_the_sweep)
{
	lease_store *st = open_store();
	lease_reconcile_report r;
	char path[512];
	lease_oid o;
	FILE *f;

	o = put11(st, "fast", NULL, "acquire", TOK_A, T0 - 4, T0 - 2, 300);
	put11(st, "fast", &o, "heartbeat", TOK_A, T0 - 4, T0, 300);
	snprintf(path, sizeof(path), "%s/refs/leases/ghost", repo);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("1234567890123456789012345678901234567890\n", f);
	fclose(f);
	ck_assert_int_eq(lease_reconcile(&r, st, NULL), 0);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_str_eq(ids(find(&r, "ghost")), "missing-object"); /* issue 14 */
	ck_assert_str_eq(ids(find(&r, "fast")), "heartbeat-rate-above-floor");
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

/* ---- history ---------------------------------------------------------------------------- */

START_TEST(history_newest_first_with_intervals)
{
	lease_store *st = open_store();
	lease_history h;
	char js[1024];
	lease_oid o;

	payload_json(js, sizeof(js), "1.0.0", "h", "working", TOK_A, T0 - 100, T0 - 100 + 600, -1);
	o = put_raw(st, "h", NULL, "acquire", js, T0 - 100);
	o = put11(st, "h", &o, "heartbeat", TOK_A, T0 - 100, T0 - 40, 600);
	o = put11(st, "h", &o, "heartbeat", TOK_A, T0 - 100, T0 - 10, 600);
	put11(st, "h", &o, "acquire", TOK_B, T0, T0, 60);
	ck_assert_int_eq(lease_history_read(&h, st, "h", 0, 0), 0);
	ck_assert(h.present);
	ck_assert_uint_eq(h.count, 4);
	ck_assert_int_eq(h.items[0].op, LEASE_OP_ACQUIRE);
	ck_assert(!h.items[0].is_heartbeat); /* a takeover with another TTL */
	ck_assert(h.items[1].is_heartbeat);
	ck_assert_int_eq(h.items[1].interval_seconds, 30);
	ck_assert_int_eq(h.items[1].interval_method, LEASE_HB_EXACT);
	/* over a pre-bump parent: approximate, its TTL taken from the next payload (600) */
	ck_assert(h.items[2].is_heartbeat);
	ck_assert_int_eq(h.items[2].interval_method, LEASE_HB_APPROXIMATE);
	ck_assert_int_eq(h.items[3].hb_method, LEASE_HB_APPROXIMATE);
	ck_assert_int_eq(h.items[3].assumed_ttl, 600);
	ck_assert_int_eq(h.items[2].interval_seconds, 60);
	ck_assert_int_eq(h.items[3].hb_time, T0 - 100);
	lease_history_free(&h);
	ck_assert_int_eq(lease_history_read(&h, st, "h", 2, 0), 0);
	ck_assert_uint_eq(h.count, 2);
	ck_assert(h.truncated);
	lease_history_free(&h);
	ck_assert_int_eq(lease_history_read(&h, st, "nothing", 0, 0), 0);
	ck_assert(!h.present);
	lease_history_free(&h);
	lease_store_free(st);
}
END_TEST

/* ---- slot-count-mismatch (issue 27, protocol.md "Slots") ------------------------------ */

/* list_refs_each over the memstore's list_refs: parts of two refs in name
 * order, each part's entries given in reverse (a part is sorted by the walk,
 * not by the transport), so a NAME's slots are split across parts. */
static int two_by_two(lease_transport *t, const char *prefix,
                      int (*part)(lease_ref_list *l, void *payload), void *payload)
{
	lease_ref_list all = {NULL, 0, 0};
	size_t i, j;
	int rc;

	if ((rc = memstore_list_sorted(t, &all, prefix)) < 0)
		return rc;
	for (i = 0; i < all.count && rc == 0; i += 2) {
		lease_ref_list p = {NULL, 0, 0};

		for (j = i + 2 > all.count ? all.count : i + 2; j > i; j--)
			ck_assert_int_eq(lease_ref_list_push(&p, all.items[j - 1].refname,
			                                     &all.items[j - 1].oid),
			                 0);
		rc = part(&p, payload);
		lease_ref_list_clear(&p);
	}
	lease_ref_list_clear(&all);
	return rc;
}

/* A memstore (its listing in creation order, not sorted), paged by
 * two_by_two when @p paged. */
static lease_store *open_mem(int paged)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t = memstore_new(NULL);

	if (t && paged) {
		t->version = 3;
		t->list_refs_each = two_by_two;
	}
	o.clock.now = test_clock;
	return storefix_transport(t, &o);
}

/* A released payload of @p name (released at T0 - 10). */
static void put_released(lease_store *st, const char *name)
{
	char js[1024];
	lease_oid p;

	p = put11(st, name, NULL, "acquire", TOK_A, T0 - 400, T0 - 400, 300);
	payload_json(js, sizeof(js), "1.1.0", name, "released", TOK_A, T0 - 400, T0 - 10, 0);
	put_raw(st, name, &p, "release", js, T0 - 10);
}

/* Created out of name order on purpose. */
static void build_slots(lease_store *st)
{
	static const char *const held[] = {"db@2of2",   "db-a",      "db",        "db@1of3",
	                                   "db-a@1of2", "pool@1of3", "pool@2of3", "old@1of3",
	                                   "tri@2of2",  "tri@1of3",  "tri@1of2",  "exp@1of3",
	                                   "rel@1of2"};
	static const char *const released[] = {"db@1of2", "pool@3of3", "old@2of2", "old@1of2",
	                                       "rel"};
	size_t i;

	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		put11(st, held[i], NULL, "acquire", TOK_A, T0 - 10, T0 - 10, 300);
	for (i = 0; i < sizeof(released) / sizeof(released[0]); i++)
		put_released(st, released[i]);
	/* an older count's slot expired 100 s ago, never reaped */
	put11(st, "exp@1of2", NULL, "acquire", TOK_A, T0 - 400, T0 - 400, 300);
}

static const struct {
	const char *name, *ids, *other;
	int64_t slots, other_slots;
} slot_expected[] = {
        {"db", "", NULL, 0, 0},
        {"db-a", "", NULL, 0, 0},
        /* the plain db-a, under db on the stack of plain names */
        {"db-a@1of2", "slot-count-mismatch", "db-a", 2, 0},
        {"db@1of2", "", NULL, 0, 0}, /* released: history */
        /* db, walked before db-a and db-a@1of2 */
        {"db@1of3", "slot-count-mismatch", "db", 3, 0},
        {"db@2of2", "slot-count-mismatch", "db", 2, 0},
        {"exp@1of2", "expired", NULL, 0, 0},
        {"exp@1of3", "slot-count-mismatch", "exp@1of2", 3, 2}, /* expired is not released */
        {"old@1of2", "", NULL, 0, 0}, /* the count changed once all were released */
        {"old@1of3", "", NULL, 0, 0},
        {"old@2of2", "", NULL, 0, 0},
        {"pool@1of3", "", NULL, 0, 0},
        {"pool@2of3", "", NULL, 0, 0},
        {"pool@3of3", "", NULL, 0, 0},
        {"rel", "", NULL, 0, 0}, /* a released plain lease beside slots */
        {"rel@1of2", "", NULL, 0, 0},
        {"tri@1of2", "", NULL, 0, 0}, /* the first not released: nothing to compare yet */
        {"tri@1of3", "slot-count-mismatch", "tri@1of2", 3, 2},
        {"tri@2of2", "slot-count-mismatch", "tri@1of3", 2, 3},
};
#define NSLOTEXP (sizeof(slot_expected) / sizeof(slot_expected[0]))

/* Every NAME whose refs of two configurations (slot counts, or slots and a
 * plain NAME) are not released at once is reported on each such ref after
 * the first, naming the other, as an error; released refs of another count
 * are history. The same entries whether the listing comes whole and
 * unsorted, or in reversed parts of two (GitHub's paged walk), streamed one
 * entry at a time. */
START_TEST(slot_count_mismatch_streamed)
{
	int paged;

	for (paged = 0; paged < 2; paged++) {
		lease_store *st = open_mem(paged);
		lease_reconcile_report r, sum;
		visit_log *v = calloc(1, sizeof(*v));
		size_t i;

		ck_assert_ptr_nonnull(v);
		build_slots(st);
		ck_assert_int_eq(lease_reconcile(&r, st, NULL), 0);
		ck_assert_uint_eq(r.count, NSLOTEXP);
		for (i = 0; i < NSLOTEXP; i++) {
			const lease_reconcile_entry *e = &r.entries[i];

			ck_assert_str_eq(e->name, slot_expected[i].name);
			ck_assert_msg(strcmp(ids(e), slot_expected[i].ids) == 0,
			              "%s (paged %d): got [%s], want [%s]", e->name, paged, ids(e),
			              slot_expected[i].ids);
			if (slot_expected[i].other) {
				const lease_anomaly *a = anomaly(e, LEASE_ANOM_SLOT_COUNT_MISMATCH);

				ck_assert_int_eq(a->severity, LEASE_SEV_ERROR);
				ck_assert_int_eq(e->highest, LEASE_SEV_ERROR);
				ck_assert_str_eq(a->other, slot_expected[i].other);
				ck_assert_int_eq(a->slots, slot_expected[i].slots);
				ck_assert_int_eq(a->other_slots, slot_expected[i].other_slots);
				ck_assert_ptr_nonnull(strstr(a->message, "refs/leases/"));
				ck_assert_ptr_nonnull(strstr(a->message, a->other));
				ck_assert_ptr_nonnull(strstr(a->message, "exit 78"));
			}
		}
		ck_assert_uint_eq(r.counts[LEASE_SEV_ERROR], 6);
		/* streamed: the same entries, one at a time */
		ck_assert_int_eq(lease_reconcile_each(&sum, st, NULL, log_entry, v), 0);
		ck_assert_uint_eq(v->n, NSLOTEXP);
		for (i = 0; i < NSLOTEXP; i++) {
			ck_assert_str_eq(v->names[i], slot_expected[i].name);
			ck_assert_str_eq(v->ids[i], slot_expected[i].ids);
		}
		ck_assert_uint_eq(sum.counts[LEASE_SEV_ERROR], 6);
		lease_reconcile_report_free(&sum);
		lease_reconcile_report_free(&r);
		free(v);
		lease_store_free(st);
	}
}
END_TEST

/* An older count's expired slot beside a held one of a new count is a
 * mismatch; --reap releases the expired one, walked first: the mismatch is
 * gone in that sweep (the reap is what it found undone) and after it. */
START_TEST(slot_count_mismatch_reaped_older_count)
{
	lease_store *st = open_mem(0);
	lease_reconcile_options o = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report r;

	put11(st, "exp@1of2", NULL, "acquire", TOK_A, T0 - 400, T0 - 400, 300);
	put11(st, "exp@1of3", NULL, "acquire", TOK_A, T0 - 10, T0 - 10, 300);
	ck_assert_int_eq(lease_reconcile(&r, st, NULL), 0);
	ck_assert_str_eq(ids(find(&r, "exp@1of3")), "slot-count-mismatch");
	lease_reconcile_report_free(&r);
	o.reap = 1;
	ck_assert_int_eq(lease_reconcile(&r, st, &o), 0);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_uint_eq(r.reaped, 1);
	ck_assert_int_eq(find(&r, "exp@1of2")->action, LEASE_ACTION_REAPED);
	ck_assert_str_eq(ids(find(&r, "exp@1of3")), "");
	lease_reconcile_report_free(&r);
	ck_assert_int_eq(lease_reconcile(&r, st, NULL), 0);
	ck_assert_int_eq(lease_reconcile_highest(&r), LEASE_SEV_OK);
	lease_reconcile_report_free(&r);
	lease_store_free(st);
}
END_TEST

START_TEST(severity_and_names)
{
	lease_severity s;

	ck_assert_int_eq(lease_severity_parse(&s, "warning"), 0);
	ck_assert_int_eq(s, LEASE_SEV_WARNING);
	ck_assert_int_eq(lease_severity_parse(&s, "never"), 0);
	ck_assert_int_eq(s, LEASE_SEV_NEVER);
	ck_assert_int_eq(lease_severity_parse(&s, "ok"), LEASE_EINVALID);
	ck_assert_int_eq(lease_severity_parse(&s, "fatal"), LEASE_EINVALID);
	ck_assert_str_eq(lease_anomaly_name(LEASE_ANOM_HEARTBEAT_FLOOR),
	                 "heartbeat-rate-above-floor");
	ck_assert_str_eq(lease_anomaly_name(LEASE_ANOM_PRE_BUMP), "pre-bump-payload");
	ck_assert_str_eq(lease_anomaly_name(LEASE_ANOM_SLOT_COUNT_MISMATCH), "slot-count-mismatch");
	ck_assert_str_eq(lease_anomaly_name(LEASE_ANOM__COUNT), "unknown");
	ck_assert_str_eq(lease_hb_method_name(LEASE_HB_APPROXIMATE), "approximate");
}
END_TEST

Suite *reconcile_suite(void)
{
	const suitefix_fixture fx = {setup, teardown, 0};

	return suitefix_suite(
	        "reconcile", "sweep", 30, &fx, ONE(exact_anomaly_set_per_lease),
	        ONE(floor_figures_and_method), ONE(streaming_sweep_same_entries),
	        ONE(prebump_assumed_ttl_option),
	        ONE(f17_future_timestamps_are_clock_skew_not_expired),
	        ONE(reap_releases_expired_and_removes_stale_locks),
	        ONE(reap_racing_injected_heartbeat_never_clobbers),
	        ONE(reap_racing_real_heartbeating_process_never_clobbers),
	        ONE(prune_archives_then_deletes_and_create_continues_transitions),
	        ONE(f27_break_and_reconcile_of_malformed_leases),
	        ONE(stale_lock_removal_rechecks_inode_and_age),
	        ONE(unreadable_lease_never_stops_the_sweep),
	        ONE(history_newest_first_with_intervals), ONE(slot_count_mismatch_streamed),
	        ONE(slot_count_mismatch_reaped_older_count), ONE(severity_and_names), NULL);
}
