/* The five post-state-validated primitives (protocol.md §3).
 *
 * Every transport call is followed by a re-read; a success report alone is
 * never trusted. Outcomes of a failed write:
 *
 *   reported      re-read shows          result
 *   success       the target             0
 *   success       the old state          poll within the verify window; then
 *                                        window 0 (authoritative reads, local):
 *                                        LEASE_ECAS noop, outcome known;
 *                                        else LEASE_EUNVERIFIED noop, unknown
 *   success       a third state          LEASE_ECAS, outcome unknown (ours may
 *                                        have landed and been replaced)
 *   mismatch      the target             LEASE_ECAS, outcome unknown (may be
 *                                        this very write re-sent, §5)
 *   mismatch      anything else          LEASE_ECAS, outcome known
 *   "exists"      absent                 poll within the window (never settled
 *   (create)                             by an absent read); then
 *                                        LEASE_EUNVERIFIED, unknown
 *   error         (best-effort re-read)  the error; outcome unknown unless the
 *                                        error says the request was refused
 *
 * A create answered "exists" is always flagged noop (§3 table). */
#include "lease/door.h"
#include "lease/schemas.h"
#include "store/handle.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bound on re-reads of one namespace entry that changed under us. */
#define ENTRY_REREADS 3
/* First and largest pause between verify-window polls, ms. */
#define POLL_FIRST_MS 25
#define POLL_MAX_MS   1000

enum prim_kind { K_CREATE, K_REPLACE, K_DELETE };

static const char *terr(lease_store *st)
{
	const char *m = st->t->last_error ? st->t->last_error(st->t) : NULL;

	return m && *m ? m : "no detail";
}

/* The one way a transport's message reaches the handle (issue 26 step 2):
 * after a failed call, its last_error(), verbatim, becomes the handle's
 * message — the deepest error, so what the primitive says afterwards
 * (lease__store_set_error(): the first message wins) is kept only when the
 * transport said nothing. @return @p why, the primitive's own words for
 * that case. */
static const char *tfail(lease_store *st, int rc, const char *why)
{
	const char *m = st->t->last_error ? st->t->last_error(st->t) : NULL;

	if (m && *m)
		(void)lease__store_set_error(st, rc, "%s", m);
	return why;
}

/* The store's debug log (-v -v, issue 23): one line per transport call,
 * whatever the backend — "local: replace_ref refs/leases/a -> ok (0.4 ms)".
 * @p t0 is lease__store_mono_ms() before the call. */
static void tlog(lease_store *st, int64_t t0, const char *call, const char *subject, int rc)
{
	if (st->log_level < LEASE_LOG_DEBUG)
		return;
	lease__store_log(st, LEASE_LOG_DEBUG, "%s: %s%s%s -> %s (%lld ms)%s%s",
	                 lease_store_kind(st), call, subject ? " " : "", subject ? subject : "",
	                 rc < 0 ? lease_error_id(rc) : "ok",
	                 (long long)(lease__store_mono_ms(st) - t0), rc < 0 ? ": " : "",
	                 rc < 0 ? terr(st) : "");
}

static void cas_begin(lease_store *st, const char *primitive, const char *refname,
                      const lease_oid *expected)
{
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	st->cas_compared = 0;
	lease__store_clear_error(st);
	snprintf(st->cas_err.primitive, sizeof(st->cas_err.primitive), "%s", primitive);
	snprintf(st->cas_err.ref, sizeof(st->cas_err.ref), "%s", refname);
	if (expected) {
		st->cas_err.has_expected = 1;
		st->cas_err.expected = *expected;
	}
}

/* Set cas_err's outcome and the handle's message; return @p code. */
static int cas_fail(lease_store *st, int code, lease_outcome outcome, int noop, const char *why)
{
	lease_cas_error *e = &st->cas_err;
	char exp[LEASE_OID_HEXSZ + 1] = "-", obs[LEASE_OID_HEXSZ + 1] = "absent";

	e->outcome = outcome;
	e->noop = noop;
	/* "(expected …, observed …)" only where a post-state was compared (a
	 * read's own failure — a 401, a refused connection — states its cause
	 * alone; issue 23, issue 24 #5) */
	if (!st->cas_compared)
		return lease__store_set_error(
		        st, code, "%s %s: %s%s", e->primitive, e->ref, why,
		        outcome == LEASE_OUTCOME_KNOWN ? "" : " (outcome unknown)");
	if (e->has_expected)
		lease_oid_tohex(exp, &e->expected);
	if (e->observed_present)
		lease_oid_tohex(obs, &e->observed);
	return lease__store_set_error(
	        st, code, "%s %s: %s (expected %s, observed %s; outcome %s%s)", e->primitive,
	        e->ref, why, exp, obs, outcome == LEASE_OUTCOME_KNOWN ? "known" : "unknown",
	        noop ? ", no-op" : "");
}

/* Read a ref's target alone: the transport's read_ref_oid (version 3; a
 * conditional read where the backend has one, which so also keeps the
 * validator of this state), else read_ref with the commit discarded. */
static int reread(lease_store *st, const char *refname, int *present, lease_oid *oid)
{
	lease_commit c;
	int64_t t0;
	int has_commit = 0, rc;

	memset(&c, 0, sizeof(c));
	t0 = lease__store_mono_ms(st);
	if (st->t->version >= 3 && st->t->read_ref_oid) {
		*present = 0;
		memset(oid, 0, sizeof(*oid));
		rc = st->t->read_ref_oid(st->t, refname, present, oid);
		tlog(st, t0, "read_ref_oid", refname, rc);
	} else {
		rc = st->t->read_ref(st->t, refname, present, oid, &has_commit, &c);
		tlog(st, t0, "read_ref", refname, rc);
	}
	lease_commit_clear(&c);
	if (rc < 0)
		*present = 0;
	return rc;
}

static void observe(lease_store *st, int present, const lease_oid *oid)
{
	st->cas_compared = 1;
	st->cas_err.observed_present = present;
	if (present)
		st->cas_err.observed = *oid;
	else
		memset(&st->cas_err.observed, 0, sizeof(st->cas_err.observed));
}

static int is_target(enum prim_kind k, int present, const lease_oid *oid, const lease_oid *new_oid)
{
	if (k == K_DELETE)
		return !present;
	return present && lease_oid_equal(oid, new_oid);
}

static int is_old(enum prim_kind k, int present, const lease_oid *oid, const lease_oid *old)
{
	if (k == K_CREATE)
		return !present;
	return present && lease_oid_equal(oid, old);
}

/* Errors after which the request cannot have been applied. */
static int refused(int rc)
{
	return rc == LEASE_EAUTH || rc == LEASE_EINVALID || rc == LEASE_ECONFIG ||
	       rc == LEASE_ERATELIMIT || rc == LEASE_ENOMEM || rc == LEASE_ELOCKED;
}

/* Validate the post-state after the transport answered @p trc. */
static int verify(lease_store *st, enum prim_kind k, const char *refname, const lease_oid *old,
                  const lease_oid *new_oid, int trc)
{
	int window = st->verify_timeout_ms > 0 ? st->verify_timeout_ms : 0;
	int64_t deadline = lease__store_mono_ms(st) + window, pause = POLL_FIRST_MS;
	int reported_mismatch = (k == K_CREATE) ? trc == LEASE_EEXISTS : trc == LEASE_ECAS;
	int present = 0, rc;
	lease_oid oid;

	memset(&oid, 0, sizeof(oid));
	if (trc < 0 && !reported_mismatch) {
		const char *why = tfail(st, trc, "the transport failed without a message");

		/* Best-effort re-read: the observed state helps the runtime settle. */
		if (reread(st, refname, &present, &oid) == 0)
			observe(st, present, &oid);
		return cas_fail(st, trc,
		                refused(trc) && !is_target(k, present, &oid, new_oid)
		                        ? LEASE_OUTCOME_KNOWN
		                        : LEASE_OUTCOME_UNKNOWN,
		                0, why);
	}
	for (;;) {
		int64_t left;

		if ((rc = reread(st, refname, &present, &oid)) < 0) {
			return cas_fail(st, rc, LEASE_OUTCOME_UNKNOWN, k == K_CREATE && trc != 0,
			                tfail(st, rc, "cannot re-read the ref"));
		}
		observe(st, present, &oid);
		left = deadline - lease__store_mono_ms(st);
		if (trc == 0 && is_target(k, present, &oid, new_oid))
			return 0;
		if (k == K_CREATE && reported_mismatch) {
			if (present)
				return cas_fail(st, LEASE_ECAS,
				                lease_oid_equal(&oid, new_oid)
				                        ? LEASE_OUTCOME_UNKNOWN
				                        : LEASE_OUTCOME_KNOWN,
				                1, "the ref already exists");
			if (left <= 0)
				return cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_UNKNOWN, 1,
				                "create answered \"already exists\" but the ref "
				                "reads absent");
		} else if (reported_mismatch) {
			/* the store's own words where it gave any (a refusal of
			 * unknown wording must reach the caller, issue 38) */
			const char *m = st->t->last_error ? st->t->last_error(st->t) : NULL;

			return cas_fail(
			        st, LEASE_ECAS,
			        is_target(k, present, &oid, new_oid) ? LEASE_OUTCOME_UNKNOWN
			                                             : LEASE_OUTCOME_KNOWN,
			        0,
			        m && *m ? m
			                : "compare failed: the ref does not hold the expected "
			                  "oid");
		} else if (is_old(k, present, &oid, old)) {
			if (left <= 0) {
				if (window == 0)
					return cas_fail(st, LEASE_ECAS, LEASE_OUTCOME_KNOWN, 1,
					                "the transport reported success but the "
					                "ref is unchanged (a no-op)");
				return cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_UNKNOWN, 1,
				                "the transport reported success but the ref "
				                "still shows the old state after the verify "
				                "window");
			}
		} else {
			return cas_fail(st, LEASE_ECAS, LEASE_OUTCOME_UNKNOWN, 0,
			                "the ref holds another state (lost race)");
		}
		lease__store_sleep_ms(st, pause < left ? pause : left, LEASE_SLEEP_FULL);
		pause = pause * 2 > POLL_MAX_MS ? POLL_MAX_MS : pause * 2;
	}
}

/* refs/<ns>/<name> or refs/<ns>-archive/<name>/<YYYYMMDDTHHMMSSZ>-<8 hex>. */
/* A ticket ref's tail after refs/<ns>-queue/: <name>/<16 lowercase hex>
 * (protocol.md §5 "Fair waiting"). */
static int check_ticket_refname(lease_store *st, const char *rest, const char *refname)
{
	const char *slash = strchr(rest, '/');
	char name[LEASE_NAME_MAX + 1], err[256];
	size_t i;

	if (!slash || (size_t)(slash - rest) > LEASE_NAME_MAX || strlen(slash + 1) != 16)
		goto bad;
	memcpy(name, rest, (size_t)(slash - rest));
	name[slash - rest] = '\0';
	if (lease_name_validate(name, err, sizeof(err)) < 0)
		return lease__store_set_error(st, LEASE_EINVALID, "invalid ref '%s': %s", refname,
		                              err);
	for (i = 1; i <= 16; i++)
		if (!((slash[i] >= '0' && slash[i] <= '9') || (slash[i] >= 'a' && slash[i] <= 'f')))
			goto bad;
	return 0;
bad:
	return lease__store_set_error(st, LEASE_EINVALID,
	                              "invalid ticket ref '%s': expected "
	                              "refs/%s-queue/<name>/<16 hex>",
	                              refname, st->ns);
}

static int check_refname(lease_store *st, const char *refname)
{
	char pfx[LEASE_NS_MAX + 32], apfx[LEASE_NS_MAX + 32], err[256];
	size_t n, an;
	const char *rest, *slash;

	n = (size_t)snprintf(pfx, sizeof(pfx), "refs/%s/", st->ns);
	an = (size_t)snprintf(apfx, sizeof(apfx), "refs/%s-queue/", st->ns);
	if (strncmp(refname, apfx, an) == 0)
		return check_ticket_refname(st, refname + an, refname);
	an = (size_t)snprintf(apfx, sizeof(apfx), "refs/%s-archive/", st->ns);
	if (strncmp(refname, pfx, n) == 0) {
		if (lease_ref_name_validate(refname + n, err, sizeof(err)) < 0)
			return lease__store_set_error(st, LEASE_EINVALID, "invalid ref '%s': %s",
			                              refname, err);
		return 0;
	}
	if (strncmp(refname, apfx, an) != 0)
		return lease__store_set_error(st, LEASE_EINVALID,
		                              "ref '%s' is outside refs/%s/ and refs/%s-archive/",
		                              refname, st->ns, st->ns);
	rest = refname + an;
	if (!(slash = strchr(rest, '/')) || (size_t)(slash - rest) > LEASE_NAME_MAX)
		goto bad;
	{
		char name[LEASE_NAME_MAX + 1];

		memcpy(name, rest, (size_t)(slash - rest));
		name[slash - rest] = '\0';
		if (lease_ref_name_validate(name, err, sizeof(err)) < 0)
			return lease__store_set_error(st, LEASE_EINVALID, "invalid ref '%s': %s",
			                              refname, err);
	}
	if (!lease__archive_tail_valid(slash + 1))
		goto bad;
	return 0;
bad:
	return lease__store_set_error(st, LEASE_EINVALID,
	                              "invalid archive ref '%s': expected "
	                              "refs/%s-archive/<name>/<YYYYMMDDTHHMMSSZ>-<8 hex>",
	                              refname, st->ns);
}

static int name_to_ref(lease_store *st, char *out, size_t outlen, const char *name)
{
	char err[256];
	int rc;

	if (!name)
		return lease__store_set_error(st, LEASE_EINVALID, "no lease name given");
	if ((rc = lease_refname(out, outlen, st->ns, name, err, sizeof(err))) < 0)
		return lease__store_set_error(st, rc, "%s", err);
	return 0;
}

/* A CAS primitive starts: no failure recorded yet; the lease's full ref name. */
static int cas_name_to_ref(lease_store *st, char *out, size_t outlen, const char *name)
{
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	return name_to_ref(st, out, outlen, name);
}

int lease_write_commit(lease_oid *out, lease_store *st, const lease_oid *parent,
                       const char *message)
{
	int64_t t0;
	int rc;

	lease__store_clear_error(st);
	if (!message)
		return lease__store_set_error(st, LEASE_EINVALID, "no commit message");
	t0 = lease__store_mono_ms(st);
	rc = st->t->write_commit(st->t, out, parent, message, lease_store_now(st));
	tlog(st, t0, "write_commit", NULL, rc);
	if (rc < 0)
		return lease__store_set_error(st, rc, "%s",
		                              tfail(st, rc, "cannot write the commit"));
	return 0;
}

int lease_cas_create_ref(lease_store *st, const char *refname, const lease_oid *new_oid)
{
	int64_t t0;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	if (!refname || (rc = check_refname(st, refname)) < 0)
		return refname ? rc : lease__store_set_error(st, LEASE_EINVALID, "no ref given");
	if (!new_oid || lease_oid_is_zero(new_oid))
		return lease__store_set_error(st, LEASE_EINVALID, "cas_create %s: invalid new oid",
		                              refname);
	cas_begin(st, "cas_create", refname, new_oid);
	t0 = lease__store_mono_ms(st);
	rc = st->t->create_ref(st->t, refname, new_oid);
	tlog(st, t0, "create_ref", refname, rc);
	return verify(st, K_CREATE, refname, NULL, new_oid, rc);
}

int lease_cas_create(lease_store *st, const char *name, const lease_oid *new_oid)
{
	char ref[320];
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if ((rc = cas_name_to_ref(st, ref, sizeof(ref), name)) < 0)
		return rc;
	return lease_cas_create_ref(st, ref, new_oid);
}

int lease_cas_replace(lease_store *st, const char *name, const lease_oid *old_oid,
                      const lease_oid *new_oid)
{
	char ref[320];
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if ((rc = cas_name_to_ref(st, ref, sizeof(ref), name)) < 0)
		return rc;
	return lease_cas_replace_ref(st, ref, old_oid, new_oid);
}

int lease_cas_replace_ref(lease_store *st, const char *ref, const lease_oid *old_oid,
                          const lease_oid *new_oid)
{
	int64_t t0;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	if (!ref || (rc = check_refname(st, ref)) < 0)
		return ref ? rc : lease__store_set_error(st, LEASE_EINVALID, "no ref given");
	if (!old_oid || !new_oid || lease_oid_is_zero(old_oid) || lease_oid_is_zero(new_oid))
		return lease__store_set_error(st, LEASE_EINVALID, "cas_replace %s: invalid oid",
		                              ref);
	cas_begin(st, "cas_replace", ref, new_oid);
	if (lease_oid_equal(old_oid, new_oid)) {
		/* Same SHA: would be reported as success by some transports (§3). */
		return cas_fail(st, LEASE_ECAS, LEASE_OUTCOME_KNOWN, 1,
		                "old and new oid are equal: a replace would be a no-op");
	}
	t0 = lease__store_mono_ms(st);
	rc = st->t->replace_ref(st->t, ref, old_oid, new_oid);
	tlog(st, t0, "replace_ref", ref, rc);
	return verify(st, K_REPLACE, ref, old_oid, new_oid, rc);
}

int lease_cas_delete(lease_store *st, const char *name, const lease_oid *old_oid)
{
	char ref[320];
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if ((rc = cas_name_to_ref(st, ref, sizeof(ref), name)) < 0)
		return rc;
	return lease_cas_delete_ref(st, ref, old_oid);
}

int lease_cas_delete_ref(lease_store *st, const char *ref, const lease_oid *old_oid)
{
	int64_t t0;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	if (!ref || (rc = check_refname(st, ref)) < 0)
		return ref ? rc : lease__store_set_error(st, LEASE_EINVALID, "no ref given");
	if (!old_oid || lease_oid_is_zero(old_oid))
		return lease__store_set_error(st, LEASE_EINVALID, "cas_delete %s: invalid oid",
		                              ref);
	cas_begin(st, "cas_delete", ref, old_oid);
	t0 = lease__store_mono_ms(st);
	rc = st->t->delete_ref(st->t, ref, old_oid);
	tlog(st, t0, "delete_ref", ref, rc);
	return verify(st, K_DELETE, ref, old_oid, NULL, rc);
}

/* Parse s->commit's payload into s (never fatal except for ENOMEM). */
static int parse_payload(lease_ref_state *s)
{
	const char *msg;
	int rc;

	s->payload_rc = 0;
	s->payload_error[0] = '\0';
	s->op = LEASE_OP_UNKNOWN;
	/* Unreadable tips (§7): permanent (exit 65; 77 for a ref file this user
	 * may not read), break --force replaces them. */
	if (s->commit.unreadable) {
		s->payload_rc = s->commit.unreadable;
		snprintf(s->payload_error, sizeof(s->payload_error),
		         "%s (break --force replaces the ref)",
		         s->commit.message && *s->commit.message ? s->commit.message
		                                                 : "the ref file cannot be read");
		return 0;
	}
	if (s->commit.symbolic) {
		s->payload_rc = LEASE_EPAYLOAD;
		snprintf(s->payload_error, sizeof(s->payload_error),
		         "the ref is a symbolic ref to %s; reflease never writes through one "
		         "(break --force replaces it)",
		         s->commit.message && *s->commit.message ? s->commit.message : "nothing");
		return 0;
	}
	if (s->commit.missing) {
		char hex[LEASE_OID_HEXSZ + 1];

		lease_oid_tohex(hex, &s->oid);
		s->payload_rc = LEASE_EPAYLOAD;
		snprintf(s->payload_error, sizeof(s->payload_error),
		         "the ref's object %s is missing from the store (pruned, or a broken "
		         "copy; break --force replaces the ref)",
		         hex);
		return 0;
	}
	if (!s->commit.is_commit) {
		s->payload_rc = LEASE_EPAYLOAD;
		snprintf(s->payload_error, sizeof(s->payload_error),
		         "the ref points at an object that is not a commit");
		return 0;
	}
	msg = s->commit.message ? s->commit.message : "";
	rc = lease_message_parse(&s->payload, &s->op, msg, strlen(msg), s->name, s->payload_error,
	                         sizeof(s->payload_error));
	if (rc == LEASE_ENOMEM)
		return rc;
	s->payload_rc = rc;
	if (rc < 0 && !s->payload_error[0])
		snprintf(s->payload_error, sizeof(s->payload_error), "%s", lease_error_id(rc));
	return 0;
}

/* Read the commit @p oid into @p out; checks it is the object asked for.
 * 0, LEASE_ENOTFOUND, LEASE_EUNVERIFIED (another object came back), or an error. */
static int read_commit_checked(lease_store *st, lease_commit *out, const lease_oid *oid)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = st->t->read_commit(st->t, out, oid)) < 0) {
		lease_commit_clear(out);
		return rc;
	}
	if (!lease_oid_equal(&out->oid, oid))
		return LEASE_EUNVERIFIED;
	return 0;
}

int lease__read_commit(lease_commit *out, lease_store *st, const lease_oid *oid)
{
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	rc = read_commit_checked(st, out, oid);
	if (rc == LEASE_EUNVERIFIED) {
		lease_commit_clear(out);
		return lease__store_set_error(st, rc, "object read back with another oid");
	}
	if (rc < 0) {
		return lease__store_set_error(st, rc, "%s",
		                              tfail(st, rc, "cannot read the object"));
	}
	return 0;
}

int lease__walk_chain(lease_store *st, const lease_oid *start_oid, const lease_commit *start,
                      int max, lease_chain_visit visit, void *payload)
{
	lease_commit c = {0};
	const lease_commit *cp = start;
	lease_oid cur = *start_oid;
	int step, rc = 0;

	for (step = 0; step < max; step++) {
		if (!cp) {
			lease_commit_clear(&c);
			if (lease__read_commit(&c, st, &cur) < 0 || !c.is_commit) {
				rc = visit(&cur, NULL, payload);
				break;
			}
			cp = &c;
		}
		if ((rc = visit(&cur, cp, payload)) != 0 || !cp->is_commit || !cp->has_parent)
			break;
		cur = cp->parent;
		cp = NULL;
	}
	lease_commit_clear(&c);
	return rc;
}

int lease__list_refs(lease_ref_list *out, lease_store *st, const char *prefix)
{
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	if ((rc = st->t->list_refs(st->t, out, prefix)) < 0) {
		lease_ref_list_clear(out);
		return lease__store_set_error(st, rc, "cannot list %s", tfail(st, rc, prefix));
	}
	return 0;
}

int lease__list_ref_locks(lease_ref_lock_list *out, lease_store *st, const char *prefix)
{
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	if (!st->t->list_ref_locks)
		return 0;
	if ((rc = st->t->list_ref_locks(st->t, out, prefix)) < 0) {
		lease_ref_lock_list_clear(out);
		return lease__store_set_error(st, rc, "cannot list the ref locks under %s",
		                              tfail(st, rc, prefix));
	}
	return 0;
}

int lease__ref_write_live(lease_store *st, const char *name)
{
	char ref[320], prefix[320];
	lease_ref_lock_list locks;
	const char *slash;
	size_t i;
	int rc, live = 0;

	if ((rc = name_to_ref(st, ref, sizeof(ref), name)) < 0)
		return rc;
	slash = strrchr(ref, '/');
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - ref + 1), ref);
	if ((rc = lease__list_ref_locks(&locks, st, prefix)) < 0)
		return rc;
	for (i = 0; i < locks.count; i++)
		if (strcmp(locks.items[i].refname, ref) == 0)
			live = locks.items[i].live;
	lease_ref_lock_list_clear(&locks);
	return live;
}

int lease__scan_commits(lease_store *st, const char *prefix, size_t max_objects,
                        int (*visit)(const char *msg, void *payload), void *payload)
{
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (st->t->version < 2 || !st->t->scan_commits)
		return LEASE_ENOTFOUND;
	if ((rc = st->t->scan_commits(st->t, prefix, max_objects, visit, payload)) < 0)
		return lease__store_set_error(st, rc, "%s",
		                              tfail(st, rc, "cannot scan the store's commits"));
	return 0;
}

int lease__remove_ref_lock(lease_store *st, const lease_ref_lock *lk, int64_t min_age_s)
{
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (!st->t->remove_ref_lock)
		return LEASE_ENOTFOUND;
	rc = st->t->remove_ref_lock(st->t, lk, min_age_s, lease_store_now(st));
	if (rc < 0 && rc != LEASE_ENOTFOUND) {
		return lease__store_set_error(st, rc, "cannot remove the lock file of %s",
		                              tfail(st, rc, lk->refname));
	}
	return rc;
}

/* The ref still holds @p oid and its object is still absent (one re-read). */
static int missing_confirmed(lease_store *st, const char *ref, const lease_oid *oid)
{
	lease_commit c = {0};
	lease_oid again;
	int present = 0, rc;

	if (reread(st, ref, &present, &again) < 0 || !present || !lease_oid_equal(&again, oid))
		return 0;
	rc = st->t->read_commit(st->t, &c, oid);
	lease_commit_clear(&c);
	return rc == LEASE_ENOTFOUND;
}

/* A lease read starts: @p out cleared and named, the full ref name into @p ref. */
static int fetch_begin(lease_ref_state *out, lease_store *st, const char *name, char *ref,
                       size_t reflen)
{
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	lease__store_clear_error(st);
	if ((rc = name_to_ref(st, ref, reflen, name)) < 0)
		return rc;
	snprintf(out->name, sizeof(out->name), "%s", name);
	return 0;
}

/* A lease read ends: the ref @p ref was read (@p present, out->oid, and
 * out->commit when @p has_commit); read the commit when it did not come
 * with the answer, check it is the ref's object, parse the payload. */
static int fetch_finish(lease_ref_state *out, lease_store *st, const char *ref, int present,
                        int has_commit)
{
	int rc;

	if (!present) {
		lease_commit_clear(&out->commit);
		memset(&out->oid, 0, sizeof(out->oid));
		return 0;
	}
	out->present = 1;
	st->cas_err.has_expected = 1;
	st->cas_err.expected = out->oid;
	if (!has_commit) {
		lease_commit_clear(&out->commit);
		rc = read_commit_checked(st, &out->commit, &out->oid);
		if (rc == LEASE_ENOTFOUND && st->t->verify_window_ms == 0 &&
		    missing_confirmed(st, ref, &out->oid)) {
			/* Authoritative reads: the ref still holds an absent object. */
			memset(&out->commit, 0, sizeof(out->commit));
			out->commit.oid = out->oid;
			out->commit.missing = 1;
			rc = 0;
		}
		if (rc == LEASE_ENOTFOUND) {
			rc = cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_KNOWN, 0,
			              "incomplete read: the ref's object is missing");
			goto fail;
		}
		if (rc < 0 && rc != LEASE_EUNVERIFIED) {
			rc = cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0,
			              tfail(st, rc, "the transport failed without a message"));
			goto fail;
		}
	}
	if (!lease_oid_equal(&out->commit.oid, &out->oid)) {
		observe(st, 1, &out->commit.oid);
		rc = cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_KNOWN, 0,
		              "inconsistent read: the object returned is not the oid the ref "
		              "holds");
		goto fail;
	}
	observe(st, 1, &out->oid);
	if ((rc = parse_payload(out)) < 0)
		goto fail;
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	return 0;
fail:
	lease_ref_state_clear(out);
	return rc;
}

/* Read the full ref @p ref into @p out (named @p name, begun). */
static int fetch_at(lease_ref_state *out, lease_store *st, const char *ref, const char *name)
{
	int64_t t0;
	int present = 0, has_commit = 0, rc;

	cas_begin(st, "fetch_ref", ref, NULL);
	t0 = lease__store_mono_ms(st);
	rc = st->t->read_ref(st->t, ref, &present, &out->oid, &has_commit, &out->commit);
	tlog(st, t0, "read_ref", ref, rc);
	if (rc < 0) {
		lease_ref_state_clear(out);
		snprintf(out->name, sizeof(out->name), "%s", name);
		return cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0,
		                tfail(st, rc, "the transport failed without a message"));
	}
	return fetch_finish(out, st, ref, present, has_commit);
}

int lease_fetch_ref(lease_ref_state *out, lease_store *st, const char *name)
{
	char ref[320];
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if ((rc = fetch_begin(out, st, name, ref, sizeof(ref))) < 0)
		return rc;
	return fetch_at(out, st, ref, name);
}

int lease__fetch_refname(lease_ref_state *out, lease_store *st, const char *refname)
{
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (!refname || (rc = check_refname(st, refname)) < 0)
		return refname ? rc : lease__store_set_error(st, LEASE_EINVALID, "no ref given");
	return fetch_at(out, st, refname, "");
}

/* The transport's batched read (read_refs, version 4), or NULL. */
static int (*batched_read(const lease_store *st))(lease_transport *, lease_ref_read *, size_t)
{
	return st->t->version >= 4 ? st->t->read_refs : NULL;
}

/* One read_refs call over @p r (refnames set, the rest zeroed); a failed
 * call leaves every entry unanswered, its commits freed. */
static int read_refs_call(lease_store *st, lease_ref_read *r, size_t n)
{
	int64_t t0 = lease__store_mono_ms(st);
	char subject[360];
	size_t i;
	int rc;

	rc = st->t->read_refs(st->t, r, n);
	snprintf(subject, sizeof(subject), "%s%s", r[0].refname,
	         n > 1 ? " and the rest of the set" : "");
	tlog(st, t0, "read_refs", subject, rc);
	for (i = 0; i < n; i++) {
		if (rc < 0 || !r[i].answered || !r[i].present) {
			lease_commit_clear(&r[i].commit);
			r[i].has_commit = 0;
		}
		if (rc < 0 || !r[i].answered) {
			r[i].answered = 0;
			r[i].present = 0;
			memset(&r[i].oid, 0, sizeof(r[i].oid));
		}
	}
	return rc;
}

int lease_fetch_refs(lease_ref_state *out, lease_store *st, const char *const *names, size_t n,
                     size_t *failed)
{
	lease_ref_read r[LEASE_SET_MAX];
	char refs[LEASE_SET_MAX][320];
	size_t i, f = 0;
	int rc = 0;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(r, 0, sizeof(r));
	if (n == 0 || n > LEASE_SET_MAX || !names) {
		rc = lease__store_set_error(st, LEASE_EINVALID,
		                            "a set names 1 to %d leases (%zu given)", LEASE_SET_MAX,
		                            n);
		goto done;
	}
	memset(out, 0, n * sizeof(*out));
	for (i = 0; i < n; i++) {
		if ((rc = fetch_begin(&out[i], st, names[i], refs[i], sizeof(refs[i]))) < 0) {
			f = i;
			goto done;
		}
		r[i].refname = refs[i];
	}
	if (batched_read(st) && (rc = read_refs_call(st, r, n)) < 0) {
		/* the whole read failed: reported on the first member */
		cas_begin(st, "fetch_refs", r[0].refname, NULL);
		rc = cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0,
		              tfail(st, rc, "the transport failed without a message"));
		goto done;
	}
	for (i = 0; i < n; i++) {
		f = i;
		/* a ref left unanswered, or answered with another object than
		 * its target, is read on its own (sys/transport.h read_refs) */
		if (r[i].answered && r[i].present && r[i].has_commit &&
		    !lease_oid_equal(&r[i].commit.oid, &r[i].oid)) {
			lease__store_log(st, LEASE_LOG_DEBUG,
			                 "fetch_refs: %s answered with another object; read alone",
			                 refs[i]);
			lease_commit_clear(&r[i].commit);
			r[i].answered = 0;
		}
		if (!r[i].answered) {
			if ((rc = lease_fetch_ref(&out[i], st, names[i])) < 0)
				goto done;
			continue;
		}
		cas_begin(st, "fetch_ref", r[i].refname, NULL);
		out[i].oid = r[i].oid;
		out[i].commit = r[i].commit; /* moved */
		memset(&r[i].commit, 0, sizeof(r[i].commit));
		if ((rc = fetch_finish(&out[i], st, refs[i], r[i].present, r[i].has_commit)) < 0) {
			snprintf(out[i].name, sizeof(out[i].name), "%s", names[i]);
			goto done;
		}
	}
done:
	for (i = 0; i < LEASE_SET_MAX; i++)
		lease_commit_clear(&r[i].commit);
	if (rc < 0) {
		for (i = 0; names && i < n && n <= LEASE_SET_MAX; i++)
			if (i != f)
				lease_ref_state_clear(&out[i]);
		if (failed)
			*failed = f;
	}
	return rc;
}

int lease_store_can_watch(const lease_store *st)
{
	return st && st->t->wait_change != NULL;
}

int lease_ref_still_at(lease_store *st, const char *name, const lease_oid *oid)
{
	char ref[320];
	lease_oid at;
	int present = 0, rc;

	lease__store_clear_error(st);
	if ((rc = name_to_ref(st, ref, sizeof(ref), name)) < 0)
		return rc;
	/* an operation of its own: its requests (a rate-limit pause included)
	 * end with --timeout, and within a wait with the wait (issue 24 #3) */
	lease__store_op_begin(st, 0);
	rc = reread(st, ref, &present, &at);
	lease__store_op_end(st);
	if (rc < 0)
		return lease__store_set_error(st, rc, "cannot read %s", tfail(st, rc, ref));
	return present && lease_oid_equal(&at, oid);
}

int lease__refname_still_at(lease_store *st, const char *refname, const lease_oid *oid)
{
	lease_oid at;
	int present = 0, rc;

	lease__store_clear_error(st);
	if (!refname || (rc = check_refname(st, refname)) < 0)
		return refname ? rc : lease__store_set_error(st, LEASE_EINVALID, "no ref given");
	if ((rc = reread(st, refname, &present, &at)) < 0)
		return lease__store_set_error(st, rc, "cannot read %s", tfail(st, rc, refname));
	return present && lease_oid_equal(&at, oid);
}

int lease_wait_ref_change(lease_store *st, const char *name, int known_present,
                          const lease_oid *known_oid, int timeout_ms)
{
	char ref[320];
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if ((rc = name_to_ref(st, ref, sizeof(ref), name)) < 0)
		return rc;
	return lease_wait_refname_change(st, ref, known_present, known_oid, timeout_ms);
}

int lease_wait_refname_change(lease_store *st, const char *ref, int known_present,
                              const lease_oid *known_oid, int timeout_ms)
{
	static const lease_oid zero;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (!ref || (rc = check_refname(st, ref)) < 0)
		return ref ? rc : lease__store_set_error(st, LEASE_EINVALID, "no ref given");
	if (timeout_ms <= 0)
		return 0;
	if (st->t->wait_change) {
		/* the polls' requests end with the wait (issue 24 item 3) */
		lease__store_wait_begin(st, timeout_ms);
		rc = st->t->wait_change(st->t, ref, known_present,
		                        known_present && known_oid ? known_oid : &zero,
		                        timeout_ms) > 0;
		lease__store_op_end(st);
		return rc;
	}
	/* a signal cuts the sleep short: 1, so the caller looks at it */
	return lease__store_sleep_ms(st, timeout_ms, LEASE_SLEEP_INTERRUPTIBLE) < 0 ? 1 : 0;
}

/* One look at each ref of @p known (read_ref_oid): 1 when one differs. */
static int refs_differ(lease_store *st, const lease_ref_read *known, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		lease_oid oid;
		int present = 0, rc;

		if ((rc = reread(st, known[i].refname, &present, &oid)) < 0)
			return rc;
		if (present != (known[i].present != 0) ||
		    (present && !lease_oid_equal(&oid, &known[i].oid)))
			return 1;
	}
	return 0;
}

int lease__wait_refs_change(lease_store *st, const char *prefix, const lease_ref_read *known,
                            size_t n, int timeout_ms)
{
	int64_t end, pace_ms;
	size_t i;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	for (i = 0; i < n; i++)
		if (strncmp(known[i].refname, prefix, strlen(prefix)) != 0 ||
		    (rc = check_refname(st, known[i].refname)) < 0)
			return lease__store_set_error(st, LEASE_EINVALID, "%s is not under %s",
			                              known[i].refname, prefix);
	if (timeout_ms <= 0 || n == 0)
		return 0;
	/* the polls end with the wait; the look at its end gets up to 2 s */
	lease__store_wait_begin(st, (int64_t)timeout_ms + 2000);
	if (st->t->version >= 5 && st->t->wait_refs_change) {
		rc = st->t->wait_refs_change(st->t, prefix, known, n, timeout_ms);
		lease__store_op_end(st);
		return rc < 0 ? 1 : rc; /* a failed poll: the caller reads again */
	}
	pace_ms = st->t->wait_change ? 200 : (int64_t)st->t->ttl_min_s * 1000 / 20;
	end = lease__store_mono_ms(st) + timeout_ms;
	for (rc = 0; rc == 0;) {
		int64_t left = end - lease__store_mono_ms(st);

		if (left <= 0)
			break;
		if (lease__store_sleep_ms(st, left < pace_ms ? left : pace_ms,
		                          LEASE_SLEEP_INTERRUPTIBLE) < 0)
			rc = 1; /* a signal: the caller looks at it */
		else
			rc = refs_differ(st, known, n); /* at the end too: 0 = unchanged then */
	}
	lease__store_op_end(st);
	return rc;
}

void lease_ref_state_clear(lease_ref_state *s)
{
	if (!s)
		return;
	lease_commit_clear(&s->commit);
	lease_commit_clear(&s->parent_commit);
	memset(s, 0, sizeof(*s));
}

void lease_namespace_clear(lease_namespace *ns)
{
	size_t i;

	if (!ns)
		return;
	for (i = 0; i < ns->count; i++)
		lease_ref_state_clear(&ns->leases[i]);
	for (i = 0; i < ns->invalid_count; i++)
		free(ns->invalid[i].refname);
	free(ns->leases);
	free(ns->invalid);
	memset(ns, 0, sizeof(*ns));
}

static int entry_cmp(const void *a, const void *b)
{
	const lease_ref_entry *const *x = a, *const *y = b;

	return strcmp((*x)->refname, (*y)->refname);
}

/* Read one listed lease with its commit and parent. *gone = 1 when the ref
 * vanished between listing and reading. */
static int read_entry(lease_store *st, lease_ref_state *s, const lease_ref_entry *e, int *gone)
{
	lease_oid oid = e->oid;
	int have = 0, attempt, rc, rrc, present, has_commit;

	*gone = 0;
	if (e->has_commit && lease_oid_equal(&e->commit.oid, &oid)) {
		if ((rc = lease_commit_copy(&s->commit, &e->commit)) < 0)
			return rc;
		have = 1;
	}
	/* A prefetched commit of another oid: the ref changed after the listing. */
	rc = e->has_commit && !have ? LEASE_EUNVERIFIED : 1;
	for (attempt = 0; !have; attempt++) {
		if (rc == 1)
			rc = read_commit_checked(st, &s->commit, &oid);
		if (rc == LEASE_ENOTFOUND && st->t->verify_window_ms == 0 &&
		    missing_confirmed(st, e->refname, &oid)) {
			memset(&s->commit, 0, sizeof(s->commit));
			s->commit.oid = oid;
			s->commit.missing = 1;
			rc = 0;
		}
		if (rc == 0)
			break;
		lease_commit_clear(&s->commit);
		if (rc != LEASE_ENOTFOUND && rc != LEASE_EUNVERIFIED)
			return cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0,
			                tfail(st, rc, "the transport failed without a message"));
		rc = 1;
		if (attempt >= ENTRY_REREADS) {
			observe(st, 1, &oid);
			return cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_KNOWN, 0,
			                "inconsistent listing: the entry's object cannot be read "
			                "consistently");
		}
		/* Changed (or lying) between listing and reading: read the ref again. */
		present = has_commit = 0;
		rrc = st->t->read_ref(st->t, e->refname, &present, &oid, &has_commit, &s->commit);
		if (rrc < 0) {
			lease_commit_clear(&s->commit);
			return cas_fail(st, rrc, LEASE_OUTCOME_KNOWN, 0,
			                tfail(st, rrc, "the transport failed without a message"));
		}
		if (!present) {
			lease_commit_clear(&s->commit);
			*gone = 1;
			return 0;
		}
		if (has_commit && lease_oid_equal(&s->commit.oid, &oid))
			have = 1;
		else
			lease_commit_clear(&s->commit);
	}
	s->present = 1;
	s->oid = oid;
	if (s->commit.is_commit && s->commit.has_parent) {
		if (e->has_parent_commit &&
		    lease_oid_equal(&e->parent_commit.oid, &s->commit.parent) &&
		    lease_oid_equal(&oid, &e->oid)) {
			if ((rc = lease_commit_copy(&s->parent_commit, &e->parent_commit)) < 0)
				return rc;
			s->has_parent_commit = 1;
		} else {
			rc = read_commit_checked(st, &s->parent_commit, &s->commit.parent);
			if (rc == 0) {
				s->has_parent_commit = 1;
			} else {
				lease_commit_clear(&s->parent_commit);
				if (rc == LEASE_EUNVERIFIED) {
					observe(st, 1, &s->commit.parent);
					return cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0,
					                "inconsistent read of the parent commit");
				}
				if (rc != LEASE_ENOTFOUND)
					return cas_fail(
					        st, rc, LEASE_OUTCOME_KNOWN, 0,
					        tfail(st, rc,
					              "the transport failed without a message"));
			}
		}
	}
	return parse_payload(s);
}

/* An entry read_entry() could not read consistently, read on its own
 * (the lenient path, protocol.md §7): unreadable becomes payload_rc
 * LEASE_EPAYLOAD ("unreadable: why"); *gone when deleted since the listing.
 * Only LEASE_ENOMEM and LEASE_ENET end the walk. */
static int read_entry_lenient(lease_store *st, lease_ref_state *s, const lease_ref_entry *e,
                              const char *name, int *gone)
{
	char why[200];
	int rc;

	lease_ref_state_clear(s);
	rc = lease_fetch_ref(s, st, name);
	if (rc == LEASE_ENOMEM || rc == LEASE_ENET)
		return rc;
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s", lease_store_last_error(st));
		lease_ref_state_clear(s);
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->present = 1;
		s->oid = e->oid;
		s->payload_rc = LEASE_EPAYLOAD;
		snprintf(s->payload_error, sizeof(s->payload_error), "unreadable: %s", why);
	} else if (!s->present) {
		*gone = 1;
	} else if (s->commit.is_commit && s->commit.has_parent &&
	           read_commit_checked(st, &s->parent_commit, &s->commit.parent) == 0) {
		s->has_parent_commit = 1;
	} else {
		lease_commit_clear(&s->parent_commit);
	}
	return 0;
}

/* The namespace read, one lease at a time (lease_namespace_each(), and
 * lease_fetch_namespace() with @p strict): the listing in name order, each
 * entry read into one state and handed to @c visit. Strict: a duplicated or
 * inconsistent entry ends the walk (LEASE_EUNVERIFIED); lenient: a duplicate
 * is skipped and an entry that cannot be read consistently is read on its
 * own. The listing comes as one part (list_refs) or, lenient on a transport
 * that has it, part by part (list_refs_each: bounded memory, issue 29). */
typedef struct walk {
	lease_store *st;
	int strict;
	lease_namespace_visit visit;
	void *payload;
	char prefix[LEASE_NS_MAX + 8];
	size_t plen;
	size_t total;   /* refs of the namespace listed so far */
	char *last;     /* the last ref name walked (malloc), NULL before the first */
	size_t lastcap; /* bytes allocated at last */
	int stop;       /* the walk's own nonzero value ended a list_refs_each */
} walk;

/* Remember @p refname as the last name walked. */
static int walk_last(walk *w, const char *refname)
{
	size_t n = strlen(refname) + 1;
	char *p;

	if (n > w->lastcap) {
		if (!(p = realloc(w->last, n)))
			return LEASE_ENOMEM;
		w->last = p;
		w->lastcap = n;
	}
	memcpy(w->last, refname, n);
	return 0;
}

/* Walk one part of the listing: filter look-alikes, sort, skip what does
 * not sort after the last name walked (a duplicate, or a part's entry
 * before an earlier part's: sys/transport.h list_refs_each), read and visit
 * the rest in name order. */
static int walk_part(walk *w, const lease_ref_list *list)
{
	lease_store *st = w->st;
	lease_ref_entry **sorted = NULL;
	lease_ref_state s;
	char err[256];
	size_t n = 0, i;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	if (list->count && !(sorted = calloc(list->count, sizeof(*sorted))))
		return LEASE_ENOMEM;
	/* Look-alikes outside refs/<ns>/ (refs/<ns>-x/..., refs/<ns>x) are filtered. */
	for (i = 0; i < list->count; i++) {
		if (strncmp(list->items[i].refname, w->prefix, w->plen) == 0)
			sorted[n++] = &list->items[i];
		else
			lease__store_log(st, LEASE_LOG_DEBUG, "fetch_namespace: ignoring %s",
			                 list->items[i].refname);
	}
	w->total += n;
	if (n)
		qsort(sorted, n, sizeof(*sorted), entry_cmp);
	for (i = 1; w->strict && i < n; i++) {
		if (strcmp(sorted[i]->refname, sorted[i - 1]->refname) == 0) {
			snprintf(st->cas_err.ref, sizeof(st->cas_err.ref), "%s",
			         sorted[i]->refname);
			rc = cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_KNOWN, 0,
			              "inconsistent listing: the ref is listed twice");
			goto done;
		}
	}
	for (i = 0; i < n; i++) {
		const lease_ref_entry *e = sorted[i];
		const char *name = e->refname + w->plen;
		int gone = 0;

		if (w->last && strcmp(e->refname, w->last) <= 0) {
			/* lenient: a duplicate, or listed out of order (never strict:
			 * its one part has no duplicates left) */
			lease__store_log(
			        st, LEASE_LOG_DEBUG,
			        "fetch_namespace: %s listed again or out of order; skipped",
			        e->refname);
			continue;
		}
		if ((rc = walk_last(w, e->refname)) < 0)
			goto done;
		if (lease_ref_name_validate(name, err, sizeof(err)) < 0) {
			lease_invalid_ref iv;

			iv.refname = e->refname;
			iv.oid = e->oid;
			if ((rc = w->visit(NULL, &iv, w->total, w->payload)) != 0)
				goto done;
			continue;
		}
		snprintf(s.name, sizeof(s.name), "%s", name);
		snprintf(st->cas_err.ref, sizeof(st->cas_err.ref), "%s", e->refname);
		st->cas_err.has_expected = 1;
		st->cas_err.expected = e->oid;
		rc = read_entry(st, &s, e, &gone);
		if (rc < 0 && !w->strict && rc != LEASE_ENOMEM && rc != LEASE_ENET) {
			lease__store_log(st, LEASE_LOG_INFO, "%s: %s; reading it on its own", name,
			                 lease_store_last_error(st));
			gone = 0;
			rc = read_entry_lenient(st, &s, e, name, &gone);
		}
		if (rc == 0 && !gone)
			rc = w->visit(&s, NULL, w->total, w->payload);
		lease_ref_state_clear(&s);
		if (rc != 0)
			goto done;
	}
done:
	lease_ref_state_clear(&s);
	free(sorted);
	return rc;
}

/* list_refs_each's part callback: walk the part; a nonzero value of the
 * walk (the visitor's, or a read's error) ends the listing and is kept. */
static int walk_each_part(lease_ref_list *part, void *payload)
{
	walk *w = payload;
	int rc = walk_part(w, part);

	if (rc != 0)
		w->stop = rc;
	return rc;
}

static int namespace_walk(lease_store *st, int strict, lease_namespace_visit visit, void *payload)
{
	int64_t t0;
	lease_ref_list list = {NULL, 0, 0};
	walk w;
	int rc, paged = !strict && st->t->version >= 3 && st->t->list_refs_each;

	memset(&w, 0, sizeof(w));
	w.st = st;
	w.strict = strict;
	w.visit = visit;
	w.payload = payload;
	w.plen = (size_t)snprintf(w.prefix, sizeof(w.prefix), "refs/%s/", st->ns);
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	lease__store_clear_error(st);
	cas_begin(st, "fetch_namespace", w.prefix, NULL);
	t0 = lease__store_mono_ms(st);
	if (paged) {
		rc = st->t->list_refs_each(st->t, w.prefix, walk_each_part, &w);
		if (w.stop) {
			rc = w.stop; /* the walk's own end: its message is set */
			goto done;
		}
		tlog(st, t0, "list_refs_each", w.prefix, rc);
		if (rc < 0) {
			/* a part that fails after others were walked fails the whole
			 * read: never a partial namespace reported as complete */
			char why[512];

			snprintf(why, sizeof(why), "the listing failed after %zu refs: %s", w.total,
			         terr(st));
			cas_begin(st, "fetch_namespace", w.prefix, NULL);
			rc = cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0, why);
			goto done;
		}
	} else {
		rc = st->t->list_refs(st->t, &list, w.prefix);
		tlog(st, t0, "list_refs", w.prefix, rc);
		if (rc < 0) {
			rc = cas_fail(st, rc, LEASE_OUTCOME_KNOWN, 0,
			              tfail(st, rc, "the transport failed without a message"));
			goto done;
		}
		if ((rc = walk_part(&w, &list)) != 0)
			goto done;
	}
	memset(&st->cas_err, 0, sizeof(st->cas_err));
	rc = 0;
done:
	free(w.last);
	lease_ref_list_clear(&list);
	return rc;
}

int lease_namespace_each(lease_store *st, lease_namespace_visit visit, void *payload)
{
	lease__store_clear_error(st); /* a call begins: its first error wins */
	return namespace_walk(st, 0, visit, payload);
}

/* lease_fetch_namespace()'s visit: keep a copy of each state. */
static int collect(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total,
                   void *payload)
{
	lease_namespace *out = payload;
	lease_ref_state *d;
	int rc;

	if (!out->leases && total &&
	    (!(out->leases = calloc(total, sizeof(*out->leases))) ||
	     !(out->invalid = calloc(total, sizeof(*out->invalid)))))
		return LEASE_ENOMEM;
	if (iv) {
		if (!(out->invalid[out->invalid_count].refname = strdup(iv->refname)))
			return LEASE_ENOMEM;
		out->invalid[out->invalid_count++].oid = iv->oid;
		return 0;
	}
	d = &out->leases[out->count];
	*d = *s;
	memset(&d->commit, 0, sizeof(d->commit));
	memset(&d->parent_commit, 0, sizeof(d->parent_commit));
	if ((rc = lease_commit_copy(&d->commit, &s->commit)) < 0 ||
	    (s->has_parent_commit &&
	     (rc = lease_commit_copy(&d->parent_commit, &s->parent_commit)) < 0)) {
		lease_ref_state_clear(d);
		return rc;
	}
	out->count++;
	return 0;
}

int lease_fetch_namespace(lease_namespace *out, lease_store *st)
{
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	if ((rc = namespace_walk(st, 1, collect, out)) < 0)
		lease_namespace_clear(out);
	return rc;
}

/* The slow path when lease_fetch_namespace() gives up on one entry (a ref at
 * a missing object, say): list once more and read each lease on its own, so
 * one unreadable lease never stops the sweep (protocol.md §7); it is reported
 * as malformed-payload (door.h). */
static int list_cmp(const void *a, const void *b)
{
	return strcmp(((const lease_ref_entry *)a)->refname, ((const lease_ref_entry *)b)->refname);
}

int lease__fetch_namespace_lenient(lease_namespace *out, lease_store *st)
{
	lease_ref_list list = {NULL, 0, 0};
	char prefix[LEASE_NS_MAX + 8], err[256];
	size_t i, plen;
	int rc = 0;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	plen = (size_t)snprintf(prefix, sizeof(prefix), "refs/%s/", st->ns);
	if ((rc = lease__list_refs(&list, st, prefix)) < 0)
		return lease__store_set_error(st, rc, "cannot list %s", prefix);
	if (list.count) {
		qsort(list.items, list.count, sizeof(*list.items), list_cmp);
		if (!(out->leases = calloc(list.count, sizeof(*out->leases))) ||
		    !(out->invalid = calloc(list.count, sizeof(*out->invalid)))) {
			rc = LEASE_ENOMEM;
			goto done;
		}
	}
	for (i = 0; i < list.count; i++) {
		const lease_ref_entry *le = &list.items[i];
		const char *name = le->refname + plen;
		lease_ref_state *s = &out->leases[out->count];
		char why[200];

		if (strncmp(le->refname, prefix, plen) != 0 ||
		    (i > 0 && strcmp(le->refname, list.items[i - 1].refname) == 0))
			continue; /* look-alike or duplicate */
		if (lease_ref_name_validate(name, err, sizeof(err)) < 0) {
			if (!(out->invalid[out->invalid_count].refname = strdup(le->refname))) {
				rc = LEASE_ENOMEM;
				goto done;
			}
			out->invalid[out->invalid_count++].oid = le->oid;
			continue;
		}
		rc = lease_fetch_ref(s, st, name);
		if (rc == LEASE_ENOMEM || rc == LEASE_ENET)
			goto done;
		if (rc < 0) {
			snprintf(why, sizeof(why), "%s", lease_store_last_error(st));
			lease_ref_state_clear(s);
			snprintf(s->name, sizeof(s->name), "%s", name);
			s->present = 1;
			s->oid = le->oid;
			s->payload_rc = LEASE_EPAYLOAD;
			snprintf(s->payload_error, sizeof(s->payload_error), "unreadable: %s", why);
		} else if (!s->present) {
			lease_ref_state_clear(s);
			continue; /* deleted since the listing */
		} else if (s->commit.is_commit && s->commit.has_parent &&
		           read_commit_checked(st, &s->parent_commit, &s->commit.parent) == 0) {
			s->has_parent_commit = 1;
		} else {
			lease_commit_clear(&s->parent_commit);
		}
		out->count++;
	}
	rc = 0;
done:
	lease_ref_list_clear(&list);
	if (rc < 0)
		lease_namespace_clear(out);
	return rc;
}

/* ---- sets (protocol.md "Sets", issue 27) ---------------------------------- */

int lease_store_can_write_set(const lease_store *st)
{
	return st && st->t->version >= 3 && st->t->cas_many != NULL;
}

/* Re-read every member of a set write: counts of members at their target,
 * at their old state, and elsewhere; 0 or the first read error. */
static int set_observe(lease_store *st, const lease_ref_update *u, size_t n, size_t *at_new,
                       size_t *at_old, size_t *elsewhere)
{
	lease_ref_read r[LEASE_SET_MAX];
	size_t i;
	int present, rc;
	lease_oid oid;

	*at_new = *at_old = *elsewhere = 0;
	memset(r, 0, sizeof(r));
	for (i = 0; i < n; i++)
		r[i].refname = u[i].refname;
	/* the whole set in one read where the transport can (github: one
	 * GraphQL query, protocol.md "Sets"); a ref it leaves unanswered is
	 * re-read on its own */
	if (batched_read(st) && (rc = read_refs_call(st, r, n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		lease_commit_clear(&r[i].commit); /* the targets alone are compared */
	for (i = 0; i < n; i++) {
		present = r[i].present;
		oid = r[i].oid;
		if (!r[i].answered && (rc = reread(st, u[i].refname, &present, &oid)) < 0)
			return rc;
		if (present && lease_oid_equal(&oid, &u[i].new_oid))
			(*at_new)++;
		else if (lease_oid_is_zero(&u[i].old_oid)
		                 ? !present
		                 : present && lease_oid_equal(&oid, &u[i].old_oid))
			(*at_old)++;
		else {
			(*elsewhere)++;
			observe(st, present, &oid);
		}
	}
	return 0;
}

int lease_cas_set(lease_store *st, const char *const *names, const lease_oid *olds,
                  const lease_oid *news, size_t n)
{
	lease_ref_update u[LEASE_SET_MAX];
	char refs[LEASE_SET_MAX][320];
	int window = st->verify_timeout_ms > 0 ? st->verify_timeout_ms : 0;
	int64_t t0, deadline, pause = POLL_FIRST_MS;
	size_t i, j, at_new, at_old, other;
	int trc, rc;

	memset(&st->cas_err, 0, sizeof(st->cas_err));
	lease__store_clear_error(st);
	if (n == 0 || n > LEASE_SET_MAX || !names || !news)
		return lease__store_set_error(st, LEASE_EINVALID,
		                              "a set names 1 to %d leases (%zu given)",
		                              LEASE_SET_MAX, n);
	for (i = 0; i < n; i++) {
		if ((rc = name_to_ref(st, refs[i], sizeof(refs[i]), names[i])) < 0)
			return rc;
		for (j = 0; j < i; j++)
			if (strcmp(refs[j], refs[i]) == 0)
				return lease__store_set_error(st, LEASE_EINVALID,
				                              "lease '%s' named twice in the set",
				                              names[i]);
		if (lease_oid_is_zero(&news[i]) || (olds && lease_oid_equal(&olds[i], &news[i])))
			return lease__store_set_error(st, LEASE_EINVALID,
			                              "cas_set %s: invalid oid (zero, or old equal "
			                              "to new)",
			                              refs[i]);
		u[i].refname = refs[i];
		if (olds)
			u[i].old_oid = olds[i];
		else
			memset(&u[i].old_oid, 0, sizeof(u[i].old_oid));
		u[i].new_oid = news[i];
	}
	snprintf(st->cas_err.primitive, sizeof(st->cas_err.primitive), "%s", "cas_set");
	snprintf(st->cas_err.ref, sizeof(st->cas_err.ref), "%s", refs[0]);
	st->cas_err.has_expected = 1;
	st->cas_err.expected = news[0];
	if (!lease_store_can_write_set(st))
		return cas_fail(st, LEASE_ECONFIG, LEASE_OUTCOME_KNOWN, 1,
		                "this store cannot write several leases in one atomic write "
		                "(its transport has no cas_many); nothing written");
	t0 = lease__store_mono_ms(st);
	trc = st->t->cas_many(st->t, u, n);
	tlog(st, t0, "cas_many", refs[0], trc);
	if (trc == LEASE_ECAS) /* the store's own words (first wins), before the re-read */
		(void)tfail(st, trc, NULL);
	if (trc < 0 && trc != LEASE_ECAS) {
		const char *why = tfail(st, trc, "the transport failed without a message");

		rc = set_observe(st, u, n, &at_new, &at_old, &other);
		return cas_fail(st, trc,
		                refused(trc) && rc == 0 && at_new == 0 ? LEASE_OUTCOME_KNOWN
		                                                       : LEASE_OUTCOME_UNKNOWN,
		                0, why);
	}
	deadline = lease__store_mono_ms(st) + window;
	for (;;) {
		int64_t left;

		if ((rc = set_observe(st, u, n, &at_new, &at_old, &other)) < 0) {
			return cas_fail(st, rc, LEASE_OUTCOME_UNKNOWN, 0,
			                tfail(st, rc, "cannot re-read the set"));
		}
		if (trc == 0 && at_new == n)
			return 0;
		left = deadline - lease__store_mono_ms(st);
		if (trc == LEASE_ECAS)
			return cas_fail(st, LEASE_ECAS,
			                at_new ? LEASE_OUTCOME_UNKNOWN : LEASE_OUTCOME_KNOWN, 0,
			                "compare failed: a member does not hold the expected oid");
		if (other)
			return cas_fail(st, LEASE_ECAS, LEASE_OUTCOME_UNKNOWN, 0,
			                "a member holds another state (lost race)");
		if (left <= 0) {
			char why[300];

			if (at_new == 0 && window == 0)
				return cas_fail(st, LEASE_ECAS, LEASE_OUTCOME_KNOWN, 1,
				                "the transport reported success but no member "
				                "changed (a no-op)");
			snprintf(why, sizeof(why),
			         "the transport reported success but %zu of %zu members show "
			         "the write after the verify window",
			         at_new, n);
			return cas_fail(st, LEASE_EUNVERIFIED, LEASE_OUTCOME_UNKNOWN, at_new == 0,
			                why);
		}
		lease__store_sleep_ms(st, pause < left ? pause : left, LEASE_SLEEP_FULL);
		pause = pause * 2 > POLL_MAX_MS ? POLL_MAX_MS : pause * 2;
	}
}
