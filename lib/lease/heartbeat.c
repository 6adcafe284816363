/* The heartbeat service (protocol.md §6): heartbeat every S seconds, retry
 * transient failures until the lost deadline, report every attempt. */
#include "reflease/heartbeat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/policy.h"
#include "lease/renew.h"
#include "reflease/primitives.h"
#include "store/frontend.h"
#include "util/util.h"

/* Longest single sleep of the default sleep, so a stop request is
 * honoured within this many milliseconds. */
#define SLEEP_SLICE_MS 100

/* @p t rounded down to a whole second. */
static double whole_before(double t)
{
	double w = (double)(int64_t)t;

	return w > t ? w - 1 : w;
}

int lease_keep_check_ttl(int64_t ttl_seconds)
{
	int64_t floor = lease__policy_floor(ttl_seconds);

	if (ttl_seconds < LEASE_TTL_READ_MIN || ttl_seconds > LEASE_TTL_READ_MAX)
		return LEASE_EINVALID;
	/* the window between the floor and the aim point must be open, and wide
	 * enough for two attempts before run's watchdog (issue 40 B67) */
	return whole_before(lease__policy_lost_deadline(ttl_seconds, ttl_seconds) -
	                    LEASE_KEEP_MARGIN) >= (double)floor &&
	                       lease__renew_window(ttl_seconds) >= LEASE_KEEP_MIN_WINDOW
	               ? 0
	               : LEASE_EINVALID;
}

/* The renewal schedule of one keeper (protocol.md §6 "Renewal point"):
 * the store's pace and skew, the recent write latencies. */
typedef struct keep_sched {
	int budgeted;  /* lease__store_budgeted() */
	int skew;      /* lease_store_skew_margin() */
	int64_t every; /* --every S, 0 = the store's pace */
	lease_renew_latency lat;
} keep_sched;

/* The next renewal after a write at @p since left the lease expiring at
 * @p expires_at with @p ttl (lease__renew_at()). */
static double renew_next(const keep_sched *k, int64_t since, int64_t expires_at, int64_t ttl)
{
	int64_t pace = k->every ? lease__policy_interval(ttl, k->every)
	                        : lease__renew_pace(k->budgeted, ttl);

	return lease__renew_at(since, expires_at, ttl, pace, lease__renew_latency(&k->lat),
	                       k->skew);
}

double lease_keep_window(int64_t ttl_seconds)
{
	return lease__renew_window(ttl_seconds);
}

double lease_keep_check_interval(const lease_store *st)
{
	return (double)lease__policy_floor(st ? lease_store_ttl_min(st) : LEASE_TTL_READ_MIN);
}

/* What a re-read of the stored lease found (check_stored). */
enum { CHECK_SAME = 0, CHECK_EARLIER, CHECK_GONE };

/* Re-read the stored lease (lease_keep_options.check_seconds): CHECK_GONE
 * when it is absent, released or under another token than @p token (a break,
 * a takeover: lost at once); CHECK_EARLIER when its expiry is earlier than
 * @p expires_at (our own write); else CHECK_SAME. A read that fails says
 * nothing: the heartbeats decide. *@p s receives the read (s->present 0
 * with CHECK_SAME when nothing was read in full).
 *
 * With @p at (the oid of the state last known under @p token: our last
 * heartbeat or re-read) the ref alone is looked at first, and the lease is
 * read in full only when it has moved: on github a 304, which costs no
 * counted request, while nobody else writes (protocol.md §6). */
static int check_stored(lease_result *s, lease_store *st, const char *name, const char *token,
                        int64_t expires_at, const lease_oid *at)
{
	lease_ref_state rs;
	int c = CHECK_SAME;

	memset(s, 0, sizeof(*s));
	memset(&rs, 0, sizeof(rs));
	if (at && lease_ref_still_at(st, name, at) == 1)
		return CHECK_SAME;
	/* the primitive read, not lease_status(): the token is compared */
	if (lease_fetch_ref(&rs, st, name) < 0) {
		lease_ref_state_clear(&rs);
		return CHECK_SAME;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->present = rs.present;
	s->oid = rs.oid;
	s->has_payload = rs.present && rs.payload_rc == 0;
	if (s->has_payload)
		s->payload = rs.payload;
	s->now = lease_store_now(st);
	s->status = LEASE_STATUS_LIVE;
	lease_ref_state_clear(&rs);
	if (!s->present || (s->has_payload && (s->payload.phase == LEASE_PHASE_RELEASED ||
	                                       strcmp(s->payload.lease_token, token) != 0)))
		c = CHECK_GONE;
	else if (s->has_payload && s->payload.expires_at < expires_at)
		c = CHECK_EARLIER;
	if (c == CHECK_GONE) /* never pass another holder's token on */
		memset(s->payload.lease_token, 0, sizeof(s->payload.lease_token));
	return c;
}

/* check_stored() over every member of a set: CHECK_GONE at the first member
 * gone (*@p cr its read), else CHECK_EARLIER with the member whose stored
 * expiry is the earliest below @p expires_at (the set's earliest, protocol.md
 * "Sets"), else CHECK_SAME (cr->present 0). @p at / @p have_at: each member's
 * state last known under @p token, updated from the reads. */
static int check_set(lease_result *cr, lease_store *st, const char *const *names, size_t n,
                     const char *token, int64_t expires_at, lease_oid *at, int *have_at)
{
	lease_result m;
	int c = CHECK_SAME;
	size_t i;

	memset(cr, 0, sizeof(*cr));
	for (i = 0; i < n; i++) {
		int ci = check_stored(&m, st, names[i], token, expires_at,
		                      have_at[i] ? &at[i] : NULL);
		if (ci == CHECK_GONE) {
			*cr = m;
			return CHECK_GONE;
		}
		if (m.present && m.has_payload) {
			at[i] = m.oid;
			have_at[i] = 1;
		}
		if (ci == CHECK_EARLIER &&
		    (c != CHECK_EARLIER || m.payload.expires_at < cr->payload.expires_at)) {
			*cr = m;
			c = CHECK_EARLIER;
		}
	}
	return c;
}

/* The TTL a stored payload @p p carries, else @p dflt. */
static int64_t stored_ttl(const lease_payload *p, int64_t dflt)
{
	return p->has_ttl && p->ttl_seconds > 0 ? p->ttl_seconds : dflt;
}

/* A set heartbeat's answer as one lease_result (what the keeper schedules
 * by and reports): the member that stopped the set when one did, else the
 * member whose lost deadline is the earliest (protocol.md "Sets": the set is
 * lost when any member is); status, code and message are the set's. */
static void set_summary(lease_result *r, const lease_set_result *s)
{
	const lease_result *pick = NULL;
	double best = 0;
	size_t i;

	if (s->blocker >= 0 && (size_t)s->blocker < s->count)
		pick = &s->members[s->blocker];
	else
		for (i = 0; i < s->count; i++) {
			const lease_result *m = &s->members[i];
			double l;
			if (!m->has_payload)
				continue;
			l = lease__policy_lost_deadline(m->payload.expires_at,
			                                stored_ttl(&m->payload, LEASE_TTL_DEFAULT));
			if (!pick || l < best) {
				pick = m;
				best = l;
			}
		}
	if (!pick)
		pick = &s->members[0];
	*r = *pick;
	r->status = s->status;
	r->code = s->code;
	if (s->message[0])
		snprintf(r->message, sizeof(r->message), "%.500s", s->message);
}

int lease_heartbeat_every(int64_t *out, int64_t ttl_seconds, int64_t every)
{
	if (ttl_seconds < LEASE_TTL_READ_MIN || ttl_seconds > LEASE_TTL_READ_MAX || every < 0)
		return LEASE_EINVALID;
	if (every > lease__policy_every_max(ttl_seconds))
		return LEASE_EINVALID;
	*out = lease__policy_interval(ttl_seconds, every);
	return 0;
}

/* The default sleep: slices of the store's sleep (its options' clock),
 * checking the stop flag. */
static int default_sleep(const lease_store *st, double seconds, const volatile sig_atomic_t *stop)
{
	while (seconds > 0) {
		double slice =
		        seconds < SLEEP_SLICE_MS / 1000.0 ? seconds : SLEEP_SLICE_MS / 1000.0;

		if (stop && *stop)
			return 1;
		/* a signal ends the slice early: the stop flag is looked at sooner */
		lease__store_sleep_ms(st, (int64_t)(slice * 1000 + 0.999),
		                      LEASE_SLEEP_INTERRUPTIBLE);
		seconds -= slice;
	}
	return stop && *stop;
}

static int keep_sleep(const lease_store *st, const lease_keep_options *o, double seconds)
{
	if (o->sleep)
		return o->sleep(seconds, o->sleep_payload) || (o->stop && *o->stop);
	return default_sleep(st, seconds, o->stop);
}

/* Failures worth retrying until the lost deadline. */
static int is_transient(int rc)
{
	switch (rc) {
	case LEASE_ENET:
	case LEASE_ECAS:
	case LEASE_EUNVERIFIED:
	case LEASE_ERATELIMIT:
	case LEASE_ELOCKED:
	case LEASE_EINTERNAL:
	case LEASE_ENOMEM: return 1;
	default: return 0;
	}
}

/* Report one event with the schedule's figures (attempt, expiry, lost
 * deadline, TTL). */
static void emit(const lease_keep_options *o, lease_keep_report *rep, int attempt,
                 int64_t expires_at, double lost_at, int64_t ttl)
{
	rep->attempt = attempt;
	rep->expires_at = expires_at;
	rep->lost_at = lost_at;
	rep->ttl_seconds = ttl;
	if (o->report)
		o->report(rep, o->report_payload);
}

/* Report the lease lost (code @p code, result @p r) at store time @p now. */
static void emit_lost(const lease_keep_options *o, const lease_result *r, int code, int64_t now,
                      int attempt, int64_t expires_at, double lost_at, int64_t ttl)
{
	lease_keep_report rep;

	memset(&rep, 0, sizeof(rep));
	rep.event = LEASE_KEEP_LOST;
	rep.code = code;
	rep.result = r;
	rep.now = now;
	emit(o, &rep, attempt, expires_at, lost_at, ttl);
}

/* One keeper's state (keep_engine()): what it keeps, its schedule and what
 * the next heartbeat writes from. */
typedef struct keeper {
	lease_store *st;
	const char *const *names;
	size_t n;
	lease_set_result *set; /* lease_keep_set()'s buffer, NULL for one lease */
	const lease_keep_options *o;
	keep_sched ks;
	lease_result r; /* the last answer (what the caller gets back) */
	char token[LEASE_TOKEN_HEXSZ + 1];
	int64_t ttl, every, expires_at, now;
	double backoff, backoff_max, lost_at, next, check_at;
	int attempt;
	/* the state the next heartbeat CASes from (no read: issue 6 budget) */
	int have_known, known_has_parent;
	lease_oid known_oid, known_parent;
	lease_payload known_payload;
	/* the state last known under our token (check_stored()'s shortcut) */
	int have_at;
	lease_oid at_oid;
	lease_oid set_at[LEASE_SET_MAX];
	int set_have_at[LEASE_SET_MAX];
} keeper;

static double keep_backoff_initial(const lease_keep_options *o)
{
	return o->backoff_initial_s > 0 ? o->backoff_initial_s : 1.0;
}

/* Check the options and lay out the first schedule: from the state the
 * caller knows (known_expires_at) or, unknown, a heartbeat at once. */
static int keep_start(keeper *k)
{
	const lease_keep_options *o = k->o;
	lease_store *st = k->st;

	if (!o || o->version != LEASE_KEEP_OPTIONS_VERSION || !st || !k->names[0] || !o->owner ||
	    !o->host || lease_token_validate(o->lease_token, NULL, 0) < 0 || o->ttl_seconds < 0 ||
	    o->ttl_seconds > LEASE_TTL_READ_MAX || o->every_seconds < 0)
		return st ? lease__store_set_error(st, LEASE_EINVALID,
		                                   "heartbeat service: bad options")
		          : LEASE_EINVALID;
	k->ttl = o->ttl_seconds         ? o->ttl_seconds
	         : o->known_ttl_seconds ? o->known_ttl_seconds
	                                : lease_store_ttl_default(st);
	if (o->every_seconds && (o->ttl_seconds || o->known_ttl_seconds) &&
	    lease_heartbeat_every(&k->every, k->ttl, o->every_seconds) < 0)
		return lease__store_set_error(
		        st, LEASE_EINVALID, "heartbeat interval %lld s is above ttl/2 (%lld s)",
		        (long long)o->every_seconds, (long long)lease__policy_every_max(k->ttl));
	memcpy(k->token, o->lease_token, sizeof(k->token));
	k->backoff = keep_backoff_initial(o);
	k->backoff_max = o->backoff_max_s > 0 ? o->backoff_max_s : 30.0;
	k->every = lease__policy_interval(k->ttl, o->every_seconds);
	k->ks.budgeted = lease__store_budgeted(st);
	k->ks.skew = lease_store_skew_margin(st);
	k->ks.every = o->every_seconds;
	k->now = lease_store_now(st);
	if (o->known_expires_at && o->known_oid) {
		k->at_oid = *o->known_oid;
		k->have_at = 1;
	}
	if (o->known_expires_at) {
		int64_t since = o->known_now ? o->known_now : k->now;
		k->expires_at = o->known_expires_at;
		k->lost_at = lease__policy_lost_deadline(k->expires_at, k->ttl);
		k->next = renew_next(&k->ks, since, k->expires_at, k->ttl);
	} else {
		/* Expiry unknown until the first heartbeat lands. */
		k->lost_at = (double)(k->now + k->every);
		k->next = (double)k->now;
	}
	return 0;
}

/* The lost deadline has come (§6): stop guarded work before anyone may take
 * over. Reports the lease lost; @return LEASE_EEXPIRED. */
static int keep_deadline_passed(keeper *k)
{
	lease_result *r = &k->r;
	char prev[sizeof(r->message)], margin[32];

	memcpy(prev, r->message, sizeof(prev));
	if (!r->name[0]) { /* no heartbeat answered yet */
		snprintf(r->name, sizeof(r->name), "%s", k->names[0]);
		r->has_payload = 0;
	}
	r->code = LEASE_EEXPIRED;
	r->status = LEASE_STATUS_EXPIRED;
	r->holds_token = 0;
	r->now = k->now;
	/* the margin apart: a bounded string, so the message's length is
	 * bounded at compile time (-Wformat-truncation) */
	snprintf(margin, sizeof(margin), "%.1f", lease__policy_lost_margin(k->ttl));
	snprintf(r->message, sizeof(r->message),
	         "no heartbeat landed before the lost deadline (expires_at - %s s); %s%.300s",
	         margin,
	         k->attempt > 0 && prev[0] ? "the last heartbeat failed: "
	                                   : "no heartbeat was answered in time (a store that "
	                                     "does not answer, a stalled process)",
	         k->attempt > 0 ? prev : "");
	emit_lost(k->o, r, LEASE_EEXPIRED, k->now, k->attempt, k->expires_at, k->lost_at, k->ttl);
	return LEASE_EEXPIRED;
}

/* The next heartbeat's CAS starts from @p tip, a stored state under our
 * token that another write of it may have left: its parent is not ours, so
 * the heartbeat appends to it (never a replacement on a wrong parent, §2). */
static void keep_adopt(keeper *k, const lease_result *tip)
{
	k->known_oid = k->at_oid = tip->oid;
	k->known_payload = tip->payload;
	k->have_known = k->have_at = 1;
	k->known_has_parent = 0;
}

/* Re-read the stored lease (check_seconds; §6: the fence must not outlive
 * the stored expiry, whoever wrote it with this token). @return
 * LEASE_ENOTHOLDER when it is gone (reported lost), else 0. */
static int keep_check(keeper *k)
{
	lease_keep_report rep;
	lease_result cr;
	int c = k->set ? check_set(&cr, k->st, k->names, k->n, k->token, k->expires_at, k->set_at,
	                           k->set_have_at)
	               : check_stored(&cr, k->st, k->names[0], k->token, k->expires_at,
	                              k->have_at ? &k->at_oid : NULL);

	k->check_at = (double)k->now + k->o->check_seconds;
	if (c == CHECK_GONE) {
		k->r = cr;
		snprintf(k->r.message, sizeof(k->r.message), "%s",
		         !cr.present ? "the lease ref is gone (deleted under the service)"
		         : !cr.has_payload || cr.payload.phase != LEASE_PHASE_RELEASED
		                 ? "the stored lease is under another token (taken over under "
		                   "the service)"
		                 : "the stored lease is released (a break, or a release with "
		                   "this token)");
		k->r.status = LEASE_STATUS_NOT_HOLDER;
		k->r.holds_token = 0;
		k->r.code = LEASE_ENOTHOLDER;
		emit_lost(k->o, &k->r, LEASE_ENOTHOLDER, k->now, k->attempt, k->expires_at,
		          k->lost_at, k->ttl);
		return LEASE_ENOTHOLDER;
	}
	if (c == CHECK_EARLIER) {
		int64_t t = stored_ttl(&cr.payload, k->ttl);
		double l = lease__policy_lost_deadline(cr.payload.expires_at, t);
		double latest;

		k->expires_at = cr.payload.expires_at;
		if (l < k->lost_at)
			k->lost_at = l;
		/* heartbeat at the renewal point the stored TTL demands: at once
		 * when it has passed already */
		latest = lease__renew_latest(k->expires_at, t, lease__renew_latency(&k->ks.lat),
		                             k->ks.skew);
		if (k->next > latest)
			k->next = latest > (double)k->now ? latest : (double)k->now;
		keep_adopt(k, &cr);
		memset(&rep, 0, sizeof(rep));
		rep.event = LEASE_KEEP_CHANGED;
		rep.result = &cr;
		rep.now = k->now;
		rep.next_in = k->next - (double)k->now;
		emit(k->o, &rep, k->attempt, k->expires_at, k->lost_at, t);
	} else if (cr.present && cr.has_payload) {
		/* a later expiry written with this token included */
		keep_adopt(k, &cr);
	}
	return 0;
}

/* Sleep until the next heartbeat, re-read or the lost deadline, whichever
 * is first. @return 1 when asked to stop. */
static int keep_pause(keeper *k)
{
	double until = k->next < k->lost_at ? k->next : k->lost_at;

	if (k->o->check_seconds > 0 && k->expires_at && k->check_at < until)
		until = k->check_at;
	if (until <= (double)k->now)
		until = (double)k->now + 1;
	return keep_sleep(k->st, k->o, until - (double)k->now);
}

/* One heartbeat (a set's: one atomic write for every member, protocol.md
 * "Sets"), its latency noted for the renewal point. @return its code. */
static int keep_write(keeper *k)
{
	lease_op_options op = LEASE_OP_OPTIONS_INIT;
	int64_t t_write;
	int rc;

	op.owner = k->o->owner;
	op.host = k->o->host;
	op.lease_token = k->token;
	op.ttl_seconds = k->o->ttl_seconds;
	t_write = lease__store_mono_ms(k->st);
	if (k->set) {
		rc = lease_heartbeat_set(k->set, k->st, k->names, k->n, &op);
		set_summary(&k->r, k->set);
	} else {
		/* CAS from what the last heartbeat wrote: no read (issue 6 budget) */
		op.known_oid = k->have_known ? &k->known_oid : NULL;
		op.known_payload = k->have_known ? &k->known_payload : NULL;
		op.known_parent = k->have_known && k->known_has_parent ? &k->known_parent : NULL;
		rc = lease_heartbeat(&k->r, k->st, k->names[0], &op);
	}
	k->have_known = 0;
	/* the write's latency, answered or not: the renewal point's */
	lease__renew_note(&k->ks.lat, (double)(lease__store_mono_ms(k->st) - t_write) / 1000.0);
	k->now = lease_store_now(k->st);
	return rc;
}

/* A heartbeat landed: the schedule from its answer (expiry, TTL, a rotated
 * token, the state to CAS from next). */
static void keep_landed(keeper *k)
{
	const lease_result *r = &k->r;

	if (r->has_payload) {
		k->expires_at = r->payload.expires_at;
		if (r->payload.has_ttl && r->payload.ttl_seconds > 0)
			k->ttl = r->payload.ttl_seconds;
		if (r->payload.lease_token[0] && strcmp(r->payload.lease_token, k->token))
			memcpy(k->token, r->payload.lease_token, sizeof(k->token));
		if (r->present && r->holds_token) {
			k->known_oid = k->at_oid = r->oid;
			k->known_payload = r->payload;
			k->known_has_parent = r->has_parent;
			k->known_parent = r->parent;
			k->have_known = k->have_at = 1;
		}
	}
	k->every = lease__policy_interval(k->ttl, k->o->every_seconds);
	k->lost_at = k->expires_at ? lease__policy_lost_deadline(k->expires_at, k->ttl)
	                           : (double)(k->now + k->every);
	k->next = k->expires_at ? renew_next(&k->ks, k->now, k->expires_at, k->ttl)
	                        : (double)(k->now + k->every);
	k->attempt = 0;
	k->backoff = keep_backoff_initial(k->o);
}

/* A transient failure: the retry with backoff, never later than
 * LEASE_KEEP_MARGIN before the lost deadline. */
static void keep_retry_later(keeper *k)
{
	const lease_result *r = &k->r;
	double last_try;

	/* A failed or unverified answer that still shows our token carries the
	 * stored expiry, the one every other party judges by: never believe a
	 * later one (the SPIN model's shortened-TTL counterexample,
	 * docs/model/README.md). */
	if (r->has_payload && strcmp(r->payload.lease_token, k->token) == 0 &&
	    (!k->expires_at || r->payload.expires_at < k->expires_at)) {
		int64_t t = stored_ttl(&r->payload, k->ttl);
		k->expires_at = r->payload.expires_at;
		if (lease__policy_lost_deadline(k->expires_at, t) < k->lost_at)
			k->lost_at = lease__policy_lost_deadline(k->expires_at, t);
	}
	k->attempt++;
	k->next = (double)k->now + k->backoff;
	k->backoff = k->backoff * 2 > k->backoff_max ? k->backoff_max : k->backoff * 2;
	/* the last retry starts LEASE_KEEP_MARGIN before the lost deadline */
	last_try = whole_before(k->lost_at - LEASE_KEEP_MARGIN);
	if (k->next > k->lost_at - LEASE_KEEP_MARGIN)
		k->next = last_try > (double)k->now ? last_try : k->lost_at;
}

/* Judge a heartbeat's answer @p rc and report it. @return 0 to keep going,
 * else the code the keeper ends with (lost, or a permanent failure). */
static int keep_answer(keeper *k, int rc)
{
	lease_keep_report rep;

	memset(&rep, 0, sizeof(rep));
	rep.result = &k->r;
	rep.set = k->set;
	rep.now = k->now;
	if (rc == 0) {
		keep_landed(k);
		rep.event = LEASE_KEEP_WRITE;
		rep.next_in = k->next - (double)k->now;
	} else if (rc == LEASE_ENOTHOLDER || rc == LEASE_EEXPIRED || rc == LEASE_EHELD) {
		/* F21: a different token or a passed expires_at means lost at once. */
		rc = rc == LEASE_EHELD ? LEASE_ENOTHOLDER : rc;
		rep.event = LEASE_KEEP_LOST;
	} else if (is_transient(rc)) {
		keep_retry_later(k);
		rep.event = LEASE_KEEP_RETRY;
		rep.next_in = k->next - (double)k->now;
	} else {
		rep.event = LEASE_KEEP_FAILED;
	}
	rep.code = rc;
	emit(k->o, &rep, k->attempt, k->expires_at, k->lost_at, k->ttl);
	return rep.event == LEASE_KEEP_LOST || rep.event == LEASE_KEEP_FAILED ? rc : 0;
}

/* The keeper of lease_keep() (@p n 1, @p set NULL) and lease_keep_set()
 * (@p set: the set heartbeat's buffer, the caller's): heartbeat at the
 * renewal point, re-read between heartbeats (check_seconds), retry
 * transient failures until the lost deadline. */
static int keep_engine(lease_result *last, lease_store *st, const char *const *names, size_t n,
                       lease_set_result *set, const lease_keep_options *opts)
{
	keeper kb = {.st = st, .names = names, .n = n, .set = set, .o = opts}, *k = &kb;
	int rc;

	if (last)
		memset(last, 0, sizeof(*last));
	if ((rc = keep_start(k)) < 0)
		return rc;
	for (;;) {
		if (opts->stop && *opts->stop)
			break;
		k->now = lease_store_now(st);
		if ((double)k->now >= k->lost_at) {
			rc = keep_deadline_passed(k);
			break;
		}
		if (opts->check_seconds > 0 && k->expires_at && (double)k->now < k->next &&
		    (double)k->now >= k->check_at) {
			if ((rc = keep_check(k)) < 0)
				break;
			continue;
		}
		if ((double)k->now < k->next) {
			if (keep_pause(k))
				break;
			continue;
		}
		if ((rc = keep_answer(k, keep_write(k))) != 0)
			break;
	}
	if (last)
		*last = k->r;
	return rc;
}

int lease_keep(lease_result *last, lease_store *st, const char *name,
               const lease_keep_options *opts)
{
	const char *names[1];

	lease__store_clear_error(st); /* a call begins: its first error wins */
	names[0] = name;
	return keep_engine(last, st, names, 1, NULL, opts);
}

int lease_keep_set(lease_result *last, lease_store *st, const char *const *names, size_t n,
                   const lease_keep_options *opts)
{
	lease_set_result *set;
	size_t i, j;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (last)
		memset(last, 0, sizeof(*last));
	if (!names || n < 1 || n > LEASE_SET_MAX || !names[0])
		return st ? lease__store_set_error(st, LEASE_EINVALID,
		                                   "heartbeat service: a set names 1 to %d leases",
		                                   LEASE_SET_MAX)
		          : LEASE_EINVALID;
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (!names[i] || strcmp(names[i], names[j]) == 0)
				return st ? lease__store_set_error(
				                    st, LEASE_EINVALID,
				                    "heartbeat service: lease '%s' named "
				                    "twice in the set",
				                    names[i] ? names[i] : "(null)")
				          : LEASE_EINVALID;
	if (!(set = calloc(1, sizeof(*set))))
		return st ? lease__store_set_error(st, LEASE_ENOMEM,
		                                   "heartbeat service: out of memory")
		          : LEASE_ENOMEM;
	rc = keep_engine(last, st, names, n, set, opts);
	free(set);
	return rc;
}
