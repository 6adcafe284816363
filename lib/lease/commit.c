/* The one write-and-settle engine (protocol.md §5 "Settling"; commit.h). */
#include "lease/commit.h"
#include "lease/door.h"
#include "lease/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One operation on one lease: what it wrote, where it stands. */
typedef struct lease_engine {
	lease_store *st;
	const char *name;
	const lease_engine_ops *ops;
	void *ctx;
	int pace; /* lease__store_pace() before each write (bursts) */
	lease_written w[LEASE_ENGINE_WRITES_MAX];
	size_t nw;
	int64_t now; /* store time of the last read */
	/* a set (lease__engine_run_set): n > 0 members */
	const char *const *names;
	size_t n;
	int member;                          /* the member a read or write failed on */
	int set_written;                     /* sw holds the last set write */
	lease_written sw[LEASE_SET_MAX];     /* ... one entry per member */
	lease_ref_state rs[LEASE_SET_MAX];   /* the last read (a single lease: rs[0]) */
	lease_ref_state tips[LEASE_SET_MAX]; /* after a verified set write (shallow) */
	lease_plan pl[LEASE_SET_MAX];        /* the plans of a round */
	/* settling (§5) */
	int pending;      /* the last write failed: settle it on the next read */
	int unknown;      /* unknown outcomes so far */
	int last_rc;      /* ... the last failed write's code */
	int last_present; /* ... the state it expected */
	lease_oid last_oid;
	char last_msg[600]; /* ... the store's message about it */
	int last_noop;      /* ... a success report its re-read belied (known no-op) */
} lease_engine;

int lease__engine_settleable(int rc)
{
	return rc == LEASE_ECAS || rc == LEASE_EUNVERIFIED || rc == LEASE_ENET ||
	       rc == LEASE_EEXISTS || rc == LEASE_ERATELIMIT || rc == LEASE_ENOTFOUND;
}

static lease_round round_of(const lease_engine *en, const lease_ref_state *s, int64_t now)
{
	lease_round r;

	r.st = en->st;
	r.name = en->name;
	r.s = s;
	r.now = now;
	r.read_at = en->now;
	r.writes = en->nw;
	r.n = en->n ? en->n : 1;
	r.w = en->n && en->set_written ? en->sw : NULL;
	r.member = en->member;
	return r;
}

/* The operation fails (@p why, @p rc, @p msg) in round @p r: the caller
 * records it and names the code it ends with. */
static int end_with(const lease_engine_ops *ops, void *ctx, const lease_round *r,
                    lease_engine_failure why, int rc, const char *msg)
{
	lease_step st = ops->failed(ctx, r, why, rc, msg);

	return st.kind == LEASE_STEP_DONE ? st.code : rc;
}

static int fail(lease_engine *en, const lease_ref_state *s, lease_engine_failure why, int rc,
                const char *msg)
{
	lease_round r = round_of(en, s, en->now);

	return end_with(en->ops, en->ctx, &r, why, rc, msg);
}

typedef struct landed_walk {
	const lease_engine *en;
	int idx;
} landed_walk;

static int find_written(const lease_engine *en, const lease_oid *oid)
{
	size_t i;

	for (i = en->nw; i-- > 0;)
		if (!en->w[i].deleted && lease_oid_equal(&en->w[i].oid, oid))
			return (int)i;
	return -1;
}

static int is_base(const lease_engine *en, const lease_oid *oid)
{
	size_t i;

	for (i = 0; i < en->nw; i++)
		if ((en->w[i].has_base && lease_oid_equal(&en->w[i].base, oid)) ||
		    (en->w[i].has_parent && lease_oid_equal(&en->w[i].parent, oid)))
			return 1;
	return 0;
}

static int landed_visit(const lease_oid *oid, const lease_commit *c, void *payload)
{
	landed_walk *lw = payload;

	if ((lw->idx = find_written(lw->en, oid)) >= 0)
		return 1;
	/* nothing below the oids the writes were based on (or their parents,
	 * for a heartbeat that replaced the tip) can be ours */
	return c && is_base(lw->en, oid);
}

/* Index in en->w of the newest write that @p s shows landed, or -1: the
 * tip is, or descends from, a commit written; a ref that is gone after a
 * delete was sent. Called once something was written (en->nw > 0). */
static int landed_index(lease_engine *en, const lease_ref_state *s)
{
	landed_walk lw = {en, -1};
	size_t i;

	if (!s->present) {
		for (i = en->nw; i-- > 0;)
			if (en->w[i].deleted)
				return (int)i;
		return -1;
	}
	lease__walk_chain(en->st, &s->oid, &s->commit, LEASE_SETTLE_WALK_MAX, landed_visit, &lw);
	return lw.idx;
}

/* Record in @p w what a write of the plan @p pl on top of @p s (its parent
 * commit @p parent, NULL for none) was based on; w->oid is the caller's. */
static void note_written(lease_written *w, const lease_ref_state *s, const lease_plan *pl,
                         const lease_oid *parent)
{
	w->has_base = s->present;
	w->base = s->oid;
	w->p = pl->p;
	w->token_changed = pl->token_changed;
	w->has_parent = parent != NULL;
	if (parent)
		w->parent = *parent;
}

static lease_written *remember(lease_engine *en)
{
	lease_written *w;

	if (en->nw == LEASE_ENGINE_WRITES_MAX) {
		memmove(&en->w[0], &en->w[1], sizeof(en->w[0]) * (LEASE_ENGINE_WRITES_MAX - 1));
		en->nw--;
	}
	w = &en->w[en->nw++];
	memset(w, 0, sizeof(*w));
	return w;
}

/* Write the commit of @p pl on top of @p s; rebuild while the payload went
 * stale before its CAS (§5, F15). Returns 0 (written: en->w's last), 1
 * (stop: a rebuild finished without a write, or a failure; *rc the code to
 * end with) or 2 (the write failed with the settleable *rc: nothing was
 * published, read again and decide again). */
static int write_planned(lease_engine *en, const lease_ref_state *s, lease_plan *pl, int *rc)
{
	char err[256], m[320];
	int rebuild;

	for (rebuild = 0;; rebuild++) {
		/* a replacing heartbeat sits on the tip's parent (§2), else on the tip */
		const lease_oid *parent = pl->replace                         ? &pl->parent
		                          : s->present && s->commit.is_commit ? &s->oid
		                                                              : NULL;
		lease_written *w;
		lease_oid oid;
		lease_round r;
		lease_step st;
		char *msg = pl->message;
		int64_t now2;

		pl->message = NULL;
		if (!msg) {
			if (lease_payload_validate(&pl->p, err, sizeof(err)) < 0) {
				snprintf(m, sizeof(m), "refusing to write an invalid payload: %s",
				         err);
				*rc = fail(en, s, LEASE_FAIL_ERROR, LEASE_EINTERNAL, m);
				return 1;
			}
			if ((*rc = lease_message_build(&msg, &pl->p, pl->op)) < 0) {
				*rc = fail(en, s, LEASE_FAIL_ERROR, *rc,
				           "could not build the commit message");
				return 1;
			}
		}
		if (en->pace)
			lease__store_pace(en->st); /* one operation of a burst (issue 15) */
		*rc = lease_write_commit(&oid, en->st, parent, msg);
		free(msg);
		if (*rc < 0) {
			if (lease__engine_settleable(*rc))
				return 2;
			*rc = fail(en, s, LEASE_FAIL_ERROR, *rc, NULL);
			return 1;
		}
		w = remember(en);
		w->oid = oid;
		note_written(w, s, pl, parent);
		if (pl->ttl <= 0)
			return 0;
		now2 = lease_store_now(en->st);
		if (!lease__policy_payload_stale(pl->built_at, now2, pl->ttl) ||
		    rebuild >= LEASE_ENGINE_REBUILD_MAX)
			return 0;
		lease__store_log(en->st, LEASE_LOG_INFO,
		                 "%s: payload built %lld s before its CAS (ttl %lld): rebuilding",
		                 en->name, (long long)(now2 - pl->built_at), (long long)pl->ttl);
		memset(pl, 0, sizeof(*pl));
		r = round_of(en, s, now2);
		st = en->ops->plan(en->ctx, &r, pl);
		if (st.kind == LEASE_STEP_DONE) {
			free(pl->message);
			*rc = st.code;
			return 1;
		}
		if (st.kind != LEASE_STEP_WRITE) {
			free(pl->message);
			*rc = fail(en, s, LEASE_FAIL_ERROR, LEASE_EINTERNAL,
			           "a rebuilt plan must write again");
			return 1;
		}
	}
}

/* The tip after a verified CAS: the last commit written, or a ref gone. */
static void verified_tip(lease_ref_state *tip, const lease_engine *en)
{
	const lease_written *w = &en->w[en->nw - 1];

	memset(tip, 0, sizeof(*tip));
	snprintf(tip->name, sizeof(tip->name), "%s", en->name);
	if (w->deleted)
		return;
	tip->present = 1;
	tip->oid = w->oid;
	tip->payload = w->p;
	tip->commit.has_parent = w->has_parent;
	tip->commit.parent = w->parent;
}

/* Carry out the plan's @p step on the state @p s: the delete, or the write
 * of its commit and the CAS. @return the CAS's code; *@p end is 1 when the
 * operation ended here (the code is its answer); *@p what names the call
 * for the log. */
static int execute(lease_engine *en, const lease_ref_state *s, lease_plan *pl, lease_step step,
                   const char **what, int *end)
{
	lease_store *st = en->st;
	int rc = 0, wrote;

	*end = 0;
	if (step.kind == LEASE_STEP_DELETE && s->present) {
		lease_written *w = remember(en);

		w->deleted = 1;
		w->has_base = 1;
		w->base = s->oid;
		if (en->pace)
			lease__store_pace(st); /* one operation of a burst (issue 15) */
		*what = "cas_delete";
		return lease_cas_delete(st, en->name, &s->oid);
	}
	if (step.kind == LEASE_STEP_WRITE) {
		if ((wrote = write_planned(en, s, pl, &rc)) == 1) {
			free(pl->message);
			*end = 1;
			return rc;
		}
		*what = wrote ? "write_commit" : s->present ? "cas_replace" : "cas_create";
		if (wrote == 0 && s->present)
			rc = lease_cas_replace(st, en->name, &s->oid, &en->w[en->nw - 1].oid);
		else if (wrote == 0)
			rc = lease_cas_create(st, en->name, &en->w[en->nw - 1].oid);
		return rc;
	}
	free(pl->message);
	*end = 1;
	return fail(en, s, LEASE_FAIL_ERROR, LEASE_EINTERNAL,
	            step.kind == LEASE_STEP_DELETE ? "nothing to delete: the ref is absent"
	                                           : "a plan must write, delete or end");
}

/* ---- a set: one commit per written member, one atomic CAS ("Sets") ------- */

/* Read every member in one read of the store (github: one GraphQL query). */
static int read_set(lease_engine *en)
{
	size_t i, failed = 0;
	int rc;

	for (i = 0; i < en->n; i++)
		lease_ref_state_clear(&en->rs[i]);
	if ((rc = lease_fetch_refs(en->rs, en->st, en->names, en->n, &failed)) < 0)
		en->member = (int)failed;
	return rc;
}

/* Send the last set write's CAS (again, as it is): every written member
 * from the tip it was based on to its commit. */
static int set_cas(lease_engine *en)
{
	const char *names[LEASE_SET_MAX];
	lease_oid olds[LEASE_SET_MAX], news[LEASE_SET_MAX];
	size_t i, k = 0;

	for (i = 0; i < en->n; i++) {
		const lease_written *w = &en->sw[i];

		if (w->skipped)
			continue;
		names[k] = en->names[i];
		if (w->has_base)
			olds[k] = w->base;
		else
			memset(&olds[k], 0, sizeof(olds[k]));
		news[k++] = w->oid;
	}
	return lease_cas_set(en->st, names, olds, news, k);
}

/* Member @p i's commit of the plan @p pl on top of @p s: 0, or the code
 * with *@p m the engine's own reason ("" for the store's). */
static int write_member(lease_engine *en, size_t i, const lease_ref_state *s, lease_plan *pl,
                        char *m, size_t mlen)
{
	lease_written *w = &en->sw[i];
	const lease_oid *parent = s->present && s->commit.is_commit ? &s->oid : NULL;
	char err[256], *msg = pl->message;
	int rc = 0;

	pl->message = NULL;
	m[0] = '\0';
	if (!msg && lease_payload_validate(&pl->p, err, sizeof(err)) < 0) {
		snprintf(m, mlen, "refusing to write an invalid payload: %s", err);
		rc = LEASE_EINTERNAL;
	} else if (!msg && (rc = lease_message_build(&msg, &pl->p, pl->op)) < 0) {
		snprintf(m, mlen, "could not build the commit message");
	} else {
		rc = lease_write_commit(&w->oid, en->st, parent, msg);
	}
	free(msg);
	if (rc < 0)
		return rc;
	note_written(w, s, pl, parent);
	en->nw++; /* writes sent (lease_round.writes) */
	return 0;
}

/* A set's step: the plans' commits, then one CAS for them all. */
static int execute_set(lease_engine *en, const lease_ref_state *s, lease_step step, int *end)
{
	char m[320];
	size_t i, j;
	int rc;

	*end = 1;
	en->set_written = 0;
	if (step.kind != LEASE_STEP_WRITE) {
		for (i = 0; i < en->n; i++)
			free(en->pl[i].message);
		return fail(en, s, LEASE_FAIL_ERROR, LEASE_EINTERNAL,
		            "a set's plan must write or end");
	}
	for (i = 0; i < en->n; i++) {
		memset(&en->sw[i], 0, sizeof(en->sw[i]));
		en->sw[i].skipped = en->pl[i].skip;
		if (en->pl[i].skip) {
			free(en->pl[i].message);
			continue;
		}
		if ((rc = write_member(en, i, &s[i], &en->pl[i], m, sizeof(m))) < 0) {
			for (j = i + 1; j < en->n; j++)
				free(en->pl[j].message);
			en->member = (int)i;
			return fail(en, s, LEASE_FAIL_ERROR, rc, m[0] ? m : NULL);
		}
	}
	*end = 0;
	en->set_written = 1;
	return set_cas(en);
}

typedef struct member_walk {
	const lease_oid *want, *base; /* base NULL: the write created the ref */
	int found;
} member_walk;

static int member_visit(const lease_oid *oid, const lease_commit *c, void *payload)
{
	member_walk *mw = payload;

	if (lease_oid_equal(oid, mw->want)) {
		mw->found = 1;
		return 1;
	}
	/* nothing below the commit the write was based on can be ours */
	return c && mw->base && lease_oid_equal(oid, mw->base);
}

/* Member @p i's read shows the set write: its tip is the member's commit,
 * or a later writer built on it (the single lease's rule, §5). */
static int member_shows(lease_engine *en, size_t i)
{
	const lease_ref_state *s = &en->rs[i];
	const lease_written *w = &en->sw[i];
	member_walk mw = {&w->oid, w->has_base ? &w->base : NULL, 0};

	if (s->present && lease_oid_equal(&s->oid, &w->oid))
		return 1;
	if (s->present && s->commit.is_commit)
		lease__walk_chain(en->st, &s->oid, &s->commit, LEASE_SETTLE_WALK_MAX, member_visit,
		                  &mw);
	return mw.found;
}

/* The members' states after a verified set write: the written ones at
 * their commits, the others as read (shallow copies: never cleared). */
static const lease_ref_state *verified_tips(lease_engine *en)
{
	size_t i;

	for (i = 0; i < en->n; i++) {
		lease_ref_state *t = &en->tips[i];
		const lease_written *w = &en->sw[i];

		en->sw[i].shown = !w->skipped;
		if (w->skipped) {
			*t = en->rs[i];
			continue;
		}
		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "%s", en->names[i]);
		t->present = 1;
		t->oid = w->oid;
		t->payload = w->p;
		t->commit.oid = w->oid;
		t->commit.is_commit = 1;
		t->commit.has_parent = w->has_parent;
		t->commit.parent = w->parent;
	}
	return en->tips;
}

/* ---- settling (§5) ------------------------------------------------------ */

/* The written ref(s) read as the last write expected them: nothing moved. */
static int at_base(const lease_ref_state *s, const lease_written *w)
{
	return w->has_base ? s->present && lease_oid_equal(&s->oid, &w->base) : !s->present;
}

static int unmoved(const lease_engine *en)
{
	size_t i;

	if (!en->n)
		return en->nw > 0 && at_base(&en->rs[0], &en->w[en->nw - 1]);
	for (i = 0; i < en->n; i++)
		if (!en->sw[i].skipped && !at_base(&en->rs[i], &en->sw[i]))
			return 0;
	return 1;
}

/* Read the written ref(s) again: 1 unmoved, 0 moved, or the read's error. */
static int reread_unmoved(lease_engine *en)
{
	int rc;

	if (en->n)
		rc = read_set(en);
	else {
		lease_ref_state_clear(&en->rs[0]);
		rc = lease_fetch_ref(&en->rs[0], en->st, en->name);
	}
	return rc < 0 ? rc : unmoved(en);
}

/* The last write sent again as it is (its commits, its CAS). */
static int cas_again(lease_engine *en)
{
	const lease_written *w;

	if (en->n)
		return set_cas(en);
	w = &en->w[en->nw - 1];
	if (en->pace)
		lease__store_pace(en->st);
	if (w->deleted)
		return lease_cas_delete(en->st, en->name, &w->base);
	return w->has_base ? lease_cas_replace(en->st, en->name, &w->base, &w->oid)
	                   : lease_cas_create(en->st, en->name, &w->oid);
}

/* The store said no to the CAS (LEASE_ECAS, outcome known) — not a success
 * report the re-read belies (a no-op: settled as an unknown outcome). */
static int store_refused(const lease_store *st)
{
	const lease_cas_error *e = lease_store_last_cas_error(st);

	return e->outcome == LEASE_OUTCOME_KNOWN && !e->noop;
}

/* The store refused the write (store_refused()). While the re-read
 * shows nothing moved (a ruleset, a limit of unknown wording, a server
 * fault; issue 38), the same CAS — the commits already written, never new
 * ones — is sent again after 1 s, 2 s, 4 s, ... while --timeout (from the
 * first refusal) allows. @return 0 (applied, verified), LEASE_ECAS (a ref
 * moved: decide again), another code of a CAS or a read (settled as any
 * failed write), or with *@p gave_up the operation's end: refused
 * throughout, nothing changed, in the store's own words. */
static int refused(lease_engine *en, int *gave_up)
{
	lease_store *st = en->st;
	int64_t t0 = lease__store_mono_ms(st), backoff = LEASE_ENGINE_BACKOFF_MS,
	        budget = (int64_t)lease_store_timeout(st) * 1000, slept = 0, took;
	char why[LEASE_STORE_ERRMSG_SZ], m[LEASE_STORE_ERRMSG_SZ + 160];
	int rc, tries = 1;

	*gave_up = 0;
	for (;;) {
		snprintf(why, sizeof(why), "%s", lease_store_last_error(st));
		if ((rc = reread_unmoved(en)) <= 0)
			return rc < 0 ? rc : LEASE_ECAS;
		/* the pauses count even on a clock that does not move */
		took = lease__store_mono_ms(st) - t0;
		if ((took > slept ? took : slept) + backoff > budget)
			break;
		lease__store_log(st, LEASE_LOG_INFO,
		                 "%s: the store refused the write while nothing moved; the same "
		                 "write again in %lld ms",
		                 en->name, (long long)backoff);
		lease__store_sleep_ms(st, backoff, LEASE_SLEEP_FULL);
		slept += backoff;
		backoff *= 2;
		tries++;
		lease__store_clear_error(st);
		rc = cas_again(en);
		if (rc != LEASE_ECAS || !store_refused(st))
			return rc;
	}
	*gave_up = 1;
	snprintf(m, sizeof(m),
	         "the store refused the %swrite %d time%s in %lld s while %s; nothing changed: %s",
	         en->n ? "set " : "", tries, tries == 1 ? "" : "s",
	         (long long)((took > slept ? took : slept) + 999) / 1000,
	         en->n ? "no member moved" : "the lease did not move", why);
	return fail(en, en->rs, LEASE_FAIL_REFUSED, LEASE_ECAS, m);
}

/* The last write's outcome is still unknown (the ref(s) as before it):
 * 0 to try again, or 1 when the bound is reached (*@p rc the end's code). */
static int unknown_round(lease_engine *en, const lease_ref_state *s, int *rc)
{
	char m[700];

	if (en->unknown < LEASE_SETTLE_UNKNOWN_MAX) {
		en->unknown++;
		return 0;
	}
	/* one thing, known or unknown: a store that kept reporting a write
	 * done that its reads never showed changed nothing (a no-op, known) */
	snprintf(m, sizeof(m),
	         en->last_noop ? "the store reported the write done %d times but nothing "
	                         "changed: %.600s"
	                       : "write outcome unknown after %d attempts: %.600s",
	         LEASE_SETTLE_UNKNOWN_MAX + 1,
	         en->last_msg[0] ? en->last_msg : lease_error_id(en->last_rc));
	*rc = fail(en, s, LEASE_FAIL_UNKNOWN,
	           en->last_rc == LEASE_ECAS ? LEASE_EUNVERIFIED : en->last_rc, m);
	return 1;
}

/* Where the single lease's writes stand on @p s: 1 when the operation ended
 * (*@p rc), 0 to plan. */
static int settle_one(lease_engine *en, const lease_ref_state *s, const lease_round *r, int *rc)
{
	lease_step step;
	int idx;

	if (en->nw == 0)
		return 0;
	if ((idx = landed_index(en, s)) >= 0) {
		step = en->ops->landed(en->ctx, r, &en->w[idx]);
		*rc = step.code;
		return step.kind == LEASE_STEP_DONE;
	}
	/* (A create answered "exists" over a ref that reads absent was
	 * already polled within the verify window by the primitive, §3.) */
	if (en->pending && s->present == en->last_present &&
	    (!s->present || lease_oid_equal(&s->oid, &en->last_oid)))
		return unknown_round(en, s, rc); /* still the old state: unknown (§5) */
	return 0;
}

/* Where the set's last write stands: on every written member (landed), on
 * none, or on some only — not atomic: the operation ends (the caller
 * releases what shows it). */
static int settle_set(lease_engine *en, const lease_round *r, int *rc)
{
	size_t i, written = 0, shown = 0;
	lease_step step;
	char m[160];

	if (!en->set_written)
		return 0;
	for (i = 0; i < en->n; i++) {
		en->sw[i].shown = !en->sw[i].skipped && member_shows(en, i);
		written += !en->sw[i].skipped;
		shown += (size_t)en->sw[i].shown;
	}
	if (shown == written) {
		step = en->ops->landed(en->ctx, r, en->sw);
		*rc = step.code;
		return step.kind == LEASE_STEP_DONE;
	}
	if (shown > 0) {
		snprintf(m, sizeof(m),
		         "the set write shows on %zu of its %zu members: the store did not apply "
		         "it atomically",
		         shown, written);
		*rc = end_with(en->ops, en->ctx, r, LEASE_FAIL_PARTIAL, LEASE_EUNVERIFIED, m);
		return 1;
	}
	if (en->pending && unmoved(en))
		return unknown_round(en, r->s, rc);
	return 0;
}

/* ---- the loop ------------------------------------------------------------ */

/* The round's read: @p first in the first round (single lease), the ref,
 * or every member of a set. */
static int read_state(lease_engine *en, const lease_ref_state *first, int rounds,
                      const lease_ref_state **s)
{
	int rc;

	en->member = -1;
	if (en->n) {
		if ((rc = read_set(en)) == 0)
			*s = en->rs;
		return rc;
	}
	lease_ref_state_clear(&en->rs[0]);
	if (rounds == 1 && first) {
		*s = first;
		return 0;
	}
	if ((rc = lease_fetch_ref(&en->rs[0], en->st, en->name)) == 0)
		*s = &en->rs[0];
	return rc;
}

/* A CAS was verified (the tip is the write): landed() on that state. */
static int verified(lease_engine *en, int *rc)
{
	lease_ref_state tip;
	lease_round vr;
	lease_step step;

	if (en->n) {
		vr = round_of(en, verified_tips(en), lease_store_now(en->st));
		step = en->ops->landed(en->ctx, &vr, en->sw);
	} else {
		verified_tip(&tip, en);
		vr = round_of(en, &tip, lease_store_now(en->st));
		step = en->ops->landed(en->ctx, &vr, &en->w[en->nw - 1]);
	}
	*rc = step.code;
	return step.kind == LEASE_STEP_DONE;
}

/* The round's plan: 1 when it ended the operation (*@p rc). */
static int plan_round(lease_engine *en, const lease_round *r, lease_step *step, int *rc)
{
	size_t i, n = en->n ? en->n : 1;

	memset(en->pl, 0, sizeof(en->pl[0]) * n);
	*step = en->ops->plan(en->ctx, r, en->pl);
	if (step->kind != LEASE_STEP_DONE)
		return 0;
	for (i = 0; i < n; i++)
		free(en->pl[i].message);
	*rc = step->code;
	return 1;
}

/* A write failed with @p rc: 1 when that ended the operation (*@p rc),
 * 0 to read again and settle (§5). A refusal while nothing moved is sent
 * again first (refused()). */
static int after_failure(lease_engine *en, const lease_ref_state *s, const lease_round *r,
                         const char *what, int *rc)
{
	lease_step step;
	int gave_up = 0;

	en->last_present = s->present; /* the state the write expected */
	en->last_oid = s->oid;
	if (*rc == LEASE_ECAS && strcmp(what, "write_commit") != 0 && store_refused(en->st)) {
		*rc = refused(en, &gave_up);
		if (gave_up)
			return 1;
		if (*rc == 0)
			return verified(en, rc);
	}
	if (!lease__engine_settleable(*rc)) {
		*rc = fail(en, s, LEASE_FAIL_ERROR, *rc, NULL);
		return 1;
	}
	step = en->ops->failed(en->ctx, r, LEASE_FAIL_LOST, *rc, NULL);
	if (step.kind == LEASE_STEP_DONE) {
		*rc = step.code;
		return 1;
	}
	en->pending = 1;
	en->last_rc = *rc;
	en->last_noop = *rc == LEASE_ECAS && lease_store_last_cas_error(en->st)->noop &&
	                lease_store_last_cas_error(en->st)->outcome == LEASE_OUTCOME_KNOWN;
	/* the write's own reason: the re-reads that follow replace the
	 * store's message (issue 24 #5: never an empty reason) */
	snprintf(en->last_msg, sizeof(en->last_msg), "%s", lease_store_last_error(en->st));
	lease__store_log(en->st, LEASE_LOG_INFO, "%s: %s failed (%s); settling by re-reading",
	                 en->name, what, lease_error_id(*rc));
	return 0;
}

/* The operation's loop: read, settle what was written, plan, write. */
static int run(lease_engine *en, const lease_ref_state *first)
{
	const lease_ref_state *s = NULL;
	lease_round r;
	lease_step step;
	int rounds = 0, rc = 0, end;
	const char *what = "cas_set";
	char m[96];

	for (;;) {
		if (++rounds > LEASE_ENGINE_ROUNDS_MAX) {
			snprintf(m, sizeof(m), "gave up after %d rounds: the %s kept changing",
			         LEASE_ENGINE_ROUNDS_MAX, en->n ? "set" : "lease");
			rc = fail(en, NULL, LEASE_FAIL_ROUNDS,
			          en->pending ? en->last_rc : LEASE_ECAS, m);
			break;
		}
		s = NULL;
		if ((rc = read_state(en, first, rounds, &s)) < 0) {
			if (en->pending && lease__engine_settleable(rc) &&
			    en->unknown < LEASE_SETTLE_UNKNOWN_MAX) {
				en->unknown++;
				continue;
			}
			rc = fail(en, NULL, LEASE_FAIL_ERROR, rc, NULL);
			break;
		}
		en->now = lease_store_now(en->st);
		r = round_of(en, s, en->now);
		if (en->n ? settle_set(en, &r, &rc) : settle_one(en, s, &r, &rc))
			break;
		en->pending = 0;
		if (plan_round(en, &r, &step, &rc))
			break;
		if (en->n)
			rc = execute_set(en, s, step, &end);
		else
			rc = execute(en, s, &en->pl[0], step, &what, &end);
		if (end)
			break;
		if (rc == 0) {
			/* Verified by the primitive: the tip is our write (or gone). */
			if (verified(en, &rc))
				break;
			continue; /* decide again, on a fresh read */
		}
		r = round_of(en, s, en->now);
		if (after_failure(en, s, &r, what, &rc))
			break;
	}
	for (size_t i = 0; i < (en->n ? en->n : 1); i++)
		lease_ref_state_clear(&en->rs[i]);
	return rc;
}

/* An engine for @p names (a set of @p n) or @p name (n 0), run to its end. */
static int start(lease_store *st, const char *name, const char *const *names, size_t n,
                 const lease_engine_ops *ops, void *ctx, const lease_ref_state *first, int pace)
{
	lease_engine *en = calloc(1, sizeof(*en));
	int rc;

	if (!en) {
		lease_round r;

		memset(&r, 0, sizeof(r));
		r.st = st;
		r.name = name;
		r.now = r.read_at = lease_store_now(st);
		r.n = n ? n : 1;
		r.member = -1;
		(void)lease__store_set_error(st, LEASE_ENOMEM, "%s: out of memory", name);
		return end_with(ops, ctx, &r, LEASE_FAIL_ERROR, LEASE_ENOMEM, "out of memory");
	}
	en->st = st;
	en->name = name;
	en->ops = ops;
	en->ctx = ctx;
	en->pace = pace;
	en->names = names;
	en->n = n;
	en->member = -1;
	rc = run(en, first);
	free(en);
	return rc;
}

int lease__engine_run(lease_store *st, const char *name, const lease_engine_ops *ops, void *ctx,
                      const lease_ref_state *first, int pace)
{
	return start(st, name, NULL, 0, ops, ctx, first, pace);
}

int lease__engine_run_set(lease_store *st, const char *const *names, size_t n,
                          const lease_engine_ops *ops, void *ctx)
{
	return start(st, names[0], names, n, ops, ctx, NULL, 0);
}
