/**
 * @file payload.h
 * Lease payloads built by hand for tests that plant a commit behind the
 * runtime's back (protocol.md §2: the message format).
 */
#ifndef REFLEASE_TEST_PAYLOAD_H
#define REFLEASE_TEST_PAYLOAD_H

#include <stdint.h>

#include "reflease.h"
#include "reflease/schema.h"

/**
 * Fill @p p: version 1.1.0, @p name, @p owner on host "runner-1", @p phase,
 * @p token (32 hex), acquired at @p acquired_at and expiring at
 * @p expires_at (seconds since the epoch), TTL 300 s, 0 transitions, a
 * random nonce. The caller changes what its case needs.
 */
void payload_fill(lease_payload *p, const char *name, const char *owner, lease_phase phase,
                  const char *token, int64_t acquired_at, int64_t expires_at);

/**
 * The commit message of @p p for operation @p op (lease_message_build);
 * fails the test when it cannot be built. The caller frees it.
 */
char *payload_message(const lease_payload *p, lease_op op);

#endif
