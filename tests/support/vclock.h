/**
 * @file vclock.h
 * A virtual clock for tests (issue 26): installed in a store's options
 * (lease_store_options.clock), every sleep of the library — verify polls,
 * waits, pacing gaps, backoff, rate-limit waits, the heartbeat service —
 * moves the clock instead of passing real time, so a test asserts gaps of
 * seconds (>= 1000 ms apart) in no time at all. Thread-safe (atomics).
 */
#ifndef REFLEASE_VCLOCK_H
#define REFLEASE_VCLOCK_H

#include <stdint.h>

#include "reflease/common.h"

/** Where a vclock's monotonic time starts, ms. */
#define VCLOCK_START_MS 1000000

/** A virtual clock: wall seconds and monotonic milliseconds that move together. */
typedef struct vclock {
	int64_t wall0_s;      /**< wall time at VCLOCK_START_MS, seconds since the epoch */
	int64_t mono_ms;      /**< virtual monotonic time, ms */
	int64_t slept_ms;     /**< total slept through the clock, ms */
	unsigned long sleeps; /**< number of sleeps */
} vclock;

/** Start @p v at wall time @p wall_s (0 = time(2) now) and monotonic VCLOCK_START_MS. */
void vclock_init(vclock *v, int64_t wall_s);

/**
 * Make @p c read and sleep on @p v: mono_ms and sleep_ms always; now too when
 * @p with_wall (else the store's own time stays: a GitHub store's Date
 * header plus @p v's monotonic time since it came).
 */
void vclock_apply(vclock *v, lease_clock *c, int with_wall);

/** @p v's monotonic time, ms. */
int64_t vclock_mono_ms(vclock *v);
/** vclock_mono_ms() as a callback (@p payload is the vclock), e.g. fakegh_options.clock_ms. */
int64_t vclock_ms_cb(void *payload);
/** Move @p v forward @p ms milliseconds (as a sleep would, without counting one). */
void vclock_advance(vclock *v, int64_t ms);

#endif
