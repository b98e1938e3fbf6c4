//! Forecasting: Holt-Winters exponential smoothing and ARIMA.

pub mod holt_winters;
mod holt_winters_fit;
mod least_squares;

pub use holt_winters::{HoltWintersFit, HoltWintersSpec, InitialState, Season, Smoothing, heuristic_initial_state};
pub use holt_winters_fit::{fit as fit_holt_winters, fit_with_budget as fit_holt_winters_with_budget};
pub mod arima;
mod arma_state_space;
mod lyapunov;

pub use arima::{
    ArimaFit, ArimaForecast, ArimaSpec, ArimaTrend, fit as fit_arima, fit_with_budget as fit_arima_with_budget,
};
