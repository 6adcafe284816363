/* The fair waiters' queue (protocol.md §5 "Fair waiting", issue 28): tickets
 * are refs/<ns>-queue/<name>/<16 hex id>, each a commit whose message
 * carries the waiter's identity, its key and the ticket's expiry. A ticket is
 * taken as the bakery algorithm takes a number, in one write: numbered past
 * every key read, then created (issue 39 item 3; a ticket with key 0, an
 * older version's "choosing" one, still blocks every waiter). Every write
 * of a ticket — take, renew, drop, reap — goes through the one write engine
 * (commit.c, issue 38 item 1); a ticket is never revived once expired. */
#include "lease/commit.h"
#include "lease/door.h"
#include "lease/policy.h"
#include "lease/ticket.h"
#include "store/frontend.h"
#include "util/util.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICKET_SCHEMA "reflease-ticket/1"
#define KEY_DIGITS    16

void lease_queue_clear(lease_queue *q)
{
	if (!q)
		return;
	free(q->items);
	memset(q, 0, sizeof(*q));
}

static int queue_prefix(lease_store *st, char *out, size_t len, const char *name)
{
	char err[256];

	if (!name || lease_name_validate(name, err, sizeof(err)) < 0)
		return lease__store_set_error(st, LEASE_EINVALID, "%s",
		                              name ? err : "name: none given");
	snprintf(out, len, "refs/%s-queue/%s/", lease_store_namespace(st), name);
	return 0;
}

static int parse_key(uint64_t *out, const char *s)
{
	uint64_t v = 0;
	size_t i;

	if (strlen(s) != KEY_DIGITS)
		return -1;
	for (i = 0; i < KEY_DIGITS; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static int is_id(const char *s)
{
	size_t i;

	for (i = 0; i < LEASE_TICKET_ID_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

static void copy_str(char *dst, size_t len, json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	snprintf(dst, len, "%s", v ? v : "");
}

static int get_time(int64_t *out, json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v && lease_time_parse(out, v) == 0 ? 0 : -1;
}

static int has_string(json_t *o, const char *k, const char *want)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v && strcmp(v, want) == 0;
}

/* Fill @p t's payload from a ticket commit message; readable 1 on success. */
static void parse_ticket(lease_ticket *t, const char *name, const char *msg)
{
	const char *body = msg ? strstr(msg, "\n\n") : NULL;
	const char *s;
	json_t *o, *ttl;

	t->readable = 0;
	if (!body || !(o = json_loads(body + 2, JSON_REJECT_DUPLICATES, NULL)))
		return;
	if (!has_string(o, "schema", TICKET_SCHEMA) || !has_string(o, "name", name) ||
	    !has_string(o, "id", t->id))
		goto out;
	s = json_string_value(json_object_get(o, "key"));
	if (!s || parse_key(&t->key, s) < 0)
		goto out;
	ttl = json_object_get(o, "ttl_seconds");
	if (!json_is_integer(ttl) || json_integer_value(ttl) <= 0)
		goto out;
	t->ttl_seconds = (int64_t)json_integer_value(ttl);
	if (get_time(&t->since, o, "since") < 0 || get_time(&t->expires_at, o, "expires_at") < 0)
		goto out;
	copy_str(t->owner, sizeof(t->owner), o, "owner");
	copy_str(t->host, sizeof(t->host), o, "host");
	t->readable = 1;
out:
	json_decref(o);
}

int lease_ticket_cmp(const lease_ticket *a, const lease_ticket *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return strcmp(a->id, b->id);
}

static int cmp_named(const void *a, const void *b)
{
	const lease_ticket *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : lease_ticket_cmp(x, y);
}

/* The tickets under @p prefix: refs/<ns>-queue/<name>/ (@p name set) or
 * refs/<ns>-queue/ (every lease's; @p name NULL). */
static int queue_list(lease_queue *out, lease_store *st, const char *prefix, const char *name)
{
	lease_ref_list l;
	size_t i, plen = strlen(prefix);
	int rc;

	out->now = lease_store_now(st);
	if ((rc = lease__list_refs(&l, st, prefix)) < 0)
		return rc;
	if (l.count && !(out->items = calloc(l.count, sizeof(*out->items)))) {
		lease_ref_list_clear(&l);
		return lease__store_set_error(st, LEASE_ENOMEM, "out of memory");
	}
	for (i = 0; i < l.count; i++) {
		lease_ref_entry *e = &l.items[i];
		lease_ticket *t = &out->items[out->count];
		const char *rest = e->refname + plen, *id = rest;
		lease_commit c;
		char err[128];

		if (strncmp(e->refname, prefix, plen) != 0)
			continue; /* a look-alike: not this queue's */
		if (name) {
			snprintf(t->name, sizeof(t->name), "%s", name);
		} else {
			const char *slash = strchr(rest, '/');
			if (!slash || (size_t)(slash - rest) > LEASE_NAME_MAX)
				continue;
			snprintf(t->name, sizeof(t->name), "%.*s", (int)(slash - rest), rest);
			if (lease_name_validate(t->name, err, sizeof(err)) < 0)
				continue;
			id = slash + 1;
		}
		if (!is_id(id))
			continue;
		snprintf(t->refname, sizeof(t->refname), "%s", e->refname);
		snprintf(t->id, sizeof(t->id), "%s", id);
		t->oid = e->oid;
		memset(&c, 0, sizeof(c));
		if (e->has_commit && lease_oid_equal(&e->commit.oid, &e->oid))
			parse_ticket(t, t->name, e->commit.message);
		else if (lease__read_commit(&c, st, &e->oid) == 0 && c.is_commit)
			parse_ticket(t, t->name, c.message);
		lease_commit_clear(&c);
		t->live = t->readable &&
		          !lease__policy_past_expiry(t->expires_at, out->now,
		                                     (int64_t)lease_store_skew_margin(st));
		out->count++;
	}
	lease_ref_list_clear(&l);
	if (out->count > 1) {
		size_t j = 1;
		qsort(out->items, out->count, sizeof(*out->items), cmp_named);
		for (i = 1; i < out->count; i++) /* a listing may repeat a ref */
			if (strcmp(out->items[i].refname, out->items[j - 1].refname) != 0)
				out->items[j++] = out->items[i];
		out->count = j;
	}
	return 0;
}

int lease_queue_read(lease_queue *out, lease_store *st, const char *name)
{
	char prefix[LEASE_NS_MAX + LEASE_NAME_MAX + 32];
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	if ((rc = queue_prefix(st, prefix, sizeof(prefix), name)) < 0)
		return rc;
	return queue_list(out, st, prefix, name);
}

int lease_queue_read_all(lease_queue *out, lease_store *st)
{
	char prefix[LEASE_NS_MAX + 16];

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	snprintf(prefix, sizeof(prefix), "refs/%s-queue/", lease_store_namespace(st));
	return queue_list(out, st, prefix, NULL);
}

size_t lease_queue_position(const lease_queue *q, const char *id)
{
	size_t i, pos = 0;

	for (i = 0; i < q->count; i++) {
		if (!q->items[i].live || q->items[i].key == 0)
			continue;
		pos++;
		if (strcmp(q->items[i].id, id) == 0)
			return pos;
	}
	return 0;
}

/* The commit message of the ticket @p t into *@p out (malloc'd). */
static int ticket_message(char **out, lease_store *st, const char *name, const lease_ticket *t)
{
	char since[LEASE_TIME_STRSZ + 1], exp[LEASE_TIME_STRSZ + 1], key[24];
	char *js = NULL;
	size_t len;
	json_t *o;

	lease_time_format(since, t->since);
	lease_time_format(exp, t->expires_at);
	snprintf(key, sizeof(key), "%016" PRIu64, t->key);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "schema", TICKET_SCHEMA,
	              "name", name, "id", t->id, "key", key, "owner", t->owner, "host", t->host,
	              "since", since, "expires_at", exp, "ttl_seconds", (json_int_t)t->ttl_seconds);
	if (o)
		js = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(o);
	len = js ? strlen(name) + strlen(js) + 32 : 0;
	if (!js || !(*out = malloc(len))) {
		free(js);
		return lease__store_set_error(st, LEASE_ENOMEM, "out of memory");
	}
	snprintf(*out, len, "queue %s: ticket\n\n%s\n", name, js);
	free(js);
	return 0;
}

/* One write of a ticket, through the one write engine (commit.c, issue 38
 * item 1): its settling, unknown-outcome bound, refusal backoff and
 * post-state checks. */
typedef struct ticket_op {
	const char *name;    /* the lease */
	lease_ticket *t;     /* the ticket to write (oid set when it lands); NULL: delete */
	int64_t renew_until; /* > 0: a renewal, refused from this store time on */
	lease_ref_state at;  /* the ref as the caller knows it: absent, or at an oid */
	int moved;           /* the ref read was not as known (reaped, replaced, taken) */
} ticket_op;

static lease_step ticket_plan(void *ctx, const lease_round *r, lease_plan *pl)
{
	ticket_op *op = ctx;
	const lease_ref_state *s = r->s;
	int rc;

	op->moved = s->present != op->at.present ||
	            (s->present && !lease_oid_equal(&s->oid, &op->at.oid));
	if (op->moved)
		return lease_step_done(lease__store_set_error(
		        r->st, LEASE_ECAS,
		        op->at.present ? "%s: the ticket was reaped or replaced"
		                       : "%s: the ticket id is taken",
		        op->name));
	if (!op->t)
		return lease_step_delete();
	if (op->renew_until > 0) {
		if (r->now >= op->renew_until) /* never revive an expired ticket */
			return lease_step_done(lease__store_set_error(
			        r->st, LEASE_EEXPIRED, "%s: the ticket expired", op->name));
		op->t->expires_at = r->now + op->t->ttl_seconds;
	}
	if ((rc = ticket_message(&pl->message, r->st, op->name, op->t)) < 0)
		return lease_step_done(rc);
	return lease_step_write();
}

static lease_step ticket_landed(void *ctx, const lease_round *r, const lease_written *w)
{
	ticket_op *op = ctx;

	(void)r;
	if (op->t)
		op->t->oid = w->oid;
	return lease_step_done(0);
}

/* A lost or unanswered write settles by re-reading (§5); the engine's own
 * conclusion (unknown, refused, kept changing) becomes the message. */
static lease_step ticket_failed(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
                                const char *msg)
{
	ticket_op *op = ctx;

	if (why == LEASE_FAIL_LOST)
		return lease_step_settle();
	if (msg) {
		lease__store_clear_error(r->st);
		(void)lease__store_set_error(r->st, rc, "%s: ticket: %s", op->name, msg);
	}
	return lease_step_done(rc);
}

static const lease_engine_ops ticket_ops = {ticket_plan, ticket_landed, ticket_failed};

/* Write @p t (NULL: delete) to @p refname, known absent (@p at NULL) or at
 * @p at; @p renew_until as ticket_op's; *@p moved (may be NULL) 1 when the
 * ref was found elsewhere. @return 0 or the write's error. */
static int ticket_run(lease_store *st, const char *name, const char *refname, lease_ticket *t,
                      const lease_oid *at, int64_t renew_until, int *moved)
{
	int rc;
	ticket_op op;

	memset(&op, 0, sizeof(op));
	op.name = name;
	op.t = t;
	op.renew_until = renew_until;
	if (at) {
		op.at.present = 1;
		op.at.oid = *at;
		op.at.commit.oid = *at;
		op.at.commit.is_commit = 1; /* the next commit's parent */
	}
	rc = lease__engine_run_ref(st, refname, &ticket_ops, &op, &op.at);
	if (moved)
		*moved = op.moved;
	return rc;
}

int lease__ticket_take(lease_own_ticket *me, lease_store *st, const char *name, const char *owner,
                       const char *host, int64_t ttl_seconds, int64_t since)
{
	char prefix[LEASE_NS_MAX + LEASE_NAME_MAX + 32];
	lease_ticket *t = &me->t;
	uint64_t newest = 0, key;
	lease_queue q;
	int64_t now;
	size_t i;
	int tries, rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if ((rc = queue_prefix(st, prefix, sizeof(prefix), name)) < 0)
		return rc;
	me->held = 0;
	/* 1. the number: the store time in ms at the listing, past every key
	 * listed (issue 39 item 3: no "choosing" ticket before it, §5) */
	memset(&q, 0, sizeof(q));
	if ((rc = queue_list(&q, st, prefix, name)) < 0) {
		lease_queue_clear(&q);
		return rc;
	}
	for (i = 0; i < q.count; i++)
		if (q.items[i].key > newest)
			newest = q.items[i].key;
	now = q.now;
	lease_queue_clear(&q);
	key = (uint64_t)now * 1000u + (uint64_t)(lease__store_wall_fraction(st) * 1000.0);
	if (key <= newest)
		key = newest + 1;
	/* 2. the ticket, keyed, in one write under a random id (one taken: another) */
	for (tries = 0;; tries++) {
		memset(t, 0, sizeof(*t));
		if ((rc = lease_random_hex(t->id, LEASE_TICKET_ID_HEX / 2,
		                           lease_store_random(st))) < 0)
			return lease__store_set_error(st, rc, "no randomness for the ticket id");
		snprintf(t->refname, sizeof(t->refname), "%s%s", prefix, t->id);
		snprintf(t->name, sizeof(t->name), "%s", name);
		snprintf(t->owner, sizeof(t->owner), "%s", owner);
		snprintf(t->host, sizeof(t->host), "%s", host);
		t->key = key;
		t->since = since > 0 ? since : now;
		t->ttl_seconds = ttl_seconds;
		t->expires_at = now + ttl_seconds;
		if ((rc = ticket_run(st, name, t->refname, t, NULL, 0, NULL)) == 0)
			break;
		if (rc != LEASE_ECAS || tries >= 3)
			return rc; /* unknown: the ticket may be there; it expires or is reaped */
		lease__store_clear_error(st);
	}
	me->held = 1;
	me->renewed_at = now;
	t->readable = t->live = 1;
	return 0;
}

int lease__ticket_renew(lease_own_ticket *me, lease_store *st, const char *name)
{
	lease_ticket n = me->t;
	int rc, moved = 0;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (!me->held)
		return LEASE_ECAS;
	rc = ticket_run(st, name, me->t.refname, &n, &me->t.oid, me->t.expires_at, &moved);
	if (rc < 0) {
		if (moved) /* reaped or replaced: not ours to delete */
			me->held = 0;
		return rc;
	}
	me->t = n;
	me->renewed_at = n.expires_at - n.ttl_seconds;
	return 0;
}

void lease__ticket_drop(lease_own_ticket *me, lease_store *st)
{
	if (me->held)
		(void)ticket_run(st, me->t.name, me->t.refname, NULL, &me->t.oid, 0, NULL);
	me->held = 0;
}

int lease_ticket_delete(lease_store *st, const lease_ticket *t)
{
	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (!t)
		return lease__store_set_error(st, LEASE_EINVALID, "no ticket given");
	return ticket_run(st, t->name, t->refname, NULL, &t->oid, 0, NULL);
}

int lease_queue_reap(lease_store *st, const char *name, size_t *removed)
{
	lease_queue q;
	size_t i, n = 0;
	int rc, first = 0;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	if (removed)
		*removed = 0;
	if ((rc = lease_queue_read(&q, st, name)) < 0)
		return rc;
	for (i = 0; i < q.count; i++) {
		if (q.items[i].live)
			continue;
		rc = lease_ticket_delete(st, &q.items[i]);
		if (rc == 0)
			n++;
		else if (rc != LEASE_ECAS && !first)
			first = rc;
	}
	lease_queue_clear(&q);
	if (removed)
		*removed = n;
	return first;
}
