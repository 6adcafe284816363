/* The rotation matrix's names (rotation.c, protocol.md §5): a value
 * outside the enum is named "unknown", never NULL (a %s of it is defined).
 * The names of the values themselves are checked in test_runtime.c. */
#include <check.h>

#include "lease/rotation.h"
#include "support/suitefix.h"

START_TEST(names_of_unknown_values)
{
	ck_assert_str_eq(lease__relation_name((lease_relation)42), "unknown");
	ck_assert_str_eq(lease__token_change_name((lease_token_change)42), "unknown");
}
END_TEST

Suite *rotation_faults_suite(void)
{
	return suitefix_suite("rotation_faults", "rotation_faults", 0, NULL,
	                      ONE(names_of_unknown_values), NULL);
}
