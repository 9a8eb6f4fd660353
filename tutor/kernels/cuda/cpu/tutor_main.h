// The program a learner's .cu becomes on the CPU: it reads one launch from a file, runs it
// (tutor_cuda.h), and writes the buffers back, with what the launch found.
//
//   program LAUNCH OUT
//
// LAUNCH, written by tutor/kernels/cuda/cpu/launch.py:
//   kernel NAME / grid X Y Z / block X Y Z / shared BYTES / buffers N / buffer BYTES (N lines)
//   / args M / `arg ptr BUFFER OFFSET` or `arg value BYTES HEX` (M lines) / data, then the
//   buffers' bytes one after another.
// OUT: `status ok`, `finding KIND LINE TEXT` lines, `data`, then the buffers' bytes.
// Every buffer is its own allocation, exactly its size, so a sanitizer sees a read past one.
#pragma once

#include <map>

namespace tutor {

using Body = void (*)(void**);
inline std::map<std::string, Body>& kernels() {
  static std::map<std::string, Body> table;
  return table;
}

inline int fail(const char* why) {
  std::fprintf(stderr, "tutor launch: %s\n", why);
  return 2;
}

inline int serve(int argc, char** argv) {
  if (argc != 3) return fail("usage: program LAUNCH OUT");
  std::FILE* in = std::fopen(argv[1], "rb");
  if (!in) return fail("cannot read the launch");
  char name[256];
  unsigned g[3], b[3];
  size_t shared = 0, nbuf = 0, nargs = 0;
  if (std::fscanf(in, "kernel %255s grid %u %u %u block %u %u %u shared %zu buffers %zu", name,
                  &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &shared, &nbuf) != 9)
    return fail("bad launch header");
  std::vector<size_t> sizes(nbuf);
  for (auto& s : sizes)
    if (std::fscanf(in, " buffer %zu", &s) != 1) return fail("bad buffer line");
  if (std::fscanf(in, " args %zu", &nargs) != 1) return fail("bad args line");
  std::vector<std::vector<unsigned char>> values(nargs);
  std::vector<std::pair<long, size_t>> pointers(nargs, {-1, 0});  // buffer, offset
  for (size_t i = 0; i < nargs; ++i) {
    char kind[16];
    if (std::fscanf(in, " arg %15s", kind) != 1) return fail("bad arg line");
    if (std::strcmp(kind, "ptr") == 0) {
      if (std::fscanf(in, " %ld %zu", &pointers[i].first, &pointers[i].second) != 2)
        return fail("bad pointer arg");
    } else {
      size_t n = 0;
      char hex[64];
      if (std::fscanf(in, " %zu %63s", &n, hex) != 2 || n > 16) return fail("bad value arg");
      values[i].resize(16, 0);
      for (size_t k = 0; k < n; ++k) {
        unsigned byte = 0;
        std::sscanf(hex + 2 * k, "%2x", &byte);
        values[i][k] = (unsigned char)byte;
      }
    }
  }
  char marker[8];
  if (std::fscanf(in, " %7s", marker) != 1 || std::strcmp(marker, "data") != 0)
    return fail("no data marker");
  std::fgetc(in);  // the newline after it
  std::vector<unsigned char*> buffers(nbuf);
  for (size_t i = 0; i < nbuf; ++i) {
    buffers[i] = (unsigned char*)std::malloc(sizes[i] ? sizes[i] : 1);
    if (sizes[i] && std::fread(buffers[i], 1, sizes[i], in) != sizes[i]) return fail("short data");
  }
  std::fclose(in);
  std::vector<void*> pointer_values(nargs, nullptr);
  std::vector<void*> args(nargs);
  for (size_t i = 0; i < nargs; ++i) {
    if (pointers[i].first >= 0) {
      pointer_values[i] = buffers[(size_t)pointers[i].first] + pointers[i].second;
      args[i] = &pointer_values[i];
    } else {
      args[i] = values[i].data();
    }
  }
  auto found = kernels().find(name);
  if (found == kernels().end()) return fail("no such kernel");
  findings = std::fopen(argv[2], "wb");
  if (!findings) return fail("cannot write the result");
  run(found->second, args.data(), dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2]), shared);
  std::fprintf(findings, "status ok\ndata\n");
  for (size_t i = 0; i < nbuf; ++i) std::fwrite(buffers[i], 1, sizes[i], findings);
  std::fclose(findings);
  for (auto* buffer : buffers) std::free(buffer);
  return 0;
}

struct Registered {
  Registered(const char* name, Body body) { kernels()[name] = body; }
};

}  // namespace tutor

#define TUTOR_KERNEL(name)                                                        \
  static ::tutor::Registered tutor_registered_##name(                             \
      #name, [](void** a) { ::tutor::call(name, a); });

int main(int argc, char** argv) { return ::tutor::serve(argc, argv); }
