/* The lease runtime (protocol.md §4–§6): every operation is a
 * read-decide-CAS loop over the primitives that settles failed, unverified
 * or unanswered writes, with the token changed by the owner-keyed rotation
 * matrix (rotation.c). */
#include "reflease/runtime.h"
#include "lease/commit.h"
#include "lease/door.h"
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

typedef enum op_kind {
	OP_ACQUIRE = 0,
	OP_HEARTBEAT,
	OP_TRANSITION,
	OP_REACQUIRE,
	OP_RELEASE,
	OP_BREAK
} op_kind;

static const lease_op kind_op[] = {LEASE_OP_ACQUIRE,   LEASE_OP_HEARTBEAT, LEASE_OP_TRANSITION,
                                   LEASE_OP_REACQUIRE, LEASE_OP_RELEASE,   LEASE_OP_BREAK};
static const lease_status_id kind_success[] = {LEASE_STATUS_ACQUIRED,     LEASE_STATUS_RENEWED,
                                               LEASE_STATUS_TRANSITIONED, LEASE_STATUS_REACQUIRED,
                                               LEASE_STATUS_RELEASED,     LEASE_STATUS_BROKEN};

typedef struct op_ctx {
	op_kind kind;
	lease_store *st;
	const char *name;
	const lease_op_options *o;
	lease_result *out;
	lease_ref_state known; /* lease_op_options.known_*: the first round's state */
	int approximate;
	int refreshing; /* a landed write came too late: extend it as its holder */
	int refreshes;
	int has_late;
	lease_oid late_oid; /* the late write being refreshed */
	int token_changed;
	char mytoken[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options opts; /* the caller's, with the strings below */
	char name_buf[LEASE_NAME_MAX + 2];
	char owner_buf[LEASE_IDENT_MAX + 2];
	char host_buf[LEASE_IDENT_MAX + 2];
	char token_buf[2 * LEASE_TOKEN_HEXSZ];
	const struct queue_entry *entry; /* a fair waiter's acquire: its wait (§5) */
} op_ctx;

/* A fair waiter's entry into the queue, recorded in its acquire commit
 * (protocol.md §2 queued_at/queue_position, §5 "Fair waiting"). */
typedef struct queue_entry {
	int64_t queued_at;      /* store time of its first ticket, s */
	int64_t queue_position; /* its place at the first queue read, >= 1; 0 = unknown */
} queue_entry;

typedef struct decision {
	int write;
	lease_payload next;
	lease_op sop;
	lease_status_id status; /* when no write */
	int code;
	int holds_token;
	int token_changed;
	int live_write; /* sets expires_at = now + ttl */
	int64_t ttl;
	int64_t built_at;
	int replace;      /* a heartbeat that replaces the tip: written on parent */
	lease_oid parent; /* the tip's parent, when replace */
	char message[512];
} decision;

static int is_live_kind(op_kind k)
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

/* ---- statuses (cli.md) --------------------------------------------------- */

static const char *const status_names[LEASE_STATUS__COUNT] = {
        [LEASE_STATUS_ERROR] = "error",
        [LEASE_STATUS_ACQUIRED] = "acquired",
        [LEASE_STATUS_ALREADY_HELD] = "already_held",
        [LEASE_STATUS_REACQUIRED] = "reacquired",
        [LEASE_STATUS_RENEWED] = "renewed",
        [LEASE_STATUS_NOT_DUE] = "not_due",
        [LEASE_STATUS_TRANSITIONED] = "transitioned",
        [LEASE_STATUS_RELEASED] = "released",
        [LEASE_STATUS_ALREADY_RELEASED] = "already_released",
        [LEASE_STATUS_NOT_OWNER] = "not_owner",
        [LEASE_STATUS_BROKEN] = "broken",
        [LEASE_STATUS_HELD] = "held",
        [LEASE_STATUS_NOT_HOLDER] = "not_holder",
        [LEASE_STATUS_EXPIRED] = "expired",
        [LEASE_STATUS_LIVE] = "live",
        [LEASE_STATUS_ABSENT] = "absent",
};

const char *lease_status_name(lease_status_id id)
{
	if ((int)id < 0 || id >= LEASE_STATUS__COUNT)
		return status_names[LEASE_STATUS_ERROR];
	return status_names[id];
}

/* ---- results ------------------------------------------------------------- */

static void result_init(lease_result *out, lease_store *st, const char *name)
{
	memset(out, 0, sizeof(*out));
	out->status = LEASE_STATUS_ERROR;
	out->waited_seconds = -1;
	snprintf(out->name, sizeof(out->name), "%.*s", LEASE_NAME_MAX, name ? name : "");
	snprintf(out->ref, sizeof(out->ref), "refs/%.*s/%.*s", LEASE_NS_MAX,
	         lease_store_namespace(st), LEASE_NAME_MAX, name ? name : "");
}

static void result_state(lease_result *out, const lease_ref_state *s)
{
	out->present = s->present;
	out->oid = s->oid;
	out->has_parent = s->present && s->commit.has_parent;
	if (out->has_parent)
		out->parent = s->commit.parent;
	else
		memset(&out->parent, 0, sizeof(out->parent));
	out->has_payload = s->present && s->payload_rc == 0;
	if (out->has_payload)
		out->payload = s->payload;
	else
		memset(&out->payload, 0, sizeof(out->payload));
}

/* The result carries the handle's message (the first error of the
 * operation), or the code's name when there is none: the caller need not
 * ask the handle (issue 26 step 2). */
static void result_message(lease_result *out, const lease_store *st, int code)
{
	const char *m = lease_store_last_error(st);
	int n = snprintf(out->message, sizeof(out->message), "%s", *m ? m : lease_error_id(code));

	lease__err_mark_cut(out->message, sizeof(out->message), n);
}

static int result_fail(lease_result *out, lease_store *st, int code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int result_fail(lease_result *out, lease_store *st, int code, const char *fmt, ...)
{
	out->status = LEASE_STATUS_ERROR;
	out->code = code;
	out->holds_token = 0;
	if (fmt) {
		char msg[LEASE_STORE_ERRMSG_SZ];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		/* the runtime's own conclusion: what it handled below does not
		 * stand for it (a re-read's or a lost CAS's message) */
		lease__store_clear_error(st);
		(void)lease__store_set_error(st, code, "%s", msg);
	}
	result_message(out, st, code);
	return code;
}

/* ---- input validation (before any I/O: F08) ------------------------------ */

static int check_identity(op_ctx *c)
{
	lease_payload probe;
	char err[256];
	const lease_op_options *o = c->o;

	if (!o->owner || !*o->owner || !o->host || !*o->host)
		return result_fail(c->out, c->st, LEASE_EINVALID,
		                   "an owner and a host are required for %s",
		                   lease_op_name(kind_op[c->kind]));
	memset(&probe, 0, sizeof(probe));
	lease__payload_stamp(&probe);
	snprintf(probe.name, sizeof(probe.name), "%s", c->name);
	if (strlen(o->owner) > LEASE_IDENT_MAX || strlen(o->host) > LEASE_IDENT_MAX)
		return result_fail(c->out, c->st, LEASE_EINVALID,
		                   "owner and host are at most %d bytes", LEASE_IDENT_MAX);
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
		return result_fail(c->out, c->st, LEASE_EINVALID, "invalid identity: %s", err);
	return 0;
}

static int check_inputs(op_ctx *c)
{
	const lease_op_options *o = c->o;
	char err[256];
	int rc;

	if (!c->name || lease_ref_name_validate(c->name, err, sizeof(err)) < 0)
		return result_fail(c->out, c->st, LEASE_EINVALID, "%s",
		                   c->name ? err : "name: none given");
	if (!o || o->version != LEASE_OP_OPTIONS_VERSION)
		return result_fail(c->out, c->st, LEASE_EINVALID,
		                   "lease options missing or of an unsupported version");
	if ((rc = check_identity(c)) < 0)
		return rc;
	if (is_live_kind(c->kind) && o->ttl_seconds != 0 &&
	    lease_ttl_validate(c->st, o->ttl_seconds, err, sizeof(err)) < 0)
		return result_fail(c->out, c->st, LEASE_EINVALID, "%s", err);
	if (c->kind == OP_ACQUIRE && o->phase != LEASE_PHASE_NONE &&
	    o->phase != LEASE_PHASE_CLAIMED && o->phase != LEASE_PHASE_WORKING &&
	    o->phase != LEASE_PHASE_REVIEW)
		return result_fail(c->out, c->st, LEASE_EINVALID,
		                   "invalid phase: acquire starts in claimed, working or review");
	if (c->kind == OP_TRANSITION && o->to != LEASE_PHASE_CLAIMED &&
	    o->to != LEASE_PHASE_WORKING && o->to != LEASE_PHASE_REVIEW)
		return result_fail(c->out, c->st, LEASE_EINVALID,
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
		return result_fail(c->out, c->st, rc, "no randomness for the nonce");
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
			return result_fail(c->out, c->st, rc, NULL);
		base = lease__policy_next_generation(found ? max : -1);
	}
	payload_base(&d->next, c->name);
	d->next.phase = phase;
	if ((rc = lease__rotation_apply(&d->next, cur, ch, c->o->owner, c->o->host, now, base,
	                                lease_store_random(c->st))) < 0)
		return result_fail(c->out, c->st, rc, "could not change the token");
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
			return result_fail(c->out, c->st, rc, "could not mint a token");
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
		return result_fail(c->out, c->st, LEASE_EVERSION, "%s", err);
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
		return result_fail(c->out, c->st, s->payload_rc,
		                   "%s: unreadable %s: %s; nothing readable shows the lease free, "
		                   "so break needs --force",
		                   c->out->ref, s->commit.unreadable ? "ref" : "payload",
		                   s->payload_error);
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

static int decide(op_ctx *c, const lease_ref_state *s, int64_t now, decision *d)
{
	const lease_op_options *o = c->o;
	const lease_payload *cur = NULL;
	const char *tok;
	lease_relation rel;
	lease_token_change ch;
	int expired, tok_cur, rc;
	char t[LEASE_TIME_STRSZ + 1];

	memset(d, 0, sizeof(*d));
	d->sop = kind_op[c->kind];
	if (s->present && s->payload_rc != 0 && c->kind != OP_BREAK)
		return result_fail(c->out, c->st, s->payload_rc, "%s: unreadable %s: %s",
		                   c->out->ref, s->commit.unreadable ? "ref" : "payload",
		                   s->payload_error);
	if (s->present && s->payload_rc == 0)
		cur = &s->payload;
	rel = lease__relation_of(cur, o->owner, o->host);
	expired = cur && lease_payload_expired(c->st, cur, now);
	tok = c->refreshing ? c->mytoken : o->lease_token;
	tok_cur = rel != LEASE_REL_FRESH && tok && *tok && strcmp(tok, cur->lease_token) == 0;

	if (c->refreshing) {
		/* Our own landed write came too late (F15): extend it once more. */
		if (!tok_cur || expired) {
			no_write(d, LEASE_STATUS_NOT_HOLDER, LEASE_ENOTHOLDER, 0,
			         "the lease was granted too late and lost before it could be "
			         "extended");
			return 0;
		}
		if ((rc = plan_live(c, d, cur, LEASE_TOKEN_PRESERVE, cur->phase, now)) < 0)
			return rc;
		d->sop = LEASE_OP_HEARTBEAT;
		return 0;
	}

	switch (c->kind) {
	case OP_ACQUIRE:
		if (cur && rel != LEASE_REL_FRESH && !expired) {
			if (rel == LEASE_REL_SAME)
				no_write(d, LEASE_STATUS_ALREADY_HELD, LEASE_EHELD, 0, "x");
			else
				no_write(d, LEASE_STATUS_HELD, LEASE_EHELD, 0, "x");
			holder_msg(d, cur,
			           rel == LEASE_REL_SAME ? "already held (re-entry is reacquire "
			                                   "with the token)"
			                                 : "held");
			return 0;
		}
		if ((rc = check_writable(c, cur)) < 0)
			return rc;
		ch = lease__token_rule(rel, 0);
		if ((rc = plan_live(c, d, cur, ch,
		                    o->phase == LEASE_PHASE_NONE ? LEASE_PHASE_CLAIMED : o->phase,
		                    now)) < 0 ||
		    !c->entry)
			return rc;
		/* who waited how long: on the acquire commit only (§2, §5) */
		d->next.has_queued_at = 1;
		d->next.queued_at = c->entry->queued_at < now ? c->entry->queued_at : now;
		d->next.queue_position = c->entry->queue_position;
		return 0;

	case OP_HEARTBEAT:
	case OP_TRANSITION:
	case OP_REACQUIRE:
		if (rel == LEASE_REL_FRESH) {
			no_write(d, LEASE_STATUS_NOT_HOLDER, LEASE_ENOTHOLDER, 0, "%s",
			         cur ? "the lease was released" : "the lease does not exist");
			return 0;
		}
		if (!tok_cur) {
			no_write(d, LEASE_STATUS_NOT_HOLDER, LEASE_ENOTHOLDER, 0,
			         "the presented token is not the lease's current token");
			return 0;
		}
		if (expired && c->kind != OP_REACQUIRE) {
			lease_time_format(t, cur->expires_at);
			no_write(d, LEASE_STATUS_EXPIRED, LEASE_EEXPIRED, 0,
			         "the lease expired at %s; reacquire it with the token", t);
			return 0;
		}
		if (c->kind == OP_TRANSITION && o->to == cur->phase)
			return result_fail(c->out, c->st, LEASE_EINVALID,
			                   "the lease is already in phase %s",
			                   lease_phase_name(cur->phase));
		ch = lease__token_rule(rel, 1);
		if (c->kind == OP_HEARTBEAT && ch == LEASE_TOKEN_PRESERVE &&
		    heartbeat_not_due(c, d, cur, ch, now))
			return 0;
		if ((rc = check_writable(c, cur)) < 0)
			return rc;
		return plan_live(c, d, cur, ch, c->kind == OP_TRANSITION ? o->to : cur->phase, now);

	case OP_RELEASE:
		if (rel == LEASE_REL_FRESH) {
			no_write(d, LEASE_STATUS_ALREADY_RELEASED, 0, 0, "%s",
			         cur ? "the lease is already released"
			             : "the lease does not exist");
			return 0;
		}
		if (!tok_cur) {
			no_write(d, LEASE_STATUS_NOT_OWNER, 0, 0,
			         "the presented token is not current; nothing written");
			return 0;
		}
		if ((rc = check_writable(c, cur)) < 0)
			return rc;
		return plan_released(c, d, cur, now, -1);

	default: /* OP_BREAK */ return decide_break(c, s, cur, expired, now, d);
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

static int finish_no_write(op_ctx *c, const lease_ref_state *s, const decision *d)
{
	lease_result *out = c->out;

	result_state(out, s);
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
 * finished (out filled, *rc set), 0 to go on (decide again, or refresh). */
static int settle_landed(op_ctx *c, const lease_ref_state *s, const lease_written *w, int64_t now,
                         int *rc)
{
	lease_result *out = c->out;

	c->token_changed |= w->token_changed;
	if (is_live_kind(c->kind)) {
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
					*rc = finish_no_write(c, s, &d);
					return 1;
				}
				c->refreshing = 0;
				return 0; /* free or expired again: decide again */
			}
			result_state(out, s);
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
			result_state(out, s);
			out->payload = w->p;
			out->has_payload = 1;
			out->holds_token = 1;
			out->approximate_ttl = c->approximate;
			*rc = result_fail(out, c->st, LEASE_EUNVERIFIED,
			                  "granted too late: %lld s of a %lld s TTL left",
			                  (long long)(w->p.expires_at - now),
			                  (long long)w->p.ttl_seconds);
			out->holds_token = 1;
			return 1;
		}
	}
	result_state(out, s);
	out->payload = w->p;
	out->has_payload = 1;
	out->status = kind_success[c->kind];
	out->code = *rc = 0;
	out->holds_token = is_live_kind(c->kind);
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
	if ((rc = decide(c, r->s, r->now, &d)) < 0) {
		result_state(c->out, r->s);
		c->out->status = LEASE_STATUS_ERROR;
		return lease_step_done(rc);
	}
	if (!d.write)
		return lease_step_done(finish_no_write(c, r->s, &d));
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
	rc = msg ? result_fail(c->out, c->st, rc, "%s", msg) : result_fail(c->out, c->st, rc, NULL);
	/* unknown outcome, or a write refused by a held ref lock: the ref as
	 * last read (a wait ending on a stale lock names it, issue 23) */
	if ((why == LEASE_FAIL_UNKNOWN || rc == LEASE_ELOCKED) && r->s)
		result_state(c->out, r->s);
	return lease_step_done(rc);
}

static const lease_engine_ops rt_ops = {rt_plan, rt_landed, rt_failed};

/* Check the inputs, then run the engine with this operation's decisions (§5). */
static int run_op(op_ctx *c)
{
	const lease_ref_state *first = NULL;
	int rc;

	if ((rc = check_inputs(c)) < 0)
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

static op_ctx *ctx_new(op_kind kind, lease_result *out, lease_store *st, const char *name,
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
	if (!(c = ctx_new(kind, out, st, name, opts))) {
		result_init(out, st, name);
		return result_fail(out, st, LEASE_ENOMEM, "out of memory");
	}
	c->entry = entry;
	result_init(out, st, c->name);
	lease__store_op_begin(st, 0); /* --timeout bounds the operation (issue 24) */
	rc = run_op(c);
	lease__store_op_end(st);
	free(c);
	if (rc < 0 && !out->message[0])
		result_message(out, st, rc);
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

int lease_status(lease_result *out, lease_store *st, const char *name)
{
	lease_ref_state s;
	char err[256];
	int64_t now;
	int rc;

	lease__store_clear_error(st); /* an operation begins: its first error wins */
	result_init(out, st, name);
	if (!name || lease_ref_name_validate(name, err, sizeof(err)) < 0)
		return result_fail(out, st, LEASE_EINVALID, "%s", name ? err : "name: none given");
	memset(&s, 0, sizeof(s));
	lease__store_op_begin(st, 0);
	rc = lease_fetch_ref(&s, st, name);
	lease__store_op_end(st);
	if (rc < 0) {
		lease_ref_state_clear(&s);
		return result_fail(out, st, rc, NULL);
	}
	now = lease_store_now(st);
	out->now = now;
	result_state(out, &s);
	if (!s.present) {
		out->status = LEASE_STATUS_ABSENT;
	} else if (s.payload_rc != 0) {
		rc = result_fail(out, st, s.payload_rc, "%s: unreadable %s: %s", out->ref,
		                 s.commit.unreadable ? "ref" : "payload", s.payload_error);
	} else if (s.payload.phase == LEASE_PHASE_RELEASED) {
		out->status = LEASE_STATUS_RELEASED;
	} else if (lease_payload_expired(st, &s.payload, now)) {
		out->status = LEASE_STATUS_EXPIRED;
	} else {
		out->status = LEASE_STATUS_LIVE;
	}
	if (out->has_payload) {
		int approx = 0;
		lease_payload_ttl(&out->payload, 0, &approx);
		out->approximate_ttl = approx;
		memset(out->payload.lease_token, 0, sizeof(out->payload.lease_token));
	}
	out->code = rc;
	lease_ref_state_clear(&s);
	return rc;
}

/* ---- sets (protocol.md "Sets", issue 27) --------------------------------- */

#define SET_UNKNOWN_MAX 3 /* unknown outcomes of one set operation settled by re-reading */

typedef struct set_ctx {
	op_kind kind;
	lease_set_result *out;
	lease_store *st;
	size_t n;
	op_ctx *c[LEASE_SET_MAX];
	lease_ref_state s[LEASE_SET_MAX];
	decision d[LEASE_SET_MAX];
	lease_oid news[LEASE_SET_MAX];
	lease_oid bases[LEASE_SET_MAX]; /* each written member's tip when written (zero: absent) */
	/* the set CAS of the last set_write(): kept to send again as it is */
	const char *wnames[LEASE_SET_MAX];
	lease_oid wolds[LEASE_SET_MAX], wnews[LEASE_SET_MAX];
	size_t wn;
} set_ctx;

/* A member's answer when it was read but not written: what `status` says.
 * Only after every member was decided without an error, so a present
 * member's payload was read (decide() fails on an unreadable one). */
static void set_member_state(lease_store *st, lease_result *r, const lease_ref_state *s,
                             int64_t now)
{
	result_state(r, s);
	r->now = now;
	r->code = 0;
	if (!s->present)
		r->status = LEASE_STATUS_ABSENT;
	else if (s->payload.phase == LEASE_PHASE_RELEASED)
		r->status = LEASE_STATUS_RELEASED;
	else if (lease_payload_expired(st, &s->payload, now))
		r->status = LEASE_STATUS_EXPIRED;
	else
		r->status = LEASE_STATUS_LIVE;
	memset(r->payload.lease_token, 0, sizeof(r->payload.lease_token));
	snprintf(r->message, sizeof(r->message), "not written: the set was not taken");
}

/* The set fails with member @p i's answer (@p code, its message). */
static int set_fail(set_ctx *x, size_t i, int code)
{
	lease_set_result *out = x->out;
	const lease_result *m = &out->members[i];

	out->code = code;
	out->status = m->status;
	out->blocker = (int)i;
	snprintf(out->message, sizeof(out->message), "%s: %s", m->name,
	         m->message[0] ? m->message : lease_error_id(code));
	if (code < 0)
		(void)lease__store_set_error(x->st, code, "%s", out->message);
	return code;
}

/* A no-write answer that lets the rest of the set be written: a member
 * already released (release) or not due (heartbeat). */
static int set_skippable(const set_ctx *x, const decision *d)
{
	if (d->code != 0)
		return 0;
	return (x->kind == OP_RELEASE && d->status == LEASE_STATUS_ALREADY_RELEASED) ||
	       (x->kind == OP_HEARTBEAT && d->status == LEASE_STATUS_NOT_DUE);
}

/* Read every member, in one read of the store where it can (github: one
 * GraphQL query, protocol.md "Sets"). 0, or the failing member's error (the
 * set's answer set). */
static int set_read(set_ctx *x)
{
	const char *names[LEASE_SET_MAX];
	size_t i, failed = 0;
	int rc;

	for (i = 0; i < x->n; i++) {
		lease_ref_state_clear(&x->s[i]);
		names[i] = x->c[i]->name;
	}
	if ((rc = lease_fetch_refs(x->s, x->st, names, x->n, &failed)) < 0) {
		result_fail(&x->out->members[failed], x->st, rc, NULL);
		return set_fail(x, failed, rc);
	}
	return 0;
}

/* The set landed (every written member verified at its commit): fill the
 * answers. */
static int set_landed(set_ctx *x, int64_t now)
{
	lease_set_result *out = x->out;
	int late = 0;
	size_t i;

	for (i = 0; i < x->n; i++) {
		lease_result *r = &out->members[i];
		const decision *d = &x->d[i];

		if (!d->write) {
			finish_no_write(x->c[i], &x->s[i], d);
			continue;
		}
		r->present = 1;
		r->oid = x->news[i];
		r->payload = d->next;
		r->has_payload = 1;
		r->status = kind_success[x->kind];
		r->code = 0;
		r->holds_token = is_live_kind(x->kind);
		r->token_rotated = d->token_changed;
		r->approximate_ttl = x->c[i]->approximate;
		r->now = now;
		r->message[0] = '\0';
		if (is_live_kind(x->kind) && lease__policy_less_than_half_left(
		                                     d->next.expires_at - now, d->next.ttl_seconds))
			late = 1;
	}
	out->status = kind_success[x->kind];
	out->code = 0;
	out->message[0] = '\0';
	if (late) {
		/* Success only with half the TTL left (F15): the set is held, the
		 * caller has the token and should release it. */
		out->status = LEASE_STATUS_ERROR;
		out->code = LEASE_EUNVERIFIED;
		snprintf(out->message, sizeof(out->message),
		         "granted too late: less than half the TTL left when verified");
		(void)lease__store_set_error(x->st, out->code, "%s", out->message);
	}
	return out->code;
}

/* A member's walk while settling: is @p want in the chain below the tip,
 * above the tip the write was based on? */
typedef struct set_walk {
	const lease_oid *want, *base;
	int found;
} set_walk;

static int set_walk_visit(const lease_oid *oid, const lease_commit *c, void *payload)
{
	set_walk *w = payload;

	if (lease_oid_equal(oid, w->want)) {
		w->found = 1;
		return 1;
	}
	/* nothing below the commit the write was based on can be ours */
	return c && !lease_oid_is_zero(w->base) && lease_oid_equal(oid, w->base);
}

/* Member @p i's write landed: its commit is the tip, or a later writer
 * built on it (a release taken over at once by another acquire — the
 * single-lease engine's rule, protocol.md §5 "Settling"). */
static int set_member_landed(set_ctx *x, size_t i, int *at_tip)
{
	const lease_ref_state *s = &x->s[i];
	set_walk w = {&x->news[i], &x->bases[i], 0};

	*at_tip = s->present && lease_oid_equal(&s->oid, &x->news[i]);
	if (*at_tip)
		return 1;
	if (s->present && s->commit.is_commit)
		lease__walk_chain(x->st, &s->oid, &s->commit, LEASE_SETTLE_WALK_MAX, set_walk_visit,
		                  &w);
	return w.found;
}

/* A set acquire the store applied on some members only (issue 38): release,
 * each as a single lease with the set's token, the members that show it, so
 * that none stays held by a caller that never got the set. 0 when every one
 * of them was released, else the number that could not be (they expire). */
static int set_release_shown(set_ctx *x)
{
	size_t i;
	int failed = 0, tip;

	if (x->kind != OP_ACQUIRE)
		return 0;
	for (i = 0; i < x->n; i++) {
		lease_op_options ro;
		lease_result rel;

		if (!x->d[i].write || !set_member_landed(x, i, &tip))
			continue;
		ro = *x->c[i]->o;
		ro.lease_token = x->d[i].next.lease_token;
		ro.wait_seconds = 0;
		ro.wait_cb = NULL;
		ro.progress_cb = NULL;
		if (lease_release(&rel, x->st, x->c[i]->name, &ro) < 0)
			failed++;
	}
	return failed;
}

/* Settle an unknown outcome: 1 landed (answered), 0 not landed anywhere
 * (decide again), or the error the set ends with. A write is atomic, so
 * it landed on every member or on none; a member whose tip moved past
 * the set's commit counts as landed. */
static int set_settle(set_ctx *x, int64_t *now)
{
	size_t i, written = 0, landed = 0, at_new = 0;
	int rc, tip, left;

	if ((rc = set_read(x)) < 0)
		return rc;
	*now = lease_store_now(x->st);
	for (i = 0; i < x->n; i++) {
		if (!x->d[i].write)
			continue;
		written++;
		landed += set_member_landed(x, i, &tip);
		at_new += tip;
	}
	if (landed == written && (at_new == written || !is_live_kind(x->kind))) {
		set_landed(x, *now);
		return 1;
	}
	if (landed == written)
		return 0; /* held, then changed since (broken, expired): decide again */
	if (landed == 0)
		return 0;
	left = set_release_shown(x);
	x->out->code = LEASE_EUNVERIFIED;
	x->out->status = LEASE_STATUS_ERROR;
	snprintf(x->out->message, sizeof(x->out->message),
	         "the set write shows on %zu of its %zu members: the store did not apply it "
	         "atomically%s",
	         landed, written,
	         x->kind != OP_ACQUIRE ? ""
	         : left                ? "; releasing them failed (they expire)"
	                               : "; released them");
	lease__store_clear_error(x->st); /* the releases' own messages */
	(void)lease__store_set_error(x->st, LEASE_EUNVERIFIED, "%s", x->out->message);
	return LEASE_EUNVERIFIED;
}

/* One round's writes: a commit per written member, then one set CAS. */
static int set_write(set_ctx *x, size_t *nw)
{
	const char **names = x->wnames;
	lease_oid *olds = x->wolds, *news = x->wnews;
	char err[256];
	size_t i, k = 0;
	int rc;

	for (i = 0; i < x->n; i++) {
		const decision *d = &x->d[i];
		const lease_ref_state *s = &x->s[i];
		char *msg = NULL;

		if (!d->write)
			continue;
		if (lease_payload_validate(&d->next, err, sizeof(err)) < 0) {
			result_fail(&x->out->members[i], x->st, LEASE_EINTERNAL,
			            "refusing to write an invalid payload: %s", err);
			return set_fail(x, i, LEASE_EINTERNAL);
		}
		if ((rc = lease_message_build(&msg, &d->next, d->sop)) < 0) {
			result_fail(&x->out->members[i], x->st, rc,
			            "could not build the commit message");
			return set_fail(x, i, rc);
		}
		rc = lease_write_commit(&x->news[i], x->st,
		                        s->present && s->commit.is_commit ? &s->oid : NULL, msg);
		free(msg);
		if (rc < 0) {
			result_fail(&x->out->members[i], x->st, rc, NULL);
			return set_fail(x, i, rc);
		}
		names[k] = x->c[i]->name;
		if (s->present)
			olds[k] = s->oid;
		else
			memset(&olds[k], 0, sizeof(olds[k]));
		x->bases[i] = olds[k];
		news[k++] = x->news[i];
	}
	*nw = x->wn = k;
	return lease_cas_set(x->st, names, olds, news, k);
}

/* After a set CAS the store refused (known: not applied): 1 when every
 * written member still reads as the write expected it (nothing moved: the
 * store itself refused), 0 when one moved (a lost race), or a read's error. */
static int set_unmoved(set_ctx *x)
{
	size_t i;
	int rc;

	if ((rc = set_read(x)) < 0)
		return rc;
	for (i = 0; i < x->n; i++) {
		static const lease_oid zero;
		int absent = lease_oid_equal(&x->bases[i], &zero);

		if (!x->d[i].write)
			continue;
		if (absent ? x->s[i].present
		           : (!x->s[i].present || !lease_oid_equal(&x->s[i].oid, &x->bases[i])))
			return 0;
	}
	return 1;
}

/* The store refuses the set write while nothing moves (a ruleset, a limit
 * of unknown wording, a server fault; issue 38): send the same CAS — the
 * commits already written — again after 1 s, 2 s, 4 s, ... while --timeout
 * (from the first refusal) allows, never writing commits anew. 0 = applied,
 * 1 = a member moved meanwhile (decide again), another error of the CAS
 * (the caller settles an unknown outcome), or LEASE_ECAS with the store's
 * own message and "nothing changed". */
static int set_refused(set_ctx *x)
{
	int64_t t0 = lease__store_mono_ms(x->st), backoff = 1000,
	        budget = (int64_t)lease_store_timeout(x->st) * 1000;
	char why[LEASE_STORE_ERRMSG_SZ];
	int rc, tries = 1;

	snprintf(why, sizeof(why), "%s", lease_store_last_error(x->st));
	while (lease__store_mono_ms(x->st) - t0 + backoff <= budget) {
		lease__store_log(x->st, LEASE_LOG_INFO,
		                 "the store refused the set write while no member moved; the same "
		                 "write again in %lld ms",
		                 (long long)backoff);
		lease__store_sleep_ms(x->st, backoff, LEASE_SLEEP_FULL);
		backoff *= 2;
		tries++;
		lease__store_clear_error(x->st);
		rc = lease_cas_set(x->st, x->wnames, x->wolds, x->wnews, x->wn);
		if (rc != LEASE_ECAS ||
		    lease_store_last_cas_error(x->st)->outcome != LEASE_OUTCOME_KNOWN)
			return rc;
		snprintf(why, sizeof(why), "%s", lease_store_last_error(x->st));
		if ((rc = set_unmoved(x)) <= 0)
			return rc < 0 ? rc : 1;
	}
	x->out->code = LEASE_ECAS;
	x->out->status = LEASE_STATUS_ERROR;
	snprintf(x->out->message, sizeof(x->out->message),
	         "the store refused the set write %d times in %lld s while no member moved; "
	         "nothing changed: %.400s",
	         tries, (long long)((lease__store_mono_ms(x->st) - t0 + 999) / 1000), why);
	lease__store_clear_error(x->st);
	return lease__store_set_error(x->st, LEASE_ECAS, "%s", x->out->message);
}

/* Plan every member; 0 to write, 1 when answered without a write, or an error. */
static int set_plan(set_ctx *x, int64_t now, size_t *nwrite)
{
	size_t i, first_changed = x->n;
	int rc;

	*nwrite = 0;
	for (i = 0; i < x->n; i++) {
		x->c[i]->out->now = now;
		if ((rc = decide(x->c[i], &x->s[i], now, &x->d[i])) < 0) {
			result_state(&x->out->members[i], &x->s[i]);
			x->out->members[i].status = LEASE_STATUS_ERROR;
			return set_fail(x, i, rc);
		}
	}
	for (i = 0; i < x->n; i++) {
		if (x->d[i].write || set_skippable(x, &x->d[i]))
			continue;
		/* One member is not free (or not ours): nothing is written. */
		for (size_t j = 0; j < x->n; j++) {
			if (j == i || !x->d[j].write)
				finish_no_write(x->c[j], &x->s[j], &x->d[j]);
			else
				set_member_state(x->st, &x->out->members[j], &x->s[j], now);
		}
		set_fail(x, i, x->d[i].code < 0 ? x->d[i].code : LEASE_ENOTHOLDER);
		if (x->d[i].code == 0) /* not_owner: answered, nothing written */
			x->out->code = 0;
		return x->out->code < 0 ? x->out->code : 1;
	}
	for (i = 0; i < x->n; i++) {
		if (!x->d[i].write)
			continue;
		(*nwrite)++;
		if (!x->d[i].token_changed)
			continue;
		/* One token for the set: every member whose token changes in
		 * this write gets the first one minted (protocol.md "Sets"). */
		if (first_changed == x->n)
			first_changed = i;
		else
			memcpy(x->d[i].next.lease_token, x->d[first_changed].next.lease_token,
			       sizeof(x->d[i].next.lease_token));
	}
	if (*nwrite == 0) {
		for (i = 0; i < x->n; i++)
			finish_no_write(x->c[i], &x->s[i], &x->d[i]);
		x->out->status = x->out->members[0].status;
		x->out->code = 0;
		x->out->message[0] = '\0';
		return 1;
	}
	return 0;
}

static int set_run(set_ctx *x)
{
	lease_set_result *out = x->out;
	int64_t now;
	int round, unknown = 0, rc;
	size_t nw;

	if (!lease_store_can_write_set(x->st)) {
		out->code = lease__store_set_error(
		        x->st, LEASE_ECONFIG,
		        "the %s store cannot write several leases in one atomic write, so a set "
		        "cannot be %s there (protocol.md \"Sets\"); nothing written",
		        lease_store_kind(x->st), lease_status_name(kind_success[x->kind]));
		snprintf(out->message, sizeof(out->message), "%s", lease_store_last_error(x->st));
		return out->code;
	}
	for (round = 0; round < LEASE_ENGINE_ROUNDS_MAX; round++) {
		/* a round's answer is its own (a failed commit write of an
		 * earlier round settled as not landed says nothing) */
		out->blocker = -1;
		out->status = LEASE_STATUS_ERROR;
		out->code = 0;
		out->message[0] = '\0';
		if ((rc = set_read(x)) < 0)
			return rc;
		now = lease_store_now(x->st);
		if ((rc = set_plan(x, now, &nw)) != 0)
			return rc < 0 ? rc : out->code;
		rc = set_write(x, &nw);
		if (rc == LEASE_ECAS &&
		    lease_store_last_cas_error(x->st)->outcome == LEASE_OUTCOME_KNOWN) {
			/* nothing applied: a member moved (read again, decide
			 * again), or the store refused it with nothing moved */
			if ((rc = set_unmoved(x)) < 0)
				return rc;
			if (rc == 0 || (rc = set_refused(x)) == 1)
				continue;
			if (rc == LEASE_ECAS && out->code == LEASE_ECAS)
				return rc; /* refused throughout: the store's message */
		}
		if (rc == 0)
			return set_landed(x, lease_store_now(x->st));
		if (!lease__engine_settleable(rc)) {
			if (out->code == 0 && out->blocker < 0) {
				out->code = rc;
				out->status = LEASE_STATUS_ERROR;
				snprintf(out->message, sizeof(out->message), "%s",
				         lease_store_last_error(x->st));
			}
			return out->code ? out->code : rc;
		}
		if (++unknown > SET_UNKNOWN_MAX) {
			out->code = rc;
			out->status = LEASE_STATUS_ERROR;
			snprintf(out->message, sizeof(out->message),
			         "the set write's outcome stayed unknown: %s",
			         lease_store_last_error(x->st));
			return rc;
		}
		if ((rc = set_settle(x, &now)) != 0)
			return rc < 0 ? rc : out->code;
	}
	out->code = LEASE_ECAS;
	out->status = LEASE_STATUS_ERROR;
	snprintf(out->message, sizeof(out->message),
	         "the set kept changing: %d rounds without a write", LEASE_ENGINE_ROUNDS_MAX);
	return lease__store_set_error(x->st, LEASE_ECAS, "%s", out->message);
}

static int set_kind(op_kind kind, lease_set_result *out, lease_store *st, const char *const *names,
                    size_t n, const lease_op_options *opts)
{
	set_ctx *x;
	size_t i, j;
	int rc = 0;

	lease__store_clear_error(st); /* an operation begins: its first error wins */
	memset(out, 0, sizeof(*out));
	out->status = LEASE_STATUS_ERROR;
	out->blocker = -1;
	if (n == 0 || n > LEASE_SET_MAX || !names) {
		out->code = lease__store_set_error(st, LEASE_EINVALID,
		                                   "a set names 1 to %d leases (%zu given)",
		                                   LEASE_SET_MAX, names ? n : 0);
		snprintf(out->message, sizeof(out->message), "%s", lease_store_last_error(st));
		return out->code;
	}
	out->count = n;
	if (!(x = calloc(1, sizeof(*x)))) {
		out->code = LEASE_ENOMEM;
		return LEASE_ENOMEM;
	}
	x->kind = kind;
	x->out = out;
	x->st = st;
	x->n = n;
	for (i = 0; i < n && rc == 0; i++) {
		if (!(x->c[i] = ctx_new(kind, &out->members[i], st, names[i], opts))) {
			rc = out->code = LEASE_ENOMEM;
			break;
		}
		result_init(&out->members[i], st, x->c[i]->name);
		if ((rc = check_inputs(x->c[i])) < 0) {
			set_fail(x, i, rc);
			break;
		}
		for (j = 0; j < i; j++)
			if (strcmp(names[j], names[i]) == 0) {
				rc = result_fail(&out->members[i], st, LEASE_EINVALID,
				                 "lease '%s' named twice in the set", names[i]);
				set_fail(x, i, rc);
				break;
			}
	}
	if (rc == 0) {
		lease__store_op_begin(st, 0); /* --timeout bounds the operation (issue 24) */
		rc = set_run(x);
		lease__store_op_end(st);
	}
	for (i = 0; i < n; i++) {
		lease_ref_state_clear(&x->s[i]);
		free(x->c[i]);
	}
	free(x);
	out->code = rc;
	if (rc < 0 && !out->message[0]) {
		const char *m = lease_store_last_error(st);
		snprintf(out->message, sizeof(out->message), "%s", *m ? m : lease_error_id(rc));
	}
	return rc;
}

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
	int rc = set_kind(OP_ACQUIRE, a->out, a->st, a->names, a->n, a->opts);

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
	return set_kind(OP_HEARTBEAT, out, st, names, n, opts);
}

int lease_transition_set(lease_set_result *out, lease_store *st, const char *const *names, size_t n,
                         const lease_op_options *opts)
{
	return set_kind(OP_TRANSITION, out, st, names, n, opts);
}

int lease_release_set(lease_set_result *out, lease_store *st, const char *const *names, size_t n,
                      const lease_op_options *opts)
{
	return set_kind(OP_RELEASE, out, st, names, n, opts);
}
