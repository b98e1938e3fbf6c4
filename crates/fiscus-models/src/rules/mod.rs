//! The models' rules, pure and with their unit tests: the LQM Builder's families, licences, lifecycle gates,
//! retraining reviews and promotion (`lqm`). The state of a promotion, which other layers show, is
//! `fiscus_domain::lqm::PromotionState`.

pub mod lqm;
