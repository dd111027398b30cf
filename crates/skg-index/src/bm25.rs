//! BM25 over the documents with tantivy: one tantivy document per index document, fields weighted
//! at query time; `when_not_to_use` in its own field for negative evidence.
//!
//! Queries are built from the analyzed terms (no query syntax: user text can never be a parse
//! error): for every term and weighted field a boosted `TermQuery`, all `Should`.

use std::path::Path;

use skg_model::{Document, Level, Skill};
use tantivy::{
    Index, IndexReader, ReloadPolicy, TantivyDocument, Term,
    collector::TopDocs,
    query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery},
    schema::{
        Field, INDEXED, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
    },
    tokenizer::{
        Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter,
        TextAnalyzer,
    },
};

use crate::{Error, Result};

const ANALYZER: &str = "skg_en";

/// The text fields, in schema order.
pub const FIELDS: [&str; 6] = [
    "name",
    "description",
    "when_to_use",
    "tags",
    "headings",
    "body",
];

/// Per-field BM25 weights (the order of [`FIELDS`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights(pub [f32; 6]);

impl FieldWeights {
    /// For a skill scored as its best document: name 3, description 2, when_to_use 1.5, tags
    /// 1.5, headings 1.2, body 1 — a section competes with the card, so the card's fields count
    /// more.
    pub const DOCUMENT: FieldWeights = FieldWeights([3.0, 2.0, 1.5, 1.5, 1.2, 1.0]);
    /// For a `SKILL.md` package scored as one document: the card's fields 0.25 each, headings
    /// 0.5, body 3. The dense side already reads the card (name, description, outline); what
    /// BM25 adds to it is the package's own words, so the body carries the lexical weight
    /// (measured in docs/retrieval.md: with card-heavy weights the whole-skill ranking is better
    /// alone and worse fused, because it repeats the dense side's evidence). Chosen on the
    /// written training requests (`labels/train-requests-v1.jsonl`), which share no skill with
    /// the judged sets, then measured once on those.
    pub const SKILL: FieldWeights = FieldWeights([0.25, 0.25, 0.25, 0.25, 0.5, 3.0]);
    /// For a tool-catalog entry scored as one document: the card's fields 0.5 each, headings 1,
    /// body 2. A tool's body is its parameter list and its card most of what it says: the
    /// package weights cost MetaTool two points of hit@1 (docs/retrieval.md, stop 34).
    pub const TOOL: FieldWeights = FieldWeights([0.5, 0.5, 0.5, 0.5, 1.0, 2.0]);

    /// The default weights of a unit for a skill of this kind (the document unit's are the same
    /// for both: a section competes with the card there whatever made it).
    pub fn of(unit: crate::Bm25Unit, kind: skg_model::SkillKind) -> FieldWeights {
        match (unit, kind) {
            (crate::Bm25Unit::Skill, skg_model::SkillKind::Skill) => FieldWeights::SKILL,
            (crate::Bm25Unit::Skill, skg_model::SkillKind::Tool) => FieldWeights::TOOL,
            (crate::Bm25Unit::Document, _) => FieldWeights::DOCUMENT,
        }
    }
}

/// How [`Bm25::search_groups`] visits the matching documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Block-max WAND: skips documents that cannot enter the top groups (many documents).
    Pruned,
    /// Every matching document (a small index: the whole-skill one).
    Exhaustive,
}

impl Pass {
    /// Indexes up to this many documents are scored exhaustively. Measured on the whole-skill
    /// index (p50 per query, the same binary with either pass): 6,752 skills — exhaustive
    /// 0.79 ms, pruned 1.19 ms; 100,000 synthetic skills — exhaustive 7.57 ms, pruned 3.96 ms.
    /// Fitting each as a power of the size puts the crossover near 19,000 documents.
    pub(crate) const EXHAUSTIVE_MAX_DOCS: usize = 20_000;

    /// The faster pass over an index of `docs` documents.
    pub(crate) fn for_documents(docs: usize) -> Pass {
        if docs <= Pass::EXHAUSTIVE_MAX_DOCS {
            Pass::Exhaustive
        } else {
            Pass::Pruned
        }
    }
}

/// What one index document contributes to each field.
#[derive(Debug)]
pub(crate) struct DocText<'a> {
    parts: [String; 6],
    neg: &'a str,
}

impl<'a> DocText<'a> {
    /// The skill's card fields (name with its camelCase words, description, `when_to_use`,
    /// tags, and `when_not_to_use` as negative evidence) with the given headings and body.
    fn card(s: &'a Skill, headings: String, body: String) -> DocText<'a> {
        DocText {
            parts: [
                with_camel_words(&s.name),
                s.description.clone(),
                s.when_to_use.clone().unwrap_or_default(),
                s.tags.join(" "),
                headings,
                body,
            ],
            neg: s.when_not_to_use.as_deref().unwrap_or_default(),
        }
    }

    /// A document with no text (matches nothing).
    pub(crate) fn empty() -> DocText<'a> {
        DocText {
            parts: Default::default(),
            neg: "",
        }
    }

    /// L0 carries the frontmatter fields (and `when_not_to_use`); L1 and L2 carry their headings
    /// and text.
    pub(crate) fn of(d: &'a Document, s: &'a Skill) -> DocText<'a> {
        match d.level {
            Level::L0 => DocText::card(s, String::new(), String::new()),
            Level::L1 | Level::L2 => DocText {
                parts: [
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    d.heading_path.join(" / "),
                    d.text.clone(),
                ],
                neg: "",
            },
        }
    }
}

/// One document per skill for skill-level BM25 ([`crate::Bm25Unit::Skill`]): the frontmatter
/// fields as in its L0 document, every L2 heading path once in `headings`, and every L2 text (all
/// of the package's markdown files, in index order) in `body` — the skill's L1 outline when it has
/// no L2 section (a tool entry's parameter list). The outline is otherwise left out: it repeats the
/// sections' headings and first paragraphs.
pub(crate) fn skill_text<'a>(s: &'a Skill, docs: &[&'a Document]) -> DocText<'a> {
    let mut headings: Vec<String> = Vec::new();
    let mut body = String::new();
    let has_l2 = docs.iter().any(|d| d.level == Level::L2);
    for d in docs {
        let take = match d.level {
            Level::L0 => false,
            Level::L1 => !has_l2,
            Level::L2 => true,
        };
        if !take {
            continue;
        }
        let h = d.heading_path.join(" / ");
        if !h.is_empty() && !headings.contains(&h) {
            headings.push(h);
        }
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(&d.text);
    }
    DocText::card(s, headings.join("\n"), body)
}

/// `name` plus its camelCase words when it has any (`GameTool` → `GameTool Game Tool`,
/// `AI2sql` → `AI2sql AI 2 sql`): tool names are often written that way, queries never are.
fn with_camel_words(name: &str) -> String {
    let mut words = String::new();
    let mut prev: Option<char> = None;
    let mut split = false;
    for c in name.chars() {
        if let Some(p) = prev {
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_alphabetic() && c.is_ascii_digit())
                || (p.is_ascii_digit() && c.is_alphabetic());
            if boundary {
                words.push(' ');
                split = true;
            }
        }
        words.push(c);
        prev = Some(c);
    }
    if split {
        format!("{name} {words}")
    } else {
        name.to_owned()
    }
}

fn analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .dynamic();
    let builder = match StopWordFilter::new(Language::English) {
        Some(f) => builder.filter_dynamic(f),
        None => builder,
    };
    builder
        .filter_dynamic(Stemmer::new(Language::English))
        .build()
}

struct Schema6 {
    schema: Schema,
    doc: Field,
    skill: Field,
    text: [Field; 6],
    neg: Field,
}

fn schema() -> Schema6 {
    let mut b = Schema::builder();
    let opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let doc = b.add_u64_field("doc", NumericOptions::default().set_fast() | INDEXED);
    let skill = b.add_u64_field("skill", NumericOptions::default() | INDEXED);
    let text = FIELDS.map(|f| b.add_text_field(f, opts.clone()));
    let neg = b.add_text_field("when_not_to_use", opts);
    Schema6 {
        schema: b.build(),
        doc,
        skill,
        text,
        neg,
    }
}

/// Writes the tantivy index of `docs` into `dir`: position = the `doc` field (an index
/// document's number, or a skill's position for the skill-level index), `skill_of(position)` the
/// `skill` field (indexed: [`Bm25::score_among`] filters on it).
pub(crate) fn write(
    dir: &Path,
    docs: &[DocText<'_>],
    skill_of: &dyn Fn(usize) -> u32,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let s = schema();
    let index = Index::create_in_dir(dir, s.schema.clone())?;
    index.tokenizers().register(ANALYZER, analyzer());
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 100_000_000)?;
    for (i, d) in docs.iter().enumerate() {
        let mut doc = TantivyDocument::new();
        doc.add_u64(s.doc, i as u64);
        doc.add_u64(s.skill, u64::from(skill_of(i)));
        for (f, text) in s.text.iter().zip(&d.parts) {
            if !text.is_empty() {
                doc.add_text(*f, text);
            }
        }
        if !d.neg.is_empty() {
            doc.add_text(s.neg, d.neg);
        }
        writer.add_document(doc)?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    Ok(())
}

/// An open BM25 index.
pub(crate) struct Bm25 {
    reader: IndexReader,
    analyzer: TextAnalyzer,
    skill: Field,
    text: [Field; 6],
    neg: Field,
}

impl std::fmt::Debug for Bm25 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25").finish_non_exhaustive()
    }
}

impl Bm25 {
    /// The largest id (the `doc` fast field: a document's or a skill's position) any document
    /// carries; `None` for an empty index.
    pub(crate) fn max_id(&self) -> Result<Option<u64>> {
        let searcher = self.reader.searcher();
        let mut max = None;
        for reader in searcher.segment_readers() {
            if reader.num_docs() > 0 {
                let m = reader.fast_fields().u64("doc")?.max_value();
                max = max.max(Some(m));
            }
        }
        Ok(max)
    }

    pub(crate) fn open(dir: &Path) -> Result<Bm25> {
        let index = Index::open_in_dir(dir)?;
        index.tokenizers().register(ANALYZER, analyzer());
        let schema = index.schema();
        let field = |n: &str| schema.get_field(n).map_err(Error::from);
        let text = [
            field(FIELDS[0])?,
            field(FIELDS[1])?,
            field(FIELDS[2])?,
            field(FIELDS[3])?,
            field(FIELDS[4])?,
            field(FIELDS[5])?,
        ];
        let neg = field("when_not_to_use")?;
        let skill = field("skill")?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Bm25 {
            reader,
            analyzer: analyzer(),
            skill,
            text,
            neg,
        })
    }

    /// The analyzed terms of `text`, distinct, in order of first appearance.
    pub(crate) fn terms(&self, text: &str) -> Vec<String> {
        let mut a = self.analyzer.clone();
        let mut stream = a.token_stream(text);
        let mut out: Vec<String> = Vec::new();
        while stream.advance() {
            let t = stream.token().text.clone();
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// The `max` terms of `terms` with the fewest postings over the text fields (documents
    /// holding the term, summed over the fields: the term's share of a query's work and,
    /// inversely, of its IDF), in their original order, ties by position; all of them when
    /// there are no more than `max` (or `max` is 0). Terms no document holds are dropped first:
    /// they match nothing and would otherwise crowd out the rare terms that do.
    pub(crate) fn rarest(&self, terms: &[String], max: usize) -> Result<Vec<String>> {
        if max == 0 || terms.len() <= max {
            return Ok(terms.to_vec());
        }
        let searcher = self.reader.searcher();
        let mut df: Vec<(u64, usize)> = Vec::with_capacity(terms.len());
        for (i, t) in terms.iter().enumerate() {
            let mut n = 0u64;
            for f in &self.text {
                n += searcher.doc_freq(&Term::from_field_text(*f, t))?;
            }
            if n > 0 {
                df.push((n, i));
            }
        }
        df.sort_unstable();
        let mut keep: Vec<usize> = df.into_iter().take(max).map(|(_, i)| i).collect();
        keep.sort_unstable();
        Ok(keep.into_iter().map(|i| terms[i].clone()).collect())
    }

    /// One boosted term clause per analyzed term and weighted field.
    fn clauses(&self, terms: &[String], weights: &FieldWeights) -> Vec<(Occur, Box<dyn Query>)> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in terms {
            for (f, w) in self.text.iter().zip(weights.0) {
                if w <= 0.0 {
                    continue;
                }
                let q = TermQuery::new(Term::from_field_text(*f, t), IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), w))));
            }
        }
        clauses
    }

    /// Top `limit` documents for the terms over the weighted fields: (doc index, score). The
    /// exhaustive reference the tests hold [`Bm25::search_groups`] to.
    #[cfg(test)]
    pub(crate) fn search(
        &self,
        terms: &[String],
        weights: &FieldWeights,
        limit: usize,
    ) -> Result<Vec<(u32, f32)>> {
        self.run(self.clauses(terms, weights), limit)
    }

    /// The `n` best distinct groups (skills) by their best document's score, in one pass.
    /// `group_of` maps a document index to its group, `None` for documents to leave out (not
    /// routable). Returns (group, score, doc index), unordered.
    ///
    /// [`Pass::Pruned`] is block-max WAND: the pruning threshold is the `n`-th best group score
    /// so far, so documents that cannot lift a group into the top `n` are never scored — the
    /// way over many documents. Its bookkeeping re-sorts the term scorers after every pivot
    /// (one per term and field), which on a small index costs more than it saves:
    /// [`Pass::Exhaustive`] scores every matching document in tantivy's buffered union and
    /// keeps the `n` best groups (ties by group id). Both give the same scores up to float
    /// rounding (the union adds a document's term scores in another order).
    pub(crate) fn search_groups(
        &self,
        terms: &[String],
        weights: &FieldWeights,
        n: usize,
        group_of: &dyn Fn(u32) -> Option<u32>,
        pass: Pass,
    ) -> Result<Vec<(u32, f32, u32)>> {
        use std::collections::{BTreeSet, HashMap};
        let clauses = self.clauses(terms, weights);
        if clauses.is_empty() || n == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let query = BooleanQuery::new(clauses);
        let weight = query.weight(tantivy::query::EnableScoring::enabled_from_searcher(
            &searcher,
        ))?;
        let mut best: HashMap<u32, (f32, u32)> = HashMap::new();
        if pass == Pass::Exhaustive {
            for reader in searcher.segment_readers() {
                let docs = reader.fast_fields().u64("doc")?;
                weight.for_each(reader, &mut |doc, score| {
                    let Some(d) = docs.first(doc).and_then(|d| u32::try_from(d).ok()) else {
                        return;
                    };
                    let Some(g) = group_of(d) else {
                        return;
                    };
                    let e = best.entry(g).or_insert((score, d));
                    if score.total_cmp(&e.0).then(e.1.cmp(&d)).is_gt() {
                        *e = (score, d);
                    }
                })?;
            }
            let mut all: Vec<(u32, f32, u32)> =
                best.into_iter().map(|(g, (s, d))| (g, s, d)).collect();
            let order =
                |a: &(u32, f32, u32), b: &(u32, f32, u32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            if n < all.len() {
                all.select_nth_unstable_by(n - 1, order);
                all.truncate(n);
            }
            return Ok(all);
        }
        // Scores are positive; order them by their bits (monotone for non-negative floats).
        let key = |s: f32| s.max(0.0).to_bits();
        let mut top: BTreeSet<(u32, u32)> = BTreeSet::new(); // (score key, group)
        let mut threshold = 0.0f32;
        for reader in searcher.segment_readers() {
            let docs = reader.fast_fields().u64("doc")?;
            weight.for_each_pruning(threshold, reader, &mut |doc, score| {
                let Some(d) = docs.first(doc).and_then(|d| u32::try_from(d).ok()) else {
                    return threshold;
                };
                let Some(g) = group_of(d) else {
                    return threshold;
                };
                match best.get(&g) {
                    Some(&(old, _)) if old >= score => return threshold,
                    Some(&(old, _)) => {
                        top.remove(&(key(old), g));
                    }
                    None => {}
                }
                best.insert(g, (score, d));
                top.insert((key(score), g));
                if top.len() > n {
                    top.pop_first();
                }
                if top.len() == n {
                    threshold = top.first().map_or(threshold, |&(k, _)| f32::from_bits(k));
                }
                threshold
            })?;
        }
        Ok(top
            .into_iter()
            .map(|(_, g)| {
                let (s, d) = best[&g];
                (g, s, d)
            })
            .collect())
    }

    /// The documents of the skills `among` that match the terms over the weighted fields:
    /// `(doc, score)`, at most `limit`, best first. Only those skills' documents are scored (the
    /// query is intersected with the `skill` field), so it is cheap for a few skills.
    pub(crate) fn score_among(
        &self,
        terms: &[String],
        weights: &FieldWeights,
        among: &[u32],
        limit: usize,
    ) -> Result<Vec<(u32, f32)>> {
        use tantivy::query::ConstScoreQuery;
        let clauses = self.clauses(terms, weights);
        if clauses.is_empty() || among.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        // A disjunction of the few skills' terms: tantivy's TermSetQuery builds an FST of its
        // terms on every query, which cost more than the scoring itself.
        let set = BooleanQuery::new(
            among
                .iter()
                .map(|&s| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_u64(self.skill, u64::from(s)),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, q)
                })
                .collect(),
        );
        let query = BooleanQuery::new(vec![
            (
                Occur::Must,
                Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>,
            ),
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(set), 0.0)),
            ),
        ]);
        self.run_query(&query, limit)
    }

    /// Top documents whose `when_not_to_use` matches the terms: (doc index, score).
    pub(crate) fn search_negative(
        &self,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<(u32, f32)>> {
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(self.neg, t),
                    IndexRecordOption::WithFreqs,
                ));
                (Occur::Should, q)
            })
            .collect();
        // No more documents can match than the terms' document frequencies add up to: the
        // collector is sized by that, not by the catalog (a caller asks for every match).
        let searcher = self.reader.searcher();
        let mut matches = 0u64;
        for t in terms {
            matches =
                matches.saturating_add(searcher.doc_freq(&Term::from_field_text(self.neg, t))?);
        }
        let limit = limit.min(usize::try_from(matches).unwrap_or(usize::MAX));
        self.run(clauses, limit)
    }

    fn run(&self, clauses: Vec<(Occur, Box<dyn Query>)>, limit: usize) -> Result<Vec<(u32, f32)>> {
        if clauses.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        self.run_query(&BooleanQuery::new(clauses), limit)
    }

    fn run_query(&self, query: &dyn Query, limit: usize) -> Result<Vec<(u32, f32)>> {
        let searcher = self.reader.searcher();
        let top = searcher.search(query, &TopDocs::with_limit(limit).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        let mut columns: Vec<Option<tantivy::columnar::Column<u64>>> =
            vec![None; searcher.segment_readers().len()];
        for (score, addr) in top {
            let ord = addr.segment_ord as usize;
            if columns[ord].is_none() {
                columns[ord] = Some(
                    searcher
                        .segment_reader(addr.segment_ord)
                        .fast_fields()
                        .u64("doc")?,
                );
            }
            // An id past u32 is not one this index wrote: skipped, never used as an index.
            if let Some(col) = &columns[ord]
                && let Some(doc) = col.first(addr.doc_id)
                && let Ok(doc) = u32::try_from(doc)
            {
                out.push((doc, score));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[allow(clippy::many_single_char_names, reason = "short fixture names")]
    fn a_skill_document_is_its_card_its_headings_once_and_its_sections() {
        use skg_model::{DocId, Document, Level, Skill};
        let s = Skill::from_text("r", "pdf", "PdfTools", "Merge PDF files.", "body");
        let d = |level: Level, heading: &[&str], text: &str| Document {
            id: DocId::from("x"),
            skill: s.id.clone(),
            registry: s.registry.clone(),
            level,
            file: "SKILL.md".into(),
            heading_path: heading.iter().map(|h| (*h).to_owned()).collect(),
            ordinal: 0,
            chunk: 0,
            line_start: 1,
            line_end: 1,
            title: String::new(),
            text: text.into(),
            role: skg_model::SectionRole::Body,
        };
        let l0 = d(Level::L0, &[], "card");
        let l1 = d(Level::L1, &[], "outline");
        let a = d(Level::L2, &["Merge"], "merge text");
        let b = d(Level::L2, &["Merge"], "more merge text");
        let c = d(Level::L2, &["Merge", "Forms"], "forms text");
        let t = super::skill_text(&s, &[&l0, &l1, &a, &b, &c]);
        assert_eq!(t.parts[0], "PdfTools Pdf Tools");
        assert_eq!(t.parts[1], "Merge PDF files.");
        assert_eq!(t.parts[4], "Merge\nMerge / Forms");
        assert_eq!(t.parts[5], "merge text\nmore merge text\nforms text");
        // Without sections, the outline is the body.
        let t = super::skill_text(&s, &[&l0, &l1]);
        assert_eq!((t.parts[4].as_str(), t.parts[5].as_str()), ("", "outline"));
    }

    #[test]
    fn camel_words() {
        assert_eq!(super::with_camel_words("GameTool"), "GameTool Game Tool");
        assert_eq!(super::with_camel_words("AI2sql"), "AI2sql AI 2 sql");
        assert_eq!(super::with_camel_words("pdf-tools"), "pdf-tools");
    }
}
