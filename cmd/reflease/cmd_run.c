/*
 * `run NAME [--ttl S] [--every S] [--wait S] [--json-file F] -- CMD [ARG...]`
 * (cli.md, protocol.md §6): acquire, run CMD in its own process group while a
 * heartbeat thread keeps the lease, release when CMD ends and exit with its
 * status. Like flock(1), for leases.
 *
 * When reflease runs in the terminal's foreground, CMD's group is given the
 * terminal (and reflease takes it back when CMD ends), so an interactive CMD
 * reads the terminal and gets the keyboard's signals as it would under a shell.
 *
 * Threads: the main thread owns CMD and every signal (all blocked, read
 * through a signalfd together with SIGCHLD, so nothing races); a second thread
 * runs the heartbeat service (lib/lease/heartbeat.c) on the store handle, which
 * the main thread does not touch until it has joined it. The main thread also
 * keeps its own watchdog on the lost deadline, so CMD is stopped in time even
 * when a heartbeat hangs inside the store.
 *
 * Lost lease: at expires_at − (kill_grace + 2 s), or at once when a heartbeat
 * answers not_holder/expired, CMD's group gets SIGTERM, then SIGKILL after
 * kill_grace; reflease exits 4 — CMD is dead before anyone else may take over.
 * SIGINT/SIGTERM/SIGHUP: forwarded to CMD's group, SIGKILL after min(kill_grace,
 * 3 s) if it is still running, then the lease is released (within 5 s of the
 * signal on a responsive store) and reflease exits 130/143/129.
 */
#define _GNU_SOURCE
#include "cmd_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Longest wait between a forwarded signal and SIGKILL, seconds, so that the
 * release happens within 5 s of the signal (cli.md). */
#define RUN_SIGNAL_KILL_MAX 3.0
/* Store time has whole seconds: a reading of `now` may be up to 1 s behind,
 * so the watchdog's deadline is taken that much earlier (never later). */
#define STORE_TIME_SLACK 1.0

static const struct option run_longopts[] = {{"ttl", required_argument, NULL, OPT_TTL},
                                             {"every", required_argument, NULL, OPT_EVERY},
                                             {"wait", required_argument, NULL, OPT_WAIT},
                                             {"json-file", required_argument, NULL, OPT_JSON_FILE},
                                             CLI_GLOBAL_LONGOPTS,
                                             {NULL, 0, NULL, 0}};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* State shared with the heartbeat thread (under mu). */
typedef struct run_shared {
	pthread_mutex_t mu;
	int ev_w;          /* event pipe, write end (thread → main) */
	int stop_r;        /* stop pipe, read end (main → thread) */
	int lost;          /* the service reported LOST or FAILED */
	int lost_event;    /* LEASE_KEEP_LOST or LEASE_KEEP_FAILED */
	int lost_code;     /* its code */
	lease_result last; /* the service's latest result */
	int has_last;
	double deadline_mono; /* the lost deadline on CLOCK_MONOTONIC, s */
	int done;             /* the service returned */
	int verbosity;
	const char *name;
} run_shared;

static void notify(run_shared *sh)
{
	char b = 'x';
	ssize_t n = write(sh->ev_w, &b, 1);
	(void)n; /* a full pipe already carries a wake-up */
}

static void keeper_report(const lease_keep_report *rep, void *payload)
{
	run_shared *sh = payload;

	pthread_mutex_lock(&sh->mu);
	sh->last = *rep->result;
	sh->has_last = 1;
	switch (rep->event) {
	case LEASE_KEEP_WRITE:
		sh->deadline_mono =
		        mono_now() + (rep->lost_at - (double)rep->now) - STORE_TIME_SLACK;
		break;
	case LEASE_KEEP_RETRY:
		if (sh->verbosity >= LEASE_LOG_WARN)
			fprintf(stderr,
			        "reflease run: %s: heartbeat failed (%s: %s); retrying in %.0f s, "
			        "lost in %.0f s\n",
			        sh->name, lease_error_id(rep->code), rep->result->message,
			        rep->next_in, rep->lost_at - (double)rep->now);
		break;
	case LEASE_KEEP_LOST:
	case LEASE_KEEP_FAILED:
		sh->lost = 1;
		sh->lost_event = (int)rep->event;
		sh->lost_code = rep->code;
		break;
	}
	pthread_mutex_unlock(&sh->mu);
	notify(sh);
}

/* The service's sleep: wait on the stop pipe, so a stop is seen at once. */
static int keeper_sleep(double seconds, void *payload)
{
	run_shared *sh = payload;
	struct pollfd p = {sh->stop_r, POLLIN, 0};
	int ms = seconds > 3600 ? 3600000 : (int)(seconds * 1000.0);

	return poll(&p, 1, ms) > 0;
}

typedef struct keeper_args {
	lease_store *st;
	const char *name;
	lease_keep_options keep;
	run_shared *sh;
} keeper_args;

static void *keeper_main(void *arg)
{
	keeper_args *k = arg;
	lease_result last;
	int rc = lease_keep(&last, k->st, k->name, &k->keep);

	pthread_mutex_lock(&k->sh->mu);
	k->sh->done = 1;
	if (rc < 0 && !k->sh->lost) {
		/* bad options: treat as a permanent failure */
		k->sh->lost = 1;
		k->sh->lost_event = LEASE_KEEP_FAILED;
		k->sh->lost_code = rc;
		k->sh->last = last;
		k->sh->has_last = 1;
	}
	pthread_mutex_unlock(&k->sh->mu);
	notify(k->sh);
	return NULL;
}

/* Wait up to @p seconds for the heartbeat thread to finish; 1 when it has. */
static int wait_done(run_shared *sh, int evfd, double seconds)
{
	double end = mono_now() + seconds;
	int done;

	for (;;) {
		struct pollfd p = {evfd, POLLIN, 0};
		double left;
		char buf[64];

		pthread_mutex_lock(&sh->mu);
		done = sh->done;
		pthread_mutex_unlock(&sh->mu);
		left = end - mono_now();
		if (done || left <= 0)
			return done;
		if (poll(&p, 1, (int)(left * 1000.0) + 1) > 0)
			while (read(evfd, buf, sizeof(buf)) > 0)
				;
	}
}

/* ---- output ---- */

typedef struct run_out {
	cli_ctx *ctx;
	int json;
	const char *json_file;
} run_out;

/* The run object: the last lease result plus how CMD and reflease ended.
 * With --json it is the last line of stderr; with --json-file F it goes to F. */
static void run_emit(const run_out *o, lease_store *st, lease_result *r, const char *name, int rc,
                     const char *reason, int exit_status, int have_cmd, int cmd_status)
{
	json_t *obj;

	if (st)
		lease_result_fixup(r, st, name, rc);
	if (!o->json && !o->json_file)
		return;
	obj = cli_result_json(r);
	json_object_set_new(obj, "reason", json_string(reason));
	json_object_set_new(obj, "exit_status", json_integer(exit_status));
	if (have_cmd) {
		json_t *c = json_object();
		if (WIFEXITED(cmd_status)) {
			json_object_set_new(c, "exit_code", json_integer(WEXITSTATUS(cmd_status)));
			json_object_set_new(c, "signal", json_null());
		} else {
			json_object_set_new(c, "exit_code", json_null());
			json_object_set_new(c, "signal", json_integer(WTERMSIG(cmd_status)));
		}
		json_object_set_new(obj, "command", c);
	}
	if (o->json_file) {
		FILE *f = fopen(o->json_file, "w");
		if (!f) {
			fprintf(stderr, "reflease run: --json-file %s: %s\n", o->json_file,
			        strerror(errno));
			json_decref(obj);
			return;
		}
		cli_emit_json(f, obj);
		fclose(f);
	} else {
		fflush(stderr);
		cli_emit_json(stderr, obj);
	}
}

/* ---- signals ---- */

static int open_signalfd(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, set, NULL) < 0)
		return -1;
	return signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Read pending signals; returns the first of INT/TERM/HUP seen (0 if none)
 * and sets *chld on SIGCHLD. */
static int drain_signals(int sfd, int *chld)
{
	struct signalfd_siginfo si;
	int sig = 0;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			*chld = 1;
		else if (!sig)
			sig = (int)si.ssi_signo;
	}
	return sig;
}

typedef struct wait_state {
	int sig;
} wait_state;

/* ---- the child ---- */

/* Block SIGTTOU (a process group that is not in the foreground may then
 * still call tcsetpgrp). */
static void block_ttou(void)
{
	sigset_t t;

	sigemptyset(&t);
	sigaddset(&t, SIGTTOU);
	sigprocmask(SIG_BLOCK, &t, NULL);
}

static void child_exec(char **cmd, pid_t parent, int fg)
{
	sigset_t none;
	int e;

	sigemptyset(&none);
	setpgid(0, 0);
	if (fg) {
		/* reflease owned the terminal: CMD's group gets it (keyboard
		 * signals and terminal reads go to CMD, as under a shell) */
		block_ttou();
		tcsetpgrp(STDIN_FILENO, getpid());
	}
	/* Dies with reflease (it cannot outlive the lease's keeper); then make
	 * sure reflease did not die before the request took effect. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_SOFTWARE);
	/* a signal forwarded before exec acts on CMD, not on our handler */
	lease_default_stop_handlers();
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(cmd[0], cmd);
	e = errno;
	{
		char msg[512];
		int n = snprintf(msg, sizeof(msg), "reflease run: %s: %s\n", cmd[0], strerror(e));
		if (n > 0) {
			ssize_t w = write(STDERR_FILENO, msg,
			                  (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
			(void)w;
		}
	}
	_exit(e == ENOENT ? 127 : 126);
}

/* ---- run ---- */

static int release_now(cli_ctx *ctx, lease_store *st, const char *name, const char *token,
                       lease_result *r)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = ctx->owner;
	o.host = ctx->host;
	o.lease_token = token;
	memset(r, 0, sizeof(*r));
	return lease_release(r, st, name, &o);
}

static void set_env_long(const char *k, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	setenv(k, buf, 1);
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	lease_result r, rel;
	lease_args a;
	lease_store *st = NULL;
	run_out out;
	run_shared sh;
	keeper_args ka;
	wait_state ws;
	sigset_t set;
	pthread_t th;
	char **argv2 = NULL, **cmd;
	char token[LEASE_TOKEN_HEXSZ + 1];
	const char *name;
	int i, j, rc, status = EXIT_SOFTWARE, sfd = -1, evp[2] = {-1, -1}, stp[2] = {-1, -1};
	int fg = 0, thread_started = 0, thread_stuck = 0, child_done = 0, cmd_status = 0, lost = 0,
	    interrupted = 0;
	int64_t ttl, every;
	double kill_grace;
	double kill_at = 0, deadline;
	pid_t pid = -1, parent = getpid();

	memset(&a, 0, sizeof(a));
	memset(&sh, 0, sizeof(sh));
	/* NAME, then options up to `--` or CMD (REQUIRE_ORDER: CMD's own options
	 * are never taken for ours). */
	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, run_longopts, lease_args_option,
	                   &a)) < 0)
		return cli_status_of(i);
	if ((rc = cli_take_name(ctx, i < argc ? i + 1 : argc, argv, i, &name)) < 0)
		return cli_status_of(rc);
	if (!(argv2 = calloc((size_t)(argc - i) + 1, sizeof(*argv2))))
		return EXIT_SOFTWARE;
	argv2[0] = argv[0];
	for (j = i + 1; j < argc; j++)
		argv2[j - i] = argv[j];
	if ((j = cli_parse(ctx, argc - i, argv2, CLI_GLOBAL_SHORTOPTS, run_longopts,
	                   lease_args_option, &a)) < 0) {
		free(argv2);
		return cli_status_of(j);
	}
	cmd = argv2 + j;
	if (!*cmd) {
		free(argv2);
		return cli_status_of(
		        cli_usage(ctx, "missing CMD (run NAME [options] -- CMD [ARG...])"));
	}
	ttl = a.ttl ? a.ttl : LEASE_TTL_DEFAULT;
	if (lease_heartbeat_every(&every, ttl, a.every) < 0) {
		free(argv2);
		return cli_status_of(cli_usage(ctx, "--every: %ld s is above ttl/2 (%lld s)",
		                               a.every, (long long)(ttl / 2)));
	}
	if ((rc = cli_open_store(ctx, &st)) < 0 || (rc = lease_check_ttl(ctx, st, a.ttl)) < 0) {
		free(argv2);
		return cli_status_of(rc);
	}
	kill_grace = lease_kill_grace(ttl);
	out.ctx = ctx;
	out.json = ctx->json;
	out.json_file = a.json_file;
	ctx->json = 0; /* stdout belongs to CMD */

	if (pipe2(evp, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(stp, O_CLOEXEC | O_NONBLOCK) < 0) {
		fprintf(stderr, "reflease run: %s\n", strerror(errno));
		goto cleanup;
	}

	/* Acquire (waiting on held). Signals are handled here: an interrupted
	 * backoff sleep ends the process at once (nothing is held then). */
	lease_wait_guard_arm(ctx, name, out.json && !out.json_file ? STDERR_FILENO : -1,
	                     out.json_file);
	lease_install_stop_handlers();
	ao.owner = ctx->owner;
	ao.host = ctx->host;
	ao.ttl_seconds = ttl;
	ao.wait_seconds = a.wait;
	ao.wait_cb = lease_wait_guard_cb;
	memset(&r, 0, sizeof(r));
	rc = lease_acquire(&r, st, name, &ao);
	lease_wait_guard_disarm();
	/* From here on every signal is read from the signalfd (no races). */
	if ((sfd = open_signalfd(&set)) < 0) {
		fprintf(stderr, "reflease run: signalfd: %s\n", strerror(errno));
		if (rc == 0)
			release_now(ctx, st, name, r.payload.lease_token, &rel);
		goto cleanup;
	}
	ws.sig = lease_stop_signal;
	{
		int chld = 0, s = drain_signals(sfd, &chld);
		if (s && !ws.sig)
			ws.sig = s;
	}
	if (rc < 0) {
		lease_result_fixup(&r, st, name, rc);
		status = ws.sig ? lease_exit_for_signal(ws.sig) : cli_exit_for(rc);
		fprintf(stderr, "reflease run: %s: %s%s%s\n", name, r.status,
		        r.message[0] ? ": " : "", r.message);
		run_emit(&out, st, &r, name, rc, ws.sig ? "interrupted" : "not_acquired", status, 0,
		         0);
		goto cleanup;
	}
	memcpy(token, r.payload.lease_token, sizeof(token));
	if (ws.sig) {
		/* Interrupted while acquiring: give it back, never start CMD. */
		interrupted = ws.sig;
		rc = release_now(ctx, st, name, token, &rel);
		status = lease_exit_for_signal(interrupted);
		run_emit(&out, st, &rel, name, rc, "interrupted", status, 0, 0);
		goto cleanup;
	}
	if (r.payload.has_ttl && r.payload.ttl_seconds > 0)
		ttl = r.payload.ttl_seconds;

	/* CMD's environment (§6). Set before fork: the process is single-threaded. */
	setenv("REFLEASE_LEASE_TOKEN", token, 1);
	set_env_long("REFLEASE_TRANSITIONS", (long long)r.payload.transitions);
	setenv("REFLEASE_LEASE_NAME", name, 1);
	fflush(stdout);
	fflush(stderr);
	fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if ((pid = fork()) < 0) {
		fprintf(stderr, "reflease run: fork: %s\n", strerror(errno));
		rc = release_now(ctx, st, name, token, &rel); /* F08 */
		run_emit(&out, st, &rel, name, rc, "error", EXIT_SOFTWARE, 0, 0);
		status = EXIT_SOFTWARE;
		goto cleanup;
	}
	if (pid == 0)
		child_exec(cmd, parent, fg);
	setpgid(pid, pid); /* also in the parent: no window where the group is wrong */
	if (fg) {
		block_ttou();
		tcsetpgrp(STDIN_FILENO, pid);
	}

	/* The heartbeat thread. */
	pthread_mutex_init(&sh.mu, NULL);
	sh.ev_w = evp[1];
	sh.stop_r = stp[0];
	sh.verbosity = ctx->verbosity;
	sh.name = name;
	sh.deadline_mono =
	        mono_now() + (lease_lost_at(&r.payload, ttl) - (double)r.now) - STORE_TIME_SLACK;
	{
		lease_keep_options k = LEASE_KEEP_OPTIONS_INIT;
		k.owner = ctx->owner;
		k.host = ctx->host;
		k.lease_token = token;
		k.ttl_seconds = ttl;
		k.every_seconds = every;
		k.known_expires_at = r.payload.expires_at;
		k.known_ttl_seconds = ttl;
		k.known_now = r.now;
		k.sleep = keeper_sleep;
		k.sleep_payload = &sh;
		k.report = keeper_report;
		k.report_payload = &sh;
		ka.keep = k;
	}
	ka.st = st;
	ka.name = name;
	ka.sh = &sh;
	if (pthread_create(&th, NULL, keeper_main, &ka) != 0) {
		fprintf(stderr, "reflease run: cannot start the heartbeat thread\n");
		lost = 1; /* stop CMD at once: nobody keeps the lease */
		sh.lost = 1;
		sh.lost_event = LEASE_KEEP_FAILED;
		sh.lost_code = LEASE_EINTERNAL;
		kill(-pid, SIGTERM);
		kill_at = mono_now() + kill_grace;
	} else {
		thread_started = 1;
	}

	/* Supervise: signals, CMD's end, the lost deadline. */
	while (!child_done) {
		struct pollfd fds[2] = {{sfd, POLLIN, 0}, {evp[0], POLLIN, 0}};
		double now = mono_now(), next = now + 3600;
		int chld = 0, sig, ms;

		pthread_mutex_lock(&sh.mu);
		deadline = sh.deadline_mono;
		if (sh.lost && !lost) {
			lost = 1;
			kill(-pid, SIGTERM);
			if (!kill_at || kill_at > now + kill_grace)
				kill_at = now + kill_grace;
		}
		pthread_mutex_unlock(&sh.mu);
		if (!lost && now >= deadline) {
			/* Watchdog (§6): the service did not renew in time. */
			lost = 1;
			kill(-pid, SIGTERM);
			if (!kill_at || kill_at > now + kill_grace)
				kill_at = now + kill_grace;
		}
		if (kill_at && now >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
		if (!lost && deadline < next)
			next = deadline;
		if (kill_at && kill_at < next)
			next = kill_at;
		ms = (int)((next - now) * 1000.0) + 1;
		if (poll(fds, 2, ms < 0 ? 0 : ms) < 0 && errno != EINTR)
			break;
		if (fds[1].revents & POLLIN) {
			char buf[64];
			while (read(evp[0], buf, sizeof(buf)) > 0)
				;
		}
		sig = drain_signals(sfd, &chld);
		if (sig) {
			kill(-pid, sig);
			if (!interrupted) {
				interrupted = sig;
				now = mono_now();
				double k = kill_grace < RUN_SIGNAL_KILL_MAX ? kill_grace
				                                            : RUN_SIGNAL_KILL_MAX;
				if (!kill_at || kill_at > now + k)
					kill_at = now + k;
			}
		}
		if (chld || sig || (fds[0].revents & POLLIN)) {
			pid_t w;
			while ((w = waitpid(pid, &cmd_status, WNOHANG)) < 0 && errno == EINTR)
				;
			if (w == pid)
				child_done = 1;
		}
	}

	if (fg)
		tcsetpgrp(STDIN_FILENO, getpgrp()); /* take the terminal back */
	/* CMD has ended: stop the heartbeat thread before using the store. */
	if (thread_started) {
		char b = 's';
		ssize_t n = write(stp[1], &b, 1);
		(void)n;
		/* When the lease is lost there is nothing left to write: do not
		 * wait long for a heartbeat stuck inside the store. */
		if (!lost || wait_done(&sh, evp[0], 1.0))
			pthread_join(th, NULL);
		else
			thread_stuck = 1;
	}
	pthread_mutex_lock(&sh.mu);
	if (sh.lost)
		lost = 1;
	pthread_mutex_unlock(&sh.mu);
	if (sh.has_last && sh.last.has_payload && sh.last.holds_token &&
	    sh.last.payload.lease_token[0])
		memcpy(token, sh.last.payload.lease_token, sizeof(token));

	if (lost) {
		/* The lease is (or may be) someone else's now: CMD is dead; exit 4. */
		lease_result lr;
		int code = sh.lost_code ? sh.lost_code : LEASE_EEXPIRED;

		if (sh.has_last) {
			lr = sh.last;
		} else {
			memset(&lr, 0, sizeof(lr));
			lr.status = "expired";
			lr.code = LEASE_EEXPIRED;
			snprintf(lr.message, sizeof(lr.message),
			         "no heartbeat landed before the lost deadline");
		}
		if (!sh.lost) {
			/* the watchdog fired: no heartbeat landed in time */
			char prev[sizeof(lr.message)];
			memcpy(prev, lr.message, sizeof(prev));
			lr.status = "expired";
			lr.code = code = LEASE_EEXPIRED;
			snprintf(lr.message, sizeof(lr.message),
			         "no heartbeat landed before the lost deadline%s%.300s",
			         prev[0] ? "; last: " : "", prev);
		}
		status = sh.lost_event == LEASE_KEEP_FAILED ? cli_exit_for(code) : EXIT_NOTHOLDER;
		if (status == EXIT_OK)
			status = EXIT_NOTHOLDER;
		lr.holds_token = 0;
		fprintf(stderr, "reflease run: %s: lease lost (%s%s%s); %s stopped\n", name,
		        lr.status ? lr.status : "error", lr.message[0] ? ": " : "", lr.message,
		        cmd[0]);
		if (thread_stuck) {
			/* The store handle is still in use by the heartbeat thread:
			 * report without touching it, and leave at once. */
			if (!lr.message[0])
				snprintf(lr.message, sizeof(lr.message), "lease lost");
			if (!lr.status)
				lr.status = "expired";
			snprintf(lr.name, sizeof(lr.name), "%s", name);
			snprintf(lr.ref, sizeof(lr.ref), "refs/%s/%s", ctx->ns ? ctx->ns : "leases",
			         name);
			run_emit(&out, NULL, &lr, name, code, "lost", status, 1, cmd_status);
			fflush(NULL);
			_exit(status);
		}
		if (!thread_started) {
			/* no heartbeat thread could be started: the lease is still
			 * ours, give it back (F08) */
			release_now(ctx, st, name, token, &rel);
		}
		run_emit(&out, st, &lr, name, code, "lost", status, 1, cmd_status);
		goto cleanup;
	}

	rc = release_now(ctx, st, name, token, &rel);
	if (rc < 0)
		fprintf(stderr, "reflease run: %s: release failed: %s\n", name,
		        lease_store_last_error(st)[0] ? lease_store_last_error(st)
		                                      : lease_error_id(rc));
	if (interrupted)
		status = lease_exit_for_signal(interrupted);
	else if (WIFEXITED(cmd_status))
		status = WEXITSTATUS(cmd_status);
	else
		status = 128 + WTERMSIG(cmd_status);
	run_emit(&out, st, &rel, name, rc, interrupted ? "interrupted" : "exited", status, 1,
	         cmd_status);

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
	free(argv2);
	return status;
}
