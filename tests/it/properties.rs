//! Properties of the encoders and parsers that everything else trusts (book: design/objects.md#canonical-encoding, book: design/locators.md#grammar,
//! book: design/versions.md#ordering):
//! objects round-trip through their canonical encoding, the encoding tells distinct trees apart,
//! a lock writes out byte-identically, and locators never admit a path that could leave its
//! tree. 256 cases each, so they stay cheap enough for every `cargo test`.

use std::path::Path;

use memorix::lock::{
    LockedEnvironment, LockedFetch, LockedLocator, LockedMount, LockedPin, LockedSource, Lockfile,
};
use memorix::model::{EntryKind, Id, IdPrefix, Kind, Locator, Name, Selector, StorePath, canonical};
use memorix::store::objects::{Entry, Tree};
use memorix::store::records::{Generation, GenerationMeta, VersionTag};
use proptest::prelude::*;

fn id() -> impl Strategy<Value = Id> {
    any::<[u8; 32]>().prop_map(Id::from_bytes)
}

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(Kind::ALL.to_vec())
}

fn entry_kind() -> impl Strategy<Value = EntryKind> {
    prop_oneof![Just(EntryKind::Blob), Just(EntryKind::Tree)]
}

/// A valid path component: any text but `/`, `\` and NUL, and not `.` or `..`.
fn name() -> impl Strategy<Value = String> {
    "[^/\\\\\u{0}]{1,10}".prop_filter("`.` and `..` are not names", |s| s != "." && s != "..")
}

/// A component without `@`, for the last component of a locator with no selector, where an
/// `@` would read as one.
fn name_without_at() -> impl Strategy<Value = String> {
    name().prop_filter("no @", |s| !s.contains('@'))
}

fn store_path(max: usize) -> impl Strategy<Value = StorePath> {
    prop::collection::vec(name(), 0..=max).prop_map(|c| StorePath::new(&c.join("/")).expect("valid names"))
}

fn tree() -> impl Strategy<Value = Tree> {
    prop::collection::btree_map(name(), (entry_kind(), id()), 0..8).prop_map(|m| {
        Tree::new(
            m.into_iter()
                .map(|(n, (kind, id))| Entry { name: Name::new(&n).expect("a valid name"), kind, id })
                .collect(),
        )
        .expect("names from a map are distinct")
    })
}

/// Trees over a tiny alphabet of JSON-significant characters and three ids, so that distinct
/// trees often differ by one character, one kind or one id.
fn close_tree() -> impl Strategy<Value = Tree> {
    let id = (0u8..3).prop_map(|b| Id::of_bytes(&[b]));
    prop::collection::btree_map("[a\",\\[\\]:]{1,3}", (entry_kind(), id), 0..4).prop_map(|m| {
        Tree::new(
            m.into_iter().map(|(n, (kind, id))| Entry { name: Name::new(&n).unwrap(), kind, id }).collect(),
        )
        .expect("names from a map are distinct")
    })
}

fn generation() -> impl Strategy<Value = Generation> {
    let tag = (any::<String>(), any::<String>(), store_path(3), id())
        .prop_map(|(library, version, path, tree)| VersionTag { library, version, path, tree });
    let meta = (prop::option::of(any::<String>()), any::<String>())
        .prop_map(|(message, time)| GenerationMeta { message, time });
    (kind(), 1..=u64::MAX, id(), prop::option::of(id()), prop::collection::vec(tag, 0..3), meta)
        .prop_map(|(kind, seq, root, parent, tags, meta)| Generation { kind, seq, root, parent, tags, meta })
}

fn selector() -> impl Strategy<Value = Selector> {
    prop_oneof![
        Just(Selector::Latest),
        Just(Selector::Pin),
        (1..=u64::MAX).prop_map(Selector::Generation),
        "(sha256:)?[0-9a-fA-F]{8,64}".prop_map(|s| Selector::Hash(IdPrefix::parse(&s).expect("a prefix"))),
        "[0-9][^/@\\\\\u{0}]{0,12}".prop_map(Selector::Version),
    ]
}

/// A locator as `Locator::parse` can produce one.
fn locator() -> impl Strategy<Value = Locator> {
    let parts = prop::collection::vec(name(), 0..4);
    (kind(), parts, name_without_at(), any::<bool>(), prop::option::of(selector())).prop_map(
        |(kind, mut parts, plain, subtree, selector)| {
            // A file locator without a selector cannot end in a component holding `@`: the
            // text after it would read as the selector.
            if let Some(last) = parts.last_mut().filter(|l| !subtree && selector.is_none() && l.contains('@'))
            {
                *last = plain;
            }
            let mut loc = Locator::new(kind, StorePath::new(&parts.join("/")).expect("valid names"), subtree);
            loc.selector = selector;
            loc
        },
    )
}

fn lockfile() -> impl Strategy<Value = Lockfile> {
    let pin = (any::<String>(), any::<String>(), any::<String>())
        .prop_map(|(library, file, version)| LockedPin { library, file, version });
    let fetched = (any::<String>(), any::<String>(), any::<String>())
        .prop_map(|(registry, artifact, hash)| LockedFetch { registry, artifact, hash });
    let locked_locator = (
        locator(),
        entry_kind(),
        id(),
        prop::option::of(id()),
        prop::option::of(any::<String>()),
        prop::option::of(pin),
        prop::option::of(fetched),
    )
        .prop_map(|(loc, kind, id, generation, version, pin, fetched)| LockedLocator {
            locator: loc.to_string(),
            kind,
            id,
            generation,
            version,
            pin,
            fetched,
        });
    let mount = (id(), id(), prop::collection::vec(locked_locator, 1..3))
        .prop_map(|(inputs, derivation, locators)| LockedMount { inputs, derivation, locators });
    let mount_path =
        store_path(3).prop_filter("a mount has a path", |p| !p.is_root()).prop_map(|p| p.to_string());
    let source_key =
        (locator(), prop::option::of("[0-9][0-9a-z.]{0,6}")).prop_map(|(loc, version)| match version {
            Some(v) => format!("{}@v{v}", loc.place()),
            None => loc.place(),
        });
    // A folder source, or a git one with its origin and commit.
    let git = prop::option::of(("file:///[a-z]{1,8}", "(branch|tag) [a-z]{1,6}", "[0-9a-f]{40}"));
    let source = (store_path(3), id(), git).prop_map(|(path, hash, git)| LockedSource {
        path: path.to_string(),
        hash,
        git: git.as_ref().map(|g| g.0.clone()),
        follows: git.as_ref().map(|g| g.1.clone()),
        commit: git.map(|g| g.2),
    });
    (
        id(),
        prop::collection::btree_map(mount_path, mount, 0..4),
        prop::collection::btree_map(source_key, source, 0..3),
    )
        .prop_map(|(env, mounts, sources)| Lockfile {
            version: 1,
            environment: LockedEnvironment { id: env },
            mounts,
            sources,
        })
}

/// A component that no locator path may hold, or a character no locator may hold.
#[derive(Clone, Debug)]
enum Bad {
    DotDot,
    Dot,
    Empty,
    Nul,
    Backslash,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn trees_round_trip_through_their_encoding(t in tree()) {
        let bytes = t.encode();
        let back = Tree::decode(&bytes).expect("an encoded tree decodes");
        prop_assert_eq!(&back, &t);
        prop_assert_eq!(back.encode(), bytes);
        prop_assert_eq!(back.id(), t.id());
    }

    #[test]
    fn generations_round_trip_through_their_encoding(g in generation()) {
        let bytes = canonical::encode(&g);
        let back = Generation::decode(&bytes, &g.id()).expect("an encoded generation decodes");
        prop_assert_eq!(canonical::encode(&back), bytes);
        prop_assert_eq!(back, g);
    }

    #[test]
    fn the_canonical_encoding_tells_distinct_trees_apart(a in close_tree(), b in close_tree()) {
        prop_assume!(a != b);
        prop_assert_ne!(a.encode(), b.encode());
        prop_assert_ne!(a.id(), b.id());
    }

    #[test]
    fn tree_entry_order_does_not_matter(t in tree(), seed in any::<u64>()) {
        let mut entries = t.entries().to_vec();
        let n = entries.len().max(1);
        entries.rotate_left(seed as usize % n);
        entries.reverse();
        let mut doubled = entries.clone();
        prop_assert_eq!(Tree::new(entries).expect("distinct names").encode(), t.encode());
        if let Some(e) = t.entries().first() {
            doubled.push(e.clone());
            prop_assert!(Tree::new(doubled).is_err(), "a duplicate name is refused");
        }
    }

    #[test]
    fn a_lock_writes_out_byte_identically(lock in lockfile()) {
        let text = lock.to_text();
        let back = Lockfile::parse(&text, Path::new("memorix.lock")).expect("a written lock parses");
        prop_assert_eq!(&back, &lock);
        prop_assert_eq!(back.to_text(), text);
    }

    #[test]
    fn locators_show_and_parse_back(loc in locator()) {
        let shown = loc.to_string();
        let back = Locator::parse(&shown).map_err(|e| TestCaseError::fail(format!("{shown:?}: {e}")))?;
        prop_assert_eq!(&back, &loc);
        prop_assert_eq!(back.to_string(), shown);
    }

    #[test]
    fn locators_never_hold_a_component_that_leaves_the_tree(
        kind in kind(),
        parts in prop::collection::vec(name(), 0..4),
        at in any::<prop::sample::Index>(),
        bad in prop_oneof![Just(Bad::DotDot), Just(Bad::Dot), Just(Bad::Empty), Just(Bad::Nul), Just(Bad::Backslash)],
        trailing in any::<bool>(),
        selector in prop::option::of(selector()),
    ) {
        let mut parts = parts;
        let i = at.index(parts.len() + 1);
        let mut trailing = trailing;
        match bad {
            Bad::DotDot => parts.insert(i, "..".into()),
            Bad::Dot => parts.insert(i, ".".into()),
            Bad::Empty => {
                // An empty last component is only a doubled slash with one more `/` after it.
                trailing |= i == parts.len();
                parts.insert(i, String::new());
            }
            Bad::Nul | Bad::Backslash => {
                let c = if matches!(bad, Bad::Nul) { '\0' } else { '\\' };
                if parts.is_empty() {
                    parts.push(String::new());
                }
                let j = i.min(parts.len() - 1);
                parts[j].push(c);
            }
        }
        let mut text = format!("{kind}/{}", parts.join("/"));
        if trailing {
            text.push('/');
        }
        if let Some(s) = &selector {
            text.push_str(&format!("@{s}"));
        }
        prop_assert!(Locator::parse(&text).is_err(), "{:?} was accepted", text);
    }

    #[test]
    fn whatever_parses_has_only_safe_components(body in "[a./@\\\\\u{0}]{0,12}", kind in kind()) {
        if let Ok(loc) = Locator::parse(&format!("{kind}/{body}")) {
            let path = loc.path.as_str();
            prop_assert!(!path.contains(['\0', '\\']));
            prop_assert!(path.is_empty() || path.split('/').all(|c| !matches!(c, "" | "." | "..")), "{:?}", path);
        }
    }

    #[test]
    fn store_path_prefixes_are_component_prefixes(
        a in prop::collection::vec(prop::sample::select(vec!["a", "ab", "b", "a.b", "@"]), 0..4),
        b in prop::collection::vec(prop::sample::select(vec!["a", "ab", "b", "a.b", "@"]), 0..4),
        prefix_of_a in any::<bool>(),
    ) {
        let b = if prefix_of_a { a[..b.len().min(a.len())].to_vec() } else { b };
        let (pa, pb) = (StorePath::new(&a.join("/")).unwrap(), StorePath::new(&b.join("/")).unwrap());
        let by_components = b.len() <= a.len() && a[..b.len()] == b[..];
        prop_assert_eq!(pa.starts_with(&pb), by_components, "{:?} starts with {:?}", a, b);
    }
}
