/* GitHub's request budgets from its answers' x-ratelimit-* headers (issue 39
 * item 5); see gh_budget.h. */
#include "gh_budget.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "reflease/schema.h"

/* The resources warned about in this process (once each). */
static pthread_mutex_t warned_mu = PTHREAD_MUTEX_INITIALIZER;
static char warned[LEASE_BUDGET_MAX][32];
static size_t nwarned;

/* 1 the first time @p resource is claimed for a warning in this process. */
static int first_warning(const char *resource)
{
	size_t i;
	int first = 1;

	pthread_mutex_lock(&warned_mu);
	for (i = 0; i < nwarned; i++)
		if (strcmp(warned[i], resource) == 0)
			first = 0;
	if (first && nwarned < LEASE_BUDGET_MAX)
		snprintf(warned[nwarned++], sizeof(warned[0]), "%s", resource);
	pthread_mutex_unlock(&warned_mu);
	return first;
}

/* What the budget pays for, for the message. */
static const char *what_of(const char *resource)
{
	if (strcmp(resource, "core") == 0)
		return "REST requests";
	if (strcmp(resource, "graphql") == 0)
		return "GraphQL points";
	return "requests";
}

/* @p t (Unix seconds, GitHub's x-ratelimit-reset) as RFC 3339 UTC, as
 * lease_time_format() writes it (lib/lease: out of this layer's reach). */
static void reset_format(char *out, size_t len, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, len, "%lld", (long long)t);
}

int lease__gh_budget_note(lease_gh_budgets *bs, const lease_http_response *r, const char *owner,
                          const char *repo, char *msg, size_t len)
{
	/* GitHub names the budget; an answer without the header is REST's */
	const char *res = r->rl_resource[0] ? r->rl_resource : "core";
	char reset[LEASE_TIME_STRSZ + 1] = "an unknown time";
	lease_budget *b = NULL;
	size_t i;

	if (r->rl_limit <= 0 || r->rl_remaining < 0)
		return 0;
	for (i = 0; i < bs->n && !b; i++)
		if (strcmp(bs->b[i].resource, res) == 0)
			b = &bs->b[i];
	if (!b && bs->n < LEASE_BUDGET_MAX) {
		b = &bs->b[bs->n++];
		snprintf(b->resource, sizeof(b->resource), "%s", res);
	}
	if (!b)
		return 0;
	b->limit = r->rl_limit;
	b->remaining = r->rl_remaining;
	b->used = r->rl_used;
	b->reset = r->rl_reset;
	if (r->rl_remaining * 10 >= r->rl_limit || !first_warning(res))
		return 0;
	if (r->rl_reset > 0)
		reset_format(reset, sizeof(reset), r->rl_reset);
	snprintf(msg, len,
	         LEASE_BUDGET_WARNING_PREFIX "the %s budget (%s) has %ld of %ld left, under 10 %%; "
	                                     "it resets at %s. The leases of %s/%s compete for it "
	                                     "with every other job of the repository on this "
	                                     "token: heartbeats that run out of it fail",
	         res, what_of(res), r->rl_remaining, r->rl_limit, reset, owner, repo);
	return 1;
}

size_t lease__gh_budget_copy(const lease_gh_budgets *bs, lease_budget *out, size_t max)
{
	size_t i;

	for (i = 0; i < bs->n && i < max; i++)
		out[i] = bs->b[i];
	return bs->n;
}
