"""t2 mutant (mismatch): 3 programs take groups of 4 rows in a while loop that runs only while
a whole group fits, so a last, partial group is never written. Where the rows written happen to
be a multiple of a launch's programs and block, one test alone looks like a grid that rounds
down; the tests that stop elsewhere show it is the loop."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_whole_groups(src, dst, n_rows, n_cols, src_stride, dst_stride,
                          GROUP: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    offs = tl.arange(0, BLOCK)
    keep = offs < n_cols
    group = tl.program_id(0)
    while (group + 1) * GROUP <= n_rows:  # a partial last group is skipped
        for i in tl.static_range(GROUP):
            row = (group * GROUP + i).to(tl.int64)
            v = tl.load(src + row * src_stride + offs, mask=keep, other=-float("inf"))
            v = v.to(tl.float32)
            v = tl.exp(v - tl.max(v, axis=0))
            tl.store(dst + row * dst_stride + offs,
                     (v / tl.sum(v, axis=0)).to(dst.dtype.element_ty), mask=keep)  # fmt: skip
        group += tl.num_programs(0)


def softmax(x: torch.Tensor) -> torch.Tensor:
    shape = x.shape
    x2 = (x if x.stride(-1) == 1 else x.contiguous()).reshape(-1, shape[-1])
    y2 = torch.empty_like(x2)
    _softmax_whole_groups[(3,)](
        x2, y2, x2.shape[0], shape[-1], x2.stride(0), y2.stride(0),
        GROUP=4, BLOCK=triton.next_power_of_2(shape[-1]),
    )  # fmt: skip
    return y2.view(shape)
