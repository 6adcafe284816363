/*
 * Payload migrations (lib/lease/migrate.c, migrations/; protocol.md §8).
 *
 * Stores are real local repositories (lease_store_init_local) with an injected
 * clock; payload commits are written directly with lease_write_commit +
 * lease_cas_create from hand-built JSON, so 1.0, 1.1, released, malformed
 * and newer payloads sit side by side. Concurrent writers are interleaved
 * between the migration's read and its CAS through the before_write hook.
 * Field case F28 (mixed schema versions during an upgrade) has a named test.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lease/migration.h"
#include "reflease/migrate.h"
#include "reflease/reconcile.h"
#include "reflease/runtime.h"
#include "reflease/sys/transport.h"
#include "reflease/version.h"
#include "support/memstore.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/testrepo.h"

#define T0      ((int64_t)1796000000) /* 2026-11-30T...Z */
#define TOKEN_A "0123456789abcdef0123456789abcdef"
#define NONCE_A "89abcdef01234567"

typedef struct fixture {
	char dir[256];
	int64_t now;
	lease_store *st;
} fixture;

static fixture fx;

static lease_store_options fx_options(void)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;

	fx.now = T0;
	o.clock.now = storefix_clock;
	o.clock.payload = &fx.now;
	return o;
}

static void setup(void)
{
	lease_store_options o = fx_options();

	storefix_local_dir(fx.dir, sizeof(fx.dir));
	fx.st = storefix_local(fx.dir, &o);
}

static void teardown(void)
{
	lease_store_free(fx.st);
	fx.st = NULL;
	testrepo_remove(fx.dir);
}

/* A payload as JSON with sorted keys; @p ttl NULL = no ttl_seconds (1.0). */
static void payload_json(char *out, size_t cap, const char *ver, const char *name,
                         const char *phase, int64_t acquired, int64_t expires, int transitions,
                         const char *ttl)
{
	char acq[LEASE_TIME_STRSZ + 1], exp[LEASE_TIME_STRSZ + 1];
	int n;

	lease_time_format(acq, acquired);
	lease_time_format(exp, expires);
	n = snprintf(out, cap,
	             "{\"acquired_at\":\"%s\",\"expires_at\":\"%s\",\"host\":\"host-a\","
	             "\"lease_token\":\"%s\",\"name\":\"%s\",\"nonce\":\"%s\",\"owner\":\"alice\","
	             "\"phase\":\"%s\",\"sdlc_version\":\"%s\",\"transitions\":%d%s%s}",
	             acq, exp, TOKEN_A, name, NONCE_A, phase, ver, transitions,
	             ttl ? ",\"ttl_seconds\":" : "", ttl ? ttl : "");
	ck_assert(n > 0 && (size_t)n < cap);
}

/* Write a commit with @p json as payload at store time @p when (parent
 * @p parent or none); its oid in *out. */
static void write_payload(lease_oid *out, const char *name, const char *op, const char *json,
                          int64_t when, const lease_oid *parent)
{
	char msg[4096];
	int64_t saved = fx.now;

	snprintf(msg, sizeof(msg), "%s: %s claimed by alice on host-a\n\n%s\n", name, op, json);
	fx.now = when;
	ck_assert_int_eq(lease_write_commit(out, fx.st, parent, msg), 0);
	fx.now = saved;
}

/* Create refs/leases/<name> at a new commit carrying @p json. */
static lease_oid seed(const char *name, const char *json, int64_t when)
{
	lease_oid oid;

	write_payload(&oid, name, "acquire", json, when, NULL);
	ck_assert_int_eq(lease_cas_create(fx.st, name, &oid), 0);
	return oid;
}

static lease_oid seed10(const char *name, const char *phase, int64_t expires, int64_t when)
{
	char json[1024];

	payload_json(json, sizeof(json), "1.0.0", name, phase, T0 - 1000, expires, 2, NULL);
	return seed(name, json, when);
}

static void read_state(lease_ref_state *s, const char *name)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(lease_fetch_ref(s, fx.st, name), 0);
	ck_assert(s->present);
}

static lease_oid tip(const char *name)
{
	lease_ref_state s;
	lease_oid oid;

	read_state(&s, name);
	oid = s.oid;
	lease_ref_state_clear(&s);
	return oid;
}

static const lease_migrate_entry *entry(const lease_migrate_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (strcmp(r->entries[i].name, name) == 0)
			return &r->entries[i];
	ck_abort_msg("no entry for %s", name);
	return NULL;
}

/* The mixed store of the acceptance criteria. */
typedef struct expect {
	const char *name;
	lease_migrate_status plan;
	const char *method; /* NULL = none */
	int64_t ttl;        /* -1 = none */
	const char *from;   /* "" = unreadable */
} expect;

static const expect mixed[] = {
        {"a-live", LEASE_MIGRATE_WOULD_MIGRATE, "commit-time", 120, "1.0.0"},
        {"b-released", LEASE_MIGRATE_WOULD_MIGRATE, "released", 0, "1.0.0"},
        {"c-current", LEASE_MIGRATE_CURRENT, NULL, -1, "1.1.0"},
        {"d-malformed", LEASE_MIGRATE_SKIPPED_MALFORMED, NULL, -1, ""},
        {"e-newer", LEASE_MIGRATE_SKIPPED_NEWER, NULL, -1, "1.2.0"},
        {"f-major2", LEASE_MIGRATE_SKIPPED_NEWER, NULL, -1, "2.0.0"},
        {"g-clamp-high", LEASE_MIGRATE_WOULD_MIGRATE, "commit-time", 86400, "1.0.0"},
        {"h-clamp-low", LEASE_MIGRATE_WOULD_MIGRATE, "commit-time", 5, "1.0.0"},
        {"i-assumed", LEASE_MIGRATE_WOULD_MIGRATE, "assumed", 90, "1.0.0"},
        {"j-mismatch", LEASE_MIGRATE_SKIPPED_MALFORMED, NULL, -1, ""},
        {"k-patch", LEASE_MIGRATE_WOULD_MIGRATE, "commit-time", 600, "1.0.3"},
};
#define NMIXED (sizeof(mixed) / sizeof(mixed[0]))

static void seed_mixed(lease_oid oids[NMIXED])
{
	char json[1024], extra[1100];

	oids[0] = seed10("a-live", "claimed", T0 + 120, T0);
	oids[1] = seed10("b-released", "released", T0, T0);
	payload_json(json, sizeof(json), "1.1.0", "c-current", "working", T0 - 10, T0 + 300, 4,
	             "300");
	oids[2] = seed("c-current", json, T0);
	oids[3] = seed("d-malformed", "{\"sdlc_version\":\"1.0.0\",", T0);
	payload_json(json, sizeof(json), "1.2.0", "e-newer", "review", T0 - 10, T0 + 300, 1,
	             "300,\"zz_future\":true");
	oids[4] = seed("e-newer", json, T0);
	payload_json(json, sizeof(json), "2.0.0", "f-major2", "review", T0 - 10, T0 + 300, 1,
	             "300");
	oids[5] = seed("f-major2", json, T0);
	oids[6] = seed10("g-clamp-high", "working", T0 + 200000, T0);
	oids[7] = seed10("h-clamp-low", "working", T0 - 50, T0);
	/* a commit whose time the store cannot tell (0): method assumed */
	oids[8] = seed10("i-assumed", "review", T0 + 400, 0);
	payload_json(json, sizeof(json), "1.0.0", "someone-else", "claimed", T0 - 10, T0 + 300, 0,
	             NULL);
	oids[9] = seed("j-mismatch", json, T0);
	payload_json(json, sizeof(json), "1.0.3", "k-patch", "claimed", T0 - 10, T0 + 600, 7, NULL);
	/* a field this build does not know: the migration keeps it as read */
	json[strlen(json) - 1] = '\0';
	snprintf(extra, sizeof(extra), "%s,\"zz_extra\":{\"a\":[1,2]}}", json);
	oids[10] = seed("k-patch", extra, T0);
}

static void check_plan_entries(const lease_migrate_report *r, int applied)
{
	size_t i;

	ck_assert_uint_eq(r->count, NMIXED);
	ck_assert_str_eq(r->target, "1.1.0");
	ck_assert_int_eq(r->applied, applied);
	for (i = 0; i < NMIXED; i++) {
		const lease_migrate_entry *e = &r->entries[i];
		const char *m = e->method;
		lease_migrate_status want = mixed[i].plan;

		if (applied && want == LEASE_MIGRATE_WOULD_MIGRATE)
			want = LEASE_MIGRATE_MIGRATED;
		ck_assert_str_eq(e->name, mixed[i].name);
		ck_assert_msg(e->status == want, "%s: status %s, want %s (%s)", e->name,
		              lease_migrate_status_name(e->status), lease_migrate_status_name(want),
		              e->message);
		if (mixed[i].method)
			ck_assert_msg(m && strcmp(m, mixed[i].method) == 0, "%s: method %s",
			              e->name, m ? m : "(none)");
		else
			ck_assert_msg(m == NULL, "%s: method %s, want none", e->name, m);
		ck_assert_msg(e->ttl_seconds == mixed[i].ttl, "%s: ttl %lld, want %lld", e->name,
		              (long long)e->ttl_seconds, (long long)mixed[i].ttl);
		ck_assert_str_eq(e->from, mixed[i].from);
		if (want == LEASE_MIGRATE_WOULD_MIGRATE || want == LEASE_MIGRATE_MIGRATED)
			ck_assert_str_eq(e->to, "1.1.0");
		if (want == LEASE_MIGRATE_SKIPPED_MALFORMED || want == LEASE_MIGRATE_SKIPPED_NEWER)
			ck_assert_msg(e->message[0], "%s: skipped without a reason", e->name);
		ck_assert_int_eq(e->attempts, applied && want == LEASE_MIGRATE_MIGRATED ? 1 : 0);
	}
}

/* Plan: exactly the expected statuses and methods; nothing written. */
START_TEST(plan_mixed_store)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report r;
	lease_oid oids[NMIXED];
	size_t i;

	seed_mixed(oids);
	o.assumed_ttl = 90;
	o.to = "1.1.0"; /* the mixed store is migration 0001's */
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	check_plan_entries(&r, 0);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_WOULD_MIGRATE], 6);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_CURRENT], 1);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_SKIPPED_NEWER], 2);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_SKIPPED_MALFORMED], 2);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_MIGRATED] + r.counts[LEASE_MIGRATE_CONFLICT], 0);
	for (i = 0; i < NMIXED; i++) {
		lease_oid now_oid = tip(mixed[i].name);
		ck_assert_msg(lease_oid_equal(&now_oid, &oids[i]), "plan wrote %s", mixed[i].name);
	}
	lease_migrate_report_clear(&r);
}
END_TEST

/* The fields a migration must keep (protocol.md §8). */
static void assert_kept(const lease_payload *a, const lease_payload *b, const char *name)
{
	ck_assert_msg(strcmp(a->owner, b->owner) == 0, "%s: owner changed", name);
	ck_assert_msg(strcmp(a->host, b->host) == 0, "%s: host changed", name);
	ck_assert_msg(a->phase == b->phase, "%s: phase changed", name);
	ck_assert_msg(strcmp(a->lease_token, b->lease_token) == 0, "%s: token changed", name);
	ck_assert_msg(a->transitions == b->transitions, "%s: transitions changed", name);
	ck_assert_msg(a->acquired_at == b->acquired_at, "%s: acquired_at changed", name);
	ck_assert_msg(a->expires_at == b->expires_at, "%s: expires_at changed", name);
	ck_assert_str_eq(a->name, b->name);
}

/* Apply: every migratable lease at 1.1.0, held fields unchanged, exactly one
 * new commit (parent = the oid read, op migrate); a second run writes nothing. */
START_TEST(apply_mixed_store_then_rerun)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report r;
	lease_ref_state before[NMIXED], after;
	lease_oid oids[NMIXED], tips[NMIXED];
	size_t i;

	seed_mixed(oids);
	for (i = 0; i < NMIXED; i++)
		read_state(&before[i], mixed[i].name);
	fx.now = T0 + 30;
	o.apply = 1;
	o.assumed_ttl = 90;
	o.to = "1.1.0"; /* the mixed store is migration 0001's */
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	check_plan_entries(&r, 1);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_MIGRATED], 6);
	for (i = 0; i < NMIXED; i++) {
		const lease_migrate_entry *e = entry(&r, mixed[i].name);

		read_state(&after, mixed[i].name);
		tips[i] = after.oid;
		if (mixed[i].plan != LEASE_MIGRATE_WOULD_MIGRATE) {
			ck_assert_msg(lease_oid_equal(&after.oid, &oids[i]), "%s was rewritten",
			              mixed[i].name);
			lease_ref_state_clear(&after);
			continue;
		}
		ck_assert(e->has_new_oid && lease_oid_equal(&e->new_oid, &after.oid));
		ck_assert_int_eq(after.payload_rc, 0);
		ck_assert_str_eq(after.payload.sdlc_version, "1.1.0");
		ck_assert(after.payload.has_ttl);
		ck_assert_int_eq(after.payload.ttl_seconds, mixed[i].ttl);
		ck_assert_str_ne(after.payload.nonce, before[i].payload.nonce);
		assert_kept(&after.payload, &before[i].payload, mixed[i].name);
		/* exactly one new commit: its parent is the oid read */
		ck_assert(after.commit.has_parent);
		ck_assert(lease_oid_equal(&after.commit.parent, &oids[i]));
		ck_assert_int_eq(after.op, LEASE_OP_MIGRATE);
		if (strcmp(mixed[i].name, "k-patch") == 0)
			ck_assert_ptr_nonnull(
			        strstr(after.commit.message,
			               "\"ttl_seconds\":600,\"zz_extra\":{\"a\":[1,2]}}"));
		ck_assert_msg(strncmp(after.commit.message, mixed[i].name, strlen(mixed[i].name)) ==
		                              0 &&
		                      strstr(after.commit.message, ": migrate ") != NULL,
		              "summary: %s", after.commit.message);
		lease_ref_state_clear(&after);
	}
	lease_migrate_report_clear(&r);

	/* second run: nothing to do, nothing written */
	fx.now = T0 + 40;
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_MIGRATED], 0);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_WOULD_MIGRATE], 0);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_CURRENT], 7);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_CONFLICT], 0);
	for (i = 0; i < NMIXED; i++) {
		lease_oid t = tip(mixed[i].name);
		ck_assert_msg(lease_oid_equal(&t, &tips[i]), "second run wrote %s", mixed[i].name);
		ck_assert_int_eq(entry(&r, mixed[i].name)->attempts, 0);
		lease_ref_state_clear(&before[i]);
	}
	lease_migrate_report_clear(&r);
}
END_TEST

/* --- concurrent writers between the migration's read and its CAS --- */

typedef struct hook_ctx {
	int calls;
	int interfere_until; /* interfere on attempts 1..N */
	int heartbeat;       /* 1: a 1.1 client heartbeats; 0: a 1.0 writer writes */
	int64_t last_commit_time;
	int64_t last_expires;
} hook_ctx;

/* A holder heartbeats with this build's runtime: the lease becomes SDLC_VERSION. */
static void heartbeat_11(lease_store *st, const char *name, const char *expect_status)
{
	lease_op_options ho = LEASE_OP_OPTIONS_INIT;
	lease_result res;
	int rc;

	ho.owner = "alice";
	ho.host = "host-a";
	ho.lease_token = TOKEN_A;
	rc = lease_heartbeat(&res, st, name, &ho);
	ck_assert_msg(rc == 0, "heartbeat %s: %d %s %s", name, rc, lease_status_name(res.status),
	              res.message);
	ck_assert_str_eq(lease_status_name(res.status), expect_status);
	ck_assert_str_eq(res.payload.lease_token, TOKEN_A);
}

/* An old (1.0) writer extends the lease by CAS from the oid read. */
static void write_10_on_top(hook_ctx *h, const char *name, const lease_oid *read_oid)
{
	char json[1024];
	lease_oid next;

	h->last_commit_time = fx.now;
	h->last_expires = fx.now + 200;
	payload_json(json, sizeof(json), "1.0.0", name, "claimed", T0 - 1000, h->last_expires, 2,
	             NULL);
	write_payload(&next, name, "heartbeat", json, fx.now, read_oid);
	ck_assert_int_eq(lease_cas_replace(fx.st, name, read_oid, &next), 0);
}

static int interfere(lease_store *st, const char *name, const lease_oid *read_oid, int attempt,
                     void *payload)
{
	hook_ctx *h = payload;

	if (attempt == 1)
		h->calls = 0; /* a new lease */
	h->calls++;
	ck_assert_int_eq(attempt, h->calls);
	if (attempt > h->interfere_until)
		return 0;
	fx.now += 60;
	if (h->heartbeat)
		heartbeat_11(st, name, "renewed");
	else
		write_10_on_top(h, name, read_oid);
	return 0;
}

/* lease_migrate --apply with the old writer of @p h interfering before the
 * writes (interfere): its report into @p r. */
static void migrate_interfered(lease_migrate_report *r, hook_ctx *h)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;

	o.apply = 1;
	o.before_write = interfere;
	o.hook_payload = h;
	ck_assert_int_eq(lease_migrate(r, fx.st, &o), 0);
}

/* "held" (and @p also when not NULL) seeded by a 1.0 writer, working until
 * T0 + 120, then migrated with @p h interfering: the seed of "held". */
static lease_oid held_migrated(lease_migrate_report *r, hook_ctx *h, const char *also)
{
	lease_oid first = seed10("held", "working", T0 + 120, T0);

	if (also)
		seed10(also, "working", T0 + 120, T0);
	migrate_interfered(r, h);
	return first;
}

/* A holder heartbeating with a 1.1 client meanwhile makes the lease current;
 * the migration writes nothing over it. */
START_TEST(concurrent_11_heartbeat_makes_current)
{
	lease_migrate_report r;
	lease_ref_state s;
	hook_ctx h = {0, 1, 1, 0, 0};
	lease_oid first = held_migrated(&r, &h, NULL);

	ck_assert_uint_eq(r.count, 1);
	ck_assert_str_eq(lease_migrate_status_name(r.entries[0].status), "current");
	ck_assert_int_eq(r.entries[0].attempts, 1);
	ck_assert_int_eq(h.calls, 1);
	read_state(&s, "held");
	/* the tip is the heartbeat, directly on the seed: no migrate commit */
	ck_assert_int_eq(s.op, LEASE_OP_HEARTBEAT);
	ck_assert(lease_oid_equal(&s.commit.parent, &first));
	ck_assert_str_eq(s.payload.sdlc_version, SDLC_VERSION);
	ck_assert_int_eq(s.payload.expires_at, T0 + 60 + 300);
	lease_ref_state_clear(&s);
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_CONFLICT], 0);
	lease_migrate_report_clear(&r);
}
END_TEST

/* An old writer once: re-read, migrate the new tip (its own commit time). */
START_TEST(concurrent_10_writer_once_then_migrated)
{
	lease_migrate_report r;
	lease_ref_state s;
	hook_ctx h = {0, 1, 0, 0, 0};

	held_migrated(&r, &h, NULL);
	ck_assert_str_eq(lease_migrate_status_name(r.entries[0].status), "migrated");
	ck_assert_int_eq(r.entries[0].attempts, 2);
	ck_assert_int_eq(r.entries[0].ttl_seconds, h.last_expires - h.last_commit_time);
	read_state(&s, "held");
	ck_assert_int_eq(s.op, LEASE_OP_MIGRATE);
	ck_assert_int_eq(s.payload.expires_at, h.last_expires);
	ck_assert_int_eq(s.payload.ttl_seconds, 200);
	lease_ref_state_clear(&s);
	lease_migrate_report_clear(&r);
}
END_TEST

/* Old writers beat every attempt: 1 + 3 retries, then conflict; the lease is
 * left as its writer left it. */
START_TEST(concurrent_10_writer_always_conflict)
{
	lease_migrate_report r;
	lease_ref_state s;
	hook_ctx h = {0, 100, 0, 0, 0};

	held_migrated(&r, &h, "other");
	ck_assert_uint_eq(r.count, 2);
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "held")->status), "conflict");
	ck_assert_int_eq(entry(&r, "held")->attempts, 1 + LEASE_MIGRATE_MAX_RETRIES);
	ck_assert(entry(&r, "held")->message[0]);
	/* the sweep goes on after a conflict */
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "other")->status), "conflict");
	ck_assert_uint_eq(r.counts[LEASE_MIGRATE_CONFLICT], 2);
	read_state(&s, "held");
	ck_assert_int_eq(s.op, LEASE_OP_HEARTBEAT);
	ck_assert_str_eq(s.payload.sdlc_version, "1.0.0");
	lease_ref_state_clear(&s);
	lease_migrate_report_clear(&r);
}
END_TEST

/* --- F28: readers of both versions keep working during the migration window --- */

typedef struct f28_ctx {
	int reads;
} f28_ctx;

static void assert_live(lease_store *st, const char *name)
{
	lease_result res;

	ck_assert_int_eq(lease_status(&res, st, name), 0);
	ck_assert_msg(res.status == LEASE_STATUS_LIVE, "%s: %s", name,
	              lease_status_name(res.status));
	ck_assert(res.has_payload);
	ck_assert_str_eq(res.payload.owner, "alice");
}

static int f28_reader(lease_store *st, const char *name, const lease_oid *read_oid, int attempt,
                      void *payload)
{
	f28_ctx *c = payload;

	(void)name;
	(void)read_oid;
	(void)attempt;
	/* mid-migration: some leases 1.1, some still 1.0; every reader works */
	assert_live(st, "f28-a");
	assert_live(st, "f28-b");
	assert_live(st, "f28-c");
	c->reads++;
	return 0;
}

START_TEST(f28_mixed_versions_during_migration_window)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report r;
	lease_ref_state b0, b1, c1;
	lease_payload as10;
	char *json, *p;
	f28_ctx c = {0};
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	lease_result res;

	seed10("f28-a", "working", T0 + 120, T0);
	seed10("f28-b", "working", T0 + 120, T0);
	ao.owner = "alice";
	ao.host = "host-a";
	ck_assert_int_eq(lease_acquire(&res, fx.st, "f28-c", &ao), 0); /* a 1.1 writer */
	ck_assert_str_eq(res.payload.sdlc_version, SDLC_VERSION);

	/* before: 1.0 and 1.1 readable side by side */
	assert_live(fx.st, "f28-a");
	assert_live(fx.st, "f28-b");
	assert_live(fx.st, "f28-c");
	read_state(&b0, "f28-b");
	ck_assert(!b0.payload.has_ttl);

	/* a 1.1 client heartbeats a 1.0 lease: token kept, now 1.1 */
	fx.now = T0 + 80;
	heartbeat_11(fx.st, "f28-a", "renewed");

	/* the migration, with every reader exercised between read and CAS */
	o.apply = 1;
	o.before_write = f28_reader;
	o.hook_payload = &c;
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	ck_assert_int_eq(c.reads, 1); /* only f28-b needed a write */
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "f28-a")->status), "current");
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "f28-b")->status), "migrated");
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "f28-c")->status), "current");
	lease_migrate_report_clear(&r);

	/* after: owner, token and expiry preserved on the same ref */
	read_state(&b1, "f28-b");
	assert_kept(&b1.payload, &b0.payload, "f28-b");
	ck_assert_int_eq(b1.payload.ttl_seconds, 120);
	ck_assert(lease_oid_equal(&b1.commit.parent, &b0.oid));

	/* a 1.0 reader ignores ttl_seconds: the 1.0 view of the migrated payload
	 * is the payload it had before */
	json = strstr(b1.commit.message, "\n\n");
	ck_assert_ptr_nonnull(json);
	json = strdup(json + 2);
	ck_assert_ptr_nonnull((p = strstr(json, "\"sdlc_version\":\"" SDLC_VERSION "\"")));
	p[strlen("\"sdlc_version\":\"1.")] = '0'; /* 1.x.0 -> 1.0.0 */
	ck_assert_int_eq(lease_payload_parse(&as10, json, strlen(json), NULL, 0), 0);
	ck_assert(!as10.has_ttl);
	assert_kept(&as10, &b0.payload, "f28-b as 1.0");
	free(json);

	/* the holder's 1.1 client keeps heartbeating the migrated lease with the
	 * migrated TTL (120 s): token preserved */
	fx.now = T0 + 100;
	heartbeat_11(fx.st, "f28-b", "renewed");
	read_state(&c1, "f28-b");
	ck_assert_int_eq(c1.payload.expires_at, T0 + 100 + 120);
	ck_assert_str_eq(c1.payload.lease_token, TOKEN_A);
	assert_live(fx.st, "f28-a");
	assert_live(fx.st, "f28-b");
	assert_live(fx.st, "f28-c");
	lease_ref_state_clear(&b0);
	lease_ref_state_clear(&b1);
	lease_ref_state_clear(&c1);
}
END_TEST

/* Issue 29: a 1.1 chain (an acquire and ten heartbeats, each appended as the
 * 1.1 runtime wrote them) migrated to 1.2.0: one migrate commit on the oid
 * read, every older commit kept, nothing derived, the held fields as they
 * were; then the holder's heartbeats: the first is appended on the migrate
 * commit, the next ones replace it (the chain stops growing), and a 1.1
 * reader still reads the 1.2 tip (the new fields are unknown to it). */
START_TEST(migrate_11_chain_then_replaced_heartbeats)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report r;
	lease_ref_state before, after;
	lease_history h;
	lease_oid prev, next;
	lease_payload as11;
	char json[1024], *body;
	int i;

	payload_json(json, sizeof(json), "1.1.0", "chain", "working", T0 - 100, T0 - 70, 3, "30");
	prev = seed("chain", json, T0 - 100);
	for (i = 1; i <= 10; i++) {
		int64_t hb = T0 - 100 + 10 * i;
		payload_json(json, sizeof(json), "1.1.0", "chain", "working", T0 - 100, hb + 30, 3,
		             "30");
		write_payload(&next, "chain", "heartbeat", json, hb, &prev);
		ck_assert_int_eq(lease_cas_replace(fx.st, "chain", &prev, &next), 0);
		prev = next;
	}
	ck_assert_int_eq(lease_history_read(&h, fx.st, "chain", 0, 0), 0);
	ck_assert_uint_eq(h.count, 11);
	ck_assert(h.items[0].is_heartbeat && h.items[0].interval_seconds == 10);
	lease_history_free(&h);
	read_state(&before, "chain");

	fx.now = T0 + 5;
	o.apply = 1;
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	ck_assert_str_eq(r.target, SDLC_VERSION);
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "chain")->status), "migrated");
	ck_assert_str_eq(entry(&r, "chain")->from, "1.1.0");
	ck_assert_ptr_null(entry(&r, "chain")->method); /* nothing derived */
	lease_migrate_report_clear(&r);
	read_state(&after, "chain");
	ck_assert_str_eq(after.payload.sdlc_version, "1.2.0");
	ck_assert_int_eq(after.op, LEASE_OP_MIGRATE);
	ck_assert(lease_oid_equal(&after.commit.parent, &before.oid));
	ck_assert(!after.payload.has_heartbeats && !after.payload.has_previous_heartbeat);
	ck_assert_int_eq(after.payload.ttl_seconds, 30);
	assert_kept(&after.payload, &before.payload, "chain");
	/* a 1.1 reader: the 1.2 tip read as 1.1 is the same lease */
	body = strstr(after.commit.message, "\n\n");
	ck_assert_ptr_nonnull(body);
	body = strdup(body + 2);
	ck_assert_ptr_nonnull(strstr(body, "\"sdlc_version\":\"1.2.0\""));
	strstr(body, "\"sdlc_version\":\"1.2.0\"")[strlen("\"sdlc_version\":\"1.")] = '1';
	ck_assert_int_eq(lease_payload_parse(&as11, body, strlen(body), NULL, 0), 0);
	assert_kept(&as11, &before.payload, "chain as 1.1");
	free(body);
	lease_ref_state_clear(&before);
	ck_assert_int_eq(lease_history_read(&h, fx.st, "chain", 0, 0), 0);
	ck_assert_uint_eq(h.count, 12); /* the migration drops nothing */
	lease_history_free(&h);

	/* the holder heartbeats: appended once on the migrate commit, then replaced */
	for (i = 1; i <= 10; i++) {
		fx.now = T0 + 5 + 10 * i;
		heartbeat_11(fx.st, "chain", "renewed");
		ck_assert_int_eq(lease_history_read(&h, fx.st, "chain", 0, 0), 0);
		ck_assert_uint_eq(h.count, 13);
		ck_assert_int_eq(h.items[0].payload.heartbeats, i);
		ck_assert(lease_oid_equal(&h.items[1].oid, &after.oid));
		if (i > 1) {
			ck_assert(h.items[0].has_interval);
			ck_assert_int_eq(h.items[0].interval_seconds, 10);
			ck_assert_int_eq(h.items[0].payload.previous_heartbeat_at, fx.now - 10);
		}
		lease_history_free(&h);
	}
	lease_ref_state_clear(&after);
}
END_TEST

/* --- registry, 0001 and options --- */

START_TEST(registry_orders_and_chains)
{
	const lease_migration *steps[8];
	char err[256] = "";
	size_t n = 99;

	ck_assert_msg(lease__migrations_check(err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_ge(lease__migrations_count(), 1);
	ck_assert_str_eq(lease__migration_at(0)->id, "0001");
	ck_assert_ptr_null(lease__migration_at(lease__migrations_count()));
	ck_assert_ptr_eq(lease__migration_from(1, 0), lease__migration_at(0));
	ck_assert_str_eq(lease__migration_at(1)->id, "0002");
	ck_assert_ptr_eq(lease__migration_from(1, 1), lease__migration_at(1));
	ck_assert_ptr_null(lease__migration_from(1, 2));
	ck_assert_int_eq(lease__migrations_chain(steps, 8, &n, 1, 0, 1, 1), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(steps[0], lease__migration_at(0));
	ck_assert_int_eq(lease__migrations_chain(steps, 8, &n, 1, 0, 1, 2), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(steps[1], lease__migration_at(1));
	ck_assert_int_eq(lease__migrations_chain(steps, 8, &n, 1, 1, 1, 1), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(lease__migrations_chain(steps, 8, &n, 1, 2, 1, 1), LEASE_EVERSION);
	ck_assert_int_eq(lease__migrations_chain(steps, 8, &n, 0, 9, 1, 1), LEASE_EINVALID);
	ck_assert_int_eq(lease_migrate_target_validate("1.1.0", NULL, 0), 0);
	ck_assert_int_eq(lease_migrate_target_validate("1.2.0", NULL, 0), 0);
	ck_assert_int_eq(lease_migrate_target_validate("1.0.0", err, sizeof(err)), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(err, "1.1.0, 1.2.0"));
	ck_assert_int_eq(lease_migrate_target_validate("1.3.0", NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_migrate_target_validate("2.0.0", NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_migrate_target_validate("1.1", NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_migrate_target_validate("1.1.0x", NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_migrate_target_validate("-1.1.0", NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_migrate_target_validate("", NULL, 0), LEASE_EINVALID);
	ck_assert_str_eq(lease_migrate_status_name(LEASE_MIGRATE_SKIPPED_MALFORMED),
	                 "skipped_malformed");
}
END_TEST

static int by_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/*
 * The generated registry lists every step file: the ids of the
 * migrations/NNNN_<what>.c files of the source tree (REFLEASE_SRCDIR, else
 * the working directory `make unit` runs in), in order, are exactly the
 * registered ids. Fails when the build's list lost or kept a step.
 */
START_TEST(registry_lists_every_step_file)
{
	const char *src = getenv("REFLEASE_SRCDIR");
	char dir[512], ids[64][5];
	struct dirent *de;
	size_t n = 0, i;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/migrations", src && *src ? src : ".");
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s: run from the source root or set REFLEASE_SRCDIR",
	              dir);
	while ((de = readdir(d)) != NULL) {
		const char *f = de->d_name;
		size_t len = strlen(f);

		if (len < 8 || strspn(f, "0123456789") != 4 || f[4] != '_' ||
		    strcmp(f + len - 2, ".c") != 0)
			continue;
		ck_assert_uint_lt(n, 64);
		memcpy(ids[n], f, 4);
		ids[n++][4] = '\0';
	}
	closedir(d);
	qsort(ids, n, sizeof(ids[0]), by_name);
	ck_assert_uint_ge(n, 1);
	ck_assert_msg(lease__migrations_count() == n, "%zu step files in %s, %zu registered", n,
	              dir, lease__migrations_count());
	for (i = 0; i < n; i++)
		ck_assert_str_eq(lease__migration_at(i)->id, ids[i]);
}
END_TEST

START_TEST(step_0001_keeps_fields)
{
	const lease_migration *m0001 = lease__migration_at(0);
	lease_migration_input in = {1, T0, 300, 60, 86400, NULL};
	lease_payload p, q;
	const char *m = NULL;
	char json[1024];

	ck_assert_str_eq(m0001->id, "0001");

	payload_json(json, sizeof(json), "1.0.0", "x", "claimed", T0 - 5, T0 + 45, 3, NULL);
	ck_assert_int_eq(lease_payload_parse(&p, json, strlen(json), NULL, 0), 0);
	q = p;
	/* commit-time clamped to a github/remote store's minimum (60) */
	ck_assert_int_eq(m0001->apply(&q, &m, &in, NULL, 0), 0);
	ck_assert_str_eq(m, "commit-time");
	ck_assert_int_eq(q.ttl_seconds, 60);
	ck_assert_str_eq(q.sdlc_version, "1.1.0");
	ck_assert_int_eq(q.version_minor, 1);
	ck_assert_str_ne(q.nonce, p.nonce);
	assert_kept(&q, &p, "x");
	ck_assert_int_eq(lease_payload_validate(&q, NULL, 0), 0);
	/* unknown commit time: the assumed TTL */
	q = p;
	in.has_commit_time = 0;
	ck_assert_int_eq(m0001->apply(&q, &m, &in, NULL, 0), 0);
	ck_assert_str_eq(m, "assumed");
	ck_assert_int_eq(q.ttl_seconds, 300);
	/* a 1.1 payload is not this step's */
	ck_assert_int_eq(m0001->apply(&q, &m, &in, NULL, 0), LEASE_EPAYLOAD);
}
END_TEST

START_TEST(options_rejected_before_io)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report r;

	seed10("a", "working", T0 + 120, T0);
	o.apply = 1;
	o.assumed_ttl = 4; /* below the local minimum (5) */
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), LEASE_EINVALID);
	ck_assert_uint_eq(r.count, 0);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(fx.st), "--assumed-ttl"));
	lease_migrate_report_clear(&r);
	o.assumed_ttl = 86401;
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), LEASE_EINVALID);
	lease_migrate_report_clear(&r);
	o.assumed_ttl = 0;
	o.to = "1.3.0";
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), LEASE_EINVALID);
	lease_migrate_report_clear(&r);
	/* nothing was written */
	o.to = "1.1.0";
	o.apply = 0;
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	ck_assert_str_eq(lease_migrate_status_name(r.entries[0].status), "would_migrate");
	lease_migrate_report_clear(&r);
}
END_TEST

/* Real processes: four migrators forked at once over the same leases. Each
 * lease is migrated by exactly one of them (one migrate commit per chain);
 * the others find it current; nobody reports a conflict. */
#define RACE_LEASES 16
#define RACE_PROCS  4

START_TEST(forked_migrators_race)
{
	char spec[300], name[32], out[4096], args[128];
	pid_t pids[RACE_PROCS];
	int k, migrated = 0, status;

	for (k = 0; k < RACE_LEASES; k++) {
		snprintf(name, sizeof(name), "race-%02d", k);
		seed10(name, "working", T0 + 120, T0);
	}
	snprintf(spec, sizeof(spec), "local:%s", fx.dir);
	for (k = 0; k < RACE_PROCS; k++) {
		pids[k] = fork();
		ck_assert_int_ge(pids[k], 0);
		if (pids[k] == 0) {
			lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
			lease_migrate_report r;
			lease_store *st = NULL;
			int rc;

			if (lease_store_open(&st, spec, NULL, NULL, 0) < 0)
				_exit(200);
			o.apply = 1;
			rc = lease_migrate(&r, st, &o);
			if (rc < 0 || r.counts[LEASE_MIGRATE_CONFLICT] || r.count != RACE_LEASES)
				_exit(201);
			rc = (int)r.counts[LEASE_MIGRATE_MIGRATED];
			lease_migrate_report_clear(&r);
			lease_store_free(st);
			_exit(rc);
		}
	}
	for (k = 0; k < RACE_PROCS; k++) {
		ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_le(WEXITSTATUS(status), RACE_LEASES);
		migrated += WEXITSTATUS(status);
	}
	ck_assert_int_eq(migrated, RACE_LEASES);
	for (k = 0; k < RACE_LEASES; k++) {
		lease_ref_state st;
		char *p = out;
		int n = 0;

		snprintf(name, sizeof(name), "race-%02d", k);
		snprintf(args, sizeof(args), "log --format=%%s refs/leases/%s", name);
		ck_assert_int_eq(testrepo_git(out, sizeof(out), fx.dir, args), 0);
		while ((p = strstr(p, ": migrate ")) != NULL) {
			n++;
			p++;
		}
		ck_assert_msg(n == 1, "%s: %d migrate commits", name, n);
		read_state(&st, name);
		ck_assert_str_eq(st.payload.sdlc_version, SDLC_VERSION);
		ck_assert_int_eq(st.payload.expires_at, T0 + 120);
		ck_assert_int_eq(st.payload.ttl_seconds, 120);
		lease_ref_state_clear(&st);
	}
}
END_TEST

/* --- the lying in-memory transport: lost answers, no-op successes --- */

static memstore *mem;

static void mem_setup(void)
{
	lease_store_options o = fx_options();

	fx.st = storefix_mem(&mem, &o);
}

static void mem_teardown(void)
{
	lease_store_free(fx.st);
	fx.st = NULL;
	mem = NULL;
}

static lease_migrate_report apply_all(void)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report r;

	o.apply = 1;
	ck_assert_int_eq(lease_migrate(&r, fx.st, &o), 0);
	return r;
}

/* A write through the lying transport settles as migrated, with exactly one
 * migration commit on the seeded oid: the write applied but its answer was
 * lost (settled by re-reading, never written twice: 1 attempt); the transport
 * reported success without acting (the primitive catches it, the migration
 * re-reads and writes again from the same oid: 2 attempts). */
static const struct {
	const char *name;
	int drop_after_apply, lie_replace, attempts;
} mem_settle_rows[] = {{"lost", 1, 0, 1}, {"liar", 0, 1, 2}};

START_TEST(mem_write_settles_as_migrated)
{
	lease_migrate_report r;
	lease_ref_state s;
	lease_oid seeded = seed10(mem_settle_rows[_i].name, "working", T0 + 120, T0);

	memstore_faults_get(mem)->drop_after_apply = mem_settle_rows[_i].drop_after_apply;
	memstore_faults_get(mem)->lie_replace = mem_settle_rows[_i].lie_replace;
	r = apply_all();
	ck_assert_str_eq(lease_migrate_status_name(r.entries[0].status), "migrated");
	ck_assert_int_eq(r.entries[0].attempts, mem_settle_rows[_i].attempts);
	read_state(&s, mem_settle_rows[_i].name);
	ck_assert_int_eq(s.op, LEASE_OP_MIGRATE);
	ck_assert(lease_oid_equal(&s.commit.parent, &seeded));
	ck_assert(lease_oid_equal(&s.oid, &r.entries[0].new_oid));
	lease_ref_state_clear(&s);
	lease_migrate_report_clear(&r);
}
END_TEST

/* Every write fails before it is sent: 1 + 3 attempts, then conflict with
 * the reason; the lease is untouched. A ref at a blob is skipped_malformed. */
START_TEST(mem_failing_writes_conflict_and_blob_skipped)
{
	lease_migrate_report r;
	lease_oid blob, t, seeded = seed10("down", "working", T0 + 120, T0);

	ck_assert_int_eq(memstore_put_blob(mem, &blob, "not a commit"), 0);
	ck_assert_int_eq(memstore_set_ref(mem, "refs/leases/blob", &blob), 0);
	memstore_faults_get(mem)->fail_before = 100;
	r = apply_all();
	ck_assert_uint_eq(r.count, 2);
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "blob")->status), "skipped_malformed");
	ck_assert_str_eq(lease_migrate_status_name(entry(&r, "down")->status), "conflict");
	ck_assert_int_eq(entry(&r, "down")->attempts, 1 + LEASE_MIGRATE_MAX_RETRIES);
	ck_assert_ptr_nonnull(strstr(entry(&r, "down")->message, "4 attempts"));
	t = tip("down");
	ck_assert(lease_oid_equal(&t, &seeded));
	lease_migrate_report_clear(&r);
}
END_TEST

Suite *migrate_suite(void)
{
	const suitefix_fixture fx_setup = {setup, teardown, 0};
	const suitefix_fixture fx_mem_setup = {mem_setup, mem_teardown, 0};
	Suite *s = suite_create("migrate");

	suitefix_add(s, "migrate", 20, &fx_setup, ONE(plan_mixed_store),
	             ONE(apply_mixed_store_then_rerun), ONE(concurrent_11_heartbeat_makes_current),
	             ONE(concurrent_10_writer_once_then_migrated),
	             ONE(concurrent_10_writer_always_conflict),
	             ONE(f28_mixed_versions_during_migration_window),
	             ONE(migrate_11_chain_then_replaced_heartbeats),
	             ONE(registry_orders_and_chains), ONE(registry_lists_every_step_file),
	             ONE(step_0001_keeps_fields), ONE(options_rejected_before_io),
	             ONE(forked_migrators_race), NULL);
	suitefix_add(s, "migrate-mem", 0, &fx_mem_setup, LOOP(mem_write_settles_as_migrated, 0, 2),
	             ONE(mem_failing_writes_conflict_and_blob_skipped), NULL);
	return s;
}
