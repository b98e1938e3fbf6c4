//! ISO 20022 bank messages, the files corporate treasuries exchange with their banks host-to-host:
//! `pain.001.001.09` customer credit transfer initiation out ([`pain001`]); `pain.002` payment status reports
//! ([`pain002`]) and `camt.053` statements and `camt.054` notifications ([`camt`]) in.
//!
//! Pure: typed values in, the message's bytes out (and, for what banks send back, bytes in and typed
//! values out). Writing files, choosing what goes into one and recording it are the kernel connector's.
//! XML is written by `quick-xml`'s serde serializer from structs declared in the schema's element order,
//! never concatenated by hand; the suite validates what this crate writes against the official XSDs.

pub mod camt;
pub mod pain001;
pub mod pain002;
mod read;

pub use read::ReadError;

/// Why a message could not be written: what it would have broken.
#[derive(Debug, PartialEq, Eq)]
pub enum MessageError {
    /// A payment file holds at least one payment and at most [`pain001::MAX_PAYMENTS`].
    Size(usize),
    /// A payment's amount is not positive, or the file's total does not fit the schema's 18 digits.
    Amount(String),
    /// The serializer refused a value (a bug in the structs, never the caller's input).
    Xml(String),
}

impl std::fmt::Display for MessageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MessageError::Size(n) => {
                write!(f, "a payment file holds 1 to {} payments, not {n}", pain001::MAX_PAYMENTS)
            }
            MessageError::Amount(why) => write!(f, "{why}"),
            MessageError::Xml(why) => write!(f, "the message could not be written: {why}"),
        }
    }
}

impl std::error::Error for MessageError {}

/// The ISO 20022 message a document is (`pain.002.001.10`, `camt.053.001.08`, …), from its root's namespace.
pub fn message_of(xml: &str) -> Result<String, ReadError> {
    read::message_name(xml)
}
