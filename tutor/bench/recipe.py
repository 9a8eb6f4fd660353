"""What `tutor bench` needs to time one drill function, and the loader of a drill's recipes.

A drill's recipe file, drills/bench/<id>.py, lists `RECIPES`: one `Recipe` per bench function.
It is course content, loaded by the bench process (which has torch) like the learner's file:

    from tutor.bench.recipe import Recipe, normal

    RECIPES = [Recipe(function="softmax", dims=("m", "n"),
                      make=lambda s, dtype, device, gen: (normal((s["m"], s["n"]), dtype, device,
                                                                 gen, std=2.0),),
                      nbytes=lambda s, itemsize: 2 * s["m"] * s["n"] * itemsize,
                      eager=lambda x: torch.softmax(x, dim=-1), rows_key="m")]

- `make(shape, dtype, device, generator)` gives the arguments, the same on every run;
- `nbytes(shape, itemsize)` counts the fewest bytes any kernel must move (each input read once,
  each output written once): GB/s divides these by the time, so a second read earns nothing;
- `flops(shape)`, for compute-bound functions (matmul, attention): TFLOP/s is reported too;
- `eager` has the drill function's signature: the yardstick, and what torch.compile compiles;
- `in_place`: indices of the arguments the function writes (its results, for the comparison);
- `compared`: how many returned tensors to compare with eager's (layer_norm: y, not its stats);
- `levers`: the drill's own perf rules, `rule(case) -> Finding | None` on the facts of
  tutor.bench.rules (t4's second read, m3's causal blocks): checked before the common rules;
- `target`: what the reference should reach at large shapes: a percentage of the card's copy
  bandwidth for memory-bound functions (85 when not given), or, with `flops`, the share of torch
  eager's speed (0.8 for a matmul against cuBLAS).
- `rereads(shape)`: whether the reference must read its input twice at this shape, its rows
  being longer than the largest block it holds in registers. Plain `tl` on Triton 3.6 then
  stops short of copy bandwidth (about 70% on an H200, 82% on an H100, docs/gpu-verification.md),
  which issue 27 accepts: there the reference's target is to be ahead of torch eager,
  torch.compile and Liger-Kernel instead.
- `compiled`, with `compiled_as` its name: what torch.compile's column runs instead of
  `torch.compile(eager)`, where eager is one library kernel that compiling leaves as it is
  (m3's scaled_dot_product_attention: compiled, it is SDPA's kernel again, the eager column).
  It takes eager's arguments and compiles itself (m3: flex_attention, the attention Inductor
  writes in Triton).
- `sibling`: for a CUDA C++ drill, the file name of the Triton drill's solution that computes
  the same function (`t3_layernorm.py` for c2's rms_norm, beside the drill's own solution in
  drills/solutions/): its function of the same name is timed in turn with the reference and
  torch.compile in compile's process, and the reference must be no slower than it.

Every implementation is called as `fn(*inputs)`. In-place functions are timed rotating among
`IN_PLACE_SETS` copies of their inputs, so values cannot drift to inf over hundreds of calls
(fused_add_rmsnorm's residual grows by about rms(weight) per call) and the check after timing
stays meaningful; the traffic, and so the time, does not depend on the values.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

Shape = dict[str, int]

ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
DECODE_MAX_ROWS = 64  # a batch of decode tokens: a few rows, the time mostly launch overhead
LARGE_MIN_BYTES = 64 * 2**20  # enough traffic that the kernel should run near copy bandwidth
IN_PLACE_SETS = 8  # input copies an in-place function rotates among while it is timed


class RecipeError(Exception):
    """A drill's recipe file is missing, broken, or does not cover a bench case."""


@dataclass(frozen=True)
class Recipe:
    """One drill function as the bench sees it."""

    function: str
    dims: tuple[str, ...]  # the shape keys a bench case must give
    make: Callable[[Shape, torch.dtype, str, torch.Generator], tuple[Any, ...]]
    nbytes: Callable[[Shape, int], int]  # (shape, itemsize) -> bytes read + written at least
    eager: Callable[..., Any]
    flops: Callable[[Shape], float] | None = None  # for compute-bound functions
    in_place: tuple[int, ...] = ()  # the arguments the function writes
    compared: int | None = None  # returned tensors compared with eager's (None: all)
    rows_key: str | None = None  # the dim that counts rows (tokens), for "decode-sized"
    target: float | None = None  # see the module docstring
    levers: tuple[Callable[..., Any], ...] = ()  # the drill's own perf rules (tutor.bench.rules)
    rereads: Callable[[Shape], bool] | None = None  # see the module docstring
    compiled: Callable[..., Any] | None = None  # see the module docstring
    compiled_as: str = ""  # what `compiled` is, beside "torch.compile" in the report
    sibling: str = ""  # see the module docstring

    def checked(self, shape: Shape) -> Shape:
        if set(shape) != set(self.dims):
            raise ValueError(
                f"{self.function} needs shape keys {', '.join(self.dims)}; got "
                f"{', '.join(shape) or 'none'}"
            )
        return shape

    def bytes_moved(self, shape: Shape, dtype: str = "bfloat16") -> int:
        """The fewest bytes a kernel must read and write at `shape`."""
        return int(self.nbytes(self.checked(shape), ITEMSIZE[dtype]))

    def flop_count(self, shape: Shape) -> float | None:
        return float(self.flops(self.checked(shape))) if self.flops else None

    def inputs(
        self, shape: Shape, dtype: str = "bfloat16", device: str = "cpu", seed: int = 0
    ) -> tuple[Any, ...]:
        """Arguments for `fn(*inputs)`, the same for every seed on every run."""
        gen = torch.Generator(device=device)
        gen.manual_seed(seed)
        return self.make(self.checked(shape), DTYPES[dtype], device, gen)

    def results(self, inputs: tuple[Any, ...], returned: Any) -> tuple[torch.Tensor, ...]:
        """The tensors to compare with eager: what it wrote in place, or what it returns."""
        if self.in_place:
            return tuple(inputs[i] for i in self.in_place)
        if isinstance(returned, (tuple, list)):
            return tuple(returned[: self.compared] if self.compared else returned)
        return (returned,)

    def is_decode(self, shape: Shape) -> bool:
        """A few rows only: the time is mostly launch overhead, so report CUDA-graph time too."""
        return self.rows_key is not None and shape.get(self.rows_key, math.inf) <= DECODE_MAX_ROWS

    def is_large(self, shape: Shape, dtype: str = "bfloat16") -> bool:
        """Enough traffic that the target is a share of copy bandwidth."""
        return self.bytes_moved(shape, dtype) >= LARGE_MIN_BYTES

    def compiled_fn(self) -> Callable[..., Any]:
        """torch.compile's side of the comparison (compiled on its first call)."""
        return self.compiled or torch.compile(self.eager, dynamic=False)

    def reads_twice(self, shape: Shape) -> bool:
        """The reference must read its rows twice here: copy bandwidth is not its target."""
        return bool(self.rereads and self.rereads(self.checked(shape)))


def load_recipes(path: Path) -> dict[str, Recipe]:
    """The `RECIPES` of a drill's recipe file, by function name."""
    if not path.is_file():
        raise RecipeError(f"{path} does not exist: the drill has no bench recipe")
    name = f"bench_recipe_{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RecipeError(f"{path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - a broken recipe is reported, not raised
        raise RecipeError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from exc
    recipes = getattr(module, "RECIPES", None)
    if not isinstance(recipes, (list, tuple)) or not all(isinstance(r, Recipe) for r in recipes):
        raise RecipeError(f"{path} must define RECIPES, a list of tutor.bench.recipe.Recipe")
    return {recipe.function: recipe for recipe in recipes}


def normal(
    shape: tuple[int, ...],
    dtype: torch.dtype,
    device: str,
    gen: torch.Generator,
    mean: float = 0.0,
    std: float = 1.0,
) -> torch.Tensor:
    """Normal values drawn in fp32 from `gen`, then converted to `dtype`."""
    values = torch.empty(shape, dtype=torch.float32, device=device)
    values.normal_(mean, std, generator=gen)
    return values.to(dtype)


def clone_inputs(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A copy whose tensors can be written in place without touching the originals."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in inputs)


def tolerance(dtype: str) -> tuple[float, float]:
    """(atol, rtol) for a kernel against torch eager at a bench shape.

    16-bit results differ from eager by an ulp or two where eager rounds an intermediate
    (silu(gate) before the product, for one); bf16 has 8 bits of mantissa, about 0.4% an ulp.
    """
    return (1e-4, 1e-4) if dtype == "float32" else (3e-2, 3e-2)


def max_excess(
    got: tuple[torch.Tensor, ...], want: tuple[torch.Tensor, ...], dtype: str
) -> tuple[float, float]:
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
