//! Reading a CSV file into named cells: the header mapped to the importer's field names, every cell
//! addressed by its line and column for error messages.

use csv::{ByteRecord, ReaderBuilder, Trim};
use fiscus_domain::data::ImportError;
use std::collections::BTreeMap;

/// A header name as compared: lower case, runs of anything but letters and digits as one `_`
/// (`Adj Close` → `adj_close`, `Mkt-RF` → `mkt_rf`).
pub fn normalise(header: &str) -> String {
    let mut out = String::with_capacity(header.len());
    for c in header.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// A parsed file: its header (as written) and its rows of cells. The cells are kept end to end in one
/// buffer with their end offsets (a record per row would be three allocations and several times the
/// file's size for a large import).
pub struct Table {
    pub headers: Vec<String>,
    width: usize,
    text: Vec<u8>,
    /// Where each cell ends in `text`, row after row.
    ends: Vec<u32>,
    /// Each row's line in the file.
    lines: Vec<u64>,
}

impl Table {
    /// The number of rows (blank lines are not rows).
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The row's line in the file.
    pub fn line(&self, row: usize) -> u64 {
        self.lines[row]
    }

    /// A row's cell as text (UTF-8, already trimmed); the error names line and column.
    pub fn cell(&self, row: usize, column: usize) -> Result<&str, ImportError> {
        let at = row * self.width + column;
        let start = if at == 0 { 0 } else { self.ends[at - 1] as usize };
        std::str::from_utf8(&self.text[start..self.ends[at] as usize])
            .map_err(|_| ImportError::at(self.lines[row], self.headers[column].clone(), "the cell is not UTF-8 text"))
    }
}

/// Reads the whole file. A UTF-8 byte-order mark is dropped; an empty file, a header with one column that
/// looks split by another delimiter, rows of the wrong width and cells that are not UTF-8 are refused with
/// their line.
pub fn read(bytes: &[u8], delimiter: u8, max_rows: usize) -> Result<Table, ImportError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ImportError::line(1, "the file is empty"));
    }
    if bytes.len() > u32::MAX as usize {
        return Err(ImportError::line(1, "the file is larger than 4 GiB; split it"));
    }
    let lines = memchr_count(bytes);
    if lines > max_rows + 1 {
        return Err(ImportError::line(
            1,
            format!("the file has {lines} lines; one import takes at most {max_rows} rows (split the file)"),
        ));
    }
    let mut reader =
        ReaderBuilder::new().delimiter(delimiter).has_headers(true).flexible(false).trim(Trim::All).from_reader(bytes);
    let headers: Vec<String> = match reader.byte_headers() {
        Ok(h) => h
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                std::str::from_utf8(cell)
                    .map(str::to_string)
                    .map_err(|_| ImportError::at(1, format!("#{}", i + 1), "the header is not UTF-8 text"))
            })
            .collect::<Result<_, _>>()?,
        Err(e) => return Err(ImportError::line(1, format!("the header cannot be read: {e}"))),
    };
    if headers.len() == 1 {
        for (d, name) in [(b';', "`;`"), (b'\t', "a tab"), (b'|', "`|`"), (b',', "`,`")] {
            if d != delimiter && headers[0].as_bytes().contains(&d) {
                return Err(ImportError::line(
                    1,
                    format!(
                        "the header has one column; the file seems to be separated by {name}, not by `{}`",
                        delimiter as char
                    ),
                ));
            }
        }
    }
    let mut seen = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        let n = normalise(h);
        if n.is_empty() {
            return Err(ImportError::at(1, format!("#{}", i + 1), "a column has no name"));
        }
        if let Some(first) = seen.insert(n, i) {
            return Err(ImportError::at(
                1,
                h.clone(),
                format!("the column is named twice (also column {})", first + 1),
            ));
        }
    }
    let width = headers.len();
    let mut table = Table {
        headers,
        width,
        text: Vec::with_capacity(bytes.len()),
        ends: Vec::with_capacity(lines.saturating_mul(width)),
        lines: Vec::with_capacity(lines),
    };
    let mut record = ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                if record.iter().all(|c| c.is_empty()) {
                    continue;
                }
                table.lines.push(record.position().map_or(0, |p| p.line()));
                for c in record.iter() {
                    table.text.extend_from_slice(c);
                    // The file is under 4 GiB (refused above otherwise), so offsets fit in u32.
                    table.ends.push(u32::try_from(table.text.len()).unwrap_or(u32::MAX));
                }
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                let message = match e.kind() {
                    csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
                        format!("the row has {len} cells; the header has {expected_len}")
                    }
                    _ => format!("the row cannot be read: {e}"),
                };
                return Err(ImportError::line(line, message));
            }
        }
    }
    if table.lines.is_empty() {
        return Err(ImportError::line(2, "the file has a header and no rows"));
    }
    Ok(table)
}

fn memchr_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_normalise_to_field_names() {
        assert_eq!(normalise("Adj Close"), "adj_close");
        assert_eq!(normalise(" Mkt-RF "), "mkt_rf");
        assert_eq!(normalise("DCOILWTICO"), "dcoilwtico");
    }

    #[test]
    fn bad_files_are_refused_with_their_line() {
        assert_eq!(read(b"", b',', 10).err().map(|e| e.line), Some(1));
        assert!(read(b"Date;Close\n2020-01-02;1\n", b',', 10).err().is_some_and(|e| e.message.contains("`;`")));
        assert_eq!(read(b"a,b\n1,2\n3\n", b',', 10).err().map(|e| e.line), Some(3));
        assert_eq!(read(b"\xEF\xBB\xBFa,b\n1,2\n", b',', 10).map(|t| t.headers[0].clone()).ok(), Some("a".into()));
        assert!(read(b"a,b\n1,2\n3,4\n5,6\n", b',', 2).is_err());
        assert!(read(b"a,A\n1,2\n", b',', 10).is_err());
    }
}
