/**
 * @file logcap.h
 * A lease_log_fn for tests that keeps every line a store logs ("LEVEL
 * message\n", up to LOGCAP_SIZE bytes; later lines are dropped), so a test
 * can look for a message — or make sure a credential never appears.
 */
#ifndef REFLEASE_LOGCAP_H
#define REFLEASE_LOGCAP_H

#include <stddef.h>

/** Bytes kept. */
#define LOGCAP_SIZE (1 << 16)

/** What was logged since logcap_reset(), NUL-terminated. */
extern char logcap_buf[LOGCAP_SIZE];
/** Its length, bytes. */
extern size_t logcap_len;

/** The log callback (lease_store_options.log); @p payload is unused. */
void logcap(int level, const char *msg, void *payload);
/** Forget every line kept. */
void logcap_reset(void);

#endif
