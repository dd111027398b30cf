//! Where a JSON or YAML document's keys are: the document's mappings and lists as a tree of keys,
//! each with the line and column it is written at, read by `serde_saphyr` (JSON is read as the
//! YAML it is). A catalog's values come from `serde_json` (or `serde_saphyr` for YAML) as before;
//! this tree is read beside them only to say where an entry is, so a tool is located by the
//! parser's position of its own key — not by searching the text for something that looks like it.

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_saphyr::Spanned;
use std::{collections::HashMap, fmt};

/// How many levels of keys are kept: the deepest key a tool is placed by is on the fifth
/// (`result.tools[i].function.name`), an operation read through a `$ref` on the fourth
/// (`components.pathItems.A.get`); the sixth leaves a level for a pointer elsewhere. Deeper
/// values are read and their keys not kept (a specification's schemas are mostly deeper).
const KEPT_DEPTH: usize = 6;

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

/// A document's keys with their places, to [`KEPT_DEPTH`] levels. A mapping's keys are hashed: a
/// lookup per tool must not walk a mapping of a million keys.
#[derive(Debug)]
pub(crate) enum KeyTree {
    Map(HashMap<String, (Place, KeyTree)>),
    List(Vec<KeyTree>),
    /// A scalar, or a value below the kept levels.
    Leaf,
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
    /// The tree of `text`, JSON or YAML, or why the reader refused it: keys up to 65,536
    /// characters are read, quotes included (YAML's own limit is 1,024; the reader buffers a
    /// key's text while it looks for the `:`, so not without bound), 64 levels deep — the reader's default, which keeps its
    /// recursion within a worker thread's stack (100 levels overflow a 2 MiB stack), where
    /// `serde_json` reads 128. Of a key written twice (JSON allows it) the last is kept, as
    /// `serde_json` keeps it.
    pub(crate) fn read(text: &str) -> Result<Self, String> {
        let mut options = yaml_options(text.len());
        options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
        if let Some(budget) = options.budget.as_mut() {
            budget.simple_key_max_lookahead = budget.simple_key_max_lookahead.max(64 * 1024);
        }
        serde_saphyr::from_str_with_options::<Self>(text, options).map_err(|e| e.to_string())
    }

    fn child(&self, step: &Step) -> Option<&Self> {
        match (self, step) {
            (Self::Map(entries), Step::Key(k)) => entries.get(k).map(|e| &e.1),
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
                .get(last)
                .map(|e| e.0)
                .filter(|place| place.line > 0),
            _ => None,
        }
    }
}

/// A mapping key as its text, read the way `serde_json` reads a key into a `Value` (as a string:
/// YAML's `1.0:` is the key `1.0`, not the number 1), so both name the same entries.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(KeyText)
    }
}

impl<'de> Deserialize<'de> for KeyTree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Level(0).deserialize(d)
    }
}

/// A value at this depth of the document: its keys kept above [`KEPT_DEPTH`], read past below.
#[derive(Clone, Copy)]
struct Level(usize);

impl<'de> DeserializeSeed<'de> for Level {
    type Value = KeyTree;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<KeyTree, D::Error> {
        if self.0 >= KEPT_DEPTH {
            IgnoredAny::deserialize(d)?;
            return Ok(KeyTree::Leaf);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Level {
    type Value = KeyTree;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON or YAML value")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_unit<E: de::Error>(self) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_none<E: de::Error>(self) -> Result<KeyTree, E> {
        Ok(KeyTree::Leaf)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<KeyTree, A::Error> {
        let mut entries = HashMap::new();
        while let Some(key) = m.next_key::<Spanned<KeyText>>()? {
            let place = Place {
                line: u32::try_from(key.referenced.line()).unwrap_or(0),
                column: u32::try_from(key.referenced.column()).unwrap_or(0),
            };
            let value = m.next_value_seed(Level(self.0 + 1))?;
            // The last of a key written twice, as serde_json keeps it.
            entries.insert(key.value.0, (place, value));
        }
        Ok(KeyTree::Map(entries))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<KeyTree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = s.next_element_seed(Level(self.0 + 1))? {
            items.push(item);
        }
        Ok(KeyTree::List(items))
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
        let tree = KeyTree::read(json).unwrap_or_else(|e| panic!("{e}"));
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
        let tree = KeyTree::read(yaml).unwrap_or_else(|e| panic!("{e}"));
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
        let tree = KeyTree::read(json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(line(&tree, &[Step::Index(0), key("name")]), Some(2));
        assert_eq!(line(&tree, &[Step::Index(1), key("name")]), Some(4));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(json).expect("JSON")[1]["name"],
            "y"
        );
        // What JSON writes and YAML reads differently still reads: escaped surrogate pairs,
        // `\/`, tabs between tokens, keys YAML would take as syntax.
        let json = "{\"a\":\t\"\\ud83d\\ude80 \\/ go\", \"#b\": 1, \"- c\": 2, \"*d\": 3, \"&e\": 4, \"? f\": {\"g\": 5}}";
        let tree = KeyTree::read(json).unwrap_or_else(|e| panic!("{e}"));
        for k in ["a", "#b", "- c", "*d", "&e", "? f"] {
            assert_eq!(line(&tree, &[key(k)]), Some(1), "{k}");
        }
        assert_eq!(line(&tree, &[key("? f"), key("g")]), Some(1));
        // A minified document (one line, as tools/list dumps often are) places its keys by
        // column, in characters: `é` and `ü` are one each (by hand: the second `name` key's
        // quote is the 34th character, its 36th byte).
        let json = "[{\"name\":\"é\"},{\"description\":\"ü\",\"name\":\"b\"}]";
        let tree = KeyTree::read(json).unwrap_or_else(|e| panic!("{e}"));
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
        // A YAML key is its text, as serde_json reads it into a `Value` (`1.0`, not `1`; `0x10`,
        // not `16`).
        let yaml = "v:\n  1.0: a\n  0x10: b\n";
        let tree = KeyTree::read(yaml).unwrap_or_else(|e| panic!("{e}"));
        let value: serde_json::Value = serde_saphyr::from_str(yaml).unwrap_or_default();
        for (k, at) in [("1.0", 2), ("0x10", 3)] {
            assert!(value["v"].get(k).is_some(), "{value}");
            assert_eq!(line(&tree, &[key("v"), key(k)]), Some(at), "{k}");
        }
        // Not a document at all.
        assert!(KeyTree::read("{\"a\": ").is_err());
    }
}
