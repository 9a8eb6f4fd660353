// On the CPU, CUDA's headers are the tutor's own (tutor_cuda.h, included before the file).
#pragma once
