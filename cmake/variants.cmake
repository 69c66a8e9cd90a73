# The one list of compiled kernel variants.
#
# The portable family is the product of the four knob axes below, minus one excluded corner.
# The wgmma family (Hopper only: built when MLALAB_CUDA_ARCHS has 90a) has 64 heads per CTA
# and 8 warps (two warpgroups), its knobs block_t and stages, and a swapped kernel for up to
# 16 heads (one warpgroup, 64-token tiles), its knobs stages and whole tiles.
# From this list the build generates (a) one tiny instantiation unit per variant, so variants
# compile in parallel and a build can select a subset, and (b) variant_table.inc, the runtime
# table that the CLI, the tuner and the tests iterate (src/kernels/registry.cpp).
#
# Select a subset with -DMLALAB_VARIANTS=<regex on the name>, e.g. "h16_t16_w4_s2|h64_.*".

set(MLALAB_BLOCK_H_AXIS 16 32 64)    # heads per CTA: the study's 16, and larger for H = 128
set(MLALAB_BLOCK_T_AXIS 16 32 64)    # KV tokens per pipeline step
set(MLALAB_WARPS_AXIS 4 8)
set(MLALAB_STAGES_AXIS 1 2 3 4)      # cp.async pipeline depth

# Excluded: block_h 64 with 4 warps. Each warp keeps all block_h rows of its d_v columns in
# registers: 64 · 512 / 128 threads = 256 fp32 accumulators per thread, over the 255-register
# limit before anything else, so every such variant would spill to local memory.
set(MLALAB_EXCLUDED_VARIANTS_REGEX "^h64_t[0-9]+_w4_")

set(MLALAB_WGMMA_BLOCK_T_AXIS 32 64)
# At least two stages: a step refills the stage its predecessor read while it computes.
set(MLALAB_WGMMA_STAGES_AXIS 2 3 4)
# The swapped kernel (16 heads, 64-token tiles, one MMA warpgroup; src/kernels/wgmma/
# swapped.cuh): its knobs are stages (three 72 KB V3 tiles do not fit beside q; V4's do) and
# whether its MMA warps take each tile whole or in the two pieces it lands in (VariantShape::
# whole_tiles; the name's suffix _whole).
set(MLALAB_WGMMA_SWAPPED_STAGES_AXIS 2 3)
set(MLALAB_WGMMA_SWAPPED_WHOLE_TILES_AXIS false true)

set(MLALAB_VARIANTS ".*" CACHE STRING "Regex selecting which kernel variants to compile")

# Variants none of whose kernels may spill to local memory: the launch path refuses a kernel
# that spills (src/dispatch/feasibility.cpp), a loss only a GPU run would otherwise show. The
# test KernelsDoNotSpill checks those a build compiles (scripts/kernel_resources.py: ptxas -v,
# no GPU). All but five, whose balanced kernels spill (4-52 B; their balanced launches are
# refused, with the reason): h32_t64_w4_s1-s4 and h64_t64_w8_s4 (measured at 9076bcc).
set(MLALAB_SPILL_FREE_VARIANTS_REGEX "^(?!h32_t64_w4_s|h64_t64_w8_s4$)")

# Appends one variant (if MLALAB_VARIANTS selects it) to the caller's sources, names and table.
macro(mlalab_add_variant name header instantiation table_entry)
  if(NOT "${name}" MATCHES "${MLALAB_EXCLUDED_VARIANTS_REGEX}" AND "${name}" MATCHES "${MLALAB_VARIANTS}")
    set(unit "${generated_dir}/instantiations/${name}.cu")
    file(CONFIGURE OUTPUT "${unit}" CONTENT
"// Generated from cmake/variants.cmake: do not edit.
#include \"${header}\"
${instantiation}
")
    list(APPEND sources "${unit}")
    list(APPEND names "${name}")
    string(APPEND table "${table_entry}\n")
  endif()
endmacro()

function(mlalab_generate_variants out_sources)
  set(generated_dir "${CMAKE_BINARY_DIR}/generated")
  set(table "")
  set(sources "")
  set(names "")
  foreach(block_h IN LISTS MLALAB_BLOCK_H_AXIS)
    foreach(block_t IN LISTS MLALAB_BLOCK_T_AXIS)
      foreach(warps IN LISTS MLALAB_WARPS_AXIS)
        foreach(stages IN LISTS MLALAB_STAGES_AXIS)
          set(args "${block_h}, ${block_t}, ${warps}, ${stages}")
          mlalab_add_variant("h${block_h}_t${block_t}_w${warps}_s${stages}"
                             "kernels/portable/decode.cuh" "MLALAB_INSTANTIATE_PORTABLE(${args})"
                             "MLALAB_PORTABLE_VARIANT(${args})")
        endforeach()
      endforeach()
    endforeach()
  endforeach()
  if("90a" IN_LIST MLALAB_CUDA_ARCHS)
    foreach(block_t IN LISTS MLALAB_WGMMA_BLOCK_T_AXIS)
      foreach(stages IN LISTS MLALAB_WGMMA_STAGES_AXIS)
        mlalab_add_variant("wgmma_h64_t${block_t}_w8_s${stages}" "kernels/wgmma/decode.cuh"
                           "MLALAB_INSTANTIATE_WGMMA(${block_t}, ${stages})"
                           "MLALAB_WGMMA_VARIANT(${block_t}, ${stages})")
      endforeach()
    endforeach()
    foreach(stages IN LISTS MLALAB_WGMMA_SWAPPED_STAGES_AXIS)
      foreach(whole_tiles IN LISTS MLALAB_WGMMA_SWAPPED_WHOLE_TILES_AXIS)
        set(suffix "")
        if(whole_tiles)
          set(suffix "_whole")
        endif()
        mlalab_add_variant("wgmma_h16_t64_w4_s${stages}${suffix}" "kernels/wgmma/swapped.cuh"
                           "MLALAB_INSTANTIATE_WGMMA_SWAPPED(${stages}, ${whole_tiles})"
                           "MLALAB_WGMMA_SWAPPED_VARIANT(${stages}, ${whole_tiles})")
      endforeach()
    endforeach()
  endif()
  if(NOT sources)
    message(FATAL_ERROR "MLALAB_VARIANTS='${MLALAB_VARIANTS}' selects no variant")
  endif()
  file(CONFIGURE OUTPUT "${generated_dir}/variant_table.inc"
       CONTENT "// Generated from cmake/variants.cmake: do not edit.\n${table}")
  list(LENGTH names count)
  message(STATUS "mlalab: ${count} kernel variants selected")
  set(${out_sources} "${sources}" PARENT_SCOPE)
endfunction()
