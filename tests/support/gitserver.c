#define _GNU_SOURCE
/* Real git servers on 127.0.0.1 for tests (see gitserver.h). */
#include "gitserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testrepo.h"

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A loopback port nobody listens on right now (the server may still lose a
 * race for it: callers retry). */
static int free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int port_accepts(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* The servers' git global config (uploadpack.packObjectsHook). */
static char global_config[700];

/* Start argv in its own process group, output to @p log. */
static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		setpgid(0, 0);
		if (global_config[0])
			setenv("GIT_CONFIG_GLOBAL", global_config, 1);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* Wait up to 5 s for @p port; 0 when up, -1 when the server died or never came. */
static int wait_up(pid_t pid, int port)
{
	int i, st;

	for (i = 0; i < 250; i++) {
		if (port_accepts(port))
			return 0;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return -1;
		sleep_ms(20);
	}
	return -1;
}

static void stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(-*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

/* Start the server @p argv (output to @p log) on a free port, trying up to 5:
 * @p prepare(@p ctx, port) first writes what the server reads for that port.
 * *@p port and *@p pid are set. 0, or -1 when none came up. */
static int start_on_free_port(char *const argv[], const char *log, int *port, pid_t *pid,
                              int (*prepare)(void *ctx, int port), void *ctx)
{
	int attempt;

	for (attempt = 0; attempt < 5; attempt++) {
		*port = free_port();
		if (prepare(ctx, *port) < 0 || (*pid = spawn(argv, log)) < 0)
			return -1;
		if (wait_up(*pid, *port) == 0)
			return 0;
		stop(pid);
	}
	return -1;
}

/* git daemon's --port=PORT argument (ctx: its buffer of 32 bytes). */
static int daemon_port_arg(void *ctx, int port)
{
	snprintf(ctx, 32, "--port=%d", port);
	return 0;
}

static int start_daemon(gitserver *gs)
{
	char base[600], port[32], log[600];
	char *argv[] = {"git",
	                "daemon",
	                "--enable=receive-pack",
	                "--export-all",
	                "--reuseaddr",
	                "--informative-errors",
	                base,
	                "--listen=127.0.0.1",
	                port,
	                gs->root,
	                NULL};

	snprintf(base, sizeof(base), "--base-path=%s", gs->root);
	snprintf(log, sizeof(log), "%s/daemon.log", gs->root);
	return start_on_free_port(argv, log, &gs->daemon_port, &gs->daemon_pid, daemon_port_arg,
	                          port);
}

/* What lighttpd reads (start_http). */
typedef struct http_conf {
	const gitserver *gs;
	const char *conf, *users;
} http_conf;

/* lighttpd's configuration for @p port (ctx: an http_conf). */
static int write_http_conf(void *ctx, int port)
{
	const http_conf *h = ctx;
	FILE *f = fopen(h->conf, "w");

	if (!f)
		return -1;
	fprintf(f,
	        "server.document-root = \"%s\"\n"
	        "server.bind = \"127.0.0.1\"\n"
	        "server.port = %d\n"
	        "server.errorlog = \"%s/lighttpd.err\"\n"
	        "server.modules = (\"mod_alias\", \"mod_auth\", \"mod_authn_file\", "
	        "\"mod_cgi\", \"mod_setenv\", \"mod_accesslog\")\n"
	        /* each request's status and whether it carried credentials
	         * (gitserver_failed_logins) */
	        "accesslog.filename = \"%s/access.log\"\n"
	        "accesslog.format = \"%%s %%{Authorization}i %%U\"\n"
	        "alias.url = (\"/git/\" => \"/usr/lib/git-core/git-http-backend/\", "
	        "\"/auth/\" => \"/usr/lib/git-core/git-http-backend/\")\n"
	        "cgi.assign = (\"\" => \"\")\n"
	        "auth.backend = \"plain\"\n"
	        "auth.backend.plain.userfile = \"%s\"\n"
	        "auth.require = (\"/auth/\" => (\"method\" => \"basic\", \"realm\" => "
	        "\"git\", \"require\" => \"valid-user\"))\n"
	        "setenv.add-environment = (\"GIT_PROJECT_ROOT\" => \"%s\", "
	        "\"GIT_HTTP_EXPORT_ALL\" => \"1\", \"GIT_CONFIG_GLOBAL\" => \"%s\")\n",
	        h->gs->root, port, h->gs->root, h->gs->root, h->users, h->gs->root, global_config);
	fclose(f);
	return 0;
}

static int start_http(gitserver *gs)
{
	char conf[600], users[600], log[600];
	char *argv[] = {"lighttpd", "-D", "-f", conf, NULL};
	const char *lighttpd =
	        access("/usr/sbin/lighttpd", X_OK) == 0 ? "/usr/sbin/lighttpd" : NULL;
	http_conf h = {gs, conf, users};

	if (!lighttpd)
		return -1;
	argv[0] = (char *)lighttpd;
	snprintf(conf, sizeof(conf), "%s/lighttpd.conf", gs->root);
	snprintf(users, sizeof(users), "%s/users", gs->root);
	snprintf(log, sizeof(log), "%s/lighttpd.log", gs->root);
	{
		FILE *f = fopen(users, "w");
		if (!f)
			return -1;
		fprintf(f, "%s:%s\n", GITSERVER_AUTH_USER, GITSERVER_AUTH_TOKEN);
		fclose(f);
	}
	return start_on_free_port(argv, log, &gs->http_port, &gs->http_pid, write_http_conf, &h);
}

/* uploadpack.packObjectsHook for the servers: a repository holding a file
 * move-on-fetch ("<ref> <oid>") has that ref moved once, after upload-pack
 * accepted the client's wants and before the pack is built. */
static int write_pack_hook(gitserver *gs)
{
	char hook[700];
	FILE *f;

	snprintf(hook, sizeof(hook), "%s/pack-hook.sh", gs->root);
	snprintf(global_config, sizeof(global_config), "%s/server.gitconfig", gs->root);
	if (!(f = fopen(hook, "w")))
		return -1;
	fprintf(f, "#!/bin/sh\n"
	           "d=$(git rev-parse --git-dir)\n"
	           "if [ -f \"$d/move-on-fetch\" ]; then\n"
	           "  read -r ref oid < \"$d/move-on-fetch\"\n"
	           "  rm -f \"$d/move-on-fetch\"\n"
	           "  git update-ref \"$ref\" \"$oid\"\n"
	           "fi\n"
	           "exec \"$@\"\n");
	fclose(f);
	if (chmod(hook, 0755) < 0 || !(f = fopen(global_config, "w")))
		return -1;
	fprintf(f, "[uploadpack]\n\tpackObjectsHook = %s\n", hook);
	fclose(f);
	return 0;
}

int gitserver_start(gitserver *gs)
{
	const char *tmp = getenv("TMPDIR");
	int n;

	memset(gs, 0, sizeof(*gs));
	if (!tmp || !*tmp)
		tmp = "/tmp";
	n = snprintf(gs->root, sizeof(gs->root), "%s/reflease-test-srv-XXXXXX", tmp);
	if (n < 0 || (size_t)n >= sizeof(gs->root) || !mkdtemp(gs->root))
		return -1;
	if (write_pack_hook(gs) < 0 || start_daemon(gs) < 0 || start_http(gs) < 0) {
		gitserver_stop(gs);
		return -1;
	}
	return 0;
}

static int read_line(const char *path, char *out, size_t outlen)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(out, (int)outlen, f) != NULL;
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return ok ? 0 : -1;
}

int gitserver_start_ssh(gitserver *gs)
{
	char dir[600], conf[700], cmd[3000], log[700], hostpub[1024], kh[700];
	char *sshd_argv[] = {"/usr/sbin/sshd", "-D", "-e", "-f", conf, NULL};
	char *agent_argv[] = {"ssh-agent", "-D", "-a", gs->agent_sock, NULL};
	int attempt, i;
	FILE *f;

	if (access("/usr/sbin/sshd", X_OK) != 0)
		return -1;
	snprintf(dir, sizeof(dir), "%.500s/ssh", gs->root);
	snprintf(gs->ssh_home, sizeof(gs->ssh_home), "%.500s/home", dir);
	snprintf(gs->agent_sock, sizeof(gs->agent_sock), "%.500s/agent.sock", dir);
	snprintf(cmd, sizeof(cmd),
	         "mkdir -p '%s/.ssh' && cd '%s' && ssh-keygen -q -t ed25519 -N '' -f hostkey && "
	         "ssh-keygen -q -t ed25519 -N '' -f userkey && cp userkey.pub authorized_keys",
	         gs->ssh_home, dir);
	if (strchr(dir, '\'') || testrepo_sh(cmd) != 0)
		return -1;
	(void)mkdir("/run/sshd", 0755); /* sshd's privilege separation directory */
	snprintf(conf, sizeof(conf), "%s/sshd_config", dir);
	snprintf(log, sizeof(log), "%s/sshd.log", dir);
	for (attempt = 0; attempt < 5; attempt++) {
		if (!(f = fopen(conf, "w")))
			return -1;
		gs->ssh_port = free_port();
		fprintf(f,
		        "Port %d\nListenAddress 127.0.0.1\nHostKey %s/hostkey\n"
		        "AuthorizedKeysFile %s/authorized_keys\nPasswordAuthentication no\n"
		        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
		        "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n"
		        "PidFile %s/sshd.pid\n",
		        gs->ssh_port, dir, dir, dir);
		fclose(f);
		if ((gs->ssh_pid = spawn(sshd_argv, log)) < 0)
			return -1;
		if (wait_up(gs->ssh_pid, gs->ssh_port) == 0)
			break;
		stop(&gs->ssh_pid);
	}
	if (!gs->ssh_pid)
		return -1;
	snprintf(kh, sizeof(kh), "%s/hostkey.pub", dir);
	if (read_line(kh, hostpub, sizeof(hostpub)) < 0)
		goto fail;
	*strrchr(hostpub, ' ') = '\0'; /* drop the comment */
	snprintf(kh, sizeof(kh), "%s/.ssh/known_hosts", gs->ssh_home);
	if (!(f = fopen(kh, "w")))
		goto fail;
	fprintf(f, "[127.0.0.1]:%d %s\n", gs->ssh_port, hostpub);
	fclose(f);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	if ((gs->agent_pid = spawn(agent_argv, log)) < 0)
		goto fail;
	for (i = 0; i < 250 && access(gs->agent_sock, F_OK) != 0; i++)
		sleep_ms(20);
	snprintf(cmd, sizeof(cmd), "SSH_AUTH_SOCK='%s' ssh-add -q '%s/userkey' 2>/dev/null",
	         gs->agent_sock, dir);
	if (testrepo_sh(cmd) != 0)
		goto fail;
	return 0;
fail:
	stop(&gs->agent_pid);
	stop(&gs->ssh_pid);
	return -1;
}

void gitserver_stop(gitserver *gs)
{
	stop(&gs->agent_pid);
	stop(&gs->ssh_pid);
	stop(&gs->daemon_pid);
	stop(&gs->http_pid);
	if (gs->root[0])
		testrepo_remove(gs->root);
	gs->root[0] = '\0';
}

int gitserver_repo(gitserver *gs, const char *name, char *path, size_t pathlen)
{
	char dir[700], cmd[2400];

	snprintf(dir, sizeof(dir), "%s/%s.git", gs->root, name);
	if (strchr(dir, '\''))
		return -1;
	snprintf(cmd, sizeof(cmd),
	         "rm -rf '%s' && git init -q --bare '%s' && git -C '%s' config http.receivepack "
	         "true",
	         dir, dir, dir);
	if (testrepo_sh(cmd) != 0)
		return -1;
	if (path)
		snprintf(path, pathlen, "%s", dir);
	return 0;
}

void gitserver_url(const gitserver *gs, gitserver_kind kind, const char *name, char *out,
                   size_t outlen)
{
	switch (kind) {
	case GITSERVER_GIT:
		snprintf(out, outlen, "git://127.0.0.1:%d/%s.git", gs->daemon_port, name);
		break;
	case GITSERVER_HTTP:
		snprintf(out, outlen, "http://127.0.0.1:%d/git/%s.git", gs->http_port, name);
		break;
	case GITSERVER_HTTP_AUTH:
		snprintf(out, outlen, "http://127.0.0.1:%d/auth/%s.git", gs->http_port, name);
		break;
	case GITSERVER_SSH: {
		struct passwd *pw = getpwuid(getuid());
		snprintf(out, outlen, "ssh://%s@127.0.0.1:%d%s/%s.git", pw ? pw->pw_name : "root",
		         gs->ssh_port, gs->root, name);
		break;
	}
	default: snprintf(out, outlen, "file://%s/%s.git", gs->root, name); break;
	}
}

int gitserver_hook(gitserver *gs, const char *name, const char *hook, const char *script)
{
	char path[900];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.git/hooks/%s", gs->root, name, hook);
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f, "#!/bin/sh\n%s\n", script);
	fclose(f);
	return chmod(path, 0755) == 0 ? 0 : -1;
}

int gitserver_move_on_fetch(gitserver *gs, const char *name, const char *ref, const char *oid_hex)
{
	char path[900];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.git/move-on-fetch", gs->root, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f, "%s %s\n", ref, oid_hex);
	return fclose(f) == 0 ? 0 : -1;
}

/* Ask the HTTP server for @p path (any answer); 0 when it was sent. */
static int http_get(int port, const char *path)
{
	struct sockaddr_in sa;
	char req[256], buf[512];
	int s = socket(AF_INET, SOCK_STREAM, 0), rc = -1;

	if (s < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    write(s, req, strlen(req)) == (ssize_t)strlen(req)) {
		while (read(s, buf, sizeof(buf)) > 0)
			;
		rc = 0;
	}
	close(s);
	return rc;
}

/* Count the failed logins in the access log once @p marker is in it. */
static int count_failed(const char *log, const char *marker, int *seen)
{
	char line[1024];
	FILE *f = fopen(log, "r");
	int n = 0;

	*seen = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, marker))
			*seen = 1;
		if (strncmp(line, "401 ", 4) == 0 && strncmp(line + 4, "- ", 2) != 0)
			n++;
	}
	fclose(f);
	return n;
}

int gitserver_failed_logins(const gitserver *gs)
{
	static int seq;
	char path[600], marker[64];
	int n = 0, seen = 0, i;

	/* lighttpd buffers its access log: a marker request, then wait until
	 * the log holds it (everything before it is written by then) */
	snprintf(path, sizeof(path), "%s/access.log", gs->root);
	snprintf(marker, sizeof(marker), "/flush-marker-%d-%d", (int)getpid(), ++seq);
	if (http_get(gs->http_port, marker) < 0)
		return -1;
	for (i = 0; i < 250 && !seen; i++) {
		n = count_failed(path, marker, &seen);
		if (!seen)
			sleep_ms(20);
	}
	return seen ? n : -1;
}
