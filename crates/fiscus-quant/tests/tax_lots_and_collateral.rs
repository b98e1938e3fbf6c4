//! Tax-lot relief, gains and wash-sale-aware harvesting; collateral valuation and its refusals.
#![allow(clippy::unwrap_used)]

use fiscus_quant::QuantError;
use fiscus_quant::calendar::Date;
use fiscus_quant::collateral::{self, CollateralPosition, EligibilityRule, Observations};
use fiscus_quant::tax_lots::{self, Lot, MICROS_PER_UNIT as U, ReliefMethod, Sale, Term};

fn d(y: i32, m: u32, day: u32) -> Date {
    Date::from_ymd(y, m, day).unwrap()
}

fn lots() -> Vec<Lot> {
    vec![
        Lot { id: 1, acquired: d(2022, 1, 10), quantity: 10 * U, cost: 100_000 },
        Lot { id: 2, acquired: d(2023, 6, 1), quantity: 10 * U, cost: 150_000 },
        Lot { id: 3, acquired: d(2024, 3, 1), quantity: 10 * U, cost: 120_000 },
    ]
}

#[test]
fn fifo_lifo_and_hifo_relieve_the_lots_their_names_promise() {
    let sale = Sale { date: d(2024, 4, 1), quantity: 15 * U, proceeds: 195_000 };
    let fifo = tax_lots::relieve(&lots(), &sale, &ReliefMethod::Fifo).unwrap();
    assert_eq!(fifo.realised.iter().map(|p| (p.lot_id, p.quantity)).collect::<Vec<_>>(), vec![(1, 10 * U), (2, 5 * U)]);
    assert_eq!(fifo.realised[0].cost + fifo.realised[1].cost, 175_000);
    assert_eq!(fifo.realised.iter().map(|p| p.proceeds).sum::<i64>(), 195_000);
    assert_eq!(fifo.long_term_gain, 130_000 - 100_000);
    assert_eq!(fifo.short_term_gain, 65_000 - 75_000);
    let lifo = tax_lots::relieve(&lots(), &sale, &ReliefMethod::Lifo).unwrap();
    assert_eq!(lifo.realised[0].lot_id, 3);
    let hifo = tax_lots::relieve(&lots(), &sale, &ReliefMethod::Hifo).unwrap();
    assert_eq!(hifo.realised.iter().map(|p| p.lot_id).collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(
        hifo.remaining.iter().map(|l| (l.id, l.quantity, l.cost)).collect::<Vec<_>>(),
        vec![(1, 10 * U, 100_000), (3, 5 * U, 60_000)]
    );
}

#[test]
fn specific_lot_relief_must_name_open_lots_that_add_up_to_the_sale() {
    let sale = Sale { date: d(2024, 4, 1), quantity: 3 * U, proceeds: 39_000 };
    let ok = tax_lots::relieve(&lots(), &sale, &ReliefMethod::Specific(vec![(3, 2 * U), (1, U)])).unwrap();
    assert_eq!(ok.realised.len(), 2);
    assert_eq!(ok.realised[0].term, Term::Short);
    assert_eq!(ok.realised[1].term, Term::Long);
    assert!(matches!(
        tax_lots::relieve(&lots(), &sale, &ReliefMethod::Specific(vec![(3, U)])),
        Err(QuantError::Rejected(_))
    ));
    assert!(matches!(
        tax_lots::relieve(&lots(), &sale, &ReliefMethod::Specific(vec![(9, 3 * U)])),
        Err(QuantError::Rejected(_))
    ));
    let too_much = Sale { date: d(2024, 4, 1), quantity: 31 * U, proceeds: 1 };
    assert!(tax_lots::relieve(&lots(), &too_much, &ReliefMethod::Fifo).is_err());
}

#[test]
fn a_lot_is_long_term_only_after_its_first_anniversary() {
    assert_eq!(tax_lots::term(d(2023, 3, 1), d(2024, 3, 1)), Term::Short);
    assert_eq!(tax_lots::term(d(2023, 3, 1), d(2024, 3, 2)), Term::Long);
}

#[test]
fn harvest_candidates_flag_a_purchase_inside_the_wash_sale_window() {
    // Price 110.00 per share: lot 2 (cost 150.00) and lot 3 (120.00) are at a loss, lot 1 (100.00) is not.
    let c = tax_lots::harvest_candidates(&lots(), 11_000, d(2024, 3, 20), 1, &[]).unwrap();
    assert_eq!(c.iter().map(|x| x.lot_id).collect::<Vec<_>>(), vec![2, 3]);
    // Lot 3 was bought 19 days earlier, so selling lot 2 now would be a wash sale.
    assert_eq!(c[0].wash_sale_conflict, Some(d(2024, 3, 1)));
    assert_eq!(c[0].clear_from, Some(d(2024, 4, 1)));
    assert_eq!(c[1].wash_sale_conflict, None);
    let later = tax_lots::harvest_candidates(&lots(), 11_000, d(2024, 4, 1), 1, &[]).unwrap();
    assert!(later.iter().all(|x| x.wash_sale_conflict.is_none()));
    let planned = tax_lots::harvest_candidates(&lots(), 11_000, d(2024, 4, 1), 1, &[d(2024, 4, 25)]).unwrap();
    assert!(planned.iter().all(|x| x.wash_sale_conflict == Some(d(2024, 4, 25))));
}

fn positions() -> Vec<CollateralPosition> {
    vec![
        CollateralPosition {
            instrument: "UST10".into(),
            quantity: 100.0,
            currency: "USD".into(),
            asset_class: "govt_bond".into(),
        },
        CollateralPosition {
            instrument: "SAP".into(),
            quantity: 50.0,
            currency: "EUR".into(),
            asset_class: "equity".into(),
        },
        CollateralPosition {
            instrument: "ART".into(),
            quantity: 1.0,
            currency: "USD".into(),
            asset_class: "art".into(),
        },
    ]
}

fn rules() -> Vec<EligibilityRule> {
    vec![
        EligibilityRule { asset_class: "govt_bond".into(), haircut: 0.02, currencies: vec![] },
        EligibilityRule { asset_class: "equity".into(), haircut: 0.25, currencies: vec!["EUR".into(), "USD".into()] },
    ]
}

#[test]
fn collateral_is_valued_in_base_currency_with_haircuts_and_ineligible_assets_count_zero() {
    let mut obs = Observations::default();
    obs.prices.insert("UST10".into(), 98.5);
    obs.prices.insert("SAP".into(), 120.0);
    obs.prices.insert("ART".into(), 1_000_000.0);
    obs.fx_to_base.insert("EUR".into(), 1.1);
    let v = collateral::value(&positions(), &obs, &rules(), "USD", 2).unwrap();
    assert_eq!(v.positions[0].market_value, 985_000);
    assert_eq!(v.positions[0].collateral_value, 965_300);
    assert_eq!(v.positions[1].market_value, 660_000);
    assert_eq!(v.positions[1].collateral_value, 495_000);
    assert!(!v.positions[2].eligible);
    assert_eq!(v.total_collateral_value, 965_300 + 495_000);
}

#[test]
fn a_missing_price_or_fx_rate_is_an_error_never_filled_in() {
    let mut obs = Observations::default();
    obs.prices.insert("UST10".into(), 98.5);
    obs.prices.insert("SAP".into(), 120.0);
    obs.prices.insert("ART".into(), 1.0);
    let err = collateral::value(&positions(), &obs, &rules(), "USD", 2).unwrap_err();
    assert!(matches!(err, QuantError::MissingObservation { ref what } if what.contains("EUR")), "{err:?}");
    obs.fx_to_base.insert("EUR".into(), 1.1);
    obs.prices.remove("SAP");
    let err = collateral::value(&positions(), &obs, &rules(), "USD", 2).unwrap_err();
    assert!(matches!(err, QuantError::MissingObservation { ref what } if what.contains("SAP")));
}
