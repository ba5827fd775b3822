#!/usr/bin/env python3
"""The scaling table: what each command costs on 1k-, 10k- and 100k-file trees with 1, 10 and
100 generations of history, as wall time (median) and system calls (strace -c). A command
that costs what it shows stays flat across history and grows with the change, not the tree.

usage: scale.py MEMORIX WORKDIR OUT.md SIZE[,SIZE...] GENS[,GENS...] RUNS

Trees come from benches/gen_tree.py; history is made of one-file ingests (`ingest PATH FILE`).
Also measures a build and `lock --check` of a 100-mount manifest on the 10k tree (or the
smallest one given), and the peak RSS of the first build and of an update.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DIR_OPS = {"mkdir", "mkdirat", "link", "linkat", "unlink", "unlinkat", "rename", "renameat",
           "renameat2", "chmod", "fchmod", "fchmodat", "fchmodat2", "rmdir"}


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kw)


def wait_for_store(store):
    """A command may leave work to a detached process holding the store lock (filling
    latest/'s spare); measurements start when it is done."""
    lock = os.path.join(store, "lock")
    if os.path.exists(lock):
        run(["flock", lock, "true"])
    for _ in range(2000):
        if not os.path.exists(os.path.join(store, "spare", "filling")):
            break
        time.sleep(0.001)


def wait_for_project(project):
    """A first build leaves filling the kept memory tree to a detached process holding the
    project lock."""
    lock = os.path.join(project, ".memorix", "lock")
    if os.path.exists(lock):
        run(["flock", lock, "true"])


def syscalls(cmd, work):
    """(total, openat, directory operations) of one run under strace -c -f."""
    out = os.path.join(work, "strace.txt")
    run(["strace", "-f", "-c", "-o", out] + cmd)
    total = openat = dirops = 0
    for line in open(out):
        f = line.split()
        if len(f) < 5 or not f[-1].isidentifier() or not f[3].isdigit():
            continue
        name, calls = f[-1], int(f[3])
        if name == "total":
            total = calls
        elif name in ("openat", "open"):
            openat += calls
        elif name in DIR_OPS:
            dirops += calls
    return total, openat, dirops


def timed(cmd, prepare, runs, store):
    times = []
    for _ in range(runs):
        if prepare:
            prepare()
        wait_for_store(store)
        t = time.perf_counter()
        run(cmd)
        times.append(time.perf_counter() - t)
    wait_for_store(store)
    return statistics.median(times)


def rss_mb(cmd):
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, check=True, text=True).stderr
    return int(out.strip().splitlines()[-1]) // 1024


class Bench:
    def __init__(self, m, work, size, runs):
        self.m, self.runs = m, runs
        self.tree = os.path.join(work, f"tree{size}")
        if not os.path.isdir(self.tree):
            run([sys.executable, os.path.join(HERE, "gen_tree.py"), self.tree, str(size), "3"])
        self.work = os.path.join(work, f"scale{size}")
        if os.path.exists(self.work):
            run(["chmod", "-R", "u+w", self.work])
            shutil.rmtree(self.work)
        self.store = os.path.join(self.work, "store")
        self.project = os.path.join(self.work, "project")
        os.makedirs(self.project)
        files = sorted(os.path.relpath(os.path.join(d, f), self.tree)
                       for d, _, fs in os.walk(self.tree) for f in fs)
        self.files = files
        self.generations = 0
        self.touches = 0

    def mx(self, *args):
        return [self.m, "--store", self.store, "-C", self.project] + list(args)

    def touch(self):
        """Appends a line to the next file and ingests just it: one generation."""
        rel = self.files[self.touches % len(self.files)]
        self.touches += 1
        with open(os.path.join(self.tree, rel), "a") as f:
            f.write(f"edit {self.touches}\n")
        run(self.mx("ingest", f"docs/t/{rel}", os.path.join(self.tree, rel)))
        self.generations += 1
        return rel

    def start(self):
        run(self.mx("ingest", "docs/t/", self.tree))
        self.generations = 1
        with open(os.path.join(self.project, "memorix.toml"), "w") as f:
            f.write('[mounts.docs]\nselect = ["docs/t/"]\n')
        wait_for_store(self.store)
        first_rss = rss_mb(self.mx("build"))
        wait_for_store(self.store)
        wait_for_project(self.project)
        return first_rss

    def measure(self):
        """Rows of (command, median seconds, syscalls, openat, directory ops) at this history."""
        rows = []
        reingest = self.mx("ingest", "docs/t/", self.tree)

        def one_change():
            rel = self.files[(self.touches * 7919) % len(self.files)]
            self.touches += 1
            with open(os.path.join(self.tree, rel), "a") as f:
                f.write(f"edit {self.touches}\n")
        cases = [
            ("re-ingest, one file changed", reingest, one_change),
            ("ingest PATH FILE", None, None),
            ("update, one file changed", self.mx("update"), lambda: (one_change(), run(reingest))),
            ("build, nothing to do", self.mx("build"), None),
            ("lock --check", self.mx("lock", "--check"), None),
            ("status", self.mx("status"), None),
            ("log -n 1", self.mx("log", "-n", "1", "docs"), None),
            ("explain FILE", None, None),
        ]
        for name, cmd, prepare in cases:
            if name == "ingest PATH FILE":
                rel = self.files[len(self.files) // 2]
                cmd = self.mx("ingest", f"docs/t/{rel}", os.path.join(self.tree, rel))
                prepare = lambda rel=rel: open(os.path.join(self.tree, rel), "a").write("x\n")
            if name == "explain FILE":
                cmd = self.mx("explain", f".memory/docs/{self.files[0]}")
            t = timed(cmd, prepare, self.runs, self.store)
            if prepare:
                prepare()
            wait_for_store(self.store)
            total, openat, dirops = syscalls(cmd, self.work)
            wait_for_store(self.store)
            rows.append((name, t, total, openat, dirops))
        # The commands above added generations; bring the project up to date again.
        run(self.mx("update"))
        wait_for_store(self.store)
        return rows

    def update_rss(self):
        self.touch()
        wait_for_store(self.store)
        return rss_mb(self.mx("update"))


def hundred_mounts(m, work, size, runs):
    b = Bench(m, work, size, runs)
    b.work_dirs = sorted({"/".join(f.split("/")[:2]) for f in b.files})[:100]
    run(b.mx("ingest", "docs/t/", b.tree))
    with open(os.path.join(b.project, "memorix.toml"), "w") as f:
        for d in b.work_dirs:
            f.write(f'[mounts."m/{d.replace("/", "-")}"]\nselect = ["docs/t/{d}/"]\n\n')
    wait_for_store(b.store)

    def fresh():
        # The last build's detached fill of the kept memory tree must not race the move. Moved
        # aside, not deleted: creating inodes right after freeing thousands is slow on ext4
        # (benches/run.sh empties the trash at its end).
        wait_for_project(b.project)
        for p in (".memory", ".memorix", "memorix.lock"):
            path = os.path.join(b.project, p)
            if os.path.exists(path):
                os.chmod(path, 0o755)
                os.makedirs(os.path.join(work, "trash"), exist_ok=True)
                os.rename(path, os.path.join(tempfile.mkdtemp(dir=os.path.join(work, "trash")), p))
    t_build = timed(b.mx("build"), fresh, runs, b.store)
    t_check = timed(b.mx("lock", "--check"), None, runs, b.store)
    _, check_open, _ = syscalls(b.mx("lock", "--check"), b.work)
    return len(b.work_dirs), t_build, t_check, check_open


def main():
    m, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
    sizes = [int(s) for s in sys.argv[4].split(",")]
    gens = sorted(int(g) for g in sys.argv[5].split(","))
    runs = int(sys.argv[6])
    lines = ["| files | generations | command | median | syscalls | openat | dir ops |",
             "|---|---|---|---|---|---|---|"]
    rss = []
    for size in sizes:
        b = Bench(m, work, size, runs)
        first_rss = b.start()
        for g in gens:
            while b.generations < g:
                b.touch()
            run(b.mx("update"))
            wait_for_store(b.store)
            at = b.generations
            for name, t, total, openat, dirops in b.measure():
                ms = f"{t * 1000:.1f} ms" if t < 1 else f"{t:.2f} s"
                lines.append(f"| {size} | {at} | {name} | {ms} | {total} | {openat} | {dirops} |")
            print(f"  {size} files, {at} generations measured", file=sys.stderr)
        rss.append(f"| {size} | first build {first_rss} MB, one-file update {b.update_rss()} MB |")
    n, t_build, t_check, check_open = hundred_mounts(m, work, min(sizes, key=lambda s: abs(s - 10000)), runs)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n\n")
        f.write("Peak RSS (largest process):\n\n| files | peak RSS |\n|---|---|\n" + "\n".join(rss) + "\n\n")
        f.write(f"{n} mounts: build from nothing {t_build:.2f} s (median), "
                f"`lock --check` {t_check * 1000:.1f} ms with {check_open} openat.\n")


if __name__ == "__main__":
    main()
