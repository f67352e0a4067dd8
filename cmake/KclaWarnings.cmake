# Warnings for kcla's own code. -Werror only where the host compiler sees the code
# directly: nvcc's front end warns on Kokkos' own headers, which kcla cannot fix.
function(kcla_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT KCLA_HAVE_CUDA)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                             -Wnon-virtual-dtor -Wno-unknown-pragmas
                                             # false positives inside Kokkos Kernels headers
                                             -Wno-maybe-uninitialized)
    if(KCLA_ENABLE_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
