/* libFuzzer target: the GitHub client's response handling (protocol.md §9
 * github): status lines and headers (Date, retry-after, x-ratelimit-*, Link
 * pagination), JSON bodies of REST and GraphQL, GraphQL errors (RATE_LIMITED,
 * STALE_DATA, FORBIDDEN, undefinedField...), the body cap.
 *
 * Input: byte 0 picks the transport call (read_ref, read_commit, list_refs,
 * create_ref, replace_ref, delete_ref, write_commit, now, read_refs of three
 * refs), byte 1 holds
 * flags (bit 0: REST only; bit 1: a 4 KiB body cap), the rest is the
 * sequence of raw HTTP answers the server gives, separated by a line
 * "--8<--". No network: lib/store/http.c's test responder serves the
 * answers (and, once they run out, "no connection"); its virtual clock makes
 * retries and backoff free.
 *
 * Checks: no crash, leak or undefined behaviour; a return code that is 0 or
 * one of the LEASE_E* codes; every request goes to the configured API or
 * GraphQL URL (a crafted Link header must not send the credential
 * elsewhere); a successful read returns what it claims (a commit with a
 * message; listed refs with names). */
#define _GNU_SOURCE /* memmem */
#include "store/backend.h"
#include "store/http.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define API "http://127.0.0.1:9/api/v3"
#define GQL "http://127.0.0.1:9/api/graphql"
#define SEP "\n--8<--\n"

typedef struct feed {
	const char *p;
	size_t left;
	int served;
} feed;

static int responder(void *payload, const char *method, const char *url, const char *body,
                     const char **raw, size_t *raw_len)
{
	feed *f = payload;
	const char *sep;

	(void)method;
	(void)body;
	if (strncmp(url, API "/", strlen(API) + 1) != 0 && strcmp(url, GQL) != 0)
		abort(); /* the credential would leave the configured API */
	if (!f->left || f->served++ > 64)
		return 1;
	sep = memmem(f->p, f->left, SEP, strlen(SEP));
	*raw = f->p;
	*raw_len = sep ? (size_t)(sep - f->p) : f->left;
	if (sep) {
		f->left -= (size_t)(sep - f->p) + strlen(SEP);
		f->p = sep + strlen(SEP);
	} else {
		f->left = 0;
	}
	return 0;
}

static lease_transport *cur_t;

static void check_rc(int rc)
{
	const char *m;

	if (rc > 0 || rc < LEASE_ELOCKED)
		abort();
	if (getenv("FUZZ_GITHUB_DEBUG")) { /* to check what a seed reaches */
		m = cur_t->last_error(cur_t);
		fprintf(stderr, "fuzz_github: rc %d (%s) %s\n", rc, lease_error_id(rc),
		        rc && m ? m : "");
	}
}

/* Virtual time (the store options' clock): retries, backoff and rate-limit
 * waits cost no real time. */
static int64_t virtual_ms = 1000000;

static int64_t v_mono(void *payload)
{
	(void)payload;
	return virtual_ms;
}

static int v_sleep(int64_t ms, int interruptible, void *payload)
{
	(void)interruptible;
	(void)payload;
	virtual_ms += ms;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t = NULL;
	lease_http_response resp;
	lease_ref_list list = {NULL, 0, 0};
	lease_commit c;
	lease_oid a, b, out;
	char err[256];
	feed f;
	int rc, present = 0, has_commit = 0;
	int64_t now;
	size_t i;

	if (size < 2)
		return 0;
	o.github_api_url = API;
	o.github_graphql_url = GQL;
	o.clock.mono_ms = v_mono;
	o.clock.sleep_ms = v_sleep;
	o.github_token = "fuzz-token";
	o.timeout_s = 5;
	if (lease__github_transport_new(&t, "octo/repo", &o, err, sizeof(err)) < 0)
		abort();
	cur_t = t;
	if (data[1] & 1)
		lease__github_set_rest_only(t);
	if (data[1] & 2)
		lease__http_set_body_cap(lease__github_http(t), 4096);
	f.p = (const char *)data + 2;
	f.left = size - 2;
	f.served = 0;
	/* the raw parser on the whole input, then the transport over it */
	lease__http_parse_response(lease__github_http(t), &resp, f.p, f.left);
	if (resp.result == LEASE_HTTP_OK && (resp.status < 100 || resp.status > 599))
		abort();
	if (resp.body && resp.body[resp.body_len] != '\0')
		abort();
	lease__http_response_clear(&resp);
	lease__http_set_responder(lease__github_http(t), responder, &f);
	lease_oid_fromhex(&a, "1111111111111111111111111111111111111111");
	lease_oid_fromhex(&b, "2222222222222222222222222222222222222222");
	memset(&c, 0, sizeof(c));
	switch (data[0] % 9) {
	case 0:
		rc = t->read_ref(t, "refs/leases/x", &present, &out, &has_commit, &c);
		check_rc(rc);
		if (rc == 0 && has_commit && c.is_commit && !c.message)
			abort();
		break;
	case 1:
		rc = t->read_commit(t, &c, &a);
		check_rc(rc);
		if (rc == 0 && c.is_commit && (!c.message || !lease_oid_equal(&c.oid, &a)))
			abort();
		break;
	case 2:
		rc = t->list_refs(t, &list, "refs/leases/");
		check_rc(rc);
		for (i = 0; rc == 0 && i < list.count; i++)
			if (!list.items[i].refname ||
			    (list.items[i].has_commit && list.items[i].commit.is_commit &&
			     !list.items[i].commit.message))
				abort();
		break;
	case 3: check_rc(t->create_ref(t, "refs/leases/x", &a)); break;
	case 4: check_rc(t->replace_ref(t, "refs/leases/x", &a, &b)); break;
	case 5: check_rc(t->delete_ref(t, "refs/leases/x", &a)); break;
	case 6:
		check_rc(t->write_commit(t, &out, &a, "x: acquire claimed by o on h\n\n{}",
		                         1700000000));
		break;
	case 8: {
		/* a set's batched read: each entry answered or left for the
		 * library, an answer what it claims (a commit only when present,
		 * with a message) */
		lease_ref_read rr[3];
		memset(rr, 0, sizeof(rr));
		rr[0].refname = "refs/leases/x";
		rr[1].refname = "refs/leases/y";
		rr[2].refname = "refs/leases/z";
		rc = t->read_refs(t, rr, 3);
		check_rc(rc);
		for (i = 0; i < 3; i++) {
			if (rc == 0 && rr[i].answered && rr[i].has_commit &&
			    (!rr[i].present || (rr[i].commit.is_commit && !rr[i].commit.message)))
				abort();
			lease_commit_clear(&rr[i].commit);
		}
		break;
	}
	case 7:
		/* a read first (any answer), then the store's time */
		rc = t->read_ref(t, "refs/leases/x", &present, &out, &has_commit, &c);
		check_rc(rc);
		if (t->now(t, &now) != 0)
			abort();
		break;
	}
	lease_commit_clear(&c);
	lease_ref_list_clear(&list);
	lease__http_set_responder(lease__github_http(t), NULL, NULL);
	t->free(t);
	return 0;
}
