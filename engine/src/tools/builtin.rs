//! The built-in MCP server (`patchbay`, PRODUCT §3.17): a few read-only
//! tools in the binary itself, so that tools work offline on a fresh
//! machine as the simulated provider and agent do. It is a real MCP server
//! (the SDK's), spoken to over an in-process pipe like any other: a
//! calculator, a clock, and a lookup in a small table the binary carries.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{Json, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

/// Its id in the configuration, which a graph names.
pub const ID: &str = "patchbay";
/// Its name, as the editor shows it.
pub const NAME: &str = "Patchbay tools (built in)";

/// The tools.
#[derive(Clone, Debug)]
pub struct BuiltInTools {
    tool_router: ToolRouter<BuiltInTools>,
}

impl Default for BuiltInTools {
    fn default() -> BuiltInTools {
        BuiltInTools {
            tool_router: Self::tool_router(),
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CalculateRequest {
    /// An arithmetic expression: numbers, + - * / % ^ and parentheses.
    pub expression: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Calculated {
    pub expression: String,
    pub result: f64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ClockRequest {}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Now {
    /// The time in UTC, as `2026-11-28T15:04:05Z`.
    pub utc: String,
    pub unix_seconds: u64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LookupRequest {
    /// What to look up: one of the table's keys, as `tides`.
    pub key: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Entry {
    pub key: String,
    pub found: bool,
    /// The entry's fields, when found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A policy's decision: `approved`, `rejected` or `needs_review`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The keys the table has, when not found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

/// The table `lookup` reads: key, answer, source, decision.
const TABLE: [(&str, &str, &str, Option<&str>); 8] = [
    (
        "tides",
        "Most coasts have two high and two low tides a day, about 12 hours 25 minutes apart, raised by the Moon's pull and, less, the Sun's.",
        "NOAA, Tides and Water Levels",
        None,
    ),
    (
        "moon-distance",
        "The Moon is on average 384,400 km from the Earth.",
        "NASA, Moon Fact Sheet",
        None,
    ),
    (
        "speed-of-light",
        "Light travels 299,792,458 metres a second in a vacuum.",
        "SI definition of the metre",
        None,
    ),
    (
        "water-boiling",
        "Water boils at 100 °C at sea level, lower at altitude.",
        "IUPAC",
        None,
    ),
    (
        "everest",
        "Mount Everest is 8,848.86 m high.",
        "Nepal and China survey, 2020",
        None,
    ),
    (
        "refund-policy",
        "Refunds within 30 days of purchase are approved without review.",
        "Example policy",
        Some("approved"),
    ),
    (
        "publishing-policy",
        "Anything published under the company's name needs a person's review first.",
        "Example policy",
        Some("needs_review"),
    ),
    (
        "expense-policy",
        "Expenses over 5,000 are rejected without a manager's note.",
        "Example policy",
        Some("rejected"),
    ),
];

#[tool_router]
impl BuiltInTools {
    #[tool(
        description = "Calculate an arithmetic expression: numbers, + - * / % ^ and parentheses.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn calculate(
        &self,
        Parameters(CalculateRequest { expression }): Parameters<CalculateRequest>,
    ) -> Result<Json<Calculated>, String> {
        let result = evaluate(&expression)?;
        Ok(Json(Calculated { expression, result }))
    }

    #[tool(
        description = "The current date and time, in UTC.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn clock(&self, Parameters(ClockRequest {}): Parameters<ClockRequest>) -> Json<Now> {
        let unix_seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        Json(Now {
            utc: utc_text(unix_seconds),
            unix_seconds,
        })
    }

    #[tool(
        description = "Look up an entry of a small reference table (facts, and example policies with a decision) by its key.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn lookup(
        &self,
        Parameters(LookupRequest { key }): Parameters<LookupRequest>,
    ) -> Json<Entry> {
        let wanted = key.trim().to_lowercase().replace([' ', '_'], "-");
        Json(match TABLE.iter().find(|(name, ..)| *name == wanted) {
            Some((name, answer, source, decision)) => Entry {
                key: (*name).to_owned(),
                found: true,
                answer: Some((*answer).to_owned()),
                source: Some((*source).to_owned()),
                decision: decision.map(str::to_owned),
                keys: Vec::new(),
            },
            None => Entry {
                key,
                found: false,
                answer: None,
                source: None,
                decision: None,
                keys: TABLE.iter().map(|(name, ..)| (*name).to_owned()).collect(),
            },
        })
    }
}

#[tool_handler(router = self.tool_router, name = "patchbay", version = "1")]
impl ServerHandler for BuiltInTools {}

/// `2026-11-28T15:04:05Z` for a time in seconds since 1970.
fn utc_text(unix_seconds: u64) -> String {
    let days = unix_seconds / 86_400;
    let seconds = unix_seconds % 86_400;
    // Howard Hinnant's civil-from-days, for days since 1970-01-01.
    let shifted = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

/// The value of an arithmetic expression, or why it has none.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    let mut reader = Expression {
        characters: expression.chars().filter(|c| !c.is_whitespace()).collect(),
        at: 0,
    };
    let value = reader.sum()?;
    if reader.at < reader.characters.len() {
        return Err(format!(
            "\"{}\" is not understood, at character {}",
            expression.trim(),
            reader.at + 1
        ));
    }
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("\"{}\" has no finite value", expression.trim()))
    }
}

/// A recursive descent over an expression without its spaces.
struct Expression {
    characters: Vec<char>,
    at: usize,
}

impl Expression {
    fn next_is(&mut self, wanted: char) -> bool {
        if self.characters.get(self.at) == Some(&wanted) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        loop {
            if self.next_is('+') {
                value += self.product()?;
            } else if self.next_is('-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.unary()?;
        loop {
            if self.next_is('*') {
                value *= self.unary()?;
            } else if self.next_is('/') {
                let divisor = self.unary()?;
                if divisor == 0.0 {
                    return Err("division by zero".to_owned());
                }
                value /= divisor;
            } else if self.next_is('%') {
                let divisor = self.unary()?;
                if divisor == 0.0 {
                    return Err("remainder of a division by zero".to_owned());
                }
                value %= divisor;
            } else {
                return Ok(value);
            }
        }
    }

    /// A sign binds more loosely than a power: -2^2 is -4.
    fn unary(&mut self) -> Result<f64, String> {
        if self.next_is('-') {
            return Ok(-self.unary()?);
        }
        if self.next_is('+') {
            return self.unary();
        }
        self.power()
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if self.next_is('^') {
            // Right to left: 2^3^2 is 2^9.
            return Ok(base.powf(self.unary()?));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, String> {
        if self.next_is('(') {
            let value = self.sum()?;
            if !self.next_is(')') {
                return Err(format!(
                    "a parenthesis is not closed, at character {}",
                    self.at + 1
                ));
            }
            return Ok(value);
        }
        let start = self.at;
        while self
            .characters
            .get(self.at)
            .is_some_and(|c| c.is_ascii_digit() || *c == '.')
        {
            self.at += 1;
        }
        let number: String = self.characters[start..self.at].iter().collect();
        number.parse::<f64>().map_err(|_| {
            if number.is_empty() {
                format!("a number was expected at character {}", start + 1)
            } else {
                format!("\"{number}\" is not a number")
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_are_evaluated_with_the_usual_precedence() {
        assert_eq!(evaluate("2 * (3 + 4) - 1"), Ok(13.0));
        assert_eq!(evaluate("-2^2"), Ok(-4.0));
        assert_eq!(evaluate("2^3^2"), Ok(512.0));
        assert_eq!(evaluate("7 % 4 + 0.5"), Ok(3.5));
        assert_eq!(evaluate("1/0"), Err("division by zero".to_owned()));
        assert!(
            evaluate("2 +")
                .unwrap_err()
                .contains("a number was expected")
        );
        assert!(evaluate("(1").unwrap_err().contains("not closed"));
        assert!(evaluate("2 x 3").unwrap_err().contains("not understood"));
    }

    #[test]
    fn times_read_as_utc_dates() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_text(1_795_879_445), "2026-11-28T15:24:05Z");
        assert_eq!(utc_text(951_782_400), "2000-02-29T00:00:00Z");
    }
}
