#!/usr/bin/env python3
"""Writes a deterministic synthetic docs tree: N text files, 4-6 directory levels deep, sizes
log-uniform between 1 and 50 KiB (like real docs). Same arguments, same bytes, every run.

usage: gen_tree.py DIR N [SEED]
"""
import math
import os
import random
import sys

WORDS = ("client request response timeout proxy header cookie stream async await "
         "route handler middleware state extract json body query path param error "
         "retry backoff pool connection tls certificate transport mount config").split()


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    # One long text body; each file takes its own slice, prefixed by a unique header.
    text = " ".join(rng.choice(WORDS) for _ in range(60_000)).encode()
    for i in range(n):
        depth = rng.randint(4, 6)
        parts = [f"d{rng.randint(0, 9)}" for _ in range(depth - 1)]
        size = int(math.exp(rng.uniform(math.log(1024), math.log(50 * 1024))))
        start = rng.randint(0, len(text) - size - 1)
        body = f"# Page {i}\n\n".encode() + text[start:start + size]
        d = os.path.join(root, *parts)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"page{i}.md"), "wb") as f:
            f.write(body)


if __name__ == "__main__":
    main()
