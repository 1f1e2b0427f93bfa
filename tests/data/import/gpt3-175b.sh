# Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh at core_v0.9.0
# (1afee59), its shell variables given values: the arrays
# DISTRIBUTED_ARGS, GPT_MODEL_ARGS, TRAINING_ARGS, MODEL_PARALLEL_ARGS,
# DATA_ARGS and EVAL_AND_LOGGING_ARGS as torchrun receives them. One
# flag added: --vocab-size 50257, the GPT-2 vocabulary file's size (the
# script's --vocab-file, which ddlsim does not read).
torchrun --nproc_per_node 8 --nnodes 16 --master_addr localhost --master_port 6000 pretrain_gpt.py \
    --num-layers 96 \
    --hidden-size 12288 \
    --num-attention-heads 96 \
    --seq-length 2048 \
    --max-position-embeddings 2048 \
    --micro-batch-size 1 \
    --global-batch-size 1536 \
    --rampup-batch-size 16 16 5859375 \
    --train-iters 500000 \
    --weight-decay 0.1 \
    --adam-beta1 0.9 \
    --adam-beta2 0.95 \
    --init-method-std 0.006 \
    --clip-grad 1.0 \
    --fp16 \
    --lr 6.0e-5 \
    --lr-decay-style cosine \
    --min-lr 6.0e-6 \
    --lr-warmup-fraction .001 \
    --lr-decay-iters 430000 \
    --tensor-model-parallel-size 8 \
    --pipeline-model-parallel-size 16 \
    --data-path /data/gpt3_text_document \
    --vocab-file /data/gpt2-vocab.json \
    --merge-file /data/gpt2-merges.txt \
    --split 949,50,1 \
    --log-interval 100 \
    --save-interval 10000 \
    --eval-interval 1000 \
    --save /ckpt \
    --load /ckpt \
    --eval-iters 10 \
    --tensorboard-dir /logs \
    --vocab-size 50257 \
    --exit-signal-handler   # not a flag ddlsim imports: listed unknown
