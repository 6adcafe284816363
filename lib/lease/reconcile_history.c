/* A lease's history (protocol.md §6): the first-parent chain read back,
 * each payload with its heartbeat time and the interval to the one before. */
#include "lease/reconcile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/door.h"
#include "lease/policy.h"
#include "store/frontend.h"
#include "util/util.h"

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

	lease__store_clear_error(st); /* a call begins: its first error wins */
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
		if ((rc = lease__read_commit(&c, st, &next)) < 0)
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
			int64_t w = lease__policy_heartbeat_time(&it->payload, 0, NULL) -
			            it->payload.queued_at;
			it->has_wait = 1;
			it->waited_seconds = w > 0 ? w : 0;
		}
		it->has_hb_time = 1;
		lease__rec_hb_time(&it->hb_time, &it->hb_method, &it->assumed_ttl, &it->payload,
		                   newer && newer->payload_rc == 0 ? &newer->payload : NULL,
		                   default_ttl);
	}
	for (i = 0; i < out->count; i++) {
		lease_history_item *it = &out->items[i];
		const lease_history_item *parent = i + 1 < out->count ? &out->items[i + 1] : NULL;

		if (it->payload_rc == 0 && lease__rec_replaced_heartbeat(&it->payload, it->op)) {
			/* the heartbeat before it was replaced: its time is in the payload (§2) */
			it->is_heartbeat = 1;
			it->has_interval = 1;
			it->interval_seconds = it->hb_time - it->payload.previous_heartbeat_at;
			it->interval_method = LEASE_HB_EXACT;
			continue;
		}
		if (!parent || it->payload_rc != 0 || parent->payload_rc != 0)
			continue;
		it->is_heartbeat =
		        lease__rec_is_tenure_heartbeat(&it->payload, it->op, &parent->payload);
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
