"""The compile and launch facts of one call of a kernel's host function, read on the GPU.

    limits = device_limits()              # the card: SMs, registers, shared memory, warps
    facts = call_facts(lambda: fn(*inputs), language)   # language: tutor.kernels
    # {"launches": [{"kernel", "grid", "programs", "n_regs", "n_spills", "shared",
    #                "num_warps", "num_stages", "tensor_cores", "dot_tiles", "exp_ops",
    #                "exp_denormal", "ints"}, ...],
    #  "kernels": [{"name", "us", "triton"}, ...]}   # every GPU kernel, torch's included

Runs in the bench process (tutor.bench.child), which has a GPU; everything it returns is plain
JSON, read by the perf coach (tutor.bench.occupancy, tutor.bench.rules) in the tutor's process.

- The kernel language reads each launch of its kernels in the call (its registers, spills,
  shared memory, warps, stages and grid: `KernelLanguage.recorded_launches`, Triton's in
  tutor.kernels.triton.facts).
- The torch profiler (CUPTI) sees every kernel the call ran on the GPU, torch's own as well
  (a `.contiguous()` copy, a `.float()` cast, a `zeros` fill), with its GPU time: what a call
  launches beyond the learner's kernels, and where its time goes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tutor.bench.gpu_lock import exclusive
from tutor.kernels.base import KernelLanguage

RESERVED_SHARED_PER_BLOCK = 1024  # the driver keeps 1 KB of shared memory per block (sm_80+)
REGISTER_UNIT = 256  # registers are allocated per warp, 256 at a time
MAX_BLOCKS_PER_SM = {9: 32, 8: 32, 7: 32}  # resident blocks per SM by compute capability major


def device_limits(device: int = 0) -> dict[str, Any]:
    """What bounds how many programs an SM holds at once, and how many SMs there are."""
    import torch

    props = torch.cuda.get_device_properties(device)
    limits: dict[str, Any] = {
        "sms": props.multi_processor_count,
        "warp_size": getattr(props, "warp_size", 32),
        "max_threads_per_sm": getattr(props, "max_threads_per_multi_processor", 2048),
        "regs_per_sm": getattr(props, "regs_per_multiprocessor", 65536),
        "shared_per_sm": getattr(props, "shared_memory_per_multiprocessor", None),
        "shared_per_block": getattr(props, "shared_memory_per_block_optin", None),
        "max_blocks_per_sm": MAX_BLOCKS_PER_SM.get(props.major, 16),
        "register_unit": REGISTER_UNIT,
        "reserved_shared_per_block": RESERVED_SHARED_PER_BLOCK,
        "capability": f"{props.major}.{props.minor}",
        "l2_bytes": getattr(props, "L2_cache_size", None),
    }
    try:  # Triton's own reading of the same card, where torch lacks a field
        from triton.runtime import driver

        found = driver.active.utils.get_device_properties(device)
        limits["max_regs_per_block"] = found.get("max_num_regs")
        if limits["shared_per_block"] is None:
            limits["shared_per_block"] = found.get("max_shared_mem")
    except Exception:  # noqa: BLE001 - torch's fields are enough
        pass
    if limits["shared_per_sm"] is None and limits["shared_per_block"]:
        limits["shared_per_sm"] = limits["shared_per_block"] + RESERVED_SHARED_PER_BLOCK
    return limits


def profiled_kernels(call: Callable[[], Any]) -> list[dict[str, Any]]:
    """Every GPU kernel (and memory copy or fill) one `call` ran, with its GPU time in µs."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    kernels = []
    for event in prof.events():
        if str(getattr(event, "device_type", "")).split(".")[-1] != "CUDA":
            continue
        us = getattr(event, "device_time", None)
        if us is None:
            us = getattr(event, "cuda_time", 0.0)
        kernels.append({"name": event.name, "us": round(float(us or 0.0), 3)})
    return kernels


def call_facts(call: Callable[[], Any], language: KernelLanguage) -> dict[str, Any]:
    """The launches of one call (with their compile facts, as `language` reads them) and every
    kernel it ran on the GPU.

    The call is made twice: once with the launches recorded (its compiles already done by the
    caller), once under the profiler; recording is cheap, profiling is not, and neither may
    change what the other sees.
    """
    import torch

    with exclusive():
        with language.recorded_launches() as launches:
            call()
            torch.cuda.synchronize()
        facts: dict[str, Any] = {"launches": launches, "kernels": [], "profile_error": None}
        try:
            kernels = profiled_kernels(call)
        except Exception as exc:  # noqa: BLE001 - the launches alone still say a lot
            facts["profile_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return facts
        learner_names = {launch.get("kernel") for launch in launches}
        for kernel in kernels:
            kernel["triton"] = kernel["name"] in learner_names
        facts["kernels"] = kernels
        return facts
