#!/usr/bin/env bash
# Fetching a real project's pinned dependencies from the real registries, side by side in one
# run, each from empty caches:
#
#   memorix add --deps all + build   docs of every pinned package fetched, verified, unpacked,
#                                    ingested into an empty Store and delivered into .memory/
#   cargo fetch --locked             every .crate downloaded into an empty CARGO_HOME
#   npm ci --ignore-scripts          every package downloaded and unpacked into node_modules,
#                                    with an empty npm cache
#
#   benches/fetch.sh CARGO_PROJECT NPM_PROJECT [RUNS]
#
# CARGO_PROJECT is a checkout with Cargo.toml and Cargo.lock (its workspace members too, for
# cargo); NPM_PROJECT has package.json and package-lock.json. Only the lockfile is given to
# memorix. Needs the network (crates.io, the npm registry) and hyperfine. Writes
# benches/fetch-results.md; ratios (memorix / peer) are what to read.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
CARGO_PROJECT=$(realpath "${1:?usage: benches/fetch.sh CARGO_PROJECT NPM_PROJECT [RUNS]}")
NPM_PROJECT=$(realpath "${2:?usage: benches/fetch.sh CARGO_PROJECT NPM_PROJECT [RUNS]}")
RUNS=${3:-5}
WORK=${MEMORIX_BENCH_DIR:-/tmp/memorix-fetch-bench}
rm -rf "$WORK" && mkdir -p "$WORK"

if ! command -v hyperfine >/dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y -q hyperfine >/dev/null 2>&1 \
        || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q hyperfine >/dev/null; }
fi
cargo build --release --locked -q
M="$REPO/target/release/memorix"
export NO_COLOR=1

# A memorix project holding only LOCKFILE, as `add --deps all` sees a fresh clone.
memorix_project() {
    local dir=$1 lockfile=$2
    mkdir -p "$dir"
    cp "$lockfile" "$dir/"
    printf '[project]\nname = "bench"\n\n[pins]\nfiles = ["%s"]\n' "$(basename "$lockfile")" > "$dir/memorix.toml"
    cp "$dir/memorix.toml" "$dir/memorix.toml.orig"
}
memorix_project "$WORK/m-cargo" "$CARGO_PROJECT/Cargo.lock"
memorix_project "$WORK/m-npm" "$NPM_PROJECT/package-lock.json"
cp -r "$NPM_PROJECT" "$WORK/npm"
rm -rf "$WORK/npm/node_modules"
cp -r "$CARGO_PROJECT" "$WORK/cargo"

# A clean slate before each run: no Store, no memory, the manifest as it was; an empty
# CARGO_HOME; an empty npm cache and no node_modules.
reset_m="rm -rf $WORK/store $WORK/m-cargo/.memory $WORK/m-cargo/.memorix $WORK/m-cargo/memorix.lock $WORK/m-npm/.memory $WORK/m-npm/.memorix $WORK/m-npm/memorix.lock; cp $WORK/m-cargo/memorix.toml.orig $WORK/m-cargo/memorix.toml; cp $WORK/m-npm/memorix.toml.orig $WORK/m-npm/memorix.toml"
reset_c="rm -rf $WORK/cargo-home"
reset_n="rm -rf $WORK/npm-cache $WORK/npm/node_modules"

mcmd() { echo "sh -c '$M --store $WORK/store -C $WORK/$1 add --deps all >/dev/null 2>&1; $M --store $WORK/store -C $WORK/$1 build >/dev/null'"; }
hyperfine --style basic --runs "$RUNS" --export-json "$WORK/cargo.json" \
    --prepare "$reset_m" -n "memorix add --deps all + build (Cargo.lock)" "$(mcmd m-cargo)" \
    --prepare "$reset_c" -n "cargo fetch --locked" \
    "sh -c 'cd $WORK/cargo && CARGO_HOME=$WORK/cargo-home cargo fetch --locked -q'"
hyperfine --style basic --runs "$RUNS" --export-json "$WORK/npm.json" \
    --prepare "$reset_m" -n "memorix add --deps all + build (package-lock.json)" "$(mcmd m-npm)" \
    --prepare "$reset_n" -n "npm ci --ignore-scripts" \
    "sh -c 'cd $WORK/npm && npm ci --ignore-scripts --no-audit --no-fund --cache $WORK/npm-cache >/dev/null 2>&1'"

python3 - "$WORK" "$CARGO_PROJECT" "$NPM_PROJECT" > benches/fetch-results.md <<'PY'
import json, statistics, subprocess, sys
work, cargo_project, npm_project = sys.argv[1:]
def commit(d):
    try:
        return subprocess.run(["git", "-C", d, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "-"
    except OSError:
        return "-"
print("# Fetch benchmark: memorix against cargo fetch and npm ci\n")
print(f"`benches/fetch.sh` on one real Cargo.lock ({cargo_project.rsplit('/', 1)[-1]}) and one real "
      f"package-lock.json ({npm_project.rsplit('/', 1)[-1]}), every run from empty caches; medians of "
      "whole-process wall times, in seconds.\n")
print("| lockfile | memorix | peer | peer median | memorix median | memorix / peer |")
print("|---|---|---|---|---|---|")
for name, peer in [("cargo", "cargo fetch --locked"), ("npm", "npm ci --ignore-scripts")]:
    results = json.load(open(f"{work}/{name}.json"))["results"]
    m, p = (statistics.median(r["times"]) for r in results)
    lock = "Cargo.lock" if name == "cargo" else "package-lock.json"
    print(f"| {lock} | add --deps all + build | {peer} | {p:.2f} | {m:.2f} | {m / p:.2f} |")
PY
cat benches/fetch-results.md
