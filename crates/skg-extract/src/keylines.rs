//! Where a JSON or YAML document's keys are: the document's mappings and lists as a tree of keys,
//! each with the line it is written on, read by `serde_saphyr` (JSON is read as the YAML it is).
//! A catalog's values come from `serde_json` (or `serde_saphyr` for YAML) as before; this tree is
//! read beside them only to say where an entry is, so a tool is located by the parser's position
//! of its own key — not by searching the text for something that looks like it.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// One step into a document: a mapping's key or a list's position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// Where a key is written: its line and column (1-based; the column counts characters, as
/// SARIF's `unicodeCodePoints`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

/// A document's keys with their places; scalars are not kept.
#[derive(Debug)]
pub(crate) enum KeyTree {
    Map(Vec<(String, Place, KeyTree)>),
    List(Vec<KeyTree>),
    Scalar,
}

/// `serde_saphyr`'s options for a document of `len` bytes: a node budget that fits the file's
/// size (the default stops at a quarter of a million nodes, which real OpenAPI specs pass).
pub(crate) fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = budget.max_nodes.max(len);
    budget.max_events = budget.max_events.max(len.saturating_mul(4));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

impl KeyTree {
    /// The tree of `text`, JSON or YAML; `None` when the reader refuses it (a JSON document YAML
    /// does not read — a key over YAML's 1,024 characters, say: its entries' lines stay unknown).
    /// A key written twice is kept twice (JSON allows it); [`Self::key_place`] takes the last, the
    /// one `serde_json` keeps.
    pub(crate) fn read(text: &str) -> Option<Self> {
        let mut options = yaml_options(text.len());
        options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
        serde_saphyr::from_str_with_options::<Self>(text, options).ok()
    }

    fn child(&self, step: &Step) -> Option<&Self> {
        match (self, step) {
            (Self::Map(entries), Step::Key(k)) => entries
                .iter()
                .rev()
                .find(|(key, ..)| key == k)
                .map(|e| &e.2),
            (Self::List(items), Step::Index(i)) => items.get(*i),
            _ => None,
        }
    }

    /// Where the key `path` ends with is written (`None` when the path is not in the document, or
    /// ends with a list position: an item has no key).
    pub(crate) fn key_place(&self, path: &[Step]) -> Option<Place> {
        let (Step::Key(last), parent) = path.split_last()? else {
            return None;
        };
        let mut at = self;
        for step in parent {
            at = at.child(step)?;
        }
        match at {
            Self::Map(entries) => entries
                .iter()
                .rev()
                .find(|(key, ..)| key == last)
                .map(|e| e.1)
                .filter(|place| place.line > 0),
            _ => None,
        }
    }
}

/// A mapping key as text: a scalar as written (`200:` in a YAML spec is the key `200`); a key
/// that is itself a mapping or a list (YAML allows it) is read and kept as empty text.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<KeyText, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(KeyText(String::new()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<KeyText, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(KeyText(String::new()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for KeyTree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyTree;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON or YAML value")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_none<E: de::Error>(self) -> Result<KeyTree, E> {
                Ok(KeyTree::Scalar)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<KeyTree, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = m.next_key::<Spanned<KeyText>>()? {
                    let place = Place {
                        line: u32::try_from(key.referenced.line()).unwrap_or(0),
                        column: u32::try_from(key.referenced.column()).unwrap_or(0),
                    };
                    entries.push((key.value.0, place, m.next_value::<KeyTree>()?));
                }
                Ok(KeyTree::Map(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<KeyTree, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = s.next_element::<KeyTree>()? {
                    items.push(item);
                }
                Ok(KeyTree::List(items))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Step {
        Step::Key(k.to_owned())
    }

    fn line(tree: &KeyTree, path: &[Step]) -> Option<u32> {
        tree.key_place(path).map(|p| p.line)
    }

    #[test]
    fn keys_are_found_at_their_lines_in_json_and_yaml() {
        // Line by line, by hand: `paths` 2, `/a` 3, its `get` 4, `post` 5; `tools` 7, the second
        // tool's `name` 9 (its first key is on 8).
        let json = "{\n \"paths\": {\n  \"/a\": {\n   \"get\": {},\n   \"post\": {}}},\n \"x\": 1,\n \"tools\": [{\"name\": \"t\"},\n  {\"description\": \"d\",\n   \"name\": \"u\"}]\n}\n";
        let tree = KeyTree::read(json).expect("JSON reads");
        assert_eq!(line(&tree, &[key("paths"), key("/a"), key("get")]), Some(4));
        assert_eq!(
            line(&tree, &[key("paths"), key("/a"), key("post")]),
            Some(5)
        );
        assert_eq!(
            line(&tree, &[key("tools"), Step::Index(1), key("name")]),
            Some(9)
        );
        assert_eq!(
            line(&tree, &[key("tools"), Step::Index(0), key("name")]),
            Some(7)
        );
        // Not there, or a list position last: no line.
        assert_eq!(line(&tree, &[key("paths"), key("/b")]), None);
        assert_eq!(line(&tree, &[key("tools"), Step::Index(2)]), None);
        assert_eq!(line(&tree, &[]), None);

        let yaml = "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: ok\n    delete: {}\n";
        let tree = KeyTree::read(yaml).expect("YAML reads");
        assert_eq!(line(&tree, &[key("paths"), key("/a"), key("get")]), Some(4));
        assert_eq!(
            line(&tree, &[key("paths"), key("/a"), key("delete")]),
            Some(8)
        );
        assert_eq!(
            line(
                &tree,
                &[
                    key("paths"),
                    key("/a"),
                    key("get"),
                    key("responses"),
                    key("200")
                ]
            ),
            Some(6)
        );
    }

    #[test]
    fn a_key_is_the_key_the_json_parser_keeps() {
        // An escaped key is the key it decodes to; of a key written twice, the last (serde_json
        // keeps the last value); a key inside a string is no key.
        let json = "[\n{\"n\\u0061me\": \"a\", \"d\": \"\\\"name\\\": \\\"b\\\"\"},\n{\"name\": \"x\",\n \"name\": \"y\"}\n]";
        let tree = KeyTree::read(json).expect("JSON reads");
        assert_eq!(line(&tree, &[Step::Index(0), key("name")]), Some(2));
        assert_eq!(line(&tree, &[Step::Index(1), key("name")]), Some(4));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(json).expect("JSON")[1]["name"],
            "y"
        );
        // What JSON writes and YAML reads differently still reads: escaped surrogate pairs,
        // `\/`, tabs between tokens, keys YAML would take as syntax.
        let json = "{\"a\":\t\"\\ud83d\\ude80 \\/ go\", \"#b\": 1, \"- c\": 2, \"*d\": 3, \"&e\": 4, \"? f\": {\"g\": 5}}";
        let tree = KeyTree::read(json).expect("JSON reads");
        for k in ["a", "#b", "- c", "*d", "&e", "? f"] {
            assert_eq!(line(&tree, &[key(k)]), Some(1), "{k}");
        }
        assert_eq!(line(&tree, &[key("? f"), key("g")]), Some(1));
        // A minified document (one line, as tools/list dumps often are) places its keys by
        // column, in characters: `é` and `ü` are one each (by hand: the second `name` key's
        // quote is the 34th character, its 36th byte).
        let json = "[{\"name\":\"é\"},{\"description\":\"ü\",\"name\":\"b\"}]";
        let tree = KeyTree::read(json).expect("JSON reads");
        assert_eq!(
            tree.key_place(&[Step::Index(0), key("name")]),
            Some(Place { line: 1, column: 3 })
        );
        assert_eq!(
            tree.key_place(&[Step::Index(1), key("name")]),
            Some(Place {
                line: 1,
                column: 34
            })
        );
        // Not a document at all.
        assert!(KeyTree::read("{\"a\": ").is_none());
    }
}
