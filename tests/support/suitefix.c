/* A suite's cases in one call each (suitefix.h). */
#include "support/suitefix.h"

#include <stdarg.h>

static void add_case(Suite *s, const char *name, int timeout_s, const suitefix_fixture *fixture,
                     va_list ap)
{
	TCase *tc = tcase_create(name);
	const suitefix_test *t;

	if (fixture && fixture->unchecked)
		tcase_add_unchecked_fixture(tc, fixture->setup, fixture->teardown);
	else if (fixture)
		tcase_add_checked_fixture(tc, fixture->setup, fixture->teardown);
	if (timeout_s > 0)
		tcase_set_timeout(tc, timeout_s);
	while ((t = va_arg(ap, const suitefix_test *)) != NULL) {
		if (t->end > 0)
			tcase_add_loop_test(tc, t->test, t->start, t->end);
		else
			tcase_add_test(tc, t->test);
	}
	suite_add_tcase(s, tc);
}

void suitefix_add(Suite *s, const char *name, int timeout_s, const suitefix_fixture *fixture, ...)
{
	va_list ap;

	va_start(ap, fixture);
	add_case(s, name, timeout_s, fixture, ap);
	va_end(ap);
}

Suite *suitefix_suite(const char *suite, const char *name, int timeout_s,
                      const suitefix_fixture *fixture, ...)
{
	Suite *s = suite_create(suite);
	va_list ap;

	va_start(ap, fixture);
	add_case(s, name, timeout_s, fixture, ap);
	va_end(ap);
	return s;
}
