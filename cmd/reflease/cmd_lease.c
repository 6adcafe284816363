/* Lease commands (cli.md): acquire, heartbeat (once or --every), transition,
 * reacquire, release, break; `run` lives in cmd_run.c. Every input is
 * validated before the first write (F08). */
#define _GNU_SOURCE
#include "cmd_lease.h"
#include "cmd_set.h"
#include "run_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

/* Permute mode: options may follow NAME (`acquire deploy --ttl 60`); `--`
 * still ends them. */
#define LEASE_SHORTOPTS "vqh"

#define TTL_OPT                                                                                    \
	{                                                                                          \
		"ttl", required_argument, NULL, OPT_TTL                                            \
	}
#define TOKEN_OPT                                                                                  \
	{                                                                                          \
		"lease-token", required_argument, NULL, OPT_LEASE_TOKEN                            \
	}

static const struct option acquire_longopts[] = {
        TTL_OPT,
        {"phase", required_argument, NULL, OPT_PHASE},
        {"wait", required_argument, NULL, OPT_WAIT},
        {"fair", no_argument, NULL, OPT_FAIR},
        {"print-token", no_argument, NULL, OPT_PRINT_TOKEN},
        {"slots", required_argument, NULL, OPT_SLOTS},
        {"conflict-exit-code", required_argument, NULL, OPT_CONFLICT_EXIT_CODE},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};
static const struct option heartbeat_longopts[] = {
        TOKEN_OPT,
        TTL_OPT,
        {"every", required_argument, NULL, OPT_EVERY},
        {"release-on-exit", no_argument, NULL, OPT_RELEASE_ON_EXIT},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};
static const struct option transition_longopts[] = {TOKEN_OPT,
                                                    {"to", required_argument, NULL, OPT_TO},
                                                    CLI_GLOBAL_LONGOPTS,
                                                    {NULL, 0, NULL, 0}};
static const struct option reacquire_longopts[] = {
        TOKEN_OPT, TTL_OPT, CLI_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
static const struct option release_longopts[] = {TOKEN_OPT,
                                                 {"strict", no_argument, NULL, OPT_STRICT},
                                                 CLI_GLOBAL_LONGOPTS,
                                                 {NULL, 0, NULL, 0}};
static const struct option break_longopts[] = {
        {"force", no_argument, NULL, OPT_FORCE}, CLI_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};

/* ---- shared helpers (cmd_lease.h) ---- */

static int parse_live_phase(cli_ctx *ctx, const char *opt, const char *arg, lease_phase *out)
{
	lease_phase p;

	if (lease_phase_parse(&p, arg) < 0 || p == LEASE_PHASE_NONE || p == LEASE_PHASE_RELEASED)
		return cli_usage(
		        ctx, "%s: '%s' is not one of claimed, working, review%s", opt, arg,
		        strcmp(arg, "released") == 0 ? " (use 'release' to give a lease up)" : "");
	*out = p;
	return 0;
}

int cli_parse_conflict_exit(cli_ctx *ctx, const char *arg, int *out)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 255)
		return cli_usage(ctx, "--conflict-exit-code: '%s' is not an exit status in 1..255",
		                 arg);
	*out = (int)v;
	return 0;
}

int cli_args_option(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	lease_args *a = payload;
	char *end = NULL;
	long v;
	int rc;

	switch (c) {
	case OPT_TTL:
		/* The syntax now; the bounds of the store in use once it is open
		 * (cli_check_ttl), still before any write. */
		if ((rc = cli_parse_seconds(ctx, "--ttl", arg, LONG_MIN, LONG_MAX, &v)) < 0)
			return rc;
		if (v < LEASE_TTL_READ_MIN || v > LEASE_TTL_READ_MAX) {
			ctx->ttl_rejected = arg;
			v = 0;
		}
		a->ttl = v;
		return 0;
	case OPT_EVERY:
		/* auto: the renewal point (protocol.md §6), as without --every for
		 * run; heartbeat needs it to keep renewing without a fixed pace */
		a->every_auto = strcmp(arg, "auto") == 0;
		a->every = 0;
		return a->every_auto ? 0
		                     : cli_parse_seconds(ctx, "--every", arg, 1, 43200, &a->every);
	case OPT_WAIT:
		a->has_wait = 1;
		if (strcmp(arg, "forever") == 0 || strcmp(arg, "inf") == 0 ||
		    strcmp(arg, "infinity") == 0) {
			a->wait = LEASE_WAIT_FOREVER;
			return 0;
		}
		errno = 0;
		a->wait = strtol(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || errno || a->wait > 86400)
			return cli_usage(ctx,
			                 "--wait: '%s' is neither a whole number of seconds in "
			                 "0..86400 nor 'forever' (wait without a limit)",
			                 arg);
		return 0;
	case OPT_PRINT_TOKEN: a->print_token = 1; return 0;
	case OPT_SLOTS:
		return cli_parse_number(ctx, "--slots", arg, 1, LEASE_SLOTS_MAX, "slots",
		                        &a->slots);
	case OPT_FAIR: a->fair = 1; return 0;
	case OPT_CONFLICT_EXIT_CODE: return cli_parse_conflict_exit(ctx, arg, &a->conflict);
	case OPT_PHASE: return parse_live_phase(ctx, "--phase", arg, &a->phase);
	case OPT_TO: return parse_live_phase(ctx, "--to", arg, &a->to);
	case OPT_LEASE_TOKEN: a->token = arg; return 0;
	case OPT_RELEASE_ON_EXIT: a->release_on_exit = 1; return 0;
	case OPT_STRICT: a->strict = 1; return 0;
	case OPT_FORCE: a->force = 1; return 0;
	case OPT_JSON_FILE:
		if (!*arg)
			return cli_usage(ctx, "--json-file: empty file name");
		a->json_file = arg;
		return 0;
	default: return cli_usage(ctx, "unexpected option");
	}
}

int cli_check_slots_name(cli_ctx *ctx, const char *name, long slots)
{
	char base[LEASE_NAME_MAX + 1], err[512];
	int64_t i, n;

	if (lease_slot_name_parse(name, base, &i, &n, err, sizeof(err)) != 1)
		return slots ? (lease_slot_name(base, name, slots, slots, err, sizeof(err)) < 0
		                        ? cli_usage(ctx, "--slots: %s", err)
		                        : 0)
		             : 0;
	return cli_usage(ctx,
	                 "%s is slot %lld of %s's %lld slots: take a slot with 'reflease %s %s "
	                 "--slots %lld' (the count is checked there)",
	                 name, (long long)i, base, (long long)n, ctx->command, base, (long long)n);
}

int cli_check_ttl(cli_ctx *ctx, lease_store *st, long ttl)
{
	if (ctx->ttl_rejected)
		return cli_usage(ctx, "--ttl: %s s is outside this %s store's bounds %d..%d s",
		                 ctx->ttl_rejected, lease_store_kind(st), lease_store_ttl_min(st),
		                 lease_store_ttl_max(st));
	if (ttl && (ttl < lease_store_ttl_min(st) || ttl > lease_store_ttl_max(st)))
		return cli_usage(ctx, "--ttl: %ld s is outside this %s store's bounds %d..%d s",
		                 ttl, lease_store_kind(st), lease_store_ttl_min(st),
		                 lease_store_ttl_max(st));
	return 0;
}

void cli_result_fixup(lease_result *r, lease_store *st, const char *name, int rc)
{
	if (!r->name[0])
		snprintf(r->name, sizeof(r->name), "%s", name);
	if (!r->ref[0])
		snprintf(r->ref, sizeof(r->ref), "refs/%s/%s", lease_store_namespace(st), name);
	/* the library's results carry their message; one made here may not */
	if (rc < 0 && r->status == LEASE_STATUS_ERROR && !r->message[0])
		snprintf(r->message, sizeof(r->message), "%s", lease_error_id(rc));
	cli_mark_if_full(r->message, sizeof(r->message));
	if (rc < 0 && r->status == LEASE_STATUS_ERROR)
		r->code = rc;
}

int cli_exit_for_signal(int sig)
{
	switch (sig) {
	case SIGHUP: return EXIT_SIGHUP;
	case SIGINT: return EXIT_SIGINT;
	case SIGTERM: return EXIT_SIGTERM;
	default: return 128 + sig;
	}
}

/* ---- signals of the long-running forms (acquire --wait, heartbeat --every) ---- */

volatile sig_atomic_t cli_stop_signal;

/* A stop signal only sets cli_stop_signal: a wait (acquire/run --wait) sees
 * it through its wait_cb (cli_wait_cb) — each wait of the library's one
 * wait loop is cut short by the signal (no SA_RESTART) — and ends with
 * nothing held (a fair waiter's ticket removed first); the command then
 * prints the interrupted object (protocol.md §5 "Waiting", issue 38). */
static void on_lease_stop_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	/* our own write to a reader that went away (EPIPE follows): losing the
	 * output is no reason to stop renewing or to skip the release */
	if (sig == SIGPIPE && si && si->si_code == SI_USER && si->si_pid == getpid())
		return;
	cli_stop_signal = sig;
}

void cli_install_stop_handlers(void)
{
	struct sigaction sa;
	sigset_t term;
	int s;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_lease_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: a sleep returns early */
	run_terminating_signals(&term);
	for (s = 1; s < NSIG; s++) {
		struct sigaction old;
		/* an ignored signal stays ignored (nohup, a background job's SIGINT) */
		if (sigismember(&term, s) != 1 || sigaction(s, NULL, &old) < 0 ||
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(s, &sa, NULL);
	}
}

void cli_default_stop_handlers(void)
{
	sigset_t term;
	int s;

	run_terminating_signals(&term);
	for (s = 1; s < NSIG; s++) {
		struct sigaction old;
		if (sigismember(&term, s) == 1 && sigaction(s, NULL, &old) == 0 &&
		    (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_lease_stop_signal)
			signal(s, SIG_DFL);
	}
}

json_t *cli_interrupted_json(const lease_result *state)
{
	lease_result r = *state;
	json_t *o;

	r.status = LEASE_STATUS_ERROR;
	r.code = LEASE_EHELD;
	r.holds_token = 0;
	snprintf(r.message, sizeof(r.message), "interrupted while waiting for the lease");
	if ((o = cli_result_json(&r)))
		json_object_set_new(
		        o, "error",
		        json_pack("{s:s, s:s}", "code", "interrupted", "message", r.message));
	return o;
}

int cli_wait_cb(double sleep_seconds, void *payload)
{
	(void)sleep_seconds;
	(void)payload;
	return cli_stop_signal != 0;
}

void cli_wait_progress_cb(const lease_wait_progress *p, void *payload)
{
	const cli_ctx *ctx = payload;
	char until[LEASE_TIME_STRSZ + 1], place[64] = "";

	if (!ctx || ctx->verbosity < LEASE_LOG_WARN)
		return; /* -q */
	if (p->queue_position > 0)
		snprintf(place, sizeof(place), " (queue position %lld)",
		         (long long)p->queue_position);
	if (p->owner[0] && p->until > 0) {
		lease_time_format(until, p->until);
		fprintf(stderr, "reflease %s: waiting for %s: held by %s@%s until %s%s\n",
		        ctx->command, p->name, p->owner, p->host, until, place);
	} else {
		fprintf(stderr, "reflease %s: waiting for %s%s\n", ctx->command, p->name, place);
	}
}

/* ---- common command flow ---- */

/* Parse options, take NAME, resolve the token. Returns 0 or a negative
 * helper result (-status or CLI_HELP_SHOWN). */
static int cli_lease_parse(cli_ctx *ctx, int argc, char **argv, const struct option *longopts,
                           lease_args *a, const char **name, const char **names, size_t *nnames)
{
	int i, rc;

	memset(a, 0, sizeof(*a));
	if ((i = cli_parse(ctx, argc, argv, LEASE_SHORTOPTS, longopts, cli_args_option, a)) < 0)
		return i;
	/* several NAMEs: a set (protocol.md "Sets"), for the commands that take one */
	if (names && argc - i > 1) {
		if ((rc = set_take_names(ctx, argc, argv, i, names, nnames)) < 0)
			return rc;
		*name = names[0];
	} else if ((rc = cli_take_name(ctx, argc, argv, i, name)) < 0) {
		return rc;
	}
	if (!a->token)
		a->token = getenv("REFLEASE_LEASE_TOKEN");
	return 0;
}

/* heartbeat, transition, reacquire need a well-formed token. */
static int require_token(cli_ctx *ctx, const lease_args *a)
{
	if (!a->token)
		return cli_usage(ctx, "--lease-token T (or REFLEASE_LEASE_TOKEN) is required");
	if (lease_token_validate(a->token, NULL, 0) < 0)
		return cli_usage(ctx, "--lease-token: not a lease token (32 lowercase hex digits)");
	return 0;
}

/* Print the result of one operation and return the exit status. */
static int finish(cli_ctx *ctx, lease_store *st, lease_result *r, const char *name, int rc)
{
	cli_result_fixup(r, st, name, rc);
	if (r->status == LEASE_STATUS_ERROR) {
		if (ctx->json)
			cli_emit_json(stdout, cli_result_json(r));
		fprintf(stderr, "reflease %s: %s: %s\n", ctx->command, name, r->message);
		return cli_exit_for(rc < 0 ? rc : LEASE_EINTERNAL);
	}
	cli_print_result(ctx, r);
	return cli_exit_for(rc);
}

static void op_init(lease_op_options *o, const cli_ctx *ctx, const lease_args *a)
{
	lease_op_options init = LEASE_OP_OPTIONS_INIT;

	*o = init;
	o->owner = ctx->owner;
	o->host = ctx->host;
	o->ttl_seconds = a->ttl;
	o->lease_token = a->token;
}

/* What one lease command works with, from its options to its result. */
typedef struct lease_cmd {
	lease_args a;
	const char *name;
	lease_store *st;
	lease_op_options o;               /* from the options (op_init) once the store is open */
	lease_result r;                   /* zeroed once the store is open */
	const char *names[LEASE_SET_MAX]; /* a set's NAMEs (set_n > 1) */
	size_t set_n;
	int set_status_not_owner; /* the set's answer was not_owner (release --strict) */
} lease_cmd;

typedef int (*set_op_fn)(lease_set_result *, lease_store *, const char *const *, size_t,
                         const lease_op_options *);

/* One set operation (protocol.md "Sets") and its output. */
static int set_op(cli_ctx *ctx, lease_cmd *c, set_op_fn fn)
{
	lease_set_result *r = calloc(1, sizeof(*r));
	int rc, status;

	if (!r) {
		fprintf(stderr, "reflease %s: out of memory\n", ctx->command);
		return cli_exit_for(LEASE_ENOMEM);
	}
	rc = fn(r, c->st, c->names, c->set_n, &c->o);
	c->set_status_not_owner = r->status == LEASE_STATUS_NOT_OWNER;
	status = set_finish(ctx, r, rc);
	free(r);
	return status;
}

/*
 * acquire --print-token: write the token line; when stdout cannot take it (a
 * full disk, a closed pipe), nobody could ever present the token, so the
 * lease (or set) is released with it at once and the status is 74 (cli.md
 * "Exit status"). Returns EXIT_OK or EXIT_IOERR (or the release's failure).
 */
static int print_token_or_release(cli_ctx *ctx, lease_cmd *c, const char *token)
{
	lease_result rr;
	int rc;

	/* a reader that went away is EPIPE here, not a death by SIGPIPE with the
	 * lease held and its token lost */
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	if (printf("%s\n", token) >= 0 && fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	fprintf(stderr,
	        "reflease acquire: cannot write the token to standard output (%s): releasing "
	        "%s%s\n",
	        strerror(errno ? errno : EIO), c->name,
	        c->set_n > 1 ? " and the rest of its set" : "");
	c->o.lease_token = token;
	if (c->set_n > 1) {
		rc = set_op(ctx, c, lease_release_set);
	} else {
		memset(&rr, 0, sizeof(rr));
		rc = cli_exit_for(lease_release(&rr, c->st, c->name, &c->o));
	}
	return rc == EXIT_OK ? EXIT_IOERR : rc;
}

/* acquire A B …: the whole set or nothing, --wait holding no part of it. */
static int acquire_set(cli_ctx *ctx, lease_cmd *c)
{
	lease_set_result *r = calloc(1, sizeof(*r));
	int rc, status;

	if (!r) {
		fprintf(stderr, "reflease acquire: out of memory\n");
		return cli_exit_for(LEASE_ENOMEM);
	}
	rc = lease_acquire_set(r, c->st, c->names, c->set_n, &c->o);
	if (rc < 0 && cli_stop_signal) {
		/* the object of every interrupted wait: the member read last */
		cli_result_fixup(&r->members[0], c->st, c->names[0], rc);
		if (ctx->json)
			cli_emit_json(stdout, cli_interrupted_json(&r->members[0]));
		fprintf(stderr, "reflease acquire: %s: interrupted while waiting\n", c->name);
		free(r);
		return cli_exit_for_signal(cli_stop_signal);
	}
	if (c->a.print_token) {
		const char *tok = rc == 0 && r->members[0].holds_token
		                          ? r->members[0].payload.lease_token
		                          : NULL;
		if (tok) {
			char tbuf[sizeof(r->members[0].payload.lease_token)];
			snprintf(tbuf, sizeof(tbuf), "%s", tok);
			cli_github_output("status", lease_status_name(r->status));
			cli_github_output("lease-token", tbuf);
			free(r);
			return print_token_or_release(ctx, c, tbuf);
		}
		fprintf(stderr, "reflease acquire: %s\n",
		        r->message[0] ? r->message : lease_status_name(r->status));
		free(r);
		return cli_exit_for(rc < 0 ? rc : LEASE_EINTERNAL);
	}
	status = set_finish(ctx, r, rc);
	free(r);
	return status;
}

/* Parse options and NAME (cli_lease_parse); with @p need_token the token must be
 * well-formed. Returns 0 or a negative helper result. */
static int cli_cmd_parse(cli_ctx *ctx, int argc, char **argv, const struct option *longopts,
                         int need_token, lease_cmd *c)
{
	int rc;

	/* the commands that take a set (cli.md "Sets") */
	int set_ok =
	        strcmp(ctx->command, "acquire") == 0 || strcmp(ctx->command, "heartbeat") == 0 ||
	        strcmp(ctx->command, "transition") == 0 || strcmp(ctx->command, "release") == 0;

	c->set_n = 0;
	if ((rc = cli_lease_parse(ctx, argc, argv, longopts, &c->a, &c->name,
	                          set_ok ? c->names : NULL, &c->set_n)) < 0 ||
	    (need_token && (rc = require_token(ctx, &c->a)) < 0))
		return rc;
	return 0;
}

/* Open the store (with @p check_ttl also checking --ttl against its bounds,
 * still before any write), then set c->o from the options and zero c->r.
 * Returns 0 or -exit status. */
static int cli_cmd_open(cli_ctx *ctx, lease_cmd *c, int check_ttl)
{
	int rc;

	if ((rc = cli_open_store(ctx, &c->st)) < 0 ||
	    (check_ttl && (rc = cli_check_ttl(ctx, c->st, c->a.ttl)) < 0))
		return rc;
	op_init(&c->o, ctx, &c->a);
	memset(&c->r, 0, sizeof(c->r));
	return 0;
}

/* ---- commands ---- */

/* acquire; --conflict-exit-code's value (0: not given) in *@p conflict. */
static int acquire_cmd(cli_ctx *ctx, int argc, char **argv, int *conflict)
{
	lease_cmd c;
	run_ticket_guard tg = {-1};
	int rc;

	if ((rc = cli_cmd_parse(ctx, argc, argv, acquire_longopts, 0, &c)) < 0)
		return cli_status_of(rc);
	*conflict = c.a.conflict;
	if ((rc = cli_check_slots_name(ctx, c.name, c.a.slots)) < 0)
		return cli_status_of(rc);
	if (c.set_n > 1 && c.a.slots)
		return cli_status_of(cli_usage(ctx,
		                               "--slots takes one NAME (%zu given): a set's "
		                               "members are plain leases",
		                               c.set_n));
	if (c.a.print_token && ctx->json)
		return cli_status_of(cli_usage(
		        ctx, "--print-token and --json do not go together: pick one output"));
	if (c.a.fair && c.a.wait <= 0)
		return cli_status_of(cli_usage(ctx, CLI_FAIR_NEEDS_WAIT));
	if (c.a.fair && (c.set_n > 1 || c.a.slots))
		return cli_status_of(cli_usage(ctx, "--fair queues for one lease: not with %s",
		                               c.a.slots ? "--slots" : "a set of NAMEs"));
	/* a SIGKILLed fair waiter's ticket goes at once, not at its TTL (issue
	 * 40 Q1, as run --fair's): started before the store opens, whose
	 * randomness goes through it */
	if (c.a.fair && run_ticket_guard_start(&tg, ctx, c.name) < 0)
		tg.pid = -1;
	if ((rc = cli_cmd_open(ctx, &c, 1)) < 0) {
		run_ticket_guard_stop(&tg, ctx);
		return cli_status_of(rc);
	}
	c.o.lease_token = NULL;
	c.o.phase = c.a.phase;
	c.o.wait_seconds = c.a.wait;
	c.o.fair = c.a.fair;
	if (c.a.wait > 0) {
		cli_install_stop_handlers();
		c.o.wait_cb = cli_wait_cb;
		c.o.progress_cb = cli_wait_progress_cb;
		c.o.progress_payload = ctx;
	}
	if (c.set_n > 1)
		return acquire_set(ctx, &c);
	rc = c.a.slots ? lease_slots_acquire(&c.r, c.st, c.name, c.a.slots, &c.o)
	               : lease_acquire(&c.r, c.st, c.name, &c.o);
	run_ticket_guard_stop(&tg, ctx);
	if (c.a.slots && rc == 0)
		c.name = c.r.name; /* the slot taken */
	if (rc < 0 && cli_stop_signal) {
		cli_result_fixup(&c.r, c.st, c.name, rc);
		if (ctx->json)
			cli_emit_json(stdout, cli_interrupted_json(&c.r));
		fprintf(stderr, "reflease acquire: %s: interrupted while waiting\n", c.name);
		return cli_exit_for_signal(cli_stop_signal);
	}
	if (rc == LEASE_EHELD && c.a.wait > 0 && !c.r.message[0])
		snprintf(c.r.message, sizeof(c.r.message), "--wait %ld s ran out", c.a.wait);
	if (c.a.print_token && rc == 0 && c.r.holds_token && c.r.has_payload) {
		/* only the token on stdout; outputs for Actions as usual */
		cli_github_output("status", lease_status_name(c.r.status));
		cli_github_output("lease-token", c.r.payload.lease_token);
		if (c.a.slots)
			cli_github_output("lease-name", c.r.name);
		return print_token_or_release(ctx, &c, c.r.payload.lease_token);
	}
	if (c.a.print_token) { /* held or failed: nothing on stdout, the reason on stderr */
		cli_result_fixup(&c.r, c.st, c.name, rc);
		fprintf(stderr, "reflease acquire: %s: %s\n", c.name,
		        c.r.message[0] ? c.r.message : lease_status_name(c.r.status));
		return cli_exit_for(rc < 0 ? rc : LEASE_EINTERNAL);
	}
	return finish(ctx, c.st, &c.r, c.name, rc);
}

/* acquire: --conflict-exit-code N replaces 3 (held, also after --wait ran
 * out), as run's does (cli.md "Exit status"). */
static int cmd_acquire(cli_ctx *ctx, int argc, char **argv)
{
	int conflict = 0, status = acquire_cmd(ctx, argc, argv, &conflict);

	return status == EXIT_HELD && conflict ? conflict : status;
}

void cli_keep_changed_note(const char *cmd, const char *name, const lease_keep_report *rep)
{
	fprintf(stderr,
	        "reflease %s: %s: the stored lease now expires in %lld s (ttl %lld s, written "
	        "with this token by another process); next heartbeat in %.0f s\n",
	        cmd, name, (long long)(rep->expires_at - rep->now), (long long)rep->ttl_seconds,
	        rep->next_in);
}

/* heartbeat --every: one line per write (cli.md), then the end state; a set
 * (protocol.md "Sets"): one block per set write, as `heartbeat A B` prints. */
typedef struct keep_ctx {
	cli_ctx *ctx;
	lease_store *st;
	const char *name;         /* the lease, or the set's names ("A B") */
	const char *const *names; /* a set's names (n > 1) */
	size_t n;
	lease_set_result *set; /* n > 1: the answer of a loss no set write gave */
	char token[LEASE_TOKEN_HEXSZ + 1];
} keep_ctx;

/* The lost (or failed) set's answer and the member that stopped it: the set
 * write's own answer, else each member as `status` reads it. */
static const lease_set_result *keep_set_lost(keep_ctx *k, const lease_keep_report *rep,
                                             const lease_result *r, const char **member)
{
	const lease_set_result *s = rep->set;

	if (!s) {
		set_lost_answer(k->set, k->st, k->names, k->n, r, rep->code);
		s = k->set;
	}
	*member = s->blocker >= 0 && (size_t)s->blocker < s->count ? s->members[s->blocker].name
	                                                           : r->name;
	return s;
}

static void keep_report(const lease_keep_report *rep, void *payload)
{
	keep_ctx *k = payload;
	const lease_result *r = rep->result;

	switch (rep->event) {
	case LEASE_KEEP_WRITE: {
		lease_result copy = *r;
		if (r->has_payload && r->payload.lease_token[0])
			memcpy(k->token, r->payload.lease_token, sizeof(k->token));
		if (r->status == LEASE_STATUS_NOT_DUE) {
			/* not a write (cli.md: one line per write): no noise */
			if (k->ctx->verbosity >= LEASE_LOG_INFO)
				fprintf(stderr, "reflease heartbeat: %s: not due; next in %.0f s\n",
				        k->name, rep->next_in);
			break;
		}
		if (rep->set) {
			/* the set write: each member (the token only in JSON) */
			if (k->ctx->json)
				cli_emit_json(stdout, set_result_json(rep->set));
			else
				set_print_human(rep->set, 0);
			fflush(stdout);
			break;
		}
		/* a log block, not a hand-over: the token stays out of it (the
		 * JSON object keeps its documented lease.lease_token) */
		if (!k->ctx->json)
			copy.holds_token = 0;
		cli_print_result(k->ctx, &copy);
		fflush(stdout);
		break;
	}
	case LEASE_KEEP_RETRY:
		if (k->ctx->verbosity >= LEASE_LOG_WARN)
			fprintf(stderr,
			        "reflease heartbeat: %s: attempt %d failed (%s: %s); retrying in "
			        "%.0f s, lost in %.0f s\n",
			        k->name, rep->attempt, lease_error_id(rep->code), r->message,
			        rep->next_in, rep->lost_at - (double)rep->now);
		break;
	case LEASE_KEEP_CHANGED:
		/* a set: the member whose stored expiry moved */
		if (k->ctx->verbosity >= LEASE_LOG_INFO)
			cli_keep_changed_note("heartbeat", k->n > 1 ? r->name : k->name, rep);
		break;
	case LEASE_KEEP_LOST:
	case LEASE_KEEP_FAILED: {
		lease_result copy = *r;
		const char *what = rep->event == LEASE_KEEP_LOST ? "lease lost" : "giving up";
		if (copy.status == LEASE_STATUS_ERROR) {
			copy.status = LEASE_STATUS_ERROR;
			copy.code = rep->code;
		}
		if (k->n > 1) {
			/* the set's answer, and the member that lost it named once
			 * (a set write's message starts with it already) */
			const char *m = NULL;
			const lease_set_result *s = keep_set_lost(k, rep, &copy, &m);
			size_t ml = strlen(m);
			int named = strncmp(copy.message, m, ml) == 0 && copy.message[ml] == ':';
			if (k->ctx->json)
				cli_emit_json(stdout, set_result_json(s));
			else if (copy.status != LEASE_STATUS_ERROR)
				set_print_human(s, 0);
			fprintf(stderr, "reflease heartbeat: %s: %s: %s%s%s\n", k->name, what,
			        named ? "" : m, named ? "" : (copy.message[0] ? ": " : ""),
			        copy.message);
			break;
		}
		if (k->ctx->json)
			cli_emit_json(stdout, cli_result_json(&copy));
		else if (copy.status != LEASE_STATUS_ERROR)
			cli_print_result_human(&copy);
		fprintf(stderr, "reflease heartbeat: %s: %s%s%s\n", k->name, what,
		        copy.message[0] ? ": " : "", copy.message);
		break;
	}
	}
}

/* The TTL --every is checked against when no --ttl is given (§6): the
 * stored ttl_seconds, the shortest of a set's members; 0 when none is read. */
static int64_t keep_stored_ttl(lease_store *st, const char *const *names, size_t n)
{
	int64_t ttl = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		lease_result r;
		memset(&r, 0, sizeof(r));
		if (lease_status(&r, st, names[i]) == 0 && r.has_payload &&
		    r.payload.phase != LEASE_PHASE_RELEASED) {
			int64_t t = lease_payload_kept_ttl(st, &r.payload, NULL);
			if (t && (!ttl || t < ttl))
				ttl = t;
		}
	}
	return ttl;
}

/* heartbeat NAME --every S, or A B … --every S (a set: the library's set
 * keeper, one atomic set heartbeat each time): the same options, policy,
 * signals and exit statuses. */
static int heartbeat_every(cli_ctx *ctx, lease_cmd *c)
{
	lease_keep_options k = LEASE_KEEP_OPTIONS_INIT;
	const lease_args *a = &c->a;
	const char *const *names = c->set_n > 1 ? c->names : &c->name;
	size_t n = c->set_n > 1 ? c->set_n : 1;
	lease_result last, r;
	keep_ctx kc;
	char label[LEASE_SET_MAX * (LEASE_NAME_MAX + 1) + 1];
	int64_t ttl = a->ttl, every;
	size_t i;
	int rc, status;

	/* No --ttl: the stored ttl_seconds decides (§6); read it so that
	 * --every is checked against ttl/2 before any write. A store that
	 * cannot write a set is not read: the keeper's first set heartbeat
	 * refuses it before any I/O (exit 78), as `heartbeat A B` does. */
	if (!ttl && (n == 1 || lease_store_can_write_set(c->st)))
		ttl = keep_stored_ttl(c->st, names, n);
	if (a->every && ttl && lease_heartbeat_every(&every, ttl, a->every) < 0)
		return cli_status_of(cli_usage(ctx, "--every: %ld s is above ttl/2 (ttl %lld s)",
		                               a->every, (long long)ttl));
	memset(&kc, 0, sizeof(kc));
	label[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t len = strlen(label);
		snprintf(label + len, sizeof(label) - len, "%s%s", i ? " " : "", names[i]);
	}
	kc.ctx = ctx;
	kc.st = c->st;
	kc.name = label;
	kc.names = names;
	kc.n = n;
	if (n > 1 && !(kc.set = calloc(1, sizeof(*kc.set)))) {
		fprintf(stderr, "reflease heartbeat: out of memory\n");
		return cli_exit_for(LEASE_ENOMEM);
	}
	memcpy(kc.token, a->token, sizeof(kc.token));
	k.owner = ctx->owner;
	k.host = ctx->host;
	k.lease_token = a->token;
	k.ttl_seconds = a->ttl;
	k.every_seconds = a->every;
	k.known_ttl_seconds = ttl;
	k.check_seconds = lease_keep_check_interval(c->st);
	k.stop = &cli_stop_signal;
	k.report = keep_report;
	k.report_payload = &kc;
	cli_install_stop_handlers();
	rc = n > 1 ? lease_keep_set(&last, c->st, names, n, &k)
	           : lease_keep(&last, c->st, c->name, &k);
	if (rc < 0) {
		status = cli_exit_for(rc);
		goto done;
	}
	/* Stopped by a signal: a handoff stays possible unless --release-on-exit. */
	status = cli_exit_for_signal(cli_stop_signal ? cli_stop_signal : SIGTERM);
	if (a->release_on_exit) {
		op_init(&c->o, ctx, a);
		c->o.lease_token = kc.token;
		memset(&r, 0, sizeof(r));
		/* a release that failed is the status: the lease may still be held */
		if (n > 1) {
			rc = set_op(ctx, c, lease_release_set);
		} else {
			rc = lease_release(&r, c->st, c->name, &c->o);
			rc = finish(ctx, c->st, &r, c->name, rc);
		}
		if (rc != EXIT_OK)
			status = rc;
	}
done:
	free(kc.set);
	return status;
}

static int cmd_heartbeat(cli_ctx *ctx, int argc, char **argv)
{
	lease_cmd c;
	int rc;

	if ((rc = cli_cmd_parse(ctx, argc, argv, heartbeat_longopts, 1, &c)) < 0)
		return cli_status_of(rc);
	if (c.a.release_on_exit && !c.a.every && !c.a.every_auto)
		return cli_status_of(cli_usage(ctx, "--release-on-exit needs --every S (or auto)"));
	if (c.a.every && c.a.ttl && c.a.every > lease_heartbeat_every_max(c.a.ttl))
		return cli_status_of(cli_usage(ctx, "--every: %ld s is above ttl/2 (%lld s)",
		                               c.a.every,
		                               (long long)lease_heartbeat_every_max(c.a.ttl)));
	if ((rc = cli_cmd_open(ctx, &c, 1)) < 0)
		return cli_status_of(rc);
	if (c.a.every || c.a.every_auto)
		return heartbeat_every(ctx, &c);
	if (c.set_n > 1)
		return set_op(ctx, &c, lease_heartbeat_set);
	rc = lease_heartbeat(&c.r, c.st, c.name, &c.o);
	return finish(ctx, c.st, &c.r, c.name, rc);
}

static int cmd_transition(cli_ctx *ctx, int argc, char **argv)
{
	lease_cmd c;
	int rc;

	if ((rc = cli_cmd_parse(ctx, argc, argv, transition_longopts, 1, &c)) < 0)
		return cli_status_of(rc);
	if (c.a.to == LEASE_PHASE_NONE)
		return cli_status_of(
		        cli_usage(ctx, "--to PHASE is required (claimed, working, review)"));
	if ((rc = cli_cmd_open(ctx, &c, 0)) < 0)
		return cli_status_of(rc);
	c.o.to = c.a.to;
	if (c.set_n > 1)
		return set_op(ctx, &c, lease_transition_set);
	rc = lease_transition(&c.r, c.st, c.name, &c.o);
	if (rc == LEASE_EINVALID)
		return cli_status_of(cli_usage(ctx, "%s", c.r.message));
	return finish(ctx, c.st, &c.r, c.name, rc);
}

static int cmd_reacquire(cli_ctx *ctx, int argc, char **argv)
{
	lease_cmd c;
	int rc;

	if ((rc = cli_cmd_parse(ctx, argc, argv, reacquire_longopts, 1, &c)) < 0 ||
	    (rc = cli_cmd_open(ctx, &c, 1)) < 0)
		return cli_status_of(rc);
	rc = lease_reacquire(&c.r, c.st, c.name, &c.o);
	return finish(ctx, c.st, &c.r, c.name, rc);
}

static int cmd_release(cli_ctx *ctx, int argc, char **argv)
{
	lease_cmd c;
	int rc, status;

	if ((rc = cli_cmd_parse(ctx, argc, argv, release_longopts, 0, &c)) < 0 ||
	    (rc = cli_cmd_open(ctx, &c, 0)) < 0)
		return cli_status_of(rc);
	if (c.set_n > 1) {
		status = set_op(ctx, &c, lease_release_set);
		return status == EXIT_OK && c.a.strict && c.set_status_not_owner ? EXIT_NOTHOLDER
		                                                                 : status;
	}
	if (lease_token_validate(c.a.token, NULL, 0) == 0) {
		rc = lease_release(&c.r, c.st, c.name, &c.o);
	} else {
		/* No token, an empty one (a cleanup step of a job that never held,
		 * F05) or one that can never be current: nothing is written; the
		 * answer depends only on whether the lease is free. */
		lease_result *r = &c.r;

		rc = lease_status(r, c.st, c.name);
		if (rc == 0 || r->present) {
			int free_ = !r->present ||
			            (r->has_payload && r->payload.phase == LEASE_PHASE_RELEASED);
			r->status = free_ ? LEASE_STATUS_ALREADY_RELEASED : LEASE_STATUS_NOT_OWNER;
			r->holds_token = 0;
			r->token_rotated = 0;
			r->code = rc = 0;
			if (!free_)
				snprintf(r->message, sizeof(r->message), "%s; nothing written",
				         c.a.token && *c.a.token
				                 ? "the token given is not the current one"
				                 : "no lease token given");
		}
	}
	status = finish(ctx, c.st, &c.r, c.name, rc);
	if (status == EXIT_OK && c.a.strict && c.r.status == LEASE_STATUS_NOT_OWNER)
		return EXIT_NOTHOLDER;
	return status;
}

static int cmd_break(cli_ctx *ctx, int argc, char **argv)
{
	lease_cmd c;
	int rc;

	if ((rc = cli_cmd_parse(ctx, argc, argv, break_longopts, 0, &c)) < 0 ||
	    (rc = cli_cmd_open(ctx, &c, 0)) < 0)
		return cli_status_of(rc);
	c.o.lease_token = NULL;
	c.o.force = c.a.force;
	rc = lease_break(&c.r, c.st, c.name, &c.o);
	if (rc == LEASE_EHELD && !c.r.message[0])
		snprintf(c.r.message, sizeof(c.r.message),
		         "the lease is live; use --force to break it anyway");
	return finish(ctx, c.st, &c.r, c.name, rc);
}

const cli_command cli_lease_commands[] = {
        {"acquire", cmd_acquire,
         "acquire NAME [NAME...] [--ttl S] [--phase P] [--wait S [--fair]] [--slots N] "
         "[--print-token] [--conflict-exit-code N]",
         "Take a free or expired lease, or wait up to S seconds for it; several NAMEs: all in "
         "one atomic write, or none.",
         "  --ttl S          lease time in whole seconds (5-86400 local, 60-86400 github/remote;\n"
         "                   default 300)\n"
         "  --phase P        initial phase: claimed (default), working or review\n"
         "  --wait S         wait up to S seconds while the lease is held (exit 3 when it runs "
         "out);\n"
         "                   'forever' waits without a limit\n"
         "  --fair           with --wait: queue first come, first served (a ticket in\n"
         "                   refs/<ns>-queue/NAME/, kept alive while waiting, removed after)\n"
         "  --print-token    print only the token (nothing on stdout when held, exit 3);\n"
         "                   for tok=$(reflease acquire NAME --print-token)\n"
         "  --slots N        take one of NAME's N slots (1-64), the lease NAME@<i>ofN\n"
         "                   (at most N holders; another N than the stored one: exit 78)\n"
         "  --conflict-exit-code N\n"
         "                   exit N (1-255) instead of 3 when the lease is held (flock's\n"
         "                   -E: 1 on conflict)\n",
         acquire_longopts},
        {"heartbeat", cmd_heartbeat,
         "heartbeat NAME [NAME...] --lease-token T [--ttl S] [--every S|auto [--release-on-exit]]",
         "Extend a held lease once, or keep extending it every S seconds until stopped or lost; "
         "several NAMEs: the whole set in one atomic write each time.",
         "  --lease-token T  the token from acquire (or REFLEASE_LEASE_TOKEN)\n"
         "  --ttl S          new lease time (default: the stored ttl_seconds)\n"
         "  --every S        keep heartbeating every S seconds (at most ttl/2); auto: at the\n"
         "                   renewal point (the store's pace: ttl/3, 375 s on github:);\n"
         "                   stops on any terminating signal (exit 128 + signal: 130/143/129\n"
         "                   for INT/TERM/HUP), exit 4 when lost; a closed output does not stop "
         "it\n"
         "  --release-on-exit  release the lease (a set: the whole set) when stopped by a\n"
         "                   signal\n",
         heartbeat_longopts},
        {"transition", cmd_transition, "transition NAME [NAME...] --lease-token T --to PHASE",
         "Move a held lease to another phase (claimed, working, review).",
         "  --lease-token T  the token held (or REFLEASE_LEASE_TOKEN)\n"
         "  --to PHASE       claimed, working or review\n",
         transition_longopts},
        {"reacquire", cmd_reacquire, "reacquire NAME --lease-token T [--ttl S]",
         "Take back a lease this token still holds, even if it expired.",
         "  --lease-token T  the token held (or REFLEASE_LEASE_TOKEN)\n"
         "  --ttl S          lease time (default: the stored ttl_seconds)\n",
         reacquire_longopts},
        {"release", cmd_release, "release NAME [NAME...] --lease-token T [--strict]",
         "Give a lease up (safe to run in cleanup: never frees someone else's lease).",
         "  --lease-token T  the token held (or REFLEASE_LEASE_TOKEN); empty or stale: not_owner\n"
         "  --strict         exit 4 when the token is not the current one\n",
         release_longopts},
        {"break", cmd_break, "break NAME [--force]",
         "Administrators: release a lease whatever its token (--force over a live lease).",
         "  --force          also break a live lease, or an unreadable one that shows nothing\n"
         "                   saying it is free (a missing object, a garbled ref file)\n",
         break_longopts},
        {"run", cmd_run,
         "run NAME [NAME...] [--ttl S] [--every S] [--wait S [--fair]] [--slots N] [--json-file F] "
         "[--conflict-exit-code N] -- CMD [ARG...]",
         "Acquire, run CMD while heartbeating, release once CMD's whole process tree is gone; "
         "stop the tree if the lease is lost.",
         "  --ttl S          lease time (default 300; at least 6)\n"
         "  --every S        heartbeat interval (at most ttl/2; default or auto: the renewal\n"
         "                   point, ttl/3 or 375 s on github:)\n"
         "  --wait S         wait up to S seconds for the lease; 'forever' waits without a "
         "limit\n"
         "  --fair           with --wait: queue first come, first served (as acquire --fair)\n"
         "  --slots N        hold one of NAME's N slots (1-64; REFLEASE_LEASE_NAME is the\n"
         "                   slot's name NAME@<i>ofN)\n"
         "  --json-file F    write the JSON result object to F (else, with --json, the last\n"
         "                   line of stderr); checked before the lease is acquired\n"
         "  --conflict-exit-code N\n"
         "                   exit N (1-255) instead of 3 (held) and of a lost lease (4, or\n"
         "                   77/65/69 for a permanent error), so CMD's own statuses are not\n"
         "                   taken for reflease's\n"
         "CMD runs in its own process group with REFLEASE_LEASE_TOKEN, REFLEASE_TRANSITIONS and\n"
         "REFLEASE_LEASE_NAME set; reflease exits with CMD's status (the release's when the\n"
         "final release fails: the lease stays held), 4 when the lease was lost\n"
         "(CMD's whole tree is stopped first), 128 + signal when interrupted by any terminating\n"
         "signal (the tree gets the signal, then SIGKILL; the lease is released). The tree is\n"
         "also stopped when reflease is SIGKILLed, and the lease released once it is gone\n"
         "(docs/protocol.md §6).\n",
         run_longopts},
        {NULL, NULL, NULL, NULL, NULL, NULL}};
