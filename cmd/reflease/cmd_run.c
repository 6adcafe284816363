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
#include "cmd_lease.h"
#include "cmd_set.h"
#include "run_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Longest wait between a forwarded signal and SIGKILL, seconds, so that the
 * release happens within 5 s of the signal (cli.md). */
#define RUN_SIGNAL_KILL_MAX 3.0
/* Store time has whole seconds: a reading of `now` may be up to 1 s behind,
 * so the watchdog's deadline is taken that much earlier (never later). */
#define STORE_TIME_SLACK 1.0
/* Longest sleep of the main thread, ms: the wall clock (a step, a resume)
 * is looked at this often. */
#define RUN_TICK_MS 200
/* When the tree is not gone this long after its SIGKILL was due, reflease
 * kills its whole subtree itself, the guard included (a stopped guard). */
#define RUN_GUARD_SLACK 1.0

#define OPT_CONFLICT_EXIT (OPT_COMMAND_BASE + 90)

static const struct option run_longopts[] = {
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
	lease_args a; /* first: lease_args_option's payload */
	int conflict; /* --conflict-exit-code, 0 = not given */
} run_args;

static int run_option(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	run_args *ra = payload;

	if (c == OPT_CONFLICT_EXIT) {
		char *end = NULL;
		long v;
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 255)
			return cli_usage(
			        ctx, "--conflict-exit-code: '%s' is not an exit status in 1..255",
			        arg);
		ra->conflict = (int)v;
		return 0;
	}
	return lease_args_option(ctx, c, arg, &ra->a);
}

/* The names a run holds: one lease, or a set (protocol.md "Sets"). */
typedef struct run_names {
	const char *names[LEASE_SET_MAX];
	size_t n;
	lease_set_result *set; /* n > 1: the set's latest answer (owned) */
	char label[LEASE_SET_MAX * (LEASE_NAME_MAX + 1) + 1]; /* "A B C", for messages */
} run_names;

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
	int last_event;  /* the event of `last` (lease_keep_event) */
	double deadline; /* the lost deadline on run_clock() (CLOCK_BOOTTIME), s */
	double lost_at;  /* the lost deadline in store time, s since the epoch */
	double grace;    /* kill_grace of the TTL behind lost_at, s (a shorter TTL
	                    written under run shortens it: the tree must be gone by
	                    expires_at − 2 s, protocol.md §6) */
	int changed;     /* deadline changed since the main thread looked */
	int done;        /* the service returned */
	int verbosity;
	const char *name;
} run_shared;

static void notify(run_shared *sh)
{
	char b = 'x';
	ssize_t n = write(sh->ev_w, &b, 1);
	(void)n; /* a full pipe already carries a wake-up */
}

/* Set the deadlines from a report at store time @p now, for a lease of
 * @p ttl seconds (under mu). */
static void set_deadline(run_shared *sh, double lost_at, int64_t now, int64_t ttl, int only_earlier)
{
	double d = run_clock() + (lost_at - (double)now) - STORE_TIME_SLACK;

	if (only_earlier && d >= sh->deadline)
		return;
	sh->deadline = d;
	sh->lost_at = lost_at;
	sh->grace = lease_kill_grace(ttl);
	sh->changed = 1;
}

static void keeper_report(const lease_keep_report *rep, void *payload)
{
	run_shared *sh = payload;

	pthread_mutex_lock(&sh->mu);
	sh->last = *rep->result;
	sh->has_last = 1;
	sh->last_event = (int)rep->event;
	switch (rep->event) {
	case LEASE_KEEP_WRITE:
		/* only a write moves the deadline later: a `not_due` answer (after
		 * the wall clock stepped back, say) keeps the one the last write
		 * set on CLOCK_BOOTTIME — other hosts judge by the real time */
		set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds,
		             rep->result->status != LEASE_STATUS_RENEWED);
		break;
	case LEASE_KEEP_RETRY:
		/* a failed heartbeat may show an earlier stored expiry (§6) */
		set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds, 1);
		if (sh->verbosity >= LEASE_LOG_WARN)
			fprintf(stderr,
			        "reflease run: %s: heartbeat failed (%s: %s); retrying in %.0f s, "
			        "lost in %.0f s\n",
			        sh->name, lease_error_id(rep->code), rep->result->message,
			        rep->next_in, rep->lost_at - (double)rep->now);
		break;
	case LEASE_KEEP_CHANGED:
		/* someone with the token (CMD itself) stored an earlier expiry:
		 * the deadline is min(own write, stored expiry) (§6) */
		set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds, 1);
		if (sh->verbosity >= LEASE_LOG_INFO)
			lease_keep_changed_note("run", sh->name, rep);
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
	const run_names *rn;
	lease_keep_options keep;
	lease_oid at; /* the acquire's oid (keep.known_oid) */
	run_shared *sh;
} keeper_args;

static void *keeper_main(void *arg)
{
	keeper_args *k = arg;
	lease_result last;
	int rc = k->rn->n == 1 ? lease_keep(&last, k->st, k->rn->names[0], &k->keep)
	                       : lease_keep_set(&last, k->st, k->rn->names, k->rn->n, &k->keep);

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
	double end = run_clock() + seconds;
	int done;

	for (;;) {
		struct pollfd p = {evfd, POLLIN, 0};
		double left;
		char buf[64];

		pthread_mutex_lock(&sh->mu);
		done = sh->done;
		pthread_mutex_unlock(&sh->mu);
		left = end - run_clock();
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
	int json_fd; /* --json-file, opened before anything is acquired; -1 = none */
} run_out;

/* --json-file F must be writable before the lease is taken (F08): open it
 * now (created empty when missing, kept otherwise). */
static int open_json_file(cli_ctx *ctx, const char *path, int *fd)
{
	struct stat sb;

	/* an output file that cannot be written is configuration (78), as for
	 * --summary (issue 23; cli.md exit table) */
	*fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (*fd < 0)
		return cli_fail(ctx, LEASE_ECONFIG, "--json-file %s: cannot write: %s", path,
		                strerror(errno));
	if (fstat(*fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return cli_fail(ctx, LEASE_ECONFIG, "--json-file %s is a directory; name a file",
		                path);
	}
	return 0;
}

/* Write the run object @p obj (taken) with how CMD and reflease ended.
 * With --json it is the last line of stderr; with --json-file F it goes to F. */
static void run_emit_obj(const run_out *o, json_t *obj, const char *reason, int exit_status,
                         int have_cmd, int cmd_status)
{
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
	if (o->json_fd >= 0) {
		int fd = dup(o->json_fd);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			fprintf(stderr, "reflease run: --json-file %s: %s\n", o->json_file,
			        strerror(errno));
			if (fd >= 0)
				close(fd);
			json_decref(obj);
			return;
		}
		if (ftruncate(fd, 0) == 0)
			lseek(fd, 0, SEEK_SET);
		cli_emit_json(f, obj);
		if (fclose(f) != 0)
			fprintf(stderr, "reflease run: --json-file %s: %s\n", o->json_file,
			        strerror(errno));
	} else {
		fflush(stderr);
		cli_emit_json(stderr, obj);
	}
}

/* The run object: the last lease result (a set's answer for a set) plus how
 * CMD and reflease ended. */
static void run_emit(const run_out *o, lease_store *st, lease_result *r, const run_names *rn,
                     int rc, const char *reason, int exit_status, int have_cmd, int cmd_status)
{
	if (st && rn->n == 1)
		lease_result_fixup(r, st, rn->names[0], rc);
	if (!o->json && o->json_fd < 0)
		return;
	run_emit_obj(o, rn->n > 1 ? set_result_json(rn->set) : cli_result_json(r), reason,
	             exit_status, have_cmd, cmd_status);
}

/* ---- signals ---- */

/* The signals run handles: every catchable terminating one, and SIGCHLD. */
static void run_signal_set(sigset_t *set)
{
	run_terminating_signals(set);
	sigaddset(set, SIGCHLD);
}

static int open_signalfd(void)
{
	sigset_t set;

	run_signal_set(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Read pending signals; returns the first terminating one seen (0 if none)
 * and sets *chld on SIGCHLD. */
static int drain_signals(int sfd, int *chld)
{
	struct signalfd_siginfo si;
	int sig = 0;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			*chld = 1;
		else if (si.ssi_signo == SIGPIPE && si.ssi_code == SI_USER &&
		         (pid_t)si.ssi_pid == getpid())
			continue; /* our own write to a closed pipe (EPIPE is handled) */
		else if (!sig)
			sig = (int)si.ssi_signo;
	}
	return sig;
}

/* ---- run ---- */

/* Whether /proc shows this process's own PID namespace: /proc/self names
 * getpid(). Not so in a PID namespace that kept the parent's /proc (the
 * process is another pid there, or not visible at all). */
static int proc_is_ours(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10) == (long)getpid();
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
		lease_result_fixup(&r, st, g->rn->names[0], rc);
	fprintf(stderr, "reflease run: %s: reflease died; CMD's tree is stopped; release: %s%s%s\n",
	        g->rn->label, lease_status_name(r.status), r.message[0] ? ": " : "", r.message);
	lease_store_free(st);
	g->ctx->st = NULL;
}

/* The supervision of one run: the guard, and how it all ended. */
typedef struct run_sup {
	run_guard g;
	double kill_grace;
	int wall_is_store; /* the store's time is this host's wall clock */
	int fg;            /* reflease had the terminal's foreground (CMD was given it) */
	int lost;          /* the lease is (or may be) lost */
	int interrupted;   /* the first terminating signal received */
	int have_cmd;      /* CMD's status is known */
	int cmd_status;    /* as waitpid(2) */
	int guard_died;    /* the guard ended without reporting the tree gone */
	int guard_reaped;  /* waitpid has collected the guard */
	double hard_at;    /* the tree must be gone by then (run_clock), 0 = no limit */
	double sent_dl;    /* the deadline the guard was last given */
	char sent_token[LEASE_TOKEN_HEXSZ + 1]; /* the token the guard was last given */
} run_sup;

/* Ask the guard to kill the tree; remember by when it must be gone. */
static void sup_kill(run_sup *s, int sig, double grace)
{
	double at = run_clock() + grace + RUN_GUARD_SLACK;

	run_guard_kill(&s->g, sig, grace);
	if (!s->hard_at || at < s->hard_at)
		s->hard_at = at;
}

/* Reap reflease's own children (the guard, or orphans after its death). */
static void sup_reap(run_sup *s)
{
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		if (w == s->g.pid) {
			s->guard_reaped = 1;
			s->guard_died = 1; /* TREE_GONE, when it came, was read before */
		}
}

/* The watchdog (§6): lost when the service said so, or at the lost deadline
 * on either clock; then the tree gets SIGTERM and SIGKILL after kill_grace,
 * never later than expires_at − 2 s in store time. Passes the deadline on to
 * the guard. Returns the deadline (run_clock()). */
static double check_lost(run_sup *s, run_shared *sh)
{
	double now = run_clock(), deadline, lost_at, kg;
	int lost_now;

	pthread_mutex_lock(&sh->mu);
	deadline = sh->deadline;
	lost_at = sh->lost_at;
	/* the kill_grace of the TTL behind the deadline: CMD's own heartbeat
	 * with a shorter TTL shortens it (the tree is gone by expires_at − 2 s) */
	kg = sh->grace > 0 && sh->grace < s->kill_grace ? sh->grace : s->kill_grace;
	lost_now = sh->lost;
	if (sh->changed && !s->lost && deadline != s->sent_dl) {
		run_guard_deadline(&s->g, deadline, kg);
		s->sent_dl = deadline;
	}
	sh->changed = 0;
	if (sh->has_last && sh->last.has_payload && sh->last.holds_token &&
	    sh->last.payload.lease_token[0] &&
	    strcmp(sh->last.payload.lease_token, s->sent_token) != 0) {
		/* a handoff rotated it: the guard releases with the current one */
		memcpy(s->sent_token, sh->last.payload.lease_token, sizeof(s->sent_token));
		run_guard_token(&s->g, s->sent_token);
	}
	pthread_mutex_unlock(&sh->mu);
	if (!s->lost &&
	    (lost_now || now >= deadline ||
	     (s->wall_is_store && lease_clock_seconds(LEASE_CLOCK_REALTIME) >= lost_at))) {
		double grace = kg;
		if (s->wall_is_store &&
		    lost_at + kg - lease_clock_seconds(LEASE_CLOCK_REALTIME) < grace)
			grace = lost_at + kg - lease_clock_seconds(LEASE_CLOCK_REALTIME);
		s->lost = 1;
		run_guard_deadline(&s->g, 0, 0);
		sup_kill(s, SIGTERM, grace < 0 ? 0 : grace);
	}
	return deadline;
}

/* CMD was stopped by job control (Ctrl-Z: SIGTSTP; SIGTTIN, SIGTTOU): stop
 * reflease too, as sudo does, so that the shell sees its job stopped and
 * gives the prompt back; the terminal goes back to reflease's group first.
 * While stopped nothing renews the lease (protocol.md §6): the guard's
 * watchdog still runs and stops the tree at the lost deadline; on SIGCONT
 * (fg, bg) CMD's tree is continued, and given the terminal when reflease has
 * it (fg). */
static void stop_with_cmd(run_sup *s)
{
	if (s->fg)
		tcsetpgrp(STDIN_FILENO, getpgrp());
	kill(getpid(), SIGSTOP); /* returns once continued */
	if (s->fg && s->g.cmd_pid > 0 && tcgetpgrp(STDIN_FILENO) == getpgrp())
		tcsetpgrp(STDIN_FILENO, s->g.cmd_pid);
	run_guard_resume(&s->g);
}

/* Supervise until CMD's whole tree is gone: signals, the guard's reports,
 * the heartbeat service's reports and the watchdog. */
static void supervise(run_sup *s, run_shared *sh, int sfd, int evfd)
{
	for (;;) {
		struct pollfd fds[3] = {
		        {sfd, POLLIN, 0}, {evfd, POLLIN, 0}, {s->g.ev_r, POLLIN, 0}};
		double now = run_clock(), deadline = check_lost(s, sh);
		int chld = 0, sig, ms = RUN_TICK_MS, ev, st = 0, gone = 0;

		if (s->hard_at && now >= s->hard_at) {
			/* the guard did not finish in time (stopped?): kill the
			 * whole subtree from here, the guard included */
			run_tree_stop(SIGKILL, 0, s->g.pid, &st);
			s->guard_reaped = 1;
			if (!s->have_cmd) {
				s->have_cmd = 1;
				s->cmd_status = SIGKILL;
			}
			return;
		}
		if (!s->lost && (deadline - now) * 1000.0 < ms)
			ms = (int)((deadline - now) * 1000.0) + 1;
		if (s->hard_at && (s->hard_at - now) * 1000.0 < ms)
			ms = (int)((s->hard_at - now) * 1000.0) + 1;
		if (poll(fds, 3, ms < 0 ? 0 : ms) < 0 && errno != EINTR)
			ms = 0;
		if (fds[1].revents & POLLIN) {
			char buf[64];
			while (read(evfd, buf, sizeof(buf)) > 0)
				;
		}
		sig = drain_signals(sfd, &chld);
		if (sig) {
			/* forwarded to every process of the tree; SIGKILL after
			 * min(kill_grace, 3 s), then release (cli.md: within 5 s) */
			double k = s->kill_grace < RUN_SIGNAL_KILL_MAX ? s->kill_grace
			                                               : RUN_SIGNAL_KILL_MAX;
			sup_kill(s, sig, k);
			if (!s->interrupted)
				s->interrupted = sig;
		}
		while ((ev = run_guard_read(&s->g, &st)) != RUN_GUARD_NONE) {
			if (ev == RUN_GUARD_CMD_EXITED) {
				s->have_cmd = 1;
				s->cmd_status = st;
			} else if (ev == RUN_GUARD_TREE_GONE) {
				gone = 1;
			} else if (ev == RUN_GUARD_CMD_STOPPED) {
				if (!s->lost && !s->interrupted && !s->hard_at)
					stop_with_cmd(s);
			} else {
				break; /* EOF */
			}
		}
		if (gone) {
			/* a deadline passed while reflease was stopped counts */
			check_lost(s, sh);
			return;
		}
		if (chld)
			sup_reap(s);
		if (s->g.eof || s->guard_died) {
			/* The guard died (SIGKILL): CMD died with it (PDEATHSIG), the
			 * rest of the tree re-parented here. Kill it from here. */
			s->guard_died = 1;
			fprintf(stderr,
			        "reflease run: the guard process died; stopping CMD's tree\n");
			run_tree_stop(SIGTERM, s->kill_grace, s->g.pid, &st);
			s->guard_reaped = 1;
			if (!s->have_cmd) {
				s->have_cmd = 1;
				s->cmd_status = SIGKILL;
			}
			return;
		}
	}
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
		if (!argv2[k])
			break; /* no `--` later: CMD starts here */
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
	if ((rc = lease_check_slots_name(ctx, name, a->slots)) < 0) {
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
		return cli_status_of(cli_usage(
		        ctx,
		        "--fair goes with --wait S: the queue is for waiting (protocol.md §5)"));
	}
	if (a->fair && (a->slots || rn.n > 1)) {
		free(argv2);
		return cli_status_of(cli_usage(ctx, "--fair queues for one lease: not with %s",
		                               a->slots ? "--slots" : "a set of NAMEs"));
	}
	ttl = a->ttl ? a->ttl : LEASE_TTL_DEFAULT;
	if (lease_heartbeat_every(&every, ttl, a->every) < 0) {
		free(argv2);
		return cli_status_of(cli_usage(ctx, "--every: %ld s is above ttl/2 (%lld s)",
		                               a->every, (long long)(ttl / 2)));
	}
	if ((rc = cli_open_store(ctx, &st)) < 0 || (rc = lease_check_ttl(ctx, st, a->ttl)) < 0) {
		free(argv2);
		return cli_status_of(rc);
	}
	if (lease_keep_check_ttl(ttl) < 0) {
		/* §6: heartbeats could not land before the lost deadline */
		free(argv2);
		return cli_status_of(cli_usage(
		        ctx,
		        "--ttl %lld s is too short for run: after kill_grace and the lost "
		        "deadline's margin no heartbeat could land in time; use --ttl 6 or more",
		        (long long)ttl));
	}
	if (access("/proc/self/stat", R_OK) != 0) {
		/* the guard finds CMD's tree through /proc: no fence without it */
		free(argv2);
		fprintf(stderr,
		        "reflease run: /proc is not mounted: CMD's process tree could not be "
		        "fenced (protocol.md §6); mount /proc\n");
		return EXIT_CONFIG;
	}
	if (!proc_is_ours()) {
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
	if (a->json_file && (rc = open_json_file(ctx, a->json_file, &out.json_fd)) < 0) {
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

	/* Acquire (waiting on held). Signals are handled here: an interrupted
	 * backoff sleep ends the process at once (nothing is held then). */
	lease_wait_guard_arm(ctx, name, out.json && !out.json_file ? STDERR_FILENO : -1,
	                     out.json_file);
	lease_install_stop_handlers(); /* every terminating signal ends the wait */
	ao.owner = ctx->owner;
	ao.host = ctx->host;
	ao.ttl_seconds = ttl;
	ao.wait_seconds = a->wait;
	ao.fair = a->fair;
	ao.wait_cb = a->fair ? lease_wait_fair_cb : lease_wait_guard_cb;
	ao.wait_payload = &r; /* the ref as last read, for the interrupted object */
	memset(&r, 0, sizeof(r));
	if (rn.n > 1) {
		/* the whole set in one write, or none; --wait holds no part of it
		 * (protocol.md "Sets") */
		if (!(rn.set = calloc(1, sizeof(*rn.set)))) {
			lease_wait_guard_disarm();
			fprintf(stderr, "reflease run: out of memory\n");
			goto cleanup;
		}
		ao.wait_payload = &rn.set->members[0];
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
	lease_wait_guard_disarm();
	if (a->slots && rc == 0) {
		/* from here on the slot taken is the lease kept and released */
		memcpy(slot_name, r.name, sizeof(slot_name));
		name = rn.names[0] = slot_name;
		snprintf(rn.label, sizeof(rn.label), "%s", slot_name);
	}
	/* From here on every signal is read from the signalfd (no races). */
	if ((sfd = open_signalfd()) < 0) {
		fprintf(stderr, "reflease run: signalfd: %s\n", strerror(errno));
		if (rc == 0)
			release_now(ctx, st, &rn, r.payload.lease_token, &rel);
		goto cleanup;
	}
	sig0 = lease_stop_signal;
	{
		int chld = 0, s = drain_signals(sfd, &chld);
		if (s && !sig0)
			sig0 = s;
	}
	if (rc < 0) {
		if (rn.n == 1)
			lease_result_fixup(&r, st, name, rc);
		status = sig0 ? lease_exit_for_signal(sig0) : cli_exit_for(rc);
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
		status = lease_exit_for_signal(sig0);
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
	set_deadline(&sh, lease_lost_at(&r.payload, ttl), r.now, ttl, 0);
	sup.sent_dl = sh.deadline;
	memcpy(sup.sent_token, token, sizeof(sup.sent_token));
	grc.ctx = ctx;
	grc.rn = &rn;
	/* Orphans of the tree come here if the guard dies; then the guard
	 * (single-threaded fork: the heartbeat thread starts afterwards). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ||
	    run_guard_start(&sup.g, cmd, fg, sup.kill_grace,
	                    sup.kill_grace < RUN_SIGNAL_KILL_MAX ? sup.kill_grace
	                                                         : RUN_SIGNAL_KILL_MAX,
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
		k.every_seconds = every;
		k.known_expires_at = r.payload.expires_at;
		k.known_ttl_seconds = ttl;
		k.known_now = r.now;
		k.check_seconds = lease_keep_check_interval(st);
		ka.at = r.oid;
		k.known_oid = r.present ? &ka.at : NULL;
		k.sleep = keeper_sleep;
		k.sleep_payload = &sh;
		k.report = keeper_report;
		k.report_payload = &sh;
		ka.keep = k;
	}
	ka.st = st;
	ka.rn = &rn;
	ka.sh = &sh;
	if (pthread_create(&th, NULL, keeper_main, &ka) != 0) {
		fprintf(stderr, "reflease run: cannot start the heartbeat thread\n");
		sh.lost = 1; /* stop CMD at once: nobody keeps the lease */
		sh.lost_event = LEASE_KEEP_FAILED;
		sh.lost_code = LEASE_EINTERNAL;
	} else {
		thread_started = 1;
	}

	supervise(&sup, &sh, sfd, evp[0]);
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
		if (!sup.lost || wait_done(&sh, evp[0], 1.0))
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
		status = lease_exit_for_signal(sup.interrupted);
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
