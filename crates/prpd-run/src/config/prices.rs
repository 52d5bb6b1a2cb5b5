//! `[prices]`: what a model's tokens cost, for a receipt's figures and a budget's count when the
//! agent's CLI reports tokens but no cost (Codex CLI; Claude Code while its turn still runs).
//! A CLI's own cost figure always wins; a model this table does not know has an unknown price,
//! shown as such and never guessed.
//!
//! Prices are US dollars per million tokens, matched by the model name the CLI reported (else
//! the one prpd.toml names): a key matches that name exactly, or with a date or `-latest` after
//! it (`claude-sonnet-4-5` matches `claude-sonnet-4-5-20250929`), never a longer name
//! (`gpt-5` does not price `gpt-5-mini`). The defaults are the list prices of the models the
//! presets use, as published when this table was written; a `[prices."<model>"]` table of
//! prpd.toml replaces a default of the same name.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use prpd_base::config_file::ConfigError;

/// One model's prices, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
}

impl Price {
    /// What these token counts cost, in US dollars.
    pub fn cost(&self, input: u64, cache_write: u64, cache_read: u64, output: u64) -> f64 {
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts stay far below 2^52"
        )]
        let per_million = |tokens: u64, price: f64| tokens as f64 * price / 1e6;
        per_million(input, self.input)
            + per_million(cache_write, self.cache_write)
            + per_million(cache_read, self.cache_read)
            + per_million(output, self.output)
    }
}

/// The price table: the defaults with prpd.toml's entries over them.
#[derive(Debug, Clone, PartialEq)]
pub struct Prices {
    by_model: BTreeMap<String, Price>,
}

/// The defaults: (model, input, output, cache write, cache read).
const DEFAULTS: [(&str, f64, f64, f64, f64); 8] = [
    ("claude-sonnet-4", 3.0, 15.0, 3.75, 0.30),
    ("claude-sonnet-4-5", 3.0, 15.0, 3.75, 0.30),
    ("claude-opus-4", 15.0, 75.0, 18.75, 1.50),
    ("claude-opus-4-1", 15.0, 75.0, 18.75, 1.50),
    ("claude-opus-4-5", 5.0, 25.0, 6.25, 0.50),
    ("claude-haiku-4-5", 1.0, 5.0, 1.25, 0.10),
    ("gpt-5", 1.25, 10.0, 1.25, 0.125),
    ("gpt-5-codex", 1.25, 10.0, 1.25, 0.125),
];

impl Default for Prices {
    fn default() -> Self {
        Prices {
            by_model: DEFAULTS
                .iter()
                .map(|&(model, input, output, cache_write, cache_read)| {
                    (
                        model.to_owned(),
                        Price {
                            input,
                            output,
                            cache_write,
                            cache_read,
                        },
                    )
                })
                .collect(),
        }
    }
}

impl Prices {
    /// The price of `model` as a CLI reported it, `None` when no key matches.
    pub fn of(&self, model: &str) -> Option<Price> {
        self.by_model
            .iter()
            .find(|(key, _)| {
                model.strip_prefix(key.as_str()).is_some_and(|rest| {
                    rest.is_empty() || rest == "-latest" || is_date_suffix(rest)
                })
            })
            .map(|(_, price)| *price)
    }
}

/// `-20250929`: the date a provider puts after a model's name.
fn is_date_suffix(rest: &str) -> bool {
    rest.strip_prefix('-')
        .is_some_and(|date| date.len() == 8 && date.bytes().all(|byte| byte.is_ascii_digit()))
}

/// A `[prices."<model>"]` table as written: `input` and `output` are required; cache writes
/// default to the input price and cache reads to a tenth of it (what Anthropic and `OpenAI`
/// charge for a cache hit).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrice {
    input: Option<f64>,
    output: Option<f64>,
    cache_write: Option<f64>,
    cache_read: Option<f64>,
}

/// The defaults with `raw` over them; a missing or negative price names its key.
pub(super) fn prices(
    path: &Path,
    text: &str,
    raw: BTreeMap<String, RawPrice>,
) -> Result<Prices, ConfigError> {
    let mut prices = Prices::default();
    for (model, raw) in raw {
        let table = format!("[prices.\"{model}\"]");
        let value = |key: &str, value: Option<f64>| -> Result<Option<f64>, ConfigError> {
            match value {
                Some(price) if !price.is_finite() || price < 0.0 => Err(ConfigError::at_key(
                    path,
                    text,
                    &table,
                    key,
                    format!(
                        "`{key} = {price}` is not a price; expected US dollars per million tokens, such as 3.0"
                    ),
                )),
                other => Ok(other),
            }
        };
        let required = |key: &str, price: Option<f64>| -> Result<f64, ConfigError> {
            value(key, price)?.ok_or_else(|| {
                ConfigError::at(
                    path,
                    text,
                    &model,
                    format!(
                        "{table} has no `{key}`; expected `input` and `output` in US dollars per million tokens"
                    ),
                )
            })
        };
        let input = required("input", raw.input)?;
        let output = required("output", raw.output)?;
        let price = Price {
            input,
            output,
            cache_write: value("cache_write", raw.cache_write)?.unwrap_or(input),
            cache_read: value("cache_read", raw.cache_read)?.unwrap_or(input / 10.0),
        };
        prices.by_model.insert(model, price);
    }
    Ok(prices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_the_model_exactly_or_with_its_date_and_never_a_longer_name() {
        let prices = Prices::default();
        let opus_4_5 = prices.of("claude-opus-4-5-20251101").expect("known");
        assert!((opus_4_5.input - 5.0).abs() < 1e-9);
        let opus_4_1 = prices.of("claude-opus-4-1-20250805").expect("known");
        assert!((opus_4_1.input - 15.0).abs() < 1e-9);
        assert!(prices.of("claude-sonnet-4-5-20250929").is_some());
        assert!(prices.of("claude-haiku-4-5-latest").is_some());
        assert!(prices.of("gpt-5-codex").is_some());
        assert_eq!(prices.of("gpt-5").map(|price| price.output), Some(10.0));
        assert_eq!(prices.of("sonnet"), None, "an alias is not a model");
        for newer in [
            "claude-opus-4-6",
            "gpt-5-mini",
            "gpt-5-codex-mini",
            "claude-sonnet-5",
            "gpt-50",
        ] {
            assert_eq!(
                prices.of(newer),
                None,
                "{newer} is not priced as an older model"
            );
        }
    }

    #[test]
    fn a_price_is_dollars_per_million_tokens_of_each_kind() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cache_write: 3.75,
            cache_read: 0.3,
        };
        let cost = price.cost(1_000_000, 1_000_000, 1_000_000, 1_000_000);
        assert!((cost - 22.05).abs() < 1e-9, "{cost}");
        assert!((price.cost(2000, 0, 0, 100) - 0.0075).abs() < 1e-12);
    }

    #[test]
    fn prpd_toml_replaces_a_default_and_names_a_missing_price() {
        let text = "[prices.\"gpt-5\"]\ninput = 2.0\noutput = 8.0\n";
        let prices = parsed(text).expect("valid");
        let gpt5 = prices.of("gpt-5").expect("known");
        assert_eq!(
            (gpt5.input, gpt5.cache_write, gpt5.cache_read),
            (2.0, 2.0, 0.2)
        );

        let error =
            parsed("[run]\n\n[prices.\"local-llama\"]\ninput = 0.5\n").expect_err("no output");
        let message = format!("{error:#}");
        assert!(message.contains("prpd.toml:3"), "{message}");
        assert!(message.contains("no `output`"), "{message}");
        let error = parsed("[prices.x]\ninput = -1\noutput = 2\n").expect_err("negative");
        assert!(format!("{error:#}").contains("prpd.toml:2"), "{error:#}");
    }

    fn parsed(text: &str) -> Result<Prices, ConfigError> {
        #[derive(Deserialize)]
        struct Tables {
            prices: BTreeMap<String, RawPrice>,
        }
        let tables: Tables = toml::from_str(text).expect("toml");
        prices(Path::new("prpd.toml"), text, tables.prices)
    }
}
