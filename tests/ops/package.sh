#!/usr/bin/env bash
# `make deb` builds a package that installs and works: the .deb is built with
# CPack from this build tree, unpacked into a temporary root (dpkg-deb -x),
# and from there: `t0fs --version` and `version --json` run; every command of
# `t0fs --help` has a man page that renders without warnings and names every
# option its `--help` names; the bash completion completes commands and
# options; the zsh completion parses; the systemd units pass
# `systemd-analyze verify`; mount.fuse.t0fs is a link to the binary.
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"
build=$(dirname "$T0FS")
work=$(mktemp -d /tmp/t0fs-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT

log "building the package (cpack)"
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log" >&2; fail "cpack"; }
deb=$(ls "$work"/out/t0fs_*.deb)
dpkg-deb -I "$deb" >"$work/info"
grep -q "^ Package: t0fs" "$work/info" || fail "package name"
grep -q "^ Depends:.*libc6" "$work/info" || fail "no shared-library dependencies computed: $(cat "$work/info")"
root="$work/root"
dpkg-deb -x "$deb" "$root"
t0fs="$root/usr/bin/t0fs"
[[ -x "$t0fs" ]] || fail "no /usr/bin/t0fs in the package"
log "package $(basename "$deb"): $(du -h "$deb" | cut -f1)"

"$t0fs" --version | grep -q "^t0fs [0-9]" || fail "--version: $("$t0fs" --version)"
"$t0fs" version --json | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in ("version", "git_commit", "build_type", "compiler", "kernel"):
    assert k in v, k
for k in ("release", "fuse_device", "passthrough", "fuse_io_uring"):
    assert k in v["kernel"], k
assert v["kernel"]["passthrough"] in ("yes", "no", "likely")
assert v["kernel"]["fuse_io_uring"] in ("enabled", "disabled", "absent")
print("version:", v["version"], v["git_commit"], v["build_type"], v["kernel"])
'
[[ "$(readlink -f "$root/usr/sbin/mount.fuse.t0fs")" == "$(readlink -f "$t0fs")" ]] ||
  fail "mount.fuse.t0fs is not a link to t0fs"

# Command paths from --help: "t0fs", "t0fs bench", "t0fs bench io", …
commands() { # commands PATH...: the subcommands listed by `t0fs PATH --help`
  "$t0fs" "$@" --help | awk '/^Subcommands:/ {s=1; next} s && /^  [a-z]/ {print $1} s && /^$/ {s=0}'
}
declare -a paths=("")
for sub in $(commands); do
  paths+=("$sub")
  for subsub in $(commands "$sub"); do paths+=("$sub $subsub"); done
done
((${#paths[@]} > 10)) || fail "only ${#paths[@]} commands found in --help"
man_dir="$root/usr/share/man/man1"
checked=0
for p in "${paths[@]}"; do
  page="$man_dir/t0fs${p:+-${p// /-}}.1"
  [[ -f "$page" ]] || fail "no man page for 't0fs $p' ($page)"
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || fail "groff failed on $page"
  [[ -z "$warnings" ]] || fail "groff warnings on $page: $warnings"
  text=$(MANWIDTH=200 man -l "$page" 2>/dev/null | col -b)
  # shellcheck disable=SC2086
  for opt in $("$t0fs" $p --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+'); do
    grep -qF -- "$opt" <<<"$text" || fail "man page of 't0fs $p' lacks $opt (in its --help)"
    checked=$((checked + 1))
  done
done
log "man pages: ${#paths[@]} commands, $checked options agree with --help"

# bash completion, as a shell would call it.
complete_words() { # complete_words WORD...: what completes the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _t0fs; echo "${COMPREPLY[*]}"' \
    _ "$root/usr/share/bash-completion/completions/t0fs" "$@"
}
[[ " $(complete_words t0fs ob) " == *" objective "* ]] || fail "bash: 't0fs ob' does not complete to objective"
[[ " $(complete_words t0fs bench "") " == *" mlperf "* ]] || fail "bash: 't0fs bench' lacks mlperf"
[[ " $(complete_words t0fs mount --pass) " == *" --passthrough "* ]] || fail "bash: 't0fs mount --pass'"
[[ " $(complete_words t0fs "") " != *" gen-docs "* ]] || fail "bash: the hidden gen-docs is offered"
zsh -n "$root/usr/share/zsh/vendor-completions/_t0fs" || fail "zsh completion does not parse"
log "completion ok (bash: commands and options; zsh: parses)"

units=("$root"/usr/lib/systemd/system/t0fs-*.service)
((${#units[@]} == 3)) || fail "expected 3 systemd units, found ${#units[@]}"
# The instance unit is verified as an instance; ExecStart paths resolve in the root.
verify=("$root/usr/lib/systemd/system/t0fs-meta.service" "$root/usr/lib/systemd/system/t0fs-data.service")
cp "$root/usr/lib/systemd/system/t0fs-mount@.service" "$work/t0fs-mount@mnt-t0fs.service"
# The root gets the host's standard targets (a real system has them) and
# man finds the package's pages (Documentation=man:… is checked).
cp -n /usr/lib/systemd/system/*.target "$root/usr/lib/systemd/system/"
out=$(MANPATH="$root/usr/share/man" SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --root="$root" "${verify[@]}" \
  "$work/t0fs-mount@mnt-t0fs.service" 2>&1) || fail "systemd-analyze verify: $out"
if grep -i "t0fs" <<<"$out"; then fail "systemd-analyze verify warns about our units"; fi
[[ -f "$root/etc/t0fs/t0fs.toml.example" ]] || fail "no example config"
# The Python module, when this build has it (pybind11 found), imports from
# the package's dist-packages.
if [[ -d "$build/python/t0fs" ]]; then
  out=$(PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
    'import t0fs, t0fs._t0fs; print(t0fs.__file__)') || fail "import t0fs from the package: $out"
  [[ "$out" == "$root/"* ]] || fail "t0fs imported from $out, not from the package"
  log "python: import t0fs from the package ok"
fi
log "systemd units verified; package ok"
