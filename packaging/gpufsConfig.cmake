# gpufsConfig.cmake - find_package(gpufs) for an installed libgpufs.
#
# Defines the imported target gpufs::gpufs: the static library, its include
# directory, relocatable device code for the CUDA sources of every target
# that links it (-rdc=true, and the device link step through
# CUDA_SEPARABLE_COMPILATION, which gpufs_enable sets), the CUDA runtime and
# threads.  Needs a project with the CUDA language enabled.
#
#   find_package(gpufs 0.4 REQUIRED)
#   add_executable(app app.cu)
#   target_link_libraries(app PRIVATE gpufs::gpufs)
#   gpufs_enable(app)        # CUDA_SEPARABLE_COMPILATION ON for app
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

# The device link step (nvcc -dlink over the target's objects and
# libgpufs.a's device code) runs only for targets with separable
# compilation, a property an imported library cannot set on its users.
function(gpufs_enable target)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON)
endfunction()

unset(_gpufs_prefix)
