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
		w->has_base = s->present;
		w->base = s->oid;
		w->p = pl->p;
		w->token_changed = pl->token_changed;
		w->has_parent = parent != NULL;
		if (parent)
			w->parent = *parent;
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

/* The operation's loop; en is zeroed but for its first five fields. */
static int run(lease_engine *en, const lease_ref_state *first)
{
	lease_store *st = en->st;
	lease_ref_state rs;
	const lease_ref_state *s = NULL;
	lease_plan pl;
	lease_round r;
	lease_step step;
	int unknown = 0, rounds = 0, rc = 0, last_rc = 0, pending = 0, last_present = 0, end;
	lease_oid last_oid;
	char last_msg[600] = "";
	const char *what = "";

	memset(&rs, 0, sizeof(rs));
	memset(&last_oid, 0, sizeof(last_oid));
	for (;;) {
		lease_ref_state_clear(&rs);
		s = NULL;
		if (++rounds > LEASE_ENGINE_ROUNDS_MAX) {
			char m[96];
			snprintf(m, sizeof(m), "gave up after %d rounds: the lease kept changing",
			         LEASE_ENGINE_ROUNDS_MAX);
			rc = fail(en, NULL, LEASE_FAIL_ROUNDS, pending ? last_rc : LEASE_ECAS, m);
			break;
		}
		if (rounds == 1 && first) {
			s = first;
			rc = 0;
		} else if ((rc = lease_fetch_ref(&rs, st, en->name)) == 0) {
			s = &rs;
		}
		if (rc < 0) {
			if (pending && lease__engine_settleable(rc) &&
			    unknown < LEASE_SETTLE_UNKNOWN_MAX) {
				unknown++;
				continue;
			}
			rc = fail(en, NULL, LEASE_FAIL_ERROR, rc, NULL);
			break;
		}
		/* (A create answered "exists" over a ref that reads absent was
		 * already polled within the verify window by the primitive, §3.) */
		en->now = lease_store_now(st);
		r = round_of(en, s, en->now);
		if (en->nw > 0) {
			int idx = landed_index(en, s);
			if (idx >= 0) {
				step = en->ops->landed(en->ctx, &r, &en->w[idx]);
				if (step.kind == LEASE_STEP_DONE) {
					rc = step.code;
					break;
				}
			} else if (pending && s->present == last_present &&
			           (!s->present || lease_oid_equal(&s->oid, &last_oid))) {
				/* Still the old state: outcome unknown, retry (§5). */
				if (unknown >= LEASE_SETTLE_UNKNOWN_MAX) {
					char m[700];
					snprintf(m, sizeof(m),
					         "write outcome unknown after %d attempts: %.600s",
					         LEASE_SETTLE_UNKNOWN_MAX + 1,
					         last_msg[0] ? last_msg : lease_error_id(last_rc));
					rc = fail(en, s, LEASE_FAIL_UNKNOWN,
					          last_rc == LEASE_ECAS ? LEASE_EUNVERIFIED
					                                : last_rc,
					          m);
					break;
				}
				unknown++;
			}
		}
		pending = 0;
		memset(&pl, 0, sizeof(pl));
		step = en->ops->plan(en->ctx, &r, &pl);
		if (step.kind == LEASE_STEP_DONE) {
			free(pl.message);
			rc = step.code;
			break;
		}
		rc = execute(en, s, &pl, step, &what, &end);
		if (end)
			break;
		if (rc == 0) {
			/* Verified by the primitive: the tip is our commit (or gone). */
			lease_ref_state tip;
			lease_round vr;

			verified_tip(&tip, en);
			vr = round_of(en, &tip, lease_store_now(st));
			step = en->ops->landed(en->ctx, &vr, &en->w[en->nw - 1]);
			if (step.kind == LEASE_STEP_DONE) {
				rc = step.code;
				break;
			}
			continue; /* decide again, on a fresh read */
		}
		if (!lease__engine_settleable(rc)) {
			rc = fail(en, s, LEASE_FAIL_ERROR, rc, NULL);
			break;
		}
		step = en->ops->failed(en->ctx, &r, LEASE_FAIL_LOST, rc, NULL);
		if (step.kind == LEASE_STEP_DONE) {
			rc = step.code;
			break;
		}
		pending = 1;
		last_rc = rc;
		/* the write's own reason: the re-reads that follow replace the
		 * store's message (issue 24 #5: never an empty reason) */
		snprintf(last_msg, sizeof(last_msg), "%s", lease_store_last_error(st));
		last_present = s->present;
		last_oid = s->oid;
		lease__store_log(st, LEASE_LOG_INFO, "%s: %s failed (%s); settling by re-reading",
		                 en->name, what, lease_error_id(rc));
	}
	lease_ref_state_clear(&rs);
	return rc;
}

int lease__engine_run(lease_store *st, const char *name, const lease_engine_ops *ops, void *ctx,
                      const lease_ref_state *first, int pace)
{
	lease_engine *en = calloc(1, sizeof(*en));
	int rc;

	if (!en) {
		lease_round r;

		r.st = st;
		r.name = name;
		r.s = NULL;
		r.now = r.read_at = lease_store_now(st);
		r.writes = 0;
		(void)lease__store_set_error(st, LEASE_ENOMEM, "%s: out of memory", name);
		return end_with(ops, ctx, &r, LEASE_FAIL_ERROR, LEASE_ENOMEM, "out of memory");
	}
	en->st = st;
	en->name = name;
	en->ops = ops;
	en->ctx = ctx;
	en->pace = pace;
	rc = run(en, first);
	free(en);
	return rc;
}
