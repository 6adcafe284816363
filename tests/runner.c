/* The one Check runner: adds every tests/test_<module>.c suite and fails when
 * no test ran (style.md §15: a misspelled case runs nothing and exits 0).
 *
 * A test case's time limit only guards against a hang: speed is checked by
 * `make bench`, never by a unit test. Check's own default (4 s) is close to
 * what a multi-process case takes in a sanitized build on a loaded machine
 * (3.9 s measured), so a case without its own limit gets 60 s unless
 * CK_DEFAULT_TIMEOUT says otherwise. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define SUITE(m) Suite *m##_suite(void);
#include "suites.inc"
#undef SUITE

int main(void)
{
	SRunner *sr;
	int failed, run;

	setenv("CK_DEFAULT_TIMEOUT", "60", 0); /* read by each tcase_create() */
	sr = srunner_create(NULL);

#define SUITE(m) srunner_add_suite(sr, m##_suite());
#include "suites.inc"
#undef SUITE
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
