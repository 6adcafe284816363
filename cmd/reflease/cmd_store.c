/* Store commands: init, status, list, version. */
#include "cli.h"

#include <curl/curl.h>
#include <git2.h>
#include <string.h>

#include "reflease/queue.h"
#include "reflease/version.h"
#include "report.h"

static const struct option plain_longopts[] = {CLI_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};

/* init's PATH: "local:PATH" is PATH (the spelling --store takes); github:
 * and remote: stores are not made by init (issue 23): a usage error saying
 * what to do. A directory really named "local:x" is "./local:x". */
static int init_path(cli_ctx *ctx, const char *arg, const char **path)
{
	*path = arg;
	if (strncmp(arg, "local:", 6) == 0) {
		*path = arg + 6;
		if (!**path)
			return cli_usage(ctx, "local: needs a PATH (init local:PATH)");
		return 0;
	}
	if (strncmp(arg, "github:", 7) == 0)
		return cli_usage(ctx,
		                 "init makes local stores only: a github: store is the GitHub "
		                 "repository itself and needs no init (create '%s' on GitHub, "
		                 "then use --store %s with a token allowed contents: write)",
		                 arg + 7, arg);
	if (strncmp(arg, "remote:", 7) == 0)
		return cli_usage(ctx,
		                 "init makes local stores only: a remote: store is a repository on "
		                 "the server; create it there (e.g. git init --bare on the host), "
		                 "then use --store %s",
		                 arg);
	return 0;
}

static int cmd_init(cli_ctx *ctx, int argc, char **argv)
{
	char err[1024] = "";
	const char *path;
	int i, rc, created = 0;

	if ((i = cli_parse(ctx, argc, argv, "vqh", plain_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	if (i >= argc)
		return cli_status_of(cli_usage(ctx, "missing PATH (see --help)"));
	if (argc - i > 1)
		return cli_status_of(
		        cli_usage(ctx, "unexpected argument '%s' after PATH", argv[i + 1]));
	if ((rc = init_path(ctx, argv[i], &path)) < 0)
		return cli_status_of(rc);
	if ((rc = lease_store_init_local(path, &created, err, sizeof(err))) < 0)
		return cli_status_of(cli_fail(ctx, rc, "%s", err));
	if (ctx->json)
		cli_emit_json(stdout, json_pack("{s:s, s:s, s:s}", "status",
		                                created ? "initialized" : "configured", "path",
		                                path, "store", "local"));
	else if (created)
		printf("initialized a bare lease store at %s (use --store local:%s)\n", path, path);
	else
		printf("configured the existing repository at %s as a lease store (use --store "
		       "local:%s)\n",
		       path, path);
	return EXIT_OK;
}

enum { OPT_FAIL_IF_HELD = OPT_COMMAND_BASE };

static int status_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	(void)arg;
	if (c != OPT_FAIL_IF_HELD)
		return cli_usage(ctx, "unexpected option");
	*(int *)payload = 1;
	return 0;
}

/* The live keyed tickets of lease @p name in @p q (protocol.md §5 "Fair
 * waiting") as a JSON array: position, owner, host, since, expires_at,
 * waiting_seconds. */
static json_t *queue_json(const lease_queue *q, const char *name)
{
	char since[LEASE_TIME_STRSZ + 1], exp[LEASE_TIME_STRSZ + 1];
	json_t *arr = json_array();
	size_t i, pos = 0;

	for (i = 0; arr && i < q->count; i++) {
		const lease_ticket *t = &q->items[i];

		if (!t->live || t->key == 0 || strcmp(t->name, name) != 0)
			continue;
		lease_time_format(since, t->since);
		lease_time_format(exp, t->expires_at);
		json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:s, s:s, s:I}", "position",
		                                     (json_int_t)++pos, "owner", t->owner, "host",
		                                     t->host, "since", since, "expires_at", exp,
		                                     "waiting_seconds",
		                                     (json_int_t)(q->now - t->since)));
	}
	return arr;
}

static int cmd_status(cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"fail-if-held", no_argument, NULL, OPT_FAIL_IF_HELD},
	        CLI_GLOBAL_LONGOPTS,
	        {NULL, 0, NULL, 0}};
	lease_store *st;
	lease_result r;
	const char *name;
	int i, rc, fail_if_held = 0;

	if ((i = cli_parse(ctx, argc, argv, "vqh", longopts, status_opt, &fail_if_held)) < 0)
		return cli_status_of(i);
	if ((rc = cli_take_name(ctx, argc, argv, i, &name)) < 0)
		return cli_status_of(rc);
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	rc = lease_status(&r, st, name);
	if (rc < 0 && !r.present)
		return cli_status_of(cli_fail(
		        ctx, rc, "%s", r.message[0] ? r.message : lease_store_last_error(st)));
	{
		lease_queue q;
		json_t *queue = NULL, *t;
		size_t k;
		if (lease_queue_read(&q, st, name) == 0)
			queue = queue_json(&q, name);
		lease_queue_clear(&q);
		cli_print_result_extra(ctx, &r, "queue", queue);
		json_array_foreach(ctx->json ? NULL : queue, k, t)
		{
			char own[LEASE_IDENT_MAX + 1], host[LEASE_IDENT_MAX + 1];
			printf("queue %zu: %s on %s, waiting since %s (%llds)\n", k + 1,
			       report_clean(own, sizeof(own),
			                    json_string_value(json_object_get(t, "owner"))),
			       report_clean(host, sizeof(host),
			                    json_string_value(json_object_get(t, "host"))),
			       json_string_value(json_object_get(t, "since")),
			       (long long)json_integer_value(
			               json_object_get(t, "waiting_seconds")));
		}
		json_decref(queue);
	}
	/* --fail-if-held: exit 3 while someone else holds it live (lock-action's
	 * fail_if_locked); free, expired, released or this identity's: 0 */
	if (rc == 0 && fail_if_held && lease_status_of(&r) == LEASE_STATUS_LIVE &&
	    !(strcmp(r.payload.owner, ctx->owner) == 0 && strcmp(r.payload.host, ctx->host) == 0))
		return EXIT_HELD;
	return cli_exit_for(rc);
}

static const char *lease_list_status(lease_store *st, const lease_ref_state *l, int64_t now)
{
	if (l->payload_rc != 0 && l->commit.unreadable)
		return "unreadable";
	if (l->payload_rc != 0)
		return l->payload_rc == LEASE_EVERSION ? "unsupported-version" : "malformed";
	if (l->payload.phase == LEASE_PHASE_RELEASED)
		return "released";
	return lease_payload_expired(st, &l->payload, now) ? "expired" : "live";
}

static int cmd_list(cli_ctx *ctx, int argc, char **argv)
{
	lease_queue queues = {0};
	lease_namespace ns = {0};
	lease_store *st;
	json_t *arr = NULL;
	int64_t now;
	size_t k;
	int i, rc;

	if ((i = cli_parse(ctx, argc, argv, "vqh", plain_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	if ((rc = lease_fetch_namespace(&ns, st)) < 0)
		return cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
	now = lease_store_now(st);
	if (ctx->json && lease_queue_read_all(&queues, st) < 0)
		memset(&queues, 0, sizeof(queues)); /* the queues are extra: leases still listed */
	if (ctx->json)
		arr = json_array();
	else if (ns.count == 0)
		printf("no leases in refs/%s/\n", lease_store_namespace(st));
	else
		printf("%-30s %-9s %-8s %-24s %-20s  %s\n", "NAME", "PHASE", "STATUS", "OWNER",
		       "EXPIRES_AT", "HOST");
	for (k = 0; k < ns.count; k++) {
		const lease_ref_state *l = &ns.leases[k];
		const char *status = lease_list_status(st, l, now);
		char hex[LEASE_OID_HEXSZ + 1], exp[LEASE_TIME_STRSZ + 1] = "";
		char own[LEASE_IDENT_MAX + 1], host[LEASE_IDENT_MAX + 1], err[512];
		int ok = l->payload_rc == 0;

		lease_oid_tohex(hex, &l->oid);
		if (ok)
			lease_time_format(exp, l->payload.expires_at);
		if (arr) {
			json_t *queue = queue_json(&queues, l->name);
			if (queue && json_array_size(queue) == 0) {
				json_decref(queue);
				queue = NULL;
			}
			json_array_append_new(
			        arr, json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:s?}",
			                       "name", l->name, "oid", hex, "phase",
			                       ok ? lease_phase_name(l->payload.phase) : NULL,
			                       "owner", ok ? l->payload.owner : NULL, "host",
			                       ok ? l->payload.host : NULL, "expires_at",
			                       ok ? exp : NULL, "status", status, "error",
			                       ok ? NULL : l->payload_error));
			if (queue)
				json_object_set_new(json_array_get(arr, json_array_size(arr) - 1),
				                    "queue", queue);
		} else if (ok) {
			printf("%-30s %-9s %-8s %-24s %-20s  %s\n", l->name,
			       lease_phase_name(l->payload.phase), status,
			       report_clean(own, sizeof(own), l->payload.owner), exp,
			       report_clean(host, sizeof(host), l->payload.host));
		} else {
			printf("%-30s %-9s %-8s %s\n", l->name, "?", status,
			       report_clean(err, sizeof(err), l->payload_error));
		}
	}
	if (arr)
		cli_emit_json(stdout, json_pack("{s:s, s:o}", "namespace",
		                                lease_store_namespace(st), "leases", arr));
	lease_namespace_clear(&ns);
	lease_queue_clear(&queues);
	return EXIT_OK;
}

static int cmd_version(cli_ctx *ctx, int argc, char **argv)
{
	int i, maj, min, rev;
	char git2[32];

	if ((i = cli_parse(ctx, argc, argv, "vqh", plain_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	git_libgit2_version(&maj, &min, &rev);
	snprintf(git2, sizeof(git2), "%d.%d.%d", maj, min, rev);
	if (ctx->json)
		cli_emit_json(stdout,
		              json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "version",
		                        REFLEASE_VERSION, "sdlc_version", SDLC_VERSION, "libraries",
		                        "libgit2", git2, "jansson", JANSSON_VERSION, "libcurl",
		                        curl_version_info(CURLVERSION_NOW)->version));
	else
		printf("reflease %s (payload schema %s; libgit2 %s, jansson %s, libcurl %s)\n",
		       REFLEASE_VERSION, SDLC_VERSION, git2, JANSSON_VERSION,
		       curl_version_info(CURLVERSION_NOW)->version);
	return EXIT_OK;
}

const cli_command cli_store_commands[] = {
        {"init", cmd_init, "init PATH",
         "Create a bare lease store at PATH (or local:PATH), or configure the repository already "
         "there.",
         ""},
        {"status", cmd_status, "status NAME [--fail-if-held]",
         "Show the lease: live, expired, released or absent; holder and time left (token omitted).",
         "  --fail-if-held   exit 3 when another identity holds the lease live (else 0: free,\n"
         "                   expired, released, or held by this owner and host); without it\n"
         "                   status exits 0 in every state\n"},
        {"list", cmd_list, "list",
         "List every lease of the namespace, one line each, under a header (NAME PHASE STATUS "
         "OWNER EXPIRES_AT HOST).",
         ""},
        {"version", cmd_version, "version", "Show the version, SDLC_VERSION and library versions.",
         ""},
        {NULL, NULL, NULL, NULL, NULL}};
