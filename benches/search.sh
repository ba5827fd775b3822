#!/usr/bin/env bash
# Search benchmark: what the index adds to a first build, and how long a warm query takes, on
# a generated docs tree of N files (default 24,000, the size of pydantic-ai's delivered docs)
# split over 10 mounts. Writes benches/search-results.md.
#
#   benches/search.sh [N]
#
# Goals (issue 39): a warm query under 50 ms; the index adds at most 30% to a first build.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-24000}
WORK=${MEMORIX_BENCH_DIR:-/tmp/memorix-bench}/search$N
M=${MEMORIX_BIN:-$(pwd)/target/release/memorix}
[ -n "${MEMORIX_BIN:-}" ] || cargo build --release --locked -q
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
export NO_COLOR=1

TREE=$WORK/tree
[ -d "$TREE" ] || python3 benches/gen_tree.py "$TREE" "$N" 3
rm -rf "$WORK/store" "$WORK/project"
mkdir -p "$WORK/project"
export MEMORIX_STORE=$WORK/store
cd "$WORK/project"
"$M" ingest docs/bench/ "$TREE" >/dev/null 2>&1
{
    for d in "$TREE"/*/; do
        d=$(basename "$d")
        printf '[mounts."libs/%s"]\nselect = ["docs/bench/%s/"]\n\n' "$d" "$d"
    done
} > memorix.toml
files=$(find "$TREE" -type f | wc -l)
bytes=$(du -sb "$TREE" | cut -f1)

secs() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1; python3 -c "import time; print(f'{time.time() - $s:.2f}')"; }
# A first build: lock, derivations with their summaries and search indexes, .memory/.
build=$(secs "$M" build)
index_bytes=$(find "$MEMORIX_STORE/derivations" -name search-v1.tar -exec du -cb {} + | tail -1 | cut -f1)
# The indexes alone: removed, then made again by the first search.
find "$MEMORIX_STORE/derivations" -name search-v1.tar -delete
index=$(secs "$M" search "retry backoff")
hyperfine -N -w 3 -r 20 --export-json "$WORK/query.json" "$M search 'retry backoff'" \
    "$M search connection_pool --limit 20" "$M search 'tls certificate' --json" >/dev/null 2>&1
ms=$(python3 -c "
import json; r = json.load(open('$WORK/query.json'))['results']
print(' / '.join(f\"{x['mean'] * 1000:.1f}\" for x in r))")

cd - >/dev/null
cat > benches/search-results.md <<MD
# Search benchmark

\`benches/search.sh $N\` on $(nproc) cores: $files generated docs files, $((bytes / 1048576)) MiB, in
10 mounts (one derivation and one index each).

| what | measured | goal |
| --- | --- | --- |
| first build (ingested tree, lock, derivations, summaries, indexes, .memory/) | $build s | |
| the indexes alone (built again by a search after removing them) | $index s | at most 30% of the rest of a first build |
| index size (10 artifacts) | $((index_bytes / 1048576)) MiB | |
| warm query, whole process (\`search 'retry backoff'\` / \`search connection_pool --limit 20\` / \`search 'tls certificate' --json\`), mean of 20 | $ms ms | under 50 ms |
MD
cat benches/search-results.md
