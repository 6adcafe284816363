/* Reconcile (protocol.md §6, §7): the batch sweep, its opt-in actions and a
 * lease's history.
 *
 * Classification reads each lease with its parent commit (one
 * lease_fetch_namespace) and never stops on an unreadable lease. Decisions
 * written here (docs/protocol.md restates them):
 *  - not-a-commit, malformed-payload, unsupported-version (major != 1) and
 *    name-mismatch end a lease's classification: nothing else can be judged
 *    from a payload that is not this lease's or cannot be read;
 *  - clock-skew uses the store's skew margin; expired uses max(grace, skew
 *    margin) and is not reported when the payload's acquired_at lies in the
 *    future (F17: a payload from the future is clock-skew, never expired);
 *  - a negative heartbeat interval inside a tenure is clock-skew, not a rate;
 *  - for a pre-bump payload the heartbeat time is only approximate, so the
 *    "from the future" test uses acquired_at and the largest readable TTL.
 */
#include "reflease/reconcile.h"
#include "reflease/queue.h"

#include <stddef.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/commit.h"
#include "lease/door.h"
#include "lease/policy.h"
#include "reflease/version.h"
#include "store/store.h"
#include "util/util.h"

/* Ref lock files older than this are stale, s (protocol.md §7). */
#define LOCK_STALE_S 60

static const char *const anomaly_names[LEASE_ANOM__COUNT] = {"malformed-payload",
                                                             "unsupported-version",
                                                             "name-mismatch",
                                                             "not-a-commit",
                                                             "invalid-name",
                                                             "expired",
                                                             "heartbeat-rate-above-floor",
                                                             "clock-skew",
                                                             "stale-ref-lock",
                                                             "pre-bump-payload",
                                                             "missing-object",
                                                             "symbolic-ref",
                                                             "unreadable-ref",
                                                             "stale-ticket",
                                                             "slot-count-mismatch"};

const char *lease_anomaly_name(lease_anomaly_id id)
{
	return (unsigned)id < LEASE_ANOM__COUNT ? anomaly_names[id] : "unknown";
}

const char *lease_severity_name(lease_severity sev)
{
	switch (sev) {
	case LEASE_SEV_OK: return "ok";
	case LEASE_SEV_INFO: return "info";
	case LEASE_SEV_WARNING: return "warning";
	case LEASE_SEV_ERROR: return "error";
	case LEASE_SEV_NEVER: return "never";
	}
	return "unknown";
}

int lease_severity_parse(lease_severity *out, const char *s)
{
	static const lease_severity levels[] = {LEASE_SEV_INFO, LEASE_SEV_WARNING, LEASE_SEV_ERROR,
	                                        LEASE_SEV_NEVER};
	size_t i;

	for (i = 0; s && i < sizeof(levels) / sizeof(levels[0]); i++)
		if (strcmp(s, lease_severity_name(levels[i])) == 0) {
			*out = levels[i];
			return 0;
		}
	return LEASE_EINVALID;
}

const char *lease_hb_method_name(lease_hb_method m)
{
	return m == LEASE_HB_APPROXIMATE ? "approximate" : "exact";
}

/* ---- classification ------------------------------------------------------------------ */

static lease_anomaly *add_anomaly(lease_reconcile_entry *e, lease_anomaly_id id, lease_severity sev,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static lease_anomaly *add_anomaly(lease_reconcile_entry *e, lease_anomaly_id id, lease_severity sev,
                                  const char *fmt, ...)
{
	lease_anomaly *grown, *a;
	va_list ap;
	size_t i;

	for (i = 0; i < e->anomaly_count; i++)
		if (e->anomalies[i].id == id)
			return NULL; /* each id at most once per lease */
	if (!(grown = realloc(e->anomalies, (e->anomaly_count + 1) * sizeof(*grown))))
		return NULL;
	e->anomalies = grown;
	a = &grown[e->anomaly_count++];
	memset(a, 0, sizeof(*a));
	a->id = id;
	a->severity = sev;
	va_start(ap, fmt);
	vsnprintf(a->message, sizeof(a->message), fmt, ap);
	va_end(ap);
	if (sev > e->highest)
		e->highest = sev;
	return a;
}

static int has_anomaly(const lease_reconcile_entry *e, lease_anomaly_id id)
{
	size_t i;

	for (i = 0; i < e->anomaly_count; i++)
		if (e->anomalies[i].id == id)
			return 1;
	return 0;
}

/* Heartbeat time of @p p (protocol.md §6): exact from ttl_seconds, else
 * approximated with the next (newer) payload's TTL when known, else the
 * default. */
static void hb_time(int64_t *t, lease_hb_method *m, int64_t *assumed, const lease_payload *p,
                    const lease_payload *next, int64_t default_ttl)
{
	if (p->has_ttl) {
		*t = p->expires_at - p->ttl_seconds;
		*m = LEASE_HB_EXACT;
		*assumed = 0;
		return;
	}
	*assumed = next && next->has_ttl && next->ttl_seconds > 0 ? next->ttl_seconds : default_ttl;
	*t = p->expires_at - *assumed;
	*m = LEASE_HB_APPROXIMATE;
}

/* Whether @p tip (written by @p op) is a heartbeat of @p parent's tenure
 * (protocol.md §6): the summary says heartbeat, or for a commit naming no
 * known op, token, phase and acquired_at unchanged with expires_at moved
 * forward. A migration, transition, reacquire or takeover never is. */
static int is_tenure_heartbeat(const lease_payload *tip, lease_op op, const lease_payload *parent)
{
	if (tip->phase == LEASE_PHASE_RELEASED || parent->phase == LEASE_PHASE_RELEASED)
		return 0;
	if (strcmp(tip->lease_token, parent->lease_token) != 0)
		return 0;
	if (op == LEASE_OP_HEARTBEAT)
		return 1;
	if (op != LEASE_OP_UNKNOWN)
		return 0;
	return tip->phase == parent->phase && tip->acquired_at == parent->acquired_at &&
	       tip->expires_at > parent->expires_at;
}

static void fmt_time(char out[LEASE_TIME_STRSZ + 1], int64_t t)
{
	lease_time_format(out, t);
}

/* Clock-skew checks of one payload against @p now; returns 1 when a
 * timestamp lies in the future (which suppresses expired). */
static int check_clock_skew(lease_reconcile_entry *e, const lease_payload *p, int64_t now,
                            int64_t skew)
{
	char a[LEASE_TIME_STRSZ + 1], b[LEASE_TIME_STRSZ + 1];
	int64_t hb;

	fmt_time(a, p->acquired_at);
	if (p->acquired_at > now + skew) {
		add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		            "acquired_at %s is %llds in the future (skew margin %llds)", a,
		            (long long)(p->acquired_at - now), (long long)skew);
		return 1;
	}
	if (p->has_ttl) {
		hb = p->expires_at - p->ttl_seconds;
		fmt_time(b, p->expires_at);
		if (hb > now + skew) {
			add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
			            "expires_at %s is %llds ahead, more than ttl_seconds %lld "
			            "allows: heartbeat time %llds in the future",
			            b, (long long)(p->expires_at - now), (long long)p->ttl_seconds,
			            (long long)(hb - now));
			return 1;
		}
		if (p->acquired_at > hb) {
			fmt_time(b, hb);
			add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
			            "acquired_at %s is after the heartbeat time %s", a, b);
		}
		return 0;
	}
	/* Pre-bump: only what holds whatever the TTL was. */
	fmt_time(b, p->expires_at);
	if (p->expires_at - now > LEASE_TTL_READ_MAX + skew) {
		add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		            "expires_at %s is %llds ahead, more than any TTL allows", b,
		            (long long)(p->expires_at - now));
		return 1;
	}
	if (p->acquired_at > p->expires_at)
		add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		            "acquired_at %s is after expires_at %s", a, b);
	return 0;
}

/* The heartbeat before @p tip (written by @p op) is named in the payload
 * (1.2.0, protocol.md §2): a heartbeat that replaced one carries its time,
 * exact (only a tip with ttl_seconds is replaced). */
static int replaced_heartbeat(const lease_payload *tip, lease_op op)
{
	return op == LEASE_OP_HEARTBEAT && tip->has_ttl && tip->has_previous_heartbeat;
}

/* The heartbeat floor of the tip against the heartbeat before it
 * (protocol.md §6): the one it replaced (previous_heartbeat_at, §2), else
 * its parent's. */
static void check_floor(lease_reconcile_entry *e, const lease_payload *tip, lease_op op,
                        const lease_commit *parent_commit, const char *name, int64_t default_ttl)
{
	lease_payload parent;
	lease_hb_method mt, mp;
	int64_t ht, hp, at, ap, ttl, interval, prev_expiry;
	int ttl_changed;
	lease_anomaly *a;
	char err[64];

	if (replaced_heartbeat(tip, op)) {
		/* it replaced a heartbeat of the same tenure and TTL (§2) */
		hb_time(&ht, &mt, &at, tip, NULL, default_ttl);
		hp = tip->previous_heartbeat_at;
		mp = LEASE_HB_EXACT;
		ap = 0;
		ttl_changed = 0;
		prev_expiry = hp + tip->ttl_seconds;
	} else {
		if (!parent_commit->is_commit || !parent_commit->message)
			return;
		if (lease_message_parse(&parent, NULL, parent_commit->message,
		                        strlen(parent_commit->message), name, err, sizeof(err)) < 0)
			return;
		if (!is_tenure_heartbeat(tip, op, &parent))
			return;
		hb_time(&ht, &mt, &at, tip, NULL, default_ttl);
		hb_time(&hp, &mp, &ap, &parent, tip, default_ttl);
		ttl_changed =
		        parent.has_ttl && tip->has_ttl && parent.ttl_seconds != tip->ttl_seconds;
		prev_expiry = parent.expires_at;
	}
	ttl = tip->has_ttl ? tip->ttl_seconds : at;
	interval = ht - hp;
	if (interval < 0) {
		add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		            "heartbeat time %llds earlier than its parent's (%s)",
		            (long long)-interval,
		            lease_hb_method_name(mt == LEASE_HB_EXACT && mp == LEASE_HB_EXACT
		                                         ? LEASE_HB_EXACT
		                                         : LEASE_HB_APPROXIMATE));
		return;
	}
	/* the runtime's rule (policy.c): a TTL change is always due, and so is
	 * a heartbeat with less than half its TTL left */
	if (lease_policy_heartbeat_due(interval, ttl, ttl_changed, prev_expiry - ht, ttl))
		return;
	a = add_anomaly(e, LEASE_ANOM_HEARTBEAT_FLOOR, LEASE_SEV_WARNING, "%s", "");
	if (!a)
		return;
	a->has_floor = 1;
	a->method = mt == LEASE_HB_EXACT && mp == LEASE_HB_EXACT ? LEASE_HB_EXACT
	                                                         : LEASE_HB_APPROXIMATE;
	a->interval_seconds = interval;
	a->floor_seconds = (double)lease_policy_floor(ttl);
	a->assumed_ttl = mt == LEASE_HB_APPROXIMATE ? at : mp == LEASE_HB_APPROXIMATE ? ap : 0;
	if (a->method == LEASE_HB_EXACT)
		snprintf(a->message, sizeof(a->message),
		         "last two heartbeats %llds apart, below the floor of %gs (max(1, "
		         "ttl_seconds %lld / 10); exact)",
		         (long long)interval, a->floor_seconds, (long long)ttl);
	else
		snprintf(a->message, sizeof(a->message),
		         "last two heartbeats about %llds apart, below the floor of %gs "
		         "(approximate: pre-bump payload, TTL assumed %llds)",
		         (long long)interval, a->floor_seconds, (long long)a->assumed_ttl);
}

void lease_reconcile_entry_clear(lease_reconcile_entry *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->anomalies);
	free(e->archive_ref);
	free(e->action_message);
	memset(e, 0, sizeof(*e));
}

int lease_reconcile_classify(lease_reconcile_entry *e, const lease_ref_state *s, int64_t now,
                             int64_t skew_margin, int64_t expire_margin, int64_t default_ttl)
{
	const lease_payload *p;
	lease_payload own;
	lease_op op = s->op;
	char err[256];
	int rc, future;

	memset(e, 0, sizeof(*e));
	if (!(e->name = strdup(s->name)))
		return LEASE_ENOMEM;
	e->present = s->present;
	e->oid = s->oid;
	if (!s->present)
		return 0;
	if (default_ttl <= 0)
		default_ttl = LEASE_TTL_DEFAULT;
	/* Unreadable tips (issue 14): ids of their own; break --force replaces them. */
	if (s->payload_rc != 0 && s->commit.unreadable) {
		add_anomaly(e, LEASE_ANOM_UNREADABLE_REF, LEASE_SEV_ERROR, "%s", s->payload_error);
		return 0;
	}
	if (s->payload_rc != 0 && s->commit.symbolic) {
		add_anomaly(e, LEASE_ANOM_SYMBOLIC_REF, LEASE_SEV_ERROR, "%s", s->payload_error);
		return 0;
	}
	if (s->payload_rc != 0 && s->commit.missing) {
		add_anomaly(e, LEASE_ANOM_MISSING_OBJECT, LEASE_SEV_ERROR, "%s", s->payload_error);
		return 0;
	}
	if (s->payload_rc != 0 && !s->commit.is_commit && !lease_oid_is_zero(&s->commit.oid)) {
		add_anomaly(e, LEASE_ANOM_NOT_A_COMMIT, LEASE_SEV_ERROR,
		            "the ref points at an object that is not a commit");
		return 0;
	}
	if (s->payload_rc == 0) {
		p = &s->payload;
	} else {
		/* Re-read without the name check to tell name-mismatch apart. */
		if (!s->commit.message) {
			add_anomaly(e, LEASE_ANOM_MALFORMED_PAYLOAD, LEASE_SEV_ERROR, "%s",
			            s->payload_error[0] ? s->payload_error : "commit unreadable");
			return 0;
		}
		rc = lease_message_parse(&own, &op, s->commit.message, strlen(s->commit.message),
		                         NULL, err, sizeof(err));
		if (rc == LEASE_EVERSION) {
			add_anomaly(e, LEASE_ANOM_UNSUPPORTED_VERSION, LEASE_SEV_ERROR,
			            "payload of an unsupported major version: %s", err);
			return 0;
		}
		if (rc < 0) {
			add_anomaly(e, LEASE_ANOM_MALFORMED_PAYLOAD, LEASE_SEV_ERROR, "%s", err);
			return 0;
		}
		p = &own;
	}
	e->has_payload = 1;
	e->payload = *p;
	e->op = op;
	if (p->version_major == SDLC_VERSION_MAJOR && p->version_minor > SDLC_VERSION_MINOR)
		add_anomaly(e, LEASE_ANOM_UNSUPPORTED_VERSION, LEASE_SEV_WARNING,
		            "payload written by a newer schema %s (readable, not writable by %s)",
		            p->sdlc_version, SDLC_VERSION);
	if (strcmp(p->name, s->name) != 0) {
		add_anomaly(e, LEASE_ANOM_NAME_MISMATCH, LEASE_SEV_ERROR,
		            "payload name '%.100s' is not the ref's name", p->name);
		return 0;
	}
	if (!p->has_ttl)
		add_anomaly(e, LEASE_ANOM_PRE_BUMP, LEASE_SEV_INFO,
		            "pre-bump payload %s without ttl_seconds (run migrate)",
		            p->sdlc_version);
	future = check_clock_skew(e, p, now, skew_margin);
	if (!future && lease_policy_expired(p, now, expire_margin)) {
		char t[LEASE_TIME_STRSZ + 1];
		lease_anomaly *a;

		fmt_time(t, p->expires_at);
		a = add_anomaly(e, LEASE_ANOM_EXPIRED, LEASE_SEV_WARNING,
		                "%s lease expired at %s, %llds ago (margin %llds): the holder "
		                "stopped heartbeating",
		                lease_phase_name(p->phase), t, (long long)(now - p->expires_at),
		                (long long)expire_margin);
		if (a)
			a->seconds = now - p->expires_at;
	}
	if ((s->has_parent_commit || replaced_heartbeat(p, op)) && p->phase != LEASE_PHASE_RELEASED)
		check_floor(e, p, op, &s->parent_commit, s->name, default_ttl);
	return 0;
}

/* ---- actions -------------------------------------------------------------------------- */

static void skip(lease_reconcile_report *r, lease_reconcile_entry *e, int code, const char *kind,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* An action due but not done: @p code LEASE_ECAS when a concurrent write won. */
static void skip(lease_reconcile_report *r, lease_reconcile_entry *e, int code, const char *kind,
                 const char *fmt, ...)
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
	lease_err_mark_cut(buf, sizeof(buf), n);
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
		skip(ro->r, e, ro->last_rc, "reap", "outcome not verified: %s",
		     lease_store_last_error(en->st));
		return 1;
	}
	*p = e->payload;
	if ((rc = lease_payload_writable(p, err, sizeof(err))) < 0) {
		skip(ro->r, e, rc, "reap", "%s", err);
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
	lease_policy_released(p, now);
	if ((rc = lease_random_hex(p->nonce, LEASE_NONCE_HEXSZ / 2, lease_store_random(en->st))) <
	            0 ||
	    (rc = lease_payload_validate(p, err, sizeof(err))) < 0) {
		skip(ro->r, e, rc, "reap", "cannot build the released payload: %s",
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
		skip(ro->r, ro->e, LEASE_ECAS, "reap", "a concurrent write won: the ref is now %s",
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
		skip(ro->r, ro->e, rc, "reap", "%s", msg ? msg : lease_store_last_error(en->st));
	else
		skip(ro->r, ro->e, rc, "reap", "outcome not verified: %s",
		     msg ? msg : lease_store_last_error(en->st));
	return rc;
}

static const lease_engine_ops reap_ops = {reap_plan, reap_landed, NULL, reap_lost, reap_fail};

static void reap_one(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st,
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
	if (!(en = lease_engine_new(st, e->name, &reap_ops, &ro, &first, 1))) {
		skip(r, e, LEASE_ENOMEM, "reap", "out of memory");
		return;
	}
	lease_engine_run(en);
	free(en);
	if (!ro.landed)
		return;
	e->action = LEASE_ACTION_REAPED;
	e->action_kind = "reap";
	e->action_oid = ro.new_oid;
	r->reaped++;
}

static void prune_one(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st)
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
		skip(r, e, LEASE_EINVALID, "prune", "archive ref name too long");
		return;
	}
	lease_store_pace(st); /* one operation of a burst (issue 15) */
	rc = lease_cas_create_ref(st, refname, &e->oid);
	if (rc == LEASE_ECAS) {
		const lease_cas_error *ce = lease_store_last_cas_error(st);
		if (ce->observed_present && lease_oid_equal(&ce->observed, &e->oid))
			rc = 0; /* an existing archive ref with the same oid counts as done */
	}
	if (rc < 0) {
		skip(r, e, rc, "prune", "cannot write the archive ref %s: %s", refname,
		     lease_store_last_error(st));
		return;
	}
	if (!(e->archive_ref = strdup(refname))) {
		skip(r, e, LEASE_ENOMEM, "prune", "out of memory");
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
		skip(r, e, rc, "prune", "%s (archive %s kept): %s",
		     rc == LEASE_ECAS ? "the lease changed since it was read" : "the delete failed",
		     refname, why);
		return;
	}
	e->action = LEASE_ACTION_PRUNED;
	e->action_kind = "prune";
	r->pruned++;
}

/* ---- the sweep ------------------------------------------------------------------------ */

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const lease_reconcile_entry *)a)->name,
	              ((const lease_reconcile_entry *)b)->name);
}

static int push_entry(lease_reconcile_report *r, size_t *cap, lease_reconcile_entry **out)
{
	lease_reconcile_entry *grown;

	if (r->count == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		if (!(grown = realloc(r->entries, ncap * sizeof(*grown))))
			return LEASE_ENOMEM;
		r->entries = grown;
		*cap = ncap;
	}
	*out = &r->entries[r->count++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

static lease_reconcile_entry *find_entry(lease_reconcile_report *r, size_t sorted, const char *name)
{
	lease_reconcile_entry key, *e;
	size_t i;

	memset(&key, 0, sizeof(key));
	key.name = (char *)(uintptr_t)name;
	/* no entries yet (the streamed sweep's lock report starts empty): no
	 * bsearch on a NULL array */
	e = sorted ? bsearch(&key, r->entries, sorted, sizeof(*r->entries), entry_cmp) : NULL;
	if (e)
		return e;
	for (i = sorted; i < r->count; i++)
		if (strcmp(r->entries[i].name, name) == 0)
			return &r->entries[i];
	return NULL;
}

/* One stale lock @p lk: stale-ref-lock on entry @p name (found or added)
 * and, with --reap, its safe removal. */
static int stale_lock(lease_reconcile_report *r, size_t *cap, size_t sorted, lease_store *st,
                      const lease_reconcile_options *o, int64_t min_age, const lease_ref_lock *lk,
                      const char *name, const char *what)
{
	lease_reconcile_entry *e;
	lease_anomaly *a;
	int64_t age = r->now - lk->mtime;
	int rc;

	if (!(e = find_entry(r, sorted, name))) {
		if ((rc = push_entry(r, cap, &e)) < 0)
			return rc;
		if (!(e->name = strdup(name)))
			return LEASE_ENOMEM;
	}
	a = add_anomaly(e, LEASE_ANOM_STALE_REF_LOCK, LEASE_SEV_WARNING,
	                "%s %s.lock is %llds old (a crashed writer?)%s", what, lk->refname,
	                (long long)age, o->reap ? "" : "; --reap removes it");
	if (a)
		a->seconds = age;
	if (o->reap) {
		int rr = lease_remove_ref_lock(st, lk, min_age);
		if (rr == 0 || rr == LEASE_ENOTFOUND) {
			e->lock_removed = rr == 0;
			r->locks_removed += rr == 0;
		} else if (e->action == LEASE_ACTION_NONE) {
			skip(r, e, rr, "remove-lock", "stale lock kept: %s",
			     lease_store_last_error(st));
		}
	}
	return 0;
}

/* Stale ref locks (local stores): attach stale-ref-lock to the lease's entry
 * (or a lock-only entry) and, with --reap, remove them safely. The store's
 * own lock files (packed-refs.lock, reflease-delete.lock: prefix "") get a
 * lock-only entry named after the file (issue 14). */
static int sweep_locks(lease_reconcile_report *r, size_t *cap, lease_store *st,
                       const lease_reconcile_options *o, int64_t min_age)
{
	lease_ref_lock_list locks = {0};
	char prefix[LEASE_NS_MAX + 8], fname[300];
	size_t i, sorted = r->count, plen;
	int rc;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "refs/%s/", r->ns);
	if ((rc = lease_list_ref_locks(&locks, st, prefix)) < 0)
		return rc; /* the error names the directory and the cause */
	for (i = 0; i < locks.count && rc == 0; i++) {
		const lease_ref_lock *lk = &locks.items[i];

		if (r->now - lk->mtime < min_age || strncmp(lk->refname, prefix, plen) != 0)
			continue;
		rc = stale_lock(r, cap, sorted, st, o, min_age, lk, lk->refname + plen,
		                "ref lock file");
	}
	lease_ref_lock_list_clear(&locks);
	if (rc < 0)
		return rc;
	if ((rc = lease_list_ref_locks(&locks, st, "")) < 0)
		return rc;
	/* The reaper's own lock first: removing any other stale lock takes it,
	 * so a stale one of its own must be gone before (whatever the order the
	 * directory lists them in). */
	for (i = 0; i < 2 * locks.count && rc == 0; i++) {
		const lease_ref_lock *lk = &locks.items[i % locks.count];
		int own = strcmp(lk->refname, "reflease-delete") == 0;

		if ((i < locks.count) != own || r->now - lk->mtime < min_age)
			continue;
		snprintf(fname, sizeof(fname), "%s.lock", lk->refname);
		rc = stale_lock(r, cap, sorted, st, o, min_age, lk, fname, "store lock file");
	}
	lease_ref_lock_list_clear(&locks);
	return rc;
}

/* The stale tickets of lease @p name's queue (protocol.md §5 "Fair waiting"):
 * stale-ticket on its entry (found or added) and, with --reap, each deleted
 * by CAS from the oid read. */
static int stale_tickets(lease_reconcile_report *r, size_t *cap, size_t sorted, lease_store *st,
                         const lease_reconcile_options *o, const char *name)
{
	lease_reconcile_entry *e;
	lease_anomaly *a;
	lease_queue q;
	size_t i, stale = 0, removed = 0;
	int64_t past = 0;
	int rc;

	if ((rc = lease_queue_read(&q, st, name)) < 0)
		return rc;
	for (i = 0; i < q.count; i++) {
		const lease_ticket *t = &q.items[i];

		if (t->live)
			continue;
		stale++;
		if (t->readable && r->now - t->expires_at > past)
			past = r->now - t->expires_at;
		if (o->reap && lease_cas_delete_ref(st, t->refname, &t->oid) == 0)
			removed++;
	}
	lease_queue_clear(&q);
	if (!stale)
		return 0;
	if (!(e = find_entry(r, sorted, name))) {
		if ((rc = push_entry(r, cap, &e)) < 0)
			return rc;
		if (!(e->name = strdup(name)))
			return LEASE_ENOMEM;
	}
	a = add_anomaly(
	        e, LEASE_ANOM_STALE_TICKET, LEASE_SEV_WARNING,
	        "%zu ticket(s) in refs/%s-queue/%s/ expired or unreadable, up to %llds past "
	        "expiry (a fair waiter that died?)%s",
	        stale, r->ns, name, (long long)past, o->reap ? "" : "; --reap removes them");
	if (a)
		a->seconds = past;
	e->tickets_removed = removed;
	r->tickets_removed += removed;
	return 0;
}

/* Every lease queue under refs/<ns>-queue/: its stale tickets. */
static int sweep_tickets(lease_reconcile_report *r, size_t *cap, lease_store *st,
                         const lease_reconcile_options *o)
{
	char prefix[LEASE_NS_MAX + 16], last[LEASE_NAME_MAX + 1] = "";
	lease_ref_list l;
	size_t i, sorted = 0, plen; /* the lock entries are not sorted yet */
	int rc = 0;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "refs/%s-queue/", r->ns);
	if ((rc = lease_list_refs(&l, st, prefix)) < 0)
		return rc;
	for (i = 0; i < l.count && rc == 0; i++) {
		const char *rest = l.items[i].refname, *slash;
		char name[LEASE_NAME_MAX + 1], err[128];

		if (strncmp(rest, prefix, plen) != 0 || !(slash = strchr(rest + plen, '/')) ||
		    (size_t)(slash - rest - plen) > LEASE_NAME_MAX)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(slash - rest - (ptrdiff_t)plen),
		         rest + plen);
		if (strcmp(name, last) == 0 || lease_name_validate(name, err, sizeof(err)) < 0)
			continue;
		snprintf(last, sizeof(last), "%s", name);
		rc = stale_tickets(r, cap, sorted, st, o, name);
	}
	lease_ref_list_clear(&l);
	return rc;
}

/* slot-count-mismatch (protocol.md "Slots") in bounded memory. The walk
 * hands the refs over in strictly increasing name order on every store
 * (primitives.c walk_part sorts each part of the listing and skips what does
 * not sort after the last name walked), so the slots NAME@… of one NAME come
 * one after another, and a plain lease NAME before them (a prefix sorts
 * first), possibly with other names between ("db", "db-a", "db@1of2"). Kept:
 * the plain names that are prefixes of the name walked — a stack, each entry
 * a prefix of the next, so at most LEASE_NAME_MAX deep and all of them
 * prefixes of the last one pushed — and, for the NAME whose slots are being
 * walked, the first slot not released and the first not released of another
 * count. Nothing grows with the namespace. */
typedef struct slot_walk {
	char plain[LEASE_NAME_MAX + 1];      /* the last plain name pushed */
	size_t len[LEASE_NAME_MAX];          /* the stack: lengths of prefixes of plain */
	unsigned char unrel[LEASE_NAME_MAX]; /* ... each one not released */
	size_t depth;
	char base[LEASE_NAME_MAX + 1];  /* the NAME of the slots walked ("" none yet) */
	char first[LEASE_NAME_MAX + 1]; /* its first slot not released ("" none) */
	int64_t first_n;
	char other[LEASE_NAME_MAX + 1]; /* its first not released of a count != first_n */
	int64_t other_n;
} slot_walk;

/* Whether entry @p e holds its name as acquire --slots sees it (slots.c
 * unreleased()): present and not a readable released payload of its own
 * name — held, expired but not reaped, or unreadable (unknown is never taken
 * for free). A reap done by this sweep releases it. */
static int entry_unreleased(const lease_reconcile_entry *e)
{
	if (!e->present || e->action == LEASE_ACTION_REAPED)
		return 0;
	return !(e->has_payload && !has_anomaly(e, LEASE_ANOM_NAME_MISMATCH) &&
	         e->payload.phase == LEASE_PHASE_RELEASED);
}

/* Pop the plain names that are not prefixes of @p name. */
static void slot_walk_pop(slot_walk *w, const char *name)
{
	while (w->depth && strncmp(name, w->plain, w->len[w->depth - 1]) != 0)
		w->depth--;
}

/* Before @p e's action: slot-count-mismatch when @p e is a slot not released
 * and a ref of another configuration of its NAME met before it is not
 * released either (the state in which acquire --slots refuses NAME, exit
 * 78). */
static void slot_walk_check(slot_walk *w, lease_reconcile_entry *e, const char *ns)
{
	char base[LEASE_NAME_MAX + 1], err[8];
	int64_t idx, n;
	const char *other = NULL;
	int64_t other_n = 0;
	lease_anomaly *a;

	if (!e->present || lease_slot_name_parse(e->name, base, &idx, &n, err, sizeof(err)) != 1)
		return;
	slot_walk_pop(w, e->name);
	if (strcmp(w->base, base) != 0) { /* the first slot of this NAME */
		snprintf(w->base, sizeof(w->base), "%s", base);
		w->first[0] = w->other[0] = '\0';
	}
	if (!entry_unreleased(e))
		return;
	/* a stacked prefix of NAME@… of NAME's length is NAME: the top, if any */
	if (w->depth && w->len[w->depth - 1] == strlen(base) && w->unrel[w->depth - 1])
		other = base;
	else if (w->first[0] && w->first_n != n)
		other = w->first, other_n = w->first_n;
	else if (w->other[0])
		other = w->other, other_n = w->other_n;
	if (!other)
		return;
	if (other_n)
		a = add_anomaly(e, LEASE_ANOM_SLOT_COUNT_MISMATCH, LEASE_SEV_ERROR,
		                "%.100s has slots of two counts not released: this one of %lld "
		                "and refs/%s/%.100s (%lld slots); neither count bounds its "
		                "holders, and acquire --slots refuses %.100s (exit 78) until one "
		                "count's slots are released",
		                base, (long long)n, ns, other, (long long)other_n, base);
	else
		a = add_anomaly(e, LEASE_ANOM_SLOT_COUNT_MISMATCH, LEASE_SEV_ERROR,
		                "%.100s is both a plain lease and slots, not released: this slot "
		                "of %lld and the plain lease refs/%s/%.100s; acquire --slots "
		                "refuses %.100s (exit 78) until one side is released",
		                base, (long long)n, ns, other, base);
	if (a) {
		a->slots = n;
		a->other_slots = other_n;
		snprintf(a->other, sizeof(a->other), "%s", other);
	}
}

/* After @p e's action: remember it for the refs after it. */
static void slot_walk_note(slot_walk *w, const lease_reconcile_entry *e)
{
	char base[LEASE_NAME_MAX + 1], err[8];
	int64_t idx, n;
	size_t len;

	if (!e->present)
		return;
	slot_walk_pop(w, e->name);
	if (lease_slot_name_parse(e->name, base, &idx, &n, err, sizeof(err)) == 1) {
		if (strcmp(w->base, base) != 0 || !entry_unreleased(e))
			return;
		if (!w->first[0]) {
			snprintf(w->first, sizeof(w->first), "%s", e->name);
			w->first_n = n;
		} else if (!w->other[0] && n != w->first_n) {
			snprintf(w->other, sizeof(w->other), "%s", e->name);
			w->other_n = n;
		}
		return;
	}
	/* a plain name (an invalid one is no prefix of a slot name that matters:
	 * lease_name_validate() decides as for a slot's NAME) */
	len = strlen(e->name);
	if (len > LEASE_NAME_MAX || w->depth >= LEASE_NAME_MAX ||
	    lease_name_validate(e->name, err, sizeof(err)) < 0)
		return;
	memcpy(w->plain, e->name, len + 1); /* the stacked names are prefixes of it */
	w->len[w->depth] = len;
	w->unrel[w->depth] = (unsigned char)entry_unreleased(e);
	w->depth++;
}

/* One sweep in bounded memory (issue 29): the stale locks first (few), then
 * the namespace walked lease by lease (lease_namespace_each), each entry
 * classified, merged with its lock entry, acted on and handed to @c emit in
 * name order; only the lock entries are held for the whole sweep. */
typedef struct sweep {
	lease_reconcile_report *r; /* the summary (counts, now, actions) */
	lease_store *st;
	const lease_reconcile_options *o;
	int64_t skew, margin, default_ttl;
	lease_reconcile_report locks; /* lock entries, sorted by name */
	size_t lock_next;
	size_t done, total;
	slot_walk slots; /* slot-count-mismatch across adjacent entries */
	/* takes the entry (zeroing it keeps what it owns) or leaves it to be cleared */
	int (*emit)(lease_reconcile_entry *e, void *payload);
	void *payload;
} sweep;

/* The opt-in action of @p e, its count, progress, then emit it; @p walked:
 * a ref of the walk (not a lock-only entry), noted for slot-count-mismatch. */
static int finish(sweep *sw, lease_reconcile_entry *e, int walked)
{
	lease_reconcile_report *r = sw->r;
	const lease_reconcile_options *o = sw->o;
	int rc;

	/* each action is one operation of the burst: its own --timeout, paced
	 * (lease_store_pace(); issue 24); the streamed reads are not part of it */
	lease_store_op_begin(sw->st, 0);
	if (o->reap && e->action == LEASE_ACTION_NONE && has_anomaly(e, LEASE_ANOM_EXPIRED) &&
	    !has_anomaly(e, LEASE_ANOM_NAME_MISMATCH))
		reap_one(r, e, sw->st, o);
	else if (o->prune_days >= 0 && e->action == LEASE_ACTION_NONE && e->has_payload &&
	         e->payload.phase == LEASE_PHASE_RELEASED &&
	         !has_anomaly(e, LEASE_ANOM_NAME_MISMATCH) &&
	         r->now - e->payload.expires_at >= o->prune_days * 86400)
		prune_one(r, e, sw->st);
	lease_store_op_end(sw->st);
	if (walked)
		slot_walk_note(&sw->slots, e);
	r->counts[e->highest <= LEASE_SEV_ERROR ? e->highest : LEASE_SEV_ERROR]++;
	sw->done++;
	if (o->progress && sw->done % 512 == 0)
		o->progress(sw->done, sw->total > sw->done ? sw->total : sw->done,
		            o->progress_payload);
	rc = sw->emit(e, sw->payload);
	lease_reconcile_entry_clear(e);
	return rc;
}

/* Emit the lock-only entries named before @p name (NULL: all that are left);
 * merge the one named @p name into @p e. */
static int flush_locks(sweep *sw, const char *name, lease_reconcile_entry *e)
{
	int rc;

	while (sw->lock_next < sw->locks.count) {
		lease_reconcile_entry *l = &sw->locks.entries[sw->lock_next];
		int cmp = name && e ? strcmp(l->name, name) : -1;
		size_t k;

		if (cmp > 0)
			return 0;
		sw->lock_next++;
		if (cmp < 0 || !e) {
			if ((rc = finish(sw, l, 0)) != 0)
				return rc;
			continue;
		}
		for (k = 0; k < l->anomaly_count; k++) {
			lease_anomaly *a =
			        add_anomaly(e, l->anomalies[k].id, l->anomalies[k].severity, "%s",
			                    l->anomalies[k].message);
			if (a)
				a->seconds = l->anomalies[k].seconds;
		}
		e->lock_removed = l->lock_removed;
		e->tickets_removed = l->tickets_removed;
		if (l->action != LEASE_ACTION_NONE && e->action == LEASE_ACTION_NONE) {
			e->action = l->action;
			e->action_kind = l->action_kind;
			e->action_code = l->action_code;
			e->action_message = l->action_message;
			l->action_message = NULL;
		}
		lease_reconcile_entry_clear(l);
		return 0;
	}
	return 0;
}

static int sweep_visit(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total,
                       void *payload)
{
	sweep *sw = payload;
	lease_reconcile_entry e;
	int rc;

	sw->total = total;
	memset(&e, 0, sizeof(e));
	if (s) {
		if ((rc = lease_reconcile_classify(&e, s, sw->r->now, sw->skew, sw->margin,
		                                   sw->default_ttl)) < 0) {
			lease_reconcile_entry_clear(&e);
			return rc;
		}
	} else {
		const char *full = iv->refname;
		size_t plen = strlen(sw->r->ns) + 6;

		if (!(e.name = strdup(strlen(full) > plen ? full + plen : full)))
			return LEASE_ENOMEM;
		e.present = 1;
		e.oid = iv->oid;
		add_anomaly(&e, LEASE_ANOM_INVALID_NAME, LEASE_SEV_WARNING,
		            "a ref under refs/%s/ whose name breaks the lease-name rule (written "
		            "by another tool)",
		            sw->r->ns);
	}
	if ((rc = flush_locks(sw, e.name, &e)) != 0) {
		lease_reconcile_entry_clear(&e);
		return rc;
	}
	if (s)
		slot_walk_check(&sw->slots, &e, sw->r->ns);
	return finish(sw, &e, s != NULL);
}

/* The sweep with @p emit (protocol.md §7; issue 29). */
static int sweep_run(lease_reconcile_report *out, lease_store *st,
                     const lease_reconcile_options *opts,
                     int (*emit)(lease_reconcile_entry *e, void *payload), void *payload)
{
	lease_reconcile_options defaults = LEASE_RECONCILE_OPTIONS_INIT;
	sweep sw;
	size_t cap = 0;
	int64_t min_age;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&sw, 0, sizeof(sw));
	if (!opts)
		opts = &defaults;
	if (opts->version != LEASE_RECONCILE_OPTIONS_VERSION)
		return lease_store_set_error(st, LEASE_EINVALID,
		                             "reconcile options of an unsupported version");
	snprintf(out->ns, sizeof(out->ns), "%s", lease_store_namespace(st));
	if (opts->prune_days > 36500 || opts->grace_seconds > 86400 * 365)
		return lease_store_set_error(st, LEASE_EINVALID, "reconcile: option out of range");
	sw.r = out;
	sw.st = st;
	sw.o = opts;
	sw.emit = emit;
	sw.payload = payload;
	sw.skew = lease_store_skew_margin(st);
	sw.margin = opts->grace_seconds > sw.skew ? opts->grace_seconds : sw.skew;
	sw.default_ttl = opts->default_ttl > 0 ? opts->default_ttl : LEASE_TTL_DEFAULT;
	min_age = opts->lock_age_seconds > 0 ? opts->lock_age_seconds : LOCK_STALE_S;
	out->grace_seconds = sw.margin;
	out->now = lease_store_now(st);
	out->paced_ms = -lease_store_paced_ms(st);
	snprintf(sw.locks.ns, sizeof(sw.locks.ns), "%s", out->ns);
	sw.locks.now = out->now;
	/* stale locks: their own entries, merged into the leases' as the walk meets them */
	if ((rc = sweep_locks(&sw.locks, &cap, st, opts, min_age)) < 0)
		goto done;
	/* stale tickets of the fair waiters' queues (issue 28): entries as the locks' */
	if ((rc = sweep_tickets(&sw.locks, &cap, st, opts)) < 0)
		goto done;
	out->tickets_removed += sw.locks.tickets_removed;
	out->locks_removed += sw.locks.locks_removed;
	out->skipped += sw.locks.skipped;
	if (sw.locks.count)
		qsort(sw.locks.entries, sw.locks.count, sizeof(*sw.locks.entries), entry_cmp);
	if ((rc = lease_namespace_each(st, sweep_visit, &sw)) != 0)
		goto done;
	rc = flush_locks(&sw, NULL, NULL);
done:
	out->count = sw.done;
	out->paced_ms += lease_store_paced_ms(st);
	lease_reconcile_report_free(&sw.locks);
	return rc < 0 ? rc : 0;
}

typedef struct collect_ctx {
	lease_reconcile_entry *entries;
	size_t n, cap;
} collect_ctx;

/* lease_reconcile()'s emit: keep every entry (the entry moves into the array). */
static int collect_entry(lease_reconcile_entry *e, void *payload)
{
	collect_ctx *c = payload;

	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		lease_reconcile_entry *grown = realloc(c->entries, ncap * sizeof(*grown));

		if (!grown)
			return LEASE_ENOMEM;
		c->entries = grown;
		c->cap = ncap;
	}
	c->entries[c->n++] = *e;
	memset(e, 0, sizeof(*e));
	return 0;
}

int lease_reconcile(lease_reconcile_report *out, lease_store *st,
                    const lease_reconcile_options *opts)
{
	collect_ctx c = {NULL, 0, 0};
	int rc;

	lease_store_clear_error(st); /* a call begins: its first error wins */
	rc = sweep_run(out, st, opts, collect_entry, &c);
	out->entries = c.entries;
	out->count = c.n;
	return rc;
}

typedef struct each_ctx {
	lease_reconcile_visit visit;
	void *payload;
} each_ctx;

static int each_entry(lease_reconcile_entry *e, void *payload)
{
	each_ctx *c = payload;

	return c->visit(e, c->payload);
}

int lease_reconcile_each(lease_reconcile_report *summary, lease_store *st,
                         const lease_reconcile_options *opts, lease_reconcile_visit visit,
                         void *payload)
{
	each_ctx c = {visit, payload};

	lease_store_clear_error(st); /* a call begins: its first error wins */
	return sweep_run(summary, st, opts, each_entry, &c);
}

void lease_reconcile_report_free(lease_reconcile_report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->entries && i < r->count; i++) /* a summary has no entries */
		lease_reconcile_entry_clear(&r->entries[i]);
	free(r->entries);
	memset(r, 0, sizeof(*r));
}

lease_severity lease_reconcile_highest(const lease_reconcile_report *r)
{
	int s;

	for (s = LEASE_SEV_ERROR; s > LEASE_SEV_OK; s--)
		if (r->counts[s])
			return (lease_severity)s;
	return LEASE_SEV_OK;
}

/* ---- history -------------------------------------------------------------------------- */

void lease_history_free(lease_history *h)
{
	if (!h)
		return;
	free(h->items);
	memset(h, 0, sizeof(*h));
}

static int history_push(lease_history *h, size_t *cap, const lease_commit *c, const char *name)
{
	lease_history_item *grown, *it;

	if (h->count == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		if (!(grown = realloc(h->items, ncap * sizeof(*grown))))
			return LEASE_ENOMEM;
		h->items = grown;
		*cap = ncap;
	}
	it = &h->items[h->count++];
	memset(it, 0, sizeof(*it));
	it->oid = c->oid;
	it->is_commit = c->is_commit;
	it->commit_time = c->time;
	if (!c->is_commit) {
		it->payload_rc = LEASE_EPAYLOAD;
		snprintf(it->payload_error, sizeof(it->payload_error), "not a commit");
		return 0;
	}
	it->payload_rc = lease_message_parse(&it->payload, &it->op, c->message ? c->message : "",
	                                     c->message ? strlen(c->message) : 0, name,
	                                     it->payload_error, sizeof(it->payload_error));
	return 0;
}

int lease_history_read(lease_history *out, lease_store *st, const char *name, size_t max_items,
                       int64_t default_ttl)
{
	lease_ref_state tip;
	lease_commit c;
	lease_oid next;
	size_t cap = 0, i;
	int rc, more;

	lease_store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	memset(&tip, 0, sizeof(tip));
	if (default_ttl <= 0)
		default_ttl = LEASE_TTL_DEFAULT;
	if ((rc = lease_fetch_ref(&tip, st, name)) < 0)
		return rc;
	snprintf(out->name, sizeof(out->name), "%s", name);
	if (!(out->present = tip.present)) {
		lease_ref_state_clear(&tip);
		return 0;
	}
	if (!tip.commit.message && !tip.commit.is_commit)
		tip.commit.oid = tip.oid;
	rc = history_push(out, &cap, &tip.commit, name);
	more = tip.commit.is_commit && tip.commit.has_parent;
	next = tip.commit.parent;
	lease_ref_state_clear(&tip);
	while (rc == 0 && more) {
		if (max_items && out->count >= max_items) {
			out->truncated = 1;
			break;
		}
		if ((rc = lease_read_commit(&c, st, &next)) < 0)
			break; /* the read's message is the handle's */
		rc = history_push(out, &cap, &c, name);
		more = c.is_commit && c.has_parent;
		next = c.parent;
		lease_commit_clear(&c);
	}
	if (rc < 0)
		return rc;
	/* Heartbeat times and intervals, newest first (protocol.md §6). */
	for (i = 0; i < out->count; i++) {
		lease_history_item *it = &out->items[i];
		const lease_history_item *newer = i > 0 ? &out->items[i - 1] : NULL;

		if (it->payload_rc != 0)
			continue;
		if (it->payload.has_queued_at && it->payload.has_ttl) {
			/* a fair waiter's acquire: queued_at to the write (§5) */
			int64_t w = it->payload.expires_at - it->payload.ttl_seconds -
			            it->payload.queued_at;
			it->has_wait = 1;
			it->waited_seconds = w > 0 ? w : 0;
		}
		it->has_hb_time = 1;
		hb_time(&it->hb_time, &it->hb_method, &it->assumed_ttl, &it->payload,
		        newer && newer->payload_rc == 0 ? &newer->payload : NULL, default_ttl);
	}
	for (i = 0; i < out->count; i++) {
		lease_history_item *it = &out->items[i];
		const lease_history_item *parent = i + 1 < out->count ? &out->items[i + 1] : NULL;

		if (it->payload_rc == 0 && replaced_heartbeat(&it->payload, it->op)) {
			/* the heartbeat before it was replaced: its time is in the payload (§2) */
			it->is_heartbeat = 1;
			it->has_interval = 1;
			it->interval_seconds = it->hb_time - it->payload.previous_heartbeat_at;
			it->interval_method = LEASE_HB_EXACT;
			continue;
		}
		if (!parent || it->payload_rc != 0 || parent->payload_rc != 0)
			continue;
		it->is_heartbeat = is_tenure_heartbeat(&it->payload, it->op, &parent->payload);
		if (!it->is_heartbeat)
			continue;
		it->has_interval = 1;
		it->interval_seconds = it->hb_time - parent->hb_time;
		it->interval_method =
		        it->hb_method == LEASE_HB_EXACT && parent->hb_method == LEASE_HB_EXACT
		                ? LEASE_HB_EXACT
		                : LEASE_HB_APPROXIMATE;
	}
	return 0;
}
