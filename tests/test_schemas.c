/* Payload schema 1.1.0, commit messages, names and namespaces
 * (lib/lease/schemas.c; protocol.md §1, §2). Table-driven: every malformed
 * input asserts its specific error code and a distinctive part of the error
 * text; every hostile name asserts the rule named. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/schemas.h"
#include "reflease/schema.h"
#include "reflease/version.h"
#include "support/suitefix.h"
#include "support/textcase.h"

#define TOKEN "0123456789abcdef0123456789abcdef"
#define NONCE "89abcdef01234567"

/* Base 1.1.0 payload (a writer emits it as SDLC_VERSION: canonical below,
 * compact, sorted keys). */
static const char *const base_fields[][2] = {
        {"acquired_at", "\"2026-11-30T07:00:00Z\""},
        {"expires_at", "\"2026-11-30T07:05:00Z\""},
        {"host", "\"runner-1\""},
        {"lease_token", "\"" TOKEN "\""},
        {"name", "\"deploy-prod\""},
        {"nonce", "\"" NONCE "\""},
        {"owner", "\"alice\""},
        {"phase", "\"working\""},
        {"sdlc_version", "\"1.1.0\""},
        {"transitions", "3"},
        {"ttl_seconds", "300"},
};
#define NFIELDS (sizeof(base_fields) / sizeof(base_fields[0]))

static const char canonical[] =
        "{\"acquired_at\":\"2026-11-30T07:00:00Z\",\"expires_at\":\"2026-11-30T07:05:00Z\","
        "\"host\":\"runner-1\",\"lease_token\":\"" TOKEN "\",\"name\":\"deploy-prod\","
        "\"nonce\":\"" NONCE "\",\"owner\":\"alice\",\"phase\":\"working\","
        "\"sdlc_version\":\"" SDLC_VERSION "\",\"transitions\":3,\"ttl_seconds\":300}";

/* Build the base payload with up to two fields overridden (value NULL = drop
 * the field) and @p extra appended verbatim inside the object. */
static void build_payload(char *out, size_t cap, const char *f1, const char *v1, const char *f2,
                          const char *v2, const char *extra)
{
	size_t i, n = 0;
	int first = 1;

	n += (size_t)snprintf(out + n, cap - n, "{");
	for (i = 0; i < NFIELDS; i++) {
		const char *v = base_fields[i][1];
		if (f1 && strcmp(f1, base_fields[i][0]) == 0)
			v = v1;
		else if (f2 && strcmp(f2, base_fields[i][0]) == 0)
			v = v2;
		if (!v)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s\"%s\":%s", first ? "" : ",",
		                      base_fields[i][0], v);
		first = 0;
	}
	n += (size_t)snprintf(out + n, cap - n, "%s}", extra ? extra : "");
	ck_assert_uint_lt(n, cap);
}

/* ------------------------------------------------------------ valid payloads */

START_TEST(prebump_payload_validates)
{
	char buf[2048], err[256];
	lease_payload p;
	int rc;

	/* 1.0.0 without ttl_seconds ("pre-bump"). */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.0.0\"", "ttl_seconds", NULL, NULL);
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_ttl, 0);
	ck_assert_int_eq(p.version_major, 1);
	ck_assert_int_eq(p.version_minor, 0);
	ck_assert_str_eq(p.sdlc_version, "1.0.0");
	ck_assert_str_eq(p.name, "deploy-prod");
	ck_assert_int_eq(p.phase, LEASE_PHASE_WORKING);
	ck_assert_int_eq(p.transitions, 3);
	ck_assert_int_eq(p.expires_at - p.acquired_at, 300);
	ck_assert_int_eq(lease_payload_writable(&p, err, sizeof(err)), 0);

	/* In 1.0.x, ttl_seconds is an unknown field: ignored even when odd. */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.0.3\"", "ttl_seconds", "\"x\"", NULL);
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_ttl, 0);

	/* A writer refuses to emit it until a ttl is chosen; then it is SDLC_VERSION. */
	{
		char *json = NULL;
		ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
		ck_assert_ptr_nonnull(strstr(err, "ttl_seconds"));
		ck_assert_int_eq(lease_payload_emit(&json, &p), LEASE_EPAYLOAD);
		ck_assert_ptr_null(json);
		p.has_ttl = 1;
		p.ttl_seconds = 300;
		ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
		ck_assert_ptr_nonnull(strstr(json, "\"sdlc_version\":\"" SDLC_VERSION "\""));
		ck_assert_ptr_nonnull(strstr(json, "\"ttl_seconds\":300"));
		free(json);
	}
}
END_TEST

START_TEST(emit_is_canonical_and_round_trips)
{
	char err[256];
	lease_payload p, q;
	char *json = NULL, *msg = NULL;
	lease_op op;
	int rc;

	/* Parse a non-canonical spelling (spaces, other key order, unknown field). */
	static const char loose[] =
	        "{ \"sdlc_version\": \"" SDLC_VERSION
	        "\", \"name\": \"deploy-prod\", \"owner\": \"alice\",\n"
	        "  \"host\": \"runner-1\", \"phase\": \"working\", \"lease_token\": \"" TOKEN
	        "\",\n"
	        "  \"transitions\": 3, \"acquired_at\": \"2026-11-30T07:00:00Z\",\n"
	        "  \"expires_at\": \"2026-11-30T07:05:00Z\", \"nonce\": \"" NONCE "\",\n"
	        "  \"ttl_seconds\": 300, \"future_field\": {\"a\": [1, 2]} }\n";
	rc = lease_payload_parse(&p, loose, strlen(loose), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_ttl, 1);
	ck_assert_int_eq(p.ttl_seconds, 300);
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), 0);

	ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
	ck_assert_str_eq(json, canonical); /* compact, sorted, every field */
	ck_assert_ptr_null(strchr(json, ' '));
	ck_assert_ptr_null(strchr(json, '\n'));
	ck_assert_ptr_null(strstr(json, "future_field"));

	rc = lease_payload_parse(&q, json, strlen(json), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(memcmp(&p, &q, sizeof(p)), 0);

	/* Commit message: summary, blank line, payload, newline. */
	ck_assert_int_eq(lease_message_build(&msg, &p, LEASE_OP_HEARTBEAT), 0);
	ck_assert_ptr_nonnull(msg);
	{
		char want[1024];
		snprintf(want, sizeof(want),
		         "deploy-prod: heartbeat working by alice on runner-1\n\n%s\n", canonical);
		ck_assert_str_eq(msg, want);
	}
	rc = lease_message_parse(&q, &op, msg, strlen(msg), "deploy-prod", err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(op, LEASE_OP_HEARTBEAT);
	ck_assert_int_eq(memcmp(&p, &q, sizeof(p)), 0);
	free(msg);
	msg = NULL;

	/* Unknown op is no error; message builder refuses it. */
	ck_assert_int_eq(lease_message_build(&msg, &p, LEASE_OP_UNKNOWN), LEASE_EINVALID);
	ck_assert_ptr_null(msg);
	free(json);
}
END_TEST

START_TEST(message_summary_ops)
{
	/* a summary line and the op it names */
	static const textcase cases[] = {
	        {"deploy-prod: acquire claimed by alice on h", LEASE_OP_ACQUIRE},
	        {"deploy-prod: transition review by a b on c d", LEASE_OP_TRANSITION},
	        {"deploy-prod: reacquire working by x on y", LEASE_OP_REACQUIRE},
	        {"deploy-prod: release released by x on y", LEASE_OP_RELEASE},
	        {"deploy-prod: break released by x on y", LEASE_OP_BREAK},
	        {"deploy-prod: reap released by x on y", LEASE_OP_REAP},
	        {"deploy-prod: migrate working by x on y", LEASE_OP_MIGRATE},
	        {"deploy-prod: frobnicate working by x on y", LEASE_OP_UNKNOWN},
	        {"update lease deploy-prod", LEASE_OP_UNKNOWN},
	        {"other: heartbeat working by x on y", LEASE_OP_UNKNOWN},
	        {"deploy-prod: heartbeat", LEASE_OP_UNKNOWN},
	};
	char msg[2048], err[256];
	lease_payload p;
	lease_op op;
	size_t i;
	int rc;

	for (i = 0; i < TEXTCASES(cases); i++) {
		/* payload followed by extra trailing newlines: still fine */
		snprintf(msg, sizeof(msg), "%s\n\n%s\n\n", cases[i].text, canonical);
		op = (lease_op)99;
		rc = lease_message_parse(&p, &op, msg, strlen(msg), NULL, err, sizeof(err));
		ck_assert_msg(rc == 0, "case %zu: rc=%d err=%s", i, rc, err);
		ck_assert_msg(op == cases[i].want, "case %zu: op %d want %d", i, op,
		              (int)cases[i].want);
	}
	/* op_out may be NULL; the blank line may follow a multi-line header. */
	snprintf(msg, sizeof(msg), "summary\nsecond line\n\n%s", canonical);
	ck_assert_int_eq(
	        lease_message_parse(&p, NULL, msg, strlen(msg), "deploy-prod", err, sizeof(err)),
	        0);
	ck_assert_str_eq(lease_op_name(LEASE_OP_REAP), "reap");
	ck_assert_str_eq(lease_op_name(LEASE_OP_UNKNOWN), "unknown");
	ck_assert_str_eq(lease_op_name((lease_op)42), "unknown");
}
END_TEST

/* Schema 1.2.0 (protocol.md §2 "Heartbeats replace heartbeats"): heartbeats
 * and previous_heartbeat_at, optional, read and written; unknown (ignored) in
 * a 1.1.0 payload; a writer refuses them where they cannot be true. */
START_TEST(heartbeat_fields_1_2)
{
	char buf[2048], err[256];
	lease_payload p, q;
	char *json = NULL;
	int rc;

	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"heartbeats\":4,\"previous_heartbeat_at\":\"2026-11-30T06:59:50Z\"");
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_heartbeats, 1);
	ck_assert_int_eq(p.heartbeats, 4);
	ck_assert_int_eq(p.has_previous_heartbeat, 1);
	ck_assert_int_eq(p.previous_heartbeat_at, p.acquired_at - 10);
	/* heartbeat time 07:00:00 (expires 07:05, ttl 300): 10 s after the previous one */
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"heartbeats\":4,"));
	ck_assert_ptr_nonnull(strstr(json, "\"previous_heartbeat_at\":\"2026-11-30T06:59:50Z\""));
	rc = lease_payload_parse(&q, json, strlen(json), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(q.heartbeats, 4);
	ck_assert_int_eq(q.previous_heartbeat_at, p.previous_heartbeat_at);
	free(json);

	/* in 1.1.0 they are unknown fields: ignored, whatever they hold */
	build_payload(buf, sizeof(buf), NULL, NULL, NULL, NULL,
	              ",\"heartbeats\":\"x\",\"previous_heartbeat_at\":7");
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_heartbeats, 0);
	ck_assert_int_eq(p.has_previous_heartbeat, 0);

	/* in 1.2.0 a reader checks their types */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"heartbeats\":0");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)),
	                 LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "heartbeats: must be an integer >= 1"));
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"previous_heartbeat_at\":\"yesterday\"");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)),
	                 LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "previous_heartbeat_at: must be a valid UTC timestamp"));

	/* a writer: previous only with heartbeats >= 2, not after its own time, never released */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"heartbeats\":1,\"previous_heartbeat_at\":\"2026-11-30T06:59:50Z\"");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "previous_heartbeat_at: only a heartbeat that replaced"));
	p.heartbeats = 2;
	p.previous_heartbeat_at = p.expires_at - p.ttl_seconds + 1;
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "not after this heartbeat's time"));
	p.has_previous_heartbeat = 0;
	p.phase = LEASE_PHASE_RELEASED;
	p.ttl_seconds = 0;
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "heartbeats: only a live payload"));
}
END_TEST

/* A fair waiter's acquire (protocol.md §2, §5 "Fair waiting", issue 28):
 * queued_at and queue_position, optional 1.2.0 fields, read and written
 * (round trip); unknown (ignored) in a 1.1.0 payload, as every earlier 1.2
 * reader ignores them; a writer refuses them where they cannot be true. */
START_TEST(queue_fields_1_2)
{
	char buf[2048], err[256];
	lease_payload p, q;
	char *json = NULL;
	int rc;

	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"queue_position\":3,\"queued_at\":\"2026-11-30T06:58:20Z\"");
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_queued_at, 1);
	ck_assert_int_eq(p.queued_at, p.acquired_at - 100);
	ck_assert_int_eq(p.queue_position, 3);
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
	ck_assert_ptr_nonnull(
	        strstr(json, "\"queue_position\":3,\"queued_at\":\"2026-11-30T06:58:20Z\""));
	rc = lease_payload_parse(&q, json, strlen(json), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(q.has_queued_at, 1);
	ck_assert_int_eq(q.queued_at, p.queued_at);
	ck_assert_int_eq(q.queue_position, 3);
	free(json);
	/* the position is optional: queued_at alone round-trips without it */
	p.queue_position = 0;
	ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
	ck_assert_ptr_null(strstr(json, "queue_position"));
	ck_assert_ptr_nonnull(strstr(json, "\"queued_at\":\"2026-11-30T06:58:20Z\""));
	free(json);
	/* a plain payload carries neither */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL, "");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(p.has_queued_at, 0);
	ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
	ck_assert_ptr_null(strstr(json, "queue"));
	free(json);

	/* in 1.1.0 they are unknown fields: ignored, whatever they hold */
	build_payload(buf, sizeof(buf), NULL, NULL, NULL, NULL,
	              ",\"queue_position\":\"x\",\"queued_at\":7");
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_queued_at, 0);
	ck_assert_int_eq(p.queue_position, 0);

	/* in 1.2.0 a reader checks their types */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"queued_at\":\"soon\"");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)),
	                 LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "queued_at: must be a valid UTC timestamp"));
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"queue_position\":0,\"queued_at\":\"2026-11-30T06:58:20Z\"");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)),
	                 LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "queue_position: must be an integer >= 1"));

	/* a writer: queued_at not after the write time, never on released,
	 * queue_position only with queued_at */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
	              ",\"queued_at\":\"2026-11-30T07:00:00Z\"");
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), 0); /* waited 0 s */
	p.queued_at++;
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "queued_at: must lie in years 0000-9999 and not after"));
	p.queued_at -= 2;
	p.phase = LEASE_PHASE_RELEASED;
	p.ttl_seconds = 0;
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "queued_at: only a live payload"));
	p.has_queued_at = 0;
	p.queue_position = 2;
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "queue_position: only with queued_at"));
}
END_TEST

/* The set field (protocol.md §2, "Sets"; issue 40 B65): optional in 1.2.0,
 * read and written (round trip); unknown (ignored) in a 1.1.0 payload, as
 * every earlier 1.2 reader ignores it; a reader and a writer refuse a set
 * that cannot be true. */
#define SET_FROM "0123456789abcdef0123456789abcdef01234567"
#define SET_OK                                                                                     \
	",\"set\":{\"members\":[{\"from\":\"" SET_FROM "\",\"name\":\"deploy-prod\"},"             \
	"{\"name\":\"db\"}],\"write\":\"00112233445566ff\"}"
START_TEST(set_field_1_2)
{
	static const struct {
		const char *extra, *msg;
	} bad[] = {
	        {",\"set\":[]", "set: must be {"},
	        {",\"set\":{\"members\":[],\"write\":\"00112233445566ff\"}", "must name 2 to 16"},
	        {",\"set\":{\"members\":[{\"name\":\"deploy-prod\"},{\"name\":\"db\"}],"
	         "\"write\":\"0011\"}",
	         "set: must be {"},
	        {",\"set\":{\"members\":[{\"name\":\"deploy-prod\"},{\"name\":\"../x\"}],"
	         "\"write\":\"00112233445566ff\"}",
	         "'../x' is not a lease name"},
	        {",\"set\":{\"members\":[{\"name\":\"db\"},{\"name\":\"db2\"}],"
	         "\"write\":\"00112233445566ff\"}",
	         "must name this lease"},
	        {",\"set\":{\"members\":[{\"name\":\"deploy-prod\"},{\"name\":\"deploy-prod\"}],"
	         "\"write\":\"00112233445566ff\"}",
	         "named twice"},
	        {",\"set\":{\"members\":[{\"name\":\"deploy-prod\",\"from\":\"zz\"},{\"name\":"
	         "\"db\"}],\"write\":\"00112233445566ff\"}",
	         "from must be 40 lowercase hex"},
	        {",\"set\":{\"members\":[\"deploy-prod\",\"db\"],\"write\":\"00112233445566ff\"}",
	         "each must be {"},
	};
	char buf[4096], err[256], hex[LEASE_OID_HEXSZ + 1];
	lease_payload p, q;
	char *json = NULL;
	size_t i;
	int rc;

	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL, SET_OK);
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_set, 1);
	ck_assert_int_eq(p.set_count, 2);
	ck_assert_str_eq(p.set_members[1], "db");
	ck_assert_str_eq(p.set_write, "00112233445566ff");
	lease_oid_tohex(hex, &p.set_from[0]);
	ck_assert_str_eq(hex, SET_FROM);
	ck_assert_int_eq(lease_oid_is_zero(&p.set_from[1]), 1);
	ck_assert_int_eq(lease_payload_emit(&json, &p), 0);
	ck_assert_ptr_nonnull(strstr(json, SET_OK));
	rc = lease_payload_parse(&q, json, strlen(json), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(memcmp(&p, &q, sizeof(p)), 0);
	free(json);
	/* never on a released payload (lease__policy_released drops it) */
	p.phase = LEASE_PHASE_RELEASED;
	p.ttl_seconds = 0;
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "set: only a live payload"));

	/* in 1.1.0 it is an unknown field: ignored, whatever it holds */
	build_payload(buf, sizeof(buf), NULL, NULL, NULL, NULL, ",\"set\":7");
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.has_set, 0);

	/* in 1.2.0 a reader checks it */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build_payload(buf, sizeof(buf), "sdlc_version", "\"1.2.0\"", NULL, NULL,
		              bad[i].extra);
		ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)),
		                 LEASE_EPAYLOAD);
		ck_assert_msg(strstr(err, bad[i].msg), "case %zu: %s", i, err);
	}
}
END_TEST

START_TEST(newer_minor_parses_not_writable)
{
	char buf[2048], err[256];
	lease_payload p;
	int rc;

	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.3.0\"", NULL, NULL,
	              ",\"priority\":7,\"labels\":[\"a\"]");
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.version_minor, 3);
	ck_assert_int_eq(p.has_ttl, 1);
	err[0] = '\0';
	ck_assert_int_eq(lease_payload_writable(&p, err, sizeof(err)), LEASE_EVERSION);
	ck_assert_ptr_nonnull(strstr(err, "payload written by a newer schema"));
	ck_assert_ptr_nonnull(strstr(err, "1.3.0"));

	/* Pre-release and build metadata are semver too. */
	build_payload(buf, sizeof(buf), "sdlc_version", "\"1.1.1-rc.1+b7\"", NULL, NULL, NULL);
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(lease_payload_writable(&p, err, sizeof(err)), 0);

	/* Our own version is writable; a fabricated major-2 struct is not. */
	build_payload(buf, sizeof(buf), NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(lease_payload_writable(&p, err, sizeof(err)), 0);
	p.version_major = 2;
	ck_assert_int_eq(lease_payload_writable(&p, err, sizeof(err)), LEASE_EVERSION);
	ck_assert_ptr_nonnull(strstr(err, "payload written by a newer schema"));
}
END_TEST

START_TEST(released_ttl_rules)
{
	char buf[2048], err[256];
	lease_payload p;
	int rc;

	build_payload(buf, sizeof(buf), "phase", "\"released\"", "ttl_seconds", "0", NULL);
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(p.phase, LEASE_PHASE_RELEASED);
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), 0);

	/* A reader accepts a released payload with a live TTL; a writer emits 0. */
	build_payload(buf, sizeof(buf), "phase", "\"released\"", "ttl_seconds", "300", NULL);
	rc = lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	ck_assert_int_eq(lease_payload_validate(&p, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "ttl_seconds: must be 0 when phase is released"));

	/* Edges of the TTL range. */
	build_payload(buf, sizeof(buf), "ttl_seconds", "1", NULL, NULL, NULL);
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);
	build_payload(buf, sizeof(buf), "ttl_seconds", "86400", NULL, NULL, NULL);
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);

	/* Chronology is not a schema error. */
	build_payload(buf, sizeof(buf), "acquired_at", "\"2030-01-01T00:00:00Z\"", "expires_at",
	              "\"2001-01-01T00:00:00Z\"", NULL);
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);
}
END_TEST

START_TEST(validate_struct_rules)
{
	char buf[2048], err[256];
	lease_payload p, q;

	build_payload(buf, sizeof(buf), NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(lease_payload_parse(&p, buf, strlen(buf), err, sizeof(err)), 0);

	q = p;
	memcpy(q.lease_token, "0123456789ABCDEF0123456789abcdef", 33);
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "lease_token: must be 32 lowercase hex"));
	q = p;
	q.nonce[3] = 'x';
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "nonce: must be 16 lowercase hex"));
	q = p;
	q.transitions = -1;
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "transitions"));
	q = p;
	q.phase = LEASE_PHASE_NONE;
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "phase: must be one of"));
	q = p;
	memcpy(q.owner, "a\nb", 4);
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "owner: must be valid UTF-8 without control"));
	q = p;
	memset(q.host, 'h', sizeof(q.host)); /* not NUL-terminated */
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "host: not NUL-terminated"));
	q = p;
	memcpy(q.name, "../heads/main", 14);
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "name:"));
	q = p;
	q.ttl_seconds = 0;
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "ttl_seconds: 0 is allowed only when phase is released"));
	q = p;
	q.expires_at = (int64_t)1 << 60;
	ck_assert_int_eq(lease_payload_validate(&q, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "expires_at"));
	ck_assert_int_eq(lease_payload_validate(NULL, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_int_eq(lease_payload_validate(&p, NULL, 0), 0);
}
END_TEST

/* ------------------------------------------------------------ malformed table */

enum kind { FIELD, RAW_PAYLOAD, MESSAGE_FIELD, RAW_MESSAGE };

struct bad_case {
	const char *what;
	enum kind kind;
	const char *field; /* FIELD / MESSAGE_FIELD: field to override (value NULL = drop) */
	const char *value; /* ... or the raw text for RAW_* */
	size_t len;        /* RAW_*: explicit length (0 = strlen) */
	int rc;
	const char *needle;
};

static const char deep[] = "{\"a\":[[[[[[[[[]]]]]]]]]}";

static const struct bad_case bad_cases[] = {
        /* missing and mistyped fields */
        {"sdlc_version missing", FIELD, "sdlc_version", NULL, 0, LEASE_EPAYLOAD,
         "sdlc_version: required field is missing"},
        {"sdlc_version a number", FIELD, "sdlc_version", "110", 0, LEASE_EPAYLOAD,
         "sdlc_version: must be a string"},
        {"sdlc_version not semver", FIELD, "sdlc_version", "\"1.1\"", 0, LEASE_EPAYLOAD,
         "sdlc_version: must be a semantic version"},
        {"sdlc_version leading zero", FIELD, "sdlc_version", "\"01.1.0\"", 0, LEASE_EPAYLOAD,
         "semantic version"},
        {"sdlc_version trailing junk", FIELD, "sdlc_version", "\"1.1.0 \"", 0, LEASE_EPAYLOAD,
         "semantic version"},
        {"major 2", FIELD, "sdlc_version", "\"2.0.0\"", 0, LEASE_EVERSION,
         "major version 2 is unsupported"},
        {"major 0", FIELD, "sdlc_version", "\"0.9.0\"", 0, LEASE_EVERSION,
         "major version 0 is unsupported"},
        {"name missing", FIELD, "name", NULL, 0, LEASE_EPAYLOAD, "name: required field is missing"},
        {"name with slash", FIELD, "name", "\"a/b\"", 0, LEASE_EPAYLOAD,
         "name: must not contain '/'"},
        {"name null", FIELD, "name", "null", 0, LEASE_EPAYLOAD, "name: must be a string"},
        {"owner missing", FIELD, "owner", NULL, 0, LEASE_EPAYLOAD,
         "owner: required field is missing"},
        {"owner empty", FIELD, "owner", "\"\"", 0, LEASE_EPAYLOAD, "owner: must be 1-200 bytes"},
        {"owner C0 control", FIELD, "owner", "\"al\\u0007ice\"", 0, LEASE_EPAYLOAD,
         "owner: must be valid UTF-8 without control characters"},
        {"owner C1 control", FIELD, "owner", "\"al\\u0085ice\"", 0, LEASE_EPAYLOAD,
         "owner: must be valid UTF-8 without control characters"},
        {"owner 201 bytes", FIELD, "owner",
         "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xx"
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xxxxxxxxxxxxxxxxxxxxxxx\"",
         0, LEASE_EPAYLOAD, "owner: must be 1-200 bytes (got 201)"},
        {"host a number", FIELD, "host", "7", 0, LEASE_EPAYLOAD, "host: must be a string"},
        {"host with newline", FIELD, "host", "\"a\\nb\"", 0, LEASE_EPAYLOAD,
         "host: must be valid UTF-8 without control characters"},
        {"phase unknown", FIELD, "phase", "\"done\"", 0, LEASE_EPAYLOAD, "phase: must be one of"},
        {"phase capitalised", FIELD, "phase", "\"Claimed\"", 0, LEASE_EPAYLOAD,
         "phase: must be one of"},
        {"phase none", FIELD, "phase", "\"none\"", 0, LEASE_EPAYLOAD, "phase: must be one of"},
        {"token missing", FIELD, "lease_token", NULL, 0, LEASE_EPAYLOAD,
         "lease_token: required field is missing"},
        {"token uppercase", FIELD, "lease_token", "\"0123456789ABCDEF0123456789abcdef\"", 0,
         LEASE_EPAYLOAD, "lease_token: must be 32 lowercase hex characters"},
        {"token 31 chars", FIELD, "lease_token", "\"0123456789abcdef0123456789abcde\"", 0,
         LEASE_EPAYLOAD, "lease_token: must be 32 lowercase hex characters"},
        {"token non-hex", FIELD, "lease_token", "\"0123456789abcdeg0123456789abcdef\"", 0,
         LEASE_EPAYLOAD, "lease_token: must be 32 lowercase hex characters"},
        {"transitions negative", FIELD, "transitions", "-1", 0, LEASE_EPAYLOAD,
         "transitions: must be an integer >= 0"},
        {"transitions a string", FIELD, "transitions", "\"3\"", 0, LEASE_EPAYLOAD,
         "transitions: must be an integer"},
        {"transitions a real", FIELD, "transitions", "3.0", 0, LEASE_EPAYLOAD,
         "transitions: must be an integer"},
        {"acquired_at Feb 30", FIELD, "acquired_at", "\"2026-02-30T00:00:00Z\"", 0, LEASE_EPAYLOAD,
         "acquired_at: must be a valid UTC timestamp"},
        {"acquired_at Feb 29 non-leap", FIELD, "acquired_at", "\"2025-02-29T00:00:00Z\"", 0,
         LEASE_EPAYLOAD, "acquired_at: must be a valid UTC timestamp"},
        {"acquired_at hour 24", FIELD, "acquired_at", "\"2026-11-30T24:00:00Z\"", 0, LEASE_EPAYLOAD,
         "acquired_at: must be a valid UTC timestamp"},
        {"acquired_at leap second", FIELD, "acquired_at", "\"2016-12-31T23:59:60Z\"", 0,
         LEASE_EPAYLOAD, "acquired_at: must be a valid UTC timestamp"},
        {"expires_at offset", FIELD, "expires_at", "\"2026-11-30T07:05:00+00:00\"", 0,
         LEASE_EPAYLOAD, "expires_at: must be a valid UTC timestamp"},
        {"expires_at space", FIELD, "expires_at", "\"2026-11-30 07:05:00Z\"", 0, LEASE_EPAYLOAD,
         "expires_at: must be a valid UTC timestamp"},
        {"expires_at lowercase z", FIELD, "expires_at", "\"2026-11-30T07:05:00z\"", 0,
         LEASE_EPAYLOAD, "expires_at: must be a valid UTC timestamp"},
        {"expires_at fractional", FIELD, "expires_at", "\"2026-11-30T07:05:00.5Z\"", 0,
         LEASE_EPAYLOAD, "expires_at: must be a valid UTC timestamp"},
        {"expires_at month 13", FIELD, "expires_at", "\"2026-13-01T07:05:00Z\"", 0, LEASE_EPAYLOAD,
         "expires_at: must be a valid UTC timestamp"},
        {"expires_at epoch number", FIELD, "expires_at", "1796000000", 0, LEASE_EPAYLOAD,
         "expires_at: must be a string"},
        {"nonce 15 chars", FIELD, "nonce", "\"89abcdef0123456\"", 0, LEASE_EPAYLOAD,
         "nonce: must be 16 lowercase hex characters"},
        {"nonce uppercase", FIELD, "nonce", "\"89ABCDEF01234567\"", 0, LEASE_EPAYLOAD,
         "nonce: must be 16 lowercase hex characters"},
        {"ttl 0 on a live phase", FIELD, "ttl_seconds", "0", 0, LEASE_EPAYLOAD,
         "ttl_seconds: 0 is allowed only when phase is released"},
        {"ttl 86401", FIELD, "ttl_seconds", "86401", 0, LEASE_EPAYLOAD,
         "ttl_seconds: must be 1-86400 (got 86401)"},
        {"ttl negative", FIELD, "ttl_seconds", "-5", 0, LEASE_EPAYLOAD,
         "ttl_seconds: must be 1-86400 (got -5)"},
        {"ttl a string", FIELD, "ttl_seconds", "\"300\"", 0, LEASE_EPAYLOAD,
         "ttl_seconds: must be an integer"},
        {"ttl missing in 1.1.0", FIELD, "ttl_seconds", NULL, 0, LEASE_EPAYLOAD,
         "ttl_seconds: required field is missing"},
        /* documents that are not a payload at all */
        {"not JSON", RAW_PAYLOAD, NULL, "hello", 0, LEASE_EPAYLOAD, "payload: not valid JSON"},
        {"empty payload", RAW_PAYLOAD, NULL, "", 0, LEASE_EPAYLOAD, "payload: not valid JSON"},
        {"top-level array", RAW_PAYLOAD, NULL, "[1,2]", 0, LEASE_EPAYLOAD,
         "payload: must be a JSON object"},
        {"top-level string", RAW_PAYLOAD, NULL, "\"x\"", 0, LEASE_EPAYLOAD, /* jansson */
         "payload: not valid JSON"},
        {"deep nesting", RAW_PAYLOAD, NULL, deep, 0, LEASE_EPAYLOAD,
         "payload: JSON nesting deeper than 8"},
        {"unbalanced deep nesting", RAW_PAYLOAD, NULL, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 0,
         LEASE_EPAYLOAD, "nesting deeper"},
        {"brackets in strings are not nesting", RAW_PAYLOAD, NULL, "{\"a\":\"[[[[[[[[[[[[[[\"}", 0,
         LEASE_EPAYLOAD, "sdlc_version: required field is missing"},
        {"invalid UTF-8 in JSON", RAW_PAYLOAD, NULL,
         "{\"sdlc_version\":\"1.1.0\",\"owner\":\"\xff\"}", 0, LEASE_EPAYLOAD,
         "payload: not valid JSON"},
        {"NUL escape in string", RAW_PAYLOAD, NULL, "{\"sdlc_version\":\"1.1\\u00000\"}", 0,
         LEASE_EPAYLOAD, "payload: not valid JSON"},
        {"huge integer", FIELD, "transitions", "99999999999999999999999", 0, LEASE_EPAYLOAD,
         "payload: not valid JSON"},
        {"trailing garbage", RAW_PAYLOAD, NULL, "{} x", 0, LEASE_EPAYLOAD,
         "payload: not valid JSON"},
        /* commit messages */
        {"duplicate key", MESSAGE_FIELD, "phase", "\"working\",\"phase\":\"review\"", 0,
         LEASE_EPAYLOAD, "payload: duplicate key"},
        {"message: major 2", MESSAGE_FIELD, "sdlc_version", "\"2.1.0\"", 0, LEASE_EVERSION,
         "major version 2"},
        {"message: bad token", MESSAGE_FIELD, "lease_token", "\"xyz\"", 0, LEASE_EPAYLOAD,
         "lease_token: must be 32 lowercase hex"},
        {"message: name mismatch", MESSAGE_FIELD, "name", "\"deploy-staging\"", 0, LEASE_EPAYLOAD,
         "name mismatch"},
        {"message: no blank line", RAW_MESSAGE, NULL,
         "deploy-prod: acquire claimed by a on b\n{\"sdlc_version\":\"1.1.0\"}", 0, LEASE_EPAYLOAD,
         "message: no blank line"},
        {"message: single line", RAW_MESSAGE, NULL, "deploy-prod: acquire claimed by a on b", 0,
         LEASE_EPAYLOAD, "message: no blank line"},
        {"message: empty", RAW_MESSAGE, NULL, "", 0, LEASE_EPAYLOAD, "message: no blank line"},
        {"message: empty summary", RAW_MESSAGE, NULL, "\n\n{}", 0, LEASE_EPAYLOAD,
         "message: summary line is empty"},
        {"message: nothing after blank line", RAW_MESSAGE, NULL, "summary\n\n", 0, LEASE_EPAYLOAD,
         "payload: not valid JSON"},
        {"message: invalid UTF-8", RAW_MESSAGE, NULL, "deploy-prod: acquire by \xff\n\n{}", 0,
         LEASE_EPAYLOAD, "message: not valid UTF-8 (bad byte at offset 24)"},
        {"message: overlong UTF-8", RAW_MESSAGE, NULL, "x \xc0\xaf\n\n{}", 0, LEASE_EPAYLOAD,
         "message: not valid UTF-8"},
        {"message: surrogate", RAW_MESSAGE, NULL, "x \xed\xa0\x80\n\n{}", 0, LEASE_EPAYLOAD,
         "message: not valid UTF-8"},
        {"message: truncated sequence", RAW_MESSAGE, NULL, "x\n\n{} \xe2\x82", 0, LEASE_EPAYLOAD,
         "message: not valid UTF-8"},
        {"message: NUL byte", RAW_MESSAGE, NULL, "x\0y\n\n{}", 8, LEASE_EPAYLOAD,
         "message: not valid UTF-8 (bad byte at offset 1)"},
        /* "oversized" is built at run time (see malformed_table) */
};
#define NBAD (sizeof(bad_cases) / sizeof(bad_cases[0]))

START_TEST(malformed_table)
{
	const struct bad_case *c = &bad_cases[_i];
	char payload[4096], msg[8192], err[256];
	const char *text;
	size_t len;
	lease_payload p;
	lease_op op = LEASE_OP_ACQUIRE;
	int rc;

	memset(&p, 0x5a, sizeof(p));
	memset(err, 0, sizeof(err));
	switch (c->kind) {
	case FIELD:
		build_payload(payload, sizeof(payload), c->field, c->value, NULL, NULL, NULL);
		rc = lease_payload_parse(&p, payload, strlen(payload), err, sizeof(err));
		text = payload;
		break;
	case RAW_PAYLOAD:
		text = c->value;
		len = c->len ? c->len : strlen(text);
		rc = lease_payload_parse(&p, text, len, err, sizeof(err));
		break;
	case MESSAGE_FIELD:
		build_payload(payload, sizeof(payload), c->field, c->value, NULL, NULL, NULL);
		snprintf(msg, sizeof(msg),
		         "deploy-prod: acquire claimed by alice on runner-1\n\n%s\n", payload);
		text = msg;
		rc = lease_message_parse(&p, &op, msg, strlen(msg), "deploy-prod", err,
		                         sizeof(err));
		break;
	default:
		text = c->value;
		len = c->len ? c->len : strlen(text);
		rc = lease_message_parse(&p, &op, text, len, "deploy-prod", err, sizeof(err));
		break;
	}
	ck_assert_msg(rc == c->rc, "%s: rc %d (%s), want %d; err='%s' input='%s'", c->what, rc,
	              lease_error_id(rc), c->rc, err, text);
	ck_assert_msg(strstr(err, c->needle) != NULL, "%s: err '%s' lacks '%s'", c->what, err,
	              c->needle);
	if (c->kind == MESSAGE_FIELD || c->kind == RAW_MESSAGE)
		ck_assert_int_eq(op, LEASE_OP_UNKNOWN);
	/* a failed parse leaves *out untouched */
	ck_assert_int_eq(((unsigned char *)&p)[0], 0x5a);
}
END_TEST

START_TEST(oversized_message)
{
	size_t n = LEASE_MESSAGE_MAX + 1;
	char *msg = malloc(n + 1), err[256];
	lease_payload p;
	int rc, k;

	ck_assert_ptr_nonnull(msg);
	/* A well-formed message padded with an unknown field past 16 KiB. */
	k = snprintf(msg, n + 1, "deploy-prod: acquire claimed by a on b\n\n%.*s,\"pad\":\"",
	             (int)strlen(canonical) - 1, canonical);
	memset(msg + k, 'p', n - (size_t)k - 2);
	memcpy(msg + n - 2, "\"}", 3);
	ck_assert_uint_eq(strlen(msg), n);
	rc = lease_message_parse(&p, NULL, msg, n, "deploy-prod", err, sizeof(err));
	ck_assert_int_eq(rc, LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "message: larger than 16384 bytes"));
	/* The payload alone is bounded too. */
	rc = lease_payload_parse(&p, msg, n, err, sizeof(err));
	ck_assert_int_eq(rc, LEASE_EPAYLOAD);
	ck_assert_ptr_nonnull(strstr(err, "payload: larger than 16384 bytes"));
	/* Exactly 16 KiB is fine. */
	memcpy(msg + n - 3, "\"}", 3);
	rc = lease_message_parse(&p, NULL, msg, n - 1, "deploy-prod", err, sizeof(err));
	ck_assert_msg(rc == 0, "rc=%d err=%s", rc, err);
	free(msg);
}
END_TEST

START_TEST(null_and_small_buffers)
{
	char err[8];
	lease_payload p;

	ck_assert_int_eq(lease_payload_parse(&p, NULL, 0, NULL, 0), LEASE_EPAYLOAD);
	ck_assert_int_eq(lease_payload_parse(&p, "x", 1, err, sizeof(err)), LEASE_EPAYLOAD);
	ck_assert_uint_eq(strlen(err), sizeof(err) - 1); /* truncated, terminated */
	ck_assert_int_eq(lease_message_parse(&p, NULL, NULL, 0, NULL, NULL, 0), LEASE_EPAYLOAD);
	ck_assert_int_eq(lease_payload_emit(NULL, &p), LEASE_EINVALID);
}
END_TEST

/* Deterministic mutations of a valid message: every prefix, and random byte
 * flips/insertions (8000). Never a crash (ASan/UBSan under SANITIZE=1); the only
 * answers are success, malformed or unsupported version. */
START_TEST(mutations_never_crash)
{
	char msg[1024], buf[1100], err[256];
	uint32_t seed = 12345;
	size_t n, i, k;
	lease_payload p;
	lease_op op;
	int rc, ok = 0;

	snprintf(msg, sizeof(msg), "deploy-prod: heartbeat working by alice on runner-1\n\n%s\n",
	         canonical);
	n = strlen(msg);
	for (i = 0; i <= n; i++) {
		rc = lease_message_parse(&p, &op, msg, i, "deploy-prod", err, sizeof(err));
		ck_assert(rc == 0 || rc == LEASE_EPAYLOAD);
		ok += rc == 0;
	}
	ck_assert_int_ge(ok, 1); /* the full message (and the one without its newline) */
	for (i = 0; i < 8000; i++) {
		size_t len = n;
		memcpy(buf, msg, n);
		for (k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			unsigned char v = (unsigned char)(seed >> 16);
			static const char pick[] = "{}[]\":,\\\n0a.-";
			if (seed & 0x100)
				v = (unsigned char)pick[v % (sizeof(pick) - 1)];
			if ((seed & 0x200) && len < sizeof(buf) - 1) {
				memmove(buf + at + 1, buf + at, len - at);
				len++;
			}
			buf[at] = (char)v;
		}
		rc = lease_message_parse(&p, &op, buf, len, "deploy-prod", err, sizeof(err));
		ck_assert_msg(rc == 0 || rc == LEASE_EPAYLOAD || rc == LEASE_EVERSION, "rc %d", rc);
		if (rc < 0)
			ck_assert_uint_gt(strlen(err), 0);
		else
			ck_assert_int_eq(lease_payload_validate(&p, NULL, 0) == 0 ||
			                         p.phase == LEASE_PHASE_RELEASED ||
			                         p.version_minor != 1,
			                 1);
	}
}
END_TEST

/* ------------------------------------------------------------ time */

START_TEST(time_format_parse)
{
	static const textcase ok[] = {
	        {"1970-01-01T00:00:00Z", 0},
	        {"2026-11-30T07:00:00Z", 1796022000},
	        {"2000-02-29T12:34:56Z", 951827696},
	        {"2024-02-29T23:59:59Z", 1709251199},
	        {"1969-12-31T23:59:59Z", -1},
	        {"9999-12-31T23:59:59Z", 253402300799LL},
	        {"2038-01-19T03:14:08Z", 2147483648LL},
	};
	static const char *const bad[] = {
	        "1900-02-29T00:00:00Z",
	        "2026-04-31T00:00:00Z",
	        "2026-00-10T00:00:00Z",
	        "2026-01-00T00:00:00Z",
	        "2026-01-01T00:60:00Z",
	        "2026-1-01T00:00:00Z",
	        "2026-01-01T00:00:00",
	        "2026-01-01T00:00:00ZZ",
	        "+026-01-01T00:00:00Z",
	        "2026-01-01t00:00:00Z",
	        "",
	        "2026-01-01T0a:00:00Z",
	};
	char buf[LEASE_TIME_STRSZ + 1];
	int64_t t;
	size_t i;

	for (i = 0; i < TEXTCASES(ok); i++) {
		ck_assert_msg(lease_time_parse(&t, ok[i].text) == 0, "%s", ok[i].text);
		ck_assert_msg(t == ok[i].want, "%s -> %lld", ok[i].text, (long long)t);
		lease_time_format(buf, ok[i].want);
		ck_assert_str_eq(buf, ok[i].text);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(lease_time_parse(&t, bad[i]) == LEASE_EINVALID, "%s", bad[i]);
	ck_assert_int_eq(lease_time_parse(&t, NULL), LEASE_EINVALID);
	/* every day of a leap cycle round-trips */
	for (t = 946684800; t < 946684800 + 4 * 366 * 86400LL; t += 86400 + 3601) {
		int64_t back;
		lease_time_format(buf, t);
		ck_assert_int_eq(lease_time_parse(&back, buf), 0);
		ck_assert_int_eq(back, t);
	}
	lease_time_format(buf, INT64_MAX);
	ck_assert_str_eq(buf, "9999-12-31T23:59:59Z");
}
END_TEST

/* ------------------------------------------------------------ names */

struct name_case {
	const char *s;
	const char *needle;
};

static const struct name_case hostile_names[] = {
        {"../heads/main", "name: must not contain '/'"},
        {"refs/heads/x", "name: must not contain '/'"},
        {"a/b", "name: must not contain '/'"},
        {"x/", "name: must not contain '/'"},
        {"x.lock", "name: must not end with '.lock'"},
        {"a.b.lock", "name: must not end with '.lock'"},
        {"x.", "name: must not end with '.'"},
        {".x", "name: must start with a letter or digit"},
        {"-x", "name: must start with a letter or digit"},
        {"_x", "name: must start with a letter or digit"},
        {"..", "name: must start with a letter or digit"},
        {"a..b", "name: must not contain '..'"},
        {"a...", "name: must not contain '..'"},
        {"a\nb", "name: byte 0x0a at offset 1 is not allowed"},
        {"a\tb", "name: byte 0x09"},
        {"\x7f", "name: byte 0x7f"},
        {"a@{1}", "name: byte 0x40 at offset 1"},
        {"@", "name: byte 0x40"},
        {"a b", "name: byte 0x20"},
        {" a", "name: byte 0x20 at offset 0"},
        {"caf\xc3\xa9", "name: byte 0xc3 at offset 3"},
        {"\xef\xbc\x8f", "name: byte 0xef"}, /* fullwidth solidus */
        {"a~1", "name: byte 0x7e"},
        {"a^b", "name: byte 0x5e"},
        {"a:b", "name: byte 0x3a"},
        {"a?b", "name: byte 0x3f"},
        {"a*b", "name: byte 0x2a"},
        {"a[b", "name: byte 0x5b"},
        {"a\\b", "name: byte 0x5c"},
        {"HEAD~", "name: byte 0x7e"},
        {"", "name: must not be empty"},
        {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xx"
         "xxxxxxxxxx",
         "name: must be at most 100 bytes (got 101)"},
};

static const struct name_case hostile_namespaces[] = {
        {"heads", "namespace: 'heads' is reserved"},
        {"tags", "is reserved"},
        {"remotes", "is reserved"},
        {"notes", "is reserved"},
        {"pull", "is reserved"},
        {"gh", "is reserved"},
        {"stash", "is reserved"},
        {"replace", "is reserved"},
        {"bisect", "is reserved"},
        {"original", "is reserved"},
        {"prefetch", "is reserved"},
        {"worktree", "is reserved"},
        {"rewritten", "is reserved"},
        {"for", "is reserved"},
        {"changes", "is reserved"},
        {"meta", "is reserved"},
        {"users", "is reserved"},
        {"merge-requests", "is reserved"},
        {"keep-around", "is reserved"},
        {"pipelines", "is reserved"},
        {"environments", "is reserved"},
        {"x-archive", "namespace: must not end with '-archive'"},
        {"leases-archive", "must not end with '-archive'"},
        {"x-queue", "namespace: must not end with '-queue'"},
        {"Leases", "namespace: must start with a lowercase letter"},
        {"leAses", "namespace: byte 0x41 at offset 2"},
        {"1leases", "must start with a lowercase letter"},
        {"-x", "must start with a lowercase letter"},
        {"a_b", "namespace: byte 0x5f"},
        {"a.b", "namespace: byte 0x2e"},
        {"a/b", "namespace: byte 0x2f"},
        {"../heads", "must start with a lowercase letter"},
        {"a b", "namespace: byte 0x20"},
        {"", "namespace: must not be empty"},
        {"abcdefghijklmnopqrstuvwxyzabcdefg", "namespace: must be at most 32 bytes (got 33)"},
};

START_TEST(hostile_name_rejected)
{
	const struct name_case *c = &hostile_names[_i];
	char err[256] = "", ref[256] = "untouched";

	ck_assert_int_eq(lease_name_validate(c->s, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_msg(strstr(err, c->needle) != NULL, "name #%d: err '%s' lacks '%s'", _i, err,
	              c->needle);
	ck_assert_int_eq(lease_refname(ref, sizeof(ref), "leases", c->s, err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_str_eq(ref, "untouched");
	ck_assert_int_eq(lease_name_validate(c->s, NULL, 0), LEASE_EINVALID);
}
END_TEST

START_TEST(hostile_namespace_rejected)
{
	const struct name_case *c = &hostile_namespaces[_i];
	char err[256] = "", ref[256] = "untouched";

	ck_assert_int_eq(lease_namespace_validate(c->s, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_msg(strstr(err, c->needle) != NULL, "ns #%d: err '%s' lacks '%s'", _i, err,
	              c->needle);
	ck_assert_int_eq(lease_refname(ref, sizeof(ref), c->s, "ok", err, sizeof(err)),
	                 LEASE_EINVALID);
	ck_assert_str_eq(ref, "untouched");
}
END_TEST

START_TEST(valid_names_accepted)
{
	static const char *const names[] = {
	        "a",       "a.b-c_d", "A1",
	        "0",       "x.lock1", "lock",
	        "a.b.c",   "a-",      "a_",
	        "x.locks", "Z9.z",    "a-.b",
	        "a._-b",   "1.2.3",   "abc.LOCK" /* only the exact ".lock" suffix is git's */,
	};
	static const char *const namespaces[] = {
	        "leases",
	        "a",
	        "x-1",
	        "archive",
	        "leases-archived",
	        "headsx",
	        "abcdefghijklmnopqrstuvwxyzabcdef",
	        "a-",
	        "tag",
	        "environment",
	};
	char name100[LEASE_NAME_MAX + 1], err[256], ref[256];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int rc = lease_name_validate(names[i], err, sizeof(err));
		ck_assert_msg(rc == 0, "%s: %s", names[i], err);
	}
	for (i = 0; i < sizeof(namespaces) / sizeof(namespaces[0]); i++) {
		int rc = lease_namespace_validate(namespaces[i], err, sizeof(err));
		ck_assert_msg(rc == 0, "%s: %s", namespaces[i], err);
	}
	memset(name100, 'n', LEASE_NAME_MAX);
	name100[LEASE_NAME_MAX] = '\0';
	ck_assert_int_eq(lease_name_validate(name100, err, sizeof(err)), 0);

	ck_assert_int_eq(lease_refname(ref, sizeof(ref), "leases", "a.b-c_d", err, sizeof(err)), 0);
	ck_assert_str_eq(ref, "refs/leases/a.b-c_d");
	ck_assert_int_eq(lease_refname(ref, sizeof(ref), NULL, "x", err, sizeof(err)), 0);
	ck_assert_str_eq(ref, "refs/leases/x");
	ck_assert_int_eq(lease_refname(ref, sizeof(ref), "deploy", name100, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(ref), 5 + 6 + 1 + LEASE_NAME_MAX);
	/* too small a buffer: LEASE_ENOMEM, never a truncated ref name */
	ck_assert_int_eq(lease_refname(ref, 12, "leases", "abc", err, sizeof(err)), LEASE_ENOMEM);
	ck_assert_str_eq(ref, "");
}
END_TEST

/* Slot names (protocol.md "Slots", issue 27): NAME@iofN is never a plain
 * name, splits back into (NAME, i, N), and only its canonical form is one. */
START_TEST(slot_names)
{
	static const char *const bad[] = {
	        "db@",      "db@1",     "db@1of",   "db@0of3",  "db@4of3",   "db@01of3",
	        "db@1of03", "db@1of65", "db@1of3x", "db@@1of3", "@1of3",     "d/b@1of3",
	        "db.@1of3", "db@1of3@", "db@-1of3", "db@1 of3", "db@{1}of3", "db@1of1000",
	};
	char out[LEASE_NAME_MAX + 1], base[LEASE_NAME_MAX + 1], err[256], ref[256];
	char long_base[LEASE_NAME_MAX + 1];
	int64_t i, n;
	size_t k;

	ck_assert_int_eq(lease_slot_name(out, "db", 2, 3, err, sizeof(err)), 0);
	ck_assert_str_eq(out, "db@2of3");
	ck_assert_int_eq(lease_name_validate(out, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_int_eq(lease_ref_name_validate(out, err, sizeof(err)), 0);
	ck_assert_int_eq(lease_slot_name_parse(out, base, &i, &n, err, sizeof(err)), 1);
	ck_assert_str_eq(base, "db");
	ck_assert_int_eq(i, 2);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(lease_refname(ref, sizeof(ref), "leases", out, err, sizeof(err)), 0);
	ck_assert_str_eq(ref, "refs/leases/db@2of3");
	ck_assert_int_eq(lease_slot_name(out, "a.b", 64, 64, err, sizeof(err)), 0);
	ck_assert_str_eq(out, "a.b@64of64");
	/* a plain name is no slot name */
	ck_assert_int_eq(lease_slot_name_parse("db", base, &i, &n, err, sizeof(err)), 0);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		ck_assert_msg(lease_ref_name_validate(bad[k], err, sizeof(err)) == LEASE_EINVALID,
		              "%s accepted", bad[k]);
		ck_assert_msg(lease_slot_name_parse(bad[k], base, &i, &n, err, sizeof(err)) < 0,
		              "%s parsed", bad[k]);
	}
	ck_assert_int_eq(lease_slot_name(out, "db", 0, 3, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_int_eq(lease_slot_name(out, "db", 4, 3, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_int_eq(lease_slot_name(out, "db", 1, 65, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(err, "slots: 65 is not in 1..64"));
	ck_assert_int_eq(lease_slot_name(out, "d@b", 1, 3, err, sizeof(err)), LEASE_EINVALID);
	/* the whole slot name fits LEASE_NAME_MAX bytes, else the error says so */
	memset(long_base, 'n', 95);
	long_base[95] = '\0';
	ck_assert_int_eq(lease_slot_name(out, long_base, 9, 9, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(out), LEASE_NAME_MAX);
	ck_assert_int_eq(lease_slot_name(out, long_base, 10, 10, err, sizeof(err)), LEASE_EINVALID);
	ck_assert_ptr_nonnull(strstr(err, "too long for 10 slots"));
}
END_TEST

START_TEST(phase_names)
{
	/* a name and its phase, or -1: refused */
	static const textcase t[] = {
	        {"review", LEASE_PHASE_REVIEW},
	        {"released", LEASE_PHASE_RELEASED},
	        {"none", -1},
	        {"Working", -1},
	        {"", -1},
	};
	lease_phase ph = LEASE_PHASE_NONE;
	size_t i;

	for (i = 0; i < TEXTCASES(t); i++) {
		if (t[i].want < 0) {
			ck_assert_int_eq(lease_phase_parse(&ph, t[i].text), LEASE_EINVALID);
			continue;
		}
		ck_assert_int_eq(lease_phase_parse(&ph, t[i].text), 0);
		ck_assert_int_eq(ph, t[i].want);
	}
	ck_assert_int_eq(lease_phase_parse(&ph, NULL), LEASE_EINVALID);
	ck_assert_str_eq(lease_phase_name(LEASE_PHASE_CLAIMED), "claimed");
	ck_assert_str_eq(lease_phase_name(LEASE_PHASE_NONE), "none");
	ck_assert_str_eq(lease_phase_name((lease_phase)17), "none");
}
END_TEST

/* The token's form, 32 lowercase hex (protocol.md §2), one spelling: the
 * payload check, the CLI's --lease-token check and the heartbeat service's
 * options all use lease_token_validate(). */
START_TEST(token_form)
{
	static const char *const bad[] = {NULL,
	                                  "",
	                                  "0123456789abcdef0123456789abcde",
	                                  "0123456789abcdef0123456789abcdef0",
	                                  "0123456789ABCDEF0123456789abcdef",
	                                  "0123456789abcdef0123456789abcdeg",
	                                  "0123456789abcdef 123456789abcdef"};
	char err[128];
	size_t i;

	ck_assert_int_eq(lease_token_validate("0123456789abcdef0123456789abcdef", err, sizeof(err)),
	                 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(lease_token_validate(bad[i], err, sizeof(err)), LEASE_EINVALID);
		ck_assert_ptr_nonnull(strstr(err, "32 lowercase hex"));
	}
	ck_assert_int_eq(lease_token_validate(bad[4], NULL, 0), LEASE_EINVALID);
}
END_TEST

/* The archive ref's name (protocol.md §1) and the version stamp, built and
 * checked in one place (schemas.c): the name prune writes is the one the
 * primitives accept and archive.c lists. */
START_TEST(archive_name_and_stamp)
{
	lease_payload p;
	char ref[512], pfx[300];

	memset(&p, 0, sizeof(p));
	p.expires_at = 1700000000;
	memcpy(p.lease_token, "0123456789abcdef0123456789abcdef", LEASE_TOKEN_HEXSZ + 1);
	ck_assert_int_eq(lease__archive_refname(ref, sizeof(ref), "leases", "db", &p), 0);
	ck_assert_str_eq(ref, "refs/leases-archive/db/20231114T221320Z-01234567");
	ck_assert_int_eq(lease__archive_prefix(pfx, sizeof(pfx), "leases", "db"), 0);
	ck_assert_str_eq(pfx, "refs/leases-archive/db/");
	ck_assert(strncmp(ref, pfx, strlen(pfx)) == 0);
	ck_assert(lease__archive_tail_valid(ref + strlen(pfx)));
	ck_assert(!lease__archive_tail_valid("20231114T221320Z-0123456"));
	ck_assert(!lease__archive_tail_valid("2023111xT221320Z-01234567"));
	ck_assert(!lease__archive_tail_valid("20231114T221320Z-0123456g"));
	ck_assert(!lease__archive_tail_valid("20231114X221320Z-01234567"));
	ck_assert_int_eq(lease__archive_refname(ref, 20, "leases", "db", &p), LEASE_EINVALID);
	ck_assert_int_eq(lease__archive_prefix(pfx, 10, "leases", "db"), LEASE_EINVALID);
	lease__payload_stamp(&p);
	ck_assert_str_eq(p.sdlc_version, SDLC_VERSION);
	ck_assert_int_eq(p.version_major, SDLC_VERSION_MAJOR);
	ck_assert_int_eq(p.version_minor, SDLC_VERSION_MINOR);
	ck_assert_int_eq(p.version_patch, SDLC_VERSION_PATCH);
	ck_assert_int_eq(lease_payload_writable(&p, NULL, 0), 0);
}
END_TEST

/* The lenient reader (protocol.md §5 break, §7), one spelling: the fencing
 * generation and whether the lease shows free, whatever the payload's
 * version or name (moved from test_policy.c's rules with the reader). */
START_TEST(lenient_reader)
{
	lease_lenient l;

	lease__lenient_read(&l, "{\"transitions\" : 5}");
	ck_assert_int_eq(l.transitions, 5);
	lease__lenient_read(&l, "\"transitions\"x \"transitions\":\"7\",\"transitions\":8");
	ck_assert_int_eq(l.transitions, 8);
	lease__lenient_read(&l, "{\"phase\":\"working\"}");
	ck_assert_int_eq(l.transitions, -1);
	ck_assert(!l.released && !l.has_expires);
	lease__lenient_read(&l, NULL);
	ck_assert_int_eq(l.transitions, -1);
	ck_assert(!l.released && !l.has_expires);
	lease__lenient_read(&l, "x: acquire\n\n{\"sdlc_version\":\"9.0.0\",\"phase\":\"released\","
	                        "\"transitions\":3}");
	ck_assert(l.released);
	ck_assert_int_eq(l.transitions, 3);
	lease__lenient_read(&l, "{\"expires_at\":\"2023-11-14T22:13:20Z\",\"phase\":\"claimed\"}");
	ck_assert(!l.released && l.has_expires);
	ck_assert_int_eq(l.expires_at, 1700000000);
	lease__lenient_read(&l, "{\"expires_at\":\"2023-11-14T22:13\"}");
	ck_assert(!l.has_expires);
	lease__lenient_read(&l, "{\"expires_at\":\"not-a-time-at-all-xx\"}");
	ck_assert(!l.has_expires);
}
END_TEST

Suite *schemas_suite(void)
{
	Suite *s = suite_create("schemas");

	/* the mutation loop under ASan on a loaded machine */
	suitefix_add(s, "payload", 20, NULL, ONE(prebump_payload_validates),
	             ONE(emit_is_canonical_and_round_trips), ONE(message_summary_ops),
	             ONE(newer_minor_parses_not_writable), ONE(heartbeat_fields_1_2),
	             ONE(queue_fields_1_2), ONE(set_field_1_2), ONE(released_ttl_rules),
	             ONE(validate_struct_rules), LOOP(malformed_table, 0, (int)NBAD),
	             ONE(oversized_message), ONE(null_and_small_buffers),
	             ONE(mutations_never_crash), ONE(time_format_parse), NULL);
	suitefix_add(s, "names", 0, NULL,
	             LOOP(hostile_name_rejected, 0,
	                  (int)(sizeof(hostile_names) / sizeof(hostile_names[0]))),
	             LOOP(hostile_namespace_rejected, 0,
	                  (int)(sizeof(hostile_namespaces) / sizeof(hostile_namespaces[0]))),
	             ONE(valid_names_accepted), ONE(slot_names), ONE(phase_names), ONE(token_form),
	             ONE(archive_name_and_stamp), ONE(lenient_reader), NULL);
	return s;
}
