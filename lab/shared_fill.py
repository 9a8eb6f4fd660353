"""Does a kernel that fills every SM's shared memory leave it filled for the next kernel?

    python -m lab.shared_fill          # on a GPU machine with CuPy, about 10 s

The CPU build of a CUDA C++ drill fills each block's `__shared__` arrays with 0xFF bytes, so a
slot no thread wrote reads NaN; on an H100 the same slot read values that mostly left c2's rows
right (2026-12-07), so four of c2's known-buggy kernels were named otherwise there. The branch
`wip/gpu-shared-fill` launches a filler (one block per SM, as much dynamic shared memory as a
block may take, every word 0xFFFFFFFF) before each launch of a learner's kernel in tests. This
probe asks whether that can work at all: what a kernel that reads its shared memory before
writing it sees when it starts fresh, after a kernel that wrote 0xABCD, after the filler, with
each shared-memory carveout, and with a torch operation between the filler and the reader.
Each line gives the share of words read as 0xFFFFFFFF, 0, 0xABCD and anything else.
"""

from __future__ import annotations

SOURCE = r"""
extern "C" __global__ void fill(unsigned words) {
  extern __shared__ unsigned s[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) s[i] = 0xFFFFFFFFu;
}
extern "C" __global__ void write_abcd(unsigned value) {
  volatile __shared__ unsigned t[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) t[i] = value;
  __syncthreads();
}
extern "C" __global__ void read_static(unsigned* out) {
  __shared__ unsigned t[256];
  out[blockIdx.x * 256 + threadIdx.x] = ((volatile unsigned*)t)[threadIdx.x];
}
extern "C" __global__ void read_dynamic(unsigned* out) {
  extern __shared__ unsigned t[];
  out[blockIdx.x * 256 + threadIdx.x] = ((volatile unsigned*)t)[threadIdx.x];
}
"""


def main() -> None:
    import cupy as cp
    import torch

    module = cp.RawModule(code=SOURCE)
    fill, write, read, read_dynamic = (
        module.get_function(name) for name in ("fill", "write_abcd", "read_static", "read_dynamic")
    )
    device = cp.cuda.Device()
    sms = device.attributes["MultiProcessorCount"]
    optin = device.attributes["MaxSharedMemoryPerBlockOptin"]
    fill.max_dynamic_shared_size_bytes = optin
    print(f"{torch.cuda.get_device_name()}: {sms} SMs, {optin} bytes of shared memory a block")

    def show(what: str, out: cp.ndarray) -> None:
        device.synchronize()
        words = cp.asnumpy(out)
        shares = [
            (words == 0xFFFFFFFF).mean(),
            (words == 0).mean(),
            (words == 0xABCD).mean(),
            (~((words == 0) | (words == 0xFFFFFFFF) | (words == 0xABCD))).mean(),
        ]
        print(f"{what:44s} " + " ".join(f"{s:6.3f}" for s in shares))

    def run(*steps: str, blocks: int, out: cp.ndarray, dynamic: bool = False) -> None:
        """The steps in order on the current stream, then the reader over `blocks` blocks."""
        for step in steps:
            if step == "abcd":
                write((sms * 8,), (256,), (cp.uint32(0xABCD),))
            elif step == "fill":
                fill((sms,), (1024,), (cp.uint32(optin // 4),), shared_mem=optin)
        if dynamic:
            read_dynamic((blocks,), (256,), (out,), shared_mem=1024)
        else:
            read((blocks,), (256,), (out,))

    print(f"{'':44s} {'ff':>6s} {'zero':>6s} {'abcd':>6s} {'other':>6s}")
    for blocks in (4, sms, 4096):
        out = cp.zeros(blocks * 256, dtype=cp.uint32)
        run(blocks=blocks, out=out)
        show(f"fresh, {blocks} blocks", out)
        run("abcd", blocks=blocks, out=out)
        show(f"after 0xABCD, {blocks} blocks", out)
        run("abcd", "fill", blocks=blocks, out=out)
        show(f"after the filler, {blocks} blocks", out)
        run("abcd", "fill", blocks=blocks, out=out, dynamic=True)
        show(f"after the filler, dynamic, {blocks} blocks", out)
        for carveout in (0, 50, 100):
            read.preferred_shared_memory_carveout = carveout
            run("abcd", "fill", blocks=blocks, out=out)
            show(f"after the filler, carveout {carveout}, {blocks} blocks", out)
        read.preferred_shared_memory_carveout = -1
    x = torch.randn(4096, 4096, device="cuda")
    out = cp.zeros(4096 * 256, dtype=cp.uint32)
    for name, between in (("mul", lambda: x.mul(2)), ("softmax", lambda: torch.softmax(x, -1))):
        fill((sms,), (1024,), (cp.uint32(optin // 4),), shared_mem=optin)
        between()
        read((4096,), (256,), (out,))
        show(f"the filler, torch's {name}, the reader", out)


if __name__ == "__main__":
    main()
