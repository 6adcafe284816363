/* libFuzzer target: the name and namespace validators (protocol.md §1).
 * Whatever they accept must yield a ref strictly inside refs/<ns>/ with no
 * "..", no "//", no control byte and no ".lock" component. */
#include "reflease/schema.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ref(const char *ref, const char *ns)
{
	size_t n = strlen(ns), i;

	if (strncmp(ref, "refs/", 5) != 0 || strncmp(ref + 5, ns, n) != 0 || ref[5 + n] != '/')
		abort();
	if (strchr(ref + 6 + n, '/') || strstr(ref, "..") || strstr(ref, "@{"))
		abort();
	for (i = 0; ref[i]; i++)
		if ((unsigned char)ref[i] < 0x21 || (unsigned char)ref[i] >= 0x7f)
			abort();
	n = strlen(ref);
	if (n >= 5 && strcmp(ref + n - 5, ".lock") == 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[512], ref[512], err[256];
	const char *split;
	size_t cut;

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	/* first line: namespace; the rest: name */
	split = memchr(buf, '\n', size);
	cut = split ? (size_t)(split - buf) : 0;
	if (split) {
		buf[cut] = '\0';
		if (lease_refname(ref, sizeof(ref), buf, buf + cut + 1, err, sizeof(err)) == 0)
			check_ref(ref, buf);
	} else if (lease_refname(ref, sizeof(ref), "leases", buf, err, sizeof(err)) == 0) {
		check_ref(ref, "leases");
	}
	if (lease_name_validate(buf, err, sizeof(err)) == 0 &&
	    lease_refname(ref, sizeof(ref), NULL, buf, err, sizeof(err)) != 0)
		abort();
	return 0;
}
