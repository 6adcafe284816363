/* The GitHub transport's network rules of issue 24 against the fake GitHub
 * server (tests/support/fakegh.c): one origin for the token (GraphQL derived
 * from the API URL), deadlines that hold for the whole operation, pacing of
 * every content-creating request of a burst, the classification of a
 * proxy's answers (a non-JSON 200, 407) and of GitHub's older secondary-limit
 * wording, a failed write's reason, and the token file read again on a 401.
 * Time runs on a virtual clock (the store options' clock, tests/support/
 * vclock.h); a test responder forwards each request to the fake
 * (lease__http_set_responder) where a test counts or fails requests: no test
 * sleeps for the seconds it measures. TLS trust is tested on the CLI
 * (t_github_tls.sh). */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"
#include "store/backend.h"
#include "store/handle.h"
#include "store/http.h"
#include "support/fakegh.h"
#include "support/ghstore.h"
#include "support/logcap.h"
#include "support/suitefix.h"
#include "support/vclock.h"

#define CANARY "ghp_CANARYnet0123456789abcdefCANARY"

static fakegh *fk;
static lease_store *st;
static vclock vc;               /* the time of every store of a test */
static const char *graphql_url; /* the stores' GraphQL URL (NULL = derived) */
static const char *token_file;  /* the stores' token file (NULL = none) */

static int open_gh(lease_store **out, const char *token, int timeout_s)
{
	lease_store_options o;

	ghstore_options(&o, fakegh_url(fk), token, timeout_s, 1000, &vc, logcap);
	o.github_graphql_url = graphql_url;
	o.github_token_file = token_file;
	return ghstore_open(out, &o);
}

static void setup(void)
{
	fakegh_options o;

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(fakegh_start(&fk, &o), 0);
	vclock_init(&vc, 0);
	graphql_url = token_file = NULL;
	logcap_reset();
	ck_assert_int_eq(open_gh(&st, CANARY, 10), 0);
}

static void teardown(void)
{
	ghstore_stop(&st, &fk);
	graphql_url = token_file = NULL;
}

static lease_op_options who(const char *owner)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = owner;
	o.host = "runner-1";
	o.ttl_seconds = 300;
	return o;
}

/* ---- a responder forwarding to the fake, on the virtual clock ------------------- */

struct fwd {
	lease_http *h;
	int fail_first;      /* answer each new request 502 this many times first */
	char key[512];       /* the request being failed */
	int failed;          /* times it was */
	int64_t writes[256]; /* virtual ms of each content-creating request */
	size_t nwrites;
	char *raw;
	size_t raw_cap;
};

static int is_write(const char *method, const char *url, const char *body)
{
	return strcmp(method, "POST") == 0 &&
	       (strstr(url, "/git/commits") || strstr(url, "/git/refs") ||
	        (body && strstr(body, "mutation")));
}

static int fwd_respond(void *payload, const char *method, const char *url, const char *body,
                       const char **raw, size_t *raw_len)
{
	static const char bad[] = "HTTP/1.1 502 Bad Gateway\r\n\r\n{\"message\":\"Server Error\"}";
	struct fwd *f = payload;
	lease_http_response r;
	char key[512], date[64];
	time_t t;
	struct tm tm;
	size_t need;

	snprintf(key, sizeof(key), "%s %s %.300s", method, url, body ? body : "");
	if (f->fail_first) {
		if (strcmp(key, f->key) != 0) {
			snprintf(f->key, sizeof(f->key), "%s", key);
			f->failed = 0;
		}
		if (f->failed < f->fail_first) {
			f->failed++;
			*raw = bad;
			*raw_len = sizeof(bad) - 1;
			return 0;
		}
	}
	if (is_write(method, url, body) && f->nwrites < 256)
		f->writes[f->nwrites++] = vclock_mono_ms(&vc);
	ck_assert_int_eq(lease__http_request(f->h, &r, method, url, body, 10000), 0);
	if (r.result != LEASE_HTTP_OK) {
		lease__http_response_clear(&r);
		return 2;
	}
	t = r.date > 0 ? (time_t)r.date : time(NULL);
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	need = r.body_len + 2048;
	if (need > f->raw_cap) {
		f->raw = realloc(f->raw, need);
		f->raw_cap = need;
	}
	*raw_len = (size_t)snprintf(
	        f->raw, f->raw_cap, "HTTP/1.1 %ld X\r\nDate: %s\r\n%s%s%s%s%s%s\r\n%s", r.status,
	        date, r.etag[0] ? "ETag: " : "", r.etag, r.etag[0] ? "\r\n" : "",
	        r.next_url[0] ? "Link: <" : "", r.next_url,
	        r.next_url[0] ? ">; rel=\"next\"\r\n" : "", r.body ? r.body : "");
	*raw = f->raw;
	lease__http_response_clear(&r);
	return 0;
}

static void fwd_on(struct fwd *f)
{
	char err[256];

	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(lease__http_new(&f->h, CANARY, err, sizeof(err)), 0);
	lease__http_set_responder(lease__github_http(st->t), fwd_respond, f);
}

static void fwd_off(struct fwd *f)
{
	lease__http_set_responder(lease__github_http(st->t), NULL, NULL);
	lease__http_free(f->h);
	free(f->raw);
}

/* ---- item 2: one origin for the token --------------------------------------------- */

/* A runner's GITHUB_GRAPHQL_URL on another origin than GITHUB_API_URL is
 * ignored with a warning: no request reaches it; one on the API's own origin
 * is used. */
START_TEST(graphql_on_another_origin_never_receives_the_token)
{
	fakegh *other = NULL;
	fakegh_options o;
	lease_store *s2 = NULL;
	lease_result r;
	lease_op_options op = who("alice");
	char url[160];

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(fakegh_start(&other, &o), 0);
	snprintf(url, sizeof(url), "%s/graphql", fakegh_url(other));
	graphql_url = url;
	ck_assert_int_eq(open_gh(&s2, CANARY, 10), 0);
	ck_assert_ptr_nonnull(strstr(logcap_buf, "GITHUB_GRAPHQL_URL"));
	ck_assert_ptr_nonnull(strstr(logcap_buf, "ignored"));
	ck_assert_msg(lease_acquire(&r, s2, "origin", &op) == 0, "%s", r.message);
	ck_assert_uint_eq(fakegh_count(other, FAKEGH_ANY), 0);
	ck_assert_uint_gt(fakegh_count(fk, FAKEGH_GQL_QUERY), 0);
	lease_store_free(s2);
	/* the API's own origin: used as given */
	snprintf(url, sizeof(url), "%s/graphql", fakegh_url(fk));
	graphql_url = url;
	logcap_reset();
	ck_assert_int_eq(open_gh(&s2, CANARY, 10), 0);
	ck_assert_ptr_null(strstr(logcap_buf, "ignored"));
	ck_assert_int_eq(lease_status(&r, s2, "origin"), 0);
	lease_store_free(s2);
	graphql_url = NULL;
	fakegh_stop(other);
}
END_TEST

/* ---- item 3: --timeout bounds the whole operation ----------------------------------- */

/* Every request of an acquire needs three retries (about 3.5 s of backoff
 * each): with a 10 s timeout the operation ends within 11 s of virtual
 * time, not 10 s per request. */
START_TEST(timeout_bounds_the_whole_operation)
{
	struct fwd f;
	lease_result r;
	lease_op_options op = who("alice");
	int64_t t0, took;
	int rc;

	fwd_on(&f);
	f.fail_first = 3;
	t0 = vclock_mono_ms(&vc);
	rc = lease_acquire(&r, st, "slow", &op);
	took = vclock_mono_ms(&vc) - t0;
	fwd_off(&f);
	ck_assert_msg(took <= 11000, "the operation took %lld ms (rc %d: %s)", (long long)took, rc,
	              r.message);
	ck_assert_int_eq(rc, LEASE_ENET);
	ck_assert_msg(strstr(r.message, "timeout") || strstr(r.message, "unreachable"),
	              "took %lld rc %d: %s", (long long)took, rc, r.message);
}
END_TEST

/* ---- item 4: pacing ----------------------------------------------------------------- */

/* A 5-lease prune is a burst: every content-creating request comes >= 1 s
 * after the one before (the two of one lease's operation too), so the mean
 * spacing is >= 0.9 s and no 60 s window holds more than 80; a lone
 * operation is not paced. */
START_TEST(burst_spaces_every_write)
{
	lease_reconcile_options ro = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report rep;
	struct fwd f;
	lease_result r;
	lease_op_options op = who("alice");
	char token[LEASE_TOKEN_HEXSZ + 1];
	size_t i, j, k;
	int64_t t0;

	fwd_on(&f);
	for (i = 0; i < 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "prune%zu", i);
		op.lease_token = NULL;
		ck_assert_msg(lease_acquire(&r, st, name, &op) == 0, "%s", r.message);
		memcpy(token, r.payload.lease_token, sizeof(token));
		op.lease_token = token;
		t0 = vclock_mono_ms(&vc);
		ck_assert_msg(lease_release(&r, st, name, &op) == 0, "%s", r.message);
		ck_assert_int_lt(vclock_mono_ms(&vc) - t0, 900); /* lone: not paced */
	}
	f.nwrites = 0;
	ro.prune_days = 0;
	memset(&rep, 0, sizeof(rep));
	ck_assert_int_eq(lease_reconcile(&rep, st, &ro), 0);
	ck_assert_uint_eq(rep.pruned, 5);
	ck_assert_uint_ge(f.nwrites, 10);
	for (i = 1; i < f.nwrites; i++)
		ck_assert_msg(f.writes[i] - f.writes[i - 1] >= 1000,
		              "write %zu only %lld ms after the one before", i,
		              (long long)(f.writes[i] - f.writes[i - 1]));
	ck_assert_int_ge((f.writes[f.nwrites - 1] - f.writes[0]) / (int64_t)(f.nwrites - 1), 900);
	for (i = 0; i < f.nwrites; i++) {
		for (j = i, k = 0; j < f.nwrites && f.writes[j] - f.writes[i] < 60000; j++)
			k++;
		ck_assert_uint_le(k, 80);
	}
	ck_assert_int_ge(rep.paced_ms, (int64_t)(f.nwrites - 2) * 500);
	lease_reconcile_report_free(&rep);
	fwd_off(&f);
}
END_TEST

/* ---- item 5: classification --------------------------------------------------------- */

/* A proxy's HTML page in a 200: a read is retried; a release whose
 * updateRefs landed behind the page is recognised by re-reading (0, not 70). */
START_TEST(non_json_200_is_temporary_and_a_landed_write_is_recognised)
{
	lease_result r;
	lease_op_options op = who("alice");
	char token[LEASE_TOKEN_HEXSZ + 1];

	ck_assert_msg(lease_acquire(&r, st, "proxied", &op) == 0, "%s", r.message);
	memcpy(token, r.payload.lease_token, sizeof(token));
	op.lease_token = token;
	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_HTML_200, 1, 0);
	ck_assert_msg(lease_status(&r, st, "proxied") == 0, "%s", r.message);
	fakegh_fault(fk, FAKEGH_GQL_MUTATION, FAKEGH_FAULT_HTML_200, 1, 0);
	ck_assert_msg(lease_release(&r, st, "proxied", &op) == 0, "%s", r.message);
	ck_assert_int_eq(r.status, LEASE_STATUS_RELEASED);
}
END_TEST

/* 407 from a proxy: 78 at once (one request); GitHub's older "abuse
 * detection mechanism" wording: a rate limit (75), never 77. */
START_TEST(proxy_407_is_config_and_abuse_wording_is_a_rate_limit)
{
	lease_oid a;
	unsigned before = fakegh_count(fk, FAKEGH_ANY);

	fakegh_fault(fk, FAKEGH_COMMIT_POST, FAKEGH_FAULT_407, 100, 0);
	ck_assert_int_eq(lease_write_commit(&a, st, NULL, "x: acquire claimed\n\n{}"),
	                 LEASE_ECONFIG);
	ck_assert_uint_eq(fakegh_count(fk, FAKEGH_ANY) - before, 1);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "407"));
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "HTTPS_PROXY"));
	fakegh_clear_faults(fk);
	fakegh_fault(fk, FAKEGH_COMMIT_POST, FAKEGH_FAULT_403_ABUSE, 100, 0);
	ck_assert_int_eq(lease_write_commit(&a, st, NULL, "x: acquire claimed\n\n{}"),
	                 LEASE_ERATELIMIT);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "abuse"));
}
END_TEST

/* A create refused 422 on every try: the failure names its cause. */
START_TEST(persistent_422_names_its_cause)
{
	lease_result r;
	lease_op_options op = who("alice");

	struct fwd f;

	lease_store_free(st);
	ck_assert_int_eq(open_gh(&st, CANARY, 120), 0);
	fwd_on(&f); /* the create's retries on the virtual clock */
	fakegh_fault(fk, FAKEGH_REF_CREATE, FAKEGH_FAULT_422_UPDATE_FAILED, 1000, 0);
	ck_assert_int_lt(lease_acquire(&r, st, "refused", &op), 0);
	fwd_off(&f);
	ck_assert_msg(strstr(r.message, "Reference update failed") != NULL, "%s", r.message);
	ck_assert_msg(!strstr(r.message, "attempts: \n") && r.message[strlen(r.message) - 1] != ' ',
	              "%s", r.message);
}
END_TEST

/* issue 23: a failed read states its cause, with no "(expected -, observed
 * absent; outcome known)" — nothing was compared. */
START_TEST(read_errors_state_their_cause_only)
{
	lease_result r;

	fakegh_fault(fk, FAKEGH_GQL_QUERY, FAKEGH_FAULT_401, 1, 0);
	ck_assert_int_eq(lease_status(&r, st, "x"), LEASE_EAUTH);
	ck_assert_msg(strstr(r.message, "401") && !strstr(r.message, "expected") &&
	                      !strstr(r.message, "observed") && !strstr(r.message, "outcome"),
	              "%s", r.message);
	ck_assert_msg(!strstr(lease_store_last_error(st), "expected -"), "%s",
	              lease_store_last_error(st));
}
END_TEST

/* ---- item 6: token rotation ----------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The token file is read again on a 401: a rotated token (a GitHub App's
 * hourly installation token) is picked up; an unchanged file gives 77. */
START_TEST(token_file_read_again_on_401)
{
	lease_store *s2 = NULL;
	lease_result r;
	lease_op_options op = who("alice");
	char path[256];
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/tok-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	fakegh_set_token(fk, "ghs_first0000000000000000000000000000");
	write_file(path, "ghs_first0000000000000000000000000000\n");
	token_file = path;
	ck_assert_int_eq(open_gh(&s2, NULL, 10), 0);
	ck_assert_msg(lease_acquire(&r, s2, "rot", &op) == 0, "%s", r.message);
	/* an hour later GitHub takes only the new installation token */
	fakegh_set_token(fk, "ghs_second000000000000000000000000000");
	write_file(path, "ghs_second000000000000000000000000000\n");
	ck_assert_msg(lease_acquire(&r, s2, "rot2", &op) == 0, "%s", r.message);
	ck_assert_ptr_nonnull(strstr(logcap_buf, "holds another one now"));
	/* the file not rotated in time: the 401 stands (77) */
	fakegh_set_token(fk, "ghs_third0000000000000000000000000000");
	ck_assert_int_eq(lease_acquire(&r, s2, "rot3", &op), LEASE_EAUTH);
	ck_assert(!strstr(logcap_buf, "ghs_"));
	ck_assert(!strstr(r.message, "ghs_"));
	lease_store_free(s2);
	unlink(path);
}
END_TEST

Suite *github_net_suite(void)
{
	const suitefix_fixture fx = {setup, teardown, 0};

	return suitefix_suite(
	        "github_net", "net", 60, &fx,
	        ONE(graphql_on_another_origin_never_receives_the_token),
	        ONE(timeout_bounds_the_whole_operation), ONE(burst_spaces_every_write),
	        ONE(non_json_200_is_temporary_and_a_landed_write_is_recognised),
	        ONE(proxy_407_is_config_and_abuse_wording_is_a_rate_limit),
	        ONE(persistent_422_names_its_cause), ONE(read_errors_state_their_cause_only),
	        ONE(token_file_read_again_on_401), NULL);
}
