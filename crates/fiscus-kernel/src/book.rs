//! The seam through which a settlement moves the portfolio book: the investment area implements [`Book`],
//! the composition hands it to the services, and the Financial Actions' settlement step calls it in its own
//! transaction. It lives here, under both, so that neither the actions crate nor the investment crate
//! imports the other.

use std::future::Future;
use std::pin::Pin;

use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;

use crate::governed::Failure;

/// An investment order as it settled, for the book that holds its portfolio.
pub struct SettledOrder<'a> {
    pub tenant: &'a Tenant,
    pub action_id: &'a str,
    /// The envelope's metadata (the order ticket).
    pub metadata: &'a serde_json::Value,
    pub currency: Currency,
    /// The settlement date (`YYYY-MM-DD`).
    pub date: &'a str,
    pub at: i64,
}

/// What a book answers: `Ok(Err(reason))` when it cannot take the order.
pub type Applied<'a> = Pin<Box<dyn Future<Output = Result<Result<(), String>, Failure>> + Send + 'a>>;

/// Where a settled investment order moves the portfolio book, in the settlement's own transaction. The
/// investment area implements it (this layer knows no books); the composition hands it to the services.
/// `Ok(Err(reason))` is a book that cannot take the order (a sale larger than what is held): a
/// reconciliation exception, and nothing of the book moves.
pub trait Book: Send + Sync {
    fn apply<'a>(&'a self, tx: &'a mut WriteTx, order: SettledOrder<'a>) -> Applied<'a>;
}
