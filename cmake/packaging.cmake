# What `cmake --install` lays out, and the Debian package CPack makes of it
# (scripts/package.sh; docs/packaging.md says what is in it and why).
include(GNUInstallDirs)

# The project has no mail address yet: .invalid (RFC 2606) says so. Whoever builds the
# package for their hosts names themselves with -DBERTH_PACKAGE_MAINTAINER="Name <mail>".
set(BERTH_PACKAGE_MAINTAINER "berth developers <berth@berth.invalid>" CACHE STRING
    "the .deb's Maintainer field, and its changelog's signature")

# berthd is a system daemon (sbin); berthctl is run by operators in the group berth (bin).
install(TARGETS berthd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(TARGETS berthctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Debian 12 keeps the packages' units in /lib/systemd/system (merged /usr or not).
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/berthd.socket
              ${PROJECT_SOURCE_DIR}/deploy/systemd/berthd.service
        DESTINATION /lib/systemd/system)

set(berth_doc_dir ${CMAKE_INSTALL_DATADIR}/doc/berth)
install(FILES ${PROJECT_SOURCE_DIR}/docs/running.md ${PROJECT_SOURCE_DIR}/deploy/debian/copyright
        DESTINATION ${berth_doc_dir})

# Debian wants documentation gzipped with -9 and no timestamp (-n), so the package's bytes
# depend on its inputs only.
set(berth_changelog ${PROJECT_BINARY_DIR}/packaging/changelog)
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/changelog.in ${berth_changelog} @ONLY)
add_custom_command(OUTPUT ${berth_changelog}.gz
  COMMAND gzip -9nf -k ${berth_changelog}
  DEPENDS ${berth_changelog}
  COMMENT "gzip changelog")
set(berth_packaging_files ${berth_changelog}.gz)
install(FILES ${berth_changelog}.gz DESTINATION ${berth_doc_dir})

# Man pages from the programs' own --help and --version, so they cannot drift from them.
# help2man is a package-time tool (scripts/install-deps.sh --test installs it); without it
# the build goes on and scripts/package.sh refuses to package.
find_program(HELP2MAN_PROGRAM help2man)
if(HELP2MAN_PROGRAM)
  foreach(program berthd berthctl)
    if(program STREQUAL berthd)
      set(summary "durable volumes for containers: Docker volume plugin, CSI driver and metrics")
    else()
      set(summary "inspect and operate a running berthd")
    endif()
    set(page ${PROJECT_BINARY_DIR}/packaging/${program}.8)
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${HELP2MAN_PROGRAM} --no-info --section 8 --name ${summary}
              --include ${PROJECT_SOURCE_DIR}/deploy/debian/${program}.h2m
              --output ${page} $<TARGET_FILE:${program}>
      COMMAND gzip -9nf ${page}
      DEPENDS ${program} ${PROJECT_SOURCE_DIR}/deploy/debian/${program}.h2m
      COMMENT "help2man ${program}(8)")
    list(APPEND berth_packaging_files ${page}.gz)
    install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
  endforeach()
else()
  message(STATUS "help2man not found: no man pages, and scripts/package.sh will refuse to package")
endif()
add_custom_target(packaging_files ALL DEPENDS ${berth_packaging_files})

# -- the .deb -------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME berth)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${BERTH_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "durable volumes for containers (Docker volume plugin, CSI driver)")
# CPack puts the summary above this as the synopsis line.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "berthd gives containers durable volumes: it serves the Docker volume plugin
 protocol (dockerd, ECS), the Container Storage Interface (Kubernetes) and
 Prometheus metrics, and keeps its state in a crash-safe journal. berthctl
 inspects and operates it. systemd holds its sockets (berthd.socket), so a
 restart never leaves dockerd facing a missing plugin socket.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The libraries' packages come from dpkg-shlibdeps. The packages of the helpers berthd runs
# come from the one list the image and the managed plugin also use (deploy/runtime/
# packages.txt), but for the essential ones (always installed, and lintian refuses an
# unversioned dependency on them) and the NFS helpers, only recommended: a host without NFS
# volumes needs none. The maintainer scripts need adduser and deb-systemd-helper.
set(berth_essential_packages coreutils util-linux tar)
set(berth_recommended_packages nfs-common)
set(berth_depends adduser "init-system-helpers (>= 1.54)")
set(berth_recommends)
file(STRINGS ${PROJECT_SOURCE_DIR}/deploy/runtime/packages.txt runtime_lines)
foreach(line IN LISTS runtime_lines)
  string(REGEX REPLACE "#.*" "" line "${line}")
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE "[ \t].*" "" package "${line}")
  if(package IN_LIST berth_essential_packages)
    continue()
  elseif(package IN_LIST berth_recommended_packages)
    list(APPEND berth_recommends ${package})
  else()
    list(APPEND berth_depends ${package})
  endif()
endforeach()
list(JOIN berth_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
list(JOIN berth_recommends ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
  ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
  ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
