# The shared library's SONAME and the Debian packages, made with
#   cmake -S . -B build-pkg -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr \
#     -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_BENCHMARKS=OFF
#   cmake --build build-pkg && (cd build-pkg && cpack -G DEB)
# (scripts/package-test.sh does this and installs the result on a clean
# Debian 12 root). One package per install COMPONENT:
#   runtime     libredlock<SOVERSION>  the shared library
#   dev         libredlock-dev         headers, CMake config, pkg-config file
#   tool        redlock                the command-line tool, its man page
#   prometheus  libredlock-prometheus-dev  redlock::prometheus (a static
#               archive, its header and CMake targets), when built
#
# SONAME policy: while MAJOR is 0, every MINOR release may break the ABI, so
# the SONAME carries MAJOR.MINOR (libredlock.so.0.1, package libredlock0.1);
# a PATCH release never breaks it. From 1.0 on, only MAJOR does, and the
# SONAME is MAJOR alone.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(REDLOCK_SOVERSION "${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
else()
  set(REDLOCK_SOVERSION "${PROJECT_VERSION_MAJOR}")
endif()
set_target_properties(redlock PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${REDLOCK_SOVERSION})

set(REDLOCK_PACKAGE_MAINTAINER "The redlock Authors <redlock@localhost>"
  CACHE STRING "Maintainer field of the Debian packages")

set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "The redlock Authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${REDLOCK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Redlock distributed lock across independent Redis masters")
set(CPACK_PACKAGE_INSTALL_DIRECTORY redlock)
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tool)
if(REDLOCK_HAS_PROMETHEUS)
  list(APPEND CPACK_COMPONENTS_ALL prometheus)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(REDLOCK_DEB_VERSION
  "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(REDLOCK_RUNTIME_PACKAGE "libredlock${REDLOCK_SOVERSION}")

# runtime: dpkg-shlibdeps names the libraries it links (hiredis, libevent,
# Abseil, libstdc++) as Debian packages, and a shlibs file lets other
# packages depend on it the same way. OpenSSL is loaded at run time
# (dlopen of libssl.so.3, for TLS masters), which dpkg-shlibdeps cannot
# see: libssl3 is named here.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${REDLOCK_RUNTIME_PACKAGE})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libssl3 (>= 3.0.0)")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "Redlock distributed lock across independent Redis masters (library)
 The redlock C++17 library: takes a lock on a named resource across N
 independent Redis masters with the Redlock algorithm and says how long it
 is safely valid.")

# dev: exactly what the installed redlockConfig.cmake and redlock.pc need
# for a shared libredlock: Abseil (the public headers use it and the
# exported target links it). hiredis and libevent stay inside the shared
# library (OpenSSL is loaded at run time), and no public header includes
# theirs.
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libredlock-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "${REDLOCK_RUNTIME_PACKAGE} (= ${REDLOCK_DEB_VERSION}), libabsl-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "pkg-config, cmake")
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "Redlock distributed lock across independent Redis masters (development)
 Headers, CMake package (find_package(redlock CONFIG), target
 redlock::redlock) and pkg-config file (redlock) of the redlock library.")

# tool: its libraries through dpkg-shlibdeps; libredlock is ours, found in
# the runtime package's staging directory.
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME redlock)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOL_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds libredlock.so.<SOVERSION> in the build tree (it
# belongs to no installed package: --ignore-missing-info, which CPack passes,
# lets it go; the Depends line below names it).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
set(CPACK_DEBIAN_TOOL_PACKAGE_DEPENDS
  "${REDLOCK_RUNTIME_PACKAGE} (= ${REDLOCK_DEB_VERSION})")
set(CPACK_COMPONENT_TOOL_DESCRIPTION
  "flock(1) across machines, on a Redlock over Redis masters
 redlock takes a Redlock on a named resource across N independent Redis
 masters and runs a command while holding it, or acquires, extends and
 releases locks for scripts, or shows what the masters hold.")

# prometheus: redlock::prometheus, a static archive; the consumer links
# prometheus-cpp itself.
set(CPACK_DEBIAN_PROMETHEUS_PACKAGE_NAME libredlock-prometheus-dev)
set(CPACK_DEBIAN_PROMETHEUS_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PROMETHEUS_PACKAGE_DEPENDS
  "libredlock-dev (= ${REDLOCK_DEB_VERSION}), prometheus-cpp-dev")
set(CPACK_COMPONENT_PROMETHEUS_DESCRIPTION
  "Redlock distributed lock: Prometheus metrics (development)
 redlock::PrometheusObserver (redlock/prometheus.h, CMake component
 prometheus of find_package(redlock)): Prometheus metrics of every
 acquisition, extension, loss and release, on prometheus-cpp.")

include(CPack)
