//! Text a reader does not see or misreads: invisible characters, variation selectors carrying data,
//! look-alike hosts.

use super::{Ctx, INJ_UNICODE, LOOKALIKE, Place, clip, hosts::URL};

/// Zero-width, bidirectional-control, tag and variation-selector characters and the soft hyphen:
/// what a reader does not see, removed before the instruction rules read a text (a selector or a
/// soft hyphen inside "ig\u{FE00}nore" must not break the word).
pub(super) fn invisible(c: char) -> bool {
    matches!(c, '\u{AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
        || selector_byte(c).is_some()
}

/// Sentences of a paragraph (split at `.`, `!`, `?` followed by a space, and at line ends).
pub(super) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['\n', '!', '?'])
        .flat_map(|p| p.split_inclusive(". "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

pub(super) fn unicode_rule(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    for (i, l) in text.lines().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // Tag characters after a black flag (U+1F3F4) spell an emoji subdivision flag
        // (England, Scotland, Wales): those are text, not hidden instructions.
        let mut tags = String::new();
        let mut in_flag = false;
        for c in l.chars() {
            if c == '\u{1F3F4}' {
                in_flag = true;
            } else if ('\u{E0000}'..='\u{E007F}').contains(&c) {
                if c == '\u{E007F}' {
                    in_flag = false;
                } else if !in_flag {
                    tags.extend(char::from_u32(c as u32 - 0xE0000));
                }
            } else {
                in_flag = false;
            }
        }
        if !tags.is_empty() {
            ctx.emit(
                INJ_UNICODE,
                0.95,
                line,
                &format!("hidden text: {tags}"),
                "Unicode tag characters carry text a reader never sees".into(),
                Vec::new(),
                Place::Script,
                1,
            );
            continue;
        }
        if let Some((bytes, hidden)) = variation_payload(l) {
            let (snippet, message, confidence, adjust) = match hidden {
                Some(t) => (
                    format!("hidden text: {t}"),
                    format!("{bytes} variation selectors in a row spell text a reader never sees"),
                    0.95,
                    1,
                ),
                None => (
                    format!("{bytes} hidden bytes"),
                    format!("{bytes} variation selectors in a row carry bytes a reader never sees"),
                    0.7,
                    0,
                ),
            };
            ctx.emit(
                INJ_UNICODE,
                confidence,
                line,
                &snippet,
                message,
                Vec::new(),
                Place::Script,
                adjust,
            );
            continue;
        }
        let bidi = l
            .chars()
            .filter(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
            .count();
        let chars: Vec<char> = l.chars().collect();
        let zero = chars
            .iter()
            .enumerate()
            .filter(|&(j, c)| match c {
                '\u{200B}' | '\u{200C}' | '\u{2060}'..='\u{2064}' => true,
                '\u{FEFF}' => !(i == 0 && j == 0),
                // A joiner between two non-ASCII characters builds emoji and scripts.
                '\u{200D}' => {
                    j == 0
                        || j + 1 >= chars.len()
                        || chars[j - 1].is_ascii()
                        || chars[j + 1].is_ascii()
                }
                _ => false,
            })
            .count();
        if bidi > 0 || zero >= 3 {
            let shown: String = l
                .chars()
                .map(|c| {
                    if c.is_control() || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}') {
                        '\u{FFFD}'
                    } else {
                        c
                    }
                })
                .collect();
            ctx.emit(
                INJ_UNICODE,
                0.7,
                line,
                &shown,
                format!("{bidi} bidirectional control and {zero} zero-width character(s): text shown differs from text read"),
                Vec::new(),
                Place::Script,
                0,
            );
        }
    }
}

/// The byte a variation selector stands for in the encoding that smuggles data after an emoji
/// (U+FE00–FE0F are bytes 0–15, U+E0100–E01EF bytes 16–255).
/// Web addresses whose host imitates another with look-alike letters, on any line of any file
/// (prose, code, configuration): see [`lookalike_host`].
pub(super) fn lookalike_rule(ctx: &mut Ctx<'_>) {
    // The file outlives the context: borrowed through its own reference, not copied.
    let file = ctx.file;
    let text = &file.text;
    for (i, l) in text.lines().enumerate() {
        // Only an address written with letters beyond ASCII, or as punycode, can be one.
        if l.is_ascii() && !has_punycode(l) {
            continue;
        }
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let mut seen: Vec<String> = Vec::new();
        for m in URL.captures_iter(l) {
            let Some(authority) = m.get(1) else {
                continue;
            };
            let host = authority_host(authority.as_str());
            let Some(look) = lookalike_host(host) else {
                continue;
            };
            if seen.contains(&look.shown) {
                continue;
            }
            let written = if host.eq_ignore_ascii_case(&look.shown) {
                String::new()
            } else {
                format!(" (written `{host}`)")
            };
            ctx.emit(
                LOOKALIKE,
                if look.reads_as.is_some() { 0.9 } else { 0.7 },
                line,
                l,
                match &look.reads_as {
                    Some(ascii) => format!(
                        "the host `{}`{written} reads as `{ascii}` but is another host (it {})",
                        look.shown, look.why
                    ),
                    None => format!("the host `{}`{written} {}", look.shown, look.why),
                },
                Vec::new(),
                Place::Script,
                0,
            );
            seen.push(look.shown);
        }
    }
}

/// The host of a URL's authority: after the last `@` (`user:password@`), before a port.
pub(super) fn authority_host(authority: &str) -> &str {
    let after_user = authority.rsplit('@').next().unwrap_or("");
    match after_user.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => after_user,
    }
}

/// `text` holds an IDNA ACE prefix (`xn--`, any case): punycode a browser shows decoded.
pub(super) fn has_punycode(text: &str) -> bool {
    text.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"xn--"))
}

/// A host that imitates another ([`lookalike_host`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Lookalike {
    /// The host as a browser shows it (punycode decoded, lower case).
    pub(super) shown: String,
    /// What it reads as when every look-alike letter is read as the ASCII one it imitates
    /// (UTS 39 confusables), when every letter has one.
    pub(super) reads_as: Option<String>,
    /// Why, in words.
    pub(super) why: String,
}

/// The script a one-script label is written in, for the scripts whose letters imitate Latin
/// ones: Cyrillic, Greek, Armenian, Cherokee (by block; `None` for any other).
pub(super) fn imitating_script(label: &str) -> Option<&'static str> {
    label.chars().find_map(|c| match c {
        '\u{0400}'..='\u{052F}'
        | '\u{1C80}'..='\u{1C8F}'
        | '\u{2DE0}'..='\u{2DFF}'
        | '\u{A640}'..='\u{A69F}' => Some("Cyrillic"),
        '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}' => Some("Greek"),
        '\u{0530}'..='\u{058F}' => Some("Armenian"),
        '\u{13A0}'..='\u{13FF}' | '\u{AB70}'..='\u{ABBF}' => Some("Cherokee"),
        _ => None,
    })
}

/// Top-level domains of countries writing in `script`, where names in that script are the norm
/// (Chrome's IDN policy keeps their whole-script look-alikes too).
pub(super) fn script_tld(script: &str, tld: &str) -> bool {
    match script {
        "Cyrillic" => matches!(
            tld,
            "ru" | "su"
                | "ua"
                | "by"
                | "kz"
                | "bg"
                | "mk"
                | "rs"
                | "kg"
                | "tj"
                | "mn"
                | "uz"
                | "eu"
        ),
        "Greek" => matches!(tld, "gr" | "cy" | "eu"),
        "Armenian" => tld == "am",
        _ => false,
    }
}

/// Whether `host` (as written in an address: Unicode or punycode) imitates another: a label
/// (between dots) that mixes Latin with Cyrillic or Greek, or three scripts (UTS 39: less than
/// moderately restrictive — Latin with Han, Kana or Hangul, as in `abc日本.jp`, is allowed), or
/// that is written wholly in Cyrillic, Greek, Armenian or Cherokee letters each of which looks
/// like a Latin letter or digit (`аррӏе.com`) — unless the top-level domain is of that script
/// (`.рф`, `.ru`, `.gr`), where such names are the norm. A name in one script with letters of
/// its own (`münchen.de`, `例え.jp`, `kırmızı.com.tr`) is not one.
pub(super) fn lookalike_host(host: &str) -> Option<Lookalike> {
    use unicode_security::{RestrictionLevel, RestrictionLevelDetection as _};
    let host = host.trim_end_matches('.');
    if host.is_ascii() && !has_punycode(host) {
        return None;
    }
    // As browsers show it: UTS 46 (punycode decoded, lower case, width folded).
    let (shown, _) = idna::domain_to_unicode(host);
    if shown.is_ascii() {
        return None;
    }
    let labels: Vec<&str> = shown.split('.').collect();
    let tld = labels.last().copied().unwrap_or("");
    let ascii_of = |label: &str| -> Option<String> {
        let mut out = String::new();
        for c in label.chars() {
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            let mut buf = [0u8; 4];
            let proto: String = unicode_security::skeleton(c.encode_utf8(&mut buf)).collect();
            if !proto.is_empty() && proto.chars().all(|p| p.is_ascii_alphanumeric()) {
                out.push_str(&proto);
            } else {
                return None;
            }
        }
        Some(out)
    };
    let mut why = None;
    // A label UTS 46 could not read (U+FFFD) says nothing either way.
    for label in labels
        .iter()
        .filter(|l| !l.is_ascii() && !l.contains('\u{FFFD}'))
    {
        // Letters of the identifier profile (a letter outside it, e.g. Cherokee, would make any
        // label "unrestricted"); Latin mixed with Cyrillic, Greek or three scripts is below
        // moderately restrictive, and Latin with Armenian is as misleading.
        let letters: String = label
            .chars()
            .filter(|&c| {
                c.is_alphanumeric()
                    && unicode_security::GeneralSecurityProfile::identifier_allowed(c)
            })
            .collect();
        let level = letters.as_str().detect_restriction_level();
        if level > RestrictionLevel::ModeratelyRestrictive
            || (level == RestrictionLevel::ModeratelyRestrictive
                && imitating_script(label).is_some())
        {
            why = Some("mixes the letters of two scripts in one name".to_owned());
            break;
        }
        // Latin letters with no use in a name but to imitate ASCII ones (a dotless `ı` outside
        // Turkish and Azerbaijani names, a Latin `ɑ`, `ɡ`, `ȷ`, `ſ`, `ɩ`).
        if let Some(c) = label.chars().find(|&c| {
            matches!(
                c,
                '\u{0251}' | '\u{0261}' | '\u{0237}' | '\u{017F}' | '\u{0269}'
            ) || (c == '\u{0131}' && !matches!(tld, "tr" | "az"))
        }) && ascii_of(label).is_some()
        {
            why = Some(format!(
                "is written with `{c}`, a Latin letter that imitates an ASCII one"
            ));
            break;
        }
        if let Some(script) = imitating_script(label)
            && level == RestrictionLevel::SingleScript
            && ascii_of(label).is_some()
        {
            let own_tld = if tld.is_ascii() {
                script_tld(script, tld)
            } else {
                imitating_script(tld) == Some(script)
            };
            if !own_tld {
                why = Some(format!(
                    "is written wholly in {script} letters that look like Latin ones"
                ));
                break;
            }
        }
    }
    let why = why?;
    let reads_as: Option<Vec<String>> = labels.iter().map(|l| ascii_of(l)).collect();
    Some(Lookalike {
        reads_as: reads_as.map(|r| r.join(".")),
        why,
        shown,
    })
}

pub(super) fn selector_byte(c: char) -> Option<u8> {
    let b = match c {
        '\u{FE00}'..='\u{FE0F}' => c as u32 - 0xFE00,
        '\u{E0100}'..='\u{E01EF}' => c as u32 - 0xE0100 + 16,
        _ => return None,
    };
    u8::try_from(b).ok()
}

/// Bytes smuggled in variation selectors on a line: (how many, what they spell when it reads as
/// text). A variation sequence takes one selector after its base, so a selector is text when it
/// follows a character that is not one, no selector follows it, and the base is not an ASCII
/// letter or sign (no standard sequence starts there: a selector inside a word breaks it for the
/// rules, not for the model); every other selector is a payload byte — every run of two or more,
/// however the runs are split (by joiners, spaces, text), less an emoji's own presentation
/// selector where a run starts after a non-ASCII base. At least 4 bytes make a payload. The bytes
/// read as text when, controls and undecodable bytes left out, they hold at least 4 letters or
/// digits: what is shown then has its controls replaced (a payload must not drive the terminal
/// the findings are printed on).
pub(super) fn variation_payload(line: &str) -> Option<(usize, Option<String>)> {
    if !line.chars().any(|c| selector_byte(c).is_some()) {
        return None;
    }
    let chars: Vec<char> = line.chars().collect();
    let mut payload: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if selector_byte(chars[i]).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && selector_byte(chars[i]).is_some() {
            i += 1;
        }
        let run = &chars[start..i];
        let base = start.checked_sub(1).map(|j| chars[j]);
        if run.len() >= 2 {
            let own =
                base.is_some_and(|b| !b.is_ascii()) && matches!(run[0], '\u{FE0E}' | '\u{FE0F}');
            payload.extend(
                run[usize::from(own)..]
                    .iter()
                    .filter_map(|&c| selector_byte(c)),
            );
        } else if base.is_none_or(|b| b.is_ascii() && !matches!(b, '0'..='9' | '#' | '*')) {
            payload.extend(selector_byte(run[0]));
        }
    }
    if payload.len() < 4 {
        return None;
    }
    let decoded = String::from_utf8_lossy(&payload);
    let shown: String = decoded
        .chars()
        .filter(|&c| c != char::REPLACEMENT_CHARACTER && c != '\0')
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let letters = shown.chars().filter(|c| c.is_alphanumeric()).count();
    Some((payload.len(), (letters >= 4).then(|| clip(&shown))))
}
