/* stack: byte counts of the kernels each training stack runs (see stack.h).
 *
 * Bytes are HBM reads + writes per element of the tensor named in
 * stack.h, each kernel counted once (no reuse across kernels), bf16 = 2 B,
 * fp32 = 4 B. "[source]" counts are read op by op in the file named;
 * "[derived]" backward counts follow from PyTorch autograd's formula of
 * each forward op (tools/autograd/derivatives.yaml) applied to the ops
 * read in the source. The study behind them, line by line, is
 * docs/kernels.md.
 *
 * megatron-te: Megatron-Core core_v0.9.0 (commit 1afee59) with
 *   Transformer Engine v1.11 (commit c27ee60).
 *   - fusions on by default [source]: megatron/training/arguments.py
 *     L1205-1215 (bias_swiglu_fusion, bias_dropout_fusion,
 *     apply_rope_fusion True), L1216-1218 (cross_entropy_loss_fusion
 *     False), L1245-1249 (gradient_accumulation_fusion True).
 *   - norm [source]: TE module/layernorm_linear.py L121-149 (a separate
 *     rmsnorm/layernorm kernel writes ln_out), common/rmsnorm/
 *     rmsnorm_fwd_kernels.cuh L81, L123 (read x, write z): 4 B/el;
 *     backward tex.rmsnorm_bwd (layernorm_linear.py L689-697,
 *     rmsnorm_bwd_kernels.cuh L85-86, L128): read dz, x, write dx 6 B/el,
 *     plus the dgamma finalize kernel.
 *   - RoPE [source]: models/common/embeddings/rotary_pos_embedding.py
 *     L241-245 (fused path, q and k separately), apex
 *     csrc/megatron/fused_rotary_positional_embedding.h L28-48, L67-88:
 *     one read and one write: 4 B/el of q and of k, each pass.
 *   - SwiGLU [source]: fusions/fused_bias_swiglu.py L27-31, L58-73: reads
 *     [gate, up] (4 B per output element), writes 2: 6 B; backward reads
 *     g 2 + y 4, writes 4: 10 B.
 *   - GELU [source]: fusions/fused_bias_gelu.py (bias_gelu, bias_gelu_back):
 *     read 2, write 2; backward read g and x, write 2: 4 / 6 B.
 *   - residual [source]: fusions/fused_bias_dropout.py L9-38: reads x and
 *     the residual, writes the sum: 6 B/el; [derived] backward: the two
 *     gradients meeting at the residual stream summed, 6 B/el.
 *   - loss [source]: megatron/core/tensor_parallel/cross_entropy.py
 *     L27 (.float(): r2 w4), L29 (max: r4), L43 (sub in place: r4 w4),
 *     L62-63 (exp in place: r4 w4), L64 (sum: r4), L77 (div in place:
 *     r4 w4): 38 B/logit, 6 kernels; backward L112 (mul_ in place: r4 w4)
 *     and [derived] the .float() cast back to bf16 (r4 w2): 14 B/logit.
 *   - main gradients [source]: arguments.py L335-339 (bf16 accumulates in
 *     fp32), TE layernorm_linear.py L643-655 (the wgrad GEMM accumulates
 *     into main_grad, beta = 1): reads and writes fp32 instead of writing
 *     bf16, +6 B/param/micro-batch, fused (no kernel).
 *   - optimizer [source]: optimizer/clip_grads.py L91-102
 *     (multi_tensor_l2norm of the optimizer's shard of main gradients:
 *     r4): 4 B/param beyond the Adam step precision.h counts (TE
 *     FusedAdam r16 w12, the fp32-to-bf16 copy r4 w2:
 *     multi_tensor_adam.cu L226-264, distrib_optimizer.py L1742); and
 *     distributed/param_and_grad_buffer.py L646-650 (reset():
 *     grad_data.zero_(), called by zero_grad_buffer before every step,
 *     training.py): the whole contiguous gradient buffer, every parameter
 *     the rank holds, not the distributed optimizer's 1/dp shard: w4 of
 *     fp32 main gradients per parameter (zero_grad_buffer). The same at
 *     Megatron-LM f2e5db40 (L503-508; training.py L585).
 *   - unfused attention's causal softmax [source]: Megatron's fused
 *     ScaledUpperTriangMaskedSoftmax (the kernel of every Megatron stack
 *     here; read at Megatron-LM v2.5 e269e20 megatron/fused_kernels/
 *     scaled_upper_triang_masked_softmax.h): row i of the scores is read
 *     only up to its diagonal (local_seq = blockIdx.x + 1, L131, L151-158)
 *     and written whole (the triangle L212-222, zeros above it L223-224):
 *     forward r1 w2 = 3 B per score instead of 4; backward reads the
 *     gradient and the output in the triangle (L275-283) and writes the
 *     whole row (L319-326): r2 w2 = 4 instead of 6 (causal_softmax).
 *   - attention [source]: TE pytorch/attention.py L818-829: with flash-attn
 *     and cuDNN both usable on sm90, "Disabling FlashAttention to give
 *     FusedAttention preference on Hopper+": cuDNN on H100, flash-attn
 *     (FlashAttention-2) on A100 (L846-854).
 * hf-eager: Hugging Face transformers LlamaForCausalLM, modeling_llama.py
 *   at commit 26a9443 (4.45.0.dev0, 2024-08-06; the Llama code has this
 *   shape in 4.40-4.45), SDPA attention (the default), no torch.compile.
 *   - RMSNorm [source] L111-125: .to(float32) r2 w4, pow r4 w4, mean r4,
 *     mul by rsqrt r4 w4, .to(bf16) r4 w2, weight mul r2 w2: 36 B/el in 6
 *     full-size kernels + 2 per-row ones (8); [derived] backward 90 B/el
 *     in 10 kernels (Liger-Kernel's published timings of this module,
 *     benchmark/data/all_benchmark_data.csv at ead96b6, imply 96).
 *   - RoPE [source] L246-276: q*cos r2 w2, -x2 r1 w1, cat r2 w2, *sin r2
 *     w2, add r4 w2: 20 B/el of q and of k, 5 kernels each; [derived]
 *     backward 28 B/el.
 *   - SwiGLU [source] L309: silu r2 w2, mul r4 w2: 10 B per output element,
 *     2 kernels; [derived] backward 18 B, 3 kernels.
 *   - residual [source] L745, L751: add r4 w2, [derived] backward 6.
 *   - loss [source] L1208-1222: logits.float() r2 w4, the shift's
 *     .contiguous() r4 w4, log_softmax r4 w4 (nll small): 22 B/logit;
 *     [derived] backward 34 B/logit (nll and log_softmax backward, the
 *     slice's zero-fill and copy, the cast back).
 *   - LayerNorm, GELU: F.layer_norm and F.gelu are one ATen kernel each
 *     (4 B/el forward); LayerNorm's backward adds the dgamma, dbeta
 *     reduction (10 B/el, ATEN_LAYERNORM).
 *   - main gradients: FSDP/DeepSpeed reduce in fp32 from the bf16 wgrad:
 *     the cast into the reduce buffer, r2 w4 = 6 B/param/micro-batch
 *     [derived] (torchtitan's reduce_dtype float32, config_manager.py L229).
 *   - optimizer [source]: the Trainer's default optim "adamw_torch"
 *     (training_args.py L1252-1261) is torch.optim.AdamW without fused,
 *     the foreach path (_multi_tensor_adamw: _foreach_mul_, lerp_, mul_,
 *     addcmul_, sqrt, div_, add_, addcdiv_: about 80 B/param in 8
 *     passes) and max_grad_norm 1.0 (L879): clip_grad_norm_ (r4, then an
 *     unconditional _foreach_mul_ r4 w4: torch/nn/utils/clip_grad.py at
 *     01a57d8).
 *   - attention: SDPA's flash backend (FlashAttention-2) on A100 and H100;
 *     with grouped-query attention repeat_kv (L314-323, called L642-643)
 *     expands and reshapes K and V to one copy per query head first:
 *     reads each K/V element, writes it n_rep times; [derived] backward
 *     sums the copies back.
 *   - projections [source]: q_proj, k_proj, v_proj are three nn.Linear
 *     on the same normed hidden_states (LlamaSdpaAttention.forward, the
 *     lines before repeat_kv's L642-643), gate_proj and up_proj two on
 *     the same x (L309): five GEMMs where a fused model runs two
 *     (wave quantization differs); autograd sums the input gradients
 *     of an activation read by several Linear layers (pytorch/pytorch
 *     torch/csrc/autograd/input_buffer.cpp InputBuffer::accumulate:
 *     old_var.add_(var), else old_var + var): r4 w2 per element of T x
 *     h, 2 adds for q, k, v and 1 for gate, up per layer, backward
 *     (the residual stream's sum is the residual piece's).
 * torchtitan: v0.1.0 (commit f7084fc), torch.compile off (config_manager.py
 *   L235 compile False; llama3_8b.toml and llama3_70b.toml L37).
 *   - RMSNorm: nn.RMSNorm (model.py L276-277), in eager torch up to 2.7
 *     the ATen composite rms_norm_symint (to fp32, pow, mean, add eps,
 *     rsqrt, mul, mul weight, type_as: the op sequence of HF's RMSNorm,
 *     whose bytes are taken, 36 B/el; PyTorch's layer_norm.cpp read at an
 *     unpinned 2.4-2.7 commit); backward [derived] as HF's.
 *   - RoPE [source] model.py L69-95: xq.float() r2 w4, complex multiply r4
 *     w4, type_as r4 w2: 20 B/el of q and of k, 3 kernels each; [derived]
 *     backward 20 B/el.
 *   - SwiGLU [source] L236-237: as HF (10 / 18 B).
 *   - loss [source] components/loss.py L18-22: .float() r2 w4, log_softmax
 *     r4 w4: 14 B/logit; [derived] backward: log_softmax backward r8 w4,
 *     cast r4 w2: 18 B/logit.
 *   - optimizer [source]: AdamW(fused=True) (components/optimizer.py
 *     L276-287; torch fused_adam_utils.cuh at 01e5d8d: r16 w12), max_norm
 *     1.0 (config_manager.py L210): clip_grad_norm_ as hf-eager.
 *   - repeat_kv [source] model.py L98-107 (called L185-186): as hf-eager.
 *   - projections [source] model.py L140-145, L173 (wq, wk, wv separate
 *     nn.Linear of the same x), L232-237 (w1, w3 of the same x): as
 *     hf-eager's, five GEMMs and 3 autograd sums of 6 B per element of
 *     T x h per layer, backward. The same at the performance table's
 *     commit 04133643 (torchtitan/models/llama/model.py L156-160, L187,
 *     L243-248).
 *   - the performance table's commit 04133643 (row torchtitan-04133643):
 *     train.py L96-98 torch.optim.AdamW(..., foreach=True) and L296-298
 *     clip_grad_norm_(..., foreach=True): hf-eager's foreach AdamW and
 *     clipping (64 B/param beyond a fused Adam, 10 kernels) instead of
 *     v0.1.0's fused one; the other pieces as v0.1.0: RMSNorm
 *     torchtitan/models/norms.py L90-95 (x.float(), pow, mean, rsqrt,
 *     type_as, * weight: the composite's ops), RoPE model.py L105-106,
 *     the output's .float() L439 and F.cross_entropy train.py L163-164
 *     (14 B/logit as v0.1.0's loss), SDPA with is_causal.
 *   - attention [source] models/attention.py L183-214: SDPA with FLASH
 *     first (cuDNN first only on compute capability 10.0, B200, for which
 *     no cuDNN figure is known: priced as the GPU's best): FlashAttention-2
 *     on A100 and H100.
 *   - FSDP2 copies [source] pytorch/pytorch 01d66d2 torch/distributed/
 *     _composable/fsdp/_fsdp_collectives.py: foreach_all_gather_copy_out
 *     (torch.split_with_sizes_copy of the whole all-gather output into
 *     the parameters' own tensors: r2 w2 per gathered bf16 element, on
 *     the current stream, at every all-gather, forward and the
 *     re-gather in backward); foreach_reduce_scatter_copy_in (torch.cat
 *     of the unsharded gradients into the reduce-scatter input of the
 *     reduce dtype: r2 w4 with fp32, on the reduce-scatter stream). The
 *     same copies are torch.ops.fsdp.split_with_sizes_copy and chunk_cat
 *     in torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py at
 *     010ae4a. Not counted: the copy-in of the local shard (1/dp of the
 *     layer) and the gradient divides (AVG reduction in later torch).
 *   - FSDP2's root unit [source]: fully_shard(model) after the layers'
 *     (04133643 torchtitan/parallelisms/parallelize_llama.py L226-239;
 *     v0.1.0 llama3/infra/parallelize.py L344-366) holds the embedding,
 *     the final norm and the output layer: gathered and copied out
 *     before the first forward compute, kept unsharded through backward
 *     and reduce-scattered in the root's final callback, after the last
 *     layer's (pytorch/pytorch 005da465 torch/distributed/_composable/
 *     fsdp/_fsdp_state.py _lazy_init, _root_post_backward_final_callback;
 *     the schedule: sim/build_transformer_step.c). Not modelled: the
 *     last layer kept unsharded after forward (reshard_after_forward
 *     False for it, parallelize_llama.py L231-232), gathered once less.
 * llm-foundry: MosaicML llm-foundry MPT, v0.10.0 (commit 742f340).
 *   - LayerNorm [source]: configuration_mpt.py L46 low_precision_layernorm,
 *     layers/norm.py L33-68: one F.layer_norm kernel in bf16, 4 B/el;
 *     [derived] backward: ATen's LayerNorm backward (dy, x -> dx) and the
 *     column reduction for dgamma, dbeta: 10 B/el in 2 kernels.
 *   - ALiBi [source]: layers/attention.py L356-376: alibi_slopes passed to
 *     flash-attn, no op of its own; attn_impl flash (mpt-7b.yaml L23-24):
 *     FlashAttention-2.
 *   - GELU [source]: layers/ffn.py L50-53, L167-168: F.gelu, one kernel.
 *   - loss [source]: modeling_mpt.py L1281, L1315-1323 fused_crossentropy =
 *     flash-attn's Triton cross-entropy (flash_attn/ops/triton/
 *     cross_entropy.py at v2.6.3 L24-87: reads each logit once; L96-138:
 *     reads logits, writes dlogits): 2 + 4 B/logit.
 *   - copies around flash [source]: layers/attention.py L277-293
 *     (bert_padding.index_first_axis gathers q, k, v into (nnz, h, d):
 *     r2 w2 each; flash_attn/bert_padding.py at v2.6.3 L8-17) and
 *     L383-384 (pad_input on the output: zero-fill w2 and scatter r2 w2),
 *     made even when nothing is padded: (3 x 4 + 6) / 4 = 4.5 B per
 *     element of q, k, v, o forward; [derived] backward the scatters of
 *     dq, dk, dv (zero-fill and copy, 6 each) and the gather of dO (4):
 *     (3 x 6 + 4) / 4 = 5.5 B.
 *   - residual adds as hf-eager; FSDP's fp32 reduce as hf-eager, where a
 *     scenario reduces in fp32; the optimizer (Composer's DecoupledAdamW,
 *     not read at this version) priced as torch's foreach AdamW.
 * llm-foundry-triton: the stack of llm-foundry's published MPT benchmark
 *   table (scripts/train/benchmarking/README.md at 061f2c7c, October 2023):
 *   the pieces of llm-foundry above except the attention.
 *   - attention [source]: submit_benchmarks.py L142 (--attn_impl default
 *     'triton'), run on mosaicml/pytorch:2.0.1_cu118 (sweep.sh L5); the A100
 *     40GB rows, kept from May 2023, ran the same kernel under torch 1.13.1
 *     (layers/attention.py L317-342). layers/attention.py L398-420 at
 *     061f2c7c: q, k, v rearranged as views, flash_attn_func of
 *     flash_attn_triton.py (Tri Dao's FlashAttention in Triton, copied from
 *     flash-attention eff9fe6b), ALiBi as its bias argument: no unpad or
 *     pad copies (attn_copy 0). Its header: "Triton forward is generally
 *     faster than CUDA forward, while Triton backward is generally slower
 *     than CUDA backward. Overall Triton forward + backward is slightly
 *     slower than CUDA forward + backward": priced as FlashAttention-1's
 *     CUDA kernel (fa1; the GPU files cite its measured rate).
 *   - loss [source]: modeling_mpt.py L723-729 at 061f2c7c, flash-attn's
 *     CrossEntropyLoss (the xentropy CUDA extension): the bytes of the
 *     Triton one above, 2 + 4 B/logit.
 *   - GEMMs [source]: torch's cuBLAS of the image, CUDA 11.8's cuBLAS
 *     11.11.3.6 (the cuda-11.8.0 label of NVIDIA's libcublas conda
 *     package; the A100 40GB rows' torch 1.13.1: a CUDA 11 build): gemm_lib
 *     cublas11, which gpus/h100-sxm5-80gb.json prices from a measurement
 *     of 11.11.3.6 on H100; the A100 presets measure none (cuBLAS 11 was
 *     Ampere's mature library): gemm_max there.
 *   - the code that ran [source]: submit_benchmarks.py L397-408 at
 *     061f2c7c installs crinard/llm-foundry branch add_attns (985920032,
 *     2023-08-31), whose setup.py pins mosaicml (Composer) >=0.15.0,<0.16
 *     (L50), torch >=1.13.1,<=2.0.1 (L54), flash-attn 1.0.3.post0 and its
 *     xentropy extension (L87-90). Line numbers below: add_attns (aa),
 *     Composer v0.15.1 (co).
 *   - gradient reduction [source]: submit_benchmarks.py L269 (at
 *     061f2c7c) mod_parameters defaults fsdp_config_mixed_precision
 *     'DEFAULT' and its caller (L454-474) never passes one; co
 *     trainer/mosaic_fsdp.py L86-88: DEFAULT sets param_dtype and
 *     buffer_dtype to bf16 and leaves reduce_dtype None, which torch 2.0's
 *     FSDP takes as param_dtype (MixedPrecision; pytorch PR #90660): the
 *     gradients are reduced in bf16 (the PURE rows, L89-92, too), so the
 *     fp32 cast of main_grad_Bpp does not run (the scenarios'
 *     grad_reduce_dtype bf16).
 *   - FSDP1's flat parameter [source]: co trainer/dist_strategy.py L144
 *     (use_orig_params True); torch 2.0 torch/distributed/fsdp/
 *     flat_param.py ("We use `Tensor` views in the forward so that they
 *     are tracked by autograd", _use_unsharded_views; read at an unpinned
 *     2.0-era commit through the code index): the weights are torch.split views of the
 *     unit's flat parameter, so autograd's SplitWithSizesBackward
 *     (at::cat) writes the flat gradient from the weights' gradients, r2
 *     w2 per 16-bit parameter, every micro-batch, on the compute stream
 *     (fsdp1_flat; biases and norm weights, 0.1 % of MPT's, not counted);
 *     _runtime_utils.py _post_backward_hook calls the default
 *     reduce_scatter_hook (algorithms/_comm_hooks/default_hooks.py:
 *     grad.div_(gradient_predivide_factor) on the whole unsharded
 *     gradient, r2 w2, the reduce-scatter, output.div_(postdivide) on the
 *     shard, r2 w2 of P/d; DefaultState's predivide factor is above 1 for
 *     any d > 1, the postdivide factor d / predivide for d > 2), on the
 *     post-backward stream. Not counted: the shard's accumulation across
 *     micro-batches (_saved_grad_shard +=, r4 w2 of P/d).
 *   - biases and positions [source]: aa configuration_mpt.py L20 ('alibi':
 *     False), L53 (learned_pos_emb True), L58 (no_bias False), none set by
 *     the 061f2c7c yamls (models/zoo/llm-foundry/: the README's NumParams
 *     to the digit): the Linear biases ride in addmm's cuBLASLt epilogue
 *     forward, but backward each Linear's bias gradient is a reduction
 *     of its output gradient over the tokens (derivatives.yaml addmm:
 *     sum_to of grad), r2 per output element, one kernel (linear_bias);
 *     modeling_mpt.py L400-401 x = tok_emb + pos_emb: r2 r2 w2 per T x h
 *     element, and backward the position gradient summed over the
 *     micro-batch, r2 (pos_add).
 *   - QKV split [source]: aa layers/attention.py L625-632 qkv.split([d,
 *     kv, kv], dim=2): views forward; backward SplitWithSizesBackward
 *     concatenates dq, dk, dv (the Triton kernel's fresh tensors), r2 w2
 *     per element of the QKV output (qkv_split: 12 B per element of
 *     T x d for MHA).
 *   - train metrics [source]: aa modeling_mpt.py L693 (train_metrics
 *     LanguageCrossEntropy, LanguagePerplexity); co trainer.py L2397-2400
 *     updates them after every micro-batch's backward, under the autocast
 *     context (L2089-2100); metrics/nlp.py L90 nn.CrossEntropyLoss(
 *     reduction='sum'), L111 on the logits: autocast runs cross_entropy
 *     in fp32, .to(fp32) r2 w4, log_softmax r4 w4 (nll_loss reads one
 *     value per row): 14 B per logit each, 28 in 4 kernels (the small
 *     nll and sum: no launches counted).
 *   - optimizer [source]: co optim/decoupled_weight_decay.py L245-256,
 *     DecoupledAdamW's loop over the parameters, each step
 *     state_steps[i].item(): a host synchronisation per parameter tensor
 *     (about 200 a rank for MPT-7B). Not priced: the step is priced on
 *     the GPU alone (sim/build_transformer_stage.c optimizer_time), with
 *     no host issue or synchronisation model to carry it.
 * deepspeed: a Hugging Face model (the hf-eager pieces above, separate
 *   projections and their gradient sums included: the engine does not
 *   change the model's kernels; SDPA's FlashAttention-2 on A100 and
 *   H100) trained by the DeepSpeed engine, v0.15.0 (commit 55b4cae),
 *   bf16, FusedAdam (the config's "Adam"/"AdamW" optimizer: engine.py
 *   L1332-1357). The engine's gradient path and step, per ZeRO stage
 *   (struct stack_zero_path; P the rank's parameters, P/d its partition):
 *   - which optimizer [source]: engine.py L1149 (module.bfloat16()),
 *     get_data_types L931-946 (grad_accum_dtype: fp32 without ZeRO, the
 *     model's bf16 with it), L1233-1236, L1264-1265 (BF16_Optimizer at
 *     stage 0, and at stage 1 only with an explicit fp32
 *     grad_accum_dtype), L1548-1589 (DeepSpeedZeroOptimizer at stage 1/2,
 *     partition_grads = stage 2), L1625-1660 (stage 3). zero/config.py:
 *     contiguous_gradients True L95, reduce_scatter True L101,
 *     reduce_bucket_size 5e8 L106, use_multi_rank_bucket_allreduce True
 *     L112, overlap_comm None -> stage == 3 L131, L325-327.
 *     communication_data_type: the model's bf16 (engine.py L866-877).
 *   - stage 1/2 per reduction [source] zero/stage_1_and_2.py: each
 *     gradient copied into the IPG bucket, r2 w2 (L932-956, copy_ L955);
 *     a full bucket reduced (reduce_ipg_grads L1364-1419 ->
 *     average_tensor L1044-1145): the bucket divided by d, r2 w2
 *     (L1118-1119), its slices per owning rank all-reduced together
 *     (allreduce_and_scatter L1016-1042, allreduce_bucket L1488-1517: an
 *     all-reduce of the whole bucket in bf16, no cast L1500), where the
 *     slices are several torch.cat copies the bucket first (flatten
 *     L1489, r2 w2) and each rank copies its own slices back (L1012-1014,
 *     r2 w2 of P/d); one slice is flattened and copied back as a view
 *     (PyTorch aten flatten_dense_tensors returns the one tensor's view,
 *     copy_impl exits early on the same data: TensorShape.cpp, Copy.cpp,
 *     read at an unpinned 2.x commit): 8 B/param + 4 in spanning
 *     buckets + 4 x span / d; the rank's own gradients then copied into
 *     its partition buffer, bf16, r2 w2 of P/d (copy_grads_in_partition
 *     L1328-1362, called L1410-1414). Stage 2 hooks every gradient as
 *     backward makes it (L520-521, L897-913) and reduces on every
 *     micro-batch (engine.py L1963-1965); the epilogue adds each later
 *     micro-batch's partition into the first's, bf16 add_ r4 w2 of P/d
 *     (L776-793). Stage 1 has no hooks (overlap_comm off): autograd
 *     accumulates .grad in bf16 in place on every micro-batch after a
 *     step's first, r4 w2 (PyTorch accumulate_grad.h: variable_grad +=
 *     new_grad; the first micro-batch steals the gradient), and the
 *     engine reduces once, at the boundary (engine.py L1967-1971 ->
 *     reduce_gradients L699-719), the same bucket path.
 *   - stage 3 per micro-batch [source] zero/stage3.py: hooks on every
 *     gradient (L1145-1177); each copied into the IPG bucket, r2 w2
 *     (__add_grad_to_ipg_bucket L1263-1278); a full bucket
 *     reduce-scattered (reduce_scatter default, L1302-1307 ->
 *     __avg_scatter_grads L1360-1385: bf16, no cast, no predivide) by
 *     runtime/comm/coalesced_collectives.py reduce_scatter_coalesced
 *     L81-141: torch.cat of the ranks' interleaved chunks r2 w2 (L122),
 *     div_ r2 w2 (L124), the reduce-scatter in place (L128-130): 12
 *     B/param; partition_grads (L1451-1512) copies the rank's chunk into
 *     the bf16 partition buffer on a step's first micro-batch (L1466-1467,
 *     r2 w2 of P/d; buffer dtype grad_accum_dtype, L530-532) and adds it
 *     on later ones (L1471-1472, r4 w2).
 *   - stage 0 [source] runtime/bf16_optimizer.py: every micro-batch each
 *     bf16 gradient cast to fp32 and added to the fp32 gradient buffer
 *     (_update_hp_grad L345-359, L353: .to r2 w4, add_ r8 w4 = 18
 *     B/param); at the boundary the whole fp32 buffer all-reduced by
 *     engine.py buffered_allreduce_fallback (L2502-2513 -> allreduce_bucket
 *     L2382-2407): cast to bf16 r4 w2, mul_ by 1/d r2 w2, copied back
 *     r2 w4: 16 B/param once per step (the one flat tensor needs no
 *     flatten and its copy-back exits early).
 *   - step, stages 1-3 [source]: no overflow check in bf16
 *     (stage_1_and_2.py L1832-1833, stage3.py L2000-2001); the norm per
 *     gradient tensor of the partition in fp64, g.double() r2 w8 then
 *     torch.norm r8 (stage_1_and_2.py L1691-1697, stage3.py L1782); the
 *     partition flattened r2 w2 and cast to fp32 r2 w4
 *     (stage_1_and_2.py L1888-1894, stage3.py L1883-1884);
 *     unscale_and_clip_grads scales it unconditionally, mul_ r4 w4
 *     (L1967-1982; stage3.py L2141-2150); FusedAdam on the fp32 partition
 *     (ops/adam/fused_adam.py L169-173, L191; csrc/adam/
 *     multi_tensor_adam.cu L59-62, L84-87, L120-122: r16 w12); the fp32
 *     partition copied to the bf16 parameters r4 w2 (L1915-1917;
 *     stage3.py L2032-2035), then, at stage 1/2, one all-gather of the
 *     flat bf16 buffer (L1927-1931 -> runtime/utils.py L954-968,
 *     all_gather_into_tensor). Gradients are dropped, not zeroed
 *     (zero_grad set_to_none: L1636-1651, stage3.py L1722-1739; engine.py
 *     L2137-2140): 18 + 4 + 6 + 8 = 36 B/param of P/d beyond the 34 of a
 *     fused Adam and its bf16 copy, 5 kernels (flatten, cast, scale,
 *     Adam, copy) and two per gradient tensor of the partition for the
 *     norm, not counted (a Llama 2 7B partition at d = 8 holds about 37).
 *   - step, stage 0 [source] bf16_optimizer.py step L294-327: the norm
 *     of every fp32 gradient, r4 (runtime/utils.py L873-877; .float() of
 *     fp32 is the tensor), clipping only when the norm exceeds the
 *     maximum (utils.py L918-936, not counted, as Megatron's), FusedAdam
 *     and the bf16 copy (L436-449), the fp32 buffer zeroed, w4
 *     (clear_hp_grads L451-456): 8 B/param beyond. BF16_Optimizer shards
 *     the fp32 master, the Adam states and the step over the d ranks
 *     (L147-156) and all-gathers the bf16 parameters after it (L445-449),
 *     as ZeRO-1 does: ddlsim's zero = 0 plan prices Adam on every
 *     parameter and no gather (a framework fact not modelled here).
 *   - kernels per block op [derived]: one copy_ or add_ per weight tensor
 *     (a block taken as four: HF Llama's q, k, v, o; its MLP has three);
 *     the per-bucket div_, cat and copy-backs (a handful per 5e8
 *     parameters) in one more; stage 0's three casts per step over the
 *     whole buffer: no launch of their own.
 *   Not counted: ZeRO-3's parameter gathers coalesce the tensors fetched
 *   together into one all-gather with a torch.cat of the local chunks
 *   (zero/partition_parameters.py L1145-1178) and copy each gathered
 *   tensor out of it, r2 w2 per element, on the compute stream (L683-704;
 *   a lone tensor is gathered in place, L1227-1248); a parameter of more
 *   than 5e8 elements skips the stage 1/2 bucket copy (L949-951). Host
 *   issue time as the other torch stacks.
 * dle-bert: NVIDIA DeepLearningExamples PyTorch BERT pre-training
 *   (PyTorch/LanguageModeling/BERT at a9e2c1d5, 2022-03-02, the commit of
 *   the README's DGX A100 figures; modeling.py and the training loop are
 *   unchanged through 729963dd but for resume and logging), fp16 with
 *   --allreduce_post_accumulation_fp16 (scripts/configs/pretrain_config.sh
 *   L32-33), in the pytorch:21.11-py3 container (PyTorch 1.11.0a0; its
 *   C++ sources are cited by file where their lines at that commit were
 *   not read). Line numbers below: run_pretraining.py (rp), modeling.py
 *   (mo), lamb_amp_opt/ (la), all at a9e2c1d5.
 *   - precision [source]: rp L403-406 model.half(): fp16 weights,
 *     activations and gradients; no autocast (rp L508), no fp32 main
 *     gradients (main_grad_Bpp 0: the engine path below).
 *   - QKV [source]: mo L316-318, L345-347: three nn.Linear, three GEMMs
 *     (qkv_separate); the context copied back to [s, b, h] by
 *     .transpose(0, 1).contiguous() (mo L374): r2 w2 of T x h forward,
 *     1 B per element of q, k, v and the output; its backward is a view
 *     the bmm reads strided. The backward of the projections is not:
 *     q and v reach the bmm as view(s, b * heads, d).transpose(0, 1) and
 *     k as .permute(1, 2, 0) (mo L330-338, L349-351); the bmm's
 *     gradients come back as new [b * heads, s, d] and [b * heads, d, s]
 *     tensors, transposed back to [s, b * heads, d] with strides that do
 *     not fold into [s, b, h], so view's backward (grad.reshape(self
 *     sizes), PyTorch's tools/autograd/derivatives.yaml) copies each:
 *     r2 w2 of T x h three times = 3 B per element of q, k, v and the
 *     output in 3 kernels (attn_copy 1 / 3).
 *   - QKV biases [source]: the layout is [s, b, h] (mo L498), a 3-D
 *     input. PyTorch 1.11's at::linear takes addmm only for a 2-D input
 *     and runs matmul then output.add_(bias) otherwise (the fused path
 *     for contiguous 3-D input came with pytorch/pytorch#72728, February
 *     2022, after the container's November 2021 build; pytorch#39661
 *     states the 2020-2021 behaviour). nvFuser, where it splits linear
 *     into matmul and prim::add_optional (csarofeen/pytorch#1253, 2021-11,
 *     every linear with a bias until #1679, 2022-05), fuses the add only
 *     into a neighbouring pointwise op: q, k and v go on to view,
 *     transpose and bmm, none fusible there, so either way the bias add
 *     is a kernel of its own, r2 w2, and the bias gradient a reduction
 *     of the output's gradient over the tokens (autograd's sum_to, r2):
 *     4 forward, 2 backward per element of q, k, v, 3 kernels each
 *     (qkv_bias). The other Linear biases (attention output, both MLP
 *     GEMMs) depend on that split: fused into the GELU and the
 *     dropout-residual kernels where nvFuser split the linear, an add_
 *     and a reduction of their own where it did not; taken as fused, the
 *     pieces below unchanged: the container ran NVIDIA's devel nvFuser
 *     (mo L122's F.gelu(approximate=True) is the approximate GELU that
 *     pytorch#67943, 2021-11-06, held back from upstream), whose branch
 *     split every linear with a bias by then (#1253).
 *   - attention core [source]: mo L354-373, unfused: bmm, scale, mask
 *     add, softmax, dropout, bmm (the scenario's "unfused"; workload.c
 *     prices the core itself).
 *   - norm, GELU, residual: a9e2c1d5 replaced apex's FusedLayerNorm and
 *     the scripted bias_gelu by nn.LayerNorm and F.gelu (mo L121-122,
 *     L275, L391-397, L427-433), standard ops nvFuser can take: the
 *     model is torch.jit.script'ed (rp L408-409) with nvFuser on (rp
 *     L55-60). nvFuser's fusion groups at the container's PyTorch were
 *     not read: each piece is taken as one kernel reading its inputs and
 *     writing its outputs once (the counts of the fused stack, TE_NORM,
 *     TE_GELU, EAGER_RESIDUAL with the dropout mask). Not a bound: one
 *     group over dropout, residual add and LayerNorm would move less,
 *     ATen's eager kernels more.
 *   - input-gradient sums: hidden_states feeds query, key, value and the
 *     residual (mo L345-347, L397: 3 sums), attention_output MLP-up and
 *     the residual (L433, L455-456 at 729963dd: 1); the residual piece's
 *     backward charges one per half-layer, so 2 would be missing in
 *     attention. In the scripted model these sums are the autodiff
 *     backward graph's (prim::AutogradAdd), which nvFuser may fuse into
 *     the LayerNorm backward it feeds; its fusion groups were not read
 *     (above), so no sum is added (grad_sum 0) and the three GEMMs
 *     stay.
 *   - loss [source]: the MLM decoder's bias added by its own kernel (mo
 *     L553: decoder(x) + bias, r2 w2 per logit), then the criterion, not
 *     scripted (rp L75-95, L468), torch.nn.CrossEntropyLoss on the fp16
 *     logits: ATen cross_entropy_loss = log_softmax (r2 w2) + nll_loss
 *     (aten/src/ATen/native/LossNLL.cpp): 8 B/logit in 3 kernels;
 *     backward nll_loss_backward zero-fills the logits' gradient (w2, and
 *     scatters the targets), log_softmax_backward_data reads the gradient
 *     and the output and writes dx (r4 w2), the bias gradient sums the
 *     rows (r2): 10 B/logit in 4 kernels. The MLM head runs on the masked
 *     positions only (mo L587-591: index_select before the transform).
 *   - gradients across micro-batches [source]: zero_grad(set_to_none)
 *     after each step (rp L525, la fused_lamb.py L118-122); the
 *     micro-batches before the last run under DDP's no_sync (rp L668-670)
 *     where autograd's AccumulateGrad keeps the first gradient as it is
 *     and adds each later one in place, fp16 (torch/csrc/autograd/
 *     functions/accumulate_grad.h: variable_grad += new_grad): r2 r2 w2 =
 *     6 B/param on each micro-batch after a step's first.
 *   - the reduction [source]: one DDP bucket the size of the GPU's memory
 *     (rp L446, gradient_as_bucket_view); at the step's last micro-batch
 *     the reducer copies each gradient into its bucket view
 *     (torch/csrc/distributed/c10d/reducer.cpp mark_variable_ready_dense:
 *     the gradient was set to None, so it is no alias of the view): with
 *     no comm hook, at::mul_out by 1 / world size, r2 w2 = 4 B/param. With
 *     gradient_accumulation_steps > 1 DLE registers a comm hook (rp
 *     L449-464): copy_ into the view (4), bucket.buffer().div_(steps) (4),
 *     then allreduce_hook's _allreduce_fut divides by the world size
 *     (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py, one
 *     div_ over the bucket, 4): 12 B/param. The all-reduce itself is the
 *     schedule's, in fp16.
 *   - optimizer [source]: grad_scaler.step (rp L516-525) calls
 *     FusedLAMBAMP.step with the scaler (la fused_lamb.py L39, L131-258):
 *     _check_inf_per_device unscales by 1.0 in place through
 *     _amp_foreach_non_finite_check_and_unscale_ (torch/cuda/amp/
 *     grad_scaler.py, aten/src/ATen/native/cuda/AmpKernels.cu: a
 *     multi-tensor load and store of every fp16 gradient, r2 w2);
 *     multi_tensor_l2norm of the fp16 gradients (fused_lamb.py L175-181,
 *     r2); multi_tensor_lamb (la csrc/multi_tensor_lamb.cu L371-500):
 *     the fp32 master weights' per-tensor norms (L415, r4), stage 1
 *     (L43-245: reads g 2, the master 4, m 4, v 4, writes the update into
 *     g 2, m 4, v 4: 24), the update's norms (L467, r2), stage 2
 *     (L251-368, aligned path: reads the master 4, the update 2 and the
 *     fp16 weight 2, writes the master 4 and the fp16 weight 2: 14):
 *     4 + 2 + 4 + 24 + 2 + 14 = 50 B/param, the fp16 copy included
 *     (optimizer_copy16 false), 22 beyond precision.h's fused Adam (28).
 *     Kernels: the unscale, the gradient norm, the global norm, and per
 *     parameter group (two, rp L412-416) the four passes of
 *     multi_tensor_lamb: 11 (multi_tensor_apply splits a pass into more
 *     launches over 336 M parameters: a lower bound).
 *   - host: no CUDA graphs in phase 1 (rp L306-309: --cuda_graphs off,
 *     scripts/run_pretraining.sh L170-192 does not pass it); the scripted
 *     forward runs its ops from TorchScript's C++ interpreter, not
 *     Python: the torch stacks' backward issue time (C++ op and launch,
 *     3.6 us) both ways.
 *   Not counted: the embedding's dropout (mo L296), nvFuser's saved
 *   intermediates beyond the pieces' outputs, the word embedding's two
 *   gradients summed (embedding and tied decoder), the vocabulary padded
 *   to 30,528 (rp L374-375), torch.nonzero's host synchronisation in the
 *   head and the criterion (mo L590, rp L89).
 * megatron-deepspeed: BigScience's Megatron-DeepSpeed as BLOOM-176B (tr11)
 *   ran it in March 2022: bigscience-workshop/Megatron-DeepSpeed affff3d2
 *   (2022-03-17) under DeepSpeed's olruwase/bf16-updates branch
 *   (microsoft/DeepSpeed 2cd21f15c, 2022-03-17; merged as #1801),
 *   PyTorch 1.11, unfused attention (bigscience train/tr11-176B-ml/
 *   README.md "Software", chronicles.md 2022-03-18 and 2022-04-04).
 *   - LayerNorm [source]: MixedFusedLayerNorm (model/fused_layer_norm.py
 *     L62-90, switched to in b9883f44) runs megatron/fused_kernels/
 *     layer_norm_cuda_kernel.cu: forward one cuApplyLayerNorm (L678, read
 *     x, write y: 4 B/el); backward cuComputePartGradGammaBeta (L751,
 *     reads dy and x), cuComputeGradGammaBeta (L764, the partial sums)
 *     and cuComputeGradInput (L782, reads dy and x, writes dx): 10 B/el
 *     in 3 kernels.
 *   - GELU [source]: model/fused_bias_gelu.py L32-58, torch.jit.script
 *     bias_gelu (read 2, write 2); backward bias_gelu_back (read g and
 *     y, write 2) returns the same tensor for the input and the bias
 *     (L58), and [derived] autograd sums it over the tokens for the
 *     bias (read 2): 8 B/el in 2 kernels.
 *   - residual: bias_dropout_add as megatron-te's count (6 B/el, the
 *     mask's byte added where the model has dropout, workload.c); the
 *     fusion of its dropout by PyTorch 1.11's default JIT fuser was not
 *     read.
 *   - ALiBi [source]: model/transformer.py ParallelAttention.forward
 *     (affff3d2): the score GEMM is torch.baddbmm(alibi slice, q, k^T,
 *     beta = 1 / layer_number, ...) into a fresh tensor; PyTorch's
 *     baddbmm_out_cuda_impl (aten/src/ATen/native/cuda/Blas.cpp of the
 *     1.1x releases, read at an unpinned commit) copies the expanded
 *     bias into the result when beta != 0 (w2 per score) and cuBLAS
 *     reads it back as C (r2): 4 B per score, 1 kernel, forward only.
 *   - softmax [source]: FusedScaleMaskSoftmax takes the upper-triangular
 *     kernel (ScaledUpperTriangMaskedSoftmax; --abort-on-unmet-fused-
 *     kernel-constraints in the tr11 slurm script): workload.c's softmax
 *     (2 touches forward, 3 backward); attention dropout as workload.c.
 *   - loss [source]: GPTModelPipe appends float16_to_fp32 after the
 *     logits (model/gpt_model.py, the last spec: r2 w4), then
 *     mpu/cross_entropy.py L31 (max: r4), L36 (sub_: r4 w4), L69 (exp,
 *     out=: r4 w4), L70 (sum: r4), L79 (div_: r4 w4): 38 B/logit in 6
 *     kernels, megatron-te's count; backward mul_ (r4 w4) and the cast
 *     back (r4 w2): 14.
 *   - gradients and step [source]: BF16_Optimizer at 2cd21f15c
 *     (runtime/bf16_optimizer.py), the tr11 config's ZeRO stage 0 ("bf16
 *     must use z0! it implements its own zero stage 1 equivalent",
 *     tr11-176B-ml.slurm): after each micro-batch's backward the
 *     pipeline engine calls update_hp_grads (pipe/engine.py
 *     _exec_backward_pass; bf16_optimizer.py update_hp_grads: each bf16
 *     gradient .to(fp32) r2 w4 and add_ into the fp32 buffer r8 w4 = 18
 *     B/param, 2 kernels per tensor: a BLOOM block's attention and MLP
 *     have 6 tensors each, weights and biases of two linears and a
 *     LayerNorm); at the step boundary the whole fp32 buffer all-reduced
 *     by engine.py _bf16_reduce_grads -> buffered_allreduce_fallback ->
 *     allreduce_bucket (cast to communication_data_type, which is bf16
 *     for bf16 at stage 0, engine.py communication_data_type; mul_ by
 *     1/d; copy back): 16 B/param once per step, as v0.15's stage 0
 *     (deepspeed below); step(): the fp32 gradients' norm r4, FusedAdam
 *     on the rank's 1/d partition, the bf16 copy and an all-gather of
 *     the bf16 parameters (all_gather_dp_groups), clear_hp_grads w4: 8
 *     B/param beyond Adam. ddlsim's zero = 1 plan holds what this
 *     optimizer shards (fp32 master, moments: 1/d) and its gather; its
 *     reduction is a reduce-scatter where BF16_Optimizer all-reduces in
 *     bf16 (the same bytes on the wire as a reduce-scatter in fp32).
 *     zero = 0 and 1 both take this path; 2 and 3 (which this
 *     BF16_Optimizer refused, pipe/engine.py _exec_reduce_grads) take
 *     DeepSpeed v0.15's.
 *   - pipeline [source] runtime/pipe/engine.py (2cd21f15c): with TP > 1
 *     is_pipe_partitioned and is_grad_partitioned (L130-132);
 *     _exec_forward_pass (L622-699) rebuilds the received input with
 *     PartitionedTensor.full() (an all-gather over the TP group) and
 *     keeps only its 1/t part of the output to send; _exec_backward_pass
 *     (L701-775) all-gathers the output and the received gradient;
 *     _exec_send_activations / _exec_send_grads (L937-1030) send 1/t
 *     (and the partition's small meta tensor, not counted);
 *     runtime/pipe/p2p.py send/recv (L48-83) call dist.send/dist.recv
 *     (torch >= 1.8) without async_op: the compute stream waits for each
 *     message. Not modelled: the receive is posted only when the engine
 *     reaches it (a rendezvous with the blocked sender); ddlsim posts it
 *     ahead, as for Megatron.
 *   Host issue time as the other torch stacks. Unfused attention's
 *   causal softmax as megatron-te's (the same kernel).
 * megatron-lm-2021, megatron-lm-2021-torch-ddp: Megatron-LM v2.5
 *   (NVIDIA/Megatron-LM e269e20, 2021-08-10) as the SC21 weak-scaling
 *   table ran it (Narayanan et al. 2021): examples/sc21/ at de7dc40f
 *   (run_table_1.sh, CONFIG.sh, SRUN.sh), fp16 with --loss-scale 8192 and
 *   --clip-grad 1.0 (CONFIG.sh L29-55), --checkpoint-activations, in
 *   nvcr.io/nvidia/pytorch:20.12-py3 (SRUN.sh L15: PyTorch 1.8.0a0, CUDA
 *   11.1, apex). The rows 1.7B-18B set DDP=torch, the rows 39B-1T
 *   DDP=local (run_table_1.sh L14-122), hence two stacks with the same
 *   kernels and different gradient paths. Line numbers below are e269e20's
 *   unless named.
 *   - LayerNorm [source]: apex-derived MixedFusedLayerNorm, fused_kernels/
 *     layer_norm_cuda_kernel.cu: forward cuApplyLayerNorm (L675, read x,
 *     write y: 4 B/el); backward cuComputePartGradGammaBeta (L748),
 *     cuComputeGradGammaBeta (L761), cuComputeGradInput (L779): 10 B/el
 *     in 3 kernels (megatron-deepspeed's count).
 *   - QKV bias [source]: mpu/layers.py L278-291: ColumnParallelLinear
 *     calls F.linear(input, weight, bias) on the [s, b, h] input (3-D);
 *     PyTorch 1.8's at::linear fuses the bias (addmm) only for a 2-D
 *     input and otherwise runs matmul then output.add_(bias) (the fused
 *     3-D path is pytorch/pytorch#72728, 2022; dle-bert's note): r2 w2
 *     per element of q, k, v forward (and again in the recomputation),
 *     and autograd's sum of the gradient over the tokens for the bias, r2,
 *     backward: 4 / 2 B, one kernel each (qkv_bias). The other linears of
 *     a layer skip the bias (skip_bias_add: the dense and both MLP
 *     GEMMs, fused into bias_gelu and bias_dropout_add below).
 *   - context copy [source]: model/transformer.py L338:
 *     context_layer.permute(2, 0, 1, 3).contiguous(), r2 w2 of T x h / t,
 *     forward (and recomputation): 1 B per element of q, k, v and the
 *     output (attn_copy); its backward is a view (the permuted gradient
 *     reshapes to [b np, sq, hn] without a copy).
 *   - softmax [source]: model/fused_softmax.py L129-145: the causal
 *     ScaledUpperTriangMaskedSoftmax for fp16 with 16 < s <= 2048 (every
 *     row of the table: s = 2048, b x heads / t a multiple of 4): 3 / 4 B
 *     per score (causal_softmax, megatron-te's note).
 *   - attention dropout [source]: transformer.py L307-308,
 *     torch.nn.Dropout on the probabilities: forward r2, w2 and the
 *     one-byte mask (5 B per score, the generic count); [derived]
 *     backward grad x mask x scale: r2 + mask r1 + w2 = 5 B, not 7.5
 *     (attn_dropout).
 *   - GELU [source]: model/fused_bias_gelu.py L31-58: bias_gelu (read 2,
 *     write 2); bias_gelu_back (reads g and y, writes 2) returns the same
 *     tensor for the input and the bias (L58), and [derived] autograd sums
 *     it over the tokens for the bias (r2): 4 / 8 B/el, 1 / 2 kernels.
 *   - residual [source]: transformer.py L357-373 (bias_dropout_add,
 *     torch.jit.script), called L474-480 and L516-522 with the bias
 *     expanded to the residual's shape: forward taken as megatron-te's 6
 *     B/el plus the mask (the legacy JIT fuser's split of dropout from the
 *     adds at PyTorch 1.8 was not read); [derived] backward: dropout's
 *     grad x mask x scale r2 w2 (+ the mask's byte, workload.c), the bias
 *     gradient summed over the tokens from expand_as's backward r2, and
 *     the residual stream's two gradients accumulated, r2 r2 w2: 12 B/el
 *     + 1 in 3 kernels.
 *   - loss [source]: model/gpt_model.py L52-56 (fp16_lm_cross_entropy off:
 *     output.float()), mpu/cross_entropy.py L31 (max), L36 (sub_), L69
 *     (exp, out=), L70 (sum), L79 (div_); backward L103 (mul_) and the
 *     cast back: megatron-te's 38 / 14 B/logit.
 *   - gradients [source]: fp16 param.grad, no fp32 main gradient:
 *     arguments.py L153-155 (fp32 accumulation only with local DDP and
 *     --accumulate-allreduce-grads-in-fp32, which the script does not set,
 *     nor --use-contiguous-buffers-in-ddp); autograd's AccumulateGrad adds
 *     each micro-batch after a step's first in place (variable_grad +=
 *     new_grad, torch/csrc/autograd/functions/accumulate_grad.h): r2 r2
 *     w2 = 6 B/param, one add_ per tensor (a GPT block op's attention or
 *     MLP has 6: LayerNorm, QKV or fc1, dense or fc2, weight and bias).
 *   - DDP=torch [source]: training.py L246-251 wraps each model in
 *     torch.nn.parallel.DistributedDataParallel (bucket_cap_mb 25,
 *     gradient_as_bucket_view False); schedules.py L117-137 runs the first
 *     m - 1 micro-batches under no_sync and the last outside it, where the
 *     reducer all-reduces 25 MB buckets as backward fills them (overlapped
 *     with the last backward); per parameter the reducer's
 *     copy_grad_to_bucket divides while copying into the bucket (at::mul_out,
 *     r2 w2) and finalize_bucket_dense's copy_bucket_to_grad copies the
 *     reduced bucket back into .grad (r2 w2): 8 B/param, two kernels per
 *     tensor (torch/csrc/distributed/c10d/reducer.cpp of the 1.8-1.10
 *     series, read at an unpinned commit).
 *   - DDP=local [source]: model/distributed.py L188-218 without grad
 *     buffers: after the last backward (training.py L366-369) the fp16
 *     grads flattened into one buffer (_flatten_dense_tensors, r2 w2),
 *     divided by d in place (r2 w2), all-reduced, and copied back per
 *     tensor (_unflatten_dense_tensors views, buf.copy_: r2 w2): 12
 *     B/param, not overlapped; the copies one kernel per tensor, the whole
 *     buffer's cat and div no launch of their own.
 *   - step [source]: optimizer/optimizer.py step L376-423:
 *     _copy_model_grads_to_main_grads (L303-317: main_grad.float(), or
 *     .grad.float() with torch DDP, r2 w4 = 6 per parameter, one cast per
 *     tensor); _unscale_main_grads_and_check_for_nan (L320-344:
 *     _amp_foreach_non_finite_check_and_unscale_ over the fp32 gradients,
 *     r4 w4 = 8) and found_inf.item(); clip_grad_norm (clip_grads.py
 *     L85-98: multi_tensor_l2norm, r4; the multi_tensor_scale of L113-118
 *     runs only when the norm exceeds --clip-grad, not counted, as
 *     megatron-te); apex FusedAdam (optimizer/__init__.py L16; r16 w12,
 *     precision.h); _copy_main_params_to_model_params (L361:
 *     multi_tensor_scale fp32 -> fp16, r4 w2, optimizer_copy16);
 *     zero_grad(set_to_none=True) (L283-294: nothing written): 6 + 8 + 4
 *     = 18 B/param beyond Adam and the fp16 copy; kernels: the unscale,
 *     the norm, Adam and the copy (multi-tensor) and the casts, one per
 *     tensor (counted with the multi-tensor ones as 4 + 1 per step: a lower
 *     bound).
 *   - GEMMs: cuBLAS 11.3 of CUDA 11.1 (gemm_lib cublas11: the A100
 *     presets measure none, gemm_max there).
 *   Not counted: the backward of torch.split of the fused QKV output (a
 *   cat of dq, dk, dv: megatron-te's Megatron-Core splits the same way
 *   and does not count it either); found_inf.item()'s host synchronisation
 *   per step; the loss-scale's update.
 * mxnet-normconv, mxnet-nhwc-bn: NVIDIA's MLPerf Training v4.0 ResNet-50
 *   (mlcommons/training_results_v4.0 6fe9543, implementations/
 *   eos_ngc24.04_mxnet), fp16 NHWC, --fuse-bn-relu 1 --fuse-bn-add-relu 1
 *   (run_and_time.sh L124-137). One node runs resnet-v1b-mainloop-fl
 *   (config_DGXH100.sh L18): per bottleneck three NormConvolution ops
 *   (the previous BN's scale, bias and ReLU in the prologue, the next
 *   BN's statistics in the epilogue: no forward bytes; backward a BN
 *   backward on the dgrad output reading dy and x, writing dx: 6 B/el if
 *   the tile stays on chip, 10 when re-read, taken at 400 images per GPU
 *   where the early tensors are hundreds of MB) and one ScaleBiasAddRelu
 *   (reads x and the shortcut, writes y and a 1-bit mask: 6.125 B/el;
 *   backward reads dy, x, the mask, writes dx and dz: 12.125 re-read; a
 *   projection unit's BN backward in place, +10). Several nodes run
 *   resnet-v1b-fl (config_DGXH100_multi_8x8x50.sh L18): NHWC BatchNorm
 *   with ReLU (x read twice, y written: 6 / 10 B/el) and
 *   BatchNormAddRelu (8.125 / 12.125). NVIDIA's MXNet 24.04 source is not
 *   public: the kernels' reads and writes are those of the same ops in
 *   NVIDIA's MXNet fork at sneaxiy/NVIDIA-MxNet ce30b18
 *   (cudnn_norm_convolution-inl.h L57-62, L199-263, L328-444;
 *   cudnn_scale_bias_add_relu-inl.h L233-263, L346-365;
 *   nhwc_batch_norm_kernel.cc L1049-1058, L1282-1897, L2301-3202). */
#include "stack.h"

#include <string.h>

#define FWD_BWD(bf, bb, kf, kb) { { (bf), (bb) }, { (kf), (kb) } }

/* The fused Transformer Engine pieces, shared by the rows that run
 * them. */
#define TE_NORM FWD_BWD(4, 6, 1, 2)
#define TE_GELU FWD_BWD(4, 6, 1, 1)
#define EAGER_RESIDUAL FWD_BWD(6, 6, 1, 1)
#define EAGER_SWIGLU FWD_BWD(10, 18, 2, 3)
#define EAGER_LOSS FWD_BWD(22, 34, 3, 5)
/* ATen's LayerNorm: one forward kernel; backward dx and a column
 * reduction for dgamma, dbeta re-reading dy and x [derived]: 10 B/el. */
#define ATEN_LAYERNORM FWD_BWD(4, 10, 1, 2)
/* Transformer Engine's transformer pieces (the megatron-te row), also
 * carried by the CNN stacks, which never emit them. */
#define TE_TRANSFORMER_PIECES \
	.rmsnorm = TE_NORM, .layernorm = TE_NORM, .rope = FWD_BWD(4, 4, 2, 2), \
	.swiglu = FWD_BWD(6, 10, 1, 1), .gelu = TE_GELU, .residual = EAGER_RESIDUAL, \
	.loss = FWD_BWD(38, 14, 6, 2), .main_grad_Bpp = 6, .main_grad_kernels = 0
/* Beyond a fused Adam step (r16 w12, precision.h): clip_grad_norm_ (r4,
 * and an unconditional _foreach_mul_ r4 w4) = 12 B; torch's default
 * foreach AdamW, eight multi-tensor passes, 80 B instead of 28, with the
 * same clipping: 52 + 12 = 64 B. Neither writes a 16-bit copy (FSDP casts
 * at the gather). */
/* A CNN stack: the TE pieces (unused), Megatron's optimizer copy, the
 * GPU's best flash kernel (unused), and its batch-norm fusion. MXNet
 * issues kernels from its C++ engine threads, at a cost no public
 * measurement gives: no host issue time (host_issue_us 0). */
#define CNN_STACK(fusion) \
	TE_TRANSFORMER_PIECES, .optimizer_copy16 = true, .cnn = (fusion), \
	.attn_ampere = ATTN_BE_BEST, .attn_hopper = ATTN_BE_BEST
/* NVIDIA's MLPerf ResNet optimizer, SGDwFASTLARSV2 (eos_n316_ngc24.04_mxnet
 * common/optimizer.py L155-245, --optimizer sgdwfastlars in every
 * config_DGXH100*.sh), fp16 weights with fp32 master copies: per step
 * multi_sum_sq over the 16-bit weights and over the 16-bit gradients of
 * the LARS parameters (2 + 2 B: all but BN gamma/beta and biases, under
 * 0.3 % of ResNet-50's), multi_lars_v2 and four small vector ops over the
 * 55 per-layer rates (broadcast_mul, broadcast_div, slice_assign,
 * copyto), then lars_multi_mp_sgd_mom_update_v2 in groups of
 * MXNET_OPTIMIZER_AGGREGATION_SIZE = 54 tensors (config_DGXA100_common.sh):
 * read the gradient (2), the fp32 master weight and momentum (4 + 4),
 * write both (4 + 4) and the 16-bit weight (2), 20 B (LARSMultiSGDKernel,
 * src/operator/lars_multi_sgd-inl.h L172-203 of NVIDIA's MXNet fork
 * sneaxiy/NVIDIA-MxNet ce30b18; MXNet 24.04's _v2 ops are not public).
 * 24 B per parameter; kernels: 2 sums, 5 small ops and ceil(161 / 54) = 3
 * updates over ResNet-50's 161 parameter tensors. */
#define MXNET_LARS_BPP 24
#define MXNET_LARS_KERNELS 10
/* The eager Llama stacks' separate projections (hf-eager, torchtitan,
 * deepspeed blocks above): q, k, v and gate, up as their own nn.Linear,
 * three and two GEMMs, and autograd's sums of their input gradients, an
 * add of two 16-bit gradients each, r4 w2 in one kernel [source]
 * (pytorch/pytorch torch/csrc/autograd/input_buffer.cpp, InputBuffer::
 * accumulate: old_var.add_(var), else old_var + var; the same in torch
 * 1.x and 2.x). */
#define AUTOGRAD_GRAD_SUM FWD_BWD(0, 6, 0, 1)
#define EAGER_SPLIT_PROJECTIONS \
	.qkv_separate = true, .qkv_separate_gated = true, .mlp_separate = true, \
	.grad_sum = AUTOGRAD_GRAD_SUM
/* The host's time to issue one kernel from PyTorch (host.h) [measured,
 * two parts]: forward, a Python op with autograd recording, 6.8 us
 * (pytorch/pytorch issue #41383, PyTorch 1.6: y = 2 * x with
 * requires_grad, 1e6 calls; 5.0 us without autograd; CPU tensors, so no
 * launch), plus cudaLaunchKernel, 2.6 us at the minimum
 * (makslevental/persistent_kernel README.md at 1a1b230, driver
 * 510.39.01): 9.4 us. Backward, a node of the autograd engine's C++
 * thread: the same op from C++, about 1 us (ibid., a PyTorch
 * maintainer's measurement: half of x*x's 2 us is Python), plus the
 * launch: 3.6 us. Transformer Engine's modules issue their fused kernels
 * through the same path with more Python per module (te.Linear's CPU
 * time is 2.7 x nn.Linear's on GH200: NVIDIA/TransformerEngine issue
 * #2053), so these are a lower bound for megatron-te. */
#define TORCH_HOST_ISSUE { 9.4, 3.6 }
/* The eager PyTorch pieces of a Hugging Face-style model (hf-eager's
 * counts above), which llm-foundry and the DeepSpeed stack share. */
#define HF_EAGER_PIECES \
	.rmsnorm = FWD_BWD(36, 90, 8, 10), .layernorm = ATEN_LAYERNORM, \
	.rope = FWD_BWD(20, 28, 10, 12), .swiglu = EAGER_SWIGLU, .gelu = TE_GELU, \
	.residual = EAGER_RESIDUAL, \
	.rmsnorm_extra_Bpe = EAGER_RMSNORM_EXTRA_BPE
/* llm-foundry's MPT (both rows): the eager pieces, flash-attn's fused
 * cross-entropy, fp32 main gradients from FSDP's reduce, foreach AdamW. */
#define LLM_FOUNDRY_PIECES \
	HF_EAGER_PIECES, .loss = FWD_BWD(2, 4, 1, 1), \
	.main_grad_Bpp = 6, .main_grad_kernels = 1, \
	.optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10, \
	.host_issue_us = TORCH_HOST_ISSUE
#define TORCH_FUSED_ADAM_CLIP 12
#define TORCH_FOREACH_ADAMW_CLIP 64
/* torch's cross_entropy on an fp32 copy of 16-bit logits, at its
 * backward: the fp32 log-probabilities log_softmax saves
 * (derivatives.yaml _log_softmax: result), nll_loss's dense input
 * gradient and log_softmax's input gradient, 4 B each (torchtitan
 * 9dec370 train.py L131-138, L303-308: `del pred` frees the 16-bit
 * logits first; transformers 4.45 modeling_llama.py: logits.float()). */
#define TORCH_CE_FP32_PEAK_BPL 12
/* An eager RMSNorm's saved tensors (torchtitan 9dec370 models/norms.py
 * RMSNorm._norm: x.float() * torch.rsqrt(x.pow(2).mean(-1) + eps), then
 * .type_as(x) * weight; transformers 26a9443 modeling_llama.py L111-125
 * LlamaRMSNorm alike): pow and mul save the fp32 copy (4 B per element),
 * the weight's mul the normalised 16-bit tensor (2 B), where a fused norm
 * saves its 16-bit input (2 B): 4 B more per element of the input (in
 * fp32 training the copy is the input, the normalised output 4 B: again
 * 4 more). RoPE saves nothing more in either stack: its products take
 * the rotation (freqs_cis, cos, sin), which needs no gradient, so
 * autograd keeps only that operand (tools/autograd/gen_variable_type.py
 * guard_for: an input saved for the other's derivative alone). */
#define EAGER_RMSNORM_EXTRA_BPE 4
/* torch's loss_parallel (torchtitan with TP: train.py's loss under
 * loss_parallel(), the vocabulary-sharded logits), torch
 * distributed/tensor/parallel/loss.py: _log_softmax (L128, after
 * torch._decomp's) holds the fp32 input, `shifted` and exp(shifted) at
 * once beside the 16-bit logits (2 + 4 + 4 + 4 = 14 B per logit), and
 * _nll_loss_and_log_softmax_backward (L346) the saved result, zeros_like
 * grad_input, (grad_input + exp(x)) and its product with grad_output
 * (4 x 4 = 16): 16 at the loss's peak. */
#define TORCH_LOSS_PARALLEL_PEAK_BPL 16
/* torchtitan's Llama (the torchtitan block above), shared by the v0.1.0
 * row and the row of the performance table's commit, which differ in
 * the optimizer only. */
#define TORCHTITAN_PIECES \
	.rmsnorm = FWD_BWD(36, 90, 8, 10), .layernorm = ATEN_LAYERNORM, \
	.rope = FWD_BWD(20, 20, 6, 6), .swiglu = EAGER_SWIGLU, .gelu = TE_GELU, \
	.residual = EAGER_RESIDUAL, EAGER_SPLIT_PROJECTIONS, \
	.loss = FWD_BWD(14, 18, 2, 2), .repeat_kv = true, .loss_peak_Bpl = TORCH_CE_FP32_PEAK_BPL, \
	.loss_peak_tp_Bpl = TORCH_LOSS_PARALLEL_PEAK_BPL, \
	.rmsnorm_extra_Bpe = EAGER_RMSNORM_EXTRA_BPE, .expandable_segments = true, \
	.main_grad_Bpp = 6, .main_grad_kernels = 1, .fsdp2_copies = true, \
	.attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	.host_issue_us = TORCH_HOST_ISSUE

/* DeepSpeed v0.15.0's engine per ZeRO stage (the deepspeed block above):
 * stage 0 BF16_Optimizer, 1 and 2 DeepSpeedZeroOptimizer, 3 stage3.py.
 * Beyond Adam in stages 1-3: the fp64 norm 18, flatten 4, fp32 cast 6,
 * scale 8. */
#define DS_ZERO_STEP_BPP (18 + 4 + 6 + 8)
/* BF16_Optimizer: the fp32 accumulation after every micro-batch (kernels
 * per block op: two per gradient tensor), the cast-scale-copy around the
 * step's all-reduce, the norm and the zeroing. */
#define DS_BF16_PATH(kernels) \
	{ .accum_every_Bpp = 6 + 12, .accum_kernels = (kernels), \
	  .reduce_Bpp = 6 + 4 + 6, .reduce_kernels = 0, \
	  .optimizer_Bpp = 4 + 4, .optimizer_kernels = 3 }
#define DS_ZERO2_PATH \
	{ .accum_shard_Bpp = 6, .accum_kernels = 1, .reduce_every_mb = true, \
	  .reduce_Bpp = 4 + 4, .span_Bpp = 4, .span_shard_Bpp = 4, .shard_Bpp = 4, \
	  .reduce_kernels = 5, \
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_kernels = 5 }
#define DS_ZERO3_PATH \
	{ .accum_shard_Bpp = 6, .accum_kernels = 1, .reduce_every_mb = true, \
	  .reduce_Bpp = 4 + 4 + 4, .shard_first_Bpp = 4, .reduce_kernels = 5, \
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_kernels = 5 }
static const struct stack_zero_path deepspeed_zero[4] = {
	DS_BF16_PATH(8),
	{ .accum_later_Bpp = 6, .accum_kernels = 4,
	  .reduce_Bpp = 4 + 4, .span_Bpp = 4, .span_shard_Bpp = 4, .shard_Bpp = 4,
	  .reduce_kernels = 5,
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_kernels = 5 },
	DS_ZERO2_PATH,
	DS_ZERO3_PATH,
};
/* Megatron-DeepSpeed of 2022 (tr11): BF16_Optimizer, its own ZeRO-1, at
 * ddlsim's stages 0 and 1 (12 gradient tensors per BLOOM block: 2 x 6
 * kernels per block op); later engines' stages 2 and 3. */
static const struct stack_zero_path megatron_ds_zero[4] = {
	DS_BF16_PATH(12), DS_BF16_PATH(12), DS_ZERO2_PATH, DS_ZERO3_PATH,
};

/* DeepLearningExamples BERT's DDP path (the dle-bert block above), the
 * same at every ZeRO stage (DDP has none): AccumulateGrad's in-place fp16
 * add on each micro-batch after a step's first (6, one add_ per weight
 * tensor: an attention block has 10, an MLP block 6, taken as 8); at the
 * reduction, the copy into the bucket view (4, per tensor) and, with
 * accumulation, the comm hook's two divisions of the bucket (8); the
 * step's LAMB beyond a fused Adam (22) in 11 kernels. */
#define DLE_DDP_PATH \
	{ .accum_later_Bpp = 6, .accum_kernels = 8, \
	  .reduce_Bpp = 4, .reduce_accum_Bpp = 4 + 4, .reduce_kernels = 8, \
	  .optimizer_Bpp = 50 - 28, .optimizer_kernels = 11 }
static const struct stack_zero_path dle_ddp[4] = {
	DLE_DDP_PATH, DLE_DDP_PATH, DLE_DDP_PATH, DLE_DDP_PATH,
};

/* Megatron's fused ScaledUpperTriangMaskedSoftmax (the megatron-te note):
 * 3 / 4 B per score, one kernel each way, for key sequences the kernel
 * takes [source]: 16 < sk <= 4096 in Megatron-Core core_v0.9.0
 * megatron/core/fusions/fused_softmax.py L156 and in BigScience's
 * Megatron-DeepSpeed affff3d2 megatron/model/fused_softmax.py L171, <= 2048
 * in Megatron-LM v2.5 e269e20 megatron/model/fused_softmax.py L132
 * (causal_softmax_max_seq). */
#define MEGATRON_CAUSAL_SOFTMAX FWD_BWD(3, 4, 1, 1)

/* Megatron-LM v2.5's gradient path (the megatron-lm-2021 block above),
 * the same at every ZeRO stage (neither DDP has one): AccumulateGrad's
 * fp16 add on each micro-batch after a step's first (6 B, one add_ per
 * tensor, 6 per block op); at the reduction torch DDP's bucket copy in
 * and out (8 B, two kernels per tensor) or local DDP's flatten, divide
 * and copy back (12 B, a copy_ per tensor); the step's casts, unscale
 * and norm beyond Adam (18 B). */
#define MEGATRON_2021_PATH(reduce, kernels) \
	{ .accum_later_Bpp = 6, .accum_kernels = 6, \
	  .reduce_Bpp = (reduce), .reduce_kernels = (kernels), \
	  .optimizer_Bpp = 6 + 8 + 4, .optimizer_kernels = 5 }
static const struct stack_zero_path megatron_2021_torch_ddp[4] = {
	MEGATRON_2021_PATH(8, 12), MEGATRON_2021_PATH(8, 12),
	MEGATRON_2021_PATH(8, 12), MEGATRON_2021_PATH(8, 12),
};
static const struct stack_zero_path megatron_2021_local_ddp[4] = {
	MEGATRON_2021_PATH(12, 6), MEGATRON_2021_PATH(12, 6),
	MEGATRON_2021_PATH(12, 6), MEGATRON_2021_PATH(12, 6),
};
/* Megatron-LM v2.5's pieces (the megatron-lm-2021 block above): apex
 * LayerNorm, the QKV bias's own add and sum, the context's permute copy,
 * the causal fused softmax, dropout's backward, bias-GELU with the bias's
 * sum, bias_dropout_add's backward, the fp32 vocab-parallel loss; fp16
 * gradients (no main gradient: the path above); FusedAdam. */
#define MEGATRON_2021_PIECES \
	.rmsnorm = TE_NORM, .layernorm = FWD_BWD(4, 10, 1, 3), \
	.rope = FWD_BWD(4, 4, 2, 2), .swiglu = EAGER_SWIGLU, .gelu = FWD_BWD(4, 8, 1, 2), \
	.residual = FWD_BWD(6, 12, 1, 3), .loss = FWD_BWD(38, 14, 6, 2), \
	.attn_copy = FWD_BWD(1, 0, 1, 0), .qkv_bias = FWD_BWD(4, 2, 1, 1), \
	.causal_softmax = MEGATRON_CAUSAL_SOFTMAX, .causal_softmax_max_seq = 2048, \
	.attn_dropout = FWD_BWD(5, 5, 1, 1), \
	.main_grad_Bpp = 0, .main_grad_kernels = 1, \
	.optimizer_Bpp = 6 + 8 + 4, .optimizer_copy16 = true, .optimizer_kernels = 5, \
	.attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	.host_issue_us = TORCH_HOST_ISSUE, .gemm_lib = GEMM_LIB_CUBLAS11
#define MEGATRON_2021_SOURCE \
	"NVIDIA/Megatron-LM v2.5 (e269e20) megatron/mpu/layers.py L278-291, " \
	"megatron/model/transformer.py L307-308, L338, L357-373, L474-480, L516-522, " \
	"megatron/model/fused_bias_gelu.py L31-58, megatron/fused_kernels/" \
	"layer_norm_cuda_kernel.cu L675-779, scaled_upper_triang_masked_softmax.h " \
	"L120-326, megatron/optimizer/optimizer.py L303-423, clip_grads.py L85-118, " \
	"megatron/schedules.py L117-137; examples/sc21 at de7dc40f (run_table_1.sh, " \
	"CONFIG.sh, SRUN.sh: pytorch:20.12-py3)"

const struct stack stack_table[] = {
	{ "megatron-te", "Megatron-Core 0.9 + Transformer Engine 1.11 (fused kernels)",
	  TE_TRANSFORMER_PIECES,
	  .optimizer_Bpp = 4, .optimizer_copy16 = true, .optimizer_kernels = 3,
	  .zero_grad_buffer = true, .causal_softmax = MEGATRON_CAUSAL_SOFTMAX,
	  .causal_softmax_max_seq = 4096,
	  /* cross_entropy.py L27 fp32 copy, L43-77 softmax in place, L180 saved; the
	   * backward in place, cast to 16 bits: 4 + 2 */
	  .loss_peak_Bpl = 6,
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_CUDNN,
	  .host_issue_us = TORCH_HOST_ISSUE,
	  .source = "Megatron-LM core_v0.9.0 (1afee59) megatron/training/arguments.py L1205-1249, "
		    "megatron/core/tensor_parallel/cross_entropy.py L27-77, L112; TransformerEngine "
		    "v1.11 (c27ee60) pytorch/module/layernorm_linear.py, pytorch/attention.py L818-829" },
	{ "hf-eager", "Hugging Face transformers eager model (SDPA attention, no compile)",
	  HF_EAGER_PIECES, EAGER_SPLIT_PROJECTIONS,
	  .loss = EAGER_LOSS, .repeat_kv = true, .loss_peak_Bpl = TORCH_CE_FP32_PEAK_BPL,
	  .main_grad_Bpp = 6, .main_grad_kernels = 1,
	  .optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10,
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2,
	  .host_issue_us = TORCH_HOST_ISSUE,
	  .source = "huggingface/transformers 26a9443 (4.45.0.dev0) "
		    "src/transformers/models/llama/modeling_llama.py L111-125, L246-276, L309, "
		    "L745-751, L1208-1222" },
	{ "torchtitan", "TorchTitan 0.1 Llama (eager, torch.compile off)",
	  TORCHTITAN_PIECES,
	  .optimizer_Bpp = TORCH_FUSED_ADAM_CLIP, .optimizer_kernels = 4,
	  .source = "pytorch/torchtitan v0.1.0 (f7084fc) torchtitan/models/llama3/model/model.py "
		    "L69-95, L140-145, L173, L232-237, L276-277; components/loss.py L18-22; "
		    "config_manager.py L139, L210, L229, L235; models/attention.py L183-214; "
		    "components/optimizer.py L276-287; torch/csrc/autograd/input_buffer.cpp" },
	{ "torchtitan-04133643", "TorchTitan of April 2024 (04133643, its performance table): as torchtitan, foreach AdamW",
	  TORCHTITAN_PIECES,
	  .optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10,
	  .source = "pytorch/torchtitan 04133643 train.py L96-98 (AdamW foreach=True), L296-298 "
		    "(clip_grad_norm_ foreach=True), L163-164; torchtitan/models/llama/model.py "
		    "L105-106, L156-160, L187, L243-248, L439; torchtitan/models/norms.py L90-95; "
		    "other pieces as torchtitan v0.1.0" },
	{ "llm-foundry", "MosaicML llm-foundry MPT (low-precision LayerNorm, ALiBi, FSDP)",
	  LLM_FOUNDRY_PIECES, .attn_copy = FWD_BWD(4.5, 5.5, 4, 4),
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2,
	  .source = "mosaicml/llm-foundry v0.10.0 (742f340) llmfoundry/models/mpt/configuration_mpt.py "
		    "L46, layers/norm.py L33-68, layers/attention.py L356-376, layers/ffn.py L50-53, "
		    "modeling_mpt.py L1281-1323; eager pieces as hf-eager (the benchmark table is at "
		    "061f2c7c)" },
	{ "llm-foundry-triton", "MosaicML llm-foundry MPT benchmark table of 2023 (Triton FlashAttention)",
	  LLM_FOUNDRY_PIECES,
	  .fsdp1_flat = true, .linear_bias = FWD_BWD(0, 2, 0, 1),
	  .qkv_split = FWD_BWD(0, 4, 0, 1), .pos_add = FWD_BWD(6, 2, 1, 1),
	  .train_metrics = FWD_BWD(28, 0, 4, 0),
	  .attn_ampere = ATTN_BE_FA1, .attn_hopper = ATTN_BE_FA1,
	  .gemm_lib = GEMM_LIB_CUBLAS11,
	  .source = "mosaicml/llm-foundry 061f2c7c scripts/train/benchmarking/submit_benchmarks.py "
		    "L142, sweep.sh L5; llmfoundry/models/layers/attention.py L300-420, "
		    "flash_attn_triton.py header; modeling_mpt.py L723-729; GEMMs on cuBLAS 11 "
		    "(mosaicml/pytorch:2.0.1_cu118: cuBLAS 11.11.3.6; the A100 40GB rows' torch "
		    "1.13.1: a CUDA 11 build); crinard/llm-foundry add_attns (985920032) setup.py L50-90, "
		    "configuration_mpt.py L20, L53, L58, modeling_mpt.py L400-401, L693, "
		    "layers/attention.py L625-632; mosaicml/composer v0.15.1 trainer/mosaic_fsdp.py L86-88, "
		    "dist_strategy.py L144, trainer.py L2397-2400, metrics/nlp.py L90-111; torch 2.0 FSDP "
		    "flat_param.py, default_hooks.py; other pieces as llm-foundry" },
	{ "deepspeed", "Hugging Face eager model under the DeepSpeed 0.15 engine (bf16, ZeRO, FusedAdam)",
	  HF_EAGER_PIECES, EAGER_SPLIT_PROJECTIONS,
	  .loss = EAGER_LOSS, .repeat_kv = true, .loss_peak_Bpl = TORCH_CE_FP32_PEAK_BPL,
	  /* no fp32 main gradient: the engine's ops (zero_path) instead */
	  .main_grad_Bpp = 0, .main_grad_kernels = 1,
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_copy16 = true, .optimizer_kernels = 5,
	  .zero_path = deepspeed_zero,
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2,
	  .host_issue_us = TORCH_HOST_ISSUE,
	  .source = "microsoft/DeepSpeed v0.15.0 (55b4cae) deepspeed/runtime/engine.py L931-946, "
		    "L1233-1265, L1548-1660, L1960-1974; runtime/zero/stage_1_and_2.py L932-956, "
		    "L1044-1145, L1328-1419, L1488-1517, L1823-1941; runtime/zero/stage3.py "
		    "L1263-1316, L1360-1385, L1451-1512, L2049-2150; runtime/bf16_optimizer.py "
		    "L294-456; ops/adam/fused_adam.py, csrc/adam/multi_tensor_adam.cu; model pieces "
		    "as hf-eager" },
	{ "dle-bert", "NVIDIA DeepLearningExamples PyTorch BERT (fp16, TorchScript + nvFuser, DDP, LAMB)",
	  .rmsnorm = TE_NORM, .layernorm = TE_NORM, .rope = FWD_BWD(4, 4, 2, 2),
	  .swiglu = FWD_BWD(6, 10, 1, 1), .gelu = TE_GELU, .residual = EAGER_RESIDUAL,
	  .loss = FWD_BWD(8, 10, 3, 4), .attn_copy = FWD_BWD(1, 3, 1, 3),
	  .qkv_separate = true, .qkv_bias = FWD_BWD(4, 2, 3, 3),
	  /* no fp32 main gradient: the DDP path (zero_path) instead */
	  .main_grad_Bpp = 0, .main_grad_kernels = 1,
	  .optimizer_Bpp = 50 - 28, .optimizer_kernels = 11,
	  .zero_path = dle_ddp,
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2,
	  .host_issue_us = { 3.6, 3.6 },
	  .source = "NVIDIA/DeepLearningExamples a9e2c1d5 PyTorch/LanguageModeling/BERT: "
		    "run_pretraining.py L55-60, L75-95, L403-464, L508-525, L668-675; modeling.py "
		    "L316-374, L391-433, L498, L553, L587-591; lamb_amp_opt/fused_lamb/fused_lamb.py L118-258, "
		    "csrc/multi_tensor_lamb.cu L43-500; PyTorch 1.11 reducer.cpp, default_hooks.py, "
		    "accumulate_grad.h, LossNLL.cpp, AmpKernels.cu, Linear.cpp (before #72728), "
		    "derivatives.yaml (view)" },
	/* NVIDIA's MLPerf Training v4.0 ResNet-50 (MXNet NGC 24.04): the
	 * transformer pieces are the fused ones (unused by a CNN) */
	{ "mxnet-normconv", "NVIDIA MLPerf MXNet ResNet, one node: BN folded into NormConvolution",
	  CNN_STACK(CNN_FUSE_CONV_BN),
	  .cnn_optimizer_Bpp = MXNET_LARS_BPP, .cnn_optimizer_kernels = MXNET_LARS_KERNELS,
	  .source = "mlcommons/training_results_v4.0 (6fe9543) NVIDIA/benchmarks/resnet/implementations/"
		    "eos_ngc24.04_mxnet: config_DGXH100.sh L18 (resnet-v1b-mainloop-fl), "
		    "symbols/resnet-v1b-mainloop-fl.py L208-302 (NormConvolution, ScaleBiasAddRelu), "
		    "run_and_time.sh L124-137; byte counts from NVIDIA's MXNet fork (sneaxiy/NVIDIA-MxNet "
		    "ce30b18) cudnn_norm_convolution-inl.h, cudnn_scale_bias_add_relu-inl.h, "
		    "nhwc_batch_norm_kernel.cc" },
	{ "mxnet-nhwc-bn", "NVIDIA MLPerf MXNet ResNet, several nodes: NHWC BN+ReLU, BN+add+ReLU",
	  CNN_STACK(CNN_FUSE_BN_ACT),
	  .cnn_optimizer_Bpp = MXNET_LARS_BPP, .cnn_optimizer_kernels = MXNET_LARS_KERNELS,
	  .source = "mlcommons/training_results_v4.0 (6fe9543) NVIDIA/benchmarks/resnet/implementations/"
		    "eos_ngc24.04_mxnet: config_DGXH100_multi_8x8x50.sh L18 (resnet-v1b-fl), "
		    "symbols/resnet-v1b-fl.py L158-208 (BatchNorm act relu, BatchNormAddRelu); NVIDIA's "
		    "MXNet fork (sneaxiy/NVIDIA-MxNet ce30b18) batch_norm.cu L1111-1147, "
		    "batch_norm_add_relu.cu L678-705, nhwc_batch_norm_kernel.cc" },
	{ "megatron-deepspeed", "BigScience Megatron-DeepSpeed of 2022 (BLOOM tr11: apex LayerNorm, unfused attention, BF16_Optimizer)",
	  .rmsnorm = TE_NORM, .layernorm = FWD_BWD(4, 10, 1, 3),
	  .rope = FWD_BWD(4, 4, 2, 2), .swiglu = EAGER_SWIGLU, .gelu = FWD_BWD(4, 8, 1, 2),
	  .residual = EAGER_RESIDUAL, .loss = FWD_BWD(38, 14, 6, 2),
	  .alibi_bias = FWD_BWD(4, 0, 1, 0), .pipe_partitioned = true,
	  .causal_softmax = MEGATRON_CAUSAL_SOFTMAX, .causal_softmax_max_seq = 4096,
	  /* no fp32 main gradient of Megatron's: BF16_Optimizer's (zero_path) */
	  .main_grad_Bpp = 0, .main_grad_kernels = 1,
	  .optimizer_Bpp = 8, .optimizer_copy16 = true, .optimizer_kernels = 3,
	  .zero_path = megatron_ds_zero,
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2,
	  .host_issue_us = TORCH_HOST_ISSUE,
	  .source = "bigscience-workshop/Megatron-DeepSpeed affff3d2 megatron/model/fused_layer_norm.py "
		    "L62-90, megatron/fused_kernels/layer_norm_cuda_kernel.cu L678, L751-782, "
		    "megatron/model/fused_bias_gelu.py L32-58, megatron/model/transformer.py "
		    "(ALiBi baddbmm), megatron/model/gpt_model.py (float16_to_fp32), "
		    "megatron/mpu/cross_entropy.py L31-79; microsoft/DeepSpeed 2cd21f15c "
		    "deepspeed/runtime/bf16_optimizer.py (update_hp_grads, step, clear_hp_grads), "
		    "runtime/pipe/engine.py (_exec_backward_pass, _bf16_reduce_grads), "
		    "runtime/engine.py (communication_data_type, allreduce_bucket)" },
	{ "megatron-lm-2021", "Megatron-LM v2.5 of 2021 with local DDP (SC21 rows 39B-1T: apex kernels, fp16, flat fp16 all-reduce after backward)",
	  MEGATRON_2021_PIECES, .zero_path = megatron_2021_local_ddp,
	  .source = MEGATRON_2021_SOURCE ", megatron/model/distributed.py L188-218" },
	{ "megatron-lm-2021-torch-ddp", "Megatron-LM v2.5 of 2021 with torch DDP (SC21 rows 1.7B-18B: apex kernels, fp16, bucketed all-reduce in the last backward)",
	  MEGATRON_2021_PIECES, .zero_path = megatron_2021_torch_ddp,
	  .source = MEGATRON_2021_SOURCE ", megatron/training.py L246-251; PyTorch reducer.cpp "
		    "(copy_grad_to_bucket, copy_bucket_to_grad)" },
	{ NULL, NULL, .attn_ampere = ATTN_BE_BEST, .attn_hopper = ATTN_BE_BEST, .source = NULL },
};

const struct stack *stack_find(const char *name)
{
	for (const struct stack *s = stack_table; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

int stack_index(const struct stack *s)
{
	return s ? (int)(s - stack_table) : -1;
}

const struct stack *stack_default(void)
{
	return &stack_table[0];
}

enum attn_backend stack_attn_backend(const struct stack *s, double cc)
{
	return cc >= 9 ? s->attn_hopper : s->attn_ampere;
}

const struct stack *stack_at(int index)
{
	return index >= 0 ? &stack_table[index] : stack_default();
}

/* Hugging Face's modeling code, which the eager Llama stacks follow
 * [source] (transformers 26a9443d, src/transformers/models/):
 * llama/modeling_llama.py L356-358 q_proj, k_proj, v_proj (Mistral's and
 * Qwen2's alike); gpt2/modeling_gpt2.py L158 one c_attn;
 * gpt_neox/modeling_gpt_neox.py L102, bloom/modeling_bloom.py L257 and
 * falcon/modeling_falcon.py L279 one query_key_value: the ungated (GELU)
 * families fuse the three. OPT (opt/modeling_opt.py L114-116: separate,
 * ReLU) is an exception the gated-MLP rule gets wrong. */
bool stack_qkv_separate(const struct stack *k, const struct model *m)
{
	return k->qkv_separate && (!k->qkv_separate_gated || m->act == MODEL_ACT_SWIGLU);
}
