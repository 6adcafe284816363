/* Reconcile (protocol.md §6, §7): the batch sweep. Its parts:
 * reconcile_classify.c (a lease's anomalies), reconcile_act.c (reap, prune),
 * reconcile_history.c (a lease's history); shared declarations in
 * reconcile_int.h. */
#include "lease/reconcile_int.h"
#include "reflease/queue.h"
#include "reflease/runtime.h"

#include <stddef.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/door.h"
#include "store/frontend.h"
#include "util/util.h"

/* Ref lock files older than this are stale, s (protocol.md §7). */
#define LOCK_STALE_S 60
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
	a = lease__rec_add_anomaly(e, LEASE_ANOM_STALE_REF_LOCK, LEASE_SEV_WARNING,
	                           "%s %s.lock is %llds old (a crashed writer?)%s", what,
	                           lk->refname, (long long)age,
	                           o->reap ? "" : "; --reap removes it");
	if (a)
		a->seconds = age;
	if (o->reap) {
		int rr = lease__remove_ref_lock(st, lk, min_age);
		if (rr == 0 || rr == LEASE_ENOTFOUND) {
			e->lock_removed = rr == 0;
			r->locks_removed += rr == 0;
		} else if (e->action == LEASE_ACTION_NONE) {
			/* the removal's own words ("... changed or is younger
			 * than 60s: kept"), not prefixed again (issue 26) */
			lease__rec_skip(r, e, rr, "remove-lock", "%s", lease_store_last_error(st));
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
	if ((rc = lease__list_ref_locks(&locks, st, prefix)) < 0)
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
	if ((rc = lease__list_ref_locks(&locks, st, "")) < 0)
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
 * by CAS from the oid read, through the write engine (lease_ticket_delete). */
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
		if (o->reap && lease_ticket_delete(st, t) == 0)
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
	a = lease__rec_add_anomaly(
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
	if ((rc = lease__list_refs(&l, st, prefix)) < 0)
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
	 * (lease__store_pace(); issue 24); the streamed reads are not part of it */
	lease__store_op_begin(sw->st, 0);
	if (o->reap && e->action == LEASE_ACTION_NONE &&
	    lease__rec_has_anomaly(e, LEASE_ANOM_EXPIRED) &&
	    !lease__rec_has_anomaly(e, LEASE_ANOM_NAME_MISMATCH))
		lease__rec_reap(r, e, sw->st, o);
	else if (o->prune_days >= 0 && e->action == LEASE_ACTION_NONE && e->has_payload &&
	         e->payload.phase == LEASE_PHASE_RELEASED &&
	         !lease__rec_has_anomaly(e, LEASE_ANOM_NAME_MISMATCH) &&
	         r->now - e->payload.expires_at >= o->prune_days * 86400)
		lease__rec_prune(r, e, sw->st);
	lease__store_op_end(sw->st);
	if (walked)
		lease__rec_slot_walk_note(&sw->slots, e);
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
			lease_anomaly *a = lease__rec_add_anomaly(e, l->anomalies[k].id,
			                                          l->anomalies[k].severity, "%s",
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

/* A live member of a set write a crash cut is held by no one (protocol.md
 * "Sets", "A set cut by a crash"): reported, left to the next acquire. */
static int check_cut(sweep *sw, lease_reconcile_entry *e, const lease_ref_state *s)
{
	char mate[LEASE_NAME_MAX + 1];
	int cut;

	if (s->payload_rc != 0 || !s->payload.has_set || s->payload.phase == LEASE_PHASE_RELEASED ||
	    lease__rec_has_anomaly(e, LEASE_ANOM_EXPIRED))
		return 0;
	if ((cut = lease_set_cut_mate(mate, sizeof(mate), sw->st, &s->payload)) < 0)
		return cut;
	if (cut)
		lease__rec_add_anomaly(e, LEASE_ANOM_CUT_SET_WRITE, LEASE_SEV_WARNING,
		                       "its set write %s did not reach '%s' (a set writer killed "
		                       "between its renames): held by no one, an acquire takes it",
		                       s->payload.set_write, mate);
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
		                                   sw->default_ttl)) < 0 ||
		    (rc = check_cut(sw, &e, s)) < 0) {
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
		lease__rec_add_anomaly(
		        &e, LEASE_ANOM_INVALID_NAME, LEASE_SEV_WARNING,
		        "a ref under refs/%s/ whose name breaks the lease-name rule (written "
		        "by another tool)",
		        sw->r->ns);
	}
	if ((rc = flush_locks(sw, e.name, &e)) != 0) {
		lease_reconcile_entry_clear(&e);
		return rc;
	}
	if (s)
		lease__rec_slot_walk_check(&sw->slots, &e, sw->r->ns);
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
		return lease__store_set_error(st, LEASE_EINVALID,
		                              "reconcile options of an unsupported version");
	snprintf(out->ns, sizeof(out->ns), "%s", lease_store_namespace(st));
	if (opts->prune_days > 36500 || opts->grace_seconds > 86400 * 365)
		return lease__store_set_error(st, LEASE_EINVALID, "reconcile: option out of range");
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
	out->paced_ms = -lease__store_paced_ms(st);
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
	out->paced_ms += lease__store_paced_ms(st);
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

	lease__store_clear_error(st); /* a call begins: its first error wins */
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

	lease__store_clear_error(st); /* a call begins: its first error wins */
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
