//! What notes and groups share (PRODUCT §1.6): a place, a size and a
//! colour on the canvas, and reading those from the document's kept
//! fields with the path of what is wrong.

use serde_json::{Map, Value};

use crate::document::json_type_name;
use crate::{LoadError, LoadErrorKind, Position};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    pub width: f64,
    pub height: f64,
}

/// The smallest and largest a note or group may be, in canvas units.
pub const SMALLEST: Size = Size {
    width: 80.0,
    height: 40.0,
};
pub const LARGEST: Size = Size {
    width: 8000.0,
    height: 8000.0,
};
/// How far from the origin anything may be placed.
const FARTHEST: f64 = 1.0e7;
/// The longest id of a note or group.
pub const MOST_ID_CHARACTERS: usize = 64;

/// The colours a note or group can have; the first is the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colour {
    #[default]
    Yellow,
    Blue,
    Green,
    Pink,
    Grey,
}

impl Colour {
    pub const ALL: [Colour; 5] = [
        Colour::Yellow,
        Colour::Blue,
        Colour::Green,
        Colour::Pink,
        Colour::Grey,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Colour::Yellow => "yellow",
            Colour::Blue => "blue",
            Colour::Green => "green",
            Colour::Pink => "pink",
            Colour::Grey => "grey",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Colour::Yellow => "Yellow",
            Colour::Blue => "Blue",
            Colour::Green => "Green",
            Colour::Pink => "Pink",
            Colour::Grey => "Grey",
        }
    }

    pub fn parse(text: &str) -> Option<Colour> {
        Colour::ALL
            .into_iter()
            .find(|colour| colour.as_str() == text)
    }
}

/// The fields of one item of a list, or why it is not an object.
pub(crate) fn fields<'a>(
    path: &str,
    value: &'a Value,
) -> Result<&'a Map<String, Value>, LoadError> {
    value
        .as_object()
        .ok_or_else(|| shape(path, format!("an object, not {}", json_type_name(value))))
}

/// The items of the document's list `name`; none when it is absent.
pub(crate) fn list<'a>(
    extra: &'a crate::Extra,
    name: &str,
    most: usize,
) -> Result<&'a [Value], LoadError> {
    match extra.get(name) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) if items.len() <= most => Ok(items),
        Some(Value::Array(items)) => {
            Err(shape(name, format!("at most {most}, not {}", items.len())))
        }
        Some(other) => Err(shape(
            name,
            format!("an array, not {}", json_type_name(other)),
        )),
    }
}

pub(crate) fn id(path: &str, fields: &Map<String, Value>) -> Result<String, LoadError> {
    match fields.get("id") {
        Some(Value::String(id)) if !id.is_empty() && id.chars().count() <= MOST_ID_CHARACTERS => {
            Ok(id.clone())
        }
        Some(Value::String(_)) => Err(shape(
            &format!("{path}.id"),
            format!("1 to {MOST_ID_CHARACTERS} characters"),
        )),
        _ => Err(shape(
            &format!("{path}.id"),
            "a string id is needed".to_owned(),
        )),
    }
}

pub(crate) fn text(
    path: &str,
    fields: &Map<String, Value>,
    name: &str,
    most: usize,
) -> Result<String, LoadError> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) if text.chars().count() <= most => Ok(text.clone()),
        Some(Value::String(_)) => Err(shape(
            &format!("{path}.{name}"),
            format!("at most {most} characters"),
        )),
        Some(other) => Err(shape(
            &format!("{path}.{name}"),
            format!("a string, not {}", json_type_name(other)),
        )),
    }
}

pub(crate) fn flag(path: &str, fields: &Map<String, Value>, name: &str) -> Result<bool, LoadError> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(on)) => Ok(*on),
        Some(other) => Err(shape(
            &format!("{path}.{name}"),
            format!("true or false, not {}", json_type_name(other)),
        )),
    }
}

pub(crate) fn position(path: &str, fields: &Map<String, Value>) -> Result<Position, LoadError> {
    let path = format!("{path}.position");
    let Some(value) = fields.get("position") else {
        return Ok(Position::default());
    };
    let place = self::fields(&path, value)?;
    Ok(Position {
        x: number(&path, place, "x", -FARTHEST, FARTHEST)?.unwrap_or(0.0),
        y: number(&path, place, "y", -FARTHEST, FARTHEST)?.unwrap_or(0.0),
    })
}

pub(crate) fn size(
    path: &str,
    fields: &Map<String, Value>,
    default: Size,
) -> Result<Size, LoadError> {
    let path = format!("{path}.size");
    let Some(value) = fields.get("size") else {
        return Ok(default);
    };
    let size = self::fields(&path, value)?;
    Ok(Size {
        width: number(&path, size, "width", SMALLEST.width, LARGEST.width)?
            .unwrap_or(default.width),
        height: number(&path, size, "height", SMALLEST.height, LARGEST.height)?
            .unwrap_or(default.height),
    })
}

pub(crate) fn colour(path: &str, fields: &Map<String, Value>) -> Result<Colour, LoadError> {
    match fields.get("colour") {
        None | Some(Value::Null) => Ok(Colour::default()),
        Some(Value::String(name)) => Colour::parse(name).ok_or_else(|| {
            let names: Vec<&str> = Colour::ALL.iter().map(|colour| colour.as_str()).collect();
            shape(
                &format!("{path}.colour"),
                format!("one of {}, not \"{name}\"", names.join(", ")),
            )
        }),
        Some(other) => Err(shape(
            &format!("{path}.colour"),
            format!("a string, not {}", json_type_name(other)),
        )),
    }
}

fn number(
    path: &str,
    fields: &Map<String, Value>,
    name: &str,
    least: f64,
    most: f64,
) -> Result<Option<f64>, LoadError> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => match number.as_f64() {
            Some(number) if (least..=most).contains(&number) => Ok(Some(number)),
            _ => Err(shape(
                &format!("{path}.{name}"),
                format!("a number from {least} to {most}"),
            )),
        },
        Some(other) => Err(shape(
            &format!("{path}.{name}"),
            format!("a number, not {}", json_type_name(other)),
        )),
    }
}

/// Two items of one list with one id.
pub(crate) fn duplicate(path: &str, id: &str, what: &str) -> LoadError {
    LoadError {
        kind: LoadErrorKind::Identity,
        path: format!("{path}.id"),
        message: format!("another {what} has the id \"{id}\""),
    }
}

pub(crate) fn shape(path: &str, message: String) -> LoadError {
    LoadError {
        kind: LoadErrorKind::Shape,
        path: path.to_owned(),
        message,
    }
}

/// The JSON of a place and a size, as the document holds them.
pub(crate) fn place_and_size(fields: &mut Map<String, Value>, position: Position, size: Size) {
    fields.insert(
        "position".to_owned(),
        serde_json::json!({ "x": position.x, "y": position.y }),
    );
    fields.insert(
        "size".to_owned(),
        serde_json::json!({ "width": size.width, "height": size.height }),
    );
}

/// Whether the document's notes and groups can be saved: the first thing
/// wrong with them, and where.
pub fn check(graph: &crate::Graph) -> Result<(), LoadError> {
    crate::notes::notes(graph)?;
    crate::groups::groups(graph)?;
    Ok(())
}
