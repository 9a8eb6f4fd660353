"""What `tutor bench` needs to know about each drill function, apart from the kernel itself.

For every function a drill asks for (gelu_tanh, softmax, layer_norm, rms_norm,
fused_add_rmsnorm, silu_and_mul) this module knows:

- the inputs to time it on, made from a bench case's shape (drills.yaml) on a device;
- the fewest bytes any kernel must move for it: each input read once, each output written once.
  GB/s figures divide these bytes by the time, so a kernel that reads a row twice is not credited
  for its second read;
- a torch eager version with the same signature, the yardstick (and what torch.compile compiles);
- which tensors hold the results, to check a kernel against eager at the bench shape.

Every implementation is called the same way: `fn(*inputs)`.

In-place timing. fused_add_rmsnorm rewrites its inputs, so timing it calls it hundreds of times on
its own outputs. x is renormalised on every call and stays of the order of the weight, but the
residual gains x on every call: its RMS grows by about rms(weight) per call. Measured on the CPU
(H = 4096): in fp32 it grows without bound but stays finite (about 2e4 after 20 000 calls); in
bf16 it stalls near 420 because adding a value near 1 no longer changes the rounded sum; in fp16
it overflows to inf after a few thousand calls. So an in-place function is timed rotating among
`IN_PLACE_SETS` copies of its inputs (each sees a few hundred calls at most), and the copies are
checked for inf/NaN afterwards. The traffic does not depend on the values, so the time does not
either; the rotation only keeps the check after timing meaningful.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
STATS_ITEMSIZE = 4  # layer_norm's mean and rstd are float32 whatever x's dtype

LAYER_NORM_EPS = 1e-5
RMS_NORM_EPS = 1e-6

DECODE_MAX_ROWS = 64  # a batch of decode tokens: a few rows, the time mostly launch overhead
LARGE_MIN_BYTES = 64 * 2**20  # enough traffic that the kernel should run near copy bandwidth
IN_PLACE_SETS = 8  # input copies an in-place function rotates among while it is timed


# ---- torch eager versions, with the drills' signatures ------------------------------------------

def gelu_tanh_eager(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


def softmax_eager(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def layer_norm_eager(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                     eps: float = LAYER_NORM_EPS) -> torch.Tensor:
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def rms_norm_eager(x: torch.Tensor, weight: torch.Tensor,
                   eps: float = RMS_NORM_EPS) -> torch.Tensor:
    # eps given explicitly: F.rms_norm's default is float32's machine epsilon, not 1e-6.
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def fused_add_rmsnorm_eager(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                            eps: float = RMS_NORM_EPS) -> None:
    """h = x + residual in fp32; residual <- h (rounded); x <- rms_norm(h) * weight (FlashInfer)."""
    h = x.float() + residual.float()
    residual.copy_(h)
    x.copy_(F.rms_norm(h, (h.shape[-1],), weight.float(), eps))


def silu_and_mul_eager(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


# ---- inputs -------------------------------------------------------------------------------------

def _normal(shape: tuple[int, ...], dtype: torch.dtype, device: str, gen: torch.Generator,
            mean: float = 0.0, std: float = 1.0) -> torch.Tensor:
    values = torch.empty(shape, dtype=torch.float32, device=device)
    values.normal_(mean, std, generator=gen)
    return values.to(dtype)


def _gelu_inputs(s, dtype, device, gen):
    return (_normal((s["n"],), dtype, device, gen),)


def _softmax_inputs(s, dtype, device, gen):
    return (_normal((s["m"], s["n"]), dtype, device, gen, std=2.0),)


def _layer_norm_inputs(s, dtype, device, gen):
    x = _normal((s["m"], s["n"]), dtype, device, gen, mean=0.5)
    weight = _normal((s["n"],), dtype, device, gen, mean=1.0, std=0.1)
    bias = _normal((s["n"],), dtype, device, gen, std=0.1)
    return x, weight, bias, LAYER_NORM_EPS


def _rms_norm_inputs(s, dtype, device, gen):
    x = _normal((s["m"], s["n"]), dtype, device, gen)
    weight = _normal((s["n"],), dtype, device, gen, mean=1.0, std=0.1)
    return x, weight, RMS_NORM_EPS


def _fused_add_rmsnorm_inputs(s, dtype, device, gen):
    x = _normal((s["t"], s["h"]), dtype, device, gen)
    residual = _normal((s["t"], s["h"]), dtype, device, gen)
    weight = _normal((s["h"],), dtype, device, gen, mean=1.0, std=0.1)
    return x, residual, weight, RMS_NORM_EPS


def _silu_and_mul_inputs(s, dtype, device, gen):
    return (_normal((s["t"], 2 * s["i"]), dtype, device, gen),)


# ---- the table ----------------------------------------------------------------------------------

Shape = dict[str, int]


@dataclass(frozen=True)
class Op:
    """One drill function as the bench sees it."""

    function: str
    dims: tuple[str, ...]  # the shape keys a bench case must give, in order
    make: Callable[[Shape, torch.dtype, str, torch.Generator], tuple[Any, ...]]
    nbytes: Callable[[Shape, int], int]  # (shape, itemsize) -> bytes read + written at least
    eager: Callable[..., Any]
    in_place: bool = False
    rows_key: str | None = None  # the dim that counts rows (tokens), for "decode-sized"

    def results(self, inputs: tuple[Any, ...], returned: Any) -> tuple[torch.Tensor, ...]:
        """The tensors to compare with eager: what it returns, or what it wrote in place."""
        if self.in_place:
            return tuple(t for t in inputs[:2])
        if isinstance(returned, (tuple, list)):
            return tuple(returned[:1])  # layer_norm: y (eager gives no mean/rstd to compare)
        return (returned,)


OPS: dict[str, Op] = {op.function: op for op in (
    Op("gelu_tanh", ("n",), _gelu_inputs,
       lambda s, b: 2 * s["n"] * b, gelu_tanh_eager),
    Op("softmax", ("m", "n"), _softmax_inputs,
       lambda s, b: 2 * s["m"] * s["n"] * b, softmax_eager, rows_key="m"),
    Op("layer_norm", ("m", "n"), _layer_norm_inputs,
       # x, weight, bias read; y written; mean and rstd (fp32, one per row) written
       lambda s, b: 2 * s["m"] * s["n"] * b + 2 * s["n"] * b + 2 * s["m"] * STATS_ITEMSIZE,
       layer_norm_eager, rows_key="m"),
    Op("rms_norm", ("m", "n"), _rms_norm_inputs,
       lambda s, b: 2 * s["m"] * s["n"] * b + s["n"] * b, rms_norm_eager, rows_key="m"),
    Op("fused_add_rmsnorm", ("t", "h"), _fused_add_rmsnorm_inputs,
       # x, residual, weight read; x and residual written back
       lambda s, b: 4 * s["t"] * s["h"] * b + s["h"] * b,
       fused_add_rmsnorm_eager, in_place=True, rows_key="t"),
    Op("silu_and_mul", ("t", "i"), _silu_and_mul_inputs,
       # x [t, 2i] read, out [t, i] written
       lambda s, b: 3 * s["t"] * s["i"] * b, silu_and_mul_eager, rows_key="t"),
)}


def op_for(function: str) -> Op:
    try:
        return OPS[function]
    except KeyError:
        raise KeyError(f"no bench recipe for {function!r} (known: {', '.join(OPS)})") from None


def _checked(op: Op, shape: Shape) -> Shape:
    if set(shape) != set(op.dims):
        raise ValueError(f"{op.function} needs shape keys {', '.join(op.dims)}; got "
                         f"{', '.join(shape) or 'none'}")
    return shape


def bytes_moved(function: str, shape: Shape, dtype: str = "bfloat16") -> int:
    """The fewest bytes a kernel for `function` must read and write at `shape`."""
    op = op_for(function)
    return op.nbytes(_checked(op, shape), ITEMSIZE[dtype])


def make_inputs(function: str, shape: Shape, dtype: str = "bfloat16", device: str = "cpu",
                seed: int = 0) -> tuple[Any, ...]:
    """Arguments for `fn(*inputs)`, the same for every seed on every run."""
    op = op_for(function)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return op.make(_checked(op, shape), DTYPES[dtype], device, gen)


def clone_inputs(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A copy whose tensors can be written in place without touching the originals."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in inputs)


def is_decode(function: str, shape: Shape) -> bool:
    """A few rows only: the time is mostly launch overhead, so report CUDA-graph time too."""
    key = op_for(function).rows_key
    return key is not None and shape.get(key, math.inf) <= DECODE_MAX_ROWS


def is_large(function: str, shape: Shape, dtype: str = "bfloat16") -> bool:
    """Enough traffic that the target is a share of copy bandwidth."""
    return bytes_moved(function, shape, dtype) >= LARGE_MIN_BYTES


def tolerance(dtype: str) -> tuple[float, float]:
    """(atol, rtol) for a kernel against torch eager at a bench shape.

    16-bit results differ from eager by an ulp or two where eager rounds an intermediate
    (silu(gate) before the product, for one); bf16 has 8 bits of mantissa, about 0.4% an ulp.
    """
    return (1e-4, 1e-4) if dtype == "float32" else (3e-2, 3e-2)


def max_excess(got: tuple[torch.Tensor, ...], want: tuple[torch.Tensor, ...],
               dtype: str) -> tuple[float, float]:
    """(worst |diff|, worst |diff| / allowed) over all result tensors; inf for a shape mismatch."""
    atol, rtol = tolerance(dtype)
    worst_diff = worst_excess = 0.0
    for g, w in zip(got, want, strict=True):
        if not isinstance(g, torch.Tensor) or g.shape != w.shape:
            return math.inf, math.inf
        g, w = g.float(), w.float()
        diff = (g - w).abs().nan_to_num(nan=math.inf)
        worst_diff = max(worst_diff, float(diff.max())) if diff.numel() else worst_diff
        excess = diff / (atol + rtol * w.abs())
        worst_excess = max(worst_excess, float(excess.max())) if excess.numel() else worst_excess
    return worst_diff, worst_excess
