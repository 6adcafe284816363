/* Sets of leases in the library (issue 27, protocol.md "Sets"), over the
 * in-memory store with a cas_many the test supplies: a set is taken, and
 * released, in one write with one token and each member its own chain; a
 * held member stops the whole set with nothing written; a store without
 * cas_many (or a version 2 transport) refuses a set with LEASE_ECONFIG and
 * writes nothing, never separate writes; and the post-state validation of
 * the set write catches a transport that applies only part of a set. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reflease/runtime.h"
#include "reflease/sys/transport.h"
#include "support/memstore.h"
#include "support/storefix.h"
#include "support/suitefix.h"

static memstore *mem;
static int partial; /* the test cas_many applies the first update only */
static int many_calls;
static int takeover; /* after applying, another writer builds on the last member at once */
static int fail_reads_after_write; /* after applying, the library's own reads fail */
static int own_reads_fail;         /* read_ref fails LEASE_ENET (read_refs' reads do not) */
static int (*mem_read_ref)(lease_transport *, const char *, int *, lease_oid *, int *,
                           lease_commit *);

/* An atomic cas_many over the memstore: the test is single-threaded, so
 * checking every compare before any write is atomic. */
static int mem_cas_many(lease_transport *t, const lease_ref_update *u, size_t n)
{
	size_t i;
	lease_oid cur;

	(void)t;
	many_calls++;
	for (i = 0; i < n; i++) {
		int present = memstore_get_ref(mem, u[i].refname, &cur);
		if (lease_oid_is_zero(&u[i].old_oid)
		            ? present
		            : !present || !lease_oid_equal(&cur, &u[i].old_oid))
			return LEASE_ECAS;
	}
	for (i = 0; i < (partial ? 1 : n); i++)
		if (memstore_set_ref(mem, u[i].refname, &u[i].new_oid) < 0)
			return LEASE_ENOMEM;
	own_reads_fail = fail_reads_after_write;
	if (takeover) {
		/* the next writer, before the set's re-read: a commit on top of
		 * the set's commit (its message copied: a readable payload) */
		lease_commit c;
		lease_oid next;

		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(t->read_commit(t, &c, &u[n - 1].new_oid), 0);
		ck_assert_int_eq(
		        t->write_commit(t, &next, &u[n - 1].new_oid, c.message, c.time + 1), 0);
		lease_commit_clear(&c);
		ck_assert_int_eq(memstore_set_ref(mem, u[n - 1].refname, &next), 0);
	}
	return 0;
}

/* A store over the memstore; @p with_many installs the test's cas_many,
 * @p version is the vtable version the transport claims. */
static lease_store *open_mem(int with_many, unsigned int version)
{
	lease_transport *t = memstore_new(&mem);
	lease_store *st;

	ck_assert_ptr_nonnull(t);
	t->version = version;
	if (with_many)
		t->cas_many = mem_cas_many;
	st = storefix_transport(t, NULL);
	partial = 0;
	takeover = 0;
	many_calls = 0;
	return st;
}

/* A batched read over the memstore (read_refs, transport version 4) that
 * can be told to lie: leave a member unanswered, answer a member with its
 * state before its last write (a stale read), or answer a member with
 * another commit than its target. Each read it makes is counted, so a test
 * can tell its reads from the library's own per-member reads. */
static int rr_calls, rr_inner; /* read_refs calls; read_ref calls made inside them */
static int rr_skip;            /* this member is never answered (-1: none) */
static int rr_stale;           /* this member is answered stale ... (-1: none) */
static int rr_stale_from;      /* ... from this read_refs call on (1 = the first) */
static int rr_stale_until;     /* ... up to this one (0 = every later call) */
static int rr_wrong;           /* this member's commit is answered with another oid */

static int mem_read_refs(lease_transport *t, lease_ref_read *r, size_t n)
{
	size_t i;
	int rc;

	rr_calls++;
	for (i = 0; i < n; i++) {
		if ((int)i == rr_skip)
			continue;
		if ((int)i == rr_stale && rr_calls >= rr_stale_from &&
		    (!rr_stale_until || rr_calls <= rr_stale_until))
			memstore_faults_get(mem)->stale_reads = 1;
		rr_inner++;
		rc = mem_read_ref(t, r[i].refname, &r[i].present, &r[i].oid, &r[i].has_commit,
		                  &r[i].commit);
		if (rc < 0)
			return rc;
		if ((int)i == rr_wrong && r[i].has_commit)
			r[i].commit.oid.id[0] ^= 0x5a;
		r[i].answered = 1;
	}
	return 0;
}

/* The library's own read_ref, failing on demand. */
static int own_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                        int *has_commit, lease_commit *commit_out)
{
	if (own_reads_fail)
		return LEASE_ENET;
	return mem_read_ref(t, refname, present, oid, has_commit, commit_out);
}

/* A store over the memstore with the lying batched read (and cas_many). */
static lease_store *open_batched(unsigned int version)
{
	lease_transport *t = memstore_new(&mem);
	lease_store *st;

	ck_assert_ptr_nonnull(t);
	t->version = version;
	t->cas_many = mem_cas_many;
	t->read_refs = mem_read_refs;
	mem_read_ref = t->read_ref;
	t->read_ref = own_read_ref;
	st = storefix_transport(t, NULL);
	partial = takeover = many_calls = 0;
	fail_reads_after_write = own_reads_fail = 0;
	rr_calls = rr_inner = 0;
	rr_skip = rr_stale = rr_wrong = -1;
	rr_stale_from = 1;
	rr_stale_until = 0;
	return st;
}

/* Reads the library made itself, one ref at a time (outside read_refs). */
static int own_reads(void)
{
	return memstore_counts_get(mem)->read_ref - rr_inner;
}

static lease_op_options opts(const char *owner)
{
	return storefix_op(owner, "h1", NULL, 60);
}

static const char *const ab[] = {"a", "b"};

/* Lease @p name in @p st reads as @p status (lease_status). */
static void status_is(lease_store *st, const char *name, lease_status_id status)
{
	lease_result one;

	ck_assert_int_eq(lease_status(&one, st, name), 0);
	ck_assert_int_eq(one.status, status);
}

START_TEST(set_taken_and_released_as_one)
{
	lease_store *st = open_mem(1, LEASE_TRANSPORT_VERSION);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice");
	char tok[LEASE_TOKEN_HEXSZ + 1];

	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), 0);
	ck_assert_int_eq(r->status, LEASE_STATUS_ACQUIRED);
	ck_assert_int_eq(many_calls, 1);
	ck_assert_str_eq(r->members[0].payload.name, "a");
	ck_assert_str_eq(r->members[1].payload.name, "b");
	/* one token for the set, each member its own payload */
	ck_assert_str_eq(r->members[0].payload.lease_token, r->members[1].payload.lease_token);
	ck_assert(!lease_oid_equal(&r->members[0].oid, &r->members[1].oid));
	memcpy(tok, r->members[0].payload.lease_token, sizeof(tok));
	status_is(st, "b", LEASE_STATUS_LIVE);
	o.lease_token = tok;
	ck_assert_int_eq(lease_release_set(r, st, ab, 2, &o), 0);
	ck_assert_int_eq(r->status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(many_calls, 2);
	status_is(st, "a", LEASE_STATUS_RELEASED);
	free(r);
	lease_store_free(st);
}
END_TEST

/* B65 (issue 40; protocol.md "Sets", "A set cut by a crash"): a set write
 * that reached a but not b (b put back where the write moved it from, as a
 * crash between local renames leaves it) holds nothing: status says
 * expired and another owner takes a (_i 0). When the set write reaches b
 * while that takeover writes a (_i 1: b moved right after a's replace
 * landed, as the live set writer's last rename would), the takeover re-reads
 * b and is not a success: held, not acquired. */
static int (*mem_replace_ref)(lease_transport *, const char *, const lease_oid *,
                              const lease_oid *);
static int reach_armed;
static lease_oid reach_oid; /* b's set commit */

static int reach_replace(lease_transport *t, const char *refname, const lease_oid *old_oid,
                         const lease_oid *new_oid)
{
	int rc = mem_replace_ref(t, refname, old_oid, new_oid);

	if (rc == 0 && reach_armed && strcmp(refname, "refs/leases/a") == 0) {
		reach_armed = 0;
		ck_assert_int_eq(memstore_set_ref(mem, "refs/leases/b", &reach_oid), 0);
	}
	return rc;
}

START_TEST(cut_set_member_taken_unless_reached)
{
	lease_transport *t = memstore_new(&mem);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice"), ob = opts("bob");
	lease_result one;
	lease_store *st;
	int rc;

	ck_assert_ptr_nonnull(t);
	t->cas_many = mem_cas_many;
	mem_replace_ref = t->replace_ref;
	t->replace_ref = reach_replace;
	st = storefix_transport(t, NULL);
	partial = takeover = many_calls = 0;
	reach_armed = 0;
	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/b", &reach_oid), 1);
	/* a whole set is held */
	ck_assert_int_eq(lease_acquire(&one, st, "a", &ob), LEASE_EHELD);
	/* cut: b back where the set write moved it from (it created b) */
	ck_assert_int_eq(memstore_set_ref(mem, "refs/leases/b", NULL), 0);
	ck_assert_int_eq(lease_status(&one, st, "a"), 0);
	ck_assert_int_eq(one.status, LEASE_STATUS_EXPIRED);
	ck_assert_ptr_nonnull(strstr(one.message, "did not reach 'b'"));
	reach_armed = _i;
	rc = lease_acquire(&one, st, "a", &ob);
	if (_i == 0) {
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(one.status, LEASE_STATUS_ACQUIRED);
		ck_assert_str_eq(one.payload.owner, "bob");
	} else {
		ck_assert_int_eq(reach_armed, 0); /* the set write reached b meanwhile */
		ck_assert_int_eq(rc, LEASE_EHELD);
		ck_assert_int_eq(one.status, LEASE_STATUS_HELD);
		ck_assert_int_eq(one.holds_token, 0);
		ck_assert_ptr_nonnull(strstr(one.message, "reached 'b'"));
	}
	free(r);
	lease_store_free(st);
}
END_TEST

/* B65's race (issue 40): a set writer holds every member's ref lock from
 * before its first rename to each member's own, so a mate still at its old
 * commit whose lock a live writer holds is a write in progress, not a cut:
 * another owner finds a held and writes nothing (_i 0). The lock's writer
 * gone (a crash's leftover, _i 1): a is cut and taken. The writer renames b
 * between the read of b and the look at its lock (_i 2: the lock gone, b at
 * the set write when read again): held, nothing written. */
static int lock_case;

static int case_ref_locks(lease_transport *t, lease_ref_lock_list *out, const char *prefix)
{
	(void)t;
	ck_assert_str_eq(prefix, "refs/leases/");
	if (lock_case == 2) {
		ck_assert_int_eq(memstore_set_ref(mem, "refs/leases/b", &reach_oid), 0);
		return 0; /* renamed: no lock file left */
	}
	out->items = calloc(1, sizeof(*out->items));
	ck_assert_ptr_nonnull(out->items);
	out->items[0].refname = strdup("refs/leases/b");
	out->items[0].live = lock_case == 0;
	out->count = 1;
	return 0;
}

START_TEST(cut_read_waits_for_a_live_set_write)
{
	lease_transport *t = memstore_new(&mem);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice"), ob = opts("bob");
	lease_result one;
	lease_oid a_before, a_after;
	lease_store *st;
	int rc;

	ck_assert_ptr_nonnull(t);
	t->cas_many = mem_cas_many;
	t->list_ref_locks = case_ref_locks;
	st = storefix_transport(t, NULL);
	partial = takeover = many_calls = 0;
	lock_case = _i;
	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/b", &reach_oid), 1);
	ck_assert_int_eq(memstore_set_ref(mem, "refs/leases/b", NULL), 0); /* b not renamed yet */
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/a", &a_before), 1);
	rc = lease_acquire(&one, st, "a", &ob);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/a", &a_after), 1);
	if (_i == 1) {
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(one.payload.owner, "bob");
	} else {
		ck_assert_int_eq(rc, LEASE_EHELD);
		ck_assert_int_eq(one.status, LEASE_STATUS_HELD);
		ck_assert(lease_oid_equal(&a_before, &a_after)); /* nothing written */
	}
	free(r);
	lease_store_free(st);
}
END_TEST

START_TEST(held_member_stops_the_set)
{
	lease_store *st = open_mem(1, LEASE_TRANSPORT_VERSION);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice"), ob = opts("bob");
	lease_result one;
	lease_oid oid;

	ck_assert_int_eq(lease_acquire(&one, st, "b", &ob), 0);
	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), LEASE_EHELD);
	ck_assert_int_eq(r->status, LEASE_STATUS_HELD);
	ck_assert_int_eq(r->blocker, 1);
	ck_assert_int_eq(many_calls, 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/a", &oid), 0);
	ck_assert_int_eq(r->members[0].status, LEASE_STATUS_ABSENT);
	free(r);
	lease_store_free(st);
}
END_TEST

/* _i: 0 a version 3 transport without cas_many, 1 a version 2 transport
 * (whose struct ends before cas_many: never read) */
START_TEST(store_without_set_write_refuses)
{
	lease_store *st = open_mem(_i == 1, _i == 1 ? 2 : LEASE_TRANSPORT_VERSION);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice");
	lease_oid oid;

	ck_assert_int_eq(lease_store_can_write_set(st), 0);
	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(r->message, "cannot write several leases"));
	ck_assert_int_eq(many_calls, 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/a", &oid), 0);
	ck_assert_int_eq(memstore_get_ref(mem, "refs/leases/b", &oid), 0);
	free(r);
	lease_store_free(st);
}
END_TEST

START_TEST(partial_set_write_is_caught)
{
	lease_store *st = open_mem(1, LEASE_TRANSPORT_VERSION);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice");

	lease_result one;

	partial = 1;
	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), LEASE_EUNVERIFIED);
	ck_assert_msg(strstr(r->message, "1 of its 2 members") != NULL, "message: %s", r->message);
	/* issue 38: the member that shows the write is released before the
	 * error returns (the caller never got the set: nothing stays held) */
	ck_assert_msg(strstr(r->message, "released them") != NULL, "message: %s", r->message);
	ck_assert_str_eq(lease_store_last_error(st), r->message);
	ck_assert_int_eq(lease_status(&one, st, ab[0]), 0);
	ck_assert_int_eq(one.status, LEASE_STATUS_RELEASED);
	free(r);
	lease_store_free(st);
}
END_TEST

/* A set write that landed and was built on at once (a set release that a
 * waiter's acquire followed before the releaser's re-read; seen on libgit2
 * 1.9 in t_sets.sh) landed: the set is released, not "not atomic". */
START_TEST(set_write_built_on_at_once_landed)
{
	lease_store *st = open_mem(1, LEASE_TRANSPORT_VERSION);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice");
	char tok[LEASE_TOKEN_HEXSZ + 1];

	ck_assert_int_eq(lease_acquire_set(r, st, ab, 2, &o), 0);
	memcpy(tok, r->members[0].payload.lease_token, sizeof(tok));
	o.lease_token = tok;
	takeover = 1;
	ck_assert_msg(lease_release_set(r, st, ab, 2, &o) == 0, "%s", r->message);
	ck_assert_int_eq(r->status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(r->members[1].status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(many_calls, 2);
	free(r);
	lease_store_free(st);
}
END_TEST

START_TEST(bad_sets_refused_before_io)
{
	lease_store *st = open_mem(1, LEASE_TRANSPORT_VERSION);
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = opts("alice");
	static const char *const twice[] = {"a", "a"};

	ck_assert_int_eq(lease_acquire_set(r, st, twice, 2, &o), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(r->message, "named twice"));
	ck_assert_int_eq(lease_acquire_set(r, st, ab, 0, &o), LEASE_EINVALID);
	ck_assert_int_eq(lease_acquire_set(r, st, ab, LEASE_SET_MAX + 1, &o), LEASE_EINVALID);
	ck_assert_int_eq(many_calls, 0);
	free(r);
	lease_store_free(st);
}
END_TEST

/* A batched-read case: its store, its set result, and alice's options,
 * which present the set's token tok once take_ab() has taken {a, b}. */
typedef struct bcase {
	lease_store *st;
	lease_set_result *r;
	lease_op_options o;
	char tok[LEASE_TOKEN_HEXSZ + 1];
} bcase;

/* Open @p b on a batched store of transport @p version. */
static void bcase_open(bcase *b, unsigned int version)
{
	b->st = open_batched(version);
	b->r = calloc(1, sizeof(*b->r));
	b->o = opts("alice");
}

/* A fresh batched store for @p b (open_batched() resets the fakes). */
static void bcase_reopen(bcase *b)
{
	lease_store_free(b->st);
	b->st = open_batched(LEASE_TRANSPORT_VERSION);
}

static void bcase_free(bcase *b)
{
	free(b->r);
	lease_store_free(b->st);
}

/* Take the set {a, b} as @p b's owner; its options then present the token. */
static void take_ab(bcase *b)
{
	ck_assert_msg(lease_acquire_set(b->r, b->st, ab, 2, &b->o) == 0, "%s", b->r->message);
	memcpy(b->tok, b->r->members[0].payload.lease_token, LEASE_TOKEN_HEXSZ + 1);
	b->o.lease_token = b->tok;
}

/* With read_refs a set operation reads its members in one call, and
 * verifies its write in one more: nothing read member by member. */
START_TEST(batched_read_one_call_per_read)
{
	bcase b;

	bcase_open(&b, LEASE_TRANSPORT_VERSION);
	take_ab(&b);
	ck_assert_int_eq(rr_calls, 2); /* the read, the post-state re-read */
	ck_assert_int_eq(own_reads(), 0);
	ck_assert_int_eq(lease_release_set(b.r, b.st, ab, 2, &b.o), 0);
	ck_assert_int_eq(b.r->status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(rr_calls, 4);
	ck_assert_int_eq(own_reads(), 0);
	bcase_free(&b);
}
END_TEST

/* A version 3 transport ends before read_refs: never called. */
START_TEST(batched_read_not_in_version_3)
{
	bcase b;

	bcase_open(&b, 3);
	ck_assert_int_eq(lease_acquire_set(b.r, b.st, ab, 2, &b.o), 0);
	ck_assert_int_eq(rr_calls, 0);
	ck_assert_int_eq(own_reads(), 4); /* each member read, then re-read */
	bcase_free(&b);
}
END_TEST

/* A partial answer: a member the batched read leaves unanswered is read on
 * its own (never taken as absent), in the read and in the verification;
 * with a write applied to one member only, the member read alone shows it
 * and the set is unverified. */
START_TEST(batched_read_partial_answer_read_alone)
{
	bcase b;

	bcase_open(&b, LEASE_TRANSPORT_VERSION);
	rr_skip = 1;
	take_ab(&b);
	ck_assert_int_eq(own_reads(), 2); /* b: read, re-read */
	/* b is present now: an unanswered (zeroed) entry taken as "absent"
	 * would stop the release as not ours */
	ck_assert_int_eq(lease_release_set(b.r, b.st, ab, 2, &b.o), 0);
	ck_assert_int_eq(b.r->members[1].status, LEASE_STATUS_RELEASED);
	bcase_reopen(&b);
	b.o.lease_token = NULL;
	rr_skip = 1;
	partial = 1; /* cas_many applies a only */
	ck_assert_int_eq(lease_acquire_set(b.r, b.st, ab, 2, &b.o), LEASE_EUNVERIFIED);
	ck_assert_msg(strstr(b.r->message, "1 of its 2 members") != NULL, "message: %s",
	              b.r->message);
	bcase_free(&b);
}
END_TEST

/* A partial answer whose missing member then cannot be read: the set's
 * outcome is unknown, reported as the read's error, and the answers the
 * batched read gave are freed (LeakSanitizer under SANITIZE=1). */
START_TEST(batched_read_partial_answer_then_read_error)
{
	bcase b;

	bcase_open(&b, LEASE_TRANSPORT_VERSION);
	take_ab(&b);
	rr_skip = 0; /* a: unanswered, before b's answer with its commit */
	fail_reads_after_write = 1;
	ck_assert_int_eq(lease_release_set(b.r, b.st, ab, 2, &b.o), LEASE_ENET);
	ck_assert_int_eq(many_calls, 2);
	ck_assert_int_eq(b.r->status, LEASE_STATUS_ERROR);
	bcase_free(&b);
}
END_TEST

/* A stale answer: the batched re-read of a set write answers a member as it
 * was before the write. Once: the write is settled by reading again and
 * landed; every time: never reported taken — the set is unverified. */
START_TEST(batched_read_stale_answer_caught)
{
	bcase b;

	bcase_open(&b, LEASE_TRANSPORT_VERSION);
	rr_stale = 1;
	rr_stale_from = rr_stale_until = 2; /* the post-state re-read only */
	ck_assert_msg(lease_acquire_set(b.r, b.st, ab, 2, &b.o) == 0, "%s", b.r->message);
	ck_assert_int_eq(b.r->status, LEASE_STATUS_ACQUIRED);
	ck_assert_int_eq(many_calls, 1); /* settled, not written again */
	ck_assert_int_ge(rr_calls, 3);
	bcase_reopen(&b);
	rr_stale = 1;
	rr_stale_from = 2; /* from the re-read on, for ever */
	ck_assert_int_eq(lease_acquire_set(b.r, b.st, ab, 2, &b.o), LEASE_EUNVERIFIED);
	ck_assert_int_eq(b.r->status, LEASE_STATUS_ERROR);
	ck_assert_int_eq(many_calls, 1);
	/* what the store holds: both written (the lie was only in the reads) */
	status_is(b.st, "b", LEASE_STATUS_LIVE);
	bcase_free(&b);
}
END_TEST

/* A batched answer whose commit is another object than the ref's target is
 * not parsed: the member is read on its own. */
START_TEST(batched_read_wrong_object_read_alone)
{
	bcase b;

	bcase_open(&b, LEASE_TRANSPORT_VERSION);
	take_ab(&b);
	rr_wrong = 0;
	ck_assert_int_eq(lease_release_set(b.r, b.st, ab, 2, &b.o), 0);
	ck_assert_int_eq(b.r->members[0].status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(own_reads(), 1); /* a, read alone once */
	bcase_free(&b);
}
END_TEST

Suite *sets_suite(void)
{
	return suitefix_suite(
	        "sets", "sets", 0, NULL, ONE(set_taken_and_released_as_one),
	        ONE(held_member_stops_the_set), LOOP(cut_set_member_taken_unless_reached, 0, 2),
	        LOOP(cut_read_waits_for_a_live_set_write, 0, 3),
	        LOOP(store_without_set_write_refuses, 0, 2), ONE(partial_set_write_is_caught),
	        ONE(set_write_built_on_at_once_landed), ONE(bad_sets_refused_before_io),
	        ONE(batched_read_one_call_per_read), ONE(batched_read_not_in_version_3),
	        ONE(batched_read_partial_answer_read_alone),
	        ONE(batched_read_partial_answer_then_read_error),
	        ONE(batched_read_stale_answer_caught), ONE(batched_read_wrong_object_read_alone),
	        NULL);
}
