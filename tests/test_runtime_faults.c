/* The runtime's (runtime.c's) paths the other suites leave out: a fair
 * waiter queued behind an earlier ticket (protocol.md §5 "Fair waiting":
 * the bakery rule holds a free lease for the ticket ahead; the wait ends
 * by the ticket's change, the caller's stop, or the wait running out; a
 * reaped ticket is taken again keeping the waiter's place time). Over the
 * in-memory transport with an injected store clock and a scripted
 * wait_change: no test sleeps. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/ticket.h"
#include "reflease.h"
#include "support/memstore.h"

#define T0 1800000000

static lease_store *st;
static memstore *M;
static int64_t clk;

static int64_t clk_now(void *p)
{
	(void)p;
	return clk;
}

/* The scripted wait_change: the refs watched, in order; a wait ends at
 * once (1) when the script changed something, else the time passes on the
 * injected clock and nothing changed (0). */
static char watched[8][128];
static int waits_seen, change_pending;

static int scripted_wait_change(lease_transport *t, const char *refname, int known_present,
                                const lease_oid *known_oid, int timeout_ms)
{
	(void)t;
	(void)known_present;
	(void)known_oid;
	if (waits_seen < 8)
		snprintf(watched[waits_seen], sizeof(watched[waits_seen]), "%s", refname);
	waits_seen++;
	if (change_pending) {
		change_pending = 0;
		return 1;
	}
	clk += (timeout_ms + 999) / 1000;
	return 0;
}

static void open_store(void)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t;
	char err[256] = "";

	clk = T0;
	waits_seen = change_pending = 0;
	so.clock.now = clk_now;
	ck_assert_ptr_nonnull(t = memstore_new(&M));
	t->wait_change = scripted_wait_change;
	ck_assert_msg(lease_store_open_transport(&st, t, &so, err, sizeof(err)) == 0, "%s", err);
}

static lease_op_options who(const char *owner, int64_t ttl)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = owner;
	o.host = "h";
	o.ttl_seconds = ttl;
	return o;
}

/* What the fair waiter's wait_cb does at each announced wait (sleep > 0). */
typedef struct script {
	const lease_result *out; /* the waiter's result, as it stands at the wait */
	char said[8][sizeof(((lease_result *)0)->message)]; /* out->message at each wait */
	int n;                                              /* announced waits */
	int stop_at;           /* stop the wait at this one (1 = the first) */
	int drop_at;           /* drop bob's ticket at this one (a change) */
	int reap_own_at;       /* delete the waiter's own ticket at this one */
	lease_own_ticket *bob; /* the ticket ahead */
} script;

/* The live tickets of lease l, and the one of @p owner into @p out. */
static size_t tickets(const char *owner, lease_ticket *out)
{
	lease_queue q;
	size_t i, n = 0;

	ck_assert_int_eq(lease_queue_read(&q, st, "l"), 0);
	for (i = 0; i < q.count; i++) {
		n++;
		if (owner && out && strcmp(q.items[i].owner, owner) == 0)
			*out = q.items[i];
	}
	lease_queue_clear(&q);
	return n;
}

static int on_wait(double s, void *payload)
{
	script *w = payload;

	if (s <= 0)
		return 0; /* the look after a wait that ended early */
	if (w->n < 8)
		snprintf(w->said[w->n], sizeof(w->said[w->n]), "%s", w->out->message);
	w->n++;
	if (w->n == w->drop_at) {
		lease_ticket_drop(w->bob, st);
		change_pending = 1;
	}
	if (w->n == w->reap_own_at) {
		lease_ticket own;

		memset(&own, 0, sizeof(own));
		ck_assert_uint_eq(tickets("alice", &own), 2);
		ck_assert_int_eq(memstore_set_ref(M, own.refname, NULL), 0);
	}
	return w->n == w->stop_at;
}

/* Bob's ticket for lease l, taken first. */
static void bob_queues(lease_own_ticket *bob)
{
	memset(bob, 0, sizeof(*bob));
	ck_assert_int_eq(lease_ticket_take(bob, st, "l", "bob", "h", 300, 0), 0);
	ck_assert_int_eq(bob->held, 1);
}

/* The lease is free, but bob queued first: alice, waiting fairly, does not
 * take it; she watches bob's ticket and takes the lease once it is gone,
 * recording her place (second) and the time she queued. */
START_TEST(fair_waiter_lets_earlier_ticket_go_first)
{
	lease_op_options o = who("alice", 60);
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	bob_queues(&bob);
	clk += 5;
	memset(&w, 0, sizeof(w));
	w.out = &r;
	w.bob = &bob;
	w.drop_at = 1;
	o.fair = 1;
	o.wait_seconds = 120;
	o.wait_cb = on_wait;
	o.wait_payload = &w;
	ck_assert_msg(lease_acquire(&r, st, "l", &o) == 0, "%s", r.message);
	ck_assert_str_eq(r.payload.owner, "alice");
	ck_assert_int_eq(w.n, 1);
	ck_assert_msg(strstr(w.said[0], "queued behind bob@h's ticket") != NULL, "%s", w.said[0]);
	ck_assert_int_eq(waits_seen, 1);
	ck_assert_str_eq(watched[0], bob.t.refname); /* the ticket ahead, not the free lease */
	ck_assert(r.payload.has_queued_at);
	ck_assert_int_eq(r.payload.queued_at, T0 + 5);
	ck_assert_int_eq(r.payload.queue_position, 2);
	ck_assert_uint_eq(tickets(NULL, NULL), 0); /* her ticket is gone with the wait */
	lease_store_free(st);
}
END_TEST

/* The lease held by carol and bob queued first: alice watches the lease
 * (its holder's change comes first); her caller stops the wait: held,
 * "interrupted", her ticket removed and bob's left alone. */
START_TEST(fair_waiter_stopped_behind_held_lease)
{
	lease_op_options c = who("carol", 600), o = who("alice", 60);
	lease_own_ticket bob;
	lease_result r;
	lease_ticket left;
	script w;

	open_store();
	ck_assert_int_eq(lease_acquire(&r, st, "l", &c), 0);
	bob_queues(&bob);
	memset(&w, 0, sizeof(w));
	w.out = &r;
	w.stop_at = 1;
	o.fair = 1;
	o.wait_seconds = 120;
	o.wait_cb = on_wait;
	o.wait_payload = &w;
	ck_assert_int_eq(lease_acquire(&r, st, "l", &o), LEASE_EHELD);
	ck_assert_str_eq(r.message, "interrupted while waiting for the lease");
	ck_assert_str_eq(r.payload.owner, "carol");
	ck_assert_int_eq(w.n, 1);
	ck_assert_ptr_nonnull(strstr(w.said[0], "queued behind bob@h's ticket"));
	ck_assert_int_eq(waits_seen, 0);
	memset(&left, 0, sizeof(left));
	ck_assert_uint_eq(tickets("bob", &left), 1);
	ck_assert_str_eq(left.refname, bob.t.refname);
	lease_store_free(st);
}
END_TEST

/* The wait runs out behind carol's hold and bob's ticket: held, saying how
 * long it waited and why; every wait watched the held lease and ended by
 * time on the injected clock; alice's ticket is removed. */
START_TEST(fair_wait_runs_out)
{
	lease_op_options c = who("carol", 600), o = who("alice", 60);
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	ck_assert_int_eq(lease_acquire(&r, st, "l", &c), 0);
	bob_queues(&bob);
	memset(&w, 0, sizeof(w));
	w.out = &r;
	o.fair = 1;
	o.wait_seconds = 10;
	o.wait_cb = on_wait;
	o.wait_payload = &w;
	ck_assert_int_eq(lease_acquire(&r, st, "l", &o), LEASE_EHELD);
	ck_assert_msg(strstr(r.message, "still held after waiting 10 s: queued behind bob@h's") ==
	                      r.message,
	              "%s", r.message);
	ck_assert_int_ge(waits_seen, 1);
	ck_assert_str_eq(watched[0], "refs/leases/l");
	ck_assert_int_ge(clk, T0 + 10);
	ck_assert_uint_eq(tickets(NULL, NULL), 1); /* bob's alone */
	lease_store_free(st);
}
END_TEST

/* Alice's ticket reaped while she waits (by a sweep that judged it dead):
 * she takes a new one, keeping the time she first queued, and still lets
 * bob go first. */
START_TEST(fair_waiter_retakes_reaped_ticket)
{
	lease_op_options o = who("alice", 60);
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	bob_queues(&bob);
	clk += 3;
	memset(&w, 0, sizeof(w));
	w.out = &r;
	w.bob = &bob;
	w.reap_own_at = 1;
	w.drop_at = 2;
	o.fair = 1;
	o.wait_seconds = 120;
	o.wait_cb = on_wait;
	o.wait_payload = &w;
	ck_assert_msg(lease_acquire(&r, st, "l", &o) == 0, "%s", r.message);
	ck_assert_int_eq(w.n, 2);
	ck_assert_ptr_nonnull(strstr(w.said[1], "queued behind bob@h's ticket"));
	ck_assert_int_eq(r.payload.queued_at, T0 + 3);
	ck_assert_uint_eq(tickets(NULL, NULL), 0);
	lease_store_free(st);
}
END_TEST

Suite *runtime_faults_suite(void);
Suite *runtime_faults_suite(void)
{
	Suite *s = suite_create("runtime_faults");
	TCase *tc = tcase_create("fair_wait");

	tcase_add_test(tc, fair_waiter_lets_earlier_ticket_go_first);
	tcase_add_test(tc, fair_waiter_stopped_behind_held_lease);
	tcase_add_test(tc, fair_wait_runs_out);
	tcase_add_test(tc, fair_waiter_retakes_reaped_ticket);
	suite_add_tcase(s, tc);
	return s;
}
