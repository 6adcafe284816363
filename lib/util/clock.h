/**
 * @file clock.h (internal, lib/util: the tier the library and the CLI share)
 * The process's own clocks and sleeps (issue 17: one spelling for the
 * library and the CLI; issue 26: not public API, the CLI compiles lib/util
 * in as curl's tool compiles lib/curlx). These measure intervals on this
 * machine; they never decide whether a lease expired — that is the store's
 * time (protocol.md §4, lease_store_now()). Every function here only calls clock_gettime(2) or
 * nanosleep(2): async-signal-safe, and usable in a child between fork(2) and
 * exec. Wall time is read through libc, so libfaketime moves it.
 */
#ifndef REFLEASE_UTIL_CLOCK_H
#define REFLEASE_UTIL_CLOCK_H

#include <stdint.h>

/** Which clock lease__clock_seconds() reads. */
typedef enum lease_clock_id {
	/** CLOCK_MONOTONIC: intervals and waits; stops while the machine is suspended. */
	LEASE_CLOCK_MONOTONIC = 0,
	/** CLOCK_BOOTTIME: like MONOTONIC, but counts a suspend (run's lost deadline, protocol.md
	   §6). */
	LEASE_CLOCK_BOOTTIME = 1,
	/** CLOCK_REALTIME: wall time, seconds since the epoch (moved by libfaketime, NTP, an
	   admin). */
	LEASE_CLOCK_REALTIME = 2
} lease_clock_id;

/** Clock @p id, seconds with their fraction (a clock that cannot be read gives 0). */
double lease__clock_seconds(lease_clock_id id);

/** CLOCK_MONOTONIC, whole milliseconds: the clock of the library's waits and deadlines. */
int64_t lease__mono_ms(void);

/** How lease__sleep_ms() treats a signal that arrives during the sleep. */
typedef enum lease_sleep_mode {
	LEASE_SLEEP_FULL = 0,         /**< resume: sleep the whole time */
	LEASE_SLEEP_INTERRUPTIBLE = 1 /**< return at once, so the caller can look at the signal */
} lease_sleep_mode;

/**
 * Sleep @p ms milliseconds on the monotonic clock; <= 0 returns at once.
 * @return 0 (slept the whole time), or -1 when @p mode is
 *         LEASE_SLEEP_INTERRUPTIBLE and a signal cut the sleep short
 */
int lease__sleep_ms(int64_t ms, lease_sleep_mode mode);

#endif
