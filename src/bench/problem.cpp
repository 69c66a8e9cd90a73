#include "bench/cuda_raii.h"
