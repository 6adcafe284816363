/* `run`'s output: the run object (cli.md "run"), the last lease result plus
 * how CMD and reflease ended, on stderr with --json or in --json-file F. */
#define _GNU_SOURCE
#include "cmd_set.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --json-file F must be writable before the lease is taken (F08): open it
 * now (created empty when missing, kept otherwise). */
int run_open_json_file(cli_ctx *ctx, const char *path, int *fd)
{
	struct stat sb;

	/* an output file that cannot be written is configuration (78), as for
	 * --summary (issue 23; cli.md exit table) */
	*fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (*fd < 0)
		return cli_fail(ctx, LEASE_ECONFIG, "--json-file %s: cannot write: %s", path,
		                strerror(errno));
	if (fstat(*fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return cli_fail(ctx, LEASE_ECONFIG, "--json-file %s is a directory; name a file",
		                path);
	}
	return 0;
}

/* Write the run object @p obj (taken) with how CMD and reflease ended.
 * With --json it is the last line of stderr; with --json-file F it goes to F. */
static void run_emit_obj(const run_out *o, json_t *obj, const char *reason, int exit_status,
                         int have_cmd, int cmd_status)
{
	json_object_set_new(obj, "reason", json_string(reason));
	json_object_set_new(obj, "exit_status", json_integer(exit_status));
	if (have_cmd) {
		json_t *c = json_object();
		if (WIFEXITED(cmd_status)) {
			json_object_set_new(c, "exit_code", json_integer(WEXITSTATUS(cmd_status)));
			json_object_set_new(c, "signal", json_null());
		} else {
			json_object_set_new(c, "exit_code", json_null());
			json_object_set_new(c, "signal", json_integer(WTERMSIG(cmd_status)));
		}
		json_object_set_new(obj, "command", c);
	}
	if (o->json_fd >= 0) {
		int fd = dup(o->json_fd);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			fprintf(stderr, "reflease run: --json-file %s: %s\n", o->json_file,
			        strerror(errno));
			if (fd >= 0)
				close(fd);
			json_decref(obj);
			return;
		}
		if (ftruncate(fd, 0) == 0)
			lseek(fd, 0, SEEK_SET);
		cli_emit_json(f, obj);
		if (fclose(f) != 0)
			fprintf(stderr, "reflease run: --json-file %s: %s\n", o->json_file,
			        strerror(errno));
	} else {
		fflush(stderr);
		cli_emit_json(stderr, obj);
	}
}

/* The run object: the last lease result (a set's answer for a set) plus how
 * CMD and reflease ended. */
void run_emit(const run_out *o, lease_store *st, lease_result *r, const run_names *rn, int rc,
              const char *reason, int exit_status, int have_cmd, int cmd_status)
{
	if (st && rn->n == 1)
		cli_result_fixup(r, st, rn->names[0], rc);
	if (!o->json && o->json_fd < 0)
		return;
	if (rc < 0 && strcmp(reason, "interrupted") == 0) {
		/* a wait stopped by a signal: the object of every interrupted wait
		 * (cli_interrupted_json, the member read last for a set) */
		lease_result *m = rn->n > 1 ? &rn->set->members[0] : r;

		if (st && rn->n > 1)
			cli_result_fixup(m, st, rn->names[0], rc);
		run_emit_obj(o, cli_interrupted_json(m), reason, exit_status, have_cmd, cmd_status);
		return;
	}
	run_emit_obj(o, rn->n > 1 ? set_result_json(rn->set) : cli_result_json(r), reason,
	             exit_status, have_cmd, cmd_status);
}
