# redlock::prometheus (include/redlock/prometheus.h): an Observer that keeps
# Prometheus metrics, on prometheus-cpp (Debian: prometheus-cpp-dev, 1.0.1,
# which brings libcivetweb-dev, zlib1g-dev and libcurl4-openssl-dev for its
# pull and push parts). Optional: built when the package is installed and
# REDLOCK_BUILD_PROMETHEUS is on; REDLOCK_HAS_PROMETHEUS says whether it was.
option(REDLOCK_BUILD_PROMETHEUS
  "Build redlock::prometheus when prometheus-cpp is installed" ON)

set(REDLOCK_HAS_PROMETHEUS OFF)
if(REDLOCK_BUILD_PROMETHEUS)
  find_package(prometheus-cpp CONFIG QUIET)
  if(TARGET prometheus-cpp::core AND TARGET prometheus-cpp::pull)
    set(REDLOCK_HAS_PROMETHEUS ON)
  else()
    message(STATUS "prometheus-cpp not found (Debian: prometheus-cpp-dev): "
                   "redlock::prometheus, its example and tests are not built")
  endif()
endif()

if(REDLOCK_HAS_PROMETHEUS)
  # Always a static archive, also beside a shared libredlock: it is small,
  # and so it needs no SONAME or runtime package of its own (Debian:
  # libredlock-prometheus-dev, cmake/packaging.cmake).
  add_library(redlock_prometheus STATIC src/prometheus/prometheus_observer.cc)
  add_library(redlock::prometheus ALIAS redlock_prometheus)
  # Built on the public headers only (cmake/layers.cmake).
  redlock_check_layering(TARGET redlock_prometheus FOLDERS src/prometheus
    ALLOWED "")
  # Installed as libredlock-prometheus, exported as redlock::prometheus.
  set_target_properties(redlock_prometheus PROPERTIES
    OUTPUT_NAME redlock-prometheus EXPORT_NAME prometheus)
  target_include_directories(redlock_prometheus
    PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(redlock_prometheus
    PUBLIC redlock prometheus-cpp::core
    PRIVATE absl::flat_hash_map absl::strings
            absl::status absl::statusor absl::time)
  target_compile_options(redlock_prometheus PRIVATE -Wall -Wextra
    -Wno-unused-parameter
    $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)

  install(TARGETS redlock_prometheus EXPORT redlockPrometheusTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT prometheus)
  install(FILES ${PROJECT_SOURCE_DIR}/include/redlock/prometheus.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/redlock COMPONENT prometheus)
  install(EXPORT redlockPrometheusTargets NAMESPACE redlock::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock COMPONENT prometheus)
endif()
