//! The list shape every list operation answers (`{"object":"list","data","has_more","next_after_id"}`),
//! built from a page fetched one row over its limit.

use serde::Serialize;

/// A page of a list (Stripe's shape): `after_id` of the next request is `next_after_id`.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ListPage<T> {
    /// Always `list`.
    pub object: &'static str,
    pub data: Vec<T>,
    pub has_more: bool,
    pub next_after_id: Option<String>,
}

impl<T> ListPage<T> {
    /// A page from rows fetched with `limit + 1`, which tells whether more follow; `id` reads a row's cursor.
    pub fn from_overfetch(mut rows: Vec<T>, limit: u32, id: impl Fn(&T) -> String) -> ListPage<T> {
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_after_id = if has_more { rows.last().map(&id) } else { None };
        ListPage { object: "list", data: rows, has_more, next_after_id }
    }

    /// A complete, unpaginated list.
    pub fn complete(rows: Vec<T>) -> ListPage<T> {
        ListPage { object: "list", data: rows, has_more: false, next_after_id: None }
    }

    /// The same page with each row turned into its view.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> ListPage<U> {
        ListPage {
            object: self.object,
            data: self.data.into_iter().map(f).collect(),
            has_more: self.has_more,
            next_after_id: self.next_after_id,
        }
    }

    /// As [`ListPage::map`], for a view that may fail.
    pub fn try_map<U, E>(self, f: impl FnMut(T) -> Result<U, E>) -> Result<ListPage<U>, E> {
        let data = self.data.into_iter().map(f).collect::<Result<Vec<U>, E>>()?;
        Ok(ListPage { object: self.object, data, has_more: self.has_more, next_after_id: self.next_after_id })
    }
}

/// A page of a list whose objects have integer ids (datasets, finance-core entities and journals, as the
/// seed's `after_id integer` says): `after_id` of the next request is `next_after_id`.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct NumberedPage<T> {
    /// Always `list`.
    pub object: &'static str,
    pub data: Vec<T>,
    pub has_more: bool,
    pub next_after_id: Option<i64>,
}

impl<T> NumberedPage<T> {
    /// A page from rows fetched with `limit + 1`; `id` reads a row's integer id.
    pub fn from_overfetch(mut rows: Vec<T>, limit: u32, id: impl Fn(&T) -> i64) -> NumberedPage<T> {
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_after_id = if has_more { rows.last().map(&id) } else { None };
        NumberedPage { object: "list", data: rows, has_more, next_after_id }
    }
}
