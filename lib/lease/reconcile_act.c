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

/* The released payload of a reap (protocol.md §7): token and transitions
 * kept, the reaper's identity; written only over the state the sweep read. */
static int reap_plan(lease_engine *en, const lease_ref_state *s, int64_t now, lease_plan *pl)
{
	reap_op *ro = en->ctx;
	lease_reconcile_entry *e = ro->e;
	lease_payload *p = &pl->p;
	char err[256];
	int rc;

	(void)s;
	if (en->nw > 0) { /* the write neither landed nor lost: do not write again */
		lease__rec_skip(ro->r, e, ro->last_rc, "reap", "outcome not verified: %s",
		                lease_store_last_error(en->st));
		return 1;
	}
	*p = e->payload;
	if ((rc = lease_payload_writable(p, err, sizeof(err))) < 0) {
		lease__rec_skip(ro->r, e, rc, "reap", "%s", err);
		return 1;
	}
	snprintf(p->sdlc_version, sizeof(p->sdlc_version), "%s", SDLC_VERSION);
	p->version_major = SDLC_VERSION_MAJOR;
	p->version_minor = SDLC_VERSION_MINOR;
	p->version_patch = SDLC_VERSION_PATCH;
	snprintf(p->owner, sizeof(p->owner), "%s",
	         ro->o->owner ? ro->o->owner : "reflease-reconcile");
	snprintf(p->host, sizeof(p->host), "%s", ro->o->host ? ro->o->host : "localhost");
	/* a released payload is no heartbeat: it counts none (protocol.md §2) */
	p->has_heartbeats = p->has_previous_heartbeat = 0;
	p->heartbeats = p->previous_heartbeat_at = 0;
	lease__policy_released(p, now);
	if ((rc = lease_random_hex(p->nonce, LEASE_NONCE_HEXSZ / 2, lease_store_random(en->st))) <
	            0 ||
	    (rc = lease_payload_validate(p, err, sizeof(err))) < 0) {
		lease__rec_skip(ro->r, e, rc, "reap", "cannot build the released payload: %s",
		                rc == LEASE_EPAYLOAD ? err : lease_error_id(rc));
		return 1;
	}
	pl->op = LEASE_OP_REAP;
	return 0;
}

static int reap_landed(lease_engine *en, const lease_ref_state *s, size_t idx, int64_t now)
{
	reap_op *ro = en->ctx;

	(void)s;
	(void)now;
	ro->landed = 1;
	ro->new_oid = en->w[idx].oid;
	en->rc = 0;
	return 1;
}

/* A lost CAS is skipped, never retried: the sweep decided from the state it read. */
static int reap_lost(lease_engine *en, const lease_ref_state *s, int rc)
{
	reap_op *ro = en->ctx;
	char hex[LEASE_OID_HEXSZ + 1];

	(void)s;
	ro->last_rc = rc;
	if (rc != LEASE_ECAS)
		return 1; /* unknown outcome: settle by re-reading (§5) */
	{
		const lease_cas_error *ce = lease_store_last_cas_error(en->st);
		if (ce->observed_present)
			lease_oid_tohex(hex, &ce->observed);
		lease__rec_skip(ro->r, ro->e, LEASE_ECAS, "reap",
		                "a concurrent write won: the ref is now %s",
		                ce->observed_present ? hex : "absent");
	}
	en->rc = LEASE_ECAS;
	return 0;
}

static int reap_fail(lease_engine *en, const lease_ref_state *s, lease_engine_failure why, int rc,
                     const char *msg)
{
	reap_op *ro = en->ctx;

	(void)s;
	if (why == LEASE_FAIL_ERROR)
		lease__rec_skip(ro->r, ro->e, rc, "reap", "%s",
		                msg ? msg : lease_store_last_error(en->st));
	else
		lease__rec_skip(ro->r, ro->e, rc, "reap", "outcome not verified: %s",
		                msg ? msg : lease_store_last_error(en->st));
	return rc;
}

static const lease_engine_ops reap_ops = {reap_plan, reap_landed, NULL, reap_lost, reap_fail};

void lease__rec_reap(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st,
                     const lease_reconcile_options *o)
{
	reap_op ro;
	lease_ref_state first;
	lease_engine *en;

	memset(&ro, 0, sizeof(ro));
	ro.r = r;
	ro.e = e;
	ro.o = o;
	/* the state the sweep read: the CAS is from its oid */
	memset(&first, 0, sizeof(first));
	snprintf(first.name, sizeof(first.name), "%s", e->name);
	first.present = 1;
	first.oid = e->oid;
	first.commit.oid = e->oid;
	first.commit.is_commit = 1;
	first.payload = e->payload;
	/* paced: one operation of a burst (issue 15) */
	if (!(en = lease__engine_new(st, e->name, &reap_ops, &ro, &first, 1))) {
		lease__rec_skip(r, e, LEASE_ENOMEM, "reap", "out of memory");
		return;
	}
	lease__engine_run(en);
	free(en);
	if (!ro.landed)
		return;
	e->action = LEASE_ACTION_REAPED;
	e->action_kind = "reap";
	e->action_oid = ro.new_oid;
	r->reaped++;
}

void lease__rec_prune(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st)
{
	char ts[LEASE_TIME_STRSZ + 1], compact[17], refname[512], why[1024];
	lease_ref_state now_state;
	int rc, n;

	/* refs/<ns>-archive/<name>/<YYYYMMDDTHHMMSSZ>-<first 8 hex of token> (§1) */
	lease_time_format(ts, e->payload.expires_at);
	snprintf(compact, sizeof(compact), "%.4s%.2s%.2sT%.2s%.2s%.2sZ", ts, ts + 5, ts + 8,
	         ts + 11, ts + 14, ts + 17);
	n = snprintf(refname, sizeof(refname), "refs/%s-archive/%s/%s-%.8s", r->ns, e->name,
	             compact, e->payload.lease_token);
	if (n < 0 || (size_t)n >= sizeof(refname)) {
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
	rc = lease_cas_delete(st, e->name, &e->oid);
	/* the delete's own reason, before a re-read replaces the message */
	snprintf(why, sizeof(why), "%s", lease_store_last_error(st));
	if (rc < 0 && rc != LEASE_ECAS) {
		memset(&now_state, 0, sizeof(now_state));
		if (lease_fetch_ref(&now_state, st, e->name) == 0 && !now_state.present)
			rc = 0;
		lease_ref_state_clear(&now_state);
	}
	if (rc < 0) {
		lease__rec_skip(r, e, rc, "prune", "%s (archive %s kept): %s",
		                rc == LEASE_ECAS ? "the lease changed since it was read"
		                                 : "the delete failed",
		                refname, why);
		return;
	}
	e->action = LEASE_ACTION_PRUNED;
	e->action_kind = "prune";
	r->pruned++;
}
