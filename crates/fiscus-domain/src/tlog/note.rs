//! Checkpoints as C2SP `tlog-checkpoint` notes signed in the C2SP `signed-note` format (Ed25519), and the
//! witnesses' cosignatures (C2SP `tlog-cosignature`, `cosignature/v1`), so that the tools of today's
//! transparency logs and witnesses read Fiscus's checkpoints unchanged.
//!
//! A checkpoint's body is three lines, the log's origin, the tree size in decimal and the root hash in
//! standard base64, each ended by a newline; a blank line follows, then one line per signature,
//! `— <key name> <base64(key id ‖ signature)>`. A key id is the first four bytes of
//! `SHA-256(name ‖ "\n" ‖ type ‖ public key)`, type `0x01` for a note signature and `0x04` for a cosignature.

use super::{Hash, b64, from_b64};
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use sha2::{Digest, Sha256};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The signature type of an Ed25519 note signature.
const ED25519: u8 = 0x01;
/// The signature type of an Ed25519 `cosignature/v1`.
const COSIGNATURE_V1: u8 = 0x04;

/// What reading or checking a note can refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("not a signed note: {0}")]
    Malformed(&'static str),
    #[error("not a checkpoint: {0}")]
    NotCheckpoint(&'static str),
    #[error("no signature by {0} verifies")]
    Unsigned(String),
    #[error("a verifier key must read <name>+<hex key id>+<base64 key>")]
    BadKey,
}

/// A checkpoint's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
}

impl Checkpoint {
    /// The note's text (what is signed).
    pub fn body(&self) -> String {
        format!("{}\n{}\n{}\n", self.origin, self.size, b64(&self.root))
    }

    /// Reads a checkpoint's body (extension lines after the third are allowed and ignored, as the
    /// specification says).
    pub fn parse_body(body: &str) -> Result<Checkpoint, NoteError> {
        let mut lines = body.strip_suffix('\n').ok_or(NoteError::NotCheckpoint("no final newline"))?.split('\n');
        let origin = lines.next().filter(|o| !o.is_empty()).ok_or(NoteError::NotCheckpoint("no origin"))?;
        let size = lines.next().ok_or(NoteError::NotCheckpoint("no tree size"))?;
        if size.is_empty() || (size.len() > 1 && size.starts_with('0')) || !size.bytes().all(|b| b.is_ascii_digit()) {
            return Err(NoteError::NotCheckpoint("the tree size is not a decimal number"));
        }
        let size = size.parse().map_err(|_| NoteError::NotCheckpoint("the tree size is too large"))?;
        let root = lines
            .next()
            .and_then(from_b64)
            .ok_or(NoteError::NotCheckpoint("the root hash is not 32 bytes of base64"))?;
        Ok(Checkpoint { origin: origin.to_string(), size, root })
    }
}

/// A signed note split into its text and its signature lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    /// `(key name, key id, signature bytes after the key id)`.
    pub signatures: Vec<(String, [u8; 4], Vec<u8>)>,
}

impl Note {
    pub fn parse(note: &str) -> Result<Note, NoteError> {
        if note.bytes().any(|b| b < 0x20 && b != b'\n') {
            return Err(NoteError::Malformed("a control character"));
        }
        let split = note.rfind("\n\n").ok_or(NoteError::Malformed("no blank line before the signatures"))?;
        let (text, block) = (&note[..split + 1], &note[split + 2..]);
        let block = block.strip_suffix('\n').ok_or(NoteError::Malformed("no final newline"))?;
        let mut signatures = Vec::new();
        for line in block.split('\n') {
            let rest = line.strip_prefix("— ").ok_or(NoteError::Malformed("a signature line must begin with —"))?;
            let (name, sig) = rest.split_once(' ').ok_or(NoteError::Malformed("a signature line has no signature"))?;
            let bytes = B64.decode(sig).map_err(|_| NoteError::Malformed("a signature is not base64"))?;
            if name.is_empty() || name.contains('+') || bytes.len() < 5 {
                return Err(NoteError::Malformed("a signature line is too short or its name holds a +"));
            }
            let id: [u8; 4] = bytes[..4].try_into().expect("four bytes");
            signatures.push((name.to_string(), id, bytes[4..].to_vec()));
        }
        if signatures.is_empty() {
            return Err(NoteError::Malformed("no signature"));
        }
        Ok(Note { text: text.to_string(), signatures })
    }

    /// The note with its signatures, as served.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.text);
        for (name, id, sig) in &self.signatures {
            out.push_str(&format!("— {name} {}\n", B64.encode([&id[..], sig].concat())));
        }
        out
    }
}

fn key_id(name: &str, kind: u8, key: &VerifyingKey) -> [u8; 4] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([b'\n', kind]);
    h.update(key.as_bytes());
    h.finalize()[..4].try_into().expect("four bytes")
}

/// A log's or a witness's signing key and its name.
pub struct NoteSigner {
    pub name: String,
    key: SigningKey,
}

impl NoteSigner {
    pub fn new(name: &str, seed: [u8; 32]) -> NoteSigner {
        NoteSigner { name: name.to_string(), key: SigningKey::from_bytes(&seed) }
    }

    pub fn verifier(&self) -> NoteVerifier {
        NoteVerifier { name: self.name.clone(), key: self.key.verifying_key() }
    }

    /// Signs a note's text: the signed note, ready to serve.
    pub fn sign(&self, text: &str) -> String {
        let signature = self.key.sign(text.as_bytes());
        let id = key_id(&self.name, ED25519, &self.key.verifying_key());
        Note { text: text.to_string(), signatures: vec![(self.name.clone(), id, signature.to_bytes().to_vec())] }
            .render()
    }

    /// A witness's `cosignature/v1` line over a checkpoint's text, at `time` (seconds since the epoch).
    pub fn cosign(&self, checkpoint_text: &str, time: u64) -> String {
        let message = format!("cosignature/v1\ntime {time}\n{checkpoint_text}");
        let signature = self.key.sign(message.as_bytes());
        let id = key_id(&self.name, COSIGNATURE_V1, &self.key.verifying_key());
        let bytes = [&id[..], &time.to_be_bytes(), &signature.to_bytes()].concat();
        format!("— {} {}\n", self.name, B64.encode(bytes))
    }
}

/// A published verifier key: `<name>+<hex key id>+<base64(type ‖ public key)>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteVerifier {
    pub name: String,
    pub key: VerifyingKey,
}

impl NoteVerifier {
    /// The verifier key as published (the note signature's type, `0x01`).
    pub fn encode(&self) -> String {
        let id = key_id(&self.name, ED25519, &self.key);
        format!(
            "{}+{}+{}",
            self.name,
            crate::evidence::hex(&id),
            B64.encode([&[ED25519][..], self.key.as_bytes()].concat())
        )
    }

    /// The verifier key of this key's cosignatures (type `0x04`), as a witness publishes it.
    pub fn encode_cosigning(&self) -> String {
        let id = key_id(&self.name, COSIGNATURE_V1, &self.key);
        let raw = [&[COSIGNATURE_V1][..], self.key.as_bytes()].concat();
        format!("{}+{}+{}", self.name, crate::evidence::hex(&id), B64.encode(raw))
    }

    /// Reads a verifier key (of type `0x01` or, for a witness, `0x04`).
    pub fn parse(text: &str) -> Result<NoteVerifier, NoteError> {
        // The key's base64 may itself hold `+`: the name and the id are the first two fields, the rest is the key.
        let mut parts = text.trim().splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::BadKey);
        };
        let bytes = B64.decode(key).map_err(|_| NoteError::BadKey)?;
        let (&kind, raw) = bytes.split_first().ok_or(NoteError::BadKey)?;
        let raw: [u8; 32] = raw.try_into().map_err(|_| NoteError::BadKey)?;
        let key = VerifyingKey::from_bytes(&raw).map_err(|_| NoteError::BadKey)?;
        if name.is_empty()
            || crate::evidence::hex(&key_id(name, kind, &key)) != id
            || !matches!(kind, ED25519 | COSIGNATURE_V1)
        {
            return Err(NoteError::BadKey);
        }
        Ok(NoteVerifier { name: name.to_string(), key })
    }

    /// Checks that `note` is signed by this key; returns its text.
    pub fn open(&self, note: &str) -> Result<String, NoteError> {
        let parsed = Note::parse(note)?;
        let id = key_id(&self.name, ED25519, &self.key);
        let signed = parsed.signatures.iter().any(|(name, sig_id, sig)| {
            name == &self.name
                && sig_id == &id
                && Signature::from_slice(sig).is_ok_and(|s| self.key.verify(parsed.text.as_bytes(), &s).is_ok())
        });
        if signed { Ok(parsed.text) } else { Err(NoteError::Unsigned(self.name.clone())) }
    }

    /// The time of this witness's valid cosignature on `note`'s text, if it carries one.
    pub fn cosigned_at(&self, note: &str) -> Option<u64> {
        let parsed = Note::parse(note).ok()?;
        let id = key_id(&self.name, COSIGNATURE_V1, &self.key);
        parsed.signatures.iter().find_map(|(name, sig_id, sig)| {
            if name != &self.name || sig_id != &id || sig.len() != 72 {
                return None;
            }
            let time = u64::from_be_bytes(sig[..8].try_into().ok()?);
            let message = format!("cosignature/v1\ntime {time}\n{}", parsed.text);
            let signature = Signature::from_slice(&sig[8..]).ok()?;
            self.key.verify(message.as_bytes(), &signature).ok().map(|_| time)
        })
    }
}

/// Checks a checkpoint note's log signature and reads it.
pub fn open_checkpoint(verifier: &NoteVerifier, note: &str) -> Result<Checkpoint, NoteError> {
    Checkpoint::parse_body(&verifier.open(note)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_signed_reads_back_and_a_changed_one_does_not() {
        let signer = NoteSigner::new("fiscus.example", [7; 32]);
        let checkpoint = Checkpoint { origin: "fiscus.example/wsp_1".into(), size: 42, root: [9; 32] };
        let note = signer.sign(&checkpoint.body());
        assert!(note.starts_with("fiscus.example/wsp_1\n42\nCQkJ"));
        let verifier = NoteVerifier::parse(&signer.verifier().encode()).expect("test");
        assert_eq!(open_checkpoint(&verifier, &note).expect("test"), checkpoint);
        let forged = note.replacen("\n42\n", "\n43\n", 1);
        assert_eq!(open_checkpoint(&verifier, &forged), Err(NoteError::Unsigned("fiscus.example".into())));
        let other = NoteSigner::new("fiscus.example", [8; 32]).verifier();
        assert!(open_checkpoint(&other, &note).is_err());
    }

    #[test]
    fn cosignatures_verify_over_the_checkpoint_text_and_time() {
        let log = NoteSigner::new("log.example", [1; 32]);
        let witness = NoteSigner::new("witness.example", [2; 32]);
        let text = Checkpoint { origin: "log.example/wsp_1".into(), size: 3, root: [5; 32] }.body();
        let mut note = log.sign(&text);
        note.push_str(&witness.cosign(&text, 1_700_000_000));
        let parsed = Note::parse(&note).expect("test");
        assert_eq!(parsed.signatures.len(), 2);
        assert_eq!(parsed.render(), note);
        assert_eq!(witness.verifier().cosigned_at(&note), Some(1_700_000_000));
        assert_eq!(log.verifier().cosigned_at(&note), None);
        log.verifier().open(&note).expect("test");
    }

    #[test]
    fn malformed_notes_and_keys_are_refused() {
        assert!(Note::parse("origin\n1\nAAAA\n").is_err());
        assert!(Note::parse("origin\n\n— name\n").is_err());
        assert!(Checkpoint::parse_body("origin\n01\nAAAA\n").is_err());
        assert!(NoteVerifier::parse("name+00000000+AQ==").is_err());
        let good = NoteSigner::new("n", [3; 32]).verifier().encode();
        assert!(NoteVerifier::parse(&good.replacen("n+", "m+", 1)).is_err(), "the key id binds the name");
    }
}
