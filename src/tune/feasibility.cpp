#include "kernels/registry.h"
