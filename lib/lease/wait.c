/* The one wait loop of every acquire --wait and its plain/set and fair
 * strategies (lease/wait.h; protocol.md §5 "Waiting" and "Fair waiting",
 * issue 38 item 2, issue 40 B68/B69). The slot strategy is in slots.c. */
#include "lease/wait.h"
#include "lease/door.h"
#include "lease/policy.h"
#include "lease/renew.h"
#include "lease/ticket.h"
#include "reflease/queue.h"
#include "store/frontend.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* ---- the loop ------------------------------------------------------------ */

/* One wait's clocks and report state. */
typedef struct wait_run {
	lease_store *st;
	const lease_op_options *o;
	int64_t start_ms;  /* the wait's start, the store's monotonic ms */
	int64_t start_now; /* ... and store time, s */
	int64_t next_ms;   /* the next report is due then (0: at once) */
	int clock_local;   /* store time is this machine's clock (B69) */
	double cap_at;     /* the round's lease_wait_look.cap_s as a store time (0: none) */
} wait_run;

static double mono_s(const lease_store *st)
{
	return (double)lease__store_mono_ms(st) / 1000.0;
}

double lease__until_takeover(lease_store *st, const lease_result *r)
{
	if (!r || !r->has_payload || r->payload.phase == LEASE_PHASE_RELEASED)
		return -1;
	return (double)lease__policy_takeover_at(r->payload.expires_at,
	                                         lease_store_skew_margin(st)) -
	       lease__store_now_precise(st) + 0.002;
}

/* Seconds of the wait left: wait_seconds less the monotonic time passed, or
 * the store time passed less its 1 s rounding when that runs faster (F22,
 * F24; a forward wall-clock step on a local store, B68). */
static double wait_left(const wait_run *w)
{
	double elapsed = (double)(lease__store_mono_ms(w->st) - w->start_ms) / 1000.0;
	int64_t store_elapsed = lease_store_now(w->st) - w->start_now;

	if ((double)store_elapsed - 1.0 > elapsed)
		elapsed = (double)store_elapsed - 1.0;
	return (double)w->o->wait_seconds - elapsed;
}

/* A write inside the wait waits for a held ref lock only as long as the wait
 * has left (issue 23), at least LEASE_WAIT_LOCK_FLOOR_MS (a writer's lock
 * window is milliseconds: met at the end of the wait, its write is read,
 * B69), at most the store's own lock wait. */
static void bound_lock_wait(const wait_run *w, double left_s)
{
	double ms = left_s * 1000.0;

	if (ms < LEASE_WAIT_LOCK_FLOOR_MS)
		ms = LEASE_WAIT_LOCK_FLOOR_MS;
	lease__store_set_lock_wait(w->st, ms >= 3000.0 ? -1 : (int)ms);
}

/* The progress report when due; @return @p wait_s capped at the next one. */
static double report(wait_run *w, const lease_wait_look *l, double wait_s)
{
	int64_t now = lease__store_mono_ms(w->st);
	double to_next;

	if (!w->o->progress_cb)
		return wait_s;
	if (now >= w->next_ms) {
		lease_wait_progress p;
		const lease_result *h = l->holder;
		int pay = h && h->has_payload;

		memset(&p, 0, sizeof(p));
		p.name = h ? h->name : "";
		p.owner = pay ? h->payload.owner : "";
		p.host = pay ? h->payload.host : "";
		p.until = pay ? h->payload.expires_at : 0;
		p.queue_position = l->queue_position;
		p.waited_seconds = (double)(now - w->start_ms) / 1000.0;
		w->o->progress_cb(&p, w->o->progress_payload);
		w->next_ms = now + (int64_t)LEASE_WAIT_REPORT_S * 1000;
	}
	to_next = (double)(w->next_ms - now) / 1000.0;
	return to_next < wait_s ? to_next : wait_s;
}

/* Wait up to @p ms for a change of what @p l watches: 1 changed (or a
 * signal cut it short: the caller looks), 0 unchanged. */
static int watch(const wait_run *w, const lease_wait_look *l, int ms)
{
	if (l->n > 0)
		return lease__wait_refs_change(w->st, l->prefix, l->known, l->n, ms);
	if (l->name)
		return lease_wait_ref_change(w->st, l->name, l->present, &l->oid, ms);
	if (l->refname)
		return lease_wait_refname_change(w->st, l->refname, l->present, &l->oid, ms);
	return lease__store_sleep_ms(w->st, ms, LEASE_SLEEP_INTERRUPTIBLE) < 0;
}

/* After a wait that saw no change: 1 when the store says what @p l watches
 * is still as read (a conditional read, free on github; a refs wait looked
 * at its end itself). */
static int still_as_read(const wait_run *w, const lease_wait_look *l)
{
	if (l->n > 0)
		return 1;
	if (!l->present || !lease_store_can_watch(w->st))
		return 0;
	if (l->name)
		return lease_ref_still_at(w->st, l->name, &l->oid) == 1;
	return l->refname && lease__refname_still_at(w->st, l->refname, &l->oid) == 1;
}

/* A ref lock met by the last round: when the lease is live under another
 * holder (the lock was its write), the answer is that holder (B69). */
static int lock_at_end(const wait_run *w, const lease_wait_look *l, int rc)
{
	char name[LEASE_NAME_MAX + 1], t[LEASE_TIME_STRSZ + 1];
	lease_result cur;

	if (!l->result || !l->holder)
		return rc;
	snprintf(name, sizeof(name), "%s", l->holder->name);
	if (lease_status(&cur, w->st, name) < 0 || cur.status != LEASE_STATUS_LIVE ||
	    !cur.has_payload)
		return rc;
	memset(cur.payload.lease_token, 0, sizeof(cur.payload.lease_token));
	cur.holds_token = 0;
	cur.status = LEASE_STATUS_HELD;
	cur.code = LEASE_EHELD;
	lease_time_format(t, cur.payload.expires_at);
	snprintf(cur.message, sizeof(cur.message), "held by %s on %s until %s", cur.payload.owner,
	         cur.payload.host, t);
	*l->result = cur;
	return LEASE_EHELD;
}

static int held(int rc)
{
	return rc == LEASE_EHELD || rc == LEASE_ELOCKED;
}

/* The wait of one round's answer @p *rc: 1 = wait on, 0 = run a round, -1 =
 * interrupted. *@p confirmed: the store answered "unchanged" at its end. */
static int wait_once(wait_run *w, const lease_wait_look *l, int rc, int fresh, int *confirmed)
{
	lease_store *st = w->st;
	double left = wait_left(w), base, wait_s, until, t0;
	int changed;

	*confirmed = 0;
	base = left < 3600 ? left : 3600; /* one wait at most an hour */
	/* a store that cannot watch, and a ref lock (it changes no ref): look
	 * again at the steady poll pace */
	if ((l->n == 0 && !lease_store_can_watch(st)) || rc == LEASE_ELOCKED)
		if (base > (double)lease_store_ttl_min(st) / 20.0)
			base = (double)lease_store_ttl_min(st) / 20.0;
	until = l->report_only ? -1 : lease__until_takeover(st, l->holder);
	if (until <= 0 && !l->report_only && l->holder && l->holder->has_payload) {
		if (!fresh)
			return 0; /* its instant came during the wait: look now */
		until = 1.0;      /* "expired" but held: look again each second */
	}
	if (until > 0 && until < base)
		base = until;
	if (w->cap_at > 0) { /* the strategy's own instant, on the store clock */
		double cap = w->cap_at - lease__store_now_precise(st);

		if (cap <= 0 && !fresh)
			return 0;
		if (cap < 0.002)
			cap = 0.002;
		if (cap < base)
			base = cap;
	}
	wait_s = base;
	if (w->clock_local && wait_s > LEASE_WAIT_CLOCK_LOOK_MS / 1000.0)
		wait_s = LEASE_WAIT_CLOCK_LOOK_MS / 1000.0;
	wait_s = report(w, l, wait_s);
	if (w->o->wait_cb && w->o->wait_cb(wait_s, w->o->wait_payload))
		return -1;
	if (fresh) /* one wait, in looks at the clock and reports */
		lease__store_log(st, LEASE_LOG_INFO, "%s: held; waiting up to %.1f s for a change",
		                 l->holder ? l->holder->name
		                 : l->name ? l->name
		                           : "",
		                 base);
	t0 = mono_s(st);
	changed = watch(w, l, (int)(wait_s * 1000.0 + 0.5));
	if (w->o->wait_cb && mono_s(st) < t0 + wait_s - 0.005 &&
	    w->o->wait_cb(0.0, w->o->wait_payload))
		return -1; /* the window for interrupting ends here: nothing held yet */
	bound_lock_wait(w, wait_left(w));
	/* unchanged through a wait the report or the clock look cut short, or
	 * through the wait's end, as the store says: wait on, no new round */
	if (changed || rc != LEASE_EHELD || (wait_s >= base - 0.005 && base < left - 0.005) ||
	    !still_as_read(w, l))
		return 0;
	*confirmed = 1;
	return 1;
}

/* The wait is over: reset the store's bounds, write the loop's message. */
static void wait_done(const wait_run *w, lease_wait_end why, const char *what, char *msg,
                      size_t msglen, int rc)
{
	lease__store_set_lock_wait(w->st, -1);
	lease__store_set_wait_end(w->st, 0);
	if (why == LEASE_WAIT_INTERRUPTED) {
		snprintf(msg, msglen, "interrupted while waiting for the %s", what);
	} else if (why == LEASE_WAIT_RAN_OUT) {
		char m[1024];

		snprintf(m, sizeof(m), "%s", msg[0] ? msg : lease_store_last_error(w->st));
		snprintf(msg, msglen, "still %s after waiting %lld s: %.400s",
		         rc == LEASE_ELOCKED ? "locked" : "held", (long long)w->o->wait_seconds, m);
	}
}

int lease__wait_run(lease_store *st, const lease_op_options *o, const lease_wait_strategy *s,
                    void *ctx, char *msg, size_t msglen)
{
	static const lease_op_options none = LEASE_OP_OPTIONS_INIT;
	lease_wait_end why = LEASE_WAIT_DONE;
	lease_wait_look look;
	wait_run w;
	int rc, fresh = 1, confirmed = 0;

	memset(&w, 0, sizeof(w));
	w.st = st;
	w.o = o ? o : &none;
	w.start_ms = lease__store_mono_ms(st);
	w.start_now = lease_store_now(st);
	w.clock_local = lease__store_clock_local(st);
	/* the wait bounds every attempt and rate-limit sleep in it, the first
	 * one's too (issue 24 #3), and each ref lock wait (issue 23) */
	if (w.o->wait_seconds > 0) {
		bound_lock_wait(&w, (double)w.o->wait_seconds);
		lease__store_set_wait_end(st, w.start_ms + (int64_t)w.o->wait_seconds * 1000 +
		                                      LEASE_WAIT_LAST_ANSWER_MS);
	}
	memset(&look, 0, sizeof(look));
	rc = s->round(ctx, 0, &look);
	w.cap_at = look.cap_s > 0 ? lease__store_now_precise(st) + look.cap_s : 0;
	while (w.o->wait_seconds > 0 && held(rc)) {
		int step;

		if (wait_left(&w) <= 0) {
			/* the last answer is the store's, read after the budget is
			 * spent — unless it just said "unchanged" and the holder's
			 * instant has not come (B68, B69) */
			if (!confirmed || look.report_only ||
			    lease__until_takeover(st, look.holder) <= 0) {
				memset(&look, 0, sizeof(look));
				rc = s->round(ctx, 1, &look);
				if (rc == LEASE_ELOCKED)
					rc = lock_at_end(&w, &look, rc);
			}
			if (held(rc))
				why = LEASE_WAIT_RAN_OUT;
			break;
		}
		step = wait_once(&w, &look, rc, fresh, &confirmed);
		fresh = 0;
		if (step < 0) {
			why = LEASE_WAIT_INTERRUPTED;
			break;
		}
		if (step > 0)
			continue;
		memset(&look, 0, sizeof(look));
		rc = s->round(ctx, 0, &look);
		w.cap_at = look.cap_s > 0 ? lease__store_now_precise(st) + look.cap_s : 0;
		fresh = 1;
	}
	wait_done(&w, why, s->what, msg, msglen, rc);
	if (s->end)
		s->end(ctx, why, rc, msg, msglen);
	return rc;
}

/* ---- plain and set waits ------------------------------------------------- */

typedef struct plain_wait {
	lease_acquire_attempt attempt;
	void *arg;
} plain_wait;

static int plain_round(void *ctx, int last, lease_wait_look *l)
{
	plain_wait *p = ctx;
	const lease_result *b = NULL;
	int rc = p->attempt(p->arg, &b);

	(void)last;
	if (b) {
		l->holder = b;
		l->result = (lease_result *)b; /* the caller's own result (or member) */
		l->name = b->name;
		l->present = b->present;
		l->oid = b->oid;
	}
	return rc;
}

int lease__acquire_waiting(lease_store *st, const lease_op_options *opts,
                           lease_acquire_attempt attempt, void *arg, char *msg, size_t msglen,
                           const char *what)
{
	plain_wait p = {attempt, arg};
	lease_wait_strategy s = {what, plain_round, NULL};

	return lease__wait_run(st, opts, &s, &p, msg, msglen);
}

/* ---- fair waits (protocol.md §5 "Fair waiting") -------------------------- */

typedef struct fair_wait {
	lease_result *out;
	lease_store *st;
	const char *name;
	const lease_op_options *o;
	lease_own_ticket me;
	int64_t ttl, since, position;
	char watch[320]; /* the ticket ahead's ref, when it is watched */
} fair_wait;

/* The live ticket a fair waiter @p me must let go first (the bakery rule):
 * one still choosing its key (key 0: an earlier build's ticket, taken in two
 * writes; this build keys a ticket as it creates it), else the oldest with
 * a smaller (key, id); NULL when there is none. *present is 1 when @p me's
 * own ticket is in @p q as written. */
static const lease_ticket *queue_head(const lease_queue *q, const lease_own_ticket *me,
                                      int *present)
{
	const lease_ticket *head = NULL;
	size_t i;

	*present = 0;
	for (i = 0; i < q->count; i++) {
		const lease_ticket *t = &q->items[i];

		if (strcmp(t->id, me->t.id) == 0) {
			*present = lease_oid_equal(&t->oid, &me->t.oid);
			continue;
		}
		if (!head && t->live && (t->key == 0 || lease_ticket_cmp(t, &me->t) < 0))
			head = t;
	}
	return head;
}

/* Seconds until the ticket @p f->me is due for renewal: the store's renewal
 * pace after its last write (ttl/3; on github the budgeted pace, issue 39
 * item 3), never later than its expiry less the renewal lead. */
static double until_renewal(const fair_wait *f)
{
	const lease_own_ticket *me = &f->me;
	double pace = (double)lease__renew_pace(lease__store_budgeted(f->st), me->t.ttl_seconds);
	double lead = lease__renew_lead(me->t.ttl_seconds, 1.0, lease_store_skew_margin(f->st));
	double due = (double)me->renewed_at + pace, latest = (double)me->t.expires_at - lead;
	double left = (due < latest ? due : latest) - (double)lease_store_now(f->st);

	return left > 0.05 ? left : 0.05;
}

/* @p f->out: an error @p rc with @p why (NULL: the store's message). */
static int fair_fail(fair_wait *f, int rc, const char *why)
{
	lease_result *out = f->out;
	char m[sizeof(out->message)];

	snprintf(m, sizeof(m), "%s", why ? why : lease_store_last_error(f->st));
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", f->name);
	snprintf(out->ref, sizeof(out->ref), "refs/%s/%s", lease_store_namespace(f->st), f->name);
	out->status = LEASE_STATUS_ERROR;
	out->code = rc;
	out->waited_seconds = -1;
	snprintf(out->message, sizeof(out->message), "%s", m);
	return rc;
}

/* The ticket taken when there is none, renewed when due: 0, 1 = gone (take
 * a new one), or an error. */
static int fair_ticket(fair_wait *f)
{
	const lease_op_options *o = f->o;
	int rc;

	if (!f->me.held) {
		rc = lease__ticket_take(&f->me, f->st, f->name, o->owner ? o->owner : "",
		                        o->host ? o->host : "", f->ttl, f->since);
		if (rc < 0)
			return fair_fail(f, rc, NULL); /* the ticket's message */
		f->since = f->me.t.since;
		return 0;
	}
	if (until_renewal(f) <= 0.05 && lease__ticket_renew(&f->me, f->st, f->name) < 0) {
		/* expired (never revived) or reaped: take a new ticket */
		lease__ticket_drop(&f->me, f->st);
		return 1;
	}
	return 0;
}

/* Behind the ticket @p head: @p f->out the lease as read, held, "queued
 * behind" it; watch the lease while it is held, else the ticket ahead until
 * its takeover instant (@p l->cap_s). */
static void fair_behind(fair_wait *f, const lease_ticket *head, lease_wait_look *l)
{
	lease_result *out = f->out;
	char at[LEASE_TIME_STRSZ + 1];

	lease_status(out, f->st, f->name);
	l->holder = out;
	if (out->has_payload && lease__until_takeover(f->st, out) > 0) {
		l->name = f->name;
		l->present = out->present;
		l->oid = out->oid;
	} else {
		snprintf(f->watch, sizeof(f->watch), "%s", head->refname);
		l->refname = f->watch;
		l->present = 1;
		l->oid = head->oid;
		/* its instant passed during this round's reads (it was live at the
		 * queue read): look again at once, never wait for a dead ticket */
		l->cap_s = (double)lease__policy_takeover_at(head->expires_at,
		                                             lease_store_skew_margin(f->st)) -
		           lease__store_now_precise(f->st) + 0.002;
		if (l->cap_s < 0.002)
			l->cap_s = 0.002;
		l->report_only = 1;
	}
	out->code = LEASE_EHELD;
	out->status = LEASE_STATUS_HELD;
	lease_time_format(at, head->since); /* B70: RFC 3339, as elsewhere */
	snprintf(out->message, sizeof(out->message), "queued behind %s@%s's ticket (since %s)",
	         head->owner, head->host, at);
}

/* Looks the last round of a fair wait takes at a ticket ahead that is still
 * choosing its key (an earlier build's, key 0), 100 ms apart. */
#define LEASE_FAIR_LAST_CHOOSING 20

/* One round of a fair wait: the ticket, the queue, and the lease when this
 * waiter is the queue's head. */
static int fair_round(void *ctx, int last, lease_wait_look *l)
{
	fair_wait *f = ctx;
	int tries, rc, choosing = 0;

	for (tries = 0; tries < 4; tries++) {
		const lease_ticket *head;
		lease_queue q = {0};
		int present;
		double renew;

		if ((rc = fair_ticket(f)) < 0)
			return rc;
		if (rc > 0)
			continue;
		if ((rc = lease_queue_read(&q, f->st, f->name)) < 0)
			return fair_fail(f, rc, NULL); /* the read's message */
		head = queue_head(&q, &f->me, &present);
		l->queue_position = (int64_t)lease_queue_position(&q, f->me.t.id);
		if (!present) { /* reaped or replaced: ours is gone */
			lease_queue_clear(&q);
			f->me.held = 0;
			continue;
		}
		if (f->position == 0) /* the place at entry, kept past a new ticket */
			f->position = l->queue_position;
		if (last && head && head->key == 0 && choosing++ < LEASE_FAIR_LAST_CHOOSING) {
			/* the last answer waits for a ticket still choosing its key
			 * (milliseconds): the head of the queue takes an expired
			 * lease, and this waiter may be it (B68: after a wall-clock
			 * step every waiter takes a new ticket at once) */
			lease_queue_clear(&q);
			lease__store_sleep_ms(f->st, 100, LEASE_SLEEP_INTERRUPTIBLE);
			tries--;
			continue;
		}
		if (head) {
			fair_behind(f, head, l);
			rc = LEASE_EHELD;
		} else {
			rc = lease__acquire_once(f->out, f->st, f->name, f->o, f->since,
			                         f->position);
			if (rc == 0)
				f->out->waited_seconds = f->out->now - f->since;
			l->holder = f->out;
			l->result = f->out;
			l->name = f->name;
			l->present = f->out->present;
			l->oid = f->out->oid;
		}
		lease_queue_clear(&q);
		if (!held(rc))
			return rc;
		renew = until_renewal(f);
		if (l->cap_s <= 0 || renew < l->cap_s)
			l->cap_s = renew;
		return rc;
	}
	/* the queue kept changing under this waiter: look again in a second */
	l->cap_s = 1.0;
	return LEASE_EHELD;
}

static void fair_end(void *ctx, lease_wait_end why, int rc, char *msg, size_t msglen)
{
	fair_wait *f = ctx;

	(void)why;
	(void)rc;
	(void)msg;
	(void)msglen;
	if (f->me.held)
		lease__ticket_drop(&f->me, f->st);
}

int lease__acquire_fair(lease_result *out, lease_store *st, const char *name,
                        const lease_op_options *opts)
{
	lease_wait_strategy s = {"lease", fair_round, fair_end};
	fair_wait f;

	memset(&f, 0, sizeof(f));
	f.out = out;
	f.st = st;
	f.name = name;
	f.o = opts;
	f.ttl = opts->ttl_seconds > 0 ? opts->ttl_seconds : lease_store_ttl_default(st);
	if (f.ttl < lease_store_ttl_min(st))
		f.ttl = lease_store_ttl_min(st);
	return lease__wait_run(st, opts, &s, &f, out->message, sizeof(out->message));
}
