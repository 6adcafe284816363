/* A user's own transport, built only against the installed headers and
 * library (tests/shell/t_install.sh compiles it with `pkg-config --cflags
 * --libs reflease` after `make install`): an in-memory store implementing
 * reflease/sys/transport.h, opened with lease_store_open_transport(), then
 * an acquire / acquire-again / release through the public API. Also checks
 * that a transport lacking a required call is refused, naming the call;
 * that the operation deadline (--timeout, lease_store_options.timeout_s)
 * reaches a transport through its set_deadline (version 5, issue 38) — a
 * read that blocks until that deadline ends the acquire in about timeout_s,
 * with LEASE_ENET — and that a version-4 transport, which ends before
 * set_deadline, keeps working and is never handed a deadline.
 * Prints "ok" and exits 0, else names the failed step and exits 1. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include <reflease/sys/transport.h>

#include <reflease.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OBJS 64
#define MAX_REFS 16

typedef struct tiny_obj {
	lease_oid oid;
	int has_parent;
	lease_oid parent;
	int64_t time;
	char *message;
} tiny_obj;

typedef struct tiny_ref {
	char name[256];
	lease_oid oid;
} tiny_ref;

typedef struct tiny {
	lease_transport base; /* first: the calls cast back */
	tiny_obj objs[MAX_OBJS];
	size_t nobjs;
	tiny_ref refs[MAX_REFS];
	size_t nrefs;
	char err[128];
	int hang;            /* read_ref blocks until the deadline (a store that never answers) */
	int64_t deadline_ms; /* set_deadline's deadline on CLOCK_MONOTONIC, 0 = none */
	int64_t last_ms;     /* the last deadline handed over (> 0), ms */
	int deadlines;       /* set_deadline calls */
} tiny;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static tiny *T(lease_transport *t)
{
	return (tiny *)t;
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static int fail_with(tiny *m, int code, const char *why)
{
	snprintf(m->err, sizeof(m->err), "%s", why);
	return code;
}

static tiny_ref *find_ref(tiny *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nrefs; i++)
		if (strcmp(m->refs[i].name, name) == 0)
			return &m->refs[i];
	return NULL;
}

static int tiny_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                             const char *message, int64_t when)
{
	tiny *m = T(t);
	tiny_obj *o;

	if (m->nobjs == MAX_OBJS)
		return fail_with(m, LEASE_ENOMEM, "object table full");
	o = &m->objs[m->nobjs];
	memset(o, 0, sizeof(*o));
	if (!(o->message = dup_str(message)))
		return fail_with(m, LEASE_ENOMEM, "out of memory");
	o->oid.id[0] = 0xab;
	o->oid.id[1] = (unsigned char)(m->nobjs + 1);
	o->has_parent = parent != NULL;
	if (parent)
		o->parent = *parent;
	o->time = when;
	m->nobjs++;
	*out = o->oid;
	return 0;
}

static int tiny_create_ref(lease_transport *t, const char *refname, const lease_oid *new_oid)
{
	tiny *m = T(t);
	tiny_ref *r;

	if (find_ref(m, refname))
		return fail_with(m, LEASE_EEXISTS, "the ref exists");
	if (m->nrefs == MAX_REFS || strlen(refname) >= sizeof(r->name))
		return fail_with(m, LEASE_ENOMEM, "ref table full");
	r = &m->refs[m->nrefs++];
	snprintf(r->name, sizeof(r->name), "%s", refname);
	r->oid = *new_oid;
	return 0;
}

static int tiny_replace_ref(lease_transport *t, const char *refname, const lease_oid *old_oid,
                            const lease_oid *new_oid)
{
	tiny *m = T(t);
	tiny_ref *r = find_ref(m, refname);

	if (!r || !lease_oid_equal(&r->oid, old_oid))
		return fail_with(m, LEASE_ECAS, "stale old oid");
	r->oid = *new_oid;
	return 0;
}

static int tiny_delete_ref(lease_transport *t, const char *refname, const lease_oid *old_oid)
{
	tiny *m = T(t);
	tiny_ref *r = find_ref(m, refname);

	if (!r || !lease_oid_equal(&r->oid, old_oid))
		return fail_with(m, LEASE_ECAS, "stale old oid");
	*r = m->refs[--m->nrefs];
	return 0;
}

static int tiny_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                         int *has_commit, lease_commit *commit_out)
{
	tiny *m = T(t);
	tiny_ref *r = find_ref(m, refname);

	(void)commit_out;
	if (m->hang) {
		/* a network store that never answers: give up at the operation's
		 * deadline, or after 20 s when none was handed over */
		int64_t end = m->deadline_ms ? m->deadline_ms : mono_ms() + 20000;
		struct timespec tick = {0, 10 * 1000 * 1000};

		while (mono_ms() < end)
			nanosleep(&tick, NULL);
		return fail_with(m, LEASE_ENET, "no answer before the operation's deadline");
	}
	*has_commit = 0; /* the library reads the commit with read_commit */
	*present = r != NULL;
	if (r)
		*oid = r->oid;
	return 0;
}

static int tiny_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	tiny *m = T(t);
	size_t i;

	for (i = 0; i < m->nobjs; i++) {
		const tiny_obj *o = &m->objs[i];

		if (!lease_oid_equal(&o->oid, oid))
			continue;
		out->oid = o->oid;
		out->is_commit = 1;
		out->has_parent = o->has_parent;
		out->parent = o->parent;
		out->time = o->time;
		if (!(out->message = dup_str(o->message)))
			return fail_with(m, LEASE_ENOMEM, "out of memory");
		return 0;
	}
	return fail_with(m, LEASE_ENOTFOUND, "no such object");
}

static int tiny_list_refs(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	tiny *m = T(t);
	size_t i;

	for (i = 0; i < m->nrefs; i++)
		if (strncmp(m->refs[i].name, prefix, strlen(prefix)) == 0 &&
		    lease_ref_list_push(out, m->refs[i].name, &m->refs[i].oid) < 0)
			return fail_with(m, LEASE_ENOMEM, "out of memory");
	return 0;
}

static void tiny_set_deadline(lease_transport *t, int64_t ms)
{
	tiny *m = T(t);

	m->deadlines++;
	m->deadline_ms = ms > 0 ? mono_ms() + ms : 0;
	if (ms > 0)
		m->last_ms = ms;
}

static const char *tiny_last_error(lease_transport *t)
{
	return T(t)->err;
}

static int frees;

static void tiny_free(lease_transport *t)
{
	tiny *m = T(t);
	size_t i;

	for (i = 0; i < m->nobjs; i++)
		free(m->objs[i].message);
	free(m);
	frees++;
}

/* A new transport with every required call and no optional one. */
static lease_transport *tiny_new(void)
{
	tiny *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base.version = LEASE_TRANSPORT_VERSION;
	m->base.kind = "tiny";
	m->base.skew_margin_s = 0;
	m->base.ttl_min_s = 5;
	m->base.verify_window_ms = 0; /* reads are authoritative */
	m->base.write_commit = tiny_write_commit;
	m->base.create_ref = tiny_create_ref;
	m->base.replace_ref = tiny_replace_ref;
	m->base.delete_ref = tiny_delete_ref;
	m->base.read_ref = tiny_read_ref;
	m->base.read_commit = tiny_read_commit;
	m->base.list_refs = tiny_list_refs;
	m->base.last_error = tiny_last_error;
	m->base.free = tiny_free;
	m->base.set_deadline = tiny_set_deadline; /* version 5's optional call */
	return &m->base;
}

static int check(int ok, const char *step, const char *detail)
{
	if (!ok)
		fprintf(stderr, "tiny_transport: %s failed: %s\n", step, detail ? detail : "");
	return ok;
}

/* With --timeout 1 s (timeout_s), an acquire over a store that never
 * answers ends in about 1 s with LEASE_ENET, through set_deadline. */
static int deadline_honoured(void)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_transport *t;
	lease_store *st = NULL;
	lease_result r;
	char err[1024] = "";
	int64_t t0, took;
	int rc;

	if (!(t = tiny_new()))
		return 0;
	T(t)->hang = 1;
	so.timeout_s = 1;
	if (!check(lease_store_open_transport(&st, t, &so, err, sizeof(err)) == 0, "open (hang)",
	           err))
		return 0;
	o.owner = "alice";
	o.host = "h1";
	o.ttl_seconds = 60;
	t0 = mono_ms();
	rc = lease_acquire(&r, st, "build", &o);
	took = mono_ms() - t0;
	snprintf(err, sizeof(err), "rc %d after %lld ms, %d deadline(s), last %lld ms: %s", rc,
	         (long long)took, T(t)->deadlines, (long long)T(t)->last_ms, r.message);
	rc = check(rc == LEASE_ENET && T(t)->deadlines > 0 && T(t)->last_ms > 0 &&
	                   T(t)->last_ms <= 1000 && took >= 900 && took < 5000,
	           "--timeout through set_deadline", err);
	lease_store_free(st);
	return rc;
}

/* A version-4 transport (built before set_deadline) opens and works; the
 * library never reads the member its vtable does not have. */
static int version4_works(void)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_transport *t;
	lease_store *st = NULL;
	lease_result r;
	char err[256] = "";
	int rc;

	if (!(t = tiny_new()))
		return 0;
	t->version = 4;
	if (!check(lease_store_open_transport(&st, t, NULL, err, sizeof(err)) == 0, "open (v4)",
	           err))
		return 0;
	o.owner = "bob";
	o.host = "h2";
	o.ttl_seconds = 60;
	rc = lease_acquire(&r, st, "v4", &o);
	rc = check(rc == 0 && T(t)->deadlines == 0, "acquire over a version-4 transport",
	           r.message);
	lease_store_free(st);
	return rc;
}

int main(void)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_result r, again, rel;
	lease_transport *t;
	lease_store *st = NULL;
	char err[256] = "";
	char token[sizeof(r.payload.lease_token)];
	int rc;

	/* A transport lacking read_ref is refused by name, and freed. */
	if (!(t = tiny_new()))
		return 1;
	t->read_ref = NULL;
	rc = lease_store_open_transport(&st, t, NULL, err, sizeof(err));
	if (!check(rc == LEASE_EINVALID && !st && frees == 1 &&
	                   strstr(err, "transport 'tiny' lacks the required call read_ref"),
	           "refusing a transport without read_ref", err))
		return 1;

	if (!(t = tiny_new()))
		return 1;
	rc = lease_store_open_transport(&st, t, NULL, err, sizeof(err));
	if (!check(rc == 0 && strcmp(lease_store_kind(st), "tiny") == 0, "open", err))
		return 1;
	o.owner = "alice";
	o.host = "h1";
	o.ttl_seconds = 60;
	rc = lease_acquire(&r, st, "build", &o);
	if (!check(rc == 0 && r.payload.lease_token[0], "acquire", r.message))
		return 1;
	snprintf(token, sizeof(token), "%s", r.payload.lease_token);
	rc = lease_acquire(&again, st, "build", &o);
	if (!check(rc == LEASE_EHELD, "acquire of a held lease", again.message))
		return 1;
	o.lease_token = token;
	rc = lease_release(&rel, st, "build", &o);
	if (!check(rc == 0, "release", rel.message))
		return 1;
	lease_store_free(st);
	if (!check(frees == 2, "free through lease_store_free", NULL))
		return 1;
	if (!version4_works() || !deadline_honoured())
		return 1;
	puts("ok");
	return 0;
}
