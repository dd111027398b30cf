//! OpenAPI documents as tool catalogs: each operation (a method under a path) becomes one tool,
//! as API gateways for agents expose them. OpenAPI 3.x (`openapi`) and Swagger 2.0 (`swagger`),
//! JSON or YAML.
//!
//! A tool's name is its `operationId` (at most 128 bytes, MCP's limit), else `<method>_<path>` in
//! `[A-Za-z0-9_]` (`get_pets_id`; over 128 bytes, its start and a hash of the whole), a name given
//! before taking the first free `_2`, `_3`, … (within 128 bytes);
//! its description the operation's `summary` and `description` (else `GET /pets/{id}`); its input
//! schema an object whose properties are the parameters (path item and operation level, the
//! operation's winning on the same name and place; path parameters always required; a name two
//! places share is prefixed by its place, `query_id`) and, when the operation takes one, the
//! request body as `body` (`application/json`, else another JSON type, else the first). Local
//! `$ref`s to path items, parameters and request bodies are followed; the schemas they reach under
//! `#/components/schemas` or `#/definitions` are copied into the tool's own `$defs` (refs into
//! them rewritten; a ref to anything not copied — left out, in another file — is replaced by a
//! description naming it), so each tool's schema stands alone. Where to send the call is kept
//! under `openapi`: `method`, `path`, `server` (the first `servers` entry, its variables at their
//! defaults, or Swagger 2's scheme, host and base path) and `parameters` (each input property's
//! place in the request: `{"in": "query", "name": "id"}`, the body's `contentType`) and
//! `security` (the credentials the call needs: alternatives of schemes, each with its type and
//! where it goes — [`security`]); the method's semantics become MCP `annotations` (read-only,
//! destructive, idempotent hints).
//!
//! What one document may cost is bounded: every copied schema counts its JSON nodes (a string or
//! key also one per 64 bytes) against [`MAX_TOOL_NODES`] per tool and [`MAX_DOCUMENT_NODES`] per
//! document, of which each operation may use at most its fair share of what is left (what is
//! left ÷ the operations still to build). The operations are served smallest first (by what each
//! would copy in full), so what small ones leave goes to the larger ones, and definitions are
//! copied nearest first: those past the share (or past [`MAX_DEFS`], or a name already copied
//! from the other place) are left out. When an operation's own parameters and body are over its
//! share (they cannot be cut), the operation with the largest parameters and body keeps its name
//! and description with an empty input schema, and its share goes to the rest (the operation
//! itself, when no larger share could let it fit). Parameter names count as keys. Descriptions
//! and server URLs (and security requirements) have a budget of their own of the same size (a description cut at
//! [`MAX_DESCRIPTION_BYTES`], at [`SPENT_DESCRIPTION_BYTES`] once it is spent, when servers are
//! left out, as is one over [`MAX_SERVER_BYTES`]). The document gets a warning for each of these
//! losses; a `$ref` to a target the document lacks or to another file is replaced without one. `$ref` keys are read where schemas are: not inside `enum`,
//! `const`, `default`, `example(s)` or `x-` extensions, and a property named `$ref` is a schema.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde_json::{Map, Value, json};
use skg_model::for_each_schema;

use crate::keylines::Step;

/// HTTP methods an OpenAPI path item may hold operations under, in the order they are read.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// Longest server URL kept (an operation's `openapi.server`; the first 2 KiB of a URL are all
/// browsers and servers are known to take).
const MAX_SERVER_BYTES: usize = 2048;
/// Most `$ref` hops followed for one schema, parameter, body or path item (a cycle stops here).
const MAX_REF_HOPS: usize = 8;
/// Most schema definitions copied into one tool.
const MAX_DEFS: usize = 256;
/// Longest `operationId` taken as a tool's name (MCP's limit).
const MAX_NAME_BYTES: usize = 128;
/// Most bytes of an operation's description kept.
const MAX_DESCRIPTION_BYTES: usize = 32 * 1024;
/// What an operation's description is cut to once the document's budget is spent.
const SPENT_DESCRIPTION_BYTES: usize = 512;
/// Most JSON nodes one tool's input schema may copy.
pub(crate) const MAX_TOOL_NODES: usize = 50_000;
/// Most JSON nodes all of a document's tools may copy together.
pub(crate) const MAX_DOCUMENT_NODES: usize = 2_000_000;

/// Whether `doc` is an OpenAPI or Swagger document (a version key, a string or YAML's unquoted
/// number, and `paths`).
pub(crate) fn is_openapi(doc: &Value) -> bool {
    let version = |k: &str| doc.get(k).is_some_and(|v| v.is_string() || v.is_number());
    (version("openapi") || version("swagger")) && doc.get("paths").is_some_and(Value::is_object)
}

/// The document's operations as flat tool entries (`{name, description, inputSchema,
/// annotations, openapi}`), in path order (by name) then method order, warnings about what
/// was left out, and the keys that say where each operation is written, the first a document
/// has: its method key under the path item it was read from (`paths./a.get`; for a path item
/// given by a local `$ref`, under the item referred to — what was read, whatever is written
/// beside the `$ref`), then its path (`paths./a`).
pub(crate) fn operations(doc: &Value) -> (Vec<Value>, Vec<String>, Vec<Vec<Vec<Step>>>) {
    let Some(Value::Object(paths)) = doc.get("paths") else {
        return (Vec::new(), Vec::new(), Vec::new());
    };
    let mut budget = Budget {
        document: MAX_DOCUMENT_NODES,
        tool: 0,
        text: MAX_DOCUMENT_NODES,
        cut_descriptions: 0,
        left_out_servers: 0,
        left_out_security: 0,
        incomplete_security: 0,
    };
    // (path, method, operation, its path item, `$ref` followed); `x-…` extensions sit beside
    // the paths and are not operations.
    let mut ops = Vec::new();
    let mut keys = Vec::new();
    for (path, written) in paths.iter().filter(|(path, _)| path.starts_with('/')) {
        let listed = vec![Step::Key("paths".to_owned()), Step::Key(path.clone())];
        let (item, referred) = resolve_at(doc, written);
        let read = referred
            .and_then(|p| pointer_steps(doc, p))
            .unwrap_or_else(|| listed.clone());
        for method in METHODS {
            if let Some(op @ Value::Object(_)) = item.get(method) {
                ops.push((path, method, op, item));
                let mut at = read.clone();
                at.push(Step::Key(method.to_owned()));
                keys.push(vec![at, listed.clone()]);
            }
        }
    }
    let mut warnings = Vec::new();
    let max = crate::catalog::MAX_TOOLS;
    if ops.len() > max {
        warnings.push(format!(
            "{} operations: the first {max} (in path order) are read, the rest left out",
            ops.len()
        ));
        ops.truncate(max);
        keys.truncate(max);
    }
    let mut out: Vec<Value> = ops
        .iter()
        .map(|(path, method, op, item)| {
            let server = server(doc, item, op);
            let mut tool = operation(path, method, op, server, &mut budget);
            if let Some(security) = security(doc, op) {
                // Counted with the descriptions and servers, as it is copied into every operation.
                // What could not be kept is marked, so "no credentials" is never a guess.
                // With every alternative left out there is no list: `[]` would say "none needed".
                // Nothing is charged then, and the operation counts with the incomplete ones.
                let list = Value::Array(security.alternatives);
                let size = serde_json::to_string(&list).map_or(usize::MAX, |t| t.len());
                if list.as_array().is_some_and(Vec::is_empty) {
                    tool["openapi"]["securityIncomplete"] = Value::Bool(true);
                    budget.incomplete_security += 1;
                } else if budget.charge(text_cost(size)) {
                    tool["openapi"]["security"] = list;
                    if security.incomplete {
                        tool["openapi"]["securityIncomplete"] = Value::Bool(true);
                        budget.incomplete_security += 1;
                    }
                } else {
                    tool["openapi"]["securityIncomplete"] = Value::Bool(true);
                    budget.left_out_security += 1;
                }
            }
            tool
        })
        .collect();
    let renamed = unique_names(&mut out);
    // Schemas are copied smallest first (by what each would copy in full, ties in path order),
    // each operation taking at most its fair share of what the document has left, so what the
    // small ones leave goes to the larger ones after them and definitions are left out of the
    // largest. An operation whose own parameters and body are over its share cannot be cut: then
    // the operation with the largest parameters and body goes without its schema (its share
    // goes to the rest) and the copy is tried again — or, when no larger share could let it fit,
    // the operation itself goes without.
    let mut memo = Costs::default();
    let costs: Vec<(usize, usize)> = ops
        .iter()
        .map(|(_, _, op, item)| demand(doc, op, shared(item), &mut memo))
        .collect();
    let mut by_demand: BTreeSet<(usize, usize)> =
        costs.iter().enumerate().map(|(i, c)| (c.1, i)).collect();
    let mut by_own: BTreeSet<(usize, usize)> =
        costs.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let (mut over, mut truncated) = (Vec::new(), 0usize);
    while let Some(&(_, i)) = by_demand.first() {
        let (_, _, op, item) = ops[i];
        let share = MAX_TOOL_NODES.min(budget.document / by_demand.len());
        budget.tool = share;
        let before = budget.document;
        if let Some((schema, cut, places)) = input_schema(doc, op, shared(item), &mut budget) {
            out[i]["inputSchema"] = schema;
            if !places.is_empty() {
                out[i]["openapi"]["parameters"] = Value::Object(places);
            }
            truncated += usize::from(cut);
            by_demand.remove(&(costs[i].1, i));
            by_own.remove(&(costs[i].0, i));
        } else {
            // What the failed copy counted goes back. If a larger share could let this operation
            // fit (its count says it would not fit this one), the operation with the largest
            // parameters and body goes without so the rest get more; else (its count was short,
            // or no share is larger) this one does.
            budget.document = before;
            let j = if costs[i].0 > share && share < MAX_TOOL_NODES {
                by_own.last().map_or(i, |&(_, j)| j)
            } else {
                i
            };
            out[j]["inputSchema"] = json!({"type": "object", "properties": {}});
            over.push(j);
            by_demand.remove(&(costs[j].1, j));
            by_own.remove(&(costs[j].0, j));
        }
    }
    over.sort_unstable();
    let over: Vec<String> = over
        .into_iter()
        .map(|i| out[i]["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    if !renamed.is_empty() {
        warnings.push(format!(
            "{} operation(s) renamed, their name given before (an `operationId` used twice, or \
             `<method>_<path>` names that meet, as `/jobs` and `/jobs/` do): {}",
            renamed.len(),
            renamed
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !over.is_empty() {
        warnings.push(format!(
            "{} operation(s) kept without their input schema: their parameters and body alone \
             are over their share of the JSON nodes a document may copy ({} per tool, {} per \
             document; the largest go without so that the rest fit): {}",
            over.len(),
            MAX_TOOL_NODES,
            MAX_DOCUMENT_NODES,
            over.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if budget.left_out_servers > 0 {
        warnings.push(format!(
            "{} operation(s) without their server URL: over {MAX_SERVER_BYTES} bytes, or past \
             the {MAX_DOCUMENT_NODES} nodes descriptions and servers may take",
            budget.left_out_servers
        ));
    }
    if budget.incomplete_security > 0 {
        warnings.push(format!(
            "{} operation(s) with security alternatives left out (`securityIncomplete`): a scheme \
             the document does not define, of an unknown type or an API key placed elsewhere than \
             query, header or cookie, more than \
             {MAX_SECURITY_ALTERNATIVES} alternatives or schemes, more than {MAX_SECURITY_SCOPES} \
             scopes, or a string over {MAX_SECURITY_STRING_BYTES} bytes",
            budget.incomplete_security
        ));
    }
    if budget.left_out_security > 0 {
        warnings.push(format!(
            "{} operation(s) without the credentials they need (`security`, marked \
             `securityIncomplete`): past the {MAX_DOCUMENT_NODES} nodes descriptions, servers and \
             security may take",
            budget.left_out_security
        ));
    }
    if budget.cut_descriptions > 0 {
        warnings.push(format!(
            "{} operation description(s) cut: at {MAX_DESCRIPTION_BYTES} bytes, or at \
             {SPENT_DESCRIPTION_BYTES} once the document's descriptions passed {MAX_DOCUMENT_NODES} \
             nodes (one per 64 bytes)",
            budget.cut_descriptions
        ));
    }
    if truncated > 0 {
        warnings.push(format!(
            "{truncated} operation(s) reach more schema definitions than they may copy (more than \
             {MAX_DEFS}, or past their share of the JSON nodes); the farthest are left out, each \
             `$ref` to one replaced by a description naming it"
        ));
    }
    (out, warnings, keys)
}

/// Name, description, method and path of one operation (the schema comes from
/// [`input_schema`]). The description counts against the document's budget: it is cut at
/// [`MAX_DESCRIPTION_BYTES`], and at [`SPENT_DESCRIPTION_BYTES`] once the budget is spent (a path
/// item given by `$ref` may be shared by thousands of paths).
fn operation(
    path: &str,
    method: &str,
    op: &Value,
    server: Option<Server>,
    budget: &mut Budget,
) -> Value {
    let text = |k: &str| {
        op.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    // An `operationId` longer than any host takes (MCP's 128) is not a name; the fallback is
    // as long as its path key, which the file holds once.
    let name = text("operationId")
        .filter(|n| n.len() <= MAX_NAME_BYTES)
        .map_or_else(|| fallback_name(method, path), str::to_owned);
    let description = match (text("summary"), text("description")) {
        (Some(s), Some(d)) if s != d => format!("{s}\n\n{d}"),
        (Some(s), _) => s.to_owned(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => format!("{} {path}", method.to_uppercase()),
    };
    let keep = if budget.charge(text_cost(description.len().min(MAX_DESCRIPTION_BYTES))) {
        MAX_DESCRIPTION_BYTES
    } else {
        SPENT_DESCRIPTION_BYTES
    };
    budget.cut_descriptions += usize::from(description.len() > keep);
    let description = cut_text(description, keep);
    let mut call = json!({"method": method.to_uppercase(), "path": path});
    // A server is counted with the descriptions (a shared one is copied into every operation);
    // once they are spent it is left out.
    match server {
        Some(Server::Url(url)) if budget.charge(text_cost(url.len())) => {
            call["server"] = Value::String(url);
        }
        Some(_) => budget.left_out_servers += 1,
        None => {}
    }
    json!({
        "name": name,
        "description": description,
        "annotations": annotations(method),
        "openapi": call,
    })
}

/// The base URL an operation is served at, without a trailing `/` (the operation's path starts
/// with one), maybe relative to where the document was found: OpenAPI 3's first `servers` entry
/// of the operation, else of its path item, else of the document, its `{variables}` given their
/// `default` (one over [`MAX_SERVER_BYTES`], as written or with them, is `TooLong`); Swagger 2's `<scheme>://<host><basePath>` (`https` when the operation, else the
/// document, lists it, else the first listed; `https` when none is — the specification says the
/// scheme the document was fetched with, which a file does not tell), or `basePath` alone
/// without a `host`. `None` when nothing names one.
fn server(doc: &Value, item: &Value, op: &Value) -> Option<Server> {
    fn first(v: &Value) -> Option<&Value> {
        v.get("servers")
            .and_then(Value::as_array)
            .and_then(|s| s.first())
            .filter(|s| s.get("url").is_some_and(Value::is_string))
    }
    let url = if let Some(entry) = first(op).or_else(|| first(item)).or_else(|| first(doc)) {
        let raw = entry["url"].as_str().unwrap_or_default();
        if raw.len() > MAX_SERVER_BYTES {
            return Some(Server::TooLong);
        }
        let mut url = raw.to_owned();
        if let Some(Value::Object(vars)) = entry.get("variables") {
            for (name, var) in vars {
                if let Some(d) = var.get("default").and_then(Value::as_str) {
                    let pattern = format!("{{{name}}}");
                    let times = url.matches(&pattern).count();
                    // Each substitution is checked before it is made: a long default put in many
                    // times could not grow the text past the bound.
                    if url.len() - times * pattern.len() + times * d.len() > MAX_SERVER_BYTES {
                        return Some(Server::TooLong);
                    }
                    url = url.replace(&pattern, d);
                }
            }
        }
        url
    } else {
        let text = |k: &str| doc.get(k).and_then(Value::as_str).unwrap_or_default();
        // An operation's `schemes` replaces the document's.
        let scheme = [op, doc]
            .iter()
            .find_map(|v| v.get("schemes")?.as_array())
            .and_then(|listed| {
                let listed: Vec<&str> = listed.iter().filter_map(Value::as_str).collect();
                listed
                    .iter()
                    .find(|s| **s == "https")
                    .or(listed.first())
                    .copied()
            })
            .unwrap_or("https");
        let (host, base) = (text("host"), text("basePath"));
        if scheme.len() + host.len() + base.len() + 3 > MAX_SERVER_BYTES {
            return Some(Server::TooLong);
        }
        match host {
            "" => base.to_owned(),
            host => format!("{scheme}://{host}{base}"),
        }
    };
    let url = url.trim_end_matches('/');
    (!url.is_empty()).then(|| Server::Url(url.to_owned()))
}

/// Most alternatives of an operation's security requirement kept, and most schemes in one.
const MAX_SECURITY_ALTERNATIVES: usize = 16;
/// Most OAuth scopes one scheme of an alternative may ask for.
const MAX_SECURITY_SCOPES: usize = 64;
/// Longest string of a security scheme taken (a name, a header, a scope).
const MAX_SECURITY_STRING_BYTES: usize = 256;
/// OAuth 2 flows, by the names OpenAPI 3 gives them (Swagger 2's `flow` values mapped to them).
const OAUTH_FLOWS: [(&str, &str); 7] = [
    ("authorizationCode", "authorizationCode"),
    ("clientCredentials", "clientCredentials"),
    ("implicit", "implicit"),
    ("password", "password"),
    ("deviceAuthorization", "deviceAuthorization"),
    ("accessCode", "authorizationCode"),
    ("application", "clientCredentials"),
];

/// What [`security`] gives: the alternatives, and whether any was left out.
struct Security {
    alternatives: Vec<Value>,
    incomplete: bool,
}

/// The credentials an operation's call needs, for a gateway that makes it: the operation's
/// `security` (else the document's), as a list of alternatives (any one will do), each the list of
/// schemes it needs together, each scheme as its Security Scheme Object says —
/// `{"id": <its name in the requirement>, "type": "apiKey", "in": "header", "name": "X-Key"}`,
/// `{"id", "type": "http", "scheme": "bearer", "bearerFormat"}`, `{"id", "type": "oauth2",
/// "flows": ["clientCredentials", …], "scopes": […]}`, `{"id", "type": "openIdConnect",
/// "scopes"}`, `{"id", "type": "mutualTLS"}` (Swagger 2's `basic` is `http` with `scheme: basic`,
/// its `flow` the OpenAPI 3 name; the HTTP scheme lowercased; an apiKey `in` query, header or
/// cookie; the roles OpenAPI 3.1 lets other schemes name as `roles`). An empty alternative means the
/// call may be made without credentials. No URL is carried (token, authorization or OpenID
/// discovery endpoints): the document is not trusted to say where a gateway sends its secrets.
/// An alternative is kept whole or not at all: one with a scheme the document does not define,
/// over [`MAX_SECURITY_ALTERNATIVES`] schemes, a string over [`MAX_SECURITY_STRING_BYTES`] or over
/// [`MAX_SECURITY_SCOPES`] scopes is left out and `incomplete` says so (as it does past
/// [`MAX_SECURITY_ALTERNATIVES`] alternatives). `None` when no credential is asked for (no
/// requirement, or `[]`); with every alternative left out, no list and `incomplete`.
fn security(doc: &Value, op: &Value) -> Option<Security> {
    let required = op
        .get("security")
        .or_else(|| doc.get("security"))?
        .as_array()?;
    let schemes = doc
        .pointer("/components/securitySchemes")
        .or_else(|| doc.get("securityDefinitions"));
    let text = |v: &Value| {
        v.as_str()
            .filter(|s| s.len() <= MAX_SECURITY_STRING_BYTES)
            .map(|s| Value::String(s.to_owned()))
    };
    let scheme = |id: &str, scopes: &Value| -> Option<Value> {
        let mut out = Map::new();
        out.insert("id".into(), text(&Value::String(id.to_owned()))?);
        let def = resolve(doc, schemes?.get(id)?);
        let kind = def.get("type").and_then(Value::as_str)?;
        match kind {
            "apiKey" => {
                out.insert("type".into(), kind.into());
                // Where the key goes, as the specification spells it (`Header` read as `header`).
                let place = def.get("in")?.as_str()?.to_ascii_lowercase();
                if !matches!(place.as_str(), "query" | "header" | "cookie") {
                    return None;
                }
                out.insert("in".into(), place.into());
                out.insert("name".into(), text(def.get("name")?)?);
            }
            "http" | "basic" => {
                out.insert("type".into(), "http".into());
                let scheme = if kind == "basic" {
                    Value::String("basic".into())
                } else {
                    Value::String(text(def.get("scheme")?)?.as_str()?.to_ascii_lowercase())
                };
                out.insert("scheme".into(), scheme);
                if let Some(f) = def.get("bearerFormat") {
                    out.insert("bearerFormat".into(), text(f)?);
                }
            }
            "oauth2" | "openIdConnect" | "mutualTLS" => {
                out.insert("type".into(), kind.into());
            }
            _ => return None,
        }
        if kind == "oauth2" {
            let named: Vec<&str> = match (def.get("flows"), def.get("flow")) {
                (Some(Value::Object(flows)), _) => flows.keys().map(String::as_str).collect(),
                (_, Some(Value::String(flow))) => vec![flow.as_str()],
                _ => Vec::new(),
            };
            let mut flows: Vec<&str> = named
                .iter()
                .filter_map(|n| OAUTH_FLOWS.iter().find(|(k, _)| k == n).map(|(_, v)| *v))
                .collect();
            flows.sort_unstable();
            flows.dedup();
            out.insert("flows".into(), flows.into());
        }
        // OAuth and OpenID Connect ask for scopes; since OpenAPI 3.1 other schemes may name the
        // roles the call needs.
        let asked = scopes.as_array().map_or(&[][..], Vec::as_slice);
        if asked.len() > MAX_SECURITY_SCOPES {
            return None;
        }
        let asked = asked.iter().map(text).collect::<Option<Vec<Value>>>()?;
        if matches!(kind, "oauth2" | "openIdConnect") {
            out.insert("scopes".into(), Value::Array(asked));
        } else if !asked.is_empty() {
            out.insert("roles".into(), Value::Array(asked));
        }
        Some(Value::Object(out))
    };
    let mut incomplete = required.len() > MAX_SECURITY_ALTERNATIVES;
    let mut alternatives = Vec::new();
    for requirement in required.iter().take(MAX_SECURITY_ALTERNATIVES) {
        let whole = requirement.as_object().and_then(|r| {
            if r.len() > MAX_SECURITY_ALTERNATIVES {
                return None;
            }
            r.iter()
                .map(|(id, scopes)| scheme(id, scopes))
                .collect::<Option<Vec<Value>>>()
        });
        match whole {
            Some(all) => alternatives.push(Value::Array(all)),
            None => incomplete = true,
        }
    }
    (!alternatives.is_empty() || incomplete).then_some(Security {
        alternatives,
        incomplete,
    })
}

/// An operation's base URL, or that the one it names is over [`MAX_SERVER_BYTES`].
enum Server {
    Url(String),
    TooLong,
}

/// MCP tool annotations (hints a host may use to ask before a call) from the HTTP method's
/// semantics (RFC 9110 §9.2): GET, HEAD, OPTIONS and TRACE are safe, so read-only; PUT, PATCH and
/// DELETE may overwrite or remove (destructive), PUT and DELETE are idempotent; what a POST does
/// is up to the API (RPC-style APIs delete with it), so it gets no `destructiveHint` and MCP's
/// default, destructive, holds. An API reaches outside the host (`openWorldHint`). Hints only:
/// an API may break its methods' contract.
fn annotations(method: &str) -> Value {
    let read_only = matches!(method, "get" | "head" | "options" | "trace");
    let mut hints = json!({"readOnlyHint": read_only, "openWorldHint": true});
    if !read_only {
        if method != "post" {
            hints["destructiveHint"] = Value::Bool(true);
        }
        hints["idempotentHint"] = Value::Bool(matches!(method, "put" | "delete"));
    }
    hints
}

/// What a string of `len` bytes costs: one node, and one more for every 64 bytes.
fn text_cost(len: usize) -> usize {
    1 + len / 64
}

/// `text` cut to at most `max` bytes (at a character boundary) and then marked with `…`.
fn cut_text(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// JSON nodes left to copy (a string or key also counts one per 64 bytes): for the tool being
/// built and for the whole document's schemas; and, apart, for its operations' descriptions.
struct Budget {
    document: usize,
    tool: usize,
    text: usize,
    /// Descriptions cut so far.
    cut_descriptions: usize,
    /// Server URLs left out so far (over [`MAX_SERVER_BYTES`], or the budget spent).
    left_out_servers: usize,
    /// Security requirements left out so far (the budget spent).
    left_out_security: usize,
    /// Security requirements with alternatives left out so far (too large, or undefined schemes).
    incomplete_security: usize,
}

impl Budget {
    /// Counts a description's `cost` against the descriptions' budget; `false` (counting
    /// nothing) when it is spent.
    fn charge(&mut self, cost: usize) -> bool {
        let ok = self.text >= cost;
        if ok {
            self.text -= cost;
        }
        ok
    }

    /// Counts `cost` nodes against both budgets; `None` (counting nothing) when either is short.
    fn take(&mut self, cost: usize) -> Option<()> {
        if self.tool < cost || self.document < cost {
            return None;
        }
        self.tool -= cost;
        self.document -= cost;
        Some(())
    }

    /// [`Budget::copy`], counting nothing when it fails.
    fn try_copy(&mut self, v: &Value) -> Option<Value> {
        let saved = (self.tool, self.document);
        let copy = self.copy(v);
        if copy.is_none() {
            (self.tool, self.document) = saved;
        }
        copy
    }

    /// `v` copied, its nodes counted; `None` once either budget runs out.
    fn copy(&mut self, v: &Value) -> Option<Value> {
        self.take(match v {
            Value::String(t) => text_cost(t.len()),
            _ => 1,
        })?;
        Some(match v {
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m {
                    self.take(k.len() / 64)?;
                    out.insert(k.clone(), self.copy(x)?);
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.copy(x)).collect::<Option<_>>()?),
            other => other.clone(),
        })
    }
}

/// Where a parameter keeps its value's schema ([`parameter_schema`] copies it, [`demand`] counts
/// it).
enum ValueSchema<'a> {
    /// Its `schema`, else its first `content` type's.
    At(&'a Value),
    /// A `content` without a schema.
    Missing,
    /// A Swagger 2 parameter: its other keys are the schema.
    Inline,
}

fn schema_of(p: &Value) -> ValueSchema<'_> {
    if let Some(s) = p.get("schema") {
        return ValueSchema::At(s);
    }
    match p.get("content").and_then(Value::as_object) {
        Some(content) => content
            .values()
            .next()
            .and_then(|m| m.get("schema"))
            .map_or(ValueSchema::Missing, ValueSchema::At),
        None => ValueSchema::Inline,
    }
}

/// Keys of a Swagger 2 non-body parameter that are about the parameter, not its value's schema.
const PARAMETER_KEYS: [&str; 6] = [
    "name",
    "in",
    "required",
    "collectionFormat",
    "allowEmptyValue",
    "description",
];

/// One parameter's schema: OpenAPI 3's `schema` (or its first `content` media type's), a Swagger 2
/// body parameter's `schema`, or a Swagger 2 parameter's inline type (`file` as a binary string).
fn parameter_schema(p: &Value, budget: &mut Budget) -> Option<Value> {
    let mut schema = match schema_of(p) {
        ValueSchema::At(s) => budget.copy(s)?,
        ValueSchema::Missing => json!({}),
        ValueSchema::Inline => {
            let mut s = Map::new();
            if let Value::Object(m) = p {
                for (k, v) in m {
                    if !PARAMETER_KEYS.contains(&k.as_str()) {
                        s.insert(k.clone(), budget.copy(v)?);
                    }
                }
            }
            if s.get("type").and_then(Value::as_str) == Some("file") {
                s.insert("type".into(), "string".into());
                s.insert("format".into(), "binary".into());
            }
            Value::Object(s)
        }
    };
    if let (Some(d), Value::Object(s)) = (p.get("description"), &mut schema) {
        s.insert("description".into(), budget.copy(d)?);
    }
    Some(schema)
}

/// The request body's media type: `application/json` (any case, parameters ignored), else a JSON
/// type (`…+json`, `…/json`), else the first.
fn body_media(content: &Map<String, Value>) -> Option<(&String, &Value)> {
    let types: Vec<&str> = content.keys().map(String::as_str).collect();
    let t = preferred_media(&types)?;
    content.get_key_value(t)
}

/// Of `types`, `application/json` (any case, parameters ignored), else a JSON type (`…+json`,
/// `…/json`), else the first.
fn preferred_media<'a>(types: &[&'a str]) -> Option<&'a str> {
    let essence = |t: &str| {
        t.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    types
        .iter()
        .find(|t| essence(t) == "application/json")
        .or_else(|| {
            types.iter().find(|t| {
                let e = essence(t);
                e.ends_with("+json") || e.ends_with("/json")
            })
        })
        .or_else(|| types.first())
        .copied()
}

/// A path item's parameters, which each of its operations shares.
fn shared(item: &Value) -> Option<&Vec<Value>> {
    item.get("parameters").and_then(Value::as_array)
}

/// The path item's parameters, then the operation's, each `$ref` followed.
fn parameters<'a>(
    doc: &'a Value,
    op: &'a Value,
    shared: Option<&'a Vec<Value>>,
) -> impl Iterator<Item = &'a Value> {
    shared
        .into_iter()
        .flatten()
        .chain(
            op.get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .map(move |p| resolve(doc, p))
}

/// An operation's input schema, whether some of the definitions it reaches were left out, and
/// where each property goes in the HTTP request (`{"in": "query", "name": "id"}`; the body
/// `{"in": "body", "contentType": …}`); `None` when its parameters and body alone would copy
/// more than the budget allows.
fn input_schema(
    doc: &Value,
    op: &Value,
    shared: Option<&Vec<Value>>,
    budget: &mut Budget,
) -> Option<(Value, bool, Map<String, Value>)> {
    // (name, in) → parameter, in first-seen order; the operation's own replace the path item's.
    let mut params: Vec<((String, String), &Value)> = Vec::new();
    let mut at_index: BTreeMap<(String, String), usize> = BTreeMap::new();
    for p in parameters(doc, op, shared) {
        let (Some(n), Some(at)) = (
            p.get("name").and_then(Value::as_str),
            p.get("in").and_then(Value::as_str),
        ) else {
            continue;
        };
        let key = (n.to_owned(), at.to_owned());
        if let Some(&k) = at_index.get(&key) {
            params[k].1 = p;
        } else {
            at_index.insert(key.clone(), params.len());
            params.push((key, p));
        }
    }
    let mut properties = Map::new();
    let mut places = Map::new();
    let mut required = Vec::new();
    // A name two places share (`id` in the path and the query) is told apart by its place.
    let mut places_of: BTreeMap<&str, usize> = BTreeMap::new();
    for ((n, at), _) in &params {
        if at != "body" {
            *places_of.entry(n).or_default() += 1;
        }
    }
    let shared_name = |n: &str| places_of.get(n).is_some_and(|&c| c > 1);
    for ((n, at), p) in &params {
        let prop = if at == "body" {
            "body".to_owned()
        } else if shared_name(n) || n == "body" {
            format!("{at}_{n}")
        } else {
            n.clone()
        };
        if properties.contains_key(&prop) {
            continue;
        }
        // The name is written four times (property, place, its name, maybe `required`), each
        // counted as a key is (one node per 64 bytes).
        budget.take(4 * (prop.len().max(n.len()) / 64))?;
        properties.insert(prop.clone(), parameter_schema(p, budget)?);
        let place = if at == "body" {
            // Swagger 2: the body's media type is the one the operation consumes (its list
            // replaces the document's), JSON first as for OpenAPI 3.
            let consumes = [op, doc]
                .into_iter()
                .find_map(|v| v.get("consumes")?.as_array())
                .and_then(|types| {
                    preferred_media(&types.iter().filter_map(Value::as_str).collect::<Vec<_>>())
                });
            match consumes {
                Some(t) => json!({"in": "body", "contentType": t}),
                None => json!({"in": "body"}),
            }
        } else {
            json!({"in": at, "name": n})
        };
        places.insert(prop.clone(), place);
        if at == "path" || p.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(prop));
        }
    }
    if let Some(body) = op.get("requestBody").map(|b| resolve(doc, b))
        && let Some(Value::Object(content)) = body.get("content")
        && let Some((media_type, media)) = body_media(content)
    {
        let mut schema = match media.get("schema") {
            Some(s) => budget.copy(s)?,
            None => json!({}),
        };
        if let (Some(d), Value::Object(s)) = (body.get("description"), &mut schema)
            && !s.contains_key("description")
        {
            s.insert("description".into(), budget.copy(d)?);
        }
        let prop = if properties.contains_key("body") {
            "request_body"
        } else {
            "body"
        };
        properties.insert(prop.into(), schema);
        places.insert(
            prop.into(),
            json!({"in": "body", "contentType": media_type}),
        );
        if body.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(prop.into()));
        }
    }
    let mut input = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    let (mut defs, copied, cut) = definitions(doc, &mut input, budget);
    rewrite_refs(&mut input, &copied);
    for d in defs.values_mut() {
        rewrite_refs(d, &copied);
    }
    if !defs.is_empty() {
        input["$defs"] = Value::Object(defs);
    }
    Some((input, cut, places))
}

/// What [`demand`] has counted, kept across a document's operations: by address, each parameter
/// and body schema (a path item given by `$ref` is shared by every path naming it); by (pointer
/// prefix, name), each definition (`None`: a target the document lacks). Each holds its cost (at
/// most `MAX_TOOL_NODES + 1`) and the first [`MAX_DEFS`] distinct `$ref`s it holds (none when
/// over the cost: it can never be copied whole).
#[derive(Default)]
struct Costs {
    parts: HashMap<usize, Counted>,
    defs: BTreeMap<(&'static str, String), Option<Counted>>,
}

/// A cost and the `$ref`s counted with it.
type Counted = (usize, Vec<String>);

/// `v`'s cost, at most `MAX_TOOL_NODES + 1`, and its first [`MAX_DEFS`] distinct `$ref`s.
fn cost_and_refs(v: &Value) -> (usize, Vec<String>) {
    let cost = nodes_upto(v, MAX_TOOL_NODES + 1);
    if cost > MAX_TOOL_NODES {
        return (cost, Vec::new());
    }
    let mut seen = BTreeSet::new();
    let refs = refs(&mut v.clone())
        .into_iter()
        .filter(|r| seen.insert(r.clone()))
        .take(MAX_DEFS)
        .collect();
    (cost, refs)
}

/// What an operation's input schema would copy: its parameters and body as written (`own`),
/// and with the definitions they reach, nearest first, as [`definitions`] takes them (`full`),
/// counted as [`Budget::copy`] counts (a little over: a Swagger 2 parameter whole), each at most
/// `MAX_TOOL_NODES + 1`. [`operations`] serves the operations by `full` and, when one fails its
/// share, leaves out the largest `own` (or the one that failed, when no share could fit it).
fn demand(
    doc: &Value,
    op: &Value,
    shared: Option<&Vec<Value>>,
    memo: &mut Costs,
) -> (usize, usize) {
    // What input_schema copies of each parameter (its schema, its first content type's schema,
    // or a Swagger 2 parameter whole) and of the body (the chosen media type's schema), and their
    // descriptions.
    let mut parts: Vec<&Value> = Vec::new();
    // Parameter names, as input_schema counts them (four writes, a node per 64 bytes; a name
    // two places share is a few bytes longer there).
    let mut names = 0usize;
    for p in parameters(doc, op, shared) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        names = names.saturating_add(4 * (name.len() / 64));
        match schema_of(p) {
            ValueSchema::At(schema) => parts.push(schema),
            ValueSchema::Missing => {}
            ValueSchema::Inline => parts.push(p),
        }
        parts.extend(p.get("description"));
    }
    if let Some(body) = op.get("requestBody").map(|b| resolve(doc, b)) {
        if let Some(Value::Object(content)) = body.get("content")
            && let Some(schema) = body_media(content).and_then(|(_, m)| m.get("schema"))
        {
            parts.push(schema);
        }
        parts.extend(body.get("description"));
    }
    let mut own = names;
    let mut todo = VecDeque::new();
    let mut queued = BTreeSet::new();
    let mut queue = |refs: &[String], todo: &mut VecDeque<(&'static str, String)>| {
        for r in refs {
            if queued.len() >= MAX_DEFS {
                return;
            }
            if let Some((prefix, token, _)) = schema_ref(r)
                && queued.insert((prefix, token.to_owned()))
            {
                todo.push_back((prefix, token.to_owned()));
            }
        }
    };
    for part in parts {
        let (cost, refs) = memo
            .parts
            .entry(std::ptr::from_ref(part) as usize)
            .or_insert_with(|| cost_and_refs(part));
        own = own.saturating_add(*cost);
        queue(refs, &mut todo);
    }
    let own = own.min(MAX_TOOL_NODES + 1);
    let mut full = own;
    // Each definition is queued once (at most MAX_DEFS), nearest first.
    while let Some((prefix, token)) = todo.pop_front() {
        if full > MAX_TOOL_NODES {
            break;
        }
        let entry = memo
            .defs
            .entry((prefix, token.clone()))
            .or_insert_with(|| doc.pointer(&format!("{prefix}{token}")).map(cost_and_refs));
        if let Some((cost, next)) = entry {
            full = full.saturating_add(*cost);
            queue(next, &mut todo);
        }
    }
    (own, full.min(MAX_TOOL_NODES + 1))
}

/// The JSON nodes [`Budget::copy`] would count for `v`, counted until they pass `limit`.
fn nodes_upto(v: &Value, limit: usize) -> usize {
    fn count(v: &Value, limit: usize, n: &mut usize) {
        match v {
            Value::String(t) => *n += text_cost(t.len()),
            Value::Object(m) => {
                *n += 1;
                for (k, x) in m {
                    if *n > limit {
                        return;
                    }
                    *n += k.len() / 64;
                    count(x, limit, n);
                }
            }
            Value::Array(a) => {
                *n += 1;
                for x in a {
                    if *n > limit {
                        return;
                    }
                    count(x, limit, n);
                }
            }
            _ => *n += 1,
        }
    }
    let mut n = 0;
    count(v, limit, &mut n);
    n
}

/// Gives each tool whose name an earlier tool (in path order) already has the first free
/// `<name>_<k>` (k = 2, 3, … counted on per name; free of every name in the document, so a later
/// `operationId` is never taken; the name cut so that the whole stays within
/// [`MAX_NAME_BYTES`]); returns `old → new` for each renamed.
fn unique_names(tools: &mut [Value]) -> Vec<String> {
    let name = |t: &Value| t["name"].as_str().unwrap_or_default().to_owned();
    let mut taken: BTreeSet<String> = tools.iter().map(name).collect();
    let mut seen = BTreeSet::new();
    let mut next: BTreeMap<String, usize> = BTreeMap::new();
    let mut renamed = Vec::new();
    for tool in tools {
        let old = name(tool);
        if seen.insert(old.clone()) {
            continue;
        }
        let k = next.entry(old.clone()).or_insert(2);
        let new = loop {
            let suffix = format!("_{k}");
            *k += 1;
            let mut end = old.len().min(MAX_NAME_BYTES.saturating_sub(suffix.len()));
            while !old.is_char_boundary(end) {
                end -= 1;
            }
            let candidate = format!("{}{suffix}", &old[..end]);
            if !taken.contains(&candidate) {
                break candidate;
            }
        };
        taken.insert(new.clone());
        seen.insert(new.clone());
        renamed.push(format!("{old} → {new}"));
        tool["name"] = Value::String(new);
    }
    renamed
}

/// `<method>_<path>` with every run of other characters as one `_` (`get_pets_id`); over
/// [`MAX_NAME_BYTES`], its first 119 bytes, `_` and 8 hex digits of its blake3 hash.
fn fallback_name(method: &str, path: &str) -> String {
    let mut name = method.to_owned();
    let mut gap = true;
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            if gap {
                name.push('_');
            }
            name.push(c);
            gap = false;
        } else {
            gap = true;
        }
    }
    // Longer than a host takes: the start, and a hash of the whole to keep names that share the
    // start apart (ASCII only, so any byte is a character boundary).
    if name.len() > MAX_NAME_BYTES {
        let hash = blake3::hash(name.as_bytes()).to_hex();
        name.truncate(MAX_NAME_BYTES - 9);
        name.push('_');
        name.push_str(&hash[..8]);
    }
    name
}

/// `v` with a local `$ref` (`#`, `#/$defs/X`, any JSON pointer into `doc`) followed, a few hops at
/// most; an unknown or remote reference stays as written. Shared by the catalog's schema writer.
pub(crate) fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    resolve_at(doc, v).0
}

/// [`resolve`], and the JSON pointer of what it resolved to when it followed a reference (the
/// schema writer resolves every `$ref` through [`resolve`]: nothing is allocated for it here).
fn resolve_at<'a>(doc: &'a Value, mut v: &'a Value) -> (&'a Value, Option<&'a str>) {
    let mut at = None;
    for _ in 0..MAX_REF_HOPS {
        let pointer = v
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'));
        match pointer.and_then(|p| Some((p, doc.pointer(p)?))) {
            Some((p, target)) => {
                v = target;
                at = Some(p);
            }
            None => break,
        }
    }
    (v, at)
}

/// The keys and list positions a JSON pointer into `doc` goes through, read exactly as
/// [`Value::pointer`] reads it (`""` is the document, tokens unescaped `~1` then `~0`, a list
/// position without a sign or a leading zero); `None` where it finds nothing.
fn pointer_steps(doc: &Value, pointer: &str) -> Option<Vec<Step>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    if !pointer.starts_with('/') {
        return None;
    }
    let mut at = doc;
    let mut steps = Vec::new();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        match at {
            Value::Object(map) => {
                at = map.get(&token)?;
                steps.push(Step::Key(token));
            }
            Value::Array(items) => {
                let leading_zero = token.starts_with('0') && token.len() != 1;
                if token.starts_with('+') || leading_zero {
                    return None;
                }
                let i: usize = token.parse().ok()?;
                at = items.get(i)?;
                steps.push(Step::Index(i));
            }
            _ => return None,
        }
    }
    Some(steps)
}

/// A `$ref` into the document's schemas → (the pointer prefix, the schema's token, the rest of
/// the pointer): `#/components/schemas/Pet/properties/tag` → (`/components/schemas/`, `Pet`,
/// `/properties/tag`).
fn schema_ref(r: &str) -> Option<(&'static str, &str, &str)> {
    let (prefix, rest) = if let Some(rest) = r.strip_prefix("#/components/schemas/") {
        ("/components/schemas/", rest)
    } else {
        ("/definitions/", r.strip_prefix("#/definitions/")?)
    };
    let (token, tail) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    (!token.is_empty()).then_some((prefix, token, tail))
}

/// Every `$ref` string in `v`'s schemas.
fn refs(v: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    for_each_schema(v, &mut |m| {
        if let Some(Value::String(r)) = m.get("$ref") {
            out.push(r.clone());
        }
    });
    out
}

/// The document's schemas `schema` reaches, directly or through each other, copied whole under
/// their unescaped names, nearest first, until [`MAX_DEFS`] or the first that does not fit the
/// budget; with the (unescaped name → pointer prefix) of each copy, and whether some were left
/// out. A name under both `#/components/schemas` and `#/definitions` is copied from the first
/// reached.
fn definitions(
    doc: &Value,
    schema: &mut Value,
    budget: &mut Budget,
) -> (Map<String, Value>, BTreeMap<String, &'static str>, bool) {
    let mut todo: VecDeque<String> = refs(schema).into();
    let mut seen = BTreeSet::new();
    let mut defs = Map::new();
    let mut copied = BTreeMap::new();
    let mut cut = false;
    while let Some(r) = todo.pop_front() {
        let Some((prefix, token, _)) = schema_ref(&r) else {
            continue;
        };
        if !seen.insert((prefix, token.to_owned())) {
            continue;
        }
        if copied.contains_key(&unescape(token)) {
            // The same name under the other place: left out.
            cut = true;
            continue;
        }
        let Some(target) = doc.pointer(&format!("{prefix}{token}")) else {
            continue;
        };
        if defs.len() >= MAX_DEFS {
            cut = true;
            break;
        }
        let Some(mut copy) = budget.try_copy(target) else {
            cut = true;
            break;
        };
        todo.extend(refs(&mut copy));
        defs.insert(unescape(token), copy);
        copied.insert(unescape(token), prefix);
    }
    (defs, copied, cut)
}

/// Points `$ref`s to the document's schemas that were copied (`copied`: unescaped name →
/// pointer prefix) at the tool's `$defs`, keeping the rest of their pointer. Any other `$ref`
/// (left out, into another file, to something not a schema) would not resolve inside the tool's
/// schema, which hosts reject: it is removed, and a description naming what it pointed at takes
/// its place unless the schema has one.
fn rewrite_refs(v: &mut Value, copied: &BTreeMap<String, &'static str>) {
    for_each_schema(v, &mut |m| {
        let Some(Value::String(r)) = m.get("$ref") else {
            return;
        };
        let to_defs = schema_ref(r)
            .filter(|(prefix, token, _)| copied.get(&unescape(token)) == Some(prefix))
            .map(|(_, token, tail)| format!("#/$defs/{token}{tail}"));
        if let Some(new) = to_defs {
            m.insert("$ref".into(), Value::String(new));
        } else {
            let what = format!("`{r}` of the API (left out of this tool's schema)");
            m.remove("$ref");
            m.entry("description").or_insert(Value::String(what));
        }
    });
}

/// A JSON pointer token unescaped (`~1` → `/`, `~0` → `~`).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_is_read_as_serde_json_reads_it_with_the_steps_to_it() {
        let doc = json!({"a/b": {"m~n": [10, {"x": 1}]}, "": {"": 2}, "l": [0, 1, 2]});
        for p in [
            "",
            "/",
            "//",
            "/a~1b",
            "/a~1b/m~0n",
            "/a~1b/m~0n/1/x",
            "/l/0",
            "/l/01",
            "/l/+1",
            "/l/3",
            "/a~1b/m~0n/-",
            "a/b",
            "/~01",
            "/nope",
            "/a~1b/m~0n/1/x/y",
        ] {
            let got = pointer_steps(&doc, p);
            assert_eq!(got.is_some(), doc.pointer(p).is_some(), "{p}");
            if let (Some(steps), Some(v)) = (got, doc.pointer(p)) {
                let mut at = &doc;
                for step in &steps {
                    at = match step {
                        Step::Key(k) => &at[k.as_str()],
                        Step::Index(i) => &at[*i],
                    };
                }
                assert!(std::ptr::eq(at, v), "{p}: {steps:?}");
            }
        }
    }

    #[test]
    fn an_openapi_3_document_gives_one_tool_per_operation() {
        let doc = json!({
            "openapi": "3.1.0",
            "paths": {
                "/pets/{id}": {
                    "parameters": [
                        {"name": "id", "in": "path", "schema": {"type": "string"}},
                        {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                    ],
                    "get": {
                        "operationId": "getPet",
                        "summary": "Get a pet",
                        "description": "Returns one pet.",
                        "parameters": [{"$ref": "#/components/parameters/Verbose"}],
                    },
                    "put": {
                        "requestBody": {"$ref": "#/components/requestBodies/PetBody"},
                    },
                },
                "/health": {"get": {"summary": "Health"}, "x-note": "not an operation"},
            },
            "components": {
                "parameters": {"Verbose": {"name": "verbose", "in": "query", "required": true,
                    "description": "Say more", "schema": {"type": "boolean"}}},
                "requestBodies": {"PetBody": {"required": true, "description": "The pet",
                    "content": {"text/plain": {"schema": {"type": "string"}},
                        "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
                "schemas": {
                    "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/components/schemas/Tag"}}},
                    "Tag": {"type": "string"},
                    "Unused": {"type": "integer"},
                },
            },
        });
        assert!(is_openapi(&doc));
        let (ops, warnings, _) = operations(&doc);
        assert!(warnings.is_empty(), "{warnings:?}");
        let names: Vec<&str> = ops.iter().filter_map(|o| o["name"].as_str()).collect();
        // Paths by name (`/health` before `/pets/{id}`), then methods in their order.
        assert_eq!(names, ["get_health", "getPet", "put_pets_id"]);
        assert_eq!(ops[0]["description"], "Health");
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {}})
        );
        // The operation's `verbose` replaces the path item's; `id` is required as a path one.
        assert_eq!(ops[1]["description"], "Get a pet\n\nReturns one pet.");
        assert_eq!(
            ops[1]["inputSchema"],
            json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "verbose": {"type": "boolean", "description": "Say more"}},
                "required": ["id", "verbose"]})
        );
        assert_eq!(
            (
                ops[1]["openapi"]["method"].as_str(),
                ops[1]["openapi"]["path"].as_str()
            ),
            (Some("GET"), Some("/pets/{id}"))
        );
        // No summary: the method and path describe it; the JSON body's schema, its reachable
        // definitions copied in (not `Unused`), refs pointed at them.
        assert_eq!(ops[2]["description"], "PUT /pets/{id}");
        assert_eq!(
            ops[2]["inputSchema"],
            json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "verbose": {"type": "boolean"},
                "body": {"$ref": "#/$defs/Pet", "description": "The pet"}},
                "required": ["id", "body"],
                "$defs": {
                    "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}}},
                    "Tag": {"type": "string"}}})
        );
    }

    #[test]
    fn a_swagger_2_document_keeps_inline_types_and_body_parameters() {
        let doc = json!({
            "swagger": "2.0",
            "consumes": ["application/json", "application/xml"],
            "paths": {"/orders": {"post": {
                "operationId": "createOrder",
                "parameters": [
                    {"name": "dryRun", "in": "query", "type": "boolean", "description": "Check only"},
                    {"name": "order", "in": "body", "required": true,
                        "schema": {"$ref": "#/definitions/Order"}},
                ],
            }}},
            "definitions": {"Order": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
        });
        let (ops, _, _) = operations(&doc);
        assert_eq!(ops.len(), 1);
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {
                "dryRun": {"type": "boolean", "description": "Check only"},
                "body": {"$ref": "#/$defs/Order"}},
                "required": ["body"],
                "$defs": {"Order": {"type": "object", "properties": {"qty": {"type": "integer"}}}}})
        );
        // The body's media type is the first the document consumes.
        assert_eq!(
            ops[0]["openapi"]["parameters"],
            json!({"dryRun": {"in": "query", "name": "dryRun"},
                "body": {"in": "body", "contentType": "application/json"}})
        );
        // A document without a version key or paths is not OpenAPI.
        assert!(!is_openapi(&json!({"paths": {}})));
        assert!(!is_openapi(&json!({"openapi": "3.0.0"})));
        assert_eq!(fallback_name("delete", "/a/{b}/c-d"), "delete_a_b_c_d");
    }

    /// The `openapi` object of the operation with this method (`null` when there is none).
    fn openapi_of(ops: &[Value], method: &str) -> Value {
        ops.iter()
            .find(|o| o["openapi"]["method"] == method)
            .map(|o| o["openapi"].clone())
            .unwrap_or_default()
    }

    #[test]
    fn operations_say_which_credentials_their_call_needs() {
        // OpenAPI 3: the document's requirement unless the operation has its own; `[]` needs
        // none, `{}` among the alternatives lets the call go without; a scheme given by `$ref`
        // is followed; an alternative with a scheme not defined is left out, and marked.
        let doc = json!({"openapi": "3.0.0",
            "security": [{"key": []}],
            "components": {"securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "d"},
                "jwt": {"$ref": "#/components/x-schemes/jwt"},
                "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://t.invalid"}, "x-other": {}}},
                "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://o.invalid/.well-known"}},
                "x-schemes": {"jwt": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"}}},
            "paths": {"/a": {
                "get": {},
                "put": {"security": []},
                "post": {"security": [{"oauth": ["pets:write", "pets:read"], "jwt": []}, {}]},
                "delete": {"security": [{"nowhere": []}, {"oidc": ["openid"]}]}}}});
        let (ops, warnings, _) = operations(&doc);
        let call = |method: &str| openapi_of(&ops, method);
        let key = json!({"id": "key", "type": "apiKey", "in": "header", "name": "X-API-Key"});
        assert_eq!(call("GET")["security"], json!([[key]]));
        assert!(call("PUT").get("security").is_none());
        // Alternatives in order; the schemes of one by name (the map's order); the HTTP scheme
        // lowercased; the OAuth flows by name, no URL.
        assert_eq!(
            call("POST")["security"],
            json!([
                [{"id": "jwt", "type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                 {"id": "oauth", "type": "oauth2", "flows": ["clientCredentials"],
                  "scopes": ["pets:write", "pets:read"]}],
                []
            ])
        );
        assert!(call("POST").get("securityIncomplete").is_none());
        assert_eq!(
            call("DELETE")["security"],
            json!([[{"id": "oidc", "type": "openIdConnect", "scopes": ["openid"]}]])
        );
        assert_eq!(call("DELETE")["securityIncomplete"], true);
        // Every alternative left out: no list (`[]` would say no credential is needed), the mark.
        let doc = json!({"openapi": "3.1.0",
            "components": {"securitySchemes": {
                "odd": {"type": "apiKey", "in": "body", "name": "k"},
                "basic": {"type": "http", "scheme": "basic"},
                "hk": {"type": "apiKey", "in": "Header", "name": "K"}}},
            "paths": {"/p": {"get": {"security": [{"nowhere": []}, {"odd": []}]},
                             "put": {"security": [{"basic": ["admin"]}]},
                             "post": {"security": [{"hk": []}]}}}});
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("1 operation(s) with security alternatives left out"));
        let (ops, warnings, _) = operations(&doc);
        let call = |method: &str| openapi_of(&ops, method);
        assert!(call("GET").get("security").is_none());
        assert_eq!(call("GET")["securityIncomplete"], true);
        // Counted as incomplete (not as left out for the budget).
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("1 operation(s) with security alternatives left out"));
        // OpenAPI 3.1: the roles a non-OAuth scheme names; `in` as the specification spells it.
        assert_eq!(
            call("PUT")["security"],
            json!([[{"id": "basic", "type": "http", "scheme": "basic", "roles": ["admin"]}]])
        );
        assert_eq!(
            call("POST")["security"],
            json!([[{"id": "hk", "type": "apiKey", "in": "header", "name": "K"}]])
        );
        // Swagger 2: `securityDefinitions`, `basic` is HTTP basic, `flow` by its OpenAPI 3 name.
        let doc = json!({"swagger": "2.0",
            "securityDefinitions": {"b": {"type": "basic"},
                "k": {"type": "apiKey", "in": "query", "name": "k"},
                "o": {"type": "oauth2", "flow": "application", "tokenUrl": "https://t.invalid", "scopes": {"r": "read"}}},
            "paths": {"/p": {"get": {"security": [{"b": []}, {"k": []}, {"o": ["r"]}]}}}});
        let (ops, _, _) = operations(&doc);
        assert_eq!(
            ops[0]["openapi"]["security"],
            json!([[{"id": "b", "type": "http", "scheme": "basic"}],
                   [{"id": "k", "type": "apiKey", "in": "query", "name": "k"}],
                   [{"id": "o", "type": "oauth2", "flows": ["clientCredentials"], "scopes": ["r"]}]])
        );
        // Kept whole or not at all: 20 alternatives keep their first 16; one naming a header over
        // 256 bytes is left out rather than cut into a wrong name.
        let mut defs = Map::new();
        for i in 0..20 {
            defs.insert(
                format!("s{i:02}"),
                json!({"type": "apiKey", "in": "header", "name": format!("X-{i}")}),
            );
        }
        defs.insert(
            "s00".into(),
            json!({"type": "apiKey", "in": "header", "name": "h".repeat(257)}),
        );
        let many: Vec<Value> = (0..20).map(|i| json!({format!("s{i:02}"): []})).collect();
        let doc = json!({"openapi": "3.0.0", "security": many,
            "components": {"securitySchemes": defs}, "paths": {"/p": {"get": {}}}});
        let (ops, _, _) = operations(&doc);
        let got = ops[0]["openapi"]["security"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(got.len(), 15);
        assert_eq!(got[0][0]["id"], "s01");
        assert_eq!(ops[0]["openapi"]["securityIncomplete"], true);
    }

    #[test]
    fn operations_carry_where_to_send_the_call_and_method_hints() {
        // OpenAPI 3: the operation's servers, else the path item's, else the document's, with
        // variables at their defaults and no trailing `/` (methods in the order GET, PUT, POST,
        // DELETE, OPTIONS, HEAD, PATCH, TRACE).
        let doc = json!({"openapi": "3.0.0", "servers": [{"url": "https://api.example.com/v1/"}],
            "paths": {
                "/a": {"servers": [{"url": "https://{region}.example.com",
                        "variables": {"region": {"default": "eu", "enum": ["eu", "us"]}}}],
                    "get": {}, "delete": {"servers": [{"url": "/"}, {"url": "/second"}]}},
                "/b": {"post": {}, "put": {}, "patch": {}, "head": {}}}});
        let (ops, _, _) = operations(&doc);
        let got: Vec<(&str, &str)> = ops
            .iter()
            .map(|o| {
                let call = &o["openapi"];
                (
                    call["method"].as_str().unwrap_or(""),
                    call["server"].as_str().unwrap_or("(none)"),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("GET", "https://eu.example.com"),
                // `/` is the document's own host: nothing to prefix.
                ("DELETE", "(none)"),
                ("PUT", "https://api.example.com/v1"),
                ("POST", "https://api.example.com/v1"),
                ("HEAD", "https://api.example.com/v1"),
                ("PATCH", "https://api.example.com/v1"),
            ]
        );
        // Safe methods are read-only; PUT, PATCH and DELETE may overwrite or remove, PUT and
        // DELETE are idempotent; a POST says nothing of destruction (MCP's default: destructive).
        let hint = |i: usize, k: &str| ops[i]["annotations"][k].as_bool();
        assert_eq!(hint(0, "readOnlyHint"), Some(true));
        assert_eq!(hint(0, "destructiveHint"), None);
        assert_eq!(hint(4, "readOnlyHint"), Some(true));
        for (i, destructive, idempotent) in [
            (1, Some(true), true),
            (2, Some(true), true),
            (3, None, false),
            (5, Some(true), false),
        ] {
            let method = &ops[i]["openapi"]["method"];
            assert_eq!(hint(i, "readOnlyHint"), Some(false), "{method}");
            assert_eq!(hint(i, "destructiveHint"), destructive, "{method}");
            assert_eq!(hint(i, "idempotentHint"), Some(idempotent), "{method}");
        }
        assert!(
            ops.iter()
                .all(|o| o["annotations"]["openWorldHint"] == true)
        );
        // Swagger 2: scheme (https when listed, else the first), host and base path; without a
        // host, the base path alone; without either, no server.
        let doc = json!({"swagger": "2.0", "host": "petstore.io", "basePath": "/v2",
            "schemes": ["http", "https"],
            "paths": {"/p": {"get": {}, "put": {"schemes": ["wss"]}}}});
        let (ops, _, _) = operations(&doc);
        assert_eq!(ops[0]["openapi"]["server"], "https://petstore.io/v2");
        assert_eq!(ops[1]["openapi"]["server"], "wss://petstore.io/v2");
        let (ops, _, _) = operations(&json!({"swagger": "2.0", "basePath": "/v2",
            "paths": {"/p": {"get": {}}}}));
        assert_eq!(ops[0]["openapi"]["server"], "/v2");
        let (ops, _, _) = operations(&json!({"openapi": "3.0.0", "paths": {"/p": {"get": {}}}}));
        assert!(ops[0]["openapi"].get("server").is_none());
        // A server that would pass 2 KiB once its variables are put in is left out (1,000 bytes
        // put in 3 times), before the text is built.
        let doc = json!({"openapi": "3.0.0", "servers": [{"url": "https://{a}{a}{a}",
            "variables": {"a": {"default": "x".repeat(1_000)}}}], "paths": {"/p": {"get": {}}}});
        let (ops, warnings, _) = operations(&doc);
        assert!(ops[0]["openapi"].get("server").is_none());
        assert_eq!(
            warnings,
            [
                "1 operation(s) without their server URL: over 2048 bytes, or past the 2000000 \
              nodes descriptions and servers may take"
            ]
        );
        // Swagger 2: an operation's `consumes` replaces the document's, JSON first.
        let doc = json!({"swagger": "2.0", "consumes": ["application/json"], "paths": {"/p": {
            "post": {"consumes": ["text/plain", "application/vnd.api+json"],
                "parameters": [{"name": "b", "in": "body", "schema": {}}]},
            "put": {"consumes": [], "parameters": [{"name": "b", "in": "body", "schema": {}}]}}}});
        let (ops, _, _) = operations(&doc);
        assert_eq!(
            ops[1]["openapi"]["parameters"]["body"],
            json!({"in": "body", "contentType": "application/vnd.api+json"})
        );
        assert_eq!(
            ops[0]["openapi"]["parameters"]["body"],
            json!({"in": "body"})
        );
        // Each input property's place in the request: a name two places share keeps its own
        // name there; the body its media type.
        let doc = json!({"openapi": "3.0.0", "paths": {"/p/{id}": {"post": {
            "parameters": [{"name": "id", "in": "path"}, {"name": "id", "in": "query"},
                {"name": "X-Trace", "in": "header"}],
            "requestBody": {"content": {"application/merge-patch+json": {"schema": {}}}}}}}});
        let (ops, _, _) = operations(&doc);
        assert_eq!(
            ops[0]["openapi"]["parameters"],
            json!({
                "path_id": {"in": "path", "name": "id"},
                "query_id": {"in": "query", "name": "id"},
                "X-Trace": {"in": "header", "name": "X-Trace"},
                "body": {"in": "body", "contentType": "application/merge-patch+json"}})
        );
    }

    #[test]
    fn names_given_twice_are_made_unique() {
        // `/jobs` and `/jobs/` both fall back to `get_jobs`; a later operation is called
        // `get_jobs_2` already, so the second `get_jobs` becomes `get_jobs_3`; an `operationId`
        // used twice (against the specification) is renamed the same way.
        let doc = json!({"openapi": "3.0.0", "paths": {
            "/jobs": {"get": {}, "post": {"operationId": "make"}},
            "/jobs/": {"get": {}, "put": {"operationId": "make"}},
            "/x": {"get": {"operationId": "get_jobs_2"}}}});
        let (ops, warnings, _) = operations(&doc);
        let names: Vec<&str> = ops
            .iter()
            .map(|o| o["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            names,
            ["get_jobs", "make", "get_jobs_3", "make_2", "get_jobs_2"]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("2 operation(s) renamed")
                && warnings[0].ends_with(": get_jobs → get_jobs_3, make → make_2"),
            "{warnings:?}"
        );
        // Within 128 bytes: a 128-byte name given twice keeps 126 of its bytes and `_2`; a long
        // path's fallback name keeps 119 bytes and a hash of the whole.
        let long = "a".repeat(128);
        let path = format!("/{}", "b".repeat(200));
        let doc = json!({"openapi": "3.0.0", "paths": {
            "/l1": {"get": {"operationId": long}}, "/l2": {"get": {"operationId": long}},
            path: {"get": {}}}});
        let (ops, _, _) = operations(&doc);
        let whole = format!("get_{}", "b".repeat(200));
        let hash = blake3::hash(whole.as_bytes()).to_hex();
        let want = format!("get_{}_{}", "b".repeat(115), &hash[..8]);
        assert_eq!(want.len(), 128);
        assert_eq!(ops[0]["name"], json!(want));
        assert_eq!(ops[1]["name"], json!(long));
        assert_eq!(ops[2]["name"], json!(format!("{}_2", "a".repeat(126))));
    }

    #[test]
    fn names_two_places_share_are_told_apart_and_refs_keep_their_tails() {
        let doc = json!({
            "openapi": "3.0.0",
            "x-extension": {"get": {}},
            "paths": {
                "x-note": {"get": {"summary": "not a path"}},
                "/items/{id}": {"post": {
                    "parameters": [
                        {"name": "id", "in": "path", "schema": {"type": "string"}},
                        {"name": "id", "in": "query", "schema": {"type": "integer"}},
                        {"name": "body", "in": "query", "required": true, "schema": {"type": "string"}},
                        {"name": "filter", "in": "query", "content": {"application/json":
                            {"schema": {"type": "object"}}}},
                    ],
                    "requestBody": {"required": true, "content": {
                        "application/geo+json": {"schema": {"type": "string"}},
                        "Application/JSON; charset=utf-8": {"schema":
                            {"$ref": "#/components/schemas/Item/properties/tag"}},
                    }},
                }},
            },
            "components": {"schemas": {"Item": {"type": "object", "properties": {
                "tag": {"type": "string", "enum": ["a", "b"]}}}}},
        });
        let (ops, warnings, _) = operations(&doc);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(ops.len(), 1, "x- keys are not paths");
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {
                "path_id": {"type": "string"},
                "query_id": {"type": "integer"},
                "query_body": {"type": "string"},
                "filter": {"type": "object"},
                "body": {"$ref": "#/$defs/Item/properties/tag"}},
                "required": ["path_id", "query_body", "body"],
                "$defs": {"Item": {"type": "object", "properties": {
                    "tag": {"type": "string", "enum": ["a", "b"]}}}}})
        );
    }

    #[test]
    fn swagger_form_fields_keep_their_constraints_and_files_are_binary_strings() {
        let doc = json!({"swagger": 2.0, "paths": {"/upload": {"post": {"parameters": [
            {"name": "file", "in": "formData", "type": "file", "required": true},
            {"name": "copies", "in": "formData", "type": "integer", "minimum": 1,
                "collectionFormat": "csv"},
        ]}}}});
        assert!(is_openapi(&doc), "an unquoted YAML version is a number");
        let (ops, _, _) = operations(&doc);
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {
                "file": {"type": "string", "format": "binary"},
                "copies": {"type": "integer", "minimum": 1}},
                "required": ["file"]})
        );
    }

    #[test]
    fn the_smallest_operations_are_served_first() {
        // 40 large operations (/a00 … /a39: a parameter schema of 49,003 JSON nodes, an object,
        // its type and an array of 49,000 values; /a00's 49,503) before 100 small ones (/b000 …
        // /b099: 1,003 nodes), 2,060,920 in all, over the document's 2,000,000. Served smallest
        // first, the small ones copy 100,300, leaving 1,899,700 for the large. The first of them
        // (/a01; /a00 is served last) gets 1,899,700 / 40 = 47,492, under 49,003: its copy fails
        // (counting nothing) and the operation with the largest parameters, /a00, goes without;
        // /a01 again gets 1,899,700 / 39 = 48,710, fails, and the largest left goes without
        // (all tie: the last in path order, /a39); then 1,899,700 / 38 = 49,992 fits, and so do
        // the remaining 37 (38 × 49,003 = 1,862,114). Under the plain fair share in path order
        // all 40 large ones went without (shares 2,000,000 / 140 = 14,285 to 2,000,000 / 101 =
        // 19,801).
        let schema = |n: u32| json!({"type": "integer", "enum": (0..n).collect::<Vec<_>>()});
        let mut paths = Map::new();
        for i in 0..40 {
            let n = if i == 0 { 49_500 } else { 49_000 };
            paths.insert(
                format!("/a{i:02}"),
                json!({"get": {"parameters": [{"name": "v", "in": "query", "schema": schema(n)}]}}),
            );
        }
        for i in 0..100 {
            paths.insert(
                format!("/b{i:03}"),
                json!({"get": {"parameters": [{"name": "v", "in": "query", "schema": schema(1_000)}]}}),
            );
        }
        let (ops, warnings, _) = operations(&json!({"openapi": "3.0.0", "paths": paths}));
        assert_eq!(ops.len(), 140);
        let kept: Vec<bool> = ops
            .iter()
            .map(|o| o["inputSchema"]["properties"]["v"].is_object())
            .collect();
        assert_eq!(ops[0]["openapi"]["path"], "/a00");
        assert_eq!(ops[39]["openapi"]["path"], "/a39");
        assert!(
            !kept[0] && !kept[39],
            "the largest and the last of the ties go without"
        );
        assert_eq!(kept.iter().filter(|k| **k).count(), 138);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("2 operation(s) kept without their input schema")
                && warnings[0].ends_with(": get_a00, get_a39"),
            "{warnings:?}"
        );
    }

    #[test]
    fn an_operation_that_cannot_fit_goes_without_alone() {
        // 100 operations with one small parameter, and /x whose body's description alone is
        // 3,300,000 bytes: 51,563 nodes (1 + 3,300,000 / 64), over the 50,000 any one tool may
        // copy. /x is counted with its description, so it is served last; its copy fails with
        // the largest share there is, so it goes without itself and no other operation does.
        let mut paths = Map::new();
        for i in 0..100 {
            paths.insert(
                format!("/p{i:03}"),
                json!({"get": {"parameters": [{"name": "q", "in": "query",
                    "schema": {"type": "string"}}]}}),
            );
        }
        paths.insert(
            "/x".into(),
            json!({"post": {"requestBody": {"description": "d".repeat(3_300_000),
                "content": {"application/json": {"schema": {"type": "object"}}}}}}),
        );
        let (ops, warnings, _) = operations(&json!({"openapi": "3.0.0", "paths": paths}));
        let without: Vec<&str> = ops
            .iter()
            .filter(|o| {
                o["inputSchema"]["properties"]
                    .as_object()
                    .is_some_and(Map::is_empty)
            })
            .map(|o| o["openapi"]["path"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(without, ["/x"]);
        assert!(
            warnings[0].starts_with("1 operation(s) kept without their input schema"),
            "{warnings:?}"
        );
    }

    #[test]
    fn parameter_names_are_counted() {
        // A 1,000,000-byte parameter name is written four times into the tool (property, place,
        // its name, `required`): 4 × 15,625 = 62,500 nodes, over the 50,000 a tool may copy, so
        // the operation keeps no schema; a 100-byte one costs 4 × 1 and is kept.
        let doc = |n: usize| {
            json!({"openapi": "3.0.0", "paths": {"/p/{x}": {"get": {"parameters": [
                {"name": "x".repeat(n), "in": "path", "schema": {"type": "string"}}]}}}})
        };
        let (ops, warnings, _) = operations(&doc(1_000_000));
        assert_eq!(
            ops[0]["inputSchema"],
            json!({"type": "object", "properties": {}})
        );
        assert!(
            warnings[0].starts_with("1 operation(s) kept without"),
            "{warnings:?}"
        );
        let (ops, warnings, _) = operations(&doc(100));
        assert!(ops[0]["inputSchema"]["properties"]["x".repeat(100)].is_object());
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn what_a_document_may_copy_is_bounded() {
        // 100 operations, each taking a parameter whose schema is 30,003 JSON nodes (an object,
        // its type, an array of 30,000 values), written inline or as a `$ref` to a definition.
        let values: Vec<u32> = (0..30_000).collect();
        let big = json!({"type": "integer", "enum": values});
        let doc_with = |schema: &Value| {
            let mut paths = Map::new();
            for i in 0..100 {
                paths.insert(
                    format!("/p{i:03}"),
                    json!({"get": {"parameters": [{"name": "v", "in": "query", "schema": schema}]}}),
                );
            }
            json!({"openapi": "3.0.0", "paths": paths, "components": {"schemas": {"Big": big}}})
        };
        // Inline: each operation may copy at most what is left ÷ the operations still to build; a
        // failed copy counts nothing (descriptions have their own budget) and the operation with
        // the largest parameters (all tie: the last in path order) goes without. While k
        // operations are left and 2,000,000 ÷ k is under 30,003 (k ≥ 67: 2,000,000 / 67 =
        // 29,850) the copy fails, so /p099 … /p066 (34) keep no schema; from k = 66 (30,303) each
        // fits, and all 66 do (66 × 30,003 = 1,980,198).
        let (ops, warnings, _) = operations(&doc_with(&big));
        assert_eq!(ops.len(), 100);
        let has_params = |o: &Value| {
            o["inputSchema"]["properties"]
                .as_object()
                .is_some_and(|p| !p.is_empty())
        };
        let kept: Vec<bool> = ops.iter().map(has_params).collect();
        assert_eq!(kept.iter().filter(|k| !**k).count(), 34);
        assert!(kept[..66].iter().all(|k| *k) && kept[66..].iter().all(|k| !k));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("34 operation(s) kept without their input schema"),
            "{warnings:?}"
        );
        // Through a `$ref`: every operation keeps its parameter (2 nodes, the `{"$ref"}` object
        // and its string); the definition (30,003 more) is copied once the share reaches 30,005
        // — from the 35th operation again (its share (2,000,000 − 34 × 2) / 66 = 30,302; the
        // 34th's 1,999,934 / 67 = 29,849) — and is left out before, its `$ref` replaced by a
        // description naming it.
        let (ops, warnings, _) =
            operations(&doc_with(&json!({"$ref": "#/components/schemas/Big"})));
        assert!(ops.iter().all(has_params));
        let refs: Vec<&str> = ops
            .iter()
            .map(|o| {
                o["inputSchema"]["properties"]["v"]["$ref"]
                    .as_str()
                    .unwrap_or("")
            })
            .collect();
        assert!(refs[..34].iter().all(|r| r.is_empty()), "{refs:?}");
        assert!(refs[34..].iter().all(|r| *r == "#/$defs/Big"), "{refs:?}");
        assert_eq!(
            ops[33]["inputSchema"]["properties"]["v"]["description"],
            "`#/components/schemas/Big` of the API (left out of this tool's schema)"
        );
        assert!(ops[33]["inputSchema"].get("$defs").is_none());
        assert!(ops[34]["inputSchema"]["$defs"]["Big"]["enum"].is_array());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("34 operation(s) reach more schema definitions"),
            "{warnings:?}"
        );
        // Past MAX_DEFS definitions (nearest first: the body's properties in order) the rest are
        // left out, S256 to S259.
        let mut props = Map::new();
        let mut schemas = Map::new();
        for i in 0..MAX_DEFS + 4 {
            props.insert(
                format!("f{i:03}"),
                json!({"$ref": format!("#/components/schemas/S{i:03}")}),
            );
            schemas.insert(format!("S{i:03}"), json!({"type": "string"}));
        }
        let doc = json!({"openapi": "3.0.0", "paths": {"/x": {"post": {"requestBody": {"content":
            {"application/json": {"schema": {"type": "object", "properties": props}}}}}}},
            "components": {"schemas": schemas}});
        let (ops, warnings, _) = operations(&doc);
        let schema = &ops[0]["inputSchema"];
        assert_eq!(schema["$defs"].as_object().map(Map::len), Some(MAX_DEFS));
        let left: Vec<&str> = schema["properties"]["body"]["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| v.get("$ref").is_none())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(left, ["f256", "f257", "f258", "f259"]);
        assert!(warnings[0].contains("more than 256"), "{warnings:?}");
    }

    #[test]
    fn a_shared_description_is_cut_and_counted() {
        // 5,000 paths share one path item (by `$ref`) whose operation has a 100,000-byte
        // description. Each is cut at 32 KiB and costs 1 + 32,768 / 64 = 513 nodes: 3,898 fit the
        // document's 2,000,000 (3,898 × 513 = 1,999,674), the other 1,102 are cut at 512 bytes.
        let mut paths = Map::new();
        for i in 0..5_000 {
            paths.insert(format!("/p{i:04}"), json!({"$ref": "#/x-item"}));
        }
        let doc = json!({"openapi": "3.0.0", "paths": paths,
            "x-item": {"get": {"description": "a".repeat(100_000)}}});
        let (ops, warnings, _) = operations(&doc);
        assert_eq!(ops.len(), 5_000);
        assert_eq!(
            warnings,
            [format!(
                "5000 operation description(s) cut: at {MAX_DESCRIPTION_BYTES} bytes, or at \
                 {SPENT_DESCRIPTION_BYTES} once the document's descriptions passed \
                 {MAX_DOCUMENT_NODES} nodes (one per 64 bytes)"
            )]
        );
        let len = |o: &Value| o["description"].as_str().map_or(0, str::len);
        // `…` is 3 bytes.
        let long = ops
            .iter()
            .filter(|o| len(o) == MAX_DESCRIPTION_BYTES + 3)
            .count();
        let short = ops
            .iter()
            .filter(|o| len(o) == SPENT_DESCRIPTION_BYTES + 3)
            .count();
        assert_eq!((long, short), (3_898, 1_102));
    }

    #[test]
    fn a_name_under_both_schema_places_is_copied_once() {
        // `#/definitions/X` and `#/components/schemas/X` are different schemas: the first reached
        // is copied as `$defs/X`, the other is left out rather than pointed at the wrong copy.
        let doc = json!({"openapi": "3.0.0", "paths": {"/x": {"post": {"requestBody": {"content":
            {"application/json": {"schema": {"type": "object", "properties": {
                "a": {"$ref": "#/components/schemas/X"},
                "b": {"$ref": "#/definitions/X"}}}}}}}}},
            "components": {"schemas": {"X": {"type": "string"}}},
            "definitions": {"X": {"type": "integer"}}});
        let (ops, _, _) = operations(&doc);
        let schema = &ops[0]["inputSchema"];
        let body = &schema["properties"]["body"]["properties"];
        assert_eq!(body["a"]["$ref"], "#/$defs/X");
        assert_eq!(schema["$defs"]["X"]["type"], "string");
        assert!(body["b"].get("$ref").is_none(), "{body}");
        assert!(
            body["b"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("#/definitions/X"))
        );
    }

    #[test]
    fn refs_are_read_where_schemas_are_and_names_are_bounded() {
        // A property called `$ref` is a schema (its own ref is rewritten); a `$ref` inside
        // `enum`, `default` or an `x-` extension is data and left as it is.
        let doc = json!({"openapi": "3.0.0", "paths": {"/x": {"post": {
            "operationId": "o".repeat(MAX_NAME_BYTES + 1),
            "requestBody": {"content": {"application/json": {"schema": {"type": "object",
                "properties": {
                    "$ref": {"$ref": "#/components/schemas/X"},
                    "enum": {"type": "object", "enum": [{"$ref": "#/components/schemas/Y"}],
                        "default": {"$ref": "kept"}, "x-note": {"$ref": "kept"}}}}}}}}}},
            "components": {"schemas": {"X": {"type": "string"}, "Y": {"type": "integer"}}}});
        let (ops, _, _) = operations(&doc);
        // An `operationId` over 128 bytes is no host's name: the method and path name the tool.
        assert_eq!(ops[0]["name"], "post_x");
        let schema = &ops[0]["inputSchema"];
        let body = &schema["properties"]["body"]["properties"];
        assert_eq!(body["$ref"]["$ref"], "#/$defs/X");
        assert_eq!(body["enum"]["enum"][0]["$ref"], "#/components/schemas/Y");
        assert_eq!(body["enum"]["default"]["$ref"], "kept");
        assert_eq!(body["enum"]["x-note"]["$ref"], "kept");
        let defs: Vec<&String> = schema["$defs"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(defs, ["X"]);
    }
}
