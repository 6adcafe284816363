/**
 * @file suitefix.h
 * A suite's cases in one call each (style.md §15: tests/test_<module>.c
 * exports Suite *<module>_suite(void)): a case with its time limit, its
 * fixture and its tests (loop tests with their range). Also declares every <module>_suite() the
 * runner adds (the build's suites.inc), so a test file need not.
 *
 *     Suite *wait_suite(void)
 *     {
 *             Suite *s = suite_create("wait");
 *
 *             suitefix_add(s, "runtime", 0, NULL, ONE(wakes_on_change),
 *                          LOOP(table_row, 0, NROWS), NULL);
 *             suitefix_add(s, "backends", 240, NULL, ONE(local_waiter), NULL);
 *             return s;
 *     }
 *
 * A suite of one case in one call: suitefix_suite().
 */
#ifndef REFLEASE_TEST_SUITEFIX_H
#define REFLEASE_TEST_SUITEFIX_H

#include <check.h>
#include <stddef.h>

#define SUITE(m) Suite *m##_suite(void);
#include "suites.inc"
#undef SUITE

/** A test of a case: run once (end 0), or as a loop test for _i in [start, end). */
typedef struct suitefix_test {
	const TTest *test;
	int start, end;
} suitefix_test;

/** Test @p t, run once (a suitefix_add() argument). */
#define ONE(t) (&(const suitefix_test){(t), 0, 0})
/** Test @p t, a loop test for _i in [@p s, @p e) (a suitefix_add() argument). */
#define LOOP(t, s, e) (&(const suitefix_test){(t), (s), (e)})

/** A case's fixture. */
typedef struct suitefix_fixture {
	void (*setup)(void);    /**< or NULL */
	void (*teardown)(void); /**< or NULL */
	int unchecked; /**< 0: run in each test's process (checked); 1: once for the case */
} suitefix_fixture;

/**
 * Add to @p s the case @p name (Check's TCase; CK_RUN_CASE names it) with a
 * per-test limit of @p timeout_s seconds (0: the runner's default), the
 * fixture @p fixture (NULL: none) and the tests that follow, each a
 * ONE(t) or LOOP(t, start, end), the last argument NULL.
 */
void suitefix_add(Suite *s, const char *name, int timeout_s, const suitefix_fixture *fixture, ...);

/**
 * A new suite @p suite (suite_create(); the caller, i.e. the runner, owns it)
 * of one case: the one suitefix_add(s, @p name, @p timeout_s, @p fixture,
 * ...) adds. For the suites of a single case:
 *
 *     Suite *cli_suite(void)
 *     {
 *             return suitefix_suite("cli", "cli", 0, NULL, ONE(annotation_escaping), NULL);
 *     }
 */
Suite *suitefix_suite(const char *suite, const char *name, int timeout_s,
                      const suitefix_fixture *fixture, ...);

#endif
