"""Tests for drill m3: `attention(q, k, v, causal=False, sm_scale=None)`, flash-attention forward.

The reference is softmax(q k^T * sm_scale) v in float64 from exactly the values the kernel loads.
The tests cannot see the learner's block sizes, so sequence lengths are 200, 150 and 40: with
any BLOCK_N in {16, 32, 64, 128} there are several key blocks (except at 40) and a partial one.
Suspects that depend on the block size (the unrescaled accumulator, padded keys) are computed
for every such BLOCK_N. What each input exposes:
- random q, k, v: the plain case; a wrong scale (none, or base 2 instead of e) moves every row;
- "growing" keys, whose scores rise along the sequence: the running max grows in every key
  block, so an accumulator that is not rescaled keeps early keys far too heavy;
- "negative" keys, whose scores are all about -3: a padded key that enters the softmax with a
  score of 0 outweighs twenty real ones;
- causal inputs with spiky scores: moving the mask by one key changes every row (a mask that
  lets key i + 1 in may still stop at the query block's end: suspects for every BLOCK_M);
- an explicit sm_scale of 0.3 where the default would be 0.25 (and 0.09 if applied twice);
- q, k, v as [B, S, H, D] tensors seen as [B, H, S, D] (strided heads and rows).
Every tensor sits inside NaN guards, so a load without a mask turns rows NaN (`missing-mask`).

16-bit inputs: bfloat16 on the GPU. The CPU interpreter's tl.dot multiplies bfloat16 tensors as
their raw 16-bit integers (it keeps bf16 as uint16), so on the CPU the 16-bit tests use float16,
which the interpreter holds as real numpy float16: the same kernel runs on both.
"""

from __future__ import annotations

import math

import torch

from tutor.harness import (
    Backend,
    DrillFailure,
    Suspect,
    Tolerance,
    expect_close,
    guarded,
    round_to,
)
from tutor.harness import diagnoses as dx

DRILL = "m3"

BLOCKS = (16, 32, 64, 128)  # the BLOCK_N (or BLOCK_M) a learner may pick: suspects for each
LOG2E = 1.4426950408889634

# fp32 on the CPU: tl.dot is an fp32 numpy matmul, exp2 is exact to an ulp; the kernel differs
# from the fp64 reference by ~1e-6 at most on these inputs (outputs are at most ~3).
CPU_FP32 = Tolerance(atol=2e-5, rtol=2e-5)
# fp32 on the GPU: tl.dot rounds fp32 inputs to TF32 (10 mantissa bits, ~5e-4 relative) in both
# q @ k^T and p @ v. Scores of up to ~8 carry ~4e-3 absolute error into the exponent; outputs
# move by a few 1e-3. Every suspect below moves some output by 5e-2 or more.
GPU_FP32 = Tolerance(atol=5e-3, rtol=5e-3)
# 16-bit: p is rounded to the input dtype before p @ v (bf16 on the GPU: 2**-9 relative each;
# fp16 on the CPU: 2**-11), and the output is rounded to the dtype, where the kernel's fp32 value
# and the reference's can sit on two sides of a rounding boundary: one ulp is at most 2**-7
# relative in bf16.
HALF = Tolerance(atol=4e-3, rtol=2**-7)


def fp32_tol(backend: Backend) -> Tolerance:
    return CPU_FP32 if backend.is_cpu else GPU_FP32


def half_dtype(backend: Backend) -> torch.dtype:
    """bfloat16 on the GPU, float16 on the CPU (see the module docstring)."""
    return torch.float16 if backend.is_cpu else torch.bfloat16


# ----------------------------------------------------------------------------------------------
# The reference and what each mistake computes instead
# ----------------------------------------------------------------------------------------------


def scores(
    q: torch.Tensor, k: torch.Tensor, scale: float, causal: bool, diagonal: int = 1
) -> torch.Tensor:
    """q k^T * scale in fp64; causal: key j masked (-inf) where j >= i + diagonal."""
    s = q.double() @ k.double().transpose(-1, -2) * scale
    if causal:
        n = s.shape[-1]
        hidden = torch.ones(n, n, dtype=torch.bool, device=s.device).triu(diagonal)
        s = s.masked_fill(hidden, float("-inf"))
    return s


def attention_fp64(q, k, v, causal: bool, scale: float, diagonal: int = 1) -> torch.Tensor:
    """softmax(q k^T * scale [masked]) v in float64 (NaN in a row whose every key is masked)."""
    return torch.softmax(scores(q, k, scale, causal, diagonal), dim=-1) @ v.double()


def one_ahead_within_blocks(q, k, v, scale: float, block_m: int) -> torch.Tensor:
    """Causal attention whose mask lets key i + 1 in, from a kernel whose key loop still stops
    at its query block's last row: that row (i + 1 a multiple of block_m) sees keys 0..i only."""
    n = q.shape[-2]
    rows = torch.arange(n, device=q.device)[:, None]
    ahead = torch.where((rows + 1) % block_m == 0, rows, rows + 1)
    hidden = torch.arange(n, device=q.device)[None, :] > ahead
    s = (q.double() @ k.double().transpose(-1, -2) * scale).masked_fill(hidden, float("-inf"))
    return torch.softmax(s, dim=-1) @ v.double()


def last_key_block_only(q, k, v, scale: float, block_n: int) -> torch.Tensor:
    """Non-causal attention over the last key block alone: what an online softmax gives when its
    running max is never updated (it stays -inf, so exp(m - m_new) = 0 wipes every block's
    terms but the last one's)."""
    n = k.shape[-2]
    first = (n - 1) // block_n * block_n
    return attention_fp64(q, k[..., first:, :], v[..., first:, :], False, scale)


def _running_max(s: torch.Tensor, block_n: int) -> torch.Tensor:
    """For each key, the running max of its row once the key's block (of block_n) is folded in."""
    n = s.shape[-1]
    n_blocks = -(-n // block_n)
    padded = torch.nn.functional.pad(s, (0, n_blocks * block_n - n), value=float("-inf"))
    block_max = padded.unflatten(-1, (n_blocks, block_n)).amax(dim=-1)
    running = torch.cummax(block_max, dim=-1).values  # finite: key 0 is always visible
    return running.repeat_interleave(block_n, dim=-1)[..., :n]


def unrescaled(
    q, k, v, causal: bool, scale: float, block_n: int, rescale_acc: bool, rescale_sum: bool
) -> torch.Tensor:
    """The online softmax over key blocks of block_n where the accumulator, the running sum l,
    or both are never rescaled.

    Block b adds exp(s_j - m_b) to what is not rescaled, with m_b the running max after block
    b, and later blocks do not shrink it; what is rescaled ends as it should.
    """
    s = scores(q, k, scale, causal)
    stale = torch.exp(s - _running_max(s, block_n))
    right = torch.exp(s - s.amax(dim=-1, keepdim=True))
    acc = (right if rescale_acc else stale) @ v.double()
    total = (right if rescale_sum else stale).sum(dim=-1, keepdim=True)
    return acc / total


def rescaled_in_base_2(q, k, v, causal: bool, scale: float, block_n: int) -> torch.Tensor:
    """The online softmax over key blocks of block_n whose terms are exp(s - m) (written as
    exp2 with log2(e)) but whose rescale factor is exp2(m_old - m_new), without log2(e): a
    block's terms end multiplied by 2^(m_b - m_final) instead of e^(m_b - m_final)."""
    s = scores(q, k, scale, causal)
    m_of_key = _running_max(s, block_n)
    final = s.amax(dim=-1, keepdim=True)
    weights = torch.exp(s - m_of_key) * torch.exp2(m_of_key - final)
    return (weights @ v.double()) / weights.sum(dim=-1, keepdim=True)


def with_padded_keys(q, k, v, scale: float, block_n: int) -> torch.Tensor | None:
    """Non-causal attention where the keys past S up to a multiple of block_n are zeros:
    a score of 0 and a value of 0 each, as loads with other=0 give them (None: no padding)."""
    n = k.shape[-2]
    pad = -(-n // block_n) * block_n - n
    if pad == 0:
        return None
    k_padded = torch.nn.functional.pad(k.double(), (0, 0, 0, pad))
    v_padded = torch.nn.functional.pad(v.double(), (0, 0, 0, pad))
    return attention_fp64(q, k_padded, v_padded, False, scale)


def far_apart(a: torch.Tensor, b: torch.Tensor, tol: Tolerance, factor: float = 8.0) -> bool:
    """Some element of a differs from b by more than `factor` tolerances (NaN counts as far)."""
    allowed = tol.atol + tol.rtol * b.abs()
    return bool(((a - b).abs() > factor * allowed).any() | (a.isnan() != b.isnan()).any())


def suspects(
    q,
    k,
    v,
    out,
    causal: bool,
    scale: float,
    explicit_scale: bool,
    backend: Backend,
    reference: torch.Tensor,
    tol: Tolerance,
) -> list[Suspect]:
    """What each declared mistake gives on these inputs, rounded as the kernel's output is.

    A suspect that these inputs cannot tell from the reference (e.g. padded keys when S fills
    the blocks, an unrescaled accumulator with one key block) is left out.
    """
    dtype = q.dtype
    head_dim = q.shape[-1]
    found: list[Suspect] = []

    def made(diagnosis: str, value: torch.Tensor, story: str) -> None:
        value = round_to(value.float(), dtype, backend)
        if far_apart(value.float(), reference.float(), tol):
            found.append(Suspect(diagnosis, value, story))

    made(
        "exp2-scale",
        attention_fp64(q, k, v, causal, scale * math.log(2)),
        "a softmax in base 2: exp2 of scores without the log2(e) factor",
    )
    made(
        "scale-missing",
        attention_fp64(q, k, v, causal, 1.0),
        "attention with unscaled scores q k^T (sm_scale never applied)",
    )
    if explicit_scale:
        made(
            "scale-missing",
            attention_fp64(q, k, v, causal, 1.0 / math.sqrt(head_dim)),
            "attention scaled by 1/sqrt(D): the sm_scale argument was ignored",
        )
    if explicit_scale:
        # With the default 1/sqrt(D), the scale applied twice is 1/D, which a default of 1/D
        # applied once gives too: only a scale the caller chose tells the two apart.
        made(
            "scale-twice",
            attention_fp64(q, k, v, causal, scale * scale),
            f"scores scaled by sm_scale twice (sm_scale^2 = {scale * scale:.4g}): once on q or "
            "the scores, and once more where the scores are scaled",
        )
        made(
            "scale-twice",
            attention_fp64(q, k, v, causal, scale * scale * LOG2E),
            "scores multiplied by sm_scale * log2(e) twice before exp2",
        )
    for block_n in BLOCKS:
        made(
            "acc-not-rescaled",
            unrescaled(q, k, v, causal, scale, block_n, False, True),
            f"an online softmax over key blocks of {block_n} whose accumulator is not "
            "multiplied by exp(m_old - m_new) when the max grows",
        )
        made(
            "acc-not-rescaled",
            unrescaled(q, k, v, causal, scale, block_n, False, False),
            f"an online softmax over key blocks of {block_n} where neither the accumulator "
            "nor the running sum is rescaled when the max grows",
        )
        made(
            "acc-not-rescaled",
            unrescaled(q, k, v, causal, scale, block_n, True, False),
            f"an online softmax over key blocks of {block_n} whose running sum l is not "
            "multiplied by exp(m_old - m_new) when the max grows (the accumulator is)",
        )
        made(
            "exp2-scale",
            rescaled_in_base_2(q, k, v, causal, scale, block_n),
            f"an online softmax over key blocks of {block_n} whose rescale factor "
            "exp2(m_old - m_new) lacks the log2(e) its exponentials have",
        )
    if causal:
        # j >= i masked: row 0 has no key left, so what the kernel writes there is undefined:
        # the suspect takes the kernel's own row 0.
        strict = attention_fp64(q, k, v, True, scale, diagonal=0)
        strict[..., 0, :] = out.detach().double()[..., 0, :]
        made(
            "causal-off-by-one",
            strict,
            "a causal mask that also hides the diagonal (j >= i masked)",
        )
        made(
            "causal-off-by-one",
            attention_fp64(q, k, v, True, scale, diagonal=2),
            "a causal mask that lets one future key in (j > i + 1 masked)",
        )
        for block_m in BLOCKS:
            made(
                "causal-off-by-one",
                one_ahead_within_blocks(q, k, v, scale, block_m),
                "a causal mask that lets one future key in (j > i + 1 masked), except on the "
                f"last row of each block of {block_m} queries, where the key loop stops",
            )
    else:
        for block_n in BLOCKS:
            made(
                "max-not-updated",
                last_key_block_only(q, k, v, scale, block_n),
                f"a softmax over the last block of {block_n} keys only: the running max is "
                "never updated, so exp(m_old - m_new) = exp(-inf) = 0 wipes out the blocks "
                "before it",
            )
        for block_n in BLOCKS:
            value = with_padded_keys(q, k, v, scale, block_n)
            if value is not None:
                made(
                    "padded-keys",
                    value,
                    f"a softmax over S keys plus the zero keys padding a block of {block_n}: "
                    "the keys past S were not masked to -inf",
                )
    return found


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def random_qkv(shape, seed: int, q_std: float = 1.0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    q = q_std * torch.randn(shape, generator=gen)
    return [q, torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)]


def growing_qkv(shape, seed: int, rise: float) -> list[torch.Tensor]:
    """Keys along one direction u with a length rising with j: scores grow from ~0 to ~rise
    (times the default scale) along the sequence, plus noise of about +-0.5."""
    gen = torch.Generator().manual_seed(seed)
    *_, n, d = shape
    u = torch.ones(d) / math.sqrt(d)
    ramp = torch.linspace(0.0, 1.0, n)[:, None]
    q = math.sqrt(d) * u + 0.3 * torch.randn(shape, generator=gen)
    k = rise * ramp * u + 0.3 * torch.randn(shape, generator=gen)
    return [q, k, torch.randn(shape, generator=gen)]


def negative_qkv(shape, seed: int) -> list[torch.Tensor]:
    """q along u and k against it: every score is about -3 (default scale), noise +-0.5."""
    gen = torch.Generator().manual_seed(seed)
    *_, d = shape
    u = torch.ones(d) / math.sqrt(d)
    q = math.sqrt(d) * u + 0.3 * torch.randn(shape, generator=gen)
    k = -3.0 * u + 0.3 * torch.randn(shape, generator=gen)
    return [q, k, torch.randn(shape, generator=gen)]


def on_device(tensors, dtype: torch.dtype, backend: Backend) -> list[torch.Tensor]:
    """Each tensor in dtype on the backend's device, inside a buffer with NaN on both sides."""
    return [guarded(t.to(device=backend.device, dtype=dtype))[0] for t in tensors]


# ----------------------------------------------------------------------------------------------
# The check
# ----------------------------------------------------------------------------------------------


def check_attention(
    impl,
    backend: Backend,
    q,
    k,
    v,
    tol: Tolerance,
    *,
    causal: bool = False,
    sm_scale: float | None = None,
) -> None:
    if sm_scale is None:
        out = impl.attention(q, k, v, causal=causal)
    else:
        out = impl.attention(q, k, v, causal=causal, sm_scale=sm_scale)
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    dtype = str(q.dtype).removeprefix("torch.")
    shape = "x".join(str(n) for n in q.shape)
    reference = round_to(attention_fp64(q, k, v, causal, scale).float(), q.dtype, backend)
    expect_close(
        out,
        reference,
        what=f"output for {dtype} q, k, v of shape [{shape}]"
        f"{', causal' if causal else ''}{f', sm_scale={sm_scale}' if sm_scale else ''}",
        tol=tol,
        suspects=lambda: (
            suspects(q, k, v, out, causal, scale, sm_scale is not None, backend, reference, tol)
            if isinstance(out, torch.Tensor) and out.shape == q.shape
            else ()
        ),
        reads_guarded=True,
    )


def test_fp32_random(impl, backend):
    # The plain case: S = 200 leaves a partial key block for every BLOCK_N; the queries past S
    # in the last query block must not be stored.
    q, k, v = on_device(random_qkv((1, 2, 200, 16), seed=1), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend))


def test_fp32_growing_scores(impl, backend):
    # Scores rise from ~0 to ~8 along the keys: the running max grows in every key block, so
    # an accumulator that is not rescaled keeps the early blocks up to e^8 times too heavy.
    q, k, v = on_device(growing_qkv((1, 2, 200, 32), seed=2, rise=8.0), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend))


def test_fp32_negative_scores(impl, backend):
    # Every real score is about -3. S = 150 leaves 10 to 106 padded keys in the last block;
    # one that enters the softmax with score 0 weighs e^3 = 20 real keys.
    q, k, v = on_device(negative_qkv((1, 2, 150, 16), seed=3), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend))


def test_fp32_causal(impl, backend):
    # Spiky scores (q scaled by 2): the diagonal key, or one key past it, carries real weight
    # in most rows, so a mask one position off changes almost every row. Key 0 is the only key
    # of row 0.
    q, k, v = on_device(random_qkv((1, 2, 200, 16), seed=4, q_std=2.0), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend), causal=True)


def test_fp32_causal_growing_scores(impl, backend):
    # Causal with rising scores: every row's max grows with each key block it may see.
    q, k, v = on_device(growing_qkv((1, 1, 150, 32), seed=5, rise=8.0), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend), causal=True)


def test_fp32_explicit_sm_scale(impl, backend):
    # sm_scale = 0.3 where the default 1/sqrt(16) would be 0.25: the argument must be used.
    # (0.5 would make sm_scale applied twice look like the default: 0.5^2 = 0.25.)
    q, k, v = on_device(random_qkv((1, 2, 150, 16), seed=6), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend), sm_scale=0.3)


def test_fp32_short_sequence(impl, backend):
    # S = 40: one partial query block and, for BLOCK_N >= 64, one partial key block only.
    q, k, v = on_device(random_qkv((2, 2, 40, 16), seed=7), torch.float32, backend)
    check_attention(impl, backend, q, k, v, fp32_tol(backend))
    check_attention(impl, backend, q, k, v, fp32_tol(backend), causal=True)


def test_half_random(impl, backend):
    # 16-bit inputs (bf16 on the GPU, fp16 on the CPU), D = 64, two heads.
    q, k, v = on_device(random_qkv((1, 2, 200, 64), seed=8), half_dtype(backend), backend)
    check_attention(impl, backend, q, k, v, HALF)


def test_half_causal_d128(impl, backend):
    # D = 128, causal, rising scores.
    q, k, v = on_device(
        growing_qkv((1, 1, 150, 128), seed=9, rise=8.0), half_dtype(backend), backend
    )
    check_attention(impl, backend, q, k, v, HALF, causal=True)


def test_half_strided_heads(impl, backend):
    # q, k, v cut from [B, S, H, D] tensors and seen as [B, H, S, D]: neighbouring rows of one
    # head are H * D elements apart, heads D apart. Right on contiguous copies but wrong here
    # means the kernel assumed contiguous [B, H, S, D] strides.
    dtype = half_dtype(backend)
    bshd = on_device(random_qkv((1, 150, 2, 32), seed=10), dtype, backend)
    q, k, v = (t.transpose(1, 2) for t in bshd)
    try:
        check_attention(impl, backend, q, k, v, HALF, causal=True)
    except DrillFailure as failure:
        if failure.diagnosis not in (dx.MISMATCH, dx.NAN_OR_INF, dx.MISSING_MASK):
            raise
        copies = on_device([t.contiguous() for t in (q, k, v)], dtype, backend)
        try:
            check_attention(impl, backend, *copies, HALF, causal=True)
        except DrillFailure:
            raise failure from None
        raise failure.renamed(
            dx.ROW_STRIDE,
            "The same values in contiguous [B, H, S, D] tensors give the right output: pass "
            "q.stride(0), q.stride(1), q.stride(2) (and k's, v's, out's) to the kernel.",
        ) from None
