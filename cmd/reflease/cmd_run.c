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

static void set_env_long(const char *k, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	setenv(k, buf, 1);
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
 * single-threaded and closed reflease's store descriptors: a store of its own. */
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

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	lease_result r, rel;
	run_args ra;
	lease_args *a = &ra.a;
	lease_store *st = NULL;
	run_out out;
	run_shared sh;
	run_sup sup;
	keeper_args ka;
	guard_rel_ctx grc;
	run_names rn;
	run_ticket_guard tg = {-1};
	pthread_t th;
	char **argv2 = NULL, **cmd = NULL;
	char token[LEASE_TOKEN_HEXSZ + 1], slot_name[LEASE_NAME_MAX + 1];
	const char *name;
	int i, j, rc, status = EXIT_SOFTWARE, sfd = -1, evp[2] = {-1, -1}, stp[2] = {-1, -1};
	int fg = 0, thread_started = 0, thread_stuck = 0, sig0;
	int64_t ttl, every;

	memset(&ra, 0, sizeof(ra));
	memset(&rn, 0, sizeof(rn));
	memset(&sh, 0, sizeof(sh));
	memset(&sup, 0, sizeof(sup));
	sup.g.pid = -1;
	out.json_fd = -1;
	/* stdout belongs to CMD: even a usage error's JSON object is the last
	 * line of stderr (cli.md) */
	ctx->json_stderr = 1;
	/* NAME, then options up to `--` or CMD (REQUIRE_ORDER: CMD's own options
	 * are never taken for ours). */
	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, run_longopts, run_option, &ra)) <
	    0)
		return cli_status_of(i);
	if (!(argv2 = calloc((size_t)argc + 1, sizeof(*argv2))))
		return EXIT_SOFTWARE;
	if ((rc = run_take_names(ctx, argc, argv, i, &ra, &rn, argv2, &cmd)) < 0) {
		free(argv2);
		return cli_status_of(rc);
	}
	name = rn.names[0];
	if (rn.n > 1 && a->slots) {
		free(argv2);
		return cli_status_of(cli_usage(ctx,
		                               "--slots takes one NAME (%zu given): a set's "
		                               "members are plain leases",
		                               rn.n));
	}
	if ((rc = cli_check_slots_name(ctx, name, a->slots)) < 0) {
		free(argv2);
		return cli_status_of(rc);
	}
	if (!*cmd) {
		free(argv2);
		return cli_status_of(cli_usage(
		        ctx, "missing CMD (run NAME [NAME...] [options] -- CMD [ARG...])"));
	}
	if (a->fair && a->wait <= 0) {
		free(argv2);
		return cli_status_of(cli_usage(ctx, CLI_FAIR_NEEDS_WAIT));
	}
	if (a->fair && (a->slots || rn.n > 1)) {
		free(argv2);
		return cli_status_of(cli_usage(ctx, "--fair queues for one lease: not with %s",
		                               a->slots ? "--slots" : "a set of NAMEs"));
	}
	/* Q1: a SIGKILLed fair waiter's ticket goes at once, not at its TTL;
	 * started before the store opens, whose randomness goes through it */
	if (a->fair && run_ticket_guard_start(&tg, ctx, name) < 0)
		tg.pid = -1;
	if ((rc = cli_open_store(ctx, &st)) < 0 || (rc = cli_check_ttl(ctx, st, a->ttl)) < 0) {
		free(argv2);
		return cli_status_of(rc);
	}
	/* the store's default: 450 s on github: (issue 39), else 300 s */
	ttl = a->ttl ? a->ttl : lease_store_ttl_default(st);
	if (lease_heartbeat_every(&every, ttl, a->every) < 0) {
		free(argv2);
		return cli_status_of(cli_usage(ctx, "--every: %ld s is above ttl/2 (%lld s)",
		                               a->every,
		                               (long long)lease_heartbeat_every_max(ttl)));
	}
	if (lease_keep_check_ttl(ttl) < 0) {
		/* §6: heartbeats could not land before the lost deadline (B67) */
		free(argv2);
		return cli_status_of(cli_usage(
		        ctx,
		        "--ttl %lld s is too short for run: a heartbeat may start %lld s after "
		        "the last (the floor) and must land %.1f s before the expiry (the lost "
		        "deadline: kill_grace + 2 s), which leaves %.1f s, less than the %.0f s "
		        "two attempts need on a loaded machine; use --ttl 9 or more",
		        (long long)ttl, (long long)lease_heartbeat_floor(ttl),
		        lease_kill_grace(ttl) + 2.0, lease_keep_window(ttl),
		        LEASE_KEEP_MIN_WINDOW));
	}
	if (access("/proc/self/stat", R_OK) != 0) {
		/* the guard finds CMD's tree through /proc: no fence without it */
		free(argv2);
		fprintf(stderr,
		        "reflease run: /proc is not mounted: CMD's process tree could not be "
		        "fenced (protocol.md §6); mount /proc\n");
		return EXIT_CONFIG;
	}
	if (!run_proc_is_ours()) {
		/* a PID namespace whose /proc is the parent's (unshare --pid
		 * without --mount-proc): PPid chains and pids there are another
		 * namespace's, the guard would neither find nor wait for the tree */
		free(argv2);
		fprintf(stderr,
		        "reflease run: /proc is not this PID namespace's (/proc/self is not pid "
		        "%ld): CMD's process tree could not be fenced (protocol.md §6); mount a "
		        "/proc for the namespace (unshare --pid --fork --mount-proc)\n",
		        (long)getpid());
		return EXIT_CONFIG;
	}
	if (a->json_file && (rc = run_open_json_file(ctx, a->json_file, &out.json_fd)) < 0) {
		free(argv2);
		return cli_status_of(rc);
	}
	sup.kill_grace = lease_kill_grace(ttl);
	sup.wall_is_store = strcmp(lease_store_kind(st), "github") != 0;
	out.ctx = ctx;
	out.json = ctx->json;
	out.json_file = a->json_file;
	ctx->json = 0; /* stdout belongs to CMD */

	if (pipe2(evp, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(stp, O_CLOEXEC | O_NONBLOCK) < 0) {
		fprintf(stderr, "reflease run: %s\n", strerror(errno));
		goto cleanup;
	}

	/* Acquire (waiting on held). A signal ends the wait (cli_wait_cb):
	 * nothing is held then, and the interrupted object is printed. */
	cli_install_stop_handlers(); /* every terminating signal ends the wait */
	ao.owner = ctx->owner;
	ao.host = ctx->host;
	ao.ttl_seconds = ttl;
	ao.wait_seconds = a->wait;
	ao.fair = a->fair;
	ao.wait_cb = cli_wait_cb;
	ao.progress_cb = cli_wait_progress_cb;
	ao.progress_payload = ctx;
	memset(&r, 0, sizeof(r));
	if (rn.n > 1) {
		/* the whole set in one write, or none; --wait holds no part of it
		 * (protocol.md "Sets") */
		if (!(rn.set = calloc(1, sizeof(*rn.set)))) {
			fprintf(stderr, "reflease run: out of memory\n");
			goto cleanup;
		}
		rc = lease_acquire_set(rn.set, st, rn.names, rn.n, &ao);
		/* the set as one result: the token, and the earliest expiry */
		r = rn.set->members[0];
		for (j = 1; rc == 0 && j < (int)rn.n; j++)
			if (rn.set->members[j].payload.expires_at < r.payload.expires_at)
				r = rn.set->members[j];
		r.status = rn.set->status;
		snprintf(r.message, sizeof(r.message), "%.500s", rn.set->message);
	} else {
		rc = a->slots ? lease_slots_acquire(&r, st, name, a->slots, &ao)
		              : lease_acquire(&r, st, name, &ao);
	}
	run_ticket_guard_stop(&tg, ctx);
	if (a->slots && rc == 0) {
		/* from here on the slot taken is the lease kept and released */
		memcpy(slot_name, r.name, sizeof(slot_name));
		name = rn.names[0] = slot_name;
		snprintf(rn.label, sizeof(rn.label), "%s", slot_name);
	}
	/* From here on every signal is read from the signalfd (no races). */
	if ((sfd = run_open_signalfd()) < 0) {
		fprintf(stderr, "reflease run: signalfd: %s\n", strerror(errno));
		if (rc == 0)
			release_now(ctx, st, &rn, r.payload.lease_token, &rel);
		goto cleanup;
	}
	sig0 = cli_stop_signal;
	{
		int chld = 0, s = run_drain_signals(sfd, &chld);
		if (s && !sig0)
			sig0 = s;
	}
	if (rc < 0) {
		if (rn.n == 1)
			cli_result_fixup(&r, st, name, rc);
		status = sig0 ? cli_exit_for_signal(sig0) : cli_exit_for(rc);
		if (status == EXIT_HELD && ra.conflict)
			status = ra.conflict;
		fprintf(stderr, "reflease run: %s: %s%s%s\n", rn.label, lease_status_name(r.status),
		        r.message[0] ? ": " : "", r.message);
		run_emit(&out, st, &r, &rn, rc, sig0 ? "interrupted" : "not_acquired", status, 0,
		         0);
		goto cleanup;
	}
	memcpy(token, r.payload.lease_token, sizeof(token));
	if (sig0) {
		/* Interrupted while acquiring: give it back, never start CMD. */
		rc = release_now(ctx, st, &rn, token, &rel);
		status = cli_exit_for_signal(sig0);
		run_emit(&out, st, &rel, &rn, rc, "interrupted", status, 0, 0);
		goto cleanup;
	}
	ttl = lease_payload_ttl(&r.payload, ttl, NULL); /* the TTL this acquire granted */

	/* CMD's environment (§6). Set before fork: the process is single-threaded. */
	setenv("REFLEASE_LEASE_TOKEN", token, 1);
	set_env_long("REFLEASE_TRANSITIONS", (long long)r.payload.transitions);
	/* a set: the first NAME (as given), and every NAME in REFLEASE_LEASE_NAMES */
	setenv("REFLEASE_LEASE_NAME", name, 1);
	setenv("REFLEASE_LEASE_NAMES", rn.label, 1);
	fflush(stdout);
	fflush(stderr);
	fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (fg) {
		/* to take the terminal back from CMD's group afterwards */
		sigset_t t;
		sigemptyset(&t);
		sigaddset(&t, SIGTTOU);
		sigprocmask(SIG_BLOCK, &t, NULL);
	}
	sup.fg = fg;
	pthread_mutex_init(&sh.mu, NULL);
	sh.ev_w = evp[1];
	sh.stop_r = stp[0];
	sh.verbosity = ctx->verbosity;
	sh.name = rn.label;
	run_set_deadline(&sh, lease_lost_at(&r.payload, ttl), r.now, ttl, 0);
	sup.sent_dl = sh.deadline;
	memcpy(sup.sent_token, token, sizeof(sup.sent_token));
	grc.ctx = ctx;
	grc.rn = &rn;
	/* Orphans of the tree come here if the guard dies; then the guard
	 * (single-threaded fork: the heartbeat thread starts afterwards). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ||
	    run_guard_start(&sup.g, cmd, fg, sup.kill_grace, run_signal_grace(sup.kill_grace),
	                    sh.deadline, token, guard_release_lease, &grc) < 0) {
		fprintf(stderr, "reflease run: cannot start CMD: %s\n", strerror(errno));
		rc = release_now(ctx, st, &rn, token, &rel); /* F08 */
		run_emit(&out, st, &rel, &rn, rc, "error", EXIT_SOFTWARE, 0, 0);
		status = EXIT_SOFTWARE;
		goto cleanup;
	}

	/* The heartbeat thread. */
	{
		lease_keep_options k = LEASE_KEEP_OPTIONS_INIT;
		k.owner = ctx->owner;
		k.host = ctx->host;
		k.lease_token = token;
		k.ttl_seconds = ttl;
		k.every_seconds = a->every; /* 0: the store's pace (§6 "Renewal point") */
		k.known_expires_at = r.payload.expires_at;
		k.known_ttl_seconds = ttl;
		k.known_now = r.now;
		k.check_seconds = lease_keep_check_interval(st);
		ka.at = r.oid;
		k.known_oid = r.present ? &ka.at : NULL;
		k.sleep = run_keeper_sleep;
		k.sleep_payload = &sh;
		k.report = run_keeper_report;
		k.report_payload = &sh;
		ka.keep = k;
	}
	ka.st = st;
	ka.rn = &rn;
	ka.sh = &sh;
	if (pthread_create(&th, NULL, run_keeper_main, &ka) != 0) {
		fprintf(stderr, "reflease run: cannot start the heartbeat thread\n");
		sh.lost = 1; /* stop CMD at once: nobody keeps the lease */
		sh.lost_event = LEASE_KEEP_FAILED;
		sh.lost_code = LEASE_EINTERNAL;
	} else {
		thread_started = 1;
	}

	run_supervise(&sup, &sh, sfd, evp[0]);
	if (!sup.guard_reaped)
		while (waitpid(sup.g.pid, NULL, 0) < 0 && errno == EINTR)
			;

	if (fg)
		tcsetpgrp(STDIN_FILENO, getpgrp()); /* take the terminal back */
	/* CMD's tree is gone: stop the heartbeat thread before using the store. */
	if (thread_started) {
		char b = 's';
		ssize_t n = write(stp[1], &b, 1);
		(void)n;
		/* When the lease is lost there is nothing left to write: do not
		 * wait long for a heartbeat stuck inside the store. */
		if (!sup.lost || run_wait_done(&sh, evp[0], 1.0))
			pthread_join(th, NULL);
		else
			thread_stuck = 1;
	}
	pthread_mutex_lock(&sh.mu);
	if (sh.lost)
		sup.lost = 1;
	pthread_mutex_unlock(&sh.mu);
	if (sh.has_last && sh.last.has_payload && sh.last.holds_token &&
	    sh.last.payload.lease_token[0])
		memcpy(token, sh.last.payload.lease_token, sizeof(token));

	if (sup.lost) {
		/* The lease is (or may be) someone else's now: the tree is gone; exit 4. */
		lease_result lr;
		int code = sh.lost_code ? sh.lost_code : LEASE_EEXPIRED;

		if (sh.has_last) {
			lr = sh.last;
		} else {
			memset(&lr, 0, sizeof(lr));
			lr.status = LEASE_STATUS_EXPIRED;
			lr.code = LEASE_EEXPIRED;
			snprintf(lr.message, sizeof(lr.message),
			         "no heartbeat landed before the lost deadline");
		}
		if (!sh.lost) {
			/* the watchdog fired: no heartbeat landed in time; one
			 * message, with the cause: the last failure, or none yet */
			char cause[sizeof(lr.message)];
			if (sh.has_last && sh.last_event == LEASE_KEEP_RETRY && sh.last.message[0])
				snprintf(cause, sizeof(cause),
				         "the last heartbeat failed (%s): %.400s",
				         lease_error_id(sh.last.code), sh.last.message);
			else
				snprintf(cause, sizeof(cause),
				         "the heartbeat in flight got no answer (a store that does "
				         "not answer, a ref lock held)");
			lr.status = LEASE_STATUS_EXPIRED;
			lr.code = code = LEASE_EEXPIRED;
			snprintf(lr.message, sizeof(lr.message),
			         "no heartbeat landed before the lost deadline; %.400s", cause);
		}
		status = sh.lost_event == LEASE_KEEP_FAILED ? cli_exit_for(code) : EXIT_NOTHOLDER;
		if (status == EXIT_OK)
			status = EXIT_NOTHOLDER;
		if (ra.conflict) /* lost is lost, whatever the cause (403, a bad payload) */
			status = ra.conflict;
		lr.holds_token = 0;
		fprintf(stderr, "reflease run: %s: lease lost (%s): %s; %s stopped\n", rn.label,
		        lease_status_name(lr.status),
		        lr.message[0] ? lr.message : lease_error_id(code), cmd[0]);
		if (thread_stuck) {
			/* The store handle is still in use by the heartbeat thread:
			 * report without touching it, and leave at once. */
			if (!lr.message[0])
				snprintf(lr.message, sizeof(lr.message), "lease lost");
			if (!lr.name[0]) {
				snprintf(lr.name, sizeof(lr.name), "%s", name);
				snprintf(lr.ref, sizeof(lr.ref), "refs/%s/%s",
				         ctx->ns ? ctx->ns : "leases", name);
			}
			if (rn.n > 1)
				set_lost_answer(rn.set, NULL, rn.names, rn.n, &lr, code);
			run_emit(&out, NULL, &lr, &rn, code, "lost", status, sup.have_cmd,
			         sup.cmd_status);
			fflush(NULL);
			_exit(status);
		}
		if (!thread_started) {
			/* no heartbeat thread could be started: the lease is still
			 * ours, give it back (F08) */
			release_now(ctx, st, &rn, token, &rel);
		}
		if (rn.n > 1)
			set_lost_answer(rn.set, st, rn.names, rn.n, &lr, code);
		run_emit(&out, st, &lr, &rn, code, "lost", status, sup.have_cmd, sup.cmd_status);
		goto cleanup;
	}

	rc = release_now(ctx, st, &rn, token, &rel);
	if (sup.interrupted)
		status = cli_exit_for_signal(sup.interrupted);
	else if (sup.guard_died)
		status = EXIT_SOFTWARE;
	else if (WIFEXITED(sup.cmd_status))
		status = WEXITSTATUS(sup.cmd_status);
	else
		status = 128 + WTERMSIG(sup.cmd_status);
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
		        rn.label, rel.message[0] ? rel.message : lease_error_id(rc), status,
		        cmd_st);
	}
	run_emit(&out, st, &rel, &rn, rc,
	         sup.interrupted  ? "interrupted"
	         : sup.guard_died ? "error"
	                          : "exited",
	         status, sup.have_cmd, sup.cmd_status);

cleanup:
	if (thread_started || sh.ev_w)
		pthread_mutex_destroy(&sh.mu);
	if (sfd >= 0)
		close(sfd);
	for (i = 0; i < 2; i++) {
		if (evp[i] >= 0)
			close(evp[i]);
		if (stp[i] >= 0)
			close(stp[i]);
	}
	if (sup.g.pid > 0) {
		close(sup.g.ctl_w);
		close(sup.g.ev_r);
	}
	if (out.json_fd >= 0)
		close(out.json_fd);
	free(rn.set);
	free(argv2);
	return status;
}
