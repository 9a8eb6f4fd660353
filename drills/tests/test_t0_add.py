"""Tests for drill t0: `add(x, y)`, elementwise x + y over a 1-D grid of blocks.

Every size leaves the last block partly filled for any power-of-two BLOCK_SIZE (1000,
3 * 4096 + 123, 5 x 123, ...), and the inputs sit between runs of NaN, so a load without a mask
turns the tail NaN. Tensors the learner allocates sit between sentinel values, so a store without
a mask lands there. Both are named `missing-mask`. The several-block sizes need at least four
programs for any BLOCK_SIZE up to 4096: a kernel whose programs all compute the first block is
right on a prefix and wrong after it (`block-offset`), while a grid that rounds down misses only
the last, partial block. Transposed inputs are not laid out in order in memory: a kernel that
walks their memory without `.contiguous()` adds the wrong pairs (`not-contiguous`).
"""

from __future__ import annotations

import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    guarded,
    round_to,
    where_wrong,
)
from tutor.harness import diagnoses as dx

DRILL = "t0"

BLOCK_OFFSET = "block-offset"
NOT_CONTIGUOUS = "not-contiguous"
MIN_BLOCK = 16  # no block is smaller: a shorter right prefix is not a block

# fp32: x + y is one correctly rounded IEEE addition on every backend; the slack is only there
# for a kernel that reaches the same sum another way. Every mistake is off by O(1).
FP32 = Tolerance(atol=1e-6, rtol=1e-6)
# bf16: the kernel's fp32 sum is rounded to bf16 once (the reference is rounded as the backend
# rounds), but a kernel that adds in bf16 on the GPU may land on the neighbouring value:
# one bf16 ulp is at most 2**-7 of the value.
BF16 = Tolerance(atol=1e-5, rtol=2**-7)


def _tol(dtype: torch.dtype) -> Tolerance:
    return FP32 if dtype == torch.float32 else BF16


def randn(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).to(dtype).to(device)


def add_reference(x: torch.Tensor, y: torch.Tensor, backend: Backend) -> torch.Tensor:
    """x + y in fp32, rounded to x's dtype as the backend rounds."""
    return round_to(x.float() + y.float(), x.dtype, backend)


# ----------------------------------------------------------------------------------------------
# What a kernel that ignores the layout computes
# ----------------------------------------------------------------------------------------------


def _memory_dims(t: torch.Tensor) -> list[int]:
    """The dims of a dense (permuted) tensor ordered from the largest stride to the smallest."""
    return sorted(range(t.dim()), key=lambda d: -t.stride(d))


def in_memory_order(t: torch.Tensor) -> torch.Tensor:
    """t's elements in the order they sit in memory: what a kernel reading t_ptr + i sees."""
    return t.permute(_memory_dims(t)).reshape(-1)


def laid_out_like(flat: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """The tensor a kernel gets by storing `flat` in order into memory laid out like `like`."""
    out = torch.empty_like(like, dtype=flat.dtype)  # same strides as `like`
    out.permute(_memory_dims(out)).view(-1).copy_(flat)
    return out


def layout_suspects(x: torch.Tensor, y: torch.Tensor, backend: Backend) -> list[Suspect]:
    """x and y read in memory order and added, stored into an output shaped like x or like y."""
    flat = in_memory_order(x).float() + in_memory_order(y).float()
    found = []
    for name, like in (("x", x), ("y", y), ("a contiguous tensor", x.contiguous())):
        value = round_to(laid_out_like(flat, like), x.dtype, backend)
        found.append(
            Suspect(
                NOT_CONTIGUOUS,
                value,
                f"x and y added in the order their elements sit in memory, stored into {name}: "
                "a transposed view's memory is not in row order (no .contiguous())",
            )
        )
    return found


# ----------------------------------------------------------------------------------------------
# The check every test makes
# ----------------------------------------------------------------------------------------------


def expect_blocks_of_their_own(out, want: torch.Tensor, tol: Tolerance, what: str) -> None:
    """`block-offset`: right on a prefix (the first block), wrong on nearly all after it.

    A grid that rounds down leaves only the last partial block wrong, less than half the output
    at the several-block sizes; so a right prefix shorter than half the output, with almost
    everything after it wrong, is programs writing the first block over and over.
    """
    if not isinstance(out, torch.Tensor) or out.shape != want.shape or out.dtype != want.dtype:
        return  # expect_close names these
    right = torch.isclose(
        out.float().reshape(-1), want.float().reshape(-1), atol=tol.atol, rtol=tol.rtol
    )
    if right.all():
        return
    n = right.numel()
    prefix = int((~right).nonzero()[0])
    wrong_after = int((~right[prefix:]).sum())
    if MIN_BLOCK <= prefix <= n // 2 and wrong_after >= 0.9 * (n - prefix):
        raise DrillFailure(
            BLOCK_OFFSET,
            f"{what}: the first {prefix} of {n} values are right, and {wrong_after} of the "
            f"{n - prefix} after them are wrong",
            "Only the first block came out: every program computed the elements starting at 0. "
            "A program's block starts at pid * BLOCK_SIZE.",
            **where_wrong(out, want, tol),
        )


def check_add(
    impl, backend: Backend, x: torch.Tensor, y: torch.Tensor, *, reads_guarded: bool = False
) -> None:
    # The reference from copies taken before the call: a kernel that stores into x or y
    # would otherwise change what it is compared with.
    x_before, y_before = x.clone(), y.clone()
    out = impl.add(x, y)
    want = add_reference(x_before, y_before, backend)
    what = f"output for {str(x.dtype).removeprefix('torch.')} x, y of shape {tuple(x.shape)}"
    tol = _tol(x.dtype)
    strided = not (x.is_contiguous() and y.is_contiguous())
    if not strided:  # on strided inputs a right prefix can be luck: the suspects judge them
        expect_blocks_of_their_own(out, want, tol, what)
    expect_close(
        out,
        want,
        what=what,
        tol=tol,
        suspects=(lambda: layout_suspects(x, y, backend)) if strided else (),
        # The same values in fp32, guarded like the originals: a kernel right there and wrong
        # here did bf16 arithmetic (garbage in the CPU interpreter).
        fp32_rerun=lambda: impl.add(guarded(x_before.float())[0], guarded(y_before.float())[0]),
        fp32_expected=x_before.float() + y_before.float(),
        reads_guarded=reads_guarded,
    )
    for name, now, before in (("x", x, x_before), ("y", y, y_before)):
        if not torch.equal(now.isnan(), before.isnan()) or not torch.equal(
            now.nan_to_num(), before.nan_to_num()
        ):
            raise DrillFailure(
                dx.MISMATCH,
                f"add changed its input {name}: the kernel stored into it (check the order of "
                "the pointers the wrapper passes, and the store's pointer)",
            )


def guarded_pair(shape, dtype, device, seed) -> tuple[torch.Tensor, torch.Tensor]:
    """x and y of `shape`, each inside its own buffer with NaN on both sides."""
    x, _ = guarded(randn(shape, dtype, device, seed))
    y, _ = guarded(randn(shape, dtype, device, seed + 100))
    return x, y


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------


def test_fp32_one_partly_filled_block(impl, backend):
    # 1000 elements: one block of 1024 (or a tail after blocks of 128..512), NaN right after.
    x, y = guarded_pair((1000,), torch.float32, backend.device, seed=1)
    check_add(impl, backend, x, y, reads_guarded=True)


def test_fp32_several_blocks(impl, backend):
    # 3 * 4096 + 123 = 12411: four or more programs for any BLOCK_SIZE up to 4096, the last
    # one ragged. Every program must take its own block.
    x, y = guarded_pair((3 * 4096 + 123,), torch.float32, backend.device, seed=2)
    check_add(impl, backend, x, y, reads_guarded=True)


def test_bf16_several_blocks_2d(impl, backend):
    # 3 x 4219 = 12657 bf16 values: a 2-D shape the kernel sees flat, several blocks again.
    x, y = guarded_pair((3, 4219), torch.bfloat16, backend.device, seed=3)
    check_add(impl, backend, x, y, reads_guarded=True)


def test_bf16_3d(impl, backend):
    # 3 x 5 x 41 = 615 values in one partial block: the output must come back 3-D.
    x, y = guarded_pair((3, 5, 41), torch.bfloat16, backend.device, seed=4)
    check_add(impl, backend, x, y, reads_guarded=True)


def test_fp32_single_element(impl, backend):
    # One value: 1023 of 1024 lanes are masked off.
    x, y = guarded_pair((1,), torch.float32, backend.device, seed=5)
    check_add(impl, backend, x, y, reads_guarded=True)


def test_fp32_transposed_x(impl, backend):
    # x is a transposed view, y is contiguous: x's memory holds its columns one after another,
    # so walking it in order pairs x[0, 1] with the wrong element of y.
    x = randn((123, 37), torch.float32, backend.device, seed=6).t()
    y = randn((37, 123), torch.float32, backend.device, seed=7)
    check_add(impl, backend, x, y)


def test_bf16_transposed_y(impl, backend):
    # The same with the transposed view in y, in bf16.
    x = randn((40, 61), torch.bfloat16, backend.device, seed=8)
    y = randn((61, 40), torch.bfloat16, backend.device, seed=9).t()
    check_add(impl, backend, x, y)
