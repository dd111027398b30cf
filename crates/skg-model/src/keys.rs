//! Finding a skill by the keys people write in labels files, judged queries and examples.

use std::collections::HashMap;

use crate::{RegistryInput, Skill};

/// Skill positions by key: `<registry folder>/<SKILL.md path>` (how the shared labels and
/// queries name skills), `<registry name>/<SKILL.md path>`, and — through [`SkillKeys::resolve`]
/// only — a name that exactly one skill has (how tool-retrieval benchmarks name tools).
#[derive(Debug, Clone, Default)]
pub struct SkillKeys {
    by_path: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
}

impl SkillKeys {
    /// Keys of skills given as `(registry, path, name)`, positions in iteration order.
    pub fn new<'a>(
        skills: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
        registries: &[RegistryInput],
    ) -> SkillKeys {
        let folder_of: HashMap<&str, String> = registries
            .iter()
            .map(|r| (r.name.as_str(), r.folder()))
            .collect();
        let mut keys = SkillKeys::default();
        for (i, (registry, path, name)) in skills.into_iter().enumerate() {
            keys.by_path.insert(format!("{registry}/{path}"), i);
            if let Some(f) = folder_of.get(registry) {
                keys.by_path.insert(format!("{f}/{path}"), i);
            }
            keys.by_name.entry(name.to_owned()).or_default().push(i);
        }
        keys
    }

    /// Keys of `skills`, positions in slice order.
    pub fn of_skills(skills: &[Skill], registries: &[RegistryInput]) -> SkillKeys {
        SkillKeys::new(
            skills
                .iter()
                .map(|s| (s.registry.as_str(), s.path.as_str(), s.name.as_str())),
            registries,
        )
    }

    /// The skill a path key names.
    pub fn by_path(&self, key: &str) -> Option<usize> {
        self.by_path.get(key).copied()
    }

    /// The skill a path key names, else the one skill with that name.
    pub fn resolve(&self, key: &str) -> Option<usize> {
        self.by_path(key)
            .or_else(|| self.by_name.get(key).filter(|v| v.len() == 1).map(|v| v[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RegistryKind, RegistryName};

    fn registry(name: &str, path: &str) -> RegistryInput {
        RegistryInput {
            name: RegistryName(name.into()),
            kind: RegistryKind::Skills,
            path: path.into(),
            git: None,
            rev: None,
            source: None,
            license: None,
            content_hash: String::new(),
            skills: 0,
        }
    }

    #[test]
    fn paths_by_folder_and_by_name_and_unique_names() {
        let regs = [registry("obra/superpowers", "shared/obra__superpowers")];
        let keys = SkillKeys::new(
            [
                ("obra/superpowers", "skills/a/SKILL.md", "a"),
                ("obra/superpowers", "skills/b/SKILL.md", "dup"),
                ("tools", "c", "dup"),
            ],
            &regs,
        );
        assert_eq!(keys.by_path("obra__superpowers/skills/a/SKILL.md"), Some(0));
        assert_eq!(keys.by_path("obra/superpowers/skills/b/SKILL.md"), Some(1));
        // A registry without an input row is still found by its name.
        assert_eq!(keys.by_path("tools/c"), Some(2));
        assert_eq!(keys.by_path("a"), None);
        assert_eq!(keys.resolve("a"), Some(0));
        // Two skills share the name: a name alone is ambiguous.
        assert_eq!(keys.resolve("dup"), None);
    }
}
