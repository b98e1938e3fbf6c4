//! Queues: what waits for people, as one table component every queue page uses: a filter (free text over
//! the row's words, and its state), pages of [`PAGE_SIZE`] rows, and an empty state that says what an empty
//! queue means. The form is a GET, so a filtered page is a link one can share.

use serde::Deserialize;
use std::fmt::Write as _;

use super::html::escape;

pub const PAGE_SIZE: usize = 25;

/// A queue page's query string.
#[derive(Debug, Default, Deserialize)]
pub struct Filter {
    /// Words every shown row contains (case-insensitive).
    pub q: Option<String>,
    /// The one state shown (empty: every state).
    pub state: Option<String>,
    /// 1-based.
    pub page: Option<usize>,
}

impl Filter {
    fn words(&self) -> Vec<String> {
        self.q.as_deref().unwrap_or("").split_whitespace().take(8).map(str::to_lowercase).collect()
    }

    fn state(&self) -> Option<&str> {
        self.state.as_deref().filter(|s| !s.is_empty())
    }
}

/// One row: its cells (HTML, escaped by the caller), its state (the facet's value), and the words the filter
/// searches.
pub struct Row {
    pub cells: Vec<String>,
    pub state: String,
    pub words: String,
}

impl Row {
    /// A row searchable by `words` (ids, names, counterparties …) as well as its state.
    pub fn new(cells: Vec<String>, state: &str, words: &[&str]) -> Row {
        Row { cells, state: state.to_string(), words: words.join(" ").to_lowercase() }
    }
}

/// The table's shape.
pub struct Queue<'a> {
    /// The table's id (tests and the browser find it by that).
    pub id: &'a str,
    /// What the table lists, said to screen readers and shown above it.
    pub caption: &'a str,
    pub headers: &'a [&'a str],
    /// What the second filter chooses (e.g. "State", "Risk tier") and its choices (none: no such filter).
    pub facet: (&'a str, &'a [&'a str]),
    /// What an empty queue means.
    pub empty: &'a str,
}

impl Queue<'_> {
    /// The filter form, the page of rows the filter keeps, and links to the other pages. `path` is the page's
    /// own path (with any query it always needs, e.g. `?environment=sandbox`, left to the caller's form).
    pub fn render(&self, path: &str, filter: &Filter, rows: Vec<Row>) -> String {
        let total = rows.len();
        let words = filter.words();
        let kept: Vec<Row> = rows
            .into_iter()
            .filter(|r| filter.state().is_none_or(|s| r.state == s))
            .filter(|r| words.iter().all(|w| r.words.contains(w.as_str()) || r.state.contains(w.as_str())))
            .collect();
        let pages = kept.len().div_ceil(PAGE_SIZE).max(1);
        let page = filter.page.unwrap_or(1).clamp(1, pages);
        let mut out = self.form(path, filter);
        if total == 0 {
            let _ = write!(out, "<p class=\"empty\" id=\"{}-empty\">{}</p>", self.id, escape(self.empty));
            return out;
        }
        if kept.is_empty() {
            let _ = write!(
                out,
                "<p class=\"empty\" id=\"{}-empty\">Nothing matches this filter ({total} in all). \
                 <a href=\"{path}\">Show everything</a>.</p>",
                self.id
            );
            return out;
        }
        let _ = write!(
            out,
            "<table id=\"{id}\"><caption>{caption} <span class=\"muted\">({shown} of {total}{filtered})</span></caption><tr>",
            id = self.id,
            caption = escape(self.caption),
            shown = kept.len(),
            filtered = if kept.len() < total { ", filtered" } else { "" },
        );
        for h in self.headers {
            let _ = write!(out, "<th scope=\"col\">{}</th>", escape(h));
        }
        out.push_str("</tr>");
        for row in kept.iter().skip((page - 1) * PAGE_SIZE).take(PAGE_SIZE) {
            out.push_str("<tr>");
            for cell in &row.cells {
                let _ = write!(out, "<td>{cell}</td>");
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        if pages > 1 {
            out.push_str(&self.pager(path, filter, page, pages));
        }
        out
    }

    fn form(&self, path: &str, filter: &Filter) -> String {
        let mut states = String::new();
        let (label, choices) = self.facet;
        if !choices.is_empty() {
            let _ = write!(states, "<label>{} <select name=\"state\"><option value=\"\">Any</option>", escape(label));
            for s in choices {
                let selected = if filter.state() == Some(*s) { " selected" } else { "" };
                let _ = write!(states, "<option value=\"{s}\"{selected}>{}</option>", s.replace('_', " "));
            }
            states.push_str("</select></label>");
        }
        format!(
            "<form class=\"filter\" method=\"get\" action=\"{path}\" role=\"search\" aria-label=\"Filter {caption}\">\
             <label>Contains <input type=\"search\" name=\"q\" value=\"{q}\" maxlength=\"200\"></label>{states}\
             <button type=\"submit\">Filter</button></form>",
            caption = escape(&self.caption.to_lowercase()),
            q = escape(filter.q.as_deref().unwrap_or("")),
        )
    }

    fn pager(&self, path: &str, filter: &Filter, page: usize, pages: usize) -> String {
        let link = |p: usize| {
            let query = serde_urlencoded::to_string([
                ("q", filter.q.as_deref().unwrap_or("")),
                ("state", filter.state().unwrap_or("")),
                ("page", &p.to_string()),
            ])
            .unwrap_or_default();
            format!("{path}?{}", escape(&query))
        };
        let mut out =
            format!("<nav class=\"pages\" aria-label=\"Pages of {}\"><ul>", escape(&self.caption.to_lowercase()));
        if page > 1 {
            let _ = write!(out, "<li><a href=\"{}\" rel=\"prev\">Previous</a></li>", link(page - 1));
        }
        let _ = write!(out, "<li aria-current=\"page\">Page {page} of {pages}</li>");
        if page < pages {
            let _ = write!(out, "<li><a href=\"{}\" rel=\"next\">Next</a></li>", link(page + 1));
        }
        out.push_str("</ul></nav>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{Filter, PAGE_SIZE, Queue, Row};

    const QUEUE: Queue<'static> = Queue {
        id: "pending",
        caption: "Actions awaiting approval",
        headers: &["Action", "State"],
        facet: ("State", &["pending_approval", "approved"]),
        empty: "Nothing awaits approval.",
    };

    fn rows(n: usize) -> Vec<Row> {
        (0..n)
            .map(|i| {
                let state = if i % 2 == 0 { "pending_approval" } else { "approved" };
                Row::new(vec![format!("act_{i:03}"), state.into()], state, &[&format!("act_{i:03}"), "cp_acme"])
            })
            .collect()
    }

    #[test]
    fn a_queue_filters_by_words_and_state_and_pages_what_it_keeps() {
        let all = QUEUE.render("/console", &Filter::default(), rows(60));
        assert!(all.contains("(60 of 60)") && all.contains("Page 1 of 3"), "{all}");
        assert_eq!(all.matches("<tr>").count(), PAGE_SIZE + 1);
        let last = QUEUE.render("/console", &Filter { page: Some(9), ..Filter::default() }, rows(60));
        assert!(last.contains("Page 3 of 3") && last.contains("act_059") && !last.contains("rel=\"next\""));
        let pending = Filter { state: Some("pending_approval".into()), ..Filter::default() };
        let page = QUEUE.render("/console", &pending, rows(60));
        assert!(page.contains("(30 of 60, filtered)") && !page.contains("<td>approved</td>"), "{page}");
        assert!(page.contains("<option value=\"pending_approval\" selected>pending approval</option>"));
        let one = Filter { q: Some("ACT_007 acme".into()), ..Filter::default() };
        let page = QUEUE.render("/console", &one, rows(60));
        assert!(page.contains("(1 of 60, filtered)") && page.contains("act_007"), "{page}");
        let next = QUEUE.render("/console", &pending, rows(60));
        assert!(next.contains("href=\"/console?q=&amp;state=pending_approval&amp;page=2\""), "{next}");
    }

    #[test]
    fn an_empty_queue_says_what_it_means_and_a_filter_that_keeps_nothing_says_so() {
        let empty = QUEUE.render("/console", &Filter::default(), Vec::new());
        assert!(empty.contains("<p class=\"empty\" id=\"pending-empty\">Nothing awaits approval.</p>"), "{empty}");
        let none = QUEUE.render("/console", &Filter { q: Some("<zzz>".into()), ..Filter::default() }, rows(3));
        assert!(none.contains("Nothing matches this filter (3 in all)") && none.contains("value=\"&lt;zzz&gt;\""));
    }
}
