#define _DEFAULT_SOURCE
/* One spelling per rule (lease/policy.h; protocol.md §4–§6): the pure rules
 * at their edges, their public faces, and the heartbeat floor as the
 * runtime and reconcile both apply it. Moved from tests/test_runtime.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/policy.h"
#include "reflease.h"
#include "reflease/version.h"
#include "support/memstore.h"
#include "support/rtfx.h"

/* ---- the heartbeat floor (§6) -------------------------------------------- */

START_TEST(test_floor_not_due)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;

	fx_mem_held(&f, tok);
	o = opt(ALICE, tok, 0);
	f.clk.t = T0 + 5; /* floor is 6 s */
	memstore_counts_reset(f.m);
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_NOT_DUE, &r);
	ck_assert_int_eq(r.holds_token, 1);
	ck_assert_int_eq(r.approximate_ttl, 0);
	ck_assert_str_eq(r.payload.lease_token, tok);
	ck_assert_int_eq(counts(&f)->write_commit, 0);
	f.clk.t = T0 + 6;
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_RENEWED, &r);
	ck_assert_int_eq(r.payload.expires_at, T0 + 66);
	/* a stale token is not_holder, not not_due (token checks first) */
	o.lease_token = STALE;
	ck_assert_int_eq(lease_heartbeat(&r, f.st, "l", &o), LEASE_ENOTHOLDER);
	/* a cross-host heartbeat with the token is never not_due: it rotates */
	o = opt(ALICE2, tok, 0);
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_RENEWED, &r);
	ck_assert_int_eq(r.token_rotated, 1);
	fx_free(&f);
}
END_TEST

/* Never not_due when less than half the TTL to be granted is left. */
START_TEST(test_floor_never_below_half_ttl)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;

	fx_mem_held(&f, tok);
	f.clk.t = T0 + 2;
	o = opt(ALICE, tok, 600); /* 58 s left of a 600 s TTL asked */
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_RENEWED, &r);
	ck_assert_int_eq(r.payload.ttl_seconds, 600);
	ck_assert_int_eq(r.payload.expires_at, T0 + 602);
	fx_free(&f);
}
END_TEST

/* The floor anomaly of @p name in a fresh reconcile report: its interval,
 * or -1 when the lease is not flagged. */
static int64_t floor_flag(fx *f, const char *name, double *floor_s)
{
	lease_reconcile_report rep;
	int64_t interval = -1;
	size_t i, j;

	ck_assert_int_eq(lease_reconcile(&rep, f->st, NULL), 0);
	for (i = 0; i < rep.count; i++) {
		const lease_reconcile_entry *e = &rep.entries[i];
		if (strcmp(e->name, name) != 0)
			continue;
		for (j = 0; j < e->anomaly_count; j++)
			if (e->anomalies[j].id == LEASE_ANOM_HEARTBEAT_FLOOR) {
				interval = e->anomalies[j].interval_seconds;
				*floor_s = e->anomalies[j].floor_seconds;
			}
	}
	lease_reconcile_report_free(&rep);
	return interval;
}

/* Issue 17 (§6 decision: one floor, max(1, ⌊ttl/10⌋) whole seconds, for the
 * heartbeat path and reconcile alike). TTL 25, heartbeats 2 s apart: renewed
 * and not flagged (it was flagged by a ttl/10.0 = 2.5 s floor before); 1 s
 * apart: not_due, and such a commit written by another tool is flagged. */
START_TEST(test_floor_runtime_agrees_with_reconcile)
{
	fx f;
	char tok[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options o;
	lease_result r;
	lease_payload p;
	double floor_s = 0;

	fx_mem(&f);
	must_acquire(&f, "l", ALICE, 25, tok);
	o = opt(ALICE, tok, 0);
	f.clk.t = T0 + 2;
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_RENEWED, &r);
	f.clk.t = T0 + 4;
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_RENEWED, &r);
	ck_assert_int_eq(floor_flag(&f, "l", &floor_s), -1);
	f.clk.t = T0 + 5;
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_NOT_DUE, &r);
	ck_assert_int_eq(floor_flag(&f, "l", &floor_s), -1);
	/* another tool's heartbeat 1 s after the last: below the floor */
	ck_assert(cur(&f, "l", &p, NULL));
	put_payload_as(&f, "l", "heartbeat", "l", SDLC_VERSION, ALICE, tok, "claimed",
	               p.transitions, p.acquired_at, p.expires_at + 1, 25);
	ck_assert_int_eq(floor_flag(&f, "l", &floor_s), 1);
	ck_assert(floor_s == 2.0);
	ck_assert_int_eq(lease_heartbeat_floor(25), 2);
	fx_free(&f);
}
END_TEST

/* Write a heartbeat commit as another tool would: @p version, on top of the
 * tip (append) or on the tip's parent with the replaced one's time (replace). */
static void foreign_heartbeat(fx *f, const char *name, const lease_payload *base, int64_t expires,
                              int replace, const char *version)
{
	lease_payload n = *base;
	lease_ref_state s;
	lease_oid oid;
	char *msg = NULL;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, f->st, name), 0);
	n.expires_at = expires;
	n.has_heartbeats = replace ? 1 : 0;
	n.heartbeats = replace ? (base->has_heartbeats ? base->heartbeats : 1) + 1 : 0;
	n.has_previous_heartbeat = replace;
	n.previous_heartbeat_at = base->expires_at - base->ttl_seconds;
	ck_assert_int_eq(lease_message_build(&msg, &n, LEASE_OP_HEARTBEAT), 0);
	if (strcmp(version, SDLC_VERSION) != 0) {
		char *v = strstr(msg, "\"sdlc_version\":\"" SDLC_VERSION "\"");
		ck_assert_ptr_nonnull(v);
		memcpy(v + strlen("\"sdlc_version\":\""), version, strlen(SDLC_VERSION));
	}
	ck_assert_int_eq(lease_write_commit(&oid, f->st, replace ? &s.commit.parent : &s.oid, msg),
	                 0);
	ck_assert_int_eq(lease_cas_replace(f->st, name, &s.oid, &oid), 0);
	free(msg);
	lease_ref_state_clear(&s);
}

/* The heartbeat-rate-above-floor answers of a replaced chain are those of the
 * appended (1.1) chain the same heartbeats would have made, step by step:
 * the runtime's heartbeats (replacing) against the same payloads written as
 * 1.1 commits appended (the old format), TTL 25 (floor 2, the issue 17
 * regression) and TTL 30, then a foreign heartbeat 1 s after the last: as a
 * 1.1 commit appended on both, and as a 1.2 commit replacing the tip. */
START_TEST(test_floor_same_on_replaced_chain)
{
	static const struct {
		int64_t ttl;
		int64_t at[8];
	} runs[] = {
	        {25, {2, 4, 5, 7, 8, 10, 0}},
	        {30, {10, 12, 13, 16, 19, 20, 0}},
	};
	size_t k;

	for (k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		fx a, b;
		char tok[LEASE_TOKEN_HEXSZ + 1];
		lease_op_options o;
		lease_result r;
		lease_payload p;
		double fa = 0, fb = 0;
		int i, replace;

		fx_mem(&a);
		fx_mem(&b);
		must_acquire(&a, "l", ALICE, runs[k].ttl, tok);
		ck_assert(cur(&a, "l", &p, NULL));
		put_payload_as(&b, "l", "acquire", "l", "1.1.0", ALICE, tok, "claimed",
		               p.transitions, p.acquired_at, p.expires_at, p.ttl_seconds);
		o = opt(ALICE, tok, 0);
		for (i = 0; runs[k].at[i]; i++) {
			a.clk.t = b.clk.t = T0 + runs[k].at[i];
			ck_assert_int_eq(lease_heartbeat(&r, a.st, "l", &o), 0);
			if (r.status == LEASE_STATUS_RENEWED) {
				ck_assert(cur(&a, "l", &p, NULL));
				put_payload_as(&b, "l", "heartbeat", "l", "1.1.0", ALICE, tok,
				               "claimed", p.transitions, p.acquired_at,
				               p.expires_at, p.ttl_seconds);
			}
			ck_assert_int_eq(floor_flag(&a, "l", &fa), floor_flag(&b, "l", &fb));
			ck_assert(fa == fb);
		}
		ck_assert_uint_eq(chain_len(&a, "l"), 2);
		ck_assert_uint_gt(chain_len(&b, "l"), 4);
		ck_assert_int_eq(floor_flag(&a, "l", &fa), -1);
		for (replace = 0; replace <= 1; replace++) {
			fx c;
			lease_payload q;
			char ctok[LEASE_TOKEN_HEXSZ + 1];

			/* a third store: a's chain with the foreign heartbeat on it */
			fx_mem(&c);
			must_acquire(&c, "l", ALICE, runs[k].ttl, ctok);
			o = opt(ALICE, ctok, 0);
			for (i = 0; runs[k].at[i]; i++) {
				c.clk.t = T0 + runs[k].at[i];
				ck_assert_int_eq(lease_heartbeat(&r, c.st, "l", &o), 0);
			}
			ck_assert(cur(&c, "l", &q, NULL));
			foreign_heartbeat(&c, "l", &q, q.expires_at + 1, replace,
			                  replace ? SDLC_VERSION : "1.1.0");
			if (replace)
				ck_assert_uint_eq(chain_len(&c, "l"), 2);
			ck_assert_int_eq(floor_flag(&c, "l", &fa), 1);
			ck_assert(fa == (double)lease_heartbeat_floor(runs[k].ttl));
			fx_free(&c);
		}
		ck_assert(cur(&b, "l", &p, NULL));
		put_payload_as(&b, "l", "heartbeat", "l", "1.1.0", ALICE, tok, "claimed",
		               p.transitions, p.acquired_at, p.expires_at + 1, p.ttl_seconds);
		ck_assert_int_eq(floor_flag(&b, "l", &fb), 1);
		ck_assert(fb == (double)lease_heartbeat_floor(runs[k].ttl));
		fx_free(&a);
		fx_free(&b);
	}
}
END_TEST

/* A pre-bump payload: heartbeat time approximated with the TTL the next
 * payload gets, said so in approximate_ttl; its TTL becomes 300. */
START_TEST(test_floor_prebump_approximate)
{
	fx f;
	lease_op_options o;
	lease_result r;
	lease_payload p;

	fx_mem(&f);
	put_payload(&f, "l", "1.0.0", ALICE, TOK1, "working", 3, T0 - 100, T0 + 300, -1);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.has_ttl, 0);
	o = opt(ALICE, TOK1, 0);
	f.clk.t = T0 + 10; /* heartbeat time ~T0, floor 30 s */
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_NOT_DUE, &r);
	ck_assert_int_eq(r.approximate_ttl, 1);
	f.clk.t = T0 + 40;
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_RENEWED, &r);
	ck_assert_int_eq(r.approximate_ttl, 1);
	ck_assert(cur(&f, "l", &p, NULL));
	ck_assert_int_eq(p.has_ttl, 1);
	ck_assert_int_eq(p.ttl_seconds, 300);
	ck_assert_int_eq(p.expires_at, T0 + 340);
	ck_assert_int_eq(p.transitions, 3);
	ck_assert_str_eq(p.lease_token, TOK1);
	ck_assert_str_eq(p.sdlc_version, SDLC_VERSION);
	/* now exact */
	f.clk.t = T0 + 45;
	op_is(&f, lease_heartbeat, "l", &o, LEASE_STATUS_NOT_DUE, &r);
	ck_assert_int_eq(r.approximate_ttl, 0);
	fx_free(&f);
}
END_TEST

/* Issue 17: the pure rules of lease/policy.h at their edges. */
START_TEST(test_policy_rules)
{
	lease_payload p;

	ck_assert_int_eq(lease__policy_floor(25), 2);
	ck_assert(!lease__policy_below_floor(2, 25));
	ck_assert(lease__policy_below_floor(1, 25));
	ck_assert_int_eq(lease__policy_interval(300, 0), 100);
	ck_assert_int_eq(lease__policy_interval(300, 200), 150); /* never above ttl/2 */
	ck_assert_int_eq(lease__policy_interval(1, 0), 1);
	ck_assert(lease__policy_lost_deadline(1000, 60) == 1000 - 12.0);
	memset(&p, 0, sizeof(p));
	p.has_ttl = 1;
	p.ttl_seconds = 0;
	ck_assert_int_eq(lease__policy_kept_ttl(&p, 5, NULL), LEASE_TTL_DEFAULT);
	p.ttl_seconds = 2;
	ck_assert_int_eq(lease__policy_kept_ttl(&p, 5, NULL), 5);
	p.acquired_at = 200;
	lease__policy_released(&p, 100); /* never before acquired_at */
	ck_assert_int_eq(p.expires_at, 200);
	ck_assert_int_eq(p.phase, LEASE_PHASE_RELEASED);
	ck_assert_int_eq(lease__policy_next_generation(-1), 0);
	ck_assert_int_eq(lease__policy_next_generation(9), 10);
}
END_TEST

START_TEST(test_time_helpers)
{
	lease_payload p;
	int approx = -1;

	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(lease_heartbeat_floor(300), 30);
	ck_assert_int_eq(lease_heartbeat_floor(5), 1);
	ck_assert_int_eq(lease_heartbeat_interval(300), 100);
	ck_assert_int_eq(lease_heartbeat_interval(2), 1);
	ck_assert(lease_kill_grace(300) == 10.0);
	ck_assert(lease_kill_grace(30) == 5.0);
	p.expires_at = 1000;
	p.has_ttl = 1;
	p.ttl_seconds = 60;
	ck_assert_int_eq(lease_payload_heartbeat_time(&p, 0, &approx), 940);
	ck_assert_int_eq(approx, 0);
	ck_assert(lease_lost_at(&p, 0) == 1000.0 - 12.0);
	p.has_ttl = 0;
	ck_assert_int_eq(lease_payload_heartbeat_time(&p, 0, &approx), 700);
	ck_assert_int_eq(approx, 1);
	ck_assert_int_eq(lease_payload_heartbeat_time(&p, 100, NULL), 900);
	ck_assert(lease_lost_at(&p, 30) == 1000.0 - 7.0);
}
END_TEST

/* every <= ttl/2 (protocol.md §6 "Ceiling"), one spelling: the library's
 * check, the interval's clamp and the public face the CLI's messages use
 * agree, odd TTLs included. */
START_TEST(test_policy_every_ceiling)
{
	static const int64_t ttls[] = {5, 25, 60, 61, 300, 86400};
	size_t i;

	for (i = 0; i < sizeof(ttls) / sizeof(ttls[0]); i++) {
		int64_t ttl = ttls[i], max = lease__policy_every_max(ttl), out = 0;

		ck_assert_int_eq(max, ttl / 2);
		ck_assert_int_eq(lease_heartbeat_every_max(ttl), max);
		ck_assert_int_eq(lease_heartbeat_every(&out, ttl, max), 0);
		ck_assert_int_eq(out, max);
		ck_assert_int_eq(lease_heartbeat_every(&out, ttl, max + 1), LEASE_EINVALID);
		ck_assert_int_eq(lease__policy_interval(ttl, max + 1), max);
	}
}
END_TEST

/* Half the TTL left (protocol.md §6, F15), one spelling: a heartbeat is due
 * below it whatever the floor, and a write landing below it is no success. */
START_TEST(test_policy_half_ttl_left)
{
	ck_assert(!lease__policy_less_than_half_left(30, 60));
	ck_assert(lease__policy_less_than_half_left(29, 60));
	ck_assert(!lease__policy_less_than_half_left(13, 25)); /* 26 >= 25 */
	ck_assert(lease__policy_less_than_half_left(12, 25));
	ck_assert(lease__policy_less_than_half_left(-1, 60)); /* already expired */
	/* due below half even inside the floor (since 0 < floor 6) */
	ck_assert(lease__policy_heartbeat_due(0, 60, 0, 29, 60));
	ck_assert(!lease__policy_heartbeat_due(0, 60, 0, 30, 60));
}
END_TEST

/* The lost deadline's margin, kill_grace + 2 s (protocol.md §6), one
 * spelling: the deadline is expiry minus it, for short and long TTLs. */
START_TEST(test_policy_lost_margin)
{
	ck_assert(lease__policy_lost_margin(300) == 12.0);
	ck_assert(lease__policy_lost_margin(30) == 7.0);
	ck_assert(lease__policy_lost_margin(0) == 2.0);
	ck_assert(lease__policy_lost_deadline(1000, 300) == 1000 - lease__policy_lost_margin(300));
	ck_assert(lease__policy_lost_deadline(1000, 30) == 993.0);
}
END_TEST

/* The heartbeat time, expires_at - TTL (protocol.md §6), one spelling:
 * exact with ttl_seconds, approximate with the TTL assumed (the default when
 * none), and the public face agrees. */
START_TEST(test_policy_heartbeat_time)
{
	lease_payload p;
	int approx = -1;

	memset(&p, 0, sizeof(p));
	p.expires_at = 1000;
	p.has_ttl = 1;
	p.ttl_seconds = 60;
	ck_assert_int_eq(lease__policy_heartbeat_time(&p, 100, &approx), 940);
	ck_assert_int_eq(approx, 0);
	p.has_ttl = 0;
	ck_assert_int_eq(lease__policy_heartbeat_time(&p, 100, &approx), 900);
	ck_assert_int_eq(approx, 1);
	ck_assert_int_eq(lease__policy_heartbeat_time(&p, 0, NULL), 1000 - LEASE_TTL_DEFAULT);
	ck_assert_int_eq(lease_payload_heartbeat_time(&p, 100, NULL),
	                 lease__policy_heartbeat_time(&p, 100, NULL));
}
END_TEST

/* Expiry with the skew allowance (protocol.md §4), one spelling: past it
 * at expires_at + margin + 1, the takeover instant the waits aim at; a
 * released payload never expires. */
START_TEST(test_policy_expiry)
{
	lease_payload p;

	ck_assert(!lease__policy_past_expiry(1000, 1005, 5));
	ck_assert(lease__policy_past_expiry(1000, 1006, 5));
	ck_assert_int_eq(lease__policy_takeover_at(1000, 5), 1006);
	ck_assert(lease__policy_past_expiry(1000, lease__policy_takeover_at(1000, 5), 5));
	ck_assert(!lease__policy_past_expiry(1000, lease__policy_takeover_at(1000, 5) - 1, 5));
	memset(&p, 0, sizeof(p));
	p.phase = LEASE_PHASE_CLAIMED;
	p.expires_at = 1000;
	ck_assert(lease__policy_expired(&p, 1006, 5));
	p.phase = LEASE_PHASE_RELEASED;
	ck_assert(!lease__policy_expired(&p, 1006, 5));
}
END_TEST

/* A live payload goes stale ttl/10 after it was built (protocol.md §5,
 * F15): the engine plans it again before its CAS. */
START_TEST(test_policy_payload_stale)
{
	ck_assert(!lease__policy_payload_stale(100, 106, 60));
	ck_assert(lease__policy_payload_stale(100, 107, 60));
	ck_assert(!lease__policy_payload_stale(100, 102, 25)); /* 20 <= 25 */
	ck_assert(lease__policy_payload_stale(100, 103, 25));
	ck_assert(!lease__policy_payload_stale(100, 100, 5));
}
END_TEST

Suite *policy_suite(void);
Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *floor_tc = tcase_create("floor");
	TCase *rules = tcase_create("rules");

	tcase_add_test(floor_tc, test_floor_not_due);
	tcase_add_test(floor_tc, test_floor_never_below_half_ttl);
	tcase_add_test(floor_tc, test_floor_prebump_approximate);
	tcase_add_test(floor_tc, test_floor_runtime_agrees_with_reconcile);
	tcase_add_test(floor_tc, test_floor_same_on_replaced_chain);
	suite_add_tcase(s, floor_tc);

	tcase_add_test(rules, test_policy_rules);
	tcase_add_test(rules, test_time_helpers);
	tcase_add_test(rules, test_policy_every_ceiling);
	tcase_add_test(rules, test_policy_half_ttl_left);
	tcase_add_test(rules, test_policy_lost_margin);
	tcase_add_test(rules, test_policy_heartbeat_time);
	tcase_add_test(rules, test_policy_expiry);
	tcase_add_test(rules, test_policy_payload_stale);
	suite_add_tcase(s, rules);
	return s;
}
