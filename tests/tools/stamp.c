/* stamp FILE [INTERVAL_MS]: the fence tests' tree member (fence_lib.sh,
 * t_run_lost.sh, t_run_set.sh). Forever: write the real time (milliseconds
 * since the epoch, CLOCK_REALTIME, a decimal line) to FILE.t, rename it onto
 * FILE (a reader sees a whole stamp or the previous one), then sleep
 * INTERVAL_MS (default 50). Ends only by a signal, as a shell loop of `date`,
 * `mv` and `sleep` did, but with one process instead of three execs per stamp
 * (issue 26: those execs were most of t_run_fence's CPU time). A member that
 * ignores SIGTERM sets that disposition in its shell and execs this (an
 * ignored signal stays ignored across exec). Exit 64 on bad arguments, 74 when
 * FILE cannot be written. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	char tmp[4096];
	long interval_ms = 50;
	struct timespec pause;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: stamp FILE [INTERVAL_MS]\n");
		return 64;
	}
	if (argc == 3) {
		char *end;
		errno = 0;
		interval_ms = strtol(argv[2], &end, 10);
		if (errno || *end || interval_ms < 1 || interval_ms > 60000) {
			fprintf(stderr, "stamp: INTERVAL_MS must be 1..60000, not '%s'\n", argv[2]);
			return 64;
		}
	}
	if (snprintf(tmp, sizeof tmp, "%s.t", argv[1]) >= (int)sizeof tmp) {
		fprintf(stderr, "stamp: FILE name too long\n");
		return 64;
	}
	pause.tv_sec = interval_ms / 1000;
	pause.tv_nsec = (interval_ms % 1000) * 1000000L;
	for (;;) {
		struct timespec now;
		FILE *f = fopen(tmp, "w");

		clock_gettime(CLOCK_REALTIME, &now);
		if (!f ||
		    fprintf(f, "%lld\n", (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000) <
		            0 ||
		    fclose(f) != 0 || rename(tmp, argv[1]) != 0) {
			perror("stamp");
			return 74;
		}
		while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
			;
		pause.tv_sec = interval_ms / 1000;
		pause.tv_nsec = (interval_ms % 1000) * 1000000L;
	}
}
