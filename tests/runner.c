/* The one Check runner: adds every tests/test_<module>.c suite and fails when
 * no test ran (style.md §15: a misspelled case runs nothing and exits 0). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define SUITE(m) Suite *m##_suite(void);
#include "suites.inc"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed, run;

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
