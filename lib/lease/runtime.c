/* The lease runtime (protocol.md §4–§6): every operation is a
 * read-lease__rt_decide-CAS loop over the primitives that settles failed, unverified
 * or unanswered writes, with the token changed by the owner-keyed rotation
 * matrix (rotation.c). */
#include "reflease/runtime.h"
#include "lease/commit.h"
#include "lease/door.h"
#include "lease/op.h"
#include "lease/policy.h"
#include "lease/rotation.h"
#include "lease/schemas.h"
#include "lease/ticket.h"
#include "lease/wait.h"
#include "reflease/version.h"
#include "store/frontend.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFRESH_MAX 2 /* extra preserving writes after a late success (F15) */

static const lease_op kind_op[] = {LEASE_OP_ACQUIRE,   LEASE_OP_HEARTBEAT, LEASE_OP_TRANSITION,
                                   LEASE_OP_REACQUIRE, LEASE_OP_RELEASE,   LEASE_OP_BREAK};
const lease_status_id lease__rt_kind_success[] = {
        LEASE_STATUS_ACQUIRED,   LEASE_STATUS_RENEWED,  LEASE_STATUS_TRANSITIONED,
        LEASE_STATUS_REACQUIRED, LEASE_STATUS_RELEASED, LEASE_STATUS_BROKEN};

int lease__rt_live_kind(op_kind k)
{
	return k == OP_ACQUIRE || k == OP_HEARTBEAT || k == OP_TRANSITION || k == OP_REACQUIRE;
}

/* ---- helpers (public) ---------------------------------------------------- */

int lease_ttl_validate(const lease_store *st, int64_t ttl_seconds, char *err, size_t errlen)
{
	int lo = lease_store_ttl_min(st), hi = lease_store_ttl_max(st);

	if (ttl_seconds < lo || ttl_seconds > hi) {
		lease__error_set(err, errlen,
		                 "invalid TTL %lld: must be whole seconds in %d..%d on a %s store",
		                 (long long)ttl_seconds, lo, hi, lease_store_kind(st));
		return LEASE_EINVALID;
	}
	return 0;
}

/* The public faces of the policy that need a store's figures: read here and
 * passed in (policy.c stays pure, issue 38). */
int lease_payload_expired(const lease_store *st, const lease_payload *p, int64_t now)
{
	return lease__policy_expired(p, now, lease_store_skew_margin(st));
}

int64_t lease_payload_kept_ttl(const lease_store *st, const lease_payload *p, int *approximate)
{
	return lease__policy_kept_ttl(p, lease_store_ttl_min(st), approximate);
}

/* ---- input validation (before any I/O: F08) ------------------------------ */

static int check_identity(op_ctx *c)
{
	lease_payload probe;
	char err[256];
	const lease_op_options *o = c->o;

	if (!o->owner || !*o->owner || !o->host || !*o->host)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID,
		                             "an owner and a host are required for %s",
		                             lease_op_name(kind_op[c->kind]));
	memset(&probe, 0, sizeof(probe));
	lease__payload_stamp(&probe);
	snprintf(probe.name, sizeof(probe.name), "%s", c->name);
	if (strlen(o->owner) > LEASE_IDENT_MAX || strlen(o->host) > LEASE_IDENT_MAX)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID,
		                             "owner and host are at most %d bytes",
		                             LEASE_IDENT_MAX);
	snprintf(probe.owner, sizeof(probe.owner), "%s", o->owner);
	snprintf(probe.host, sizeof(probe.host), "%s", o->host);
	probe.phase = LEASE_PHASE_CLAIMED;
	memset(probe.lease_token, '0', LEASE_TOKEN_HEXSZ);
	memset(probe.nonce, '0', LEASE_NONCE_HEXSZ);
	probe.acquired_at = 1700000000;
	probe.expires_at = probe.acquired_at + LEASE_TTL_DEFAULT;
	probe.has_ttl = 1;
	probe.ttl_seconds = LEASE_TTL_DEFAULT;
	if (lease_payload_validate(&probe, err, sizeof(err)) < 0)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID, "invalid identity: %s",
		                             err);
	return 0;
}

int lease__rt_check_inputs(op_ctx *c)
{
	const lease_op_options *o = c->o;
	char err[256];
	int rc;

	if (!c->name || lease_ref_name_validate(c->name, err, sizeof(err)) < 0)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID, "%s",
		                             c->name ? err : "name: none given");
	if (!o || o->version != LEASE_OP_OPTIONS_VERSION)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID,
		                             "lease options missing or of an unsupported version");
	if ((rc = check_identity(c)) < 0)
		return rc;
	if (lease__rt_live_kind(c->kind) && o->ttl_seconds != 0 &&
	    lease_ttl_validate(c->st, o->ttl_seconds, err, sizeof(err)) < 0)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID, "%s", err);
	if (c->kind == OP_ACQUIRE && o->phase != LEASE_PHASE_NONE &&
	    o->phase != LEASE_PHASE_CLAIMED && o->phase != LEASE_PHASE_WORKING &&
	    o->phase != LEASE_PHASE_REVIEW)
		return lease__rt_result_fail(
		        c->out, c->st, LEASE_EINVALID,
		        "invalid phase: acquire starts in claimed, working or review");
	if (c->kind == OP_TRANSITION && o->to != LEASE_PHASE_CLAIMED &&
	    o->to != LEASE_PHASE_WORKING && o->to != LEASE_PHASE_REVIEW)
		return lease__rt_result_fail(
		        c->out, c->st, LEASE_EINVALID,
		        "invalid target phase: one of claimed, working, review");
	return 0;
}

/* ---- reading the chain --------------------------------------------------- */

static int max_visit(const lease_oid *oid, const lease_commit *cm, void *payload)
{
	int64_t *best = payload;
	lease_lenient l;

	(void)oid;
	/* read leniently: a payload this build rejects still counts (§5) */
	if (cm && cm->message) {
		lease__lenient_read(&l, cm->message);
		if (l.transitions > *best)
			*best = l.transitions;
	}
	return 0;
}

/* Objects a break over an unreadable tip looks at for its chain, at most. */
#define SCAN_MAX_OBJECTS 4000000

static int max_scan_visit(const char *msg, void *payload)
{
	int64_t *best = payload;
	lease_lenient l;

	lease__lenient_read(&l, msg);
	if (l.transitions > *best)
		*best = l.transitions;
	return 0;
}

/* Highest transitions readable (leniently) in the chain from the tip or in
 * the lease's archives (break over an unreadable tip, §5, §7); -1 when none
 * is readable. When the tip itself is no readable commit (its object
 * missing, a symbolic, garbled or unreadable ref file), its chain cannot be
 * walked from it but is still in the object store: the store's commits of
 * this name are scanned (local stores), so the fencing generation never
 * goes backwards (issue 23; etcd-io/etcd#16028, F34); one more for a tip
 * whose own object is missing. */
static int64_t chain_max_transitions(op_ctx *c, const lease_ref_state *s)
{
	int64_t best = -1, archived = -1;
	char prefix[LEASE_NAME_MAX + 3];
	int found = 0;

	if (lease_fetch_archive_max_transitions(&archived, &found, c->st, c->name) == 0 && found)
		best = archived;
	if (!s->present)
		return best;
	if (s->commit.is_commit) {
		lease__walk_chain(c->st, &s->oid, &s->commit, LEASE_SETTLE_WALK_MAX, max_visit,
		                  &best);
		return best;
	}
	snprintf(prefix, sizeof(prefix), "%s: ", c->name);
	(void)lease__scan_commits(c->st, prefix, SCAN_MAX_OBJECTS, max_scan_visit, &best);
	/* A tip whose object is missing may have issued one generation more
	 * than its parent (a rotating write adds 1) and nobody can read it: the
	 * next one exceeds that too (F34). A symbolic ref or a non-commit issued
	 * nothing; an empty, garbled or unreadable ref file's commit is still in
	 * the store, where the scan saw it. */
	if (s->commit.missing)
		best = best >= 0 ? best + 1 : 0;
	return best;
}

/* Lenient look at an unreadable payload for break (F27, protocol.md §5):
 * 1 when it shows a live phase whose expires_at is still ahead, 0 when it
 * shows the lease free (a visible "released", or an expires_at that parses
 * and is past), -1 when nothing in it tells (no commit, no readable
 * expires_at): break needs --force then. */
static int lenient_live(op_ctx *c, const lease_ref_state *s, int64_t now)
{
	lease_lenient l;

	if (!s->commit.is_commit || !s->commit.message)
		return -1;
	lease__lenient_read(&l, s->commit.message);
	if (l.released)
		return 0;
	if (!l.has_expires)
		return -1;
	return !lease__policy_past_expiry(l.expires_at, now, lease_store_skew_margin(c->st));
}

/* ---- deciding ------------------------------------------------------------ */

static void payload_base(lease_payload *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	lease__payload_stamp(n);
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->has_ttl = 1;
}

static void no_write(decision *d, lease_status_id status, int code, int holds, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static void no_write(decision *d, lease_status_id status, int code, int holds, const char *fmt, ...)
{
	va_list ap;

	d->write = 0;
	d->status = status;
	d->code = code;
	d->holds_token = holds;
	va_start(ap, fmt);
	vsnprintf(d->message, sizeof(d->message), fmt, ap);
	va_end(ap);
}

/* The TTL a live write grants (§6): the option; else the stored ttl_seconds
 * when the token is preserved (300 for pre-bump, raised to the store
 * minimum); else the store's default (300; 450 on github:). */
static int64_t effective_ttl(op_ctx *c, const lease_payload *cur, lease_token_change ch)
{
	int64_t ttl;
	int approx = 0;

	if (c->o->ttl_seconds > 0)
		return c->o->ttl_seconds;
	if (ch != LEASE_TOKEN_PRESERVE || !cur)
		return lease_store_ttl_default(c->st); /* 450 on github: (issue 39) */
	ttl = lease__policy_kept_ttl(cur, lease_store_ttl_min(c->st), &approx);
	if (approx)
		c->approximate = 1;
	return ttl;
}

static int fill_nonce(op_ctx *c, lease_payload *n)
{
	int rc = lease_random_hex(n->nonce, LEASE_NONCE_HEXSZ / 2, lease_store_random(c->st));
	if (rc < 0)
		return lease__rt_result_fail(c->out, c->st, rc, "no randomness for the nonce");
	return 0;
}

/* A live write (acquire, heartbeat, transition, reacquire). */
static int plan_live(op_ctx *c, decision *d, const lease_payload *cur, lease_token_change ch,
                     lease_phase phase, int64_t now)
{
	int64_t base = 0;
	int rc;

	if (!cur && ch == LEASE_TOKEN_MINT) {
		int64_t max = 0;
		int found = 0;
		if ((rc = lease_fetch_archive_max_transitions(&max, &found, c->st, c->name)) < 0)
			return lease__rt_result_fail(c->out, c->st, rc, NULL);
		base = lease__policy_next_generation(found ? max : -1);
	}
	payload_base(&d->next, c->name);
	d->next.phase = phase;
	if ((rc = lease__rotation_apply(&d->next, cur, ch, c->o->owner, c->o->host, now, base,
	                                lease_store_random(c->st))) < 0)
		return lease__rt_result_fail(c->out, c->st, rc, "could not change the token");
	d->ttl = effective_ttl(c, cur, ch);
	d->next.ttl_seconds = d->ttl;
	d->next.expires_at = now + d->ttl;
	d->write = 1;
	d->live_write = 1;
	d->holds_token = 1;
	d->token_changed = ch != LEASE_TOKEN_PRESERVE;
	d->built_at = now;
	return fill_nonce(c, &d->next);
}

/* A `released` write (release, break): lease__policy_released(), the
 * releaser's identity, the token kept (or minted over garbage). */
static int plan_released(op_ctx *c, decision *d, const lease_payload *cur, int64_t now,
                         int64_t chain_max)
{
	int rc;

	payload_base(&d->next, c->name);
	d->next.phase = LEASE_PHASE_RELEASED;
	if (cur) {
		lease__rotation_apply(&d->next, cur, LEASE_TOKEN_PRESERVE, NULL, NULL, now, 0,
		                      NULL);
	} else {
		if ((rc = lease__rotation_apply(&d->next, NULL, LEASE_TOKEN_MINT, NULL, NULL, now,
		                                lease__policy_next_generation(chain_max),
		                                lease_store_random(c->st))) < 0)
			return lease__rt_result_fail(c->out, c->st, rc, "could not mint a token");
		d->token_changed = 1;
	}
	snprintf(d->next.owner, sizeof(d->next.owner), "%s", c->o->owner);
	snprintf(d->next.host, sizeof(d->next.host), "%s", c->o->host);
	lease__policy_released(&d->next, now);
	d->ttl = 0;
	d->write = 1;
	d->built_at = now;
	return fill_nonce(c, &d->next);
}

static int check_writable(op_ctx *c, const lease_payload *cur)
{
	char err[256];

	if (cur && lease_payload_writable(cur, err, sizeof(err)) < 0)
		return lease__rt_result_fail(c->out, c->st, LEASE_EVERSION, "%s", err);
	return 0;
}

static void holder_msg(decision *d, const lease_payload *cur, const char *what)
{
	char t[LEASE_TIME_STRSZ + 1];

	lease_time_format(t, cur->expires_at);
	snprintf(d->message, sizeof(d->message), "%s by %s on %s until %s", what, cur->owner,
	         cur->host, t);
}

/* The heartbeat floor (§6), after the token and relation checks: 1 with
 * @p d "not due" when the last heartbeat of @p cur is too recent; a TTL asked
 * that differs from the stored one is always due. */
static int heartbeat_not_due(op_ctx *c, decision *d, const lease_payload *cur,
                             lease_token_change ch, int64_t now)
{
	int64_t ttl_new = effective_ttl(c, cur, ch), stored, hb;
	int approx = 0, same_ttl;

	stored = lease_payload_ttl(cur, ttl_new, &approx);
	same_ttl = c->o->ttl_seconds <= 0 || (cur->has_ttl && stored == ttl_new);
	if (approx)
		c->approximate = 1;
	hb = cur->expires_at - stored;
	if (lease__policy_heartbeat_due(now - hb, stored, !same_ttl, cur->expires_at - now,
	                                ttl_new))
		return 0;
	if (now - hb < 0) /* pre-bump, written with a longer TTL */
		no_write(d, LEASE_STATUS_NOT_DUE, 0, 1,
		         "heartbeat not due: %lld s left, more than the %lld s TTL assumed for "
		         "this pre-bump payload",
		         (long long)(cur->expires_at - now), (long long)stored);
	else
		no_write(d, LEASE_STATUS_NOT_DUE, 0, 1,
		         "heartbeat not due: last one %lld s ago, floor %lld s (%s)",
		         (long long)(now - hb), (long long)lease__policy_floor(stored),
		         approx ? "approximate" : "exact");
	return 1;
}

/* break (§5): over a released or absent lease nothing; over a live one only
 * with --force; an unreadable payload that looks live needs --force too. */
static int decide_break(op_ctx *c, const lease_ref_state *s, const lease_payload *cur, int expired,
                        int64_t now, decision *d)
{
	int live;

	if (!s->present || (cur && cur->phase == LEASE_PHASE_RELEASED)) {
		no_write(d, LEASE_STATUS_ALREADY_RELEASED, 0, 0, "%s",
		         cur ? "the lease is already released" : "the lease does not exist");
		return 0;
	}
	live = cur ? !expired : lenient_live(c, s, now);
	if (!c->o->force && live < 0)
		return lease__rt_result_fail(
		        c->out, c->st, s->payload_rc,
		        "%s: unreadable %s: %s; nothing readable shows the lease free, "
		        "so break needs --force",
		        c->out->ref, s->commit.unreadable ? "ref" : "payload", s->payload_error);
	if (!c->o->force && live) {
		no_write(d, LEASE_STATUS_HELD, LEASE_EHELD, 0, "x");
		if (cur)
			holder_msg(d, cur, "live lease held (break --force to override)");
		else
			snprintf(d->message, sizeof(d->message),
			         "unreadable payload that looks live (break --force to override)");
		return 0;
	}
	return plan_released(c, d, cur, now, cur ? -1 : chain_max_transitions(c, s));
}

/* What decide() knows of the state read: the payload (NULL when absent or
 * unreadable), the caller's relation to it, expiry, and whether the token
 * presented is the lease's current one. */
typedef struct seen {
	const lease_payload *cur;
	lease_relation rel;
	int expired;
	int tok_cur;
} seen;

/* Our own landed write came too late (F15): extend it once more. */
static int decide_refresh(op_ctx *c, const seen *v, int64_t now, decision *d)
{
	int rc;

	if (!v->tok_cur || v->expired) {
		no_write(d, LEASE_STATUS_NOT_HOLDER, LEASE_ENOTHOLDER, 0,
		         "the lease was granted too late and lost before it could be extended");
		return 0;
	}
	if ((rc = plan_live(c, d, v->cur, LEASE_TOKEN_PRESERVE, v->cur->phase, now)) < 0)
		return rc;
	d->sop = LEASE_OP_HEARTBEAT;
	return 0;
}

static int decide_acquire(op_ctx *c, const seen *v, int64_t now, decision *d)
{
	const lease_op_options *o = c->o;
	int rc;

	if (v->cur && v->rel != LEASE_REL_FRESH && !v->expired) {
		if (v->rel == LEASE_REL_SAME)
			no_write(d, LEASE_STATUS_ALREADY_HELD, LEASE_EHELD, 0, "x");
		else
			no_write(d, LEASE_STATUS_HELD, LEASE_EHELD, 0, "x");
		holder_msg(d, v->cur,
		           v->rel == LEASE_REL_SAME
		                   ? "already held (re-entry is reacquire with the token)"
		                   : "held");
		return 0;
	}
	if ((rc = check_writable(c, v->cur)) < 0)
		return rc;
	if ((rc = plan_live(c, d, v->cur, lease__token_rule(v->rel, 0),
	                    o->phase == LEASE_PHASE_NONE ? LEASE_PHASE_CLAIMED : o->phase, now)) <
	            0 ||
	    !c->entry)
		return rc;
	/* who waited how long: on the acquire commit only (§2, §5) */
	d->next.has_queued_at = 1;
	d->next.queued_at = c->entry->queued_at < now ? c->entry->queued_at : now;
	d->next.queue_position = c->entry->queue_position;
	return 0;
}

/* heartbeat, transition, reacquire: the holder's own writes */
static int decide_holder(op_ctx *c, const seen *v, int64_t now, decision *d)
{
	const lease_payload *cur = v->cur;
	lease_token_change ch;
	char t[LEASE_TIME_STRSZ + 1];
	int rc;

	if (v->rel == LEASE_REL_FRESH) {
		no_write(d, LEASE_STATUS_NOT_HOLDER, LEASE_ENOTHOLDER, 0, "%s",
		         cur ? "the lease was released" : "the lease does not exist");
		return 0;
	}
	if (!v->tok_cur) {
		no_write(d, LEASE_STATUS_NOT_HOLDER, LEASE_ENOTHOLDER, 0,
		         "the presented token is not the lease's current token");
		return 0;
	}
	if (v->expired && c->kind != OP_REACQUIRE) {
		lease_time_format(t, cur->expires_at);
		no_write(d, LEASE_STATUS_EXPIRED, LEASE_EEXPIRED, 0,
		         "the lease expired at %s; reacquire it with the token", t);
		return 0;
	}
	if (c->kind == OP_TRANSITION && c->o->to == cur->phase)
		return lease__rt_result_fail(c->out, c->st, LEASE_EINVALID,
		                             "the lease is already in phase %s",
		                             lease_phase_name(cur->phase));
	ch = lease__token_rule(v->rel, 1);
	if (c->kind == OP_HEARTBEAT && ch == LEASE_TOKEN_PRESERVE &&
	    heartbeat_not_due(c, d, cur, ch, now))
		return 0;
	if ((rc = check_writable(c, cur)) < 0)
		return rc;
	return plan_live(c, d, cur, ch, c->kind == OP_TRANSITION ? c->o->to : cur->phase, now);
}

static int decide_release(op_ctx *c, const seen *v, int64_t now, decision *d)
{
	int rc;

	if (v->rel == LEASE_REL_FRESH) {
		no_write(d, LEASE_STATUS_ALREADY_RELEASED, 0, 0, "%s",
		         v->cur ? "the lease is already released" : "the lease does not exist");
		return 0;
	}
	if (!v->tok_cur) {
		no_write(d, LEASE_STATUS_NOT_OWNER, 0, 0,
		         "the presented token is not current; nothing written");
		return 0;
	}
	if ((rc = check_writable(c, v->cur)) < 0)
		return rc;
	return plan_released(c, d, v->cur, now, -1);
}

int lease__rt_decide(op_ctx *c, const lease_ref_state *s, int64_t now, decision *d)
{
	const char *tok = c->refreshing ? c->mytoken : c->o->lease_token;
	seen v;

	memset(d, 0, sizeof(*d));
	d->sop = kind_op[c->kind];
	if (s->present && s->payload_rc != 0 && c->kind != OP_BREAK)
		return lease__rt_result_fail(c->out, c->st, s->payload_rc, "%s: unreadable %s: %s",
		                             c->out->ref, s->commit.unreadable ? "ref" : "payload",
		                             s->payload_error);
	v.cur = s->present && s->payload_rc == 0 ? &s->payload : NULL;
	v.rel = lease__relation_of(v.cur, c->o->owner, c->o->host);
	v.expired = v.cur && lease_payload_expired(c->st, v.cur, now);
	v.tok_cur = v.rel != LEASE_REL_FRESH && tok && *tok && strcmp(tok, v.cur->lease_token) == 0;
	c->cut_n = 0;
	if (c->kind == OP_ACQUIRE && !c->refreshing && v.cur && v.rel != LEASE_REL_FRESH &&
	    !v.expired && v.cur->has_set) {
		/* a set write cut by a crash holds nothing ("Sets") */
		int cut = lease__set_cut_read(c, v.cur);
		if (cut < 0)
			return lease__rt_result_fail(c->out, c->st, cut, NULL);
		v.expired = cut;
	}
	if (c->refreshing)
		return decide_refresh(c, &v, now, d);
	switch (c->kind) {
	case OP_ACQUIRE: return decide_acquire(c, &v, now, d);
	case OP_HEARTBEAT:
	case OP_TRANSITION:
	case OP_REACQUIRE: return decide_holder(c, &v, now, d);
	case OP_RELEASE: return decide_release(c, &v, now, d);
	default: /* OP_BREAK */ return decide_break(c, s, v.cur, v.expired, now, d);
	}
}

/* ---- writing ------------------------------------------------------------- */

/* The shape of a heartbeat's commit (protocol.md §2 "Heartbeats replace
 * heartbeats"): over a tip that is itself a heartbeat of the same tenure
 * (summary op heartbeat; token, transitions, acquired_at, phase and
 * ttl_seconds unchanged) whose parent is known, the new heartbeat replaces
 * it: written on the tip's parent, counting one more heartbeat and carrying
 * the replaced one's heartbeat time. Anything else (the first heartbeat of a
 * tenure or after a transition, a TTL change, a pre-bump tip) is appended
 * and starts a run of 1. Either way the CAS is from the tip as read. */
static void heartbeat_shape(decision *d, const lease_ref_state *s)
{
	const lease_payload *cur = s->present && s->payload_rc == 0 ? &s->payload : NULL;
	lease_payload *n = &d->next;

	n->has_heartbeats = 1;
	n->heartbeats = 1;
	n->has_previous_heartbeat = 0;
	d->replace = 0;
	if (!cur || s->op != LEASE_OP_HEARTBEAT || !s->commit.has_parent || !cur->has_ttl ||
	    cur->phase == LEASE_PHASE_RELEASED || cur->phase != n->phase ||
	    cur->ttl_seconds != n->ttl_seconds || cur->transitions != n->transitions ||
	    cur->acquired_at != n->acquired_at || strcmp(cur->lease_token, n->lease_token) != 0 ||
	    lease__policy_heartbeat_time(cur, 0, NULL) > lease__policy_heartbeat_time(n, 0, NULL))
		return;
	d->replace = 1;
	d->parent = s->commit.parent;
	n->heartbeats = (cur->has_heartbeats ? cur->heartbeats : 1) + 1;
	n->has_previous_heartbeat = 1;
	n->previous_heartbeat_at = lease__policy_heartbeat_time(cur, 0, NULL);
}

/* ---- finishing ----------------------------------------------------------- */

int lease__rt_finish_no_write(op_ctx *c, const lease_ref_state *s, const decision *d)
{
	lease_result *out = c->out;

	lease__rt_result_state(out, s);
	out->status = d->status;
	out->code = d->code;
	out->holds_token = d->holds_token;
	out->token_rotated = 0;
	out->approximate_ttl = c->approximate;
	snprintf(out->message, sizeof(out->message), "%s", d->message);
	if (d->code < 0)
		(void)lease__store_set_error(c->st, d->code, "%s: %s", c->name, d->message);
	return d->code;
}

/* Outcome of the landed write @p w (§5). Returns 1 when the operation is
 * finished (out filled, *rc set), 0 to go on (lease__rt_decide again, or refresh). */
static int settle_landed(op_ctx *c, const lease_ref_state *s, const lease_written *w, int64_t now,
                         int *rc)
{
	lease_result *out = c->out;

	c->token_changed |= w->token_changed;
	if (lease__rt_live_kind(c->kind)) {
		const lease_payload *tip = s->payload_rc == 0 ? &s->payload : NULL;
		if (!tip || tip->phase == LEASE_PHASE_RELEASED ||
		    strcmp(tip->lease_token, w->p.lease_token) != 0) {
			/* Landed, then lost since: answer for the current state. */
			if (c->kind == OP_ACQUIRE) {
				if (tip && tip->phase != LEASE_PHASE_RELEASED &&
				    !lease_payload_expired(c->st, tip, now)) {
					decision d;
					memset(&d, 0, sizeof(d));
					holder_msg(&d, tip,
					           "acquired, then lost before it was "
					           "verified; now held");
					d.status = LEASE_STATUS_HELD;
					d.code = LEASE_EHELD;
					*rc = lease__rt_finish_no_write(c, s, &d);
					return 1;
				}
				c->refreshing = 0;
				return 0; /* free or expired again: lease__rt_decide again */
			}
			lease__rt_result_state(out, s);
			out->status = LEASE_STATUS_NOT_HOLDER;
			out->code = *rc = LEASE_ENOTHOLDER;
			snprintf(out->message, sizeof(out->message),
			         "the write landed but the lease was lost since");
			(void)lease__store_set_error(c->st, *rc, "%s: %s", c->name, out->message);
			return 1;
		}
		if (lease__policy_less_than_half_left(w->p.expires_at - now, w->p.ttl_seconds)) {
			/* Success only with half the TTL left (F15). */
			if (c->has_late && lease_oid_equal(&c->late_oid, &w->oid))
				return 0; /* already refreshing this one */
			if (c->refreshes < REFRESH_MAX) {
				c->refreshes++;
				c->has_late = 1;
				c->late_oid = w->oid;
				c->refreshing = 1;
				memcpy(c->mytoken, w->p.lease_token, sizeof(c->mytoken));
				return 0;
			}
			lease__rt_result_state(out, s);
			out->payload = w->p;
			out->has_payload = 1;
			out->holds_token = 1;
			out->approximate_ttl = c->approximate;
			*rc = lease__rt_result_fail(out, c->st, LEASE_EUNVERIFIED,
			                            "granted too late: %lld s of a %lld s TTL left",
			                            (long long)(w->p.expires_at - now),
			                            (long long)w->p.ttl_seconds);
			out->holds_token = 1;
			return 1;
		}
	}
	lease__rt_result_state(out, s);
	out->payload = w->p;
	out->has_payload = 1;
	out->status = lease__rt_kind_success[c->kind];
	out->code = *rc = 0;
	out->holds_token = lease__rt_live_kind(c->kind);
	out->token_rotated = c->token_changed;
	out->approximate_ttl = c->approximate;
	out->now = now;
	if (c->kind == OP_BREAK && c->token_changed)
		snprintf(out->message, sizeof(out->message),
		         "unreadable payload replaced; token minted");
	else
		out->message[0] = '\0';
	return 1;
}

/* The state the caller says it last wrote (lease_op_options.known_oid):
 * used in place of the first read; a stale one only fails the CAS. */
static int known_state(lease_ref_state *s, const op_ctx *c)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", c->name);
	s->present = 1;
	s->oid = *c->opts.known_oid;
	s->commit.oid = s->oid;
	s->commit.is_commit = 1;
	s->payload = *c->opts.known_payload;
	/* a heartbeat commit says so in its payload since 1.2.0 (§2): only
	 * that one is replaced, and only with its parent known */
	s->op = s->payload.has_heartbeats ? LEASE_OP_HEARTBEAT : LEASE_OP_UNKNOWN;
	if (c->opts.known_parent) {
		s->commit.has_parent = 1;
		s->commit.parent = *c->opts.known_parent;
	}
	return 0;
}

/* ---- the engine's decisions (commit.c) ------------------------------------ */

static lease_step rt_plan(void *ctx, const lease_round *r, lease_plan *pl)
{
	op_ctx *c = ctx;
	decision d;
	int rc;

	c->out->now = r->read_at;
	if ((rc = lease__rt_decide(c, r->s, r->now, &d)) < 0) {
		lease__rt_result_state(c->out, r->s);
		c->out->status = LEASE_STATUS_ERROR;
		return lease_step_done(rc);
	}
	if (!d.write)
		return lease_step_done(lease__rt_finish_no_write(c, r->s, &d));
	if (d.sop == LEASE_OP_HEARTBEAT)
		heartbeat_shape(&d, r->s);
	pl->p = d.next;
	pl->op = d.sop;
	pl->replace = d.replace;
	pl->parent = d.parent;
	pl->token_changed = d.token_changed;
	pl->ttl = d.live_write ? d.ttl : 0;
	pl->built_at = d.built_at;
	return lease_step_write();
}

static lease_step rt_landed(void *ctx, const lease_round *r, const lease_written *w)
{
	op_ctx *c = ctx;
	int rc = 0;

	c->out->now = r->read_at;
	if (lease__set_cut_lost(c))
		return lease_step_done(lease__set_cut_answer(c, r->s));
	if (settle_landed(c, r->s, w, r->now, &rc))
		return lease_step_done(rc);
	return lease_step_decide();
}

/* A lost, unverified or unanswered write settles by re-reading (§5); any
 * other failure is the operation's answer. */
static lease_step rt_failed(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
                            const char *msg)
{
	op_ctx *c = ctx;

	if (why == LEASE_FAIL_LOST)
		return lease_step_settle();
	c->out->now = r->read_at;
	rc = msg ? lease__rt_result_fail(c->out, c->st, rc, "%s", msg)
	         : lease__rt_result_fail(c->out, c->st, rc, NULL);
	/* unknown outcome, or a write refused by a held ref lock: the ref as
	 * last read (a wait ending on a stale lock names it, issue 23) */
	if ((why == LEASE_FAIL_UNKNOWN || rc == LEASE_ELOCKED) && r->s)
		lease__rt_result_state(c->out, r->s);
	return lease_step_done(rc);
}

static const lease_engine_ops rt_ops = {rt_plan, rt_landed, rt_failed};

/* Check the inputs, then run the engine with this operation's decisions (§5). */
static int run_op(op_ctx *c)
{
	const lease_ref_state *first = NULL;
	int rc;

	if ((rc = lease__rt_check_inputs(c)) < 0)
		return rc;
	if (c->kind == OP_HEARTBEAT && c->opts.known_oid && c->opts.known_payload) {
		known_state(&c->known, c);
		first = &c->known;
	}
	rc = lease__engine_run(c->st, c->name, &rt_ops, c, first, 0);
	c->out->code = rc;
	return rc;
}

/* A copy of @p s in @p buf when it fits, else @p s itself (too long to be
 * valid anyway: validation rejects it). */
static const char *keep(char *buf, size_t len, const char *s)
{
	if (!s || strlen(s) >= len)
		return s;
	memcpy(buf, s, strlen(s) + 1);
	return buf;
}

op_ctx *lease__rt_ctx_new(op_kind kind, lease_result *out, lease_store *st, const char *name,
                          const lease_op_options *opts)
{
	op_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->kind = kind;
	c->st = st;
	c->name = keep(c->name_buf, sizeof(c->name_buf), name);
	c->o = opts;
	if (opts) {
		c->opts = *opts;
		c->opts.owner = keep(c->owner_buf, sizeof(c->owner_buf), opts->owner);
		c->opts.host = keep(c->host_buf, sizeof(c->host_buf), opts->host);
		c->opts.lease_token = keep(c->token_buf, sizeof(c->token_buf), opts->lease_token);
		c->o = &c->opts;
	}
	c->out = out;
	return c;
}

/* One operation; @p entry (acquire of a fair waiter, else NULL) is recorded
 * in the acquire commit (borrowed for the call). */
static int run_kind_entry(op_kind kind, lease_result *out, lease_store *st, const char *name,
                          const lease_op_options *opts, const queue_entry *entry)
{
	op_ctx *c;
	int rc;

	lease__store_clear_error(st); /* an operation begins: its first error wins */
	/* Copied first: the caller may pass strings that live in @p out. */
	if (!(c = lease__rt_ctx_new(kind, out, st, name, opts))) {
		lease__rt_result_init(out, st, name);
		return lease__rt_result_fail(out, st, LEASE_ENOMEM, "out of memory");
	}
	c->entry = entry;
	lease__rt_result_init(out, st, c->name);
	lease__store_op_begin(st, 0); /* --timeout bounds the operation (issue 24) */
	rc = run_op(c);
	lease__store_op_end(st);
	free(c);
	if (rc < 0 && !out->message[0])
		lease__rt_result_message(out, st, rc);
	return rc;
}

static int run_kind(op_kind kind, lease_result *out, lease_store *st, const char *name,
                    const lease_op_options *opts)
{
	return run_kind_entry(kind, out, st, name, opts, NULL);
}

/* ---- public operations --------------------------------------------------- */

int lease__acquire_once(lease_result *out, lease_store *st, const char *name,
                        const lease_op_options *opts, int64_t queued_at, int64_t queue_position)
{
	queue_entry entry = {queued_at, queue_position};

	return run_kind_entry(OP_ACQUIRE, out, st, name, opts,
	                      queued_at > 0 || queue_position > 0 ? &entry : NULL);
}

typedef struct single_attempt {
	lease_result *out;
	lease_store *st;
	const char *name;
	const lease_op_options *opts;
} single_attempt;

static int attempt_single(void *arg, const lease_result **blocker)
{
	single_attempt *a = arg;

	*blocker = a->out;
	return run_kind(OP_ACQUIRE, a->out, a->st, a->name, a->opts);
}

/* acquire, with --wait the one wait loop's plain or fair strategy (wait.c,
 * protocol.md §5 "Waiting"). */
int lease_acquire(lease_result *out, lease_store *st, const char *name,
                  const lease_op_options *opts)
{
	single_attempt a = {out, st, name, opts};

	lease__store_clear_error(st); /* an operation begins: its first error wins */
	if (opts && opts->fair && opts->wait_seconds > 0)
		return lease__acquire_fair(out, st, name, opts);
	return lease__acquire_waiting(st, opts, attempt_single, &a, out->message,
	                              sizeof(out->message), "lease");
}

int lease_heartbeat(lease_result *out, lease_store *st, const char *name,
                    const lease_op_options *opts)
{
	return run_kind(OP_HEARTBEAT, out, st, name, opts);
}

int lease_transition(lease_result *out, lease_store *st, const char *name,
                     const lease_op_options *opts)
{
	return run_kind(OP_TRANSITION, out, st, name, opts);
}

int lease_reacquire(lease_result *out, lease_store *st, const char *name,
                    const lease_op_options *opts)
{
	return run_kind(OP_REACQUIRE, out, st, name, opts);
}

int lease_release(lease_result *out, lease_store *st, const char *name,
                  const lease_op_options *opts)
{
	return run_kind(OP_RELEASE, out, st, name, opts);
}

int lease_break(lease_result *out, lease_store *st, const char *name, const lease_op_options *opts)
{
	return run_kind(OP_BREAK, out, st, name, opts);
}

/* ---- sets (protocol.md "Sets", issue 27; set.c) ---------------------------- */

typedef struct set_attempt {
	lease_set_result *out;
	lease_store *st;
	const char *const *names;
	size_t n;
	const lease_op_options *opts;
} set_attempt;

/* --wait for the whole set, holding no part of it (protocol.md "Sets"): the
 * wait is for the member that blocked the last attempt; then the whole set
 * is read again. */
static int attempt_set(void *arg, const lease_result **blocker)
{
	set_attempt *a = arg;
	int rc = lease__set_run(OP_ACQUIRE, a->out, a->st, a->names, a->n, a->opts);

	*blocker = &a->out->members[a->out->blocker >= 0 ? a->out->blocker : 0];
	return rc;
}

int lease_acquire_set(lease_set_result *out, lease_store *st, const char *const *names, size_t n,
                      const lease_op_options *opts)
{
	set_attempt a = {out, st, names, n, opts};

	return lease__acquire_waiting(st, opts, attempt_set, &a, out->message, sizeof(out->message),
	                              "set");
}

int lease_heartbeat_set(lease_set_result *out, lease_store *st, const char *const *names, size_t n,
                        const lease_op_options *opts)
{
	return lease__set_run(OP_HEARTBEAT, out, st, names, n, opts);
}

int lease_transition_set(lease_set_result *out, lease_store *st, const char *const *names, size_t n,
                         const lease_op_options *opts)
{
	return lease__set_run(OP_TRANSITION, out, st, names, n, opts);
}

int lease_release_set(lease_set_result *out, lease_store *st, const char *const *names, size_t n,
                      const lease_op_options *opts)
{
	return lease__set_run(OP_RELEASE, out, st, names, n, opts);
}
