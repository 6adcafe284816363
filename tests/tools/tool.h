/* What the tools share (bench_*.c, chaos.c, maint_stress.c). Header-only:
 * each tool is built from its own file. */
#ifndef REFLEASE_TOOL_H
#define REFLEASE_TOOL_H

#include <stdint.h>
#include <time.h>

#include "reflease.h"

/* The monotonic clock, seconds. */
static inline double tool_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A store clock (lease_store_options.clock.now) reading the store time,
 * seconds since the epoch, from the int64_t its payload points at. */
static inline int64_t tool_clock(void *payload)
{
	return *(const int64_t *)payload;
}

/* Operation options for @p owner on @p host with a TTL of @p ttl_seconds. */
static inline lease_op_options tool_op(const char *owner, const char *host, int64_t ttl_seconds)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = owner;
	o.host = host;
	o.ttl_seconds = ttl_seconds;
	return o;
}

#endif
