/* Reconcile's classification (protocol.md §6, §7): one lease read with its
 * parent commit becomes an entry and its anomalies; slot-count-mismatch
 * across adjacent entries of the walk. The sweep is reconcile.c, the actions
 * reconcile_act.c.
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
#include "lease/reconcile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/door.h"
#include "lease/policy.h"
#include "reflease/version.h"
#include "store/frontend.h"
#include "util/util.h"

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
                                                             "slot-count-mismatch",
                                                             "cut-set-write"};

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

lease_anomaly *lease__rec_add_anomaly(lease_reconcile_entry *e, lease_anomaly_id id,
                                      lease_severity sev, const char *fmt, ...)
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

int lease__rec_has_anomaly(const lease_reconcile_entry *e, lease_anomaly_id id)
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
void lease__rec_hb_time(int64_t *t, lease_hb_method *m, int64_t *assumed, const lease_payload *p,
                        const lease_payload *next, int64_t default_ttl)
{
	if (p->has_ttl) {
		*t = lease__policy_heartbeat_time(p, 0, NULL);
		*m = LEASE_HB_EXACT;
		*assumed = 0;
		return;
	}
	*assumed = next && next->has_ttl && next->ttl_seconds > 0 ? next->ttl_seconds : default_ttl;
	*t = lease__policy_heartbeat_time(p, *assumed, NULL);
	*m = LEASE_HB_APPROXIMATE;
}

/* Whether @p tip (written by @p op) is a heartbeat of @p parent's tenure
 * (protocol.md §6): the summary says heartbeat, or for a commit naming no
 * known op, token, phase and acquired_at unchanged with expires_at moved
 * forward. A migration, transition, reacquire or takeover never is. */
int lease__rec_is_tenure_heartbeat(const lease_payload *tip, lease_op op,
                                   const lease_payload *parent)
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
		lease__rec_add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		                       "acquired_at %s is %llds in the future (skew margin %llds)",
		                       a, (long long)(p->acquired_at - now), (long long)skew);
		return 1;
	}
	if (p->has_ttl) {
		hb = lease__policy_heartbeat_time(p, 0, NULL);
		fmt_time(b, p->expires_at);
		if (hb > now + skew) {
			lease__rec_add_anomaly(
			        e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
			        "expires_at %s is %llds ahead, more than ttl_seconds %lld "
			        "allows: heartbeat time %llds in the future",
			        b, (long long)(p->expires_at - now), (long long)p->ttl_seconds,
			        (long long)(hb - now));
			return 1;
		}
		if (p->acquired_at > hb) {
			fmt_time(b, hb);
			lease__rec_add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
			                       "acquired_at %s is after the heartbeat time %s", a,
			                       b);
		}
		return 0;
	}
	/* Pre-bump: only what holds whatever the TTL was. */
	fmt_time(b, p->expires_at);
	if (p->expires_at - now > LEASE_TTL_READ_MAX + skew) {
		lease__rec_add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		                       "expires_at %s is %llds ahead, more than any TTL allows", b,
		                       (long long)(p->expires_at - now));
		return 1;
	}
	if (p->acquired_at > p->expires_at)
		lease__rec_add_anomaly(e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		                       "acquired_at %s is after expires_at %s", a, b);
	return 0;
}

/* The heartbeat before @p tip (written by @p op) is named in the payload
 * (1.2.0, protocol.md §2): a heartbeat that replaced one carries its time,
 * exact (only a tip with ttl_seconds is replaced). */
int lease__rec_replaced_heartbeat(const lease_payload *tip, lease_op op)
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

	if (lease__rec_replaced_heartbeat(tip, op)) {
		/* it replaced a heartbeat of the same tenure and TTL (§2) */
		lease__rec_hb_time(&ht, &mt, &at, tip, NULL, default_ttl);
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
		if (!lease__rec_is_tenure_heartbeat(tip, op, &parent))
			return;
		lease__rec_hb_time(&ht, &mt, &at, tip, NULL, default_ttl);
		lease__rec_hb_time(&hp, &mp, &ap, &parent, tip, default_ttl);
		ttl_changed =
		        parent.has_ttl && tip->has_ttl && parent.ttl_seconds != tip->ttl_seconds;
		prev_expiry = parent.expires_at;
	}
	ttl = tip->has_ttl ? tip->ttl_seconds : at;
	interval = ht - hp;
	if (interval < 0) {
		lease__rec_add_anomaly(
		        e, LEASE_ANOM_CLOCK_SKEW, LEASE_SEV_WARNING,
		        "heartbeat time %llds earlier than its parent's (%s)", (long long)-interval,
		        lease_hb_method_name(mt == LEASE_HB_EXACT && mp == LEASE_HB_EXACT
		                                     ? LEASE_HB_EXACT
		                                     : LEASE_HB_APPROXIMATE));
		return;
	}
	/* the runtime's rule (policy.c): a TTL change is always due, and so is
	 * a heartbeat with less than half its TTL left */
	if (lease__policy_heartbeat_due(interval, ttl, ttl_changed, prev_expiry - ht, ttl))
		return;
	a = lease__rec_add_anomaly(e, LEASE_ANOM_HEARTBEAT_FLOOR, LEASE_SEV_WARNING, "%s", "");
	if (!a)
		return;
	a->has_floor = 1;
	a->method = mt == LEASE_HB_EXACT && mp == LEASE_HB_EXACT ? LEASE_HB_EXACT
	                                                         : LEASE_HB_APPROXIMATE;
	a->interval_seconds = interval;
	a->floor_seconds = (double)lease__policy_floor(ttl);
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
		lease__rec_add_anomaly(e, LEASE_ANOM_UNREADABLE_REF, LEASE_SEV_ERROR, "%s",
		                       s->payload_error);
		return 0;
	}
	if (s->payload_rc != 0 && s->commit.symbolic) {
		lease__rec_add_anomaly(e, LEASE_ANOM_SYMBOLIC_REF, LEASE_SEV_ERROR, "%s",
		                       s->payload_error);
		return 0;
	}
	if (s->payload_rc != 0 && s->commit.missing) {
		lease__rec_add_anomaly(e, LEASE_ANOM_MISSING_OBJECT, LEASE_SEV_ERROR, "%s",
		                       s->payload_error);
		return 0;
	}
	if (s->payload_rc != 0 && !s->commit.is_commit && !lease_oid_is_zero(&s->commit.oid)) {
		lease__rec_add_anomaly(e, LEASE_ANOM_NOT_A_COMMIT, LEASE_SEV_ERROR,
		                       "the ref points at an object that is not a commit");
		return 0;
	}
	if (s->payload_rc == 0) {
		p = &s->payload;
	} else {
		/* Re-read without the name check to tell name-mismatch apart. */
		if (!s->commit.message) {
			lease__rec_add_anomaly(
			        e, LEASE_ANOM_MALFORMED_PAYLOAD, LEASE_SEV_ERROR, "%s",
			        s->payload_error[0] ? s->payload_error : "commit unreadable");
			return 0;
		}
		rc = lease_message_parse(&own, &op, s->commit.message, strlen(s->commit.message),
		                         NULL, err, sizeof(err));
		if (rc == LEASE_EVERSION) {
			lease__rec_add_anomaly(e, LEASE_ANOM_UNSUPPORTED_VERSION, LEASE_SEV_ERROR,
			                       "payload of an unsupported major version: %s", err);
			return 0;
		}
		if (rc < 0) {
			lease__rec_add_anomaly(e, LEASE_ANOM_MALFORMED_PAYLOAD, LEASE_SEV_ERROR,
			                       "%s", err);
			return 0;
		}
		p = &own;
	}
	e->has_payload = 1;
	e->payload = *p;
	e->op = op;
	if (p->version_major == SDLC_VERSION_MAJOR && p->version_minor > SDLC_VERSION_MINOR)
		lease__rec_add_anomaly(
		        e, LEASE_ANOM_UNSUPPORTED_VERSION, LEASE_SEV_WARNING,
		        "payload written by a newer schema %s (readable, not writable by %s)",
		        p->sdlc_version, SDLC_VERSION);
	if (strcmp(p->name, s->name) != 0) {
		lease__rec_add_anomaly(e, LEASE_ANOM_NAME_MISMATCH, LEASE_SEV_ERROR,
		                       "payload name '%.100s' is not the ref's name", p->name);
		return 0;
	}
	if (!p->has_ttl)
		lease__rec_add_anomaly(e, LEASE_ANOM_PRE_BUMP, LEASE_SEV_INFO,
		                       "pre-bump payload %s without ttl_seconds (run migrate)",
		                       p->sdlc_version);
	future = check_clock_skew(e, p, now, skew_margin);
	if (!future && lease__policy_expired(p, now, expire_margin)) {
		char t[LEASE_TIME_STRSZ + 1];
		lease_anomaly *a;

		fmt_time(t, p->expires_at);
		a = lease__rec_add_anomaly(
		        e, LEASE_ANOM_EXPIRED, LEASE_SEV_WARNING,
		        "%s lease expired at %s, %llds ago (margin %llds): the holder "
		        "stopped heartbeating",
		        lease_phase_name(p->phase), t, (long long)(now - p->expires_at),
		        (long long)expire_margin);
		if (a)
			a->seconds = now - p->expires_at;
	}
	if ((s->has_parent_commit || lease__rec_replaced_heartbeat(p, op)) &&
	    p->phase != LEASE_PHASE_RELEASED)
		check_floor(e, p, op, &s->parent_commit, s->name, default_ttl);
	return 0;
}

/* Whether entry @p e holds its name as acquire --slots sees it (slots.c
 * unreleased()): present and not a readable released payload of its own
 * name — held, expired but not reaped, or unreadable (unknown is never taken
 * for free). A reap done by this sweep releases it. */
static int entry_unreleased(const lease_reconcile_entry *e)
{
	if (!e->present || e->action == LEASE_ACTION_REAPED)
		return 0;
	return !(e->has_payload && !lease__rec_has_anomaly(e, LEASE_ANOM_NAME_MISMATCH) &&
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
void lease__rec_slot_walk_check(slot_walk *w, lease_reconcile_entry *e, const char *ns)
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
		a = lease__rec_add_anomaly(
		        e, LEASE_ANOM_SLOT_COUNT_MISMATCH, LEASE_SEV_ERROR,
		        "%.100s has slots of two counts not released: this one of %lld "
		        "and refs/%s/%.100s (%lld slots); neither count bounds its "
		        "holders, and acquire --slots refuses %.100s (exit 78) until one "
		        "count's slots are released",
		        base, (long long)n, ns, other, (long long)other_n, base);
	else
		a = lease__rec_add_anomaly(
		        e, LEASE_ANOM_SLOT_COUNT_MISMATCH, LEASE_SEV_ERROR,
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
void lease__rec_slot_walk_note(slot_walk *w, const lease_reconcile_entry *e)
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
