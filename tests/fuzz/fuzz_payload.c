/* libFuzzer target: the commit-message and payload parsers (protocol.md §2).
 * Any input must give 0, LEASE_EPAYLOAD or LEASE_EVERSION — never a crash —
 * and a parsed payload that validates must re-emit and re-parse identically. */
#include "reflease/schema.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *msg = malloc(size + 1), *json = NULL, err[256];
	lease_payload p, q;
	lease_op op;
	int rc;

	if (!msg)
		return 0;
	memcpy(msg, data, size);
	msg[size] = '\0';
	rc = lease_message_parse(&p, &op, msg, size, NULL, err, sizeof(err));
	if (rc != 0 && rc != LEASE_EPAYLOAD && rc != LEASE_EVERSION)
		abort();
	rc = lease_payload_parse(&p, msg, size, err, sizeof(err));
	if (rc != 0 && rc != LEASE_EPAYLOAD && rc != LEASE_EVERSION)
		abort();
	if (rc == 0 && p.has_ttl && lease_payload_validate(&p, err, sizeof(err)) == 0) {
		if (lease_payload_emit(&json, &p) != 0)
			abort();
		if (lease_payload_parse(&q, json, strlen(json), err, sizeof(err)) != 0)
			abort();
		if (strcmp(q.lease_token, p.lease_token) != 0 || q.expires_at != p.expires_at ||
		    q.transitions != p.transitions || q.ttl_seconds != p.ttl_seconds)
			abort();
		free(json);
	}
	free(msg);
	return 0;
}
