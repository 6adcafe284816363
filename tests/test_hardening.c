/* Hardening (issue 8): hostile answers from a GitHub server are refused
 * cleanly — an HTTP body over the cap, JSON nested past jansson's depth
 * limit, a pagination link to another host, absurd rate-limit headers — with
 * the transport's test responder (lib/store/http.h), no network. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reflease.h"
#include "store/backend.h"
#include "store/handle.h"
#include "store/http.h"
#include "support/suitefix.h"
#include "support/vclock.h"

typedef struct canned {
	char *answers[8]; /* raw HTTP answers, served in turn; the last repeats */
	size_t lens[8];
	int n, next, requests;
	char last_url[512];
} canned;

static int respond(void *payload, const char *method, const char *url, const char *body,
                   const char **raw, size_t *raw_len)
{
	canned *c = payload;
	int i = c->next < c->n ? c->next : c->n - 1;

	(void)method;
	(void)body;
	snprintf(c->last_url, sizeof(c->last_url), "%s", url);
	c->requests++;
	c->next++;
	*raw = c->answers[i];
	*raw_len = c->lens[i];
	return 0;
}

static void add(canned *c, const char *head, const char *body, size_t body_len)
{
	size_t hl = strlen(head);
	char *p = malloc(hl + body_len);

	ck_assert_ptr_nonnull(p);
	memcpy(p, head, hl);
	memcpy(p + hl, body, body_len);
	c->answers[c->n] = p;
	c->lens[c->n++] = hl + body_len;
}

static void canned_free(canned *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		free(c->answers[i]);
}

static vclock hard_vc;

static lease_store *gh_store(canned *c)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char err[256];

	/* retries and backoff on virtual time (the canned answers take none) */
	vclock_init(&hard_vc, 0);
	vclock_apply(&hard_vc, &o.clock, 0);
	o.github_api_url = "http://127.0.0.1:9";
	o.github_token = "t";
	o.timeout_s = 5;
	o.verify_timeout_ms = 0;
	ck_assert_int_eq(lease_store_open(&st, "github:octo/leases", &o, err, sizeof(err)), 0);
	lease__http_set_responder(lease__github_http(st->t), respond, c);
	return st;
}

#define OK200 "HTTP/1.1 200 OK\r\nDate: Mon, 30 Nov 2026 08:00:00 GMT\r\n\r\n"

/* A body over the cap (16 MiB by default) is refused, never buffered whole. */
START_TEST(oversized_body_refused)
{
	canned c;
	lease_store *st;
	lease_result r;
	size_t n = LEASE_HTTP_BODY_CAP + 4096;
	char *big = malloc(n);

	memset(&c, 0, sizeof(c));
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	add(&c, OK200, big, n);
	free(big);
	st = gh_store(&c);
	ck_assert_int_eq(lease_status(&r, st, "x"), LEASE_ENET);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "larger than"));
	ck_assert_int_ge(c.requests, 2); /* a read is retried, then given up */
	lease__http_set_responder(lease__github_http(st->t), NULL, NULL);
	lease_store_free(st);
	canned_free(&c);
}
END_TEST

/* JSON nested far past jansson's depth limit: an error, not a crash. */
START_TEST(deeply_nested_json_refused)
{
	canned c;
	lease_store *st;
	lease_result r;
	size_t depth = 200000, i;
	char *deep = malloc(2 * depth);
	int rc;

	memset(&c, 0, sizeof(c));
	ck_assert_ptr_nonnull(deep);
	for (i = 0; i < depth; i++) {
		deep[i] = '[';
		deep[depth + i] = ']';
	}
	add(&c, OK200, deep, 2 * depth);
	free(deep);
	st = gh_store(&c);
	rc = lease_status(&r, st, "x");
	ck_assert_int_lt(rc, 0);
	ck_assert_int_ne(rc, LEASE_ENOMEM);
	lease__http_set_responder(lease__github_http(st->t), NULL, NULL);
	lease_store_free(st);
	canned_free(&c);
}
END_TEST

/* A Link rel="next" to another host is not followed: the request would
 * carry the credential there. */
START_TEST(pagination_link_elsewhere_not_followed)
{
	canned c;
	lease_store *st;
	lease_namespace ns;
	static const char list[] = "[{\"ref\":\"refs/leases/a\",\"object\":{\"sha\":"
	                           "\"1111111111111111111111111111111111111111\"}}]";

	memset(&c, 0, sizeof(c));
	memset(&ns, 0, sizeof(ns));
	add(&c,
	    "HTTP/1.1 200 OK\r\nDate: Mon, 30 Nov 2026 08:00:00 GMT\r\n"
	    "Link: <https://elsewhere.invalid/repos/octo/leases/git/matching-refs/leases/"
	    "?page=2>; rel=\"next\"\r\n\r\n",
	    list, strlen(list));
	st = gh_store(&c);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), LEASE_EINTERNAL);
	ck_assert_ptr_nonnull(strstr(lease_store_last_error(st), "not followed"));
	ck_assert_int_eq(c.requests, 1);
	ck_assert_ptr_null(strstr(c.last_url, "elsewhere"));
	lease_namespace_clear(&ns);
	lease__http_set_responder(lease__github_http(st->t), NULL, NULL);
	lease_store_free(st);
	canned_free(&c);
}
END_TEST

/* The code of lease_status("x") on a store whose every answer is @p head
 * then @p body_len bytes of @p body. */
static int status_answered(const char *head, const char *body, size_t body_len)
{
	canned c;
	lease_store *st;
	lease_result r;
	int rc;

	memset(&c, 0, sizeof(c));
	add(&c, head, body, body_len);
	st = gh_store(&c);
	rc = lease_status(&r, st, "x");
	lease__http_set_responder(lease__github_http(st->t), NULL, NULL);
	lease_store_free(st);
	canned_free(&c);
	return rc;
}

/* retry-after and x-ratelimit-reset far in the future: rate limited past the
 * timeout at once (no overflow, no endless wait). */
START_TEST(absurd_rate_limit_headers)
{
	ck_assert_int_eq(
	        status_answered("HTTP/1.1 429 Too Many Requests\r\nDate: Mon, 30 Nov 2026 08:00:00 "
	                        "GMT\r\nretry-after: 9223372036854775807\r\n\r\n",
	                        "{}", 2),
	        LEASE_ERATELIMIT);
	ck_assert_int_eq(
	        status_answered("HTTP/1.1 403 Forbidden\r\nDate: Mon, 30 Nov 2026 08:00:00 "
	                        "GMT\r\nx-ratelimit-remaining: 0\r\nx-ratelimit-reset: "
	                        "9223372036854775807\r\n\r\n",
	                        "{\"message\":\"API rate limit exceeded\"}", 37),
	        LEASE_ERATELIMIT);
}
END_TEST

Suite *hardening_suite(void)
{
	return suitefix_suite("hardening", "github_hostile_answers", 30, NULL,
	                      ONE(oversized_body_refused), ONE(deeply_nested_json_refused),
	                      ONE(pagination_link_elsewhere_not_followed),
	                      ONE(absurd_rate_limit_headers), NULL);
}
