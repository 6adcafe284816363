/**
 * @file http.h (internal)
 * A small HTTP client for the GitHub backend (protocol.md §9 github): one
 * reused libcurl easy handle (keep-alive), GitHub's headers, bounded response
 * bodies, TLS verification always on, plain http:// only towards loopback.
 * The credential is held here and nowhere else: it is never logged, never
 * put into an error message, and libcurl's verbose mode is never enabled.
 */
#ifndef REFLEASE_HTTP_H
#define REFLEASE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "reflease/common.h"

/** Default cap on a response body, bytes (style.md §10). */
#define LEASE_HTTP_BODY_CAP (16u * 1024u * 1024u)

/** An HTTP client. Opaque; free with lease__http_free(). */
typedef struct lease_http lease_http;

/** How a request ended at the transport level. */
typedef enum lease_http_result {
	LEASE_HTTP_OK = 0,        /**< a complete response was received (any status) */
	LEASE_HTTP_NOT_SENT = 1,  /**< nothing was sent (resolve/connect failed): safe to resend */
	LEASE_HTTP_UNANSWERED = 2 /**< the request may have reached the server: outcome unknown */
} lease_http_result;

/** One response. Free with lease__http_response_clear(). */
typedef struct lease_http_response {
	lease_http_result result;
	long status;          /**< HTTP status; 0 when result != LEASE_HTTP_OK */
	char *body;           /**< NUL-terminated body, owned (may be NULL) */
	size_t body_len;      /**< bytes, without the NUL */
	int64_t date;         /**< `Date` header, seconds since the epoch; -1 absent */
	long retry_after;     /**< `retry-after`, seconds; -1 absent */
	long rl_remaining;    /**< `x-ratelimit-remaining`; -1 absent */
	int64_t rl_reset;     /**< `x-ratelimit-reset`, seconds since the epoch; -1 absent */
	long rl_limit;        /**< `x-ratelimit-limit`; -1 absent (issue 39 item 5) */
	long rl_used;         /**< `x-ratelimit-used`; -1 absent */
	char rl_resource[32]; /**< `x-ratelimit-resource` ("core", "graphql", ...), or "" */
	int64_t date_mono_ms; /**< monotonic time (ms) when the response was complete */
	int body_overflow;    /**< the body passed the cap (result is UNANSWERED) */
	char next_url[1024];  /**< `Link: <URL>; rel="next"` (pagination), or "" */
	char location[1024];  /**< `Location` (a redirect's target, never followed here), or "" */
	char error[256];      /**< libcurl's reason when result != LEASE_HTTP_OK */
	char etag[128];       /**< `ETag` header (a validator for If-None-Match), or "" */
	int tls_failed;       /**< the server's certificate did not verify, or the CA
	                           bundle could not be used (result NOT_SENT): a
	                           configuration error, never worth a retry (issue 24) */
	int proxy_auth;       /**< the proxy's answer to CONNECT when it refused the tunnel
	                           for credentials (407) or by its rules (403), else 0
	                           (result NOT_SENT) */
} lease_http_response;

/**
 * Check that @p url may be used: https://, or http:// towards a loopback
 * address (127.0.0.0/8, ::1, localhost). Anything else is refused.
 * @return 0, or LEASE_ECONFIG with a message in @p err (the URL, never a credential)
 */
int lease__http_check_url(const char *url, char *err, size_t errlen);

/**
 * libcurl's part of lease_global_init(), and the one a github: store needs
 * (issue 43): once per process (pthread_once), dlopen() the libcurl built
 * against (its soname, REFLEASE_CURL_SONAME) and curl_global_init
 * (CURL_GLOBAL_DEFAULT). Every function of this file that calls libcurl
 * reaches it through here or after lease__http_new(); later calls return the
 * first call's result.
 * @param err  on failure, why, naming the library and the package to install
 *             (NULL: no message)
 * @return 0, or LEASE_ECONFIG (libcurl absent, too old or not initialised)
 */
int lease__http_global_init(char *err, size_t errlen);

/**
 * Test hook: the soname lease__http_global_init() loads, before its first
 * call (a unit test names an absent library to see the error). Borrowed.
 */
void lease__http_set_soname(const char *soname);

/**
 * Create a client sending `Authorization: Bearer <token>` with every request.
 * @param token  copied; NULL or "" sends no Authorization header
 * @return 0, LEASE_ENOMEM, LEASE_ECONFIG (libcurl unusable)
 */
int lease__http_new(lease_http **out, const char *token, char *err, size_t errlen);

/**
 * Trust the certificate authorities of @p file (a PEM bundle) and @p dir (a
 * directory of hashed certificates) instead of libcurl's built-in system
 * store (issue 24 item 1; the store options' ca_bundle and ca_dir, which the
 * CLI takes from --ca-bundle / REFLEASE_CA_BUNDLE, CURL_CA_BUNDLE,
 * SSL_CERT_FILE, SSL_CERT_DIR in curl's order). NULL or "" leaves that one
 * unset. A bundle replaces the system store (as with curl --cacert): a
 * corporate bundle must hold the public roots too. Verification itself is
 * never turned off.
 */
void lease__http_set_ca(lease_http *h, const char *file, const char *dir);

/**
 * The clock @p h stamps its answers with (lease_http_response.date_mono_ms):
 * @p clk's mono_ms (copied; the store options' clock), NULL = CLOCK_MONOTONIC.
 */
void lease__http_set_clock(lease_http *h, const lease_clock *clk);

/**
 * Replace the credential of @p h (a rotated token, issue 24 item 6): the old
 * copy is wiped. @param token as for lease__http_new()
 * @return 0, LEASE_ECONFIG (whitespace or controls inside), LEASE_ENOMEM
 */
int lease__http_set_token(lease_http *h, const char *token, char *err, size_t errlen);

/** 1 when @p token (trimmed as lease__http_new() trims it) is the one @p h sends. */
int lease__http_token_is(const lease_http *h, const char *token);

/**
 * 1 when @p a and @p b have the same origin (scheme, host and port, the
 * default port filled in; RFC 6454), 0 otherwise or when either does not parse.
 */
int lease__http_same_origin(const char *a, const char *b);

/** Set the body cap, bytes (0 = LEASE_HTTP_BODY_CAP). */
void lease__http_set_body_cap(lease_http *h, size_t cap);

/**
 * Send one request and wait for its answer. Never resends on its own (beyond
 * what libcurl does when a reused connection dies before any answer byte).
 * @param method      "GET", "POST", ...
 * @param url         checked with lease__http_check_url() first
 * @param body        JSON request body or NULL
 * @param timeout_ms  bound on the whole request, ms (> 0)
 * @return 0 with @p resp filled (see resp->result), LEASE_ECONFIG (URL
 *         refused), LEASE_ENOMEM
 */
int lease__http_request(lease_http *h, lease_http_response *resp, const char *method,
                        const char *url, const char *body, long timeout_ms);

/** Free what @p r owns and zero it. Accepts NULL. */
void lease__http_response_clear(lease_http_response *r);

/**
 * Send `If-None-Match: @p etag` with the next GET request through @p h only
 * (a conditional read, answered 304 when unchanged; GitHub does not count an
 * authorised 304 against the primary rate limit — docs.github.com, "Best
 * practices for using the REST API", conditional requests). @p etag is copied;
 * NULL, "", or a value with spaces, controls or non-ASCII sends nothing.
 * A test responder does not see the header.
 */
void lease__http_set_if_none_match(lease_http *h, const char *etag);

/**
 * Test hook (fuzzing and tests; never set in production): answer every
 * request without the network. @p fn gets the request and sets *raw /
 * *raw_len to one raw HTTP answer (status line, header lines, blank line,
 * body; borrowed until the next call), parsed by lease__http_parse_response().
 * It returns 0 (answered), 1 (nothing sent: as a refused connection) or 2
 * (no answer: outcome unknown). It changes no clock: a test that wants
 * retries and backoff to cost no time gives the store a virtual clock
 * (lease_store_options.clock). NULL removes the hook.
 */
typedef int (*lease_http_responder)(void *payload, const char *method, const char *url,
                                    const char *body, const char **raw, size_t *raw_len);
/** Install (or with NULL remove) the test responder on @p h. */
void lease__http_set_responder(lease_http *h, lease_http_responder fn, void *payload);

/**
 * Parse one raw HTTP answer (@p len bytes: status line, headers, blank line,
 * body) into @p resp exactly as lease__http_request() handles what libcurl
 * receives: the same header callbacks (Date, retry-after, x-ratelimit-*,
 * Link) and the body cap of @p h (past it: result UNANSWERED,
 * body_overflow). No network; the fuzz target tests/fuzz/fuzz_github.c
 * drives the GitHub client's response handling through it.
 * @return 0 (@p resp filled; free with lease__http_response_clear())
 */
int lease__http_parse_response(lease_http *h, lease_http_response *resp, const char *raw,
                               size_t len);

/** Number of requests sent through @p h (for request budgets). */
unsigned long lease__http_request_count(const lease_http *h);

/** Free the client. Accepts NULL. The token copy is wiped first. */
void lease__http_free(lease_http *h);

#endif
