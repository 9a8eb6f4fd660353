// CUDA's math constants, for a learner's file built on the CPU (tutor_cuda.h).
#pragma once
#include <cmath>
#define CUDART_INF_F INFINITY
#define CUDART_NAN_F NAN
#define CUDART_INF HUGE_VAL
#define CUDART_PI_F 3.141592654f
#define CUDART_SQRT_HALF_F 0.707106781f
