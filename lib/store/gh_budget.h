/**
 * @file gh_budget.h (internal)
 * GitHub's request budgets as its answers announce them (issue 39 item 5):
 * `x-ratelimit-limit`, `-remaining`, `-used`, `-resource` and `-reset` on
 * every answer (docs.github.com, "Rate limits for the REST API", "Checking
 * the status of your rate limit"; GraphQL: "Rate limits and query limits
 * for the GraphQL API"), kept per resource on the transport, with a warning
 * once per process and resource when less than 10 % remains.
 */
#ifndef REFLEASE_GH_BUDGET_H
#define REFLEASE_GH_BUDGET_H

#include <stddef.h>

#include "http.h"
#include "reflease/store.h"

/** The budgets one transport saw. Zero-initialise. */
typedef struct lease_gh_budgets {
	lease_budget b[LEASE_BUDGET_MAX];
	size_t n;
} lease_gh_budgets;

/**
 * Note the budget answer @p r announced (nothing when it announced no limit
 * and remaining). When less than 10 % of it remains and no warning about this
 * resource was given in this process yet, write the warning into @p msg
 * (LEASE_BUDGET_WARNING_PREFIX, the budget, what is left, when it resets in
 * RFC 3339, and that the leases of @p owner/@p repo compete for it).
 * @return 1 when @p msg holds a warning to give, else 0
 */
int lease__gh_budget_note(lease_gh_budgets *bs, const lease_http_response *r, const char *owner,
                          const char *repo, char *msg, size_t len);

/** Copy up to @p max budgets of @p bs into @p out; @return how many it holds. */
size_t lease__gh_budget_copy(const lease_gh_budgets *bs, lease_budget *out, size_t max);

#endif
