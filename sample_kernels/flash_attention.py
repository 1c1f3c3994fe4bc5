"""Flash-attention forward (fp16, head dim 64, BLOCK_M=128, BLOCK_N=64) with an online softmax.

Shows two chained tl.dot's per iteration (QK^T, PV), an exp2 online softmax and a constexpr STAGE
that runs an inlined helper loop once (non-causal) or twice (causal): two compiled variants.
Set IRSCOPE_SAMPLE_SMALL=1 for tiny problem sizes (used by the CPU interpreter test).
"""
import os

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SMALL = os.environ.get("IRSCOPE_SAMPLE_SMALL", "0") not in ("", "0")


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,  #
                    k_ptrs, v_ptrs, stride_kn, stride_vn,  #
                    start_m, qk_scale, offs_m, offs_n, N_CTX,  #
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    # Range of key/value positions handled by this stage.
    if STAGE == 1:
        # causal, strictly below the diagonal block: no masking needed
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        # causal, the diagonal block: mask per element
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        # non-causal: everything
        lo, hi = 0, N_CTX
    # Loop over k, v and update the accumulator.
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # -- compute qk --
        k = tl.load(k_ptrs + start_n * stride_kn)
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i --
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update the output accumulator --
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * stride_vn)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,  #
              stride_qz, stride_qh, stride_qm, stride_qk,  #
              stride_kz, stride_kh, stride_kn, stride_kk,  #
              stride_vz, stride_vh, stride_vn, stride_vk,  #
              stride_oz, stride_oh, stride_om, stride_ok,  #
              H, N_CTX,  #
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,  #
              STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    # K is read transposed: a (HEAD_DIM, BLOCK_N) tile.
    k_ptrs = K + k_offset + offs_d[:, None] * stride_kk + offs_n[None, :] * stride_kn
    v_ptrs = V + v_offset + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vk
    o_ptrs = Out + o_offset + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok

    # Running max, running sum and accumulator of the online softmax.
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2): use exp2 instead of exp
    q = tl.load(q_ptrs)
    # STAGE 1 (non-causal) -> inner stage 3; STAGE 3 (causal) -> inner stage 1 then 2.
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn,  #
                                        start_m, qk_scale, offs_m, offs_n, N_CTX,  #
                                        BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn,  #
                                        start_m, qk_scale, offs_m, offs_n, N_CTX,  #
                                        BLOCK_M, BLOCK_N, 2)
    # Epilogue: log-sum-exp (base 2) for a backward pass, and the normalised output.
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(o_ptrs, acc.to(Out.type.element_ty))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float):
    Z, H, N_CTX, HEAD_DIM = q.shape
    assert HEAD_DIM == 64 and k.shape == q.shape and v.shape == q.shape
    BLOCK_M, BLOCK_N = 128, 64
    assert N_CTX % BLOCK_M == 0, "sequence length must be a multiple of BLOCK_M"
    o = torch.empty_like(q)
    M = torch.empty((Z, H, N_CTX), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H, 1)
    _attn_fwd[grid](
        q, k, v, sm_scale, M, o,  #
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),  #
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),  #
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),  #
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),  #
        H, N_CTX,  #
        HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,  #
        STAGE=3 if causal else 1,  #
        num_warps=4, num_stages=3,
    )
    return o, M


def reference(q, k, v, causal, sm_scale):
    scores = torch.matmul(q.float(), k.float().transpose(2, 3)) * sm_scale
    if causal:
        n_ctx = q.shape[2]
        keep = torch.tril(torch.ones((n_ctx, n_ctx), dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~keep, float("-inf"))
    lse2 = torch.logsumexp(scores, dim=-1) * 1.44269504
    p = torch.softmax(scores, dim=-1)
    return torch.matmul(p, v.float()).to(q.dtype), lse2


def main():
    torch.manual_seed(0)
    Z, H, N_CTX, HEAD_DIM = (1, 2, 256, 64) if SMALL else (2, 4, 1024, 64)
    dtype = torch.float16
    q = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE).normal_(mean=0.0, std=0.5)
    k = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE).normal_(mean=0.0, std=0.5)
    v = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE).normal_(mean=0.0, std=0.5)
    sm_scale = 0.5
    results = {causal: attention(q, k, v, causal, sm_scale) for causal in (False, True)}

    if os.environ.get("IRSCOPE_COMPILE_ONLY"):  # irscope run with no GPU: tensors hold no values
        print("flash_attention: compile-only, numeric check skipped")
        return
    # Numeric check (all kernel launches are done).
    err = 0.0
    for causal, (o, lse2) in results.items():
        ref_o, ref_lse2 = reference(q, k, v, causal, sm_scale)
        torch.testing.assert_close(o, ref_o, atol=1e-2, rtol=0)
        torch.testing.assert_close(lse2, ref_lse2, atol=1e-3, rtol=1e-3)
        err = max(err, (o.float() - ref_o.float()).abs().max().item())
    print(f"flash_attention: OK (max abs err {err:.1e})")


if __name__ == "__main__":
    main()
