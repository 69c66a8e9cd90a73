#include "core/validate.h"
