//! Conditions on cables, in the form of the agent-platform seed's
//! `next_steps`: `get('$.output.intent') == 'sales'`, comparisons,
//! `and`/`or`/`not`, parentheses and literals. The browser parses them to
//! show a syntax error with its position; the run engine parses and
//! evaluates them against a context after the source module finishes.
//!
//! The language, in full:
//! - literals: `'text'` or `"text"` (a backslash escapes the next character),
//!   numbers (`3`, `-0.5`), `true`, `false`, `null`;
//! - `get('<path>')`: a path is `$` followed by `.name`, `['name']` (for names
//!   with dots or spaces, as in `$.state['draft.status']`) or `[index]`.
//!   A missing path is `null`, not an error; a path that reaches an object or
//!   a list is an error (the seed's "get() returns scalars only");
//! - `==`, `!=` on any values (values of different types are not equal);
//!   `<`, `<=`, `>`, `>=` on two numbers or two texts (otherwise false);
//! - `not`, `and`, `or` (in rising order of how loosely they bind) and
//!   parentheses. A value on its own holds when it is `true`, a number other
//!   than 0 or a text that is not empty.
//!
//! Written here rather than taken from a crate: the seed's syntax (`and`,
//! `or`, `not`, `get('$…')`) is not what the maintained expression crates
//! parse, and this is small enough to keep in the browser bundle.

use serde_json::Value;

/// A condition as messages quote it: whole when it is short, else its
/// first 80 characters and "…" (a message must not echo a whole document).
pub fn quoted(text: &str) -> String {
    const LIMIT: usize = 80;
    if text.chars().count() <= LIMIT {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(LIMIT).collect();
        cut.push('…');
        cut
    }
}

/// A parsed condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    expression: Expression,
}

/// Why a condition does not parse, and where (the character, from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionError {
    pub position: usize,
    pub message: String,
}

impl std::fmt::Display for ConditionError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{} (at character {})",
            self.message, self.position
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Expression {
    Literal(Scalar),
    Get(Vec<Step>),
    Not(Box<Expression>),
    And(Box<Expression>, Box<Expression>),
    Or(Box<Expression>, Box<Expression>),
    Compare(Box<Expression>, Comparison, Box<Expression>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Comparison {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// One step of a path: a field of an object or an index into a list.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
}

/// What an expression evaluates to.
#[derive(Clone, Debug, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
}

impl Scalar {
    fn holds(&self) -> bool {
        match self {
            Scalar::Null => false,
            Scalar::Bool(value) => *value,
            Scalar::Number(value) => *value != 0.0,
            Scalar::Text(text) => !text.is_empty(),
        }
    }
}

impl Condition {
    pub fn parse(text: &str) -> Result<Condition, ConditionError> {
        let mut parser = Parser {
            characters: text.chars().collect(),
            at: 0,
            operations: 0,
        };
        parser.skip_space();
        if parser.at == parser.characters.len() {
            return Err(parser.error("The condition is empty"));
        }
        let expression = parser.or()?;
        parser.skip_space();
        if parser.at < parser.characters.len() {
            return Err(parser.error("Expected `and`, `or` or the end of the condition here"));
        }
        Ok(Condition { expression })
    }

    /// Whether the condition holds in `context` (an object with `output`,
    /// `input`, `state`…). An error says which `get()` reached an object or
    /// a list.
    pub fn holds(&self, context: &Value) -> Result<bool, String> {
        evaluate(&self.expression, context).map(|value| value.holds())
    }
}

fn evaluate(expression: &Expression, context: &Value) -> Result<Scalar, String> {
    Ok(match expression {
        Expression::Literal(value) => value.clone(),
        Expression::Get(path) => lookup(path, context)?,
        Expression::Not(inner) => Scalar::Bool(!evaluate(inner, context)?.holds()),
        Expression::And(left, right) => {
            Scalar::Bool(evaluate(left, context)?.holds() && evaluate(right, context)?.holds())
        }
        Expression::Or(left, right) => {
            Scalar::Bool(evaluate(left, context)?.holds() || evaluate(right, context)?.holds())
        }
        Expression::Compare(left, comparison, right) => Scalar::Bool(compare(
            &evaluate(left, context)?,
            *comparison,
            &evaluate(right, context)?,
        )),
    })
}

fn compare(left: &Scalar, comparison: Comparison, right: &Scalar) -> bool {
    use std::cmp::Ordering;
    let order = match (left, right) {
        (Scalar::Number(left), Scalar::Number(right)) => left.partial_cmp(right),
        (Scalar::Text(left), Scalar::Text(right)) => Some(left.cmp(right)),
        _ => None,
    };
    match comparison {
        Comparison::Equal => left == right,
        Comparison::NotEqual => left != right,
        Comparison::Less => order == Some(Ordering::Less),
        Comparison::LessOrEqual => matches!(order, Some(Ordering::Less | Ordering::Equal)),
        Comparison::Greater => order == Some(Ordering::Greater),
        Comparison::GreaterOrEqual => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
    }
}

fn lookup(path: &[Step], context: &Value) -> Result<Scalar, String> {
    let mut value = context;
    for step in path {
        let next = match (step, value) {
            (Step::Field(name), Value::Object(object)) => object.get(name),
            (Step::Index(index), Value::Array(items)) => items.get(*index),
            _ => None,
        };
        match next {
            Some(next) => value = next,
            None => return Ok(Scalar::Null),
        }
    }
    Ok(match value {
        Value::Null => Scalar::Null,
        Value::Bool(value) => Scalar::Bool(*value),
        Value::Number(number) => Scalar::Number(number.as_f64().unwrap_or(0.0)),
        Value::String(text) => Scalar::Text(text.clone()),
        Value::Array(_) | Value::Object(_) => {
            return Err(format!(
                "get('{}') reaches {}, and get() reads one value (a text, number, true/false or null): read a field of it",
                path_text(path),
                if value.is_array() {
                    "a list"
                } else {
                    "an object"
                }
            ));
        }
    })
}

fn path_text(path: &[Step]) -> String {
    let mut text = "$".to_owned();
    for step in path {
        match step {
            Step::Field(name) if is_plain_name(name) => {
                text.push('.');
                text.push_str(name);
            }
            Step::Field(name) => text.push_str(&format!("['{name}']")),
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|character| character.is_alphanumeric() || character == '_' || character == '-')
}

/// A number from its digits, without Rust's float parser (which the browser
/// bundle does without): exact for integers, and to the last digit or so
/// for fractions, which is all a routing threshold needs.
fn number_from(digits: &str) -> Option<f64> {
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty()
        || !whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut value = 0.0f64;
    for digit in whole.bytes() {
        value = value * 10.0 + f64::from(digit - b'0');
    }
    let mut scale = 1.0f64;
    for digit in fraction.bytes() {
        scale /= 10.0;
        value += f64::from(digit - b'0') * scale;
    }
    Some(if negative { -value } else { value })
}

/// The most operators and parentheses one condition may have. Parsing,
/// evaluating and dropping an expression each recurse once per level, so
/// without a bound a document of nested `(` or chained `and` (a save is
/// up to 1 MiB) would overflow the server's stack; routing needs a handful.
pub const MAX_OPERATIONS: usize = 100;

struct Parser {
    characters: Vec<char>,
    at: usize,
    /// Operators and parentheses read so far.
    operations: usize,
}

impl Parser {
    fn error(&self, message: &str) -> ConditionError {
        ConditionError {
            position: self.at + 1,
            message: message.to_owned(),
        }
    }

    /// Counts one operator or parenthesis, refusing more than the bound.
    fn operation(&mut self) -> Result<(), ConditionError> {
        self.operations += 1;
        if self.operations > MAX_OPERATIONS {
            return Err(self.error(&format!(
                "The condition is too long: at most {MAX_OPERATIONS} operators and parentheses"
            )));
        }
        Ok(())
    }

    fn peek(&self) -> Option<char> {
        self.characters.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    /// Consumes `symbol` if it comes next (after spaces).
    fn eat(&mut self, symbol: &str) -> bool {
        self.skip_space();
        let length = symbol.chars().count();
        let matches = self
            .characters
            .get(self.at..self.at + length)
            .is_some_and(|next| next.iter().copied().eq(symbol.chars()));
        if matches {
            self.at += length;
        }
        matches
    }

    /// Consumes the word `word` if it comes next as a whole word.
    fn eat_word(&mut self, word: &str) -> bool {
        self.skip_space();
        let start = self.at;
        let found = self.word();
        if found == word {
            true
        } else {
            self.at = start;
            false
        }
    }

    fn word(&mut self) -> String {
        let mut word = String::new();
        while let Some(character) = self.peek() {
            if character.is_alphanumeric() || character == '_' {
                word.push(character);
                self.at += 1;
            } else {
                break;
            }
        }
        word
    }

    fn or(&mut self) -> Result<Expression, ConditionError> {
        let mut left = self.and()?;
        while self.eat_word("or") {
            self.operation()?;
            let right = self.and()?;
            left = Expression::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expression, ConditionError> {
        let mut left = self.not()?;
        while self.eat_word("and") {
            self.operation()?;
            let right = self.not()?;
            left = Expression::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expression, ConditionError> {
        if self.eat_word("not") {
            self.operation()?;
            return Ok(Expression::Not(Box::new(self.not()?)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expression, ConditionError> {
        let left = self.operand()?;
        // Two-character operators first, so `<=` is not read as `<`.
        let operators = [
            ("==", Comparison::Equal),
            ("!=", Comparison::NotEqual),
            ("<=", Comparison::LessOrEqual),
            (">=", Comparison::GreaterOrEqual),
            ("<", Comparison::Less),
            (">", Comparison::Greater),
        ];
        for (symbol, comparison) in operators {
            if self.eat(symbol) {
                self.operation()?;
                let right = self.operand()?;
                return Ok(Expression::Compare(
                    Box::new(left),
                    comparison,
                    Box::new(right),
                ));
            }
        }
        self.skip_space();
        if self.peek() == Some('=') {
            return Err(self.error("Use `==` to compare"));
        }
        Ok(left)
    }

    fn operand(&mut self) -> Result<Expression, ConditionError> {
        self.skip_space();
        match self.peek() {
            None => Err(self.error("The condition ends too soon: a value is missing")),
            Some('(') => {
                self.operation()?;
                self.at += 1;
                let inner = self.or()?;
                if !self.eat(")") {
                    return Err(self.error("Expected `)`"));
                }
                Ok(inner)
            }
            Some(quote @ ('\'' | '"')) => Ok(Expression::Literal(Scalar::Text(self.text(quote)?))),
            Some(character) if character.is_ascii_digit() || character == '-' => {
                let start = self.at;
                self.at += 1;
                while self
                    .peek()
                    .is_some_and(|next| next.is_ascii_digit() || next == '.')
                {
                    self.at += 1;
                }
                let digits: String = self.characters[start..self.at].iter().collect();
                number_from(&digits)
                    .map(|number| Expression::Literal(Scalar::Number(number)))
                    .ok_or(ConditionError {
                        position: start + 1,
                        message: format!("`{digits}` is not a number"),
                    })
            }
            Some(_) => {
                let start = self.at;
                let word = self.word();
                match word.as_str() {
                    "true" => Ok(Expression::Literal(Scalar::Bool(true))),
                    "false" => Ok(Expression::Literal(Scalar::Bool(false))),
                    "null" => Ok(Expression::Literal(Scalar::Null)),
                    "get" => self.get(),
                    "" => Err(self.error(
                        "Expected a value here: get('$…'), a 'text', a number, true, false or null",
                    )),
                    _ => Err(ConditionError {
                        position: start + 1,
                        message: format!(
                            "`{word}` is not known: values are get('$…'), 'text', numbers, true, false and null"
                        ),
                    }),
                }
            }
        }
    }

    /// A quoted text, the opening quote next.
    fn text(&mut self, quote: char) -> Result<String, ConditionError> {
        let start = self.at;
        self.at += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err(ConditionError {
                        position: start + 1,
                        message: format!("This text has no closing {quote}"),
                    });
                }
                Some('\\') => {
                    self.at += 1;
                    if let Some(escaped) = self.peek() {
                        text.push(escaped);
                        self.at += 1;
                    }
                }
                Some(character) if character == quote => {
                    self.at += 1;
                    return Ok(text);
                }
                Some(character) => {
                    text.push(character);
                    self.at += 1;
                }
            }
        }
    }

    /// `get('<path>')`, after the word `get`.
    fn get(&mut self) -> Result<Expression, ConditionError> {
        if !self.eat("(") {
            return Err(self.error("Expected `(` after get"));
        }
        self.skip_space();
        let quote = match self.peek() {
            Some(quote @ ('\'' | '"')) => quote,
            _ => return Err(self.error("get() takes a quoted path, as in get('$.output.intent')")),
        };
        let path_start = self.at + 1;
        let path = self.text(quote)?;
        let steps = parse_path(&path).map_err(|(offset, message)| ConditionError {
            position: path_start + offset + 1,
            message,
        })?;
        if !self.eat(")") {
            return Err(self.error("Expected `)` after the path"));
        }
        Ok(Expression::Get(steps))
    }
}

/// `$.a.b['c.d'][0]` into its steps; an error gives the offset in the path.
fn parse_path(path: &str) -> Result<Vec<Step>, (usize, String)> {
    let characters: Vec<char> = path.chars().collect();
    if characters.first() != Some(&'$') {
        return Err((
            0,
            "A path starts with `$`, as in $.output.intent".to_owned(),
        ));
    }
    let mut steps = Vec::new();
    let mut at = 1;
    while at < characters.len() {
        match characters[at] {
            '.' => {
                let start = at + 1;
                at = start;
                while at < characters.len()
                    && (characters[at].is_alphanumeric() || matches!(characters[at], '_' | '-'))
                {
                    at += 1;
                }
                if at == start {
                    return Err((start, "A name is missing after `.`".to_owned()));
                }
                if at < characters.len() && !matches!(characters[at], '.' | '[') {
                    return Err((
                        at,
                        format!(
                            "`{}` cannot be part of a name after `.`: write ['…'] for such names (or is a quote missing?)",
                            characters[at]
                        ),
                    ));
                }
                steps.push(Step::Field(characters[start..at].iter().collect()));
            }
            '[' => {
                let Some(close) = characters[at..].iter().position(|&c| c == ']') else {
                    return Err((at, "This `[` has no closing `]`".to_owned()));
                };
                let inside: String = characters[at + 1..at + close].iter().collect();
                let inside = inside.trim();
                let quoted = inside.len() >= 2
                    && ((inside.starts_with('\'') && inside.ends_with('\''))
                        || (inside.starts_with('"') && inside.ends_with('"')));
                if quoted {
                    steps.push(Step::Field(inside[1..inside.len() - 1].to_owned()));
                } else if !inside.is_empty() && inside.bytes().all(|byte| byte.is_ascii_digit()) {
                    let index = inside.bytes().fold(0usize, |index, digit| {
                        index
                            .saturating_mul(10)
                            .saturating_add(usize::from(digit - b'0'))
                    });
                    steps.push(Step::Index(index));
                } else {
                    return Err((
                        at,
                        "Inside `[ ]` goes a quoted name or a position, as in ['draft.status'] or [0]"
                            .to_owned(),
                    ));
                }
                at += close + 1;
            }
            _ => {
                return Err((at, "Expected `.` or `[` in the path".to_owned()));
            }
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holds(condition: &str, context: &Value) -> Result<bool, String> {
        Condition::parse(condition)
            .map_err(|error| error.to_string())?
            .holds(context)
    }

    fn context() -> Value {
        json!({
            "output": {"intent": "sales", "score": 7, "urgent": true, "tags": ["a"], "nested": {"x": 1}},
            "input": "Help me buy",
            "state": {"draft.status": "completed", "draft.attempt": "2"}
        })
    }

    #[test]
    fn the_seeds_examples_hold_as_written() {
        let context = context();
        assert_eq!(
            holds("get('$.output.intent') == 'sales'", &context),
            Ok(true)
        );
        assert_eq!(
            holds("get('$.output.intent') == 'support'", &context),
            Ok(false)
        );
        assert_eq!(
            holds(
                "get('$.output.intent') == 'sales' and get('$.output.urgent') == true",
                &context
            ),
            Ok(true)
        );
        assert_eq!(
            holds("get('$.state[\"draft.status\"]') == 'completed'", &context),
            Ok(true)
        );
        assert_eq!(holds("get(\"$.input\") != ''", &context), Ok(true));
    }

    #[test]
    fn a_missing_path_is_null_not_an_error() {
        let context = context();
        assert_eq!(holds("get('$.output.nothing') == null", &context), Ok(true));
        assert_eq!(
            holds("get('$.output.nothing') == 'sales'", &context),
            Ok(false)
        );
        assert_eq!(
            holds("get('$.output.intent.deeper') == null", &context),
            Ok(true)
        );
        assert_eq!(holds("get('$.output.tags[3]') == null", &context), Ok(true));
        assert_eq!(holds("get('$.output.tags[0]') == 'a'", &context), Ok(true));
    }

    #[test]
    fn get_of_an_object_or_a_list_is_an_error_that_names_the_path() {
        let error = holds("get('$.output.nested') == 1", &context()).unwrap_err();
        assert!(
            error.contains("$.output.nested") && error.contains("an object"),
            "{error}"
        );
        let error = holds("get('$.output.tags')", &context()).unwrap_err();
        assert!(error.contains("a list"), "{error}");
    }

    #[test]
    fn comparisons_logic_and_precedence() {
        let context = context();
        assert_eq!(holds("get('$.output.score') > 5", &context), Ok(true));
        assert_eq!(holds("get('$.output.score') >= 7.5", &context), Ok(false));
        assert_eq!(holds("get('$.output.score') <= 7", &context), Ok(true));
        assert_eq!(holds("get('$.output.score') < -1.25", &context), Ok(false));
        assert_eq!(holds("'apple' < 'banana'", &context), Ok(true));
        // A number and a text are neither equal nor ordered.
        assert_eq!(
            holds("get('$.state[\"draft.attempt\"]') == 2", &context),
            Ok(false)
        );
        assert_eq!(
            holds("get('$.state[\"draft.attempt\"]') < 3", &context),
            Ok(false)
        );
        assert_eq!(holds("not get('$.output.urgent')", &context), Ok(false));
        assert_eq!(holds("not not true", &context), Ok(true));
        // `and` binds tighter than `or`.
        assert_eq!(holds("true or false and false", &context), Ok(true));
        assert_eq!(holds("(true or false) and false", &context), Ok(false));
        // A value alone: true, a number other than 0, a text not empty.
        assert_eq!(holds("get('$.output.intent')", &context), Ok(true));
        assert_eq!(holds("0", &context), Ok(false));
        assert_eq!(holds("null", &context), Ok(false));
        // Words inside names are not operators.
        assert_eq!(holds("get('$.output.android') == null", &context), Ok(true));
    }

    #[test]
    fn syntax_errors_say_what_and_where() {
        let error = |text: &str| Condition::parse(text).unwrap_err();
        assert_eq!(error("").message, "The condition is empty");
        let unclosed = error("get('$.output.intent) == 'x'");
        assert_eq!(unclosed.position, 21, "{unclosed}");
        let single = error("get('$.output.intent') = 'sales'");
        assert_eq!(single.position, 24);
        assert!(single.message.contains("=="), "{single}");
        let word = error("get('$.output') == sales");
        assert_eq!(word.position, 20);
        assert!(word.message.contains("`sales`"), "{word}");
        let path = error("get('output.intent') == 1");
        assert_eq!(path.position, 6);
        assert!(path.message.contains("starts with `$`"), "{path}");
        let bracket = error("get('$.state[draft]') == 1");
        assert_eq!(bracket.position, 13, "{bracket}");
        assert_eq!(error("(true").message, "Expected `)`");
        assert!(error("true false").message.contains("`and`, `or`"));
        assert!(
            error("get('$.a') ==")
                .message
                .contains("a value is missing")
        );
        assert!(error("-").message.contains("not a number"));
    }

    #[test]
    fn a_condition_too_deep_to_evaluate_safely_is_refused_not_a_crash() {
        // Each of these would overflow the stack when parsed, evaluated or
        // dropped if it were accepted.
        let nested = format!("{}true{}", "(".repeat(200_000), ")".repeat(200_000));
        let chained = vec!["true"; 200_000].join(" and ");
        let negated = format!("{}true", "not ".repeat(200_000));
        for text in [nested, chained, negated] {
            let error = Condition::parse(&text).unwrap_err();
            assert!(error.message.contains("too long"), "{error}");
        }
        // Up to the bound is fine.
        let many = vec!["true"; MAX_OPERATIONS + 1].join(" and ");
        assert_eq!(holds(&many, &json!({})), Ok(true));
        let one_more = vec!["true"; MAX_OPERATIONS + 2].join(" and ");
        assert!(Condition::parse(&one_more).is_err());
    }

    #[test]
    fn numbers_are_read_without_the_float_parser() {
        assert_eq!(number_from("42"), Some(42.0));
        assert_eq!(number_from("-0.5"), Some(-0.5));
        assert!((number_from("2.71").unwrap_or(0.0) - 2.71).abs() < 1e-12);
        assert_eq!(number_from("1.2.3"), None);
        assert_eq!(number_from("."), None);
    }
}
