/**
 * @file gitserver.h
 * Real git servers on 127.0.0.1 for tests of the remote backend: `git daemon
 * --enable=receive-pack` (git://) and `git http-backend` behind lighttpd's CGI
 * (http://, with a second path /auth/ behind HTTP basic authentication), both
 * serving the bare repositories of one temporary directory, which file:// URLs
 * reach directly. Each server runs in its own process group, stopped by
 * gitserver_stop().
 */
#ifndef REFLEASE_TEST_GITSERVER_H
#define REFLEASE_TEST_GITSERVER_H

#include <stddef.h>
#include <sys/types.h>

/** How a test reaches a repository. */
typedef enum gitserver_kind {
	GITSERVER_GIT = 0,  /**< git://127.0.0.1:<port>/<name>.git (git daemon) */
	GITSERVER_HTTP = 1, /**< http://127.0.0.1:<port>/git/<name>.git (lighttpd + http-backend) */
	GITSERVER_FILE = 2, /**< file://<root>/<name>.git */
	GITSERVER_HTTP_AUTH = 3, /**< http://127.0.0.1:<port>/auth/<name>.git (basic auth) */
	GITSERVER_SSH = 4        /**< ssh://<user>@127.0.0.1:<port><root>/<name>.git (sshd) */
} gitserver_kind;

/** User and password the /auth/ path accepts. */
#define GITSERVER_AUTH_USER  "x-access-token"
#define GITSERVER_AUTH_TOKEN "s3cret-token-for-tests"

/** Running servers. */
typedef struct gitserver {
	char root[512]; /**< directory of the served bare repositories */
	pid_t daemon_pid;
	int daemon_port;
	pid_t http_pid;
	int http_port;
	pid_t ssh_pid; /**< sshd, after gitserver_start_ssh() */
	int ssh_port;
	pid_t agent_pid;      /**< ssh-agent holding the client key */
	char ssh_home[600];   /**< HOME for clients: .ssh/known_hosts knows the host key */
	char agent_sock[600]; /**< SSH_AUTH_SOCK for clients */
} gitserver;

/**
 * Create a temporary root and start both servers on free loopback ports,
 * waiting until each accepts connections.
 * @return 0, or -1 (servers that did start are stopped)
 */
int gitserver_start(gitserver *gs);

/**
 * Also start sshd (/usr/sbin/sshd, on a free loopback port, key
 * authentication only, this user) and an ssh-agent holding the client key;
 * clients use HOME = ssh_home (its .ssh/known_hosts lists the host key) and
 * SSH_AUTH_SOCK = agent_sock.
 * @return 0, or -1 (nothing of it left running)
 */
int gitserver_start_ssh(gitserver *gs);

/** Stop both servers (SIGTERM to their process groups) and remove the root. */
void gitserver_stop(gitserver *gs);

/**
 * Create (or recreate, empty) the bare repository <root>/<name>.git, with
 * http.receivepack enabled; its path goes to @p path (may be NULL).
 * @return 0 or -1
 */
int gitserver_repo(gitserver *gs, const char *name, char *path, size_t pathlen);

/**
 * Failed logins the HTTP server has seen so far: requests answered 401 that
 * carried credentials (an Authorization header; a first request without any,
 * answered 401 with the challenge, is none). Hosts ban IPs for these.
 */
int gitserver_failed_logins(const gitserver *gs);

/** The URL of repository @p name reached as @p kind. */
void gitserver_url(const gitserver *gs, gitserver_kind kind, const char *name, char *out,
                   size_t outlen);

/**
 * Install @p script (a POSIX sh body, without the #! line) as hook @p hook
 * ("pre-receive", "post-receive", ...) of repository @p name.
 * @return 0 or -1
 */
int gitserver_hook(gitserver *gs, const char *name, const char *hook, const char *script);

/**
 * Arm a one-shot race in repository @p name: the next fetch that builds a
 * pack (git:// or http://) moves @p ref to @p oid_hex after upload-pack has
 * accepted the client's wants, before the objects are sent (through
 * uploadpack.packObjectsHook in the servers' global config).
 * @return 0 or -1
 */
int gitserver_move_on_fetch(gitserver *gs, const char *name, const char *ref, const char *oid_hex);

#endif
