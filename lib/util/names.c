/* The namespace rule (protocol.md §1), in the tier both the store handle
 * (lease_store_open(), lib/store) and the lease layer (lease_refname(),
 * lib/lease) may call, so that neither calls the other upward (issue 38). */
#include "reflease/schema.h" /* LEASE_NS_MAX */
#include "util/util.h"

#include <string.h>

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Names git, GitHub, GitLab or Gerrit treat specially (protocol.md §1). */
static const char *const reserved_ns[] = {
        "heads",       "tags",      "remotes",     "notes",    "pull",     "gh",
        "stash",       "replace",   "bisect",      "original", "prefetch", "worktree",
        "rewritten",   "for",       "changes",     "meta",     "users",    "merge-requests",
        "keep-around", "pipelines", "environments"};

int lease__namespace_check(const char *ns, char *err, size_t errlen)
{
	size_t n, i;

	if (!ns || !*ns) {
		lease__error_set(err, errlen,
		                 "namespace: must not be empty ([a-z][a-z0-9-]{0,31})");
		return LEASE_EINVALID;
	}
	n = strlen(ns);
	if (n > LEASE_NS_MAX) {
		lease__error_set(err, errlen, "namespace: must be at most %d bytes (got %zu)",
		                 LEASE_NS_MAX, n);
		return LEASE_EINVALID;
	}
	if (!(ns[0] >= 'a' && ns[0] <= 'z')) {
		lease__error_set(
		        err, errlen,
		        "namespace: must start with a lowercase letter ([a-z][a-z0-9-]{0,31})");
		return LEASE_EINVALID;
	}
	for (i = 1; i < n; i++) {
		unsigned char c = (unsigned char)ns[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
			lease__error_set(err, errlen,
			                 "namespace: byte 0x%02x at offset %zu is not allowed "
			                 "([a-z][a-z0-9-]{0,31})",
			                 c, i);
			return LEASE_EINVALID;
		}
	}
	if (ends_with(ns, n, "-archive")) {
		lease__error_set(
		        err, errlen,
		        "namespace: must not end with '-archive' (reserved for archive refs)");
		return LEASE_EINVALID;
	}
	if (ends_with(ns, n, "-queue")) {
		lease__error_set(err, errlen,
		                 "namespace: must not end with '-queue' (reserved for the fair "
		                 "waiters' tickets)");
		return LEASE_EINVALID;
	}
	for (i = 0; i < sizeof(reserved_ns) / sizeof(reserved_ns[0]); i++) {
		if (strcmp(ns, reserved_ns[i]) == 0) {
			lease__error_set(
			        err, errlen,
			        "namespace: '%s' is reserved (git, GitHub, GitLab or Gerrit "
			        "treat it specially)",
			        ns);
			return LEASE_EINVALID;
		}
	}
	return 0;
}
