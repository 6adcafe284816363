/* A log callback keeping what a store logs, for tests (logcap.h). */
#include "support/logcap.h"

#include <stdio.h>

char logcap_buf[LOGCAP_SIZE];
size_t logcap_len;

void logcap(int level, const char *msg, void *payload)
{
	int n;

	(void)payload;
	n = snprintf(logcap_buf + logcap_len, sizeof(logcap_buf) - logcap_len, "%d %s\n", level,
	             msg);
	if (n > 0 && (size_t)n < sizeof(logcap_buf) - logcap_len)
		logcap_len += (size_t)n;
}

void logcap_reset(void)
{
	logcap_len = 0;
	logcap_buf[0] = '\0';
}
