/**
 * @file util.h (internal)
 * Small helpers of lib/util, the tier the library and the CLI share (issue
 * 26; the CLI compiles lib/util in, as curl's tool compiles lib/curlx): hex
 * digits, the loopback policy, logging and bounded error messages. lib/util
 * includes nothing from lib/lease or lib/store (`make lint`).
 */
#ifndef REFLEASE_UTIL_H
#define REFLEASE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "reflease/common.h"
#include "util/clock.h" /* the clocks and sleeps */

/**
 * Days since 1970-01-01 of the proleptic Gregorian date @p y-@p m-@p d
 * (H. Hinnant's days_from_civil); no range check.
 */
int64_t lease__days_from_civil(int64_t y, int m, int d);

/** Value of hex digit @p c (0–15, either case), or -1. */
int lease__hex_digit(char c);

/**
 * 1 when @p host is a loopback host by parsing, never by prefix (issue 15):
 * `localhost` (any case, optional trailing dot), a numeric IPv4 address in
 * 127.0.0.0/8 (dotted quad, as inet_pton(3) reads it), `::1` or an
 * IPv4-mapped 127.0.0.0/8 address (with or without the URL's [brackets]).
 * Anything else — `127.example.com`, `localhost.example.com`, `127.1`, "" —
 * is 0. The one loopback policy of the library: plain http and the
 * credentials it would carry go only where this says 1 (protocol.md §9).
 */
int lease__host_is_loopback(const char *host);

/**
 * Pass the message @p fmt, @p ap (at most 1023 bytes) to @p log with
 * @p payload when @p log is set and @p level <= @p max_level; else nothing.
 * The one logging path of the store handle and the transports.
 */
void lease__vlog(lease_log_fn log, void *payload, int max_level, int level, const char *fmt,
                 va_list ap) __attribute__((format(printf, 5, 0)));

/**
 * The monotonic clock of an environment (lease_store_options.clock,
 * reflease/common.h), ms: @p c's mono_ms, else lease__mono_ms(). @p c may be NULL.
 */
int64_t lease__env_mono_ms(const lease_clock *c);
/**
 * Sleep @p ms milliseconds on @p c's clock (its sleep_ms, else
 * lease__sleep_ms()); <= 0 returns at once. @p c may be NULL.
 * @return 0, or -1 when @p mode is LEASE_SLEEP_INTERRUPTIBLE and a signal cut
 *         the sleep short
 */
int lease__env_sleep_ms(const lease_clock *c, int64_t ms, lease_sleep_mode mode);
/** 1 when @p c's sleep is injected (time passes only as the injector says), else 0. */
int lease__env_sleep_injected(const lease_clock *c);
/**
 * The fraction of a second of @p c's wall time, [0, 1): 0 under an injected
 * @p now (whole seconds), else CLOCK_REALTIME's (read through libc).
 */
double lease__env_wall_fraction(const lease_clock *c);

/**
 * The namespace rule (protocol.md §1): [a-z][a-z0-9-]{0,LEASE_NS_MAX - 1},
 * not ending in "-archive" or "-queue", not a word git, GitHub, GitLab or
 * Gerrit treat specially (heads, tags, ...). lib/util/names.c: the store
 * (lease_store_open) and the lease layer (lease_namespace_validate(),
 * reflease/schema.h, its public face) both call it. No I/O.
 * @return 0, or LEASE_EINVALID with the rule broken in @p err
 */
int lease__namespace_check(const char *ns, char *err, size_t errlen);

/**
 * The one error setter of the library (as jansson's one setter; curl's
 * Curl_failf): format a message into @p err (at most @p errlen bytes,
 * always NUL-terminated; a message cut short ends in "...",
 * lease__err_mark_cut()). Does nothing when @p err is NULL or @p errlen is 0
 * — which is how a store handle that already holds an error keeps the first
 * (deepest) one: lease__store_set_error() passes no buffer then (store/frontend.h).
 * The message says only what the error code does not (the code is
 * returned beside it, never spelled in it) and is written once, where the
 * failure is seen: no caller adds its own prefix to a message it got.
 * Never a credential.
 */
void lease__error_set(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/**
 * When a message of @p needed bytes (a vsnprintf result, NUL excluded) did
 * not fit in @p buf (@p len bytes), end the text kept with "..." so that a
 * reader sees it was cut. Does nothing when it fit or @p len < 8.
 */
void lease__err_mark_cut(char *buf, size_t len, int needed);

#endif
