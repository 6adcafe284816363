/* GitHub workflow-command escaping (cli.md "GitHub Actions"): the CLI's
 * alone — the library never prints (style.md §12). Kept apart from report.c
 * so the unit tests link it alone. */
#include "report.h"

size_t report_gha_escape(char *out, size_t outlen, const char *in, int property)
{
	static const char hexd[] = "0123456789ABCDEF";
	size_t n = 0;
	const unsigned char *p;

	if (!outlen)
		return 0;
	for (p = (const unsigned char *)in; *p; p++) {
		int esc = *p == '%' || *p < 0x20 || *p == 0x7f ||
		          (property && (*p == ':' || *p == ','));
		size_t need = esc ? 3 : 1;

		if (n + need >= outlen)
			break;
		if (esc) {
			out[n++] = '%';
			out[n++] = hexd[*p >> 4];
			out[n++] = hexd[*p & 15];
		} else {
			out[n++] = (char)*p;
		}
	}
	out[n] = '\0';
	return n;
}
