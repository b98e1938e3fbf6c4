-- wrk script: inclusion proofs of random synthetic records (bch_0 … bch_<N-1>, N from FISCUS_BENCH_LEAVES).
local leaves = tonumber(os.getenv("FISCUS_BENCH_LEAVES"))

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("FISCUS_BENCH_KEY")
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
  return wrk.format("GET", string.format("/api/v2/evidence/records/bch_%d/proof", math.random(0, leaves - 1)))
end

function response(status, headers, body)
  if status ~= 200 then
    error("unexpected status " .. status)
  end
end
