/* Sets of leases on the command line (cli.md "Sets", protocol.md "Sets"):
 * `acquire`, `heartbeat`, `transition` and `release` given several names
 * take, extend, move or give up all of them in one atomic write, or none. */
#include "cmd_set.h"

#include <stdlib.h>
#include <string.h>

int set_take_names(cli_ctx *ctx, int argc, char **argv, int optind_, const char **names, size_t *n)
{
	char err[256];
	int i, j;

	*n = 0;
	if (optind_ >= argc)
		return cli_usage(ctx, "missing NAME (see --help)");
	if (argc - optind_ > LEASE_SET_MAX)
		return cli_usage(ctx, "a set names at most %d leases (%d given)", LEASE_SET_MAX,
		                 argc - optind_);
	for (i = optind_; i < argc; i++) {
		if (lease_name_validate(argv[i], err, sizeof(err)) < 0)
			return cli_usage(ctx, "invalid lease name '%s': %s", argv[i],
			                 strncmp(err, "name: ", 6) == 0 ? err + 6 : err);
		for (j = optind_; j < i; j++)
			if (strcmp(argv[j], argv[i]) == 0)
				return cli_usage(ctx, "lease '%s' named twice in the set", argv[i]);
		names[(*n)++] = argv[i];
	}
	return 0;
}

/* The set's token: the one every member written with a token holds. */
static const char *set_token(const lease_set_result *r)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (r->members[i].holds_token && r->members[i].has_payload)
			return r->members[i].payload.lease_token;
	return NULL;
}

json_t *set_result_json(const lease_set_result *r)
{
	json_t *o = json_object(), *names = json_array(), *members = json_array();
	const char *tok = set_token(r);
	size_t i;

	json_object_set_new(o, "status", json_string(lease_status_name(r->status)));
	json_object_set_new(o, "set", json_true());
	for (i = 0; i < r->count; i++) {
		json_array_append_new(names, json_string(r->members[i].name));
		json_array_append_new(members, cli_result_json(&r->members[i]));
	}
	json_object_set_new(o, "names", names);
	json_object_set_new(o, "members", members);
	if (tok)
		json_object_set_new(o, "lease_token", json_string(tok));
	if (r->blocker >= 0 && (size_t)r->blocker < r->count)
		json_object_set_new(o, "blocked_by", json_string(r->members[r->blocker].name));
	cli_json_outcome(o, r->code < 0 && r->status == LEASE_STATUS_ERROR, r->code, r->message);
	return o;
}

void set_print_human(const lease_set_result *r, int with_token)
{
	const char *tok = set_token(r);
	size_t i;

	/* N2: a refused set says why on stdout too, where its status is */
	printf("set of %zu: %s%s%s\n", r->count, lease_status_name(r->status),
	       r->status == LEASE_STATUS_ERROR && r->message[0] ? " — " : "",
	       r->status == LEASE_STATUS_ERROR ? r->message : "");
	for (i = 0; i < r->count; i++) {
		lease_result m = r->members[i];

		m.holds_token = 0; /* printed once below */
		if (m.status == LEASE_STATUS_ERROR && !m.message[0] && !m.has_payload)
			snprintf(m.message, sizeof(m.message), "%s",
			         r->status == LEASE_STATUS_ERROR
			                 ? "not written (the set's reason above)"
			                 : "not written");
		printf("  ");
		cli_print_result_human(&m);
	}
	if (tok && with_token)
		printf("lease_token: %s\n", tok);
}

void set_lost_answer(lease_set_result *s, lease_store *st, const char *const *names, size_t n,
                     const lease_result *lr, int code)
{
	size_t i;

	s->count = n;
	s->blocker = -1;
	for (i = 0; i < n; i++) {
		lease_result *m = &s->members[i];

		memset(m, 0, sizeof(*m));
		if (!st || lease_status(m, st, names[i]) < 0) {
			memset(m, 0, sizeof(*m));
			snprintf(m->name, sizeof(m->name), "%s", names[i]);
			m->status = lr->status;
		}
		if (strcmp(names[i], lr->name) == 0)
			s->blocker = (int)i;
	}
	s->status = lr->status;
	s->code = code;
	snprintf(s->message, sizeof(s->message), "%s", lr->message);
}

int set_finish(cli_ctx *ctx, lease_set_result *r, int rc)
{
	const char *tok = set_token(r);

	/* the library's results carry their message; one made here may not */
	if (rc < 0 && !r->message[0])
		snprintf(r->message, sizeof(r->message), "%s", lease_error_id(rc));
	if (ctx->json)
		cli_emit_json(stdout, set_result_json(r));
	else
		set_print_human(r, 1);
	if (r->status == LEASE_STATUS_ERROR) {
		fprintf(stderr, "reflease %s: %s\n", ctx->command,
		        r->message[0] ? r->message : lease_error_id(rc));
		rc = rc < 0 ? rc : LEASE_EINTERNAL;
	}
	cli_github_output("status", lease_status_name(r->status));
	if (tok)
		cli_github_output("lease-token", tok);
	return cli_exit_for(rc);
}
