# gpufsConfig.cmake - find_package(gpufs) for an installed libgpufs.
#
# Defines the imported target gpufs::gpufs: the static library, its include
# directory, relocatable device code for the CUDA sources of every target
# that links it (-rdc=true), the CUDA runtime and threads.  Needs a project
# with the CUDA language enabled.
#
#   find_package(gpufs 0.4 REQUIRED)
#   add_executable(app app.cu)
#   target_link_libraries(app PRIVATE gpufs::gpufs)
#
# Device code calling gread & co. must be device-linked with libgpufs.a: a
# target's link does that only with CUDA_SEPARABLE_COMPILATION, which an
# imported library cannot set on its users.  So finding the package turns
# CMAKE_CUDA_SEPARABLE_COMPILATION on for the targets the calling directory
# creates after it; gpufs_enable(target) does it for one made before.
include(CMakeFindDependencyMacro)
find_dependency(CUDAToolkit)
find_dependency(Threads)

get_filename_component(_gpufs_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET gpufs::gpufs)
  add_library(gpufs::gpufs STATIC IMPORTED)
  set_target_properties(gpufs::gpufs PROPERTIES
    IMPORTED_LOCATION "${_gpufs_prefix}/lib/libgpufs.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES "C;CUDA"
    INTERFACE_INCLUDE_DIRECTORIES "${_gpufs_prefix}/include"
    INTERFACE_COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CUDA>:-rdc=true>"
    INTERFACE_LINK_LIBRARIES "CUDA::cudart_static;Threads::Threads")
endif()

set(CMAKE_CUDA_SEPARABLE_COMPILATION ON)

function(gpufs_enable target)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON)
endfunction()

unset(_gpufs_prefix)
