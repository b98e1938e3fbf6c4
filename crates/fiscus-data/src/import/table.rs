//! Reading a CSV file into named cells: the header mapped to the importer's field names, every cell
//! addressed by its line and column for error messages.

use csv::{ByteRecord, ReaderBuilder, Trim};
use fiscus_data_core::rules::ImportError;
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
    let lines = line_count(bytes);
    within_limit(lines as u64, max_rows)?;
    let mut rows = Rows::open(bytes, delimiter, max_rows)?;
    rows.presize = (bytes.len(), lines);
    rows.chunk(usize::MAX)?.ok_or_else(|| ImportError::line(2, "the file has a header and no rows"))
}

/// Refuses a file of more lines than a header and `max_rows` rows, before it is parsed.
pub fn within_limit(lines: u64, max_rows: usize) -> Result<(), ImportError> {
    if lines > max_rows as u64 + 1 {
        return Err(ImportError::line(
            1,
            format!("the file has {lines} lines; one import takes at most {max_rows} rows (split the file)"),
        ));
    }
    Ok(())
}

/// A file read a chunk of rows at a time, for an import that streams it (never more than a chunk's cells
/// in memory); [`read`] takes the whole file as one chunk.
pub struct Rows<R: std::io::Read> {
    reader: csv::Reader<R>,
    headers: Vec<String>,
    record: ByteRecord,
    rows: usize,
    max_rows: usize,
    /// The bytes and lines a chunk is sized for (the whole file's, when it is read whole).
    presize: (usize, usize),
}

impl<R: std::io::Read> Rows<R> {
    /// Reads and checks the header (the input's byte-order mark, if any, already dropped).
    pub fn open(input: R, delimiter: u8, max_rows: usize) -> Result<Rows<R>, ImportError> {
        let mut reader = ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(true)
            .flexible(false)
            .trim(Trim::All)
            .buffer_capacity(1 << 16)
            .from_reader(input);
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
        if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
            return Err(ImportError::line(1, "the file is empty"));
        }
        check_headers(&headers, delimiter)?;
        Ok(Rows { reader, headers, record: ByteRecord::new(), rows: 0, max_rows, presize: (1 << 16, 1 << 10) })
    }

    /// The input, once read.
    pub fn into_inner(self) -> R {
        self.reader.into_inner()
    }

    /// The bytes of the file read so far.
    pub fn position(&self) -> u64 {
        self.reader.position().byte()
    }

    /// The next `n` rows at most (blank lines are not rows); `None` once the file has no more.
    pub fn chunk(&mut self, n: usize) -> Result<Option<Table>, ImportError> {
        let width = self.headers.len();
        let (bytes, lines) = self.presize;
        let lines = lines.min(n);
        let mut table = Table {
            headers: self.headers.clone(),
            width,
            text: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(lines.saturating_mul(width)),
            lines: Vec::with_capacity(lines),
        };
        while table.lines.len() < n {
            match self.reader.read_byte_record(&mut self.record) {
                Ok(false) => break,
                Ok(true) => {
                    let record = &self.record;
                    if record.iter().all(|c| c.is_empty()) {
                        continue;
                    }
                    self.rows += 1;
                    if self.rows > self.max_rows {
                        return Err(ImportError::line(
                            record.position().map_or(0, |p| p.line()),
                            format!("one import takes at most {} rows (split the file)", self.max_rows),
                        ));
                    }
                    table.lines.push(record.position().map_or(0, |p| p.line()));
                    for c in record.iter() {
                        table.text.extend_from_slice(c);
                        // A chunk is under 4 GiB (a whole file is refused above that), so offsets fit in u32.
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
        // The next chunk of a streamed file is sized as this one was.
        self.presize = (table.text.len(), table.lines.len());
        Ok((!table.lines.is_empty()).then_some(table))
    }
}

/// Refuses a header with one column that looks split by another delimiter, a column without a name, and a
/// name given twice.
fn check_headers(headers: &[String], delimiter: u8) -> Result<(), ImportError> {
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
    Ok(())
}

/// A reader without the UTF-8 byte-order mark its input may start with.
pub fn without_bom<R: std::io::Read>(mut input: R) -> std::io::Result<std::io::Chain<std::io::Cursor<Vec<u8>>, R>> {
    let mut head = Vec::with_capacity(3);
    while head.len() < 3 {
        let mut byte = [0u8; 3];
        let n = input.read(&mut byte[..3 - head.len()])?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&byte[..n]);
    }
    if head == b"\xEF\xBB\xBF" {
        head.clear();
    }
    Ok(std::io::Read::chain(std::io::Cursor::new(head), input))
}

/// The lines of a file (one more than its newlines).
pub fn line_count(bytes: &[u8]) -> usize {
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
