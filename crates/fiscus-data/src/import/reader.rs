//! The reader every import kind reads a table with: where each field is (by the header's name, or as the
//! mapping says), cells parsed with the line and column they came from, and the first errors collected (up
//! to a limit) so a user fixes a file in one pass.

use super::Mapping;
use super::kinds::fields;
use super::table::{Table, normalise};
use fiscus_data_core::rules::ImportError;
use fiscus_data_core::rules::values::DateFormat;
use std::collections::HashMap;

/// At most this many errors are reported for one file.
pub const MAX_ERRORS: usize = 20;

/// Where each field is in the table; collects refusals.
pub struct Reader<'t> {
    pub table: &'t Table,
    index: HashMap<&'static str, usize>,
    pub errors: Vec<ImportError>,
    date_format: Option<DateFormat>,
    /// Fields that come from the mapping's constants (`--symbol`), not from a column.
    constants: HashMap<&'static str, String>,
}

/// `; it has …` naming the header's columns that no field took, or nothing when every column was taken.
fn unrecognised(headers: &[String], index: &HashMap<&'static str, usize>) -> String {
    let left: Vec<String> = headers
        .iter()
        .enumerate()
        .filter(|(i, _)| !index.values().any(|t| t == i))
        .map(|(_, h)| format!("`{h}`"))
        .collect();
    if left.is_empty() { String::new() } else { format!("; it has {} that no field takes", left.join(", ")) }
}

impl<'t> Reader<'t> {
    /// Maps the header to fields: `mapping.columns` (field = header) first, then a header whose normalised
    /// name is the field's. A required field with neither is refused (line 1, naming it).
    pub fn new(
        table: &'t Table,
        kind: fiscus_data_core::rules::Kind,
        mapping: &Mapping,
    ) -> Result<Reader<'t>, ImportError> {
        let normalised: Vec<String> = table.headers.iter().map(|h| normalise(h)).collect();
        let mut index = HashMap::new();
        let mut constants = HashMap::new();
        for (field, required) in fields(kind) {
            let wanted = mapping.columns.get(*field).map(|h| normalise(h)).unwrap_or_else(|| (*field).to_string());
            if let Some(i) = normalised.iter().position(|h| *h == wanted) {
                index.insert(*field, i);
            } else if *field == "symbol" && mapping.symbol.is_some() {
                constants.insert("symbol", mapping.symbol.clone().unwrap_or_default());
            } else if *field == "date" && mapping.columns.get("date").is_some_and(|d| d.contains('+')) {
                // `year+quarter`: two columns make the date (checked when read).
            } else if *required
                && !(kind == fiscus_data_core::rules::Kind::Prices && mapping.wide.is_some() && *field == "symbol")
            {
                let hint = match mapping.columns.get(*field) {
                    Some(h) => format!("the mapped column `{h}` is not in the header"),
                    None => format!(
                        "the header has no `{field}` column{} (map one: `columns` {{\"{field}\": \"HEADER\"}} over \
                         HTTP, --map {field}=HEADER on the command line)",
                        unrecognised(&table.headers, &index)
                    ),
                };
                return Err(ImportError::at(1, field.to_string(), hint));
            }
        }
        // A bar needs a close or an adjusted close: when the header has neither, say so once, naming the
        // columns it did not recognise, rather than refusing every row for a close it cannot have.
        if kind == fiscus_data_core::rules::Kind::Prices
            && mapping.wide.is_none()
            && !index.contains_key("close")
            && !index.contains_key("adj_close")
        {
            let hint = format!(
                "the header has no `close` or `adj_close` column{} (map one: `columns` {{\"close\": \"HEADER\"}} \
                 over HTTP, --map close=HEADER on the command line)",
                unrecognised(&table.headers, &index)
            );
            return Err(ImportError::at(1, "close".to_string(), hint));
        }
        Ok(Reader { table, index, errors: Vec::new(), date_format: mapping.date_format.clone(), constants })
    }

    /// A reader of a streamed file's next chunk, going on from what the last chunk's reader learned.
    pub fn resume(
        table: &'t Table,
        kind: fiscus_data_core::rules::Kind,
        mapping: &Mapping,
        carry: Carry,
    ) -> Result<Reader<'t>, ImportError> {
        let mut r = Reader::new(table, kind, mapping)?;
        r.errors = carry.errors;
        r.date_format = carry.date_format.or(r.date_format);
        Ok(r)
    }

    /// What the next chunk's reader goes on from: the refusals so far and the dates' format.
    pub fn carry(self) -> Carry {
        Carry { errors: self.errors, date_format: self.date_format }
    }

    pub fn full(&self) -> bool {
        self.errors.len() >= MAX_ERRORS
    }

    pub fn column(&self, field: &str) -> Option<usize> {
        self.index.get(field).copied()
    }

    pub fn fail(&mut self, line: u64, column: &str, message: impl Into<String>) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(ImportError::at(line, column, message));
        }
    }

    fn header(&self, field: &str) -> String {
        self.column(field).map_or_else(|| field.to_string(), |i| self.table.headers[i].clone())
    }

    /// A field's text; `None` when the column is absent or the cell empty.
    pub fn text(&mut self, row: usize, field: &str) -> Option<String> {
        if let Some(c) = self.constants.get(field) {
            return Some(c.clone());
        }
        self.cell(row, field).map(str::to_string)
    }

    /// A field's cell from the file, borrowed (no copy for a cell that is parsed into a value of its own);
    /// `None` when the column is absent, the cell empty, or the text refused (then the error is recorded).
    fn cell(&mut self, row: usize, field: &str) -> Option<&'t str> {
        let i = self.column(field)?;
        let table: &'t Table = self.table;
        match table.cell(row, i) {
            Ok("") => None,
            Ok(s) => {
                // Byte length bounds the characters: only a long cell needs counting.
                if s.bytes().any(|b| b < 0x20 || b == 0x7f)
                    || (!s.is_ascii() && s.chars().any(char::is_control))
                    || (s.len() > 500 && s.chars().count() > 500)
                {
                    let line = table.line(row);
                    self.fail(line, &self.header(field), "text must be at most 500 characters, no control characters");
                    return None;
                }
                Some(s)
            }
            Err(e) => {
                if self.errors.len() < MAX_ERRORS {
                    self.errors.push(e);
                }
                None
            }
        }
    }

    fn line(&self, row: usize) -> u64 {
        self.table.line(row)
    }

    /// A required field's text, or a refusal.
    pub fn required(&mut self, row: usize, field: &str) -> Option<String> {
        let v = self.text(row, field);
        if v.is_none() && self.errors.len() < MAX_ERRORS {
            let (line, header) = (self.line(row), self.header(field));
            self.fail(line, &header, "is required");
        }
        v
    }

    /// Parses a field with `parse`; a refusal names its line and column.
    pub fn parsed<T>(&mut self, row: usize, field: &str, parse: impl Fn(&str) -> Result<T, String>) -> Option<T> {
        let owned;
        let raw: &str = match self.constants.get(field) {
            Some(c) => {
                owned = c.clone();
                &owned
            }
            None => self.cell(row, field)?,
        };
        match parse(raw) {
            Ok(v) => Some(v),
            Err(message) => {
                let (line, header) = (self.line(row), self.header(field));
                self.fail(line, &header, message);
                None
            }
        }
    }

    pub fn required_parsed<T>(
        &mut self,
        row: usize,
        field: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<T> {
        let present = self.constants.contains_key(field)
            || self.column(field).is_some_and(|i| self.table.cell(row, i).map_or(true, |c| !c.is_empty()));
        if !present {
            let (line, header) = (self.line(row), self.header(field));
            self.fail(line, &header, "is required");
            return None;
        }
        self.parsed(row, field, parse)
    }

    /// A date in the file's one format (the mapping's, else the first date cell's).
    pub fn date_cell(&mut self, row: usize, header: &str, raw: &str) -> Option<String> {
        let line = self.line(row);
        if self.date_format.is_none() {
            match DateFormat::detect(raw) {
                Some(f) => self.date_format = Some(f),
                None => {
                    let guesses = DateFormat::guesses(raw);
                    let hint = match guesses.as_slice() {
                        [] => String::from("give its format as date_format, a strftime pattern such as `%d %b %Y`"),
                        [one] => {
                            format!("it looks like `{one}`: give date_format=`{one}` (fiscus import --date-format)")
                        }
                        many => format!(
                            "it looks like one of {}: give the right one as date_format (fiscus import --date-format)",
                            many.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(" or ")
                        ),
                    };
                    self.fail(
                        line,
                        header,
                        format!("`{raw}` is not a date in a built-in format (YYYY-MM-DD, M/D/YYYY or YYYYMM); {hint}"),
                    );
                    return None;
                }
            }
        }
        let format = self.date_format.as_ref()?;
        match format.date(raw) {
            Ok(d) => Some(d),
            Err(m) => {
                self.fail(line, header, m);
                None
            }
        }
    }

    pub fn date(&mut self, row: usize, field: &str, required: bool) -> Option<String> {
        // The common case first: a cell in the file's known format (no copy of the cell, no header looked up).
        if let (Some(format), false) = (&self.date_format, self.constants.contains_key(field))
            && let Some(i) = self.column(field)
            && let Ok(cell) = self.table.cell(row, i)
            && let Ok(d) = format.date(cell)
        {
            return Some(d);
        }
        let raw = if required { self.required(row, field)? } else { self.text(row, field)? };
        let header = self.header(field);
        self.date_cell(row, &header, &raw)
    }

    pub fn date_format(&self) -> Option<DateFormat> {
        self.date_format.clone()
    }
}

/// What one chunk's reader hands the next (see [`Reader::resume`]).
#[derive(Default)]
pub struct Carry {
    pub errors: Vec<ImportError>,
    pub date_format: Option<DateFormat>,
}

/// A symbol, code or key: see `fiscus_data_core::rules::is_name`.
pub fn name(s: &str) -> Result<String, String> {
    if fiscus_data_core::rules::is_name(s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "`{}` must be 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit",
            s.chars().take(40).collect::<String>()
        ))
    }
}

pub fn one_of(allowed: &'static [&'static str]) -> impl Fn(&str) -> Result<String, String> {
    move |s: &str| {
        let lower = s.to_ascii_lowercase();
        if allowed.contains(&lower.as_str()) {
            Ok(lower)
        } else {
            Err(format!("`{}` is not one of {}", s.chars().take(40).collect::<String>(), allowed.join(", ")))
        }
    }
}

/// Reads each data row with `read` (given the reader, the row and its line number), which records what it
/// refuses in the reader's errors and answers the row's records (none, one, or one per column of a wide
/// file); stops once the error limit is reached. Every kind reads through this one loop.
pub(super) fn rows<'t, T, I: IntoIterator<Item = T>>(
    r: &mut Reader<'t>,
    mut read: impl FnMut(&mut Reader<'t>, usize, u64) -> I,
) -> Vec<(u64, T)> {
    // One record a row is the common case: sized for it, so a large file's records are never copied by growth.
    let mut out = Vec::with_capacity(r.table.len());
    for row in 0..r.table.len() {
        if r.full() {
            break;
        }
        let line = r.table.line(row);
        out.extend(read(r, row, line).into_iter().map(|record| (line, record)));
    }
    out
}
