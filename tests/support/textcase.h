/**
 * @file textcase.h
 * A row of a table-driven test: an input text and the number expected of it
 * (1/0 for accepted/refused, a time, ...). Rows are static data; nothing is
 * owned or freed.
 *
 *     static const textcase t[] = {{"http://127.0.0.1", 1}, {"http://x", 0}};
 *     for (i = 0; i < TEXTCASES(t); i++)
 *             ck_assert_msg(accepts(t[i].text) == t[i].want, "%s", t[i].text);
 */
#ifndef REFLEASE_TEST_TEXTCASE_H
#define REFLEASE_TEST_TEXTCASE_H

#include <stddef.h>
#include <stdint.h>

/** One row: the input and what the code under test should make of it. */
typedef struct textcase {
	const char *text; /**< the input */
	int64_t want;     /**< the expected answer */
} textcase;

/** The number of rows of the array @p t (a size_t). */
#define TEXTCASES(t) (sizeof(t) / sizeof((t)[0]))

#endif
