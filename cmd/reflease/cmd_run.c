/*
 * `run NAME [NAME...] [--ttl S] [--every S] [--wait S] [--json-file F]
 * [--conflict-exit-code N] -- CMD [ARG...]` (cli.md, protocol.md §6; several
 * NAMEs are a set, taken, kept and released in one write each, protocol.md
 * "Sets"):
 * acquire, run CMD while a heartbeat thread keeps the lease, release once
 * CMD's whole process tree is gone and exit with CMD's status. Like flock(1),
 * for leases.
 *
 * The guarantee (protocol.md §6 "The run guarantee"): when anyone else can
 * take the lease over, no process of CMD's tree is alive, and the lease is
 * released only after the whole tree is gone. The tree is fenced by a guard
 * process (run_guard.c): a child subreaper that is CMD's parent, kills the
 * tree by walking /proc (not by process group), and outlives reflease.
 * reflease is a child subreaper too, so a tree whose guard died re-parents
 * here and is killed by reflease itself.
 *
 * Threads: the main thread owns the guard and every signal (all terminating
 * signals and SIGCHLD blocked, read through a signalfd, so nothing races); a
 * second thread runs the heartbeat service (lib/lease/heartbeat.c) on the
 * store handle, which the main thread does not touch until it has joined it.
 *
 * Lost lease: at the lost deadline expires_at − (kill_grace + 2 s), checked
 * on CLOCK_BOOTTIME (taken 1 s early: store time has whole seconds) and, for
 * the stores whose time is this host's clock, on the wall clock too; or at
 * once when a heartbeat answers not_holder/expired or fails for good: the
 * tree gets SIGTERM, SIGKILL after kill_grace (at once when the store time is
 * already past that); reflease exits 4 once the tree is gone. The guard has
 * the same deadline, so a stopped or hung reflease is covered too.
 * Every catchable terminating signal: forwarded to every process of the
 * tree, SIGKILL after min(kill_grace, 3 s), then release; exit 128 + signal.
 */
#define _GNU_SOURCE
#include "cmd_set.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OPT_CONFLICT_EXIT (OPT_COMMAND_BASE + 90)

const struct option run_longopts[] = {
        {"ttl", required_argument, NULL, OPT_TTL},
        {"every", required_argument, NULL, OPT_EVERY},
        {"wait", required_argument, NULL, OPT_WAIT},
        {"fair", no_argument, NULL, OPT_FAIR},
        {"json-file", required_argument, NULL, OPT_JSON_FILE},
        {"conflict-exit-code", required_argument, NULL, OPT_CONFLICT_EXIT},
        {"slots", required_argument, NULL, OPT_SLOTS},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};

typedef struct run_args {
	lease_args a; /* first: cli_args_option's payload */
	int conflict; /* --conflict-exit-code, 0 = not given */
} run_args;

static int run_option(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	run_args *ra = payload;

	if (c == OPT_CONFLICT_EXIT)
		return cli_parse_conflict_exit(ctx, arg, &ra->conflict);
	return cli_args_option(ctx, c, arg, &ra->a);
}

/* Release what the run holds with @p token: the lease, or the whole set in
 * one write (lease_release_set(); the set's answer in rn->set, its status
 * and message in *@p r too). */
static int release_now(cli_ctx *ctx, lease_store *st, const run_names *rn, const char *token,
                       lease_result *r)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	int rc;

	o.owner = ctx->owner;
	o.host = ctx->host;
	o.lease_token = token;
	memset(r, 0, sizeof(*r));
	if (rn->n == 1)
		return lease_release(r, st, rn->names[0], &o);
	rc = lease_release_set(rn->set, st, rn->names, rn->n, &o);
	snprintf(r->name, sizeof(r->name), "%s", rn->names[0]);
	r->status = rn->set->status;
	r->code = rc;
	snprintf(r->message, sizeof(r->message), "%.500s", rn->set->message);
	return rc;
}

/* CMD's environment (§6), for the guard (run_guard_go): "NAME=VALUE" with
 * its NUL appended to @p env (@p cap bytes, *@p len used); 0, or -1 with
 * errno E2BIG when it does not fit. */
static int env_add(char *env, size_t cap, size_t *len, const char *k, const char *v)
{
	int n = snprintf(env + *len, cap - *len, "%s=%s", k, v);

	if (n < 0 || (size_t)n + 1 > cap - *len) {
		errno = E2BIG;
		return -1;
	}
	*len += (size_t)n + 1;
	return 0;
}

/* A store call of the heartbeat thread was in flight when the watchdog
 * fired on the lost deadline: it may still land (B67). */
static int keeper_in_flight(run_shared *sh, const cli_ctx *ctx)
{
	int r;

	pthread_mutex_lock(&sh->mu);
	r = sh->fired && sh->fired_sent > 0;
	pthread_mutex_unlock(&sh->mu);
	if (r && ctx->verbosity >= LEASE_LOG_WARN)
		fprintf(stderr,
		        "reflease run: %s: CMD's tree is stopped; waiting up to %d s for the "
		        "heartbeat in flight, to release the lease if it lands\n",
		        sh->name, ctx->timeout_s);
	return r;
}

/* What the guard needs to release after reflease's death. */
typedef struct guard_rel_ctx {
	cli_ctx *ctx;
	run_names *rn;
} guard_rel_ctx;

/* run_guard_release_fn, in the guard process once CMD's tree is gone after
 * reflease died (SIGKILL, OOM): release with the token (CAS, validated; a
 * token no longer current writes nothing), so that waiters and a restarted
 * run do not wait a TTL for nothing (issue 23); a set is released as a set,
 * by its one token (protocol.md "Sets"). The guard was forked
 * single-threaded before the acquire (run_prepare) and closed reflease's store
 * descriptors: a store of its own. */
static void guard_release_lease(const char *token, void *payload)
{
	guard_rel_ctx *g = payload;
	lease_store *st = NULL;
	lease_result r;
	int rc;

	g->ctx->st = NULL; /* reflease's handle: its descriptors are closed here */
	if (cli_open_store(g->ctx, &st) < 0) {
		fprintf(stderr,
		        "reflease run: %s: reflease died; CMD's tree is stopped but the "
		        "store could not be opened to release the lease\n",
		        g->rn->label);
		return;
	}
	rc = release_now(g->ctx, st, g->rn, token, &r);
	if (g->rn->n == 1)
		cli_result_fixup(&r, st, g->rn->names[0], rc);
	fprintf(stderr, "reflease run: %s: reflease died; CMD's tree is stopped; release: %s%s%s\n",
	        g->rn->label, lease_status_name(r.status), r.message[0] ? ": " : "", r.message);
	lease_store_free(st);
	g->ctx->st = NULL;
}

/* Without `--`, CMD's first word and the lease names that follow it, then
 * one of run's own options (issue 40 N1: `run db prod --ttl 12 sh -c ...`):
 * a set meant with `--` left out, or a command taking that option; neither
 * is guessed. 0, or cli_usage()'s status naming both ways to write it. */
static int run_not_a_set(cli_ctx *ctx, const char *name, char **cmd)
{
	char err[256];
	size_t o, n;
	int k;

	for (k = 0; cmd[k]; k++) {
		for (o = 0; k > 0 && run_longopts[o].name && run_longopts[o].val != OPT_STORE;
		     o++) {
			n = strlen(run_longopts[o].name);
			if (strncmp(cmd[k], "--", 2) == 0 &&
			    strncmp(cmd[k] + 2, run_longopts[o].name, n) == 0 &&
			    (cmd[k][2 + n] == '\0' || cmd[k][2 + n] == '='))
				return cli_usage(ctx,
				                 "'%s' would be the command, but run's own option "
				                 "%s follows it: "
				                 "without `--`, run takes one NAME. For a set, end "
				                 "the names and "
				                 "options with `--` (run %s %s ... %s ... -- CMD); "
				                 "for a command "
				                 "that takes %s itself, put `--` before it (run %s "
				                 "-- %s ...)",
				                 cmd[0], cmd[k], name, cmd[0], cmd[k], cmd[k], name,
				                 cmd[0]);
		}
		if (cmd[k][0] == '-' || lease_name_validate(cmd[k], err, sizeof(err)) < 0)
			return 0;
	}
	return 0;
}

/* NAME [NAME...] [options] -- CMD, or NAME [options] CMD (cli.md "run"):
 * every word before the first `--` that is not an option is a NAME (a set,
 * protocol.md "Sets"); with no `--` after it, CMD starts at the first word
 * after the options that follow NAME, as for one lease. @p argv2 (argc + 1
 * entries) receives what getopt last saw; *@p cmd points into it. Returns 0
 * or cli_usage()'s negative status. */
static int run_take_names(cli_ctx *ctx, int argc, char **argv, int i, run_args *ra, run_names *rn,
                          char **argv2, char ***cmd)
{
	char *given[LEASE_SET_MAX];
	int pos = i + 1, j, k, m, rc;
	size_t n = 1;

	if ((rc = cli_take_name(ctx, i < argc ? i + 1 : argc, argv, i, &rn->names[0])) < 0)
		return rc;
	given[0] = argv[i];
	for (;;) {
		argv2[0] = argv[0];
		for (m = 1, k = pos; k < argc; k++)
			argv2[m++] = argv[k];
		argv2[m] = NULL;
		if ((j = cli_parse(ctx, m, argv2, CLI_GLOBAL_SHORTOPTS, run_longopts, run_option,
		                   ra)) < 0)
			return j;
		if ((j >= 2 && strcmp(argv2[j - 1], "--") == 0) || !argv2[j])
			break; /* CMD follows `--` (or is missing) */
		for (k = j + 1; argv2[k] && strcmp(argv2[k], "--") != 0; k++)
			;
		if (!argv2[k]) {
			/* no `--` later: CMD starts here, unless it reads as a set (N1) */
			if ((rc = run_not_a_set(ctx, given[0], argv2 + j)) < 0)
				return rc;
			break;
		}
		if (n >= LEASE_SET_MAX)
			return cli_usage(ctx, "a set names at most %d leases", LEASE_SET_MAX);
		given[n++] = argv2[j];
		pos += j;
	}
	*cmd = argv2 + j;
	rn->n = 1;
	if (n > 1 && (rc = set_take_names(ctx, (int)n, given, 0, rn->names, &rn->n)) < 0)
		return rc;
	for (k = 0; k < (int)rn->n; k++) {
		size_t len = strlen(rn->label);
		snprintf(rn->label + len, sizeof(rn->label) - len, "%s%s", k ? " " : "",
		         rn->names[k]);
	}
	return 0;
}

/* Everything one run holds, from phase to phase (cmd_run). */
typedef struct run_state {
	run_args ra;
	lease_store *st;
	run_out out;
	run_shared sh;
	run_sup sup;
	keeper_args ka;
	guard_rel_ctx grc;
	run_names rn;
	run_ticket_guard tg;
	pthread_t th;
	lease_result r, rel;
	char **argv2, **cmd;
	char token[LEASE_TOKEN_HEXSZ + 1], slot_name[LEASE_NAME_MAX + 1];
	const char *name;
	int sfd, evp[2], stp[2];
	int fg, thread_started, thread_stuck;
	int64_t ttl;
} run_state;

/* From here on the slot taken (@p slot) is the lease kept and released. */
static void run_use_slot(run_state *s, const char *slot)
{
	snprintf(s->slot_name, sizeof(s->slot_name), "%s", slot);
	s->name = s->rn.names[0] = s->slot_name;
	snprintf(s->rn.label, sizeof(s->rn.label), "%s", s->slot_name);
}

/* run_guard_go_fn, in the guard: CMD's environment into the guard's own
 * (CMD inherits it), and a slot's name for the release after reflease's
 * death (guard_release_lease). */
static void run_guard_on_go(const char *env, size_t len, void *payload)
{
	run_state *s = payload;
	const char *p = env, *end = env + len;

	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));
		const char *eq = memchr(p, '=', n);
		if (eq && n < (size_t)(end - p)) {
			char k[64];
			snprintf(k, sizeof(k), "%.*s", (int)(eq - p), p);
			setenv(k, eq + 1, 1);
			if (s->ra.a.slots && strcmp(k, "REFLEASE_LEASE_NAME") == 0)
				run_use_slot(s, eq + 1);
		}
		p += n + 1;
	}
}

/* NAME(s), options and CMD, and the checks that need no store: -1 to go on,
 * else the exit status. */
static int run_parse(cli_ctx *ctx, int argc, char **argv, run_state *s)
{
	lease_args *a = &s->ra.a;
	int i, rc;

	/* stdout belongs to CMD: even a usage error's JSON object is the last
	 * line of stderr (cli.md) */
	ctx->json_stderr = 1;
	/* NAME, then options up to `--` or CMD (REQUIRE_ORDER: CMD's own options
	 * are never taken for ours). */
	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, run_longopts, run_option,
	                   &s->ra)) < 0)
		return cli_status_of(i);
	if (!(s->argv2 = calloc((size_t)argc + 1, sizeof(*s->argv2))))
		return EXIT_SOFTWARE;
	if ((rc = run_take_names(ctx, argc, argv, i, &s->ra, &s->rn, s->argv2, &s->cmd)) < 0)
		return cli_status_of(rc);
	s->name = s->rn.names[0];
	if (s->rn.n > 1 && a->slots)
		return cli_status_of(cli_usage(ctx,
		                               "--slots takes one NAME (%zu given): a set's "
		                               "members are plain leases",
		                               s->rn.n));
	if ((rc = cli_check_slots_name(ctx, s->name, a->slots)) < 0)
		return cli_status_of(rc);
	if (!*s->cmd)
		return cli_status_of(cli_usage(
		        ctx, "missing CMD (run NAME [NAME...] [options] -- CMD [ARG...])"));
	if (a->fair && a->wait <= 0)
		return cli_status_of(cli_usage(ctx, CLI_FAIR_NEEDS_WAIT));
	if (a->fair && (a->slots || s->rn.n > 1))
		return cli_status_of(cli_usage(ctx, "--fair queues for one lease: not with %s",
		                               a->slots ? "--slots" : "a set of NAMEs"));
	return -1;
}

/* The store, the TTL and what fencing CMD's tree needs (protocol.md §6):
 * -1 to go on, else the exit status. */
static int run_open(cli_ctx *ctx, run_state *s)
{
	lease_args *a = &s->ra.a;
	int64_t every;
	int rc;

	/* Q1: a SIGKILLed fair waiter's ticket goes at once, not at its TTL;
	 * started before the store opens, whose randomness goes through it */
	if (a->fair && run_ticket_guard_start(&s->tg, ctx, s->name) < 0)
		s->tg.pid = -1;
	if ((rc = cli_open_store(ctx, &s->st)) < 0 || (rc = cli_check_ttl(ctx, s->st, a->ttl)) < 0)
		return cli_status_of(rc);
	/* the store's default: 450 s on github: (issue 39), else 300 s */
	s->ttl = a->ttl ? a->ttl : lease_store_ttl_default(s->st);
	if (lease_heartbeat_every(&every, s->ttl, a->every) < 0)
		return cli_status_of(cli_usage(ctx, "--every: %ld s is above ttl/2 (%lld s)",
		                               a->every,
		                               (long long)lease_heartbeat_every_max(s->ttl)));
	if (lease_keep_check_ttl(s->ttl) < 0) {
		/* §6: heartbeats could not land before the lost deadline (B67) */
		return cli_status_of(cli_usage(
		        ctx,
		        "--ttl %lld s is too short for run: a heartbeat may start %lld s after "
		        "the last (the floor) and must land %.1f s before the expiry (the lost "
		        "deadline: kill_grace + 2 s), which leaves %.1f s, less than the %.0f s "
		        "two attempts need on a loaded machine; use --ttl 9 or more",
		        (long long)s->ttl, (long long)lease_heartbeat_floor(s->ttl),
		        lease_kill_grace(s->ttl) + 2.0, lease_keep_window(s->ttl),
		        LEASE_KEEP_MIN_WINDOW));
	}
	if (access("/proc/self/stat", R_OK) != 0) {
		/* the guard finds CMD's tree through /proc: no fence without it */
		fprintf(stderr,
		        "reflease run: /proc is not mounted: CMD's process tree could not be "
		        "fenced (protocol.md §6); mount /proc\n");
		return EXIT_CONFIG;
	}
	if (!run_proc_is_ours()) {
		/* a PID namespace whose /proc is the parent's (unshare --pid
		 * without --mount-proc): PPid chains and pids there are another
		 * namespace's, the guard would neither find nor wait for the tree */
		fprintf(stderr,
		        "reflease run: /proc is not this PID namespace's (/proc/self is not pid "
		        "%ld): CMD's process tree could not be fenced (protocol.md §6); mount a "
		        "/proc for the namespace (unshare --pid --fork --mount-proc)\n",
		        (long)getpid());
		return EXIT_CONFIG;
	}
	if (a->json_file && (rc = run_open_json_file(ctx, a->json_file, &s->out.json_fd)) < 0)
		return cli_status_of(rc);
	s->sup.kill_grace = lease_kill_grace(s->ttl);
	s->sup.wall_is_store = strcmp(lease_store_kind(s->st), "github") != 0;
	s->out.ctx = ctx;
	s->out.json = ctx->json;
	s->out.json_file = a->json_file;
	ctx->json = 0; /* stdout belongs to CMD */
	if (pipe2(s->evp, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(s->stp, O_CLOEXEC | O_NONBLOCK) < 0) {
		fprintf(stderr, "reflease run: %s\n", strerror(errno));
		return EXIT_SOFTWARE;
	}
	return -1;
}

/* The guard, forked before the lease is taken so that starting CMD after the
 * acquire forks nothing (issue 43: a waiter's handoff); it waits for
 * run_guard_go() in run_start, and exits when this run ends without it.
 * Orphans of the tree come here if the guard dies. -1 to go on, else the
 * exit status. */
static int run_prepare(cli_ctx *ctx, run_state *s)
{
	s->grc.ctx = ctx;
	s->grc.rn = &s->rn;
	/* a set's answer, allocated before the fork: the guard's copy has one
	 * for its release (guard_release_lease) */
	if (s->rn.n > 1 && !(s->rn.set = calloc(1, sizeof(*s->rn.set)))) {
		fprintf(stderr, "reflease run: out of memory\n");
		return EXIT_SOFTWARE;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ||
	    run_guard_prepare(&s->sup.g, s->cmd, s->sup.kill_grace,
	                      run_signal_grace(s->sup.kill_grace), guard_release_lease, &s->grc,
	                      run_guard_on_go, s) < 0) {
		fprintf(stderr, "reflease run: cannot start CMD: %s\n", strerror(errno));
		return EXIT_SOFTWARE;
	}
	return -1;
}

/* Acquire, waiting on held with --wait: one lease, a slot, or the whole set
 * in one write (protocol.md "Sets"; --wait holds no part of it). A signal
 * ends the wait (cli_wait_cb): nothing is held then. */
static int run_take(cli_ctx *ctx, run_state *s, lease_op_options *ao)
{
	lease_args *a = &s->ra.a;
	int rc, j;

	cli_install_stop_handlers(); /* every terminating signal ends the wait */
	ao->owner = ctx->owner;
	ao->host = ctx->host;
	ao->ttl_seconds = s->ttl;
	ao->wait_seconds = a->wait;
	ao->fair = a->fair;
	ao->wait_cb = cli_wait_cb;
	ao->progress_cb = cli_wait_progress_cb;
	ao->progress_payload = ctx;
	memset(&s->r, 0, sizeof(s->r));
	if (s->rn.n == 1)
		return a->slots ? lease_slots_acquire(&s->r, s->st, s->name, a->slots, ao)
		                : lease_acquire(&s->r, s->st, s->name, ao);
	rc = lease_acquire_set(s->rn.set, s->st, s->rn.names, s->rn.n, ao);
	/* the set as one result: the token, and the earliest expiry */
	s->r = s->rn.set->members[0];
	for (j = 1; rc == 0 && j < (int)s->rn.n; j++)
		if (s->rn.set->members[j].payload.expires_at < s->r.payload.expires_at)
			s->r = s->rn.set->members[j];
	s->r.status = s->rn.set->status;
	snprintf(s->r.message, sizeof(s->r.message), "%.500s", s->rn.set->message);
	return rc;
}

/* Acquire (run_take), then read every signal from a signalfd: -1 to go on
 * with the lease held, else the exit status (not acquired, interrupted). */
static int run_acquire(cli_ctx *ctx, run_state *s)
{
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	int rc, sig0, status, chld = 0, sig;

	rc = run_take(ctx, s, &ao);
	run_ticket_guard_stop(&s->tg, ctx);
	if (s->ra.a.slots && rc == 0) {
		/* from here on the slot taken is the lease kept and released */
		run_use_slot(s, s->r.name);
	}
	/* From here on every signal is read from the signalfd (no races). */
	if ((s->sfd = run_open_signalfd()) < 0) {
		fprintf(stderr, "reflease run: signalfd: %s\n", strerror(errno));
		if (rc == 0)
			release_now(ctx, s->st, &s->rn, s->r.payload.lease_token, &s->rel);
		return EXIT_SOFTWARE;
	}
	sig0 = cli_stop_signal;
	if ((sig = run_drain_signals(s->sfd, &chld)) && !sig0)
		sig0 = sig;
	if (rc < 0) {
		if (s->rn.n == 1)
			cli_result_fixup(&s->r, s->st, s->name, rc);
		status = sig0 ? cli_exit_for_signal(sig0) : cli_exit_for(rc);
		if (status == EXIT_HELD && s->ra.conflict)
			status = s->ra.conflict;
		fprintf(stderr, "reflease run: %s: %s%s%s\n", s->rn.label,
		        lease_status_name(s->r.status), s->r.message[0] ? ": " : "", s->r.message);
		run_emit(&s->out, s->st, &s->r, &s->rn, rc, sig0 ? "interrupted" : "not_acquired",
		         status, 0, 0);
		return status;
	}
	memcpy(s->token, s->r.payload.lease_token, sizeof(s->token));
	if (sig0) {
		/* Interrupted while acquiring: give it back, never start CMD. */
		rc = release_now(ctx, s->st, &s->rn, s->token, &s->rel);
		status = cli_exit_for_signal(sig0);
		run_emit(&s->out, s->st, &s->rel, &s->rn, rc, "interrupted", status, 0, 0);
		return status;
	}
	s->ttl = lease_payload_ttl(&s->r.payload, s->ttl, NULL); /* the TTL this acquire granted */
	return -1;
}

/* CMD's environment, the guard that starts and fences CMD, the heartbeat
 * thread (protocol.md §6): -1 to go on, else the exit status. */
static int run_start(cli_ctx *ctx, run_state *s)
{
	lease_keep_options k = LEASE_KEEP_OPTIONS_INIT;
	char env[sizeof(s->rn.label) + LEASE_NAME_MAX + LEASE_TOKEN_HEXSZ + 128], tr[32];
	size_t envlen = 0;
	int rc;

	s->fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (s->fg) {
		/* to take the terminal back from CMD's group afterwards */
		sigset_t t;
		sigemptyset(&t);
		sigaddset(&t, SIGTTOU);
		sigprocmask(SIG_BLOCK, &t, NULL);
	}
	s->sup.fg = s->fg;
	pthread_mutex_init(&s->sh.mu, NULL);
	s->sh.ev_w = s->evp[1];
	s->sh.stop_r = s->stp[0];
	s->sh.verbosity = ctx->verbosity;
	s->sh.name = s->rn.label;
	s->sh.may_live = 1; /* the acquire landed with run's token */
	run_set_deadline(&s->sh, lease_lost_at(&s->r.payload, s->ttl), s->r.now, s->ttl, 0);
	s->sup.sent_dl = s->sh.deadline;
	memcpy(s->sup.sent_token, s->token, sizeof(s->sup.sent_token));
	/* CMD, started by the guard prepared before the acquire (run_prepare),
	 * with its environment (§6; put in the guard's by run_guard_on_go; a set:
	 * the first NAME as given, and every NAME in REFLEASE_LEASE_NAMES); the
	 * heartbeat thread starts afterwards */
	snprintf(tr, sizeof(tr), "%lld", (long long)s->r.payload.transitions);
	if (env_add(env, sizeof(env), &envlen, "REFLEASE_LEASE_TOKEN", s->token) < 0 ||
	    env_add(env, sizeof(env), &envlen, "REFLEASE_TRANSITIONS", tr) < 0 ||
	    env_add(env, sizeof(env), &envlen, "REFLEASE_LEASE_NAME", s->name) < 0 ||
	    env_add(env, sizeof(env), &envlen, "REFLEASE_LEASE_NAMES", s->rn.label) < 0 ||
	    run_guard_go(&s->sup.g, s->fg, s->sh.deadline, s->token, env, envlen) < 0) {
		fprintf(stderr, "reflease run: cannot start CMD: %s\n", strerror(errno));
		rc = release_now(ctx, s->st, &s->rn, s->token, &s->rel); /* F08 */
		run_emit(&s->out, s->st, &s->rel, &s->rn, rc, "error", EXIT_SOFTWARE, 0, 0);
		return EXIT_SOFTWARE;
	}
	/* The heartbeat thread. */
	k.owner = ctx->owner;
	k.host = ctx->host;
	k.lease_token = s->token;
	k.ttl_seconds = s->ttl;
	k.every_seconds = s->ra.a.every; /* 0: the store's pace (§6 "Renewal point") */
	k.known_expires_at = s->r.payload.expires_at;
	k.known_ttl_seconds = s->ttl;
	k.known_now = s->r.now;
	k.check_seconds = lease_keep_check_interval(s->st);
	s->ka.at = s->r.oid;
	k.known_oid = s->r.present ? &s->ka.at : NULL;
	k.sleep = run_keeper_sleep;
	k.sleep_payload = &s->sh;
	k.report = run_keeper_report;
	k.report_payload = &s->sh;
	s->ka.keep = k;
	s->ka.st = s->st;
	s->ka.rn = &s->rn;
	s->ka.sh = &s->sh;
	if (pthread_create(&s->th, NULL, run_keeper_main, &s->ka) != 0) {
		fprintf(stderr, "reflease run: cannot start the heartbeat thread\n");
		s->sh.lost = 1; /* stop CMD at once: nobody keeps the lease */
		s->sh.lost_event = LEASE_KEEP_FAILED;
		s->sh.lost_code = LEASE_EINTERNAL;
	} else {
		s->thread_started = 1;
	}
	return -1;
}

/* Supervise CMD until its tree is gone, then stop the heartbeat thread
 * before using the store again. */
static void run_until_gone(const cli_ctx *ctx, run_state *s)
{
	run_supervise(&s->sup, &s->sh, s->sfd, s->evp[0]);
	if (!s->sup.guard_reaped)
		while (waitpid(s->sup.g.pid, NULL, 0) < 0 && errno == EINTR)
			;
	if (s->fg)
		tcsetpgrp(STDIN_FILENO, getpgrp()); /* take the terminal back */
	if (s->thread_started) {
		char b = 's';
		ssize_t n = write(s->stp[1], &b, 1);
		(void)n;
		/* When the lease is lost there is nothing left to write: do not
		 * wait long for a heartbeat stuck inside the store — but one the
		 * watchdog did not wait for may still land: wait for its answer
		 * (one store operation, --timeout) to release it (B67) */
		if (!s->sup.lost || run_wait_done(&s->sh, s->evp[0], 1.0) ||
		    (keeper_in_flight(&s->sh, ctx) &&
		     run_wait_done(&s->sh, s->evp[0], ctx->timeout_s)))
			pthread_join(s->th, NULL);
		else
			s->thread_stuck = 1;
	}
	pthread_mutex_lock(&s->sh.mu);
	if (s->sh.lost)
		s->sup.lost = 1;
	pthread_mutex_unlock(&s->sh.mu);
	if (s->sh.has_last && s->sh.last.has_payload && s->sh.last.holds_token &&
	    s->sh.last.payload.lease_token[0])
		memcpy(s->token, s->sh.last.payload.lease_token, sizeof(s->token));
}

/* The answer of a lost lease in @p lr and its code: the last heartbeat's,
 * or, when the watchdog fired, why no heartbeat landed in time. */
static int run_lost_answer(run_state *s, lease_result *lr)
{
	int code = s->sh.lost_code ? s->sh.lost_code : LEASE_EEXPIRED;
	char cause[sizeof(lr->message)];

	if (s->sh.has_last) {
		*lr = s->sh.last;
	} else {
		memset(lr, 0, sizeof(*lr));
		lr->status = LEASE_STATUS_EXPIRED;
		lr->code = LEASE_EEXPIRED;
		snprintf(lr->message, sizeof(lr->message),
		         "no heartbeat landed before the lost deadline");
	}
	if (s->sh.lost && !run_keeper_may_hold(&s->sh))
		return code;
	/* the watchdog fired, or the service's own deadline passed after a
	 * write that landed: no heartbeat landed in time; one message, with the
	 * cause (B67: a scheduling delay, a silent store, the last failure) */
	run_keeper_cause(&s->sh, cause, sizeof(cause));
	lr->status = LEASE_STATUS_EXPIRED;
	lr->code = LEASE_EEXPIRED;
	snprintf(lr->message, sizeof(lr->message),
	         "no heartbeat landed before the lost deadline; %.400s", cause);
	return LEASE_EEXPIRED;
}

/* The lease is (or may be) someone else's now, CMD's tree is gone: exit 4
 * (or the failure's status, or --conflict-exit-code). */
static int run_lost(cli_ctx *ctx, run_state *s)
{
	lease_result lr;
	int code = run_lost_answer(s, &lr), status, late;

	status = s->sh.lost_event == LEASE_KEEP_FAILED ? cli_exit_for(code) : EXIT_NOTHOLDER;
	if (status == EXIT_OK)
		status = EXIT_NOTHOLDER;
	if (s->ra.conflict) /* lost is lost, whatever the cause (403, a bad payload) */
		status = s->ra.conflict;
	lr.holds_token = 0;
	fprintf(stderr, "reflease run: %s: lease lost (%s): %s; %s stopped\n", s->rn.label,
	        lease_status_name(lr.status), lr.message[0] ? lr.message : lease_error_id(code),
	        s->cmd[0]);
	if (s->thread_stuck) {
		/* The store handle is still in use by the heartbeat thread:
		 * report without touching it, and leave at once. */
		if (!lr.message[0])
			snprintf(lr.message, sizeof(lr.message), "lease lost");
		if (!lr.name[0]) {
			snprintf(lr.name, sizeof(lr.name), "%s", s->name);
			snprintf(lr.ref, sizeof(lr.ref), "refs/%s/%s", ctx->ns ? ctx->ns : "leases",
			         s->name);
		}
		if (s->rn.n > 1)
			set_lost_answer(s->rn.set, NULL, s->rn.names, s->rn.n, &lr, code);
		run_emit(&s->out, NULL, &lr, &s->rn, code, "lost", status, s->sup.have_cmd,
		         s->sup.cmd_status);
		fflush(NULL);
		_exit(status);
	}
	if (!s->thread_started) {
		/* no heartbeat thread could be started: the lease is still ours,
		 * give it back (F08) */
		release_now(ctx, s->st, &s->rn, s->token, &s->rel);
	} else if ((late = run_keeper_may_hold(&s->sh)) != 0) {
		/* the watchdog gave up, the lease may still be live with our
		 * token (the deadline's margin, or a heartbeat that landed
		 * later): nobody's; the tree is gone: give it back (B67; a token
		 * no longer current writes nothing) */
		int rrc = release_now(ctx, s->st, &s->rn, s->token, &s->rel);

		fprintf(stderr, "reflease run: %s: %s; release: %s\n", s->rn.label,
		        late == 2 ? "a heartbeat landed after the lost deadline"
		                  : "the lease was still live after the lost deadline",
		        rrc == 0 ? lease_status_name(s->rel.status) : lease_error_id(rrc));
	}
	if (s->rn.n > 1)
		set_lost_answer(s->rn.set, s->st, s->rn.names, s->rn.n, &lr, code);
	run_emit(&s->out, s->st, &lr, &s->rn, code, "lost", status, s->sup.have_cmd,
	         s->sup.cmd_status);
	return status;
}

/* CMD ended with the lease kept: release, and exit with CMD's status (a
 * failed release with its own, cli.md). */
static int run_finish(cli_ctx *ctx, run_state *s)
{
	int rc = release_now(ctx, s->st, &s->rn, s->token, &s->rel), status;

	if (s->sup.interrupted)
		status = cli_exit_for_signal(s->sup.interrupted);
	else if (s->sup.guard_died)
		status = EXIT_SOFTWARE;
	else if (WIFEXITED(s->sup.cmd_status))
		status = WEXITSTATUS(s->sup.cmd_status);
	else
		status = 128 + WTERMSIG(s->sup.cmd_status);
	if (rc < 0) {
		/* the lease may still be held for a TTL: the status says so, not
		 * CMD's (cli.md: a release that fails exits with its own status) */
		int cmd_st = status;
		status = cli_exit_for(rc);
		if (status == EXIT_OK)
			status = EXIT_SOFTWARE;
		fprintf(stderr,
		        "reflease run: %s: release failed (%s); the lease stays held until it "
		        "expires; exit %d (CMD's status was %d)\n",
		        s->rn.label, s->rel.message[0] ? s->rel.message : lease_error_id(rc),
		        status, cmd_st);
	}
	run_emit(&s->out, s->st, &s->rel, &s->rn, rc,
	         s->sup.interrupted  ? "interrupted"
	         : s->sup.guard_died ? "error"
	                             : "exited",
	         status, s->sup.have_cmd, s->sup.cmd_status);
	return status;
}

static void run_cleanup(run_state *s)
{
	int i;

	if (s->thread_started || s->sh.ev_w)
		pthread_mutex_destroy(&s->sh.mu);
	if (s->sfd >= 0)
		close(s->sfd);
	for (i = 0; i < 2; i++) {
		if (s->evp[i] >= 0)
			close(s->evp[i]);
		if (s->stp[i] >= 0)
			close(s->stp[i]);
	}
	run_guard_cancel(&s->sup.g); /* prepared, never started (not acquired) */
	if (s->sup.g.pid > 0) {
		close(s->sup.g.ctl_w);
		close(s->sup.g.ev_r);
	}
	if (s->out.json_fd >= 0)
		close(s->out.json_fd);
	free(s->rn.set);
	free(s->argv2);
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	run_state *s = calloc(1, sizeof(*s));
	int status;

	if (!s)
		return EXIT_SOFTWARE;
	s->sup.g.pid = -1;
	s->tg.pid = -1;
	s->out.json_fd = -1;
	s->sfd = -1;
	s->evp[0] = s->evp[1] = s->stp[0] = s->stp[1] = -1;
	if ((status = run_parse(ctx, argc, argv, s)) < 0 && (status = run_open(ctx, s)) < 0 &&
	    (status = run_prepare(ctx, s)) < 0 && (status = run_acquire(ctx, s)) < 0 &&
	    (status = run_start(ctx, s)) < 0) {
		run_until_gone(ctx, s);
		status = s->sup.lost ? run_lost(ctx, s) : run_finish(ctx, s);
	}
	run_cleanup(s);
	free(s);
	return status;
}
