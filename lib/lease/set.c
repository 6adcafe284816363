/* Sets (protocol.md "Sets", issue 27): several leases acquired, renewed,
 * moved or released together. Every member is decided as a single lease
 * is (runtime.c's decide), and the round's writes — one commit per written
 * member, one atomic write for them all — are a plan handed to the one
 * engine (commit.c, lease__engine_run_set()): the same settle rule, the
 * same unknown-outcome bound, the same answer to a refusal while nothing
 * moves (issue 38 item 1). */
#include "lease/commit.h"
#include "lease/door.h"
#include "lease/op.h"
#include "lease/policy.h"
#include "store/frontend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(LEASE_SET_MAX <= LEASE_PAYLOAD_SET_MAX, "a payload names every member of a set");

typedef struct set_ctx {
	op_kind kind;
	lease_set_result *out;
	lease_store *st;
	size_t n;
	op_ctx *c[LEASE_SET_MAX];
	decision d[LEASE_SET_MAX];
} set_ctx;

/* A member's answer when it was read but not written: what `status` says.
 * Only after every member was decided without an error, so a present
 * member's payload was read (decide() fails on an unreadable one). */
static void set_member_state(lease_store *st, lease_result *r, const lease_ref_state *s,
                             int64_t now)
{
	lease__rt_result_state(r, s);
	r->now = now;
	r->code = 0;
	r->status = lease__rt_read_status(st, s, now);
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

/* The set fails as a whole with @p code and @p msg (NULL: the store's). */
static int set_fail_all(set_ctx *x, int code, const char *msg)
{
	lease_set_result *out = x->out;
	const char *m;

	if (msg) {
		lease__store_clear_error(x->st); /* the engine's own conclusion */
		(void)lease__store_set_error(x->st, code, "%s", msg);
	}
	m = lease_store_last_error(x->st);
	out->code = code;
	out->status = LEASE_STATUS_ERROR;
	snprintf(out->message, sizeof(out->message), "%s", *m ? m : lease_error_id(code));
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

/* One member is not free (or not ours): nothing is written; the set's
 * answer is member @p i's. */
static int set_blocked(set_ctx *x, const lease_ref_state *s, int64_t now, size_t i)
{
	size_t j;

	for (j = 0; j < x->n; j++) {
		if (j == i || !x->d[j].write)
			lease__rt_finish_no_write(x->c[j], &s[j], &x->d[j]);
		else
			set_member_state(x->st, &x->out->members[j], &s[j], now);
	}
	set_fail(x, i, x->d[i].code < 0 ? x->d[i].code : LEASE_ENOTHOLDER);
	if (x->d[i].code == 0) /* not_owner: answered, nothing written */
		x->out->code = 0;
	return x->out->code;
}

/* One token for the set: every member whose token changes in this write
 * gets the first one minted (protocol.md "Sets"). @return the writes. */
static size_t set_one_token(set_ctx *x)
{
	size_t i, first = x->n, nwrite = 0;

	for (i = 0; i < x->n; i++) {
		if (!x->d[i].write)
			continue;
		nwrite++;
		if (!x->d[i].token_changed)
			continue;
		if (first == x->n)
			first = i;
		else
			memcpy(x->d[i].next.lease_token, x->d[first].next.lease_token,
			       sizeof(x->d[i].next.lease_token));
	}
	return nwrite;
}

/* The set field of every live commit of a set write of 2 or more
 * (protocol.md §2, "Sets"; issue 40 B65): every written member's name and the
 * write's id, the first written member's nonce (random per write; a
 * refused write sent again keeps its commits, so its id), and the oid the
 * write moves each member from (@p s, the round's read). */
static void set_stamp(const set_ctx *x, const lease_ref_state *s, lease_plan *pl)
{
	const char *id = NULL;
	size_t i, j, k, written = 0;

	for (i = 0; i < x->n; i++)
		written += !pl[i].skip;
	/* only the members this write moves: a member it leaves as it is (a
	 * set heartbeat that renews the due members only) is no mate of it,
	 * or a reader would find that mate "at its old oid" and call it cut */
	if (written < 2 || !lease__rt_live_kind(x->kind))
		return;
	for (i = 0; i < x->n; i++) {
		if (pl[i].skip)
			continue;
		if (!id)
			id = pl[i].p.nonce;
		pl[i].p.has_set = 1;
		pl[i].p.set_count = (int)written;
		memcpy(pl[i].p.set_write, id, sizeof(pl[i].p.set_write));
		for (j = 0, k = 0; j < x->n; j++) {
			if (pl[j].skip)
				continue;
			snprintf(pl[i].p.set_members[k], sizeof(pl[i].p.set_members[k]), "%s",
			         x->c[j]->name);
			if (s[j].present)
				pl[i].p.set_from[k] = s[j].oid;
			k++;
		}
	}
}

/* The engine's plan: decide every member on the set's read @p r->s; write
 * the members that change, or end with the answer. */
static lease_step set_plan(void *ctx, const lease_round *r, lease_plan *pl)
{
	set_ctx *x = ctx;
	lease_set_result *out = x->out;
	const lease_ref_state *s = r->s;
	size_t i;
	int rc;

	/* a round's answer is its own (a failed write of an earlier round
	 * settled as not landed says nothing) */
	out->blocker = -1;
	out->status = LEASE_STATUS_ERROR;
	out->code = 0;
	out->message[0] = '\0';
	for (i = 0; i < x->n; i++) {
		x->c[i]->out->now = r->now;
		if ((rc = lease__rt_decide(x->c[i], &s[i], r->now, &x->d[i])) < 0) {
			lease__rt_result_state(&out->members[i], &s[i]);
			out->members[i].status = LEASE_STATUS_ERROR;
			return lease_step_done(set_fail(x, i, rc));
		}
	}
	for (i = 0; i < x->n; i++)
		if (!x->d[i].write && !set_skippable(x, &x->d[i]))
			return lease_step_done(set_blocked(x, s, r->now, i));
	if (set_one_token(x) == 0) {
		for (i = 0; i < x->n; i++)
			lease__rt_finish_no_write(x->c[i], &s[i], &x->d[i]);
		out->status = out->members[0].status;
		return lease_step_done(0);
	}
	for (i = 0; i < x->n; i++) {
		pl[i].skip = !x->d[i].write;
		pl[i].p = x->d[i].next;
		pl[i].op = x->d[i].sop;
		pl[i].token_changed = x->d[i].token_changed;
		pl[i].built_at = x->d[i].built_at;
	}
	set_stamp(x, s, pl);
	return lease_step_write();
}

/* The set landed (every written member verified at its commit): fill the
 * answers. */
static int set_answer(set_ctx *x, const lease_ref_state *s, const lease_written *w, int64_t now)
{
	lease_set_result *out = x->out;
	int late = 0, live = lease__rt_live_kind(x->kind);
	size_t i;

	for (i = 0; i < x->n; i++) {
		lease_result *r = &out->members[i];
		const decision *d = &x->d[i];

		if (w[i].skipped) {
			lease__rt_finish_no_write(x->c[i], &s[i], d);
			continue;
		}
		r->present = 1;
		r->oid = w[i].oid;
		r->payload = w[i].p;
		r->has_payload = 1;
		r->status = lease__rt_kind_success[x->kind];
		r->code = 0;
		r->holds_token = live;
		r->token_rotated = w[i].token_changed;
		r->approximate_ttl = x->c[i]->approximate;
		r->now = now;
		r->message[0] = '\0';
		if (live &&
		    lease__policy_less_than_half_left(w[i].p.expires_at - now, w[i].p.ttl_seconds))
			late = 1;
	}
	out->status = lease__rt_kind_success[x->kind];
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

/* The engine's landed: every written member shows the set write. A live
 * set whose member moved past its commit since (broken, expired, taken)
 * is decided again, as a single lease is. */
static lease_step set_landed(void *ctx, const lease_round *r, const lease_written *w)
{
	set_ctx *x = ctx;
	size_t i;

	if (lease__rt_live_kind(x->kind))
		for (i = 0; i < x->n; i++)
			if (!w[i].skipped &&
			    (!r->s[i].present || !lease_oid_equal(&r->s[i].oid, &w[i].oid)))
				return lease_step_decide();
	for (i = 0; i < x->n; i++)
		if (!w[i].skipped && lease__set_cut_lost(x->c[i])) {
			lease__set_cut_answer(x->c[i], &r->s[i]);
			return lease_step_done(set_fail(x, i, LEASE_EHELD));
		}
	return lease_step_done(set_answer(x, r->s, w, r->now));
}

/* A set acquire the store applied on some members only (issue 38): release,
 * each as a single lease with the set's token, the members that show it, so
 * that none stays held by a caller that never got the set. 0 when every one
 * of them was released, else the number that could not be (they expire). */
static int set_release_shown(set_ctx *x, const lease_written *w)
{
	size_t i;
	int failed = 0;

	if (x->kind != OP_ACQUIRE)
		return 0;
	for (i = 0; i < x->n; i++) {
		lease_op_options ro;
		lease_result rel;

		if (!w[i].shown)
			continue;
		ro = *x->c[i]->o;
		ro.lease_token = w[i].p.lease_token;
		ro.wait_seconds = 0;
		ro.wait_cb = NULL;
		ro.progress_cb = NULL;
		if (lease_release(&rel, x->st, x->c[i]->name, &ro) < 0)
			failed++;
	}
	return failed;
}

/* The engine's failed: a lost write settles; a partial write releases what
 * shows it; anything else is the set's answer. */
static lease_step set_failed(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
                             const char *msg)
{
	set_ctx *x = ctx;
	char m[LEASE_STORE_ERRMSG_SZ];
	int left;

	if (why == LEASE_FAIL_LOST)
		return lease_step_settle();
	if (why == LEASE_FAIL_PARTIAL) {
		left = set_release_shown(x, r->w);
		snprintf(m, sizeof(m), "%s%s", msg,
		         x->kind != OP_ACQUIRE ? ""
		         : left                ? "; releasing them failed (they expire)"
		                               : "; released them");
		return lease_step_done(set_fail_all(x, rc, m));
	}
	if (why == LEASE_FAIL_ERROR && r->member >= 0) {
		if (msg)
			lease__rt_result_fail(&x->out->members[r->member], x->st, rc, "%s", msg);
		else
			lease__rt_result_fail(&x->out->members[r->member], x->st, rc, NULL);
		return lease_step_done(set_fail(x, (size_t)r->member, rc));
	}
	return lease_step_done(set_fail_all(x, rc, msg));
}

static const lease_engine_ops set_ops = {set_plan, set_landed, set_failed};

/* ---- a set cut by a crash (protocol.md "Sets"; issue 40 B65) ------------ */

/* Read @p n of @p names: 1 for each at @p from (present at it, or absent
 * where it is zero) in @p at. @return 0 or a read error. */
static int cut_scan(lease_store *st, const char *const *names, const lease_oid *from, size_t n,
                    int *at)
{
	lease_ref_state *s = calloc(n ? n : 1, sizeof(*s));
	size_t i;
	int rc;

	if (n == 0) {
		free(s);
		return 0;
	}
	if (!s)
		return LEASE_ENOMEM;
	if ((rc = lease_fetch_refs(s, st, names, n, NULL)) == 0)
		for (i = 0; i < n; i++) {
			at[i] = s[i].present ? lease_oid_equal(&s[i].oid, &from[i])
			                     : lease_oid_is_zero(&from[i]);
			lease_ref_state_clear(&s[i]);
		}
	free(s);
	return rc;
}

/* Read again the members of @p names still marked in @p at; unmark those
 * that moved from @p from. @return 0 or a read error. */
static int recheck(lease_store *st, const char *const *names, const lease_oid *from, size_t n,
                   int *at)
{
	const char *left[LEASE_SET_MAX];
	lease_oid lfrom[LEASE_SET_MAX];
	int lat[LEASE_SET_MAX] = {0}, rc;
	size_t idx[LEASE_SET_MAX], m = 0, j;

	for (j = 0; j < n; j++)
		if (at[j]) {
			idx[m] = j;
			left[m] = names[j];
			lfrom[m++] = from[j];
		}
	if ((rc = cut_scan(st, left, lfrom, m, lat)) < 0)
		return rc;
	for (j = 0; j < m; j++)
		at[idx[j]] = lat[j];
	return 0;
}

int lease__set_cut_read(op_ctx *c, const lease_payload *p)
{
	const char *names[LEASE_SET_MAX] = {NULL};
	lease_oid from[LEASE_SET_MAX];
	int at[LEASE_SET_MAX] = {0}, i, rc;
	size_t n = 0, j;

	c->cut_n = 0;
	memset(from, 0, sizeof(from));
	/* github applies a set write atomically (updateRefs: "if one of them is
	 * rejected, no other ref will be modified"): never cut there, so no
	 * read is spent looking (every request counts, issue 39) */
	if (!p->has_set || p->phase == LEASE_PHASE_RELEASED || lease__store_budgeted(c->st))
		return 0;
	for (i = 0; i < p->set_count && i < LEASE_SET_MAX; i++)
		if (strcmp(p->set_members[i], p->name) != 0) {
			names[n] = p->set_members[i];
			from[n++] = p->set_from[i];
		}
	if ((rc = cut_scan(c->st, names, from, n, at)) < 0)
		return rc;
	/* A mate still at its old commit may be one whose rename is still to
	 * come: the set's writer took every member's ref lock before its first
	 * rename and holds each until that member's own. A mate whose lock a
	 * live writer holds is a write in progress, not a cut (the member is
	 * held); one whose lock is gone or dead is read again, since its
	 * writer may have renamed it between the read and the look. */
	for (j = 0; j < n; j++)
		if (at[j] && (rc = lease__ref_write_live(c->st, names[j])) != 0) {
			if (rc < 0)
				return rc;
			at[j] = 0;
		}
	if ((rc = recheck(c->st, names, from, n, at)) < 0)
		return rc;
	for (j = 0; j < n; j++)
		if (at[j]) {
			snprintf(c->cut_names[c->cut_n], sizeof(c->cut_names[0]), "%s", names[j]);
			c->cut_from[c->cut_n++] = from[j];
		}
	if (c->cut_n)
		lease__store_log(c->st, LEASE_LOG_INFO,
		                 "%s: its set write %s did not reach %s: held by no one", c->name,
		                 p->set_write, c->cut_names[0]);
	return c->cut_n > 0;
}

int lease_set_cut_mate(char *mate, size_t matelen, lease_store *st, const lease_payload *p)
{
	op_ctx *c;
	int cut;

	if (mate && matelen)
		mate[0] = '\0';
	if (!st || !p)
		return LEASE_EINVALID;
	if (!p->has_set)
		return 0;
	if (!(c = calloc(1, sizeof(*c))))
		return LEASE_ENOMEM;
	c->st = st;
	c->name = p->name;
	cut = lease__set_cut_read(c, p);
	if (cut > 0 && mate && matelen)
		snprintf(mate, matelen, "%s", c->cut_names[0]);
	free(c);
	return cut;
}

int lease__set_cut_lost(op_ctx *c)
{
	const char *names[LEASE_SET_MAX] = {NULL};
	int at[LEASE_SET_MAX] = {0}, i;

	for (i = 0; i < c->cut_n; i++)
		names[i] = c->cut_names[i];
	if (c->cut_n == 0)
		return 0;
	if (cut_scan(c->st, names, c->cut_from, (size_t)c->cut_n, at) < 0)
		return 1;
	for (i = 0; i < c->cut_n; i++)
		if (!at[i])
			return 1;
	return 0;
}

int lease__set_cut_answer(op_ctx *c, const lease_ref_state *s)
{
	lease_result *out = c->out;
	int rc;

	lease__rt_result_state(out, s);
	rc = lease__rt_result_fail(
	        out, c->st, LEASE_EHELD,
	        "held: the set write this acquire found cut reached '%s' while it took the lease "
	        "(protocol.md \"Sets\"); not acquired, its commit is left to expire",
	        c->cut_names[0]);
	out->status = LEASE_STATUS_HELD; /* answered: a holder, not an error */
	out->holds_token = 0;
	memset(out->payload.lease_token, 0, sizeof(out->payload.lease_token));
	return rc;
}

/* The set's contexts, one per member, checked before any I/O (F08). */
static int set_prepare(set_ctx *x, const char *const *names, const lease_op_options *opts)
{
	size_t i, j;
	int rc;

	for (i = 0; i < x->n; i++) {
		if (!(x->c[i] = lease__rt_ctx_new(x->kind, &x->out->members[i], x->st, names[i],
		                                  opts)))
			return x->out->code = LEASE_ENOMEM;
		lease__rt_result_init(&x->out->members[i], x->st, x->c[i]->name);
		if ((rc = lease__rt_check_inputs(x->c[i])) < 0)
			return set_fail(x, i, rc);
		for (j = 0; j < i; j++)
			if (strcmp(names[j], names[i]) == 0) {
				rc = lease__rt_result_fail(
				        &x->out->members[i], x->st, LEASE_EINVALID,
				        "lease '%s' named twice in the set", names[i]);
				return set_fail(x, i, rc);
			}
	}
	return 0;
}

/* A store that cannot write a set atomically refuses it: never separate
 * writes instead (protocol.md "Sets"). */
static int set_unwritable(set_ctx *x)
{
	x->out->code = lease__store_set_error(
	        x->st, LEASE_ECONFIG,
	        "the %s store cannot write several leases in one atomic write, so a set "
	        "cannot be %s there (protocol.md \"Sets\"); nothing written",
	        lease_store_kind(x->st), lease_status_name(lease__rt_kind_success[x->kind]));
	snprintf(x->out->message, sizeof(x->out->message), "%s", lease_store_last_error(x->st));
	return x->out->code;
}

int lease__set_run(op_kind kind, lease_set_result *out, lease_store *st, const char *const *names,
                   size_t n, const lease_op_options *opts)
{
	set_ctx *x;
	size_t i;
	int rc;

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
	if ((rc = set_prepare(x, names, opts)) == 0) {
		if (!lease_store_can_write_set(st)) {
			rc = set_unwritable(x);
		} else {
			const char *cnames[LEASE_SET_MAX];

			for (i = 0; i < n; i++)
				cnames[i] = x->c[i]->name; /* copies: they outlive the caller's */
			lease__store_op_begin(st, 0);      /* --timeout bounds the operation */
			rc = lease__engine_run_set(st, cnames, n, &set_ops, x);
			lease__store_op_end(st);
		}
	}
	for (i = 0; i < n; i++)
		free(x->c[i]);
	free(x);
	out->code = rc;
	if (rc < 0 && !out->message[0]) {
		const char *m = lease_store_last_error(st);
		snprintf(out->message, sizeof(out->message), "%s", *m ? m : lease_error_id(rc));
	}
	return rc;
}
