/*
 * Shared pieces of the lease commands (cmd_lease.c) and `run` (cmd_run.c):
 * option values, input validation done before any write (F08), result
 * reporting and signal-to-exit mapping.
 */
#ifndef REFLEASE_CMD_LEASE_H
#define REFLEASE_CMD_LEASE_H

#include "cli.h"

#include <signal.h>

/* Long-option codes of the lease commands. */
enum {
	OPT_TTL = OPT_COMMAND_BASE,
	OPT_PHASE,
	OPT_WAIT,
	OPT_LEASE_TOKEN,
	OPT_EVERY,
	OPT_RELEASE_ON_EXIT,
	OPT_TO,
	OPT_STRICT,
	OPT_FORCE,
	OPT_JSON_FILE,
	OPT_PRINT_TOKEN,
	OPT_SLOTS,
	OPT_FAIR,
	OPT_CONFLICT_EXIT_CODE
};

/* --wait forever: a wait no run outlives (about 100 years, s). */
#define LEASE_WAIT_FOREVER 3153600000L

/* The options of one lease command, as parsed (syntax checked). */
typedef struct lease_args {
	long ttl;       /* --ttl, 0 = not given */
	long every;     /* --every S, 0 = not given or auto */
	int every_auto; /* --every auto: keep at the renewal point (protocol.md §6) */
	long wait;      /* --wait, 0 = not given */
	int has_wait;
	lease_phase phase; /* --phase */
	lease_phase to;    /* --to */
	const char *token; /* --lease-token / REFLEASE_LEASE_TOKEN; NULL = neither */
	int release_on_exit;
	int strict;
	int force;
	const char *json_file;
	int print_token; /* acquire --print-token */
	long slots;      /* acquire/run --slots N, 0 = not given (protocol.md "Slots") */
	int fair;        /* --fair: wait in the lease's queue (protocol.md §5 "Fair waiting") */
	int conflict;    /* acquire --conflict-exit-code N: N replaces 3 (held); 0 = not given */
} lease_args;

/* cli_parse handler for the options above. */
int cli_args_option(cli_ctx *ctx, int c, const char *arg, void *payload);

/* Check --ttl against the opened store's bounds (protocol.md §4): 64 when out
 * of them (also a --ttl the parser set aside in ctx->ttl_rejected), never
 * replaced. Returns 0 or -EXIT_USAGE. */
int cli_check_ttl(cli_ctx *ctx, lease_store *st, long ttl);

/* Fill name/ref/status/message of @p r when the operation left them empty. */
void cli_result_fixup(lease_result *r, lease_store *st, const char *name, int rc);

/* acquire/run: refuse a slot's own name without --slots (its count is
 * checked only by --slots) and --slots with a slot's name. Returns 0 or
 * -EXIT_USAGE. */
int cli_check_slots_name(cli_ctx *ctx, const char *name, long slots);

/* Exit status for a signal number: 129, 130, 143 (cli.md), else 128 + sig. */
int cli_exit_for_signal(int sig);

/* The stop signal (SIGINT/SIGTERM/SIGHUP) received, 0 = none. */
extern volatile sig_atomic_t cli_stop_signal;
/* Install handlers for every catchable terminating signal
 * (run_terminating_signals(): HUP INT QUIT ABRT USR1 USR2 PIPE ALRM TERM ...)
 * that set cli_stop_signal (no SA_RESTART), and end the process at once
 * during an armed wait sleep. A signal found ignored stays ignored. A SIGPIPE
 * from the process's own write to a reader that went away is not a stop (the
 * write fails with EPIPE): losing the output never ends a keeper (issue 23). */
void cli_install_stop_handlers(void);
/* Restore the default action where cli_install_stop_handlers() installed
 * its handler (a child before exec). */
void cli_default_stop_handlers(void);
/* lease_op_options.wait_cb of every wait (acquire/run --wait, plain, set,
 * slot and fair alike): non-zero once a stop signal came. The library's wait
 * loop then ends the wait with nothing held (a fair ticket removed) and the
 * command prints cli_interrupted_json() and exits 128+signal. */
int cli_wait_cb(double sleep_seconds, void *payload);

/* lease_op_options.progress_cb of acquire/run --wait (@p payload: the
 * cli_ctx): one line on stderr when the wait begins and each minute after
 * ("reflease acquire: waiting for db: held by alice@ci-1 until
 * 2026-12-05T10:00:00Z"), none under -q. */
void cli_wait_progress_cb(const lease_wait_progress *p, void *payload);

/* The object of a wait stopped by a signal: the ref state of @p state (name,
 * ref, oid, holder) with status "error" and error code "interrupted". New
 * reference (NULL without memory). */
json_t *cli_interrupted_json(const lease_result *state);

/* `run NAME ... -- CMD` (cmd_run.c). */
int cmd_run(cli_ctx *ctx, int argc, char **argv);
/* run's getopt_long table (cmd_run.c), its command table entry's. */
extern const struct option run_longopts[];

/* The -v line of a keeper (`run`, `heartbeat --every`; command name @p cmd)
 * when the heartbeat service adopted an earlier stored expiry
 * (LEASE_KEEP_CHANGED, protocol.md §6), on stderr. */
void cli_keep_changed_note(const char *cmd, const char *name, const lease_keep_report *rep);

#endif
