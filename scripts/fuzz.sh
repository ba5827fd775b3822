#!/usr/bin/env bash
# Builds every cargo-fuzz target in fuzz/ and runs each for SECONDS (default 60), then prints
# one line per target: `locator: 1234567 execs in 60 s, 0 crashes`. Not part of CI. Names
# after SECONDS run only those targets: `scripts/fuzz.sh 60 pins_pnpm pins_yarn`.
#
# cargo-fuzz needs nightly features; on a stable toolchain RUSTC_BOOTSTRAP=1 unlocks them
# (book: design/reliability.md#bounds). Install it with `cargo install cargo-fuzz`.
#
# Each target grows its own corpus in fuzz/corpus/<target>/ (ignored by git), starting from
# the hand-written seeds in fuzz/seeds/<target>/. With MEMORIX_CORPUS (or ../shared/corpus
# beside the repository), matching files from its lockfiles/ are copied to a temp dir and
# read as an extra corpus; nothing is written back there. A crash leaves its input in
# fuzz/artifacts/<target>/ and makes the script exit 1.
set -euo pipefail

seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS [TARGET...]]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2; exit 2; }

targets=(locator manifest lock tree generation records
         pins_cargo pins_requirements pins_uv pins_poetry pins_npm
         pins_pnpm pins_yarn pins_pipfile pins_pylock pins_pdm pins_pyproject pins_conda
         pins_gomod pins_composer pins_gemfile pins_detect names)
if (($# > 1)); then
    targets=("${@:2}")
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/memorix-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Debug assertions on, so the library's own debug_assert!s and overflow checks fire too.
cargo fuzz build --debug-assertions

shared="${MEMORIX_CORPUS:-$root/../shared/corpus}"

# Copies the shared corpus's lockfiles named like $2... into $1 (flat, numbered names).
extra_corpus() {
    local dest="$1"; shift
    mkdir -p "$dest"
    [[ -d "$shared/lockfiles" ]] || return 0
    local args=() n=0 f
    for pattern in "$@"; do args+=(-o -name "$pattern"); done
    while IFS= read -r -d '' f; do
        n=$((n + 1))
        cp "$f" "$dest/$n"
    done < <(find "$shared/lockfiles" -type f \( "${args[@]:1}" \) -print0)
}

failed=0
for t in "${targets[@]}"; do
    case "$t" in
        pins_cargo) patterns=('Cargo.lock*') ;;
        pins_requirements) patterns=('*.txt' '*.in') ;;
        pins_uv) patterns=('uv.lock') ;;
        pins_poetry) patterns=('poetry.lock') ;;
        pins_npm) patterns=('package-lock.json') ;;
        pins_pnpm) patterns=('pnpm-lock.yaml') ;;
        pins_yarn) patterns=('yarn.lock') ;;
        pins_pipfile) patterns=('Pipfile.lock') ;;
        pins_pylock) patterns=('pylock*.toml') ;;
        pins_pdm) patterns=('pdm.lock') ;;
        pins_pyproject) patterns=('pyproject.toml') ;;
        pins_conda) patterns=('environment*.yml') ;;
        pins_composer) patterns=('composer.lock') ;;
        pins_gemfile) patterns=('Gemfile.lock') ;;
        manifest | lock) patterns=('*.toml') ;;
        *) patterns=() ;;
    esac
    dirs=("fuzz/corpus/$t" "fuzz/seeds/$t")
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    if ((${#patterns[@]})); then
        extra_corpus "$work/extra-$t" "${patterns[@]}"
        dirs+=("$work/extra-$t")
    fi
    before="$(find "fuzz/artifacts/$t" -type f | wc -l)"
    log="$work/$t.log"
    start="$(date +%s)"
    status=0
    cargo fuzz run --debug-assertions "$t" "${dirs[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 >"$log" 2>&1 || status=$?
    elapsed=$(($(date +%s) - start))
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    crashes=$(($(find "fuzz/artifacts/$t" -type f | wc -l) - before))
    echo "$t: ${execs:-0} execs in $elapsed s, $crashes crashes"
    if ((status != 0 || crashes > 0)); then
        failed=1
        grep -E '^(==[0-9]+==|thread .* panicked|SUMMARY|artifact_prefix|Test unit written)' "$log" | head -8 | sed 's/^/  /'
        cp "$log" "fuzz/artifacts/$t/last-run.log"
        echo "  full log: fuzz/artifacts/$t/last-run.log"
    fi
done
exit "$failed"
