/* The door's (primitives.c's) fault and refusal paths (protocol.md §3, §7):
 * what each read and write answers when the transport fails a call, lies
 * about an object, or another writer moves a ref between two of the door's
 * calls, and the inputs the door refuses before any I/O. Over the in-memory
 * transport with a thin fault layer: each vtable call below forwards to the
 * memstore unless this test's knob for that call says fail (with the code
 * given), lie (answer another object) or act as another writer first. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/door.h"
#include "reflease.h"
#include "support/memstore.h"
#include "support/suitefix.h"

static lease_transport *T;
static memstore *M;
static lease_store *st;

/* the memstore's own calls */
static int (*o_read_ref)(lease_transport *, const char *, int *, lease_oid *, int *,
                         lease_commit *);
static int (*o_read_commit)(lease_transport *, lease_commit *, const lease_oid *);
static int (*o_list_refs)(lease_transport *, lease_ref_list *, const char *);
static const char *(*o_last_error)(lease_transport *);

/* the knobs: call numbers count from knobs_reset(), 1 = the first call */
static int read_ref_calls, read_commit_calls;
static int fail_read_ref_at, fail_read_ref_code;       /* this read_ref fails with code */
static int fail_read_commit_at, fail_read_commit_code; /* this read_commit fails */
static int wrong_commit_at;                            /* this read_commit answers another oid */
static int move_at_read_ref;      /* before this read_ref, another writer moves ... */
static const char *move_ref;      /* ... this ref ... */
static lease_oid move_to;         /* ... here */
static const char *delete_listed; /* another writer deletes this ref right after a listing */
static int fail_list;             /* list_refs fails with this code */
static int rr_fail;               /* read_refs fails with this code */
static int rr_no_commit;          /* read_refs answers targets without their commits */
static char fault_msg[160];       /* the injected failure's detail, for last_error */

static void knobs_reset(void)
{
	read_ref_calls = read_commit_calls = 0;
	fail_read_ref_at = fail_read_commit_at = wrong_commit_at = move_at_read_ref = 0;
	fail_read_ref_code = fail_read_commit_code = LEASE_ENET;
	move_ref = delete_listed = NULL;
	fail_list = rr_fail = rr_no_commit = 0;
	fault_msg[0] = '\0';
}

static int inject(int code, const char *call)
{
	snprintf(fault_msg, sizeof(fault_msg), "injected: %s failed (%s)", call,
	         lease_error_id(code));
	return code;
}

static int f_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                      int *has_commit, lease_commit *c)
{
	fault_msg[0] = '\0';
	read_ref_calls++;
	if (read_ref_calls == move_at_read_ref && move_ref)
		ck_assert_int_eq(memstore_set_ref(M, move_ref, &move_to), 0);
	if (read_ref_calls == fail_read_ref_at) {
		*present = *has_commit = 0;
		return inject(fail_read_ref_code, "read_ref");
	}
	return o_read_ref(t, refname, present, oid, has_commit, c);
}

static int f_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	int rc;

	fault_msg[0] = '\0';
	read_commit_calls++;
	if (read_commit_calls == fail_read_commit_at) {
		memset(out, 0, sizeof(*out));
		return inject(fail_read_commit_code, "read_commit");
	}
	rc = o_read_commit(t, out, oid);
	if (rc == 0 && read_commit_calls == wrong_commit_at)
		out->oid.id[0] ^= 0xff; /* a lying transport: another object */
	return rc;
}

static int f_list_refs(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	int rc;

	fault_msg[0] = '\0';
	if (fail_list) {
		memset(out, 0, sizeof(*out));
		return inject(fail_list, "list_refs");
	}
	rc = o_list_refs(t, out, prefix);
	if (rc == 0 && delete_listed)
		ck_assert_int_eq(memstore_set_ref(M, delete_listed, NULL), 0);
	return rc;
}

/* A batched read (transport version 4) over the memstore's read_ref. */
static int f_read_refs(lease_transport *t, lease_ref_read *r, size_t n)
{
	size_t i;
	int rc;

	if (rr_fail)
		return inject(rr_fail, "read_refs");
	for (i = 0; i < n; i++) {
		if ((rc = o_read_ref(t, r[i].refname, &r[i].present, &r[i].oid, &r[i].has_commit,
		                     &r[i].commit)) < 0)
			return rc;
		if (rr_no_commit) {
			lease_commit_clear(&r[i].commit);
			r[i].has_commit = 0;
		}
		r[i].answered = 1;
	}
	return 0;
}

static const char *f_last_error(lease_transport *t)
{
	return fault_msg[0] ? fault_msg : o_last_error(t);
}

static int f_list_ref_locks(lease_transport *t, lease_ref_lock_list *out, const char *prefix)
{
	(void)t;
	(void)prefix;
	memset(out, 0, sizeof(*out));
	return inject(LEASE_EAUTH, "list_ref_locks");
}

static int f_remove_ref_lock(lease_transport *t, const lease_ref_lock *lk, int64_t min_age_s,
                             int64_t now)
{
	(void)t;
	(void)lk;
	(void)min_age_s;
	(void)now;
	return inject(fail_read_ref_code, "remove_ref_lock");
}

static int f_scan_commits(lease_transport *t, const char *prefix, size_t max_objects,
                          int (*visit)(const char *msg, void *payload), void *payload)
{
	(void)t;
	(void)prefix;
	(void)max_objects;
	(void)visit;
	(void)payload;
	return inject(LEASE_EAUTH, "scan_commits");
}

/* A cas_many that refuses the whole write (a 401: nothing applied). */
static int f_cas_many_refused(lease_transport *t, const lease_ref_update *u, size_t n)
{
	(void)t;
	(void)u;
	(void)n;
	return inject(LEASE_EAUTH, "cas_many");
}

static void open_store(int verify_ms)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	char err[256] = "";

	knobs_reset();
	T = memstore_new(&M);
	ck_assert_ptr_nonnull(T);
	o_read_ref = T->read_ref;
	o_read_commit = T->read_commit;
	o_list_refs = T->list_refs;
	o_last_error = T->last_error;
	T->read_ref = f_read_ref;
	T->read_commit = f_read_commit;
	T->list_refs = f_list_refs;
	T->last_error = f_last_error;
	o.verify_timeout_ms = verify_ms;
	ck_assert_msg(lease_store_open_transport(&st, T, &o, err, sizeof(err)) == 0, "open: %s",
	              err);
}

static void close_store(void)
{
	lease_store_free(st);
	st = NULL;
}

static const char *msg(void)
{
	return lease_store_last_error(st);
}

/* Lease @p name acquired by alice; with @p chain, released and acquired
 * again, so its tip has a parent commit. Its tip's oid. */
static lease_oid lease_made(const char *name, int chain)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_result r;

	o.owner = "alice";
	o.host = "h";
	o.ttl_seconds = 300;
	ck_assert_msg(lease_acquire(&r, st, name, &o) == 0, "acquire: %s", r.message);
	if (chain) {
		o.lease_token = r.payload.lease_token;
		ck_assert_int_eq(lease_release(&r, st, name, &o), 0);
		o.lease_token = NULL;
		ck_assert_int_eq(lease_acquire(&r, st, name, &o), 0);
	}
	return r.oid;
}

static lease_oid ghost_oid(void)
{
	lease_oid g;

	ck_assert_int_eq(lease_oid_fromhex(&g, "1111111111111111111111111111111111111111"), 0);
	return g;
}

/* ---- refusals before any I/O --------------------------------------------- */

/* A ticket ref must be refs/<ns>-queue/<valid name>/<16 lowercase hex>
 * (protocol.md §5 "Fair waiting"); anything else is refused naming the
 * expected form, nothing sent. A NULL ref is refused by every *_ref call. */
START_TEST(ticket_refnames_refused)
{
	static const struct {
		const char *ref, *says;
	} bad[] = {
	        {"refs/leases-queue/a", "invalid ticket ref"},                          /* no id */
	        {"refs/leases-queue/a/0123", "invalid ticket ref"},                     /* short */
	        {"refs/leases-queue/-a/0123456789abcdef", "invalid ref"},               /* name */
	        {"refs/leases-queue/a/0123456789abcdeF", "invalid ticket ref"},         /* case */
	        {"refs/leases-queue/a/0123456789abcdez", "<16 hex>"},                   /* hex */
	        {"refs/other/a", "outside refs/leases/"},                               /* ns */
	        {"refs/leases-archive/a/20261130T070000Z-0123456g", "invalid archive"}, /* hex */
	};
	lease_oid a;
	size_t i;

	open_store(-1);
	a = lease_made("a", 0);
	memstore_counts_reset(M);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(lease_cas_create_ref(st, bad[i].ref, &a), LEASE_EINVALID);
		ck_assert_msg(strstr(msg(), bad[i].says) != NULL, "%s: %s", bad[i].ref, msg());
		ck_assert_int_eq(lease_cas_delete_ref(st, bad[i].ref, &a), LEASE_EINVALID);
		ck_assert_int_eq(lease_wait_refname_change(st, bad[i].ref, 0, NULL, 10),
		                 LEASE_EINVALID);
	}
	ck_assert_int_eq(memstore_counts_get(M)->create_ref, 0);
	ck_assert_int_eq(memstore_counts_get(M)->delete_ref, 0);
	ck_assert_int_eq(memstore_counts_get(M)->read_ref, 0);
	/* no ref at all */
	ck_assert_int_eq(lease_cas_replace_ref(st, NULL, &a, &a), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(msg(), "no ref given"));
	ck_assert_int_eq(lease_cas_delete_ref(st, NULL, &a), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(msg(), "no ref given"));
	ck_assert_int_eq(lease_wait_refname_change(st, NULL, 0, NULL, 10), LEASE_EINVALID);
	/* the well-formed ticket ref is a ref the door writes */
	ck_assert_int_eq(lease_cas_create_ref(st, "refs/leases-queue/a/0123456789abcdef", &a), 0);
	ck_assert(memstore_get_ref(M, "refs/leases-queue/a/0123456789abcdef", NULL));
	/* a wait of no time looks at nothing */
	memstore_counts_reset(M);
	ck_assert_int_eq(
	        lease_wait_refname_change(st, "refs/leases-queue/a/0123456789abcdef", 1, &a, 0), 0);
	ck_assert_int_eq(memstore_counts_get(M)->read_ref, 0);
	close_store();
}
END_TEST

/* A set names 1 to LEASE_SET_MAX distinct valid leases with nonzero new
 * oids different from the old; anything else is refused before any write. */
START_TEST(set_inputs_refused)
{
	const char *ab[] = {"a", "b"}, *aa[] = {"a", "a"}, *bad[] = {"a", "-b"};
	lease_oid news[2], zero[2];
	lease_ref_state out[2];
	size_t failed = 99;

	open_store(-1);
	T->cas_many = memstore_cas_many;
	news[0] = lease_made("x", 0);
	news[1] = lease_made("y", 0);
	memset(zero, 0, sizeof(zero));
	ck_assert_int_eq(lease_cas_set(st, ab, NULL, news, 0), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(msg(), "a set names 1 to 16 leases (0 given)"));
	ck_assert_int_eq(lease_cas_set(st, ab, NULL, news, LEASE_SET_MAX + 1), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_set(st, bad, NULL, news, 2), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_set(st, aa, NULL, news, 2), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(msg(), "lease 'a' named twice in the set"));
	ck_assert_int_eq(lease_cas_set(st, ab, NULL, zero, 2), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(msg(), "invalid oid"));
	ck_assert_int_eq(lease_cas_set(st, ab, news, news, 2), LEASE_EINVALID);
	ck_assert(!memstore_get_ref(M, "refs/leases/a", NULL));
	ck_assert(!memstore_get_ref(M, "refs/leases/b", NULL));
	/* olds NULL: a create of every member, verified */
	ck_assert_int_eq(lease_cas_set(st, ab, NULL, news, 2), 0);
	ck_assert(memstore_get_ref(M, "refs/leases/b", &zero[1]));
	ck_assert(lease_oid_equal(&zero[1], &news[1]));

	/* the batched read refuses the same counts and names */
	ck_assert_int_eq(lease_fetch_refs(out, st, ab, 0, NULL), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(msg(), "(0 given)"));
	ck_assert_int_eq(lease_fetch_refs(out, st, NULL, 2, NULL), LEASE_EINVALID);
	ck_assert_int_eq(lease_fetch_refs(out, st, bad, 2, &failed), LEASE_EINVALID);
	ck_assert_uint_eq(failed, 1);
	ck_assert_int_eq(out[0].present, 0); /* the members read before are cleared */
	close_store();
}
END_TEST

/* ---- transport faults ---------------------------------------------------- */

/* A commit the store does not have: the checked read says not found with
 * the transport's detail (never another object in its place). */
START_TEST(read_commit_not_found)
{
	lease_commit c;
	lease_oid g = ghost_oid();

	open_store(-1);
	ck_assert_int_eq(lease__read_commit(&c, st, &g), LEASE_ENOTFOUND);
	ck_assert_str_eq(msg(), "object missing");
	ck_assert_ptr_null(c.message);
	close_store();
}
END_TEST

/* The ref-lock and scan calls pass the transport's failure up with its
 * detail; a lock already gone is LEASE_ENOTFOUND, no error. */
START_TEST(lock_and_scan_failures)
{
	lease_ref_lock_list locks;
	lease_ref_lock lk;
	lease_ref_state s;

	open_store(-1);
	memset(&lk, 0, sizeof(lk));
	/* a transport without the calls: an empty list, nothing to remove or scan */
	ck_assert_int_eq(lease__list_ref_locks(&locks, st, ""), 0);
	ck_assert_uint_eq(locks.count, 0);
	ck_assert_int_eq(lease__remove_ref_lock(st, &lk, 0), LEASE_ENOTFOUND);
	T->list_ref_locks = f_list_ref_locks;
	T->remove_ref_lock = f_remove_ref_lock;
	T->scan_commits = f_scan_commits;
	ck_assert_int_eq(lease__list_ref_locks(&locks, st, ""), LEASE_EAUTH);
	ck_assert_uint_eq(locks.count, 0);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: list_ref_locks failed"));
	fail_read_ref_code = LEASE_EAUTH;
	ck_assert_int_eq(lease__remove_ref_lock(st, &lk, 0), LEASE_EAUTH);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: remove_ref_lock failed"));
	fail_read_ref_code = LEASE_ENOTFOUND;              /* removed meanwhile by someone else */
	ck_assert_int_eq(lease_fetch_ref(&s, st, "z"), 0); /* a read that fails nothing */
	ck_assert_str_eq(msg(), "");
	ck_assert_int_eq(lease__remove_ref_lock(st, &lk, 0), LEASE_ENOTFOUND);
	ck_assert_str_eq(msg(), ""); /* no error: the lock is gone either way */
	ck_assert_int_eq(lease__scan_commits(st, "a: ", 10, NULL, NULL), LEASE_EAUTH);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: scan_commits failed"));
	close_store();
}
END_TEST

/* A ref at a missing object is reported missing (break --force replaces
 * it) only when a second look finds the ref still there: when another
 * writer moved it meanwhile, the read is incomplete (LEASE_EUNVERIFIED),
 * never a missing tip that would let a live lease be replaced. */
START_TEST(missing_object_moved_meanwhile)
{
	lease_ref_state s;
	lease_oid g = ghost_oid(), live;

	open_store(-1);
	live = lease_made("live", 0);
	ck_assert_int_eq(memstore_set_ref(M, "refs/leases/m", &g), 0);
	/* the ref stays: missing, confirmed */
	ck_assert_int_eq(lease_fetch_ref(&s, st, "m"), 0);
	ck_assert(s.present && s.commit.missing);
	ck_assert_int_eq(s.payload_rc, LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(s.payload_error, "missing from the store"));
	lease_ref_state_clear(&s);
	/* moved between the read and the confirming look */
	knobs_reset();
	move_at_read_ref = 2;
	move_ref = "refs/leases/m";
	move_to = live;
	ck_assert_int_eq(lease_fetch_ref(&s, st, "m"), LEASE_EUNVERIFIED);
	ck_assert_int_eq(s.present, 0);
	ck_assert_ptr_nonnull(strstr(msg(), "incomplete read"));
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	close_store();
}
END_TEST

/* A failed look at a ref's target is the read's error, not "elsewhere". */
START_TEST(still_at_read_fails)
{
	lease_oid a;

	open_store(-1);
	a = lease_made("a", 0);
	ck_assert_int_eq(lease_ref_still_at(st, "a", &a), 1);
	fail_read_ref_at = read_ref_calls + 1;
	ck_assert_int_eq(lease_ref_still_at(st, "a", &a), LEASE_ENET);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: read_ref failed"));
	ck_assert_int_eq(lease_ref_still_at(st, "-a", &a), LEASE_EINVALID);
	close_store();
}
END_TEST

/* The batched read of a set (read_refs): its failure fails the whole read,
 * reported on the first member; a member answered without its commit is
 * completed by a commit read, whose failure names that member. */
START_TEST(batched_read_faults)
{
	const char *ab[] = {"a", "b"};
	lease_ref_state out[2];
	size_t failed = 99;
	lease_oid a, b;

	open_store(-1);
	T->read_refs = f_read_refs;
	a = lease_made("a", 0);
	b = lease_made("b", 1);
	rr_fail = LEASE_ENET;
	ck_assert_int_eq(lease_fetch_refs(out, st, ab, 2, &failed), LEASE_ENET);
	ck_assert_uint_eq(failed, 0);
	ck_assert_str_eq(lease_store_last_cas_error(st)->primitive, "fetch_refs");
	ck_assert_str_eq(lease_store_last_cas_error(st)->ref, "refs/leases/a");
	ck_assert_ptr_nonnull(strstr(msg(), "injected: read_refs failed"));
	/* targets answered alone: each commit read, checked */
	knobs_reset();
	rr_no_commit = 1;
	ck_assert_int_eq(lease_fetch_refs(out, st, ab, 2, &failed), 0);
	ck_assert(lease_oid_equal(&out[0].commit.oid, &a));
	ck_assert(lease_oid_equal(&out[1].commit.oid, &b));
	ck_assert_int_eq(out[1].payload_rc, 0);
	lease_ref_state_clear(&out[0]);
	lease_ref_state_clear(&out[1]);
	/* b's commit read fails: b named, a's state cleared */
	knobs_reset();
	rr_no_commit = 1;
	fail_read_commit_at = 2;
	failed = 99;
	ck_assert_int_eq(lease_fetch_refs(out, st, ab, 2, &failed), LEASE_ENET);
	ck_assert_uint_eq(failed, 1);
	ck_assert_str_eq(out[1].name, "b");
	ck_assert_int_eq(out[1].present, 0);
	ck_assert_int_eq(out[0].present, 0);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: read_commit failed"));
	close_store();
}
END_TEST

/* The strict namespace read (lease_fetch_namespace): a failed commit read
 * ends it with that error; an entry answered with another object whose
 * re-read fails ends it too; a parent commit answered with another object
 * is an inconsistent read (LEASE_EUNVERIFIED), a parent read that fails
 * ends it with its error; an entry deleted between the listing and its
 * read is left out. */
START_TEST(strict_namespace_faults)
{
	lease_namespace ns;
	lease_oid a, b;
	const lease_cas_error *e;

	open_store(-1);
	a = lease_made("a", 1);
	b = lease_made("b", 0);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 2);
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 1);
	lease_namespace_clear(&ns);

	knobs_reset();
	fail_read_commit_at = 1; /* a's tip */
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_ENET);
	ck_assert_uint_eq(ns.count, 0);
	e = lease_store_last_cas_error(st);
	ck_assert_str_eq(e->primitive, "fetch_namespace");
	ck_assert_int_eq(e->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: read_commit failed"));

	knobs_reset();
	wrong_commit_at = 1;  /* a's tip: another object ... */
	fail_read_ref_at = 1; /* ... and the ref's re-read fails */
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_ENET);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: read_ref failed"));

	knobs_reset();
	wrong_commit_at = 2; /* a's parent */
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_EUNVERIFIED);
	ck_assert_ptr_nonnull(strstr(msg(), "inconsistent read of the parent commit"));
	e = lease_store_last_cas_error(st);
	ck_assert_int_eq(e->observed_present, 1);

	knobs_reset();
	fail_read_commit_at = 2; /* a's parent */
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_ENET);

	knobs_reset();
	wrong_commit_at = 1;             /* a's tip read lies ... */
	delete_listed = "refs/leases/a"; /* ... a is deleted after the listing */
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_str_eq(ns.leases[0].name, "b");
	ck_assert(lease_oid_equal(&ns.leases[0].oid, &b));
	lease_namespace_clear(&ns);
	(void)a;
	close_store();
}
END_TEST

/* What lease_namespace_each's visitor saw. */
typedef struct seen {
	char names[8][LEASE_NAME_MAX + 1];
	int payload_rc[8], has_parent[8];
	lease_oid oid[8];
	char err[8][sizeof(((lease_ref_state *)0)->payload_error)];
	int n, invalid, stop_on_invalid;
} seen;

static int see(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total, void *p)
{
	seen *w = p;

	(void)total;
	if (iv) {
		w->invalid++;
		return w->stop_on_invalid;
	}
	ck_assert_int_lt(w->n, 8);
	snprintf(w->names[w->n], sizeof(w->names[w->n]), "%s", s->name);
	w->payload_rc[w->n] = s->payload_rc;
	w->has_parent[w->n] = s->has_parent_commit;
	w->oid[w->n] = s->oid;
	snprintf(w->err[w->n], sizeof(w->err[w->n]), "%s", s->payload_error);
	w->n++;
	return 0;
}

/* The bounded namespace walk never gives up on one entry (protocol.md §7):
 * an entry the listing read cannot read consistently is read on its own
 * (a parent answered with another object: read again, whole); one that
 * still cannot be read is visited as unreadable with its listed oid; one
 * deleted meanwhile is left out; a network failure ends the walk; and the
 * visitor's own value stops it, at an invalid name too. */
START_TEST(lenient_walk_faults)
{
	seen w;
	lease_oid a, b;

	open_store(-1);
	a = lease_made("a", 1);
	b = lease_made("b", 0);
	ck_assert_int_eq(memstore_set_ref(M, "refs/leases/-x", &b), 0);

	knobs_reset();
	wrong_commit_at = 2; /* a's parent lies once: read again on its own, whole */
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, see, &w), 0);
	ck_assert_int_eq(w.n, 2);
	ck_assert_int_eq(w.invalid, 1);
	ck_assert_str_eq(w.names[0], "a");
	ck_assert_int_eq(w.payload_rc[0], 0);
	ck_assert_int_eq(w.has_parent[0], 1);

	knobs_reset();
	fail_read_commit_at = 3; /* b (root): its tip's read refused, then ... */
	fail_read_commit_code = LEASE_EAUTH;
	fail_read_ref_at = 1; /* ... its own read refused too */
	fail_read_ref_code = LEASE_EAUTH;
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, see, &w), 0);
	ck_assert_int_eq(w.n, 2);
	ck_assert_str_eq(w.names[1], "b");
	ck_assert_int_eq(w.payload_rc[1], LEASE_EPAYLOAD);
	ck_assert(lease_oid_equal(&w.oid[1], &b));
	ck_assert_msg(strstr(w.err[1], "unreadable: ") == w.err[1], "%s", w.err[1]);

	knobs_reset();
	fail_read_commit_at = 3; /* b read on its own: a root, no parent */
	fail_read_commit_code = LEASE_EAUTH;
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, see, &w), 0);
	ck_assert_int_eq(w.n, 2);
	ck_assert_int_eq(w.payload_rc[1], 0);
	ck_assert_int_eq(w.has_parent[1], 0);

	knobs_reset();
	fail_read_commit_at = 1; /* a refused, then its own read fails on the network */
	fail_read_commit_code = LEASE_EAUTH;
	fail_read_ref_at = 1;
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, see, &w), LEASE_ENET);
	ck_assert_int_eq(w.n, 0);

	knobs_reset();
	fail_read_commit_at = 1; /* a refused, and deleted since the listing */
	fail_read_commit_code = LEASE_EAUTH;
	delete_listed = "refs/leases/a";
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(lease_namespace_each(st, see, &w), 0);
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.names[0], "b");

	/* the visitor stops the walk at the invalid name (sorted first) */
	ck_assert_int_eq(memstore_set_ref(M, "refs/leases/a", &a), 0);
	knobs_reset();
	memset(&w, 0, sizeof(w));
	w.stop_on_invalid = 9;
	ck_assert_int_eq(lease_namespace_each(st, see, &w), 9);
	ck_assert_int_eq(w.invalid, 1);
	ck_assert_int_eq(w.n, 0);
	close_store();
}
END_TEST

/* The lenient namespace read (reconcile's slow path): a failed listing is
 * the read's error; a network failure on one lease ends it with nothing
 * returned; a lease deleted since the listing is left out; a root lease
 * comes without a parent. */
START_TEST(lenient_namespace_faults)
{
	lease_namespace ns;

	open_store(-1);
	lease_made("a", 1);
	lease_made("b", 0);

	knobs_reset();
	fail_list = LEASE_ENET;
	ck_assert_int_eq(lease__fetch_namespace_lenient(&ns, st), LEASE_ENET);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: list_refs failed"));
	ck_assert_uint_eq(ns.count, 0);

	knobs_reset();
	fail_read_ref_at = 2; /* b's read */
	ck_assert_int_eq(lease__fetch_namespace_lenient(&ns, st), LEASE_ENET);
	ck_assert_uint_eq(ns.count, 0);
	ck_assert_ptr_null(ns.leases);

	knobs_reset();
	delete_listed = "refs/leases/a";
	ck_assert_int_eq(lease__fetch_namespace_lenient(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_str_eq(ns.leases[0].name, "b");
	ck_assert_int_eq(ns.leases[0].payload_rc, 0);
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 0);
	lease_namespace_clear(&ns);
	close_store();
}
END_TEST

/* A set write's transport faults (protocol.md "Sets", §3): a store without
 * cas_many refuses with nothing written; a refused write (401) is known
 * not applied when every member reads its old state, unknown when the
 * re-read fails; a transport that reports success without acting is a
 * known no-op on an authoritative store (window 0). */
START_TEST(set_write_faults)
{
	const char *ab[] = {"a", "b"};
	lease_oid olds[2], news[2], at;
	const lease_cas_error *e;

	open_store(-1);
	olds[0] = lease_made("a", 0);
	olds[1] = lease_made("b", 0);
	news[0] = lease_made("c", 0);
	news[1] = lease_made("d", 0);

	ck_assert_int_eq(lease_cas_set(st, ab, olds, news, 2), LEASE_ECONFIG);
	e = lease_store_last_cas_error(st);
	ck_assert_int_eq(e->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_int_eq(e->noop, 1);
	ck_assert_ptr_nonnull(strstr(msg(), "no cas_many"));

	T->cas_many = f_cas_many_refused;
	ck_assert_int_eq(lease_cas_set(st, ab, olds, news, 2), LEASE_EAUTH);
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_ptr_nonnull(strstr(msg(), "injected: cas_many failed"));
	T->read_refs = f_read_refs;
	rr_fail = LEASE_ENET;
	ck_assert_int_eq(lease_cas_set(st, ab, olds, news, 2), LEASE_EAUTH);
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_UNKNOWN);

	knobs_reset();
	T->cas_many = memstore_cas_many;
	memstore_faults_get(M)->lie_replace = 1;
	ck_assert_int_eq(lease_cas_set(st, ab, olds, news, 2), LEASE_ECAS);
	e = lease_store_last_cas_error(st);
	ck_assert_int_eq(e->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_int_eq(e->noop, 1);
	ck_assert_ptr_nonnull(strstr(msg(), "no member changed"));
	ck_assert(memstore_get_ref(M, "refs/leases/a", &at));
	ck_assert(lease_oid_equal(&at, &olds[0]));
	/* and for real */
	ck_assert_int_eq(lease_cas_set(st, ab, olds, news, 2), 0);
	close_store();
}
END_TEST

Suite *door_faults_suite(void)
{
	return suitefix_suite("door_faults", "door_faults", 0, NULL, ONE(ticket_refnames_refused),
	                      ONE(set_inputs_refused), ONE(read_commit_not_found),
	                      ONE(lock_and_scan_failures), ONE(missing_object_moved_meanwhile),
	                      ONE(still_at_read_fails), ONE(batched_read_faults),
	                      ONE(strict_namespace_faults), ONE(lenient_walk_faults),
	                      ONE(lenient_namespace_faults), ONE(set_write_faults), NULL);
}
