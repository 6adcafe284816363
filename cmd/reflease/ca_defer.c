/* A local: store never speaks TLS, yet Debian 12's libgit2 (built on mbedTLS)
 * parses the whole system CA bundle inside git_libgit2_init, whatever the
 * caller needs: 8-13 ms of CPU, a third of a local: `status` (issue 43,
 * docs/benchmarks.md). libgit2 has no option that acts before its
 * initialisation (GIT_OPT_SET_SSL_CERT_LOCATIONS needs it done) and builds the
 * bundle's path in (GIT_DEFAULT_CERT_LOCATION).
 *
 * So the CLI, and only the CLI, defines the two mbedTLS functions libgit2
 * calls to load certificates; the executable's definitions come first in the
 * dynamic linker's search. While the CLI opens or creates a local: store
 * (cli_ca_skip(1)), they load nothing and report success: the chain stays
 * empty and is never used, as a local: store makes no connection. Every other
 * call — remote: and github: stores, a --ca-bundle, any call after the
 * store is open — goes to mbedTLS's own (dlsym RTLD_NEXT), unchanged. A
 * libgit2 on another TLS library (OpenSSL) never calls them. The library
 * defines nothing of the kind: a program linking libreflease keeps libgit2's
 * behaviour whole (tests/shell/t_startup.sh checks both kinds). */
#define _GNU_SOURCE
#include "cli.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

struct mbedtls_x509_crt;

int mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain, const char *path);
int mbedtls_x509_crt_parse_path(struct mbedtls_x509_crt *chain, const char *path);

#define X509_FILE_IO_ERROR (-0x2900) /* MBEDTLS_ERR_X509_FILE_IO_ERROR */

static atomic_int skip;

void cli_ca_skip(int on)
{
	atomic_store(&skip, on);
}

typedef int (*ca_parse_fn)(struct mbedtls_x509_crt *chain, const char *path);

/* mbedTLS's own @p name, or NULL */
static ca_parse_fn next_parse(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);
	ca_parse_fn fn = NULL;

	if (sym)
		memcpy(&fn, &sym, sizeof(fn));
	return fn;
}

int mbedtls_x509_crt_parse_file(struct mbedtls_x509_crt *chain, const char *path)
{
	ca_parse_fn fn;

	if (atomic_load(&skip))
		return 0;
	fn = next_parse("mbedtls_x509_crt_parse_file");
	return fn ? fn(chain, path) : X509_FILE_IO_ERROR;
}

int mbedtls_x509_crt_parse_path(struct mbedtls_x509_crt *chain, const char *path)
{
	ca_parse_fn fn;

	if (atomic_load(&skip))
		return 0;
	fn = next_parse("mbedtls_x509_crt_parse_path");
	return fn ? fn(chain, path) : X509_FILE_IO_ERROR;
}
