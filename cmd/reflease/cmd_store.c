/* Store commands: init, status, list, gc, version. */
#include "cli.h"

#include <curl/curl.h>
#include <errno.h>
#include <git2.h>
#include <string.h>
#include <unistd.h>

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

enum { OPT_FAIL_IF_HELD = OPT_COMMAND_BASE, OPT_STATUS_CONFLICT };

/* status's options: --fail-if-held [--conflict-exit-code N] */
typedef struct status_args {
	int fail_if_held;
	int conflict; /* replaces --fail-if-held's 3; 0 = not given */
} status_args;

static int status_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	status_args *sa = payload;

	if (c == OPT_STATUS_CONFLICT)
		return cli_parse_conflict_exit(ctx, arg, &sa->conflict);
	if (c != OPT_FAIL_IF_HELD)
		return cli_usage(ctx, "unexpected option");
	sa->fail_if_held = 1;
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

/* The slots of a plain NAME that holds nothing itself (protocol.md "Slots":
 * status): as JSON {"count", "live", "refs": [each slot's status object]},
 * each slot's human lines and a summary line; *@p full: 1 when a --slots
 * acquire by this identity would find no slot free (every slot of the count
 * held live by another identity, or two counts not released). NULL when NAME
 * has no slot refs. */
static json_t *slots_json(cli_ctx *ctx, lease_slots_view *v, const char *name, int *full)
{
	json_t *refs = json_array(), *o;
	size_t i, others = 0;

	*full = 0;
	if (!v->count) {
		json_decref(refs);
		return NULL;
	}
	for (i = 0; i < v->count; i++) {
		const lease_result *s = &v->items[i];
		int64_t idx, n;
		char base[LEASE_NAME_MAX + 1], err[8];

		json_array_append_new(refs, cli_result_json(s));
		if (!ctx->json)
			cli_print_result_human(s);
		if (s->status == LEASE_STATUS_LIVE &&
		    lease_slot_name_parse(s->name, base, &idx, &n, err, sizeof(err)) == 1 &&
		    n == v->slots &&
		    !(strcmp(s->payload.owner, ctx->owner) == 0 &&
		      strcmp(s->payload.host, ctx->host) == 0))
			others++;
	}
	*full = v->slots < 0 || (v->slots > 0 && others >= (size_t)v->slots);
	if (!ctx->json) {
		if (v->slots > 0)
			printf("%s has %lld slots: %zu held live\n", name, (long long)v->slots,
			       v->live);
		else if (v->slots == 0)
			printf("%s has slots, all released (acquire --slots N may take any "
			       "count)\n",
			       name);
		else
			printf("%s has slots of two counts not released (slot-count-mismatch: see "
			       "reconcile); acquire --slots refuses it\n",
			       name);
	}
	o = json_pack("{s:o, s:I, s:o}", "count",
	              v->slots >= 0 ? json_integer((json_int_t)v->slots) : json_null(), "live",
	              (json_int_t)v->live, "refs", refs);
	return o;
}

static const struct option status_longopts[] = {
        {"fail-if-held", no_argument, NULL, OPT_FAIL_IF_HELD},
        {"conflict-exit-code", required_argument, NULL, OPT_STATUS_CONFLICT},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};

static int status_cmd(cli_ctx *ctx, int argc, char **argv, status_args *sa);

/* status: --fail-if-held's 3 replaced by --conflict-exit-code N (cli.md). */
static int cmd_status(cli_ctx *ctx, int argc, char **argv)
{
	status_args sa = {0, 0};
	int status = status_cmd(ctx, argc, argv, &sa);

	return status == EXIT_HELD && sa.conflict ? sa.conflict : status;
}

static int status_cmd(cli_ctx *ctx, int argc, char **argv, status_args *sa)
{
	lease_store *st;
	lease_result r;
	lease_slots_view slots = {NULL, 0, 0, 0};
	const char *name;
	int i, rc, full = 0, fail_if_held;

	if ((i = cli_parse(ctx, argc, argv, "vqh", status_longopts, status_opt, sa)) < 0)
		return cli_status_of(i);
	fail_if_held = sa->fail_if_held;
	if (sa->conflict && !fail_if_held)
		return cli_status_of(cli_usage(ctx, "--conflict-exit-code goes with --fail-if-held "
		                                    "(status exits 3 only with it)"));
	if ((rc = cli_take_name(ctx, argc, argv, i, &name)) < 0)
		return cli_status_of(rc);
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	rc = lease_status(&r, st, name);
	if (rc < 0 && !r.present)
		return cli_status_of(cli_fail(ctx, rc, "%s", r.message));
	/* a plain NAME that holds nothing itself: its slots NAME@iofN, if any
	 * (protocol.md "Slots"; a held plain lease costs no listing more) */
	if (!strchr(name, '@') && rc == 0 && (!r.present || r.status == LEASE_STATUS_RELEASED)) {
		int src = lease_slots_status(&slots, st, name);

		if (src < 0)
			return cli_status_of(cli_fail(ctx, src, "%s", lease_store_last_error(st)));
	}
	{
		lease_queue q;
		json_t *queue = NULL, *t, *extra = json_object(), *sj;
		size_t k;
		if (lease_queue_read(&q, st, name) == 0)
			queue = queue_json(&q, name);
		lease_queue_clear(&q);
		if (extra && queue)
			json_object_set(extra, "queue", queue);
		if (ctx->json) {
			if ((sj = slots_json(ctx, &slots, name, &full)) && extra)
				json_object_set_new(extra, "slots", sj);
			else
				json_decref(sj);
		}
		cli_print_result_extra(ctx, &r, NULL, extra);
		json_decref(extra);
		if (!ctx->json)
			json_decref(slots_json(ctx, &slots, name, &full));
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
	if (rc == 0 && fail_if_held && r.status == LEASE_STATUS_LIVE &&
	    !(strcmp(r.payload.owner, ctx->owner) == 0 && strcmp(r.payload.host, ctx->host) == 0))
		return EXIT_HELD;
	/* ... and for a slotted NAME, while no slot is free for this identity */
	lease_slots_view_clear(&slots);
	if (rc == 0 && fail_if_held && full)
		return EXIT_HELD;
	return cli_exit_for(rc);
}

static const char *cli_list_status(lease_store *st, const lease_ref_state *l, int64_t now,
                                   char *mate, size_t matelen)
{
	mate[0] = '\0';
	if (l->payload_rc != 0 && l->commit.unreadable)
		return "unreadable";
	if (l->payload_rc != 0)
		return l->payload_rc == LEASE_EVERSION ? "unsupported-version" : "malformed";
	if (l->payload.phase == LEASE_PHASE_RELEASED)
		return "released";
	if (lease_payload_expired(st, &l->payload, now))
		return "expired";
	/* a member of a set write a crash cut: held by no one (protocol.md
	 * "Sets", "A set cut by a crash"); a failed read of its mates leaves
	 * it live, as read */
	if (lease_set_cut_mate(mate, matelen, st, &l->payload) > 0)
		return "cut";
	return "live";
}

/* list, streamed (issue 29): each lease printed as the namespace walk reads
 * it, so list holds one lease's state beyond the listing. */
typedef struct list_ctx {
	cli_ctx *ctx;
	lease_store *st;
	int64_t now;
	size_t shown;
	lease_queue queues; /* --json: every queue, read once (issue 28) */
} list_ctx;

static int list_visit(const lease_ref_state *l, const lease_invalid_ref *iv, size_t total,
                      void *payload)
{
	list_ctx *c = payload;
	const char *status;
	char hex[LEASE_OID_HEXSZ + 1], exp[LEASE_TIME_STRSZ + 1] = "";
	char own[LEASE_IDENT_MAX + 1], host[LEASE_IDENT_MAX + 1], err[512];
	char mate[LEASE_NAME_MAX + 1], why[LEASE_NAME_MAX + 64];
	int ok;

	(void)total;
	if (!l)
		return 0; /* names that break the rule: reconcile reports them */
	status = cli_list_status(c->st, l, c->now, mate, sizeof(mate));
	snprintf(why, sizeof(why), "its set write did not reach '%s': held by no one", mate);
	ok = l->payload_rc == 0;
	lease_oid_tohex(hex, &l->oid);
	if (ok)
		lease_time_format(exp, l->payload.expires_at);
	if (c->ctx->json) {
		json_t *o = json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:s?}", "name",
		                      l->name, "oid", hex, "phase",
		                      ok ? lease_phase_name(l->payload.phase) : NULL, "owner",
		                      ok ? l->payload.owner : NULL, "host",
		                      ok ? l->payload.host : NULL, "expires_at", ok ? exp : NULL,
		                      "status", status, "error", ok ? NULL : l->payload_error);

		if (o && *mate && json_object_set_new(o, "reason", json_string(why)) < 0) {
			json_decref(o);
			o = NULL;
		}
		json_t *queue = queue_json(&c->queues, l->name);

		if (o && queue && json_array_size(queue) > 0)
			json_object_set(o, "queue", queue);
		json_decref(queue);
		if (cli_stream_json_item(o, c->shown == 0) < 0)
			return LEASE_ENOMEM;
	} else {
		/* STATUS is as wide as its longest value ("unsupported-version"),
		 * and a lease that does not read keeps every column ("?", "-") with
		 * the reason on a line of its own below (N3) */
		if (!c->shown)
			printf("%-30s %-9s %-19s %-24s %-20s  %s\n", "NAME", "PHASE", "STATUS",
			       "OWNER", "EXPIRES_AT", "HOST");
		if (ok)
			printf("%-30s %-9s %-19s %-24s %-20s  %s\n", l->name,
			       lease_phase_name(l->payload.phase), status,
			       report_clean(own, sizeof(own), l->payload.owner), exp,
			       report_clean(host, sizeof(host), l->payload.host));
		if (ok && *mate)
			printf("    %s\n", why);
		if (!ok)
			printf("%-30s %-9s %-19s %-24s %-20s  %s\n    %s\n", l->name, "?", status,
			       "?", "-", "-", report_clean(err, sizeof(err), l->payload_error));
	}
	c->shown++;
	(void)iv;
	return 0;
}

static int cmd_list(cli_ctx *ctx, int argc, char **argv)
{
	list_ctx c;
	lease_store *st;
	char *ns = NULL;
	int i, rc;

	if ((i = cli_parse(ctx, argc, argv, "vqh", plain_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.st = st;
	c.now = lease_store_now(st);
	/* the fair waiters' queues (few refs): one listing; extra, so a failure
	 * still lists the leases */
	if (ctx->json && lease_queue_read_all(&c.queues, st) < 0)
		lease_queue_clear(&c.queues);
	if (ctx->json)
		printf("{\"leases\":[");
	rc = lease_namespace_each(st, list_visit, &c);
	if (ctx->json) {
		json_t *n = json_string(lease_store_namespace(st));

		ns = n ? json_dumps(n, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
		json_decref(n);
		/* a failed walk still closes the object: valid JSON, exit status says why */
		printf("],\"namespace\":%s}\n", ns ? ns : "null");
		free(ns);
	} else if (rc == 0 && c.shown == 0) {
		printf("no leases in refs/%s/\n", lease_store_namespace(st));
	}
	fflush(stdout);
	lease_queue_clear(&c.queues);
	if (rc < 0)
		return cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
	return EXIT_OK;
}

/* ---- gc: local store maintenance (protocol.md §9 "Local store maintenance") ---- */

enum { OPT_GRACE = OPT_COMMAND_BASE };

/* Unreachable objects younger than this are kept, s: a commit written by a
 * write whose CAS is still to come is never pruned (git gc's own rule, with
 * a grace of its own; issue 29). */
#define GC_GRACE_DEFAULT 3600

static int gc_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	long v;
	int rc;

	if (c != OPT_GRACE)
		return cli_usage(ctx, "unexpected option");
	if ((rc = cli_parse_seconds(ctx, "--grace", arg, 0, 86400 * 365, &v)) < 0)
		return rc;
	*(long *)payload = v;
	return 0;
}

static const struct option gc_longopts[] = {
        {"grace", required_argument, NULL, OPT_GRACE}, CLI_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};

static int cmd_gc(cli_ctx *ctx, int argc, char **argv)
{
	lease_maintain_report rep;
	lease_store *st;
	long grace = GC_GRACE_DEFAULT;
	int i, rc, k;

	if ((i = cli_parse(ctx, argc, argv, "vqh", gc_longopts, gc_opt, &grace)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	/* git gc packs what reflease wrote (refs and objects) under git's ref
	 * locks, and prunes unreachable objects older than the grace
	 * (protocol.md §9 "Local store maintenance") */
	rc = lease_store_maintain(st, grace, &rep);
	for (k = 0; k + 1 < rep.runs && rc != 1; k++)
		fprintf(stderr,
		        "reflease gc: %s moved while git gc read it (it reads now); git gc again "
		        "(%d of %d)\n",
		        rep.moved[k], k + 2, LEASE_MAINTAIN_RUNS);
	if (rc < 0)
		return cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
	if (rc == 1) {
		/* GitHub and git servers pack and prune their own repositories */
		if (ctx->json)
			cli_emit_json(stdout, json_pack("{s:s, s:s}", "status", "nothing_to_do",
			                                "store", lease_store_kind(st)));
		else
			printf("nothing to do: a %s store's server maintains its repository\n",
			       lease_store_kind(st));
		return EXIT_OK;
	}
	if (ctx->json)
		cli_emit_json(stdout, json_pack("{s:s, s:s, s:s, s:I, s:i}", "status", "packed",
		                                "store", "local", "path", rep.path, "grace_seconds",
		                                (json_int_t)grace, "git_gc_runs", rep.runs));
	else
		printf("packed the store at %s; unreachable objects older than %ld s pruned (git "
		       "gc)\n",
		       rep.path, grace);
	return EXIT_OK;
}

static int cmd_version(cli_ctx *ctx, int argc, char **argv)
{
	int i, maj, min, rev;
	char git2[32];

	if ((i = cli_parse(ctx, argc, argv, "vqh", plain_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	/* libcurl: the version built against (LIBCURL_VERSION): it is loaded
	 * only by a github: store (issue 43), never to print a version */
	git_libgit2_version(&maj, &min, &rev);
	snprintf(git2, sizeof(git2), "%d.%d.%d", maj, min, rev);
	if (ctx->json)
		cli_emit_json(stdout, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "version",
		                                REFLEASE_VERSION, "sdlc_version", SDLC_VERSION,
		                                "libraries", "libgit2", git2, "jansson",
		                                JANSSON_VERSION, "libcurl", LIBCURL_VERSION));
	else
		printf("reflease %s (payload schema %s; libgit2 %s, jansson %s, libcurl %s)\n",
		       REFLEASE_VERSION, SDLC_VERSION, git2, JANSSON_VERSION, LIBCURL_VERSION);
	return EXIT_OK;
}

const cli_command cli_store_commands[] = {
        {"init", cmd_init, "init PATH",
         "Create a bare lease store at PATH (or local:PATH), or configure the repository already "
         "there.",
         "", plain_longopts},
        {"status", cmd_status, "status NAME [--fail-if-held [--conflict-exit-code N]]",
         "Show the lease: live, expired, released or absent; holder and time left (token omitted).",
         "  --fail-if-held   exit 3 when another identity holds the lease live (else 0: free,\n"
         "                   expired, released, or held by this owner and host); without it\n"
         "                   status exits 0 in every state\n"
         "  --conflict-exit-code N\n"
         "                   with --fail-if-held: exit N (1-255) instead of 3\n",
         status_longopts},
        {"list", cmd_list, "list",
         "List every lease of the namespace, one line each, under a header (NAME PHASE STATUS "
         "OWNER EXPIRES_AT HOST).",
         "", plain_longopts},
        {"gc", cmd_gc, "gc [--grace S]",
         "Pack a local store and drop what became unreachable (replaced heartbeats), with git gc.",
         "  --grace S        keep unreachable objects younger than S seconds (default 3600;\n"
         "                   0 only when no writer runs); other stores: nothing to do\n",
         gc_longopts},
        {"version", cmd_version, "version", "Show the version, SDLC_VERSION and library versions.",
         "", plain_longopts},
        {NULL, NULL, NULL, NULL, NULL, NULL}};
