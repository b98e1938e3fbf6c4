//! The tree kept as C2SP `tlog-tiles`: tiles of height 8, so a tile holds up to 256 hashes. Level 0 holds the
//! leaf hashes; entry `i` of level `L` is the hash of the complete subtree of `256^L` leaves from `i·256^L`.
//! A partial tile (fewer than 256 hashes) is the prefix of the full tile it becomes, so storing each tile's
//! widest version serves every narrower one.
//!
//! Any complete subtree's hash is read from one tile ([`Tiles`]): height `h` is `2^(h mod 8)` consecutive
//! hashes of level `h div 8`, combined. An inclusion proof at a million leaves reads one or two tiles per
//! level, three levels.

use super::{Hash, Subtrees, TreeError, complete_root};
use std::collections::{BTreeMap, BTreeSet};

/// Hashes per full tile.
pub const WIDTH: u64 = 256;
/// Tree levels per tile level.
pub const HEIGHT: u32 = 8;

/// A tile's place: its level (`None` for the entries themselves) and index, and how many hashes it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRef {
    pub level: Option<u8>,
    pub index: u64,
    pub width: u64,
}

/// The tile's path under a log's prefix: `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`, the index in
/// three-digit elements, all but the last prefixed with `x` (`1234067` is `x001/x234/067`).
pub fn path(tile: TileRef) -> String {
    let level = tile.level.map_or_else(|| "entries".to_string(), |l| l.to_string());
    let mut elements = Vec::new();
    let mut n = tile.index;
    loop {
        elements.push(n % 1000);
        n /= 1000;
        if n == 0 {
            break;
        }
    }
    let index: Vec<String> = elements
        .iter()
        .rev()
        .enumerate()
        .map(|(i, e)| if i + 1 < elements.len() { format!("x{e:03}") } else { format!("{e:03}") })
        .collect();
    let partial = if tile.width < WIDTH { format!(".p/{}", tile.width) } else { String::new() };
    format!("tile/{level}/{}{partial}", index.join("/"))
}

/// Reads a tile path (what [`path`] writes, nothing else: no leading zeros beyond the three digits, a width
/// of 1 to 255 only after `.p/`).
pub fn parse(text: &str) -> Option<TileRef> {
    let rest = text.strip_prefix("tile/")?;
    let (level, rest) = rest.split_once('/')?;
    let level = if level == "entries" {
        None
    } else {
        let l: u8 = level.parse().ok()?;
        (l.to_string() == level && l < 64).then_some(Some(l))?
    };
    let (index_part, width) = match rest.split_once(".p/") {
        Some((index, width)) => {
            let w: u64 = width.parse().ok()?;
            if w == 0 || w >= WIDTH || w.to_string() != width {
                return None;
            }
            (index, w)
        }
        None => (rest, WIDTH),
    };
    let elements: Vec<&str> = index_part.split('/').collect();
    let mut index: u64 = 0;
    for (i, e) in elements.iter().enumerate() {
        let digits = if i + 1 < elements.len() { e.strip_prefix('x')? } else { e };
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        index = index.checked_mul(1000)?.checked_add(digits.parse().ok()?)?;
    }
    let tile = TileRef { level, index, width };
    (path(tile) == text).then_some(tile)
}

/// Tiles in memory, by (level, index), each its widest version: the reader proofs and roots are computed
/// from once the store fetched the tiles a [`super::plan`] named.
#[derive(Default, Debug, Clone)]
pub struct Tiles(pub BTreeMap<(u8, u64), Vec<Hash>>);

/// The tile a complete subtree is read from, and the hashes of it that are combined: `(level, tile index,
/// first offset, count)`.
pub fn locate(height: u32, index: u64) -> (u8, u64, u64, u64) {
    let level = (height / HEIGHT) as u8;
    let r = height % HEIGHT;
    let first = index << r;
    (level, first / WIDTH, first % WIDTH, 1 << r)
}

/// The tiles the subtrees of a plan are read from, and how wide each must at least be.
pub fn needed(subtrees: &[(u32, u64)]) -> BTreeMap<(u8, u64), u64> {
    let mut out: BTreeMap<(u8, u64), u64> = BTreeMap::new();
    for &(height, index) in subtrees {
        let (level, tile, offset, count) = locate(height, index);
        let w = out.entry((level, tile)).or_default();
        *w = (*w).max(offset + count);
    }
    out
}

impl Subtrees for Tiles {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Hash, TreeError> {
        let (level, tile, offset, count) = locate(height, index);
        let hashes = self.0.get(&(level, tile)).ok_or(TreeError::Missing { height, index })?;
        let (lo, hi) = (offset as usize, (offset + count) as usize);
        if hashes.len() < hi {
            return Err(TreeError::Missing { height, index });
        }
        Ok(complete_root(&hashes[lo..hi]))
    }
}

/// The rightmost tile of each level of a tree of `size` leaves that holds hashes: `(level, index, width)`.
/// These are what appending changes, so they are what an integrator reads before it appends.
pub fn edge(size: u64) -> Vec<(u8, u64, u64)> {
    let mut out = Vec::new();
    let mut level = 0u8;
    let mut count = size;
    while count > 0 {
        let width = count % WIDTH;
        if width > 0 {
            out.push((level, count / WIDTH, width));
        }
        count /= WIDTH;
        level += 1;
    }
    out
}

impl Tiles {
    /// Appends leaf hashes to a tree of `size` leaves whose [`edge`] tiles are loaded; returns the tiles that
    /// changed (each now at its new width). A tile that fills up gives its root to the level above.
    pub fn append(&mut self, size: u64, leaves: &[Hash]) -> Result<BTreeSet<(u8, u64)>, TreeError> {
        let mut changed = BTreeSet::new();
        for (i, leaf) in leaves.iter().enumerate() {
            let mut position = size + i as u64;
            let mut hash = *leaf;
            let mut level = 0u8;
            loop {
                let key = (level, position / WIDTH);
                let tile = self.0.entry(key).or_default();
                if tile.len() as u64 != position % WIDTH {
                    return Err(TreeError::Missing { height: u32::from(level) * HEIGHT, index: position });
                }
                tile.push(hash);
                changed.insert(key);
                if tile.len() as u64 != WIDTH {
                    break;
                }
                hash = complete_root(tile);
                position /= WIDTH;
                level += 1;
            }
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlog::{Leaves, consistency_proof, inclusion_proof, leaf_hash, plan, root};

    #[test]
    fn paths_follow_the_specification_s_examples() {
        let t = |level, index, width| TileRef { level, index, width };
        assert_eq!(path(t(Some(0), 1234067, 256)), "tile/0/x001/x234/067");
        assert_eq!(path(t(Some(1), 7, 3)), "tile/1/007.p/3");
        assert_eq!(path(t(None, 0, 1)), "tile/entries/000.p/1");
        for p in ["tile/0/x001/x234/067", "tile/1/007.p/3", "tile/entries/000.p/1", "tile/2/000"] {
            assert_eq!(parse(p).map(path).as_deref(), Some(p));
        }
        for bad in ["tile/0/67", "tile/0/x067", "tile/0/000.p/0", "tile/0/000.p/256", "tile/00/000", "tile/0/x000/067/"]
        {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn tiles_built_by_appending_answer_what_the_leaves_answer() {
        let leaves: Vec<Hash> = (0..70_000u32).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let mut tiles = Tiles::default();
        // Appended in uneven batches, reloading only the edge between batches, as the integrator does.
        let mut size = 0u64;
        for batch in leaves.chunks(9_973) {
            let kept: BTreeMap<(u8, u64), Vec<Hash>> =
                edge(size).into_iter().map(|(l, i, w)| ((l, i), tiles.0[&(l, i)][..w as usize].to_vec())).collect();
            let mut working = Tiles(kept);
            let changed = working.append(size, batch).expect("test");
            for key in changed {
                tiles.0.insert(key, working.0[&key].clone());
            }
            size += batch.len() as u64;
        }
        assert_eq!(tiles.0[&(1, 1)].len(), 17);
        for n in [1u64, 255, 256, 257, 65_535, 65_536, 65_537, 70_000] {
            assert_eq!(root(&mut tiles, n).expect("test"), root(&mut Leaves(&leaves), n).expect("test"), "size {n}");
        }
        for (m, n) in [(0u64, 1u64), (300, 70_000), (65_535, 65_537), (69_999, 70_000)] {
            let via_tiles = inclusion_proof(&mut tiles, m, n).expect("test");
            assert_eq!(via_tiles, inclusion_proof(&mut Leaves(&leaves), m, n).expect("test"));
            // Only the planned tiles are needed.
            let wanted = needed(&plan(|p| inclusion_proof(p, m, n)).expect("test"));
            let mut only = Tiles(wanted.keys().map(|k| (*k, tiles.0[k].clone())).collect());
            assert_eq!(inclusion_proof(&mut only, m, n).expect("test"), via_tiles);
        }
        assert_eq!(
            consistency_proof(&mut tiles, 1000, 70_000).expect("test"),
            consistency_proof(&mut Leaves(&leaves), 1000, 70_000).expect("test")
        );
    }

    #[test]
    fn the_edge_names_the_rightmost_partial_tiles() {
        assert_eq!(edge(0), vec![]);
        assert_eq!(edge(256), vec![(1, 0, 1)]);
        assert_eq!(edge(70_000), vec![(0, 273, 112), (1, 1, 17), (2, 0, 1)]);
    }
}
