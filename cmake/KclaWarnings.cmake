# Warnings for kcla's own code. -Werror only where the host compiler sees the code
# directly: nvcc's front end warns on Kokkos' own headers, which kcla cannot fix.
function(kcla_set_warnings target)
  if(KCLA_HAVE_CUDA)
    # A host function called from device code compiles with only a warning and runs as
    # garbage on the GPU: make nvcc's cross-execution-space diagnostics errors.
    target_compile_options(${target} PRIVATE "SHELL:-Xcudafe --diag_error=20011"
                                             "SHELL:-Xcudafe --diag_error=20014")
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT KCLA_HAVE_CUDA)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                             -Wnon-virtual-dtor -Wno-unknown-pragmas)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # false positives inside Kokkos Kernels headers (a GCC-only warning: clang, which
      # builds the fuzz targets, rejects the option)
      target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
    endif()
    if(KCLA_ENABLE_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
