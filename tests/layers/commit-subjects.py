#!/usr/bin/env python3
"""Commit messages have the form `git log --oneline` reads (issue 41): a
subject of at most 72 characters, and, when there is a body, a blank line
between them; the figures go in the body.

  commit-subjects.py --message FILE   check one message (the commit-msg
                                      hook, .githooks/commit-msg)
  commit-subjects.py SOURCE_ROOT      check every commit since BASE, the
                                      last commit before the rule (the
                                      suite); exit 77 (skipped) outside a
                                      git clone or where BASE is absent
                                      (a shallow clone)"""
import subprocess
import sys

MAX_SUBJECT = 72
BASE = "903705d"   # the last commit before the rule; older subjects stand


def problems(message):
    lines = [l for l in message.split("\n") if not l.startswith("#")]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ["empty message"]
    out = []
    if len(lines[0]) > MAX_SUBJECT:
        out.append(f"subject is {len(lines[0])} characters, at most {MAX_SUBJECT}: "
                   f"put the figures in the body")
    if len(lines) > 1 and lines[1].strip():
        out.append("no blank line between the subject and the body")
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--message":
        bad = problems(open(sys.argv[2], encoding="utf-8", errors="replace").read())
        for b in bad:
            print(f"commit-msg: {b}", file=sys.stderr)
        return 1 if bad else 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    git = ["git", "-C", sys.argv[1]]
    try:
        if subprocess.run(git + ["cat-file", "-e", BASE + "^{commit}"],
                          capture_output=True).returncode != 0:
            print(f"skipped: {BASE} is not in this clone")
            return 77
        log = subprocess.run(git + ["log", "--format=%H%x00%B%x01", BASE + "..HEAD"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"skipped: not a git clone ({e})")
        return 77
    bad = 0
    commits = [c for c in log.split("\x01") if c.strip()]
    for c in commits:
        h, msg = c.strip("\n").split("\x00", 1)
        for p in problems(msg):
            print(f"{h[:10]}: {p}: {msg.splitlines()[0][:80]!r}")
            bad += 1
    print(f"{len(commits)} commits since {BASE}: {bad} problem(s)")
    return 1 if bad else 0


sys.exit(main())
