#define _DEFAULT_SOURCE
/* Temporary git repositories for tests (see testrepo.h). */
#include "testrepo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int testrepo_sh(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int testrepo_make(char *out, size_t outlen, testrepo_kind kind)
{
	const char *tmp = getenv("TMPDIR");
	char cmd[1024];
	int n;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	n = snprintf(out, outlen, "%s/reflease-test-XXXXXX", tmp);
	if (n < 0 || (size_t)n >= outlen || !mkdtemp(out))
		return -1;
	switch (kind) {
	case TESTREPO_EMPTY_DIR: return 0;
	case TESTREPO_BARE: snprintf(cmd, sizeof(cmd), "git init -q --bare '%s'", out); break;
	case TESTREPO_NONBARE:
		snprintf(cmd, sizeof(cmd),
		         "git init -q '%s' && git -C '%s' -c user.name=t -c user.email=t@t "
		         "commit -q --allow-empty -m init",
		         out, out);
		break;
	default: snprintf(cmd, sizeof(cmd), "git init -q '%s'", out); break;
	}
	return testrepo_sh(cmd) == 0 ? 0 : -1;
}

void testrepo_remove(const char *path)
{
	char cmd[1024];

	if (!path || !*path || strstr(path, "reflease-test-") == NULL || strchr(path, '\''))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	(void)testrepo_sh(cmd);
}

int testrepo_git(char *out, size_t outlen, const char *dir, const char *args)
{
	char cmd[4096];
	size_t len = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "git -C '%s' %s", dir, args);
	if (!(p = popen(cmd, "r")))
		return -1;
	if (out && outlen) {
		size_t n;
		while (len + 1 < outlen && (n = fread(out + len, 1, outlen - 1 - len, p)) > 0)
			len += n;
		out[len] = '\0';
	}
	{
		char sink[512];
		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	st = pclose(p);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}
