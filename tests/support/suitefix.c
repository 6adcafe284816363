/* A suite's cases in one call each (suitefix.h). */
#include "support/suitefix.h"

#include <stdarg.h>

void suitefix_add(Suite *s, const char *name, int timeout_s, const suitefix_fixture *fixture, ...)
{
	TCase *tc = tcase_create(name);
	const suitefix_test *t;
	va_list ap;

	if (fixture && fixture->unchecked)
		tcase_add_unchecked_fixture(tc, fixture->setup, fixture->teardown);
	else if (fixture)
		tcase_add_checked_fixture(tc, fixture->setup, fixture->teardown);
	if (timeout_s > 0)
		tcase_set_timeout(tc, timeout_s);
	va_start(ap, fixture);
	while ((t = va_arg(ap, const suitefix_test *)) != NULL) {
		if (t->end > 0)
			tcase_add_loop_test(tc, t->test, t->start, t->end);
		else
			tcase_add_test(tc, t->test);
	}
	va_end(ap);
	suite_add_tcase(s, tc);
}
