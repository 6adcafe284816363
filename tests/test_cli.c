/* The CLI's own formatting (cmd/reflease), linked into the runner alone. */
#include <check.h>

#include "../cmd/reflease/report.h"
#include "support/suitefix.h"

/* ---- workflow-command escaping ----------------------------------------------------------- */

START_TEST(annotation_escaping)
{
	char out[256];

	report_gha_escape(out, sizeof(out), "50% done\r\n::error::pwned", 0);
	ck_assert_str_eq(out, "50%25 done%0D%0A::error::pwned");
	report_gha_escape(out, sizeof(out), "a:b,c%\n", 1);
	ck_assert_str_eq(out, "a%3Ab%2Cc%25%0A");
	report_gha_escape(out, sizeof(out), "tab\there\x01", 0);
	ck_assert_str_eq(out, "tab%09here%01");
	/* truncation never splits an escape */
	report_gha_escape(out, 6, "ab%%%", 0);
	ck_assert_str_eq(out, "ab%25");
	ck_assert_uint_eq(report_gha_escape(out, 1, "x", 0), 0);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");

	suitefix_add(s, "cli", 0, NULL, ONE(annotation_escaping), NULL);
	return s;
}
