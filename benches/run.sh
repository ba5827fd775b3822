#!/usr/bin/env bash
# Benchmarks memorix against the tools people know, side by side in one run, and writes
# benches/results.md. Ratios (memorix / peer) are what to read: this machine is noisy.
#
#   benches/run.sh                  the full harness (100k- and 10k-file trees; ~10-15 min on 2 cores)
#   benches/run.sh --quick          a smoke run on small trees (seconds), e.g. for CI
#   benches/run.sh --first-contact  only the initial ingest beside sha256sum -P2, git and ostree,
#                                   and the no-op build, on both trees (writes
#                                   benches/first-contact.md)
#
# MEMORIX_BENCH_BIN=PATH uses a memorix built beforehand instead of building one.
#
# Needs git, ostree, hyperfine, strace and GNU time (installed with apt when missing), valgrind for
# instruction counts. Trees are generated deterministically by benches/gen_tree.py.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

QUICK=0; FIRST=0
[ "${1:-}" = "--quick" ] && QUICK=1
[ "${1:-}" = "--first-contact" ] && FIRST=1
if [ "$QUICK" = 1 ]; then BIG=3000; SMALL=1000; RUNS=1; else BIG=100000; SMALL=10000; RUNS=${MEMORIX_BENCH_RUNS:-3}; fi
WORK=${MEMORIX_BENCH_DIR:-/tmp/memorix-bench}
mkdir -p "$WORK"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need ostree || ! need hyperfine || ! need strace || [ ! -x /usr/bin/time ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y -q ostree hyperfine strace time >/dev/null 2>&1 \
        || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q ostree hyperfine strace time >/dev/null; }
fi

if [ -n "${MEMORIX_BENCH_BIN:-}" ]; then
    M=$MEMORIX_BENCH_BIN
else
    cargo build --release --locked -q
    M="${CARGO_TARGET_DIR:-$REPO/target}/release/memorix"
fi
export NO_COLOR=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=b@x

T="$WORK/tree$BIG"; T10="$WORK/tree$SMALL"
[ -d "$T" ] || python3 benches/gen_tree.py "$T" "$BIG" 1
[ -d "$T10" ] || python3 benches/gen_tree.py "$T10" "$SMALL" 2
ONE=$(cd "$T" && find . -name page1.md | head -1 | sed 's|^\./||')

ROWS="$WORK/rows.tsv"; : > "$ROWS"
# row NAME MEMORIX PEER RATIO TARGET MET [SYSCALLS]
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:--}" >> "$ROWS"; }

# strace -c -f of one run of CMD: "calls", "openat" or "dirops" (mkdir, link, unlink, rename,
# chmod, rmdir) counts. System-call counts are stable where times are not.
strace_count() {
    local what=$1; shift
    strace -f -c -o "$WORK/strace-c.txt" "$@" >/dev/null 2>&1
    python3 - "$WORK/strace-c.txt" "$what" <<'PY'
import sys
dirops = {"mkdir", "mkdirat", "link", "linkat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
          "chmod", "fchmod", "fchmodat", "fchmodat2", "rmdir"}
counts = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[-1].isidentifier() and f[3].isdigit():
        counts[f[-1]] = int(f[3])
what = sys.argv[2]
print({"calls": counts.get("total", 0), "openat": counts.get("openat", 0) + counts.get("open", 0),
       "dirops": sum(n for k, n in counts.items() if k in dirops)}[what])
PY
}
calls() { strace_count calls "$@"; }
k() { python3 -c "n=$1; print(f'{n/1000:.1f}k' if n >= 10000 else n)"; }

# hf NAME PREPARE CMD...: runs hyperfine, prints "min median" per command (seconds).
hf() {
    local name=$1 prepare=$2; shift 2
    local args=()
    for c in "$@"; do args+=("$c"); done
    hyperfine -N --style none --warmup "${WARMUP:-0}" --runs "$RUNS" --prepare "$prepare" --export-json "$WORK/$name.json" "${args[@]}" >/dev/null 2>&1 \
        || hyperfine --style none --warmup "${WARMUP:-0}" --runs "$RUNS" --prepare "$prepare" --export-json "$WORK/$name.json" "${args[@]}" >/dev/null
    python3 - "$WORK/$name.json" <<'PY'
import json, sys, statistics
for r in json.load(open(sys.argv[1]))["results"]:
    t = r["times"]
    print(f"{min(t):.4f} {statistics.median(t):.4f}")
PY
}
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
le() { python3 -c "print('yes' if $1 <= $2 else 'no')"; }
fmt() { python3 -c "print(f'{$1:.3f} s')"; }

S="$WORK/store"; G="$WORK/git"; O="$WORK/ostree"
gitc="git --git-dir=$G/.git --work-tree=$T"

# Output of earlier runs is moved aside, not deleted, until the end: for a minute after a mass
# delete, ext4 checks every recently freed inode on each create, which would dominate every
# tool's time (and is not what is being measured). The trash is emptied when the script ends.
TRASH="$WORK/trash"
mkdir -p "$TRASH"
trap 'chmod -R u+w "$TRASH" && rm -rf "$TRASH"' EXIT
cat > "$WORK/aside.sh" <<SH
#!/bin/sh
# aside.sh PATH...: moves existing PATHs into the trash.
# (Moving a directory to another parent needs write permission on it: memorix checkouts are
# read-only.)
for p in "\$@"; do [ -e "\$p" ] && chmod u+w "\$p" && mv "\$p" "\$(mktemp -d "$TRASH/XXXXXX")/"; done; true
SH
chmod +x "$WORK/aside.sh"
aside() { "$WORK/aside.sh" "$@"; }
cat > "$WORK/settle.sh" <<SH
#!/bin/sh
# settle.sh PROJECT PATH...: waits for PROJECT's detached fill of its kept tree (it holds the
# project lock), moves PATHs aside and writes dirty pages back, so that no measured run, of
# memorix or of its peer, shares the machine with the work of the run before it.
[ -e "\$1/.memorix/lock" ] && flock "\$1/.memorix/lock" true
shift
"$WORK/aside.sh" "\$@"
sync
SH
chmod +x "$WORK/settle.sh"
# A fresh, empty git repo, ostree repo and memorix store, with nothing dirty in the page cache.
cat > "$WORK/fresh.sh" <<SH
#!/bin/sh
set -e
# An ingest that packed its blobs leaves their unpacking and latest/ to a detached process
# holding the store lock: it finishes before anything else is measured.
[ -e "\$1/lock" ] && flock "\$1/lock" true
"$WORK/aside.sh" "\$@"
git init -q "$G"
# No detached auto-gc after a commit: it would run during the next tool's measurement.
git -C "$G" config gc.auto 0
git -C "$G" config maintenance.auto false
ostree --repo="$O" init --mode=bare-user
sync
SH
chmod +x "$WORK/fresh.sh"

# The system calls of the command itself (strace -f, its threads), not of the detached process
# it leaves filling latest/ (started as it exits).
own_calls() {
    strace -f -qq -o "$WORK/strace-own.txt" "$@" >/dev/null 2>&1
    python3 - "$WORK/strace-own.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
end = next((i for i, l in enumerate(lines) if "__fill-spares" in l), len(lines))
print(sum(1 for l in lines[:end] if "resumed>" not in l.split(None, 1)[1][:40] and "+++" not in l))
PY
}

# first_contact TREE FILES: the initial ingest beside sha256sum -P2 (the hashing limit), git and
# ostree, all in one hyperfine call; the detached fill's time; the no-op build of a project
# mounting the tree, its time and system calls.
first_contact() {
    local tree=$1 n=$2
    local gitt="git --git-dir=$G/.git --work-tree=$tree"
    readarray -t r < <(WARMUP=1 hf "fc$n" \
        "$WORK/fresh.sh $S $G $O" \
        "$M --store $S -q ingest docs/t/ $tree" \
        "sh -c '$gitt add -A && $gitt commit -qm x'" \
        "ostree --repo=$O commit -b main --tree=dir=$tree --no-xattrs" \
        "sh -c 'find $tree -type f -print0 | xargs -0 -P2 sha256sum >/dev/null'")
    local m=${r[0]#* } g=${r[1]#* } o=${r[2]#* } h=${r[3]#* }
    row "initial ingest, $n files vs hashing every file (median)" "$(fmt $m)" "sha256sum -P2 $(fmt $h)" "$(ratio $m $h)" "<= 1.5" "$(le "$m/$h" 1.5)"
    row "initial ingest, $n files: git / memorix (median)" "$(fmt $m)" "git $(fmt $g)" "$(ratio $g $m)" ">= 3" "$(le 3 "$g/$m")"
    row "initial ingest, $n files: memorix / ostree (median)" "$(fmt $m)" "ostree $(fmt $o)" "$(ratio $m $o)" "< 1" "$(le "$m/$o" 0.9999)"
    "$WORK/fresh.sh" "$S" "$G" "$O"
    local own; own=$(own_calls "$M" --store "$S" -q ingest docs/t/ "$tree")
    "$WORK/fresh.sh" "$S" "$G" "$O"
    "$M" --store "$S" -q ingest docs/t/ "$tree"
    local fill; fill=$( { /usr/bin/time -f %e flock "$S/lock" true; } 2>&1 | tail -1)
    local loose packs; loose=$(find "$S/blobs" -type f | wc -l); packs=$(find "$S/incoming" -type f 2>/dev/null | wc -l)
    row "initial ingest, $n files: system calls of the command; then its detached fill (unpack, latest/, spare)" "$(k "$own") calls" "fill $(fmt $fill) after it answered" "-" "-" "-" "$(k "$own")"
    row "after the fill: loose blob files / incoming packs" "$loose / $packs" "-" "-" "-" "-"
    local p="$WORK/project$n"; aside "$p"; mkdir -p "$p"
    printf '[mounts.docs]\nselect = ["docs/t/"]\n' > "$p/memorix.toml"
    "$M" --store "$S" -C "$p" -q build; flock "$p/.memorix/lock" true
    "$M" --store "$S" -C "$p" -q build
    local noop; noop=$(hyperfine -N --style none --warmup 5 --runs 50 --export-json "$WORK/noop$n.json" "$M --store $S -C $p build" >/dev/null && python3 -c "import json,statistics; print(f\"{statistics.median(json.load(open('$WORK/noop$n.json'))['results'][0]['times'])*1000:.1f}\")")
    local goal=10; [ "$n" -ge 100000 ] && goal=15
    local nc; nc=$(calls "$M" --store "$S" -C "$p" build)
    row "no-op build, $n-file environment (median)" "$noop ms" "-" "-" "< $goal ms, < 300 calls" "$(le "$noop" $goal) $([ "$nc" -lt 300 ] && echo yes || echo no)" "$nc"
    aside "$p"
}

if [ "$FIRST" = 1 ]; then
    echo "first contact: $SMALL and $BIG files"
    first_contact "$T10" "$SMALL"
    first_contact "$T" "$BIG"
    {
        echo "# memorix: first contact"
        echo
        echo "\`benches/run.sh --first-contact\` on $(nproc) cores, $(date -u +%F); $RUNS runs per timing after one warm-up, in one"
        echo "hyperfine call per tree (the tools take turns); the median shown. System calls: \`strace -f\`, one run."
        echo
        echo "| measurement | memorix | peer | ratio | target | met | system calls |"
        echo "|---|---|---|---|---|---|---|"
        awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7}' "$ROWS"
    } > benches/first-contact.md
    cat benches/first-contact.md
    exit 0
fi

echo "1. initial ingest of $BIG files"
# One warm-up run each: the first inode-heavy run after a while pays for cold metadata caches
# (whichever tool happens to go first).
readarray -t r < <(WARMUP=1 hf ingest \
    "$WORK/fresh.sh $S $G $O" \
    "$M --store $S ingest docs/t/ $T" \
    "sh -c '$gitc add -A && $gitc commit -qm x'" \
    "ostree --repo=$O commit -b main --tree=dir=$T --no-xattrs")
m=${r[0]#* }; g=${r[1]#* }; o=${r[2]#* }
row "initial ingest, $BIG files (median)" "$(fmt $m)" "git $(fmt $g)" "$(ratio $m $g)" "<= 0.33" "$(le "$m/$g" 0.3334)"
row "initial ingest, $BIG files (median)" "$(fmt $m)" "ostree $(fmt $o)" "$(ratio $m $o)" "< 1" "$(le "$m/$o" 0.9999)"
SHA=$( { /usr/bin/time -f %e sh -c "find $T -type f -print0 | xargs -0 -P2 sha256sum >/dev/null" ; } 2>&1 | tail -1)
row "initial ingest vs hashing every file" "$(fmt $m)" "sha256sum -P2 $(fmt $SHA)" "$(ratio $m $SHA)" "(the hashing limit)" "-"

if [ -d "${MEMORIX_CORPUS:-$REPO/../shared/corpus}" ]; then
    C=$(cd "${MEMORIX_CORPUS:-$REPO/../shared/corpus}" && pwd); NC=$(find "$C" -type f | wc -l)
    gitcc="git --git-dir=$G/.git --work-tree=$C"
    readarray -t r < <(hf corpus \
        "$WORK/fresh.sh $S $G $O" \
        "$M --store $S ingest docs/corpus/ $C" \
        "sh -c '$gitcc add -A && $gitcc commit -qm x'" \
        "ostree --repo=$O commit -b main --tree=dir=$C --no-xattrs")
    m=${r[0]#* }; g=${r[1]#* }; o=${r[2]#* }
    row "initial ingest, real corpus ($NC files, median)" "$(fmt $m)" "git $(fmt $g)" "$(ratio $m $g)" "<= 0.33" "$(le "$m/$g" 0.3334)"
    row "initial ingest, real corpus ($NC files, median)" "$(fmt $m)" "ostree $(fmt $o)" "$(ratio $m $o)" "< 1" "$(le "$m/$o" 0.9999)"
fi

# Fresh state for the incremental measurements.
"$WORK/fresh.sh" "$S" "$G" "$O"
"$M" --store "$S" ingest docs/t/ "$T" >/dev/null; $gitc add -A; $gitc commit -qm base
ostree --repo="$O" commit -b main --tree=dir="$T" --no-xattrs >/dev/null
sleep 3 # past the stat cache's racy window for the files just written
# After the initial ingest a detached process fills latest/'s spare buffer (holding the store
# lock); the first re-ingest then applies only its change. Measured cold, once, against git's
# first commit after the same change.
flock "$S/lock" true
date +%N >> "$T/$ONE"; sync
FIRST=$( { /usr/bin/time -f %e "$M" --store "$S" ingest docs/t/ "$T" >/dev/null; } 2>&1 | tail -1)
GFIRST=$( { /usr/bin/time -f %e sh -c "$gitc add -A && $gitc commit -qm first" >/dev/null; } 2>&1 | tail -1)
# The system calls of an initial ingest and of the first re-ingest after it, in a second
# store and repository (one run each under strace, which slows both).
S2="$WORK/store2"; G2="$WORK/git2"; aside "$S2" "$G2"; git init -q "$G2"; git -C "$G2" config gc.auto 0
gitc2="git --git-dir=$G2/.git --work-tree=$T"
CM=$(calls "$M" --store "$S2" ingest docs/t/ "$T"); CG=$(calls sh -c "$gitc2 add -A && $gitc2 commit -qm base")
row "initial ingest, $BIG files: system calls" "$(k $CM)" "git $(k $CG)" "$(ratio $CM $CG)" "-" "-" "$(k $CM) / $(k $CG)"
flock "$S2/lock" true; sleep 3; date +%N >> "$T/$ONE"; sync
CM=$(calls "$M" --store "$S2" ingest docs/t/ "$T"); CG=$(calls sh -c "$gitc2 add -A && $gitc2 commit -qm first")
row "first re-ingest after the initial one (cold, one file changed)" "$(fmt $FIRST)" "git $(fmt $GFIRST)" "$(ratio $FIRST $GFIRST)" "<= 2" "$(le "$FIRST/$GFIRST" 2)" "$(k $CM) / $(k $CG)"
aside "$S2" "$G2"

echo "2. re-ingest after one file changed"
# The prepare step syncs, so no tool pays for writing back what another left dirty.
TOUCH="sh -c 'date +%N >> $T/$ONE && sync'"
readarray -t r < <(hf reingest "$TOUCH" \
    "$M --store $S ingest docs/t/ $T" \
    "sh -c '$gitc add -A && $gitc commit -qm x'" \
    "ostree --repo=$O commit -b main --tree=dir=$T --no-xattrs")
m=${r[0]#* }; g=${r[1]#* }; o=${r[2]#* }
sh -c "$TOUCH"; CM=$(calls "$M" --store "$S" ingest docs/t/ "$T"); sh -c "$TOUCH"; CG=$(calls sh -c "$gitc add -A && $gitc commit -qm x")
row "re-ingest after one change (median)" "$(fmt $m)" "git $(fmt $g)" "$(ratio $m $g)" "<= 2" "$(le "$m/$g" 2)" "$(k $CM) / $(k $CG)"
row "re-ingest after one change (median)" "$(fmt $m)" "ostree $(fmt $o)" "$(ratio $m $o)" "< 1" "$(le "$m/$o" 0.9999)"
date +%N >> "$T/$ONE"
W=$("$M" --store "$S" --json ingest docs/t/ "$T" | python3 -c 'import json,sys; w=json.load(sys.stdin)["written"]; print(w["trees"], w["blobs"])')
DEPTH=$(echo "$ONE" | tr -cd / | wc -c)
row "objects written by that re-ingest" "${W% *} trees, ${W#* } blob" "depth $DEPTH + 1 = $((DEPTH + 2)) trees" "-" "O(depth)" "$([ "${W% *}" -le $((DEPTH + 2)) ] && echo yes || echo no)"

echo "2b. ingest of a single file"
readarray -t r < <(hf single "$TOUCH" \
    "$M --store $S ingest docs/t/$ONE $T/$ONE" \
    "sh -c '$gitc add $T/$ONE && $gitc commit -qm x'")
m=${r[0]#* }; g=${r[1]#* }
sh -c "$TOUCH"; CM=$(calls "$M" --store "$S" ingest "docs/t/$ONE" "$T/$ONE"); sh -c "$TOUCH"; CG=$(calls sh -c "$gitc add $T/$ONE && $gitc commit -qm x")
row "ingest PATH FILE into the $BIG-file tree (median)" "$(fmt $m)" "git add FILE && commit $(fmt $g)" "$(ratio $m $g)" "< 1" "$(le "$m/$g" 0.9999)" "$(k $CM) / $(k $CG)"

echo "3. latest/ refresh after a one-file change"
date +%N >> "$T/$ONE"
if command -v strace >/dev/null; then
    # Only calls on the checkouts count (objects are linked into the store with linkat too).
    strace -f -qq -e trace=link,linkat,unlink,unlinkat,mkdir,mkdirat -o "$WORK/strace.txt" "$M" --store "$S" ingest "docs/t/$ONE" "$T/$ONE" >/dev/null
    OPS=$(grep -v resumed "$WORK/strace.txt" | grep -cE '"[^"]*/(latest|spare)/' || true)
    row "latest/ refresh: link/unlink/mkdir calls for one changed file" "$OPS" "tree of $BIG files" "-" "O(changed paths)" "$([ "$OPS" -le 20 ] && echo yes || echo no)"
fi

echo "4. build of a $SMALL-file environment"
P="$WORK/project"; aside "$P"; mkdir -p "$P"
"$M" --store "$S" -q ingest docs/small/ "$T10"
printf '[mounts.docs]\nselect = ["docs/small/"]\n' > "$P/memorix.toml"
# The first build: a project never built, and a Store that has never planned this selection
# (no derivation, environment or remembered plan: SUMMARY.md is computed from every file).
COLD="$WORK/settle.sh $P $P/.memory $P/.memorix $P/memorix.lock $S/derivations $S/environments $S/index/plans $WORK/cp-out"
readarray -t r < <(hf firstbuild "$COLD" "$M --store $S -C $P build" "cp -r $T10 $WORK/cp-out")
m=${r[0]#* }; c=${r[1]#* }
sh -c "$COLD"; CM=$(calls "$M" --store "$S" -C "$P" build); CC=$(calls cp -r "$T10" "$WORK/cp-out")
row "first build of a $SMALL-file environment (median)" "$(fmt $m)" "cp -r $(fmt $c)" "$(ratio $m $c)" "<= 1.5" "$(le "$m/$c" 1.5)" "$(k $CM) / $(k $CC)"
WARM="$WORK/settle.sh $P $P/.memory $P/.memorix $WORK/cp-out"
readarray -t r < <(hf build "$WARM" "$M --store $S -C $P build" "cp -r $T10 $WORK/cp-out")
m=${r[0]#* }; c=${r[1]#* }
sh -c "$WARM"; CM=$(calls "$M" --store "$S" -C "$P" build); CC=$(calls cp -r "$T10" "$WORK/cp-out")
row "build of a $SMALL-file environment, warm store (median)" "$(fmt $m)" "cp -r $(fmt $c)" "$(ratio $m $c)" "<= 1.5" "$(le "$m/$c" 1.5)" "$(k $CM) / $(k $CC)"
"$M" --store "$S" -C "$P" -q build
N=$(hyperfine -N --style none --warmup 5 --runs 50 --export-json "$WORK/noop.json" "$M --store $S -C $P build" >/dev/null && python3 -c "import json,statistics; print(f\"{statistics.median(json.load(open('$WORK/noop.json'))['results'][0]['times'])*1000:.1f}\")")
row "no-op build, $SMALL-file environment (median)" "$N ms" "-" "-" "< 20 ms" "$(le "$N" 20)" "$(k "$(calls "$M" --store "$S" -C "$P" build)")"
for c in "lock --check" status; do
    O_=$(strace_count openat "$M" --store "$S" -C "$P" $c)
    row "\`$c\` on the unchanged $SMALL-file project: openat calls" "$O_" "-" "-" "< 500" "$([ "$O_" -lt 500 ] && echo yes || echo no)"
done
ONE10=$(cd "$T10" && find . -name page1.md | head -1 | sed 's|^\./||')
# The first update after a project's first build (whose detached fill of the kept tree is
# waited for: it holds the project lock), then a later one.
sh -c "$WARM"; "$M" --store "$S" -C "$P" -q build; flock "$P/.memorix/lock" true
date +%N >> "$T10/$ONE10"; "$M" --store "$S" -q ingest docs/small/ "$T10"
D=$(strace_count dirops "$M" --store "$S" -C "$P" update)
row "first one-file update after the first build ($SMALL files): directory operations" "$D" "-" "-" "< 1000" "$([ "$D" -lt 1000 ] && echo yes || echo no)"
date +%N >> "$T10/$ONE10"; "$M" --store "$S" -q ingest docs/small/ "$T10"
U=$("$M" --store "$S" -C "$P" --json update | python3 -c 'import json,sys; a=json.load(sys.stdin)["activated"]; print(a["files"], a["reused"])')
row "one-file update re-activation: files copied" "$(( ${U% *} - ${U#* } )) of ${U% *}" "-" "-" "O(changed)" "$([ $(( ${U% *} - ${U#* } )) -le 1 ] && echo yes || echo no)"
date +%N >> "$T10/$ONE10"; "$M" --store "$S" -q ingest docs/small/ "$T10"
D=$(strace_count dirops "$M" --store "$S" -C "$P" update)
row "later one-file update of the $SMALL-file environment: directory operations" "$D" "-" "-" "< 1000" "$([ "$D" -lt 1000 ] && echo yes || echo no)"

echo "5. peak memory"
aside "$WORK/store-rss"
RSS=$( { /usr/bin/time -f %M "$M" --store "$WORK/store-rss" ingest docs/t/ "$T" >/dev/null; } 2>&1 | tail -1)
row "peak RSS, ingest of $BIG files" "$((RSS / 1024)) MB" "-" "-" "< 200 MB" "$([ "$RSS" -lt 204800 ] && echo yes || echo no)"
HUGE_MB=2048; [ "$QUICK" = 1 ] && HUGE_MB=64
dd if=/dev/urandom of="$WORK/huge.bin" bs=1M count=$HUGE_MB status=none
RSS=$( { /usr/bin/time -f %M "$M" --store "$WORK/store-rss" ingest docs/huge.bin "$WORK/huge.bin" >/dev/null; } 2>&1 | tail -1)
row "peak RSS, ingest of one $HUGE_MB MiB file" "$((RSS / 1024)) MB" "-" "-" "< 64 MB" "$([ "$RSS" -lt 65536 ] && echo yes || echo no)"
rm -f "$WORK/huge.bin"

echo "6. store overhead"
UNIQUE=$(find "$T" -type f -print0 | xargs -0 sha256sum | sort -u -k1,1 | awk '{print $2}' | xargs stat -c %s | awk '{s+=$1} END {print s}')
aside "$WORK/store-o"; "$M" --store "$WORK/store-o" -q ingest docs/t/ "$T"
APPARENT=$(du -sb --apparent-size "$WORK/store-o"/{blobs,trees,generations,refs} | awk '{s+=$1} END {print s}')
ALLOC=$(du -sB1 "$WORK/store-o"/{blobs,trees,generations,refs} | awk '{s+=$1} END {print s}')
row "store bytes / unique content bytes ($BIG files)" "$(ratio $APPARENT $UNIQUE) (apparent), $(ratio $ALLOC $UNIQUE) (allocated)" "-" "-" "<= 1.10" "$(le "$APPARENT/$UNIQUE" 1.10)"
# Five versions of a docs set sharing 90% of their files.
V="$WORK/versions"; aside "$V" "$WORK/store-v"; cp -r "$T10" "$V"
"$M" --store "$WORK/store-v" -q ingest docs/lib/ "$V" --version 1.0.0
BEFORE=$(du -sb --apparent-size "$WORK/store-v"/blobs | cut -f1); CHANGED=0
for v in 2 3 4 5; do
    while read -r f; do printf 'version %s\n' "$v" >> "$f"; CHANGED=$((CHANGED + $(stat -c %s "$f"))); done < <(find "$V" -type f | sort | awk "NR % 10 == $v")
    "$M" --store "$WORK/store-v" -q ingest docs/lib/ "$V" --version "$v.0.0"
done
AFTER=$(du -sb --apparent-size "$WORK/store-v"/blobs | cut -f1)
row "4 more versions sharing 90%: blob bytes added / changed bytes" "$(ratio $((AFTER - BEFORE)) $CHANGED)" "-" "-" "~1" "$(le "$((AFTER - BEFORE))/$CHANGED" 1.05)"

echo "7. instruction counts (callgrind)"
if command -v valgrind >/dev/null; then
    Ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/refs:/ {gsub(",", "", $NF); print $NF}'; }
    row "instructions: no-op build ($SMALL files)" "$(Ir "$M" --store "$S" -C "$P" build)" "-" "-" "(regression figure)" "-"
    date +%N >> "$T10/$ONE10"
    row "instructions: ingest PATH FILE ($SMALL-file tree)" "$(Ir "$M" --store "$S" ingest "docs/small/$ONE10" "$T10/$ONE10")" "-" "-" "(regression figure)" "-"
fi

echo "8. scaling: tree size x history"
if [ "$QUICK" = 1 ]; then SIZES=300,1000; GENS=1,10; else SIZES=1000,10000,100000; GENS=1,10,100; fi
python3 benches/scale.py "$M" "$WORK" "$WORK/scale.md" "$SIZES" "$GENS" "$RUNS"

OUT=benches/results.md
[ "$QUICK" = 1 ] && OUT="$WORK/results.md"
{
    echo "# memorix benchmarks"
    echo
    echo "\`benches/run.sh\` on $(nproc) cores, $(date -u +%F); $RUNS runs per timing (min and median kept, the median shown)."
    echo "Trees: $BIG and $SMALL files from benches/gen_tree.py (4-6 levels, 1-50 KiB)."
    echo
    echo "System calls (\`strace -c -f\`, one run each, memorix / peer) stand beside the times:"
    echo "they do not move with the machine's load."
    echo
    echo "| measurement | memorix | peer | ratio | target | met | system calls |"
    echo "|---|---|---|---|---|---|---|"
    awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7}' "$ROWS"
    echo
    echo "## Scaling: tree size x history"
    echo
    echo "\`benches/scale.py\`: each command's median time and its system calls (\`strace -c -f\`, one run):"
    echo "all of them, \`openat\`, and directory operations (mkdir, link, unlink, rename, chmod, rmdir)."
    echo "History is made of one-file ingests; a command that costs what it shows stays flat down a column."
    echo
    cat "$WORK/scale.md"
} > "$OUT"
cat "$OUT"
