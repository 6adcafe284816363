/* Statuses and results (cli.md, protocol.md §4): how every operation —
 * single lease (runtime.c) or set (set.c) — answers, and `status`, which
 * only reads. */
#include "lease/op.h"
#include "store/frontend.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void lease__rt_result_init(lease_result *out, lease_store *st, const char *name)
{
	memset(out, 0, sizeof(*out));
	out->status = LEASE_STATUS_ERROR;
	out->waited_seconds = -1;
	snprintf(out->name, sizeof(out->name), "%.*s", LEASE_NAME_MAX, name ? name : "");
	snprintf(out->ref, sizeof(out->ref), "refs/%.*s/%.*s", LEASE_NS_MAX,
	         lease_store_namespace(st), LEASE_NAME_MAX, name ? name : "");
}

void lease__rt_result_state(lease_result *out, const lease_ref_state *s)
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
void lease__rt_result_message(lease_result *out, const lease_store *st, int code)
{
	const char *m = lease_store_last_error(st);
	int n = snprintf(out->message, sizeof(out->message), "%s", *m ? m : lease_error_id(code));

	lease__err_mark_cut(out->message, sizeof(out->message), n);
}

int lease__rt_result_fail(lease_result *out, lease_store *st, int code, const char *fmt, ...)
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
	lease__rt_result_message(out, st, code);
	return code;
}

lease_status_id lease__rt_read_status(lease_store *st, const lease_ref_state *s, int64_t now)
{
	if (!s->present)
		return LEASE_STATUS_ABSENT;
	if (s->payload.phase == LEASE_PHASE_RELEASED)
		return LEASE_STATUS_RELEASED;
	if (lease_payload_expired(st, &s->payload, now))
		return LEASE_STATUS_EXPIRED;
	return LEASE_STATUS_LIVE;
}

/* A live member whose set write was cut by a crash is held by no one
 * (protocol.md "Sets"): `expired`, free to take, saying why. */
static int status_cut(lease_result *out, lease_store *st, const lease_payload *p)
{
	char mate[LEASE_NAME_MAX + 1];
	int cut = lease_set_cut_mate(mate, sizeof(mate), st, p);

	if (cut > 0) {
		out->status = LEASE_STATUS_EXPIRED;
		snprintf(out->message, sizeof(out->message),
		         "held by no one: its set write did not reach '%s' (a set writer killed "
		         "between its renames); free to take",
		         mate);
	}
	return cut < 0 ? lease__rt_result_fail(out, st, cut, NULL) : 0;
}

int lease_status(lease_result *out, lease_store *st, const char *name)
{
	lease_ref_state s;
	char err[256];
	int64_t now;
	int rc;

	lease__store_clear_error(st); /* an operation begins: its first error wins */
	lease__rt_result_init(out, st, name);
	if (!name || lease_ref_name_validate(name, err, sizeof(err)) < 0)
		return lease__rt_result_fail(out, st, LEASE_EINVALID, "%s",
		                             name ? err : "name: none given");
	memset(&s, 0, sizeof(s));
	lease__store_op_begin(st, 0);
	rc = lease_fetch_ref(&s, st, name);
	lease__store_op_end(st);
	if (rc < 0) {
		lease_ref_state_clear(&s);
		return lease__rt_result_fail(out, st, rc, NULL);
	}
	now = lease_store_now(st);
	out->now = now;
	lease__rt_result_state(out, &s);
	if (s.present && s.payload_rc != 0)
		rc = lease__rt_result_fail(out, st, s.payload_rc, "%s: unreadable %s: %s", out->ref,
		                           s.commit.unreadable ? "ref" : "payload",
		                           s.payload_error);
	else
		out->status = lease__rt_read_status(st, &s, now);
	if (rc == 0 && out->status == LEASE_STATUS_LIVE && s.payload.has_set)
		rc = status_cut(out, st, &s.payload);
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
