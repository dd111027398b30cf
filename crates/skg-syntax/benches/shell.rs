//! `cargo bench -p skg-syntax --bench shell`: shell facts on text shaped to be costly — a
//! pipeline of 30,000 stages (tree-sitter-bash's parse of it grows with the square of its
//! stages: 28 s and 7.3 GB in a scan before the bound), a list of 25,000 commands (`a && b && …`,
//! one nesting level per command), 14,000 separate two-stage pipelines, a 250-stage pipeline
//! ahead of 38,000 `&&` commands, and 3,900 here-documents piped into lists — beside a
//! 200-line install script of the usual shape. Each is 120–200 KB, under the scanner's
//! 200,000-byte limit for a snippet.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skg_syntax::shell_commands;

fn benches(c: &mut Criterion) {
    let usual =
        "set -euo pipefail\nVERSION=$(curl -s https://api.example.invalid/latest | jq -r .tag)\n\
                 curl -fsSL \"https://example.invalid/$VERSION/tool.tar.gz\" -o /tmp/tool.tgz\n\
                 tar -xzf /tmp/tool.tgz -C /opt && chmod +x /opt/tool/bin/tool\n\
                 echo 'export PATH=/opt/tool/bin:$PATH' >> ~/.profile\n"
            .repeat(40);
    let cases = [
        ("install-script", usual),
        (
            "pipeline-30000",
            format!("curl -s https://x.invalid/a{}\n", "|cat".repeat(30_000)),
        ),
        ("list-25000", format!("true{}\n", " && cat".repeat(25_000))),
        ("pipelines-14000", "curl a | cat\n".repeat(14_000)),
        // A long pipeline ahead of a long `&&` chain: each stage's pipeline is found through
        // the chain's lists (`Tree::lifted`), climbed once, not once per stage (2.64 s in a
        // scan when it was climbed per stage).
        (
            "pipeline-250-then-list-38000",
            format!(
                "{}{}\n",
                vec!["cat"; 250].join(" | "),
                " && t".repeat(38_000)
            ),
        ),
        // Here-documents piped into lists (`| sudo bash -s || exit 1`), 3,900 of them.
        (
            "heredoc-lists-3900",
            "cat <<'EOF' | tr x y | bash || exit 1\necho hi\nEOF\n".repeat(3_900),
        ),
    ];
    let mut group = c.benchmark_group("shell_commands");
    group.sample_size(10);
    for (name, text) in &cases {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(*name, |b| b.iter(|| shell_commands(text)));
    }
    group.finish();
}

criterion_group!(shell_benches, benches);
criterion_main!(shell_benches);
