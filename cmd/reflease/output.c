/* Rendering: human lines, JSON objects (cli.md "JSON output"), GitHub outputs. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

int cli_close_stdout(int status)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO; /* an earlier write's errno is gone: EIO */
	/* flushed: nothing pending, so EBADF means a closed descriptor that
	 * nothing was written to, not an error (as gnulib's close_stream) */
	else if (fclose(stdout) != 0 && errno != EBADF)
		err = errno;
	if (!err)
		return status;
	fprintf(stderr, "reflease: cannot write standard output: %s\n", strerror(err));
	return status >= 64 ? status : EXIT_IOERR;
}

json_t *cli_payload_json(const lease_payload *p, int with_token, int64_t now)
{
	char acq[LEASE_TIME_STRSZ + 1], exp[LEASE_TIME_STRSZ + 1];
	json_t *o;

	lease_time_format(acq, p->acquired_at);
	lease_time_format(exp, p->expires_at);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:I}", "sdlc_version",
	              p->sdlc_version, "name", p->name, "owner", p->owner, "host", p->host, "phase",
	              lease_phase_name(p->phase), "transitions", (json_int_t)p->transitions,
	              "acquired_at", acq, "expires_at", exp, "nonce", p->nonce, "expires_in",
	              (json_int_t)(p->expires_at - now));
	if (!o)
		return NULL;
	if (p->has_ttl)
		json_object_set_new(o, "ttl_seconds", json_integer((json_int_t)p->ttl_seconds));
	if (p->has_heartbeats)
		json_object_set_new(o, "heartbeats", json_integer((json_int_t)p->heartbeats));
	if (p->has_previous_heartbeat) {
		lease_time_format(acq, p->previous_heartbeat_at);
		json_object_set_new(o, "previous_heartbeat_at", json_string(acq));
	}
	if (p->has_queued_at) {
		lease_time_format(acq, p->queued_at);
		json_object_set_new(o, "queued_at", json_string(acq));
		if (p->queue_position > 0)
			json_object_set_new(o, "queue_position",
			                    json_integer((json_int_t)p->queue_position));
	}
	if (with_token)
		json_object_set_new(o, "lease_token", json_string(p->lease_token));
	return o;
}

json_t *cli_result_json(const lease_result *r)
{
	char hex[LEASE_OID_HEXSZ + 1];
	json_t *o = json_object();

	json_object_set_new(o, "status", json_string(lease_status_name(r->status)));
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "ref", json_string(r->ref));
	if (r->present) {
		lease_oid_tohex(hex, &r->oid);
		json_object_set_new(o, "oid", json_string(hex));
	} else {
		json_object_set_new(o, "oid", json_null());
	}
	json_object_set_new(o, "token_rotated", json_boolean(r->token_rotated));
	if (r->waited_seconds >= 0 && r->status == LEASE_STATUS_ACQUIRED)
		json_object_set_new(o, "waited_seconds", json_integer(r->waited_seconds));
	if (r->has_payload) {
		json_object_set_new(o, "lease",
		                    cli_payload_json(&r->payload, r->holds_token, r->now));
		if (r->payload.phase != LEASE_PHASE_RELEASED) {
			char exp[LEASE_TIME_STRSZ + 1];
			lease_time_format(exp, r->payload.expires_at);
			json_object_set_new(o, "holder",
			                    json_pack("{s:s, s:s, s:s}", "owner", r->payload.owner,
			                              "host", r->payload.host, "expires_at", exp));
		}
	}
	cli_json_outcome(o, r->code < 0 && r->status == LEASE_STATUS_ERROR, r->code, r->message);
	return o;
}

void cli_json_outcome(json_t *o, int failed, int code, const char *message)
{
	if (failed)
		json_object_set_new(
		        o, "error",
		        json_pack("{s:s, s:s}", "code", lease_error_id(code), "message", message));
	else if (message[0])
		json_object_set_new(o, "message", json_string(message));
}

void cli_emit_json(FILE *f, json_t *obj)
{
	char *s;

	if (!obj)
		return;
	s = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (s) {
		fprintf(f, "%s\n", s);
		free(s);
	}
	json_decref(obj);
	fflush(f);
}

int cli_stream_json_item(json_t *obj, int first)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;

	json_decref(obj);
	if (!s)
		return LEASE_ENOMEM;
	printf("%s%s", first ? "" : ",", s);
	free(s);
	return 0;
}

static void human_time_left(char *buf, size_t len, int64_t secs)
{
	const char *sign = secs < 0 ? "-" : "";
	int64_t a = secs < 0 ? -secs : secs;

	if (a >= 3600)
		snprintf(buf, len, "%s%lldh%02lldm", sign, (long long)(a / 3600),
		         (long long)(a % 3600 / 60));
	else if (a >= 60)
		snprintf(buf, len, "%s%lldm%02llds", sign, (long long)(a / 60),
		         (long long)(a % 60));
	else
		snprintf(buf, len, "%s%llds", sign, (long long)a);
}

/* The result's message under the first line, without the holder the first
 * line already names (issue 23: "held — claimed by x on h, expires T" then
 * "held by x on h until T"): a message ending in " by OWNER on HOST until T"
 * loses that ending (and a ": held" before it), and one that was only
 * "held" is not printed. */
static void print_message_once(const lease_result *r, const char *exp)
{
	const lease_payload *p = &r->payload;
	char tail[2 * LEASE_IDENT_MAX + LEASE_TIME_STRSZ + 32];
	size_t n = strlen(r->message), t;

	if (!n)
		return;
	snprintf(tail, sizeof(tail), " by %s on %s until %s", p->owner, p->host, exp);
	t = strlen(tail);
	if (n > t && strcmp(r->message + n - t, tail) == 0) {
		n -= t;
		if (n == 4 && strncmp(r->message, "held", 4) == 0)
			return;
		if (n > 6 && strncmp(r->message + n - 6, ": held", 6) == 0)
			n -= 6; /* "still held after waiting 5 s: held" */
		printf("  %.*s\n", (int)n, r->message);
		return;
	}
	printf("  %s\n", r->message);
}

void cli_print_result_human(const lease_result *r)
{
	char exp[LEASE_TIME_STRSZ + 1], left[32];
	const lease_payload *p = &r->payload;
	const char *status = lease_status_name(r->status);

	if (!r->has_payload) {
		printf("%s: %s%s%s\n", r->name, status, r->message[0] ? " — " : "", r->message);
		return;
	}
	lease_time_format(exp, p->expires_at);
	human_time_left(left, sizeof(left), p->expires_at - r->now);
	if (p->phase == LEASE_PHASE_RELEASED) /* expires_at is the release time */
		printf("%s: %s — released by %s on %s at %s, generation %lld\n", r->name, status,
		       p->owner, p->host, exp, (long long)p->transitions);
	else if (p->expires_at < r->now)
		printf("%s: %s — %s by %s on %s, expired %s (%s ago), generation %lld\n", r->name,
		       status, lease_phase_name(p->phase), p->owner, p->host, exp, left + 1,
		       (long long)p->transitions);
	else
		printf("%s: %s — %s%s by %s on %s, expires %s (in %s), generation %lld\n", r->name,
		       status,
		       /* a heartbeat with the current token from another identity
		        * takes the lease over (§5): not a plain renewal */
		       r->token_rotated && r->status == LEASE_STATUS_RENEWED
		               ? "took over (the token rotated: the previous holder is fenced); "
		               : "",
		       lease_phase_name(p->phase), p->owner, p->host, exp, left,
		       (long long)p->transitions);
	if (r->holds_token)
		printf("lease_token: %s\n", p->lease_token);
	print_message_once(r, exp);
}

void cli_github_output(const char *key, const char *value)
{
	const char *path = getenv("GITHUB_OUTPUT");
	FILE *f;

	if (!report_github_actions() || !path || !*path)
		return;
	/* values are hex, timestamps and status ids: no newlines to escape */
	if (strchr(value, '\n') || !(f = fopen(path, "a")))
		return;
	fprintf(f, "%s=%s\n", key, value);
	fclose(f);
}

void cli_print_result(cli_ctx *ctx, const lease_result *r)
{
	cli_print_result_extra(ctx, r, NULL, NULL);
}

void cli_print_result_extra(cli_ctx *ctx, const lease_result *r, const char *key, json_t *extra)
{
	char hex[LEASE_OID_HEXSZ + 1] = "", exp[LEASE_TIME_STRSZ + 1] = "";

	if (ctx->json) {
		json_t *o = cli_result_json(r);
		if (o && key && extra)
			json_object_set(o, key, extra);
		else if (o && extra)
			json_object_update(o, extra); /* several members */
		cli_emit_json(stdout, o);
	} else {
		cli_print_result_human(r);
	}
	if (r->present)
		lease_oid_tohex(hex, &r->oid);
	if (r->has_payload)
		lease_time_format(exp, r->payload.expires_at);
	cli_github_output("status", lease_status_name(r->status));
	cli_github_output("oid", hex);
	cli_github_output("expires-at", exp);
	if (r->holds_token && r->has_payload)
		cli_github_output("lease-token", r->payload.lease_token);
	if (r->holds_token && strchr(r->name, '@'))
		cli_github_output("lease-name", r->name); /* the slot held (protocol.md "Slots") */
}
