#define _DEFAULT_SOURCE
/* The lease runtime (protocol.md §4–§6): every cell of the §5 operation table
 * on the in-memory and the local store, settling with injected faults, the
 * heartbeat floor, TTL validation, break, and the field cases F01 F03 F04 F05
 * F06 F08 F13 F14 F15 F21 F22 F23 F29 F30. Time is an injected clock; the
 * concurrency test forks 16 real processes (tests/tools/contend.c). */
#include <check.h>
#include <errno.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lease/rotation.h"
#include "reflease.h"
#include "reflease/version.h"
#include "store/handle.h"
#include "support/memstore.h"
#include "support/rtfx.h"
#include "support/suitefix.h"
#include "support/testrepo.h"

/* ---- every cell of the §5 operation table -------------------------------- */

typedef enum top { T_ACQ, T_HB, T_TR, T_RQ, T_RL, T_BR } top;
typedef enum rset { R_ABSENT, R_RELEASED, R_SAME, R_MOVED, R_OTHER } rset;
typedef enum chg {
	C_NONE,     /* nothing written */
	C_MINT,     /* new token, transitions + 1 (0 on a first create), writer's identity */
	C_PRESERVE, /* token, transitions, acquired_at, identity kept; expires_at = now + ttl */
	C_ROTATE,   /* new token, transitions + 1, acquired_at = now, writer's identity */
	C_KEEP      /* released: token and transitions kept, releaser's identity, ttl 0 */
} chg;

static const char *const top_name[] = {"acquire",   "heartbeat", "transition",
                                       "reacquire", "release",   "break"};
static const char *const rset_name[] = {"fresh-absent", "fresh-released", "same", "moved", "other"};

typedef struct cell {
	top op;
	rset rel;
	int expired;
	const char *st_t; /* presenting the current token T */
	int rc_t;
	chg ch_t;
	const char *st_n; /* presenting a token that is not current */
	int rc_n;
	chg ch_n;
} cell;

#define NH "not_holder", LEASE_ENOTHOLDER, C_NONE
#define EX "expired", LEASE_EEXPIRED, C_NONE
static const cell cells[] = {
        /* op   relation    expired  with T current                  with a stale token */
        {T_ACQ, R_ABSENT, 0, "acquired", 0, C_MINT, "acquired", 0, C_MINT},
        {T_ACQ, R_ABSENT, 1, "acquired", 0, C_MINT, "acquired", 0, C_MINT},
        {T_ACQ, R_RELEASED, 0, "acquired", 0, C_MINT, "acquired", 0, C_MINT},
        {T_ACQ, R_RELEASED, 1, "acquired", 0, C_MINT, "acquired", 0, C_MINT},
        {T_ACQ, R_SAME, 0, "already_held", LEASE_EHELD, C_NONE, "already_held", LEASE_EHELD,
         C_NONE},
        {T_ACQ, R_SAME, 1, "acquired", 0, C_ROTATE, "acquired", 0, C_ROTATE},
        {T_ACQ, R_MOVED, 0, "held", LEASE_EHELD, C_NONE, "held", LEASE_EHELD, C_NONE},
        {T_ACQ, R_MOVED, 1, "acquired", 0, C_ROTATE, "acquired", 0, C_ROTATE},
        {T_ACQ, R_OTHER, 0, "held", LEASE_EHELD, C_NONE, "held", LEASE_EHELD, C_NONE},
        {T_ACQ, R_OTHER, 1, "acquired", 0, C_ROTATE, "acquired", 0, C_ROTATE},

        {T_HB, R_ABSENT, 0, NH, NH},
        {T_HB, R_ABSENT, 1, NH, NH},
        {T_HB, R_RELEASED, 0, NH, NH},
        {T_HB, R_RELEASED, 1, NH, NH},
        {T_HB, R_SAME, 0, "renewed", 0, C_PRESERVE, NH},
        {T_HB, R_SAME, 1, EX, NH},
        {T_HB, R_MOVED, 0, "renewed", 0, C_ROTATE, NH},
        {T_HB, R_MOVED, 1, EX, NH},
        {T_HB, R_OTHER, 0, "renewed", 0, C_ROTATE, NH},
        {T_HB, R_OTHER, 1, EX, NH},

        {T_TR, R_ABSENT, 0, NH, NH},
        {T_TR, R_ABSENT, 1, NH, NH},
        {T_TR, R_RELEASED, 0, NH, NH},
        {T_TR, R_RELEASED, 1, NH, NH},
        {T_TR, R_SAME, 0, "transitioned", 0, C_PRESERVE, NH},
        {T_TR, R_SAME, 1, EX, NH},
        {T_TR, R_MOVED, 0, "transitioned", 0, C_ROTATE, NH},
        {T_TR, R_MOVED, 1, EX, NH},
        {T_TR, R_OTHER, 0, "transitioned", 0, C_ROTATE, NH},
        {T_TR, R_OTHER, 1, EX, NH},

        {T_RQ, R_ABSENT, 0, NH, NH},
        {T_RQ, R_ABSENT, 1, NH, NH},
        {T_RQ, R_RELEASED, 0, NH, NH},
        {T_RQ, R_RELEASED, 1, NH, NH},
        {T_RQ, R_SAME, 0, "reacquired", 0, C_PRESERVE, NH},
        {T_RQ, R_SAME, 1, "reacquired", 0, C_PRESERVE, NH},
        {T_RQ, R_MOVED, 0, "reacquired", 0, C_ROTATE, NH},
        {T_RQ, R_MOVED, 1, "reacquired", 0, C_ROTATE, NH},
        {T_RQ, R_OTHER, 0, "reacquired", 0, C_ROTATE, NH},
        {T_RQ, R_OTHER, 1, "reacquired", 0, C_ROTATE, NH},

        {T_RL, R_ABSENT, 0, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_RL, R_ABSENT, 1, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_RL, R_RELEASED, 0, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_RL, R_RELEASED, 1, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_RL, R_SAME, 0, "released", 0, C_KEEP, "not_owner", 0, C_NONE},
        {T_RL, R_SAME, 1, "released", 0, C_KEEP, "not_owner", 0, C_NONE},
        {T_RL, R_MOVED, 0, "released", 0, C_KEEP, "not_owner", 0, C_NONE},
        {T_RL, R_MOVED, 1, "released", 0, C_KEEP, "not_owner", 0, C_NONE},
        {T_RL, R_OTHER, 0, "released", 0, C_KEEP, "not_owner", 0, C_NONE},
        {T_RL, R_OTHER, 1, "released", 0, C_KEEP, "not_owner", 0, C_NONE},

        /* break (no --force): identity and token never matter */
        {T_BR, R_ABSENT, 0, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_BR, R_ABSENT, 1, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_BR, R_RELEASED, 0, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_BR, R_RELEASED, 1, "already_released", 0, C_NONE, "already_released", 0, C_NONE},
        {T_BR, R_SAME, 0, "held", LEASE_EHELD, C_NONE, "held", LEASE_EHELD, C_NONE},
        {T_BR, R_SAME, 1, "broken", 0, C_KEEP, "broken", 0, C_KEEP},
        {T_BR, R_MOVED, 0, "held", LEASE_EHELD, C_NONE, "held", LEASE_EHELD, C_NONE},
        {T_BR, R_MOVED, 1, "broken", 0, C_KEEP, "broken", 0, C_KEEP},
        {T_BR, R_OTHER, 0, "held", LEASE_EHELD, C_NONE, "held", LEASE_EHELD, C_NONE},
        {T_BR, R_OTHER, 1, "broken", 0, C_KEEP, "broken", 0, C_KEEP},
};
#undef NH
#undef EX
#define NCELLS ((int)(sizeof(cells) / sizeof(cells[0])))

static int run_top(top op, lease_result *r, lease_store *st, const char *name, lease_op_options *o)
{
	switch (op) {
	case T_ACQ: return lease_acquire(r, st, name, o);
	case T_HB: return lease_heartbeat(r, st, name, o);
	case T_TR: o->to = LEASE_PHASE_WORKING; return lease_transition(r, st, name, o);
	case T_RQ: return lease_reacquire(r, st, name, o);
	case T_RL: return lease_release(r, st, name, o);
	case T_BR: return lease_break(r, st, name, o);
	}
	return -100;
}

static void run_cell(fx *f, int idx, int with_token)
{
	const cell *c = &cells[idx];
	const char *want_st = with_token ? c->st_t : c->st_n;
	int want_rc = with_token ? c->rc_t : c->rc_n;
	chg want = with_token ? c->ch_t : c->ch_n;
	ident actor = c->rel == R_MOVED ? ALICE2 : c->rel == R_OTHER ? BOB : ALICE;
	char name[64], htok[LEASE_TOKEN_HEXSZ + 1] = "", what[160];
	lease_payload before, after;
	lease_oid boid, aoid;
	lease_op_options o;
	lease_result r;
	int bpres, apres, rc;
	int64_t now;

	snprintf(name, sizeof(name), "cell-%d-%d", idx, with_token);
	snprintf(what, sizeof(what), "%s %s %s, %s token", top_name[c->op], rset_name[c->rel],
	         c->expired ? "expired" : "live", with_token ? "current" : "stale");
	f->clk.t = T0;
	if (c->rel != R_ABSENT)
		must_acquire(f, name, ALICE, 60, htok);
	if (c->rel == R_RELEASED) {
		f->clk.t = T0 + 1;
		must_release(f, name, ALICE, htok);
	}
	now = f->clk.t = T0 + (c->expired ? 61 : 10);
	memset(&before, 0, sizeof(before));
	bpres = cur(f, name, &before, &boid);
	o = opt(actor, with_token ? (c->rel == R_ABSENT ? TOK1 : htok) : STALE, 0);
	rc = run_top(c->op, &r, f->st, name, &o);
	ck_assert_msg(rc == want_rc && strcmp(lease_status_name(r.status), want_st) == 0,
	              "%s: want %s/%d, got %s/%d (%s)", what, want_st, want_rc,
	              lease_status_name(r.status), rc, r.message);
	ck_assert_int_eq(r.code, rc);
	ck_assert_int_eq(r.now, now);
	apres = cur(f, name, &after, &aoid);
	if (want == C_NONE) {
		ck_assert_msg(apres == bpres && (!bpres || lease_oid_equal(&aoid, &boid)),
		              "%s: wrote", what);
		ck_assert_int_eq(r.token_rotated, 0);
		ck_assert_int_eq(r.holds_token, 0);
		return;
	}
	ck_assert_msg(apres && (!bpres || !lease_oid_equal(&aoid, &boid)), "%s: no write", what);
	ck_assert_msg(lease_oid_equal(&r.oid, &aoid), "%s: result oid", what);
	ck_assert_int_eq(r.has_payload, 1);
	switch (want) {
	case C_MINT:
	case C_ROTATE:
		if (bpres)
			ck_assert_str_ne(after.lease_token, before.lease_token);
		ck_assert_int_eq(after.transitions, bpres ? before.transitions + 1 : 0);
		ck_assert_int_eq(after.acquired_at, now);
		ck_assert_str_eq(after.owner, actor.owner);
		ck_assert_str_eq(after.host, actor.host);
		ck_assert_msg(r.token_rotated == 1, "%s: token_rotated", what);
		break;
	case C_PRESERVE:
		ck_assert_str_eq(after.lease_token, before.lease_token);
		ck_assert_int_eq(after.transitions, before.transitions);
		ck_assert_int_eq(after.acquired_at, before.acquired_at);
		ck_assert_str_eq(after.owner, before.owner);
		ck_assert_str_eq(after.host, before.host);
		ck_assert_int_eq(r.token_rotated, 0);
		break;
	default: /* C_KEEP */
		ck_assert_str_eq(after.lease_token, before.lease_token);
		ck_assert_int_eq(after.transitions, before.transitions);
		ck_assert_int_eq(after.phase, LEASE_PHASE_RELEASED);
		ck_assert_int_eq(after.expires_at, now);
		ck_assert_int_eq(after.ttl_seconds, 0);
		ck_assert_str_eq(after.owner, actor.owner);
		ck_assert_str_eq(after.host, actor.host);
		ck_assert_int_eq(r.token_rotated, 0);
		ck_assert_int_eq(r.holds_token, 0);
		return;
	}
	/* a live write: expires_at = now + ttl (§6: stored ttl when preserving, else 300) */
	ck_assert_int_eq(after.ttl_seconds, want == C_PRESERVE ? 60 : LEASE_TTL_DEFAULT);
	ck_assert_int_eq(after.expires_at, now + after.ttl_seconds);
	ck_assert_int_eq(after.phase, c->op == T_TR ? LEASE_PHASE_WORKING : LEASE_PHASE_CLAIMED);
	ck_assert_int_eq(r.holds_token, 1);
	ck_assert_str_eq(r.payload.lease_token, after.lease_token);
	ck_assert_str_eq(after.sdlc_version, SDLC_VERSION);
}

START_TEST(test_cells_mem)
{
	fx f;

	fx_mem(&f);
	run_cell(&f, _i, 1);
	run_cell(&f, _i, 0);
	fx_free(&f);
}
END_TEST

START_TEST(test_cells_local)
{
	fx f;

	fx_local(&f);
	run_cell(&f, _i, 1);
	run_cell(&f, _i, 0);
	fx_free(&f);
}
END_TEST

/* No token at all behaves as a stale one. */
START_TEST(test_no_token_is_not_holder)
{
	fx f;
	lease_op_options o;
	lease_result r;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 60, NULL);
	f.clk.t += 10;
	o = opt(ALICE, NULL, 0);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	ck_assert_int_eq(lease_reacquire(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	o.to = LEASE_PHASE_REVIEW;
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	o.lease_token = "";
	op_is(&f, lease_release, "l", &o, LEASE_STATUS_NOT_OWNER, &r);
	fx_free(&f);
}
END_TEST

/* N-slot leases (protocol.md "Slots", issue 27) through the library: N
 * identities fill the N slots (each its own token, generation 0), the next is
 * held; another count is LEASE_ECONFIG naming both while one is held; an
 * expired slot is taken over (its generation rises); once every slot is
 * released the count may change. */
START_TEST(test_slots_mem)
{
	fx f_slots;
	static const ident ids[] = {{"s1", "h"}, {"s2", "h"}, {"s3", "h"}, {"s4", "h"}};
	char tokens[3][LEASE_TOKEN_HEXSZ + 1], names[3][LEASE_NAME_MAX + 1];
	lease_op_options o;
	lease_result r;
	int i, j;

	fx_mem(&f_slots);
	for (i = 0; i < 3; i++) {
		o = opt(ids[i], NULL, 60);
		ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", 3, &o), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
		ck_assert_int_eq(r.payload.transitions, 0);
		ck_assert_msg(strncmp(r.name, "db@", 3) == 0 && strstr(r.name, "of3"), "%s",
		              r.name);
		memcpy(tokens[i], r.payload.lease_token, sizeof(tokens[i]));
		memcpy(names[i], r.name, sizeof(names[i]));
		for (j = 0; j < i; j++)
			ck_assert_str_ne(names[j], names[i]);
	}
	o = opt(ids[3], NULL, 60);
	ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", 3, &o), LEASE_EHELD);
	ck_assert_ptr_nonnull(strstr(r.message, "all 3 slots of db are held"));
	ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", 2, &o), LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(r.message, "db has 3 slots"));
	ck_assert_ptr_nonnull(strstr(r.message, "not 2"));
	ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", 0, &o), LEASE_EINVALID);
	ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", LEASE_SLOTS_MAX + 1, &o),
	                 LEASE_EINVALID);
	/* each slot is its own lease: a heartbeat by its name and token */
	o = opt(ids[0], tokens[0], 60);
	ck_assert_int_eq(lease_heartbeat(&r, f_slots.st, names[0], &o), 0);
	/* all expired: the fourth takes one over, its generation rises */
	f_slots.clk.t += 3600;
	o = opt(ids[3], NULL, 60);
	ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", 3, &o), 0);
	ck_assert_int_eq(r.payload.transitions, 1);
	for (i = 0; i < 3; i++) {
		lease_result rr;

		o = opt(ids[i], tokens[i], 0);
		lease_release(&rr, f_slots.st, names[i], &o);
	}
	o = opt(ids[3], r.payload.lease_token, 0);
	ck_assert_int_eq(lease_release(&r, f_slots.st, r.name, &o), 0);
	/* every slot released: another count is taken */
	o = opt(ids[0], NULL, 60);
	ck_assert_int_eq(lease_slots_acquire(&r, f_slots.st, "db", 2, &o), 0);
	ck_assert_msg(strstr(r.name, "of2") != NULL, "%s", r.name);
	fx_free(&f_slots);
}
END_TEST

/* lease_slots_status() (`status NAME` of a slotted name, issue 27): the slot
 * refs of NAME in name order with their status, the count not released and
 * how many of it are live; another name's slots (dbx@…) are not NAME's;
 * expired is not released; all released is 0; two counts not released are
 * -1. The slots are taken by their own names (deterministic). */
START_TEST(test_slots_status_mem)
{
	fx f;
	static const ident ids[] = {{"s1", "h"}, {"s2", "h"}};
	lease_slots_view v;
	lease_op_options o;
	lease_result r1, r2, r;

	fx_mem(&f);
	ck_assert_int_eq(lease_slots_status(&v, f.st, "db"), 0);
	ck_assert_uint_eq(v.count, 0);
	ck_assert_int_eq(v.slots, 0);
	o = opt(ids[0], NULL, 60);
	ck_assert_int_eq(lease_acquire(&r2, f.st, "db@2of3", &o), 0);
	o = opt(ids[1], NULL, 60);
	ck_assert_int_eq(lease_acquire(&r1, f.st, "db@1of3", &o), 0);
	ck_assert_int_eq(lease_acquire(&r, f.st, "dbx@1of2", &o), 0);
	ck_assert_int_eq(lease_slots_status(&v, f.st, "db"), 0);
	ck_assert_uint_eq(v.count, 2);
	ck_assert_int_eq(v.slots, 3);
	ck_assert_uint_eq(v.live, 2);
	ck_assert_str_eq(v.items[0].name, "db@1of3");
	ck_assert_str_eq(v.items[1].name, "db@2of3");
	ck_assert_int_eq(v.items[0].status, LEASE_STATUS_LIVE);
	ck_assert_str_eq(v.items[0].payload.owner, "s2");
	lease_slots_view_clear(&v);
	/* expired: not released, not live */
	f.clk.t += 3600;
	ck_assert_int_eq(lease_slots_status(&v, f.st, "db"), 0);
	ck_assert_int_eq(v.slots, 3);
	ck_assert_uint_eq(v.live, 0);
	ck_assert_int_eq(v.items[1].status, LEASE_STATUS_EXPIRED);
	lease_slots_view_clear(&v);
	/* every slot released: 0 */
	o = opt(ids[0], r2.payload.lease_token, 0);
	ck_assert_int_eq(lease_release(&r, f.st, "db@2of3", &o), 0);
	o = opt(ids[1], r1.payload.lease_token, 0);
	ck_assert_int_eq(lease_release(&r, f.st, "db@1of3", &o), 0);
	ck_assert_int_eq(lease_slots_status(&v, f.st, "db"), 0);
	ck_assert_uint_eq(v.count, 2);
	ck_assert_int_eq(v.slots, 0);
	ck_assert_uint_eq(v.live, 0);
	lease_slots_view_clear(&v);
	ck_assert_int_eq(lease_slots_status(&v, f.st, "dbx"), 0);
	ck_assert_uint_eq(v.count, 1);
	ck_assert_int_eq(v.slots, 2);
	lease_slots_view_clear(&v);
	/* a slot of 2 beside a slot of 3, both held: -1 */
	o = opt(ids[0], NULL, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "db@3of3", &o), 0);
	ck_assert_int_eq(lease_acquire(&r, f.st, "db@1of2", &o), 0);
	ck_assert_int_eq(lease_slots_status(&v, f.st, "db"), 0);
	ck_assert_uint_eq(v.count, 4);
	ck_assert_int_eq(v.slots, -1);
	ck_assert_uint_eq(v.live, 0);
	ck_assert_str_eq(v.items[0].name, "db@1of2");
	lease_slots_view_clear(&v);
	ck_assert_int_eq(lease_slots_status(&v, f.st, "db@1of2"), LEASE_EINVALID);
	fx_free(&f);
}
END_TEST

/* ---- the rotation matrix itself ------------------------------------------ */

START_TEST(test_rotation_matrix)
{
	lease_payload p;

	memset(&p, 0, sizeof(p));
	snprintf(p.owner, sizeof(p.owner), "alice");
	snprintf(p.host, sizeof(p.host), "h1");
	p.phase = LEASE_PHASE_WORKING;
	ck_assert_int_eq(lease__relation_of(NULL, "alice", "h1"), LEASE_REL_FRESH);
	ck_assert_int_eq(lease__relation_of(&p, "alice", "h1"), LEASE_REL_SAME);
	ck_assert_int_eq(lease__relation_of(&p, "alice", "h2"), LEASE_REL_MOVED);
	ck_assert_int_eq(lease__relation_of(&p, "bob", "h1"), LEASE_REL_OTHER);
	p.phase = LEASE_PHASE_RELEASED;
	ck_assert_int_eq(lease__relation_of(&p, "alice", "h1"), LEASE_REL_FRESH);

	ck_assert_int_eq(lease__token_rule(LEASE_REL_FRESH, 0), LEASE_TOKEN_MINT);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_FRESH, 1), LEASE_TOKEN_MINT);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_SAME, 1), LEASE_TOKEN_PRESERVE);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_SAME, 0), LEASE_TOKEN_ROTATE);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_MOVED, 1), LEASE_TOKEN_ROTATE);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_MOVED, 0), LEASE_TOKEN_ROTATE);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_OTHER, 1), LEASE_TOKEN_ROTATE);
	ck_assert_int_eq(lease__token_rule(LEASE_REL_OTHER, 0), LEASE_TOKEN_ROTATE);
	ck_assert_str_eq(lease__relation_name(LEASE_REL_MOVED), "moved");
	ck_assert_str_eq(lease__relation_name(LEASE_REL_FRESH), "fresh");
	ck_assert_str_eq(lease__relation_name(LEASE_REL_SAME), "same");
	ck_assert_str_eq(lease__relation_name(LEASE_REL_OTHER), "other");
	ck_assert_str_eq(lease__token_change_name(LEASE_TOKEN_MINT), "mint");
	ck_assert_str_eq(lease__token_change_name(LEASE_TOKEN_PRESERVE), "preserve");
	ck_assert_str_eq(lease__token_change_name(LEASE_TOKEN_ROTATE), "rotate");
	ck_assert_int_eq(
	        lease__rotation_apply(&p, NULL, LEASE_TOKEN_PRESERVE, "a", "b", 1, 0, NULL),
	        LEASE_EINVALID);
}
END_TEST

/* Phase never decides: a same-identity transition into claimed/working keeps
 * the token (the old phase-keyed rule rotated), a cross-host handoff without a
 * phase change rotates (the old rule preserved). */
START_TEST(test_rotation_divergence_from_phase_rule)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;

	fx_mem_held(&f, tok);
	o = opt(ALICE, tok, 0);
	o.to = LEASE_PHASE_REVIEW;
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), 0);
	o.to = LEASE_PHASE_WORKING;
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), 0);
	ck_assert_str_eq(r.payload.lease_token, tok);
	o.to = LEASE_PHASE_CLAIMED;
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), 0);
	ck_assert_str_eq(r.payload.lease_token, tok);
	ck_assert_int_eq(r.payload.transitions, 0);
	/* same-phase transition: a usage error, nothing written */
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), LEASE_EINVALID);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	/* same-host reacquire preserves */
	ck_assert_int_eq(lease_reacquire(&r, f.st, "l", &o), 0);
	ck_assert_str_eq(r.payload.lease_token, tok);
	/* cross-host heartbeat without a phase change rotates */
	f.clk.t += 10;
	o = opt(ALICE2, tok, 0);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), 0);
	ck_assert_str_ne(r.payload.lease_token, tok);
	ck_assert_int_eq(r.payload.transitions, 1);
	ck_assert_int_eq(r.token_rotated, 1);
	ck_assert_int_eq(r.payload.phase, LEASE_PHASE_CLAIMED);
	fx_free(&f);
}
END_TEST

static int no_random(unsigned char *buf, size_t len, void *payload)
{
	(void)buf;
	(void)len;
	(void)payload;
	return LEASE_EINTERNAL;
}

/* Without randomness nothing is written (no token, no nonce). */
START_TEST(test_no_randomness_nothing_written)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;

	fx_mem_held(&f, tok);
	put_payload(&f, "g", "1.1.0", ALICE, TOK1, "claimed", 0, T0, T0 + 60, 60);
	raw_put(&f, "g", "g: garbage\n\n{\n");
	f.st->random.fill = no_random;
	memstore_counts_reset(f.m);
	o = opt(BOB, NULL, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "new", &o), LEASE_EINTERNAL);
	o = opt(ALICE, tok, 0);
	ck_assert_int_eq(lease_release(&r, f.st, "l", &o), LEASE_EINTERNAL);
	o.force = 1; /* g shows nothing that says it is free (issue 23) */
	ck_assert_int_eq(lease_break(&r, f.st, "g", &o), LEASE_EINTERNAL);
	o.force = 0;
	ck_assert_int_eq(counts(&f)->write_commit, 0);
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD); /* no write needed */
	fx_free(&f);
}
END_TEST

/* --wait is bounded by store time too (a clock that jumps). */
static int jump_cb(double sleep_s, void *payload)
{
	(void)sleep_s;
	((fx *)payload)->clk.t += 200;
	return 0;
}

START_TEST(test_wait_bounded_by_store_time)
{
	fx f;
	lease_op_options o = opt(BOB, NULL, 60);
	lease_result r;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 86400, NULL);
	o.wait_seconds = 100;
	o.wait_cb = jump_cb;
	o.wait_payload = &f;
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_ptr_nonnull(strstr(r.message, "still held"));
	fx_free(&f);
}
END_TEST

/* The primitives refuse bad arguments before any I/O. */
START_TEST(test_primitive_arguments)
{
	fx f;
	lease_oid zero, one;

	fx_mem(&f);
	memset(&zero, 0, sizeof(zero));
	memset(&one, 1, sizeof(one));
	memstore_counts_reset(f.m);
	ck_assert_int_eq(lease_write_commit(&one, f.st, NULL, NULL), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_replace(f.st, "a/b", &one, &one), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_replace(f.st, "l", &zero, &one), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_replace(f.st, "l", NULL, &one), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_delete(f.st, "l", &zero), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_delete(f.st, "a/b", &one), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(f.st, "refs/leases-archive/noslash", &one),
	                 LEASE_EINVALID);
	ck_assert_int_eq(
	        lease_cas_create_ref(f.st, "refs/leases-archive/bad..n/20231114T221320Z-01234567",
	                             &one),
	        LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(f.st, "refs/leases-archive/l/2023", &one),
	                 LEASE_EINVALID);
	ck_assert_int_eq(
	        lease_cas_create_ref(f.st, "refs/leases-archive/l/2023111xT221320Z-01234567", &one),
	        LEASE_EINVALID);
	ck_assert_int_eq(
	        lease_cas_create_ref(f.st, "refs/leases-archive/l/20231114T221320Z-0123456g", &one),
	        LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(f.st, "refs/heads/main", &one), LEASE_EINVALID);
	ck_assert_int_eq(lease_cas_create_ref(f.st, "refs/leases/a..b", &one), LEASE_EINVALID);
	ck_assert_int_eq(counts(&f)->write_commit + counts(&f)->create_ref +
	                         counts(&f)->replace_ref + counts(&f)->delete_ref,
	                 0);
	lease_ref_state_clear(NULL);
	lease_namespace_clear(NULL);
	fx_free(&f);
}
END_TEST

/* ---- issue 29: heartbeats replace heartbeats (protocol.md §2) ----------- */

/* The tip's first parent. */
static lease_oid tip_parent(fx *f, const char *name)
{
	lease_ref_state s;
	lease_oid p;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, f->st, name), 0);
	ck_assert(s.present && s.commit.has_parent);
	p = s.commit.parent;
	lease_ref_state_clear(&s);
	return p;
}

static void must_heartbeat(fx *f, const char *name, lease_op_options *o, int64_t at,
                           const char *status)
{
	lease_result r;

	f->clk.t = at;
	ck_assert_int_eq(lease_heartbeat(&r, f->st, name, o), 0);
	ck_assert_str_eq(lease_status_name(r.status), status);
}

/* A heartbeat over a heartbeat of the same tenure replaces it: the chain
 * grows with the tenure and its transitions (acquire, transition, a TTL
 * change, release), never with the heartbeats; token, transitions and
 * acquired_at keep their meaning; history still shows each interval. */
START_TEST(test_heartbeat_replaces_heartbeat)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_payload acq, p;
	lease_oid acq_oid, tr_oid;
	lease_history h;
	int i;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 30, tok);
	ck_assert(cur(&f, "l", &acq, &acq_oid));
	o = opt(ALICE, tok, 0);
	/* the first heartbeat of the tenure is appended: a run of 1 */
	must_heartbeat(&f, "l", &o, T0 + 10, "renewed");
	ck_assert_uint_eq(chain_len(&f, "l"), 2);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert(p.has_heartbeats && p.heartbeats == 1 && !p.has_previous_heartbeat);
	/* the next ones replace it: parent stays the acquire */
	for (i = 2; i <= 12; i++) {
		must_heartbeat(&f, "l", &o, T0 + 10 * i, "renewed");
		ck_assert_uint_eq(chain_len(&f, "l"), 2);
		ck_assert(cur(&f, "l", &p, NULL));
		ck_assert_int_eq(p.heartbeats, i);
		ck_assert(p.has_previous_heartbeat);
		ck_assert_int_eq(p.previous_heartbeat_at, T0 + 10 * (i - 1));
		ck_assert_int_eq(p.expires_at, T0 + 10 * i + 30);
		ck_assert_str_eq(p.lease_token, tok);
		ck_assert_int_eq(p.transitions, acq.transitions);
		ck_assert_int_eq(p.acquired_at, acq.acquired_at);
		{
			lease_oid par = tip_parent(&f, "l");
			ck_assert(lease_oid_equal(&par, &acq_oid));
		}
	}
	ck_assert_int_eq(lease_history_read(&h, f.st, "l", 0, 0), 0);
	ck_assert(h.items[0].is_heartbeat && h.items[0].has_interval);
	ck_assert_int_eq(h.items[0].interval_seconds, 10);
	ck_assert_int_eq(h.items[0].interval_method, LEASE_HB_EXACT);
	lease_history_free(&h);
	/* a transition is kept; the heartbeat after it is appended, then replaced */
	f.clk.t = T0 + 130;
	o.to = LEASE_PHASE_WORKING;
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), 0);
	ck_assert(cur(&f, "l", NULL, &tr_oid));
	ck_assert_uint_eq(chain_len(&f, "l"), 3);
	must_heartbeat(&f, "l", &o, T0 + 140, "renewed");
	ck_assert_uint_eq(chain_len(&f, "l"), 4);
	must_heartbeat(&f, "l", &o, T0 + 150, "renewed");
	ck_assert_uint_eq(chain_len(&f, "l"), 4);
	{
		lease_oid par = tip_parent(&f, "l");
		ck_assert(lease_oid_equal(&par, &tr_oid));
	}
	/* a TTL change is kept (appended, a new run), then replaced again */
	o.ttl_seconds = 60;
	must_heartbeat(&f, "l", &o, T0 + 160, "renewed");
	ck_assert_uint_eq(chain_len(&f, "l"), 5);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.heartbeats, 1);
	ck_assert_int_eq(p.ttl_seconds, 60);
	must_heartbeat(&f, "l", &o, T0 + 180, "renewed");
	ck_assert_uint_eq(chain_len(&f, "l"), 5);
	/* the release is kept */
	f.clk.t = T0 + 190;
	ck_assert_int_eq(lease_release(&r, f.st, "l", &o), 0);
	ck_assert_uint_eq(chain_len(&f, "l"), 6);
	fx_free(&f);
}
END_TEST

/* Issue 29 (found by t_chaos.sh): reconcile --reap over a lease whose tip is
 * a heartbeat that replaced one writes a released payload without the
 * heartbeat fields (a released payload counts no heartbeats). */
START_TEST(test_reap_over_replaced_heartbeat)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_reconcile_options ro = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report rep;
	lease_payload p;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 30, tok);
	o = opt(ALICE, tok, 0);
	must_heartbeat(&f, "l", &o, T0 + 10, "renewed");
	must_heartbeat(&f, "l", &o, T0 + 20, "renewed");
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert(p.has_previous_heartbeat);
	f.clk.t = T0 + 200;
	ro.reap = 1;
	ck_assert_int_eq(lease_reconcile(&rep, f.st, &ro), 0);
	ck_assert_uint_eq(rep.reaped, 1);
	ck_assert_uint_eq(rep.skipped, 0);
	lease_reconcile_report_free(&rep);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.phase, LEASE_PHASE_RELEASED);
	ck_assert(!p.has_heartbeats && !p.has_previous_heartbeat);
	fx_free(&f);
}
END_TEST

/* ---- TTL (§4, §6; F30) --------------------------------------------------- */

START_TEST(test_F30_ttl_invalid_nothing_written)
{
	static const int64_t bad[] = {-1, 4, 86401, -86400, INT64_MAX};
	fx f;
	size_t i;
	int op;

	fx_mem(&f);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (op = T_ACQ; op <= T_RQ; op++) {
			lease_op_options o = opt(ALICE, TOK1, bad[i]);
			lease_result r;
			const memstore_counts *k;

			memstore_counts_reset(f.m);
			ck_assert_int_eq(run_top((top)op, &r, f.st, "l", &o), LEASE_EINVALID);
			ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
			ck_assert_ptr_nonnull(strstr(r.message, "TTL"));
			k = counts(&f);
			ck_assert_int_eq(
			        k->write_commit + k->create_ref + k->replace_ref + k->read_ref, 0);
		}
	}
	fx_free(&f);
}
END_TEST

START_TEST(test_F30_ttl_validate)
{
	fx f;
	char err[128];

	fx_mem(&f);
	ck_assert_int_eq(lease_ttl_validate(f.st, 0, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(err, "5..86400"));
	ck_assert_int_eq(lease_ttl_validate(f.st, -1, NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_ttl_validate(f.st, 4, NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_ttl_validate(f.st, 86401, NULL, 0), LEASE_EINVALID);
	ck_assert_int_eq(lease_ttl_validate(f.st, 5, NULL, 0), 0);
	ck_assert_int_eq(lease_ttl_validate(f.st, 86400, NULL, 0), 0);
	fx_free(&f);
}
END_TEST

/* Stored ttl_seconds / expires_at match what was asked; defaults per §6. */
START_TEST(test_F30_ttl_stored_as_asked)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_payload p;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 77, tok);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.ttl_seconds, 77);
	ck_assert_int_eq(p.expires_at, T0 + 77);
	f.clk.t += 30;
	o = opt(ALICE, tok, 0); /* preserving: the stored 77 */
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.payload.ttl_seconds, 77);
	ck_assert_int_eq(r.payload.expires_at, f.clk.t + 77);
	o.ttl_seconds = 5; /* the store minimum is allowed */
	f.clk.t += 30;
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.payload.ttl_seconds, 5);
	/* rotating without --ttl: the default */
	f.clk.t += 1;
	o = opt(BOB, tok, 0);
	ck_assert_int_eq(lease_reacquire(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.payload.ttl_seconds, LEASE_TTL_DEFAULT);
	/* a stored TTL below the store minimum is raised to it when preserved */
	put_payload(&f, "m", "1.1.0", ALICE, TOK1, "claimed", 0, f.clk.t - 1, f.clk.t + 1, 2);
	o = opt(ALICE, TOK1, 0);
	f.clk.t += 1;
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "m", &o), 0);
	ck_assert_int_eq(r.payload.ttl_seconds, 5);
	fx_free(&f);
}
END_TEST

/* ---- field cases ---------------------------------------------------------- */

/* F01: the holder vanishes; the lease expires at expires_at (+ skew margin),
 * a waiter takes over with a new token, the old holder's release is safe. */
START_TEST(test_F01_holder_vanishes)
{
	fx f;
	char atok[LEASE_TOKEN_HEXSZ + 1], btok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_oid boid, after;

	fx_mem(&f);
	must_acquire(&f, "job", ALICE, 60, atok);
	o = opt(BOB, NULL, 60);
	f.clk.t = T0 + 60; /* at expires_at: not yet expired */
	ck_assert_int_eq(lease_acquire(&r, f.st, "job", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_ptr_nonnull(strstr(r.message, "alice"));
	ck_assert_int_eq(lease_status(&r, f.st, "job"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_LIVE);
	f.clk.t = T0 + 61;
	ck_assert_int_eq(lease_status(&r, f.st, "job"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_EXPIRED);
	ck_assert_int_eq(r.payload.lease_token[0], '\0'); /* never shown by status */
	op_is(&f, lease_acquire, "job", &o, LEASE_STATUS_ACQUIRED, &r);
	ck_assert_int_eq(r.token_rotated, 1);
	ck_assert_int_eq(r.payload.transitions, 1);
	memcpy(btok, r.payload.lease_token, sizeof(btok));
	ck_assert_str_ne(btok, atok);
	ck_assert(ref_oid(&f, "job", &boid));
	/* the vanished holder's cleanup (if: always()) touches nothing */
	o = opt(ALICE, atok, 0);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "job", &o), LEASE_ENOTHOLDER);
	op_is(&f, lease_release, "job", &o, LEASE_STATUS_NOT_OWNER, &r);
	ck_assert(ref_oid(&f, "job", &after));
	ck_assert(lease_oid_equal(&boid, &after));
	fx_free(&f);
}
END_TEST

/* F03: two parties sharing one owner string (and host): never both succeed
 * (the twin: rtfx's alice_twin_acquires). */
START_TEST(test_F03_identity_collision)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o = opt(ALICE, NULL, 60);
	lease_result r;
	lease_payload p;

	fx_mem(&f);
	must_acquire(&f, "k", ALICE, 60, tok);
	ck_assert_int_eq(lease_acquire(&r, f.st, "k", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_ALREADY_HELD);
	ck_assert_int_eq(r.holds_token, 0);
	/* racing twins: CAS decides, the loser sees already_held */
	hook(&f, H_WRITE_COMMIT, 1, 0, alice_twin_acquires);
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_ALREADY_HELD);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_str_eq(p.lease_token, bob_token);
	ck_assert_str_ne(p.lease_token, tok);
	fx_free(&f);
}
END_TEST

/* F04: double release; between the two, another job acquired. */
START_TEST(test_F04_double_release)
{
	fx f;
	char atok[LEASE_TOKEN_HEXSZ + 1], btok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_oid boid, after;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 60, atok);
	must_release(&f, "l", ALICE, atok);
	o = opt(ALICE, atok, 0);
	op_is(&f, lease_release, "l", &o, LEASE_STATUS_ALREADY_RELEASED, &r);
	must_acquire(&f, "l", BOB, 60, btok);
	ck_assert(ref_oid(&f, "l", &boid));
	op_is(&f, lease_release, "l", &o, LEASE_STATUS_NOT_OWNER, &r);
	ck_assert(ref_oid(&f, "l", &after));
	ck_assert(lease_oid_equal(&boid, &after));
	fx_free(&f);
}
END_TEST

/* F05: the cleanup of a waiter that never held frees nothing. */
START_TEST(test_F05_waiter_cleanup)
{
	fx f;
	lease_op_options o;
	lease_result r;
	lease_oid before, after;
	const char *tokens[] = {NULL, "", STALE, "not-a-token"};
	size_t i;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 60, NULL);
	ck_assert(ref_oid(&f, "l", &before));
	for (i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
		o = opt(BOB, tokens[i], 0);
		ck_assert_int_eq(lease_release(&r, f.st, "l", &o), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_NOT_OWNER);
		o = opt(ALICE, tokens[i], 0); /* even under the holder's own identity */
		ck_assert_int_eq(lease_release(&r, f.st, "l", &o), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_NOT_OWNER);
	}
	ck_assert(ref_oid(&f, "l", &after));
	ck_assert(lease_oid_equal(&before, &after));
	ck_assert_int_eq(lease_status(&r, f.st, "l"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_LIVE);
	fx_free(&f);
}
END_TEST

/* F06: two overlapping runs by one person are two owners: the second waits
 * (and gets the lease once the first releases during the wait). */
static fx *f06_fx;
static char f06_tok[LEASE_TOKEN_HEXSZ + 1];
static int f06_calls;
static double f06_last_sleep;
static int f06_release_cb(double sleep_s, void *payload)
{
	(void)payload;
	f06_last_sleep = sleep_s;
	if (f06_calls++ == 0) {
		lease_op_options o = opt((ident){"repo/1/1/job", "h1"}, f06_tok, 0);
		lease_result r;
		ck_assert_int_eq(lease_release(&r, f06_fx->st, "l", &o), 0);
	}
	return 0;
}

START_TEST(test_F06_same_human_second_run_waits)
{
	fx f;
	lease_op_options o;
	lease_result r;

	fx_mem(&f);
	must_acquire(&f, "l", ((ident){"repo/1/1/job", "h1"}), 60, f06_tok);
	o = opt((ident){"repo/2/1/job", "h1"}, NULL, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	f06_fx = &f;
	f06_calls = 0;
	o.wait_seconds = 10;
	o.wait_cb = f06_release_cb;
	op_is(&f, lease_acquire, "l", &o, LEASE_STATUS_ACQUIRED, &r);
	ck_assert_int_eq(f06_calls, 1);
	ck_assert(f06_last_sleep >= 0.1 && f06_last_sleep <= 10);
	ck_assert_str_eq(r.payload.owner, "repo/2/1/job");
	ck_assert_str_ne(r.payload.lease_token, f06_tok);
	fx_free(&f);
}
END_TEST

/* F08: inputs are validated before any read or write. */
START_TEST(test_F08_inputs_validated_before_any_write)
{
	fx f;
	lease_op_options o;
	lease_result r;
	const memstore_counts *k;
	int rc;

	fx_mem(&f);
	memstore_counts_reset(f.m);
	o = opt(ALICE, NULL, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "a/b", &o), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(r.message, "name"));
	ck_assert_int_eq(lease_acquire(&r, f.st, "x.lock", &o), LEASE_EINVALID);
	ck_assert_int_eq(lease_acquire(&r, f.st, NULL, &o), LEASE_EINVALID);
	ck_assert_int_eq(lease_acquire(&r, f.st, "ok", NULL), LEASE_EINVALID);
	o.phase = LEASE_PHASE_RELEASED;
	ck_assert_int_eq(lease_acquire(&r, f.st, "ok", &o), LEASE_EINVALID);
	o = opt((ident){NULL, "h"}, NULL, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "ok", &o), LEASE_EINVALID);
	o = opt((ident){"bad\x01owner", "h"}, NULL, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "ok", &o), LEASE_EINVALID);
	{
		char longid[LEASE_IDENT_MAX + 2];
		memset(longid, 'o', sizeof(longid) - 1);
		longid[sizeof(longid) - 1] = '\0';
		o = opt((ident){longid, "h"}, NULL, 60);
		ck_assert_int_eq(lease_acquire(&r, f.st, "ok", &o), LEASE_EINVALID);
	}
	o = opt(ALICE, TOK1, 0);
	o.to = LEASE_PHASE_RELEASED;
	ck_assert_int_eq(lease_transition(&r, f.st, "ok", &o), LEASE_EINVALID);
	o.to = LEASE_PHASE_NONE;
	ck_assert_int_eq(lease_transition(&r, f.st, "ok", &o), LEASE_EINVALID);
	o = opt(ALICE, TOK1, 0);
	o.version = 99;
	ck_assert_int_eq(lease_release(&r, f.st, "ok", &o), LEASE_EINVALID);
	ck_assert_int_eq(lease_status(&r, f.st, "../x"), LEASE_EINVALID);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	k = counts(&f);
	rc = k->write_commit + k->create_ref + k->replace_ref + k->read_ref + k->list_refs;
	ck_assert_int_eq(rc, 0);
	fx_free(&f);
}
END_TEST

/* F14: heartbeat after expiry is `expired`; reacquire preserves the token
 * only if nobody took over; a takeover in between is never undone. */
START_TEST(test_F14_heartbeat_after_expiry)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1], btok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_oid boid, after;

	fx_mem_held(&f, tok);
	f.clk.t = T0 + 100;
	o = opt(ALICE, tok, 0);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_EEXPIRED);
	ck_assert_int_eq(r.status, LEASE_STATUS_EXPIRED);
	ck_assert_int_eq(r.holds_token, 0);
	o.to = LEASE_PHASE_WORKING;
	ck_assert_int_eq(lease_transition(&r, f.st, "l", &o), LEASE_EEXPIRED);
	ck_assert_int_eq(lease_reacquire(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_REACQUIRED);
	ck_assert_str_eq(r.payload.lease_token, tok);
	ck_assert_int_eq(r.payload.expires_at, T0 + 160);
	/* expire again; this time bob takes over first */
	f.clk.t = T0 + 200;
	must_acquire(&f, "l", BOB, 60, btok);
	ck_assert(ref_oid(&f, "l", &boid));
	ck_assert_int_eq(lease_reacquire(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	ck_assert(ref_oid(&f, "l", &after));
	ck_assert(lease_oid_equal(&boid, &after));
	fx_free(&f);
}
END_TEST

/* F15: a payload that went stale before its CAS is rebuilt; success is never
 * reported with less than half the TTL left. */
START_TEST(test_F15_stale_payload_rebuilt)
{
	fx f;
	lease_op_options o = opt(ALICE, NULL, 60);
	lease_result r;
	lease_payload p;

	fx_mem(&f);
	/* 20 s pass between building the payload and sending its CAS */
	hook(&f, H_WRITE_COMMIT, 1, 20, NULL);
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(counts(&f)->write_commit, 2);
	ck_assert_int_eq(counts(&f)->create_ref, 1);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.acquired_at, T0 + 20);
	ck_assert_int_eq(p.expires_at, T0 + 80);
	fx_free(&f);
}
END_TEST

START_TEST(test_F15_late_success_extended)
{
	fx f;
	lease_op_options o = opt(ALICE, NULL, 60);
	lease_result r;
	lease_payload p;

	fx_mem(&f);
	/* the CAS itself takes 40 s: only 20 s of a 60 s TTL left */
	hook(&f, H_CAS, 1, 40, NULL);
	op_is(&f, lease_acquire, "l", &o, LEASE_STATUS_ACQUIRED, &r);
	ck_assert_int_eq(r.token_rotated, 1);
	ck_assert(r.payload.expires_at - r.now >= 30);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.expires_at, T0 + 100);
	ck_assert_int_eq(p.acquired_at, T0); /* the tenure began at the first write */
	ck_assert_int_eq(counts(&f)->create_ref + counts(&f)->replace_ref, 2);
	fx_free(&f);
}
END_TEST

START_TEST(test_F15_always_late_never_success)
{
	fx f;
	lease_op_options o = opt(ALICE, NULL, 60);
	lease_result r;

	fx_mem(&f);
	hook(&f, H_CAS, 1, 40, NULL);
	f.clk.repeat = 1;
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EUNVERIFIED);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	ck_assert_ptr_nonnull(strstr(r.message, "too late"));
	fx_free(&f);
}
END_TEST

/* F21: the holder can read but not write: a failed heartbeat is an error,
 * never success; a passed expires_at or another token is lost at once. */
START_TEST(test_F21_read_only_holder)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_payload p;

	fx_mem_held(&f, tok);
	f.clk.t = T0 + 20;
	memstore_faults_get(f.m)->fail_before = 1000;
	o = opt(ALICE, tok, 0);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_ENET);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	ck_assert_int_eq(r.holds_token, 0);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.expires_at, T0 + 60);
	/* the lost-at deadline lies before expires_at by kill_grace + 2 s */
	ck_assert(lease_lost_at(&p, 0) == (double)(T0 + 60) - (10.0 + 2.0));
	f.clk.t = T0 + 61;
	memstore_counts_reset(f.m);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_EEXPIRED);
	ck_assert_int_eq(counts(&f)->replace_ref, 0);
	memstore_faults_get(f.m)->fail_before = 0;
	must_acquire(&f, "l", BOB, 60, NULL);
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	fx_free(&f);
}
END_TEST

/* F22: acquire --wait succeeds only with a verified write of this call, with
 * time left; it gives up at the deadline; the callback can interrupt it. */
static fx *f22_fx;
static int f22_calls;
static int f22_expire_cb(double sleep_s, void *payload)
{
	(void)sleep_s;
	(void)payload;
	f22_calls++;
	f22_fx->clk.t += 61; /* the holder stops heartbeating */
	memstore_faults_get(f22_fx->m)->lie_replace = 1;
	return 0;
}
static int f22_stop_cb(double sleep_s, void *payload)
{
	(void)sleep_s;
	f22_calls++;
	return *(int *)payload;
}

START_TEST(test_F22_wait_verified_write)
{
	fx f;
	char atok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_payload p;
	int stop = 1;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 60, atok);
	f22_fx = &f;
	f22_calls = 0;
	o = opt(BOB, NULL, 60);
	o.wait_seconds = 300;
	o.wait_cb = f22_expire_cb;
	memstore_counts_reset(f.m);
	op_is(&f, lease_acquire, "l", &o, LEASE_STATUS_ACQUIRED, &r);
	ck_assert_int_eq(f22_calls, 1);
	ck_assert_int_eq(counts(&f)->replace_ref, 2); /* the lie was not taken for success */
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_str_eq(p.lease_token, r.payload.lease_token);
	ck_assert_str_ne(p.lease_token, atok);
	ck_assert(p.expires_at - r.now >= 30);

	/* interrupted by the callback */
	f22_calls = 0;
	o = opt(ALICE, NULL, 60);
	o.wait_seconds = 300;
	o.wait_cb = f22_stop_cb;
	o.wait_payload = &stop;
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_int_eq(f22_calls, 1);
	ck_assert_ptr_nonnull(strstr(r.message, "interrupted"));

	/* the wait runs out (store time passes in the callback) */
	stop = 0;
	f22_calls = 0;
	o.wait_seconds = 1;
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_ptr_nonnull(strstr(r.message, "still held"));
	ck_assert(f22_calls >= 1);
	fx_free(&f);
}
END_TEST

/* F29: a re-run attempt is a new owner: it takes over only an expired lease. */
START_TEST(test_F29_rerun_attempt)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	const ident a1 = {"org/repo/4242/1/build", "runner-1"};
	const ident a2 = {"org/repo/4242/2/build", "runner-1"};
	lease_op_options o;
	lease_result r;

	fx_mem(&f);
	must_acquire(&f, "deploy", a1, 60, tok);
	o = opt(a2, NULL, 60);
	f.clk.t = T0 + 30;
	ck_assert_int_eq(lease_acquire(&r, f.st, "deploy", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	f.clk.t = T0 + 61;
	ck_assert_int_eq(lease_acquire(&r, f.st, "deploy", &o), 0);
	ck_assert_str_ne(r.payload.lease_token, tok);
	ck_assert_int_eq(r.payload.transitions, 1);
	ck_assert_str_eq(r.payload.owner, a2.owner);
	fx_free(&f);
}
END_TEST

/* ---- break (§5; F27) ------------------------------------------------------ */

START_TEST(test_break_force_over_live)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o = opt(BOB, NULL, 0);
	lease_result r;
	lease_payload p;

	fx_mem_held(&f, tok);
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	ck_assert_ptr_nonnull(strstr(r.message, "--force"));
	o.force = 1;
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_BROKEN);
	ck_assert_int_eq(r.holds_token, 0);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.phase, LEASE_PHASE_RELEASED);
	ck_assert_str_eq(p.lease_token, tok);
	ck_assert_str_eq(p.owner, "bob");
	ck_assert_int_eq(p.ttl_seconds, 0);
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ALREADY_RELEASED);
	/* the old holder learns at its next heartbeat */
	o = opt(ALICE, tok, 0);
	f.clk.t += 10;
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	fx_free(&f);
}
END_TEST

/* Issue 17: break never lowers the fencing generation (§5). Over a payload
 * this build rejects — a newer major (2.0.0, transitions 9) or another
 * lease's name (transitions 7) — the transitions it shows still count: the
 * broken lease says 1 + that value and the next acquire goes on from there. */
START_TEST(test_break_unreadable_keeps_generation)
{
	static const struct {
		const char *ref, *payload_name, *version;
		int64_t transitions;
	} cases[] = {{"major", "major", "2.0.0", 9}, {"named", "other", "1.1.0", 7}};
	fx f;
	lease_op_options o = opt(BOB, NULL, 60);
	lease_result r;
	lease_payload p;
	size_t i;

	fx_mem(&f);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put_payload_as(&f, cases[i].ref, "acquire", cases[i].payload_name, cases[i].version,
		               ALICE, TOK1, "working", cases[i].transitions, T0 - 10, T0 - 5,
		               5); /* expired: no --force needed */
		o = opt(BOB, NULL, 60);
		/* unreadable for this build: acquire refuses, break replaces it */
		ck_assert_int_lt(lease_acquire(&r, f.st, cases[i].ref, &o), 0);
		ck_assert_int_eq(lease_break(&r, f.st, cases[i].ref, &o), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_BROKEN);
		ck_assert(cur(&f, cases[i].ref, &p, NULL));
		ck_assert_int_eq(p.phase, LEASE_PHASE_RELEASED);
		ck_assert_int_eq(p.transitions, cases[i].transitions + 1);
		ck_assert_int_eq(lease_acquire(&r, f.st, cases[i].ref, &o), 0);
		ck_assert_int_eq(r.payload.transitions, cases[i].transitions + 2);
	}
	fx_free(&f);
}
END_TEST

/* F27: garbage payload: status and acquire report it; break parses
 * leniently, mints a token, transitions = 1 + highest readable in the chain. */
START_TEST(test_F27_break_unreadable)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o = opt(BOB, NULL, 60);
	lease_result r;
	lease_payload p;
	char msg[512], e[LEASE_TIME_STRSZ + 1];

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 60, NULL);
	f.clk.t = T0 + 61;
	must_acquire(&f, "l", BOB, 60, tok); /* transitions 1 */
	raw_put(&f, "l", "l: acquire claimed by x on y\n\n{not json at all\n");
	ck_assert_int_eq(lease_status(&r, f.st, "l"), LEASE_EPAYLOAD);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	ck_assert_int_eq(r.present, 1);
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EPAYLOAD);
	o.lease_token = tok;
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_EPAYLOAD);
	o.lease_token = NULL;
	/* nothing readable says it is free: break needs --force (issue 23) */
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), LEASE_EPAYLOAD);
	o.force = 1;
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	o.force = 0;
	ck_assert_int_eq(r.status, LEASE_STATUS_BROKEN);
	ck_assert_int_eq(r.token_rotated, 1);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.phase, LEASE_PHASE_RELEASED);
	ck_assert_int_eq(p.transitions, 2);
	ck_assert_str_ne(p.lease_token, tok);
	/* an unreadable payload that still shows a live expires_at needs --force */
	lease_time_format(e, f.clk.t + 100);
	snprintf(msg, sizeof(msg),
	         "l: acquire claimed by x on y\n\n{\"expires_at\":\"%s\",\"phase\":\"working\"}\n",
	         e);
	raw_put(&f, "l", msg);
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), LEASE_EHELD);
	ck_assert_int_eq(r.status, LEASE_STATUS_HELD);
	o.force = 1;
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.transitions, 3);
	/* garbage that says released, or whose expires_at is past, is breakable
	 * without --force; one whose expires_at does not parse shows nothing:
	 * --force is needed (issue 23: break never frees what may be live) */
	o.force = 0;
	raw_put(&f, "l",
	        "l: x\n\n{\"phase\":\"released\",\"expires_at\":\"2999-01-01T00:00:00Z\"}\n");
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	raw_put(&f, "l", "l: x\n\n{\"expires_at\":\"2000-01-01T00:00:00Z\"}\n");
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	raw_put(&f, "l", "l: x\n\n{\"expires_at\":\"soon\"}\n");
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), LEASE_EPAYLOAD);
	raw_put(&f, "l", "l: x\n\n{\"expires_at\":\"2999-99-99T00:00:00Z\"}\n");
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), LEASE_EPAYLOAD);
	o.force = 1;
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_BROKEN);
	/* a ref at a non-commit object: --force is needed too */
	{
		lease_oid blob, old;
		ck_assert_int_eq(memstore_put_blob(f.m, &blob, "hello"), 0);
		ck_assert(ref_oid(&f, "l", &old));
		ck_assert_int_eq(memstore_set_ref(f.m, "refs/leases/l", &blob), 0);
		o.force = 0;
		ck_assert_int_eq(lease_break(&r, f.st, "l", &o), LEASE_EPAYLOAD);
		o.force = 1;
		ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_BROKEN);
		ck_assert(cur(&f, "l", &p, NULL));
		ck_assert_int_eq(p.transitions, 0);
	}
	fx_free(&f);
}
END_TEST

/* A payload of a newer minor schema: readable, never replaced (except by
 * break); a live one is simply held. */
START_TEST(test_newer_minor_refused)
{
	fx f;
	lease_op_options o = opt(BOB, NULL, 60);
	lease_result r;
	lease_payload p;

	fx_mem(&f);
	put_payload(&f, "l", "1.9.0", ALICE, TOK1, "working", 4, T0 - 10, T0 + 50, 60);
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EHELD);
	f.clk.t = T0 + 51;
	ck_assert_int_eq(lease_acquire(&r, f.st, "l", &o), LEASE_EVERSION);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	ck_assert_ptr_nonnull(strstr(r.message, "newer"));
	o = opt(ALICE, TOK1, 0);
	ck_assert_int_eq(lease_reacquire(&r, f.st, "l", &o), LEASE_EVERSION);
	ck_assert_int_eq(lease_release(&r, f.st, "l", &o), LEASE_EVERSION);
	ck_assert_int_eq(lease_break(&r, f.st, "l", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_BROKEN);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_str_eq(p.sdlc_version, SDLC_VERSION);
	ck_assert_str_eq(p.lease_token, TOK1);
	ck_assert_int_eq(p.transitions, 4);
	fx_free(&f);
}
END_TEST

/* ---- status, archives, helpers ------------------------------------------- */

START_TEST(test_status_states)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_result r;

	fx_mem(&f);
	ck_assert_int_eq(lease_status(&r, f.st, "l"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ABSENT);
	ck_assert_int_eq(r.present, 0);
	ck_assert_str_eq(r.ref, "refs/leases/l");
	must_acquire(&f, "l", ALICE, 60, tok);
	ck_assert_int_eq(lease_status(&r, f.st, "l"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_LIVE);
	ck_assert_str_eq(r.payload.owner, "alice");
	ck_assert_int_eq(r.holds_token, 0);
	must_release(&f, "l", ALICE, tok);
	ck_assert_int_eq(lease_status(&r, f.st, "l"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_RELEASED);
	put_payload(&f, "p", "1.0.0", ALICE, TOK1, "claimed", 0, T0, T0 + 300, -1);
	ck_assert_int_eq(lease_status(&r, f.st, "p"), 0);
	ck_assert_int_eq(r.approximate_ttl, 1);
	fx_free(&f);
}
END_TEST

/* The first create after a prune continues from the archives' transitions. */
START_TEST(test_archive_transitions_continue)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_payload p;
	lease_oid oid;
	int64_t max = -1;
	int found = 1;

	fx_mem(&f);
	ck_assert_int_eq(lease_fetch_archive_max_transitions(&max, &found, f.st, "l"), 0);
	ck_assert_int_eq(found, 0);
	put_payload(&f, "l", "1.1.0", ALICE, TOK1, "claimed", 7, T0 - 100, T0 - 50, 50);
	ck_assert(ref_oid(&f, "l", &oid));
	ck_assert_int_eq(
	        lease_cas_create_ref(f.st, "refs/leases-archive/l/20231114T221320Z-01234567", &oid),
	        0);
	/* a look-alike and a garbage archive are ignored */
	ck_assert_int_eq(memstore_set_ref(f.m, "refs/leases-archive/l/x/y", &oid), 0);
	ck_assert_int_eq(
	        memstore_set_ref(f.m, "refs/leases-archive/lx/20231114T221320Z-01234567", &oid), 0);
	ck_assert_int_eq(lease_cas_delete(f.st, "l", &oid), 0);
	ck_assert_int_eq(lease_fetch_archive_max_transitions(&max, &found, f.st, "l"), 0);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(max, 7);
	must_acquire(&f, "l", BOB, 60, tok);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.transitions, 8);
	ck_assert_int_eq(lease_fetch_archive_max_transitions(&max, &found, f.st, "../x"),
	                 LEASE_EINVALID);
	fx_free(&f);
}
END_TEST

/* Issue 17: the status as a value, one name table (cli.md statuses). */
START_TEST(test_status_enum_names)
{
	fx f;
	lease_result r;
	int i;

	/* every value has its own cli.md name; the table has no hole */
	for (i = 0; i < LEASE_STATUS__COUNT; i++) {
		int j;
		ck_assert_ptr_nonnull(lease_status_name((lease_status_id)i));
		for (j = 0; j < i; j++)
			ck_assert_str_ne(lease_status_name((lease_status_id)i),
			                 lease_status_name((lease_status_id)j));
	}
	ck_assert_str_eq(lease_status_name(LEASE_STATUS_NOT_DUE), "not_due");
	ck_assert_str_eq(lease_status_name((lease_status_id)99), "error");
	ck_assert_str_eq(lease_status_name((lease_status_id)-1), "error");
	memset(&r, 0, sizeof(r)); /* a zeroed result is an error */
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	fx_mem(&f);
	ck_assert_int_eq(lease_status(&r, f.st, "l"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ABSENT);
	must_acquire(&f, "l", ALICE, 60, NULL);
	ck_assert_int_eq(lease_status(&r, f.st, "l"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_LIVE);
	fx_free(&f);
}
END_TEST

/* Issue 17: every entry point taking an options struct checks its version. */
START_TEST(test_options_versions_checked)
{
	fx f;
	lease_reconcile_options ro = LEASE_RECONCILE_OPTIONS_INIT;
	lease_migrate_options mo = LEASE_MIGRATE_OPTIONS_INIT;
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_reconcile_report rep;
	lease_migrate_report mrep;
	lease_store *st = NULL;
	char err[256];

	fx_mem(&f);
	ro.version = 99;
	ck_assert_int_eq(lease_reconcile(&rep, f.st, &ro), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(f.st), "unsupported version"));
	mo.version = 99;
	ck_assert_int_eq(lease_migrate(&mrep, f.st, &mo), LEASE_EINVALID);
	so.version = 99;
	ck_assert_int_eq(lease_store_open_transport(&st, memstore_new(NULL), &so, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_ptr_null(st);
	ck_assert_int_eq(lease_store_open(&st, "local:/nonexistent", &so, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(err, "unsupported version"));
	fx_free(&f);
}
END_TEST

/* ---- real processes -------------------------------------------------------- */

static const char *build_dir(void)
{
	const char *b = getenv("REFLEASE_BUILD");
	return b && *b ? b : "build";
}

/* F23: after a release exactly one of several real waiting processes wins. */
START_TEST(test_F23_one_waiter_wins_local_processes)
{
	enum { WAITERS = 6 };
	char repo[512], spec[600], err[256];
	lease_store *st;
	lease_op_options o = opt(ALICE, NULL, 60);
	lease_result r;
	pid_t pids[WAITERS];
	int i, winners = 0, held = 0;

	ck_assert_int_eq(testrepo_make(repo, sizeof(repo), TESTREPO_BARE), 0);
	snprintf(spec, sizeof(spec), "local:%s", repo);
	ck_assert_int_eq(lease_store_open(&st, spec, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_acquire(&r, st, "slot", &o), 0);
	for (i = 0; i < WAITERS; i++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			lease_store *cst;
			char owner[32];
			lease_op_options co;
			lease_result cr;
			int rc;

			snprintf(owner, sizeof(owner), "waiter-%d", i);
			co = opt((ident){owner, "h"}, NULL, 60);
			co.wait_seconds = 2;
			if (lease_store_open(&cst, spec, NULL, err, sizeof(err)) < 0)
				_exit(10);
			rc = lease_acquire(&cr, cst, "slot", &co);
			if (rc != 0 && rc != LEASE_EHELD)
				fprintf(stderr, "waiter %d: %s %s\n", i,
				        lease_status_name(cr.status), cr.message);
			lease_store_free(cst);
			_exit(rc == 0 ? 0 : rc == LEASE_EHELD ? 3 : 11);
		}
		pids[i] = pid;
	}
	usleep(300000);
	o.lease_token = r.payload.lease_token;
	ck_assert_int_eq(lease_release(&r, st, "slot", &o), 0);
	for (i = 0; i < WAITERS; i++) {
		int ws;
		ck_assert_int_eq(waitpid(pids[i], &ws, 0), pids[i]);
		ck_assert(WIFEXITED(ws));
		if (WEXITSTATUS(ws) == 0)
			winners++;
		else if (WEXITSTATUS(ws) == 3)
			held++;
	}
	ck_assert_int_eq(winners, 1);
	ck_assert_int_eq(held, WAITERS - 1);
	ck_assert_int_eq(lease_status(&r, st, "slot"), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_LIVE);
	ck_assert_ptr_nonnull(strstr(r.payload.owner, "waiter-"));
	lease_store_free(st);
	testrepo_remove(repo);
}
END_TEST

typedef struct tenure {
	char owner[64];
	char token[LEASE_TOKEN_HEXSZ + 1];
	double start, end;
} tenure;

static int tenure_cmp(const void *a, const void *b)
{
	const tenure *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* 16 real processes race acquire/heartbeat/release on one lease of a local
 * store (tests/tools/contend.c); their logged tenures never overlap and the
 * tokens differ between owners. */
START_TEST(test_contend_16_processes_no_overlap)
{
	enum { PROCS = 16, ITER = 4 };
	char repo[512], tool[1024], logpath[1100], line[512];
	pid_t pids[PROCS];
	tenure *t;
	size_t n = 0, i, j;

	snprintf(tool, sizeof(tool), "%s/tools/contend", build_dir());
	ck_assert_msg(access(tool, X_OK) == 0, "%s missing (make all builds it)", tool);
	ck_assert_int_eq(testrepo_make(repo, sizeof(repo), TESTREPO_BARE), 0);
	for (i = 0; i < PROCS; i++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			char owner[32], iter[16], out[1100];
			snprintf(owner, sizeof(owner), "proc-%zu", i);
			snprintf(iter, sizeof(iter), "%d", ITER);
			snprintf(out, sizeof(out), "%s/tenures-%zu.log", repo, i);
			if (!freopen(out, "w", stdout))
				_exit(12);
			execl(tool, tool, repo, "race", owner, iter, (char *)NULL);
			_exit(13);
		}
		pids[i] = pid;
	}
	for (i = 0; i < PROCS; i++) {
		int ws;
		ck_assert_int_eq(waitpid(pids[i], &ws, 0), pids[i]);
		ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "contend %zu failed (%d)", i,
		              ws);
	}
	t = calloc(PROCS * ITER, sizeof(*t));
	ck_assert_ptr_nonnull(t);
	for (i = 0; i < PROCS; i++) {
		FILE *fp;
		snprintf(logpath, sizeof(logpath), "%s/tenures-%zu.log", repo, i);
		fp = fopen(logpath, "r");
		ck_assert_ptr_nonnull(fp);
		while (fgets(line, sizeof(line), fp)) {
			ck_assert(n < PROCS * ITER);
			ck_assert_int_eq(sscanf(line, "%63s %32s %lf %lf", t[n].owner, t[n].token,
			                        &t[n].start, &t[n].end),
			                 4);
			ck_assert(t[n].start <= t[n].end);
			n++;
		}
		fclose(fp);
	}
	ck_assert_int_eq(n, PROCS * ITER);
	qsort(t, n, sizeof(*t), tenure_cmp);
	for (i = 1; i < n; i++)
		ck_assert_msg(t[i].start >= t[i - 1].end,
		              "tenures overlap: %s [%.6f, %.6f] and %s [%.6f, %.6f]",
		              t[i - 1].owner, t[i - 1].start, t[i - 1].end, t[i].owner, t[i].start,
		              t[i].end);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(t[i].owner, t[j].owner) != 0)
				ck_assert_str_ne(t[i].token, t[j].token);
	free(t);
	testrepo_remove(repo);
}
END_TEST

Suite *runtime_suite(void)
{
	Suite *s = suite_create("runtime");

	suitefix_add(s, "cells", 20, NULL, LOOP(test_cells_mem, 0, NCELLS),
	             LOOP(test_cells_local, 0, NCELLS), ONE(test_no_token_is_not_holder),
	             ONE(test_slots_mem), ONE(test_slots_status_mem), ONE(test_rotation_matrix),
	             ONE(test_rotation_divergence_from_phase_rule), NULL);
	suitefix_add(s, "settle", 0, NULL, ONE(test_no_randomness_nothing_written),
	             ONE(test_wait_bounded_by_store_time), ONE(test_primitive_arguments), NULL);
	suitefix_add(s, "floor_ttl", 0, NULL, ONE(test_heartbeat_replaces_heartbeat),
	             ONE(test_reap_over_replaced_heartbeat),
	             ONE(test_F30_ttl_invalid_nothing_written), ONE(test_F30_ttl_validate),
	             ONE(test_F30_ttl_stored_as_asked), ONE(test_status_enum_names),
	             ONE(test_options_versions_checked), NULL);
	suitefix_add(s, "field_cases", 10, NULL, ONE(test_F01_holder_vanishes),
	             ONE(test_F03_identity_collision), ONE(test_F04_double_release),
	             ONE(test_F05_waiter_cleanup), ONE(test_F06_same_human_second_run_waits),
	             ONE(test_F08_inputs_validated_before_any_write),
	             ONE(test_F14_heartbeat_after_expiry), ONE(test_F15_stale_payload_rebuilt),
	             ONE(test_F15_late_success_extended), ONE(test_F15_always_late_never_success),
	             ONE(test_F21_read_only_holder), ONE(test_F22_wait_verified_write),
	             ONE(test_F29_rerun_attempt), ONE(test_break_force_over_live),
	             ONE(test_F27_break_unreadable), ONE(test_break_unreadable_keeps_generation),
	             ONE(test_newer_minor_refused), ONE(test_status_states),
	             ONE(test_archive_transitions_continue), NULL);
	suitefix_add(s, "processes", 60, NULL, ONE(test_F23_one_waiter_wins_local_processes),
	             ONE(test_contend_16_processes_no_overlap), NULL);
	return s;
}
