/* Opening a store by its spec ("local:PATH", "github:OWNER/REPO",
 * "remote:URL"): the one table naming the backends (protocol.md §9). The
 * handle itself, and everything done through it, is store.c's, which names
 * no transport (issue 38). */
#include "backend.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* A backend constructor: build a transport from the text after "kind:". */
typedef int (*transport_ctor)(lease_transport **out, const char *arg,
                              const lease_store_options *opts, char *err, size_t errlen);

static int local_ctor(lease_transport **out, const char *arg, const lease_store_options *opts,
                      char *err, size_t errlen)
{
	/* "local:" alone (the CLI's default) is the repository the current
	 * directory is in, found as git finds it; local:PATH is PATH itself. */
	return lease__local_transport_new(out, *arg ? arg : NULL, opts, err, errlen);
}

static int github_ctor(lease_transport **out, const char *arg, const lease_store_options *opts,
                       char *err, size_t errlen)
{
	return lease__github_transport_new(out, arg, opts, err, errlen);
}

static int remote_ctor(lease_transport **out, const char *arg, const lease_store_options *opts,
                       char *err, size_t errlen)
{
	return lease__remote_transport_new(out, arg, opts, err, errlen);
}

static const struct {
	const char *prefix;
	transport_ctor ctor;
} backends[] = {
        {"local:", local_ctor},
        {"github:", github_ctor},
        {"remote:", remote_ctor},
};

int lease_store_open(lease_store **out, const char *spec, const lease_store_options *opts,
                     char *err, size_t errlen)
{
	lease_transport *t = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if (opts && opts->version != LEASE_STORE_OPTIONS_VERSION) {
		lease__error_set(err, errlen, "%s", "store options of an unsupported version");
		return LEASE_EINVALID;
	}
	if (!spec || !*spec) {
		lease__error_set(
		        err, errlen, "%s",
		        "no store given (use --store local:PATH, github:OWNER/REPO or remote:URL)");
		return LEASE_ECONFIG;
	}
	if (opts && opts->ns) {
		if ((rc = lease__namespace_check(opts->ns, err, errlen)) < 0)
			return rc;
	}
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		size_t n = strlen(backends[i].prefix);
		if (strncmp(spec, backends[i].prefix, n) == 0) {
			if ((rc = backends[i].ctor(&t, spec + n, opts, err, errlen)) < 0)
				return rc;
			rc = lease_store_open_transport(out, t, opts, err, errlen);
			if (rc == 0)
				lease__store_set_spec(*out, spec);
			return rc;
		}
	}
	lease__error_set(err, errlen,
	                 "invalid store '%s': expected local:PATH, github:OWNER/REPO or remote:URL",
	                 spec);
	return LEASE_EINVALID;
}
