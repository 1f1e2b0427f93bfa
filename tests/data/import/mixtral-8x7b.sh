# Megatron-LM examples/mixtral/train_mixtral_8x7b_distributed.sh at
# core_v0.9.0 (1afee59) on 8 nodes (NNODES=8), its shell variables given
# values: DISTRIBUTED_ARGS, MODEL_ARGS, MOE_ARGS, DATA_ARGS, TRAINING_ARGS,
# MODEL_PARALLEL_ARGS and LOGGING_ARGS as torchrun receives them. One flag
# added: --vocab-size 32000, the Llama 2 tokenizer model's size (the
# script's --tokenizer-model, which ddlsim does not read). The plan is
# scenarios/mixtral-8x7b-h100-ep8.json's (TP 1, PP 4, EP 8, DP 16,
# distributed optimizer, 4k tokens, 256 x 4k batch).
torchrun --nproc_per_node 8 --nnodes 8 --node_rank 0 --master_addr localhost --master_port 6000 \
    pretrain_gpt.py \
    --use-mcore-models \
    --disable-bias-linear \
    --seq-length 4096 \
    --max-position-embeddings 32768 \
    --num-layers 32 \
    --hidden-size 4096 \
    --ffn-hidden-size 14336 \
    --num-attention-heads 32 \
    --init-method-std 0.01 \
    --attention-dropout 0.0 \
    --hidden-dropout 0.0 \
    --normalization RMSNorm \
    --position-embedding-type rope \
    --swiglu \
    --untie-embeddings-and-output-weights \
    --group-query-attention \
    --num-query-groups 8 \
    --no-masked-softmax-fusion \
    --no-position-embedding \
    --rotary-base 1000000 \
    --num-experts 8 \
    --moe-router-topk 2 \
    --moe-router-load-balancing-type aux_loss \
    --moe-aux-loss-coeff 1e-2 \
    --moe-grouped-gemm \
    --moe-token-dispatcher-type alltoall \
    --overlap-param-gather \
    --overlap-grad-reduce \
    --tokenizer-type Llama2Tokenizer \
    --tokenizer-model /models/mixtral/tokenizer.model \
    --vocab-size 32000 \
    --data-path /data/mixtral_text_document \
    --split 99990,8,2 \
    --micro-batch-size 1 \
    --global-batch-size 256 \
    --lr 1e-4 \
    --train-iters 500000 \
    --lr-decay-iters 320000 \
    --lr-decay-style cosine \
    --min-lr 1.0e-5 \
    --weight-decay 0.1 \
    --lr-warmup-iters 500 \
    --clip-grad 1.0 \
    --bf16 \
    --tensor-model-parallel-size 1 \
    --pipeline-model-parallel-size 4 \
    --expert-model-parallel-size 8 \
    --use-distributed-optimizer \
    --sequence-parallel \
    --log-interval 1 \
    --save-interval 10000 \
    --eval-interval 1000 \
    --eval-iters 10 \
    --save /ckpt \
    --load /ckpt \
    --tensorboard-dir "/ckpt/tensorboard" \
    --no-load-optim \
    --no-load-rng
