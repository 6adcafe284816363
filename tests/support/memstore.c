/* The lying in-memory transport (see memstore.h). */
#include "memstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_ref {
	char *name;
	int present;
	lease_oid oid;
	int prev_present; /* state before the last write */
	lease_oid prev_oid;
} mem_ref;

typedef struct mem_obj {
	lease_commit c; /* is_commit 0 for blobs */
} mem_obj;

struct memstore {
	lease_transport base;
	mem_ref *refs;
	size_t nrefs, caprefs;
	mem_obj *objs;
	size_t nobjs, capobjs;
	uint64_t counter;
	memstore_faults faults;
	memstore_counts counts;
	char err[256];
};

static memstore *M(lease_transport *t)
{
	return (memstore *)t;
}

static int take(int *knob)
{
	if (*knob > 0) {
		(*knob)--;
		return 1;
	}
	return 0;
}

static int seterr(memstore *m, int code, const char *msg)
{
	snprintf(m->err, sizeof(m->err), "%s", msg);
	return code;
}

/* FNV-1a over the content, mixed with a counter through splitmix64. */
static void make_oid(memstore *m, lease_oid *out, const char *content)
{
	uint64_t h = 1469598103934665603ULL, x;
	size_t i;

	for (; content && *content; content++) {
		h ^= (unsigned char)*content;
		h *= 1099511628211ULL;
	}
	x = h ^ (++m->counter * 0x9e3779b97f4a7c15ULL);
	for (i = 0; i < LEASE_OID_RAWSZ - 4; i++) {
		uint64_t z;

		if (i % 8 == 0) {
			x += 0x9e3779b97f4a7c15ULL;
			z = x;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			h = z ^ (z >> 31);
		}
		out->id[i] = (unsigned char)(h >> (8 * (i % 8)));
	}
	/* The counter in the last bytes makes every oid unique. */
	for (i = 0; i < 4; i++)
		out->id[LEASE_OID_RAWSZ - 1 - i] = (unsigned char)(m->counter >> (8 * i));
}

static mem_ref *find_ref(const memstore *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nrefs; i++)
		if (strcmp(m->refs[i].name, name) == 0)
			return &m->refs[i];
	return NULL;
}

/* @p items (@p n used of *@p cap, each @p size bytes) with room for one
 * more: the same array or a larger one (*@p cap updated), NULL when out of
 * memory (@p items unchanged). */
static void *grow(void *items, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *p;

	if (n < *cap)
		return items;
	c = *cap ? *cap * 2 : 16;
	if (!(p = realloc(items, c * size)))
		return NULL;
	*cap = c;
	return p;
}

static mem_ref *get_ref(memstore *m, const char *name)
{
	mem_ref *r = find_ref(m, name);

	if (r)
		return r;
	if (!(r = grow(m->refs, &m->caprefs, m->nrefs, sizeof(*r))))
		return NULL;
	m->refs = r;
	r = &m->refs[m->nrefs];
	memset(r, 0, sizeof(*r));
	if (!(r->name = strdup(name)))
		return NULL;
	m->nrefs++;
	return r;
}

static const mem_obj *find_obj(const memstore *m, const lease_oid *oid)
{
	size_t i;

	for (i = 0; i < m->nobjs; i++)
		if (lease_oid_equal(&m->objs[i].c.oid, oid))
			return &m->objs[i];
	return NULL;
}

static mem_obj *new_obj(memstore *m)
{
	mem_obj *o = grow(m->objs, &m->capobjs, m->nobjs, sizeof(*o));

	if (!o)
		return NULL;
	m->objs = o;
	memset(&m->objs[m->nobjs], 0, sizeof(mem_obj));
	return &m->objs[m->nobjs];
}

static void set_state(mem_ref *r, int present, const lease_oid *oid)
{
	r->prev_present = r->present;
	r->prev_oid = r->oid;
	r->present = present;
	if (present)
		r->oid = *oid;
	else
		memset(&r->oid, 0, sizeof(r->oid));
}

static int mem_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                            const char *message, int64_t when)
{
	memstore *m = M(t);
	mem_obj *o;

	m->counts.write_commit++;
	if (parent && !find_obj(m, parent))
		return seterr(m, LEASE_EINTERNAL, "parent commit missing");
	if (!(o = new_obj(m)) || !(o->c.message = strdup(message ? message : "")))
		return LEASE_ENOMEM;
	make_oid(m, &o->c.oid, message);
	o->c.is_commit = 1;
	o->c.time = when;
	if (parent) {
		o->c.has_parent = 1;
		o->c.parent = *parent;
	}
	m->nobjs++;
	*out = o->c.oid;
	return 0;
}

/* Common fault handling for writes: 1 = act, else the return code in *rc. */
static int write_faults(memstore *m, int *lie, int *rc, int *drop)
{
	*drop = 0;
	if (take(lie)) {
		*rc = 0;
		return 0;
	}
	if (take(&m->faults.fail_before)) {
		*rc = seterr(m, LEASE_ENET, "injected: connection failed before sending");
		return 0;
	}
	*drop = take(&m->faults.drop_after_apply);
	return 1;
}

static int finish_write(memstore *m, int drop)
{
	return drop ? seterr(m, LEASE_ENET, "injected: answer lost after applying") : 0;
}

static int mem_create_ref(lease_transport *t, const char *refname, const lease_oid *new_oid)
{
	memstore *m = M(t);
	mem_ref *r;
	int rc, drop;

	m->counts.create_ref++;
	if (take(&m->faults.exists_on_create))
		return seterr(m, LEASE_EEXISTS, "injected: reference already exists");
	if (!write_faults(m, &m->faults.lie_create, &rc, &drop))
		return rc;
	if (!(r = get_ref(m, refname)))
		return LEASE_ENOMEM;
	if (r->present)
		return seterr(m, LEASE_EEXISTS, "reference already exists");
	set_state(r, 1, new_oid);
	return finish_write(m, drop);
}

/* A CAS update of @p refname from @p old_oid to @p new_oid (NULL: delete),
 * counted in *@p count, lied about per *@p lie. */
static int cas_update(memstore *m, int *count, int *lie, const char *refname,
                      const lease_oid *old_oid, const lease_oid *new_oid)
{
	mem_ref *r;
	int rc, drop;

	(*count)++;
	if (!write_faults(m, lie, &rc, &drop))
		return rc;
	r = find_ref(m, refname);
	if (!r || !r->present || !lease_oid_equal(&r->oid, old_oid))
		return seterr(m, LEASE_ECAS, "stale before-oid");
	set_state(r, new_oid != NULL, new_oid);
	return finish_write(m, drop);
}

static int mem_replace_ref(lease_transport *t, const char *refname, const lease_oid *old_oid,
                           const lease_oid *new_oid)
{
	memstore *m = M(t);

	return cas_update(m, &m->counts.replace_ref, &m->faults.lie_replace, refname, old_oid,
	                  new_oid);
}

static int mem_delete_ref(lease_transport *t, const char *refname, const lease_oid *old_oid)
{
	memstore *m = M(t);

	return cas_update(m, &m->counts.delete_ref, &m->faults.lie_delete, refname, old_oid, NULL);
}

/* Copy object @p oid into @p out, lying when wrong_commit says so. */
static int answer_commit(memstore *m, lease_commit *out, const lease_oid *oid)
{
	const mem_obj *o = find_obj(m, oid);
	int rc;

	memset(out, 0, sizeof(*out));
	if (!o)
		return seterr(m, LEASE_ENOTFOUND, "object missing");
	if ((rc = lease_commit_copy(out, &o->c)) < 0)
		return rc;
	if (take(&m->faults.wrong_commit))
		out->oid.id[0] ^= 0xff;
	return 0;
}

static int mem_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                        int *has_commit, lease_commit *commit_out)
{
	memstore *m = M(t);
	const mem_ref *r = find_ref(m, refname);
	int rc;

	m->counts.read_ref++;
	*present = 0;
	*has_commit = 0;
	memset(oid, 0, sizeof(*oid));
	if (!r)
		return 0;
	if (take(&m->faults.stale_reads)) {
		*present = r->prev_present;
		*oid = r->prev_oid;
	} else {
		*present = r->present;
		*oid = r->oid;
	}
	if (!*present)
		return 0;
	/* An atomic answer: the target with its message. */
	rc = answer_commit(m, commit_out, oid);
	if (rc == 0)
		*has_commit = 1;
	return rc == LEASE_ENOTFOUND ? 0 : rc;
}

static int mem_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	M(t)->counts.read_commit++;
	return answer_commit(M(t), out, oid);
}

static int push_entry(memstore *m, lease_ref_list *out, const char *name, const lease_oid *oid,
                      const lease_oid *current)
{
	lease_ref_entry *e;
	const mem_obj *o, *p;
	int rc;

	if ((rc = lease_ref_list_push(out, name, oid)) < 0)
		return rc;
	if (!m->faults.prefetch || !current || !(o = find_obj(m, current)))
		return 0;
	e = &out->items[out->count - 1];
	if ((rc = lease_commit_copy(&e->commit, &o->c)) < 0)
		return rc;
	e->has_commit = 1;
	if (o->c.has_parent && (p = find_obj(m, &o->c.parent))) {
		if ((rc = lease_commit_copy(&e->parent_commit, &p->c)) < 0)
			return rc;
		e->has_parent_commit = 1;
	}
	return 0;
}

static int mem_list_refs(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	memstore *m = M(t);
	size_t i, plen = strlen(prefix);
	int stale, rc = 0, rep;

	m->counts.list_refs++;
	memset(out, 0, sizeof(*out));
	stale = take(&m->faults.stale_list);
	for (rep = 0; rep < (m->faults.duplicates ? 2 : 1) && rc == 0; rep++) {
		for (i = 0; i < m->nrefs && rc == 0; i++) {
			const mem_ref *r = &m->refs[i];
			int present = stale ? r->prev_present : r->present;

			if (!present || strncmp(r->name, prefix, plen) != 0)
				continue;
			rc = push_entry(m, out, r->name, stale ? &r->prev_oid : &r->oid,
			                r->present ? &r->oid : NULL);
		}
	}
	if (rc == 0 && m->faults.lookalikes && plen > 1 && prefix[plen - 1] == '/') {
		char buf[512];
		lease_oid any;
		int n = (int)(plen - 1);

		make_oid(m, &any, "look-alike");
		snprintf(buf, sizeof(buf), "%.*s-x/a", n, prefix);
		rc = lease_ref_list_push(out, buf, &any);
		snprintf(buf, sizeof(buf), "%.*sx", n, prefix);
		if (rc == 0)
			rc = lease_ref_list_push(out, buf, &any);
		snprintf(buf, sizeof(buf), "%sa/b", prefix);
		if (rc == 0)
			rc = lease_ref_list_push(out, buf, &any);
	}
	if (rc < 0)
		lease_ref_list_clear(out);
	return rc;
}

static const char *mem_last_error(lease_transport *t)
{
	return M(t)->err[0] ? M(t)->err : NULL;
}

static void mem_free(lease_transport *t)
{
	memstore *m = M(t);
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nrefs; i++)
		free(m->refs[i].name);
	for (i = 0; i < m->nobjs; i++)
		lease_commit_clear(&m->objs[i].c);
	free(m->refs);
	free(m->objs);
	free(m);
}

lease_transport *memstore_new(memstore **handle)
{
	memstore *m = calloc(1, sizeof(*m));

	if (handle)
		*handle = m;
	if (!m)
		return NULL;
	m->base.version = LEASE_TRANSPORT_VERSION;
	m->base.kind = "mem";
	m->base.skew_margin_s = 0;
	m->base.ttl_min_s = 5;
	m->base.verify_window_ms = 0;
	m->base.write_commit = mem_write_commit;
	m->base.create_ref = mem_create_ref;
	m->base.replace_ref = mem_replace_ref;
	m->base.delete_ref = mem_delete_ref;
	m->base.read_ref = mem_read_ref;
	m->base.read_commit = mem_read_commit;
	m->base.list_refs = mem_list_refs;
	m->base.now = NULL;
	m->base.last_error = mem_last_error;
	m->base.free = mem_free;
	return &m->base;
}

memstore_faults *memstore_faults_get(memstore *m)
{
	return &m->faults;
}

const memstore_counts *memstore_counts_get(const memstore *m)
{
	return &m->counts;
}

void memstore_counts_reset(memstore *m)
{
	memset(&m->counts, 0, sizeof(m->counts));
}

int memstore_cas_many(lease_transport *t, const lease_ref_update *u, size_t n)
{
	memstore *m = M(t);
	size_t i;
	int rc, drop;

	if (!write_faults(m, &m->faults.lie_replace, &rc, &drop))
		return rc;
	/* single-threaded: every compare before any write is atomic */
	for (i = 0; i < n; i++) {
		const mem_ref *r = find_ref(m, u[i].refname);
		int present = r && r->present;
		if (lease_oid_is_zero(&u[i].old_oid)
		            ? present
		            : !present || !lease_oid_equal(&r->oid, &u[i].old_oid))
			return seterr(m, LEASE_ECAS, "stale before-oid");
	}
	for (i = 0; i < n; i++)
		if (memstore_set_ref(m, u[i].refname, &u[i].new_oid) < 0)
			return LEASE_ENOMEM;
	return finish_write(m, drop);
}

int memstore_set_ref(memstore *m, const char *refname, const lease_oid *oid)
{
	mem_ref *r = get_ref(m, refname);

	if (!r)
		return LEASE_ENOMEM;
	set_state(r, oid != NULL, oid);
	return 0;
}

int memstore_get_ref(const memstore *m, const char *refname, lease_oid *oid)
{
	const mem_ref *r = find_ref(m, refname);

	if (!r || !r->present)
		return 0;
	if (oid)
		*oid = r->oid;
	return 1;
}

int memstore_put_blob(memstore *m, lease_oid *out, const char *data)
{
	mem_obj *o = new_obj(m);

	if (!o || !(o->c.message = strdup(data ? data : "")))
		return LEASE_ENOMEM;
	make_oid(m, &o->c.oid, data);
	m->nobjs++;
	*out = o->c.oid;
	return 0;
}

static int refname_cmp(const void *a, const void *b)
{
	return strcmp(((const lease_ref_entry *)a)->refname, ((const lease_ref_entry *)b)->refname);
}

int memstore_list_sorted(lease_transport *t, lease_ref_list *all, const char *prefix)
{
	int rc = t->list_refs(t, all, prefix);

	if (rc == 0)
		qsort(all->items, all->count, sizeof(*all->items), refname_cmp);
	return rc;
}
