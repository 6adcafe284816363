/* The CLI's environment variables as store options (cli_env.h, docs/cli.md
 * ENVIRONMENT): the one place the store's configuration is read from the
 * environment. */
#include "cli_env.h"

#include <stdio.h>
#include <stdlib.h>

const char *cli_getenv(const char *name, void *payload)
{
	(void)payload;
	return getenv(name);
}

/* @p name's value when set and not empty, else NULL. */
static const char *get_set(cli_getenv_fn get, void *payload, const char *name)
{
	const char *v = get(name, payload);

	return v && *v ? v : NULL;
}

/* The remote: object cache (protocol.md §9): $XDG_CACHE_HOME/reflease, else
 * $HOME/.cache/reflease; only absolute directories count. */
static const char *cache_dir(cli_env_buf *buf, cli_getenv_fn get, void *payload)
{
	const char *xdg = get_set(get, payload, "XDG_CACHE_HOME");
	const char *home = get_set(get, payload, "HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf->cache_dir, sizeof(buf->cache_dir), "%s/reflease", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf->cache_dir, sizeof(buf->cache_dir), "%s/.cache/reflease", home);
	else
		return NULL;
	/* a path too long to hold is left to the library's default */
	return n > 0 && (size_t)n < sizeof(buf->cache_dir) ? buf->cache_dir : NULL;
}

void cli_env_store_options(lease_store_options *o, cli_env_buf *buf, cli_getenv_fn get,
                           void *payload)
{
	static const char *const bundles[] = {"REFLEASE_CA_BUNDLE", "CURL_CA_BUNDLE"};
	const char *v;
	size_t i;

	if ((v = get_set(get, payload, "REFLEASE_GITHUB_TOKEN_FILE")))
		o->github_token_file = v; /* read by the transport, again on a 401 */
	else if ((v = get_set(get, payload, "REFLEASE_GITHUB_TOKEN")) ||
	         (v = get_set(get, payload, "GITHUB_TOKEN")))
		o->github_token = v;
	if ((v = get_set(get, payload, "GITHUB_API_URL")))
		o->github_api_url = v;
	if ((v = get_set(get, payload, "GITHUB_GRAPHQL_URL")))
		o->github_graphql_url = v;
	if ((v = get_set(get, payload, "REFLEASE_GIT_TOKEN")))
		o->git_token = v;
	if ((v = cache_dir(buf, get, payload)))
		o->cache_dir = v;
	/* curl's order: a named bundle alone; else SSL_CERT_FILE and SSL_CERT_DIR */
	for (i = 0; i < sizeof(bundles) / sizeof(bundles[0]); i++) {
		if ((v = get_set(get, payload, bundles[i]))) {
			o->ca_bundle = v;
			o->ca_bundle_source = bundles[i];
			return;
		}
	}
	if ((v = get_set(get, payload, "SSL_CERT_FILE"))) {
		o->ca_bundle = v;
		o->ca_bundle_source = "SSL_CERT_FILE";
	}
	if ((v = get_set(get, payload, "SSL_CERT_DIR")))
		o->ca_dir = v;
}
