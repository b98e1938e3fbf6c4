-- wrk script: GET requests each signed afresh (RFC 9421): headers come from a file of pre-signed pairs
-- ("Signature-Input<TAB>Signature" per line, each with its own nonce), thread t sending lines t, t+T, ...
-- so no nonce is sent twice. Any status other than 200 is an error.
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  local total = tonumber(os.getenv("FISCUS_BENCH_THREADS"))
  pairs_ = {}
  local n = 0
  for line in io.lines(os.getenv("FISCUS_BENCH_SIGNATURES")) do
    if n % total == id then
      local input, signature = line:match("^(.-)\t(.*)$")
      table.insert(pairs_, { input, signature })
    end
    n = n + 1
  end
  next_ = 1
end

function request()
  local p = pairs_[next_]
  if p == nil then
    error("out of pre-signed requests: generate more")
  end
  next_ = next_ + 1
  return wrk.format("GET", nil, { ["Signature-Input"] = p[1], ["Signature"] = p[2] })
end

function response(status, headers, body)
  if status ~= 200 then
    error("unexpected status " .. status .. ": " .. body)
  end
end
