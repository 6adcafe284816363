/* The heartbeat service (lib/lease/heartbeat.c, protocol.md §6) on the
 * in-memory transport with an injected clock and an injected sleep: schedules,
 * retries until the lost deadline, loss on a changed token (F21), a handoff
 * rotation followed, and the stop flag. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "lease/renew.h"
#include "reflease.h"
#include "reflease/sys/transport.h"
#include "support/memstore.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/vclock.h"

/* A fake store clock advanced only by the injected sleep (and by hand). */
typedef struct fake {
	double t;
	memstore *mem;
	lease_store *st;
	/* recorded reports */
	int n, writes, retries, lost, failed;
	lease_keep_event ev[64];
	int64_t at[64];
	int64_t exp[64];
	double lost_at[64];
	double real[64]; /* f->t at each report */
	char status[64][24];
	size_t set_n[64];                         /* rep->set->count, 0 without a set answer */
	char set_blocker[64][LEASE_NAME_MAX + 1]; /* the set answer's blocked member, "" = none */
	char token[LEASE_TOKEN_HEXSZ + 1];
	/* actions */
	int stop_after_writes;  /* set stop after this many writes (0 = never) */
	int fail_after_first;   /* after the first write, make every write fail ENET */
	int fail_n_after_first; /* ... or only the next N writes */
	int break_after_first;  /* after the first write, another party breaks the lease */
	int own_write_at_sleep; /* at this sleep, CMD heartbeats with the token (--ttl own_ttl) */
	int64_t own_ttl;
	int break_at_sleep; /* at this sleep, an administrator breaks the lease */
	const char *target; /* the lease CMD heartbeats and the admin breaks; NULL = "job" */
	int changed;
	volatile sig_atomic_t stop;
	int sleeps;
} fake;

/* Another party (admin@elsewhere) breaks "job" (--force). */
static void admin_break(fake *f)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_result r;

	o.owner = "admin";
	o.host = "elsewhere";
	o.force = 1;
	ck_assert_int_eq(lease_break(&r, f->st, f->target ? f->target : "job", &o), 0);
}

static int64_t fake_now(void *payload)
{
	return (int64_t)((fake *)payload)->t;
}

static int fake_sleep(double seconds, void *payload)
{
	fake *f = payload;

	ck_assert(seconds > 0);
	f->t += seconds;
	f->sleeps++;
	ck_assert_int_lt(f->sleeps, 10000); /* never spins */
	if (f->sleeps == f->own_write_at_sleep) {
		lease_op_options o = LEASE_OP_OPTIONS_INIT;
		lease_result r;
		o.owner = "alice";
		o.host = "h1";
		o.lease_token = f->token;
		o.ttl_seconds = f->own_ttl;
		ck_assert_int_eq(lease_heartbeat(&r, f->st, f->target ? f->target : "job", &o), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_RENEWED);
	}
	if (f->sleeps == f->break_at_sleep)
		admin_break(f);
	return f->stop != 0;
}

static void on_report(const lease_keep_report *rep, void *payload)
{
	fake *f = payload;

	ck_assert_int_lt(f->n, 64);
	f->ev[f->n] = rep->event;
	f->at[f->n] = rep->now;
	f->exp[f->n] = rep->expires_at;
	f->lost_at[f->n] = rep->lost_at;
	f->real[f->n] = f->t;
	snprintf(f->status[f->n], sizeof(f->status[0]), "%s",
	         rep->result ? lease_status_name(rep->result->status) : "");
	f->set_n[f->n] = rep->set ? rep->set->count : 0;
	snprintf(f->set_blocker[f->n], sizeof(f->set_blocker[0]), "%s",
	         rep->set && rep->set->blocker >= 0 ? rep->set->members[rep->set->blocker].name
	                                            : "");
	f->n++;
	switch (rep->event) {
	case LEASE_KEEP_WRITE:
		f->writes++;
		if (f->stop_after_writes && f->writes >= f->stop_after_writes)
			f->stop = 1;
		if (f->writes == 1 && f->fail_after_first)
			memstore_faults_get(f->mem)->fail_before = 1000000;
		if (f->writes == 1 && f->fail_n_after_first)
			memstore_faults_get(f->mem)->fail_before = f->fail_n_after_first;
		if (f->writes == 1 && f->break_after_first)
			admin_break(f);
		break;
	case LEASE_KEEP_RETRY: f->retries++; break;
	case LEASE_KEEP_LOST: f->lost++; break;
	case LEASE_KEEP_FAILED: f->failed++; break;
	case LEASE_KEEP_CHANGED: f->changed++; break;
	}
}

/* A fresh fake on a memstore; @p sets: the memstore writes sets (cas_many). */
static void fake_open_on(fake *f, int sets)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t;

	memset(f, 0, sizeof(*f));
	f->t = 1800000000.0;
	o.clock.now = fake_now;
	o.clock.payload = f;
	t = memstore_new(&f->mem);
	if (t && sets)
		t->cas_many = memstore_cas_many;
	f->st = storefix_transport(t, &o);
}

static void fake_open(fake *f)
{
	fake_open_on(f, 0);
}

/* Acquire "job" as alice@h1 with @p ttl; the token goes to f->token. */
static void fake_acquire(fake *f, int64_t ttl, lease_result *r)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = "alice";
	o.host = "h1";
	o.ttl_seconds = ttl;
	ck_assert_int_eq(lease_acquire(r, f->st, "job", &o), 0);
	memcpy(f->token, r->payload.lease_token, sizeof(f->token));
}

/* A set of leases (protocol.md "Sets") needs an atomic cas_many. */
static const char *const set_names[] = {"job", "db", "prod"};

/* Like fake_open, on a memstore that writes sets; then acquire set_names
 * as alice@h1 with @p ttl (the set's one token to f->token). */
static void fake_open_set(fake *f, int64_t ttl, lease_set_result *acq)
{
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;

	fake_open_on(f, 1);
	ao.owner = "alice";
	ao.host = "h1";
	ao.ttl_seconds = ttl;
	ck_assert_int_eq(lease_acquire_set(acq, f->st, set_names, 3, &ao), 0);
	memcpy(f->token, acq->members[0].payload.lease_token, sizeof(f->token));
}

/* The stored expiry of @p name. */
static int64_t stored_expiry(fake *f, const char *name)
{
	lease_result r;

	ck_assert_int_eq(lease_status(&r, f->st, name), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_LIVE);
	return r.payload.expires_at;
}

static void keep_init(lease_keep_options *k, fake *f, int64_t ttl, const lease_result *acq)
{
	lease_keep_options init = LEASE_KEEP_OPTIONS_INIT;

	*k = init;
	k->owner = "alice";
	k->host = "h1";
	k->lease_token = f->token;
	k->ttl_seconds = ttl;
	k->stop = &f->stop;
	k->sleep = fake_sleep;
	k->sleep_payload = f;
	k->report = on_report;
	k->report_payload = f;
	if (acq) {
		k->known_expires_at = acq->payload.expires_at;
		k->known_ttl_seconds = ttl;
		k->known_now = acq->now;
	}
}

/* Open the fake store, acquire "job" with @p ttl into @p acq and set @p k to
 * keep it (keep_init). */
static void fake_keep(fake *f, int64_t ttl, lease_result *acq, lease_keep_options *k)
{
	fake_open(f);
	fake_acquire(f, ttl, acq);
	keep_init(k, f, ttl, acq);
}

/* fake_open_set with a set of @p ttl, and the keeper's options for it
 * (keep_init, the set's expiry known). The set's answer: free() it. */
static lease_set_result *set_keeper(fake *f, lease_keep_options *k, int64_t ttl)
{
	lease_set_result *acq = calloc(1, sizeof(*acq));

	ck_assert_ptr_nonnull(acq);
	fake_open_set(f, ttl, acq);
	keep_init(k, f, ttl, &acq->members[0]);
	return acq;
}

/* Default schedule: every ttl/3 from the acquire, each write renews to now + ttl. */
START_TEST(test_schedule_default_interval)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int64_t t0;
	int i;

	fake_open(&f);
	fake_acquire(&f, 30, &acq);
	t0 = acq.now;
	keep_init(&k, &f, 30, &acq);
	f.stop_after_writes = 4;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 4);
	ck_assert_int_eq(f.retries + f.lost + f.failed, 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(f.ev[i], LEASE_KEEP_WRITE);
		ck_assert_str_eq(f.status[i], "renewed");
		ck_assert_int_eq(f.at[i], t0 + 10 * (i + 1));
		ck_assert_int_eq(f.exp[i], f.at[i] + 30);
	}
	ck_assert_int_eq(last.status, LEASE_STATUS_RENEWED);
	lease_store_free(f.st);
}
END_TEST

/* Issue 29: the service's heartbeats replace each other (protocol.md §2
 * "Heartbeats replace heartbeats"), also when it writes from the state it
 * last wrote without a read: 50 heartbeats leave acquire + one heartbeat
 * reachable, counting 50, carrying the time of the one before it. */
START_TEST(test_service_heartbeats_replace)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	lease_history h;

	fake_keep(&f, 30, &acq, &k);
	f.stop_after_writes = 50;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 50);
	ck_assert_uint_eq(f.set_n[0], 0); /* lease_keep: no set answer */
	ck_assert_int_eq(lease_history_read(&h, f.st, "job", 0, 0), 0);
	ck_assert_uint_eq(h.count, 2);
	ck_assert_int_eq(h.items[0].op, LEASE_OP_HEARTBEAT);
	ck_assert_int_eq(h.items[0].payload.heartbeats, 50);
	ck_assert(h.items[0].payload.has_previous_heartbeat);
	ck_assert_int_eq(h.items[0].payload.previous_heartbeat_at, f.at[48]);
	ck_assert(h.items[0].has_interval);
	ck_assert_int_eq(h.items[0].interval_seconds, 10);
	ck_assert_int_eq(h.items[1].op, LEASE_OP_ACQUIRE);
	ck_assert(lease_oid_equal(&h.items[1].oid, &acq.oid));
	ck_assert_str_eq(h.items[0].payload.lease_token, f.token);
	ck_assert_int_eq(h.items[0].payload.transitions, acq.payload.transitions);
	lease_history_free(&h);
	lease_store_free(f.st);
}
END_TEST

/* --every S is honoured; the token is preserved for the same identity. */
START_TEST(test_schedule_every)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int i;

	fake_keep(&f, 60, &acq, &k);
	k.every_seconds = 7;
	f.stop_after_writes = 5;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 5);
	for (i = 1; i < 5; i++)
		ck_assert_int_eq(f.at[i] - f.at[i - 1], 7);
	ck_assert_str_eq(last.payload.lease_token, f.token);
	lease_store_free(f.st);
}
END_TEST

/* Without a known expiry the first heartbeat is written at once. */
START_TEST(test_first_write_at_once_when_unknown)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int64_t t0;

	fake_open(&f);
	fake_acquire(&f, 30, &acq);
	f.t += 5; /* past the floor (3 s) */
	t0 = (int64_t)f.t;
	keep_init(&k, &f, 0, NULL);
	f.stop_after_writes = 2;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.at[0], t0);
	ck_assert_int_eq(f.at[1], t0 + 10); /* stored ttl 30 → ttl/3 */
	lease_store_free(f.st);
}
END_TEST

/* F21 / §6: transient failures are retried with backoff until the lost
 * deadline expires_at − (kill_grace + 2 s), then the lease is declared lost —
 * before expires_at, never after. */
START_TEST(test_retry_until_lost_deadline)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int64_t expires;
	double lost_at;
	int i, rc;

	fake_keep(&f, 60, &acq, &k);
	f.fail_after_first = 1;
	rc = lease_keep(&last, f.st, "job", &k);
	ck_assert_int_eq(rc, LEASE_EEXPIRED);
	ck_assert_int_eq(f.writes, 1);
	ck_assert_int_ge(f.retries, 4);
	ck_assert_int_eq(f.lost, 1);
	expires = f.exp[0];
	lost_at = (double)expires - (10.0 + 2.0); /* kill_grace = min(10, 60/6) */
	ck_assert(f.lost_at[0] == lost_at);
	/* backoff: delays grow (1, 2, 4, ...) */
	ck_assert_int_eq(f.at[2] - f.at[1], 1);
	ck_assert_int_eq(f.at[3] - f.at[2], 2);
	ck_assert_int_eq(f.at[4] - f.at[3], 4);
	for (i = 1; i < f.n - 1; i++) {
		ck_assert_int_eq(f.ev[i], LEASE_KEEP_RETRY);
		ck_assert((double)f.at[i] < lost_at); /* every retry before the deadline */
	}
	ck_assert_int_eq(f.ev[f.n - 1], LEASE_KEEP_LOST);
	ck_assert((double)f.at[f.n - 1] >= lost_at);
	ck_assert_int_lt(f.at[f.n - 1], expires); /* lost before anyone may take over */
	ck_assert_int_eq(last.status, LEASE_STATUS_EXPIRED);
	ck_assert_int_eq(last.holds_token, 0);
	/* the last retry was close to the deadline (no idle gap of a full backoff) */
	ck_assert((double)f.at[f.n - 2] >= lost_at - 2);
	lease_store_free(f.st);
}
END_TEST

/* A transient failure that clears: the service recovers and keeps going. */
START_TEST(test_retry_then_recover)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;

	fake_keep(&f, 30, &acq, &k);
	f.fail_n_after_first = 6; /* one whole heartbeat (1 + 3 unknown-outcome retries) fails */
	f.stop_after_writes = 3;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 3);
	ck_assert_int_ge(f.retries, 1);
	ck_assert_int_eq(f.lost, 0);
	ck_assert_int_eq(f.ev[f.n - 1], LEASE_KEEP_WRITE);
	lease_store_free(f.st);
}
END_TEST

/* F21 / F13: another party broke the lease — the next heartbeat answers
 * not_holder and the service stops at once (no retries, nothing recreated). */
START_TEST(test_lost_at_once_on_not_holder)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	lease_result st;

	fake_keep(&f, 30, &acq, &k);
	f.break_after_first = 1;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), LEASE_ENOTHOLDER);
	ck_assert_int_eq(f.writes, 1);
	ck_assert_int_eq(f.retries, 0);
	ck_assert_int_eq(f.lost, 1);
	ck_assert_int_eq(f.at[1], f.at[0] + 10); /* found at the next scheduled heartbeat */
	ck_assert_int_eq(lease_status(&st, f.st, "job"), 0);
	ck_assert_int_eq(st.status, LEASE_STATUS_RELEASED);
	lease_store_free(f.st);
}
END_TEST

/* After CMD's heartbeat with --ttl 12 at sleep 2 (from @p t0, the acquire's
 * time): the re-read adopted the earlier stored expiry (LEASE_KEEP_CHANGED,
 * seen within check_seconds) and the next write, "renewed", came before its
 * lost deadline. Returns that write's report index. */
static int check_adopted(const fake *f, int64_t t0)
{
	int64_t tw = t0 + 2; /* CMD's write; the stored expiry 12 s later */
	int i, w = -1;

	ck_assert_int_eq(f->changed, 1);
	for (i = 0; i < f->n; i++)
		if (f->ev[i] == LEASE_KEEP_WRITE)
			w = i;
	ck_assert_int_ge(w, 1);
	ck_assert_int_eq(f->ev[w - 1], LEASE_KEEP_CHANGED);
	ck_assert_int_eq(f->exp[w - 1], tw + 12);
	ck_assert(f->lost_at[w - 1] <= (double)(tw + 12) - 2.0);
	ck_assert_int_le(f->at[w - 1], tw + 1);
	ck_assert(f->at[w] <= f->lost_at[w - 1] - LEASE_KEEP_MARGIN);
	ck_assert_str_eq(f->status[w], "renewed");
	return w;
}

/* Issue 23: the guarded command heartbeats with the token and a shorter TTL
 * (12 s under a 60 s lease, every 20 s). With check_seconds the service sees
 * the earlier stored expiry within a second, reports CHANGED with the stored
 * lost deadline, and its next write lands before that deadline (with its own
 * TTL again); without it the next write came 20 s after the acquire, 8 s past
 * the stored expiry. */
START_TEST(test_check_adopts_earlier_stored_expiry)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int w;

	fake_keep(&f, 60, &acq, &k);
	k.check_seconds = 1;
	f.own_write_at_sleep = 2;
	f.own_ttl = 12;
	f.stop_after_writes = 1;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	w = check_adopted(&f, acq.now);
	ck_assert_int_eq(f.exp[w], f.at[w] + 60);
	lease_store_free(f.st);
}
END_TEST

/* Issue 23: a break under the service is found at the next re-read, not at
 * the next heartbeat an interval later. */
START_TEST(test_check_lost_at_once_on_break)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;

	fake_keep(&f, 60, &acq, &k);
	k.check_seconds = 1;
	f.break_at_sleep = 3;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), LEASE_ENOTHOLDER);
	ck_assert_int_eq(f.writes, 0);
	ck_assert_int_eq(f.lost, 1);
	ck_assert_int_le(f.at[f.n - 1], acq.now + 4);
	ck_assert_int_eq(last.status, LEASE_STATUS_NOT_HOLDER);
	ck_assert_ptr_nonnull(strstr(last.message, "released"));
	ck_assert_str_eq(last.payload.lease_token, "");
	lease_store_free(f.st);
}
END_TEST

/* Issue 27 (run A B … -- CMD): the set keeper heartbeats every member in one
 * write per heartbeat, at the single-lease pace, with the set's one token. */
START_TEST(test_set_keeper_heartbeats_every_member)
{
	fake f;
	lease_keep_options k;
	lease_set_result *acq;
	lease_result last;
	int i;

	acq = set_keeper(&f, &k, 30);
	f.stop_after_writes = 3;
	memstore_counts_reset(f.mem);
	ck_assert_int_eq(lease_keep_set(&last, f.st, set_names, 3, &k), 0);
	ck_assert_int_eq(f.writes, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(f.ev[i], LEASE_KEEP_WRITE);
		ck_assert_str_eq(f.status[i], "renewed");
		ck_assert_int_eq(f.at[i], acq->members[0].now + 10 * (i + 1));
		ck_assert_int_eq(f.exp[i], f.at[i] + 30);
		/* the set write's whole answer, each member's (heartbeat --every A B) */
		ck_assert_uint_eq(f.set_n[i], 3);
		ck_assert_str_eq(f.set_blocker[i], "");
	}
	/* one write per heartbeat: single ref writes never used */
	ck_assert_int_eq(memstore_counts_get(f.mem)->replace_ref, 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(stored_expiry(&f, set_names[i]), f.at[2] + 30);
	ck_assert_str_eq(last.payload.lease_token, f.token);
	lease_store_free(f.st);
	free(acq);
}
END_TEST

/* CMD heartbeats one member with a shorter TTL: the set's lost deadline
 * follows that member's stored expiry (the earliest), and the next set
 * heartbeat comes before it. */
START_TEST(test_set_check_adopts_earlier_member_expiry)
{
	fake f;
	lease_keep_options k;
	lease_set_result *acq;
	lease_result last;
	int64_t t0;
	int w;

	acq = set_keeper(&f, &k, 60);
	t0 = acq->members[0].now;
	k.check_seconds = 1;
	f.target = "db";
	f.own_write_at_sleep = 2;
	f.own_ttl = 12;
	f.stop_after_writes = 1;
	ck_assert_int_eq(lease_keep_set(&last, f.st, set_names, 3, &k), 0);
	/* the set heartbeat lands before db's lost deadline */
	w = check_adopted(&f, t0);
	/* db was due (its short TTL) and written with the run's TTL again */
	ck_assert_int_eq(stored_expiry(&f, "db"), f.at[w] + 60);
	lease_store_free(f.st);
	free(acq);
}
END_TEST

/* A break of one member under the keeper is the whole set lost, at the
 * next re-read; the summary names the member. */
START_TEST(test_set_lost_at_once_on_member_break)
{
	fake f;
	lease_keep_options k;
	lease_set_result *acq;
	lease_result last;

	acq = set_keeper(&f, &k, 60);
	k.check_seconds = 1;
	f.target = "prod";
	f.break_at_sleep = 3;
	ck_assert_int_eq(lease_keep_set(&last, f.st, set_names, 3, &k), LEASE_ENOTHOLDER);
	ck_assert_int_eq(f.writes, 0);
	ck_assert_int_eq(f.lost, 1);
	ck_assert_int_le(f.at[f.n - 1], acq->members[0].now + 4);
	ck_assert_str_eq(last.name, "prod");
	ck_assert_int_eq(last.status, LEASE_STATUS_NOT_HOLDER);
	ck_assert_str_eq(last.payload.lease_token, "");
	ck_assert_uint_eq(f.set_n[f.n - 1], 0); /* a re-read, not a set write */
	lease_store_free(f.st);
	free(acq);
}
END_TEST

/* Without re-reads, the set heartbeat itself finds the broken member: the
 * set write stops (nothing written) and the set is lost. */
START_TEST(test_set_lost_on_heartbeat_of_broken_member)
{
	fake f;
	lease_keep_options k;
	lease_set_result *acq;
	lease_result last;

	acq = set_keeper(&f, &k, 30);
	f.target = "db";
	f.break_after_first = 1;
	ck_assert_int_eq(lease_keep_set(&last, f.st, set_names, 3, &k), LEASE_ENOTHOLDER);
	ck_assert_int_eq(f.writes, 1);
	ck_assert_int_eq(f.lost, 1);
	ck_assert_str_eq(last.name, "db");
	ck_assert_ptr_nonnull(strstr(last.message, "db"));
	/* the lost report carries the set write that stopped, naming db */
	ck_assert_int_eq(f.ev[f.n - 1], LEASE_KEEP_LOST);
	ck_assert_uint_eq(f.set_n[f.n - 1], 3);
	ck_assert_str_eq(f.set_blocker[f.n - 1], "db");
	/* nothing written by the lost heartbeat: job kept its last expiry */
	ck_assert_int_eq(stored_expiry(&f, "job"), f.exp[0]);
	lease_store_free(f.st);
	free(acq);
}
END_TEST

/* A store that cannot write a set: the keeper fails at once, writes nothing. */
START_TEST(test_set_keeper_refused_without_cas_many)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	const char *names[2] = {"job", "db"};

	fake_keep(&f, 30, &acq, &k);
	ck_assert_int_eq(lease_keep_set(&last, f.st, names, 2, &k), LEASE_ECONFIG);
	ck_assert_int_eq(f.failed, 1);
	ck_assert_int_eq(f.writes, 0);
	names[1] = "job";
	ck_assert_int_eq(lease_keep_set(&last, f.st, names, 2, &k), LEASE_EINVALID);
	lease_store_free(f.st);
}
END_TEST

/* F14: a holder that stalled past expires_at gets "expired" — lost. */
START_TEST(test_lost_when_expired)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;

	fake_open(&f);
	fake_acquire(&f, 30, &acq);
	f.t += 31;
	keep_init(&k, &f, 30, NULL);
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), LEASE_EEXPIRED);
	ck_assert_int_eq(f.writes, 0);
	ck_assert_int_eq(f.lost, 1);
	ck_assert_int_eq(last.status, LEASE_STATUS_EXPIRED);
	lease_store_free(f.st);
}
END_TEST

/* §5: a cross-host heartbeat with the current token rotates it (handoff);
 * the service follows the new token, so later heartbeats still land. */
START_TEST(test_handoff_rotation_followed)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;

	fake_keep(&f, 30, &acq, &k);
	k.host = "h2";
	f.stop_after_writes = 3;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 3);
	ck_assert_str_eq(f.status[1], "renewed");
	ck_assert_str_ne(last.payload.lease_token, f.token);
	ck_assert_str_eq(last.payload.host, "h2");
	ck_assert_int_eq(last.payload.transitions, acq.payload.transitions + 1);
	lease_store_free(f.st);
}
END_TEST

/* The stop flag: set before the start, nothing is written; set during a sleep,
 * the service returns 0 without another write. */
START_TEST(test_stop_flag)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int commits;

	fake_keep(&f, 30, &acq, &k);
	commits = memstore_counts_get(f.mem)->write_commit;
	f.stop = 1;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.n, 0);
	ck_assert_int_eq(memstore_counts_get(f.mem)->write_commit, commits);
	f.stop = 0;
	f.stop_after_writes = 1;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 1);
	lease_store_free(f.st);
}
END_TEST

/* Bad options: an interval above ttl/2 is refused before any write (§6
 * ceiling), and so is a malformed token. */
START_TEST(test_invalid_options_write_nothing)
{
	fake f;
	lease_keep_options k;
	lease_result acq, last;
	int64_t every;
	int commits;

	fake_open(&f);
	fake_acquire(&f, 30, &acq);
	commits = memstore_counts_get(f.mem)->write_commit;
	keep_init(&k, &f, 30, &acq);
	k.every_seconds = 16;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), LEASE_EINVALID);
	keep_init(&k, &f, 30, &acq);
	k.lease_token = "short";
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), LEASE_EINVALID);
	ck_assert_int_eq(memstore_counts_get(f.mem)->write_commit, commits);
	ck_assert_int_eq(f.n, 0);
	/* lease_heartbeat_every: default ttl/3, ceiling ttl/2, never replaced */
	ck_assert_int_eq(lease_heartbeat_every(&every, 300, 0), 0);
	ck_assert_int_eq(every, 100);
	ck_assert_int_eq(lease_heartbeat_every(&every, 300, 150), 0);
	ck_assert_int_eq(every, 150);
	ck_assert_int_eq(lease_heartbeat_every(&every, 300, 151), LEASE_EINVALID);
	ck_assert_int_eq(lease_heartbeat_every(&every, 0, 10), LEASE_EINVALID);
	ck_assert_int_eq(lease_heartbeat_every(&every, 5, 0), 0);
	ck_assert_int_eq(every, 1);
	lease_store_free(f.st);
}
END_TEST

/* The default sleep (nanosleep in slices) honours a stop request set by a
 * signal handler promptly, although the next heartbeat is 100 s away. */
static volatile sig_atomic_t alarm_stop;
static void on_alarm(int sig)
{
	(void)sig;
	alarm_stop = 1;
}

START_TEST(test_default_sleep_honours_stop_promptly)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_keep_options k = LEASE_KEEP_OPTIONS_INIT;
	lease_result acq, last;
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	struct itimerval it;
	struct sigaction sa;
	struct timespec t0, t1;
	lease_store *st;
	memstore *mem;
	double took;

	st = storefix_mem(&mem, &o);
	ao.owner = "alice";
	ao.host = "h1";
	ck_assert_int_eq(lease_acquire(&acq, st, "job", &ao), 0);
	storefix_keep_from(&k, "alice", "h1", &acq, k.ttl_seconds, 300);
	k.stop = &alarm_stop;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 300000;
	alarm_stop = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setitimer(ITIMER_REAL, &it, NULL);
	ck_assert_int_eq(lease_keep(&last, st, "job", &k), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert(took >= 0.25 && took < 0.8);
	signal(SIGALRM, SIG_DFL);
	lease_store_free(st);
}
END_TEST

/* Small TTLs the store accepts (issue 13): every heartbeat starts at least
 * one second before the instant `run`'s watchdog would fire — the watchdog
 * takes the lost deadline 1 s early from the report's whole-second store
 * time — so a heartbeat has a second to land; here with the worst alignment
 * (the clock 0.9 s past a whole second). Before LEASE_KEEP_MARGIN the
 * service aimed at exactly that instant (`run --ttl 6 -- sleep 8` exit 4). */
START_TEST(test_small_ttl_lands_before_watchdog)
{
	static const int64_t cases[][2] = {{6, 0}, {7, 3}, {8, 4}, {10, 5}, {12, 0}, {60, 30}};
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		fake f;
		lease_keep_options k;
		lease_result acq, last;
		double wd;
		int i;

		fake_open(&f);
		f.t += 0.9;
		fake_acquire(&f, cases[c][0], &acq);
		keep_init(&k, &f, cases[c][0], &acq);
		k.every_seconds = cases[c][1];
		f.stop_after_writes = 8;
		/* run's watchdog after the acquire (run_keeper.c run_set_deadline) */
		wd = f.t + (lease_lost_at(&acq.payload, cases[c][0]) - (double)acq.now) - 1.0;
		ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
		ck_assert_int_eq(f.lost + f.failed + f.retries, 0);
		ck_assert_int_eq(f.writes, 8);
		for (i = 0; i < f.n; i++) {
			ck_assert_msg(f.real[i] <= wd - 1.0 + 1e-9,
			              "ttl %lld every %lld: heartbeat %d at %.1f, watchdog at %.1f",
			              (long long)cases[c][0], (long long)cases[c][1], i,
			              f.real[i] - 1800000000.0, wd - 1800000000.0);
			if (strcmp(f.status[i], "renewed") == 0)
				wd = f.real[i] + (f.lost_at[i] - (double)f.at[i]) - 1.0;
		}
		lease_store_free(f.st);
	}
}
END_TEST

/* §6: a TTL whose heartbeats cannot land before the lost deadline is refused
 * (`run --ttl 5` exits 64 before anything is written). */
START_TEST(test_keep_check_ttl)
{
	ck_assert_int_eq(lease_keep_check_ttl(5), LEASE_EINVALID);
	ck_assert_int_eq(lease_keep_check_ttl(0), LEASE_EINVALID);
	ck_assert_int_eq(lease_keep_check_ttl(86401), LEASE_EINVALID);
	/* issue 40 B67: TTL 6 to 8 leave a heartbeat less than two attempts
	 * (LEASE_KEEP_MIN_WINDOW) between the floor and the lost deadline */
	ck_assert_int_eq(lease_keep_check_ttl(6), LEASE_EINVALID);
	ck_assert_int_eq(lease_keep_check_ttl(8), LEASE_EINVALID);
	ck_assert_double_eq_tol(lease_keep_window(6), 2.0, 1e-9);
	ck_assert_double_eq_tol(lease_keep_window(9), 4.5, 1e-9);
	ck_assert_int_eq(lease_keep_check_ttl(9), 0);
	ck_assert_int_eq(lease_keep_check_ttl(60), 0);
	ck_assert_int_eq(lease_keep_check_ttl(300), 0);
	ck_assert_int_eq(lease_keep_check_ttl(86400), 0);
}
END_TEST

/* B67 (issue 40): at every TTL `run` accepts (9 s and up) with the default
 * schedule, each heartbeat starts at least LEASE_KEEP_MIN_WINDOW − 1 s (two
 * attempts with a backoff between) before run's watchdog, which fires 1 s
 * before the lost deadline; the clock at its worst alignment (0.9 s past a
 * whole second). At TTL 6 a heartbeat had 1 s: a loaded machine lost the
 * lease. */
START_TEST(test_b67_small_ttl_window)
{
	int64_t ttl;

	for (ttl = 9; ttl <= 61; ttl++) {
		fake f;
		lease_keep_options k;
		lease_result acq, last;
		double wd;
		int i;

		ck_assert_int_eq(lease_keep_check_ttl(ttl), 0);
		fake_open(&f);
		f.t += 0.9;
		fake_acquire(&f, ttl, &acq);
		keep_init(&k, &f, ttl, &acq);
		f.stop_after_writes = 4;
		wd = f.t + (lease_lost_at(&acq.payload, ttl) - (double)acq.now) - 1.0;
		ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
		ck_assert_int_eq(f.lost + f.failed + f.retries, 0);
		for (i = 0; i < f.n; i++) {
			ck_assert_msg(f.real[i] <= wd - (LEASE_KEEP_MIN_WINDOW - 1.0) + 1e-9,
			              "ttl %lld: heartbeat %d at %.1f, watchdog at %.1f",
			              (long long)ttl, i, f.real[i] - 1800000000.0,
			              wd - 1800000000.0);
			wd = f.real[i] + (f.lost_at[i] - (double)f.at[i]) - 1.0;
		}
		lease_store_free(f.st);
	}
}
END_TEST

/* The renewal point (protocol.md §6, issue 39), pure: what a renewal needs
 * (lost margin, LEASE_KEEP_MARGIN, skew, 4 attempts with 1+2+4 s backoff),
 * the store's pace, and the clamp to the floor. */
START_TEST(test_renew_point_rule)
{
	lease_renew_latency l;

	memset(&l, 0, sizeof(l));
	ck_assert_double_eq_tol(lease__renew_latency(&l), 1.0, 1e-9); /* nothing measured */
	lease__renew_note(&l, 0.2);
	ck_assert_double_eq_tol(lease__renew_latency(&l), 1.0, 1e-9);
	lease__renew_note(&l, 2.3);
	ck_assert_double_eq_tol(lease__renew_latency(&l), 3.0, 1e-9); /* the largest, whole */
	for (int i = 0; i < LEASE_RENEW_WINDOW; i++)
		lease__renew_note(&l, 0.1);
	ck_assert_double_eq_tol(lease__renew_latency(&l), 1.0, 1e-9); /* it left the window */
	/* github: TTL 450, skew 5: 12 + 2 + 5 + 7 + 4·1 = 30 s */
	ck_assert_double_eq_tol(lease__renew_need(450, 1.0, 5), 30.0, 1e-9);
	ck_assert_int_eq(lease__renew_pace(1, 450), LEASE_RENEW_PACE_BUDGETED);
	ck_assert_int_eq(lease__renew_pace(0, 300), 100);
	/* the pace first (375 s: 19.2 content-creating requests an hour) */
	ck_assert_double_eq_tol(lease__renew_at(1000, 1450, 450, 375, 1.0, 5), 1375.0, 1e-9);
	/* a slow store (20 s writes): 12+2+5+7+80 = 106 s before the expiry */
	ck_assert_double_eq_tol(lease__renew_at(1000, 1450, 450, 375, 20.0, 5), 1344.0, 1e-9);
	/* an explicit TTL 60 on github: the need, not the pace */
	ck_assert_double_eq_tol(lease__renew_at(1000, 1060, 60, 375, 1.0, 5), 1030.0, 1e-9);
	/* TTL 9: clamped to the floor (1 s after the write) */
	ck_assert_double_eq_tol(lease__renew_lead(9, 1.0, 0), 8.0, 1e-9);
	ck_assert_double_eq_tol(lease__renew_at(1000, 1009, 9, 3, 1.0, 0), 1001.0, 1e-9);
	/* never at or before the write */
	ck_assert_double_eq_tol(lease__renew_at(1000, 1002, 9, 3, 1.0, 0), 1001.0, 1e-9);
}
END_TEST

/* Slow writes: each replace_ref takes slow_s of the fake clock (the store's
 * monotonic clock too). */
static int (*orig_replace)(lease_transport *, const char *, const lease_oid *, const lease_oid *);
static fake *slow_fake;
static double slow_s;

static int slow_replace(lease_transport *t, const char *refname, const lease_oid *old_oid,
                        const lease_oid *new_oid)
{
	slow_fake->t += slow_s;
	return orig_replace(t, refname, old_oid, new_oid);
}

static int64_t fake_mono_ms(void *payload)
{
	return (int64_t)(((fake *)payload)->t * 1000.0);
}

/* A store whose writes count against a budget (its kind "github", skew 5 s:
 * protocol.md §6 "Renewal point", issue 39): the default TTL is 450 s and
 * the keeper renews at the store's pace, 375 s after each write — not ttl/3;
 * once writes are measured slow (20 s), earlier: when 106 s are left. */
START_TEST(test_budgeted_store_renews_at_pace_then_by_latency)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_keep_options k;
	lease_result acq, last;
	lease_transport *t;
	fake f;
	int i;

	memset(&f, 0, sizeof(f));
	f.t = 1800000000.0;
	o.clock.now = fake_now;
	o.clock.mono_ms = fake_mono_ms;
	o.clock.payload = &f;
	t = memstore_new(&f.mem);
	ck_assert_ptr_nonnull(t);
	t->kind = "github";
	t->skew_margin_s = 5;
	orig_replace = t->replace_ref;
	t->replace_ref = slow_replace;
	slow_fake = &f;
	slow_s = 0;
	f.st = storefix_transport(t, &o);
	ck_assert_int_eq(lease_store_ttl_default(f.st), LEASE_TTL_DEFAULT_GITHUB);
	fake_acquire(&f, 0, &acq); /* no --ttl: the store's default */
	ck_assert_int_eq(acq.payload.ttl_seconds, 450);
	keep_init(&k, &f, 0, &acq);
	k.known_ttl_seconds = 450;
	f.stop_after_writes = 4;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 4);
	ck_assert_int_eq(f.at[0], acq.now + 375);
	for (i = 1; i < 4; i++)
		ck_assert_int_eq(f.at[i] - f.at[i - 1], 375);
	/* slow writes: the first one measured, the next renewal plans with it */
	slow_s = 20;
	f.stop = 0;
	f.n = f.writes = 0;
	keep_init(&k, &f, 0, &last);
	k.known_ttl_seconds = 450;
	k.known_now = last.now;
	f.stop_after_writes = 3;
	ck_assert_int_eq(lease_keep(&last, f.st, "job", &k), 0);
	ck_assert_int_eq(f.writes, 3);
	for (i = 1; i < 3; i++)
		ck_assert_int_eq(f.at[i] - 20, f.exp[i - 1] - 106);
	lease_store_free(f.st);
}
END_TEST

/* The service's own sleep (no lease_keep_options.sleep) is the store's: on a
 * store whose options carry a virtual clock (issue 26), three heartbeats of a
 * 300 s TTL (every 100 s) take 200 s of that clock and no real time. */
static int vc_writes;
static volatile sig_atomic_t vc_stop;
static void vc_report(const lease_keep_report *rep, void *payload)
{
	(void)payload;
	if (rep->event == LEASE_KEEP_WRITE && ++vc_writes >= 3)
		vc_stop = 1;
}

START_TEST(test_default_sleep_on_the_store_clock)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_keep_options k = LEASE_KEEP_OPTIONS_INIT;
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	lease_result acq, last;
	struct timespec t0, t1;
	lease_store *st;
	memstore *mem;
	vclock vc;
	char err[256];
	double took;

	vclock_init(&vc, 1800000000);
	vclock_apply(&vc, &o.clock, 1);
	ck_assert_int_eq(lease_store_open_transport(&st, memstore_new(&mem), &o, err, sizeof(err)),
	                 0);
	ao.owner = "alice";
	ao.host = "h1";
	ao.ttl_seconds = 300;
	ck_assert_int_eq(lease_acquire(&acq, st, "job", &ao), 0);
	k.owner = "alice";
	k.host = "h1";
	k.lease_token = acq.payload.lease_token;
	k.known_expires_at = acq.payload.expires_at;
	k.known_ttl_seconds = 300;
	k.known_now = acq.now;
	k.stop = &vc_stop;
	k.report = vc_report;
	vc_writes = 0;
	vc_stop = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(lease_keep(&last, st, "job", &k), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_int_eq(vc_writes, 3);
	/* the first heartbeat one interval after the acquire, then every 100 s */
	ck_assert_int_ge(vc.slept_ms, 300000);
	ck_assert_int_lt(vc.slept_ms, 301000);
	ck_assert_msg(took < 5.0, "the service slept %.1f s of real time", took);
	lease_store_free(st);
}
END_TEST

Suite *heartbeat_suite(void)
{
	return suitefix_suite(
	        "heartbeat", "service", 0, NULL, ONE(test_schedule_default_interval),
	        ONE(test_schedule_every), ONE(test_service_heartbeats_replace),
	        ONE(test_first_write_at_once_when_unknown), ONE(test_retry_until_lost_deadline),
	        ONE(test_retry_then_recover), ONE(test_lost_at_once_on_not_holder),
	        ONE(test_lost_when_expired), ONE(test_handoff_rotation_followed),
	        ONE(test_stop_flag), ONE(test_invalid_options_write_nothing),
	        ONE(test_default_sleep_honours_stop_promptly),
	        ONE(test_small_ttl_lands_before_watchdog), ONE(test_keep_check_ttl),
	        ONE(test_b67_small_ttl_window), ONE(test_renew_point_rule),
	        ONE(test_budgeted_store_renews_at_pace_then_by_latency),
	        ONE(test_check_adopts_earlier_stored_expiry), ONE(test_check_lost_at_once_on_break),
	        ONE(test_set_keeper_heartbeats_every_member),
	        ONE(test_set_check_adopts_earlier_member_expiry),
	        ONE(test_set_lost_at_once_on_member_break),
	        ONE(test_set_lost_on_heartbeat_of_broken_member),
	        ONE(test_set_keeper_refused_without_cas_many),
	        ONE(test_default_sleep_on_the_store_clock), NULL);
}
