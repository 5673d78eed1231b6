# Every dependency is a Debian 12 package (scripts/install-deps.sh installs them).
# CAF 0.17.6 ships no CMake config or pkg-config file, so it is found by hand.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)

find_package(Boost 1.81 REQUIRED)
find_package(spdlog REQUIRED)
find_package(RapidJSON REQUIRED)
find_package(Threads REQUIRED)
find_package(GTest REQUIRED)
# The Kubernetes API client (protocols/kube): TLS and kubeconfig files.
find_package(OpenSSL REQUIRED)
find_package(yaml-cpp REQUIRED)
# The programs' command lines (apps/): CLI11 2.1, header-only.
find_package(CLI11 2.1 CONFIG REQUIRED)
# berthd under systemd (apps/berthd/socket_activation): sd_listen_fds, sd_notify.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)

add_library(berth_deps INTERFACE)
add_library(berth::deps ALIAS berth_deps)
target_include_directories(berth_deps SYSTEM INTERFACE
  ${CAF_INCLUDE_DIR} ${Boost_INCLUDE_DIRS} ${RapidJSON_INCLUDE_DIRS} ${RAPIDJSON_INCLUDE_DIRS})
target_link_libraries(berth_deps INTERFACE
  ${CAF_CORE_LIBRARY} ${CAF_IO_LIBRARY} spdlog::spdlog Threads::Threads)
# Beast/Asio are header-only; keep them on the standalone error_code path.
target_compile_definitions(berth_deps INTERFACE BOOST_ASIO_NO_DEPRECATED)

# berthd's allocator (apps/berthd): jemalloc gives the pages of a freed burst back where glibc's
# arenas keep them (docs/benchmarks.md, "jemalloc"). Off under a sanitizer, which brings its
# own allocator.
if(BERTH_SANITIZE OR BERTH_SANITIZE_THREAD OR BERTH_FUZZ)
  set(berth_jemalloc_default OFF)
else()
  set(berth_jemalloc_default ON)
endif()
option(BERTH_JEMALLOC "Link berthd with jemalloc (libjemalloc-dev)" ${berth_jemalloc_default})
if(BERTH_JEMALLOC)
  if(BERTH_SANITIZE OR BERTH_SANITIZE_THREAD OR BERTH_FUZZ)
    message(FATAL_ERROR "BERTH_JEMALLOC excludes the sanitizers: each replaces malloc")
  endif()
  find_library(JEMALLOC_LIBRARY jemalloc)
  if(NOT JEMALLOC_LIBRARY)
    message(FATAL_ERROR "jemalloc not found: install libjemalloc-dev (scripts/install-deps.sh), "
                        "or configure with -DBERTH_JEMALLOC=OFF for glibc's malloc")
  endif()
endif()
