/* N-slot leases (protocol.md "Slots"): slot i of NAME with N slots is the
 * ordinary lease NAME@iofN, so each slot's exclusion, token and fencing
 * generation are the core's; at most N holders because N is fixed by the
 * slot refs present, checked before and after each write. */
#include "lease/door.h"
#include "lease/wait.h"
#include "reflease/runtime.h"
#include "store/frontend.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the lease @p n is present and not released (held, expired but not
 * reaped, or unreadable: then it counts as held), else 0. */
static int unreleased(lease_store *st, const char *n)
{
	lease_ref_state s;
	int held;

	memset(&s, 0, sizeof(s));
	if (lease_fetch_ref(&s, st, n) < 0)
		held = 1; /* unknown: never taken for free */
	else
		held = s.present && !(s.payload_rc == 0 && s.payload.phase == LEASE_PHASE_RELEASED);
	lease_ref_state_clear(&s);
	return held;
}

/* Look at every ref of the namespace for another configuration of @p name
 * that is not released: a plain lease NAME, or a slot NAME@iofM with
 * M != @p slots. Released ones are history: the count may change once
 * every slot is released. */
static int slots_check(lease_result *out, lease_store *st, const char *name, int64_t slots)
{
	lease_ref_list list = {0};
	char prefix[LEASE_NS_MAX + 8], base[LEASE_NAME_MAX + 1], err[256];
	size_t i, plen;
	int rc;

	snprintf(prefix, sizeof(prefix), "refs/%s/", lease_store_namespace(st));
	plen = strlen(prefix);
	if ((rc = lease__list_refs(&list, st, prefix)) < 0) {
		snprintf(out->message, sizeof(out->message), "%s", lease_store_last_error(st));
		out->code = rc;
		return rc;
	}
	rc = 0;
	for (i = 0; i < list.count && rc == 0; i++) {
		const char *ref = list.items[i].refname, *n;
		int64_t idx, k;

		if (strncmp(ref, prefix, plen) != 0 || strchr(ref + plen, '/'))
			continue;
		n = ref + plen;
		if (strcmp(n, name) == 0 && unreleased(st, n)) {
			snprintf(out->message, sizeof(out->message),
			         "%s is a plain lease (%s is held), not one of %lld slots: slots "
			         "and a plain lease of one name do not mix",
			         name, ref, (long long)slots);
			rc = LEASE_ECONFIG;
		} else if (lease_slot_name_parse(n, base, &idx, &k, err, sizeof(err)) == 1 &&
		           strcmp(base, name) == 0 && k != slots && unreleased(st, n)) {
			snprintf(out->message, sizeof(out->message),
			         "%s has %lld slots (%s is held), not %lld: every acquire of it "
			         "must "
			         "say --slots %lld while one is held",
			         name, (long long)k, ref, (long long)slots, (long long)k);
			rc = LEASE_ECONFIG;
		}
	}
	lease_ref_list_clear(&list);
	if (rc < 0) {
		out->status = LEASE_STATUS_ERROR;
		out->code = rc;
		(void)lease__store_set_error(st, rc, "%s", out->message);
	}
	return rc;
}

/* The state of every slot of @p name in @p s (@p slots entries, the caller
 * clears them): read in batches of LEASE_SET_MAX (lease_fetch_refs: one
 * request per batch on github, read_refs). @p names receives the slot names. */
static int slots_read(lease_ref_state *s, char (*names)[LEASE_NAME_MAX + 1], lease_store *st,
                      const char *name, int64_t slots)
{
	const char *np[LEASE_SLOTS_MAX];
	char err[256];
	int64_t k, n;
	int rc;

	for (k = 0; k < slots; k++) {
		if ((rc = lease_slot_name(names[k], name, k + 1, slots, err, sizeof(err))) < 0)
			return lease__store_set_error(st, rc, "%s", err);
		np[k] = names[k];
	}
	for (k = 0; k < slots; k += n) {
		n = slots - k < LEASE_SET_MAX ? slots - k : LEASE_SET_MAX;
		if ((rc = lease_fetch_refs(&s[k], st, &np[k], (size_t)n, NULL)) < 0)
			return rc;
	}
	return 0;
}

/* 1 when slot state @p s may be taken at @p now: absent, released or
 * expired; an unreadable slot is never taken for free. */
static int slot_free(lease_store *st, const lease_ref_state *s, int64_t now)
{
	if (!s->present)
		return 1;
	return s->payload_rc == 0 && (s->payload.phase == LEASE_PHASE_RELEASED ||
	                              lease_payload_expired(st, &s->payload, now));
}

/* @p out: the held slot @p slot as read (@p s), its holder's token never copied. */
static void held_result(lease_result *out, lease_store *st, const char *slot,
                        const lease_ref_state *s, int64_t now)
{
	char t[LEASE_TIME_STRSZ + 1];

	memset(out, 0, sizeof(*out));
	out->status = LEASE_STATUS_HELD;
	out->code = LEASE_EHELD;
	out->waited_seconds = -1;
	out->now = now;
	snprintf(out->name, sizeof(out->name), "%s", slot);
	snprintf(out->ref, sizeof(out->ref), "refs/%.*s/%s", LEASE_NS_MAX,
	         lease_store_namespace(st), slot);
	out->present = s->present;
	out->oid = s->oid;
	out->has_parent = s->present && s->commit.has_parent;
	if (out->has_parent)
		out->parent = s->commit.parent;
	out->has_payload = s->present && s->payload_rc == 0;
	if (!out->has_payload) {
		snprintf(out->message, sizeof(out->message), "%s: unreadable", slot);
		return;
	}
	out->payload = s->payload;
	memset(out->payload.lease_token, 0, sizeof(out->payload.lease_token));
	lease_time_format(t, s->payload.expires_at);
	snprintf(out->message, sizeof(out->message), "held by %s on %s until %s", s->payload.owner,
	         s->payload.host, t);
}

/* One round: read every slot (batched), try those that look free from
 * @p start on; 0 with @p out the slot taken, LEASE_EHELD when every slot is
 * held (@p out: the slot whose holder expires first; @p known: each slot's
 * ref as read, for the wait), else the first error. */
static int slots_round(lease_result *out, lease_ref_read *known, char (*refs)[320], lease_store *st,
                       const char *name, int64_t slots, int64_t start, const lease_op_options *opts)
{
	char names[LEASE_SLOTS_MAX][LEASE_NAME_MAX + 1];
	lease_ref_state *s = calloc((size_t)slots, sizeof(*s));
	lease_op_options one = *opts;
	int64_t k, now, first = -1;
	int rc;

	if (!s)
		return lease__store_set_error(st, LEASE_ENOMEM, "%s", "out of memory");
	one.wait_seconds = 0;
	one.wait_cb = NULL;
	one.wait_payload = NULL;
	rc = slots_read(s, names, st, name, slots);
	now = lease_store_now(st);
	for (k = 0; rc == 0 && k < slots; k++) {
		int64_t i = (start + k) % slots;

		if (!slot_free(st, &s[i], now))
			continue;
		rc = lease__acquire_once(out, st, names[i], &one, 0, 0);
		if (rc == LEASE_EHELD || rc == LEASE_ELOCKED)
			rc = 0; /* taken meanwhile: the next one */
		else
			goto done; /* taken, or an error */
	}
	if (rc < 0) {
		snprintf(out->message, sizeof(out->message), "%s", lease_store_last_error(st));
		out->code = rc;
		goto done;
	}
	for (k = 0; k < slots; k++) {
		snprintf(refs[k], 320, "refs/%.*s/%.*s", LEASE_NS_MAX, lease_store_namespace(st),
		         LEASE_NAME_MAX, names[k]);
		known[k].refname = refs[k];
		known[k].present = s[k].present;
		known[k].oid = s[k].oid;
		if (first < 0 || (s[k].payload_rc == 0 &&
		                  (s[first].payload_rc != 0 ||
		                   s[k].payload.expires_at < s[first].payload.expires_at)))
			first = k;
	}
	held_result(out, st, names[first], &s[first], now);
	rc = LEASE_EHELD;
done:
	for (k = 0; k < slots; k++)
		lease_ref_state_clear(&s[k]);
	free(s);
	return rc;
}

/* The slot taken in @p out, checked again after the write: a concurrent
 * acquire with another N that missed this slot sees it; one of two always
 * backs off (released here). */
static int slots_keep(lease_result *out, lease_store *st, const char *name, int64_t slots,
                      const lease_op_options *opts)
{
	lease_result mine = *out, rel;
	lease_op_options ro = *opts;

	if (slots_check(out, st, name, slots) == 0) {
		*out = mine;
		return 0;
	}
	ro.lease_token = mine.payload.lease_token;
	ro.wait_seconds = 0;
	lease_release(&rel, st, mine.name, &ro);
	return out->code;
}

/* The end of a slot wait that found every slot held: @p out's message. */
static int slots_held(lease_result *out, const char *name, int64_t slots,
                      const lease_op_options *opts, int interrupted)
{
	char first[sizeof(out->name)];

	snprintf(first, sizeof(first), "%s", out->name);
	if (interrupted)
		snprintf(out->message, sizeof(out->message),
		         "interrupted while waiting for a slot");
	else if (opts->wait_seconds > 0)
		snprintf(out->message, sizeof(out->message),
		         "all %lld slots of %s still held after waiting %lld s (the first to "
		         "expire: %.300s)",
		         (long long)slots, name, (long long)opts->wait_seconds, first);
	else
		snprintf(out->message, sizeof(out->message),
		         "all %lld slots of %s are held (the first to expire: %.300s)",
		         (long long)slots, name, first);
	return LEASE_EHELD;
}

/* A slot wait (the one wait loop's slot strategy, lease/wait.h): each round
 * reads every slot in one batch and tries those that look free; it waits
 * for a change of any slot (one conditional listing per poll on github). */
typedef struct slot_wait {
	lease_result *out;
	lease_store *st;
	const char *name;
	int64_t slots, start;
	const lease_op_options *o;
	int rounds;
	char prefix[LEASE_NS_MAX + LEASE_NAME_MAX + 16];
	char refs[LEASE_SLOTS_MAX][320];
	lease_ref_read known[LEASE_SLOTS_MAX];
} slot_wait;

static int slot_round(void *ctx, int last, lease_wait_look *l)
{
	slot_wait *x = ctx;
	int rc;

	(void)last;
	if (x->rounds++) /* the next round begins at the next slot */
		x->start = (x->start + 1) % x->slots;
	if ((rc = slots_check(x->out, x->st, x->name, x->slots)) < 0)
		return rc;
	memset(x->known, 0, sizeof(x->known));
	rc = slots_round(x->out, x->known, x->refs, x->st, x->name, x->slots, x->start, x->o);
	if (rc == 0)
		return slots_keep(x->out, x->st, x->name, x->slots, x->o);
	if (rc == LEASE_EHELD) {
		l->holder = x->out; /* the slot whose holder expires first */
		l->prefix = x->prefix;
		l->known = x->known;
		l->n = (size_t)x->slots;
	}
	return rc;
}

static void slot_end(void *ctx, lease_wait_end why, int rc, char *msg, size_t msglen)
{
	slot_wait *x = ctx;

	(void)msg;
	(void)msglen;
	if (why == LEASE_WAIT_INTERRUPTED || rc == LEASE_EHELD)
		slots_held(x->out, x->name, x->slots, x->o, why == LEASE_WAIT_INTERRUPTED);
}

int lease_slots_acquire(lease_result *out, lease_store *st, const char *name, int64_t slots,
                        const lease_op_options *opts)
{
	lease_wait_strategy s = {"slot", slot_round, slot_end};
	char slot[LEASE_NAME_MAX + 1], err[256];
	unsigned char rnd[2];
	slot_wait *x;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	out->status = LEASE_STATUS_ERROR;
	snprintf(out->name, sizeof(out->name), "%.*s", LEASE_NAME_MAX, name ? name : "");
	if (!opts || !name ||
	    (rc = lease_slot_name(slot, name, slots, slots, err, sizeof(err))) < 0) {
		snprintf(out->message, sizeof(out->message), "%s",
		         !opts || !name ? "no lease name or options given" : err);
		out->code = LEASE_EINVALID;
		return lease__store_set_error(st, LEASE_EINVALID, "%s", out->message);
	}
	if (!(x = calloc(1, sizeof(*x))))
		return lease__store_set_error(st, LEASE_ENOMEM, "%s", "out of memory");
	x->out = out;
	x->st = st;
	x->name = name;
	x->slots = slots;
	x->o = opts;
	snprintf(x->prefix, sizeof(x->prefix), "refs/%s/%s@", lease_store_namespace(st), name);
	/* per-process random order spreads contention over the slots */
	if (lease_random_bytes(NULL, rnd, sizeof(rnd)) < 0)
		rnd[0] = rnd[1] = 0;
	x->start = (int64_t)(((unsigned)rnd[0] << 8 | rnd[1]) % (unsigned)slots);
	rc = lease__wait_run(st, opts, &s, x, out->message, sizeof(out->message));
	free(x);
	return rc;
}

static int refname_cmp(const void *a, const void *b)
{
	return strcmp(((const lease_ref_entry *)a)->refname, ((const lease_ref_entry *)b)->refname);
}

void lease_slots_view_clear(lease_slots_view *v)
{
	if (!v)
		return;
	free(v->items);
	memset(v, 0, sizeof(*v));
}

int lease_slots_status(lease_slots_view *out, lease_store *st, const char *name)
{
	lease_ref_list list = {0};
	char prefix[LEASE_NS_MAX + LEASE_NAME_MAX + 16], base[LEASE_NAME_MAX + 1], err[256];
	int64_t count = 0;
	size_t i, plen, nslen;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	if (!name || lease_name_validate(name, err, sizeof(err)) < 0)
		return lease__store_set_error(st, LEASE_EINVALID, "slots of '%s': %s",
		                              name ? name : "", name ? err : "no name given");
	nslen = strlen(lease_store_namespace(st)) + 6; /* "refs/<ns>/" */
	plen = (size_t)snprintf(prefix, sizeof(prefix), "refs/%s/%s@", lease_store_namespace(st),
	                        name);
	if ((rc = lease__list_refs(&list, st, prefix)) < 0)
		return rc;
	if (list.count && !(out->items = calloc(list.count, sizeof(*out->items)))) {
		lease_ref_list_clear(&list);
		return LEASE_ENOMEM;
	}
	/* the listing in name order, as list and reconcile show the slots */
	if (list.count)
		qsort(list.items, list.count, sizeof(*list.items), refname_cmp);
	for (i = 0; i < list.count && rc == 0; i++) {
		const char *n = list.items[i].refname + nslen;
		lease_result *r = &out->items[out->count];
		int64_t idx, k;

		if (strncmp(list.items[i].refname, prefix, plen) != 0 ||
		    lease_slot_name_parse(n, base, &idx, &k, err, sizeof(err)) != 1 ||
		    strcmp(base, name) != 0 ||
		    (out->count && strcmp(out->items[out->count - 1].name, n) == 0))
			continue;
		if ((rc = lease_status(r, st, n)) < 0 && !r->present)
			break; /* the read failed: the view is incomplete */
		rc = 0;
		if (!r->present)
			continue; /* deleted since the listing */
		out->count++;
		if (r->status == LEASE_STATUS_LIVE)
			out->live += (size_t)(count == 0 || count == k);
		if (r->status != LEASE_STATUS_RELEASED && count != -1)
			count = count == 0 || count == k ? k : -1;
	}
	lease_ref_list_clear(&list);
	if (rc < 0) {
		lease_slots_view_clear(out);
		return rc;
	}
	out->slots = count;
	if (count <= 0)
		out->live = 0;
	return 0;
}
