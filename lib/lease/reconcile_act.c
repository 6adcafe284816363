/* Reconcile's opt-in actions (protocol.md §7): reap through the one
 * write-and-settle engine (commit.c), prune (archive ref, then delete), and
 * the record of an action due but not done (a skip). */
#include "lease/reconcile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/commit.h"
#include "lease/door.h"
#include "lease/policy.h"
#include "lease/schemas.h"
#include "reflease/version.h"
#include "store/frontend.h"
#include "util/util.h"

/* ---- actions -------------------------------------------------------------------------- */

/* An action due but not done: @p code LEASE_ECAS when a concurrent write won. */
void lease__rec_skip(lease_reconcile_report *r, lease_reconcile_entry *e, int code,
                     const char *kind, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	e->action = LEASE_ACTION_SKIPPED;
	e->action_kind = kind;
	e->action_code = code < 0 ? code : LEASE_EINTERNAL;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	lease__err_mark_cut(buf, sizeof(buf), n);
	free(e->action_message);
	e->action_message = strdup(buf); /* NULL on ENOMEM: reported without a reason */
	r->skipped++;
}

/* ---- reap through the write-and-settle engine (commit.c) ------------------ */

typedef struct reap_op {
	lease_reconcile_report *r;
	lease_reconcile_entry *e;
	const lease_reconcile_options *o;
	int last_rc;
	int landed;
	lease_oid new_oid;
} reap_op;

/* The state the sweep read of @p e: every action's CAS is from its oid. */
static void swept_state(lease_ref_state *s, const lease_reconcile_entry *e)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", e->name);
	s->present = 1;
	s->oid = e->oid;
	s->commit.oid = e->oid;
	s->commit.is_commit = 1;
	s->payload = e->payload;
}

/* The released payload of a reap (protocol.md §7): token and transitions
 * kept, the reaper's identity; written only over the state the sweep read. */
static lease_step reap_plan(void *ctx, const lease_round *r, lease_plan *pl)
{
	reap_op *ro = ctx;
	lease_reconcile_entry *e = ro->e;
	lease_payload *p = &pl->p;
	char err[256];
	int rc;

	if (r->writes > 0) { /* the write neither landed nor lost: do not write again */
		lease__rec_skip(ro->r, e, ro->last_rc, "reap", "outcome not verified: %s",
		                lease_store_last_error(r->st));
		return lease_step_done(0);
	}
	*p = e->payload;
	if ((rc = lease_payload_writable(p, err, sizeof(err))) < 0) {
		lease__rec_skip(ro->r, e, rc, "reap", "%s", err);
		return lease_step_done(0);
	}
	lease__payload_stamp(p);
	snprintf(p->owner, sizeof(p->owner), "%s",
	         ro->o->owner ? ro->o->owner : "reflease-reconcile");
	snprintf(p->host, sizeof(p->host), "%s", ro->o->host ? ro->o->host : "localhost");
	/* a released payload is no heartbeat: it counts none (protocol.md §2) */
	p->has_heartbeats = p->has_previous_heartbeat = 0;
	p->heartbeats = p->previous_heartbeat_at = 0;
	lease__policy_released(p, r->now);
	if ((rc = lease_random_hex(p->nonce, LEASE_NONCE_HEXSZ / 2, lease_store_random(r->st))) <
	            0 ||
	    (rc = lease_payload_validate(p, err, sizeof(err))) < 0) {
		lease__rec_skip(ro->r, e, rc, "reap", "cannot build the released payload: %s",
		                rc == LEASE_EPAYLOAD ? err : lease_error_id(rc));
		return lease_step_done(0);
	}
	pl->op = LEASE_OP_REAP;
	return lease_step_write();
}

static lease_step reap_landed(void *ctx, const lease_round *r, const lease_written *w)
{
	reap_op *ro = ctx;

	(void)r;
	ro->landed = 1;
	ro->new_oid = w->oid;
	return lease_step_done(0);
}

/* A lost CAS is skipped, never retried: the sweep decided from the state it
 * read; an unknown outcome settles by re-reading (§5). */
static lease_step reap_failed(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
                              const char *msg)
{
	reap_op *ro = ctx;
	char hex[LEASE_OID_HEXSZ + 1];

	if (why == LEASE_FAIL_LOST) {
		const lease_cas_error *ce;

		ro->last_rc = rc;
		if (rc != LEASE_ECAS)
			return lease_step_settle();
		ce = lease_store_last_cas_error(r->st);
		if (ce->observed_present)
			lease_oid_tohex(hex, &ce->observed);
		lease__rec_skip(ro->r, ro->e, LEASE_ECAS, "reap",
		                "a concurrent write won: the ref is now %s",
		                ce->observed_present ? hex : "absent");
		return lease_step_done(LEASE_ECAS);
	}
	if (why == LEASE_FAIL_ERROR)
		lease__rec_skip(ro->r, ro->e, rc, "reap", "%s",
		                msg ? msg : lease_store_last_error(r->st));
	else
		lease__rec_skip(ro->r, ro->e, rc, "reap", "outcome not verified: %s",
		                msg ? msg : lease_store_last_error(r->st));
	return lease_step_done(rc);
}

static const lease_engine_ops reap_ops = {reap_plan, reap_landed, reap_failed};

void lease__rec_reap(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st,
                     const lease_reconcile_options *o)
{
	reap_op ro;
	lease_ref_state first;

	memset(&ro, 0, sizeof(ro));
	ro.r = r;
	ro.e = e;
	ro.o = o;
	swept_state(&first, e);
	/* paced: one operation of a burst (issue 15) */
	lease__engine_run(st, e->name, &reap_ops, &ro, &first, 1);
	if (!ro.landed)
		return;
	e->action = LEASE_ACTION_REAPED;
	e->action_kind = "reap";
	e->action_oid = ro.new_oid;
	r->reaped++;
}

/* ---- prune: the archive ref, then the delete through the engine ---------- */

typedef struct prune_op {
	lease_reconcile_report *r;
	lease_reconcile_entry *e;
	const char *archive; /* the archive ref written (kept whatever happens) */
	int landed;
} prune_op;

/* Delete the lease as the sweep read it, by CAS from its oid (§7); a lease
 * written since is not pruned. */
static lease_step prune_plan(void *ctx, const lease_round *r, lease_plan *pl)
{
	prune_op *po = ctx;
	char hex[LEASE_OID_HEXSZ + 1];

	(void)pl;
	if (r->s->present && lease_oid_equal(&r->s->oid, &po->e->oid))
		return lease_step_delete();
	if (r->s->present)
		lease_oid_tohex(hex, &r->s->oid);
	lease__rec_skip(po->r, po->e, LEASE_ECAS, "prune",
	                "the lease changed since it was read (archive %s kept): the ref is now %s",
	                po->archive, r->s->present ? hex : "absent");
	return lease_step_done(LEASE_ECAS);
}

static lease_step prune_landed(void *ctx, const lease_round *r, const lease_written *w)
{
	prune_op *po = ctx;

	(void)r;
	(void)w;
	po->landed = 1;
	return lease_step_done(0);
}

/* A delete lost, unverified or unanswered settles by re-reading as every
 * write does (§5): gone is pruned, changed is skipped, unchanged is retried. */
static lease_step prune_failed(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
                               const char *msg)
{
	prune_op *po = ctx;

	if (why == LEASE_FAIL_LOST)
		return lease_step_settle();
	lease__rec_skip(po->r, po->e, rc, "prune", "%s (archive %s kept): %s",
	                why == LEASE_FAIL_ERROR ? "the delete failed"
	                                        : "the delete was not verified",
	                po->archive, msg ? msg : lease_store_last_error(r->st));
	return lease_step_done(rc);
}

static const lease_engine_ops prune_ops = {prune_plan, prune_landed, prune_failed};

void lease__rec_prune(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st)
{
	char refname[512];
	lease_ref_state first;
	prune_op po;
	int rc;

	if (lease__archive_refname(refname, sizeof(refname), r->ns, e->name, &e->payload) < 0) {
		lease__rec_skip(r, e, LEASE_EINVALID, "prune", "archive ref name too long");
		return;
	}
	lease__store_pace(st); /* one operation of a burst (issue 15) */
	rc = lease_cas_create_ref(st, refname, &e->oid);
	if (rc == LEASE_ECAS) {
		const lease_cas_error *ce = lease_store_last_cas_error(st);
		if (ce->observed_present && lease_oid_equal(&ce->observed, &e->oid))
			rc = 0; /* an existing archive ref with the same oid counts as done */
	}
	if (rc < 0) {
		/* the create's own message (the primitive's names the ref) */
		lease__rec_skip(r, e, rc, "prune", "%s", lease_store_last_error(st));
		return;
	}
	if (!(e->archive_ref = strdup(refname))) {
		lease__rec_skip(r, e, LEASE_ENOMEM, "prune", "out of memory");
		return;
	}
	memset(&po, 0, sizeof(po));
	po.r = r;
	po.e = e;
	po.archive = e->archive_ref;
	swept_state(&first, e);
	/* paced once above: the archive ref and the delete are one operation */
	lease__engine_run(st, e->name, &prune_ops, &po, &first, 0);
	if (!po.landed)
		return;
	e->action = LEASE_ACTION_PRUNED;
	e->action_kind = "prune";
	r->pruned++;
}
