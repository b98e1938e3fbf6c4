"""Reads a 20-year daily price series from a live server as a quant would, with pandas and pyarrow as they
are: `pd.read_csv` on the `text/csv` answer, `pyarrow.ipc.open_stream` on the Arrow IPC stream (and pandas
through `to_pandas`), each checked value for value against the JSON answer of the same page.

With a third argument, a model run's job id: its series (the forecast) by CSV and Arrow as by JSON.

Usage: read_bulk.py BASE_URL KEY [JOB_ID]
"""
import io
import sys

import pandas as pd
import pyarrow as pa
import requests

base, key = sys.argv[1], sys.argv[2]
path = f"{base}/api/v2/data/instruments/SPX/prices?dataset=3&limit=10000"
auth = {"Authorization": f"Bearer {key}"}


def get(accept):
    r = requests.get(path, headers={**auth, "Accept": accept}, timeout=60)
    r.raise_for_status()
    assert r.headers["Content-Type"].startswith(accept), r.headers["Content-Type"]
    return r


page = get("application/json").json()
bars = page["data"]
assert len(bars) == 5031, len(bars)
columns = ["open", "high", "low", "close", "adj_close", "volume"]
expected = pd.DataFrame(bars)
expected["date"] = pd.to_datetime(expected["date"])

csv = get("text/csv")
assert csv.headers["Fiscus-Content-Hash"] == page["dataset"]["content_hash"]
frame = pd.read_csv(io.StringIO(csv.text), parse_dates=["date"])
assert list(frame.columns) == ["date"] + columns, list(frame.columns)
pd.testing.assert_frame_equal(frame, expected[["date"] + columns], check_dtype=False)
print("pandas csv: ok", len(frame))

arrow = get("application/vnd.apache.arrow.stream")
table = pa.ipc.open_stream(arrow.content).read_all()
assert table.schema.field("date").type == pa.date32(), table.schema
assert table.schema.field("close").type == pa.float64(), table.schema
assert table.num_rows == 5031
assert table.column("close").to_pylist() == [b["close"] for b in bars]
print("pyarrow arrow: ok", table.num_rows)

frame = table.to_pandas()
frame["date"] = pd.to_datetime(frame["date"])
pd.testing.assert_frame_equal(frame, expected[["date"] + columns], check_dtype=False)
print("pandas arrow: ok", len(frame))

# An economic series (core CPI, monthly): the same page by CSV and Arrow as by JSON.
path = f"{base}/api/v2/data/economics/series/cpilfesl/observations?limit=10000"
page = get("application/json").json()
observations = page["data"]
expected = pd.DataFrame(observations)
expected["date"] = pd.to_datetime(expected["date"])
frame = pd.read_csv(io.StringIO(get("text/csv").text), parse_dates=["date"])
pd.testing.assert_frame_equal(frame, expected[["date", "value"]], check_dtype=False)
table = pa.ipc.open_stream(get("application/vnd.apache.arrow.stream").content).read_all()
assert table.column("value").to_pylist() == [o["value"] for o in observations]
print("economics csv and arrow: ok", len(observations))

# A model run's series: the job's forecast, by CSV and Arrow, as its JSON result has it.
if len(sys.argv) > 3:
    path = f"{base}/api/v2/quant/compute/jobs/{sys.argv[3]}"
    forecast = get("application/json").json()["result"]["output"]["forecast"]
    frame = pd.read_csv(io.StringIO(get("text/csv").text))
    assert list(frame.columns) == ["index", "forecast"], list(frame.columns)
    assert frame["index"].tolist() == list(range(len(forecast)))
    assert frame["forecast"].tolist() == forecast
    table = pa.ipc.open_stream(get("application/vnd.apache.arrow.stream").content).read_all()
    assert table.schema.field("index").type == pa.int64(), table.schema
    assert table.column("forecast").to_pylist() == forecast
    print("model run series: ok", len(forecast))
