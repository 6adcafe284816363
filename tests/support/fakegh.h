/**
 * @file fakegh.h
 * A fake GitHub API server for tests and benchmarks (issue 6 item 5): REST
 * git data endpoints and the GraphQL queries/mutation reflease uses, on
 * 127.0.0.1 (ephemeral port), backed by a real bare repository (libgit2) so
 * object ids are real. It answers with GitHub's status codes, message
 * strings, `Date` and `x-ratelimit-*` headers, keeps a request log and
 * counters, and injects faults on demand. Runs inside the test process (a
 * libmicrohttpd thread) or as a process (tests/tools/fakegh.c), where the
 * control endpoints under /_fakegh/ drive it.
 */
#ifndef REFLEASE_FAKEGH_H
#define REFLEASE_FAKEGH_H

#include <stddef.h>
#include <stdint.h>

/** A running fake server. */
typedef struct fakegh fakegh;

/** Endpoint classes (for fault injection and counters). */
typedef enum fakegh_endpoint {
	FAKEGH_ANY = 0,      /**< every endpoint (faults) / all requests (counts) */
	FAKEGH_COMMIT_POST,  /**< POST /repos/O/R/git/commits */
	FAKEGH_COMMIT_GET,   /**< GET /repos/O/R/git/commits/SHA */
	FAKEGH_REF_GET,      /**< GET /repos/O/R/git/ref/REF */
	FAKEGH_REF_CREATE,   /**< POST /repos/O/R/git/refs */
	FAKEGH_REF_PATCH,    /**< PATCH /repos/O/R/git/refs/REF */
	FAKEGH_REF_DELETE,   /**< DELETE /repos/O/R/git/refs/REF */
	FAKEGH_MATCHING,     /**< GET /repos/O/R/git/matching-refs/PREFIX */
	FAKEGH_GQL_QUERY,    /**< POST /graphql, a query */
	FAKEGH_GQL_MUTATION, /**< POST /graphql, the updateRefs mutation */
	FAKEGH_OTHER,        /**< anything else (answered 404) */
	FAKEGH_N_ENDPOINTS
} fakegh_endpoint;

/** Injectable faults. */
typedef enum fakegh_fault_kind {
	FAKEGH_FAULT_5XX = 1,          /**< answer 502 (arg: another 5xx) before applying */
	FAKEGH_FAULT_DROP,             /**< apply, then close the connection without an answer */
	FAKEGH_FAULT_403_RETRY,        /**< 403 secondary rate limit, retry-after: arg s */
	FAKEGH_FAULT_403_RESET,        /**< 403 primary rate limit: remaining 0, reset in arg s */
	FAKEGH_FAULT_403_NOHDR,        /**< 403 secondary rate limit, no header at all */
	FAKEGH_FAULT_429_RETRY,        /**< 429, retry-after: arg s */
	FAKEGH_FAULT_429_NOHDR,        /**< 429 without any rate-limit header */
	FAKEGH_FAULT_GQL_RATE_LIMITED, /**< 200 with errors[].type RATE_LIMITED (arg > 0: reset in
	                                  arg s) */
	FAKEGH_FAULT_422_RULES, /**< 422 "Repository rule violations found" (GraphQL: errors[]) */
	FAKEGH_FAULT_401,       /**< 401 "Bad credentials" */
	FAKEGH_FAULT_403_FORBIDDEN, /**< 403 "Resource not accessible by integration" */
	FAKEGH_FAULT_409_EMPTY,     /**< 409 "Git Repository is empty." */
	FAKEGH_FAULT_NO_UPDATEREFS, /**< GraphQL schema without updateRefs (undefinedField) */
	FAKEGH_FAULT_STALL,         /**< wait arg ms, then answer normally */
	FAKEGH_FAULT_GQL_INTERNAL,  /**< GraphQL 200 "Something went wrong ... timeout", not applied
	                             */
	/* GitHub's answers as its users report them (issue 15; source next to each): */
	FAKEGH_FAULT_GQL_RATE_LIMIT,         /**< GraphQL 200, errors[].type RATE_LIMIT + code
	                                        graphql_rate_limit (octokit/plugin-throttling.js#824, #848;
	                                        githubkit#271); arg as for GQL_RATE_LIMITED */
	FAKEGH_FAULT_GQL_403_RATE_LIMIT,     /**< GraphQL 403 whose body has only errors[] (type
	                                        RATE_LIMIT), no `message`, no retry-after
	                                        (plugin-throttling.js#824 bodies); arg as above */
	FAKEGH_FAULT_GQL_UNTYPED_RATE_LIMIT, /**< GraphQL 200, errors[] with only a "API rate limit
	                                        exceeded" message, no type or code (issue 15 #2) */
	FAKEGH_FAULT_422_UPDATE_FAILED,      /**< REST create: 422 "Reference update failed", not
	                                        applied (github/rest-api-description#4887,
	                                        exercism/website#8248) */
	/* issue 24 (source next to each in fakegh.c): */
	FAKEGH_FAULT_HTML_200,  /**< applied, then answered 200 with a proxy's HTML page */
	FAKEGH_FAULT_407,       /**< 407 Proxy Authentication Required, not applied */
	FAKEGH_FAULT_403_ABUSE, /**< 403 "abuse detection mechanism" (older secondary-limit
	                           wording), no retry-after */
	/* issue 38: */
	FAKEGH_FAULT_GQL_REFUSED, /**< GraphQL updateRefs answered 200 with errors[] of a
	                             wording reflease does not know, not applied (GraphQL
	                             reports a failed mutation in errors[] of a 200: GitHub
	                             docs, "Forming calls with GraphQL"); a store that keeps
	                             refusing while nothing moves */
} fakegh_fault_kind;

/** What GraphQL shows of refs outside refs/heads/ and refs/tags/ (undocumented, issue 15 #3). */
typedef enum fakegh_gql_view {
	FAKEGH_GQL_SEES = 0,     /**< ref() and refs(refPrefix:) see every ref */
	FAKEGH_GQL_BLIND = 1,    /**< both see only refs/heads/ and refs/tags/ */
	FAKEGH_GQL_DISAGREE = 2, /**< refs(refPrefix:) counts the namespace, ref() answers null */
	FAKEGH_GQL_ELSEWHERE = 3 /**< ref(qualifiedName:"refs/x/y") answers refs/heads/y when that
	                            exists (a ref that is not the one asked for), else null */
} fakegh_gql_view;

/** Options for fakegh_start(). Zero-initialise, then set what you need. */
typedef struct fakegh_options {
	const char *repo_path;        /**< bare repository to serve; NULL = a fresh temporary one */
	int empty;                    /**< fresh repository without any commit (GitHub's 409s) */
	const char *owner;            /**< NULL = "octo" */
	const char *repo;             /**< NULL = "leases" */
	const char *token;            /**< expected bearer token; NULL = accept any non-empty one */
	int64_t time_offset_s;        /**< the server clock = time(2) + this, seconds */
	int graphql_blind;            /**< GraphQL `ref()` sees only refs/heads/ and refs/tags/ */
	fakegh_gql_view graphql_view; /**< when graphql_blind is 0 (default: sees all) */
	unsigned short port;          /**< 0 = ephemeral */
	int no_update_refs; /**< an old GHES: no updateRefs mutation (schema and mutation) */
	/** a broken server (reflease check, issue 40): updateRefs with force:true
	 *  ignores beforeOid (GitHub's documentation states force and beforeOid
	 *  only separately; a server that read them so would not compare) */
	int ignore_before_oid_when_forced;
	int page_size; /**< matching-refs in pages of this many refs + Link (0 = one page) */
	const char *tls_cert_pem; /**< with tls_key_pem: serve HTTPS with this certificate
	                             (PEM, a chain for localhost); the URL is then
	                             https://localhost:PORT */
	const char *tls_key_pem;  /**< the certificate's private key (PEM) */
	/** the fake's clock, ms: the request log's times (fakegh_log_time_ms) and
	 *  read lag (fakegh_set_read_lag) — a test's virtual clock
	 *  (tests/support/vclock.h); NULL = CLOCK_MONOTONIC. A stall
	 *  (FAKEGH_FAULT_STALL) is real time. */
	int64_t (*clock_ms)(void *payload);
	void *clock_payload;
} fakegh_options;

/**
 * Start a server on 127.0.0.1.
 * @return 0, or -1 (message on stderr: this is test support)
 */
int fakegh_start(fakegh **out, const fakegh_options *opts);
/**
 * fakegh_start() with @p opts (NULL = defaults) on the clock @p clock_ms
 * (fakegh_options.clock_ms, called with @p payload): a test's virtual time.
 * @return 0, or -1
 */
int fakegh_start_clocked(fakegh **out, const fakegh_options *opts,
                         int64_t (*clock_ms)(void *payload), void *payload);
/** Stop the server, remove a temporary repository. Accepts NULL. */
void fakegh_stop(fakegh *f);

/**
 * Accept only @p token from now on (NULL: any non-empty one): a rotated
 * credential, as a GitHub App's installation token is every hour (issue 24).
 */
void fakegh_set_token(fakegh *f, const char *token);

/** The bound port. */
unsigned short fakegh_port(const fakegh *f);
/** "http://127.0.0.1:PORT" ("https://localhost:PORT" with TLS; borrowed): the REST
 * base and, + "/graphql", GraphQL. */
const char *fakegh_url(const fakegh *f);
/** The bare repository's path (borrowed). */
const char *fakegh_repo_path(const fakegh *f);

/**
 * Add a fault: the next @p count requests of class @p ep (FAKEGH_ANY: any
 * class) get @p kind. Faults are consumed in the order added.
 */
void fakegh_fault(fakegh *f, fakegh_endpoint ep, fakegh_fault_kind kind, int count, int arg);
/** Remove every pending fault. */
void fakegh_clear_faults(fakegh *f);
/** Read lag: for @p ms after a ref write, reads show the ref's previous value. */
void fakegh_set_read_lag(fakegh *f, int ms);
/**
 * A renamed or transferred repository (issue 15 #4; the 301/307 answers
 * recorded in @octokit/fixtures "rename-repository"): REST under
 * /repos/OWNER/REPO/ answers 301 (GET) or 307 (other methods) with
 * `Location: <location_base>/<rest of the path>`. "" = this server's own
 * /repositories/4242 (always served); NULL = not moved. GraphQL follows
 * renames (repository(owner:, name:) keeps answering).
 */
void fakegh_set_moved(fakegh *f, const char *location_base);
/** Time (ms, CLOCK_MONOTONIC or the options' clock_ms) when log line @p i's request
 *  arrived; -1 if none. */
int64_t fakegh_log_time_ms(fakegh *f, size_t i);

/** Requests received of class @p ep (FAKEGH_ANY: all), control requests excluded. */
unsigned fakegh_count(fakegh *f, fakegh_endpoint ep);
/**
 * Requests GitHub would count against the primary rate limit: every request
 * but the 304s (each GET answered 200 carries an ETag; a GET whose
 * If-None-Match names it gets 304 Not Modified, which GitHub does not count
 * when authorised — docs.github.com, "Best practices for using the REST API").
 * @p not_modified (may be NULL) receives the number of 304s.
 */
unsigned fakegh_counted(fakegh *f, unsigned *not_modified);
/**
 * Content-creating requests received (GitHub's secondary limit: 80 a minute,
 * 500 an hour — docs.github.com, "Rate limits for the REST API", "About
 * secondary rate limits"): commit and ref writes and GraphQL mutations.
 */
unsigned fakegh_content_creating(fakegh *f);
/** Zero the counters and the log. */
void fakegh_reset_counts(fakegh *f);
/** Number of lines in the request log. */
size_t fakegh_log_size(fakegh *f);
/** Copy log line @p i ("METHOD PATH CLASS STATUS") into @p buf. 0 or -1. */
int fakegh_log_line(fakegh *f, size_t i, char *buf, size_t len);
/** Name of an endpoint class ("create", "updateRefs", ...). */
const char *fakegh_endpoint_name(fakegh_endpoint ep);
/** Parse a class name; -1 when unknown. */
int fakegh_endpoint_parse(const char *name);
/** Parse a fault name ("5xx", "drop", "403-retry", ...); -1 when unknown. */
int fakegh_fault_parse(const char *name);

/**
 * Test helpers acting on the repository directly (no request counted):
 * point @p refname at @p hex (NULL: delete it); write a blob and put its oid
 * into @p hex_out (41 bytes).
 */
int fakegh_set_ref(fakegh *f, const char *refname, const char *hex);
int fakegh_write_blob(fakegh *f, const char *content, char *hex_out);
/** Read @p refname into @p hex_out (41 bytes). 1 present, 0 absent, -1 error. */
int fakegh_get_ref(fakegh *f, const char *refname, char *hex_out);

#endif
