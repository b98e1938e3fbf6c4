//! Word error rate: the word-level edit distance (substitutions, deletions, insertions) between a
//! reference and a hypothesis, over the reference's word count, after both are normalised the way speech
//! test sets are scored (lower case, sentence markers and punctuation dropped).

/// A transcript's words, normalised.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| *w != "<s>" && *w != "</s>")
        .map(|w| w.chars().filter(|c| c.is_alphanumeric() || *c == '\'').collect::<String>().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// `(edits, reference words)`: the minimum number of word substitutions, deletions and insertions that turn
/// the reference into the hypothesis.
pub fn edits(reference: &str, hypothesis: &str) -> (usize, usize) {
    let r = words(reference);
    let h = words(hypothesis);
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for (i, rw) in r.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, hw) in h.iter().enumerate() {
            let substitution = diagonal + usize::from(rw != hw);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    (row[h.len()], r.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_count_substitutions_deletions_and_insertions() {
        assert_eq!(
            edits("<s> he was not an ill disposed young man </s>", "he was not an illness those young man"),
            (2, 8)
        );
        assert_eq!(edits("a b c", "a b c"), (0, 3));
        assert_eq!(edits("a b c", ""), (3, 3));
        assert_eq!(edits("", "a"), (1, 0));
        assert_eq!(edits("Ten of Clubs.", "ten of clubs"), (0, 3));
    }
}
