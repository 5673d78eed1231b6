# berth_library(NAME SOURCES... [USES LIB...]): one layer's (or one module's) static
# library. It sees the project root, as every berth source does ("core/errors.hpp"), and
# links berth::deps and the libraries of the layers below it that it USES.
function(berth_library name)
  cmake_parse_arguments(arg "" "" "USES" ${ARGN})
  add_library(${name} STATIC ${arg_UNPARSED_ARGUMENTS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC berth::deps ${arg_USES})
endfunction()
