# Passthrough mode of the POSIX tests (sourced after cluster.sh):
#   PASSTHROUGH=on   (default) the product's settings: placement=local files
#                    are one 64 GiB chunk, the mount hands them to the kernel
#   PASSTHROUGH=off  --passthrough false: every read and write goes through
#                    the mount (files of 1 MiB chunks)
# pt_cluster_start starts the single-node cluster accordingly;
# pt_check_used fails unless files were served by passthrough (mode on).
pt_cluster_start() {
  case "${PASSTHROUGH:-on}" in
    on) LOCAL_CHUNK_SIZE=64G cluster_start 1M "$@" ;;
    off) cluster_start 1M --passthrough false "$@" ;;
    *) fail "PASSTHROUGH must be on or off" ;;
  esac
}

# mount_state KEY: a field of the mount's user.t0fs.mount attribute.
mount_state() { mount_attr | sed -n "s/^$1=//p"; }

pt_check_used() {
  [[ "${PASSTHROUGH:-on}" == on ]] || return 0
  local opens
  opens=$(mount_state opens_passthrough)
  [[ "$(mount_state passthrough)" == on ]] || fail "passthrough is not on: $(mount_state passthrough)"
  ((opens > 0)) || fail "no file was opened by passthrough"
  log "passthrough: $opens opens served by the kernel, $(mount_state opens_cached) through the mount, $(mount_state opens_refused) refused"
}
