//! Reading `LOAD DATA`'s input: lines split into fields by the statement's
//! FIELDS / LINES options, as MySQL reads them (`sql_load.cc`): escapes
//! (`\N` alone is NULL, `\t \n \r \0 \b \Z`, any other escaped byte is
//! itself — an escaped terminator is data), ENCLOSED BY quotes (a doubled
//! quote is one; terminators inside are data; an unquoted `NULL` is NULL),
//! LINES STARTING BY (text before the prefix is skipped, a line without it
//! is skipped), IGNORE n LINES.
//!
//! Owns the byte-level format only and streams: it holds one buffer and
//! one row, never the file. Never converts a field to a column's type or
//! decides what a short line means (`load.rs` does).

use std::io::Read;

use crate::sql::load_spec::Format;

/// Bytes read from the source at a time.
const CHUNK: usize = 256 * 1024;

/// One line's fields: their bytes in `data`, each a range, `None` for NULL.
#[derive(Debug, Default)]
pub struct Row {
    pub data: Vec<u8>,
    pub fields: Vec<Option<(usize, usize)>>,
}

impl Row {
    /// Field `i`'s bytes (`None`: NULL).
    pub fn field(&self, i: usize) -> Option<&[u8]> {
        self.fields
            .get(i)
            .copied()
            .flatten()
            .map(|(a, b)| &self.data[a..b])
    }
}

/// A streaming reader of rows.
pub struct Reader<R: Read> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    fmt: Format,
    /// Bytes that interrupt a plain run of field data.
    special: [bool; 256],
    /// Bytes read from the source so far.
    pub bytes_read: u64,
}

/// How a field ended.
enum End {
    Field,
    Line,
}

impl<R: Read> Reader<R> {
    pub fn new(src: R, fmt: Format) -> Reader<R> {
        let mut special = [false; 256];
        for b in [
            fmt.field_term.first(),
            fmt.line_term.first(),
            fmt.escape.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            special[usize::from(*b)] = true;
        }
        Reader {
            src,
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            eof: false,
            fmt,
            special,
            bytes_read: 0,
        }
    }

    /// Make at least `need` unread bytes available unless the source
    /// ends first; whether they are.
    fn fill(&mut self, need: usize) -> std::io::Result<bool> {
        while self.buf.len() - self.pos < need && !self.eof {
            if self.pos > 0 {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let have = self.buf.len();
            self.buf.resize(have + CHUNK.max(need), 0);
            let n = loop {
                match self.src.read(&mut self.buf[have..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.buf.truncate(have);
                        return Err(e);
                    }
                }
            };
            self.buf.truncate(have + n);
            self.bytes_read += n as u64;
            if n == 0 {
                self.eof = true;
            }
        }
        Ok(self.buf.len() - self.pos >= need)
    }

    /// Whether the unread bytes start with `pat` (consumed if so).
    fn eat(&mut self, pat: &[u8]) -> std::io::Result<bool> {
        if pat.is_empty() || !self.fill(pat.len())? {
            return Ok(false);
        }
        if self.buf[self.pos..].starts_with(pat) {
            self.pos += pat.len();
            return Ok(true);
        }
        Ok(false)
    }

    fn next_byte(&mut self) -> std::io::Result<Option<u8>> {
        if !self.fill(1)? {
            return Ok(None);
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(b))
    }

    /// Skip `n` lines (IGNORE n LINES); an escaped byte is skipped with
    /// its escape.
    pub fn skip_lines(&mut self, n: u64) -> std::io::Result<()> {
        let term = self.fmt.line_term.clone();
        for _ in 0..n {
            loop {
                if self.eat(&term)? {
                    break;
                }
                match self.next_byte()? {
                    None => return Ok(()),
                    Some(b) if Some(b) == self.fmt.escape => {
                        self.next_byte()?;
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Read the next row into `row`; false at the end of the input.
    pub fn next_row(&mut self, row: &mut Row) -> std::io::Result<bool> {
        row.data.clear();
        row.fields.clear();
        if !self.fmt.line_start.is_empty() {
            let start = self.fmt.line_start.clone();
            loop {
                if self.eat(&start)? {
                    break;
                }
                if self.next_byte()?.is_none() {
                    return Ok(false);
                }
            }
        } else if !self.fill(1)? {
            return Ok(false);
        }
        loop {
            let (field, end) = self.field(&mut row.data)?;
            row.fields.push(field);
            if matches!(end, End::Line) {
                return Ok(true);
            }
        }
    }

    /// One field, appended to `data`: its range (`None`: NULL) and what
    /// ended it.
    fn field(&mut self, data: &mut Vec<u8>) -> std::io::Result<(Option<(usize, usize)>, End)> {
        let start = data.len();
        if let Some(q) = self.fmt.enclosed {
            if self.fill(1)? && self.buf[self.pos] == q {
                self.pos += 1;
                let end = self.quoted(q, data)?;
                return Ok((Some((start, data.len())), end));
            }
        }
        let mut escaped_n = false;
        let end = loop {
            // A plain run: copied at once.
            if !self.fill(1)? {
                break End::Line;
            }
            let avail = &self.buf[self.pos..];
            let run = avail
                .iter()
                .position(|b| self.special[usize::from(*b)])
                .unwrap_or(avail.len());
            if run > 0 {
                data.extend_from_slice(&avail[..run]);
                self.pos += run;
                continue;
            }
            if self.at_term(End::Field)? {
                break End::Field;
            }
            if self.at_term(End::Line)? {
                break End::Line;
            }
            let Some(b) = self.next_byte()? else {
                break End::Line;
            };
            if Some(b) == self.fmt.escape {
                match self.next_byte()? {
                    None => data.push(b),
                    Some(b'N') if data.len() == start => {
                        escaped_n = true;
                        data.push(b'N');
                    }
                    Some(n) => data.push(unescape(n)),
                }
            } else {
                data.push(b);
            }
        };
        let text = &data[start..];
        let null = (escaped_n && text == b"N")
            || (self.fmt.enclosed.is_some() && text == b"NULL" && !escaped_n);
        if null {
            data.truncate(start);
            return Ok((None, end));
        }
        Ok((Some((start, data.len())), end))
    }

    /// Consume the field (or line) terminator if the input is at it.
    fn at_term(&mut self, which: End) -> std::io::Result<bool> {
        let len = match which {
            End::Field => self.fmt.field_term.len(),
            End::Line => self.fmt.line_term.len(),
        };
        if !self.fill(len)? {
            return Ok(false);
        }
        let term = match which {
            End::Field => &self.fmt.field_term,
            End::Line => &self.fmt.line_term,
        };
        if self.buf[self.pos..].starts_with(term) {
            self.pos += len;
            return Ok(true);
        }
        Ok(false)
    }

    /// The rest of a field opened by quote `q`: up to a quote followed by
    /// a terminator (or the end); a doubled quote is one quote.
    fn quoted(&mut self, q: u8, data: &mut Vec<u8>) -> std::io::Result<End> {
        loop {
            let Some(b) = self.next_byte()? else {
                return Ok(End::Line);
            };
            if b == q {
                if self.fill(1)? && self.buf[self.pos] == q {
                    self.pos += 1;
                    data.push(q);
                    continue;
                }
                if self.at_term(End::Field)? {
                    return Ok(End::Field);
                }
                if self.at_term(End::Line)? || !self.fill(1)? {
                    return Ok(End::Line);
                }
                // A quote inside the field: data.
                data.push(b);
            } else if Some(b) == self.fmt.escape {
                match self.next_byte()? {
                    None => data.push(b),
                    Some(n) => data.push(unescape(n)),
                }
            } else {
                data.push(b);
            }
        }
    }
}

/// The byte an escape sequence `\n` stands for.
fn unescape(n: u8) -> u8 {
    match n {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(input: &[u8], fmt: Format, skip: u64) -> Vec<Vec<Option<String>>> {
        let mut r = Reader::new(input, fmt);
        r.skip_lines(skip).unwrap();
        let mut row = Row::default();
        let mut out = Vec::new();
        while r.next_row(&mut row).unwrap() {
            out.push(
                (0..row.fields.len())
                    .map(|i| {
                        row.field(i)
                            .map(|b| String::from_utf8_lossy(b).into_owned())
                    })
                    .collect(),
            );
        }
        out
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    #[test]
    fn tab_separated_with_escapes() {
        let got = rows(
            b"1\ta\n2\n\\N\t\\N\nx\\\ty\tN\\Nz\n\ta\\nb\n",
            Format::default(),
            0,
        );
        assert_eq!(
            got,
            vec![
                vec![s("1"), s("a")],
                vec![s("2")],
                vec![None, None],
                vec![s("x\ty"), s("NNz")],
                vec![s(""), s("a\nb")],
            ]
        );
        // The last line without its terminator is a row; IGNORE skips.
        let got = rows(b"h1\th2\n1\t2", Format::default(), 1);
        assert_eq!(got, vec![vec![s("1"), s("2")]]);
    }

    #[test]
    fn csv_enclosed() {
        let fmt = Format {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            ..Format::default()
        };
        let got = rows(
            b"\"1\",\"a,b\"\n\"2\",\"q\"\"uote\"\n3,NULL\n\"4\",\"NULL\"\n5,\\N\n\"6\",\"line\nbreak\"\n",
            fmt,
            0,
        );
        assert_eq!(
            got,
            vec![
                vec![s("1"), s("a,b")],
                vec![s("2"), s("q\"uote")],
                vec![s("3"), None],
                vec![s("4"), s("NULL")],
                vec![s("5"), None],
                vec![s("6"), s("line\nbreak")],
            ]
        );
    }

    #[test]
    fn line_prefix_and_crlf() {
        let fmt = Format {
            field_term: b",".to_vec(),
            line_start: b"xxx".to_vec(),
            line_term: b"\r\n".to_vec(),
            escape: None,
            ..Format::default()
        };
        let got = rows(b"xxx1,a\r\nnothing\r\njunkxxx2,b\\N\r\n", fmt, 0);
        assert_eq!(got, vec![vec![s("1"), s("a")], vec![s("2"), s("b\\N")]]);
    }

    #[test]
    fn small_reads_give_the_same_rows() {
        /// A source that returns one byte per read.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
                match self.0.split_first() {
                    Some((x, rest)) if !b.is_empty() => {
                        b[0] = *x;
                        self.0 = rest;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let fmt = Format {
            field_term: b"||".to_vec(),
            line_term: b"\r\n".to_vec(),
            ..Format::default()
        };
        let input = b"a||b|c\r\n\\N||x\r\n";
        let mut r = Reader::new(Trickle(input), fmt.clone());
        let mut row = Row::default();
        let mut n = 0;
        while r.next_row(&mut row).unwrap() {
            n += 1;
        }
        assert_eq!(n, 2);
        assert_eq!(
            rows(input, fmt, 0),
            vec![vec![s("a"), s("b|c")], vec![None, s("x")]]
        );
    }
}
