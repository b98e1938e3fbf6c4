//! The transparency log: a Merkle tree per workspace over every audit event and every sealed record, hashed
//! as RFC 9162 §2.1 hashes (leaf `SHA-256(0x00 ‖ entry)`, node `SHA-256(0x01 ‖ left ‖ right)`), so that an
//! outsider who kept one signed checkpoint can check, with a few lines of code and no key of Fiscus's, that
//! a record is in the log (inclusion proof) and that a later log extends the one they saw (consistency
//! proof).
//!
//! A leaf's entry is not the record itself but a short text naming it and its hash ([`Leaf::entry`]): the
//! log stays small and fixed-width per record whatever the record holds, a mirror of the log (its tiles)
//! learns which records exist but none of their content, and a verifier given the record's canonical bytes
//! recomputes the hash from them. The hash of a sealed row is `sha256:` of the RFC 8785 form of its sealed
//! columns as stored ([`row_content`]); of an audit event, its chain hash (`sha256:` of its RFC 8785 payload).
//!
//! The algorithms here read subtree hashes through [`Subtrees`], so one implementation serves the tests (all
//! leaves in memory), the store's tiles and the proof planner ([`plan`]).
//!
//! It is long because the RFC's algorithms (the root, inclusion and consistency proofs, each made and
//! checked) are one family read side by side, with their tests against the RFC's own definitions.

pub mod note;
pub mod tiles;

use crate::evidence::seal_bytes;
use crate::integrity::Stored;
use sha2::{Digest, Sha256};

/// A SHA-256 hash.
pub type Hash = [u8; 32];

/// What a tree's reader or a proof's check can refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("leaf {index} is not in a tree of {size} leaves")]
    OutOfRange { index: u64, size: u64 },
    #[error("tree size {first} is larger than {second}")]
    Shrinks { first: u64, second: u64 },
    #[error("a subtree hash the proof needs is not stored (height {height}, index {index})")]
    Missing { height: u32, index: u64 },
    #[error("the proof does not lead to the root")]
    Mismatch,
    #[error("the proof has the wrong number of hashes")]
    WrongLength,
}

/// RFC 9162 §2.1.1: the hash of a leaf's entry.
pub fn leaf_hash(entry: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(entry);
    h.finalize().into()
}

/// RFC 9162 §2.1.1: the hash of an interior node.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The root of the empty tree: SHA-256 of nothing.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// One leaf: which record (its kind, a table name or `audit_event`, and its id) and the record's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub kind: String,
    pub id: String,
    /// `sha256:<hex>` of the record's canonical bytes.
    pub record_hash: String,
}

/// The prefix of every entry, naming the format, so an entry of another kind of log can never be read as one.
pub const ENTRY_PREFIX: &str = "fiscus-evidence/v1";

/// The kind of an audit event's leaf.
pub const AUDIT_EVENT: &str = "audit_event";

impl Leaf {
    /// The entry the leaf hash covers: four lines, `fiscus-evidence/v1`, kind, id, record hash, each ended by
    /// a newline (plain text, so any language writes it with one format string). Kinds and ids never hold a
    /// newline (they are table names and ids Fiscus made).
    pub fn entry(&self) -> String {
        format!("{ENTRY_PREFIX}\n{}\n{}\n{}\n", self.kind, self.id, self.record_hash)
    }

    pub fn hash(&self) -> Hash {
        leaf_hash(self.entry().as_bytes())
    }

    /// Reads an entry back (tiles of entries, bundles); `None` unless it is exactly what [`Leaf::entry`] writes.
    pub fn parse(entry: &str) -> Option<Leaf> {
        let rest = entry.strip_prefix(ENTRY_PREFIX)?.strip_prefix('\n')?.strip_suffix('\n')?;
        let mut lines = rest.split('\n');
        let (kind, id, record_hash) = (lines.next()?, lines.next()?, lines.next()?);
        if lines.next().is_some() || kind.is_empty() || id.is_empty() || !record_hash.starts_with("sha256:") {
            return None;
        }
        Some(Leaf { kind: kind.into(), id: id.into(), record_hash: record_hash.into() })
    }

    /// The leaf of an audit event: its id is `aud_<seq>` and its hash the event's chain hash.
    pub fn audit_event(seq: i64, chain_hash: &str) -> Leaf {
        Leaf { kind: AUDIT_EVENT.into(), id: audit_event_id(seq), record_hash: chain_hash.into() }
    }
}

/// The id under which an audit event is in the log.
pub fn audit_event_id(seq: i64) -> String {
    format!("aud_{seq}")
}

/// The sequence number an audit event's log id names.
pub fn audit_event_seq(id: &str) -> Option<i64> {
    id.strip_prefix("aud_").and_then(|s| s.parse().ok()).filter(|s: &i64| *s > 0 && audit_event_id(*s) == id)
}

/// The canonical bytes of a sealed row (RFC 8785 of an object of its sealed columns as stored: integers as
/// numbers, text as strings, NULL as null) and their hash, which the row's leaf names.
pub fn row_content(columns: &[(&str, Stored)]) -> (String, String) {
    let object: serde_json::Map<String, serde_json::Value> = columns
        .iter()
        .map(|(name, value)| {
            let value = match value {
                Stored::Null => serde_json::Value::Null,
                Stored::Integer(i) => serde_json::Value::from(*i),
                Stored::Text(t) => serde_json::Value::String(t.clone()),
            };
            (name.to_string(), value)
        })
        .collect();
    // Numbers are integers (JCS cannot fail on them) and strings are any text.
    let text = crate::jcs::canonicalize(&serde_json::Value::Object(object)).unwrap_or_default();
    let hash = seal_bytes(text.as_bytes());
    (text, hash)
}

/// Reads the hash of a complete subtree: the `2^height` leaves from `index * 2^height`.
pub trait Subtrees {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Hash, TreeError>;
}

/// The largest power of two smaller than `n` (`n` ≥ 2).
fn split(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// RFC 9162's MTH of the leaves `[lo, hi)`, read as complete subtrees (at most two per level).
pub fn range_hash(r: &mut impl Subtrees, lo: u64, hi: u64) -> Result<Hash, TreeError> {
    let n = hi - lo;
    if n.is_power_of_two() && lo.is_multiple_of(n) {
        return r.subtree(n.trailing_zeros(), lo / n);
    }
    let k = split(n);
    let left = range_hash(r, lo, lo + k)?;
    let right = range_hash(r, lo + k, hi)?;
    Ok(node_hash(&left, &right))
}

/// The root of the tree of the first `size` leaves.
pub fn root(r: &mut impl Subtrees, size: u64) -> Result<Hash, TreeError> {
    if size == 0 { Ok(empty_root()) } else { range_hash(r, 0, size) }
}

/// RFC 9162 §2.1.3.1: the inclusion proof of leaf `index` in the tree of `size` leaves.
pub fn inclusion_proof(r: &mut impl Subtrees, index: u64, size: u64) -> Result<Vec<Hash>, TreeError> {
    if index >= size {
        return Err(TreeError::OutOfRange { index, size });
    }
    let mut proof = Vec::new();
    path(r, index, 0, size, &mut proof)?;
    Ok(proof)
}

fn path(r: &mut impl Subtrees, m: u64, lo: u64, hi: u64, out: &mut Vec<Hash>) -> Result<(), TreeError> {
    if hi - lo == 1 {
        return Ok(());
    }
    let k = split(hi - lo);
    if m < lo + k {
        path(r, m, lo, lo + k, out)?;
        out.push(range_hash(r, lo + k, hi)?);
    } else {
        path(r, m, lo + k, hi, out)?;
        out.push(range_hash(r, lo, lo + k)?);
    }
    Ok(())
}

/// RFC 9162 §2.1.4.1: the consistency proof from the tree of `first` leaves to the tree of `second`.
pub fn consistency_proof(r: &mut impl Subtrees, first: u64, second: u64) -> Result<Vec<Hash>, TreeError> {
    if first > second {
        return Err(TreeError::Shrinks { first, second });
    }
    let mut proof = Vec::new();
    if first == 0 || first == second {
        return Ok(proof);
    }
    subproof(r, first, 0, second, true, &mut proof)?;
    Ok(proof)
}

fn subproof(
    r: &mut impl Subtrees,
    m: u64,
    lo: u64,
    hi: u64,
    whole: bool,
    out: &mut Vec<Hash>,
) -> Result<(), TreeError> {
    let n = hi - lo;
    if m == n {
        if !whole {
            out.push(range_hash(r, lo, hi)?);
        }
        return Ok(());
    }
    let k = split(n);
    if m <= k {
        subproof(r, m, lo, lo + k, whole, out)?;
        out.push(range_hash(r, lo + k, hi)?);
    } else {
        subproof(r, m - k, lo + k, hi, false, out)?;
        out.push(range_hash(r, lo, lo + k)?);
    }
    Ok(())
}

/// RFC 9162 §2.1.3.2: checks that `leaf` is leaf `index` of the tree of `size` leaves whose root is `root`.
pub fn verify_inclusion(leaf: &Hash, index: u64, size: u64, proof: &[Hash], root: &Hash) -> Result<(), TreeError> {
    if index >= size {
        return Err(TreeError::OutOfRange { index, size });
    }
    let (mut f_n, mut s_n) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s_n == 0 {
            return Err(TreeError::WrongLength);
        }
        if f_n & 1 == 1 || f_n == s_n {
            r = node_hash(p, &r);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    if s_n != 0 {
        return Err(TreeError::WrongLength);
    }
    if &r == root { Ok(()) } else { Err(TreeError::Mismatch) }
}

/// RFC 9162 §2.1.4.2: checks that the tree of `second` leaves with root `second_root` extends the tree of
/// `first` leaves with root `first_root`.
pub fn verify_consistency(
    first: u64,
    second: u64,
    first_root: &Hash,
    second_root: &Hash,
    proof: &[Hash],
) -> Result<(), TreeError> {
    if first > second {
        return Err(TreeError::Shrinks { first, second });
    }
    if first == second {
        return if proof.is_empty() && first_root == second_root {
            Ok(())
        } else if proof.is_empty() {
            Err(TreeError::Mismatch)
        } else {
            Err(TreeError::WrongLength)
        };
    }
    if first == 0 {
        return if proof.is_empty() { Ok(()) } else { Err(TreeError::WrongLength) };
    }
    let mut path: Vec<Hash> = proof.to_vec();
    if first.is_power_of_two() {
        path.insert(0, *first_root);
    }
    let (mut f_n, mut s_n) = (first - 1, second - 1);
    while f_n & 1 == 1 {
        f_n >>= 1;
        s_n >>= 1;
    }
    let Some((head, rest)) = path.split_first() else { return Err(TreeError::WrongLength) };
    let (mut fr, mut sr) = (*head, *head);
    for c in rest {
        if s_n == 0 {
            return Err(TreeError::WrongLength);
        }
        if f_n & 1 == 1 || f_n == s_n {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    if s_n != 0 {
        return Err(TreeError::WrongLength);
    }
    if &fr == first_root && &sr == second_root { Ok(()) } else { Err(TreeError::Mismatch) }
}

/// Every leaf hash in memory: the reader of tests and of small trees.
pub struct Leaves<'a>(pub &'a [Hash]);

impl Subtrees for Leaves<'_> {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Hash, TreeError> {
        let width = 1u64 << height;
        let lo = index * width;
        let hi = lo + width;
        if hi > self.0.len() as u64 {
            return Err(TreeError::Missing { height, index });
        }
        Ok(complete_root(&self.0[lo as usize..hi as usize]))
    }
}

/// The root of a complete subtree given its leaves' (or its level's) hashes; `hashes.len()` is a power of two.
pub fn complete_root(hashes: &[Hash]) -> Hash {
    debug_assert!(hashes.len().is_power_of_two());
    if hashes.len() == 1 {
        return hashes[0];
    }
    // One buffer, halved in place level by level.
    let mut level: Vec<Hash> = hashes.chunks(2).map(|pair| node_hash(&pair[0], &pair[1])).collect();
    let mut n = level.len();
    while n > 1 {
        for i in 0..n / 2 {
            level[i] = node_hash(&level[2 * i], &level[2 * i + 1]);
        }
        n /= 2;
    }
    level[0]
}

/// The root of the tree of `size` leaves computed with `served` standing for its nodes of height `height` at
/// indices `first ..`: every subtree over those nodes is computed from them, every other one read from `r`.
/// Equal to the signed root of that size only if every served hash is the tree's own (a tile as stored is
/// checked this way before it is served). The served nodes must lie within the tree; the nodes of the
/// tree's decomposition below `height` never do, so no served hash goes unused.
pub fn root_over(
    r: &mut impl Subtrees,
    size: u64,
    height: u32,
    first: u64,
    served: &[Hash],
) -> Result<Hash, TreeError> {
    struct Over<'a, R> {
        r: &'a mut R,
        height: u32,
        first: u64,
        served: &'a [Hash],
    }
    impl<R: Subtrees> Subtrees for Over<'_, R> {
        fn subtree(&mut self, height: u32, index: u64) -> Result<Hash, TreeError> {
            if height < self.height {
                return self.r.subtree(height, index);
            }
            let shift = height - self.height;
            let (lo, hi) = (index << shift, (index + 1) << shift);
            let end = self.first + self.served.len() as u64;
            if hi <= self.first || lo >= end {
                return self.r.subtree(height, index);
            }
            if lo >= self.first && hi <= end {
                return Ok(complete_root(&self.served[(lo - self.first) as usize..(hi - self.first) as usize]));
            }
            let left = self.subtree(height - 1, 2 * index)?;
            let right = self.subtree(height - 1, 2 * index + 1)?;
            Ok(node_hash(&left, &right))
        }
    }
    root(&mut Over { r, height, first, served }, size)
}

/// A reader that records which subtrees an algorithm asks for and answers zeros: the subtrees a proof reads
/// do not depend on the hashes, so a store learns what to fetch in one query before computing.
#[derive(Default)]
pub struct Plan(pub Vec<(u32, u64)>);

impl Subtrees for Plan {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Hash, TreeError> {
        self.0.push((height, index));
        Ok([0; 32])
    }
}

/// The subtrees `compute` reads, in order.
pub fn plan<T>(compute: impl FnOnce(&mut Plan) -> Result<T, TreeError>) -> Result<Vec<(u32, u64)>, TreeError> {
    let mut p = Plan::default();
    compute(&mut p)?;
    Ok(p.0)
}

/// Lower-case hex of a hash.
pub fn hex(hash: &Hash) -> String {
    crate::evidence::hex(hash)
}

/// Standard base64 of a hash (how checkpoints and proofs carry hashes).
pub fn b64(hash: &Hash) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(hash)
}

/// A hash from standard base64.
pub fn from_b64(text: &str) -> Option<Hash> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).ok()?.try_into().ok()
}

/// A hash from lower-case hex.
pub fn from_hex(text: &str) -> Option<Hash> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: usize) -> Vec<Hash> {
        (0..n).map(|i| leaf_hash(format!("leaf {i}").as_bytes())).collect()
    }

    /// RFC 9162's MTH written as the RFC states it, to check the subtree-based one against.
    fn mth(d: &[Hash]) -> Hash {
        match d.len() {
            0 => empty_root(),
            1 => d[0],
            n => {
                let k = split(n as u64) as usize;
                node_hash(&mth(&d[..k]), &mth(&d[k..]))
            }
        }
    }

    #[test]
    fn a_root_over_served_nodes_is_the_root_only_when_every_served_node_is_the_tree_s() {
        let leaves: Vec<Hash> = (0..1000u32).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let want = root(&mut Leaves(&leaves), 1000).expect("root");
        // The nodes of height 2 at indices 100..140 (leaves 400..560), as a tile of them would hold.
        let nodes: Vec<Hash> = (100..140u64).map(|i| Leaves(&leaves).subtree(2, i).expect("node")).collect();
        assert_eq!(root_over(&mut Leaves(&leaves), 1000, 2, 100, &nodes).expect("root"), want);
        for k in [0, 17, 39] {
            let mut edited = nodes.clone();
            edited[k][0] ^= 1;
            assert_ne!(root_over(&mut Leaves(&leaves), 1000, 2, 100, &edited).expect("root"), want, "node {k}");
        }
        // Leaves themselves (height 0), the last partial run included.
        let tail = &leaves[990..1000];
        assert_eq!(root_over(&mut Leaves(&leaves), 1000, 0, 990, tail).expect("root"), want);
        let mut edited = tail.to_vec();
        edited[9][31] ^= 1;
        assert_ne!(root_over(&mut Leaves(&leaves), 1000, 0, 990, &edited).expect("root"), want);
    }

    #[test]
    fn roots_match_the_rfc_definition_for_every_size_to_300() {
        let all = leaves(300);
        for n in 0..=300 {
            assert_eq!(root(&mut Leaves(&all), n as u64).expect("test"), mth(&all[..n]), "size {n}");
        }
    }

    #[test]
    fn known_answer_of_the_empty_tree_and_one_leaf() {
        assert_eq!(hex(&empty_root()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        // RFC 6962's test vectors (certificate-transparency-go `merkle` package): the leaf of the empty entry.
        assert_eq!(hex(&leaf_hash(b"")), "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
    }

    #[test]
    fn every_inclusion_proof_verifies_and_a_wrong_one_does_not() {
        let all = leaves(70);
        for n in 1..=70u64 {
            let r = root(&mut Leaves(&all), n).expect("test");
            for m in 0..n {
                let proof = inclusion_proof(&mut Leaves(&all), m, n).expect("test");
                verify_inclusion(&all[m as usize], m, n, &proof, &r).expect("test");
                let other = (m + 1) % n;
                if other != m {
                    assert!(verify_inclusion(&all[other as usize], m, n, &proof, &r).is_err());
                }
                if !proof.is_empty() {
                    let mut bad = proof.clone();
                    bad[0][0] ^= 1;
                    assert!(verify_inclusion(&all[m as usize], m, n, &bad, &r).is_err());
                    assert!(verify_inclusion(&all[m as usize], m, n, &proof[1..], &r).is_err());
                }
            }
        }
    }

    #[test]
    fn every_consistency_proof_verifies_and_a_rewritten_past_does_not() {
        let all = leaves(40);
        for second in 1..=40u64 {
            let r2 = root(&mut Leaves(&all), second).expect("test");
            for first in 1..=second {
                let r1 = root(&mut Leaves(&all), first).expect("test");
                let proof = consistency_proof(&mut Leaves(&all), first, second).expect("test");
                verify_consistency(first, second, &r1, &r2, &proof).expect("test");
                // A log whose first leaf was rewritten after the first checkpoint.
                let mut forged = all.clone();
                forged[0] = leaf_hash(b"rewritten");
                let forged_root = root(&mut Leaves(&forged), second).expect("test");
                let forged_proof = consistency_proof(&mut Leaves(&forged), first, second).expect("test");
                assert!(verify_consistency(first, second, &r1, &forged_root, &forged_proof).is_err());
            }
        }
    }

    #[test]
    fn a_plan_names_the_subtrees_a_proof_reads() {
        let subtrees = plan(|p| inclusion_proof(p, 5, 13)).expect("test");
        // Leaf 5 of 13: its sibling 4, the pair 6..8, the four 0..4, and the right part 8..13 (8..12 and 12).
        assert_eq!(subtrees, vec![(0, 4), (1, 3), (2, 0), (2, 2), (0, 12)]);
    }

    #[test]
    fn entries_read_back_and_audit_ids_round_trip() {
        let leaf = Leaf { kind: "actions".into(), id: "act_1".into(), record_hash: "sha256:ab".into() };
        assert_eq!(leaf.entry(), "fiscus-evidence/v1\nactions\nact_1\nsha256:ab\n");
        assert_eq!(Leaf::parse(&leaf.entry()), Some(leaf));
        assert_eq!(Leaf::parse("fiscus-evidence/v1\nactions\nact_1\nsha256:ab\nmore\n"), None);
        assert_eq!(audit_event_seq(&audit_event_id(42)), Some(42));
        assert_eq!(audit_event_seq("aud_042"), None);
        assert_eq!(audit_event_seq("aud_0"), None);
    }

    #[test]
    fn a_row_s_content_is_its_canonical_json() {
        let (text, hash) = row_content(&[
            ("id", Stored::Text("act_1".into())),
            ("amount_minor", Stored::Integer(1250)),
            ("delegation_id", Stored::Null),
        ]);
        assert_eq!(text, r#"{"amount_minor":1250,"delegation_id":null,"id":"act_1"}"#);
        assert_eq!(hash, seal_bytes(text.as_bytes()));
    }
}
