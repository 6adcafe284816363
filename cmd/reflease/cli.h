/*
 * The CLI's shared context: global options (cli.md "Shape"), store opening,
 * the exit-status table, and output helpers (output.c). Only cmd/ prints.
 */
#ifndef REFLEASE_CLI_H
#define REFLEASE_CLI_H

/* The refusal of --fair without a wait (N4): right whether --wait was left
 * out or given as 0 (protocol.md §5 "Fair waiting"). */
#define CLI_FAIR_NEEDS_WAIT                                                                        \
	"--fair waits in the lease's queue: it needs --wait S with S > 0 (or --wait forever); "    \
	"without --wait, or with --wait 0, nothing waits (protocol.md §5)"

#include "reflease.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

/* Exit statuses, cli.md "Exit status" — the only place they are defined. */
enum cli_exit {
	EXIT_OK = 0,
	EXIT_FOUND = 1,        /* reconcile/migrate: something at or above --fail-on */
	EXIT_HELD = 3,         /* held by another or by this identity */
	EXIT_NOTHOLDER = 4,    /* not the holder / expired / lost */
	EXIT_USAGE = 64,       /* bad option, name, namespace, TTL, phase */
	EXIT_DATAERR = 65,     /* malformed payload or unsupported schema version */
	EXIT_UNAVAILABLE = 69, /* store unreachable after retries */
	EXIT_SOFTWARE = 70,    /* internal error */
	EXIT_IOERR = 74,       /* stdout could not be written (cli_close_stdout) */
	EXIT_TEMPFAIL = 75,    /* CAS conflict after retries, unverified, rate limited */
	EXIT_NOPERM = 77,      /* permission denied */
	EXIT_CONFIG = 78,      /* configuration */
	EXIT_SIGHUP = 129,
	EXIT_SIGINT = 130,
	EXIT_SIGTERM = 143
};

/*
 * The process's last word on stdout (cli.md "Exit status", 74; jq and gnulib's
 * close_stdout check the same): flush and close stdout; when any write to it
 * failed (a full disk, a closed pipe with SIGPIPE ignored, a closed
 * descriptor written to), say so on stderr and return EXIT_IOERR in place of
 * @p status — for a success and every answer below 64 (the caller could not
 * read it). A failure of its own (64..78) and an interruption (128 and above)
 * are kept: the first cause. Returns the status to exit with.
 */
int cli_close_stdout(int status);

/* Map a LEASE_E* code to its exit status (one table, cli.md). */
int cli_exit_for(int code);

/* Global options, after parsing. */
typedef struct cli_ctx {
	const char *prog;
	const char *store_spec; /* --store / REFLEASE_STORE / default */
	const char *ns;         /* --namespace / REFLEASE_NAMESPACE */
	const char *owner;      /* --owner / REFLEASE_OWNER / §5 default */
	const char *host;       /* --host / REFLEASE_HOST / RUNNER_NAME / hostname */
	const char *token_file; /* --token-file (github credential file) */
	int json;               /* --json */
	int json_stderr;        /* run: a JSON error object is the last line of stderr */
	int timeout_s;          /* --timeout / REFLEASE_TIMEOUT */
	int verify_timeout_s;   /* --verify-timeout; -1 = backend default */
	int verbosity;          /* -v / -q / REFLEASE_LOG: LEASE_LOG_* level */
	const char *command;    /* the command being run */
	char owner_buf[256];
	char host_buf[256];
	char store_buf[4096];
	char token_buf[512];      /* credential read from --token-file; never printed */
	const char *ttl_rejected; /* a --ttl outside every store's bounds: reported with the
	                             bounds of the store in use once it is open */
	lease_store *st;
	lease_random random; /* the store's randomness (fill NULL: getrandom); run --fair's
	                        ticket guard sees each draw (run_ticket_guard.c) */
} cli_ctx;

/* Long-option codes of the global options, usable inside each command's
 * option table (so `reflease acquire x --json` works too). */
enum {
	OPT_STORE = 1000,
	OPT_NAMESPACE,
	OPT_OWNER,
	OPT_HOST,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_VERIFY_TIMEOUT,
	OPT_TOKEN_FILE,
	OPT_CA_BUNDLE,
	OPT_HELP,
	OPT_COMMAND_BASE = 1100 /* commands number their own long options from here */
};

#define CLI_GLOBAL_LONGOPTS                                                                        \
	{"store", required_argument, NULL, OPT_STORE},                                             \
	        {"namespace", required_argument, NULL, OPT_NAMESPACE},                             \
	        {"owner", required_argument, NULL, OPT_OWNER},                                     \
	        {"host", required_argument, NULL, OPT_HOST},                                       \
	        {"json", no_argument, NULL, OPT_JSON},                                             \
	        {"timeout", required_argument, NULL, OPT_TIMEOUT},                                 \
	        {"verify-timeout", required_argument, NULL, OPT_VERIFY_TIMEOUT},                   \
	        {"token-file", required_argument, NULL, OPT_TOKEN_FILE},                           \
	        {"ca-bundle", required_argument, NULL, OPT_CA_BUNDLE},                             \
	        {"help", no_argument, NULL, OPT_HELP}, {"verbose", no_argument, NULL, 'v'},        \
	{                                                                                          \
		"quiet", no_argument, NULL, 'q'                                                    \
	}

/* getopt short options every command accepts. */
#define CLI_GLOBAL_SHORTOPTS "+vqh"

/*
 * Handle a global option returned by getopt_long inside a command's loop.
 * Returns 1 when handled, 0 when @p c is not global, or -EXIT_USAGE (after
 * printing the reason) for a bad value. OPT_HELP/'h' return 2 (print help).
 */
int cli_global_option(cli_ctx *ctx, int c, const char *arg);

/*
 * Parse the value of --conflict-exit-code (acquire, run, status --fail-if-held;
 * cli.md "Exit status"): a status in 1..255 into *@p out. Returns 0, or
 * -EXIT_USAGE after printing what is wrong.
 */
int cli_parse_conflict_exit(cli_ctx *ctx, const char *arg, int *out);

/* One command. */
typedef struct cli_command {
	const char *name;
	int (*run)(cli_ctx *ctx, int argc, char **argv); /* argv[0] = command name */
	const char *usage;                               /* "acquire NAME [--ttl S] ..." */
	const char *summary;                             /* one line */
	const char *help;                                /* option lines for --help */
	/* the getopt_long table (ends with CLI_GLOBAL_LONGOPTS and {0}): what
	 * `reflease completion` offers after the command */
	const struct option *longopts;
} cli_command;

/* The command tables of each command group file. */
extern const cli_command cli_store_commands[];
extern const cli_command cli_lease_commands[];
extern const cli_command cli_migrate_commands[];
extern const cli_command cli_reconcile_commands[];
extern const cli_command cli_completion_commands[];
extern const cli_command cli_check_commands[];

/* The options before the command (the global ones and --version). */
extern const struct option cli_main_longopts[];
/* The @p i th command of every table, in --help's order (from 0); NULL past
 * the last. */
const cli_command *cli_command_at(size_t i);

/*
 * Parse a command's options with getopt_long: @p longopts must end with
 * CLI_GLOBAL_LONGOPTS and a {0} terminator. Calls @p handle for the command's
 * own options. Returns optind (first operand), -exit status on error, or
 * CLI_HELP_SHOWN after printing --help.
 */
typedef int (*cli_opt_handler)(cli_ctx *ctx, int c, const char *arg, void *payload);
int cli_parse(cli_ctx *ctx, int argc, char **argv, const char *shortopts,
              const struct option *longopts, cli_opt_handler handle, void *payload);

/* cli_parse's result when --help was printed (the command exits 0). */
#define CLI_HELP_SHOWN (-2000)
/* Turn a negative helper result (-status or CLI_HELP_SHOWN) into an exit status. */
static inline int cli_status_of(int rc)
{
	return rc == CLI_HELP_SHOWN ? EXIT_OK : -rc;
}

/* Print a command's --help to stdout. */
void cli_print_help(const cli_command *cmd);
/* The running command's table entry. */
const cli_command *cli_find_command(const char *name);

/* Open the store named by the global options (once; cached in ctx->st).
 * On failure prints the error and returns -exit status. */
int cli_open_store(cli_ctx *ctx, lease_store **out);

/* Exactly one operand NAME, validated per protocol.md §1 before any I/O.
 * Returns 0 or -EXIT_USAGE after printing the rule broken. */
int cli_take_name(cli_ctx *ctx, int argc, char **argv, int optind_, const char **name);

/* Parse whole seconds in [lo, hi] for option @p what; -EXIT_USAGE on error. */
int cli_parse_seconds(cli_ctx *ctx, const char *what, const char *s, long lo, long hi, long *out);
/* Parse a whole number in [lo, hi] of @p unit ("days", "entries") for option
 * @p what; the usage error names the unit and the bounds (none for
 * LONG_MIN..LONG_MAX: a syntax check whose caller checks the bounds).
 * -EXIT_USAGE on error. */
int cli_parse_number(cli_ctx *ctx, const char *what, const char *s, long lo, long hi,
                     const char *unit, long *out);

/* A message that fills its buffer (@p size bytes, NUL included) was cut by
 * the library's bounded formatting: end it in "..." so that the reader sees. */
void cli_mark_if_full(char *buf, size_t size);

/* Usage error: "reflease <cmd>: <message>" on stderr (JSON error object on
 * stdout with --json). Returns -EXIT_USAGE. */
int cli_usage(cli_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Report a failed library call: message on stderr (JSON error object on
 * stdout with --json). Returns -(exit status for code). */
int cli_fail(cli_ctx *ctx, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Log callback for the library: prints "reflease: level: msg" on stderr. */
void cli_log(int level, const char *msg, void *payload);

/* --- output.c --- */

/* A payload as a JSON object (cli.md): the token only when @p with_token;
 * "expires_in" (seconds, negative when past) from @p now. New reference. */
json_t *cli_payload_json(const lease_payload *p, int with_token, int64_t now);
/* The lease-operation object of cli.md ("status", "name", "ref", "oid",
 * "token_rotated", "lease", "holder", "error"). New reference. */
json_t *cli_result_json(const lease_result *r);
/* Add a result's outcome to JSON object @p o (cli.md "JSON output"): "error"
 * {code: lease_error_id(@p code), message} when @p failed, else "message"
 * when @p message is not empty. */
void cli_json_outcome(json_t *o, int failed, int code, const char *message);
/* Print one JSON object on its own line to @p f; steals @p obj. */
void cli_emit_json(FILE *f, json_t *obj);

/* One element of a JSON array streamed to stdout (reconcile, list: issue 29):
 * @p obj (consumed) in cli_emit_json()'s spelling, after a comma unless it is
 * the @p first. Returns 0, or LEASE_ENOMEM (nothing written). */
int cli_stream_json_item(json_t *obj, int first);
/* Human rendering of a lease result on stdout (one or a few lines). */
void cli_print_result_human(const lease_result *r);
/* Print a result in the chosen format and write GitHub outputs when in
 * Actions ($GITHUB_OUTPUT: lease-token, status, oid, expires-at). */
void cli_print_result(cli_ctx *ctx, const lease_result *r);

/* As cli_print_result(), with @p extra (borrowed; NULL = none) set as member
 * @p key of the JSON object (status's "queue"); @p key NULL: @p extra is an
 * object whose members are added (status's "queue" and "slots"). */
void cli_print_result_extra(cli_ctx *ctx, const lease_result *r, const char *key, json_t *extra);
/* Append "key=value" lines to $GITHUB_OUTPUT when GITHUB_ACTIONS=true. */
void cli_github_output(const char *key, const char *value);

#endif
