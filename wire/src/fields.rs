//! Reading a JSON object field by field, by hand: how run events and port
//! contents are read back. serde's derived decoders are generic over every
//! decoder they meet and cost the browser bundle kilobytes a type; these
//! reuse the decoders of `Value` the bundle has anyway. Errors name what
//! was read and the field.

use serde::de::Error as _;
use serde_json::{Error, Map, Number, Value};

/// An object's fields, taken one by one.
pub(crate) struct Fields<'a> {
    /// What the object is, for errors: an event's name, a type's.
    what: &'a str,
    fields: Map<String, Value>,
}

impl<'a> Fields<'a> {
    pub(crate) fn of(what: &'a str, value: Value) -> Result<Fields<'a>, Error> {
        match value {
            Value::Object(fields) => Ok(Fields { what, fields }),
            _ => Err(Error::custom(format!("{what}: not an object"))),
        }
    }

    fn take(&mut self, field: &'static str) -> Result<Value, Error> {
        self.fields
            .remove(field)
            .ok_or_else(|| Error::custom(format!("{}: missing field `{field}`", self.what)))
    }

    pub(crate) fn wrong(&self, field: &str, expected: &str) -> Error {
        Error::custom(format!("{}: `{field}` is not {expected}", self.what))
    }

    /// The field as it is; `null` when it is absent.
    pub(crate) fn value(&mut self, field: &'static str) -> Value {
        self.fields.remove(field).unwrap_or(Value::Null)
    }

    pub(crate) fn text(&mut self, field: &'static str) -> Result<String, Error> {
        match self.take(field)? {
            Value::String(text) => Ok(text),
            _ => Err(self.wrong(field, "a string")),
        }
    }

    /// Text that may be absent or `null`.
    pub(crate) fn optional_text(&mut self, field: &'static str) -> Result<Option<String>, Error> {
        match self.fields.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(self.wrong(field, "a string")),
        }
    }

    pub(crate) fn number<T: TryFrom<u64>>(&mut self, field: &'static str) -> Result<T, Error> {
        self.take(field)?
            .as_u64()
            .and_then(|number| T::try_from(number).ok())
            .ok_or_else(|| self.wrong(field, "a count"))
    }

    /// Any number, as it was written.
    pub(crate) fn exact_number(&mut self, field: &'static str) -> Result<Number, Error> {
        match self.take(field)? {
            Value::Number(number) => Ok(number),
            _ => Err(self.wrong(field, "a number")),
        }
    }

    pub(crate) fn float(&mut self, field: &'static str) -> Result<f64, Error> {
        self.take(field)?
            .as_f64()
            .ok_or_else(|| self.wrong(field, "a number"))
    }

    /// A number, or `null` for none: a cost that is not known.
    pub(crate) fn nullable_float(&mut self, field: &'static str) -> Result<Option<f64>, Error> {
        let value = self.take(field)?;
        self.float_or_null(field, value)
    }

    /// A number, or `null` or nothing for none.
    pub(crate) fn optional_float(&mut self, field: &'static str) -> Result<Option<f64>, Error> {
        let value = self.value(field);
        self.float_or_null(field, value)
    }

    fn float_or_null(&self, field: &str, value: Value) -> Result<Option<f64>, Error> {
        match value {
            Value::Null => Ok(None),
            value => value
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong(field, "a number or null")),
        }
    }

    /// A whole number that may be absent or `null`.
    pub(crate) fn nullable_integer(&mut self, field: &'static str) -> Result<Option<i64>, Error> {
        match self.value(field) {
            Value::Null => Ok(None),
            value => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.wrong(field, "a whole number or null")),
        }
    }

    pub(crate) fn flag(&mut self, field: &'static str) -> Result<bool, Error> {
        match self.take(field)? {
            Value::Bool(flag) => Ok(flag),
            _ => Err(self.wrong(field, "true or false")),
        }
    }

    /// One of a closed set of words, read by `parse`.
    pub(crate) fn word<T>(
        &mut self,
        field: &'static str,
        parse: impl FnOnce(&str) -> Option<T>,
        expected: &str,
    ) -> Result<T, Error> {
        let text = self.text(field)?;
        parse(&text).ok_or_else(|| self.wrong(field, expected))
    }

    /// A list that may be absent (an older record's), each item read by
    /// `read`.
    pub(crate) fn optional_list<T>(
        &mut self,
        field: &'static str,
        read: impl Fn(Value) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        if self.fields.contains_key(field) {
            self.list(field, read)
        } else {
            Ok(Vec::new())
        }
    }

    /// A list, each item read by `read`.
    pub(crate) fn list<T>(
        &mut self,
        field: &'static str,
        read: impl Fn(Value) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let Value::Array(items) = self.take(field)? else {
            return Err(self.wrong(field, "a list"));
        };
        // A loop rather than collecting `Result`s: less code a type.
        let mut list = Vec::with_capacity(items.len());
        for item in items {
            list.push(read(item)?);
        }
        Ok(list)
    }
}

/// Implements `Deserialize` for types that read themselves from a `Value`
/// with `fn read(Value) -> Result<Self, serde_json::Error>`.
macro_rules! read_by_hand {
    ($($read:ty),+ $(,)?) => {
        $(impl<'de> serde::Deserialize<'de> for $read {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<$read, D::Error> {
                use serde::de::Error as _;
                let value = serde_json::Value::deserialize(deserializer)?;
                <$read>::read(value).map_err(D::Error::custom)
            }
        })+
    };
}
pub(crate) use read_by_hand;
