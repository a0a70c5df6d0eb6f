//! A value's compact JSON written straight into a `Vec<u8>`: the bytes `serde_json`
//! writes, with the server's frame around the outermost object (`"v":1,` after its
//! opening brace, more members before its closing one), in fewer steps.
//!
//! `serde_json` escapes every string, keys included, a byte at a time through its
//! formatter and writer; here a string's bytes are looked at eight at a time, and one
//! that needs no escape (most of them) is copied at once. What this writer does not
//! handle the way `serde_json` does (byte strings' edge cases aside: map keys that are
//! not strings, 128-bit integers, `serde_json`'s raw values) it refuses, and so does
//! any error of the value itself: the caller then writes the value through `serde_json`,
//! which gives its bytes or its error. Tests pin the bytes against `serde_json`'s.

use std::fmt;

use serde::ser::{self, Serialize};

use super::VERSIONED;

/// Writes `value`'s JSON at the end of `out`, as `serde_json` would with the framing of
/// [`write_json`](super::WireEvent::write_json): `VERSIONED` for the outermost object's
/// opening brace, `more` before its closing one. On [`Refused`] `out` holds a part of it.
pub(super) fn write<T: ?Sized + Serialize>(
    value: &T,
    more: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Refused> {
    let mut json = Json {
        out,
        depth: 0,
        more,
    };
    value.serialize(&mut json)
}

/// What this writer does not write as `serde_json` would, or an error of the value.
#[derive(Debug)]
pub(super) struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Refused {}

impl ser::Error for Refused {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Refused
    }
}

/// The struct name `serde_json` gives its raw values (feature `raw_value`), which it
/// writes as they are.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

struct Json<'a> {
    out: &'a mut Vec<u8>,
    /// How many objects are open.
    depth: usize,
    more: &'a [u8],
}

impl<'a> Json<'a> {
    fn begin_object(&mut self) {
        self.depth += 1;
        if self.depth == 1 {
            self.out.extend_from_slice(VERSIONED);
        } else {
            self.out.push(b'{');
        }
    }

    fn end_object(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        if self.depth == 0 {
            self.out.extend_from_slice(self.more);
        }
        self.out.push(b'}');
    }

    /// `{"variant":`, as an externally tagged variant opens.
    fn begin_variant(&mut self, variant: &str) {
        self.begin_object();
        string(self.out, variant);
        self.out.push(b':');
    }

    /// `[`, and what an empty sequence is already.
    fn seq(&mut self, len: Option<usize>) -> Compound<'_, 'a> {
        self.out.push(b'[');
        let state = if len == Some(0) {
            self.out.push(b']');
            State::Empty
        } else {
            State::First
        };
        Compound { json: self, state }
    }

    /// An object's opening, and what an empty one is already.
    fn map(&mut self, len: Option<usize>) -> Compound<'_, 'a> {
        self.begin_object();
        let state = if len == Some(0) {
            self.end_object();
            State::Empty
        } else {
            State::First
        };
        Compound { json: self, state }
    }
}

#[derive(PartialEq, Eq)]
enum State {
    Empty,
    First,
    Rest,
}

/// An array or an object being written (as `serde_json`'s `Compound`).
struct Compound<'j, 'a> {
    json: &'j mut Json<'a>,
    state: State,
}

impl Compound<'_, '_> {
    /// The comma before every element but the first.
    fn next(&mut self) {
        if self.state != State::First {
            self.json.out.push(b',');
        }
        self.state = State::Rest;
    }

    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Refused> {
        self.next();
        value.serialize(&mut *self.json)
    }

    fn end_array(self) {
        if self.state != State::Empty {
            self.json.out.push(b']');
        }
    }

    fn key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Refused> {
        self.next();
        key.serialize(Key(self.json.out))?;
        self.json.out.push(b':');
        Ok(())
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<(), Refused> {
        self.next();
        string(self.json.out, key);
        self.json.out.push(b':');
        value.serialize(&mut *self.json)
    }

    fn end_object(self) {
        if self.state != State::Empty {
            self.json.end_object();
        }
    }
}

impl<'j, 'a> ser::Serializer for &'j mut Json<'a> {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Compound<'j, 'a>;
    type SerializeTuple = Compound<'j, 'a>;
    type SerializeTupleStruct = Compound<'j, 'a>;
    type SerializeTupleVariant = Compound<'j, 'a>;
    type SerializeMap = Compound<'j, 'a>;
    type SerializeStruct = Compound<'j, 'a>;
    type SerializeStructVariant = Compound<'j, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Refused> {
        let text: &[u8] = if v { b"true" } else { b"false" };
        self.out.extend_from_slice(text);
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Refused> {
        self.serialize_i64(v.into())
    }

    fn serialize_i16(self, v: i16) -> Result<(), Refused> {
        self.serialize_i64(v.into())
    }

    fn serialize_i32(self, v: i32) -> Result<(), Refused> {
        self.serialize_i64(v.into())
    }

    fn serialize_i64(self, v: i64) -> Result<(), Refused> {
        if v < 0 {
            self.out.push(b'-');
        }
        decimal(self.out, v.unsigned_abs());
        Ok(())
    }

    fn serialize_u8(self, v: u8) -> Result<(), Refused> {
        self.serialize_u64(v.into())
    }

    fn serialize_u16(self, v: u16) -> Result<(), Refused> {
        self.serialize_u64(v.into())
    }

    fn serialize_u32(self, v: u32) -> Result<(), Refused> {
        self.serialize_u64(v.into())
    }

    fn serialize_u64(self, v: u64) -> Result<(), Refused> {
        decimal(self.out, v);
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), Refused> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|_| Refused)
    }

    fn serialize_f64(self, v: f64) -> Result<(), Refused> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|_| Refused)
    }

    fn serialize_char(self, v: char) -> Result<(), Refused> {
        string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Refused> {
        string(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Refused> {
        self.out.push(b'[');
        for (i, byte) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            decimal(self.out, u64::from(*byte));
        }
        self.out.push(b']');
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Refused> {
        self.serialize_unit()
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Refused> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Refused> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Refused> {
        string(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        self.begin_variant(variant);
        value.serialize(&mut *self)?;
        self.end_object();
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'j, 'a>, Refused> {
        Ok(self.seq(len))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'j, 'a>, Refused> {
        Ok(self.seq(Some(len)))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Compound<'j, 'a>, Refused> {
        Ok(self.seq(Some(len)))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'j, 'a>, Refused> {
        self.begin_variant(variant);
        Ok(self.seq(Some(len)))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'j, 'a>, Refused> {
        Ok(self.map(len))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'j, 'a>, Refused> {
        if name == RAW_VALUE {
            return Err(Refused);
        }
        Ok(self.map(Some(len)))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'j, 'a>, Refused> {
        self.begin_variant(variant);
        Ok(self.map(Some(len)))
    }
}

/// The kinds of array: each element after a comma but the first, `]` at the end.
macro_rules! array {
    ($($kind:ident::$element:ident),*) => {$(
        impl ser::$kind for Compound<'_, '_> {
            type Ok = ();
            type Error = Refused;

            fn $element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Refused> {
                self.element(value)
            }

            fn end(self) -> Result<(), Refused> {
                self.end_array();
                Ok(())
            }
        }
    )*};
}

array!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Refused;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Refused> {
        self.element(value)
    }

    /// The array, then the object around it.
    fn end(self) -> Result<(), Refused> {
        if self.state != State::Empty {
            self.json.out.push(b']');
        }
        self.json.end_object();
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Refused;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Refused> {
        self.key(key)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Refused> {
        value.serialize(&mut *self.json)
    }

    fn end(self) -> Result<(), Refused> {
        self.end_object();
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Refused;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Refused> {
        self.end_object();
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Refused;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        self.field(key, value)
    }

    /// The inner object, then the one around it.
    fn end(self) -> Result<(), Refused> {
        let json = self.json;
        if self.state != State::Empty {
            json.end_object();
        }
        json.end_object();
        Ok(())
    }
}

/// Serializer methods that refuse what they are given, each `name(argument types) ->
/// what it would give`.
macro_rules! refuse {
    ($($name:ident($($argument:ty),*) -> $ok:ty;)*) => {
        $(fn $name(self, $(_: $argument),*) -> Result<$ok, Refused> {
            Err(Refused)
        })*
    };
}

/// A map's key: a string (or what `serde_json` writes as one: a char, a unit variant, a
/// newtype around a key); anything else is left to `serde_json`.
struct Key<'o>(&'o mut Vec<u8>);

impl ser::Serializer for Key<'_> {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = ser::Impossible<(), Refused>;
    type SerializeTuple = ser::Impossible<(), Refused>;
    type SerializeTupleStruct = ser::Impossible<(), Refused>;
    type SerializeTupleVariant = ser::Impossible<(), Refused>;
    type SerializeMap = ser::Impossible<(), Refused>;
    type SerializeStruct = ser::Impossible<(), Refused>;
    type SerializeStructVariant = ser::Impossible<(), Refused>;

    fn serialize_str(self, v: &str) -> Result<(), Refused> {
        string(self.0, v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Refused> {
        string(self.0, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Refused> {
        string(self.0, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        value.serialize(self)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Refused> {
        Err(Refused)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Refused> {
        Err(Refused)
    }
}

/// `n` in decimal, as serde_json writes it (through the same `itoa`).
fn decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A byte in every lane of a word.
const fn lanes(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// Whether any of a word's eight bytes is one JSON escapes: a control character (below
/// 0x20), `"` or `\`. (Exact as a whole, though not per byte: a borrow only runs on
/// from a byte that is itself below the bound.)
fn needs_escape(word: u64) -> bool {
    let high = lanes(0x80);
    let below = |word: u64, bound: u8| word.wrapping_sub(lanes(bound)) & !word & high;
    let control = below(word, 0x20);
    let quote = below(word ^ lanes(b'"'), 1);
    let backslash = below(word ^ lanes(b'\\'), 1);
    control | quote | backslash != 0
}

/// The eight bytes at `at` as a word (zeros past the end, which never happens: callers
/// read whole words).
fn word(bytes: &[u8], at: usize) -> u64 {
    let eight = bytes.get(at..at + 8).and_then(|b| b.try_into().ok());
    u64::from_ne_bytes(eight.unwrap_or([0; 8]))
}

/// Whether `bytes` hold nothing JSON escapes: a word at a time (the last word overlaps
/// the one before it), two overlapping halves for 4 to 7 bytes, else byte by byte.
fn clean(bytes: &[u8]) -> bool {
    let len = bytes.len();
    if len >= 8 {
        let mut at = 0;
        while at + 8 < len {
            if needs_escape(word(bytes, at)) {
                return false;
            }
            at += 8;
        }
        return !needs_escape(word(bytes, len - 8));
    }
    if len >= 4 {
        let half = |at: usize| {
            let four = bytes.get(at..at + 4).and_then(|b| b.try_into().ok());
            u64::from(u32::from_ne_bytes(four.unwrap_or([0; 4])))
        };
        return !needs_escape(half(0) | half(len - 4) << 32);
    }
    bytes.iter().all(|&byte| escape(byte).is_none())
}

/// How JSON escapes `byte`, if it does: the letter after the backslash (`u` for
/// `\u00XX`).
fn escape(byte: u8) -> Option<u8> {
    Some(match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0A => b'n',
        0x0C => b'f',
        0x0D => b'r',
        0x00..=0x1F => b'u',
        _ => return None,
    })
}

/// `text` as a JSON string, escaped as `serde_json` escapes it: `\"`, `\\`, the short
/// forms of backspace, tab, line feed, form feed and carriage return, `\u00XX` (in
/// lowercase hex) for the other control characters, every other character as it is.
fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.push(b'"');
    if clean(bytes) {
        out.extend_from_slice(bytes);
    } else {
        escaped(out, bytes);
    }
    out.push(b'"');
}

/// `bytes` with what JSON escapes escaped, a byte at a time. (Out of line: few strings
/// need it, and [`string`] stays small without it.)
#[cold]
#[inline(never)]
fn escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut copied = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let Some(short) = escape(byte) else {
            continue;
        };
        out.extend_from_slice(bytes.get(copied..at).unwrap_or_default());
        copied = at + 1;
        if short == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let (high, low) = (HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xF)]);
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', high, low]);
        } else {
            out.extend_from_slice(&[b'\\', short]);
        }
    }
    out.extend_from_slice(bytes.get(copied..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// What the members after the outermost object are in these tests.
    const MORE: &[u8] = b",\"at_ms\":1.5";

    fn ours<T: Serialize>(value: &T) -> Option<String> {
        let mut out = Vec::new();
        write(value, MORE, &mut out).ok()?;
        String::from_utf8(out).ok()
    }

    /// `serde_json`'s bytes for `value` through the formatter that frames the outermost
    /// object as ours does (`super::Framed`, what the server used before).
    fn theirs<T: Serialize>(value: &T) -> String {
        let mut out = Vec::new();
        let framed = super::super::Framed {
            depth: 0,
            more: MORE,
        };
        let mut json = serde_json::Serializer::with_formatter(&mut out, framed);
        let _ = value.serialize(&mut json);
        String::from_utf8(out).unwrap_or_default()
    }

    /// A small pseudo-random generator, the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// Text of every kind: plain, controls, quotes, backslashes, DEL, multi-byte
        /// characters, of lengths around the eight bytes read at once.
        fn text(&mut self) -> String {
            const PIECES: &[&str] = &[
                "a",
                "Z",
                "0",
                " ",
                "\"",
                "\\",
                "/",
                "\n",
                "\r",
                "\t",
                "\u{8}",
                "\u{c}",
                "\u{0}",
                "\u{1}",
                "\u{b}",
                "\u{1f}",
                "\u{7f}",
                "é",
                "€",
                "😀",
                "\u{2028}",
                "plain text ",
                "{\"order\":7}",
            ];
            let len = self.below(24);
            (0..len)
                .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
                .collect()
        }

        fn value(&mut self, depth: u32) -> Value {
            let leaf = depth == 0 || self.below(3) == 0;
            match self.below(if leaf { 6 } else { 8 }) {
                0 => Value::Null,
                1 => Value::Bool(self.below(2) == 0),
                2 => json!(self.next() as i64 >> self.below(64)),
                3 => json!(f64::from_bits(self.next()) / 1e300 * (self.below(1000) as f64)),
                4 => json!((self.below(100_000) as f64) / 64.0),
                5 => Value::String(self.text()),
                6 => (0..self.below(5)).map(|_| self.value(depth - 1)).collect(),
                _ => (0..self.below(5))
                    .map(|_| (self.text(), self.value(depth - 1)))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            }
        }
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..5_000 {
            let value = rng.value(4);
            assert_eq!(ours(&value), Some(theirs(&value)), "{value:?}");
        }
    }

    #[test]
    fn numbers_are_decimal() {
        let mut rng = Rng(7);
        let mut numbers = vec![
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            999,
            1_000,
            u64::MAX,
            u64::MAX - 1,
        ];
        numbers.extend((0..20).map(|power| 10u64.pow(power)));
        numbers.extend((0..1_000).map(|_| rng.next() >> rng.below(64)));
        for n in numbers {
            let mut written = Vec::new();
            decimal(&mut written, n);
            assert_eq!(written, n.to_string().as_bytes());
        }
    }

    #[test]
    fn every_ascii_character_is_escaped_as_serde_json_escapes_it() {
        for byte in 0u8..0x80 {
            let c = char::from(byte);
            for text in [
                c.to_string(),
                format!("12345678{c}9"),
                format!("{c}abcdefghij"),
            ] {
                assert_eq!(ours(&text), Some(theirs(&text)), "{byte:#x}");
            }
        }
    }

    #[test]
    fn rust_shapes_are_written_as_serde_json_writes_them() {
        #[derive(serde::Serialize)]
        enum Shape {
            Unit,
            Newtype(u8),
            Tuple(i32, &'static str),
            EmptyTuple(),
            Struct { a: Option<u8>, b: char },
            EmptyStruct {},
        }
        #[derive(serde::Serialize)]
        struct Unit;
        #[derive(serde::Serialize)]
        struct Pair(u16, i8);
        #[derive(serde::Serialize)]
        struct Wrapper(String);
        #[derive(serde::Serialize)]
        struct Empty {}
        #[derive(serde::Serialize)]
        struct All {
            shapes: Vec<Shape>,
            unit: Unit,
            pair: Pair,
            tuple: (u32, f32, bool),
            bytes: serde_bytes_like::Bytes,
            keys: std::collections::BTreeMap<Wrapper, Empty>,
            extremes: [i64; 2],
            max: u64,
            nan: f64,
        }
        impl PartialEq for Wrapper {
            fn eq(&self, other: &Self) -> bool {
                self.0 == other.0
            }
        }
        impl Eq for Wrapper {}
        impl PartialOrd for Wrapper {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for Wrapper {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.0.cmp(&other.0)
            }
        }
        mod serde_bytes_like {
            pub(super) struct Bytes(pub(super) Vec<u8>);
            impl serde::Serialize for Bytes {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_bytes(&self.0)
                }
            }
        }
        let all = All {
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(7),
                Shape::Tuple(-3, "t\""),
                Shape::EmptyTuple(),
                Shape::Struct { a: None, b: '\n' },
                Shape::Struct {
                    a: Some(1), b: 'é'
                },
                Shape::EmptyStruct {},
            ],
            unit: Unit,
            pair: Pair(65_535, -128),
            tuple: (0, 1.5, true),
            bytes: serde_bytes_like::Bytes(vec![0, 7, 255]),
            keys: [(Wrapper("k\u{1}".into()), Empty {})].into_iter().collect(),
            extremes: [i64::MIN, i64::MAX],
            max: u64::MAX,
            nan: f64::NAN,
        };
        assert_eq!(ours(&all), Some(theirs(&all)));
        assert_eq!(ours(&Empty {}), Some(theirs(&Empty {})));
    }

    #[test]
    fn what_serde_json_writes_otherwise_is_refused() {
        let mut out = Vec::new();
        let numbered = std::collections::BTreeMap::from([(1, "one")]);
        assert!(write(&numbered, b"", &mut out).is_err());
        assert!(write(&[1u128], b"", &mut out).is_err());
        let raw = serde_json::value::RawValue::from_string("[1]".into());
        if let Ok(raw) = raw {
            assert!(write(&raw, b"", &mut out).is_err());
        }
    }

    #[test]
    fn the_members_after_go_before_the_outermost_closing_brace() {
        let value = json!({"a": {"b": []}, "c": [{}]});
        let mut out = Vec::new();
        assert!(write(&value, b",\"at_ms\":1.5", &mut out).is_ok());
        assert_eq!(
            String::from_utf8_lossy(&out),
            "{\"v\":1,\"a\":{\"b\":[]},\"c\":[{}],\"at_ms\":1.5}"
        );
    }
}
