//! Figures for the memory QA asks before every validation: an embedded store filled with
//! 100,000 generated entries (REJECTs, breaker trips, escalations, APPROVEs, decisions,
//! CHANGELOG entries and lessons over a vocabulary of 3,000 words with a few common ones, 5,000
//! file paths, 6 stacks), then the four QA questions of a run together — bugs, patterns,
//! decisions, and the history of 5 changed files — through `Memory::context`, as the loop asks
//! them (a blocking thread per question, the time box armed). Prints the p50 and p95 of the
//! whole context, the p50 of each question on the store alone, the time to fill it and its size
//! on disk. Target: the four together under 5 ms at p50. Run with `cargo bench --bench memory`
//! (optionally `-- 20000` for another size).

use std::path::Path;
use std::time::{Duration, Instant};

use prpd_memory::backend::Memory;
use prpd_memory::config::{MemoryBackend, MemoryConfig};
use prpd_memory::entry::{Entry, EntryKind};
use prpd_memory::query::{MemoryQuery, Question};
use prpd_memory::store::Store;

/// How many times each measurement is taken.
const ROUNDS: usize = 200;

/// A small deterministic generator (xorshift64), so every run fills the same store.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % bound as u64).expect("fits")
    }

    /// An index skewed towards small values, as word frequencies are.
    fn skewed(&mut self, bound: usize) -> usize {
        let first = self.below(bound);
        let second = self.below(bound);
        first.min(second).min(self.below(bound))
    }
}

fn word(index: usize) -> String {
    const COMMON: [&str; 12] = [
        "test", "error", "failed", "timeout", "config", "parser", "handler", "request", "cache",
        "limit", "token", "value",
    ];
    COMMON
        .get(index)
        .map_or_else(|| format!("w{index}x"), |common| (*common).to_owned())
}

fn sentence(generator: &mut Generator, words: usize) -> String {
    (0..words)
        .map(|_| word(generator.skewed(3_000)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn entries(count: usize) -> Vec<Entry> {
    let mut generator = Generator(0x9e37_79b9_7f4a_7c15);
    let stacks = ["node", "python", "go", "rust", "ruby", "lua"];
    (0..count)
        .map(|index| {
            let kind = EntryKind::ALL[generator.below(EntryKind::ALL.len())];
            let files = (0..=generator.below(4))
                .map(|_| format!("src/m{}/f{}.rs", generator.below(50), generator.below(100)))
                .collect();
            Entry {
                kind,
                run_id: format!("run-{}", index / 7),
                title: format!("{kind} of {}", sentence(&mut generator, 5)),
                body: sentence(&mut generator, 40),
                files,
                stacks: vec![stacks[generator.below(stacks.len())].to_owned()],
                created_at: 1_700_000_000 + index as u64,
            }
        })
        .collect()
}

fn percentile(samples: &mut [Duration], fraction: f64) -> Duration {
    samples.sort_unstable();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a few hundred samples"
    )]
    let index = ((samples.len() - 1) as f64 * fraction).round() as usize;
    samples[index]
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn size_on_disk(path: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            std::fs::metadata(name).ok()
        })
        .map(|metadata| metadata.len())
        .sum()
}

fn main() {
    let count: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(100_000);
    let repo = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(repo.path().join(".git")).expect("a git dir for the exclude line");
    let path = repo.path().join(".prp-session/memory.db");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");

    let generated = entries(count);
    let started = Instant::now();
    {
        let mut store = Store::open(&path).expect("open");
        for batch in generated.chunks(10_000) {
            store.record_all(batch).expect("record");
        }
    }
    println!(
        "{count} entries recorded in {:.1} s (batches of 10,000); {} KiB on disk",
        started.elapsed().as_secs_f64(),
        size_on_disk(&path) / 1024
    );

    let query = MemoryQuery {
        title: "Token bucket rate limiter".to_owned(),
        goal: "Limit each client's requests with a token bucket whose refill rate comes from \
               the config; a request over the limit gets a 429 with a Retry-After value."
            .to_owned(),
        stacks: vec!["rust".to_owned()],
        changed_files: (0..5)
            .map(|index| format!("src/m{index}/f{index}.rs"))
            .collect(),
    };

    let store = Store::open(&path).expect("open");
    for question in query.questions().iter().take(4) {
        let mut samples = Vec::with_capacity(ROUNDS);
        let mut found = 0;
        for _ in 0..ROUNDS {
            let started = Instant::now();
            let findings = match question {
                Question::File(file) => store.file_history(file, 3),
                Question::Bugs(text) | Question::Patterns(text) | Question::Decisions(text) => {
                    store.search(text, question.capability().kinds(), 5)
                }
            }
            .expect("question");
            samples.push(started.elapsed());
            found = findings.len();
        }
        println!(
            "  {:<10} p50 {:>6.2} ms  ({found} found)",
            question.capability().as_str(),
            milliseconds(percentile(&mut samples, 0.5))
        );
    }
    drop(store);

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let memory = runtime
        .block_on(Memory::open(
            repo.path(),
            &MemoryConfig {
                backend: MemoryBackend::Embedded,
                timeout: Duration::from_secs(2),
            },
        ))
        .expect("open");
    let mut samples = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let context = runtime.block_on(memory.context(&query));
        samples.push(started.elapsed());
        assert!(context.warnings.is_empty(), "{:?}", context.warnings);
        assert_eq!(context.queries_executed(), 4);
    }
    let p50 = percentile(&mut samples, 0.5);
    let p95 = percentile(&mut samples, 0.95);
    println!(
        "the four QA questions together (Memory::context, 5 changed files): p50 {:.2} ms, p95 {:.2} ms over {ROUNDS} rounds (target: p50 under 5 ms)",
        milliseconds(p50),
        milliseconds(p95)
    );
}
