/* Drive the GitHub transport through the "reflease-git-refs" scenario that
 * tests/octokit/make-scenario.mjs builds from GitHub's real recorded
 * responses, served by @octokit/fixtures-server (issue 6 item 6). Reads
 * GITHUB_API_URL (the fixture's URL), GITHUB_GRAPHQL_URL and GITHUB_TOKEN
 * into the store options, as the CLI does (the library reads no
 * environment, issue 26); exits 0 when every answer parsed as GitHub meant
 * it, 1 otherwise (with the reason). */
#include "store/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "ghreplay: FAIL %s: ", #cond);                             \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static const char *terr(lease_transport *t)
{
	const char *m = t->last_error(t);
	return m ? m : "";
}

int main(void)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t = NULL;
	lease_ref_list list = {NULL, 0, 0};
	lease_oid two, one;
	char err[512], hex[41];
	int64_t now = 0;
	int rc;
	size_t i;

	o.timeout_s = 10;
	o.github_api_url = getenv("GITHUB_API_URL");
	o.github_graphql_url = getenv("GITHUB_GRAPHQL_URL");
	o.github_token = getenv("GITHUB_TOKEN");
	if ((rc = lease__github_transport_new(&t, "octokit-fixture-org/git-refs", &o, err,
	                                      sizeof(err))) < 0) {
		fprintf(stderr, "ghreplay: %s\n", err);
		return 1;
	}
	lease__github_set_rest_only(t);
	lease_oid_fromhex(&two, "0000000000000000000000000000000000000002");
	lease_oid_fromhex(&one, "0000000000000000000000000000000000000001");

	/* 1. POST /git/refs answered by the recorded 201 */
	rc = t->create_ref(t, "refs/heads/test", &two);
	EXPECT(rc == 0, "create: %d %s", rc, terr(t));
	/* time base: the recorded Date header (Tue, 10 Oct 2017 16:00:00 GMT) */
	t->now(t, &now);
	EXPECT(now >= 1507651200 && now < 1507651200 + 60, "now %lld", (long long)now);

	/* 2. matching-refs answered by the recorded listing */
	rc = t->list_refs(t, &list, "refs/heads/");
	EXPECT(rc == 0, "list: %d %s", rc, terr(t));
	EXPECT(list.count == 2, "%zu refs listed", list.count);
	for (i = 0; i < list.count; i++) {
		lease_oid_tohex(hex, &list.items[i].oid);
		EXPECT(lease_oid_equal(&list.items[i].oid, &one), "%s at %s", list.items[i].refname,
		       hex);
	}
	EXPECT(list.count == 2 && strcmp(list.items[0].refname, "refs/heads/main") == 0 &&
	               strcmp(list.items[1].refname, "refs/heads/test") == 0,
	       "ref names");
	lease_ref_list_clear(&list);

	/* 3 + 4. a recorded 422 "Validation Failed", classified by re-reading
	 * (the recorded ref object): the ref exists */
	rc = t->create_ref(t, "refs/heads/test", &two);
	EXPECT(rc == LEASE_EEXISTS, "second create: %d %s", rc, terr(t));
	EXPECT(strstr(terr(t), "422 Validation Failed") != NULL, "message: %s", terr(t));
	EXPECT(strstr(terr(t), "0000000000000000000000000000000000000001") == NULL,
	       "the token leaked into: %s", terr(t));

	t->free(t);
	if (failures)
		return 1;
	printf("ghreplay: ok (4 recorded answers parsed)\n");
	return 0;
}
