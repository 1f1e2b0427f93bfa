/* scenario: one what-if question, as a scenario file states it.
 *
 * A scenario file is input paths (model, topology, profile) plus one plan
 * (plan.h) plus what to do with the answer (output, published figures to
 * hold it against). scenario_load() reads it into a struct inputs and a
 * struct plan; simulate_run() needs nothing else.
 *
 * Schema "ddlsim.scenario" 1.2 (1.1 added the goal object, 1.2
 * node_groups[].power_cap_W; older files load as before). Paths are relative to the scenario file.
 *
 *   key                           type     unit    default       meaning
 *   name                          string   -       file name     display name
 *   description                   string   -       ""
 *   model                         string   path    required      model file
 *   topology                      string   path    required      topology file
 *   nodes                         int      -       required      nodes in the job
 *   node_groups                   [object] -       none          a mixed cluster (at most 4 groups): {nodes,
 *                                                                gpu}, consecutive nodes whose GPU is the
 *                                                                preset gpu (path, gpus/), each rank's
 *                                                                kernels priced by the roofline of its own
 *                                                                GPU and its memory held against its own
 *                                                                HBM; the topology gives every node's
 *                                                                links and NICs; nodes defaults to the
 *                                                                groups' sum (and must equal it); folded
 *                                                                one replica per class of replicas of
 *                                                                one GPU signature (docs/howto.md)
 *   node_groups[].nodes           int      -       required      nodes of the group
 *   node_groups[].gpu             string   path    required      GPU preset (schema ddlsim.gpu)
 *   node_groups[].power_cap_W     number   W       the preset's  (1.2) the group's board power limit,
 *                                                                over its preset's power.power_cap_W
 *                                                                (fabric/topology.h: its GPU's
 *                                                                cap_clock_ratio prices the group's
 *                                                                compute-bound kernels, its energy
 *                                                                counts a busy GPU at it); the
 *                                                                preset's rules (not above tdp_W,
 *                                                                nor below the table's first point
 *                                                                or idle_W)
 *   node_order                    string   -       "listed"      listed | fast_first | slow_first: the
 *                                                                order in which the groups' nodes are
 *                                                                numbered (by GEMM rate at the plan's
 *                                                                precision, peak x gemm_max); ranks fill
 *                                                                nodes in order, so with the default
 *                                                                order "tp,cp,dp,pp" the first stages
 *                                                                (or DP replicas) land on the first group;
 *                                                                give slower stages fewer layers with
 *                                                                parallel.stage_layers
 *   gpus_per_node_used            int      -       node.gpus     GPUs of each node the job uses (the first
 *                                                                ones; e.g. 64 of a 72-GPU NVL72 rack); the
 *                                                                others idle (topology_use_gpus())
 *   framework                     string   -       none          megatron-core | nemo | deepspeed |
 *                                                                fsdp2 | torchtitan, optionally
 *                                                                "@version" (deepspeed@0.4: the 2021
 *                                                                ZeRO-3; models/framework.h): fills
 *                                                                grad_reduce_dtype, bucket_MB, overlaps,
 *                                                                zero, attention where not given
 *   parallel.dp                   int      -       GPUs/(tp cp pp) data-parallel degree
 *   parallel.tp                   int      -       1             tensor-parallel degree
 *   parallel.cp                   int      -       1             context-parallel degree (sequence
 *                                                                split; seq_len % 2cp == 0; flash)
 *   parallel.cp_comm              string   -       "p2p"         p2p (ring K/V exchange) | a2a (Ulysses;
 *                                                                heads % (cp tp) == 0)
 *   parallel.ep                   int      -       1             expert-parallel degree (MoE models;
 *                                                                divides dp and the experts; the EP
 *                                                                group lies inside the DP group)
 *   parallel.etp                  int      -       tp            expert-tensor-parallel degree (MoE
 *                                                                models; 1 or tp; Megatron-Core's
 *                                                                --expert-tensor-parallel-size: 1
 *                                                                keeps each expert whole on a rank)
 *   parallel.bn_group             int      -       1             GPUs of one node that share batch-norm
 *                                                                statistics (CNN models; 1, 2, 4, 8 or
 *                                                                16, dividing the GPUs per node)
 *   parallel.offload              string   -       "none"        none | optimizer | optimizer+params: CPU
 *                                                                offload over the topology's host link
 *                                                                (sim/build_transformer.c; needs host_bw_GBps)
 *   parallel.dp_sync              string   -       "allreduce"   allreduce | ps: gradient buckets pushed to
 *                                                                parameter servers, weights pulled back
 *                                                                (synchronous; needs zero 0, ep 1)
 *   parallel.ps.servers           int      -       1             parameter servers (attach gpus: at most
 *                                                                dp x cp)
 *   parallel.ps.attach            string   -       "fabric"      fabric (dedicated CPU hosts on the fabric
 *                                                                core: the switch, or a fat tree's spine) |
 *                                                                gpus (colocated: server k on member k of
 *                                                                each DP group)
 *   parallel.ps.sharding          string   -       "even"        even (each bucket split over all servers
 *                                                                by bytes) | round_robin (bucket i whole
 *                                                                to server i mod servers)
 *   parallel.ps.mode              string   -       "sync"        sync (push, meet the DP group, pull) |
 *                                                                async (each push applied as it comes)
 *   parallel.ps.staleness         int      iterations none       async: SSP bound, a worker starts
 *                                                                iteration i once its DP group finished
 *                                                                i - s - 1
 *   parallel.ps.iterations        int      -       8             async: iterations replayed back to back;
 *                                                                the report gives their mean, the rate
 *                                                                and the updates' staleness
 *   parallel.ps.nic_Gbps          number   Gb/s    node NIC's    a dedicated server's NIC, per direction
 *   parallel.ps.latency_us        number   us      node NIC's    its NIC latency
 *   parallel.pp                   int      -       1             pipeline stages
 *   parallel.sp                   bool     -       false         sequence parallelism (needs tp > 1)
 *   parallel.zero                 int      -       0             ZeRO stage 0..3 (3 = FSDP)
 *   parallel.shard_group          int      GPUs    dp x cp       hybrid sharding (FSDP2 HSDP, DeepSpeed
 *                                                                MiCS, Megatron-Core's distributed
 *                                                                optimizer instances): the GPUs ZeRO
 *                                                                shards over, consecutive ranks of the
 *                                                                dp x cp group (a node of 8 with the
 *                                                                default order); gradients reduce-
 *                                                                scattered in it, each shard all-reduced
 *                                                                across the dp x cp / shard_group
 *                                                                groups; divides dp x cp; needs zero
 *                                                                >= 1, ep 1
 *   parallel.schedule             string   -       "1f1b"        gpipe | 1f1b | interleaved |
 *                                                                zb-h1 (zero-bubble ZB-H1, Qi et al.
 *                                                                2024: each backward split into B,
 *                                                                the input gradient, and W, the
 *                                                                weight gradients, W deferred into
 *                                                                1F1B's bubble; with ep, B leaves
 *                                                                the experts' wgrad to W; not with
 *                                                                cp, tp_comm_overlap, ZeRO-3, offloaded
 *                                                                parameters, full recompute or
 *                                                                interleave) | dualpipe
 *                                                                (DeepSeek-V3's bidirectional
 *                                                                DualPipe: rank s holds stages s
 *                                                                and pp - 1 - s, micro-batches fed
 *                                                                from both ends, F&B pairs, B and
 *                                                                W split; pp even, micro-batches
 *                                                                even and >= 2 pp; not with cp,
 *                                                                tp_comm_overlap, full recompute,
 *                                                                offloaded parameters, interleave
 *                                                                or tied embeddings)
 *   parallel.interleave           int      -       1             model chunks per rank (interleaved)
 *   parallel.recompute            string   -       "none"        none | selective | full |
 *                                                                selective-op (torchtitan's per-op
 *                                                                policy, models/workload.h; dense
 *                                                                decoders)
 *   parallel.recompute_every_n_layers
 *                                 int      layers  1             with recompute full: only every n-th
 *                                                                layer a rank holds (its n-th, 2n-th,
 *                                                                ...) is checkpointed, the others keep
 *                                                                their saved set (torchtitan's
 *                                                                selective_ac_option "n"; n above the
 *                                                                rank's layers: none)
 *   parallel.recompute_modules    [string] -       ["core_attn"] with recompute selective: Megatron-
 *                                                                Core's --recompute-modules, of
 *                                                                core_attn, layernorm, mla_up_proj
 *                                                                (MLA models), moe_act (MoE models);
 *                                                                mlp, moe, shared_experts refused
 *                                                                (models/workload.h enum rc_module)
 *   parallel.order                string   -       "tp,cp,dp,pp" rank order, innermost first (cp
 *                                                                may be left out: right after tp; ep
 *                                                                may be named, else right before dp)
 *   parallel.stage_layers         [int]    layers  even split    layers of each pipeline stage (split
 *                                                                over its chunks when interleaved)
 *   parallel.first_stage_layers   int      layers  -             layers of the first / last stage (the
 *   parallel.last_stage_layers    int      layers  -             rest split evenly over the others)
 *   parallel.vstage_layers        [int]    layers  -             layers of each of pp x interleave
 *                                                                virtual stages (chunk-major), >= 0
 *   training.seq_len              int      tokens  required      (a vit model: derived,
 *                                                                (image_size/patch_size)^2 + 1;
 *                                                                if given, must equal it)
 *   training.global_batch         int      samples required
 *   training.micro_batch          int      samples 1
 *   training.precision            string   -       "bf16"        fp32 | tf32 | fp16 | bf16 | fp8 |
 *                                                                mxfp8 | nvfp4 (models/precision.h:
 *                                                                tf32 = fp32 with tf32 GEMMs; fp8 =
 *                                                                Transformer Engine; mxfp8, nvfp4 =
 *                                                                its block-scaled recipes, only on a
 *                                                                GPU whose preset gives their peak)
 *   training.attention            string   -       see meaning   flash | unfused (models/attention.h);
 *                                                                default flash where the GPU has a
 *                                                                flash kernel and precision is 16-bit
 *                                                                or fp8, else unfused
 *   training.fp8_comm             bool     -       false         TP/SP all-gathers move fp8 (needs fp8)
 *   training.fp8_moe_act_cache    bool     -       false         the routed experts' SwiGLU inputs
 *                                                                (fc1 outputs) saved in fp8, 1 byte
 *                                                                per element (DeepSeek-V3, arXiv
 *                                                                2412.19437 section 3.3.2; needs fp8
 *                                                                and an MoE model; the cast's time
 *                                                                not priced: fused in the report)
 *   training.fp8_params           bool     -       false         transformer-layer weights only in fp8
 *                                                                (TE fp8_model_params, Megatron-Core
 *                                                                --fp8-param-gather; needs fp8): no
 *                                                                bf16 copy, fp8 parameter all-gathers
 *   training.optimizer_state_dtype string  -       "fp32"        Adam's first and second moments: fp32
 *                                                                | bf16 (DeepSeek-V3, arXiv 2412.19437
 *                                                                section 3.3.3, "Low-Precision Optimizer
 *                                                                States"): 2 + 2 bytes per parameter
 *                                                                instead of 4 + 4, the fp32 master kept
 *                                                                (K = 8 of 12); the step moves 8 bytes
 *                                                                per parameter fewer
 *   training.master_weights       string   -       "fp32"        the optimizer's master weights: fp32 |
 *                                                                remainders (Apex DistributedFusedAdam
 *                                                                store_param_remainders, NeMo's default
 *                                                                under megatron_amp_O2 bf16: the bf16
 *                                                                weight and an int16 remainder, 2 bytes
 *                                                                per parameter of state instead of 4;
 *                                                                needs bf16 weights: precision bf16 or
 *                                                                fp8 without fp8_params; memory only)
 *   training.allocator            string   -       the stack's   PyTorch's caching allocator as launched:
 *                                                                expandable | native. expandable:
 *                                                                PYTORCH_CUDA_ALLOC_CONF=
 *                                                                expandable_segments:True, what
 *                                                                torchtitan's single-host launcher sets
 *                                                                (run_llama_train.sh L22 at 9dec370);
 *                                                                native: no such setting (its
 *                                                                multinode_trainer.slurm sets none),
 *                                                                segments sized and split as
 *                                                                CUDACachingAllocator.cpp does
 *                                                                (models/ptalloc.h). Replayed for the
 *                                                                stacks whose allocator ddlsim replays
 *                                                                (torchtitan's eager stacks); an error
 *                                                                elsewhere. Memory only
 *   training.memory_reserve       number   0..0.5  0.05          allocator fragmentation reserve, a
 *                                                                fraction of HBM (models/memory.h)
 *   training.optimizer            string   -       "adam"        adam (mixed-precision Adam, K = 12)
 *   training.grad_reduce_dtype    string   -       precision     dtype of gradient reduction: fp32 |
 *                                                                fp16 | bf16 (tf32: fp32, fp8: bf16)
 *   training.train_tokens         number   tokens  0             for time- and cost-to-train
 *   training.finetune.method      string   -       required      full | lora | qlora (models/finetune.h):
 *                                                                lora and qlora freeze the base weights
 *                                                                (no weight gradients, optimizer state or
 *                                                                DP reduction) and train adapters;
 *                                                                dense transformers, no offload
 *   training.finetune.rank        int      -       required      LoRA rank r (lora, qlora)
 *   training.finetune.alpha       number   -       rank          scaling alpha / r (no cost of its own)
 *   training.finetune.dropout     number   0..1    0             dropout on each adapter's input
 *   training.finetune.targets     [string] -       required      the adapted linear layers (lora, qlora):
 *                                                                q_proj | k_proj | v_proj | qkv_proj
 *                                                                (fused) | o_proj | gate_proj (SwiGLU) |
 *                                                                up_proj | down_proj
 *   training.finetune.base_dtype  string   -       see meaning   storage of the frozen weights: the
 *                                                                precision's 16-bit weights (bf16 | fp16)
 *                                                                for lora; nf4 for qlora (bitsandbytes,
 *                                                                dequantized before each GEMM; needs
 *                                                                precision bf16 or fp16, ZeRO <= 2)
 *   training.input_pipeline.loader string  -       required      the CNN's data loader (models/
 *                                                                input_pipeline.h): none | pytorch-pil
 *                                                                (DataLoader workers, Pillow, on the
 *                                                                node's CPU cores) | dali-gpu (DALI on
 *                                                                each GPU); the step takes max(GPU step,
 *                                                                the loader's time for its images)
 *   training.input_pipeline.cpu_cores int  cores   node.cpu_cores  pytorch-pil: host CPU cores per node
 *   training.input_pipeline.workers_per_gpu int -  all cores     pytorch-pil: DataLoader workers per GPU,
 *                                                                one core each
 *   training.input_pipeline.core_img_per_s number img/s 145      pytorch-pil: images one core prepares
 *                                                                (Xeon E5-2698 v4, Pillow; cited there)
 *   training.input_pipeline.gpu_img_per_s number img/s 7000 (A100) dali-gpu: images one GPU's DALI
 *                                                                pipeline prepares (required off A100)
 *   communication.algorithm       string   -       "auto"        collective algorithm
 *   communication.bucket_MB       number   MB      25            gradient bucket (1e6 bytes)
 *   communication.overlap_grad_reduce bool -       true          reduce buckets during backward (DDP);
 *                                                                false: one reduction after it (Megatron-LM 2021)
 *   communication.overlap_param_gather bool -      false         ZeRO-1/2 parameter all-gather overlaps
 *                                                                the next forward (Megatron-Core)
 *   communication.apex_contiguous_buffers bool - false           Apex DistributedFusedAdam with
 *                                                                contiguous_grad_buffer and
 *                                                                contiguous_param_buffer (NeMo 1.x
 *                                                                distributed_fused_adam): buckets and
 *                                                                all-gathers are views of the grads
 *                                                                and weights, no bucket buffers
 *                                                                (models/memory.c reserved)
 *   communication.tp_comm_overlap bool     -       false         Megatron-Core --tp-comm-overlap
 *                                                                (Transformer Engine userbuffers): SP
 *                                                                all-gather / reduce-scatter split into
 *                                                                tp ring steps pipelined with GEMM
 *                                                                chunks; needs parallel.sp
 *   communication.tp_comm_overlap_sm_margin object SMs {}        TE userbuffers config: SMs of the
 *                                                                "pipeline" reduce-scatter kernel
 *                                                                run with set_sm_margin (keys
 *                                                                proj_fprop, fc2_fprop); the
 *                                                                forward GEMM before it runs on
 *                                                                the other SMs; needs tp_comm_overlap
 *   compute.cost                  string   -       "roofline"    roofline | profile
 *   compute.profile               string   path    -             calib profile (cost = profile; with
 *                                                                another cost an error: it would be
 *                                                                ignored)
 *   compute.stack                 string   -       framework's   the kernels around the GEMMs and the
 *                                                                attention: megatron-te | hf-eager |
 *                                                                torchtitan | torchtitan-04133643 |
 *                                                                torchtitan-04133643-fused-norm |
 *                                                                torchtitan-compile |
 *                                                                llm-foundry | llm-foundry-triton |
 *                                                                deepspeed | dle-bert |
 *                                                                mxnet-normconv | mxnet-nhwc-bn |
 *                                                                megatron-deepspeed | megatron-lm-2021 |
 *                                                                megatron-lm-2021-torch-ddp |
 *                                                                deepspeed-zero3-2021
 *                                                                (models/stack.h); default the
 *                                                                framework preset's, else megatron-te
 *   compute.attention_backend     string   -       stack's       the flash kernel: fa2 | fa3 | cudnn |
 *                                                                best (the GPU's best measured);
 *                                                                default the stack's on this GPU
 *   compute.cuda_graphs           bool     -       false         kernels replayed from CUDA graphs:
 *                                                                the host issues none of them
 *                                                                (models/host.h)
 *   compute.host_issue_fwd_us     number   us      stack's       the host's time to issue one kernel
 *                                                                in forward (eager PyTorch 9.4;
 *                                                                MXNet stacks 0: not known); a
 *                                                                block of shorter kernels waits;
 *                                                                an error with cuda_graphs true
 *   compute.host_issue_bwd_us     number   us      stack's       the same in backward (autograd's
 *                                                                C++ thread; eager PyTorch 3.6)
 *   compute.launch_blocking       bool     -       false         CUDA_LAUNCH_BLOCKING=1: each launch
 *                                                                waits for its kernel, so the host's
 *                                                                issue time adds to the GPU's
 *                                                                (models/host.h)
 *   moe.routing                   string   -       model's       uniform | zipf | loads (models/moe.h;
 *                                                                loads: the model's expert_loads)
 *   moe.zipf_s                    number   -       model's       Zipf exponent of the routing
 *   moe.capacity_factor           number   -       model's       expert capacity in balanced loads,
 *                                                                tokens beyond it dropped; 0 = dropless
 *   simulation.fold               string   -       "auto"        auto | on | off | exact (see engine.h)
 *   simulation.iterations         int      -       1             iterations sampled (straggler draws):
 *                                                                P50/P95/P99 of the iteration time and
 *                                                                the ranks on the critical path
 *   simulation.stragglers         object   -       none          a straggler group (the keys below), or a
 *                                 | [object]                     list of 1 to 8 of them (an empty list is an
 *                                                                error): a rank in several computes x the
 *                                                                product of their factors, each group
 *                                                                drawing from its own stream (its seed and
 *                                                                its place in the list), so adding a group
 *                                                                leaves the draws of the others alone
 *   simulation.stragglers.ranks   [int]    ranks   -             ranks whose GPU computes slower (at most 32,
 *                                                                over all groups)
 *   simulation.stragglers.fraction number  0..1    -             instead: this fraction of all ranks,
 *                                                                chosen with the seed
 *   simulation.stragglers.slowdown number  factor  1             compute time x this (fixed; the mean of
 *                                                                normal, the median of log-normal draws)
 *   simulation.stragglers.distribution string -    "fixed"       fixed | normal | lognormal | empirical: a
 *                                                                draw per rank and iteration (empirical:
 *                                                                one of the samples, uniformly)
 *   simulation.stragglers.samples [number] factor  -             empirical: measured slowdown factors
 *                                                                (> 0, at most 64 over all groups)
 *   simulation.stragglers.samples_file string path -             empirical, instead: a CSV file of them
 *                                                                (numbers separated by commas, blanks or
 *                                                                lines; '#' lines and a header skipped)
 *   simulation.stragglers.sigma   number   -       0             normal: standard deviation of the
 *                                                                factor; log-normal: of its logarithm
 *   simulation.stragglers.seed    int      -       1             seed of the draws
 *   simulation.degraded_links     [object] -       []            links with bandwidth / latency factors
 *                                                                (at most 8): {link, bw_factor,
 *                                                                latency_factor}; link names as in
 *                                                                fabric/platform.c: nic<node>_<i>,
 *                                                                gl<gpu>, lu<leaf>, podup<pod>, psnic<k>, ...
 *   simulation.throttle           [object] -       []            throttling windows (DVFS / thermal, at
 *                                                                most 8): {ranks | nodes, start_s,
 *                                                                duration_s, factor}; compute-stream
 *                                                                tasks of those ranks (or every rank of
 *                                                                those nodes; neither: all ranks) take
 *                                                                factor x as long while simulated time is
 *                                                                in [start_s, start_s + duration_s) of
 *                                                                the iteration, a task straddling an edge
 *                                                                priced piecewise; folded, the throttled
 *                                                                ranks' replicas are simulated whole
 *   simulation.throttle[].ranks   [int]    ranks   -             at most 16
 *   simulation.throttle[].nodes   [int]    nodes   -             at most 16
 *   simulation.throttle[].start_s number   s       required      from the iteration's start, >= 0
 *   simulation.throttle[].duration_s number s      required      > 0
 *   simulation.throttle[].factor  number   factor  required      >= 1: compute time x this inside
 *   simulation.sensitivity        bool     -       false         also simulate without the degraded links
 *                                                                and with each alone: what each costs
 *   simulation.collective_pairs   bool     -       false         post a multi-node all-to-all pair by
 *                                                                pair, never as one flow per NIC (the
 *                                                                same figures, more flows: for checks)
 *   simulation.separate_streams   bool     -       false         each communication stream its own actor,
 *                                                                never run on the compute stream's (the
 *                                                                same figures: for checks)
 *   simulation.collective_flows   bool     -       false         post every collective's flows, never
 *                                                                replay a private one (links no other
 *                                                                flow uses) from its first instance's
 *                                                                record (the same figures: for checks)
 *   simulation.link_traffic       string   -       "exact"       exact | bytes | off: report.json's links:
 *                                                                bytes per link, busy time and peak
 *                                                                (exact); bytes only; none (the same
 *                                                                figures: exact costs up to ~6 % of an
 *                                                                unfolded run's CPU)
 *   cost.usd_per_gpu_hour         number   USD     0             price for cost-to-train
 *   output.dir                    string   path    "out/<name>"  report directory (relative to the scenario
 *                                                                file, like its other paths; the default
 *                                                                relative to the working directory)
 *   output.formats                [string] -       ["json","csv"]  reports to write: json, csv, svg
 *                                                                (breakdown, schedule, memory plots), html
 *   published.tflops_per_gpu      number   TFLOP/s -             a published measurement to hold the
 *                                                                prediction against (reported with its
 *                                                                error): hardware TFLOP/s per GPU (with
 *                                                                recompute, attention as executed)
 *   published.model_tflops_per_gpu number  TFLOP/s -             model TFLOP/s per GPU (Megatron's count:
 *                                                                no recompute, non-causal attention)
 *   published.mfu                 number   0..1    -             model FLOPs utilization, model TFLOP/s
 *                                                                over the topology's dense peak
 *   published.iteration_time_s    number   s       -             time per iteration
 *   published.tokens_per_s        number   tokens/s -            whole job (not per GPU)
 *   published.peak_memory_GiB     number   GiB     -             the fullest GPU's measured peak memory
 *                                                                (2^30 bytes), held against the memory
 *                                                                anatomy (models/memory.h)
 *   published.memory_measure      string   -       "reserved"    what it counts: reserved | allocated |
 *                                                                active (PyTorch's caching allocator:
 *                                                                held against allocator_bytes) | device
 *                                                                (nvidia-smi: with the CUDA context and
 *                                                                NCCL's buffers)
 *   published.source              string   -       -             required in a published block
 *   goal                          object   -       none          the goal the plan was chosen for, as
 *                                                                `ddlsim plan --export` writes it
 *                                                                (schema 1.1): run's summary, report.json
 *                                                                and report.html then give the verdict,
 *                                                                the wall time with failures, cost and
 *                                                                energy against the deadline and budget,
 *                                                                at the estimate and at the error band's
 *                                                                slow edge (assess.h assess_goal); needs
 *                                                                training.train_tokens
 *   goal.name                     string   -       required      the goal's name
 *   goal.file                     string   path    -             the goal file (shown, not read)
 *   goal.cluster                  string   -       -             the goal's name for this cluster
 *   goal.deadline_days            number   days    0 (none)      wall time to train, failures included
 *   goal.budget_usd               number   USD     0 (none)      cost to train
 *   goal.economics                object   -       {}            the cluster's prices (economics.h keys);
 *                                                                a usd_per_gpu_hour here prices the
 *                                                                verdict, cost.usd_per_gpu_hour the run
 *   goal.goodput                  object   -       {}            failures and checkpoints (goodput.h keys)
 */
#ifndef DDLSIM_SCENARIO_H
#define DDLSIM_SCENARIO_H

#include <stdbool.h>

#include <jansson.h>

#include "diag.h"
#include "inputs.h"
#include "plan.h"
#include "scenario_meta.h"

struct scenario {
	struct scenario_meta meta;
	struct inputs *in;              /* owned, or borrowed from an inputs cache */
	bool in_borrowed;
	struct plan plan;
	char *out_dir;                  /* owned */
	bool want_json, want_csv;       /* output.formats */
	bool want_svg, want_html;
};

/* Load a scenario and the inputs it names, and check its plan against
 * them. Returns a new scenario (scenario_destroy()) or NULL after
 * reporting every problem into d. */
struct scenario *scenario_load(const char *path, struct diag *d);
void scenario_destroy(struct scenario *s);

/* Inputs shared by many scenarios that name the same model, topology and
 * cost source (a sweep's points): each set is loaded once, on first use. */
struct inputs_cache;
struct inputs_cache *inputs_cache_create(void);
/* Destroys the cached inputs too: after every scenario that borrows them. */
void inputs_cache_destroy(struct inputs_cache *c);

/* scenario_load() of a document already parsed (root is borrowed; a sweep
 * edits a base scenario's document and loads each point through here, so
 * every scenario key is sweepable). path names the document in messages
 * and anchors its relative paths. With cache, the inputs are borrowed
 * from it (loaded into it on first use); without, owned. */
struct scenario *scenario_load_json(json_t *root, const char *path, struct inputs_cache *cache,
				    struct diag *d);


#endif
