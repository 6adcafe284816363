/* A pass-through transport for fault tests (passthru.h). */
#include "support/passthru.h"

#include <stdlib.h>

static lease_transport *inner(lease_transport *t)
{
	return ((passthru *)t)->inner;
}

static int pt_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                           const char *message, int64_t when)
{
	return inner(t)->write_commit(inner(t), out, parent, message, when);
}

static int pt_create(lease_transport *t, const char *ref, const lease_oid *n)
{
	return inner(t)->create_ref(inner(t), ref, n);
}

static int pt_replace(lease_transport *t, const char *ref, const lease_oid *o, const lease_oid *n)
{
	return inner(t)->replace_ref(inner(t), ref, o, n);
}

static int pt_delete(lease_transport *t, const char *ref, const lease_oid *o)
{
	return inner(t)->delete_ref(inner(t), ref, o);
}

static int pt_read_ref(lease_transport *t, const char *ref, int *present, lease_oid *oid,
                       int *has_commit, lease_commit *c)
{
	return inner(t)->read_ref(inner(t), ref, present, oid, has_commit, c);
}

static int pt_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	return inner(t)->read_commit(inner(t), out, oid);
}

static int pt_list(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	return inner(t)->list_refs(inner(t), out, prefix);
}

static const char *pt_last_error(lease_transport *t)
{
	return inner(t)->last_error ? inner(t)->last_error(inner(t)) : NULL;
}

static void pt_free(lease_transport *t)
{
	inner(t)->free(inner(t));
	free(t);
}

void passthru_init(passthru *p, lease_transport *in)
{
	p->inner = in;
	p->base = *in;
	p->base.write_commit = pt_write_commit;
	p->base.create_ref = pt_create;
	p->base.replace_ref = pt_replace;
	p->base.delete_ref = pt_delete;
	p->base.read_ref = pt_read_ref;
	p->base.read_commit = pt_read_commit;
	p->base.list_refs = pt_list;
	p->base.last_error = pt_last_error;
	p->base.free = pt_free;
	p->base.now = NULL;
	p->base.list_ref_locks = NULL;
	p->base.remove_ref_lock = NULL;
	p->base.pace = NULL;
	p->base.wait_change = NULL;
	p->base.scan_commits = NULL;
	p->base.set_lock_wait = NULL;
	p->base.read_ref_oid = NULL;
	p->base.cas_many = NULL;
	p->base.list_refs_each = NULL;
	p->base.read_refs = NULL;
	p->base.set_deadline = NULL;
	p->base.wait_refs_change = NULL;
}
