/* N-slot leases (protocol.md "Slots"): slot i of NAME with N slots is the
 * ordinary lease NAME@iofN, so each slot's exclusion, token and fencing
 * generation are the core's; at most N holders because N is fixed by the
 * slot refs present, checked before and after each write. */
#include "lease/door.h"
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

/* One round: try every slot once from @p start; 0 with @p out the slot
 * taken, LEASE_EHELD when every slot is held (@p out: the slot whose
 * holder expires first), else the first error. */
static int slots_round(lease_result *out, lease_store *st, const char *name, int64_t slots,
                       int64_t start, const lease_op_options *opts)
{
	lease_op_options one = *opts;
	lease_result r, held;
	int64_t k;
	int rc, have_held = 0;

	one.wait_seconds = 0;
	one.wait_cb = NULL;
	one.wait_payload = NULL;
	memset(&held, 0, sizeof(held));
	for (k = 0; k < slots; k++) {
		char slot[LEASE_NAME_MAX + 1], err[256];

		if ((rc = lease_slot_name(slot, name, (start + k) % slots + 1, slots, err,
		                          sizeof(err))) < 0)
			return lease__store_set_error(st, rc, "%s", err);
		rc = lease_acquire(&r, st, slot, &one);
		if (rc == 0) {
			*out = r;
			return 0;
		}
		if (rc != LEASE_EHELD && rc != LEASE_ELOCKED) {
			*out = r;
			return rc;
		}
		if (!have_held ||
		    (r.has_payload &&
		     (!held.has_payload || r.payload.expires_at < held.payload.expires_at))) {
			held = r;
			have_held = 1;
		}
	}
	*out = held;
	return LEASE_EHELD;
}

int lease_slots_acquire(lease_result *out, lease_store *st, const char *name, int64_t slots,
                        const lease_op_options *opts)
{
	char slot[LEASE_NAME_MAX + 1], err[256];
	unsigned char rnd[2];
	double start_mono = ((double)lease__store_mono_ms(st) / 1000.0);
	int64_t start, watch;
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
	/* per-process random order spreads contention over the slots */
	if (lease_random_bytes(NULL, rnd, sizeof(rnd)) < 0)
		rnd[0] = rnd[1] = 0;
	start = (int64_t)(((unsigned)rnd[0] << 8 | rnd[1]) % (unsigned)slots);
	watch = start;
	for (;;) {
		double remaining, wait_s, t0;

		if ((rc = slots_check(out, st, name, slots)) < 0)
			return rc;
		rc = slots_round(out, st, name, slots, start, opts);
		if (rc == 0) {
			lease_result mine = *out, rel;
			lease_op_options ro = *opts;

			/* after the write: a concurrent acquire with another N that
			 * missed this slot sees it; one of two always backs off */
			if (slots_check(out, st, name, slots) == 0) {
				*out = mine;
				return 0;
			}
			ro.lease_token = mine.payload.lease_token;
			ro.wait_seconds = 0;
			lease_release(&rel, st, mine.name, &ro);
			return out->code;
		}
		if (rc != LEASE_EHELD)
			return rc;
		remaining = (double)opts->wait_seconds -
		            (((double)lease__store_mono_ms(st) / 1000.0) - start_mono);
		if (opts->wait_seconds <= 0 || remaining <= 0)
			break;
		/* wait on one slot at a time (rotating), at most 1 s (or the poll
		 * pace of a store that cannot watch), then look at every slot */
		wait_s = lease_store_can_watch(st) ? 1.0 : (double)lease_store_ttl_min(st) / 20.0;
		if (wait_s > remaining)
			wait_s = remaining;
		if (opts->wait_cb && opts->wait_cb(wait_s, opts->wait_payload)) {
			snprintf(out->message, sizeof(out->message),
			         "interrupted while waiting for a slot");
			return LEASE_EHELD;
		}
		watch = (watch + 1) % slots;
		if ((rc = lease_slot_name(slot, name, watch + 1, slots, err, sizeof(err))) < 0)
			return rc;
		t0 = ((double)lease__store_mono_ms(st) / 1000.0);
		{
			lease_ref_state s;

			memset(&s, 0, sizeof(s));
			if (lease_fetch_ref(&s, st, slot) == 0)
				lease_wait_ref_change(st, slot, s.present, &s.oid,
				                      (int)(wait_s * 1000.0 + 0.5));
			lease_ref_state_clear(&s);
		}
		if (opts->wait_cb &&
		    ((double)lease__store_mono_ms(st) / 1000.0) < t0 + wait_s - 0.005 &&
		    opts->wait_cb(0.0, opts->wait_payload)) {
			snprintf(out->message, sizeof(out->message),
			         "interrupted while waiting for a slot");
			return LEASE_EHELD;
		}
		start = (start + 1) % slots;
	}
	if (opts->wait_seconds > 0)
		snprintf(out->message, sizeof(out->message),
		         "all %lld slots of %s still held after waiting %lld s (the first to "
		         "expire: %.300s)",
		         (long long)slots, name, (long long)opts->wait_seconds, out->name);
	else
		snprintf(out->message, sizeof(out->message),
		         "all %lld slots of %s are held (the first to expire: %.300s)",
		         (long long)slots, name, out->name);
	return LEASE_EHELD;
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
