/* The fake GitHub server as a process, for shell tests and benchmarks:
 *   fakegh [--repo PATH] [--empty] [--token T] [--owner O] [--name R]
 *          [--port N] [--port-file FILE] [--lag MS] [--graphql-blind]
 *          [--no-update-refs] [--ignore-before-oid-when-forced]
 *          [--tls-cert PEMFILE --tls-key PEMFILE]
 * Prints "PORT\n" on stdout once listening (and writes it to --port-file),
 * then serves until SIGINT/SIGTERM. Drive faults with POST /_fakegh/fault
 * {"endpoint":"create","kind":"5xx","count":1,"arg":0}, /_fakegh/ratelimit
 * {"limit":1000,"remaining":50,"resource":"core"} (a low budget), /_fakegh/lag
 * {"ms":N}, /_fakegh/reset; read counters from GET /_fakegh/stats. */
#define _DEFAULT_SOURCE
#include "support/fakegh.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* A whole (small) file, NUL-terminated; NULL with a message when unreadable. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f || !(buf = calloc(1, 65536))) {
		fprintf(stderr, "fakegh: cannot read %s\n", path);
		if (f)
			fclose(f);
		return NULL;
	}
	n = fread(buf, 1, 65535, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void usage(void)
{
	fprintf(stderr, "usage: fakegh [--repo PATH] [--empty] [--token T] [--owner O] "
	                "[--name R] [--port N] [--port-file FILE] [--lag MS] [--graphql-blind] "
	                "[--no-update-refs] [--ignore-before-oid-when-forced] [--tls-cert PEMFILE "
	                "--tls-key PEMFILE]\n");
	exit(64);
}

int main(int argc, char **argv)
{
	fakegh_options o;
	const char *port_file = NULL;
	struct sigaction sa;
	fakegh *f;
	int i, lag = 0;

	memset(&o, 0, sizeof(o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--empty") == 0) {
			o.empty = 1;
		} else if (strcmp(a, "--graphql-blind") == 0) {
			o.graphql_blind = 1;
		} else if (strcmp(a, "--no-update-refs") == 0) {
			o.no_update_refs = 1;
		} else if (strcmp(a, "--ignore-before-oid-when-forced") == 0) {
			o.ignore_before_oid_when_forced = 1;
		} else if (!v) {
			usage();
		} else if (strcmp(a, "--repo") == 0) {
			o.repo_path = v, i++;
		} else if (strcmp(a, "--token") == 0) {
			o.token = v, i++;
		} else if (strcmp(a, "--owner") == 0) {
			o.owner = v, i++;
		} else if (strcmp(a, "--name") == 0) {
			o.repo = v, i++;
		} else if (strcmp(a, "--port") == 0) {
			o.port = (unsigned short)strtol(v, NULL, 10), i++;
		} else if (strcmp(a, "--port-file") == 0) {
			port_file = v, i++;
		} else if (strcmp(a, "--tls-cert") == 0) {
			if (!(o.tls_cert_pem = slurp(v)))
				return 64;
			i++;
		} else if (strcmp(a, "--tls-key") == 0) {
			if (!(o.tls_key_pem = slurp(v)))
				return 64;
			i++;
		} else if (strcmp(a, "--lag") == 0) {
			lag = (int)strtol(v, NULL, 10), i++;
		} else {
			usage();
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (fakegh_start(&f, &o) < 0)
		return 70;
	fakegh_set_read_lag(f, lag);
	printf("%u\n", (unsigned)fakegh_port(f));
	fflush(stdout);
	if (port_file) {
		char tmp[4096];
		FILE *fp;
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		if (!(fp = fopen(tmp, "w")) || fprintf(fp, "%u\n", (unsigned)fakegh_port(f)) < 0 ||
		    fclose(fp) != 0 || rename(tmp, port_file) != 0) {
			perror("fakegh: port file");
			fakegh_stop(f);
			return 70;
		}
	}
	while (!stop)
		pause();
	fakegh_stop(f);
	return 0;
}
