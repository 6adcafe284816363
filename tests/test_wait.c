#define _DEFAULT_SOURCE
/* acquire --wait wakes on a change (issue 18, protocol.md §5 "Waiting"): the
 * runtime's wait loop over an injected clock and a scripted wait_change; the
 * wait primitive on a local store; and a waiter on each backend — local
 * (a releasing process), github (the fake server: conditional reads answered
 * 304, counted requests), remote (git daemon) — that gets the lease soon after
 * the release, after one wait, without waiting out a backoff. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lease/wait.h"
#include "reflease.h"
#include "reflease/sys/transport.h"
#include "store/http.h"
#include "support/fakegh.h"
#include "support/gitserver.h"
#include "support/memstore.h"
#include "support/suitefix.h"
#include "support/testrepo.h"
#include "support/vclock.h"

#define T0 1700000000

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static lease_op_options who(const char *owner, const char *token, int64_t ttl)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = owner;
	o.host = "h";
	o.lease_token = token;
	o.ttl_seconds = ttl;
	return o;
}

/* What the waiter's wait_cb saw: the announced waits, in order. */
typedef struct waits {
	double announced[64];
	int n;
	int64_t *clock;      /* injected clock to advance by each announced wait (or NULL) */
	double clock_step_s; /* ... by this much instead, when > 0 */
	volatile int waiting;
	unsigned counted_at_wait; /* github: the fake's counted requests when the wait began */
	fakegh *fk;
	int notify_fd; /* > 0: one byte written here when the wait begins */
} waits;

static int note_wait(double s, void *payload)
{
	waits *w = payload;

	if (w->n < 64)
		w->announced[w->n] = s;
	w->n++;
	if (w->clock && w->clock_step_s > 0)
		*w->clock += (int64_t)w->clock_step_s;
	if (w->fk && !w->waiting)
		w->counted_at_wait = fakegh_counted(w->fk, NULL);
	if (w->notify_fd > 0 && !w->waiting)
		ck_assert_int_eq(write(w->notify_fd, "w", 1), 1);
	__atomic_store_n(&w->waiting, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- the runtime's loop: memstore, injected clock, scripted wait_change ---- */

static int64_t clk;
static int64_t clk_now(void *p)
{
	(void)p;
	return clk;
}

/* The store's monotonic time and sleep (issue 26: its options' clock): a
 * waiter that polls sleeps no real time; store time (clk) is the test's. */
static vclock store_mono = {0, VCLOCK_START_MS, 0, 0};

static lease_store *mem_st;
static lease_transport *mem_t; /* mem_st's transport */
static char mem_tok[LEASE_TOKEN_HEXSZ + 1];
static int wc_calls, wc_timeout_ms, wc_known_present;
static int64_t wc_advance_s; /* store time that passes before the scripted release */
static lease_oid wc_known;
static enum { WC_RELEASE, WC_TIME_PASSES, WC_WALL_STEP } wc_script;
static int64_t wc_step_s; /* WC_WALL_STEP: the wall clock's forward step in the first wait */

/* A wait_change that acts out the world: the holder releases (a change), or
 * the wait runs to its end on the injected clock (no change). */
static int scripted_wait_change(lease_transport *t, const char *refname, int known_present,
                                const lease_oid *known_oid, int timeout_ms)
{
	(void)t;
	ck_assert_str_eq(refname, "refs/leases/l");
	wc_calls++;
	wc_timeout_ms = timeout_ms;
	wc_known_present = known_present;
	wc_known = *known_oid;
	if (wc_script == WC_RELEASE) {
		lease_op_options o = who("alice", mem_tok, 0);
		lease_result r;

		clk += wc_advance_s;
		ck_assert_int_eq(lease_release(&r, mem_st, "l", &o), 0);
		return 1;
	}
	if (wc_script == WC_WALL_STEP && wc_calls == 1)
		clk += wc_step_s; /* an NTP step, a VM resume: the wall clock only */
	clk += (timeout_ms + 999) / 1000;
	vclock_advance(&store_mono, timeout_ms); /* both clocks move */
	return 0;
}

static void mem_open(int watch)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_op_options o = who("alice", NULL, 600);
	lease_transport *t;
	memstore *m;
	lease_result r;

	clk = T0;
	vclock_apply(&store_mono, &so.clock, 0);
	so.clock.now = clk_now;
	t = memstore_new(&m);
	ck_assert_ptr_nonnull(t);
	mem_t = t;
	if (watch)
		t->wait_change = scripted_wait_change;
	ck_assert_int_eq(lease_store_open_transport(&mem_st, t, &so, NULL, 0), 0);
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), 0);
	memcpy(mem_tok, r.payload.lease_token, sizeof(mem_tok));
	wc_calls = 0;
	wc_advance_s = 0;
}

/* A release wakes the waiter at once: one wait, announced as long as the
 * whole wait (no backoff step), ended early; the waiter then acquires. */
START_TEST(test_wait_wakes_on_change)
{
	lease_op_options o = who("bob", NULL, 600);
	lease_result r, held;
	waits w;
	double t0;

	mem_open(1);
	wc_script = WC_RELEASE;
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_acquire(&held, mem_st, "l", &o), LEASE_EHELD);
	o.wait_seconds = 300;
	o.wait_cb = note_wait;
	o.wait_payload = &w;
	t0 = mono();
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
	ck_assert_str_eq(r.payload.owner, "bob");
	ck_assert_int_eq(wc_calls, 1);
	ck_assert_int_eq(wc_known_present, 1);
	ck_assert(lease_oid_equal(&wc_known, &held.oid));
	/* the wait, not a backoff step: on a store whose time is this machine's
	 * clock, in looks at the clock of LEASE_WAIT_CLOCK_LOOK_MS (B69) */
	ck_assert_int_eq(wc_timeout_ms, LEASE_WAIT_CLOCK_LOOK_MS);
	ck_assert_int_eq(w.n, 2);
	ck_assert(w.announced[0] == LEASE_WAIT_CLOCK_LOOK_MS / 1000.0);
	ck_assert(w.announced[1] == 0.0); /* the interruptible wait is over */
	ck_assert(mono() - t0 < 5.0);     /* nothing slept (generous on a loaded machine) */
	lease_store_free(mem_st);
}
END_TEST

/* A stop requested while the wait was on is seen when it ends early: the
 * waiter stops without writing, though the lease became free. */
static int stop_after_wait(double s, void *payload)
{
	(void)payload;
	return s == 0.0;
}

START_TEST(test_wait_stop_seen_after_wake)
{
	lease_op_options o = who("bob", NULL, 600);
	lease_result r;
	lease_ref_state s;

	mem_open(1);
	wc_script = WC_RELEASE;
	o.wait_seconds = 300;
	o.wait_cb = stop_after_wait;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), LEASE_EHELD);
	ck_assert_ptr_nonnull(strstr(r.message, "interrupted"));
	ck_assert_int_eq(wc_calls, 1);
	ck_assert_int_eq(lease_fetch_ref(&s, mem_st, "l"), 0);
	ck_assert_int_eq(s.payload.phase, LEASE_PHASE_RELEASED); /* nothing written by bob */
	ck_assert_str_eq(s.payload.owner, "alice");
	lease_ref_state_clear(&s);
	lease_store_free(mem_st);
}
END_TEST

/* No change: the waiter wakes at the holder's expiry instant (expires_at +
 * skew + 1 on the store clock) and takes the lease over. */
START_TEST(test_wait_wakes_at_expiry)
{
	lease_op_options o = who("bob", NULL, 60);
	lease_result r;

	mem_open(1);
	wc_script = WC_TIME_PASSES;
	clk = T0 + 540; /* the holder's 600 s run out at T0 + 600: 60 s + 1 s ahead */
	o.wait_seconds = 3600;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
	/* 61 s in looks at the clock (B69), the last one to the instant */
	ck_assert_int_eq(wc_calls, 31);
	ck_assert_msg(wc_timeout_ms > 0 && wc_timeout_ms <= 1100, "timeout %d ms", wc_timeout_ms);
	lease_store_free(mem_st);
}
END_TEST

/* Issue 38: the wait reports who is in the way when it begins and every
 * LEASE_WAIT_REPORT_S s after (progress_cb); a wait the report cut short with
 * the ref unchanged waits on (three waits of 60, 60 and 30 s for --wait 150). */
static lease_wait_progress prog[8];
static char prog_name[8][80], prog_owner[8][80];
static int prog_n;

static void note_progress(const lease_wait_progress *p, void *payload)
{
	(void)payload;
	if (prog_n < 8) {
		prog[prog_n] = *p;
		snprintf(prog_name[prog_n], sizeof(prog_name[0]), "%s", p->name);
		snprintf(prog_owner[prog_n], sizeof(prog_owner[0]), "%s@%s", p->owner, p->host);
	}
	prog_n++;
}

START_TEST(test_wait_progress_reports)
{
	lease_op_options o;
	lease_result r;
	int i;

	mem_open(1);
	wc_script = WC_TIME_PASSES;
	prog_n = 0;
	o = who("bob", NULL, 60);
	o.progress_cb = note_progress;
	o.wait_seconds = 150;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(prog_n, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(prog_name[i], "l");
		ck_assert_str_eq(prog_owner[i], "alice@h");
		ck_assert_int_eq(prog[i].until, T0 + 600);
		ck_assert_int_eq(prog[i].queue_position, 0);
		ck_assert_msg(prog[i].waited_seconds >= 60.0 * i - 0.5 &&
		                      prog[i].waited_seconds <= 60.0 * i + 1.5,
		              "report %d after %.3f s", i, prog[i].waited_seconds);
	}
	ck_assert_int_eq(wc_calls, 150 / (LEASE_WAIT_CLOCK_LOOK_MS / 1000)); /* no extra round */
	ck_assert_msg(strstr(r.message, "still held after waiting 150 s"), "%s", r.message);
	lease_store_free(mem_st);
}
END_TEST

/* A transport that cannot watch is polled at a steady ttl_min/20 s: the
 * pace never grows however long the wait. */
START_TEST(test_wait_steady_without_watch)
{
	lease_op_options o = who("bob", NULL, 600);
	lease_result r;
	waits w;
	int i;

	mem_open(0);
	memset(&w, 0, sizeof(w));
	w.clock = &clk;
	w.clock_step_s = 20; /* store time passes quickly; the polls' sleeps are virtual */
	o.wait_seconds = 120;
	o.wait_cb = note_wait;
	o.wait_payload = &w;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), LEASE_EHELD);
	ck_assert_ptr_nonnull(strstr(r.message, "still held"));
	ck_assert_int_ge(w.n, 5);
	for (i = 0; i < w.n && i < 64; i++)
		ck_assert_msg(w.announced[i] == 0.25, "wait %d: %g s", i, w.announced[i]);
	lease_store_free(mem_st);
}
END_TEST

/* A fair waiter's wait is kept in its acquire commit (protocol.md §2
 * queued_at/queue_position, §5 "Fair waiting"): bob queues at T0 behind
 * alice's hold, alice releases 75 s later (injected clock), and bob's
 * acquire records queued_at T0 and position 1; history shows the wait of
 * that acquire only — not of alice's plain acquire, bob's heartbeat or his
 * release. */
START_TEST(test_fair_wait_in_history)
{
	lease_op_options o = who("bob", NULL, 600), hb;
	lease_result r, h2;
	lease_history h;

	mem_open(1);
	wc_script = WC_RELEASE;
	wc_advance_s = 75;
	o.wait_seconds = 300;
	o.fair = 1;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), 0);
	ck_assert_str_eq(r.payload.owner, "bob");
	ck_assert_int_eq(wc_calls, 1);
	ck_assert_int_eq(r.waited_seconds, 75);
	ck_assert(r.payload.has_queued_at);
	ck_assert_int_eq(r.payload.queued_at, T0);
	ck_assert_int_eq(r.payload.queue_position, 1);
	ck_assert_int_eq(r.payload.acquired_at, T0 + 75);
	/* a heartbeat of bob's tenure is no acquire: it carries no wait */
	clk += 100;
	hb = who("bob", r.payload.lease_token, 0);
	ck_assert_int_eq(lease_heartbeat(&h2, mem_st, "l", &hb), 0);
	ck_assert(!h2.payload.has_queued_at);

	ck_assert_int_eq(lease_history_read(&h, mem_st, "l", 0, 0), 0);
	ck_assert_uint_eq(h.count, 4); /* heartbeat, bob's acquire, release, alice's acquire */
	ck_assert_int_eq(h.items[0].op, LEASE_OP_HEARTBEAT);
	ck_assert(!h.items[0].has_wait);
	ck_assert_int_eq(h.items[1].op, LEASE_OP_ACQUIRE);
	ck_assert(h.items[1].has_wait);
	ck_assert_int_eq(h.items[1].waited_seconds, 75);
	ck_assert_str_eq(h.items[1].payload.owner, "bob");
	ck_assert_int_eq(h.items[1].payload.queued_at, T0);
	ck_assert_int_eq(h.items[1].payload.queue_position, 1);
	ck_assert_int_eq(h.items[2].op, LEASE_OP_RELEASE);
	ck_assert(!h.items[2].has_wait);
	ck_assert_int_eq(h.items[3].op, LEASE_OP_ACQUIRE); /* alice's plain acquire */
	ck_assert(!h.items[3].has_wait && !h.items[3].payload.has_queued_at);
	lease_history_free(&h);

	/* the release of a fair acquire carries no wait either */
	ck_assert_int_eq(lease_release(&h2, mem_st, "l", &hb), 0);
	ck_assert(!h2.payload.has_queued_at);
	lease_store_free(mem_st);
}
END_TEST

/* B68, B69 (issue 40): a forward wall-clock step during the wait, past the
 * holder's expiry and past --wait, is noticed at its next look at the clock
 * (not after the holder's expiry counted on the monotonic clock from before
 * the step), and the wait's last answer is the store's: the expired lease is
 * taken — by a plain waiter (B69) and by a fair waiter at the head of the
 * queue (B68) — though the budget is spent on the store clock. */
static void wall_step_taken(int fair)
{
	lease_op_options o = who("bob", NULL, 60);
	lease_result r;
	int64_t m0;

	mem_open(1);
	wc_script = WC_WALL_STEP;
	wc_step_s = 700; /* alice's 600 s are over, and bob's --wait 120 */
	o.wait_seconds = 120;
	o.fair = fair;
	m0 = vclock_mono_ms(&store_mono);
	ck_assert_msg(lease_acquire(&r, mem_st, "l", &o) == 0, "%s", r.message);
	ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
	ck_assert_str_eq(r.payload.owner, "bob");
	ck_assert_int_eq(wc_calls, 1); /* the step was seen after that one look */
	ck_assert_msg(vclock_mono_ms(&store_mono) - m0 <= LEASE_WAIT_CLOCK_LOOK_MS,
	              "taken %lld ms after the wait began",
	              (long long)(vclock_mono_ms(&store_mono) - m0));
	lease_store_free(mem_st);
}

START_TEST(test_B69_wall_step_plain_waiter_takes)
{
	wall_step_taken(0);
}
END_TEST

START_TEST(test_B68_wall_step_fair_waiter_takes)
{
	wall_step_taken(1);
}
END_TEST

/* B68, B69: a step that does not reach the holder's expiry but spends
 * --wait ends the wait with the store's answer: still held (exit 3), the
 * holder named. */
START_TEST(test_B68_wall_step_still_held)
{
	lease_op_options o = who("bob", NULL, 60);
	lease_result r;
	int fair;

	for (fair = 0; fair < 2; fair++) {
		mem_open(1);
		wc_script = WC_WALL_STEP;
		wc_step_s = 300; /* --wait 120 spent; alice holds until T0 + 600 */
		o.wait_seconds = 120;
		o.fair = fair;
		ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), LEASE_EHELD);
		ck_assert_msg(strstr(r.message, "still held after waiting 120 s"), "%s", r.message);
		ck_assert_msg(wc_calls <= 2, "%d waits", wc_calls);
		lease_store_free(mem_st);
	}
}
END_TEST

/* B69: the other waiter of the same step met the winner's ref lock at the end
 * of its wait. Here carol takes the expired lease in the step, and bob's
 * write finds the ref locked (LEASE_ELOCKED, past the lock wait): the answer
 * is carol's hold, "held by carol", LEASE_EHELD (exit 3) — not "ref lock held
 * by another writer" (exit 75). */
static int (*real_replace)(lease_transport *t, const char *refname, const lease_oid *old_oid,
                           const lease_oid *new_oid);

/* bob's write meets carol's: carol's lands, bob's finds the ref locked */
static int carol_then_locked(lease_transport *t, const char *refname, const lease_oid *old_oid,
                             const lease_oid *new_oid)
{
	lease_op_options o = who("carol", NULL, 600);
	lease_result r;

	(void)refname;
	(void)old_oid;
	(void)new_oid;
	t->replace_ref = real_replace;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), 0);
	t->replace_ref = carol_then_locked;
	return LEASE_ELOCKED;
}

static int step_only(lease_transport *t, const char *refname, int known_present,
                     const lease_oid *known_oid, int timeout_ms)
{
	(void)refname;
	(void)known_present;
	(void)known_oid;
	wc_calls++;
	clk += 700; /* alice's 600 s and bob's --wait 120 are over */
	vclock_advance(&store_mono, timeout_ms);
	t->replace_ref = carol_then_locked;
	return 0;
}

START_TEST(test_B69_lock_at_end_is_held_by_winner)
{
	lease_op_options o = who("bob", NULL, 60);
	lease_result r;

	mem_open(1);
	real_replace = mem_t->replace_ref;
	mem_t->wait_change = step_only;
	o.wait_seconds = 120;
	ck_assert_int_eq(lease_acquire(&r, mem_st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_str_eq(r.payload.owner, "carol");
	ck_assert_msg(strstr(r.message, "held by carol"), "%s", r.message);
	ck_assert_msg(!strstr(r.message, "ref lock"), "%s", r.message);
	ck_assert_int_eq(wc_calls, 1);
	mem_t->replace_ref = real_replace;
	lease_store_free(mem_st);
}
END_TEST

/* ---- the wait primitive on a local store --------------------------------- */

START_TEST(test_local_wait_primitive)
{
	char repo[512], spec[600], err[256];
	lease_store *st;
	lease_op_options o = who("alice", NULL, 600);
	lease_result r;
	lease_oid other;
	double t0, dt;

	ck_assert_int_eq(testrepo_make(repo, sizeof(repo), TESTREPO_BARE), 0);
	snprintf(spec, sizeof(spec), "local:%s", repo);
	ck_assert_int_eq(lease_store_open(&st, spec, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_store_can_watch(st), 1);
	ck_assert_int_eq(lease_acquire(&r, st, "l", &o), 0);
	/* unchanged: the whole timeout passes */
	t0 = mono();
	ck_assert_int_eq(lease_wait_ref_change(st, "l", 1, &r.oid, 400), 0);
	dt = mono() - t0;
	ck_assert_msg(dt >= 0.39, "returned after %.3f s", dt);
	/* what the caller knows is already stale: at once */
	memset(&other, 0x11, sizeof(other));
	t0 = mono();
	ck_assert_int_eq(lease_wait_ref_change(st, "l", 1, &other, 60000), 1);
	ck_assert_int_eq(lease_wait_ref_change(st, "l", 0, NULL, 60000), 1);
	ck_assert(mono() - t0 < 10.0);
	ck_assert_int_eq(lease_wait_ref_change(st, "../x", 1, &r.oid, 10), LEASE_EINVALID);
	lease_store_free(st);
	testrepo_remove(repo);
}
END_TEST

/* ---- a waiter on each backend ---------------------------------------------- */

/* The holder on its own store handle: releases once the waiter waits (and,
 * for github, once the waiter's conditional reads got @p need_304 answers
 * 304), then notes when its release returned. */
typedef struct releaser {
	lease_store *st;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	waits *w;
	fakegh *fk;
	unsigned need_304;
	unsigned counted_at_release;
	double released_at;
	int rc;
} releaser;

static void *release_when_waiting(void *arg)
{
	releaser *rl = arg;
	lease_op_options o = who("alice", rl->tok, 0);
	lease_result r;
	double give_up = mono() + 120;
	unsigned nm = 0;

	while (!__atomic_load_n(&rl->w->waiting, __ATOMIC_SEQ_CST) && mono() < give_up)
		usleep(2000);
	while (rl->fk && mono() < give_up) {
		rl->counted_at_release = fakegh_counted(rl->fk, &nm);
		if (nm >= rl->need_304)
			break;
		usleep(20000);
	}
	rl->rc = lease_release(&r, rl->st, "l", &o);
	rl->released_at = mono();
	return NULL;
}

/* One wait for a change (announced as the whole wait), no backoff steps —
 * on a store whose time is this machine's clock (@p sliced) in looks at
 * the clock of LEASE_WAIT_CLOCK_LOOK_MS each (B69) — ended early by the
 * change (announced 0). */
static void assert_one_wait(const waits *w, int sliced)
{
	int i;

	/* sliced: the change may also be seen by the read after a look */
	ck_assert_msg(w->n >= 1 && w->n <= 64 && (sliced || w->n == 2) &&
	                      (sliced || w->announced[1] == 0.0),
	              "%d waits", w->n);
	for (i = 0; i < w->n; i++)
		ck_assert_msg(sliced ? w->announced[i] == LEASE_WAIT_CLOCK_LOOK_MS / 1000.0 ||
		                               (i == w->n - 1 && w->announced[i] == 0.0)
		                     : i == 1 || w->announced[i] > 290.0,
		              "wait %d: %g s", i, w->announced[i]);
}

/* Waiter on @p wst, holder on @p hst: the holder acquires, the waiter waits
 * (up to 300 s), the holder releases; returns the handoff time, s. */
static double handoff(lease_store *wst, lease_store *hst, fakegh *fk, unsigned need_304, waits *w,
                      releaser *rl)
{
	lease_op_options ho = who("alice", NULL, 600), wo = who("bob", NULL, 600);
	lease_result r;
	pthread_t th;
	double done;
	int rc;

	memset(rl, 0, sizeof(*rl));
	memset(w, 0, sizeof(*w));
	w->fk = fk;
	rl->st = hst;
	rl->w = w;
	rl->fk = fk;
	rl->need_304 = need_304;
	rc = lease_acquire(&r, hst, "l", &ho);
	ck_assert_msg(rc == 0, "holder: %s %s", lease_status_name(r.status), r.message);
	memcpy(rl->tok, r.payload.lease_token, sizeof(rl->tok));
	wo.wait_seconds = 300;
	wo.wait_cb = note_wait;
	wo.wait_payload = w;
	ck_assert_int_eq(pthread_create(&th, NULL, release_when_waiting, rl), 0);
	rc = lease_acquire(&r, wst, "l", &wo);
	done = mono();
	pthread_join(th, NULL);
	ck_assert_int_eq(rl->rc, 0);
	ck_assert_msg(rc == 0, "waiter: %s %s", lease_status_name(r.status), r.message);
	ck_assert_str_eq(r.payload.owner, "bob");
	assert_one_wait(w, fk == NULL);
	return done - rl->released_at;
}

/* Local: the holder is another process; the waiter wakes on the ref's
 * inotify event (target: 0.25 s; bounded generously for a loaded machine). */
START_TEST(test_local_waiter_gets_release)
{
	char repo[512], spec[600], err[256];
	lease_store *wst, *hst;
	lease_op_options ho = who("alice", NULL, 600), wo = who("bob", NULL, 600);
	lease_result r;
	int go[2], back[2], ws;
	double released_at = 0, done;
	waits w;
	pid_t pid;
	char c;

	ck_assert_int_eq(testrepo_make(repo, sizeof(repo), TESTREPO_BARE), 0);
	snprintf(spec, sizeof(spec), "local:%s", repo);
	ck_assert_int_eq(lease_store_open(&hst, spec, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_acquire(&r, hst, "l", &ho), 0);
	ho.lease_token = r.payload.lease_token;
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(back), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* the holder: release once the waiter waits */
		lease_result cr;
		double t;
		close(go[1]);
		close(back[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(10);
		if (lease_release(&cr, hst, "l", &ho) != 0)
			_exit(11);
		t = mono();
		_exit(write(back[1], &t, sizeof(t)) == (ssize_t)sizeof(t) ? 0 : 12);
	}
	close(go[0]);
	close(back[1]);
	ck_assert_int_eq(lease_store_open(&wst, spec, NULL, err, sizeof(err)), 0);
	memset(&w, 0, sizeof(w));
	wo.wait_seconds = 300;
	wo.wait_cb = note_wait;
	wo.wait_payload = &w;
	w.notify_fd = go[1]; /* the holder releases once we wait */
	ck_assert_int_eq(lease_acquire(&r, wst, "l", &wo), 0);
	done = mono();
	ck_assert_int_eq(read(back[0], &released_at, sizeof(released_at)),
	                 (ssize_t)sizeof(released_at));
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
	ck_assert_msg(done - released_at < 2.0, "handoff %.3f s", done - released_at);
	assert_one_wait(&w, 1);
	lease_store_free(wst);
	lease_store_free(hst);
	testrepo_remove(repo);
}
END_TEST

/* GitHub (fake server): the waiter polls the ref with conditional reads; the
 * unchanged ref answers 304, which is not counted; the release is seen at the
 * next poll (~2 s) and the waiter acquires (target 5 s; bound 15 s). */
START_TEST(test_github_waiter_conditional_reads)
{
	fakegh_options fo;
	fakegh *fk;
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_store *wst, *hst;
	char err[512];
	releaser rl;
	waits w;
	unsigned nm = 0;
	double h;

	memset(&fo, 0, sizeof(fo));
	ck_assert_int_eq(fakegh_start(&fk, &fo), 0);
	so.github_api_url = fakegh_url(fk);
	so.github_token = "t0k";
	so.timeout_s = 30;
	ck_assert_msg(lease_store_open(&wst, "github:octo/leases", &so, err, sizeof(err)) == 0,
	              "%s", err);
	ck_assert_int_eq(lease_store_can_watch(wst), 1);
	ck_assert_int_eq(lease_store_open(&hst, "github:octo/leases", &so, err, sizeof(err)), 0);
	h = handoff(wst, hst, fk, 2, &w, &rl);
	ck_assert_msg(h < 15.0, "handoff %.3f s", h);
	fakegh_counted(fk, &nm);
	ck_assert_uint_ge(nm, 2);
	/* while waiting: one counted read (the first, unconditional) at most */
	ck_assert_msg(rl.counted_at_release - w.counted_at_wait <= 1,
	              "%u counted requests while waiting",
	              rl.counted_at_release - w.counted_at_wait);
	lease_store_free(wst);
	lease_store_free(hst);
	fakegh_stop(fk);
}
END_TEST

/* The HTTP layer's conditional GET against the fake server: the ETag of a
 * 200 sent back gets 304 (not counted), for that one request only; a value
 * that could inject a header is not sent. */
START_TEST(test_http_conditional_get)
{
	fakegh_options fo;
	fakegh *fk;
	lease_http *h;
	lease_http_response r;
	char url[300], err[256], etag[128];
	unsigned nm = 0, c0;

	memset(&fo, 0, sizeof(fo));
	ck_assert_int_eq(fakegh_start(&fk, &fo), 0);
	ck_assert_int_eq(lease__http_new(&h, "t0k", err, sizeof(err)), 0);
	snprintf(url, sizeof(url), "%s/repos/octo/leases/git/ref/heads/main", fakegh_url(fk));
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 10000), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(strncmp(r.etag, "W/\"", 3) == 0, "etag '%s'", r.etag);
	snprintf(etag, sizeof(etag), "%s", r.etag);
	lease__http_response_clear(&r);
	c0 = fakegh_counted(fk, NULL);
	lease__http_set_if_none_match(h, etag);
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 10000), 0);
	ck_assert_int_eq(r.status, 304);
	ck_assert_str_eq(r.etag, etag); /* a 304 carries the ETag too */
	lease__http_response_clear(&r);
	ck_assert_uint_eq(fakegh_counted(fk, &nm), c0);
	ck_assert_uint_eq(nm, 1);
	/* once only: the next GET is unconditional */
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 10000), 0);
	ck_assert_int_eq(r.status, 200);
	lease__http_response_clear(&r);
	/* a value with a line break is refused (never sent as a header) */
	lease__http_set_if_none_match(h, "W/\"x\"\r\nX-Evil: 1");
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 10000), 0);
	ck_assert_int_eq(r.status, 200);
	lease__http_response_clear(&r);
	/* another ref's ETag does not match */
	lease__http_set_if_none_match(h, "W/\"0000\"");
	ck_assert_int_eq(lease__http_request(h, &r, "GET", url, NULL, 10000), 0);
	ck_assert_int_eq(r.status, 200);
	lease__http_response_clear(&r);
	ck_assert_uint_eq(fakegh_counted(fk, &nm), c0 + 3);
	ck_assert_uint_eq(nm, 1);
	lease__http_free(h);
	fakegh_stop(fk);
}
END_TEST

/* remote (git daemon): ls-remote every ~2 s (bound 15 s). */
START_TEST(test_remote_waiter_gets_release)
{
	gitserver srv;
	lease_store *wst, *hst;
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	char url[800], spec[900], cache[700], err[1024];
	releaser rl;
	waits w;
	double h;

	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	ck_assert_msg(gitserver_start(&srv) == 0, "git servers did not start");
	snprintf(cache, sizeof(cache), "%s/cache/reflease", srv.root);
	so.cache_dir = cache;
	ck_assert_int_eq(gitserver_repo(&srv, "w", NULL, 0), 0);
	gitserver_url(&srv, GITSERVER_GIT, "w", url, sizeof(url));
	snprintf(spec, sizeof(spec), "remote:%s", url);
	ck_assert_msg(lease_store_open(&wst, spec, &so, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(lease_store_open(&hst, spec, &so, err, sizeof(err)), 0);
	h = handoff(wst, hst, NULL, 0, &w, &rl);
	ck_assert_msg(h < 15.0, "handoff %.3f s", h);
	lease_store_free(wst);
	lease_store_free(hst);
	gitserver_stop(&srv);
}
END_TEST

/* Issue 38: waiters on github cost what a plain waiter costs — a slot
 * waiter (`acquire db --slots 3 --wait 20` behind 3 holders) makes at most 4
 * counted requests beyond its 304s (the issue measured 125: a listing and 3
 * reads each second), and a set waiter behind one held member at most 3.
 * The waiter's store runs on a virtual clock: its 20 s pass in no real time. */
typedef struct gh_pair {
	fakegh *fk;
	lease_store *hst, *wst;
	vclock vc;
} gh_pair;

static void gh_pair_open(gh_pair *p)
{
	fakegh_options fo;
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	char err[512];

	memset(&fo, 0, sizeof(fo));
	ck_assert_int_eq(fakegh_start(&p->fk, &fo), 0);
	so.github_api_url = fakegh_url(p->fk);
	so.github_token = "t0k";
	so.timeout_s = 30;
	ck_assert_msg(lease_store_open(&p->hst, "github:octo/leases", &so, err, sizeof(err)) == 0,
	              "%s", err);
	vclock_init(&p->vc, 0);
	vclock_apply(&p->vc, &so.clock, 1);
	ck_assert_int_eq(lease_store_open(&p->wst, "github:octo/leases", &so, err, sizeof(err)), 0);
}

/* The fake's counts by endpoint, for a failed budget's message. */
static const char *gh_counts(fakegh *fk)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
	         "ref GET %u, commit GET %u, matching %u, gql query %u, gql mutation %u, "
	         "commit POST %u, ref create %u, ref patch %u",
	         fakegh_count(fk, FAKEGH_REF_GET), fakegh_count(fk, FAKEGH_COMMIT_GET),
	         fakegh_count(fk, FAKEGH_MATCHING), fakegh_count(fk, FAKEGH_GQL_QUERY),
	         fakegh_count(fk, FAKEGH_GQL_MUTATION), fakegh_count(fk, FAKEGH_COMMIT_POST),
	         fakegh_count(fk, FAKEGH_REF_CREATE), fakegh_count(fk, FAKEGH_REF_PATCH));
	return buf;
}

/* The fake's counts since fakegh_reset_counts(): at most @p budget counted
 * requests and at least 5 free 304s (the waiter polled conditionally). */
static void gh_assert_budget(gh_pair *p, unsigned budget)
{
	unsigned nm = 0, counted = fakegh_counted(p->fk, &nm);

	ck_assert_msg(counted <= budget, "%u counted requests (%u 304s; %s)", counted, nm,
	              gh_counts(p->fk));
	ck_assert_msg(nm >= 5, "only %u conditional polls answered 304", nm);
}

/* gh_pair_open(), then alice holds @p name for 600 s on the holder's store
 * and the fake's counts start from 0: what a waiter sends from here on. */
static void gh_pair_held(gh_pair *p, const char *name)
{
	lease_op_options o = who("alice", NULL, 600);
	lease_result r;

	gh_pair_open(p);
	ck_assert_int_eq(lease_acquire(&r, p->hst, name, &o), 0);
	fakegh_reset_counts(p->fk);
}

static void gh_pair_close(gh_pair *p)
{
	lease_store_free(p->wst);
	lease_store_free(p->hst);
	fakegh_stop(p->fk);
}

START_TEST(test_github_slot_waiter_budget)
{
	static const char *const owners[] = {"alice", "bob", "carol"};
	lease_op_options o;
	lease_result r;
	gh_pair p;
	int64_t t0;
	int i;

	gh_pair_open(&p);
	for (i = 0; i < 3; i++) {
		o = who(owners[i], NULL, 600);
		ck_assert_int_eq(lease_slots_acquire(&r, p.hst, "db", 3, &o), 0);
	}
	fakegh_reset_counts(p.fk);
	o = who("dave", NULL, 60);
	o.wait_seconds = 60; /* issue 39's budget: 60 s behind 3 holders, at most 4 */
	t0 = vclock_mono_ms(&p.vc);
	ck_assert_msg(lease_slots_acquire(&r, p.wst, "db", 3, &o) == LEASE_EHELD, "%s", r.message);
	ck_assert_msg(vclock_mono_ms(&p.vc) - t0 >= 60000, "waited %lld ms",
	              (long long)(vclock_mono_ms(&p.vc) - t0));
	ck_assert_msg(strstr(r.message, "still held after waiting 60 s"), "%s", r.message);
	gh_assert_budget(&p, 4);
	gh_pair_close(&p);
}
END_TEST

START_TEST(test_github_set_waiter_budget)
{
	static const char *const names[] = {"a", "b", "c"};
	lease_set_result sr;
	lease_op_options o;
	gh_pair p;

	gh_pair_held(&p, "b");
	o = who("dave", NULL, 60);
	o.wait_seconds = 20;
	ck_assert_int_eq(lease_acquire_set(&sr, p.wst, names, 3, &o), LEASE_EHELD);
	gh_assert_budget(&p, 3);
	gh_pair_close(&p);
}
END_TEST

/* Issue 39 item 3: a fair waiter behind a holder for 120 s, its ticket
 * renewed at the store's budgeted pace (not ttl/3: no renewal in 120 s),
 * polls conditionally through the whole wait (longer than --timeout) and
 * leaves no ticket behind, in at most 10 counted requests beyond its 304s
 * (the bound). It sends 9: taking the ticket in one write 4 (the
 * queue listing; the keyed ticket: commit, create, verify), the queue
 * listing after it 1 (its own commit not read again), the lease read 1,
 * the first poll 1 (no validator yet), dropping the ticket 2 (updateRefs,
 * verify; the lease read gave the repository id). */
START_TEST(test_github_fair_waiter_budget)
{
	lease_op_options o;
	lease_result r;
	lease_queue q;
	gh_pair p;
	int64_t t0;

	gh_pair_held(&p, "db");
	o = who("dave", NULL, 0); /* the store's default TTL (450 s on github) */
	o.wait_seconds = 120;
	o.fair = 1;
	t0 = vclock_mono_ms(&p.vc);
	ck_assert_msg(lease_acquire(&r, p.wst, "db", &o) == LEASE_EHELD, "%s", r.message);
	ck_assert_msg(vclock_mono_ms(&p.vc) - t0 >= 120000, "waited %lld ms",
	              (long long)(vclock_mono_ms(&p.vc) - t0));
	ck_assert_msg(strstr(r.message, "still held after waiting 120 s"), "%s", r.message);
	gh_assert_budget(&p, 10);
	memset(&q, 0, sizeof(q));
	ck_assert_int_eq(lease_queue_read(&q, p.hst, "db"), 0);
	ck_assert_msg(q.count == 0, "%zu tickets left", q.count);
	lease_queue_clear(&q);
	gh_pair_close(&p);
}
END_TEST

Suite *wait_suite(void)
{
	Suite *s = suite_create("wait");

	suitefix_add(s, "runtime", 0, NULL, ONE(test_wait_wakes_on_change),
	             ONE(test_wait_wakes_at_expiry), ONE(test_wait_progress_reports),
	             ONE(test_wait_stop_seen_after_wake), ONE(test_wait_steady_without_watch),
	             ONE(test_fair_wait_in_history), ONE(test_local_wait_primitive),
	             ONE(test_http_conditional_get), ONE(test_B69_wall_step_plain_waiter_takes),
	             ONE(test_B68_wall_step_fair_waiter_takes), ONE(test_B68_wall_step_still_held),
	             ONE(test_B69_lock_at_end_is_held_by_winner), NULL);
	suitefix_add(s, "backends", 240, NULL, ONE(test_local_waiter_gets_release),
	             ONE(test_github_waiter_conditional_reads),
	             ONE(test_remote_waiter_gets_release), ONE(test_github_slot_waiter_budget),
	             ONE(test_github_set_waiter_budget), ONE(test_github_fair_waiter_budget), NULL);
	return s;
}
