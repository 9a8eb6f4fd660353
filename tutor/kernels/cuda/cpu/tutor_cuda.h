// CUDA C++ on the CPU, for the kernel drills tutor: a learner's .cu file compiles against this
// header with the system C++ compiler and its kernels run as the GPU would run them, one CUDA
// thread at a time or all at once.
//
// Two ways to run a block (chosen when the program is built, TUTOR_THREADS or not):
// - fibers (the default): every CUDA thread of a block is a fiber on one OS thread, run in
//   thread order from one sync point (__syncthreads, a shuffle, __syncwarp) to the next. The
//   same file gives the same output on every run, and a barrier or a shuffle that not every
//   thread it waits for reaches is seen, with its line, instead of hanging.
// - threads (TUTOR_THREADS, the sanitizer builds): every CUDA thread is an OS thread, so
//   ThreadSanitizer sees two threads touch shared memory with no barrier between them, and
//   AddressSanitizer a read past a buffer, each with the line of the learner's file.
// Blocks run one after another: `__shared__` is a function-level static, one copy a kernel.
//
// What a launch found (a divergent barrier, a shuffle whose mask names lanes that never call
// it) is written for the tutor as `finding` lines (tutor/kernels/cuda/cpu/launch.py reads them).
#pragma once

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700  // ucontext on macOS
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef TUTOR_THREADS
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#else
#include <sys/mman.h>
#include <ucontext.h>
#endif

#define __CUDACC__ 1
#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
// `__shared__` memory is a function-level static, one copy a kernel (blocks run one after
// another). Where the build asks (TUTOR_POISON_SHARED), every such static lives in one section
// that each block starts with filled with 0xFF bytes (NaN for a float, -1 for an int), as a
// GPU's shared memory holds whatever the last block left: a kernel that reads a slot no thread
// of its block wrote reads the same garbage on every run, never a convenient zero.
#if defined(TUTOR_POISON_SHARED) && defined(__APPLE__)
#define __shared__ static __attribute__((section("__DATA,tutor_shared")))
extern char tutor_shared_start[] __asm("section$start$__DATA$tutor_shared") __attribute__((weak));
extern char tutor_shared_stop[] __asm("section$end$__DATA$tutor_shared") __attribute__((weak));
#elif defined(TUTOR_POISON_SHARED)
#define __shared__ static __attribute__((section("tutor_shared")))
extern "C" char __start_tutor_shared[] __attribute__((weak));
extern "C" char __stop_tutor_shared[] __attribute__((weak));
#define tutor_shared_start __start_tutor_shared
#define tutor_shared_stop __stop_tutor_shared
#else
#define __shared__ static
#endif
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __grid_constant__

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

namespace tutor {

struct Thread;
struct Launch {
  dim3 grid, block, block_idx;
  unsigned threads = 0;         // per block
  std::vector<char> dynamic;    // extern __shared__
};
inline Launch launch;
inline thread_local Thread* current = nullptr;

// What a launch found, for the tutor: one line each, at most a few of a kind.
inline std::FILE* findings = nullptr;
inline int finding_count = 0;
inline void finding(const char* kind, int line, const char* text) {
  if (findings && finding_count < 64) {
    std::fprintf(findings, "finding %s %d %s\n", kind, line, text);
    ++finding_count;
  }
}

inline unsigned popcount(unsigned m) { return (unsigned)__builtin_popcount(m); }

inline void poison_shared() {
#ifdef TUTOR_POISON_SHARED
  if (tutor_shared_start && tutor_shared_stop > tutor_shared_start)
    std::memset(tutor_shared_start, 0xFF, (size_t)(tutor_shared_stop - tutor_shared_start));
#endif
  std::memset(launch.dynamic.data(), 0xFF, launch.dynamic.size());
}

}  // namespace tutor

#define threadIdx (::tutor::current->idx)
#define blockIdx (::tutor::launch.block_idx)
#define blockDim (::tutor::launch.block)
#define gridDim (::tutor::launch.grid)
#define warpSize 32

// ---- 16-bit floats: stored as bits, converted as the GPU does (round to nearest even) --------

namespace tutor {
inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint16_t f2bf(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);  // NaN stays NaN
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float bf2f(uint16_t b) { return u2f((uint32_t)b << 16); }
inline uint16_t f2h(float f) {
  uint32_t u = f2u(f), sign = (u >> 16) & 0x8000u, mant = u & 0x7fffffu;
  int exp = (int)((u >> 23) & 0xff);
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = (uint32_t)(e << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return (uint16_t)(sign | half);
}
inline float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return u2f(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (!mant) return u2f(sign);
    float v = std::ldexp((float)mant, -24);
    return sign ? -v : v;
  }
  return u2f(sign | ((exp + 112) << 23) | (mant << 13));
}
}  // namespace tutor

struct __nv_bfloat16 {
  uint16_t bits;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : bits(tutor::f2bf(f)) {}
  __nv_bfloat16(double f) : bits(tutor::f2bf((float)f)) {}
  __nv_bfloat16(int f) : bits(tutor::f2bf((float)f)) {}
  operator float() const { return tutor::bf2f(bits); }
};
struct __half {
  uint16_t bits;
  __half() = default;
  __half(float f) : bits(tutor::f2h(f)) {}
  __half(double f) : bits(tutor::f2h((float)f)) {}
  __half(int f) : bits(tutor::f2h((float)f)) {}
  operator float() const { return tutor::h2f(bits); }
};
using nv_bfloat16 = __nv_bfloat16;
using half = __half;
struct __nv_bfloat162 { __nv_bfloat16 x, y; };
struct __half2 { __half x, y; };

#define TUTOR_HALF_OPS(T)                                                              \
  inline T operator+(T a, T b) { return T((float)a + (float)b); }                     \
  inline T operator-(T a, T b) { return T((float)a - (float)b); }                     \
  inline T operator*(T a, T b) { return T((float)a * (float)b); }                     \
  inline T operator/(T a, T b) { return T((float)a / (float)b); }                     \
  inline T operator-(T a) { return T(-(float)a); }                                    \
  inline T& operator+=(T& a, T b) { return a = a + b; }                               \
  inline T& operator-=(T& a, T b) { return a = a - b; }                               \
  inline T& operator*=(T& a, T b) { return a = a * b; }                               \
  inline T& operator/=(T& a, T b) { return a = a / b; }
TUTOR_HALF_OPS(__nv_bfloat16)
TUTOR_HALF_OPS(__half)
#undef TUTOR_HALF_OPS

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return (float)h; }
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return a + b; }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return a * b; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__nv_bfloat16(a), __nv_bfloat16(b)}; }
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return {__nv_bfloat16(a), __nv_bfloat16(a)}; }
struct float2;
inline float2 __bfloat1622float2(__nv_bfloat162 v);
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }

// ---- vector types --------------------------------------------------------------------------

#define TUTOR_VEC(T, N2, N4, A2, A4)                                                   \
  struct alignas(A2) N2 { T x, y; };                                                   \
  struct alignas(A4) N4 { T x, y, z, w; };                                             \
  inline N2 make_##N2(T x, T y) { return {x, y}; }                                    \
  inline N4 make_##N4(T x, T y, T z, T w) { return {x, y, z, w}; }
TUTOR_VEC(float, float2, float4, 8, 16)
TUTOR_VEC(int, int2, int4, 8, 16)
TUTOR_VEC(unsigned, uint2, uint4, 8, 16)
TUTOR_VEC(double, double2, double4, 16, 32)
#undef TUTOR_VEC
inline float2 __bfloat1622float2(__nv_bfloat162 v) { return {(float)v.x, (float)v.y}; }

// ---- math, as the CUDA device library names it ----------------------------------------------

using std::abs;
using std::ceil;
using std::exp;
using std::floor;
using std::log;
using std::sqrt;
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp2f(float x) { return std::exp2(x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __saturatef(float a) { return a < 0.f ? 0.f : (a > 1.f ? 1.f : a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __tanhf(float a) { return std::tanh(a); }
inline float __sinf(float a) { return std::sin(a); }
inline float __cosf(float a) { return std::cos(a); }
inline float __powf(float a, float b) { return std::pow(a, b); }
template <class T> inline T __ldg(const T* p) { return *p; }
template <class A, class B> inline auto max(A a, B b) -> std::common_type_t<A, B> {
  return a < b ? b : a;
}
template <class A, class B> inline auto min(A a, B b) -> std::common_type_t<A, B> {
  return b < a ? b : a;
}

// ---- the scheduler: a block's threads, barriers and warp exchanges -----------------------------

namespace tutor {

enum class State { runnable, at_barrier, at_warp, done };

struct Thread {
  dim3 idx;
  unsigned linear = 0, lane = 0, warp = 0;
  State state = State::runnable;
  int line = 0;            // where it waits
  unsigned mask = 0;       // a warp exchange's mask
  uint64_t value = 0;      // what it brings to a shuffle (bits), and takes back
  unsigned src = 0;        // the lane it reads
  bool vote = false;       // what it brings to a vote
  unsigned ballot = 0;     // the vote's answer
#ifdef TUTOR_THREADS
  std::thread os;
#else
  ucontext_t ctx;
  char* stack = nullptr;
#endif
};

inline std::vector<Thread> threads;
inline void (*body)(void**) = nullptr;
inline void** body_args = nullptr;

inline unsigned lanes_in_warp(unsigned warp) {
  unsigned first = warp * 32u, n = launch.threads;
  return n - first >= 32u ? 32u : n - first;
}

// A shuffle reads another lane's value: the bits of any type of at most 8 bytes.
template <class T> inline uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T> inline T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

inline void mask_finding(unsigned warp, unsigned mask, int line) {
  // Lanes a mask names that do not exist (a partial last warp) or have returned.
  unsigned missing = 0, n = lanes_in_warp(warp);
  for (unsigned l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u)) continue;
    if (l >= n || threads[warp * 32u + l].state == State::done) missing |= 1u << l;
  }
  if (missing) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "warp %u: mask 0x%08x names lanes 0x%08x that never reach it (%u lanes in this warp)",
                  warp, mask, missing, n);
    finding("shuffle-mask", line, text);
  }
}

#ifndef TUTOR_THREADS
// ---- fibers ----------------------------------------------------------------------------------

inline ucontext_t scheduler;
inline const size_t STACK = 256 * 1024;

inline void fiber_entry() {
  body(body_args);
  current->state = State::done;
  swapcontext(&current->ctx, &scheduler);
}

inline void yield() { swapcontext(&current->ctx, &scheduler); }

inline void syncthreads(int line) {
  current->state = State::at_barrier;
  current->line = line;
  yield();
}

inline void syncwarp(unsigned mask, int line) {
  current->state = State::at_warp;
  current->line = line;
  current->mask = mask;
  current->src = current->lane;
  yield();
}

template <class T> inline T exchange(int line, unsigned mask, T v, unsigned src) {
  current->state = State::at_warp;
  current->line = line;
  current->mask = mask;
  current->value = to_bits(v);
  current->src = src;
  yield();
  return from_bits<T>(current->value);
}

inline unsigned vote(int line, unsigned mask, bool pred) {
  current->vote = pred;
  syncwarp(mask, line);
  return current->ballot;
}

// A warp whose every live lane named in a waiting lane's mask waits too: each waiting lane takes
// the value of the lane it reads (0 from a lane that is not there), and goes on.
// Lanes wait together only at one line: lanes at two different shuffles are two exchanges, as
// the hardware's are (neither lets the other go).
inline bool settle_warp(unsigned warp) {
  unsigned n = lanes_in_warp(warp), waiting = 0, mask = 0, live = 0, ballot = 0;
  int line = 0;
  for (unsigned l = 0; l < n; ++l) {
    Thread& t = threads[warp * 32u + l];
    if (t.state != State::done) live |= 1u << l;
    if (t.state != State::at_warp || (line && t.line != line)) continue;
    line = t.line;
    waiting |= 1u << l;
    mask |= t.mask;
    if (t.vote) ballot |= 1u << l;
  }
  if (!waiting || (waiting & (mask & live)) != (mask & live)) return false;
  mask_finding(warp, mask, line);
  uint64_t values[32] = {};
  for (unsigned l = 0; l < n; ++l) values[l] = threads[warp * 32u + l].value;
  for (unsigned l = 0; l < n; ++l) {
    Thread& t = threads[warp * 32u + l];
    if (!(waiting >> l & 1u)) continue;
    t.value = (t.src < n && (waiting >> t.src & 1u)) ? values[t.src] : 0;
    t.ballot = ballot;
    t.vote = false;
    t.state = State::runnable;
  }
  return true;
}

// Nobody can move: say who waits where, then end the program (the block is abandoned).
[[noreturn]] inline void stuck(unsigned at_barrier, unsigned at_warp, unsigned done, int line,
                               int other_line) {
  unsigned n = launch.threads;
  int warp_line = 0;
  for (unsigned i = 0; i < n && !warp_line; ++i)
    if (threads[i].state == State::at_warp) warp_line = threads[i].line;
  char text[240];
  if (at_barrier) {
    char lines[40];
    if (other_line) std::snprintf(lines, sizeof lines, "lines %d and %d", line, other_line);
    else std::snprintf(lines, sizeof lines, "line %d", line);
    std::snprintf(text, sizeof text,
                  "%u of %u threads reached __syncthreads (%s); %u wait at a warp exchange on "
                  "line %d, %u had returned: the barrier is not reached by every thread",
                  at_barrier, n, lines, at_warp, warp_line, done);
    finding("barrier-divergent", line, text);
  } else {
    std::snprintf(text, sizeof text,
                  "%u lanes wait at a warp exchange on line %d for lanes that never reach it",
                  at_warp, warp_line);
    finding("shuffle-mask", warp_line, text);
  }
  std::fflush(findings);
  std::_Exit(3);
}

inline void run_block() {
  unsigned n = launch.threads;
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = threads[i];
    t.state = State::runnable;
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = t.stack;
    t.ctx.uc_stack.ss_size = STACK;
    t.ctx.uc_link = &scheduler;
    makecontext(&t.ctx, fiber_entry, 0);
  }
  for (;;) {
    bool ran = false;
    for (unsigned i = 0; i < n; ++i) {
      if (threads[i].state != State::runnable) continue;
      current = &threads[i];
      swapcontext(&scheduler, &threads[i].ctx);
      ran = true;
    }
    if (ran) continue;
    bool settled = false;
    for (unsigned w = 0; w * 32u < n; ++w) settled |= settle_warp(w);
    if (settled) continue;
    unsigned at_barrier = 0, done = 0, at_warp = 0;
    int first_line = 0, other_line = 0;
    for (unsigned i = 0; i < n; ++i) {
      Thread& t = threads[i];
      if (t.state == State::done) ++done;
      if (t.state == State::at_warp) ++at_warp;
      if (t.state != State::at_barrier) continue;
      ++at_barrier;
      if (!first_line) first_line = t.line;
      else if (t.line != first_line && !other_line) other_line = t.line;
    }
    if (at_barrier + done == n && at_barrier) {
      // Every thread that has not returned waits at a barrier: the hardware lets them go.
      if (done || other_line) {
        char text[200];
        if (other_line)
          std::snprintf(text, sizeof text,
                        "threads of one block wait at __syncthreads on different lines (%d and %d)",
                        first_line, other_line);
        else
          std::snprintf(text, sizeof text,
                        "%u of %u threads reached __syncthreads; the other %u had returned",
                        at_barrier, n, done);
        finding("barrier-divergent", first_line, text);
      }
      for (unsigned i = 0; i < n; ++i)
        if (threads[i].state == State::at_barrier) threads[i].state = State::runnable;
      continue;
    }
    if (done == n) return;
    stuck(at_barrier, at_warp, done, first_line, other_line);
  }
}

inline void prepare_threads(unsigned n) {
  if (threads.size() < n) threads.resize(n);
  for (unsigned i = 0; i < n; ++i)
    if (!threads[i].stack)
      threads[i].stack = (char*)mmap(nullptr, STACK, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

#else
// ---- threads (the sanitizer builds) -----------------------------------------------------------

// The barrier has one lock for the block; each warp's exchanges have their own, so that a
// shuffle orders only the lanes of its warp (ThreadSanitizer must still see two warps that
// touch shared memory with no barrier between them).
inline std::mutex lock;
inline std::condition_variable moved;
inline unsigned barrier_waiting = 0, barrier_generation = 0, live = 0;
struct WarpState {
  std::mutex lock;
  std::condition_variable moved;
  unsigned waiting = 0, mask = 0, generation = 0, ballot = 0, voted = 0, done = 0;
  int line = 0;
  uint64_t values[32] = {};
  uint64_t taken[32] = {};  // the values of the last exchange, read after it is released
};
inline std::vector<WarpState> warps;

template <class Ready>
inline void wait_for(std::condition_variable& cv, std::unique_lock<std::mutex>& held, Ready ready,
                     int line, const char* kind, const char* what) {
  if (!cv.wait_for(held, std::chrono::seconds(3), ready)) {
    char text[160];
    std::snprintf(text, sizeof text, "no thread moved for 3 s while threads waited at %s", what);
    finding(kind, line, text);
    std::fflush(findings);
    std::_Exit(3);
  }
}

inline void release_barrier_if_full() {
  if (barrier_waiting && barrier_waiting == live) {
    barrier_waiting = 0;
    ++barrier_generation;
    moved.notify_all();
  }
}

// Called with the warp's lock held: release its exchange once every live lane it names waits.
inline void release_warp_if_full(unsigned warp) {
  WarpState& w = warps[warp];
  unsigned n = lanes_in_warp(warp), alive = ((n == 32u) ? 0xffffffffu : ((1u << n) - 1u)) & ~w.done;
  if (!w.waiting || (w.waiting & (w.mask & alive)) != (w.mask & alive)) return;
  unsigned missing = w.mask & ~alive;
  if (missing) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "warp %u: mask 0x%08x names lanes 0x%08x that never reach it (%u lanes in this warp)",
                  warp, w.mask, missing, n);
    finding("shuffle-mask", w.line, text);
  }
  for (unsigned l = 0; l < 32; ++l) w.taken[l] = (w.waiting >> l & 1u) ? w.values[l] : 0;
  w.ballot = w.voted;
  w.waiting = w.mask = w.voted = 0;
  ++w.generation;
  w.moved.notify_all();
}

inline void syncthreads(int line) {
  std::unique_lock<std::mutex> held(lock);
  unsigned generation = barrier_generation;
  ++barrier_waiting;
  release_barrier_if_full();
  wait_for(moved, held, [&] { return barrier_generation != generation; }, line,
           "barrier-divergent", "__syncthreads");
}

inline uint64_t exchange_bits(int line, unsigned mask, uint64_t bits, unsigned src, bool pred,
                              unsigned* ballot) {
  WarpState& w = warps[current->warp];
  std::unique_lock<std::mutex> held(w.lock);
  unsigned generation = w.generation, lane = current->lane;
  w.values[lane] = bits;
  w.waiting |= 1u << lane;
  w.mask |= mask;
  w.line = line;
  if (pred) w.voted |= 1u << lane;
  release_warp_if_full(current->warp);
  wait_for(w.moved, held, [&] { return w.generation != generation; }, line, "shuffle-mask",
           "a warp exchange");
  if (ballot) *ballot = w.ballot;
  return src < 32 ? w.taken[src] : 0;
}

template <class T> inline T exchange(int line, unsigned mask, T v, unsigned src) {
  return from_bits<T>(exchange_bits(line, mask, to_bits(v), src, false, nullptr));
}
inline void syncwarp(unsigned mask, int line) {
  exchange_bits(line, mask, 0, current->lane, false, nullptr);
}
inline unsigned vote(int line, unsigned mask, bool pred) {
  unsigned ballot = 0;
  exchange_bits(line, mask, 0, current->lane, pred, &ballot);
  return ballot;
}

// Where the block's threads and the launching thread meet between two blocks: the launching
// thread sets up the next block while they wait. (Threads are started once a launch: starting
// one costs much under ThreadSanitizer.)
struct Gate {
  std::mutex lock;
  std::condition_variable moved;
  unsigned count, arrived = 0, generation = 0;
  explicit Gate(unsigned n) : count(n) {}
  void wait() {
    std::unique_lock<std::mutex> held(lock);
    unsigned mine = generation;
    if (++arrived == count) {
      arrived = 0;
      ++generation;
      moved.notify_all();
    } else {
      moved.wait(held, [&] { return generation != mine; });
    }
  }
};
inline Gate* gate = nullptr;
inline size_t blocks_to_run = 0;

inline void thread_main(Thread* me) {
  current = me;
  for (size_t block = 0; block < blocks_to_run; ++block) {
    gate->wait();  // the block is set up
    body(body_args);
    {
      WarpState& w = warps[me->warp];
      std::lock_guard<std::mutex> held(w.lock);
      w.done |= 1u << me->lane;
      release_warp_if_full(me->warp);
    }
    {
      std::lock_guard<std::mutex> held(lock);
      me->state = State::done;
      --live;
      release_barrier_if_full();
    }
    gate->wait();  // every thread of the block is done
  }
}

inline void run_blocks(const std::vector<dim3>& order) {
  unsigned n = launch.threads;
  Gate meeting(n + 1);
  gate = &meeting;
  blocks_to_run = order.size();
  for (unsigned i = 0; i < n; ++i) threads[i].os = std::thread(thread_main, &threads[i]);
  for (const dim3& block : order) {
    launch.block_idx = block;
    poison_shared();
    live = n;
    barrier_waiting = 0;
    std::vector<WarpState> fresh((n + 31) / 32);
    warps.swap(fresh);
    for (unsigned i = 0; i < n; ++i) threads[i].state = State::runnable;
    meeting.wait();  // go
    meeting.wait();  // done
  }
  for (unsigned i = 0; i < n; ++i) threads[i].os.join();
}

inline void prepare_threads(unsigned n) {
  if (threads.size() < n) threads.resize(n);
}
#endif

// ---- a launch ----------------------------------------------------------------------------------

inline void run(void (*kernel_body)(void**), void** args, dim3 grid, dim3 block, size_t shared) {
  launch.grid = grid;
  launch.block = block;
  launch.threads = block.x * block.y * block.z;
  launch.dynamic.assign(shared, 0);
  prepare_threads(launch.threads);
  for (unsigned i = 0; i < launch.threads; ++i) {
    Thread& t = threads[i];
    t.idx = dim3(i % block.x, (i / block.x) % block.y, i / (block.x * block.y));
    t.linear = i;
    t.lane = i % 32u;
    t.warp = i / 32u;
  }
  body = kernel_body;
  body_args = args;
  std::vector<dim3> order;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) order.push_back(dim3(x, y, z));
#ifdef TUTOR_THREADS
  run_blocks(order);
#else
  for (const dim3& block : order) {
    launch.block_idx = block;
    poison_shared();
    run_block();
  }
#endif
}

inline void* dynamic_shared() { return launch.dynamic.data(); }

// The learner's kernel called with the launch's arguments, each read as the type its parameter
// has: the parameter list itself says how to unpack them.
template <class... P, size_t... I>
inline void call_with(void (*kernel)(P...), void** a, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(a[I])...);
}
template <class... P> inline void call(void (*kernel)(P...), void** a) {
  call_with(kernel, a, std::index_sequence_for<P...>{});
}

}  // namespace tutor

#define __syncthreads() ::tutor::syncthreads(__LINE__)
// A starter's kernel body: "not written yet", said once a launch, as a Python starter's
// NotImplementedError says it. The learner deletes the line when writing the kernel.
#define TODO_KERNEL(what) ::tutor::todo(__LINE__, what)
#define __syncwarp(...) ::tutor::syncwarp(::tutor::warp_mask(__VA_ARGS__), __LINE__)
#define __shfl_sync(mask, v, src, ...) \
  ::tutor::shfl(__LINE__, mask, v, src, ##__VA_ARGS__)
#define __shfl_xor_sync(mask, v, lane_mask, ...) \
  ::tutor::shfl_xor(__LINE__, mask, v, lane_mask, ##__VA_ARGS__)
#define __shfl_down_sync(mask, v, delta, ...) \
  ::tutor::shfl_down(__LINE__, mask, v, delta, ##__VA_ARGS__)
#define __shfl_up_sync(mask, v, delta, ...) \
  ::tutor::shfl_up(__LINE__, mask, v, delta, ##__VA_ARGS__)
#define __ballot_sync(mask, pred) ::tutor::vote(__LINE__, mask, (pred))
#define __any_sync(mask, pred) (::tutor::vote(__LINE__, mask, (pred)) != 0u)
#define __all_sync(mask, pred) \
  (::tutor::vote(__LINE__, mask, (pred)) == ((mask) & ::tutor::live_lanes()))
#define __activemask() ::tutor::live_lanes()

namespace tutor {
inline void todo(int line, const char* what) {
  if (current->linear == 0 && launch.block_idx.x == 0 && launch.block_idx.y == 0 &&
      launch.block_idx.z == 0)
    finding("not-started", line, what);
}
inline unsigned warp_mask(unsigned mask = 0xffffffffu) { return mask; }
inline unsigned live_lanes() {
  unsigned n = lanes_in_warp(current->warp), all = n == 32u ? 0xffffffffu : (1u << n) - 1u;
#ifdef TUTOR_THREADS
  WarpState& w = warps[current->warp];
  std::lock_guard<std::mutex> held(w.lock);
  return all & ~w.done;
#else
  unsigned m = 0;
  for (unsigned l = 0; l < n; ++l)
    if (threads[current->warp * 32u + l].state != State::done) m |= 1u << l;
  return m & all;
#endif
}
// A lane's source within its segment of `width` lanes, as the hardware computes it.
inline unsigned segment_base(unsigned width) { return current->lane & ~(width - 1u); }
template <class T> inline T shfl(int line, unsigned mask, T v, int src, int width = 32) {
  unsigned base = segment_base((unsigned)width);
  return exchange(line, mask, v, base + ((unsigned)src & ((unsigned)width - 1u)));
}
template <class T> inline T shfl_xor(int line, unsigned mask, T v, int lane_mask, int width = 32) {
  unsigned target = current->lane ^ (unsigned)lane_mask;
  // Past the segment the lane reads itself, as on the GPU.
  if ((target & ~((unsigned)width - 1u)) != segment_base((unsigned)width)) target = current->lane;
  return exchange(line, mask, v, target);
}
template <class T> inline T shfl_down(int line, unsigned mask, T v, unsigned delta, int width = 32) {
  unsigned base = segment_base((unsigned)width), target = current->lane + delta;
  if (target >= base + (unsigned)width) target = current->lane;
  return exchange(line, mask, v, target);
}
template <class T> inline T shfl_up(int line, unsigned mask, T v, unsigned delta, int width = 32) {
  unsigned base = segment_base((unsigned)width);
  unsigned target = current->lane >= base + delta ? current->lane - delta : current->lane;
  return exchange(line, mask, v, target);
}

// Atomics: one fiber runs at a time, so plain arithmetic is atomic there; the threaded builds
// use the compiler's atomics, which ThreadSanitizer understands.
template <class T, class F> inline T atomic_update(T* p, F f) {
#ifdef TUTOR_THREADS
  T old, want;
  __atomic_load(p, &old, __ATOMIC_SEQ_CST);
  do {
    want = f(old);
  } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return old;
#else
  T old = *p;
  *p = f(old);
  return old;
#endif
}
}  // namespace tutor

template <class T, class V> inline T atomicAdd(T* p, V v) {
  return tutor::atomic_update(p, [&](T old) { return (T)(old + (T)v); });
}
template <class T, class V> inline T atomicSub(T* p, V v) {
  return tutor::atomic_update(p, [&](T old) { return (T)(old - (T)v); });
}
template <class T, class V> inline T atomicMax(T* p, V v) {
  return tutor::atomic_update(p, [&](T old) { return old < (T)v ? (T)v : old; });
}
template <class T, class V> inline T atomicMin(T* p, V v) {
  return tutor::atomic_update(p, [&](T old) { return (T)v < old ? (T)v : old; });
}
template <class T, class V> inline T atomicExch(T* p, V v) {
  return tutor::atomic_update(p, [&](T) { return (T)v; });
}
template <class T> inline T atomicCAS(T* p, T compare, T v) {
  return tutor::atomic_update(p, [&](T old) { return old == compare ? v : old; });
}
inline void __threadfence() {}
inline void __threadfence_block() {}
