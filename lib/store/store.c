/* The store handle: the transport's check, accessors, errors, deadlines.
 * Opening a store by its spec (the backends' table) is open.c. */
#include "backend.h"
#include "gitobj.h"
#include "handle.h"
#include "http.h"
#include "util/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Both libraries; a store initialises only its own (issue 43): local: and
 * remote: libgit2 (lease__git_global_init), github: libcurl
 * (lease__http_global_init). */
int lease_global_init(void)
{
	int rc = lease__git_global_init();

	return rc < 0 ? rc : lease__http_global_init(NULL, 0);
}

/* The name of the first required call @p t lacks (sys/transport.h), or NULL. */
static const char *missing_call(const lease_transport *t)
{
	const struct {
		const char *name;
		int set;
	} calls[] = {
	        {"write_commit", t->write_commit != NULL},
	        {"create_ref", t->create_ref != NULL},
	        {"replace_ref", t->replace_ref != NULL},
	        {"delete_ref", t->delete_ref != NULL},
	        {"read_ref", t->read_ref != NULL},
	        {"read_commit", t->read_commit != NULL},
	        {"list_refs", t->list_refs != NULL},
	        {"last_error", t->last_error != NULL},
	        {"free", t->free != NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!calls[i].set)
			return calls[i].name;
	return NULL;
}

/* Check @p t before a store is built on it; LEASE_EINVALID naming what is wrong. */
static int transport_check(const lease_transport *t, char *err, size_t errlen)
{
	const char *call;

	if (!t) {
		lease__error_set(err, errlen, "%s", "no transport given");
		return LEASE_EINVALID;
	}
	if (t->version < 1 || t->version > LEASE_TRANSPORT_VERSION) {
		lease__error_set(err, errlen,
		                 "transport of vtable version %u: this library speaks version %d "
		                 "(reflease/sys/transport.h)",
		                 t->version, LEASE_TRANSPORT_VERSION);
		return LEASE_EINVALID;
	}
	if (!t->kind || !*t->kind) {
		lease__error_set(err, errlen, "%s",
		                 "transport without a kind (the backend's name)");
		return LEASE_EINVALID;
	}
	if ((call = missing_call(t))) {
		lease__error_set(err, errlen, "transport '%s' lacks the required call %s", t->kind,
		                 call);
		return LEASE_EINVALID;
	}
	return 0;
}

int lease_store_open_transport(lease_store **out, lease_transport *transport,
                               const lease_store_options *opts, char *err, size_t errlen)
{
	lease_store_options defaults = LEASE_STORE_OPTIONS_INIT;
	lease_store *st;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((rc = transport_check(transport, err, errlen)) < 0) {
		if (transport && transport->free)
			transport->free(transport);
		return rc;
	}
	if (opts->version != LEASE_STORE_OPTIONS_VERSION) {
		lease__error_set(err, errlen, "%s", "store options of an unsupported version");
		transport->free(transport);
		return LEASE_EINVALID;
	}
	if (opts->ns && (rc = lease__namespace_check(opts->ns, err, errlen)) < 0) {
		transport->free(transport);
		return rc;
	}
	if (!(st = calloc(1, sizeof(*st)))) {
		transport->free(transport);
		return LEASE_ENOMEM;
	}
	st->t = transport;
	snprintf(st->ns, sizeof(st->ns), "%s", opts->ns ? opts->ns : "leases");
	st->clock = opts->clock;
	st->random = opts->random;
	st->verify_timeout_ms = opts->verify_timeout_ms >= 0 ? opts->verify_timeout_ms
	                                                     : transport->verify_window_ms;
	st->timeout_s = opts->timeout_s > 0 ? opts->timeout_s : 120;
	st->log = opts->log;
	st->log_payload = opts->log_payload;
	st->log_level = opts->log_level;
	snprintf(st->spec, sizeof(st->spec), "%s:", transport->kind);
	*out = st;
	return 0;
}

void lease__store_set_spec(lease_store *st, const char *spec)
{
	snprintf(st->spec, sizeof(st->spec), "%s", spec);
}

void lease_store_free(lease_store *st)
{
	if (!st)
		return;
	if (st->t && st->t->free)
		st->t->free(st->t);
	free(st);
}

const char *lease_store_namespace(const lease_store *st)
{
	return st->ns;
}
const char *lease_store_kind(const lease_store *st)
{
	return st->t->kind;
}
int lease_store_skew_margin(const lease_store *st)
{
	return st->t->skew_margin_s;
}
int lease_store_ttl_min(const lease_store *st)
{
	return st->t->ttl_min_s;
}
size_t lease_store_budgets(const lease_store *st, lease_budget *out, size_t max)
{
	return st ? lease__github_budgets(st->t, out, max) : 0;
}
int lease__store_budgeted(const lease_store *st)
{
	/* github: every write counts against the repository's request budget
	 * (issue 39); the kind names the backend (GHES included) */
	return strcmp(st->t->kind, "github") == 0;
}
int lease__store_clock_local(const lease_store *st)
{
	return st->t->now == NULL;
}

int lease_store_ttl_default(const lease_store *st)
{
	return st && lease__store_budgeted(st) ? LEASE_TTL_DEFAULT_GITHUB : LEASE_TTL_DEFAULT;
}
int lease_store_ttl_max(const lease_store *st)
{
	(void)st;
	return 86400;
}
int lease_store_timeout(const lease_store *st)
{
	return st->timeout_s;
}
const lease_random *lease_store_random(const lease_store *st)
{
	return &st->random;
}
const char *lease_store_last_error(const lease_store *st)
{
	return st->errmsg;
}
const lease_cas_error *lease_store_last_cas_error(const lease_store *st)
{
	return &st->cas_err;
}

int64_t lease_store_now(lease_store *st)
{
	int64_t now;

	if (st->clock.now)
		return st->clock.now(st->clock.payload);
	if (st->t->now && st->t->now(st->t, &now) == 0)
		return now;
	return (int64_t)time(NULL);
}

double lease__store_wall_fraction(const lease_store *st)
{
	return lease__env_wall_fraction(&st->clock);
}

double lease__store_now_precise(lease_store *st)
{
	return (double)lease_store_now(st) + lease__store_wall_fraction(st);
}

int64_t lease__store_mono_ms(const lease_store *st)
{
	return lease__env_mono_ms(&st->clock);
}

int lease__store_sleep_ms(const lease_store *st, int64_t ms, lease_sleep_mode mode)
{
	return lease__env_sleep_ms(&st->clock, ms, mode);
}

char *lease__store_error_slot(lease_store *st)
{
	return st && !st->errmsg[0] ? st->errmsg : NULL;
}

const char *lease__store_local_commondir(lease_store *st)
{
	return lease__local_commondir(st->t);
}

void lease__store_clear_error(lease_store *st)
{
	if (st)
		st->errmsg[0] = '\0';
}

void lease__store_log(lease_store *st, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lease__vlog(st->log, st->log_payload, st->log_level, level, fmt, ap);
	va_end(ap);
}

void lease_ref_list_clear(lease_ref_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->count; i++) {
		free(l->items[i].refname);
		lease_commit_clear(&l->items[i].commit);
		lease_commit_clear(&l->items[i].parent_commit);
	}
	free(l->items);
	l->items = NULL;
	l->count = l->cap = 0;
}

int lease_ref_list_push(lease_ref_list *l, const char *refname, const lease_oid *oid)
{
	lease_ref_entry *items, *e;

	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		if (!(items = realloc(l->items, cap * sizeof(*items))))
			return LEASE_ENOMEM;
		l->items = items;
		l->cap = cap;
	}
	e = &l->items[l->count];
	memset(e, 0, sizeof(*e));
	if (!(e->refname = strdup(refname)))
		return LEASE_ENOMEM;
	e->oid = *oid;
	l->count++;
	return 0;
}

void lease_commit_clear(lease_commit *c)
{
	if (!c)
		return;
	free(c->message);
	memset(c, 0, sizeof(*c));
}

int lease_commit_copy(lease_commit *dst, const lease_commit *src)
{
	*dst = *src;
	dst->message = NULL;
	if (src->message && !(dst->message = strdup(src->message)))
		return LEASE_ENOMEM;
	return 0;
}

/* Tell the transport its operation ends @p ms from now (<= 0: none) through
 * its set_deadline (version 5; sys/transport.h): the store names no backend. */
static void transport_deadline(lease_transport *t, int64_t ms)
{
	if (t->version >= 5 && t->set_deadline)
		t->set_deadline(t, ms);
}

/* @p ms capped at what the wait has left (lease__store_set_wait_end(), never
 * below 1 s). */
static int64_t wait_end_cap(const lease_store *st, int64_t ms)
{
	int64_t left;

	if (st->wait_end_ms <= 0)
		return ms;
	left = st->wait_end_ms - lease__store_mono_ms(st);
	if (left < 1000)
		left = 1000;
	return left < ms ? left : ms;
}

void lease__store_op_begin(lease_store *st, int64_t cap_ms)
{
	int64_t ms;

	if (st->op_depth++ > 0)
		return;
	ms = wait_end_cap(st, (int64_t)st->timeout_s * 1000);
	if (cap_ms > 0 && cap_ms < ms)
		ms = cap_ms;
	transport_deadline(st->t, ms);
}

void lease__store_wait_begin(lease_store *st, int64_t ms)
{
	if (st->op_depth++ > 0)
		return;
	ms = wait_end_cap(st, ms);
	transport_deadline(st->t, ms > 0 ? ms : 1);
}

void lease__store_op_end(lease_store *st)
{
	if (st->op_depth > 0 && --st->op_depth == 0)
		transport_deadline(st->t, 0);
}

void lease__store_set_wait_end(lease_store *st, int64_t mono_ms)
{
	st->wait_end_ms = mono_ms;
}

int64_t lease__store_pace(lease_store *st)
{
	int64_t waited = st->t->pace ? st->t->pace(st->t, LEASE_PACE_MS) : 0;

	/* each operation of a burst gets its own --timeout */
	if (st->t->pace && st->op_depth > 0)
		transport_deadline(st->t, (int64_t)st->timeout_s * 1000);

	if (waited > 0) {
		st->paced_ms += waited;
		lease__store_log(st, LEASE_LOG_DEBUG, "paced %lld ms before the next write",
		                 (long long)waited);
	}
	return waited;
}

void lease__store_set_lock_wait(lease_store *st, int wait_ms)
{
	if (st && st->t->version >= 2 && st->t->set_lock_wait)
		st->t->set_lock_wait(st->t, wait_ms);
}

int64_t lease__store_paced_ms(const lease_store *st)
{
	/* pace(t, 0) only reports what the writes since the last call waited */
	return st->paced_ms + (st->t->pace ? st->t->pace(st->t, 0) : 0);
}
