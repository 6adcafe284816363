/**
 * @file cli_env.h
 * The CLI's ENVIRONMENT (docs/cli.md) mapped onto the library's options:
 * the library reads no environment variable (issue 26), the CLI reads them
 * here and hands them over as lease_store_options fields.
 */
#ifndef REFLEASE_CLI_ENV_H
#define REFLEASE_CLI_ENV_H

#include "reflease/store.h"

/** Look up environment variable @p name (getenv(3), or a test's table); NULL = unset. */
typedef const char *(*cli_getenv_fn)(const char *name, void *payload);

/** getenv(3) as a cli_getenv_fn (@p payload unused). */
const char *cli_getenv(const char *name, void *payload);

/** Storage for the option values the CLI composes (not borrowed from the environment). */
typedef struct cli_env_buf {
	char cache_dir[4096]; /**< $XDG_CACHE_HOME/reflease or $HOME/.cache/reflease */
} cli_env_buf;

/**
 * Fill the configuration of @p o from the environment through @p get
 * (an empty value counts as unset; docs/cli.md ENVIRONMENT):
 * - github_token_file: REFLEASE_GITHUB_TOKEN_FILE; without it github_token:
 *   REFLEASE_GITHUB_TOKEN, else GITHUB_TOKEN
 * - github_api_url: GITHUB_API_URL; github_graphql_url: GITHUB_GRAPHQL_URL
 * - git_token: REFLEASE_GIT_TOKEN
 * - cache_dir: $XDG_CACHE_HOME/reflease (an absolute XDG_CACHE_HOME), else
 *   $HOME/.cache/reflease (an absolute HOME), else unset (the library's
 *   default: the user database's home)
 * - ca_bundle and ca_bundle_source, in curl's order: REFLEASE_CA_BUNDLE
 *   (--ca-bundle sets it), else CURL_CA_BUNDLE, else SSL_CERT_FILE with
 *   ca_dir SSL_CERT_DIR (SSL_CERT_DIR alone too)
 * Fields the environment does not give are left as they are. Strings point
 * into the environment (borrowed) or into @p buf, which must outlive the
 * store's open.
 */
void cli_env_store_options(lease_store_options *o, cli_env_buf *buf, cli_getenv_fn get,
                           void *payload);

#endif
