/* nsys: an Nsight Systems report exported to SQLite (`nsys export --type
 * sqlite report.nsys-rep`, or `nsys profile --export=sqlite`) read as a
 * PyTorch profiler trace (kineto.h), so that the same attribution of
 * kernels to ops (kineto.c) and the same op table (trace_calib.h) price
 * it.
 *
 * The schema, as NVIDIA documents it ("SQLite Export Schema Reference",
 * Nsight Systems 2021.5 docs, nsys-exporter/exported_data.html: one table
 * per data type, created only when the report holds that data; times in
 * ns; names in StringIds) and as real exports hold it (Nsight Systems
 * 2022.2.1, schema 2.9.1, and 2024.5.1, schema 3.13.2: hpcgroup/pipit
 * pipit/tests/data, tests/data/nsys-real/README.md; 2025.3.2, schema
 * 3.20.3, TARGET_INFO_GPU as below). The tables and columns read:
 *
 *   table / column                         unit  meaning
 *   StringIds.id, .value                   -     the names the others point at
 *   CUPTI_ACTIVITY_KIND_KERNEL             -     one row per kernel (required)
 *     .start, .end                         ns    on the GPU
 *     .deviceId, .streamId                 -     the GPU (TARGET_INFO_GPU.id), its stream
 *     .correlationId                       -     CUPTI's id, shared with its launch
 *     .globalPid                           -     serialized process id: pid in bits 24..47
 *     .demangledName, .shortName           -     StringIds of the name (with, without templates)
 *   CUPTI_ACTIVITY_KIND_RUNTIME            -     one row per CUDA API call (required)
 *     .start                               ns    the call's start on its thread
 *     .globalTid                           -     serialized thread id: pid in bits 24..47,
 *                                                tid in bits 0..23
 *     .correlationId                       -     the kernel it launched (per process)
 *   NVTX_EVENTS                            -     NVTX ranges and marks (required)
 *     .start, .end                         ns    the range on its thread (end NULL: a mark)
 *     .eventType                           -     59 NvtxPushPopRange (ENUM_NSYS_EVENT_TYPE;
 *                                                the only type read: start/end
 *                                                ranges, 60, need not nest)
 *     .text, .textId                       -     the message, or its registered StringIds id
 *     .globalTid                           -     the thread that pushed it
 *   TARGET_INFO_GPU (optional)             -     one row per GPU: .id, .name,
 *                                                .totalMemory (B), .smCount,
 *                                                .computeMajor, .computeMinor
 *   ThreadNames (optional)                 -     .globalTid, .nameId: thread names
 *
 * Ops come from the NVTX ranges PyTorch pushes around every op under
 * torch.autograd.profiler.emit_nvtx(record_shapes=True) (pytorch/pytorch
 * torch/csrc/profiler/util.cpp getNvtxStr, 2.x): "aten::addmm, seq = 12,
 * op_id = 40, sizes = [[4096], [8, 4096], [4096, 4096]], input_op_ids =
 * [...]" (before 1.13: no op_id); the name is the text before the first
 * ',', the inputs' sizes the bracketed list after "sizes = " (JSON as
 * printed). The ranges carry no dtypes: the caller names the one its
 * GEMMs ran in. A range named "ProfilerStep#N" (the user's, e.g.
 * torch.cuda.nvtx.range) spans step N as Kineto's annotation does.
 * Correlation ids are per process, so a launch and a kernel match on
 * (pid, correlationId). CUPTI_ACTIVITY_KIND_MEMCPY, the memsets and the
 * `--type json` export are not read. */
#ifndef DDLSIM_NSYS_H
#define DDLSIM_NSYS_H

#include <stdio.h>

#include "diag.h"
#include "kineto.h"

/* What the file at path is: 1 an SQLite 3 database (its 16-byte header
 * "SQLite format 3\0"), 0 a regular file that is not one, -1 one that
 * cannot be read as a regular file (missing, a directory, a FIFO: not
 * waited on), with why[] set as infile.h says ("cannot open 'p': No such
 * file or directory", "'p' is a directory, expected a regular file"). */
int nsys_sniff(const char *path, char *why, size_t n);

/* Read the export at path as a trace of the ops named in interest[]
 * (NULL-terminated), each tensor input typed torch_type (kineto.h's
 * names: "c10::BFloat16"). With summary, also print for people how the
 * host issued its launches (the busiest threads: launches, median gap
 * between one launch's start and the next's). Returns a new trace
 * (kineto_destroy()) or NULL after reporting into d with the file, the
 * table and, for a bad row, its rowid ("/CUPTI_ACTIVITY_KIND_KERNEL/17"). */
struct kineto_trace *nsys_load(const char *path, const char *const *interest, const char *torch_type,
			       FILE *summary, struct diag *d);

#endif
