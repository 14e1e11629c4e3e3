//! What the canvas's `<canvas>` elements (the sketched cables, the minimap)
//! share: their 2D context, and their colours, taken from the stylesheet.

use wasm_bindgen::JsCast;

/// The colours of `properties` (custom properties) as `canvas`'s computed
/// style gives them. Read once, when the canvas is put in the page: read
/// while drawing, it made the browser style what was just inserted then
/// and there.
pub fn stylesheet_colours<const COUNT: usize>(
    canvas: &web_sys::HtmlCanvasElement,
    properties: [&str; COUNT],
) -> Option<[String; COUNT]> {
    let style = web_sys::window()?.get_computed_style(canvas).ok()??;
    Some(properties.map(|property| {
        style
            .get_property_value(property)
            .map(|colour| colour.trim().to_owned())
            .unwrap_or_default()
    }))
}

/// `canvas`'s 2D context, drawing in units `scale` times smaller than its
/// pixels, with (`left`, `top`) at its corner.
pub fn context(
    canvas: &web_sys::HtmlCanvasElement,
    scale: f64,
    (left, top): (f64, f64),
) -> Option<web_sys::CanvasRenderingContext2d> {
    let context = canvas
        .get_context("2d")
        .ok()
        .flatten()?
        .dyn_into::<web_sys::CanvasRenderingContext2d>()
        .ok()?;
    context
        .set_transform(scale, 0.0, 0.0, scale, -left * scale, -top * scale)
        .ok()?;
    Some(context)
}
