# The launch of scenarios/llama3-70b-h100-cp.json (Llama 3 70B, sequence
# 32768 over CP 4, TP 8 with SP, PP 4 interleaved 5 chunks with 18-layer
# first and last stages, DP 2 on 32 DGX H100) as Megatron-LM core_v0.9.0
# arguments, in the style of NeMo's long-context recipes and Megatron-LM's
# examples/llama scripts. The model's are models/zoo/llama3-70b.json's
# (config.json of meta-llama/Meta-Llama-3-70B: 80 layers, hidden 8192,
# 64 heads, 8 KV heads, FFN 28672, vocabulary 128256, untied, RMSNorm,
# SwiGLU, RoPE, no biases, no dropout); --make-vocab-size-divisible-by 16
# keeps the 128256 rows unpadded at TP 8 (16 x 8 = 128 divides 128256).
torchrun --nproc_per_node 8 --nnodes 32 pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 \
    --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
    --swiglu --normalization RMSNorm --disable-bias-linear \
    --untie-embeddings-and-output-weights --position-embedding-type rope \
    --attention-dropout 0.0 --hidden-dropout 0.0 \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-70B \
    --vocab-size 128256 --make-vocab-size-divisible-by 16 \
    --seq-length 32768 --max-position-embeddings 32768 \
    --micro-batch-size 1 --global-batch-size 16 \
    --tensor-model-parallel-size 8 --sequence-parallel \
    --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 4 \
    --decoder-first-pipeline-num-layers 18 --decoder-last-pipeline-num-layers 18 \
    --context-parallel-size 4 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --recompute-activations \
    --bf16 \
    --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --weight-decay 0.1 --clip-grad 1.0 \
    --data-path /data/llama3_text_document --split 99,1,0 --log-interval 1 --save-interval 1000
