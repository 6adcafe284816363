/**
 * @file common.h
 * Error codes, object ids, the injected clock and randomness, and logging:
 * the vocabulary shared by every reflease module.
 *
 * Conventions (style.md): functions return 0 on success or a negative
 * `LEASE_E*` code; out-parameters come first; `**out` results are the
 * caller's to free with the matching `_free`; `const` returns are borrowed.
 */
#ifndef REFLEASE_COMMON_H
#define REFLEASE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Marks a function of the public API (issue 26 item 1): the library is built
 * with -fvisibility=hidden, so libreflease.so exports exactly the functions
 * declared with this in the reflease/ headers (tests/shell/t_exports.sh).
 */
#if defined(__GNUC__) || defined(__clang__)
#define REFLEASE_EXTERN __attribute__((visibility("default")))
#else
#define REFLEASE_EXTERN
#endif

/**
 * Error codes returned (negated) by every reflease function. The code is
 * the outcome; the message beside it (lease_store_last_error(),
 * lease_result.message, or an err buffer a call fills) says only what the
 * code does not, and lease_error_id() spells the code.
 */
typedef enum lease_error_code {
	LEASE_OK = 0,
	LEASE_EHELD = -1,       /**< the lease is held (by another, or by this identity) */
	LEASE_ENOTHOLDER = -2,  /**< the presented token is not current / lease gone */
	LEASE_EEXPIRED = -3,    /**< the caller's own lease expired */
	LEASE_ECAS = -4,        /**< compare-and-swap failed (see lease_cas_error) */
	LEASE_EUNVERIFIED = -5, /**< post-state could not be verified in time */
	LEASE_EPAYLOAD = -6,    /**< malformed payload or commit message */
	LEASE_EVERSION = -7,    /**< payload written by an unsupported schema version */
	LEASE_EINVALID = -8,    /**< invalid argument: name, namespace, TTL, phase, option */
	LEASE_ENET = -9,        /**< store unreachable (network, 5xx) after retries */
	LEASE_EAUTH = -10,      /**< permission denied (401/403, repository rules) */
	LEASE_ERATELIMIT = -11, /**< rate limited past the deadline */
	LEASE_ECONFIG = -12,    /**< configuration: no store, no token, empty repository */
	LEASE_ENOTFOUND = -13,  /**< object or ref absent where one was required */
	LEASE_EEXISTS = -14,    /**< transport: the ref already exists (create) */
	LEASE_ENOMEM = -15,     /**< allocation failed or a bounded buffer overflowed */
	LEASE_EINTERNAL = -16,  /**< internal error (a bug, or an unexpected library error) */
	/** local store: a ref lock file (or packed-refs.lock) stayed held past
	 *  the lock wait (3 s) by a live writer, or is a foreign (git's) lock not
	 *  yet 60 s old; a crashed reflease writer's lock is removed at once
	 *  (protocol.md §9 "Ref locks and crashed writers"); the write was not
	 *  made (a known outcome). Temporary: exit 75. */
	LEASE_ELOCKED = -17
} lease_error_code;

/** Stable, lowercase identifier of an error code ("cas_failed", ...); never NULL. */
REFLEASE_EXTERN const char *lease_error_id(int code);

/** Raw size of an object id (SHA-1), bytes. */
#define LEASE_OID_RAWSZ 20
/** Hex size of an object id, characters (without the terminating NUL). */
#define LEASE_OID_HEXSZ 40

/** A git object id (SHA-1). The all-zero id means "absent". */
typedef struct lease_oid {
	unsigned char id[LEASE_OID_RAWSZ];
} lease_oid;

/**
 * Parse 40 lowercase or uppercase hex characters into @p out.
 * @return 0, or LEASE_EINVALID when @p hex is not exactly 40 hex digits.
 */
REFLEASE_EXTERN int lease_oid_fromhex(lease_oid *out, const char *hex);
/** Write the 40-character lowercase hex form plus NUL into @p out (41 bytes). */
REFLEASE_EXTERN void lease_oid_tohex(char out[LEASE_OID_HEXSZ + 1], const lease_oid *oid);
/** 1 when @p a and @p b are the same id, else 0. */
REFLEASE_EXTERN int lease_oid_equal(const lease_oid *a, const lease_oid *b);
/** 1 when @p oid is all zeroes (the "absent" id), else 0. */
REFLEASE_EXTERN int lease_oid_is_zero(const lease_oid *oid);

/**
 * Injected time (style.md §9): the clocks and the sleep of the library's
 * environment (lease_store_options). Each call NULL means the process's own;
 * all three get the one @p payload, so a test's virtual clock can make a sleep
 * move both clocks (no time passes for real).
 *
 * - @p now: wall time, seconds since the Unix epoch. NULL = "the store's own
 *   time" (protocol.md §4): a GitHub store's Date header plus the monotonic
 *   time since, else time(2) read through libc (so libfaketime moves it).
 * - @p mono_ms: monotonic time, milliseconds, for intervals, waits and
 *   deadlines (verify polls, --wait, --timeout, pacing, backoff, the
 *   heartbeat service). NULL = CLOCK_MONOTONIC.
 * - @p sleep_ms: sleep @p ms milliseconds (> 0) on that clock. With
 *   @p interruptible non-zero a signal may end it early (return -1, so the
 *   caller looks at the signal); else return 0 after the whole time. NULL =
 *   nanosleep(2).
 */
typedef struct lease_clock {
	int64_t (*now)(void *payload);
	void *payload;
	int64_t (*mono_ms)(void *payload);
	int (*sleep_ms)(int64_t ms, int interruptible, void *payload);
} lease_clock;

/**
 * Injected randomness: fill @p buf with @p len random bytes; return 0 or a
 * negative code. A NULL @p fill means getrandom(2).
 */
typedef struct lease_random {
	int (*fill)(unsigned char *buf, size_t len, void *payload);
	void *payload;
} lease_random;

/** Fill @p buf with @p len bytes from @p rnd (or getrandom(2) when NULL/unset). */
REFLEASE_EXTERN int lease_random_bytes(const lease_random *rnd, unsigned char *buf, size_t len);
/**
 * Write 2*@p nbytes lowercase hex characters of fresh randomness plus NUL into
 * @p out (which must hold 2*nbytes+1 bytes). Used for tokens (16 bytes) and
 * nonces (8 bytes), protocol.md §2.
 */
REFLEASE_EXTERN int lease_random_hex(char *out, size_t nbytes, const lease_random *rnd);

/** Log levels, most severe first. */
typedef enum lease_log_level {
	LEASE_LOG_ERROR = 0,
	LEASE_LOG_WARN = 1,
	LEASE_LOG_INFO = 2,
	LEASE_LOG_DEBUG = 3
} lease_log_level;

/**
 * Logging callback (style.md §12: a library never prints). @p msg is borrowed
 * for the call. reflease never passes a credential to it.
 */
typedef void (*lease_log_fn)(int level, const char *msg, void *payload);

#ifdef __cplusplus
}
#endif
#endif
