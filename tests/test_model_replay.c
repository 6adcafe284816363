/* Counterexamples found by the SPIN model (docs/model/), replayed on the local
 * store with an injected clock, so each fix stays fixed (issue 10).
 *
 * Shortened-TTL belief: a holder known to expire at E heartbeats with a
 * shorter TTL; the write lands but its answer is lost and settling finds less
 * than half the TTL left (so §5 reports no success). The stored expires_at is
 * now earlier than E. The heartbeat service must take the stored expiry for
 * its lost deadline, or guarded work would outlive a lease others may take. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "reflease.h"
#include "store/backend.h"
#include "support/passthru.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/testrepo.h"

/* A transport over the local store whose replace applies the write, then
 * lets @c jump seconds of store time pass and loses the answer. */
typedef struct late_transport {
	passthru p; /* first */
	double *clock;
	double jump;
	int armed;
} late_transport;

static int late_replace(lease_transport *t, const char *ref, const lease_oid *o, const lease_oid *n)
{
	late_transport *l = (late_transport *)t;
	int rc = l->p.inner->replace_ref(l->p.inner, ref, o, n);

	if (rc == 0 && l->armed) {
		*l->clock += l->jump;
		return LEASE_ENET; /* applied; the answer never arrives */
	}
	return rc;
}

static double fake_clock;

static int64_t fake_now(void *payload)
{
	(void)payload;
	return (int64_t)fake_clock;
}

static int fake_sleep(double seconds, void *payload)
{
	(void)payload;
	fake_clock += seconds;
	return 0;
}

typedef struct seen {
	int retries;
	int64_t expires_at;
	double lost_at;
	volatile sig_atomic_t stop;
} seen;

static void on_report(const lease_keep_report *rep, void *payload)
{
	seen *s = payload;

	if (rep->event == LEASE_KEEP_RETRY && s->retries++ == 0) {
		s->expires_at = rep->expires_at;
		s->lost_at = rep->lost_at;
		s->stop = 1;
	}
}

START_TEST(test_shortened_ttl_lost_deadline_follows_stored_expiry)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_op_options op = LEASE_OP_OPTIONS_INIT;
	lease_keep_options ko = LEASE_KEEP_OPTIONS_INIT;
	late_transport *late;
	lease_transport *inner = NULL;
	lease_store *st = NULL;
	lease_result acq, last, now_state;
	char dir[512], err[256];
	seen s;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	ck_assert_ptr_nonnull(late = calloc(1, sizeof(*late)));
	ck_assert_int_eq(lease__local_transport_new(&inner, dir, NULL, err, sizeof(err)), 0);
	passthru_init(&late->p, inner); /* the ref alone is read through read_ref too */
	late->p.base.replace_ref = late_replace;
	late->clock = &fake_clock;
	late->jump = 45;
	fake_clock = 1800000000.0;
	so.clock.now = fake_now;
	ck_assert_int_eq(lease_store_open_transport(&st, &late->p.base, &so, err, sizeof(err)), 0);

	/* The holder acquires with ttl 300: it knows expires_at = t0 + 300. */
	op.owner = "alice";
	op.host = "h1";
	op.ttl_seconds = 300;
	ck_assert_int_eq(lease_acquire(&acq, st, "job", &op), 0);

	/* It keeps the lease with a shorter TTL (60 s); every write lands late. */
	late->armed = 1;
	storefix_keep_from(&ko, "alice", "h1", &acq, 60, 300);
	ko.sleep = fake_sleep;
	ko.report = on_report;
	ko.report_payload = &s;
	ko.stop = &s.stop;
	lease_keep(&last, st, "job", &ko);
	late->armed = 0;

	ck_assert_int_ge(s.retries, 1);
	ck_assert_int_eq(lease_status(&now_state, st, "job"), 0);
	ck_assert(now_state.has_payload);
	/* the store's expiry moved earlier than the one first known ... */
	ck_assert_int_lt(now_state.payload.expires_at, acq.payload.expires_at);
	/* ... and the service's belief follows it: lost before that expiry */
	ck_assert_int_eq(s.expires_at, now_state.payload.expires_at);
	ck_assert(s.lost_at <=
	          (double)now_state.payload.expires_at - (lease_kill_grace(60) + 2.0) + 1e-9);
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

Suite *model_replay_suite(void)
{
	return suitefix_suite("model_replay", "counterexamples", 30, NULL,
	                      ONE(test_shortened_ttl_lost_deadline_follows_stored_expiry), NULL);
}
