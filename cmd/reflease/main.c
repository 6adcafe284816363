/* reflease: global options, dispatch, the exit-status table (cli.md). */
#define _DEFAULT_SOURCE /* gethostname, getlogin_r, getpwuid_r */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_env.h"
#include "report.h"
#include "util/util.h"

int cli_exit_for(int code)
{
	switch (code) {
	case LEASE_OK: return EXIT_OK;
	case LEASE_EHELD: return EXIT_HELD;
	case LEASE_ENOTHOLDER:
	case LEASE_EEXPIRED: return EXIT_NOTHOLDER;
	case LEASE_EINVALID: return EXIT_USAGE;
	case LEASE_EPAYLOAD:
	case LEASE_EVERSION: return EXIT_DATAERR;
	case LEASE_ENET: return EXIT_UNAVAILABLE;
	case LEASE_ECAS:
	case LEASE_EUNVERIFIED:
	case LEASE_ERATELIMIT:
	case LEASE_ELOCKED: return EXIT_TEMPFAIL;
	case LEASE_EAUTH: return EXIT_NOPERM;
	case LEASE_ECONFIG: return EXIT_CONFIG;
	default: return EXIT_SOFTWARE;
	}
}

static int cmd_help(cli_ctx *ctx, int argc, char **argv);

static const struct option help_longopts[] = {CLI_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};

const struct option cli_main_longopts[] = {
        CLI_GLOBAL_LONGOPTS, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};

static const cli_command main_commands[] = {
        {"help", cmd_help, "help [COMMAND]",
         "Show the commands, or one command's options (same as 'reflease COMMAND --help').", "",
         help_longopts},
        {NULL, NULL, NULL, NULL, NULL, NULL}};

static const cli_command *const command_tables[] = {
        cli_store_commands, cli_lease_commands,      cli_migrate_commands, cli_reconcile_commands,
        cli_check_commands, cli_completion_commands, main_commands};

const cli_command *cli_command_at(size_t i)
{
	size_t t;
	const cli_command *c;

	for (t = 0; t < sizeof(command_tables) / sizeof(command_tables[0]); t++)
		for (c = command_tables[t]; c->name; c++)
			if (i-- == 0)
				return c;
	return NULL;
}

const cli_command *cli_find_command(const char *name)
{
	size_t i;
	const cli_command *c;

	for (i = 0; i < sizeof(command_tables) / sizeof(command_tables[0]); i++)
		for (c = command_tables[i]; c->name; c++)
			if (strcmp(c->name, name) == 0)
				return c;
	return NULL;
}

static void print_main_help(void)
{
	size_t i;
	const cli_command *c;

	printf("usage: reflease [global options] <command> [options] [--] [args]\n\n"
	       "Distributed leases stored as git refs (refs/leases/<name>).\n\n"
	       "Commands:\n");
	for (i = 0; i < sizeof(command_tables) / sizeof(command_tables[0]); i++)
		for (c = command_tables[i]; c->name; c++)
			printf("  %-12s %s\n", c->name, c->summary);
	printf("\nGlobal options (also after the command):\n"
	       "  --store SPEC           local:PATH, github:OWNER/REPO or remote:URL "
	       "(REFLEASE_STORE)\n"
	       "  --namespace NS         ref namespace, default leases (REFLEASE_NAMESPACE)\n"
	       "  --owner ID             owner identity (REFLEASE_OWNER)\n"
	       "  --host NAME            host identity (REFLEASE_HOST, RUNNER_NAME)\n"
	       "  --json                 one JSON object on stdout\n"
	       "  --timeout SECONDS      bound on each store operation, default 120 "
	       "(REFLEASE_TIMEOUT)\n"
	       "  --verify-timeout SECONDS  post-state verify window (REFLEASE_VERIFY_TIMEOUT)\n"
	       "  --token-file FILE      GitHub token file, read again on a 401 "
	       "(REFLEASE_GITHUB_TOKEN_FILE;\n"
	       "                         else GITHUB_TOKEN, REFLEASE_GITHUB_TOKEN)\n"
	       "  --ca-bundle FILE       certificate authorities to trust for https "
	       "(REFLEASE_CA_BUNDLE;\n"
	       "                         else CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR)\n"
	       "  -v, -q                 more / less logging on stderr (REFLEASE_LOG)\n"
	       "  -V, --version          show the version (same as 'reflease version')\n"
	       "\nRun 'reflease help COMMAND' or 'reflease COMMAND --help' for a command's "
	       "options;\n'man reflease' for more.\n");
}

void cli_print_help(const cli_command *cmd)
{
	printf("usage: reflease %s\n\n%s\n", cmd->usage, cmd->summary);
	if (cmd->help && *cmd->help)
		printf("\nOptions:\n%s", cmd->help);
	printf("\nGlobal options (--store, --namespace, --owner, --host, --json, --timeout,\n"
	       "--verify-timeout, --token-file, --ca-bundle, -v, -q) are accepted too; see "
	       "'reflease --help'.\n");
}

static void vreport(cli_ctx *ctx, const char *id, const char *fmt, va_list ap)
{
	char msg[2048];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	lease__err_mark_cut(msg, sizeof(msg), n);
	if (ctx->json && !ctx->json_stderr) {
		json_t *o = json_pack("{s:s, s:{s:s, s:s}}", "status", "error", "error", "code", id,
		                      "message", msg);
		cli_emit_json(stdout, o);
	}
	fprintf(stderr, "reflease%s%s: %s\n", ctx->command ? " " : "",
	        ctx->command ? ctx->command : "", msg);
	if (ctx->json && ctx->json_stderr) /* run: stdout is CMD's (cli.md) */
		cli_emit_json(stderr, json_pack("{s:s, s:{s:s, s:s}}", "status", "error", "error",
		                                "code", id, "message", msg));
}

int cli_usage(cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ctx, "usage", fmt, ap);
	va_end(ap);
	return -EXIT_USAGE;
}

int cli_fail(cli_ctx *ctx, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ctx, lease_error_id(code), fmt, ap);
	va_end(ap);
	return -cli_exit_for(code);
}

void cli_log(int level, const char *msg, void *payload)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};

	(void)payload;
	fprintf(stderr, "reflease: %s: %s\n", names[level < 0 ? 0 : level > 3 ? 3 : level], msg);
	/* a budget warning (once per process and budget, issue 39) is also an
	 * annotation of the GitHub Actions step: the run's page shows it */
	if (level == LEASE_LOG_WARN && report_github_actions() &&
	    strncmp(msg, LEASE_BUDGET_WARNING_PREFIX, strlen(LEASE_BUDGET_WARNING_PREFIX)) == 0) {
		char d[2048];
		report_gha_escape(d, sizeof(d), msg, 0);
		fprintf(stderr, "::warning title=reflease GitHub request budget::%s\n", d);
	}
}

void cli_mark_if_full(char *buf, size_t size)
{
	size_t n = strlen(buf);

	if (n + 1 >= size)
		lease__err_mark_cut(buf, size, (int)n + 1);
}

int cli_parse_number(cli_ctx *ctx, const char *what, const char *s, long lo, long hi,
                     const char *unit, long *out)
{
	const char *d = s + (*s == '-');
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	/* strtol also takes leading blanks and '+': whole decimal numbers only */
	if (!*d || strspn(d, "0123456789") != strlen(d) || *end || (errno && errno != ERANGE)) {
		if (lo == LONG_MIN && hi == LONG_MAX) /* syntax only: the caller checks bounds */
			return cli_usage(ctx, "%s: '%s' is not a whole number of %s", what, s,
			                 unit);
		return cli_usage(ctx, "%s: '%s' is not a whole number of %s in %ld..%ld", what, s,
		                 unit, lo, hi);
	}
	/* A whole number past the range (issue 23): say so, with the bound.
	 * Syntax only: the caller checks its own bounds on the clamped value. */
	if (lo == LONG_MIN && hi == LONG_MAX) {
		*out = v; /* strtol clamps an overflow to LONG_MIN / LONG_MAX */
		return 0;
	}
	if (errno == ERANGE)
		return cli_usage(ctx, "%s: '%s' is out of range: at %s %ld %s", what, s,
		                 *s == '-' ? "least" : "most", *s == '-' ? lo : hi, unit);
	if (v < lo || v > hi)
		return cli_usage(ctx, "%s: '%s' is not a whole number of %s in %ld..%ld", what, s,
		                 unit, lo, hi);
	*out = v;
	return 0;
}

int cli_parse_seconds(cli_ctx *ctx, const char *what, const char *s, long lo, long hi, long *out)
{
	return cli_parse_number(ctx, what, s, lo, hi, "seconds", out);
}

static int read_token_file(cli_ctx *ctx, const char *path)
{
	FILE *f = fopen(path, "r");
	struct stat sb;
	size_t n;

	if (!f)
		return cli_fail(ctx, LEASE_ECONFIG, "--token-file %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &sb) == 0 && !S_ISREG(sb.st_mode)) {
		fclose(f);
		return cli_fail(ctx, LEASE_ECONFIG,
		                "--token-file %s is %s, not a file holding the token", path,
		                S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
	}
	n = fread(ctx->token_buf, 1, sizeof(ctx->token_buf) - 1, f);
	fclose(f);
	ctx->token_buf[n] = '\0';
	while (n && (ctx->token_buf[n - 1] == '\n' || ctx->token_buf[n - 1] == '\r' ||
	             ctx->token_buf[n - 1] == ' '))
		ctx->token_buf[--n] = '\0';
	if (!n)
		return cli_fail(ctx, LEASE_ECONFIG,
		                "--token-file %s is empty; put the GitHub token in it", path);
	ctx->token_file = path;
	/* the transport reads it again on a 401 (a rotated token, issue 24) */
	if (setenv("REFLEASE_GITHUB_TOKEN_FILE", path, 1) != 0)
		return cli_fail(ctx, LEASE_ECONFIG, "--token-file %s: %s", path, strerror(errno));
	return 0;
}

int cli_global_option(cli_ctx *ctx, int c, const char *arg)
{
	long v;
	int rc;

	switch (c) {
	case OPT_STORE: ctx->store_spec = arg; return 1;
	case OPT_NAMESPACE: ctx->ns = arg; return 1;
	case OPT_OWNER: ctx->owner = arg; return 1;
	case OPT_HOST: ctx->host = arg; return 1;
	case OPT_JSON: ctx->json = 1; return 1;
	case OPT_TIMEOUT:
		if ((rc = cli_parse_seconds(ctx, "--timeout", arg, 1, 86400, &v)) < 0)
			return rc;
		ctx->timeout_s = (int)v;
		return 1;
	case OPT_VERIFY_TIMEOUT:
		if ((rc = cli_parse_seconds(ctx, "--verify-timeout", arg, 0, 3600, &v)) < 0)
			return rc;
		ctx->verify_timeout_s = (int)v;
		return 1;
	case OPT_TOKEN_FILE:
		if ((rc = read_token_file(ctx, arg)) < 0)
			return rc;
		return 1;
	case OPT_CA_BUNDLE: /* read by the https transports (issue 24) */
		if (access(arg, R_OK) != 0)
			return cli_fail(ctx, LEASE_ECONFIG, "--ca-bundle %s: %s", arg,
			                strerror(errno));
		if (setenv("REFLEASE_CA_BUNDLE", arg, 1) != 0)
			return cli_fail(ctx, LEASE_ECONFIG, "--ca-bundle %s: %s", arg,
			                strerror(errno));
		return 1;
	case 'v':
		ctx->verbosity =
		        ctx->verbosity < LEASE_LOG_DEBUG ? ctx->verbosity + 1 : ctx->verbosity;
		return 1;
	case 'q': ctx->verbosity = LEASE_LOG_ERROR; return 1;
	case 'h':
	case OPT_HELP: return 2;
	default: return 0;
	}
}

/* getopt_long answered '?' or ':' for @p arg: an option without its value
 * ("--store needs a value", issue 23), or one that does not exist. */
static int bad_option(cli_ctx *ctx, const char *shortopts, const struct option *longopts,
                      const char *arg)
{
	const struct option *o;
	size_t n;

	if (optopt && optopt < 256) {
		const char *p = strchr(shortopts, optopt);

		if (p && p[1] == ':')
			return cli_usage(ctx, "option '-%c' needs a value (see --help)", optopt);
		return cli_usage(ctx, "unknown option '-%c' (see --help)", optopt);
	}
	if (arg && strncmp(arg, "--", 2) == 0 && !strchr(arg, '=') && (n = strlen(arg + 2)) > 0)
		for (o = longopts; o && o->name; o++)
			if (strncmp(o->name, arg + 2, n) == 0 && o->has_arg == required_argument &&
			    (o->val == optopt || strlen(o->name) == n))
				return cli_usage(ctx, "option '--%s' needs a value (see --help)",
				                 o->name);
	return cli_usage(ctx, "unknown or ambiguous option '%s' (see --help)", arg);
}

int cli_parse(cli_ctx *ctx, int argc, char **argv, const char *shortopts,
              const struct option *longopts, cli_opt_handler handle, void *payload)
{
	int c, rc;

	optind = 0; /* re-initialise getopt: each command picks its own ordering ("+" or permute) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return bad_option(ctx, shortopts, longopts, argv[optind - 1]);
		rc = cli_global_option(ctx, c, optarg);
		if (rc == 2) {
			cli_print_help(cli_find_command(ctx->command));
			return CLI_HELP_SHOWN;
		}
		if (rc < 0)
			return rc;
		if (rc == 1)
			continue;
		if (!handle || (rc = handle(ctx, c, optarg, payload)) < 0)
			return handle ? rc : cli_usage(ctx, "unexpected option");
	}
	return optind;
}

int cli_take_name(cli_ctx *ctx, int argc, char **argv, int optind_, const char **name)
{
	char err[256];

	if (optind_ >= argc)
		return cli_usage(ctx, "missing NAME (see --help)");
	if (argc - optind_ > 1)
		return cli_usage(ctx, "unexpected argument '%s' after NAME", argv[optind_ + 1]);
	/* a plain name, or a slot's "NAME@iofN" (protocol.md "Slots") */
	if (lease_ref_name_validate(argv[optind_], err, sizeof(err)) < 0)
		return cli_usage(ctx, "invalid lease name: %s",
		                 strncmp(err, "name: ", 6) == 0 ? err + 6 : err);
	*name = argv[optind_];
	return 0;
}

static const char *env_nonempty(const char *k)
{
	const char *v = getenv(k);
	return v && *v ? v : NULL;
}

/* The login name (protocol.md §5): getlogin, USER, LOGNAME, the user
 * database, else "uid-N" — never one name shared by every user of a host. */
static void login_identity(char *buf, size_t len)
{
	struct passwd pw, *found = NULL;
	char pwbuf[4096];
	const char *v;

	if (getlogin_r(buf, len) == 0 && buf[0])
		return;
	if ((v = env_nonempty("USER")) || (v = env_nonempty("LOGNAME"))) {
		snprintf(buf, len, "%s", v);
		return;
	}
	if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found &&
	    found->pw_name && found->pw_name[0]) {
		snprintf(buf, len, "%s", found->pw_name);
		return;
	}
	snprintf(buf, len, "uid-%lu", (unsigned long)getuid());
}

/* Identity defaults, protocol.md §5. In GitHub Actions without the job's
 * variables (a container step, env -i, act): login, host and session id
 * (getsid: the runner's step processes share its session), never one owner
 * shared by every such job; said at -v. */
static void default_identity(cli_ctx *ctx)
{
	const char *v;

	if (!ctx->host && (v = env_nonempty("REFLEASE_HOST")))
		ctx->host = v;
	if (!ctx->host && (v = env_nonempty("RUNNER_NAME")))
		ctx->host = v;
	if (!ctx->host) {
		if (gethostname(ctx->host_buf, sizeof(ctx->host_buf) - 1) != 0 || !ctx->host_buf[0])
			snprintf(ctx->host_buf, sizeof(ctx->host_buf), "localhost");
		ctx->host = ctx->host_buf;
	}
	if (!ctx->owner && (v = env_nonempty("REFLEASE_OWNER")))
		ctx->owner = v;
	if (!ctx->owner && report_github_actions() && env_nonempty("GITHUB_REPOSITORY") &&
	    env_nonempty("GITHUB_RUN_ID") && env_nonempty("GITHUB_JOB")) {
		snprintf(ctx->owner_buf, sizeof(ctx->owner_buf), "%s/%s/%s/%s",
		         getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID"),
		         env_nonempty("GITHUB_RUN_ATTEMPT") ? getenv("GITHUB_RUN_ATTEMPT") : "1",
		         getenv("GITHUB_JOB"));
		ctx->owner = ctx->owner_buf;
	} else if (!ctx->owner && report_github_actions()) {
		char login[128], msg[512];
		login_identity(login, sizeof(login));
		snprintf(ctx->owner_buf, sizeof(ctx->owner_buf), "%s@%.100s/session-%ld", login,
		         ctx->host, (long)getsid(0));
		ctx->owner = ctx->owner_buf;
		if (ctx->verbosity >= LEASE_LOG_INFO) {
			snprintf(msg, sizeof(msg),
			         "GITHUB_ACTIONS=true without GITHUB_REPOSITORY, GITHUB_RUN_ID and "
			         "GITHUB_JOB: owner '%s' (login, host and session; set "
			         "REFLEASE_OWNER "
			         "or --owner for one owner across sessions)",
			         ctx->owner);
			cli_log(LEASE_LOG_INFO, msg, NULL);
		}
	}
	if (!ctx->owner) {
		login_identity(ctx->owner_buf, sizeof(ctx->owner_buf));
		ctx->owner = ctx->owner_buf;
	}
}

int cli_open_store(cli_ctx *ctx, lease_store **out)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	cli_env_buf env;
	char err[1024];
	int rc;

	if (ctx->st) {
		*out = ctx->st;
		return 0;
	}
	if (!ctx->store_spec) {
		if (report_github_actions()) {
			if (!env_nonempty("GITHUB_REPOSITORY"))
				return cli_fail(ctx, LEASE_ECONFIG,
				                "GITHUB_ACTIONS=true but GITHUB_REPOSITORY is not "
				                "set; pass --store");
			snprintf(ctx->store_buf, sizeof(ctx->store_buf), "github:%s",
			         getenv("GITHUB_REPOSITORY"));
		} else {
			snprintf(ctx->store_buf, sizeof(ctx->store_buf), "local:");
		}
		ctx->store_spec = ctx->store_buf;
	}
	o.ns = ctx->ns;
	o.timeout_s = ctx->timeout_s;
	o.verify_timeout_ms = ctx->verify_timeout_s >= 0 ? ctx->verify_timeout_s * 1000 : -1;
	o.log = cli_log;
	o.log_level = ctx->verbosity;
	o.random = ctx->random;
	/* the library reads no environment: the CLI's ENVIRONMENT (cli.md) */
	cli_env_store_options(&o, &env, cli_getenv, NULL);
	if (ctx->token_buf[0])
		o.github_token = ctx->token_buf; /* --token-file's, read above */
	err[0] = '\0';
	if ((rc = lease_store_open(&ctx->st, ctx->store_spec, &o, err, sizeof(err))) < 0) {
		cli_mark_if_full(err, sizeof(err));
		return cli_fail(ctx, rc, "%s", err[0] ? err : lease_error_id(rc));
	}
	*out = ctx->st;
	return 0;
}

static int parse_env_defaults(cli_ctx *ctx)
{
	const char *v;
	long n;
	int rc;

	ctx->store_spec = env_nonempty("REFLEASE_STORE");
	ctx->ns = env_nonempty("REFLEASE_NAMESPACE");
	ctx->timeout_s = 120;
	ctx->verify_timeout_s = -1;
	ctx->verbosity = LEASE_LOG_WARN;
	if ((v = env_nonempty("REFLEASE_TIMEOUT"))) {
		if ((rc = cli_parse_seconds(ctx, "REFLEASE_TIMEOUT", v, 1, 86400, &n)) < 0)
			return rc;
		ctx->timeout_s = (int)n;
	}
	if ((v = env_nonempty("REFLEASE_VERIFY_TIMEOUT"))) {
		if ((rc = cli_parse_seconds(ctx, "REFLEASE_VERIFY_TIMEOUT", v, 0, 3600, &n)) < 0)
			return rc;
		ctx->verify_timeout_s = (int)n;
	}
	if ((v = env_nonempty("REFLEASE_LOG"))) {
		if (strcmp(v, "error") == 0 || strcmp(v, "quiet") == 0)
			ctx->verbosity = LEASE_LOG_ERROR;
		else if (strcmp(v, "warn") == 0 || strcmp(v, "warning") == 0)
			ctx->verbosity = LEASE_LOG_WARN;
		else if (strcmp(v, "info") == 0)
			ctx->verbosity = LEASE_LOG_INFO;
		else if (strcmp(v, "debug") == 0)
			ctx->verbosity = LEASE_LOG_DEBUG;
		else
			return cli_usage(
			        ctx, "REFLEASE_LOG: '%s' is not one of error, warn, info, debug",
			        v);
	}
	return 0;
}

/* help [COMMAND]: the main help, or one command's. */
static int cmd_help(cli_ctx *ctx, int argc, char **argv)
{
	const cli_command *cmd;
	int i;

	if ((i = cli_parse(ctx, argc, argv, "vqh", help_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	if (i >= argc) {
		print_main_help();
		return EXIT_OK;
	}
	if (argc - i > 1)
		return cli_status_of(
		        cli_usage(ctx, "unexpected argument '%s' after COMMAND", argv[i + 1]));
	if (!(cmd = cli_find_command(argv[i])))
		return cli_status_of(cli_usage(
		        ctx, "unknown command '%s' (run 'reflease help' for the list)", argv[i]));
	cli_print_help(cmd);
	return EXIT_OK;
}

static int reflease_main(int argc, char **argv);

/* Every command's status passes cli_close_stdout(): 74 when stdout could not
 * be written (cli.md "Exit status"). */
int main(int argc, char **argv)
{
	return cli_close_stdout(reflease_main(argc, argv));
}

static int reflease_main(int argc, char **argv)
{
	cli_ctx ctx;
	const cli_command *cmd;
	int c, rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.prog = "reflease";
	if ((rc = parse_env_defaults(&ctx)) < 0)
		return -rc;
	/* Global options before the command ('+': stop at the first operand). */
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "V", cli_main_longopts, NULL)) !=
	       -1) {
		if (c == 'V') {
			cmd = cli_find_command("version");
			return cmd->run(&ctx, 1, (char *[]){"version", NULL});
		}
		if (c == '?' || c == ':')
			return -bad_option(&ctx, CLI_GLOBAL_SHORTOPTS "V", cli_main_longopts,
			                   argv[optind - 1]);
		rc = cli_global_option(&ctx, c, optarg);
		if (rc == 2) {
			print_main_help();
			return EXIT_OK;
		}
		if (rc < 0)
			return -rc;
	}
	if (optind >= argc) {
		print_main_help();
		return EXIT_USAGE;
	}
	if (!(cmd = cli_find_command(argv[optind])))
		return -cli_usage(&ctx, "unknown command '%s' (see 'reflease --help')",
		                  argv[optind]);
	ctx.command = cmd->name;
	if (ctx.ns) {
		char err[256];
		if (lease_namespace_validate(ctx.ns, err, sizeof(err)) < 0)
			return -cli_usage(&ctx, "invalid namespace: %s",
			                  strncmp(err, "namespace: ", 11) == 0 ? err + 11 : err);
	}
	/* No lease_global_init() here (issue 43): opening the store initialises
	 * the one library its kind uses (libgit2 for local: and remote:, libcurl,
	 * loaded then, for github:), and every command opens its store before
	 * run's heartbeat thread and guard exist; version, help and a usage error
	 * initialise neither. */
	default_identity(&ctx);
	rc = cmd->run(&ctx, argc - optind, argv + optind);
	lease_store_free(ctx.st);
	explicit_bzero(ctx.token_buf, sizeof(ctx.token_buf));
	return rc < 0 ? cli_status_of(rc) : rc;
}
