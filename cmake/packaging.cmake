# `make deb`: a Debian package of t0fs built with CPack — the binary (also
# mount(8)'s helper mount.fuse.t0fs), man pages and shell completion
# generated from the CLI definition, systemd units, example configuration
# under /etc/t0fs, and the operator documentation.
include(GNUInstallDirs)

install(TARGETS t0fs RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# mount -t fuse.t0fs (and fstab lines of that type) run /sbin/mount.fuse.t0fs.
file(CREATE_LINK ../bin/t0fs ${PROJECT_BINARY_DIR}/mount.fuse.t0fs SYMBOLIC)
file(CREATE_LINK ../bin/t0fs ${PROJECT_BINARY_DIR}/mount.t0fs SYMBOLIC)
install(FILES ${PROJECT_BINARY_DIR}/mount.fuse.t0fs ${PROJECT_BINARY_DIR}/mount.t0fs
  DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(DIRECTORY ${PROJECT_BINARY_DIR}/share/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/share/completion/t0fs.bash
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions RENAME t0fs)
install(FILES ${PROJECT_BINARY_DIR}/share/completion/_t0fs
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/systemd/ DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/etc/t0fs.toml.example ${PROJECT_SOURCE_DIR}/deploy/etc/t0fs.env.example
  DESTINATION /etc/t0fs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/operations.md
  ${PROJECT_SOURCE_DIR}/docs/fuse.md ${PROJECT_SOURCE_DIR}/docs/metrics.md ${PROJECT_SOURCE_DIR}/docs/bench.md
  ${PROJECT_SOURCE_DIR}/docs/mlperf.md ${PROJECT_SOURCE_DIR}/docs/cluster.md ${PROJECT_SOURCE_DIR}/docs/tier0.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/grafana ${PROJECT_SOURCE_DIR}/deploy/prometheus
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/deploy)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME t0fs)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "t0fs developers <t0fs@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Tier 0 parallel file system over the NVMe drives of GPU servers")
set(CPACK_PACKAGE_DESCRIPTION
  "t0fs turns the local NVMe drives of GPU servers into one shared file system: a metadata\n"
  "service, data nodes, a FUSE mount with kernel passthrough, and t0fs bench.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fuse3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "fio, prometheus")
include(CPack)
