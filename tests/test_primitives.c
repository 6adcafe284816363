/* The five primitives (protocol.md §3), every row of the table, against both
 * the local libgit2 backend and the lying in-memory transport; then the
 * faults only the lying transport can produce, including the five no-op
 * regressions (one per primitive). */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease/door.h"
#include "reflease/primitives.h"
#include "store/handle.h"
#include "support/memstore.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/testrepo.h"

enum { B_LOCAL = 0, B_MEM = 1 };

typedef struct backend {
	int which;
	lease_store *st;
	memstore *mem;
	char dir[512];
} backend;

static unsigned int msg_counter;

static void backend_open_ns(backend *b, int which, int verify_ms, const char *ns)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;

	memset(b, 0, sizeof(*b));
	b->which = which;
	o.verify_timeout_ms = verify_ms;
	o.ns = ns;
	if (which == B_LOCAL) {
		ck_assert_int_eq(testrepo_make(b->dir, sizeof(b->dir), TESTREPO_BARE), 0);
		b->st = storefix_local(b->dir, &o);
	} else {
		b->st = storefix_mem(&b->mem, &o);
	}
}

static void backend_open(backend *b, int which)
{
	backend_open_ns(b, which, -1, NULL);
}

static void backend_close(backend *b)
{
	lease_store_free(b->st);
	if (b->which == B_LOCAL)
		testrepo_remove(b->dir);
}

/* Point @p refname at @p oid (NULL: delete) behind the primitives' back. */
static void set_raw_ref(backend *b, const char *refname, const lease_oid *oid)
{
	char args[512], hex[LEASE_OID_HEXSZ + 1];

	if (b->which == B_MEM) {
		ck_assert_int_eq(memstore_set_ref(b->mem, refname, oid), 0);
		return;
	}
	if (oid) {
		lease_oid_tohex(hex, oid);
		snprintf(args, sizeof(args), "update-ref '%s' %s", refname, hex);
	} else {
		snprintf(args, sizeof(args), "update-ref -d '%s'", refname);
	}
	ck_assert_int_eq(testrepo_git(NULL, 0, b->dir, args), 0);
}

/* A valid 1.1.0 payload message for @p name (unique nonce per call). */
static void make_msg(char *out, size_t outlen, const char *name, const char *op,
                     const char *payload_name)
{
	snprintf(
	        out, outlen,
	        "%s: %s claimed by o on h\n\n"
	        "{\"acquired_at\":\"2026-11-30T07:00:00Z\",\"expires_at\":\"2026-11-30T07:05:00Z\","
	        "\"host\":\"h\",\"lease_token\":\"0123456789abcdef0123456789abcdef\",\"name\":\"%"
	        "s\","
	        "\"nonce\":\"%016x\",\"owner\":\"o\",\"phase\":\"claimed\",\"sdlc_version\":\"1.1."
	        "0\","
	        "\"transitions\":0,\"ttl_seconds\":300}\n",
	        name, op, payload_name, ++msg_counter);
}

static lease_oid commit_for(backend *b, const char *name, const lease_oid *parent)
{
	char msg[1024];
	lease_oid oid;
	int rc;

	make_msg(msg, sizeof(msg), name, parent ? "heartbeat" : "acquire", name);
	rc = lease_write_commit(&oid, b->st, parent, msg);
	ck_assert_msg(rc == 0, "write_commit: %s", lease_store_last_error(b->st));
	return oid;
}

static lease_oid created(backend *b, const char *name)
{
	lease_oid oid = commit_for(b, name, NULL);
	int rc = lease_cas_create(b->st, name, &oid);

	ck_assert_msg(rc == 0, "create %s: %s", name, lease_store_last_error(b->st));
	return oid;
}

/* refs/leases/@p name pointed at @p oid behind the primitives' back and read
 * into *@p s: present at @p oid, its payload unreadable (LEASE_EPAYLOAD). */
static void read_unreadable(backend *b, const char *name, const lease_oid *oid, lease_ref_state *s)
{
	char ref[300];

	snprintf(ref, sizeof(ref), "refs/leases/%s", name);
	set_raw_ref(b, ref, oid);
	ck_assert_int_eq(lease_fetch_ref(s, b->st, name), 0);
	ck_assert_int_eq(s->present, 1);
	ck_assert(lease_oid_equal(&s->oid, oid));
	ck_assert_int_eq(s->payload_rc, LEASE_EPAYLOAD);
}

/* @p b opened on backend @p which, holding the one lease @p name: its oid. */
static lease_oid open_holding(backend *b, int which, const char *name)
{
	backend_open(b, which);
	return created(b, name);
}

/* @p name created at *@p first, then replaced by a child of it: the child. */
static lease_oid replaced(backend *b, const char *name, lease_oid *first)
{
	lease_oid n;

	*first = created(b, name);
	n = commit_for(b, name, first);
	ck_assert_int_eq(lease_cas_replace(b->st, name, first, &n), 0);
	return n;
}

/* @p b opened on backend @p which, holding @p name replaced once (replaced()). */
static lease_oid open_replaced(backend *b, int which, const char *name, lease_oid *first)
{
	backend_open(b, which);
	return replaced(b, name, first);
}

static void assert_cas(backend *b, const char *prim, int noop, lease_outcome outcome,
                       const lease_oid *expected, const lease_oid *observed)
{
	const lease_cas_error *e = lease_store_last_cas_error(b->st);

	ck_assert_str_eq(e->primitive, prim);
	ck_assert_int_eq(e->noop, noop);
	ck_assert_int_eq(e->outcome, outcome);
	if (expected) {
		ck_assert(e->has_expected);
		ck_assert(lease_oid_equal(&e->expected, expected));
	}
	if (observed) {
		ck_assert_int_eq(e->observed_present, 1);
		ck_assert(lease_oid_equal(&e->observed, observed));
	} else {
		ck_assert_int_eq(e->observed_present, 0);
	}
	/* the message: the primitive's, naming the ref, or a failed transport
	 * call's own words verbatim (memstore's "injected: ..."), never both
	 * chained (issue 26 step 2); the ref is in the cas error either way */
	ck_assert_ptr_nonnull(strstr(e->ref, "refs/"));
	if (strncmp(lease_store_last_error(b->st), "injected", 8) != 0)
		ck_assert(strstr(lease_store_last_error(b->st), e->ref) != NULL);
	else
		ck_assert(strstr(lease_store_last_error(b->st), e->ref) == NULL);
}

static void assert_ref(backend *b, const char *name, const lease_oid *oid)
{
	lease_ref_state s;

	ck_assert_int_eq(lease_fetch_ref(&s, b->st, name), 0);
	if (oid) {
		ck_assert_int_eq(s.present, 1);
		ck_assert(lease_oid_equal(&s.oid, oid));
	} else {
		ck_assert_int_eq(s.present, 0);
	}
	lease_ref_state_clear(&s);
}

/* ---- cas_create ---- */

START_TEST(create_absent_ok)
{
	backend b;
	lease_ref_state s;
	lease_oid a;

	a = open_holding(&b, _i, "job-1");
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "job-1"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert(lease_oid_equal(&s.oid, &a));
	ck_assert(lease_oid_equal(&s.commit.oid, &a));
	ck_assert_int_eq(s.commit.is_commit, 1);
	ck_assert_int_eq(s.commit.has_parent, 0);
	ck_assert_int_eq(s.payload_rc, 0);
	ck_assert_str_eq(s.payload.name, "job-1");
	ck_assert_int_eq(s.op, LEASE_OP_ACQUIRE);
	ck_assert_str_eq(s.name, "job-1");
	lease_ref_state_clear(&s);
	backend_close(&b);
}
END_TEST

START_TEST(create_invalid_before_io)
{
	static const char *bad[] = {"a/b", "../x", "", ".hidden", "x.lock", "a..b", "-x", "x."};
	backend b;
	lease_namespace ns;
	lease_oid a, zero;
	size_t i;

	backend_open(&b, _i);
	a = commit_for(&b, "x", NULL);
	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(lease_cas_create(b.st, bad[i], &a), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create(b.st, NULL, &a), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create(b.st, "ok", &zero), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(b.st, "refs/heads/main", &a), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(b.st, "refs/leases/a/b", &a), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(b.st, "refs/leases-archive/x/2026", &a),
	                 LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(b.st, "refs/leasesx/a", &a), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_delete(b.st, "d..", &a), LEASE_EINVALID);
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 0);
	ck_assert_uint_eq(ns.invalid_count, 0);
	lease_namespace_clear(&ns);
	/* A well-formed archive ref is accepted. */
	ck_assert_int_eq(
	        lease_cas_create_ref(b.st, "refs/leases-archive/x/20261130T070500Z-0123abcd", &a),
	        0);
	if (b.which == B_MEM)
		ck_assert(memstore_get_ref(b.mem, "refs/leases-archive/x/20261130T070500Z-0123abcd",
		                           NULL));
	backend_close(&b);
}
END_TEST

/* ---- cas_replace ---- */

START_TEST(replace_ok)
{
	backend b;
	lease_ref_state s;
	lease_oid a, n;

	n = open_replaced(&b, _i, "r", &a);
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "r"), 0);
	ck_assert(lease_oid_equal(&s.oid, &n));
	ck_assert_int_eq(s.commit.has_parent, 1);
	ck_assert(lease_oid_equal(&s.commit.parent, &a));
	ck_assert_int_eq(s.op, LEASE_OP_HEARTBEAT);
	lease_ref_state_clear(&s);
	backend_close(&b);
}
END_TEST

/* ---- cas_delete ---- */

START_TEST(delete_ok)
{
	backend b;
	lease_oid a;

	a = open_holding(&b, _i, "d");
	ck_assert_int_eq(lease_cas_delete(b.st, "d", &a), 0);
	assert_ref(&b, "d", NULL);
	backend_close(&b);
}
END_TEST

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- writes that fail or cannot be settled: one table ---- */

/* The ref "l" before the write: absent, at a (created), or at x (a, then
 * replaced by another writer's x, a child of a). */
enum { ST_ABSENT, ST_A, ST_X };
/* The write: create a, create c (another root), replace a by n (a child of
 * a), replace a by a, delete a. */
enum { W_CREATE_A, W_CREATE_C, W_REPLACE_A_N, W_REPLACE_A_A, W_DELETE_A };
/* An oid of the row (O_NONE: absent, none). */
enum { O_NONE, O_A, O_N, O_X, O_C, O_UNCHECKED };
/* The lying transport's knob set to 1 before the write (memstore.h). */
enum {
	F_NONE,
	F_LIE_CREATE,
	F_LIE_REPLACE,
	F_LIE_DELETE,
	F_STALE_READS,
	F_FAIL_BEFORE,
	F_DROP_AFTER_APPLY,
	F_EXISTS_ON_CREATE
};

typedef struct cas_row {
	const char *what;
	int state, fault, window_ms; /* window_ms: the store's verify window (-1 the default, 0) */
	int write, rc;
	const char *primitive; /* the CAS error the write leaves (protocol.md §3) */
	int noop;
	lease_outcome outcome;
	int expected, observed; /* O_NONE observed: the ref absent */
	int ref_after;          /* the ref read afterwards, O_UNCHECKED: not read */
	const char *error_has;  /* in lease_store_last_error(), or NULL */
	int min_reads;          /* read_ref calls the write made at least (memstore) */
	int no_io;              /* the write made no read or write call (memstore) */
	int retry_ok;           /* the same write, sent again with no fault, succeeds */
} cas_row;

/* Both backends: a write losing to the ref's real state. */
static const cas_row cas_both[] = {
        {"create over another's ref", ST_A, F_NONE, -1, W_CREATE_C, LEASE_ECAS, "cas_create", 1,
         LEASE_OUTCOME_KNOWN, O_C, O_A, O_A, NULL, 0, 0, 0},
        /* No-op regression 1/5 (cas_create): the ref already holds the very oid
         * the create asks for; "already present" must fail (noop), never pass as
         * a win. */
        {"create of the oid already there", ST_A, F_NONE, -1, W_CREATE_A, LEASE_ECAS, "cas_create",
         1, LEASE_OUTCOME_UNKNOWN, O_A, O_A, O_UNCHECKED, NULL, 0, 0, 0},
        {"replace after a lost race", ST_X, F_NONE, -1, W_REPLACE_A_N, LEASE_ECAS, "cas_replace", 0,
         LEASE_OUTCOME_KNOWN, O_N, O_X, O_X, NULL, 0, 0, 0},
        {"replace of an absent ref", ST_ABSENT, F_NONE, -1, W_REPLACE_A_N, LEASE_ECAS,
         "cas_replace", 0, LEASE_OUTCOME_KNOWN, O_N, O_NONE, O_NONE, NULL, 0, 0, 0},
        /* No-op regression 2/5 (cas_replace): old == new is a same-SHA update
         * that a transport would report as success; it fails with noop and no
         * I/O. */
        {"replace by the same oid", ST_A, F_NONE, -1, W_REPLACE_A_A, LEASE_ECAS, "cas_replace", 1,
         LEASE_OUTCOME_KNOWN, O_A, O_NONE, O_UNCHECKED, NULL, 0, 1, 0},
        {"delete of a ref replaced meanwhile", ST_X, F_NONE, -1, W_DELETE_A, LEASE_ECAS,
         "cas_delete", 0, LEASE_OUTCOME_KNOWN, O_A, O_X, O_X, NULL, 0, 0, 0},
        /* Absent is the target state: the outcome is unknown (maybe our own
         * resend). */
        {"delete of an absent ref", ST_ABSENT, F_NONE, -1, W_DELETE_A, LEASE_ECAS, "cas_delete", 0,
         LEASE_OUTCOME_UNKNOWN, O_A, O_NONE, O_UNCHECKED, NULL, 0, 0, 0},
};
#define NCAS_BOTH (sizeof(cas_both) / sizeof(cas_both[0]))

/* The lying transport: successes without acting, stale reads, lost answers. */
static const cas_row cas_lying[] = {
        /* A create reported done without acting (window 0: the store's read is
         * authoritative, decided at once). */
        {"lied create, window 0", ST_ABSENT, F_LIE_CREATE, -1, W_CREATE_A, LEASE_ECAS, "cas_create",
         1, LEASE_OUTCOME_KNOWN, O_A, O_NONE, O_UNCHECKED, NULL, 0, 0, 0},
        /* With a verify window, a success that never shows is unverified
         * (unknown), decided only after polling the whole window. */
        {"lied create, window 150 ms", ST_ABSENT, F_LIE_CREATE, 150, W_CREATE_A, LEASE_EUNVERIFIED,
         "cas_create", 1, LEASE_OUTCOME_UNKNOWN, O_A, O_NONE, O_UNCHECKED, NULL, 3, 0, 0},
        {"lied replace", ST_A, F_LIE_REPLACE, -1, W_REPLACE_A_N, LEASE_ECAS, "cas_replace", 1,
         LEASE_OUTCOME_KNOWN, O_N, O_A, O_UNCHECKED, "no-op", 0, 0, 0},
        /* No-op regression 3/5 (cas_delete): reported deleted, ref still old. */
        {"lied delete", ST_A, F_LIE_DELETE, -1, W_DELETE_A, LEASE_ECAS, "cas_delete", 1,
         LEASE_OUTCOME_KNOWN, O_A, O_A, O_A, NULL, 0, 0, 0},
        /* Without a window a stale re-read is decided at once. */
        {"stale re-read, window 0", ST_A, F_STALE_READS, -1, W_REPLACE_A_N, LEASE_ECAS,
         "cas_replace", 1, LEASE_OUTCOME_KNOWN, O_N, O_A, O_UNCHECKED, NULL, 0, 0, 0},
        /* "Already exists" is never settled by an absent read: poll the window,
         * then unverified (outcome unknown)... */
        {"exists, yet absent", ST_ABSENT, F_EXISTS_ON_CREATE, 100, W_CREATE_A, LEASE_EUNVERIFIED,
         "cas_create", 1, LEASE_OUTCOME_UNKNOWN, O_A, O_NONE, O_UNCHECKED, NULL, 2, 0, 0},
        /* ...with the ref ours (our create re-sent by an HTTP client), a CAS
         * failure. */
        {"exists, and ours", ST_A, F_EXISTS_ON_CREATE, 100, W_CREATE_A, LEASE_ECAS, "cas_create", 1,
         LEASE_OUTCOME_UNKNOWN, O_A, O_A, O_UNCHECKED, NULL, 0, 0, 0},
        /* Transport errors: before applying (known nothing) vs after applying
         * (answer lost): both unknown; the observed state is reported. */
        {"create failing before it applies", ST_ABSENT, F_FAIL_BEFORE, -1, W_CREATE_A, LEASE_ENET,
         "cas_create", 0, LEASE_OUTCOME_UNKNOWN, O_A, O_NONE, O_NONE, "injected", 0, 0, 0},
        {"create applied, answer lost", ST_ABSENT, F_DROP_AFTER_APPLY, -1, W_CREATE_A, LEASE_ENET,
         "cas_create", 0, LEASE_OUTCOME_UNKNOWN, O_A, O_A, O_A, NULL, 0, 0, 0},
        {"replace applied, answer lost", ST_A, F_DROP_AFTER_APPLY, -1, W_REPLACE_A_N, LEASE_ENET,
         "cas_replace", 0, LEASE_OUTCOME_UNKNOWN, O_N, O_N, O_N, NULL, 0, 0, 0},
        {"delete failing before it applies", ST_A, F_FAIL_BEFORE, -1, W_DELETE_A, LEASE_ENET,
         "cas_delete", 0, LEASE_OUTCOME_UNKNOWN, O_A, O_A, O_A, NULL, 0, 0, 1},
};
#define NCAS_LYING (sizeof(cas_lying) / sizeof(cas_lying[0]))

static void set_fault(memstore_faults *f, int fault)
{
	switch (fault) {
	case F_LIE_CREATE: f->lie_create = 1; break;
	case F_LIE_REPLACE: f->lie_replace = 1; break;
	case F_LIE_DELETE: f->lie_delete = 1; break;
	case F_STALE_READS: f->stale_reads = 1; break;
	case F_FAIL_BEFORE: f->fail_before = 1; break;
	case F_DROP_AFTER_APPLY: f->drop_after_apply = 1; break;
	case F_EXISTS_ON_CREATE: f->exists_on_create = 1; break;
	default: break;
	}
}

static int cas_write(backend *b, int write, const lease_oid *oids)
{
	switch (write) {
	case W_CREATE_A: return lease_cas_create(b->st, "l", &oids[O_A]);
	case W_CREATE_C: return lease_cas_create(b->st, "l", &oids[O_C]);
	case W_REPLACE_A_N: return lease_cas_replace(b->st, "l", &oids[O_A], &oids[O_N]);
	case W_REPLACE_A_A: return lease_cas_replace(b->st, "l", &oids[O_A], &oids[O_A]);
	default: return lease_cas_delete(b->st, "l", &oids[O_A]);
	}
}

/* One row on backend @p which: the state, the fault, the write; then its
 * code, its CAS error (assert_cas), the ref and what the row adds. */
static void cas_row_run(const cas_row *row, int which)
{
	backend b;
	lease_oid oids[O_UNCHECKED];
	int64_t t0;
	int rc;

	backend_open_ns(&b, which, row->window_ms, NULL);
	memset(oids, 0, sizeof(oids));
	oids[O_A] = commit_for(&b, "l", NULL);
	oids[O_N] = commit_for(&b, "l", &oids[O_A]);
	oids[O_X] = commit_for(&b, "l", &oids[O_A]);
	oids[O_C] = commit_for(&b, "l", NULL);
	if (row->state != ST_ABSENT)
		ck_assert_int_eq(lease_cas_create(b.st, "l", &oids[O_A]), 0);
	if (row->state == ST_X) /* someone else */
		ck_assert_int_eq(lease_cas_replace(b.st, "l", &oids[O_A], &oids[O_X]), 0);
	if (b.mem) {
		set_fault(memstore_faults_get(b.mem), row->fault);
		memstore_counts_reset(b.mem);
	}
	t0 = now_ms();
	rc = cas_write(&b, row->write, oids);
	ck_assert_msg(rc == row->rc, "%s: %d, want %d", row->what, rc, row->rc);
	if (row->rc == LEASE_EUNVERIFIED) /* decided only after polling the whole window */
		ck_assert_int_ge(now_ms() - t0, row->window_ms);
	assert_cas(&b, row->primitive, row->noop, row->outcome, &oids[row->expected],
	           row->observed == O_NONE ? NULL : &oids[row->observed]);
	ck_assert_str_eq(lease_store_last_cas_error(b.st)->ref, "refs/leases/l");
	if (row->error_has)
		ck_assert_ptr_nonnull(strstr(lease_store_last_error(b.st), row->error_has));
	if (b.mem) {
		const memstore_counts *c = memstore_counts_get(b.mem);
		ck_assert_int_ge(c->read_ref, row->min_reads);
		if (row->no_io)
			ck_assert_int_eq(c->replace_ref + c->read_ref + c->read_commit, 0);
	}
	if (row->ref_after != O_UNCHECKED)
		assert_ref(&b, "l", row->ref_after == O_NONE ? NULL : &oids[row->ref_after]);
	if (row->retry_ok)
		ck_assert_int_eq(cas_write(&b, row->write, oids), 0);
	backend_close(&b);
}

/* Row _i / 2 of cas_both on backend _i % 2 (local, then the memstore). */
START_TEST(cas_fails_both)
{
	cas_row_run(&cas_both[_i / 2], _i % 2);
}
END_TEST

START_TEST(cas_fails_lying)
{
	cas_row_run(&cas_lying[_i], B_MEM);
}
END_TEST

/* ---- fetch_ref ---- */

START_TEST(fetch_absent)
{
	backend b;
	lease_ref_state s;

	backend_open(&b, _i);
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "nothing"), 0);
	ck_assert_int_eq(s.present, 0);
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "bad/name"), LEASE_EINVALID);
	backend_close(&b);
}
END_TEST

START_TEST(fetch_name_mismatch_and_garbage)
{
	backend b;
	lease_ref_state s;
	char msg[1024];
	lease_oid a, g;

	backend_open(&b, _i);
	make_msg(msg, sizeof(msg), "a", "acquire", "other");
	ck_assert_int_eq(lease_write_commit(&a, b.st, NULL, msg), 0);
	ck_assert_int_eq(lease_cas_create(b.st, "a", &a), 0);
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "a"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert_int_eq(s.payload_rc, LEASE_EPAYLOAD);
	ck_assert(strstr(s.payload_error, "mismatch") != NULL);
	lease_ref_state_clear(&s);

	ck_assert_int_eq(lease_write_commit(&g, b.st, NULL, "not a lease\n"), 0);
	ck_assert_int_eq(lease_cas_create(b.st, "g", &g), 0);
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "g"), 0);
	ck_assert_int_eq(s.payload_rc, LEASE_EPAYLOAD);
	ck_assert(s.payload_error[0] != '\0');
	ck_assert_int_eq(s.op, LEASE_OP_UNKNOWN);
	ck_assert_str_eq(s.commit.message, "not a lease\n");
	lease_ref_state_clear(&s);
	backend_close(&b);
}
END_TEST

START_TEST(fetch_not_a_commit)
{
	backend b;
	lease_ref_state s;
	lease_oid blob;

	backend_open(&b, _i);
	if (b.which == B_LOCAL) {
		char out[128];
		ck_assert_int_eq(
		        testrepo_git(out, sizeof(out), b.dir, "hash-object -w --stdin </dev/null"),
		        0);
		out[LEASE_OID_HEXSZ] = '\0';
		ck_assert_int_eq(lease_oid_fromhex(&blob, out), 0);
	} else {
		ck_assert_int_eq(memstore_put_blob(b.mem, &blob, ""), 0);
	}
	read_unreadable(&b, "blob", &blob, &s);
	ck_assert_int_eq(s.commit.is_commit, 0);
	lease_ref_state_clear(&s);
	backend_close(&b);
}
END_TEST

/* ---- fetch_namespace ---- */

START_TEST(namespace_sorted_filtered)
{
	backend b;
	lease_namespace ns;
	lease_oid c, a, b1, b2, other;

	c = open_holding(&b, _i, "c");
	a = created(&b, "a");
	b2 = replaced(&b, "b", &b1);
	other = commit_for(&b, "z", NULL);
	set_raw_ref(&b, "refs/leases-x/a", &other);   /* look-alike namespace */
	set_raw_ref(&b, "refs/leasesx", &other);      /* look-alike prefix */
	set_raw_ref(&b, "refs/leases/dir/y", &other); /* nested: invalid name */
	set_raw_ref(&b, "refs/leases/-x", &other);    /* invalid first byte */
	set_raw_ref(&b, "refs/heads/main", &other);

	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 3);
	ck_assert_str_eq(ns.leases[0].name, "a");
	ck_assert_str_eq(ns.leases[1].name, "b");
	ck_assert_str_eq(ns.leases[2].name, "c");
	ck_assert(lease_oid_equal(&ns.leases[0].oid, &a));
	ck_assert(lease_oid_equal(&ns.leases[1].oid, &b2));
	ck_assert(lease_oid_equal(&ns.leases[2].oid, &c));
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 0);
	ck_assert_int_eq(ns.leases[1].has_parent_commit, 1);
	ck_assert(lease_oid_equal(&ns.leases[1].parent_commit.oid, &b1));
	ck_assert_int_eq(ns.leases[1].payload_rc, 0);
	ck_assert_int_eq(ns.leases[1].op, LEASE_OP_HEARTBEAT);
	ck_assert_uint_eq(ns.invalid_count, 2);
	ck_assert_str_eq(ns.invalid[0].refname, "refs/leases/-x");
	ck_assert_str_eq(ns.invalid[1].refname, "refs/leases/dir/y");
	ck_assert(lease_oid_equal(&ns.invalid[0].oid, &other));
	lease_namespace_clear(&ns);
	backend_close(&b);
}
END_TEST

START_TEST(namespace_other_ns)
{
	backend b;
	lease_namespace ns;
	lease_oid a;

	backend_open_ns(&b, _i, -1, "deploys");
	a = created(&b, "slot");
	set_raw_ref(&b, "refs/leases/x", &a);
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_str_eq(ns.leases[0].name, "slot");
	lease_namespace_clear(&ns);
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	lease_namespace_clear(&ns);
	if (b.which == B_MEM)
		ck_assert(memstore_get_ref(b.mem, "refs/deploys/slot", NULL));
	backend_close(&b);
}
END_TEST

START_TEST(namespace_empty)
{
	backend b;
	lease_namespace ns;

	backend_open(&b, _i);
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 0);
	lease_namespace_clear(&ns);
	backend_close(&b);
}
END_TEST

/* ---- the lying transport ---- */

/* No-op regression 4/5 (fetch_ref): the commit returned is not the oid the
 * ref holds: an inconsistent read, never a payload. */
START_TEST(noop_fetch_wrong_object)
{
	backend b;
	lease_ref_state s;
	lease_oid a;
	const lease_cas_error *e;

	a = open_holding(&b, B_MEM, "w");
	memstore_faults_get(b.mem)->wrong_commit = 1;
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "w"), LEASE_EUNVERIFIED);
	ck_assert_int_eq(s.present, 0);
	e = lease_store_last_cas_error(b.st);
	ck_assert_str_eq(e->primitive, "fetch_ref");
	ck_assert_str_eq(e->ref, "refs/leases/w");
	ck_assert(lease_oid_equal(&e->expected, &a));
	ck_assert_int_eq(e->observed_present, 1);
	ck_assert(!lease_oid_equal(&e->observed, &a));
	ck_assert(strstr(lease_store_last_error(b.st), "inconsistent") != NULL);
	/* Next read is honest. */
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "w"), 0);
	ck_assert_int_eq(s.payload_rc, 0);
	lease_ref_state_clear(&s);
	backend_close(&b);
}
END_TEST

/* fetch_ref of a ref whose object is missing (issue 14): on authoritative
 * reads (window 0) a readable state, an unreadable tip — present, flagged
 * missing, payload LEASE_EPAYLOAD naming the oid — so that break --force can
 * replace it; with lagging reads still an incomplete read (temporary). */
START_TEST(fetch_missing_object)
{
	backend b;
	lease_ref_state s;
	lease_oid ghost;

	backend_open(&b, B_MEM);
	ck_assert_int_eq(lease_oid_fromhex(&ghost, "1111111111111111111111111111111111111111"), 0);
	read_unreadable(&b, "ghost", &ghost, &s);
	ck_assert_int_eq(s.commit.missing, 1);
	ck_assert(strstr(s.payload_error, "1111111111111111111111111111111111111111 is missing") !=
	          NULL);
	lease_ref_state_clear(&s);
	b.st->t->verify_window_ms = 10000;
	ck_assert_int_eq(lease_fetch_ref(&s, b.st, "ghost"), LEASE_EUNVERIFIED);
	ck_assert(strstr(lease_store_last_error(b.st), "incomplete") != NULL);
	backend_close(&b);
}
END_TEST

/* No-op regression 5/5 (fetch_namespace): a listing with duplicates is an
 * inconsistent listing. */
START_TEST(noop_namespace_duplicates)
{
	backend b;
	lease_namespace ns;
	const lease_cas_error *e;

	open_holding(&b, B_MEM, "a");
	created(&b, "b");
	memstore_faults_get(b.mem)->duplicates = 1;
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), LEASE_EUNVERIFIED);
	ck_assert_uint_eq(ns.count, 0);
	e = lease_store_last_cas_error(b.st);
	ck_assert_str_eq(e->primitive, "fetch_namespace");
	ck_assert_str_eq(e->ref, "refs/leases/a");
	ck_assert(strstr(lease_store_last_error(b.st), "inconsistent listing") != NULL);
	backend_close(&b);
}
END_TEST

START_TEST(namespace_lookalikes_filtered)
{
	backend b;
	lease_namespace ns;

	open_holding(&b, B_MEM, "a");
	memstore_faults_get(b.mem)->lookalikes = 1;
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_str_eq(ns.leases[0].name, "a");
	ck_assert_uint_eq(ns.invalid_count, 1);
	ck_assert_str_eq(ns.invalid[0].refname, "refs/leases/a/b");
	lease_namespace_clear(&ns);
	backend_close(&b);
}
END_TEST

/* Listing says A, the prefetched commit is already B: the entry is re-read
 * and reported consistently at B. */
START_TEST(namespace_changed_between_list_and_read)
{
	backend b;
	lease_namespace ns;
	lease_oid a, n;

	n = open_replaced(&b, B_MEM, "a", &a);
	memstore_faults_get(b.mem)->stale_list = 1;
	memstore_faults_get(b.mem)->prefetch = 1;
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert(lease_oid_equal(&ns.leases[0].oid, &n));
	ck_assert(lease_oid_equal(&ns.leases[0].commit.oid, &n));
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 1);
	ck_assert(lease_oid_equal(&ns.leases[0].parent_commit.oid, &a));
	lease_namespace_clear(&ns);
	/* Prefetched and consistent: no read_commit at all. */
	memstore_counts_reset(b.mem);
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_int_eq(memstore_counts_get(b.mem)->read_commit, 0);
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 1);
	lease_namespace_clear(&ns);
	backend_close(&b);
}
END_TEST

/* A lying object store: re-reads are bounded, then inconsistent listing;
 * one lie is recovered by re-reading the ref. */
START_TEST(namespace_wrong_object_bounded)
{
	backend b;
	lease_namespace ns;
	lease_oid a;

	a = open_holding(&b, B_MEM, "a");
	memstore_faults_get(b.mem)->wrong_commit = 1;
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert(lease_oid_equal(&ns.leases[0].commit.oid, &a));
	lease_namespace_clear(&ns);
	memstore_faults_get(b.mem)->wrong_commit = 100;
	ck_assert_int_eq(lease_fetch_namespace(&ns, b.st), LEASE_EUNVERIFIED);
	ck_assert_str_eq(lease_store_last_cas_error(b.st)->primitive, "fetch_namespace");
	memstore_faults_get(b.mem)->wrong_commit = 0;
	backend_close(&b);
}
END_TEST

/* Replication lag: the re-read shows the old oid twice; within the window
 * the primitive polls and then sees the write. */
START_TEST(stale_read_polled_within_window)
{
	backend b;
	lease_oid a, n;

	backend_open_ns(&b, B_MEM, 2000, NULL);
	a = created(&b, "s");
	n = commit_for(&b, "s", &a);
	memstore_faults_get(b.mem)->stale_reads = 2;
	memstore_counts_reset(b.mem);
	ck_assert_int_eq(lease_cas_replace(b.st, "s", &a, &n), 0);
	ck_assert_int_eq(memstore_counts_get(b.mem)->read_ref, 3);
	/* Delete under lag. */
	memstore_faults_get(b.mem)->stale_reads = 1;
	ck_assert_int_eq(lease_cas_delete(b.st, "s", &n), 0);
	backend_close(&b);
}
END_TEST

/* ---- the door's reads (issue 17): checked commit read, bounded walk ---- */

typedef struct walk_log {
	lease_oid seen[16];
	int n, unreadable, stop_at;
} walk_log;

static int log_visit(const lease_oid *oid, const lease_commit *c, void *payload)
{
	walk_log *w = payload;

	if (!c) {
		w->unreadable++;
		return 0;
	}
	w->seen[w->n++] = *oid;
	return w->n == w->stop_at ? 7 : 0;
}

START_TEST(door_walk_bounded_and_checked)
{
	backend b;
	lease_oid chain[5];
	lease_commit c;
	walk_log w;
	int i;

	backend_open(&b, _i);
	chain[0] = commit_for(&b, "w", NULL);
	for (i = 1; i < 5; i++)
		chain[i] = commit_for(&b, "w", &chain[i - 1]);
	/* newest first, to the root */
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease__walk_chain(b.st, &chain[4], NULL, 64, log_visit, &w), 0);
	ck_assert_int_eq(w.n, 5);
	for (i = 0; i < 5; i++)
		ck_assert(lease_oid_equal(&w.seen[i], &chain[4 - i]));
	/* the bound, and a visitor's stop value */
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease__walk_chain(b.st, &chain[4], NULL, 2, log_visit, &w), 0);
	ck_assert_int_eq(w.n, 2);
	memset(&w, 0, sizeof(w));
	w.stop_at = 3;
	ck_assert_int_eq(lease__walk_chain(b.st, &chain[4], NULL, 64, log_visit, &w), 7);
	ck_assert(lease_oid_equal(&w.seen[2], &chain[2]));
	/* a checked read gives back the object asked for */
	ck_assert_int_eq(lease__read_commit(&c, b.st, &chain[3]), 0);
	ck_assert(lease_oid_equal(&c.oid, &chain[3]));
	ck_assert(lease_oid_equal(&c.parent, &chain[2]));
	lease_commit_clear(&c);
	backend_close(&b);
}
END_TEST

/* A transport answering with another object than the one asked for: the
 * checked read says so, and the walk stops there (the commit unreadable). */
START_TEST(door_wrong_object_refused)
{
	backend b;
	lease_oid a, bb;
	lease_commit c;
	walk_log w;

	backend_open(&b, B_MEM);
	a = commit_for(&b, "w", NULL);
	bb = commit_for(&b, "w", &a);
	memstore_faults_get(b.mem)->wrong_commit = 1;
	ck_assert_int_eq(lease__read_commit(&c, b.st, &bb), LEASE_EUNVERIFIED);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(b.st), "another oid"));
	memstore_faults_get(b.mem)->wrong_commit = 1;
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease__walk_chain(b.st, &bb, NULL, 64, log_visit, &w), 0);
	ck_assert_int_eq(w.n, 0);
	ck_assert_int_eq(w.unreadable, 1);
	backend_close(&b);
}
END_TEST

/* The lenient namespace read (reconcile's slow path, door.h): a ref whose
 * object is missing (with a verify window, so the strict read gives up) is
 * kept as unreadable with its oid; readable leases come with their parent;
 * invalid names are listed apart. */
START_TEST(door_lenient_namespace)
{
	backend b;
	lease_namespace ns;
	lease_oid a1, ghost;

	backend_open(&b, B_MEM);
	(void)replaced(&b, "a", &a1);
	ck_assert_int_eq(lease_oid_fromhex(&ghost, "1111111111111111111111111111111111111111"), 0);
	set_raw_ref(&b, "refs/leases/ghost", &ghost);
	set_raw_ref(&b, "refs/leases/-x", &a1);
	b.st->t->verify_window_ms = 50;
	ck_assert_int_lt(lease_fetch_namespace(&ns, b.st), 0);
	ck_assert_int_eq(lease__fetch_namespace_lenient(&ns, b.st), 0);
	ck_assert_uint_eq(ns.count, 2);
	ck_assert_str_eq(ns.leases[0].name, "a");
	ck_assert_int_eq(ns.leases[0].payload_rc, 0);
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 1);
	ck_assert(lease_oid_equal(&ns.leases[0].parent_commit.oid, &a1));
	ck_assert_str_eq(ns.leases[1].name, "ghost");
	ck_assert_int_eq(ns.leases[1].payload_rc, LEASE_EPAYLOAD);
	ck_assert(lease_oid_equal(&ns.leases[1].oid, &ghost));
	ck_assert_ptr_nonnull(strstr(ns.leases[1].payload_error, "unreadable"));
	ck_assert_uint_eq(ns.invalid_count, 1);
	ck_assert_str_eq(ns.invalid[0].refname, "refs/leases/-x");
	lease_namespace_clear(&ns);
	backend_close(&b);
}
END_TEST

Suite *primitives_suite(void)
{
	Suite *s = suite_create("primitives");

	suitefix_add(s, "both_backends", 20, NULL, LOOP(create_absent_ok, 0, 2),
	             LOOP(create_invalid_before_io, 0, 2), LOOP(replace_ok, 0, 2),
	             LOOP(delete_ok, 0, 2), LOOP(fetch_absent, 0, 2),
	             LOOP(fetch_name_mismatch_and_garbage, 0, 2), LOOP(fetch_not_a_commit, 0, 2),
	             LOOP(namespace_sorted_filtered, 0, 2), LOOP(namespace_other_ns, 0, 2),
	             LOOP(namespace_empty, 0, 2), LOOP(door_walk_bounded_and_checked, 0, 2),
	             LOOP(cas_fails_both, 0, (int)(2 * NCAS_BOTH)), NULL);
	suitefix_add(s, "lying_transport", 20, NULL, LOOP(cas_fails_lying, 0, (int)NCAS_LYING),
	             ONE(noop_fetch_wrong_object), ONE(fetch_missing_object),
	             ONE(noop_namespace_duplicates), ONE(namespace_lookalikes_filtered),
	             ONE(namespace_changed_between_list_and_read),
	             ONE(namespace_wrong_object_bounded), ONE(stale_read_polled_within_window),
	             ONE(door_wrong_object_refused), ONE(door_lenient_namespace), NULL);
	return s;
}
