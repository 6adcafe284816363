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
#include "support/suitefix.h"
#include "support/vclock.h"

#define T0 1800000000

static lease_store *st;
static memstore *M;
static lease_transport *T; /* st's transport (the memstore's vtable) */
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

/* When set, the next open_store() sleeps and measures monotonic time on it
 * (no real time passes); store time stays clk. */
static vclock *fx_vc;

static void open_store(void)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t;
	char err[256] = "";

	clk = T0;
	waits_seen = change_pending = 0;
	if (fx_vc)
		vclock_apply(fx_vc, &so.clock, 0);
	fx_vc = NULL;
	so.clock.now = clk_now;
	ck_assert_ptr_nonnull(T = t = memstore_new(&M));
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
	double waited[8];                                   /* the wait announced, s */
	int n;                                              /* announced waits */
	int stop_at;           /* stop the wait at this one (1 = the first) */
	int drop_at;           /* drop bob's ticket at this one (a change) */
	int reap_own_at;       /* delete the waiter's own ticket at this one ... */
	int reap_woken_at;     /* ... or at this one, the wait then ending at once */
	int wake_at;           /* end the wait at this one (a change: a new round) */
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
	if (w->n < 8) {
		snprintf(w->said[w->n], sizeof(w->said[w->n]), "%s", w->out->message);
		w->waited[w->n] = s;
	}
	w->n++;
	if (w->n == w->wake_at)
		change_pending = 1;
	if (w->n == w->drop_at) {
		lease__ticket_drop(w->bob, st);
		change_pending = 1;
	}
	if (w->n == w->reap_own_at || w->n == w->reap_woken_at) {
		lease_ticket own;

		memset(&own, 0, sizeof(own));
		ck_assert_uint_eq(tickets("alice", &own), 2);
		ck_assert_int_eq(memstore_set_ref(M, own.refname, NULL), 0);
		change_pending = w->n == w->reap_woken_at;
	}
	return w->n == w->stop_at;
}

/* Bob's ticket for lease l, taken first. */
static void bob_queues(lease_own_ticket *bob)
{
	memset(bob, 0, sizeof(*bob));
	ck_assert_int_eq(lease__ticket_take(bob, st, "l", "bob", "h", 300, 0), 0);
	ck_assert_int_eq(bob->held, 1);
}

/* Alice's options as a fair waiter for @p wait_s, her wait_cb running
 * @p w (cleared here; it reads @p r, and drops @p bob's ticket when told). */
static lease_op_options fair_alice(script *w, lease_result *r, lease_own_ticket *bob,
                                   int64_t wait_s)
{
	lease_op_options o = who("alice", 60);

	memset(w, 0, sizeof(*w));
	w->out = r;
	w->bob = bob;
	o.fair = 1;
	o.wait_seconds = wait_s;
	o.wait_cb = on_wait;
	o.wait_payload = w;
	return o;
}

/* The lease is free, but bob queued first: alice, waiting fairly, does not
 * take it; she watches bob's ticket and takes the lease once it is gone,
 * recording her place (second) and the time she queued. */
START_TEST(fair_waiter_lets_earlier_ticket_go_first)
{
	lease_op_options o;
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	bob_queues(&bob);
	clk += 5;
	o = fair_alice(&w, &r, &bob, 120);
	w.drop_at = 1;
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
	lease_op_options c = who("carol", 600), o;
	lease_own_ticket bob;
	lease_result r;
	lease_ticket left;
	script w;

	open_store();
	ck_assert_int_eq(lease_acquire(&r, st, "l", &c), 0);
	bob_queues(&bob);
	o = fair_alice(&w, &r, &bob, 120);
	w.stop_at = 1;
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
	lease_op_options c = who("carol", 600), o;
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	ck_assert_int_eq(lease_acquire(&r, st, "l", &c), 0);
	bob_queues(&bob);
	o = fair_alice(&w, &r, &bob, 10);
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

/* Alice's ticket reaped while she waits (by a sweep that judged it dead),
 * found when she renews it, then again when she reads the queue: each
 * time she takes a new one, keeping the time she first queued, and still
 * lets bob go first. */
START_TEST(fair_waiter_retakes_reaped_ticket)
{
	lease_op_options o;
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	bob_queues(&bob);
	clk += 3;
	o = fair_alice(&w, &r, &bob, 120);
	/* a wait goes on in looks at the clock (2 s on a store whose time is
	 * this machine's, wait.c) without a new round: the round after a
	 * change finds the ticket gone */
	w.reap_own_at = 1;
	w.wake_at = 2;
	w.reap_woken_at = 3;
	w.drop_at = 4;
	ck_assert_msg(lease_acquire(&r, st, "l", &o) == 0, "%s", r.message);
	ck_assert_int_eq(w.n, 4);
	ck_assert_ptr_nonnull(strstr(w.said[3], "queued behind bob@h's ticket"));
	ck_assert_int_eq(r.payload.queued_at, T0 + 3);
	ck_assert_uint_eq(tickets(NULL, NULL), 0);
	lease_store_free(st);
}
END_TEST

/* A ticket that cannot be taken (its create lost on the network) ends the
 * fair wait with that error, in the transport's words; nothing is left in
 * the queue. */
START_TEST(fair_wait_without_a_ticket)
{
	lease_op_options o = who("alice", 60);
	lease_result r;

	open_store();
	memstore_faults_get(M)->fail_before = 1;
	o.fair = 1;
	o.wait_seconds = 120;
	ck_assert_int_eq(lease_acquire(&r, st, "l", &o), LEASE_ENET);
	ck_assert_str_eq(r.message, "injected: connection failed before sending");
	ck_assert_uint_eq(tickets(NULL, NULL), 0);
	ck_assert(!memstore_get_ref(M, "refs/leases/l", NULL));
	lease_store_free(st);
}
END_TEST

/* A lease read that takes store time (a slow store, a loaded machine): the
 * first read of lease l's ref after it is armed moves the clock on. */
static int64_t lease_read_slow_s;
static int (*mem_read_ref)(lease_transport *, const char *, int *, lease_oid *, int *,
                           lease_commit *);
static int slow_lease_read(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                           int *has_commit, lease_commit *c)
{
	if (strcmp(refname, "refs/leases/l") == 0) {
		clk += lease_read_slow_s;
		lease_read_slow_s = 0;
	}
	return mem_read_ref(t, refname, present, oid, has_commit, c);
}

/* The ticket ahead live at the queue read, its expiry instant past by the
 * time the waiter reads the lease (2 s later): the waiter looks again at
 * once and takes the lease, instead of waiting for a change of a dead
 * ticket until its own renewal (20 s; a SANITIZE run of t_fair took the
 * lease 9 s late). */
START_TEST(fair_waiter_behind_ticket_expiring_during_its_read)
{
	lease_op_options o;
	lease_own_ticket bob;
	lease_result r;
	script w;

	open_store();
	memset(&bob, 0, sizeof(bob));
	ck_assert_int_eq(lease__ticket_take(&bob, st, "l", "bob", "h", 5, 0), 0);
	clk = bob.t.expires_at; /* bob's ticket: live to the end of this second */
	o = fair_alice(&w, &r, &bob, 120);
	mem_read_ref = T->read_ref;
	T->read_ref = slow_lease_read;
	lease_read_slow_s = 2;
	ck_assert_msg(lease_acquire(&r, st, "l", &o) == 0, "%s", r.message);
	ck_assert_str_eq(r.payload.owner, "alice");
	ck_assert_int_eq(w.n, 1);
	ck_assert_msg(w.waited[0] < 0.5, "waited %.3f s for a dead ticket", w.waited[0]);
	ck_assert_int_le(r.payload.acquired_at, bob.t.expires_at + 3);
	lease_store_free(st);
}
END_TEST

/* ---- sets (protocol.md "Sets"): what stops a set, and its write's faults ---- */

/* The set write as the store does it (memstore_cas_many), with what this
 * test's knobs add: another writer takes a member first, a refusal, a
 * compare that always fails, or store time passing during the write. */
static int cm_calls;
static const char *cm_steal_ref; /* first call: another writer takes this ref ... */
static lease_oid cm_steal_oid;   /* ... with this commit */
static int cm_refuse;            /* answer LEASE_EAUTH, nothing applied */
static int cm_always_ecas;       /* answer LEASE_ECAS, nothing applied */
static int64_t cm_slow_s;        /* store time the write takes */
static int reads_fail;           /* read_ref answers LEASE_ENET */
static int (*o_read_ref)(lease_transport *, const char *, int *, lease_oid *, int *,
                         lease_commit *);

static int f_cas_many(lease_transport *t, const lease_ref_update *u, size_t n)
{
	int rc;

	cm_calls++;
	if (cm_steal_ref && cm_calls == 1)
		ck_assert_int_eq(memstore_set_ref(M, cm_steal_ref, &cm_steal_oid), 0);
	if (cm_refuse)
		return LEASE_EAUTH;
	if (cm_always_ecas)
		return LEASE_ECAS;
	rc = memstore_cas_many(t, u, n);
	clk += cm_slow_s;
	return rc;
}

static int f_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                      int *has_commit, lease_commit *c)
{
	if (reads_fail) {
		*present = *has_commit = 0;
		return LEASE_ENET;
	}
	return o_read_ref(t, refname, present, oid, has_commit, c);
}

static lease_set_result *open_set_store(void)
{
	lease_set_result *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	open_store();
	cm_calls = cm_refuse = cm_always_ecas = reads_fail = 0;
	cm_slow_s = 0;
	cm_steal_ref = NULL;
	T->cas_many = f_cas_many;
	o_read_ref = T->read_ref;
	T->read_ref = f_read_ref;
	return r;
}

static int ref_at(const char *ref, lease_oid *oid)
{
	return memstore_get_ref(M, ref, oid);
}

static const char *const abcd[] = {"a", "b", "c", "d"};

/* The set stopped at member @p blocker: the set CAS was called @p calls
 * times, and lease @p unwritten (a member) was never written. */
static void assert_stopped(const lease_set_result *r, int blocker, int calls, const char *unwritten)
{
	char ref[64];

	snprintf(ref, sizeof(ref), "refs/leases/%s", unwritten);
	ck_assert_int_eq(r->blocker, blocker);
	ck_assert_int_eq(cm_calls, calls);
	ck_assert(!ref_at(ref, NULL));
}

/* @p o's owner takes the first @p n of abcd as a set; the set's token
 * into @p tok and @p o. */
static void holds_set(lease_set_result *r, lease_op_options *o, size_t n,
                      char tok[LEASE_TOKEN_HEXSZ + 1])
{
	ck_assert_msg(lease_acquire_set(r, st, abcd, n, o) == 0, "%s", r->message);
	memcpy(tok, r->members[0].payload.lease_token, LEASE_TOKEN_HEXSZ + 1);
	o->lease_token = tok;
}

static void close_set_store(lease_set_result *r)
{
	free(r);
	lease_store_free(st);
}

/* One member held stops the set with nothing written; the others, free in
 * their own way, say what status would (released, expired, absent),
 * without a token. */
START_TEST(set_stopped_members_say_their_state)
{
	lease_set_result *r = open_set_store();
	lease_op_options c = who("carol", 60), d = who("dave", 60), e = who("erin", 600),
	                 o = who("alice", 60);
	lease_result one;
	lease_oid a0, a1;

	ck_assert_int_eq(lease_acquire(&one, st, "a", &c), 0);
	c.lease_token = one.payload.lease_token;
	ck_assert_int_eq(lease_release(&one, st, "a", &c), 0);
	ck_assert_int_eq(lease_acquire(&one, st, "b", &d), 0);
	clk += 1000; /* dave's lease expired */
	ck_assert_int_eq(lease_acquire(&one, st, "c", &e), 0);
	ck_assert(ref_at("refs/leases/a", &a0));
	ck_assert_int_eq(lease_acquire_set(r, st, abcd, 4, &o), LEASE_EHELD);
	assert_stopped(r, 2, 0, "d");
	ck_assert_int_eq(r->status, LEASE_STATUS_HELD);
	ck_assert_int_eq(r->members[0].status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(r->members[1].status, LEASE_STATUS_EXPIRED);
	ck_assert_int_eq(r->members[3].status, LEASE_STATUS_ABSENT);
	ck_assert_str_eq(r->members[1].message, "not written: the set was not taken");
	ck_assert_str_eq(r->members[1].payload.lease_token, "");
	ck_assert(ref_at("refs/leases/a", &a1) && lease_oid_equal(&a0, &a1));
	close_set_store(r);
}
END_TEST

/* A member whose payload cannot be read stops the set (nothing written):
 * an error naming it, as a single acquire would answer. */
START_TEST(set_stopped_by_unreadable_member)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 60);
	lease_oid blob;

	ck_assert_int_eq(memstore_put_blob(M, &blob, "not a commit"), 0);
	ck_assert_int_eq(memstore_set_ref(M, "refs/leases/b", &blob), 0);
	ck_assert_int_eq(lease_acquire_set(r, st, abcd, 2, &o), LEASE_EPAYLOAD);
	assert_stopped(r, 1, 0, "a");
	ck_assert_int_eq(r->members[1].status, LEASE_STATUS_ERROR);
	close_set_store(r);
}
END_TEST

/* A set release over members some already released writes the others
 * (and settles an unknown answer the same way); released again, nothing
 * is written; a token that is not current writes nothing and answers
 * not_owner with code 0, as a single release does. */
START_TEST(set_release_partly_released)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 60);
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_result one;
	lease_oid b0, b1;

	holds_set(r, &o, 2, tok);
	ck_assert_int_eq(lease_release(&one, st, "a", &o), 0);
	memstore_faults_get(M)->drop_after_apply = 1; /* the answer is lost */
	ck_assert_msg(lease_release_set(r, st, abcd, 2, &o) == 0, "%s", r->message);
	ck_assert_int_eq(r->status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(r->members[0].status, LEASE_STATUS_ALREADY_RELEASED);
	ck_assert_int_eq(r->members[1].status, LEASE_STATUS_RELEASED);
	ck_assert(ref_at("refs/leases/b", &b0));
	ck_assert_int_eq(lease_release_set(r, st, abcd, 2, &o), 0);
	ck_assert_int_eq(r->status, LEASE_STATUS_ALREADY_RELEASED);
	ck_assert(ref_at("refs/leases/b", &b1) && lease_oid_equal(&b0, &b1));

	o.lease_token = NULL;
	ck_assert_int_eq(lease_acquire_set(r, st, abcd, 2, &o), 0);
	o.lease_token = "0123456789abcdef0123456789abcdef";
	cm_calls = 0;
	ck_assert_int_eq(lease_release_set(r, st, abcd, 2, &o), 0);
	ck_assert_int_eq(r->status, LEASE_STATUS_NOT_OWNER);
	ck_assert_int_eq(cm_calls, 0);
	ck_assert_int_eq(lease_status(&one, st, "a"), 0);
	ck_assert_int_eq(one.status, LEASE_STATUS_LIVE);
	close_set_store(r);
}
END_TEST

/* A set heartbeat before any member is due writes nothing: not_due. */
START_TEST(set_heartbeat_not_due)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 600);
	char tok[LEASE_TOKEN_HEXSZ + 1];

	holds_set(r, &o, 3, tok);
	cm_calls = 0;
	clk += 10;
	ck_assert_int_eq(lease_heartbeat_set(r, st, abcd, 3, &o), 0);
	ck_assert_int_eq(r->status, LEASE_STATUS_NOT_DUE);
	ck_assert_int_eq(r->members[2].status, LEASE_STATUS_NOT_DUE);
	ck_assert_int_eq(cm_calls, 0);
	close_set_store(r);
}
END_TEST

/* A set verified with less than half its TTL left (F15): an error, and the
 * caller holds the token (to release it). */
START_TEST(set_granted_too_late)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 60);

	cm_slow_s = 40;
	ck_assert_int_eq(lease_acquire_set(r, st, abcd, 2, &o), LEASE_EUNVERIFIED);
	ck_assert_int_eq(r->status, LEASE_STATUS_ERROR);
	ck_assert_str_eq(r->message, "granted too late: less than half the TTL left when verified");
	ck_assert_int_eq(r->members[1].holds_token, 1);
	ck_assert_str_eq(r->members[1].payload.owner, "alice");
	close_set_store(r);
}
END_TEST

/* A member taken between the set's read and its write: the set CAS fails
 * with nothing applied, the set reads again and stops at the new holder. */
START_TEST(set_member_taken_before_the_write)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 60), z = who("zed", 600);
	lease_result one;

	ck_assert_int_eq(lease_acquire(&one, st, "b", &z), 0);
	cm_steal_oid = one.oid;
	ck_assert_int_eq(memstore_set_ref(M, "refs/leases/b", NULL), 0);
	cm_steal_ref = "refs/leases/b";
	ck_assert_int_eq(lease_acquire_set(r, st, abcd, 2, &o), LEASE_EHELD);
	assert_stopped(r, 1, 1, "a");
	ck_assert_str_eq(r->members[1].payload.owner, "zed");
	close_set_store(r);
}
END_TEST

/* The set write's faults: a refusal is the set's error with the store's
 * reason; answers lost before anything applied are written again, up to a
 * bound, then reported unknown; a compare that keeps failing ends after
 * the engine's round bound; a failed read ends the set with its error. */
START_TEST(set_write_faults_end_the_set)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 60);
	lease_oid a;

	cm_refuse = 1;
	ck_assert_int_eq(lease_acquire_set(r, st, abcd, 2, &o), LEASE_EAUTH);
	ck_assert_int_eq(r->status, LEASE_STATUS_ERROR);
	ck_assert_ptr_nonnull(strstr(r->message, "cas_set refs/leases/a"));
	cm_refuse = 0;

	cm_calls = 0;
	memstore_faults_get(M)->fail_before = 1; /* the first write is lost, not applied */
	ck_assert_msg(lease_acquire_set(r, st, abcd, 2, &o) == 0, "%s", r->message);
	ck_assert_int_eq(cm_calls, 2);
	ck_assert_int_eq(r->status, LEASE_STATUS_ACQUIRED);
	o.lease_token = r->members[0].payload.lease_token;
	ck_assert_int_eq(lease_release_set(r, st, abcd, 2, &o), 0);
	o.lease_token = NULL;

	cm_calls = 0;
	memstore_faults_get(M)->fail_before = 100;
	ck_assert_int_eq(lease_acquire_set(r, st, abcd + 2, 2, &o), LEASE_ENET);
	ck_assert_ptr_nonnull(strstr(r->message, "write outcome unknown after 4 attempts"));
	ck_assert_int_eq(cm_calls, 4);
	ck_assert(!ref_at("refs/leases/c", NULL));
	memstore_faults_get(M)->fail_before = 0;

	reads_fail = 1;
	ck_assert_int_eq(lease_acquire_set(r, st, abcd + 2, 2, &o), LEASE_ENET);
	ck_assert_int_eq(r->status, LEASE_STATUS_ERROR);
	reads_fail = 0;
	ck_assert(ref_at("refs/leases/a", &a));
	close_set_store(r);
}
END_TEST

/* Issue 38: a compare the store keeps refusing while no member moves is
 * the same write sent again — no new commits — after 1, 2, 4, ... s within
 * --timeout (120 s: 1+2+...+32 = 63 s, 7 sends), then cas_failed quoting
 * the store and saying nothing changed (never "the set kept changing"). */
START_TEST(set_refused_while_nothing_moves_backs_off)
{
	static vclock vc;
	lease_set_result *r;
	lease_op_options o = who("alice", 60);
	int64_t t0;

	vclock_init(&vc, 0);
	fx_vc = &vc;
	r = open_set_store();
	memstore_counts_reset(M);
	cm_always_ecas = 1;
	t0 = vclock_mono_ms(&vc);
	ck_assert_int_eq(lease_acquire_set(r, st, abcd + 2, 2, &o), LEASE_ECAS);
	ck_assert_msg(strstr(r->message, "refused the set write 7 times in 63 s while no member "
	                                 "moved; nothing changed") &&
	                      !strstr(r->message, "kept changing"),
	              "%s", r->message);
	ck_assert_int_eq(cm_calls, 7);
	ck_assert_int_ge(vclock_mono_ms(&vc) - t0, 63000);
	/* one commit per member, written once */
	ck_assert_int_eq(memstore_counts_get(M)->write_commit, 2);
	ck_assert(!ref_at("refs/leases/c", NULL));
	close_set_store(r);
}
END_TEST

/* A member name that breaks the name rule refuses the set, naming it. */
START_TEST(set_with_invalid_member_refused)
{
	lease_set_result *r = open_set_store();
	lease_op_options o = who("alice", 60);
	const char *names[] = {"a", "-b"};

	ck_assert_int_eq(lease_acquire_set(r, st, names, 2, &o), LEASE_EINVALID);
	assert_stopped(r, 1, 0, "a");
	ck_assert_str_eq(r->members[1].message, "name: must start with a letter or digit");
	ck_assert_str_eq(r->message, "-b: name: must start with a letter or digit");
	close_set_store(r);
}
END_TEST

Suite *runtime_faults_suite(void)
{
	Suite *s = suite_create("runtime_faults");

	suitefix_add(s, "fair_wait", 0, NULL, ONE(fair_waiter_lets_earlier_ticket_go_first),
	             ONE(fair_waiter_stopped_behind_held_lease), ONE(fair_wait_runs_out),
	             ONE(fair_waiter_retakes_reaped_ticket), ONE(fair_wait_without_a_ticket),
	             ONE(fair_waiter_behind_ticket_expiring_during_its_read), NULL);
	suitefix_add(s, "sets", 0, NULL, ONE(set_stopped_members_say_their_state),
	             ONE(set_stopped_by_unreadable_member), ONE(set_release_partly_released),
	             ONE(set_heartbeat_not_due), ONE(set_granted_too_late),
	             ONE(set_member_taken_before_the_write), ONE(set_write_faults_end_the_set),
	             ONE(set_refused_while_nothing_moves_backs_off),
	             ONE(set_with_invalid_member_refused), NULL);
	return s;
}
