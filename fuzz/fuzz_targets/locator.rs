//! `Locator::parse`, `StorePath::new` and `Name::new` on arbitrary text: a locator that parses
//! shows and parses back to itself and never holds a component that could leave its tree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memorix::model::{Locator, Name, StorePath};
use memorix_fuzz::render;

/// The components a validated path can never hold
/// (book: design/locators.md#what-a-path-may-hold).
fn assert_safe(path: &str) {
    assert!(!path.contains(['\0', '\\']), "{path:?}");
    if !path.is_empty() {
        assert!(path.split('/').all(|c| !matches!(c, "" | "." | "..")), "{path:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Locator::parse(text) {
        Ok(loc) => {
            assert_safe(loc.path.as_str());
            assert!(loc.subtree || !loc.path.is_root(), "a file locator names a file");
            let shown = loc.to_string();
            let again = Locator::parse(&shown).unwrap_or_else(|e| panic!("{text:?} shows as {shown:?}: {e}"));
            assert_eq!(again, loc, "{text:?} shows as {shown:?}");
            assert_eq!(again.to_string(), shown);
            match Locator::parse_place(text) {
                Ok(place) => {
                    assert!(loc.selector.is_none());
                    assert_eq!(place, loc);
                }
                Err(e) => {
                    assert!(loc.selector.is_some());
                    render(&e);
                }
            }
        }
        Err(e) => {
            let span = e.span_in(0);
            assert!(span.start <= span.end && span.end <= text.len(), "span {span:?} outside {text:?}");
            assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
            assert!(Locator::parse_place(text).is_err());
            render(&e);
        }
    }
    if let Ok(path) = StorePath::new(text) {
        assert_safe(path.as_str());
        assert!(path.starts_with(&StorePath::root()) && path.starts_with(&path));
        assert_eq!(path.components().count(), if text.is_empty() { 0 } else { text.split('/').count() });
    }
    if let Ok(name) = Name::new(text) {
        assert!(!name.as_str().contains('/'));
        assert_eq!(StorePath::new(text).map(|p| p.names()), Ok(vec![name]));
    }
});
