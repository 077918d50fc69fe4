# Install rules and the Debian package (CPack DEB): ./packaging/quickstart.sh package builds it.
#   /usr/bin/shardplan, /usr/bin/shardplanner
#   /usr/share/shardplan/{samples,calibration}   found by the programs through core/common/paths.h
#   desktop entry, icon, AppStream metainfo, bash completion, man page
include(GNUInstallDirs)

install(TARGETS shardplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(SHARDPLAN_BUILD_GUI)
  install(TARGETS shardplanner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY samples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/shardplan/samples)
install(DIRECTORY tests/data/calibration/ DESTINATION ${CMAKE_INSTALL_DATADIR}/shardplan/calibration)
install(FILES resources/io.github.shardplanner.ShardPlanner.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
configure_file(resources/io.github.shardplanner.ShardPlanner.metainfo.xml.in
               ${PROJECT_BINARY_DIR}/io.github.shardplanner.ShardPlanner.metainfo.xml @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/io.github.shardplanner.ShardPlanner.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES resources/shardplanner.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES packaging/bash-completion/shardplan DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# The man page is the program's own usage text (shardplan help), wrapped in roff by packaging/manpage.cmake.
# Compressed as Debian's policy asks (gzip -n: no time stamp, so the package is reproducible).
find_program(GZIP_EXECUTABLE gzip REQUIRED)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/shardplan.1 ${PROJECT_BINARY_DIR}/shardplan.1.gz
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:shardplan> -DVERSION=${PROJECT_VERSION}
          -DOUT=${PROJECT_BINARY_DIR}/shardplan.1 -P ${PROJECT_SOURCE_DIR}/packaging/manpage.cmake
  COMMAND ${GZIP_EXECUTABLE} -9nkf ${PROJECT_BINARY_DIR}/shardplan.1
  DEPENDS shardplan ${PROJECT_SOURCE_DIR}/packaging/manpage.cmake
  COMMENT "Man page from the usage text")
add_custom_target(manpage ALL DEPENDS ${PROJECT_BINARY_DIR}/shardplan.1.gz)
install(FILES ${PROJECT_BINARY_DIR}/shardplan.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shardplan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Shard Planner")
set(CPACK_PACKAGE_CONTACT "Shard Planner maintainers <maintainers@shardplanner.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Planner for the sharding of distributed LLM inference")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "Finds the parallelism degrees (TP, PP, DP, EP) and per-operator sharding with the highest throughput for\n"
    "a model on a GPU cluster under latency targets. Provides the shardplan command line and the shardplanner\n"
    "desktop program, with sample models, clusters and scenarios.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# dpkg-shlibdeps (dpkg-dev) turns the linked libraries into Depends, so apt pulls in Qt and yaml-cpp.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
