/**
 * @file store.h
 * The store handle: one opened lease store (local:, github:, remote:, or a
 * test transport), its namespace, clock, time bounds and last error
 * (protocol.md §3, §4, §9).
 */
#ifndef REFLEASE_STORE_H
#define REFLEASE_STORE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An opened store. Opaque; free with lease_store_free(). */
typedef struct lease_store lease_store;
/** A raw transport: the vtable a backend implements, defined in
 *  reflease/sys/transport.h for those implementing one. */
typedef struct lease_transport lease_transport;

/**
 * Initialise, once per process, both libraries the stores use: libgit2
 * (git_libgit2_init, fsync of the git directory on, no commit cache, the
 * network timeouts of remote: stores — protocol.md §9) and libcurl
 * (dlopen()ed by its soname, then curl_global_init). Opening or creating a
 * store initialises, once, only the library of its kind (issue 43): libgit2
 * for local: and remote:, libcurl for github: (not linked: a program that
 * opens no github: store never loads it). Each is done once (pthread_once)
 * and later calls return the first call's result. libcurl's own
 * initialisation is not safe beside other threads using libcurl (before
 * libcurl 7.84): a program with such threads calls this first, from one
 * thread. The CLI does not: it has no thread before its one store is open.
 * Nothing is shut down: the libraries stay initialised until the process
 * exits.
 * @return 0, LEASE_EINTERNAL (libgit2 could not be initialised),
 *         LEASE_ECONFIG (libcurl could not be loaded — absent or older than
 *         the version built against — or initialised)
 */
REFLEASE_EXTERN int lease_global_init(void);

#define LEASE_STORE_OPTIONS_VERSION 2

/**
 * Options for lease_store_open(). Initialise with LEASE_STORE_OPTIONS_INIT.
 *
 * They are the library's whole environment (issue 26): its clocks and sleep,
 * randomness, log and configuration. The library reads no environment
 * variable; the CLI maps its ENVIRONMENT (docs/cli.md) onto these fields. A
 * NULL or zero field means the default it names. Strings are borrowed for the
 * call: a store copies what it keeps.
 */
typedef struct lease_store_options {
	unsigned int version;
	const char *ns; /**< namespace; NULL = "leases" */
	/** clocks and sleep: wall time (NULL = the store's time, §4), monotonic
	 *  ms and the sleep of every verify poll, wait, pacing gap, backoff and
	 *  the heartbeat service (NULL = the process's; reflease/common.h) */
	lease_clock clock;
	lease_random random;   /**< injected randomness; fill == NULL = getrandom(2) */
	int verify_timeout_ms; /**< post-state verify window, ms; -1 = backend default */
	int timeout_s;         /**< bound on each store operation's retries, s; 0 = 120 */
	lease_log_fn log;      /**< NULL = silent */
	void *log_payload;
	int log_level; /**< highest level passed to log; default LEASE_LOG_WARN */
	/** github: credential (copied); NULL = read from github_token_file */
	const char *github_token;
	/** github: a file holding the token, read at open when github_token is
	 *  NULL and again on a 401 (a rotated token, issue 24 #6); NULL = none */
	const char *github_token_file;
	/** github: REST API base URL (https, or http towards loopback only);
	 *  NULL = https://api.github.com */
	const char *github_api_url;
	/** github: GraphQL URL, used only on the API URL's origin (elsewhere
	 *  ignored with a warning); NULL = derived from github_api_url */
	const char *github_graphql_url;
	/** remote: https credential (user x-access-token unless the URL names
	 *  one; never sent over plain http to a non-loopback host); NULL = none */
	const char *git_token;
	/** remote: the object cache directory (created 0700); NULL =
	 *  ~/.cache/reflease of the user's home in the user database */
	const char *cache_dir;
	/** https (github: and remote:): the CA bundle file trusted instead of
	 *  the system's, PEM; NULL = the system's */
	const char *ca_bundle;
	/** how error messages name ca_bundle's origin (e.g. "SSL_CERT_FILE");
	 *  NULL = "the CA bundle" */
	const char *ca_bundle_source;
	/** https: a directory of hashed CA certificates; NULL = none */
	const char *ca_dir;
} lease_store_options;

#define LEASE_STORE_OPTIONS_INIT                                                                   \
	{                                                                                          \
		LEASE_STORE_OPTIONS_VERSION, NULL, {NULL, NULL, NULL, NULL}, {NULL, NULL}, -1, 0,  \
		        NULL, NULL, LEASE_LOG_WARN, NULL, NULL, NULL, NULL, NULL, NULL, NULL,      \
		        NULL, NULL                                                                 \
	}

/**
 * Open the store named by @p spec: "local:PATH", "github:OWNER/REPO",
 * "remote:URL". The namespace in @p opts is validated before any I/O.
 * @param out   receives the handle, the caller's (lease_store_free())
 * @param err   receives a message on failure (may be NULL)
 * @return 0, LEASE_EINVALID (bad spec or namespace), LEASE_ECONFIG (no such
 *         repository, backend unavailable, no token), LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_store_open(lease_store **out, const char *spec,
                                     const lease_store_options *opts, char *err, size_t errlen);

/**
 * Open a store over an already-built transport: a user's own backend
 * (reflease/sys/transport.h), a test's or a benchmark's. Takes ownership of
 * @p transport: its free call runs in lease_store_free(), or before this
 * returns an error (a transport lacking free is refused and left untouched).
 * The transport is checked before any use: its version must be
 * LEASE_TRANSPORT_VERSION, its kind set, and every required call present
 * (write_commit, create_ref, replace_ref, delete_ref, read_ref, read_commit,
 * list_refs, last_error, free).
 * @param out  receives the handle, the caller's (lease_store_free()); NULL on failure
 * @param err  receives a message on failure naming what is wrong (may be NULL)
 * @return 0, LEASE_EINVALID (no transport, another vtable version, no kind,
 *         a required call missing, options of another version, bad
 *         namespace), LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_store_open_transport(lease_store **out, lease_transport *transport,
                                               const lease_store_options *opts, char *err,
                                               size_t errlen);

/**
 * Make @p path a lease store (protocol.md §9): an existing repository (bare,
 * or a working tree's, at @p path itself) only gets the settings below
 * (*@p created = 0, nothing added to a working tree); otherwise a bare
 * repository is created there (*@p created = 1). @p created may be NULL. Settings:
 * core.logAllRefUpdates=true (git maintenance is safe beside the store).
 * Never creates a repository inside another one's directory or working tree
 * (LEASE_ECONFIG). The CLI's `reflease init PATH` (cli.md).
 * @param err  receives the reason on failure, naming @p path (may be NULL)
 * @return 0, LEASE_ECONFIG, LEASE_EAUTH, LEASE_EINTERNAL
 */
REFLEASE_EXTERN int lease_store_init_local(const char *path, int *created, char *err,
                                           size_t errlen);

/** How many times lease_store_maintain() runs git gc at most. */
#define LEASE_MAINTAIN_RUNS 3

/** What lease_store_maintain() did (protocol.md §9 "Local store maintenance"). */
typedef struct lease_maintain_report {
	char path[4096]; /**< the repository git gc ran in (its common dir) */
	int runs;        /**< git gc runs: 1, more when git stopped on a ref that moved */
	/** the ref each run before the last stopped on, in order ("" after them) */
	char moved[LEASE_MAINTAIN_RUNS][256];
} lease_maintain_report;

/**
 * Pack a local store and prune unreachable objects older than @p grace_s
 * seconds (0: all; only when no writer runs): `git gc --quiet
 * --prune=S.seconds.ago` in the repository the store has open, git found on
 * PATH and run with LC_ALL=C and without LANGUAGE (its messages are then
 * git's stable wording whatever the user's locale). When git's ref walk
 * stops on a ref that reads again (it moved while git read it), git gc runs
 * again, LEASE_MAINTAIN_RUNS times at most (protocol.md §9 "Local store
 * maintenance", issues 29 and 40).
 * @param rep  receives the path, the runs and the refs git stopped on
 * @return 0 (packed), 1 (not a local store: its server maintains it),
 *         LEASE_EINVALID (negative grace), LEASE_ECONFIG (git not found),
 *         LEASE_EPAYLOAD (a ref points at an object the store lacks),
 *         LEASE_EINTERNAL (git failed, or stopped every time), LEASE_ENOMEM;
 *         lease_store_last_error() says why, with git's first line
 */
REFLEASE_EXTERN int lease_store_maintain(lease_store *st, int64_t grace_s,
                                         lease_maintain_report *rep);

/** Close the store and free everything it owns. Accepts NULL. */
REFLEASE_EXTERN void lease_store_free(lease_store *st);

/** The store's namespace (borrowed). */
REFLEASE_EXTERN const char *lease_store_namespace(const lease_store *st);
/** The backend kind: "local", "github", "remote", or a test transport's name (borrowed). */
REFLEASE_EXTERN const char *lease_store_kind(const lease_store *st);
/** The store's current time, seconds since the epoch (protocol.md §4). */
REFLEASE_EXTERN int64_t lease_store_now(lease_store *st);
/** Skew margin for takeover, seconds: 0 local, 5 github, 30 remote (protocol.md §4). */
REFLEASE_EXTERN int lease_store_skew_margin(const lease_store *st);
/** Lowest TTL a writer may grant on this store, seconds (5 local, 60 github/remote). */
REFLEASE_EXTERN int lease_store_ttl_min(const lease_store *st);
/**
 * The TTL a live write grants when none is asked for and no stored TTL is
 * kept, seconds (protocol.md §6): LEASE_TTL_DEFAULT_GITHUB (450) on github:,
 * whose writes count against the repository's request budget (issue 39),
 * else LEASE_TTL_DEFAULT (300). @p st NULL: LEASE_TTL_DEFAULT.
 */
REFLEASE_EXTERN int lease_store_ttl_default(const lease_store *st);
/** A request budget a store announced (GitHub's `x-ratelimit-*` headers; issue 39). */
typedef struct lease_budget {
	char resource[32]; /**< `x-ratelimit-resource`: "core" (REST), "graphql", ... */
	long limit;        /**< `x-ratelimit-limit`: requests (GraphQL: points) per window */
	long remaining;    /**< `x-ratelimit-remaining` at the last answer */
	long used;         /**< `x-ratelimit-used`; -1 when not announced */
	int64_t reset;     /**< `x-ratelimit-reset`, seconds since the epoch; -1 unknown */
} lease_budget;

/** Most budgets lease_store_budgets() keeps. */
#define LEASE_BUDGET_MAX 8

/**
 * What every budget warning of the library begins with (a LEASE_LOG_WARN
 * message through lease_store_options.log): the CLI turns these into GitHub
 * Actions `::warning` annotations. Warned once per process and budget when
 * less than 10 % of it remains (issue 39 item 5).
 */
#define LEASE_BUDGET_WARNING_PREFIX "GitHub request budget: "

/**
 * The request budgets @p st's answers announced, newest figures (github:
 * only; other stores announce none), copied into @p out (up to @p max).
 * @return how many budgets were seen (may exceed @p max)
 */
REFLEASE_EXTERN size_t lease_store_budgets(const lease_store *st, lease_budget *out, size_t max);
/** Highest TTL a writer may grant, seconds (86400). */
REFLEASE_EXTERN int lease_store_ttl_max(const lease_store *st);
/** Operation timeout, seconds (--timeout). */
REFLEASE_EXTERN int lease_store_timeout(const lease_store *st);
/** The store's injected randomness (borrowed). */
REFLEASE_EXTERN const lease_random *lease_store_random(const lease_store *st);

/**
 * Why the last call on this handle failed: the first (deepest) error of
 * that call, said once — a transport's own message verbatim when it gave
 * one, else the primitive's or the runtime's (protocol.md §3 "One error
 * channel"). Every public call taking @p st empties it when it begins. It
 * says what the returned code does not (lease_error_id() names the code);
 * never a credential. The lease operations copy it into
 * lease_result.message, so their callers need not ask here.
 * @return borrowed, valid until the next call on @p st; "" when none
 */
REFLEASE_EXTERN const char *lease_store_last_error(const lease_store *st);

/** Whether a failed write may have applied (protocol.md §3). */
typedef enum lease_outcome {
	LEASE_OUTCOME_KNOWN = 0,  /**< definitely not applied */
	LEASE_OUTCOME_UNKNOWN = 1 /**< may have applied: settle by re-reading (§5) */
} lease_outcome;

/** Detail of the last failed primitive (protocol.md §3). */
typedef struct lease_cas_error {
	char primitive[24]; /**< "cas_create", "cas_replace", ... */
	char ref[320];      /**< full ref name */
	int has_expected;   /**< expected oid meaningful */
	lease_oid expected;
	int observed_present; /**< 0 = the ref was absent when re-read */
	lease_oid observed;
	lease_outcome outcome;
	int noop; /**< the transport reported success (or presence) without acting */
} lease_cas_error;

/** The last primitive failure on this handle (borrowed; zeroed when none). */
REFLEASE_EXTERN const lease_cas_error *lease_store_last_cas_error(const lease_store *st);

#ifdef __cplusplus
}
#endif
#endif
