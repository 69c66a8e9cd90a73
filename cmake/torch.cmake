# Torch, for the extension (MLALAB_BUILD_TORCH): the headers and libraries of the torch that
# the build's Python imports. The extension needs no Python C API (it registers its ops when
# torch.ops.load_library loads it), so this asks Python where torch is rather than using
# torch's CMake package, whose CUDA checks want the toolkit torch was built with.
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c
          "import torch, torch.utils.cpp_extension as e; print('|'.join(e.include_paths())); print(e.library_paths()[0]); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__)"
  OUTPUT_VARIABLE torch_facts
  ERROR_VARIABLE torch_error
  RESULT_VARIABLE torch_found
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT torch_found EQUAL 0)
  message(FATAL_ERROR "MLALAB_BUILD_TORCH needs torch importable by ${Python3_EXECUTABLE} "
                      "(pip install torch; with pip install . use --no-build-isolation so that "
                      "the build sees the torch you run): ${torch_error}")
endif()
string(REPLACE "\n" ";" torch_facts "${torch_facts}")
list(POP_FRONT torch_facts torch_includes_joined)
list(POP_FRONT torch_facts torch_library_dir torch_cxx11_abi torch_version)
string(REPLACE "|" ";" torch_includes "${torch_includes_joined}")
message(STATUS "Building the extension for torch ${torch_version} (${torch_library_dir})")
# Our static libraries (fmt, the JSON reader, mlalab's own) pass std::string across their
# interfaces in the new C++ ABI; a torch built with the old one would not link with them.
if(NOT torch_cxx11_abi)
  message(FATAL_ERROR "torch ${torch_version} uses the old C++ ABI (_GLIBCXX_USE_CXX11_ABI=0); "
                      "mlalab's extension needs one built with the new ABI, as PyPI's torch is "
                      "from 2.7 on")
endif()

add_library(mlalab_torch_headers INTERFACE)
target_include_directories(mlalab_torch_headers SYSTEM INTERFACE ${torch_includes})
target_compile_definitions(mlalab_torch_headers INTERFACE
                           _GLIBCXX_USE_CXX11_ABI=${torch_cxx11_abi})
foreach(library c10 torch torch_cpu c10_cuda)
  # Not cached: a reconfigure of the same build folder for another torch finds its libraries.
  find_library(torch_${library} ${library} PATHS ${torch_library_dir} NO_DEFAULT_PATH REQUIRED
               NO_CACHE)
  target_link_libraries(mlalab_torch_headers INTERFACE ${torch_${library}})
endforeach()
target_link_libraries(mlalab_torch_headers INTERFACE CUDA::toolkit)
# Our static CUDA runtime stays private to the extension (torch brings its own), and torch's
# libraries are found where pip put them.
target_link_options(mlalab_torch_headers INTERFACE -Wl,--exclude-libs,ALL)
set(CMAKE_INSTALL_RPATH "$ORIGIN/../torch/lib")
