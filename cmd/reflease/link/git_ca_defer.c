/* The CA bundle's parse, moved from git_libgit2_init to the first TLS
 * handshake (issue 43; docs/benchmarks.md "Start-up").
 *
 * Only in the binary of `make bundle` / `make release`, which links libgit2
 * and mbedTLS from their static archives (scripts/static-link.sh) with
 * ld's --wrap for the five functions below: every call the archives make to
 * FN goes to __wrap_FN here, and __real_FN is the archive's own. A shared
 * libgit2 is untouched: this file is not part of libreflease, and the build
 * of `make` (the shared libgit2) neither compiles nor links it.
 *
 * Why: Debian's libgit2 (1.5 and 1.9, on mbedTLS) parses its built-in CA
 * bundle (/etc/ssl/certs/ca-certificates.crt, about 140 certificates) inside
 * git_libgit2_init, about 4 ms of CPU, 20 % of a local: command that never
 * speaks TLS. libgit2 has no option acting before its initialisation.
 *
 * How: while this thread is inside git_libgit2_init, a parse of a file or a
 * directory of certificates into a chain is recorded, not done, and
 * answered 0 (libgit2 then hands the still empty chain to its TLS
 * configuration by pointer). Before any TLS session is set up
 * (mbedtls_ssl_setup, which libgit2 calls before each handshake) the
 * recorded parses are done into the same chains, so the handshake verifies
 * against exactly what an undeferred init would have loaded. A chain freed
 * before that (GIT_OPT_SET_SSL_CERT_LOCATIONS replacing the default, as
 * --ca-bundle does, or libgit2's shutdown) is forgotten, never parsed.
 * Parses outside git_libgit2_init (a user's --ca-bundle) are done at once,
 * as before, so their errors are reported where they were. A default bundle
 * that fails to parse leaves its chain empty: the server's certificate is
 * then untrusted, as when libgit2 loaded nothing (its init ignores the
 * failure too). */
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int __real_git_libgit2_init(void);
int __wrap_git_libgit2_init(void);
int __real_mbedtls_x509_crt_parse_file(mbedtls_x509_crt *chain, const char *path);
int __wrap_mbedtls_x509_crt_parse_file(mbedtls_x509_crt *chain, const char *path);
int __real_mbedtls_x509_crt_parse_path(mbedtls_x509_crt *chain, const char *path);
int __wrap_mbedtls_x509_crt_parse_path(mbedtls_x509_crt *chain, const char *path);
void __real_mbedtls_x509_crt_free(mbedtls_x509_crt *crt);
void __wrap_mbedtls_x509_crt_free(mbedtls_x509_crt *crt);
int __real_mbedtls_ssl_setup(mbedtls_ssl_context *ssl, const mbedtls_ssl_config *conf);
int __wrap_mbedtls_ssl_setup(mbedtls_ssl_context *ssl, const mbedtls_ssl_config *conf);

/* A recorded parse: CHAIN (libgit2's, not owned) from PATH (owned), a file
 * or a directory. Few: libgit2 records one (its default location). */
struct deferred {
	mbedtls_x509_crt *chain;
	char *path;
	int is_dir;
};

#define DEFERRED_MAX 4
static struct deferred deferred[DEFERRED_MAX];
static int n_deferred;
static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int in_init;

int __wrap_git_libgit2_init(void)
{
	in_init++;
	int rc = __real_git_libgit2_init();
	in_init--;
	return rc;
}

/* Record a parse made inside git_libgit2_init; 1 = recorded, 0 = do it now
 * (outside the init, or no room: the parse is then done as before). */
static int defer(mbedtls_x509_crt *chain, const char *path, int is_dir)
{
	if (!in_init || !chain || !path)
		return 0;
	char *copy = strdup(path);
	if (!copy)
		return 0;
	int recorded = 0;
	pthread_mutex_lock(&deferred_lock);
	if (n_deferred < DEFERRED_MAX) {
		deferred[n_deferred++] = (struct deferred){chain, copy, is_dir};
		recorded = 1;
	}
	pthread_mutex_unlock(&deferred_lock);
	if (!recorded)
		free(copy);
	return recorded;
}

int __wrap_mbedtls_x509_crt_parse_file(mbedtls_x509_crt *chain, const char *path)
{
	return defer(chain, path, 0) ? 0 : __real_mbedtls_x509_crt_parse_file(chain, path);
}

int __wrap_mbedtls_x509_crt_parse_path(mbedtls_x509_crt *chain, const char *path)
{
	return defer(chain, path, 1) ? 0 : __real_mbedtls_x509_crt_parse_path(chain, path);
}

void __wrap_mbedtls_x509_crt_free(mbedtls_x509_crt *crt)
{
	pthread_mutex_lock(&deferred_lock);
	for (int i = 0; i < n_deferred; i++) {
		if (deferred[i].chain == crt) {
			free(deferred[i].path);
			deferred[i] = deferred[--n_deferred];
			i--;
		}
	}
	pthread_mutex_unlock(&deferred_lock);
	__real_mbedtls_x509_crt_free(crt);
}

int __wrap_mbedtls_ssl_setup(mbedtls_ssl_context *ssl, const mbedtls_ssl_config *conf)
{
	pthread_mutex_lock(&deferred_lock);
	while (n_deferred > 0) {
		struct deferred d = deferred[--n_deferred];
		int rc = d.is_dir ? __real_mbedtls_x509_crt_parse_path(d.chain, d.path)
		                  : __real_mbedtls_x509_crt_parse_file(d.chain, d.path);
		if (rc < 0) { /* as libgit2's init would have: no chain loaded */
			__real_mbedtls_x509_crt_free(d.chain);
			mbedtls_x509_crt_init(d.chain);
		}
		free(d.path);
	}
	pthread_mutex_unlock(&deferred_lock);
	return __real_mbedtls_ssl_setup(ssl, conf);
}
