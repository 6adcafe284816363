/* The CLI's own formatting (cmd/reflease), linked into the runner alone. */
#include <check.h>

#include <string.h>

#include "../cmd/reflease/cli_env.h"
#include "../cmd/reflease/report.h"
#include "support/suitefix.h"

/* ---- workflow-command escaping ----------------------------------------------------------- */

START_TEST(annotation_escaping)
{
	char out[256];

	report_gha_escape(out, sizeof(out), "50% done\r\n::error::pwned", 0);
	ck_assert_str_eq(out, "50%25 done%0D%0A::error::pwned");
	report_gha_escape(out, sizeof(out), "a:b,c%\n", 1);
	ck_assert_str_eq(out, "a%3Ab%2Cc%25%0A");
	report_gha_escape(out, sizeof(out), "tab\there\x01", 0);
	ck_assert_str_eq(out, "tab%09here%01");
	/* truncation never splits an escape */
	report_gha_escape(out, 6, "ab%%%", 0);
	ck_assert_str_eq(out, "ab%25");
	ck_assert_uint_eq(report_gha_escape(out, 1, "x", 0), 0);
}
END_TEST

/* ---- the ENVIRONMENT as store options (cli_env.c, docs/cli.md) ---------------------------- */

/* A test's environment: NULL-terminated name/value pairs. */
static const char *table_get(const char *name, void *payload)
{
	const char *const *kv = payload;

	for (; kv[0]; kv += 2)
		if (strcmp(kv[0], name) == 0)
			return kv[1];
	return NULL;
}

static lease_store_options mapped(const char *const *env, cli_env_buf *buf)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;

	cli_env_store_options(&o, buf, table_get, (void *)env);
	return o;
}

/* Each variable the library once read itself lands in its option (issue 26:
 * the library reads no environment), with the precedence docs/cli.md gives. */
START_TEST(environment_maps_to_store_options)
{
	static const char *const none[] = {NULL};
	static const char *const all[] = {"GITHUB_TOKEN",
	                                  "gh",
	                                  "REFLEASE_GITHUB_TOKEN",
	                                  "rgh",
	                                  "GITHUB_API_URL",
	                                  "http://127.0.0.1:9/api/v3",
	                                  "GITHUB_GRAPHQL_URL",
	                                  "http://127.0.0.1:9/api/graphql",
	                                  "REFLEASE_GIT_TOKEN",
	                                  "git-tok",
	                                  "XDG_CACHE_HOME",
	                                  "/xdg",
	                                  "HOME",
	                                  "/home/u",
	                                  "CURL_CA_BUNDLE",
	                                  "/curl.pem",
	                                  "SSL_CERT_FILE",
	                                  "/ssl.pem",
	                                  "SSL_CERT_DIR",
	                                  "/certs",
	                                  NULL};
	static const char *const file[] = {"REFLEASE_GITHUB_TOKEN_FILE",
	                                   "/run/tok",
	                                   "GITHUB_TOKEN",
	                                   "gh",
	                                   "HOME",
	                                   "/home/u",
	                                   "XDG_CACHE_HOME",
	                                   "relative",
	                                   "REFLEASE_CA_BUNDLE",
	                                   "/r.pem",
	                                   "CURL_CA_BUNDLE",
	                                   "/curl.pem",
	                                   NULL};
	static const char *const ssl[] = {"GITHUB_TOKEN",
	                                  "gh",
	                                  "REFLEASE_GITHUB_TOKEN",
	                                  "",
	                                  "SSL_CERT_FILE",
	                                  "/ssl.pem",
	                                  "SSL_CERT_DIR",
	                                  "/certs",
	                                  NULL};
	cli_env_buf buf;
	lease_store_options o;

	o = mapped(none, &buf);
	ck_assert_ptr_null(o.github_token);
	ck_assert_ptr_null(o.github_token_file);
	ck_assert_ptr_null(o.github_api_url);
	ck_assert_ptr_null(o.github_graphql_url);
	ck_assert_ptr_null(o.git_token);
	ck_assert_ptr_null(o.cache_dir);
	ck_assert_ptr_null(o.ca_bundle);
	ck_assert_ptr_null(o.ca_dir);

	o = mapped(all, &buf);
	ck_assert_str_eq(o.github_token, "rgh"); /* REFLEASE_GITHUB_TOKEN first */
	ck_assert_ptr_null(o.github_token_file);
	ck_assert_str_eq(o.github_api_url, "http://127.0.0.1:9/api/v3");
	ck_assert_str_eq(o.github_graphql_url, "http://127.0.0.1:9/api/graphql");
	ck_assert_str_eq(o.git_token, "git-tok");
	ck_assert_str_eq(o.cache_dir, "/xdg/reflease");
	ck_assert_str_eq(o.ca_bundle, "/curl.pem"); /* curl's order: CURL_CA_BUNDLE alone */
	ck_assert_str_eq(o.ca_bundle_source, "CURL_CA_BUNDLE");
	ck_assert_ptr_null(o.ca_dir);

	o = mapped(file, &buf);
	ck_assert_str_eq(o.github_token_file, "/run/tok"); /* read again on a 401 */
	ck_assert_ptr_null(o.github_token);
	ck_assert_str_eq(o.cache_dir, "/home/u/.cache/reflease"); /* XDG not absolute */
	ck_assert_str_eq(o.ca_bundle, "/r.pem");
	ck_assert_str_eq(o.ca_bundle_source, "REFLEASE_CA_BUNDLE");

	o = mapped(ssl, &buf);
	ck_assert_str_eq(o.github_token, "gh"); /* an empty value counts as unset */
	ck_assert_str_eq(o.ca_bundle, "/ssl.pem");
	ck_assert_str_eq(o.ca_bundle_source, "SSL_CERT_FILE");
	ck_assert_str_eq(o.ca_dir, "/certs");
	ck_assert_ptr_null(o.cache_dir);
}
END_TEST

Suite *cli_suite(void)
{
	return suitefix_suite("cli", "cli", 0, NULL, ONE(annotation_escaping),
	                      ONE(environment_maps_to_store_options), NULL);
}
