#!/bin/sh
# Debian roots made with debootstrap from the host's own Debian mirror, kept
# between runs under $REFLEASE_ROOTS (default /var/cache/reflease/roots), one
# directory per NAME (e.g. trixie, bookworm-minbase). .ci/run and the tests
# that need a clean Debian (tests/shell/t_action_bundle.sh) share them.
#
#   debroot.sh dir NAME                 print the root's directory; exit 1 when it is absent
#   debroot.sh ensure NAME SUITE [minbase|buildd|-]
#                                       debootstrap it when absent (into NAME.tmp, renamed
#                                       when complete, so an interrupted run leaves no root)
#   debroot.sh clone NAME NEW           NEW as a copy of NAME, unless NEW exists
#   debroot.sh refresh NAME             apt-get update + upgrade inside (a reused root)
#   debroot.sh copy NAME SRC DEST       SRC's files (git's tracked and untracked-not-ignored,
#                                       plus every node_modules) to DEST in the root, replaced
#   debroot.sh run NAME [--keep-env] [--bind DIR]... [VAR=VALUE]... -- CMD...
#                                       CMD in the root: chroot in a private mount namespace
#                                       (unshare -m: nothing stays mounted when it ends) with
#                                       /proc, /sys, /dev, /dev/pts and a fresh tmpfs /tmp,
#                                       each DIR (absolute) at the same path inside; a clean
#                                       environment (or the caller's, --keep-env) plus the
#                                       VAR=VALUE given
#   debroot.sh mirror                   the Debian mirror apt uses on this host
#
# Needs root, debootstrap (installed from Debian when missing), unshare and chroot.
# Package services never start inside a root (usr/sbin/policy-rc.d exits 101).
set -eu
ROOTS=${REFLEASE_ROOTS:-/var/cache/reflease/roots}

die() { echo "debroot: $*" >&2; exit 1; }
# apt_update, apt_install on the host: wait while another apt holds apt's locks
# shellcheck source=scripts/apt.sh disable=SC1091 # followed with shellcheck -x
. "$(dirname "$0")/apt.sh"

# The first main-archive URI of the host's apt sources (deb822 .sources or
# one-line sources.list); $REFLEASE_MIRROR wins; deb.debian.org otherwise.
mirror() {
  if [ -n "${REFLEASE_MIRROR:-}" ]; then echo "$REFLEASE_MIRROR"; return; fi
  m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' |
    tr ' ' '\n' | grep -E '/debian/?$' | head -n 1 || true)
  [ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\/debian\/\{0,1\}\)[[:space:]].*/\2/p' |
    head -n 1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

dir_of() {
  case $1 in *[!A-Za-z0-9._-]* | '' | .*) die "invalid root name '$1'" ;; esac
  echo "$ROOTS/$1"
}

present() { [ -f "$(dir_of "$1")/.reflease-root" ]; }

# Never start a package's service inside a root (lighttpd, sshd ...).
no_services() {
  printf '#!/bin/sh\nexit 101\n' >"$1/usr/sbin/policy-rc.d"
  chmod 755 "$1/usr/sbin/policy-rc.d"
}

ensure() {
  name=$1 suite=$2 variant=${3:--}
  d=$(dir_of "$name")
  present "$name" && return 0
  [ "$(id -u)" -eq 0 ] || die "making a root needs root"
  if ! command -v debootstrap >/dev/null 2>&1; then
    apt_install debootstrap || { apt_update && apt_install debootstrap; } || die "could not install debootstrap"
  fi
  mkdir -p "$ROOTS"
  rm -rf "$d.tmp"
  set -- --variant="${variant}"
  [ "$variant" != - ] || set --
  m=$(mirror)
  echo "debroot: debootstrap $* $suite $d ($m)" >&2
  t0=$(date +%s)
  if ! debootstrap "$@" "$suite" "$d.tmp" "$m" >"$ROOTS/$name.log" 2>&1; then
    tail -n 20 "$ROOTS/$name.log" >&2
    die "debootstrap $suite failed (log: $ROOTS/$name.log)"
  fi
  no_services "$d.tmp"
  printf 'suite=%s\nvariant=%s\nmirror=%s\ncreated=%s\nseconds=%s\n' "$suite" "$variant" "$m" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(($(date +%s) - t0))" >"$d.tmp/.reflease-root"
  mv "$d.tmp" "$d"
  echo "debroot: $name made in $(($(date +%s) - t0)) s" >&2
}

clone() {
  src=$(dir_of "$1") dst=$(dir_of "$2")
  present "$2" && return 0
  present "$1" || die "no root $1 to copy"
  rm -rf "$dst.tmp"
  cp -a "$src" "$dst.tmp"
  mv "$dst.tmp" "$dst"
}

run() {
  name=$1
  shift
  d=$(dir_of "$name")
  present "$name" || die "no root $name under $ROOTS (debroot.sh ensure)"
  keep=0
  binds=""
  while :; do
    case ${1:-} in
    --keep-env) keep=1; shift ;;
    --bind)
      case ${2:-} in /?*) ;; *) die "run: --bind needs an absolute directory" ;; esac
      [ -d "$2" ] || die "run: --bind $2: no such directory"
      binds="$binds $2"
      shift 2
      ;;
    *) break ;;
    esac
  done
  n=0
  for a in "$@"; do
    [ "$a" = -- ] && break
    case $a in [A-Za-z_]*=*) n=$((n + 1)) ;; *) die "run: expected VAR=VALUE or --, got '$a'" ;; esac
  done
  [ $n -lt $# ] || die "run: -- CMD missing"
  cp /etc/resolv.conf "$d/etc/resolv.conf" 2>/dev/null || true
  no_services "$d"
  # Inside the chroot: env (-i unless --keep-env), the VAR=VALUE words, then CMD
  # (the -- between them is dropped below).
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  unshare --mount --propagation private sh -c '
    set -e
    d=$1 n=$2 keep=$3 binds=$4
    shift 4
    mount -t proc proc "$d/proc"
    mount --rbind /sys "$d/sys"
    mount --rbind /dev "$d/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$d/tmp"
    for b in $binds; do
      mkdir -p "$d$b"
      mount --bind "$b" "$d$b"
    done
    i=0
    for a in "$@"; do
      shift
      if [ $i -eq "$n" ]; then i=$((i + 1)); continue; fi # the --
      set -- "$@" "$a"
      i=$((i + 1))
    done
    if [ "$keep" = 1 ]; then exec chroot "$d" /usr/bin/env "$@"; fi
    exec chroot "$d" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"' \
    debroot "$d" "$n" "$keep" "$binds" "$@"
}

refresh() {
  run "$1" DEBIAN_FRONTEND=noninteractive -- sh -c \
    'apt-get update -qq && apt-get -y -qq -o Dpkg::Options::=--force-confold upgrade >/dev/null'
}

copy() {
  d=$(dir_of "$1")
  src=$2 dest=$3
  present "$1" || die "no root $1"
  case $dest in /*) ;; *) die "copy: DEST must be absolute" ;; esac
  rm -rf "${d:?}$dest"
  mkdir -p "$d$dest"
  if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$d$dest" -xf -
  else
    tar -C "$src" --exclude='./build*' --exclude=./node_modules -cf - . | tar -C "$d$dest" -xf -
  fi
  # node_modules (the Action's validators and harness, the Octokit replay) is
  # platform-independent JavaScript: copied, so that no npm ci runs inside
  (cd "$src" && find . -path ./build -prune -o -type d -name node_modules -prune -print) |
    while IFS= read -r nm; do
      mkdir -p "$d$dest/${nm%/node_modules}"
      cp -a "$src/$nm" "$d$dest/$nm"
    done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
dir) [ $# -eq 1 ] || die "usage: dir NAME"; present "$1" || exit 1; dir_of "$1" ;;
ensure) [ $# -ge 2 ] || die "usage: ensure NAME SUITE [VARIANT]"; ensure "$@" ;;
clone) [ $# -eq 2 ] || die "usage: clone NAME NEW"; clone "$@" ;;
refresh) [ $# -eq 1 ] || die "usage: refresh NAME"; refresh "$1" ;;
copy) [ $# -eq 3 ] || die "usage: copy NAME SRC DEST"; copy "$@" ;;
run) [ $# -ge 3 ] || die "usage: run NAME [--keep-env] [--bind DIR]... [VAR=VALUE]... -- CMD..."; run "$@" ;;
mirror) mirror ;;
*) die "usage: debroot.sh dir|ensure|clone|refresh|copy|run|mirror ... (see the script's header)" ;;
esac
