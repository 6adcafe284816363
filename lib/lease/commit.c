/* The one write-and-settle engine (protocol.md §5 "Settling"; commit.h). */
#include "lease/commit.h"
#include "lease/door.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lease__engine_settleable(int rc)
{
	return rc == LEASE_ECAS || rc == LEASE_EUNVERIFIED || rc == LEASE_ENET ||
	       rc == LEASE_EEXISTS || rc == LEASE_ERATELIMIT || rc == LEASE_ENOTFOUND;
}

typedef struct landed_walk {
	const lease_engine *en;
	int idx;
} landed_walk;

static int find_written(const lease_engine *en, const lease_oid *oid)
{
	size_t i;

	for (i = en->nw; i-- > 0;)
		if (lease_oid_equal(&en->w[i].oid, oid))
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

int lease__engine_landed(lease_engine *en, const lease_ref_state *s)
{
	landed_walk lw = {en, -1};

	if (!s->present || en->nw == 0)
		return -1;
	lease__walk_chain(en->st, &s->oid, &s->commit, LEASE_SETTLE_WALK_MAX, landed_visit, &lw);
	return lw.idx;
}

static lease_written *remember(lease_engine *en)
{
	if (en->nw == LEASE_ENGINE_WRITES_MAX) {
		memmove(&en->w[0], &en->w[1], sizeof(en->w[0]) * (LEASE_ENGINE_WRITES_MAX - 1));
		en->nw--;
	}
	return &en->w[en->nw++];
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
		char *msg = pl->message;
		int64_t now2;

		pl->message = NULL;
		if (!msg) {
			if (lease_payload_validate(&pl->p, err, sizeof(err)) < 0) {
				snprintf(m, sizeof(m), "refusing to write an invalid payload: %s",
				         err);
				*rc = en->ops->fail(en, s, LEASE_FAIL_ERROR, LEASE_EINTERNAL, m);
				return 1;
			}
			if ((*rc = lease_message_build(&msg, &pl->p, pl->op)) < 0) {
				*rc = en->ops->fail(en, s, LEASE_FAIL_ERROR, *rc,
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
			*rc = en->ops->fail(en, s, LEASE_FAIL_ERROR, *rc, NULL);
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
		if (10 * (now2 - pl->built_at) <= pl->ttl || rebuild >= LEASE_ENGINE_REBUILD_MAX)
			return 0;
		lease__store_log(en->st, LEASE_LOG_INFO,
		                 "%s: payload built %lld s before its CAS (ttl %lld): rebuilding",
		                 en->name, (long long)(now2 - pl->built_at), (long long)pl->ttl);
		memset(pl, 0, sizeof(*pl));
		if ((*rc = en->ops->plan(en, s, now2, pl)) != 0) {
			if (*rc == 1)
				*rc = en->rc;
			return 1;
		}
	}
}

/* The tip after a verified CAS: the last commit written. */
static void verified_tip(lease_ref_state *tip, const lease_engine *en)
{
	const lease_written *w = &en->w[en->nw - 1];

	memset(tip, 0, sizeof(*tip));
	tip->present = 1;
	tip->oid = w->oid;
	tip->payload = w->p;
	tip->commit.has_parent = w->has_parent;
	tip->commit.parent = w->parent;
	snprintf(tip->name, sizeof(tip->name), "%s", en->name);
}

lease_engine *lease__engine_new(lease_store *st, const char *name, const lease_engine_ops *ops,
                                void *ctx, const lease_ref_state *first, int pace)
{
	lease_engine *en = calloc(1, sizeof(*en));

	if (!en)
		return NULL;
	en->st = st;
	en->name = name;
	en->ops = ops;
	en->ctx = ctx;
	en->first = first;
	en->pace = pace;
	return en;
}

int lease__engine_run(lease_engine *en)
{
	lease_store *st = en->st;
	lease_ref_state rs;
	const lease_ref_state *s = NULL;
	lease_plan pl;
	int unknown = 0, rounds = 0, rc = 0, last_rc = 0, pending = 0, last_present = 0, wrote;
	lease_oid last_oid;
	char last_msg[600] = "";

	memset(&rs, 0, sizeof(rs));
	memset(&last_oid, 0, sizeof(last_oid));
	for (;;) {
		lease_ref_state_clear(&rs);
		s = NULL;
		if (++rounds > LEASE_ENGINE_ROUNDS_MAX) {
			char m[96];
			snprintf(m, sizeof(m), "gave up after %d rounds: the lease kept changing",
			         LEASE_ENGINE_ROUNDS_MAX);
			rc = en->ops->fail(en, NULL, LEASE_FAIL_ROUNDS,
			                   pending ? last_rc : LEASE_ECAS, m);
			break;
		}
		if (rounds == 1 && en->first) {
			s = en->first;
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
			rc = en->ops->fail(en, NULL, LEASE_FAIL_ERROR, rc, NULL);
			break;
		}
		/* (A create answered "exists" over a ref that reads absent was
		 * already polled within the verify window by the primitive, §3.) */
		en->now = lease_store_now(st);
		if (en->nw > 0) {
			int idx = lease__engine_landed(en, s);
			if (idx >= 0) {
				if (en->ops->landed(en, s, (size_t)idx, en->now)) {
					rc = en->rc;
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
					rc = en->ops->fail(en, s, LEASE_FAIL_UNKNOWN,
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
		if ((rc = en->ops->plan(en, s, en->now, &pl)) != 0) {
			if (rc == 1)
				rc = en->rc;
			break;
		}
		if ((wrote = write_planned(en, s, &pl, &rc)) == 1) {
			free(pl.message);
			break;
		}
		if (wrote == 0 && en->ops->before_cas &&
		    (rc = en->ops->before_cas(en, s, &en->w[en->nw - 1])) != 0)
			break;
		if (wrote == 0 && s->present)
			rc = lease_cas_replace(st, en->name, &s->oid, &en->w[en->nw - 1].oid);
		else if (wrote == 0)
			rc = lease_cas_create(st, en->name, &en->w[en->nw - 1].oid);
		if (rc == 0) {
			/* Verified by the primitive: the tip is our commit. */
			lease_ref_state tip;

			verified_tip(&tip, en);
			if (en->ops->landed(en, &tip, en->nw - 1, lease_store_now(st))) {
				rc = en->rc;
				break;
			}
			continue;
		}
		if (!lease__engine_settleable(rc)) {
			rc = en->ops->fail(en, s, LEASE_FAIL_ERROR, rc, NULL);
			break;
		}
		if (en->ops->lost && !en->ops->lost(en, s, rc)) {
			rc = en->rc;
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
		                 en->name,
		                 wrote        ? "write_commit"
		                 : s->present ? "cas_replace"
		                              : "cas_create",
		                 lease_error_id(rc));
	}
	lease_ref_state_clear(&rs);
	return rc;
}
