/* The one Check runner: adds every tests/test_<module>.c suite and fails when
 * no test ran (style.md §15: a misspelled case runs nothing and exits 0).
 *
 * A test case's time limit only guards against a hang: speed is checked by
 * `make bench`, never by a unit test. Check's own default (4 s) is close to
 * what a multi-process case takes in a sanitized build on a loaded machine
 * (3.9 s measured), so a case without its own limit gets 60 s unless
 * CK_DEFAULT_TIMEOUT says otherwise.
 *
 * The suites run REFLEASE_TEST_JOBS at a time (default 2), each in a worker
 * process that takes the next suite from a shared queue (a pipe of suite
 * numbers); each suite is its own process tree, as under one runner (Check
 * forks every test). A suite's result is printed when it ends (its failures
 * with Check's own output: failure lines "file:line:F:case:test:iteration:
 * message", its "N%: Checks" line prefixed with the suite's name and
 * followed by the suite's wall time), and
 * the last line is the total in Check's form ("100%: Checks: N, Failures: 0,
 * Errors: 0"). One suite (CK_RUN_SUITE, CK_RUN_CASE), a log file
 * (CK_LOG_FILE_NAME, CK_XML_LOG_FILE_NAME, CK_TAP_LOG_FILE_NAME), CK_FORK=no or
 * REFLEASE_TEST_JOBS=1 run everything in this process, one suite after the
 * other, as Check does by itself. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SUITE(m) Suite *m##_suite(void);
#include "suites.inc"
#undef SUITE

typedef struct suite_entry {
	const char *name;
	Suite *(*make)(void);
} suite_entry;

static const suite_entry suites[] = {
#define SUITE(m) {#m, m##_suite},
#include "suites.inc"
#undef SUITE
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

/* The slow suites, longest first (their wall times in `make check` on the
 * loaded 2-core machine, printed after each suite's Checks line: 84, 77, 71,
 * 36, 18, 15 and 10 s): the queue starts with them
 * so that the two workers end together rather than one finishing a long
 * suite alone at the end; every other suite follows in suites.inc's order.
 * A name here that is no suite is skipped (a renamed suite only loses its
 * place). */
static const char *const slow_first[] = {
        "remote", "github", "github_runtime", "local", "runtime", "wait", "reconcile",
};

/* What a worker reports back for one suite. */
typedef struct suite_count {
	int run, failures, errors;
} suite_count;

static int sequential(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed, run;
	size_t i;

	for (i = 0; i < NSUITES; i++)
		srunner_add_suite(sr, suites[i].make());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	run = srunner_ntests_run(sr);
	srunner_free(sr);
	if (run == 0) {
		fprintf(stderr, "test_runner: no test ran\n");
		return EXIT_FAILURE;
	}
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int wants_sequential(long jobs)
{
	static const char *const vars[] = {"CK_RUN_SUITE", "CK_RUN_CASE", "CK_LOG_FILE_NAME",
	                                   "CK_XML_LOG_FILE_NAME", "CK_TAP_LOG_FILE_NAME"};
	const char *fork_mode = getenv("CK_FORK");
	size_t i;

	if (jobs <= 1 || (fork_mode && strcmp(fork_mode, "no") == 0))
		return 1;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return 1;
	return 0;
}

/* Write all of @p len bytes (a pipe write of a result is one call when it
 * fits PIPE_BUF; a long failure report takes the print lock). */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Run suite @p i in this worker with Check's normal output captured in a
 * temporary file; print it under @p lock_fd (its "N%: Checks" line named
 * after the suite, so that the runner's total is the one unnamed such line);
 * send its counts on @p out_fd. */
static void run_one(size_t i, int lock_fd, int out_fd)
{
	SRunner *sr = srunner_create(suites[i].make());
	TestResult **trs;
	suite_count c = {0, 0, 0};
	FILE *cap = tmpfile();
	char *line = NULL;
	size_t cap_len = 0;
	int saved = dup(STDOUT_FILENO), k;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fflush(stdout);
	if (cap && saved >= 0)
		dup2(fileno(cap), STDOUT_FILENO);
	srunner_run_all(sr, CK_NORMAL);
	fflush(stdout);
	if (cap && saved >= 0)
		dup2(saved, STDOUT_FILENO);
	if (saved >= 0)
		close(saved);
	c.run = srunner_ntests_run(sr);
	trs = srunner_failures(sr);
	for (k = 0; trs && k < srunner_ntests_failed(sr); k++) {
		if (tr_rtype(trs[k]) == CK_ERROR)
			c.errors++;
		else
			c.failures++;
	}
	free(trs);
	srunner_free(sr);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	flock(lock_fd, LOCK_EX);
	if (cap) {
		rewind(cap);
		while (getline(&line, &cap_len, cap) > 0) {
			if (strncmp(line, "Running suite", 13) == 0)
				continue;
			if (strstr(line, "%: Checks: ") && line[0] >= '0' && line[0] <= '9') {
				line[strcspn(line, "\n")] = '\0';
				printf("%s: %s (%.1f s)\n", suites[i].name, line,
				       (double)(t1.tv_sec - t0.tv_sec) +
				               (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
				continue;
			}
			fputs(line, stdout);
		}
		fclose(cap);
	}
	fflush(stdout);
	flock(lock_fd, LOCK_UN);
	free(line);
	(void)write_all(out_fd, &c, sizeof(c));
}

/* The queue's order: slow_first's suites, then the others in suites.inc's
 * order; each suite once. */
static void queue_order(unsigned char *order)
{
	unsigned char taken[NSUITES] = {0};
	size_t n = 0, i, k;

	for (k = 0; k < sizeof(slow_first) / sizeof(slow_first[0]); k++)
		for (i = 0; i < NSUITES; i++)
			if (!taken[i] && strcmp(suites[i].name, slow_first[k]) == 0) {
				taken[i] = 1;
				order[n++] = (unsigned char)i;
			}
	for (i = 0; i < NSUITES; i++)
		if (!taken[i])
			order[n++] = (unsigned char)i;
}

static void worker(int queue_fd, int lock_fd, int out_fd)
{
	unsigned char idx;

	/* one byte per suite: a pipe read of one byte is taken by one worker */
	while (read(queue_fd, &idx, 1) == 1)
		if (idx < NSUITES)
			run_one(idx, lock_fd, out_fd);
}

static int parallel(long jobs)
{
	int queue[2], results[2], lock_fd;
	char lock_path[] = "/tmp/reflease-runner-XXXXXX";
	suite_count total = {0, 0, 0}, c;
	unsigned char order[NSUITES];
	long started = 0, k;
	size_t i;
	int status, ok = 1;

	if (NSUITES > 255) {
		fprintf(stderr, "test_runner: more than 255 suites\n");
		return EXIT_FAILURE;
	}
	if ((lock_fd = mkstemp(lock_path)) < 0 || pipe(queue) < 0 || pipe(results) < 0) {
		perror("test_runner");
		return EXIT_FAILURE;
	}
	unlink(lock_path);
	queue_order(order);
	for (i = 0; i < NSUITES; i++) {
		if (write_all(queue[1], &order[i], 1) < 0) {
			perror("test_runner: queue");
			return EXIT_FAILURE;
		}
	}
	close(queue[1]);
	fflush(stdout);
	for (k = 0; k < jobs && k < (long)NSUITES; k++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("test_runner: fork");
			ok = 0;
			break;
		}
		if (pid == 0) {
			close(results[0]);
			worker(queue[0], lock_fd, results[1]);
			_exit(0);
		}
		started++;
	}
	close(queue[0]);
	close(results[1]);
	while (read(results[0], &c, sizeof(c)) == (ssize_t)sizeof(c)) {
		total.run += c.run;
		total.failures += c.failures;
		total.errors += c.errors;
	}
	close(results[0]);
	for (k = 0; k < started; k++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			ok = 0;
	if (!ok)
		fprintf(stderr, "test_runner: a worker did not finish its suites\n");
	printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
	       total.run ? (total.run - total.failures - total.errors) * 100 / total.run : 0,
	       total.run, total.failures, total.errors);
	if (total.run == 0) {
		fprintf(stderr, "test_runner: no test ran\n");
		return EXIT_FAILURE;
	}
	return ok && total.failures == 0 && total.errors == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(void)
{
	const char *j = getenv("REFLEASE_TEST_JOBS");
	long jobs = 2;

	setenv("CK_DEFAULT_TIMEOUT", "60", 0); /* read by each tcase_create() */
	if (j && *j) {
		char *end;
		jobs = strtol(j, &end, 10);
		if (*end || jobs < 1 || jobs > 64) {
			fprintf(stderr,
			        "test_runner: REFLEASE_TEST_JOBS must be 1 to 64, not '%s'\n", j);
			return 64;
		}
	}
	return wants_sequential(jobs) ? sequential() : parallel(jobs);
}
