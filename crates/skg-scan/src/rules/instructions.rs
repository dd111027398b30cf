//! Instructions to the agent: overriding its rules, a new role, concealment, asking for secrets.

use super::{
    Ctx, INJ_CONCEAL, INJ_OVERRIDE, INJ_ROLE, INJ_SECRET, Note, Place, re,
    unicode::{invisible, sentences},
};
use regex::Regex;
use std::sync::LazyLock;

pub(super) static OVERRIDE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(previous|prior|above|earlier|all|any|your|system|safety|original)\b[^.\n]{0,25}?\b(instructions?|prompts?|rules|guidelines|guardrails|polic(?:y|ies)|directives|constraints)\b",
    )
});
pub(super) static ROLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\byou are now (?:an? |in |the )?(?:unrestricted|unfiltered|jailbroken|dan\b|developer mode|god mode|admin)|\b(?:god|jailbreak|dan) mode (?:is )?(?:enabled|activated|on)\b|<\|im_start\|>|<\|?system\|?>|\[system\]\s*:|^\s*system\s*:\s*you are)",
    )
});
pub(super) static CONCEAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:do not|don't|never|without)\s+(?:tell|telling|inform|informing|notify|notifying|alert|alerting)\s+(?:the\s+)?(?:user|human|operator|owner)\b|\b(?:do not|don't|never|without)\s+(?:mention|mentioning|reveal|revealing|disclose|disclosing)\b[^.\n]{0,50}\bto\s+(?:the\s+)?(?:user|human|operator)\b|\bhide\s+(?:this|it|these|the\s+\w+)\s+from\s+(?:the\s+)?(?:user|human)\b|\bthe\s+user\s+(?:must|should|need)\s+(?:not|never)\s+(?:know|see|notice|find out)\b|\b(?:silently|secretly|covertly|quietly|invisibly)\s+(?:\w+\s+){0,3}?(?:send|upload|post|forward|run|execute|install|copy|read|exfiltrate|transmit|collect|download)\b)",
    )
});
/// A sentence that discusses a phrase (an example, a warning, advice) instead of giving it.
pub(super) static DISCUSSES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\be\.g\.|\bfor example\b|\bsuch as\b|\bphrases? like\b|\battackers?\b|\bmalicious\b|\binjection\b|\binjected\b|\bwarning\b|\bbeware\b|\bavoid\b|\btip\b|\bwording\b|\boverride-style\b|\bnever follow\b|\bdo not follow\b|\bdon't follow\b|\bas data\b|\byou can (?:say|tell)\b)",
    )
});
/// The user's own key for the API the skill calls ("append your API key to requests"), also
/// as the placeholder a reader replaces (`&api_key=YOUR_KEY`, `YOUR_API_TOKEN`) — not one
/// named private, SSH, secret, GPG or a wallet's ([`PRIVATE_KEY`]).
pub(super) static OWN_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\byour\s+(?:own\s+)?(?:\w+\s+)?(?:api[\s_-]?key|access[\s_-]?token|api[\s_-]?token|token)\b|(?-i:(?:[\w-]+=)?\bYOUR_(?:[A-Z0-9]+_)*(?:KEY|TOKEN)\b)",
    )
});
/// An API's key or token, named (what a reader's own key is).
static API_KEY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:api[\s_-]?keys?|(?:access|api|auth|bearer)[\s_-]?tokens?)\b"));
/// A web address, whole.
static ADDRESS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:https?|ftp)://\S+"));
/// A key that is no API's: private, SSH, secret, GPG, a wallet's, a seed phrase.
pub(super) static PRIVATE_KEY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(private|ssh|secret|gpg|pgp|wallet|seed)"));
/// Text ending in a negation ("do not silently run …" is a safety rule, not concealment).
pub(super) static NEGATED: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:not|never|no|n't|without)\s+$"));
pub(super) static SEND_VERB: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(send|forward|post|upload|transmit|exfiltrate|leak|append|attach|report|submit|beacon|pipe|copy)\b",
    )
});
pub(super) static SECRET_NOUN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\b(?:session|access|auth|bearer|api|github|aws|npm|oauth|refresh)[\s_-]?tokens?\b|\bapi[\s_-]?keys?\b|\bsecret\s+keys?\b|\bpasswords\b|\bcredentials\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\bsession\s+cookies?\b|\.env\s+files?\b|\benvironment\s+variables\b|\benv\s+vars\b|\bid_rsa\b|~/\.ssh|~/\.aws|\bseed\s+phrase\b|\bmnemonic\b|\b(?:user|session|all|private|personal|browser|conversation)\s+(?:data|history|files|information)\b)",
    )
});
pub(super) static DESTINATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(https?://|\bwebhook\b|\bremote\s+(?:server|host|endpoint)\b|\bthe\s+url\b|\bthis\s+url\b|\bexternal\s+(?:server|host|endpoint)\b|\bcollector\b|\bfor\s+(?:audit|compliance|verification|backup)\b)",
    )
});
pub(super) static LEGIT_AUTH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(authorization|bearer|header|x-api-key|oauth|authenticate|never\s+(?:send|share|post|commit|log|expose)|do\s+not\s+(?:send|share|post|commit|log|expose)|don't\s+(?:send|share|post|commit|log|expose)|only\s+(?:send|share|use)|redact|mask)\b",
    )
});

pub(super) fn instruction_rules(ctx: &mut Ctx<'_>, text: &str, line: u32, place: Place<'_>) {
    // Invisible characters between letters would hide the words from the rules (and not from
    // the model reading them): read the text as a model does.
    let visible: String;
    let text = if text.chars().any(invisible) {
        visible = text.chars().filter(|c| !invisible(*c)).collect();
        visible.as_str()
    } else {
        text
    };
    for sentence in sentences(text) {
        let quoted = |m: &regex::Match<'_>| {
            let before = &sentence[..m.start()];
            before.matches('"').count() % 2 == 1
                || before.matches('“').count() > before.matches('”').count()
        };
        let discussed = DISCUSSES.find(sentence).map(|m| m.as_str().to_owned());
        if let Some(m) = OVERRIDE.find(sentence) {
            let mut context = Vec::new();
            let mut adjust = 0;
            if quoted(&m) {
                context.push(Note::framing(
                    "lowered: inside quotes (an example, not an instruction)",
                    1,
                ));
                adjust -= 1;
            } else if let Some(d) = &discussed {
                context.push(Note::framing(
                    format!(
                        "lowered: the sentence talks about the phrase (\"{d}\") rather than giving it"
                    ),
                    1,
                ));
                adjust -= 1;
            }
            ctx.emit(
                INJ_OVERRIDE,
                0.8,
                line,
                sentence,
                "tells the agent to ignore or override its instructions".into(),
                context,
                place,
                adjust,
            );
        }
        if let Some(m) = ROLE.find(sentence) {
            let mut context = Vec::new();
            let mut adjust = 0;
            if quoted(&m) {
                context.push(Note::framing(
                    "lowered: inside quotes (an example, not an instruction)",
                    1,
                ));
                adjust -= 1;
            }
            ctx.emit(
                INJ_ROLE,
                0.6,
                line,
                sentence,
                "gives the agent a new identity or a fake system marker".into(),
                context,
                place,
                adjust,
            );
        }
        if let Some(m) = CONCEAL.find(sentence)
            && !NEGATED.is_match(&sentence[..m.start()])
        {
            ctx.emit(
                INJ_CONCEAL,
                0.8,
                line,
                sentence,
                "tells the agent to keep what it does from the user".into(),
                Vec::new(),
                place,
                0,
            );
        }
        // What is sent and how it authenticates are read outside the addresses: a URL's
        // `/oauth_token` or `/authentication` path says neither.
        let addressless = ADDRESS.replace_all(sentence, " ");
        if SEND_VERB.is_match(sentence)
            && SECRET_NOUN.is_match(&addressless)
            && DESTINATION.is_match(sentence)
            && !LEGIT_AUTH.is_match(&addressless)
            && OWN_KEY.find(sentence).is_none_or(|m| {
                // The reader's own key excuses the sentence only when it is all it sends (its
                // own kind named again, "API key: … append YOUR_KEY", is that key).
                let rest = [&sentence[..m.start()], &sentence[m.end()..]].join(" ");
                let rest = ADDRESS.replace_all(&rest, " ");
                PRIVATE_KEY.is_match(m.as_str())
                    || SECRET_NOUN.is_match(&API_KEY.replace_all(&rest, " "))
            })
        {
            let (context, adjust) = match &discussed {
                Some(d) => (
                    vec![Note::framing(
                        format!(
                            "lowered: the sentence talks about the request (\"{d}\") rather than making it"
                        ),
                        1,
                    )],
                    -1,
                ),
                None => (Vec::new(), 0),
            };
            ctx.emit(
                INJ_SECRET,
                0.75,
                line,
                sentence,
                "asks the agent to send secrets or credentials to a remote destination".into(),
                context,
                place,
                adjust,
            );
        }
    }
}
