/* The lease runtime on the GitHub backend, against the fake GitHub server:
 * the fault matrix (each write path — acquire, takeover, heartbeat,
 * transition, release — × each injected fault → the right outcome, with no
 * lease lost and no second holder), request budgets per operation, 16 real
 * processes contending through the fake, and the field cases F02, F09, F10,
 * F24, F25, F26 as named tests (issue 6 acceptance). */
#define _DEFAULT_SOURCE
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"
#include "support/fakegh.h"
#include "support/ghstore.h"
#include "support/logcap.h"
#include "support/suitefix.h"
#include "support/vclock.h"

#define CANARY "ghp_CANARYruntime0123456789abcdefCANARY"
#define BOBTOK "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ALITOK "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static fakegh *fk;
static lease_store *st;
/* The fake GitHub every store of a test opens on (start_fake). */
static char api_url[128];
/* The virtual clock of the stores a test opens (NULL = the process's time). */
static vclock *gh_vc;

static int open_gh(lease_store **out, int timeout_s, int verify_ms)
{
	lease_store_options o;

	ghstore_options(&o, api_url, CANARY, timeout_s, verify_ms, gh_vc, logcap);
	return ghstore_open(out, &o);
}

/* The stores' and the fake's virtual time (issue 26): retries, backoff,
 * verify polls, read lag and pacing cost no real time. */
static vclock suite_vc;

static void start_fake(const fakegh_options *o)
{
	gh_vc = &suite_vc;
	ck_assert_int_eq(ghstore_start(&fk, o, &suite_vc), 0);
	snprintf(api_url, sizeof(api_url), "%s", fakegh_url(fk));
	logcap_reset();
}

/* A fake started with @p fo (NULL: the defaults) and the test's store open on it. */
static void start_open(const fakegh_options *fo)
{
	start_fake(fo);
	ck_assert_int_eq(open_gh(&st, 5, 1000), 0);
}

static void setup(void)
{
	start_open(NULL);
}

static void teardown(void)
{
	ghstore_stop(&st, &fk);
	gh_vc = NULL;
}

/* The test again on a fake started with @p fo (a server of another kind). */
static void restart_open(const fakegh_options *fo)
{
	teardown();
	start_open(fo);
}

static lease_op_options who(const char *owner, const char *token)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = owner;
	o.host = "runner-1";
	o.lease_token = token;
	o.ttl_seconds = 300;
	return o;
}

/* Plant a payload commit for @p name as @p owner with the given times
 * (relative to the store's now), bypassing the runtime. */
static void plant(lease_oid *out, const char *name, const char *owner, const char *token,
                  int64_t acquired_rel, int64_t expires_rel)
{
	lease_ref_state s;
	lease_oid parent;
	char *m = NULL;
	int64_t now;
	int has_parent;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, name), 0);
	has_parent = s.present;
	parent = s.oid;
	lease_ref_state_clear(&s);
	now = lease_store_now(st);
	m = ghstore_message(name, owner, token, LEASE_PHASE_CLAIMED, 1, now + acquired_rel,
	                    now + expires_rel);
	ck_assert_int_eq(lease_write_commit(out, st, has_parent ? &parent : NULL, m), 0);
	free(m);
	if (has_parent)
		ck_assert_int_eq(lease_cas_replace(st, name, &parent, out), 0);
	else
		ck_assert_int_eq(lease_cas_create(st, name, out), 0);
}

/* The lease as the fake's repository holds it. */
static int tip(const char *name, lease_oid *oid)
{
	return ghstore_ref_at(fk, name, oid);
}

static void tip_payload(const char *name, lease_ref_state *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(lease_fetch_ref(s, st, name), 0);
	ck_assert_int_eq(s->present, 1);
	ck_assert_int_eq(s->payload_rc, 0);
}

/* ---- fault matrix through the runtime ---------------------------------------- */

enum wop { W_ACQUIRE, W_TAKEOVER, W_HEARTBEAT, W_TRANSITION, W_RELEASE, W_N };
static const char *const wop_names[W_N] = {"acquire", "takeover", "heartbeat", "transition",
                                           "release"};
static const char *const wop_ok[W_N] = {"acquired", "acquired", "renewed", "transitioned",
                                        "released"};

struct rt_fault {
	const char *id;
	int write_ep; /* 1: on the write endpoint (create / updateRefs); 0: as given */
	fakegh_endpoint ep;
	fakegh_fault_kind kind;
	int count, arg;
	int lag_ms;
	int rc; /* expected (0 = the op's success status); -99: success for
	         * create-based acquire, rc_replace for the replace paths */
	int rc_replace;
};

static const struct rt_fault rt_faults[] = {
        {"none", 1, 0, 0, 0, 0, 0, 0, 0},
        {"5xx-before-applying", 1, 0, FAKEGH_FAULT_5XX, 1, 0, 0, 0, 0},
        {"drop-answer-once", 1, 0, FAKEGH_FAULT_DROP, 1, 0, 0, 0, 0},
        {"drop-answer-twice", 1, 0, FAKEGH_FAULT_DROP, 2, 0, 0, 0, 0},
        {"commit-5xx", 0, FAKEGH_COMMIT_POST, FAKEGH_FAULT_5XX, 1, 0, 0, 0, 0},
        {"read-5xx", 0, FAKEGH_GQL_QUERY, FAKEGH_FAULT_5XX, 2, 0, 0, 0, 0},
        {"read-lag", 1, 0, 0, 0, 0, 300, 0, 0},
        {"F24-403-retry-after", 1, 0, FAKEGH_FAULT_403_RETRY, 1, 100, 0, LEASE_ERATELIMIT, 0},
        {"F24-429-no-header", 1, 0, FAKEGH_FAULT_429_NOHDR, 1, 0, 0, LEASE_ERATELIMIT, 0},
        {"F24-graphql-rate-limited", 1, 0, FAKEGH_FAULT_GQL_RATE_LIMITED, 1, 100, 0, -99,
         LEASE_ERATELIMIT},
        {"F25-422-rules", 1, 0, FAKEGH_FAULT_422_RULES, 1, 0, 0, LEASE_EAUTH, 0},
        {"F25-403-forbidden", 1, 0, FAKEGH_FAULT_403_FORBIDDEN, 1, 0, 0, LEASE_EAUTH, 0},
        {"401", 1, 0, FAKEGH_FAULT_401, 1, 0, 0, LEASE_EAUTH, 0},
        {"no-updateRefs", 1, 0, FAKEGH_FAULT_NO_UPDATEREFS, 1, 0, 0, -99, LEASE_ECONFIG},
};
#define NRT (sizeof(rt_faults) / sizeof(rt_faults[0]))

START_TEST(fault_matrix_runtime)
{
	const struct rt_fault *f = &rt_faults[_i % NRT];
	enum wop w = (enum wop)(_i / NRT);
	lease_op_options o = who("alice", ALITOK);
	lease_result r;
	lease_ref_state s;
	lease_oid before, after;
	int rc, expect, had;
	fakegh_endpoint ep;

	memset(&before, 0, sizeof(before));
	switch (w) {
	case W_ACQUIRE: break;
	case W_TAKEOVER: plant(&before, "job", "bob", BOBTOK, -1000, -100); break;
	default: plant(&before, "job", "alice", ALITOK, -200, 100); break; /* due for a heartbeat */
	}
	had = tip("job", &before);
	ep = f->write_ep ? (w == W_ACQUIRE ? FAKEGH_REF_CREATE : FAKEGH_GQL_MUTATION) : f->ep;
	if (f->kind)
		fakegh_fault(fk, ep, f->kind, f->count, f->arg);
	if (f->lag_ms)
		fakegh_set_read_lag(fk, f->lag_ms);
	memset(&r, 0, sizeof(r));
	switch (w) {
	case W_ACQUIRE:
	case W_TAKEOVER:
		o.lease_token = NULL;
		rc = lease_acquire(&r, st, "job", &o);
		break;
	case W_HEARTBEAT: rc = lease_heartbeat(&r, st, "job", &o); break;
	case W_TRANSITION:
		o.to = LEASE_PHASE_WORKING;
		rc = lease_transition(&r, st, "job", &o);
		break;
	default: rc = lease_release(&r, st, "job", &o); break;
	}
	expect = f->rc == -99 ? (w == W_ACQUIRE ? 0 : f->rc_replace) : f->rc;
	if (rc != expect)
		fprintf(stderr, "%s x %s: rc %d (%s) status %s: %s\n", wop_names[w], f->id, rc,
		        lease_error_id(rc), lease_status_name(r.status), r.message);
	ck_assert_msg(rc == expect, "%s x %s: rc %d, expected %d", wop_names[w], f->id, rc, expect);
	fakegh_set_read_lag(fk, 0);
	fakegh_clear_faults(fk);
	if (expect == 0) {
		ck_assert_str_eq(lease_status_name(r.status), wop_ok[w]);
		tip_payload("job", &s);
		/* the tip is this operation's write */
		ck_assert(lease_oid_equal(&s.oid, &r.oid));
		switch (w) {
		case W_ACQUIRE:
		case W_TAKEOVER:
			ck_assert_str_eq(s.payload.owner, "alice");
			ck_assert_str_eq(s.payload.lease_token, r.payload.lease_token);
			ck_assert_str_ne(s.payload.lease_token, BOBTOK);
			break;
		case W_HEARTBEAT:
		case W_TRANSITION:
			ck_assert_str_eq(s.payload.lease_token, ALITOK); /* not lost */
			ck_assert(s.payload.phase ==
			          (w == W_TRANSITION ? LEASE_PHASE_WORKING : LEASE_PHASE_CLAIMED));
			break;
		default: ck_assert(s.payload.phase == LEASE_PHASE_RELEASED); break;
		}
		/* exactly one write landed: the tip's parent is the state before */
		if (had)
			ck_assert(s.commit.has_parent &&
			          lease_oid_equal(&s.commit.parent, &before));
		lease_ref_state_clear(&s);
	} else {
		/* refused: nothing changed, no lease lost, no second holder */
		ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
		ck_assert_int_eq(tip("job", &after), had);
		if (had)
			ck_assert(lease_oid_equal(&after, &before));
	}
	ck_assert(!strstr(logcap_buf, CANARY));
	ck_assert(!strstr(r.message, CANARY));
}
END_TEST

/* ---- request budgets (issue 6 acceptance; counted at the fake) ------------------ */

/* A fresh store handle per operation = one CLI invocation. */
static unsigned counted(int (*op)(lease_result *, lease_store *, const char *,
                                  const lease_op_options *),
                        lease_op_options *o, const char *want)
{
	lease_store *s2 = NULL;
	lease_result r;
	unsigned n;

	ck_assert_int_eq(open_gh(&s2, 5, 1000), 0);
	fakegh_reset_counts(fk);
	ck_assert_int_eq(op(&r, s2, "budget", o), 0);
	ck_assert_str_eq(lease_status_name(r.status), want);
	n = fakegh_count(fk, FAKEGH_ANY);
	if (getenv("FAKEGH_DEBUG")) {
		size_t i;
		char line[700];
		for (i = 0; i < fakegh_log_size(fk); i++)
			if (fakegh_log_line(fk, i, line, sizeof(line)) == 0)
				fprintf(stderr, "  %s: %s\n", want, line);
	}
	if (o->lease_token == NULL && r.holds_token) {
		static char tok[LEASE_TOKEN_HEXSZ + 1];
		memcpy(tok, r.payload.lease_token, sizeof(tok));
		o->lease_token = tok;
	}
	lease_store_free(s2);
	return n;
}

START_TEST(request_budget_per_invocation)
{
	lease_op_options o = who("alice", NULL);
	lease_namespace ns;
	lease_oid x;
	unsigned n;
	int i;
	char name[32];

	/* the namespace's very first lease, in a fresh process: read, a REST
	 * confirmation of the absence (GraphQL may not see refs/<ns>/, §9), the
	 * runtime's archive listing (transitions after a prune), commit, create,
	 * verify */
	n = counted(lease_acquire, &o, "acquired");
	fprintf(stderr, "budget: first acquire in the namespace %u requests\n", n);
	ck_assert_uint_le(n, 6);
	/* any later acquire of a fresh name: GraphQL shows the namespace */
	{
		lease_op_options o2 = who("carol", NULL);
		lease_store *s2 = NULL;
		lease_result r2;
		ck_assert_int_eq(open_gh(&s2, 5, 1000), 0);
		fakegh_reset_counts(fk);
		ck_assert_int_eq(lease_acquire(&r2, s2, "budget2", &o2), 0);
		n = fakegh_count(fk, FAKEGH_ANY);
		fprintf(stderr, "budget: acquire %u requests\n", n);
		ck_assert_uint_le(n, 5);
		lease_store_free(s2);
	}
	/* make the heartbeat due: plant the same tenure with an old heartbeat */
	plant(&x, "budget", "alice", o.lease_token, -200, 100);
	n = counted(lease_heartbeat, &o, "renewed");
	fprintf(stderr, "budget: heartbeat %u requests\n", n);
	ck_assert_uint_le(n, 4);
	o.to = LEASE_PHASE_REVIEW;
	n = counted(lease_transition, &o, "transitioned");
	fprintf(stderr, "budget: transition %u requests\n", n);
	ck_assert_uint_le(n, 4);
	n = counted(lease_release, &o, "released");
	fprintf(stderr, "budget: release %u requests\n", n);
	ck_assert_uint_le(n, 4);

	for (i = 0; i < 120; i++) {
		snprintf(name, sizeof(name), "sweep%03d", i);
		plant(&x, name, "bob", BOBTOK, -10, 290);
	}
	fakegh_reset_counts(fk);
	memset(&ns, 0, sizeof(ns));
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	n = fakegh_count(fk, FAKEGH_ANY);
	fprintf(stderr, "budget: namespace sweep of %zu leases %u requests\n", ns.count, n);
	ck_assert_uint_le(n, (unsigned)((ns.count + 99) / 100 + 2));
	lease_namespace_clear(&ns);
}
END_TEST

/* Sets (issue 27, protocol.md "Sets"): a set operation of k leases costs one
 * read of every member (one GraphQL query), k commit writes, one updateRefs
 * mutation and one verifying read of every member — k + 3 — and a set
 * acquire on fresh names one REST listing more (GraphQL's null confirmed,
 * each member's archive listing served from it). Each a fresh store handle
 * (one CLI invocation) on a store clock @p offset s ahead. Was 3k + 1
 * (fresh: 15 for k = 3): every member read, then re-read, on its own. */
static int64_t set_clock_offset;
static int64_t set_clock(void *payload)
{
	(void)payload;
	return (int64_t)time(NULL) + set_clock_offset;
}

typedef int (*set_fn)(lease_set_result *, lease_store *, const char *const *, size_t,
                      const lease_op_options *);

static unsigned set_counted(set_fn fn, const lease_op_options *o, const char *want,
                            lease_set_result *r)
{
	static const char *const names[] = {"s-a", "s-b", "s-c"};
	lease_store_options so;
	lease_store *s2 = NULL;
	unsigned n;

	ghstore_options(&so, api_url, CANARY, 5, 1000, NULL, NULL);
	so.clock.now = set_clock;
	ck_assert_int_eq(ghstore_open(&s2, &so), 0);
	fakegh_reset_counts(fk);
	ck_assert_msg(fn(r, s2, names, 3, o) == 0, "%s: %s", want, r->message);
	ck_assert_str_eq(lease_status_name(r->status), want);
	n = fakegh_count(fk, FAKEGH_ANY);
	fprintf(stderr, "budget: set %s of 3 leases %u requests\n", want, n);
	/* the write is at its floor: k commits, one mutation */
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 3);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_MUTATION), 1);
	lease_store_free(s2);
	return n;
}

START_TEST(set_request_budget_per_invocation)
{
	lease_set_result *r = calloc(1, sizeof(*r));
	lease_op_options o = who("alice", NULL);
	char tok[LEASE_TOKEN_HEXSZ + 1];

	ck_assert_ptr_nonnull(r);
	set_clock_offset = 0;
	ck_assert_uint_eq(set_counted(lease_acquire_set, &o, "acquired", r), 3 + 4);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_MATCHING), 1);
	memcpy(tok, r->members[0].payload.lease_token, sizeof(tok));
	o.lease_token = tok;
	set_clock_offset = 200; /* past ttl/3 of the 300 s TTL: the heartbeat is due */
	ck_assert_uint_eq(set_counted(lease_heartbeat_set, &o, "renewed", r), 3 + 3);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_QUERY), 2);
	o.to = LEASE_PHASE_WORKING;
	ck_assert_uint_eq(set_counted(lease_transition_set, &o, "transitioned", r), 3 + 3);
	ck_assert_uint_eq(set_counted(lease_release_set, &o, "released", r), 3 + 3);
	o.lease_token = NULL;
	o.to = LEASE_PHASE_NONE;
	ck_assert_uint_eq(set_counted(lease_acquire_set, &o, "acquired", r), 3 + 3);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_QUERY), 2);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_GET), 0);
	free(r);
}
END_TEST

/* ---- 16 processes through the fake ------------------------------------------------ */

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One contender: ITER times acquire (polling), hold, release; print tenures. */
static int contender(int idx, int iters, FILE *out)
{
	lease_store *s2 = NULL;
	char owner[32];
	unsigned int seed = (unsigned int)getpid();
	int i, rc = 0;

	if (open_gh(&s2, 30, 10000) < 0)
		return 10;
	snprintf(owner, sizeof(owner), "proc-%d", idx);
	for (i = 0; i < iters && rc == 0; i++) {
		lease_op_options o = who(owner, NULL);
		char token[LEASE_TOKEN_HEXSZ + 1];
		lease_result r;
		double t0, t1;

		o.ttl_seconds = 60;
		/* held, or a CAS conflict after the runtime's bounded rounds (a
		 * temporary failure, exit 75, under heavy contention): try again */
		while ((rc = lease_acquire(&r, s2, "shared", &o)) == LEASE_EHELD ||
		       rc == LEASE_ECAS) {
			struct timespec ts = {0, (long)(5 + rand_r(&seed) % 20) * 1000000L};
			nanosleep(&ts, NULL);
		}
		if (rc < 0) {
			fprintf(stderr, "%s acquire: %s %s\n", owner, lease_error_id(rc),
			        r.message);
			break;
		}
		t0 = realtime();
		memcpy(token, r.payload.lease_token, sizeof(token));
		o.lease_token = token;
		t1 = realtime();
		if ((rc = lease_release(&r, s2, "shared", &o)) < 0 ||
		    r.status != LEASE_STATUS_RELEASED) {
			fprintf(stderr, "%s release: %s %s\n", owner, lease_status_name(r.status),
			        r.message);
			rc = rc < 0 ? rc : -1;
			break;
		}
		fprintf(out, "%s %s %.6f %.6f\n", owner, token, t0, t1);
		fflush(out);
	}
	lease_store_free(s2);
	return rc == 0 ? 0 : 1;
}

struct tenure {
	char owner[32], token[40];
	double start, end;
};

static int tenure_cmp(const void *a, const void *b)
{
	const struct tenure *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const char *build_dir(void)
{
	const char *b = getenv("REFLEASE_BUILD");
	return b && *b ? b : "build";
}

/* The fake runs as its own process here (build/tools/fakegh): the test
 * process stays single-threaded, so forking contenders from it is safe. */
START_TEST(contend_16_processes_no_overlap)
{
	enum { PROCS = 16, ITER = 3 };
	char dir[256], path[512], portfile[512], tool[1024], line[256], url[64];
	struct tenure t[PROCS * ITER];
	pid_t pids[PROCS], fake;
	FILE *fp = NULL;
	size_t n = 0, i, j;
	int ws, tries;

	snprintf(tool, sizeof(tool), "%s/tools/fakegh", build_dir());
	ck_assert_msg(access(tool, X_OK) == 0, "%s missing (make all builds it)", tool);
	snprintf(dir, sizeof(dir), "%s/ghcontend-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	snprintf(path, sizeof(path), "%s/tenures", dir);
	fake = fork();
	ck_assert_int_ge(fake, 0);
	if (fake == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(12);
		execl(tool, tool, "--token", CANARY, "--port-file", portfile, (char *)NULL);
		_exit(13);
	}
	for (tries = 0; tries < 200 && !(fp = fopen(portfile, "r")); tries++)
		usleep(20000);
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	fclose(fp);
	snprintf(url, sizeof(url), "http://127.0.0.1:%ld", strtol(line, NULL, 10));
	snprintf(api_url, sizeof(api_url), "%s", url); /* the contenders' store */
	for (i = 0; i < PROCS; i++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			FILE *out = fopen(path, "a");
			_exit(out ? contender((int)i, ITER, out) : 12);
		}
		pids[i] = pid;
	}
	for (i = 0; i < PROCS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &ws, 0), pids[i]);
		ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "contender %zu: %d", i, ws);
	}
	kill(fake, SIGTERM);
	waitpid(fake, &ws, 0);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	while (fgets(line, sizeof(line), fp)) {
		ck_assert(n < PROCS * ITER);
		ck_assert_int_eq(sscanf(line, "%31s %39s %lf %lf", t[n].owner, t[n].token,
		                        &t[n].start, &t[n].end),
		                 4);
		n++;
	}
	fclose(fp);
	unlink(path);
	unlink(portfile);
	rmdir(dir);
	ck_assert_uint_eq(n, PROCS * ITER);
	qsort(t, n, sizeof(t[0]), tenure_cmp);
	for (i = 1; i < n; i++)
		ck_assert_msg(t[i].start >= t[i - 1].end, "tenures overlap: %s and %s",
		              t[i - 1].owner, t[i].owner);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ck_assert_str_ne(t[i].token, t[j].token);
}
END_TEST

/* ---- issue 15: GitHub as it really answers ---------------------------------------- */

/* #2: a persistent GraphQL rate limit in GitHub's real shape (type
 * RATE_LIMIT, code graphql_rate_limit): a heartbeat stops with
 * rate_limited (75) saying so, writes at most one commit and never treats
 * the refusal as a lost compare-and-swap (no retry loop of new commits). */
START_TEST(heartbeat_under_persistent_graphql_rate_limit)
{
	static const fakegh_fault_kind kinds[] = {FAKEGH_FAULT_GQL_RATE_LIMIT,
	                                          FAKEGH_FAULT_GQL_403_RATE_LIMIT,
	                                          FAKEGH_FAULT_GQL_UNTYPED_RATE_LIMIT};
	lease_op_options o = who("alice", ALITOK);
	lease_result r;
	lease_oid x, now_at;
	int k;

	for (k = 0; k < 3; k++) {
		char name[16];
		lease_store *s2 = NULL;
		snprintf(name, sizeof(name), "rl%d", k);
		plant(&x, name, "alice", ALITOK, -200, 100);
		ck_assert_int_eq(open_gh(&s2, 5, 1000), 0);
		fakegh_reset_counts(fk);
		/* every mutation refused; reset (when given) past the timeout */
		fakegh_fault(fk, FAKEGH_GQL_MUTATION, kinds[k], 1000, 100);
		ck_assert_int_eq(lease_heartbeat(&r, s2, name, &o), LEASE_ERATELIMIT);
		ck_assert_ptr_nonnull(strstr(r.message, "rate limit"));
		ck_assert_uint_le(fakegh_count(fk, FAKEGH_COMMIT_POST), 1);
		ck_assert_uint_le(fakegh_count(fk, FAKEGH_GQL_MUTATION), 1);
		ck_assert_int_eq(tip(name, &now_at), 1);
		ck_assert(lease_oid_equal(&now_at, &x));
		fakegh_clear_faults(fk);
		/* and reads too: nothing written at all */
		fakegh_reset_counts(fk);
		fakegh_fault(fk, FAKEGH_GQL_QUERY, kinds[k], 1000, 100);
		lease_store_free(s2);
		ck_assert_int_eq(open_gh(&s2, 5, 1000), 0);
		ck_assert_int_eq(lease_heartbeat(&r, s2, name, &o), LEASE_ERATELIMIT);
		ck_assert_ptr_nonnull(strstr(r.message, "rate limit"));
		ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 0);
		fakegh_clear_faults(fk);
		lease_store_free(s2);
	}
}
END_TEST

/* #1: a sporadic 422 "Reference update failed" on create still acquires. */
START_TEST(acquire_through_sporadic_422)
{
	lease_op_options o = who("alice", NULL);
	lease_result r;

	fakegh_fault(fk, FAKEGH_REF_CREATE, FAKEGH_FAULT_422_UPDATE_FAILED, 1, 0);
	ck_assert_msg(lease_acquire(&r, st, "sporadic", &o) == 0, "%s", r.message);
	ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_CREATE), 2);
}
END_TEST

/* #5: break --force over a ref whose tip is a blob (not a commit): the
 * replacement cannot be a fast-forward; updateRefs with force:true (its
 * beforeOid is the exact compare-and-swap) takes it at the first attempt. */
START_TEST(break_force_over_blob_tip)
{
	lease_op_options o = who("alice", NULL);
	lease_result r;
	lease_ref_state s;
	char blob[41];

	ck_assert_int_eq(fakegh_write_blob(fk, "not a commit", blob), 0);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/blobby", blob), 0);
	fakegh_reset_counts(fk);
	o.force = 1;
	ck_assert_msg(lease_break(&r, st, "blobby", &o) == 0, "%s", r.message);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_MUTATION), 1);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 1);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, st, "blobby"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert_int_eq(s.commit.is_commit, 1);
	lease_ref_state_clear(&s);
}
END_TEST

/* #4: a renamed repository: acquire, heartbeat and release still work (the
 * redirect is followed on the API host) — never "internal" (70). */
START_TEST(moved_repository_lifecycle)
{
	lease_op_options o = who("alice", NULL);
	lease_result r;
	char token[LEASE_TOKEN_HEXSZ + 1];

	fakegh_set_moved(fk, "");
	ck_assert_msg(lease_acquire(&r, st, "moved", &o) == 0, "%s", r.message);
	memcpy(token, r.payload.lease_token, sizeof(token));
	o.lease_token = token;
	ck_assert_msg(lease_release(&r, st, "moved", &o) == 0, "%s", r.message);
	ck_assert_int_eq(r.status, LEASE_STATUS_RELEASED);
}
END_TEST

/* #7, issue 24 #4: GitHub asks for about one second between
 * content-creating requests in bursts. reconcile --reap and
 * --prune-released over several leases: every write comes >= 1 s after the
 * write before it (measured at the fake), the two writes of one lease's
 * operation too; the report says how long it paced. */
static void assert_paced(size_t from, size_t leases, const lease_reconcile_report *rep)
{
	size_t i, n = fakegh_log_size(fk), k = 0;
	int64_t t[64];
	char line[700];

	for (i = from; i < n && k < 64; i++) {
		ck_assert_int_eq(fakegh_log_line(fk, i, line, sizeof(line)), 0);
		if (strstr(line, " commit-post ") || strstr(line, " create ") ||
		    strstr(line, " updateRefs "))
			t[k++] = fakegh_log_time_ms(fk, i);
	}
	ck_assert_uint_eq(k, 2 * leases); /* two writes per lease */
	for (i = 1; i < k; i++)
		ck_assert_msg(t[i] - t[i - 1] >= 1000, "write %zu only %lld ms after the last", i,
		              (long long)(t[i] - t[i - 1]));
	ck_assert_int_gt(rep->paced_ms, 0);
	/* at most a second before each write */
	ck_assert_int_le(rep->paced_ms, (int64_t)(2 * leases) * 1000);
}

START_TEST(burst_writes_paced_one_second)
{
	lease_reconcile_options ro = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report rep;
	lease_oid x;
	size_t from;
	int i;

	/* on virtual time (start_fake, issue 26): the store's pacing sleeps
	 * move the clock the fake stamps its log with; no real second passes */

	for (i = 0; i < 3; i++) {
		char name[32];
		snprintf(name, sizeof(name), "burst%d", i);
		plant(&x, name, "bob", BOBTOK, -400, -100);
	}
	ro.reap = 1;
	from = fakegh_log_size(fk);
	memset(&rep, 0, sizeof(rep));
	ck_assert_int_eq(lease_reconcile(&rep, st, &ro), 0);
	ck_assert_uint_eq(rep.reaped, 3);
	assert_paced(from, 3, &rep);
	lease_reconcile_report_free(&rep);

	ro.reap = 0;
	ro.prune_days = 0;
	from = fakegh_log_size(fk);
	memset(&rep, 0, sizeof(rep));
	ck_assert_int_eq(lease_reconcile(&rep, st, &ro), 0);
	ck_assert_uint_eq(rep.pruned, 3);
	assert_paced(from, 3, &rep);
	lease_reconcile_report_free(&rep);
}
END_TEST

/* Issue 38: GitHub refuses a set of 8's updateRefs (errors[] in a 200, of a
 * wording reflease does not know) for the whole --timeout 30 while no member
 * moves. The set is written once (8 commits) and its CAS sent again after 1,
 * 2, 4, 8 s — never new commits: at most 16 content-creating requests (before:
 * 12 rounds of 8 commits in 0.8 s, 108 requests, over GitHub's 80 a minute),
 * ending with the store's own message and "nothing changed". */
START_TEST(set_refused_while_nothing_moves)
{
	static const char *const names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"};
	lease_op_options o = who("alice", NULL);
	lease_set_result sr;
	lease_result r;
	lease_store *s30;
	unsigned writes;
	int64_t t0, took;
	size_t i;

	ck_assert_int_eq(open_gh(&s30, 30, 1000), 0);
	fakegh_fault(fk, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_GQL_REFUSED, 1000, 0);
	fakegh_reset_counts(fk);
	t0 = vclock_mono_ms(gh_vc);
	ck_assert_int_eq(lease_acquire_set(&sr, s30, names, 8, &o), LEASE_ECAS);
	took = vclock_mono_ms(gh_vc) - t0;
	writes = fakegh_count(fk, FAKEGH_COMMIT_POST) + fakegh_count(fk, FAKEGH_GQL_MUTATION) +
	         fakegh_count(fk, FAKEGH_REF_CREATE) + fakegh_count(fk, FAKEGH_REF_PATCH) +
	         fakegh_count(fk, FAKEGH_REF_DELETE);
	ck_assert_msg(writes <= 16, "%u content-creating requests (%u commits, %u updateRefs)",
	              writes, fakegh_count(fk, FAKEGH_COMMIT_POST),
	              fakegh_count(fk, FAKEGH_GQL_MUTATION));
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 8); /* written once */
	ck_assert_msg(strstr(sr.message, "Too many ref updates in a short time (FAKE:0038)") &&
	                      strstr(sr.message, "nothing changed") &&
	                      !strstr(sr.message, "kept changing"),
	              "%s", sr.message);
	ck_assert_str_eq(lease_store_last_error(s30), sr.message);
	ck_assert_msg(took >= 15000 && took <= 31000, "gave up after %lld ms", (long long)took);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(lease_status(&r, s30, names[i]), 0);
		ck_assert_int_eq(r.status, LEASE_STATUS_ABSENT);
	}
	/* the refusal ends: the same set is taken */
	fakegh_clear_faults(fk);
	ck_assert_int_eq(lease_acquire_set(&sr, s30, names, 8, &o), 0);
	lease_store_free(s30);
}
END_TEST

/* Issue 38, the same for a single lease on the one engine: GitHub refuses
 * the heartbeat's updateRefs for the whole --timeout 30 while the lease does
 * not move. One commit, the same CAS sent again after 1, 2, 4, 8 s (never a
 * new commit), then cas_failed with the store's own message saying nothing
 * changed — one thing, known (never "outcome unknown"); the lease is as
 * planted, and still alice's. */
START_TEST(single_refused_while_nothing_moves)
{
	lease_op_options o = who("alice", ALITOK);
	lease_result r;
	lease_store *s30;
	lease_oid x, now_at;
	unsigned writes;
	int64_t t0, took;

	plant(&x, "one", "alice", ALITOK, -200, 100);
	ck_assert_int_eq(open_gh(&s30, 30, 1000), 0);
	fakegh_fault(fk, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_GQL_REFUSED, 1000, 0);
	fakegh_reset_counts(fk);
	t0 = vclock_mono_ms(gh_vc);
	ck_assert_int_eq(lease_heartbeat(&r, s30, "one", &o), LEASE_ECAS);
	took = vclock_mono_ms(gh_vc) - t0;
	writes = fakegh_count(fk, FAKEGH_COMMIT_POST) + fakegh_count(fk, FAKEGH_GQL_MUTATION) +
	         fakegh_count(fk, FAKEGH_REF_CREATE) + fakegh_count(fk, FAKEGH_REF_PATCH) +
	         fakegh_count(fk, FAKEGH_REF_DELETE);
	ck_assert_msg(writes <= 16, "%u content-creating requests", writes);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 1); /* written once */
	ck_assert_uint_ge(fakegh_count(fk, FAKEGH_GQL_MUTATION), 4);
	ck_assert_msg(strstr(r.message, "Too many ref updates in a short time (FAKE:0038)") &&
	                      strstr(r.message, "nothing changed") &&
	                      !strstr(r.message, "unknown") && !strstr(r.message, "kept changing"),
	              "%s", r.message);
	ck_assert_str_eq(lease_store_last_error(s30), r.message);
	ck_assert_msg(took >= 15000 && took <= 31000, "gave up after %lld ms", (long long)took);
	ck_assert_int_eq(tip("one", &now_at), 1);
	ck_assert(lease_oid_equal(&now_at, &x));
	/* the refusal ends: the same heartbeat renews */
	fakegh_clear_faults(fk);
	ck_assert_msg(lease_heartbeat(&r, s30, "one", &o) == 0, "%s", r.message);
	lease_store_free(s30);
}
END_TEST

/* ---- field cases ----------------------------------------------------------------- */

/* On a fake started with @p fo (a server of another kind), alice's acquire of
 * @p name is refused as a configuration error (78) with a message naming
 * @p why: its result into *@p r. */
static void acquire_refused_on(const fakegh_options *fo, const char *name, const char *why,
                               lease_result *r)
{
	lease_op_options o = who("alice", NULL);

	restart_open(fo);
	ck_assert_int_eq(lease_acquire(r, st, name, &o), LEASE_ECONFIG);
	ck_assert_ptr_nonnull(strstr(r->message, why));
}

/* A server without updateRefs (an old GHES): the schema probe riding on the
 * first read refuses every write before anything is written — no lease is
 * taken that could never be heartbeated (78). */
START_TEST(no_update_refs_refused_before_writing)
{
	fakegh_options fo;
	lease_op_options o = who("alice", NULL);
	lease_result r;

	memset(&fo, 0, sizeof(fo));
	fo.no_update_refs = 1;
	acquire_refused_on(&fo, "old-ghes", "updateRefs", &r);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 0);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_CREATE), 0);
	/* a set's batched read carries the schema probe of a process's first
	 * read: refused before any commit too */
	{
		static const char *const ab[] = {"old-a", "old-b"};
		lease_set_result *sr = calloc(1, sizeof(*sr));
		lease_store *s2 = NULL;

		ck_assert_int_eq(open_gh(&s2, 5, 1000), 0);
		ck_assert_int_eq(lease_acquire_set(sr, s2, ab, 2, &o), LEASE_ECONFIG);
		ck_assert_msg(strstr(sr->message, "updateRefs") != NULL, "%s", sr->message);
		ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 0);
		ck_assert_uint_eq(fakegh_count(fk, FAKEGH_GQL_MUTATION), 0);
		lease_store_free(s2);
		free(sr);
	}
}
END_TEST

/* transitions continue across a prune on github: the archive listing that
 * comes with the first acquire of a pruned name sees the archive. */
START_TEST(transitions_continue_after_prune)
{
	lease_op_options o = who("alice", NULL);
	lease_payload p;
	lease_result r;
	lease_oid oid;
	char *m = NULL, hex[41];

	memset(&p, 0, sizeof(p));
	snprintf(p.sdlc_version, sizeof(p.sdlc_version), "1.1.0");
	p.version_major = 1;
	p.version_minor = 1;
	snprintf(p.name, sizeof(p.name), "pruned");
	snprintf(p.owner, sizeof(p.owner), "bob");
	snprintf(p.host, sizeof(p.host), "runner-1");
	p.phase = LEASE_PHASE_RELEASED;
	snprintf(p.lease_token, sizeof(p.lease_token), BOBTOK);
	p.transitions = 7;
	p.acquired_at = 1700000000;
	p.expires_at = 1700000100;
	snprintf(p.nonce, sizeof(p.nonce), "0123456789abcdef");
	p.has_ttl = 1;
	p.ttl_seconds = 0;
	ck_assert_int_eq(lease_message_build(&m, &p, LEASE_OP_RELEASE), 0);
	ck_assert_int_eq(lease_write_commit(&oid, st, NULL, m), 0);
	free(m);
	lease_oid_tohex(hex, &oid);
	ck_assert_int_eq(
	        fakegh_set_ref(fk, "refs/leases-archive/pruned/20231114T222820Z-bbbbbbbb", hex), 0);
	lease_store_free(st);
	ck_assert_int_eq(open_gh(&st, 5, 1000), 0); /* a new process */
	fakegh_reset_counts(fk);
	ck_assert_int_eq(lease_acquire(&r, st, "pruned", &o), 0);
	ck_assert_int_eq(r.payload.transitions, 8);
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_ANY), 6); /* + the archive's payload read */
}
END_TEST

/* F02: release during a network blip: retried inside the timeout; success
 * only once the post-state shows the lease released; a blip that outlasts
 * the timeout is an error (69), never a silent 0. */
START_TEST(F02_release_during_network_blip)
{
	lease_op_options o = who("alice", ALITOK);
	lease_result r;
	lease_ref_state s;
	lease_oid x;

	plant(&x, "blip", "alice", ALITOK, -200, 100);
	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_5XX, 1, 0);
	fakegh_fault(fk, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_5XX, 1, 0);
	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_DROP, 1, 0);
	ck_assert_int_eq(lease_release(&r, st, "blip", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_RELEASED);
	tip_payload("blip", &s);
	ck_assert(s.payload.phase == LEASE_PHASE_RELEASED);
	lease_ref_state_clear(&s);

	/* a long outage: every request fails for longer than --timeout */
	plant(&x, "blip2", "alice", ALITOK, -200, 100);
	lease_store_free(st);
	ck_assert_int_eq(open_gh(&st, 2, 500), 0);
	fakegh_fault(fk, FAKEGH_ANY, FAKEGH_FAULT_5XX, 1000, 0);
	ck_assert_int_eq(lease_release(&r, st, "blip2", &o), LEASE_ENET);
	ck_assert_int_eq(r.status, LEASE_STATUS_ERROR);
	fakegh_clear_faults(fk);
	tip_payload("blip2", &s);
	ck_assert(s.payload.phase == LEASE_PHASE_CLAIMED);
	lease_ref_state_clear(&s);
}
END_TEST

/* F09: release of a lease that is already gone, or a re-run cleanup:
 * already_released, exit 0; classified by status and re-read. */
START_TEST(F09_release_already_gone)
{
	lease_op_options o = who("alice", ALITOK);
	lease_result r;
	lease_oid x;

	ck_assert_int_eq(lease_release(&r, st, "gone", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ALREADY_RELEASED);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 0);
	plant(&x, "gone", "alice", ALITOK, -200, 100);
	ck_assert_int_eq(lease_release(&r, st, "gone", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_RELEASED);
	ck_assert_int_eq(lease_release(&r, st, "gone", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ALREADY_RELEASED);
	/* deleted behind our back (pruned) between two cleanups */
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/gone", NULL), 0);
	ck_assert_int_eq(lease_release(&r, st, "gone", &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_ALREADY_RELEASED);
}
END_TEST

/* F10: names that collide as paths: '/' refused before any I/O; a 422 that
 * still comes back (a foreign refs/leases/a/b) is reported as what it is,
 * never as "held". */
START_TEST(F10_path_collision)
{
	lease_op_options o = who("alice", NULL);
	lease_result r;
	char hex[41];

	ck_assert_int_eq(lease_acquire(&r, st, "a/b", &o), LEASE_EINVALID);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY), 0);
	ck_assert_int_eq(fakegh_get_ref(fk, "refs/heads/main", hex), 1);
	ck_assert_int_eq(fakegh_set_ref(fk, "refs/leases/a/b", hex), 0);
	ck_assert_int_eq(lease_acquire(&r, st, "a", &o), LEASE_ECONFIG);
	ck_assert_int_ne(r.status, LEASE_STATUS_HELD);
	ck_assert_ptr_nonnull(strstr(r.message, "422"));
}
END_TEST

/* With one @p fault (argument @p arg) injected on @p ep, @p o's acquire of
 * "@p name" answers @p code with a message naming @p why: into *@p r. */
static void acquire_faulted(lease_result *r, const lease_op_options *o, const char *name,
                            fakegh_endpoint ep, fakegh_fault_kind fault, int arg, int code,
                            const char *why)
{
	fakegh_fault(fk, ep, fault, 1, arg);
	ck_assert_int_eq(lease_acquire(r, st, name, o), code);
	ck_assert_ptr_nonnull(strstr(r->message, why));
}

/* F24: polling a busy repository burns the rate limit: retry-after honoured
 * inside the timeout, and past it: rate_limited (75), progress logged. */
START_TEST(F24_rate_limited_acquire)
{
	lease_op_options o = who("alice", NULL);
	lease_result r;

	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_403_RETRY, 1, 1);
	ck_assert_int_eq(lease_acquire(&r, st, "busy", &o), 0);
	ck_assert_ptr_nonnull(strstr(logcap_buf, "rate limited"));
	o.lease_token = NULL;
	o.owner = "bob";
	acquire_faulted(&r, &o, "busy", FAKEGH_GQL_QUERY, FAKEGH_FAULT_403_RESET, 600,
	                LEASE_ERATELIMIT, "rate limited");
	ck_assert_str_eq(lease_error_id(LEASE_ERATELIMIT), "rate_limited");
}
END_TEST

/* F25: repository rules or a token without contents: write: permanent, no
 * retries, 77, the message names the namespace / the permission. */
START_TEST(F25_rules_and_permission)
{
	lease_op_options o = who("alice", NULL);
	lease_result r;

	acquire_faulted(&r, &o, "ruled", FAKEGH_REF_CREATE, FAKEGH_FAULT_422_RULES, 0, LEASE_EAUTH,
	                "refs/leases/");
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_REF_CREATE), 1);
	acquire_faulted(&r, &o, "ruled", FAKEGH_COMMIT_POST, FAKEGH_FAULT_403_FORBIDDEN, 0,
	                LEASE_EAUTH, "contents: write");
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_COMMIT_POST), 2);
}
END_TEST

/* F26: an empty repository: 78 with a message that says what to do; no
 * loop, no crash. */
START_TEST(F26_empty_repository)
{
	fakegh_options fo;
	lease_result r;

	memset(&fo, 0, sizeof(fo));
	fo.empty = 1;
	acquire_refused_on(&fo, "first", "empty", &r);
	ck_assert_ptr_nonnull(strstr(r.message, "initial commit"));
	ck_assert_uint_le(fakegh_count(fk, FAKEGH_ANY), 4);
}
END_TEST

/* ---- the heartbeat service's re-reads (issue 23 follow-up) ------------------------ */

/* A keeper (`run`, `heartbeat --every`) re-reads the stored lease every
 * lease_keep_check_interval() (6 s on github) between heartbeats: a full read
 * each time was ~600 counted requests an hour against GITHUB_TOKEN's 1,000.
 * The clock is injected and advanced by the keeper's own sleeps. */
static int64_t rr_offset;
static int rr_writes, rr_stop_after, rr_changes, rr_lost, rr_lost_code;
static unsigned rr_heartbeat_counted, rr_counted_at_write, rr_304_at_write, rr_first_counted;
static volatile sig_atomic_t rr_stop;
/* at the keeper's sleep number rr_act_at (counted from its first heartbeat),
 * rr_act(rr_act_payload) runs once: another party writes */
static int rr_sleeps, rr_act_at;
static void (*rr_act)(void);
static lease_store *rr_other;
static lease_result rr_acq;

static int64_t rr_now(void *payload)
{
	(void)payload;
	return (int64_t)time(NULL) + rr_offset;
}

static int rr_sleep(double seconds, void *payload)
{
	(void)payload;
	rr_offset += (int64_t)(seconds + 0.999);
	if (rr_writes >= 1 && ++rr_sleeps == rr_act_at && rr_act) {
		unsigned before = fakegh_counted(fk, NULL);
		rr_act();
		/* the other party's requests are not the keeper's */
		rr_counted_at_write += fakegh_counted(fk, NULL) - before;
	}
	return rr_stop != 0;
}

static void rr_report(const lease_keep_report *rep, void *payload)
{
	unsigned nm = 0, n;

	(void)payload;
	if (rep->event == LEASE_KEEP_CHANGED) {
		rr_changes++;
		return;
	}
	if (rep->event != LEASE_KEEP_WRITE) {
		rr_lost++;
		rr_lost_code = rep->code;
		rr_stop = 1;
		return;
	}
	n = fakegh_counted(fk, &nm);
	if (++rr_writes == 1) {
		/* from the first heartbeat on: the state it wrote is known */
		rr_first_counted = n;
		fakegh_reset_counts(fk);
		rr_counted_at_write = rr_304_at_write = 0;
	} else {
		/* every counted request since the last write: the heartbeat's
		 * own (commit, updateRefs, re-read) and the re-reads' */
		rr_heartbeat_counted += n - rr_counted_at_write;
		rr_counted_at_write = n;
		rr_304_at_write = nm;
	}
	if (rr_writes >= rr_stop_after)
		rr_stop = 1;
}

static lease_store *rr_open(void)
{
	lease_store_options o;
	lease_store *s2 = NULL;

	ghstore_options(&o, api_url, CANARY, 5, 1000, NULL, NULL);
	o.clock.now = rr_now;
	ck_assert_int_eq(ghstore_open(&s2, &o), 0);
	return s2;
}

/* Run a keeper of "kept" (TTL @p ttl s: a heartbeat every ttl/3 s, a re-read
 * every 6 s) until @p writes heartbeats landed or the lease is lost. */
static void rr_keep(int writes, int with_known_oid, int64_t ttl)
{
	lease_op_options ao = who("keeper", NULL);
	lease_keep_options ko = LEASE_KEEP_OPTIONS_INIT;
	lease_store *s2 = rr_open();
	lease_result last;

	rr_offset = 0;
	rr_writes = rr_changes = rr_lost = rr_lost_code = rr_sleeps = 0;
	rr_heartbeat_counted = rr_counted_at_write = rr_304_at_write = rr_first_counted = 0;
	rr_stop = 0;
	rr_stop_after = writes;
	rr_other = rr_open();
	ao.ttl_seconds = ttl;
	ck_assert_int_eq(lease_acquire(&rr_acq, s2, "kept", &ao), 0);
	ko.owner = "keeper";
	ko.host = "runner-1";
	ko.lease_token = rr_acq.payload.lease_token;
	ko.ttl_seconds = ttl;
	ko.known_expires_at = rr_acq.payload.expires_at;
	ko.known_ttl_seconds = ttl;
	ko.known_now = rr_acq.now;
	ko.known_oid = with_known_oid ? &rr_acq.oid : NULL;
	ko.check_seconds = lease_keep_check_interval(s2);
	ck_assert(ko.check_seconds == 6);
	ko.sleep = rr_sleep;
	ko.report = rr_report;
	ko.stop = &rr_stop;
	fakegh_reset_counts(fk);
	lease_keep(&last, s2, "kept", &ko);
	lease_store_free(rr_other);
	rr_other = NULL;
	lease_store_free(s2);
}

START_TEST(keeper_rereads_cost_no_counted_request)
{
	unsigned nm = 0;

	rr_act = NULL;
	rr_act_at = 0;
	rr_keep(5, 0, 60);
	ck_assert_int_eq(rr_lost, 0);
	ck_assert_int_eq(rr_writes, 5);
	/* 4 heartbeat periods of 20 s, each with 3 re-reads (6 s apart): the
	 * heartbeats' own 3 requests each and nothing more; the re-reads are 304s */
	fprintf(stderr, "keeper: %u counted requests over 4 heartbeats, %u answered 304\n",
	        rr_heartbeat_counted, rr_304_at_write);
	ck_assert_uint_eq(rr_heartbeat_counted, 4 * 3);
	ck_assert_uint_ge(rr_304_at_write, 4 * 2);
	(void)fakegh_counted(fk, &nm);
	ck_assert_uint_ge(nm, rr_304_at_write);
}
END_TEST

/* A set's keeper re-reads every member between heartbeats, each
 * conditionally on its own validator (the transport keeps one per ref): 304s,
 * not a counted read of each member in turn (issue 39: before, a set of 3
 * spent about 1,800 REST requests an hour this way, `make bench-github` with
 * SET 5 about 600 per lease) */
/* A set heartbeat of 3 (its read, 3 commits, updateRefs, its re-read) and
 * the first re-read after it, which finds the members moved */
#define SET_HB_COUNTED 12
START_TEST(set_keeper_rereads_cost_no_counted_request)
{
	const char *names[3] = {"kept-a", "kept-b", "kept-c"};
	lease_op_options ao = who("keeper", NULL);
	lease_keep_options ko = LEASE_KEEP_OPTIONS_INIT;
	lease_set_result *acq = calloc(1, sizeof(*acq));
	lease_store *s2 = rr_open();
	lease_result last;
	unsigned nm = 0;

	ck_assert_ptr_nonnull(acq);
	rr_act = NULL;
	rr_act_at = 0;
	rr_offset = 0;
	rr_writes = rr_changes = rr_lost = rr_lost_code = rr_sleeps = 0;
	rr_heartbeat_counted = rr_counted_at_write = rr_304_at_write = rr_first_counted = 0;
	rr_stop = 0;
	rr_stop_after = 5;
	ao.ttl_seconds = 60;
	ck_assert_int_eq(lease_acquire_set(acq, s2, names, 3, &ao), 0);
	ko.owner = "keeper";
	ko.host = "runner-1";
	ko.lease_token = acq->members[0].payload.lease_token;
	ko.ttl_seconds = 60;
	ko.known_expires_at = acq->members[0].payload.expires_at;
	ko.known_ttl_seconds = 60;
	ko.known_now = acq->members[0].now;
	ko.check_seconds = lease_keep_check_interval(s2);
	ko.sleep = rr_sleep;
	ko.report = rr_report;
	ko.stop = &rr_stop;
	fakegh_reset_counts(fk);
	lease_keep_set(&last, s2, names, 3, &ko);
	ck_assert_int_eq(rr_lost, 0);
	ck_assert_int_eq(rr_writes, 5);
	fprintf(stderr, "set keeper: %u counted requests over 4 set heartbeats, %u answered 304\n",
	        rr_heartbeat_counted, rr_304_at_write);
	/* 4 periods of 20 s, 2 or more re-reads of 3 members each between
	 * heartbeats: 304s; counted: the set heartbeats' own requests only */
	ck_assert_uint_ge(rr_304_at_write, 4 * 2 * 3);
	ck_assert_uint_le(rr_heartbeat_counted, 4 * SET_HB_COUNTED);
	(void)fakegh_counted(fk, &nm);
	ck_assert_uint_ge(nm, rr_304_at_write);
	free(acq);
	lease_store_free(s2);
}
END_TEST

/* `run` hands the keeper the acquire's oid (lease_keep_options.known_oid):
 * the re-reads before the first heartbeat are 304s too (the acquire's own
 * re-read left the validator) */
START_TEST(keeper_rereads_from_the_acquire)
{
	rr_act = NULL;
	rr_act_at = 0;
	rr_keep(2, 1, 60);
	ck_assert_int_eq(rr_lost, 0);
	/* 3 re-reads in the first 20 s, then the first heartbeat: a read (it
	 * knows no payload yet, as `heartbeat` alone), commit, updateRefs, re-read */
	ck_assert_uint_eq(rr_first_counted, 4);
}
END_TEST

/* Another party breaks the lease between heartbeats: seen at the next re-read */
static void rr_break(void)
{
	lease_op_options b = who("admin", NULL);
	lease_result r;

	b.force = 1;
	ck_assert_int_eq(lease_break(&r, rr_other, "kept", &b), 0);
}

START_TEST(keeper_rereads_see_a_break)
{
	rr_act = rr_break;
	rr_act_at = 2; /* between two re-reads after the first heartbeat */
	rr_keep(5, 0, 60);
	ck_assert_int_eq(rr_lost, 1);
	ck_assert_int_eq(rr_lost_code, LEASE_ENOTHOLDER);
	/* lost before the next heartbeat was due */
	ck_assert_int_eq(rr_writes, 1);
}
END_TEST

/* CMD's own `heartbeat --ttl 60` with the token under a 300 s keeper
 * (t_run_stored.sh on github, where 60 s is the least TTL): the earlier
 * stored expiry is adopted at the next re-read */
static void rr_shorten(void)
{
	lease_op_options h = who("keeper", rr_acq.payload.lease_token);
	lease_result r;

	h.ttl_seconds = 60;
	ck_assert_int_eq(lease_heartbeat(&r, rr_other, "kept", &h), 0);
}

START_TEST(keeper_rereads_see_own_token_shortening)
{
	rr_act = rr_shorten;
	rr_act_at = 2;
	rr_keep(3, 0, 300);
	ck_assert_int_eq(rr_lost, 0);
	ck_assert_int_ge(rr_changes, 1);
}
END_TEST

Suite *github_runtime_suite(void)
{
	const suitefix_fixture fx = {setup, teardown, 0};
	Suite *s = suite_create("github_runtime");

	suitefix_add(s, "fault_matrix", 60, &fx, LOOP(fault_matrix_runtime, 0, (int)(NRT * W_N)),
	             NULL);
	suitefix_add(s, "budget_contention", 120, &fx, ONE(request_budget_per_invocation),
	             ONE(set_request_budget_per_invocation), NULL);
	suitefix_add(s, "keeper_rereads", 60, &fx, ONE(keeper_rereads_cost_no_counted_request),
	             ONE(keeper_rereads_from_the_acquire),
	             ONE(set_keeper_rereads_cost_no_counted_request),
	             ONE(keeper_rereads_see_a_break), ONE(keeper_rereads_see_own_token_shortening),
	             NULL);
	suitefix_add(s, "processes", 240, NULL, ONE(contend_16_processes_no_overlap), NULL);
	suitefix_add(s, "field_cases", 60, &fx, ONE(no_update_refs_refused_before_writing),
	             ONE(transitions_continue_after_prune), ONE(F02_release_during_network_blip),
	             ONE(F09_release_already_gone), ONE(F10_path_collision),
	             ONE(F24_rate_limited_acquire), ONE(F25_rules_and_permission),
	             ONE(F26_empty_repository), ONE(heartbeat_under_persistent_graphql_rate_limit),
	             ONE(acquire_through_sporadic_422), ONE(break_force_over_blob_tip),
	             ONE(moved_repository_lifecycle), ONE(burst_writes_paced_one_second),
	             ONE(set_refused_while_nothing_moves), ONE(single_refused_while_nothing_moves),
	             NULL);
	return s;
}
