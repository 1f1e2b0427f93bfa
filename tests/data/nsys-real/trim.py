#!/usr/bin/env python3
"""Trim an Nsight Systems SQLite export to the tables ddlsim reads.

    python3 trim.py IN.sqlite OUT.sqlite

Keeps, with their rows unaltered and each table's CREATE statement as the
exporter wrote it: StringIds, CUPTI_ACTIVITY_KIND_KERNEL,
CUPTI_ACTIVITY_KIND_RUNTIME, NVTX_EVENTS, TARGET_INFO_GPU, ThreadNames and
the export's metadata (EXPORT_META_DATA or META_DATA_EXPORT); drops every
other table (OS runtime, scheduling, sampling, the other CUPTI activity
kinds, enums) and the StringIds rows none of the kept rows points at,
then VACUUMs into 1 KiB pages.
"""
import sqlite3
import sys

# the StringIds the kept tables point at (the kernels' names, the launches'
# API names, registered NVTX messages, thread names)
REFERENCED = [
    "SELECT demangledName FROM src.CUPTI_ACTIVITY_KIND_KERNEL",
    "SELECT shortName FROM src.CUPTI_ACTIVITY_KIND_KERNEL",
    "SELECT mangledName FROM src.CUPTI_ACTIVITY_KIND_KERNEL",
    "SELECT nameId FROM src.CUPTI_ACTIVITY_KIND_RUNTIME",
    "SELECT textId FROM src.NVTX_EVENTS",
    "SELECT nameId FROM src.ThreadNames"]
KEEP = ["StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
        "TARGET_INFO_GPU", "ThreadNames", "EXPORT_META_DATA", "META_DATA_EXPORT"]


def main(src, dst):
    out = sqlite3.connect(dst)
    out.execute("ATTACH DATABASE ? AS src", (src,))
    have = {r[0] for r in out.execute("SELECT name FROM src.sqlite_master WHERE type = 'table'")}
    referenced = " UNION ".join(q for q in REFERENCED if q.split()[-1].split(".")[1] in have)
    for name, sql in out.execute("SELECT name, sql FROM src.sqlite_master WHERE type = 'table'").fetchall():
        if name in KEEP:
            out.execute(sql)
            rows = f"SELECT * FROM src.{name}"
            if name == "StringIds":
                rows += " WHERE id IN (" + referenced + ")"
            out.execute(f"INSERT INTO main.{name} {rows}")
    out.commit()
    out.execute("DETACH DATABASE src")
    out.execute("PRAGMA page_size = 1024")  # the smallest pages: a small file
    out.execute("VACUUM")
    out.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
