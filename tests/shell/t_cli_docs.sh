#!/bin/sh
# Issue 19: the man page, docs/cli.md, the README and `--help` agree.
# - for every command `reflease --help` lists, the options of `reflease help
#   CMD` (usage line and option lines) are the options of the man page's entry
#   and of docs/cli.md's command table row; the global options likewise;
# - the exit statuses of cmd/reflease/cli.h (enum cli_exit) are exactly those
#   of the README's table, the man page's EXIT STATUS and docs/cli.md's table;
# - README.md and docs/*.md cite no file outside the repository (no
#   shared/design paths, every relative link exists, cli.md is docs/cli.md).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMPDIR" || exit 1
command -v groff >/dev/null 2>&1 || { echo "t_cli_docs: groff is needed"; exit 1; }
groff -man -Tascii -P-cbou -rLL=400n "$root/docs/reflease.1" >man.txt 2>/dev/null
"$REFLEASE" --help >main-help.txt
sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' main-help.txt >commands.txt
[ "$(wc -l <commands.txt)" -ge 15 ] || { echo "FAIL: too few commands in --help: $(cat commands.txt)"; exit 1; }
while read -r c; do "$REFLEASE" help "$c" >"help-$c.txt"; done <commands.txt

python3 - "$root" <<'PY'
import re, sys, os
root = sys.argv[1]
bad = []
opt = re.compile(r'(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b')
glob_only = {'--store', '--namespace', '--owner', '--host', '--json', '--timeout',
             '--verify-timeout', '--token-file', '--ca-bundle', '--help', '-v', '-q', '-V', '--version'}

def opts(text):
    return {o for o in opt.findall(text) if o != '--'} - glob_only

man = open('man.txt').read()
cmds = [l.strip() for l in open('commands.txt')]
sec = lambda t, a, b: t.split('\n' + a + '\n', 1)[1].split('\n' + b + '\n', 1)[0]
man_cmds = sec(man, 'COMMANDS', 'EXIT STATUS')
cli = open(os.path.join(root, 'docs/cli.md')).read()
for c in cmds:
    h = open('help-%s.txt' % c).read()
    usage = h.split('\n', 1)[0]
    block = h.split('\nOptions:\n', 1)[1].split('\nGlobal options', 1)[0] if '\nOptions:\n' in h else ''
    hopts = opts(usage) | opts('\n'.join(l.split()[0] for l in block.splitlines() if l.startswith('  -')))
    # options named in the usage line are described, and the other way round
    if opts(usage) != opts('\n'.join(l.split()[0] for l in block.splitlines() if l.startswith('  -'))) and block:
        bad.append('%s --help: usage line %s, option lines %s' % (c, sorted(opts(usage)), sorted(opts(block))))
    m = re.search(r'^       %s(?: |$)(.*)$' % re.escape(c), man_cmds, re.M)
    if not m:
        bad.append('man page: no entry for %s' % c); continue
    if opts(m.group(0)) != hopts:
        bad.append('%s: --help options %s, man page %s' % (c, sorted(hopts), sorted(opts(m.group(0)))))
    r = re.search(r'^\| `%s(?: [^`]*)?` \|' % re.escape(c), cli, re.M)
    if not r:
        bad.append('docs/cli.md: no command row for %s' % c)
    elif opts(r.group(0)) != hopts:
        bad.append('%s: --help options %s, docs/cli.md %s' % (c, sorted(hopts), sorted(opts(r.group(0)))))

# global options
mh = open('main-help.txt').read().split('Global options', 1)[1]
gh = set(o for l in mh.splitlines() if l.startswith('  -') for o in opt.findall(l.split('  ')[1]))
gman = set(o for l in sec(man, 'GLOBAL OPTIONS', 'COMMANDS').splitlines() if l.startswith('       -') for o in opt.findall(l.split('  ')[0] if '  ' in l.strip() else l))
gcli = set(opt.findall(cli.split('Global options', 1)[1].split('\n## ', 1)[0]))
for name, s in (('man page', gman), ('docs/cli.md', gcli)):
    if gh - s:
        bad.append('global options in --help but not in %s: %s' % (name, sorted(gh - s)))

# exit statuses
h = open(os.path.join(root, 'cmd/reflease/cli.h')).read()
enum = h.split('enum cli_exit {', 1)[1].split('};', 1)[0]
codes = set(int(x) for x in re.findall(r'=\s*(\d+)', enum))
def table_codes(text, head):
    part = text.split(head, 1)[1].split('\n\n', 1)[0]
    got = set()
    for line in part.splitlines()[2:]:
        got |= set(int(x) for x in re.findall(r'\d+', line.split('|')[1]))
    return got
readme = open(os.path.join(root, 'README.md')).read()
for name, got in (('README.md', table_codes(readme, '| status | meaning |')),
                  ('docs/cli.md', table_codes(cli, '| code | meaning |')),
                  ('man page', set(int(x) for l in sec(man, 'EXIT STATUS', 'ENVIRONMENT').splitlines()
                                   for m in [re.match(r'^       (\d+(?:, \d+)*)(?:  |$)', l)] if m
                                   for x in m.group(1).split(', ')))):
    if got != codes:
        bad.append('exit statuses: cli.h %s, %s %s' % (sorted(codes), name, sorted(got)))

# citations
docs = ['README.md'] + ['docs/' + f for f in os.listdir(os.path.join(root, 'docs')) if f.endswith('.md')]
for d in docs:
    t = open(os.path.join(root, d)).read()
    if 'shared/design' in t:
        bad.append('%s cites shared/design' % d)
    for target in re.findall(r'\]\(([^)#:]+)(?:#[^)]*)?\)', t):
        if not os.path.exists(os.path.join(root, os.path.dirname(d), target)):
            bad.append('%s links to %s, which is not in the repository' % (d, target))
    if d == 'README.md' and re.search(r'(?<![/\w])`?cli\.md', t):
        bad.append('README.md cites cli.md without its path docs/cli.md')
for b in bad:
    print('FAIL: ' + b)
sys.exit(1 if bad else 0)
PY
echo "t_cli_docs: ok ($(wc -l <commands.txt) commands)"
